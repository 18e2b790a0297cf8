//! The visitor resolves metadata as TSL's `XPlaneVisitor` does: names, display fallbacks,
//! absolute times in picoseconds, typed stats by name.

use bytes::Bytes;
use profkit_xplane::{
    PlaneBuilder, PlaneVisitor, StatValue, StatValueRef, XEvent, XLine, XPlane, XStat, x_event,
    x_stat,
};

/// A plane with one line of three events, metadata stats, a ref stat and an aggregated event.
fn plane() -> XPlane {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_id(2).set_name("/device:GPU:0");
    b.add_stat("clock_rate", 1_500_u64)
        .add_stat("core_count", 80_i64);
    let op = b.event_metadata_id("fusion.1");
    let child = b.event_metadata_id("add");
    if let Some(mut md) = b.event_metadata(op) {
        md.set_display_name("Fusion")
            .add_stat("hlo_module", StatValue::Ref("jit_step".into()))
            .add_stat("flops", 100_u64)
            .add_child(child)
            .add_child(999);
    }
    let mut line = b.line(1);
    line.set_name("Stream #1").set_timestamp_ns(2_000);
    line.add_event("fusion.1")
        .set_offset_ps(500)
        .set_duration_ps(1_000)
        .add_stat("flops", 7_u64)
        .add_stat("tf_op", StatValue::Ref("MatMul".into()))
        .add_stat("ratio", 0.5)
        .add_stat("name", "text")
        .add_stat("raw", vec![1_u8, 2])
        .add_stat("delta", -4_i64);
    line.add_event("add")
        .set_offset_ps(600)
        .set_duration_ps(100);
    line.add_event("add")
        .set_num_occurrences(42)
        .set_duration_ps(4_200);
    plane
}

#[test]
fn names_and_display_fallbacks() {
    let mut plane = plane();
    // A second line with display id and name set.
    plane.lines.push(XLine {
        id: 5,
        display_id: 50,
        name: "raw name".into(),
        display_name: "Shown".into(),
        ..Default::default()
    });
    let v = PlaneVisitor::new(&plane);
    assert_eq!((v.id(), v.name()), (2, "/device:GPU:0"));
    let lines: Vec<_> = v.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        (lines[0].id(), lines[0].display_id()),
        (1, 1),
        "display_id 0 falls back to id"
    );
    assert_eq!(
        (lines[0].name(), lines[0].display_name()),
        ("Stream #1", "Stream #1")
    );
    assert_eq!((lines[1].id(), lines[1].display_id()), (5, 50));
    assert_eq!(
        (lines[1].name(), lines[1].display_name()),
        ("raw name", "Shown")
    );
    assert_eq!(lines[0].timestamp_ns(), 2_000);

    let events: Vec<_> = lines[0].events().collect();
    assert_eq!(events.len(), 3);
    assert_eq!(
        (events[0].name(), events[0].display_name()),
        ("fusion.1", "Fusion")
    );
    assert_eq!((events[1].name(), events[1].display_name()), ("add", "add"));
    let md = events[0].metadata().unwrap();
    assert_eq!(
        (md.id(), md.name(), md.display_name()),
        (1, "fusion.1", "Fusion")
    );
    let children: Vec<&str> = md.children().map(|c| c.name()).collect();
    assert_eq!(children, vec!["add"], "a dangling child id is skipped");
    assert_eq!(v.event_metadata(2).unwrap().display_name(), "add");
    assert_eq!(v.event_metadata_iter().count(), 2);
}

#[test]
fn dangling_ids_resolve_to_empty_names() {
    let mut plane = plane();
    plane.lines[0].events.push(XEvent {
        metadata_id: 77,
        stats: vec![XStat {
            metadata_id: 88,
            value: Some(x_stat::Value::RefValue(99)),
        }],
        ..Default::default()
    });
    plane.lines[0].events.push(XEvent {
        stats: vec![XStat {
            metadata_id: 1,
            value: Some(x_stat::Value::RefValue(u64::MAX)), // not even an i64
        }],
        ..Default::default()
    });
    let v = PlaneVisitor::new(&plane);
    let line = v.lines().next().unwrap();
    let event = line.events().nth(3).unwrap();
    assert_eq!((event.name(), event.display_name()), ("", ""));
    assert!(event.metadata().is_none());
    assert_eq!(event.metadata_stats().count(), 0);
    let stat = event.stats().next().unwrap();
    assert_eq!((stat.name(), stat.description()), ("", ""));
    assert_eq!(stat.value(), Some(StatValueRef::Ref("")));
    let stat = line.events().nth(4).unwrap().stats().next().unwrap();
    assert_eq!(stat.value(), Some(StatValueRef::Ref("")));
    assert!(v.event_metadata(77).is_none());
    assert!(v.stat_metadata(88).is_none());
    assert_eq!(v.stat_metadata_id("nope"), None);
}

#[test]
fn absolute_times_in_picoseconds() {
    let plane = plane();
    let v = PlaneVisitor::new(&plane);
    let line = v.lines().next().unwrap();
    let events: Vec<_> = line.events().collect();
    assert_eq!(events[0].offset_ps(), 500);
    assert_eq!(events[0].timestamp_ps(), 2_000_000 + 500);
    assert_eq!(events[0].end_timestamp_ps(), 2_000_000 + 1_500);
    assert_eq!(events[0].duration_ps(), 1_000);
    // Epoch-scale and extreme values are exact in i128.
    let line = XLine {
        timestamp_ns: i64::MAX,
        events: vec![XEvent {
            data: Some(x_event::Data::OffsetPs(i64::MAX)),
            duration_ps: i64::MAX,
            ..Default::default()
        }],
        ..Default::default()
    };
    let plane = XPlane {
        lines: vec![line],
        ..Default::default()
    };
    let v = PlaneVisitor::new(&plane);
    let e = v.lines().next().unwrap().events().next().unwrap();
    let max = i128::from(i64::MAX);
    assert_eq!(e.timestamp_ps(), max * 1000 + max);
    assert_eq!(e.end_timestamp_ps(), max * 1000 + 2 * max);
    let negative = XPlane {
        lines: vec![XLine {
            timestamp_ns: i64::MIN,
            events: vec![XEvent {
                data: Some(x_event::Data::OffsetPs(i64::MIN)),
                duration_ps: i64::MIN,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let v = PlaneVisitor::new(&negative);
    let e = v.lines().next().unwrap().events().next().unwrap();
    let min = i128::from(i64::MIN);
    assert_eq!(e.end_timestamp_ps(), min * 1000 + 2 * min);
}

#[test]
fn aggregated_events_have_counts_and_no_offset() {
    let plane = plane();
    let v = PlaneVisitor::new(&plane);
    let events: Vec<_> = v.lines().next().unwrap().events().collect();
    let agg = events[2];
    assert!(agg.is_aggregated());
    assert_eq!(agg.num_occurrences(), Some(42));
    assert_eq!(agg.offset_ps(), 0);
    assert_eq!(agg.timestamp_ps(), 2_000_000);
    assert_eq!(agg.end_timestamp_ps(), 2_000_000 + 4_200);
    assert!(!events[0].is_aggregated());
    assert_eq!(events[0].num_occurrences(), None);
    // An event with no data at all sits at offset 0 and is not aggregated.
    let plane = XPlane {
        lines: vec![XLine {
            timestamp_ns: 3,
            events: vec![XEvent::default()],
            ..Default::default()
        }],
        ..Default::default()
    };
    let v = PlaneVisitor::new(&plane);
    let e = v.lines().next().unwrap().events().next().unwrap();
    assert!(!e.is_aggregated());
    assert_eq!(e.timestamp_ps(), 3_000);
}

#[test]
fn typed_stats_resolved_by_name() {
    let plane = plane();
    let v = PlaneVisitor::new(&plane);
    let event = v.lines().next().unwrap().events().next().unwrap();
    let get = |name: &str| event.stat(name).and_then(|s| s.value());
    assert_eq!(
        get("flops"),
        Some(StatValueRef::Uint64(7)),
        "the event's own stat wins"
    );
    assert_eq!(get("tf_op"), Some(StatValueRef::Ref("MatMul")));
    assert_eq!(get("ratio"), Some(StatValueRef::Double(0.5)));
    assert_eq!(get("name"), Some(StatValueRef::Str("text")));
    assert_eq!(get("raw"), Some(StatValueRef::Bytes(&[1, 2])));
    assert_eq!(get("delta"), Some(StatValueRef::Int64(-4)));
    assert_eq!(
        get("hlo_module"),
        Some(StatValueRef::Ref("jit_step")),
        "falls back to the metadata"
    );
    assert_eq!(get("missing"), None);
    // A name that exists but is not on this event.
    assert!(event.stat("clock_rate").is_none());
    let s = event.stat("tf_op").unwrap();
    assert_eq!(s.name(), "tf_op");
    assert_eq!(s.metadata_id(), v.stat_metadata_id("tf_op").unwrap());
    assert!(matches!(s.raw().value, Some(x_stat::Value::RefValue(_))));
    // Plane stats.
    assert_eq!(
        v.stat("clock_rate").unwrap().value(),
        Some(StatValueRef::Uint64(1_500))
    );
    assert_eq!(
        v.stat("core_count").unwrap().value().unwrap().as_i64(),
        Some(80)
    );
    assert!(v.stat("flops").is_none());
    let plane_stats: Vec<&str> = v.stats().map(|s| s.name()).collect();
    assert_eq!(plane_stats, vec!["clock_rate", "core_count"]);
}

#[test]
fn metadata_stats_then_event_stats() {
    let plane = plane();
    let v = PlaneVisitor::new(&plane);
    let event = v.lines().next().unwrap().events().next().unwrap();
    let md: Vec<String> = event
        .metadata_stats()
        .map(|s| format!("{}={}", s.name(), s.value().unwrap()))
        .collect();
    assert_eq!(md, vec!["hlo_module=jit_step", "flops=100"]);
    let all: Vec<&str> = event.all_stats().map(|s| s.name()).collect();
    assert_eq!(
        all,
        vec![
            "hlo_module",
            "flops",
            "flops",
            "tf_op",
            "ratio",
            "name",
            "raw",
            "delta"
        ]
    );
    let md_visitor = event.metadata().unwrap();
    assert_eq!(md_visitor.stats().len(), 2);
    assert_eq!(md_visitor.raw().child_id, vec![2, 999]);
}

#[test]
fn unset_stat_values_are_none() {
    let plane = XPlane {
        stats: vec![XStat {
            metadata_id: 0,
            value: None,
        }],
        ..Default::default()
    };
    let v = PlaneVisitor::new(&plane);
    assert_eq!(v.stats().next().unwrap().value(), None);
}

#[test]
fn stat_value_conversions_and_display() {
    use StatValueRef::*;
    assert_eq!(Int64(-1).as_i64(), Some(-1));
    assert_eq!(Int64(-1).as_u64(), None);
    assert_eq!(Uint64(u64::MAX).as_i64(), None);
    assert_eq!(Uint64(5).as_i64(), Some(5));
    assert_eq!(Int64(5).as_u64(), Some(5));
    assert_eq!(Double(1.5).as_f64(), Some(1.5));
    assert_eq!(Uint64(2).as_f64(), Some(2.0));
    assert_eq!(Int64(-2).as_f64(), Some(-2.0));
    assert_eq!(Str("s").as_f64(), None);
    assert_eq!(Str("s").as_str(), Some("s"));
    assert_eq!(Ref("r").as_str(), Some("r"));
    assert_eq!(Bytes(b"x").as_str(), None);
    assert_eq!(Double(1.0).as_i64(), None);

    assert_eq!(Int64(-7).to_string(), "-7");
    assert_eq!(Uint64(u64::MAX).to_string(), "18446744073709551615");
    assert_eq!(Double(1.5).to_string(), "1.5");
    assert_eq!(Double(0.0).to_string(), "0");
    assert_eq!(Str("a b").to_string(), "a b");
    assert_eq!(Ref("MatMul").to_string(), "MatMul");
    assert_eq!(Bytes(&[0, 1]).to_string(), "<opaque bytes>");

    assert_eq!(Ref("x").to_owned_value(), StatValue::Ref("x".into()));
    assert_eq!(Str("x").to_owned_value(), StatValue::Str("x".into()));
    assert_eq!(
        Bytes(&[3]).to_owned_value(),
        StatValue::Bytes(bytes::Bytes::from_static(&[3]))
    );
    assert_eq!(Double(2.5).to_owned_value(), StatValue::Double(2.5));
    assert_eq!(Uint64(1).to_owned_value(), StatValue::Uint64(1));
    assert_eq!(Int64(1).to_owned_value(), StatValue::Int64(1));
}

/// A plane whose two stat metadata (ids 4 and 2) share the name `dup`, with a plane stat of each.
fn duplicate_stat_names() -> XPlane {
    let mut plane = XPlane::default();
    for id in [4, 2] {
        plane.stat_metadata.insert(
            id,
            profkit_xplane::XStatMetadata {
                id,
                name: "dup".into(),
                description: format!("#{id}"),
            },
        );
    }
    plane.stats.push(XStat {
        metadata_id: 4,
        value: Some(x_stat::Value::BytesValue(Bytes::from_static(b"4"))),
    });
    plane.stats.push(XStat {
        metadata_id: 2,
        value: Some(x_stat::Value::Int64Value(2)),
    });
    plane
}

#[test]
fn first_stat_metadata_wins_when_names_repeat() {
    let plane = duplicate_stat_names();
    let v = PlaneVisitor::new(&plane);
    assert_eq!(v.stat_metadata_id("dup"), Some(2));
    let s = v.stat("dup").unwrap();
    assert_eq!(s.value(), Some(StatValueRef::Int64(2)));
    assert_eq!(s.description(), "#2");
}

// ---------------------------------------------------------------------------------------------
// The visitor over a view gives the same answers as over the owned plane.

use profkit_xplane::{PlaneViewVisitor, StatViewVisitor, StatVisitor, XPlaneView, XSpaceView};
use std::fmt::Write as _;

fn stat_line(name: &str, description: &str, id: i64, value: Option<StatValueRef<'_>>) -> String {
    format!("{name:?} {description:?} #{id} {value:?}")
}

fn owned_stat(s: StatVisitor<'_>) -> String {
    stat_line(s.name(), s.description(), s.metadata_id(), s.value())
}

fn view_stat(s: StatViewVisitor<'_, '_>) -> String {
    stat_line(s.name(), s.description(), s.metadata_id(), s.value())
}

/// Every answer the owned visitor gives about `plane`, as text.
fn owned_transcript(plane: &XPlane) -> String {
    let v = PlaneVisitor::new(plane);
    let names: Vec<&str> = plane
        .stat_metadata
        .values()
        .map(|m| m.name.as_str())
        .chain(["", "no such stat"])
        .collect();
    let mut out = String::new();
    let o = &mut out;
    writeln!(o, "plane {} {:?}", v.id(), v.name()).unwrap();
    for s in v.stats() {
        writeln!(o, "  stat {}", owned_stat(s)).unwrap();
    }
    for name in &names {
        writeln!(o, "  stat({name:?}) {:?}", v.stat(name).map(owned_stat)).unwrap();
        writeln!(
            o,
            "  stat_metadata_id({name:?}) {:?}",
            v.stat_metadata_id(name)
        )
        .unwrap();
    }
    for id in plane.stat_metadata.keys().copied().chain([0, -1, i64::MAX]) {
        let md = v
            .stat_metadata(id)
            .map(|m| (m.id, &*m.name, &*m.description));
        writeln!(o, "  stat_metadata({id}) {md:?}").unwrap();
    }
    for md in v.event_metadata_iter() {
        let children: Vec<_> = md.children().map(|c| (c.id(), c.name())).collect();
        writeln!(
            o,
            "  event_metadata {} {:?} {:?} {children:?}",
            md.id(),
            md.name(),
            md.display_name()
        )
        .unwrap();
        for s in md.stats() {
            writeln!(o, "    stat {}", owned_stat(s)).unwrap();
        }
    }
    for id in plane
        .event_metadata
        .keys()
        .copied()
        .chain([0, -1, i64::MAX])
    {
        let md = v
            .event_metadata(id)
            .map(|m| (m.id(), m.name(), m.display_name()));
        writeln!(o, "  event_metadata({id}) {md:?}").unwrap();
    }
    for line in v.lines() {
        writeln!(
            o,
            "  line {} {} {:?} {:?} {} {}",
            line.id(),
            line.display_id(),
            line.name(),
            line.display_name(),
            line.timestamp_ns(),
            line.duration_ps()
        )
        .unwrap();
        for e in line.events() {
            writeln!(
                o,
                "    event #{} {:?} {:?} {:?} {} {:?} {} {} {} {} {}",
                e.metadata_id(),
                e.name(),
                e.display_name(),
                e.metadata().map(|m| (m.id(), m.name(), m.display_name())),
                e.is_aggregated(),
                e.num_occurrences(),
                e.offset_ps(),
                e.duration_ps(),
                e.timestamp_ps(),
                e.end_timestamp_ps(),
                e.stats().len()
            )
            .unwrap();
            for s in e.stats() {
                writeln!(o, "      stat {}", owned_stat(s)).unwrap();
            }
            for s in e.metadata_stats() {
                writeln!(o, "      metadata stat {}", owned_stat(s)).unwrap();
            }
            for s in e.all_stats() {
                writeln!(o, "      all {}", owned_stat(s)).unwrap();
            }
            for name in &names {
                writeln!(o, "      stat({name:?}) {:?}", e.stat(name).map(owned_stat)).unwrap();
            }
        }
    }
    out
}

/// The same answers from the visitor over `plane`, a view.
fn view_transcript(plane: &XPlaneView<'_>) -> profkit_xplane::Result<String> {
    let v = PlaneViewVisitor::new(plane)?;
    let md = v.plane_metadata();
    let names: Vec<&str> = md
        .stats()
        .iter()
        .map(|m| m.name())
        .chain(["", "no such stat"])
        .collect();
    let mut out = String::new();
    let o = &mut out;
    writeln!(o, "plane {} {:?}", v.id(), v.name()).unwrap();
    for s in v.stats() {
        writeln!(o, "  stat {}", view_stat(s?)).unwrap();
    }
    for name in &names {
        writeln!(o, "  stat({name:?}) {:?}", v.stat(name)?.map(view_stat)).unwrap();
        writeln!(
            o,
            "  stat_metadata_id({name:?}) {:?}",
            v.stat_metadata_id(name)
        )
        .unwrap();
    }
    for id in md.stats().iter().map(|m| m.key()).chain([0, -1, i64::MAX]) {
        let md = v
            .stat_metadata(id)
            .map(|m| (m.id(), m.name(), m.description()));
        writeln!(o, "  stat_metadata({id}) {md:?}").unwrap();
    }
    for md in v.event_metadata_iter() {
        let children: Vec<_> = md.children().map(|c| (c.id(), c.name())).collect();
        writeln!(
            o,
            "  event_metadata {} {:?} {:?} {children:?}",
            md.id(),
            md.name(),
            md.display_name()
        )
        .unwrap();
        for s in md.stats() {
            writeln!(o, "    stat {}", view_stat(s)).unwrap();
        }
    }
    for id in md.events().iter().map(|m| m.key()).chain([0, -1, i64::MAX]) {
        let md = v
            .event_metadata(id)
            .map(|m| (m.id(), m.name(), m.display_name()));
        writeln!(o, "  event_metadata({id}) {md:?}").unwrap();
    }
    for line in v.lines() {
        let line = line?;
        writeln!(
            o,
            "  line {} {} {:?} {:?} {} {}",
            line.id(),
            line.display_id(),
            line.name(),
            line.display_name(),
            line.timestamp_ns(),
            line.duration_ps()
        )
        .unwrap();
        for e in line.events() {
            let e = e?;
            writeln!(
                o,
                "    event #{} {:?} {:?} {:?} {} {:?} {} {} {} {} {}",
                e.metadata_id(),
                e.name(),
                e.display_name(),
                e.metadata().map(|m| (m.id(), m.name(), m.display_name())),
                e.is_aggregated(),
                e.num_occurrences(),
                e.offset_ps(),
                e.duration_ps(),
                e.timestamp_ps(),
                e.end_timestamp_ps(),
                e.raw().stat_count()
            )
            .unwrap();
            for s in e.stats() {
                writeln!(o, "      stat {}", view_stat(s?)).unwrap();
            }
            for s in e.metadata_stats() {
                writeln!(o, "      metadata stat {}", view_stat(s)).unwrap();
            }
            for s in e.all_stats() {
                writeln!(o, "      all {}", view_stat(s?)).unwrap();
            }
            for name in &names {
                writeln!(o, "      stat({name:?}) {:?}", e.stat(name)?.map(view_stat)).unwrap();
            }
        }
    }
    Ok(out)
}

/// Encodes `plane`, and checks the view visitor answers as the owned one does.
fn same_over_view(plane: &XPlane) {
    let bytes = prost::Message::encode_to_vec(plane);
    let view = XPlaneView::new(&bytes).unwrap();
    assert_eq!(view_transcript(&view).unwrap(), owned_transcript(plane));
}

#[test]
fn view_visitor_answers_as_the_owned_one_on_these_cases() {
    let mut named = plane();
    named.lines.push(XLine {
        id: 5,
        display_id: 50,
        name: "raw name".into(),
        display_name: "Shown".into(),
        ..Default::default()
    });
    same_over_view(&named);

    let mut dangling = plane();
    dangling.lines[0].events.push(XEvent {
        metadata_id: 77,
        stats: vec![XStat {
            metadata_id: 88,
            value: Some(x_stat::Value::RefValue(99)),
        }],
        ..Default::default()
    });
    dangling.lines[0].events.push(XEvent {
        stats: vec![XStat {
            metadata_id: 1,
            value: Some(x_stat::Value::RefValue(u64::MAX)),
        }],
        ..Default::default()
    });
    same_over_view(&dangling);

    for (ts, offset) in [(i64::MAX, i64::MAX), (i64::MIN, i64::MIN), (3, 0)] {
        same_over_view(&XPlane {
            lines: vec![XLine {
                timestamp_ns: ts,
                events: vec![
                    XEvent {
                        data: Some(x_event::Data::OffsetPs(offset)),
                        duration_ps: offset,
                        ..Default::default()
                    },
                    XEvent::default(),
                ],
                ..Default::default()
            }],
            ..Default::default()
        });
    }

    same_over_view(&XPlane {
        stats: vec![XStat {
            metadata_id: 0,
            value: None,
        }],
        ..Default::default()
    });

    let dup = duplicate_stat_names();
    same_over_view(&dup);
}

#[test]
fn view_visitor_spot_checks() {
    let plane = plane();
    let bytes = prost::Message::encode_to_vec(&plane);
    let view = XPlaneView::new(&bytes).unwrap();
    let v = view.visitor().unwrap();
    let line = v.lines().next().unwrap().unwrap();
    assert_eq!(line.event_count(), 3);
    let event = line.events().next().unwrap().unwrap();
    assert_eq!((event.name(), event.display_name()), ("fusion.1", "Fusion"));
    assert_eq!(
        event.stat("flops").unwrap().and_then(|s| s.value()),
        Some(StatValueRef::Uint64(7)),
        "the event's own stat wins"
    );
    assert_eq!(
        event.stat("hlo_module").unwrap().and_then(|s| s.value()),
        Some(StatValueRef::Ref("jit_step")),
        "falls back to the metadata"
    );
    assert_eq!(event.end_timestamp_ps(), 2_000_000 + 1_500);
    assert_eq!(
        v.stat("clock_rate").unwrap().and_then(|s| s.value()),
        Some(StatValueRef::Uint64(1_500))
    );
    let children: Vec<&str> = event
        .metadata()
        .unwrap()
        .children()
        .map(|c| c.name())
        .collect();
    assert_eq!(children, vec!["add"]);
}

#[test]
fn view_visitor_reports_located_errors() {
    let mut plane = plane();
    plane.lines[0].events[1].stats.push(XStat {
        metadata_id: 1,
        value: Some(x_stat::Value::BytesValue(Bytes::from_static(b"\xff"))),
    });
    let mut bytes = prost::Message::encode_to_vec(&plane);
    // Make those bytes a `str_value` (field 5 instead of 6): invalid UTF-8 deep in an event,
    // which the plane's view does not reach until the event's stats are walked.
    let at = bytes
        .windows(3)
        .position(|w| w == [0x32, 0x01, 0xff])
        .unwrap();
    bytes[at] = 0x2a;
    let view = XPlaneView::new(&bytes).unwrap();
    let expected = profkit_xplane::decode_plane(bytes.clone())
        .unwrap_err()
        .to_string();
    let got = view_transcript(&view).unwrap_err().to_string();
    assert_eq!(got, expected);
    assert!(got.contains("events[1].stats[0].str_value"), "{got}");
}

/// Every XSpace input of the conformance suite: the visitor over each plane's view answers as the
/// visitor over the decoded plane, and a damaged input fails with decode's error.
#[test]
fn view_visitor_answers_as_the_owned_one_on_every_conformance_input() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/xplane");
    let mut cases = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for dir in entries {
        let input = dir.join("input.xplane.pb");
        if !input.is_file() {
            continue;
        }
        cases += 1;
        let bytes = std::fs::read(&input).unwrap();
        let name = dir.display();
        let view = XSpaceView::new(&bytes).unwrap();
        let transcripts: profkit_xplane::Result<Vec<String>> = view
            .planes()
            .map(|p| p.and_then(|p| view_transcript(&p)))
            .collect();
        match profkit_xplane::decode(bytes.clone()) {
            Ok(space) => {
                let owned: Vec<String> = space.planes.iter().map(owned_transcript).collect();
                assert_eq!(transcripts.unwrap(), owned, "{name}");
            }
            Err(e) => assert_eq!(
                transcripts.err().map(|e| e.to_string()),
                Some(e.to_string()),
                "{name}: the views must fail as decode does"
            ),
        }
    }
    assert!(cases >= 40, "only {cases} conformance inputs found");
}

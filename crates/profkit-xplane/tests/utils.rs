//! Space and plane utilities with TSL's semantics: finding, merging, sorting, normalizing.

use profkit_xplane::utils::{
    denormalize_space_timestamps, denormalize_timestamps, find_line_with_id, find_line_with_name,
    find_mut_plane_with_name, find_mut_planes_with_prefix, find_or_add_plane_with_name,
    find_plane_with_name, find_planes_with_prefix, has_aggregated_events, merge_all_planes,
    merge_planes, normalize_space_timestamps, normalize_timestamps, plane_time_span_ps,
    remove_empty_lines, remove_empty_planes, sort_line_events, sort_lines_by_id, sort_plane,
    sort_space,
};
use profkit_xplane::{
    PlaneBuilder, PlaneVisitor, StatValue, StatValueRef, XEvent, XEventMetadata, XLine, XPlane,
    XSpace, XStat, validate, x_event, x_stat,
};

fn named(name: &str) -> XPlane {
    XPlane {
        name: name.into(),
        ..Default::default()
    }
}

fn space() -> XSpace {
    XSpace {
        planes: vec![
            named("/host:CPU"),
            named("/device:GPU:0"),
            named("/device:GPU:1"),
            named("/device:TPU:0"),
        ],
        ..Default::default()
    }
}

#[test]
fn find_planes_by_name_and_prefix() {
    let mut space = space();
    assert_eq!(
        find_plane_with_name(&space, "/device:GPU:1").unwrap().name,
        "/device:GPU:1"
    );
    assert!(
        find_plane_with_name(&space, "/device:GPU").is_none(),
        "exact names only"
    );
    let gpus: Vec<&str> = find_planes_with_prefix(&space, "/device:GPU:")
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(gpus, vec!["/device:GPU:0", "/device:GPU:1"]);
    assert!(find_planes_with_prefix(&space, "/device:CUSTOM:").is_empty());
    for p in find_mut_planes_with_prefix(&mut space, "/device:") {
        p.id = 9;
    }
    assert_eq!(
        space.planes.iter().map(|p| p.id).collect::<Vec<_>>(),
        vec![0, 9, 9, 9]
    );
    find_mut_plane_with_name(&mut space, "/host:CPU")
        .unwrap()
        .id = 1;
    assert_eq!(space.planes[0].id, 1);
    assert!(find_mut_plane_with_name(&mut space, "nope").is_none());

    // Found, not added.
    find_or_add_plane_with_name(&mut space, "/device:TPU:0").id = 5;
    assert_eq!(space.planes.len(), 4);
    assert_eq!(space.planes[3].id, 5);
    // Added, with its index as id.
    let added = find_or_add_plane_with_name(&mut space, "Task Environment");
    assert_eq!((added.id, added.name.as_str()), (4, "Task Environment"));
    assert_eq!(space.planes.len(), 5);
}

#[test]
fn find_lines_by_id_and_name() {
    let plane = XPlane {
        lines: vec![
            XLine {
                id: 1,
                name: "a".into(),
                timestamp_ns: 10,
                ..Default::default()
            },
            XLine {
                id: 2,
                name: "b".into(),
                ..Default::default()
            },
            XLine {
                id: 1,
                name: "b".into(),
                timestamp_ns: 20,
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    assert_eq!(
        find_line_with_id(&plane, 1).unwrap().timestamp_ns,
        10,
        "the first one"
    );
    assert_eq!(find_line_with_name(&plane, "b").unwrap().id, 2);
    assert!(find_line_with_id(&plane, 3).is_none());
    assert!(find_line_with_name(&plane, "c").is_none());
}

#[test]
fn remove_empty_planes_and_lines() {
    let mut space = space();
    space.planes[1].lines.push(XLine::default());
    space.planes[1].lines.push(XLine {
        id: 4,
        events: vec![XEvent::default()],
        ..Default::default()
    });
    space.planes[1].lines.push(XLine::default());
    remove_empty_planes(&mut space);
    assert_eq!(space.planes.len(), 1);
    assert_eq!(space.planes[0].name, "/device:GPU:0");
    remove_empty_lines(&mut space.planes[0]);
    assert_eq!(space.planes[0].lines.len(), 1);
    assert_eq!(space.planes[0].lines[0].id, 4);
    // A plane whose lines are all empty loses them, and is then empty itself.
    space.planes[0].lines[0].events.clear();
    remove_empty_lines(&mut space.planes[0]);
    remove_empty_planes(&mut space);
    assert!(space.planes.is_empty());
}

fn event(offset: Option<i64>, duration: i64, id: i64) -> XEvent {
    XEvent {
        metadata_id: id,
        data: offset.map(x_event::Data::OffsetPs),
        duration_ps: duration,
        stats: vec![],
    }
}

#[test]
fn sort_events_by_start_then_longest_first() {
    let mut line = XLine {
        events: vec![
            event(Some(30), 5, 1),
            event(Some(10), 5, 2),
            event(Some(10), 50, 3), // a parent starting with its child comes first
            event(Some(-5), 1, 4),
            event(None, 7, 5),     // no data: offset 0
            event(Some(10), 5, 6), // ties keep their order
            XEvent {
                metadata_id: 7,
                data: Some(x_event::Data::NumOccurrences(3)),
                duration_ps: 100,
                stats: vec![],
            }, // aggregated: sorted as at 0
        ],
        ..Default::default()
    };
    sort_line_events(&mut line);
    let order: Vec<i64> = line.events.iter().map(|e| e.metadata_id).collect();
    assert_eq!(order, vec![4, 7, 5, 3, 2, 6, 1]);

    let mut space = XSpace {
        planes: vec![XPlane {
            lines: vec![
                XLine {
                    id: 2,
                    events: vec![event(Some(2), 1, 1), event(Some(1), 1, 2)],
                    ..Default::default()
                },
                XLine {
                    id: 1,
                    events: vec![event(Some(9), 1, 1), event(Some(3), 1, 2)],
                    ..Default::default()
                },
            ],
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut plane = space.planes[0].clone();
    sort_plane(&mut plane);
    sort_space(&mut space);
    assert_eq!(space.planes[0], plane);
    for line in &plane.lines {
        assert!(
            line.events
                .windows(2)
                .all(|w| w[0].offset_ps() <= w[1].offset_ps())
        );
    }
    sort_lines_by_id(&mut plane);
    assert_eq!(
        plane.lines.iter().map(|l| l.id).collect::<Vec<_>>(),
        vec![1, 2]
    );
}

fn line_at(id: i64, timestamp_ns: i64) -> XLine {
    XLine {
        id,
        timestamp_ns,
        ..Default::default()
    }
}

#[test]
fn normalize_and_denormalize_timestamps() {
    let counters = profkit_xplane::constants::COUNTERS_LINE_ID;
    let mut plane = XPlane {
        lines: vec![
            line_at(1, 1_000_500),
            line_at(2, 1_000_000),
            line_at(3, 999_999),
            line_at(counters, 0),
        ],
        ..Default::default()
    };
    normalize_timestamps(&mut plane, 1_000_000);
    let ts: Vec<i64> = plane.lines.iter().map(|l| l.timestamp_ns).collect();
    assert_eq!(
        ts,
        vec![500, 0, 999_999, 0],
        "lines before the start are left alone"
    );
    // Only the first call normalizes: the second finds every line before the start.
    normalize_timestamps(&mut plane, 1_000_000);
    assert_eq!(
        plane
            .lines
            .iter()
            .map(|l| l.timestamp_ns)
            .collect::<Vec<_>>(),
        ts
    );

    denormalize_timestamps(&mut plane, 1_000_000);
    let ts: Vec<i64> = plane.lines.iter().map(|l| l.timestamp_ns).collect();
    assert_eq!(
        ts,
        vec![1_000_500, 1_000_000, 1_999_999, 0],
        "the counter line stays at 0"
    );

    // Extremes saturate instead of overflowing.
    let mut plane = XPlane {
        lines: vec![line_at(1, i64::MAX), line_at(2, i64::MIN)],
        ..Default::default()
    };
    normalize_timestamps(&mut plane, -10);
    assert_eq!(plane.lines[0].timestamp_ns, i64::MAX);
    denormalize_timestamps(&mut plane, i64::MAX);
    assert_eq!(plane.lines[0].timestamp_ns, i64::MAX);
    denormalize_timestamps(&mut plane, i64::MIN);
    assert_eq!(plane.lines[1].timestamp_ns, i64::MIN);

    let mut space = XSpace {
        planes: vec![
            XPlane {
                lines: vec![line_at(1, 50)],
                ..Default::default()
            },
            XPlane {
                lines: vec![line_at(1, 70)],
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    normalize_space_timestamps(&mut space, 40);
    assert_eq!(
        (
            space.planes[0].lines[0].timestamp_ns,
            space.planes[1].lines[0].timestamp_ns
        ),
        (10, 30)
    );
    denormalize_space_timestamps(&mut space, 40);
    assert_eq!(
        (
            space.planes[0].lines[0].timestamp_ns,
            space.planes[1].lines[0].timestamp_ns
        ),
        (50, 70)
    );
}

#[test]
fn time_span_and_aggregation() {
    let mut plane = XPlane::default();
    assert_eq!(plane_time_span_ps(&plane), None);
    let mut b = PlaneBuilder::new(&mut plane);
    let mut l1 = b.line(1);
    l1.set_timestamp_ns(10);
    l1.add_event("a").set_offset_ps(5).set_duration_ps(100);
    l1.add_event("agg")
        .set_num_occurrences(1)
        .set_duration_ps(1_000_000);
    let mut l2 = b.line(2);
    l2.set_timestamp_ns(i64::MAX);
    l2.add_event("late").set_offset_ps(1).set_duration_ps(2);
    let max = i128::from(i64::MAX);
    assert_eq!(plane_time_span_ps(&plane), Some((10_005, max * 1000 + 3)));
    assert!(has_aggregated_events(&plane));
    plane.lines[0].events.remove(1);
    assert!(!has_aggregated_events(&plane));
    // Only aggregated events: no span.
    let mut only = XPlane::default();
    PlaneBuilder::new(&mut only)
        .line(1)
        .add_event("x")
        .set_num_occurrences(2);
    assert_eq!(plane_time_span_ps(&only), None);
}

// ---------------------------------------------------------------------------------------------
// Merging.

/// Every timed event of a plane as (line id, name, display name, absolute start, duration, stats
/// rendered by name), sorted: what a merge must preserve, whatever the ids.
fn events_of(plane: &XPlane) -> Vec<(i64, String, String, i128, i64, Vec<String>)> {
    let v = PlaneVisitor::new(plane);
    let mut out = Vec::new();
    for line in v.lines() {
        for e in line.events() {
            let stats = e
                .all_stats()
                .map(|s| format!("{}={:?}", s.name(), s.value()))
                .collect();
            let start = match e.num_occurrences() {
                Some(n) => -i128::from(n),
                None => e.timestamp_ps(),
            };
            out.push((
                line.id(),
                e.name().to_owned(),
                e.display_name().to_owned(),
                start,
                e.duration_ps(),
                stats,
            ));
        }
    }
    out.sort();
    out
}

/// A source plane whose ids clash with those of [`dst`].
fn src() -> XPlane {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("src");
    b.add_stat("clock_rate", 100_u64)
        .add_stat("model", StatValue::Ref("v100".into()));
    let a = b.event_metadata_id("A");
    let child = b.event_metadata_id("B");
    if let Some(mut md) = b.event_metadata(a) {
        md.set_display_name("A!")
            .set_metadata(vec![7_u8])
            .add_stat("m", 1_i64)
            .add_stat("kind", StatValue::Ref("fusion".into()))
            .add_child(child);
    }
    let mut l1 = b.line(1);
    l1.set_name("one").set_timestamp_ns(100);
    l1.add_event("A").set_offset_ps(0).set_duration_ps(10_000);
    l1.add_event("B")
        .set_offset_ps(5_000)
        .set_duration_ps(2_000)
        .add_stat("s", StatValue::Ref("X".into()))
        .add_stat("n", 0_i64);
    let mut l2 = b.line(2);
    l2.set_name("two").set_timestamp_ns(50);
    l2.add_event("B").set_num_occurrences(3).set_duration_ps(6);
    plane
}

fn dst() -> XPlane {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("dst").set_id(8);
    b.add_stat("other", 1_i64).add_stat("clock_rate", 5_u64);
    b.event_metadata_id("B"); // id 1, as "A" in the source
    let mut l1 = b.line(1);
    l1.set_timestamp_ns(200); // later than the source's line 1, and unnamed
    l1.add_event("C").set_offset_ps(0).set_duration_ps(1_000);
    b.line(3).set_name("empty");
    plane
}

#[test]
fn merge_planes_as_tsl_does() {
    let src = src();
    let mut merged = dst();
    let dst_before = merged.clone();
    merge_planes(&src, &mut merged);
    assert_eq!(
        (merged.id, merged.name.as_str()),
        (8, "dst"),
        "the destination keeps its identity"
    );

    // Plane stats by name: clock_rate replaced, other kept, model added with its ref re-interned.
    let v = PlaneVisitor::new(&merged);
    let stats: Vec<(String, Option<StatValueRef>)> = v
        .stats()
        .map(|s| (s.name().to_owned(), s.value()))
        .collect();
    assert_eq!(
        stats,
        vec![
            ("other".to_owned(), Some(StatValueRef::Int64(1))),
            ("clock_rate".to_owned(), Some(StatValueRef::Uint64(100))),
            ("model".to_owned(), Some(StatValueRef::Ref("v100"))),
        ]
    );

    // The empty destination line is gone; line 1 merged; line 2 new.
    let lines: Vec<(i64, &str, &str, i64)> = merged
        .lines
        .iter()
        .map(|l| {
            (
                l.id,
                l.name.as_str(),
                l.display_name.as_str(),
                l.timestamp_ns,
            )
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            // Rebased to the earlier timestamp and named by the source, as the destination had no name.
            (1, "one", "", 100),
            // New: timestamp and names from the source; the display name falls back to the name.
            (2, "two", "two", 50),
        ]
    );

    // Every event keeps its absolute time, name, display name and stats.
    let mut expected = events_of(&src);
    expected.extend(events_of(&XPlane {
        lines: vec![dst_before.lines[0].clone()],
        ..dst_before.clone()
    }));
    expected.sort();
    assert_eq!(events_of(&merged), expected);

    // Metadata re-interned by name: one per name, the destination's "B" reused.
    let names: Vec<(i64, &str)> = merged
        .event_metadata
        .values()
        .map(|m| (m.id, m.name.as_str()))
        .collect();
    assert_eq!(names, vec![(1, "B"), (2, "C"), (3, "A")]);
    let a = &merged.event_metadata[&3];
    assert_eq!(a.display_name, "A!");
    assert_eq!(&a.metadata[..], &[7]);
    assert_eq!(a.child_id, vec![1], "the child id is re-interned too");
    let a_stats: Vec<String> = v
        .event_metadata(3)
        .unwrap()
        .stats()
        .map(|s| format!("{}={}", s.name(), s.value().unwrap()))
        .collect();
    assert_eq!(a_stats, vec!["m=1", "kind=fusion"]);
    // Stat metadata names are unique and keys equal ids.
    let mut stat_names: Vec<&str> = merged
        .stat_metadata
        .values()
        .map(|m| m.name.as_str())
        .collect();
    stat_names.sort();
    let before = stat_names.len();
    stat_names.dedup();
    assert_eq!(stat_names.len(), before);
    assert_eq!(
        validate(&XSpace {
            planes: vec![merged.clone()],
            ..Default::default()
        }),
        vec![]
    );

    // The zero-valued stat is still set.
    let n = v
        .lines()
        .flat_map(|l| l.events().collect::<Vec<_>>())
        .find_map(|e| e.stat("n"))
        .unwrap();
    assert_eq!(n.value(), Some(StatValueRef::Int64(0)));
}

#[test]
fn merge_shifts_a_later_source_line() {
    // The destination line starts earlier: source events are shifted, the destination stays.
    let mut src = src();
    src.lines[0].timestamp_ns = 300;
    let mut merged = dst();
    merged.lines[0].timestamp_ns = 100;
    merged.lines[0].name = "kept".into();
    let dst_before = merged.clone();
    merge_planes(&src, &mut merged);
    let line = &merged.lines[0];
    assert_eq!((line.timestamp_ns, line.name.as_str()), (100, "kept"));
    let offsets: Vec<Option<i64>> = line.events.iter().map(|e| e.offset_ps()).collect();
    assert_eq!(offsets, vec![Some(0), Some(200_000), Some(205_000)]);
    let mut expected = events_of(&src);
    expected.extend(events_of(&XPlane {
        lines: vec![dst_before.lines[0].clone()],
        ..dst_before
    }));
    expected.sort();
    assert_eq!(events_of(&merged), expected);
}

#[test]
fn merge_keeps_what_the_destination_already_has() {
    let src = src();
    let mut merged = XPlane::default();
    {
        let mut b = PlaneBuilder::new(&mut merged);
        let a = b.event_metadata_id("A");
        let mut md = b.event_metadata(a).unwrap();
        md.set_display_name("mine").add_stat("own", 1_i64);
        b.line(2).set_display_name("Shown").add_event("A");
    }
    merge_planes(&src, &mut merged);
    let a = merged
        .event_metadata
        .values()
        .find(|m| m.name == "A")
        .unwrap();
    assert_eq!(a.display_name, "mine");
    assert_eq!(
        a.stats.len(),
        1,
        "metadata stats are copied only into metadata without any"
    );
    assert_eq!(&a.metadata[..], &[7], "but empty fields are filled");
    let line2 = merged.lines.iter().find(|l| l.id == 2).unwrap();
    assert_eq!(
        (line2.name.as_str(), line2.display_name.as_str()),
        ("two", "Shown")
    );
}

#[test]
fn merge_never_resolves_a_dangling_id_to_an_unrelated_name() {
    let mut src = XPlane::default();
    src.lines.push(XLine {
        id: 1,
        events: vec![XEvent {
            metadata_id: 99, // resolves to nothing in the source
            data: Some(x_event::Data::OffsetPs(1)),
            duration_ps: 1,
            stats: vec![XStat {
                metadata_id: 98,
                value: Some(x_stat::Value::Int64Value(4)),
            }],
        }],
        ..Default::default()
    });
    let mut merged = XPlane::default();
    merged.event_metadata.insert(
        99,
        XEventMetadata {
            id: 99,
            name: "unrelated".into(),
            ..Default::default()
        },
    );
    merge_planes(&src, &mut merged);
    let v = PlaneVisitor::new(&merged);
    let e = v.lines().next().unwrap().events().next().unwrap();
    assert_eq!(
        e.name(),
        "",
        "the source event had no name and must not gain one"
    );
    assert_ne!(e.metadata_id(), 99);
    assert_eq!(e.stats().next().unwrap().name(), "");
    assert_eq!(
        e.stats().next().unwrap().value(),
        Some(StatValueRef::Int64(4))
    );
}

#[test]
fn merging_into_an_empty_plane_copies_and_all_planes_merge_in_order() {
    let src = src();
    let mut copy = XPlane::default();
    merge_planes(&src, &mut copy);
    assert_eq!(events_of(&copy), events_of(&src));

    let mut second = src.clone();
    second.name = "second".into();
    second.lines[0].timestamp_ns = 90;
    let all = merge_all_planes([&src, &dst(), &second], 42, "/device:GPU:all");
    assert_eq!((all.id, all.name.as_str()), (42, "/device:GPU:all"));
    let mut expected = events_of(&src);
    expected.extend(events_of(&second));
    let d = dst();
    expected.extend(events_of(&XPlane {
        lines: vec![d.lines[0].clone()],
        ..d
    }));
    expected.sort();
    assert_eq!(events_of(&all), expected);
    // Line 1 starts at the earliest timestamp of the three.
    assert_eq!(find_line_with_id(&all, 1).unwrap().timestamp_ns, 90);
    assert_eq!(all.event_metadata.len(), 3);
}

#[test]
fn merging_epoch_scale_lines_is_exact() {
    // Line timestamps in epoch nanoseconds: the rebasing shift is computed wide.
    let mut src = XPlane::default();
    PlaneBuilder::new(&mut src)
        .line(1)
        .set_timestamp_ns(1_700_000_000_000_000_000)
        .add_event("e")
        .set_offset_ps(7);
    let mut merged = XPlane::default();
    PlaneBuilder::new(&mut merged)
        .line(1)
        .set_timestamp_ns(1_700_000_000_000_000_010)
        .add_event("e")
        .set_offset_ps(0);
    merge_planes(&src, &mut merged);
    let offsets: Vec<Option<i64>> = merged.lines[0]
        .events
        .iter()
        .map(|e| e.offset_ps())
        .collect();
    assert_eq!(offsets, vec![Some(10_000), Some(7)]);
    assert_eq!(merged.lines[0].timestamp_ns, 1_700_000_000_000_000_000);
}

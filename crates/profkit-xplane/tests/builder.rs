//! The builder writes planes as TSL's `XPlaneBuilder` does: metadata interned by name with ids
//! from 1, stats of every kind, events placed by absolute time or by offset.

use bytes::Bytes;
use profkit_xplane::{
    PlaneBuilder, StatValue, XEventMetadata, XPlane, XSpace, XStat, XStatMetadata, decode, encode,
    validate, x_event, x_stat,
};
use prost::Message;

fn value(stat: &XStat) -> &x_stat::Value {
    stat.value.as_ref().expect("a set value")
}

#[test]
fn event_metadata_is_interned_by_name_from_id_1() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    assert_eq!(b.event_metadata_id("a"), 1);
    assert_eq!(b.event_metadata_id("b"), 2);
    assert_eq!(b.event_metadata_id("a"), 1);
    let mut line = b.line(0);
    assert_eq!(line.add_event("c").event().metadata_id, 3);
    assert_eq!(line.add_event("a").event().metadata_id, 1);
    // Unnamed metadata takes the next id and is never found by name.
    assert_eq!(b.new_event_metadata(), 4);
    assert_eq!(b.event_metadata_id(""), 5);
    assert_eq!(b.event_metadata_id("d"), 6);
    let names: Vec<(i64, i64, &str)> = plane
        .event_metadata
        .iter()
        .map(|(k, m)| (*k, m.id, m.name.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            (1, 1, "a"),
            (2, 2, "b"),
            (3, 3, "c"),
            (4, 4, ""),
            (5, 5, ""),
            (6, 6, "d")
        ]
    );
}

#[test]
fn stat_metadata_is_interned_by_name_from_id_1_apart_from_events() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.event_metadata_id("e");
    assert_eq!(b.stat_metadata_id("x"), 1);
    assert_eq!(b.stat_metadata_id("y"), 2);
    assert_eq!(b.stat_metadata_id("x"), 1);
    b.add_stat("z", 1_i64);
    assert_eq!(plane.stat_metadata[&3].name, "z");
    assert_eq!(plane.stats[0].metadata_id, 3);
    assert!(plane.stat_metadata.iter().all(|(k, m)| *k == m.id));
}

#[test]
fn stats_of_every_kind() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    {
        let mut line = b.line(1);
        let mut event = line.add_event("op");
        event
            .add_stat("f64", 1.5_f64)
            .add_stat("f32", 0.25_f32)
            .add_stat("u64", u64::MAX)
            .add_stat("u32", 7_u32)
            .add_stat("i64", i64::MIN)
            .add_stat("i32", -3_i32)
            .add_stat("bool", true)
            .add_stat("str", "text")
            .add_stat("string", String::from("owned"))
            .add_stat("bytes", Bytes::from_static(b"\x00\x01"))
            .add_stat("vec", vec![9_u8])
            .add_stat("ref", StatValue::Ref("interned".into()));
    }
    let stats = &plane.lines[0].events[0].stats;
    let values: Vec<&x_stat::Value> = stats.iter().map(value).collect();
    assert_eq!(
        values,
        vec![
            &x_stat::Value::DoubleValue(1.5),
            &x_stat::Value::DoubleValue(0.25),
            &x_stat::Value::Uint64Value(u64::MAX),
            &x_stat::Value::Uint64Value(7),
            &x_stat::Value::Int64Value(i64::MIN),
            &x_stat::Value::Int64Value(-3),
            &x_stat::Value::Int64Value(1),
            &x_stat::Value::StrValue("text".into()),
            &x_stat::Value::StrValue("owned".into()),
            &x_stat::Value::BytesValue(Bytes::from_static(b"\x00\x01")),
            &x_stat::Value::BytesValue(Bytes::from_static(b"\x09")),
            // "ref" is stat 12, its value "interned" stat 13.
            &x_stat::Value::RefValue(13),
        ]
    );
    let ids: Vec<i64> = stats.iter().map(|s| s.metadata_id).collect();
    assert_eq!(ids, (1..=12).collect::<Vec<_>>());
    assert_eq!(plane.stat_metadata[&12].name, "ref");
    assert_eq!(plane.stat_metadata[&13].name, "interned");
    assert!(
        validate(&XSpace {
            planes: vec![plane],
            ..Default::default()
        })
        .is_empty()
    );
}

#[test]
fn ref_values_share_the_stat_name_space() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    // A ref to a string that is already a stat name reuses it, and vice versa.
    let tf_op = b.stat_metadata_id("tf_op");
    b.add_stat("op_name", StatValue::Ref("tf_op".into()));
    b.add_stat("other", StatValue::Ref("MatMul".into()));
    b.add_stat("again", StatValue::Ref("MatMul".into()));
    let matmul = b.stat_metadata_id("MatMul");
    let stats = plane.stats.clone();
    assert_eq!(value(&stats[0]), &x_stat::Value::RefValue(tf_op as u64));
    assert_eq!(value(&stats[1]), &x_stat::Value::RefValue(matmul as u64));
    assert_eq!(value(&stats[2]), &x_stat::Value::RefValue(matmul as u64));
    assert_eq!(plane.stat_metadata.len(), 5); // tf_op, op_name, other, MatMul, again
}

#[test]
fn set_but_zero_values_are_encoded() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.add_stat("zero", 0_i64)
        .add_stat("uzero", 0_u64)
        .add_stat("dzero", 0.0)
        .add_stat("empty", "")
        .add_stat("nothing", Vec::<u8>::new());
    b.line(1).add_event("e"); // at offset 0
    let stats = &plane.stats;
    // XStat{metadata_id: 1, int64_value: 0} is 08 01 20 00, the value present though zero.
    assert_eq!(stats[0].encode_to_vec(), [0x08, 0x01, 0x20, 0x00]);
    assert_eq!(stats[1].encode_to_vec(), [0x08, 0x02, 0x18, 0x00]);
    assert_eq!(
        stats[2].encode_to_vec(),
        [0x08, 0x03, 0x11, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(stats[3].encode_to_vec(), [0x08, 0x04, 0x2a, 0x00]);
    assert_eq!(stats[4].encode_to_vec(), [0x08, 0x05, 0x32, 0x00]);
    // The event's offset 0 is written too.
    let event = &plane.lines[0].events[0];
    assert_eq!(event.data, Some(x_event::Data::OffsetPs(0)));
    assert_eq!(event.encode_to_vec(), [0x08, 0x01, 0x10, 0x00]);
    // And everything survives the trip through bytes.
    let space = XSpace {
        planes: vec![plane.clone()],
        ..Default::default()
    };
    let bytes = encode(&space);
    assert!(bytes.windows(4).any(|w| w == [0x08, 0x01, 0x20, 0x00]));
    assert_eq!(decode(bytes).unwrap().planes[0], plane);
}

#[test]
fn events_by_offset_and_by_absolute_time() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(5);
    line.set_timestamp_ns(1_000);
    line.add_event("offset")
        .set_offset_ps(250)
        .set_duration_ps(10);
    line.add_event("abs_ps")
        .set_timestamp_ps(1_500_000)
        .set_duration_ps(20);
    line.add_event("abs_ns")
        .set_timestamp_ns(1_002)
        .set_end_timestamp_ps(1_003_000);
    line.add_event("before").set_timestamp_ps(999_000); // before the line: negative offset
    line.add_event("agg")
        .set_num_occurrences(12)
        .set_duration_ps(7);
    assert_eq!(line.num_events(), 5);
    let events = &plane.lines[0].events;
    let offsets: Vec<Option<i64>> = events.iter().map(|e| e.offset_ps()).collect();
    assert_eq!(
        offsets,
        vec![Some(250), Some(500_000), Some(2_000), Some(-1_000), None]
    );
    let durations: Vec<i64> = events.iter().map(|e| e.duration_ps).collect();
    assert_eq!(durations, vec![10, 20, 1_000, 0, 7]);
    assert_eq!(events[4].num_occurrences(), Some(12));
    assert_eq!(events[4].data, Some(x_event::Data::NumOccurrences(12)));
    assert_eq!(events[0].num_occurrences(), None);
}

#[test]
fn absolute_times_of_epoch_scale_do_not_overflow() {
    // An epoch line timestamp times 1000 does not fit in i64; the builder computes in i128.
    let ts_ns: i64 = 1_700_000_000_000_000_000;
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(1);
    line.set_timestamp_ns(ts_ns);
    line.add_event("e").set_timestamp_ns(ts_ns + 3);
    line.add_event("far").set_timestamp_ps(0); // -1.7e21 ps: saturates to i64::MIN
    line.add_event("end").set_end_timestamp_ps(i64::MAX);
    let events = &plane.lines[0].events;
    assert_eq!(events[0].offset_ps(), Some(3_000));
    assert_eq!(events[1].offset_ps(), Some(i64::MIN));
    assert_eq!(events[2].duration_ps, i64::MIN);
}

#[test]
fn moving_a_line_keeps_absolute_times_when_asked() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(1);
    line.set_timestamp_ns(100);
    line.add_event("a").set_offset_ps(5_000);
    line.add_event("agg").set_num_occurrences(2);
    line.set_timestamp_ns_and_adjust_event_offsets(90);
    assert_eq!(line.line().timestamp_ns, 90);
    assert_eq!(line.line().events[0].offset_ps(), Some(15_000));
    assert_eq!(
        line.line().events[1].num_occurrences(),
        Some(2),
        "aggregated events keep their count"
    );
    // Plain set_timestamp_ns moves the events with the line.
    line.set_timestamp_ns(0);
    assert_eq!(line.line().events[0].offset_ps(), Some(15_000));
    // Extreme moves saturate instead of overflowing.
    line.set_timestamp_ns_and_adjust_event_offsets(i64::MIN);
    assert_eq!(line.line().events[0].offset_ps(), Some(i64::MAX));
}

#[test]
fn lines_are_found_by_id_and_described() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_id(4).set_name("/device:GPU:0");
    b.line(7)
        .set_name("stream")
        .set_display_name("Stream #7")
        .set_display_id(70)
        .set_duration_ps(99);
    b.line(8).add_event("x");
    let mut again = b.line(7);
    assert_eq!(again.id(), 7);
    assert_eq!(again.line().name, "stream");
    again.add_event("y");
    assert_eq!(b.plane().lines.len(), 2);
    assert_eq!(plane.id, 4);
    assert_eq!(plane.name, "/device:GPU:0");
    let line = &plane.lines[0];
    assert_eq!(
        (
            line.id,
            line.display_id,
            line.display_name.as_str(),
            line.duration_ps,
            line.events.len()
        ),
        (7, 70, "Stream #7", 99, 1)
    );
}

#[test]
fn event_metadata_builder_sets_everything() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let parent = b.event_metadata_id("parent");
    let child = b.event_metadata_id("child");
    assert!(b.event_metadata(99).is_none());
    let mut md = b.event_metadata(parent).unwrap();
    assert_eq!(md.id(), parent);
    md.set_display_name("Parent")
        .set_metadata(Bytes::from_static(b"\x01\x02"))
        .add_stat("flops", 10_u64)
        .add_stat("kind", StatValue::Ref("conv".into()))
        .set_or_add_stat("flops", 20_u64)
        .add_child(child);
    assert_eq!(md.metadata().stats.len(), 2);
    let m = &plane.event_metadata[&parent];
    assert_eq!(m.display_name, "Parent");
    assert_eq!(&m.metadata[..], b"\x01\x02");
    assert_eq!(m.child_id, vec![child]);
    assert_eq!(value(&m.stats[0]), &x_stat::Value::Uint64Value(20));
    let conv = plane
        .stat_metadata
        .values()
        .find(|s| s.name == "conv")
        .unwrap()
        .id;
    assert_eq!(value(&m.stats[1]), &x_stat::Value::RefValue(conv as u64));
}

#[test]
fn set_or_add_stat_replaces_by_name() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.add_stat("a", 1_i64)
        .set_or_add_stat("a", 2_i64)
        .set_or_add_stat("b", 3_i64);
    {
        let mut line = b.line(1);
        let mut e = line.add_event("e");
        e.add_stat("s", 1_i64)
            .set_or_add_stat("s", "two")
            .set_or_add_stat("t", 0.5);
        let sid = e.event().stats[0].metadata_id;
        e.add_stat_with_metadata_id(sid, 9_u64);
    }
    assert_eq!(plane.stats.len(), 2);
    assert_eq!(value(&plane.stats[0]), &x_stat::Value::Int64Value(2));
    let stats = &plane.lines[0].events[0].stats;
    assert_eq!(stats.len(), 3);
    assert_eq!(value(&stats[0]), &x_stat::Value::StrValue("two".into()));
    assert_eq!(value(&stats[2]), &x_stat::Value::Uint64Value(9));
    assert_eq!(stats[2].metadata_id, stats[0].metadata_id);
}

#[test]
fn extending_an_existing_plane_reuses_names_and_continues_ids() {
    let mut plane = XPlane::default();
    plane.event_metadata.insert(
        10,
        XEventMetadata {
            id: 10,
            name: "old".into(),
            ..Default::default()
        },
    );
    plane.stat_metadata.insert(
        4,
        XStatMetadata {
            id: 4,
            name: "old_stat".into(),
            description: String::new(),
        },
    );
    let mut b = PlaneBuilder::new(&mut plane);
    assert_eq!(b.event_metadata_id("old"), 10);
    assert_eq!(b.event_metadata_id("new"), 11);
    assert_eq!(b.stat_metadata_id("old_stat"), 4);
    assert_eq!(b.stat_metadata_id("new_stat"), 5);
    // An existing line is found again rather than duplicated.
    b.line(3).set_name("three");
    let mut b = PlaneBuilder::new(&mut plane);
    b.line(3).add_event("old");
    assert_eq!(plane.lines.len(), 1);
    assert_eq!(plane.lines[0].events[0].metadata_id, 10);
}

#[test]
fn ids_at_the_top_of_the_range_do_not_overflow() {
    // A plane from a file may already use i64::MAX.
    let mut plane = XPlane::default();
    plane.event_metadata.insert(
        i64::MAX,
        XEventMetadata {
            id: i64::MAX,
            name: "top".into(),
            ..Default::default()
        },
    );
    plane.stat_metadata.insert(
        i64::MAX,
        XStatMetadata {
            id: i64::MAX,
            name: "top".into(),
            description: String::new(),
        },
    );
    let mut b = PlaneBuilder::new(&mut plane);
    let a = b.event_metadata_id("a");
    let c = b.event_metadata_id("c");
    let s = b.stat_metadata_id("s");
    let t = b.stat_metadata_id("t");
    assert_ne!(a, c);
    assert_ne!(s, t);
    for id in [a, c, s, t] {
        assert!(id > 0 && id < i64::MAX, "{id}");
    }
    assert_eq!(plane.event_metadata.len(), 3);
    assert_eq!(plane.stat_metadata.len(), 3);
    assert_eq!(
        plane.event_metadata[&i64::MAX].name,
        "top",
        "existing metadata is kept"
    );
    assert!(plane.event_metadata.iter().all(|(k, m)| *k == m.id));
}

#[test]
fn many_new_names_after_the_top_id_stay_fast() {
    // Dense ids 1..=20_000 plus i64::MAX: every new id must be searched for, and the search must
    // not restart from 1 each time.
    let mut plane = XPlane::default();
    for id in (1..=20_000).chain([i64::MAX]) {
        plane.event_metadata.insert(
            id,
            XEventMetadata {
                id,
                name: format!("m{id}"),
                ..Default::default()
            },
        );
    }
    let started = std::time::Instant::now();
    let mut b = PlaneBuilder::new(&mut plane);
    let ids: Vec<i64> = (0..20_000)
        .map(|i| b.event_metadata_id(&format!("new{i}")))
        .collect();
    assert_eq!(ids.first(), Some(&20_001));
    assert_eq!(ids.last(), Some(&40_000));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn unnamed_metadata_of_an_existing_plane_is_not_found_by_name() {
    // As in TSL: a fresh builder never hands out existing unnamed metadata for "".
    let mut plane = XPlane::default();
    let unnamed = PlaneBuilder::new(&mut plane).new_event_metadata();
    let mut b = PlaneBuilder::new(&mut plane);
    let by_name = b.event_metadata_id("");
    assert_ne!(by_name, unnamed);
    assert_eq!(
        b.event_metadata_id(""),
        by_name,
        "but \"\" itself is interned"
    );
    plane.stat_metadata.insert(
        9,
        XStatMetadata {
            id: 9,
            name: String::new(),
            description: "unnamed".into(),
        },
    );
    let mut b = PlaneBuilder::new(&mut plane);
    assert_eq!(b.stat_metadata_id(""), 10);
}

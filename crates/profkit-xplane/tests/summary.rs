//! The summary `profkit inspect` prints: counts, time span and busiest event names.

use profkit_xplane::summary::{PlaneSummary, Summary, TOP_EVENT_NAMES};
use profkit_xplane::{PlaneBuilder, XPlane, XSpace};

fn plane() -> XPlane {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_id(3).set_name("/host:CPU").add_stat("s", 1_i64);
    let md = b.event_metadata_id("long.op");
    b.event_metadata(md).unwrap().set_display_name("Op");
    let mut line = b.line(1);
    line.set_timestamp_ns(10);
    line.add_event("long.op")
        .set_offset_ps(0)
        .set_duration_ps(100);
    line.add_event("long.op")
        .set_offset_ps(200)
        .set_duration_ps(50);
    line.add_event("short").set_offset_ps(-5).set_duration_ps(1);
    line.add_event("agg")
        .set_num_occurrences(7)
        .set_duration_ps(1_000);
    b.line(2);
    plane
}

#[test]
fn plane_counts_span_and_top_events() {
    let s = PlaneSummary::of(&plane());
    assert_eq!((s.id, s.name.as_str()), (3, "/host:CPU"));
    assert_eq!(
        (
            s.lines,
            s.events,
            s.event_metadata,
            s.stat_metadata,
            s.stats
        ),
        (2, 4, 3, 1, 1)
    );
    // The aggregated event has no time: the span is that of the timed ones.
    assert_eq!((s.start_ps, s.end_ps), (Some(9_995), Some(10_250)));
    let top: Vec<(&str, u64, i128)> = s
        .top_events
        .iter()
        .map(|e| (e.name.as_str(), e.count, e.total_duration_ps))
        .collect();
    assert_eq!(
        top,
        vec![("agg", 7, 1_000), ("Op", 2, 150), ("short", 1, 1)]
    );
}

#[test]
fn space_totals() {
    let space = XSpace {
        planes: vec![plane(), XPlane::default(), plane()],
        errors: vec!["e".into()],
        warnings: vec!["w".into(), "v".into()],
        hostnames: vec!["h".into()],
    };
    let s = Summary::of(&space);
    assert_eq!(
        (s.errors, s.warnings, s.hostnames.clone()),
        (1, 2, vec!["h".to_owned()])
    );
    assert_eq!((s.planes.len(), s.total_lines, s.total_events), (3, 4, 8));
    assert_eq!((s.start_ps(), s.end_ps()), (Some(9_995), Some(10_250)));
    assert_eq!(s.planes[1].start_ps, None);
    // Plane by plane gives the same.
    let mut streamed = Summary {
        hostnames: space.hostnames.clone(),
        errors: 1,
        warnings: 2,
        ..Default::default()
    };
    for p in &space.planes {
        streamed.add_plane(p);
    }
    assert_eq!(streamed, s);
    let json = serde_json::to_value(&s).unwrap();
    assert!(json["planes"][1].get("start_ps").is_none());
}

#[test]
fn top_events_are_bounded_and_ordered_with_ties_by_name() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(1);
    for i in 0..15 {
        line.add_event(&format!("e{i:02}"))
            .set_offset_ps(i * 10)
            .set_duration_ps(5);
    }
    let s = PlaneSummary::of(&plane);
    assert_eq!(s.top_events.len(), TOP_EVENT_NAMES);
    let names: Vec<&str> = s.top_events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names[..3], ["e00", "e01", "e02"]);
}

#[test]
fn hostile_counts_saturate() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(1);
    for _ in 0..3 {
        line.add_event("many")
            .set_num_occurrences(i64::MAX)
            .set_duration_ps(i64::MAX);
    }
    line.add_event("many").set_num_occurrences(-5);
    let s = PlaneSummary::of(&plane);
    assert_eq!(s.top_events[0].count, u64::MAX);
    assert_eq!(s.top_events[0].total_duration_ps, 3 * i128::from(i64::MAX));
}

/// The summary through views (what `inspect` prints) equals the summary of the decoded space on
/// every XSpace input of the conformance suite.
#[test]
fn view_summary_equals_owned_summary_on_every_conformance_input() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/xplane");
    let mut cases = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let input = entry.unwrap().path().join("input.xplane.pb");
        if !input.is_file() {
            continue;
        }
        let bytes = std::fs::read(&input).unwrap();
        let Ok(space) = profkit_xplane::decode(bytes.clone()) else {
            continue;
        };
        cases += 1;
        let view = profkit_xplane::XSpaceView::new(&bytes).unwrap();
        assert_eq!(
            Summary::of_view(&view).unwrap(),
            Summary::of(&space),
            "{}",
            input.display()
        );
    }
    assert!(cases >= 30, "only {cases} conformance inputs decoded");
}

//! Validation reports every problem, each with its path and kind.

use profkit_xplane::validate::validate_plane;
use profkit_xplane::{
    PlaneBuilder, Problem, ProblemKind, Severity, XEvent, XEventMetadata, XLine, XPlane, XSpace,
    XStat, XStatMetadata, validate, x_event, x_stat,
};

fn space_of(plane: XPlane) -> XSpace {
    XSpace {
        planes: vec![XPlane::default(), plane],
        ..Default::default()
    }
}

fn found(space: &XSpace) -> Vec<(String, ProblemKind)> {
    validate(space)
        .into_iter()
        .map(|p| (p.path, p.kind))
        .collect()
}

fn p(path: &str, kind: ProblemKind) -> (String, ProblemKind) {
    (path.to_owned(), kind)
}

/// A valid plane: metadata resolves, events nest.
fn valid() -> XPlane {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.add_stat("clock_rate", 1_u64);
    let parent = b.event_metadata_id("parent");
    let child = b.event_metadata_id("child");
    b.event_metadata(parent)
        .unwrap()
        .add_child(child)
        .add_stat("kind", profkit_xplane::StatValue::Ref("fusion".into()));
    let mut line = b.line(1);
    line.set_timestamp_ns(1_000);
    line.add_event("parent")
        .set_offset_ps(0)
        .set_duration_ps(100);
    line.add_event("child")
        .set_offset_ps(10)
        .set_duration_ps(20);
    line.add_event("child")
        .set_offset_ps(30)
        .set_duration_ps(70); // touches the previous, ends with the parent
    line.add_event("child")
        .set_offset_ps(100)
        .set_duration_ps(5); // touches the parent's end
    line.add_event("child").set_offset_ps(50).set_duration_ps(0); // instant inside
    line.add_event("parent")
        .set_num_occurrences(3)
        .set_duration_ps(1_000_000); // aggregated: no time
    plane
}

#[test]
fn a_valid_space_has_no_problems() {
    assert_eq!(validate(&space_of(valid())), vec![]);
    assert_eq!(validate(&XSpace::default()), vec![]);
    // Identical spans nest in each other.
    let mut plane = valid();
    let first = plane.lines[0].events[0].clone();
    plane.lines[0].events.push(first);
    assert_eq!(validate(&space_of(plane)), vec![]);
}

#[test]
fn dangling_ids_are_reported_with_their_paths() {
    let mut plane = valid();
    plane.lines[0].events[1].metadata_id = 50;
    plane.lines[0].events[2].stats.push(XStat {
        metadata_id: 60,
        value: Some(x_stat::Value::Int64Value(0)),
    });
    plane.lines[0].events[2].stats.push(XStat {
        metadata_id: 1,
        value: Some(x_stat::Value::RefValue(70)),
    });
    plane.lines[0].events[2].stats.push(XStat {
        metadata_id: 1,
        value: Some(x_stat::Value::RefValue(u64::MAX)),
    });
    plane.event_metadata.get_mut(&1).unwrap().child_id.push(80);
    plane.stats.push(XStat {
        metadata_id: 90,
        value: Some(x_stat::Value::StrValue(String::new())),
    });
    let problems = validate(&space_of(plane));
    let kinds: Vec<(String, ProblemKind)> =
        problems.iter().map(|p| (p.path.clone(), p.kind)).collect();
    assert_eq!(
        kinds,
        vec![
            p("planes[1].stats[1]", ProblemKind::UnknownStatMetadata),
            p(
                "planes[1].event_metadata[1].child_id[1]",
                ProblemKind::UnknownChild
            ),
            p(
                "planes[1].lines[0].events[1]",
                ProblemKind::UnknownEventMetadata
            ),
            p(
                "planes[1].lines[0].events[2].stats[0]",
                ProblemKind::UnknownStatMetadata
            ),
            p(
                "planes[1].lines[0].events[2].stats[1]",
                ProblemKind::UnknownRefValue
            ),
            p(
                "planes[1].lines[0].events[2].stats[2]",
                ProblemKind::UnknownRefValue
            ),
        ]
    );
    // The messages name the ids.
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    for (message, id) in messages
        .iter()
        .zip(["90", "80", "50", "60", "70", "18446744073709551615"])
    {
        assert!(message.contains(id), "{message}");
    }
    // Display is "path: message".
    assert_eq!(
        problems[0].to_string(),
        format!("planes[1].stats[1]: {}", problems[0].message)
    );
}

#[test]
fn metadata_stats_are_checked_too() {
    let mut plane = valid();
    plane.event_metadata.get_mut(&2).unwrap().stats.push(XStat {
        metadata_id: 77,
        value: None,
    });
    assert_eq!(
        found(&space_of(plane)),
        vec![
            p(
                "planes[1].event_metadata[2].stats[0]",
                ProblemKind::UnknownStatMetadata
            ),
            p(
                "planes[1].event_metadata[2].stats[0]",
                ProblemKind::UnsetStatValue
            ),
        ]
    );
}

#[test]
fn map_keys_must_equal_ids() {
    let mut plane = valid();
    plane.event_metadata.insert(
        9,
        XEventMetadata {
            id: 10,
            name: "x".into(),
            ..Default::default()
        },
    );
    plane.stat_metadata.insert(
        9,
        XStatMetadata {
            id: 0,
            name: "y".into(),
            description: String::new(),
        },
    );
    let problems = validate(&space_of(plane));
    assert_eq!(
        problems
            .iter()
            .map(|p| (p.path.clone(), p.kind))
            .collect::<Vec<_>>(),
        vec![
            p("planes[1].event_metadata[9]", ProblemKind::MapKeyMismatch),
            p("planes[1].stat_metadata[9]", ProblemKind::MapKeyMismatch),
        ]
    );
    assert!(problems[0].message.contains("9") && problems[0].message.contains("10"));
}

#[test]
fn unset_stat_values_are_reported() {
    let mut plane = valid();
    plane.stats[0].value = None;
    plane.lines[0].events[0].stats.push(XStat {
        metadata_id: 1,
        value: None,
    });
    assert_eq!(
        found(&space_of(plane)),
        vec![
            p("planes[1].stats[0]", ProblemKind::UnsetStatValue),
            p(
                "planes[1].lines[0].events[0].stats[0]",
                ProblemKind::UnsetStatValue
            ),
        ]
    );
}

fn line_of(spans: &[(i64, i64)]) -> XPlane {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(1);
    // Each event a name of its own: events of one name may overlap as iterations do.
    for (i, &(offset, duration)) in spans.iter().enumerate() {
        line.add_event(&format!("e{i}"))
            .set_offset_ps(offset)
            .set_duration_ps(duration);
    }
    plane
}

fn overlapping(spans: &[(i64, i64)]) -> Vec<usize> {
    validate_plane(&line_of(spans), "p")
        .into_iter()
        .filter(|p| p.kind == ProblemKind::PartialOverlap)
        .map(|p| {
            let index = p
                .path
                .trim_start_matches("p.lines[0].events[")
                .trim_end_matches(']');
            index.parse().unwrap()
        })
        .collect()
}

#[test]
fn partial_overlaps_are_reported_nesting_and_touching_are_not() {
    // Nesting, touching, instants and identical spans are fine.
    assert!(overlapping(&[(0, 100), (10, 20), (30, 70), (100, 5), (50, 0), (0, 100)]).is_empty());
    assert!(overlapping(&[(0, 10), (10, 10), (20, 0), (20, 10)]).is_empty());
    // A crosses B's end.
    assert_eq!(overlapping(&[(0, 10), (5, 10)]), vec![1]);
    // File order does not matter: the later-starting event is the one reported.
    assert_eq!(overlapping(&[(5, 10), (0, 10)]), vec![0]);
    // Inside a parent, a child crossing its sibling.
    assert_eq!(
        overlapping(&[(0, 100), (10, 20), (20, 5), (25, 10)]),
        vec![3]
    );
    // A child that outlives its parent.
    assert_eq!(overlapping(&[(0, 100), (10, 20), (15, 90)]), vec![2]);
    // An event overlapping one that was itself reported is reported too.
    assert_eq!(overlapping(&[(0, 10), (5, 10), (14, 10)]), vec![1, 2]);
    // A chain: every link overlaps the previous one.
    assert_eq!(
        overlapping(&[(0, 10), (5, 10), (10, 10), (15, 10)]),
        vec![1, 2, 3]
    );
}

#[test]
fn overlap_messages_name_both_events() {
    let problems = validate_plane(&line_of(&[(1_000, 10_000), (6_000, 10_000)]), "planes[0]");
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].path, "planes[0].lines[0].events[1]");
    assert_eq!(
        problems[0].message,
        "event 6000..16000 ps partially overlaps events[0] 1000..11000 ps"
    );
}

#[test]
fn overlaps_with_python_tracer_events_are_warnings_others_errors() {
    // What JAX writes: a `$file:line function` event that opens an annotation and returns
    // before the annotation ends, then an ordinary pair that overlaps.
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(1);
    line.add_event("$profiler.py:120 __init__")
        .set_offset_ps(0)
        .set_duration_ps(10_000);
    line.add_event("train")
        .set_offset_ps(9_000)
        .set_duration_ps(50_000);
    line.add_event("a")
        .set_offset_ps(100_000)
        .set_duration_ps(10_000);
    line.add_event("b")
        .set_offset_ps(105_000)
        .set_duration_ps(10_000);
    let problems = validate_plane(&plane, "planes[0]");
    let seen: Vec<(&str, Severity)> = problems
        .iter()
        .map(|p| (p.path.as_str(), p.severity))
        .collect();
    assert_eq!(
        seen,
        [
            ("planes[0].lines[0].events[1]", Severity::Warning),
            ("planes[0].lines[0].events[3]", Severity::Error),
        ]
    );
    assert!(problems[0].message.ends_with(
        "partially overlaps events[0] 0..10000 ps (a Python tracer event: JAX and TensorFlow \
         write these across their annotations)"
    ));
    assert!(problems[1].message.ends_with("events[2] 100000..110000 ps"));
    // Either side may be the tracer's: here the tracer event is the one reported.
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(1);
    line.add_event("step")
        .set_offset_ps(0)
        .set_duration_ps(10_000);
    line.add_event("$a.py:1 f")
        .set_offset_ps(5_000)
        .set_duration_ps(10_000);
    let problems = validate_plane(&plane, "p");
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].severity, Severity::Warning);
    // The view-based check agrees.
    let bytes = prost::Message::encode_to_vec(&plane);
    let view = profkit_xplane::XPlaneView::new(&bytes).unwrap();
    let found = profkit_xplane::validate::validate_plane_view(&view, "p").unwrap();
    assert_eq!(found, problems);
}

/// Severities of the problems of `plane`, checked by the decoded and the view-based validators
/// alike.
fn severities(plane: &XPlane) -> Vec<(String, Severity)> {
    let problems = validate_plane(plane, "p");
    let bytes = prost::Message::encode_to_vec(plane);
    let view = profkit_xplane::XPlaneView::new(&bytes).unwrap();
    let found = profkit_xplane::validate::validate_plane_view(&view, "p").unwrap();
    assert_eq!(found, problems);
    problems.into_iter().map(|p| (p.path, p.severity)).collect()
}

#[test]
fn consecutive_iterations_of_one_name_may_overlap_a_little() {
    // What TensorFlow writes on a `tf_Compute` thread for Keras `fit(steps_per_execution=4)`:
    // each `ExecutorState::Process` iteration ends a fraction of a microsecond after the next
    // one starts (here 431 ns and 70 ns, as in a real file).
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(1);
    line.set_name("tf_Compute/-6815698540841995664");
    for (offset, duration) in [
        (0, 9_034_000),
        (8_603_000, 9_114_000),
        (17_717_000, 540_000),
        (18_187_000, 832_000),
    ] {
        line.add_event("ExecutorState::Process")
            .set_offset_ps(offset)
            .set_duration_ps(duration);
    }
    // Past the skew a producer's iterations do not go: 11 us, an error.
    line.add_event("ExecutorState::Process")
        .set_offset_ps(100_000_000)
        .set_duration_ps(20_000_000);
    line.add_event("ExecutorState::Process")
        .set_offset_ps(109_000_000)
        .set_duration_ps(20_000_000);
    // Two names: an error however small the overlap.
    line.add_event("MatMul")
        .set_offset_ps(200_000_000)
        .set_duration_ps(1_000_000);
    line.add_event("BiasAdd")
        .set_offset_ps(200_900_000)
        .set_duration_ps(1_000_000);
    let problems = validate_plane(&plane, "p");
    assert!(problems[0].message.ends_with(
        "(consecutive events of one name overlapping by at most 10 us: TensorFlow writes its \
         `ExecutorState::Process` iterations so)"
    ));
    assert_eq!(problems[0].other.as_deref(), Some("p.lines[0].events[0]"));
    assert_eq!(
        severities(&plane),
        [
            ("p.lines[0].events[1]".to_owned(), Severity::Warning),
            ("p.lines[0].events[3]".to_owned(), Severity::Warning),
            ("p.lines[0].events[5]".to_owned(), Severity::Error),
            ("p.lines[0].events[7]".to_owned(), Severity::Error),
        ]
    );
}

#[test]
fn pytorch_python_function_events_may_overlap() {
    // An XSpace read from a Kineto trace recorded with `with_stack=True`: `step()` (category
    // `python_function`, its `cat` stat on the event) returns after `ProfilerStep#6` ends, and a
    // Python function whose every event has the category on its metadata crosses a second step.
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let shared = b.event_metadata_id("torch/autograd/profiler.py(757): __exit__");
    b.event_metadata(shared)
        .unwrap()
        .add_stat("cat", "python_function");
    let mut line = b.line(4);
    line.set_name("thread 19392 (python3)");
    line.add_event("ProfilerStep#6")
        .set_offset_ps(0)
        .set_duration_ps(4_426_114_000)
        .add_stat("cat", "user_annotation");
    line.add_event("torch/profiler/profiler.py(811): step")
        .set_offset_ps(4_370_113_000)
        .set_duration_ps(124_890_000)
        .add_stat("cat", "python_function");
    line.add_event("ProfilerStep#7")
        .set_offset_ps(5_000_000_000)
        .set_duration_ps(1_000_000_000)
        .add_stat("cat", "user_annotation");
    line.add_event("torch/autograd/profiler.py(757): __exit__")
        .set_offset_ps(5_900_000_000)
        .set_duration_ps(200_000_000);
    // Two operators: an error.
    line.add_event("aten::mm")
        .set_offset_ps(7_000_000_000)
        .set_duration_ps(10_000_000)
        .add_stat("cat", "cpu_op");
    line.add_event("aten::add")
        .set_offset_ps(7_005_000_000)
        .set_duration_ps(10_000_000)
        .add_stat("cat", "cpu_op");
    assert_eq!(
        severities(&plane),
        [
            ("p.lines[0].events[1]".to_owned(), Severity::Warning),
            ("p.lines[0].events[3]".to_owned(), Severity::Warning),
            ("p.lines[0].events[5]".to_owned(), Severity::Error),
        ]
    );
    assert!(validate_plane(&plane, "p")[0].message.ends_with(
        "(a PyTorch `python_function` event: Kineto writes these with `with_stack=True` \
         across the ranges their functions open and close)"
    ));
}

#[test]
fn async_op_lines_may_overlap() {
    // XLA's `Async XLA Ops` line of a TPU: copies that run at the same time.
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    let mut line = b.line(4);
    line.set_name("Async XLA Ops");
    line.add_event("%copy-start")
        .set_offset_ps(0)
        .set_duration_ps(189_000_000);
    line.add_event("%copy-start.2")
        .set_offset_ps(5_000)
        .set_duration_ps(495_000_000);
    let mut ops = b.line(3);
    ops.set_name("XLA Ops");
    ops.add_event("%copy-start")
        .set_offset_ps(0)
        .set_duration_ps(189_000_000);
    ops.add_event("%copy-start.2")
        .set_offset_ps(5_000)
        .set_duration_ps(495_000_000);
    assert_eq!(
        severities(&plane),
        [
            ("p.lines[0].events[1]".to_owned(), Severity::Warning),
            ("p.lines[1].events[1]".to_owned(), Severity::Error),
        ]
    );
}

#[test]
fn overlaps_are_found_in_absolute_time_across_epoch_scale_lines() {
    // Epoch-scale line timestamps: the overlap check works in exact picoseconds.
    let mut plane = line_of(&[(0, 2_000), (1_000, 2_000)]);
    plane.lines[0].timestamp_ns = 1_700_000_000_000_000_000;
    let problems = validate_plane(&plane, "x");
    let kinds: Vec<ProblemKind> = problems.iter().map(|p| p.kind).collect();
    assert!(kinds.contains(&ProblemKind::PartialOverlap), "{problems:?}");
    assert!(kinds.contains(&ProblemKind::EpochLineTimestamp));
}

#[test]
fn epoch_line_timestamps_get_one_message_per_line_not_one_per_event() {
    // What a builder user writes who takes line starts from the wall clock.
    let events: Vec<(i64, i64)> = (0..1000).map(|i| (i * 10, 5)).collect();
    let mut plane = line_of(&events);
    plane.lines[0].timestamp_ns = 1_763_900_000_000_000_000;
    let problems = validate_plane(&plane, "planes[0]");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::EpochLineTimestamp);
    assert_eq!(problems[0].path, "planes[0].lines[0]");
    let message = &problems[0].message;
    for says in [
        "since 1970",
        "session-relative",
        "profile_start_time",
        "normalize_space_timestamps",
    ] {
        assert!(message.contains(says), "{message}");
    }
    // The view-based check (what `profkit validate` runs) says the same, once.
    let bytes = prost::Message::encode_to_vec(&plane);
    let view = profkit_xplane::XPlaneView::new(&bytes).unwrap();
    let mut found = Vec::new();
    profkit_xplane::validate::validate_plane_view_each(&view, "planes[0]", &mut |p| found.push(p))
        .unwrap();
    assert_eq!(found, problems);
}

#[test]
fn picosecond_overflow_is_reported() {
    let mut plane = line_of(&[(0, 10)]);
    // 1e16 ns * 1000 = 1e19 ps > i64::MAX.
    plane.lines[0].timestamp_ns = 10_000_000_000_000_000;
    let problems = validate_plane(&plane, "planes[3]");
    assert_eq!(
        problems
            .iter()
            .map(|p| (p.path.as_str(), p.kind))
            .collect::<Vec<_>>(),
        vec![("planes[3].lines[0]", ProblemKind::EpochLineTimestamp)]
    );
    assert!(
        problems[0].message.contains("session-relative"),
        "{}",
        problems[0].message
    );
    // At the edge: start fits, the end does not.
    let mut plane = line_of(&[(i64::MAX - 5, 10)]);
    plane.lines[0].timestamp_ns = 0;
    assert_eq!(
        validate_plane(&plane, "p")[0].kind,
        ProblemKind::TimestampOverflow
    );
    // Negative overflow.
    let mut plane = line_of(&[(0, 0)]);
    plane.lines[0].timestamp_ns = i64::MIN / 100;
    assert_eq!(
        validate_plane(&plane, "p")[0].kind,
        ProblemKind::EpochLineTimestamp
    );
    // Just inside the range: nothing.
    let mut plane = line_of(&[(807, 0)]);
    plane.lines[0].timestamp_ns = i64::MAX / 1000; // 9223372036854775 * 1000 + 807 == i64::MAX
    assert_eq!(validate_plane(&plane, "p"), vec![]);
    // Aggregated events have no time to overflow.
    let mut plane = XPlane::default();
    PlaneBuilder::new(&mut plane)
        .line(1)
        .set_timestamp_ns(i64::MAX)
        .add_event("agg")
        .set_num_occurrences(1);
    assert_eq!(validate_plane(&plane, "p"), vec![]);
}

#[test]
fn negative_durations_and_counts_are_reported() {
    let mut plane = line_of(&[(0, 10), (2, -1)]);
    plane.lines[0].events.push(XEvent {
        metadata_id: 1,
        data: Some(x_event::Data::NumOccurrences(-2)),
        duration_ps: 0,
        stats: vec![],
    });
    assert_eq!(
        validate_plane(&plane, "p")
            .into_iter()
            .map(|p| (p.path, p.kind))
            .collect::<Vec<_>>(),
        vec![
            p("p.lines[0].events[1]", ProblemKind::NegativeDuration),
            p("p.lines[0].events[2]", ProblemKind::NegativeOccurrences),
        ]
    );
}

#[test]
fn every_problem_is_reported_not_just_the_first() {
    let mut plane = XPlane::default();
    plane.lines.push(XLine {
        id: 1,
        events: (0..50)
            .map(|i| XEvent {
                metadata_id: 100 + i,
                data: Some(x_event::Data::OffsetPs(i * 10)),
                duration_ps: 15, // each overlaps the next
                stats: vec![XStat::default()],
            })
            .collect(),
        ..Default::default()
    });
    let problems: Vec<Problem> = validate(&space_of(plane));
    let count = |kind| problems.iter().filter(|p| p.kind == kind).count();
    assert_eq!(count(ProblemKind::UnknownEventMetadata), 50);
    assert_eq!(count(ProblemKind::UnknownStatMetadata), 50);
    assert_eq!(count(ProblemKind::UnsetStatValue), 50);
    assert_eq!(count(ProblemKind::PartialOverlap), 49);
    // Problems come in file order within a line's events.
    let overlap_paths: Vec<&str> = problems
        .iter()
        .filter(|p| p.kind == ProblemKind::PartialOverlap)
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(overlap_paths[0], "planes[1].lines[0].events[1]");
    assert_eq!(overlap_paths[48], "planes[1].lines[0].events[49]");
}

#[test]
fn problems_serialize_for_the_cli() {
    let problems = validate_plane(&line_of(&[(0, -1)]), "planes[0]");
    let json = serde_json::to_value(&problems).unwrap();
    assert_eq!(json[0]["path"], "planes[0].lines[0].events[0]");
    assert_eq!(json[0]["kind"], "negative_duration");
}

#[test]
fn overlap_check_agrees_with_the_definition_on_random_lines() {
    // Event j partially overlaps when some event i starts strictly before it and ends strictly
    // inside it.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    for _ in 0..500 {
        let len = 1 + next(12) as usize;
        let spans: Vec<(i64, i64)> = (0..len)
            .map(|_| (next(40) as i64, next(25) as i64))
            .collect();
        let expected: Vec<usize> = (0..len)
            .filter(|&j| {
                let (sj, ej) = (spans[j].0, spans[j].0 + spans[j].1);
                spans
                    .iter()
                    .any(|&(si, di)| si < sj && sj < si + di && si + di < ej)
            })
            .collect();
        assert_eq!(overlapping(&spans), expected, "{spans:?}");
    }
}

//! The forest on small planes built for each rule.

use profkit_xplane::{PlaneBuilder, XPlane, x_stat};

use crate::preprocess::{SpaceFacts, preprocess_plane};

fn plane(name: &str, build: impl FnOnce(&mut PlaneBuilder<'_>)) -> XPlane {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name(name);
    build(&mut b);
    plane
}

/// The space preprocessed, plane by plane.
fn preprocess(mut planes: Vec<XPlane>) -> (SpaceFacts, Vec<XPlane>) {
    let mut facts = SpaceFacts::default();
    for p in &planes {
        facts.observe(p);
    }
    facts.finish();
    for (i, p) in planes.iter_mut().enumerate() {
        preprocess_plane(p, i, &facts, true);
    }
    (facts, planes)
}

/// The value of the stat named `stat` on the first event named `event`.
fn stat(plane: &XPlane, event: &str, stat: &str) -> Option<x_stat::Value> {
    let metadata = plane.event_metadata.values().find(|m| m.name == event)?.id;
    let stat_id = plane.stat_metadata.values().find(|m| m.name == stat)?.id;
    plane
        .lines
        .iter()
        .flat_map(|l| &l.events)
        .find(|e| e.metadata_id == metadata)?
        .stats
        .iter()
        .find(|s| s.metadata_id == stat_id)?
        .value
        .clone()
}

fn int(v: i64) -> Option<x_stat::Value> {
    Some(x_stat::Value::Int64Value(v))
}

#[test]
fn a_step_root_groups_what_it_nests_and_launches() {
    let host = plane("/host:CPU", |b| {
        let mut line = b.line(1);
        line.add_event("train")
            .set_offset_ps(0)
            .set_duration_ps(100)
            .add_stat("_r", 1i64)
            .add_stat("step_num", 3i64);
        line.add_event("EagerExecute")
            .set_offset_ps(10)
            .set_duration_ps(50)
            .add_stat("is_func", 0i64);
        line.add_event("cudaLaunchKernel")
            .set_offset_ps(20)
            .set_duration_ps(5)
            .add_stat("correlation_id", 7u64);
        line.add_event("outside")
            .set_offset_ps(200)
            .set_duration_ps(5);
    });
    let gpu = plane("/device:GPU:0", |b| {
        b.line(1)
            .add_event("kernel")
            .set_offset_ps(300)
            .set_duration_ps(5)
            .add_stat("correlation_id", 7u64);
    });
    let (facts, planes) = preprocess(vec![host, gpu]);
    let [host, gpu] = planes.as_slice() else {
        panic!("two planes")
    };
    assert_eq!(stat(host, "train", "group_id"), int(0));
    assert_eq!(
        stat(host, "train", "step_name"),
        Some(x_stat::Value::StrValue("train 3".into()))
    );
    assert_eq!(stat(host, "cudaLaunchKernel", "group_id"), int(0));
    assert_eq!(stat(host, "outside", "group_id"), None);
    assert_eq!(stat(gpu, "kernel", "group_id"), int(0));
    assert_eq!(stat(gpu, "kernel", "is_eager"), int(1));
    assert_eq!(
        facts.forest.names.get(&0).map(String::as_str),
        Some("train 3")
    );
    // The GPU plane gets its `Steps` line; nothing is left unreproduced.
    assert!(
        gpu.lines
            .iter()
            .any(|l| l.name == "Steps" && l.events.len() == 1)
    );
    assert!(facts.unreproduced().is_empty());
}

#[test]
fn contexts_link_threads_and_cycles_end() {
    let host = plane("/host:CPU", |b| {
        b.line(1)
            .add_event("step")
            .set_offset_ps(0)
            .set_duration_ps(100)
            .add_stat("_r", 1i64)
            .add_stat("_pt", 1i64)
            .add_stat("_p", 5u64);
        let mut line = b.line(2);
        // Consumes the step's context and produces b's; b and c make a cycle.
        line.add_event("a")
            .set_offset_ps(500)
            .set_duration_ps(10)
            .add_stat("_ct", 1i64)
            .add_stat("_c", 5u64)
            .add_stat("_pt", 2i64)
            .add_stat("_p", 1u64);
        line.add_event("c")
            .set_offset_ps(700)
            .set_duration_ps(10)
            .add_stat("_pt", 2i64)
            .add_stat("_p", 1u64)
            .add_stat("_ct", 2i64)
            .add_stat("_c", 2u64);
        line.add_event("b")
            .set_offset_ps(600)
            .set_duration_ps(10)
            .add_stat("_pt", 2i64)
            .add_stat("_p", 2u64)
            .add_stat("_ct", 2i64)
            .add_stat("_c", 1u64);
        // Async: nested in nothing.
        b.line(3)
            .add_event("async")
            .set_offset_ps(10)
            .set_duration_ps(1)
            .add_stat("_a", 1i64);
    });
    let (_, planes) = preprocess(vec![host]);
    let host = planes.first().expect("one plane");
    assert_eq!(stat(host, "step", "group_id"), int(0));
    assert_eq!(stat(host, "a", "group_id"), int(0));
    assert_eq!(stat(host, "b", "group_id"), int(0));
    assert_eq!(stat(host, "c", "group_id"), int(0));
    assert_eq!(stat(host, "async", "group_id"), None);
}

#[test]
fn regions_span_start_to_every_stop() {
    let host = plane("/host:CPU", |b| {
        let mut line = b.line(1);
        line.add_event("ThreadpoolListener::StopRegion")
            .set_offset_ps(5);
        line.add_event("ThreadpoolListener::StartRegion")
            .set_offset_ps(8);
        line.add_event("ThreadpoolListener::StartRegion")
            .set_offset_ps(10)
            .add_stat("_c", 3u64);
        line.add_event("work").set_offset_ps(12).set_duration_ps(2);
        line.add_event("ThreadpoolListener::StopRegion")
            .set_offset_ps(20);
        line.add_event("ThreadpoolListener::StopRegion")
            .set_offset_ps(30);
    });
    let (facts, planes) = preprocess(vec![host]);
    assert!(facts.unreproduced().is_empty());
    let host = planes.first().expect("one plane");
    let region = host
        .event_metadata
        .values()
        .find(|m| m.name == "ThreadpoolListener::Region")
        .expect("the region metadata")
        .id;
    let spans: Vec<(i64, i64)> = host
        .lines
        .iter()
        .flat_map(|l| &l.events)
        .filter(|e| e.metadata_id == region)
        .map(|e| (e.offset_ps().unwrap_or(-1), e.duration_ps))
        .collect();
    assert_eq!(spans, vec![(10, 20), (10, 10)]);
}

#[test]
fn nodes_stay_small() {
    assert!(std::mem::size_of::<super::Node>() <= 20);
}

#[test]
fn deep_nesting_is_searched_once_per_event() {
    // 100,000 TensorFlow ops each nested in the one before, under an eager `EagerExecute`:
    // each op's search for it takes one step (a walk to the top each would take hours).
    let depth = 100_000_i64;
    let host = plane("/host:CPU", |b| {
        let mut line = b.line(1);
        line.add_event("EagerExecute")
            .set_offset_ps(0)
            .set_duration_ps(depth * 2 + 10)
            .add_stat("is_func", 0i64);
        for k in 0..depth {
            line.add_event("a/MatMul:MatMul")
                .set_offset_ps(k)
                .set_duration_ps(depth * 2 - 2 * k);
        }
    });
    let (_, planes) = preprocess(vec![host]);
    let host = planes.first().expect("one plane");
    let eager = host
        .stat_metadata
        .values()
        .find(|m| m.name == "is_eager")
        .expect("is_eager")
        .id;
    let marked = host
        .lines
        .iter()
        .flat_map(|l| &l.events)
        .filter(|e| {
            e.stats
                .iter()
                .any(|s| s.metadata_id == eager && s.value == int(1))
        })
        .count();
    assert_eq!(marked as i64, depth);
}

#[test]
fn loop_ops_stop_grouping_but_not_regions() {
    let host = plane("/host:CPU", |b| {
        let mut line = b.line(1);
        line.add_event("train")
            .set_offset_ps(0)
            .set_duration_ps(100)
            .add_stat("_r", 1i64);
        line.add_event("WhileOp-EvalCond")
            .set_offset_ps(1)
            .set_duration_ps(1);
    });
    let (facts, planes) = preprocess(vec![host]);
    assert!(!facts.groups());
    let host = planes.first().expect("one plane");
    assert_eq!(stat(host, "train", "group_id"), None);
}

/// A host plane of four threads with every kind of node state the intake keeps: roots (one of a
/// level beyond 16 bits), TF1 loop iterations, graph types, eager executions, launches with
/// their device, async events, and contexts whose types first appear on later threads.
fn threads_plane() -> XPlane {
    plane("/host:CPU", |b| {
        for thread in 0..4i64 {
            let mut line = b.line(thread + 1);
            for step in 0..5i64 {
                let at = step * 10_000 + thread * 3;
                line.add_event("SessionRun")
                    .set_offset_ps(at)
                    .set_duration_ps(9_000)
                    .add_stat("_r", if thread == 2 { 70_000i64 } else { 1 })
                    .add_stat("step_num", step)
                    .add_stat("graph_type", "train");
                line.add_event("ExecutorState::Process")
                    .set_offset_ps(at + 10)
                    .set_duration_ps(800)
                    .add_stat("id", 7i64)
                    .add_stat("iter_num", step);
                line.add_event("EagerExecute")
                    .set_offset_ps(at + 20)
                    .set_duration_ps(500)
                    .add_stat("is_func", thread % 2);
                line.add_event("MatMul:MatMul")
                    .set_offset_ps(at + 30)
                    .set_duration_ps(100);
                line.add_event("cudaLaunchKernel")
                    .set_offset_ps(at + 200)
                    .set_duration_ps(50)
                    .add_stat("correlation_id", step * 4 + thread)
                    .add_stat("device_id", 0i64);
                line.add_event("async")
                    .set_offset_ps(at + 300)
                    .set_duration_ps(5_000)
                    .add_stat("_a", 1i64);
                line.add_event("Produce")
                    .set_offset_ps(at + 900)
                    .set_duration_ps(40)
                    .add_stat("_pt", thread + 1)
                    .add_stat("_p", step);
                line.add_event("Consume")
                    .set_offset_ps(at + 950)
                    .set_duration_ps(40)
                    .add_stat("_ct", (thread + 1) % 4 + 1)
                    .add_stat("_c", step);
            }
        }
    })
}

#[test]
fn lines_taken_in_on_the_pool_make_the_forest_of_lines_taken_in_in_turn() {
    use crate::indexed::IndexedPlane;
    let bytes = profkit_xplane::encode_plane(&threads_plane());
    let split = || {
        let mut indexed = IndexedPlane::from_bytes(bytes.clone().into())
            .unwrap()
            .unwrap();
        indexed.set_origin(0);
        indexed
            .split_lines(&mut std::io::Cursor::new(&bytes))
            .unwrap();
        assert!(indexed.is_split());
        indexed
    };
    let forest = |parallel: bool| {
        let mut plane = split();
        let mut forest = super::Forest::default();
        // A plane before, so that the host plane's nodes do not start at 0.
        forest.add_plane(0, crate::indexed::PlaneRef::Owned(&threads_plane()));
        forest.add_lines_releasing(1, &mut plane, parallel);
        forest
    };
    let one = forest(false);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let many = pool.install(|| forest(true));
    assert_eq!(format!("{one:?}"), format!("{many:?}"));
    let grouped = |mut forest: super::Forest| {
        forest.group();
        assert!(!forest.names.is_empty());
        format!("{forest:?}")
    };
    assert_eq!(grouped(one), grouped(many));
}

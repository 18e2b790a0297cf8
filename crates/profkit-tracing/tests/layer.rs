//! The layer end to end: spans recorded through `tracing`, the XSpace and Chrome JSON written.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::MutexGuard;
use std::task::{Context, Poll, Waker};

use profkit_tracing::{Builder, Capture, Clock, Fields, Format, OPEN_STAT, ProfkitLayer};
use profkit_xplane::{Severity, XPlane, XSpace, x_stat};
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

/// The recorder is one per process: tests take turns.
fn serial() -> MutexGuard<'static, ()> {
    profkit_events::recorder::test_lock()
}

fn dispatch(layer: ProfkitLayer) -> tracing::Dispatch {
    tracing::Dispatch::new(tracing_subscriber::registry().with(layer))
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("profkit-tracing-{}-{name}", std::process::id()))
}

/// An event as the tests look at it.
#[derive(Clone, Debug)]
struct Ev {
    line: String,
    name: String,
    start_ps: i64,
    end_ps: i64,
    stats: HashMap<String, String>,
    flows: Vec<u64>,
}

fn host(space: &XSpace) -> &XPlane {
    let plane = &space.planes[0];
    assert_eq!(plane.name, "/host:CPU");
    plane
}

fn events(space: &XSpace) -> Vec<Ev> {
    let plane = host(space);
    let stat_name = |id: i64| plane.stat_metadata[&id].name.clone();
    let mut out = Vec::new();
    for line in &plane.lines {
        for event in &line.events {
            let start_ps = line.timestamp_ns * 1000 + event.offset_ps().unwrap_or(0);
            let mut stats = HashMap::new();
            let mut flows = Vec::new();
            for stat in &event.stats {
                let name = stat_name(stat.metadata_id);
                let value = match stat.value.clone() {
                    Some(x_stat::Value::Int64Value(v)) => format!("i{v}"),
                    Some(x_stat::Value::Uint64Value(v)) => {
                        if name == "flow" {
                            flows.push(v);
                        }
                        format!("u{v}")
                    }
                    Some(x_stat::Value::DoubleValue(v)) => format!("f{v}"),
                    Some(x_stat::Value::StrValue(v)) => v,
                    other => format!("{other:?}"),
                };
                stats.insert(name, value);
            }
            out.push(Ev {
                line: line.name.clone(),
                name: plane.event_metadata[&event.metadata_id].name.clone(),
                start_ps,
                end_ps: start_ps + event.duration_ps,
                stats,
                flows,
            });
        }
    }
    out
}

fn no_errors(space: &XSpace) {
    let errors: Vec<_> = profkit_xplane::validate(space)
        .into_iter()
        .filter(|p| p.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

fn within(inner: &Ev, outer: &Ev) -> bool {
    outer.start_ps <= inner.start_ps && inner.end_ps <= outer.end_ps
}

#[test]
fn nested_spans_on_several_threads_with_typed_fields() {
    let _serial = serial();
    let (layer, guard) = Builder::new().build().unwrap();
    let dispatch = dispatch(layer);
    std::thread::scope(|s| {
        for worker in 0..3u64 {
            let dispatch = dispatch.clone();
            std::thread::Builder::new()
                .name(format!("worker {worker}"))
                .spawn_scoped(s, move || {
                    tracing::dispatcher::with_default(&dispatch, || {
                        let _outer =
                            tracing::info_span!("outer", worker, ratio = 0.5, ok = true, who = "w")
                                .entered();
                        let _inner = tracing::info_span!("inner", n = -3i64).entered();
                    })
                })
                .unwrap();
        }
    });
    let capture = guard.finish().unwrap();
    let space = capture.to_xspace();
    no_errors(&space);
    let all = events(&space);
    for worker in 0..3u64 {
        let line = format!("worker {worker}");
        let mine: Vec<&Ev> = all.iter().filter(|e| e.line == line).collect();
        assert_eq!(mine.len(), 2, "{mine:?}");
        let outer = mine.iter().find(|e| e.name == "outer").unwrap();
        let inner = mine.iter().find(|e| e.name == "inner").unwrap();
        assert!(within(inner, outer));
        assert_eq!(outer.stats["worker"], format!("u{worker}"));
        assert_eq!(outer.stats["ratio"], "f0.5");
        assert_eq!(outer.stats["ok"], "true");
        assert_eq!(outer.stats["who"], "w");
        assert_eq!(inner.stats["n"], "i-3");
    }
    // The Task Environment plane keeps the session's start.
    assert_eq!(space.planes[1].name, "Task Environment");
}

/// A future that is pending once.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

/// Polls `task` once on a new thread named `name`, as an executor's worker would.
fn poll_on<F: Future + Send>(
    name: &str,
    dispatch: &tracing::Dispatch,
    task: Pin<&mut F>,
) -> Poll<F::Output>
where
    F::Output: Send,
{
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn_scoped(s, move || {
                tracing::dispatcher::with_default(dispatch, || {
                    task.poll(&mut Context::from_waker(Waker::noop()))
                })
            })
            .unwrap()
            .join()
            .unwrap()
    })
}

#[test]
fn an_async_task_polled_on_two_threads_is_a_span_on_each() {
    let _serial = serial();
    let (layer, guard) = Builder::new().build().unwrap();
    let dispatch = dispatch(layer);
    let task = tracing::dispatcher::with_default(&dispatch, || {
        async {
            let _child = tracing::info_span!("before_yield").entered();
            drop(_child);
            YieldOnce(false).await;
            let _after = tracing::info_span!("after_yield").entered();
        }
        .instrument(tracing::info_span!("task", id = 7))
    });
    let mut task = Box::pin(task);
    assert!(poll_on("first", &dispatch, task.as_mut()).is_pending());
    assert!(poll_on("second", &dispatch, task.as_mut()).is_ready());
    let capture = guard.finish().unwrap();
    let all = events(&capture.to_xspace());
    let on = |line: &str| -> Vec<String> {
        all.iter()
            .filter(|e| e.line == line)
            .map(|e| e.name.clone())
            .collect()
    };
    assert_eq!(on("first"), ["task", "before_yield"]);
    assert_eq!(on("second"), ["task", "after_yield"]);
    // Both polls are the same span: its fields on each.
    assert!(
        all.iter()
            .filter(|e| e.name == "task")
            .all(|e| e.stats["id"] == "i7")
    );
}

#[test]
fn spans_open_at_the_end_end_there_marked() {
    let _serial = serial();
    let (layer, guard) = Builder::new().build().unwrap();
    let dispatch = dispatch(layer);
    let _default = tracing::dispatcher::set_default(&dispatch);
    let _closed = tracing::info_span!("closed").entered();
    drop(_closed);
    let _open = tracing::info_span!("open").entered();
    let capture = guard.finish().unwrap();
    drop(_open);
    let all = events(&capture.to_xspace());
    let open = all.iter().find(|e| e.name == "open").unwrap();
    assert_eq!(open.stats[OPEN_STAT], "true");
    let closed = all.iter().find(|e| e.name == "closed").unwrap();
    assert!(!closed.stats.contains_key(OPEN_STAT));
    assert!(open.end_ps >= open.start_ps);
}

#[test]
fn events_inside_and_outside_spans_are_instants_with_fields() {
    let _serial = serial();
    let (layer, guard) = Builder::new().build().unwrap();
    tracing::dispatcher::with_default(&dispatch(layer), || {
        tracing::info!(answer = 42u64, "outside");
        let _s = tracing::info_span!("span").entered();
        tracing::warn!(bad = "yes", "inside");
    });
    let capture = guard.finish().unwrap();
    let all = events(&capture.to_xspace());
    let outside = all.iter().find(|e| e.name == "outside").unwrap();
    assert_eq!(outside.start_ps, outside.end_ps);
    assert_eq!(outside.stats["answer"], "u42");
    let inside = all.iter().find(|e| e.name == "inside").unwrap();
    let span = all.iter().find(|e| e.name == "span").unwrap();
    assert!(within(inside, span));
    assert_eq!(inside.stats["bad"], "yes");
}

#[test]
fn follows_from_is_a_flow_between_the_spans() {
    let _serial = serial();
    let (layer, guard) = Builder::new().build().unwrap();
    tracing::dispatcher::with_default(&dispatch(layer), || {
        let cause = tracing::info_span!("cause");
        cause.in_scope(|| {});
        let effect = tracing::info_span!("effect");
        effect.follows_from(&cause);
        effect.in_scope(|| {});
    });
    let capture = guard.finish().unwrap();
    let space = capture.to_xspace();
    no_errors(&space);
    let all = events(&space);
    let cause = all.iter().find(|e| e.name == "cause").unwrap();
    let effect = all.iter().find(|e| e.name == "effect").unwrap();
    let decode = |v: u64| profkit_xplane::flow::Flow::decode(v);
    let (out, into) = (decode(cause.flows[0]), decode(effect.flows[0]));
    assert_eq!(out.id, into.id);
    assert_eq!(
        (out.direction, into.direction),
        (profkit_xplane::flow::OUT, profkit_xplane::flow::IN)
    );
}

#[test]
fn the_memory_cap_drops_and_counts_never_panics() {
    let _serial = serial();
    let cap = profkit_events::recorder::BLOCK_BYTES + 4096;
    let (layer, guard) = Builder::new().max_bytes(cap).build().unwrap();
    tracing::dispatcher::with_default(&dispatch(layer), || {
        for i in 0..10_000u64 {
            let _s = tracing::info_span!("span", i, text = "some text to keep").entered();
        }
    });
    let capture: Capture = guard.finish().unwrap();
    assert!(capture.dropped_events() > 0);
    assert!(capture.dropped_fields > 0);
    let space = capture.to_xspace();
    no_errors(&space);
    let env = &space.planes[1];
    let names: Vec<&str> = env
        .stats
        .iter()
        .map(|s| env.stat_metadata[&s.metadata_id].name.as_str())
        .collect();
    assert!(names.contains(&"dropped_events"), "{names:?}");
    // What was kept is whole spans: each push that fitted has its pop, or is marked open.
    assert!(events(&space).len() < 10_000);
}

#[test]
fn a_subscriber_dropped_without_flush_still_writes_on_the_guards_drop() {
    let _serial = serial();
    let out = temp("dropped.xplane.pb");
    {
        let (layer, _guard) = Builder::new().file(&out).build().unwrap();
        let dispatch = dispatch(layer);
        tracing::dispatcher::with_default(&dispatch, || {
            let _s = tracing::info_span!("kept").entered();
        });
        drop(dispatch);
        // The guard goes out of scope here, without flush or finish.
    }
    let space = profkit_xplane::read_file(&out, Default::default()).unwrap();
    std::fs::remove_file(&out).ok();
    assert!(events(&space).iter().any(|e| e.name == "kept"));
    // The recorder is off again: a new session can start.
    assert!(!profkit_events::recorder::is_enabled());
}

#[test]
fn flush_writes_so_far_and_a_span_across_it_is_whole_at_the_end() {
    let _serial = serial();
    let out = temp("flush.xplane.pb");
    let (layer, guard) = Builder::new().file(&out).build().unwrap();
    let dispatch = dispatch(layer);
    let _default = tracing::dispatcher::set_default(&dispatch);
    let across = tracing::info_span!("across").entered();
    tracing::info_span!("before").in_scope(|| {});
    guard.flush().unwrap();
    let first = events(&profkit_xplane::read_file(&out, Default::default()).unwrap());
    assert!(first.iter().any(|e| e.name == "before"));
    assert_eq!(
        first.iter().find(|e| e.name == "across").unwrap().stats[OPEN_STAT],
        "true"
    );
    tracing::info_span!("after").in_scope(|| {});
    drop(across);
    guard.finish().unwrap();
    let second = events(&profkit_xplane::read_file(&out, Default::default()).unwrap());
    std::fs::remove_file(&out).ok();
    let across = second.iter().find(|e| e.name == "across").unwrap();
    assert!(!across.stats.contains_key(OPEN_STAT));
    let after = second.iter().find(|e| e.name == "after").unwrap();
    assert!(within(after, across));
    assert!(second.iter().any(|e| e.name == "before"));
}

#[test]
fn only_the_fields_asked_for_become_stats() {
    let _serial = serial();
    let (layer, guard) = Builder::new()
        .fields(Fields::Only(vec!["keep".into()]))
        .build()
        .unwrap();
    tracing::dispatcher::with_default(&dispatch(layer), || {
        let _s = tracing::info_span!("span", keep = 1, skip = 2).entered();
        tracing::info!(skip = 3, "still named by its message");
    });
    let all = events(&guard.finish().unwrap().to_xspace());
    let span = all.iter().find(|e| e.name == "span").unwrap();
    assert!(span.stats.contains_key("keep"));
    assert!(!span.stats.contains_key("skip"));
    let event = all
        .iter()
        .find(|e| e.name == "still named by its message")
        .unwrap();
    assert!(event.stats.is_empty());
}

/// The `Task Environment` plane's `profile_start_time`: the session's start since the epoch.
fn profile_start_ns(space: &XSpace) -> i64 {
    let env = space
        .planes
        .iter()
        .find(|p| p.name == "Task Environment")
        .unwrap();
    let stat = env
        .stats
        .iter()
        .find(|s| {
            env.stat_metadata
                .get(&s.metadata_id)
                .is_some_and(|m| m.name == "profile_start_time")
        })
        .unwrap();
    match &stat.value {
        Some(x_stat::Value::Uint64Value(v)) => i64::try_from(*v).unwrap(),
        Some(x_stat::Value::Int64Value(v)) => *v,
        other => panic!("profile_start_time is {other:?}"),
    }
}

#[test]
fn the_clock_decides_whether_times_count_from_the_start_or_the_epoch() {
    let _serial = serial();
    let (layer, guard) = Builder::new().build().unwrap();
    tracing::dispatcher::with_default(&dispatch(layer), || {
        let _outer = tracing::info_span!("outer").entered();
        let _inner = tracing::info_span!("inner").entered();
    });
    let capture = guard.finish().unwrap();
    let monotonic = capture.to_xspace_on(Clock::Monotonic);
    let unix = capture.to_xspace_on(Clock::Unix);
    assert_eq!(capture.to_xspace(), monotonic, "the default clock");
    let start = profile_start_ns(&monotonic);
    assert_eq!(profile_start_ns(&unix), start);
    // After 2001-09-09 (10^18 ns since the epoch): a wall-clock time, not a counter's.
    assert!(start > 1_000_000_000_000_000_000, "{start}");
    // The same events, the same offsets; each line's timestamp moved by the session's start.
    let (m, u) = (host(&monotonic), host(&unix));
    assert_eq!(m.lines.len(), u.lines.len());
    for (ml, ul) in m.lines.iter().zip(&u.lines) {
        assert_eq!(ul.timestamp_ns, ml.timestamp_ns + start, "{}", ml.name);
        assert_eq!(ml.events, ul.events);
    }
    assert!(m.lines.iter().all(|l| l.timestamp_ns < start));
}

#[test]
fn the_unix_clock_is_refused_for_files_whose_times_are_session_relative() {
    let _serial = serial();
    for name in ["unix.json", "unix.xplane.pb"] {
        let out = temp(name);
        let refused = Builder::new().file(&out).clock(Clock::Unix).build();
        let message = refused.map(|_| ()).unwrap_err().to_string();
        assert!(message.contains("Parquet"), "{message}");
        assert!(!out.exists());
    }
    // No session was started: the next one starts.
    let (_layer, guard) = Builder::new().build().unwrap();
    guard.finish().unwrap();
}

#[test]
fn chrome_json_has_the_spans_fields_and_flows() {
    let _serial = serial();
    let out = temp("trace.json");
    let (layer, guard) = Builder::new().file(&out).build().unwrap();
    tracing::dispatcher::with_default(&dispatch(layer), || {
        let cause = tracing::info_span!("cause", n = 1);
        cause.in_scope(|| {});
        let effect = tracing::info_span!("effect");
        effect.follows_from(&cause);
        effect.in_scope(|| {});
    });
    guard.finish().unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).ok();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let cause = events.iter().find(|e| e["name"] == "cause").unwrap();
    assert_eq!(cause["ph"], "X");
    assert_eq!(cause["args"]["n"], 1);
    let phases: Vec<&str> = events.iter().filter_map(|e| e["ph"].as_str()).collect();
    assert!(phases.contains(&"s") && phases.contains(&"f"), "{phases:?}");
    // The Trace Event Format's own rules, as `profkit validate` checks them.
    let import = profkit_chrome::read_chrome(text.as_bytes()).unwrap();
    let check = import.check_source(text.as_bytes());
    assert!(check.errors.is_empty(), "{:?}", check.errors);
}

#[test]
fn the_gated_layer_sees_nothing_while_the_recorder_is_off() {
    let _serial = serial();
    let subscriber = tracing_subscriber::registry().with(ProfkitLayer::new().gated());
    tracing::subscriber::with_default(subscriber, || {
        // Off: the span is not even created.
        assert!(tracing::info_span!("off").is_disabled());
        profkit_tracing::start(1 << 20).unwrap();
        let on = tracing::info_span!("on");
        assert!(!on.is_disabled());
        on.in_scope(|| {});
        let capture = profkit_tracing::stop().unwrap();
        assert!(events(&capture.to_xspace()).iter().any(|e| e.name == "on"));
    });
}

#[test]
fn formats_follow_the_file_name() {
    assert_eq!(Format::of_path("a/b.xplane.pb".as_ref()), Format::XSpace);
    assert_eq!(Format::of_path("t.json".as_ref()), Format::Chrome);
    assert_eq!(Format::of_path("dataset".as_ref()), Format::Parquet);
    #[cfg(not(feature = "parquet"))]
    assert!(Builder::new().file("dataset").build().is_err());
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_output_is_a_host_partition() {
    let _serial = serial();
    let root = temp("dataset");
    let (layer, guard) = Builder::new().file(&root).host("worker0").build().unwrap();
    tracing::dispatcher::with_default(&dispatch(layer), || {
        let _s = tracing::info_span!("span", n = 1).entered();
    });
    guard.finish().unwrap();
    let events = root.join("host=worker0/table=events/part-0.parquet");
    let exists = events.exists();
    std::fs::remove_dir_all(&root).ok();
    assert!(exists, "{}", events.display());
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_output_takes_the_unix_clock() {
    let _serial = serial();
    let root = temp("dataset-unix");
    let (layer, guard) = Builder::new()
        .file(&root)
        .host("worker0")
        .clock(Clock::Unix)
        .build()
        .unwrap();
    tracing::dispatcher::with_default(&dispatch(layer), || {
        let _s = tracing::info_span!("span", n = 1).entered();
    });
    guard.finish().unwrap();
    let lines = root.join("host=worker0/table=lines/part-0.parquet");
    let exists = lines.exists();
    std::fs::remove_dir_all(&root).ok();
    assert!(exists, "{}", lines.display());
}

#[test]
fn a_second_session_is_refused_and_leaves_the_first_whole() {
    let _serial = serial();
    let (layer, guard) = Builder::new().build().unwrap();
    let dispatch = dispatch(layer);
    tracing::dispatcher::with_default(&dispatch, || {
        let _s = tracing::info_span!("first", kept = 1).entered();
    });
    assert!(Builder::new().build().is_err());
    assert!(profkit_tracing::start(1 << 20).is_err());
    let all = events(&guard.finish().unwrap().to_xspace());
    let first = all.iter().find(|e| e.name == "first").unwrap();
    assert_eq!(first.stats["kept"], "i1");
}

#[cfg(target_os = "linux")]
#[test]
fn lines_are_named_and_numbered_as_the_operating_system_knows_the_threads() {
    let _serial = serial();
    let (layer, guard) = Builder::new().build().unwrap();
    let dispatch = dispatch(layer);
    let tid = std::thread::Builder::new()
        .name("numbered".into())
        .spawn(move || {
            tracing::dispatcher::with_default(&dispatch, || {
                tracing::info_span!("span").in_scope(|| {});
            });
            let link = std::fs::read_link("/proc/thread-self").unwrap();
            link.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .parse::<i64>()
                .unwrap()
        })
        .unwrap()
        .join()
        .unwrap();
    let space = guard.finish().unwrap().to_xspace();
    let line = host(&space)
        .lines
        .iter()
        .find(|l| l.name == "numbered")
        .unwrap();
    assert_eq!(line.id, tid);
    // The thread's id mark is not an event of its own.
    assert_eq!(line.events.len(), 1);
}

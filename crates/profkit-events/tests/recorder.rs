//! The recorder: sessions, nesting, threads (running and exited), the memory cap, device timing.
//! The recorder is one per process, so every test takes `test_lock()` first.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use profkit_events::recorder::{
    self, BLOCK_EVENTS, CpuTimer, DeviceTimer, RecordEvent, RecorderConfig, test_lock,
};
use profkit_events::report::{Report, ReportOptions};
use profkit_events::{EventKind, ProfilerState, Recording, pair, record_event};

fn names(recording: &Recording, thread: usize) -> Vec<(EventKind, String)> {
    recording.threads[thread]
        .events
        .iter()
        .map(|e| (e.kind, e.name.to_string()))
        .collect()
}

fn session(config: RecorderConfig, body: impl FnOnce()) -> Recording {
    recorder::enable(config).unwrap();
    body();
    recorder::disable().unwrap()
}

#[test]
fn nothing_is_recorded_while_disabled() {
    let _lock = test_lock();
    assert_eq!(recorder::state(), ProfilerState::Disabled);
    let guard = record_event!("off");
    assert!(!guard.is_active());
    drop(guard);
    recorder::mark("off");
    let recording = session(RecorderConfig::default(), || {});
    let events = names(&recording, 0);
    assert_eq!(
        events,
        [
            (EventKind::Mark, "_start_profiler_".into()),
            (EventKind::Mark, "_stop_profiler_".into())
        ]
    );
}

#[test]
fn nested_guards_pair_into_paths() {
    let _lock = test_lock();
    let recording = session(RecorderConfig::default(), || {
        for i in 0..3 {
            let _step = record_event!("step");
            {
                let _fwd = RecordEvent::new("forward");
                let _op = RecordEvent::new(format!("op{}", i % 2));
            }
            recorder::mark("checkpoint");
        }
    });
    assert_eq!(recording.state, Some(ProfilerState::Cpu));
    assert_eq!(recording.dropped, 0);
    let spans = pair(&recording.threads);
    let thread = &spans.threads[0];
    assert!(thread.warnings.is_empty());
    let paths: Vec<String> = thread
        .spans
        .iter()
        .map(|s| spans.paths.text(s.path))
        .collect();
    assert_eq!(
        &paths[..3],
        ["step/forward/op0", "step/forward", "step"],
        "pop order"
    );
    assert_eq!(paths.len(), 9);
    // Timestamps are wall-clock nanoseconds and never go back on a thread.
    let events = &recording.threads[0].events;
    assert!(events.windows(2).all(|w| w[0].cpu_ns <= w[1].cpu_ns));
    assert!(events[0].cpu_ns > 1_600_000_000_000_000_000);
    let text = Report::new(&recording, ReportOptions::default()).text();
    let step = format!("thread{}::step ", recording.threads[0].thread);
    assert!(text.contains(&step), "{text}");
    assert!(text.contains("\n  forward "), "{text}");
    assert!(text.contains("\n    op0 "), "{text}");
}

#[test]
fn threads_that_exited_are_kept_and_listed_by_index() {
    let _lock = test_lock();
    let recording = session(RecorderConfig::default(), || {
        let _main = record_event!("main");
        let handles: Vec<_> = (0..4)
            .map(|i| {
                std::thread::Builder::new()
                    .name(format!("worker-{i}"))
                    .spawn(move || {
                        for _ in 0..(1000 + i) {
                            let _work = record_event!("work");
                        }
                    })
                    .unwrap()
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
    assert_eq!(recording.threads.len(), 5);
    let mut sizes: Vec<usize> = recording.threads[1..]
        .iter()
        .map(|t| t.events.len())
        .collect();
    sizes.sort();
    assert_eq!(sizes, [2000, 2002, 2004, 2006]);
    assert!(
        recording
            .threads
            .windows(2)
            .all(|w| w[0].thread < w[1].thread)
    );
    for t in &recording.threads[1..] {
        assert!(t.name.as_deref().unwrap().starts_with("worker-"));
        assert!(t.events.iter().all(|e| e.thread == t.thread));
    }
    let spans = pair(&recording.threads);
    assert_eq!(spans.warnings().count(), 0);
}

#[test]
fn a_live_threads_events_are_collected_while_it_waits() {
    let _lock = test_lock();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    recorder::enable(RecorderConfig::default()).unwrap();
    let handle = std::thread::spawn(move || {
        {
            let _a = record_event!("before-disable");
        }
        ready_tx.send(()).unwrap();
        rx.recv().unwrap();
    });
    ready_rx.recv().unwrap();
    let recording = recorder::disable().unwrap();
    tx.send(()).unwrap();
    handle.join().unwrap();
    assert_eq!(recording.threads.len(), 2);
    assert_eq!(
        names(&recording, 1),
        [
            (EventKind::PushRange, "before-disable".into()),
            (EventKind::PopRange, "before-disable".into())
        ]
    );
}

#[test]
fn events_span_many_blocks_in_order() {
    let _lock = test_lock();
    let n = BLOCK_EVENTS * 3 + 17;
    let recording = session(RecorderConfig::default(), || {
        for i in 0..n {
            recorder::mark(if i % 2 == 0 { "even" } else { "odd" });
        }
    });
    let events = &recording.threads[0].events;
    assert_eq!(events.len(), n + 2);
    for (i, e) in events[1..=n].iter().enumerate() {
        assert_eq!(&*e.name, if i % 2 == 0 { "even" } else { "odd" });
    }
}

#[test]
fn the_cap_drops_and_counts() {
    let _lock = test_lock();
    // Two blocks: the rest of a long loop is dropped and counted.
    let config = RecorderConfig::default().max_bytes(2 * recorder::BLOCK_BYTES);
    let total = BLOCK_EVENTS * 5;
    let recording = session(config, || {
        for _ in 0..total / 2 {
            let _e = record_event!("e");
        }
    });
    let kept = recording.event_count() as u64;
    assert_eq!(kept, 2 * BLOCK_EVENTS as u64);
    // Start mark + the loop + stop mark, all either kept or counted.
    assert_eq!(kept + recording.dropped, total as u64 + 2);
    // The next session starts afresh.
    let recording = session(RecorderConfig::default(), || {
        let _e = record_event!("e");
    });
    assert_eq!(recording.dropped, 0);
    assert_eq!(recording.event_count(), 4);
}

#[test]
fn owned_names_count_against_the_cap() {
    let _lock = test_lock();
    let config = RecorderConfig::default().max_bytes(recorder::BLOCK_BYTES + 1000);
    let recording = session(config, || {
        for i in 0..100 {
            recorder::mark(format!("unique name number {i}"));
        }
    });
    assert!(recording.dropped > 0);
    assert_eq!(recording.event_count() as u64 + recording.dropped, 102);
}

#[test]
fn guards_do_not_pop_into_a_later_session() {
    let _lock = test_lock();
    recorder::enable(RecorderConfig::default()).unwrap();
    let guard = record_event!("open across sessions");
    let first = recorder::disable().unwrap();
    recorder::enable(RecorderConfig::default()).unwrap();
    drop(guard);
    let second = recorder::disable().unwrap();
    let spans = pair(&first.threads);
    assert_eq!(spans.warnings().count(), 1, "the push is left open");
    assert_eq!(second.event_count(), 2, "only the two marks");
}

#[test]
fn enable_and_disable_check_the_state() {
    let _lock = test_lock();
    assert!(recorder::disable().is_err());
    assert!(recorder::enable(RecorderConfig::default().state(ProfilerState::Disabled)).is_err());
    recorder::enable(RecorderConfig::default()).unwrap();
    assert!(recorder::is_enabled());
    assert!(recorder::enable(RecorderConfig::default()).is_err());
    recorder::disable().unwrap();
    assert!(!recorder::is_enabled());
}

/// A timer whose timestamps are 1000, 2000, 3000, ... and resolve to ten times that.
struct Counting(AtomicU64);

impl DeviceTimer for Counting {
    fn device(&self) -> u32 {
        3
    }
    fn timestamp(&self) -> u64 {
        self.0.fetch_add(1000, Ordering::Relaxed) + 1000
    }
    fn resolve(&self, token: u64) -> Option<u64> {
        Some(token * 10)
    }
}

#[test]
fn device_timestamps_come_from_the_timer() {
    let _lock = test_lock();
    let config = RecorderConfig::default()
        .state(ProfilerState::All)
        .device_timer(Counting(AtomicU64::new(0)));
    let recording = session(config, || {
        let _a = record_event!("kernel");
    });
    let devices: Vec<Option<(u32, u64)>> = recording.threads[0]
        .events
        .iter()
        .map(|e| e.device.map(|d| (d.device, d.ns)))
        .collect();
    assert_eq!(
        devices,
        [
            Some((3, 10_000)),
            Some((3, 20_000)),
            Some((3, 30_000)),
            Some((3, 40_000))
        ]
    );
    let spans = pair(&recording.threads);
    assert_eq!(spans.threads[0].spans[0].device_ms(), 0.01);
    // The report of an All session shows the device time.
    let text = Report::new(&recording, ReportOptions::default()).text();
    assert!(text.contains("Place: All"), "{text}");
    assert!(text.contains("0.010000 ("), "{text}");

    // The CPU state takes no device timestamps even with a timer.
    let config = RecorderConfig::default().device_timer(CpuTimer::default());
    let recording = session(config, || {
        let _a = record_event!("kernel");
    });
    assert!(
        recording.threads[0]
            .events
            .iter()
            .all(|e| e.device.is_none())
    );

    // The CPU timer's timestamps increase.
    let config = RecorderConfig {
        state: ProfilerState::Device,
        device_timer: Some(Arc::new(CpuTimer::new(1))),
        ..RecorderConfig::default()
    };
    let recording = session(config, || {
        let _a = record_event!("kernel");
    });
    let ns: Vec<u64> = recording.threads[0]
        .events
        .iter()
        .map(|e| e.device.unwrap().ns)
        .collect();
    assert!(ns.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(recording.threads[0].events[0].device.unwrap().device, 1);
}

#[test]
fn raw_push_and_pop_and_static_names() {
    let _lock = test_lock();
    let name: &'static str = "dynamic static";
    let recording = session(RecorderConfig::default(), || {
        recorder::push_range("outer");
        recorder::push_range(name);
        recorder::pop_range(String::from("dynamic static"));
        recorder::pop_range("outer");
        recorder::pop_range("never pushed");
    });
    let spans = pair(&recording.threads);
    let t = &spans.threads[0];
    assert_eq!(t.spans.len(), 2);
    assert_eq!(spans.paths.text(t.spans[0].path), "outer/dynamic static");
    assert_eq!(t.warnings.len(), 1);
    // Static names are not copied.
    assert!(matches!(
        recording.threads[0].events[1].name,
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn tagged_events_give_their_tag_back_and_others_none() {
    let _lock = test_lock();
    let recording = session(RecorderConfig::default(), || {
        recorder::push_range_tagged("span", 1 << 63);
        recorder::mark_tagged("event", 7);
        recorder::pop_range("span");
        recorder::mark("plain");
    });
    let tags: Vec<(&str, Option<u64>)> = recording.threads[0]
        .events
        .iter()
        .map(|e| (&*e.name, e.tag))
        .collect();
    assert_eq!(
        tags,
        [
            ("_start_profiler_", None),
            ("span", Some(1 << 63)),
            ("event", Some(7)),
            ("span", None),
            ("plain", None),
            ("_stop_profiler_", None),
        ]
    );
}

#[test]
fn charge_takes_from_the_cap_and_refuses_past_it() {
    let _lock = test_lock();
    // Off: nothing to charge.
    assert!(!recorder::charge(1));
    recorder::enable(RecorderConfig::default().max_bytes(recorder::BLOCK_BYTES + 100)).unwrap();
    assert!(recorder::charge(100));
    assert!(!recorder::charge(recorder::BLOCK_BYTES + 1));
    // The rest is one block: the events of this thread still fit in it.
    recorder::mark("fits");
    let recording = recorder::disable().unwrap();
    assert_eq!(recording.dropped, 0);
    assert!(recording.threads[0].events.iter().any(|e| e.name == "fits"));
}

//! The recorder's cost per span, next to fastrace and to `tracing` with `tracing-chrome`, in one
//! binary and one run.
//!
//! A span is one range opened and closed with each library's idiom for a named scope:
//! - profkit: `let _s = record_event!("span");` (a push and a pop, each a time-stamp counter read
//!   and three atomic stores into the thread's block);
//! - fastrace: `let _s = LocalSpan::enter_with_local_parent("span");` under a root span, with a
//!   reporter that discards what it gets;
//! - tracing: `let _s = tracing::info_span!("span").entered();` with the registry and a
//!   `tracing-chrome` layer writing its trace to `std::io::sink()`.
//!
//! Enabled: each library recording (profkit's recorder on, fastrace's root set as local parent,
//! the chrome subscriber installed), with one thread and with two threads at once (each timing
//! its own loop; the figure is the slower thread's time per span). Disabled: profkit's recorder
//! off, fastrace without a local parent, `tracing` without a subscriber.
//!
//! Only the loop of spans is timed. What each library does once per batch of spans outside it is
//! not: profkit's `enable`/`disable` (a batch is at most 1M spans, within the default memory cap),
//! fastrace's root span creation and drop (which hands the batch's spans to its collector thread;
//! batches of 1,000 spans), tracing's subscriber installation. `tracing-chrome` sends every span
//! through a channel to its writer thread inside the loop, and that is timed.
//!
//! `cargo bench -p profkit-events --bench recorder` runs it (about a minute) and prints a table of
//! nanoseconds per span; docs/performance.md records the figures. Without `--bench` (as under
//! `cargo test --benches`) it runs each case briefly as a smoke test.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::Criterion;
use fastrace::collector::{Config, Reporter, SpanRecord};
use fastrace::prelude::*;
use profkit_events::record_event;
use profkit_events::recorder::{self, RecorderConfig};
use tracing_subscriber::layer::SubscriberExt;

/// Spans per profkit session (2M events, 48 MB: within the default cap).
const PROFKIT_BATCH: u64 = 1_000_000;
/// Spans per fastrace root.
const FASTRACE_BATCH: u64 = 1_000;

struct Discard;

impl Reporter for Discard {
    fn report(&mut self, spans: Vec<SpanRecord>) {
        black_box(spans);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lib {
    Profkit,
    Fastrace,
    Tracing,
}

impl Lib {
    fn name(self) -> &'static str {
        match self {
            Lib::Profkit => "profkit",
            Lib::Fastrace => "fastrace",
            Lib::Tracing => "tracing-chrome",
        }
    }
}

fn chrome_dispatch() -> (tracing::Dispatch, tracing_chrome::FlushGuard) {
    let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new()
        .writer(std::io::sink())
        .include_args(false)
        .build();
    let subscriber = tracing_subscriber::registry().with(layer);
    (tracing::Dispatch::new(subscriber), guard)
}

/// Times `n` spans of `lib` on this thread, with recording on or off.
fn spans(lib: Lib, n: u64, enabled: bool) -> Duration {
    let mut elapsed = Duration::ZERO;
    let mut left = n;
    while left > 0 {
        match lib {
            Lib::Profkit => {
                let batch = left.min(PROFKIT_BATCH);
                let start = Instant::now();
                for _ in 0..batch {
                    let _s = record_event!("span");
                }
                elapsed += start.elapsed();
                left -= batch;
            }
            Lib::Fastrace => {
                let batch = left.min(FASTRACE_BATCH);
                let root = enabled.then(|| Span::root("root", SpanContext::random()));
                let guard = root.as_ref().map(|r| r.set_local_parent());
                let start = Instant::now();
                for _ in 0..batch {
                    let _s = LocalSpan::enter_with_local_parent("span");
                }
                elapsed += start.elapsed();
                drop(guard);
                drop(root);
                left -= batch;
            }
            Lib::Tracing => {
                let start = Instant::now();
                for _ in 0..left {
                    let _s = tracing::info_span!("span").entered();
                }
                elapsed += start.elapsed();
                left = 0;
            }
        }
    }
    elapsed
}

/// Sets up `lib` for one measurement, runs `body`, tears down.
fn with_lib<T>(lib: Lib, enabled: bool, body: impl FnOnce() -> T) -> T {
    match (lib, enabled) {
        (Lib::Profkit, true) => {
            let _ = recorder::disable();
            recorder::enable(RecorderConfig::default()).expect("enable");
            let out = body();
            let recording = recorder::disable().expect("disable");
            assert_eq!(recording.dropped, 0, "the bench must stay within the cap");
            black_box(recording);
            out
        }
        (Lib::Tracing, true) => {
            let (dispatch, guard) = chrome_dispatch();
            let out = tracing::dispatcher::with_default(&dispatch, body);
            drop(guard);
            out
        }
        _ => body(),
    }
}

/// One thread: `iters` spans.
fn one_thread(lib: Lib, enabled: bool, iters: u64) -> Duration {
    let mut elapsed = Duration::ZERO;
    let mut left = iters;
    // profkit collects per session; keep each within the cap.
    while left > 0 {
        let batch = if lib == Lib::Profkit {
            left.min(PROFKIT_BATCH)
        } else {
            left
        };
        elapsed += with_lib(lib, enabled, || spans(lib, batch, enabled));
        left -= batch;
    }
    elapsed
}

/// Two threads at once, `iters` spans each; the slower thread's time.
fn two_threads(lib: Lib, iters: u64) -> Duration {
    let mut elapsed = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let batch = if lib == Lib::Profkit {
            left.min(PROFKIT_BATCH / 2)
        } else {
            left
        };
        let barrier = Barrier::new(2);
        let chrome = (lib == Lib::Tracing).then(chrome_dispatch);
        let dispatch = chrome.as_ref().map(|(d, _)| d.clone());
        let run = || {
            barrier.wait();
            spans(lib, batch, true)
        };
        let times = with_lib(
            if lib == Lib::Tracing {
                Lib::Fastrace
            } else {
                lib
            },
            lib == Lib::Profkit,
            || {
                std::thread::scope(|s| {
                    let handles: Vec<_> = (0..2)
                        .map(|_| {
                            s.spawn(|| match &dispatch {
                                Some(d) => tracing::dispatcher::with_default(d, run),
                                None => run(),
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("bench thread"))
                        .collect::<Vec<_>>()
                })
            },
        );
        drop(dispatch);
        drop(chrome);
        elapsed += times.into_iter().max().unwrap_or_default();
        left -= batch;
    }
    elapsed
}

fn main() {
    fastrace::set_reporter(Discard, Config::default());
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let libs = [Lib::Profkit, Lib::Fastrace, Lib::Tracing];
    if !bench_mode {
        // Smoke test: every case runs and records what it should.
        for lib in libs {
            one_thread(lib, true, 2_000);
            one_thread(lib, false, 2_000);
            two_threads(lib, 2_000);
        }
        recorder::enable(RecorderConfig::default()).expect("enable");
        spans(Lib::Profkit, 10, true);
        let recording = recorder::disable().expect("disable");
        assert_eq!(recording.event_count(), 22);
        println!("recorder bench: smoke test passed (run with --bench to measure)");
        return;
    }

    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let mut results: Vec<(String, &'static str, f64)> = Vec::new();
    for (case, label) in [
        ("enabled_1_thread", "enabled, 1 thread"),
        ("enabled_2_threads", "enabled, 2 threads"),
        ("disabled", "disabled"),
    ] {
        let mut group = c.benchmark_group(format!("recorder/{case}"));
        for lib in libs {
            group.bench_function(lib.name(), |b| {
                b.iter_custom(|iters| match case {
                    "enabled_1_thread" => one_thread(lib, true, iters),
                    "enabled_2_threads" => two_threads(lib, iters),
                    _ => one_thread(lib, false, iters),
                })
            });
        }
        group.finish();
        // A direct figure for the table: the best of five runs of 2M spans.
        for lib in libs {
            let n = 2_000_000u64;
            let best = (0..5)
                .map(|_| match case {
                    "enabled_1_thread" => one_thread(lib, true, n),
                    "enabled_2_threads" => two_threads(lib, n),
                    _ => one_thread(lib, false, n),
                })
                .min()
                .unwrap_or_default();
            results.push((
                lib.name().to_owned(),
                label,
                best.as_secs_f64() * 1e9 / n as f64,
            ));
        }
    }
    c.final_summary();
    println!("\nns per span (best of 5 runs of 2,000,000 spans; two threads: the slower one)");
    println!("| library | enabled, 1 thread | enabled, 2 threads | disabled |");
    println!("|---|---|---|---|");
    for lib in libs {
        let cell = |label: &str| {
            results
                .iter()
                .find(|(l, c, _)| l == lib.name() && *c == label)
                .map_or("-".to_owned(), |(_, _, ns)| format!("{ns:.2}"))
        };
        println!(
            "| {} | {} | {} | {} |",
            lib.name(),
            cell("enabled, 1 thread"),
            cell("enabled, 2 threads"),
            cell("disabled")
        );
    }
}

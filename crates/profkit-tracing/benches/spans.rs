//! What a `tracing` span costs with profkit-tracing's layer, next to `tracing-chrome` and
//! `tracing-perfetto` (the other layers that write a profile) and to fastrace's own API (the
//! floor: no `tracing` at all), in one binary and one run.
//!
//! A span is `let _s = tracing::info_span!("span").entered();` (fastrace:
//! `LocalSpan::enter_with_local_parent("span")` under a root span): its creation, enter, exit and
//! close. Each `tracing` layer sits on the registry, installed with `dispatcher::with_default`:
//! - profkit-tracing: `ProfkitLayer` gated (`ProfkitLayer::gated`, as the builder's docs
//!   recommend when it is the only layer) with the recorder on (sessions of at most 1M spans,
//!   started and stopped outside the timed loop);
//! - tracing-chrome: its `ChromeLayer` writing to `std::io::sink()` (its writer thread gets every
//!   span through a channel inside the loop);
//! - tracing-perfetto: its `PerfettoLayer` writing to `std::io::sink()`;
//! - fastrace: a reporter that discards; roots of 1,000 spans, made and dropped outside the loop.
//!
//! Disabled: profkit-tracing's gated layer with the recorder off, as the process's global
//! default (what a program installs once) and as a scoped default (`with_default`, which makes
//! `tracing` look the dispatcher up per span); fastrace without a local parent.
//!
//! `cargo bench -p profkit-tracing --bench spans` runs it (about three minutes) and prints a table
//! of nanoseconds per span; docs/performance.md records the figures. Without `--bench` (as under
//! `cargo test --benches`) it runs each case briefly as a smoke test.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::Criterion;
use fastrace::collector::{Config, Reporter, SpanRecord};
use fastrace::prelude::*;
use profkit_tracing::ProfkitLayer;
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
    Chrome,
    Perfetto,
    Fastrace,
}

const LIBS: [Lib; 4] = [Lib::Profkit, Lib::Chrome, Lib::Perfetto, Lib::Fastrace];

impl Lib {
    fn name(self) -> &'static str {
        match self {
            Lib::Profkit => "profkit-tracing",
            Lib::Chrome => "tracing-chrome",
            Lib::Perfetto => "tracing-perfetto",
            Lib::Fastrace => "fastrace",
        }
    }

    /// Spans per setup.
    fn batch(self, left: u64) -> u64 {
        match self {
            Lib::Profkit => left.min(PROFKIT_BATCH),
            _ => left,
        }
    }
}

/// The dispatcher of a `tracing` layer, and what must live as long as it.
fn dispatch(lib: Lib) -> Option<(tracing::Dispatch, Option<tracing_chrome::FlushGuard>)> {
    let registry = tracing_subscriber::registry();
    match lib {
        Lib::Profkit => Some((
            tracing::Dispatch::new(registry.with(ProfkitLayer::new().gated())),
            None,
        )),
        Lib::Chrome => {
            let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new()
                .writer(std::io::sink())
                .include_args(false)
                .build();
            Some((tracing::Dispatch::new(registry.with(layer)), Some(guard)))
        }
        Lib::Perfetto => {
            let layer =
                tracing_perfetto::PerfettoLayer::new(std::io::sink as fn() -> std::io::Sink);
            Some((tracing::Dispatch::new(registry.with(layer)), None))
        }
        Lib::Fastrace => None,
    }
}

/// Times `n` spans on this thread (the library set up by the caller).
fn spans(lib: Lib, n: u64, enabled: bool) -> Duration {
    match lib {
        Lib::Fastrace => {
            let mut elapsed = Duration::ZERO;
            let mut left = n;
            while left > 0 {
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
            elapsed
        }
        _ => {
            let start = Instant::now();
            for _ in 0..n {
                let _s = tracing::info_span!("span").entered();
            }
            start.elapsed()
        }
    }
}

/// Runs `body` with profkit's session on (if `lib` is profkit and `on`).
fn session<T>(lib: Lib, on: bool, body: impl FnOnce() -> T) -> T {
    if lib == Lib::Profkit && on {
        let _ = profkit_tracing::stop();
        profkit_tracing::start(profkit_tracing::DEFAULT_MAX_BYTES).expect("start");
        let out = body();
        let capture = profkit_tracing::stop().expect("stop");
        assert_eq!(
            capture.dropped_events(),
            0,
            "the bench must stay within the cap"
        );
        black_box(capture);
        out
    } else {
        body()
    }
}

/// One thread, `iters` spans, recording.
fn one_thread(lib: Lib, iters: u64) -> Duration {
    let setup = dispatch(lib);
    let mut elapsed = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let batch = lib.batch(left);
        elapsed += session(lib, true, || match &setup {
            Some((d, _)) => tracing::dispatcher::with_default(d, || spans(lib, batch, true)),
            None => spans(lib, batch, true),
        });
        left -= batch;
    }
    elapsed
}

/// Two threads at once, `iters` spans each; the slower thread's time.
fn two_threads(lib: Lib, iters: u64) -> Duration {
    let setup = dispatch(lib);
    let dispatcher = setup.as_ref().map(|(d, _)| d.clone());
    let mut elapsed = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let batch = if lib == Lib::Profkit {
            left.min(PROFKIT_BATCH / 2)
        } else {
            left
        };
        let barrier = Barrier::new(2);
        let run = || {
            barrier.wait();
            spans(lib, batch, true)
        };
        let times = session(lib, true, || {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..2)
                    .map(|_| {
                        s.spawn(|| match &dispatcher {
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
        });
        elapsed += times.into_iter().max().unwrap_or_default();
        left -= batch;
    }
    elapsed
}

/// Disabled cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Off {
    /// profkit-tracing's gated layer the global default, the recorder off.
    ProfkitGlobal,
    /// The same layer as a scoped default.
    ProfkitScoped,
    /// fastrace without a local parent.
    Fastrace,
}

const OFFS: [Off; 3] = [Off::ProfkitGlobal, Off::ProfkitScoped, Off::Fastrace];

impl Off {
    fn name(self) -> &'static str {
        match self {
            Off::ProfkitGlobal => "profkit-tracing (global default)",
            Off::ProfkitScoped => "profkit-tracing (with_default)",
            Off::Fastrace => "fastrace",
        }
    }
}

fn disabled(off: Off, iters: u64) -> Duration {
    match off {
        // The global default is installed once in main.
        Off::ProfkitGlobal => spans(Lib::Profkit, iters, false),
        Off::ProfkitScoped => {
            let (d, _) = dispatch(Lib::Profkit).expect("profkit dispatch");
            tracing::dispatcher::with_default(&d, || spans(Lib::Profkit, iters, false))
        }
        Off::Fastrace => spans(Lib::Fastrace, iters, false),
    }
}

fn main() {
    fastrace::set_reporter(Discard, Config::default());
    let (global, _) = dispatch(Lib::Profkit).expect("profkit dispatch");
    tracing::dispatcher::set_global_default(global).expect("global default");
    let bench_mode = std::env::args().any(|a| a == "--bench");
    if !bench_mode {
        // Smoke test: every case runs, and the layer records what it should.
        for lib in LIBS {
            one_thread(lib, 2_000);
            two_threads(lib, 2_000);
        }
        for off in OFFS {
            disabled(off, 2_000);
        }
        let (d, _) = dispatch(Lib::Profkit).expect("profkit dispatch");
        profkit_tracing::start(profkit_tracing::DEFAULT_MAX_BYTES).expect("start");
        tracing::dispatcher::with_default(&d, || spans(Lib::Profkit, 10, true));
        let capture = profkit_tracing::stop().expect("stop");
        // 10 pushes and pops, and the session's two marks.
        assert_eq!(capture.recording.event_count(), 22);
        println!("spans bench: smoke test passed (run with --bench to measure)");
        return;
    }

    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let mut results: Vec<(&'static str, &'static str, f64)> = Vec::new();
    let n = 500_000u64;
    for (case, label) in [
        ("enabled_1_thread", "enabled, 1 thread"),
        ("enabled_2_threads", "enabled, 2 threads"),
    ] {
        let mut group = c.benchmark_group(format!("spans/{case}"));
        for lib in LIBS {
            group.bench_function(lib.name(), |b| {
                b.iter_custom(|iters| match case {
                    "enabled_1_thread" => one_thread(lib, iters),
                    _ => two_threads(lib, iters),
                })
            });
        }
        group.finish();
        // A direct figure for the table: the best of five runs of 500k spans.
        for lib in LIBS {
            let best = (0..5)
                .map(|_| match case {
                    "enabled_1_thread" => one_thread(lib, n),
                    _ => two_threads(lib, n),
                })
                .min()
                .unwrap_or_default();
            results.push((lib.name(), label, best.as_secs_f64() * 1e9 / n as f64));
        }
    }
    let mut group = c.benchmark_group("spans/disabled");
    for off in OFFS {
        group.bench_function(off.name(), |b| b.iter_custom(|iters| disabled(off, iters)));
    }
    group.finish();
    for off in OFFS {
        let best = (0..5).map(|_| disabled(off, n)).min().unwrap_or_default();
        results.push((off.name(), "disabled", best.as_secs_f64() * 1e9 / n as f64));
    }
    c.final_summary();
    println!("\nns per span (best of 5 runs of 500,000 spans; two threads: the slower one)");
    println!("| library | enabled, 1 thread | enabled, 2 threads |");
    println!("|---|---|---|");
    let cell = |name: &str, label: &str| {
        results
            .iter()
            .find(|(l, c, _)| *l == name && *c == label)
            .map_or("-".to_owned(), |(_, _, ns)| format!("{ns:.2}"))
    };
    for lib in LIBS {
        println!(
            "| {} | {} | {} |",
            lib.name(),
            cell(lib.name(), "enabled, 1 thread"),
            cell(lib.name(), "enabled, 2 threads")
        );
    }
    println!("\n| disabled | ns per span |");
    println!("|---|---|");
    for off in OFFS {
        println!("| {} | {} |", off.name(), cell(off.name(), "disabled"));
    }
}

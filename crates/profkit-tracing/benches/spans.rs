//! What a `tracing` span costs with profkit-tracing's layer, next to `tracing-chrome` and
//! `tracing-perfetto` (the other layers that write a profile) and to fastrace's own API (the
//! floor: no `tracing` at all), in one binary and one run.
//!
//! A span is `let _s = tracing::info_span!("span").entered();` (fastrace:
//! `LocalSpan::enter_with_local_parent("span")` under a root span): its creation, enter, exit and
//! close. Each library runs in a process of its own (the bench runs itself once per library), so
//! that each `tracing` layer is installed as a program installs it, the global default
//! (`set_global_default`, on the registry), and none pays for another's dispatcher:
//! - profkit-tracing: `ProfkitLayer::gated()` (as the crate recommends for a layer that is alone)
//!   with a session on (`profkit_tracing::start`; sessions of at most 1M spans, started and
//!   stopped outside the timed loop);
//! - tracing-chrome: its `ChromeLayer` writing to `std::io::sink()` (its writer thread gets every
//!   span through a channel inside the loop);
//! - tracing-perfetto: its `PerfettoLayer` writing to `std::io::sink()`;
//! - fastrace: a reporter that discards; roots of 1,000 spans, made and dropped outside the loop.
//!
//! Disabled: profkit-tracing's gated layer with no session; fastrace without a local parent;
//! and, as the floor of any `tracing` layer, `tracing` in a process with no subscriber at all
//! (tracing-chrome and tracing-perfetto have no off switch).
//!
//! `cargo bench -p profkit-tracing --bench spans` runs it (about two minutes) and prints a table
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
    /// `tracing` with no subscriber at all: the floor of a disabled `tracing` span.
    Bare,
}

const LIBS: [Lib; 5] = [
    Lib::Profkit,
    Lib::Chrome,
    Lib::Perfetto,
    Lib::Fastrace,
    Lib::Bare,
];

impl Lib {
    fn name(self) -> &'static str {
        match self {
            Lib::Profkit => "profkit-tracing",
            Lib::Chrome => "tracing-chrome",
            Lib::Perfetto => "tracing-perfetto",
            Lib::Fastrace => "fastrace",
            Lib::Bare => "tracing (no subscriber)",
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
        Lib::Fastrace | Lib::Bare => None,
    }
}

/// Times `n` spans on this thread.
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

/// Runs `body` within a profkit session (if `lib` is profkit and `on`).
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

/// One thread, `iters` spans.
fn one_thread(lib: Lib, iters: u64, enabled: bool) -> Duration {
    let mut elapsed = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let batch = lib.batch(left);
        elapsed += session(lib, enabled, || spans(lib, batch, enabled));
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
        let run = || {
            barrier.wait();
            spans(lib, batch, true)
        };
        let times = session(lib, true, || {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..2).map(|_| s.spawn(run)).collect();
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

const CASES: [(&str, &str); 3] = [
    ("enabled_1_thread", "enabled, 1 thread"),
    ("enabled_2_threads", "enabled, 2 threads"),
    ("disabled", "disabled"),
];

fn measure(lib: Lib, case: &str, iters: u64) -> Duration {
    match case {
        "enabled_1_thread" => one_thread(lib, iters, true),
        "enabled_2_threads" => two_threads(lib, iters),
        _ => one_thread(lib, iters, false),
    }
}

/// Whether `lib` has an off switch to measure.
fn has_off(lib: Lib) -> bool {
    matches!(lib, Lib::Profkit | Lib::Fastrace | Lib::Bare)
}

/// Whether `lib` records anything.
fn has_on(lib: Lib) -> bool {
    lib != Lib::Bare
}

const CHILD: &str = "PROFKIT_TRACING_BENCH_LIB";

/// One library, in a process of its own: its layer the global default.
fn child(lib: Lib, bench_mode: bool) {
    fastrace::set_reporter(Discard, Config::default());
    let setup = dispatch(lib);
    if let Some((d, _)) = &setup {
        tracing::dispatcher::set_global_default(d.clone()).expect("global default");
    }
    let cases: Vec<_> = CASES
        .iter()
        .filter(|(case, _)| {
            if *case == "disabled" {
                has_off(lib)
            } else {
                has_on(lib)
            }
        })
        .collect();
    if !bench_mode {
        for (case, _) in &cases {
            measure(lib, case, 2_000);
        }
        if lib == Lib::Profkit {
            profkit_tracing::start(profkit_tracing::DEFAULT_MAX_BYTES).expect("start");
            spans(lib, 10, true);
            let capture = profkit_tracing::stop().expect("stop");
            let pushes = capture.recording.threads[0]
                .events
                .iter()
                .filter(|e| e.kind == profkit_events::EventKind::PushRange)
                .count();
            assert_eq!(pushes, 10);
            // Off, the gated layer turns spans away before they are made.
            assert!(tracing::info_span!("off").is_disabled());
        }
        return;
    }
    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let n = 500_000u64;
    for (case, label) in cases {
        let mut group = c.benchmark_group(format!("spans/{case}"));
        group.bench_function(lib.name(), |b| {
            b.iter_custom(|iters| measure(lib, case, iters))
        });
        group.finish();
        // A direct figure for the table: the best of five runs of 500k spans.
        let best = (0..5)
            .map(|_| measure(lib, case, n))
            .min()
            .unwrap_or_default();
        println!(
            "RESULT\t{}\t{label}\t{:.2}",
            lib.name(),
            best.as_secs_f64() * 1e9 / n as f64
        );
    }
    c.final_summary();
}

fn main() {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    if let Ok(name) = std::env::var(CHILD) {
        let lib = LIBS
            .into_iter()
            .find(|l| l.name() == name)
            .expect("a library of the bench");
        child(lib, bench_mode);
        return;
    }
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut results: Vec<(String, String, String)> = Vec::new();
    for lib in LIBS {
        let out = std::process::Command::new(&exe)
            .args(std::env::args().skip(1))
            .env(CHILD, lib.name())
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("the bench's child");
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            match line.strip_prefix("RESULT\t") {
                Some(result) => {
                    let mut parts = result.split('\t').map(str::to_owned);
                    if let (Some(l), Some(c), Some(ns)) = (parts.next(), parts.next(), parts.next())
                    {
                        results.push((l, c, ns));
                    }
                }
                None => println!("{line}"),
            }
        }
        assert!(out.status.success(), "{} failed", lib.name());
    }
    if !bench_mode {
        println!("spans bench: smoke test passed (run with --bench to measure)");
        return;
    }
    println!("\nns per span (best of 5 runs of 500,000 spans; two threads: the slower one)");
    println!("| library | enabled, 1 thread | enabled, 2 threads | disabled |");
    println!("|---|---|---|---|");
    for lib in LIBS {
        let cell = |label: &str| {
            results
                .iter()
                .find(|(l, c, _)| l == lib.name() && c == label)
                .map_or("-".to_owned(), |(_, _, ns)| ns.clone())
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

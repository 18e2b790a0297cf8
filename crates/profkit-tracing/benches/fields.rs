//! What a `tracing` span with fields costs with profkit-tracing's layer, next to `tracing-chrome`
//! and `tracing-perfetto` keeping the same fields and fastrace's own API with the same two
//! properties, in one binary and one run (a bench of its own so that the span loops of
//! `benches/spans.rs` are compiled as they are measured there).
//!
//! A span is `let _s = tracing::info_span!("span", i, kind = "batch").entered();` (an integer that
//! changes and a string) on one thread; fastrace:
//! `LocalSpan::enter_with_local_parent("span").with_properties(|| [("i", i.to_string()), ("kind",
//! "batch".to_owned())])` under a root span. Each `tracing` layer sits on the registry, installed
//! with `dispatcher::with_default`: profkit-tracing's `ProfkitLayer` with a session on (sessions
//! of at most 200,000 spans, started and stopped outside the timed loop); tracing-chrome with args,
//! writing to `std::io::sink()`; tracing-perfetto with debug annotations (its fields), writing to
//! `std::io::sink()`; fastrace with a reporter that discards.
//!
//! `cargo bench -p profkit-tracing --bench fields` runs it (about a minute) and prints a table of
//! nanoseconds per span; docs/performance.md records the figures. Without `--bench` (as under
//! `cargo test --benches`) it runs each case briefly as a smoke test.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use fastrace::collector::{Config, Reporter, SpanRecord};
use fastrace::prelude::*;
use profkit_tracing::ProfkitLayer;
use tracing_subscriber::layer::SubscriberExt;

/// Spans per profkit session (their fields kept: about 50 MB).
const PROFKIT_BATCH: u64 = 200_000;
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
}

/// The dispatcher of a `tracing` layer, and what must live as long as it.
fn dispatch(lib: Lib) -> Option<(tracing::Dispatch, Option<tracing_chrome::FlushGuard>)> {
    let registry = tracing_subscriber::registry();
    match lib {
        Lib::Profkit => Some((
            tracing::Dispatch::new(registry.with(ProfkitLayer::new())),
            None,
        )),
        Lib::Chrome => {
            let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new()
                .writer(std::io::sink())
                .include_args(true)
                .build();
            Some((tracing::Dispatch::new(registry.with(layer)), Some(guard)))
        }
        Lib::Perfetto => {
            let layer =
                tracing_perfetto::PerfettoLayer::new(std::io::sink as fn() -> std::io::Sink)
                    .with_debug_annotations(true);
            Some((tracing::Dispatch::new(registry.with(layer)), None))
        }
        Lib::Fastrace => None,
    }
}

/// Times `n` spans with fields on this thread, `lib` recording.
fn spans(lib: Lib, n: u64) -> Duration {
    match lib {
        Lib::Fastrace => {
            let mut elapsed = Duration::ZERO;
            let mut left = n;
            while left > 0 {
                let batch = left.min(FASTRACE_BATCH);
                let root = Span::root("root", SpanContext::random());
                let guard = root.set_local_parent();
                let start = Instant::now();
                for i in 0..batch {
                    let _s = LocalSpan::enter_with_local_parent("span")
                        .with_properties(|| [("i", i.to_string()), ("kind", "batch".to_owned())]);
                }
                elapsed += start.elapsed();
                drop(guard);
                drop(root);
                left -= batch;
            }
            elapsed
        }
        Lib::Profkit => {
            let mut elapsed = Duration::ZERO;
            let mut left = n;
            while left > 0 {
                let batch = left.min(PROFKIT_BATCH);
                let _ = profkit_tracing::stop();
                profkit_tracing::start(profkit_tracing::DEFAULT_MAX_BYTES).expect("start");
                elapsed += tracing_spans(batch);
                let capture = profkit_tracing::stop().expect("stop");
                assert_eq!(capture.dropped_events() + capture.dropped_fields, 0);
                black_box(capture);
                left -= batch;
            }
            elapsed
        }
        _ => tracing_spans(n),
    }
}

fn tracing_spans(n: u64) -> Duration {
    let start = Instant::now();
    for i in 0..n {
        let _s = tracing::info_span!("span", i, kind = "batch").entered();
    }
    start.elapsed()
}

/// `iters` spans of `lib`, set up and torn down around them.
fn measure(lib: Lib, iters: u64) -> Duration {
    match dispatch(lib) {
        Some((d, guard)) => {
            let out = tracing::dispatcher::with_default(&d, || spans(lib, iters));
            drop(guard);
            out
        }
        None => spans(lib, iters),
    }
}

fn main() {
    fastrace::set_reporter(Discard, Config::default());
    let bench_mode = std::env::args().any(|a| a == "--bench");
    if !bench_mode {
        for lib in LIBS {
            measure(lib, 2_000);
        }
        profkit_tracing::start(profkit_tracing::DEFAULT_MAX_BYTES).expect("start");
        let (d, _) = dispatch(Lib::Profkit).expect("profkit dispatch");
        tracing::dispatcher::with_default(&d, || tracing_spans(10));
        let capture = profkit_tracing::stop().expect("stop");
        // Every span's two fields are kept.
        assert_eq!(capture.infos.len(), 10);
        assert!(capture.infos.values().all(|i| i.fields.len() == 2));
        println!("fields bench: smoke test passed (run with --bench to measure)");
        return;
    }
    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let mut group = c.benchmark_group("spans/with_2_fields");
    for lib in LIBS {
        group.bench_function(lib.name(), |b| b.iter_custom(|iters| measure(lib, iters)));
    }
    group.finish();
    let n = 200_000u64;
    let mut rows = Vec::new();
    for lib in LIBS {
        let best = (0..5).map(|_| measure(lib, n)).min().unwrap_or_default();
        rows.push((lib.name(), best.as_secs_f64() * 1e9 / n as f64));
    }
    c.final_summary();
    println!("\nns per span with two fields (best of 5 runs of 200,000 spans, one thread)");
    println!("| library | ns per span |");
    println!("|---|---|");
    for (name, ns) in rows {
        println!("| {name} | {ns:.2} |");
    }
}

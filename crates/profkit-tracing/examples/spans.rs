//! A few threads of nested spans with fields, recorded with profkit-tracing and written to OUT
//! (`.xplane.pb` for an XSpace that TensorBoard and xprof open, `.json` for Chrome trace JSON that
//! Perfetto and `chrome://tracing` load):
//!
//! ```sh
//! cargo run --release -p profkit-tracing --example spans -- OUT
//! ```

use std::time::Duration;

use tracing::{info, info_span};
use tracing_subscriber::layer::SubscriberExt;

fn work(micros: u64) {
    let until = std::time::Instant::now() + Duration::from_micros(micros);
    while std::time::Instant::now() < until {
        std::hint::black_box(0);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: spans OUT  (OUT ending in .xplane.pb or .json)");
        std::process::exit(2);
    };
    let (layer, guard) = profkit_tracing::Builder::new().file(&out).build()?;
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;

    let load = info_span!("load", files = 3).entered();
    for file in 0..3 {
        let _read = info_span!("read", file, bytes = 4096 * (file + 1)).entered();
        work(200);
    }
    let loaded = load.exit();

    std::thread::scope(|s| {
        for worker in 0..3u32 {
            let loaded = &loaded;
            let spawned = std::thread::Builder::new()
                .name(format!("worker {worker}"))
                .spawn_scoped(s, move || {
                    for step in 0..4u32 {
                        let span = info_span!("step", worker, step, lr = 0.01);
                        span.follows_from(loaded);
                        let _step = span.entered();
                        {
                            let _f = info_span!("forward", layers = 12).entered();
                            work(300);
                        }
                        {
                            let _b = info_span!("backward", kind = "sgd").entered();
                            work(500);
                        }
                        info!(loss = 1.0 / f64::from(step + 1), "step done");
                    }
                });
            if let Err(e) = spawned {
                eprintln!("no worker thread: {e}");
            }
        }
    });

    let capture = guard.finish()?;
    eprintln!(
        "wrote {out}: {} events on {} threads, {} dropped",
        capture.recording.event_count(),
        capture.recording.threads.len(),
        capture.dropped_events()
    );
    Ok(())
}

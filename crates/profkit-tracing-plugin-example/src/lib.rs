//! An example TensorFlow profiler plugin that puts a Rust library's `tracing` spans into
//! TensorFlow's own profile, through profkit-tracing.
//!
//! A Rust library loaded into a TensorFlow process (a data loader, a tokenizer, a PyO3
//! extension) instruments itself with `tracing`, and installs [`profkit_tracing::ProfkitLayer`]
//! as its subscriber. Built as a profiler plugin (`TF_PLUGGABLE_DEVICE_LIBRARY_PATH` pointing at
//! this library), its [`SpanCollector`] starts profkit-tracing's session when TensorFlow's
//! profiler starts (`tf.profiler.experimental.start`), stops it when TensorFlow's stops, and hands
//! TensorFlow the spans as a plane named [`PLANE_NAME`], `/host:CPU`, as TensorFlow's own host
//! threads are: a line per thread of the library, an event per span entered, fields as stats,
//! times since the Unix epoch (which TensorFlow rebases to its session's start). TensorBoard and
//! xprof then show the library's threads beside TensorFlow's.
//!
//! The library here is a stand-in: [`start_library`] (which the plugin calls when TensorFlow
//! first profiles) installs the subscriber and starts a thread, `rust-loader`, that loads
//! batches every few milliseconds in `load_batch` spans (fields `batch` and `bytes`) with a
//! `decode` span inside.
//!
//! ```
//! use profkit_plugin::plugin::Profiler;
//! use profkit_tracing_plugin_example::{PLANE_NAME, SpanCollector};
//!
//! let mut collector = SpanCollector::new()?;
//! collector.start()?;
//! std::thread::sleep(std::time::Duration::from_millis(50));
//! collector.stop()?;
//! let space = collector.collect()?.expect("the loader ran");
//! assert_eq!(space.planes[0].name, PLANE_NAME);
//! # Ok::<(), profkit_plugin::Error>(())
//! ```

#![forbid(unsafe_code)]

use std::sync::OnceLock;
use std::time::Duration;

use profkit_plugin::abi::Code;
use profkit_plugin::plugin::Profiler;
use profkit_plugin::{Error, Result, XSpace};
use profkit_tracing::{Capture, ProfkitLayer};
use tracing_subscriber::layer::SubscriberExt;

/// The plane the plugin hands over: TensorFlow's host plane.
pub const PLANE_NAME: &str = "/host:CPU";

/// The most memory a session may take (events and fields).
const MAX_BYTES: usize = 64 << 20;

/// Installs the library's subscriber (the profkit layer, gated: nothing is recorded, and spans
/// cost a nanosecond or two, while TensorFlow is not profiling) and starts its loader thread;
/// once per process.
pub fn start_library() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let subscriber = tracing_subscriber::registry().with(ProfkitLayer::new().gated());
        // A process whose subscriber is set elsewhere keeps it; the loader then records nothing.
        let _ = tracing::subscriber::set_global_default(subscriber);
        let _ = std::thread::Builder::new()
            .name("rust-loader".into())
            .spawn(loader);
    });
}

/// The stand-in library's work: a batch every 5 ms, forever.
fn loader() {
    for batch in 0u64.. {
        let bytes = 4096 * (1 + batch % 4);
        let _load = tracing::info_span!("load_batch", batch, bytes).entered();
        {
            let _decode = tracing::info_span!("decode").entered();
            busy(Duration::from_micros(300));
        }
        tracing::info!(batch, "batch ready");
        drop(_load);
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn busy(d: Duration) {
    let until = std::time::Instant::now() + d;
    while std::time::Instant::now() < until {
        std::hint::black_box(0u64);
    }
}

/// The plugin's profiler: profkit-tracing's session between `start` and `stop`.
#[derive(Debug, Default)]
pub struct SpanCollector {
    running: bool,
    finished: Option<Capture>,
}

impl Profiler for SpanCollector {
    const DEVICE_TYPE: &'static str = "PROFKIT_TRACING";

    fn new() -> Result<Self> {
        start_library();
        Ok(SpanCollector::default())
    }

    fn start(&mut self) -> Result<()> {
        self.finished = None;
        if self.running {
            return Ok(());
        }
        profkit_tracing::start(MAX_BYTES).map_err(|e| {
            Error::status(Code::FAILED_PRECONDITION, format!("profkit-tracing: {e}"))
        })?;
        self.running = true;
        Ok(())
    }

    fn stop(&mut self) -> Result<()> {
        if !std::mem::take(&mut self.running) {
            return Ok(());
        }
        let capture = profkit_tracing::stop()
            .map_err(|e| Error::status(Code::INTERNAL, format!("profkit-tracing: {e}")))?;
        self.finished = Some(capture);
        Ok(())
    }

    fn collect(&mut self) -> Result<Option<XSpace>> {
        let Some(capture) = self.finished.take() else {
            return Ok(None);
        };
        let plane = capture.host_plane_absolute();
        if plane.lines.is_empty() {
            return Ok(None);
        }
        Ok(Some(XSpace {
            planes: vec![plane],
            ..XSpace::default()
        }))
    }
}

impl Drop for SpanCollector {
    fn drop(&mut self) {
        if self.running {
            let _ = profkit_tracing::stop();
        }
    }
}

profkit_plugin::export_profiler!(SpanCollector);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sessions_each_hold_the_loaders_spans_in_epoch_time() {
        let mut collector = SpanCollector::new().unwrap();
        for _ in 0..2 {
            collector.start().unwrap();
            std::thread::sleep(Duration::from_millis(40));
            collector.stop().unwrap();
            let space = collector.collect().unwrap().expect("spans");
            let plane = &space.planes[0];
            let line = plane
                .lines
                .iter()
                .find(|l| l.name == "rust-loader")
                .expect("the loader's line");
            assert!(line.timestamp_ns > 1_600_000_000_000_000_000);
            let names: Vec<&str> = line
                .events
                .iter()
                .map(|e| plane.event_metadata[&e.metadata_id].name.as_str())
                .collect();
            assert!(
                names.contains(&"load_batch") && names.contains(&"decode"),
                "{names:?}"
            );
            assert!(collector.collect().unwrap().is_none(), "collected once");
        }
    }
}

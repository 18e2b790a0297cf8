//! Any Rust program's `tracing` spans as a profile TensorBoard, xprof and Perfetto open.
//!
//! [`ProfkitLayer`] is a `tracing_subscriber::Layer` that records spans with profkit's recorder
//! ([`profkit_events::recorder`]): entering a span on a thread is a push on that thread, exiting
//! it the pop, at a time-stamp counter read and a few stores each, without allocating or taking a
//! lock; the recorder's memory cap bounds what a session keeps (events past it are counted as
//! dropped) and its off switch makes every callback one relaxed atomic load (and, for a layer
//! that is alone and [`ProfkitLayer::gated`], turns spans away before `tracing` makes them). A
//! span's fields and
//! the fields of `tracing`'s events are kept beside the events, typed, and become stats;
//! `follows_from` links become flows; threads are lines named after the thread (or its first
//! span). [`Builder`] starts a session and gives the layer and a [`FlushGuard`] that writes, on
//! [`FlushGuard::flush`] or when dropped, one of:
//!
//! - an XSpace (`.xplane.pb`): the host plane `/host:CPU` as TensorFlow writes it, which
//!   TensorBoard's profile plugin and xprof open (see [`Capture::to_xspace`] for the layout);
//! - Chrome trace JSON (`.json`), for Perfetto and `chrome://tracing`: the XSpace as
//!   `profkit_xprof::trace_viewer` writes it in the Trace Event Format's own layout (flows as
//!   flow events, numbers as numbers), the same events xprof's trace viewer shows;
//! - with the `parquet` feature, a Parquet host partition (a directory) as profkit-arrow writes
//!   one.
//!
//! Times are on the session's own monotonic clock, counted from its start ([`Clock::Monotonic`],
//! the default, the start kept as the XSpace's `profile_start_time`), or, for a Parquet output,
//! on the wall clock since the Unix epoch ([`Clock::Unix`], as TensorFlow's host plane holds
//! them): [`Builder::clock`].
//!
//! A TensorFlow profiler plugin (built with profkit-plugin) can instead drive the session with
//! [`start`] and [`stop`] and hand [`Capture::host_plane_absolute`] to TensorFlow, so that a Rust
//! library loaded into a TensorFlow process shows its spans in TensorFlow's own profile.
//!
//! ```
//! use tracing_subscriber::layer::SubscriberExt;
//! # let _serial = profkit_events::recorder::test_lock();
//! let out = std::env::temp_dir().join(format!("doc-{}.xplane.pb", std::process::id()));
//! let (layer, guard) = profkit_tracing::Builder::new().file(&out).build()?;
//! let subscriber = tracing_subscriber::registry().with(layer);
//! tracing::subscriber::with_default(subscriber, || {
//!     let _step = tracing::info_span!("step", number = 1).entered();
//!     tracing::info!(loss = 0.25, "step done");
//! });
//! let capture = guard.finish()?; // writes `out`; dropping the guard would too
//! let space = capture.to_xspace();
//! assert_eq!(space.planes[0].name, "/host:CPU");
//! # std::fs::remove_file(&out).ok();
//! # Ok::<(), profkit_tracing::Error>(())
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod capture;
mod error;
mod fields;
mod layer;
mod store;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use profkit_events::recorder::{self, RecorderConfig};

pub use capture::{Capture, Clock, DROPPED_EVENTS_STAT, DROPPED_FIELDS_STAT, OPEN_STAT};
pub use error::{Error, Result};
pub use fields::{Fields, Value};
pub use layer::ProfkitLayer;
pub use profkit_events::recorder::DEFAULT_MAX_BYTES;
pub use store::{Info, SpanKey};

/// What to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// An XSpace, `.xplane.pb`.
    XSpace,
    /// Chrome trace JSON in the Trace Event Format's layout, `.json`.
    Chrome,
    /// A Parquet host partition: the output is the dataset's root directory (feature `parquet`).
    Parquet,
}

impl Format {
    /// The format a path's name asks for: `.json` Chrome, `.parquet` (or a name without an
    /// extension) Parquet, anything else an XSpace.
    pub fn of_path(path: &Path) -> Format {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".json") {
            Format::Chrome
        } else if name.ends_with(".parquet") || !name.contains('.') {
            Format::Parquet
        } else {
            Format::XSpace
        }
    }
}

/// Starts a recording session: the recorder on with a cap of `max_bytes` (events, names and the
/// layer's fields together), the layer's store emptied. Fails if the recorder is already on.
pub fn start(max_bytes: usize) -> Result<()> {
    // The recorder first: if a session is running, its store is left alone.
    recorder::enable(RecorderConfig::default().max_bytes(max_bytes))?;
    store::reset();
    // Gated layers' call sites were off: have `tracing` ask them again.
    tracing_core::callsite::rebuild_interest_cache();
    Ok(())
}

/// Ends the session and returns what it recorded. Fails if the recorder is off.
pub fn stop() -> Result<Capture> {
    let recording = recorder::disable()?;
    tracing_core::callsite::rebuild_interest_cache();
    Ok(Capture::new(recording, store::take()))
}

/// Settings of a session: the output and its format, the clock its times are on, the fields
/// kept, the memory cap.
#[derive(Clone, Debug)]
pub struct Builder {
    path: Option<PathBuf>,
    format: Option<Format>,
    fields: Fields,
    max_bytes: usize,
    host: String,
    clock: Clock,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            path: None,
            format: None,
            fields: Fields::All,
            max_bytes: DEFAULT_MAX_BYTES,
            host: "localhost".into(),
            clock: Clock::default(),
        }
    }
}

impl Builder {
    /// Defaults: no output file (the guard returns the [`Capture`]), every field kept, the
    /// recorder's default cap (256 MiB).
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Writes to `path`, in the format its name asks for ([`Format::of_path`]) unless
    /// [`Builder::format`] says otherwise.
    pub fn file(mut self, path: impl AsRef<Path>) -> Builder {
        self.path = Some(path.as_ref().to_path_buf());
        self
    }

    /// The output's format, whatever its name.
    pub fn format(mut self, format: Format) -> Builder {
        self.format = Some(format);
        self
    }

    /// Which fields of spans and events become stats.
    pub fn fields(mut self, fields: Fields) -> Builder {
        self.fields = fields;
        self
    }

    /// The most memory the session may take, in bytes: the recorder's blocks of events, the
    /// names it interns and the fields kept. Past it, events are counted as dropped (the
    /// `dropped_events` stat), fields and links too (`dropped_fields`); nothing panics.
    pub fn max_bytes(mut self, max_bytes: usize) -> Builder {
        self.max_bytes = max_bytes;
        self
    }

    /// The clock the output's times are on: [`Clock::Monotonic`] (the default: times since the
    /// session's start, the start kept as `profile_start_time`) or [`Clock::Unix`] (times since
    /// the Unix epoch, to line the output up with other profiles of the same run: a Parquet
    /// output only, [`Builder::build`] refuses it for an XSpace or Chrome output, whose times are
    /// session-relative by the format's rules).
    pub fn clock(mut self, clock: Clock) -> Builder {
        self.clock = clock;
        self
    }

    /// The host name of a Parquet output (its `host=` partition); `localhost` by default.
    pub fn host(mut self, host: impl Into<String>) -> Builder {
        self.host = host.into();
        self
    }

    /// Starts the session and returns the layer to install and the guard that writes the
    /// output. Fails if the recorder is already on (one session per process).
    pub fn build(self) -> Result<(ProfkitLayer, FlushGuard)> {
        let format = self
            .path
            .as_ref()
            .map(|p| self.format.unwrap_or_else(|| Format::of_path(p)));
        if let (Clock::Unix, Some(Format::XSpace | Format::Chrome), Some(path)) =
            (self.clock, format, &self.path)
        {
            return Err(Error::Format(
                path.clone(),
                "Clock::Unix needs a Parquet output: an XSpace's line times are relative to the session's start (kept as profile_start_time), and Chrome JSON is written from the XSpace",
            ));
        }
        #[cfg(not(feature = "parquet"))]
        if let (Some(Format::Parquet), Some(path)) = (format, &self.path) {
            return Err(Error::Format(
                path.clone(),
                "Parquet output needs profkit-tracing's `parquet` feature",
            ));
        }
        start(self.max_bytes)?;
        let layer = ProfkitLayer::with_fields(self.fields);
        let guard = FlushGuard {
            state: Mutex::new(GuardState {
                output: self.path.zip(format),
                host: self.host,
                clock: self.clock,
                max_bytes: self.max_bytes,
                written: Capture::default(),
                done: false,
            }),
        };
        Ok((layer, guard))
    }
}

struct GuardState {
    output: Option<(PathBuf, Format)>,
    host: String,
    clock: Clock,
    max_bytes: usize,
    /// What earlier flushes collected.
    written: Capture,
    done: bool,
}

/// Ends the session when dropped and writes its output, as `tracing-chrome`'s guard does; keep it
/// alive as long as spans should be recorded.
///
/// [`FlushGuard::flush`] writes everything recorded so far and goes on recording;
/// [`FlushGuard::finish`] ends the session, writes, and returns the [`Capture`]. A guard dropped
/// without either writes on drop (errors are then lost: the library prints nothing).
pub struct FlushGuard {
    state: Mutex<GuardState>,
}

impl std::fmt::Debug for FlushGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("FlushGuard")
            .field("output", &state.output)
            .field("done", &state.done)
            .finish()
    }
}

impl FlushGuard {
    fn lock(&self) -> MutexGuard<'_, GuardState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes everything recorded since the session started and goes on recording (a short
    /// pause: the recorder is stopped and started again, and events of other threads at that
    /// moment may be missed). A span open across a flush is written as open at the flush, and
    /// whole by the next one.
    pub fn flush(&self) -> Result<()> {
        let mut state = self.lock();
        if state.done {
            return Ok(());
        }
        let capture = stop()?;
        state.written.append(capture);
        let budget = state.max_bytes.saturating_sub(state.written.bytes());
        let written = write(
            &state.written,
            state.output.as_ref(),
            &state.host,
            state.clock,
        );
        start(budget)?;
        written
    }

    /// Ends the session, writes the output (if the builder was given one) and returns everything
    /// recorded.
    pub fn finish(self) -> Result<Capture> {
        let mut state = self.lock();
        state.done = true;
        let capture = stop()?;
        let mut all = std::mem::take(&mut state.written);
        all.append(capture);
        write(&all, state.output.as_ref(), &state.host, state.clock)?;
        Ok(all)
    }
}

impl Drop for FlushGuard {
    fn drop(&mut self) {
        let mut state = self.lock();
        if state.done {
            return;
        }
        state.done = true;
        if let Ok(capture) = stop() {
            let mut all = std::mem::take(&mut state.written);
            all.append(capture);
            // Nowhere to report a failure from a drop; `finish` returns it.
            let _ = write(&all, state.output.as_ref(), &state.host, state.clock);
        }
    }
}

/// Writes `capture` to `output`, if any.
fn write(
    capture: &Capture,
    output: Option<&(PathBuf, Format)>,
    host: &str,
    clock: Clock,
) -> Result<()> {
    let Some((path, format)) = output else {
        return Ok(());
    };
    let space = capture.to_xspace_on(clock);
    match format {
        Format::XSpace => {
            profkit_xplane::write_file(&space, path).map_err(|source| Error::XSpace {
                path: path.clone(),
                source,
            })
        }
        Format::Chrome => {
            let io = |source| Error::Io {
                path: path.clone(),
                source,
            };
            let file = std::fs::File::create(path).map_err(io)?;
            let mut out = std::io::BufWriter::new(file);
            write_chrome(&space, &mut out).map_err(|source| Error::Chrome {
                path: path.clone(),
                source,
            })?;
            out.flush().map_err(io)
        }
        Format::Parquet => write_parquet(space, path, host),
    }
}

/// Writes an XSpace of spans as Chrome trace JSON (the Trace Event Format's layout).
pub fn write_chrome(
    space: &profkit_xplane::XSpace,
    out: impl Write,
) -> std::result::Result<(), profkit_xprof::Error> {
    use profkit_xprof::trace_viewer::{Layout, TraceViewerOptions, write_space};
    write_space(
        space,
        out,
        &TraceViewerOptions::of_layout(Layout::TraceEvent),
    )
    .map(|_| ())
}

#[cfg(feature = "parquet")]
fn write_parquet(space: profkit_xplane::XSpace, path: &Path, host: &str) -> Result<()> {
    use profkit_arrow::{HostInfo, Options, WriteOptions, sources};
    let info = HostInfo::new(host, "xspace", ["profkit-tracing"]);
    let mut batches = sources::space(space, info, Options::default());
    let mut options = WriteOptions::default();
    options.overwrite = true;
    profkit_arrow::write_host(path, &mut batches, options)
        .map(|_| ())
        .map_err(|source| Error::Parquet {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(not(feature = "parquet"))]
fn write_parquet(_space: profkit_xplane::XSpace, path: &Path, _host: &str) -> Result<()> {
    Err(Error::Format(
        path.to_path_buf(),
        "Parquet output needs profkit-tracing's `parquet` feature",
    ))
}

//! The profiler event model, a low-overhead recorder, PaddlePaddle's legacy report, and Paddle's
//! two profile protobufs.
//!
//! The model is the one of Paddle's profiler design: a thread records [`Event`]s of three kinds,
//! a mark, the push of a range and its pop, each with a name, the profiler thread index, a CPU
//! timestamp in nanoseconds and, when a device is profiled, a device timestamp. Ranges are not
//! stored: [`pair`] scans each thread's events and matches every pop with the most recent open
//! push of the same name (unmatched pops and pushes left open become [`Warning`]s, never silently
//! lost), giving [`Span`]s that nest as a tree per thread and are named `parent/child` by their
//! enclosing ranges, as Paddle names them. The [`recorder`] records such events from Rust code at
//! some fifteen nanoseconds an event (one relaxed atomic load when off); [`report`] prints
//! Paddle's reports from them, layout for layout: the legacy profiling report and the tables of
//! `paddle.profiler.Profiler.summary()` (which also read node trees directly); [`paddle`] reads
//! Paddle's `Profile` and node tree files into the same model (and writes `Profile`s), ranges
//! typed by their category, memory nodes as [`MemoryEvent`]s.
//!
//! ```
//! use profkit_events::{Event, Recording, ThreadEvents, pair};
//! use profkit_events::report::{Report, ReportOptions, SortKey};
//! let mut thread = ThreadEvents::new(0);
//! thread.events = vec![Event::push("step", 0, 0), Event::push("matmul", 0, 1_000_000),
//!     Event::pop("matmul", 0, 3_000_000), Event::pop("step", 0, 4_000_000)];
//! let recording = Recording { threads: vec![thread], ..Recording::default() };
//! let spans = pair(&recording.threads);
//! assert_eq!(spans.paths.text(spans.threads[0].spans[0].path), "step/matmul");
//! let report = Report::new(&recording, ReportOptions { sort: SortKey::Total, ..Default::default() });
//! let rows = report.printed_rows(); // what `report.text()` prints, row by row
//! assert_eq!((rows[1].name.as_str(), rows[1].depth, rows[1].calls), ("matmul", 1, 1));
//! assert!(report.text().contains("\nthread0::step        1           4           4 "));
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod error;
pub mod event;
pub mod paddle;
pub mod recorder;
pub mod report;
pub mod span;

pub use error::{Error, Result};
pub use event::{
    DeviceKind, DeviceSpan, DeviceTime, Event, EventKind, MemEventKind, MemPlace, MemoryEvent,
    MemoryRecord, Name, ProfilerState, Recording, ThreadEvents,
};
pub use recorder::{RecordEvent, RecorderConfig};
pub use span::{PathId, Paths, Span, Spans, ThreadSpans, TypedRange, Warning, pair, pair_thread};

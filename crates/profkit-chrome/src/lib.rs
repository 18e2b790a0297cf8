//! Chrome trace JSON (the Trace Event Format) read into an XSpace, as PyTorch's profiler (Kineto),
//! catapult, TensorBoard, xprof and Paddle write it, so that their traces can be reported on,
//! validated and converted. Writing goes the other way through xprof's trace viewer (the
//! `profkit-xprof` crate), in xprof's layout or in the Trace Event Format's own, which keeps what
//! this reader read (see [`SOURCE_FORMAT_STAT`], [`PHASE_STAT`], [`flow_stats`]).
//!
//! Both layouts are read: an object with a `traceEvents` array wherever it sits among the other
//! keys (which are skipped without being built, except the few read below), and a bare array of
//! events, whose closing `]` may be missing as the format allows. The text streams through
//! `profkit-json`'s reader one event at a time, so memory is what the import keeps (events with
//! interned names and args), not the text; numbers are taken as written (microseconds with
//! fractions become exact picoseconds), and every error names the JSON path, line and column.
//! What becomes of each phase:
//!
//! - `X` (complete) and `B`/`E` (an `E` closes its thread's most recent open `B`) become events
//!   with a duration on their thread's line; `i`/`I`/`R` (instant, mark) events without one;
//! - async events, nestable `b`/`e`/`n` (paired by category, id and scope; ids are global
//!   unless `id2` says `local`) and legacy `S`/`T`/`F` (steps counted in a `steps` stat), go to
//!   lines of their own, one per process and name, as Perfetto shows them;
//! - flow events `s`/`t`/`f` bind to the slice enclosing them (or, for an `f` without
//!   `"bp": "e"`, the next slice on its thread), and `bind_id` with `flow_in`/`flow_out` to their
//!   own event: either way the event gets `flow_in`/`flow_out` stats holding the flow's id and a
//!   `flow_cat` stat (one per flow stat, in their order, when its flows have different
//!   categories), which the Chrome writer turns back into flow events, and a `flow` stat per flow
//!   end as TSL's `XFlow` encodes it, which xprof draws (see `xflow`);
//! - `C` (counter) events become events of the host plane's `_counters_` line, every series an
//!   arg (stat) of one event;
//! - `M` (metadata) `process_name`, `thread_name` and their `*_sort_index` name and order the
//!   lines; `P` samples, `stackFrames`, object and memory-dump events are counted and skipped.
//!
//! PyTorch (Kineto) traces keep their GPU activity apart: events of the GPU categories (`kernel`,
//! `gpu_memcpy`, `gpu_memset`, `gpu_user_annotation`, `cuda_sync`) put their thread (pid = device, tid =
//! stream) on a `/device:GPU:<device>` plane, a line per stream, their `correlation` arg (and
//! that of the launches on the host) named `correlation_id` as in xprof. `deviceProperties` become the GPU planes'
//! stats (`device_type_string`, `core_count`, `memory_size` and every property by its own name),
//! `distributedInfo` stats of the `Task Environment` plane (`rank`, `world_size`, ...).
//!
//! A process named as xprof names a GPU plane (`/device:GPU:0`) is that plane again.
//! Everything else goes to one `/host:CPU` plane with a line per (pid, tid) in first-seen order; a
//! non-negative numeric tid is the line id when no other thread took it (the others take free ids
//! in order of their `thread_sort_index`), lines come in id order, and with several processes a line's
//! display name is `<process> / <thread>`. Args become stats (numbers as int64, uint64 or double,
//! strings as strings, `true`/`false` as 1/0, anything else as its compact JSON text), `cat` too
//! (as the `category` stat when the args have a `cat`);
//! a string more than one event has is stored once, as a `ref_value`.
//! In a trace of Paddle's profiler (top-level `span_index` or a string `schemaVersion`), the
//! duration Paddle appends to host event names (`matmul dygraph[102.633 us]`) is taken off, the
//! Python and C++ halves of one OS thread (`20652(Python)`, `20652(C++)`) are one line, exact
//! times come from `args.start_time`/`end_time` (nanoseconds, where `ts` and `dur` are rounded),
//! and `[memory]` instants become `MemoryAllocation`/`MemoryDeallocation` events. Times are made
//! relative to the earliest, which the `Task Environment` plane keeps as `profile_start_time`.
//!
//! # Threads
//!
//! With more than one thread ([`ChromeReadOptions::threads`]; by default as many as the rayon
//! pool the call runs in has, which `profkit --threads N` and `PROFKIT_THREADS` set), a second
//! thread scans the events ahead of the reader. The reader's thread reads (and gunzips) the text
//! as always, and copies what it has buffered from the event it is at (up to 1 MiB, the read
//! buffer) into a window for the scanning thread, which reads the window's events one after
//! another (numbers converted, strings located, members identified, nested args written as
//! compact JSON: most of the fast path's work) into batches of a few hundred events. The reader's
//! thread takes each event of the batches into the trace in order, exactly as it takes an event
//! it scans itself: interning, threads, flows and the XSpace stay on it, so strings get the same
//! ids and events the same order. It never waits for the scanning thread: an event not scanned
//! yet it scans itself, and the scanning thread passes over the events behind it, so that on a
//! machine whose other core is busy the import is about as fast as with one thread. An event of a batch is used only when the reader is at the
//! very offset in the input where the window has it; anything the scanning thread is not sure
//! of (an escape, odd input, the end of a window) goes to the path of one thread, which reads
//! it, or reports it with the same message, path, line and column. The import is the same
//! whatever the count, byte for byte, and so is every error; with one thread the scanning thread
//! is not started and the import runs as before. One window and at most 16 batches are in
//! flight at a time, so memory stays bounded (a few MiB more).
//!
//! Where each rule lives, by the format's own words:
//!
//! | concept | module |
//! |---|---|
//! | the document, its top-level keys (`traceEvents`, `deviceProperties`, `distributedInfo`, `displayTimeUnit`, `stackFrames`, `samples`) | `document` |
//! | an event's members (`ph`, `name`, `pid`, `ts`, `args`, ...) and their values | `members`, `seeds`, `event`, `arg`, `time` |
//! | the fast path that reads whole events from the buffer | `fast` |
//! | the scanning thread ahead of the reader | `fast::ahead` |
//! | the trace as read (threads, items, open begins) | `trace` |
//! | what every event goes through, dispatch by phase | `dispatch` |
//! | complete and duration events (`X`, `B`/`E`) | `complete` |
//! | instants and marks (`i`, `I`, `R`) | `instant` |
//! | async events (`b`/`e`/`n`, `S`/`T`/`F`) | `async_events` |
//! | flows (`s`/`t`/`f`, `bind_id`) and TSL's `flow` stats | `flows`, `xflow` |
//! | counters (`C`) | `counter` |
//! | metadata (`M`) | `metadata` |
//! | samples, objects, memory dumps (counted, skipped) | `trace`, `document` |
//! | Kineto's GPU streams, correlation ids, device properties | `kineto` |
//! | Paddle's names, threads, exact times, memory events | `paddle` |
//! | the XSpace built, planes, lines, shared metadata | `space`, `plane_metadata` |
//! | strings kept once | `intern` |
//! | warnings, and `validate` in the trace's own terms | `warnings`, `check` |
//! | detection of a Chrome trace among JSON files | `sniff` |
//!
//! ```
//! let text = br#"{"traceEvents": [
//!     {"ph": "X", "name": "step", "pid": 1, "tid": 2, "ts": 10, "dur": 5},
//!     {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 12}
//! ]}"#;
//! let import = profkit_chrome::read_chrome(&text[..])?;
//! let host = &import.space.planes[0];
//! assert_eq!(host.name, "/host:CPU");
//! assert_eq!(host.lines[0].events.len(), 2);
//! assert_eq!(import.events, 2);
//! # Ok::<(), profkit_chrome::Error>(())
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

/// `DeserializeSeed` for a visitor that reads itself by the deserializer's method named:
/// `seed!(Type => Value, deserialize_any)`, or with the newtype token the method takes before it.
macro_rules! seed {
    ($ty:ty => $value:ty, $method:ident $(, $token:expr)?) => {
        impl<'de> serde::de::DeserializeSeed<'de> for $ty {
            type Value = $value;
            fn deserialize<D: serde::de::Deserializer<'de>>(
                self,
                d: D,
            ) -> std::result::Result<$value, D::Error> {
                d.$method($($token,)? self)
            }
        }
    };
}

mod arg;
mod async_events;
mod check;
mod complete;
mod counter;
mod dispatch;
mod document;
mod error;
mod event;
mod fast;
mod flows;
mod instant;
mod intern;
mod kineto;
mod members;
mod metadata;
mod paddle;
mod plane_metadata;
mod read;
mod seeds;
mod sniff;
mod space;
#[cfg(test)]
mod tests;
mod time;
mod trace;
mod warnings;
mod xflow;

pub use check::ChromeCheck;
pub use error::{Error, Result};
pub use read::{ChromeImport, ChromeReadOptions, chrome_to_xspace, read_chrome, read_chrome_with};
pub use sniff::{JsonShape, looks_like_chrome, sniff_json};
pub use warnings::WarningKind;

/// The deepest nesting of arrays and objects the reader accepts.
pub const MAX_DEPTH: usize = profkit_json::MAX_DEPTH;

/// How many warnings of one kind are kept word for word; the rest are counted.
pub const WARNINGS_PER_KIND: usize = 20;

/// The stat of the `Task Environment` plane that says which format a space was made from:
/// [`SOURCE_CHROME`] for a Chrome trace, so that converting the space back writes the Trace
/// Event Format's own layout (`profkit_xprof::trace_viewer::Layout`).
pub const SOURCE_FORMAT_STAT: &str = "source_format";
/// [`SOURCE_FORMAT_STAT`]'s value for a space read from a Chrome trace.
pub const SOURCE_CHROME: &str = "chrome trace";

/// The stat that notes an `X` event of no duration (value `X`), which would otherwise read back
/// as an instant; the Trace Event layout writes it back as an `X`.
pub const PHASE_STAT: &str = "ph";

/// The names of the stats flows become.
pub mod flow_stats {
    /// The id of a flow that starts (or steps) at the event.
    pub const FLOW_OUT: &str = "flow_out";
    /// The id of a flow that ends (or steps) at the event.
    pub const FLOW_IN: &str = "flow_in";
    /// The category of the event's flows.
    pub const FLOW_CAT: &str = "flow_cat";
}

/// The stat an event's category is kept in when its args have a `cat` of their own (else `cat`
/// is), and that the Trace Event layout writes as the event's `cat`.
pub const CATEGORY_STAT: &str = "category";

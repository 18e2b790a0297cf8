//! The event model (the recorder's output, Paddle's files) to XSpace and back.
//!
//! To XSpace: the paired ranges of each thread become the events of a line of `/host:CPU` (the
//! line id is the thread's OS id when known and unique, else its profiler index; the line name
//! its name, or `thread <index>`), nested as they were recorded, with one event metadata per
//! name; marks become events without duration marked by an `event_kind` stat of `mark` (but a
//! thread that holds nothing but the session's own marks, `_start_profiler_` and
//! `_stop_profiler_`, which the recorder puts on the thread that enables and disables it, gets
//! no line: it would show as a thread that did nothing, and the session's start and end are the
//! `Task Environment` plane's `profile_start_time` and `profile_stop_time`); device activity goes to `/device:GPU:<n>`
//! (`/device:CUSTOM:<n>` for NPU kernels) planes, a line per stream; memory records become
//! counters of the bytes in use per place on the host plane's `_counters_` line. Times are made
//! relative to the earliest one, as TensorFlow writes files for xprof, and the `Task
//! Environment` plane keeps that start (`profile_start_time`, nanoseconds since the epoch) and
//! the end, so that converting back gives the original timestamps. Ranges that do not pair are
//! left out, with the pairing's warnings returned.
//!
//! From XSpace: each line of `/host:CPU` (but the counter line) is a thread (its index the line
//! id when that fits and is free, else the line's position) whose events are ranges (events marked
//! `event_kind: mark` are marks), and the events of device planes' streams and `XLA Ops` lines
//! are device spans (not the steps, name scopes, framework ops or modules derived from them:
//! see [`profkit_xplane::LineRole`]); times are
//! `profile_start_time` plus the event's offset, in whole nanoseconds.

use std::collections::HashSet;

use profkit_xplane::{LineRole, StatValueRef};

mod forest;
mod to_recording;
mod to_xspace;

pub use forest::xspace_forest;
pub use to_recording::{session_start_ns, xspace_to_recording};
pub use to_xspace::recording_to_xspace;

/// The stat that holds an event's category (a Paddle node's event type); the Chrome trace writer
/// writes it as the event's `cat`, and reading takes a Chrome trace's `cat` stat as one too.
pub const CATEGORY_STAT: &str = profkit_chrome::CATEGORY_STAT;

/// The name of the host plane's line of memory events (Paddle's memory nodes), one instant
/// event per allocator event, named by its kind, its fields as stats.
pub const MEMORY_LINE_NAME: &str = "Memory events";
/// Its id.
pub const MEMORY_LINE_ID: i64 = i64::MAX - 1;

/// Stats that say how an event was written rather than what the source gave it.
const STRUCTURAL_STATS: [&str; 5] = [
    MARK_STAT,
    CATEGORY_STAT,
    "cat",
    "device_id",
    "device_duration_ps",
];

/// The stat that tells a mark from a range without duration.
pub const MARK_STAT: &str = "event_kind";
/// Its value for a mark.
pub const MARK: &str = "mark";

// What the conversions from an XSpace share.

/// Nanoseconds since `start` of a picosecond time, clamped to what a `u64` holds.
fn to_ns(start: u64, ps: i128) -> u64 {
    let ns = i128::from(start) + ps.div_euclid(1000);
    u64::try_from(ns.max(0)).unwrap_or(u64::MAX)
}

/// A stat's value as text (`None` for bytes).
fn stat_text(value: &StatValueRef<'_>) -> Option<String> {
    Some(match value {
        StatValueRef::Double(v) => v.to_string(),
        StatValueRef::Uint64(v) => v.to_string(),
        StatValueRef::Int64(v) => v.to_string(),
        StatValueRef::Str(v) => (*v).to_owned(),
        StatValueRef::Ref(v) => (*v).to_owned(),
        _ => return None,
    })
}

/// The thread index of a line: its id when that is one and free, else its position, else the next
/// free index after it; taken from `used`.
fn thread_index(line_id: i64, position: usize, used: &mut HashSet<u32>) -> u32 {
    let mut thread = u32::try_from(line_id)
        .ok()
        .filter(|t| !used.contains(t))
        .unwrap_or_else(|| u32::try_from(position).unwrap_or(u32::MAX));
    while used.contains(&thread) {
        thread = thread.wrapping_add(1);
    }
    used.insert(thread);
    thread
}

/// Which lines of a device plane (by their roles) hold its activity, the kernels and copies of
/// the summary: the streams and `XLA Ops` lines ([`LineRole::holds_device_ops`]); the other
/// lines (steps, name scopes, framework ops, modules) hold the same instants again, grouped. A
/// plane without such lines keeps the lines of no known role.
fn device_activity_lines(roles: &[LineRole]) -> Vec<bool> {
    let any_ops = roles.iter().any(|r| r.holds_device_ops());
    roles
        .iter()
        .map(|r| r.holds_device_ops() || (!any_ops && *r == LineRole::Other))
        .collect()
}

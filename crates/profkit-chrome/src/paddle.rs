//! Paddle's profiler's traces (a top-level `span_index` or a string `schemaVersion`): the duration
//! appended to host event names, the Python and C++ halves of one OS thread, exact times from
//! `args.start_time`/`end_time`, and `[memory]` instants.

use crate::arg::{Arg, KeyArg};
use crate::time::micros_to_ps;
use crate::trace::Trace;

/// Paddle's profiler appends the duration to a host event's name (`matmul dygraph[102.633 us]`);
/// without it, the calls of one op share a name again.
pub(crate) fn strip_paddle_duration(name: &str) -> &str {
    let Some(open) = name.rfind('[') else {
        return name;
    };
    let Some(inner) = name.get(open + 1..).and_then(|s| s.strip_suffix(']')) else {
        return name;
    };
    let Some((number, unit)) = inner.split_once(' ') else {
        return name;
    };
    if number.parse::<f64>().is_ok() && matches!(unit, "ns" | "us" | "ms" | "s") {
        name.get(..open).unwrap_or(name)
    } else {
        name
    }
}

/// Paddle's tids `20652(Python)` and `20652(C++)`: the OS thread both halves run on.
pub(crate) fn paddle_thread(tid: &str) -> Option<i64> {
    let (number, rest) = tid.split_once('(')?;
    matches!(rest, "Python)" | "C++)")
        .then(|| number.parse().ok())
        .flatten()
}

impl Trace {
    /// Paddle's exact times of an event: `args.start_time`/`end_time` (`"9965.651 us"` since the
    /// profile's start), placed on the clock of `ts` by the first event that has them.
    pub(crate) fn paddle_times(&mut self, stats: &[KeyArg], ts: i128) -> Option<(i128, i128)> {
        if !self.paddle {
            return None;
        }
        let text = |key: u32| {
            stats
                .iter()
                .find(|a| a.key == key)
                .and_then(|a| match a.arg() {
                    Arg::Str(s) => Some(s),
                    _ => None,
                })
        };
        let parse = |s: &str| {
            s.strip_suffix(" us")
                .and_then(|n| micros_to_ps(n.trim()))
                .map(|(v, _)| v)
        };
        let start = parse(self.strings.get(text(self.keys.start_time)?))?;
        let end = parse(self.strings.get(text(self.keys.end_time)?))?;
        let base = *self.paddle_base.get_or_insert(ts - start);
        Some((base + start, base + end.max(start)))
    }
}

//! The plugin calls as the checker makes them: each announced to the parent and timed (the
//! slowest kept), and the work and memory measures the checks share.

use std::time::{Duration, Instant};

use super::{Check, CheckOptions, Message};

/// Busy CPU work for `duration`, so a sampling plugin sees this thread run.
pub fn busy_work(duration: Duration) {
    let started = Instant::now();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while started.elapsed() < duration {
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        std::hint::black_box(x);
    }
}

/// Resident memory of this process in bytes, from `/proc/self/status`.
pub fn resident_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The checks' way of calling the plugin: every call announced and timed, results reported.
pub(super) struct Runner<'e> {
    pub(super) emit: &'e mut dyn FnMut(&Message),
    pub(super) options: CheckOptions,
    /// The slowest call so far: (call, session, duration).
    pub(super) slowest: Option<(String, Option<u32>, Duration)>,
}

impl Runner<'_> {
    pub(super) fn report(&mut self, check: Check) {
        (self.emit)(&Message::Check { check });
    }

    /// Runs `f` as the plugin call `call` of `session`: announced, timed.
    pub(super) fn call<R>(&mut self, call: &str, session: Option<u32>, f: impl FnOnce() -> R) -> R {
        (self.emit)(&Message::Begin {
            call: call.to_owned(),
            session,
        });
        let started = Instant::now();
        let result = f();
        let took = started.elapsed();
        (self.emit)(&Message::End);
        if self.slowest.as_ref().is_none_or(|(_, _, d)| took > *d) {
            self.slowest = Some((call.to_owned(), session, took));
        }
        result
    }
}

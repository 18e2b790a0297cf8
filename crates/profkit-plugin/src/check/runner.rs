//! The child's side: the checks run in order against the plugin, every call announced and timed.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{Check, CheckId, CheckOptions, Message};
use super::{collect, init, limits, restart};
use crate::host::{Library, PluginProfiler, Registration};

/// Runs the checks in this process, reporting progress and results through `emit`. A plugin that
/// crashes or hangs takes this process with it: run this in a child
/// ([`run_isolated`](super::run_isolated)).
pub fn run_in_process(library: &Path, options: &CheckOptions, emit: &mut dyn FnMut(&Message)) {
    let mut runner = Runner {
        emit,
        options: options.clone(),
        slowest: None,
    };
    runner.run(library);
    (runner.emit)(&Message::Done);
}

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

pub(super) struct Runner<'e> {
    emit: &'e mut dyn FnMut(&Message),
    options: CheckOptions,
    /// The slowest call so far: (call, session, duration).
    slowest: Option<(String, Option<u32>, Duration)>,
}

impl Runner<'_> {
    fn report(&mut self, check: Check) {
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

    fn skip_rest(&mut self, from: CheckId, why: &str) {
        let start = CheckId::ALL.iter().position(|&c| c == from).unwrap_or(0);
        for &id in CheckId::ALL.get(start..).unwrap_or(&[]) {
            if id != CheckId::NoCrash {
                self.report(Check::skip(id, format!("not run: {why}")));
            }
        }
    }

    fn run(&mut self, path: &Path) {
        let opened = self.call("dlopen", None, || Library::open(path));
        self.report(init::load_check(&opened));
        let Ok(library) = opened else {
            self.skip_rest(CheckId::Init, "the library did not load");
            return;
        };
        let registration = self.call("TF_InitProfiler", None, || library.init());
        self.report(init::init_check(&registration));
        self.report(init::device_type_check(&registration));
        self.report(init::abi_check(&registration));
        let Some(mut profiler) = registration.profiler_unchecked() else {
            self.skip_rest(
                CheckId::Destroy,
                "start, stop or collect_data_xspace is null",
            );
            return;
        };
        self.sessions(&registration, &mut profiler);
    }

    /// Everything from the first session on.
    fn sessions(&mut self, registration: &Registration, profiler: &mut PluginProfiler) {
        let work = self.options.work;
        let probe = self.session(profiler, 0, Some(work), 0);
        self.call("destroy_profiler, destroy_profiler_fns", None, || {
            registration.destroy_copies()
        });
        self.call("destroy_profiler, destroy_profiler_fns", None, || {
            registration.destroy_copies()
        });

        let count = self.options.sessions.max(1);
        let mut runs = Vec::new();
        let mut rss_first = None;
        let mut rss_last = None;
        for index in 1..=count {
            let run = self.session(profiler, index, Some(work), 0);
            if index == 1 {
                self.report(restart::destroy_check(&probe, &run));
                rss_first = resident_memory();
            }
            if index == count {
                rss_last = resident_memory();
            }
            runs.push(run);
        }
        self.report(restart::restart_check(&runs));
        self.report(collect::first_call_check(&runs));
        self.report(collect::agree_check(&runs));
        self.report(collect::valid_check(&runs));

        let empty = self.session(profiler, count + 1, None, 0);
        self.report(collect::empty_check(&empty));

        let small = self.session(profiler, count + 2, Some(work), 1);
        let after = self.session(profiler, count + 3, Some(work), 0);
        self.report(collect::small_buffer_check(&small, &after));

        self.report(limits::memory_check(
            rss_first,
            rss_last,
            count,
            self.options.max_rss_growth,
        ));
        self.report(limits::call_time_check(
            self.slowest.as_ref(),
            self.options.max_call,
        ));
    }
}

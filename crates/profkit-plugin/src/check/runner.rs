//! The child's side: the checks run in order against the plugin, every call announced and timed.

use std::path::Path;

use super::calls::{Runner, resident_memory};
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

impl Runner<'_> {
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

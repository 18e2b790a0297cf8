//! Metadata events (`M`): `process_name`, `thread_name` and their `*_sort_index` name and order the
//! lines.

use crate::arg::{Arg, Id, KeyArg};
use crate::trace::{Trace, Track};

impl Trace {
    pub(crate) fn metadata(&mut self, kind: String, pid: &Id, tid: &Id, stats: &[KeyArg]) {
        let arg = |key: u32| stats.iter().find(|a| a.key == key).map(|a| a.arg());
        let name = match arg(self.keys.name) {
            Some(Arg::Str(s)) => Some(self.strings.get(s).to_owned()),
            _ => None,
        };
        let sort_index = match arg(self.keys.sort_index) {
            Some(Arg::Int(i)) => Some(i),
            Some(Arg::Uint(u)) => i64::try_from(u).ok(),
            _ => None,
        };
        match (kind.as_str(), name) {
            ("process_name", Some(v)) => self.process(pid).name = Some(v),
            ("thread_name", Some(v)) => {
                let thread = self.thread(pid, Track::Thread(tid.clone()));
                if let Some(t) = self.threads.get_mut(thread) {
                    t.name = Some(v);
                }
            }
            ("thread_sort_index", _) => {
                let thread = self.thread(pid, Track::Thread(tid.clone()));
                if let Some(t) = self.threads.get_mut(thread) {
                    t.sort_index = sort_index;
                }
            }
            ("process_sort_index" | "process_labels" | "process_uptime_seconds", _) => {
                self.process(pid);
            }
            _ => {}
        }
    }
}

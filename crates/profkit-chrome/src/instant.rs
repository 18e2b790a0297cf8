//! Instant events (`i`, `I`) and marks (`R`): events without a duration on their thread's line.

use crate::arg::KeyArg;
use crate::dispatch::Placing;
use crate::trace::{Trace, Track};

impl Trace {
    /// An instant or a mark.
    pub(crate) fn instant(&mut self, stats: &mut [KeyArg], event: Placing) {
        let Placing {
            ts: start,
            pid,
            tid,
            mut name,
            memory_kind,
            ..
        } = event;
        if self.paddle && self.strings.get(name) == "[memory]" {
            if let Some(kind) = memory_kind {
                name = kind;
            }
        }
        let thread = self.thread(&pid, Track::Thread(tid));
        let args = self.keep_args(thread, stats);
        self.push_item(thread, name, args, start, start);
    }
}

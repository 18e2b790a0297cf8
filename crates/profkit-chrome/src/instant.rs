//! Instant events (`i`, `I`) and marks (`R`): events without a duration on their thread's line.

use serde::de;

use crate::arg::KeyArg;
use crate::event::RawEvent;
use crate::trace::{Placing, Trace, Track, need_ts};

impl Trace {
    /// An instant or a mark.
    pub(crate) fn instant<E: de::Error>(
        &mut self,
        raw: &mut RawEvent,
        stats: &mut [KeyArg],
        event: Placing,
    ) -> std::result::Result<(), E> {
        let Placing {
            phase,
            pid,
            tid,
            mut name,
            memory_kind,
            ..
        } = event;
        let ph = phase.as_str();
        let start = need_ts(ph, raw.ts)?;
        if self.paddle && self.strings.get(name) == "[memory]" {
            if let Some(kind) = memory_kind {
                name = kind;
            }
        }
        let thread = self.thread(&pid, Track::Thread(tid));
        let args = self.keep_args(thread, stats);
        self.push_item(thread, name, args, start, start);
        Ok(())
    }
}

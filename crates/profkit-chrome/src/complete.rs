//! Complete events (`X`) and duration events (`B`/`E`: an `E` closes its thread's most recent open
//! `B`): events with a duration on their thread's line.

use crate::arg::{Arg, Id, KeyArg};
use crate::dispatch::Placing;
use crate::event::RawEvent;
use crate::trace::{Trace, Track};
use crate::warnings::WarningKind;

impl Trace {
    /// A complete event (`X`).
    pub(crate) fn complete(&mut self, raw: &mut RawEvent, stats: &mut Vec<KeyArg>, event: Placing) {
        let Placing {
            ts: mut start,
            pid,
            tid,
            name,
            gpu,
            ..
        } = event;
        let mut dur = raw.dur.unwrap_or(0);
        if dur < 0 {
            let name_text = self.strings.get(name).to_owned();
            self.warnings.push(WarningKind::NegativeDuration, || {
                format!(
                    "traceEvents[{}]: {name_text:?} has a negative duration ({} us); taken as 0, so the event becomes an instant",
                    self.index,
                    dur as f64 / 1e6
                )
            });
            dur = 0;
        }
        // Paddle rounds `ts` down to whole microseconds; its `start_time` is exact. `dur`
        // is exact too (end minus start in ns, written with three decimals), where
        // `end_time` can be a nanosecond off it: Paddle's summary agrees with `dur`.
        if let Some((s, _)) = self.paddle_times(stats, start) {
            start = s;
        }
        let thread = self.thread(&pid, Track::Thread(tid.clone()));
        if gpu {
            self.kineto = true;
            let device = match (&pid, raw.arg(self.keys.device)) {
                (Id::Int(p), _) => *p,
                (_, Some(Arg::Int(d))) => d,
                _ => 0,
            };
            if let Some(t) = self.threads.get_mut(thread) {
                t.gpu = Some(device);
            }
        }
        self.flow_stats(raw, stats);
        // A complete event of no duration reads as an instant unless noted.
        if dur == 0 {
            stats.push(KeyArg::new(self.keys.phase, Arg::Str(self.keys.complete)));
        }
        let args = self.keep_args(thread, stats);
        self.push_item(thread, name, args, start, start + dur);
    }

    /// A begin (`B`), open until its end.
    pub(crate) fn begin(&mut self, raw: &mut RawEvent, stats: &mut Vec<KeyArg>, event: Placing) {
        let Placing {
            ts: start,
            pid,
            tid,
            name,
            ..
        } = event;
        let thread = self.thread(&pid, Track::Thread(tid));
        self.flow_stats(raw, stats);
        let item = self.pending(thread, name, start, stats);
        if let Some(t) = self.threads.get_mut(thread) {
            t.open.push(item);
        }
    }

    /// An end (`E`): closes its thread's most recent open begin.
    pub(crate) fn end(&mut self, stats: &mut [KeyArg], event: Placing) {
        let Placing {
            ts: end,
            pid,
            tid,
            name,
            ..
        } = event;
        let thread = self.thread(&pid, Track::Thread(tid.clone()));
        let open = self.threads.get_mut(thread).and_then(|t| t.open.pop());
        match open {
            Some(item) => self.close(thread, item, stats, end),
            None => {
                let index = self.index;
                let name_text = self.strings.get(name).to_owned();
                self.warnings.push(WarningKind::UnmatchedEnd, || {
                    format!(
                        "traceEvents[{index}]: end of {name_text:?} on thread {} of process {} has no begin; left out",
                        tid.text(),
                        pid.text()
                    )
                });
            }
        }
    }
}

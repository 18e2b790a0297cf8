//! Async events: nestable `b`/`e`/`n`, paired by category, id and scope (ids are global unless
//! `id2` says `local`), and legacy `S`/`T`/`F` (steps counted in a `steps` stat), on lines of their
//! own, one per process and name, as Perfetto shows them.

use crate::arg::{Arg, Id, KeyArg};
use crate::dispatch::Placing;
use crate::event::{Pending, RawEvent};
use crate::trace::{AsyncKey, Trace, Track};
use crate::warnings::WarningKind;

/// Where the first of some open async begins is: its thread and start.
pub(crate) fn first_begin(items: &[(usize, Pending)]) -> Option<(usize, i128)> {
    items.first().map(|(thread, item)| (*thread, item.start))
}

impl Trace {
    /// An async begin (`b`, or legacy `S`).
    pub(crate) fn async_begin(&mut self, raw: &mut RawEvent, stats: &mut [KeyArg], event: Placing) {
        let Placing {
            ts: start,
            pid,
            name,
            ..
        } = event;
        let key = self.async_key(&pid, raw);
        let thread = self.thread(&pid, Track::Async(name));
        let item = self.pending(thread, name, start, stats);
        self.async_open.entry(key).or_default().push((thread, item));
    }

    /// An async end (`e`, or legacy `F`): closes the most recent begin of its key.
    pub(crate) fn async_end(&mut self, raw: &mut RawEvent, stats: &mut [KeyArg], event: Placing) {
        let Placing {
            ts: end, pid, name, ..
        } = event;
        let key = self.async_key(&pid, raw);
        let open = self.async_open.get_mut(&key).and_then(Vec::pop);
        match open {
            Some((thread, item)) => self.close(thread, item, stats, end),
            None => {
                let index = self.index;
                let name_text = self.strings.get(name).to_owned();
                self.warnings.push(WarningKind::UnmatchedEnd, || {
                    format!(
                        "traceEvents[{index}]: async end of {name_text:?} (id {}) has no begin; left out",
                        key.2
                    )
                });
            }
        }
    }

    /// An async instant (`n`).
    pub(crate) fn async_instant(&mut self, stats: &mut [KeyArg], event: Placing) {
        let Placing {
            ts: start,
            pid,
            name,
            ..
        } = event;
        let thread = self.thread(&pid, Track::Async(name));
        let args = self.keep_args(thread, stats);
        self.push_item(thread, name, args, start, start);
    }

    /// A step of a legacy async event (`T`, `p`): counted on the open event.
    pub(crate) fn async_step(&mut self, raw: &mut RawEvent, event: Placing) {
        let Placing { pid, .. } = event;
        let key = self.async_key(&pid, raw);
        let steps = self.keys.steps;
        if let Some((thread, item)) = self.async_open.get_mut(&key).and_then(|v| v.last_mut()) {
            if let Some(t) = self.threads.get_mut(*thread) {
                let counted = t
                    .args
                    .get_mut(item.at, item.len)
                    .iter_mut()
                    .find(|a| a.key == steps);
                match counted {
                    Some(stat) => {
                        if let Arg::Int(n) = stat.arg() {
                            *stat = KeyArg::new(steps, Arg::Int(n + 1));
                        }
                    }
                    None => t.args.extend(
                        &mut item.at,
                        &mut item.len,
                        &[KeyArg::new(steps, Arg::Int(1))],
                    ),
                }
            }
        }
    }

    /// Async ids are global (an async event may end in another process, as catapult reads
    /// them) unless `id2` makes them local to their process.
    pub(crate) fn async_key(&mut self, pid: &Id, raw: &mut RawEvent) -> AsyncKey {
        let id = raw.id.take().unwrap_or_default();
        let scope = raw.scope.take().unwrap_or_default();
        let process = if id.starts_with("local:") {
            pid.clone()
        } else {
            Id::Int(0)
        };
        (process, raw.cat.unwrap_or(u32::MAX), id, scope)
    }
}

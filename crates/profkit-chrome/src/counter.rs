//! Counter events (`C`): events of the host plane's `_counters_` line, every series an arg (stat)
//! of one event.

use crate::arg::KeyArg;
use crate::dispatch::Placing;
use crate::event::{Item, RawEvent};
use crate::trace::Trace;
use crate::warnings::WarningKind;

impl Trace {
    /// A counter event.
    pub(crate) fn counter(&mut self, raw: &mut RawEvent, stats: &mut [KeyArg], event: Placing) {
        let Placing {
            ts: start,
            pid,
            mut name,
            ..
        } = event;
        if !stats.iter().any(|a| a.arg().is_numeric()) {
            let index = self.index;
            let name_text = self.strings.get(name).to_owned();
            self.warnings.push(WarningKind::CounterWithoutValue, || {
                format!(
                    "traceEvents[{index}]: counter {name_text:?} has no numeric value; left out"
                )
            });
            return;
        }
        self.process(&pid);
        if let Some(id) = raw.id.take() {
            let series = format!("{} {id}", self.strings.get(name));
            name = self.strings.id(&series);
        }
        self.events += 1;
        let (at, len) = self.counter_args.push(stats);
        let (start, end) = self.clock.keep(start, start);
        self.counters.push((
            pid,
            Item {
                name,
                len,
                at,
                start,
                end,
            },
        ));
    }
}

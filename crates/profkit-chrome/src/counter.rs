//! Counter events (`C`): events of the host plane's `_counters_` line, every series an arg (stat)
//! of one event.

use serde::de;

use crate::arg::KeyArg;
use crate::event::{Item, RawEvent};
use crate::trace::{Placing, Trace, need_ts};
use crate::warnings::WarningKind;

impl Trace {
    /// A counter event.
    pub(crate) fn counter<E: de::Error>(
        &mut self,
        raw: &mut RawEvent,
        stats: &mut [KeyArg],
        event: Placing,
    ) -> std::result::Result<(), E> {
        let Placing {
            phase,
            pid,
            mut name,
            ..
        } = event;
        let ph = phase.as_str();
        let start = need_ts(ph, raw.ts)?;
        if !stats.iter().any(|a| a.arg().is_numeric()) {
            let index = self.index;
            let name_text = self.strings.get(name).to_owned();
            self.warnings.push(WarningKind::CounterWithoutValue, || {
                format!(
                    "traceEvents[{index}]: counter {name_text:?} has no numeric value; left out"
                )
            });
            return Ok(());
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
        Ok(())
    }
}

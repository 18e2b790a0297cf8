//! What every event goes through before its phase places it: the checks of its members, the
//! producers' rules (Kineto's GPU categories and launches, Paddle's names and threads), its
//! duplicate keys, then the phase's own module (`complete`, `instant`, `async_events`, `flows`,
//! `counter`, `metadata`).

use rustc_hash::FxHashSet;
use serde::de;

use crate::CATEGORY_STAT;
use crate::arg::{Arg, Id, KeyArg};
use crate::event::{RawEvent, event_error};
use crate::kineto::is_gpu_category;
use crate::paddle::{paddle_thread, strip_paddle_duration};
use crate::trace::Trace;
use crate::warnings::WarningKind;

/// An event on its way to its line: what [`Trace::event`] found of it.
pub(crate) struct Placing {
    pub(crate) pid: Id,
    pub(crate) tid: Id,
    pub(crate) name: u32,
    /// Its time: `ts` for the phases that need one (checked by [`event_error`]), else 0.
    pub(crate) ts: i128,
    /// Of a GPU category (Kineto).
    pub(crate) gpu: bool,
    /// `MemoryAllocation` or `MemoryDeallocation` for Paddle's `[memory]` instants.
    pub(crate) memory_kind: Option<u32>,
}

impl Trace {
    /// Warns of a key the event has twice, among its members or its args, and keeps the last
    /// value of a repeated arg (as the members keep theirs), so that the warning says what was
    /// done.
    pub(crate) fn duplicates(&mut self, raw: &mut RawEvent, name: u32) {
        let index = self.index;
        if let Some(key) = raw.duplicate {
            let name_text = self.strings.get(name).to_owned();
            self.warnings.push(WarningKind::DuplicateKey, || {
                format!(
                    "traceEvents[{index}]: {name_text:?} has the key {key:?} more than once; the last value is used"
                )
            });
        }
        // Events of a kind write the same keys: a list of keys found distinct before (one per
        // length, in 32 slots) is compared rather than every pair.
        let slot = raw.args.len() % 32;
        let known = self.distinct_keys.get(slot).is_some_and(|keys| {
            keys.len() == raw.args.len() && keys.iter().zip(&raw.args).all(|(k, a)| *k == a.key)
        });
        if known || raw.args.len() < 2 {
            return;
        }
        let repeated = if raw.args.len() <= 32 {
            raw.args
                .iter()
                .enumerate()
                .find(|(i, a)| raw.args.iter().skip(i + 1).any(|b| b.key == a.key))
                .map(|(_, a)| a.key)
        } else {
            let mut keys: Vec<u32> = raw.args.iter().map(|a| a.key).collect();
            keys.sort_unstable();
            keys.windows(2)
                .find(|w| w.first() == w.get(1))
                .and_then(|w| w.first().copied())
        };
        let Some(key) = repeated else {
            if let Some(keys) = self.distinct_keys.get_mut(slot) {
                keys.clear();
                keys.extend(raw.args.iter().map(|a| a.key));
            }
            return;
        };
        let key_text = self.strings.get(key).to_owned();
        let name_text = self.strings.get(name).to_owned();
        self.warnings.push(WarningKind::DuplicateKey, || {
            format!(
                "traceEvents[{index}]: {name_text:?} has the arg {key_text:?} more than once; the last value is used"
            )
        });
        // Keep the last of each key, in the order of those last ones.
        let mut kept: Vec<KeyArg> = Vec::with_capacity(raw.args.len());
        let mut keys = FxHashSet::default();
        for arg in raw.args.drain(..).rev() {
            if keys.insert(arg.key) {
                kept.push(arg);
            }
        }
        kept.reverse();
        raw.args = kept;
    }

    /// Takes the event just read into the trace.
    pub(crate) fn take_event<E: de::Error>(&mut self) -> std::result::Result<(), E> {
        let mut raw = std::mem::take(&mut self.raw);
        let result = self.event(&mut raw);
        raw.clear();
        self.raw = raw;
        result
    }

    pub(crate) fn event<E: de::Error>(&mut self, raw: &mut RawEvent) -> std::result::Result<(), E> {
        if raw.members == 0 {
            // The empty event xprof and Paddle end their arrays with.
            return Ok(());
        }
        if let Some(reason) = event_error(raw) {
            return Err(E::custom(reason));
        }
        let Some(phase) = raw.ph.take() else {
            return Err(E::custom("the event has no \"ph\" (phase)"));
        };
        let ph = phase.as_str();
        let pid = raw.pid.take().unwrap_or(Id::Int(0));
        let mut tid = raw.tid.take().unwrap_or(Id::Int(0));
        if let Id::Text(text) = &tid {
            if let Some(os) = paddle_thread(text) {
                tid = Id::Int(os);
            }
        }
        let cat_text = raw.cat.map(|c| self.strings.get(c));
        let gpu = cat_text.is_some_and(is_gpu_category);
        // Kineto's `correlation` of a launch and its GPU activity is xprof's `correlation_id`.
        let is_launch = cat_text.is_some_and(|c| {
            gpu || c.eq_ignore_ascii_case("cuda_runtime")
                || c.eq_ignore_ascii_case("cuda_driver")
                || c.eq_ignore_ascii_case("runtime")
        });
        // Paddle's `[memory]` instants say allocation or free in their category.
        let memory_kind = match cat_text {
            Some("Allocate") => Some(self.keys.memory_allocation),
            Some("Free") => Some(self.keys.memory_deallocation),
            _ => None,
        };
        let mut name = raw.name.take().unwrap_or(self.keys.empty);
        if self.paddle && ph != "M" {
            let text = self.strings.get(name);
            let stripped = strip_paddle_duration(text);
            if stripped.len() != text.len() {
                let stripped = stripped.to_owned();
                name = self.strings.id(&stripped);
            }
        }
        self.duplicates(raw, name);
        if let Some(cat) = raw.cat {
            // An event with an arg named `cat` too keeps its own `cat` as the category stat
            // (which the writer writes as the event's `cat`), so that neither hides the other.
            // (Interned only then: every other import's string ids stay as they were.)
            let key = if raw.args.iter().any(|a| a.key == self.keys.cat) {
                self.strings.id(CATEGORY_STAT)
            } else {
                self.keys.cat
            };
            raw.args.push(KeyArg::new(key, Arg::Str(cat)));
        }
        // The args buffer is reused from event to event; the event's args are copied to its
        // thread's buffer.
        let mut stats = std::mem::take(&mut raw.args);
        if is_launch {
            self.correlation_ids(&mut stats);
        }
        let event = Placing {
            pid,
            tid,
            name,
            ts: raw.ts.unwrap_or(0),
            gpu,
            memory_kind,
        };
        let result = self.place(raw, &mut stats, ph, event);
        stats.clear();
        raw.args = stats;
        result
    }

    /// Puts an event (its members in `raw`, its args in `stats`) on its line, by its phase.
    fn place<E: de::Error>(
        &mut self,
        raw: &mut RawEvent,
        stats: &mut Vec<KeyArg>,
        phase: &str,
        event: Placing,
    ) -> std::result::Result<(), E> {
        match phase {
            "X" => self.complete(raw, stats, event),
            "B" => self.begin(raw, stats, event),
            "E" => self.end(stats, event),
            "i" | "I" | "R" => self.instant(stats, event),
            "C" => self.counter(raw, stats, event),
            "M" => {
                let kind = self.strings.get(event.name).to_owned();
                self.metadata(kind, &event.pid, &event.tid, stats);
            }
            "b" | "S" => self.async_begin(raw, stats, event),
            "e" | "F" => self.async_end(raw, stats, event),
            "n" => self.async_instant(stats, event),
            "T" | "p" => self.async_step(raw, event),
            "s" | "t" | "f" => return self.flow_event(raw, phase, event),
            other => *self.skipped.entry(other.to_owned()).or_default() += 1,
        }
        Ok(())
    }
}

//! The trace as it is read: processes, threads and their items, open begins, flows and counters,
//! and the rules every event goes through before its phase places it (see `place`).

use std::collections::{BTreeMap, HashMap};

use profkit_xplane::constants::stats;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::de;

use crate::arg::{Arg, Args, Id, KeyArg};
use crate::async_events::AsyncKey;
use crate::event::{Item, Pending, RawEvent, event_error};
use crate::flows::FlowPoint;
use crate::intern::Interner;
use crate::kineto::is_gpu_category;
use crate::paddle::{paddle_thread, strip_paddle_duration};
use crate::time::Clock;
use crate::warnings::{WarningKind, Warnings};
use crate::{CATEGORY_STAT, PHASE_STAT, flow_stats};

/// Where an event goes within its process.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Track {
    Thread(Id),
    /// An async line: the name of its events.
    Async(u32),
}

pub(crate) struct Thread {
    pub(crate) pid: Id,
    pub(crate) track: Track,
    pub(crate) name: Option<String>,
    pub(crate) sort_index: Option<i64>,
    pub(crate) items: Vec<Item>,
    pub(crate) open: Vec<Pending>,
    /// The args of `items` and `open`.
    pub(crate) args: Args,
    /// Args flows add to items, by index in the sorted `items` (in the order they were bound):
    /// sorted by index before the XSpace is built, an item's come after its own args.
    pub(crate) flow_args: Vec<(usize, KeyArg)>,
    /// Whether an item has two flows bound, or flows bound beside flow args of its own: only then
    /// do its flow categories need [`flow_categories`].
    pub(crate) flow_care: bool,
    /// The GPU this thread is a stream of.
    pub(crate) gpu: Option<i64>,
}

#[derive(Default)]
pub(crate) struct Process {
    pub(crate) name: Option<String>,
}

/// Well-known strings, interned once.
pub(crate) struct Keys {
    pub(crate) empty: u32,
    pub(crate) name: u32,
    pub(crate) sort_index: u32,
    pub(crate) cat: u32,
    pub(crate) correlation: u32,
    pub(crate) correlation_id: u32,
    pub(crate) device: u32,
    pub(crate) start_time: u32,
    pub(crate) end_time: u32,
    pub(crate) flow_in: u32,
    pub(crate) flow_out: u32,
    pub(crate) flow_cat: u32,
    pub(crate) phase: u32,
    pub(crate) complete: u32,
    pub(crate) steps: u32,
    pub(crate) memory_allocation: u32,
    pub(crate) memory_deallocation: u32,
}

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

pub(crate) struct Trace {
    pub(crate) strings: Interner,
    pub(crate) keys: Keys,
    pub(crate) raw: RawEvent,
    pub(crate) processes: HashMap<Id, Process>,
    pub(crate) process_order: Vec<Id>,
    pub(crate) threads: Vec<Thread>,
    pub(crate) thread_index: FxHashMap<(Id, Track), usize>,
    /// Arg keys of events found to have no key twice, by their number modulo 32.
    pub(crate) distinct_keys: [Vec<u32>; 32],
    /// The threads found last ([`Trace::thread`]).
    pub(crate) recent_threads: [usize; 2],
    pub(crate) counters: Vec<(Id, Item)>,
    /// The args of `counters`.
    pub(crate) counter_args: Args,
    /// The times of the items kept.
    pub(crate) clock: Clock,
    pub(crate) async_open: HashMap<AsyncKey, Vec<(usize, Pending)>>,
    pub(crate) flows: Vec<FlowPoint>,
    pub(crate) events: u64,
    pub(crate) skipped: BTreeMap<String, u64>,
    pub(crate) warnings: Warnings,
    /// The top-level keys of Paddle's profiler were seen.
    pub(crate) paddle: bool,
    /// Paddle's clock: `ts` minus `args.start_time` of its first event, in picoseconds.
    pub(crate) paddle_base: Option<i128>,
    pub(crate) kineto: bool,
    pub(crate) decimals: u32,
    pub(crate) device_properties: Vec<serde_json::Map<String, serde_json::Value>>,
    pub(crate) distributed: Vec<(String, serde_json::Value)>,
    pub(crate) display_time_unit: Option<String>,
    pub(crate) index: usize,
    /// The arg keys of the last event with args, in order.
    pub(crate) last_keys: Vec<u32>,
}

impl Trace {
    pub(crate) fn new() -> Trace {
        let mut strings = Interner::default();
        let keys = Keys {
            empty: strings.id(""),
            name: strings.id("name"),
            sort_index: strings.id("sort_index"),
            cat: strings.id("cat"),
            correlation: strings.id("correlation"),
            correlation_id: strings.id(stats::CORRELATION_ID),
            device: strings.id("device"),
            start_time: strings.id("start_time"),
            end_time: strings.id("end_time"),
            flow_in: strings.id(flow_stats::FLOW_IN),
            flow_out: strings.id(flow_stats::FLOW_OUT),
            flow_cat: strings.id(flow_stats::FLOW_CAT),
            phase: strings.id(PHASE_STAT),
            complete: strings.id("X"),
            steps: strings.id("steps"),
            memory_allocation: strings.id("MemoryAllocation"),
            memory_deallocation: strings.id("MemoryDeallocation"),
        };
        Trace {
            strings,
            keys,
            raw: RawEvent::default(),
            processes: HashMap::new(),
            process_order: Vec::new(),
            threads: Vec::new(),
            thread_index: FxHashMap::default(),
            recent_threads: [usize::MAX; 2],
            distinct_keys: Default::default(),
            counters: Vec::new(),
            counter_args: Args::default(),
            clock: Clock::default(),
            async_open: HashMap::new(),
            flows: Vec::new(),
            events: 0,
            skipped: BTreeMap::new(),
            warnings: Warnings {
                kept: Vec::new(),
                counts: BTreeMap::new(),
            },
            paddle: false,
            paddle_base: None,
            kineto: false,
            decimals: 0,
            device_properties: Vec::new(),
            distributed: Vec::new(),
            display_time_unit: None,
            index: 0,
            last_keys: Vec::new(),
        }
    }

    pub(crate) fn process(&mut self, pid: &Id) -> &mut Process {
        if !self.processes.contains_key(pid) {
            self.process_order.push(pid.clone());
        }
        self.processes.entry(pid.clone()).or_default()
    }

    pub(crate) fn thread(&mut self, pid: &Id, track: Track) -> usize {
        // A trace goes back and forth between a few threads (Kineto's host thread and GPU
        // stream): those found last are compared before the key is hashed.
        for &i in &self.recent_threads {
            if let Some(t) = self.threads.get(i) {
                if t.track == track && t.pid == *pid {
                    return i;
                }
            }
        }
        let key = (pid.clone(), track);
        if let Some(&i) = self.thread_index.get(&key) {
            self.recent_threads.rotate_right(1);
            if let Some(slot) = self.recent_threads.first_mut() {
                *slot = i;
            }
            return i;
        }
        self.process(pid);
        self.threads.push(Thread {
            pid: key.0.clone(),
            track: key.1.clone(),
            name: None,
            sort_index: None,
            items: Vec::new(),
            open: Vec::new(),
            args: Args::default(),
            flow_args: Vec::new(),
            flow_care: false,
            gpu: None,
        });
        let index = self.threads.len() - 1;
        self.thread_index.insert(key, index);
        index
    }

    /// Keeps args of `thread` in its [`Args`]: where they are.
    pub(crate) fn keep_args(&mut self, thread: usize, args: &[KeyArg]) -> (u64, u32) {
        match self.threads.get_mut(thread) {
            Some(t) => t.args.push(args),
            None => (0, 0),
        }
    }

    /// Keeps an item of `thread` (its args kept already).
    pub(crate) fn push_item(
        &mut self,
        thread: usize,
        name: u32,
        (at, len): (u64, u32),
        start: i128,
        end: i128,
    ) {
        self.events += 1;
        let (start, end) = self.clock.keep(start, end);
        if let Some(t) = self.threads.get_mut(thread) {
            t.items.push(Item {
                name,
                len,
                at,
                start,
                end,
            });
        }
    }

    /// Closes a begin of `thread` at `end`, the end's args added to the begin's: an item.
    pub(crate) fn close(&mut self, thread: usize, mut item: Pending, args: &[KeyArg], end: i128) {
        if let Some(t) = self.threads.get_mut(thread) {
            t.args.extend(&mut item.at, &mut item.len, args);
        }
        let at = (item.at, item.len);
        self.push_item(thread, item.name, at, item.start, end.max(item.start));
    }

    /// A begin of `thread` with these args, waiting for its end.
    pub(crate) fn pending(
        &mut self,
        thread: usize,
        name: u32,
        start: i128,
        args: &[KeyArg],
    ) -> Pending {
        let (at, len) = self.keep_args(thread, args);
        Pending {
            name,
            len,
            at,
            start,
        }
    }

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

//! The trace as it is read: processes, threads and their items, open begins, flows and counters,
//! and the rules every event goes through before its phase places it (see `place`).

use std::collections::{BTreeMap, HashMap};

use profkit_xplane::constants::stats;
use rustc_hash::FxHashMap;

use crate::arg::{Args, Id, KeyArg};
use crate::event::{FlowPoint, Item, Pending, RawEvent};
use crate::intern::Interner;
use crate::time::Clock;
use crate::warnings::Warnings;
use crate::{PHASE_STAT, flow_stats};

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

/// Async events waiting for their end: by (pid, category, id, scope).
pub(crate) type AsyncKey = (Id, u32, String, String);

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
}

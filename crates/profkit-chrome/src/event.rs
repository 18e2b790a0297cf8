//! One event as read: its members, reused from event to event, and what a line keeps of it.

use crate::arg::{Arg, Id, KeyArg};
use crate::members::{Field, Phase};

/// The members of one event, reused from event to event.
#[derive(Default)]
pub(crate) struct RawEvent {
    pub(crate) members: usize,
    /// The event's known members read so far, a bit per [`Field`].
    pub(crate) seen: u32,
    /// The first known member that came twice.
    pub(crate) duplicate: Option<&'static str>,
    pub(crate) ph: Option<Phase>,
    pub(crate) ph_not_string: bool,
    pub(crate) name: Option<u32>,
    pub(crate) cat: Option<u32>,
    pub(crate) pid: Option<Id>,
    pub(crate) tid: Option<Id>,
    pub(crate) ts: Option<i128>,
    pub(crate) dur: Option<i128>,
    pub(crate) id: Option<String>,
    /// The allocation of the last `id`, for the next (set by the fast path).
    pub(crate) spare_id: String,
    pub(crate) scope: Option<String>,
    pub(crate) bp_enclosing: bool,
    pub(crate) bind_id: Option<String>,
    pub(crate) flow_in: bool,
    pub(crate) flow_out: bool,
    pub(crate) args: Vec<KeyArg>,
}

impl RawEvent {
    pub(crate) fn clear(&mut self) {
        self.members = 0;
        self.seen = 0;
        self.duplicate = None;
        self.ph = None;
        self.ph_not_string = false;
        self.name = None;
        self.cat = None;
        self.pid = None;
        self.tid = None;
        self.ts = None;
        self.dur = None;
        if let Some(id) = self.id.take() {
            self.spare_id = id;
        }
        self.scope = None;
        self.bp_enclosing = false;
        self.bind_id = None;
        self.flow_in = false;
        self.flow_out = false;
        self.args.clear();
    }

    /// Counts a member, and notes a known one that came before.
    pub(crate) fn member(&mut self, field: Field) {
        self.members += 1;
        if let Some(key) = field.key() {
            let bit = 1u32 << (field as u32);
            if self.seen & bit != 0 && self.duplicate.is_none() {
                self.duplicate = Some(key);
            }
            self.seen |= bit;
        }
    }

    pub(crate) fn arg(&self, key: u32) -> Option<Arg> {
        self.args
            .iter()
            .rev()
            .find(|a| a.key == key)
            .map(|a| a.arg())
    }
}

/// Why an event read whole cannot be taken (checked before anything of it is kept, so that the
/// fast path can leave it to the visitors, which report it at its place).
pub(crate) fn event_error(raw: &RawEvent) -> Option<String> {
    if raw.members == 0 {
        return None;
    }
    if raw.ph_not_string {
        return Some("the phase (\"ph\") must be a string".to_owned());
    }
    let Some(phase) = &raw.ph else {
        return Some("the event has no \"ph\" (phase)".to_owned());
    };
    let ph = phase.as_str();
    let timed = matches!(
        ph,
        "X" | "B" | "E" | "i" | "I" | "R" | "C" | "b" | "S" | "e" | "F" | "n" | "s" | "t" | "f"
    );
    if timed && raw.ts.is_none() {
        return Some(format!("the {ph:?} event has no \"ts\""));
    }
    if matches!(ph, "s" | "t" | "f") && raw.id.is_none() {
        return Some(format!("the flow event {ph:?} has no \"id\""));
    }
    None
}

/// One event on a line. Its args are `len` of its thread's [`Args`] from `at` (the counters
/// have theirs): a store per thread instead of an allocation per event. Times are picoseconds
/// from the start of the first event kept ([`Clock`]): 32 bytes an item where exact 128-bit
/// times took 48, and millions are kept until the XSpace is built.
#[derive(Clone, Copy)]
pub(crate) struct Item {
    pub(crate) name: u32,
    pub(crate) len: u32,
    pub(crate) at: u64,
    pub(crate) start: i64,
    pub(crate) end: i64,
}

/// A begin waiting for its end (`B`, async `b`/`S`), with its exact start: only these few are
/// kept with 128-bit times, which the order of the warnings about unended ones needs.
pub(crate) struct Pending {
    pub(crate) name: u32,
    pub(crate) len: u32,
    pub(crate) at: u64,
    pub(crate) start: i128,
}

/// A flow event, bound to a slice once all are read.
pub(crate) struct FlowPoint {
    pub(crate) thread: usize,
    pub(crate) ts: i128,
    pub(crate) phase: u8,
    pub(crate) enclosing: bool,
    /// The flow's id: a number, or an interned string.
    pub(crate) id: Arg,
    pub(crate) cat: u32,
}

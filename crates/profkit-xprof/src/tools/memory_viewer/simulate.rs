//! The replay of a heap simulator trace (xprof's `ProcessHeapSimulatorTrace` and
//! `HeapSimulatorStats`): the heap's size at each event, its peak, the buffers live at the peak in
//! the order they were allocated, and each buffer's span.
//!
//! An `ALLOC` counts a reference to the buffer (to its canonical one when it shares one) and adds
//! its size; a `FREE` drops a reference and, at the last one, takes the canonical buffer's size
//! off and ends its span; a `SHARE_WITH` makes the buffer share the canonical buffer's memory: a
//! reference more, and when that memory was free (its first reference), its size is added again
//! with the sharing buffer shown in its stead. The peak's live buffers are taken by replaying the
//! trace a second time up to the peak's event, which keeps the replay linear.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::Wrapper;

const ALLOC: i32 = 0;
const FREE: i32 = 1;
const SHARE_WITH: i32 = 2;

/// A buffer's replay state (the reference counting of xprof's `LogicalBufferStruct`).
#[derive(Debug, Default, Clone)]
pub(super) struct State {
    pub(super) ref_count: i64,
    /// The buffer it shares memory with (position in the wrapper's buffers).
    pub(super) canonical: Option<usize>,
    /// (first event, last event) of its life.
    pub(super) span: Option<(u64, u64)>,
}

/// The replay's outcome.
#[derive(Debug, Default)]
pub(super) struct Sim {
    pub(super) state: Vec<State>,
    pub(super) heap: Vec<i64>,
    pub(super) unpadded: Vec<i64>,
    pub(super) names: Vec<String>,
    heap_now: i64,
    unpadded_now: i64,
    pub(super) peak: i64,
    pub(super) peak_unpadded: i64,
    pub(super) peak_position: i64,
    /// The event at which the last new peak was reached.
    peak_event: Option<usize>,
    /// The logical buffer ids live at the peak, in allocation order.
    pub(super) peak_buffers: Vec<i64>,
    /// The buffer shown for a canonical buffer at the peak (its latest sharer).
    pub(super) peak_display: HashMap<i64, i64>,
    /// Buffers (positions) the trace's events name.
    pub(super) seen: BTreeSet<usize>,
    seen_allocations: BTreeSet<usize>,
    /// Live buffer ids by allocation sequence, and each id's sequence numbers.
    live: BTreeMap<u64, i64>,
    live_seq: HashMap<i64, Vec<u64>>,
    next_seq: u64,
    display: HashMap<i64, i64>,
}

/// Why a trace cannot be replayed (xprof's messages).
pub(super) type Failure = String;

/// Replays the heap simulator trace of memory space `color`, if it has one.
pub(super) fn run(wrapper: &Wrapper<'_>, color: i64) -> Result<Sim, Failure> {
    let Some(trace) = wrapper.trace_of(color) else {
        return Ok(Sim::default());
    };
    let mut sim = replay(wrapper, trace, None)?;
    sim.heap.push(sim.heap_now);
    sim.unpadded.push(sim.unpadded_now);
    sim.names.push(String::new());
    if sim.seen_allocations.len() != 1 {
        return Err(format!(
            "All heap simulation should work out of a single buffer allocation, actual \
             seen_buffer_allocations.size():{}",
            sim.seen_allocations.len()
        ));
    }
    if let Some(event) = sim.peak_event {
        let at_peak = replay(wrapper, trace, Some(event))?;
        sim.peak_buffers = at_peak.live.values().copied().collect();
        sim.peak_display = at_peak.display;
    }
    Ok(sim)
}

/// Replays the trace, through event `stop` when given.
fn replay(wrapper: &Wrapper<'_>, trace: usize, stop: Option<usize>) -> Result<Sim, Failure> {
    let Some(trace) = wrapper.traces().get(trace) else {
        return Ok(Sim::default());
    };
    let events = trace.events.len() as u64;
    let mut sim = Sim {
        state: vec![State::default(); wrapper.buffers.len()],
        ..Sim::default()
    };
    for (i, event) in trace.events.iter().enumerate() {
        if stop.is_some_and(|s| i > s) {
            break;
        }
        sim.heap.push(sim.heap_now);
        sim.unpadded.push(sim.unpadded_now);
        sim.names.push(event.instruction_name.clone());
        let now = sim.heap.len() as u64 - 1;
        let Some(b) = wrapper.buffer(event.buffer_id) else {
            continue;
        };
        sim.seen.insert(b);
        sim.seen_allocations.insert(wrapper.buffers[b].allocation);
        match event.kind {
            ALLOC => {
                sim.inc(b)?;
                sim.increase(wrapper, b, Some(events.wrapping_sub(1)), i);
            }
            FREE => {
                let count = sim.dec(b)?;
                if count < 0 {
                    return Err(format!(
                        "Buffer {}is freed multiple times.",
                        wrapper.buffers[b].proto.id
                    ));
                }
                if count == 0 {
                    let root = sim.root(b)?;
                    let taken_over = sim.display.contains_key(&wrapper.buffers[root].proto.id);
                    sim.decrease(wrapper, root, !taken_over)?;
                }
                let state = &mut sim.state[b];
                if state.canonical.is_some() {
                    if let Some(span) = &mut state.span {
                        span.1 = now;
                    }
                }
            }
            SHARE_WITH => {
                let Some(canonical) = wrapper.buffer(event.share_with_canonical_id) else {
                    continue;
                };
                sim.state[b].canonical = Some(canonical);
                let count = sim.inc(canonical)?;
                if count == 1 {
                    // The canonical buffer's memory was free: the sharer takes its place.
                    let root = sim.root(canonical)?;
                    sim.display
                        .insert(wrapper.buffers[root].proto.id, wrapper.buffers[b].proto.id);
                    sim.state[b].span = Some((now, events.wrapping_sub(1)));
                    sim.increase(wrapper, root, None, i);
                }
            }
            kind => return Err(format!("Unhandled event kind: {kind}")),
        }
    }
    Ok(sim)
}

impl Sim {
    /// The buffer at the end of `b`'s chain of shared buffers; an error for a cycle.
    fn root(&self, mut b: usize) -> Result<usize, Failure> {
        for _ in 0..=self.state.len() {
            match self.state.get(b).and_then(|s| s.canonical) {
                Some(next) => b = next,
                None => return Ok(b),
            }
        }
        Err("a buffer shares memory with itself through a cycle of SHARE_WITH events".to_owned())
    }

    fn inc(&mut self, b: usize) -> Result<i64, Failure> {
        let root = self.root(b)?;
        let state = &mut self.state[root];
        state.ref_count = state.ref_count.wrapping_add(1);
        Ok(state.ref_count)
    }

    fn dec(&mut self, b: usize) -> Result<i64, Failure> {
        let root = self.root(b)?;
        let state = &mut self.state[root];
        state.ref_count = state.ref_count.wrapping_sub(1);
        Ok(state.ref_count)
    }

    /// Adds a buffer to the heap (`IncreaseMemoryUsage`); with `span_end`, starts its span.
    fn increase(&mut self, wrapper: &Wrapper<'_>, b: usize, span_end: Option<u64>, event: usize) {
        let buffer = &wrapper.buffers[b];
        let id = buffer.proto.id;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.live.insert(seq, id);
        self.live_seq.entry(id).or_default().push(seq);
        self.heap_now = self.heap_now.wrapping_add(buffer.proto.size);
        self.unpadded_now = self.unpadded_now.wrapping_add(buffer.unpadded);
        if self.heap_now > self.peak {
            self.peak = self.heap_now;
            self.peak_position = self.heap.len() as i64 - 1;
            self.peak_unpadded = self.unpadded_now;
            self.peak_event = Some(event);
        }
        if let Some(end) = span_end {
            self.state[b].span = Some((self.heap.len() as u64 - 1, end));
        }
    }

    /// Takes a buffer off the heap (`DecreaseMemoryUsage`): every live entry of its id and its
    /// size; with `end_span`, ends its span.
    fn decrease(&mut self, wrapper: &Wrapper<'_>, b: usize, end_span: bool) -> Result<(), Failure> {
        let buffer = &wrapper.buffers[b];
        for seq in self.live_seq.remove(&buffer.proto.id).unwrap_or_default() {
            self.live.remove(&seq);
        }
        self.heap_now = self.heap_now.wrapping_sub(buffer.proto.size);
        if self.heap_now < 0 {
            return Err(format!(
                "Heap size should be non-negative, but get: {}",
                self.heap_now
            ));
        }
        self.unpadded_now = self.unpadded_now.wrapping_sub(buffer.unpadded);
        // The canonical buffer's span ends here unless a sharer took its memory over after it
        // was freed: that sharer's span ends instead (in `replay`), as xprof 2.24.2's outputs
        // show.
        let now = self.heap.len() as u64 - 1;
        if end_span {
            if let Some(span) = &mut self.state[b].span {
                span.1 = now;
            }
        }
        Ok(())
    }
}

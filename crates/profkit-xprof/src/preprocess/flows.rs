//! The flows xprof adds before its trace viewer reads a space (TSL's `AddFlowsToXplane`, run by
//! `PreprocessSingleHostXSpace` on every plane of a space it groups, after `PreprocessXPlane`).
//!
//! A flow is a `flow` stat whose value packs, as TSL's `XFlow` does, a direction in bits 0-1 (1
//! in, 2 out), a 56-bit id in bits 2-57 and a category (a TSL context type) in bits 58-63. Events
//! sharing an id are linked. Each event gets, in this order:
//! 1. for a `correlation_id` stat: a flow of category `GpuLaunch` (9), out of a host plane and
//!    into a device plane (TSL's `IsDevicePlane`), keyed by the stat's `uint64_value` (0 when the
//!    stat holds another kind: TSL reads that field whatever the stat holds);
//! 2. for `_pt` and `_p` stats: an outgoing flow of the producer's context type (types past
//!    TSL's last one count as generic, 0), keyed by the type and id;
//! 3. for `_ct` and `_c` stats: an incoming flow, likewise.
//!
//! The contexts `PreprocessXPlane` gives the TPU runtime's events (see `runtime`) take the place
//! of the event's own, with TSL's types (`Legacy` 1, `TpuStream` 11, `TpuLaunch` 12). The trace
//! viewer shows one `flow` arg per event, the last flow stat's: the consumer's, else the
//! producer's, else the launch's, else one the event carried.
//!
//! xprof's ids are salted hashes, different in every process; profkit's are deterministic: the
//! 56 low bits of SplitMix64's finaliser chained over the link's kind (1 for a correlation, 2 for
//! a context), the context type and the key, so that the same file always gives the same ids and
//! the same events are linked as by xprof.

use profkit_xplane::flow::{Flow, IN as FLOW_IN, OUT as FLOW_OUT};
use profkit_xplane::xview::StatValueView;
use profkit_xplane::{XLine, XPlane};

use crate::indexed::Event;

use super::derived::is_derived_line_id;
use super::launch_stats::LAUNCH_LINE_ID;
use super::runtime::{self, RuntimeStats};
use super::stats::stat_id;

/// TSL's `ContextType::kGpuLaunch`.
const GPU_LAUNCH: u64 = 9;
/// TSL's `ContextType::kLegacy`, `kTpuStream` and `kTpuLaunch`.
const LEGACY: u64 = 1;
const TPU_STREAM: u64 = 11;
const TPU_LAUNCH: u64 = 12;
/// TSL's `ContextType::kLastContextType` in xprof 2.24.2 (seen with xprof itself: type 17 keeps
/// its own flows, 18 and above are generic): a context type past it counts as generic.
const LAST_CONTEXT_TYPE: u64 = 17;

/// What makes the flows of one plane's events.
pub(crate) struct PlaneFlows {
    correlation_id: Option<i64>,
    producer_type: Option<i64>,
    producer_id: Option<i64>,
    consumer_type: Option<i64>,
    consumer_id: Option<i64>,
    /// The direction of a launch's flow on this plane.
    launch_direction: u64,
    /// The contexts of the TPU runtime's events, when the plane has any.
    runtime: Option<RuntimeStats>,
}

impl PlaneFlows {
    /// The flows of a plane (after `PreprocessXPlane`'s rewrites), `None` when it can have none.
    pub(crate) fn of(plane: &XPlane) -> Option<PlaneFlows> {
        let flows = PlaneFlows {
            correlation_id: stat_id(plane, "correlation_id"),
            producer_type: stat_id(plane, "_pt"),
            producer_id: stat_id(plane, "_p"),
            consumer_type: stat_id(plane, "_ct"),
            consumer_id: stat_id(plane, "_c"),
            launch_direction: if super::facts::is_device_plane(&plane.name) {
                FLOW_IN
            } else {
                FLOW_OUT
            },
            runtime: runtime::active(plane).then(|| RuntimeStats::of(plane)),
        };
        let any = flows.correlation_id.is_some()
            || (flows.producer_type.is_some() && flows.producer_id.is_some())
            || (flows.consumer_type.is_some() && flows.consumer_id.is_some())
            || flows.runtime.is_some();
        any.then_some(flows)
    }

    /// The value of the `flow` stat the trace viewer shows for an event named `name` on `line`,
    /// if xprof gives it one.
    pub(crate) fn flow(&self, line: &XLine, event: &Event<'_>, name: &str) -> Option<u64> {
        // Lines preprocessing derives come after the flows: their events (which may copy a
        // `correlation_id`) get none.
        if is_derived_line_id(line.id) || line.id == LAUNCH_LINE_ID {
            return None;
        }
        let mut correlation = None;
        let (mut pt, mut p, mut ct, mut c) = (None, None, None, None);
        if event.has_stats() {
            for stat in event.stats() {
                let is = |id: Option<i64>| id == Some(stat.metadata_id);
                if is(self.correlation_id) {
                    correlation = Some(match stat.value {
                        Some(StatValueView::Uint64(v)) => v,
                        _ => 0,
                    });
                } else if is(self.producer_type) {
                    pt = Some(stat.int_or_uint());
                } else if is(self.consumer_type) {
                    ct = Some(stat.int_or_uint());
                } else if is(self.producer_id) {
                    p = Some(stat.int_or_uint());
                } else if is(self.consumer_id) {
                    c = Some(stat.int_or_uint());
                }
            }
        }
        let mut producer = pt.zip(p).map(|(t, id)| (safe_context_type(t), id));
        let mut consumer = ct.zip(c).map(|(t, id)| (safe_context_type(t), id));
        if let Some(runtime) = &self.runtime {
            let (made_producer, made_consumer) = runtime.contexts(name, &line.name, event.stats());
            if let Some(context) = made_producer {
                producer = Some(tsl_context(context));
            }
            if let Some(context) = made_consumer {
                consumer = Some(tsl_context(context));
            }
        }
        if let Some((category, id)) = consumer {
            return Some(encode(context_id(category, id), FLOW_IN, category));
        }
        if let Some((category, id)) = producer {
            return Some(encode(context_id(category, id), FLOW_OUT, category));
        }
        correlation.map(|id| encode(mix(&[1, id]), self.launch_direction, GPU_LAUNCH))
    }
}

/// TSL's `GetSafeContextType`: the type as a 32-bit number, generic (0) past the last one.
fn safe_context_type(ty: u64) -> u64 {
    let ty = u64::from(ty as u32);
    if ty > LAST_CONTEXT_TYPE { 0 } else { ty }
}

/// A context of the TPU runtime's rewrites (profkit's own types) as TSL's type and an id.
fn tsl_context((ty, id): runtime::Context) -> (u64, u64) {
    let category = match ty {
        runtime::LEGACY => LEGACY,
        runtime::TPU_STREAM => TPU_STREAM,
        _ => TPU_LAUNCH,
    };
    (category, id)
}

fn context_id(category: u64, id: u64) -> u64 {
    mix(&[2, category, id])
}

/// A `flow` stat's value (see [`profkit_xplane::flow`]).
fn encode(id: u64, direction: u64, category: u64) -> u64 {
    Flow {
        id,
        direction,
        category,
    }
    .encode()
}

/// SplitMix64's finaliser chained over the words: deterministic, and spread well enough that
/// distinct keys do not share 56 bits in practice.
fn mix(words: &[u64]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for &w in words {
        h ^= w;
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
    }
    h
}

/// The parts of a `flow` stat's value: (id, direction, category), as `XFlow` decodes it (see
/// [`profkit_xplane::flow::Flow::decode`]).
pub fn decode(value: u64) -> (u64, u64, u64) {
    let flow = Flow::decode(value);
    (flow.id, flow.direction, flow.category)
}

/// Trace viewer JSON with each `flow` arg's id renamed by first appearance, for comparing
/// xprof's output with another conversion's (profkit's, or xprof's in another process): xprof salts its ids per process, so what can be compared is which
/// events share an id (the partition the ids make), each flow's direction and its category.
/// `"flow": "<value>"` becomes `"flow": "F<n>/<direction>/<category>"`, `n` counting the
/// distinct ids in the order they first appear (the value decoded as TSL's `XFlow`).
pub fn ids_renamed(text: &str) -> String {
    const KEY: &str = "\"flow\": \"";
    let mut ids: rustc_hash::FxHashMap<u64, usize> = rustc_hash::FxHashMap::default();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(KEY) {
        let value_start = start + KEY.len();
        out.push_str(&rest[..value_start]);
        rest = &rest[value_start..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<u64>() {
            Ok(value) if rest[digits..].starts_with('"') => {
                let (id, direction, category) = decode(value);
                let next = ids.len();
                let n = *ids.entry(id).or_insert(next);
                out.push_str(&format!("F{n}/{direction}/{category}"));
                rest = &rest[digits..];
            }
            _ => {}
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_xflow() {
        let value = encode(0x00ab_cdef_0123_4567, FLOW_OUT, GPU_LAUNCH);
        assert_eq!(decode(value), (0x00ab_cdef_0123_4567, FLOW_OUT, GPU_LAUNCH));
        // The real ROCm profile's first launch: out, GpuLaunch.
        let (_, direction, category) = decode(2_681_798_526_667_364_826);
        assert_eq!((direction, category), (FLOW_OUT, GPU_LAUNCH));
    }

    #[test]
    fn context_types_past_the_last_are_generic() {
        assert_eq!(safe_context_type(3), 3);
        assert_eq!(safe_context_type(LAST_CONTEXT_TYPE + 1), 0);
        assert_eq!(safe_context_type((1 << 32) + 2), 2);
    }

    #[test]
    fn renames_ids_by_first_appearance() {
        let a = encode(77, FLOW_OUT, GPU_LAUNCH);
        let b = encode(5, FLOW_IN, GPU_LAUNCH);
        let c = encode(77, FLOW_IN, GPU_LAUNCH);
        let text = format!("{{\"flow\": \"{a}\"}}\n{{\"flow\": \"{b}\"}}\n{{\"flow\": \"{c}\"}}\n");
        assert_eq!(
            ids_renamed(&text),
            "{\"flow\": \"F0/2/9\"}\n{\"flow\": \"F1/1/9\"}\n{\"flow\": \"F0/1/9\"}\n"
        );
        assert_eq!(ids_renamed("{\"flow\": \"x\"}"), "{\"flow\": \"x\"}");
    }

    #[test]
    fn ids_are_deterministic_and_distinct() {
        assert_eq!(mix(&[1, 7]), mix(&[1, 7]));
        assert_ne!(
            mix(&[1, 7]) & profkit_xplane::flow::ID_MASK,
            mix(&[1, 8]) & profkit_xplane::flow::ID_MASK
        );
        assert_ne!(context_id(1, 7), context_id(2, 7));
    }
}

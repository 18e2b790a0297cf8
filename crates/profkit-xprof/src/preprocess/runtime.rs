//! The TPU runtime's events as TSL's `PreprocessXPlane` rewrites them before grouping: the
//! `run_id` of host program launches cut to its low 27 bits (`HostRunIdMutatorFactory`), and
//! producer/consumer contexts made from their stats (`XplaneConnectedEventMutatorFactory`,
//! `TpuModuleLineMutatorFactory`):
//!
//! - `ExecutorState::Process` to `TpuExecuteOp` by (`id`, `iter_num`);
//! - `EnqueueRequestLocked` to its requests (`RunProgramRequest`, `TransferH2DRequest`, ...) by
//!   (`request_id`, `queue_addr`);
//! - `DoEnqueueProgram` to `CompleteCallbacks`, and to the `XLA Modules` events of the TensorCore
//!   plane it launched on, by (device ordinal, `queue_id`, `run_id`, `core_type` or 0).
//!
//! TSL's context ids are hashes of those tuples; profkit keys the contexts by the tuples
//! themselves in context types of its own, which links the same events (the ids are hidden stats
//! the trace viewer never shows).

use std::hash::{Hash, Hasher};

use profkit_xplane::{XPlane, x_stat};

use crate::indexed::Stat;

use super::stats::{int_or_uint, stat_id};
use super::tpu::tensor_core_id;

/// TSL's `kRunIdMask`.
const RUN_ID_MASK: u64 = (1 << 27) - 1;

/// Events whose `run_id` TSL cuts to [`RUN_ID_MASK`].
const RUN_ID_EVENTS: &[&str] = &[
    "DoEnqueueProgram",
    "CompleteCallbacks",
    "DoEnqueueContinuationProgram",
];

/// The requests `EnqueueRequestLocked` produces.
const QUEUE_REQUESTS: &[&str] = &[
    "RunProgramRequest",
    "HostCallbackRequest",
    "TransferH2DRequest",
    "TransferPreprocessedH2DRequest",
    "TransferD2HRequest",
    "OnDeviceSendRequest",
    "OnDeviceRecvRequest",
    "OnDeviceSendRecvLocalRequest",
    "CustomWait",
    "OnDeviceSendRequestMulti",
    "OnDeviceRecvRequestMulti",
    "PjrtAsyncWait",
];

/// profkit's context types for these links (outside any `_pt`/`_ct` a profiler writes).
pub(crate) const LEGACY: i64 = i64::MIN + 1;
pub(crate) const TPU_STREAM: i64 = i64::MIN + 2;
pub(crate) const TPU_LAUNCH: i64 = i64::MIN + 3;

/// Whether any event of a plane with these names is rewritten here.
pub(crate) fn has_runtime_events<'a>(mut event_names: impl Iterator<Item = &'a str>) -> bool {
    event_names.any(|n| {
        RUN_ID_EVENTS.contains(&n)
            || QUEUE_REQUESTS.contains(&n)
            || matches!(n, "EnqueueRequestLocked" | "TpuExecuteOp")
    })
}

/// Whether `PreprocessXPlane` gives contexts to some events of the plane (see
/// [`RuntimeStats::contexts`]).
pub(crate) fn active(plane: &XPlane) -> bool {
    has_runtime_events(plane.event_metadata.values().map(|m| m.name.as_str()))
        || (tensor_core_id(&plane.name).is_some()
            && plane.lines.iter().any(|l| l.name == "XLA Modules"))
}

/// Cuts the `run_id` of the host's program launches (`HostRunIdMutatorFactory`).
pub(crate) fn fix_run_ids(plane: &mut XPlane) {
    let Some(run_id) = stat_id(plane, "run_id") else {
        return;
    };
    let ids: Vec<i64> = plane
        .event_metadata
        .iter()
        .filter(|(_, m)| RUN_ID_EVENTS.contains(&m.name.as_str()))
        .map(|(id, _)| *id)
        .collect();
    if ids.is_empty() {
        return;
    }
    for line in &mut plane.lines {
        for event in &mut line.events {
            if !ids.contains(&event.metadata_id) {
                continue;
            }
            if let Some(stat) = event.stats.iter_mut().find(|s| s.metadata_id == run_id) {
                let fixed = int_or_uint(stat) & RUN_ID_MASK;
                stat.value = Some(x_stat::Value::Int64Value(fixed as i64));
            }
        }
    }
}

/// A context as (type, id).
pub(crate) type Context = (i64, u64);
/// An event's producer and consumer contexts.
pub(crate) type Contexts = (Option<Context>, Option<Context>);

/// The stat ids the rewritten contexts read, for one plane.
pub(crate) struct RuntimeStats {
    step_id: Option<i64>,
    iter_num: Option<i64>,
    request_id: Option<i64>,
    queue_addr: Option<i64>,
    device_ordinal: Option<i64>,
    queue_id: Option<i64>,
    run_id: Option<i64>,
    core_type: Option<i64>,
    /// The device ordinal of a TensorCore plane (its `XLA Modules` line's consumers).
    plane_ordinal: Option<u64>,
}

impl RuntimeStats {
    pub(crate) fn of(plane: &XPlane) -> RuntimeStats {
        RuntimeStats {
            step_id: stat_id(plane, "id"),
            iter_num: stat_id(plane, "iter_num"),
            request_id: stat_id(plane, "request_id"),
            queue_addr: stat_id(plane, "queue_addr"),
            device_ordinal: stat_id(plane, "device_ordinal"),
            queue_id: stat_id(plane, "queue_id"),
            run_id: stat_id(plane, "run_id"),
            core_type: stat_id(plane, "core_type"),
            plane_ordinal: tensor_core_id(&plane.name).and_then(|id| u64::try_from(id).ok()),
        }
    }

    /// The producer and consumer contexts `PreprocessXPlane` gives an event named `name` on a
    /// line named `line`, as (type, id) keys; they replace any the event carries.
    pub(crate) fn contexts<'a>(
        &self,
        name: &str,
        line: &str,
        stats: impl Iterator<Item = Stat<'a>> + Clone,
    ) -> Contexts {
        let get = |id: Option<i64>| -> Option<u64> {
            let id = id?;
            stats
                .clone()
                .find(|s| s.metadata_id == id)
                .map(|s| s.int_or_uint())
        };
        // Every accessor's stat metadata must exist on the plane, and the event hold each stat.
        let all = |ids: &[Option<i64>]| -> Option<Vec<u64>> {
            if ids.iter().any(Option::is_none) {
                return None;
            }
            ids.iter().map(|&id| get(id)).collect()
        };
        let launch = |run_id: u64| -> Option<Context> {
            let ordinal = get(self.device_ordinal)?;
            let queue = get(self.queue_id)?;
            let core = get(self.core_type).unwrap_or(0);
            self.device_ordinal?;
            self.queue_id?;
            Some((TPU_LAUNCH, key(&[ordinal, queue, run_id, core])))
        };
        match name {
            "ExecutorState::Process" => (
                all(&[self.step_id, self.iter_num]).map(|v| (LEGACY, key(&v))),
                None,
            ),
            "TpuExecuteOp" => (
                None,
                all(&[self.step_id, self.iter_num]).map(|v| (LEGACY, key(&v))),
            ),
            "EnqueueRequestLocked" => (
                all(&[self.request_id, self.queue_addr]).map(|v| (TPU_STREAM, key(&v))),
                None,
            ),
            n if QUEUE_REQUESTS.contains(&n) => (
                None,
                all(&[self.request_id, self.queue_addr]).map(|v| (TPU_STREAM, key(&v))),
            ),
            "DoEnqueueProgram" => (
                self.run_id
                    .and_then(|_| get(self.run_id))
                    .and_then(|r| launch(r & RUN_ID_MASK)),
                None,
            ),
            "CompleteCallbacks" => (
                None,
                self.run_id
                    .and_then(|_| get(self.run_id))
                    .and_then(|r| launch(r & RUN_ID_MASK)),
            ),
            _ if line == "XLA Modules" => {
                let (Some(ordinal), Some(_), Some(_)) =
                    (self.plane_ordinal, self.queue_id, self.run_id)
                else {
                    return (None, None);
                };
                let (Some(run), Some(queue)) = (get(self.run_id), get(self.queue_id)) else {
                    return (None, None);
                };
                let core = get(self.core_type).unwrap_or(0);
                (None, Some((TPU_LAUNCH, key(&[ordinal, queue, run, core]))))
            }
            _ => (None, None),
        }
    }
}

/// A context id for a tuple of stat values.
fn key(values: &[u64]) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    values.hash(&mut hasher);
    hasher.finish()
}

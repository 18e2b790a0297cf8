//! What step events read of a plane, resolved once per plane rather than per event: the stat
//! metadata ids of the stats they read (compared as ids, not names) and what each event
//! metadata's name says of the event's type. Events are read as [`Event`]s: the host threads'
//! in their indexed plane, the devices' owned (`Event::Owned`), by the same rules.

use profkit_xplane::XPlane;
use profkit_xplane::visitor::StatValueRef;
use rustc_hash::FxHashMap;

use super::super::event_span::{Span, event_type::*};
use crate::indexed::{Event, Stat};
use crate::preprocess::Mark;
use crate::preprocess::derived::tf_op::{self, Category};

/// The stats step events read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StatKind {
    CorrelationId,
    GroupId,
    StepName,
    StageName,
    ConsumerType,
    ConsumerId,
    ProducerType,
    ProducerId,
    Shape,
    MemcpyDetails,
    DeviceOffsetPs,
    DeviceDurationPs,
}

impl StatKind {
    pub(super) fn of(name: &str) -> Option<Self> {
        Some(match name {
            "correlation_id" => Self::CorrelationId,
            "group_id" => Self::GroupId,
            "step_name" => Self::StepName,
            "input_pipeline_stage_name" => Self::StageName,
            "_ct" => Self::ConsumerType,
            "_c" => Self::ConsumerId,
            "_pt" => Self::ProducerType,
            "_p" => Self::ProducerId,
            "shape" => Self::Shape,
            "memcpy_details" => Self::MemcpyDetails,
            "device_offset_ps" => Self::DeviceOffsetPs,
            "device_duration_ps" => Self::DeviceDurationPs,
            _ => return None,
        })
    }
}

/// The largest stat metadata id looked up in a table indexed by id.
const DENSE_IDS: usize = 1 << 16;

/// A plane's stat metadata ids of the stats step events read, resolved once per plane: a stat
/// is named by its metadata (several ids may share a name, and an id that resolves to nothing
/// names no stat), so comparing ids finds the same stats as comparing names, without a map
/// lookup per stat of every event.
pub(super) struct StatIds<'a> {
    plane: &'a XPlane,
    /// By id, ascending.
    ids: Vec<(i64, StatKind)>,
    /// By id, when the ids are few and small enough (as writers number them).
    dense: Vec<Option<StatKind>>,
}

impl<'a> StatIds<'a> {
    pub(super) fn new(plane: &'a XPlane) -> Self {
        let ids = plane
            .stat_metadata
            .iter()
            .filter_map(|(id, md)| Some((*id, StatKind::of(&md.name)?)))
            .collect::<Vec<_>>();
        let mut dense = Vec::new();
        if ids.first().is_some_and(|e| e.0 >= 0) {
            if let Some(max) = ids.last().and_then(|e| usize::try_from(e.0).ok()) {
                if max < DENSE_IDS {
                    dense = vec![None; max + 1];
                    for (id, kind) in &ids {
                        if let Some(slot) = usize::try_from(*id).ok().and_then(|i| dense.get_mut(i))
                        {
                            *slot = Some(*kind);
                        }
                    }
                }
            }
        }
        Self { plane, ids, dense }
    }

    pub(super) fn kind(&self, id: i64) -> Option<StatKind> {
        if !self.dense.is_empty() {
            return usize::try_from(id)
                .ok()
                .and_then(|i| self.dense.get(i).copied().flatten());
        }
        let i = self.ids.binary_search_by_key(&id, |e| e.0).ok()?;
        self.ids.get(i).map(|e| e.1)
    }

    pub(super) fn has(&self, kind: StatKind) -> bool {
        self.ids.iter().any(|e| e.1 == kind)
    }

    /// `XStatVisitor`'s value: a `ref_value` is the name of the stat metadata it refers to.
    #[inline]
    pub(super) fn value(&self, stat: Stat<'a>) -> Option<StatValueRef<'a>> {
        stat.resolved(self.plane)
    }

    /// An event's own stat of `kind` (TSL's `XEventVisitor::GetStat`): the first's value.
    pub(super) fn own(&self, event: Event<'a>, kind: StatKind) -> Option<StatValueRef<'a>> {
        event
            .stats()
            .find(|s| self.kind(s.metadata_id) == Some(kind))
            .and_then(|s| self.value(s))
    }

    /// The event's producer (`_pt` and `_p`, the first of each) when it has both.
    pub(super) fn producer(&self, event: Event<'a>) -> Option<(i64, i64)> {
        let (mut kind, mut id) = (None, None);
        for stat in event.stats() {
            match self.kind(stat.metadata_id) {
                Some(StatKind::ProducerType) if kind.is_none() => kind = Some(self.value(stat)),
                Some(StatKind::ProducerId) if id.is_none() => id = Some(self.value(stat)),
                _ => continue,
            }
            if kind.is_some() && id.is_some() {
                break;
            }
        }
        match (kind.flatten(), id.flatten()) {
            (Some(t), Some(id)) => Some((int_or_uint(Some(t)), int_or_uint(Some(id)))),
            _ => None,
        }
    }

    /// The smallest id of the stats of `kind` (the one grouping writes its stat with).
    fn first_id(&self, kind: StatKind) -> Option<i64> {
        self.ids.iter().find(|(_, k)| *k == kind).map(|(id, _)| *id)
    }

    /// [`Self::event_stats`] of the event with grouping's `group_id` and `step_name` as
    /// `preprocess` would have written them into it: each set on the event's first stat of the
    /// id grouping writes (the smallest of the name), else added after its stats.
    pub(super) fn event_stats_marked(&self, event: Event<'a>, mark: Mark<'a>) -> EventStats<'a> {
        if mark.group_id.is_none() && mark.step_name.is_none() {
            return self.event_stats(event);
        }
        let group_at = mark.group_id.and(self.first_id(StatKind::GroupId));
        let name_at = mark.step_name.and(self.first_id(StatKind::StepName));
        let (mut group_set, mut name_set) = (false, false);
        let mut out = EventStats::default();
        for stat in event.stats() {
            let Some(kind) = self.kind(stat.metadata_id) else {
                continue;
            };
            let value = self.value(stat);
            match kind {
                StatKind::GroupId if !group_set && Some(stat.metadata_id) == group_at => {
                    out.group_id = mark.group_id;
                    group_set = true;
                }
                StatKind::StepName if !name_set && Some(stat.metadata_id) == name_at => {
                    out.step_name = mark.step_name.unwrap_or("");
                    name_set = true;
                }
                _ => out.read(kind, value),
            }
        }
        if !group_set && mark.group_id.is_some() {
            out.group_id = mark.group_id;
        }
        if let Some(name) = mark.step_name.filter(|_| !name_set) {
            out.step_name = name;
        }
        out
    }

    /// The stats of an event that step events read (TSL's `ForEachStat` over the event's own
    /// stats, the last of a name winning).
    pub(super) fn event_stats(&self, event: Event<'a>) -> EventStats<'a> {
        let mut out = EventStats::default();
        for stat in event.stats() {
            let Some(kind) = self.kind(stat.metadata_id) else {
                continue;
            };
            out.read(kind, self.value(stat));
        }
        out
    }

    /// `GetDeviceEventTimespan`: the `device_offset_ps` and `device_duration_ps` stats when
    /// the event has both, else its timespan.
    pub(super) fn device_timespan(&self, line_timestamp_ns: i64, event: Event<'a>) -> Span {
        let offset = self.own(event, StatKind::DeviceOffsetPs);
        let duration = self.own(event, StatKind::DeviceDurationPs);
        if offset.is_some() && duration.is_some() {
            return Span::new(int_or_uint(offset) as u64, int_or_uint(duration) as u64);
        }
        timespan(line_timestamp_ns, event)
    }
}

/// The stats one event carries that step events read.
#[derive(Default)]
pub(super) struct EventStats<'v> {
    pub(super) correlation_id: Option<i64>,
    pub(super) group_id: Option<i64>,
    pub(super) step_name: &'v str,
    pub(super) stage_name: &'v str,
    pub(super) consumer_type: Option<i64>,
    pub(super) consumer_id: Option<i64>,
    pub(super) tensor_shapes: &'v str,
    pub(super) memcpy_details: &'v str,
}

impl<'v> EventStats<'v> {
    /// Takes in one stat of `kind` (a later one of a kind replacing an earlier one).
    fn read(&mut self, kind: StatKind, value: Option<StatValueRef<'v>>) {
        match kind {
            StatKind::CorrelationId => self.correlation_id = Some(int_value(value)),
            StatKind::GroupId => self.group_id = Some(int_value(value)),
            StatKind::StepName => self.step_name = str_or_ref(value),
            StatKind::StageName => self.stage_name = str_or_ref(value),
            StatKind::ConsumerType => self.consumer_type = Some(int_or_uint(value)),
            StatKind::ConsumerId => self.consumer_id = Some(int_or_uint(value)),
            StatKind::Shape => self.tensor_shapes = str_or_ref(value),
            StatKind::MemcpyDetails => self.memcpy_details = str_or_ref(value),
            _ => {}
        }
    }
}

/// `XStatVisitor::IntValue`: the `int64_value`, 0 for another kind.
pub(super) fn int_value(v: Option<StatValueRef<'_>>) -> i64 {
    match v {
        Some(StatValueRef::Int64(v)) => v,
        _ => 0,
    }
}

/// `IntOrUintValue`, as a signed value.
pub(super) fn int_or_uint(v: Option<StatValueRef<'_>>) -> i64 {
    match v {
        Some(StatValueRef::Int64(v)) => v,
        Some(StatValueRef::Uint64(v)) => v as i64,
        _ => 0,
    }
}

/// `StrOrRefValue`: empty for another kind.
pub(super) fn str_or_ref(v: Option<StatValueRef<'_>>) -> &str {
    v.and_then(|v| v.as_str()).unwrap_or("")
}

/// The name of an event (its metadata's; empty when the id resolves to nothing, as in TSL).
pub(super) fn event_name<'a>(plane: &'a XPlane, event: Event<'_>) -> &'a str {
    plane
        .event_metadata
        .get(&event.metadata_id())
        .map_or("", |m| m.name.as_str())
}

/// `XEventVisitor::GetTimespan`: 64-bit picoseconds, wrapping.
#[inline]
pub(super) fn timespan(line_timestamp_ns: i64, event: Event<'_>) -> Span {
    let (begin, _) = event.timespan(line_timestamp_ns);
    Span::new(begin, event.duration_ps() as u64)
}

pub(super) fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// `IsExplicitHostStepMarker`.
pub(super) fn is_explicit_host_step_marker(name: &str) -> bool {
    (name.starts_with("train") || name.starts_with("test") || name.starts_with("TraceContext"))
        && !name.contains('/')
}

/// `IsRealCpuCompute`.
pub(super) fn is_real_cpu_compute(name: &str) -> bool {
    !([
        "EagerExecute",
        "EagerLocalExecute",
        "EagerKernelExecute",
        "FunctionRun",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        || is_explicit_host_step_marker(name))
}

pub(super) fn is_memcpy(op: &tf_op::TfOp<'_>, kind: &str) -> bool {
    op.category == Category::Memcpy && op.op_type == kind
}

/// What a host event's name says for its step (read once per event metadata).
#[derive(Clone, Copy)]
pub(super) struct HostName<'a> {
    pub(super) name: &'a str,
    pub(super) explicit_marker: bool,
    pub(super) real_cpu_compute: bool,
    /// What `ClassifyCpuEvent` reads of the name: an infeed enqueue or host to device copy, a
    /// host to host copy, an executor's `Process`, an `IteratorGetNext`.
    pub(super) to_device: bool,
    pub(super) host_to_host: bool,
    pub(super) executor: bool,
    pub(super) iterator: bool,
}

impl<'a> HostName<'a> {
    pub(super) fn new(name: &'a str) -> Self {
        let op = tf_op::parse(name);
        Self {
            name,
            explicit_marker: is_explicit_host_step_marker(name),
            real_cpu_compute: is_real_cpu_compute(name),
            to_device: (op.category == Category::TensorFlow
                && op.op_type.starts_with("InfeedEnqueue"))
                || is_memcpy(&op, "MemcpyHToD"),
            host_to_host: is_memcpy(&op, "MemcpyHToH"),
            executor: starts_with_ignore_case(name, "ExecutorState::Process"),
            iterator: starts_with_ignore_case(name, "IteratorGetNext"),
        }
    }

    /// `ClassifyCpuEvent`.
    pub(super) fn classify(
        &self,
        has_device: bool,
        has_correlation_id: bool,
        root_stage: bool,
    ) -> i32 {
        if self.to_device {
            HOST_TO_DEVICE
        } else if self.host_to_host {
            HOST_TO_HOST
        } else if has_device && (has_correlation_id || self.executor) {
            HOST_PREPARE
        } else if self.iterator || root_stage {
            HOST_WAIT_INPUT
        } else {
            HOST_COMPUTE
        }
    }
}

/// What a GPU event's name says of its type (read once per event metadata): a copy or a
/// collective, else whether it names 16-bit compute.
#[derive(Clone, Copy)]
pub(super) struct GpuName {
    pub(super) kind: Option<i32>,
    pub(super) half: bool,
}

impl GpuName {
    pub(super) fn new(name: &str) -> Self {
        let op = tf_op::parse(name);
        let kind = if is_memcpy(&op, "MemcpyHToD") {
            Some(HOST_TO_DEVICE)
        } else if is_memcpy(&op, "MemcpyDToH") {
            Some(DEVICE_TO_HOST)
        } else if is_memcpy(&op, "MemcpyDToD") {
            Some(DEVICE_TO_DEVICE)
        } else if starts_with_ignore_case(name, "nccl") {
            Some(DEVICE_COLLECTIVES)
        } else {
            None
        };
        Self {
            kind,
            half: name.contains("half") || name.contains("fp16"),
        }
    }

    /// `ClassifyGpuEvent`.
    pub(super) fn classify(&self, tensor_shapes: &str) -> i32 {
        match self.kind {
            Some(kind) => kind,
            None if tensor_shapes.is_empty() => {
                if self.half {
                    DEVICE_COMPUTE_16
                } else {
                    DEVICE_COMPUTE_32
                }
            }
            None if tensor_shapes.contains("half") => DEVICE_COMPUTE_16,
            None => DEVICE_COMPUTE_32,
        }
    }
}

/// A device plane's stat ids and event names, read once for its lines.
pub(crate) struct DevicePlane<'a> {
    pub(super) ids: StatIds<'a>,
    pub(super) names: FxHashMap<i64, GpuName>,
    pub(super) unnamed: GpuName,
}

impl<'a> DevicePlane<'a> {
    pub(crate) fn new(plane: &'a XPlane) -> Self {
        Self {
            ids: StatIds::new(plane),
            names: plane
                .event_metadata
                .iter()
                .map(|(id, md)| (*id, GpuName::new(&md.name)))
                .collect(),
            unnamed: GpuName::new(""),
        }
    }
}

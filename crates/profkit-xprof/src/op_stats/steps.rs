//! The steps database of OpStats (`StepDatabaseResult`), built as xprof 2.24.2 builds it: step
//! events from the grouped host threads (`ConvertHostThreadsXPlaneToStepEvents`) and from the
//! device planes (`ConvertDeviceTraceXPlaneToStepEvents`), made non-overlapping, then one
//! `PerCoreStepInfo` per well-formed step (`ConvertStepEventsToStepDb`).
//!
//! Host: every event with a `group_id` belongs to that step. An event named `train...`,
//! `test...` or `TraceContext...` (without `/`) is an explicit step marker, an event with a
//! `step_name` an implicit one; other events but the eager and function runtime's are typed:
//! infeed enqueues and host-to-device copies, host-to-host copies, waits for input
//! (`IteratorGetNext`, and input pipeline stages that are no other stage's descendant, on their
//! line or through a producer's context), and host compute for the rest.
//!
//! GPU: the derived `Steps` line of each GPU plane marks the steps (core id the plane's id), and
//! each event with both a `correlation_id` and a `group_id` is typed: copies by direction, NCCL
//! collectives, else compute in 16 bits (`half`/`fp16` in the name, or `half` in the `shape`
//! stat when there is one) or 32; copies count their bytes (`num_bytes` of `memcpy_details`).
//! A plane keeps only the steps its `Steps` line marks; planes are united.
//!
//! A step's time is its longest device marker unless the longest host marker includes it; its
//! breakdown sums the time of each non-overlapped event type within that time, the rest being
//! unknown time. A step is kept when it has device compute (host compute on a host without
//! devices) and a duration; the only core is 1 (`kDefaultGpuLocalCoreId`).

use profkit_xplane::constants::{GPU_PLANE_PREFIX, TPU_PLANE_PREFIX};
use profkit_xplane::visitor::{EventVisitor, LineVisitor, PlaneVisitor, StatValueRef};

use profkit_xplane::{XPlane, XSpace};

use super::event_span::{
    MarkerKind, Span, StepDetails, StepEvents, StepMarker, TypedSpan, event_type::*,
    intersect_combine, precision_stats, union_combine,
};
use crate::preprocess::derived::is_derived_line_id;
use crate::preprocess::derived::tf_op::{self, Category};
use crate::proto::{
    AllReduceInfo, CoreDetails, GenericStepBreakdown, OpStats, PerCoreStepInfo, StepDatabaseResult,
    StepInfoResult,
};

/// `kDefaultGpuLocalCoreId`: the core every step of a host without per-core op metrics is
/// filed under.
pub const DEFAULT_GPU_LOCAL_CORE_ID: u32 = 1;

/// `kThreadIdStepInfo`: the derived `Steps` line's id.
const STEP_INFO_LINE_ID: i64 = crate::preprocess::derived::STEP_LINE_ID;

/// The type URL of a packed `GenericStepBreakdown`.
pub const GENERIC_STEP_BREAKDOWN_URL: &str =
    "type.googleapis.com/tensorflow.profiler.GenericStepBreakdown";

/// The stats one event carries that step events read (TSL's `ForEachStat` over the event's own
/// stats, the last of a name winning).
#[derive(Default)]
struct EventStats<'v> {
    correlation_id: Option<i64>,
    group_id: Option<i64>,
    step_name: &'v str,
    stage_name: &'v str,
    consumer_type: Option<i64>,
    consumer_id: Option<i64>,
    tensor_shapes: &'v str,
    memcpy_details: &'v str,
}

/// `XStatVisitor::IntValue`: the `int64_value`, 0 for another kind.
fn int_value(v: Option<StatValueRef<'_>>) -> i64 {
    match v {
        Some(StatValueRef::Int64(v)) => v,
        _ => 0,
    }
}

/// `IntOrUintValue`, as a signed value.
fn int_or_uint(v: Option<StatValueRef<'_>>) -> i64 {
    match v {
        Some(StatValueRef::Int64(v)) => v,
        Some(StatValueRef::Uint64(v)) => v as i64,
        _ => 0,
    }
}

/// `StrOrRefValue`: empty for another kind.
fn str_or_ref(v: Option<StatValueRef<'_>>) -> &str {
    v.and_then(|v| v.as_str()).unwrap_or("")
}

fn event_stats<'v>(event: &EventVisitor<'v>) -> EventStats<'v> {
    let mut out = EventStats::default();
    for stat in event.stats() {
        let value = stat.value();
        match stat.name() {
            "correlation_id" => out.correlation_id = Some(int_value(value)),
            "group_id" => out.group_id = Some(int_value(value)),
            "step_name" => out.step_name = str_or_ref(value),
            "input_pipeline_stage_name" => out.stage_name = str_or_ref(value),
            "_ct" => out.consumer_type = Some(int_or_uint(value)),
            "_c" => out.consumer_id = Some(int_or_uint(value)),
            "shape" => out.tensor_shapes = str_or_ref(value),
            "memcpy_details" => out.memcpy_details = str_or_ref(value),
            _ => {}
        }
    }
    out
}

/// An event's own stat (TSL's `XEventVisitor::GetStat`), the first of its name.
fn own_stat<'v>(event: &EventVisitor<'v>, name: &str) -> Option<StatValueRef<'v>> {
    event
        .stats()
        .find(|s| s.name() == name)
        .and_then(|s| s.value())
}

/// `XEventVisitor::GetTimespan`: 64-bit picoseconds, wrapping.
fn timespan(line_timestamp_ns: i64, event: &EventVisitor<'_>) -> Span {
    Span::new(
        (line_timestamp_ns as u64)
            .wrapping_mul(1000)
            .wrapping_add(event.offset_ps() as u64),
        event.duration_ps() as u64,
    )
}

/// `GetDeviceEventTimespan`: the `device_offset_ps` and `device_duration_ps` stats when the
/// event has both, else its timespan.
fn device_timespan(line_timestamp_ns: i64, event: &EventVisitor<'_>) -> Span {
    let offset = own_stat(event, "device_offset_ps");
    let duration = own_stat(event, "device_duration_ps");
    if offset.is_some() && duration.is_some() {
        return Span::new(int_or_uint(offset) as u64, int_or_uint(duration) as u64);
    }
    timespan(line_timestamp_ns, event)
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// `IsExplicitHostStepMarker`.
fn is_explicit_host_step_marker(name: &str) -> bool {
    (name.starts_with("train") || name.starts_with("test") || name.starts_with("TraceContext"))
        && !name.contains('/')
}

/// `IsRealCpuCompute`.
fn is_real_cpu_compute(name: &str) -> bool {
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

fn is_memcpy(op: &tf_op::TfOp<'_>, kind: &str) -> bool {
    op.category == Category::Memcpy && op.op_type == kind
}

/// `ClassifyCpuEvent`.
fn classify_cpu_event(
    name: &str,
    has_device: bool,
    has_correlation_id: bool,
    root_stage: bool,
) -> i32 {
    let op = tf_op::parse(name);
    if (op.category == Category::TensorFlow && op.op_type.starts_with("InfeedEnqueue"))
        || is_memcpy(&op, "MemcpyHToD")
    {
        HOST_TO_DEVICE
    } else if is_memcpy(&op, "MemcpyHToH") {
        HOST_TO_HOST
    } else if has_device
        && (has_correlation_id || starts_with_ignore_case(name, "ExecutorState::Process"))
    {
        HOST_PREPARE
    } else if starts_with_ignore_case(name, "IteratorGetNext") || root_stage {
        HOST_WAIT_INPUT
    } else {
        HOST_COMPUTE
    }
}

/// An event on the input pipeline stage stack (TSL's `AncestorStack`).
struct StageRef {
    is_stage: bool,
    is_descendant: bool,
    span: Span,
}

/// `ConvertHostThreadsXLineToStepEvents`.
fn host_line_step_events(
    line: &LineVisitor<'_>,
    device_steps: Option<&StepEvents>,
    async_parents: &std::collections::HashSet<(i64, i64)>,
) -> StepEvents {
    let mut result = StepEvents::new();
    let mut stack: Vec<StageRef> = Vec::new();
    let ts = line.timestamp_ns();
    for event in line.events() {
        let stats = event_stats(&event);
        let span = timespan(ts, &event);
        let async_parent = match (stats.consumer_type, stats.consumer_id) {
            (Some(t), Some(id)) => async_parents.contains(&(t, id)),
            _ => false,
        };
        let mut current = StageRef {
            is_stage: !stats.stage_name.is_empty(),
            is_descendant: async_parent,
            span,
        };
        while stack
            .last()
            .is_some_and(|top| !top.span.includes(&current.span))
        {
            stack.pop();
        }
        if let Some(parent) = stack.last() {
            current.is_descendant |= parent.is_descendant || parent.is_stage;
        }
        let root_stage = current.is_stage && !current.is_descendant;
        stack.push(current);
        let Some(group) = stats.group_id.filter(|g| *g >= 0) else {
            continue;
        };
        if device_steps.is_some_and(|d| !d.contains_key(&group)) {
            continue;
        }
        let name = event.name();
        let step = result.entry(group).or_default();
        if is_explicit_host_step_marker(name) {
            step.markers.push(StepMarker {
                kind: MarkerKind::ExplicitHost,
                core_id: None,
                name: name.to_owned(),
                span,
            });
        } else if !stats.step_name.is_empty() {
            step.markers.push(StepMarker {
                kind: MarkerKind::ImplicitHost,
                core_id: None,
                name: name.to_owned(),
                span,
            });
        } else if is_real_cpu_compute(name) {
            let has_correlation = stats.correlation_id.is_some_and(|c| c >= 0);
            step.events.push(TypedSpan {
                kind: classify_cpu_event(name, device_steps.is_some(), has_correlation, root_stage),
                span,
            });
        }
        if !stats.step_name.is_empty() {
            step.step_name = stats.step_name.to_owned();
        }
    }
    result
}

/// `ConvertHostThreadsXPlaneToStepEvents`: every line's step events, united.
pub fn host_step_events(plane: &XPlane, device_steps: Option<&StepEvents>) -> StepEvents {
    let visitor = PlaneVisitor::new(plane);
    let mut parents = std::collections::HashSet::new();
    for line in visitor.lines() {
        for event in line.events() {
            let t = own_stat(&event, "_pt");
            let id = own_stat(&event, "_p");
            if t.is_some() && id.is_some() {
                parents.insert((int_or_uint(t), int_or_uint(id)));
            }
        }
    }
    let mut out = StepEvents::new();
    for line in visitor.lines() {
        union_combine(
            &host_line_step_events(&line, device_steps, &parents),
            &mut out,
        );
    }
    out
}

/// `ParseNumBytesFromMemcpyDetail`: `num_bytes` of `key:value` pairs split at `:` and newlines.
fn memcpy_bytes(details: &str) -> u64 {
    let params: Vec<&str> = details.split([':', '\n']).collect();
    let mut i = 0;
    while i < params.len() {
        if params[i] == "num_bytes" {
            let value = params.get(i + 1).copied().unwrap_or("");
            let t = value.trim_matches(|c: char| c.is_ascii_whitespace());
            let t = t.strip_prefix('+').unwrap_or(t);
            return t.parse::<u64>().unwrap_or(0);
        }
        i += 2;
    }
    0
}

/// `ClassifyGpuEvent`.
fn classify_gpu_event(name: &str, tensor_shapes: &str) -> i32 {
    let op = tf_op::parse(name);
    if is_memcpy(&op, "MemcpyHToD") {
        HOST_TO_DEVICE
    } else if is_memcpy(&op, "MemcpyDToH") {
        DEVICE_TO_HOST
    } else if is_memcpy(&op, "MemcpyDToD") {
        DEVICE_TO_DEVICE
    } else if starts_with_ignore_case(name, "nccl") {
        DEVICE_COLLECTIVES
    } else if tensor_shapes.is_empty() {
        if name.contains("half") || name.contains("fp16") {
            DEVICE_COMPUTE_16
        } else {
            DEVICE_COMPUTE_32
        }
    } else if tensor_shapes.contains("half") {
        DEVICE_COMPUTE_16
    } else {
        DEVICE_COMPUTE_32
    }
}

/// `ConvertDeviceTraceXLineToStepEvents`: one GPU stream's typed events.
pub(super) fn gpu_line_step_events(device_id: u64, line: &LineVisitor<'_>) -> StepEvents {
    let mut result = StepEvents::new();
    let ts = line.timestamp_ns();
    for event in line.events() {
        let stats = event_stats(&event);
        let (Some(correlation), Some(group)) = (stats.correlation_id, stats.group_id) else {
            continue;
        };
        if correlation < 0 || group < 0 {
            continue;
        }
        let span = timespan(ts, &event);
        let kind = classify_gpu_event(event.name(), stats.tensor_shapes);
        let step = result.entry(group).or_default();
        step.events.push(TypedSpan { kind, span });
        match kind {
            DEVICE_COLLECTIVES => {
                // xprof ends it at the event's offset plus duration (not its timestamp).
                let info = AllReduceInfo {
                    start_time_ps: span.begin,
                    end_time_ps: (event.offset_ps() as u64)
                        .wrapping_add(event.duration_ps() as u64),
                    ..AllReduceInfo::default()
                };
                step.add_collective(device_id, info);
            }
            HOST_TO_DEVICE | DEVICE_TO_DEVICE | DEVICE_TO_HOST => {
                step.add_memory_transfer(kind, span, memcpy_bytes(stats.memcpy_details));
            }
            _ => {}
        }
    }
    result
}

/// `ConvertDeviceStepInfoToStepMarkers`: the `Steps` line's events as device markers.
fn step_markers(line: &LineVisitor<'_>, core_id: u32) -> StepEvents {
    let mut result = StepEvents::new();
    let ts = line.timestamp_ns();
    for event in line.events() {
        if let Some(group) = own_stat(&event, "group_id") {
            result
                .entry(int_value(Some(group)))
                .or_default()
                .markers
                .push(StepMarker {
                    kind: MarkerKind::Device,
                    core_id: Some(core_id),
                    name: event.name().to_owned(),
                    span: device_timespan(ts, &event),
                });
        }
    }
    result
}

/// `ConvertDeviceTraceXPlaneToStepEvents` for a GPU plane: the streams' events united, kept
/// for the steps the `Steps` line marks.
pub fn gpu_step_events(plane: &XPlane) -> StepEvents {
    let visitor = PlaneVisitor::new(plane);
    let mut markers = StepEvents::new();
    let mut events = StepEvents::new();
    for line in visitor.lines() {
        // xprof's id is a 32-bit int (negative); profkit's preprocessing writes it unsigned.
        if line.id() as i32 == STEP_INFO_LINE_ID as i32 {
            markers = step_markers(&line, plane.id as u32);
        } else if !is_derived_line_id(line.id()) {
            union_combine(&gpu_line_step_events(plane.id as u64, &line), &mut events);
        }
    }
    if !events.is_empty() {
        super::event_span::intersect_combine(&markers, &mut events);
    }
    events
}

/// Packs a breakdown as `google.protobuf.Any`.
pub fn pack_breakdown(breakdown: &GenericStepBreakdown) -> prost_types::Any {
    prost_types::Any {
        type_url: GENERIC_STEP_BREAKDOWN_URL.to_owned(),
        value: prost::Message::encode_to_vec(breakdown),
    }
}

/// A step breakdown packed as `google.protobuf.Any`, when it is a `GenericStepBreakdown` that
/// decodes.
pub fn generic_breakdown(any: &prost_types::Any) -> Option<GenericStepBreakdown> {
    if any.type_url != GENERIC_STEP_BREAKDOWN_URL {
        return None;
    }
    prost::Message::decode(any.value.as_slice()).ok()
}

/// `ConvertStepDetailsToStepInfo`: `None` for a step that is not well formed.
fn step_info(has_device: bool, step_num: i64, details: &StepDetails) -> Option<StepInfoResult> {
    let mut generic = GenericStepBreakdown::default();
    let time = details.step_time();
    let mut total = 0u64;
    for event in &details.events {
        let d = time.overlapped_duration(&event.span);
        let slot = generic.type_ps.entry(event.kind).or_default();
        *slot = slot.wrapping_add(d);
        total = total.wrapping_add(d);
    }
    if total < time.duration {
        let slot = generic.type_ps.entry(UNKNOWN_TIME).or_default();
        *slot = slot.wrapping_add(time.duration - total);
    }
    let well_formed = if has_device {
        generic.type_ps.contains_key(&DEVICE_COMPUTE_16)
            || generic.type_ps.contains_key(&DEVICE_COMPUTE_32)
    } else {
        generic.type_ps.contains_key(&HOST_COMPUTE)
    };
    if !well_formed || time.duration == 0 {
        return None;
    }
    Some(StepInfoResult {
        step_num: step_num as u32,
        step_name: details.step_name.clone(),
        begin_ps: time.begin,
        duration_ps: time.duration,
        step_breakdown: Some(pack_breakdown(&generic)),
        ..StepInfoResult::default()
    })
}

/// `ConvertStepEventsToStepDb` (without dropping incomplete steps, as every caller in xprof
/// 2.24.2 asks) for steps without per-core op metrics (hosts and GPUs).
pub fn step_db(has_device: bool, steps: &StepEvents) -> StepDatabaseResult {
    let mut db = StepDatabaseResult::default();
    for (&step, details) in steps {
        let mut per_core = PerCoreStepInfo {
            step_num: step as u32,
            ..PerCoreStepInfo::default()
        };
        if !details.per_core_op_metrics_db.is_empty() {
            super::tpu_steps::per_core_step_info(step as u32, details, &mut per_core);
        } else {
            let Some(info) = step_info(has_device, step, details) else {
                continue;
            };
            per_core
                .step_info_per_core
                .insert(DEFAULT_GPU_LOCAL_CORE_ID, info);
            for (core, collectives) in &details.collectives {
                per_core
                    .all_reduce_db_per_core
                    .insert(*core, collectives.clone());
            }
            per_core
                .device_memory_transfers
                .extend(details.device_memory_transfers.iter().cloned());
        }
        db.step_sequence.push(per_core);
    }
    db
}

/// `Hostname`: the space's first host name, else `localhost`.
pub fn hostname(space: &XSpace) -> &str {
    space.hostnames.first().map_or("localhost", String::as_str)
}

/// What `ConvertXSpaceToOpStats` builds from step events and device planes' core details, for
/// one preprocessed space: `step_db`, the device op metrics' `precision_stats`, the
/// `core_id_to_details` (on GPU and CPU-only hosts core 1 with the host name; on TPU hosts each
/// device plane's `core_details` stat), and on TPU hosts `hlo_metrics_db_complete_steps_only`.
pub(crate) fn fill(
    space: &XSpace,
    host_plane: Option<&XPlane>,
    stats: &mut OpStats,
    missing: &mut Vec<String>,
) {
    let host = hostname(space);
    let tpu: Vec<&XPlane> = space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(TPU_PLANE_PREFIX))
        .collect();
    let is_tpu = !tpu.is_empty();
    let device_planes: Vec<&XPlane> = if is_tpu {
        tpu
    } else {
        space
            .planes
            .iter()
            .filter(|p| p.name.starts_with(GPU_PLANE_PREFIX))
            .collect()
    };
    if !is_tpu {
        stats.core_id_to_details.insert(
            DEFAULT_GPU_LOCAL_CORE_ID,
            CoreDetails {
                hostname: host.to_owned(),
                ..CoreDetails::default()
            },
        );
    }
    let mut step_events = StepEvents::new();
    for plane in &device_planes {
        if is_tpu {
            if let Some(details) = super::tpu_steps::core_details(plane, host) {
                stats.core_id_to_details.insert(plane.id as u32, details);
            }
            let events = super::tpu_steps::tpu_step_events(plane);
            if !events.is_empty() {
                intersect_combine(&events, &mut step_events);
            }
        } else {
            let events = gpu_step_events(plane);
            if !events.is_empty() {
                union_combine(&events, &mut step_events);
            }
        }
    }
    let has_device = !device_planes.is_empty();
    let host_steps = host_plane.map(|p| host_step_events(p, None));
    if let Some(host_steps) = &host_steps {
        if !has_device {
            union_combine(host_steps, &mut step_events);
        }
    }
    let device_db = stats
        .device_op_metrics_db
        .get_or_insert_with(Default::default);
    if is_tpu {
        let db = step_db(has_device, &step_events);
        device_db.precision_stats = Some(precision_stats(&step_events));
        let mut complete = super::DbBuilder::default();
        for step in &db.step_sequence {
            if let Some(hlo) = &step.hlo_metrics_db {
                complete.combine(hlo, true);
            }
        }
        let mut complete = complete.db;
        if !db.step_sequence.is_empty() {
            complete
                .precision_stats
                .get_or_insert_with(Default::default);
        }
        stats.hlo_metrics_db_complete_steps_only = Some(complete);
        if !db.step_sequence.is_empty()
            && device_planes
                .iter()
                .any(|p| super::tpu_steps::sparse_core_has_ops(p))
        {
            missing.push("steps database (the SparseCore cores' step info)".to_owned());
        }
        let mut db = db;
        if let Some(host_steps) = &host_steps {
            super::tpu_fix::may_fix(host_steps, device_db, &mut db, &stats.core_id_to_details);
        }
        stats.step_db = Some(db);
    } else {
        let nonoverlapped: StepEvents = step_events
            .iter()
            .map(|(id, details)| (*id, details.to_non_overlapped()))
            .collect();
        stats.step_db = Some(step_db(has_device, &nonoverlapped));
        device_db.precision_stats = Some(precision_stats(&nonoverlapped));
    }
}

#[cfg(test)]
mod tests {
    use profkit_xplane::{PlaneBuilder, XPlane};

    use super::*;

    #[test]
    fn memcpy_details_give_their_bytes() {
        assert_eq!(
            memcpy_bytes("kind_src:device\nnum_bytes:4096\nkind:x"),
            4096
        );
        assert_eq!(memcpy_bytes("num_bytes: 12"), 12);
        assert_eq!(memcpy_bytes("a:b:num_bytes"), 0);
        assert_eq!(memcpy_bytes("x:num_bytes:7"), 0);
    }

    #[test]
    fn gpu_events_are_classified_by_name_and_shapes() {
        assert_eq!(classify_gpu_event("MEMCPYHToD", ""), HOST_TO_DEVICE);
        assert_eq!(classify_gpu_event("memcpydtoh", ""), DEVICE_TO_HOST);
        assert_eq!(classify_gpu_event("ncclAllReduce", ""), DEVICE_COLLECTIVES);
        assert_eq!(classify_gpu_event("volta_fp16_gemm", ""), DEVICE_COMPUTE_16);
        assert_eq!(
            classify_gpu_event("volta_fp16_gemm", "(float)"),
            DEVICE_COMPUTE_32
        );
        assert_eq!(classify_gpu_event("gemm", "(half[2])"), DEVICE_COMPUTE_16);
    }

    /// A host thread with two steps (`train` markers), compute, an input wait and a launch.
    fn host_plane() -> XPlane {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        let mut line = b.line(1);
        for (step, at) in [(0i64, 0i64), (1, 100)] {
            line.add_event("train")
                .set_offset_ps(at)
                .set_duration_ps(90)
                .add_stat("group_id", step)
                .add_stat("step_name", format!("train {step}"));
            line.add_event("IteratorGetNextOp")
                .set_offset_ps(at + 5)
                .set_duration_ps(10)
                .add_stat("group_id", step);
            line.add_event("model/MatMul:MatMul")
                .set_offset_ps(at + 20)
                .set_duration_ps(40)
                .add_stat("group_id", step);
            line.add_event("EagerExecute: MatMul")
                .set_offset_ps(at + 20)
                .set_duration_ps(50)
                .add_stat("group_id", step);
        }
        line.add_event("ungrouped")
            .set_offset_ps(300)
            .set_duration_ps(5);
        plane
    }

    #[test]
    fn host_steps_have_markers_and_typed_events() {
        let steps = host_step_events(&host_plane(), None);
        assert_eq!(steps.keys().copied().collect::<Vec<_>>(), vec![0, 1]);
        let one = &steps[&1];
        assert_eq!(one.step_name, "train 1");
        assert_eq!(one.markers.len(), 1);
        assert_eq!(one.markers[0].kind, MarkerKind::ExplicitHost);
        let kinds: Vec<i32> = one.events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, vec![HOST_WAIT_INPUT, HOST_COMPUTE]);
        let nonoverlapped: StepEvents = steps
            .iter()
            .map(|(k, v)| (*k, v.to_non_overlapped()))
            .collect();
        let db = step_db(false, &nonoverlapped);
        assert_eq!(db.step_sequence.len(), 2);
        let info = &db.step_sequence[1].step_info_per_core[&DEFAULT_GPU_LOCAL_CORE_ID];
        assert_eq!(
            (info.step_num, info.begin_ps, info.duration_ps),
            (1, 100, 90)
        );
        assert_eq!(info.step_name, "train 1");
        let any = info.step_breakdown.as_ref().unwrap();
        let breakdown: GenericStepBreakdown = prost::Message::decode(any.value.as_slice()).unwrap();
        // 5 ps before the wait, 5 between, 30 after the MatMul: unknown time.
        assert_eq!(breakdown.type_ps[&HOST_WAIT_INPUT], 10);
        assert_eq!(breakdown.type_ps[&HOST_COMPUTE], 40);
        assert_eq!(breakdown.type_ps[&UNKNOWN_TIME], 40);
        assert_eq!(db.step_sequence[1].device_memory_transfers.len(), 3);
    }

    #[test]
    fn a_step_without_host_compute_is_dropped() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        let mut line = b.line(1);
        line.add_event("train")
            .set_offset_ps(0)
            .set_duration_ps(10)
            .add_stat("group_id", 3i64);
        line.add_event("IteratorGetNext")
            .set_offset_ps(1)
            .set_duration_ps(2)
            .add_stat("group_id", 3i64);
        let steps = host_step_events(&plane, None);
        assert_eq!(steps.len(), 1);
        assert!(step_db(false, &steps).step_sequence.is_empty());
    }

    #[test]
    fn input_pipeline_root_stages_wait_for_input() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        let mut line = b.line(1);
        line.add_event("stage")
            .set_offset_ps(0)
            .set_duration_ps(10)
            .add_stat("group_id", 1i64)
            .add_stat("input_pipeline_stage_name", "Map");
        line.add_event("inner")
            .set_offset_ps(1)
            .set_duration_ps(2)
            .add_stat("group_id", 1i64)
            .add_stat("input_pipeline_stage_name", "Batch");
        // A consumer whose producer context names it a descendant of another stage.
        let mut other = b.line(2);
        other
            .add_event("producer")
            .set_offset_ps(0)
            .set_duration_ps(1)
            .add_stat("_pt", 1i64)
            .add_stat("_p", 9i64);
        other
            .add_event("consumer stage")
            .set_offset_ps(20)
            .set_duration_ps(5)
            .add_stat("group_id", 1i64)
            .add_stat("_ct", 1i64)
            .add_stat("_c", 9i64)
            .add_stat("input_pipeline_stage_name", "Prefetch");
        let steps = host_step_events(&plane, None);
        let kinds: Vec<i32> = steps[&1].events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, vec![HOST_WAIT_INPUT, HOST_COMPUTE, HOST_COMPUTE]);
    }

    #[test]
    fn gpu_steps_come_from_the_steps_line() {
        let mut plane = XPlane {
            id: 3,
            ..XPlane::default()
        };
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/device:GPU:0");
        let mut steps = b.line(STEP_INFO_LINE_ID);
        steps
            .add_event("train 5")
            .set_offset_ps(0)
            .set_duration_ps(100)
            .add_stat("group_id", 5i64);
        let mut stream = b.line(7);
        stream
            .add_event("volta_sgemm")
            .set_offset_ps(10)
            .set_duration_ps(30)
            .add_stat("correlation_id", 1i64)
            .add_stat("group_id", 5i64);
        stream
            .add_event("MEMCPYHToD")
            .set_offset_ps(40)
            .set_duration_ps(20)
            .add_stat("correlation_id", 2i64)
            .add_stat("group_id", 5i64)
            .add_stat("memcpy_details", "num_bytes:64");
        stream
            .add_event("ncclAllReduce")
            .set_offset_ps(60)
            .set_duration_ps(10)
            .add_stat("correlation_id", 3i64)
            .add_stat("group_id", 5i64);
        // A step the Steps line does not mark is dropped.
        stream
            .add_event("volta_sgemm")
            .set_offset_ps(200)
            .set_duration_ps(10)
            .add_stat("correlation_id", 4i64)
            .add_stat("group_id", 6i64);
        let events = gpu_step_events(&plane);
        assert_eq!(events.keys().copied().collect::<Vec<_>>(), vec![5]);
        let step = &events[&5];
        assert_eq!(step.markers[0].core_id, Some(3));
        assert_eq!(step.device_memory_transfers[0].bytes_transferred, 64);
        assert_eq!(step.collectives[&3].all_reduce_info.len(), 1);
        let db = step_db(true, &events);
        let info = &db.step_sequence[0].step_info_per_core[&DEFAULT_GPU_LOCAL_CORE_ID];
        assert_eq!((info.step_num, info.duration_ps), (5, 100));
    }
}

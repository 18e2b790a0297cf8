//! TPU steps: the steps of a TensorCore or SparseCore plane carry the op metrics of each core
//! in the step (`ConvertTpuDeviceTraceXLineToStepEvents`), and each step of the steps database
//! gets, per core, its time and a breakdown by op category (`StepEventsToPerCoreStepInfo`).

use std::collections::BTreeMap;

use profkit_xplane::XPlane;
use profkit_xplane::constants::{SPARSE_CORE_OP_LINE_NAME, SPARSE_CORE_STEP_LINE_NAME};
use profkit_xplane::visitor::{EventVisitor, LineVisitor, PlaneVisitor, StatValueRef};

use super::event_span::{
    MarkerKind, Span, StepDetails, StepEvents, StepMarker, intersect_combine_from,
    union_combine_from,
};
use super::metrics_db::{DbBuilder, add_idle_op, set_total_time_ps};
use super::tpu::{XEventsDb, device_timespan, from_event, int_or_uint, is_op_line, op_key};
use crate::preprocess::derived::{STEP_LINE_ID, STEP_LINE_NAME, is_derived_line_id};
use crate::preprocess::tpu::{is_tensor_core_plane, tpu_plane_has_core_id};
use crate::proto::{AllReduceInfo, GenericStepBreakdown, PerCoreStepInfo, StepInfoResult};

/// An event's own stat (TSL's `XEventVisitor::GetStat`).
fn own_stat<'v>(event: &EventVisitor<'v>, name: &str) -> Option<StatValueRef<'v>> {
    event
        .stats()
        .find(|s| s.name() == name)
        .and_then(|s| s.value())
}

/// `IntValue`: the `int64_value`, 0 for another kind.
fn int_value(v: Option<StatValueRef<'_>>) -> i64 {
    match v {
        Some(StatValueRef::Int64(v)) => v,
        _ => 0,
    }
}

/// `kSparseCoreIndexStart`: SparseCore planes' core ids start here.
pub const SPARSE_CORE_INDEX_START: u32 = 1_000_000;

/// `StepEventsToPerCoreStepInfo`: each core's step info and the step's HLO op metrics (the
/// TensorCores' combined). A step without markers keeps only its number.
pub fn per_core_step_info(step_num: u32, details: &StepDetails, out: &mut PerCoreStepInfo) {
    out.step_num = step_num;
    let mut combiner = DbBuilder::appending_to(out.hlo_metrics_db.take().unwrap_or_default());
    let step_time = details.step_time();
    if step_time.duration == 0 {
        out.hlo_metrics_db = Some(combiner.db);
        return;
    }
    // Below: the combiner has combined (or will combine) a database, which writes the precision
    // stats.
    for (&core, db) in &details.per_core_op_metrics_db {
        let time = if core >= SPARSE_CORE_INDEX_START {
            details.step_time_on_core(core)
        } else {
            step_time
        };
        let mut db = db.clone();
        set_total_time_ps(&mut db, time.duration);
        add_idle_op(&mut db);
        if core < SPARSE_CORE_INDEX_START {
            combiner.combine(&db, true);
        }
        let mut breakdown = GenericStepBreakdown::default();
        for op in &db.metrics_db {
            let slot = breakdown
                .category_ps
                .entry(op.category.clone())
                .or_default();
            *slot = slot.wrapping_add(op.self_time_ps);
        }
        out.step_info_per_core.insert(
            core,
            StepInfoResult {
                step_num,
                step_name: details.step_name.clone(),
                begin_ps: time.begin,
                duration_ps: time.duration,
                step_breakdown: Some(super::steps::pack_breakdown(&breakdown)),
                ..StepInfoResult::default()
            },
        );
    }
    let mut hlo = combiner.db;
    // xprof's combiner always writes the precision stats.
    hlo.precision_stats.get_or_insert_with(Default::default);
    out.hlo_metrics_db = Some(hlo);
    for (core, db) in &details.collectives {
        out.all_reduce_db_per_core.insert(*core, db.clone());
    }
}

/// The core details a TPU plane's `core_details` stat holds (serialized `CoreDetails`), with
/// the host's name and whether the plane is a SparseCore's; `None` without a stat that parses.
pub fn core_details(
    plane: &profkit_xplane::XPlane,
    host: &str,
) -> Option<crate::proto::CoreDetails> {
    let visitor = profkit_xplane::visitor::PlaneVisitor::new(plane);
    let bytes = match visitor.stat("core_details")?.value()? {
        profkit_xplane::visitor::StatValueRef::Bytes(b) => b,
        profkit_xplane::visitor::StatValueRef::Str(s) => s.as_bytes(),
        _ => &[],
    };
    let mut details: crate::proto::CoreDetails = prost::Message::decode(bytes).ok()?;
    details.hostname = host.to_owned();
    details.is_sparse_core = crate::preprocess::tpu::tpu_plane_has_core_id(&plane.name)
        && !crate::preprocess::tpu::is_tensor_core_plane(&plane.name);
    Some(details)
}

/// `ConvertTpuDeviceTraceXLineToStepEvents`: the op line's events with a `group_id`, nested by
/// their device spans, each op's metrics (time, self time) added to its step's database for core
/// `device_id`; events with an `all_reduce_unique_id` are the step's collectives.
fn op_line_step_events(device_id: u64, line: &LineVisitor<'_>) -> StepEvents {
    struct Open<'v> {
        event: EventVisitor<'v>,
        span: Span,
        children: u64,
        group: i64,
    }
    let mut result = StepEvents::new();
    let mut builders: BTreeMap<i64, XEventsDb> = BTreeMap::new();
    let close = |open: Open<'_>, builders: &mut BTreeMap<i64, XEventsDb>| {
        let mut op = from_event(&open.event);
        op.time_ps = open.span.duration;
        op.self_time_ps = op.time_ps.wrapping_sub(open.children);
        builders
            .entry(open.group)
            .or_default()
            .add(op, op_key(&open.event));
    };
    let mut stack: Vec<Open<'_>> = Vec::new();
    let ts = line.timestamp_ns();
    for event in line.events() {
        let Some(group) = own_stat(&event, "group_id") else {
            continue;
        };
        let group = int_or_uint(Some(group)) as i64;
        let (begin, end) = device_timespan(&event, ts);
        let span = Span::new(begin, end.wrapping_sub(begin));
        while stack.last().is_some_and(|top| !top.span.includes(&span)) {
            if let Some(top) = stack.pop() {
                close(top, &mut builders);
            }
        }
        if let Some(parent) = stack.last_mut() {
            parent.children = parent.children.wrapping_add(span.duration);
        }
        if let Some(unique) = own_stat(&event, "all_reduce_unique_id") {
            let info = all_reduce_info(&event, ts, int_or_uint(Some(unique)));
            result
                .entry(group)
                .or_default()
                .add_collective(device_id, info);
        }
        stack.push(Open {
            event,
            span,
            children: 0,
            group,
        });
    }
    while let Some(top) = stack.pop() {
        close(top, &mut builders);
    }
    for (group, builder) in builders {
        result
            .entry(group)
            .or_default()
            .per_core_op_metrics_db
            .insert(device_id as u32, builder.finalize_ops());
    }
    result
}

/// `GetAllReduceInfo`: the collective's id, device span (the event's when it has no device
/// offset or duration), `all_reduce_id` and bytes (its metadata's `bytes_accessed`).
fn all_reduce_info(event: &EventVisitor<'_>, line_timestamp_ns: i64, id: u64) -> AllReduceInfo {
    let start = (line_timestamp_ns as u64)
        .wrapping_mul(1000)
        .wrapping_add(event.offset_ps() as u64);
    let mut info = AllReduceInfo {
        id,
        start_time_ps: start,
        end_time_ps: start.wrapping_add(event.duration_ps() as u64),
        ..AllReduceInfo::default()
    };
    if let Some(offset) = own_stat(event, "device_offset_ps") {
        info.start_time_ps = int_or_uint(Some(offset));
    }
    if let Some(duration) = own_stat(event, "device_duration_ps") {
        info.end_time_ps = info.start_time_ps.wrapping_add(int_or_uint(Some(duration)));
    }
    if let Some(v) = own_stat(event, "all_reduce_id") {
        info.all_reduce_id = int_or_uint(Some(v));
    }
    if let Some(v) = event
        .metadata_stats()
        .find(|s| s.name() == "bytes_accessed")
        .and_then(|s| s.value())
    {
        info.byte_size = int_or_uint(Some(v));
    }
    info
}

/// `ConvertDeviceStepInfoToStepMarkers` for a TPU core.
fn markers(line: &LineVisitor<'_>, core_id: u32) -> StepEvents {
    let mut result = StepEvents::new();
    let ts = line.timestamp_ns();
    for event in line.events() {
        if let Some(group) = own_stat(&event, "group_id") {
            let (begin, end) = device_timespan(&event, ts);
            result
                .entry(int_value(Some(group)))
                .or_default()
                .markers
                .push(StepMarker {
                    kind: MarkerKind::Device,
                    core_id: Some(core_id),
                    name: event.name().to_owned(),
                    span: Span::new(begin, end.wrapping_sub(begin)),
                });
        }
    }
    result
}

/// `ConvertDeviceTraceXPlaneToStepEvents` for a TPU plane: the steps its `Steps` line (`Sparse
/// Core Steps` on a SparseCore) marks that have events on its op line, with each step's op
/// metrics. SparseCore cores are numbered from [`SPARSE_CORE_INDEX_START`].
pub fn tpu_step_events(plane: &XPlane) -> StepEvents {
    let tensor_core = is_tensor_core_plane(&plane.name);
    let sparse_core = tpu_plane_has_core_id(&plane.name) && !tensor_core;
    let visitor = PlaneVisitor::new(plane);
    let mut step_markers = StepEvents::new();
    let mut events = StepEvents::new();
    let mut device = None;
    for line in visitor.lines() {
        let name = line.name();
        if line.id() as i32 == STEP_LINE_ID as i32
            || (tensor_core && name == STEP_LINE_NAME)
            || (sparse_core && name == SPARSE_CORE_STEP_LINE_NAME)
        {
            let mut id = plane.id as u32;
            if sparse_core {
                id = id.wrapping_add(SPARSE_CORE_INDEX_START);
            }
            step_markers = markers(&line, id);
        } else if is_derived_line_id(line.id()) {
            continue;
        } else if tensor_core {
            if is_op_line(name) {
                events = op_line_step_events(plane.id as u64, &line);
            }
        } else if sparse_core {
            if name == SPARSE_CORE_OP_LINE_NAME {
                events = op_line_step_events(
                    u64::from(SPARSE_CORE_INDEX_START).wrapping_add(plane.id as u64),
                    &line,
                );
            }
        } else {
            let device = device.get_or_insert_with(|| super::steps::DevicePlane::new(plane));
            union_combine_from(
                super::steps::gpu_line_step_events(device, plane.id as u64, line.raw()),
                &mut events,
            );
        }
    }
    if !events.is_empty() {
        intersect_combine_from(step_markers, &mut events);
    }
    events
}

/// Whether a SparseCore plane has ops (events on its `Sparse Core Ops` line): xprof 2.24.2 gives
/// the steps of a TPU host with such a plane a SparseCore breakdown per SparseCore, which
/// profkit does not reproduce.
pub fn sparse_core_has_ops(plane: &XPlane) -> bool {
    if !tpu_plane_has_core_id(&plane.name) || is_tensor_core_plane(&plane.name) {
        return false;
    }
    PlaneVisitor::new(plane)
        .lines()
        .any(|line| line.name() == SPARSE_CORE_OP_LINE_NAME && line.events().len() > 0)
}

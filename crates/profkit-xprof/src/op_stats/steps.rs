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
use profkit_xplane::{XLine, XPlane, XSpace};
use rustc_hash::FxHashMap;

mod read;

pub(super) use read::DevicePlane;
use read::{HostName, StatIds, StatKind, event_name, int_value, timespan};

use super::HostMarks;
use super::event_span::{
    MarkerKind, Span, StepDetails, StepEvents, StepMarker, TypedSpan, event_type::*,
    intersect_combine_from, non_overlapped_into, precision_stats, union_combine_from,
};
use crate::indexed::{Event, IndexedPlane, LineEvents};
use crate::preprocess::Marks;
use crate::preprocess::derived::is_derived_line_id;
use crate::proto::{
    AllReduceInfo, CoreDetails, GenericStepBreakdown, OpStats, PerCoreStepInfo, PrecisionStats,
    StepDatabaseResult, StepInfoResult,
};

/// `kDefaultGpuLocalCoreId`: the core every step of a host without per-core op metrics is
/// filed under.
pub const DEFAULT_GPU_LOCAL_CORE_ID: u32 = 1;

/// `kThreadIdStepInfo`: the derived `Steps` line's id.
const STEP_INFO_LINE_ID: i64 = crate::preprocess::derived::STEP_LINE_ID;

/// The type URL of a packed `GenericStepBreakdown`.
pub const GENERIC_STEP_BREAKDOWN_URL: &str =
    "type.googleapis.com/tensorflow.profiler.GenericStepBreakdown";

/// An event on the input pipeline stage stack (TSL's `AncestorStack`).
struct StageRef {
    is_stage: bool,
    is_descendant: bool,
    span: Span,
}

/// A plane's steps by group id as they are first met, sorted into [`StepEvents`] at the end (a
/// map lookup per group met rather than per event, and no per-line maps to unite).
#[derive(Default)]
struct Groups {
    index: FxHashMap<i64, usize>,
    /// Each step, with the line whose `step_name` it took.
    steps: Vec<(i64, StepDetails, Option<usize>)>,
    last: Option<(i64, usize)>,
}

impl Groups {
    fn get(&mut self, group: i64) -> Option<&mut (i64, StepDetails, Option<usize>)> {
        let i = match self.last {
            Some((g, i)) if g == group => i,
            _ => {
                let next = self.steps.len();
                let i = *self.index.entry(group).or_insert(next);
                if i == next {
                    self.steps.push((group, StepDetails::default(), None));
                }
                self.last = Some((group, i));
                i
            }
        };
        self.steps.get_mut(i)
    }

    /// Adds the steps of the lines after this one's (`other`), as if their events had followed:
    /// new steps in the order `other` met them, markers and events after this one's, and a step
    /// this one has not named takes `other`'s name.
    fn append(&mut self, other: Groups) {
        for (group, details, name_line) in other.steps {
            let Some((_, step, named)) = self.get(group) else {
                continue;
            };
            step.markers.extend(details.markers);
            step.events.append(details.events);
            if named.is_none() && name_line.is_some() {
                *named = name_line;
                step.step_name = details.step_name;
            }
        }
    }

    fn into_step_events(self) -> StepEvents {
        self.steps.into_iter().map(|(g, d, _)| (g, d)).collect()
    }
}

/// `ConvertHostThreadsXLineToStepEvents`, adding to the plane's steps: a line's markers and
/// events follow the previous lines', and a step takes its name from the first line that names
/// it (the last name on that line), as uniting each line's step events in line order does.
#[allow(clippy::too_many_arguments)]
fn host_line_step_events<'a>(
    ids: &StatIds<'a>,
    names: &FxHashMap<i64, HostName<'a>>,
    unnamed: &HostName<'a>,
    line_index: usize,
    (line, events): (&'a XLine, LineEvents<'a>),
    device_steps: Option<&StepEvents>,
    async_parents: &[(i64, i64)],
    marks: Option<Marks<'a>>,
    stack: &mut Vec<StageRef>,
    steps: &mut Groups,
) {
    stack.clear();
    let ts = line.timestamp_ns;
    for (index, event) in events.enumerate() {
        let stats = match &marks {
            Some(marks) => ids.event_stats_marked(event, marks.at(index)),
            None => ids.event_stats(event),
        };
        let span = timespan(ts, event);
        let async_parent = match (stats.consumer_type, stats.consumer_id) {
            (Some(t), Some(id)) => async_parents.binary_search(&(t, id)).is_ok(),
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
        let name = names.get(&event.metadata_id()).unwrap_or(unnamed);
        let Some((_, step, name_line)) = steps.get(group) else {
            continue;
        };
        if name.explicit_marker {
            step.markers.push(StepMarker {
                kind: MarkerKind::ExplicitHost,
                core_id: None,
                name: name.name.to_owned(),
                span,
            });
        } else if !stats.step_name.is_empty() {
            step.markers.push(StepMarker {
                kind: MarkerKind::ImplicitHost,
                core_id: None,
                name: name.name.to_owned(),
                span,
            });
        } else if name.real_cpu_compute {
            let has_correlation = stats.correlation_id.is_some_and(|c| c >= 0);
            step.events.push(TypedSpan {
                kind: name.classify(device_steps.is_some(), has_correlation, root_stage),
                span,
            });
        }
        if !stats.step_name.is_empty() && name_line.is_none_or(|l| l == line_index) {
            *name_line = Some(line_index);
            stats.step_name.clone_into(&mut step.step_name);
        }
    }
}

/// `ConvertHostThreadsXPlaneToStepEvents`: every line's step events, united.
pub fn host_step_events(plane: &XPlane, device_steps: Option<&StepEvents>) -> StepEvents {
    host_step_events_marked(&IndexedPlane::of_owned(plane), device_steps, None, true)
}

/// [`host_step_events`] of an indexed plane, with its grouping marks when they are kept beside
/// it; its threads on the pool's threads when `lines_on_pool` allows it.
fn host_step_events_marked<'a>(
    plane: &'a IndexedPlane,
    device_steps: Option<&StepEvents>,
    marks: Option<&HostMarks<'a>>,
    lines_on_pool: bool,
) -> StepEvents {
    // The threads on the pool's threads when the plane is big (as its op metrics are), unless
    // asked for in turn.
    let parallel = lines_on_pool
        && crate::indexed::LINES_ON_POOL.contains(&plane.event_count())
        && plane.line_count() > 1;
    host_step_events_on(plane, device_steps, marks, parallel)
}

/// [`host_step_events_marked`], the threads one after the other or, when `parallel`, each on
/// its own on the pool's threads (the same steps: the lines' are appended in line order).
fn host_step_events_on<'a>(
    plane: &'a IndexedPlane,
    device_steps: Option<&StepEvents>,
    marks: Option<&HostMarks<'a>>,
    parallel: bool,
) -> StepEvents {
    let shadow = plane.shadow();
    let ids = StatIds::new(shadow);
    let lines = plane.line_count();
    // The producers' contexts, sorted, each once (a hash set of them cost twice the memory: a
    // 1 GB profile has millions).
    let mut parents = Vec::new();
    if ids.has(StatKind::ProducerType) && ids.has(StatKind::ProducerId) {
        let line_parents = |i: usize, parents: &mut Vec<(i64, i64)>| {
            if let Some((_, events)) = plane.line(i) {
                parents.extend(events.filter_map(|event| ids.producer(event)));
            }
        };
        if parallel {
            use rayon::prelude::*;
            // Each line's, sorted and deduplicated before they are put together (in order, as
            // soon as two neighbours are done), so that few are held twice.
            parents = (0..lines)
                .into_par_iter()
                .map(|i| {
                    let mut parents = Vec::new();
                    line_parents(i, &mut parents);
                    parents.sort_unstable();
                    parents.dedup();
                    parents
                })
                .reduce(Vec::new, |mut a, b| {
                    if a.is_empty() {
                        return b;
                    }
                    a.extend(b);
                    a
                });
        } else {
            for i in 0..lines {
                line_parents(i, &mut parents);
            }
        }
        parents.sort_unstable();
        parents.dedup();
        parents.shrink_to_fit();
    }
    let names: FxHashMap<i64, HostName<'_>> = shadow
        .event_metadata
        .iter()
        .map(|(id, md)| (*id, HostName::new(&md.name)))
        .collect();
    let unnamed = HostName::new("");
    let line_steps = |i: usize, steps: &mut Groups, stack: &mut Vec<StageRef>| {
        if let Some(line) = plane.line(i) {
            host_line_step_events(
                &ids,
                &names,
                &unnamed,
                i,
                line,
                device_steps,
                &parents,
                marks.map(|m| m.line(i)),
                stack,
                steps,
            );
        }
    };
    // The threads' steps appended in line order either way.
    let mut steps = Groups::default();
    if parallel {
        use rayon::prelude::*;
        // Neighbours appended as soon as both are done (in order: appending is associative).
        steps = (0..lines)
            .into_par_iter()
            .map(|i| {
                let mut steps = Groups::default();
                line_steps(i, &mut steps, &mut Vec::new());
                steps
            })
            .reduce(Groups::default, |mut a, b| {
                a.append(b);
                a
            });
    } else {
        let mut stack = Vec::new();
        for i in 0..lines {
            line_steps(i, &mut steps, &mut stack);
        }
    }
    steps.into_step_events()
}

/// `ParseNumBytesFromMemcpyDetail`: `num_bytes` of `key:value` pairs split at `:` and newlines.
fn memcpy_bytes(details: &str) -> u64 {
    let mut params = details.split([':', '\n']);
    while let Some(key) = params.next() {
        let value = params.next();
        if key == "num_bytes" {
            let t = value
                .unwrap_or("")
                .trim_matches(|c: char| c.is_ascii_whitespace());
            let t = t.strip_prefix('+').unwrap_or(t);
            return t.parse::<u64>().unwrap_or(0);
        }
    }
    0
}

/// `ConvertDeviceTraceXLineToStepEvents`: one GPU stream's typed events.
pub(super) fn gpu_line_step_events(
    device: &DevicePlane<'_>,
    device_id: u64,
    line: &XLine,
) -> StepEvents {
    let mut result = StepEvents::new();
    let ts = line.timestamp_ns;
    for event in &line.events {
        let stats = device.ids.event_stats(Event::Owned(event));
        let (Some(correlation), Some(group)) = (stats.correlation_id, stats.group_id) else {
            continue;
        };
        if correlation < 0 || group < 0 {
            continue;
        }
        let span = timespan(ts, Event::Owned(event));
        let name = device.names.get(&event.metadata_id);
        let kind = name
            .unwrap_or(&device.unnamed)
            .classify(stats.tensor_shapes);
        let step = result.entry(group).or_default();
        step.events.push(TypedSpan { kind, span });
        match kind {
            DEVICE_COLLECTIVES => {
                // xprof ends it at the event's offset plus duration (not its timestamp).
                let info = AllReduceInfo {
                    start_time_ps: span.begin,
                    end_time_ps: (event.offset_ps().unwrap_or(0) as u64)
                        .wrapping_add(event.duration_ps as u64),
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
fn step_markers(plane: &XPlane, ids: &StatIds<'_>, line: &XLine, core_id: u32) -> StepEvents {
    let mut result = StepEvents::new();
    let ts = line.timestamp_ns;
    for event in &line.events {
        let event = Event::Owned(event);
        if let Some(group) = ids.own(event, StatKind::GroupId) {
            result
                .entry(int_value(Some(group)))
                .or_default()
                .markers
                .push(StepMarker {
                    kind: MarkerKind::Device,
                    core_id: Some(core_id),
                    name: event_name(plane, event).to_owned(),
                    span: ids.device_timespan(ts, event),
                });
        }
    }
    result
}

/// `ConvertDeviceTraceXPlaneToStepEvents` for a GPU plane: the streams' events united, kept
/// for the steps the `Steps` line marks.
pub fn gpu_step_events(plane: &XPlane) -> StepEvents {
    let device = DevicePlane::new(plane);
    let mut markers = StepEvents::new();
    let mut events = StepEvents::new();
    for line in &plane.lines {
        // xprof's id is a 32-bit int (negative); profkit's preprocessing writes it unsigned.
        if line.id as i32 == STEP_INFO_LINE_ID as i32 {
            markers = step_markers(plane, &device.ids, line, plane.id as u32);
        } else if !is_derived_line_id(line.id) {
            union_combine_from(
                gpu_line_step_events(&device, plane.id as u64, line),
                &mut events,
            );
        }
    }
    if !events.is_empty() {
        intersect_combine_from(markers, &mut events);
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

/// `ConvertStepDetailsToStepInfo` of a step whose events are `events`: `None` for a step that
/// is not well formed.
fn step_info(
    has_device: bool,
    step_num: i64,
    details: &StepDetails,
    events: &[TypedSpan],
) -> Option<StepInfoResult> {
    const TYPES: usize = LAST as usize + 1;
    let mut generic = GenericStepBreakdown::default();
    let time = details.step_time();
    // Sums by type in a table (each type met is in the map, even at 0); only hand-built step
    // events have other types.
    let mut sums = [0u64; TYPES];
    let mut met = [false; TYPES];
    let mut total = 0u64;
    for event in events {
        let d = time.overlapped_duration(&event.span);
        match usize::try_from(event.kind).ok().filter(|&k| k < TYPES) {
            Some(k) => {
                if let (Some(sum), Some(m)) = (sums.get_mut(k), met.get_mut(k)) {
                    *sum = sum.wrapping_add(d);
                    *m = true;
                }
            }
            None => {
                let slot = generic.type_ps.entry(event.kind).or_default();
                *slot = slot.wrapping_add(d);
            }
        }
        total = total.wrapping_add(d);
    }
    for (k, (sum, m)) in sums.iter().zip(&met).enumerate() {
        if *m {
            generic.type_ps.insert(k as i32, *sum);
        }
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

/// One step of `ConvertStepEventsToStepDb`, its events being `events` (the step's own, or
/// them made non-overlapping): `None` for a step without per-core op metrics that is not well
/// formed.
fn per_core_step(
    has_device: bool,
    step: i64,
    details: &StepDetails,
    events: &[TypedSpan],
) -> Option<PerCoreStepInfo> {
    let mut per_core = PerCoreStepInfo {
        step_num: step as u32,
        ..PerCoreStepInfo::default()
    };
    if !details.per_core_op_metrics_db.is_empty() {
        super::tpu_steps::per_core_step_info(step as u32, details, &mut per_core);
    } else {
        let info = step_info(has_device, step, details, events)?;
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
    Some(per_core)
}

/// `ConvertStepEventsToStepDb` (without dropping incomplete steps, as every caller in xprof
/// 2.24.2 asks) for steps without per-core op metrics (hosts and GPUs).
pub fn step_db(has_device: bool, steps: &StepEvents) -> StepDatabaseResult {
    let mut db = StepDatabaseResult::default();
    let mut events = Vec::new();
    for (&step, details) in steps {
        events.clear();
        events.extend(details.events.iter());
        db.step_sequence
            .extend(per_core_step(has_device, step, details, &events));
    }
    db
}

/// `ToNonOverlappedStepEvents`, then `ConvertStepEventsToStepDb` and `ComputePrecisionStats` of
/// the non-overlapped step events, a step at a time: the non-overlapped events of one step
/// live only while its step info is computed.
fn non_overlapped_step_db(
    has_device: bool,
    steps: &StepEvents,
) -> (StepDatabaseResult, PrecisionStats) {
    let mut db = StepDatabaseResult::default();
    let mut precision = PrecisionStats::default();
    let mut bounds = Vec::new();
    let mut events = Vec::new();
    for (&step, details) in steps {
        non_overlapped_into(details.events.iter(), &mut bounds, &mut events);
        super::event_span::add_precision_stats(events.iter().copied(), &mut precision);
        db.step_sequence
            .extend(per_core_step(has_device, step, details, &events));
    }
    (db, precision)
}

/// `Hostname`: the space's first host name, else `localhost`.
pub fn hostname(space: &XSpace) -> &str {
    space.hostnames.first().map_or("localhost", String::as_str)
}

/// What `ConvertXSpaceToOpStats` builds from step events and device planes' core details, for
/// one preprocessed space: `step_db`, the device op metrics' `precision_stats`, the
/// `core_id_to_details` (on GPU and CPU-only hosts core 1 with the host name; on TPU hosts each
/// device plane's `core_details` stat), and on TPU hosts `hlo_metrics_db_complete_steps_only`.
/// The host threads' steps are found on the pool's threads when `lines_on_pool` allows it.
pub(crate) fn fill<'a>(
    space: &'a XSpace,
    host_plane: Option<&'a IndexedPlane>,
    host_marks: Option<&HostMarks<'a>>,
    lines_on_pool: bool,
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
                intersect_combine_from(events, &mut step_events);
            }
        } else {
            let events = gpu_step_events(plane);
            if !events.is_empty() {
                union_combine_from(events, &mut step_events);
            }
        }
    }
    let has_device = !device_planes.is_empty();
    // A GPU host's steps are its devices': its host steps would go unread.
    let mut host_steps = match host_plane {
        Some(p) if is_tpu || !has_device => {
            Some(host_step_events_marked(p, None, host_marks, lines_on_pool))
        }
        _ => None,
    };
    if !has_device {
        if let Some(host_steps) = host_steps.take() {
            union_combine_from(host_steps, &mut step_events);
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
        let (db, precision) = non_overlapped_step_db(has_device, &step_events);
        stats.step_db = Some(db);
        device_db.precision_stats = Some(precision);
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
        let classify_gpu_event = |name, shapes| read::GpuName::new(name).classify(shapes);
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

    /// Four threads whose steps are named, marked and typed on several of them, with producers
    /// and consumers of contexts across threads.
    fn threads_plane() -> XPlane {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        for thread in 0..4i64 {
            let mut line = b.line(thread + 1);
            for step in 0..6i64 {
                let at = step * 1000 + thread * 7;
                // Steps 1 and 4 are named on threads 1 and 3 only, step 2 on every thread.
                let named = step == 2 || (thread % 2 == 1 && (step == 1 || step == 4));
                let mut root = line.add_event(if thread == 0 { "train" } else { "Run" });
                root.set_offset_ps(at)
                    .set_duration_ps(900)
                    .add_stat("group_id", step);
                if named {
                    root.add_stat("step_name", format!("step {step} of {thread}"));
                }
                line.add_event("Iterator::Prefetch")
                    .set_offset_ps(at + 10)
                    .set_duration_ps(100)
                    .add_stat("group_id", step)
                    .add_stat("_pt", 1i64)
                    .add_stat("_p", step * 10 + thread);
                line.add_event("Iterator::Map")
                    .set_offset_ps(at + 200)
                    .set_duration_ps(50)
                    .add_stat("group_id", step)
                    .add_stat("_ct", 1i64)
                    .add_stat("_c", step * 10 + (thread + 1) % 4);
                line.add_event("IteratorGetNextOp")
                    .set_offset_ps(at + 300)
                    .set_duration_ps(40)
                    .add_stat("group_id", step);
                line.add_event("model/MatMul:MatMul")
                    .set_offset_ps(at + 400)
                    .set_duration_ps(100 + thread)
                    .add_stat("group_id", step);
            }
        }
        plane
    }

    #[test]
    fn threads_on_the_pool_give_the_steps_of_threads_one_after_the_other() {
        let plane = IndexedPlane::of_owned(&threads_plane());
        let one = host_step_events_on(&plane, None, None, false);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let many = pool.install(|| host_step_events_on(&plane, None, None, true));
        assert_eq!(format!("{one:?}"), format!("{many:?}"));
        assert_eq!(one.len(), 6);
        assert_eq!(one[&1].step_name, "step 1 of 1");
        assert_eq!(one[&2].step_name, "step 2 of 0");
        // A marker a thread: `train` explicit, the other roots by their step name.
        assert_eq!(one[&2].markers.len(), 4);
        assert_eq!(one[&3].step_name, "");
        // Every thread's events of a step (thread 0's `train` is a marker, the others' roots
        // host compute), each thread's after the one before.
        assert_eq!(one[&0].events.iter().count(), 4 + 3 * 5);
    }

    #[test]
    fn a_step_is_named_by_the_first_line_naming_it() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        let mut one = b.line(1);
        for (at, name) in [(0i64, "a"), (20, "b")] {
            one.add_event("train")
                .set_offset_ps(at)
                .set_duration_ps(10)
                .add_stat("group_id", 4i64)
                .add_stat("step_name", name);
        }
        let mut two = b.line(2);
        two.add_event("step")
            .set_offset_ps(0)
            .set_duration_ps(5)
            .add_stat("group_id", 4i64)
            .add_stat("step_name", "c");
        two.add_event("MatMul")
            .set_offset_ps(1)
            .set_duration_ps(2)
            .add_stat("group_id", 4i64);
        // A second stat metadata named `group_id`: its stats are group ids too.
        let group = plane
            .stat_metadata
            .values()
            .find(|m| m.name == "group_id")
            .cloned()
            .unwrap();
        let id = plane.stat_metadata.keys().max().unwrap() + 1;
        plane
            .stat_metadata
            .insert(id, profkit_xplane::XStatMetadata { id, ..group });
        plane.lines[1].events[1].stats[0].metadata_id = id;
        let steps = host_step_events(&plane, None);
        let step = &steps[&4];
        assert_eq!(step.step_name, "b");
        let kinds: Vec<MarkerKind> = step.markers.iter().map(|m| m.kind).collect();
        assert_eq!(
            kinds,
            [
                MarkerKind::ExplicitHost,
                MarkerKind::ExplicitHost,
                MarkerKind::ImplicitHost
            ]
        );
        assert_eq!(step.events.len(), 1);
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

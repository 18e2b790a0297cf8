//! xprof's `memory_profile` tool: what the allocators of one host did over the profile, as xprof
//! 2.24.2 computes it from the host plane (`ConvertXSpaceToMemoryProfileJson`) and prints it
//! (protobuf JSON, see `json`).
//!
//! Each `MemoryAllocation` and `MemoryDeallocation` event of `/host:CPU` (its type told by its
//! metadata's name, its stats by their metadata's names, the event's own stats only, in file
//! order, the last of a kind winning) is a snapshot of its allocator: the allocator's id is the
//! `allocator_name` stat, or the `index_on_host` or `device_ordinal` integer, whichever comes last
//! (empty when none does). Per allocator, in xprof's order:
//!
//! - the profile summary, kept event by event in visiting order (line by line, each line's events
//!   in file order but on the lines preprocessing sorts, see below): the lifetime peak is the last event's `peak_bytes_in_use`; the peak within
//!   the profile is the last event whose `bytes_reserved + bytes_allocated` reaches (`>=`) the
//!   peak so far, its stats kept with that sum as their `peak_bytes_in_use`, its offset as the
//!   peak's time and that sum plus `bytes_available` as the capacity;
//! - the snapshots sorted by offset with libstdc++'s `std::sort` (ties keep whatever order the
//!   introsort leaves them in, reproduced);
//! - step ids: an event without `group_id` takes the last one before it plus one (0 before any);
//! - each deallocation takes the op name, region, data type and shape of the allocation at its
//!   address that came before it and has not been freed since (the first of two allocations at an
//!   address still held);
//! - the timeline: every snapshot when there are at most [`MAX_SNAPSHOTS`], else that many, each
//!   the first largest (`bytes_allocated + bytes_reserved`) of a run of consecutive snapshots
//!   (the runs of the shorter width first);
//! - the peak's step: the step of the last snapshot (in time) whose usage equals the peak;
//! - the allocations active at the peak: replaying the peak step's snapshots up to the peak's
//!   time, the allocations not freed (by address), and two special ones, the heap bytes the
//!   replay does not account for (`unused preallocated device memory`) and the reserved stack
//!   (`stack`), when positive; sorted by allocation bytes and requested bytes (largest first),
//!   then op name, region, data type and shape, equal ones merged with their count;
//! - the snapshots kept in the output: one per active allocation that is not special, in that
//!   order, the allocation pointing at it by index.
//!
//! Then the ids in byte order, one host, version 1, and one `HloModule` per event of the `XLA
//! Modules` lines of the TPU planes (`/device:TPU:`), numbered in plane, line and event order.
//!
//! The space is first preprocessed as xprof preprocesses it for this tool (step grouping, no
//! derived timelines; see `steps`): allocator events take the `group_id` of their step, and the
//! lines where xprof adds thread pool regions are visited sorted by start (ties in file order).
//!
//! Where xprof's own output changes from run to run, profkit's is fixed, and it says so here:
//! the order of the allocators in `memoryProfilePerAllocator` (a hash map's in xprof; profkit
//! lists them in byte order of their ids, as `memoryIds`), and, when several allocations active at
//! the peak are merged, which of them the kept snapshot is (the first met in xprof's hash map;
//! profkit keeps the earliest). Everything else is xprof's, byte for byte.

mod dtype;
mod json;
mod steps;

use std::collections::HashMap;

use profkit_events::report::std_sort;
use profkit_xplane::constants::{HOST_PLANE_NAME, TPU_PLANE_PREFIX};
use profkit_xplane::{XEvent, XPlane, XSpace, XStat, x_event, x_stat};

use crate::proto::{
    ActiveAllocation, HloModule, MemoryActivity, MemoryActivityMetadata, MemoryAggregationStats,
    MemoryProfile, MemoryProfileSnapshot, MemoryProfileSummary, PerAllocatorMemoryProfile,
};
use crate::{Error, Result};

pub use json::to_json;

/// How many snapshots of an allocator xprof's timeline keeps at most
/// (`sampledTimelineSnapshots`).
pub const MAX_SNAPSHOTS: usize = 1000;

/// The step id xprof gives an event without `group_id` before fixing it.
const INVALID_STEP: i64 = -1;

/// xprof's `memory_profile` tool on a profile of these hosts' spaces, as the proto it prints:
/// xprof reads one host only, so any other number of spaces is an error
/// ([`Error::Hosts`]); `None` when the space has no `/host:CPU` plane (xprof then returns an
/// empty text).
///
/// ```
/// use profkit_xplane::{PlaneBuilder, XPlane, XSpace};
/// let mut plane = XPlane::default();
/// let mut b = PlaneBuilder::new(&mut plane);
/// b.set_name("/host:CPU");
/// b.line(1)
///     .add_event("MemoryAllocation")
///     .set_offset_ps(1_000)
///     .add_stat("allocator_name", "GPU_0_bfc")
///     .add_stat("bytes_allocated", 256_i64)
///     .add_stat("allocation_bytes", 256_i64)
///     .add_stat("addr", 4096_i64);
/// let space = XSpace { planes: vec![plane], ..XSpace::default() };
/// let profile = profkit_xprof::tools::memory_profile::memory_profile(&[space])?.unwrap();
/// assert_eq!(profile.memory_ids, ["GPU_0_bfc"]);
/// let json = profkit_xprof::tools::memory_profile::to_json(&profile);
/// assert!(json.starts_with(r#"{"memoryProfilePerAllocator":{"GPU_0_bfc":{"memoryProfileSnapshots":[{"timeOffsetPs":"1000","#));
/// # Ok::<(), profkit_xprof::Error>(())
/// ```
pub fn memory_profile(spaces: &[XSpace]) -> Result<Option<MemoryProfile>> {
    match spaces {
        [space] => Ok(from_space(space)),
        _ => Err(Error::Hosts {
            tool: "memory_profile",
            hosts: spaces.len(),
        }),
    }
}

/// What xprof's `xspace_to_tool_data([path], "memory_profile", ...)` returns for these hosts'
/// spaces: the [`memory_profile`] printed as xprof prints it ([`to_json`]), or an empty text when
/// the space has no `/host:CPU` plane.
pub fn memory_profile_json(spaces: &[XSpace]) -> Result<String> {
    Ok(memory_profile(spaces)?
        .map(|p| to_json(&p))
        .unwrap_or_default())
}

/// The memory profile of one host's space; `None` without a `/host:CPU` plane.
pub fn from_space(space: &XSpace) -> Option<MemoryProfile> {
    let index = space
        .planes
        .iter()
        .position(|p| p.name == HOST_PLANE_NAME)?;
    let host = space.planes.get(index)?;
    // Preprocessing only matters to allocator events: without any, it is not run.
    let has_events = host
        .event_metadata
        .values()
        .any(|m| activity(&m.name).is_some());
    let visit = if has_events {
        steps::visit(space, index, host)
    } else {
        steps::Visit::default()
    };
    let mut profile = collect(host, &visit);
    for allocator in profile.memory_profile_per_allocator.values_mut() {
        process_allocator(allocator, MAX_SNAPSHOTS);
    }
    profile.num_hosts = 1;
    profile.memory_ids = profile
        .memory_profile_per_allocator
        .keys()
        .cloned()
        .collect();
    profile.version = 1;
    profile.hlo_modules = hlo_modules(space);
    Some(profile)
}

/// What an allocator event is, by its metadata's name (TSL's `HostEventType`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Activity {
    Allocation,
    Deallocation,
}

/// The stats xprof reads from an allocator event, by their metadata's name (TSL's `StatType`).
#[derive(Clone, Copy)]
enum Stat {
    /// `index_on_host`, `device_ordinal`: an allocator id as an integer.
    IdNumber,
    /// `allocator_name`.
    IdName,
    BytesReserved,
    BytesAllocated,
    BytesAvailable,
    Fragmentation,
    PeakBytesInUse,
    RequestedBytes,
    AllocationBytes,
    Address,
    TfOp,
    GroupId,
    RegionType,
    DataType,
    Shape,
}

fn activity(name: &str) -> Option<Activity> {
    match name {
        "MemoryAllocation" => Some(Activity::Allocation),
        "MemoryDeallocation" => Some(Activity::Deallocation),
        _ => None,
    }
}

fn stat_kind(name: &str) -> Option<Stat> {
    Some(match name {
        "index_on_host" | "device_ordinal" => Stat::IdNumber,
        "allocator_name" => Stat::IdName,
        "bytes_reserved" => Stat::BytesReserved,
        "bytes_allocated" => Stat::BytesAllocated,
        "bytes_available" => Stat::BytesAvailable,
        "fragmentation" => Stat::Fragmentation,
        "peak_bytes_in_use" => Stat::PeakBytesInUse,
        "requested_bytes" => Stat::RequestedBytes,
        "allocation_bytes" => Stat::AllocationBytes,
        "addr" => Stat::Address,
        "tf_op" => Stat::TfOp,
        "group_id" => Stat::GroupId,
        "region_type" => Stat::RegionType,
        "data_type" => Stat::DataType,
        "shape" => Stat::Shape,
        _ => return None,
    })
}

/// A stat read as TSL's `XStatVisitor` reads it: `IntValue` is the `int64` value only (0 for a
/// stat of another type), `DoubleValue` the `double` only, `StrOrRefValue` a string or the name
/// of the referenced stat metadata.
struct Reader<'a> {
    plane: &'a XPlane,
}

impl Reader<'_> {
    fn int(stat: &XStat) -> i64 {
        match stat.value {
            Some(x_stat::Value::Int64Value(v)) => v,
            _ => 0,
        }
    }

    fn double(stat: &XStat) -> f64 {
        match stat.value {
            Some(x_stat::Value::DoubleValue(v)) => v,
            _ => 0.0,
        }
    }

    fn str_or_ref(&self, stat: &XStat) -> String {
        match &stat.value {
            Some(x_stat::Value::StrValue(s)) => s.clone(),
            // The id is an `int64` key in C++: a larger `ref_value` wraps.
            Some(x_stat::Value::RefValue(id)) => self
                .plane
                .stat_metadata
                .get(&(*id as i64))
                .map(|m| m.name.clone())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

/// `GenerateMemoryProfile`: a snapshot per allocator event, in the order xprof visits them once
/// preprocessed (`visit`), and each allocator's summary.
fn collect(plane: &XPlane, visit: &steps::Visit) -> MemoryProfile {
    let activities: HashMap<i64, Activity> = plane
        .event_metadata
        .iter()
        .filter_map(|(id, m)| Some((*id, activity(&m.name)?)))
        .collect();
    let mut profile = MemoryProfile::default();
    if activities.is_empty() {
        return profile;
    }
    let stats: HashMap<i64, Stat> = plane
        .stat_metadata
        .iter()
        .filter_map(|(id, m)| Some((*id, stat_kind(&m.name)?)))
        .collect();
    let reader = Reader { plane };
    let mut first = 0;
    for (index, line) in plane.lines.iter().enumerate() {
        for i in visit.order(index, &line.events) {
            let Some(event) = line.events.get(i) else {
                continue;
            };
            let Some(&activity) = activities.get(&event.metadata_id) else {
                continue;
            };
            let group = visit.group(first + i);
            let (id, mut snapshot) = snapshot(event, activity, &stats, &reader);
            // Grouping sets the event's `group_id` stat (or adds one).
            if let (Some(group), Some(meta)) = (group, snapshot.activity_metadata.as_mut()) {
                meta.step_id = group;
            }
            let allocator = profile.memory_profile_per_allocator.entry(id).or_default();
            let summary = allocator
                .profile_summary
                .get_or_insert_with(Default::default);
            if let Some(stats) = &snapshot.aggregation_stats {
                update_summary(summary, stats, snapshot.time_offset_ps);
            }
            allocator.memory_profile_snapshots.push(snapshot);
        }
        first += line.events.len();
    }
    profile
}

/// An allocator event's allocator id and snapshot.
fn snapshot(
    event: &XEvent,
    activity: Activity,
    kinds: &HashMap<i64, Stat>,
    reader: &Reader<'_>,
) -> (String, MemoryProfileSnapshot) {
    let mut stats = MemoryAggregationStats::default();
    let mut meta = MemoryActivityMetadata {
        memory_activity: match activity {
            Activity::Allocation => MemoryActivity::Allocation,
            Activity::Deallocation => MemoryActivity::Deallocation,
        } as i32,
        step_id: INVALID_STEP,
        ..MemoryActivityMetadata::default()
    };
    let mut id = String::new();
    for stat in &event.stats {
        let Some(&kind) = kinds.get(&stat.metadata_id) else {
            continue;
        };
        let int = Reader::int(stat);
        match kind {
            Stat::IdNumber => id = int.to_string(),
            Stat::IdName => id = reader.str_or_ref(stat),
            Stat::BytesReserved => stats.stack_reserved_bytes = int,
            Stat::BytesAllocated => stats.heap_allocated_bytes = int,
            Stat::BytesAvailable => stats.free_memory_bytes = int,
            Stat::Fragmentation => stats.fragmentation = Reader::double(stat),
            Stat::PeakBytesInUse => stats.peak_bytes_in_use = int,
            Stat::RequestedBytes => meta.requested_bytes = int,
            Stat::AllocationBytes => meta.allocation_bytes = int,
            // An int64 stored in the uint64 field, as the C++ setter does.
            Stat::Address => meta.address = int as u64,
            Stat::TfOp => meta.tf_op_name = reader.str_or_ref(stat),
            Stat::GroupId => meta.step_id = int,
            Stat::RegionType => meta.region_type = reader.str_or_ref(stat),
            // The enum is an `int` in C++: the value is truncated to 32 bits.
            Stat::DataType => meta.data_type = dtype::name(int as i32),
            Stat::Shape => meta.tensor_shape = reader.str_or_ref(stat),
        }
    }
    let time_offset_ps = match event.data {
        Some(x_event::Data::OffsetPs(v)) => v,
        _ => 0,
    };
    let snapshot = MemoryProfileSnapshot {
        time_offset_ps,
        aggregation_stats: Some(stats),
        activity_metadata: Some(meta),
    };
    (id, snapshot)
}

/// `UpdateProfileSummary`, for one event in visiting order.
fn update_summary(summary: &mut MemoryProfileSummary, stats: &MemoryAggregationStats, time: i64) {
    summary.peak_bytes_usage_lifetime = stats.peak_bytes_in_use;
    let peak = summary.peak_stats.get_or_insert_with(Default::default);
    let in_use = stats
        .stack_reserved_bytes
        .wrapping_add(stats.heap_allocated_bytes);
    if in_use >= peak.peak_bytes_in_use {
        *peak = MemoryAggregationStats {
            peak_bytes_in_use: in_use,
            ..*stats
        };
        summary.peak_stats_time_ps = time;
        summary.memory_capacity = in_use.wrapping_add(stats.free_memory_bytes);
    }
}

fn in_use(snapshot: &MemoryProfileSnapshot) -> i64 {
    snapshot.aggregation_stats.as_ref().map_or(0, |s| {
        s.heap_allocated_bytes.wrapping_add(s.stack_reserved_bytes)
    })
}

fn meta(snapshot: &MemoryProfileSnapshot) -> &MemoryActivityMetadata {
    static EMPTY: MemoryActivityMetadata = MemoryActivityMetadata {
        memory_activity: 0,
        requested_bytes: 0,
        allocation_bytes: 0,
        address: 0,
        tf_op_name: String::new(),
        step_id: 0,
        region_type: String::new(),
        data_type: String::new(),
        tensor_shape: String::new(),
    };
    snapshot.activity_metadata.as_ref().unwrap_or(&EMPTY)
}

fn meta_mut(snapshot: &mut MemoryProfileSnapshot) -> &mut MemoryActivityMetadata {
    snapshot
        .activity_metadata
        .get_or_insert_with(Default::default)
}

/// `ProcessMemoryProfileProto` for one allocator, `max` the most snapshots its timeline keeps.
fn process_allocator(allocator: &mut PerAllocatorMemoryProfile, max: usize) {
    sort_by_time(&mut allocator.memory_profile_snapshots);
    let snapshots = &mut allocator.memory_profile_snapshots;
    fix_step_ids(snapshots);
    fill_deallocations(snapshots);
    allocator.sampled_timeline_snapshots = sample_timeline(snapshots, max);
    let summary = allocator.profile_summary.unwrap_or_default();
    let peak = summary.peak_stats.unwrap_or_default();
    let peak_step = snapshots
        .iter()
        .rev()
        .find(|s| in_use(s) == peak.peak_bytes_in_use)
        .map_or(0, |s| meta(s).step_id);
    active_allocations(allocator, &summary, &peak, peak_step);
}

/// The snapshots in time order, as `std::sort` by offset leaves them.
fn sort_by_time(snapshots: &mut Vec<MemoryProfileSnapshot>) {
    let mut order: Vec<usize> = (0..snapshots.len()).collect();
    let times: Vec<i64> = snapshots.iter().map(|s| s.time_offset_ps).collect();
    let time = |i: &usize| times.get(*i).copied().unwrap_or(0);
    std_sort(&mut order, &|a: &usize, b: &usize| time(a) < time(b));
    let mut taken: Vec<Option<MemoryProfileSnapshot>> =
        std::mem::take(snapshots).into_iter().map(Some).collect();
    snapshots.extend(
        order
            .iter()
            .filter_map(|&i| taken.get_mut(i).and_then(Option::take)),
    );
}

/// `UpdateStepId`: an event outside any step takes the last step before it plus one.
fn fix_step_ids(snapshots: &mut [MemoryProfileSnapshot]) {
    let mut last = INVALID_STEP;
    for snapshot in snapshots {
        let meta = meta_mut(snapshot);
        if meta.step_id == INVALID_STEP {
            meta.step_id = last.wrapping_add(1);
        } else {
            last = meta.step_id;
        }
    }
}

/// `UpdateDeallocation`: a deallocation takes what the allocation at its address said of the
/// tensor; each allocation serves one deallocation, and a second allocation at an address still
/// held is not remembered.
fn fill_deallocations(snapshots: &mut [MemoryProfileSnapshot]) {
    let mut held: HashMap<u64, usize> = HashMap::new();
    for i in 0..snapshots.len() {
        let Some(snapshot) = snapshots.get(i) else {
            continue;
        };
        let m = meta(snapshot);
        let address = m.address;
        if m.memory_activity == MemoryActivity::Deallocation as i32 {
            let Some(alloc) = held.remove(&address) else {
                continue;
            };
            let Some(from) = snapshots.get(alloc).map(meta).cloned() else {
                continue;
            };
            if let Some(snapshot) = snapshots.get_mut(i) {
                let m = meta_mut(snapshot);
                m.tf_op_name = from.tf_op_name;
                m.region_type = from.region_type;
                m.data_type = from.data_type;
                m.tensor_shape = from.tensor_shape;
            }
        } else {
            held.entry(address).or_insert(i);
        }
    }
}

/// `SampleMemoryProfileTimeline`: at most `max` snapshots, each the first largest of a run.
fn sample_timeline(snapshots: &[MemoryProfileSnapshot], max: usize) -> Vec<MemoryProfileSnapshot> {
    let count = snapshots.len();
    if count <= max || max == 0 {
        return snapshots.to_vec();
    }
    let width = count / max;
    let narrow = max * (width + 1) - count;
    let wide = max - narrow;
    let mut out = Vec::with_capacity(max);
    let mut pick = |width: usize, runs: usize, start: usize| {
        for run in 0..runs {
            let from = start + width * run;
            let Some(chunk) = snapshots.get(from..from + width) else {
                continue;
            };
            let mut best: Option<&MemoryProfileSnapshot> = None;
            for s in chunk {
                if best.is_none_or(|b| in_use(s) > in_use(b)) {
                    best = Some(s);
                }
            }
            out.extend(best.cloned());
        }
    };
    pick(width, narrow, 0);
    pick(width + 1, wide, width * narrow);
    out
}

/// An allocation active at the peak: its snapshot's index (negative for the special ones:
/// -1 - their index) and what it says of the tensor.
struct Active<'a> {
    index: i64,
    meta: &'a MemoryActivityMetadata,
}

/// xprof's `MetadataComparator` key: allocation and requested bytes, largest first, then the
/// tensor's op name, region, data type and shape.
/// (Negated as xprof negates them, so that the smallest integer sorts as itself.)
fn key_order(a: &MemoryActivityMetadata, b: &MemoryActivityMetadata) -> std::cmp::Ordering {
    let bytes = |m: &MemoryActivityMetadata| {
        (
            m.allocation_bytes.wrapping_neg(),
            m.requested_bytes.wrapping_neg(),
        )
    };
    bytes(a)
        .cmp(&bytes(b))
        .then_with(|| a.tf_op_name.cmp(&b.tf_op_name))
        .then_with(|| a.region_type.cmp(&b.region_type))
        .then_with(|| a.data_type.cmp(&b.data_type))
        .then_with(|| a.tensor_shape.cmp(&b.tensor_shape))
}

/// `ProcessActiveAllocations` and `SaveActiveAllocationSnapshots`: the allocations active at the
/// peak, the special ones, and the snapshots the output keeps.
fn active_allocations(
    allocator: &mut PerAllocatorMemoryProfile,
    summary: &MemoryProfileSummary,
    peak: &MemoryAggregationStats,
    peak_step: i64,
) {
    let snapshots = &allocator.memory_profile_snapshots;
    let mut unmapped = peak.heap_allocated_bytes;
    let mut unmapped_frees: i64 = 0;
    let mut held: HashMap<u64, usize> = HashMap::new();
    for (i, snapshot) in snapshots.iter().enumerate() {
        if snapshot.time_offset_ps > summary.peak_stats_time_ps {
            break;
        }
        let m = meta(snapshot);
        if m.step_id != peak_step {
            continue;
        }
        if m.memory_activity == MemoryActivity::Allocation as i32 {
            held.insert(m.address, i);
            unmapped = unmapped.wrapping_sub(m.allocation_bytes);
        } else {
            if held.remove(&m.address).is_none() {
                unmapped_frees = unmapped_frees.wrapping_add(m.allocation_bytes);
            }
            unmapped = unmapped.wrapping_add(m.allocation_bytes);
        }
    }
    unmapped = unmapped.wrapping_sub(unmapped_frees);

    let mut specials = Vec::new();
    let special = |bytes: i64, op: &str, region: &str| MemoryActivityMetadata {
        memory_activity: MemoryActivity::Allocation as i32,
        requested_bytes: bytes,
        allocation_bytes: bytes,
        address: 0,
        tf_op_name: op.to_owned(),
        step_id: peak_step,
        region_type: region.to_owned(),
        data_type: dtype::name(0),
        tensor_shape: "unknown".to_owned(),
    };
    if unmapped > 0 {
        specials.push(special(
            unmapped,
            "unused preallocated device memory",
            "persist/dynamic",
        ));
    }
    if peak.stack_reserved_bytes > 0 {
        specials.push(special(peak.stack_reserved_bytes, "stack", "stack"));
    }

    let mut active: Vec<Active<'_>> = held
        .values()
        .filter_map(|&i| {
            Some(Active {
                index: i as i64,
                meta: meta(snapshots.get(i)?),
            })
        })
        .collect();
    active.extend(specials.iter().enumerate().map(|(n, meta)| Active {
        index: -1 - n as i64,
        meta,
    }));
    // xprof sorts the hash map's entries with an unstable sort: which of equal entries comes
    // first is not fixed there; here the earliest snapshot does (special ones first).
    active.sort_by(|a, b| key_order(a.meta, b.meta).then(a.index.cmp(&b.index)));

    let mut allocations: Vec<ActiveAllocation> = Vec::new();
    let mut kept: Vec<usize> = Vec::new();
    let mut i = 0;
    while let Some(first) = active.get(i) {
        let mut n = 1;
        while active
            .get(i + n)
            .is_some_and(|next| key_order(first.meta, next.meta).is_eq())
        {
            n += 1;
        }
        let snapshot_index = if first.index >= 0 {
            kept.push(first.index as usize);
            kept.len() as i64 - 1
        } else {
            first.index
        };
        allocations.push(ActiveAllocation {
            snapshot_index,
            special_index: if first.index < 0 {
                -first.index - 1
            } else {
                -1
            },
            num_occurrences: n as i64,
        });
        i += n;
    }
    let kept: Vec<MemoryProfileSnapshot> = kept
        .iter()
        .filter_map(|&i| snapshots.get(i).cloned())
        .collect();
    allocator.memory_profile_snapshots = kept;
    allocator.active_allocations = allocations;
    allocator.special_allocations = specials;
}

/// `GenerateHloModules`: the events of the `XLA Modules` lines of the TPU planes.
fn hlo_modules(space: &XSpace) -> Vec<HloModule> {
    let mut out = Vec::new();
    for plane in space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(TPU_PLANE_PREFIX))
    {
        let plane_name = plane.name.strip_prefix("/device:").unwrap_or(&plane.name);
        for line in plane.lines.iter().filter(|l| l.name == "XLA Modules") {
            for event in &line.events {
                let start = match event.data {
                    Some(x_event::Data::OffsetPs(v)) => v,
                    _ => 0,
                };
                out.push(HloModule {
                    name: plane
                        .event_metadata
                        .get(&event.metadata_id)
                        .map(|m| m.name.clone())
                        .unwrap_or_default(),
                    start_time_ps: start,
                    end_time_ps: start.wrapping_add(event.duration_ps),
                    id: out.len() as i64,
                    plane_name: plane_name.to_owned(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot_of(time: i64, heap: i64) -> MemoryProfileSnapshot {
        MemoryProfileSnapshot {
            time_offset_ps: time,
            aggregation_stats: Some(MemoryAggregationStats {
                heap_allocated_bytes: heap,
                ..MemoryAggregationStats::default()
            }),
            activity_metadata: Some(MemoryActivityMetadata::default()),
        }
    }

    #[test]
    fn the_timeline_keeps_the_first_largest_of_each_run() {
        // Ten snapshots, four kept: runs of 2, 2, 3 and 3 (the narrower runs first).
        let heaps = [1, 5, 5, 2, 7, 9, 9, 3, 3, 3];
        let snapshots: Vec<_> = heaps
            .iter()
            .enumerate()
            .map(|(i, &h)| snapshot_of(i as i64, h))
            .collect();
        let kept: Vec<i64> = sample_timeline(&snapshots, 4)
            .iter()
            .map(|s| s.time_offset_ps)
            .collect();
        assert_eq!(kept, [1, 2, 5, 7]);
        assert_eq!(sample_timeline(&snapshots, 10).len(), 10);
    }

    #[test]
    fn data_type_names() {
        assert_eq!(dtype::name(0), "INVALID");
        assert_eq!(dtype::name(14), "bfloat16");
        assert_eq!(dtype::name(119), "half_ref");
        assert_eq!(dtype::name(150), "unknown dtype enum (50)_ref");
        assert_eq!(dtype::name(-3), "unknown dtype enum (-3)");
    }
}

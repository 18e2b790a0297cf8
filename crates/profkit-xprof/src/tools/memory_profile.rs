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
mod events;
pub(crate) mod json;
mod steps;

use std::collections::HashMap;

use profkit_events::report::std_sort;
use profkit_xplane::constants::{HOST_PLANE_NAME, TPU_PLANE_PREFIX};
use profkit_xplane::{XSpace, x_event};

use crate::proto::{
    ActiveAllocation, HloModule, MemoryActivity, MemoryActivityMetadata, MemoryAggregationStats,
    MemoryProfile, MemoryProfileSnapshot, MemoryProfileSummary, PerAllocatorMemoryProfile,
};
use crate::{Error, Result};
use events::{Activity, Allocator, Snap};

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

/// Whether the memory profile reads the events of this host threads' plane: only when its
/// metadata name allocator events (without, the profile is the same from the plane without its
/// events, see [`crate::op_stats::read_space_decoding`]).
pub fn reads_events(host: &profkit_xplane::XPlane) -> bool {
    host.event_metadata
        .values()
        .any(|m| events::activity(&m.name).is_some())
}

/// The memory profile of one host's space; `None` without a `/host:CPU` plane.
pub fn from_space(space: &XSpace) -> Option<MemoryProfile> {
    let index = space
        .planes
        .iter()
        .position(|p| p.name == HOST_PLANE_NAME)?;
    let host = space.planes.get(index)?;
    // Preprocessing only matters to allocator events: without any, it is not run.
    let has_events = reads_events(host);
    let visit = if has_events {
        steps::visit(space, index, host)
    } else {
        steps::Visit::default()
    };
    let allocators = events::collect(host, &visit);
    let memory_ids = allocators.keys().cloned().collect();
    Some(MemoryProfile {
        memory_profile_per_allocator: allocators
            .into_iter()
            .map(|(id, allocator)| (id, process_allocator(allocator, MAX_SNAPSHOTS)))
            .collect(),
        num_hosts: 1,
        memory_ids,
        version: 1,
        hlo_modules: hlo_modules(space),
    })
}

/// `ProcessMemoryProfileProto` for one allocator, `max` the most snapshots its timeline keeps.
fn process_allocator(allocator: Allocator<'_>, max: usize) -> PerAllocatorMemoryProfile {
    let Allocator { mut snaps, summary } = allocator;
    // `std::sort` by offset: ties as its introsort leaves them.
    std_sort(&mut snaps, &|a: &Snap<'_>, b: &Snap<'_>| a.time < b.time);
    fix_step_ids(&mut snaps);
    fill_deallocations(&mut snaps);
    let sampled = sample_timeline(&snaps, max);
    let peak = summary.peak_stats.unwrap_or_default();
    let peak_step = snaps
        .iter()
        .rev()
        .find(|s| s.in_use() == peak.peak_bytes_in_use)
        .map_or(0, |s| s.step);
    let (active_allocations, special_allocations, kept) =
        active_allocations(&snaps, &summary, &peak, peak_step);
    PerAllocatorMemoryProfile {
        memory_profile_snapshots: kept,
        profile_summary: Some(summary),
        active_allocations,
        special_allocations,
        sampled_timeline_snapshots: sampled,
    }
}

/// `UpdateStepId`: an event outside any step takes the last step before it plus one.
fn fix_step_ids(snaps: &mut [Snap<'_>]) {
    let mut last = INVALID_STEP;
    for snap in snaps {
        if snap.step == INVALID_STEP {
            snap.step = last.wrapping_add(1);
        } else {
            last = snap.step;
        }
    }
}

/// `UpdateDeallocation`: a deallocation takes what the allocation at its address said of the
/// tensor; each allocation serves one deallocation, and a second allocation at an address still
/// held is not remembered.
fn fill_deallocations(snaps: &mut [Snap<'_>]) {
    let mut held: HashMap<u64, usize> = HashMap::new();
    for i in 0..snaps.len() {
        let Some(&snap) = snaps.get(i) else {
            continue;
        };
        if snap.activity == Activity::Deallocation {
            let Some(from) = held
                .remove(&snap.address)
                .and_then(|a| snaps.get(a).copied())
            else {
                continue;
            };
            if let Some(snap) = snaps.get_mut(i) {
                snap.op = from.op;
                snap.region = from.region;
                snap.dtype = from.dtype;
                snap.shape = from.shape;
            }
        } else {
            held.entry(snap.address).or_insert(i);
        }
    }
}

/// `SampleMemoryProfileTimeline`: at most `max` snapshots, each the first largest of a run.
fn sample_timeline(snaps: &[Snap<'_>], max: usize) -> Vec<MemoryProfileSnapshot> {
    let count = snaps.len();
    if count <= max || max == 0 {
        return snaps.iter().map(Snap::proto).collect();
    }
    let width = count / max;
    let narrow = max * (width + 1) - count;
    let wide = max - narrow;
    let mut out = Vec::with_capacity(max);
    let mut pick = |width: usize, runs: usize, start: usize| {
        for run in 0..runs {
            let from = start + width * run;
            let Some(chunk) = snaps.get(from..from + width) else {
                continue;
            };
            let mut best: Option<&Snap<'_>> = None;
            for s in chunk {
                if best.is_none_or(|b| s.in_use() > b.in_use()) {
                    best = Some(s);
                }
            }
            out.extend(best.map(Snap::proto));
        }
    };
    pick(width, narrow, 0);
    pick(width + 1, wide, width * narrow);
    out
}

/// An allocation active at the peak: its snapshot's index (negative for the special ones:
/// -1 - their index) and what xprof sorts and merges them by.
struct Active<'a> {
    index: i64,
    allocation_bytes: i64,
    requested_bytes: i64,
    op: &'a str,
    region: &'a str,
    dtype: String,
    shape: &'a str,
}

impl<'a> Active<'a> {
    fn of_special(index: i64, m: &'a MemoryActivityMetadata) -> Self {
        Active {
            index,
            allocation_bytes: m.allocation_bytes,
            requested_bytes: m.requested_bytes,
            op: &m.tf_op_name,
            region: &m.region_type,
            dtype: m.data_type.clone(),
            shape: &m.tensor_shape,
        }
    }

    /// xprof's `MetadataComparator`: allocation and requested bytes, largest first (negated as
    /// xprof negates them, so that the smallest integer sorts as itself), then the tensor's op
    /// name, region, data type and shape.
    fn key_order(&self, other: &Self) -> std::cmp::Ordering {
        let bytes = |a: &Self| {
            (
                a.allocation_bytes.wrapping_neg(),
                a.requested_bytes.wrapping_neg(),
            )
        };
        bytes(self)
            .cmp(&bytes(other))
            .then_with(|| self.op.cmp(other.op))
            .then_with(|| self.region.cmp(other.region))
            .then_with(|| self.dtype.cmp(&other.dtype))
            .then_with(|| self.shape.cmp(other.shape))
    }
}

/// `ProcessActiveAllocations` and `SaveActiveAllocationSnapshots`: the allocations active at the
/// peak, the special ones, and the snapshots the output keeps.
fn active_allocations(
    snaps: &[Snap<'_>],
    summary: &MemoryProfileSummary,
    peak: &MemoryAggregationStats,
    peak_step: i64,
) -> (
    Vec<ActiveAllocation>,
    Vec<MemoryActivityMetadata>,
    Vec<MemoryProfileSnapshot>,
) {
    let mut unmapped = peak.heap_allocated_bytes;
    let mut unmapped_frees: i64 = 0;
    let mut held: HashMap<u64, usize> = HashMap::new();
    for (i, snap) in snaps.iter().enumerate() {
        if snap.time > summary.peak_stats_time_ps {
            break;
        }
        if snap.step != peak_step {
            continue;
        }
        if snap.activity == Activity::Allocation {
            held.insert(snap.address, i);
            unmapped = unmapped.wrapping_sub(snap.bytes);
        } else {
            if held.remove(&snap.address).is_none() {
                unmapped_frees = unmapped_frees.wrapping_add(snap.bytes);
            }
            unmapped = unmapped.wrapping_add(snap.bytes);
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
            let s = snaps.get(i)?;
            Some(Active {
                index: i as i64,
                allocation_bytes: s.bytes,
                requested_bytes: s.requested,
                op: s.op,
                region: s.region,
                dtype: s.dtype_name(),
                shape: s.shape,
            })
        })
        .collect();
    active.extend(
        specials
            .iter()
            .enumerate()
            .map(|(n, m)| Active::of_special(-1 - n as i64, m)),
    );
    // xprof sorts the hash map's entries with an unstable sort: which of equal entries comes
    // first is not fixed there; here the earliest snapshot does (special ones first).
    active.sort_by(|a, b| a.key_order(b).then(a.index.cmp(&b.index)));

    let mut allocations = Vec::new();
    let mut kept = Vec::new();
    let mut i = 0;
    while let Some(first) = active.get(i) {
        let mut n = 1;
        while active
            .get(i + n)
            .is_some_and(|next| first.key_order(next).is_eq())
        {
            n += 1;
        }
        let snapshot_index = if first.index >= 0 {
            kept.extend(snaps.get(first.index as usize).map(Snap::proto));
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
    (allocations, specials, kept)
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

    fn snapshot_of(time: i64, heap: i64) -> Snap<'static> {
        Snap {
            time,
            stats: MemoryAggregationStats {
                heap_allocated_bytes: heap,
                ..MemoryAggregationStats::default()
            },
            activity: Activity::Allocation,
            requested: 0,
            bytes: 0,
            address: 0,
            step: 0,
            op: "",
            region: "",
            dtype: None,
            shape: "",
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

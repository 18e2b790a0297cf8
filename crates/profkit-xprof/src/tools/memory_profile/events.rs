//! The allocator events of the host plane as xprof reads them (`GenerateMemoryProfile`), kept as
//! compact snapshots that borrow their strings from the plane: only the snapshots the output
//! keeps become protos.

use std::collections::{BTreeMap, HashMap};

use profkit_xplane::{XEvent, XPlane, XStat, x_event, x_stat};

use super::{INVALID_STEP, dtype, steps};
use crate::proto::{
    MemoryActivity, MemoryActivityMetadata, MemoryAggregationStats, MemoryProfileSnapshot,
    MemoryProfileSummary,
};

/// What an allocator event is, by its metadata's name (TSL's `HostEventType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Activity {
    Allocation,
    Deallocation,
}

/// The activity of an event named `name`, if it is an allocator event.
pub(super) fn activity(name: &str) -> Option<Activity> {
    match name {
        "MemoryAllocation" => Some(Activity::Allocation),
        "MemoryDeallocation" => Some(Activity::Deallocation),
        _ => None,
    }
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

/// One allocator event: a `MemoryProfileSnapshot` whose strings are borrowed from the plane (the
/// data type kept as its number, named when printed).
#[derive(Clone, Copy, Debug)]
pub(super) struct Snap<'a> {
    pub time: i64,
    pub stats: MemoryAggregationStats,
    pub activity: Activity,
    pub requested: i64,
    pub bytes: i64,
    pub address: u64,
    pub step: i64,
    pub op: &'a str,
    pub region: &'a str,
    /// The `data_type` stat (`None` without one: an empty name).
    pub dtype: Option<i32>,
    pub shape: &'a str,
}

impl Snap<'_> {
    /// Heap and stack bytes in use.
    pub fn in_use(&self) -> i64 {
        self.stats
            .heap_allocated_bytes
            .wrapping_add(self.stats.stack_reserved_bytes)
    }

    /// The name of its data type, as xprof prints it.
    pub fn dtype_name(&self) -> String {
        self.dtype.map(dtype::name).unwrap_or_default()
    }

    /// What it says of the allocation, as a proto.
    pub fn metadata(&self) -> MemoryActivityMetadata {
        MemoryActivityMetadata {
            memory_activity: match self.activity {
                Activity::Allocation => MemoryActivity::Allocation,
                Activity::Deallocation => MemoryActivity::Deallocation,
            } as i32,
            requested_bytes: self.requested,
            allocation_bytes: self.bytes,
            address: self.address,
            tf_op_name: self.op.to_owned(),
            step_id: self.step,
            region_type: self.region.to_owned(),
            data_type: self.dtype_name(),
            tensor_shape: self.shape.to_owned(),
        }
    }

    /// The snapshot as a proto.
    pub fn proto(&self) -> MemoryProfileSnapshot {
        MemoryProfileSnapshot {
            time_offset_ps: self.time,
            aggregation_stats: Some(self.stats),
            activity_metadata: Some(self.metadata()),
        }
    }
}

/// One allocator's snapshots, in visiting order, and its summary.
#[derive(Default)]
pub(super) struct Allocator<'a> {
    pub snaps: Vec<Snap<'a>>,
    pub summary: MemoryProfileSummary,
}

/// `GenerateMemoryProfile`: a snapshot per allocator event of `plane`, in the order xprof visits
/// them once preprocessed (`visit`), by allocator id; and each allocator's summary.
pub(super) fn collect<'a>(
    plane: &'a XPlane,
    visit: &steps::Visit,
) -> BTreeMap<String, Allocator<'a>> {
    let mut allocators: BTreeMap<String, Allocator<'a>> = BTreeMap::new();
    let activities: HashMap<i64, Activity> = plane
        .event_metadata
        .iter()
        .filter_map(|(id, m)| Some((*id, activity(&m.name)?)))
        .collect();
    if activities.is_empty() {
        return allocators;
    }
    let kinds: HashMap<i64, Stat> = plane
        .stat_metadata
        .iter()
        .filter_map(|(id, m)| Some((*id, stat_kind(&m.name)?)))
        .collect();
    let mut number = String::new();
    let mut first = 0;
    for (index, line) in plane.lines.iter().enumerate() {
        for i in visit.order(index, &line.events) {
            let Some(event) = line.events.get(i) else {
                continue;
            };
            let Some(&activity) = activities.get(&event.metadata_id) else {
                continue;
            };
            let (id, mut snap) = read(plane, event, activity, &kinds, &mut number);
            // Grouping sets the event's `group_id` stat (or adds one).
            if let Some(group) = visit.group(first + i) {
                snap.step = group;
            }
            let allocator = match allocators.get_mut(id) {
                Some(allocator) => allocator,
                None => allocators.entry(id.to_owned()).or_default(),
            };
            update_summary(&mut allocator.summary, &snap.stats, snap.time);
            allocator.snaps.push(snap);
        }
        first += line.events.len();
    }
    allocators
}

/// A stat's `int64` value, as TSL's `IntValue` reads it (0 for a stat of another type).
fn int(stat: &XStat) -> i64 {
    match stat.value {
        Some(x_stat::Value::Int64Value(v)) => v,
        _ => 0,
    }
}

/// A stat's `double` value, as `DoubleValue` reads it.
fn double(stat: &XStat) -> f64 {
    match stat.value {
        Some(x_stat::Value::DoubleValue(v)) => v,
        _ => 0.0,
    }
}

/// A stat's string, as `StrOrRefValue` reads it: a string, the name of the referenced stat
/// metadata, or empty.
fn str_or_ref<'a>(plane: &'a XPlane, stat: &'a XStat) -> &'a str {
    match &stat.value {
        Some(x_stat::Value::StrValue(s)) => s,
        // The id is an `int64` key in C++: a larger `ref_value` wraps.
        Some(x_stat::Value::RefValue(id)) => plane
            .stat_metadata
            .get(&(*id as i64))
            .map_or("", |m| m.name.as_str()),
        _ => "",
    }
}

/// An allocator event's allocator id and snapshot: its own stats in file order, the last of a
/// kind winning. `number` holds the id when it is an integer.
fn read<'a, 'n>(
    plane: &'a XPlane,
    event: &'a XEvent,
    activity: Activity,
    kinds: &HashMap<i64, Stat>,
    number: &'n mut String,
) -> (&'n str, Snap<'a>)
where
    'a: 'n,
{
    let mut snap = Snap {
        time: match event.data {
            Some(x_event::Data::OffsetPs(v)) => v,
            _ => 0,
        },
        stats: MemoryAggregationStats::default(),
        activity,
        requested: 0,
        bytes: 0,
        address: 0,
        step: INVALID_STEP,
        op: "",
        region: "",
        dtype: None,
        shape: "",
    };
    let mut id: Option<&'a str> = Some("");
    for stat in &event.stats {
        let Some(&kind) = kinds.get(&stat.metadata_id) else {
            continue;
        };
        let s = &mut snap.stats;
        match kind {
            Stat::IdNumber => {
                number.clear();
                number.push_str(itoa::Buffer::new().format(int(stat)));
                id = None;
            }
            Stat::IdName => id = Some(str_or_ref(plane, stat)),
            Stat::BytesReserved => s.stack_reserved_bytes = int(stat),
            Stat::BytesAllocated => s.heap_allocated_bytes = int(stat),
            Stat::BytesAvailable => s.free_memory_bytes = int(stat),
            Stat::Fragmentation => s.fragmentation = double(stat),
            Stat::PeakBytesInUse => s.peak_bytes_in_use = int(stat),
            Stat::RequestedBytes => snap.requested = int(stat),
            Stat::AllocationBytes => snap.bytes = int(stat),
            // An int64 stored in the uint64 field, as the C++ setter does.
            Stat::Address => snap.address = int(stat) as u64,
            Stat::TfOp => snap.op = str_or_ref(plane, stat),
            Stat::GroupId => snap.step = int(stat),
            Stat::RegionType => snap.region = str_or_ref(plane, stat),
            // The enum is an `int` in C++: the value is truncated to 32 bits.
            Stat::DataType => snap.dtype = Some(int(stat) as i32),
            Stat::Shape => snap.shape = str_or_ref(plane, stat),
        }
    }
    (id.unwrap_or(number.as_str()), snap)
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

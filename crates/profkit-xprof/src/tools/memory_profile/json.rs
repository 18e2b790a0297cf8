//! A `MemoryProfile` printed as xprof prints it: protobuf's C++ JSON printer
//! (`MessageToJsonString` with `always_print_fields_with_no_presence`), no spaces, fields in
//! declaration order by their lowerCamelCase JSON names, every scalar field printed even at its
//! default, a message field only when set, 64-bit integers as strings, 32-bit ones as numbers,
//! enums by name, doubles as protobuf's `SimpleDtoa` writes them, strings escaped as its writer
//! escapes them.

use crate::proto::{
    ActiveAllocation, HloModule, MemoryActivity, MemoryActivityMetadata, MemoryAggregationStats,
    MemoryProfile, MemoryProfileSnapshot, MemoryProfileSummary, PerAllocatorMemoryProfile,
};
use crate::tools::pbjson::Writer;

/// The JSON text xprof 2.24.2 returns for this memory profile (allocators in the map's order,
/// which is byte order of their ids here; xprof's is a hash map's).
pub fn to_json(profile: &MemoryProfile) -> String {
    let mut w = Writer::default();
    w.open();
    w.key("memoryProfilePerAllocator");
    w.out.push('{');
    for (i, (id, allocator)) in profile.memory_profile_per_allocator.iter().enumerate() {
        if i > 0 {
            w.out.push(',');
        }
        w.string(id);
        w.out.push(':');
        per_allocator(&mut w, allocator);
    }
    w.out.push('}');
    w.key("numHosts");
    w.int32(profile.num_hosts);
    w.key("memoryIds");
    w.out.push('[');
    for (i, id) in profile.memory_ids.iter().enumerate() {
        if i > 0 {
            w.out.push(',');
        }
        w.string(id);
    }
    w.out.push(']');
    w.key("version");
    w.int32(profile.version);
    w.key("hloModules");
    w.list(&profile.hlo_modules, hlo_module);
    w.close();
    w.out
}

fn per_allocator(w: &mut Writer, p: &PerAllocatorMemoryProfile) {
    w.open();
    w.key("memoryProfileSnapshots");
    w.list(&p.memory_profile_snapshots, snapshot);
    if let Some(summary) = &p.profile_summary {
        w.key("profileSummary");
        profile_summary(w, summary);
    }
    w.key("activeAllocations");
    w.list(&p.active_allocations, active_allocation);
    w.key("specialAllocations");
    w.list(&p.special_allocations, activity_metadata);
    w.key("sampledTimelineSnapshots");
    w.list(&p.sampled_timeline_snapshots, snapshot);
    w.close();
}

fn snapshot(w: &mut Writer, s: &MemoryProfileSnapshot) {
    w.open();
    w.key("timeOffsetPs");
    w.int64(s.time_offset_ps);
    if let Some(stats) = &s.aggregation_stats {
        w.key("aggregationStats");
        aggregation_stats(w, stats);
    }
    if let Some(meta) = &s.activity_metadata {
        w.key("activityMetadata");
        activity_metadata(w, meta);
    }
    w.close();
}

fn aggregation_stats(w: &mut Writer, s: &MemoryAggregationStats) {
    w.open();
    w.key("stackReservedBytes");
    w.int64(s.stack_reserved_bytes);
    w.key("heapAllocatedBytes");
    w.int64(s.heap_allocated_bytes);
    w.key("freeMemoryBytes");
    w.int64(s.free_memory_bytes);
    w.key("fragmentation");
    w.double(s.fragmentation);
    w.key("peakBytesInUse");
    w.int64(s.peak_bytes_in_use);
    w.close();
}

fn activity_metadata(w: &mut Writer, m: &MemoryActivityMetadata) {
    w.open();
    w.key("memoryActivity");
    match MemoryActivity::try_from(m.memory_activity) {
        Ok(activity) => w.string(activity.as_str_name()),
        Err(_) => w.int32(m.memory_activity),
    }
    w.key("requestedBytes");
    w.int64(m.requested_bytes);
    w.key("allocationBytes");
    w.int64(m.allocation_bytes);
    w.key("address");
    w.uint64(m.address);
    w.key("tfOpName");
    w.string(&m.tf_op_name);
    w.key("stepId");
    w.int64(m.step_id);
    w.key("regionType");
    w.string(&m.region_type);
    w.key("dataType");
    w.string(&m.data_type);
    w.key("tensorShape");
    w.string(&m.tensor_shape);
    w.close();
}

fn profile_summary(w: &mut Writer, s: &MemoryProfileSummary) {
    w.open();
    w.key("peakBytesUsageLifetime");
    w.int64(s.peak_bytes_usage_lifetime);
    if let Some(stats) = &s.peak_stats {
        w.key("peakStats");
        aggregation_stats(w, stats);
    }
    w.key("peakStatsTimePs");
    w.int64(s.peak_stats_time_ps);
    w.key("memoryCapacity");
    w.int64(s.memory_capacity);
    w.close();
}

fn active_allocation(w: &mut Writer, a: &ActiveAllocation) {
    w.open();
    w.key("snapshotIndex");
    w.int64(a.snapshot_index);
    w.key("specialIndex");
    w.int64(a.special_index);
    w.key("numOccurrences");
    w.int64(a.num_occurrences);
    w.close();
}

fn hlo_module(w: &mut Writer, m: &HloModule) {
    w.open();
    w.key("name");
    w.string(&m.name);
    w.key("startTimePs");
    w.int64(m.start_time_ps);
    w.key("endTimePs");
    w.int64(m.end_time_ps);
    w.key("id");
    w.int64(m.id);
    w.key("planeName");
    w.string(&m.plane_name);
    w.close();
}

//! The Memory Profiling Report's rows: allocations and frees per place and range.

use std::collections::HashMap;

use super::MemoryRow;
use crate::event::{MemPlace, MemoryRecord};

/// How Paddle prints a place, and where it sorts (its `std::map<Place, ...>` orders by
/// allocation type, then device).
fn place_name(place: MemPlace, device: u32) -> (u32, String) {
    match place {
        MemPlace::Cpu => (1, "Place(cpu)".to_owned()),
        MemPlace::Cuda => (2, format!("Place(gpu:{device})")),
        MemPlace::CudaPinned => (3, "Place(gpu_pinned)".to_owned()),
        MemPlace::Xpu => (4, format!("Place(xpu:{device})")),
        MemPlace::Npu => (9, format!("Place(npu:{device})")),
        MemPlace::Other(code) => (10, format!("Place(unknown {code}:{device})")),
    }
}

/// The memory rows: allocations counted under the range they were made in, frees (records with
/// an end time) under the range they were freed in; rows by place, then range name.
pub(super) fn memory_rows(records: &[MemoryRecord]) -> Vec<MemoryRow> {
    type Acc = (u64, u64, u64, u64);
    let mut acc: HashMap<(u32, u32, String, String), Acc> = HashMap::new();
    for r in records {
        let (order, place) = place_name(r.place, r.device);
        let device = if matches!(r.place, MemPlace::Cpu | MemPlace::CudaPinned) {
            0
        } else {
            r.device
        };
        let entry = acc
            .entry((order, device, place.clone(), r.alloc_in.clone()))
            .or_default();
        entry.0 += 1;
        entry.1 = entry.1.saturating_add(r.bytes);
        if r.end_ns != 0 {
            let entry = acc
                .entry((order, device, place, r.free_in.clone()))
                .or_default();
            entry.2 += 1;
            entry.3 = entry.3.saturating_add(r.bytes);
        }
    }
    let mut rows: Vec<_> = acc.into_iter().collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows.into_iter()
        .map(|((_, _, place, annotation), (ac, ab, fc, fb))| MemoryRow {
            place,
            annotation,
            alloc_calls: ac,
            alloc_mb: ab as f64 / (1024.0 * 1024.0),
            free_calls: fc,
            free_mb: fb as f64 / (1024.0 * 1024.0),
        })
        .collect()
}

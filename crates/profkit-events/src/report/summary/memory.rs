//! The Memory tables (Paddle's `MemorySummary`).

use super::ordered::Ordered;
use super::{EventType, Forest, MemoryRow, MemoryTable, Node};
use crate::event::MemEventKind;

/// The Memory tables (MemorySummary): per place in first-met order.
pub(super) fn memory_tables(forest: &Forest) -> Vec<MemoryTable> {
    #[derive(Default)]
    struct Place {
        allocated: Ordered<MemoryRow>,
        reserved: Ordered<MemoryRow>,
        peak_allocated: u64,
        peak_reserved: u64,
    }
    let mut places: Ordered<(String, Place)> = Ordered::default();
    let mut analyse = |name: &str, node: &Node| {
        for m in &node.mem {
            let place = places.entry(&m.place, || (m.place.clone(), Place::default()));
            let (table, memory_type) = match m.kind {
                MemEventKind::Allocate | MemEventKind::Free => {
                    (Some(&mut place.1.allocated), "Allocated")
                }
                MemEventKind::ReservedAllocate | MemEventKind::ReservedFree => {
                    (Some(&mut place.1.reserved), "Reserved")
                }
                MemEventKind::Other(_) => (None, ""),
            };
            if let Some(table) = table {
                let row = table.entry(name, || MemoryRow {
                    name: name.to_owned(),
                    memory_type,
                    allocation_count: 0,
                    free_count: 0,
                    allocation_size: 0,
                    free_size: 0,
                    increased_size: 0,
                });
                match m.kind {
                    MemEventKind::Allocate | MemEventKind::ReservedAllocate => {
                        row.allocation_count += 1;
                        row.allocation_size = row.allocation_size.saturating_add(m.increase_bytes);
                    }
                    _ => {
                        row.free_count += 1;
                        row.free_size = row.free_size.saturating_sub(m.increase_bytes);
                    }
                }
                row.increased_size = row.allocation_size.saturating_sub(row.free_size);
            }
            place.1.peak_allocated = place.1.peak_allocated.max(m.peak_allocated);
            place.1.peak_reserved = place.1.peak_reserved.max(m.peak_reserved);
        }
    };
    for &(_, root) in &forest.roots {
        for i in forest.traverse(root).into_iter().skip(1) {
            let Some(node) = forest.node(i) else { continue };
            if node.ty == EventType::OperatorInner {
                continue;
            }
            if node.ty == EventType::Operator {
                for c in forest.children_of(i).iter().map(|&c| c as usize) {
                    if let Some(child) = forest.node(c) {
                        analyse(&node.name, child);
                    }
                }
            }
            analyse(&node.name, node);
        }
    }
    places
        .items
        .into_iter()
        .filter(|(_, p)| !p.allocated.items.is_empty())
        .map(|(place, p)| {
            let mut rows = p.allocated.items;
            rows.sort_by_key(|r| std::cmp::Reverse(r.increased_size));
            let mut reserved = p.reserved.items;
            reserved.sort_by_key(|r| std::cmp::Reverse(r.increased_size));
            rows.extend(reserved);
            MemoryTable {
                place,
                peak_allocated: p.peak_allocated,
                peak_reserved: p.peak_reserved,
                rows,
            }
        })
        .collect()
}

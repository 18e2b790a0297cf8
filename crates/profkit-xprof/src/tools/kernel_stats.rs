//! `kernel_stats` (the GPU Kernel Stats page): the kernel stats database of an OpStats
//! ([`crate::op_stats::kernel_stats`]) as one DataTable (xprof's `KernelStatsToDataTableJson`).
//!
//! A row per report, in the database's order (longest total duration first), ranked from 1:
//! the kernel's name, registers per thread, shared memory (static and dynamic together), block
//! and grid dimensions (`x,y,z`), theoretical occupancy, the two TensorCore flags, its op, and
//! its count and durations in microseconds (the average is the total's whole nanoseconds per
//! kernel).

use crate::datatable::{Cell, DataTable};
use crate::proto::{KernelReport, KernelStatsDb, OpStats};

const COLUMNS: [(&str, &str, &str); 15] = [
    ("rank", "number", "Rank"),
    ("kernel_name", "string", "Kernel Name"),
    ("registers_per_thread", "number", "Registers per thread"),
    ("shmem_bytes", "number", "Shared Mem bytes"),
    ("block_dim", "string", "Block dim"),
    ("grid_dim", "string", "Grid dim"),
    ("occupancy_pct", "number", "Theoretical Occupancy %"),
    (
        "is_op_tensor_core_eligible",
        "boolean",
        "Op is TensorCore eligible",
    ),
    (
        "is_kernel_using_tensor_core",
        "boolean",
        "Kernel uses TensorCore",
    ),
    ("op_name", "string", "Op Name"),
    ("occurrences", "number", "Occurrences"),
    ("total_duration_us", "number", "Total Duration (μs)"),
    ("avg_duration_us", "number", "Avg Duration (μs)"),
    ("min_duration_us", "number", "Min Duration (μs)"),
    ("max_duration_us", "number", "Max Duration (μs)"),
];

fn nano_to_micro(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn joined(dims: &[u32]) -> String {
    dims.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn row(rank: u32, r: &KernelReport) -> Vec<Cell> {
    // The average is taken in whole nanoseconds, as xprof divides its integers.
    let avg = r
        .total_duration_ns
        .checked_div(u64::from(r.occurrences))
        .unwrap_or(0);
    vec![
        Cell::Number(f64::from(rank)),
        Cell::Text(r.name.clone()),
        Cell::Number(f64::from(r.registers_per_thread)),
        Cell::Number(f64::from(
            r.static_shmem_bytes.wrapping_add(r.dynamic_shmem_bytes),
        )),
        Cell::Text(joined(&r.block_dim)),
        Cell::Text(joined(&r.grid_dim)),
        Cell::Number(f64::from(r.occupancy_pct)),
        Cell::Bool(r.is_op_tensor_core_eligible),
        Cell::Bool(r.is_kernel_using_tensor_core),
        Cell::Text(r.op_name.clone()),
        Cell::Number(f64::from(r.occurrences)),
        Cell::Number(nano_to_micro(r.total_duration_ns)),
        Cell::Number(nano_to_micro(avg)),
        Cell::Number(nano_to_micro(r.min_duration_ns)),
        Cell::Number(nano_to_micro(r.max_duration_ns)),
    ]
}

/// The table of a kernel stats database (`GenerateKernelStatsDataTable`).
pub fn data_table(db: &KernelStatsDb) -> DataTable {
    let mut t = DataTable::default();
    for (id, kind, label) in COLUMNS {
        t.column(id, kind, label);
    }
    let mut rank = 1u32;
    for r in &db.reports {
        t.rows.push(row(rank, r));
        rank = rank.wrapping_add(1);
    }
    t
}

/// The tool's JSON, as xprof returns it.
pub fn to_json(stats: &OpStats) -> String {
    let empty = KernelStatsDb::default();
    data_table(stats.kernel_stats_db.as_ref().unwrap_or(&empty)).to_json()
}

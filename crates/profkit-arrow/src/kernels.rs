//! xprof's kernel stats as a table (`kernels`): one row per kernel report of an OpStats' kernel
//! stats database (see `profkit_xprof::op_stats`), the rows of the GPU Kernel Stats page
//! (`profkit_xprof::tools::kernel_stats`) with their values typed, so that a cluster's kernels
//! are one query over every host's `table=kernels` files.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float32Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use profkit_xprof::proto::OpStats;

use crate::schema::{HOST, TABLE_KEY, VERSION, VERSION_KEY};
use crate::{Error, Result};

/// The table's name.
pub const KERNELS: &str = "kernels";

/// The `kernels` table: `rank` is the page's (from 1, longest total duration first); shared
/// memory is in bytes, `block_dim` and `grid_dim` are `x,y,z` as the page shows them;
/// `occupancy_pct` the theoretical occupancy; durations are nanoseconds (`avg_duration_ns` the
/// total's whole nanoseconds per occurrence, as xprof divides).
pub fn schema() -> SchemaRef {
    let metadata = [
        (VERSION_KEY.to_owned(), VERSION.to_owned()),
        (TABLE_KEY.to_owned(), KERNELS.to_owned()),
    ]
    .into_iter()
    .collect();
    let u32 = |name: &str| Field::new(name, DataType::UInt32, false);
    let u64 = |name: &str| Field::new(name, DataType::UInt64, false);
    let text = |name: &str| Field::new(name, DataType::Utf8, false);
    let flag = |name: &str| Field::new(name, DataType::Boolean, false);
    Arc::new(Schema::new_with_metadata(
        vec![
            text(HOST),
            u32("rank"),
            text("kernel_name"),
            u32("registers_per_thread"),
            u32("static_shmem_bytes"),
            u32("dynamic_shmem_bytes"),
            text("block_dim"),
            text("grid_dim"),
            Field::new("occupancy_pct", DataType::Float32, false),
            flag("is_op_tensor_core_eligible"),
            flag("is_kernel_using_tensor_core"),
            text("op_name"),
            u32("occurrences"),
            u64("total_duration_ns"),
            u64("avg_duration_ns"),
            u64("min_duration_ns"),
            u64("max_duration_ns"),
        ],
        metadata,
    ))
}

fn joined(dims: &[u32]) -> String {
    dims.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The kernel reports of `stats` as one batch, every row of host `host`.
pub fn batch(host: &str, stats: &OpStats) -> Result<RecordBatch> {
    let reports = stats
        .kernel_stats_db
        .as_ref()
        .map_or(&[][..], |db| &db.reports);
    let rows = reports.len();
    let mut hosts = StringBuilder::with_capacity(rows, rows * host.len());
    let [mut name, mut block, mut grid, mut op] = std::array::from_fn(|_| StringBuilder::new());
    let [
        mut rank,
        mut registers,
        mut static_shmem,
        mut dynamic_shmem,
        mut occurrences,
    ] = std::array::from_fn(|_| UInt32Builder::with_capacity(rows));
    let mut occupancy = Float32Builder::with_capacity(rows);
    let [mut eligible, mut using] = std::array::from_fn(|_| BooleanBuilder::with_capacity(rows));
    let [mut total, mut avg, mut min, mut max] =
        std::array::from_fn(|_| UInt64Builder::with_capacity(rows));
    let mut at = 1u32;
    for r in reports {
        hosts.append_value(host);
        rank.append_value(at);
        at = at.wrapping_add(1);
        name.append_value(&r.name);
        registers.append_value(r.registers_per_thread);
        static_shmem.append_value(r.static_shmem_bytes);
        dynamic_shmem.append_value(r.dynamic_shmem_bytes);
        block.append_value(joined(&r.block_dim));
        grid.append_value(joined(&r.grid_dim));
        occupancy.append_value(r.occupancy_pct);
        eligible.append_value(r.is_op_tensor_core_eligible);
        using.append_value(r.is_kernel_using_tensor_core);
        op.append_value(&r.op_name);
        occurrences.append_value(r.occurrences);
        total.append_value(r.total_duration_ns);
        avg.append_value(
            r.total_duration_ns
                .checked_div(u64::from(r.occurrences))
                .unwrap_or(0),
        );
        min.append_value(r.min_duration_ns);
        max.append_value(r.max_duration_ns);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(hosts.finish()),
        Arc::new(rank.finish()),
        Arc::new(name.finish()),
        Arc::new(registers.finish()),
        Arc::new(static_shmem.finish()),
        Arc::new(dynamic_shmem.finish()),
        Arc::new(block.finish()),
        Arc::new(grid.finish()),
        Arc::new(occupancy.finish()),
        Arc::new(eligible.finish()),
        Arc::new(using.finish()),
        Arc::new(op.finish()),
        Arc::new(occurrences.finish()),
        Arc::new(total.finish()),
        Arc::new(avg.finish()),
        Arc::new(min.finish()),
        Arc::new(max.finish()),
    ];
    RecordBatch::try_new(schema(), columns).map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use arrow_array::{StringArray, UInt32Array, UInt64Array};
    use profkit_xprof::proto::{KernelReport, KernelStatsDb};

    use super::*;

    #[test]
    fn one_row_per_report_ranked() {
        let report = |name: &str, total| KernelReport {
            name: name.into(),
            block_dim: vec![128, 1, 1],
            grid_dim: vec![4, 2, 1],
            total_duration_ns: total,
            occurrences: 3,
            ..KernelReport::default()
        };
        let stats = OpStats {
            kernel_stats_db: Some(KernelStatsDb {
                reports: vec![report("a", 10), report("b", 7)],
            }),
            ..OpStats::default()
        };
        let batch = batch("w0", &stats).unwrap();
        assert_eq!(batch.num_rows(), 2);
        let column = |name: &str| batch.column(batch.schema().index_of(name).unwrap()).clone();
        let rank = column("rank");
        let rank = rank.as_any().downcast_ref::<UInt32Array>().unwrap();
        assert_eq!((rank.value(0), rank.value(1)), (1, 2));
        let block = column("block_dim");
        let block = block.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(block.value(0), "128,1,1");
        let avg = column("avg_duration_ns");
        let avg = avg.as_any().downcast_ref::<UInt64Array>().unwrap();
        assert_eq!((avg.value(0), avg.value(1)), (3, 2));
        assert_eq!(
            super::batch("w0", &OpStats::default()).unwrap().num_rows(),
            0
        );
    }
}

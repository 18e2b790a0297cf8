//! xprof's op metrics as a table (`op_metrics`): one row per op of an OpStats' host and device
//! op metrics databases (see `profkit_xprof::op_stats`), so that a cluster's op statistics are
//! one query over every host's `table=op_metrics` files.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use profkit_xprof::proto::{OpMetricsDb, OpStats};

use crate::schema::{HOST, TABLE_KEY, VERSION, VERSION_KEY};
use crate::{Error, Result};

/// The table's name.
pub const OP_METRICS: &str = "op_metrics";

/// The `op_metrics` table: `side` is `host` or `device`; times are picoseconds summed over the
/// op's occurrences; `flops` and `model_flops` are xprof's (`flops_v2`, `model_flops_v2`); the
/// idle time is the op named and categorised `IDLE`.
pub fn schema() -> SchemaRef {
    let metadata = [
        (VERSION_KEY.to_owned(), VERSION.to_owned()),
        (TABLE_KEY.to_owned(), OP_METRICS.to_owned()),
    ]
    .into_iter()
    .collect();
    Arc::new(Schema::new_with_metadata(
        vec![
            Field::new(HOST, DataType::Utf8, false),
            Field::new("side", DataType::Utf8, false),
            Field::new("program_id", DataType::UInt64, false),
            Field::new("name", DataType::Utf8, false),
            Field::new("category", DataType::Utf8, false),
            Field::new("provenance", DataType::Utf8, false),
            Field::new("long_name", DataType::Utf8, false),
            Field::new("is_eager", DataType::Boolean, false),
            Field::new("occurrences", DataType::UInt64, false),
            Field::new("time_ps", DataType::UInt64, false),
            Field::new("self_time_ps", DataType::UInt64, false),
            Field::new("min_time_ps", DataType::UInt64, false),
            Field::new("flops", DataType::Float64, false),
            Field::new("model_flops", DataType::Float64, false),
            Field::new("bytes_accessed", DataType::UInt64, false),
            Field::new("num_cores", DataType::UInt64, false),
        ],
        metadata,
    ))
}

/// The op metrics of `stats` as one batch, every row of host `host`.
pub fn batch(host: &str, stats: &OpStats) -> Result<RecordBatch> {
    let empty = OpMetricsDb::default();
    let sides = [
        ("host", stats.host_op_metrics_db.as_ref().unwrap_or(&empty)),
        (
            "device",
            stats.device_op_metrics_db.as_ref().unwrap_or(&empty),
        ),
    ];
    let rows: usize = sides.iter().map(|(_, db)| db.metrics_db.len()).sum();
    let mut hosts = StringBuilder::with_capacity(rows, rows * host.len());
    let mut side = StringBuilder::new();
    let mut program = UInt64Builder::with_capacity(rows);
    let (mut name, mut category, mut provenance, mut long_name) = (
        StringBuilder::new(),
        StringBuilder::new(),
        StringBuilder::new(),
        StringBuilder::new(),
    );
    let mut eager = BooleanBuilder::with_capacity(rows);
    let [
        mut occurrences,
        mut time,
        mut self_time,
        mut min_time,
        mut bytes,
        mut cores,
    ] = std::array::from_fn(|_| UInt64Builder::with_capacity(rows));
    let [mut flops, mut model_flops] = std::array::from_fn(|_| Float64Builder::with_capacity(rows));
    for (which, db) in sides {
        for m in &db.metrics_db {
            hosts.append_value(host);
            side.append_value(which);
            program.append_value(m.hlo_module_id);
            name.append_value(&m.name);
            category.append_value(&m.category);
            provenance.append_value(&m.provenance);
            long_name.append_value(&m.long_name);
            eager.append_value(m.is_eager);
            occurrences.append_value(u64::from(m.occurrences));
            time.append_value(m.time_ps);
            self_time.append_value(m.self_time_ps);
            min_time.append_value(m.min_time_ps);
            flops.append_value(m.flops_v2);
            model_flops.append_value(m.model_flops_v2);
            bytes.append_value(m.bytes_accessed);
            cores.append_value(u64::from(m.num_cores));
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(hosts.finish()),
        Arc::new(side.finish()),
        Arc::new(program.finish()),
        Arc::new(name.finish()),
        Arc::new(category.finish()),
        Arc::new(provenance.finish()),
        Arc::new(long_name.finish()),
        Arc::new(eager.finish()),
        Arc::new(occurrences.finish()),
        Arc::new(time.finish()),
        Arc::new(self_time.finish()),
        Arc::new(min_time.finish()),
        Arc::new(flops.finish()),
        Arc::new(model_flops.finish()),
        Arc::new(bytes.finish()),
        Arc::new(cores.finish()),
    ];
    RecordBatch::try_new(schema(), columns).map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use profkit_xplane::{PlaneBuilder, XPlane, XSpace};

    use super::*;

    #[test]
    fn host_ops_and_idle() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        b.line(1)
            .add_event("m/MatMul:MatMul")
            .set_offset_ps(0)
            .set_duration_ps(4_000);
        let space = XSpace {
            planes: vec![plane],
            ..XSpace::default()
        };
        let built = profkit_xprof::op_stats::build(vec![space], &["w0"]);
        let batch = batch("w0", &built.op_stats).unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.schema().field(3).name(), "name");
        let names = batch
            .column(3)
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        assert_eq!(names.value(0), "m/MatMul");
        assert_eq!(names.value(1), "IDLE");
    }
}

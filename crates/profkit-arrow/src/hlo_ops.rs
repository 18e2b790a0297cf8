//! xprof's HLO op stats as a table (`hlo_ops`): one row per HLO op of an OpStats' device op
//! metrics database, the rows of the HLO Op Stats page (`profkit_xprof::tools::hlo_stats`, whose
//! rows it takes, so every value is the page's) with their values typed, so that a cluster's
//! XLA ops are one query over every host's `table=hlo_ops` files.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use profkit_xprof::proto::OpStats;
use profkit_xprof::tools::hlo_stats;

use crate::schema::{HOST, TABLE_KEY, VERSION, VERSION_KEY};
use crate::{Error, Result};

/// The table's name.
pub const HLO_OPS: &str = "hlo_ops";

/// The `hlo_ops` table, in the page's order: `rank` by self time from 1 (0 for a SparseCore op
/// listed under its parent, `parent_op_name`); `module` the program's name (empty when the
/// profile does not name it); times in picoseconds summed over the occurrences; the shares of
/// the device's total time in percent; `dma_stall_fraction` a fraction of the op's time; FLOP
/// rates in GFLOP/s, bandwidths in GiB/s, `operational_intensity` in FLOPs per byte, `bound_by`
/// the roofline's bounding resource; the source file and line the op was traced from (empty and
/// -1 when unknown).
pub fn schema() -> SchemaRef {
    let metadata = [
        (VERSION_KEY.to_owned(), VERSION.to_owned()),
        (TABLE_KEY.to_owned(), HLO_OPS.to_owned()),
    ]
    .into_iter()
    .collect();
    let u64 = |name: &str| Field::new(name, DataType::UInt64, false);
    let f64 = |name: &str| Field::new(name, DataType::Float64, false);
    let text = |name: &str| Field::new(name, DataType::Utf8, false);
    let flag = |name: &str| Field::new(name, DataType::Boolean, false);
    Arc::new(Schema::new_with_metadata(
        vec![
            text(HOST),
            u64("rank"),
            u64("program_id"),
            text("module"),
            text("category"),
            text("hlo_op_name"),
            text("expression"),
            text("framework_op"),
            Field::new("occurrences", DataType::UInt32, false),
            u64("total_time_ps"),
            u64("self_time_ps"),
            f64("self_time_percent"),
            f64("cumulative_self_time_percent"),
            f64("dma_stall_fraction"),
            f64("flops"),
            f64("model_flops"),
            u64("bytes_accessed"),
            f64("model_flop_rate"),
            f64("normalized_flop_rate"),
            f64("memory_bw"),
            f64("hbm_bw"),
            f64("cmem_read_bw"),
            f64("cmem_write_bw"),
            f64("operational_intensity"),
            text("bound_by"),
            flag("rematerialization"),
            flag("outside_compilation"),
            flag("autotuned"),
            text("source_file"),
            Field::new("source_line", DataType::Int32, false),
            text("core_type"),
            text("parent_op_name"),
            f64("vdd_energy_j"),
        ],
        metadata,
    ))
}

/// The HLO ops of `stats` as one batch, every row of host `host`.
pub fn batch(host: &str, stats: &OpStats) -> Result<RecordBatch> {
    let rows = hlo_stats::rows(stats);
    let n = rows.len();
    let mut hosts = StringBuilder::with_capacity(n, n * host.len());
    let [
        mut module,
        mut category,
        mut name,
        mut expression,
        mut framework,
        mut bound,
        mut file,
        mut core,
        mut parent,
    ] = std::array::from_fn(|_| StringBuilder::new());
    let [mut rank, mut program, mut total, mut self_time, mut bytes] =
        std::array::from_fn(|_| UInt64Builder::with_capacity(n));
    let mut occurrences = UInt32Builder::with_capacity(n);
    let mut line = Int32Builder::with_capacity(n);
    let [
        mut share,
        mut cumulative,
        mut dma,
        mut flops,
        mut model_flops,
        mut model_rate,
        mut rate,
        mut memory,
        mut hbm,
        mut cmem_read,
        mut cmem_write,
        mut intensity,
        mut energy,
    ] = std::array::from_fn(|_| Float64Builder::with_capacity(n));
    let [mut remat, mut outside, mut autotuned] =
        std::array::from_fn(|_| BooleanBuilder::with_capacity(n));
    for h in &rows {
        let m = h.op;
        let r = &h.roofline;
        hosts.append_value(host);
        rank.append_value(h.rank);
        program.append_value(m.hlo_module_id);
        module.append_value(
            stats
                .program_id_to_name_map
                .get(&m.hlo_module_id)
                .map_or("", String::as_str),
        );
        category.append_value(&m.category);
        name.append_value(h.hlo_op_name);
        expression.append_value(h.expression);
        framework.append_value(&m.provenance);
        occurrences.append_value(m.occurrences);
        total.append_value(m.time_ps);
        self_time.append_value(m.self_time_ps);
        share.append_value(h.self_time_fraction * 100.0);
        cumulative.append_value(h.cumulative_self_time_fraction * 100.0);
        dma.append_value(h.dma_stall_fraction);
        flops.append_value(m.flops_v2);
        model_flops.append_value(m.model_flops_v2);
        bytes.append_value(m.bytes_accessed);
        model_rate.append_value(r.model_flop_rate);
        rate.append_value(r.measured_flop_rate);
        memory.append_value(r.measured_memory_bw);
        hbm.append_value(r.hbm_bw);
        cmem_read.append_value(r.cmem_read_bw);
        cmem_write.append_value(r.cmem_write_bw);
        intensity.append_value(r.operational_intensity);
        bound.append_value(r.bound_by);
        remat.append_value(h.rematerialization);
        outside.append_value(h.outside_compilation);
        autotuned.append_value(m.autotuned);
        let source = m.source_info.as_ref();
        file.append_value(source.map_or("", |s| s.file_name.as_str()));
        line.append_value(source.map_or(-1, |s| s.line_number));
        core.append_value(h.core_type);
        parent.append_value(h.parent);
        energy.append_value(m.vdd_energy_j.unwrap_or(0.0));
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(hosts.finish()),
        Arc::new(rank.finish()),
        Arc::new(program.finish()),
        Arc::new(module.finish()),
        Arc::new(category.finish()),
        Arc::new(name.finish()),
        Arc::new(expression.finish()),
        Arc::new(framework.finish()),
        Arc::new(occurrences.finish()),
        Arc::new(total.finish()),
        Arc::new(self_time.finish()),
        Arc::new(share.finish()),
        Arc::new(cumulative.finish()),
        Arc::new(dma.finish()),
        Arc::new(flops.finish()),
        Arc::new(model_flops.finish()),
        Arc::new(bytes.finish()),
        Arc::new(model_rate.finish()),
        Arc::new(rate.finish()),
        Arc::new(memory.finish()),
        Arc::new(hbm.finish()),
        Arc::new(cmem_read.finish()),
        Arc::new(cmem_write.finish()),
        Arc::new(intensity.finish()),
        Arc::new(bound.finish()),
        Arc::new(remat.finish()),
        Arc::new(outside.finish()),
        Arc::new(autotuned.finish()),
        Arc::new(file.finish()),
        Arc::new(line.finish()),
        Arc::new(core.finish()),
        Arc::new(parent.finish()),
        Arc::new(energy.finish()),
    ];
    RecordBatch::try_new(schema(), columns).map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use arrow_array::{StringArray, UInt64Array};
    use profkit_xprof::proto::{OpMetrics, OpMetricsDb};

    use super::*;

    #[test]
    fn ranked_by_self_time_with_the_program_name() {
        let op = |name: &str, self_ps| OpMetrics {
            name: name.into(),
            long_name: format!("%{name} = f32[] add()"),
            category: "add".into(),
            hlo_module_id: 7,
            occurrences: 1,
            time_ps: self_ps,
            self_time_ps: self_ps,
            ..OpMetrics::default()
        };
        let stats = OpStats {
            device_op_metrics_db: Some(OpMetricsDb {
                metrics_db: vec![op("a", 10), op("b", 30)],
                total_time_ps: 40,
                ..OpMetricsDb::default()
            }),
            program_id_to_name_map: [(7, "jit_f".to_owned())].into_iter().collect(),
            ..OpStats::default()
        };
        let batch = batch("w0", &stats).unwrap();
        assert_eq!(batch.num_rows(), 2);
        let column = |name: &str| batch.column(batch.schema().index_of(name).unwrap()).clone();
        let names = column("hlo_op_name");
        let names = names.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!((names.value(0), names.value(1)), ("b", "a"));
        let module = column("module");
        let module = module.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(module.value(0), "jit_f");
        let rank = column("rank");
        let rank = rank.as_any().downcast_ref::<UInt64Array>().unwrap();
        assert_eq!((rank.value(0), rank.value(1)), (1, 2));
    }
}

//! Op metrics databases as xprof keeps them (`OpMetricsDb`): ops keyed by program id and name
//! in the order first seen, the idle op, the combiner that sums databases, and the order the
//! tools list ops in.

use std::collections::HashMap;

use crate::proto::{OpMetrics, OpMetricsDb};

/// The name and category of the op that stands for idle time.
pub const IDLE: &str = "IDLE";

/// An `OpMetricsDb` being built: ops looked up by `(hlo_module_id, name)`, appended in the order
/// first seen (xprof's `OpMetricsDbBuilder`).
#[derive(Default)]
pub(crate) struct DbBuilder {
    pub db: OpMetricsDb,
    index: HashMap<(u64, String), usize>,
}

impl DbBuilder {
    /// A builder that appends to `db` without looking at the ops already in it (xprof's builder
    /// over an existing database starts with an empty index).
    pub fn appending_to(db: OpMetricsDb) -> Self {
        Self {
            db,
            index: HashMap::new(),
        }
    }

    /// The op with this key, appended empty if new.
    pub fn lookup_or_insert(&mut self, hlo_module_id: u64, name: &str) -> &mut OpMetrics {
        let next = self.db.metrics_db.len();
        let i = *self
            .index
            .entry((hlo_module_id, name.to_owned()))
            .or_insert(next);
        if i == next {
            self.db.metrics_db.push(OpMetrics {
                hlo_module_id,
                name: name.to_owned(),
                ..OpMetrics::default()
            });
        }
        &mut self.db.metrics_db[i]
    }

    /// `OpMetricsDbCombiner::Combine`: sums `src` into the database, op by op (64-bit sums
    /// wrap, as xprof's do on hostile times).
    pub fn combine(&mut self, src: &OpMetricsDb, update_num_cores: bool) {
        let dst = &mut self.db;
        dst.total_host_infeed_enq_duration_ps = dst
            .total_host_infeed_enq_duration_ps
            .wrapping_add(src.total_host_infeed_enq_duration_ps);
        dst.total_host_infeed_enq_start_timestamp_ps_diff +=
            src.total_host_infeed_enq_start_timestamp_ps_diff;
        dst.total_time_ps = dst.total_time_ps.wrapping_add(src.total_time_ps);
        dst.total_op_time_ps = dst.total_op_time_ps.wrapping_add(src.total_op_time_ps);
        dst.idle_time_ps = dst.idle_time_ps.wrapping_add(src.idle_time_ps);
        dst.busy_time_ps = dst.busy_time_ps.wrapping_add(src.busy_time_ps);
        dst.idle_time_high_confidence_ps = dst
            .idle_time_high_confidence_ps
            .wrapping_add(src.idle_time_high_confidence_ps);
        dst.busy_time_high_confidence_ps = dst
            .busy_time_high_confidence_ps
            .wrapping_add(src.busy_time_high_confidence_ps);
        dst.normalized_total_op_time_ps = dst
            .normalized_total_op_time_ps
            .wrapping_add(src.normalized_total_op_time_ps);
        if let Some(p) = &src.precision_stats {
            let d = dst.precision_stats.get_or_insert_with(Default::default);
            d.compute_16bit_ps = d.compute_16bit_ps.wrapping_add(p.compute_16bit_ps);
            d.compute_32bit_ps = d.compute_32bit_ps.wrapping_add(p.compute_32bit_ps);
        }
        for src in &src.metrics_db {
            let dst = self.lookup_or_insert(src.hlo_module_id, &src.name);
            copy_metadata(src, dst);
            combine_op(src, dst, update_num_cores);
        }
    }
}

/// `CopyOpMetricsMetadata`: what the first database to name an op says of it.
fn copy_metadata(src: &OpMetrics, dst: &mut OpMetrics) {
    if dst.long_name.is_empty() {
        dst.long_name.clone_from(&src.long_name);
    }
    if dst.fingerprint == 0 {
        dst.fingerprint = src.fingerprint;
    }
    if dst.category.is_empty() {
        dst.category.clone_from(&src.category);
    }
    if dst.provenance.is_empty() {
        dst.provenance.clone_from(&src.provenance);
    }
    if dst.deduplicated_name.is_empty() {
        dst.deduplicated_name.clone_from(&src.deduplicated_name);
    }
    if dst.layout.is_none() {
        dst.layout.clone_from(&src.layout);
    }
    if dst.children.is_none() {
        dst.children.clone_from(&src.children);
    }
    if dst.source_info.is_none() {
        dst.source_info.clone_from(&src.source_info);
    }
    if dst.core_type == 0 {
        dst.core_type = src.core_type;
    }
}

/// `CombineOpMetrics`.
#[allow(deprecated)]
pub(crate) fn combine_op(src: &OpMetrics, dst: &mut OpMetrics, update_num_cores: bool) {
    dst.min_time_ps = if dst.occurrences == 0 {
        src.min_time_ps
    } else {
        src.min_time_ps.min(dst.min_time_ps)
    };
    dst.is_eager |= src.is_eager;
    dst.occurrences = dst.occurrences.wrapping_add(src.occurrences);
    dst.time_ps = dst.time_ps.wrapping_add(src.time_ps);
    dst.self_time_ps = dst.self_time_ps.wrapping_add(src.self_time_ps);
    dst.normalized_time_ps = dst.normalized_time_ps.wrapping_add(src.normalized_time_ps);
    dst.flops = dst.flops.wrapping_add(src.flops);
    dst.model_flops = dst.model_flops.wrapping_add(src.model_flops);
    dst.flops_v2 += src.flops_v2;
    dst.model_flops_v2 += src.model_flops_v2;
    dst.bytes_accessed = dst.bytes_accessed.wrapping_add(src.bytes_accessed);
    dst.autotuned |= src.autotuned;
    if update_num_cores {
        dst.num_cores = dst.num_cores.wrapping_add(src.num_cores);
    }
    for m in &src.memory_accessed_breakdown {
        match dst
            .memory_accessed_breakdown
            .iter_mut()
            .find(|d| d.memory_space == m.memory_space && d.operation_type == m.operation_type)
        {
            Some(d) => d.bytes_accessed = d.bytes_accessed.wrapping_add(m.bytes_accessed),
            None => dst.memory_accessed_breakdown.push(*m),
        }
    }
    dst.dma_stall_ps = dst.dma_stall_ps.wrapping_add(src.dma_stall_ps);
    if src.vdd_energy_j.is_some() || dst.vdd_energy_j.is_some() {
        dst.vdd_energy_j =
            Some(src.vdd_energy_j.unwrap_or_default() + dst.vdd_energy_j.unwrap_or_default());
    }
}

/// `SetTotalTimePs`: never less than the time in ops.
pub(crate) fn set_total_time_ps(db: &mut OpMetricsDb, total_time_ps: u64) {
    db.total_time_ps = db.total_op_time_ps.max(total_time_ps);
}

/// `AddIdleOp`: the time outside ops, as an op named and categorised `IDLE`.
pub(crate) fn add_idle_op(db: &mut OpMetricsDb) {
    let idle = db.total_time_ps.saturating_sub(db.total_op_time_ps);
    db.metrics_db.push(OpMetrics {
        name: IDLE.to_owned(),
        category: IDLE.to_owned(),
        time_ps: idle,
        self_time_ps: idle,
        ..OpMetrics::default()
    });
}

/// Whether an op is the idle op.
pub fn is_idle(op: &OpMetrics) -> bool {
    op.category == IDLE
}

/// `SortedOpMetricsDb`: by self time, longest first, then by name; at most `max` ops.
pub fn sorted(db: &OpMetricsDb, max: usize) -> Vec<&OpMetrics> {
    let mut ops: Vec<&OpMetrics> = db.metrics_db.iter().collect();
    ops.sort_by(|a, b| {
        b.self_time_ps
            .cmp(&a.self_time_ps)
            .then_with(|| a.name.cmp(&b.name))
    });
    ops.truncate(max);
    ops
}

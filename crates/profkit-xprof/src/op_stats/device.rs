//! The GPU op metrics database (xprof's `ConvertDeviceTraceXPlaneToOpMetricsDb`), as far as
//! it goes without XLA's HLO modules: kernels that carry a framework op (`tf_op` stat) are ops
//! named `<op name>/<kernel name>`; the plane's span runs from the earliest event offset to the
//! latest end offset over its non-derived lines (offsets within each line, as xprof takes them);
//! the rest is the idle op.
//!
//! Kernels of XLA programs (an `hlo_op` stat) become HLO ops in xprof when the profile stores
//! the programs' HLO; that needs XLA's HLO module map and cost model, not built here:
//! [`GpuDb::xla_kernels`] counts them so that the caller can say so.

use profkit_xplane::XPlane;
use profkit_xplane::visitor::PlaneVisitor;

use super::metrics_db::{DbBuilder, add_idle_op, set_total_time_ps};
use crate::preprocess::derived::is_derived_line_id;
use crate::preprocess::derived::tf_op;
use crate::proto::OpMetricsDb;

/// One GPU plane's database, and what it could not place.
pub struct GpuDb {
    /// The database.
    pub db: OpMetricsDb,
    /// Kernels of XLA programs (left out).
    pub xla_kernels: u64,
}

/// The database of one GPU plane.
pub fn gpu_op_metrics_db(plane: &XPlane) -> GpuDb {
    let visitor = PlaneVisitor::new(plane);
    let mut builder = DbBuilder::default();
    let mut first = i64::MAX;
    let mut last = 0i64;
    let mut xla_kernels = 0u64;
    for line in visitor.lines() {
        if is_derived_line_id(line.id()) {
            continue;
        }
        for event in line.events() {
            first = first.min(event.offset_ps());
            last = last.max(event.offset_ps().saturating_add(event.duration_ps()));
            let own = |name: &str| {
                event
                    .stats()
                    .find(|s| s.name() == name)
                    .and_then(|s| s.value())
            };
            if own("hlo_op")
                .and_then(|v| v.as_str())
                .is_some_and(|s| !s.is_empty())
            {
                xla_kernels += 1;
                continue;
            }
            let Some(full) = own("tf_op")
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
            else {
                continue;
            };
            let is_eager = own("is_eager")
                .and_then(|v| v.as_i64())
                .is_some_and(|v| v != 0);
            let op = tf_op::parse(full);
            let name = format!("{}/{}", op.name, event.name());
            let time = u64::try_from(event.duration_ps()).unwrap_or(0);
            let m = builder.lookup_or_insert(0, &name);
            if m.occurrences == 0 && m.category.is_empty() && m.provenance.is_empty() {
                m.category = if op.op_type.is_empty() {
                    "unknown".to_owned()
                } else {
                    op.op_type.to_owned()
                };
                m.provenance = full.to_owned();
                m.is_eager |= is_eager;
                m.source_info = Some(Default::default());
            }
            m.num_cores = 1;
            m.occurrences = m.occurrences.wrapping_add(1);
            m.time_ps = m.time_ps.wrapping_add(time);
            m.self_time_ps = m.self_time_ps.wrapping_add(time);
            builder.db.total_op_time_ps = builder.db.total_op_time_ps.wrapping_add(time);
        }
    }
    let span = if last != 0 {
        u64::try_from(last.saturating_sub(first)).unwrap_or(0)
    } else {
        0
    };
    set_total_time_ps(&mut builder.db, span);
    add_idle_op(&mut builder.db);
    GpuDb {
        db: builder.db,
        xla_kernels,
    }
}

//! TPU steps: the steps of a TensorCore or SparseCore plane carry the op metrics of each core
//! in the step (`ConvertTpuDeviceTraceXLineToStepEvents`), and each step of the steps database
//! gets, per core, its time and a breakdown by op category (`StepEventsToPerCoreStepInfo`).

use super::event_span::StepDetails;
use super::metrics_db::{DbBuilder, add_idle_op, set_total_time_ps};
use crate::proto::{GenericStepBreakdown, PerCoreStepInfo, StepInfoResult};

/// `kSparseCoreIndexStart`: SparseCore planes' core ids start here.
pub const SPARSE_CORE_INDEX_START: u32 = 1_000_000;

/// `StepEventsToPerCoreStepInfo`: each core's step info and the step's HLO op metrics (the
/// TensorCores' combined). A step without markers keeps only its number.
pub fn per_core_step_info(step_num: u32, details: &StepDetails, out: &mut PerCoreStepInfo) {
    out.step_num = step_num;
    let mut combiner = DbBuilder::appending_to(out.hlo_metrics_db.take().unwrap_or_default());
    let step_time = details.step_time();
    if step_time.duration == 0 {
        out.hlo_metrics_db = Some(combiner.db);
        return;
    }
    for (&core, db) in &details.per_core_op_metrics_db {
        let time = if core >= SPARSE_CORE_INDEX_START {
            details.step_time_on_core(core)
        } else {
            step_time
        };
        let mut db = db.clone();
        set_total_time_ps(&mut db, time.duration);
        add_idle_op(&mut db);
        if core < SPARSE_CORE_INDEX_START {
            combiner.combine(&db, true);
        }
        let mut breakdown = GenericStepBreakdown::default();
        for op in &db.metrics_db {
            let slot = breakdown
                .category_ps
                .entry(op.category.clone())
                .or_default();
            *slot = slot.wrapping_add(op.self_time_ps);
        }
        out.step_info_per_core.insert(
            core,
            StepInfoResult {
                step_num,
                step_name: details.step_name.clone(),
                begin_ps: time.begin,
                duration_ps: time.duration,
                step_breakdown: Some(super::steps::pack_breakdown(&breakdown)),
                ..StepInfoResult::default()
            },
        );
    }
    out.hlo_metrics_db = Some(combiner.db);
    for (core, db) in &details.collectives {
        out.all_reduce_db_per_core.insert(*core, db.clone());
    }
}

/// The core details a TPU plane's `core_details` stat holds (serialized `CoreDetails`), with
/// the host's name and whether the plane is a SparseCore's; `None` without a stat that parses.
pub fn core_details(
    plane: &profkit_xplane::XPlane,
    host: &str,
) -> Option<crate::proto::CoreDetails> {
    let visitor = profkit_xplane::visitor::PlaneVisitor::new(plane);
    let bytes = match visitor.stat("core_details")?.value()? {
        profkit_xplane::visitor::StatValueRef::Bytes(b) => b,
        profkit_xplane::visitor::StatValueRef::Str(s) => s.as_bytes(),
        _ => &[],
    };
    let mut details: crate::proto::CoreDetails = prost::Message::decode(bytes).ok()?;
    details.hostname = host.to_owned();
    details.is_sparse_core = crate::preprocess::tpu::tpu_plane_has_core_id(&plane.name)
        && !crate::preprocess::tpu::is_tensor_core_plane(&plane.name);
    Some(details)
}

/// TPU step events: not built yet.
pub fn tpu_step_events(_plane: &profkit_xplane::XPlane) -> super::event_span::StepEvents {
    super::event_span::StepEvents::new()
}

/// Whether xprof's `MayFixTpuStepAnalysis` would change the steps database (not reproduced).
pub fn may_fix_step_analysis(db: &crate::proto::StepDatabaseResult) -> bool {
    !db.step_sequence.is_empty()
}

//! xprof's `MayFixTpuStepAnalysis`: on a TPU host whose device has no infeed op (the input
//! reaches the TensorCores some other way), the time the host spent waiting for input or sending
//! it to the device in a step (its `HOST_WAIT_INPUT` and `HOST_TO_DEVICE` events, found by the
//! step's number among the host's groups) is taken from the TensorCores' idle time of that step
//! and shown as infeed: each TensorCore's idle time times the share of the cores' idle time the
//! host's input time makes (at most all of it).

use std::collections::BTreeMap;

use prost::Message;

use super::event_span::{StepEvents, event_type};
use super::roofline::safe_divide;
use super::tpu_steps::SPARSE_CORE_INDEX_START;
use crate::proto::{
    CoreDetails, GenericStepBreakdown, OpMetricsDb, StepDatabaseResult, TpuStepBreakdown,
};

/// TSL's `kHloInfeed` and `kHloSparseCoreV0Infeed`: the categories of the device ops that bring
/// input from the host (`IsHostOrSparseCoreV0Infeed`).
const INFEED_CATEGORIES: [&str; 2] = ["infeed", "sparsecorev0 infeed"];

/// The category xprof moves the idle time to (`HloOpcodeString(kInfeed)`), and the idle one.
const INFEED: &str = "infeed";
const IDLE: &str = "IDLE";

const TPU_STEP_BREAKDOWN: &str = "tensorflow.profiler.TpuStepBreakdown";
const GENERIC_STEP_BREAKDOWN: &str = "tensorflow.profiler.GenericStepBreakdown";

/// `HasTpuInfeedOp`: whether the device ran an op that takes input from the host.
fn has_infeed_op(device_db: &OpMetricsDb) -> bool {
    device_db
        .metrics_db
        .iter()
        .any(|op| INFEED_CATEGORIES.contains(&op.category.as_str()))
}

/// `TotalInputPs` of the host's step of this number (0 when the host has no such step).
fn input_ps(host_steps: &StepEvents, step_num: u32) -> u64 {
    host_steps
        .get(&i64::from(step_num))
        .map(|details| {
            details
                .events
                .iter()
                .filter(|e| {
                    e.kind == event_type::HOST_WAIT_INPUT || e.kind == event_type::HOST_TO_DEVICE
                })
                .fold(0u64, |sum, e| sum.wrapping_add(e.span.duration))
        })
        .unwrap_or(0)
}

/// `MayFixTpuStepAnalysis` on the steps database `db` of a TPU host.
pub(crate) fn may_fix(
    host_steps: &StepEvents,
    device_db: &OpMetricsDb,
    db: &mut StepDatabaseResult,
    core_details: &BTreeMap<u32, CoreDetails>,
) {
    if has_infeed_op(device_db) {
        return;
    }
    for step in &mut db.step_sequence {
        let total_input_ps = input_ps(host_steps, step.step_num);
        if total_input_ps == 0 {
            continue;
        }
        let tc_idle_ms =
            crate::tools::tpu_input_pipeline::per_step(step, core_details).tc_idle_time_ms;
        let ratio = safe_divide(total_input_ps as f64 / 1e9, tc_idle_ms).min(1.0);
        for (&core, info) in &mut step.step_info_per_core {
            if core >= SPARSE_CORE_INDEX_START {
                continue;
            }
            let Some(any) = info.step_breakdown.as_mut() else {
                continue;
            };
            let kind = any.type_url.rsplit('/').next().unwrap_or("");
            if kind == TPU_STEP_BREAKDOWN {
                let Ok(mut tpu) = TpuStepBreakdown::decode(any.value.as_slice()) else {
                    continue;
                };
                if tpu.tc_idle_ps > 0 {
                    // C++'s conversion of the product to uint64: truncation, saturating.
                    tpu.infeed_duration_ps = (tpu.tc_idle_ps as f64 * ratio) as u64;
                    tpu.tc_idle_ps = tpu.tc_idle_ps.wrapping_sub(tpu.infeed_duration_ps);
                    any.value = tpu.encode_to_vec();
                }
            } else if kind == GENERIC_STEP_BREAKDOWN {
                let Ok(mut generic) = GenericStepBreakdown::decode(any.value.as_slice()) else {
                    continue;
                };
                let idle = generic.category_ps.get(IDLE).copied().unwrap_or(0);
                if idle > 0 {
                    let infeed = (idle as f64 * ratio) as u64;
                    generic.category_ps.insert(INFEED.to_owned(), infeed);
                    generic
                        .category_ps
                        .insert(IDLE.to_owned(), idle.wrapping_sub(infeed));
                    any.value = generic.encode_to_vec();
                }
            }
            // Another breakdown (a SparseCore's) keeps its idle time, as in xprof.
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op_stats::event_span::{Span, StepDetails, TypedSpan};
    use crate::proto::{OpMetrics, PerCoreStepInfo, StepInfoResult};

    fn step(num: u32, idle: u64, busy: u64) -> PerCoreStepInfo {
        let generic = GenericStepBreakdown {
            category_ps: [(IDLE.to_owned(), idle), ("fusion".to_owned(), busy)].into(),
            ..GenericStepBreakdown::default()
        };
        let info = StepInfoResult {
            step_num: num,
            duration_ps: idle + busy,
            step_breakdown: Some(crate::op_stats::steps::pack_breakdown(&generic)),
            ..StepInfoResult::default()
        };
        PerCoreStepInfo {
            step_num: num,
            step_info_per_core: [(0, info)].into(),
            ..PerCoreStepInfo::default()
        }
    }

    fn host(step: i64, kinds: &[(i32, u64)]) -> StepEvents {
        let mut details = StepDetails::default();
        for &(kind, duration) in kinds {
            details.events.push(TypedSpan {
                kind,
                span: Span { begin: 0, duration },
            });
        }
        [(step, details)].into()
    }

    fn breakdown(db: &StepDatabaseResult, i: usize) -> BTreeMap<String, u64> {
        let any = db.step_sequence[i].step_info_per_core[&0]
            .step_breakdown
            .as_ref()
            .unwrap();
        GenericStepBreakdown::decode(any.value.as_slice())
            .unwrap()
            .category_ps
            .into_iter()
            .collect()
    }

    #[test]
    fn host_input_takes_its_share_of_idle_time() {
        let mut db = StepDatabaseResult {
            step_sequence: vec![step(1, 28_000_000, 12_000_000), step(2, 10, 5)],
            ..StepDatabaseResult::default()
        };
        let host = host(
            1,
            &[
                (event_type::HOST_WAIT_INPUT, 3_000_000),
                (event_type::HOST_TO_DEVICE, 2_000_000),
                (event_type::HOST_COMPUTE, 9_000_000),
            ],
        );
        let empty = OpMetricsDb::default();
        may_fix(&host, &empty, &mut db, &BTreeMap::new());
        let one = breakdown(&db, 0);
        assert_eq!(one[INFEED], 5_000_000);
        assert_eq!(one[IDLE], 23_000_000);
        // Step 2 has no host step: unchanged.
        assert!(!breakdown(&db, 1).contains_key(INFEED));
    }

    #[test]
    fn an_infeed_op_leaves_the_steps_alone() {
        let mut db = StepDatabaseResult {
            step_sequence: vec![step(1, 28, 12)],
            ..StepDatabaseResult::default()
        };
        let host = host(1, &[(event_type::HOST_WAIT_INPUT, 30)]);
        let device = OpMetricsDb {
            metrics_db: vec![OpMetrics {
                category: "infeed".to_owned(),
                ..OpMetrics::default()
            }],
            ..OpMetricsDb::default()
        };
        let before = db.clone();
        may_fix(&host, &device, &mut db, &BTreeMap::new());
        assert_eq!(db, before);
        // More input than idle time: all of the idle time.
        may_fix(&host, &OpMetricsDb::default(), &mut db, &BTreeMap::new());
        let one = breakdown(&db, 0);
        assert_eq!((one[INFEED], one[IDLE]), (28, 0));
    }
}

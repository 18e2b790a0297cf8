//! What the tools computed from OpStats besides framework_op_stats (`kernel_stats`, `hlo_stats`,
//! `roofline_model`) show that profkit's OpStats does not reproduce, as sentences a tool's caller
//! can print ("not reproduced: ...") and a comparison can read.
//!
//! The kernel stats read no part OpStats leaves out. The HLO op stats and the roofline model show
//! the device ops: their cost where XLA's cost model is not reproduced, and on a GPU the HLO ops
//! whose expressions profkit does not print ([`OpStatsBuild::missing`]). The roofline model shows
//! the device's peaks too (and the steps database's records, from OpStats' steps database, whose
//! unbuilt parts [`OpStatsBuild::missing`] names).

use crate::op_stats::OpStatsBuild;
use crate::proto::HardwareType;

/// The parts of `tool`'s data that are not xprof's for this OpStats (empty when all is).
pub fn not_reproduced(tool: &str, built: &OpStatsBuild) -> Vec<String> {
    if tool == "kernel_stats" {
        return Vec::new();
    }
    let stats = &built.op_stats;
    let env = stats.run_environment.clone().unwrap_or_default();
    let gpu = env.hardware_type == HardwareType::Gpu as i32;
    // The op metrics' gaps (and, for the roofline model's step records, the steps database's):
    // the kernel stats and the device's busy time are in neither tool.
    let mut parts: Vec<String> = built
        .missing_op_metrics()
        .chain(
            built
                .missing
                .iter()
                .map(String::as_str)
                .filter(|m| tool == "roofline_model" && m.starts_with("steps database")),
        )
        .map(|m| format!("{m}; those rows are not xprof's"))
        .collect();
    if tool == "roofline_model" && gpu && stats.perf_env.is_none() {
        parts.push("the GPU's peaks (PerfEnv) from its capabilities; the table's peaks, bounds and efficiencies are not xprof's".to_owned());
    }
    parts
}

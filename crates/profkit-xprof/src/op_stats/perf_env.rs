//! The device's peaks (xprof's `PerfEnv`, `GetPerfEnvFromXPlane`), which the roofline rules
//! ([`super::roofline`]) measure ops against, and `CombinePerfEnv` across hosts.
//!
//! On a TPU plane they are the plane's stats, as libtpu writes them: `peak_teraflops_per_second`,
//! then nine bandwidths in GB/s in xprof 2.24.2's order (HBM, SRAM read, SRAM write, CMEM read,
//! CMEM write, VMEM read, VMEM write, SparseCore SPMEM read, SPMEM write;
//! `peak_hbm_bw_gigabytes_per_second`, `peak_sram_rd_bw_gigabytes_per_second`, ... a missing one
//! is 0), the SparseCores' `peak_sc_teraflops_per_second`, `has_megacore` and `has_merged_vmem`
//! (flags read from the stat's `int64` value, as TSL's `BoolValue` reads them); the ridge point
//! is the peak GFLOP/s over the HBM bandwidth, and the device has CMEM when either CMEM bandwidth
//! is positive. (Checked against xprof's own OpStats on the `tpu-op-metrics` case; xprof's newer
//! sources have seven bandwidths.)
//!
//! GPU planes get their peaks from the device's capabilities and xprof's per-architecture tables
//! (FLOPs per cycle per SM, shared memory bandwidth), which profkit does not reproduce: their
//! `PerfEnv` is left empty, which changes no tool output for profiles whose GPU ops carry no FLOPs
//! or bytes (only XLA programs' kernels do, see [`super::host_op_stats`]).

use profkit_xplane::XPlane;
use profkit_xplane::visitor::PlaneVisitor;

use super::tpu::double_value;
use crate::proto::PerfEnv;

/// The index of the HBM bandwidth in `peak_bws_giga_bytes_per_second` (`MEM_BW_TYPE_HBM_RW`).
pub const HBM_RW: usize = 0;
/// SRAM (GPU shared memory and L1) read.
pub const SRAM_RD: usize = 1;
/// SRAM write.
pub const SRAM_WR: usize = 2;
/// TPU CMEM read.
pub const CMEM_RD: usize = 3;
/// TPU CMEM write.
pub const CMEM_WR: usize = 4;
/// TPU VMEM read.
pub const VMEM_RD: usize = 5;
/// TPU VMEM write.
pub const VMEM_WR: usize = 6;
/// TPU SparseCore SPMEM read.
pub const SPMEM_RD: usize = 7;
/// TPU SparseCore SPMEM write.
pub const SPMEM_WR: usize = 8;

const TPU_BANDWIDTH_STATS: [&str; 9] = [
    "peak_hbm_bw_gigabytes_per_second",
    "peak_sram_rd_bw_gigabytes_per_second",
    "peak_sram_wr_bw_gigabytes_per_second",
    "peak_cmem_rd_bw_gigabytes_per_second",
    "peak_cmem_wr_bw_gigabytes_per_second",
    "peak_vmem_rd_bw_gigabytes_per_second",
    "peak_vmem_wr_bw_gigabytes_per_second",
    "peak_spmem_rd_bw_gigabytes_per_second",
    "peak_spmem_wr_bw_gigabytes_per_second",
];

/// `MakePerfEnv`: the peaks and the ridge point (GFLOP/s per GB/s of HBM).
fn make(peak_tera_flops_per_second: f64, peak_bws: Vec<f64>) -> PerfEnv {
    let hbm = peak_bws.get(HBM_RW).copied().unwrap_or(0.0);
    PerfEnv {
        peak_tera_flops_per_second,
        ridge_point: peak_tera_flops_per_second * 1e3 / hbm,
        peak_bws_giga_bytes_per_second: peak_bws,
        ..PerfEnv::default()
    }
}

/// `GetPerfEnvFromXPlane` for a TPU plane (`/device:TPU:...`).
pub fn tpu_perf_env(plane: &XPlane) -> PerfEnv {
    let visitor = PlaneVisitor::new(plane);
    let double = |name: &str| double_value(visitor.stat(name).and_then(|s| s.value()));
    // TSL's `BoolValue`: the `int64_value` field, non-zero.
    let flag = |name: &str| {
        visitor
            .stat(name)
            .and_then(|s| s.value())
            .is_some_and(|v| matches!(v, profkit_xplane::visitor::StatValueRef::Int64(i) if i != 0))
    };
    let bws: Vec<f64> = TPU_BANDWIDTH_STATS.iter().map(|s| double(s)).collect();
    let has_cmem = bws[CMEM_RD] > 0.0 || bws[CMEM_WR] > 0.0;
    let mut env = make(double("peak_teraflops_per_second"), bws);
    env.has_cmem = has_cmem;
    env.peak_sc_tera_flops_per_second = double("peak_sc_teraflops_per_second");
    env.has_merged_vmem = flag("has_merged_vmem");
    env.has_megacore = flag("has_megacore");
    env
}

/// Whether a GPU plane states capabilities from which xprof computes non-zero peaks (its clock
/// rate, core count, memory bandwidth or a peak stat): profkit does not reproduce those peaks.
pub fn gpu_has_capabilities(plane: &XPlane) -> bool {
    let visitor = PlaneVisitor::new(plane);
    [
        "clock_rate",
        "core_count",
        "memory_bandwidth",
        "peak_teraflops_per_second",
        "peak_sram_rd_bw_gigabytes_per_second",
        "peak_sram_wr_bw_gigabytes_per_second",
    ]
    .iter()
    .any(|name| {
        visitor
            .stat(name)
            .and_then(|s| s.value())
            .and_then(|v| v.as_f64())
            .is_some_and(|v| v != 0.0)
    })
}

/// `CombinePerfEnv`: `src`'s positive peaks and ridge point, and its bandwidths when `dst` has
/// none yet.
pub fn combine(src: &PerfEnv, dst: &mut PerfEnv) {
    if src.peak_tera_flops_per_second > 0.0 {
        dst.peak_tera_flops_per_second = src.peak_tera_flops_per_second;
    }
    if !src.peak_bws_giga_bytes_per_second.is_empty()
        && dst.peak_bws_giga_bytes_per_second.is_empty()
    {
        dst.peak_bws_giga_bytes_per_second
            .clone_from(&src.peak_bws_giga_bytes_per_second);
    }
    if src.ridge_point > 0.0 {
        dst.ridge_point = src.ridge_point;
    }
}

#[cfg(test)]
mod tests {
    use profkit_xplane::{PlaneBuilder, StatValue};

    use super::*;

    #[test]
    fn tpu_peaks_from_plane_stats() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/device:TPU:0");
        b.add_stat("peak_teraflops_per_second", StatValue::Double(197.0));
        b.add_stat("peak_hbm_bw_gigabytes_per_second", StatValue::Double(819.0));
        b.add_stat(
            "peak_cmem_wr_bw_gigabytes_per_second",
            StatValue::Double(10.0),
        );
        b.add_stat("has_megacore", StatValue::Int64(1));
        // Not an int64: TSL's `BoolValue` reads 0.
        b.add_stat("has_merged_vmem", StatValue::Uint64(1));
        let env = tpu_perf_env(&plane);
        assert_eq!(env.peak_tera_flops_per_second, 197.0);
        assert_eq!(
            env.peak_bws_giga_bytes_per_second,
            [819.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 0.0]
        );
        assert_eq!(env.ridge_point, 197_000.0 / 819.0);
        assert!(env.has_cmem && env.has_megacore && !env.has_merged_vmem);
    }
}

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
//! On a GPU plane they come from the device's capabilities (plane stats `core_count`,
//! `clock_rate` in kHz, `memory_bandwidth` in bytes per second, the vendor and compute
//! capability): the peak FLOP rate is the cores times the clock times the FLOPs per cycle per
//! core of xprof's per-architecture tables (unless the plane states `peak_teraflops_per_second`),
//! the bandwidths are HBM, then shared memory read and write (cores times clock times bytes per
//! cycle per core, unless stated). Of those tables profkit knows the one architecture whose values
//! xprof's own OpStats showed: AMD's compute capability 9.4 (MI300, gfx942: 2048 FLOPs and 128
//! bytes of shared memory per cycle per compute unit). A device without cores or clock, or of a
//! vendor other than `Nvidia` and `AMD` (a plane without `device_vendor` too), has zero FLOP and
//! shared memory peaks (its HBM bandwidth still its `memory_bandwidth`: checked on the real
//! TensorFlow profile on a V100, `gpu`); any other [`gpu_perf_env`] leaves unknown, and the caller says so when it matters (when
//! HLO ops have FLOPs or bytes to measure against the peaks).

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

/// `GetPerfEnvFromXPlane` for a GPU plane, or `None` for a device whose architecture table
/// profkit does not know.
pub fn gpu_perf_env(plane: &XPlane) -> Option<PerfEnv> {
    let visitor = PlaneVisitor::new(plane);
    let value = |name: &str| visitor.stat(name).and_then(|s| s.value());
    let int = |name: &str| value(name).and_then(|v| v.as_f64()).unwrap_or(0.0);
    let double = |name: &str| double_value(value(name));
    let cores = int("core_count");
    let clock_ghz = int("clock_rate") / 1e6;
    let vendor = value("device_vendor")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    let cap = (int("compute_cap_major"), int("compute_cap_minor"));
    // (FLOPs, bytes of shared memory) per cycle per core.
    let per_cycle = if cores == 0.0 || clock_ghz == 0.0 {
        Some((0.0, 0.0))
    } else if vendor != "Nvidia" && vendor != "AMD" {
        // xprof has tables for these two vendors only, and counts nothing for any other (a
        // plane without a `device_vendor` stat too).
        Some((0.0, 0.0))
    } else if vendor == "AMD" && cap == (9.0, 4.0) {
        Some((2048.0, 128.0))
    } else {
        None
    };
    let mut peak_tera = double("peak_teraflops_per_second");
    let mut sram_rd = double("peak_sram_rd_bw_gigabytes_per_second");
    let mut sram_wr = double("peak_sram_wr_bw_gigabytes_per_second");
    if peak_tera <= 0.0 || sram_rd <= 0.0 || sram_wr <= 0.0 {
        let (flops, shm) = per_cycle?;
        if peak_tera <= 0.0 {
            // `num_cores * GigaToTera(per-core GFLOP/s)`, in that order (the last bit shows).
            peak_tera = cores * (clock_ghz * flops / 1e3);
        }
        let shm_giga = cores * (clock_ghz * 1e9 * shm / 1e9);
        if sram_rd <= 0.0 {
            sram_rd = shm_giga;
        }
        if sram_wr <= 0.0 {
            sram_wr = shm_giga;
        }
    }
    let hbm = int("memory_bandwidth") / 1e9;
    Some(make(peak_tera, vec![hbm, sram_rd, sram_wr]))
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

    /// The MI300 of the real JAX profile on ROCm, with the peaks xprof's OpStats holds for it.
    #[test]
    fn gpu_peaks_from_capabilities() {
        let gpu = |vendor: &str, major: i64, minor: i64| {
            let mut plane = XPlane::default();
            let mut b = PlaneBuilder::new(&mut plane);
            b.set_name("/device:GPU:0");
            b.add_stat("device_vendor", StatValue::Str(vendor.into()));
            b.add_stat("clock_rate", StatValue::Uint64(2_100_000));
            b.add_stat("core_count", StatValue::Uint64(304));
            b.add_stat("memory_bandwidth", StatValue::Uint64(2_662_400_000_000));
            b.add_stat("compute_cap_major", StatValue::Int64(major));
            b.add_stat("compute_cap_minor", StatValue::Int64(minor));
            plane
        };
        let env = gpu_perf_env(&gpu("AMD", 9, 4)).unwrap_or_default();
        assert!((env.peak_tera_flops_per_second - 1307.4432).abs() < 1e-9);
        let bws = &env.peak_bws_giga_bytes_per_second;
        assert_eq!(bws.len(), 3);
        assert!((bws[0] - 2662.4).abs() < 1e-9 && (bws[1] - 81715.2).abs() < 1e-6);
        assert_eq!(bws[1], bws[2]);
        // Tables profkit does not know.
        assert_eq!(gpu_perf_env(&gpu("Nvidia", 8, 0)), None);
        assert_eq!(gpu_perf_env(&gpu("AMD", 9, 0)), None);
        // A vendor xprof has no table for (here none at all, as the real V100 profile `gpu`
        // has it): no FLOP or shared memory peaks, the HBM bandwidth as stated.
        let mut unnamed = gpu("", 7, 0);
        unnamed.stats.retain(|s| {
            unnamed
                .stat_metadata
                .get(&s.metadata_id)
                .is_none_or(|m| m.name != "device_vendor")
        });
        let env = gpu_perf_env(&unnamed).unwrap_or_default();
        assert_eq!(env.peak_tera_flops_per_second, 0.0);
        assert_eq!(env.peak_bws_giga_bytes_per_second, [2662.4, 0.0, 0.0]);
        assert_eq!(env.ridge_point, 0.0);
        assert_eq!(gpu_perf_env(&gpu("Intel", 8, 0)), Some(env));
        // No capabilities: no peaks, whatever the device.
        let mut bare = XPlane::default();
        PlaneBuilder::new(&mut bare).set_name("/device:GPU:0");
        let env = gpu_perf_env(&bare).unwrap_or_default();
        assert_eq!(env.peak_tera_flops_per_second, 0.0);
        assert_eq!(env.peak_bws_giga_bytes_per_second, [0.0, 0.0, 0.0]);
    }
}

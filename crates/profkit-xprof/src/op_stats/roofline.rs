//! Where an op sits against the device's roofline (xprof's `SetRooflineMetrics`): its FLOP
//! rate, memory bandwidths and operational intensities, and the resource that bounds it.
//!
//! Rates are over the op's total time (its FLOPs and bytes include its children's). The bytes by
//! memory space come from the op's memory access breakdown: HBM (space 1) whatever the
//! operation, CMEM (2) and VMEM (3) split into reads and writes; an op without a breakdown counts
//! every byte as HBM. The bound is the resource with the highest utilisation, compared in this
//! order with a later one winning only when strictly higher: compute (FLOP rate over the peak),
//! HBM; on a TPU then CMEM read and write and VMEM read and write (each only when the op touches
//! it and the device has a peak for it); on a GPU shared memory / L1 (the HBM rate over the SRAM
//! peak). With no utilisation above 0 the bound is "Unknown".

use super::perf_env::{CMEM_RD, CMEM_WR, HBM_RW, SRAM_WR, VMEM_RD, VMEM_WR};
use crate::proto::{HardwareType, OpMetrics, PerfEnv};

/// `PerformanceInfo::MemoryAccessed::MemorySpace`.
const HBM: u64 = 1;
const CMEM: u64 = 2;
const VMEM: u64 = 3;
/// `OpMetrics::MemoryAccessed::OperationType`.
const READ: i32 = 1;
const WRITE: i32 = 2;

/// TSL's `SafeDivide`: 0 when the divisor is within 1e-10 of 0.
pub fn safe_divide(a: f64, b: f64) -> f64 {
    if -1e-10 < b && b < 1e-10 { 0.0 } else { a / b }
}

/// TSL's `GigaToGibi`.
pub fn giga_to_gibi(giga: f64) -> f64 {
    giga / ((1u64 << 30) as f64 / 1.0e9)
}

/// TSL's `PicoToNano`.
fn pico_to_nano(ps: u64) -> f64 {
    ps as f64 / 1e3
}

/// TSL's `GibibytesPerSecond`.
fn gibibytes_per_second(bytes: f64, ns: f64) -> f64 {
    giga_to_gibi(safe_divide(bytes, ns))
}

/// `GetMemoryPeakBandwidth`: the bandwidth at `index`, or the legacy HBM peak.
fn peak_bandwidth(env: &PerfEnv, index: usize) -> f64 {
    env.peak_bws_giga_bytes_per_second
        .get(index)
        .copied()
        .unwrap_or(env.peak_hbm_bw_giga_bytes_per_second)
}

/// An op's roofline figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Roofline {
    /// GFLOP/s.
    pub measured_flop_rate: f64,
    /// Model GFLOP/s.
    pub model_flop_rate: f64,
    /// Every byte, GiB/s.
    pub measured_memory_bw: f64,
    /// FLOPs per byte.
    pub operational_intensity: f64,
    /// HBM GiB/s.
    pub hbm_bw: f64,
    /// CMEM read GiB/s.
    pub cmem_read_bw: f64,
    /// CMEM write GiB/s.
    pub cmem_write_bw: f64,
    /// VMEM read GiB/s.
    pub vmem_read_bw: f64,
    /// VMEM write GiB/s.
    pub vmem_write_bw: f64,
    /// FLOPs per HBM byte.
    pub hbm_operational_intensity: f64,
    /// The bounding resource: "Compute", "HBM", "CMEM Read", "CMEM Write", "VMEM Read", "VMEM
    /// Write", "Shm/L1" or "Unknown".
    pub bound_by: &'static str,
    /// The operational intensity against the bounding resource.
    pub bottleneck_operational_intensity: f64,
}

/// `SetRooflineMetrics` (without the time scale factor, as the tools call it).
#[allow(deprecated)]
pub fn roofline(m: &OpMetrics, env: &PerfEnv, hardware: HardwareType) -> Roofline {
    let time_ns = pico_to_nano(m.time_ps);
    let mut r = Roofline {
        measured_flop_rate: safe_divide(m.flops_v2, time_ns),
        model_flop_rate: safe_divide(m.model_flops_v2, time_ns),
        measured_memory_bw: gibibytes_per_second(m.bytes_accessed as f64, time_ns),
        operational_intensity: safe_divide(m.flops_v2, m.bytes_accessed as f64),
        ..Roofline::default()
    };
    let (mut hbm, mut cmem_rd, mut cmem_wr, mut vmem_rd, mut vmem_wr) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    for a in &m.memory_accessed_breakdown {
        let slot = match (a.memory_space, a.operation_type) {
            (HBM, _) => &mut hbm,
            (CMEM, READ) => &mut cmem_rd,
            (CMEM, WRITE) => &mut cmem_wr,
            (VMEM, READ) => &mut vmem_rd,
            (VMEM, WRITE) => &mut vmem_wr,
            _ => continue,
        };
        *slot = slot.wrapping_add(a.bytes_accessed);
    }
    if m.memory_accessed_breakdown.is_empty() {
        hbm = m.bytes_accessed;
    }
    r.hbm_bw = gibibytes_per_second(hbm as f64, time_ns);
    r.cmem_read_bw = gibibytes_per_second(cmem_rd as f64, time_ns);
    r.cmem_write_bw = gibibytes_per_second(cmem_wr as f64, time_ns);
    r.vmem_read_bw = gibibytes_per_second(vmem_rd as f64, time_ns);
    r.vmem_write_bw = gibibytes_per_second(vmem_wr as f64, time_ns);
    r.hbm_operational_intensity = safe_divide(m.flops_v2, hbm as f64);
    let intensity = |bytes: u64| safe_divide(m.flops_v2, bytes as f64);

    let mut bound = "Unknown";
    let mut utilization = 0.0;
    let mut bound_intensity = 0.0;
    let mut consider = |name: &'static str, u: f64, oi: f64| {
        if utilization < u {
            bound = name;
            utilization = u;
            bound_intensity = oi;
        }
    };
    consider(
        "Compute",
        safe_divide(r.measured_flop_rate, env.peak_tera_flops_per_second * 1e3),
        r.operational_intensity,
    );
    consider(
        "HBM",
        safe_divide(r.hbm_bw, giga_to_gibi(peak_bandwidth(env, HBM_RW))),
        r.hbm_operational_intensity,
    );
    if hardware == HardwareType::Tpu {
        for (bytes, index, bw, name) in [
            (cmem_rd, CMEM_RD, r.cmem_read_bw, "CMEM Read"),
            (cmem_wr, CMEM_WR, r.cmem_write_bw, "CMEM Write"),
            (vmem_rd, VMEM_RD, r.vmem_read_bw, "VMEM Read"),
            (vmem_wr, VMEM_WR, r.vmem_write_bw, "VMEM Write"),
        ] {
            let peak = peak_bandwidth(env, index);
            if bytes != 0 && peak != 0.0 {
                consider(name, safe_divide(bw, giga_to_gibi(peak)), intensity(bytes));
            }
        }
    }
    if hardware == HardwareType::Gpu {
        // xprof reads index 2 (SRAM write) for shared memory / L1.
        let peak = peak_bandwidth(env, SRAM_WR);
        if peak != 0.0 {
            consider(
                "Shm/L1",
                safe_divide(r.hbm_bw, giga_to_gibi(peak)),
                r.hbm_operational_intensity,
            );
        }
    }
    r.bound_by = bound;
    r.bottleneck_operational_intensity = bound_intensity;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::op_metrics::MemoryAccessed;

    fn env() -> PerfEnv {
        PerfEnv {
            peak_tera_flops_per_second: 100.0,
            peak_bws_giga_bytes_per_second: vec![1000.0, 0.0, 0.0, 10.0, 10.0, 0.0, 0.0],
            ..PerfEnv::default()
        }
    }

    #[allow(deprecated)]
    fn op(flops: f64, bytes: u64, breakdown: Vec<MemoryAccessed>) -> OpMetrics {
        OpMetrics {
            time_ps: 1_000_000,
            flops_v2: flops,
            model_flops_v2: flops,
            bytes_accessed: bytes,
            memory_accessed_breakdown: breakdown,
            ..OpMetrics::default()
        }
    }

    #[test]
    fn compute_hbm_cmem_and_unknown() {
        // 1 us: 90 TFLOP/s of 100 is compute bound; 900 GB/s of 1000 with fewer FLOPs is HBM.
        let r = roofline(&op(90e6, 1000, vec![]), &env(), HardwareType::Tpu);
        assert_eq!(r.bound_by, "Compute");
        let r = roofline(&op(1e6, 900_000, vec![]), &env(), HardwareType::Tpu);
        assert_eq!(r.bound_by, "HBM");
        // 9 KB written to CMEM in 1 us: 9 GB/s of 10.
        let cmem = vec![MemoryAccessed {
            operation_type: WRITE,
            memory_space: CMEM,
            bytes_accessed: 9_000,
        }];
        let r = roofline(&op(1e6, 9_000, cmem.clone()), &env(), HardwareType::Tpu);
        assert_eq!(r.bound_by, "CMEM Write");
        assert_eq!(r.hbm_bw, 0.0);
        // Not on a GPU, which has no CMEM.
        let r = roofline(&op(1e6, 9_000, cmem), &env(), HardwareType::Gpu);
        assert_eq!(r.bound_by, "Compute");
        let r = roofline(&op(0.0, 0, vec![]), &env(), HardwareType::Tpu);
        assert_eq!(r.bound_by, "Unknown");
    }
}

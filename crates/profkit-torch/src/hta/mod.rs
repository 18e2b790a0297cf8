//! HolisticTraceAnalysis's analyses of GPU runs, from the same Kineto traces, as HTA 0.5.0
//! computes them (`TraceAnalysis(trace_dir=...)` and its `get_*` methods): the trace loaded as
//! HTA loads it (`load`), then the breakdowns (`breakdown`: temporal, by kernel type and by
//! kernel; `idle`: idle time by cause), the communication/computation overlap and the kernel
//! launch statistics (`launch`), and the trace counters (`counters`: each stream's queue length
//! and the bandwidth of copies, as time series and summaries). Several ranks' traces are analysed at once, one per file.
//!
//! HTA's own rules, reproduced in `load` and named there: which events are rows, whole
//! microseconds when the trace's times have fractions, times from the earliest row of all
//! ranks, and, when the traces have more than one `ProfilerStep`, only the host rows before
//! the last step's start and the device rows their launches match.

mod breakdown;
mod counters;
mod frame;
mod idle;
mod launch;
mod load;

pub use breakdown::{
    kernel_breakdown, profiler_steps, temporal_breakdown, user_annotation_breakdown,
};
pub use counters::{
    MAX_QUEUE_LENGTH, memory_bw_summary, memory_bw_time_series, queue_length_summary,
    queue_length_time_series, time_blocked_on_full_queue,
};
pub use frame::{Frame, Value};
pub use idle::{CONSECUTIVE_KERNEL_DELAY, idle_time_breakdown};
pub use launch::{comm_comp_overlap, kernel_launch_stats, kernel_launch_stats_with};
pub use load::{HtaTrace, Rank, Row};

/// HTA's kernel types (`KernelType`), from a kernel's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelType {
    /// NCCL's kernels (`^nccl.*Kernel`).
    Communication,
    /// Copies and sets (`^Memcpy`, `^Memset`, `^dma`).
    Memory,
    /// Everything else that is not a copy, set or sync.
    Computation,
    /// Names with `Memcpy`, `Memset` or `Sync` inside.
    Other,
}

impl KernelType {
    /// HTA's `get_kernel_type`.
    pub fn of(name: &str) -> KernelType {
        if name.starts_with("nccl") && name.get(4..).is_some_and(|r| r.contains("Kernel")) {
            KernelType::Communication
        } else if name.starts_with("Memcpy")
            || name.starts_with("Memset")
            || name.starts_with("dma")
        {
            KernelType::Memory
        } else if (name.starts_with("nccl") && name.get(4..).is_some_and(|r| r.contains("Kernel")))
            || name.contains("Memcpy")
            || name.starts_with("Memset")
            || name.contains("Sync")
        {
            // HTA's regex `(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)`, matched at the
            // start: `Memset` only there, `Memcpy` and `Sync` anywhere.
            KernelType::Other
        } else {
            KernelType::Computation
        }
    }

    /// HTA's name for it (`COMPUTATION`, ...).
    pub fn name(self) -> &'static str {
        match self {
            KernelType::Communication => "COMMUNICATION",
            KernelType::Memory => "MEMORY",
            KernelType::Computation => "COMPUTATION",
            KernelType::Other => "OTHER",
        }
    }
}

/// numpy's `round(x, decimals)`: halves to even, on the scaled double.
pub(crate) fn np_round(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round_ties_even() / scale
}

/// Non-overlapping intervals covering `intervals` (HTA's `merge_kernel_intervals`): touching
/// intervals merge.
pub(crate) fn merge_intervals(mut intervals: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    let mut max_end = f64::NEG_INFINITY;
    for (ts, end) in intervals {
        match merged.last_mut() {
            Some(last) if ts <= max_end => last.1 = last.1.max(end),
            _ => merged.push((ts, end)),
        }
        max_end = max_end.max(end);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_types() {
        assert_eq!(
            KernelType::of("ncclKernel_AllReduce"),
            KernelType::Communication
        );
        assert_eq!(
            KernelType::of("Memcpy HtoD (Pageable -> Device)"),
            KernelType::Memory
        );
        assert_eq!(
            KernelType::of("ampere_sgemm_32x32"),
            KernelType::Computation
        );
        assert_eq!(KernelType::of("Event Sync"), KernelType::Other);
        assert_eq!(KernelType::of("xMemcpy"), KernelType::Other);
    }

    #[test]
    fn merging_and_rounding() {
        let merged = merge_intervals(vec![(5.0, 6.0), (0.0, 2.0), (2.0, 3.0), (1.0, 1.5)]);
        assert_eq!(merged, vec![(0.0, 3.0), (5.0, 6.0)]);
        assert_eq!(np_round(0.125, 2), 0.12);
        assert_eq!(np_round(99.7049, 2), 99.7);
    }
}

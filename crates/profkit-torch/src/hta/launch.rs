//! HTA's `get_comm_comp_overlap` (`CommunicationAnalysis`) and `get_cuda_kernel_launch_stats`
//! (`CudaKernelAnalysis`).

use rustc_hash::FxHashSet;

use super::{Frame, HtaTrace, KernelType, Value, merge_intervals, np_round};

/// `get_comm_comp_overlap`: per rank, the share of communication kernels' time during which
/// computation kernels run too (NaN without communication, as HTA).
pub fn comm_comp_overlap(trace: &HtaTrace<'_>) -> Frame {
    let mut frame = Frame::new(&["rank", "comp_comm_overlap_ratio", "comp_comm_overlap_pctg"]);
    for rank in &trace.ranks {
        let merged = |t: KernelType| {
            merge_intervals(
                rank.device_rows()
                    .filter(|r| KernelType::of(rank.name(r)) == t)
                    .map(|r| (r.ts, r.end()))
                    .collect(),
            )
        };
        let comm = merged(KernelType::Communication);
        let comp = merged(KernelType::Computation);
        let mut events: Vec<(f64, i64)> = Vec::new();
        for &(ts, end) in &comm {
            events.extend([(ts, 1), (end, -1)]);
        }
        for &(ts, end) in &comp {
            events.extend([(ts, 2), (end, -2)]);
        }
        events.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut running = 0;
        let mut overlap = 0.0;
        for (i, &(time, status)) in events.iter().enumerate() {
            running += status;
            if running == 3
                && let Some(&(next, _)) = events.get(i + 1)
            {
                overlap += next - time;
            }
        }
        let comm_time: f64 = comm.iter().map(|c| c.1 - c.0).sum();
        let ratio = overlap / comm_time;
        frame.rows.push(vec![
            Value::Int(rank.rank),
            Value::Float(ratio),
            Value::Float(np_round(100.0 * ratio, 2)),
        ]);
    }
    frame
}

/// The runtime calls HTA counts as launches: kernels' launches, then (`include_memory_events`,
/// its default) copies' and sets'.
const LAUNCHES: &[&str] = &[
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "runFunction - job_prep_and_submit_for_execution",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
];

/// How many of [`LAUNCHES`] launch kernels.
const KERNEL_LAUNCHES: usize = 3;

/// `get_cuda_kernel_launch_stats`, for every rank: each launch (its correlation) with the
/// launching call's duration, the kernel's, and the delay from the call's end to the kernel's
/// start (0 when negative).
pub fn kernel_launch_stats(trace: &HtaTrace<'_>) -> Vec<(i64, Frame)> {
    kernel_launch_stats_with(trace, true)
}

/// [`kernel_launch_stats`] with HTA's `include_memory_events` (false: copies' and sets'
/// launches, `cudaMemcpyAsync` and `cudaMemsetAsync`, are left out).
pub fn kernel_launch_stats_with(
    trace: &HtaTrace<'_>,
    include_memory_events: bool,
) -> Vec<(i64, Frame)> {
    let launches_named: &[&str] = if include_memory_events {
        LAUNCHES
    } else {
        &LAUNCHES[..KERNEL_LAUNCHES]
    };
    trace
        .ranks
        .iter()
        .map(|rank| {
            let launches: FxHashSet<i64> = rank
                .rows
                .iter()
                .filter(|r| launches_named.contains(&rank.name(r)))
                .map(|r| r.correlation)
                .collect();
            let mut frame = Frame::new(&[
                "correlation",
                "cpu_duration",
                "gpu_duration",
                "launch_delay",
            ]);
            let device: Vec<_> = rank
                .rows
                .iter()
                .filter(|r| r.stream != -1 && launches.contains(&r.correlation))
                .collect();
            let mut by_correlation: rustc_hash::FxHashMap<i64, Vec<usize>> = Default::default();
            for (i, d) in device.iter().enumerate() {
                by_correlation.entry(d.correlation).or_default().push(i);
            }
            for host in rank
                .rows
                .iter()
                .filter(|r| r.stream == -1 && launches.contains(&r.correlation))
            {
                for &i in by_correlation.get(&host.correlation).into_iter().flatten() {
                    let d = device[i];
                    frame.rows.push(vec![
                        Value::Int(host.correlation),
                        Value::Float(host.dur),
                        Value::Float(d.dur),
                        Value::Float((d.ts - host.ts - host.dur).max(0.0)),
                    ]);
                }
            }
            (rank.rank, frame)
        })
        .collect()
}

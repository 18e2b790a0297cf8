//! `profkit hta ANALYSIS TRACE...`: HolisticTraceAnalysis's analyses of PyTorch profiler traces
//! of GPU runs, one trace per rank, as HTA 0.5.0 computes them (`profkit_torch::hta`).

use std::io::Write;
use std::path::PathBuf;

use profkit_torch::hta::{self, Frame, HtaTrace};

use crate::Failure;
use crate::input::Input;

/// The analyses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Analysis {
    /// `get_temporal_breakdown`: idle, compute and non-compute time per rank.
    TemporalBreakdown,
    /// `get_gpu_kernel_breakdown`: time by kernel type, and per kernel.
    KernelBreakdown,
    /// `get_idle_time_breakdown`: each stream's idle time by cause (host wait, kernel wait, other).
    IdleTimeBreakdown,
    /// `get_comm_comp_overlap`: how much of communication overlaps computation, per rank.
    CommCompOverlap,
    /// `get_cuda_kernel_launch_stats`: each launch's CPU and GPU duration and launch delay.
    KernelLaunchStats,
    /// `get_queue_length_summary`: statistics of each stream's queue length (launched work not
    /// yet started).
    QueueLengthSummary,
    /// `get_queue_length_time_series`: each stream's queue length at each launch and start.
    QueueLengthTimeSeries,
    /// `get_memory_bw_summary`: statistics of the bandwidth of copies and sets, by kind.
    MemoryBwSummary,
    /// `get_memory_bw_time_series`: the bandwidth of copies and sets in use, by kind, at each
    /// start and end.
    MemoryBwTimeSeries,
    /// `get_gpu_user_annotation_breakdown`: the time of each `record_function` range drawn on
    /// the device (with --cpu-annotations, on the host), per rank.
    UserAnnotationBreakdown,
    /// `get_time_spent_blocked_on_full_queue`: the time a stream's queue stood full
    /// (--max-queue-length, 1024 by default), per rank.
    QueueFullTime,
    /// `get_profiler_steps`: the numbers of the profiler steps HTA keeps.
    ProfilerSteps,
}

/// The analyses' options, HTA's arguments of the same meaning.
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct HtaArgs {
    /// kernel-launch-stats: leave out the launches of copies and sets
    /// (`include_memory_events=False`).
    #[arg(long)]
    no_memory_events: bool,
    /// user-annotation-breakdown: the ranges on the host (`use_gpu_annotation=False`).
    #[arg(long)]
    cpu_annotations: bool,
    /// queue-full-time: the queue length counted as full (`max_queue_length`, default 1024).
    #[arg(long, value_name = "N")]
    max_queue_length: Option<i64>,
}

/// Runs `analysis` on the traces (one per rank) and prints its frames.
pub(crate) fn run(
    analysis: Analysis,
    files: &[PathBuf],
    args: &HtaArgs,
    json: bool,
) -> Result<(), Failure> {
    if args.no_memory_events && analysis != Analysis::KernelLaunchStats {
        return Err(Failure::Usage(
            "--no-memory-events is an option of kernel-launch-stats".into(),
        ));
    }
    if args.max_queue_length.is_some() && analysis != Analysis::QueueFullTime {
        return Err(Failure::Usage(
            "--max-queue-length is an option of queue-full-time".into(),
        ));
    }
    if args.cpu_annotations && analysis != Analysis::UserAnnotationBreakdown {
        return Err(Failure::Usage(
            "--cpu-annotations is an option of user-annotation-breakdown".into(),
        ));
    }
    let mut traces = Vec::new();
    for file in files {
        let input = Input::open(file, None)?;
        let name = input.name.clone();
        let trace = profkit_torch::read_trace(input.reader)
            .map_err(|e| Failure::BadInput(format!("{name}: {e}")))?;
        traces.push(trace);
    }
    let trace = HtaTrace::load(&traces);
    let mut frames: Vec<(String, Frame)> = Vec::new();
    let mut notes = Vec::new();
    match analysis {
        Analysis::TemporalBreakdown => {
            let (frame, skipped) = hta::temporal_breakdown(&trace);
            frames.push(("temporal_breakdown".into(), frame));
            for rank in skipped {
                notes.push(format!(
                    "rank {rank} has no GPU activity: no temporal breakdown"
                ));
            }
        }
        Analysis::KernelBreakdown => {
            let (types, kernels) = hta::kernel_breakdown(&trace);
            frames.push(("kernel_type".into(), types));
            frames.push(("kernels".into(), kernels));
        }
        Analysis::IdleTimeBreakdown => {
            frames.push((
                "idle_time_breakdown".into(),
                hta::idle_time_breakdown(&trace, hta::CONSECUTIVE_KERNEL_DELAY),
            ));
        }
        Analysis::CommCompOverlap => {
            frames.push(("comm_comp_overlap".into(), hta::comm_comp_overlap(&trace)));
        }
        Analysis::KernelLaunchStats => {
            for (rank, frame) in hta::kernel_launch_stats_with(&trace, !args.no_memory_events) {
                frames.push((format!("rank {rank}"), frame));
            }
        }
        Analysis::QueueLengthSummary => {
            let (frame, failed) = hta::queue_length_summary(&trace);
            frames.push(("queue_length_summary".into(), frame));
            notes.extend(failed);
        }
        Analysis::QueueLengthTimeSeries => {
            let (series, failed) = hta::queue_length_time_series(&trace);
            for (rank, frame) in series {
                frames.push((format!("rank {rank}"), frame));
            }
            notes.extend(failed);
        }
        Analysis::MemoryBwSummary => {
            frames.push(("memory_bw_summary".into(), hta::memory_bw_summary(&trace)));
        }
        Analysis::ProfilerSteps => {
            frames.push(("profiler_steps".into(), hta::profiler_steps(&trace)));
        }
        Analysis::QueueFullTime => {
            let (frame, failed) = hta::time_blocked_on_full_queue(
                &trace,
                args.max_queue_length.unwrap_or(hta::MAX_QUEUE_LENGTH),
            );
            frames.push(("time_blocked_on_full_queue".into(), frame));
            notes.extend(failed);
        }
        Analysis::UserAnnotationBreakdown => {
            match hta::user_annotation_breakdown(&trace, !args.cpu_annotations) {
                Some(frame) => frames.push(("user_annotation_breakdown".into(), frame)),
                None => notes.push(format!(
                    "no trace has {} events: no breakdown (HTA returns None)",
                    if args.cpu_annotations {
                        "user_annotation"
                    } else {
                        "gpu_user_annotation"
                    }
                )),
            }
        }
        Analysis::MemoryBwTimeSeries => {
            for (rank, frame) in hta::memory_bw_time_series(&trace) {
                frames.push((format!("rank {rank}"), frame));
            }
        }
    }
    if json {
        let doc = serde_json::json!({
            "analysis": format!("{analysis:?}"),
            "ranks": trace.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(),
            "frames": frames
                .iter()
                .map(|(name, f)| (name.clone(), f.records()))
                .collect::<serde_json::Map<_, _>>(),
            "notes": notes,
        });
        return crate::session::json(&doc);
    }
    let mut out = crate::session::stdout();
    for (i, (name, frame)) in frames.iter().enumerate() {
        if i > 0 {
            writeln!(out).map_err(Failure::Output)?;
        }
        if frames.len() > 1 {
            writeln!(out, "{name}:").map_err(Failure::Output)?;
        }
        out.write_all(frame.text().as_bytes())
            .map_err(Failure::Output)?;
    }
    for note in notes {
        writeln!(out, "Note: {note}").map_err(Failure::Output)?;
    }
    Ok(())
}

//! HTA's `get_idle_time_breakdown` (`BreakdownAnalysis`): the gaps between consecutive kernels
//! of each stream, by cause.

use rustc_hash::FxHashMap;

use super::{Frame, HtaTrace, Value, np_round};
use crate::trace::Category;

/// HTA's default `consecutive_kernel_delay`: a gap shorter than this (microseconds) after a
/// kernel whose successor was launched in time is the launch's own delay.
pub const CONSECUTIVE_KERNEL_DELAY: f64 = 30.0;

const CATEGORIES: [&str; 3] = ["host_wait", "kernel_wait", "other"];

/// `get_idle_time_breakdown`, for every rank: per stream (in the order HTA meets them), the
/// gaps between a kernel (or copy, or set) and the one before it on the stream, summed by
/// cause: `host_wait` when the next one was launched only after the stream went idle,
/// `kernel_wait` for a shorter gap than `consecutive_kernel_delay`, `other` else; with their
/// shares of the stream's idle time, both rounded to two decimals.
pub fn idle_time_breakdown(trace: &HtaTrace<'_>, consecutive_kernel_delay: f64) -> Frame {
    let mut frame = Frame::new(&[
        "rank",
        "stream",
        "idle_category",
        "idle_time",
        "idle_time_ratio",
    ]);
    for rank in &trace.ranks {
        // HTA joins each kernel with the row of its launch (by `index_correlation`) for the
        // launch's start.
        let mut ts_by_index: FxHashMap<i64, Vec<f64>> = FxHashMap::default();
        for r in &rank.rows {
            ts_by_index
                .entry(i64::from(r.index))
                .or_default()
                .push(r.ts);
        }
        let mut kernels: Vec<(i64, f64, f64, f64)> = Vec::new(); // stream, ts, end, launch ts
        for r in rank.rows.iter().filter(|r| {
            r.stream != -1
                && matches!(
                    r.cat,
                    Category::Kernel | Category::Memcpy | Category::Memset
                )
        }) {
            match ts_by_index.get(&r.index_correlation) {
                Some(launches) => {
                    for &launch in launches {
                        kernels.push((r.stream, r.ts, r.end(), launch));
                    }
                }
                None => kernels.push((r.stream, r.ts, r.end(), f64::NAN)),
            }
        }
        let mut streams: Vec<i64> = Vec::new();
        for k in &kernels {
            if !streams.contains(&k.0) {
                streams.push(k.0);
            }
        }
        for stream in streams {
            let mut on: Vec<&(i64, f64, f64, f64)> =
                kernels.iter().filter(|k| k.0 == stream).collect();
            on.sort_by(|a, b| a.1.total_cmp(&b.1));
            let mut sums: [Option<f64>; 3] = [None; 3];
            let mut prev_end = f64::NAN;
            for k in on {
                let idle = k.1 - prev_end;
                let category = if k.3 > prev_end {
                    0
                } else if idle < consecutive_kernel_delay {
                    1
                } else {
                    2
                };
                // pandas' sum skips NaN (the first kernel's gap).
                let sum = sums[category].get_or_insert(0.0);
                if !idle.is_nan() {
                    *sum += idle;
                }
                prev_end = k.2;
            }
            let total: f64 = sums.iter().flatten().sum();
            for (i, sum) in sums.iter().enumerate() {
                if let Some(sum) = sum {
                    frame.rows.push(vec![
                        Value::Int(rank.rank),
                        Value::Int(stream),
                        Value::Str(CATEGORIES[i].to_owned()),
                        Value::Float(np_round(*sum, 2)),
                        Value::Float(np_round(sum / total, 2)),
                    ]);
                }
            }
        }
    }
    frame
}

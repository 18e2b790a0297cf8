//! HTA's `get_temporal_breakdown`, `get_gpu_kernel_breakdown` and
//! `get_gpu_user_annotation_breakdown` (`BreakdownAnalysis`).

use rustc_hash::FxHashMap;

use super::{Frame, HtaTrace, KernelType, Value, merge_intervals, np_round};
use crate::trace::Category;

fn span(merged: &[(f64, f64)]) -> f64 {
    merged.iter().map(|m| m.1).sum::<f64>() - merged.iter().map(|m| m.0).sum::<f64>()
}

/// `get_temporal_breakdown`: per rank, the time from the first device row's start to the last
/// one's end (`kernel_time`), the part no device row covers (idle), the part computation
/// kernels cover, and the rest; shares rounded to two decimals. Ranks without device rows,
/// where HTA fails, are left out and named in the second value.
pub fn temporal_breakdown(trace: &HtaTrace<'_>) -> (Frame, Vec<i64>) {
    let mut frame = Frame::new(&[
        "rank",
        "idle_time(us)",
        "compute_time(us)",
        "non_compute_time(us)",
        "kernel_time(us)",
        "idle_time_pctg",
        "compute_time_pctg",
        "non_compute_time_pctg",
    ]);
    let mut skipped = Vec::new();
    for rank in &trace.ranks {
        let all: Vec<(f64, f64)> = rank.device_rows().map(|r| (r.ts, r.end())).collect();
        let merged = merge_intervals(all);
        let (Some(first), Some(last)) = (merged.first(), merged.last()) else {
            skipped.push(rank.rank);
            continue;
        };
        let kernel_time = last.1 - first.0;
        let idle = kernel_time - span(&merged);
        let compute = span(&merge_intervals(
            rank.device_rows()
                .filter(|r| KernelType::of(rank.name(r)) == KernelType::Computation)
                .map(|r| (r.ts, r.end()))
                .collect(),
        ));
        let non_compute = kernel_time - compute - idle;
        frame.rows.push(vec![
            Value::Int(rank.rank),
            Value::Float(idle),
            Value::Float(compute),
            Value::Float(non_compute),
            Value::Float(kernel_time),
            Value::Float(np_round(100.0 * (idle / kernel_time), 2)),
            Value::Float(np_round(100.0 * (compute / kernel_time), 2)),
            Value::Float(np_round(100.0 * (non_compute / kernel_time), 2)),
        ]);
    }
    (frame, skipped)
}

const TYPES: [KernelType; 3] = [
    KernelType::Computation,
    KernelType::Communication,
    KernelType::Memory,
];

/// `_get_gpu_kernel_type_time` for one rank: the time covered by each kernel type alone and by
/// each combination (`COMPUTATION overlapping COMMUNICATION`, ...).
fn type_time(rank: &super::Rank<'_>) -> Vec<(String, f64)> {
    let mut events: Vec<(f64, i64)> = Vec::new();
    for (i, t) in TYPES.iter().enumerate() {
        let bit = 1i64 << i;
        let merged = merge_intervals(
            rank.device_rows()
                .filter(|r| KernelType::of(rank.name(r)) == *t)
                .map(|r| (r.ts, r.end()))
                .collect(),
        );
        for (ts, end) in merged {
            events.push((ts, bit));
            events.push((end, -bit));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let label = |running: i64| {
        TYPES
            .iter()
            .enumerate()
            .filter(|(i, _)| running & (1 << i) != 0)
            .map(|(_, t)| t.name())
            .collect::<Vec<_>>()
            .join(" overlapping ")
    };
    let mut sums: Vec<(String, f64)> = Vec::new();
    let mut running = 0;
    for (i, &(time, status)) in events.iter().enumerate() {
        running += status;
        let Some(&(next, _)) = events.get(i + 1) else {
            break;
        };
        // Zero-length stretches (ties) are left out: HTA's unstable sort may or may not give
        // them a row of 0.
        if running > 0 && next > time {
            let name = label(running);
            // HTA truncates each stretch to an integer.
            let dur = (next - time).trunc();
            match sums.iter_mut().find(|(n, _)| *n == name) {
                Some(s) => s.1 += dur,
                None => sums.push((name, dur)),
            }
        }
    }
    sums
}

/// `get_gpu_kernel_breakdown` (memory kernels included, HTA's default: 10 kernels a type, the
/// rest past 80% of the time as `others`): the time by kernel type over all ranks, and per rank
/// and type the kernels' sum, max, min, standard deviation and mean.
pub fn kernel_breakdown(trace: &HtaTrace<'_>) -> (Frame, Frame) {
    let mut by_type: Vec<(String, f64)> = Vec::new();
    let mut kernels = Frame::new(&[
        "name",
        "sum (us)",
        "max (us)",
        "min (us)",
        "stddev",
        "mean (us)",
        "kernel_type",
        "rank",
    ]);
    let mut rows: Vec<(String, String, i64, [f64; 5])> = Vec::new();
    for rank in &trace.ranks {
        for (name, dur) in type_time(rank) {
            match by_type.iter_mut().find(|(n, _)| *n == name) {
                Some(s) => s.1 += dur,
                None => by_type.push((name, dur)),
            }
        }
        for t in TYPES {
            let mut per_name: FxHashMap<&str, Vec<f64>> = FxHashMap::default();
            for r in rank.device_rows() {
                let name = rank.name(r);
                if KernelType::of(name) == t {
                    per_name.entry(name).or_default().push(r.dur);
                }
            }
            for (name, stats) in aggregate(per_name, 10, 0.8) {
                rows.push((name, t.name().to_owned(), rank.rank, stats));
            }
        }
    }
    // Sorted by type, name and rank, as HTA sorts them (strings by code point).
    rows.sort_by(|a, b| (&a.1, &a.0, a.2).cmp(&(&b.1, &b.0, b.2)));
    for (name, t, rank, [sum, max, min, std, mean]) in rows {
        kernels.rows.push(vec![
            Value::Str(name),
            Value::Float(sum),
            Value::Float(max),
            Value::Float(min),
            Value::Float(std),
            Value::Float(mean),
            Value::Str(t),
            Value::Int(rank),
        ]);
    }
    by_type.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = by_type.iter().map(|t| t.1).sum();
    let mut types = Frame::new(&["kernel_type", "sum", "percentage"]);
    for (name, sum) in by_type {
        types.rows.push(vec![
            Value::Str(name),
            Value::Float(sum),
            Value::Float(np_round(sum / total * 100.0, 1)),
        ]);
    }
    (types, kernels)
}

/// pandas' sum, max, min, std (ddof 1, 0 for one value) and mean of a group.
fn stats(values: &[f64]) -> [f64; 5] {
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = sum / n;
    let std = if values.len() > 1 {
        (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    [sum, max, min, std, mean]
}

/// numpy's linear quantile of sorted values.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() as f64 - 1.0);
    let lo = pos.floor() as usize;
    let t = pos - pos.floor();
    let a = sorted.get(lo).copied().unwrap_or(f64::NAN);
    let b = sorted.get(lo + 1).copied().unwrap_or(a);
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// `_aggr_gpu_kernel_time`: each name's statistics, sorted by sum (largest first); past
/// `num_kernels` names, those past `ratio` of the cumulated time or after the first
/// `num_kernels` become `others`, whose statistics are those of the names' sums.
fn aggregate(
    per_name: FxHashMap<&str, Vec<f64>>,
    num_kernels: usize,
    ratio: f64,
) -> Vec<(String, [f64; 5])> {
    let mut named: Vec<(String, [f64; 5])> = per_name
        .into_iter()
        .map(|(name, durs)| (name.to_owned(), stats(&durs)))
        .collect();
    // By sum, largest first; equal sums by name, for a stable answer (HTA's sort is not).
    named.sort_by(|a, b| b.1[0].total_cmp(&a.1[0]).then_with(|| a.0.cmp(&b.0)));
    if named.len() <= num_kernels {
        return named;
    }
    let mut cumsum = Vec::with_capacity(named.len());
    let mut acc = 0.0;
    for n in &named {
        acc += n.1[0];
        cumsum.push(acc);
    }
    let mut sorted = cumsum.clone();
    sorted.sort_by(f64::total_cmp);
    let q = quantile(&sorted, ratio);
    let mut groups: Vec<(String, Vec<f64>)> = Vec::new();
    for (i, (name, s)) in named.into_iter().enumerate() {
        let name = if cumsum[i] > q || i >= num_kernels {
            "others".to_owned()
        } else {
            name
        };
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some(g) => g.1.push(s[0]),
            None => groups.push((name, vec![s[0]])),
        }
    }
    groups
        .into_iter()
        .map(|(n, sums)| (n, stats(&sums)))
        .collect()
}

/// `get_gpu_user_annotation_breakdown` (HTA's defaults: 1000 annotations a rank, the rest past
/// 80% of the time as `others`): per rank, each `record_function` range's statistics, the ranges
/// drawn on the device (`gpu_user_annotation`) or, with `use_gpu_annotation` false, those on the
/// host (`user_annotation`); sorted by rank and name. `None` when no trace has that category, as
/// HTA returns none.
pub fn user_annotation_breakdown(trace: &HtaTrace<'_>, use_gpu_annotation: bool) -> Option<Frame> {
    let cat = if use_gpu_annotation {
        Category::GpuUserAnnotation
    } else {
        Category::UserAnnotation
    };
    // HTA looks the category up among the names and categories it read from the files.
    let present = trace.ranks.iter().any(|r| {
        r.trace
            .events
            .iter()
            .any(|e| e.cat == cat && e.has_cat_and_dur)
    });
    if !present {
        return None;
    }
    let mut rows: Vec<(i64, String, [f64; 5])> = Vec::new();
    for rank in &trace.ranks {
        let mut per_name: FxHashMap<&str, Vec<f64>> = FxHashMap::default();
        for r in rank.rows.iter().filter(|r| r.cat == cat) {
            per_name.entry(rank.name(r)).or_default().push(r.dur);
        }
        for (name, stats) in aggregate(per_name, 1000, 0.8) {
            rows.push((rank.rank, name, stats));
        }
    }
    rows.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut frame = Frame::new(&[
        "name",
        "sum (us)",
        "max (us)",
        "min (us)",
        "stddev",
        "mean (us)",
        "rank",
    ]);
    for (rank, name, [sum, max, min, std, mean]) in rows {
        frame.rows.push(vec![
            Value::Str(name),
            Value::Float(sum),
            Value::Float(max),
            Value::Float(min),
            Value::Float(std),
            Value::Float(mean),
            Value::Int(rank),
        ]);
    }
    Some(frame)
}

/// `get_profiler_steps`: the numbers of the `ProfilerStep#N` rows of every rank as loaded (so,
/// with several steps, without the last one, whose host rows HTA leaves out), sorted, once each.
pub fn profiler_steps(trace: &HtaTrace<'_>) -> Frame {
    let mut steps: Vec<i64> = trace
        .ranks
        .iter()
        .flat_map(|rank| rank.rows.iter().map(move |r| rank.name(r)))
        .filter_map(step_number)
        .collect();
    steps.sort_unstable();
    steps.dedup();
    let mut frame = Frame::new(&["step"]);
    frame.rows = steps.into_iter().map(|s| vec![Value::Int(s)]).collect();
    frame
}

/// HTA's `ProfilerStep\s*#\s*(\d+)`, matched at the name's start.
fn step_number(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("ProfilerStep")?.trim_start();
    let rest = rest.strip_prefix('#')?.trim_start();
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::step_number;

    #[test]
    fn step_numbers() {
        assert_eq!(step_number("ProfilerStep#12"), Some(12));
        assert_eq!(step_number("ProfilerStep # 3x"), Some(3));
        assert_eq!(step_number("ProfilerStep#"), None);
        assert_eq!(step_number("xProfilerStep#1"), None);
    }
}

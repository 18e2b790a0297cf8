//! HTA's trace counters (`TraceCounters`): the queue length of each stream (how many launched
//! kernels, copies and sets wait or run on it) and the bandwidth of copies and sets, as time
//! series, and their summaries (`get_queue_length_*`, `get_memory_bw_*`).
//!
//! Both series are running sums over a rank's rows sorted by time: HTA sorts them with pandas'
//! default sort, which does not keep the order of rows with the same time; here they keep their
//! order (launches before kernels, starts before ends). The summaries are pandas' `describe()`
//! of each series' values: count, mean, standard deviation (n - 1), minimum, the quartiles
//! (linear interpolation, as numpy's) and maximum.

use rustc_hash::FxHashMap;

use super::load::{Rank, Row};
use super::{Frame, HtaTrace, KernelType, Value};

/// The runtime calls HTA takes for launches in its counters
/// (`get_runtime_launch_events_query`), when linked to a row of the trace.
const RUNTIME_LAUNCHES: &[&str] = &[
    "cudaMemsetAsync",
    "cudaMemcpyAsync",
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemcpyAsync",
    "hipMemsetAsync",
    "hipMemcpyWithStream",
];

/// One point of a rank's queue length series.
struct QueuePoint {
    index: u32,
    ts: f64,
    pid: i64,
    tid: i64,
    stream: i64,
    queue_length: i64,
}

/// A rank's queue length series, streams in order, or why there is none: `Err` when launches
/// and device rows do not pair up (HTA's assertion fails), or pair up in far more ways than the
/// rank has rows.
fn queue_series(rank: &Rank<'_>) -> Result<Vec<QueuePoint>, String> {
    let device: Vec<&Row> = rank.device_rows().collect();
    let mut by_correlation: FxHashMap<i64, Vec<&Row>> = FxHashMap::default();
    for d in &device {
        by_correlation.entry(d.correlation).or_default().push(d);
    }
    let launches: Vec<&Row> = rank
        .rows
        .iter()
        .filter(|r| RUNTIME_LAUNCHES.contains(&rank.name(r)) && r.index_correlation > 0)
        .collect();
    // A launch gets a point for each device row of its correlation, as HTA's join does: a
    // hostile trace of many launches and kernels sharing one correlation would make that
    // quadratic, so past a bound proportional to the rows the rank is given up with a note.
    let pairs: usize = launches
        .iter()
        .map(|l| by_correlation.get(&l.correlation).map_or(1, Vec::len))
        .fold(0usize, usize::saturating_add);
    let bound = rank.rows.len().saturating_mul(8).saturating_add(1 << 20);
    if pairs > bound {
        return Err(format!(
            "rank {}: {pairs} launch and device row pairs share correlations (more than {bound}): no queue length",
            rank.rank
        ));
    }
    // (ts, +1 or -1, the row's index, pid, tid, stream); a launch takes its kernel's place.
    let mut points: Vec<(f64, i64, u32, i64, i64, Option<i64>)> = Vec::new();
    let mut launched = rustc_hash::FxHashSet::default();
    for l in &launches {
        launched.insert(l.correlation);
        match by_correlation.get(&l.correlation) {
            Some(kernels) => {
                for k in kernels {
                    points.push((l.ts, 1, l.index, k.pid, k.tid, Some(k.stream)));
                }
            }
            None => points.push((l.ts, 1, l.index, 0, 0, None)),
        }
    }
    let joined = points.len();
    let mut kernels = 0;
    for d in device.iter().filter(|d| launched.contains(&d.correlation)) {
        points.push((d.ts, -1, d.index, d.pid, d.tid, Some(d.stream)));
        kernels += 1;
    }
    if joined != kernels {
        return Err(format!(
            "rank {}: {joined} launches paired with device rows but {kernels} device rows launched (HTA's assertion fails)",
            rank.rank
        ));
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut streams: Vec<i64> = points.iter().filter_map(|p| p.5).collect();
    streams.sort_unstable();
    streams.dedup();
    let mut series = Vec::with_capacity(points.len());
    for stream in streams {
        let mut length = 0i64;
        for p in points.iter().filter(|p| p.5 == Some(stream)) {
            length += p.1;
            series.push(QueuePoint {
                index: p.2,
                ts: p.0,
                pid: p.3,
                tid: p.4,
                stream,
                queue_length: length,
            });
        }
    }
    Ok(series)
}

/// `get_queue_length_time_series` for every rank: each launch (+1, at the launch's start, on
/// its kernel's stream) and each launched kernel, copy or set (-1, at its start), with the
/// stream's queue length after it; and a note for each rank HTA fails on.
pub fn queue_length_time_series(trace: &HtaTrace<'_>) -> (Vec<(i64, Frame)>, Vec<String>) {
    let mut frames = Vec::new();
    let mut notes = Vec::new();
    for rank in &trace.ranks {
        match queue_series(rank) {
            Ok(series) if series.is_empty() => {}
            Ok(series) => {
                let mut frame =
                    Frame::new(&["index", "ts", "pid", "tid", "stream", "queue_length"]);
                frame.rows = series
                    .iter()
                    .map(|p| {
                        vec![
                            Value::Int(i64::from(p.index)),
                            Value::Float(p.ts),
                            Value::Int(p.pid),
                            Value::Int(p.tid),
                            Value::Int(p.stream),
                            Value::Int(p.queue_length),
                        ]
                    })
                    .collect();
                frames.push((rank.rank, frame));
            }
            Err(note) => notes.push(note),
        }
    }
    (frames, notes)
}

/// HTA's `CUDA_MAX_LAUNCH_QUEUE_PER_STREAM`: how many launches a stream's queue holds.
pub const MAX_QUEUE_LENGTH: i64 = 1024;

/// `get_time_spent_blocked_on_full_queue(get_queue_length_time_series(), max_queue_length)`:
/// per rank, the time its streams' queue length stood at `max_queue_length` or more (each point's
/// time to the stream's next point), and that time over the rank's span (its rows' last start
/// less its first). As HTA, a rank keeps one row, that of its last stream (in stream order)
/// with such time.
pub fn time_blocked_on_full_queue(
    trace: &HtaTrace<'_>,
    max_queue_length: i64,
) -> (Frame, Vec<String>) {
    let mut frame = Frame::new(&[
        "rank",
        "stream",
        "duration_at_max_queue_length",
        "relative_duration_at_max_queue_length",
    ]);
    let mut notes = Vec::new();
    for rank in &trace.ranks {
        let series = match queue_series(rank) {
            Ok(series) => series,
            Err(note) => {
                notes.push(note);
                continue;
            }
        };
        let (first, last) = rank
            .rows
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(r.ts), hi.max(r.ts))
            });
        let span = last - first;
        let mut kept = None;
        let mut start = 0;
        while start < series.len() {
            let stream = series[start].stream;
            let end = start + series[start..].partition_point(|p| p.stream == stream);
            let points = &series[start..end];
            let mut full = false;
            let mut time = 0.0;
            for (i, p) in points.iter().enumerate() {
                if p.queue_length >= max_queue_length {
                    full = true;
                    // The last point has no next one: pandas' NaN, which its sum skips.
                    if let Some(next) = points.get(i + 1) {
                        time += next.ts - p.ts;
                    }
                }
            }
            if full {
                kept = Some((stream, time));
            }
            start = end;
        }
        if let Some((stream, time)) = kept {
            frame.rows.push(vec![
                Value::Int(rank.rank),
                Value::Int(stream),
                Value::Float(time),
                Value::Float(time / span),
            ]);
        }
    }
    (frame, notes)
}

const SUMMARY: [&str; 8] = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"];

/// `get_queue_length_summary` for every rank: the queue length's statistics per rank and stream.
pub fn queue_length_summary(trace: &HtaTrace<'_>) -> (Frame, Vec<String>) {
    let mut columns = vec!["rank", "stream"];
    columns.extend(SUMMARY);
    let mut frame = Frame::new(&columns);
    let mut notes = Vec::new();
    for rank in &trace.ranks {
        let series = match queue_series(rank) {
            Ok(series) => series,
            Err(note) => {
                notes.push(note);
                continue;
            }
        };
        let mut start = 0;
        while start < series.len() {
            let stream = series[start].stream;
            let end = start + series[start..].partition_point(|p| p.stream == stream);
            let values: Vec<f64> = series[start..end]
                .iter()
                .map(|p| p.queue_length as f64)
                .collect();
            let mut row = vec![Value::Int(rank.rank), Value::Int(stream)];
            row.extend(describe(values).map(Value::Float));
            frame.rows.push(row);
            start = end;
        }
    }
    (frame, notes)
}

/// HTA's name for a copy or set (`get_memory_kernel_type`): `Memset`, the first 11 characters
/// of a copy's name (`Memcpy HtoD`), or `Memcpy Unknown`.
fn memory_kind(name: &str) -> String {
    if name.starts_with("Memset") {
        "Memset".to_owned()
    } else if !name.starts_with("Memcpy") {
        "Memcpy Unknown".to_owned()
    } else {
        name.chars().take(11).collect()
    }
}

/// A rank's bandwidth series: per kind of copy (in name order), the running sum of the
/// bandwidth of the copies under way, at each start (+) and end (-); (ts, pid, kind, GB/s).
fn bandwidth_series(rank: &Rank<'_>) -> Vec<(f64, i64, String, f64)> {
    let copies: Vec<(&Row, String)> = rank
        .device_rows()
        .filter(|r| KernelType::of(rank.name(r)) == KernelType::Memory)
        .map(|r| (r, memory_kind(rank.name(r))))
        .collect();
    let mut points: Vec<(f64, i64, &str, f64)> = Vec::with_capacity(2 * copies.len());
    for (r, kind) in &copies {
        points.push((r.ts, r.pid, kind, r.memory_bw_gbps));
    }
    for (r, kind) in &copies {
        // HTA counts a copy of 0 us as 1 us long.
        let dur = if r.dur == 0.0 { 1.0 } else { r.dur };
        points.push((r.ts + dur, r.pid, kind, -r.memory_bw_gbps));
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut kinds: Vec<&str> = copies.iter().map(|(_, k)| k.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let mut series = Vec::with_capacity(points.len());
    for kind in kinds {
        let mut bw = 0.0;
        for p in points.iter().filter(|p| p.2 == kind) {
            bw += p.3;
            series.push((p.0, p.1, kind.to_owned(), bw));
        }
    }
    series
}

/// `get_memory_bw_time_series` for every rank with copies or sets: per kind (`Memcpy HtoD`,
/// `Memcpy DtoH`, `Memcpy DtoD`, `Memset`, ...), the bandwidth in use after each start and end.
pub fn memory_bw_time_series(trace: &HtaTrace<'_>) -> Vec<(i64, Frame)> {
    trace
        .ranks
        .iter()
        .filter_map(|rank| {
            let series = bandwidth_series(rank);
            if series.is_empty() {
                return None;
            }
            let mut frame = Frame::new(&["ts", "pid", "name", "memory_bw_gbps"]);
            frame.rows = series
                .into_iter()
                .map(|(ts, pid, name, bw)| {
                    vec![
                        Value::Float(ts),
                        Value::Int(pid),
                        Value::Str(name),
                        Value::Float(bw),
                    ]
                })
                .collect();
            Some((rank.rank, frame))
        })
        .collect()
}

/// `get_memory_bw_summary` for every rank: the statistics of each kind's bandwidth series, its
/// points of no bandwidth left out.
pub fn memory_bw_summary(trace: &HtaTrace<'_>) -> Frame {
    let mut columns = vec!["rank", "name"];
    columns.extend(SUMMARY);
    let mut frame = Frame::new(&columns);
    for rank in &trace.ranks {
        let series = bandwidth_series(rank);
        let mut start = 0;
        while start < series.len() {
            let kind = &series[start].2;
            let end = start + series[start..].partition_point(|p| &p.2 == kind);
            let values: Vec<f64> = series[start..end]
                .iter()
                .map(|p| p.3)
                .filter(|&bw| bw > 0.0)
                .collect();
            if !values.is_empty() {
                let mut row = vec![Value::Int(rank.rank), Value::Str(kind.clone())];
                row.extend(describe(values).map(Value::Float));
                frame.rows.push(row);
            }
            start = end;
        }
    }
    frame
}

/// pandas' `describe()` of a column: count, mean, std (n - 1; NaN for one value), min, the
/// quartiles and max.
fn describe(mut values: Vec<f64>) -> [f64; 8] {
    let n = values.len() as f64;
    let mean = pairwise_sum(&values) / n;
    let squares: Vec<f64> = values.iter().map(|v| (mean - v) * (mean - v)).collect();
    let std = if values.len() > 1 {
        (pairwise_sum(&squares) / (n - 1.0)).sqrt()
    } else {
        f64::NAN
    };
    values.sort_by(f64::total_cmp);
    [
        n,
        mean,
        std,
        values.first().copied().unwrap_or(f64::NAN),
        quantile(&values, 0.25),
        quantile(&values, 0.5),
        quantile(&values, 0.75),
        values.last().copied().unwrap_or(f64::NAN),
    ]
}

/// numpy's sum of doubles: pairwise, eight at a time in blocks of up to 128.
fn pairwise_sum(a: &[f64]) -> f64 {
    if a.len() < 8 {
        a.iter().fold(-0.0, |s, v| s + v)
    } else if a.len() <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let whole = a.len() - a.len() % 8;
        for chunk in a[8..whole].chunks_exact(8) {
            for (acc, v) in r.iter_mut().zip(chunk) {
                *acc += v;
            }
        }
        let mut s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for v in &a[whole..] {
            s += v;
        }
        s
    } else {
        let mut half = a.len() / 2;
        half -= half % 8;
        pairwise_sum(&a[..half]) + pairwise_sum(&a[half..])
    }
}

/// numpy's `quantile(sorted, q)`, linear method.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let virtual_index = (n as f64 * q + (1.0 - q)) - 1.0;
    let below = virtual_index.floor().clamp(0.0, (n - 1) as f64);
    let above = (below + 1.0).min((n - 1) as f64);
    let t = virtual_index - below;
    let (a, b) = (sorted[below as usize], sorted[above as usize]);
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_as_pandas() {
        let d = describe(vec![0.0, 1.0, 1.0, 5.0]);
        assert_eq!(&d[..2], &[4.0, 1.75]);
        assert!((d[2] - 2.217355782608345).abs() < 1e-15);
        assert_eq!(&d[3..], &[0.0, 0.75, 1.0, 2.0, 5.0]);
        assert!(describe(vec![3.0])[2].is_nan());
        let many: Vec<f64> = (0..300).map(|i| f64::from(i) * 0.1).collect();
        assert!((pairwise_sum(&many) - 4485.0).abs() < 1e-9);
    }

    #[test]
    fn memory_kinds() {
        assert_eq!(
            memory_kind("Memcpy HtoD (Pageable -> Device)"),
            "Memcpy HtoD"
        );
        assert_eq!(memory_kind("Memset (Device)"), "Memset");
        assert_eq!(memory_kind("dma copy"), "Memcpy Unknown");
    }
}

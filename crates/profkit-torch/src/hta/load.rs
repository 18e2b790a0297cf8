//! A trace loaded as HolisticTraceAnalysis loads it (`TraceAnalysis.__init__`, `parse_trace_file`,
//! `align_and_filter_trace`):
//!
//! - every event with a `dur` and a `cat` is a row, except Kineto's span of the whole trace
//!   (`cat` `Trace`); a row's stream is its `args.stream` (-1 without one) and its correlation
//!   `args.correlation` (-1 without one);
//! - when pandas reads the trace's `ts` as doubles (a time written with a fraction, or an event
//!   without `ts`), each row starts at its start rounded up to a whole microsecond and ends at its
//!   end rounded down (`round_down_time_stamps`);
//! - times count from the earliest row of all ranks;
//! - when the ranks' names hold more than one `ProfilerStep`, each rank keeps its host rows that
//!   start before its last step does, and the device rows (stream and correlation not negative,
//!   or `Event Sync` / `Context Sync`) once for each kept host row with their correlation.
//!
//! A rank is `distributedInfo.rank`, or 0.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::trace::{Category, Trace};

/// One row of HTA's dataframe of a rank, times in microseconds as HTA holds them.
#[derive(Clone, Debug)]
pub struct Row {
    /// The name, an index into the rank's trace's strings.
    pub name: u32,
    /// The start.
    pub ts: f64,
    /// The duration.
    pub dur: f64,
    /// `args.stream`, -1 without one.
    pub stream: i64,
    /// `args.correlation`, -1 without one.
    pub correlation: i64,
    /// The category.
    pub cat: Category,
    /// The position in `traceEvents` (HTA's `index`).
    pub index: u32,
    /// HTA's `index_correlation`: the `index` of the row its correlation links it to (a launch
    /// to its kernel and back), 0 when that row is not in the trace, -1 without a correlation.
    pub index_correlation: i64,
    /// `args.pid` (a string pid as the trace reader numbers it).
    pub pid: i64,
    /// `args.tid` (likewise).
    pub tid: i64,
    /// `args."memory bandwidth (GB/s)"`, 0 without one (HTA's `memory_bw_gbps`).
    pub memory_bw_gbps: f64,
}

impl Row {
    /// The end.
    pub fn end(&self) -> f64 {
        self.ts + self.dur
    }
}

/// One rank's rows.
#[derive(Clone, Debug)]
pub struct Rank<'t> {
    /// The rank.
    pub rank: i64,
    /// Its trace (for names).
    pub trace: &'t Trace,
    /// Its rows, in HTA's order.
    pub rows: Vec<Row>,
}

impl Rank<'_> {
    /// A row's name.
    pub fn name(&self, row: &Row) -> &str {
        self.trace.str(row.name)
    }

    /// HTA's "GPU kernels" of most analyses: the rows with a stream.
    pub fn device_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.stream != -1)
    }
}

/// Several ranks' traces loaded as HTA loads them, ranks in order.
#[derive(Clone, Debug)]
pub struct HtaTrace<'t> {
    /// The ranks.
    pub ranks: Vec<Rank<'t>>,
}

impl<'t> HtaTrace<'t> {
    /// Loads `traces` (one per rank) as HTA does. A rank given twice keeps the last trace, as
    /// HTA does.
    pub fn load(traces: &'t [Trace]) -> HtaTrace<'t> {
        let mut by_rank: FxHashMap<i64, usize> = FxHashMap::default();
        for (i, t) in traces.iter().enumerate() {
            by_rank.insert(t.meta.rank.unwrap_or(0), i);
        }
        let mut ranks: Vec<Rank<'t>> = by_rank
            .into_iter()
            .map(|(rank, i)| {
                let trace = &traces[i];
                Rank {
                    rank,
                    trace,
                    rows: rows(trace),
                }
            })
            .collect();
        ranks.sort_by_key(|r| r.rank);
        // Times from the earliest row of all ranks.
        let min = ranks
            .iter()
            .flat_map(|r| r.rows.iter().map(|row| row.ts))
            .fold(f64::INFINITY, f64::min);
        if min.is_finite() {
            for rank in &mut ranks {
                for row in &mut rank.rows {
                    row.ts -= min;
                }
            }
        }
        let steps: FxHashSet<&str> = ranks
            .iter()
            .flat_map(|r| r.rows.iter().map(|row| r.trace.str(row.name)))
            .filter(|n| n.contains("ProfilerStep"))
            .collect();
        if steps.len() > 1 {
            for rank in &mut ranks {
                rank.rows = filter_to_steps(rank);
            }
        }
        HtaTrace { ranks }
    }
}

fn rows(trace: &Trace) -> Vec<Row> {
    let round = trace.meta.fractional_ts && std::env::var_os("HTA_DISABLE_NS_ROUNDING").is_none();
    let mut rows: Vec<Row> = trace
        .events
        .iter()
        .filter(|e| e.has_cat_and_dur && e.cat != Category::TraceSpan)
        .map(|e| {
            let ts = micros(e.ts);
            let dur = micros(e.dur);
            let (ts, dur) = if round {
                let start = ts.ceil();
                (start, (ts + dur).floor() - start)
            } else {
                (ts, dur)
            };
            let correlation = e.correlation.unwrap_or(-1);
            Row {
                name: e.name,
                ts,
                dur,
                stream: e.stream.unwrap_or(-1),
                correlation,
                cat: e.cat,
                index: e.index,
                index_correlation: correlation.min(0),
                pid: e.pid,
                tid: e.tid,
                memory_bw_gbps: e.memory_bw_gbps.unwrap_or(0.0),
            }
        })
        .collect();
    link_correlations(trace, &mut rows);
    rows
}

/// Whether HTA takes a row for device activity (`_filter_gpu_kernels_with_cuda_sync`).
fn is_device(trace: &Trace, r: &Row) -> bool {
    (r.stream >= 0 && r.correlation >= 0)
        || matches!(trace.str(r.name), "Event Sync" | "Context Sync")
}

/// `transform_correlation_to_index`: each host row with a correlation points at the last device
/// row with it, each device row at the last host row.
fn link_correlations(trace: &Trace, rows: &mut [Row]) {
    let mut last_device: FxHashMap<i64, u32> = FxHashMap::default();
    let mut last_host: FxHashMap<i64, u32> = FxHashMap::default();
    for r in rows.iter().filter(|r| r.correlation != -1) {
        if is_device(trace, r) {
            last_device.insert(r.correlation, r.index);
        } else {
            last_host.insert(r.correlation, r.index);
        }
    }
    for r in rows.iter_mut().filter(|r| r.correlation != -1) {
        let other = if is_device(trace, r) {
            last_host.get(&r.correlation)
        } else {
            last_device.get(&r.correlation)
        };
        if let Some(&i) = other {
            r.index_correlation = i64::from(i);
        }
    }
}

/// The double pandas reads for a time written in microseconds: whole microseconds exactly
/// (however large), others as nanoseconds over 1000, which is the decimal text's nearest double
/// (both correctly rounded) while nanoseconds fit a double's mantissa.
fn micros(ns: i64) -> f64 {
    if ns % 1000 == 0 {
        (ns / 1000) as f64
    } else if ns.unsigned_abs() < 1 << 53 {
        ns as f64 / 1000.0
    } else {
        (ns / 1000) as f64 + (ns % 1000) as f64 / 1000.0
    }
}

/// `_filter_irrelevant_gpu_kernels` for one rank.
fn filter_to_steps(rank: &Rank<'_>) -> Vec<Row> {
    let is_device = |r: &Row| is_device(rank.trace, r);
    let last_step = rank
        .rows
        .iter()
        .filter(|r| !is_device(r) && rank.trace.str(r.name).contains("ProfilerStep"))
        .map(|r| r.ts)
        .fold(f64::NAN, f64::max);
    let host: Vec<&Row> = rank
        .rows
        .iter()
        .filter(|r| !is_device(r) && r.ts < last_step)
        .collect();
    let mut correlations: FxHashMap<i64, usize> = FxHashMap::default();
    for r in &host {
        *correlations.entry(r.correlation).or_default() += 1;
    }
    let mut out = Vec::new();
    for r in rank.rows.iter().filter(|r| is_device(r)) {
        for _ in 0..correlations.get(&r.correlation).copied().unwrap_or(0) {
            out.push(r.clone());
        }
    }
    out.extend(host.into_iter().cloned());
    out
}

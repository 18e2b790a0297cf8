//! The input pipeline analysis of a TPU profile (`ComputeTpuInputPipelineAnalysisResult`): each
//! step of the steps database summarized across its cores (`PerTpuStepDetails`), the summaries
//! of those over the steps (`TpuStepTimeBreakdown`), the TPU bottleneck analysis' input and
//! output statements, and the steps table xprof 2.24.2 writes of them.
//!
//! A TensorCore's step breakdown is a `GenericStepBreakdown` of self time by op category, which
//! xprof reads through its profile time breakdown (infeed, outfeed, SparseCoreV0 infeed split
//! into wait and transform, host send and receive, idle as the step time the ops leave); a
//! SparseCore's is a `SparseCoreStepBreakdown` (or a generic one, whose non-idle time is its
//! compute). xprof 2.24.2 adds active times (TensorCore, SparseCore, step) that its public
//! source does not have: a step's TensorCore active time is its busy time (checked on one
//! TensorCore's steps, case `tpu-host-input`); where a step has several cores or SparseCores and
//! the active times would show more than 0.00, [`TpuAnalysis::missing`] names them.

use std::collections::BTreeMap;

use prost::Message;

use crate::datatable::{Cell, DataTable};
use crate::proto::{
    CoreDetails, GenericStepBreakdown, PerCoreStepInfo, SparseCoreStepBreakdown, TpuStepBreakdown,
};
use crate::tools::format::{fixed, one_digit, two_digits};
use crate::tools::input_pipeline::{Stat, StepSummary};

/// Core ids from here on are SparseCores' (`kSparseCoreIndexStart`).
const SPARSE_CORE_START: u32 = 1_000_000;

/// Busy time (ps) from which a step's active times show in two-digit milliseconds.
const ACTIVE_SHOWN_PS: u64 = 5_000_000;

fn pico_to_milli(ps: f64) -> f64 {
    ps / 1e9
}

/// `tsl::Stat<uint64_t>`: a wrapping sum, the minimum and maximum.
#[derive(Clone, Copy, Debug)]
struct StatU64 {
    count: u64,
    sum: u64,
    min: u64,
    max: u64,
}

impl Default for StatU64 {
    fn default() -> Self {
        StatU64 {
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl StatU64 {
    fn update(&mut self, v: u64) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }
    fn avg(&self) -> f64 {
        self.sum as f64 / self.count as f64
    }
}

/// The profile time breakdown of a TensorCore's step (`ConvertGenericStepBreakdownToTpuStepBreakdown`).
fn tpu_breakdown(generic: &GenericStepBreakdown, step_time_ps: u64) -> TpuStepBreakdown {
    let mut by_category: BTreeMap<&str, u64> = BTreeMap::new();
    let mut total = 0_u64;
    for (category, ps) in &generic.category_ps {
        if category == "IDLE" {
            continue;
        }
        let slot = by_category.entry(category.as_str()).or_default();
        *slot = slot.wrapping_add(*ps);
        total = total.wrapping_add(*ps);
    }
    // SparseCoreV0 infeed: the part its outfeed matches is transform, the rest waiting.
    if let Some(infeed) = by_category
        .remove("sparsecorev0 infeed")
        .filter(|v| *v != 0)
    {
        let outfeed = by_category
            .get("sparsecorev0 outfeed")
            .copied()
            .unwrap_or(0);
        let transform = infeed.min(outfeed);
        by_category.insert("sparsecorev0 infeed wait", infeed - transform);
        by_category.insert("sparsecorev0 infeed transform", transform);
    }
    let get = |names: &[&str]| {
        names.iter().fold(0_u64, |acc, n| {
            acc.wrapping_add(by_category.get(n).copied().unwrap_or(0))
        })
    };
    let idle = step_time_ps.wrapping_sub(total);
    let off_duty = idle.wrapping_add(get(&[
        "infeed",
        "outfeed",
        "host send",
        "host send-done",
        "host recv",
        "host recv-done",
        "megacore fusion",
    ]));
    let wait_for_scv0 = get(&["sparsecorev0 infeed wait"]);
    TpuStepBreakdown {
        infeed_duration_ps: get(&["infeed"]),
        host_outfeed_ps: get(&["outfeed"]),
        wait_for_scv0_duration_ps: wait_for_scv0,
        scv0_infeed_transform_ps: get(&["sparsecorev0 infeed transform"]),
        scv0_outfeed_ps: get(&["sparsecorev0 outfeed"]),
        crs_duration_ps: get(&["all-reduce", "all-reduce fusion", "all-to-all"]),
        send_duration_ps: get(&["send", "send-done"]),
        recv_duration_ps: get(&["recv", "recv-done"]),
        host_send_duration_ps: get(&["host send", "host send-done"]),
        host_recv_duration_ps: get(&["host recv", "host recv-done"]),
        wait_for_megacore_fusion_peer_duration_ps: get(&["megacore fusion"]),
        high_flops_compute_ps: get(&[
            "convolution",
            "convolution base-dilated",
            "convolution window-dilated",
            "convolution fusion",
            "output fusion",
        ]),
        tc_idle_ps: idle,
        tc_busy_ps: step_time_ps
            .wrapping_sub(off_duty)
            .wrapping_sub(wait_for_scv0),
        ..TpuStepBreakdown::default()
    }
}

/// A step breakdown `Any` unpacked as `M` when its type (after the last '/') is `name`.
fn unpack<M: Message + Default>(any: Option<&prost_types::Any>, name: &str) -> Option<M> {
    let any = any?;
    if any.type_url.rsplit('/').next() != Some(name) {
        return None;
    }
    M::decode(any.value.as_slice()).ok()
}

/// `PerTpuStepDetails`: one step summarized across its cores.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PerTpuStepDetails {
    /// The step's number (its first core's; -1 without a core).
    pub step_number: i32,
    /// TensorCore compute: the least step time a core spends not waiting for the host.
    pub tc_compute_time_ms: f64,
    /// TensorCore idle.
    pub tc_idle_time_ms: f64,
    /// TensorCore output, averaged over the cores.
    pub tc_outfeed_time_ms: f64,
    /// TensorCore input, the core waiting longest's.
    pub tc_infeed_time_ms: f64,
    /// The input share of the step, over the cores.
    pub infeed_percent_average: f64,
    /// Its minimum.
    pub infeed_percent_minimum: f64,
    /// Its maximum.
    pub infeed_percent_maximum: f64,
    /// `host:ordinal` of the core waiting longest for input, when its details are known.
    pub max_infeed_time_core_name: String,
    /// AllReduce compute (the core with the longest AllReduces).
    pub all_reduce_compute_time_ms: f64,
    /// AllReduce synchronization.
    pub all_reduce_sync_time_ms: f64,
    /// SparseCoreV0 compute.
    pub scv0_compute_time_ms: f64,
    /// SparseCoreV0 input.
    pub scv0_infeed_time_ms: f64,
    /// Host send and receive, the longest core's.
    pub host_transfer_ms: f64,
    /// SparseCore compute.
    pub sc_compute_time_ms: f64,
    /// SparseCore idle.
    pub sc_idle_time_ms: f64,
    /// SparseCore output.
    pub sc_outfeed_time_ms: f64,
    /// SparseCore input.
    pub sc_infeed_time_ms: f64,
    /// SparseCore step time.
    pub sc_step_time_ms: f64,
    /// TensorCore busy time (xprof 2.24.2's, least over the cores).
    pub tc_active_time_ms: f64,
    /// SparseCore busy time (xprof 2.24.2's, averaged over the cores).
    pub sc_active_time_ms: f64,
    /// The step's active time (xprof 2.24.2's; here the larger of the two).
    pub active_step_time_ms: f64,
    /// The largest TensorCore or SparseCore busy time, ps (what decides whether the active times
    /// show).
    busiest_ps: u64,
    /// Whether the step has SparseCore steps or more than one TensorCore: the active times of
    /// such a step are not checked against xprof's (one TensorCore's are: its busy time).
    several_cores: bool,
}

impl PerTpuStepDetails {
    fn infeed_time_ms(&self) -> f64 {
        self.tc_infeed_time_ms + self.scv0_infeed_time_ms
    }
    fn all_reduce_time_ms(&self) -> f64 {
        self.all_reduce_compute_time_ms + self.all_reduce_sync_time_ms
    }
    fn non_idle_time_ms(&self) -> f64 {
        self.tc_compute_time_ms
            + self.scv0_compute_time_ms
            + self.infeed_time_ms()
            + self.all_reduce_time_ms()
            + self.tc_outfeed_time_ms
    }
    fn step_time_ms(&self) -> f64 {
        self.non_idle_time_ms() + self.tc_idle_time_ms
    }
}

/// `ComputePerStepAllReduceBreakdownAcrossCores`: each core's AllReduce (compute, sync) time,
/// compute being the AllReduce's shortest duration over the cores.
fn all_reduce_breakdown(step: &PerCoreStepInfo) -> BTreeMap<u32, (u64, u64)> {
    let mut min: BTreeMap<u64, u64> = BTreeMap::new();
    for db in step.all_reduce_db_per_core.values() {
        for ar in &db.all_reduce_info {
            let d = ar.end_time_ps.wrapping_sub(ar.start_time_ps);
            min.entry(ar.id)
                .and_modify(|m| *m = (*m).min(d))
                .or_insert(d);
        }
    }
    let mut out = BTreeMap::new();
    for (core, db) in &step.all_reduce_db_per_core {
        let e: &mut (u64, u64) = out.entry(*core).or_default();
        for ar in &db.all_reduce_info {
            let d = ar.end_time_ps.wrapping_sub(ar.start_time_ps);
            let m = min.get(&ar.id).copied().unwrap_or(0);
            e.0 = e.0.wrapping_add(m);
            e.1 = e.1.wrapping_add(d.wrapping_sub(m));
        }
    }
    out
}

/// `ComputeTpuPerStepDataAcrossCores`: a core's breakdown of no known type ends the step's
/// reading there, as in xprof.
pub(crate) fn per_step(
    step: &PerCoreStepInfo,
    core_details: &BTreeMap<u32, CoreDetails>,
) -> PerTpuStepDetails {
    let all_reduce = all_reduce_breakdown(step);
    let mut d = PerTpuStepDetails {
        step_number: -1,
        ..PerTpuStepDetails::default()
    };
    let mut infeed_percent = Stat::default();
    let mut step_ps = StatU64::default();
    let mut optimal_ps = StatU64::default();
    let mut tc_outfeed_ps = StatU64::default();
    let mut host_send_recv_ps = StatU64::default();
    let mut tc_busy_ps = StatU64::default();
    let (mut sc_compute, mut sc_step, mut sc_outfeed, mut sc_infeed, mut sc_idle, mut sc_busy) = (
        StatU64::default(),
        StatU64::default(),
        StatU64::default(),
        StatU64::default(),
        StatU64::default(),
        StatU64::default(),
    );
    let mut max_scv0: (u64, u64) = (0, 0); // (infeed, compute)
    let mut max_infeed: (Option<u32>, u64) = (None, 0);
    let mut max_all_reduce: (u64, u64) = (0, 0);
    for (&core, info) in &step.step_info_per_core {
        if d.step_number < 0 {
            d.step_number = info.step_num as i32;
        }
        let any = info.step_breakdown.as_ref();
        let tpu = if let Some(tpu) =
            unpack::<TpuStepBreakdown>(any, "tensorflow.profiler.TpuStepBreakdown")
        {
            tpu
        } else if let Some(generic) =
            unpack::<GenericStepBreakdown>(any, "tensorflow.profiler.GenericStepBreakdown")
        {
            if core >= SPARSE_CORE_START {
                let idle = generic.category_ps.get("IDLE").copied().unwrap_or(0);
                sc_step.update(info.duration_ps);
                sc_compute.update(info.duration_ps.wrapping_sub(idle));
                sc_idle.update(idle);
                sc_busy.update(info.duration_ps.wrapping_sub(idle));
                continue;
            }
            tpu_breakdown(&generic, info.duration_ps)
        } else if let Some(sc) =
            unpack::<SparseCoreStepBreakdown>(any, "tensorflow.profiler.SparseCoreStepBreakdown")
        {
            // xprof 2.24.2 takes the SparseCore's compute as it is recorded.
            sc_step.update(info.duration_ps);
            sc_outfeed.update(sc.sc_outfeed_ps);
            sc_infeed.update(sc.sc_infeed_ps);
            sc_compute.update(sc.sc_compute_ps);
            sc_idle.update(sc.sc_idle_ps);
            sc_busy.update(sc.sc_busy_ps);
            continue;
        } else {
            return d;
        };
        step_ps.update(info.duration_ps);
        tc_busy_ps.update(tpu.tc_busy_ps);
        if tpu.wait_for_scv0_duration_ps > max_scv0.0.wrapping_add(max_scv0.1) {
            let infeed =
                (tpu.wait_for_scv0_duration_ps as f64 * tpu.scv0_infeed_percent / 100.0) as u64;
            max_scv0 = (infeed, tpu.wait_for_scv0_duration_ps.wrapping_sub(infeed));
        }
        tc_outfeed_ps.update(tpu.host_outfeed_ps);
        let ar = all_reduce.get(&core).copied().unwrap_or((0, 0));
        if ar.0.wrapping_add(ar.1) > max_all_reduce.0.wrapping_add(max_all_reduce.1) {
            max_all_reduce = ar;
        }
        let scv0_infeed =
            (tpu.wait_for_scv0_duration_ps as f64 * tpu.scv0_infeed_percent / 100.0) as u64;
        // The share first, then the percent: xprof 2.24.2's rounding (57.49999999999999 for 23
        // of 40 ms, where its newer source's order gives 57.5).
        infeed_percent.update(
            100.0
                * (tpu.infeed_duration_ps.wrapping_add(scv0_infeed) as f64
                    / info.duration_ps as f64),
        );
        let host_send_recv = tpu
            .host_send_duration_ps
            .wrapping_add(tpu.host_recv_duration_ps);
        let wait_for_host = tpu
            .infeed_duration_ps
            .wrapping_add(tpu.host_outfeed_ps)
            .wrapping_add(host_send_recv)
            .wrapping_add(tpu.tc_idle_ps);
        optimal_ps.update(
            info.duration_ps
                .wrapping_sub(wait_for_host.wrapping_add(tpu.wait_for_scv0_duration_ps)),
        );
        host_send_recv_ps.update(host_send_recv);
        if tpu.infeed_duration_ps > max_infeed.1 {
            max_infeed = (Some(core), tpu.infeed_duration_ps);
        }
    }
    if tc_outfeed_ps.count > 0 {
        d.tc_outfeed_time_ms = pico_to_milli(tc_outfeed_ps.avg());
    }
    if optimal_ps.count > 0 {
        d.tc_compute_time_ms = pico_to_milli(optimal_ps.min as f64);
    }
    if host_send_recv_ps.count > 0 {
        d.host_transfer_ms = pico_to_milli(host_send_recv_ps.max as f64);
    }
    d.tc_infeed_time_ms = pico_to_milli(max_infeed.1 as f64);
    if let Some(core) = max_infeed.0
        && let Some(c) = core_details.get(&core)
    {
        d.max_infeed_time_core_name = format!("{}:{}", c.hostname, c.device_ordinal);
    }
    d.scv0_compute_time_ms = pico_to_milli(max_scv0.1 as f64);
    d.scv0_infeed_time_ms = pico_to_milli(max_scv0.0 as f64);
    if step_ps.count > 0 {
        d.tc_idle_time_ms = pico_to_milli(step_ps.min as f64) - d.non_idle_time_ms();
    }
    if d.tc_idle_time_ms < 0.0 {
        d.tc_idle_time_ms = 0.0;
    }
    d.all_reduce_compute_time_ms = pico_to_milli(max_all_reduce.0 as f64);
    d.all_reduce_sync_time_ms = pico_to_milli(max_all_reduce.1 as f64);
    if infeed_percent.count > 0 {
        d.infeed_percent_average = infeed_percent.sum / infeed_percent.count as f64;
        d.infeed_percent_minimum = infeed_percent.min;
        d.infeed_percent_maximum = infeed_percent.max;
    }
    if sc_infeed.count > 0 {
        d.sc_infeed_time_ms = pico_to_milli(sc_infeed.avg());
    }
    if sc_outfeed.count > 0 {
        d.sc_outfeed_time_ms = pico_to_milli(sc_outfeed.avg());
    }
    if sc_compute.count > 0 {
        d.sc_compute_time_ms = pico_to_milli(sc_compute.min as f64);
    }
    if sc_idle.count > 0 {
        d.sc_idle_time_ms = pico_to_milli(sc_idle.avg());
    }
    if sc_step.count > 0 {
        d.sc_step_time_ms = pico_to_milli(sc_step.avg());
    }
    if tc_busy_ps.count > 0 {
        d.tc_active_time_ms = pico_to_milli(tc_busy_ps.min as f64);
        d.busiest_ps = tc_busy_ps.max;
    }
    d.several_cores = tc_busy_ps.count > 1 || sc_busy.count > 0;
    if sc_busy.count > 0 {
        d.sc_active_time_ms = pico_to_milli(sc_busy.avg());
        d.busiest_ps = d.busiest_ps.max(sc_busy.max);
    }
    d.active_step_time_ms = d.tc_active_time_ms.max(d.sc_active_time_ms);
    d
}

/// `TpuStepTimeBreakdown`: each part's summary over the steps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TpuStepTimeBreakdown {
    /// TensorCore compute.
    pub tc_compute_ms: StepSummary,
    /// SparseCoreV0 compute.
    pub scv0_compute_ms: StepSummary,
    /// TensorCore input.
    pub tc_infeed_ms: StepSummary,
    /// TensorCore output.
    pub tc_outfeed_ms: StepSummary,
    /// SparseCoreV0 input.
    pub scv0_infeed_ms: StepSummary,
    /// TensorCore idle.
    pub tc_idle_ms: StepSummary,
    /// Host transfer.
    pub host_transfer_ms: StepSummary,
    /// TensorCore active (xprof 2.24.2).
    pub tc_active_ms: StepSummary,
    /// Step active (xprof 2.24.2).
    pub active_step_time_ms: StepSummary,
    /// The SparseCores' summaries (compute, input, output, idle, step time, active), when the
    /// profile has SparseCores.
    pub sparse_core: Option<[StepSummary; 6]>,
}

/// The TPU part of the input pipeline analysis.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TpuAnalysis {
    /// Each step across its cores.
    pub steps: Vec<PerTpuStepDetails>,
    /// Their summaries.
    pub breakdown: TpuStepTimeBreakdown,
    /// The input share's summary, percent (of each step's core waiting longest).
    pub input_percent_summary: StepSummary,
    /// `TpuBottleneckAnalysis`'s input classification.
    pub input_classification: String,
    /// Its input statement.
    pub input_statement: String,
    /// Its output statement.
    pub output_statement: String,
    /// What of the analysis is not xprof's (xprof 2.24.2's active times of busy steps, whose
    /// rule its source does not show).
    pub missing: Vec<String>,
}

/// Whether the profile has SparseCores: a core's details say so, or a step has a SparseCore's id.
fn has_sparse_core(steps: &[PerCoreStepInfo], core_details: &BTreeMap<u32, CoreDetails>) -> bool {
    core_details.values().any(|c| c.is_sparse_core)
        || steps
            .iter()
            .any(|s| s.step_info_per_core.keys().any(|c| *c >= SPARSE_CORE_START))
}

/// `ComputeTpuInputPipelineAnalysisResult` and `ComputeTpuBottleneckAnalysis` (all cores
/// profiled).
pub fn analyze(
    steps: &[PerCoreStepInfo],
    core_details: &BTreeMap<u32, CoreDetails>,
) -> TpuAnalysis {
    let details: Vec<PerTpuStepDetails> = steps.iter().map(|s| per_step(s, core_details)).collect();
    let mut input_percent = Stat::default();
    for d in &details {
        input_percent.update(d.infeed_percent_maximum);
    }
    let summary = |f: &dyn Fn(&PerTpuStepDetails) -> f64| {
        let mut s = Stat::default();
        for d in &details {
            s.update(f(d));
        }
        s.summary()
    };
    let breakdown = TpuStepTimeBreakdown {
        tc_compute_ms: summary(&|d| d.tc_compute_time_ms),
        scv0_compute_ms: summary(&|d| d.scv0_compute_time_ms),
        tc_infeed_ms: summary(&|d| d.tc_infeed_time_ms),
        tc_outfeed_ms: summary(&|d| d.tc_outfeed_time_ms),
        scv0_infeed_ms: summary(&|d| d.scv0_infeed_time_ms),
        tc_idle_ms: summary(&|d| d.tc_idle_time_ms),
        host_transfer_ms: summary(&|d| d.host_transfer_ms),
        tc_active_ms: summary(&|d| d.tc_active_time_ms),
        active_step_time_ms: summary(&|d| d.active_step_time_ms),
        sparse_core: has_sparse_core(steps, core_details).then(|| {
            [
                summary(&|d| d.sc_compute_time_ms),
                summary(&|d| d.sc_infeed_time_ms),
                summary(&|d| d.sc_outfeed_time_ms),
                summary(&|d| d.sc_idle_time_ms),
                summary(&|d| d.sc_step_time_ms),
                summary(&|d| d.sc_active_time_ms),
            ]
        }),
    };
    let (mut step, mut infeed, mut outfeed) = (0.0, 0.0, 0.0);
    for d in &details {
        step += d.step_time_ms();
        infeed += d.infeed_time_ms();
        outfeed += d.tc_outfeed_time_ms;
    }
    let (input_classification, input_statement, output_statement) = if step == 0.0 {
        (
            "unknown".to_owned(),
            super::input_pipeline::NO_STEP_TIME.to_owned(),
            String::new(),
        )
    } else {
        let (class, statement, _) =
            super::input_pipeline::input_analysis(100.0 * infeed / step, 0.0);
        let output_percent = 100.0 * outfeed / step;
        let output = if output_percent >= 20.0 {
            format!(
                "Your program is HIGHLY output-bound because {}% of the total step time sampled is spent on output. Therefore, you should first focus on reducing the output time.",
                one_digit(output_percent)
            )
        } else if output_percent >= 5.0 {
            format!(
                "Your program is MODERATELY output-bound because {}% of the total step time sampled is spent on output. Therefore, you would need to reduce both the output time and other time.",
                one_digit(output_percent)
            )
        } else {
            String::new()
        };
        (class.to_owned(), statement, output)
    };
    let mut missing = Vec::new();
    if details
        .iter()
        .any(|d| d.busiest_ps >= ACTIVE_SHOWN_PS && d.several_cores)
    {
        missing.push(
            "the TPU steps' active times (xprof 2.24.2's tc_active_ms_average, sc_active_ms_average and active_steptime_ms_average of steps with busy cores)".to_owned(),
        );
    }
    TpuAnalysis {
        steps: details,
        breakdown,
        input_percent_summary: input_percent.summary(),
        input_classification,
        input_statement,
        output_statement,
        missing,
    }
}

fn prop(t: &mut DataTable, key: &str, value: impl Into<String>) {
    t.properties.insert(key.to_owned(), value.into());
}

/// The TPU steps table (`GenerateTpuInputPipelineAnalysisDataTable`) as xprof 2.24.2 writes it:
/// step times with two digits, and its active times.
pub fn steps_table(
    a: &TpuAnalysis,
    hardware_type: &str,
    step_time: &StepSummary,
    summary_next_step: &str,
) -> DataTable {
    let sc = a.breakdown.sparse_core.as_ref();
    let mut t = DataTable::default();
    let mut graph = vec!["stepnum"];
    t.column("stepnum", "string", "stepnum");
    t.column("tcComputeTimeMs", "number", "TensorCore compute (in ms)");
    graph.push("tcComputeTimeMs");
    if sc.is_none() {
        t.column(
            "scv0ComputeTimeMs",
            "number",
            "SparseCoreV0 compute (in ms)",
        );
        t.column("scv0InfeedTimeMs", "number", "SparseCoreV0 input (in ms)");
        graph.extend(["scv0ComputeTimeMs", "scv0InfeedTimeMs"]);
    }
    t.column("tcInfeedTimeMs", "number", "TensorCore input (in ms)");
    t.column("tcOutfeedTimeMs", "number", "TensorCore output (in ms)");
    t.column("tcIdleTimeMs", "number", "TensorCore idle (in ms)");
    t.column("hostTransferTimeMs", "number", "Host transfer (in ms)");
    graph.extend([
        "tcInfeedTimeMs",
        "tcOutfeedTimeMs",
        "tcIdleTimeMs",
        "hostTransferTimeMs",
    ]);
    t.column_with_role("tooltip", "string", "tooltip", "tooltip");
    graph.push("tooltip");
    t.column(
        "infeedPercentAverage",
        "number",
        "% step time waiting for input data",
    );
    t.column_with_role(
        "infeedPercentMin",
        "number",
        "Infeed percent min",
        "interval",
    );
    t.column_with_role(
        "infeedPercentMax",
        "number",
        "Infeed percent max",
        "interval",
    );
    prop(&mut t, "hardware_type", hardware_type);
    prop(&mut t, "steptime_ms_average", two_digits(step_time.average));
    prop(
        &mut t,
        "steptime_ms_standard_deviation",
        two_digits(step_time.standard_deviation),
    );
    prop(&mut t, "steptime_ms_minimum", two_digits(step_time.minimum));
    prop(&mut t, "steptime_ms_maximum", two_digits(step_time.maximum));
    let i = &a.input_percent_summary;
    prop(&mut t, "infeed_percent_average", one_digit(i.average));
    prop(
        &mut t,
        "infeed_percent_standard_deviation",
        one_digit(i.standard_deviation),
    );
    prop(&mut t, "infeed_percent_minimum", one_digit(i.minimum));
    prop(&mut t, "infeed_percent_maximum", one_digit(i.maximum));
    prop(&mut t, "step_time_graph_column_ids", graph.join(","));
    let b = &a.breakdown;
    if sc.is_none() {
        prop(
            &mut t,
            "scv0_compute_ms_average",
            two_digits(b.scv0_compute_ms.average),
        );
        prop(
            &mut t,
            "scv0_infeed_ms_average",
            two_digits(b.scv0_infeed_ms.average),
        );
    }
    for (key, s) in [
        ("tc_compute_ms_average", &b.tc_compute_ms),
        ("tc_infeed_ms_average", &b.tc_infeed_ms),
        ("tc_outfeed_ms_average", &b.tc_outfeed_ms),
        ("tc_idle_ms_average", &b.tc_idle_ms),
        ("host_transfer_ms_average", &b.host_transfer_ms),
        ("tc_active_ms_average", &b.tc_active_ms),
        ("active_steptime_ms_average", &b.active_step_time_ms),
    ] {
        prop(&mut t, key, two_digits(s.average));
    }
    if let Some([compute, infeed, outfeed, idle, step, active]) = sc
        && step.minimum > 0.0
    {
        prop(&mut t, "sc_compute_ms_average", two_digits(compute.average));
        prop(&mut t, "sc_infeed_ms_average", two_digits(infeed.average));
        prop(&mut t, "sc_outfeed_ms_average", two_digits(outfeed.average));
        prop(&mut t, "sc_idle_ms_average", two_digits(idle.average));
        prop(&mut t, "sc_step_time_ms_average", one_digit(step.average));
        prop(&mut t, "sc_active_ms_average", two_digits(active.average));
    }
    prop(&mut t, "input_conclusion", a.input_statement.clone());
    prop(&mut t, "output_conclusion", a.output_statement.clone());
    prop(&mut t, "summary_nextstep", summary_next_step);
    for d in &a.steps {
        let tooltip = format!(
            "step {}:\nTime waiting for input data = {} ms, Step time = {} ms",
            d.step_number,
            fixed(d.infeed_time_ms(), 3),
            fixed(d.step_time_ms() - d.all_reduce_time_ms(), 3)
        );
        let mut row = vec![
            Cell::Text(d.step_number.to_string()),
            Cell::Number(d.tc_compute_time_ms),
        ];
        if sc.is_none() {
            row.push(Cell::Number(d.scv0_compute_time_ms));
            row.push(Cell::Number(d.scv0_infeed_time_ms));
        }
        row.extend([
            Cell::Number(d.tc_infeed_time_ms),
            Cell::Number(d.tc_outfeed_time_ms),
            Cell::Number(d.tc_idle_time_ms),
            Cell::Number(d.host_transfer_ms),
            Cell::Text(tooltip),
            Cell::Number(d.infeed_percent_average),
            Cell::Number(d.infeed_percent_minimum),
            Cell::Number(d.infeed_percent_maximum),
        ]);
        t.rows.push(row);
    }
    t
}

/// The table of the core that waited longest for input at each step (`GenerateMaxInfeedCoreTable`).
pub fn max_infeed_core_table(a: &TpuAnalysis) -> DataTable {
    let mut t = DataTable::default();
    t.column("index", "string", "Index");
    for i in 0..a.steps.len() {
        let id = i.to_string();
        t.column(&id, "string", &id);
    }
    let mut numbers = vec![Cell::Text("Step number".into())];
    let mut names = vec![Cell::Text("Core name".into())];
    for d in &a.steps {
        numbers.push(Cell::Text(d.step_number.to_string()));
        names.push(Cell::Text(if d.max_infeed_time_core_name.is_empty() {
            "unknown".to_owned()
        } else {
            d.max_infeed_time_core_name.clone()
        }));
    }
    t.rows.push(numbers);
    t.rows.push(names);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::StepInfoResult;

    /// A core's id, self time by category and step time.
    type Core<'a> = (u32, &'a [(&'a str, u64)], u64);

    fn step(cores: &[Core<'_>]) -> PerCoreStepInfo {
        let mut s = PerCoreStepInfo::default();
        for (core, categories, duration) in cores {
            let generic = GenericStepBreakdown {
                category_ps: categories
                    .iter()
                    .map(|(c, ps)| ((*c).to_owned(), *ps))
                    .collect(),
                ..GenericStepBreakdown::default()
            };
            s.step_info_per_core.insert(
                *core,
                StepInfoResult {
                    step_num: 7,
                    duration_ps: *duration,
                    step_breakdown: Some(crate::op_stats::steps::pack_breakdown(&generic)),
                    ..StepInfoResult::default()
                },
            );
        }
        s
    }

    #[test]
    fn a_tensor_core_step_is_split_by_category() {
        let ms = 1_000_000_000;
        let s = step(&[(
            0,
            &[
                ("infeed", 10 * ms),
                ("outfeed", 5 * ms),
                ("convolution", 20 * ms),
                ("IDLE", 65 * ms),
            ],
            100 * ms,
        )]);
        let mut details = BTreeMap::new();
        details.insert(
            0,
            CoreDetails {
                hostname: "h".into(),
                device_ordinal: 3,
                ..CoreDetails::default()
            },
        );
        let a = analyze(&[s], &details);
        let d = &a.steps[0];
        assert_eq!(d.step_number, 7);
        assert_eq!(d.tc_infeed_time_ms, 10.0);
        assert_eq!(d.tc_outfeed_time_ms, 5.0);
        assert_eq!(d.tc_compute_time_ms, 20.0);
        assert_eq!(d.tc_idle_time_ms, 65.0);
        assert_eq!(d.infeed_percent_maximum, 10.0);
        assert_eq!(d.max_infeed_time_core_name, "h:3");
        assert!(
            a.input_statement
                .contains("MODERATELY input-bound because 10.0%")
        );
        assert!(
            a.output_statement
                .contains("MODERATELY output-bound because 5.0%")
        );
        // One busy TensorCore: its active time is its busy time, as xprof 2.24.2 shows it.
        assert_eq!(d.tc_active_time_ms, 20.0);
        assert!(a.missing.is_empty(), "{:?}", a.missing);
        // Two busy TensorCores: their active times are named as not reproduced.
        let two = step(&[
            (0, &[("convolution", 20 * ms), ("IDLE", 80 * ms)], 100 * ms),
            (1, &[("convolution", 30 * ms), ("IDLE", 70 * ms)], 100 * ms),
        ]);
        assert_eq!(analyze(&[two], &details).missing.len(), 1);
    }

    #[test]
    fn sparse_core_v0_infeed_is_wait_and_transform() {
        let b = tpu_breakdown(
            &GenericStepBreakdown {
                category_ps: [
                    ("sparsecorev0 infeed".to_owned(), 30),
                    ("sparsecorev0 outfeed".to_owned(), 12),
                ]
                .into_iter()
                .collect(),
                ..GenericStepBreakdown::default()
            },
            100,
        );
        assert_eq!(b.wait_for_scv0_duration_ps, 18);
        assert_eq!(b.scv0_infeed_transform_ps, 12);
        assert_eq!(b.tc_idle_ps, 58);
    }

    #[test]
    fn hostile_times_wrap_without_panicking() {
        let s = step(&[
            (0, &[("infeed", u64::MAX), ("outfeed", u64::MAX)], 1),
            (1, &[], 0),
            (SPARSE_CORE_START + 1, &[("IDLE", u64::MAX)], 0),
        ]);
        let a = analyze(&[s], &BTreeMap::new());
        assert_eq!(a.steps.len(), 1);
        assert!(a.breakdown.sparse_core.is_some());
        let t = steps_table(&a, "TPU", &Default::default(), "");
        assert_eq!(t.rows.len(), 1);
    }
}

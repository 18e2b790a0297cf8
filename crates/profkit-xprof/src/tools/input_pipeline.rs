//! `input_pipeline_analyzer`: where each step's time went and how much of it waited for input,
//! from an OpStats' steps database and host ops (xprof's `ConvertOpStatsToInputPipelineAnalysis`
//! and `InputPipelineAnalysisResultToDataTableJson`), as five DataTables: the core that waited
//! longest for input at each step (TPU only), the steps, the host's input ops, the
//! recommendations, the diagnostics.
//!
//! Each step of the steps database (its info on core 1, where the steps of a host and a GPU are)
//! is broken down by the event types of its `GenericStepBreakdown`: device compute (16 and 32
//! bit), device to device (and waiting for a device), collectives, host compute, kernel launch
//! (host prepare), input (waiting for input, host to device, device waiting for the host),
//! output, compilation, and all others. Each part's average and standard deviation over the
//! steps (as printf's `%.1f`), the step time's, and the bottleneck analysis (the shares of input,
//! output, compute, collectives, kernel launch and other time of the summed step time, with
//! xprof's thresholds and statements) become the steps table's properties. The host's input ops
//! are the host ops of an input category (`Dataset`, `InfeedEnqueue*`, `MemcpyHToD`, or the newer
//! `enqueue`, `read`, `preprocessing`, `unknown`), sorted by self time, classified by name, and
//! their time is split into enqueue, file reads (on demand and in advance), preprocessing and
//! unclassified time, scaled by the host-to-device share of the step time.
//!
//! On a TPU (`hardware_type` TPU) xprof breaks each step down across cores instead
//! ([`tpu_input_pipeline`]); the steps table then has the TensorCore's columns, and the first
//! table names the core that waited longest for input at each step. [`missing`] names what of
//! it is not xprof's; [`analyze`] always succeeds ([`Unsupported`] is kept for callers that
//! match on it).

use std::collections::BTreeMap;

use prost::Message;

use crate::datatable::{Cell, DataTable};
use crate::op_stats::roofline::safe_divide;
use crate::op_stats::sorted;
use crate::proto::{
    GenericStepBreakdown, HardwareType, OpMetricsDb, OpStats, PerCoreStepInfo, StepDatabaseResult,
};
use crate::tools::format::{one_digit, two_digits};
use crate::tools::tpu_input_pipeline::{self, TpuAnalysis};

/// Part of an OpStats a renderer does not reproduce: what it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not reproduced: {0}")]
pub struct Unsupported(pub String);

/// The core the steps of a host or GPU are recorded on (`kDefaultGpuLocalCoreId`).
const GENERIC_CORE: u32 = 1;
/// Cores from this id on are SparseCores (`kSparseCoreIndexStart`).
const SPARSE_CORE_START: u32 = 1_000_000;

/// `EventType`, the step breakdown's keys.
mod event {
    pub const UNKNOWN_TIME: i32 = 0;
    pub const HOST_COMPUTE: i32 = 10;
    pub const HOST_COMPILE: i32 = 60;
    pub const HOST_TO_DEVICE: i32 = 80;
    pub const HOST_PREPARE: i32 = 90;
    pub const DEVICE_COLLECTIVES: i32 = 100;
    pub const HOST_WAIT_INPUT: i32 = 110;
    pub const DEVICE_TO_DEVICE: i32 = 120;
    pub const DEVICE_TO_HOST: i32 = 130;
    pub const DEVICE_COMPUTE_32: i32 = 140;
    pub const DEVICE_COMPUTE_16: i32 = 150;
    pub const DEVICE_WAIT_DEVICE: i32 = 160;
    pub const DEVICE_WAIT_HOST: i32 = 170;
}
pub(crate) use event::*;

/// A step's `GenericStepBreakdown`, as `Any::UnpackTo` gives it: `Ok(None)` for an empty `Any`
/// (the breakdown stays empty), `Err` for one of another type or that does not decode.
pub(crate) fn unpack_generic(
    any: Option<&prost_types::Any>,
) -> Result<Option<GenericStepBreakdown>, ()> {
    let Some(any) = any else { return Ok(None) };
    if any.type_url.is_empty() {
        return Ok(None);
    }
    // `Any::UnpackTo` compares the part after the last '/'.
    let name = any.type_url.rsplit('/').next().unwrap_or("");
    if name != "tensorflow.profiler.GenericStepBreakdown" {
        return Err(());
    }
    GenericStepBreakdown::decode(any.value.as_slice())
        .map(Some)
        .map_err(|_| ())
}

/// `tsl::Stat<double>`: count, sum, sum of squares, minimum and maximum (which start at the
/// largest double and at the smallest positive one, as its members do).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stat {
    pub(crate) count: u64,
    pub(crate) sum: f64,
    squared_sum: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Default for Stat {
    fn default() -> Self {
        Stat {
            count: 0,
            sum: 0.0,
            squared_sum: 0.0,
            min: f64::MAX,
            max: f64::MIN_POSITIVE,
        }
    }
}

impl Stat {
    pub(crate) fn update(&mut self, v: f64) {
        self.max = if v > self.max { v } else { self.max };
        self.min = if v < self.min { v } else { self.min };
        self.count += 1;
        self.sum += v;
        self.squared_sum += v * v;
    }

    /// `GetStepSummaryForSampleStats`: zeros for no sample, else the average, the sample
    /// standard deviation, minimum and maximum.
    pub(crate) fn summary(&self) -> StepSummary {
        if self.count == 0 {
            return StepSummary::default();
        }
        let n = self.count as f64;
        let variance = if self.min == self.max {
            0.0
        } else {
            (self.squared_sum - self.sum.powi(2) / n) / (n - 1.0)
        };
        StepSummary {
            average: self.sum / n,
            standard_deviation: variance.sqrt(),
            minimum: self.min,
            maximum: self.max,
        }
    }
}

/// `StepSummary`: a quantity's average, standard deviation, minimum and maximum over the steps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepSummary {
    /// Average.
    pub average: f64,
    /// Sample standard deviation.
    pub standard_deviation: f64,
    /// Minimum.
    pub minimum: f64,
    /// Maximum.
    pub maximum: f64,
}

/// `PerGenericStepDetails`: one step's time, in milliseconds, by what it was spent on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepDetails {
    /// The step's number.
    pub step_number: u32,
    /// Its name (its number when it has none).
    pub step_name: String,
    /// Step time.
    pub step_time_ms: f64,
    /// Time not accounted for ("All others").
    pub unknown_time_ms: f64,
    /// Host waiting for input.
    pub host_wait_input_ms: f64,
    /// Host to device, and device waiting for the host.
    pub host_to_device_ms: f64,
    /// Device to host.
    pub output_ms: f64,
    /// Device compute, 16 and 32 bit.
    pub device_compute_ms: f64,
    /// Device to device, and device waiting for a device.
    pub device_to_device_ms: f64,
    /// Collectives.
    pub device_collectives_ms: f64,
    /// Host compute.
    pub host_compute_ms: f64,
    /// Kernel launch.
    pub host_prepare_ms: f64,
    /// Compilation.
    pub host_compile_ms: f64,
}

/// `GenericStepTimeBreakdown`: each part's summary over the steps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepTimeBreakdown {
    /// All others.
    pub unknown_time_ms: StepSummary,
    /// Host waiting for input.
    pub host_wait_input_ms: StepSummary,
    /// Host to device.
    pub host_to_device_ms: StepSummary,
    /// Input (the two above).
    pub input_ms: StepSummary,
    /// Output.
    pub output_ms: StepSummary,
    /// Device compute.
    pub device_compute_ms: StepSummary,
    /// Device to device.
    pub device_to_device_ms: StepSummary,
    /// Collectives.
    pub device_collectives_ms: StepSummary,
    /// Host compute.
    pub host_compute_ms: StepSummary,
    /// Kernel launch.
    pub host_prepare_ms: StepSummary,
    /// Compilation.
    pub host_compile_ms: StepSummary,
}

/// `InputOpDetails`: a host input op.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InputOpDetails {
    /// The op's name.
    pub op_name: String,
    /// Occurrences.
    pub count: u32,
    /// Total time, ms.
    pub time_in_ms: f64,
    /// Total time, percent of all input ops' self time.
    pub time_in_percent: f64,
    /// Self time, ms.
    pub self_time_in_ms: f64,
    /// Self time, percent of all input ops' self time.
    pub self_time_in_percent: f64,
    /// "Enqueue", "Demanded file read", "Advanced file read", "Preprocessing" or "Unknown".
    pub category: &'static str,
}

/// `InputTimeBreakdown`, microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InputTimeBreakdown {
    /// Enqueuing for the device.
    pub enqueue_us: f64,
    /// Files read on demand.
    pub demanded_file_read_us: f64,
    /// Files read in advance.
    pub advanced_file_read_us: f64,
    /// Preprocessing.
    pub preprocessing_us: f64,
    /// The rest of the time not enqueuing.
    pub unclassified_non_enqueue_us: f64,
}

impl InputTimeBreakdown {
    /// `TfDataInUse`: whether tf.data ops ran (enqueuing aside).
    fn tf_data_in_use(&self) -> bool {
        self.demanded_file_read_us > 0.0
            || self.advanced_file_read_us > 0.0
            || self.preprocessing_us > 0.0
    }
}

/// `BottleneckAnalysis`: the shares of the summed step time and xprof's verdicts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BottleneckAnalysis {
    /// Input, percent.
    pub input_percent: f64,
    /// Output, percent.
    pub output_percent: f64,
    /// What is neither input, output, compute nor collectives, percent.
    pub idle_percent: f64,
    /// Device compute, percent.
    pub compute_percent: f64,
    /// "host", "both", "device" or "unknown".
    pub input_classification: String,
    /// The verdict on input.
    pub input_statement: String,
    /// "high", "moderate" or "no".
    pub kernel_launch_classification: String,
    /// The verdict on kernel launches.
    pub kernel_launch_statement: String,
    /// "high", "moderate" or "no".
    pub all_other_classification: String,
    /// The verdict on other time.
    pub all_other_statement: String,
    /// "high", "moderate" or "no".
    pub device_collectives_classification: String,
    /// The verdict on collectives.
    pub device_collectives_statement: String,
}

/// The steps part of the analysis, by hardware.
#[derive(Clone, Debug, PartialEq)]
pub enum Steps {
    /// Hosts and GPUs: each step's breakdown, and the breakdown's summaries (`None` when xprof
    /// could not unpack it).
    Generic {
        /// The steps.
        steps: Vec<StepDetails>,
        /// Each part's summary.
        breakdown: Option<Box<StepTimeBreakdown>>,
    },
    /// TPUs: each step across its cores, and their summaries.
    Tpu(Box<TpuAnalysis>),
}

/// `InputPipelineAnalysisResult`, what both pages show of the input pipeline.
#[derive(Clone, Debug, PartialEq)]
pub struct InputPipelineAnalysis {
    /// `HardwareType`'s name: `CPU_ONLY`, `GPU`, `TPU`, `UNKNOWN_HARDWARE`.
    pub hardware_type: String,
    /// The step time's summary, ms.
    pub step_time_summary: StepSummary,
    /// The input share's summary, percent.
    pub input_percent_summary: StepSummary,
    /// The steps.
    pub steps: Steps,
    /// The host's input ops.
    pub input_op_details: Vec<InputOpDetails>,
    /// Their time by kind.
    pub input_time_breakdown: InputTimeBreakdown,
    /// The bottleneck analysis.
    pub bottleneck: BottleneckAnalysis,
    /// The next step the page suggests (HTML).
    pub summary_next_step: String,
    /// Warnings about the steps.
    pub warnings: Vec<String>,
}

const ERROR_INCOMPLETE_STEP: &str = "Incomplete step observed and hence the step time is unknown.Instead, we use the trace duration as the step time. This may happen if your profiling duration is shorter than the step time. In this case, you may try to profile longer.";
const ERROR_EMPTY_INTERSECT: &str = "Although there are steps observed on some host(s), the intersection of the steps over all hosts is empty (because the differences among individual host's step sequences are too big). Consequently, the overall step time is unknown.";
const ERROR_NO_STEP_MARKER: &str = "No step marker observed and hence the step time is unknown. This may happen if (1) training steps are not instrumented (e.g., if you are not using Keras) or (2) the profiling duration is shorter than the step time. For (1), you need to add step instrumentation; for (2), you may try to profile longer.";
const STEPS_DROPPED: &str = " steps dropped. This might happen when you profile many hosts and/or many steps. You could try to profile shorter or reduce the number of hosts you profile.";

/// `PopulateStepDiagnostics`: warnings about the steps database.
pub(crate) fn step_warnings(stats: &OpStats) -> Vec<String> {
    let mut warnings = Vec::new();
    let default = StepDatabaseResult::default();
    let db = stats.step_db.as_ref().unwrap_or(&default);
    if db.use_incomplete_step {
        warnings.push(ERROR_INCOMPLETE_STEP.to_owned());
    } else if db.step_sequence.is_empty() {
        warnings.push(
            if db.empty_intersect {
                ERROR_EMPTY_INTERSECT
            } else {
                ERROR_NO_STEP_MARKER
            }
            .to_owned(),
        );
    }
    if db.num_steps_dropped != 0 {
        warnings.push(format!("{}{STEPS_DROPPED}", db.num_steps_dropped));
    }
    warnings
}

pub(crate) fn pico_to_milli(ps: u64) -> f64 {
    ps as f64 / 1e9
}

pub(crate) fn hardware_type(stats: &OpStats) -> HardwareType {
    stats
        .run_environment
        .as_ref()
        .and_then(|e| HardwareType::try_from(e.hardware_type).ok())
        .unwrap_or(HardwareType::UnknownHardware)
}

/// `HardwareType_Name`.
pub(crate) fn hardware_name(h: HardwareType) -> &'static str {
    match h {
        HardwareType::UnknownHardware => "UNKNOWN_HARDWARE",
        HardwareType::CpuOnly => "CPU_ONLY",
        HardwareType::Gpu => "GPU",
        HardwareType::Tpu => "TPU",
    }
}

/// `ComputeStepTimeSummaryInMs`: each step's time is its slowest core's (SparseCores aside).
fn step_time_summary(steps: &[PerCoreStepInfo]) -> StepSummary {
    let mut stat = Stat::default();
    for step in steps {
        let mut max = 0.0_f64;
        for (core, info) in &step.step_info_per_core {
            if *core >= SPARSE_CORE_START {
                continue;
            }
            max = max.max(info.duration_ps as f64 / 1e9);
        }
        stat.update(max);
    }
    stat.summary()
}

/// `ComputeGenericInputPipelineAnalysisResult`: `None` when a step's breakdown is not a
/// `GenericStepBreakdown` (xprof then returns an empty result).
fn generic_steps(
    steps: &[PerCoreStepInfo],
) -> Option<(StepSummary, Vec<StepDetails>, StepSummary)> {
    let summary = step_time_summary(steps);
    let mut details = Vec::new();
    let mut input_percent = Stat::default();
    for step in steps {
        let Some(info) = step.step_info_per_core.get(&GENERIC_CORE) else {
            continue;
        };
        let generic = unpack_generic(info.step_breakdown.as_ref())
            .ok()?
            .unwrap_or_default();
        let ms = |t: i32| pico_to_milli(generic.type_ps.get(&t).copied().unwrap_or(0));
        let d = StepDetails {
            step_number: info.step_num,
            step_name: if info.step_name.is_empty() {
                info.step_num.to_string()
            } else {
                info.step_name.clone()
            },
            step_time_ms: pico_to_milli(info.duration_ps),
            unknown_time_ms: ms(UNKNOWN_TIME),
            host_wait_input_ms: ms(HOST_WAIT_INPUT),
            host_to_device_ms: ms(HOST_TO_DEVICE) + ms(DEVICE_WAIT_HOST),
            output_ms: ms(DEVICE_TO_HOST),
            device_compute_ms: ms(DEVICE_COMPUTE_16) + ms(DEVICE_COMPUTE_32),
            device_to_device_ms: ms(DEVICE_TO_DEVICE) + ms(DEVICE_WAIT_DEVICE),
            device_collectives_ms: ms(DEVICE_COLLECTIVES),
            host_compute_ms: ms(HOST_COMPUTE),
            host_prepare_ms: ms(HOST_PREPARE),
            host_compile_ms: ms(HOST_COMPILE),
        };
        input_percent.update(
            100.0 * safe_divide(d.host_wait_input_ms + d.host_to_device_ms, d.step_time_ms),
        );
        details.push(d);
    }
    Some((summary, details, input_percent.summary()))
}

/// `ComputeGenericStepTimeBreakdownInMs`.
fn breakdown(steps: &[StepDetails]) -> StepTimeBreakdown {
    let mut s: [Stat; 11] = [Stat::default(); 11];
    for d in steps {
        let values = [
            d.unknown_time_ms,
            d.host_wait_input_ms,
            d.host_to_device_ms,
            d.host_wait_input_ms + d.host_to_device_ms,
            d.output_ms,
            d.device_compute_ms,
            d.device_to_device_ms,
            d.device_collectives_ms,
            d.host_compute_ms,
            d.host_prepare_ms,
            d.host_compile_ms,
        ];
        for (stat, v) in s.iter_mut().zip(values) {
            stat.update(v);
        }
    }
    let [a, b, c, d, e, f, g, h, i, j, k] = s.map(|x| x.summary());
    StepTimeBreakdown {
        unknown_time_ms: a,
        host_wait_input_ms: b,
        host_to_device_ms: c,
        input_ms: d,
        output_ms: e,
        device_compute_ms: f,
        device_to_device_ms: g,
        device_collectives_ms: h,
        host_compute_ms: i,
        host_prepare_ms: j,
        host_compile_ms: k,
    }
}

/// `InputOpCategory`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum InputOpCategory {
    Enqueue,
    DemandedFileRead,
    AdvancedFileRead,
    Preprocessing,
    Unknown,
}

impl InputOpCategory {
    fn name(self) -> &'static str {
        match self {
            InputOpCategory::Enqueue => "Enqueue",
            InputOpCategory::DemandedFileRead => "Demanded file read",
            InputOpCategory::AdvancedFileRead => "Advanced file read",
            InputOpCategory::Preprocessing => "Preprocessing",
            InputOpCategory::Unknown => "Unknown",
        }
    }
}

fn is_input_op_new(category: &str) -> bool {
    matches!(
        category.to_ascii_lowercase().as_str(),
        "enqueue" | "read" | "preprocessing" | "unknown"
    )
}

fn is_input_op(category: &str) -> bool {
    category.starts_with("InfeedEnqueue")
        || category == "Dataset"
        || category == "MemcpyHToD"
        || is_input_op_new(category)
}

fn categorize(name: &str, category: &str) -> InputOpCategory {
    if is_input_op_new(category) {
        return match category.to_ascii_lowercase().as_str() {
            "enqueue" => InputOpCategory::Enqueue,
            "read" => InputOpCategory::DemandedFileRead,
            "preprocessing" => InputOpCategory::Preprocessing,
            _ => InputOpCategory::Unknown,
        };
    }
    if category.starts_with("InfeedEnqueue") || category == "MemcpyHToD" {
        return InputOpCategory::Enqueue;
    }
    let reads = [
        "::TFRecord",
        "::TextLine",
        "::FixedLengthRecord",
        "::SSTable",
        "::RecordIO",
        "::ArrayRecord",
    ];
    if reads.iter().any(|r| name.ends_with(r)) {
        let advanced = [
            "::MemoryReader",
            "::MemoryWriter",
            "::Interleave",
            "::Prefetch",
            "::ParallelMap",
        ];
        if advanced.iter().any(|a| name.contains(a)) {
            InputOpCategory::AdvancedFileRead
        } else {
            InputOpCategory::DemandedFileRead
        }
    } else {
        InputOpCategory::Preprocessing
    }
}

/// `RatioOfHostToDeviceTimeToStepTime`.
fn host_to_device_ratio(
    host: &OpMetricsDb,
    step_avg_ms: f64,
    breakdown: Option<&StepTimeBreakdown>,
) -> f64 {
    if host.total_host_infeed_enq_start_timestamp_ps_diff > 0 {
        return safe_divide(
            host.total_host_infeed_enq_duration_ps as f64,
            host.total_host_infeed_enq_start_timestamp_ps_diff as f64,
        );
    }
    if step_avg_ms > 0.0 {
        if let Some(b) = breakdown {
            return safe_divide(b.host_to_device_ms.average, step_avg_ms);
        }
    }
    0.0
}

/// `GenerateHostResult`: the input ops and their time by kind.
fn host_result(
    host: &OpMetricsDb,
    step_avg_ms: f64,
    breakdown: Option<&StepTimeBreakdown>,
) -> (Vec<InputOpDetails>, InputTimeBreakdown) {
    let ops: Vec<_> = sorted(host, usize::MAX)
        .into_iter()
        .filter(|m| is_input_op(&m.category))
        .collect();
    if ops.is_empty() {
        return (Vec::new(), InputTimeBreakdown::default());
    }
    let input_ps = ops
        .iter()
        .fold(0_u64, |acc, m| acc.wrapping_add(m.self_time_ps));
    let mut by_category: BTreeMap<InputOpCategory, f64> = BTreeMap::new();
    let mut details = Vec::with_capacity(ops.len());
    for m in ops {
        let category = categorize(&m.name, &m.category);
        details.push(InputOpDetails {
            op_name: m.name.clone(),
            count: m.occurrences,
            time_in_ms: pico_to_milli(m.time_ps),
            self_time_in_ms: pico_to_milli(m.self_time_ps),
            time_in_percent: 100.0 * safe_divide(m.time_ps as f64, input_ps as f64),
            self_time_in_percent: 100.0 * safe_divide(m.self_time_ps as f64, input_ps as f64),
            category: category.name(),
        });
        *by_category.entry(category).or_insert(0.0) += m.self_time_ps as f64 / 1e6;
    }
    let at = |c| by_category.get(&c).copied().unwrap_or(0.0);
    let enqueue = at(InputOpCategory::Enqueue);
    let demanded = at(InputOpCategory::DemandedFileRead);
    let advanced = at(InputOpCategory::AdvancedFileRead);
    let preprocessing = at(InputOpCategory::Preprocessing);
    let total = demanded + advanced + preprocessing;
    let ratio = host_to_device_ratio(host, step_avg_ms, breakdown).min(1.0);
    let non_enqueue = if ratio != 0.0 {
        enqueue * (1.0 - ratio) / ratio
    } else {
        total
    };
    let demanded = safe_divide(non_enqueue * demanded, total);
    let advanced = safe_divide(non_enqueue * advanced, total);
    let preprocessing = safe_divide(non_enqueue * preprocessing, total);
    let unclassified = (non_enqueue - demanded - advanced - preprocessing).max(0.0);
    (
        details,
        InputTimeBreakdown {
            enqueue_us: enqueue,
            demanded_file_read_us: demanded,
            advanced_file_read_us: advanced,
            preprocessing_us: preprocessing,
            unclassified_non_enqueue_us: unclassified,
        },
    )
}

const ALL_OTHERS_PYTHON: &str = " % of the total step time sampled is spent on 'All Others' time. This could be due to Python execution overhead.";
const KERNEL_LAUNCH_TF_DATA: &str = " It could be due to CPU contention with tf.data. In this case, you may try to set the environment variable TF_GPU_THREAD_MODE=gpu_private.";
pub(crate) const NO_STEP_TIME: &str =
    "No step time measured. Therefore we cannot tell where the performance bottleneck is.";

/// `ComputeBottleneckAnalysis` over the steps (none for a TPU's, whose details xprof cannot
/// read as generic ones).
pub(crate) fn bottleneck_analysis(
    breakdown: &InputTimeBreakdown,
    steps: &[StepDetails],
) -> BottleneckAnalysis {
    let mut step = 0.0;
    let mut input = 0.0;
    let mut output = 0.0;
    let mut prepare = 0.0;
    let mut compute = 0.0;
    let mut collectives = 0.0;
    let mut unknown = 0.0;
    for d in steps {
        step += d.step_time_ms;
        input += d.host_wait_input_ms + d.host_to_device_ms;
        output += d.output_ms;
        prepare += d.host_prepare_ms;
        compute += d.device_compute_ms;
        collectives += d.device_collectives_ms;
        unknown += d.unknown_time_ms;
    }
    if step == 0.0 {
        return BottleneckAnalysis {
            input_classification: "unknown".into(),
            input_statement: NO_STEP_TIME.into(),
            kernel_launch_classification: "no".into(),
            all_other_classification: "no".into(),
            device_collectives_classification: "no".into(),
            ..BottleneckAnalysis::default()
        };
    }
    let input_percent = 100.0 * input / step;
    let output_percent = 100.0 * output / step;
    let compute_percent = 100.0 * compute / step;
    let collectives_percent = 100.0 * collectives / step;
    let idle_percent =
        (100.0 - input_percent - output_percent - compute_percent - collectives_percent).max(0.0);
    let kernel_launch_percent = 100.0 * prepare / step;
    let all_other_percent = 100.0 * unknown / step;

    let (input_classification, input_statement, all_other_reported) =
        input_analysis(input_percent, all_other_percent);
    let level = |p: f64, high: f64, moderate: f64| {
        if p >= high {
            "high"
        } else if p >= moderate {
            "moderate"
        } else {
            "no"
        }
    };
    let collectives_class = level(collectives_percent, 15.0, 3.0);
    let collectives_statement = if collectives_class == "no" {
        String::new()
    } else {
        format!(
            "{} % of the total step time sampled is spent on 'Device Collective Communication'.",
            one_digit(collectives_percent)
        )
    };
    let launch_class = level(kernel_launch_percent, 15.0, 3.0);
    let launch_statement = if launch_class == "no" {
        String::new()
    } else {
        let mut s = format!(
            "{} % of the total step time sampled is spent on 'Kernel Launch'.",
            one_digit(kernel_launch_percent)
        );
        if breakdown.tf_data_in_use() {
            s.push_str(KERNEL_LAUNCH_TF_DATA);
        }
        s
    };
    let other_class = if all_other_reported {
        "no"
    } else {
        level(all_other_percent, 15.0, 3.0)
    };
    let other_statement = if other_class == "no" {
        String::new()
    } else {
        format!("{}{ALL_OTHERS_PYTHON}", one_digit(all_other_percent))
    };
    BottleneckAnalysis {
        input_percent,
        output_percent,
        idle_percent,
        compute_percent,
        input_classification: input_classification.into(),
        input_statement,
        kernel_launch_classification: launch_class.into(),
        kernel_launch_statement: launch_statement,
        all_other_classification: other_class.into(),
        all_other_statement: other_statement,
        device_collectives_classification: collectives_class.into(),
        device_collectives_statement: collectives_statement,
    }
}

/// `InputAnalysis`: the classification, the statement, and whether it reported other time.
pub(crate) fn input_analysis(
    input_percent: f64,
    all_other_percent: f64,
) -> (&'static str, String, bool) {
    if input_percent >= 20.0 {
        (
            "host",
            format!(
                "Your program is HIGHLY input-bound because {}% of the total step time sampled is waiting for input. Therefore, you should first focus on reducing the input time.",
                one_digit(input_percent)
            ),
            false,
        )
    } else if input_percent >= 5.0 {
        (
            "both",
            format!(
                "Your program is MODERATELY input-bound because {}% of the total step time sampled is waiting for input. Therefore, you would need to reduce both the input time and other time.",
                one_digit(input_percent)
            ),
            false,
        )
    } else if all_other_percent >= 3.0 {
        (
            "both",
            format!(
                "Your program is POTENTIALLY input-bound because {}% of the total step time sampled is spent on 'All Others' time (which could be due to I/O or Python execution or both).",
                one_digit(all_other_percent)
            ),
            true,
        )
    } else {
        (
            "device",
            format!(
                "Your program is NOT input-bound because only {}% of the total step time sampled is waiting for input. Therefore, you should focus on reducing other time.",
                one_digit(input_percent)
            ),
            false,
        )
    }
}

/// `GetSummaryNextStep`.
fn summary_next_step(input_classification: &str, breakdown: &InputTimeBreakdown) -> String {
    if input_classification == "host" || input_classification == "both" {
        if breakdown.tf_data_in_use() {
            "Look at Section 3 for the breakdown of input time on the host.".to_owned()
        } else {
            "Consider using <a href=\"https://www.tensorflow.org/guide/data\" target=\"_blank\">the tf.data API</a> to enable profiler's host-side analysis for input pipeline. Profiler currently does not support custom input pipeline (please ignore Section 3 below).".to_owned()
        }
    } else {
        "You may skip the rest of this page.".to_owned()
    }
}

/// `ConvertOpStatsToInputPipelineAnalysis`.
pub fn analyze(stats: &OpStats) -> Result<InputPipelineAnalysis, Unsupported> {
    let hardware = hardware_type(stats);
    let default = StepDatabaseResult::default();
    let sequence = &stats.step_db.as_ref().unwrap_or(&default).step_sequence;
    let (step_time_summary, input_percent_summary, steps) = if hardware == HardwareType::Tpu {
        let tpu = tpu_input_pipeline::analyze(sequence, &stats.core_id_to_details);
        (
            step_time_summary(sequence),
            tpu.input_percent_summary,
            Steps::Tpu(Box::new(tpu)),
        )
    } else {
        match generic_steps(sequence) {
            Some((summary, details, input_percent)) => {
                let b = breakdown(&details);
                (
                    summary,
                    input_percent,
                    Steps::Generic {
                        steps: details,
                        breakdown: Some(Box::new(b)),
                    },
                )
            }
            None => (
                StepSummary::default(),
                StepSummary::default(),
                Steps::Generic {
                    steps: Vec::new(),
                    breakdown: None,
                },
            ),
        }
    };
    let empty = OpMetricsDb::default();
    let host = stats.host_op_metrics_db.as_ref().unwrap_or(&empty);
    let generic_breakdown = match &steps {
        Steps::Generic { breakdown, .. } => breakdown.as_deref(),
        Steps::Tpu(_) => None,
    };
    let (input_op_details, input_time_breakdown) =
        host_result(host, step_time_summary.average, generic_breakdown);
    let (bottleneck, input_classification) = match &steps {
        Steps::Generic { steps, .. } => {
            let b = bottleneck_analysis(&input_time_breakdown, steps);
            let class = b.input_classification.clone();
            (b, class)
        }
        // xprof's generic analysis cannot read a TPU's step details: it is empty.
        Steps::Tpu(tpu) => (
            BottleneckAnalysis::default(),
            tpu.input_classification.clone(),
        ),
    };
    let summary_next_step = summary_next_step(&input_classification, &input_time_breakdown);
    Ok(InputPipelineAnalysis {
        hardware_type: hardware_name(hardware).to_owned(),
        step_time_summary,
        input_percent_summary,
        steps,
        input_op_details,
        input_time_breakdown,
        bottleneck,
        summary_next_step,
        warnings: step_warnings(stats),
    })
}

/// The recommendations (`GenerateRecommendation`'s details).
fn recommendations() -> [String; 5] {
    let topic = "https://www.tensorflow.org/api_docs/python/tf/data/Dataset#";
    let record =
        "https://www.tensorflow.org/api_docs/python/tf/data/TFRecordDataset#class_tfrecorddataset";
    let a = |url: &str, text: &str| format!("<a href=\"{url}\" target=\"_blank\">{text}</a>");
    [
        "Enqueuing data: you may want to combine small input data chunks into fewer but larger chunks.".to_owned(),
        format!(
            "Data preprocessing: you may increase num_parallel_calls in {} or preprocess the data OFFLINE.",
            a(&format!("{topic}map"), "Dataset map()")
        ),
        format!(
            "Reading data from files in advance: you may tune parameters in the following tf.data API ({}, {}, {})",
            a(&format!("{topic}prefetch"), "prefetch size"),
            a(&format!("{topic}interleave"), "interleave cycle_length"),
            a(record, "reader buffer_size")
        ),
        format!(
            "Reading data from files on demand: you should read data IN ADVANCE using the following tf.data API ({}, {}, {})",
            a(&format!("{topic}prefetch"), "prefetch"),
            a(&format!("{topic}interleave"), "interleave"),
            a(record, "reader buffer")
        ),
        format!(
            "Other data reading or processing: you may consider using the {} (if you are not using it now)",
            a("https://www.tensorflow.org/programmers_guide/datasets", "tf.data API")
        ),
    ]
}

fn prop(t: &mut DataTable, key: &str, value: impl Into<String>) {
    t.properties.insert(key.to_owned(), value.into());
}

/// The steps table (`GenerateInputPipelineAnalysisDataTable`), which the overview page shows too.
pub fn steps_table(a: &InputPipelineAnalysis) -> DataTable {
    match &a.steps {
        Steps::Generic { steps, breakdown } => generic_steps_table(a, steps, breakdown.as_deref()),
        Steps::Tpu(tpu) => tpu_input_pipeline::steps_table(
            tpu,
            &a.hardware_type,
            &a.step_time_summary,
            &a.summary_next_step,
        ),
    }
}

fn generic_steps_table(
    a: &InputPipelineAnalysis,
    steps: &[StepDetails],
    breakdown: Option<&StepTimeBreakdown>,
) -> DataTable {
    let mut t = DataTable::default();
    for (id, label) in [
        ("stepnum", "Step number"),
        ("deviceComputeTimeMs", "Device compute"),
        ("deviceToDeviceTimeMs", "Device to device"),
        ("deviceCollectivesTimeMs", "Device collective communication"),
        ("hostComputeTimeMs", "Host compute"),
        ("kernelLaunchTimeMs", "Kernel launch"),
        ("infeedTimeMs", "Input"),
        ("outfeedTimeMs", "Output"),
        ("compileTimeMs", "Compilation"),
        ("otherTimeMs", "All others"),
    ] {
        t.column(id, if id == "stepnum" { "string" } else { "number" }, label);
    }
    t.column_with_role("tooltip", "string", "tooltip", "tooltip");
    t.column("stepTimeMs", "number", "Step time");
    prop(
        &mut t,
        "step_time_graph_column_ids",
        "stepnum,deviceComputeTimeMs,deviceToDeviceTimeMs,deviceCollectivesTimeMs,hostComputeTimeMs,kernelLaunchTimeMs,infeedTimeMs,outfeedTimeMs,compileTimeMs,otherTimeMs, tooltip",
    );
    prop(&mut t, "hardware_type", a.hardware_type.clone());
    let s = &a.step_time_summary;
    prop(&mut t, "steptime_ms_average", one_digit(s.average));
    prop(
        &mut t,
        "steptime_ms_standard_deviation",
        one_digit(s.standard_deviation),
    );
    prop(&mut t, "steptime_ms_minimum", one_digit(s.minimum));
    prop(&mut t, "steptime_ms_maximum", one_digit(s.maximum));
    if let Some(b) = breakdown {
        for (key, summary) in [
            ("device_compute_time_ms", &b.device_compute_ms),
            ("device_to_device_time_ms", &b.device_to_device_ms),
            ("device_collectives_time_ms", &b.device_collectives_ms),
            ("infeed_time_ms", &b.input_ms),
            ("outfeed_time_ms", &b.output_ms),
            ("host_compute_time_ms", &b.host_compute_ms),
            ("kernel_launch_time_ms", &b.host_prepare_ms),
            ("compile_time_ms", &b.host_compile_ms),
            ("other_time_ms", &b.unknown_time_ms),
        ] {
            prop(&mut t, &format!("{key}_avg"), one_digit(summary.average));
            prop(
                &mut t,
                &format!("{key}_sdv"),
                one_digit(summary.standard_deviation),
            );
        }
    }
    // The generic summary: each "bottleneck" property holds the statement, as xprof writes it.
    let b = &a.bottleneck;
    prop(&mut t, "input_conclusion", b.input_statement.clone());
    for (key, value) in [
        ("device_collectives", &b.device_collectives_statement),
        ("kernel_launch", &b.kernel_launch_statement),
        ("all_other", &b.all_other_statement),
    ] {
        prop(&mut t, &format!("{key}_bottleneck"), value.clone());
        prop(&mut t, &format!("{key}_statement"), value.clone());
    }
    prop(&mut t, "summary_nextstep", a.summary_next_step.clone());
    for d in steps {
        let tooltip = format!(
            "Step {}, duration: {} ms\n-All others: {} ms\n-Compilation: {} ms\n-Output: {} ms\n-Input: {} ms\n-Kernel launch: {} ms\n-Host compute: {} ms\n-Device collectives: {} ms\n-Device to device: {} ms\n-Device compute: {} ms",
            d.step_name,
            two_digits(d.step_time_ms),
            two_digits(d.unknown_time_ms),
            two_digits(d.host_compile_ms),
            two_digits(d.output_ms),
            two_digits(d.host_wait_input_ms + d.host_to_device_ms),
            two_digits(d.host_prepare_ms),
            two_digits(d.host_compute_ms),
            two_digits(d.device_collectives_ms),
            two_digits(d.device_to_device_ms),
            two_digits(d.device_compute_ms),
        );
        t.rows.push(vec![
            Cell::Text(d.step_name.clone()),
            Cell::Number(d.device_compute_ms),
            Cell::Number(d.device_to_device_ms),
            Cell::Number(d.device_collectives_ms),
            Cell::Number(d.host_compute_ms),
            Cell::Number(d.host_prepare_ms),
            Cell::Number(d.host_wait_input_ms + d.host_to_device_ms),
            Cell::Number(d.output_ms),
            Cell::Number(d.host_compile_ms),
            Cell::Number(d.unknown_time_ms),
            Cell::Text(tooltip),
            Cell::Number(d.step_time_ms),
        ]);
    }
    t
}

/// The table of the core that waited longest for input at each step (`GenerateMaxInfeedCoreTable`):
/// empty but on a TPU.
fn max_infeed_core_table(a: &InputPipelineAnalysis) -> DataTable {
    match &a.steps {
        Steps::Tpu(tpu) => tpu_input_pipeline::max_infeed_core_table(tpu),
        Steps::Generic { .. } => DataTable::default(),
    }
}

/// The host's input ops (`GenerateHostTable`).
fn host_table(a: &InputPipelineAnalysis) -> DataTable {
    let mut t = DataTable::default();
    t.column("opName", "string", "Input Op");
    t.column("count", "number", "Count");
    t.column("timeInMs", "number", "Total Time (in ms)");
    t.column(
        "timeInPercent",
        "number",
        "Total Time (as % of total input-processing time)",
    );
    t.column("selfTimeInMs", "number", "Total Self Time (in ms)");
    t.column(
        "selfTimeInPercent",
        "number",
        "Total Self Time (as % of total input-processing time)",
    );
    t.column("category", "string", "Category");
    for d in &a.input_op_details {
        t.rows.push(vec![
            Cell::Text(d.op_name.clone()),
            Cell::Number(f64::from(d.count)),
            Cell::Number(d.time_in_ms),
            Cell::Number(d.time_in_percent / 100.0),
            Cell::Number(d.self_time_in_ms),
            Cell::Number(d.self_time_in_percent / 100.0),
            Cell::Text(d.category.to_owned()),
        ]);
    }
    let b = &a.input_time_breakdown;
    let f = |v: f64| crate::tools::format::fixed(v, 3);
    prop(&mut t, "enqueue_us", f(b.enqueue_us));
    prop(&mut t, "demanded_file_read_us", f(b.demanded_file_read_us));
    prop(&mut t, "advanced_file_read_us", f(b.advanced_file_read_us));
    prop(&mut t, "preprocessing_us", f(b.preprocessing_us));
    prop(
        &mut t,
        "unclassified_nonequeue_us",
        f(b.unclassified_non_enqueue_us),
    );
    t
}

fn recommendation_table() -> DataTable {
    let mut t = DataTable::default();
    t.column("link", "string", "link");
    for r in recommendations() {
        t.rows.push(vec![Cell::Text(r)]);
    }
    t
}

/// The diagnostics table (`GenerateDiagnosticsDataTable`): info, then warnings, then errors.
pub(crate) fn diagnostics_table(
    info: &[String],
    warnings: &[String],
    errors: &[String],
) -> DataTable {
    let mut t = DataTable::default();
    t.column("severity", "string", "Severity");
    t.column("message", "string", "Message");
    for (severity, list) in [("INFO", info), ("WARNING", warnings), ("ERROR", errors)] {
        for m in list {
            t.rows
                .push(vec![Cell::Text(severity.into()), Cell::Text(m.clone())]);
        }
    }
    t
}

/// The tool's five tables: the max-infeed cores, the steps, the host's input ops, the
/// recommendations, the diagnostics.
pub fn data_tables(a: &InputPipelineAnalysis) -> [DataTable; 5] {
    [
        max_infeed_core_table(a),
        steps_table(a),
        host_table(a),
        recommendation_table(),
        diagnostics_table(&[], &a.warnings, &[]),
    ]
}

/// What the analysis of this OpStats shows that is not xprof's (both pages show it), each a
/// short description; empty when all of it is.
pub fn missing(stats: &OpStats) -> Vec<String> {
    match analyze(stats).map(|a| a.steps) {
        Ok(Steps::Tpu(tpu)) => tpu.missing,
        _ => Vec::new(),
    }
}

/// The tool's JSON, as xprof's `xspace_to_tool_data(..., "input_pipeline_analyzer", ...)`
/// returns it for a profile of this OpStats.
pub fn to_json(stats: &OpStats) -> Result<String, Unsupported> {
    let tables = data_tables(&analyze(stats)?);
    Ok(format!(
        "[{}]",
        tables
            .iter()
            .map(DataTable::to_json)
            .collect::<Vec<_>>()
            .join(",")
    ))
}

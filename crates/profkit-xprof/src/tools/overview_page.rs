//! `overview_page`: the profile at a glance, from an OpStats (xprof's
//! `ConvertOpStatsToOverviewPage` and `OverviewPageToJson`), as seven DataTables: the analysis
//! (the top ten device ops by self time and the run's shares as properties), the steps (the
//! input pipeline's steps table, [`input_pipeline::steps_table`]), the run environment, the
//! recommendation (tips and the bottleneck verdicts), the inference latency, an empty object, and
//! the diagnostics.
//!
//! The analysis table has the GPU columns (TensorCore eligibility and use, from the kernel stats)
//! when the device type names a GPU, else the TPU ones (on a TPU with its duty cycle and idle
//! shares). Percentages are shown as printf's `%.1f` with a `%`.
//!
//! Not from the OpStats: for a run that is not training, xprof fills the inference latency table
//! from the XSpace's inference events (`ConvertMultiXSpaceToInferenceStats`); rendered from an
//! OpStats alone, that table has no rows, as xprof's has for every profile without
//! inference requests (every case here).

use std::collections::HashMap;

use crate::datatable::{Cell, DataTable};
use crate::op_stats::roofline::safe_divide;
use crate::op_stats::{is_idle, sorted};
use crate::proto::{HardwareType, OpMetricsDb, OpStats, RunEnvironment};
use crate::tools::format::{one_digit, rfc3339_full, six_digits, two_digits};
use crate::tools::framework_op_stats::tf_metrics_from_device;
use crate::tools::input_pipeline::{
    self, InputPipelineAnalysis, Steps, Unsupported, diagnostics_table,
};

/// Device ops the analysis table lists.
const TOP_OPS: usize = 10;

const NO_DEVICE_TRACE: &str = "No TensorCore device trace was collected. This might happen if your job hadn't been run on the device when sampling was turned on. You could try the sampling again later.";

/// One of the top device ops (`OverviewTfOp`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopOp {
    /// The framework op's name.
    pub name: String,
    /// Its type.
    pub category: String,
    /// Self time over the device's total time.
    pub self_time_fraction: f64,
    /// Running sum of the fractions.
    pub cumulative_time_fraction: f64,
    /// GFLOP/s over its total time.
    pub flop_rate: f64,
    /// Whether the op may use TensorCores (kernel stats).
    pub is_op_tensorcore_eligible: bool,
    /// Whether a kernel of the op used them.
    pub is_op_using_tensorcore: bool,
}

/// `OverviewPageAnalysis`, the shares the analysis table shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Analysis {
    /// The top device ops.
    pub top_device_ops: Vec<TopOp>,
    /// Share of 16-bit device compute, percent.
    pub device_compute_16bit_percent: f64,
    /// Share of 32-bit device compute, percent.
    pub device_compute_32bit_percent: f64,
    /// Host ops' share of all op occurrences, percent.
    pub host_tf_op_percent: f64,
    /// Device ops' share, percent.
    pub device_tf_op_percent: f64,
    /// The host trace level.
    pub host_trace_level: u32,
    /// Eager host op time, percent of host op time.
    pub host_op_time_eager_percent: f64,
    /// Eager device op time, percent of device op time.
    pub device_op_time_eager_percent: f64,
    /// Outside-compilation device op time, percent.
    pub device_op_time_outside_compilation_percent: f64,
    /// TPU: busy over busy and idle time, percent.
    pub device_duty_cycle_percent: f64,
    /// TPU: the same over high-confidence times.
    pub device_duty_cycle_high_confidence_percent: f64,
    /// TPU: high-confidence idle time, picoseconds.
    pub idle_time_high_confidence_ps: f64,
    /// TPU: device idle share, percent.
    pub device_idle_time_percent: f64,
    /// TPU: host idle share, percent.
    pub host_idle_time_percent: f64,
    /// Matrix unit utilisation (performance counters), percent.
    pub mxu_utilization_percent: f64,
    /// HBM utilisation (performance counters), percent.
    pub hbm_utilization_percent: f64,
    /// TPU with SparseCores: the SparseCores' average step time, input, output and idle time,
    /// and xprof 2.24.2's average step and SparseCore active times, ms (from the input
    /// pipeline's TPU breakdown; all 0 without SparseCore steps).
    pub sparse_core_ms: [f64; 6],
    /// TPU without SparseCores: xprof 2.24.2's average TensorCore and step active times, ms
    /// (from the input pipeline's TPU breakdown), when the host has TPU steps.
    pub tensor_core_active_ms: Option<[f64; 2]>,
}

/// `IdleTimeRatio`.
fn idle_ratio(db: &OpMetricsDb) -> f64 {
    1.0 - safe_divide(db.total_op_time_ps as f64, db.total_time_ps as f64)
}

/// `IsOutsideCompilationOp`.
fn is_outside_compilation(provenance: &str, hlo_expression: &str) -> bool {
    provenance.ends_with(":XlaSendToHost")
        || provenance.ends_with(":XlaRecvFromHost")
        || (hlo_expression.contains("send-done")
            && hlo_expression.contains("is_host_transfer=true"))
}

/// `ComputeAnalysisResult` (and, on a TPU, `ComputeTpuAnalysisResult` without performance limits).
pub fn analysis(stats: &OpStats) -> Analysis {
    let empty = OpMetricsDb::default();
    let device = stats.device_op_metrics_db.as_ref().unwrap_or(&empty);
    let host = stats.host_op_metrics_db.as_ref().unwrap_or(&empty);
    let device_tf = tf_metrics_from_device(device, false);
    // `GroupKernelReportsByOpName`: (eligible, as the first report says; time on TensorCores).
    let mut kernels: HashMap<&str, (bool, u64)> = HashMap::new();
    if let Some(db) = &stats.kernel_stats_db {
        for r in &db.reports {
            let e = kernels
                .entry(r.op_name.as_str())
                .or_insert((r.is_op_tensor_core_eligible, 0));
            if r.is_kernel_using_tensor_core {
                e.1 = e.1.wrapping_add(r.total_duration_ns);
            }
        }
    }
    let mut a = Analysis::default();
    let total = device_tf.total_time_ps as f64;
    let mut cumulative = 0.0;
    for m in sorted(&device_tf, TOP_OPS) {
        let fraction = safe_divide(m.self_time_ps as f64, total);
        cumulative += fraction;
        let (eligible, using) = kernels
            .get(m.name.as_str())
            .map_or((false, false), |(e, tc)| (*e, *tc != 0));
        a.top_device_ops.push(TopOp {
            name: m.name.clone(),
            category: m.category.clone(),
            self_time_fraction: fraction,
            cumulative_time_fraction: cumulative,
            flop_rate: safe_divide(m.flops_v2, m.time_ps as f64 / 1000.0),
            is_op_tensorcore_eligible: eligible,
            is_op_using_tensorcore: using,
        });
    }
    let precision = device.precision_stats.unwrap_or_default();
    let compute = precision
        .compute_16bit_ps
        .wrapping_add(precision.compute_32bit_ps) as f64;
    a.device_compute_16bit_percent =
        100.0 * safe_divide(precision.compute_16bit_ps as f64, compute);
    a.device_compute_32bit_percent =
        100.0 * safe_divide(precision.compute_32bit_ps as f64, compute);

    let (host_ops, host_time, host_eager) = op_counts(host);
    let (device_ops, device_time, device_eager) = op_counts(&device_tf);
    let outside = device
        .metrics_db
        .iter()
        .filter(|m| is_outside_compilation(&m.provenance, &m.long_name))
        .fold(0_u64, |acc, m| acc.wrapping_add(m.self_time_ps));
    let all_ops = host_ops.wrapping_add(device_ops) as f64;
    a.host_tf_op_percent = 100.0 * safe_divide(host_ops as f64, all_ops);
    a.device_tf_op_percent = 100.0 * safe_divide(device_ops as f64, all_ops);
    let env = stats.run_environment.clone().unwrap_or_default();
    a.host_trace_level = env.host_trace_level;
    a.host_op_time_eager_percent = 100.0 * safe_divide(host_eager as f64, host_time as f64);
    a.device_op_time_eager_percent = 100.0 * safe_divide(device_eager as f64, device_time as f64);
    a.device_op_time_outside_compilation_percent =
        100.0 * safe_divide(outside as f64, device_time as f64);

    // xprof 2.24.2 goes by the run's hardware type here (not by its device type's name).
    if input_pipeline::hardware_type(stats) == HardwareType::Tpu {
        a.device_duty_cycle_percent = 100.0
            * safe_divide(
                device.busy_time_ps as f64,
                device.busy_time_ps.wrapping_add(device.idle_time_ps) as f64,
            );
        a.device_duty_cycle_high_confidence_percent = 100.0
            * safe_divide(
                device.busy_time_high_confidence_ps as f64,
                device
                    .busy_time_high_confidence_ps
                    .wrapping_add(device.idle_time_high_confidence_ps) as f64,
            );
        a.idle_time_high_confidence_ps = device.idle_time_high_confidence_ps as f64;
        a.device_idle_time_percent = idle_ratio(device) * 100.0;
        a.host_idle_time_percent = idle_ratio(host) * 100.0;
    }
    let counters = stats.performance_counter_result.unwrap_or_default();
    a.mxu_utilization_percent = counters.matrix_unit_utilization_percent;
    a.hbm_utilization_percent = counters.hbm_utilization_percent;
    a
}

/// Occurrences of every op, self time of the ops but idle, and of the eager ones.
fn op_counts(db: &OpMetricsDb) -> (u64, u64, u64) {
    let mut ops = 0_u64;
    let mut time = 0_u64;
    let mut eager = 0_u64;
    for m in &db.metrics_db {
        ops = ops.wrapping_add(u64::from(m.occurrences));
        if !is_idle(m) {
            time = time.wrapping_add(m.self_time_ps);
            if m.is_eager {
                eager = eager.wrapping_add(m.self_time_ps);
            }
        }
    }
    (ops, time, eager)
}

/// `StrFormatToPercentage`.
fn percent(v: f64) -> String {
    if v >= 0.0 {
        format!("{}%", crate::tools::format::fixed(v, 1))
    } else {
        "unknown".to_owned()
    }
}

fn prop(t: &mut DataTable, key: &str, value: impl Into<String>) {
    t.properties.insert(key.to_owned(), value.into());
}

/// `AddCommonStats`.
fn common_stats(t: &mut DataTable, a: &Analysis) {
    prop(t, "host_trace_level", a.host_trace_level.to_string());
    prop(t, "host_tf_op_percent", percent(a.host_tf_op_percent));
    prop(t, "device_tf_op_percent", percent(a.device_tf_op_percent));
    prop(
        t,
        "host_op_time_eager_percent",
        percent(a.host_op_time_eager_percent),
    );
    prop(
        t,
        "device_op_time_eager_percent",
        percent(a.device_op_time_eager_percent),
    );
    prop(t, "remark_text", "");
    prop(t, "remark_color", "");
    prop(
        t,
        "mxu_utilization_percent",
        percent(a.mxu_utilization_percent),
    );
    prop(
        t,
        "hbm_utilization_percent",
        percent(a.hbm_utilization_percent),
    );
    let [step, infeed, outfeed, idle, active_step, sc_active] = a.sparse_core_ms;
    if step != 0.0 {
        prop(t, "sc_steptime_average", one_digit(step));
        prop(t, "sc_infeed_time_avg", one_digit(infeed));
        prop(t, "sc_outfeed_time_avg", one_digit(outfeed));
        prop(t, "sc_idle_time_avg", one_digit(idle));
        prop(t, "active_steptime_ms_average", two_digits(active_step));
        prop(t, "sc_active_ms_average", two_digits(sc_active));
    }
}

/// The analysis table: GPU columns when the device type names a GPU, else TPU ones.
pub fn analysis_table(a: &Analysis, device_type: &str) -> DataTable {
    let mut t = DataTable::default();
    common_stats(&mut t, a);
    let gpu = device_type.contains("GPU");
    if !gpu {
        // No performance limits are given, so both utilisations stay 0.
        prop(
            &mut t,
            "flop_rate_utilization_relative_to_roofline",
            percent(0.0),
        );
        prop(
            &mut t,
            "memory_bw_utilization_relative_to_hw_limit",
            percent(0.0),
        );
        prop(
            &mut t,
            "device_idle_time_percent",
            percent(a.device_idle_time_percent),
        );
        prop(
            &mut t,
            "device_duty_cycle_percent",
            percent(a.device_duty_cycle_percent),
        );
        prop(
            &mut t,
            "device_duty_cycle_high_confidence_percent",
            percent(a.device_duty_cycle_high_confidence_percent),
        );
        if a.idle_time_high_confidence_ps != 0.0 {
            prop(
                &mut t,
                "idle_time_high_confidence_ps",
                six_digits(a.idle_time_high_confidence_ps),
            );
            // Seen in xprof 2.24.2's pages (its published source has no active times): with a
            // high-confidence idle time and TPU steps, the TensorCore's and the step's average
            // active times.
            if let Some([tc_active, active_step]) = a.tensor_core_active_ms {
                prop(&mut t, "tc_active_ms_average", two_digits(tc_active));
                prop(
                    &mut t,
                    "active_steptime_ms_average",
                    two_digits(active_step),
                );
            }
        }
        prop(
            &mut t,
            "host_idle_time_percent",
            percent(a.host_idle_time_percent),
        );
    }
    t.column("selfTimePercent", "number", "Time (%)");
    t.column("cumulativeTimePercent", "number", "Cumulative time (%)");
    t.column("category", "string", "Category");
    t.column("operation", "string", "Operation");
    if gpu {
        t.column("flopRate", "number", "GFLOPs/Sec");
        t.column("tcEligibility", "boolean", "TensorCore eligibility");
        t.column("tcUtilization", "boolean", "Op is using TensorCore");
    } else {
        t.column(
            "flopRate",
            "number",
            "Bf16 Normalized Flop Rate(GFLOPs/Sec)",
        );
    }
    for op in &a.top_device_ops {
        let mut row = vec![
            Cell::Number(op.self_time_fraction),
            Cell::Number(op.cumulative_time_fraction),
            Cell::Text(op.category.clone()),
            Cell::Text(op.name.clone()),
            Cell::Number(op.flop_rate),
        ];
        if gpu {
            row.push(Cell::Bool(op.is_op_tensorcore_eligible));
            row.push(Cell::Bool(op.is_op_using_tensorcore));
        }
        t.rows.push(row);
    }
    if gpu {
        prop(
            &mut t,
            "device_compute_16bit_percent",
            percent(a.device_compute_16bit_percent),
        );
        prop(
            &mut t,
            "device_compute_32bit_percent",
            percent(a.device_compute_32bit_percent),
        );
    }
    t
}

/// The run environment table (`GenerateRunEnvironmentDataTable`): a row per host's job info.
fn run_environment_table(env: &RunEnvironment) -> DataTable {
    let mut t = DataTable::default();
    for id in ["host_id", "command_line", "start_time", "bns_address"] {
        t.column(id, "string", id);
    }
    for job in &env.host_dependent_job_info {
        t.rows.push(vec![
            Cell::Text(job.host_id.clone()),
            Cell::Text(job.command_line.clone()),
            Cell::Text(rfc3339_full(job.start_time)),
            Cell::Text(job.bns_address.clone()),
        ]);
    }
    let count = |n: i32| {
        if n >= 0 {
            n.to_string()
        } else {
            "unknown".to_owned()
        }
    };
    prop(&mut t, "host_count", count(env.host_count));
    let mut tasks = count(env.task_count);
    if env.task_count > 0 && env.host_count > 0 {
        tasks.push_str(&format!(
            " (num tasks per host = {})",
            env.task_count / env.host_count
        ));
    }
    prop(&mut t, "task_count", tasks);
    prop(&mut t, "device_type", env.device_type.clone());
    let mut cores = count(env.device_core_count);
    if env.replica_count > 0 && env.num_cores_per_replica > 0 {
        cores.push_str(&format!(
            " (Replica count = {}, num cores per replica = {})",
            env.replica_count, env.num_cores_per_replica
        ));
    }
    prop(&mut t, "device_core_count", cores);
    prop(&mut t, "is_training", env.is_training.to_string());
    t
}

/// The recommendation table (`GenerateRecommendationResultDataTable`).
fn recommendation_table(stats: &OpStats, ip: &InputPipelineAnalysis) -> DataTable {
    let hardware = input_pipeline::hardware_type(stats);
    // `ComputeBottleneckAnalysis` over the input analysis' step details: a TPU's cannot be
    // read as generic ones, which leaves the analysis empty when there is a step.
    let b = match &ip.steps {
        Steps::Generic { steps, .. } => {
            input_pipeline::bottleneck_analysis(&ip.input_time_breakdown, steps)
        }
        Steps::Tpu(tpu) if tpu.steps.is_empty() => {
            input_pipeline::bottleneck_analysis(&ip.input_time_breakdown, &[])
        }
        Steps::Tpu(_) => input_pipeline::BottleneckAnalysis::default(),
    };
    let mut t = DataTable::default();
    t.column("tip_type", "string", "tip_type");
    t.column("link", "string", "link");
    t.column("description", "string", "description");
    let device = input_pipeline::hardware_name(hardware);
    let (timeline, tool) = if hardware == HardwareType::Tpu {
        ("TPU core", "op_profile")
    } else {
        (device, "framework_op_stats")
    };
    let a = |url: &str, text: &str| format!("<a href=\"{url}\" target=\"_blank\">{text}</a>");
    let tips = [
        ("faq", "Refer to the TF2 Profiler FAQ".to_owned(), "Tool troubleshooting / FAQ"),
        (
            "host",
            "input_pipeline_analyzer (especially Section 3 for the breakdown of input operations on the Host)".to_owned(),
            "Next steps for reducing the Host time",
        ),
        (
            "host",
            "trace_viewer (look at the activities on the timeline of each Host Thread near the bottom of the trace view)".to_owned(),
            "Next steps for reducing the Host time",
        ),
        (
            "device",
            format!("{tool} (identify the time-consuming operations executed on the {device})"),
            "Next steps for reducing the Device time",
        ),
        (
            "device",
            format!("trace_viewer (look at the activities on the timeline of each {timeline} in the trace view)"),
            "Next steps for reducing the Device time",
        ),
        (
            "doc",
            a("https://www.tensorflow.org/guide/data_performance_analysis", "Analyze tf.data performance with the TF Profiler"),
            "Other useful resources",
        ),
        (
            "doc",
            a("https://www.tensorflow.org/guide/data_performance", "Better performance with the tf.data API"),
            "Other useful resources",
        ),
    ];
    for (kind, link, description) in tips {
        t.rows.push(vec![
            Cell::Text(kind.into()),
            Cell::Text(link),
            Cell::Text(description.into()),
        ]);
    }
    prop(&mut t, "bottleneck", b.input_classification.clone());
    prop(&mut t, "statement", b.input_statement.clone());
    prop(
        &mut t,
        "kernel_launch_bottleneck",
        b.kernel_launch_classification.clone(),
    );
    prop(
        &mut t,
        "kernel_launch_statement",
        b.kernel_launch_statement.clone(),
    );
    prop(
        &mut t,
        "all_other_bottleneck",
        b.all_other_classification.clone(),
    );
    prop(&mut t, "all_other_statement", b.all_other_statement.clone());
    prop(&mut t, "precision_statement", precision_statement(stats));
    prop(
        &mut t,
        "device_collectives_bottleneck",
        b.device_collectives_classification.clone(),
    );
    prop(
        &mut t,
        "device_collectives_statement",
        b.device_collectives_statement.clone(),
    );
    let non_bottleneck = match b.input_classification.as_str() {
        "host" => "device",
        "device" => "host",
        _ => "",
    };
    prop(&mut t, "non_bottleneck_tip_types", non_bottleneck);
    t
}

/// `GeneratePrecisionStatement`: said when under a tenth of the device compute is 16 bit.
fn precision_statement(stats: &OpStats) -> String {
    let p = stats
        .device_op_metrics_db
        .as_ref()
        .and_then(|d| d.precision_stats)
        .unwrap_or_default();
    let total = p.compute_16bit_ps.wrapping_add(p.compute_32bit_ps);
    if total > 0 {
        let percent_16 = 100.0 * p.compute_16bit_ps as f64 / total as f64;
        if percent_16 < 10.0 {
            return format!(
                "Only {}% of device computation is 16 bit. So you might want to replace more 32-bit Ops by 16-bit Ops to improve performance (if the reduced accuracy is acceptable).",
                one_digit(percent_16)
            );
        }
    }
    String::new()
}

/// The inference latency table: its columns (its rows come from the XSpace, not the OpStats).
fn inference_latency_table() -> DataTable {
    let mut t = DataTable::default();
    t.column("percentile", "string", "percentile");
    t.column("hostTimeMs", "number", "Host time (in ms)");
    t.column("deviceTimeMs", "number", "Device time (in ms)");
    t.column(
        "communicationTimeMs",
        "number",
        "Host-device communication time (in ms)",
    );
    t.column("totalTimeMs", "number", "Total latency (in ms)");
    t
}

/// `PopulateOverviewDiagnostics`: the OpStats' errors (sorted; else one when a device run has
/// no device core), its warnings, then the steps' warnings.
fn diagnostics(stats: &OpStats) -> DataTable {
    let diag = stats.diagnostics.clone().unwrap_or_default();
    let env = stats.run_environment.clone().unwrap_or_default();
    let mut errors = diag.errors.clone();
    errors.sort();
    if errors.is_empty() && env.device_type != "CPU" && env.device_core_count <= 0 {
        errors.push(NO_DEVICE_TRACE.to_owned());
    }
    let mut warnings = diag.warnings.clone();
    warnings.extend(input_pipeline::step_warnings(stats));
    diagnostics_table(&[], &warnings, &errors)
}

/// The page's seven parts, the sixth (an empty object) aside: analysis, steps, run
/// environment, recommendation, inference latency, diagnostics.
pub fn data_tables(stats: &OpStats) -> Result<[DataTable; 6], Unsupported> {
    let ip = input_pipeline::analyze(stats)?;
    let env = stats.run_environment.clone().unwrap_or_default();
    let mut a = analysis(stats);
    if let Steps::Tpu(tpu) = &ip.steps
        && tpu.breakdown.sparse_core.is_none()
        && !tpu.steps.is_empty()
    {
        a.tensor_core_active_ms = Some([
            tpu.breakdown.tc_active_ms.average,
            tpu.breakdown.active_step_time_ms.average,
        ]);
    }
    if let Steps::Tpu(tpu) = &ip.steps
        && let Some([_, infeed, outfeed, idle, step, active]) = &tpu.breakdown.sparse_core
    {
        a.sparse_core_ms = [
            step.average,
            infeed.average,
            outfeed.average,
            idle.average,
            tpu.breakdown.active_step_time_ms.average,
            active.average,
        ];
    }
    Ok([
        analysis_table(&a, &env.device_type),
        input_pipeline::steps_table(&ip),
        run_environment_table(&env),
        recommendation_table(stats, &ip),
        inference_latency_table(),
        diagnostics(stats),
    ])
}

/// The tool's JSON, as xprof's `xspace_to_tool_data(..., "overview_page", ...)` returns it for
/// a profile of this OpStats.
pub fn to_json(stats: &OpStats) -> Result<String, Unsupported> {
    let [a, steps, env, reco, latency, diag] = data_tables(stats)?;
    Ok(format!(
        "[{},{},{},{},{}, {{}},{}]",
        a.to_json(),
        steps.to_json(),
        env.to_json(),
        reco.to_json(),
        latency.to_json(),
        diag.to_json()
    ))
}

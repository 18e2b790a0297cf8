//! `framework_op_stats` (the TF Stats page): every framework op, device ops first then host ops,
//! ranked by self time, with and without the idle op, as two DataTables (xprof's
//! `ConvertOpStatsToTfStats` and `TfStatsToDataTableJson`).
//!
//! Each side lists at most 500 ops (sorted by self time, then by name). Times are in
//! microseconds; the fractions are of the side's total time (with idle) or of its time in ops
//! (without); the cumulative fractions run down the side. The rates come from the op's FLOPs and
//! bytes over its total time, and `bound_by` from the device's peaks (PerfEnv) by xprof's roofline
//! rules ([`crate::op_stats::roofline`]), so ops without FLOPs or bytes (every host op) are bound
//! by "Unknown". The device side sums device ops by the framework op of their provenance; an op
//! without one (a TPU `copy-done`, say) stands as itself, of type "Unknown"; the memory access
//! breakdown is not carried over, so every byte counts as HBM. A GPU profile gets the
//! `gpu_tensorcore_utilization` column. The table properties name the task type ("Training"
//! when op names have gradient scopes) and the architecture ("Unknown").

use crate::datatable::{Cell, DataTable};
use crate::op_stats::kernel_stats::{OpKernelStats, by_op_name};
use crate::op_stats::roofline::{roofline, safe_divide};
use crate::op_stats::{DbBuilder, ModelTracker, is_idle, sorted};
use crate::proto::{HardwareType, KernelStatsDb, OpMetrics, OpMetricsDb, OpStats, PerfEnv};

/// Ops listed per side (device, host).
const MAX_OPS: usize = 500;

/// One row of the TF Stats table (`TfStatsRecord`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TfStatsRecord {
    /// 1-based rank over both sides.
    pub rank: u64,
    /// "Device" or "Host".
    pub host_or_device: &'static str,
    /// The op's type (its category).
    pub op_type: String,
    /// The op's name.
    pub op_name: String,
    /// Times the op ran.
    pub occurrences: u64,
    /// Total time, microseconds.
    pub total_time_in_us: f64,
    /// Average time, microseconds.
    pub avg_time_in_us: f64,
    /// Total self time, microseconds.
    pub total_self_time_in_us: f64,
    /// Average self time, microseconds.
    pub avg_self_time_in_us: f64,
    /// Self time over the device side's total.
    pub device_total_self_time_as_fraction: f64,
    /// Running sum of the device fractions.
    pub device_cumulative_total_self_time_as_fraction: f64,
    /// Self time over the host side's total.
    pub host_total_self_time_as_fraction: f64,
    /// Running sum of the host fractions.
    pub host_cumulative_total_self_time_as_fraction: f64,
    /// GFLOP/s.
    pub measured_flop_rate: f64,
    /// Model GFLOP/s.
    pub model_flop_rate: f64,
    /// GiB/s.
    pub measured_memory_bw: f64,
    /// FLOPs per byte.
    pub operational_intensity: f64,
    /// The resource that bounds the op.
    pub bound_by: &'static str,
    /// Whether the op ran eagerly.
    pub is_eager: bool,
    /// Fraction of the op's kernel time on tensor cores (device ops).
    pub gpu_tensorcore_utilization: f64,
}

fn pico_to_micro(ps: u64) -> f64 {
    ps as f64 / 1e6
}

fn record(on_device: bool, m: &OpMetrics, perf: &PerfEnv, hardware: HardwareType) -> TfStatsRecord {
    let total = pico_to_micro(m.time_ps);
    let total_self = pico_to_micro(m.self_time_ps);
    let occurrences = f64::from(m.occurrences);
    let r = roofline(m, perf, hardware);
    TfStatsRecord {
        host_or_device: if on_device { "Device" } else { "Host" },
        is_eager: m.is_eager,
        op_type: m.category.clone(),
        op_name: m.name.clone(),
        occurrences: u64::from(m.occurrences),
        total_time_in_us: total,
        avg_time_in_us: safe_divide(total, occurrences),
        total_self_time_in_us: total_self,
        avg_self_time_in_us: safe_divide(total_self, occurrences),
        measured_flop_rate: r.measured_flop_rate,
        model_flop_rate: r.model_flop_rate,
        measured_memory_bw: r.measured_memory_bw,
        operational_intensity: r.operational_intensity,
        bound_by: r.bound_by,
        ..TfStatsRecord::default()
    }
}

fn total_time_ps(db: &OpMetricsDb, exclude_idle: bool) -> u64 {
    if exclude_idle {
        db.total_op_time_ps
    } else {
        db.total_time_ps
    }
}

/// `GenerateTfStatsTable`.
fn table(
    host: &OpMetricsDb,
    device: &OpMetricsDb,
    kernels: &std::collections::HashMap<&str, OpKernelStats>,
    perf: &PerfEnv,
    hardware: HardwareType,
    exclude_idle: bool,
) -> Vec<TfStatsRecord> {
    let mut records: Vec<TfStatsRecord> = Vec::new();
    let mut rank = 0;
    let mut device_cumulative = 0.0;
    let device_total = pico_to_micro(total_time_ps(device, exclude_idle));
    for m in sorted(device, MAX_OPS) {
        if exclude_idle && is_idle(m) {
            continue;
        }
        let mut r = record(true, m, perf, hardware);
        if let Some(k) = kernels.get(r.op_name.as_str()) {
            r.gpu_tensorcore_utilization =
                safe_divide(k.tensor_core_duration_ns as f64, k.total_duration_ns as f64);
        }
        rank += 1;
        r.rank = rank;
        r.device_total_self_time_as_fraction = safe_divide(r.total_self_time_in_us, device_total);
        device_cumulative += r.device_total_self_time_as_fraction;
        r.device_cumulative_total_self_time_as_fraction = device_cumulative;
        records.push(r);
    }
    let mut host_cumulative = 0.0;
    let host_total = pico_to_micro(total_time_ps(host, exclude_idle));
    for m in sorted(host, MAX_OPS) {
        if exclude_idle && is_idle(m) {
            continue;
        }
        let mut r = record(false, m, perf, hardware);
        rank += 1;
        r.rank = rank;
        r.host_total_self_time_as_fraction = safe_divide(r.total_self_time_in_us, host_total);
        host_cumulative += r.host_total_self_time_as_fraction;
        r.host_cumulative_total_self_time_as_fraction = host_cumulative;
        records.push(r);
    }
    records
}

/// The TF Stats records of an OpStats: `(with idle, without idle)`.
///
/// The device side is the device op metrics database as framework ops
/// (`CreateTfMetricsDbFromDeviceOpMetricsDb`), each with the share of its kernels' time on
/// TensorCores (from the kernel stats database, by op name).
pub fn tf_stats(stats: &OpStats) -> (Vec<TfStatsRecord>, Vec<TfStatsRecord>) {
    let empty = OpMetricsDb::default();
    let host = stats.host_op_metrics_db.as_ref().unwrap_or(&empty);
    let device =
        tf_metrics_from_device(stats.device_op_metrics_db.as_ref().unwrap_or(&empty), true);
    let perf = stats.perf_env.clone().unwrap_or_default();
    let hardware = stats
        .run_environment
        .as_ref()
        .and_then(|e| HardwareType::try_from(e.hardware_type).ok())
        .unwrap_or(HardwareType::UnknownHardware);
    let empty_kernels = KernelStatsDb::default();
    let kernels = by_op_name(stats.kernel_stats_db.as_ref().unwrap_or(&empty_kernels));
    (
        table(host, &device, &kernels, &perf, hardware, false),
        table(host, &device, &kernels, &perf, hardware, true),
    )
}

/// `CreateTfMetricsDbFromDeviceOpMetricsDb`: device ops summed by the framework op they come
/// from (their provenance), the idle op kept when `with_idle`.
#[allow(deprecated)]
pub(crate) fn tf_metrics_from_device(device: &OpMetricsDb, with_idle: bool) -> OpMetricsDb {
    let mut builder = DbBuilder::default();
    for m in &device.metrics_db {
        if !with_idle && is_idle(m) {
            continue;
        }
        let (name, op_type) = if is_idle(m) {
            ("IDLE".to_owned(), "IDLE".to_owned())
        } else if m.provenance.is_empty() {
            (m.name.clone(), String::new())
        } else {
            let op = crate::preprocess::derived::tf_op::parse(&m.provenance);
            (op.name.to_owned(), op.op_type.to_owned())
        };
        let t = builder.lookup_or_insert(0, &name);
        if t.category.is_empty() {
            t.category = if op_type.is_empty() {
                "Unknown".to_owned()
            } else {
                op_type
            };
        }
        t.is_eager = m.is_eager;
        t.occurrences = t.occurrences.max(m.occurrences);
        t.time_ps = t.time_ps.wrapping_add(m.time_ps);
        t.self_time_ps = t.self_time_ps.wrapping_add(m.self_time_ps);
        t.flops = t.flops.wrapping_add(m.flops);
        t.flops_v2 += m.flops_v2;
        t.model_flops = t.model_flops.wrapping_add(m.model_flops);
        t.model_flops_v2 += m.model_flops_v2;
        t.bytes_accessed = t.bytes_accessed.wrapping_add(m.bytes_accessed);
        t.core_type = m.core_type;
    }
    builder.db.total_op_time_ps = device.total_op_time_ps;
    builder.db.total_time_ps = if with_idle {
        device.total_time_ps
    } else {
        device.total_op_time_ps
    };
    builder.db
}

const COLUMNS: [(&str, &str, &str); 17] = [
    ("rank", "number", "Rank"),
    ("host_or_device", "string", "Host/device"),
    ("type", "string", "Operation Type"),
    ("operation", "string", "Operation Name"),
    ("occurrences", "number", "#Occurrences"),
    ("total_time", "number", "Total time (us)"),
    ("avg_time", "number", "Avg. time (us)"),
    ("total_self_time", "number", "Total self-time (us)"),
    ("avg_self_time", "number", "Avg. self-time (us)"),
    (
        "device_total_self_time_percent",
        "number",
        "Total self-time on Device (%)",
    ),
    (
        "device_cumulative_total_self_time_percent",
        "number",
        "Cumulative total-self time on Device (%)",
    ),
    (
        "host_total_self_time_percent",
        "number",
        "Total self-time on Host (%)",
    ),
    (
        "Host_cumulative_total_self_time_percent",
        "number",
        "Cumulative total-self time on Host (%)",
    ),
    (
        "measured_flop_rate",
        "number",
        "Normalized FLOP Rate (FLOPs/s)",
    ),
    ("model_flop_rate", "number", "Model FLOP Rate (GFLOP/s)"),
    (
        "measured_memory_bw",
        "number",
        "Measured Memory BW (GBytes/Sec)",
    ),
    (
        "operational_intensity",
        "number",
        "Operational Intensity (FLOPs/Byte)",
    ),
];

/// One table (`TfStatsToDataTable`).
pub fn data_table(records: &[TfStatsRecord], gpu: bool) -> DataTable {
    let mut t = DataTable::default();
    for (id, kind, label) in COLUMNS {
        t.column(id, kind, label);
    }
    if gpu {
        t.column(
            "gpu_tensorcore_utilization",
            "number",
            "GPU TensorCore utilization",
        );
    }
    t.column("bound_by", "string", "Bound by");
    t.column("eager", "string", "Execution mode");
    let mut model = ModelTracker::default();
    for r in records {
        let mut row = vec![
            Cell::Number(r.rank as f64),
            Cell::Text(r.host_or_device.to_owned()),
            Cell::Text(r.op_type.clone()),
            Cell::Text(r.op_name.clone()),
            Cell::Number(r.occurrences as f64),
            Cell::Number(r.total_time_in_us),
            Cell::Number(r.avg_time_in_us),
            Cell::Number(r.total_self_time_in_us),
            Cell::Number(r.avg_self_time_in_us),
            Cell::Number(r.device_total_self_time_as_fraction),
            Cell::Number(r.device_cumulative_total_self_time_as_fraction),
            Cell::Number(r.host_total_self_time_as_fraction),
            Cell::Number(r.host_cumulative_total_self_time_as_fraction),
            Cell::Number(r.measured_flop_rate),
            Cell::Number(r.model_flop_rate),
            Cell::Number(r.measured_memory_bw),
            Cell::Number(r.operational_intensity),
        ];
        if gpu {
            row.push(Cell::Number(r.gpu_tensorcore_utilization));
        }
        row.push(Cell::Text(r.bound_by.to_owned()));
        row.push(Cell::Text(
            if r.is_eager { "Eager" } else { "Function" }.to_owned(),
        ));
        t.rows.push(row);
        model.process_op(&r.op_name, &r.op_type);
    }
    t.properties
        .insert("task_type".to_owned(), model.task_type().to_owned());
    t.properties.insert(
        "architecture_type".to_owned(),
        model.architecture_type().to_owned(),
    );
    t
}

/// Whether the tables get the GPU column: the run's device type names a GPU.
pub fn is_gpu(stats: &OpStats) -> bool {
    stats
        .run_environment
        .as_ref()
        .is_some_and(|e| e.device_type.contains("GPU"))
}

/// The tool's JSON, as xprof returns it: `[with idle, without idle]`.
pub fn to_json(stats: &OpStats) -> String {
    let (with_idle, without_idle) = tf_stats(stats);
    let gpu = is_gpu(stats);
    format!(
        "[{},{}]",
        data_table(&with_idle, gpu).to_json(),
        data_table(&without_idle, gpu).to_json()
    )
}

//! `hlo_stats` (the HLO Op Stats page): every device op of an OpStats, ranked by self time, as
//! one DataTable (xprof's `ConvertOpStatsToHloStats` and `HloStatsToDataTableJson`).
//!
//! The ops are the device op metrics database's, sorted by self time then name, each with its
//! SparseCore children listed after it (children's children too, only SparseCore ones). A top
//! op with no occurrence is left out with its children. Top ops are ranked from 1 with their
//! share of the device's total time and the running sum of those shares (in percent); children
//! have rank 0 and no shares. Each row gives the op's program, category, HLO name (its
//! expression's left of ` = `, without `%`), expression (its name when it has none), framework
//! op, times in microseconds, DMA stall fraction, FLOP rates and bandwidths by memory and its
//! bound on the device's roofline ([`crate::op_stats::roofline`]), the rematerialisation,
//! outside compilation and autotuning flags, its source line as xprof's page shows it, its TPU
//! core type, its parent and its energy.

use crate::datatable::{Cell, DataTable};
use crate::op_stats::roofline::{roofline, safe_divide};
use crate::op_stats::sorted;
use crate::proto::{HardwareType, OpMetrics, OpStats, PerfEnv, SourceInfo};

/// `OpMetrics::TpuCoreType::SPARSE_CORE`.
const SPARSE_CORE: i32 = 2;
/// `OpMetrics::TpuCoreType::TENSOR_CORE`.
const TENSOR_CORE: i32 = 1;

const COLUMNS: [(&str, &str, &str); 29] = [
    ("rank", "number", "Rank"),
    ("program_id", "string", "Program id"),
    ("category", "string", "HLO op category"),
    ("hlo_op_name", "string", "HLO op name"),
    ("hlo_op_expression", "string", "HLO op text"),
    ("tf_op_name", "string", "Framework op name"),
    ("occurrences", "number", "#Occurrences"),
    ("total_time", "number", "Total time (us)"),
    ("avg_time", "number", "Avg. time (us)"),
    ("total_self_time", "number", "Total self time (us)"),
    ("avg_self_time", "number", "Avg. self time (us)"),
    ("total_self_time_percent", "number", "Total self time (%)"),
    (
        "cumulative_total_self_time_percent",
        "number",
        "Cumulative total self time (%)",
    ),
    ("dma_stall_percent", "number", "%time stalled by DMA"),
    ("model_flop_rate", "number", "Model GFLOP/s"),
    ("normalized_flop_rate", "number", "Normalized GFLOP/s"),
    ("measured_memory_bw", "number", "Measured memory BW (GiB/s)"),
    ("hbm_bw", "number", "HBM BW (GiB/s)"),
    ("cmem_read_bw", "number", "CMEM Read BW (GiB/s)"),
    ("cmem_write_bw", "number", "CMEM Write BW (GiB/s)"),
    (
        "operational_intensity",
        "number",
        "Operational intensity (FLOPS/Byte)",
    ),
    ("bound_by", "string", "Bound by"),
    ("hlo_rematerialization", "string", "Rematerialization"),
    ("outside_compilation", "string", "Outside Compilation"),
    ("autotuned", "string", "Autotuned"),
    ("source_info", "string", "Source Info"),
    ("core_type", "string", "TPU core type"),
    ("parent_op_name", "string", "Parent op name"),
    ("vdd_energy", "number", "VDD Energy (J)"),
];

/// Picoseconds in microseconds, as the page shows times.
pub fn pico_to_micro(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// TSL's `IsRematerialization`: `.remat` in the expression's left side, or a framework op
/// inside a rematted computation.
pub fn is_rematerialization(expression: &str, framework_op: &str) -> bool {
    let left = expression
        .find('=')
        .map_or(expression, |i| &expression[..i]);
    left.contains(".remat") || framework_op.contains("/rematted_computation/")
}

/// TSL's `IsOutsideCompilationOp`: a framework op sending to or receiving from the host, or a
/// host-transfer `send-done`.
pub fn is_outside_compilation(framework_op: &str, expression: &str) -> bool {
    framework_op.ends_with(":XlaSendToHost")
        || framework_op.ends_with(":XlaRecvFromHost")
        || (expression.contains("send-done") && expression.contains("is_host_transfer=true"))
}

fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `SourceInfoFormattedText`: the op's source line as a cell of xprof's page (its stack in the
/// tooltip), empty without a file or line.
pub fn source_info_text(info: Option<&SourceInfo>) -> String {
    match info {
        Some(i) if !i.file_name.is_empty() && i.line_number != -1 => format!(
            "<div class='source-info-cell' title='{}'>{}:{}</div>",
            escape_html(&i.stack_frame),
            escape_html(&i.file_name),
            i.line_number
        ),
        _ => String::new(),
    }
}

/// The HLO op's name in its expression (`%name = ...`).
fn hlo_op_name(expression: &str) -> &str {
    let name = expression.split(" = ").next().unwrap_or("");
    name.strip_prefix('%').unwrap_or(name)
}

/// What a row needs besides the op.
struct Ctx<'a> {
    perf: &'a PerfEnv,
    hardware: HardwareType,
}

/// One row of the table, its values typed: what the page shows of an HLO op.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HloOpRow<'a> {
    /// The op's metrics.
    pub op: &'a OpMetrics,
    /// Its rank by self time among the top ops, from 1; 0 for a SparseCore child.
    pub rank: u64,
    /// The HLO op's name: its expression's left of ` = `, without `%`.
    pub hlo_op_name: &'a str,
    /// Its expression (its name when it has none).
    pub expression: &'a str,
    /// Its share of the device's total time (a fraction; 0 for a child).
    pub self_time_fraction: f64,
    /// The running sum of those shares (a fraction; 0 for a child).
    pub cumulative_self_time_fraction: f64,
    /// The time stalled by DMA, a fraction of its time.
    pub dma_stall_fraction: f64,
    /// Its place on the device's roofline.
    pub roofline: crate::op_stats::roofline::Roofline,
    /// Rematerialised ([`is_rematerialization`]).
    pub rematerialization: bool,
    /// Outside compilation ([`is_outside_compilation`]).
    pub outside_compilation: bool,
    /// Its TPU core type: `TensorCore`, `SparseCore` or empty.
    pub core_type: &'static str,
    /// The op a SparseCore child is under (empty for a top op).
    pub parent: &'a str,
}

fn typed<'a>(
    ctx: &Ctx<'_>,
    m: &'a OpMetrics,
    rank: u64,
    fractions: (f64, f64),
    parent: &'a str,
) -> HloOpRow<'a> {
    let expression = if m.long_name.is_empty() {
        &m.name
    } else {
        &m.long_name
    };
    HloOpRow {
        op: m,
        rank,
        hlo_op_name: hlo_op_name(expression),
        expression,
        self_time_fraction: fractions.0,
        cumulative_self_time_fraction: fractions.1,
        dma_stall_fraction: safe_divide(m.dma_stall_ps as f64, m.time_ps as f64),
        roofline: roofline(m, ctx.perf, ctx.hardware),
        rematerialization: is_rematerialization(&m.long_name, &m.provenance),
        outside_compilation: is_outside_compilation(&m.provenance, &m.long_name),
        core_type: match m.core_type {
            TENSOR_CORE => "TensorCore",
            SPARSE_CORE => "SparseCore",
            _ => "",
        },
        parent,
    }
}

fn row(h: &HloOpRow<'_>) -> Vec<Cell> {
    let m = h.op;
    let total = pico_to_micro(m.time_ps);
    let total_self = pico_to_micro(m.self_time_ps);
    let occurrences = f64::from(m.occurrences);
    let r = &h.roofline;
    let yes_no = |b: bool| Cell::Text(if b { "Yes" } else { "No" }.to_owned());
    vec![
        Cell::Number(h.rank as f64),
        Cell::Text(m.hlo_module_id.to_string()),
        Cell::Text(m.category.clone()),
        Cell::Text(h.hlo_op_name.to_owned()),
        Cell::Text(h.expression.to_owned()),
        Cell::Text(m.provenance.clone()),
        Cell::Number(occurrences),
        Cell::Number(total),
        Cell::Number(safe_divide(total, occurrences)),
        Cell::Number(total_self),
        Cell::Number(safe_divide(total_self, occurrences)),
        Cell::Number(h.self_time_fraction * 100.0),
        Cell::Number(h.cumulative_self_time_fraction * 100.0),
        Cell::Number(h.dma_stall_fraction),
        Cell::Number(r.model_flop_rate),
        Cell::Number(r.measured_flop_rate),
        Cell::Number(r.measured_memory_bw),
        Cell::Number(r.hbm_bw),
        Cell::Number(r.cmem_read_bw),
        Cell::Number(r.cmem_write_bw),
        Cell::Number(r.operational_intensity),
        Cell::Text(r.bound_by.to_owned()),
        yes_no(h.rematerialization),
        yes_no(h.outside_compilation),
        yes_no(m.autotuned),
        Cell::Text(source_info_text(m.source_info.as_ref())),
        Cell::Text(h.core_type.to_owned()),
        Cell::Text(h.parent.to_owned()),
        Cell::Number(m.vdd_energy_j.unwrap_or(0.0)),
    ]
}

/// The running rank and cumulative share of the top ops.
struct Running {
    rank: u64,
    cumulative: f64,
    total_us: f64,
}

/// `AddHloStatsRecordsRecursively`: the op (top ops always, children when SparseCore ops) and
/// its children, sorted.
fn add<'a>(
    rows: &mut Vec<HloOpRow<'a>>,
    ctx: &Ctx<'_>,
    m: &'a OpMetrics,
    running: Option<&mut Running>,
    parent: &'a str,
    depth: usize,
) {
    if m.occurrences == 0 {
        return;
    }
    if parent.is_empty() || m.core_type == SPARSE_CORE {
        let (rank, fractions) = match running {
            Some(run) => {
                run.rank += 1;
                let share = safe_divide(pico_to_micro(m.self_time_ps), run.total_us);
                run.cumulative += share;
                (run.rank, (share, run.cumulative))
            }
            None => (0, (0.0, 0.0)),
        };
        rows.push(typed(ctx, m, rank, fractions, parent));
    }
    // Children nest as deep as the file's messages do; the decoder bounds that depth.
    if depth > 100 {
        return;
    }
    if let Some(children) = &m.children {
        for child in sorted(children, usize::MAX) {
            add(rows, ctx, child, None, &m.name, depth + 1);
        }
    }
}

/// The rows of the page for an OpStats, typed, in the page's order
/// (`ConvertOpStatsToHloStats`).
pub fn rows(stats: &OpStats) -> Vec<HloOpRow<'_>> {
    let mut out = Vec::new();
    let Some(db) = &stats.device_op_metrics_db else {
        return out;
    };
    let perf = stats.perf_env.clone().unwrap_or_default();
    let ctx = Ctx {
        perf: &perf,
        hardware: stats
            .run_environment
            .as_ref()
            .and_then(|e| HardwareType::try_from(e.hardware_type).ok())
            .unwrap_or(HardwareType::UnknownHardware),
    };
    let mut running = Running {
        rank: 0,
        cumulative: 0.0,
        total_us: pico_to_micro(db.total_time_ps),
    };
    for m in sorted(db, usize::MAX) {
        add(&mut out, &ctx, m, Some(&mut running), "", 0);
    }
    out
}

/// The table of an OpStats (`CreateHloStatsDataTable` of `ConvertOpStatsToHloStats`).
pub fn data_table(stats: &OpStats) -> DataTable {
    let mut t = DataTable::default();
    for (id, kind, label) in COLUMNS {
        t.column(id, kind, label);
    }
    t.rows = rows(stats).iter().map(row).collect();
    t
}

/// The tool's JSON, as xprof returns it.
pub fn to_json(stats: &OpStats) -> String {
    data_table(stats).to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_flags() {
        assert_eq!(hlo_op_name("%fusion.1 = f32[] fusion()"), "fusion.1");
        assert_eq!(hlo_op_name(""), "");
        assert!(is_rematerialization("%a.remat = x", ""));
        assert!(!is_rematerialization("%a = b.remat", ""));
        assert!(is_outside_compilation("a:XlaRecvFromHost", ""));
        assert!(is_outside_compilation(
            "",
            "send-done(), is_host_transfer=true"
        ));
        let info = SourceInfo {
            file_name: "a<b>.py".into(),
            line_number: 3,
            stack_frame: "f 'x'".into(),
        };
        assert_eq!(
            source_info_text(Some(&info)),
            "<div class='source-info-cell' title='f &#39;x&#39;'>a&lt;b&gt;.py:3</div>"
        );
    }
}

//! `roofline_model` (the Roofline Model page): the device's ops and programs against its
//! roofline, as two DataTables, the records and the diagnostics (xprof's
//! `ConvertOpStatsToRooflineModel` and `RooflineModelToDataTableJson`).
//!
//! Only GPU and TPU profiles have records. The records come twice, first counting the infeed and
//! outfeed ops, then without them: the whole profile as one "Program" record (rank 0; FLOPs and
//! bytes summed over the ops that are not calls, conditionals, whiles or megacore fusions, over
//! the database's total time) then each op with an occurrence (at most 1000, by self time, ranked
//! from 1 with its share of the total time); the complete steps' program, per step ("Average",
//! when the OpStats has that database); and each step's program (its step number). Each record
//! has its times, rates and bandwidths, its bound ([`crate::op_stats::roofline`]), its roofline
//! efficiency (the highest of its FLOP rate and memory bandwidths over the device's peaks) and
//! the FLOP rate that efficiency would reach at the peak. A GPU's table (its device type names
//! a GPU) has fewer columns, shared memory standing as VMEM. An op without a category is
//! "unknown". The table's properties give the
//! device's peaks (GiB/s and GFLOP/s) and ridge points, in six significant digits. The
//! diagnostics say when steps were incomplete, missing or dropped.

use crate::datatable::{Cell, DataTable};
use crate::op_stats::perf_env::{CMEM_RD, CMEM_WR, HBM_RW, SRAM_RD, SRAM_WR, VMEM_RD, VMEM_WR};
use crate::op_stats::roofline::{giga_to_gibi, roofline, safe_divide};
use crate::op_stats::sorted;
use crate::proto::{HardwareType, OpMetrics, OpMetricsDb, OpStats, PerfEnv};

/// Ops listed per database.
const MAX_RECORDS: usize = 1000;

/// The device's peaks as the page takes them (`RooflineModelDatabase`'s).
#[derive(Clone, Debug, Default)]
struct Peaks {
    device_type: String,
    megacore: bool,
    has_cmem: bool,
    has_merged_vmem: bool,
    flop_rate: f64,
    hbm_bw: f64,
    cmem_read_bw: f64,
    cmem_write_bw: f64,
    vmem_read_bw: f64,
    vmem_write_bw: f64,
    time_scale_multiplier: f64,
}

/// Which records a row belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Total,
    Average,
    Number(u32),
}

/// One record (`RooflineModelRecord`), as the tables show it.
#[derive(Clone, Debug)]
struct Record {
    step: Step,
    rank: u64,
    category: String,
    name: String,
    occurrences: f64,
    total_time_us: f64,
    avg_time_us: f64,
    total_self_time_us: f64,
    avg_self_time_us: f64,
    self_time_fraction: f64,
    cumulative_fraction: f64,
    dma_stall_fraction: f64,
    r: crate::op_stats::roofline::Roofline,
    intensities: [f64; 4],
    total_time_per_core_us: f64,
    total_time_fraction: f64,
    optimal_flop_rate: f64,
    roofline_efficiency: f64,
    flop_utilization: f64,
    memory_utilization: f64,
    include_infeed_outfeed: bool,
    program_id: u64,
    source_info: String,
}

fn peak_bandwidth(env: &PerfEnv, index: usize) -> f64 {
    env.peak_bws_giga_bytes_per_second
        .get(index)
        .copied()
        .unwrap_or(env.peak_hbm_bw_giga_bytes_per_second)
}

fn peaks(stats: &OpStats, hardware: HardwareType) -> Peaks {
    let env = stats.perf_env.clone().unwrap_or_default();
    let db = stats.device_op_metrics_db.clone().unwrap_or_default();
    let mut p = Peaks {
        device_type: stats
            .run_environment
            .as_ref()
            .map(|e| e.device_type.clone())
            .unwrap_or_default(),
        time_scale_multiplier: safe_divide(
            db.normalized_total_op_time_ps as f64,
            db.total_op_time_ps as f64,
        ),
        flop_rate: env.peak_tera_flops_per_second * 1e3,
        hbm_bw: giga_to_gibi(peak_bandwidth(&env, HBM_RW)),
        ..Peaks::default()
    };
    if hardware == HardwareType::Tpu {
        p.megacore = env.has_megacore;
        p.has_cmem = env.has_cmem;
        p.has_merged_vmem = env.has_merged_vmem;
        if p.has_cmem {
            p.cmem_read_bw = giga_to_gibi(peak_bandwidth(&env, CMEM_RD));
            p.cmem_write_bw = giga_to_gibi(peak_bandwidth(&env, CMEM_WR));
        } else if p.has_merged_vmem {
            p.vmem_read_bw = giga_to_gibi(peak_bandwidth(&env, VMEM_RD));
            p.vmem_write_bw = giga_to_gibi(peak_bandwidth(&env, VMEM_WR));
        }
    } else {
        p.has_merged_vmem = true;
        p.vmem_read_bw = giga_to_gibi(peak_bandwidth(&env, SRAM_RD));
        p.vmem_write_bw = giga_to_gibi(peak_bandwidth(&env, SRAM_WR));
    }
    p
}

/// What each record is computed against.
struct Ctx<'a> {
    stats: &'a OpStats,
    env: PerfEnv,
    hardware: HardwareType,
    peaks: Peaks,
    include_infeed_outfeed: bool,
}

fn pico_to_micro(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// `ConvertOpMetricsToRooflineModelRecord`.
#[allow(deprecated)]
fn record(ctx: &Ctx<'_>, m: &OpMetrics, step: Step, total_time_ps: u64) -> Record {
    let occurrences = f64::from(m.occurrences);
    let mut total = pico_to_micro(m.time_ps);
    let mut total_self = pico_to_micro(m.self_time_ps);
    let avg = safe_divide(total, occurrences);
    let avg_self = safe_divide(total_self, occurrences);
    if step == Step::Average {
        let steps = ctx
            .stats
            .step_db
            .as_ref()
            .map_or(0, |s| s.step_sequence.len()) as f64;
        total = safe_divide(total, steps);
        total_self = safe_divide(total_self, steps);
    }
    let core_count = ctx
        .stats
        .run_environment
        .as_ref()
        .map_or(0, |e| e.device_core_count);
    let r = roofline(m, &ctx.env, ctx.hardware);
    // The intensities the roofline figures leave out: CMEM and VMEM reads and writes.
    let mut bytes = [0u64; 4];
    for a in &m.memory_accessed_breakdown {
        let slot = match (a.memory_space, a.operation_type) {
            (2, 1) => 0,
            (2, 2) => 1,
            (3, 1) => 2,
            (3, 2) => 3,
            _ => continue,
        };
        bytes[slot] = bytes[slot].wrapping_add(a.bytes_accessed);
    }
    let intensities = bytes.map(|b| safe_divide(m.flops_v2, b as f64));
    let p = &ctx.peaks;
    let cmem_wr = if p.has_cmem {
        safe_divide(r.cmem_write_bw, p.cmem_write_bw)
    } else {
        0.0
    };
    let cmem_rd = if p.has_cmem {
        safe_divide(r.cmem_read_bw, p.cmem_read_bw)
    } else {
        0.0
    };
    let vmem_rd = if p.has_merged_vmem {
        safe_divide(r.vmem_read_bw, p.vmem_read_bw)
    } else {
        0.0
    };
    let vmem_wr = if p.has_merged_vmem {
        safe_divide(r.vmem_write_bw, p.vmem_write_bw)
    } else {
        0.0
    };
    let flops = safe_divide(r.measured_flop_rate, p.flop_rate);
    let hbm = safe_divide(r.hbm_bw, p.hbm_bw);
    // std::max over an initializer list: the first of equal values, NaN never replacing.
    let max = |values: &[f64]| {
        values
            .iter()
            .skip(1)
            .fold(values[0], |acc, &v| if acc < v { v } else { acc })
    };
    let memory = max(&[cmem_wr, cmem_rd, hbm, vmem_wr, vmem_rd]);
    let efficiency = max(&[memory, flops]);
    Record {
        step,
        rank: 0,
        // xprof 2.24.2 shows an op without a category as "unknown" here (not in hlo_stats).
        category: if m.category.is_empty() {
            "unknown".to_owned()
        } else {
            m.category.clone()
        },
        name: m.name.clone(),
        occurrences,
        total_time_us: total,
        avg_time_us: avg,
        total_self_time_us: total_self,
        avg_self_time_us: avg_self,
        self_time_fraction: 0.0,
        cumulative_fraction: 0.0,
        dma_stall_fraction: safe_divide(m.dma_stall_ps as f64, m.time_ps as f64),
        total_time_per_core_us: safe_divide(total, f64::from(core_count)),
        total_time_fraction: safe_divide(m.time_ps as f64, total_time_ps as f64),
        optimal_flop_rate: safe_divide(r.measured_flop_rate, efficiency),
        roofline_efficiency: efficiency,
        flop_utilization: flops,
        memory_utilization: memory,
        r,
        intensities,
        include_infeed_outfeed: ctx.include_infeed_outfeed,
        program_id: m.hlo_module_id,
        source_info: super::hlo_stats::source_info_text(m.source_info.as_ref()),
    }
}

fn may_have_inner_ops(category: &str) -> bool {
    matches!(
        category,
        "call" | "conditional" | "while" | "megacore fusion"
    )
}

fn is_infeed_or_outfeed(category: &str) -> bool {
    category.contains("infeed") || category.contains("outfeed")
}

/// `GenerateRooflineModelProgramRecord`: the database as one "Program" op.
#[allow(deprecated)]
fn program_record(ctx: &Ctx<'_>, db: &OpMetricsDb, step: Step) -> Record {
    let mut program = OpMetrics {
        name: "Program".to_owned(),
        category: "Program".to_owned(),
        occurrences: 1,
        ..OpMetrics::default()
    };
    let mut infeed_outfeed = 0u64;
    for m in &db.metrics_db {
        if may_have_inner_ops(&m.category) {
            continue;
        }
        if !ctx.include_infeed_outfeed && is_infeed_or_outfeed(&m.category) {
            infeed_outfeed = infeed_outfeed.wrapping_add(m.time_ps);
            continue;
        }
        program.flops = program.flops.wrapping_add(m.flops);
        program.flops_v2 += m.flops_v2;
        program.model_flops = program.model_flops.wrapping_add(m.model_flops);
        program.model_flops_v2 += m.model_flops_v2;
        program.bytes_accessed = program.bytes_accessed.wrapping_add(m.bytes_accessed);
        program
            .memory_accessed_breakdown
            .extend(m.memory_accessed_breakdown.iter().cloned());
    }
    let total = if ctx.include_infeed_outfeed {
        db.total_time_ps
    } else {
        db.total_time_ps.wrapping_sub(infeed_outfeed)
    };
    program.time_ps = total;
    record(ctx, &program, step, total)
}

/// `ConvertOpMetricsDbToRooflineModelRecords`: the program, then its ops.
fn db_records(ctx: &Ctx<'_>, db: &OpMetricsDb, out: &mut Vec<Record>) {
    out.push(program_record(ctx, db, Step::Total));
    let infeed_outfeed = if ctx.include_infeed_outfeed {
        0
    } else {
        db.metrics_db
            .iter()
            .filter(|m| is_infeed_or_outfeed(&m.category))
            .fold(0u64, |a, m| a.wrapping_add(m.time_ps))
    };
    let total_ps = db.total_time_ps.wrapping_sub(infeed_outfeed);
    let total_us = pico_to_micro(total_ps);
    let (mut rank, mut cumulative) = (0u64, 0.0);
    for m in sorted(db, MAX_RECORDS) {
        if m.occurrences == 0 || (!ctx.include_infeed_outfeed && is_infeed_or_outfeed(&m.category))
        {
            continue;
        }
        let mut r = record(ctx, m, Step::Total, total_ps);
        rank += 1;
        r.rank = rank;
        r.self_time_fraction = safe_divide(r.total_self_time_us, total_us);
        cumulative += r.self_time_fraction;
        r.cumulative_fraction = cumulative;
        out.push(r);
    }
}

/// Every record, with and then without the infeed and outfeed ops.
fn records(stats: &OpStats, hardware: HardwareType, peaks: &Peaks) -> Vec<Record> {
    let mut out = Vec::new();
    let empty = OpMetricsDb::default();
    for include_infeed_outfeed in [true, false] {
        let ctx = Ctx {
            stats,
            env: stats.perf_env.clone().unwrap_or_default(),
            hardware,
            peaks: peaks.clone(),
            include_infeed_outfeed,
        };
        db_records(
            &ctx,
            stats.device_op_metrics_db.as_ref().unwrap_or(&empty),
            &mut out,
        );
        if let Some(db) = &stats.hlo_metrics_db_complete_steps_only {
            out.push(program_record(&ctx, db, Step::Average));
        }
        for step in stats.step_db.iter().flat_map(|s| &s.step_sequence) {
            let db = step.hlo_metrics_db.as_ref().unwrap_or(&empty);
            out.push(program_record(&ctx, db, Step::Number(step.step_num)));
        }
    }
    out
}

/// absl's `StrCat` of a double: six significant digits, as `%g` writes them.
pub fn six_digits(v: f64) -> String {
    if v.is_nan() {
        return "nan".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s.to_owned()
        }
    };
    if (-4..6).contains(&exp) {
        let decimals = usize::try_from(5 - exp).unwrap_or(0);
        trim(&format!("{v:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    }
}

/// `RidgePoint`: FLOP/s over bytes/s.
fn ridge_point(flop_rate: f64, gibibytes: f64) -> f64 {
    safe_divide(flop_rate, gibibytes * ((1u64 << 30) as f64 / 1e9))
}

fn step_text(step: Step) -> String {
    match step {
        Step::Total => "Total".to_owned(),
        Step::Average => "Average".to_owned(),
        Step::Number(n) => n.to_string(),
    }
}

/// The columns both tables share up to the DMA stall, and from the bound on.
const HEAD: [(&str, &str, &str); 11] = [
    ("step", "string", "Step"),
    ("rank", "number", "Rank"),
    ("category", "string", "Category"),
    ("operation", "string", "Operation"),
    ("occurrences", "number", "# Occurrences"),
    ("total_time", "number", "Total Time (us)"),
    ("avg_time", "number", "Avg. time (us)"),
    ("total_self_time", "number", "Total self time (us)"),
    ("avg_self_time", "number", "Avg. self time (us)"),
    ("total_self_time_percent", "number", "Total self time (%)"),
    (
        "cumulative_total_self_time_percent",
        "number",
        "Cumulative total self time (%)",
    ),
];
const TAIL: [(&str, &str, &str); 11] = [
    (
        "bottleneck_operational_intensity",
        "number",
        "Bottleneck Operational Intensity (FLOP/Byte)",
    ),
    ("bound_by", "string", "Bound by"),
    ("total_time_per_core", "number", "Total Time per core (us)"),
    ("total_time_in_percentage", "number", "Total Time (%)"),
    ("optimal_flop_rate", "number", "Optimal FLOP Rate (GFLOP/s)"),
    ("roofline_efficiency", "number", "Roofline efficiency (%)"),
    ("compute_efficiency", "number", "FLOP Rate / Peak (%)"),
    (
        "max_mem_bw_utilization",
        "number",
        "Max memory BW utilization (among supported memories) (%)",
    ),
    (
        "include_infeed_outfeed",
        "boolean",
        "Include Infeed/Outfeed",
    ),
    ("hlo_module_id", "string", "Program ID"),
    ("source_info", "string", "Source Info"),
];

fn records_table(records: &[Record], p: &Peaks) -> DataTable {
    let gpu = p.device_type.contains("GPU");
    let mut t = DataTable::default();
    for (id, kind, label) in HEAD {
        t.column(id, kind, label);
    }
    let middle: &[(&str, &str, &str)] = if gpu {
        &[
            (
                "measured_flop_rate",
                "number",
                "Normalized FLOP Rate (GFLOP/s)",
            ),
            ("model_flop_rate", "number", "Model FLOP Rate (GFLOP/s)"),
            ("measured_memory_bw", "number", "Memory BW (GiB/s)"),
            ("hbm_bw", "number", "HBM BW (GiB/s)"),
            ("vmem_write_bw", "number", "SHM/L1 BW (GiB/s)"),
            (
                "operational_intensity",
                "number",
                "Operational Intensity (FLOP/Byte)",
            ),
            (
                "hbm_operational_intensity",
                "number",
                "HBM Operational Intensity (FLOP/Byte)",
            ),
            (
                "vmem_write_operational_intensity",
                "number",
                "SHM/L1 Operational Intensity (FLOP/Byte)",
            ),
        ]
    } else {
        &[
            ("dma_stall_percent", "number", "%time stalled by DMA"),
            (
                "measured_flop_rate",
                "number",
                "Normalized FLOP Rate (GFLOP/s)",
            ),
            ("model_flop_rate", "number", "Model FLOP Rate (GFLOP/s)"),
            ("measured_memory_bw", "number", "Memory BW (GiB/s)"),
            ("hbm_bw", "number", "HBM BW (GiB/s)"),
            ("cmem_read_bw", "number", "CMEM Read BW (GiB/s)"),
            ("cmem_write_bw", "number", "CMEM Write BW (GiB/s)"),
            ("vmem_read_bw", "number", "VMEM Read BW (GiB/s)"),
            ("vmem_write_bw", "number", "VMEM Write BW (GiB/s)"),
            (
                "operational_intensity",
                "number",
                "Operational Intensity (FLOP/Byte)",
            ),
            (
                "hbm_operational_intensity",
                "number",
                "HBM Operational Intensity (FLOP/Byte)",
            ),
            (
                "cmem_read_operational_intensity",
                "number",
                "CMEM Read Operational Intensity (FLOP/Byte)",
            ),
            (
                "cmem_write_operational_intensity",
                "number",
                "CMEM Write Operational Intensity (FLOP/Byte)",
            ),
            (
                "vmem_read_operational_intensity",
                "number",
                "VMEM Read Operational Intensity (FLOP/Byte)",
            ),
            (
                "vmem_write_operational_intensity",
                "number",
                "VMEM Write Operational Intensity (FLOP/Byte)",
            ),
        ]
    };
    for (id, kind, label) in middle.iter().chain(TAIL.iter()) {
        t.column(id, kind, label);
    }
    for r in records {
        let mut row = vec![
            Cell::Text(step_text(r.step)),
            Cell::Number(r.rank as f64),
            Cell::Text(r.category.clone()),
            Cell::Text(r.name.clone()),
            Cell::Number(r.occurrences),
            Cell::Number(r.total_time_us),
            Cell::Number(r.avg_time_us),
            Cell::Number(r.total_self_time_us),
            Cell::Number(r.avg_self_time_us),
            Cell::Number(r.self_time_fraction),
            Cell::Number(r.cumulative_fraction),
        ];
        let [cmem_rd_oi, cmem_wr_oi, vmem_rd_oi, vmem_wr_oi] = r.intensities;
        let x = &r.r;
        let middle: Vec<f64> = if gpu {
            vec![
                x.measured_flop_rate,
                x.model_flop_rate,
                x.measured_memory_bw,
                x.hbm_bw,
                x.vmem_write_bw,
                x.operational_intensity,
                x.hbm_operational_intensity,
                vmem_wr_oi,
            ]
        } else {
            vec![
                r.dma_stall_fraction,
                x.measured_flop_rate,
                x.model_flop_rate,
                x.measured_memory_bw,
                x.hbm_bw,
                x.cmem_read_bw,
                x.cmem_write_bw,
                x.vmem_read_bw,
                x.vmem_write_bw,
                x.operational_intensity,
                x.hbm_operational_intensity,
                cmem_rd_oi,
                cmem_wr_oi,
                vmem_rd_oi,
                vmem_wr_oi,
            ]
        };
        row.extend(middle.into_iter().map(Cell::Number));
        row.extend([
            Cell::Number(x.bottleneck_operational_intensity),
            Cell::Text(x.bound_by.to_owned()),
            Cell::Number(r.total_time_per_core_us),
            Cell::Number(r.total_time_fraction),
            Cell::Number(r.optimal_flop_rate),
            Cell::Number(r.roofline_efficiency),
            Cell::Number(r.flop_utilization),
            Cell::Number(r.memory_utilization),
            Cell::Bool(r.include_infeed_outfeed),
            Cell::Text(r.program_id.to_string()),
            Cell::Text(r.source_info.clone()),
        ]);
        t.rows.push(row);
    }
    let mut prop = |k: &str, v: String| {
        t.properties.insert(k.to_owned(), v);
    };
    prop("device_type", p.device_type.clone());
    prop("peak_flop_rate", six_digits(p.flop_rate));
    prop("peak_hbm_bw", six_digits(p.hbm_bw));
    prop("peak_vmem_write_bw", six_digits(p.vmem_write_bw));
    prop(
        "hbm_ridge_point",
        six_digits(ridge_point(p.flop_rate, p.hbm_bw)),
    );
    prop(
        "vmem_write_ridge_point",
        six_digits(ridge_point(p.flop_rate, p.vmem_write_bw)),
    );
    if !gpu {
        prop("megacore", u8::from(p.megacore).to_string());
        prop("has_cmem", u8::from(p.has_cmem).to_string());
        prop("has_merged_vmem", u8::from(p.has_merged_vmem).to_string());
        prop("peak_cmem_read_bw", six_digits(p.cmem_read_bw));
        prop("peak_cmem_write_bw", six_digits(p.cmem_write_bw));
        prop("peak_vmem_read_bw", six_digits(p.vmem_read_bw));
        prop(
            "cmem_read_ridge_point",
            six_digits(ridge_point(p.flop_rate, p.cmem_read_bw)),
        );
        prop(
            "cmem_write_ridge_point",
            six_digits(ridge_point(p.flop_rate, p.cmem_write_bw)),
        );
        prop(
            "vmem_read_ridge_point",
            six_digits(ridge_point(p.flop_rate, p.vmem_read_bw)),
        );
        prop("time_scale_multiplier", six_digits(p.time_scale_multiplier));
    }
    t
}

/// `PopulateStepDiagnostics`: the warnings about the steps.
fn step_warnings(stats: &OpStats) -> Vec<String> {
    let mut w = Vec::new();
    let default = crate::proto::StepDatabaseResult::default();
    let db = stats.step_db.as_ref().unwrap_or(&default);
    if db.use_incomplete_step {
        w.push("Incomplete step observed and hence the step time is unknown.Instead, we use the trace duration as the step time. This may happen if your profiling duration is shorter than the step time. In this case, you may try to profile longer.".to_owned());
    } else if db.step_sequence.is_empty() {
        w.push(if db.empty_intersect {
            "Although there are steps observed on some host(s), the intersection of the steps over all hosts is empty (because the differences among individual host's step sequences are too big). Consequently, the overall step time is unknown.".to_owned()
        } else {
            "No step marker observed and hence the step time is unknown. This may happen if (1) training steps are not instrumented (e.g., if you are not using Keras) or (2) the profiling duration is shorter than the step time. For (1), you need to add step instrumentation; for (2), you may try to profile longer.".to_owned()
        });
    }
    if db.num_steps_dropped != 0 {
        w.push(format!("{} steps dropped. This might happen when you profile many hosts and/or many steps. You could try to profile shorter or reduce the number of hosts you profile.", db.num_steps_dropped));
    }
    w
}

/// The tool's two DataTables, the records (with the device's peaks as properties) and the
/// diagnostics.
pub fn data_tables(stats: &OpStats) -> [DataTable; 2] {
    let hardware = stats
        .run_environment
        .as_ref()
        .and_then(|e| HardwareType::try_from(e.hardware_type).ok())
        .unwrap_or(HardwareType::UnknownHardware);
    let (records, p, warnings) = if matches!(hardware, HardwareType::Gpu | HardwareType::Tpu) {
        let p = peaks(stats, hardware);
        (records(stats, hardware, &p), p, step_warnings(stats))
    } else {
        (Vec::new(), Peaks::default(), Vec::new())
    };
    let mut diagnostics = DataTable::default();
    diagnostics.column("severity", "string", "Severity");
    diagnostics.column("message", "string", "Message");
    for w in warnings {
        diagnostics
            .rows
            .push(vec![Cell::Text("WARNING".to_owned()), Cell::Text(w)]);
    }
    [records_table(&records, &p), diagnostics]
}

/// The tool's JSON, as xprof returns it: `[records, diagnostics]`.
pub fn to_json(stats: &OpStats) -> String {
    let [records, diagnostics] = data_tables(stats);
    format!("[{},{}]", records.to_json(), diagnostics.to_json())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_significant_digits() {
        for (v, want) in [
            (0.0, "0"),
            (836.372_123, "836.372"),
            (1_307_440.0, "1.30744e+06"),
            (16.0, "16"),
            (0.000_123_456_7, "0.000123457"),
            (0.000_012_345, "1.2345e-05"),
            (999_999.5, "1e+06"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(six_digits(v), want, "{v}");
        }
    }
}

//! Target `xprof_tools`: XSpaces shaped as the profilers' (host threads, GPU and TPU planes, the
//! metadata plane's HLO protos), drawn from the bytes, through xprof's OpStats and the tools
//! computed from it (`profkit xprof`): `framework_op_stats`, `kernel_stats`, `hlo_stats`,
//! `roofline_model`, `memory_profile`, `op_profile` (each grouping, and from the decoded OpStats
//! file too), the `kernels` and `hlo_ops` Arrow tables, the tool list and the OpStats file (its steps database and tf-function stats
//! included, of one host or two); then the tools rendered from an OpStats (`overview_page`,
//! `input_pipeline_analyzer`, `pod_viewer`), from that OpStats with a steps database drawn from
//! the bytes too (cores, durations, breakdowns with huge times, packed breakdowns of another type
//! or of bytes that do not decode).
//!
//! Names, stats and times come from pools that hold what the rules look at (framework op names,
//! XLA op stats, allocator events, step markers and step stats, tf-function calls, collectives,
//! copies, epoch-dated lines, negative and huge times, HLO
//! protos that are random bytes, kernel launch details, GPU vendors). No panic; the tools' JSON parses; the OpStats file decodes.

use profkit_xplane::{PlaneBuilder, XPlane, XSpace};

const PLANES: [&str; 6] = [
    "/host:CPU",
    "/device:GPU:0",
    "/device:TPU:0",
    "/host:metadata",
    "/device:TPU:0 SparseCore 0",
    "Task Environment",
];

const LINES: [&str; 6] = [
    "tf_Compute",
    "XLA Ops",
    "XLA Modules",
    "Steps",
    "Stream #1(Compute)",
    "python",
];

const NAMES: [&str; 19] = [
    "ncclAllReduce",
    "IteratorGetNext",
    "TraceContext",
    "volta_fp16_gemm",
    "model/dense/MatMul:MatMul",
    "Iterator::Root::Prefetch",
    "jit(f)/transpose(jvp())/add:add",
    "MemoryAllocation",
    "MemoryDeallocation",
    "train",
    "EagerKernelExecute",
    "fusion.1",
    "IDLE",
    "",
    "a:b:c",
    "MEMCPYHToD",
    "regs:32 static_shared:4294967296 grid:2,1,1 block:128,-1,1 occ_pct:nan",
    "volta_h884gemm",
    "Cijk_Ailk_MT64_MI16x16x16x1_SN",
];

const STATS: [&str; 32] = [
    "correlation_id",
    "step_name",
    "tf_function_call",
    "tracing_count",
    "_pt",
    "_p",
    "_ct",
    "_c",
    "input_pipeline_stage_name",
    "device_offset_ps",
    "device_duration_ps",
    "all_reduce_unique_id",
    "memcpy_details",
    "shape",
    "core_details",
    "group_id",
    "tf_op",
    "hlo_op",
    "hlo_module",
    "program_id",
    "symbol_id",
    "is_eager",
    "group_id",
    "step_num",
    "bytes_allocated",
    "allocator_name",
    "flops",
    "bytes_accessed",
    "Hlo Proto",
    "kernel_details",
    "input_pipeline_stage_id",
    "hlo_category",
];

/// The space `data` describes: a header byte per plane (its name), then per event five bytes
/// (line, name, stat, value, time step).
pub fn space(data: &[u8]) -> XSpace {
    let mut planes: Vec<XPlane> = Vec::new();
    for chunk in data.chunks(41).take(8) {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name(PLANES[usize::from(chunk[0]) % PLANES.len()]);
        // The vendor picks the kernel stats' TensorCore rules.
        match chunk[0] / 8 % 3 {
            1 => {
                b.add_stat("device_vendor", "Nvidia");
            }
            2 => {
                b.add_stat("device_vendor", "AMD");
            }
            _ => {}
        }
        let mut offset = 0i64;
        for event in chunk[1..].chunks_exact(5) {
            let [line, name, stat, value, step] =
                [event[0], event[1], event[2], event[3], event[4]];
            // Line 3 is the `Steps` line of derived step markers (`kThreadIdStepInfo`).
            let id = match line % 4 {
                3 => i64::from(0xdead_beef_u32 as i32),
                n => i64::from(n),
            };
            let mut l = b.line(id);
            l.set_name(LINES[usize::from(line / 4) % LINES.len()]);
            if line & 0x80 != 0 {
                l.set_timestamp_ns(1_700_000_000_000_000_000);
            }
            offset = offset.wrapping_add(i64::from(step) * 1_000 - 40_000);
            let duration = match value % 4 {
                0 => 0,
                1 => -5,
                2 => i64::MAX / 2,
                _ => i64::from(value) * 1_000,
            };
            let mut e = l.add_event(NAMES[usize::from(name) % NAMES.len()]);
            e.set_offset_ps(offset).set_duration_ps(duration);
            let stat_name = STATS[usize::from(stat) % STATS.len()];
            match stat / 16 % 4 {
                0 => e.add_stat(stat_name, i64::from(value) - 128),
                1 => e.add_stat(stat_name, u64::from(value) << 40),
                2 => e.add_stat(stat_name, NAMES[usize::from(value) % NAMES.len()]),
                _ => e.add_stat(stat_name, bytes::Bytes::from(event.to_vec())),
            };
        }
        planes.push(plane);
    }
    XSpace {
        planes,
        ..XSpace::default()
    }
}

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let space = space(data);
    let tools = profkit_xprof::tools::tool_names(std::slice::from_ref(&space));
    assert!(tools.contains(&"framework_op_stats"));
    if let Ok(json) =
        profkit_xprof::tools::memory_profile::memory_profile_json(std::slice::from_ref(&space))
    {
        assert!(
            json.is_empty() || serde_json::from_str::<serde_json::Value>(&json).is_ok(),
            "memory_profile is not JSON: {json}"
        );
    }
    // Two hosts (the space twice) when the first byte is odd: their steps are intersected.
    let spaces = match data.first() {
        Some(b) if b & 1 == 1 => vec![space.clone(), space],
        _ => vec![space],
    };
    let built = profkit_xprof::op_stats::build(spaces, &["fuzz", "fuzz2"]);
    let json = profkit_xprof::tools::framework_op_stats::to_json(&built.op_stats);
    let tables: serde_json::Value = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("framework_op_stats is not JSON: {e}"));
    assert_eq!(tables.as_array().map(Vec::len), Some(2));
    for (tool, json) in [
        (
            "kernel_stats",
            profkit_xprof::tools::kernel_stats::to_json(&built.op_stats),
        ),
        (
            "hlo_stats",
            profkit_xprof::tools::hlo_stats::to_json(&built.op_stats),
        ),
        (
            "roofline_model",
            profkit_xprof::tools::roofline_model::to_json(&built.op_stats),
        ),
    ] {
        serde_json::from_str::<serde_json::Value>(&json)
            .unwrap_or_else(|e| panic!("{tool} is not JSON: {e}"));
    }
    let _ = profkit_xprof::tools::lacking::not_reproduced("roofline_model", &built);
    // The Arrow tables of the same OpStats: a row per kernel report and per row of hlo_stats.
    let kernels = profkit_arrow::kernels::batch("fuzz", &built.op_stats).expect("kernels batch");
    assert_eq!(
        kernels.num_rows(),
        built
            .op_stats
            .kernel_stats_db
            .as_ref()
            .map_or(0, |db| db.reports.len())
    );
    let hlo_ops = profkit_arrow::hlo_ops::batch("fuzz", &built.op_stats).expect("hlo_ops batch");
    assert_eq!(
        hlo_ops.num_rows(),
        profkit_xprof::tools::hlo_stats::rows(&built.op_stats).len()
    );
    let encoded = built.encode();
    let decoded = profkit_xprof::op_stats::decode(&encoded).expect("the OpStats file decodes");
    // Bytes, not values: a peak from a device without cores is NaN (as xprof's), never equal.
    assert_eq!(prost::Message::encode_to_vec(&decoded), encoded);
    use profkit_xprof::tools::op_profile::{self, Grouping};
    for group_by in [Grouping::Program, Grouping::Category, Grouping::Provenance] {
        if let Ok(json) = op_profile::op_profile_json(&built.op_stats, group_by) {
            // Deep provenance paths nest past serde_json's own depth limit, which is no fault.
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&json) {
                assert!(
                    e.to_string().contains("recursion limit"),
                    "op_profile is not JSON: {e}"
                );
            }
            assert_eq!(
                op_profile::op_profile_json(&decoded, group_by).ok(),
                Some(json),
                "op_profile of the decoded OpStats differs"
            );
        }
    }
    let _ = op_profile::missing(&built);
    let mut stats = built.op_stats;
    pages(&stats);
    add_steps(&mut stats, data);
    pages(&stats);
}

/// The tools rendered from an OpStats: JSON (or a named gap), never a panic.
fn pages(stats: &profkit_xprof::proto::OpStats) {
    use profkit_xprof::tools::{input_pipeline, overview_page, pod_viewer};
    let parses = |tool: &str, json: &str| {
        serde_json::from_str::<serde_json::Value>(json)
            .unwrap_or_else(|e| panic!("{tool} is not JSON: {e}"));
    };
    if let Ok(json) = overview_page::to_json(stats) {
        parses("overview_page", &json);
    }
    if let Ok(json) = input_pipeline::to_json(stats) {
        parses("input_pipeline_analyzer", &json);
    }
    parses("pod_viewer", &pod_viewer::to_json(stats));
}

/// A steps database from the bytes: a step per four bytes (core, duration, event type, kind of
/// packed breakdown), the hardware type and core details from the first byte.
fn add_steps(stats: &mut profkit_xprof::proto::OpStats, data: &[u8]) {
    use profkit_xprof::proto::{
        CoreDetails, GenericStepBreakdown, PerCoreStepInfo, StepDatabaseResult, StepInfoResult,
    };
    use prost::Message;
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    let env = stats.run_environment.get_or_insert_with(Default::default);
    env.hardware_type = i32::from(first % 4);
    if first & 4 != 0 {
        stats.core_id_to_details.insert(
            1,
            CoreDetails {
                hostname: "fuzz".into(),
                ..CoreDetails::default()
            },
        );
    }
    let mut db = StepDatabaseResult {
        use_incomplete_step: first & 8 != 0,
        num_steps_dropped: u32::from(first >> 4),
        ..StepDatabaseResult::default()
    };
    for (n, step) in rest.chunks_exact(4).take(64).enumerate() {
        let [core, duration, event, kind] = [step[0], step[1], step[2], step[3]];
        let duration = match duration % 3 {
            0 => u64::MAX,
            1 => 0,
            _ => u64::from(duration) << 30,
        };
        let mut breakdown = GenericStepBreakdown::default();
        let types = [
            0, 10, 60, 80, 90, 100, 110, 120, 130, 140, 150, 160, 170, -1,
        ];
        breakdown
            .type_ps
            .insert(types[usize::from(event) % types.len()], duration / 3);
        breakdown.type_ps.insert(0, u64::from(event) << 40);
        let any = match kind % 4 {
            0 => None,
            1 => Some(prost_types::Any {
                type_url: "type.googleapis.com/tensorflow.profiler.GenericStepBreakdown".into(),
                value: breakdown.encode_to_vec(),
            }),
            2 => Some(prost_types::Any {
                type_url: "type.googleapis.com/tensorflow.profiler.GenericStepBreakdown".into(),
                value: vec![kind, 0xff, 0xff],
            }),
            _ => Some(prost_types::Any {
                type_url: "type.googleapis.com/tensorflow.profiler.PerTpuStepDetails".into(),
                value: Vec::new(),
            }),
        };
        let core = u32::from(core % 3) * if core & 0x80 != 0 { 1_000_000 } else { 1 };
        let step_num = u32::try_from(n).unwrap_or(u32::MAX);
        let mut per_core = PerCoreStepInfo {
            step_num,
            ..PerCoreStepInfo::default()
        };
        per_core.step_info_per_core.insert(
            core,
            StepInfoResult {
                step_num,
                duration_ps: duration,
                step_breakdown: any,
                ..StepInfoResult::default()
            },
        );
        db.step_sequence.push(per_core);
    }
    stats.step_db = Some(db);
}

#[cfg(test)]
mod tests {
    use crate::smoke;

    #[test]
    fn smoke() {
        smoke::run_random(271, smoke::scaled(200), 330, super::run);
    }
}

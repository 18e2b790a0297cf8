//! Target `xprof_tools`: XSpaces shaped as the profilers' (host threads, GPU and TPU planes, the
//! metadata plane's HLO protos), drawn from the bytes, through xprof's OpStats and the tools
//! computed from it (`profkit xprof`): `framework_op_stats`, `memory_profile`, `op_profile` (each
//! grouping, and from the decoded OpStats file too), the tool list and the OpStats file.
//!
//! Names, stats and times come from pools that hold what the rules look at (framework op names,
//! XLA op stats, allocator events, step markers, epoch-dated lines, negative and huge times, HLO
//! protos that are random bytes). No panic; the tools' JSON parses; the OpStats file decodes.

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

const NAMES: [&str; 12] = [
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
];

const STATS: [&str; 16] = [
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
        let mut offset = 0i64;
        for event in chunk[1..].chunks_exact(5) {
            let [line, name, stat, value, step] =
                [event[0], event[1], event[2], event[3], event[4]];
            let mut l = b.line(i64::from(line % 4));
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
    let built = profkit_xprof::op_stats::build(vec![space], &["fuzz"]);
    let json = profkit_xprof::tools::framework_op_stats::to_json(&built.op_stats);
    let tables: serde_json::Value = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("framework_op_stats is not JSON: {e}"));
    assert_eq!(tables.as_array().map(Vec::len), Some(2));
    let decoded =
        profkit_xprof::op_stats::decode(&built.encode()).expect("the OpStats file decodes");
    assert_eq!(decoded, built.op_stats);
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
}

#[cfg(test)]
mod tests {
    use crate::smoke;

    #[test]
    fn smoke() {
        smoke::run_random(271, smoke::scaled(200), 330, super::run);
    }
}

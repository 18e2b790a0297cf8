//! The instructions fused into TPU ops (their op metrics' children, from the programs' HLO
//! protos) against xprof 2.24.2's own OpStats of the same input: every device op's children,
//! whole (name, category, deduplicated name, provenance, HLO text, cores, occurrences), exactly.

use std::io::Read;
use std::path::{Path, PathBuf};

use profkit_xplane::{ReadOptions, read_file};
use profkit_xprof::op_stats::{build, decode};
use profkit_xprof::proto::{OpMetrics, OpStats};

fn case(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance")
        .join(dir)
}

/// xprof's OpStats kept beside a case (`xprof.op_stats.pb`, or gzipped).
fn theirs(folder: &Path) -> OpStats {
    let plain = folder.join("xprof.op_stats.pb");
    let bytes = if plain.exists() {
        std::fs::read(&plain).expect("xprof's OpStats")
    } else {
        let file =
            std::fs::File::open(folder.join("xprof.op_stats.pb.gz")).expect("xprof's OpStats");
        let mut out = Vec::new();
        profkit_gzip::GzipReader::new(
            std::io::BufReader::new(file),
            profkit_gzip::Options::default(),
        )
        .read_to_end(&mut out)
        .expect("gunzips");
        out
    };
    decode(&bytes).expect("xprof's OpStats decodes")
}

fn device_ops(stats: &OpStats) -> Vec<&OpMetrics> {
    let mut ops: Vec<&OpMetrics> = stats
        .device_op_metrics_db
        .iter()
        .flat_map(|d| &d.metrics_db)
        .collect();
    ops.sort_by_key(|op| (op.hlo_module_id, op.name.clone()));
    ops
}

/// Checks every device op's children; returns how many ops have some.
fn check(dir: &str) -> usize {
    let folder = case(dir);
    let input = ["input.xplane.pb", "input.xplane.pb.gz"]
        .iter()
        .map(|f| folder.join(f))
        .find(|p| p.exists())
        .expect("an input");
    let space = read_file(&input, ReadOptions::default()).expect("the input decodes");
    let ours = build(vec![space], &["host"]).op_stats;
    let theirs = theirs(&folder);
    let (ours, theirs) = (device_ops(&ours), device_ops(&theirs));
    let names = |ops: &[&OpMetrics]| {
        ops.iter()
            .map(|op| (op.hlo_module_id, op.name.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&ours), names(&theirs), "{dir}: the device ops");
    let mut with_children = 0;
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!(a.children, b.children, "{dir}: the children of {}", a.name);
        with_children += usize::from(a.children.is_some());
    }
    with_children
}

#[test]
fn fused_children_of_a_real_tpu_profile() {
    assert_eq!(check("xplane-device/tpu"), 3);
}

#[test]
fn fused_children_of_many_opcodes_nested_fusions_and_constants() {
    // The hand-made fusion and the 20 fusions of JAX's module.
    assert_eq!(check("xplane/tpu-fusions"), 21);
}

//! The steps database, tf-function stats, core details and precision stats of OpStats against
//! xprof 2.24.2's own OpStats of the same profiles (`xprof.op_stats.pb` in the case folders,
//! saved by `conformance/xprof/op_stats_fixtures.py`): exactly, field by field. A step
//! breakdown is a packed `Any`, whose bytes depend on the order a map was written in; it is
//! compared decoded.

use std::path::{Path, PathBuf};

use profkit_xplane::{ReadOptions, read_file};
use profkit_xprof::op_stats::{build, decode};
use profkit_xprof::proto::{GenericStepBreakdown, OpStats, StepDatabaseResult};

fn case(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance")
        .join(dir)
}

/// Each step breakdown decoded and encoded again (maps in key order).
fn normalized(db: Option<StepDatabaseResult>) -> Option<StepDatabaseResult> {
    let mut db = db?;
    for step in &mut db.step_sequence {
        for info in step.step_info_per_core.values_mut() {
            if let Some(any) = info.step_breakdown.as_mut() {
                let b: GenericStepBreakdown =
                    prost::Message::decode(any.value.as_slice()).expect("a GenericStepBreakdown");
                any.value = prost::Message::encode_to_vec(&b);
            }
        }
    }
    Some(db)
}

fn check(dir: &str) {
    let folder = case(dir);
    let input = ["input.xplane.pb", "input.xplane.pb.gz"]
        .iter()
        .map(|f| folder.join(f))
        .find(|p| p.exists())
        .expect("an input");
    let space = read_file(&input, ReadOptions::default()).expect("the input decodes");
    let ours: OpStats = build(vec![space], &["host"]).op_stats;
    let bytes = std::fs::read(folder.join("xprof.op_stats.pb")).expect("xprof's OpStats");
    let theirs = decode(&bytes).expect("xprof's OpStats decodes");
    assert_eq!(
        normalized(ours.step_db.clone()),
        normalized(theirs.step_db.clone()),
        "{dir}: step_db"
    );
    assert_eq!(
        ours.tf_function_db, theirs.tf_function_db,
        "{dir}: tf_function_db"
    );
    assert_eq!(
        ours.core_id_to_details, theirs.core_id_to_details,
        "{dir}: core_id_to_details"
    );
    assert_eq!(
        ours.hlo_metrics_db_complete_steps_only, theirs.hlo_metrics_db_complete_steps_only,
        "{dir}: hlo_metrics_db_complete_steps_only"
    );
    let precision = |s: &OpStats| {
        s.device_op_metrics_db
            .as_ref()
            .and_then(|d| d.precision_stats)
    };
    assert_eq!(
        precision(&ours),
        precision(&theirs),
        "{dir}: precision_stats"
    );
}

#[test]
fn tensorflow_steps_and_tf_functions() {
    check("xplane/real-tf-fnloop");
    check("xplane/real-tf-fit");
}

#[test]
fn jax_steps() {
    check("xplane/real-jax-steps");
}

#[test]
fn host_grouping_steps() {
    check("xplane/host-grouping");
}

#[test]
fn gpu_steps() {
    check("xplane/gpu-steps");
    check("xplane-device/gpu");
}

#[test]
fn tpu_steps() {
    check("xplane/tpu-op-metrics");
}

#[test]
fn hosts_combined_keep_their_common_steps() {
    let read = |dir: &str| {
        read_file(case(dir).join("input.xplane.pb"), ReadOptions::default()).expect("decodes")
    };
    let spaces = vec![read("xplane/real-tf-fnloop"), read("xplane/real-tf-fnloop")];
    let built = build(spaces, &["a", "b"]);
    let db = built.op_stats.step_db.expect("a steps database");
    let single = decode(&std::fs::read(case("xplane/real-tf-fnloop/xprof.op_stats.pb")).unwrap())
        .unwrap()
        .step_db
        .unwrap();
    // Two copies of one host: the same steps, each with both hosts' core (1 and 1001).
    assert_eq!(db.step_sequence.len(), single.step_sequence.len());
    for (i, step) in db.step_sequence.iter().enumerate() {
        assert_eq!(step.step_num as usize, i);
        assert_eq!(
            step.step_info_per_core.keys().copied().collect::<Vec<_>>(),
            vec![1, 1001]
        );
        assert_eq!(
            step.step_info_per_core[&1001].duration_ps,
            single.step_sequence[i].step_info_per_core[&1].duration_ps
        );
    }
    let functions = built.op_stats.tf_function_db.expect("tf-function stats");
    assert_eq!(functions.tf_functions["step"].metrics[&3].count, 8);
}

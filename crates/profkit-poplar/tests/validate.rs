//! Validation: every problem with its path; valid profiles have none.

mod common;

use common::{execution, file, graph};
use profkit_poplar::program::Block;
use profkit_poplar::validate::{validate_execution, validate_graph};
use profkit_poplar::{
    Counts, ExecutionProfile, ProblemKind, ProfileFile, ProfilerMode, Program, Severity, validate,
    validate_with_graph,
};

fn errors(problems: &[profkit_poplar::Problem]) -> Vec<(ProblemKind, String)> {
    problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(|p| (p.kind, p.path.clone()))
        .collect()
}

#[test]
fn the_hand_written_profiles_are_valid() {
    assert_eq!(validate(&file("graph-complete")), []);
    assert_eq!(validate(&file("combined")), []);
    let g = graph();
    for case in [
        "execution-none",
        "execution-cpu",
        "execution-ipu-model",
        "execution-compute-sets",
        "execution-single-tile-compute-sets",
        "execution-vertices",
        "execution-external-exchanges",
        "execution-host-exchanges",
    ] {
        assert_eq!(validate_with_graph(&file(case), Some(&g)), [], "{case}");
    }
}

#[test]
fn a_wrong_number_of_tiles_is_reported_once_per_array() {
    let mut g = graph();
    g.target.num_tiles = 9;
    g.target.total_memory = 65_536 * 9;
    let problems = validate_graph(&g, "");
    let kinds = errors(&problems);
    assert!(kinds.contains(&(ProblemKind::TileCount, "target.numTiles".into())));
    // bytesPerIPU x numIPUs no longer matches totalMemory.
    assert!(kinds.contains(&(ProblemKind::TotalMemory, "target.totalMemory".into())));
    let tile_arrays = kinds
        .iter()
        .filter(|(k, _)| *k == ProblemKind::TileArrayLength)
        .count();
    // 6 estimate rows, 8 internal and 3 + 3 external/host exchange rows, 8 byTile, 35 byCategory,
    // 21 + 21 byComputeSet/byVertexType rows, 2 liveness arrays.
    assert_eq!(tile_arrays, 6 + 8 + 3 + 3 + 8 + 35 + 21 + 21 + 2);
    assert!(kinds.contains(&(
        ProblemKind::TileArrayLength,
        "memory.byCategory.variable.nonInterleaved.overlapped".into()
    )));
}

#[test]
fn cycles_are_found_in_long_chains_without_recursion() {
    let mut g = graph();
    let n = 100_000u32;
    let mut programs: Vec<Program> = (0..n)
        .map(|i| {
            Program::Sequence(Block {
                children: Some(vec![i + 1]),
                ..Block::default()
            })
        })
        .collect();
    // The last program leads back to the first.
    programs.push(Program::Sequence(Block {
        children: Some(vec![0]),
        ..Block::default()
    }));
    g.programs = Some(programs);
    g.control_programs = Some(vec![0]);
    g.function_programs = Some(vec![]);
    let problems = validate_graph(&g, "graphProfile");
    let cycles: Vec<_> = problems
        .iter()
        .filter(|p| p.kind == ProblemKind::ProgramCycle)
        .collect();
    assert_eq!(cycles.len(), 1);
    assert_eq!(
        cycles[0].path,
        format!("graphProfile.programs[{n}].children[0]")
    );
    assert!(
        cycles[0]
            .message
            .contains("0 -> 1 -> 2 -> 3 -> 4 -> 5 -> ... ->"),
        "{}",
        cycles[0]
    );
}

#[test]
fn an_execution_profile_is_checked_against_its_graph() {
    let g = graph();
    let mut e = execution("execution-ipu-model");
    e.program_trace = Some(vec![0, 17]);
    assert_eq!(validate_execution(&e, None, ""), []);
    let kinds = errors(&validate_execution(&e, Some(&g), "executionProfile"));
    assert_eq!(
        kinds,
        [(
            ProblemKind::NotInGraph,
            "executionProfile.programTrace[1]".into()
        )]
    );

    let vertices = ExecutionProfile {
        mode: ProfilerMode::Vertices {
            vertex_cycles: Counts::from([1, 2, 3]),
            vertex_compute_set: vec![0, 3, 7],
            vertex_type: vec![0, 1],
        },
        program_trace: Some(vec![0]),
        ..ExecutionProfile::default()
    };
    let kinds = errors(&validate_execution(&vertices, Some(&g), ""));
    assert_eq!(
        kinds,
        [
            (ProblemKind::ArrayLength, "vertexType".into()),
            (ProblemKind::ArrayLength, "vertexCycles".into()),
            (ProblemKind::NotInGraph, "vertexComputeSet[1]".into()),
            (ProblemKind::NotInGraph, "vertexComputeSet[2]".into()),
        ]
    );
}

#[test]
fn many_bad_indices_in_one_array_are_counted_after_twenty() {
    let g = graph();
    let e = ExecutionProfile {
        mode: ProfilerMode::IpuModel,
        program_trace: Some(vec![99; 50]),
        ..ExecutionProfile::default()
    };
    let problems = validate_with_graph(&ProfileFile::Execution(e), Some(&g));
    assert_eq!(problems.len(), 21);
    assert_eq!(problems[20].path, "programTrace");
    assert_eq!(
        problems[20].message,
        "and 30 more indices out of range in this array"
    );
}

#[test]
fn missing_sections_and_unknown_tags_are_warnings() {
    let problems = validate(&file("unknown-tags"));
    assert!(problems.iter().all(|p| p.severity == Severity::Warning));
    assert!(problems.iter().any(|p| p.kind == ProblemKind::UnknownTag
        && p.path == "executionProfile.simulation.steps[2].type"));
    let e = ExecutionProfile {
        mode: ProfilerMode::IpuModel,
        ..ExecutionProfile::default()
    };
    let problems = validate(&ProfileFile::Execution(e));
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].to_string(),
        "warning: programTrace: a IPU_MODEL profile should have a program trace"
    );
}

#[test]
fn problems_serialise_for_machines() {
    let problems = validate(&file("seed-bytile-example"));
    let json = serde_json::to_value(problems.last().unwrap()).unwrap();
    assert_eq!(json["severity"], "error");
    assert_eq!(json["kind"], "inconsistent");
    assert_eq!(json["path"], "memory.byTile.total");
}

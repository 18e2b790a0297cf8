//! Analysis: memory, the program tree, the timeline and tile balance of the hand-written cases.

mod common;

use common::{execution, file, graph};
use profkit_poplar::analysis::{analyse, memory, program_tree, timeline};

#[test]
fn memory_per_tile_against_capacity() {
    let m = memory(&graph()).unwrap();
    assert_eq!((m.bytes_per_tile, m.tiles), (65_536, 8));
    assert_eq!(m.total_bytes, 215_656);
    assert_eq!(m.total_bytes_including_gaps, 241_000);
    assert_eq!(m.gap_bytes, 25_344);
    let max = m.max_tile.unwrap();
    assert_eq!((max.tile, max.ipu, max.bytes), (5, 1, 70_000));
    assert_eq!(m.overflowing_tiles.len(), 1);
    assert_eq!(
        (m.overflowing_tiles[0].tile, m.overflowing_tiles[0].over_by),
        (5, 4_464)
    );
    assert_eq!(m.overflow_bytes, 4_464);
    assert_eq!(m.per_tile.headroom[5], -4_464);
    assert_eq!(m.per_tile.gap_bytes[0], 36_000 - 31_024);
    assert_eq!(m.ipus.len(), 2);
    assert_eq!(m.ipus[1].overflowing_tiles, 1);
    assert_eq!(
        m.ipus[0].bytes_including_gaps + m.ipus[1].bytes_including_gaps,
        241_000
    );
    // The free bytes are those of the seven tiles that fit.
    assert_eq!(m.free_bytes, 7 * 65_536 - (241_000 - 70_000));
}

#[test]
fn largest_categories_first() {
    let m = memory(&graph()).unwrap();
    let names: Vec<&str> = m.categories.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "variable",
            "vertexCode",
            "stack",
            "controlCode",
            "instrumentationResults"
        ]
    );
    let variable = &m.categories[0];
    assert_eq!(variable.bytes, 180_432);
    assert_eq!(variable.overlapped, 26_000);
    assert_eq!(variable.overflowed, 2_000);
    let shares: f64 = m.categories.iter().map(|c| c.share).sum();
    assert!((shares - 1.0).abs() < 1e-12);
}

#[test]
fn peak_liveness() {
    let l = memory(&graph()).unwrap().liveness.unwrap();
    assert_eq!(l.always_live_bytes, 134_000);
    assert_eq!(l.not_always_live_max_bytes, 66_000);
    assert_eq!(l.peak_bytes, 200_000);
    let tile = l.peak_tile.unwrap();
    assert_eq!((tile.tile, tile.bytes), (5, 62_000));
}

#[test]
fn the_program_tree_with_names() {
    let tree = program_tree(&graph());
    assert_eq!(tree.programs, 17);
    assert_eq!(tree.by_type["OnTileExecute"], 3);
    assert_eq!(tree.control.len(), 1);
    assert_eq!(tree.functions.len(), 1);
    assert_eq!(tree.functions[0].tree.program, 9);
    let walked: Vec<(usize, u32, Option<&str>)> = tree
        .walk()
        .into_iter()
        .map(|(depth, n)| (depth, n.program, n.name.as_deref()))
        .collect();
    assert_eq!(walked.len(), 18, "program 4 comes twice");
    assert_eq!(walked[0], (0, 0, None));
    // Program 10 has no name of its own: its compute set's.
    assert!(walked.contains(&(3, 10, Some("layer1/add/Add"))));
    let (_, shared) = tree
        .walk()
        .into_iter()
        .find(|(depth, n)| *depth == 4 && n.program == 4)
        .unwrap();
    assert!(shared.seen_before && shared.children.is_empty());
    let (_, call) = tree
        .walk()
        .into_iter()
        .find(|(_, n)| n.program == 6)
        .unwrap();
    assert_eq!(call.calls, Some(0));
}

#[test]
fn the_timeline_in_cycles_and_nanoseconds() {
    let g = graph();
    let t = timeline(&execution("execution-ipu-model"), Some(&g)).unwrap();
    assert_eq!(t.cycles, 1_820);
    assert!((t.duration_ns.unwrap() - 1_820.0 / 1.33).abs() < 1e-9);
    assert_eq!(t.steps.len(), 11);
    let conv = &t.steps[3];
    assert_eq!((conv.start_cycle, conv.end_cycle), (Some(220), Some(820)));
    assert!((conv.end_ns.unwrap() - 820.0 / 1.33).abs() < 1e-9);
    assert_eq!(t.steps[9].sync_type.as_deref(), Some("External"));
    // Every total the steps can give agrees with tileCycles.
    for total in &t.totals {
        if total.activity != "sync" {
            assert_eq!(total.agrees, Some(true), "{total:?}");
        }
    }
    assert_eq!(t.balance.steps_compared, 9);
    assert_eq!(t.balance.steps_agreeing, 9);
}

#[test]
fn tile_balance_recomputed_from_hardware_cycles() {
    let g = graph();
    for case in [
        "execution-compute-sets",
        "execution-external-exchanges",
        "execution-host-exchanges",
    ] {
        let t = timeline(&execution(case), Some(&g)).unwrap();
        assert!(t.balance.steps_compared > 0, "{case}");
        assert_eq!(
            t.balance.steps_compared, t.balance.steps_agreeing,
            "{case}: {:?}",
            t.balance
        );
        assert!(
            t.balance
                .steps
                .iter()
                .all(|s| !s.source.contains("estimate")),
            "{case}"
        );
    }
    // A wrong balance in the file is caught.
    let mut e = execution("execution-compute-sets");
    if let Some(profkit_poplar::Step::OnTileExecute(s)) =
        e.simulation.as_mut().and_then(|s| s.steps.first_mut())
    {
        s.tile_balance = Some(0.5);
    }
    let t = timeline(&e, Some(&g)).unwrap();
    assert_eq!(t.balance.steps_agreeing, 1);
    assert!((t.balance.max_tile_balance_difference - 0.4778225806451613).abs() < 1e-12);
}

#[test]
fn without_its_graph_an_execution_profile_has_cycles_only() {
    let t = timeline(&execution("execution-ipu-model"), None).unwrap();
    assert_eq!(t.duration_ns, None);
    assert!(
        t.steps
            .iter()
            .all(|s| s.start_ns.is_none() && s.tile_cycles.is_none())
    );
    assert_eq!(t.balance.steps_compared, 0);
    assert!(timeline(&execution("execution-none"), None).is_none());
}

#[test]
fn analysis_serialises_with_stable_names() {
    let a = analyse(&file("combined"), None);
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["shape"], "combined");
    assert_eq!(json["graph_profile"]["target"]["tiles"], 2);
    assert_eq!(json["graph_profile"]["memory"]["max_tile"]["tile"], 0);
    assert_eq!(json["execution_profile"]["profiler_mode"], "COMPUTE_SETS");
    assert_eq!(
        json["execution_profile"]["timeline"]["totals"][0]["agrees"],
        serde_json::Value::Bool(true)
    );
}

#[test]
fn a_long_chain_of_programs_builds_in_linear_time() {
    use profkit_poplar::Program;
    use profkit_poplar::program::Block;
    let mut g = graph();
    let n = 200_000u32;
    let mut programs: Vec<Program> = (0..n)
        .map(|i| {
            Program::Sequence(Block {
                children: Some(vec![i + 1]),
                ..Block::default()
            })
        })
        .collect();
    programs.push(Program::Sequence(Block {
        children: Some(vec![0]),
        ..Block::default()
    }));
    g.programs = Some(programs);
    g.control_programs = Some(vec![0]);
    g.function_programs = Some(vec![]);
    let tree = program_tree(&g);
    let walked = tree.walk();
    let max = profkit_poplar::analysis::MAX_TREE_DEPTH;
    assert_eq!(walked.len(), max + 1);
    let (depth, last) = walked.last().unwrap();
    assert_eq!(
        (*depth, last.program, last.too_deep),
        (max, max as u32, true)
    );
    // Shallow enough to serialise and read back within the reader's depth limit.
    let text = profkit_poplar::to_string(&tree).unwrap();
    assert!(profkit_poplar::from_str::<serde_json::Value>(&text).is_ok());
}

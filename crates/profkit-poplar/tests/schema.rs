//! The typed model: every section, tag and mode read from the hand-written cases, numbers in all
//! their spellings, unknown keys and tags kept, and writing back.

mod common;

use std::io::Read;

use common::{execution, file, graph, input};
use profkit_poplar::program::Exchange;
use profkit_poplar::step::SyncStep;
use profkit_poplar::{
    Counts, ExchangeKind, ExecutionProfile, GraphProfile, NotAlwaysLive, ProfileFile, ProfilerMode,
    Program, Shape, Step, SyncType, TargetType, from_reader, from_slice, from_str, to_string,
    to_string_pretty,
};
use serde_json::{Value, json};

#[test]
fn the_complete_graph_profile_reads_section_by_section() {
    let g = graph();
    let t = &g.target;
    assert_eq!(t.target_type, TargetType::IpuModel);
    assert_eq!((t.num_ipus, t.tiles_per_ipu, t.num_tiles), (2, 4, 8));
    assert_eq!((t.bytes_per_tile, t.total_memory), (65_536, 524_288));
    assert_eq!(t.sync_delay(5), Some(15));
    assert_eq!(t.cycles_to_ns(1_330), Some(1_000.0));
    assert_eq!(
        g.optimization_info.as_ref().unwrap()["schedulingTime"],
        0.25
    );
    assert_eq!(g.graph.as_ref().unwrap().num_vertices, 16);
    assert_eq!(g.vertex_type_name(1), Some("popops::ScaledAdd2D<float>"));
    let cs = g.compute_sets.as_ref().unwrap();
    assert_eq!(cs.vertex_types, vec![vec![2], vec![1, 0], vec![0]]);
    let estimates = cs.cycle_estimates.as_ref().unwrap();
    assert_eq!(
        estimates.cycles_by_tile[1].to_vec(),
        [300, 300, 300, 300, 150, 150, 0, 0]
    );
    assert_eq!(g.exchanges.as_ref().unwrap().len(), 2);
    assert_eq!(g.external_exchanges.as_ref().unwrap().len(), 1);
    assert_eq!(g.host_exchanges.as_ref().unwrap().len(), 1);
    let memory = g.memory.as_ref().unwrap();
    assert_eq!(
        memory.by_tile.as_ref().unwrap().total_including_gaps.get(5),
        Some(70_000)
    );
    let categories = memory.by_category.as_ref().unwrap();
    assert_eq!(categories.len(), 5);
    assert_eq!(
        categories["variable"].non_interleaved.overlapped.sum(),
        26_000
    );
    assert_eq!(memory.by_compute_set.as_ref().unwrap().total_bytes.len(), 3);
    let liveness = memory.liveness.as_ref().unwrap();
    let tree = liveness
        .not_always_live
        .as_ref()
        .unwrap()
        .by_program
        .as_ref()
        .unwrap();
    // One object in this file: a list of one, written back as an object.
    assert!(tree.single_object);
    let tree = &tree.roots[0];
    assert_eq!(tree.bytes, 22_000);
    assert_eq!(tree.extra["program"], json!(0));
    assert_eq!(
        tree.children.as_ref().unwrap()[1]
            .children
            .as_ref()
            .unwrap()[0]
            .bytes,
        3_000
    );
    assert_eq!(g.control_programs.as_deref(), Some(&[0][..]));
    assert_eq!(g.function_programs.as_deref(), Some(&[9][..]));
}

#[test]
fn programs_by_tag() {
    let g = graph();
    let p = g.programs();
    assert_eq!(p.len(), 17);
    let types: Vec<&str> = p.iter().map(Program::type_name).collect();
    assert_eq!(
        types,
        [
            "Sequence",
            "StreamCopy",
            "Sync",
            "DoExchange",
            "OnTileExecute",
            "Repeat",
            "Call",
            "GlobalExchange",
            "Sequence",
            "Sequence",
            "OnTileExecute",
            "DoExchange",
            "OnTileExecute",
            "If",
            "Switch",
            "WriteUndef",
            "CopySharedStructure"
        ]
    );
    assert_eq!(p[0].children(), [1, 2, 3, 4, 5, 6, 7, 15]);
    assert_eq!(p[1].exchange(), Some((ExchangeKind::Host, 0)));
    assert_eq!(p[7].exchange(), Some((ExchangeKind::External, 0)));
    assert_eq!(p[4].compute_set(), Some(0));
    assert_eq!(p[6].call_target(), Some(0));
    assert_eq!(p[3].name(), Some("/ExchangePre"));
    let Program::DoExchange(Exchange {
        memory_by_instruction: Some(by_instruction),
        ..
    }) = &p[3]
    else {
        panic!("{:?}", p[3]);
    };
    assert_eq!(by_instruction["total"], 80);
    // A key the tag does not define is kept with the program.
    assert_eq!(p[5].extra()["count"], json!(2));
}

#[test]
fn steps_by_tag() {
    let e = execution("execution-ipu-model");
    assert_eq!(e.mode, ProfilerMode::IpuModel);
    assert_eq!(e.program_trace.as_deref(), Some(&[0][..]));
    let steps = e.steps();
    assert_eq!(steps.len(), 11);
    assert!(matches!(
        &steps[1],
        Step::Sync {
            step: SyncStep {
                sync_type: Some(SyncType::Internal),
                ..
            },
            lowercase_tag: false
        }
    ));
    assert_eq!(steps[9].type_name(), "sync");
    assert_eq!(steps[0].exchange(), Some((ExchangeKind::Host, 0)));
    assert_eq!(steps[10].exchange(), Some((ExchangeKind::External, 0)));
    assert_eq!(steps[3].compute_set(), Some(0));
    let timing = steps[4].timing().unwrap();
    assert_eq!(
        (timing.cycles_from, timing.cycles_to),
        (Some(820), Some(1_120))
    );
    assert_eq!(timing.active_tile_balance, Some(0.8333333333333334));
    let sim = e.simulation.as_ref().unwrap();
    assert_eq!(sim.cycles, 1_820);
    assert_eq!(sim.tile_cycles.as_ref().unwrap().compute, Some(8_040));
}

#[test]
fn every_profiler_mode() {
    let modes: Vec<(String, String)> = [
        "execution-none",
        "execution-cpu",
        "execution-ipu-model",
        "execution-compute-sets",
        "execution-single-tile-compute-sets",
        "execution-vertices",
        "execution-external-exchanges",
        "execution-host-exchanges",
    ]
    .iter()
    .map(|case| (case.to_string(), execution(case).mode.name().to_owned()))
    .collect();
    let names: Vec<&str> = modes.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        names,
        [
            "NONE",
            "CPU",
            "IPU_MODEL",
            "COMPUTE_SETS",
            "SINGLE_TILE_COMPUTE_SETS",
            "VERTICES",
            "EXTERNAL_EXCHANGES",
            "HOST_EXCHANGES"
        ]
    );
    let ProfilerMode::Vertices {
        vertex_cycles,
        vertex_compute_set,
        vertex_type,
    } = execution("execution-vertices").mode
    else {
        panic!()
    };
    assert_eq!((vertex_cycles.len(), vertex_cycles.sum()), (16, 942));
    assert_eq!((vertex_compute_set[15], vertex_type[8]), (2, 1));
    let ProfilerMode::ComputeSets {
        compute_set_cycles_by_tile,
    } = execution("execution-compute-sets").mode
    else {
        panic!()
    };
    assert_eq!(
        compute_set_cycles_by_tile[2].to_vec(),
        [130, 0, 0, 0, 125, 0, 0, 0]
    );
}

#[test]
fn the_none_profile_is_exactly_one_key() {
    assert_eq!(
        to_string(&ExecutionProfile::none()).unwrap(),
        r#"{"profilerMode":"NONE"}"#
    );
    let f: ProfileFile = from_str(r#"{"profilerMode":"NONE"}"#).unwrap();
    assert_eq!(f, ProfileFile::Execution(ExecutionProfile::none()));
    assert!(!ExecutionProfile::none().mode.has_trace());
}

#[test]
fn shapes_are_told_apart_by_their_keys() {
    assert_eq!(file("graph-complete").shape(), Shape::Graph);
    assert_eq!(file("execution-vertices").shape(), Shape::Execution);
    let combined = file("combined");
    assert_eq!(combined.shape(), Shape::Combined);
    assert_eq!(combined.graph().unwrap().target.num_tiles, 2);
    assert_eq!(combined.execution().unwrap().mode.name(), "COMPUTE_SETS");
    assert_eq!(
        (combined.graph_path(), combined.execution_path()),
        ("graphProfile", "executionProfile")
    );
    // The specific types read their own shape directly.
    let g: GraphProfile = from_slice(&input("graph-complete")).unwrap();
    assert_eq!(g, graph());
    let e: ExecutionProfile = from_slice(&input("execution-host-exchanges")).unwrap();
    assert_eq!(e.mode.name(), "HOST_EXCHANGES");
}

#[test]
fn integers_read_from_every_spelling_and_are_written_as_integers() {
    let f = file("doubles");
    let g = f.graph().unwrap();
    assert_eq!(g.target.bytes_per_ipu, 1_277_952);
    assert_eq!(g.graph.as_ref().unwrap().num_edges, 12);
    assert_eq!(
        g.memory
            .as_ref()
            .unwrap()
            .by_tile
            .as_ref()
            .unwrap()
            .total
            .to_vec(),
        [1_274, 64]
    );
    let text = to_string(&f).unwrap();
    assert!(text.contains(r#""numEdges":12,"#), "{text}");
    assert!(text.contains(r#""total":[1274,64]"#), "{text}");
    assert!(!text.contains("e+") && !text.contains("E+"), "{text}");
}

#[test]
fn unknown_keys_and_tags_survive_a_round_trip() {
    let f = file("unknown-tags");
    let g = f.graph().unwrap();
    assert_eq!(g.extra["profilerVersion"], json!("3.1.0"));
    assert_eq!(g.target.target_type, TargetType::Other("IPU_MK3".into()));
    let Program::Unknown(u) = &g.programs()[1] else {
        panic!()
    };
    assert_eq!(u.type_name, "Instrument");
    assert_eq!(u.fields["payload"], json!({"a": [1, 2.5, "x"]}));
    assert_eq!(u.fields["children"], json!([]));
    let e = f.execution().unwrap();
    assert_eq!(e.mode, ProfilerMode::Other("INSTRUMENTED_VERTICES".into()));
    assert_eq!(e.extra["instrumentedCycles"], json!([5, 7]));
    let Step::Unknown(step) = &e.steps()[0] else {
        panic!()
    };
    assert_eq!(step.fields["weight"], json!(-1.5));
    assert_eq!(step.fields["program"], json!(1));

    let written: Value = serde_json::from_str(&to_string(&f).unwrap()).unwrap();
    let original: Value = serde_json::from_slice(&input("unknown-tags")).unwrap();
    assert_eq!(written, original);
}

#[test]
fn a_field_the_tag_does_not_use_is_kept() {
    let text =
        r#"{"computeSet":3,"exchange":1,"memoryByInstruction":{"total":0},"type":"Sequence"}"#;
    let program: Program = from_str(text).unwrap();
    let Program::Sequence(block) = &program else {
        panic!()
    };
    assert_eq!(block.extra["exchange"], json!(1));
    assert_eq!(to_string(&program).unwrap(), text);
}

#[test]
fn writing_sorts_keys_as_poplar_does() {
    let text = r#"{"type":"OnTileExecute","zeta":1,"computeSet":2,"alpha":true,"name":"n"}"#;
    let program: Program = from_str(text).unwrap();
    assert_eq!(
        to_string(&program).unwrap(),
        r#"{"alpha":true,"computeSet":2,"name":"n","type":"OnTileExecute","zeta":1}"#
    );
    let e: ExecutionProfile =
        from_str(r#"{"programTrace":[0],"vertexType":[0],"vertexComputeSet":[1],"profilerMode":"VERTICES","vertexCycles":[9]}"#)
            .unwrap();
    assert_eq!(
        to_string(&e).unwrap(),
        r#"{"profilerMode":"VERTICES","programTrace":[0],"vertexComputeSet":[1],"vertexCycles":[9],"vertexType":[0]}"#
    );
}

#[test]
fn pretty_writing_keeps_tile_arrays_on_one_line() {
    let text = to_string_pretty(&file("graph-complete")).unwrap();
    assert!(text.contains("\"total\": [31024, 29024, 20512, 18512, 33024, 64048, 10256, 9256]"));
    let back: ProfileFile = from_str(&text).unwrap();
    assert_eq!(back, file("graph-complete"));
}

#[test]
fn serde_json_reads_the_same_model_through_the_generic_path() {
    for case in [
        "graph-complete",
        "execution-ipu-model",
        "combined",
        "unknown-tags",
        "doubles",
    ] {
        let ours = file(case);
        let theirs: ProfileFile = serde_json::from_slice(&input(case)).unwrap();
        assert_eq!(theirs, ours, "{case}");
        let value = serde_json::to_value(&ours).unwrap();
        assert_eq!(
            serde_json::from_value::<ProfileFile>(value).unwrap(),
            ours,
            "{case}"
        );
    }
}

/// Hands out its bytes one at a time.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (self.0.split_first(), buf.first_mut()) {
            (Some((&b, rest)), Some(slot)) => {
                *slot = b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

#[test]
fn a_reader_that_trickles_gives_the_same_profile() {
    for case in ["graph-complete", "execution-ipu-model", "unknown-tags"] {
        let bytes = input(case);
        let f: ProfileFile = from_reader(Trickle(&bytes)).unwrap();
        assert_eq!(f, file(case), "{case}");
    }
}

#[test]
fn counts_are_compact() {
    let g = graph();
    let memory = g.memory.as_ref().unwrap();
    let bytes: usize = memory
        .by_category
        .as_ref()
        .unwrap()
        .values()
        .flat_map(|c| {
            [&c.interleaved, &c.non_interleaved, &c.overflowed]
                .into_iter()
                .flat_map(|r| [&r.non_overlapped, &r.overlapped])
                .chain([&c.total])
        })
        .map(Counts::heap_bytes)
        .sum();
    // 35 arrays of 8 tiles; most are all zeros and take nothing.
    assert!(bytes < 35 * 8, "{bytes}");
}

#[test]
fn liveness_by_program_is_a_list_of_roots_or_one_object() {
    let with = |by_program: &str| format!(r#"{{"byProgram":{by_program},"maxBytesByTile":[1]}}"#);
    let roots = |text: &str| {
        let section: NotAlwaysLive = from_str(text).unwrap();
        let roots = section.by_program.clone().unwrap();
        (section, roots)
    };
    // The list, as in the files Graphcore's own code reads.
    let list = with(r#"[{"bytes":5,"children":[{"bytes":7}]},{"bytes":6,"program":2}]"#);
    let (section, by_program) = roots(&list);
    assert!(!by_program.single_object);
    assert_eq!(by_program.roots.len(), 2);
    assert_eq!(by_program.roots[1].extra["program"], json!(2));
    // The peak is the maximum over the list, children included.
    assert_eq!(by_program.peak_bytes(), Some(7));
    let order: Vec<u64> = by_program.nodes().map(|n| n.bytes).collect();
    assert_eq!(order, [5, 7, 6]);
    // Written back as it was read: a list stays a list, one object stays one object.
    let back = |section: &NotAlwaysLive| serde_json::to_value(section).unwrap();
    assert_eq!(
        back(&section),
        serde_json::from_str::<Value>(&list).unwrap()
    );
    let one = with(r#"{"bytes":5}"#);
    let (section, by_program) = roots(&one);
    assert!(by_program.single_object);
    assert_eq!(by_program.roots.len(), 1);
    assert_eq!(back(&section), serde_json::from_str::<Value>(&one).unwrap());
    // An empty list has no peak; anything but nodes is refused, with its place.
    assert_eq!(roots(&with("[]")).1.peak_bytes(), None);
    let e = from_str::<NotAlwaysLive>(&with(r#"[{"bytes":1},3]"#)).unwrap_err();
    assert!(e.to_string().contains("byProgram[1]"), "{e}");
    let e = from_str::<NotAlwaysLive>(&with("3")).unwrap_err();
    assert!(e.to_string().contains("byProgram"), "{e}");
}

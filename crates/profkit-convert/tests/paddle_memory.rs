//! Paddle's memory nodes through the XSpace: as many allocations and frees come out as went in,
//! on every thread (a static-graph run's `GarbageCollector` thread frees outside every range, so
//! its memory nodes hang from its tree's root node).

use profkit_convert::events::{MEMORY_LINE_ID, recording_to_xspace, xspace_to_recording};
use profkit_events::MemEventKind;
use profkit_events::paddle::nodetree;

fn trees() -> nodetree::NodeTreesProto {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/paddle/nodetree-static-memory/input.paddle_trace.pb");
    nodetree::decode_node_trees(&std::fs::read(path).unwrap()).unwrap()
}

/// (allocations, frees) by thread id.
fn nodes_by_thread(trees: &nodetree::NodeTreesProto) -> Vec<(u64, usize, usize)> {
    trees
        .thread_trees
        .iter()
        .map(|t| {
            let mems = || t.host_nodes.iter().flat_map(|n| &n.mem_nodes);
            let of = |code| mems().filter(|m| m.mem_event.r#type == code).count();
            (t.thread_id, of(0), of(1))
        })
        .collect()
}

#[test]
fn every_memory_node_reaches_the_xspace_and_comes_back() {
    let trees = trees();
    let (space, warnings) = recording_to_xspace(&nodetree::to_recording(&trees));
    assert!(warnings.is_empty(), "{warnings:?}");
    let line = space
        .planes
        .iter()
        .flat_map(|p| &p.lines)
        .find(|l| l.id == MEMORY_LINE_ID)
        .unwrap();
    assert_eq!(line.events.len(), 80);

    let back = xspace_to_recording(&space);
    let mut out: Vec<(u64, usize, usize)> = Vec::new();
    for (tid, ..) in nodes_by_thread(&trees) {
        let of = |kind: MemEventKind| {
            back.memory_events
                .iter()
                .filter(|m| m.thread_id == tid && m.kind == kind)
                .count()
        };
        out.push((tid, of(MemEventKind::Allocate), of(MemEventKind::Free)));
    }
    assert_eq!(out, nodes_by_thread(&trees));
    // The garbage collector's frees are among them.
    assert!(out.iter().any(|&(_, a, f)| (a, f) == (0, 24)), "{out:?}");
}

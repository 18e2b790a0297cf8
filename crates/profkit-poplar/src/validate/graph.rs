//! The checks of a graph profile.

use crate::graph::GraphProfile;
use crate::path;
use crate::target::TargetType;

use super::programs::check_programs;
use super::{Problem, ProblemKind, Problems};

/// Every problem of a graph profile whose JSON path is `base` (empty for a file of its own).
pub fn validate_graph(graph: &GraphProfile, base: &str) -> Vec<Problem> {
    let mut p = Problems::default();
    let at = |key: &str| path::key(base, key);
    let target = &graph.target;
    let tiles = target.num_tiles;

    // Target.
    let t = at("target");
    match target.num_ipus.checked_mul(target.tiles_per_ipu) {
        Some(n) if n == tiles => {}
        product => p.error(
            ProblemKind::TileCount,
            path::key(&t, "numTiles"),
            format!(
                "numTiles is {tiles}, but numIPUs x tilesPerIPU is {} x {} = {}",
                target.num_ipus,
                target.tiles_per_ipu,
                product.map_or("more than 2^64".to_owned(), |n| n.to_string())
            ),
        ),
    }
    for (a, b, names) in [
        (target.bytes_per_tile, tiles, "bytesPerTile x numTiles"),
        (
            target.bytes_per_ipu,
            target.num_ipus,
            "bytesPerIPU x numIPUs",
        ),
    ] {
        let product = a.checked_mul(b);
        if product != Some(target.total_memory) {
            p.error(
                ProblemKind::TotalMemory,
                path::key(&t, "totalMemory"),
                format!(
                    "totalMemory is {}, but {names} is {}",
                    target.total_memory,
                    product.map_or("more than 2^64".to_owned(), |n| n.to_string())
                ),
            );
        }
    }
    if let Some(delays) = &target.relative_sync_delay_by_tile {
        p.tile_array(
            path::key(&t, "relativeSyncDelayByTile"),
            delays,
            target.tiles_per_ipu,
            "tilesPerIPU (the delays are given for one IPU)",
        );
    }
    if !(target.clock_frequency.is_finite() && target.clock_frequency > 0.0) {
        p.error(
            ProblemKind::Inconsistent,
            path::key(&t, "clockFrequency"),
            format!(
                "the clock frequency must be a positive number of hertz, not {}",
                target.clock_frequency
            ),
        );
    }
    if let TargetType::Other(name) = &target.target_type {
        p.warning(
            ProblemKind::UnknownTag,
            path::key(&t, "type"),
            format!("unknown target type {name:?} (known: CPU, IPU, IPU_MODEL)"),
        );
    }
    let per_tile = Some((tiles, "numTiles"));

    // Sections the format documents.
    for (present, key) in [
        (graph.optimization_info.is_some(), "optimizationInfo"),
        (graph.graph.is_some(), "graph"),
        (graph.vertex_types.is_some(), "vertexTypes"),
        (graph.compute_sets.is_some(), "computeSets"),
        (graph.exchanges.is_some(), "exchanges"),
        (graph.external_exchanges.is_some(), "externalExchanges"),
        (graph.host_exchanges.is_some(), "hostExchanges"),
        (graph.programs.is_some(), "programs"),
        (graph.control_programs.is_some(), "controlPrograms"),
        (graph.function_programs.is_some(), "functionPrograms"),
        (graph.memory.is_some(), "memory"),
    ] {
        if !present {
            p.warning(
                ProblemKind::MissingSection,
                at(key),
                "the section is missing".into(),
            );
        }
    }

    // Vertex types and compute sets.
    let num_vertex_types = graph.vertex_types.as_ref().map(|v| v.names.len());
    if let Some(vt) = &graph.vertex_types
        && vt.sizes.len() != vt.names.len()
    {
        p.error(
            ProblemKind::ArrayLength,
            path::key(&at("vertexTypes"), "sizes"),
            format!(
                "has {} sizes for {} vertex type names",
                vt.sizes.len(),
                vt.names.len()
            ),
        );
    }
    let num_compute_sets = graph.compute_sets.as_ref().map(|cs| cs.names.len());
    if let (Some(info), Some(n)) = (&graph.graph, num_compute_sets)
        && info.num_compute_sets != n as u64
    {
        p.error(
            ProblemKind::Inconsistent,
            path::key(&at("graph"), "numComputeSets"),
            format!(
                "numComputeSets is {}, but computeSets.names has {n} compute sets",
                info.num_compute_sets
            ),
        );
    }
    let compute_sets = num_compute_sets.map(|n| (n, "compute sets"));
    let vertex_types = num_vertex_types.map(|n| (n, "vertex types"));
    if let Some(cs) = &graph.compute_sets {
        let base = at("computeSets");
        let n = cs.names.len();
        for (len, key) in [
            (cs.vertex_counts.len(), "vertexCounts"),
            (cs.vertex_types.len(), "vertexTypes"),
        ] {
            if len != n {
                p.error(
                    ProblemKind::ArrayLength,
                    path::key(&base, key),
                    format!("has {len} row(s), but there are {n} compute sets (names)"),
                );
            }
        }
        for (i, (counts, types)) in cs.vertex_counts.iter().zip(&cs.vertex_types).enumerate() {
            if counts.len() != types.len() {
                p.error(
                    ProblemKind::ArrayLength,
                    path::index(&path::key(&base, "vertexCounts"), i),
                    format!(
                        "has {} counts for {} vertex types",
                        counts.len(),
                        types.len()
                    ),
                );
            }
        }
        if let Some(nv) = num_vertex_types {
            let types = path::key(&base, "vertexTypes");
            for (i, row) in cs.vertex_types.iter().enumerate() {
                p.indices(
                    ProblemKind::IndexOutOfRange,
                    &path::index(&types, i),
                    row.iter().copied(),
                    nv,
                    "vertex type",
                );
            }
        }
        if let Some(est) = &cs.cycle_estimates {
            let e = path::key(&base, "cycleEstimates");
            p.rows(
                &path::key(&e, "activeCyclesByTile"),
                &est.active_cycles_by_tile,
                compute_sets,
                per_tile,
            );
            p.rows(
                &path::key(&e, "cyclesByTile"),
                &est.cycles_by_tile,
                compute_sets,
                per_tile,
            );
            let by_type = path::key(&e, "activeCyclesByVertexType");
            p.rows(
                &by_type,
                &est.active_cycles_by_vertex_type,
                compute_sets,
                None,
            );
            if let Some(nv) = num_vertex_types {
                for (i, row) in est.active_cycles_by_vertex_type.iter().enumerate() {
                    if row.len() != nv {
                        p.error(
                            ProblemKind::ArrayLength,
                            path::index(&by_type, i),
                            format!("has {} values, but there are {nv} vertex types", row.len()),
                        );
                    }
                }
            }
        }
    }

    // Exchanges.
    if let Some(ex) = &graph.exchanges {
        let base = at("exchanges");
        let n = Some((ex.len(), "exchanges (cyclesByTile)"));
        p.rows(
            &path::key(&base, "cyclesByTile"),
            &ex.cycles_by_tile,
            None,
            per_tile,
        );
        p.rows(
            &path::key(&base, "bytesReceivedByTile"),
            &ex.bytes_received_by_tile,
            n,
            per_tile,
        );
        p.rows(
            &path::key(&base, "bytesSentByTile"),
            &ex.bytes_sent_by_tile,
            n,
            per_tile,
        );
        if let Some(code) = &ex.code_bytes_by_tile {
            p.rows(&path::key(&base, "codeBytesByTile"), code, n, per_tile);
        }
    }
    for (key, ex) in [
        (
            "externalExchanges",
            graph.external_exchanges.as_ref().map(|e| {
                (
                    &e.estimated_cycles_by_tile,
                    &e.bytes_received_by_tile,
                    &e.bytes_sent_by_tile,
                )
            }),
        ),
        (
            "hostExchanges",
            graph.host_exchanges.as_ref().map(|e| {
                (
                    &e.estimated_cycles_by_tile,
                    &e.bytes_received_by_tile,
                    &e.bytes_sent_by_tile,
                )
            }),
        ),
    ] {
        if let Some((cycles, received, sent)) = ex {
            let base = at(key);
            let n = Some((cycles.len(), "exchanges (estimatedCyclesByTile)"));
            p.rows(
                &path::key(&base, "estimatedCyclesByTile"),
                cycles,
                None,
                per_tile,
            );
            p.rows(
                &path::key(&base, "bytesReceivedByTile"),
                received,
                n,
                per_tile,
            );
            p.rows(&path::key(&base, "bytesSentByTile"), sent, n, per_tile);
        }
    }

    // Programs.
    check_programs(graph, base, &mut p);

    // Memory.
    if let Some(memory) = &graph.memory {
        let m = at("memory");
        if let Some(bt) = &memory.by_tile {
            let b = path::key(&m, "byTile");
            for (key, counts) in [
                ("interleaved", &bt.interleaved),
                ("interleavedIncludingGaps", &bt.interleaved_including_gaps),
                ("nonInterleaved", &bt.non_interleaved),
                (
                    "nonInterleavedIncludingGaps",
                    &bt.non_interleaved_including_gaps,
                ),
                ("overflowed", &bt.overflowed),
                ("overflowedIncludingGaps", &bt.overflowed_including_gaps),
                ("total", &bt.total),
                ("totalIncludingGaps", &bt.total_including_gaps),
            ] {
                p.tile_array(path::key(&b, key), counts, tiles, "numTiles");
            }
            let mut wrong_sum = (0usize, None);
            let mut below = (0usize, None);
            for (tile, total) in bt.total.iter().enumerate() {
                let parts = [&bt.interleaved, &bt.non_interleaved, &bt.overflowed]
                    .iter()
                    .map(|c| c.get(tile).unwrap_or(0))
                    .fold(0u64, u64::saturating_add);
                if parts != total {
                    wrong_sum.0 += 1;
                    wrong_sum.1.get_or_insert((tile, total, parts));
                }
                if let Some(with_gaps) = bt.total_including_gaps.get(tile)
                    && with_gaps < total
                {
                    below.0 += 1;
                    below.1.get_or_insert((tile, total, with_gaps));
                }
            }
            if let (n, Some((tile, total, parts))) = wrong_sum {
                p.error(
                    ProblemKind::Inconsistent,
                    path::key(&b, "total"),
                    format!(
                        "is not interleaved + nonInterleaved + overflowed on {n} tile(s) \
                         (first: tile {tile}, {total} against {parts})"
                    ),
                );
            }
            if let (n, Some((tile, total, with_gaps))) = below {
                p.error(
                    ProblemKind::Inconsistent,
                    path::key(&b, "totalIncludingGaps"),
                    format!(
                        "is below total on {n} tile(s) (first: tile {tile}, {with_gaps} against {total})"
                    ),
                );
            }
        }
        if let Some(categories) = &memory.by_category {
            let c = path::key(&m, "byCategory");
            for (name, cat) in categories {
                let cp = path::key(&c, name);
                for (region_key, region) in [
                    ("interleaved", &cat.interleaved),
                    ("nonInterleaved", &cat.non_interleaved),
                    ("overflowed", &cat.overflowed),
                ] {
                    let rp = path::key(&cp, region_key);
                    p.tile_array(
                        path::key(&rp, "nonOverlapped"),
                        &region.non_overlapped,
                        tiles,
                        "numTiles",
                    );
                    p.tile_array(
                        path::key(&rp, "overlapped"),
                        &region.overlapped,
                        tiles,
                        "numTiles",
                    );
                }
                p.tile_array(path::key(&cp, "total"), &cat.total, tiles, "numTiles");
            }
        }
        for (key, breakdown, rows) in [
            ("byComputeSet", &memory.by_compute_set, compute_sets),
            ("byVertexType", &memory.by_vertex_type, vertex_types),
        ] {
            if let Some(breakdown) = breakdown {
                let bp = path::key(&m, key);
                for (array_key, array) in breakdown.arrays() {
                    p.rows(&path::key(&bp, array_key), array, rows, per_tile);
                }
            }
        }
        if let Some(liveness) = &memory.liveness {
            let l = path::key(&m, "liveness");
            if let Some(always) = &liveness.always_live {
                p.tile_array(
                    path::key(&path::key(&l, "alwaysLive"), "bytesByTile"),
                    &always.bytes_by_tile,
                    tiles,
                    "numTiles",
                );
            }
            if let Some(not_always) = &liveness.not_always_live {
                p.tile_array(
                    path::key(&path::key(&l, "notAlwaysLive"), "maxBytesByTile"),
                    &not_always.max_bytes_by_tile,
                    tiles,
                    "numTiles",
                );
            }
        }
    }
    p.0
}

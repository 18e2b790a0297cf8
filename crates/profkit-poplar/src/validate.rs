//! Checks of a profile's consistency: every problem, each with the JSON path of the value at
//! fault.
//!
//! Errors are what the format rules out: an index past the end of the array it indexes, a cycle
//! among programs (Poplar allows no recursion), a per-tile array whose length is not `numTiles`
//! (`tilesPerIPU` for `relativeSyncDelayByTile`), redundant figures that disagree (`numTiles`,
//! `totalMemory`, `byTile.total`, `memoryByInstruction.total`, `graph.numComputeSets`), arrays that
//! must run in parallel but differ in length, and an execution profile that refers to programs,
//! compute sets, exchanges or vertex types its graph profile lacks. Warnings are what a valid
//! profile may well have: a section the format documents but the file lacks (older SDKs), a tag or
//! mode this crate does not know, a step without a field the seed says it has.

use std::fmt;

use serde::Serialize;

use crate::counts::Counts;
use crate::execution::{ExecutionProfile, ProfilerMode};
use crate::graph::GraphProfile;
use crate::path;
use crate::profile::ProfileFile;
use crate::program::{ExchangeKind, Program};
use crate::step::Step;
use crate::target::TargetType;

/// How serious a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The profile breaks a rule of the format.
    Error,
    /// The profile is unusual but may be valid.
    Warning,
}

/// What kind of problem it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemKind {
    /// A section (or field) the format documents is absent.
    MissingSection,
    /// An index past the end of the array it indexes.
    IndexOutOfRange,
    /// Programs that reach themselves through `children` and calls.
    ProgramCycle,
    /// A per-tile array whose length is not the number of tiles.
    TileArrayLength,
    /// Arrays that must have the same length do not.
    ArrayLength,
    /// `numTiles` is not `numIPUs` x `tilesPerIPU`.
    TileCount,
    /// `totalMemory` disagrees with the memory per tile or per IPU.
    TotalMemory,
    /// Redundant figures that disagree.
    Inconsistent,
    /// The execution profile refers to something the graph profile lacks.
    NotInGraph,
    /// A tag, mode or type this crate does not know.
    UnknownTag,
}

/// One problem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// How serious it is.
    pub severity: Severity,
    /// What kind it is.
    pub kind: ProblemKind,
    /// The JSON path of the value at fault (empty for the whole file).
    pub path: String,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let path = if self.path.is_empty() {
            "(top level)"
        } else {
            &self.path
        };
        write!(f, "{severity}: {path}: {}", self.message)
    }
}

/// Problems of one kind that are reported one by one up to this many per array, then counted.
const PER_ARRAY: usize = 20;

/// Collects problems.
#[derive(Default)]
struct Problems(Vec<Problem>);

impl Problems {
    fn error(&mut self, kind: ProblemKind, path: String, message: String) {
        self.0.push(Problem {
            severity: Severity::Error,
            kind,
            path,
            message,
        });
    }

    fn warning(&mut self, kind: ProblemKind, path: String, message: String) {
        self.0.push(Problem {
            severity: Severity::Warning,
            kind,
            path,
            message,
        });
    }

    /// Reports `count` problems found in the array at `base` beyond the first [`PER_ARRAY`].
    fn more(&mut self, kind: ProblemKind, base: &str, count: usize, what: &str) {
        if count > PER_ARRAY {
            self.error(
                kind,
                base.to_owned(),
                format!("and {} more {what} in this array", count - PER_ARRAY),
            );
        }
    }

    /// Checks that the per-tile array at `at` has `tiles` values.
    fn tile_array(&mut self, at: String, counts: &Counts, tiles: u64, of: &str) {
        if counts.len() as u64 != tiles {
            self.error(
                ProblemKind::TileArrayLength,
                at,
                format!("has {} value(s), but {of} is {tiles}", counts.len()),
            );
        }
    }

    /// Checks a 2-D array `[index][tile]`: `expected` rows (when known) of `tiles` values each.
    fn rows(
        &mut self,
        at: &str,
        rows: &[Counts],
        expected: Option<(usize, &str)>,
        tiles: Option<(u64, &str)>,
    ) {
        if let Some((n, what)) = expected
            && rows.len() != n
        {
            self.error(
                ProblemKind::ArrayLength,
                at.to_owned(),
                format!("has {} row(s), but there are {n} {what}", rows.len()),
            );
        }
        if let Some((tiles, of)) = tiles {
            for (i, row) in rows.iter().enumerate() {
                self.tile_array(path::index(at, i), row, tiles, of);
            }
        }
    }

    /// Checks that every index of `indices` (an array at `at`) is below `len`.
    fn indices(
        &mut self,
        kind: ProblemKind,
        at: &str,
        indices: impl IntoIterator<Item = u32>,
        len: usize,
        what: &str,
    ) {
        let mut bad = 0usize;
        for (i, value) in indices.into_iter().enumerate() {
            if value as usize >= len {
                bad += 1;
                if bad <= PER_ARRAY {
                    let message = if kind == ProblemKind::NotInGraph {
                        format!("{what} {value} is not in the graph profile (it has {len})")
                    } else {
                        format!("{what} {value} is out of range (there are {len})")
                    };
                    self.error(kind, path::index(at, i), message);
                }
            }
        }
        self.more(kind, at, bad, "indices out of range");
    }
}

/// Every problem of a profile file (a combined file's execution profile is checked against its
/// graph profile).
pub fn validate(file: &ProfileFile) -> Vec<Problem> {
    validate_with_graph(file, None)
}

/// Every problem of a profile file, checking an execution profile against `graph` (the graph
/// profile of the same run, from a separate file) when the file has no graph profile of its own.
/// Problems of `graph` itself are not reported.
pub fn validate_with_graph(file: &ProfileFile, graph: Option<&GraphProfile>) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(graph) = file.graph() {
        problems.extend(validate_graph(graph, file.graph_path()));
    }
    if let Some(execution) = file.execution() {
        problems.extend(validate_execution(
            execution,
            file.graph().or(graph),
            file.execution_path(),
        ));
    }
    if let ProfileFile::Combined(p) = file
        && p.graph_profile.is_none()
        && p.execution_profile.is_none()
    {
        problems.push(Problem {
            severity: Severity::Warning,
            kind: ProblemKind::MissingSection,
            path: String::new(),
            message: "the combined profile has neither graphProfile nor executionProfile".into(),
        });
    }
    problems
}

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

    // Sections the seed documents.
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

/// The index checks of `programs`, `controlPrograms` and `functionPrograms`, and the search for
/// cycles.
fn check_programs(graph: &GraphProfile, base: &str, p: &mut Problems) {
    let programs = graph.programs();
    let n = programs.len();
    let at = |key: &str| path::key(base, key);
    for key in ["controlPrograms", "functionPrograms"] {
        let list = if key == "controlPrograms" {
            &graph.control_programs
        } else {
            &graph.function_programs
        };
        if let Some(list) = list {
            p.indices(
                ProblemKind::IndexOutOfRange,
                &at(key),
                list.iter().copied(),
                n,
                "program",
            );
        }
    }
    let functions = graph.function_programs.as_deref().unwrap_or_default();
    let compute_sets = graph.num_compute_sets();
    let pp = at("programs");
    for (i, program) in programs.iter().enumerate() {
        let here = path::index(&pp, i);
        let children = program.children();
        p.indices(
            ProblemKind::IndexOutOfRange,
            &path::key(&here, "children"),
            children.iter().copied(),
            n,
            "program",
        );
        if let Some(cs) = program.compute_set() {
            match compute_sets {
                Some(len) if (cs as usize) < len => {}
                Some(len) => p.error(
                    ProblemKind::IndexOutOfRange,
                    path::key(&here, "computeSet"),
                    format!("compute set {cs} is out of range (there are {len})"),
                ),
                None => p.error(
                    ProblemKind::IndexOutOfRange,
                    path::key(&here, "computeSet"),
                    format!("compute set {cs}, but the profile has no computeSets"),
                ),
            }
        }
        if let Some((kind, ex)) = program.exchange() {
            let len = exchange_count(graph, kind);
            match len {
                Some(len) if (ex as usize) < len => {}
                Some(len) => p.error(
                    ProblemKind::IndexOutOfRange,
                    path::key(&here, "exchange"),
                    format!("exchange {ex} is out of range ({kind} has {len})"),
                ),
                None => p.error(
                    ProblemKind::IndexOutOfRange,
                    path::key(&here, "exchange"),
                    format!("exchange {ex}, but the profile has no {kind}"),
                ),
            }
        }
        if let Some(target) = program.call_target()
            && target as usize >= functions.len()
        {
            p.error(
                ProblemKind::IndexOutOfRange,
                path::key(&here, "target"),
                format!(
                    "function {target} is out of range (functionPrograms has {})",
                    functions.len()
                ),
            );
        }
        if let Program::DoExchange(ex) = program
            && let Some(by_instruction) = &ex.memory_by_instruction
            && let Some(&total) = by_instruction.get("total")
        {
            let sum = by_instruction
                .iter()
                .filter(|(k, _)| k.as_str() != "total")
                .fold(0u64, |s, (_, &v)| s.saturating_add(v));
            if sum != total {
                p.error(
                    ProblemKind::Inconsistent,
                    path::key(&path::key(&here, "memoryByInstruction"), "total"),
                    format!("total is {total}, but the other entries add up to {sum}"),
                );
            }
        }
        if let Program::Unknown(u) = program {
            p.warning(
                ProblemKind::UnknownTag,
                path::key(&here, "type"),
                format!("unknown program type {:?} (kept as it is)", u.type_name),
            );
        }
    }
    find_cycles(programs, functions, &pp, p);
}

/// The number of exchanges of `kind` the graph profile has, when it has the section.
fn exchange_count(graph: &GraphProfile, kind: ExchangeKind) -> Option<usize> {
    match kind {
        ExchangeKind::Internal => graph.exchanges.as_ref().map(|e| e.len()),
        ExchangeKind::External => graph.external_exchanges.as_ref().map(|e| e.len()),
        ExchangeKind::Host => graph.host_exchanges.as_ref().map(|e| e.len()),
    }
}

/// The edges out of program `i`: its children, and the function it calls, each with the path
/// suffix of the field that makes the edge.
fn edges(program: &Program, functions: &[u32]) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = program
        .children()
        .into_iter()
        .enumerate()
        .map(|(k, c)| (c, path::index("children", k)))
        .collect();
    if let Some(target) = program.call_target()
        && let Some(&f) = functions.get(target as usize)
    {
        out.push((f, "target".to_owned()));
    }
    out
}

/// A program being visited: its index, its edges, the next edge to follow.
type Visit = (usize, Vec<(u32, String)>, usize);

/// Reports every edge that closes a cycle of programs, found by an iterative depth-first search
/// (so that no program graph can exhaust the stack).
fn find_cycles(programs: &[Program], functions: &[u32], base: &str, p: &mut Problems) {
    const UNSEEN: u8 = 0;
    const ON_STACK: u8 = 1;
    const DONE: u8 = 2;
    let n = programs.len();
    let mut state = vec![UNSEEN; n];
    let mut stack_pos = vec![0usize; n];
    for root in 0..n {
        if state.get(root) != Some(&UNSEEN) {
            continue;
        }
        let mut stack: Vec<Visit> = Vec::new();
        if let Some(program) = programs.get(root) {
            stack.push((root, edges(program, functions), 0));
        }
        if let (Some(s), Some(sp)) = (state.get_mut(root), stack_pos.get_mut(root)) {
            *s = ON_STACK;
            *sp = 0;
        }
        while let Some((node, node_edges, next)) = stack.last_mut() {
            let node = *node;
            let Some((to, field)) = node_edges.get(*next).cloned() else {
                if let Some(s) = state.get_mut(node) {
                    *s = DONE;
                }
                stack.pop();
                continue;
            };
            *next += 1;
            let to = to as usize;
            match state.get(to).copied() {
                Some(UNSEEN) => {
                    let depth = stack.len();
                    if let (Some(s), Some(sp)) = (state.get_mut(to), stack_pos.get_mut(to)) {
                        *s = ON_STACK;
                        *sp = depth;
                    }
                    if let Some(program) = programs.get(to) {
                        stack.push((to, edges(program, functions), 0));
                    }
                }
                Some(ON_STACK) => {
                    let from = stack_pos.get(to).copied().unwrap_or(0);
                    let mut cycle: Vec<String> = stack
                        .iter()
                        .skip(from)
                        .map(|(i, _, _)| i.to_string())
                        .collect();
                    if cycle.len() > 12 {
                        let tail = cycle.split_off(cycle.len() - 4);
                        cycle.truncate(6);
                        cycle.push("...".into());
                        cycle.extend(tail);
                    }
                    cycle.push(to.to_string());
                    p.error(
                        ProblemKind::ProgramCycle,
                        format!("{}.{field}", path::index(base, node)),
                        format!(
                            "program {node} reaches program {to} again: a cycle ({}); Poplar \
                             programs cannot recurse",
                            cycle.join(" -> ")
                        ),
                    );
                }
                _ => {}
            }
        }
    }
}

/// Every problem of an execution profile whose JSON path is `base`, checked against `graph` when
/// it is given.
pub fn validate_execution(
    execution: &ExecutionProfile,
    graph: Option<&GraphProfile>,
    base: &str,
) -> Vec<Problem> {
    let mut p = Problems::default();
    let at = |key: &str| path::key(base, key);
    let tiles = graph.map(|g| (g.target.num_tiles, "numTiles in the graph profile"));
    let compute_sets = graph.and_then(|g| g.num_compute_sets());
    let in_graph = |n: Option<usize>, what: &'static str| n.map(|n| (n, what));

    match &execution.mode {
        ProfilerMode::Other(name) => p.warning(
            ProblemKind::UnknownTag,
            at("profilerMode"),
            format!("unknown profiler mode {name:?} (its fields are kept as they are)"),
        ),
        ProfilerMode::ComputeSets {
            compute_set_cycles_by_tile,
        } => p.rows(
            &at("computeSetCyclesByTile"),
            compute_set_cycles_by_tile,
            in_graph(compute_sets, "compute sets in the graph profile"),
            tiles,
        ),
        ProfilerMode::SingleTileComputeSets { compute_set_cycles } => {
            if let Some(n) = compute_sets
                && compute_set_cycles.len() != n
            {
                p.error(
                    ProblemKind::ArrayLength,
                    at("computeSetCycles"),
                    format!(
                        "has {} values, but the graph profile has {n} compute sets",
                        compute_set_cycles.len()
                    ),
                );
            }
        }
        ProfilerMode::Vertices {
            vertex_cycles,
            vertex_compute_set,
            vertex_type,
        } => {
            for (key, len) in [
                ("vertexComputeSet", vertex_compute_set.len()),
                ("vertexType", vertex_type.len()),
            ] {
                if len != vertex_cycles.len() {
                    p.error(
                        ProblemKind::ArrayLength,
                        at(key),
                        format!(
                            "has {len} values, but vertexCycles has {}",
                            vertex_cycles.len()
                        ),
                    );
                }
            }
            if let Some(g) = graph {
                if let Some(info) = &g.graph
                    && vertex_cycles.len() as u64 != info.num_vertices
                {
                    p.error(
                        ProblemKind::ArrayLength,
                        at("vertexCycles"),
                        format!(
                            "has {} vertices, but the graph profile has numVertices {}",
                            vertex_cycles.len(),
                            info.num_vertices
                        ),
                    );
                }
                if let Some(n) = compute_sets {
                    p.indices(
                        ProblemKind::NotInGraph,
                        &at("vertexComputeSet"),
                        vertex_compute_set.iter().copied(),
                        n,
                        "compute set",
                    );
                }
                if let Some(vt) = &g.vertex_types {
                    p.indices(
                        ProblemKind::NotInGraph,
                        &at("vertexType"),
                        vertex_type.iter().copied(),
                        vt.names.len(),
                        "vertex type",
                    );
                }
            }
        }
        ProfilerMode::ExternalExchanges {
            external_exchange_cycles,
        } => p.rows(
            &at("externalExchangeCycles"),
            external_exchange_cycles,
            in_graph(
                graph.and_then(|g| exchange_count(g, ExchangeKind::External)),
                "external exchanges in the graph profile",
            ),
            tiles,
        ),
        ProfilerMode::HostExchanges {
            host_exchange_cycles,
        } => p.rows(
            &at("hostExchangeCycles"),
            host_exchange_cycles,
            in_graph(
                graph.and_then(|g| exchange_count(g, ExchangeKind::Host)),
                "host exchanges in the graph profile",
            ),
            tiles,
        ),
        ProfilerMode::None | ProfilerMode::Cpu | ProfilerMode::IpuModel => {}
    }

    if execution.mode.has_trace() && execution.program_trace.is_none() {
        p.warning(
            ProblemKind::MissingSection,
            at("programTrace"),
            format!(
                "a {} profile should have a program trace",
                execution.mode.name()
            ),
        );
    }
    let programs = graph.and_then(|g| g.programs.as_ref().map(Vec::len));
    if let (Some(trace), Some(n)) = (&execution.program_trace, programs) {
        p.indices(
            ProblemKind::NotInGraph,
            &at("programTrace"),
            trace.iter().copied(),
            n,
            "program",
        );
    }

    if let Some(simulation) = &execution.simulation {
        let sp = path::key(&at("simulation"), "steps");
        for (i, step) in simulation.steps.iter().enumerate() {
            check_step(
                step,
                &path::index(&sp, i),
                graph,
                programs,
                compute_sets,
                &mut p,
            );
        }
    }
    p.0
}

fn check_step(
    step: &Step,
    here: &str,
    graph: Option<&GraphProfile>,
    programs: Option<usize>,
    compute_sets: Option<usize>,
    p: &mut Problems,
) {
    if let Step::Unknown(u) = step {
        p.warning(
            ProblemKind::UnknownTag,
            path::key(here, "type"),
            format!("unknown step type {:?} (kept as it is)", u.type_name),
        );
        return;
    }
    if let (Some(program), Some(n)) = (step.program(), programs)
        && program as usize >= n
    {
        p.error(
            ProblemKind::NotInGraph,
            path::key(here, "program"),
            format!("program {program} is not in the graph profile (it has {n})"),
        );
    }
    if let Some(t) = step.timing()
        && let (Some(from), Some(to)) = (t.cycles_from, t.cycles_to)
        && from > to
    {
        p.error(
            ProblemKind::Inconsistent,
            path::key(here, "cyclesTo"),
            format!("the step ends (cycle {to}) before it starts (cycle {from})"),
        );
    }
    match step {
        Step::OnTileExecute(s) => match (s.compute_set, compute_sets) {
            (None, _) => p.warning(
                ProblemKind::MissingSection,
                path::key(here, "computeSet"),
                "an OnTileExecute step should name its compute set".into(),
            ),
            (Some(cs), Some(n)) if cs as usize >= n => p.error(
                ProblemKind::NotInGraph,
                path::key(here, "computeSet"),
                format!("compute set {cs} is not in the graph profile (it has {n})"),
            ),
            _ => {}
        },
        Step::DoExchange(_) | Step::GlobalExchange(_) | Step::StreamCopy(_) => {
            let (key, kind) = match step {
                Step::DoExchange(_) => ("exchange", ExchangeKind::Internal),
                Step::GlobalExchange(_) => ("externalExchange", ExchangeKind::External),
                _ => ("hostExchange", ExchangeKind::Host),
            };
            match (step.exchange(), graph.and_then(|g| exchange_count(g, kind))) {
                (None, _) => p.warning(
                    ProblemKind::MissingSection,
                    path::key(here, key),
                    format!("a {} step should have `{key}`", step.type_name()),
                ),
                (Some((_, ex)), Some(n)) if ex as usize >= n => p.error(
                    ProblemKind::NotInGraph,
                    path::key(here, key),
                    format!("exchange {ex} is not in the graph profile's {kind} (it has {n})"),
                ),
                _ => {}
            }
        }
        _ => {}
    }
}

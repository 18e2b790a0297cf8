//! What a profile says, worked out: memory per tile against capacity and by category, peak
//! liveness, the program tree, the simulated timeline with totals against `tileCycles`, and tile
//! balance recomputed. [`analyse`] gathers it all; `profkit inspect --json` prints that as it is
//! serialised here, so field names are stable.

mod memory;
mod programs;
mod timeline;

use std::collections::BTreeMap;

use serde::Serialize;

pub use memory::{
    Category, IpuMemory, MemoryReport, Overflow, PeakLiveness, PerTile, TileBytes, memory,
};
pub use programs::{Function, MAX_TREE_DEPTH, ProgramNode, ProgramTree, program_tree};
pub use timeline::{
    Balance, BalanceReport, StepBalance, Timeline, TimelineStep, TypeTotal, timeline,
};

use crate::execution::{ExecutionProfile, ProfilerMode};
use crate::graph::GraphProfile;
use crate::profile::ProfileFile;

/// The target, in brief.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TargetSummary {
    /// CPU, IPU or IPU_MODEL.
    #[serde(rename = "type")]
    pub target_type: String,
    /// `numIPUs`.
    pub ipus: u64,
    /// `tilesPerIPU`.
    pub tiles_per_ipu: u64,
    /// `numTiles`.
    pub tiles: u64,
    /// `bytesPerTile`.
    pub bytes_per_tile: u64,
    /// `totalMemory`.
    pub total_memory: u64,
    /// `clockFrequency` in hertz.
    pub clock_frequency: f64,
}

/// The graph profile, analysed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GraphAnalysis {
    /// The target.
    pub target: TargetSummary,
    /// The `graph` section's counts (vertices, edges, variables, compute sets).
    pub graph: BTreeMap<String, u64>,
    /// Vertex types.
    pub vertex_types: usize,
    /// Compute sets.
    pub compute_sets: usize,
    /// Internal, external and host exchanges.
    pub exchanges: BTreeMap<String, usize>,
    /// Memory, when the profile has `memory.byTile`.
    pub memory: Option<MemoryReport>,
    /// The program tree.
    pub programs: ProgramTree,
}

/// The execution profile, analysed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExecutionAnalysis {
    /// `profilerMode`.
    pub profiler_mode: String,
    /// Programs in `programTrace`.
    pub program_trace: Option<usize>,
    /// Figures the mode brings (compute sets timed, vertices, exchanges).
    pub mode: BTreeMap<String, u64>,
    /// The simulated timeline.
    pub timeline: Option<Timeline>,
}

/// Everything worked out of a profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    /// `graph`, `execution` or `combined`.
    pub shape: String,
    /// The graph profile.
    pub graph_profile: Option<GraphAnalysis>,
    /// The execution profile.
    pub execution_profile: Option<ExecutionAnalysis>,
}

/// Analyses a graph profile.
pub fn analyse_graph(graph: &GraphProfile) -> GraphAnalysis {
    let t = &graph.target;
    let mut info = BTreeMap::new();
    if let Some(g) = &graph.graph {
        info.insert("numComputeSets".to_owned(), g.num_compute_sets);
        info.insert("numEdges".to_owned(), g.num_edges);
        info.insert("numVars".to_owned(), g.num_vars);
        info.insert("numVertices".to_owned(), g.num_vertices);
    }
    let mut exchanges = BTreeMap::new();
    if let Some(e) = &graph.exchanges {
        exchanges.insert("exchanges".to_owned(), e.len());
    }
    if let Some(e) = &graph.external_exchanges {
        exchanges.insert("externalExchanges".to_owned(), e.len());
    }
    if let Some(e) = &graph.host_exchanges {
        exchanges.insert("hostExchanges".to_owned(), e.len());
    }
    GraphAnalysis {
        target: TargetSummary {
            target_type: t.target_type.to_string(),
            ipus: t.num_ipus,
            tiles_per_ipu: t.tiles_per_ipu,
            tiles: t.num_tiles,
            bytes_per_tile: t.bytes_per_tile,
            total_memory: t.total_memory,
            clock_frequency: t.clock_frequency,
        },
        graph: info,
        vertex_types: graph.vertex_types.as_ref().map_or(0, |v| v.names.len()),
        compute_sets: graph.compute_sets.as_ref().map_or(0, |c| c.names.len()),
        exchanges,
        memory: memory(graph),
        programs: program_tree(graph),
    }
}

/// Analyses an execution profile, with its graph profile when there is one.
pub fn analyse_execution(
    execution: &ExecutionProfile,
    graph: Option<&GraphProfile>,
) -> ExecutionAnalysis {
    let mut mode = BTreeMap::new();
    match &execution.mode {
        ProfilerMode::ComputeSets {
            compute_set_cycles_by_tile,
        } => {
            mode.insert(
                "computeSets".to_owned(),
                compute_set_cycles_by_tile.len() as u64,
            );
        }
        ProfilerMode::SingleTileComputeSets { compute_set_cycles } => {
            mode.insert("computeSets".to_owned(), compute_set_cycles.len() as u64);
            mode.insert("cycles".to_owned(), compute_set_cycles.sum());
        }
        ProfilerMode::Vertices { vertex_cycles, .. } => {
            mode.insert("vertices".to_owned(), vertex_cycles.len() as u64);
            mode.insert("cycles".to_owned(), vertex_cycles.sum());
        }
        ProfilerMode::ExternalExchanges {
            external_exchange_cycles,
        } => {
            mode.insert(
                "externalExchanges".to_owned(),
                external_exchange_cycles.len() as u64,
            );
        }
        ProfilerMode::HostExchanges {
            host_exchange_cycles,
        } => {
            mode.insert(
                "hostExchanges".to_owned(),
                host_exchange_cycles.len() as u64,
            );
        }
        _ => {}
    }
    ExecutionAnalysis {
        profiler_mode: execution.mode.name().to_owned(),
        program_trace: execution.program_trace.as_ref().map(Vec::len),
        mode,
        timeline: timeline(execution, graph),
    }
}

/// Analyses a profile file. `graph` is a graph profile to set an execution profile against when
/// the file has none of its own (the graph profile of a separate `graph.json`).
pub fn analyse(file: &ProfileFile, graph: Option<&GraphProfile>) -> Analysis {
    let own_graph = file.graph();
    Analysis {
        shape: file.shape().name().to_owned(),
        graph_profile: own_graph.map(analyse_graph),
        execution_profile: file
            .execution()
            .map(|e| analyse_execution(e, own_graph.or(graph))),
    }
}

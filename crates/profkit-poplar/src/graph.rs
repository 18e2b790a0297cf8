//! The graph profile (`graph.json`) and its smaller sections: graph information, vertex types and
//! compute sets.

use std::collections::BTreeMap;

use crate::counts::Counts;
use crate::exchange::{Exchanges, ExternalExchanges, HostExchanges};
use crate::memory::Memory;
use crate::number::{IndexLists, Indices, Int};
use crate::program::Program;
use crate::record::record;
use crate::target::Target;

record! {
    /// A graph profile: everything Poplar knows about a compiled graph, written as soon as it is
    /// compiled. Every section but `target` may be absent (older SDKs lack some);
    /// [`validate`](crate::validate()) reports the missing ones the format documents.
    pub struct GraphProfile / GraphProfileFields {
        /// `computeSets`: names, vertices and cycle estimates of each compute set.
        "computeSets" => compute_sets: opt ComputeSets,
        /// `controlPrograms`: indices into `programs` of the control programs (nearly always
        /// `[0]`).
        "controlPrograms" => control_programs: opt Vec<u32> as Indices,
        /// `exchanges`: internal exchanges, by exchange id then tile.
        "exchanges" => exchanges: opt Exchanges,
        /// `externalExchanges`: IPU-to-IPU exchanges.
        "externalExchanges" => external_exchanges: opt ExternalExchanges,
        /// `functionPrograms`: indices into `programs` of the functions that `Call` programs call.
        "functionPrograms" => function_programs: opt Vec<u32> as Indices,
        /// `graph`: the size of the graph.
        "graph" => graph: opt GraphInfo,
        /// `hostExchanges`: exchanges between host and IPU.
        "hostExchanges" => host_exchanges: opt HostExchanges,
        /// `memory`: memory use by tile, category, compute set and vertex type, and liveness.
        "memory" => memory: opt Memory,
        /// `optimizationInfo`: internal metrics of compilation, strings to doubles.
        "optimizationInfo" => optimization_info: opt BTreeMap<String, f64>,
        /// `programs`: every program, flattened; programs refer to each other by index.
        "programs" => programs: opt Vec<Program>,
        /// `target`: the hardware.
        "target" => target: req Target,
        /// `vertexTypes`: the vertex types the graph uses.
        "vertexTypes" => vertex_types: opt VertexTypes,
    }
}

impl GraphProfile {
    /// The programs (empty when the section is absent).
    pub fn programs(&self) -> &[Program] {
        self.programs.as_deref().unwrap_or_default()
    }

    /// The number of compute sets: the length of `computeSets.names`, else `graph.numComputeSets`.
    pub fn num_compute_sets(&self) -> Option<usize> {
        match (&self.compute_sets, &self.graph) {
            (Some(cs), _) => Some(cs.names.len()),
            (None, Some(g)) => usize::try_from(g.num_compute_sets).ok(),
            (None, None) => None,
        }
    }

    /// The name of compute set `index`.
    pub fn compute_set_name(&self, index: u32) -> Option<&str> {
        self.compute_sets
            .as_ref()?
            .names
            .get(index as usize)
            .map(String::as_str)
    }

    /// The name of vertex type `index`.
    pub fn vertex_type_name(&self, index: u32) -> Option<&str> {
        self.vertex_types
            .as_ref()?
            .names
            .get(index as usize)
            .map(String::as_str)
    }
}

record! {
    /// Graph information (`graph`): the size of the graph.
    pub struct GraphInfo / GraphInfoFields {
        /// `numComputeSets`.
        "numComputeSets" => num_compute_sets: req u64 as Int,
        /// `numEdges`.
        "numEdges" => num_edges: req u64 as Int,
        /// `numVars`: variables.
        "numVars" => num_vars: req u64 as Int,
        /// `numVertices`.
        "numVertices" => num_vertices: req u64 as Int,
    }
}

record! {
    /// Vertex types (`vertexTypes`): the types the graph uses, which the rest of the profile
    /// refers to by index.
    pub struct VertexTypes / VertexTypesFields {
        /// `names`: the name of each type, such as `poplar_rt::LongMemcpy`.
        "names" => names: req Vec<String>,
        /// `sizes`: the size in bytes of each type's vertex state.
        "sizes" => sizes: req Counts,
    }
}

record! {
    /// Compute sets (`computeSets`), indexed by compute set id.
    pub struct ComputeSets / ComputeSetsFields {
        /// `cycleEstimates`: estimated cycles (IPU_MODEL targets only).
        "cycleEstimates" => cycle_estimates: opt CycleEstimates,
        /// `names`: the name of each compute set (not necessarily unique).
        "names" => names: req Vec<String>,
        /// `vertexCounts[cs][i]`: how many vertices of type `vertexTypes[cs][i]` compute set `cs`
        /// has.
        "vertexCounts" => vertex_counts: req Vec<Counts>,
        /// `vertexTypes[cs][i]`: an index into the top-level `vertexTypes`.
        "vertexTypes" => vertex_types: req Vec<Vec<u32>> as IndexLists,
    }
}

record! {
    /// Cycle estimates of the compute sets (`computeSets.cycleEstimates`).
    pub struct CycleEstimates / CycleEstimatesFields {
        /// `activeCyclesByTile[cs][tile]`: cycles during which a vertex was running.
        "activeCyclesByTile" => active_cycles_by_tile: req Vec<Counts>,
        /// `activeCyclesByVertexType[cs][vertex_type]`.
        "activeCyclesByVertexType" => active_cycles_by_vertex_type: req Vec<Counts>,
        /// `cyclesByTile[cs][tile]`: cycles each tile takes to run the compute set, idle thread
        /// cycles included.
        "cyclesByTile" => cycles_by_tile: req Vec<Counts>,
    }
}

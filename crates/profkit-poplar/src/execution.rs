//! The execution profile (`execution.json`): what ran since the profile was last reset.
//!
//! The whole object is a tagged union on `profilerMode`; each mode brings its own fields
//! ([`ProfilerMode`]). Every mode but `NONE` and `CPU` also has `programTrace`, the programs run
//! (indices into the graph profile's `programs`), and `simulation`, the steps simulated from them.
//! With profiling off the profile is exactly `{"profilerMode":"NONE"}`.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::counts::Counts;
use crate::number::{Indices, Int};
use crate::record::{Extra, keep, record, write_sorted};
use crate::step::Step;

/// The profiler mode (`profilerMode`) with the fields that mode has.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ProfilerMode {
    /// `NONE`: profiling was off.
    #[default]
    None,
    /// `CPU`: a CPU target.
    Cpu,
    /// `IPU_MODEL`: the IPU model; cycles are estimates from the graph profile.
    IpuModel,
    /// `COMPUTE_SETS`: hardware cycles of each compute set on each tile.
    ComputeSets {
        /// `computeSetCyclesByTile[cs][tile]`.
        compute_set_cycles_by_tile: Vec<Counts>,
    },
    /// `SINGLE_TILE_COMPUTE_SETS`: hardware cycles of each compute set over all tiles, with a
    /// sync inserted before and after each.
    SingleTileComputeSets {
        /// `computeSetCycles[cs]`.
        compute_set_cycles: Counts,
    },
    /// `VERTICES`: hardware cycles of each vertex the last time it ran.
    Vertices {
        /// `vertexCycles[vertex]`.
        vertex_cycles: Counts,
        /// `vertexComputeSet[vertex]`: the compute set of each vertex.
        vertex_compute_set: Vec<u32>,
        /// `vertexType[vertex]`: an index into `vertexTypes`.
        vertex_type: Vec<u32>,
    },
    /// `EXTERNAL_EXCHANGES`: hardware cycles of each IPU-to-IPU exchange on each tile.
    ExternalExchanges {
        /// `externalExchangeCycles[exchange][tile]`.
        external_exchange_cycles: Vec<Counts>,
    },
    /// `HOST_EXCHANGES`: hardware cycles of each host exchange on each tile.
    HostExchanges {
        /// `hostExchangeCycles[exchange][tile]`.
        host_exchange_cycles: Vec<Counts>,
    },
    /// A mode this crate does not know; its fields are kept among the profile's unknown keys.
    Other(String),
}

impl ProfilerMode {
    /// The mode as written in `profilerMode`.
    pub fn name(&self) -> &str {
        match self {
            ProfilerMode::None => "NONE",
            ProfilerMode::Cpu => "CPU",
            ProfilerMode::IpuModel => "IPU_MODEL",
            ProfilerMode::ComputeSets { .. } => "COMPUTE_SETS",
            ProfilerMode::SingleTileComputeSets { .. } => "SINGLE_TILE_COMPUTE_SETS",
            ProfilerMode::Vertices { .. } => "VERTICES",
            ProfilerMode::ExternalExchanges { .. } => "EXTERNAL_EXCHANGES",
            ProfilerMode::HostExchanges { .. } => "HOST_EXCHANGES",
            ProfilerMode::Other(name) => name,
        }
    }

    /// Whether the mode comes with a program trace and a simulation (all but NONE and CPU).
    pub fn has_trace(&self) -> bool {
        !matches!(self, ProfilerMode::None | ProfilerMode::Cpu)
    }
}

record! {
    /// Simulation information (`simulation`), computed from the graph profile and the program
    /// trace.
    pub struct Simulation / SimulationFields {
        /// `cycles`: cycles to run every program of the trace.
        "cycles" => cycles: req u64 as Int,
        /// `steps`: the compute, sync and exchange steps, in order.
        "steps" => steps: req Vec<Step>,
        /// `tileCycles`: cycles spent in each activity, counting each tile's cycles apart.
        "tileCycles" => tile_cycles: opt TileCycles,
    }
}

record! {
    /// Cycles by activity, summed over tiles (`simulation.tileCycles`). Any may be missing.
    pub struct TileCycles / TileCyclesFields {
        /// `activeCompute`: compute cycles where the active thread computes.
        "activeCompute" => active_compute: opt u64 as Int,
        /// `compute`: compute cycles where any thread computes.
        "compute" => compute: opt u64 as Int,
        /// `copySharedStructure`.
        "copySharedStructure" => copy_shared_structure: opt u64 as Int,
        /// `doExchange`.
        "doExchange" => do_exchange: opt u64 as Int,
        /// `globalExchange`.
        "globalExchange" => global_exchange: opt u64 as Int,
        /// `streamCopy`.
        "streamCopy" => stream_copy: opt u64 as Int,
        /// `sync`.
        "sync" => sync: opt u64 as Int,
    }
}

/// An execution profile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExecutionProfile {
    /// `profilerMode`, with the mode's own fields.
    pub mode: ProfilerMode,
    /// `programTrace`: the programs run, as indices into the graph profile's `programs`.
    pub program_trace: Option<Vec<u32>>,
    /// `simulation`.
    pub simulation: Option<Simulation>,
    /// Keys this crate does not know (and, for an unknown mode, that mode's fields).
    pub extra: Extra,
}

impl ExecutionProfile {
    /// The profile of a run with profiling off: `{"profilerMode":"NONE"}`.
    pub fn none() -> ExecutionProfile {
        ExecutionProfile::default()
    }

    /// The simulated steps (empty without a simulation).
    pub fn steps(&self) -> &[Step] {
        self.simulation
            .as_ref()
            .map(|s| s.steps.as_slice())
            .unwrap_or_default()
    }
}

record! {
    /// Every field of every mode, read before `profilerMode` is known.
    pub(crate) struct RawExecution / RawExecutionFields {
        "computeSetCycles" => compute_set_cycles: opt Counts,
        "computeSetCyclesByTile" => compute_set_cycles_by_tile: opt Vec<Counts>,
        "externalExchangeCycles" => external_exchange_cycles: opt Vec<Counts>,
        "hostExchangeCycles" => host_exchange_cycles: opt Vec<Counts>,
        "profilerMode" => profiler_mode: opt String,
        "programTrace" => program_trace: opt Vec<u32> as Indices,
        "simulation" => simulation: opt Simulation,
        "vertexComputeSet" => vertex_compute_set: opt Vec<u32> as Indices,
        "vertexCycles" => vertex_cycles: opt Counts,
        "vertexType" => vertex_type: opt Vec<u32> as Indices,
    }
}

fn need<T>(value: Option<T>, mode: &str, field: &str) -> Result<T, String> {
    value.ok_or_else(|| format!("a {mode} profile needs `{field}`"))
}

impl RawExecution {
    pub(crate) fn into_profile(self) -> Result<ExecutionProfile, String> {
        let RawExecution {
            compute_set_cycles: mut cs_cycles,
            compute_set_cycles_by_tile: mut cs_by_tile,
            external_exchange_cycles: mut external,
            host_exchange_cycles: mut host,
            profiler_mode,
            program_trace,
            simulation,
            vertex_compute_set: mut vertex_cs,
            mut vertex_cycles,
            mut vertex_type,
            mut extra,
        } = self;
        let Some(name) = profiler_mode else {
            return Err("an execution profile needs `profilerMode`".into());
        };
        let mode = match name.as_str() {
            "NONE" => ProfilerMode::None,
            "CPU" => ProfilerMode::Cpu,
            "IPU_MODEL" => ProfilerMode::IpuModel,
            "COMPUTE_SETS" => ProfilerMode::ComputeSets {
                compute_set_cycles_by_tile: need(
                    cs_by_tile.take(),
                    "COMPUTE_SETS",
                    "computeSetCyclesByTile",
                )?,
            },
            "SINGLE_TILE_COMPUTE_SETS" => ProfilerMode::SingleTileComputeSets {
                compute_set_cycles: need(
                    cs_cycles.take(),
                    "SINGLE_TILE_COMPUTE_SETS",
                    "computeSetCycles",
                )?,
            },
            "VERTICES" => ProfilerMode::Vertices {
                vertex_cycles: need(vertex_cycles.take(), "VERTICES", "vertexCycles")?,
                vertex_compute_set: need(vertex_cs.take(), "VERTICES", "vertexComputeSet")?,
                vertex_type: need(vertex_type.take(), "VERTICES", "vertexType")?,
            },
            "EXTERNAL_EXCHANGES" => ProfilerMode::ExternalExchanges {
                external_exchange_cycles: need(
                    external.take(),
                    "EXTERNAL_EXCHANGES",
                    "externalExchangeCycles",
                )?,
            },
            "HOST_EXCHANGES" => ProfilerMode::HostExchanges {
                host_exchange_cycles: need(host.take(), "HOST_EXCHANGES", "hostExchangeCycles")?,
            },
            _ => ProfilerMode::Other(name),
        };
        keep(&mut extra, "computeSetCycles", cs_cycles);
        keep(&mut extra, "computeSetCyclesByTile", cs_by_tile);
        keep(&mut extra, "externalExchangeCycles", external);
        keep(&mut extra, "hostExchangeCycles", host);
        keep(&mut extra, "vertexComputeSet", vertex_cs);
        keep(&mut extra, "vertexCycles", vertex_cycles);
        keep(&mut extra, "vertexType", vertex_type);
        Ok(ExecutionProfile {
            mode,
            program_trace,
            simulation,
            extra,
        })
    }
}

impl<'de> Deserialize<'de> for ExecutionProfile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ExecutionProfile, D::Error> {
        RawExecution::deserialize(d)?
            .into_profile()
            .map_err(serde::de::Error::custom)
    }
}

impl ExecutionProfile {
    /// Writes the entries of the profile in sorted key order.
    pub(crate) fn serialize_entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        let mut present: Vec<&'static str> = match &self.mode {
            ProfilerMode::ComputeSets { .. } => vec!["computeSetCyclesByTile"],
            ProfilerMode::SingleTileComputeSets { .. } => vec!["computeSetCycles"],
            ProfilerMode::Vertices { .. } => vec!["vertexComputeSet", "vertexCycles", "vertexType"],
            ProfilerMode::ExternalExchanges { .. } => vec!["externalExchangeCycles"],
            ProfilerMode::HostExchanges { .. } => vec!["hostExchangeCycles"],
            _ => Vec::new(),
        };
        if self.program_trace.is_some() {
            present.push("programTrace");
        }
        if self.simulation.is_some() {
            present.push("simulation");
        }
        let tag = Some(("profilerMode", self.mode.name()));
        write_sorted(map, &present, tag, &self.extra, |map, key| {
            match (key, &self.mode) {
                (
                    "computeSetCyclesByTile",
                    ProfilerMode::ComputeSets {
                        compute_set_cycles_by_tile: v,
                    },
                ) => map.serialize_entry(key, v),
                (
                    "computeSetCycles",
                    ProfilerMode::SingleTileComputeSets {
                        compute_set_cycles: v,
                    },
                ) => map.serialize_entry(key, v),
                (
                    "vertexComputeSet",
                    ProfilerMode::Vertices {
                        vertex_compute_set, ..
                    },
                ) => map.serialize_entry(key, vertex_compute_set),
                ("vertexCycles", ProfilerMode::Vertices { vertex_cycles, .. }) => {
                    map.serialize_entry(key, vertex_cycles)
                }
                ("vertexType", ProfilerMode::Vertices { vertex_type, .. }) => {
                    map.serialize_entry(key, vertex_type)
                }
                (
                    "externalExchangeCycles",
                    ProfilerMode::ExternalExchanges {
                        external_exchange_cycles: v,
                    },
                ) => map.serialize_entry(key, v),
                (
                    "hostExchangeCycles",
                    ProfilerMode::HostExchanges {
                        host_exchange_cycles: v,
                    },
                ) => map.serialize_entry(key, v),
                ("programTrace", _) => map.serialize_entry(key, &self.program_trace),
                ("simulation", _) => map.serialize_entry(key, &self.simulation),
                _ => Ok(()),
            }
        })
    }
}

impl Serialize for ExecutionProfile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        self.serialize_entries(&mut map)?;
        map.end()
    }
}

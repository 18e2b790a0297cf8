//! The checks of an execution profile, alone and against its graph profile.

use crate::execution::{ExecutionProfile, ProfilerMode};
use crate::graph::GraphProfile;
use crate::path;
use crate::program::ExchangeKind;
use crate::step::Step;

use super::{Problem, ProblemKind, Problems, exchange_count};

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

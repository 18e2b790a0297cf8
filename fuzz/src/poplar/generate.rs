//! Builds Poplar profiles from fuzzer bytes.
//!
//! Every section, program tag, step tag and profiler mode can appear, with unknown keys (named
//! `x-...`, which no record defines) holding JSON values a few levels deep, unknown tags, modes and
//! target types, counts at the edges of `u64`, and liveness trees. What is built is a profile the
//! writer and reader must carry through unchanged, so it avoids what reading would rightly change:
//! doubles are finite (JSON has no NaN), unknown tags and names never equal known ones, and a
//! combined profile holds at least one of its two profiles.

use std::collections::BTreeMap;

use arbitrary::{Result, Unstructured};
use profkit_poplar::exchange::{Exchanges, ExternalExchanges, HostExchanges};
use profkit_poplar::graph::{ComputeSets, CycleEstimates, GraphInfo, VertexTypes};
use profkit_poplar::memory::{
    AlwaysLive, CategoryMemory, Liveness, LivenessNode, LivenessRoots, Memory, MemoryBreakdown,
    NotAlwaysLive, RegionMemory, TileMemory,
};
use profkit_poplar::program::{Block, Call, Exchange, OnTileExecute, UnknownProgram};
use profkit_poplar::step::{ComputeStep, ExchangeStep, SyncStep, UnknownStep};
use profkit_poplar::{
    Counts, ExecutionProfile, Extra, GraphProfile, Profile, ProfileFile, ProfilerMode, Program,
    Simulation, Step, SyncType, Target, TargetType, TileCycles,
};
use serde_json::Value;

/// Arrays hold at most this many elements, so that short inputs reach deep sections.
const MAX_LEN: u32 = 5;

fn len(u: &mut Unstructured<'_>) -> Result<usize> {
    Ok(u.int_in_range(0..=MAX_LEN)? as usize)
}

fn vec<T>(
    u: &mut Unstructured<'_>,
    mut item: impl FnMut(&mut Unstructured<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    (0..len(u)?).map(|_| item(u)).collect()
}

fn opt<T>(
    u: &mut Unstructured<'_>,
    item: impl FnOnce(&mut Unstructured<'_>) -> Result<T>,
) -> Result<Option<T>> {
    Ok(if u.arbitrary()? { Some(item(u)?) } else { None })
}

fn int(u: &mut Unstructured<'_>) -> Result<u64> {
    Ok(match u.int_in_range(0..=5u8)? {
        0 => 0,
        1 => u64::MAX,
        2 => 1 << 53,
        3 => u.int_in_range(0..=70_000)?,
        _ => u.arbitrary()?,
    })
}

fn index(u: &mut Unstructured<'_>) -> Result<u32> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => u32::MAX,
        1 => u.arbitrary()?,
        _ => u.int_in_range(0..=8)?,
    })
}

fn float(u: &mut Unstructured<'_>) -> Result<f64> {
    let v: f64 = match u.int_in_range(0..=3u8)? {
        0 => -0.0,
        1 => 1.0 / 3.0,
        2 => f64::MAX,
        _ => u.arbitrary()?,
    };
    Ok(if v.is_finite() { v } else { 0.5 })
}

fn text(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=2u8)? {
        0 => String::new(),
        1 => "layer/\"quoted\"\\\u{1}\u{e9}\u{1f600}".to_owned(),
        _ => u.arbitrary()?,
    })
}

fn counts(u: &mut Unstructured<'_>) -> Result<Counts> {
    let values = vec(u, |u| Ok(if u.ratio(1, 2)? { 0 } else { int(u)? }))?;
    Ok(Counts::from(values))
}

fn rows(u: &mut Unstructured<'_>) -> Result<Vec<Counts>> {
    vec(u, counts)
}

fn indices(u: &mut Unstructured<'_>) -> Result<Vec<u32>> {
    vec(u, index)
}

/// A JSON value nested at most `depth` levels.
pub fn value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let choice = u.int_in_range(0..=if depth == 0 { 4u8 } else { 6 })?;
    Ok(match choice {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(if u.arbitrary()? {
            serde_json::Number::from(int(u)?)
        } else {
            serde_json::Number::from(-(u.int_in_range(1..=i64::MAX)?))
        }),
        3 => serde_json::Number::from_f64(float(u)?).map_or(Value::Null, Value::Number),
        4 => Value::String(text(u)?),
        5 => Value::Array(vec(u, |u| value(u, depth - 1))?),
        _ => Value::Object(
            vec(u, |u| Ok((text(u)?, value(u, depth - 1)?)))?
                .into_iter()
                .collect(),
        ),
    })
}

/// Unknown keys: `x-` and some text, which no record of the schema defines.
fn extra(u: &mut Unstructured<'_>) -> Result<Extra> {
    if !u.ratio(1, 3)? {
        return Ok(Extra::new());
    }
    Ok(vec(u, |u| Ok((format!("x-{}", text(u)?), value(u, 3)?)))?
        .into_iter()
        .collect())
}

fn target(u: &mut Unstructured<'_>) -> Result<Target> {
    Ok(Target {
        bytes_per_ipu: int(u)?,
        bytes_per_tile: int(u)?,
        clock_frequency: float(u)?,
        min_sync_delay: opt(u, int)?,
        num_ipus: int(u)?,
        num_tiles: int(u)?,
        relative_sync_delay_by_tile: opt(u, counts)?,
        tiles_per_ipu: int(u)?,
        total_memory: int(u)?,
        target_type: match u.int_in_range(0..=3u8)? {
            0 => TargetType::Cpu,
            1 => TargetType::Ipu,
            2 => TargetType::IpuModel,
            _ => TargetType::Other(format!("x-{}", text(u)?)),
        },
        extra: extra(u)?,
    })
}

fn region(u: &mut Unstructured<'_>) -> Result<RegionMemory> {
    Ok(RegionMemory {
        non_overlapped: counts(u)?,
        overlapped: counts(u)?,
        extra: extra(u)?,
    })
}

fn breakdown(u: &mut Unstructured<'_>) -> Result<MemoryBreakdown> {
    Ok(MemoryBreakdown {
        code_bytes: rows(u)?,
        copy_ptr_bytes: rows(u)?,
        descriptor_bytes: rows(u)?,
        edge_ptr_bytes: rows(u)?,
        padding_bytes: rows(u)?,
        total_bytes: rows(u)?,
        vertex_data_bytes: rows(u)?,
        extra: extra(u)?,
    })
}

fn liveness_node(u: &mut Unstructured<'_>, depth: u32) -> Result<LivenessNode> {
    Ok(LivenessNode {
        bytes: int(u)?,
        children: if depth == 0 {
            None
        } else {
            opt(u, |u| vec(u, |u| liveness_node(u, depth - 1)))?
        },
        extra: extra(u)?,
    })
}

fn memory(u: &mut Unstructured<'_>) -> Result<Memory> {
    Ok(Memory {
        by_category: opt(u, |u| {
            Ok(vec(u, |u| {
                Ok((
                    text(u)?,
                    CategoryMemory {
                        interleaved: region(u)?,
                        non_interleaved: region(u)?,
                        overflowed: region(u)?,
                        total: counts(u)?,
                        extra: extra(u)?,
                    },
                ))
            })?
            .into_iter()
            .collect())
        })?,
        by_compute_set: opt(u, breakdown)?,
        by_tile: opt(u, |u| {
            Ok(TileMemory {
                interleaved: counts(u)?,
                interleaved_including_gaps: counts(u)?,
                non_interleaved: counts(u)?,
                non_interleaved_including_gaps: counts(u)?,
                overflowed: counts(u)?,
                overflowed_including_gaps: counts(u)?,
                total: counts(u)?,
                total_including_gaps: counts(u)?,
                extra: extra(u)?,
            })
        })?,
        by_vertex_type: opt(u, breakdown)?,
        liveness: opt(u, |u| {
            Ok(Liveness {
                always_live: opt(u, |u| {
                    Ok(AlwaysLive {
                        bytes_by_tile: counts(u)?,
                        extra: extra(u)?,
                    })
                })?,
                not_always_live: opt(u, |u| {
                    Ok(NotAlwaysLive {
                        by_program: opt(u, |u| {
                            // A list of roots, as real files hold, or the one object some do.
                            Ok(if u.arbitrary::<bool>()? {
                                LivenessRoots::from(liveness_node(u, 4)?)
                            } else {
                                LivenessRoots::from(vec(u, |u| liveness_node(u, 4))?)
                            })
                        })?,
                        max_bytes_by_tile: counts(u)?,
                        extra: extra(u)?,
                    })
                })?,
                extra: extra(u)?,
            })
        })?,
        extra: extra(u)?,
    })
}

fn block(u: &mut Unstructured<'_>) -> Result<Block> {
    Ok(Block {
        children: opt(u, indices)?,
        name: opt(u, text)?,
        extra: extra(u)?,
    })
}

fn exchange(u: &mut Unstructured<'_>) -> Result<Exchange> {
    Ok(Exchange {
        exchange: index(u)?,
        memory_by_instruction: opt(u, |u| {
            Ok(vec(u, |u| Ok((text(u)?, int(u)?)))?
                .into_iter()
                .collect::<BTreeMap<_, _>>())
        })?,
        name: opt(u, text)?,
        extra: extra(u)?,
    })
}

/// A program of any tag.
pub fn program(u: &mut Unstructured<'_>) -> Result<Program> {
    Ok(match u.int_in_range(0..=15u8)? {
        0 => Program::Sequence(block(u)?),
        1 => Program::Repeat(block(u)?),
        2 => Program::RepeatWhile(block(u)?),
        3 => Program::If(block(u)?),
        4 => Program::Switch(block(u)?),
        5 => Program::OnTileExecute(OnTileExecute {
            compute_set: index(u)?,
            name: opt(u, text)?,
            extra: extra(u)?,
        }),
        6 => Program::DoExchange(exchange(u)?),
        7 => Program::GlobalExchange(exchange(u)?),
        8 => Program::StreamCopy(exchange(u)?),
        9 => Program::Call(Call {
            name: opt(u, text)?,
            target: index(u)?,
            extra: extra(u)?,
        }),
        10 => Program::CopySharedStructure(block(u)?),
        11 => Program::Sync(block(u)?),
        12 => Program::WriteUndef(block(u)?),
        13 => Program::Execute(block(u)?),
        14 => Program::Copy(block(u)?),
        _ => Program::Unknown(UnknownProgram {
            type_name: format!("x-{}", text(u)?),
            fields: extra(u)?,
        }),
    })
}

fn exchange_step(u: &mut Unstructured<'_>) -> Result<ExchangeStep> {
    Ok(ExchangeStep {
        active_tile_balance: opt(u, float)?,
        active_tiles: opt(u, int)?,
        cycles: opt(u, int)?,
        cycles_from: opt(u, int)?,
        cycles_overlapped: opt(u, int)?,
        cycles_to: opt(u, int)?,
        data_balance: opt(u, float)?,
        exchange: opt(u, index)?,
        external_exchange: opt(u, index)?,
        host_exchange: opt(u, index)?,
        name: opt(u, text)?,
        program: index(u)?,
        tile_balance: opt(u, float)?,
        total_data: opt(u, int)?,
        extra: extra(u)?,
    })
}

/// A step of any tag.
pub fn step(u: &mut Unstructured<'_>) -> Result<Step> {
    Ok(match u.int_in_range(0..=7u8)? {
        0 => Step::OnTileExecute(ComputeStep {
            active_tile_balance: opt(u, float)?,
            active_tiles: opt(u, int)?,
            compute_set: opt(u, index)?,
            cycles: opt(u, int)?,
            cycles_from: opt(u, int)?,
            cycles_overlapped: opt(u, int)?,
            cycles_to: opt(u, int)?,
            name: opt(u, text)?,
            program: index(u)?,
            thread_balance: opt(u, float)?,
            tile_balance: opt(u, float)?,
            extra: extra(u)?,
        }),
        1 => Step::DoExchange(exchange_step(u)?),
        2 => Step::GlobalExchange(exchange_step(u)?),
        3 => Step::StreamCopy(exchange_step(u)?),
        4 => Step::CopySharedStructure(exchange_step(u)?),
        5 => Step::SharedStructureCopy(exchange_step(u)?),
        6 => Step::Sync {
            step: SyncStep {
                sync_type: opt(u, |u| {
                    Ok(match u.int_in_range(0..=2u8)? {
                        0 => SyncType::External,
                        1 => SyncType::Internal,
                        _ => SyncType::Other(format!("x-{}", text(u)?)),
                    })
                })?,
                extra: extra(u)?,
            },
            lowercase_tag: u.arbitrary()?,
        },
        _ => Step::Unknown(UnknownStep {
            type_name: format!("x-{}", text(u)?),
            fields: extra(u)?,
        }),
    })
}

/// A graph profile.
pub fn graph(u: &mut Unstructured<'_>) -> Result<GraphProfile> {
    Ok(GraphProfile {
        compute_sets: opt(u, |u| {
            Ok(ComputeSets {
                cycle_estimates: opt(u, |u| {
                    Ok(CycleEstimates {
                        active_cycles_by_tile: rows(u)?,
                        active_cycles_by_vertex_type: rows(u)?,
                        cycles_by_tile: rows(u)?,
                        extra: extra(u)?,
                    })
                })?,
                names: vec(u, text)?,
                vertex_counts: rows(u)?,
                vertex_types: vec(u, indices)?,
                extra: extra(u)?,
            })
        })?,
        control_programs: opt(u, indices)?,
        exchanges: opt(u, |u| {
            Ok(Exchanges {
                bytes_received_by_tile: rows(u)?,
                bytes_sent_by_tile: rows(u)?,
                code_bytes_by_tile: opt(u, rows)?,
                cycles_by_tile: rows(u)?,
                extra: extra(u)?,
            })
        })?,
        external_exchanges: opt(u, |u| {
            Ok(ExternalExchanges {
                bytes_received_by_tile: rows(u)?,
                bytes_sent_by_tile: rows(u)?,
                estimated_cycles_by_tile: rows(u)?,
                extra: extra(u)?,
            })
        })?,
        function_programs: opt(u, indices)?,
        graph: opt(u, |u| {
            Ok(GraphInfo {
                num_compute_sets: int(u)?,
                num_edges: int(u)?,
                num_vars: int(u)?,
                num_vertices: int(u)?,
                extra: extra(u)?,
            })
        })?,
        host_exchanges: opt(u, |u| {
            Ok(HostExchanges {
                bytes_received_by_tile: rows(u)?,
                bytes_sent_by_tile: rows(u)?,
                estimated_cycles_by_tile: rows(u)?,
                extra: extra(u)?,
            })
        })?,
        memory: opt(u, memory)?,
        optimization_info: opt(u, |u| {
            Ok(vec(u, |u| Ok((text(u)?, float(u)?)))?.into_iter().collect())
        })?,
        programs: opt(u, |u| vec(u, program))?,
        target: target(u)?,
        vertex_types: opt(u, |u| {
            Ok(VertexTypes {
                names: vec(u, text)?,
                sizes: counts(u)?,
                extra: extra(u)?,
            })
        })?,
        extra: extra(u)?,
    })
}

/// An execution profile of any mode.
pub fn execution(u: &mut Unstructured<'_>) -> Result<ExecutionProfile> {
    let mode = match u.int_in_range(0..=8u8)? {
        0 => ProfilerMode::None,
        1 => ProfilerMode::Cpu,
        2 => ProfilerMode::IpuModel,
        3 => ProfilerMode::ComputeSets {
            compute_set_cycles_by_tile: rows(u)?,
        },
        4 => ProfilerMode::SingleTileComputeSets {
            compute_set_cycles: counts(u)?,
        },
        5 => ProfilerMode::Vertices {
            vertex_cycles: counts(u)?,
            vertex_compute_set: indices(u)?,
            vertex_type: indices(u)?,
        },
        6 => ProfilerMode::ExternalExchanges {
            external_exchange_cycles: rows(u)?,
        },
        7 => ProfilerMode::HostExchanges {
            host_exchange_cycles: rows(u)?,
        },
        _ => ProfilerMode::Other(format!("x-{}", text(u)?)),
    };
    Ok(ExecutionProfile {
        mode,
        program_trace: opt(u, indices)?,
        simulation: opt(u, |u| {
            Ok(Simulation {
                cycles: int(u)?,
                steps: vec(u, step)?,
                tile_cycles: opt(u, |u| {
                    Ok(TileCycles {
                        active_compute: opt(u, int)?,
                        compute: opt(u, int)?,
                        copy_shared_structure: opt(u, int)?,
                        do_exchange: opt(u, int)?,
                        global_exchange: opt(u, int)?,
                        stream_copy: opt(u, int)?,
                        sync: opt(u, int)?,
                        extra: extra(u)?,
                    })
                })?,
                extra: extra(u)?,
            })
        })?,
        extra: extra(u)?,
    })
}

/// A profile file of any shape.
pub fn profile_file(u: &mut Unstructured<'_>) -> Result<ProfileFile> {
    Ok(match u.int_in_range(0..=2u8)? {
        0 => ProfileFile::Graph(graph(u)?),
        1 => ProfileFile::Execution(execution(u)?),
        _ => {
            let (graph_profile, execution_profile) = match u.int_in_range(0..=2u8)? {
                0 => (Some(graph(u)?), None),
                1 => (None, Some(execution(u)?)),
                _ => (Some(graph(u)?), Some(execution(u)?)),
            };
            ProfileFile::Combined(Profile {
                execution_profile,
                graph_profile,
                extra: extra(u)?,
            })
        }
    })
}

//! Graphcore Poplar profiles to XSpace: the simulated run of an execution profile, timed by the
//! graph profile's target clock and named by its compute sets.
//!
//! Each IPU of the target becomes a plane `/device:CUSTOM:<ipu>` (`device_type_string` the
//! target type) with three lines, `Compute` (`OnTileExecute` steps), `Exchanges` (`DoExchange`,
//! `GlobalExchange`, `StreamCopy`, `CopySharedStructure`) and `Syncs`, and steps of unknown tags
//! on a fourth, `Other`. A step is an event from `cyclesFrom` to `cyclesTo`, cycles turned into
//! time at `clockFrequency`; it is named by its `name`, else its compute set's name in the graph
//! profile, else its tag, with `type`, `program`, `cycles`, the balance figures and the compute
//! set or exchange index as stats. A sync has no cycles of its own: it is an instant at the end
//! of the step before it. The simulation covers every tile, so every IPU's plane shows every
//! step. Memory per tile (`memory.byTile.totalIncludingGaps`, the bytes a tile needs) becomes a
//! counter event on each IPU's `_counters_` line, one stat per tile of that IPU, at the start and
//! at the end of the run.

use profkit_poplar::{ExchangeKind, ExecutionProfile, GraphProfile, Step};
use profkit_xplane::constants::{COUNTERS_LINE_ID, COUNTERS_LINE_NAME, TASK_ENV_PLANE_NAME, stats};
use profkit_xplane::{PlaneBuilder, StatValue, XPlane, XSpace};

use crate::error::{Error, Result};

/// Picoseconds of `cycles` at `hz`.
fn cycles_to_ps(cycles: u64, hz: f64) -> i64 {
    let ps = (cycles as f64 * 1e12 / hz).round();
    if ps >= i64::MAX as f64 {
        i64::MAX
    } else {
        ps as i64
    }
}

/// The XSpace of an execution profile and the graph profile of the same run (see the module
/// documentation). Without a graph profile there is no clock, so no time: that is an error.
pub fn poplar_to_xspace(
    execution: Option<&ExecutionProfile>,
    graph: Option<&GraphProfile>,
) -> Result<XSpace> {
    let graph = graph.ok_or_else(|| {
        Error::Unsupported(
            "a Poplar execution profile needs the graph profile of the same run (its target's clockFrequency turns cycles into time): give graph.json too".into(),
        )
    })?;
    let target = &graph.target;
    let hz = target.clock_frequency;
    if !(hz.is_finite() && hz > 0.0) {
        return Err(Error::Unsupported(format!(
            "the graph profile's target.clockFrequency is {hz}, not a positive frequency"
        )));
    }
    let steps: &[Step] = execution.map_or(&[], |e| e.steps());
    let ipus = target.num_ipus.clamp(1, 4096);
    let per_ipu = target.tiles_per_ipu.max(1);
    let end_cycles = execution
        .and_then(|e| e.simulation.as_ref())
        .map(|s| s.cycles)
        .unwrap_or(0)
        .max(
            steps
                .iter()
                .filter_map(|s| s.timing().and_then(|t| t.cycles_to))
                .max()
                .unwrap_or(0),
        );
    let memory = graph
        .memory
        .as_ref()
        .and_then(|m| m.by_tile.as_ref())
        .map(|t| &t.total_including_gaps);

    let mut space = XSpace::default();
    for ipu in 0..ipus {
        let mut plane = XPlane::default();
        {
            let mut b = PlaneBuilder::new(&mut plane);
            b.set_id(ipu as i64)
                .set_name(format!("/device:CUSTOM:{ipu}"));
            b.add_stat(
                stats::DEVICE_TYPE_STRING,
                format!("{:?}", target.target_type),
            );
            b.add_stat(stats::DEVICE_ID, ipu);
            for (id, name) in [(1, "Compute"), (2, "Exchanges"), (3, "Syncs")] {
                b.line(id).set_name(name).set_timestamp_ns(0);
            }
            let mut last_end: u64 = 0;
            for (index, step) in steps.iter().enumerate() {
                let line = match step {
                    Step::OnTileExecute(_) => 1,
                    Step::DoExchange(_)
                    | Step::GlobalExchange(_)
                    | Step::StreamCopy(_)
                    | Step::CopySharedStructure(_)
                    | Step::SharedStructureCopy(_) => 2,
                    Step::Sync { .. } => 3,
                    Step::Unknown(_) => 4,
                };
                if line == 4 && b.plane().lines.iter().all(|l| l.id != 4) {
                    b.line(4).set_name("Other").set_timestamp_ns(0);
                }
                let name = step
                    .name()
                    .map(str::to_owned)
                    .or_else(|| {
                        step.compute_set()
                            .and_then(|cs| graph.compute_set_name(cs))
                            .map(str::to_owned)
                    })
                    .unwrap_or_else(|| step.type_name().to_owned());
                let timing = step.timing();
                let (from, to) = match timing {
                    Some(t) => {
                        let from = t.cycles_from.unwrap_or(last_end);
                        (from, t.cycles_to.unwrap_or(from).max(from))
                    }
                    None => (last_end, last_end),
                };
                if timing.is_some() {
                    last_end = to;
                }
                let mut builder = b.line(line);
                let mut event = builder.add_event(&name);
                event
                    .set_offset_ps(cycles_to_ps(from, hz))
                    .set_duration_ps(cycles_to_ps(to, hz).saturating_sub(cycles_to_ps(from, hz)));
                event.add_stat("type", step.type_name());
                event.add_stat("step", index as u64);
                if let Some(t) = timing {
                    event.add_stat("program", u64::from(t.program));
                    let optional: [(&str, Option<StatValue>); 4] = [
                        ("cycles", t.cycles.map(StatValue::Uint64)),
                        ("tile_balance", t.tile_balance.map(StatValue::Double)),
                        ("active_tiles", t.active_tiles.map(StatValue::Uint64)),
                        (
                            "active_tile_balance",
                            t.active_tile_balance.map(StatValue::Double),
                        ),
                    ];
                    for (key, value) in optional {
                        if let Some(value) = value {
                            event.add_stat(key, value);
                        }
                    }
                }
                if let Some(cs) = step.compute_set() {
                    event.add_stat("compute_set", u64::from(cs));
                }
                if let Some((kind, i)) = step.exchange() {
                    let key = match kind {
                        ExchangeKind::Internal => "exchange",
                        ExchangeKind::External => "external_exchange",
                        ExchangeKind::Host => "host_exchange",
                    };
                    event.add_stat(key, u64::from(i));
                }
                if let Step::Sync { step, .. } = step {
                    if let Some(kind) = &step.sync_type {
                        event.add_stat("sync_type", format!("{kind:?}"));
                    }
                }
            }
            if let Some(memory) = memory {
                let mut counters = b.line(COUNTERS_LINE_ID);
                counters.set_name(COUNTERS_LINE_NAME).set_timestamp_ns(0);
                let first = ipu.saturating_mul(per_ipu);
                let width = (target.num_tiles.max(1) - 1).to_string().len();
                for at in [0, end_cycles] {
                    let mut event = counters.add_event("tile memory");
                    event.set_offset_ps(cycles_to_ps(at, hz));
                    for tile in first..first.saturating_add(per_ipu) {
                        let Some(bytes) = usize::try_from(tile).ok().and_then(|t| memory.get(t))
                        else {
                            break;
                        };
                        event.add_stat(&format!("tile {tile:0width$}"), bytes);
                    }
                    if end_cycles == 0 {
                        break;
                    }
                }
            }
        }
        plane.lines.retain(|l| !l.events.is_empty());
        space.planes.push(plane);
    }
    let mut env = XPlane::default();
    {
        let mut b = PlaneBuilder::new(&mut env);
        b.set_id(ipus as i64).set_name(TASK_ENV_PLANE_NAME);
        b.add_stat(stats::PROFILE_START_TIME, 0_u64);
        b.add_stat(
            stats::PROFILE_STOP_TIME,
            u64::try_from(cycles_to_ps(end_cycles, hz) / 1000).unwrap_or(0),
        );
    }
    space.planes.push(env);
    Ok(space)
}

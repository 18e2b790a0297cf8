//! The simulated run: steps in time, totals by type against `tileCycles`, and tile balance
//! recomputed from the per-tile cycles against the file's own.

use serde::Serialize;

use crate::counts::Counts;
use crate::execution::{ExecutionProfile, ProfilerMode};
use crate::graph::GraphProfile;
use crate::step::Step;

/// One step of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimelineStep {
    /// Its index in `simulation.steps`.
    pub index: usize,
    /// Its tag.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The program it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<u32>,
    /// Its name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The kind of sync, for a sync step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_type: Option<String>,
    /// `cyclesFrom`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_cycle: Option<u64>,
    /// `cyclesTo`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_cycle: Option<u64>,
    /// `cycles`: cycles of the longest-running tile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycles: Option<u64>,
    /// `cyclesFrom` in nanoseconds at the target's clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<f64>,
    /// `cyclesTo` in nanoseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_ns: Option<f64>,
    /// The cycles all tiles spent in the step, added (from the per-tile cycles when the profiles
    /// have them, else `tileBalance` x `cycles` x numTiles).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tile_cycles: Option<u64>,
}

/// The steps of one type, added up, against the file's `tileCycles`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypeTotal {
    /// The key in `tileCycles` (`compute`, `doExchange`, ...).
    pub activity: String,
    /// The step type counted (`OnTileExecute`, `DoExchange`, ...).
    pub step_type: String,
    /// How many steps.
    pub steps: usize,
    /// Their `cycles`, added.
    pub cycles: u64,
    /// Their tile cycles, added (absent when a step's cannot be worked out).
    pub tile_cycles: Option<u64>,
    /// The file's `tileCycles` figure.
    pub file_tile_cycles: Option<u64>,
    /// Whether the two agree (absent when either is).
    pub agrees: Option<bool>,
}

/// The balance figures of one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Balance {
    /// Cycles of the longest-running tile.
    pub cycles: Option<u64>,
    /// Tile cycles / (`cycles` x numTiles).
    pub tile_balance: Option<f64>,
    /// Tiles with cycles.
    pub active_tiles: Option<u64>,
    /// Tile cycles / (`cycles` x active tiles).
    pub active_tile_balance: Option<f64>,
}

/// One step's balance, as the file gives it and recomputed from per-tile cycles.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepBalance {
    /// The step's index.
    pub index: usize,
    /// The step type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Where the per-tile cycles came from (`computeSetCyclesByTile`,
    /// `computeSets.cycleEstimates.cyclesByTile`, `exchanges.cyclesByTile`, ...).
    pub source: String,
    /// The file's figures.
    pub file: Balance,
    /// The recomputed figures.
    pub recomputed: Balance,
    /// Whether every figure the file has agrees (balances within 1e-6).
    pub agrees: bool,
}

/// Tile balance recomputed for every step that has per-tile cycles.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BalanceReport {
    /// Steps compared.
    pub steps_compared: usize,
    /// Steps whose figures all agree.
    pub steps_agreeing: usize,
    /// The largest difference of `tileBalance`.
    pub max_tile_balance_difference: f64,
    /// Each step compared.
    pub steps: Vec<StepBalance>,
}

/// The simulated run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timeline {
    /// `simulation.cycles`.
    pub cycles: u64,
    /// The target's clock in hertz (from the graph profile).
    pub clock_frequency: Option<f64>,
    /// `cycles` in nanoseconds.
    pub duration_ns: Option<f64>,
    /// The steps in order.
    pub steps: Vec<TimelineStep>,
    /// Totals by step type, against `tileCycles`.
    pub totals: Vec<TypeTotal>,
    /// Tile balance recomputed.
    pub balance: BalanceReport,
}

/// The per-tile cycles behind a step, and where they came from.
fn tile_cycles_of<'a>(
    step: &Step,
    execution: &'a ExecutionProfile,
    graph: Option<&'a GraphProfile>,
) -> Option<(&'a Counts, &'static str)> {
    let row = |rows: &'a [Counts], i: u32| rows.get(i as usize);
    match step {
        Step::OnTileExecute(s) => {
            let cs = s.compute_set?;
            if let ProfilerMode::ComputeSets {
                compute_set_cycles_by_tile,
            } = &execution.mode
            {
                return row(compute_set_cycles_by_tile, cs).map(|c| (c, "computeSetCyclesByTile"));
            }
            let estimates = graph?.compute_sets.as_ref()?.cycle_estimates.as_ref()?;
            row(&estimates.cycles_by_tile, cs)
                .map(|c| (c, "computeSets.cycleEstimates.cyclesByTile"))
        }
        Step::DoExchange(s) => {
            let ex = graph?.exchanges.as_ref()?;
            row(&ex.cycles_by_tile, s.exchange?).map(|c| (c, "exchanges.cyclesByTile"))
        }
        Step::GlobalExchange(s) => {
            let i = s.external_exchange?;
            if let ProfilerMode::ExternalExchanges {
                external_exchange_cycles,
            } = &execution.mode
            {
                return row(external_exchange_cycles, i).map(|c| (c, "externalExchangeCycles"));
            }
            let ex = graph?.external_exchanges.as_ref()?;
            row(&ex.estimated_cycles_by_tile, i)
                .map(|c| (c, "externalExchanges.estimatedCyclesByTile"))
        }
        Step::StreamCopy(s) => {
            let i = s.host_exchange?;
            if let ProfilerMode::HostExchanges {
                host_exchange_cycles,
            } = &execution.mode
            {
                return row(host_exchange_cycles, i).map(|c| (c, "hostExchangeCycles"));
            }
            let ex = graph?.host_exchanges.as_ref()?;
            row(&ex.estimated_cycles_by_tile, i).map(|c| (c, "hostExchanges.estimatedCyclesByTile"))
        }
        _ => None,
    }
}

/// The balance figures of per-tile cycles over `tiles` tiles.
fn balance_of(cycles: &Counts, tiles: u64) -> (Balance, u64) {
    let sum = cycles.sum();
    let max = cycles.max();
    let active = cycles.count_nonzero() as u64;
    let ratio = |n: u64| (max > 0 && n > 0).then(|| sum as f64 / (max as f64 * n as f64));
    (
        Balance {
            cycles: Some(max),
            tile_balance: ratio(tiles),
            active_tiles: Some(active),
            active_tile_balance: ratio(active),
        },
        sum,
    )
}

fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-6,
        (None, _) => true,
        (Some(_), None) => false,
    }
}

/// The `tileCycles` key of each step type, in the order the totals are listed.
const ACTIVITIES: &[(&str, &str)] = &[
    ("compute", "OnTileExecute"),
    ("doExchange", "DoExchange"),
    ("globalExchange", "GlobalExchange"),
    ("streamCopy", "StreamCopy"),
    ("copySharedStructure", "CopySharedStructure"),
    ("sync", "Sync"),
];

/// The timeline of an execution profile's simulation (`None` without one). Times in nanoseconds
/// and the per-tile cycles behind tile balance need the graph profile.
pub fn timeline(execution: &ExecutionProfile, graph: Option<&GraphProfile>) -> Option<Timeline> {
    let simulation = execution.simulation.as_ref()?;
    let target = graph.map(|g| &g.target);
    let ns = |cycles: Option<u64>| target.zip(cycles).and_then(|(t, c)| t.cycles_to_ns(c));
    let tiles = target.map(|t| t.num_tiles);

    let mut steps = Vec::with_capacity(simulation.steps.len());
    let mut balance = BalanceReport::default();
    for (index, step) in simulation.steps.iter().enumerate() {
        let timing = step.timing();
        let per_tile = tile_cycles_of(step, execution, graph);
        let mut tile_cycles = None;
        if let (Some((cycles, source)), Some(tiles)) = (per_tile, tiles) {
            let (recomputed, sum) = balance_of(cycles, tiles);
            tile_cycles = Some(sum);
            let t = timing.unwrap_or_default();
            let file = Balance {
                cycles: t.cycles,
                tile_balance: t.tile_balance,
                active_tiles: t.active_tiles,
                active_tile_balance: t.active_tile_balance,
            };
            let agrees = file.cycles.is_none_or(|c| Some(c) == recomputed.cycles)
                && file
                    .active_tiles
                    .is_none_or(|a| Some(a) == recomputed.active_tiles)
                && close(file.tile_balance, recomputed.tile_balance)
                && close(file.active_tile_balance, recomputed.active_tile_balance);
            if let (Some(a), Some(b)) = (file.tile_balance, recomputed.tile_balance) {
                balance.max_tile_balance_difference =
                    balance.max_tile_balance_difference.max((a - b).abs());
            }
            balance.steps_compared += 1;
            balance.steps_agreeing += usize::from(agrees);
            balance.steps.push(StepBalance {
                index,
                type_name: step.type_name().to_owned(),
                source: source.to_owned(),
                file,
                recomputed,
                agrees,
            });
        } else if let (Some(t), Some(tiles)) = (timing, tiles)
            && let (Some(b), Some(c)) = (t.tile_balance, t.cycles)
        {
            tile_cycles = Some((b * c as f64 * tiles as f64).round() as u64);
        }
        let sync_type = match step {
            Step::Sync { step, .. } => step.sync_type.as_ref().map(|s| s.as_str().to_owned()),
            _ => None,
        };
        steps.push(TimelineStep {
            index,
            type_name: step.type_name().to_owned(),
            program: step.program(),
            name: step.name().map(str::to_owned),
            sync_type,
            start_cycle: timing.and_then(|t| t.cycles_from),
            end_cycle: timing.and_then(|t| t.cycles_to),
            cycles: timing.and_then(|t| t.cycles),
            start_ns: ns(timing.and_then(|t| t.cycles_from)),
            end_ns: ns(timing.and_then(|t| t.cycles_to)),
            tile_cycles,
        });
    }

    let file = simulation.tile_cycles.as_ref();
    let mut totals = Vec::new();
    for &(activity, step_type) in ACTIVITIES {
        let of_type: Vec<&TimelineStep> = steps
            .iter()
            .filter(|s| s.type_name.eq_ignore_ascii_case(step_type))
            .collect();
        let file_tile_cycles = file.and_then(|t| match activity {
            "compute" => t.compute,
            "doExchange" => t.do_exchange,
            "globalExchange" => t.global_exchange,
            "streamCopy" => t.stream_copy,
            "copySharedStructure" => t.copy_shared_structure,
            _ => t.sync,
        });
        if of_type.is_empty() && file_tile_cycles.is_none() {
            continue;
        }
        let tile_cycles = of_type
            .iter()
            .map(|s| s.tile_cycles)
            .try_fold(0u64, |sum, c| c.map(|c| sum.saturating_add(c)));
        totals.push(TypeTotal {
            activity: activity.to_owned(),
            step_type: step_type.to_owned(),
            steps: of_type.len(),
            cycles: of_type
                .iter()
                .filter_map(|s| s.cycles)
                .fold(0, u64::saturating_add),
            tile_cycles,
            file_tile_cycles,
            agrees: tile_cycles.zip(file_tile_cycles).map(|(a, b)| a == b),
        });
    }
    if let (Some(active), ProfilerMode::IpuModel) =
        (file.and_then(|t| t.active_compute), &execution.mode)
    {
        // Under the IPU model the active cycles come from the estimates too.
        let estimates = graph
            .and_then(|g| g.compute_sets.as_ref())
            .and_then(|cs| cs.cycle_estimates.as_ref());
        let computed = estimates.and_then(|e| {
            simulation
                .steps
                .iter()
                .filter_map(|s| match s {
                    Step::OnTileExecute(s) => Some(s.compute_set),
                    _ => None,
                })
                .try_fold(0u64, |sum, cs| {
                    let row = e.active_cycles_by_tile.get(cs? as usize)?;
                    Some(sum.saturating_add(row.sum()))
                })
        });
        totals.push(TypeTotal {
            activity: "activeCompute".to_owned(),
            step_type: "OnTileExecute".to_owned(),
            steps: steps
                .iter()
                .filter(|s| s.type_name == "OnTileExecute")
                .count(),
            cycles: 0,
            tile_cycles: computed,
            file_tile_cycles: Some(active),
            agrees: computed.map(|c| c == active),
        });
    }

    Some(Timeline {
        cycles: simulation.cycles,
        clock_frequency: target.map(|t| t.clock_frequency),
        duration_ns: ns(Some(simulation.cycles)),
        steps,
        totals,
        balance,
    })
}

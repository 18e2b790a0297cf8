//! `pod_viewer`: each step of each core, broken down by kind of time, from an OpStats' steps
//! database (xprof's `ConvertOpStatsToPodViewer` and `ConvertOpStatsToPodStats`), as protobuf
//! JSON (`PodViewerDatabase`).
//!
//! A step's record on a core names its host (from the OpStats' core details; a core without
//! details has no record), its duration and its time in microseconds by the nine generic kinds
//! (device compute, device to device, collectives, host compute, kernel launch, input, output,
//! compilation, all others), and its bottleneck: the kind with the most time (of kinds with equal
//! time, the last by name). The JSON is printed as xprof prints it (protobuf's printer with
//! fields at their defaults, fields in number order); its maps are in key order here, in hash
//! order in xprof's, so the two are equal once parsed.

use crate::proto::OpStats;
use crate::tools::input_pipeline::{
    DEVICE_COLLECTIVES, DEVICE_COMPUTE_16, DEVICE_COMPUTE_32, DEVICE_TO_DEVICE, DEVICE_TO_HOST,
    DEVICE_WAIT_DEVICE, DEVICE_WAIT_HOST, HOST_COMPILE, HOST_COMPUTE, HOST_PREPARE, HOST_TO_DEVICE,
    HOST_WAIT_INPUT, UNKNOWN_TIME, step_warnings, unpack_generic,
};
use crate::tools::pbjson::{push_double, push_string};

/// The generic kinds of step time (`GenericEventType`, ids 1 to 9), each with the event types
/// it sums.
const KINDS: [(&str, &[i32]); 9] = [
    ("Device compute", &[DEVICE_COMPUTE_32, DEVICE_COMPUTE_16]),
    ("Device to device", &[DEVICE_TO_DEVICE, DEVICE_WAIT_DEVICE]),
    ("Device collective communication", &[DEVICE_COLLECTIVES]),
    ("Host compute", &[HOST_COMPUTE]),
    ("Kernel launch", &[HOST_PREPARE]),
    (
        "Input",
        &[HOST_WAIT_INPUT, HOST_TO_DEVICE, DEVICE_WAIT_HOST],
    ),
    ("Output", &[DEVICE_TO_HOST]),
    ("Compilation", &[HOST_COMPILE]),
    ("All others", &[UNKNOWN_TIME]),
];

/// The names of the kinds of step time, by id (1 to 9).
pub const KIND_NAMES: [&str; 9] = [
    KINDS[0].0, KINDS[1].0, KINDS[2].0, KINDS[3].0, KINDS[4].0, KINDS[5].0, KINDS[6].0, KINDS[7].0,
    KINDS[8].0,
];

/// `PodStatsRecord`: one step on one core.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodStatsRecord {
    /// The core's host.
    pub host_name: String,
    /// The step's number.
    pub step_num: u32,
    /// The step's duration, microseconds.
    pub total_duration_us: f64,
    /// Microseconds by kind ([`KIND_NAMES`] order, ids 1 to 9).
    pub step_breakdown_us: [f64; 9],
    /// The kind with the most time.
    pub bottleneck: &'static str,
}

/// `PodStatsMap`: a step's records by core.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodStatsMap {
    /// The step's number.
    pub step_num: u32,
    /// The records, by core id.
    pub per_core: Vec<(u32, PodStatsRecord)>,
}

/// `PodViewerDatabase`, the parts xprof fills from an OpStats.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodViewer {
    /// The steps.
    pub steps: Vec<PodStatsMap>,
    /// Warnings about the steps.
    pub warnings: Vec<String>,
    /// The run's device type.
    pub device_type: String,
}

/// The pod viewer's data for an OpStats.
pub fn pod_viewer(stats: &OpStats) -> PodViewer {
    let default = crate::proto::StepDatabaseResult::default();
    let db = stats.step_db.as_ref().unwrap_or(&default);
    // `ConvertOpStatsToPodStats` makes a record per (step, core with details), in order; the
    // sequence then takes them one by one for every (step, core), as xprof does.
    let mut records = Vec::new();
    for step in &db.step_sequence {
        for (core, info) in &step.step_info_per_core {
            let Some(details) = stats.core_id_to_details.get(core) else {
                continue;
            };
            let generic = unpack_generic(info.step_breakdown.as_ref())
                .ok()
                .flatten()
                .unwrap_or_default();
            let mut breakdown = [0.0; 9];
            let mut by_time: Vec<(u64, &'static str)> = Vec::with_capacity(9);
            for (slot, (name, types)) in breakdown.iter_mut().zip(KINDS) {
                let ps = types.iter().fold(0_u64, |acc, t| {
                    acc.wrapping_add(generic.type_ps.get(t).copied().unwrap_or(0))
                });
                *slot = ps as f64 / 1e6;
                by_time.push((ps, name));
            }
            by_time.sort();
            records.push(PodStatsRecord {
                host_name: details.hostname.clone(),
                step_num: info.step_num,
                total_duration_us: info.duration_ps as f64 / 1e6,
                step_breakdown_us: breakdown,
                bottleneck: by_time.last().map_or("", |(_, n)| n),
            });
        }
    }
    // Once the records run out (cores without details), xprof 2.24.2 leaves the remaining
    // (step, core) pairs out.
    let mut records = records.into_iter();
    let steps = db
        .step_sequence
        .iter()
        .map(|step| PodStatsMap {
            step_num: step.step_num,
            per_core: step
                .step_info_per_core
                .keys()
                .map_while(|core| records.next().map(|r| (*core, r)))
                .collect(),
        })
        .collect();
    PodViewer {
        steps,
        warnings: step_warnings(stats),
        device_type: stats
            .run_environment
            .as_ref()
            .map(|e| e.device_type.clone())
            .unwrap_or_default(),
    }
}

/// The pod viewer's data as xprof prints it (maps in key order).
pub fn to_json_of(p: &PodViewer) -> String {
    let mut o = String::new();
    o.push_str("{\"podStatsSequence\":{\"podStatsMap\":[");
    for (i, step) in p.steps.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        o.push_str(&format!(
            "{{\"stepNum\":{},\"podStatsPerCore\":{{",
            step.step_num
        ));
        for (j, (core, r)) in step.per_core.iter().enumerate() {
            if j > 0 {
                o.push(',');
            }
            o.push_str(&format!("\"{core}\":{{\"hostName\":"));
            push_string(&mut o, &r.host_name);
            o.push_str(&format!(
                ",\"chipId\":0,\"nodeId\":0,\"stepNum\":{},\"totalDurationUs\":",
                r.step_num
            ));
            push_double(&mut o, r.total_duration_us);
            o.push_str(",\"bottleneck\":");
            push_string(&mut o, r.bottleneck);
            o.push_str(",\"stepBreakdownUs\":{");
            for (k, us) in r.step_breakdown_us.iter().enumerate() {
                if k > 0 {
                    o.push(',');
                }
                o.push_str(&format!("\"{}\":", k + 1));
                push_double(&mut o, *us);
            }
            o.push_str("}}");
        }
        o.push_str("},\"channelDb\":[],\"coreIdToReplicaIdMap\":{},\"allReduceOpDb\":[]}");
    }
    o.push_str("]},\"diagnostics\":{\"info\":[],\"warnings\":[");
    for (i, w) in p.warnings.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        push_string(&mut o, w);
    }
    o.push_str("],\"errors\":[]},\"stepBreakdownEvents\":[");
    for (i, (name, _)) in KINDS.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        o.push_str(&format!("{{\"id\":{},\"name\":", i + 1));
        push_string(&mut o, name);
        o.push('}');
    }
    o.push_str("],\"deviceType\":");
    push_string(&mut o, &p.device_type);
    o.push('}');
    o
}

/// The tool's JSON, as xprof's `xspace_to_tool_data(..., "pod_viewer", ...)` returns it for a
/// profile of this OpStats, but for the order of its maps' keys.
pub fn to_json(stats: &OpStats) -> String {
    to_json_of(&pod_viewer(stats))
}

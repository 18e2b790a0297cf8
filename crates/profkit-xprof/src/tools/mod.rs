//! The tools xprof offers for a profile, as its `xspace_to_tool_names` lists them (xprof's
//! `GetAvailableToolNames`, in xprof 2.24.2).
//!
//! Every profile has the trace viewer (`trace_viewer@`, the streaming one) and the summaries
//! computed from OpStats: `overview_page`, `input_pipeline_analyzer`, `framework_op_stats`,
//! `memory_profile`, `op_profile`, `hlo_stats`, `roofline_model`. Then, judged on the first
//! host's space only: `kernel_stats` when a plane is a GPU's (`/device:GPU:`); `memory_viewer` and
//! `graph_viewer` when the `/host:metadata` plane declares an `Hlo Proto` stat (the XLA programs
//! JAX and TensorFlow store there); `megascale_stats` when an event of the host plane is named
//! `MegaScale:...`; `perf_counters` and `utilization_viewer` when a TPU plane's event has a
//! `counter_value` stat.
//!
//! The tools' data, each as xprof 2.24.2 returns it for a profile, in a module of its own:
//! [`framework_op_stats`], [`memory_profile`], [`kernel_stats`], [`hlo_stats`],
//! [`roofline_model`], [`op_profile`], [`memory_viewer`] (per HLO module); and, rendered from an OpStats, [`overview_page`],
//! [`input_pipeline`] (`input_pipeline_analyzer`), [`pod_viewer`].

pub mod framework_op_stats;
pub mod hlo_stats;
pub mod kernel_stats;
pub mod lacking;
pub mod memory_profile;
pub mod memory_viewer;
pub mod op_profile;
pub mod roofline_model;

mod format;
pub mod input_pipeline;
pub mod overview_page;
mod pbjson;
pub mod pod_viewer;
pub mod tpu_input_pipeline;

use profkit_xplane::constants::{
    GPU_PLANE_PREFIX, HOST_PLANE_NAME, METADATA_PLANE_NAME, TPU_PLANE_PREFIX,
};
use profkit_xplane::{XPlane, XSpace};

/// The tools every profile has, in xprof's order.
pub const ALWAYS: [&str; 8] = [
    "trace_viewer@",
    "overview_page",
    "input_pipeline_analyzer",
    "framework_op_stats",
    "memory_profile",
    "op_profile",
    "hlo_stats",
    "roofline_model",
];

/// The tools xprof lists for a profile of these hosts' spaces (the first host decides, as in
/// xprof); none for no space.
pub fn tool_names(spaces: &[XSpace]) -> Vec<&'static str> {
    let Some(space) = spaces.first() else {
        return Vec::new();
    };
    let mut tools = ALWAYS.to_vec();
    let planes = &space.planes;
    if planes.iter().any(|p| p.name.starts_with(GPU_PLANE_PREFIX)) {
        tools.push("kernel_stats");
    }
    if planes
        .iter()
        .filter(|p| p.name == METADATA_PLANE_NAME)
        .any(|p| has_stat_metadata(p, "Hlo Proto"))
    {
        tools.extend(["memory_viewer", "graph_viewer"]);
    }
    if planes
        .iter()
        .find(|p| p.name == HOST_PLANE_NAME)
        .is_some_and(|p| {
            p.event_metadata
                .values()
                .any(|m| m.name.starts_with("MegaScale:"))
        })
    {
        tools.push("megascale_stats");
    }
    if planes
        .iter()
        .filter(|p| p.name.starts_with(TPU_PLANE_PREFIX))
        .any(has_counter_values)
    {
        tools.extend(["perf_counters", "utilization_viewer"]);
    }
    tools
}

fn has_stat_metadata(plane: &XPlane, name: &str) -> bool {
    plane.stat_metadata.values().any(|m| m.name == name)
}

/// Whether an event of the plane has a `counter_value` stat, its own or its metadata's.
fn has_counter_values(plane: &XPlane) -> bool {
    let Some(id) = plane
        .stat_metadata
        .iter()
        .find(|(_, m)| m.name == "counter_value")
        .map(|(id, _)| *id)
    else {
        return false;
    };
    plane.lines.iter().flat_map(|l| &l.events).any(|e| {
        e.stats.iter().any(|s| s.metadata_id == id)
            || plane
                .event_metadata
                .get(&e.metadata_id)
                .is_some_and(|m| m.stats.iter().any(|s| s.metadata_id == id))
    })
}

#[cfg(test)]
mod tests {
    use profkit_xplane::PlaneBuilder;

    use super::*;

    fn space(build: impl FnOnce(&mut Vec<XPlane>)) -> XSpace {
        let mut planes = Vec::new();
        build(&mut planes);
        XSpace {
            planes,
            ..XSpace::default()
        }
    }

    fn plane(name: &str, f: impl FnOnce(&mut PlaneBuilder<'_>)) -> XPlane {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name(name);
        f(&mut b);
        plane
    }

    #[test]
    fn each_rule() {
        assert!(tool_names(&[]).is_empty());
        let host_only = space(|p| p.push(plane(HOST_PLANE_NAME, |_| {})));
        assert_eq!(tool_names(&[host_only]), ALWAYS.to_vec());
        let all = space(|p| {
            p.push(plane(HOST_PLANE_NAME, |b| {
                b.line(1).add_event("MegaScale: all-reduce");
            }));
            p.push(plane("/device:GPU:0", |_| {}));
            p.push(plane(METADATA_PLANE_NAME, |b| {
                b.stat_metadata_id("Hlo Proto");
            }));
            p.push(plane("/device:TPU:0", |b| {
                b.line(1)
                    .add_event("cycles")
                    .add_stat("counter_value", 7_u64);
            }));
        });
        let mut want = ALWAYS.to_vec();
        want.extend([
            "kernel_stats",
            "memory_viewer",
            "graph_viewer",
            "megascale_stats",
            "perf_counters",
            "utilization_viewer",
        ]);
        assert_eq!(tool_names(&[all]), want);
    }
}

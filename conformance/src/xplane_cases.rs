//! The XSpace cases we build ourselves, written by `cargo run -p conformance --bin make-xplane-cases`
//! (or by `BLESS=1 cargo test -p conformance`) into `conformance/xplane/<name>/input.xplane.pb`.
//!
//! Each function builds one case with [`PlaneBuilder`] (or, for the invalid and undecodable cases,
//! by editing messages and bytes directly). Everything is deterministic: the same code gives the
//! same bytes. Valid cases use session-relative line timestamps, as files meant for xprof must.

use profkit_xplane::constants::{self, stats};
use profkit_xplane::{EventMetadataBuilder, PlaneBuilder, XEvent, XPlane, XSpace, encode};

mod derived;
mod format;
mod grouping;
mod invalid;
mod kernels;
mod tpu_ops;

use derived::*;
use format::*;
use grouping::*;
use invalid::*;
use kernels::*;
use tpu_ops::*;

/// One generated case.
pub struct Case {
    /// The case directory name.
    pub name: &'static str,
    /// The encoded input.
    pub input: Vec<u8>,
}

/// Every generated case, in a fixed order.
pub fn cases() -> Vec<Case> {
    let spaces: Vec<(&'static str, XSpace)> = vec![
        ("all-fields", all_fields()),
        ("stat-kinds", stat_kinds()),
        ("num-occurrences", num_occurrences()),
        ("display-fallbacks", display_fallbacks()),
        ("counter-line", counter_line()),
        ("empty-planes", empty_planes()),
        ("empty-space", XSpace::default()),
        ("gpu-device", gpu_device()),
        ("tpu-device", tpu_device()),
        ("custom-device", custom_device()),
        ("device-priority", device_priority()),
        ("host-planes", host_planes()),
        ("nested-events", nested_events()),
        ("task-environment", task_environment()),
        ("metadata-stats", metadata_stats()),
        ("invalid-dangling-ids", invalid_dangling_ids()),
        ("invalid-map-key-mismatch", invalid_map_key_mismatch()),
        ("invalid-partial-overlap", invalid_partial_overlap()),
        ("invalid-picosecond-overflow", invalid_picosecond_overflow()),
        ("invalid-unset-stat-value", invalid_unset_stat_value()),
        ("invalid-negative-values", invalid_negative_values()),
        ("gpu-ungrouped", gpu_ungrouped()),
        ("tpu-ungrouped", tpu_ungrouped()),
        ("loop-op", loop_op()),
        ("gpu-steps", gpu_steps()),
        ("gpu-launch-stats", gpu_launch_stats()),
        ("host-grouping", host_grouping()),
        ("partly-grouped", partly_grouped()),
        ("tpu-runtime", tpu_runtime()),
        ("gpu-derived", gpu_derived()),
        ("tpu-derived", tpu_derived()),
        ("gpu-hlo", gpu_hlo()),
        ("gpu-scope-ranges", gpu_scope_ranges()),
        ("gpu-cuda-graph", gpu_cuda_graph()),
        ("gpu-many-streams", gpu_many_streams()),
        ("gpu-steps-derived", gpu_steps_derived()),
        ("gpu-steps-ties", gpu_steps_ties()),
        ("grouped-with-metadata", grouped_with_metadata()),
        ("flows", flows()),
        ("tpu-op-metrics", tpu_op_metrics()),
        ("tpu-sparse-core", tpu_sparse_core()),
        ("tpu-fusions", tpu_fusions()),
        ("gpu-kernel-stats", gpu_kernel_stats()),
        ("tpu-host-input", tpu_host_input()),
    ];
    let mut cases: Vec<Case> = spaces
        .into_iter()
        .map(|(name, space)| Case {
            name,
            input: encode(&space),
        })
        .collect();
    cases.push(Case {
        name: "unknown-fields",
        input: unknown_fields(),
    });
    cases.extend(error_cases());
    cases
}

/// One microsecond in picoseconds.
const US: i64 = 1_000_000;

/// A plane with `id` and `name`, filled in by `f`.
fn plane(id: i64, name: &str, f: impl FnOnce(&mut PlaneBuilder<'_>)) -> XPlane {
    let mut plane = XPlane::default();
    let mut builder = PlaneBuilder::new(&mut plane);
    builder.set_id(id).set_name(name);
    f(&mut builder);
    plane
}

/// The builder of the event metadata named `name`, created if missing.
fn metadata<'b>(builder: &'b mut PlaneBuilder<'_>, name: &str) -> EventMetadataBuilder<'b> {
    let id = builder.event_metadata_id(name);
    match builder.event_metadata(id) {
        Some(md) => md,
        None => unreachable!("event metadata {id} was just interned"),
    }
}

fn describe(plane: &mut XPlane, stat: &str, description: &str) {
    for md in plane.stat_metadata.values_mut() {
        if md.name == stat {
            md.description = description.to_owned();
        }
    }
}

fn space(planes: Vec<XPlane>) -> XSpace {
    XSpace {
        planes,
        ..Default::default()
    }
}

/// A small valid host plane to break in the invalid cases.
fn base_plane() -> XPlane {
    plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("main").set_timestamp_ns(1_000);
        line.add_event("op")
            .set_duration_ps(4 * US)
            .add_stat(stats::STEP_NUM, 1_i64);
    })
}

fn push_event(plane: &mut XPlane, event: XEvent) {
    if let Some(line) = plane.lines.first_mut() {
        line.events.push(event);
    }
}

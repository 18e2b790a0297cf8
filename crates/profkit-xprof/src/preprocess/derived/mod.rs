//! xprof's derived timelines: the lines its preprocessing adds to device planes before the trace
//! viewer reads them (`GenerateDerivedTimeLines`).
//!
//! - On every `/device:GPU:` plane (`DeriveEventsFromAnnotations`, see [`gpu`]), each stream's
//!   kernels (events with `kernel_details` or `cuda_graph_exec_id`) give five derived lines, named
//!   after the stream they come from: `XLA Modules - from #N` (one event per run of kernels of one
//!   `hlo_module`, named `module(program_id)`), `XLA Ops - from #N` (one level per `hlo_op` scope,
//!   `a::b`), `Framework Name Scope - from #N` and `Framework Ops - from #N` (from `tf_op`), and
//!   `Source code - from #N`. Streams are ordered compute streams first, then by event count, and
//!   every line gets its display position: a stream, then six positions for its derived lines.
//! - On every TensorCore plane (`/device:TPU:<n>`, `DeriveLinesFromStats`, see [`tpu`]), the
//!   `tf_op` and `source` stats of any event (on the event or its metadata) give `Framework Name
//!   Scope`, `Framework Ops` and `Source code` lines, and host-offload copies (`copy-start` …
//!   `copy-done` of a buffer in host memory, `S(5)`) give `Host Offload Ops row N` lines.
//!
//! Derived events of one line merge with the previous one of the same name (and group, and scope
//! range) as xprof's `DerivedXLineBuilder` merges them ([`builder`]); stacked events with the same
//! span are shortened by a nanosecond per level, as xprof does for its trace viewer.
//!
//! The framework op and source line of a GPU XLA op come from the HLO protos of the space's
//! `/host:metadata` plane ([`hlo`]): the instruction named by the innermost `hlo_op` of the
//! module with the kernel's `program_id`, its metadata's `op_name:op_type` and source file and
//! line.
//!
//! Kernels with a `scope_range_id` keep runs apart where the ids differ: the module's from the
//! root of the scope range tree (`/host:__ScopeRangeCallStack__`), each XLA op level's from the
//! id's chain of parents.
//!
//! On a GPU plane whose events carry `group_id`s, every event without one takes the group of the
//! last grouped event before it, and a `Steps` line gets one event per run of one group (named by
//! the group id, with the group's `step_name` when step grouping named it; see [`steps`]).
//!
//! The group ids and names come from step grouping (`super::grouping`), which runs first; the
//! `Launch Stats` line, which xprof derives after these from the host's launches, is
//! `super::launch_stats`.
//!
//! Not reproduced: xprof builds an HLO module from each proto and drops those it cannot build
//! (profkit keeps every proto that decodes).

mod builder;
mod gpu;
mod hlo;
mod steps;
pub(crate) mod tf_op;
mod tpu;

pub(crate) use hlo::Symbols;

/// The plane whose stats give each scope range id its parent (`kScopeRangeIdTreePlaneName`).
pub(crate) const SCOPE_RANGE_TREE_PLANE_NAME: &str = "/host:__ScopeRangeCallStack__";

use std::collections::BTreeMap;

use profkit_xplane::XPlane;
use profkit_xplane::constants::GPU_PLANE_PREFIX;

use super::tpu::is_tensor_core_plane;

/// The `Steps` line's id (`kThreadIdStepInfo`) and name.
pub(crate) const STEP_LINE_ID: i64 = steps::LINE_STEPS;
pub(crate) const STEP_LINE_NAME: &str = steps::LINE_NAME;

/// TSL's first derived line id (`kThreadIdDerivedMin`); the derived line ids are offsets from it.
const DERIVED_MIN: i64 = 0xdead_beef;
/// `kThreadIdTfNameScope`.
const LINE_TF_NAME_SCOPE: i64 = DERIVED_MIN + 2;
/// `kThreadIdTfOp`.
const LINE_TF_OP: i64 = DERIVED_MIN + 3;
/// `kThreadIdHloModule`.
const LINE_HLO_MODULE: i64 = DERIVED_MIN + 4;
/// `kThreadIdHloOp`.
const LINE_HLO_OP: i64 = DERIVED_MIN + 5;
/// `kThreadIdSource`.
const LINE_SOURCE: i64 = DERIVED_MIN + 7;
/// `kThreadIdHostOffloadOpStart` and `...End`.
const LINE_HOST_OFFLOAD_START: i64 = DERIVED_MIN + 8;
const LINE_HOST_OFFLOAD_END: i64 = DERIVED_MIN + 48;
/// The ids xprof gives the derived lines of GPU streams (`kThreadIdDeviceDerivedMin..Max`).
const DEVICE_DERIVED_MIN: i64 = DERIVED_MIN + 290;
const DEVICE_DERIVED_MAX: i64 = DEVICE_DERIVED_MIN + 99;
/// The last derived line id (`kThreadIdDerivedMax`).
const DERIVED_MAX: i64 = DEVICE_DERIVED_MAX;

/// TSL's `IsDerivedThreadId`, which reads the id as a 32-bit int.
pub(crate) fn is_derived_line_id(id: i64) -> bool {
    let id = i64::from(id as i32);
    (DERIVED_MIN as i32 as i64..=DERIVED_MAX as i32 as i64).contains(&id)
}

/// Whether [`derive_timelines`] may change the plane named `name` (GPU and TensorCore planes).
pub(crate) fn applies(name: &str) -> bool {
    name.starts_with(GPU_PLANE_PREFIX) || is_tensor_core_plane(name)
}

/// Adds xprof's derived lines to one device plane, as `GenerateDerivedTimeLines` does after
/// grouping (see the module documentation); planes of other kinds are left as they are. On GPU
/// planes this also sets every line's display id and removes lines without events; on TensorCore
/// planes it removes lines without events (sorting the events stays with the caller).
/// `symbols` are the HLO instructions of the space's `/host:metadata` plane, which name the
/// framework op and source line of GPU XLA ops.
/// `group_names` are the names of the step groups (from host step grouping), which become the
/// `step_name` of a GPU plane's `Steps` events.
pub(crate) fn derive_timelines(
    plane: &mut XPlane,
    symbols: &Symbols,
    group_names: &BTreeMap<i64, String>,
) {
    if plane.name.starts_with(GPU_PLANE_PREFIX) {
        gpu::derive(plane, symbols, group_names);
    } else if is_tensor_core_plane(&plane.name) {
        tpu::derive(plane);
    }
}

/// The lines a plane shows once [`derive_timelines`] has run on a copy of it, as (display id,
/// display name): what the trace viewer's metadata needs before any event is written.
pub(crate) fn layout(plane: &XPlane, symbols: &Symbols) -> Vec<(i64, String)> {
    if could_derive(plane) {
        layout_owned(plane.clone(), symbols)
    } else {
        layout_light(plane)
    }
}

/// [`layout`] of a plane the caller no longer needs (derived in place, without a copy).
pub(crate) fn layout_owned(mut plane: XPlane, symbols: &Symbols) -> Vec<(i64, String)> {
    if plane.name.starts_with(GPU_PLANE_PREFIX) && gpu::could_derive(&plane) {
        // Which derived lines have events is known without deriving them.
        gpu::derive_layout(&mut plane, symbols);
        shown_lines(&plane)
    } else if could_derive(&plane) {
        derive_timelines(&mut plane, symbols, &BTreeMap::new());
        shown_lines(&plane)
    } else {
        layout_light(&plane)
    }
}

/// Whether [`derive_timelines`] may add events to the plane (its `Steps` line or lines derived
/// from its events' stats), rather than only number and drop its lines.
pub(crate) fn could_derive(plane: &XPlane) -> bool {
    if plane.name.starts_with(GPU_PLANE_PREFIX) {
        gpu::could_derive(plane)
    } else {
        tpu::could_derive(plane)
    }
}

/// [`layout`] of a plane with nothing to derive.
fn layout_light(plane: &XPlane) -> Vec<(i64, String)> {
    let counts: Vec<usize> = plane.lines.iter().map(|l| l.events.len()).collect();
    layout_without_events(&lines_only(plane), &counts)
}

/// A copy of the plane's id, name and lines (ids and names), without anything else.
pub(crate) fn lines_only(plane: &XPlane) -> XPlane {
    XPlane {
        id: plane.id,
        name: plane.name.clone(),
        lines: plane
            .lines
            .iter()
            .map(|l| profkit_xplane::XLine {
                id: l.id,
                display_id: l.display_id,
                name: l.name.clone(),
                display_name: l.display_name.clone(),
                ..Default::default()
            })
            .collect(),
        ..XPlane::default()
    }
}

/// [`layout`] for a plane with nothing to derive, from its lines without their events (`shadow`)
/// and how many events each had: the lines with events, numbered on a GPU plane.
pub(crate) fn layout_without_events(shadow: &XPlane, counts: &[usize]) -> Vec<(i64, String)> {
    let mut copy = shadow.clone();
    if copy.name.starts_with(GPU_PLANE_PREFIX) {
        gpu::number_lines(&mut copy, counts, |_, _, _| {});
    }
    let mut kept = counts
        .iter()
        .map(|&c| c > 0)
        .chain(std::iter::repeat(false));
    copy.lines.retain(|_| kept.next().unwrap_or(false));
    shown_lines(&copy)
}

/// Whether the first pass needs the events of the plane named `name` with stat metadata named
/// `stat_names` to lay out its derived lines (a GPU plane with stats to derive from).
pub(crate) fn needs_events<'a>(
    name: &str,
    stat_names: impl Iterator<Item = &'a str> + Clone,
) -> bool {
    name.starts_with(GPU_PLANE_PREFIX) && gpu::could_derive_with(stat_names)
}

/// The (display id, display name) of each line.
pub(crate) fn shown_lines(plane: &XPlane) -> Vec<(i64, String)> {
    plane
        .lines
        .iter()
        .map(|l| {
            let id = if l.display_id != 0 {
                l.display_id
            } else {
                l.id
            };
            let name = if l.display_name.is_empty() {
                l.name.clone()
            } else {
                l.display_name.clone()
            };
            (id, name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_ids() {
        assert!(is_derived_line_id(DERIVED_MIN));
        assert!(is_derived_line_id(DEVICE_DERIVED_MAX));
        assert!(!is_derived_line_id(DEVICE_DERIVED_MAX + 1));
        assert!(!is_derived_line_id(7));
        assert!(applies("/device:GPU:0"));
        assert!(applies("/device:TPU:3"));
        assert!(!applies("/device:TPU:0 SparseCore 1"));
        assert!(!applies("/device:CUSTOM:0"));
    }
}

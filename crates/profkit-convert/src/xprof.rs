//! The parts of xprof's XSpace preprocessing that change what its trace viewer shows.
//!
//! Before converting, xprof 2.24.2 runs `PreprocessSingleHostXSpace(space, step_grouping=true,
//! derived_timeline=true)`. On a space that is already grouped (some plane has a `group_id` stat
//! metadata) it does nothing. Otherwise it groups events into steps (`GroupTfEvents`, or
//! `GroupTpuEventsOSS` when there is a TPU plane) and derives timelines. What this module
//! reproduces of that, exactly as xprof does it (every case in `conformance/xplane/` comes out as
//! xprof's output byte for byte, its salted `flow` args aside):
//!
//! - `is_eager` (0 or 1) on every kernel-execute event (an event with a `correlation_id` stat on a
//!   plane other than `/host:CPU`, whose name is not one of TSL's host event types; on a TPU plane
//!   only the grouping line's events) and on every TensorFlow op event (`name:Type`, `TfOpRun`):
//!   1 when the nearest enclosing `EagerExecute` (on the event's line or, for a kernel, around the
//!   host event that launched it, same `correlation_id`, breadth first as TSL searches) has an
//!   `is_func` stat of 0; none at all when the space holds one of TensorFlow's loop ops;
//! - on a TPU space without host step roots, lock-step grouping: the k-th event of each TensorCore
//!   plane's grouping line (`Steps`, else `XLA Modules`) becomes group k, named by its `step_num`;
//!   on every device plane with a grouping line, step events get `step_idle_time_ps` and
//!   `step_name` (consecutive steps of one group merged), and the events of other lines the
//!   `group_id` of the grouping event they overlap;
//! - on `/device:GPU:` planes, display ids renumbered in xprof's stream order (compute streams
//!   first, then by event count, with libstdc++'s `std::sort` for ties, leaving six positions after
//!   each stream for its derived lines) and lines without events removed;
//! - on TPU TensorCore planes (`/device:TPU:<n>`), lines without events removed and each line's
//!   events sorted by offset, then longer first (`SortXPlane`, again with libstdc++'s sort).
//!
//! What it leaves out, and reports as such (`TraceViewerSummary::unreproduced`): step grouping from
//! host roots (events with an `_r` stat or `TraceContext`), which spreads `group_id` and
//! `step_name` along nesting, launches and TraceMe 2.0 context links and derives `Steps` and
//! `Launch Stats` lines; the lines derived from `tf_op`, `hlo_op`, `hlo_module` and `source`
//! stats (`Framework Ops`, `XLA Ops`, ...); TraceMe 2.0 context links (`_p`/`_c`) in the
//! `is_eager` search; `ThreadpoolListener` regions; and the salted `flow` stats. Spaces written
//! by profkit's converters, and spaces that xprof has already grouped, need none of that.

mod event_types;
mod facts;
mod gpu;
mod grouping;
mod regions;
mod sort;
mod stats;
mod tpu;

use profkit_xplane::XPlane;
use profkit_xplane::constants::GPU_PLANE_PREFIX;

pub(crate) use event_types::INTERNAL_EVENTS;
pub(crate) use facts::SpaceFacts;
pub(crate) use stats::timespan;

use gpu::{renumber_gpu_lines, renumber_gpu_lines_by};
use grouping::tpu::group_tpu_plane_events;
use sort::sort_events;
use tpu::is_tensor_core_plane;

/// Changes a plane as xprof's preprocessing would before its trace viewer reads it (see the
/// module documentation). `facts` must come from a pass over the whole space
/// ([`SpaceFacts::finish`] called), and `index` is the plane's position in the space.
pub(crate) fn preprocess_plane(plane: &mut XPlane, index: usize, facts: &SpaceFacts) {
    if !facts.preprocesses() {
        return;
    }
    // `PreprocessXPlane` (before grouping, loop ops or not).
    regions::add_regions(plane);
    if facts.groups() {
        facts.forest.apply(index, plane);
    }
    if facts.groups() && facts.tpu && plane.name.starts_with("/device:") {
        group_tpu_plane_events(plane, facts);
    }
    if plane.name.starts_with(GPU_PLANE_PREFIX) {
        renumber_gpu_lines(plane);
        plane.lines.retain(|l| !l.events.is_empty());
    }
    if is_tensor_core_plane(&plane.name) {
        plane.lines.retain(|l| !l.events.is_empty());
        for line in &mut plane.lines {
            sort_events(line);
        }
    }
}

/// The lines a plane keeps after [`preprocess_plane`], as (display id, display name), from a
/// copy of the plane's lines without events and the number of events each had (for the trace
/// viewer's metadata, written before any event).
pub(crate) fn line_layout(
    lines: &XPlane,
    counts: &[usize],
    facts: &SpaceFacts,
) -> Vec<(i64, String)> {
    let mut shadow = lines.clone();
    let gpu = facts.preprocesses() && shadow.name.starts_with(GPU_PLANE_PREFIX);
    let tensor_core = facts.preprocesses() && is_tensor_core_plane(&shadow.name);
    if gpu {
        renumber_gpu_lines_by(&mut shadow, counts);
    }
    shadow
        .lines
        .iter()
        .zip(counts.iter().copied().chain(std::iter::repeat(0)))
        .filter(|(_, count)| !(gpu || tensor_core) || *count > 0)
        .map(|(l, _)| {
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

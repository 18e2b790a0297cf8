//! The parts of xprof's XSpace preprocessing that change what its trace viewer shows.
//!
//! Before converting, xprof 2.24.2 runs `PreprocessSingleHostXSpace(space, step_grouping=true,
//! derived_timeline=true)`. On a space that is already grouped (every host and device plane has a
//! `group_id` stat metadata) it does nothing. Otherwise it rewrites legacy stats (`PreprocessXPlane`), groups
//! events into steps (`GroupTfEvents`, or `GroupTpuEventsOSS` when there is a TPU plane) and
//! derives timelines. What this module reproduces of that, exactly as xprof does it (every case in
//! `conformance/xplane/`, among them real TensorFlow and JAX profiles, comes out as xprof's output
//! byte for byte, flows compared as the events they link since xprof salts their ids), module by
//! module:
//!
//! - `regions`: `ThreadpoolListener::Region` events from the `StartRegion`/`StopRegion`
//!   instants of thread-pool threads (whether or not the space is then grouped);
//! - `grouping::forest`: TSL's event forest over every plane: nesting on each line, kernel
//!   launches to executions by `correlation_id`, TF executor to iterator links, TraceMe 2.0
//!   producer/consumer contexts (`_pt`/`_p`, `_ct`/`_c`); step roots (`_r`, `TraceContext`,
//!   batching roots, TF1 loop iterations; tf.data functions left out), each giving its group to
//!   everything reachable below it: `group_id` on every grouped event, `step_name` (`train 3`) on
//!   every root that is not of an implicit type; TPU steps grouped in lock step when no host root
//!   reaches them; `is_eager` (0 or 1) on every kernel execution and TensorFlow op, from the
//!   nearest `EagerExecute` among its ancestors (breadth first, context links included). None of
//!   it when the space holds one of TensorFlow's loop ops;
//! - `grouping::tpu`: on every device plane of a TPU space with a grouping line (`Steps`, else
//!   `XLA Modules`), consecutive steps of one group merged with their `step_idle_time_ps`, named
//!   by `step_name`, and the events of other lines given the `group_id` of the step they overlap;
//! - `derived`: xprof's derived timelines (`GenerateDerivedTimeLines`): on `/device:GPU:` planes
//!   with grouped events, each ungrouped event given the group of the last grouped one before it
//!   and the `Steps` line (one event per run of a group, named by the group's `step_name`), then
//!   per stream the `XLA Modules`, `XLA Ops`, `Framework Name Scope`, `Framework Ops`, `Source
//!   code` and `Command Buffers` lines (`... - from #N`), with display ids renumbered in xprof's
//!   stream order (compute streams first, then by event count, with libstdc++'s `std::sort` for
//!   ties, six positions after each stream for its derived lines) and lines without events
//!   removed; on TPU TensorCore planes the `Framework Name Scope`, `Framework Ops`, `Source code`
//!   and `Host Offload Ops row N` lines;
//! - `flows`: the `flow` stats of `AddFlowsToXplane` (kernel launches to kernels by
//!   `correlation_id`, TraceMe producers to consumers, the TPU runtime's contexts), computed per
//!   event as the trace viewer writes it, with deterministic ids;
//! - `launch_stats`: on `/device:GPU:` planes, the derived `Launch Stats` line from the host's
//!   grouped launches (after the lines above, as xprof makes it);
//! - `sort`: on TPU TensorCore planes (`/device:TPU:<n>`), lines without events removed and each
//!   line's events sorted by offset, then longer first (`SortXPlane`), equal keys keeping
//!   their order (seen on a real TPU profile, where xprof keeps the file's order of instants
//!   that share a time).
//!
//! What it leaves out is decided in one place, `SpaceFacts::unreproduced`, and reported for each
//! space as `TraceViewerSummary::unreproduced` (the CLI prints it as a note): the order of the
//! events of a `Launch Stats` line when a GPU has launches of several groups (xprof lists them in
//! hash-map order, profkit by group id); and the order of two step roots of one level and of
//! different event types that start at the same instant (TSL lists roots type by type in hash-map
//! order before its unstable sort). Spaces written by
//! profkit's converters, and spaces that xprof has already grouped, need none of it. Also
//! reproduced, with no line of its own above: `PreprocessXPlane`'s rewrites of the TPU runtime's
//! events (`runtime`: 27-bit `run_id`s, the contexts linking queue requests and program launches
//! to the TensorCore's `XLA Modules`) and its batching roots.
//!
//! Memory: the conversion streams plane by plane; grouping needs, besides the largest plane, the
//! event forest of the first pass: while the planes are taken in, a node (8 bytes) and its parent
//! on its line (4 bytes) per event of the planes that can take part in grouping (those with a
//! host event type, a `_r`, `_p`, `_c`, `id` or `correlation_id` stat, and TPU planes), 24 bytes
//! per producer or consumer of a context, and the stats naming steps for the few events that
//! carry them; kept until the last plane is written, a group (4 bytes) and an eager mark (a byte)
//! per such event, and the step names. The derived timelines need, across planes, the HLO instructions of
//! the `/host:metadata` plane and the scope range tree (see its `derived` module).

pub(crate) mod derived;
mod event_types;
mod facts;
pub mod flows;
mod grouping;
mod launch_stats;
mod regions;
mod runtime;
mod sort;
pub(crate) mod stats;
pub(crate) mod tpu;

use profkit_xplane::constants::{GPU_PLANE_PREFIX, HOST_PLANE_NAME};
use profkit_xplane::{XPlane, XSpace};

pub(crate) use derived::lines_only;
pub(crate) use event_types::INTERNAL_EVENTS;
pub(crate) use facts::SpaceFacts;
pub(crate) use grouping::forest::{Mark, Marks};
pub(crate) use regions::add_regions_indexed;
pub(crate) use runtime::has_runtime_events;
#[cfg(test)]
pub(crate) use sort::insert_sorted as insert_sorted_for_tests;
pub(crate) use sort::{InsertPlan, insert_plan_of};

use grouping::tpu::group_tpu_plane_events;
use sort::sort_events_stable;
use tpu::is_tensor_core_plane;

/// Runs xprof's preprocessing, as far as profkit reproduces it (see the module documentation), on
/// a space in memory, in place, as xprof does before its tools read a space; returns what xprof
/// would also do that profkit does not reproduce (empty when the space is now what xprof's tools
/// would see, but for the `flow` stats, which the trace viewer computes as it writes: see
/// [`flows`]).
///
/// ```
/// use profkit_xplane::{PlaneBuilder, XPlane, XSpace};
/// let mut plane = XPlane::default();
/// let mut b = PlaneBuilder::new(&mut plane);
/// b.set_name("/host:CPU");
/// let mut line = b.line(1);
/// line.add_event("train").set_offset_ps(0).set_duration_ps(10).add_stat("_r", 1i64).add_stat("step_num", 7i64);
/// line.add_event("work").set_offset_ps(2).set_duration_ps(3);
/// let mut space = XSpace { planes: vec![plane], ..XSpace::default() };
/// assert!(profkit_xprof::preprocess::preprocess(&mut space).is_empty());
/// let plane = &space.planes[0];
/// let names: Vec<&str> = plane.stat_metadata.values().map(|m| m.name.as_str()).collect();
/// assert!(names.contains(&"group_id") && names.contains(&"step_name"));
/// ```
pub fn preprocess(space: &mut XSpace) -> Vec<&'static str> {
    preprocess_with(space, true)
}

/// [`preprocess`], with or without xprof's derived timelines (the `Steps`, `XLA Modules`, `XLA
/// Ops`, name scope and launch stats lines): OpStats reads no derived line, so it skips them.
pub(crate) fn preprocess_with(space: &mut XSpace, derived_timelines: bool) -> Vec<&'static str> {
    preprocess_space(space, derived_timelines, false).unreproduced()
}

/// [`preprocess_with`], leaving what grouping gives the events of the host threads' plane
/// (`/host:CPU`) out of it when `host_marks_aside`: the returned facts' [`host_marks`] give them
/// event by event (OpStats reads them so, without a stat more per event of the largest plane).
pub(crate) fn preprocess_space(
    space: &mut XSpace,
    derived_timelines: bool,
    host_marks_aside: bool,
) -> SpaceFacts {
    preprocess_space_indexed(space, derived_timelines, host_marks_aside, None, true)
}

/// [`preprocess_space`] of a space whose plane number `host.0` (the host threads', its marks
/// kept aside) is indexed (`host.1`), its place among the planes taken by its shadow. Its bytes
/// are let go of while the forest groups when they can be read again (`IndexedPlane::release`):
/// the caller then reads them again.
pub(crate) fn preprocess_space_indexed(
    space: &mut XSpace,
    derived_timelines: bool,
    host_marks_aside: bool,
    mut host: Option<(usize, &mut crate::indexed::IndexedPlane)>,
    lines_on_pool: bool,
) -> SpaceFacts {
    // Whether the space is preprocessed at all, from the planes' names alone.
    let mut probe = SpaceFacts::default();
    for plane in &space.planes {
        probe.observe_names(
            &plane.name,
            plane.event_metadata.values().map(|m| m.name.as_str()),
            plane.stat_metadata.values().map(|m| m.name.as_str()),
        );
    }
    let mut facts = SpaceFacts {
        sequential_intake: !lines_on_pool,
        ..SpaceFacts::default()
    };
    let regions_in: Vec<bool> = if probe.preprocesses() {
        // The regions go in as the facts take each plane in (no copy of the plane), and are
        // not added again below.
        let mut regions_in = Vec::with_capacity(space.planes.len());
        for (index, plane) in space.planes.iter_mut().enumerate() {
            regions_in.push(match host.as_mut() {
                Some((at, indexed)) if *at == index => facts.observe_indexed(indexed),
                _ => facts.observe_mut(plane),
            });
        }
        regions_in
    } else {
        // Nothing will be preprocessed: the planes stay as they are.
        for (index, plane) in space.planes.iter().enumerate() {
            match host.as_mut() {
                // Its events would go into the forest only to be dropped: not grouped.
                Some((at, indexed)) if *at == index => facts.observe_shadow(indexed.shadow()),
                _ => facts.observe(plane),
            }
        }
        vec![false; space.planes.len()]
    };
    // Grouping reads the forest alone: the indexed plane's bytes may go meanwhile (when they can
    // be read again; the caller restores them).
    if let Some((_, indexed)) = host.as_mut() {
        indexed.release();
    }
    facts.finish();
    for ((index, plane), regions_in) in space.planes.iter_mut().enumerate().zip(regions_in) {
        let materialise = !(host_marks_aside && plane.name == HOST_PLANE_NAME);
        if derived_timelines {
            preprocess_plane_with(plane, index, &facts, materialise, !regions_in);
        } else {
            group_plane(plane, index, &facts, !regions_in, materialise);
        }
    }
    facts
}

/// What grouping gave the events of plane number `index` (in line and event order), when
/// [`preprocess_space`] left it out of the plane: the host threads' plane with
/// `host_marks_aside`. `None` when the space is not grouped.
pub(crate) fn host_marks(facts: &SpaceFacts, index: usize) -> Option<Marks<'_>> {
    if !facts.groups() {
        return None;
    }
    facts.forest.marks(index)
}

/// Changes a plane as xprof's preprocessing would before its trace viewer reads it (see the
/// module documentation). `facts` must come from a pass over the whole space
/// ([`SpaceFacts::finish`] called), and `index` is the plane's position in the space. Unless
/// `materialise`, the stats grouping gives the events are written into the plane only where
/// preprocessing reads them again (device planes of a TPU space, GPU planes with steps or derived
/// lines); elsewhere [`event_marks`] gives them, event by event, saving a stat per event.
pub(crate) fn preprocess_plane(
    plane: &mut XPlane,
    index: usize,
    facts: &SpaceFacts,
    materialise: bool,
) {
    preprocess_plane_with(plane, index, facts, materialise, true);
}

/// [`preprocess_plane`], adding the plane's regions only when `add_regions` (not when
/// [`SpaceFacts::observe_mut`] already put them into this plane).
fn preprocess_plane_with(
    plane: &mut XPlane,
    index: usize,
    facts: &SpaceFacts,
    materialise: bool,
    add_regions: bool,
) {
    if !facts.preprocesses() {
        return;
    }
    // `PreprocessXPlane` (before grouping, loop ops or not).
    if add_regions {
        regions::add_regions(plane);
    }
    runtime::fix_run_ids(plane);
    if facts.groups() && (materialise || marks_in_place(plane, index, facts)) {
        facts.forest.apply(index, plane);
    }
    if facts.groups() && facts.tpu && plane.name.starts_with("/device:") {
        group_tpu_plane_events(plane, facts);
    }
    // `GenerateDerivedTimeLines`, in xprof's order: on GPU planes the group of ungrouped events
    // and the `Steps` line first, then the lines derived from device annotations (GPU and
    // TensorCore planes).
    derived::derive_timelines(plane, &facts.symbols, &facts.forest.names);
    // `DeriveEventsFromHostTrace`, after the lines derived from annotations.
    let (launches, host_start_ns) = launches_on(&plane.name, index, facts);
    launch_stats::add_launch_stats(plane, &launches, host_start_ns, &facts.forest.names);
    if is_tensor_core_plane(&plane.name) {
        plane.lines.retain(|l| !l.events.is_empty());
        for line in &mut plane.lines {
            sort_events_stable(line);
        }
    }
}

/// What [`preprocess_plane`] does before it derives timelines: regions, the TPU runtime's run
/// ids, the grouping's stats written into the plane.
fn group_plane(
    plane: &mut XPlane,
    index: usize,
    facts: &SpaceFacts,
    add_regions: bool,
    materialise: bool,
) {
    if !facts.preprocesses() {
        return;
    }
    if add_regions {
        regions::add_regions(plane);
    }
    runtime::fix_run_ids(plane);
    if facts.groups() && (materialise || marks_in_place(plane, index, facts)) {
        facts.forest.apply(index, plane);
    }
    if facts.groups() && facts.tpu && plane.name.starts_with("/device:") {
        group_tpu_plane_events(plane, facts);
    }
}

/// The launch statistics of the groups that have a name, for a GPU plane (see `launch_stats`),
/// and the host's earliest line timestamp.
fn launches_on(
    name: &str,
    index: usize,
    facts: &SpaceFacts,
) -> (Vec<grouping::forest::LaunchStats>, i64) {
    if !facts.groups() || !name.starts_with(GPU_PLANE_PREFIX) {
        return (Vec::new(), 0);
    }
    let Some(device) = facts.gpu_planes.iter().position(|&i| i == index) else {
        return (Vec::new(), 0);
    };
    let (mut launches, start) = facts.forest.launch_stats(device, facts.gpu_planes.len());
    launches.retain(|l| facts.forest.names.contains_key(&l.group));
    (launches, start)
}

/// Whether [`preprocess_plane`] writes the grouping into plane number `index` whatever
/// `materialise` says (where preprocessing reads it again: device planes of a TPU space, and GPU
/// planes that get a `Steps` line or derived lines, whose events take their groups).
fn marks_in_place(plane: &XPlane, index: usize, facts: &SpaceFacts) -> bool {
    let name = &plane.name;
    (facts.tpu && name.starts_with("/device:"))
        || (name.starts_with(GPU_PLANE_PREFIX)
            && (gets_steps(name, index, facts) || derived::could_derive(plane)))
}

/// Whether grouping gives events of a GPU plane a group, so that xprof derives a `Steps` line on
/// it (also when its events had no `group_id` before).
fn gets_steps(name: &str, index: usize, facts: &SpaceFacts) -> bool {
    facts.groups() && name.starts_with(GPU_PLANE_PREFIX) && facts.forest.plane_grouped(index)
}

/// The stats grouping gives the events of a plane that [`preprocess_plane`] left out of it, in
/// the plane's line and event order; `None` when there are none to add.
pub(crate) fn event_marks<'a>(
    plane: &XPlane,
    index: usize,
    facts: &'a SpaceFacts,
) -> Option<Marks<'a>> {
    if !facts.groups() || marks_in_place(plane, index, facts) {
        return None;
    }
    facts.forest.marks(index)
}

/// The lines a plane keeps after [`preprocess_plane`], as (display id, display name), from a
/// copy of the plane's lines without events and, on planes with derived timelines (GPU and
/// TensorCore planes), the lines they show once derived (see [`SpaceFacts::derived_layout`]): for
/// the trace viewer's metadata, written before any event.
pub(crate) fn line_layout(
    lines: &XPlane,
    index: usize,
    derived: Option<&[(i64, String)]>,
    facts: &SpaceFacts,
) -> Vec<(i64, String)> {
    let mut out: Vec<(i64, String)> = match derived {
        Some(derived) if facts.preprocesses() => derived.to_vec(),
        _ => derived::shown_lines(lines),
    };
    // The `Steps` line of groups that grouping gives a GPU plane's events (the derived layout,
    // made from the plane as read, knows only the groups it had).
    if gets_steps(&lines.name, index, facts)
        && !out.iter().any(|(id, _)| *id == derived::STEP_LINE_ID)
    {
        out.push((derived::STEP_LINE_ID, derived::STEP_LINE_NAME.to_owned()));
    }
    if !launches_on(&lines.name, index, facts).0.is_empty() {
        out.push((
            launch_stats::LAUNCH_LINE_ID,
            launch_stats::LAUNCH_LINE_NAME.to_owned(),
        ));
    }
    out
}

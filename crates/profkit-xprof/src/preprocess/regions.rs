//! TSL's threadpool listener regions (`ThreadpoolLineMutator` in `PreprocessXPlane`).
//!
//! A thread of a pool that the profiler listens to records `ThreadpoolListener::StartRegion` and
//! `ThreadpoolListener::StopRegion` instants. Before grouping, xprof adds on each line a
//! `ThreadpoolListener::Region` event, without stats, from each start (that has a `_c` stat) to
//! every stop after it (a stop with no start before it on the line is skipped; one start serves
//! every stop until the next start), then sorts the line's events (by start, longer first, with
//! libstdc++'s unstable sort, as `SortXLine` does) when it added any. Planes without both event
//! metadata are left alone. The regions take part in grouping like any event: they nest the
//! events they span.

use profkit_xplane::{XEvent, XPlane, x_event};

use super::sort::insert_sorted;
use super::stats::{event_metadata_id, intern_event, stat_id};
use crate::indexed::IndexedPlane;

/// The instant starting a region.
pub(crate) const START_REGION: &str = "ThreadpoolListener::StartRegion";
/// The instant ending a region.
pub(crate) const STOP_REGION: &str = "ThreadpoolListener::StopRegion";
/// The event xprof makes of a region.
pub(crate) const REGION: &str = "ThreadpoolListener::Region";

/// Whether a plane with these event metadata names gets regions.
pub(crate) fn has_regions<'a>(mut event_names: impl Iterator<Item = &'a str> + Clone) -> bool {
    event_names.clone().any(|n| n == START_REGION) && event_names.any(|n| n == STOP_REGION)
}

/// Adds the regions of every line of the plane; returns how many it added.
pub(crate) fn add_regions(plane: &mut XPlane) -> usize {
    let Some((start, stop, region, consumer)) = region_ids(plane) else {
        return 0;
    };
    let mut added = 0;
    for line in &mut plane.lines {
        let events = line
            .events
            .iter()
            .map(|e| (e.metadata_id, e.offset_ps().unwrap_or(0), e));
        let has_consumer =
            |e: &&XEvent| consumer.is_some_and(|c| e.stats.iter().any(|s| s.metadata_id == c));
        let regions = regions_of(line.timestamp_ns, events, has_consumer, start, stop, region);
        added += regions.len();
        if !regions.is_empty() {
            insert_sorted(line, regions);
        }
    }
    added
}

/// [`add_regions`] on an indexed plane: the regions are kept beside its bytes, in their place in
/// each line's order.
pub(crate) fn add_regions_indexed(plane: &mut IndexedPlane) -> usize {
    let Some((start, stop, region, consumer)) = region_ids(plane.shadow_mut()) else {
        return 0;
    };
    // Each line's regions and their places, on the pool's threads for a big plane.
    let plane_ref = &*plane;
    let plan = |line: usize| -> Option<(Vec<XEvent>, crate::preprocess::InsertPlan)> {
        let (fields, events) = plane_ref.line(line)?;
        let events = events.map(|e| (e.metadata_id(), e.offset_ps(), e));
        let has_consumer = |e: &crate::indexed::Event<'_>| {
            consumer.is_some_and(|c| e.stats().any(|s| s.metadata_id == c))
        };
        let regions = regions_of(
            fields.timestamp_ns,
            events,
            has_consumer,
            start,
            stop,
            region,
        );
        if regions.is_empty() {
            return None;
        }
        let order = plane_ref.insert_order(line, &regions);
        Some((regions, order))
    };
    let plans: Vec<Option<(Vec<XEvent>, crate::preprocess::InsertPlan)>> =
        if plane.event_count() >= PARALLEL_EVENTS && rayon::current_num_threads() > 1 {
            use rayon::prelude::*;
            (0..plane.line_count()).into_par_iter().map(plan).collect()
        } else {
            (0..plane.line_count()).map(plan).collect()
        };
    let mut added = 0;
    for (line, plan) in plans.into_iter().enumerate() {
        if let Some((regions, order)) = plan {
            added += regions.len();
            plane.insert(line, regions, order);
        }
    }
    added
}

/// The events from which the lines' regions are found on the pool's threads.
const PARALLEL_EVENTS: usize = 50_000;

/// The ids of the start and stop instants, of the region event (interned) and of the `_c` stat,
/// when the plane has both instants.
fn region_ids(plane: &mut XPlane) -> Option<(i64, i64, i64, Option<i64>)> {
    let (Some(start), Some(stop)) = (
        event_metadata_id(plane, START_REGION),
        event_metadata_id(plane, STOP_REGION),
    ) else {
        return None;
    };
    let region = intern_event(plane, REGION);
    Some((start, stop, region, stat_id(plane, "_c")))
}

/// The regions of one line from its events as (metadata id, offset, event), `has_consumer`
/// saying whether a start has a `_c` stat (asked of starts only).
fn regions_of<E>(
    timestamp_ns: i64,
    events: impl Iterator<Item = (i64, i64, E)>,
    has_consumer: impl Fn(&E) -> bool,
    start: i64,
    stop: i64,
    region: i64,
) -> Vec<XEvent> {
    let base_ps = timestamp_ns.wrapping_mul(1000);
    let mut start_ps: i64 = 0;
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for (metadata_id, offset_ps, event) in events {
        let at = base_ps.wrapping_add(offset_ps);
        if metadata_id == start {
            if has_consumer(&event) {
                start_ps = at;
            }
        } else if metadata_id == stop && start_ps != 0 {
            spans.push((start_ps, at));
        }
    }
    spans
        .into_iter()
        .map(|(from, to)| XEvent {
            metadata_id: region,
            data: Some(x_event::Data::OffsetPs(from.wrapping_sub(base_ps))),
            duration_ps: to.wrapping_sub(from),
            stats: Vec::new(),
        })
        .collect()
}

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
    let (Some(start), Some(stop)) = (
        event_metadata_id(plane, START_REGION),
        event_metadata_id(plane, STOP_REGION),
    ) else {
        return 0;
    };
    let region = intern_event(plane, REGION);
    let consumer = stat_id(plane, "_c");
    let mut added = 0;
    for line in &mut plane.lines {
        let base_ps = line.timestamp_ns.wrapping_mul(1000);
        let mut start_ps: i64 = 0;
        let mut spans: Vec<(i64, i64)> = Vec::new();
        for event in &line.events {
            let at = base_ps.wrapping_add(event.offset_ps().unwrap_or(0));
            if event.metadata_id == start {
                if consumer.is_some_and(|c| event.stats.iter().any(|s| s.metadata_id == c)) {
                    start_ps = at;
                }
            } else if event.metadata_id == stop && start_ps != 0 {
                spans.push((start_ps, at));
            }
        }
        if spans.is_empty() {
            continue;
        }
        added += spans.len();
        let regions = spans
            .into_iter()
            .map(|(from, to)| XEvent {
                metadata_id: region,
                data: Some(x_event::Data::OffsetPs(from.wrapping_sub(base_ps))),
                duration_ps: to.wrapping_sub(from),
                stats: Vec::new(),
            })
            .collect();
        insert_sorted(line, regions);
    }
    added
}

//! A short description of an XSpace: what `profkit inspect` prints.

use std::collections::HashMap;

use serde::Serialize;

use crate::proto::{XPlane, XSpace};
use crate::visitor::{PlaneViewVisitor, PlaneVisitor};
use crate::xview::{SpaceItemView, XPlaneView, XSpaceView};

/// How many event names [`Summary`] lists per plane.
pub const TOP_EVENT_NAMES: usize = 10;

/// Counts, time span and busiest event names of a space.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Hostnames recorded in the space.
    pub hostnames: Vec<String>,
    /// Number of errors recorded in the space.
    pub errors: usize,
    /// Number of warnings recorded in the space.
    pub warnings: usize,
    /// Planes, in file order.
    pub planes: Vec<PlaneSummary>,
    /// Total lines over all planes.
    pub total_lines: usize,
    /// Total events over all planes.
    pub total_events: usize,
}

/// One plane of a [`Summary`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PlaneSummary {
    /// Plane id.
    pub id: i64,
    /// Plane name.
    pub name: String,
    /// Number of lines.
    pub lines: usize,
    /// Number of events.
    pub events: usize,
    /// Number of event metadata entries.
    pub event_metadata: usize,
    /// Number of stat metadata entries.
    pub stat_metadata: usize,
    /// Number of plane stats.
    pub stats: usize,
    /// Earliest start of a timed event, in picoseconds (absent without timed events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ps: Option<i128>,
    /// Latest end of a timed event, in picoseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_ps: Option<i128>,
    /// The event names with the largest total duration, largest first (ties by name).
    pub top_events: Vec<EventNameSummary>,
}

/// Occurrences and total time of events sharing a (display) name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EventNameSummary {
    /// The event's display name.
    pub name: String,
    /// Number of occurrences (an aggregated event counts its `num_occurrences`).
    pub count: u64,
    /// Sum of durations in picoseconds.
    pub total_duration_ps: i128,
}

impl Summary {
    /// Summarises `space`.
    pub fn of(space: &XSpace) -> Summary {
        let mut summary = Summary {
            hostnames: space.hostnames.clone(),
            errors: space.errors.len(),
            warnings: space.warnings.len(),
            ..Default::default()
        };
        for plane in &space.planes {
            summary.add_plane(plane);
        }
        summary
    }

    /// Adds one plane (so a streamed space can be summarised plane by plane).
    pub fn add_plane(&mut self, plane: &XPlane) {
        let p = PlaneSummary::of(plane);
        self.total_lines += p.lines;
        self.total_events += p.events;
        self.planes.push(p);
    }

    /// Adds one plane through its view, without building it; an encoding error is returned.
    pub fn add_plane_view(&mut self, plane: &XPlaneView<'_>) -> crate::Result<()> {
        let p = PlaneSummary::of_view(plane)?;
        self.total_lines += p.lines;
        self.total_events += p.events;
        self.planes.push(p);
        Ok(())
    }

    /// Summarises a viewed space, walking it once.
    pub fn of_view(space: &XSpaceView<'_>) -> crate::Result<Summary> {
        let mut summary = Summary::default();
        for item in space.items() {
            match item? {
                SpaceItemView::Plane(plane) => summary.add_plane_view(&plane)?,
                SpaceItemView::Hostname(h) => summary.hostnames.push(h.to_owned()),
                SpaceItemView::Error(_) => summary.errors += 1,
                SpaceItemView::Warning(_) => summary.warnings += 1,
            }
        }
        Ok(summary)
    }

    /// Earliest start over all planes, in picoseconds.
    pub fn start_ps(&self) -> Option<i128> {
        self.planes.iter().filter_map(|p| p.start_ps).min()
    }

    /// Latest end over all planes, in picoseconds.
    pub fn end_ps(&self) -> Option<i128> {
        self.planes.iter().filter_map(|p| p.end_ps).max()
    }
}

impl PlaneSummary {
    /// Summarises one plane.
    pub fn of(plane: &XPlane) -> PlaneSummary {
        let visitor = PlaneVisitor::new(plane);
        let mut tally = Tally::default();
        for line in visitor.lines() {
            for event in line.events() {
                tally.add(
                    event.display_name(),
                    event.num_occurrences(),
                    (event.timestamp_ps(), event.end_timestamp_ps()),
                    event.duration_ps(),
                );
            }
        }
        PlaneSummary {
            id: plane.id,
            name: plane.name.clone(),
            lines: plane.lines.len(),
            events: tally.events,
            event_metadata: plane.event_metadata.len(),
            stat_metadata: plane.stat_metadata.len(),
            stats: plane.stats.len(),
            start_ps: tally.span.map(|s| s.0),
            end_ps: tally.span.map(|s| s.1),
            top_events: top_events(tally.totals),
        }
    }

    /// Summarises one plane through its view, without building it.
    pub fn of_view(plane: &XPlaneView<'_>) -> crate::Result<PlaneSummary> {
        let visitor = PlaneViewVisitor::new(plane)?;
        // Totals by metadata id first (one name lookup per id, not per event), then by name.
        let mut tally = Tally::default();
        for line in visitor.lines() {
            for event in line?.events() {
                let event = event?;
                tally.add(
                    event.metadata_id(),
                    event.num_occurrences(),
                    (event.timestamp_ps(), event.end_timestamp_ps()),
                    event.duration_ps(),
                );
            }
        }
        let mut by_name: HashMap<&str, (u64, i128)> = HashMap::new();
        for (id, (count, total)) in tally.totals {
            let name = visitor
                .event_metadata(id)
                .map_or("", |md| md.display_name());
            let entry = by_name.entry(name).or_default();
            entry.0 = entry.0.saturating_add(count);
            entry.1 += total;
        }
        let metadata = visitor.plane_metadata();
        Ok(PlaneSummary {
            id: plane.id(),
            name: plane.name().to_owned(),
            lines: plane.line_count(),
            events: tally.events,
            event_metadata: metadata.events().len(),
            stat_metadata: metadata.stats().len(),
            stats: plane.stat_count(),
            start_ps: tally.span.map(|s| s.0),
            end_ps: tally.span.map(|s| s.1),
            top_events: top_events(by_name),
        })
    }
}

/// Events counted, their span, and occurrences and total time by `K` (a name or a metadata id).
struct Tally<K> {
    totals: HashMap<K, (u64, i128)>,
    events: usize,
    span: Option<(i128, i128)>,
}

impl<K> Default for Tally<K> {
    fn default() -> Self {
        Tally {
            totals: HashMap::new(),
            events: 0,
            span: None,
        }
    }
}

impl<K: std::hash::Hash + Eq> Tally<K> {
    /// Counts one event: an aggregated one (`num_occurrences` set) counts its occurrences and
    /// has no place in time; a timed one counts once and widens the span.
    fn add(
        &mut self,
        key: K,
        num_occurrences: Option<i64>,
        (start, end): (i128, i128),
        duration_ps: i64,
    ) {
        self.events += 1;
        let count = match num_occurrences {
            Some(n) => u64::try_from(n).unwrap_or(0),
            None => {
                self.span = Some(
                    self.span
                        .map_or((start, end), |(s, e)| (s.min(start), e.max(end))),
                );
                1
            }
        };
        let entry = self.totals.entry(key).or_default();
        // Counts come from the file: three of `i64::MAX` already overflow.
        entry.0 = entry.0.saturating_add(count);
        entry.1 += i128::from(duration_ps);
    }
}

/// The [`TOP_EVENT_NAMES`] names with the largest total duration.
fn top_events(by_name: HashMap<&str, (u64, i128)>) -> Vec<EventNameSummary> {
    let mut top: Vec<EventNameSummary> = by_name
        .into_iter()
        .map(|(name, (count, total))| EventNameSummary {
            name: name.to_owned(),
            count,
            total_duration_ps: total,
        })
        .collect();
    top.sort_by(|a, b| {
        b.total_duration_ps
            .cmp(&a.total_duration_ps)
            .then(b.count.cmp(&a.count))
            .then_with(|| a.name.cmp(&b.name))
    });
    top.truncate(TOP_EVENT_NAMES);
    top
}

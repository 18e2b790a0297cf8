//! A short description of an XSpace: what `profkit inspect` prints.

use std::collections::HashMap;

use serde::Serialize;

use crate::line_role::{LINE_ROLES, LineRole, line_role};
use crate::proto::{XPlane, XSpace};
use crate::utils::SelfTimer;
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
    /// The plane's position in `XSpace.planes`, from 0 (JAX gives every plane id 0).
    pub index: usize,
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
    /// Lines by [`LineRole`], in the order of the enum (roles without lines left out); in JSON
    /// an object from role names to counts.
    #[serde(serialize_with = "roles_as_map")]
    pub line_roles: Vec<(LineRole, usize)>,
    /// Whether [`PlaneSummary::top_events`] counts only the lines that hold the device's ops
    /// ([`LineRole::holds_device_ops`]; a device plane holds the same time in several lines, so
    /// counting all of them would count it several times). False when the plane has no such
    /// line: then every line counts.
    pub top_events_device_ops: bool,
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
    /// Sum of self (exclusive) times in picoseconds: each event's duration less the events
    /// directly inside it on its line ([`crate::utils::self_times`]); an aggregated event's is
    /// its duration.
    pub self_duration_ps: i128,
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
        let mut p = PlaneSummary::of(plane);
        p.index = self.planes.len();
        self.total_lines += p.lines;
        self.total_events += p.events;
        self.planes.push(p);
    }

    /// Adds one plane through its view, without building it; an encoding error is returned.
    pub fn add_plane_view(&mut self, plane: &XPlaneView<'_>) -> crate::Result<()> {
        let mut p = PlaneSummary::of_view(plane)?;
        p.index = self.planes.len();
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
    /// Summarises one plane (its index is 0: [`Summary::add_plane`] sets it).
    pub fn of(plane: &XPlane) -> PlaneSummary {
        let visitor = PlaneVisitor::new(plane);
        let roles: Vec<LineRole> = visitor
            .lines()
            .map(|l| line_role(&plane.name, l.name()))
            .collect();
        let device_ops = roles.iter().any(|r| r.holds_device_ops());
        let mut tally = Tally::default();
        let mut events = Vec::new();
        for (line, role) in visitor.lines().zip(&roles) {
            events.clear();
            events.extend(line.events().map(|event| {
                let timed = event.num_occurrences().is_none();
                let span = (event.timestamp_ps(), event.end_timestamp_ps());
                (event, timed.then_some((span.0, event.duration_ps())), span)
            }));
            let spans: Vec<_> = events.iter().map(|e| e.1).collect();
            let selfs = crate::utils::self_times(&spans);
            for ((event, _, span), self_ps) in events.iter().zip(selfs) {
                tally.add(
                    event.display_name(),
                    event.num_occurrences(),
                    *span,
                    (event.duration_ps(), self_ps.unwrap_or(event.duration_ps())),
                    !device_ops || role.holds_device_ops(),
                );
            }
        }
        PlaneSummary {
            index: 0,
            id: plane.id,
            name: plane.name.clone(),
            lines: plane.lines.len(),
            events: tally.events,
            event_metadata: plane.event_metadata.len(),
            stat_metadata: plane.stat_metadata.len(),
            stats: plane.stats.len(),
            start_ps: tally.span.map(|s| s.0),
            end_ps: tally.span.map(|s| s.1),
            line_roles: count_roles(&roles),
            top_events_device_ops: device_ops,
            top_events: top_events(tally.totals),
        }
    }

    /// Summarises one plane through its view, without building it (its index is 0:
    /// [`Summary::add_plane_view`] sets it).
    pub fn of_view(plane: &XPlaneView<'_>) -> crate::Result<PlaneSummary> {
        let visitor = PlaneViewVisitor::new(plane)?;
        let mut roles = Vec::with_capacity(plane.line_count());
        for line in visitor.lines() {
            roles.push(line_role(plane.name(), line?.name()));
        }
        let device_ops = roles.iter().any(|r| r.holds_device_ops());
        // Totals by metadata id first (one name lookup per id, not per event), then by name.
        let mut tally = Tally::default();
        let mut events = Vec::new();
        let mut spans = Vec::new();
        let mut timer = SelfTimer::new();
        for (line, role) in visitor.lines().zip(&roles) {
            let line = line?;
            let ranked = !device_ops || role.holds_device_ops();
            // A line in order (as profilers write them) is timed as it streams, in memory the
            // depth of its nesting; one out of order is held and sorted.
            let mut in_order = true;
            let mut last: Option<(i128, i64)> = None;
            for event in line.events() {
                let event = event?;
                if event.num_occurrences().is_some() {
                    continue;
                }
                let key = (event.timestamp_ps(), event.duration_ps().max(0));
                if last.is_some_and(|(s, d)| key.0 < s || (key.0 == s && key.1 > d)) {
                    in_order = false;
                    break;
                }
                last = Some(key);
            }
            if in_order {
                for event in line.events() {
                    let event = event?;
                    let span = (event.timestamp_ps(), event.end_timestamp_ps());
                    let (id, duration) = (event.metadata_id(), event.duration_ps());
                    let occurrences = event.num_occurrences();
                    if occurrences.is_some() {
                        tally.add(id, occurrences, span, (duration, duration), ranked);
                        continue;
                    }
                    timer.push(
                        span.0,
                        duration,
                        (id, span, duration),
                        |(id, span, d), t| tally.add(id, None, span, (d, t), ranked),
                    );
                }
                timer.finish(|(id, span, d), t| tally.add(id, None, span, (d, t), ranked));
                continue;
            }
            events.clear();
            spans.clear();
            for event in line.events() {
                let event = event?;
                let span = (event.timestamp_ps(), event.end_timestamp_ps());
                let occurrences = event.num_occurrences();
                spans.push(
                    occurrences
                        .is_none()
                        .then_some((span.0, event.duration_ps())),
                );
                events.push((event.metadata_id(), occurrences, span, event.duration_ps()));
            }
            let selfs = crate::utils::self_times(&spans);
            for (&(id, occurrences, span, duration), self_ps) in events.iter().zip(selfs) {
                tally.add(
                    id,
                    occurrences,
                    span,
                    (duration, self_ps.unwrap_or(duration)),
                    ranked,
                );
            }
        }
        let mut by_name: HashMap<&str, Totals> = HashMap::new();
        for (id, totals) in tally.totals {
            let name = visitor
                .event_metadata(id)
                .map_or("", |md| md.display_name());
            let entry = by_name.entry(name).or_default();
            entry.count = entry.count.saturating_add(totals.count);
            entry.total += totals.total;
            entry.self_total += totals.self_total;
        }
        let metadata = visitor.plane_metadata();
        Ok(PlaneSummary {
            index: 0,
            id: plane.id(),
            name: plane.name().to_owned(),
            lines: plane.line_count(),
            events: tally.events,
            event_metadata: metadata.events().len(),
            stat_metadata: metadata.stats().len(),
            stats: plane.stat_count(),
            start_ps: tally.span.map(|s| s.0),
            end_ps: tally.span.map(|s| s.1),
            line_roles: count_roles(&roles),
            top_events_device_ops: device_ops,
            top_events: top_events(by_name),
        })
    }
}

fn roles_as_map<S: serde::Serializer>(
    roles: &[(LineRole, usize)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(roles.len()))?;
    for (role, n) in roles {
        map.serialize_entry(role.as_str(), n)?;
    }
    map.end()
}

/// Lines by role, in the order of the enum.
fn count_roles(roles: &[LineRole]) -> Vec<(LineRole, usize)> {
    LINE_ROLES
        .iter()
        .map(|&r| (r, roles.iter().filter(|&&x| x == r).count()))
        .filter(|&(_, n)| n > 0)
        .collect()
}

/// Occurrences, total and self time of one name.
#[derive(Clone, Copy, Default)]
struct Totals {
    count: u64,
    total: i128,
    self_total: i128,
}

/// Events counted, their span, and occurrences and total time by `K` (a name or a metadata id).
struct Tally<K> {
    totals: HashMap<K, Totals>,
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
    /// has no place in time; a timed one counts once and widens the span. Its name's totals
    /// count it only when `ranked` (it is on a line the top events count).
    fn add(
        &mut self,
        key: K,
        num_occurrences: Option<i64>,
        (start, end): (i128, i128),
        (duration_ps, self_ps): (i64, i64),
        ranked: bool,
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
        if !ranked {
            return;
        }
        let entry = self.totals.entry(key).or_default();
        // Counts come from the file: three of `i64::MAX` already overflow.
        entry.count = entry.count.saturating_add(count);
        entry.total += i128::from(duration_ps);
        entry.self_total += i128::from(self_ps);
    }
}

/// The [`TOP_EVENT_NAMES`] names with the largest total duration.
fn top_events(by_name: HashMap<&str, Totals>) -> Vec<EventNameSummary> {
    let mut top: Vec<EventNameSummary> = by_name
        .into_iter()
        .map(|(name, t)| EventNameSummary {
            name: name.to_owned(),
            count: t.count,
            total_duration_ps: t.total,
            self_duration_ps: t.self_total,
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

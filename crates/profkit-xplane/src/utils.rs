//! Space and plane utilities with the semantics of TSL's `xplane_utils`.

use crate::builder::{PlaneBuilder, StatValue};
use crate::proto::{XLine, XPlane, XSpace, x_event};
use crate::visitor::PlaneVisitor;

/// The first plane named exactly `name`.
pub fn find_plane_with_name<'a>(space: &'a XSpace, name: &str) -> Option<&'a XPlane> {
    space.planes.iter().find(|p| p.name == name)
}

/// The first plane named exactly `name`, mutably.
pub fn find_mut_plane_with_name<'a>(space: &'a mut XSpace, name: &str) -> Option<&'a mut XPlane> {
    space.planes.iter_mut().find(|p| p.name == name)
}

/// The plane named `name`, appended (with id = its index, as TSL does) if missing.
pub fn find_or_add_plane_with_name<'a>(space: &'a mut XSpace, name: &str) -> &'a mut XPlane {
    let index = match space.planes.iter().position(|p| p.name == name) {
        Some(index) => index,
        None => {
            let id = space.planes.len() as i64;
            space.planes.push(XPlane {
                id,
                name: name.to_owned(),
                ..Default::default()
            });
            space.planes.len() - 1
        }
    };
    &mut space.planes[index]
}

/// Every plane whose name starts with `prefix`, in file order.
pub fn find_planes_with_prefix<'a>(space: &'a XSpace, prefix: &str) -> Vec<&'a XPlane> {
    space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(prefix))
        .collect()
}

/// Every plane whose name starts with `prefix`, mutably.
pub fn find_mut_planes_with_prefix<'a>(space: &'a mut XSpace, prefix: &str) -> Vec<&'a mut XPlane> {
    space
        .planes
        .iter_mut()
        .filter(|p| p.name.starts_with(prefix))
        .collect()
}

/// The first line of `plane` with `id`.
pub fn find_line_with_id(plane: &XPlane, id: i64) -> Option<&XLine> {
    plane.lines.iter().find(|l| l.id == id)
}

/// The first line of `plane` named `name`.
pub fn find_line_with_name<'a>(plane: &'a XPlane, name: &str) -> Option<&'a XLine> {
    plane.lines.iter().find(|l| l.name == name)
}

/// Removes planes without lines.
pub fn remove_empty_planes(space: &mut XSpace) {
    space.planes.retain(|p| !p.lines.is_empty());
}

/// Removes lines without events.
pub fn remove_empty_lines(plane: &mut XPlane) {
    plane.lines.retain(|l| !l.events.is_empty());
}

fn event_start(line: &XLine, event: &crate::XEvent) -> i128 {
    i128::from(line.timestamp_ns) * 1000 + i128::from(event.offset_ps().unwrap_or(0))
}

/// Sorts the events of a line by start ascending, then duration descending, so that a parent
/// comes before the children it contains. The sort is stable.
pub fn sort_line_events(line: &mut XLine) {
    line.events
        .sort_by_key(|e| (e.offset_ps().unwrap_or(0), std::cmp::Reverse(e.duration_ps)));
}

/// Sorts the events of every line of `plane`.
pub fn sort_plane(plane: &mut XPlane) {
    plane.lines.iter_mut().for_each(sort_line_events);
}

/// Sorts the events of every line of every plane.
pub fn sort_space(space: &mut XSpace) {
    space.planes.iter_mut().for_each(sort_plane);
}

/// Sorts the lines of `plane` by id (TSL's line ordering for display).
pub fn sort_lines_by_id(plane: &mut XPlane) {
    plane.lines.sort_by_key(|l| l.id);
}

/// Makes line timestamps relative to `start_time_ns`: every line whose timestamp is at or after
/// it has it subtracted (TSL's `NormalizeTimestamps`). Lines before it, such as the counter line
/// at 0, are left as they are. The difference saturates (a negative start can push it past
/// `i64::MAX`) rather than overflowing.
pub fn normalize_timestamps(plane: &mut XPlane, start_time_ns: i64) {
    for line in &mut plane.lines {
        if line.timestamp_ns >= start_time_ns {
            line.timestamp_ns = line.timestamp_ns.saturating_sub(start_time_ns);
        }
    }
}

/// [`normalize_timestamps`] on every plane.
pub fn normalize_space_timestamps(space: &mut XSpace, start_time_ns: i64) {
    for plane in &mut space.planes {
        normalize_timestamps(plane, start_time_ns);
    }
}

/// Makes session-relative line timestamps absolute again by adding `start_time_ns` to every line
/// except the counter line (whose events carry absolute offsets from 0). The sum saturates rather
/// than wrapping.
pub fn denormalize_timestamps(plane: &mut XPlane, start_time_ns: i64) {
    for line in &mut plane.lines {
        if line.id != crate::constants::COUNTERS_LINE_ID {
            line.timestamp_ns = line.timestamp_ns.saturating_add(start_time_ns);
        }
    }
}

/// [`denormalize_timestamps`] on every plane.
pub fn denormalize_space_timestamps(space: &mut XSpace, start_time_ns: i64) {
    for plane in &mut space.planes {
        denormalize_timestamps(plane, start_time_ns);
    }
}

/// The earliest start and latest end, in picoseconds, of all timed (non-aggregated) events of
/// `plane`; `None` for a plane without such events.
pub fn plane_time_span_ps(plane: &XPlane) -> Option<(i128, i128)> {
    let mut span: Option<(i128, i128)> = None;
    for line in &plane.lines {
        for event in &line.events {
            if event.num_occurrences().is_some() {
                continue;
            }
            let start = event_start(line, event);
            let end = start + i128::from(event.duration_ps);
            span = Some(match span {
                None => (start, end),
                Some((s, e)) => (s.min(start), e.max(end)),
            });
        }
    }
    span
}

/// Merges `src` into `dst` as TSL's `MergePlanes` does:
/// - plane stats are copied by stat name, replacing a stat of the same name;
/// - each source line goes to the destination line with the same id; an empty destination line
///   takes the source line's timestamp and names, otherwise both are rebased to the earlier
///   timestamp and the destination keeps its names where set;
/// - event and stat metadata are re-interned by name (ref values too), so ids never clash; an
///   event or stat whose metadata id resolves to nothing is interned under the empty name.
///
/// Empty destination lines are removed first, as TSL does. Beyond TSL, event metadata children
/// are carried over (re-interned by name), and stats without a value are dropped, as xprof
/// drops them.
pub fn merge_planes(src: &XPlane, dst: &mut XPlane) {
    remove_empty_lines(dst);
    let src_visitor = PlaneVisitor::new(src);
    let mut builder = PlaneBuilder::new(dst);

    for stat in src_visitor.stats() {
        if let Some(value) = stat.value() {
            builder.set_or_add_stat(stat.name(), value.to_owned_value());
        }
    }

    // Event metadata by source id -> destination id, copied once.
    let mut metadata_ids = std::collections::HashMap::new();
    for line in src_visitor.lines() {
        for event in line.events() {
            if metadata_ids.contains_key(&event.metadata_id()) {
                continue;
            }
            let dst_id = copy_event_metadata(&src_visitor, event.metadata_id(), &mut builder);
            metadata_ids.insert(event.metadata_id(), dst_id);
        }
    }

    for line in src_visitor.lines() {
        let mut dst_line = builder.line(line.id());
        let mut time_offset_ps: i128 = 0;
        if dst_line.num_events() == 0 {
            dst_line
                .set_timestamp_ns(line.timestamp_ns())
                .set_name(line.name());
            // TSL's `SetDisplayNameIfEmpty(line.DisplayName())`: the source's display name, or
            // its name when it has none.
            if dst_line.line().display_name.is_empty() {
                dst_line.set_display_name(line.display_name());
            }
        } else {
            if line.timestamp_ns() <= dst_line.line().timestamp_ns {
                dst_line.set_timestamp_ns_and_adjust_event_offsets(line.timestamp_ns());
            } else {
                time_offset_ps = (i128::from(line.timestamp_ns())
                    - i128::from(dst_line.line().timestamp_ns))
                    * 1000;
            }
            if dst_line.line().name.is_empty() {
                dst_line.set_name(line.name());
            }
        }
        for event in line.events() {
            let metadata_id = metadata_ids
                .get(&event.metadata_id())
                .copied()
                .unwrap_or(event.metadata_id());
            let mut dst_event = dst_line.add_event_with_metadata_id(metadata_id);
            match event.num_occurrences() {
                Some(count) => {
                    dst_event.set_num_occurrences(count);
                }
                None => {
                    let offset = i128::from(event.offset_ps()) + time_offset_ps;
                    dst_event.set_offset_ps(i64::try_from(offset).unwrap_or(if offset < 0 {
                        i64::MIN
                    } else {
                        i64::MAX
                    }));
                }
            }
            dst_event.set_duration_ps(event.duration_ps());
            for stat in event.stats() {
                if let Some(value) = stat.value() {
                    dst_event.add_stat(stat.name(), value.to_owned_value());
                }
            }
        }
    }
}

/// Interns the source event metadata `src_id` into the destination by name and fills what the
/// destination lacks (display name, metadata bytes, stats, children), as TSL's `CopyEventMetadata`.
fn copy_event_metadata(src: &PlaneVisitor<'_>, src_id: i64, dst: &mut PlaneBuilder<'_>) -> i64 {
    let Some(md) = src.event_metadata(src_id) else {
        // As in TSL, an id that resolves to nothing is interned by its (empty) name: keeping the
        // source id could make it resolve to an unrelated destination metadata.
        return dst.event_metadata_id("");
    };
    let dst_id = dst.event_metadata_id(md.name());
    let children: Vec<i64> = md
        .children()
        .map(|child| dst.event_metadata_id(child.name()))
        .collect();
    let stats: Vec<(String, StatValue)> = md
        .stats()
        .filter_map(|s| s.value().map(|v| (s.name().to_owned(), v.to_owned_value())))
        .collect();
    if let Some(mut out) = dst.event_metadata(dst_id) {
        let raw = md.raw();
        let (has_display, has_bytes, has_stats, has_children) = {
            let existing = out.metadata();
            (
                !existing.display_name.is_empty(),
                !existing.metadata.is_empty(),
                !existing.stats.is_empty(),
                !existing.child_id.is_empty(),
            )
        };
        if !has_display && !raw.display_name.is_empty() {
            out.set_display_name(raw.display_name.clone());
        }
        if !has_bytes && !raw.metadata.is_empty() {
            out.set_metadata(raw.metadata.clone());
        }
        if !has_stats {
            for (name, value) in stats {
                out.add_stat(&name, value);
            }
        }
        if !has_children {
            for child in children {
                out.add_child(child);
            }
        }
    }
    dst_id
}

/// Merges several planes into one new plane with the given id and name.
pub fn merge_all_planes<'a>(
    planes: impl IntoIterator<Item = &'a XPlane>,
    id: i64,
    name: &str,
) -> XPlane {
    let mut out = XPlane {
        id,
        name: name.to_owned(),
        ..Default::default()
    };
    for plane in planes {
        merge_planes(plane, &mut out);
    }
    out
}

/// Whether any event of `plane` is aggregated.
pub fn has_aggregated_events(plane: &XPlane) -> bool {
    plane
        .lines
        .iter()
        .flat_map(|l| &l.events)
        .any(|e| matches!(e.data, Some(x_event::Data::NumOccurrences(_))))
}

/// Each event's self (exclusive) time within its line's nesting: its duration less the
/// durations of the events directly inside it. `spans` holds a line's events in any order, each
/// as its start and duration in picoseconds, or `None` for an aggregated event (one with
/// `num_occurrences`, which has no place in time and gets `None` back). An event is inside
/// another when its span lies within the other's; of two equal spans the earlier in `spans` is
/// the outer. An event that overlaps another only in part is not inside it. A negative duration
/// counts as zero. For a line too long to hold, [`SelfTimer`] gives the same times streamed.
///
/// ```
/// use profkit_xplane::utils::self_times;
/// // A 10 ps step holding two ops of 3 and 4 ps, the second holding a 1 ps op.
/// let spans = [Some((0, 10)), Some((1, 3)), Some((5, 4)), Some((6, 1)), None];
/// assert_eq!(self_times(&spans), [Some(3), Some(3), Some(3), Some(1), None]);
/// ```
pub fn self_times(spans: &[Option<(i128, i64)>]) -> Vec<Option<i64>> {
    let mut result: Vec<Option<i64>> = spans.iter().map(|s| s.map(|(_, d)| d.max(0))).collect();
    let mut timer = SelfTimer::new();
    let mut set = |i: usize, t: i64| {
        if let Some(slot) = result.get_mut(i) {
            *slot = Some(t);
        }
    };
    // Lines are usually in order already: then nothing is sorted.
    let mut in_order = true;
    for (i, span) in spans.iter().enumerate() {
        if let Some((start, duration)) = *span
            && !timer.push(start, duration, i, &mut set)
        {
            in_order = false;
            break;
        }
    }
    if in_order {
        timer.finish(&mut set);
        return result;
    }
    let mut order: Vec<(i128, i64, usize)> = spans
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.map(|(start, d)| (start, d.max(0), i)))
        .collect();
    // By start, the longer first, then in line order: an outer event comes before what it holds.
    order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut timer = SelfTimer::new();
    for (start, duration, i) in order {
        timer.push(start, duration, i, &mut set);
    }
    timer.finish(&mut set);
    result
}

/// Self times of a line's events streamed (see [`self_times`]): events pushed in order of
/// start, the longer first among equal starts (the order lines are written in), each handed
/// back with its self time once nothing more can lie inside it. Memory is the depth of the
/// nesting, not the length of the line.
///
/// ```
/// use profkit_xplane::utils::SelfTimer;
/// let mut timer = SelfTimer::new();
/// let mut done = Vec::new();
/// for (start, duration, name) in [(0, 10, "step"), (1, 3, "a"), (5, 4, "b")] {
///     assert!(timer.push(start, duration, name, |n, t| done.push((n, t))));
/// }
/// timer.finish(|n, t| done.push((n, t)));
/// assert_eq!(done, [("a", 3), ("b", 4), ("step", 3)]);
/// ```
#[derive(Debug)]
pub struct SelfTimer<T> {
    /// The events that may still hold later ones: (end, self time so far, payload).
    open: Vec<(i128, i64, T)>,
    /// The last event's start and duration, to see that the order holds.
    last: Option<(i128, i64)>,
}

impl<T> Default for SelfTimer<T> {
    fn default() -> Self {
        SelfTimer {
            open: Vec::new(),
            last: None,
        }
    }
}

impl<T> SelfTimer<T> {
    /// A timer with no events.
    pub fn new() -> SelfTimer<T> {
        SelfTimer::default()
    }

    /// Adds an event; `done` gets each event that can hold nothing more, with its self time.
    /// False (and nothing done) when the event comes before the last one in the order above:
    /// the line is not in order, and [`self_times`] sorts it.
    pub fn push(
        &mut self,
        start: i128,
        duration: i64,
        payload: T,
        mut done: impl FnMut(T, i64),
    ) -> bool {
        let duration = duration.max(0);
        if let Some((last_start, last_duration)) = self.last
            && (start < last_start || (start == last_start && duration > last_duration))
        {
            return false;
        }
        self.last = Some((start, duration));
        let end = start + i128::from(duration);
        while self
            .open
            .last()
            .is_some_and(|&(top_end, _, _)| top_end < end)
        {
            if let Some((_, t, p)) = self.open.pop() {
                done(p, t);
            }
        }
        if let Some((_, t, _)) = self.open.last_mut() {
            *t = t.saturating_sub(duration);
        }
        self.open.push((end, duration, payload));
        true
    }

    /// Hands back the events still open, innermost first.
    pub fn finish(&mut self, mut done: impl FnMut(T, i64)) {
        while let Some((_, t, p)) = self.open.pop() {
            done(p, t);
        }
        self.last = None;
    }
}

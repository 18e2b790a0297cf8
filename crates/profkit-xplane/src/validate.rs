//! Validation of a decoded XSpace: every problem, each with where it is.
//!
//! Decoding already guarantees a well-formed encoding; validation checks what the schema cannot
//! say and what the real tools rely on: ids that resolve, map keys equal to their value's id,
//! events that nest without partial overlap, times that fit TSL's `i64` picoseconds, and stats
//! that hold a value. What real producers write is a [`Severity::Warning`], not an error: the
//! partial overlaps listed at [`Severity::Warning`], each a producer's own way of writing a line,
//! which the tools draw anyway.

use std::fmt;

use crate::proto::{XEvent, XLine, XPlane, XSpace, XStat, x_event, x_stat};

mod producers;

use crate::xview::{PlaneMetadata, StatValueView, XEventView, XLineView, XPlaneView, XStatView};
pub use producers::{
    CATEGORY_STAT, ITERATION_SKEW_PS, Overlapping, PYTHON_FUNCTION_CATEGORY, overlap_quirk,
};

/// What kind of problem was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemKind {
    /// An event's `metadata_id` is not a key of the plane's `event_metadata`.
    UnknownEventMetadata,
    /// A stat's `metadata_id` is not a key of the plane's `stat_metadata`.
    UnknownStatMetadata,
    /// A `ref_value` is not a key of the plane's `stat_metadata`.
    UnknownRefValue,
    /// A `child_id` is not a key of the plane's `event_metadata`.
    UnknownChild,
    /// A metadata map key differs from the `id` inside its value.
    MapKeyMismatch,
    /// Two events on a line overlap without one containing the other.
    PartialOverlap,
    /// An absolute time in picoseconds does not fit in `i64`.
    TimestampOverflow,
    /// A line's `timestamp_ns` is too large for a session-relative time (nanoseconds since 1970,
    /// say): reported once for the line, instead of a [`ProblemKind::TimestampOverflow`] per event.
    EpochLineTimestamp,
    /// A duration is negative.
    NegativeDuration,
    /// An aggregated event's occurrence count is negative.
    NegativeOccurrences,
    /// A stat has no value set.
    UnsetStatValue,
}

/// How serious a problem is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Severity {
    /// What no producer writes: the space is invalid.
    #[default]
    Error,
    /// What real producers write and the tools show anyway: the space stays valid. Partial
    /// overlaps of four kinds (see [`overlap_quirk`]):
    /// - with a Python tracer event (named `$<file>:<line> <function>`), which JAX and
    ///   TensorFlow write on the thread of the annotations the traced functions open, so that a
    ///   function that opens an annotation and returns before it ends (as
    ///   `StepTraceAnnotation.__init__` does) partly overlaps it;
    /// - between two events of one name, the later starting at most [`ITERATION_SKEW_PS`] before
    ///   the earlier ends: TensorFlow writes the consecutive `ExecutorState::Process` iterations
    ///   of a `tf_Compute` thread so (Keras `fit` with `steps_per_execution` above 1), each end
    ///   taken a fraction of a microsecond after the next start;
    /// - on a line of asynchronous ops (its name starts with `Async`, as XLA's `Async XLA Ops`
    ///   line of a TPU), whose ops run at the same time by design;
    /// - with a PyTorch Python function event (its `cat` stat `python_function`, in a space read
    ///   from a Kineto trace), which Kineto writes with `with_stack=True` across the ranges the
    ///   function opens or closes (`ProfilerStep#N`, `Optimizer.step`, `record_function`).
    Warning,
}

/// One problem and where it is.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// Path of the offending element, for example `planes[0].lines[2].events[7]`.
    pub path: String,
    /// What kind of problem it is.
    pub kind: ProblemKind,
    /// Whether it makes the space invalid.
    pub severity: Severity,
    /// A sentence for people.
    pub message: String,
    /// The path of the other element the problem is about, where there is one: for a partial
    /// overlap, the earlier event this one overlaps.
    #[serde(skip)]
    pub other: Option<String>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Checks `space` and returns every problem found, in file order (empty when valid).
pub fn validate(space: &XSpace) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (index, plane) in space.planes.iter().enumerate() {
        validate_plane_into(plane, &format!("planes[{index}]"), &mut problems);
    }
    problems
}

/// Checks one plane; paths start with `path` (for example `planes[3]`).
pub fn validate_plane(plane: &XPlane, path: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    validate_plane_into(plane, path, &mut problems);
    problems
}

/// The message for a line whose `timestamp_ns` cannot be session-relative: its picoseconds do
/// not fit in `i64` (over about 106 days), which is what nanoseconds since 1970 look like.
fn epoch_line(timestamp_ns: i64) -> Option<String> {
    let ps = i128::from(timestamp_ns) * 1000;
    if i64::try_from(ps).is_ok() {
        return None;
    }
    let what = if timestamp_ns > 0 {
        format!(
            "is about {:.1} years: it looks like nanoseconds since 1970",
            timestamp_ns as f64 / 1e9 / 31_556_952.0
        )
    } else {
        "is too far before the session start".to_owned()
    };
    Some(format!(
        "line timestamp_ns {timestamp_ns} {what}, but line timestamps are session-relative \
         (nanoseconds since the session start, whose own time since 1970 goes in the \
         `profile_start_time` stat of the `Task Environment` plane): in picoseconds its events' \
         times do not fit in i64. Subtract the session start from every line \
         (utils::normalize_space_timestamps); the events' times are not listed one by one"
    ))
}

struct Checker<'a> {
    plane: &'a XPlane,
    problems: &'a mut Vec<Problem>,
}

impl Checker<'_> {
    fn report(&mut self, path: String, kind: ProblemKind, message: String) {
        self.problems.push(Problem {
            path,
            kind,
            severity: Severity::Error,
            message,
            other: None,
        });
    }

    fn stats(&mut self, stats: &[XStat], path: &str) {
        for (index, stat) in stats.iter().enumerate() {
            let path = format!("{path}.stats[{index}]");
            if !self.plane.stat_metadata.contains_key(&stat.metadata_id) {
                self.report(
                    path.clone(),
                    ProblemKind::UnknownStatMetadata,
                    format!("stat metadata id {} resolves to nothing", stat.metadata_id),
                );
            }
            match &stat.value {
                None => self.report(
                    path,
                    ProblemKind::UnsetStatValue,
                    "stat has no value set".into(),
                ),
                Some(x_stat::Value::RefValue(id)) => {
                    let resolves = i64::try_from(*id)
                        .is_ok_and(|id| self.plane.stat_metadata.contains_key(&id));
                    if !resolves {
                        self.report(
                            path,
                            ProblemKind::UnknownRefValue,
                            format!("ref_value {id} resolves to no stat metadata"),
                        );
                    }
                }
                Some(_) => {}
            }
        }
    }

    fn line(&mut self, line: &XLine, path: &str) {
        let base_ps = i128::from(line.timestamp_ns) * 1000;
        // Reported once, at the line's first timed event (aggregated events have no time).
        let mut epoch = epoch_line(line.timestamp_ns);
        let is_epoch = epoch.is_some();
        // Timed events as (start, end, index), for the overlap check.
        let mut spans: Vec<(i128, i128, usize)> = Vec::with_capacity(line.events.len());
        let line_path = path;
        for (index, event) in line.events.iter().enumerate() {
            let path = format!("{path}.events[{index}]");
            self.event(event, &path);
            let offset = match event.data {
                Some(x_event::Data::NumOccurrences(_)) => continue,
                Some(x_event::Data::OffsetPs(v)) => v,
                None => 0,
            };
            let start = base_ps + i128::from(offset);
            let end = start + i128::from(event.duration_ps);
            if let Some(message) = epoch.take() {
                self.report(
                    line_path.to_owned(),
                    ProblemKind::EpochLineTimestamp,
                    message,
                );
            }
            if !is_epoch && (i64::try_from(start).is_err() || i64::try_from(end).is_err()) {
                self.report(
                    path,
                    ProblemKind::TimestampOverflow,
                    format!(
                        "absolute time {start}..{end} ps (line timestamp_ns {} * 1000 + offset_ps {offset}) \
                         does not fit in a signed 64-bit picosecond count; make line timestamps session-relative",
                        line.timestamp_ns
                    ),
                );
            }
            if event.duration_ps >= 0 {
                spans.push((start, end, index));
            }
        }
        let plane = self.plane;
        let cat = plane
            .stat_metadata
            .values()
            .find(|m| m.name == CATEGORY_STAT)
            .map(|m| m.id);
        let seen = |index: usize| {
            let Some(event) = line.events.get(index) else {
                return Overlapping::default();
            };
            let metadata = plane.event_metadata.get(&event.metadata_id);
            let shared = metadata.map(|m| m.stats.as_slice()).unwrap_or_default();
            let category = cat
                .and_then(|cat| {
                    event
                        .stats
                        .iter()
                        .chain(shared)
                        .find(|s| s.metadata_id == cat)
                })
                .and_then(|s| match &s.value {
                    Some(x_stat::Value::StrValue(v)) => Some(v.as_str()),
                    Some(x_stat::Value::RefValue(r)) => i64::try_from(*r)
                        .ok()
                        .and_then(|r| plane.stat_metadata.get(&r))
                        .map(|m| m.name.as_str()),
                    _ => None,
                })
                .unwrap_or("");
            Overlapping {
                name: metadata.map_or("", |m| m.name.as_str()),
                category,
            }
        };
        let quirk = |index: usize, other: usize, overlap: i128| {
            overlap_quirk(&line.name, seen(index), seen(other), overlap)
        };
        overlaps(&mut spans, path, self.problems, &quirk);
    }

    fn event(&mut self, event: &XEvent, path: &str) {
        if !self.plane.event_metadata.contains_key(&event.metadata_id) {
            self.report(
                path.to_owned(),
                ProblemKind::UnknownEventMetadata,
                format!(
                    "event metadata id {} resolves to nothing",
                    event.metadata_id
                ),
            );
        }
        if event.duration_ps < 0 {
            self.report(
                path.to_owned(),
                ProblemKind::NegativeDuration,
                format!("duration_ps is negative ({})", event.duration_ps),
            );
        }
        if let Some(x_event::Data::NumOccurrences(n)) = event.data {
            if n < 0 {
                self.report(
                    path.to_owned(),
                    ProblemKind::NegativeOccurrences,
                    format!("num_occurrences is negative ({n})"),
                );
            }
        }
        self.stats(&event.stats, path);
    }
}

fn validate_plane_into(plane: &XPlane, path: &str, problems: &mut Vec<Problem>) {
    let mut checker = Checker { plane, problems };
    checker.stats(&plane.stats, path);
    for (key, md) in &plane.event_metadata {
        let md_path = format!("{path}.event_metadata[{key}]");
        if *key != md.id {
            checker.report(
                md_path.clone(),
                ProblemKind::MapKeyMismatch,
                format!("map key {key} differs from the metadata's id {}", md.id),
            );
        }
        checker.stats(&md.stats, &md_path);
        for (index, child) in md.child_id.iter().enumerate() {
            if !plane.event_metadata.contains_key(child) {
                checker.report(
                    format!("{md_path}.child_id[{index}]"),
                    ProblemKind::UnknownChild,
                    format!("child event metadata id {child} resolves to nothing"),
                );
            }
        }
    }
    for (key, md) in &plane.stat_metadata {
        if *key != md.id {
            checker.report(
                format!("{path}.stat_metadata[{key}]"),
                ProblemKind::MapKeyMismatch,
                format!("map key {key} differs from the metadata's id {}", md.id),
            );
        }
    }
    for (index, line) in plane.lines.iter().enumerate() {
        checker.line(line, &format!("{path}.lines[{index}]"));
    }
}

/// Events may nest and touch but not partially overlap. With events taken by start (longest
/// first on ties), an event partially overlaps an earlier one exactly when that one ends
/// strictly inside it; the ends of the earlier events are kept in an ordered set, so every
/// such event is found (not only those overlapping an event that is itself well nested) in
/// `O(n log n)`. Each offending event is reported once, naming the earlier event that ends
/// first inside it, in file order.
///
/// An overlap `quirk` (of the event's index, the other's and how long they overlap) explains is
/// a [`Severity::Warning`] (see [`overlap_quirk`]).
fn overlaps(
    spans: &mut [(i128, i128, usize)],
    path: &str,
    problems: &mut Vec<Problem>,
    quirk: &dyn Fn(usize, usize, i128) -> Option<&'static str>,
) {
    spans.sort_by_key(|&(start, end, index)| (start, std::cmp::Reverse(end), index));
    // (end, index, start) of earlier events that may still end inside a later one.
    let mut ends: std::collections::BTreeSet<(i128, usize, i128)> =
        std::collections::BTreeSet::new();
    let mut found: Vec<(usize, usize, Option<&'static str>, String)> = Vec::new();
    for &(start, end, index) in spans.iter() {
        // Events ending at or before this start cannot end inside this or any later event.
        while ends.first().is_some_and(|&(e, _, _)| e <= start) {
            ends.pop_first();
        }
        // Ends strictly inside this event (none for an instant; `range` panics on an
        // inverted range, so that case is left out first).
        let inside = (start + 1, 0, i128::MIN)..(end, 0, i128::MIN);
        let crossing = if end > start {
            ends.range(inside).next()
        } else {
            None
        };
        if let Some(&(other_end, other, other_start)) = crossing {
            let why = quirk(index, other, other_end - start);
            found.push((
                index,
                other,
                why,
                format!(
                    "event {start}..{end} ps partially overlaps events[{other}] {other_start}..{other_end} ps{}",
                    why.unwrap_or("")
                ),
            ));
        }
        ends.insert((end, index, start));
    }
    found.sort_by_key(|(index, ..)| *index);
    for (index, other, why, message) in found {
        problems.push(Problem {
            path: format!("{path}.events[{index}]"),
            kind: ProblemKind::PartialOverlap,
            severity: if why.is_some() {
                Severity::Warning
            } else {
                Severity::Error
            },
            message,
            other: Some(format!("{path}.events[{other}]")),
        });
    }
}

/// Checks one plane through its view, without building it: the problems [`validate_plane`] finds
/// in the decoded plane, in the same order. Paths start with `path` (for example `planes[3]`). An
/// encoding error stops the check and is returned instead.
pub fn validate_plane_view(plane: &XPlaneView<'_>, path: &str) -> crate::Result<Vec<Problem>> {
    let mut problems = Vec::new();
    validate_plane_view_each(plane, path, &mut |p| problems.push(p))?;
    Ok(problems)
}

/// [`validate_plane_view`] handing each problem to `found` as soon as it is known, so that a
/// caller printing them holds none (a file can have a problem per event).
pub fn validate_plane_view_each(
    plane: &XPlaneView<'_>,
    path: &str,
    found: &mut dyn FnMut(Problem),
) -> crate::Result<()> {
    let metadata = plane.metadata()?;
    let mut checker = ViewChecker { metadata, found };
    for (index, stat) in plane.stats().enumerate() {
        checker.stat(&stat?, path, index);
    }
    for md in metadata.events() {
        let key = md.key();
        let md_path = format!("{path}.event_metadata[{key}]");
        if key != md.id() {
            checker.report(
                md_path.clone(),
                ProblemKind::MapKeyMismatch,
                format!("map key {key} differs from the metadata's id {}", md.id()),
            );
        }
        for (index, stat) in md.stats().iter().enumerate() {
            checker.stat(stat, &md_path, index);
        }
        for (index, child) in md.child_id().iter().enumerate() {
            if metadata.event(*child).is_none() {
                checker.report(
                    format!("{md_path}.child_id[{index}]"),
                    ProblemKind::UnknownChild,
                    format!("child event metadata id {child} resolves to nothing"),
                );
            }
        }
    }
    for md in metadata.stats() {
        let key = md.key();
        if key != md.id() {
            checker.report(
                format!("{path}.stat_metadata[{key}]"),
                ProblemKind::MapKeyMismatch,
                format!("map key {key} differs from the metadata's id {}", md.id()),
            );
        }
    }
    for (index, line) in plane.lines().enumerate() {
        checker.line(&line?, &format!("{path}.lines[{index}]"))?;
    }
    Ok(())
}

/// [`Checker`] over views.
struct ViewChecker<'m, 'a> {
    metadata: &'m PlaneMetadata<'a>,
    found: &'m mut dyn FnMut(Problem),
}

impl<'a> ViewChecker<'_, 'a> {
    fn report(&mut self, path: String, kind: ProblemKind, message: String) {
        (self.found)(Problem {
            path,
            kind,
            severity: Severity::Error,
            message,
            other: None,
        });
    }

    fn stat(&mut self, stat: &XStatView<'_>, parent: &str, index: usize) {
        let known = self.metadata.stat(stat.metadata_id()).is_some();
        let unresolved_ref = match stat.value() {
            Some(StatValueView::Ref(id)) => {
                !i64::try_from(id).is_ok_and(|id| self.metadata.stat(id).is_some())
            }
            _ => false,
        };
        if known && stat.value().is_some() && !unresolved_ref {
            return;
        }
        let path = format!("{parent}.stats[{index}]");
        if !known {
            self.report(
                path.clone(),
                ProblemKind::UnknownStatMetadata,
                format!(
                    "stat metadata id {} resolves to nothing",
                    stat.metadata_id()
                ),
            );
        }
        match stat.value() {
            None => self.report(
                path,
                ProblemKind::UnsetStatValue,
                "stat has no value set".into(),
            ),
            Some(StatValueView::Ref(id)) if unresolved_ref => self.report(
                path,
                ProblemKind::UnknownRefValue,
                format!("ref_value {id} resolves to no stat metadata"),
            ),
            Some(_) => {}
        }
    }

    fn line(&mut self, line: &XLineView<'a>, path: &str) -> crate::Result<()> {
        let base_ps = i128::from(line.timestamp_ns()) * 1000;
        // Reported once, at the line's first timed event (aggregated events have no time).
        let mut epoch = epoch_line(line.timestamp_ns());
        let is_epoch = epoch.is_some();
        let mut spans: Vec<(i128, i128, usize)> = Vec::new();
        // Each event's metadata id and category (by index), for the overlap check.
        let mut ids: Vec<i64> = Vec::new();
        let mut categories: Vec<&str> = Vec::new();
        let cat = self.metadata.stat_id(CATEGORY_STAT);
        for (index, event) in line.events().enumerate() {
            let event = event?;
            self.event(&event, path, index)?;
            ids.push(event.metadata_id());
            if let Some(cat) = cat {
                categories.push(self.category(&event, cat)?);
            }
            let offset = match event.data() {
                Some(x_event::Data::NumOccurrences(_)) => continue,
                Some(x_event::Data::OffsetPs(v)) => v,
                None => 0,
            };
            let start = base_ps + i128::from(offset);
            let end = start + i128::from(event.duration_ps());
            if let Some(message) = epoch.take() {
                self.report(path.to_owned(), ProblemKind::EpochLineTimestamp, message);
            }
            if !is_epoch && (i64::try_from(start).is_err() || i64::try_from(end).is_err()) {
                self.report(
                    format!("{path}.events[{index}]"),
                    ProblemKind::TimestampOverflow,
                    format!(
                        "absolute time {start}..{end} ps (line timestamp_ns {} * 1000 + offset_ps {offset}) \
                         does not fit in a signed 64-bit picosecond count; make line timestamps session-relative",
                        line.timestamp_ns()
                    ),
                );
            }
            if event.duration_ps() >= 0 {
                spans.push((start, end, index));
            }
        }
        let mut overlapping = Vec::new();
        let metadata = self.metadata;
        let seen = |index: usize| Overlapping {
            name: ids
                .get(index)
                .and_then(|&id| metadata.event(id))
                .map_or("", |m| m.name()),
            category: categories.get(index).copied().unwrap_or(""),
        };
        let line_name = line.name();
        let quirk = |index: usize, other: usize, overlap: i128| {
            overlap_quirk(line_name, seen(index), seen(other), overlap)
        };
        overlaps(&mut spans, path, &mut overlapping, &quirk);
        overlapping.into_iter().for_each(&mut *self.found);
        Ok(())
    }

    /// An event's `cat` stat (stat metadata `cat`), its own or its metadata's; empty when none.
    fn category(&self, event: &XEventView<'a>, cat: i64) -> crate::Result<&'a str> {
        let value = |v: StatValueView<'a>| -> &'a str {
            match v {
                StatValueView::Str(s) => s,
                StatValueView::Ref(r) => i64::try_from(r)
                    .ok()
                    .and_then(|r| self.metadata.stat(r))
                    .map_or("", |m| m.name()),
                _ => "",
            }
        };
        for stat in event.stats() {
            let stat = stat?;
            if stat.metadata_id() == cat {
                return Ok(stat.value().map_or("", value));
            }
        }
        let shared = self.metadata.event(event.metadata_id());
        for stat in shared.map(|m| m.stats()).unwrap_or_default() {
            if stat.metadata_id() == cat {
                return Ok(stat.value().map_or("", value));
            }
        }
        Ok("")
    }

    fn event(&mut self, event: &XEventView<'_>, line: &str, index: usize) -> crate::Result<()> {
        let path = || format!("{line}.events[{index}]");
        if self.metadata.event(event.metadata_id()).is_none() {
            self.report(
                path(),
                ProblemKind::UnknownEventMetadata,
                format!(
                    "event metadata id {} resolves to nothing",
                    event.metadata_id()
                ),
            );
        }
        if event.duration_ps() < 0 {
            self.report(
                path(),
                ProblemKind::NegativeDuration,
                format!("duration_ps is negative ({})", event.duration_ps()),
            );
        }
        if let Some(n) = event.num_occurrences() {
            if n < 0 {
                self.report(
                    path(),
                    ProblemKind::NegativeOccurrences,
                    format!("num_occurrences is negative ({n})"),
                );
            }
        }
        let mut stat_path = None;
        for (i, stat) in event.stats().enumerate() {
            let stat = stat?;
            let parent = stat_path.get_or_insert_with(path);
            self.stat(&stat, parent, i);
        }
        Ok(())
    }
}

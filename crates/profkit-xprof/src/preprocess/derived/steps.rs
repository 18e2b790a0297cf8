//! xprof's `Steps` line of a GPU plane whose events carry `group_id`s (`ProcessUngroupedEvents`,
//! `DeriveStepEventsFromGroups`, `AddGroupMetadataToStepEvents`).

use std::collections::BTreeMap;

use profkit_xplane::{XLine, XPlane, XStat, x_stat};

use super::builder::{Editor, Lines, Span, sort_by_span, span_of};
use super::{DERIVED_MIN, is_derived_line_id};
use crate::preprocess::stats::start_timestamp_ns;

/// `kThreadIdStepInfo`.
pub(super) const LINE_STEPS: i64 = DERIVED_MIN;
/// `kStepLineName`.
pub(super) const LINE_NAME: &str = "Steps";

/// The id of the first stat metadata named `group_id` (TSL's lookup by name).
fn group_stat(plane: &XPlane) -> Option<i64> {
    plane
        .stat_metadata
        .iter()
        .filter(|(_, m)| m.name == "group_id")
        .map(|(id, _)| *id)
        .min()
}

/// The events of the plane's lines that are not derived lines, sorted by start then shorter
/// first, as (line index, event index).
fn sorted_events(plane: &XPlane) -> Vec<(Span, (usize, usize))> {
    let mut order = Vec::new();
    for (li, line) in plane.lines.iter().enumerate() {
        if is_derived_line_id(line.id) {
            continue;
        }
        for (ei, event) in line.events.iter().enumerate() {
            order.push((span_of(line, event), (li, ei)));
        }
    }
    sort_by_span(&mut order);
    order
}

fn group_of(stats: &[XStat], stat: i64) -> Option<i64> {
    stats
        .iter()
        .find(|s| s.metadata_id == stat)
        .map(|s| match s.value {
            Some(x_stat::Value::Int64Value(v)) => v,
            _ => 0,
        })
}

/// Gives every event without a group the group of the last grouped event before it, then makes
/// the `Steps` line: one event per run of events of one group, named by the group id (and given
/// its `step_name` when `group_names` has it).
pub(super) fn derive(plane: &mut XPlane, editor: &mut Editor, group_names: &BTreeMap<i64, String>) {
    let Some(stat) = group_stat(plane) else {
        return;
    };
    // ProcessUngroupedEvents.
    let order = sorted_events(plane);
    let mut group: Option<i64> = None;
    for &(_, (li, ei)) in &order {
        let Some(event) = plane.lines.get_mut(li).and_then(|l| l.events.get_mut(ei)) else {
            continue;
        };
        match group_of(&event.stats, stat) {
            Some(g) => group = Some(g),
            None => {
                if let Some(g) = group {
                    event.stats.push(XStat {
                        metadata_id: stat,
                        value: Some(x_stat::Value::Int64Value(g)),
                    });
                }
            }
        }
    }
    // DeriveStepEventsFromGroups.
    let order = sorted_events(plane);
    let start = start_timestamp_ns(plane);
    let mut lines = Lines::new(true);
    let steps = lines.add(plane, editor, LINE_STEPS, LINE_NAME, start, vec![]);
    let mut name = String::new();
    for (span, (li, ei)) in order {
        let Some(g) = plane
            .lines
            .get(li)
            .and_then(|l| l.events.get(ei))
            .and_then(|e| group_of(&e.stats, stat))
        else {
            continue;
        };
        name.clear();
        name.push_str(itoa::Buffer::new().format(g));
        let id = editor.event_metadata(plane, &name);
        lines.expand_or_add(plane, editor, steps, id, span, Some(g), None);
    }
    // AddGroupMetadataToStepEvents.
    if group_names.is_empty() {
        return;
    }
    let step_name = editor.stat_metadata(plane, "step_name");
    let Some(line) = plane.lines.iter_mut().find(|l| l.id == LINE_STEPS) else {
        return;
    };
    for event in &mut line.events {
        if let Some(name) = group_of(&event.stats, stat).and_then(|g| group_names.get(&g)) {
            event.stats.push(XStat {
                metadata_id: step_name,
                value: Some(x_stat::Value::StrValue(name.clone())),
            });
        }
    }
}

/// Whether [`derive`] gives the plane a `Steps` line: some event of a line that is not derived
/// has a `group_id`.
pub(super) fn has_steps(plane: &XPlane) -> bool {
    let Some(stat) = group_stat(plane) else {
        return false;
    };
    plane
        .lines
        .iter()
        .filter(|l| !is_derived_line_id(l.id))
        .flat_map(|l| &l.events)
        .any(|e| group_of(&e.stats, stat).is_some())
}

/// The `Steps` line as [`layout`](super::layout) lists it.
pub(super) fn placeholder() -> XLine {
    XLine {
        id: LINE_STEPS,
        name: LINE_NAME.to_owned(),
        events: vec![profkit_xplane::XEvent::default()],
        ..XLine::default()
    }
}

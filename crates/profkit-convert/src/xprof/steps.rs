//! The `Steps` line xprof derives on GPU planes from the groups (`GenerateDerivedTimeLines`:
//! `ProcessUngroupedEvents`, then `DeriveStepEventsFromGroups`).
//!
//! The events of the plane's lines (derived lines aside) are taken by start, longer first
//! (libstdc++'s `std::sort`, as TSL's `GetSortedEvents`). First, each event without a `group_id`
//! takes the group of the last grouped event before it. Then each run of consecutive events of
//! one group becomes one event of the `Steps` line (id `0xdeadbeef`, xprof's `kThreadIdStepInfo`,
//! timestamp the plane's earliest line timestamp), named by the group id, spanning the run, with
//! a `group_id` stat and the group's name as `step_name`.

use std::collections::BTreeMap;

use profkit_events::report::std_sort;
use profkit_xplane::{XEvent, XEventMetadata, XLine, XPlane, XStat, x_event, x_stat};

use super::gpu::is_derived_line_id;
use super::stats::{int_value, intern_stat, timespan};

/// xprof's `kThreadIdStepInfo`.
pub(crate) const STEP_LINE_ID: i64 = 0xdead_beef;
/// The line's name (`kStepLineName`).
pub(crate) const STEP_LINE_NAME: &str = "Steps";

/// Gives ungrouped events the group before them and adds the `Steps` line (see the module
/// documentation). The plane's events must hold their `group_id` stats.
pub(crate) fn derive_gpu_steps(plane: &mut XPlane, names: &BTreeMap<i64, String>) {
    let group_stat = intern_stat(plane, "group_id");
    let order = sorted_events(plane);
    // `ProcessUngroupedEvents`.
    let mut current: Option<i64> = None;
    for &(l, e, ..) in &order {
        let Some(event) = plane
            .lines
            .get_mut(l)
            .and_then(|line| line.events.get_mut(e))
        else {
            continue;
        };
        match event.stats.iter().find(|s| s.metadata_id == group_stat) {
            Some(stat) => current = Some(int_value(stat)),
            None => {
                if let Some(group) = current {
                    event.stats.push(XStat {
                        metadata_id: group_stat,
                        value: Some(x_stat::Value::Int64Value(group)),
                    });
                }
            }
        }
    }
    // `DeriveStepEventsFromGroups`.
    let start_ns = if plane.lines.is_empty() {
        0
    } else {
        plane
            .lines
            .iter()
            .map(|l| l.timestamp_ns)
            .min()
            .unwrap_or(0)
    };
    let mut steps: Vec<(i64, u64, u64)> = Vec::new();
    for &(l, e, begin, end) in &order {
        let group = plane
            .lines
            .get(l)
            .and_then(|line| line.events.get(e))
            .and_then(|event| event.stats.iter().find(|s| s.metadata_id == group_stat))
            .map(int_value);
        let Some(group) = group else { continue };
        match steps.last_mut() {
            Some(last) if last.0 == group => {
                last.1 = last.1.min(begin);
                last.2 = last.2.max(end);
            }
            _ => steps.push((group, begin, end)),
        }
    }
    let name_stat = (!names.is_empty()).then(|| intern_stat(plane, "step_name"));
    let mut events = Vec::with_capacity(steps.len());
    for (group, begin, end) in steps {
        let metadata_id = intern_event(plane, &group.to_string());
        let mut stats = vec![XStat {
            metadata_id: group_stat,
            value: Some(x_stat::Value::Int64Value(group)),
        }];
        if let (Some(id), Some(name)) = (name_stat, names.get(&group)) {
            stats.push(XStat {
                metadata_id: id,
                value: Some(x_stat::Value::StrValue(name.clone())),
            });
        }
        events.push(XEvent {
            metadata_id,
            data: Some(x_event::Data::OffsetPs(
                (begin as i64).wrapping_sub(start_ns.wrapping_mul(1000)),
            )),
            duration_ps: end.wrapping_sub(begin) as i64,
            stats,
        });
    }
    let line = match plane.lines.iter().position(|l| l.id == STEP_LINE_ID) {
        Some(i) => plane.lines.get_mut(i),
        None => {
            plane.lines.push(XLine {
                id: STEP_LINE_ID,
                ..XLine::default()
            });
            plane.lines.last_mut()
        }
    };
    if let Some(line) = line {
        line.name = STEP_LINE_NAME.to_owned();
        line.timestamp_ns = start_ns;
        line.events.extend(events);
    }
}

/// The plane's events outside derived lines as (line, event, begin, end), by start and longer
/// first, sorted as libstdc++ sorts them.
fn sorted_events(plane: &XPlane) -> Vec<(usize, usize, u64, u64)> {
    let mut all = Vec::new();
    for (l, line) in plane.lines.iter().enumerate() {
        if is_derived_line_id(line.id) {
            continue;
        }
        for (e, event) in line.events.iter().enumerate() {
            let (begin, end) = timespan(line, event);
            all.push((l, e, begin, end));
        }
    }
    std_sort(&mut all, &|a: &(usize, usize, u64, u64), b| {
        let (da, db) = (a.3.wrapping_sub(a.2), b.3.wrapping_sub(b.2));
        a.2 < b.2 || (a.2 == b.2 && da > db)
    });
    all
}

/// The id of the event metadata named `name`, created (with the next id) when missing.
pub(crate) fn intern_event(plane: &mut XPlane, name: &str) -> i64 {
    if let Some(id) = plane
        .event_metadata
        .iter()
        .filter(|(_, m)| m.name == name)
        .map(|(id, _)| *id)
        .min()
    {
        return id;
    }
    let id = plane
        .event_metadata
        .keys()
        .copied()
        .max()
        .unwrap_or(0)
        .saturating_add(1);
    plane.event_metadata.insert(
        id,
        XEventMetadata {
            id,
            name: name.to_owned(),
            ..XEventMetadata::default()
        },
    );
    id
}

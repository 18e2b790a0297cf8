//! TPU device planes grouped by their steps (`GroupTpuXPlaneEvents`): the events of each line
//! take the group of the step (or module) they overlap. The steps themselves are grouped by the
//! event forest (from host roots, else in lock step).

use profkit_xplane::{XLine, XPlane, XStat, x_stat};

use crate::preprocess::facts::SpaceFacts;
use crate::preprocess::stats::{
    int_or_uint, int_value, intern_stat, set_or_add, timespan, timespan_end,
};
use crate::preprocess::tpu::tpu_grouping_line;

/// TSL's `GroupTpuXPlaneEvents` on one device plane: merges the step line's consecutive steps of
/// one group (`MergeHostSteps`), names them after their group, and gives every event of the other
/// lines the group of the grouping-line event it overlaps.
pub(crate) fn group_tpu_plane_events(plane: &mut XPlane, facts: &SpaceFacts) {
    let Some(grouping) = tpu_grouping_line(plane.lines.iter().map(|l| (l, l.events.len()))) else {
        return;
    };
    let step_line = plane
        .lines
        .iter()
        .rposition(|l| l.name == "Steps" || l.name == "Sparse Core Steps");
    let group_stat = intern_stat(plane, "group_id");
    if let Some(step) = step_line {
        merge_host_steps(plane, step, group_stat);
        if !facts.forest.names.is_empty() {
            let name_stat = intern_stat(plane, "step_name");
            if let Some(line) = plane.lines.get_mut(step) {
                for event in &mut line.events {
                    let group = event
                        .stats
                        .iter()
                        .find(|s| s.metadata_id == group_stat)
                        .map(int_value);
                    if let Some(name) = group.and_then(|g| facts.forest.names.get(&g)) {
                        event.stats.push(XStat {
                            metadata_id: name_stat,
                            value: Some(x_stat::Value::StrValue(name.clone())),
                        });
                    }
                }
            }
        }
    }
    let Some(grouping_line) = plane.lines.get(grouping).cloned() else {
        return;
    };
    let groups: Vec<Option<i64>> = grouping_line
        .events
        .iter()
        .map(|e| {
            e.stats
                .iter()
                .find(|s| s.metadata_id == group_stat)
                .map(int_value)
        })
        .collect();
    for (index, line) in plane.lines.iter_mut().enumerate() {
        if Some(index) == step_line || line.name == "_counters_" {
            continue;
        }
        group_line(&grouping_line, &groups, group_stat, line);
    }
}

pub(crate) fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// TSL's `GroupLine`: a forward scan of the grouping line (`XEventContextTracker`) finds the
/// event each event overlaps, remembering the last one found.
pub(crate) fn group_line(
    grouping: &XLine,
    groups: &[Option<i64>],
    group_stat: i64,
    line: &mut XLine,
) {
    let spans: Vec<(u64, u64)> = grouping
        .events
        .iter()
        .map(|e| timespan(grouping, e))
        .collect();
    let span_at = |i: usize| spans.get(i).copied().unwrap_or((0, 0));
    let mut tracker: Option<usize> = None;
    let mut cached: Option<usize> = None;
    let mut group: Option<i64> = None;
    let timestamp_ns = line.timestamp_ns;
    for event in &mut line.events {
        let begin = timestamp_ns
            .wrapping_mul(1000)
            .wrapping_add(event.offset_ps().unwrap_or(0)) as u64;
        let span = (begin, begin.wrapping_add(event.duration_ps as u64));
        if !cached.is_some_and(|c| overlaps(span_at(c), span)) {
            cached = None;
            if let Some(current) = tracker.filter(|&c| overlaps(span_at(c), span)) {
                cached = Some(current);
            } else {
                let from = tracker.map_or(0, |c| c + 1);
                for i in from..spans.len() {
                    let candidate = span_at(i);
                    if candidate.0 > span.1 {
                        break;
                    }
                    if candidate.1 < span.0 {
                        continue;
                    }
                    tracker = Some(i);
                    if overlaps(candidate, span) {
                        cached = Some(i);
                    }
                    break;
                }
            }
            group = cached.and_then(|c| groups.get(c).copied().flatten());
        }
        if let Some(group) = group {
            event.stats.push(XStat {
                metadata_id: group_stat,
                value: Some(x_stat::Value::Int64Value(group)),
            });
        }
    }
}

/// TSL's `MergeHostSteps` on the step line: steps without a group go (unless none has one),
/// consecutive steps of one group merge into the first, and each kept step gets its
/// `step_idle_time_ps` (and merged device times).
pub(crate) fn merge_host_steps(plane: &mut XPlane, step: usize, group_stat: i64) {
    let duration_stat = intern_stat(plane, "device_duration_ps");
    let offset_stat = intern_stat(plane, "device_offset_ps");
    let idle_stat = intern_stat(plane, "step_idle_time_ps");
    let Some(line) = plane.lines.get_mut(step) else {
        return;
    };
    let get =
        |e: &profkit_xplane::XEvent, id: i64| e.stats.iter().find(|s| s.metadata_id == id).cloned();
    let mut merged_group: Option<i64> = None;
    let mut merged_device: Option<(u64, u64)> = None;
    let mut merged_step: Option<usize> = None;
    let mut merged_idle: i64 = 0;
    let mut remove = vec![false; line.events.len()];
    let timestamp_ps = line.timestamp_ns.wrapping_mul(1000);
    for index in 0..line.events.len() {
        let Some(event) = line.events.get(index).cloned() else {
            continue;
        };
        let group = get(&event, group_stat).map(|s| int_value(&s));
        let device_span = |e: &profkit_xplane::XEvent| {
            let offset = get(e, offset_stat).map_or(0, |s| int_or_uint(&s));
            let duration = get(e, duration_stat).map_or(0, |s| int_or_uint(&s));
            (offset, offset.wrapping_add(duration))
        };
        match group {
            None => {
                merged_group = None;
                merged_step = None;
                merged_idle = 0;
                if let Some(r) = remove.get_mut(index) {
                    *r = true;
                }
            }
            Some(g) if merged_group != Some(g) => {
                merged_group = Some(g);
                merged_device = None;
                if let Some(idle) = get(&event, idle_stat) {
                    merged_idle = int_or_uint(&idle) as i64;
                }
                if get(&event, offset_stat).is_some() && get(&event, duration_stat).is_some() {
                    merged_device = Some(device_span(&event));
                }
                merged_step = Some(index);
                if let Some(e) = line.events.get_mut(index) {
                    set_or_add(
                        &mut e.stats,
                        idle_stat,
                        x_stat::Value::Int64Value(merged_idle),
                    );
                }
            }
            Some(_) => {
                if let Some(idle) = get(&event, idle_stat) {
                    merged_idle = merged_idle.wrapping_add(int_or_uint(&idle) as i64);
                }
                let end_ps = timespan_end(timestamp_ps, &event);
                if let Some(target) = merged_step.and_then(|m| line.events.get_mut(m)) {
                    if let Some(span) = merged_device.as_mut() {
                        let other = device_span(&event);
                        *span = (span.0.min(other.0), span.1.max(other.1));
                        set_or_add(
                            &mut target.stats,
                            offset_stat,
                            x_stat::Value::Uint64Value(span.0),
                        );
                        set_or_add(
                            &mut target.stats,
                            duration_stat,
                            x_stat::Value::Uint64Value(span.1.wrapping_sub(span.0)),
                        );
                    }
                    let start = timestamp_ps.wrapping_add(target.offset_ps().unwrap_or(0));
                    target.duration_ps = end_ps.wrapping_sub(start);
                    set_or_add(
                        &mut target.stats,
                        idle_stat,
                        x_stat::Value::Int64Value(merged_idle),
                    );
                }
                if let Some(r) = remove.get_mut(index) {
                    *r = true;
                }
            }
        }
    }
    let removed = remove.iter().filter(|r| **r).count();
    if removed < line.events.len() {
        let mut flags = remove.into_iter();
        line.events.retain(|_| !flags.next().unwrap_or(false));
    }
}

//! An XSpace back to the event model, so that Paddle's reports read any XSpace.

use std::collections::HashSet;

use profkit_events::span::{TypedRange, events_from_typed_ranges};
use profkit_events::{
    DeviceKind, DeviceSpan, Event, EventKind, MemEventKind, MemoryEvent, Name, Recording,
    ThreadEvents,
};
use profkit_xplane::constants::{
    COUNTERS_LINE_ID, COUNTERS_LINE_NAME, HOST_PLANE_NAME, TASK_ENV_PLANE_NAME, stats,
};
use profkit_xplane::{LineRole, PlaneVisitor, XSpace, line_role};

use super::*;

/// The session start an XSpace records (`profile_start_time` of its `Task Environment` plane),
/// 0 when it has none.
pub fn session_start_ns(space: &XSpace) -> u64 {
    space
        .planes
        .iter()
        .find(|p| p.name == TASK_ENV_PLANE_NAME)
        .and_then(|p| {
            PlaneVisitor::new(p)
                .stat(stats::PROFILE_START_TIME)
                .and_then(|s| s.value())
                .and_then(|v| v.as_u64())
        })
        .unwrap_or(0)
}

/// A memory event of the memory line.
pub(super) fn memory_event(event: &profkit_xplane::EventVisitor<'_>, start: u64) -> MemoryEvent {
    // Paddle's Chrome traces write some numbers as strings.
    let number = |name: &str| {
        event
            .stat(name)
            .and_then(|s| s.value())
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
    };
    MemoryEvent {
        ns: to_ns(start, event.timestamp_ps()),
        kind: MemEventKind::from_name(event.name()).unwrap_or(MemEventKind::Other(-1)),
        addr: number("addr").unwrap_or(0),
        place: event
            .stat("place")
            .and_then(|s| s.value())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        increase_bytes: event
            .stat("increase_bytes")
            .and_then(|s| s.value())
            .and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok()))
            .unwrap_or(0),
        current_allocated: number("current_allocated").unwrap_or(0),
        current_reserved: number("current_reserved").unwrap_or(0),
        peak_allocated: number("peak_allocated").unwrap_or(0),
        peak_reserved: number("peak_reserved").unwrap_or(0),
        process_id: number("process_id").unwrap_or(0),
        thread_id: number("thread_id").unwrap_or(0),
    }
}

/// The event model of an XSpace (see the module documentation).
pub fn xspace_to_recording(space: &XSpace) -> Recording {
    let start = session_start_ns(space);
    let mut recording = Recording::default();
    if let Some(env) = space.planes.iter().find(|p| p.name == TASK_ENV_PLANE_NAME) {
        recording.info = PlaneVisitor::new(env)
            .stats()
            .filter(|s| ![stats::PROFILE_START_TIME, stats::PROFILE_STOP_TIME].contains(&s.name()))
            .filter_map(|s| Some((s.name().to_owned(), stat_text(&s.value()?)?)))
            .collect();
    }
    if let Some(host) = space.planes.iter().find(|p| p.name == HOST_PLANE_NAME) {
        let visitor = PlaneVisitor::new(host);
        let mut used: HashSet<u32> = HashSet::new();
        for (index, line) in visitor.lines().enumerate() {
            if line.id() == COUNTERS_LINE_ID || line.name() == COUNTERS_LINE_NAME {
                continue;
            }
            if line.id() == MEMORY_LINE_ID && line.name() == MEMORY_LINE_NAME {
                for event in line.events() {
                    recording.memory_events.push(memory_event(&event, start));
                }
                continue;
            }
            let thread = thread_index(line.id(), index, &mut used);
            let mut ranges: Vec<TypedRange> = Vec::new();
            let mut marks: Vec<Event> = Vec::new();
            for event in line.events() {
                if event.is_aggregated() {
                    continue;
                }
                let begin = to_ns(start, event.timestamp_ps());
                let name = Name::Owned(event.name().to_owned());
                let is_mark = event.duration_ps() == 0
                    && event
                        .stat(MARK_STAT)
                        .and_then(|s| s.value())
                        .is_some_and(|v| v.as_str() == Some(MARK));
                let category = event
                    .stat(CATEGORY_STAT)
                    .or_else(|| event.stat("cat"))
                    .and_then(|s| s.value())
                    .and_then(|v| v.as_str().map(str::to_owned));
                let memory_kind = category.as_deref().and_then(MemEventKind::from_name);
                if let (Some(_), 0, true) = (
                    memory_kind,
                    event.duration_ps(),
                    event.stat("place").is_some(),
                ) {
                    // A memory event written as an instant with a memory category (as in Paddle's
                    // Chrome traces): memory, not a range.
                    let mut m = memory_event(&event, start);
                    m.kind = memory_kind.unwrap_or(MemEventKind::Other(-1));
                    m.thread_id = u64::try_from(line.id()).unwrap_or(0);
                    recording.memory_events.push(m);
                    continue;
                }
                if is_mark {
                    marks.push(Event::new(EventKind::Mark, name, thread, begin));
                } else {
                    let category = category.map(Name::Owned);
                    let args = event
                        .stats()
                        .filter(|s| !STRUCTURAL_STATS.contains(&s.name()))
                        .filter_map(|s| Some((s.name().to_owned(), stat_text(&s.value()?)?)))
                        .collect();
                    ranges.push(TypedRange {
                        name,
                        start_ns: begin,
                        end_ns: to_ns(start, event.end_timestamp_ps()),
                        category,
                        args,
                    });
                }
            }
            let mut events = events_from_typed_ranges(thread, ranges);
            for mark in marks {
                let at = events.partition_point(|e| e.cpu_ns <= mark.cpu_ns);
                events.insert(at, mark);
            }
            recording.threads.push(ThreadEvents {
                thread,
                name: Some(line.display_name().to_owned()),
                os_tid: u64::try_from(line.id()).ok(),
                events,
            });
        }
    }
    for plane in space
        .planes
        .iter()
        .filter(|p| p.name.starts_with("/device:"))
    {
        let visitor = PlaneVisitor::new(plane);
        let device = plane
            .name
            .rsplit(':')
            .next()
            .and_then(|n| n.parse::<i64>().ok())
            .unwrap_or(plane.id);
        let roles: Vec<LineRole> = visitor
            .lines()
            .map(|l| line_role(&plane.name, l.name()))
            .collect();
        let kept = device_activity_lines(&roles);
        for (line, keep) in visitor.lines().zip(kept) {
            if line.id() == COUNTERS_LINE_ID || !keep {
                continue;
            }
            for event in line.events() {
                if event.is_aggregated() {
                    continue;
                }
                let name = event.name();
                let has = |stat: &str| event.stat(stat).is_some();
                let kind = if has(stats::MEMCPY_DETAILS) || name.contains("emcpy") {
                    DeviceKind::Memcpy
                } else if name.contains("emset") {
                    DeviceKind::Memset
                } else {
                    DeviceKind::Kernel
                };
                recording.device_spans.push(DeviceSpan {
                    kind,
                    name: name.to_owned(),
                    device,
                    stream: u64::try_from(line.id()).unwrap_or(0),
                    start_ns: to_ns(start, event.timestamp_ps()),
                    end_ns: to_ns(start, event.end_timestamp_ps()),
                    detail: event
                        .stat("detail_info")
                        .and_then(|s| s.value())
                        .and_then(|v| v.as_str().map(str::to_owned)),
                    bytes: event
                        .stat("bytes")
                        .and_then(|s| s.value())
                        .and_then(|v| v.as_u64()),
                });
            }
        }
    }
    recording.memory_events.sort_by_key(|m| m.ns);
    recording
}

//! The event model (a recording) to an XSpace: a host plane of threads, memory events, device
//! planes, the session's facts.

use std::collections::{BTreeMap, HashSet};

use profkit_events::{DeviceKind, EventKind, MemPlace, Recording, ThreadEvents, Warning, pair};
use profkit_xplane::constants::{
    COUNTERS_LINE_ID, COUNTERS_LINE_NAME, HOST_PLANE_NAME, TASK_ENV_PLANE_NAME, stats,
};
use profkit_xplane::{PlaneBuilder, StatValue, XPlane, XSpace};

use super::*;

/// One event to put on a line: name, start and end in nanoseconds (absolute), stats.
pub(super) struct Item {
    pub(super) name: String,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) stats: Vec<(String, StatValue)>,
}

/// Picoseconds from `start` to `t` (nanoseconds), saturating.
pub(super) fn rel_ps(t: u64, start: u64) -> i64 {
    let ns = i128::from(t) - i128::from(start);
    i64::try_from(ns * 1000).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// Adds a line of `items` (sorted as TSL sorts: by start, longer first) to the plane.
pub(super) fn add_line(
    builder: &mut PlaneBuilder<'_>,
    id: i64,
    name: &str,
    start: u64,
    mut items: Vec<Item>,
) {
    items.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let first = items.first().map_or(start, |i| i.start);
    let line_start_ns = i64::try_from(first.saturating_sub(start)).unwrap_or(i64::MAX);
    let mut line = builder.line(id);
    line.set_name(name).set_timestamp_ns(line_start_ns);
    for item in items {
        let mut event = line.add_event(&item.name);
        event
            .set_offset_ps(rel_ps(item.start, first))
            .set_duration_ps(rel_ps(item.end.max(item.start), item.start));
        for (stat, value) in item.stats {
            event.add_stat(&stat, value);
        }
    }
}

pub(super) fn place_label(place: MemPlace) -> String {
    match place {
        MemPlace::Cpu => "cpu".into(),
        MemPlace::Cuda => "gpu".into(),
        MemPlace::CudaPinned => "cudapinned".into(),
        MemPlace::Xpu => "xpu".into(),
        MemPlace::Npu => "npu".into(),
        MemPlace::Other(code) => format!("place{code}"),
    }
}

/// The marks the recorder puts on the thread that starts and ends a session.
pub(super) const SESSION_MARKS: [&str; 2] = ["_start_profiler_", "_stop_profiler_"];

/// Whether `thread` recorded nothing but the session's marks: the thread that only enabled and
/// disabled the recorder.
pub(super) fn is_session_control(thread: &ThreadEvents) -> bool {
    !thread.events.is_empty()
        && thread
            .events
            .iter()
            .all(|e| e.kind == EventKind::Mark && SESSION_MARKS.contains(&e.name.as_ref()))
}

/// The XSpace of a recording, and the warnings of pairing its events (see the module
/// documentation).
pub fn recording_to_xspace(recording: &Recording) -> (XSpace, Vec<Warning>) {
    let spans = pair(&recording.threads);
    let warnings: Vec<Warning> = spans.warnings().cloned().collect();

    // The session: the earliest and latest time of anything recorded.
    let mut times = spans
        .threads
        .iter()
        .flat_map(|t| t.spans.iter().flat_map(|s| [s.start_ns, s.end_ns]))
        .chain(
            recording
                .threads
                .iter()
                .flat_map(|t| t.events.iter().map(|e| e.cpu_ns)),
        )
        .chain(
            recording
                .device_spans
                .iter()
                .flat_map(|d| [d.start_ns, d.end_ns]),
        )
        .chain(
            recording
                .memory
                .iter()
                .flat_map(|m| [m.start_ns, m.end_ns].into_iter().filter(|t| *t != 0)),
        )
        // Paddle's memory events too: a free after the last range (a garbage collector's) is
        // in the session, and one before the first range would otherwise be moved to its start.
        .chain(recording.memory_events.iter().map(|m| m.ns));
    let first = times.next();
    let (start, stop) = times.fold((first.unwrap_or(0), first.unwrap_or(0)), |(lo, hi), t| {
        (lo.min(t), hi.max(t))
    });
    // Offsets are picoseconds in an i64: times past that from the start are clamped (rel_ps),
    // and said so rather than changed silently.
    let mut warnings = warnings;
    let furthest_ns = i64::MAX.unsigned_abs() / 1000;
    if stop - start > furthest_ns {
        let beyond = |t: u64| t - start > furthest_ns;
        let count = spans
            .threads
            .iter()
            .flat_map(|t| &t.spans)
            .filter(|s| beyond(s.end_ns.max(s.start_ns)))
            .count()
            + recording
                .device_spans
                .iter()
                .filter(|d| beyond(d.end_ns.max(d.start_ns)))
                .count()
            + recording
                .memory
                .iter()
                .filter(|m| beyond(m.end_ns.max(m.start_ns)))
                .count();
        let count = count as u64;
        warnings.push(Warning::TimesClamped {
            count,
            span_ns: stop - start,
        });
    }

    let mut space = XSpace::default();
    let mut host = XPlane::default();
    {
        let mut builder = PlaneBuilder::new(&mut host);
        builder.set_id(0).set_name(HOST_PLANE_NAME);
        let mut used: HashSet<i64> = HashSet::new();
        for (thread, thread_spans) in recording.threads.iter().zip(&spans.threads) {
            if is_session_control(thread) {
                continue;
            }
            let wanted = thread
                .os_tid
                .and_then(|t| i64::try_from(t).ok())
                .filter(|t| !used.contains(t) && *t != COUNTERS_LINE_ID);
            let mut id = wanted.unwrap_or(i64::from(thread.thread));
            while used.contains(&id) || id == COUNTERS_LINE_ID {
                id = id.wrapping_add(1);
            }
            used.insert(id);
            let mut items: Vec<Item> = thread_spans
                .spans
                .iter()
                .map(|span| {
                    let mut stats = Vec::new();
                    if let (Some(a), Some(b)) = (span.device_start, span.device_end) {
                        if a.device == b.device {
                            stats.push((
                                stats::DEVICE_ID.to_owned(),
                                StatValue::Int64(i64::from(a.device)),
                            ));
                            stats.push((
                                "device_duration_ps".to_owned(),
                                StatValue::Int64(rel_ps(b.ns, a.ns)),
                            ));
                        }
                    }
                    if let Some(push) = thread.events.get(span.push_index) {
                        if let Some(category) = &push.category {
                            stats.push((
                                CATEGORY_STAT.to_owned(),
                                StatValue::Str(category.to_string()),
                            ));
                        }
                        for (k, v) in &push.args {
                            stats.push((k.clone(), StatValue::Str(v.clone())));
                        }
                    }
                    Item {
                        name: span.name.to_string(),
                        start: span.start_ns,
                        end: span.end_ns,
                        stats,
                    }
                })
                .collect();
            for &mark in &thread_spans.marks {
                if let Some(event) = thread.events.get(mark) {
                    items.push(Item {
                        name: event.name.to_string(),
                        start: event.cpu_ns,
                        end: event.cpu_ns,
                        stats: vec![(MARK_STAT.to_owned(), StatValue::Str(MARK.into()))],
                    });
                }
            }
            let name = thread
                .name
                .clone()
                .unwrap_or_else(|| format!("thread {}", thread.thread));
            add_line(&mut builder, id, &name, start, items);
        }
        // Memory: the bytes in use per place, at every allocation and free; Paddle's memory
        // events as a line of their own and as counters of allocated and reserved bytes.
        let mut changes: BTreeMap<String, Vec<(u64, i128)>> = BTreeMap::new();
        for m in &recording.memory {
            let series = format!("memory {}:{}", place_label(m.place), m.device);
            let entry = changes.entry(series).or_default();
            entry.push((m.start_ns, i128::from(m.bytes)));
            if m.end_ns != 0 {
                entry.push((m.end_ns, -i128::from(m.bytes)));
            }
        }
        let mut levels: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
        for m in &recording.memory_events {
            levels
                .entry(format!("memory allocated {}", m.place))
                .or_default()
                .push((m.ns, m.current_allocated));
            levels
                .entry(format!("memory reserved {}", m.place))
                .or_default()
                .push((m.ns, m.current_reserved));
        }
        if !recording.memory_events.is_empty() {
            let items = recording
                .memory_events
                .iter()
                .map(|m| Item {
                    name: m.kind.name(),
                    start: m.ns,
                    end: m.ns,
                    stats: vec![
                        (CATEGORY_STAT.to_owned(), StatValue::Str(m.kind.name())),
                        ("place".to_owned(), StatValue::Str(m.place.clone())),
                        ("addr".to_owned(), StatValue::Uint64(m.addr)),
                        (
                            "increase_bytes".to_owned(),
                            StatValue::Int64(m.increase_bytes),
                        ),
                        (
                            "current_allocated".to_owned(),
                            StatValue::Uint64(m.current_allocated),
                        ),
                        (
                            "current_reserved".to_owned(),
                            StatValue::Uint64(m.current_reserved),
                        ),
                        (
                            "peak_allocated".to_owned(),
                            StatValue::Uint64(m.peak_allocated),
                        ),
                        (
                            "peak_reserved".to_owned(),
                            StatValue::Uint64(m.peak_reserved),
                        ),
                        ("process_id".to_owned(), StatValue::Uint64(m.process_id)),
                        ("thread_id".to_owned(), StatValue::Uint64(m.thread_id)),
                    ],
                })
                .collect();
            add_line(&mut builder, MEMORY_LINE_ID, MEMORY_LINE_NAME, start, items);
        }
        if !changes.is_empty() || !levels.is_empty() {
            let mut line = builder.line(COUNTERS_LINE_ID);
            line.set_name(COUNTERS_LINE_NAME).set_timestamp_ns(0);
            for (series, mut list) in changes {
                list.sort_by_key(|c| c.0);
                let mut total: i128 = 0;
                let mut i = 0;
                while let Some(&(t, _)) = list.get(i) {
                    while let Some(&(u, size)) = list.get(i) {
                        if u != t {
                            break;
                        }
                        total += size;
                        i += 1;
                    }
                    line.add_event(&series)
                        .set_offset_ps(rel_ps(t, start))
                        .add_stat("bytes_in_use", i64::try_from(total).unwrap_or(i64::MAX));
                }
            }
            for (series, list) in levels {
                for (t, bytes) in list {
                    line.add_event(&series)
                        .set_offset_ps(rel_ps(t, start))
                        .add_stat("bytes", bytes);
                }
            }
        }
    }
    space.planes.push(host);

    // Device activity: a plane per device, a line per stream.
    let mut devices: BTreeMap<(bool, i64), BTreeMap<u64, Vec<Item>>> = BTreeMap::new();
    for d in &recording.device_spans {
        let npu = d.kind == DeviceKind::NpuKernel;
        let mut stats = Vec::new();
        if let Some(detail) = &d.detail {
            stats.push(("detail_info".to_owned(), StatValue::Str(detail.clone())));
        }
        if let Some(bytes) = d.bytes {
            stats.push(("bytes".to_owned(), StatValue::Uint64(bytes)));
        }
        let kind = match d.kind {
            DeviceKind::Kernel | DeviceKind::NpuKernel => "kernel".to_owned(),
            DeviceKind::Memcpy => "memcpy".to_owned(),
            DeviceKind::Memset => "memset".to_owned(),
            DeviceKind::Other(code) => format!("type {code}"),
        };
        stats.push(("kind".to_owned(), StatValue::Str(kind)));
        devices
            .entry((npu, d.device))
            .or_default()
            .entry(d.stream)
            .or_default()
            .push(Item {
                name: d.name.clone(),
                start: d.start_ns,
                end: d.end_ns,
                stats,
            });
    }
    let mut next_id = 1;
    for ((npu, device), streams) in devices {
        let mut plane = XPlane::default();
        let prefix = if npu {
            "/device:CUSTOM:"
        } else {
            "/device:GPU:"
        };
        {
            let mut builder = PlaneBuilder::new(&mut plane);
            builder
                .set_id(next_id)
                .set_name(format!("{prefix}{device}"));
            builder.add_stat(stats::DEVICE_ID, device);
            for (stream, items) in streams {
                let id = i64::try_from(stream).unwrap_or(i64::MAX);
                add_line(&mut builder, id, &format!("Stream #{stream}"), start, items);
            }
        }
        next_id += 1;
        space.planes.push(plane);
    }

    let mut env = XPlane::default();
    {
        let mut builder = PlaneBuilder::new(&mut env);
        builder.set_id(next_id).set_name(TASK_ENV_PLANE_NAME);
        builder.add_stat(stats::PROFILE_START_TIME, start);
        builder.add_stat(stats::PROFILE_STOP_TIME, stop);
        for (key, value) in &recording.info {
            builder.add_stat(key, value.clone());
        }
    }
    space.planes.push(env);
    (space, warnings)
}

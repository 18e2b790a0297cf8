//! The event model (the recorder's output, Paddle's files) to XSpace and back.
//!
//! To XSpace: the paired ranges of each thread become the events of a line of `/host:CPU` (the
//! line id is the thread's OS id when known and unique, else its profiler index; the line name
//! its name, or `thread <index>`), nested as they were recorded, with one event metadata per
//! name; marks become events without duration marked by an `event_kind` stat of `mark` (but a
//! thread that holds nothing but the session's own marks, `_start_profiler_` and
//! `_stop_profiler_`, which the recorder puts on the thread that enables and disables it, gets
//! no line: it would show as a thread that did nothing, and the session's start and end are the
//! `Task Environment` plane's `profile_start_time` and `profile_stop_time`); device activity goes to `/device:GPU:<n>`
//! (`/device:CUSTOM:<n>` for NPU kernels) planes, a line per stream; memory records become
//! counters of the bytes in use per place on the host plane's `_counters_` line. Times are made
//! relative to the earliest one, as TensorFlow writes files for xprof, and the `Task
//! Environment` plane keeps that start (`profile_start_time`, nanoseconds since the epoch) and
//! the end, so that converting back gives the original timestamps. Ranges that do not pair are
//! left out, with the pairing's warnings returned.
//!
//! From XSpace: each line of `/host:CPU` (but the counter line) is a thread (its index the line
//! id when that fits and is free, else the line's position) whose events are ranges (events marked
//! `event_kind: mark` are marks), and the events of device planes' streams and `XLA Ops` lines
//! are device spans (not the steps, name scopes, framework ops or modules derived from them:
//! see [`profkit_xplane::LineRole`]); times are
//! `profile_start_time` plus the event's offset, in whole nanoseconds.

use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Seek, SeekFrom};

use profkit_events::report::summary::{EventType, Forest, ForestBuilder, Mem};
use profkit_events::span::{TypedRange, events_from_typed_ranges, paired_ranges};
use profkit_events::{
    DeviceKind, DeviceSpan, Event, EventKind, MemEventKind, MemPlace, MemoryEvent, Name, Recording,
    ThreadEvents, Warning, pair,
};
use profkit_xplane::constants::{
    COUNTERS_LINE_ID, COUNTERS_LINE_NAME, HOST_PLANE_NAME, TASK_ENV_PLANE_NAME, stats,
};
use profkit_xplane::xview::{PlaneMetadata, XEventView, XPlaneView};
use profkit_xplane::{
    LineRole, PlaneBuilder, PlaneVisitor, RawSpaceItem, ReadOptions, StatValue, StatValueRef,
    XPlane, XSpace, XSpaceReader, line_role,
};

/// The stat that holds an event's category (a Paddle node's event type); the Chrome trace writer
/// writes it as the event's `cat`, and reading takes a Chrome trace's `cat` stat as one too.
pub const CATEGORY_STAT: &str = profkit_chrome::CATEGORY_STAT;

/// The name of the host plane's line of memory events (Paddle's memory nodes), one instant
/// event per allocator event, named by its kind, its fields as stats.
pub const MEMORY_LINE_NAME: &str = "Memory events";
/// Its id.
pub const MEMORY_LINE_ID: i64 = i64::MAX - 1;

/// Stats that say how an event was written rather than what the source gave it.
const STRUCTURAL_STATS: [&str; 5] = [
    MARK_STAT,
    CATEGORY_STAT,
    "cat",
    "device_id",
    "device_duration_ps",
];

/// The stat that tells a mark from a range without duration.
pub const MARK_STAT: &str = "event_kind";
/// Its value for a mark.
pub const MARK: &str = "mark";

/// One event to put on a line: name, start and end in nanoseconds (absolute), stats.
struct Item {
    name: String,
    start: u64,
    end: u64,
    stats: Vec<(String, StatValue)>,
}

/// Picoseconds from `start` to `t` (nanoseconds), saturating.
fn rel_ps(t: u64, start: u64) -> i64 {
    let ns = i128::from(t) - i128::from(start);
    i64::try_from(ns * 1000).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// Adds a line of `items` (sorted as TSL sorts: by start, longer first) to the plane.
fn add_line(builder: &mut PlaneBuilder<'_>, id: i64, name: &str, start: u64, mut items: Vec<Item>) {
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

fn place_label(place: MemPlace) -> String {
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
const SESSION_MARKS: [&str; 2] = ["_start_profiler_", "_stop_profiler_"];

/// Whether `thread` recorded nothing but the session's marks: the thread that only enabled and
/// disabled the recorder.
fn is_session_control(thread: &ThreadEvents) -> bool {
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

/// Nanoseconds since `start` of a picosecond time, clamped to what a `u64` holds.
fn to_ns(start: u64, ps: i128) -> u64 {
    let ns = i128::from(start) + ps.div_euclid(1000);
    u64::try_from(ns.max(0)).unwrap_or(u64::MAX)
}

/// A stat's value as text (`None` for bytes).
fn stat_text(value: &StatValueRef<'_>) -> Option<String> {
    Some(match value {
        StatValueRef::Double(v) => v.to_string(),
        StatValueRef::Uint64(v) => v.to_string(),
        StatValueRef::Int64(v) => v.to_string(),
        StatValueRef::Str(v) => (*v).to_owned(),
        StatValueRef::Ref(v) => (*v).to_owned(),
        _ => return None,
    })
}

/// A memory event of the memory line.
fn memory_event(event: &profkit_xplane::EventVisitor<'_>, start: u64) -> MemoryEvent {
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

/// The summary's trees ([`Forest`]) of an XSpace, read plane by plane through views: what
/// `Forest::from_recording(&xspace_to_recording(&space))` gives, without the decoded space or the
/// event model. Memory is the largest plane's encoded bytes and the forest (a node per host
/// range; device activity is kept per device and type as time ranges, and per kernel name).
///
/// `source` is read twice: first up to the `Task Environment` plane, whose session start every
/// time is relative to, then whole. Each plane is checked in full before it is walked, so a
/// damaged file is refused with the error reading it whole would give.
pub fn xspace_forest<R: Read + Seek>(mut source: R, options: ReadOptions) -> crate::Result<Forest> {
    let mut builder = ForestBuilder::new();
    let start = session_start_streamed(&mut source, options, &mut builder);
    source.seek(SeekFrom::Start(0))?;
    let mut reader = XSpaceReader::new(source, options);
    let mut host_seen = false;
    while let Some(item) = reader.next_raw() {
        let RawSpaceItem::Plane(plane) = item? else {
            continue;
        };
        let view = plane.view()?;
        view.check()?;
        if view.name() == HOST_PLANE_NAME && !host_seen {
            host_seen = true;
            host_plane_forest(&view, start, &mut builder)?;
        } else if view.name().starts_with("/device:") {
            device_plane_forest(&view, start, &mut builder)?;
        }
    }
    Ok(builder.finish())
}

/// The session start and the run's information, from the first `Task Environment` plane; 0 and
/// none when there is none, or when the input fails before it (the second pass reports that).
fn session_start_streamed<R: Read>(
    source: &mut R,
    options: ReadOptions,
    builder: &mut ForestBuilder,
) -> u64 {
    let mut reader = XSpaceReader::new(source, options);
    while let Some(Ok(item)) = reader.next_raw() {
        let RawSpaceItem::Plane(plane) = item else {
            continue;
        };
        let Ok(view) = plane.view() else { return 0 };
        if view.name() != TASK_ENV_PLANE_NAME {
            continue;
        }
        let Ok(metadata) = view.metadata() else {
            return 0;
        };
        let start_id = metadata.stat_id(stats::PROFILE_START_TIME);
        let mut start = None;
        let mut info = Vec::new();
        for stat in view.stats() {
            let Ok(stat) = stat else { return 0 };
            let value = stat.value().map(|v| metadata.resolve(v));
            if start.is_none() && start_id == Some(stat.metadata_id()) {
                start = Some(value.as_ref().and_then(|v| v.as_u64()).unwrap_or(0));
            }
            let name = metadata.stat_name(stat.metadata_id());
            if [stats::PROFILE_START_TIME, stats::PROFILE_STOP_TIME].contains(&name) {
                continue;
            }
            if let Some(text) = value.as_ref().and_then(stat_text) {
                info.push((name.to_owned(), text));
            }
        }
        for (key, value) in info {
            builder.info(key, value);
        }
        return start.unwrap_or(0);
    }
    0
}

/// The value of the stat with metadata id `id` on a viewed event: its own first, then its
/// metadata's, as [`profkit_xplane::EventVisitor::stat`] finds it: `Some(None)` for a stat found
/// without a value.
fn view_stat<'a>(
    event: &XEventView<'a>,
    metadata: &PlaneMetadata<'a>,
    id: Option<i64>,
) -> crate::Result<Option<Option<StatValueRef<'a>>>> {
    let Some(id) = id else { return Ok(None) };
    for stat in event.stats() {
        let stat = stat?;
        if stat.metadata_id() == id {
            return Ok(Some(stat.value().map(|v| metadata.resolve(v))));
        }
    }
    let own = metadata.event(event.metadata_id());
    let found = own.and_then(|md| md.stats().iter().find(|s| s.metadata_id() == id));
    Ok(found.map(|s| s.value().map(|v| metadata.resolve(v))))
}

/// The stat ids a memory event reads.
struct MemoryStats {
    place: Option<i64>,
    increase_bytes: Option<i64>,
    peak_allocated: Option<i64>,
    peak_reserved: Option<i64>,
    thread_id: Option<i64>,
}

impl MemoryStats {
    fn new(metadata: &PlaneMetadata<'_>) -> MemoryStats {
        MemoryStats {
            place: metadata.stat_id("place"),
            increase_bytes: metadata.stat_id("increase_bytes"),
            peak_allocated: metadata.stat_id("peak_allocated"),
            peak_reserved: metadata.stat_id("peak_reserved"),
            thread_id: metadata.stat_id("thread_id"),
        }
    }

    /// The summary's memory event of a viewed event, as [`memory_event`] reads it.
    fn mem(
        &self,
        event: &XEventView<'_>,
        metadata: &PlaneMetadata<'_>,
        kind: MemEventKind,
    ) -> crate::Result<Mem> {
        // Paddle's Chrome traces write some numbers as strings.
        let number = |id| -> crate::Result<Option<u64>> {
            Ok(view_stat(event, metadata, id)?
                .flatten()
                .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok())))
        };
        Ok(Mem {
            kind,
            place: view_stat(event, metadata, self.place)?
                .flatten()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            increase_bytes: view_stat(event, metadata, self.increase_bytes)?
                .flatten()
                .and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok()))
                .unwrap_or(0),
            peak_allocated: number(self.peak_allocated)?.unwrap_or(0),
            peak_reserved: number(self.peak_reserved)?.unwrap_or(0),
        })
    }
}

/// The threads of the host plane (as [`xspace_to_recording`] reads them) into the forest.
fn host_plane_forest(
    plane: &XPlaneView<'_>,
    start: u64,
    builder: &mut ForestBuilder,
) -> crate::Result<()> {
    let metadata = plane.metadata()?;
    let mark_id = metadata.stat_id(MARK_STAT);
    let category_id = metadata.stat_id(CATEGORY_STAT);
    let cat_id = metadata.stat_id("cat");
    let memory = MemoryStats::new(metadata);
    let mut used: HashSet<u32> = HashSet::new();
    // One line's ranges (name, start, end) and their types, reused.
    let mut ranges: Vec<(&str, u64, u64)> = Vec::new();
    let mut types: Vec<EventType> = Vec::new();
    for (index, line) in plane.lines().enumerate() {
        let line = line?;
        if line.id() == COUNTERS_LINE_ID || line.name() == COUNTERS_LINE_NAME {
            continue;
        }
        if line.id() == MEMORY_LINE_ID && line.name() == MEMORY_LINE_NAME {
            for event in line.events() {
                let event = event?;
                let kind = MemEventKind::from_name(metadata.event_name(event.metadata_id()))
                    .unwrap_or(MemEventKind::Other(-1));
                let thread_id = view_stat(&event, metadata, memory.thread_id)?
                    .flatten()
                    .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
                    .unwrap_or(0);
                let mem = memory.mem(&event, metadata, kind)?;
                builder.memory(thread_id, to_ns(start, event.timestamp_ps()), mem);
            }
            continue;
        }
        let thread = thread_index(line.id(), index, &mut used);
        let tid = u64::try_from(line.id()).unwrap_or(u64::from(thread));
        ranges.clear();
        types.clear();
        for event in line.events() {
            let event = event?;
            if event.is_aggregated() {
                continue;
            }
            let begin = to_ns(start, event.timestamp_ps());
            let is_mark = event.duration_ps() == 0
                && view_stat(&event, metadata, mark_id)?
                    .flatten()
                    .is_some_and(|v| v.as_str() == Some(MARK));
            let category = match view_stat(&event, metadata, category_id)? {
                Some(found) => Some(found),
                None => view_stat(&event, metadata, cat_id)?,
            };
            let category = category.flatten().and_then(|v| v.as_str());
            if let Some(kind) = category.and_then(MemEventKind::from_name)
                && event.duration_ps() == 0
                && view_stat(&event, metadata, memory.place)?.is_some()
            {
                // A memory event written as an instant with a memory category.
                let mem = memory.mem(&event, metadata, kind)?;
                builder.memory(u64::try_from(line.id()).unwrap_or(0), begin, mem);
                continue;
            }
            if is_mark {
                continue;
            }
            let name = metadata.event_name(event.metadata_id());
            ranges.push((name, begin, to_ns(start, event.end_timestamp_ps())));
            types.push(EventType::from_category(category));
        }
        let spans = paired_ranges(&ranges);
        let name = line.display_name();
        builder.thread_name(tid, if name.is_empty() { line.name() } else { name });
        builder.thread(
            tid,
            spans.iter().filter_map(|&(j, begin, end)| {
                let (name, _, _) = ranges.get(j)?;
                Some((*name, *types.get(j)?, begin, end))
            }),
        );
    }
    Ok(())
}

/// The device activity of a device plane (as [`xspace_to_recording`] reads it) into the forest.
fn device_plane_forest(
    plane: &XPlaneView<'_>,
    start: u64,
    builder: &mut ForestBuilder,
) -> crate::Result<()> {
    let metadata = plane.metadata()?;
    let device = plane
        .name()
        .rsplit(':')
        .next()
        .and_then(|n| n.parse::<i64>().ok())
        .unwrap_or(plane.id());
    let device = u64::try_from(device).unwrap_or(0);
    let memcpy_id = metadata.stat_id(stats::MEMCPY_DETAILS);
    let mut roles = Vec::with_capacity(plane.line_count());
    for line in plane.lines() {
        roles.push(line_role(plane.name(), line?.name()));
    }
    let kept = device_activity_lines(&roles);
    for (line, keep) in plane.lines().zip(kept) {
        let line = line?;
        if line.id() == COUNTERS_LINE_ID || !keep {
            continue;
        }
        for event in line.events() {
            let event = event?;
            if event.is_aggregated() {
                continue;
            }
            let name = metadata.event_name(event.metadata_id());
            let ty = if view_stat(&event, metadata, memcpy_id)?.is_some() || name.contains("emcpy")
            {
                EventType::Memcpy
            } else if name.contains("emset") {
                EventType::Memset
            } else {
                EventType::Kernel
            };
            builder.device_span(
                name,
                ty,
                device,
                to_ns(start, event.timestamp_ps()),
                to_ns(start, event.end_timestamp_ps()),
            );
        }
    }
    Ok(())
}

/// Which lines of a device plane (by their roles) hold its activity, the kernels and copies of
/// the summary: the streams and `XLA Ops` lines ([`LineRole::holds_device_ops`]); the other
/// lines (steps, name scopes, framework ops, modules) hold the same instants again, grouped. A
/// plane without such lines keeps the lines of no known role.
fn device_activity_lines(roles: &[LineRole]) -> Vec<bool> {
    let any_ops = roles.iter().any(|r| r.holds_device_ops());
    roles
        .iter()
        .map(|r| r.holds_device_ops() || (!any_ops && *r == LineRole::Other))
        .collect()
}

/// The thread index of a line: its id when that is one and free, else its position, else the next
/// free index after it; taken from `used`.
fn thread_index(line_id: i64, position: usize, used: &mut HashSet<u32>) -> u32 {
    let mut thread = u32::try_from(line_id)
        .ok()
        .filter(|t| !used.contains(t))
        .unwrap_or_else(|| u32::try_from(position).unwrap_or(u32::MAX));
    while used.contains(&thread) {
        thread = thread.wrapping_add(1);
    }
    used.insert(thread);
    thread
}

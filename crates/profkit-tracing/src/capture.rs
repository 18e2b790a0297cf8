//! A session's spans, and the XSpace they become.
//!
//! Each thread that recorded is a line of the host plane `/host:CPU`, as TensorFlow lays out its
//! host threads: the line's id is the thread's id in the operating system (on Linux; elsewhere,
//! or should two lines share one, the recorder's thread index), its name the thread's name (an
//! unnamed thread is named after the first span it entered, with its index). A push and the pop
//! of the same name that closes it (searching down the thread's stack, as the recorder's own
//! pairing does) are one event, named by the span, its kept fields as stats (numbers as numbers,
//! booleans and text as text); a span still open when the session ended ends there, with the stat
//! `open_at_end` = `true` (as does a span whose end was dropped at the memory cap: past the cap, a
//! thread records nothing more). An event of `tracing` is an event without duration named by its
//! `message` field if it has one (else by `tracing`'s name for it), its other fields as stats. A
//! `follows_from` link is a flow (a `flow` stat, as TensorFlow links events; category 0, generic)
//! out of an event of the span followed and into one of the follower (see
//! `Capture::add_flows`).
//! Times are relative to the session's start, kept in the `Task Environment` plane as
//! `profile_start_time` (nanoseconds since the Unix epoch) with `profile_stop_time`, as
//! TensorFlow writes a profile for xprof; what was dropped at the memory cap is counted there too
//! (`dropped_events`, `dropped_fields`).

use std::collections::HashMap;

use profkit_events::{EventKind, Recording, ThreadEvents};
use profkit_xplane::constants::{HOST_PLANE_NAME, TASK_ENV_PLANE_NAME, stats};
use profkit_xplane::flow::{self, Flow};
use profkit_xplane::{PlaneBuilder, StatValue, XPlane, XSpace};

use crate::fields::Value;
use crate::layer::{LINK_MARK, THREAD_MARK};
use crate::store::{FIRST_SERIAL, Info, SpanKey, Store};

/// The marks the recorder puts on the thread that starts and ends a session.
const SESSION_MARKS: [&str; 2] = ["_start_profiler_", "_stop_profiler_"];

/// The stat of a span still open when its session ended (or whose end came after its thread
/// reached the memory cap).
pub const OPEN_STAT: &str = "open_at_end";
/// The `Task Environment` stat counting events dropped at the memory cap.
pub const DROPPED_EVENTS_STAT: &str = "dropped_events";
/// The `Task Environment` stat counting fields and links dropped at the memory cap.
pub const DROPPED_FIELDS_STAT: &str = "dropped_fields";

/// The clock the times of an output are on (see [`crate::Builder::clock`]).
///
/// The recorder reads the processor's monotonic time-stamp counter, anchored once, when the
/// session starts, to the wall clock: every recorded time is nanoseconds since the Unix epoch
/// that never jumps (a changed system time or an NTP step during the session moves nothing).
/// The clock decides how an output counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Clock {
    /// The session's own monotonic time: events at their time since the session's start (the
    /// first event recorded at 0), as TensorFlow writes a profile to disk; an XSpace keeps the
    /// start, in nanoseconds since the Unix epoch, as the `Task Environment` plane's
    /// `profile_start_time`, which is how xprof places it. The default.
    #[default]
    Monotonic,
    /// The wall clock: events at their time since the Unix epoch, as TensorFlow's host plane
    /// holds them before it writes the profile (and as [`Capture::host_plane_absolute`] hands
    /// them to TensorFlow), so that the times line up with other profiles of the same run.
    /// `profile_start_time` is the same as with [`Clock::Monotonic`]. An XSpace file cannot hold
    /// such times (its readers add a line's nanoseconds and an event's picoseconds in 64 bits,
    /// which overflows past 106 days; `profkit validate` calls it an error), nor can the Chrome
    /// JSON written from one: this clock is for a Parquet output (exact `decimal128`
    /// picoseconds) and for [`Capture::to_xspace_on`] in memory.
    Unix,
}

/// What a session recorded: the recorder's events and what the layer kept beside them.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    /// The recorder's events, per thread.
    pub recording: Recording,
    /// The fields and links of spans and events, by the serial their events carry as tag.
    pub infos: HashMap<u64, Info>,
    /// Fields and links dropped at the memory cap.
    pub dropped_fields: u64,
}

impl Capture {
    pub(crate) fn new(recording: Recording, store: Store) -> Capture {
        let dropped_fields = store.dropped;
        Capture {
            recording,
            infos: store.infos(),
            dropped_fields,
        }
    }

    /// Events (pushes, pops, marks) dropped at the memory cap.
    pub fn dropped_events(&self) -> u64 {
        self.recording.dropped
    }

    /// Appends a later session's capture (threads matched by their recorder index, so that a
    /// span entered before a flush and exited after it pairs).
    pub(crate) fn append(&mut self, later: Capture) {
        for thread in later.recording.threads {
            match self
                .recording
                .threads
                .iter_mut()
                .find(|t| t.thread == thread.thread)
            {
                Some(mine) => mine.events.extend(thread.events),
                None => self.recording.threads.push(thread),
            }
        }
        self.recording.threads.sort_by_key(|t| t.thread);
        self.recording.dropped += later.recording.dropped;
        self.infos.extend(later.infos);
        self.dropped_fields += later.dropped_fields;
    }

    /// Bytes the capture holds, roughly.
    pub(crate) fn bytes(&self) -> usize {
        self.recording.event_count() * std::mem::size_of::<profkit_events::Event>()
            + self
                .infos
                .values()
                .map(|i| 64 + i.fields.iter().map(|(_, v)| v.bytes() + 16).sum::<usize>())
                .sum::<usize>()
    }

    /// The spans and events as a host plane and a `Task Environment` plane (see the module
    /// documentation), times relative to the session's start ([`Clock::Monotonic`]).
    pub fn to_xspace(&self) -> XSpace {
        self.to_xspace_on(Clock::Monotonic)
    }

    /// [`Capture::to_xspace`] with the times on `clock`: relative to the session's start, or
    /// since the Unix epoch.
    pub fn to_xspace_on(&self, clock: Clock) -> XSpace {
        let (start, stop) = self.bounds();
        let origin = match clock {
            Clock::Monotonic => start,
            Clock::Unix => 0,
        };
        let mut space = XSpace::default();
        space.planes.push(self.host_plane(origin, stop));
        let mut env = XPlane::default();
        {
            let mut builder = PlaneBuilder::new(&mut env);
            builder.set_id(1).set_name(TASK_ENV_PLANE_NAME);
            builder.add_stat(stats::PROFILE_START_TIME, start);
            builder.add_stat(stats::PROFILE_STOP_TIME, stop);
            if self.dropped_events() > 0 {
                builder.add_stat(DROPPED_EVENTS_STAT, self.dropped_events());
            }
            if self.dropped_fields > 0 {
                builder.add_stat(DROPPED_FIELDS_STAT, self.dropped_fields);
            }
        }
        space.planes.push(env);
        space
    }

    /// The host plane alone with times since the Unix epoch, as a TensorFlow profiler plugin
    /// hands its planes over (TensorFlow makes them relative when it writes the profile).
    pub fn host_plane_absolute(&self) -> XPlane {
        let (_, stop) = self.bounds();
        self.host_plane(0, stop)
    }

    /// The earliest and latest time recorded, in nanoseconds since the Unix epoch.
    fn bounds(&self) -> (u64, u64) {
        let mut times = self
            .recording
            .threads
            .iter()
            .flat_map(|t| t.events.iter().map(|e| e.cpu_ns));
        let first = times.next().unwrap_or(0);
        times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t)))
    }

    /// The host plane, times relative to `origin`; spans still open end at `stop`.
    fn host_plane(&self, origin: u64, stop: u64) -> XPlane {
        let mut lines: Vec<Line> = self
            .recording
            .threads
            .iter()
            .filter_map(|t| self.line(t, stop))
            .collect();
        self.add_flows(&mut lines);
        // Line ids are thread ids, as TensorFlow's, where every line has one of its own (else
        // every line keeps the recorder's thread index, which cannot collide).
        let mut tids: Vec<i64> = lines.iter().filter_map(|l| l.tid).collect();
        tids.sort_unstable();
        tids.dedup();
        if tids.len() == lines.len() {
            for line in &mut lines {
                line.id = line.tid.unwrap_or(line.id);
            }
        }
        let mut plane = XPlane::default();
        let mut builder = PlaneBuilder::new(&mut plane);
        builder.set_id(0).set_name(HOST_PLANE_NAME);
        for line in lines {
            let first = line.items.first().map_or(origin, |i| i.start);
            let mut out = builder.line(line.id);
            out.set_name(line.name)
                .set_timestamp_ns(ns_between(origin, first));
            for item in line.items {
                let mut event = out.add_event(&item.name);
                event
                    .set_offset_ps(ps_between(first, item.start))
                    .set_duration_ps(ps_between(item.start, item.end.max(item.start)));
                for (name, value) in item.stats {
                    event.add_stat(name, value);
                }
                for flow in item.flows {
                    event.add_stat(flow::FLOW_STAT, flow.encode());
                }
            }
        }
        plane
    }

    /// One thread's line, `None` if it holds nothing but the session's marks.
    fn line(&self, thread: &ThreadEvents, stop: u64) -> Option<Line> {
        let events = &thread.events;
        let mut items = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        for (index, event) in events.iter().enumerate() {
            match event.kind {
                EventKind::PushRange => open.push(index),
                EventKind::PopRange => {
                    let found = open
                        .iter()
                        .rposition(|&i| events.get(i).is_some_and(|e| e.name == event.name));
                    if let Some(at) = found {
                        let push = open.remove(at);
                        if let Some(push) = events.get(push) {
                            items.push(self.item(push, event.cpu_ns, false));
                        }
                    }
                }
                EventKind::Mark => {
                    if (event.tag.is_none() && SESSION_MARKS.contains(&event.name.as_ref()))
                        || event.name == LINK_MARK
                        || event.name == THREAD_MARK
                    {
                        continue;
                    }
                    items.push(self.item(event, event.cpu_ns, false));
                }
            }
        }
        for push in open {
            if let Some(push) = events.get(push) {
                items.push(self.item(push, stop, true));
            }
        }
        if items.is_empty() {
            return None;
        }
        // As TensorFlow sorts a line: by start, the longer (enclosing) event first.
        items.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        let name = match (&thread.name, items.iter().find(|i| i.span)) {
            (Some(name), _) => name.clone(),
            (None, Some(first)) => format!("{} #{}", first.name, thread.thread),
            (None, None) => format!("thread {}", thread.thread),
        };
        let tid = events
            .iter()
            .find(|e| e.kind == EventKind::Mark && e.name == THREAD_MARK)
            .and_then(|e| e.tag)
            .and_then(|t| i64::try_from(t).ok());
        Some(Line {
            id: i64::from(thread.thread),
            tid,
            name,
            items,
        })
    }

    fn item(&self, event: &profkit_events::Event, end: u64, open: bool) -> Item {
        let info = event
            .tag
            .filter(|t| *t >= FIRST_SERIAL)
            .and_then(|t| self.infos.get(&t));
        let span = event.kind == EventKind::PushRange;
        let mut name = event.name.to_string();
        let mut stats = Vec::new();
        for (field, value) in info.map_or(&[][..], |i| i.fields.as_slice()) {
            if !span
                && *field == "message"
                && let Value::Str(text) = value
            {
                name.clone_from(text);
                continue;
            }
            stats.push((*field, value.to_stat()));
        }
        if open {
            stats.push((OPEN_STAT, StatValue::Str("true".into())));
        }
        Item {
            name,
            start: event.cpu_ns,
            end,
            span,
            tag: event.tag,
            stats,
            flows: Vec::new(),
        }
    }

    /// Puts each `follows_from` link on an event of each of the two spans: the first one
    /// carrying the span's serial, else (a span without fields) the one carrying its registry id
    /// that started last before the link was made (else first after it).
    fn add_flows(&self, lines: &mut [Line]) {
        let links: Vec<(u64, SpanKey, SpanKey)> = {
            let mut links: Vec<_> = self
                .infos
                .iter()
                .filter_map(|(serial, info)| info.link.map(|(c, e)| (*serial, c, e)))
                .collect();
            links.sort_unstable_by_key(|l| l.0);
            links
        };
        if links.is_empty() {
            return;
        }
        let mut times: HashMap<u64, u64> = HashMap::new();
        for event in self.recording.threads.iter().flat_map(|t| &t.events) {
            if let (EventKind::Mark, Some(tag)) = (event.kind, event.tag)
                && event.name == LINK_MARK
            {
                times.insert(tag, event.cpu_ns);
            }
        }
        let mut by_tag: HashMap<u64, Vec<(usize, usize, u64)>> = HashMap::new();
        for (l, line) in lines.iter().enumerate() {
            for (i, item) in line.items.iter().enumerate() {
                if let (Some(tag), true) = (item.tag, item.span) {
                    by_tag.entry(tag).or_default().push((l, i, item.start));
                }
            }
        }
        let find = |key: SpanKey, at: u64| -> Option<(usize, usize)> {
            if let Some(found) = key
                .serial
                .and_then(|s| by_tag.get(&s))
                .and_then(|c| c.iter().min_by_key(|c| c.2))
            {
                return Some((found.0, found.1));
            }
            let candidates = by_tag.get(&key.id)?;
            candidates
                .iter()
                .filter(|c| c.2 <= at)
                .max_by_key(|c| c.2)
                .or_else(|| candidates.iter().filter(|c| c.2 > at).min_by_key(|c| c.2))
                .map(|c| (c.0, c.1))
        };
        for (id, (link, cause, effect)) in links.into_iter().enumerate() {
            let at = times.get(&link).copied().unwrap_or(u64::MAX);
            let (Some((cl, ci)), Some((el, ei))) = (find(cause, at), find(effect, at)) else {
                continue;
            };
            let id = id as u64 + 1;
            let mut put = |l: usize, i: usize, direction: u64| {
                if let Some(item) = lines.get_mut(l).and_then(|line| line.items.get_mut(i)) {
                    item.flows.push(Flow {
                        id,
                        direction,
                        category: 0,
                    });
                }
            };
            put(cl, ci, flow::OUT);
            put(el, ei, flow::IN);
        }
    }
}

struct Line {
    /// The recorder's thread index.
    id: i64,
    /// The operating system's thread id, when the layer saw it.
    tid: Option<i64>,
    name: String,
    items: Vec<Item>,
}

struct Item {
    name: String,
    start: u64,
    end: u64,
    /// A span (else an event of `tracing`).
    span: bool,
    /// The span's serial, or its registry id.
    tag: Option<u64>,
    stats: Vec<(&'static str, StatValue)>,
    flows: Vec<Flow>,
}

fn ns_between(from: u64, to: u64) -> i64 {
    i64::try_from(to.saturating_sub(from)).unwrap_or(i64::MAX)
}

fn ps_between(from: u64, to: u64) -> i64 {
    i64::try_from(u128::from(to.saturating_sub(from)) * 1000).unwrap_or(i64::MAX)
}

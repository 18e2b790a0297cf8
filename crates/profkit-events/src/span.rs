//! Pairing pushes and pops into spans, Paddle's way, and the `parent/child` paths of nested spans.
//!
//! One thread's events are scanned in order. A push is put on a stack; a pop closes the most
//! recent open push with the same name, searching from the top, so a pop may close a push that is
//! not on top (the pushes above it stay open). A pop that finds no push, and a push still open at
//! the end, become [`Warning`]s: every push and pop ends up in exactly one [`Span`] or one warning,
//! none is dropped silently. Marks are neither.
//!
//! A span's path is its name appended to the path of the range that was open (on top of the stack)
//! when it was pushed: `parent/child`, as Paddle names nested events. A name that already starts
//! with the enclosing path and a `/` (as in Paddle's own files, which store full paths) is taken as
//! the full path. Paths are interned in a [`Paths`] table shared by all threads, so that deep
//! nesting costs memory in proportion to the events, not to the square of the depth.

use std::collections::HashMap;

use serde::Serialize;

use crate::event::{DeviceTime, Event, EventKind, Name, ThreadEvents};

/// An interned `parent/child` path: an index into a [`Paths`] table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct PathId(u32);

impl PathId {
    /// The index of this path in its table.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The path at `index` of a table (meaningful only below [`Paths::len`]).
    pub fn from_index(index: usize) -> PathId {
        PathId(u32::try_from(index).unwrap_or(u32::MAX))
    }
}

#[derive(Clone, Debug)]
struct PathEntry {
    parent: Option<PathId>,
    component: u32,
    /// Components above this one (0 for a top-level path).
    depth: u32,
}

/// An interning table of paths. A path is a list of components; its text is the components
/// joined by `/`, and every string is the text of exactly one path (a name is split at each `/`,
/// empty components included), so two paths are equal exactly when their texts are.
#[derive(Clone, Debug, Default)]
pub struct Paths {
    components: Vec<Box<str>>,
    component_ids: HashMap<Box<str>, u32>,
    entries: Vec<PathEntry>,
    /// (parent index + 1, or 0 for none; component id) -> path.
    children: HashMap<(u32, u32), PathId>,
}

impl Paths {
    /// An empty table.
    pub fn new() -> Paths {
        Paths::default()
    }

    /// The number of distinct paths.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table holds no path.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn component(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.component_ids.get(text) {
            return id;
        }
        let id = self.components.len() as u32;
        self.components.push(text.into());
        self.component_ids.insert(text.into(), id);
        id
    }

    fn child(&mut self, parent: Option<PathId>, component: u32) -> PathId {
        let key = (parent.map_or(0, |p| p.0 + 1), component);
        if let Some(&id) = self.children.get(&key) {
            return id;
        }
        let depth = parent.map_or(0, |p| self.depth(p) + 1);
        let id = PathId(self.entries.len() as u32);
        self.entries.push(PathEntry {
            parent,
            component,
            depth,
        });
        self.children.insert(key, id);
        id
    }

    /// The path of `name` (split at `/`) under `parent`; a name whose leading components are
    /// exactly `parent`'s is taken as a full path.
    pub fn join(&mut self, parent: Option<PathId>, name: &str) -> PathId {
        let parts: Vec<&str> = name.split('/').collect();
        let mut start = parent;
        let mut rest = &parts[..];
        if let Some(p) = parent {
            let above = self.depth(p) as usize + 1;
            if parts.len() > above && self.has_components(p, &parts[..above]) {
                rest = &parts[above..];
            }
        }
        for part in rest {
            let component = self.component(part);
            start = Some(self.child(start, component));
        }
        // `split` yields at least one part, so `start` is set; the fallback is never taken.
        start.unwrap_or(PathId(0))
    }

    /// The path of the text `path` (a top-level name split at `/`).
    pub fn intern(&mut self, path: &str) -> PathId {
        self.join(None, path)
    }

    /// Whether the components of `path` are exactly `parts`.
    fn has_components(&self, path: PathId, parts: &[&str]) -> bool {
        let mut cur = Some(path);
        for part in parts.iter().rev() {
            let Some(id) = cur else { return false };
            let entry = &self.entries[id.index()];
            if &*self.components[entry.component as usize] != *part {
                return false;
            }
            cur = entry.parent;
        }
        cur.is_none()
    }

    /// The path one level up, `None` for a top-level path.
    pub fn parent(&self, path: PathId) -> Option<PathId> {
        self.entries.get(path.index()).and_then(|e| e.parent)
    }

    /// The number of components above the last one (0 for a top-level path).
    pub fn depth(&self, path: PathId) -> u32 {
        self.entries.get(path.index()).map_or(0, |e| e.depth)
    }

    /// The last component: the name a report shows for a nested row.
    pub fn last(&self, path: PathId) -> &str {
        self.entries
            .get(path.index())
            .and_then(|e| self.components.get(e.component as usize))
            .map_or("", |c| c)
    }

    /// The text of the path, components joined by `/`.
    pub fn text(&self, path: PathId) -> String {
        let mut parts = Vec::new();
        let mut cur = Some(path);
        while let Some(id) = cur {
            parts.push(self.last(id));
            cur = self.parent(id);
        }
        parts.reverse();
        parts.join("/")
    }

    /// The byte length of [`Paths::text`], without building it.
    pub fn text_len(&self, path: PathId) -> usize {
        let mut len = 0;
        let mut cur = Some(path);
        while let Some(id) = cur {
            len += self.last(id).len() + usize::from(self.parent(id).is_some());
            cur = self.parent(id);
        }
        len
    }
}

/// A push and the pop that closed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Span {
    /// The name as recorded.
    pub name: Name,
    /// The `parent/child` path (see the module documentation).
    pub path: PathId,
    /// The profiler thread index.
    pub thread: u32,
    /// The push's CPU timestamp, ns.
    pub start_ns: u64,
    /// The pop's CPU timestamp, ns.
    pub end_ns: u64,
    /// The push's device timestamp, if any.
    pub device_start: Option<DeviceTime>,
    /// The pop's device timestamp, if any.
    pub device_end: Option<DeviceTime>,
    /// The enclosing span (index into the same [`ThreadSpans::spans`]): the innermost range open
    /// when this one was pushed that was itself closed.
    pub parent: Option<usize>,
    /// Enclosing spans above this one (0 at the top level).
    pub depth: u32,
    /// Index of the push in the thread's events.
    pub push_index: usize,
    /// Index of the pop in the thread's events.
    pub pop_index: usize,
}

impl Span {
    /// CPU milliseconds, as Paddle computes them.
    pub fn cpu_ms(&self) -> f64 {
        crate::event::elapsed_ms(self.start_ns, self.end_ns)
    }

    /// Device milliseconds; 0 without device timestamps of one device at both ends.
    pub fn device_ms(&self) -> f64 {
        match (self.device_start, self.device_end) {
            (Some(a), Some(b)) if a.device == b.device => crate::event::elapsed_ms(a.ns, b.ns),
            _ => 0.0,
        }
    }
}

/// An event pairing could not use. Paddle logs these and leaves the event out of its report; we
/// return them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// A pop with no open push of the same name before it on its thread.
    UnmatchedPop {
        /// The thread index.
        thread: u32,
        /// Index of the pop in the thread's events.
        index: usize,
        /// Its name.
        name: String,
        /// Its CPU timestamp.
        cpu_ns: u64,
    },
    /// A push still open at the end of its thread's events.
    LeftoverPush {
        /// The thread index.
        thread: u32,
        /// Index of the push in the thread's events.
        index: usize,
        /// Its name.
        name: String,
        /// Its CPU timestamp.
        cpu_ns: u64,
    },
    /// Events further from the session start than an XSpace holds (its event offsets are
    /// picoseconds in an `i64`, about 106 days): their times are written as the furthest it holds.
    TimesClamped {
        /// How many events (ranges, device spans, memory events) were clamped.
        count: u64,
        /// The session's span, first to last time, in nanoseconds.
        span_ns: u64,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::UnmatchedPop {
                thread,
                index,
                name,
                cpu_ns,
            } => write!(
                f,
                "thread {thread}, event {index}: pop of {name:?} at {cpu_ns} ns has no push; left out"
            ),
            Warning::LeftoverPush {
                thread,
                index,
                name,
                cpu_ns,
            } => write!(
                f,
                "thread {thread}, event {index}: push of {name:?} at {cpu_ns} ns is never popped; left out"
            ),
            Warning::TimesClamped { count, span_ns } => write!(
                f,
                "{count} events lie further from the session start than an XSpace holds (the session spans {span_ns} ns, an XSpace at most {} ns): their times are written as the furthest an XSpace holds",
                i64::MAX / 1000
            ),
        }
    }
}

/// What pairing made of one thread's events.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ThreadSpans {
    /// The thread index.
    pub thread: u32,
    /// The spans, in the order their pops were recorded (Paddle's "event first end" order).
    pub spans: Vec<Span>,
    /// The path of every event, by event index: a push's path, the path of the push a pop closed
    /// (or, for an unmatched pop, its name under the range open at the time), a mark's name under
    /// the open range.
    pub event_paths: Vec<PathId>,
    /// Indices of the marks in the thread's events.
    pub marks: Vec<usize>,
    /// The events left out.
    pub warnings: Vec<Warning>,
}

impl ThreadSpans {
    /// The spans with no enclosing span, in push order.
    pub fn roots(&self) -> Vec<usize> {
        let mut roots: Vec<usize> = (0..self.spans.len())
            .filter(|&i| self.spans[i].parent.is_none())
            .collect();
        roots.sort_by_key(|&i| self.spans[i].push_index);
        roots
    }

    /// The children of every span (by span index), each list in push order: the tree of the
    /// thread's ranges.
    pub fn children(&self) -> Vec<Vec<usize>> {
        let mut children = vec![Vec::new(); self.spans.len()];
        let mut order: Vec<usize> = (0..self.spans.len()).collect();
        order.sort_by_key(|&i| self.spans[i].push_index);
        for i in order {
            if let Some(p) = self.spans[i].parent
                && let Some(list) = children.get_mut(p)
            {
                list.push(i);
            }
        }
        children
    }
}

/// One open push during pairing.
struct Open {
    push_index: usize,
    path: PathId,
    alive: bool,
}

/// Pairs one thread's events into spans (see the module documentation), interning paths in
/// `paths`. Runs in time linear in the events (plus hashing of names).
pub fn pair_thread(thread: &ThreadEvents, paths: &mut Paths) -> ThreadSpans {
    let events = &thread.events;
    let mut out = ThreadSpans {
        thread: thread.thread,
        event_paths: Vec::with_capacity(events.len()),
        ..ThreadSpans::default()
    };
    let mut open: Vec<Open> = Vec::new();
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    // For each event that is a push: the push event that was open on top when it was pushed.
    let mut parent_push: Vec<Option<usize>> = vec![None; events.len()];
    let mut span_of: Vec<Option<usize>> = vec![None; events.len()];

    for (index, event) in events.iter().enumerate() {
        while open.last().is_some_and(|o| !o.alive) {
            open.pop();
        }
        let top = open.last();
        let top_path = top.map(|o| o.path);
        match event.kind {
            EventKind::Mark => {
                out.event_paths.push(paths.join(top_path, &event.name));
                out.marks.push(index);
            }
            EventKind::PushRange => {
                let path = paths.join(top_path, &event.name);
                out.event_paths.push(path);
                if let Some(slot) = parent_push.get_mut(index) {
                    *slot = top.map(|o| o.push_index);
                }
                by_name.entry(&event.name).or_default().push(open.len());
                open.push(Open {
                    push_index: index,
                    path,
                    alive: true,
                });
            }
            EventKind::PopRange => {
                let found = by_name.get_mut(&*event.name).and_then(Vec::pop);
                match found.and_then(|slot| open.get_mut(slot).map(|o| (slot, o))) {
                    Some((_, o)) => {
                        o.alive = false;
                        out.event_paths.push(o.path);
                        let push = &events[o.push_index];
                        if let Some(slot) = span_of.get_mut(o.push_index) {
                            *slot = Some(out.spans.len());
                        }
                        out.spans.push(Span {
                            name: push.name.clone(),
                            path: o.path,
                            thread: push.thread,
                            start_ns: push.cpu_ns,
                            end_ns: event.cpu_ns,
                            device_start: push.device,
                            device_end: event.device,
                            parent: None,
                            depth: 0,
                            push_index: o.push_index,
                            pop_index: index,
                        });
                    }
                    None => {
                        out.event_paths.push(paths.join(top_path, &event.name));
                        out.warnings.push(Warning::UnmatchedPop {
                            thread: event.thread,
                            index,
                            name: event.name.to_string(),
                            cpu_ns: event.cpu_ns,
                        });
                    }
                }
            }
        }
    }
    for o in open.iter().filter(|o| o.alive) {
        let push = &events[o.push_index];
        out.warnings.push(Warning::LeftoverPush {
            thread: push.thread,
            index: o.push_index,
            name: push.name.to_string(),
            cpu_ns: push.cpu_ns,
        });
    }

    // The parent of a span is the nearest enclosing push that was closed. Pushes are visited in
    // event order, so the closed push enclosing each one is known once its own parent's is: one
    // step per push, however long the chains of pushes that were never closed.
    let mut closed_above: Vec<Option<usize>> = vec![None; events.len()];
    for push in 0..events.len() {
        let Some(up) = parent_push[push] else {
            continue;
        };
        closed_above[push] = match span_of[up] {
            Some(span) => Some(span),
            None => closed_above[up],
        };
    }
    let mut order: Vec<usize> = (0..out.spans.len()).collect();
    order.sort_by_key(|&i| out.spans[i].push_index);
    for i in order {
        let parent = closed_above.get(out.spans[i].push_index).copied().flatten();
        let depth = parent.map_or(0, |s| out.spans[s].depth + 1);
        out.spans[i].parent = parent;
        out.spans[i].depth = depth;
    }
    out
}

/// Spans of every thread of a recording, with their shared path table.
#[derive(Clone, Debug, Default)]
pub struct Spans {
    /// The paths of all threads.
    pub paths: Paths,
    /// One entry per thread, in the recording's order.
    pub threads: Vec<ThreadSpans>,
}

impl Spans {
    /// Every warning of every thread.
    pub fn warnings(&self) -> impl Iterator<Item = &Warning> {
        self.threads.iter().flat_map(|t| t.warnings.iter())
    }
}

/// Pairs every thread of `threads` (see [`pair_thread`]).
pub fn pair<'a>(threads: impl IntoIterator<Item = &'a ThreadEvents>) -> Spans {
    let mut paths = Paths::new();
    let threads = threads
        .into_iter()
        .map(|t| pair_thread(t, &mut paths))
        .collect();
    Spans { paths, threads }
}

/// Rebuilds push and pop events from complete ranges `(name, start_ns, end_ns)` of one thread, in
/// an order that pairs back into the same ranges: by time, and at equal timestamps pops before
/// pushes (so that touching ranges stay siblings), inner pops first and outer pushes first. Used
/// for files that store ranges rather than events.
pub fn events_from_ranges<N: Into<Name> + Clone>(
    thread: u32,
    ranges: &[(N, u64, u64)],
) -> Vec<Event> {
    range_event_order(ranges.iter().map(|(_, start, end)| (*start, *end)))
        .filter_map(|(i, ts, is_pop)| {
            let (name, _, _) = ranges.get(i)?;
            let kind = if is_pop {
                EventKind::PopRange
            } else {
                EventKind::PushRange
            };
            Some(Event::new(kind, name.clone(), thread, ts))
        })
        .collect()
}

/// A range for [`events_from_typed_ranges`]: what [`events_from_ranges`] takes, with the category
/// its push and pop carry and the args its push carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypedRange {
    /// The range's name.
    pub name: Name,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// See [`Event::category`].
    pub category: Option<Name>,
    /// See [`Event::args`].
    pub args: Vec<(String, String)>,
}

/// [`events_from_ranges`] for ranges with a category and args.
pub fn events_from_typed_ranges(thread: u32, ranges: Vec<TypedRange>) -> Vec<Event> {
    let order = range_event_order(ranges.iter().map(|r| (r.start_ns, r.end_ns)));
    let mut events = Vec::with_capacity(2 * ranges.len());
    let mut ranges: Vec<Option<TypedRange>> = ranges.into_iter().map(Some).collect();
    for (i, ts, is_pop) in order {
        let Some(slot) = ranges.get_mut(i) else {
            continue;
        };
        if is_pop {
            // The push came first and took the args; the pop takes what is left.
            if let Some(range) = slot.take() {
                let mut event = Event::new(EventKind::PopRange, range.name, thread, ts);
                event.category = range.category;
                events.push(event);
            }
        } else if let Some(range) = slot.as_mut() {
            let mut event = Event::new(EventKind::PushRange, range.name.clone(), thread, ts);
            event.category = range.category.clone();
            event.args = std::mem::take(&mut range.args);
            events.push(event);
        }
    }
    events
}

/// The order of the pushes and pops of ranges `(start, end)`: (range index, timestamp, is pop).
/// What [`range_event_order`] yields: (range index, timestamp, whether a pop), in order.
type EventOrder = std::iter::Map<
    std::vec::IntoIter<(u64, u8, u64, usize)>,
    fn((u64, u8, u64, usize)) -> (usize, u64, bool),
>;

fn range_event_order(ranges: impl Iterator<Item = (u64, u64)>) -> EventOrder {
    // (timestamp, class, tie-break, second tie-break); the classes order an instant's pops (0)
    // before its zero-length ranges (1) before its pushes (2). The second tie-break also says
    // which range and whether a pop (see `decode`), so that a key is 32 bytes: a line of
    // millions of ranges is sorted in two keys a range and nothing else.
    let mut keyed: Vec<(u64, u8, u64, usize)> = Vec::new();
    for (i, (start, end)) in ranges.enumerate() {
        let end = end.max(start);
        if start == end {
            keyed.push((start, 1, 0, 2 * i));
            keyed.push((start, 1, 0, 2 * i + 1));
        } else {
            // Pops: the range that started last (the innermost) first, then the one listed last.
            keyed.push((end, 0, u64::MAX - start, usize::MAX - i));
            // Pushes: the range that ends last (the outermost) first, then the one listed first.
            keyed.push((start, 2, u64::MAX - end, i));
        }
    }
    keyed.sort_unstable();
    // The range and whether the key is its pop.
    fn decode((ts, class, _, tie): (u64, u8, u64, usize)) -> (usize, u64, bool) {
        match class {
            0 => (usize::MAX - tie, ts, true),
            1 => (tie / 2, ts, tie % 2 == 1),
            _ => (tie, ts, false),
        }
    }
    keyed
        .into_iter()
        .map(decode as fn((u64, u8, u64, usize)) -> (usize, u64, bool))
}

/// What [`pair_thread`] makes of the pushes and pops [`events_from_ranges`] rebuilds from
/// `ranges` (`(name, start_ns, end_ns)`), without building the events: per span, in the order
/// pairing closes them, the index of the range whose push it is, the start and the end. A pop
/// closes the latest open push of its name, so ranges of one name that cross pair as Paddle pairs
/// their events; every push is closed (rebuilt events always pair).
pub fn paired_ranges<K: Eq + std::hash::Hash>(ranges: &[(K, u64, u64)]) -> Vec<(usize, u64, u64)> {
    let order = range_event_order(ranges.iter().map(|(_, start, end)| (*start, *end)));
    let mut open: HashMap<&K, Vec<usize>> = HashMap::new();
    let mut out = Vec::with_capacity(ranges.len());
    for (i, ts, is_pop) in order {
        let Some((name, _, _)) = ranges.get(i) else {
            continue;
        };
        if is_pop {
            let push = open.get_mut(name).and_then(Vec::pop);
            if let Some((j, start)) = push.and_then(|j| Some((j, ranges.get(j)?.1))) {
                out.push((j, start, ts));
            }
        } else {
            open.entry(name).or_default().push(i);
        }
    }
    out
}

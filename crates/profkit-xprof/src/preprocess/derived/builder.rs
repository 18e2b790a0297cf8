//! Editing a plane as TSL's `XPlaneBuilder` does (metadata found or created by name, lines by id),
//! and xprof's `DerivedXLineBuilder`: derived events that grow while the next one continues them.

use rustc_hash::FxHashMap as HashMap;

use profkit_xplane::{
    XEvent, XEventMetadata, XLine, XPlane, XStat, XStatMetadata, x_event, x_stat,
};

/// A span in picoseconds, as TSL's `Timespan` (unsigned, wrapping as `int64` arithmetic does in
/// practice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    pub begin: u64,
    pub duration: u64,
}

impl Span {
    pub fn end(self) -> u64 {
        self.begin.wrapping_add(self.duration)
    }

    fn from_end_points(begin: u64, end: u64) -> Span {
        Span {
            begin,
            duration: end.wrapping_sub(begin),
        }
    }

    /// `Timespan::ExpandToInclude`.
    fn expand_to_include(self, other: Span) -> Span {
        Span::from_end_points(self.begin.min(other.begin), self.end().max(other.end()))
    }
}

/// The span of `event` on `line`.
pub(super) fn span_of(line: &XLine, event: &XEvent) -> Span {
    let begin = line
        .timestamp_ns
        .wrapping_mul(1000)
        .wrapping_add(event.offset_ps().unwrap_or(0)) as u64;
    Span {
        begin,
        duration: event.duration_ps as u64,
    }
}

fn set_span(line: &mut XLine, event: usize, span: Span) {
    let base = line.timestamp_ns.wrapping_mul(1000);
    if let Some(e) = line.events.get_mut(event) {
        e.data = Some(x_event::Data::OffsetPs(
            (span.begin as i64).wrapping_sub(base),
        ));
        e.duration_ps = span.duration as i64;
    }
}

/// Sorts `(key, item)` pairs as xprof 2.24.2's `GetSortedEvents` does: by start, then shorter
/// first, with libstdc++'s unstable `std::sort`. (Shorter first is what xprof's live output shows,
/// case `gpu-steps-ties`, although TSL's `Timespan` sorts longer spans first.)
pub(super) fn sort_by_span<T: Clone>(items: &mut [(Span, T)]) {
    profkit_events::report::std_sort(items, &|a: &(Span, T), b: &(Span, T)| {
        a.0.begin < b.0.begin || (a.0.begin == b.0.begin && a.0.duration < b.0.duration)
    });
}

/// TSL's `XPlaneBuilder` over one plane: names to metadata ids, line ids to lines.
pub(super) struct Editor {
    events_by_name: HashMap<String, i64>,
    last_event_id: i64,
    stats_by_name: HashMap<String, i64>,
    last_stat_id: i64,
    lines_by_id: HashMap<i64, usize>,
}

impl Editor {
    pub fn new(plane: &XPlane) -> Editor {
        let mut events_by_name = HashMap::default();
        let mut last_event_id = 0i64;
        for (id, m) in &plane.event_metadata {
            last_event_id = last_event_id.max(*id);
            if !m.name.is_empty() {
                events_by_name.entry(m.name.clone()).or_insert(*id);
            }
        }
        let mut stats_by_name = HashMap::default();
        let mut last_stat_id = 0i64;
        for (id, m) in &plane.stat_metadata {
            last_stat_id = last_stat_id.max(*id);
            if !m.name.is_empty() {
                stats_by_name.entry(m.name.clone()).or_insert(*id);
            }
        }
        let mut lines_by_id = HashMap::default();
        for (index, line) in plane.lines.iter().enumerate() {
            lines_by_id.entry(line.id).or_insert(index);
        }
        Editor {
            events_by_name,
            last_event_id,
            stats_by_name,
            last_stat_id,
            lines_by_id,
        }
    }

    /// `CreateEventMetadata`: a new metadata with the next id and no name.
    pub fn new_event_metadata(&mut self, plane: &mut XPlane) -> i64 {
        self.last_event_id = self.last_event_id.wrapping_add(1);
        let id = self.last_event_id;
        let metadata = plane.event_metadata.entry(id).or_default();
        metadata.id = id;
        id
    }

    /// `GetOrCreateEventMetadata(name)`.
    pub fn event_metadata(&mut self, plane: &mut XPlane, name: &str) -> i64 {
        if let Some(&id) = self.events_by_name.get(name) {
            return id;
        }
        let id = self.new_event_metadata(plane);
        if let Some(m) = plane.event_metadata.get_mut(&id) {
            m.name = name.to_owned();
        }
        self.events_by_name.insert(name.to_owned(), id);
        id
    }

    /// `GetOrCreateStatMetadata(name)`.
    pub fn stat_metadata(&mut self, plane: &mut XPlane, name: &str) -> i64 {
        if let Some(&id) = self.stats_by_name.get(name) {
            return id;
        }
        self.last_stat_id = self.last_stat_id.wrapping_add(1);
        let id = self.last_stat_id;
        plane.stat_metadata.insert(
            id,
            XStatMetadata {
                id,
                name: name.to_owned(),
                description: String::new(),
            },
        );
        self.stats_by_name.insert(name.to_owned(), id);
        id
    }

    /// `GetOrCreateLine(id)`: the index of the line.
    pub fn line(&mut self, plane: &mut XPlane, id: i64) -> usize {
        if let Some(&index) = self.lines_by_id.get(&id) {
            return index;
        }
        let index = plane.lines.len();
        plane.lines.push(XLine {
            id,
            ..XLine::default()
        });
        self.lines_by_id.insert(id, index);
        index
    }
}

/// Sets the display name of metadata `id` when it has none.
pub(super) fn set_display_name_if_empty(
    plane: &mut XPlane,
    id: i64,
    name: impl FnOnce() -> String,
) {
    if let Some(m) = plane.event_metadata.get_mut(&id) {
        if m.display_name.is_empty() {
            m.display_name = name();
        }
    }
}

/// The name of metadata `id` (empty when there is none).
pub(super) fn metadata_of(plane: &XPlane, id: i64) -> Option<&XEventMetadata> {
    plane.event_metadata.get(&id)
}

pub(super) use crate::preprocess::stats::set_or_add;

/// The last event added at one level of a derived line, which the next may extend.
#[derive(Clone, Copy, Debug)]
struct LastEvent {
    event: usize,
    metadata_id: i64,
    group: Option<i64>,
    scope: Option<i64>,
}

/// One derived line: the plane line it fills, the last event of each level, and the lines whose
/// last events end when a new top-level event starts here.
struct DerivedLine {
    line: usize,
    levels: Vec<Option<LastEvent>>,
    dependents: Vec<usize>,
}

/// The derived lines built together over one plane (xprof's `DerivedXLineBuilder`s), addressed
/// by the handle [`Lines::add`] returns.
pub(super) struct Lines {
    lines: Vec<DerivedLine>,
    gpu: bool,
}

impl Lines {
    /// `gpu`: the plane is a GPU plane, where events of one name always merge (elsewhere only
    /// with a group or when close enough).
    pub fn new(gpu: bool) -> Lines {
        Lines {
            lines: Vec::new(),
            gpu,
        }
    }

    /// A derived line on line `id` of the plane (created when missing), named `name`, whose
    /// timestamp becomes `timestamp_ns`; `dependents` are handles of lines added before.
    pub fn add(
        &mut self,
        plane: &mut XPlane,
        editor: &mut Editor,
        id: i64,
        name: &str,
        timestamp_ns: i64,
        dependents: Vec<usize>,
    ) -> usize {
        let line = editor.line(plane, id);
        if let Some(l) = plane.lines.get_mut(line) {
            l.name = name.to_owned();
            l.timestamp_ns = timestamp_ns;
        }
        self.lines.push(DerivedLine {
            line,
            levels: Vec::new(),
            dependents,
        });
        self.lines.len() - 1
    }

    fn last(&self, handle: usize, level: usize) -> Option<LastEvent> {
        self.lines
            .get(handle)
            .and_then(|d| d.levels.get(level).copied().flatten())
    }

    fn span(&self, plane: &XPlane, handle: usize, last: LastEvent) -> Span {
        let line = self.lines.get(handle).and_then(|d| plane.lines.get(d.line));
        match line.and_then(|l| l.events.get(last.event).map(|e| span_of(l, e))) {
            Some(span) => span,
            None => Span {
                begin: 0,
                duration: 0,
            },
        }
    }

    fn set_span(&self, plane: &mut XPlane, handle: usize, last: LastEvent, span: Span) {
        if let Some(line) = self
            .lines
            .get(handle)
            .and_then(|d| plane.lines.get_mut(d.line))
        {
            set_span(line, last.event, span);
        }
    }

    /// `ExpandOrAddEvent`: one level-0 event.
    #[allow(clippy::too_many_arguments)]
    pub fn expand_or_add(
        &mut self,
        plane: &mut XPlane,
        editor: &mut Editor,
        handle: usize,
        metadata_id: i64,
        span: Span,
        group: Option<i64>,
        scope: Option<i64>,
    ) {
        self.expand_or_add_level(plane, editor, handle, metadata_id, span, group, scope, 0);
    }

    /// `ExpandOrAddEvents`: one event per level, then the deeper levels end.
    #[allow(clippy::too_many_arguments)]
    pub fn expand_or_add_levels(
        &mut self,
        plane: &mut XPlane,
        editor: &mut Editor,
        handle: usize,
        metadata_ids: &[i64],
        span: Span,
        group: Option<i64>,
        scopes: &[Option<i64>],
    ) {
        if metadata_ids.is_empty() {
            return;
        }
        for (level, &id) in metadata_ids.iter().enumerate() {
            let scope = scopes.get(level).copied().flatten();
            self.expand_or_add_level(plane, editor, handle, id, span, group, scope, level);
        }
        self.reset(plane, handle, metadata_ids.len());
    }

    #[allow(clippy::too_many_arguments)]
    fn expand_or_add_level(
        &mut self,
        plane: &mut XPlane,
        editor: &mut Editor,
        handle: usize,
        metadata_id: i64,
        span: Span,
        group: Option<i64>,
        scope: Option<i64>,
        level: usize,
    ) {
        let Some(derived) = self.lines.get_mut(handle) else {
            return;
        };
        if derived.levels.len() <= level {
            derived.levels.resize(level + 1, None);
        }
        let last = self.last(handle, level);
        let expand = last.is_some_and(|last| {
            let same = last.metadata_id == metadata_id
                && last.group == group
                && (scope.is_none() || last.scope.is_none() || last.scope == scope);
            if !same {
                return false;
            }
            let last_span = self.span(plane, handle, last);
            self.gpu
                || group.is_some()
                || last_span
                    .end()
                    .wrapping_add(last_span.duration.wrapping_mul(2))
                    >= span.begin
        });
        if let (true, Some(last)) = (expand, last) {
            let grown = self.span(plane, handle, last).expand_to_include(span);
            self.set_span(plane, handle, last, grown);
            return;
        }
        self.reset(plane, handle, level);
        let group_stat = group.map(|_| editor.stat_metadata(plane, "group_id"));
        let Some(derived) = self.lines.get_mut(handle) else {
            return;
        };
        let Some(line) = plane.lines.get_mut(derived.line) else {
            return;
        };
        let base = line.timestamp_ns.wrapping_mul(1000);
        let mut event = XEvent {
            metadata_id,
            duration_ps: span.duration as i64,
            data: Some(x_event::Data::OffsetPs(
                (span.begin as i64).wrapping_sub(base),
            )),
            ..XEvent::default()
        };
        if let (Some(g), Some(stat)) = (group, group_stat) {
            event.stats.push(XStat {
                metadata_id: stat,
                value: Some(x_stat::Value::Int64Value(g)),
            });
        }
        line.events.push(event);
        let new = LastEvent {
            event: line.events.len() - 1,
            metadata_id,
            group,
            scope,
        };
        if let Some(slot) = derived.levels.get_mut(level) {
            *slot = Some(new);
        }
    }

    /// `AddStatToLevelEvent`: sets a stat on the last event of `level`, if any.
    pub fn set_stat_on_level(
        &mut self,
        plane: &mut XPlane,
        handle: usize,
        level: usize,
        stat: i64,
        value: x_stat::Value,
    ) {
        let Some(last) = self.last(handle, level) else {
            return;
        };
        let Some(line) = self
            .lines
            .get(handle)
            .and_then(|d| plane.lines.get_mut(d.line))
        else {
            return;
        };
        if let Some(event) = line.events.get_mut(last.event) {
            set_or_add(&mut event.stats, stat, value);
        }
    }

    /// `ResetLastEvents(level)`: the events of `level` and deeper are done (shortened where they
    /// stack with the same span); at level 0 the dependent lines' events are done too.
    pub fn reset(&mut self, plane: &mut XPlane, handle: usize, level: usize) {
        self.adjust_durations(plane, handle, level);
        let dependents = match self.lines.get_mut(handle) {
            Some(derived) => {
                for slot in derived.levels.iter_mut().skip(level) {
                    *slot = None;
                }
                if level == 0 {
                    derived.dependents.clone()
                } else {
                    Vec::new()
                }
            }
            None => Vec::new(),
        };
        for dependent in dependents {
            self.reset(plane, dependent, 0);
        }
    }

    /// `AdjustDurationForTraceViewer`: in a stack of events from `level` up with the same span,
    /// each is a nanosecond shorter than the one below (never the top below one nanosecond).
    fn adjust_durations(&mut self, plane: &mut XPlane, handle: usize, level: usize) {
        let Some(derived) = self.lines.get(handle) else {
            return;
        };
        let levels = derived.levels.clone();
        if !matches!(levels.get(level), Some(Some(_))) {
            return;
        }
        let mut max_level = level;
        while matches!(levels.get(max_level), Some(Some(_))) {
            max_level += 1;
        }
        max_level -= 1;
        if max_level <= level {
            return;
        }
        let Some(Some(top)) = levels.get(max_level).copied() else {
            return;
        };
        let max_shrink_ns = (self.span(plane, handle, top).duration / 1000) as i64 - 1;
        let mut shrink_ns: i64 = 0;
        let mut previous: Option<Span> = None;
        for slot in levels.iter().take(max_level + 1).skip(level) {
            let Some(current) = *slot else { continue };
            let span = self.span(plane, handle, current);
            if shrink_ns < max_shrink_ns && previous == Some(span) {
                shrink_ns += 1;
            }
            previous = Some(span);
            if shrink_ns != 0 {
                let end = span.end().wrapping_sub((1000 * shrink_ns) as u64);
                self.set_span(
                    plane,
                    handle,
                    current,
                    Span::from_end_points(span.begin, end),
                );
            }
        }
    }
}

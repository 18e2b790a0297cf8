//! The plane being read: its lines walked through views, a row per event, self times per line.

use profkit_xplane::utils::SelfTimer;
use profkit_xplane::xview::{Events, Lines, StatValueView, XStatView};
use profkit_xplane::{LineRole, PlaneBytes, line_role};

use crate::error::{Error, Result};
use crate::schema::{TYPED_STATS, TypedKind};

use super::*;

/// Each event's self time on a line whose events are `events` (see [`LineState::self_times`]).
/// A line in order (as profilers write them) is timed as it streams; one out of order is sorted.
/// A damaged event ends the walk: the rows' own walk reports it (where decoding would).
pub(super) fn line_self_times(timestamp_ns: i64, events: Events<'_>) -> Vec<Option<i64>> {
    let base = i128::from(timestamp_ns) * 1000;
    let mut result: Vec<Option<i64>> = Vec::new();
    let mut timer = SelfTimer::new();
    let mut in_order = true;
    for event in events.clone().map_while(|event| event.ok()) {
        let index = result.len();
        if event.num_occurrences().is_some() {
            result.push(None);
            continue;
        }
        result.push(Some(event.duration_ps().max(0)));
        let start = base + i128::from(event.offset_ps());
        let set = |i: usize, t: i64| {
            if let Some(slot) = result.get_mut(i) {
                *slot = Some(t);
            }
        };
        if !timer.push(start, event.duration_ps(), index, set) {
            in_order = false;
            break;
        }
    }
    if in_order {
        timer.finish(|i, t| {
            if let Some(slot) = result.get_mut(i) {
                *slot = Some(t);
            }
        });
        return result;
    }
    let spans: Vec<Option<(i128, i64)>> = events
        .map_while(|event| event.ok())
        .map(|event| match event.num_occurrences() {
            Some(_) => None,
            None => Some((base + i128::from(event.offset_ps()), event.duration_ps())),
        })
        .collect();
    profkit_xplane::utils::self_times(&spans)
}

/// The line being turned into rows.
pub(super) struct LineState<'a> {
    pub(super) name: &'a str,
    pub(super) id: i64,
    pub(super) role: LineRole,
    pub(super) timestamp_ns: i64,
    pub(super) events: Events<'a>,
    /// This line's key in the batch of generation `.0`.
    pub(super) key: (u32, i32),
    /// The line's role's key in the batch of generation `.0`.
    pub(super) role_key: (u32, i32),
    /// Each event's self time, in line order ([`profkit_xplane::utils::self_times`]); the line's
    /// events are walked once before their rows are made, since an event's self time depends on
    /// the events after it.
    pub(super) self_times: std::vec::IntoIter<Option<i64>>,
}

/// The plane being turned into rows, viewed in its bytes, and where in it.
pub(super) struct PlaneState<'a> {
    pub(super) name: &'a str,
    pub(super) id: i64,
    pub(super) tables: PlaneTables<'a>,
    pub(super) lines: Lines<'a>,
    pub(super) line: Option<LineState<'a>>,
    /// This plane's key in the batch of generation `.0`.
    pub(super) key: (u32, i32),
    /// The event's own stats, for the row being built.
    pub(super) own: Vec<XStatView<'a>>,
    /// The planes table's row, filled in as the events pass.
    pub(super) line_count: usize,
    pub(super) event_count: usize,
    pub(super) span: Option<(i128, i128)>,
    pub(super) total: i128,
    pub(super) stats: Vec<(&'a str, String)>,
}

self_cell::self_cell!(
    /// A plane's bytes with the view walking them.
    pub(super) struct PlaneCursor {
        owner: PlaneBytes,
        #[not_covariant]
        dependent: PlaneState,
    }
);

impl<'a> PlaneState<'a> {
    pub(super) fn new(bytes: &'a PlaneBytes) -> Result<PlaneState<'a>> {
        let view = bytes.view()?;
        let tables = PlaneTables::new(view.metadata()?);
        // The plane's own stats first: the order in which decoding finds a plane's faults.
        let mut stats = Vec::with_capacity(view.stat_count());
        for stat in view.stats() {
            let stat = stat?;
            let name = tables.stat(stat.metadata_id()).map_or("", |(_, s)| s.name);
            let mut text = String::new();
            push_text(stat.value(), &tables, &mut text);
            stats.push((name, text));
        }
        Ok(PlaneState {
            name: view.name(),
            id: view.id(),
            lines: view.lines(),
            line: None,
            key: (0, 0),
            own: Vec::new(),
            line_count: 0,
            event_count: 0,
            span: None,
            total: 0,
            stats,
            tables,
        })
    }

    /// Appends the planes table's row (when the plane is done).
    pub(super) fn plane_row(&self, side: &mut Side) -> Result<()> {
        let p = &mut side.planes;
        p.name.append_value(self.name);
        p.id.append_value(self.id);
        p.lines.append_value(count(self.line_count));
        p.events.append_value(count(self.event_count));
        p.event_metadata
            .append_value(count(self.tables.events.len()));
        p.stat_metadata.append_value(count(self.tables.stats.len()));
        p.start_ps.append_option(self.span.map(|s| s.0));
        p.end_ps.append_option(self.span.map(|s| s.1));
        p.total_duration_ps.append_value(self.total);
        for (k, v) in &self.stats {
            p.stats.keys().append_value(k);
            p.stats.values().append_value(v);
        }
        p.stats.append(true)?;
        Ok(())
    }

    /// Appends rows until the batch is full (true) or the plane is done (false).
    pub(super) fn fill(
        &mut self,
        b: &mut Builders,
        side: &mut Side,
        batch_rows: usize,
        text: &mut String,
    ) -> Result<bool> {
        loop {
            if self.line.is_none() {
                let Some(line) = self.lines.next() else {
                    self.plane_row(side)?;
                    return Ok(false);
                };
                let line = line?;
                self.line_count += 1;
                let l = &mut side.lines;
                l.plane.append_value(self.name);
                l.plane_id.append_value(self.id);
                l.name.append_value(line.name());
                l.id.append_value(line.id());
                l.display_id.append_value(line.raw_display_id());
                l.display_name.append_value(line.raw_display_name());
                let role = line_role(self.name, line.name());
                l.role.append_value(role.as_str());
                l.timestamp_ns.append_value(line.timestamp_ns());
                l.duration_ps.append_value(line.duration_ps());
                l.events.append_value(count(line.event_count()));
                self.line = Some(LineState {
                    name: line.name(),
                    id: line.id(),
                    role,
                    timestamp_ns: line.timestamp_ns(),
                    events: line.events(),
                    key: (0, 0),
                    role_key: (0, 0),
                    self_times: line_self_times(line.timestamp_ns(), line.events()).into_iter(),
                });
            }
            if self.rows(b, batch_rows, text)? {
                return Ok(true);
            }
            self.line = None;
        }
    }

    /// Appends the current line's rows until the batch is full (true) or the line is done.
    pub(super) fn rows(
        &mut self,
        b: &mut Builders,
        batch_rows: usize,
        text: &mut String,
    ) -> Result<bool> {
        let Some(line) = self.line.as_mut() else {
            return Ok(false);
        };
        let tables = &mut self.tables;
        let base = i128::from(line.timestamp_ns) * 1000;
        loop {
            if b.rows >= batch_rows {
                return Ok(true);
            }
            let Some(event) = line.events.next() else {
                return Ok(false);
            };
            let event = event?;
            b.rows += 1;
            self.event_count += 1;
            let generation = b.generation;
            if self.key.0 != generation {
                self.key = (generation, b.plane.intern(self.name));
            }
            b.plane.append_key(self.key.1);
            b.plane_id.append_value(self.id);
            if line.key.0 != generation {
                line.key = (generation, b.line.intern(line.name));
            }
            b.line.append_key(line.key.1);
            b.line_id.append_value(line.id);
            if line.role_key.0 != generation {
                line.role_key = (generation, b.line_role.intern(line.role.as_str()));
            }
            b.line_role.append_key(line.role_key.1);

            // Names: keys cached per metadata and batch.
            let md_position = tables.event_index.get(event.metadata_id());
            let md_stats: std::ops::Range<usize> = match md_position {
                Some(position) => {
                    let (keys, md) =
                        match (tables.keys.get_mut(position), tables.events.get(position)) {
                            (Some(k), Some(md)) => (k, md),
                            _ => return Err(Error::Internal("event metadata tables")),
                        };
                    if keys.generation != generation {
                        *keys = Keys {
                            generation,
                            name: b.name.intern(md.name),
                            display: b.display_name.intern(md.display),
                        };
                    }
                    b.name.append_key(keys.name);
                    b.display_name.append_key(keys.display);
                    md.stats.clone()
                }
                None => {
                    let key = b.name.intern("");
                    b.name.append_key(key);
                    let key = b.display_name.intern("");
                    b.display_name.append_key(key);
                    0..0
                }
            };

            // Times.
            let duration = event.duration_ps();
            let occurrences = event.num_occurrences();
            let offset = event.offset_ps();
            match &mut b.times {
                TimeColumns::Start(start) => match occurrences {
                    Some(_) => start.append_null(),
                    None => start.append_value(base + i128::from(offset)),
                },
                TimeColumns::Pair {
                    timestamp_ns,
                    offset_ps,
                } => {
                    timestamp_ns.append_value(line.timestamp_ns);
                    offset_ps.append_value(offset);
                }
            }
            b.num_occurrences.append_option(occurrences);
            b.duration_ps.append_value(duration);
            b.self_ps.append_option(line.self_times.next().flatten());
            self.total += i128::from(duration);
            if occurrences.is_none() {
                let start = base + i128::from(offset);
                let end = start + i128::from(duration);
                self.span = Some(
                    self.span
                        .map_or((start, end), |(s, e)| (s.min(start), e.max(end))),
                );
            }

            // Stats: the event's own, then its metadata's (unless the event has the same one).
            self.own.clear();
            for stat in event.stats() {
                self.own.push(stat?);
            }
            let own_count = self.own.len();
            let md_slice = tables.md_stats.get(md_stats).unwrap_or_default();
            // Typed stats: event stats first, then the metadata's; within each, the earlier name
            // of a column's list wins.
            let mut found: [Option<(bool, usize, Found<'a>)>; TYPED_STATS.len()] =
                [None; TYPED_STATS.len()];
            if let StatsColumn::Json(_) = b.stats {
                text.clear();
                text.push('{');
            }
            let mut first = true;
            for (i, stat) in self.own.iter().chain(md_slice.iter()).enumerate() {
                let from_md = i >= own_count;
                if from_md
                    && self
                        .own
                        .iter()
                        .any(|s| s.metadata_id() == stat.metadata_id())
                {
                    continue;
                }
                let info = tables.stat(stat.metadata_id());
                let value = stat.value();
                match &mut b.stats {
                    StatsColumn::Map(map) => {
                        map.keys().append_value(info.map_or("", |(_, s)| s.name));
                        match borrowed_text(value, tables) {
                            Some(v) => map.values().append_value(v),
                            None => {
                                text.clear();
                                push_text(value, tables, text);
                                map.values().append_value(&*text);
                            }
                        }
                    }
                    StatsColumn::Json(_) => {
                        if !first {
                            text.push(',');
                        }
                        match info {
                            Some((_, s)) => push_json_str(s.name, s.plain, text),
                            None => text.push_str("\"\""),
                        }
                        text.push(':');
                        match borrowed_text(value, tables) {
                            Some(v) => push_json_str(v, json_plain(v), text),
                            None => {
                                // Numbers and base64 need no escaping.
                                text.push('"');
                                push_text(value, tables, text);
                                text.push('"');
                            }
                        }
                    }
                }
                first = false;
                let Some((column, priority)) = info.and_then(|(_, s)| s.typed) else {
                    continue;
                };
                let Some(slot) = found.get_mut(column) else {
                    continue;
                };
                if slot.is_some_and(|(m, p, _)| (m, p) <= (from_md, priority)) {
                    continue;
                }
                let found_value = match TYPED_STATS.get(column).map(|t| t.2) {
                    Some(TypedKind::Int) => stat_i64(value).map(Found::Int),
                    _ => match value {
                        Some(StatValueView::Str(s)) => Some(Found::Str(s)),
                        Some(StatValueView::Ref(id)) => Some(match tables.referenced(id) {
                            (Some(position), name) => Found::Ref(position, name),
                            (None, name) => Found::Str(name),
                        }),
                        _ => None,
                    },
                };
                if let Some(v) = found_value {
                    *slot = Some((from_md, priority, v));
                }
            }
            match &mut b.stats {
                StatsColumn::Map(map) => map.append(true)?,
                StatsColumn::Json(json) => {
                    text.push('}');
                    json.append_value(&*text);
                }
            }
            let (mut ints, mut strs) = (b.typed_int.iter_mut(), b.typed_str.iter_mut().enumerate());
            for ((_, _, kind), slot) in TYPED_STATS.iter().zip(found) {
                match kind {
                    TypedKind::Int => {
                        if let Some(builder) = ints.next() {
                            match slot {
                                Some((_, _, Found::Int(v))) => builder.append_value(v),
                                _ => builder.append_null(),
                            }
                        }
                    }
                    TypedKind::Str => {
                        if let Some((column, builder)) = strs.next() {
                            match slot {
                                Some((_, _, Found::Str(v))) => {
                                    let key = builder.intern(v);
                                    builder.append_key(key);
                                }
                                Some((_, _, Found::Ref(position, name))) => {
                                    let cached = tables
                                        .ref_keys
                                        .get_mut(column)
                                        .and_then(|c| c.get_mut(position));
                                    let key = match cached {
                                        Some(c) if c.0 == generation => c.1,
                                        Some(c) => {
                                            *c = (generation, builder.intern(name));
                                            c.1
                                        }
                                        None => builder.intern(name),
                                    };
                                    builder.append_key(key);
                                }
                                _ => builder.keys.append_null(),
                            }
                        }
                    }
                }
            }
        }
    }
}

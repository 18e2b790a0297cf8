//! Builders that write planes the way TSL's `XPlaneBuilder` does.
//!
//! Event and stat metadata are interned by name: the first request for a name creates metadata
//! with the next id (ids start at 1), later requests return the same id. Stats of every kind can be
//! attached to the plane, to events and to event metadata; a [`StatValue::Ref`] value is interned as
//! stat metadata and stored as its id (`ref_value`), as TSL does for repeated strings.
//!
//! Times are session-relative: a line's `timestamp_ns` counts nanoseconds from the start of the
//! profiling session (whose time since 1970 is the `profile_start_time` stat of the
//! `Task Environment` plane), and an event's offset picoseconds from its line's start. Wall-clock
//! line timestamps overflow the tools' `i64` picoseconds (see [`LineBuilder::set_timestamp_ns`]).
//!
//! ```
//! use profkit_xplane::{PlaneBuilder, StatValue, XPlane};
//! let mut plane = XPlane::default();
//! let mut builder = PlaneBuilder::new(&mut plane);
//! builder.set_name("/host:CPU");
//! let mut line = builder.line(1);
//! line.set_name("worker");
//! line.set_timestamp_ns(1_000);
//! let mut event = line.add_event("matmul");
//! event.set_timestamp_ps(1_500_000).set_duration_ps(2_000);
//! event.add_stat("flops", 1_000_u64).add_stat("tf_op", StatValue::Ref("MatMul".into()));
//! assert_eq!(plane.lines[0].events[0].offset_ps(), Some(500_000));
//! ```

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;

use crate::proto::{XEvent, XEventMetadata, XLine, XPlane, XStat, XStatMetadata, x_event, x_stat};

/// A stat value to store. `Ref` holds a string that is interned as stat metadata.
#[derive(Clone, Debug, PartialEq)]
pub enum StatValue {
    /// `double_value`.
    Double(f64),
    /// `uint64_value`.
    Uint64(u64),
    /// `int64_value`.
    Int64(i64),
    /// `str_value`.
    Str(String),
    /// `bytes_value`.
    Bytes(Bytes),
    /// `ref_value`: the string is interned as the name of a stat metadata and its id stored.
    Ref(String),
}

impl From<f64> for StatValue {
    fn from(v: f64) -> Self {
        StatValue::Double(v)
    }
}
impl From<f32> for StatValue {
    fn from(v: f32) -> Self {
        StatValue::Double(f64::from(v))
    }
}
impl From<u64> for StatValue {
    fn from(v: u64) -> Self {
        StatValue::Uint64(v)
    }
}
impl From<u32> for StatValue {
    fn from(v: u32) -> Self {
        StatValue::Uint64(u64::from(v))
    }
}
impl From<i64> for StatValue {
    fn from(v: i64) -> Self {
        StatValue::Int64(v)
    }
}
impl From<i32> for StatValue {
    fn from(v: i32) -> Self {
        StatValue::Int64(i64::from(v))
    }
}
/// Booleans are stored as `int64_value` 0 or 1, as TSL does.
impl From<bool> for StatValue {
    fn from(v: bool) -> Self {
        StatValue::Int64(i64::from(v))
    }
}
impl From<&str> for StatValue {
    fn from(v: &str) -> Self {
        StatValue::Str(v.to_owned())
    }
}
impl From<String> for StatValue {
    fn from(v: String) -> Self {
        StatValue::Str(v)
    }
}
impl From<Bytes> for StatValue {
    fn from(v: Bytes) -> Self {
        StatValue::Bytes(v)
    }
}
impl From<Vec<u8>> for StatValue {
    fn from(v: Vec<u8>) -> Self {
        StatValue::Bytes(Bytes::from(v))
    }
}

/// The name indexes of a plane being built.
#[derive(Default)]
struct Names {
    events: HashMap<String, i64>,
    stats: HashMap<String, i64>,
    lines: HashMap<i64, usize>,
    last_event_id: i64,
    last_stat_id: i64,
    /// Where the search for an unused id resumes once `last_*_id` has reached `i64::MAX`.
    free_event_id: i64,
    free_stat_id: i64,
}

/// Stat interning: the plane's stat metadata and its name index.
struct Stats<'p> {
    stat_metadata: &'p mut BTreeMap<i64, XStatMetadata>,
    names: &'p mut Names,
}

impl Stats<'_> {
    fn id(&mut self, name: &str) -> i64 {
        if let Some(&id) = self.names.stats.get(name) {
            return id;
        }
        let id = next_id(
            &mut self.names.last_stat_id,
            &mut self.names.free_stat_id,
            self.stat_metadata,
        );
        self.stat_metadata.insert(
            id,
            XStatMetadata {
                id,
                name: name.to_owned(),
                description: String::new(),
            },
        );
        self.names.stats.insert(name.to_owned(), id);
        id
    }

    fn stat(&mut self, metadata_id: i64, value: StatValue) -> XStat {
        let value = match value {
            StatValue::Double(v) => x_stat::Value::DoubleValue(v),
            StatValue::Uint64(v) => x_stat::Value::Uint64Value(v),
            StatValue::Int64(v) => x_stat::Value::Int64Value(v),
            StatValue::Str(v) => x_stat::Value::StrValue(v),
            StatValue::Bytes(v) => x_stat::Value::BytesValue(v),
            StatValue::Ref(v) => x_stat::Value::RefValue(self.id(&v) as u64),
        };
        XStat {
            metadata_id,
            value: Some(value),
        }
    }

    fn named(&mut self, name: &str, value: StatValue) -> XStat {
        let id = self.id(name);
        self.stat(id, value)
    }
}

/// Event metadata interning: the plane's event metadata and its name index.
fn event_id(
    event_metadata: &mut BTreeMap<i64, XEventMetadata>,
    names: &mut Names,
    name: &str,
) -> i64 {
    if let Some(&id) = names.events.get(name) {
        return id;
    }
    let id = new_event_metadata(event_metadata, names);
    if let Some(md) = event_metadata.get_mut(&id) {
        md.name = name.to_owned();
    }
    names.events.insert(name.to_owned(), id);
    id
}

fn new_event_metadata(
    event_metadata: &mut BTreeMap<i64, XEventMetadata>,
    names: &mut Names,
) -> i64 {
    let id = next_id(
        &mut names.last_event_id,
        &mut names.free_event_id,
        event_metadata,
    );
    event_metadata.insert(
        id,
        XEventMetadata {
            id,
            ..Default::default()
        },
    );
    id
}

/// The id for new metadata: one past `last`, which it becomes. A plane read from a file may
/// already use `i64::MAX`; then the smallest unused positive id is taken instead of overflowing.
/// Ids are only ever added, so that search resumes where the last one ended (`free`), keeping
/// many new names on such a plane linear rather than quadratic.
fn next_id<V>(last: &mut i64, free: &mut i64, used: &BTreeMap<i64, V>) -> i64 {
    if let Some(id) = last.checked_add(1) {
        *last = id;
        return id;
    }
    let id = ((*free).max(1)..=i64::MAX)
        .find(|id| !used.contains_key(id))
        .unwrap_or(0);
    *free = id.saturating_add(1);
    id
}

/// Sets the stat with `metadata_id` in `stats`, replacing an existing one, or appends it.
fn set_or_add(stats: &mut Vec<XStat>, stat: XStat) {
    match stats.iter_mut().find(|s| s.metadata_id == stat.metadata_id) {
        Some(existing) => *existing = stat,
        None => stats.push(stat),
    }
}

/// Builds (or extends) a plane. Existing metadata is indexed by name first, so new ids continue
/// after the largest existing one and existing names are reused.
pub struct PlaneBuilder<'a> {
    plane: &'a mut XPlane,
    names: Names,
}

impl<'a> PlaneBuilder<'a> {
    /// A builder over `plane`, which may already hold lines and metadata.
    pub fn new(plane: &'a mut XPlane) -> Self {
        let mut names = Names::default();
        // As in TSL, unnamed metadata is never found by name: asking for "" creates one.
        for (id, md) in &plane.event_metadata {
            names.last_event_id = names.last_event_id.max(*id);
            if !md.name.is_empty() {
                names.events.entry(md.name.clone()).or_insert(*id);
            }
        }
        for (id, md) in &plane.stat_metadata {
            names.last_stat_id = names.last_stat_id.max(*id);
            if !md.name.is_empty() {
                names.stats.entry(md.name.clone()).or_insert(*id);
            }
        }
        for (index, line) in plane.lines.iter().enumerate() {
            names.lines.entry(line.id).or_insert(index);
        }
        PlaneBuilder { plane, names }
    }

    /// The plane as built so far.
    pub fn plane(&self) -> &XPlane {
        self.plane
    }

    /// Sets the plane's id.
    pub fn set_id(&mut self, id: i64) -> &mut Self {
        self.plane.id = id;
        self
    }

    /// Sets the plane's name.
    pub fn set_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.plane.name = name.into();
        self
    }

    fn stats(&mut self) -> Stats<'_> {
        Stats {
            stat_metadata: &mut self.plane.stat_metadata,
            names: &mut self.names,
        }
    }

    /// The id of the event metadata named `name`, created if missing.
    pub fn event_metadata_id(&mut self, name: &str) -> i64 {
        event_id(&mut self.plane.event_metadata, &mut self.names, name)
    }

    /// Creates an unnamed event metadata and returns its id.
    pub fn new_event_metadata(&mut self) -> i64 {
        new_event_metadata(&mut self.plane.event_metadata, &mut self.names)
    }

    /// The id of the stat metadata named `name`, created if missing.
    pub fn stat_metadata_id(&mut self, name: &str) -> i64 {
        self.stats().id(name)
    }

    /// A builder for the event metadata with `id`, if it exists.
    pub fn event_metadata(&mut self, id: i64) -> Option<EventMetadataBuilder<'_>> {
        let XPlane {
            event_metadata,
            stat_metadata,
            ..
        } = &mut *self.plane;
        let metadata = event_metadata.get_mut(&id)?;
        Some(EventMetadataBuilder {
            metadata,
            stats: Stats {
                stat_metadata,
                names: &mut self.names,
            },
        })
    }

    /// Appends a plane stat.
    pub fn add_stat(&mut self, name: &str, value: impl Into<StatValue>) -> &mut Self {
        let stat = self.stats().named(name, value.into());
        self.plane.stats.push(stat);
        self
    }

    /// Sets a plane stat, replacing one with the same name.
    pub fn set_or_add_stat(&mut self, name: &str, value: impl Into<StatValue>) -> &mut Self {
        let stat = self.stats().named(name, value.into());
        set_or_add(&mut self.plane.stats, stat);
        self
    }

    /// A builder for the line with `id`, created (empty, with only the id) if missing.
    pub fn line(&mut self, id: i64) -> LineBuilder<'_> {
        let XPlane {
            lines,
            event_metadata,
            stat_metadata,
            ..
        } = &mut *self.plane;
        let index = match self.names.lines.get(&id) {
            Some(&index) if lines.get(index).is_some_and(|l| l.id == id) => index,
            _ => {
                lines.push(XLine {
                    id,
                    ..Default::default()
                });
                self.names.lines.insert(id, lines.len() - 1);
                lines.len() - 1
            }
        };
        LineBuilder {
            line: &mut lines[index],
            event_metadata,
            stats: Stats {
                stat_metadata,
                names: &mut self.names,
            },
        }
    }
}

/// Builds one event metadata: display name, opaque metadata bytes, stats and children.
pub struct EventMetadataBuilder<'p> {
    metadata: &'p mut XEventMetadata,
    stats: Stats<'p>,
}

impl EventMetadataBuilder<'_> {
    /// The metadata as built so far.
    pub fn metadata(&self) -> &XEventMetadata {
        self.metadata
    }

    /// The metadata's id.
    pub fn id(&self) -> i64 {
        self.metadata.id
    }

    /// Sets the name shown instead of the metadata name.
    pub fn set_display_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.metadata.display_name = name.into();
        self
    }

    /// Sets the opaque `metadata` bytes.
    pub fn set_metadata(&mut self, bytes: impl Into<Bytes>) -> &mut Self {
        self.metadata.metadata = bytes.into();
        self
    }

    /// Appends a stat shared by every event with this metadata.
    pub fn add_stat(&mut self, name: &str, value: impl Into<StatValue>) -> &mut Self {
        let stat = self.stats.named(name, value.into());
        self.metadata.stats.push(stat);
        self
    }

    /// Sets a metadata stat, replacing one with the same name.
    pub fn set_or_add_stat(&mut self, name: &str, value: impl Into<StatValue>) -> &mut Self {
        let stat = self.stats.named(name, value.into());
        set_or_add(&mut self.metadata.stats, stat);
        self
    }

    /// Records `child` (an event metadata id) as a child of this one.
    pub fn add_child(&mut self, child: i64) -> &mut Self {
        self.metadata.child_id.push(child);
        self
    }
}

/// Builds one line: its names, ids, start time and events.
pub struct LineBuilder<'p> {
    line: &'p mut XLine,
    event_metadata: &'p mut BTreeMap<i64, XEventMetadata>,
    stats: Stats<'p>,
}

impl LineBuilder<'_> {
    /// The line's id.
    pub fn id(&self) -> i64 {
        self.line.id
    }

    /// The line as built so far.
    pub fn line(&self) -> &XLine {
        self.line
    }

    /// Number of events on the line.
    pub fn num_events(&self) -> usize {
        self.line.events.len()
    }

    /// Sets the line's name.
    pub fn set_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.line.name = name.into();
        self
    }

    /// Sets the name shown instead of the line's name.
    pub fn set_display_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.line.display_name = name.into();
        self
    }

    /// Sets the id shown instead of the line's id.
    pub fn set_display_id(&mut self, id: i64) -> &mut Self {
        self.line.display_id = id;
        self
    }

    /// Sets the line's start in nanoseconds, leaving event offsets as they are (so events move).
    ///
    /// Line timestamps are session-relative: nanoseconds since the profiling session started,
    /// not since 1970. The session's own start (nanoseconds since 1970) goes in the
    /// `profile_start_time` stat of the `Task Environment` plane, as TensorFlow writes it. An
    /// epoch timestamp times 1000 does not fit in the `i64` picoseconds every tool computes event
    /// times in; [`crate::validate()`] reports such a line once
    /// ([`crate::ProblemKind::EpochLineTimestamp`]), and
    /// [`crate::utils::normalize_space_timestamps`] makes lines session-relative.
    pub fn set_timestamp_ns(&mut self, timestamp_ns: i64) -> &mut Self {
        self.line.timestamp_ns = timestamp_ns;
        self
    }

    /// Sets the line's start in nanoseconds and shifts event offsets so events keep their absolute
    /// times (TSL's `SetTimestampNsAndAdjustEventOffsets`).
    pub fn set_timestamp_ns_and_adjust_event_offsets(&mut self, timestamp_ns: i64) -> &mut Self {
        let shift_ps = (i128::from(self.line.timestamp_ns) - i128::from(timestamp_ns)) * 1000;
        self.line.timestamp_ns = timestamp_ns;
        for event in &mut self.line.events {
            if let Some(x_event::Data::OffsetPs(offset)) = &mut event.data {
                *offset = saturate(i128::from(*offset) + shift_ps);
            }
        }
        self
    }

    /// Sets the duration of the profiled interval of the line, in picoseconds.
    pub fn set_duration_ps(&mut self, duration_ps: i64) -> &mut Self {
        self.line.duration_ps = duration_ps;
        self
    }

    /// Appends an event whose metadata is named `name` (interned), at offset 0.
    pub fn add_event(&mut self, name: &str) -> EventBuilder<'_> {
        let id = event_id(self.event_metadata, self.stats.names, name);
        self.add_event_with_metadata_id(id)
    }

    /// Appends an event with the given metadata id, at offset 0.
    pub fn add_event_with_metadata_id(&mut self, metadata_id: i64) -> EventBuilder<'_> {
        self.line.events.push(XEvent {
            metadata_id,
            data: Some(x_event::Data::OffsetPs(0)),
            ..Default::default()
        });
        let timestamp_ns = self.line.timestamp_ns;
        let index = self.line.events.len() - 1;
        EventBuilder {
            event: &mut self.line.events[index],
            line_timestamp_ns: timestamp_ns,
            stats: Stats {
                stat_metadata: self.stats.stat_metadata,
                names: self.stats.names,
            },
        }
    }
}

/// Clamps a wide intermediate to `i64`; validation reports times that do not fit.
fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// Builds one event: its time, duration or occurrence count, and stats.
pub struct EventBuilder<'l> {
    event: &'l mut XEvent,
    line_timestamp_ns: i64,
    stats: Stats<'l>,
}

impl EventBuilder<'_> {
    /// The event as built so far.
    pub fn event(&self) -> &XEvent {
        self.event
    }

    /// Places the event at `offset_ps` picoseconds after the line's start.
    pub fn set_offset_ps(&mut self, offset_ps: i64) -> &mut Self {
        self.event.data = Some(x_event::Data::OffsetPs(offset_ps));
        self
    }

    /// Places the event at an absolute time in picoseconds (relative to the line's start as it is
    /// now: set the line's timestamp first).
    pub fn set_timestamp_ps(&mut self, timestamp_ps: i64) -> &mut Self {
        let offset = i128::from(timestamp_ps) - i128::from(self.line_timestamp_ns) * 1000;
        self.set_offset_ps(saturate(offset))
    }

    /// Places the event at an absolute time in nanoseconds.
    pub fn set_timestamp_ns(&mut self, timestamp_ns: i64) -> &mut Self {
        let offset = (i128::from(timestamp_ns) - i128::from(self.line_timestamp_ns)) * 1000;
        self.set_offset_ps(saturate(offset))
    }

    /// Sets the duration in picoseconds.
    pub fn set_duration_ps(&mut self, duration_ps: i64) -> &mut Self {
        self.event.duration_ps = duration_ps;
        self
    }

    /// Sets the duration so that the event ends at an absolute time in picoseconds.
    pub fn set_end_timestamp_ps(&mut self, end_ps: i64) -> &mut Self {
        let start = i128::from(self.line_timestamp_ns) * 1000
            + i128::from(self.event.offset_ps().unwrap_or(0));
        self.event.duration_ps = saturate(i128::from(end_ps) - start);
        self
    }

    /// Makes this an aggregated event occurring `count` times (it then has no offset).
    pub fn set_num_occurrences(&mut self, count: i64) -> &mut Self {
        self.event.data = Some(x_event::Data::NumOccurrences(count));
        self
    }

    /// Appends a stat named `name` (interned).
    pub fn add_stat(&mut self, name: &str, value: impl Into<StatValue>) -> &mut Self {
        let stat = self.stats.named(name, value.into());
        self.event.stats.push(stat);
        self
    }

    /// Appends a stat by stat metadata id.
    pub fn add_stat_with_metadata_id(
        &mut self,
        metadata_id: i64,
        value: impl Into<StatValue>,
    ) -> &mut Self {
        let stat = self.stats.stat(metadata_id, value.into());
        self.event.stats.push(stat);
        self
    }

    /// Sets a stat, replacing one with the same name.
    pub fn set_or_add_stat(&mut self, name: &str, value: impl Into<StatValue>) -> &mut Self {
        let stat = self.stats.named(name, value.into());
        set_or_add(&mut self.event.stats, stat);
        self
    }
}

impl XEvent {
    /// The offset from the line's start, or `None` for an aggregated event.
    pub fn offset_ps(&self) -> Option<i64> {
        match self.data {
            Some(x_event::Data::OffsetPs(v)) => Some(v),
            Some(x_event::Data::NumOccurrences(_)) => None,
            None => Some(0),
        }
    }

    /// The occurrence count of an aggregated event.
    pub fn num_occurrences(&self) -> Option<i64> {
        match self.data {
            Some(x_event::Data::NumOccurrences(v)) => Some(v),
            _ => None,
        }
    }
}

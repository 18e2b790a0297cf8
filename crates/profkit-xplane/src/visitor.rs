//! Read-only views of a plane with metadata resolved, in the spirit of TSL's `XPlaneVisitor`.
//!
//! [`PlaneVisitor`] visits an owned [`XPlane`]; [`PlaneViewVisitor`] gives the same answers for a
//! zero-copy [`XPlaneView`](crate::XPlaneView) of its bytes, through the same resolution rules
//! (its walks are fallible, as a view decodes as it goes).
//!
//! Times are returned as `i128` picoseconds: `timestamp_ns * 1000 + offset_ps` does not fit in
//! `i64` for epoch timestamps, and a wide type makes the arithmetic exact for every input
//! ([`mod@crate::validate`] reports the files whose times overflow TSL's `i64`).

use std::collections::BTreeMap;
use std::fmt;

use rustc_hash::FxHashMap;

use crate::proto::{XEvent, XEventMetadata, XLine, XPlane, XStat, XStatMetadata, x_stat};

mod view;

pub use view::{
    EventMetadataViewVisitor, EventViewVisitor, LineViewVisitor, PlaneViewVisitor, StatViewVisitor,
};

// The resolution rules, shared by the visitors of owned planes and of views (and by the views'
// own accessors), so that both read a profile the same way.

/// `display` when set, else `name` (lines, event metadata).
#[inline]
pub(crate) fn display_or<'s>(display: &'s str, name: &'s str) -> &'s str {
    if display.is_empty() { name } else { display }
}

/// `display_id` when non-zero, else `id`.
#[inline]
pub(crate) fn display_id_or(display_id: i64, id: i64) -> i64 {
    if display_id != 0 { display_id } else { id }
}

/// An event's absolute start in picoseconds: `line_timestamp_ns * 1000 + offset_ps`, exact.
#[inline]
pub(crate) fn start_ps(line_timestamp_ns: i64, offset_ps: i64) -> i128 {
    i128::from(line_timestamp_ns) * 1000 + i128::from(offset_ps)
}

/// An event's absolute end in picoseconds: its start plus its duration, exact.
#[inline]
pub(crate) fn end_ps(line_timestamp_ns: i64, offset_ps: i64, duration_ps: i64) -> i128 {
    start_ps(line_timestamp_ns, offset_ps) + i128::from(duration_ps)
}

/// The name a `ref_value` resolves to: the name of the stat metadata with that id, empty when the
/// id is not an `i64` or resolves to nothing.
#[inline]
pub(crate) fn ref_name<'s>(id: u64, stat_name: impl FnOnce(i64) -> Option<&'s str>) -> &'s str {
    i64::try_from(id).ok().and_then(stat_name).unwrap_or("")
}

/// The first of an event's own stats, then of its metadata's, whose metadata id is `id`.
#[inline]
pub(crate) fn first_stat<S, E>(
    own: impl Iterator<Item = std::result::Result<S, E>>,
    metadata: impl Iterator<Item = S>,
    id: i64,
    metadata_id: impl Fn(&S) -> i64,
) -> std::result::Result<Option<S>, E> {
    for stat in own {
        let stat = stat?;
        if metadata_id(&stat) == id {
            return Ok(Some(stat));
        }
    }
    Ok(metadata.into_iter().find(|s| metadata_id(s) == id))
}

/// A plane's metadata map indexed by id for the visitors' per-event and per-stat lookups: a
/// table when the ids are small and dense (writers number them from 1, so real files have them
/// so), else the map itself.
enum ById<'a, T> {
    Dense(Vec<Option<&'a T>>),
    Map(&'a BTreeMap<i64, T>),
}

impl<'a, T> ById<'a, T> {
    fn new(map: &'a BTreeMap<i64, T>) -> Self {
        let dense = match (map.first_key_value(), map.last_key_value()) {
            (Some((&first, _)), Some((&last, _))) => {
                // A table at most about twice the map's size.
                let limit = map.len().saturating_mul(2).saturating_add(1024);
                first >= 0 && usize::try_from(last).is_ok_and(|last| last < limit)
            }
            _ => true,
        };
        if !dense {
            return ById::Map(map);
        }
        let len = map
            .last_key_value()
            .and_then(|(&last, _)| usize::try_from(last).ok())
            .map_or(0, |last| last + 1);
        let mut table = vec![None; len];
        for (&id, value) in map {
            if let Some(slot) = usize::try_from(id).ok().and_then(|i| table.get_mut(i)) {
                *slot = Some(value);
            }
        }
        ById::Dense(table)
    }

    #[inline]
    fn get(&self, id: i64) -> Option<&'a T> {
        match self {
            ById::Dense(table) => usize::try_from(id)
                .ok()
                .and_then(|i| table.get(i))
                .copied()
                .flatten(),
            ById::Map(map) => map.get(&id),
        }
    }
}

/// A plane with its metadata indexed: by id (events, stats) and, for stats, by name.
pub struct PlaneVisitor<'a> {
    plane: &'a XPlane,
    event_metadata: ById<'a, XEventMetadata>,
    stat_metadata: ById<'a, XStatMetadata>,
    stat_ids: FxHashMap<&'a str, i64>,
}

impl<'a> PlaneVisitor<'a> {
    /// Visits `plane`.
    pub fn new(plane: &'a XPlane) -> Self {
        let mut stat_ids =
            FxHashMap::with_capacity_and_hasher(plane.stat_metadata.len(), Default::default());
        for (id, md) in &plane.stat_metadata {
            stat_ids.entry(md.name.as_str()).or_insert(*id);
        }
        PlaneVisitor {
            plane,
            event_metadata: ById::new(&plane.event_metadata),
            stat_metadata: ById::new(&plane.stat_metadata),
            stat_ids,
        }
    }

    /// The plane itself.
    pub fn raw(&self) -> &'a XPlane {
        self.plane
    }

    /// The plane's id.
    pub fn id(&self) -> i64 {
        self.plane.id
    }

    /// The plane's name.
    pub fn name(&self) -> &'a str {
        &self.plane.name
    }

    /// The lines, in file order.
    pub fn lines(&self) -> impl ExactSizeIterator<Item = LineVisitor<'_>> + '_ {
        self.plane
            .lines
            .iter()
            .map(move |line| LineVisitor { plane: self, line })
    }

    /// The plane's stats.
    pub fn stats(&self) -> impl ExactSizeIterator<Item = StatVisitor<'_>> + '_ {
        self.plane
            .stats
            .iter()
            .map(move |stat| self.stat_visitor(stat))
    }

    /// The plane stat named `name`.
    pub fn stat(&self, name: &str) -> Option<StatVisitor<'_>> {
        let id = self.stat_metadata_id(name)?;
        self.plane
            .stats
            .iter()
            .find(|s| s.metadata_id == id)
            .map(|s| self.stat_visitor(s))
    }

    /// The event metadata with `id`.
    #[inline]
    pub fn event_metadata(&self, id: i64) -> Option<EventMetadataVisitor<'_>> {
        self.event_metadata
            .get(id)
            .map(|metadata| EventMetadataVisitor {
                plane: self,
                metadata,
            })
    }

    /// Every event metadata, by id.
    pub fn event_metadata_iter(&self) -> impl Iterator<Item = EventMetadataVisitor<'_>> + '_ {
        self.plane
            .event_metadata
            .values()
            .map(move |metadata| EventMetadataVisitor {
                plane: self,
                metadata,
            })
    }

    /// The stat metadata with `id`.
    #[inline]
    pub fn stat_metadata(&self, id: i64) -> Option<&'a XStatMetadata> {
        self.stat_metadata.get(id)
    }

    /// The id of the stat metadata named `name` (the first, if several share it).
    #[inline]
    pub fn stat_metadata_id(&self, name: &str) -> Option<i64> {
        self.stat_ids.get(name).copied()
    }

    #[inline]
    fn stat_visitor<'v>(&'v self, stat: &'v XStat) -> StatVisitor<'v> {
        StatVisitor {
            plane: self,
            stat,
            metadata: self.stat_metadata.get(stat.metadata_id),
        }
    }
}

/// A line of a plane.
#[derive(Clone, Copy)]
pub struct LineVisitor<'v> {
    plane: &'v PlaneVisitor<'v>,
    line: &'v XLine,
}

impl<'v> LineVisitor<'v> {
    /// The line itself.
    pub fn raw(&self) -> &'v XLine {
        self.line
    }

    /// The plane the line is of.
    pub fn plane(&self) -> &'v PlaneVisitor<'v> {
        self.plane
    }

    /// The line's id.
    pub fn id(&self) -> i64 {
        self.line.id
    }

    /// `display_id` when non-zero, else `id`.
    pub fn display_id(&self) -> i64 {
        display_id_or(self.line.display_id, self.line.id)
    }

    /// The line's name.
    pub fn name(&self) -> &'v str {
        &self.line.name
    }

    /// `display_name` when set, else `name`.
    pub fn display_name(&self) -> &'v str {
        display_or(&self.line.display_name, &self.line.name)
    }

    /// The line's start in nanoseconds.
    pub fn timestamp_ns(&self) -> i64 {
        self.line.timestamp_ns
    }

    /// The profiled interval of the line, in picoseconds.
    pub fn duration_ps(&self) -> i64 {
        self.line.duration_ps
    }

    /// The events, in file order.
    pub fn events(&self) -> impl ExactSizeIterator<Item = EventVisitor<'v>> + 'v {
        let plane = self.plane;
        let line = self.line;
        line.events.iter().map(move |event| EventVisitor {
            plane,
            line,
            event,
            metadata: plane.event_metadata.get(event.metadata_id),
        })
    }
}

/// An event with its metadata resolved.
#[derive(Clone, Copy)]
pub struct EventVisitor<'v> {
    plane: &'v PlaneVisitor<'v>,
    line: &'v XLine,
    event: &'v XEvent,
    metadata: Option<&'v XEventMetadata>,
}

impl<'v> EventVisitor<'v> {
    /// The event itself.
    pub fn raw(&self) -> &'v XEvent {
        self.event
    }

    /// The event's metadata id.
    pub fn metadata_id(&self) -> i64 {
        self.event.metadata_id
    }

    /// The event's metadata, if the id resolves.
    pub fn metadata(&self) -> Option<EventMetadataVisitor<'v>> {
        self.metadata.map(|metadata| EventMetadataVisitor {
            plane: self.plane,
            metadata,
        })
    }

    /// The metadata's name; empty when the id resolves to nothing (as in TSL).
    #[inline]
    pub fn name(&self) -> &'v str {
        self.metadata.map_or("", |m| m.name.as_str())
    }

    /// The metadata's display name when set, else its name.
    pub fn display_name(&self) -> &'v str {
        self.metadata
            .map_or("", |m| display_or(&m.display_name, &m.name))
    }

    /// Whether this is an aggregated event (`num_occurrences` set, no offset).
    pub fn is_aggregated(&self) -> bool {
        self.event.num_occurrences().is_some()
    }

    /// The occurrence count of an aggregated event.
    pub fn num_occurrences(&self) -> Option<i64> {
        self.event.num_occurrences()
    }

    /// Offset from the line's start in picoseconds (0 for an aggregated event).
    pub fn offset_ps(&self) -> i64 {
        self.event.offset_ps().unwrap_or(0)
    }

    /// Duration in picoseconds.
    pub fn duration_ps(&self) -> i64 {
        self.event.duration_ps
    }

    /// Absolute start in picoseconds: `line.timestamp_ns * 1000 + offset_ps`.
    pub fn timestamp_ps(&self) -> i128 {
        start_ps(self.line.timestamp_ns, self.offset_ps())
    }

    /// Absolute end in picoseconds: start plus duration.
    pub fn end_timestamp_ps(&self) -> i128 {
        end_ps(
            self.line.timestamp_ns,
            self.offset_ps(),
            self.event.duration_ps,
        )
    }

    /// The event's own stats, in file order.
    pub fn stats(&self) -> impl ExactSizeIterator<Item = StatVisitor<'v>> + 'v {
        let plane = self.plane;
        self.event
            .stats
            .iter()
            .map(move |stat| plane.stat_visitor(stat))
    }

    /// The stats of the event's metadata, in file order.
    pub fn metadata_stats(&self) -> impl Iterator<Item = StatVisitor<'v>> + 'v {
        let plane = self.plane;
        self.metadata
            .into_iter()
            .flat_map(|m| m.stats.iter())
            .map(move |stat| plane.stat_visitor(stat))
    }

    /// Metadata stats then event stats: the order the trace viewer lists them in.
    pub fn all_stats(&self) -> impl Iterator<Item = StatVisitor<'v>> + 'v {
        self.metadata_stats().chain(self.stats())
    }

    /// The stat named `name`: the event's own first, then its metadata's.
    pub fn stat(&self, name: &str) -> Option<StatVisitor<'v>> {
        self.stat_with_id(self.plane.stat_metadata_id(name)?)
    }

    /// The stat whose metadata id is `id`: the event's own first, then its metadata's. With the
    /// id of [`PlaneVisitor::stat_metadata_id`], the answer of [`Self::stat`] without looking the
    /// name up per event.
    #[inline]
    pub fn stat_with_id(&self, id: i64) -> Option<StatVisitor<'v>> {
        let plane = self.plane;
        let found = first_stat(
            self.event
                .stats
                .iter()
                .map(Ok::<_, std::convert::Infallible>),
            self.metadata.into_iter().flat_map(|m| m.stats.iter()),
            id,
            |s| s.metadata_id,
        );
        match found {
            Ok(stat) => stat.map(|s| plane.stat_visitor(s)),
            Err(never) => match never {},
        }
    }
}

/// An event metadata with its stats resolved.
#[derive(Clone, Copy)]
pub struct EventMetadataVisitor<'v> {
    plane: &'v PlaneVisitor<'v>,
    metadata: &'v XEventMetadata,
}

impl<'v> EventMetadataVisitor<'v> {
    /// The metadata itself.
    pub fn raw(&self) -> &'v XEventMetadata {
        self.metadata
    }

    /// Its id.
    pub fn id(&self) -> i64 {
        self.metadata.id
    }

    /// Its name.
    pub fn name(&self) -> &'v str {
        &self.metadata.name
    }

    /// Its display name when set, else its name.
    pub fn display_name(&self) -> &'v str {
        display_or(&self.metadata.display_name, &self.metadata.name)
    }

    /// Its stats.
    pub fn stats(&self) -> impl ExactSizeIterator<Item = StatVisitor<'v>> + 'v {
        let plane = self.plane;
        self.metadata
            .stats
            .iter()
            .map(move |stat| plane.stat_visitor(stat))
    }

    /// The metadata of its children (ids that resolve to nothing are skipped).
    pub fn children(&self) -> impl Iterator<Item = EventMetadataVisitor<'v>> + 'v {
        let plane = self.plane;
        self.metadata
            .child_id
            .iter()
            .filter_map(move |&id| plane.event_metadata.get(id))
            .map(move |metadata| EventMetadataVisitor { plane, metadata })
    }
}

/// A stat with its name and value resolved.
#[derive(Clone, Copy)]
pub struct StatVisitor<'v> {
    plane: &'v PlaneVisitor<'v>,
    stat: &'v XStat,
    metadata: Option<&'v XStatMetadata>,
}

impl<'v> StatVisitor<'v> {
    /// The stat itself.
    pub fn raw(&self) -> &'v XStat {
        self.stat
    }

    /// Its metadata id.
    #[inline]
    pub fn metadata_id(&self) -> i64 {
        self.stat.metadata_id
    }

    /// Its name; empty when the metadata id resolves to nothing.
    #[inline]
    pub fn name(&self) -> &'v str {
        self.metadata.map_or("", |m| m.name.as_str())
    }

    /// Its metadata's description.
    pub fn description(&self) -> &'v str {
        self.metadata.map_or("", |m| m.description.as_str())
    }

    /// Its value, `None` when no value is set. A `ref_value` is resolved to the name of the stat
    /// metadata it refers to (empty if that id resolves to nothing).
    #[inline]
    pub fn value(&self) -> Option<StatValueRef<'v>> {
        Some(match self.stat.value.as_ref()? {
            x_stat::Value::DoubleValue(v) => StatValueRef::Double(*v),
            x_stat::Value::Uint64Value(v) => StatValueRef::Uint64(*v),
            x_stat::Value::Int64Value(v) => StatValueRef::Int64(*v),
            x_stat::Value::StrValue(v) => StatValueRef::Str(v),
            x_stat::Value::BytesValue(v) => StatValueRef::Bytes(v),
            x_stat::Value::RefValue(id) => StatValueRef::Ref(ref_name(*id, |id| {
                self.plane.stat_metadata(id).map(|m| m.name.as_str())
            })),
        })
    }
}

/// A resolved stat value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StatValueRef<'a> {
    /// `double_value`.
    Double(f64),
    /// `uint64_value`.
    Uint64(u64),
    /// `int64_value`.
    Int64(i64),
    /// `str_value`.
    Str(&'a str),
    /// `bytes_value`.
    Bytes(&'a [u8]),
    /// `ref_value`, resolved to the referenced stat metadata's name.
    Ref(&'a str),
}

impl<'a> StatValueRef<'a> {
    /// The value as a signed integer, for integer kinds that fit.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            StatValueRef::Int64(v) => Some(v),
            StatValueRef::Uint64(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as an unsigned integer, for integer kinds that fit.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            StatValueRef::Uint64(v) => Some(v),
            StatValueRef::Int64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a double, for numeric kinds.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            StatValueRef::Double(v) => Some(v),
            StatValueRef::Uint64(v) => Some(v as f64),
            StatValueRef::Int64(v) => Some(v as f64),
            _ => None,
        }
    }

    /// The value as a string, for `str_value` and (resolved) `ref_value`.
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            StatValueRef::Str(v) | StatValueRef::Ref(v) => Some(v),
            _ => None,
        }
    }

    /// An owned copy, ready for a builder (a ref stays a ref, to be re-interned).
    pub fn to_owned_value(&self) -> crate::StatValue {
        match *self {
            StatValueRef::Double(v) => crate::StatValue::Double(v),
            StatValueRef::Uint64(v) => crate::StatValue::Uint64(v),
            StatValueRef::Int64(v) => crate::StatValue::Int64(v),
            StatValueRef::Str(v) => crate::StatValue::Str(v.to_owned()),
            StatValueRef::Bytes(v) => crate::StatValue::Bytes(bytes::Bytes::copy_from_slice(v)),
            StatValueRef::Ref(v) => crate::StatValue::Ref(v.to_owned()),
        }
    }
}

/// Integers in decimal, doubles in Rust's shortest round-trip form, strings as they are, bytes as
/// `<opaque bytes>` (the trace viewer's wording).
impl fmt::Display for StatValueRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatValueRef::Double(v) => write!(f, "{v}"),
            StatValueRef::Uint64(v) => write!(f, "{v}"),
            StatValueRef::Int64(v) => write!(f, "{v}"),
            StatValueRef::Str(v) | StatValueRef::Ref(v) => f.write_str(v),
            StatValueRef::Bytes(_) => f.write_str("<opaque bytes>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::x_event;

    /// A plane whose metadata has the ids `ids`, each named after its id, and one event of each.
    fn plane(ids: &[i64]) -> XPlane {
        let mut plane = XPlane::default();
        let mut line = XLine::default();
        for &id in ids {
            let name = format!("m{id}");
            plane.event_metadata.insert(
                id,
                XEventMetadata {
                    id,
                    name: name.clone(),
                    ..Default::default()
                },
            );
            plane.stat_metadata.insert(
                id,
                XStatMetadata {
                    id,
                    name,
                    ..Default::default()
                },
            );
            line.events.push(XEvent {
                metadata_id: id,
                data: Some(x_event::Data::OffsetPs(0)),
                stats: vec![XStat {
                    metadata_id: id,
                    value: Some(x_stat::Value::RefValue(id as u64)),
                }],
                ..Default::default()
            });
        }
        plane.lines.push(line);
        plane
    }

    #[test]
    fn metadata_by_id_answers_as_the_maps_do() {
        // Dense ids (a table), sparse and negative ones (the maps), none.
        let cases: [&[i64]; 5] = [
            &[1, 2, 3, 7],
            &[0, 5000],
            &[-3, 1, 2],
            &[i64::MIN, 4, i64::MAX],
            &[],
        ];
        for ids in cases {
            let plane = plane(ids);
            let visitor = PlaneVisitor::new(&plane);
            let probes = ids
                .iter()
                .flat_map(|&id| [id, id.wrapping_add(1), id.wrapping_sub(1)])
                .chain([0, -1, 8, 1 << 40, i64::MIN, i64::MAX]);
            for id in probes {
                assert_eq!(
                    visitor.stat_metadata(id).map(|m| m.id),
                    plane.stat_metadata.get(&id).map(|m| m.id),
                    "{ids:?} stat {id}"
                );
                assert_eq!(
                    visitor.event_metadata(id).map(|m| m.id()),
                    plane.event_metadata.get(&id).map(|m| m.id),
                    "{ids:?} event {id}"
                );
            }
            for line in visitor.lines() {
                for event in line.events() {
                    let id = event.metadata_id();
                    let name = format!("m{id}");
                    assert_eq!(event.name(), name);
                    let stat = event.stat(&name).expect("stat by name");
                    let by_id = event.stat_with_id(id).expect("stat by id");
                    assert_eq!(stat.raw(), by_id.raw());
                    assert_eq!(by_id.name(), name);
                    // A ref resolves when it is an `i64` (a negative id stored as a `u64` is not).
                    let referred = if id >= 0 { name.as_str() } else { "" };
                    assert_eq!(by_id.value(), Some(StatValueRef::Ref(referred)));
                    assert_eq!(line.plane().id(), plane.id);
                }
            }
        }
    }
}

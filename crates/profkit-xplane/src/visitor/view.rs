//! The visitor over zero-copy views: the same resolved API as [`PlaneVisitor`](super::PlaneVisitor)
//! (names, display fallbacks, absolute times, stats by name, metadata stats, children), for a
//! plane that is read, not built.
//!
//! What differs is only what laziness demands: lines, events and their own stats are decoded as
//! they are walked, so their iterators yield `Result`s (the located error [`crate::decode`] gives
//! for the same bytes), and so does a lookup that walks an event's or the plane's stats. Metadata
//! is indexed once, when the visitor is made, so everything reached through it is infallible.
//! Strings borrow the encoded bytes (`&'a str`), not the visitor.

use crate::error::Result;
use crate::visitor::{StatValueRef, display_or, first_stat};
use crate::xview::{
    PlaneMetadata, XEventMetadataView, XEventView, XLineView, XPlaneView, XStatMetadataView,
    XStatView,
};

/// A viewed plane with its metadata indexed: the view counterpart of
/// [`PlaneVisitor`](super::PlaneVisitor).
#[derive(Clone, Copy)]
pub struct PlaneViewVisitor<'p, 'a> {
    plane: &'p XPlaneView<'a>,
    metadata: &'p PlaneMetadata<'a>,
}

impl<'p, 'a> PlaneViewVisitor<'p, 'a> {
    /// Visits `plane`, indexing its metadata maps (the error of a damaged map is returned).
    pub fn new(plane: &'p XPlaneView<'a>) -> Result<Self> {
        Ok(PlaneViewVisitor {
            plane,
            metadata: plane.metadata()?,
        })
    }

    /// The plane view itself.
    pub fn raw(&self) -> &'p XPlaneView<'a> {
        self.plane
    }

    /// The plane's metadata index.
    pub fn plane_metadata(&self) -> &'p PlaneMetadata<'a> {
        self.metadata
    }

    /// The plane's id.
    pub fn id(&self) -> i64 {
        self.plane.id()
    }

    /// The plane's name.
    pub fn name(&self) -> &'a str {
        self.plane.name()
    }

    /// The lines, in file order, each decoded as it is reached.
    pub fn lines(&self) -> impl Iterator<Item = Result<LineViewVisitor<'p, 'a>>> + 'p {
        let plane = *self;
        self.plane
            .lines()
            .map(move |line| line.map(|line| LineViewVisitor { plane, line }))
    }

    /// The plane's stats, in file order.
    pub fn stats(&self) -> impl Iterator<Item = Result<StatViewVisitor<'p, 'a>>> + 'p {
        let plane = *self;
        self.plane
            .stats()
            .map(move |stat| stat.map(|stat| plane.stat_visitor(stat)))
    }

    /// The plane stat named `name`.
    pub fn stat(&self, name: &str) -> Result<Option<StatViewVisitor<'p, 'a>>> {
        let Some(id) = self.stat_metadata_id(name) else {
            return Ok(None);
        };
        let found = first_stat(self.plane.stats(), std::iter::empty(), id, |s| {
            s.metadata_id()
        })?;
        Ok(found.map(|s| self.stat_visitor(s)))
    }

    /// The event metadata with `id`.
    pub fn event_metadata(&self, id: i64) -> Option<EventMetadataViewVisitor<'p, 'a>> {
        self.metadata
            .event(id)
            .map(|metadata| EventMetadataViewVisitor {
                plane: *self,
                metadata,
            })
    }

    /// Every event metadata, by id.
    pub fn event_metadata_iter(
        &self,
    ) -> impl ExactSizeIterator<Item = EventMetadataViewVisitor<'p, 'a>> + 'p {
        let plane = *self;
        self.metadata
            .events()
            .iter()
            .map(move |metadata| EventMetadataViewVisitor { plane, metadata })
    }

    /// The stat metadata with `id`.
    pub fn stat_metadata(&self, id: i64) -> Option<&'p XStatMetadataView<'a>> {
        self.metadata.stat(id)
    }

    /// The id of the stat metadata named `name` (the first, if several share it).
    pub fn stat_metadata_id(&self, name: &str) -> Option<i64> {
        self.metadata.stat_id(name)
    }

    fn stat_visitor(&self, stat: XStatView<'a>) -> StatViewVisitor<'p, 'a> {
        StatViewVisitor {
            plane: *self,
            stat,
            metadata: self.metadata.stat(stat.metadata_id()),
        }
    }
}

/// A line of a viewed plane.
#[derive(Clone, Copy)]
pub struct LineViewVisitor<'p, 'a> {
    plane: PlaneViewVisitor<'p, 'a>,
    line: XLineView<'a>,
}

impl<'p, 'a> LineViewVisitor<'p, 'a> {
    /// The line view itself.
    pub fn raw(&self) -> &XLineView<'a> {
        &self.line
    }

    /// The line's id.
    pub fn id(&self) -> i64 {
        self.line.id()
    }

    /// `display_id` when non-zero, else `id`.
    pub fn display_id(&self) -> i64 {
        self.line.display_id()
    }

    /// The line's name.
    pub fn name(&self) -> &'a str {
        self.line.name()
    }

    /// `display_name` when set, else `name`.
    pub fn display_name(&self) -> &'a str {
        self.line.display_name()
    }

    /// The line's start in nanoseconds.
    pub fn timestamp_ns(&self) -> i64 {
        self.line.timestamp_ns()
    }

    /// The profiled interval of the line, in picoseconds.
    pub fn duration_ps(&self) -> i64 {
        self.line.duration_ps()
    }

    /// How many events the line holds.
    pub fn event_count(&self) -> usize {
        self.line.event_count()
    }

    /// The events, in file order, each decoded as it is reached.
    pub fn events(&self) -> impl Iterator<Item = Result<EventViewVisitor<'p, 'a>>> + 'p {
        let plane = self.plane;
        self.line.events().map(move |event| {
            event.map(|event| EventViewVisitor {
                plane,
                event,
                metadata: plane.metadata.event(event.metadata_id()),
            })
        })
    }
}

/// An event of a viewed plane with its metadata resolved.
#[derive(Clone, Copy)]
pub struct EventViewVisitor<'p, 'a> {
    plane: PlaneViewVisitor<'p, 'a>,
    event: XEventView<'a>,
    metadata: Option<&'p XEventMetadataView<'a>>,
}

impl<'p, 'a> EventViewVisitor<'p, 'a> {
    /// The event view itself.
    pub fn raw(&self) -> &XEventView<'a> {
        &self.event
    }

    /// The event's metadata id.
    pub fn metadata_id(&self) -> i64 {
        self.event.metadata_id()
    }

    /// The event's metadata, if the id resolves.
    pub fn metadata(&self) -> Option<EventMetadataViewVisitor<'p, 'a>> {
        self.metadata.map(|metadata| EventMetadataViewVisitor {
            plane: self.plane,
            metadata,
        })
    }

    /// The metadata's name; empty when the id resolves to nothing (as in TSL).
    pub fn name(&self) -> &'a str {
        self.metadata.map_or("", |m| m.name())
    }

    /// The metadata's display name when set, else its name.
    pub fn display_name(&self) -> &'a str {
        self.metadata
            .map_or("", |m| display_or(m.raw_display_name(), m.name()))
    }

    /// Whether this is an aggregated event (`num_occurrences` set, no offset).
    pub fn is_aggregated(&self) -> bool {
        self.event.is_aggregated()
    }

    /// The occurrence count of an aggregated event.
    pub fn num_occurrences(&self) -> Option<i64> {
        self.event.num_occurrences()
    }

    /// Offset from the line's start in picoseconds (0 for an aggregated event).
    pub fn offset_ps(&self) -> i64 {
        self.event.offset_ps()
    }

    /// Duration in picoseconds.
    pub fn duration_ps(&self) -> i64 {
        self.event.duration_ps()
    }

    /// Absolute start in picoseconds: `line.timestamp_ns * 1000 + offset_ps`.
    pub fn timestamp_ps(&self) -> i128 {
        self.event.timestamp_ps()
    }

    /// Absolute end in picoseconds: start plus duration.
    pub fn end_timestamp_ps(&self) -> i128 {
        self.event.end_timestamp_ps()
    }

    /// The event's own stats, in file order, each decoded as it is reached.
    pub fn stats(&self) -> impl Iterator<Item = Result<StatViewVisitor<'p, 'a>>> + 'p {
        let plane = self.plane;
        self.event
            .stats()
            .map(move |stat| stat.map(|stat| plane.stat_visitor(stat)))
    }

    /// The stats of the event's metadata, in file order.
    pub fn metadata_stats(&self) -> impl Iterator<Item = StatViewVisitor<'p, 'a>> + 'p {
        let plane = self.plane;
        self.metadata
            .into_iter()
            .flat_map(|m| m.stats().iter())
            .map(move |stat| plane.stat_visitor(*stat))
    }

    /// Metadata stats then event stats: the order the trace viewer lists them in.
    pub fn all_stats(&self) -> impl Iterator<Item = Result<StatViewVisitor<'p, 'a>>> + 'p {
        self.metadata_stats().map(Ok).chain(self.stats())
    }

    /// The stat named `name`: the event's own first, then its metadata's.
    pub fn stat(&self, name: &str) -> Result<Option<StatViewVisitor<'p, 'a>>> {
        let Some(id) = self.plane.stat_metadata_id(name) else {
            return Ok(None);
        };
        let found = first_stat(
            self.event.stats(),
            self.metadata
                .into_iter()
                .flat_map(|m| m.stats().iter().copied()),
            id,
            |s| s.metadata_id(),
        )?;
        Ok(found.map(|s| self.plane.stat_visitor(s)))
    }
}

/// An event metadata of a viewed plane with its stats resolved.
#[derive(Clone, Copy)]
pub struct EventMetadataViewVisitor<'p, 'a> {
    plane: PlaneViewVisitor<'p, 'a>,
    metadata: &'p XEventMetadataView<'a>,
}

impl<'p, 'a> EventMetadataViewVisitor<'p, 'a> {
    /// The metadata view itself.
    pub fn raw(&self) -> &'p XEventMetadataView<'a> {
        self.metadata
    }

    /// Its id.
    pub fn id(&self) -> i64 {
        self.metadata.id()
    }

    /// Its name.
    pub fn name(&self) -> &'a str {
        self.metadata.name()
    }

    /// Its display name when set, else its name.
    pub fn display_name(&self) -> &'a str {
        display_or(self.metadata.raw_display_name(), self.metadata.name())
    }

    /// Its stats.
    pub fn stats(&self) -> impl ExactSizeIterator<Item = StatViewVisitor<'p, 'a>> + 'p {
        let plane = self.plane;
        self.metadata
            .stats()
            .iter()
            .map(move |stat| plane.stat_visitor(*stat))
    }

    /// The metadata of its children (ids that resolve to nothing are skipped).
    pub fn children(&self) -> impl Iterator<Item = EventMetadataViewVisitor<'p, 'a>> + 'p {
        let plane = self.plane;
        self.metadata
            .child_id()
            .iter()
            .filter_map(move |id| plane.event_metadata(*id))
    }
}

/// A stat of a viewed plane with its name and value resolved.
#[derive(Clone, Copy)]
pub struct StatViewVisitor<'p, 'a> {
    plane: PlaneViewVisitor<'p, 'a>,
    stat: XStatView<'a>,
    metadata: Option<&'p XStatMetadataView<'a>>,
}

impl<'p, 'a> StatViewVisitor<'p, 'a> {
    /// The stat view itself.
    pub fn raw(&self) -> &XStatView<'a> {
        &self.stat
    }

    /// Its metadata id.
    pub fn metadata_id(&self) -> i64 {
        self.stat.metadata_id()
    }

    /// Its name; empty when the metadata id resolves to nothing.
    pub fn name(&self) -> &'a str {
        self.metadata.map_or("", |m| m.name())
    }

    /// Its metadata's description.
    pub fn description(&self) -> &'a str {
        self.metadata.map_or("", |m| m.description())
    }

    /// Its value, `None` when no value is set. A `ref_value` is resolved to the name of the stat
    /// metadata it refers to (empty if that id resolves to nothing).
    pub fn value(&self) -> Option<StatValueRef<'a>> {
        self.stat.value().map(|v| self.plane.metadata.resolve(v))
    }
}

//! The view of one XEvent: its offset or timestamp, duration, stats and metadata.

use crate::error::Result;
use crate::proto::{XEvent, x_event};
use crate::visitor;
use crate::wire::Msg;

use super::*;

/// A borrowed view of one XEvent, its scalar fields decoded; its stats are decoded when walked.
#[derive(Clone, Copy)]
pub struct XEventView<'a> {
    pub(super) root: Root<'a>,
    /// The event's body from its first stat on (empty without stats).
    pub(super) stats: &'a [u8],
    pub(super) metadata_id: i64,
    pub(super) data: Option<x_event::Data>,
    pub(super) duration_ps: i64,
    pub(super) line_timestamp_ns: i64,
    pub(super) stat_count: u32,
}

impl<'a> XEventView<'a> {
    #[inline(always)]
    pub(super) fn parse(root: Root<'a>, body: &'a [u8], line_timestamp_ns: i64) -> Walk<Self> {
        Self::parse_fields::<false>(root, body, line_timestamp_ns)
    }

    /// The event's fields; with `PREFIX`, none after its first stat (see
    /// [`XEventView::from_body_prefix`]), else all of them, its stats counted.
    #[inline(always)]
    fn parse_fields<const PREFIX: bool>(
        root: Root<'a>,
        body: &'a [u8],
        line_timestamp_ns: i64,
    ) -> Walk<Self> {
        let mut event = XEventView {
            root,
            stats: &[],
            metadata_id: 0,
            data: None,
            duration_ps: 0,
            line_timestamp_ns,
            stat_count: 0,
        };
        let mut f = Fields::new(body);
        let mut first_stat = None;
        while !f.at_end() {
            let at = f.pos;
            let key = f.varint()?;
            match key_byte(key) {
                T1_VARINT => event.metadata_id = f.varint()? as i64,
                T2_VARINT => {
                    event.data = Some(x_event::Data::OffsetPs(f.varint()? as i64));
                }
                T3_VARINT => event.duration_ps = f.varint()? as i64,
                T5_VARINT => {
                    event.data = Some(x_event::Data::NumOccurrences(f.varint()? as i64));
                }
                T4_LEN => {
                    if first_stat.is_none() {
                        first_stat = Some(at);
                    }
                    if PREFIX {
                        break;
                    }
                    f.bytes()?;
                    event.stat_count = event.stat_count.saturating_add(1);
                }
                _ => {
                    let (number, wire_type) = checked_tag(key)?;
                    f.other(Msg::Event, number, wire_type)?;
                }
            }
        }
        if let Some(start) = first_stat {
            event.stats = body.get(start..).unwrap_or_default();
        }
        Ok(event)
    }

    /// The root of an event read from its own body (errors located in `XEvent`).
    fn body_root(body: &'a [u8]) -> Root<'a> {
        Root {
            msg: Msg::Event,
            body,
            base: 0,
            open: true,
            plane: None,
        }
    }

    /// The view of one event from its encoded body (as [`Events::next_with_body`] gives it), on a
    /// line starting at `line_timestamp_ns`; errors are located in `XEvent`.
    pub fn from_body(body: &'a [u8], line_timestamp_ns: i64) -> Result<Self> {
        let root = Self::body_root(body);
        Self::parse(root, body, line_timestamp_ns).map_err(|Bad| root.error())
    }

    /// [`XEventView::from_body`], reading no further than the event's first stat: what follows
    /// it is taken as the stats (walked when asked for). The event's fields are as
    /// [`XEventView::from_body`] finds them when no field but stats follows its first stat (as
    /// every writer that writes fields in order encodes events), which the caller checks once
    /// (the two views agree); [`XEventView::stat_count`] is 0 on such a view.
    #[inline]
    pub fn from_body_prefix(body: &'a [u8], line_timestamp_ns: i64) -> Result<Self> {
        let root = Self::body_root(body);
        Self::parse_fields::<true>(root, body, line_timestamp_ns).map_err(|Bad| root.error())
    }

    /// `metadata_id`.
    pub fn metadata_id(&self) -> i64 {
        self.metadata_id
    }

    /// The `data` oneof: an offset or an occurrence count.
    pub fn data(&self) -> Option<x_event::Data> {
        self.data
    }

    /// Offset from the line's start in picoseconds (0 for an aggregated event).
    pub fn offset_ps(&self) -> i64 {
        match self.data {
            Some(x_event::Data::OffsetPs(v)) => v,
            _ => 0,
        }
    }

    /// The occurrence count of an aggregated event.
    pub fn num_occurrences(&self) -> Option<i64> {
        match self.data {
            Some(x_event::Data::NumOccurrences(v)) => Some(v),
            _ => None,
        }
    }

    /// Whether this is an aggregated event (`num_occurrences` set, no offset).
    pub fn is_aggregated(&self) -> bool {
        self.num_occurrences().is_some()
    }

    /// `duration_ps`.
    pub fn duration_ps(&self) -> i64 {
        self.duration_ps
    }

    /// Absolute start in picoseconds: the line's `timestamp_ns * 1000 + offset_ps`.
    pub fn timestamp_ps(&self) -> i128 {
        visitor::start_ps(self.line_timestamp_ns, self.offset_ps())
    }

    /// Absolute end in picoseconds: start plus duration.
    pub fn end_timestamp_ps(&self) -> i128 {
        visitor::end_ps(self.line_timestamp_ns, self.offset_ps(), self.duration_ps)
    }

    /// Whether the event has stats.
    pub fn has_stats(&self) -> bool {
        !self.stats.is_empty()
    }

    /// The event's stats, in file order.
    #[inline]
    pub fn stats(&self) -> Stats<'a> {
        Stats {
            scan: Scan::new(self.root, self.stats),
            msg: Msg::Event,
            tag: T4_LEN,
        }
    }

    /// How many stats the event holds.
    pub fn stat_count(&self) -> usize {
        self.stat_count as usize
    }

    /// The owned XEvent.
    pub fn to_owned_event(&self) -> Result<XEvent> {
        self.owned_with(None)
    }

    #[inline]
    pub(super) fn owned_with(&self, owner: Option<&bytes::Bytes>) -> Result<XEvent> {
        let mut stats = Vec::with_capacity(self.stat_count());
        for stat in self.stats() {
            stats.push(stat?.owned_with(owner));
        }
        Ok(XEvent {
            metadata_id: self.metadata_id,
            duration_ps: self.duration_ps,
            data: self.data,
            stats,
        })
    }
}

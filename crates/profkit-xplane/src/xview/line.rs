//! The view of one XLine and its events.

use profkit_wire::{LEN, VARINT};

use crate::error::Result;
use crate::proto::{XEvent, XLine};
use crate::visitor;
use crate::wire::Msg;

use super::*;

/// A borrowed view of one XLine, its scalar fields decoded.
#[derive(Clone, Copy)]
pub struct XLineView<'a> {
    pub(super) root: Root<'a>,
    pub(super) body: &'a [u8],
    pub(super) id: i64,
    pub(super) display_id: i64,
    pub(super) name: &'a str,
    pub(super) display_name: &'a str,
    pub(super) timestamp_ns: i64,
    pub(super) duration_ps: i64,
    pub(super) events: usize,
}

impl<'a> XLineView<'a> {
    pub(super) fn parse(root: Root<'a>, body: &'a [u8]) -> Walk<Self> {
        let mut line = XLineView {
            root,
            body,
            id: 0,
            display_id: 0,
            name: "",
            display_name: "",
            timestamp_ns: 0,
            duration_ps: 0,
            events: 0,
        };
        let mut f = Fields::new(body);
        while !f.at_end() {
            let key = f.varint()?;
            // Events make up almost all of a line: skip them first.
            if key_byte(key) == T4_LEN {
                f.bytes()?;
                line.events += 1;
                continue;
            }
            match checked_tag(key)? {
                (1, VARINT) => line.id = f.varint()? as i64,
                (10, VARINT) => line.display_id = f.varint()? as i64,
                (2, LEN) => line.name = f.str()?,
                (11, LEN) => line.display_name = f.str()?,
                (3, VARINT) => line.timestamp_ns = f.varint()? as i64,
                (9, VARINT) => line.duration_ps = f.varint()? as i64,
                (number, wire_type) => f.other(Msg::Line, number, wire_type)?,
            }
        }
        Ok(line)
    }

    /// `id`.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The encoded line (its body, without the key and length that precede it in the plane).
    pub fn bytes(&self) -> &'a [u8] {
        self.body
    }

    /// `display_id` when non-zero, else `id`.
    pub fn display_id(&self) -> i64 {
        visitor::display_id_or(self.display_id, self.id)
    }

    /// `display_id` as stored.
    pub fn raw_display_id(&self) -> i64 {
        self.display_id
    }

    /// `name`.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// `display_name` when set, else `name`.
    pub fn display_name(&self) -> &'a str {
        visitor::display_or(self.display_name, self.name)
    }

    /// `display_name` as stored.
    pub fn raw_display_name(&self) -> &'a str {
        self.display_name
    }

    /// `timestamp_ns`: the line's start.
    pub fn timestamp_ns(&self) -> i64 {
        self.timestamp_ns
    }

    /// `duration_ps`: the profiled interval of the line.
    pub fn duration_ps(&self) -> i64 {
        self.duration_ps
    }

    /// The events, in file order.
    pub fn events(&self) -> Events<'a> {
        Events {
            scan: Scan::new(self.root, self.body),
            timestamp_ns: self.timestamp_ns,
        }
    }

    /// How many events the line holds.
    pub fn event_count(&self) -> usize {
        self.events
    }

    /// The owned XLine.
    pub fn to_owned_line(&self) -> Result<XLine> {
        self.owned_with(None)
    }

    pub(super) fn owned_with(&self, owner: Option<&bytes::Bytes>) -> Result<XLine> {
        let mut line = XLine {
            id: self.id,
            display_id: self.display_id,
            name: self.name.to_owned(),
            display_name: self.display_name.to_owned(),
            timestamp_ns: self.timestamp_ns,
            duration_ps: self.duration_ps,
            events: Vec::with_capacity(self.events),
        };
        // One loop over the line's events, without the iterators' per-item machinery: this is
        // what `decode` spends its time in.
        let mut f = Fields::new(self.body);
        let walked = (|| {
            while !f.at_end() {
                let key = f.varint()?;
                if key_byte(key) == T4_LEN {
                    let body = f.bytes()?;
                    line.events.push(owned_event(body, owner)?);
                    continue;
                }
                let (number, wire_type) = checked_tag(key)?;
                f.other(Msg::Line, number, wire_type)?;
            }
            Ok(())
        })();
        walked.map_err(|Bad| self.root.error())?;
        Ok(line)
    }
}

/// The owned XEvent of an event's body: its scalars and a count of its stats in one pass, then
/// its stats into a vector of exactly that size.
#[inline(always)]
pub(super) fn owned_event(body: &[u8], owner: Option<&bytes::Bytes>) -> Walk<XEvent> {
    let view = XEventView::parse(
        Root {
            msg: Msg::Event,
            body: &[],
            base: 0,
            open: false,
            plane: None,
        },
        body,
        0,
    )?;
    let mut stats = Vec::with_capacity(view.stat_count());
    let mut f = Fields::new(view.stats);
    while !f.at_end() {
        let key = f.varint()?;
        if key_byte(key) == T4_LEN {
            stats.push(XStatView::decode_owned(f.bytes()?, owner)?);
            continue;
        }
        let (number, wire_type) = checked_tag(key)?;
        f.other(Msg::Event, number, wire_type)?;
    }
    Ok(XEvent {
        metadata_id: view.metadata_id,
        duration_ps: view.duration_ps,
        data: view.data,
        stats,
    })
}

/// The events of a line, each decoded as it is reached.
#[derive(Clone)]
pub struct Events<'a> {
    pub(super) scan: Scan<'a>,
    pub(super) timestamp_ns: i64,
}

impl<'a> Iterator for Events<'a> {
    type Item = Result<XEventView<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let timestamp_ns = self.timestamp_ns;
        self.scan.next_with(Msg::Line, T4_LEN, |root, body| {
            XEventView::parse(root, body, timestamp_ns)
        })
    }
}

impl<'a> Events<'a> {
    /// The next event's encoded body (the bytes [`XEventView::from_body`] takes), not parsed: for
    /// a reader that finds where the events lie first and parses them later.
    #[inline]
    pub fn next_body(&mut self) -> Option<Result<&'a [u8]>> {
        self.scan.next_with(Msg::Line, T4_LEN, |_, body| Ok(body))
    }

    /// The next event with its encoded body (the bytes [`XEventView::from_body`] takes): for a
    /// reader that keeps where each event lies and views it again later.
    #[inline]
    pub fn next_with_body(&mut self) -> Option<Result<(&'a [u8], XEventView<'a>)>> {
        let timestamp_ns = self.timestamp_ns;
        self.scan.next_with(Msg::Line, T4_LEN, |root, body| {
            XEventView::parse(root, body, timestamp_ns).map(|e| (body, e))
        })
    }
}

impl std::iter::FusedIterator for Events<'_> {}

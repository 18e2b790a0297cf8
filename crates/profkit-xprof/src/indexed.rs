//! A plane kept as its encoded bytes, with where each event of each line lies: what OpStats and
//! the preprocessing's first pass read of the host threads' plane, in place of the decoded plane.
//!
//! A decoded event costs 56 bytes and its stats 40 bytes each, in as many allocations as events
//! with stats; a TensorFlow host plane decoded is about five times its file. Indexed, the plane
//! costs its bytes and 8 bytes an event, and each pass views the events it walks (their stats
//! parsed as they are read, which the walk checked once when it made the index). Events that
//! preprocessing adds to the plane (the threadpool regions) are kept beside it, in their place in
//! their line's order: 24 bytes each when they have no stats and an offset (the regions), decoded
//! otherwise. A plane read from an input that can be read again may let go of its bytes while no
//! pass reads them and read them again after (`release`, `restore`).

use std::collections::BTreeMap;

use profkit_xplane::visitor::StatValueRef;
use profkit_xplane::xview::{StatValueView, XEventView, XPlaneView};
use profkit_xplane::{
    PlaneBytes, XEvent, XEventMetadata, XLine, XPlane, XStat, XStatMetadata, x_stat,
};

/// Where one event of a line is: its body in the plane's bytes, or an added event.
#[derive(Clone, Copy, Debug)]
struct Slot {
    start: u32,
    /// The body's length, or [`ADDED`] when `start` is an index into the added events.
    len: u32,
}

const ADDED: u32 = u32::MAX;
/// In [`Slot::len`]: `start` is an index into the plain added events.
const PLAIN: u32 = u32::MAX - 1;
/// In [`Slot::len`]: the event reads the same from its fields up to its first stat (see
/// `XEventView::from_body_prefix`), checked when the index was made.
const PREFIX: u32 = 1 << 31;

/// A plane as its bytes and an index of its events (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(crate) struct IndexedPlane {
    bytes: bytes::Bytes,
    /// The plane without its lines' events: its name, id, metadata and stats, and each line's
    /// own fields.
    shadow: XPlane,
    /// Each line's events, in order.
    lines: Vec<Vec<Slot>>,
    /// Events added to the plane (see [`IndexedPlane::insert_sorted`]).
    added: Vec<XEvent>,
    /// Added events without stats and with an offset (the threadpool regions), a third of the
    /// size of an owned event.
    plain: Vec<PlainEvent>,
    /// Where the plane's bytes lie in the input they were read from, when that input can be read
    /// again: they may then be let go of while no pass reads them ([`IndexedPlane::release`]).
    origin: Option<u64>,
    /// The bytes let go of, to be read again ([`IndexedPlane::restore`]).
    released: Option<Released>,
    /// Once split ([`IndexedPlane::split_lines`]): each line's events' bytes on their own, `bytes`
    /// then empty, so that a line's bytes can be let go of as soon as a pass is done with it.
    parts: Vec<Part>,
}

/// The bytes of one line's events, read on their own: where they start in the plane's bytes, and
/// when let go of, what reads them again.
#[derive(Clone, Debug, Default)]
struct Part {
    base: u32,
    bytes: bytes::Bytes,
    len: usize,
    hash: u64,
    released: bool,
}

/// What [`IndexedPlane::restore`] reads again: where, how much, and a hash of what it was.
#[derive(Clone, Copy, Debug)]
struct Released {
    offset: u64,
    len: usize,
    hash: u64,
}

/// `len` bytes of `input` from byte `offset`, which must hash to `hash` (what was read there
/// before): else the input changed meanwhile, an error.
fn read_checked<R: std::io::Read + std::io::Seek>(
    input: &mut R,
    offset: u64,
    len: usize,
    hash: u64,
) -> std::io::Result<Vec<u8>> {
    input.seek(std::io::SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(len)
        .map_err(std::io::Error::other)?;
    let mut part = std::io::Read::take(&mut *input, len as u64);
    let got = std::io::Read::read_to_end(&mut part, &mut bytes)?;
    if got != len || bytes_hash(&bytes) != hash {
        return Err(std::io::Error::other(format!(
            "the input changed while it was read: its {len} bytes from byte offset {offset} (a \
             plane) are not what they were"
        )));
    }
    Ok(bytes)
}

/// A hash of a plane's bytes, to tell whether what is read again is what was read.
fn bytes_hash(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(bytes);
    hasher.finish()
}

/// The fields of a plane but its lines; `None` when they do not decode.
fn plane_head(bytes: &[u8]) -> Option<PlaneHead> {
    <PlaneHead as prost::Message>::decode(bytes).ok()
}

/// The fields of an `XPlane` but its lines, decoded as prost skips the lines.
#[derive(Clone, PartialEq, prost::Message)]
struct PlaneHead {
    #[prost(int64, tag = "1")]
    id: i64,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(map = "int64, message", tag = "4")]
    event_metadata: std::collections::HashMap<i64, XEventMetadata>,
    #[prost(map = "int64, message", tag = "5")]
    stat_metadata: std::collections::HashMap<i64, XStatMetadata>,
    #[prost(message, repeated, tag = "6")]
    stats: Vec<XStat>,
}

/// One event of an [`IndexedPlane`]: viewed in the plane's bytes, or added.
#[derive(Clone, Copy)]
pub(crate) enum Event<'a> {
    View(XEventView<'a>),
    Owned(&'a XEvent),
    Plain(&'a PlainEvent),
}

/// An added event without stats, its data an offset: 24 bytes where an owned event takes 56.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PlainEvent {
    metadata_id: i64,
    offset_ps: i64,
    duration_ps: i64,
}

impl PlainEvent {
    /// The event as a plain one, when it is one (no stats, an offset).
    fn of(event: &XEvent) -> Option<PlainEvent> {
        match (&event.data, event.stats.is_empty()) {
            (Some(profkit_xplane::x_event::Data::OffsetPs(offset_ps)), true) => Some(PlainEvent {
                metadata_id: event.metadata_id,
                offset_ps: *offset_ps,
                duration_ps: event.duration_ps,
            }),
            _ => None,
        }
    }
}

/// One stat of an [`Event`]: its metadata id and value as stored (a `ref_value` is a stat
/// metadata id).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Stat<'a> {
    pub metadata_id: i64,
    pub value: Option<StatValueView<'a>>,
}

impl<'a> Stat<'a> {
    /// The stat of an owned `XStat`.
    pub(crate) fn of(stat: &'a XStat) -> Self {
        Stat {
            metadata_id: stat.metadata_id,
            value: stat.value.as_ref().map(|v| match v {
                x_stat::Value::DoubleValue(v) => StatValueView::Double(*v),
                x_stat::Value::Uint64Value(v) => StatValueView::Uint64(*v),
                x_stat::Value::Int64Value(v) => StatValueView::Int64(*v),
                x_stat::Value::StrValue(v) => StatValueView::Str(v),
                x_stat::Value::BytesValue(v) => StatValueView::Bytes(v),
                x_stat::Value::RefValue(v) => StatValueView::Ref(*v),
            }),
        }
    }

    /// The value as `XStatVisitor` gives it (`StatVisitor::value`): a `ref_value` resolved to
    /// the name of the stat metadata of `plane` it refers to (empty if none).
    #[inline]
    pub(crate) fn resolved(&self, plane: &'a XPlane) -> Option<StatValueRef<'a>> {
        Some(match self.value? {
            StatValueView::Double(v) => StatValueRef::Double(v),
            StatValueView::Uint64(v) => StatValueRef::Uint64(v),
            StatValueView::Int64(v) => StatValueRef::Int64(v),
            StatValueView::Str(v) => StatValueRef::Str(v),
            StatValueView::Bytes(v) => StatValueRef::Bytes(v),
            StatValueView::Ref(id) => StatValueRef::Ref(
                i64::try_from(id)
                    .ok()
                    .and_then(|id| plane.stat_metadata.get(&id))
                    .map_or("", |md| md.name.as_str()),
            ),
        })
    }

    /// The `uint64_value`, or the `int64_value` as unsigned; 0 for any other kind.
    pub(crate) fn int_or_uint(&self) -> u64 {
        match self.value {
            Some(StatValueView::Uint64(v)) => v,
            Some(StatValueView::Int64(v)) => v as u64,
            _ => 0,
        }
    }

    /// TSL's `StrOrRefValue`, `names` the plane's stat metadata names by id: the text, the
    /// referenced stat metadata's name, or empty.
    pub(crate) fn str_or_ref<S: std::hash::BuildHasher>(
        &self,
        names: &'a std::collections::HashMap<i64, String, S>,
    ) -> &'a str {
        match self.value {
            Some(StatValueView::Str(s)) => s,
            Some(StatValueView::Ref(r)) => i64::try_from(r)
                .ok()
                .and_then(|r| names.get(&r))
                .map_or("", String::as_str),
            _ => "",
        }
    }
}

/// The stats of an [`Event`], in order.
#[derive(Clone)]
pub(crate) enum Stats<'a> {
    View(profkit_xplane::xview::Stats<'a>),
    Owned(std::slice::Iter<'a, XStat>),
}

impl<'a> Iterator for Stats<'a> {
    type Item = Stat<'a>;

    #[inline]
    fn next(&mut self) -> Option<Stat<'a>> {
        match self {
            // The index's walk parsed every stat once: a fault cannot show up here (and would end
            // the stats, not panic).
            Stats::View(stats) => stats.next()?.ok().map(|s| Stat {
                metadata_id: s.metadata_id(),
                value: s.value(),
            }),
            Stats::Owned(stats) => stats.next().map(Stat::of),
        }
    }
}

impl<'a> Event<'a> {
    /// `metadata_id`.
    #[inline]
    pub(crate) fn metadata_id(&self) -> i64 {
        match self {
            Event::View(e) => e.metadata_id(),
            Event::Owned(e) => e.metadata_id,
            Event::Plain(e) => e.metadata_id,
        }
    }

    /// `offset_ps`, 0 for an aggregated event (as `XEvent::offset_ps().unwrap_or(0)`).
    #[inline]
    pub(crate) fn offset_ps(&self) -> i64 {
        match self {
            Event::View(e) => e.offset_ps(),
            Event::Owned(e) => e.offset_ps().unwrap_or(0),
            Event::Plain(e) => e.offset_ps,
        }
    }

    /// `duration_ps`.
    #[inline]
    pub(crate) fn duration_ps(&self) -> i64 {
        match self {
            Event::View(e) => e.duration_ps(),
            Event::Owned(e) => e.duration_ps,
            Event::Plain(e) => e.duration_ps,
        }
    }

    /// The event's stats, in order.
    #[inline]
    pub(crate) fn stats(&self) -> Stats<'a> {
        match self {
            Event::View(e) => Stats::View(e.stats()),
            Event::Owned(e) => Stats::Owned(e.stats.iter()),
            Event::Plain(_) => Stats::Owned([].iter()),
        }
    }

    /// Whether the event has any stat.
    #[inline]
    pub(crate) fn has_stats(&self) -> bool {
        match self {
            Event::View(e) => e.has_stats(),
            Event::Owned(e) => !e.stats.is_empty(),
            Event::Plain(_) => false,
        }
    }

    /// The owned event.
    pub(crate) fn to_owned_event(self) -> XEvent {
        match self {
            // Checked when the index was made.
            Event::View(e) => e.to_owned_event().unwrap_or_default(),
            Event::Owned(e) => e.clone(),
            Event::Plain(e) => XEvent {
                metadata_id: e.metadata_id,
                data: Some(profkit_xplane::x_event::Data::OffsetPs(e.offset_ps)),
                duration_ps: e.duration_ps,
                stats: Vec::new(),
            },
        }
    }

    /// Start and end in picoseconds on a line starting at `line_timestamp_ns`, as TSL's
    /// unsigned `Timespan` holds them (see `preprocess::stats::timespan`).
    #[inline]
    pub(crate) fn timespan(&self, line_timestamp_ns: i64) -> (u64, u64) {
        let begin = line_timestamp_ns
            .wrapping_mul(1000)
            .wrapping_add(self.offset_ps()) as u64;
        (begin, begin.wrapping_add(self.duration_ps() as u64))
    }
}

impl IndexedPlane {
    /// The index of a plane read from a stream; its faults are located in that input (and are
    /// the errors decoding it gives). The bytes back for a plane of 4 GiB or more (which the
    /// caller decodes instead).
    pub(crate) fn from_plane_bytes(
        plane: PlaneBytes,
    ) -> Result<Result<IndexedPlane, PlaneBytes>, profkit_xplane::Error> {
        let lines = match plane.view().and_then(|view| index_lines(&view)) {
            Ok(Some(lines)) => lines,
            Ok(None) => return Ok(Err(plane)),
            Err(_) => return plane.decode().map(|p| Ok(IndexedPlane::of_owned(&p))),
        };
        match plane_head(plane.bytes()) {
            Some(head) => Ok(Ok(Self::assemble(plane.into_bytes().into(), head, lines))),
            None => plane.decode().map(|p| Ok(IndexedPlane::of_owned(&p))),
        }
    }

    /// Notes that the plane's bytes start at byte `offset` of an input that can be read again
    /// (see [`IndexedPlane::release`]).
    pub(crate) fn set_origin(&mut self, offset: u64) {
        self.origin = Some(offset);
    }

    /// Forgets the origin: the bytes stay whatever is asked after.
    pub(crate) fn clear_origin(&mut self) {
        self.origin = None;
    }

    /// Lets go of the plane's bytes while no pass reads them (grouping reads only the forest)
    /// when they can be read again from their input ([`IndexedPlane::set_origin`]); else keeps
    /// them. Nothing may read the plane's events until [`IndexedPlane::restore`].
    pub(crate) fn release(&mut self) {
        let Some(offset) = self.origin else {
            return;
        };
        if !self.parts.is_empty() {
            for line in 0..self.parts.len() {
                self.release_line(line);
            }
            return;
        }
        if self.released.is_some() {
            return;
        }
        self.released = Some(Released {
            offset,
            len: self.bytes.len(),
            hash: bytes_hash(&self.bytes),
        });
        self.bytes = bytes::Bytes::new();
    }

    /// Reads the bytes [`IndexedPlane::release`] let go of again from `input` (the input they
    /// were read from), checking that they are what they were; nothing when none were let go of.
    pub(crate) fn restore<R: std::io::Read + std::io::Seek>(
        &mut self,
        input: &mut R,
    ) -> std::io::Result<()> {
        if let Some(origin) = self.origin {
            for part in &mut self.parts {
                if part.released {
                    let offset = origin.saturating_add(u64::from(part.base));
                    part.bytes = read_checked(input, offset, part.len, part.hash)?.into();
                    part.released = false;
                }
            }
        }
        let Some(released) = self.released else {
            return Ok(());
        };
        self.bytes = read_checked(input, released.offset, released.len, released.hash)?.into();
        self.released = None;
        Ok(())
    }

    /// Splits the plane's bytes by line, each line's events' bytes read again on their own from
    /// `input` (the input they were read from, at [`IndexedPlane::set_origin`]'s offset) and
    /// checked to be what they were; the plane's bytes are let go of first, so that memory does
    /// not hold both. Then [`IndexedPlane::release_line`] lets go of a line's bytes once a pass is
    /// done with it, and [`IndexedPlane::restore`] reads the lines let go of again. Nothing without
    /// an origin, or once split or released.
    pub(crate) fn split_lines<R: std::io::Read + std::io::Seek>(
        &mut self,
        input: &mut R,
    ) -> std::io::Result<()> {
        let Some(origin) = self.origin else {
            return Ok(());
        };
        if !self.parts.is_empty() || self.released.is_some() {
            return Ok(());
        }
        // Each line's bounds over its events' bodies in the plane's bytes, and their hash.
        let mut parts = Vec::with_capacity(self.lines.len());
        for slots in &self.lines {
            let mut bounds: Option<(u32, u32)> = None;
            for slot in slots.iter().filter(|s| s.len != ADDED && s.len != PLAIN) {
                let end = slot.start.saturating_add(slot.len & !PREFIX);
                bounds = Some(match bounds {
                    Some((lo, hi)) => (lo.min(slot.start), hi.max(end)),
                    None => (slot.start, end),
                });
            }
            let (base, end) = bounds.unwrap_or((0, 0));
            let bytes = self.bytes.get(base as usize..end as usize).unwrap_or(&[]);
            parts.push(Part {
                base,
                bytes: bytes::Bytes::new(),
                len: bytes.len(),
                hash: bytes_hash(bytes),
                released: false,
            });
        }
        self.bytes = bytes::Bytes::new();
        for part in &mut parts {
            let offset = origin.saturating_add(u64::from(part.base));
            part.bytes = read_checked(input, offset, part.len, part.hash)?.into();
        }
        self.parts = parts;
        Ok(())
    }

    /// Lets go of line number `line`'s bytes, once split ([`IndexedPlane::split_lines`]); nothing
    /// may read its events until [`IndexedPlane::restore`].
    pub(crate) fn release_line(&mut self, line: usize) {
        if let Some(part) = self.parts.get_mut(line) {
            part.bytes = bytes::Bytes::new();
            part.released = true;
        }
    }

    /// Takes line number `line`'s bytes out, once split ([`IndexedPlane::split_lines`]), with
    /// where they start in the plane's bytes: the line is then let go of as
    /// [`IndexedPlane::release_line`] lets go of it, and its events are read from the bytes
    /// taken ([`IndexedPlane::line_in`]) until they are dropped. `None` when not split, or let go
    /// of already.
    pub(crate) fn take_line_bytes(&mut self, line: usize) -> Option<(bytes::Bytes, u32)> {
        let part = self.parts.get_mut(line).filter(|p| !p.released)?;
        part.released = true;
        Some((std::mem::take(&mut part.bytes), part.base))
    }

    /// Line number `line`'s events read from `bytes`, its bytes taken out
    /// ([`IndexedPlane::take_line_bytes`]) starting at `base` in the plane's bytes.
    pub(crate) fn line_in<'b>(
        &'b self,
        line: usize,
        bytes: &'b [u8],
        base: u32,
    ) -> Option<(&'b XLine, LineEvents<'b>)> {
        let fields = self.shadow.lines.get(line)?;
        let slots = self.lines.get(line)?;
        Some((
            fields,
            LineEvents {
                plane: self,
                slots: slots.iter(),
                timestamp_ns: fields.timestamp_ns,
                bytes: (bytes, base),
            },
        ))
    }

    /// Whether the plane's bytes are split by line.
    pub(crate) fn is_split(&self) -> bool {
        !self.parts.is_empty()
    }

    /// The bytes line number `line`'s events lie in, and where they start in the plane's bytes.
    fn line_bytes(&self, line: usize) -> (&[u8], u32) {
        match self.parts.get(line) {
            Some(part) => (&part.bytes, part.base),
            None => (&self.bytes, 0),
        }
    }

    /// The index of an encoded plane on its own (faults as decoding it reports them); `None` for
    /// a plane of 4 GiB or more.
    pub(crate) fn from_bytes(
        bytes: bytes::Bytes,
    ) -> Result<Option<IndexedPlane>, profkit_xplane::Error> {
        match Self::try_index(bytes.clone()) {
            Ok(index) => Ok(index),
            Err(()) => {
                profkit_xplane::decode_plane(bytes).map(|p| Some(IndexedPlane::of_owned(&p)))
            }
        }
    }

    /// The index of an encoded plane; `Err` on any fault.
    fn try_index(bytes: bytes::Bytes) -> Result<Option<IndexedPlane>, ()> {
        let lines = match XPlaneView::new(&bytes).and_then(|view| index_lines(&view)) {
            Ok(Some(lines)) => lines,
            Ok(None) => return Ok(None),
            Err(_) => return Err(()),
        };
        let head = plane_head(&bytes).ok_or(())?;
        Ok(Some(Self::assemble(bytes, head, lines)))
    }

    /// The index of a plane in memory (encoded first). A plane too big to index (4 GiB encoded)
    /// is kept with its events added, the same to every pass, only bigger.
    pub(crate) fn of_owned(plane: &XPlane) -> IndexedPlane {
        let bytes = profkit_xplane::encode_plane(plane);
        if let Ok(Some(index)) = Self::try_index(bytes.into()) {
            return index;
        }
        let mut index = IndexedPlane {
            shadow: shadow_of(plane),
            ..IndexedPlane::default()
        };
        for line in &plane.lines {
            let slots = line
                .events
                .iter()
                .map(|e| index.add(e.clone()))
                .collect::<Vec<_>>();
            index.lines.push(slots);
        }
        index
    }

    fn assemble(bytes: bytes::Bytes, head: PlaneHead, lines: Vec<LineIndex>) -> IndexedPlane {
        let (shadow_lines, slots): (Vec<XLine>, Vec<Vec<Slot>>) = lines.into_iter().unzip();
        IndexedPlane {
            bytes,
            shadow: XPlane {
                id: head.id,
                name: head.name,
                lines: shadow_lines,
                event_metadata: head.event_metadata.into_iter().collect(),
                stat_metadata: head.stat_metadata.into_iter().collect(),
                stats: head.stats,
            },
            lines: slots,
            added: Vec::new(),
            plain: Vec::new(),
            origin: None,
            released: None,
            parts: Vec::new(),
        }
    }

    /// The plane without its lines' events (its lines' own fields, metadata and stats).
    pub(crate) fn shadow(&self) -> &XPlane {
        &self.shadow
    }

    /// The shadow, to intern metadata into (see `preprocess::stats::intern_event`).
    pub(crate) fn shadow_mut(&mut self) -> &mut XPlane {
        &mut self.shadow
    }

    /// How many lines the plane has.
    pub(crate) fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// How many events its lines hold.
    pub(crate) fn event_count(&self) -> usize {
        self.lines.iter().map(Vec::len).sum()
    }

    /// Line number `line`'s own fields (no events) and its events, in order.
    pub(crate) fn line(&self, line: usize) -> Option<(&XLine, LineEvents<'_>)> {
        let (bytes, base) = self.line_bytes(line);
        self.line_in(line, bytes, base)
    }

    /// Every line with its events, in order.
    pub(crate) fn lines(&self) -> impl ExactSizeIterator<Item = (&XLine, LineEvents<'_>)> + '_ {
        self.shadow
            .lines
            .iter()
            .zip(&self.lines)
            .enumerate()
            .map(|(line, (fields, slots))| {
                (
                    fields,
                    LineEvents {
                        plane: self,
                        slots: slots.iter(),
                        timestamp_ns: fields.timestamp_ns,
                        bytes: self.line_bytes(line),
                    },
                )
            })
    }

    fn event<'b>(
        &'b self,
        slot: Slot,
        (bytes, base): (&'b [u8], u32),
        timestamp_ns: i64,
    ) -> Option<Event<'b>> {
        if slot.len == ADDED {
            return self.added.get(slot.start as usize).map(Event::Owned);
        }
        if slot.len == PLAIN {
            return self.plain.get(slot.start as usize).map(Event::Plain);
        }
        let start = slot.start.checked_sub(base)? as usize;
        let body = bytes.get(start..start + (slot.len & !PREFIX) as usize)?;
        if slot.len & PREFIX != 0 {
            XEventView::from_body_prefix(body, timestamp_ns).ok()
        } else {
            XEventView::from_body(body, timestamp_ns).ok()
        }
        .map(Event::View)
    }

    /// Adds an event (plain when it can be), and where it lies.
    fn add(&mut self, event: XEvent) -> Slot {
        if let Some(plain) = PlainEvent::of(&event) {
            let start = u32::try_from(self.plain.len()).unwrap_or(u32::MAX);
            self.plain.push(plain);
            return Slot { start, len: PLAIN };
        }
        let start = u32::try_from(self.added.len()).unwrap_or(u32::MAX);
        self.added.push(event);
        Slot { start, len: ADDED }
    }

    /// Where `preprocess::sort::insert_sorted` would put the line's events and `events` (the
    /// same order, ties included): indices into the line's events followed by `events`.
    pub(crate) fn insert_order(
        &self,
        line: usize,
        events: &[XEvent],
    ) -> crate::preprocess::InsertPlan {
        let added: Vec<(i64, i64)> = events
            .iter()
            .map(|e| (e.offset_ps().unwrap_or(0), e.duration_ps))
            .collect();
        // The line's keys read from its events, not gathered (16 bytes an event of the line).
        let keys = || {
            self.line(line)
                .into_iter()
                .flat_map(|(_, e)| e.map(|e| (e.offset_ps(), e.duration_ps())))
        };
        crate::preprocess::insert_plan_of(keys, &added)
    }

    /// Adds `events` to line number `line` in `order` (see [`IndexedPlane::insert_order`]).
    pub(crate) fn insert(
        &mut self,
        line: usize,
        events: Vec<XEvent>,
        plan: crate::preprocess::InsertPlan,
    ) {
        let added: Vec<Slot> = events.into_iter().map(|e| self.add(e)).collect();
        let Some(slots) = self.lines.get_mut(line) else {
            return;
        };
        match plan {
            // The line's slots moved up in place, from its end, the added ones in their places:
            // no second list of the line.
            crate::preprocess::InsertPlan::Places(places) => {
                let old = slots.len();
                slots.resize(old + added.len(), Slot { start: 0, len: 0 });
                let mut from = old;
                let mut places = places.iter().rev().peekable();
                for to in (0..slots.len()).rev() {
                    let slot = match places.peek() {
                        Some(&&(place, j)) if place == to => {
                            places.next();
                            added.get(j).copied()
                        }
                        _ => {
                            from = from.saturating_sub(1);
                            slots.get(from).copied()
                        }
                    };
                    if let (Some(slot), Some(target)) = (slot, slots.get_mut(to)) {
                        *target = slot;
                    }
                }
            }
            crate::preprocess::InsertPlan::Order(order) => {
                let old = std::mem::take(slots);
                let mut new = Vec::with_capacity(order.len());
                new.extend(order.into_iter().filter_map(|i| match old.get(i) {
                    Some(&slot) => Some(slot),
                    None => added.get(i - old.len()).copied(),
                }));
                *slots = new;
            }
        }
    }

    /// The owned plane: the shadow with every line's events decoded, in order.
    pub(crate) fn to_owned_plane(&self) -> XPlane {
        let mut plane = self.shadow.clone();
        for (line, fields) in plane.lines.iter_mut().enumerate() {
            if let Some((_, events)) = self.line(line) {
                fields.events = events.map(|e| e.to_owned_event()).collect();
            }
        }
        plane
    }
}

/// A plane the forest reads: indexed, or decoded (read through the same [`Event`]s, without an
/// encoding of it).
#[derive(Clone, Copy)]
pub(crate) enum PlaneRef<'a> {
    Indexed(&'a IndexedPlane),
    Owned(&'a XPlane),
}

impl<'a> PlaneRef<'a> {
    /// The plane's own fields, metadata and lines' fields (a decoded plane's lines also hold
    /// their events, which readers of this take from [`PlaneRef::lines`]).
    pub(crate) fn shadow(&self) -> &'a XPlane {
        match self {
            PlaneRef::Indexed(p) => p.shadow(),
            PlaneRef::Owned(p) => p,
        }
    }

    /// How many events its lines hold.
    pub(crate) fn event_count(&self) -> usize {
        match self {
            PlaneRef::Indexed(p) => p.event_count(),
            PlaneRef::Owned(p) => p.lines.iter().map(|l| l.events.len()).sum(),
        }
    }

    /// Line number `line`'s own fields and its events.
    pub(crate) fn line(&self, line: usize) -> Option<(&'a XLine, PlaneEvents<'a>)> {
        match self {
            PlaneRef::Indexed(p) => p.line(line).map(|(l, e)| (l, PlaneEvents::Indexed(e))),
            PlaneRef::Owned(p) => p
                .lines
                .get(line)
                .map(|l| (l, PlaneEvents::Owned(l.events.iter()))),
        }
    }

    /// How many events line number `line` holds.
    pub(crate) fn line_len(&self, line: usize) -> usize {
        match self {
            PlaneRef::Indexed(p) => p.lines.get(line).map_or(0, Vec::len),
            PlaneRef::Owned(p) => p.lines.get(line).map_or(0, |l| l.events.len()),
        }
    }

    /// Events `from..to` of line number `line` (none past its end).
    pub(crate) fn line_range(&self, line: usize, from: usize, to: usize) -> PlaneEvents<'a> {
        match self {
            PlaneRef::Indexed(p) => {
                let slots = p
                    .lines
                    .get(line)
                    .and_then(|s| s.get(from..to))
                    .unwrap_or_default();
                let timestamp_ns = p.shadow.lines.get(line).map_or(0, |l| l.timestamp_ns);
                PlaneEvents::Indexed(LineEvents {
                    plane: p,
                    slots: slots.iter(),
                    timestamp_ns,
                    bytes: p.line_bytes(line),
                })
            }
            PlaneRef::Owned(p) => PlaneEvents::Owned(
                p.lines
                    .get(line)
                    .and_then(|l| l.events.get(from..to))
                    .unwrap_or_default()
                    .iter(),
            ),
        }
    }

    /// Every line with its events, in order.
    pub(crate) fn lines(&self) -> impl Iterator<Item = (&'a XLine, PlaneEvents<'a>)> + 'a {
        let plane = *self;
        (0..self.shadow().lines.len()).filter_map(move |i| plane.line(i))
    }
}

/// The events of one line of a [`PlaneRef`], in order.
#[derive(Clone)]
pub(crate) enum PlaneEvents<'a> {
    Indexed(LineEvents<'a>),
    Owned(std::slice::Iter<'a, XEvent>),
}

impl<'a> Iterator for PlaneEvents<'a> {
    type Item = Event<'a>;

    #[inline]
    fn next(&mut self) -> Option<Event<'a>> {
        match self {
            PlaneEvents::Indexed(e) => e.next(),
            PlaneEvents::Owned(e) => e.next().map(Event::Owned),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            PlaneEvents::Indexed(e) => e.size_hint(),
            PlaneEvents::Owned(e) => e.size_hint(),
        }
    }
}

impl ExactSizeIterator for PlaneEvents<'_> {}

/// The events of one line of an [`IndexedPlane`], in order.
#[derive(Clone)]
pub(crate) struct LineEvents<'a> {
    plane: &'a IndexedPlane,
    slots: std::slice::Iter<'a, Slot>,
    timestamp_ns: i64,
    /// The bytes the line's events lie in, and where they start in the plane's.
    bytes: (&'a [u8], u32),
}

impl<'a> Iterator for LineEvents<'a> {
    type Item = Event<'a>;

    #[inline]
    fn next(&mut self) -> Option<Event<'a>> {
        let slot = *self.slots.next()?;
        self.plane.event(slot, self.bytes, self.timestamp_ns)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slots.size_hint()
    }
}

impl ExactSizeIterator for LineEvents<'_> {}

/// A line's own fields (no events) and where its events lie.
type LineIndex = (XLine, Vec<Slot>);

/// The plane's lines without their events, each with where its events lie (every event and stat
/// parsed once, so that later views find no fault); `None` when the plane is 4 GiB or more.
fn index_lines(view: &XPlaneView<'_>) -> Result<Option<Vec<LineIndex>>, profkit_xplane::Error> {
    let bytes = view.bytes();
    let base = bytes.as_ptr() as usize;
    let Ok(size) = u32::try_from(bytes.len()) else {
        return Ok(None);
    };
    if size == u32::MAX {
        return Ok(None);
    }
    // Where each event lies, its body's bounds only.
    let mut lines = Vec::with_capacity(view.line_count());
    for line in view.lines() {
        let line = line?;
        let mut slots = Vec::with_capacity(line.event_count());
        let mut events = line.events();
        while let Some(body) = events.next_body() {
            let body = body?;
            // Below `PREFIX - 2`, so that a prefixed length is neither `ADDED` nor `PLAIN`.
            if body.len() >= (PREFIX - 2) as usize {
                return Ok(None);
            }
            // Both fit in 32 bits: the body lies within the plane's bytes.
            let start = (body.as_ptr() as usize).wrapping_sub(base) as u32;
            slots.push(Slot {
                start,
                len: body.len() as u32,
            });
        }
        lines.push((
            XLine {
                id: line.id(),
                display_id: line.raw_display_id(),
                name: line.name().to_owned(),
                display_name: line.raw_display_name().to_owned(),
                timestamp_ns: line.timestamp_ns(),
                duration_ps: line.duration_ps(),
                events: Vec::new(),
            },
            slots,
        ));
    }
    // Every event and stat parsed once, so that later views find no fault, and whether the
    // event reads the same from its fields up to its first stat: on the pool's threads for a big
    // plane. A fault is then found again by a walk in order, which locates it.
    let parses = |slot: &mut Slot| {
        let start = slot.start as usize;
        let Some(body) = bytes.get(start..start + slot.len as usize) else {
            return false;
        };
        let Ok(event) = XEventView::from_body(body, 0) else {
            return false;
        };
        if !event.stats().all(|s| s.is_ok()) {
            return false;
        }
        if XEventView::from_body_prefix(body, 0).is_ok_and(|prefix| {
            prefix.metadata_id() == event.metadata_id()
                && prefix.data() == event.data()
                && prefix.duration_ps() == event.duration_ps()
        }) {
            slot.len |= PREFIX;
        }
        true
    };
    let events: usize = lines.iter().map(|(_, slots)| slots.len()).sum();
    let sound = if events >= PARALLEL_EVENTS && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        lines
            .par_iter_mut()
            .flat_map(|(_, slots)| slots.par_chunks_mut(CHUNK))
            .all(|chunk| chunk.iter_mut().all(parses))
    } else {
        lines
            .iter_mut()
            .all(|(_, slots)| slots.iter_mut().all(parses))
    };
    if !sound {
        for line in view.lines() {
            for event in line?.events() {
                for stat in event?.stats() {
                    stat?;
                }
            }
        }
        return Err(profkit_xplane::Error::Malformed {
            offset: 0,
            path: "XPlane".to_owned(),
            reason: "an event that does not parse on its own".to_owned(),
        });
    }
    Ok(Some(lines))
}

/// The events of a host threads' plane for which its lines are worked on the pool's threads (their
/// op metrics, their grouping's intake, their steps), each line on its own: from 50,000, and
/// below 4 million (about a 100 MB profile), from where they go one after the other again: two
/// big lines at a time held too much beside the plane's bytes and index (on a 1 GB profile whose
/// two busiest threads hold 87% of the events, their op begins and ends were 440 MB: 1,991 MiB
/// at the peak instead of 1,824, for 3.4 s of the command's 21 s).
pub(crate) const LINES_ON_POOL: std::ops::Range<usize> = 50_000..4_000_000;

/// The events from which a plane's events are parsed on the pool's threads, and how many each
/// task parses.
const PARALLEL_EVENTS: usize = 50_000;
const CHUNK: usize = 8192;

/// A plane's shadow: all but its lines' events.
fn shadow_of(plane: &XPlane) -> XPlane {
    XPlane {
        id: plane.id,
        name: plane.name.clone(),
        lines: plane
            .lines
            .iter()
            .map(|l| XLine {
                id: l.id,
                display_id: l.display_id,
                name: l.name.clone(),
                display_name: l.display_name.clone(),
                timestamp_ns: l.timestamp_ns,
                duration_ps: l.duration_ps,
                events: Vec::new(),
            })
            .collect(),
        event_metadata: plane.event_metadata.clone(),
        stat_metadata: plane.stat_metadata.clone(),
        stats: plane.stats.clone(),
    }
}

/// A plane's metadata map by id, for a lookup per event: a table when the ids are small and
/// dense (writers number them from 1), else the map itself.
pub(crate) enum ById<'a, T> {
    Dense(Vec<Option<&'a T>>),
    Map(&'a BTreeMap<i64, T>),
}

impl<'a, T> ById<'a, T> {
    pub(crate) fn new(map: &'a BTreeMap<i64, T>) -> Self {
        let last = map.last_key_value().map(|(&id, _)| id);
        // A table at most about twice the map's size.
        let limit = map.len().saturating_mul(2).saturating_add(1024);
        let dense = map.first_key_value().is_none_or(|(&first, _)| first >= 0)
            && last.is_none_or(|last| usize::try_from(last).is_ok_and(|last| last < limit));
        if !dense {
            return ById::Map(map);
        }
        let len = last
            .and_then(|last| usize::try_from(last).ok())
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
    pub(crate) fn get(&self, id: i64) -> Option<&'a T> {
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

/// Values by metadata id: a table indexed by id when the ids are small (as every writer numbers
/// them), else a hash map.
#[derive(Clone, Debug)]
pub(crate) enum IdTable<T> {
    Dense(Vec<Option<T>>),
    Map(rustc_hash::FxHashMap<i64, T>),
}

impl<T: Copy> IdTable<T> {
    /// The table of these (id, value) pairs, the last value of an id winning.
    pub(crate) fn new(entries: impl Iterator<Item = (i64, T)> + Clone) -> Self {
        let (count, max, negative) = entries
            .clone()
            .fold((0usize, 0i64, false), |(n, max, neg), (id, _)| {
                (n + 1, max.max(id), neg || id < 0)
            });
        let limit = count.saturating_mul(2).saturating_add(1024);
        match usize::try_from(max) {
            Ok(max) if !negative && max < limit => {
                let mut table = vec![None; max + 1];
                for (id, value) in entries {
                    if let Some(slot) = usize::try_from(id).ok().and_then(|i| table.get_mut(i)) {
                        *slot = Some(value);
                    }
                }
                IdTable::Dense(table)
            }
            _ => IdTable::Map(entries.collect()),
        }
    }

    /// The value of `id`.
    #[inline]
    pub(crate) fn get(&self, id: i64) -> Option<T> {
        match self {
            IdTable::Dense(table) => usize::try_from(id)
                .ok()
                .and_then(|i| table.get(i))
                .copied()
                .flatten(),
            IdTable::Map(map) => map.get(&id).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every plane of every XSpace case in `conformance/`.
    fn case_planes() -> Vec<(String, XPlane)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
        let mut out = Vec::new();
        for dir in ["xplane", "xplane-device"] {
            let Ok(cases) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for case in cases.flatten() {
                let Ok(bytes) = std::fs::read(case.path().join("input.xplane.pb")) else {
                    continue;
                };
                let Ok(space) = profkit_xplane::decode(bytes) else {
                    continue;
                };
                let name = case.file_name().to_string_lossy().into_owned();
                out.extend(space.planes.into_iter().map(|p| (name.clone(), p)));
            }
        }
        out
    }

    /// A plane indexed from its bytes is the plane: decoded back, and event by event.
    #[test]
    fn an_indexed_plane_is_the_decoded_plane() {
        let planes = case_planes();
        assert!(planes.len() > 100, "the cases' planes were not found");
        for (case, plane) in planes {
            let bytes = profkit_xplane::encode_plane(&plane);
            let indexed = IndexedPlane::from_bytes(bytes.into()).unwrap().unwrap();
            // Compared encoded: NaN stats are not equal to themselves.
            let encode = profkit_xplane::encode_plane;
            assert!(
                encode(&indexed.to_owned_plane()) == encode(&plane),
                "{case}: {}",
                plane.name
            );
            assert_eq!(
                indexed.event_count(),
                plane.lines.iter().map(|l| l.events.len()).sum::<usize>()
            );
            for ((fields, events), line) in indexed.lines().zip(&plane.lines) {
                assert_eq!(fields.id, line.id);
                for (event, owned) in events.zip(&line.events) {
                    assert_eq!(event.metadata_id(), owned.metadata_id);
                    assert_eq!(event.offset_ps(), owned.offset_ps().unwrap_or(0));
                    assert_eq!(event.duration_ps(), owned.duration_ps);
                    let stats: Vec<Stat<'_>> = event.stats().collect();
                    let expected: Vec<Stat<'_>> = owned.stats.iter().map(Stat::of).collect();
                    assert_eq!(format!("{stats:?}"), format!("{expected:?}"));
                }
            }
        }
    }

    /// A plane split by line reads as it did, a line let go of and read again too; a line whose
    /// bytes changed meanwhile is an error.
    #[test]
    fn a_plane_split_by_line_is_the_same_plane() {
        let encode = profkit_xplane::encode_plane;
        for (case, plane) in case_planes() {
            let bytes = encode(&plane);
            // The plane's bytes at byte 5 of an input.
            let mut input = vec![7u8; 5];
            input.extend_from_slice(&bytes);
            let mut file = std::io::Cursor::new(input.clone());
            let mut indexed = IndexedPlane::from_bytes(bytes.into()).unwrap().unwrap();
            indexed.set_origin(5);
            indexed.split_lines(&mut file).unwrap();
            assert!(indexed.is_split() || indexed.line_count() == 0, "{case}");
            assert!(
                encode(&indexed.to_owned_plane()) == encode(&plane),
                "{case}"
            );
            for line in 0..indexed.line_count() {
                indexed.release_line(line);
            }
            indexed.restore(&mut file).unwrap();
            assert!(
                encode(&indexed.to_owned_plane()) == encode(&plane),
                "{case}"
            );
            // A byte of a line's events changed before the line is read again.
            let Some(line) = (0..indexed.line_count()).find(|&l| indexed.parts[l].len > 0) else {
                continue;
            };
            let at = 5 + indexed.parts[line].base as usize;
            let mut changed = input;
            changed[at] ^= 1;
            indexed.release_line(line);
            let error = indexed
                .restore(&mut std::io::Cursor::new(changed))
                .unwrap_err()
                .to_string();
            assert!(error.contains("changed"), "{case}: {error}");
        }
    }

    /// Added events take their place in their line's order as an owned line's would.
    #[test]
    fn added_events_take_the_owned_lines_places() {
        for (case, plane) in case_planes() {
            let Some(line) = plane.lines.iter().position(|l| l.events.len() > 2) else {
                continue;
            };
            let mut added = plane.lines[line].events.clone();
            added.truncate(3);
            for (i, e) in added.iter_mut().enumerate() {
                e.metadata_id = -1 - i as i64;
                e.duration_ps = e.duration_ps.wrapping_add(i as i64);
            }
            let mut indexed = IndexedPlane::of_owned(&plane);
            let order = indexed.insert_order(line, &added);
            indexed.insert(line, added.clone(), order);
            let mut owned = plane.clone();
            crate::preprocess::insert_sorted_for_tests(&mut owned.lines[line], added);
            let encode = profkit_xplane::encode_plane;
            assert!(
                encode(&indexed.to_owned_plane()) == encode(&owned),
                "{case}"
            );
        }
    }

    /// Hostile bytes (every cut of a real plane, and bytes changed across it): the index is an
    /// error exactly where decoding is, and otherwise the decoded plane; never a panic.
    #[test]
    fn hostile_bytes_are_errors_where_decoding_fails() {
        let planes = case_planes();
        let (_, plane) = planes
            .iter()
            .filter(|(case, p)| case.starts_with("real-tf") && p.name == "/host:CPU")
            .min_by_key(|(_, p)| profkit_xplane::encode_plane(p).len())
            .expect("a real TensorFlow host plane");
        let bytes = profkit_xplane::encode_plane(plane);
        let step = (bytes.len() / 400).max(1);
        let mut cases: Vec<Vec<u8>> = (0..bytes.len())
            .step_by(step)
            .map(|cut| bytes[..cut].to_vec())
            .collect();
        for at in (0..bytes.len()).step_by(step) {
            for value in [0x00, 0x7f, 0x80, 0xff] {
                let mut changed = bytes.clone();
                changed[at] = value;
                cases.push(changed);
            }
        }
        for case in cases {
            let decoded = profkit_xplane::decode_plane(case.clone());
            let indexed = IndexedPlane::from_bytes(case.into());
            match (decoded, indexed) {
                (Ok(plane), Ok(Some(indexed))) => assert!(
                    profkit_xplane::encode_plane(&indexed.to_owned_plane())
                        == profkit_xplane::encode_plane(&plane)
                ),
                (Err(_), Err(_)) => {}
                (d, i) => panic!("decoded {:?}, indexed {:?}", d.is_ok(), i.is_ok()),
            }
        }
    }
}

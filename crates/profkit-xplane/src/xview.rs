//! Borrowed, zero-copy views of an encoded XSpace: walk a profile without building it.
//!
//! [`XSpaceView`] borrows the encoded bytes (`&'a [u8]`: a buffer, a file read into memory, or a
//! memory map the application made) and hands out planes, lines, events and stats as lazy
//! iterators that decode each field when it is reached. Nothing is copied: strings are `&'a str`
//! (checked as UTF-8 once, when their message is decoded), bytes are `&'a [u8]`. A plane's
//! metadata maps are indexed the first time they are asked for ([`XPlaneView::metadata`]).
//!
//! The structure is checked on the way, by the same rules as [`crate::decode`] (which follow the
//! schema walk of `profkit-wire`). Every item of an iterator is a `Result`; after an error the
//! iterator ends. An error is the one [`crate::decode`] reports for the same bytes: the first fault
//! of the input in file order, with its byte offset and field path. (When a view finds a fault it
//! walks the whole input, or the streamed plane it came from, to locate the first one; that
//! costs a walk, once, and only on failure.) What a view never reaches it does not check: to accept
//! or refuse exactly what `decode` does, walk everything, as [`XSpaceView::check`] does.
//!
//! The crate stays free of `unsafe`, so it does not map files itself: [`read_file_bytes`] reads one
//! into memory (one copy of the file, no more), and an application that may use `unsafe` can map
//! it with a crate such as `memmap2` and view the mapped slice.
//!
//! ```
//! use profkit_xplane::{PlaneBuilder, XPlane, XSpace, encode};
//! use profkit_xplane::xview::XSpaceView;
//! # let mut space = XSpace::default();
//! # let mut plane = XPlane::default();
//! # PlaneBuilder::new(&mut plane).line(1).add_event("step").set_duration_ps(5).add_stat("n", 3_i64);
//! # space.planes.push(plane);
//! let bytes = encode(&space);
//! let view = XSpaceView::new(&bytes)?;
//! let mut total_ps = 0;
//! for plane in view.planes() {
//!     let plane = plane?;
//!     let metadata = plane.metadata()?;
//!     for line in plane.lines() {
//!         for event in line?.events() {
//!             let event = event?;
//!             total_ps += event.duration_ps();
//!             assert_eq!(metadata.event_name(event.metadata_id()), "step");
//!             for stat in event.stats() {
//!                 assert_eq!(metadata.stat_name(stat?.metadata_id()), "n");
//!             }
//!         }
//!     }
//! }
//! assert_eq!(total_ps, 5);
//! # Ok::<(), profkit_xplane::Error>(())
//! ```

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use profkit_wire::{
    END_GROUP, FIXED32, FIXED64, LEN, MAX_FIELD_NUMBER, START_GROUP, Schema, VARINT, locate,
    read_varint, split_tag,
};

use crate::codec::{ReadOptions, check_size};
use crate::error::{Error, Result};
use crate::proto::{
    XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat,
};
use crate::visitor::{self, StatValueRef};
use crate::wire::{self, MAX_GROUP_DEPTH, Msg};

mod normalise;

pub use normalise::Normalised;

/// The lazy walk found a fault; the error itself is made by locating the first fault of the root.
#[derive(Clone, Copy, Debug)]
struct Bad;

type Walk<T> = std::result::Result<T, Bad>;

/// The message a view's errors are located in: the whole input, or a plane read on its own.
#[derive(Clone, Copy)]
struct Root<'a> {
    msg: Msg,
    body: &'a [u8],
    base: u64,
    open: bool,
    /// For a plane read on its own: its index in `XSpace.planes`, or `None` for a bare `XPlane`.
    plane: Option<usize>,
}

impl Root<'_> {
    /// The located error for a fault somewhere in this root.
    #[cold]
    #[inline(never)]
    fn error(&self) -> Error {
        let path = match (self.msg, self.plane) {
            (Msg::Space, _) => "XSpace".to_owned(),
            (_, Some(index)) => format!("XSpace.planes[{index}]"),
            _ => "XPlane".to_owned(),
        };
        match locate(self.msg, self.body, self.base, self.open, &path) {
            Some(fault) => wire::error(fault),
            None => Error::Malformed {
                offset: self.base,
                path,
                reason: "a view found a fault the schema walk does not (a bug in profkit)".into(),
            },
        }
    }
}

/// A cursor over the fields of one message body.
#[derive(Clone, Copy)]
struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    #[inline]
    fn new(buf: &'a [u8]) -> Self {
        Fields { buf, pos: 0 }
    }

    #[inline]
    fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline(always)]
    fn varint(&mut self) -> Walk<u64> {
        let pos = self.pos;
        match self.buf.get(pos) {
            Some(&b) if b < 0x80 => {
                self.pos = pos + 1;
                return Ok(u64::from(b));
            }
            None => return Err(Bad),
            Some(_) => {}
        }
        // Ten bytes or more left: no bounds to check per byte.
        if let Some(chunk) = pos.checked_add(10).and_then(|end| self.buf.get(pos..end)) {
            let mut value = 0u64;
            for (i, &b) in chunk.iter().enumerate() {
                if i == 9 && b > 1 {
                    return Err(Bad);
                }
                value |= u64::from(b & 0x7f) << (7 * i);
                if b < 0x80 {
                    self.pos = pos + i + 1;
                    return Ok(value);
                }
            }
            return Err(Bad);
        }
        self.varint_slow()
    }

    #[inline(never)]
    fn varint_slow(&mut self) -> Walk<u64> {
        read_varint(self.buf, &mut self.pos).map_err(|_| Bad)
    }

    /// The next tag as (field number, wire type); field numbers 0 and past the largest are refused.
    #[inline(always)]
    fn tag(&mut self) -> Walk<(u64, u8)> {
        checked_tag(self.varint()?)
    }

    #[inline(always)]
    fn bytes(&mut self) -> Walk<&'a [u8]> {
        let len = usize::try_from(self.varint()?).map_err(|_| Bad)?;
        let end = self.pos.checked_add(len).ok_or(Bad)?;
        let body = self.buf.get(self.pos..end).ok_or(Bad)?;
        self.pos = end;
        Ok(body)
    }

    #[inline]
    fn str(&mut self) -> Walk<&'a str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| Bad)
    }

    #[inline]
    fn fixed64(&mut self) -> Walk<u64> {
        let end = self.pos.checked_add(8).ok_or(Bad)?;
        let raw: [u8; 8] = self
            .buf
            .get(self.pos..end)
            .and_then(|s| s.try_into().ok())
            .ok_or(Bad)?;
        self.pos = end;
        Ok(u64::from_le_bytes(raw))
    }

    fn advance(&mut self, n: usize) -> Walk<()> {
        let end = self.pos.checked_add(n).ok_or(Bad)?;
        if end > self.buf.len() {
            return Err(Bad);
        }
        self.pos = end;
        Ok(())
    }

    /// Checks and skips a field of `msg` this reader has no use for: a known one must have its
    /// wire type (and a string valid UTF-8; nested messages are left to their own views), an
    /// unknown one is skipped as the walk skips it.
    #[inline(never)]
    fn other(&mut self, msg: Msg, number: u64, wire_type: u8) -> Walk<()> {
        match msg.field(number) {
            Some(field) => {
                if field.kind.wire_type(wire_type) != wire_type {
                    return Err(Bad);
                }
                match field.kind {
                    profkit_wire::Kind::Str => self.str().map(drop),
                    profkit_wire::Kind::Varints if wire_type == LEN => {
                        let mut inner = Fields::new(self.bytes()?);
                        while !inner.at_end() {
                            inner.varint()?;
                        }
                        Ok(())
                    }
                    _ => self.skip(number, wire_type, 0),
                }
            }
            None => self.skip(number, wire_type, 0),
        }
    }

    /// Skips the value of field `number`, inside `depth` groups.
    fn skip(&mut self, number: u64, wire_type: u8, depth: u32) -> Walk<()> {
        match wire_type {
            VARINT => self.varint().map(drop),
            FIXED64 => self.advance(8),
            FIXED32 => self.advance(4),
            LEN => self.bytes().map(drop),
            START_GROUP if depth < MAX_GROUP_DEPTH => loop {
                if self.at_end() {
                    return Err(Bad);
                }
                let (inner, inner_type) = split_tag(self.varint()?);
                if inner_type == END_GROUP {
                    return if inner == number { Ok(()) } else { Err(Bad) };
                }
                if inner == 0 || inner > MAX_FIELD_NUMBER {
                    return Err(Bad);
                }
                self.skip(inner, inner_type, depth + 1)?;
            },
            _ => Err(Bad),
        }
    }
}

/// A key (a tag's varint) as (field number, wire type); field numbers 0 and past the largest are
/// refused. The loops below match a key against the one-byte tags of the fields they read: a key
/// written in more bytes than it needs (`0x88 0x00` for `0x08`) is the same key, and is read as
/// its field, as protobuf parsers read it.
#[inline(always)]
fn checked_tag(key: u64) -> Walk<(u64, u8)> {
    let (number, wire_type) = split_tag(key);
    if number == 0 || number > MAX_FIELD_NUMBER {
        return Err(Bad);
    }
    Ok((number, wire_type))
}

/// The one-byte tag a key is, or 0 (no field's) for a key past one byte.
#[inline(always)]
fn key_byte(key: u64) -> u8 {
    u8::try_from(key).ok().filter(|&k| k < 0x80).unwrap_or(0)
}

/// The tag byte of field `number` with `wire_type`, for fields numbered below 16.
const fn tag(number: u8, wire_type: u8) -> u8 {
    (number << 3) | wire_type
}

// Tag bytes of the fields the hot loops match on (`T<number>_<wire type>`).
const T1_VARINT: u8 = tag(1, VARINT);
const T2_FIXED64: u8 = tag(2, FIXED64);
const T2_VARINT: u8 = tag(2, VARINT);
const T3_VARINT: u8 = tag(3, VARINT);
const T3_LEN: u8 = tag(3, LEN);
const T4_LEN: u8 = tag(4, LEN);
const T4_VARINT: u8 = tag(4, VARINT);
const T5_LEN: u8 = tag(5, LEN);
const T5_VARINT: u8 = tag(5, VARINT);
const T6_LEN: u8 = tag(6, LEN);
const T7_VARINT: u8 = tag(7, VARINT);

/// Reads an XSpace file into memory for viewing, refusing one over `options.max_size`; a gzipped
/// file is decompressed (under `options.max_inflated`). Errors name the file.
pub fn read_file_bytes(path: impl AsRef<Path>, options: ReadOptions) -> Result<Vec<u8>> {
    let path = path.as_ref();
    let inner = || -> Result<Vec<u8>> {
        let file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        check_size("XSpace", 0, len, options.max_size)?;
        let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        let file = crate::gzip::MaybeGzip::new(file, options.max_inflated, Some(len));
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, options.max_size.saturating_add(1)),
            &mut buf,
        )?;
        check_size("XSpace", 0, buf.len() as u64, options.max_size)?;
        Ok(buf)
    };
    inner().map_err(|e| e.in_file(path))
}

// ---------------------------------------------------------------------------------------------
// XSpace

/// A borrowed view of an encoded XSpace.
#[derive(Clone, Copy)]
pub struct XSpaceView<'a> {
    root: Root<'a>,
}

/// One top-level item of a viewed XSpace, in file order.
// Items are handed out one at a time; boxing the plane would allocate per plane for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub enum SpaceItemView<'a> {
    /// An element of `XSpace.planes`.
    Plane(XPlaneView<'a>),
    /// An element of `XSpace.errors`.
    Error(&'a str),
    /// An element of `XSpace.warnings`.
    Warning(&'a str),
    /// An element of `XSpace.hostnames`.
    Hostname(&'a str),
}

impl<'a> XSpaceView<'a> {
    /// A view of `bytes`, an encoded XSpace, under the default size limit. Nothing is read yet.
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        Self::with_options(bytes, ReadOptions::default())
    }

    /// A view of `bytes` under `options` (an input over `max_size` is refused).
    pub fn with_options(bytes: &'a [u8], options: ReadOptions) -> Result<Self> {
        check_size("XSpace", 0, bytes.len() as u64, options.max_size)?;
        Ok(XSpaceView {
            root: Root {
                msg: Msg::Space,
                body: bytes,
                base: 0,
                open: true,
                plane: None,
            },
        })
    }

    /// The encoded bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.root.body
    }

    /// Every top-level item in file order.
    pub fn items(&self) -> SpaceItems<'a> {
        SpaceItems {
            root: self.root,
            fields: Fields::new(self.root.body),
            planes: 0,
            done: false,
        }
    }

    /// The planes, in file order.
    pub fn planes(&self) -> impl Iterator<Item = Result<XPlaneView<'a>>> + 'a {
        self.items().filter_map(|item| match item {
            Ok(SpaceItemView::Plane(plane)) => Some(Ok(plane)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }

    /// The strings of `XSpace.hostnames`.
    pub fn hostnames(&self) -> impl Iterator<Item = Result<&'a str>> + 'a {
        self.items().filter_map(|item| match item {
            Ok(SpaceItemView::Hostname(s)) => Some(Ok(s)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }

    /// Walks every field of the space, so that it is accepted or refused exactly as
    /// [`crate::decode`] would.
    pub fn check(&self) -> Result<()> {
        for item in self.items() {
            if let SpaceItemView::Plane(plane) = item? {
                plane.check()?;
            }
        }
        Ok(())
    }

    /// The owned XSpace, as [`crate::decode`] builds it (with byte fields copied).
    pub fn to_owned_space(&self) -> Result<XSpace> {
        self.owned_with(None)
    }

    /// The owned XSpace, its byte fields sharing `owner` (the buffer this view is of).
    pub(crate) fn owned_with(&self, owner: Option<&bytes::Bytes>) -> Result<XSpace> {
        let mut space = XSpace::default();
        for item in self.items() {
            match item? {
                SpaceItemView::Plane(plane) => space.planes.push(plane.owned_with(owner)?),
                SpaceItemView::Error(s) => space.errors.push(s.to_owned()),
                SpaceItemView::Warning(s) => space.warnings.push(s.to_owned()),
                SpaceItemView::Hostname(s) => space.hostnames.push(s.to_owned()),
            }
        }
        Ok(space)
    }
}

/// The top-level items of an [`XSpaceView`].
pub struct SpaceItems<'a> {
    root: Root<'a>,
    fields: Fields<'a>,
    planes: usize,
    done: bool,
}

impl<'a> SpaceItems<'a> {
    fn step(&mut self) -> Walk<Option<SpaceItemView<'a>>> {
        while !self.fields.at_end() {
            let (number, wire_type) = self.fields.tag()?;
            match (number, wire_type) {
                (1, LEN) => {
                    let body = self.fields.bytes()?;
                    let index = self.planes;
                    self.planes += 1;
                    return XPlaneView::parse(self.root, body, index)
                        .map(SpaceItemView::Plane)
                        .map(Some);
                }
                (2, LEN) => return Ok(Some(SpaceItemView::Error(self.fields.str()?))),
                (3, LEN) => return Ok(Some(SpaceItemView::Warning(self.fields.str()?))),
                (4, LEN) => return Ok(Some(SpaceItemView::Hostname(self.fields.str()?))),
                _ => self.fields.other(Msg::Space, number, wire_type)?,
            }
        }
        Ok(None)
    }
}

impl<'a> Iterator for SpaceItems<'a> {
    type Item = Result<SpaceItemView<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(Bad) => {
                self.done = true;
                Some(Err(self.root.error()))
            }
        }
    }
}

impl std::iter::FusedIterator for SpaceItems<'_> {}

// ---------------------------------------------------------------------------------------------
// XPlane

/// A borrowed view of one XPlane. Its own scalar fields are decoded when the view is made; lines,
/// stats and metadata when they are asked for.
#[derive(Clone)]
pub struct XPlaneView<'a> {
    root: Root<'a>,
    body: &'a [u8],
    index: usize,
    id: i64,
    name: &'a str,
    lines: usize,
    stats: usize,
    metadata: OnceCell<PlaneMetadata<'a>>,
}

impl<'a> XPlaneView<'a> {
    /// A view of `bytes`, one encoded XPlane on its own (errors are located in `XPlane`).
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        let root = Root {
            msg: Msg::Plane,
            body: bytes,
            base: 0,
            open: true,
            plane: None,
        };
        Self::parse(root, bytes, 0).map_err(|Bad| root.error())
    }

    /// A view of `bytes`, the `index`th plane of a space, read on its own from byte `offset` of
    /// the input (as the streaming reader does).
    pub(crate) fn streamed(bytes: &'a [u8], offset: u64, index: usize) -> Result<Self> {
        let root = Root {
            msg: Msg::Plane,
            body: bytes,
            base: offset,
            open: false,
            plane: Some(index),
        };
        Self::parse(root, bytes, index).map_err(|Bad| root.error())
    }

    fn parse(root: Root<'a>, body: &'a [u8], index: usize) -> Walk<Self> {
        let mut plane = XPlaneView {
            root,
            body,
            index,
            id: 0,
            name: "",
            lines: 0,
            stats: 0,
            metadata: OnceCell::new(),
        };
        let mut f = Fields::new(body);
        while !f.at_end() {
            match f.tag()? {
                (1, VARINT) => plane.id = f.varint()? as i64,
                (2, LEN) => plane.name = f.str()?,
                (3, LEN) => {
                    f.bytes()?;
                    plane.lines += 1;
                }
                (6, LEN) => {
                    f.bytes()?;
                    plane.stats += 1;
                }
                (4 | 5, LEN) => {
                    f.bytes()?;
                }
                (number, wire_type) => f.other(Msg::Plane, number, wire_type)?,
            }
        }
        Ok(plane)
    }

    /// The encoded plane.
    pub fn bytes(&self) -> &'a [u8] {
        self.body
    }

    /// Its index in `XSpace.planes`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// `id`.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// `name`.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// How many lines it holds.
    pub fn line_count(&self) -> usize {
        self.lines
    }

    /// How many plane stats it holds.
    pub fn stat_count(&self) -> usize {
        self.stats
    }

    /// The lines, in file order.
    pub fn lines(&self) -> Lines<'a> {
        Lines(Scan::new(self.root, self.body))
    }

    /// The plane's own stats, in file order.
    pub fn stats(&self) -> Stats<'a> {
        Stats {
            scan: Scan::new(self.root, self.body),
            msg: Msg::Plane,
            tag: T6_LEN,
        }
    }

    /// The metadata maps, indexed (and checked) the first time they are asked for.
    pub fn metadata(&self) -> Result<&PlaneMetadata<'a>> {
        if let Some(index) = self.metadata.get() {
            return Ok(index);
        }
        let index = PlaneMetadata::build(self.body).map_err(|Bad| self.root.error())?;
        Ok(self.metadata.get_or_init(|| index))
    }

    /// The plane with its metadata resolved: the API of [`crate::PlaneVisitor`] over this view.
    pub fn visitor(&self) -> Result<crate::PlaneViewVisitor<'_, 'a>> {
        crate::PlaneViewVisitor::new(self)
    }

    /// Walks every field of the plane.
    pub fn check(&self) -> Result<()> {
        self.metadata()?;
        for stat in self.stats() {
            stat?;
        }
        for line in self.lines() {
            for event in line?.events() {
                for stat in event?.stats() {
                    stat?;
                }
            }
        }
        Ok(())
    }

    /// The owned XPlane, as [`crate::decode_plane`] builds it.
    pub fn to_owned_plane(&self) -> Result<XPlane> {
        self.owned_with(None)
    }

    /// The owned XPlane, its byte fields sharing `owner` (the buffer this view is of).
    pub(crate) fn owned_with(&self, owner: Option<&bytes::Bytes>) -> Result<XPlane> {
        let metadata = self.metadata()?;
        let mut plane = XPlane {
            id: self.id,
            name: self.name.to_owned(),
            lines: Vec::with_capacity(self.lines),
            event_metadata: metadata
                .events
                .iter()
                .map(|md| (md.key, md.to_owned_metadata(owner)))
                .collect::<BTreeMap<_, _>>(),
            stat_metadata: metadata
                .stats
                .iter()
                .map(|md| (md.key, md.to_owned_metadata()))
                .collect::<BTreeMap<_, _>>(),
            stats: Vec::with_capacity(self.stats),
        };
        for stat in self.stats() {
            plane.stats.push(stat?.owned_with(owner));
        }
        for line in self.lines() {
            plane.lines.push(line?.owned_with(owner)?);
        }
        Ok(plane)
    }
}

/// A scan of one message body for the elements of a repeated message field.
#[derive(Clone)]
struct Scan<'a> {
    root: Root<'a>,
    fields: Fields<'a>,
    done: bool,
}

impl<'a> Scan<'a> {
    fn new(root: Root<'a>, body: &'a [u8]) -> Self {
        Scan {
            root,
            fields: Fields::new(body),
            done: false,
        }
    }

    /// The next element of the field whose tag byte is `tag` in `msg`, decoded by `parse`.
    #[inline(always)]
    fn next_with<T>(
        &mut self,
        msg: Msg,
        tag: u8,
        parse: impl Fn(Root<'a>, &'a [u8]) -> Walk<T>,
    ) -> Option<Result<T>> {
        if self.done {
            return None;
        }
        let step = (|| {
            while !self.fields.at_end() {
                let key = self.fields.varint()?;
                if key_byte(key) == tag {
                    let body = self.fields.bytes()?;
                    return parse(self.root, body).map(Some);
                }
                let (number, wire_type) = checked_tag(key)?;
                self.fields.other(msg, number, wire_type)?;
            }
            Ok(None)
        })();
        match step {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(Bad) => {
                self.done = true;
                Some(Err(self.root.error()))
            }
        }
    }
}

/// The lines of a plane, each decoded as it is reached.
#[derive(Clone)]
pub struct Lines<'a>(Scan<'a>);

impl<'a> Iterator for Lines<'a> {
    type Item = Result<XLineView<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_with(Msg::Plane, T3_LEN, XLineView::parse)
    }
}

impl std::iter::FusedIterator for Lines<'_> {}

/// The stats of a plane or of an event, each decoded as it is reached.
#[derive(Clone)]
pub struct Stats<'a> {
    scan: Scan<'a>,
    msg: Msg,
    tag: u8,
}

impl<'a> Iterator for Stats<'a> {
    type Item = Result<XStatView<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.scan
            .next_with(self.msg, self.tag, |_, body| XStatView::decode(body))
    }
}

impl std::iter::FusedIterator for Stats<'_> {}

// ---------------------------------------------------------------------------------------------
// XLine

/// A borrowed view of one XLine, its scalar fields decoded.
#[derive(Clone, Copy)]
pub struct XLineView<'a> {
    root: Root<'a>,
    body: &'a [u8],
    id: i64,
    display_id: i64,
    name: &'a str,
    display_name: &'a str,
    timestamp_ns: i64,
    duration_ps: i64,
    events: usize,
}

impl<'a> XLineView<'a> {
    fn parse(root: Root<'a>, body: &'a [u8]) -> Walk<Self> {
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

    fn owned_with(&self, owner: Option<&bytes::Bytes>) -> Result<XLine> {
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
fn owned_event(body: &[u8], owner: Option<&bytes::Bytes>) -> Walk<XEvent> {
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
            stats.push(XStatView::decode(f.bytes()?)?.owned_with(owner));
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
    scan: Scan<'a>,
    timestamp_ns: i64,
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

impl std::iter::FusedIterator for Events<'_> {}

// ---------------------------------------------------------------------------------------------
// XEvent

/// A borrowed view of one XEvent, its scalar fields decoded; its stats are decoded when walked.
#[derive(Clone, Copy)]
pub struct XEventView<'a> {
    root: Root<'a>,
    /// The event's body from its first stat on (empty without stats).
    stats: &'a [u8],
    metadata_id: i64,
    data: Option<x_event::Data>,
    duration_ps: i64,
    line_timestamp_ns: i64,
    stat_count: u32,
}

impl<'a> XEventView<'a> {
    #[inline(always)]
    fn parse(root: Root<'a>, body: &'a [u8], line_timestamp_ns: i64) -> Walk<Self> {
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
    fn owned_with(&self, owner: Option<&bytes::Bytes>) -> Result<XEvent> {
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

// ---------------------------------------------------------------------------------------------
// XStat

/// The value of a stat as stored: a `ref_value` is the id of a stat metadata, resolved with
/// [`PlaneMetadata::resolve`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StatValueView<'a> {
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
    /// `ref_value`: a stat metadata id.
    Ref(u64),
}

/// A borrowed view of one XStat.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XStatView<'a> {
    metadata_id: i64,
    value: Option<StatValueView<'a>>,
}

impl<'a> XStatView<'a> {
    #[inline]
    fn decode(body: &'a [u8]) -> Walk<Self> {
        let mut stat = XStatView {
            metadata_id: 0,
            value: None,
        };
        let mut f = Fields::new(body);
        while !f.at_end() {
            let key = f.varint()?;
            stat.value = Some(match key_byte(key) {
                T1_VARINT => {
                    stat.metadata_id = f.varint()? as i64;
                    continue;
                }
                T2_FIXED64 => StatValueView::Double(f64::from_bits(f.fixed64()?)),
                T3_VARINT => StatValueView::Uint64(f.varint()?),
                T4_VARINT => StatValueView::Int64(f.varint()? as i64),
                T5_LEN => StatValueView::Str(f.str()?),
                T6_LEN => StatValueView::Bytes(f.bytes()?),
                T7_VARINT => StatValueView::Ref(f.varint()?),
                _ => {
                    let (number, wire_type) = checked_tag(key)?;
                    f.other(Msg::Stat, number, wire_type)?;
                    continue;
                }
            });
        }
        Ok(stat)
    }

    /// `metadata_id`.
    pub fn metadata_id(&self) -> i64 {
        self.metadata_id
    }

    /// The value, `None` when none is set.
    pub fn value(&self) -> Option<StatValueView<'a>> {
        self.value
    }

    /// The owned XStat.
    pub fn to_owned_stat(&self) -> XStat {
        self.owned_with(None)
    }

    #[inline]
    fn owned_with(&self, owner: Option<&bytes::Bytes>) -> XStat {
        XStat {
            metadata_id: self.metadata_id,
            value: self.value.map(|v| match v {
                StatValueView::Double(v) => x_stat::Value::DoubleValue(v),
                StatValueView::Uint64(v) => x_stat::Value::Uint64Value(v),
                StatValueView::Int64(v) => x_stat::Value::Int64Value(v),
                StatValueView::Str(v) => x_stat::Value::StrValue(v.to_owned()),
                StatValueView::Bytes(v) => x_stat::Value::BytesValue(share(owner, v)),
                StatValueView::Ref(v) => x_stat::Value::RefValue(v),
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Metadata

/// A borrowed view of one `event_metadata` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct XEventMetadataView<'a> {
    key: i64,
    id: i64,
    name: &'a str,
    display_name: &'a str,
    metadata: &'a [u8],
    stats: Vec<XStatView<'a>>,
    child_id: Vec<i64>,
}

impl<'a> XEventMetadataView<'a> {
    /// Decodes an entry: its key, and its value (merged, when the entry holds several).
    fn decode_entry(body: &'a [u8]) -> Walk<Self> {
        let mut md = XEventMetadataView {
            key: 0,
            id: 0,
            name: "",
            display_name: "",
            metadata: &[],
            stats: Vec::new(),
            child_id: Vec::new(),
        };
        let mut entry = Fields::new(body);
        while !entry.at_end() {
            match entry.tag()? {
                (1, VARINT) => md.key = entry.varint()? as i64,
                (2, LEN) => md.merge(entry.bytes()?)?,
                (number, wire_type) => entry.other(Msg::EventMetadataEntry, number, wire_type)?,
            }
        }
        Ok(md)
    }

    fn merge(&mut self, body: &'a [u8]) -> Walk<()> {
        let mut f = Fields::new(body);
        while !f.at_end() {
            match f.tag()? {
                (1, VARINT) => self.id = f.varint()? as i64,
                (2, LEN) => self.name = f.str()?,
                (4, LEN) => self.display_name = f.str()?,
                (3, LEN) => self.metadata = f.bytes()?,
                (5, LEN) => self.stats.push(XStatView::decode(f.bytes()?)?),
                (6, VARINT) => self.child_id.push(f.varint()? as i64),
                (6, LEN) => {
                    let mut packed = Fields::new(f.bytes()?);
                    while !packed.at_end() {
                        self.child_id.push(packed.varint()? as i64);
                    }
                }
                (number, wire_type) => f.other(Msg::EventMetadata, number, wire_type)?,
            }
        }
        Ok(())
    }

    /// The map key.
    pub fn key(&self) -> i64 {
        self.key
    }

    /// `id` (which should equal the key).
    pub fn id(&self) -> i64 {
        self.id
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

    /// `metadata`: opaque bytes.
    pub fn metadata(&self) -> &'a [u8] {
        self.metadata
    }

    /// Its stats, in file order.
    pub fn stats(&self) -> &[XStatView<'a>] {
        &self.stats
    }

    /// `child_id`.
    pub fn child_id(&self) -> &[i64] {
        &self.child_id
    }

    fn to_owned_metadata(&self, owner: Option<&bytes::Bytes>) -> XEventMetadata {
        XEventMetadata {
            id: self.id,
            name: self.name.to_owned(),
            display_name: self.display_name.to_owned(),
            metadata: share(owner, self.metadata),
            stats: self.stats.iter().map(|s| s.owned_with(owner)).collect(),
            child_id: self.child_id.clone(),
        }
    }
}

/// A borrowed view of one `stat_metadata` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XStatMetadataView<'a> {
    key: i64,
    id: i64,
    name: &'a str,
    description: &'a str,
}

impl<'a> XStatMetadataView<'a> {
    fn decode_entry(body: &'a [u8]) -> Walk<Self> {
        let mut md = XStatMetadataView {
            key: 0,
            id: 0,
            name: "",
            description: "",
        };
        let mut entry = Fields::new(body);
        while !entry.at_end() {
            match entry.tag()? {
                (1, VARINT) => md.key = entry.varint()? as i64,
                (2, LEN) => {
                    let mut f = Fields::new(entry.bytes()?);
                    while !f.at_end() {
                        match f.tag()? {
                            (1, VARINT) => md.id = f.varint()? as i64,
                            (2, LEN) => md.name = f.str()?,
                            (3, LEN) => md.description = f.str()?,
                            (number, wire_type) => f.other(Msg::StatMetadata, number, wire_type)?,
                        }
                    }
                }
                (number, wire_type) => entry.other(Msg::StatMetadataEntry, number, wire_type)?,
            }
        }
        Ok(md)
    }

    /// The map key.
    pub fn key(&self) -> i64 {
        self.key
    }

    /// `id` (which should equal the key).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// `name`.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// `description`.
    pub fn description(&self) -> &'a str {
        self.description
    }

    fn to_owned_metadata(self) -> XStatMetadata {
        XStatMetadata {
            id: self.id,
            name: self.name.to_owned(),
            description: self.description.to_owned(),
        }
    }
}

/// Lookup by id: a table for keys that are small and dense (as writers assign them), a binary
/// search otherwise.
#[derive(Clone, Debug, Default)]
struct Lookup {
    /// `slots[key]` is the position + 1 of that key's entry, 0 for none.
    slots: Vec<u32>,
}

impl Lookup {
    fn new(keys: impl ExactSizeIterator<Item = i64> + Clone) -> Self {
        let count = keys.len();
        let max = keys.clone().max().unwrap_or(-1);
        let min = keys.clone().min().unwrap_or(0);
        let Ok(max) = usize::try_from(max) else {
            return Lookup::default();
        };
        if min < 0
            || max >= count.saturating_mul(4).saturating_add(1024)
            || count > u32::MAX as usize - 1
        {
            return Lookup::default();
        }
        let mut slots = vec![0u32; max + 1];
        for (position, key) in keys.enumerate() {
            if let Some(slot) = usize::try_from(key).ok().and_then(|k| slots.get_mut(k)) {
                *slot = position as u32 + 1;
            }
        }
        Lookup { slots }
    }

    #[inline]
    fn find<T>(&self, entries: &[T], key: impl Fn(&T) -> i64, id: i64) -> Option<usize> {
        if !self.slots.is_empty() {
            let slot = usize::try_from(id).ok().and_then(|i| self.slots.get(i))?;
            return slot.checked_sub(1).map(|p| p as usize);
        }
        entries.binary_search_by_key(&id, key).ok()
    }
}

/// The metadata maps of a plane, indexed: entries in key order (the last of a repeated key wins,
/// as when decoding), found by id in constant time for the usual dense ids.
#[derive(Clone, Debug)]
pub struct PlaneMetadata<'a> {
    events: Vec<XEventMetadataView<'a>>,
    stats: Vec<XStatMetadataView<'a>>,
    event_lookup: Lookup,
    stat_lookup: Lookup,
    stat_names: HashMap<&'a str, i64>,
}

impl<'a> PlaneMetadata<'a> {
    fn build(plane: &'a [u8]) -> Walk<Self> {
        let mut events = Vec::new();
        let mut stats = Vec::new();
        let mut f = Fields::new(plane);
        while !f.at_end() {
            let key = f.varint()?;
            if key_byte(key) == T3_LEN {
                f.bytes()?;
                continue;
            }
            match checked_tag(key)? {
                (4, LEN) => events.push(XEventMetadataView::decode_entry(f.bytes()?)?),
                (5, LEN) => stats.push(XStatMetadataView::decode_entry(f.bytes()?)?),
                (number, wire_type) => f.other(Msg::Plane, number, wire_type)?,
            }
        }
        let events = last_of_each_key(events, |md| md.key);
        let stats = last_of_each_key(stats, |md| md.key);
        let mut stat_names = HashMap::with_capacity(stats.len());
        for md in &stats {
            stat_names.entry(md.name).or_insert(md.key);
        }
        Ok(PlaneMetadata {
            event_lookup: Lookup::new(events.iter().map(|md| md.key)),
            stat_lookup: Lookup::new(stats.iter().map(|md| md.key)),
            events,
            stats,
            stat_names,
        })
    }

    /// Every event metadata, in key order.
    pub fn events(&self) -> &[XEventMetadataView<'a>] {
        &self.events
    }

    /// Every stat metadata, in key order.
    pub fn stats(&self) -> &[XStatMetadataView<'a>] {
        &self.stats
    }

    /// The event metadata with key `id`.
    #[inline]
    pub fn event(&self, id: i64) -> Option<&XEventMetadataView<'a>> {
        let position = self.event_lookup.find(&self.events, |md| md.key, id)?;
        self.events.get(position)
    }

    /// The stat metadata with key `id`.
    #[inline]
    pub fn stat(&self, id: i64) -> Option<&XStatMetadataView<'a>> {
        let position = self.stat_lookup.find(&self.stats, |md| md.key, id)?;
        self.stats.get(position)
    }

    /// The name of event metadata `id`; empty when it resolves to nothing (as in TSL).
    #[inline]
    pub fn event_name(&self, id: i64) -> &'a str {
        self.event(id).map_or("", |md| md.name)
    }

    /// The display name of event metadata `id` when set, else its name.
    #[inline]
    pub fn event_display_name(&self, id: i64) -> &'a str {
        self.event(id).map_or("", |md| md.display_name())
    }

    /// The name of stat metadata `id`; empty when it resolves to nothing.
    #[inline]
    pub fn stat_name(&self, id: i64) -> &'a str {
        self.stat(id).map_or("", |md| md.name)
    }

    /// The key of the stat metadata named `name` (the smallest, if several share it).
    pub fn stat_id(&self, name: &str) -> Option<i64> {
        self.stat_names.get(name).copied()
    }

    /// A stat's value with a `ref_value` resolved to the referenced stat metadata's name (empty
    /// when it resolves to nothing), as [`crate::StatVisitor::value`] gives it.
    pub fn resolve(&self, value: StatValueView<'a>) -> StatValueRef<'a> {
        match value {
            StatValueView::Double(v) => StatValueRef::Double(v),
            StatValueView::Uint64(v) => StatValueRef::Uint64(v),
            StatValueView::Int64(v) => StatValueRef::Int64(v),
            StatValueView::Str(v) => StatValueRef::Str(v),
            StatValueView::Bytes(v) => StatValueRef::Bytes(v),
            StatValueView::Ref(id) => {
                StatValueRef::Ref(visitor::ref_name(id, |id| self.stat(id).map(|md| md.name)))
            }
        }
    }
}

/// `sub`, a slice of `owner`'s buffer, as a `Bytes` sharing it; a copy when there is no owner (or,
/// defensively, when `sub` lies outside it).
fn share(owner: Option<&bytes::Bytes>, sub: &[u8]) -> bytes::Bytes {
    if let Some(owner) = owner {
        let (start, end) = (
            owner.as_ptr() as usize,
            owner.as_ptr() as usize + owner.len(),
        );
        let at = sub.as_ptr() as usize;
        if sub.is_empty() {
            return bytes::Bytes::new();
        }
        if at >= start && at + sub.len() <= end {
            return owner.slice_ref(sub);
        }
    }
    bytes::Bytes::copy_from_slice(sub)
}

/// Sorts entries by key, keeping the last of each key in file order.
fn last_of_each_key<T>(mut entries: Vec<T>, key: impl Fn(&T) -> i64) -> Vec<T> {
    // A stable sort keeps file order among equal keys; the last of each run wins.
    entries.sort_by_key(&key);
    let mut out: Vec<T> = Vec::with_capacity(entries.len());
    for entry in entries {
        match out.last_mut() {
            Some(last) if key(last) == key(&entry) => *last = entry,
            _ => out.push(entry),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_dense_and_sparse() {
        let dense = Lookup::new([1_i64, 2, 5].into_iter());
        let keys = [1_i64, 2, 5];
        assert!(!dense.slots.is_empty());
        assert_eq!(dense.find(&keys, |k| *k, 5), Some(2));
        assert_eq!(dense.find(&keys, |k| *k, 3), None);
        assert_eq!(dense.find(&keys, |k| *k, -1), None);
        let sparse_keys = [-7_i64, 3, i64::MAX];
        let sparse = Lookup::new(sparse_keys.into_iter());
        assert!(sparse.slots.is_empty());
        assert_eq!(sparse.find(&sparse_keys, |k| *k, i64::MAX), Some(2));
    }

    #[test]
    fn last_key_wins() {
        let out = last_of_each_key(vec![(2, 'a'), (1, 'b'), (2, 'c')], |e| e.0);
        assert_eq!(out, vec![(1, 'b'), (2, 'c')]);
    }
}

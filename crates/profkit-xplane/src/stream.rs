//! Streaming reads: one XPlane at a time from any `Read`.
//!
//! An encoded XSpace is a sequence of top-level fields: `planes` (1), `errors` (2), `warnings` (3)
//! and `hostnames` (4), in any order. [`XSpaceReader`] reads one field at a time, so a file of many
//! gigabytes is processed with memory bounded by its largest plane.

use std::io::Read;

use profkit_wire::{
    END_GROUP, FaultError, LEN, MAX_FIELD_NUMBER, Problem, START_GROUP, WireReader, split_tag,
};

use crate::error::{Error, Result};
use crate::gzip::MaybeGzip;
use crate::options::ReadOptions;
use crate::proto::{XPlane, XSpace};
use crate::wire::MAX_GROUP_DEPTH;
use crate::xview::XPlaneView;

/// One top-level item of an XSpace, in file order.
#[derive(Clone, Debug, PartialEq)]
pub enum SpaceItem {
    /// An element of `XSpace.planes`.
    Plane(XPlane),
    /// An element of `XSpace.errors`.
    Error(String),
    /// An element of `XSpace.warnings`.
    Warning(String),
    /// An element of `XSpace.hostnames`.
    Hostname(String),
}

/// One top-level item of an XSpace with a plane kept encoded, from [`XSpaceReader::next_raw`].
#[derive(Clone, Debug, PartialEq)]
pub enum RawSpaceItem {
    /// An element of `XSpace.planes`, encoded.
    Plane(PlaneBytes),
    /// An element of `XSpace.errors`.
    Error(String),
    /// An element of `XSpace.warnings`.
    Warning(String),
    /// An element of `XSpace.hostnames`.
    Hostname(String),
}

/// The bytes of one plane read from a stream, with where they came from.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaneBytes {
    bytes: Vec<u8>,
    offset: u64,
    index: usize,
}

impl PlaneBytes {
    /// A view of the plane; its errors are located in the input the plane was read from.
    pub fn view(&self) -> Result<XPlaneView<'_>> {
        XPlaneView::streamed(&self.bytes, self.offset, self.index)
    }

    /// The encoded plane.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Byte offset of the plane's body in the input.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Its index in `XSpace.planes`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The encoded plane, taken out.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Decodes the plane into the owned type.
    pub fn decode(self) -> Result<XPlane> {
        let bytes = bytes::Bytes::from(self.bytes);
        XPlaneView::streamed(&bytes, self.offset, self.index)?.owned_with(Some(&bytes))
    }

    /// [`Self::decode`], the lines of a big plane (50,000 events or more, on 4,096 lines at most)
    /// decoded on the threads of the current rayon pool: the same plane and the same errors,
    /// sooner where there are cores to spare, the threads' allocations raising the peak a little.
    pub fn decode_parallel(self) -> Result<XPlane> {
        let bytes = bytes::Bytes::from(self.bytes);
        XPlaneView::streamed(&bytes, self.offset, self.index)?.owned_on(Some(&bytes), true)
    }
}

/// Reads an XSpace item by item. Each plane (or string) is checked against
/// [`ReadOptions::max_size`] before it is read; the buffer for it grows with the bytes that
/// actually arrive. After the first error the iterator ends.
///
/// ```
/// use profkit_xplane::{XSpaceReader, SpaceItem, ReadOptions};
/// # let bytes = profkit_xplane::encode(&profkit_xplane::XSpace::default());
/// for item in XSpaceReader::new(&bytes[..], ReadOptions::default()) {
///     if let SpaceItem::Plane(plane) = item? {
///         println!("{}: {} lines", plane.name, plane.lines.len());
///     }
/// }
/// # Ok::<(), profkit_xplane::Error>(())
/// ```
pub struct XSpaceReader<R> {
    input: WireReader<MaybeGzip<R>, Error>,
    options: ReadOptions,
    counts: [u64; 5],
    done: bool,
}

impl<R: Read> XSpaceReader<R> {
    /// A reader over `reader`, which should yield an encoded XSpace, gzipped or not (told by
    /// its first bytes; decompressed under [`ReadOptions::max_inflated`]). Offsets in errors
    /// count decompressed bytes.
    pub fn new(reader: R, options: ReadOptions) -> Self {
        let reader = MaybeGzip::new(reader, options.max_inflated, None);
        XSpaceReader {
            input: WireReader::new(reader, Error::from_fault),
            options,
            counts: [0; 5],
            done: false,
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.input.offset()
    }

    /// Only the planes; the space's strings are skipped.
    pub fn planes(self) -> impl Iterator<Item = Result<XPlane>> {
        self.filter_map(|item| match item {
            Ok(SpaceItem::Plane(plane)) => Some(Ok(plane)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }

    /// Reads the rest of the stream into one XSpace (so memory is that of the whole space).
    pub fn collect_space(self) -> Result<XSpace> {
        let mut space = XSpace::default();
        for item in self {
            match item? {
                SpaceItem::Plane(p) => space.planes.push(p),
                SpaceItem::Error(s) => space.errors.push(s),
                SpaceItem::Warning(s) => space.warnings.push(s),
                SpaceItem::Hostname(s) => space.hostnames.push(s),
            }
        }
        Ok(space)
    }

    /// The next item with a plane kept encoded, to be viewed ([`PlaneBytes::view`]) rather than
    /// decoded: memory is the plane's encoded size, not its decoded tree. `None` at the end; after
    /// an error, `None` too.
    pub fn next_raw(&mut self) -> Option<Result<RawSpaceItem>> {
        if self.done {
            return None;
        }
        match self.next_raw_item() {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }

    /// The items with planes kept encoded, as an iterator ([`XSpaceReader::next_raw`]).
    pub fn raw(mut self) -> impl Iterator<Item = Result<RawSpaceItem>> {
        std::iter::from_fn(move || self.next_raw())
    }

    fn next_item(&mut self) -> Result<Option<SpaceItem>> {
        Ok(match self.next_raw_item()? {
            None => None,
            Some(RawSpaceItem::Plane(plane)) => Some(SpaceItem::Plane(plane.decode()?)),
            Some(RawSpaceItem::Error(s)) => Some(SpaceItem::Error(s)),
            Some(RawSpaceItem::Warning(s)) => Some(SpaceItem::Warning(s)),
            Some(RawSpaceItem::Hostname(s)) => Some(SpaceItem::Hostname(s)),
        })
    }

    fn next_raw_item(&mut self) -> Result<Option<RawSpaceItem>> {
        loop {
            let tag_offset = self.input.offset();
            let Some(tag) = self.input.tag("XSpace")? else {
                return Ok(None);
            };
            let (number, wire_type) = split_tag(tag);
            let (name, index) = match number {
                1..=4 => {
                    let slot = number as usize;
                    let index = self.counts.get(slot).copied().unwrap_or(0);
                    if let Some(c) = self.counts.get_mut(slot) {
                        *c += 1;
                    }
                    (
                        ["", "planes", "errors", "warnings", "hostnames"]
                            .get(slot)
                            .copied()
                            .unwrap_or(""),
                        index,
                    )
                }
                _ if number == 0 || number > MAX_FIELD_NUMBER => {
                    let problem = Problem::InvalidFieldNumber(number);
                    return Err(self.input.fault(tag_offset, "XSpace", problem));
                }
                _ => {
                    self.skip_unknown(number, wire_type, tag_offset)?;
                    continue;
                }
            };
            let path = format!("XSpace.{name}[{index}]");
            if wire_type != LEN {
                let problem = Problem::WrongWireType {
                    found: wire_type,
                    expected: LEN,
                };
                return Err(self.input.fault(tag_offset, &path, problem));
            }
            let len = self.input.varint(&path)?;
            let body_offset = self.input.offset();
            crate::options::check_size(&path, body_offset, len, self.options.max_size)?;
            let body = self.input.body(len, &path)?;
            if number == 1 {
                return Ok(Some(RawSpaceItem::Plane(PlaneBytes {
                    bytes: body,
                    offset: body_offset,
                    index: usize::try_from(index).unwrap_or(usize::MAX),
                })));
            }
            let text = String::from_utf8(body).map_err(|e| {
                let at = body_offset + e.utf8_error().valid_up_to() as u64;
                self.input.fault(at, &path, Problem::InvalidUtf8)
            })?;
            return Ok(Some(match number {
                2 => RawSpaceItem::Error(text),
                3 => RawSpaceItem::Warning(text),
                _ => RawSpaceItem::Hostname(text),
            }));
        }
    }

    fn skip_unknown(&mut self, number: u64, wire_type: u8, tag_offset: u64) -> Result<()> {
        let path = format!("XSpace.<unknown field {number}>");
        if self.input.skip_value(wire_type, &path)? {
            return Ok(());
        }
        let problem = match wire_type {
            START_GROUP => return self.skip_group(number, path),
            END_GROUP => Problem::EndGroupWithoutStart,
            _ => Problem::InvalidWireType(wire_type),
        };
        Err(self.input.fault(tag_offset, &path, problem))
    }

    /// Skips an unknown group (obsolete, but valid protobuf that whole-message decoding accepts)
    /// whose start tag for field `number` was just read. Nesting is followed to
    /// [`MAX_GROUP_DEPTH`] levels with a stack of that bound, never deeper.
    fn skip_group(&mut self, number: u64, mut path: String) -> Result<()> {
        // (field number, length of `path` without its component) of each open group; the
        // outermost group's length does not matter, as the walk ends when it closes.
        let mut open: Vec<(u64, usize)> = vec![(number, 0)];
        while let Some(&(current, _)) = open.last() {
            let tag_offset = self.input.offset();
            let (inner, wire_type) = split_tag(self.input.varint(&path)?);
            if wire_type == END_GROUP {
                if inner != current {
                    let problem = Problem::EndGroupMismatch;
                    return Err(self.input.fault(tag_offset, &path, problem));
                }
                if let Some((_, len)) = open.pop() {
                    path.truncate(len);
                }
                continue;
            }
            if inner == 0 || inner > MAX_FIELD_NUMBER {
                let problem = Problem::InvalidFieldNumber(inner);
                return Err(self.input.fault(tag_offset, &path, problem));
            }
            let before = path.len();
            path.push_str(&format!(".<unknown field {inner}>"));
            if !self.input.skip_value(wire_type, &path)? {
                let problem = if wire_type != START_GROUP {
                    Problem::InvalidWireType(wire_type)
                } else if open.len() >= MAX_GROUP_DEPTH as usize {
                    Problem::GroupsTooDeep
                } else {
                    open.push((inner, before));
                    continue;
                };
                return Err(self.input.fault(tag_offset, &path, problem));
            }
            path.truncate(before);
        }
        Ok(())
    }
}

impl<R: Read> Iterator for XSpaceReader<R> {
    type Item = Result<SpaceItem>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_item() {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<R: Read> std::iter::FusedIterator for XSpaceReader<R> {}

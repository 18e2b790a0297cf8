//! Streaming reads: one XPlane at a time from any `Read`.
//!
//! An encoded XSpace is a sequence of top-level fields: `planes` (1), `errors` (2), `warnings` (3)
//! and `hostnames` (4), in any order. [`XSpaceReader`] reads one field at a time, so a file of many
//! gigabytes is processed with memory bounded by its largest plane.

use std::io::{BufRead, BufReader, Read};

use crate::codec::ReadOptions;
use crate::error::{Error, Result};
use crate::proto::{XPlane, XSpace};
use crate::wire::{self, Msg};

/// One more than the largest field number protobuf allows (2^29 - 1).
const MAX_FIELD_NUMBER_PLUS_ONE: u64 = 1 << 29;

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
    reader: BufReader<R>,
    options: ReadOptions,
    offset: u64,
    counts: [u64; 5],
    done: bool,
}

impl<R: Read> XSpaceReader<R> {
    /// A reader over `reader`, which should yield an encoded XSpace.
    pub fn new(reader: R, options: ReadOptions) -> Self {
        XSpaceReader {
            reader: BufReader::with_capacity(1 << 16, reader),
            options,
            offset: 0,
            counts: [0; 5],
            done: false,
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
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

    /// Reads a varint; `Ok(None)` at a clean end of input when `eof_ok`.
    fn varint(&mut self, path: &str, eof_ok: bool) -> Result<Option<u64>> {
        let start = self.offset;
        let mut value: u64 = 0;
        for i in 0..10u32 {
            let available = loop {
                match self.reader.fill_buf() {
                    Ok(buf) => break buf,
                    // A reader may be interrupted at any call; `Read` asks callers to retry.
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
            };
            let byte = match available.first() {
                Some(&b) => b,
                None if i == 0 && eof_ok => return Ok(None),
                None => {
                    return Err(Error::Truncated {
                        offset: self.offset,
                        path: path.to_owned(),
                        needed: 1,
                    });
                }
            };
            self.reader.consume(1);
            self.offset += 1;
            if i == 9 && byte > 1 {
                break;
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(Some(value));
            }
        }
        Err(Error::Malformed {
            offset: start,
            path: path.to_owned(),
            reason: "varint longer than 64 bits".into(),
        })
    }

    /// Reads exactly `len` bytes (already checked against the limit).
    fn body(&mut self, len: u64, path: &str) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        let got = (&mut self.reader).take(len).read_to_end(&mut buf)? as u64;
        self.offset += got;
        if got < len {
            return Err(Error::Truncated {
                offset: self.offset,
                path: path.to_owned(),
                needed: len - got,
            });
        }
        Ok(buf)
    }

    /// Skips `len` bytes of an unknown field.
    fn skip(&mut self, len: u64, path: &str) -> Result<()> {
        let got = std::io::copy(&mut (&mut self.reader).take(len), &mut std::io::sink())?;
        self.offset += got;
        if got < len {
            return Err(Error::Truncated {
                offset: self.offset,
                path: path.to_owned(),
                needed: len - got,
            });
        }
        Ok(())
    }

    fn next_item(&mut self) -> Result<Option<SpaceItem>> {
        loop {
            let tag_offset = self.offset;
            let Some(tag) = self.varint("XSpace", true)? else {
                return Ok(None);
            };
            let number = tag >> 3;
            let wire_type = (tag & 7) as u8;
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
                0 | MAX_FIELD_NUMBER_PLUS_ONE.. => {
                    return Err(Error::Malformed {
                        offset: tag_offset,
                        path: "XSpace".into(),
                        reason: format!("invalid field number {number}"),
                    });
                }
                _ => {
                    self.skip_unknown(number, wire_type, tag_offset)?;
                    continue;
                }
            };
            let path = format!("XSpace.{name}[{index}]");
            if wire_type != wire::LEN {
                return Err(Error::Malformed {
                    offset: tag_offset,
                    path,
                    reason: format!(
                        "wire type {wire_type} ({}), expected 2 (length-delimited)",
                        wire::wire_type_name(wire_type)
                    ),
                });
            }
            let len = self.varint(&path, false)?.unwrap_or(0);
            let body_offset = self.offset;
            crate::codec::check_size(&path, body_offset, len, self.options.max_size)?;
            let body = self.body(len, &path)?;
            if number == 1 {
                let bytes = bytes::Bytes::from(body);
                let plane: XPlane = wire::decode(Msg::Plane, bytes, body_offset, false, &path)?;
                return Ok(Some(SpaceItem::Plane(plane)));
            }
            let text = String::from_utf8(body).map_err(|e| Error::Malformed {
                offset: body_offset + e.utf8_error().valid_up_to() as u64,
                path: path.clone(),
                reason: "string is not valid UTF-8".into(),
            })?;
            return Ok(Some(match number {
                2 => SpaceItem::Error(text),
                3 => SpaceItem::Warning(text),
                _ => SpaceItem::Hostname(text),
            }));
        }
    }

    fn skip_unknown(&mut self, number: u64, wire_type: u8, tag_offset: u64) -> Result<()> {
        let path = format!("XSpace.<unknown field {number}>");
        match wire_type {
            wire::VARINT => {
                self.varint(&path, false)?;
            }
            wire::FIXED64 => self.skip(8, &path)?,
            wire::FIXED32 => self.skip(4, &path)?,
            wire::LEN => {
                let len = self.varint(&path, false)?.unwrap_or(0);
                self.skip(len, &path)?;
            }
            wire::START_GROUP => self.skip_group(number, path)?,
            wire::END_GROUP => {
                return Err(Error::Malformed {
                    offset: tag_offset,
                    path,
                    reason: "end-group tag without a start".into(),
                });
            }
            _ => {
                return Err(Error::Malformed {
                    offset: tag_offset,
                    path,
                    reason: format!("invalid wire type {wire_type}"),
                });
            }
        }
        Ok(())
    }

    /// Skips an unknown group (obsolete, but valid protobuf that whole-message decoding accepts)
    /// whose start tag for field `number` was just read. Nesting is followed to
    /// [`wire::MAX_GROUP_DEPTH`] levels with a stack of that bound, never deeper.
    fn skip_group(&mut self, number: u64, mut path: String) -> Result<()> {
        // (field number, length of `path` without its component) of each open group; the
        // outermost group's length does not matter, as the walk ends when it closes.
        let mut open: Vec<(u64, usize)> = vec![(number, 0)];
        while let Some(&(current, _)) = open.last() {
            let tag_offset = self.offset;
            let tag = self.varint(&path, false)?.unwrap_or(0);
            let (inner, wire_type) = (tag >> 3, (tag & 7) as u8);
            let malformed = |offset: u64, path: &str, reason: String| Error::Malformed {
                offset,
                path: path.to_owned(),
                reason,
            };
            if wire_type == wire::END_GROUP {
                if inner != current {
                    return Err(malformed(
                        tag_offset,
                        &path,
                        "end-group tag does not match its start".into(),
                    ));
                }
                if let Some((_, len)) = open.pop() {
                    path.truncate(len);
                }
                continue;
            }
            if inner == 0 || inner >= MAX_FIELD_NUMBER_PLUS_ONE {
                return Err(malformed(
                    tag_offset,
                    &path,
                    format!("invalid field number {inner}"),
                ));
            }
            let before = path.len();
            path.push_str(&format!(".<unknown field {inner}>"));
            match wire_type {
                wire::VARINT => {
                    self.varint(&path, false)?;
                }
                wire::FIXED64 => self.skip(8, &path)?,
                wire::FIXED32 => self.skip(4, &path)?,
                wire::LEN => {
                    let len = self.varint(&path, false)?.unwrap_or(0);
                    self.skip(len, &path)?;
                }
                wire::START_GROUP => {
                    if open.len() >= wire::MAX_GROUP_DEPTH as usize {
                        return Err(malformed(
                            tag_offset,
                            &path,
                            "groups nested too deeply".into(),
                        ));
                    }
                    open.push((inner, before));
                    continue;
                }
                _ => {
                    return Err(malformed(
                        tag_offset,
                        &path,
                        format!("invalid wire type {wire_type}"),
                    ));
                }
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

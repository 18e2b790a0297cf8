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

use std::path::Path;

use profkit_wire::{
    END_GROUP, FIXED32, FIXED64, LEN, MAX_FIELD_NUMBER, START_GROUP, Schema, VARINT, locate,
    read_varint, split_tag,
};

use crate::error::{Error, Result};
use crate::options::{ReadOptions, check_size};
use crate::wire::{self, MAX_GROUP_DEPTH, Msg};

mod event;
mod line;
mod metadata;
mod normalise;
mod plane;
mod space;
mod stat;

pub use event::XEventView;
pub use line::{Events, XLineView};
pub use metadata::{PlaneMetadata, XEventMetadataView, XStatMetadataView};
pub use normalise::Normalised;
pub use plane::{Lines, Stats, XPlaneView};
pub use space::{SpaceItemView, SpaceItems, XSpaceView};
pub use stat::{StatValueView, XStatView};

use metadata::share;
use plane::Scan;

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
            (Msg::Event, None) => "XEvent".to_owned(),
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

#[cfg(test)]
mod tests {
    use super::metadata::{Lookup, last_of_each_key};

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

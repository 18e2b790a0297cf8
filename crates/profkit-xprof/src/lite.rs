//! A light first pass over an encoded XSpace: each plane's names, lines and metadata names,
//! without decoding its events.
//!
//! The trace viewer conversion reads a space twice. Its first pass needs of most planes only the
//! line layout (ids, names, event counts) and the metadata names, so it decodes them with these
//! message types, which keep each event as its bytes (prost slices them out of the plane's
//! buffer without looking inside) and skip stats. Planes whose events the first pass needs are
//! read whole: the host plane through an index of its bytes (`crate::indexed`), device planes
//! (TPU TensorCore planes, GPU planes that take part in grouping) decoded. Anything this pass finds malformed is
//! reported by a full decode of the space instead, so errors read as the streaming reader's.

use std::io::Read;

use bytes::Bytes;
use prost::Message;

/// An `XPlane` with its events left encoded.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct PlaneLite {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    // The lines (field 3) are skipped here and decoded one at a time by `for_each_line`: a
    // plane of millions of lines would otherwise be held decoded twice, as lines and as the
    // trace viewer's copy of their layout.
    #[prost(map = "int64, message", tag = "4")]
    pub event_metadata: std::collections::HashMap<i64, NameLite>,
    #[prost(map = "int64, message", tag = "5")]
    pub stat_metadata: std::collections::HashMap<i64, NameLite>,
}

/// An `XLine` whose events are kept as bytes.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct LineLite {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "11")]
    pub display_name: String,
    #[prost(bytes = "bytes", repeated, tag = "4")]
    pub events: Vec<Bytes>,
}

/// The name of an event or stat metadata (both have it as field 2).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct NameLite {
    #[prost(string, tag = "2")]
    pub name: String,
}

/// One top-level item of a space: a plane's bytes, or another field (skipped).
pub(crate) enum Item {
    /// `XSpace.planes[i]`, with its body's offsets in the input (from the field's tag to its
    /// end).
    Plane { bytes: Bytes, from: u64, to: u64 },
    /// Any other field.
    Other,
}

/// Splits an encoded space into its top-level fields without decoding them. `None` on anything
/// unexpected (the caller then reads the space with the streaming reader to report it).
pub(crate) struct Splitter<R> {
    reader: std::io::BufReader<R>,
    offset: u64,
    max_size: u64,
}

impl<R: Read> Splitter<R> {
    pub(crate) fn new(reader: R, max_size: u64) -> Self {
        Splitter {
            reader: std::io::BufReader::with_capacity(1 << 16, reader),
            offset: 0,
            max_size,
        }
    }

    fn byte(&mut self) -> Option<Option<u8>> {
        let mut b = [0u8; 1];
        match self.reader.read(&mut b) {
            Ok(0) => Some(None),
            Ok(_) => {
                self.offset += 1;
                Some(b.first().copied())
            }
            Err(_) => None,
        }
    }

    fn varint(&mut self, eof_ok: bool) -> Option<Option<u64>> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = match self.byte()? {
                Some(b) => b,
                None if i == 0 && eof_ok => return Some(None),
                None => return None,
            };
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Some(Some(value));
            }
        }
        None
    }

    /// The next item; `Some(None)` at a clean end, `None` on anything unexpected.
    pub(crate) fn next_item(&mut self) -> Option<Option<Item>> {
        let from = self.offset;
        let Some(tag) = self.varint(true)? else {
            return Some(None);
        };
        let (number, wire) = (tag >> 3, tag & 7);
        if wire != 2 || !(1..=4).contains(&number) {
            // Unknown fields are rare; the streaming reader handles them.
            return None;
        }
        let len = self.varint(false)??;
        if len > self.max_size {
            return None;
        }
        let mut body = Vec::new();
        let got = (&mut self.reader).take(len).read_to_end(&mut body).ok()? as u64;
        self.offset += got;
        if got != len {
            return None;
        }
        if number != 1 {
            // errors, warnings, hostnames: strings, which must be UTF-8.
            return std::str::from_utf8(&body)
                .is_ok()
                .then_some(Some(Item::Other));
        }
        Some(Some(Item::Plane {
            bytes: Bytes::from(body),
            from,
            to: self.offset,
        }))
    }
}

impl<R: Read + std::io::Seek> Splitter<R> {
    /// Splits `plane`, the plane whose body (`body_len` bytes) the last item ended with, by line
    /// ([`crate::indexed::IndexedPlane::split_lines`]), reading its lines again from the input,
    /// then puts the input back where it was (the splitter's buffer still reads on from there).
    /// `None` when the input fails.
    pub(crate) fn split_lines(
        &mut self,
        plane: &mut crate::indexed::IndexedPlane,
        body_len: u64,
    ) -> Option<()> {
        let buffered = self.reader.buffer().len() as u64;
        let inner = self.reader.get_mut();
        let position = inner.stream_position().ok()?;
        let body_at = position.checked_sub(buffered)?.checked_sub(body_len)?;
        plane.set_origin(body_at);
        let split = plane.split_lines(inner);
        plane.clear_origin();
        inner.seek(std::io::SeekFrom::Start(position)).ok()?;
        split.ok()
    }
}

/// Decodes each line of a plane's bytes lightly, in order, handing it to `f`; `None` on anything
/// unexpected (the full decode then says what).
pub(crate) fn for_each_line(bytes: &Bytes, mut f: impl FnMut(LineLite)) -> Option<()> {
    fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = *buf.get(*pos)?;
            *pos += 1;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    let buf = bytes.as_ref();
    let mut pos = 0usize;
    while pos < buf.len() {
        let tag = varint(buf, &mut pos)?;
        match tag & 7 {
            0 => {
                varint(buf, &mut pos)?;
            }
            1 => pos = pos.checked_add(8)?,
            5 => pos = pos.checked_add(4)?,
            2 => {
                let len = usize::try_from(varint(buf, &mut pos)?).ok()?;
                let end = pos.checked_add(len)?;
                if end > buf.len() {
                    return None;
                }
                if tag >> 3 == 3 {
                    f(LineLite::decode(bytes.slice(pos..end)).ok()?);
                }
                pos = end;
            }
            _ => return None,
        }
    }
    (pos == buf.len()).then_some(())
}

/// Decodes a plane's bytes lightly (without its lines: see [`for_each_line`]).
pub(crate) fn decode(bytes: Bytes) -> Option<PlaneLite> {
    PlaneLite::decode(bytes).ok()
}

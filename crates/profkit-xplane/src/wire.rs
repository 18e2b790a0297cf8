//! A schema-aware walk over the protobuf wire format of an XSpace.
//!
//! prost decodes fast but reports only a message path. When it rejects an input, this walk runs
//! over the same bytes to say exactly where the encoding breaks: the byte offset and the path down
//! to the repeated element (`XSpace.planes[0].lines[2].events[5].stats[1]`). It allocates nothing
//! sized by the input and recurses only as deep as the schema (plus a bounded depth for groups in
//! unknown fields). Where prost accepts what the walk refuses (map tags of any wire type, groups
//! nested past [`MAX_GROUP_DEPTH`]), a shallow scan after a successful decode sends the input to
//! the walk as well, so that every reader refuses the same inputs with the same error.

use crate::error::Error;

/// Groups in unknown fields may nest; deeper than this is refused rather than followed.
pub(crate) const MAX_GROUP_DEPTH: u32 = 64;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Msg {
    Space,
    Plane,
    Line,
    Event,
    Stat,
    EventMetadata,
    StatMetadata,
    EventMetadataEntry,
    StatMetadataEntry,
}

#[derive(Clone, Copy)]
enum Kind {
    Varint,
    Fixed64,
    Str,
    Bytes,
    /// A repeated integer: packed (length-delimited) or one varint per element.
    RepeatedVarint,
    Msg(Msg),
}

impl Msg {
    /// The field's name, kind and whether it repeats, or `None` for a field the schema lacks.
    fn field(self, number: u64) -> Option<(&'static str, Kind, bool)> {
        Some(match (self, number) {
            (Msg::Space, 1) => ("planes", Kind::Msg(Msg::Plane), true),
            (Msg::Space, 2) => ("errors", Kind::Str, true),
            (Msg::Space, 3) => ("warnings", Kind::Str, true),
            (Msg::Space, 4) => ("hostnames", Kind::Str, true),
            (Msg::Plane, 1) => ("id", Kind::Varint, false),
            (Msg::Plane, 2) => ("name", Kind::Str, false),
            (Msg::Plane, 3) => ("lines", Kind::Msg(Msg::Line), true),
            (Msg::Plane, 4) => ("event_metadata", Kind::Msg(Msg::EventMetadataEntry), true),
            (Msg::Plane, 5) => ("stat_metadata", Kind::Msg(Msg::StatMetadataEntry), true),
            (Msg::Plane, 6) => ("stats", Kind::Msg(Msg::Stat), true),
            (Msg::EventMetadataEntry, 1) | (Msg::StatMetadataEntry, 1) => {
                ("key", Kind::Varint, false)
            }
            (Msg::EventMetadataEntry, 2) => ("value", Kind::Msg(Msg::EventMetadata), false),
            (Msg::StatMetadataEntry, 2) => ("value", Kind::Msg(Msg::StatMetadata), false),
            (Msg::Line, 1) => ("id", Kind::Varint, false),
            (Msg::Line, 10) => ("display_id", Kind::Varint, false),
            (Msg::Line, 2) => ("name", Kind::Str, false),
            (Msg::Line, 11) => ("display_name", Kind::Str, false),
            (Msg::Line, 3) => ("timestamp_ns", Kind::Varint, false),
            (Msg::Line, 9) => ("duration_ps", Kind::Varint, false),
            (Msg::Line, 4) => ("events", Kind::Msg(Msg::Event), true),
            (Msg::Event, 1) => ("metadata_id", Kind::Varint, false),
            (Msg::Event, 2) => ("offset_ps", Kind::Varint, false),
            (Msg::Event, 5) => ("num_occurrences", Kind::Varint, false),
            (Msg::Event, 3) => ("duration_ps", Kind::Varint, false),
            (Msg::Event, 4) => ("stats", Kind::Msg(Msg::Stat), true),
            (Msg::Stat, 1) => ("metadata_id", Kind::Varint, false),
            (Msg::Stat, 2) => ("double_value", Kind::Fixed64, false),
            (Msg::Stat, 3) => ("uint64_value", Kind::Varint, false),
            (Msg::Stat, 4) => ("int64_value", Kind::Varint, false),
            (Msg::Stat, 5) => ("str_value", Kind::Str, false),
            (Msg::Stat, 6) => ("bytes_value", Kind::Bytes, false),
            (Msg::Stat, 7) => ("ref_value", Kind::Varint, false),
            (Msg::EventMetadata, 1) => ("id", Kind::Varint, false),
            (Msg::EventMetadata, 2) => ("name", Kind::Str, false),
            (Msg::EventMetadata, 4) => ("display_name", Kind::Str, false),
            (Msg::EventMetadata, 3) => ("metadata", Kind::Bytes, false),
            (Msg::EventMetadata, 5) => ("stats", Kind::Msg(Msg::Stat), true),
            (Msg::EventMetadata, 6) => ("child_id", Kind::RepeatedVarint, true),
            (Msg::StatMetadata, 1) => ("id", Kind::Varint, false),
            (Msg::StatMetadata, 2) => ("name", Kind::Str, false),
            (Msg::StatMetadata, 3) => ("description", Kind::Str, false),
            _ => return None,
        })
    }
}

/// Protobuf wire types.
pub(crate) const VARINT: u8 = 0;
pub(crate) const FIXED64: u8 = 1;
pub(crate) const LEN: u8 = 2;
pub(crate) const START_GROUP: u8 = 3;
pub(crate) const END_GROUP: u8 = 4;
pub(crate) const FIXED32: u8 = 5;

pub(crate) fn wire_type_name(wire_type: u8) -> &'static str {
    match wire_type {
        VARINT => "varint",
        FIXED64 => "64-bit",
        LEN => "length-delimited",
        START_GROUP => "start-group",
        END_GROUP => "end-group",
        FIXED32 => "32-bit",
        _ => "invalid",
    }
}

/// Where the walk found the first problem.
#[derive(Debug)]
pub(crate) struct Fault {
    pub offset: u64,
    pub path: String,
    pub reason: String,
    /// The input ended inside a field that declares this many more bytes.
    pub truncated_by: Option<u64>,
}

impl Fault {
    pub(crate) fn into_error(self) -> Error {
        match self.truncated_by {
            Some(needed) => Error::Truncated {
                offset: self.offset,
                path: self.path,
                needed,
            },
            None => Error::Malformed {
                offset: self.offset,
                path: self.path,
                reason: self.reason,
            },
        }
    }
}

/// Reads a varint at `pos`; on failure says why and whether the input simply ended.
pub(crate) fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, (&'static str, bool)> {
    let mut value: u64 = 0;
    for i in 0..10u32 {
        let Some(&byte) = buf.get(*pos) else {
            return Err(("input ends inside a varint", true));
        };
        *pos += 1;
        if i == 9 && byte > 1 {
            return Err(("varint longer than 64 bits", false));
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(("varint longer than 10 bytes", false))
}

struct Walker<'a> {
    buf: &'a [u8],
    base: u64,
}

impl Walker<'_> {
    fn fault(&self, pos: usize, path: &str, reason: impl Into<String>) -> Fault {
        Fault {
            offset: self.base + pos as u64,
            path: path.to_owned(),
            reason: reason.into(),
            truncated_by: None,
        }
    }

    fn truncated(&self, pos: usize, path: &str, needed: u64) -> Fault {
        Fault {
            offset: self.base + pos as u64,
            path: path.to_owned(),
            reason: "input ends inside this field".into(),
            truncated_by: Some(needed),
        }
    }

    /// Reads a varint at `pos` that must end by `end`, the end of the enclosing message. `open`
    /// says whether that message ends where the input ends rather than at a declared length, so
    /// that running out of bytes is a truncation; inside a message whose declared length is
    /// present in full, running out is corruption.
    fn varint(&self, pos: &mut usize, end: usize, open: bool, path: &str) -> Result<u64, Fault> {
        let start = *pos;
        let within = self.buf.get(..end).unwrap_or(self.buf);
        read_varint(within, pos).map_err(|(reason, ended)| match (ended, open) {
            (false, _) => self.fault(start, path, reason),
            (true, true) => self.truncated(end, path, 1),
            (true, false) => self.fault(
                start,
                path,
                "varint runs past the end of the enclosing message",
            ),
        })
    }

    /// Walks the message occupying `start..end`; `open` as for [`Walker::varint`].
    fn message(
        &self,
        msg: Msg,
        start: usize,
        end: usize,
        open: bool,
        path: &str,
    ) -> Result<(), Fault> {
        let mut pos = start;
        let mut counts: [u32; 12] = [0; 12];
        while pos < end {
            let tag_pos = pos;
            let tag = self.varint(&mut pos, end, open, path)?;
            let number = tag >> 3;
            let wire_type = (tag & 7) as u8;
            if number == 0 || number > u64::from(u32::MAX >> 3) {
                return Err(self.fault(tag_pos, path, format!("invalid field number {number}")));
            }
            let Some((name, kind, repeated)) = msg.field(number) else {
                self.skip(wire_type, number, &mut pos, end, open, path, tag_pos, 0)?;
                continue;
            };
            let field_path = if repeated {
                let slot = counts.get_mut(number as usize).map(|c| {
                    let index = *c;
                    *c = c.saturating_add(1);
                    index
                });
                format!("{path}.{name}[{}]", slot.unwrap_or(0))
            } else {
                format!("{path}.{name}")
            };
            let expected = match kind {
                Kind::Varint => VARINT,
                Kind::Fixed64 => FIXED64,
                Kind::RepeatedVarint if wire_type == VARINT => VARINT,
                Kind::Str | Kind::Bytes | Kind::RepeatedVarint | Kind::Msg(_) => LEN,
            };
            if wire_type != expected {
                return Err(self.fault(
                    tag_pos,
                    &field_path,
                    format!(
                        "wire type {} ({}), expected {} ({})",
                        wire_type,
                        wire_type_name(wire_type),
                        expected,
                        wire_type_name(expected)
                    ),
                ));
            }
            match wire_type {
                VARINT => {
                    self.varint(&mut pos, end, open, &field_path)?;
                }
                FIXED64 => {
                    if end.saturating_sub(pos) < 8 {
                        return Err(self.short(pos, end, open, &field_path, 8));
                    }
                    pos += 8;
                }
                _ => {
                    let len = self.varint(&mut pos, end, open, &field_path)?;
                    let available = end.saturating_sub(pos) as u64;
                    if len > available {
                        return Err(self.short(pos, end, open, &field_path, len));
                    }
                    // `len <= available`, so this fits in usize and stays within `end`.
                    let body_end = pos + len as usize;
                    match kind {
                        Kind::Str => {
                            let body = self.buf.get(pos..body_end).unwrap_or_default();
                            if let Err(e) = std::str::from_utf8(body) {
                                return Err(self.fault(
                                    pos + e.valid_up_to(),
                                    &field_path,
                                    "string is not valid UTF-8",
                                ));
                            }
                        }
                        Kind::RepeatedVarint => {
                            let mut p = pos;
                            while p < body_end {
                                self.varint(&mut p, body_end, false, &field_path)?;
                            }
                        }
                        Kind::Msg(inner) => {
                            self.message(inner, pos, body_end, false, &field_path)?
                        }
                        Kind::Bytes | Kind::Varint | Kind::Fixed64 => {}
                    }
                    pos = body_end;
                }
            }
        }
        Ok(())
    }

    /// A field of `needed` bytes starts at `pos` but its message ends at `end`: a truncation if
    /// the message is open-ended (ends with the input), corruption otherwise.
    fn short(&self, pos: usize, end: usize, open: bool, path: &str, needed: u64) -> Fault {
        if open {
            self.truncated(
                end,
                path,
                needed.saturating_sub(end.saturating_sub(pos) as u64),
            )
        } else {
            self.fault(
                pos,
                path,
                format!("field of {needed} bytes runs past the end of the enclosing message"),
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn skip(
        &self,
        wire_type: u8,
        number: u64,
        pos: &mut usize,
        end: usize,
        open: bool,
        path: &str,
        tag_pos: usize,
        depth: u32,
    ) -> Result<(), Fault> {
        let field_path = format!("{path}.<unknown field {number}>");
        match wire_type {
            VARINT => {
                self.varint(pos, end, open, &field_path)?;
            }
            FIXED64 | FIXED32 => {
                let n = if wire_type == FIXED64 { 8 } else { 4 };
                if end.saturating_sub(*pos) < n {
                    return Err(self.short(*pos, end, open, &field_path, n as u64));
                }
                *pos += n;
            }
            LEN => {
                let len = self.varint(pos, end, open, &field_path)?;
                if len > end.saturating_sub(*pos) as u64 {
                    return Err(self.short(*pos, end, open, &field_path, len));
                }
                *pos += len as usize;
            }
            START_GROUP => {
                if depth >= MAX_GROUP_DEPTH {
                    return Err(self.fault(tag_pos, &field_path, "groups nested too deeply"));
                }
                loop {
                    if *pos >= end {
                        return Err(self.short(*pos, end, open, &field_path, 1));
                    }
                    let inner_pos = *pos;
                    let tag = self.varint(pos, end, open, &field_path)?;
                    let inner_type = (tag & 7) as u8;
                    if inner_type == END_GROUP {
                        if tag >> 3 != number {
                            return Err(self.fault(
                                inner_pos,
                                &field_path,
                                "end-group tag does not match its start",
                            ));
                        }
                        break;
                    }
                    if tag >> 3 == 0 || tag >> 3 > u64::from(u32::MAX >> 3) {
                        return Err(self.fault(
                            inner_pos,
                            &field_path,
                            format!("invalid field number {}", tag >> 3),
                        ));
                    }
                    self.skip(
                        inner_type,
                        tag >> 3,
                        pos,
                        end,
                        open,
                        &field_path,
                        inner_pos,
                        depth + 1,
                    )?;
                }
            }
            END_GROUP => {
                return Err(self.fault(tag_pos, &field_path, "end-group tag without a start"));
            }
            _ => {
                return Err(self.fault(
                    tag_pos,
                    &field_path,
                    format!("invalid wire type {wire_type}"),
                ));
            }
        }
        Ok(())
    }
}

/// Finds the first encoding problem in `buf`, an encoded `msg` that starts at byte `base` of the
/// whole input and sits at `path`. `None` means the walk found nothing wrong. `open_end` says
/// whether `buf` ends where the input ends (a whole file: running out of bytes is a truncation)
/// rather than at a declared length that was read in full (a streamed plane: it is corruption).
pub(crate) fn locate(msg: Msg, buf: &[u8], base: u64, open_end: bool, path: &str) -> Option<Fault> {
    let walker = Walker { buf, base };
    walker.message(msg, 0, buf.len(), open_end, path).err()
}

/// Turns a prost failure into an error with a byte offset and path, found by walking the bytes;
/// `open_end` as for [`locate`].
pub(crate) fn explain(
    msg: Msg,
    buf: &[u8],
    base: u64,
    open_end: bool,
    path: &str,
    err: &prost::DecodeError,
) -> Error {
    match locate(msg, buf, base, open_end, path) {
        Some(fault) => fault.into_error(),
        None => Error::Malformed {
            offset: base,
            path: path.to_owned(),
            reason: format!("rejected by the protobuf decoder: {err}"),
        },
    }
}

/// Decodes `bytes`, an encoded `msg` (`M`), with prost, and turns any failure into a located
/// error; `base`, `open_end` and `path` as for [`locate`].
///
/// Where prost is more lenient than the walk, a shallow scan of the outer levels catches it and
/// the walk says where:
/// - prost reads a map field without looking at its wire type: whatever the tag says, it takes the
///   next bytes as a length and an entry, so a damaged `event_metadata` or `stat_metadata` tag is
///   misread (`20 00` becomes an entry `0 => {}`) instead of refused;
/// - prost follows groups in unknown fields as deep as its recursion limit; the walk and the
///   streaming reader stop at [`MAX_GROUP_DEPTH`], so both readers refuse the same inputs.
pub(crate) fn decode<M: prost::Message + Default>(
    msg: Msg,
    bytes: bytes::Bytes,
    base: u64,
    open_end: bool,
    path: &str,
) -> Result<M, Error> {
    let decoded =
        M::decode(bytes.clone()).map_err(|e| explain(msg, &bytes, base, open_end, path, &e))?;
    if scan(msg, &bytes) != Scan::Suspect {
        return Ok(decoded);
    }
    Err(match locate(msg, &bytes, base, open_end, path) {
        Some(fault) => fault.into_error(),
        None => Error::Malformed {
            offset: base,
            path: path.to_owned(),
            reason: "prost accepted an encoding the schema walk cannot follow".into(),
        },
    })
}

/// What the shallow scan of [`decode`] found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scan {
    /// Nothing prost could have misread.
    Fine,
    /// A map tag that is not length-delimited, or groups nested too deeply.
    Suspect,
    /// Bytes the scan cannot follow (prost refuses those by itself).
    Unreadable,
}

/// Scans the tags of `buf`, an encoded XSpace or XPlane, and of the planes in it (one level).
fn scan(msg: Msg, buf: &[u8]) -> Scan {
    let mut pos = 0;
    while pos < buf.len() {
        let Ok(tag) = read_varint(buf, &mut pos) else {
            return Scan::Unreadable;
        };
        let (number, wire_type) = (tag >> 3, (tag & 7) as u8);
        match (msg, number, wire_type) {
            (Msg::Plane, 4 | 5, LEN) => {}
            (Msg::Plane, 4 | 5, _) => return Scan::Suspect,
            (Msg::Space, 1, LEN) => {
                let Some(body) = len_delimited(buf, &mut pos) else {
                    return Scan::Unreadable;
                };
                match scan(Msg::Plane, body) {
                    Scan::Fine => continue,
                    other => return other,
                }
            }
            _ => {}
        }
        match skip_value(buf, &mut pos, wire_type, 0) {
            Scan::Fine => {}
            other => return other,
        }
    }
    Scan::Fine
}

/// The body of the length-delimited field whose length starts at `pos`; moves past it.
fn len_delimited<'b>(buf: &'b [u8], pos: &mut usize) -> Option<&'b [u8]> {
    let len = usize::try_from(read_varint(buf, pos).ok()?).ok()?;
    let end = pos.checked_add(len)?;
    let body = buf.get(*pos..end)?;
    *pos = end;
    Some(body)
}

/// Skips the value of a field of `wire_type` at `pos`, inside `depth` groups.
fn skip_value(buf: &[u8], pos: &mut usize, wire_type: u8, depth: u32) -> Scan {
    match wire_type {
        VARINT if read_varint(buf, pos).is_ok() => Scan::Fine,
        FIXED64 | FIXED32 => {
            let n = if wire_type == FIXED64 { 8 } else { 4 };
            match pos.checked_add(n) {
                Some(end) if end <= buf.len() => {
                    *pos = end;
                    Scan::Fine
                }
                _ => Scan::Unreadable,
            }
        }
        LEN if len_delimited(buf, pos).is_some() => Scan::Fine,
        START_GROUP if depth >= MAX_GROUP_DEPTH => Scan::Suspect,
        START_GROUP => loop {
            let Ok(tag) = read_varint(buf, pos) else {
                return Scan::Unreadable;
            };
            if (tag & 7) as u8 == END_GROUP {
                return Scan::Fine;
            }
            match skip_value(buf, pos, (tag & 7) as u8, depth + 1) {
                Scan::Fine => {}
                other => return other,
            }
        },
        _ => Scan::Unreadable,
    }
}

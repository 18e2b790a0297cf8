//! A schema-aware walk over the protobuf wire format of the trace messages.
//!
//! prost decodes fast but says only which message failed. When it refuses a frame, this walk runs
//! over the same bytes to find the byte offset and the path (`Record.column[2].shape`) where the
//! encoding breaks. It allocates nothing sized by the input and recurses only as deep as the schema
//! (plus a bounded depth for groups inside unknown fields).

use bytes::Bytes;

use crate::error::Error;

/// Groups in unknown fields may nest; deeper than this is refused, as prost does.
const MAX_GROUP_DEPTH: u32 = 64;

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;
const FIXED32: u8 = 5;

/// The messages of the schema.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Msg {
    Header,
    Meta,
    Record,
    Column,
}

impl Msg {
    fn name(self) -> &'static str {
        match self {
            Msg::Header => "Header",
            Msg::Meta => "Meta",
            Msg::Record => "Record",
            Msg::Column => "Column",
        }
    }

    /// The field's name and kind, or `None` for a field the schema lacks.
    fn field(self, number: u64) -> Option<(&'static str, Kind)> {
        Some(match (self, number) {
            (Msg::Header, 1) => ("key", Kind::Str),
            (Msg::Meta, 1) => ("lstep_begin", Kind::Varint),
            (Msg::Meta, 2) => ("lstep_end", Kind::Varint),
            (Msg::Meta, 3) => ("gstep_begin", Kind::Varint),
            (Msg::Meta, 4) => ("gstep_end", Kind::Varint),
            (Msg::Meta, 5) => ("timestamp_begin", Kind::Varint),
            (Msg::Meta, 6) => ("timestamp_end", Kind::Varint),
            (Msg::Record, 1) => ("gstep", Kind::Varint),
            (Msg::Record, 2) => ("lstep", Kind::Varint),
            (Msg::Record, 3) => ("column", Kind::Column),
            (Msg::Record, 4) => ("timestamp", Kind::Varint),
            (Msg::Column, 1) => ("dtype", Kind::Varint),
            (Msg::Column, 2) => ("shape", Kind::RepeatedVarint),
            (Msg::Column, 3) => ("data", Kind::Bytes),
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Varint,
    Str,
    Bytes,
    /// A repeated integer: packed (length-delimited) or one varint per element.
    RepeatedVarint,
    Column,
}

fn wire_type_name(wire_type: u8) -> &'static str {
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

struct Fault {
    pos: usize,
    path: String,
    reason: String,
}

fn fault(pos: usize, path: &str, reason: impl Into<String>) -> Fault {
    Fault {
        pos,
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn varint(buf: &[u8], pos: &mut usize, end: usize, path: &str) -> Result<u64, Fault> {
    let start = *pos;
    let mut value: u64 = 0;
    for i in 0..10u32 {
        let byte = match buf.get(*pos) {
            Some(&b) if *pos < end => b,
            _ => return Err(fault(start, path, "the message ends inside a varint")),
        };
        *pos += 1;
        if i == 9 && byte > 1 {
            return Err(fault(start, path, "varint longer than 64 bits"));
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(fault(start, path, "varint longer than 10 bytes"))
}

/// Reads a length and checks that the bytes it declares fit before `end`.
fn length(buf: &[u8], pos: &mut usize, end: usize, path: &str) -> Result<usize, Fault> {
    let at = *pos;
    let len = varint(buf, pos, end, path)?;
    let room = (end - *pos) as u64;
    if len > room {
        return Err(fault(
            at,
            path,
            format!("length {len} runs past the end of the enclosing message ({room} bytes left)"),
        ));
    }
    Ok(len as usize)
}

/// Walks the message occupying `start..end`; `path` names it.
fn message(buf: &[u8], msg: Msg, start: usize, end: usize, path: &str) -> Result<(), Fault> {
    let mut pos = start;
    let mut columns = 0usize;
    while pos < end {
        let tag_pos = pos;
        let tag = varint(buf, &mut pos, end, path)?;
        let number = tag >> 3;
        let wire_type = (tag & 7) as u8;
        if number == 0 {
            return Err(fault(tag_pos, path, "invalid field number 0"));
        }
        let Some((name, kind)) = msg.field(number) else {
            skip(
                buf,
                &mut pos,
                end,
                wire_type,
                number,
                0,
                &format!("{path}.<unknown field {number}>"),
                tag_pos,
            )?;
            continue;
        };
        let field_path = if kind == Kind::Column {
            columns += 1;
            format!("{path}.{name}[{}]", columns - 1)
        } else {
            format!("{path}.{name}")
        };
        let expected = match kind {
            Kind::Varint => VARINT,
            _ => LEN,
        };
        let packable = kind == Kind::RepeatedVarint && wire_type == VARINT;
        if wire_type != expected && !packable {
            return Err(fault(
                tag_pos,
                &field_path,
                format!(
                    "wire type {wire_type} ({}), expected {expected} ({})",
                    wire_type_name(wire_type),
                    wire_type_name(expected)
                ),
            ));
        }
        if wire_type == VARINT {
            varint(buf, &mut pos, end, &field_path)?;
            continue;
        }
        let len = length(buf, &mut pos, end, &field_path)?;
        let body = pos;
        pos += len;
        match kind {
            Kind::Str => {
                let bytes = buf.get(body..pos).unwrap_or_default();
                if let Err(e) = std::str::from_utf8(bytes) {
                    return Err(fault(
                        body + e.valid_up_to(),
                        &field_path,
                        "string is not valid UTF-8",
                    ));
                }
            }
            Kind::RepeatedVarint => {
                let mut p = body;
                while p < pos {
                    varint(buf, &mut p, pos, &field_path)?;
                }
            }
            Kind::Column => message(buf, Msg::Column, body, pos, &field_path)?,
            Kind::Bytes | Kind::Varint => {}
        }
    }
    Ok(())
}

/// Skips the value of an unknown field.
#[allow(clippy::too_many_arguments)]
fn skip(
    buf: &[u8],
    pos: &mut usize,
    end: usize,
    wire_type: u8,
    number: u64,
    depth: u32,
    path: &str,
    tag_pos: usize,
) -> Result<(), Fault> {
    match wire_type {
        VARINT => {
            varint(buf, pos, end, path)?;
        }
        FIXED64 | FIXED32 => {
            let n = if wire_type == FIXED64 { 8 } else { 4 };
            if end - *pos < n {
                return Err(fault(
                    *pos,
                    path,
                    "the message ends inside a fixed-width field",
                ));
            }
            *pos += n;
        }
        LEN => {
            let len = length(buf, pos, end, path)?;
            *pos += len;
        }
        START_GROUP => {
            if depth >= MAX_GROUP_DEPTH {
                return Err(fault(tag_pos, path, "groups nested too deeply"));
            }
            loop {
                let inner_pos = *pos;
                if inner_pos >= end {
                    return Err(fault(tag_pos, path, "group without an end"));
                }
                let tag = varint(buf, pos, end, path)?;
                let (inner_number, inner_type) = (tag >> 3, (tag & 7) as u8);
                if inner_type == END_GROUP {
                    if inner_number != number {
                        return Err(fault(
                            inner_pos,
                            path,
                            "end-group tag does not match its start",
                        ));
                    }
                    break;
                }
                if inner_number == 0 {
                    return Err(fault(inner_pos, path, "invalid field number 0"));
                }
                skip(
                    buf,
                    pos,
                    end,
                    inner_type,
                    inner_number,
                    depth + 1,
                    path,
                    inner_pos,
                )?;
            }
        }
        END_GROUP => return Err(fault(tag_pos, path, "end-group tag without a start")),
        _ => {
            return Err(fault(
                tag_pos,
                path,
                format!("invalid wire type {wire_type}"),
            ));
        }
    }
    Ok(())
}

/// Turns prost's refusal of `bytes` (a `msg` starting at file offset `base`) into an error naming
/// the offset and field path. `frame` is the frame index, when the bytes came from a data file.
pub(crate) fn explain(
    msg: Msg,
    bytes: &[u8],
    base: u64,
    frame: Option<u64>,
    err: &prost::DecodeError,
) -> Error {
    match message(bytes, msg, 0, bytes.len(), msg.name()) {
        Err(f) => Error::Malformed {
            offset: base + f.pos as u64,
            frame,
            path: f.path,
            reason: f.reason,
        },
        // The walk found nothing prost objects to: report prost's own words at the message start.
        Ok(()) => Error::Malformed {
            offset: base,
            frame,
            path: msg.name().to_owned(),
            reason: err.to_string(),
        },
    }
}

/// Decodes `bytes` as `M`, explaining a failure with [`explain`].
pub(crate) fn decode<M: prost::Message + Default>(
    msg: Msg,
    bytes: Bytes,
    base: u64,
    frame: Option<u64>,
) -> Result<M, Error> {
    M::decode(bytes.clone()).map_err(|e| explain(msg, &bytes, base, frame, &e))
}

/// Where the data of the first column holding at least `min_len` bytes starts in a Record whose
/// first bytes are `prefix`, if the tags and lengths leading to it are within `prefix`. The frame
/// reader uses it to place a record frame in memory so that this column's elements are aligned,
/// which lets typed access borrow them instead of copying.
pub(crate) fn first_large_data_offset(prefix: &[u8], min_len: u64) -> Option<usize> {
    let end = prefix.len();
    let mut pos = 0usize;
    while pos < end {
        let tag = varint(prefix, &mut pos, end, "").ok()?;
        match (tag >> 3, (tag & 7) as u8) {
            (3, LEN) => {
                let len = varint(prefix, &mut pos, end, "").ok()?;
                let column_end = pos.saturating_add(usize::try_from(len).ok()?);
                // Walk the column's own fields.
                while pos < column_end.min(end) {
                    let tag = varint(prefix, &mut pos, end, "").ok()?;
                    match (tag >> 3, (tag & 7) as u8) {
                        (3, LEN) => {
                            let data_len = varint(prefix, &mut pos, end, "").ok()?;
                            if data_len >= min_len {
                                return Some(pos);
                            }
                            pos = pos.saturating_add(usize::try_from(data_len).ok()?);
                        }
                        (_, VARINT) => {
                            varint(prefix, &mut pos, end, "").ok()?;
                        }
                        (_, LEN) => {
                            let n = varint(prefix, &mut pos, end, "").ok()?;
                            pos = pos.saturating_add(usize::try_from(n).ok()?);
                        }
                        _ => return None,
                    }
                }
                pos = column_end;
            }
            (_, VARINT) => {
                varint(prefix, &mut pos, end, "").ok()?;
            }
            (_, LEN) => {
                let n = varint(prefix, &mut pos, end, "").ok()?;
                pos = pos.saturating_add(usize::try_from(n).ok()?);
            }
            _ => return None,
        }
    }
    None
}

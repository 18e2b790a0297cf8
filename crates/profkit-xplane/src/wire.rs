//! The XSpace schema, for the protobuf wire walk of `profkit-wire`, and decoding with located
//! errors.
//!
//! prost decodes fast but reports only a message path. When it rejects an input, the walk of
//! `profkit-wire` goes over
//! the same bytes with the schema below to say exactly where the encoding breaks: the byte offset
//! and the path down to the repeated element (`XSpace.planes[0].lines[2].events[5].stats[1]`).
//! Where prost accepts what the walk refuses (map tags of any wire type, groups nested past
//! [`MAX_GROUP_DEPTH`]), a shallow scan after a successful decode sends the input to the walk as
//! well, so that every reader refuses the same inputs with the same error.

use profkit_wire::{
    END_GROUP, FIXED32, FIXED64, Field, Kind, LEN, START_GROUP, Schema, VARINT, read_varint,
    refusal, split_tag,
};

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

impl Schema for Msg {
    const MAX_GROUP_DEPTH: u32 = MAX_GROUP_DEPTH;

    fn field(self, number: u64) -> Option<Field<Msg>> {
        use Kind::{Bytes, Fixed64, Str, Varint, Varints};
        let m = Kind::Message;
        let row = match (self, number) {
            (Msg::Space, 1) => ("planes", m(Msg::Plane), true),
            (Msg::Space, 2) => ("errors", Str, true),
            (Msg::Space, 3) => ("warnings", Str, true),
            (Msg::Space, 4) => ("hostnames", Str, true),
            (Msg::Plane, 1) => ("id", Varint, false),
            (Msg::Plane, 2) => ("name", Str, false),
            (Msg::Plane, 3) => ("lines", m(Msg::Line), true),
            (Msg::Plane, 4) => ("event_metadata", m(Msg::EventMetadataEntry), true),
            (Msg::Plane, 5) => ("stat_metadata", m(Msg::StatMetadataEntry), true),
            (Msg::Plane, 6) => ("stats", m(Msg::Stat), true),
            (Msg::EventMetadataEntry, 1) | (Msg::StatMetadataEntry, 1) => ("key", Varint, false),
            (Msg::EventMetadataEntry, 2) => ("value", m(Msg::EventMetadata), false),
            (Msg::StatMetadataEntry, 2) => ("value", m(Msg::StatMetadata), false),
            (Msg::Line, 1) => ("id", Varint, false),
            (Msg::Line, 10) => ("display_id", Varint, false),
            (Msg::Line, 2) => ("name", Str, false),
            (Msg::Line, 11) => ("display_name", Str, false),
            (Msg::Line, 3) => ("timestamp_ns", Varint, false),
            (Msg::Line, 9) => ("duration_ps", Varint, false),
            (Msg::Line, 4) => ("events", m(Msg::Event), true),
            (Msg::Event, 1) => ("metadata_id", Varint, false),
            (Msg::Event, 2) => ("offset_ps", Varint, false),
            (Msg::Event, 5) => ("num_occurrences", Varint, false),
            (Msg::Event, 3) => ("duration_ps", Varint, false),
            (Msg::Event, 4) => ("stats", m(Msg::Stat), true),
            (Msg::Stat, 1) => ("metadata_id", Varint, false),
            (Msg::Stat, 2) => ("double_value", Fixed64, false),
            (Msg::Stat, 3) => ("uint64_value", Varint, false),
            (Msg::Stat, 4) => ("int64_value", Varint, false),
            (Msg::Stat, 5) => ("str_value", Str, false),
            (Msg::Stat, 6) => ("bytes_value", Bytes, false),
            (Msg::Stat, 7) => ("ref_value", Varint, false),
            (Msg::EventMetadata, 1) => ("id", Varint, false),
            (Msg::EventMetadata, 2) => ("name", Str, false),
            (Msg::EventMetadata, 4) => ("display_name", Str, false),
            (Msg::EventMetadata, 3) => ("metadata", Bytes, false),
            (Msg::EventMetadata, 5) => ("stats", m(Msg::Stat), true),
            (Msg::EventMetadata, 6) => ("child_id", Varints, true),
            (Msg::StatMetadata, 1) => ("id", Varint, false),
            (Msg::StatMetadata, 2) => ("name", Str, false),
            (Msg::StatMetadata, 3) => ("description", Str, false),
            _ => return None,
        };
        Some(row.into())
    }
}

profkit_wire::fault_error!(Error);

/// Decodes `bytes`, an encoded `msg` (`M`), with prost, and turns any failure into a located
/// error; `base`, `open_end` and `path` as for [`profkit_wire::locate`].
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
    let decoded: M =
        profkit_wire::decode::<_, _, _, Error>(msg, bytes.clone(), base, open_end, path)?;
    if scan(msg, &bytes) != Scan::Suspect {
        return Ok(decoded);
    }
    let reason = "prost accepted an encoding the schema walk cannot follow";
    Err(refusal(msg, &bytes, base, open_end, path, reason))
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
        let (number, wire_type) = split_tag(tag);
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
            let (_, wire_type) = split_tag(tag);
            if wire_type == END_GROUP {
                return Scan::Fine;
            }
            match skip_value(buf, pos, wire_type, depth + 1) {
                Scan::Fine => {}
                other => return other,
            }
        },
        _ => Scan::Unreadable,
    }
}

//! The trace schema, for the protobuf wire walk of `profkit-wire`, and decoding with located
//! errors.
//!
//! prost decodes fast but says only which message failed. When it refuses a frame, [`locate`]
//! walks the same bytes with the schema below to find the byte offset and the path
//! (`Record.column[2].shape`) where the encoding breaks. Messages here are always read whole (a
//! frame or a meta file), so running out of bytes is corruption rather than truncation, and
//! some faults have wordings of their own (see [`explain`]).

use bytes::Bytes;
use profkit_wire::{LEN, Problem, VARINT, locate, read_varint, split_tag};

use crate::error::Error;

profkit_wire::schema! {
    /// The messages of the schema.
    pub(crate) enum Msg {
        Header { 1 key: string }
        Meta {
            1 lstep_begin: varint, 2 lstep_end: varint, 3 gstep_begin: varint,
            4 gstep_end: varint, 5 timestamp_begin: varint, 6 timestamp_end: varint,
        }
        Record { 1 gstep: varint, 2 lstep: varint, 3 column: [Column], 4 timestamp: varint }
        // `shape` repeats, but is named without an index: one packed chunk is the norm.
        Column { 1 dtype: varint, 2 shape: varints, 3 data: bytes }
    }
    impl {
        /// Groups in unknown fields may nest; deeper than this is refused, as prost does.
        const MAX_GROUP_DEPTH: u32 = 64;
        /// Only field number 0 is refused.
        const MAX_FIELD_NUMBER: u64 = u64::MAX;
        /// Everything inside an unknown group is named as the group.
        const NEST_GROUP_PATHS: bool = false;
    }
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
    let Some(fault) = locate(msg, bytes, base, false, msg.name()) else {
        // The walk found nothing prost objects to: report prost's own words at the message start.
        return Error::Malformed {
            offset: base,
            frame,
            path: msg.name().to_owned(),
            reason: err.to_string(),
        };
    };
    // This format's own words for running past the end of a message.
    let (offset, reason) = match fault.problem {
        Problem::VarintPastEnd => (fault.offset, "the message ends inside a varint".into()),
        Problem::LengthPastEnd {
            len,
            room,
            length_at,
        } => (
            length_at,
            format!("length {len} runs past the end of the enclosing message ({room} bytes left)"),
        ),
        Problem::FixedPastEnd { .. } => (
            fault.offset,
            "the message ends inside a fixed-width field".into(),
        ),
        Problem::GroupPastEnd { group_at } => (group_at, "group without an end".into()),
        problem => (fault.offset, problem.to_string()),
    };
    Error::Malformed {
        offset,
        frame,
        path: fault.path,
        reason,
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
        let tag = read_varint(prefix, &mut pos).ok()?;
        match split_tag(tag) {
            (3, LEN) => {
                let len = read_varint(prefix, &mut pos).ok()?;
                let column_end = pos.saturating_add(usize::try_from(len).ok()?);
                // Walk the column's own fields.
                while pos < column_end.min(end) {
                    let tag = read_varint(prefix, &mut pos).ok()?;
                    match split_tag(tag) {
                        (3, LEN) => {
                            let data_len = read_varint(prefix, &mut pos).ok()?;
                            if data_len >= min_len {
                                return Some(pos);
                            }
                            pos = pos.saturating_add(usize::try_from(data_len).ok()?);
                        }
                        (_, wire_type) => skip_value(prefix, &mut pos, wire_type)?,
                    }
                }
                pos = column_end;
            }
            (_, wire_type) => skip_value(prefix, &mut pos, wire_type)?,
        }
    }
    None
}

/// Moves `pos` past the value of a field of `wire_type`, a varint or a length and its bytes;
/// `None` for another wire type, or a varint that does not end within `prefix`.
fn skip_value(prefix: &[u8], pos: &mut usize, wire_type: u8) -> Option<()> {
    match wire_type {
        VARINT => {
            read_varint(prefix, pos).ok()?;
        }
        LEN => {
            let n = read_varint(prefix, pos).ok()?;
            *pos = pos.saturating_add(usize::try_from(n).ok()?);
        }
        _ => return None,
    }
    Some(())
}

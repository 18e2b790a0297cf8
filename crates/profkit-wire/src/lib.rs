//! The protobuf wire format, as profkit's protobuf format crates walk it.
//!
//! An encoded protobuf message is a sequence of fields, each a varint tag (field number and wire
//! type) and a value: a varint, 8 or 4 fixed bytes, a varint length and that many bytes (strings,
//! bytes, nested messages, packed numbers), or a group between start and end tags. The format
//! crates (`profkit-xplane`, `profkit-xdl`, `profkit-events` for Paddle) decode with prost, which
//! is fast but says little about where an input breaks. When prost refuses one, they [`locate`]
//! the first fault by walking the same bytes with their [`Schema`], declared as data with
//! [`schema!`] (message, field number: name, [`Kind`], whether it repeats), and get a [`Fault`]:
//! the byte offset, the path down to the repeated element (`XSpace.planes[0].lines[2].name`) and
//! the [`Problem`], a truncation or a corruption. Streaming readers read fields one at a time
//! from any `Read` with a [`WireReader`]. This is an internal helper: each format crate turns a
//! [`Fault`] into its own error type, so nothing of it shows in their APIs.
//!
//! ```
//! use profkit_wire::{Field, Kind, Problem, Schema, locate};
//!
//! #[derive(Clone, Copy)]
//! struct Point;
//!
//! impl Schema for Point {
//!     const MAX_GROUP_DEPTH: u32 = 64;
//!     fn field(self, number: u64) -> Option<Field<Self>> {
//!         (number == 1).then_some(Field { name: "x", kind: Kind::Varint, repeated: false })
//!     }
//! }
//!
//! // Field 1, length-delimited where the schema says varint.
//! let fault = locate(Point, &[0x0a, 0x00], 0, true, "Point").unwrap();
//! assert_eq!((fault.offset, fault.path.as_str()), (0, "Point.x"));
//! assert_eq!(fault.problem.to_string(), "wire type 2 (length-delimited), expected 0 (varint)");
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod decode;
mod read;
mod schema;
mod walk;
mod whole;

pub use decode::{FaultError, decode, refusal};
/// What a fault that cuts a field short becomes: the located truncation every format crate wraps.
pub use profkit_error::Truncation;
pub use read::WireReader;
pub use schema::{Field, Kind, MAX_INDEXED_FIELD, Schema};
pub use walk::{Fault, Problem, locate};
pub use whole::{count_messages, read_walked};

/// Wire type of a varint.
pub const VARINT: u8 = 0;
/// Wire type of 8 fixed bytes.
pub const FIXED64: u8 = 1;
/// Wire type of a length and that many bytes.
pub const LEN: u8 = 2;
/// Wire type of the tag that opens a group.
pub const START_GROUP: u8 = 3;
/// Wire type of the tag that closes a group.
pub const END_GROUP: u8 = 4;
/// Wire type of 4 fixed bytes.
pub const FIXED32: u8 = 5;

/// The largest field number protobuf allows (2^29 - 1).
pub const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// The name of a wire type, as error messages give it.
pub fn wire_type_name(wire_type: u8) -> &'static str {
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

/// Why [`read_varint`] could not read a varint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarintError {
    /// The input ends inside the varint.
    Ended,
    /// The varint goes on past 64 bits.
    TooLong,
}

/// Reads the varint at `pos` in `buf` and moves `pos` past it.
#[inline]
pub fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
    let mut value: u64 = 0;
    for i in 0..10u32 {
        let Some(&byte) = buf.get(*pos) else {
            return Err(VarintError::Ended);
        };
        *pos += 1;
        if i == 9 && byte > 1 {
            break;
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(VarintError::TooLong)
}

/// The field number and wire type of a tag.
#[inline]
pub fn split_tag(tag: u64) -> (u64, u8) {
    (tag >> 3, (tag & 7) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        let mut pos = 0;
        assert_eq!(read_varint(&[0xac, 0x02, 0x01], &mut pos), Ok(300));
        assert_eq!(pos, 2);
        let mut max = vec![0xff; 9];
        max.push(0x01);
        let mut pos = 0;
        assert_eq!(read_varint(&max, &mut pos), Ok(u64::MAX));
        max[9] = 0x02;
        let mut pos = 0;
        assert_eq!(read_varint(&max, &mut pos), Err(VarintError::TooLong));
        let mut pos = 0;
        assert_eq!(
            read_varint(&[0x80, 0x80], &mut pos),
            Err(VarintError::Ended)
        );
        assert_eq!(pos, 2);
    }

    #[test]
    fn faults_sort_into_truncation_or_corruption() {
        #[derive(Debug, PartialEq)]
        enum E {
            Cut(Truncation),
            Bad(u64, String, String),
        }
        let cut = Fault::new(9, "M.f", Problem::Truncated { needed: 4 });
        let expected = Truncation {
            offset: 9,
            path: "M.f".into(),
            needed: 4,
        };
        assert_eq!(cut.into_error(E::Cut, E::Bad), E::Cut(expected));
        let bad = Fault::new(3, "M.g", Problem::VarintTooLong);
        let reason = Problem::VarintTooLong.to_string();
        assert_eq!(
            bad.into_error(E::Cut, E::Bad),
            E::Bad(3, "M.g".into(), reason)
        );
    }

    #[test]
    fn tags() {
        assert_eq!(split_tag(0x0a), (1, LEN));
        assert_eq!(wire_type_name(START_GROUP), "start-group");
        assert_eq!(wire_type_name(7), "invalid");
    }
}

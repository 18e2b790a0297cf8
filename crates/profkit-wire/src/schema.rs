//! A protobuf schema described as data, as much of it as the walk needs.

use crate::{FIXED32, FIXED64, LEN, MAX_FIELD_NUMBER, VARINT};

/// Repeated fields are counted (for the element index of their paths) in an array this long, so
/// their numbers must be below it; the schemas of profkit stay under 10.
pub const MAX_INDEXED_FIELD: u64 = 32;

/// The messages of a schema: for each, what its field numbers mean.
///
/// A format crate implements it for an enum of its messages, whose [`Schema::field`] is a table
/// (one `match` arm per field, a row `(name, kind, repeated)` made a [`Field`] with `into`), and
/// sets the limits of its walk in the constants.
pub trait Schema: Copy {
    /// How deep groups in unknown fields may nest; a group one level deeper is refused.
    const MAX_GROUP_DEPTH: u32;
    /// Field numbers above this are refused, as 0 always is.
    const MAX_FIELD_NUMBER: u64 = MAX_FIELD_NUMBER;
    /// Whether a field inside an unknown group has a path of its own under the group's
    /// (`Meta.<unknown field 9>.<unknown field 1>`), or shares the group's.
    const NEST_GROUP_PATHS: bool = true;

    /// The field numbered `number` in this message, or `None` for a number the schema lacks.
    fn field(self, number: u64) -> Option<Field<Self>>;
}

/// One field of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<M> {
    /// Its name in paths.
    pub name: &'static str,
    /// What its values are.
    pub kind: Kind<M>,
    /// Whether each occurrence gets an element index in paths (`lines[2]`); a packed chunk of
    /// numbers counts as one. The number must be below [`MAX_INDEXED_FIELD`].
    pub repeated: bool,
}

impl<M> From<(&'static str, Kind<M>, bool)> for Field<M> {
    /// A row of a schema's table: name, kind, whether it repeats.
    fn from((name, kind, repeated): (&'static str, Kind<M>, bool)) -> Self {
        Field {
            name,
            kind,
            repeated,
        }
    }
}

/// What the values of a field are, which says their wire type and what the walk checks in them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind<M> {
    /// An integer, bool or enum, as a varint.
    Varint,
    /// 8 fixed bytes (`double`, `fixed64`).
    Fixed64,
    /// 4 fixed bytes (`float`, `fixed32`).
    Fixed32,
    /// A string: length-delimited, and valid UTF-8.
    Str,
    /// Length-delimited bytes.
    Bytes,
    /// A repeated integer: packed (length-delimited varints) or one varint per element.
    Varints,
    /// A nested message, walked in turn.
    Message(M),
}

impl<M> Kind<M> {
    /// The wire type a field of this kind must have, given the one `found`: [`Kind::Varints`]
    /// takes either a varint or a packed chunk.
    #[inline]
    pub fn wire_type(&self, found: u8) -> u8 {
        match self {
            Kind::Varint => VARINT,
            Kind::Varints if found == VARINT => VARINT,
            Kind::Fixed64 => FIXED64,
            Kind::Fixed32 => FIXED32,
            Kind::Str | Kind::Bytes | Kind::Varints | Kind::Message(_) => LEN,
        }
    }
}

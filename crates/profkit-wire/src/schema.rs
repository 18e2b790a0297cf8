//! A protobuf schema described as data, as much of it as the walk needs.

use crate::{FIXED32, FIXED64, LEN, MAX_FIELD_NUMBER, VARINT};

/// Repeated fields are counted (for the element index of their paths) in an array this long, so
/// their numbers must be below it; the schemas of profkit stay under 10.
pub const MAX_INDEXED_FIELD: u64 = 32;

/// The messages of a schema: for each, what its field numbers mean.
///
/// A format crate declares it with [`schema!`](crate::schema!): an enum of its messages, the
/// table of their fields in the words of its `.proto` file, and the limits of its walk in the
/// constants.
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

/// Declares a schema: the enum of its messages and their fields as a table, in the words of the
/// `.proto` file, and the [`Schema`] implementation that serves the table.
///
/// Each message is its name and, in braces, its fields as `NUMBER NAME: KIND`. `KIND` is
/// `varint`, `varints` (an integer that repeats, packed or not), `fixed64`, `fixed32`, `string`,
/// `bytes`, or another message of the schema; in brackets (`[Line]`) when the field repeats and
/// each occurrence gets an index in paths. `NUMBER` may be a pattern in parentheses
/// (`(1 | 3..=14)`), and `NAME` a string (`"<scalar>"`) where a path names something that is not
/// an identifier. `impl { .. }` after the messages holds the schema's constants:
/// `MAX_GROUP_DEPTH`, and the others where the defaults do not fit.
///
/// ```
/// use profkit_wire::{Kind, Schema};
///
/// profkit_wire::schema! {
///     /// A shape of points.
///     #[allow(dead_code)]
///     pub enum Msg {
///         Shape { 1 name: string, 2 points: [Point], (3 | 4) "<reserved>": varint }
///         Point { 1 x: fixed64, 2 y: fixed64, 3 tags: [varints] }
///     }
///     impl {
///         const MAX_GROUP_DEPTH: u32 = 16;
///     }
/// }
///
/// let points = Msg::Shape.field(2).unwrap();
/// assert_eq!(points.kind, Kind::Message(Msg::Point));
/// assert_eq!((points.name, points.repeated), ("points", true));
/// assert_eq!(Msg::Shape.field(4).unwrap().name, "<reserved>");
/// assert_eq!(Msg::Point.field(3).unwrap().kind, Kind::Varints);
/// assert!(Msg::Point.field(4).is_none());
/// ```
#[macro_export]
macro_rules! schema {
    (@field $schema:ident $name:tt [$kind:tt]) => {
        $crate::Field {
            name: $crate::schema!(@name $name),
            kind: $crate::schema!(@kind $schema $kind),
            repeated: true,
        }
    };
    (@field $schema:ident $name:tt $kind:tt) => {
        $crate::Field {
            name: $crate::schema!(@name $name),
            kind: $crate::schema!(@kind $schema $kind),
            repeated: false,
        }
    };
    (@name $name:literal) => { $name };
    (@name $name:tt) => { stringify!($name) };
    (@kind $schema:ident varint) => { $crate::Kind::Varint };
    (@kind $schema:ident varints) => { $crate::Kind::Varints };
    (@kind $schema:ident fixed64) => { $crate::Kind::Fixed64 };
    (@kind $schema:ident fixed32) => { $crate::Kind::Fixed32 };
    (@kind $schema:ident string) => { $crate::Kind::Str };
    (@kind $schema:ident bytes) => { $crate::Kind::Bytes };
    (@kind $schema:ident $message:ident) => { $crate::Kind::Message($schema::$message) };
    (
        $(#[$attr:meta])*
        $vis:vis enum $schema:ident {
            $( $(#[$doc:meta])* $message:ident { $( $number:tt $name:tt : $kind:tt ),* $(,)? } )*
        }
        impl { $($consts:tt)* }
    ) => {
        $(#[$attr])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $schema {
            $( $(#[$doc])* $message, )*
        }

        impl $crate::Schema for $schema {
            $($consts)*

            // A number given as a pattern keeps its parentheses.
            #[allow(unused_parens)]
            fn field(self, number: u64) -> Option<$crate::Field<Self>> {
                let field = match (self, number) {
                    $( $(
                        ($schema::$message, $number) => $crate::schema!(@field $schema $name $kind),
                    )* )*
                    _ => return None,
                };
                Some(field)
            }
        }
    };
}

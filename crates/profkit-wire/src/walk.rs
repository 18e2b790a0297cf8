//! The walk: a message's bytes checked against its schema, down to the first fault.
//!
//! It allocates nothing sized by the input and recurses only as deep as the schema, plus a depth
//! for groups in unknown fields bounded by [`Schema::MAX_GROUP_DEPTH`].

use std::fmt;

use profkit_error::Truncation;

use crate::schema::{Kind, MAX_INDEXED_FIELD, Schema};
use crate::{
    END_GROUP, FIXED32, FIXED64, LEN, START_GROUP, VARINT, VarintError, read_varint, split_tag,
    wire_type_name,
};

/// Where the walk (or a streaming read) found the first problem, and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Byte offset in the whole input where the problem starts; for a truncation, where the
    /// input ends.
    pub offset: u64,
    /// The message and field path, for example `XSpace.planes[0].lines[2].name`.
    pub path: String,
    /// What is wrong there.
    pub problem: Problem,
}

impl Fault {
    /// A fault at `offset` in `path`.
    pub fn new(offset: u64, path: impl Into<String>, problem: Problem) -> Self {
        Fault {
            offset,
            path: path.into(),
            problem,
        }
    }

    /// Sorts the fault into the two errors every format crate reports: a truncation (the input
    /// ends inside a field; `truncated` gets the [`Truncation`]) or corruption (`malformed` gets
    /// the offset, the path and the reason in words). A crate maps both onto its own error type.
    pub fn into_error<E>(
        self,
        truncated: impl FnOnce(Truncation) -> E,
        malformed: impl FnOnce(u64, String, String) -> E,
    ) -> E {
        match self.problem {
            Problem::Truncated { needed } => truncated(Truncation {
                offset: self.offset,
                path: self.path,
                needed,
            }),
            problem => malformed(self.offset, self.path, problem.to_string()),
        }
    }
}

/// What is wrong with an encoding. Its `Display` is the reason error messages give; a crate
/// wanting other words or offsets for some problems finds what it needs in the fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The input ends inside a field, in a message that ends where the input does: a truncation,
    /// and the field needs this many more bytes.
    Truncated {
        /// How many more bytes the field needs (at least).
        needed: u64,
    },
    /// A varint goes on past 64 bits.
    VarintTooLong,
    /// A varint runs past the end of its enclosing message.
    VarintPastEnd,
    /// A length-delimited field runs past the end of its enclosing message; the fault is at its
    /// body.
    LengthPastEnd {
        /// The declared length.
        len: u64,
        /// The bytes left in the message after the length.
        room: u64,
        /// Offset of the length's varint.
        length_at: u64,
    },
    /// A fixed-width field runs past the end of its enclosing message.
    FixedPastEnd {
        /// Its width, 8 or 4.
        width: u64,
    },
    /// The enclosing message ends inside a group; the fault is where it ends.
    GroupPastEnd {
        /// Offset of the group's start tag.
        group_at: u64,
    },
    /// A tag's field number is 0 or over the schema's largest.
    InvalidFieldNumber(u64),
    /// A field of the schema has a wire type its kind does not allow.
    WrongWireType {
        /// The wire type in the tag.
        found: u8,
        /// The wire type of the field's kind.
        expected: u8,
    },
    /// A string field is not valid UTF-8; the fault is at the first invalid byte.
    InvalidUtf8,
    /// Groups in an unknown field nest deeper than the schema allows.
    GroupsTooDeep,
    /// An end-group tag closes another field than the open group.
    EndGroupMismatch,
    /// An end-group tag where no group is open.
    EndGroupWithoutStart,
    /// A tag's wire type is 6 or 7.
    InvalidWireType(u8),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Problem::Truncated { .. } => f.write_str("input ends inside this field"),
            Problem::VarintTooLong => f.write_str("varint longer than 64 bits"),
            Problem::VarintPastEnd => {
                f.write_str("varint runs past the end of the enclosing message")
            }
            Problem::LengthPastEnd { len: needed, .. }
            | Problem::FixedPastEnd { width: needed } => {
                write!(
                    f,
                    "field of {needed} bytes runs past the end of the enclosing message"
                )
            }
            Problem::GroupPastEnd { .. } => {
                f.write_str("field of 1 bytes runs past the end of the enclosing message")
            }
            Problem::InvalidFieldNumber(number) => write!(f, "invalid field number {number}"),
            Problem::WrongWireType { found, expected } => write!(
                f,
                "wire type {found} ({}), expected {expected} ({})",
                wire_type_name(found),
                wire_type_name(expected)
            ),
            Problem::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            Problem::GroupsTooDeep => f.write_str("groups nested too deeply"),
            Problem::EndGroupMismatch => f.write_str("end-group tag does not match its start"),
            Problem::EndGroupWithoutStart => f.write_str("end-group tag without a start"),
            Problem::InvalidWireType(wire_type) => write!(f, "invalid wire type {wire_type}"),
        }
    }
}

/// Finds the first encoding problem in `buf`, an encoded `msg` that starts at byte `base` of the
/// whole input and sits at `path`; `None` means the walk found nothing wrong. `open_end` says
/// whether `buf` ends where the input ends (a whole file: running out of bytes is a
/// [`Problem::Truncated`]) rather than at a declared length that was read in full (running out is
/// corruption).
pub fn locate<S: Schema>(
    msg: S,
    buf: &[u8],
    base: u64,
    open_end: bool,
    path: &str,
) -> Option<Fault> {
    Walker { buf, base }
        .message(msg, 0, buf.len(), open_end, path)
        .err()
}

struct Walker<'a> {
    buf: &'a [u8],
    base: u64,
}

impl Walker<'_> {
    fn fault(&self, pos: usize, path: &str, problem: Problem) -> Fault {
        Fault::new(self.base + pos as u64, path, problem)
    }

    /// A field needing `needed` bytes from `pos` runs past `end`, the end of its message: a
    /// truncation where that message ends with the input (`open`), else `problem` at `pos`.
    fn short(
        &self,
        pos: usize,
        end: usize,
        open: bool,
        path: &str,
        needed: u64,
        problem: Problem,
    ) -> Fault {
        if open {
            let needed = needed.saturating_sub(end.saturating_sub(pos) as u64);
            self.fault(end, path, Problem::Truncated { needed })
        } else {
            self.fault(pos, path, problem)
        }
    }

    /// Reads a varint at `pos` that must end by `end`, the end of the enclosing message; `open`
    /// as for [`Walker::short`].
    fn varint(&self, pos: &mut usize, end: usize, open: bool, path: &str) -> Result<u64, Fault> {
        let start = *pos;
        let within = self.buf.get(..end).unwrap_or(self.buf);
        read_varint(within, pos).map_err(|e| match (e, open) {
            (VarintError::TooLong, _) => self.fault(start, path, Problem::VarintTooLong),
            (VarintError::Ended, true) => self.fault(end, path, Problem::Truncated { needed: 1 }),
            (VarintError::Ended, false) => self.fault(start, path, Problem::VarintPastEnd),
        })
    }

    /// Reads a length at `pos` and checks that its bytes fit by `end`; returns where they end.
    fn length(&self, pos: &mut usize, end: usize, open: bool, path: &str) -> Result<usize, Fault> {
        let length_at = *pos;
        let len = self.varint(pos, end, open, path)?;
        let room = end.saturating_sub(*pos) as u64;
        if len > room {
            let length_at = self.base + length_at as u64;
            let problem = Problem::LengthPastEnd {
                len,
                room,
                length_at,
            };
            return Err(self.short(*pos, end, open, path, len, problem));
        }
        // `len <= room`, so this fits in usize and stays within `end`.
        Ok(*pos + len as usize)
    }

    /// Moves `pos` past a fixed-width value of `width` bytes that must end by `end`.
    fn fixed(
        &self,
        pos: &mut usize,
        end: usize,
        open: bool,
        path: &str,
        width: usize,
    ) -> Result<(), Fault> {
        if end.saturating_sub(*pos) < width {
            let problem = Problem::FixedPastEnd {
                width: width as u64,
            };
            return Err(self.short(*pos, end, open, path, width as u64, problem));
        }
        *pos += width;
        Ok(())
    }

    /// Reads a tag at `pos`; refuses a field number of 0 or over the schema's largest.
    fn tag<S: Schema>(
        &self,
        pos: &mut usize,
        end: usize,
        open: bool,
        path: &str,
    ) -> Result<(u64, u8), Fault> {
        let tag_pos = *pos;
        let (number, wire_type) = split_tag(self.varint(pos, end, open, path)?);
        if number == 0 || number > S::MAX_FIELD_NUMBER {
            return Err(self.fault(tag_pos, path, Problem::InvalidFieldNumber(number)));
        }
        Ok((number, wire_type))
    }

    /// Walks the message occupying `start..end`; `open` as for [`Walker::short`].
    fn message<S: Schema>(
        &self,
        msg: S,
        start: usize,
        end: usize,
        open: bool,
        path: &str,
    ) -> Result<(), Fault> {
        let mut pos = start;
        let mut counts = [0u32; MAX_INDEXED_FIELD as usize];
        while pos < end {
            let tag_pos = pos;
            let (number, wire_type) = self.tag::<S>(&mut pos, end, open, path)?;
            let Some(field) = msg.field(number) else {
                let field_path = format!("{path}.<unknown field {number}>");
                self.skip::<S>(
                    wire_type,
                    number,
                    &mut pos,
                    end,
                    open,
                    &field_path,
                    tag_pos,
                    0,
                )?;
                continue;
            };
            let field_path = if field.repeated {
                debug_assert!(number < MAX_INDEXED_FIELD, "repeated field {number}");
                let slot = counts.get_mut(number as usize).map(|c| {
                    let index = *c;
                    *c = c.saturating_add(1);
                    index
                });
                format!("{path}.{}[{}]", field.name, slot.unwrap_or(0))
            } else {
                format!("{path}.{}", field.name)
            };
            let expected = field.kind.wire_type(wire_type);
            if wire_type != expected {
                let problem = Problem::WrongWireType {
                    found: wire_type,
                    expected,
                };
                return Err(self.fault(tag_pos, &field_path, problem));
            }
            match wire_type {
                VARINT => {
                    self.varint(&mut pos, end, open, &field_path)?;
                }
                FIXED64 => self.fixed(&mut pos, end, open, &field_path, 8)?,
                FIXED32 => self.fixed(&mut pos, end, open, &field_path, 4)?,
                _ => {
                    let body_end = self.length(&mut pos, end, open, &field_path)?;
                    match field.kind {
                        Kind::Str => {
                            let body = self.buf.get(pos..body_end).unwrap_or_default();
                            if let Err(e) = std::str::from_utf8(body) {
                                let at = pos + e.valid_up_to();
                                return Err(self.fault(at, &field_path, Problem::InvalidUtf8));
                            }
                        }
                        Kind::Varints => {
                            let mut p = pos;
                            while p < body_end {
                                self.varint(&mut p, body_end, false, &field_path)?;
                            }
                        }
                        Kind::Message(inner) => {
                            self.message(inner, pos, body_end, false, &field_path)?
                        }
                        Kind::Bytes | Kind::Varint | Kind::Fixed64 | Kind::Fixed32 => {}
                    }
                    pos = body_end;
                }
            }
        }
        Ok(())
    }

    /// Skips the value of the unknown field `number`, at `path`, whose tag at `tag_pos` was just
    /// read; `depth` groups enclose it.
    #[allow(clippy::too_many_arguments)]
    fn skip<S: Schema>(
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
        match wire_type {
            VARINT => {
                self.varint(pos, end, open, path)?;
            }
            FIXED64 => self.fixed(pos, end, open, path, 8)?,
            FIXED32 => self.fixed(pos, end, open, path, 4)?,
            LEN => *pos = self.length(pos, end, open, path)?,
            START_GROUP => {
                if depth >= S::MAX_GROUP_DEPTH {
                    return Err(self.fault(tag_pos, path, Problem::GroupsTooDeep));
                }
                loop {
                    if *pos >= end {
                        let group_at = self.base + tag_pos as u64;
                        let problem = Problem::GroupPastEnd { group_at };
                        return Err(self.short(*pos, end, open, path, 1, problem));
                    }
                    let inner_pos = *pos;
                    let (inner, inner_type) = split_tag(self.varint(pos, end, open, path)?);
                    if inner_type == END_GROUP {
                        if inner != number {
                            return Err(self.fault(inner_pos, path, Problem::EndGroupMismatch));
                        }
                        break;
                    }
                    if inner == 0 || inner > S::MAX_FIELD_NUMBER {
                        let problem = Problem::InvalidFieldNumber(inner);
                        return Err(self.fault(inner_pos, path, problem));
                    }
                    let inner_path;
                    let inner_path = if S::NEST_GROUP_PATHS {
                        inner_path = format!("{path}.<unknown field {inner}>");
                        &inner_path
                    } else {
                        path
                    };
                    let (p, at, d) = (inner_path, inner_pos, depth + 1);
                    self.skip::<S>(inner_type, inner, pos, end, open, p, at, d)?;
                }
            }
            END_GROUP => return Err(self.fault(tag_pos, path, Problem::EndGroupWithoutStart)),
            _ => return Err(self.fault(tag_pos, path, Problem::InvalidWireType(wire_type))),
        }
        Ok(())
    }
}

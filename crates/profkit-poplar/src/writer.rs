//! Writing JSON: compact, as Poplar writes it, or pretty with arrays of numbers kept on one line.
//!
//! Keys come out sorted, which is Poplar's own order (its profile values are `std::map`s), with
//! unknown keys in their place among the known ones. Counts and indices are written as integers.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};

use crate::error::{Error, Result};

fn json_error(e: serde_json::Error) -> Error {
    match e.io_error_kind() {
        Some(_) => Error::Io(io::Error::from(e)),
        None => Error::Io(io::Error::other(e)),
    }
}

/// Writes `value` as compact JSON, as Poplar does.
pub fn to_writer<W: Write, T: Serialize + ?Sized>(writer: W, value: &T) -> Result<()> {
    serde_json::to_writer(writer, value).map_err(json_error)
}

/// Writes `value` as indented JSON, except that an array of numbers, strings or booleans stays
/// on one line (a per-tile array is one line, not 1,216).
pub fn to_writer_pretty<W: Write, T: Serialize + ?Sized>(writer: W, value: &T) -> Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(writer, Pretty::default());
    value.serialize(&mut ser).map_err(json_error)
}

/// `value` as compact JSON text.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(json_error)
}

/// `value` as pretty JSON text (see [`to_writer_pretty`]).
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    let mut out = Vec::new();
    to_writer_pretty(&mut out, value)?;
    String::from_utf8(out).map_err(|e| Error::Io(io::Error::other(e)))
}

/// Writes `value` as compact JSON to the file at `path`; errors name the file.
pub fn write_file<T: Serialize + ?Sized>(path: impl AsRef<Path>, value: &T) -> Result<()> {
    let path = path.as_ref();
    let write = || -> Result<()> {
        let mut out = io::BufWriter::new(std::fs::File::create(path)?);
        to_writer(&mut out, value)?;
        out.flush()?;
        Ok(())
    };
    write().map_err(|e| e.in_file(path))
}

/// One open array or object of the pretty formatter.
#[derive(Clone, Copy, Debug)]
struct Level {
    is_array: bool,
    /// An array whose elements went on lines of their own (it holds an array or object).
    multiline: bool,
    /// Something was written inside.
    nonempty: bool,
    /// An array element has begun but nothing of it was written: `Some(first)`.
    pending: Option<bool>,
}

/// The formatter of [`to_writer_pretty`]. An array element is only known to be a scalar or a
/// container when its first token comes, so the separator before it is written then.
#[derive(Debug, Default)]
struct Pretty {
    levels: Vec<Level>,
}

impl Pretty {
    fn newline<W: ?Sized + Write>(&self, w: &mut W, depth: usize) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Writes what goes before a token that starts a value (`container`: an array or object).
    fn before_value<W: ?Sized + Write>(&mut self, w: &mut W, container: bool) -> io::Result<()> {
        let depth = self.levels.len();
        let Some(level) = self.levels.last_mut() else {
            return Ok(());
        };
        let Some(first) = level.pending.take() else {
            return Ok(());
        };
        level.nonempty = true;
        if container || level.multiline {
            level.multiline = true;
            if !first {
                w.write_all(b",")?;
            }
            self.newline(w, depth)
        } else if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, is_array: bool) -> io::Result<()> {
        self.before_value(w, true)?;
        w.write_all(if is_array { b"[" } else { b"{" })?;
        self.levels.push(Level {
            is_array,
            multiline: !is_array,
            nonempty: false,
            pending: None,
        });
        Ok(())
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let level = self.levels.pop();
        if let Some(level) = level
            && level.nonempty
            && level.multiline
        {
            self.newline(w, self.levels.len())?;
        }
        w.write_all(if level.is_some_and(|l| l.is_array) {
            b"]"
        } else {
            b"}"
        })
    }
}

macro_rules! scalar {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(
            fn $method<W: ?Sized + Write>(&mut self, w: &mut W, value: $ty) -> io::Result<()> {
                self.before_value(w, false)?;
                CompactFormatter.$method(w, value)
            }
        )*
    };
}

impl Formatter for Pretty {
    scalar!(
        write_bool(bool),
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_i128(i128),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
        write_u128(u128),
        write_f32(f32),
        write_f64(f64),
        write_number_str(&str),
        write_byte_array(&[u8]),
    );

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before_value(w, false)?;
        w.write_all(b"null")
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before_value(w, false)?;
        w.write_all(b"\"")
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, true)
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, _w: &mut W, first: bool) -> io::Result<()> {
        if let Some(level) = self.levels.last_mut() {
            level.pending = Some(first);
        }
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, false)
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if let Some(level) = self.levels.last_mut() {
            level.nonempty = true;
        }
        self.newline(w, self.levels.len())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn pretty_keeps_scalar_arrays_on_one_line() {
        let value = json!({
            "a": [1, 2, 3],
            "b": [],
            "c": {},
            "d": [[1, 2], [3]],
            "e": [{"x": 1}, 2, "s"],
            "f": [[]],
        });
        let text = to_string_pretty(&value).unwrap();
        assert_eq!(
            text,
            "{\n  \"a\": [1, 2, 3],\n  \"b\": [],\n  \"c\": {},\n  \"d\": [\n    [1, 2],\n    [3]\n  ],\n  \
             \"e\": [\n    {\n      \"x\": 1\n    },\n    2,\n    \"s\"\n  ],\n  \"f\": [\n    []\n  ]\n}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
        assert_eq!(to_string_pretty(&json!(5)).unwrap(), "5");
        assert_eq!(to_string_pretty(&json!([])).unwrap(), "[]");
    }
}

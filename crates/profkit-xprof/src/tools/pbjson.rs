//! Protobuf's C++ JSON printer as xprof's protobuf-JSON tools print with it (`MessageToJsonString`):
//! no spaces, 64-bit integers as strings, doubles as `SimpleDtoa` writes them, strings escaped as
//! its writer escapes them; a [`Writer`] of objects, lists and fields.

use std::fmt::Write as _;

/// Protobuf JSON being written: the text so far, and whether the object being written has a
/// member yet. The plain writers write a value after its [`key`](Writer::key); the `opt_` ones
/// write a field only when it is not at its default (protobuf's printer without
/// `always_print_fields_with_no_presence`).
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) out: String,
    first: bool,
}

impl Writer {
    pub(crate) fn open(&mut self) {
        self.out.push('{');
        self.first = true;
    }

    pub(crate) fn close(&mut self) {
        self.out.push('}');
        self.first = false;
    }

    pub(crate) fn key(&mut self, name: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out.push('"');
        self.out.push_str(name);
        self.out.push_str("\":");
    }

    pub(crate) fn list<T>(&mut self, items: &[T], each: fn(&mut Writer, &T)) {
        self.out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            each(self, item);
        }
        self.out.push(']');
        self.first = false;
    }

    pub(crate) fn int32(&mut self, v: i32) {
        let _ = write!(self.out, "{v}");
    }

    pub(crate) fn int64(&mut self, v: i64) {
        let _ = write!(self.out, "\"{v}\"");
    }

    pub(crate) fn uint64(&mut self, v: u64) {
        let _ = write!(self.out, "\"{v}\"");
    }

    pub(crate) fn double(&mut self, v: f64) {
        push_double(&mut self.out, v);
    }

    pub(crate) fn string(&mut self, s: &str) {
        push_string(&mut self.out, s);
    }

    pub(crate) fn opt_int32(&mut self, name: &str, v: i32) {
        if v != 0 {
            self.key(name);
            let _ = write!(self.out, "{v}");
        }
    }

    pub(crate) fn opt_int64(&mut self, name: &str, v: i64) {
        if v != 0 {
            self.key(name);
            let _ = write!(self.out, "\"{v}\"");
        }
    }

    pub(crate) fn opt_double(&mut self, name: &str, v: f64) {
        // Protobuf tells a default double by its bits: -0 is printed.
        if v.to_bits() != 0 {
            self.key(name);
            push_double(&mut self.out, v);
        }
    }

    pub(crate) fn opt_string(&mut self, name: &str, s: &str) {
        if !s.is_empty() {
            self.key(name);
            push_string(&mut self.out, s);
        }
    }

    pub(crate) fn opt_doubles(&mut self, name: &str, v: &[f64]) {
        self.opt_messages(name, v, |w, x| w.double(*x));
    }

    pub(crate) fn opt_int32s(&mut self, name: &str, v: &[i32]) {
        self.opt_messages(name, v, |w, x| w.int32(*x));
    }

    pub(crate) fn opt_strings(&mut self, name: &str, v: &[String]) {
        self.opt_messages(name, v, |w, x| w.string(x));
    }

    /// A repeated field (of messages or scalars, each written by `each`), when not empty.
    pub(crate) fn opt_messages<T>(&mut self, name: &str, v: &[T], each: fn(&mut Writer, &T)) {
        if !v.is_empty() {
            self.key(name);
            self.list(v, each);
        }
    }
}

/// A double as protobuf's JSON printer writes it: `NaN`, `Infinity` and `-Infinity` as strings,
/// else `SimpleDtoa`: `%.15g` when that reads back as the same double, `%.17g` otherwise.
pub(crate) fn push_double(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
    } else {
        let short = format_g(v, 15);
        if short.parse::<f64>().ok() == Some(v) {
            out.push_str(&short);
        } else {
            out.push_str(&format_g(v, 17));
        }
    }
}

/// C's `%.<precision>g` of a finite double.
fn format_g(v: f64, precision: usize) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // `{:e}` rounds exactly, as glibc's printf does; its exponent decides the style.
    let sci = format!("{:.*e}", precision - 1, v);
    let Some((mantissa, exponent)) = sci.split_once('e') else {
        return sci;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i32 {
        let mantissa = trim_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    } else {
        let decimals = (precision as i32 - 1 - exponent).max(0) as usize;
        trim_zeros(&format!("{v:.decimals$}")).to_owned()
    }
}

/// A decimal without the zeros ending its fraction (and without a point left bare).
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A string as protobuf's JSON writer escapes it: `"` and `\`, the short escapes of C0 controls,
/// `\u00XX` for the other C0 controls, and `\uXXXX` for the characters it escapes so that the
/// text is safe in HTML and JavaScript (see `escaped`).
pub(crate) fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if escaped(c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The characters protobuf's writer writes as `\uXXXX` (besides `"`, `\` and the short
/// escapes): C0 and C1 controls and DEL, `<` and `>`, and the invisible or formatting characters
/// it lists (soft hyphen, Arabic and Syriac signs, Khmer inherent vowels, zero widths,
/// separators, invisible operators, shaping controls, the byte order mark, interlinear
/// annotations, tags). Characters past U+FFFF are written as their two UTF-16 halves.
fn escaped(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '<'
            | '>'
            | '\u{7f}'..='\u{9f}'
            | '\u{ad}'
            | '\u{600}'..='\u{603}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206a}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn double(v: f64) -> String {
        let mut s = String::new();
        push_double(&mut s, v);
        s
    }

    #[test]
    fn doubles_as_simple_dtoa() {
        assert_eq!(double(0.0), "0");
        assert_eq!(double(1.26171e-06), "1.26171e-06");
        assert_eq!(double(0.391988), "0.391988");
        assert_eq!(double(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(double(1e21), "1e+21");
        assert_eq!(double(123456.0), "123456");
        assert_eq!(double(f64::NAN), "\"NaN\"");
    }
}

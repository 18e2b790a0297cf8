//! JSON strings and numbers as the tools profkit reproduces write them.
//!
//! xprof's trace viewer JSON and Paddle's `timeline.py` are both written by Python's `json` module
//! (`ensure_ascii` on, floats by `repr`), and xprof turns double stats into strings with
//! `absl::StrCat`, which prints six significant digits like C's `%g`. Matching their bytes means
//! matching these three formatters exactly.

use std::fmt::Write as _;

/// Appends `text` as a JSON string the way Python's `json.dumps` writes it with `ensure_ascii`
/// (the default): `"` and `\` escaped, `\n \r \t \b \f` by name, other control characters and
/// everything outside ASCII as `\uXXXX` (lowercase hex, surrogate pairs above U+FFFF).
pub fn push_json_str(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7f => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    // Writing to a String cannot fail.
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `value` as Python's `repr(float)` (and so `json.dumps`) writes it: the shortest digits that
/// read back to the same double, in fixed notation for decimal exponents from -4 to 15
/// (`1005.0`, `0.123456`) and scientific notation otherwise (`7e-06`, `1e+16`). Infinities and
/// NaN come out as `json.dumps` writes them (`Infinity`, `-Infinity`, `NaN`).
pub fn py_float(value: f64) -> String {
    let mut out = String::new();
    push_py_float(&mut out, value);
    out
}

/// [`py_float`], appended to `out`.
pub fn push_py_float(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("NaN");
        return;
    }
    if value.is_infinite() {
        out.push_str(if value > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if value == 0.0 {
        out.push_str(if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        });
        return;
    }
    let mut buffer = zmij::Buffer::new();
    let (negative, digits, point) = decimal(buffer.format_finite(value));
    if negative {
        out.push('-');
    }
    let digits = digits.as_str();
    if point <= -4 || point > 16 {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let exponent = point - 1;
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        out.push_str(itoa::Buffer::new().format(magnitude));
    } else if point <= 0 {
        out.push_str("0.");
        for _ in 0..-point {
            out.push('0');
        }
        out.push_str(digits);
    } else {
        let point = point as usize;
        if point >= digits.len() {
            out.push_str(digits);
            for _ in digits.len()..point {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
}

/// Significant decimal digits, without leading or trailing zeros (at most 32).
struct Digits {
    bytes: [u8; 32],
    len: usize,
}

impl Digits {
    fn as_str(&self) -> &str {
        std::str::from_utf8(self.bytes.get(..self.len).unwrap_or_default()).unwrap_or_default()
    }
}

/// The sign, significant digits and decimal point position of a number printed in plain or
/// exponent notation (`-12.5`, `1e16`, `3.1e-7`): the value is `0.DIGITS x 10^point`.
fn decimal(text: &str) -> (bool, Digits, i32) {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let mut digits = Digits {
        bytes: [0; 32],
        len: 0,
    };
    let mut point = exponent;
    let mut seen_point = false;
    let mut started = false;
    for b in mantissa.bytes() {
        if b == b'.' {
            seen_point = true;
            continue;
        }
        if !started && b == b'0' {
            if seen_point {
                point -= 1;
            }
            continue;
        }
        started = true;
        if !seen_point {
            point += 1;
        }
        if let Some(slot) = digits.bytes.get_mut(digits.len) {
            *slot = b;
            digits.len += 1;
        }
    }
    while digits.len > 0 && digits.bytes.get(digits.len - 1) == Some(&b'0') {
        digits.len -= 1;
    }
    (negative, digits, point)
}

/// `value` as `absl::StrCat(double)` prints it (what xprof shows for a double stat): six
/// significant digits as C's `%g` (`1.5`, `1.23457e+08`, `4.94066e-324`), `nan`, `inf`, `-inf`
/// and `-0`.
pub fn six_digits(value: f64) -> String {
    let mut out = String::new();
    push_six_digits(&mut out, value);
    out
}

/// [`six_digits`], appended to `out`.
pub fn push_six_digits(out: &mut String, value: f64) {
    out.push_str(&six_digits_inner(value));
}

fn six_digits_inner(value: f64) -> String {
    const PRECISION: i32 = 6;
    if value.is_nan() {
        return "nan".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // When the shortest digits that read back are six or fewer, they are the value rounded to six
    // digits too (a normal double is within 2^-53 of them, far from a six-digit rounding
    // boundary); otherwise, and for subnormals, round the exact value.
    let mut buffer = zmij::Buffer::new();
    let (negative, digits, point) = decimal(buffer.format_finite(value));
    let digits = digits.as_str();
    if value.is_normal() && digits.len() <= PRECISION as usize {
        let exponent = point - 1;
        let mut out = String::with_capacity(16);
        if negative {
            out.push('-');
        }
        if !(-4..PRECISION).contains(&exponent) {
            let (first, rest) = digits.split_at(1);
            out.push_str(first);
            if !rest.is_empty() {
                out.push('.');
                out.push_str(rest);
            }
            out.push('e');
            out.push(if exponent < 0 { '-' } else { '+' });
            if exponent.unsigned_abs() < 10 {
                out.push('0');
            }
            out.push_str(itoa::Buffer::new().format(exponent.unsigned_abs()));
        } else if point <= 0 {
            out.push_str("0.");
            for _ in 0..-point {
                out.push('0');
            }
            out.push_str(digits);
        } else {
            let p = point as usize;
            if p >= digits.len() {
                out.push_str(digits);
                for _ in digits.len()..p {
                    out.push('0');
                }
            } else {
                out.push_str(&digits[..p]);
                out.push('.');
                out.push_str(&digits[p..]);
            }
        }
        return out;
    }
    // The exponent after rounding to six significant digits decides the notation.
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, value);
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..PRECISION).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            strip_zeros(mantissa),
            exponent.unsigned_abs()
        )
    } else {
        let decimals = (PRECISION - 1 - exponent).max(0) as usize;
        strip_zeros(&format!("{value:.decimals$}")).to_owned()
    }
}

/// Removes trailing zeros after a decimal point, and the point if nothing follows it.
fn strip_zeros(text: &str) -> &str {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_repr() {
        let cases = [
            (1005.0, "1005.0"),
            (0.123456, "0.123456"),
            (7e-6, "7e-06"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1234567890123456.7, "1234567890123456.8"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (18446744073708.55, "18446744073708.55"),
            (-2.5, "-2.5"),
            (-0.0, "-0.0"),
            (1.5e300, "1.5e+300"),
            // A tie between two shortest candidates goes to the even digit, as in Python.
            (2_899_545_218_834.0 + 0.65625, "2899545218834.6562"),
            (1.9804931420946423e-41, "1.9804931420946423e-41"),
            (-2.5839922981649337e259, "-2.5839922981649337e+259"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (1.3e-5, "1.3e-05"),
            (123e-20, "1.23e-18"),
            (f64::INFINITY, "Infinity"),
        ];
        for (value, text) in cases {
            assert_eq!(py_float(value), text, "{value:e}");
        }
    }

    #[test]
    fn absl_six_digits() {
        let cases = [
            (1.5, "1.5"),
            (0.0, "0"),
            (-0.0, "-0"),
            (123456789.0, "1.23457e+08"),
            (5e-324, "4.94066e-324"),
            (1e300, "1e+300"),
            (0.1, "0.1"),
            (-2.75, "-2.75"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
            (999999.5, "1e+06"),
            (0.0001, "0.0001"),
        ];
        for (value, text) in cases {
            assert_eq!(six_digits(value), text);
        }
    }

    #[test]
    fn json_strings() {
        let mut out = String::new();
        push_json_str(&mut out, "q\" b\\ n\n t\t nul\0 bell\u{7} é ✓ 🚀 del\u{7f}");
        assert_eq!(
            out,
            r#""q\" b\\ n\n t\t nul\u0000 bell\u0007 \u00e9 \u2713 \ud83d\ude80 del""#
                .replace("del\"", "del\u{7f}\"")
        );
    }
}

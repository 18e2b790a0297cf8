//! The values of a constant as XLA prints them in HLO text: integers in decimal, predicates as
//! `true`/`false`, floating-point numbers by XLA's `RoundTripFpToString` (C's `%g` with the
//! fewest of two precisions that reads back as the same value, a NaN's payload in hex).

use super::PRED;
use crate::op_stats::hlo::xla::LiteralProto;

/// C's `%.*g` (as absl's `StrFormat` prints it) of `v` with `precision` significant digits.
pub(super) fn format_g(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_owned();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    let p = precision.max(1);
    let sci = format!("{:.*e}", p - 1, v);
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let x: i64 = exponent.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s.to_owned()
        }
    };
    if x < -4 || x >= p as i64 {
        let sign = if x < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), x.unsigned_abs())
    } else {
        let decimals = usize::try_from(p as i64 - 1 - x).unwrap_or(0);
        strip(&format!("{v:.decimals$}"))
    }
}

/// XLA's `RoundTripFpToString(float)`: six significant digits when they read back as the same
/// float, else nine; a NaN with a payload other than the quiet bit gets it in hex.
fn float_text(v: f32) -> String {
    let short = format_g(f64::from(v), 6);
    let mut text = if short.parse::<f32>().ok() == Some(v) {
        short
    } else {
        format_g(f64::from(v), 9)
    };
    if v.is_nan() {
        let payload = v.to_bits() & 0x007f_ffff;
        if payload != 0x0040_0000 {
            text.push_str(&format!("(0x{payload:x})"));
        }
    }
    text
}

/// `RoundTripFpToString(double)`: 15 significant digits, else 17.
fn double_text(v: f64) -> String {
    let short = format_g(v, 15);
    let mut text = if short.parse::<f64>().ok() == Some(v) {
        short
    } else {
        format_g(v, 17)
    };
    if v.is_nan() {
        let payload = v.to_bits() & 0x000f_ffff_ffff_ffff;
        if payload != 0x0008_0000_0000_0000 {
            text.push_str(&format!("(0x{payload:x})"));
        }
    }
    text
}

/// `RoundTripFpToString` of a 16-bit float (`bits`, whose value is `v`): `digits` significant
/// digits (the type's `max_digits10`), a NaN's payload other than the quiet bit in hex.
fn half_text(v: f32, bits: u16, digits: usize, payload_mask: u16) -> String {
    let mut text = format_g(f64::from(v), digits);
    if v.is_nan() {
        let payload = bits & payload_mask;
        let quiet = (payload_mask >> 1) + 1;
        if payload != quiet {
            text.push_str(&format!("(0x{payload:x})"));
        }
    }
    text
}

/// An IEEE half's value.
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((h >> 10) & 0x1f);
    let mantissa = f32::from(h & 0x3ff);
    match exponent {
        0 => sign * mantissa * 2f32.powi(-24),
        31 if mantissa == 0.0 => sign * f32::INFINITY,
        31 => sign * f32::NAN,
        e => sign * (1.0 + mantissa / 1024.0) * 2f32.powi(e - 15),
    }
}

/// The elements of a literal of `element_type` as XLA prints them, `None` for types not covered.
pub(super) fn literal_elements(literal: &LiteralProto, element_type: i32) -> Option<Vec<String>> {
    let two = |bytes: &[u8]| -> Vec<u16> {
        bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    Some(match element_type {
        PRED => literal
            .preds
            .iter()
            .map(|b| if *b { "true" } else { "false" }.to_owned())
            .collect(),
        2 => literal.s8s.iter().map(|b| (*b as i8).to_string()).collect(),
        6 => literal.u8s.iter().map(u8::to_string).collect(),
        3 => two(&literal.s16s)
            .iter()
            .map(|v| (*v as i16).to_string())
            .collect(),
        7 => two(&literal.u16s).iter().map(u16::to_string).collect(),
        4 => literal.s32s.iter().map(i32::to_string).collect(),
        5 => literal.s64s.iter().map(i64::to_string).collect(),
        8 => literal.u32s.iter().map(u32::to_string).collect(),
        9 => literal.u64s.iter().map(u64::to_string).collect(),
        11 => literal.f32s.iter().map(|v| float_text(*v)).collect(),
        16 => two(&literal.bf16s)
            .iter()
            .map(|b| half_text(f32::from_bits(u32::from(*b) << 16), *b, 4, 0x7f))
            .collect(),
        10 => two(&literal.f16s)
            .iter()
            .map(|h| half_text(f16_to_f32(*h), *h, 5, 0x3ff))
            .collect(),
        12 => literal.f64s.iter().map(|v| double_text(*v)).collect(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format() {
        assert_eq!(format_g(1.0, 6), "1");
        assert_eq!(format_g(0.5, 6), "0.5");
        assert_eq!(format_g(1e-5, 6), "1e-05");
        assert_eq!(format_g(123_456_789.0, 6), "1.23457e+08");
        assert_eq!(format_g(100_000.0, 6), "100000");
        assert_eq!(format_g(1_000_000.0, 6), "1e+06");
        assert_eq!(format_g(-0.0001, 6), "-0.0001");
        assert_eq!(float_text(0.1), "0.1");
        assert_eq!(float_text(16_777_217.0), "16777216");
        assert_eq!(float_text(1.000_000_1), "1.00000012");
        assert_eq!(float_text(f32::NEG_INFINITY), "-inf");
        assert_eq!(float_text(f32::NAN), "nan");
        assert_eq!(double_text(0.1), "0.1");
        assert_eq!(double_text(1.0 / 3.0), "0.33333333333333331");
        // bfloat16 and half: their max_digits10 significant digits.
        assert_eq!(half_text(0.099_609_375, 0x3dcc, 4, 0x7f), "0.09961");
        assert_eq!(half_text(f16_to_f32(0x3c00), 0x3c00, 5, 0x3ff), "1");
        assert_eq!(half_text(f16_to_f32(0x3555), 0x3555, 5, 0x3ff), "0.33325");
    }
}

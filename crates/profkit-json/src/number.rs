//! Integers from any of their spellings (`12`, `12.0`, `1.2e1`): the integer-array fast path
//! and the JSON formats whose numbers are all doubles (Poplar) read their integer fields so.

use std::fmt;

use serde::de::{self, Visitor};

/// 2^64 as a double: the first integral double that does not fit in `u64`.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;

/// What an integer field expects, in messages.
pub const INT: &str = "a non-negative integer";
/// What an index field expects, in messages.
pub const INDEX: &str = "an index (a non-negative integer below 2^32)";

fn check<E: de::Error>(v: u64, max: u64, what: &str) -> Result<u64, E> {
    if v > max {
        Err(E::custom(too_large(what, v)))
    } else {
        Ok(v)
    }
}

/// The message for an integer over its field's range.
pub fn too_large(what: &str, v: u64) -> String {
    format!("expected {what}, found {v}, which is too large")
}

/// Reads a non-negative integer up to `max` from any of its spellings (`12`, `12.0`, `1.2e1`),
/// refusing a fraction, a negative number or a value over `max` with a message naming `what`.
pub struct IntVisitor {
    /// The largest value the field holds.
    pub max: u64,
    /// What the field expects, in messages ([`INT`], [`INDEX`] or the caller's own words).
    pub what: &'static str,
}

impl<'de> Visitor<'de> for IntVisitor {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        check(v, self.max, self.what)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        match u64::try_from(v) {
            Ok(v) => check(v, self.max, self.what),
            Err(_) => Err(E::custom(format!(
                "expected {}, found the negative number {v}",
                self.what
            ))),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
        let what = self.what;
        if v.is_nan() {
            Err(E::custom(format!("expected {what}, found NaN")))
        } else if v < 0.0 {
            Err(E::custom(format!(
                "expected {what}, found the negative number {v}"
            )))
        } else if v.fract() != 0.0 {
            Err(E::custom(format!(
                "expected {what}, found the fraction {v}"
            )))
        } else if v >= TWO_64 || v as u64 > self.max {
            Err(E::custom(format!(
                "expected {what}, found {v}, which is too large"
            )))
        } else {
            Ok(v as u64)
        }
    }
}

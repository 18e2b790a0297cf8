//! Stat values as the `stats` column holds them: text, and JSON text for the frame layout.

use base64::Engine as _;
use profkit_xplane::xview::StatValueView;

use super::*;

/// A stat's value as the text of the `stats` column, appended to `out`: integers in decimal,
/// doubles in their shortest round-trip form (`1.5`, `1e20`, `NaN`, `inf`), references as the
/// referenced name, bytes in standard base64.
pub(super) fn push_text(
    value: Option<StatValueView<'_>>,
    tables: &PlaneTables<'_>,
    out: &mut String,
) {
    match value {
        Some(StatValueView::Double(v)) => out.push_str(zmij::Buffer::new().format(v)),
        Some(StatValueView::Uint64(v)) => out.push_str(itoa::Buffer::new().format(v)),
        Some(StatValueView::Int64(v)) => out.push_str(itoa::Buffer::new().format(v)),
        Some(StatValueView::Str(v)) => out.push_str(v),
        Some(StatValueView::Bytes(v)) => {
            base64::engine::general_purpose::STANDARD.encode_string(v, out);
        }
        Some(StatValueView::Ref(id)) => out.push_str(tables.referenced(id).1),
        None => {}
    }
}

/// The text of a string-like value without copying it (`None` for the others).
#[inline]
pub(super) fn borrowed_text<'a>(
    value: Option<StatValueView<'a>>,
    tables: &PlaneTables<'a>,
) -> Option<&'a str> {
    match value {
        Some(StatValueView::Str(v)) => Some(v),
        Some(StatValueView::Ref(id)) => Some(tables.referenced(id).1),
        None => Some(""),
        _ => None,
    }
}

pub(super) fn stat_i64(value: Option<StatValueView<'_>>) -> Option<i64> {
    match value {
        Some(StatValueView::Int64(v)) => Some(v),
        Some(StatValueView::Uint64(v)) => i64::try_from(v).ok(),
        Some(StatValueView::Double(v)) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
        Some(StatValueView::Str(s)) => s.parse().ok(),
        _ => None,
    }
}

/// Whether `s` can stand in JSON text between quotes as it is.
#[inline]
pub(super) fn json_plain(s: &str) -> bool {
    !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)
}

/// Appends `s` to `out` as a JSON string (quoted, escaped as RFC 8259 requires).
pub(super) fn push_json_str(s: &str, plain: bool, out: &mut String) {
    out.push('"');
    if plain {
        out.push_str(s);
    } else {
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                }
                c => out.push(c),
            }
        }
    }
    out.push('"');
}

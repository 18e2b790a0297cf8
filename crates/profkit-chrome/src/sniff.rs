//! Telling a Chrome trace from other JSON by its first bytes, or by reading its top level.

use std::fmt;
use std::io::Read;

use profkit_json::{ReadOptions, Reader};
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Whether `prefix` (the first bytes of a file) looks like Chrome trace JSON: an object whose
/// first bytes name `traceEvents` or a key Kineto writes first, or an array whose first element
/// is an object with a `ph`. [`sniff_json`] decides on the whole structure.
pub fn looks_like_chrome(prefix: &[u8]) -> bool {
    let text = String::from_utf8_lossy(prefix);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        return trimmed.contains("\"traceEvents\"")
            || (trimmed.contains("\"deviceProperties\"") && trimmed.contains("\"schemaVersion\""));
    }
    if let Some(rest) = trimmed.strip_prefix('[') {
        let rest = rest.trim_start();
        return rest.starts_with(']') || (rest.starts_with('{') && rest.contains("\"ph\""));
    }
    false
}

/// What a JSON input is, as far as [`sniff_json`] read it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonShape {
    /// A Chrome trace: an object with `traceEvents`, or an array of events.
    Chrome,
    /// A JSON object without `traceEvents`: its top-level keys (the first 16).
    Object(Vec<String>),
    /// Other JSON (a scalar, an array of something else).
    OtherJson,
    /// Not JSON (or cut short before telling): why.
    NotJson(String),
}

pub(crate) const FOUND: &str = "$profkit::chrome::found";

/// Reads the top level of a JSON text until it can tell whether it is a Chrome trace: keys are
/// read and their values skipped without being built, and reading stops at `traceEvents` (or
/// the first element of a bare array).
pub fn sniff_json<R: Read>(reader: R) -> JsonShape {
    struct Sniff;
    seed!(Sniff => JsonShape, deserialize_any);
    impl<'de> Visitor<'de> for Sniff {
        type Value = JsonShape;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<JsonShape, A::Error> {
            let mut keys = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                if key == "traceEvents" {
                    return Err(de::Error::custom(FOUND));
                }
                if keys.len() < 16 {
                    keys.push(key);
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(JsonShape::Object(keys))
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<JsonShape, A::Error> {
            struct First;
            impl<'de> Visitor<'de> for First {
                type Value = bool;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an event")
                }
                fn visit_map<A: MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> std::result::Result<bool, A::Error> {
                    let mut empty = true;
                    while let Some(key) = map.next_key::<String>()? {
                        empty = false;
                        if key == "ph" {
                            return Err(de::Error::custom(FOUND));
                        }
                        map.next_value::<IgnoredAny>()?;
                    }
                    Ok(empty)
                }
                fn visit_bool<E>(self, _: bool) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_u64<E>(self, _: u64) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_i64<E>(self, _: i64) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_f64<E>(self, _: f64) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_str<E>(self, _: &str) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_unit<E>(self) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_seq<A: SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> std::result::Result<bool, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(false)
                }
            }
            seed!(First => bool, deserialize_any);
            match seq.next_element_seed(First)? {
                // An empty array, or one that starts with the empty event `{}`.
                None | Some(true) => Err(de::Error::custom(FOUND)),
                Some(false) => Ok(JsonShape::OtherJson),
            }
        }
        fn visit_bool<E>(self, _: bool) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_u64<E>(self, _: u64) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_i64<E>(self, _: i64) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_f64<E>(self, _: f64) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_str<E>(self, _: &str) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_unit<E>(self) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
    }
    let options = ReadOptions::default().open_top_array(true);
    match Reader::new(skip_bom(reader), options).read_document_seed(Sniff) {
        Ok(shape) => shape,
        Err(profkit_json::Error::Schema { reason, .. }) if reason == FOUND => JsonShape::Chrome,
        Err(e) => JsonShape::NotJson(e.to_string()),
    }
}

/// A reader without a leading UTF-8 byte order mark.
pub(crate) fn skip_bom<R: Read>(mut reader: R) -> impl Read {
    let mut head = [0u8; 3];
    let mut got = 0;
    while got < 3 {
        match reader.read(head.get_mut(got..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let keep = if head == [0xef, 0xbb, 0xbf] { 0 } else { got };
    let start = if keep == 0 { 3 } else { 0 };
    let prefix = head.get(start..start + keep).unwrap_or_default().to_vec();
    std::io::Cursor::new(prefix).chain(reader)
}

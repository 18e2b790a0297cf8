//! The JSON profkit's JSON format crates share (Poplar profiles in `profkit-poplar`, Chrome trace
//! JSON in `profkit-chrome`, xprof's trace viewer in `profkit-xprof`), as `profkit-wire` is shared
//! by the protobuf ones: a streaming reader, and in [`write`](mod@write) strings and numbers as the Python
//! tools we reproduce write them.
//!
//! [`Reader`] takes any `Read`, holds one fixed buffer of it at a time, and is a serde
//! `Deserializer`: a caller reads typed values with `Deserialize`, or walks a long array one
//! element at a time with a `DeserializeSeed`, keeping only what it needs. It accepts exactly the
//! JSON that serde_json accepts (RFC 8259, UTF-8), gives the same numbers for the same text
//! (non-negative integers as `u64`, negative ones as `i64`, others as correctly rounded `f64`,
//! `-0` as `-0.0`), refuses nesting deeper than serde_json's default limit, and bounds strings.
//! Every error carries its [`Location`]: the JSON path of the value it is about, byte offset,
//! line and column. Private newtype names give callers what serde's data model lacks: whole
//! integer arrays in one call ([`U64_ARRAY_TOKEN`], [`U32_ARRAY_TOKEN`]), numbers as written
//! ([`RAW_NUMBER_TOKEN`]), and objects offered to a [`RawHook`] of the caller's, which reads them
//! straight from the read buffer or leaves them to the serde path ([`RAW_HOOK_TOKEN`]).
//!
//! ```
//! use profkit_json::{ReadOptions, Reader};
//!
//! let text = br#"{"a": [1, 2, {"b": tru}]}"#;
//! let err = Reader::new(&text[..], ReadOptions::default())
//!     .read_document::<serde_json::Value>()
//!     .unwrap_err();
//! assert_eq!(err.path(), Some("a[2].b"));
//!
//! let ok: serde_json::Value = profkit_json::from_slice(br#"[1, 2.5, "x"]"#).unwrap();
//! assert_eq!(ok, serde_json::json!([1, 2.5, "x"]));
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod error;
pub mod number;
pub mod path;
mod reader;
pub mod write;

pub use error::{Error, Location, Result};
pub use reader::{
    DEFAULT_MAX_STRING_BYTES, DeError, MAX_DEPTH, Number, RAW_HOOK_TOKEN, RAW_NUMBER_TOKEN,
    REPLACED_PLACES_KEPT, RawHook, RawRead, ReadOptions, Reader, U32_ARRAY_TOKEN, U64_ARRAY_TOKEN,
    from_reader, from_reader_with, from_slice, from_str, number_at, number_text_len,
};

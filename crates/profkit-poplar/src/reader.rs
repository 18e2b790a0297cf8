//! Reading JSON: profkit-json's streaming reader (a serde `Deserializer` over any `Read` that names
//! the JSON path, line, column and byte of every error), with this crate's error type.

use std::io::Read;
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

pub use profkit_json::{DEFAULT_MAX_STRING_BYTES, MAX_DEPTH, ReadOptions};

/// Reads one value of type `T` (usually [`ProfileFile`](crate::ProfileFile),
/// [`GraphProfile`](crate::GraphProfile) or [`ExecutionProfile`](crate::ExecutionProfile)) from
/// JSON text, streaming: only a fixed buffer of the text is held at a time.
pub fn from_reader<T: DeserializeOwned, R: Read>(reader: R) -> Result<T> {
    from_reader_with(reader, ReadOptions::default())
}

/// [`from_reader`] with explicit settings.
pub fn from_reader_with<T: DeserializeOwned, R: Read>(
    reader: R,
    options: ReadOptions,
) -> Result<T> {
    profkit_json::from_reader_with(reader, options).map_err(Error::from)
}

/// Reads one value of type `T` from JSON bytes.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    profkit_json::from_slice(bytes).map_err(Error::from)
}

/// Reads one value of type `T` from JSON text.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T> {
    from_slice(text.as_bytes())
}

/// Reads one value of type `T` from the JSON file at `path`; errors name the file.
pub fn read_file<T: DeserializeOwned>(path: impl AsRef<Path>) -> Result<T> {
    let path = path.as_ref();
    std::fs::File::open(path)
        .map_err(Error::from)
        .and_then(from_reader)
        .map_err(|e| e.in_file(path))
}

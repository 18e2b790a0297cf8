//! The one error type of this crate.

use profkit_error::{InFile, OverLimit};

/// A failure to read, decode or write an XSpace, with where it happened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a valid encoding of the message at `path`.
    #[error("malformed XSpace at byte {offset} in {path}: {reason}")]
    Malformed {
        /// Byte offset from the start of the input where the problem starts.
        offset: u64,
        /// Message and field path, for example `XSpace.planes[0].lines[2].events[5]`.
        path: String,
        /// What is wrong there.
        reason: String,
    },
    /// The input ends inside a field: everything before `offset` was read.
    #[error(
        "truncated XSpace: input ends at byte {offset} inside {path}, which needs {needed} more bytes"
    )]
    Truncated {
        /// Byte offset where the input ends.
        offset: u64,
        /// Message and field path of the field that is cut short.
        path: String,
        /// How many more bytes the field declares.
        needed: u64,
    },
    /// A message or field is larger than the configured limit.
    #[error(transparent)]
    TooLarge(OverLimit),
    /// Reading or writing failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The canonical JSON view could not be read or written.
    #[error("canonical JSON: {0}")]
    Json(String),
    /// An error in a named file.
    #[error(transparent)]
    InFile(InFile<Error>),
}

profkit_error::file_context!(Error);

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

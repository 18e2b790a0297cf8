//! The one error type of this crate.

use profkit_error::{InFile, OverLimit};

/// A failure to read, decode or write a profile, or to drive the recorder, with where it happened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a valid encoding of the message at `path`.
    #[error("malformed {path} at byte {offset}: {reason}")]
    Malformed {
        /// Byte offset from the start of the input where the problem starts.
        offset: u64,
        /// Message and field path, for example `Profile.events[3].name`.
        path: String,
        /// What is wrong there.
        reason: String,
    },
    /// The input ends inside a field: everything before `offset` was read.
    #[error(
        "truncated: the input ends at byte {offset} inside {path}, which needs {needed} more bytes"
    )]
    Truncated {
        /// Byte offset where the input ends.
        offset: u64,
        /// Message and field path of the field that is cut short.
        path: String,
        /// How many more bytes the field needs (at least).
        needed: u64,
    },
    /// A message or field is larger than the configured limit.
    #[error(transparent)]
    TooLarge(OverLimit),
    /// The recorder was asked for something its state does not allow.
    #[error("recorder: {0}")]
    Recorder(String),
    /// Reading or writing failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// An error in a named file.
    #[error(transparent)]
    InFile(InFile<Error>),
}

impl Error {
    /// The byte offset the error points at, if it has one.
    pub fn offset(&self) -> Option<u64> {
        match self.root() {
            Error::Malformed { offset, .. }
            | Error::Truncated { offset, .. }
            | Error::TooLarge(OverLimit { offset, .. }) => Some(*offset),
            _ => None,
        }
    }
}

profkit_error::file_context!(Error);

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
    /// An input holding more messages than its size allows (empty messages by the million, say),
    /// refused before decoding: they would take far more memory than the input.
    #[error(
        "{what}: {messages} messages in {bytes} bytes, more than the budget of one per {per} bytes \
         (decoded, they would take over 64 times the input in memory); ReadOptions::bytes_per_message sets the budget"
    )]
    TooManyMessages {
        /// The file's message.
        what: String,
        /// Messages counted, nested ones included.
        messages: u64,
        /// The input's size.
        bytes: u64,
        /// The budget: at most one message per this many bytes.
        per: u64,
    },
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

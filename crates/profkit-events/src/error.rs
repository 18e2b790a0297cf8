//! The one error type of this crate, declared with `profkit_error::error_enum!`: it adds the
//! variants every profkit error has, `Io` and `InFile` (the error in a named file), and the
//! methods that look past the file (`in_file`, `root`, `is_truncation`).

use profkit_error::{OverLimit, Truncation};

profkit_error::error_enum! {
    /// A failure to read, decode or write a profile, or to drive the recorder, with where it
    /// happened.
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
        /// The input ends inside a field: everything before its offset was read.
        #[error("truncated: the input {0}")]
        Truncated(Truncation),
        /// A message or field is larger than the configured limit.
        #[error("{0}")]
        TooLarge(OverLimit),
        /// An input holding more messages than its size allows (empty messages by the million,
        /// say), refused before decoding: they would take far more memory than the input.
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
    }
    offset: Error::Malformed { offset, .. }
        | Error::Truncated(Truncation { offset, .. })
        | Error::TooLarge(OverLimit { offset, .. }) => *offset,
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

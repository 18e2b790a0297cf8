//! The one error type of this crate, declared with `profkit_error::error_enum!`: it adds the
//! variants every profkit error has, `Io` and `InFile` (the error in a named file), and the
//! methods that look past the file (`in_file`, `root`, `is_truncation`).

use profkit_error::{OverLimit, Truncation};

profkit_error::error_enum! {
    /// A failure to read, decode or write an XSpace, with where it happened.
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
        /// The input ends inside a field: everything before its offset was read.
        #[error("truncated XSpace: input {0}")]
        Truncated(Truncation),
        /// A message or field is larger than the configured limit.
        #[error("{0}")]
        TooLarge(OverLimit),
        /// The canonical JSON view could not be read or written.
        #[error("canonical JSON: {0}")]
        Json(String),
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

//! The one error type of this crate, declared with `profkit_error::error_enum!`: it adds the
//! variants every profkit error has, `Io` and `InFile` (the error in a named file), and the
//! methods that look past the file (`in_file`, `root`, `is_truncation`).

pub use profkit_json::{Error as JsonError, Location};

profkit_error::error_enum! {
    /// A failure to read or write a Poplar profile, with where it happened.
    pub enum Error {
        /// The input is not a Poplar profile's JSON: not JSON at all, cut short, over one of the
        /// reader's limits, or valid JSON that is not what a Poplar profile has there (a wrong
        /// type, a fraction or a negative number where a count or an index belongs, a missing
        /// required field, a duplicated key, a program or step without its tag). The JSON reader's
        /// error says where, by JSON path and position.
        #[error("{0}")]
        Json(JsonError),
    }
    truncated: Error::Json(JsonError::Truncated { .. }),
}

impl Error {
    /// Where in the JSON text the error is, when it is about the text.
    pub fn location(&self) -> Option<&Location> {
        match self.root() {
            Error::Json(e) => e.location(),
            _ => None,
        }
    }

    /// The JSON path of the value the error is about (empty for the top level).
    pub fn path(&self) -> Option<&str> {
        self.location().map(|l| l.path.as_str())
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<JsonError> for Error {
    /// A failure to read stays an I/O error, as a failure to write is; the rest is about the JSON.
    fn from(e: JsonError) -> Self {
        match e {
            JsonError::Io(e) => Error::Io(e),
            other => Error::Json(other),
        }
    }
}

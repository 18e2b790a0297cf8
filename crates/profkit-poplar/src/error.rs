//! The one error type of this crate.

use profkit_error::InFile;

pub use profkit_json::Location;

/// A failure to read or write a Poplar profile, with where it happened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is not JSON.
    #[error("invalid JSON {location}: {reason}")]
    Syntax {
        /// Where the text stops being JSON.
        location: Location,
        /// What is wrong there.
        reason: String,
    },
    /// The input ends inside the JSON value: everything before `location` was read.
    #[error("truncated JSON: the input ends {location}, inside the value")]
    Truncated {
        /// Where the input ends.
        location: Location,
    },
    /// Valid JSON that is not what a Poplar profile has there: a wrong type, a fraction or a
    /// negative number where a count or an index belongs, a missing required field, a
    /// duplicated key, a program or step without its tag.
    #[error("{location}: {reason}")]
    Schema {
        /// The value that is wrong.
        location: Location,
        /// What is wrong with it.
        reason: String,
    },
    /// The input is over one of the reader's limits (nesting depth, string length).
    #[error("{location}: {what} is over the limit of {limit}")]
    Limit {
        /// Where the limit was reached.
        location: Location,
        /// What is too deep or too long.
        what: String,
        /// The limit in force.
        limit: u64,
    },
    /// Reading or writing failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// An error in a named file.
    #[error(transparent)]
    InFile(InFile<Error>),
}

impl Error {
    /// Where in the JSON text the error is, when it is about the text.
    pub fn location(&self) -> Option<&Location> {
        match self.root() {
            Error::Syntax { location, .. }
            | Error::Truncated { location }
            | Error::Schema { location, .. }
            | Error::Limit { location, .. } => Some(location),
            _ => None,
        }
    }

    /// The JSON path of the value the error is about (empty for the top level).
    pub fn path(&self) -> Option<&str> {
        self.location().map(|l| l.path.as_str())
    }
}

profkit_error::file_context!(Error);

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<profkit_json::Error> for Error {
    fn from(e: profkit_json::Error) -> Self {
        match e {
            profkit_json::Error::Syntax { location, reason } => Error::Syntax { location, reason },
            profkit_json::Error::Truncated { location } => Error::Truncated { location },
            profkit_json::Error::Schema { location, reason } => Error::Schema { location, reason },
            profkit_json::Error::Limit {
                location,
                what,
                limit,
            } => Error::Limit {
                location,
                what,
                limit,
            },
            profkit_json::Error::Io(e) => Error::Io(e),
            other => Error::Io(std::io::Error::other(other.to_string())),
        }
    }
}

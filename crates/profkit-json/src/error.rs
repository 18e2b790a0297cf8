//! The one error type of this crate.

use std::fmt;

/// Where in a JSON text something is: the path of the value (`memory.byTile.total[3]`, empty for
/// the top level) and its position.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// The JSON path of the value, in the usual dotted form: object keys after dots (or as
    /// `["key"]` when they are not plain identifiers), array indices in brackets.
    pub path: String,
    /// Byte offset from the start of the input.
    pub offset: u64,
    /// Line, from 1.
    pub line: u64,
    /// Column in bytes, from 1.
    pub column: u64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str("at the top level")?;
        } else {
            write!(f, "at {}", self.path)?;
        }
        write!(
            f,
            " (line {}, column {}, byte {})",
            self.line, self.column, self.offset
        )
    }
}

/// A failure to read JSON, with where it happened.
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
    /// Valid JSON that is not what the reader's caller expects there (a visitor refused it).
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
    /// Reading failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// Where in the JSON text the error is, when it is about the text.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Error::Syntax { location, .. }
            | Error::Truncated { location }
            | Error::Schema { location, .. }
            | Error::Limit { location, .. } => Some(location),
            Error::Io(_) => None,
        }
    }

    /// The JSON path of the value the error is about (empty for the top level).
    pub fn path(&self) -> Option<&str> {
        self.location().map(|l| l.path.as_str())
    }

    /// Whether the input was cut short (as opposed to being wrong).
    pub fn is_truncation(&self) -> bool {
        matches!(self, Error::Truncated { .. })
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

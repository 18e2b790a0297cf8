//! The one error type of this crate.

use profkit_error::InFile;
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

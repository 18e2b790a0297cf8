//! The one error type of this crate.

/// A trace that cannot be read: not JSON, not the Trace Event Format, or a read that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Chrome trace is not JSON, or not the Trace Event Format.
    #[error(
        "Chrome trace JSON {} (line {line}, column {column}): {reason}",
        at(path)
    )]
    Json {
        /// The JSON path of the value (`traceEvents[12].ts`), empty for the whole document.
        path: String,
        /// Line, from 1 (0 when unknown).
        line: u64,
        /// Column, from 1 (0 when unknown).
        column: u64,
        /// What is wrong there.
        reason: String,
    },
    /// Reading failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// Where a Chrome error is: its JSON path, or the top level for the empty path.
fn at(path: &str) -> String {
    if path.is_empty() {
        "at the top level".to_owned()
    } else {
        format!("at {path}")
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

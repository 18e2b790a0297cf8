//! The one error type of this crate.

/// A failure to read an XSpace or to write what is made of it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the XSpace failed (with its byte offset and field path).
    #[error(transparent)]
    Xspace(#[from] profkit_xplane::Error),
    /// Writing the output (or reading the input) failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

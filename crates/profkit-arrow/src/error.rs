//! The crate's error type.

use std::path::PathBuf;

/// A failure to read an input or to write a table. Errors from the format readers keep their
/// location (byte offset and field path, JSON path, frame, file).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The XSpace input is malformed or truncated (the message names the byte offset and path).
    #[error("{0}")]
    XSpace(#[from] profkit_xplane::Error),
    /// A conversion to the XSpace failed (Chrome JSON, Poplar, XDL through profkit-convert).
    #[error("{0}")]
    Convert(#[from] profkit_convert::Error),
    /// A Paddle `Profile` or node trees input is malformed or truncated.
    #[error("{0}")]
    Paddle(#[from] profkit_events::Error),
    /// An XDL dataset is malformed or truncated (the message names the file and frame).
    #[error("{0}")]
    Xdl(#[from] profkit_xdl::Error),
    /// Arrow refused a batch (a bug of this crate if it ever happens).
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// The Parquet writer failed.
    #[error("{path}: parquet: {source}")]
    Parquet {
        /// The file being written.
        path: PathBuf,
        /// What the writer said.
        source: parquet::errors::ParquetError,
    },
    /// A file or directory of the dataset could not be made, written or moved.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The dataset cannot take this host (already present, or a name that is not allowed).
    #[error("{path}: {reason}")]
    Dataset {
        /// The dataset or host directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The side tables were asked for before every events batch was read.
    #[error("the planes, lines and metadata tables are complete only after the last events batch")]
    Unfinished,
    /// The caller stopped the writing ([`crate::HostWriter::stop_when`]).
    #[error("interrupted")]
    Interrupted,
    /// An invariant of this crate did not hold.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

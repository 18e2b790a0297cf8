//! The crate's error.

use std::path::PathBuf;

/// What can go wrong when recording or writing spans.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The recorder could not be started or stopped (another session running, none running).
    #[error("recorder: {0}")]
    Recorder(#[from] profkit_events::Error),
    /// The output could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The output.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The XSpace could not be written.
    #[error("{path}: {source}")]
    XSpace {
        /// The output.
        path: PathBuf,
        /// What failed.
        source: profkit_xplane::Error,
    },
    /// The Chrome trace could not be written.
    #[error("{path}: {source}")]
    Chrome {
        /// The output.
        path: PathBuf,
        /// What failed.
        source: profkit_xprof::Error,
    },
    /// The Parquet host partition could not be written.
    #[cfg(feature = "parquet")]
    #[error("{path}: {source}")]
    Parquet {
        /// The dataset.
        path: PathBuf,
        /// What failed.
        source: profkit_arrow::Error,
    },
    /// The output's format is not one this build writes (Parquet without the `parquet` feature).
    #[error("{0}: {1}")]
    Format(PathBuf, &'static str),
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;

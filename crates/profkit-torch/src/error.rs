//! The one error type of this crate.

/// A trace that cannot be read as a Kineto trace, or an option that cannot be honoured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is not JSON, or not the Trace Event Format as Kineto writes it: the JSON path,
    /// line and column say where.
    #[error("Kineto trace JSON: {0}")]
    Json(profkit_json::Error),
    /// An option names something this crate does not know (a sort key, an analysis).
    #[error("{0}")]
    Option(String),
    /// Reading failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

impl From<profkit_json::Error> for Error {
    fn from(e: profkit_json::Error) -> Self {
        match e {
            profkit_json::Error::Io(io) => Error::Io(io),
            other => Error::Json(other),
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

//! The one error type of this crate.

use std::path::PathBuf;

use profkit_error::InFile;

/// A failure to convert, with where it happened: errors of the format crates keep their byte
/// offsets and paths, and the Chrome trace reader names the JSON path, line and column.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing an XSpace failed.
    #[error(transparent)]
    Xspace(#[from] profkit_xplane::Error),
    /// Reading a Paddle profile failed.
    #[error(transparent)]
    Events(#[from] profkit_events::Error),
    /// Reading an XDL dataset failed.
    #[error(transparent)]
    Xdl(#[from] profkit_xdl::Error),
    /// Reading a Poplar profile failed.
    #[error(transparent)]
    Poplar(#[from] profkit_poplar::Error),
    /// A Chrome trace is not JSON, or not the Trace Event Format (its read errors are
    /// [`Error::Io`]).
    #[error(transparent)]
    Chrome(profkit_chrome::Error),
    /// The input is valid but cannot be converted the way asked, as the real tool could not
    /// either (for example an event type Paddle's `timeline.py` has no process for).
    #[error("{0}")]
    Unsupported(String),
    /// Reading or writing failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// An error in a named file.
    #[error(transparent)]
    InFile(InFile<Error>),
}

impl From<profkit_xprof::Error> for Error {
    fn from(e: profkit_xprof::Error) -> Error {
        match e {
            profkit_xprof::Error::Io(io) => Error::Io(io),
            profkit_xprof::Error::Xspace(x) => Error::Xspace(x),
            other => Error::Unsupported(other.to_string()),
        }
    }
}

impl From<profkit_chrome::Error> for Error {
    fn from(e: profkit_chrome::Error) -> Error {
        match e {
            profkit_chrome::Error::Io(io) => Error::Io(io),
            other => Error::Chrome(other),
        }
    }
}

impl Error {
    /// Attaches the file the error came from (errors that already name a file keep theirs).
    pub fn in_file(self, path: impl Into<PathBuf>) -> Error {
        match self {
            Error::InFile(_) => self,
            Error::Xspace(profkit_xplane::Error::InFile(f)) => {
                Error::InFile(InFile::new(f.path, Error::Xspace(*f.source)))
            }
            Error::Events(profkit_events::Error::InFile(f)) => {
                Error::InFile(InFile::new(f.path, Error::Events(*f.source)))
            }
            other => Error::InFile(InFile::new(path, other)),
        }
    }

    /// The error without any file wrapper.
    pub fn root(&self) -> &Error {
        match self {
            Error::InFile(f) => f.source.root(),
            other => other,
        }
    }

    /// Whether writing the output failed because its reader went away (a closed pipe), which a
    /// command-line tool treats as a normal end.
    pub fn is_broken_pipe(&self) -> bool {
        match self.root() {
            Error::Io(e) => e.kind() == std::io::ErrorKind::BrokenPipe,
            Error::Xspace(profkit_xplane::Error::Io(e)) => {
                e.kind() == std::io::ErrorKind::BrokenPipe
            }
            _ => false,
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

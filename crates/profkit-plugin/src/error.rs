//! The one error type of this crate.

use std::path::PathBuf;

use crate::abi::Code;

/// What went wrong, on the plugin side (an error a [`crate::plugin::Profiler`] returns, turned
/// into a `TF_Status`) or on the host side (loading, registering, calling a plugin).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error with a TensorFlow status code: what a plugin returns, and what a call that set an
    /// error status gives the host.
    #[error("{code}: {message}")]
    Status {
        /// The status code.
        code: Code,
        /// The status message.
        message: String,
    },
    /// A plugin call set an error status.
    #[error("{call} returned {code}: {message}")]
    Call {
        /// The call: `TF_InitProfiler`, `start`, `stop` or `collect_data_xspace`.
        call: &'static str,
        /// The status code.
        code: Code,
        /// The status message.
        message: String,
    },
    /// A panic inside a plugin call, caught before it reached the FFI boundary.
    #[error("panic in {call}: {message}")]
    Panic {
        /// The call that panicked.
        call: &'static str,
        /// The panic's message.
        message: String,
    },
    /// The library could not be loaded.
    #[error("cannot load {}: {message}", path.display())]
    Load {
        /// The library.
        path: PathBuf,
        /// What the dynamic loader said.
        message: String,
    },
    /// The library does not export a symbol it must.
    #[error("{} does not export {symbol}", path.display())]
    MissingSymbol {
        /// The library.
        path: PathBuf,
        /// The symbol, `TF_InitProfiler`.
        symbol: &'static str,
    },
    /// This process does not export the `TF_Status` functions plugins call, so it cannot host
    /// plugins (see [`crate::status`]).
    #[error(
        "this process does not export TF_SetStatus and the other TF_Status functions: invoke \
         profkit_plugin::export_tf_status!() in the executable and link it with \
         -Wl,--export-dynamic-symbol=TF_SetStatus (and TF_NewStatus, TF_DeleteStatus, \
         TF_GetCode, TF_Message)"
    )]
    StatusNotExported,
    /// The plugin's registration would make TensorFlow abort: the problems found, in the order
    /// TensorFlow checks them.
    #[error("TensorFlow would refuse the registration: {}", problems.join("; "))]
    Invalid {
        /// One sentence per problem.
        problems: Vec<String>,
    },
    /// The two calls of a collection disagree on the size.
    #[error("collect_data_xspace said {first} bytes on the first call and {second} on the second")]
    SizeMismatch {
        /// The size written by the first call.
        first: usize,
        /// The size written by the second call.
        second: usize,
    },
    /// An XSpace could not be decoded.
    #[error(transparent)]
    XSpace(#[from] profkit_xplane::Error),
    /// Reading, writing or running a child process failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The checker's child process broke its protocol.
    #[error("checker child process: {0}")]
    Child(String),
}

impl Error {
    /// An error with a status code and message, for a plugin to return.
    pub fn status(code: Code, message: impl Into<String>) -> Error {
        Error::Status {
            code,
            message: message.into(),
        }
    }

    /// The message a plugin reports for this error in a status (without the code, which the
    /// status carries separately).
    pub fn status_message(&self) -> String {
        match self {
            Error::Status { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    /// The status code a plugin reports for this error.
    pub fn code(&self) -> Code {
        match self {
            Error::Status { code, .. } | Error::Call { code, .. } => *code,
            Error::Io(e) => match e.kind() {
                std::io::ErrorKind::NotFound => Code::NOT_FOUND,
                std::io::ErrorKind::PermissionDenied => Code::PERMISSION_DENIED,
                _ => Code::UNKNOWN,
            },
            Error::Load { .. } | Error::MissingSymbol { .. } => Code::NOT_FOUND,
            Error::Invalid { .. } => Code::INVALID_ARGUMENT,
            _ => Code::INTERNAL,
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

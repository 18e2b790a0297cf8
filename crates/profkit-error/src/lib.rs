//! The error plumbing profkit's crates share.
//!
//! Every profkit crate has one error type of its own, with its own wording, and says where a
//! problem is in the terms of its format (a byte offset and a field path, a frame, a JSON path).
//! What they all add on top is the file: a reader that opens a file attaches its name to any
//! error from inside it, once, and a caller that wants the error itself looks past the file. That
//! is the same in every crate, so it is said here once: [`InFile`] is the attached file, and
//! [`file_context!`] gives an error enum with an `InFile(InFile<Self>)` variant its `in_file`,
//! `root`, `is_truncation` and `offset` methods. So are the located errors the binary readers
//! share, with their formatting: [`OverLimit`] (something over a size limit) and [`Truncation`]
//! (an input that ends inside a field), each wrapped in a variant of the crate's error, in its
//! own words.
//!
//! ```
//! use profkit_error::InFile;
//!
//! #[derive(Debug, thiserror::Error)]
//! enum Error {
//!     #[error("bad byte at {0}")]
//!     Bad(u64),
//!     #[error("the input ends at byte {offset}")]
//!     Truncated { offset: u64 },
//!     /// An error in a named file.
//!     #[error(transparent)]
//!     InFile(InFile<Error>),
//! }
//! profkit_error::file_context!(Error);
//!
//! let e = Error::Bad(7).in_file("a.pb").in_file("b.pb");
//! assert_eq!(e.to_string(), "a.pb: bad byte at 7");
//! assert!(matches!(e.root(), Error::Bad(7)));
//! assert!(!e.is_truncation());
//! assert!(Error::Truncated { offset: 3 }.in_file("c.pb").is_truncation());
//! ```

#![forbid(unsafe_code)]

use std::fmt;
use std::path::PathBuf;

/// An error in a named file: the file, and what went wrong in it. Shown as `FILE: ERROR`.
#[derive(Debug)]
pub struct InFile<E> {
    /// The file.
    pub path: PathBuf,
    /// What went wrong in it.
    pub source: Box<E>,
}

impl<E> InFile<E> {
    /// `source`, in the file `path`.
    pub fn new(path: impl Into<PathBuf>, source: E) -> Self {
        InFile {
            path: path.into(),
            source: Box::new(source),
        }
    }
}

impl<E: fmt::Display> fmt::Display for InFile<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl<E: std::error::Error + 'static> std::error::Error for InFile<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// An input, message or field over a configured size limit: what it is, where it starts (a byte
/// offset) and how large it is. Shown as `WHAT at byte OFFSET is SIZE bytes, over the limit of
/// LIMIT bytes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverLimit {
    /// What is too large, for example `XSpace.planes[3]`.
    pub what: String,
    /// Byte offset where it starts.
    pub offset: u64,
    /// Its size in bytes (for a whole input read from a stream: at least this many).
    pub size: u64,
    /// The limit in force.
    pub limit: u64,
}

impl fmt::Display for OverLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {} is {} bytes, over the limit of {} bytes",
            self.what, self.offset, self.size, self.limit
        )
    }
}

impl std::error::Error for OverLimit {}

impl OverLimit {
    /// `Ok` when `size` is within `limit`, else the error for `what` at `offset`.
    pub fn check(what: &str, offset: u64, size: u64, limit: u64) -> Result<(), OverLimit> {
        if size <= limit {
            return Ok(());
        }
        Err(OverLimit {
            what: what.to_owned(),
            offset,
            size,
            limit,
        })
    }
}

/// An input that ends inside a field: where it ends, the message and field path cut short, and
/// how many more bytes that field needs. Shown as `ends at byte OFFSET inside PATH, which needs
/// NEEDED more bytes`, after the words of the crate that reports it (`truncated XSpace: input `).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    /// Byte offset where the input ends: everything before it was read.
    pub offset: u64,
    /// Message and field path of the field that is cut short, for example `XSpace.planes[0]`.
    pub path: String,
    /// How many more bytes the field needs (at least).
    pub needed: u64,
}

impl fmt::Display for Truncation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ends at byte {} inside {}, which needs {} more bytes",
            self.offset, self.path, self.needed
        )
    }
}

/// Gives an error enum with a variant `InFile(InFile<Self>)` and a variant `Truncated` the
/// methods `in_file` (attach the file, once: an error already naming a file keeps it), `root`
/// (the error past any file) and `is_truncation` (whether the input was cut short).
///
/// After the enum, optional clauses, in this order:
/// - `keeps: PATTERN` leaves errors matching `PATTERN` as they are in `in_file`, for variants
///   that name their file in their own words;
/// - `truncated: PATTERN` says which errors are truncations, for an enum that keeps them in a
///   wrapped error rather than in a variant `Truncated` of its own;
/// - `offset: PATTERN => EXPR` adds `offset`, the byte offset the error (past any file) points
///   at: `EXPR` for an error matching `PATTERN`, whose bindings it uses, and `None` otherwise.
///
/// ```
/// # use profkit_error::InFile;
/// # #[derive(Debug, thiserror::Error)]
/// # enum Error {
/// #     #[error("bad byte at {at}")]
/// #     Bad { at: u64 },
/// #     #[error("the input ends at byte {0}")]
/// #     Truncated(u64),
/// #     #[error(transparent)]
/// #     InFile(InFile<Error>),
/// # }
/// profkit_error::file_context!(Error, offset: Error::Bad { at } | Error::Truncated(at) => *at);
///
/// assert_eq!(Error::Bad { at: 7 }.in_file("a.pb").offset(), Some(7));
/// assert!(Error::Truncated(9).in_file("a.pb").is_truncation());
/// ```
#[macro_export]
macro_rules! file_context {
    (@truncated $error:ident) => { $error::Truncated { .. } };
    (@truncated $error:ident $truncated:pat) => { $truncated };
    (
        $error:ident
        $(, keeps: $keeps:pat)?
        $(, truncated: $truncated:pat)?
        $(, offset: $offset:pat => $at:expr)?
        $(,)?
    ) => {
        impl $error {
            /// Attaches the file the error came from (once: an error already naming a file keeps
            /// it).
            pub fn in_file(self, path: impl Into<std::path::PathBuf>) -> $error {
                match self {
                    $error::InFile(_) $(| $keeps)? => self,
                    other => $error::InFile($crate::InFile::new(path, other)),
                }
            }

            /// The error without any file wrapper.
            pub fn root(&self) -> &$error {
                match self {
                    $error::InFile(f) => f.source.root(),
                    other => other,
                }
            }

            /// Whether the input was cut short (as opposed to being corrupt or wrong), so that a
            /// caller may keep what was read before the cut.
            pub fn is_truncation(&self) -> bool {
                matches!(self.root(), $crate::file_context!(@truncated $error $($truncated)?))
            }

            $(
                /// The byte offset the error points at, if it has one.
                pub fn offset(&self) -> Option<u64> {
                    match self.root() {
                        $offset => Some($at),
                        _ => None,
                    }
                }
            )?
        }
    };
}

/// Declares a crate's error enum as every profkit crate has it: `#[non_exhaustive]`, deriving
/// `Debug` and `thiserror::Error` (each variant says its words with `#[error(..)]`), with two
/// variants appended after the crate's own: `Io` (reading or writing failed, shown as
/// `I/O error: ..`, made from any `std::io::Error` by `?`) and `InFile` (the error in a named
/// file), and with the methods of [`file_context!`], whose clauses (`keeps:`, `truncated:`,
/// `offset:`) follow the enum, each ended by a comma.
///
/// A variant of the crate's that shows a wrapped error as it is says `#[error("{0}")]`:
/// thiserror's `#[error(transparent)]` does not work on a variant written outside the macro (its
/// expansion names a binding in the derive's hygiene and uses it in the attribute's).
///
/// ```
/// profkit_error::error_enum! {
///     /// A failure to read a bag.
///     pub enum Error {
///         /// An item is bad.
///         #[error("bad item at byte {0}")]
///         Bad(u64),
///         /// The input ends inside an item.
///         #[error("the input ends at byte {0}")]
///         Truncated(u64),
///     }
///     offset: Error::Bad(at) | Error::Truncated(at) => *at,
/// }
///
/// fn read() -> Result<(), Error> {
///     Err(std::io::Error::other("disk on fire"))?
/// }
/// assert_eq!(read().unwrap_err().to_string(), "I/O error: disk on fire");
/// let e = Error::Bad(7).in_file("bag.pb");
/// assert_eq!(e.to_string(), "bag.pb: bad item at byte 7");
/// assert_eq!(e.offset(), Some(7));
/// assert!(matches!(e, Error::InFile(_)));
/// assert!(Error::Truncated(3).in_file("bag.pb").is_truncation());
/// ```
#[macro_export]
macro_rules! error_enum {
    (
        $(#[$attr:meta])*
        $vis:vis enum $error:ident { $($variants:tt)* }
        $(keeps: $keeps:pat,)?
        $(truncated: $truncated:pat,)?
        $(offset: $offset:pat => $at:expr,)?
    ) => {
        // The derive is here, with the variants below, for `#[error(transparent)]` on `InFile`
        // to work (see above).
        $(#[$attr])*
        #[derive(Debug, thiserror::Error)]
        #[non_exhaustive]
        $vis enum $error {
            $($variants)*
            /// Reading or writing failed.
            #[error("I/O error: {0}")]
            Io(#[from] ::std::io::Error),
            /// An error in a named file.
            #[error(transparent)]
            InFile($crate::InFile<$error>),
        }

        $crate::file_context!(
            $error
            $(, keeps: $keeps)?
            $(, truncated: $truncated)?
            $(, offset: $offset => $at)?
        );
    };
}

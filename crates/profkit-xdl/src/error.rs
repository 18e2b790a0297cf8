//! The one error type of this crate, declared with `profkit_error::error_enum!`: it adds the
//! variants every profkit error has, `Io` and `InFile` (the error in a named file), and the
//! methods that look past the file (`in_file`, `root`, `is_truncation`).

use std::path::PathBuf;

use crate::DType;

profkit_error::error_enum! {
    /// A failure to read, decode, check or write XDL trace data, with where it happened.
    pub enum Error {
        /// The input ends inside a frame. Every frame before `frame` was complete, so a caller may
        /// keep the records already read and treat the rest of the file as lost (as after a crash).
        #[error(
            "truncated at byte {offset}: frame {frame} (starting at byte {frame_offset}) needs {needed} more bytes"
        )]
        Truncated {
            /// Byte offset where the input ends.
            offset: u64,
            /// Index of the cut frame (0 is the header).
            frame: u64,
            /// Byte offset of the cut frame's length prefix.
            frame_offset: u64,
            /// How many more bytes the frame (its length prefix, then its body) needs.
            needed: u64,
        },
        /// A frame's length prefix is over the configured limit: usually a corrupt length, or a
        /// file that is not an XDL data file.
        #[error(
            "frame {frame} at byte {offset} declares {size} bytes, over the limit of {limit} bytes (a corrupt length?)"
        )]
        FrameTooLarge {
            /// Index of the frame (0 is the header).
            frame: u64,
            /// Byte offset of the frame's length prefix.
            offset: u64,
            /// The declared length.
            size: u64,
            /// The limit in force.
            limit: u64,
        },
        /// The bytes of a frame (or of a meta file) are not a valid encoding of the expected
        /// message.
        #[error("malformed {path} at byte {offset}{}: {reason}", frame.map(|f| format!(" (frame {f})")).unwrap_or_default())]
        Malformed {
            /// Byte offset from the start of the input where the problem starts.
            offset: u64,
            /// Index of the frame holding the message, when it came from a data file.
            frame: Option<u64>,
            /// Message and field path, for example `Record.column[2].shape`.
            path: String,
            /// What is wrong there.
            reason: String,
        },
        /// A column's dtype is not one of the schema's eight.
        #[error("unknown dtype {value} (the schema defines 0 = Int8 to 7 = Byte)")]
        UnknownDType {
            /// The value found.
            value: i32,
        },
        /// A column was read as another element type than it holds.
        #[error("the column holds {found:?} elements, not {expected:?}")]
        WrongDType {
            /// The type asked for.
            expected: DType,
            /// The column's type.
            found: DType,
        },
        /// A column's shape cannot describe a tensor.
        #[error("invalid shape {shape:?}: {reason}")]
        BadShape {
            /// The shape.
            shape: Vec<i64>,
            /// Why it is invalid.
            reason: String,
        },
        /// A column's data is not product(shape) x element size bytes long.
        #[error("{dtype:?} column of shape {shape:?} needs {expected} bytes of data, has {actual}")]
        DataLength {
            /// The column's element type.
            dtype: DType,
            /// The column's shape.
            shape: Vec<i32>,
            /// The bytes the shape and dtype call for.
            expected: u64,
            /// The bytes present.
            actual: u64,
        },
        /// A record has another number of columns than its header has keys.
        #[error("the record has {found} columns but the header has {expected} keys")]
        ColumnCount {
            /// Keys in the header.
            expected: usize,
            /// Columns in the record.
            found: usize,
        },
        /// A column of a record is invalid.
        #[error("column {index} ({key:?}): {source}")]
        Column {
            /// The column's position in the record.
            index: usize,
            /// The header's key for it.
            key: String,
            /// What is wrong with it.
            #[source]
            source: Box<Error>,
        },
        /// A key the header does not have.
        #[error("the header has no key {0:?}")]
        UnknownKey(String),
        /// A data file's header differs from the first file's in the same dataset.
        #[error("header keys {found:?} differ from the dataset's {expected:?}")]
        HeaderMismatch {
            /// The keys of the dataset's first file.
            expected: Vec<String>,
            /// The keys of this file.
            found: Vec<String>,
        },
        /// A dataset could not be found, named or created.
        #[error("{}: {reason}", path.display())]
        Dataset {
            /// The directory, prefix or file concerned.
            path: PathBuf,
            /// What is wrong.
            reason: String,
        },
        /// An output location this crate cannot write to.
        #[error("cannot write to {url}: {reason}")]
        UnsupportedOutput {
            /// The output as given.
            url: String,
            /// Why, and what to do instead.
            reason: String,
        },
        /// The JSON form of a record or meta is not valid.
        #[error("JSON at {path}: {reason}")]
        Json {
            /// Path inside the document, for example `records[3].columns[1].value`.
            path: String,
            /// What is wrong there.
            reason: String,
        },
        /// The writer's IO thread failed earlier; [`crate::DatasetWriter::finish`] returns the
        /// cause.
        #[error("the trace writer failed earlier and accepts no more records: {0}")]
        WriterFailed(String),
    }
    keeps: Error::Dataset { .. },
    offset: Error::Truncated { offset, .. }
        | Error::FrameTooLarge { offset, .. }
        | Error::Malformed { offset, .. } => *offset,
}

impl Error {
    /// The index of the frame the error is in, if it has one.
    pub fn frame(&self) -> Option<u64> {
        match self.root() {
            Error::Truncated { frame, .. } | Error::FrameTooLarge { frame, .. } => Some(*frame),
            Error::Malformed { frame, .. } => *frame,
            _ => None,
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

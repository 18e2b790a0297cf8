//! The limits a read keeps to: what every reader (whole, streaming, views) takes as settings.

use crate::error::{Error, Result};

/// The default limit on an encoded XSpace read whole: 2 GiB, the largest message protobuf's own
/// parsers accept. Use [`crate::XSpaceReader`] for larger files.
pub const DEFAULT_MAX_SIZE: u64 = 2 << 30;

/// Settings for reading an XSpace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The largest encoded message accepted, in bytes. For the streaming reader this bounds each
    /// plane (and each string of the space); for whole reads the whole input. For a gzipped
    /// input it bounds the decompressed message.
    pub max_size: u64,
    /// What a gzipped input may decompress to (inputs starting with gzip's magic are
    /// decompressed as they are read): by default 16 times the compressed size plus 4 MiB, so
    /// that a gzip bomb is refused after a few megabytes.
    pub max_inflated: profkit_gzip::Limit,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_size: DEFAULT_MAX_SIZE,
            max_inflated: profkit_gzip::Limit::default(),
        }
    }
}

impl ReadOptions {
    /// Options with the given size limit.
    pub fn with_max_size(max_size: u64) -> Self {
        ReadOptions {
            max_size,
            ..ReadOptions::default()
        }
    }

    /// These options with `limit` on what a gzipped input may decompress to.
    pub fn with_max_inflated(self, limit: profkit_gzip::Limit) -> Self {
        ReadOptions {
            max_inflated: limit,
            ..self
        }
    }
}

/// Refuses `size` bytes of `what` at `offset` when they are over `limit`.
pub(crate) fn check_size(what: &str, offset: u64, size: u64, limit: u64) -> Result<()> {
    profkit_error::OverLimit::check(what, offset, size, limit).map_err(Error::TooLarge)
}

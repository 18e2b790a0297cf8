//! PaddlePaddle's two profile protobufs: the legacy profiler's `Profile` ([`legacy`]) and the new
//! profiler's node trees ([`nodetree`]), read (and, for `Profile`, written) with size limits and
//! errors that name the byte offset and field path, checked, summarised and converted to the event
//! model.

use std::io::Read;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::event::Recording;

pub mod legacy;
pub mod nodetree;
mod wire;

/// The default limit on an encoded file read whole (and on one element read by the streaming
/// readers): 2 GiB, the largest message protobuf's own parsers accept.
pub const DEFAULT_MAX_SIZE: u64 = 2 << 30;

/// The default budget of decoded messages: one per 20 bytes of input on average. Paddle's own
/// files hold one per 29 to 72 bytes (node trees about 30, `Profile`s 56 to 72); an input of
/// empty messages (2 bytes each) would otherwise take 300 to 600 times its size in memory once
/// decoded and converted, where this keeps every command under 64 times.
pub const DEFAULT_BYTES_PER_MESSAGE: u64 = 20;

/// Settings for reading Paddle's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The largest input read whole, or element read by a streaming reader, in bytes.
    pub max_size: u64,
    /// The budget of decoded messages (the file's message, and every nested one): at most one
    /// per this many bytes of input, counted before decoding; 0 for no budget. See
    /// [`DEFAULT_BYTES_PER_MESSAGE`].
    pub bytes_per_message: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_size: DEFAULT_MAX_SIZE,
            bytes_per_message: DEFAULT_BYTES_PER_MESSAGE,
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
}

/// Refuses `bytes` (an encoded `msg`) when decoding it would build more messages than the budget
/// of `options` allows, before anything is built.
pub(crate) fn check_density(
    msg: wire::Msg,
    bytes: &[u8],
    options: ReadOptions,
    what: &str,
) -> Result<()> {
    if options.bytes_per_message == 0 {
        return Ok(());
    }
    let allowed = (bytes.len() as u64 / options.bytes_per_message).max(1024);
    let messages = profkit_wire::count_messages(msg, bytes);
    if messages > allowed {
        return Err(Error::TooManyMessages {
            what: what.to_owned(),
            messages,
            bytes: bytes.len() as u64,
            per: options.bytes_per_message,
        });
    }
    Ok(())
}

pub(crate) fn check_size(what: &str, size: u64, limit: u64) -> Result<()> {
    profkit_error::OverLimit::check(what, 0, size, limit).map_err(Error::TooLarge)
}

/// Reads all of `reader`, refusing more than `limit` bytes; the buffer grows with what arrives,
/// and input that cannot be a `msg` is refused at its first fault as it arrives (endless zeros on
/// standard input stop at byte 0, not at the limit).
pub(crate) fn read_limited(
    reader: impl Read,
    limit: u64,
    msg: wire::Msg,
    what: &str,
) -> Result<Vec<u8>> {
    let (buf, fault) = profkit_wire::read_walked(reader, limit, msg, what)?;
    if let Some(fault) = fault {
        return Err(<Error as profkit_wire::FaultError>::from_fault(fault));
    }
    check_size(what, buf.len() as u64, limit)?;
    Ok(buf)
}

/// Which of Paddle's files some bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// The legacy `Profile`.
    Profile,
    /// The new profiler's `NodeTreesProto`.
    NodeTrees,
}

impl Format {
    /// The format of a file starting with `prefix`, if it is one of Paddle's.
    pub fn detect(prefix: &[u8]) -> Option<Format> {
        if nodetree::looks_like_node_trees(prefix) {
            Some(Format::NodeTrees)
        } else if legacy::looks_like_profile(prefix) {
            Some(Format::Profile)
        } else {
            None
        }
    }
}

/// Decodes `bytes` as `format` and converts it to the event model.
pub fn recording_from_bytes(format: Format, bytes: &[u8]) -> Result<Recording> {
    Ok(match format {
        Format::Profile => legacy::to_recording(&legacy::decode_profile(bytes)?),
        Format::NodeTrees => nodetree::to_recording(&nodetree::decode_node_trees(bytes)?),
    })
}

/// What a check of a file found wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemKind {
    /// A range ends before it starts.
    EndBeforeStart,
    /// A type or place code the schema does not have.
    UnknownType,
    /// A field Paddle always writes is missing.
    MissingField,
    /// A nested name whose parent range is not around it.
    OrphanRange,
    /// Two nodes of a thread share an id.
    DuplicateId,
    /// The parent links do not form one tree under the synthetic root.
    BadTree,
    /// A node is not within its parent's time.
    OutsideParent,
    /// An event is in the tree of another thread.
    WrongThread,
}

/// One problem, with the path of the message it is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What kind of problem.
    pub kind: ProblemKind,
    /// The message and field path, for example `Profile.events[3]`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl Problem {
    pub(crate) fn new(
        kind: ProblemKind,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            kind,
            path: path.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// The encoded `FileDescriptorSet` of both schemas, for tools that load them at run time.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/paddle_descriptor_set.bin"));

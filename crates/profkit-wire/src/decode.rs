//! Decoding with prost, with the walk to say where a refused input breaks.

use profkit_error::Truncation;

use crate::schema::Schema;
use crate::walk::{Fault, locate};

/// The error type of a format crate, as far as decoding needs it: what a truncation and a
/// corruption become. Each crate keeps its own variants and wording; this names them.
pub trait FaultError: Sized {
    /// The input ends inside a field.
    fn truncated(cut: Truncation) -> Self;
    /// The bytes at `offset` in the field at `path` are not a valid encoding, because `reason`.
    fn malformed(offset: u64, path: String, reason: String) -> Self;

    /// The error for a fault the walk or a streaming read found.
    fn from_fault(fault: Fault) -> Self {
        fault.into_error(Self::truncated, Self::malformed)
    }
}

/// The error for prost's refusal of `bytes` (an encoded `msg` starting at input offset `base`,
/// named `path`; `open_end` as for [`locate`]): the walk's first fault, or, when the walk finds
/// nothing wrong (groups nested past prost's recursion limit, say), prost's own `reason` at the
/// message's start.
pub fn refusal<S: Schema, E: FaultError>(
    msg: S,
    bytes: &[u8],
    base: u64,
    open_end: bool,
    path: &str,
    reason: impl std::fmt::Display,
) -> E {
    match locate(msg, bytes, base, open_end, path) {
        Some(fault) => E::from_fault(fault),
        None => E::malformed(base, path.to_owned(), reason.to_string()),
    }
}

/// Decodes `bytes`, an encoded `msg`, as `M` with prost, and turns a refusal into a located error
/// with [`refusal`]. `B` is `&[u8]`, or `bytes::Bytes` where decoded `bytes` fields should share
/// the input's buffer instead of copying it.
pub fn decode<M, B, S, E>(msg: S, bytes: B, base: u64, open_end: bool, path: &str) -> Result<M, E>
where
    M: prost::Message + Default,
    B: prost::bytes::Buf + AsRef<[u8]> + Clone,
    S: Schema,
    E: FaultError,
{
    M::decode(bytes.clone()).map_err(|e| {
        let reason = format!("rejected by the protobuf decoder: {e}");
        refusal(msg, bytes.as_ref(), base, open_end, path, reason)
    })
}

/// Implements [`FaultError`] for an error enum whose truncation and corruption variants are
/// `Truncated(Truncation)` and `Malformed { offset, path, reason }`, the shape the protobuf
/// format crates share.
#[macro_export]
macro_rules! fault_error {
    ($error:ty) => {
        impl $crate::FaultError for $error {
            fn truncated(cut: $crate::Truncation) -> Self {
                Self::Truncated(cut)
            }
            fn malformed(offset: u64, path: String, reason: String) -> Self {
                Self::Malformed {
                    offset,
                    path,
                    reason,
                }
            }
        }
    };
}

//! Whole messages read into memory, refused as soon as what has arrived cannot be one.

use std::io::Read;

use crate::schema::Schema;
use crate::walk::{Fault, Problem, locate};

/// The buffer size at which the first walk runs; later walks run each time the buffer doubles,
/// so the walks cost at most twice the bytes read.
const FIRST_WALK: usize = 64 << 10;

/// No walks once this much has arrived valid: input that long is taken to be what it says, and
/// read to the limit (the walks would only slow reading a large valid file).
const LAST_WALK: usize = 16 << 20;

/// Reads all of `reader` into memory, at most `limit + 1` bytes (so that the caller can tell an
/// input over `limit` from one at it), walking what has arrived against `msg`'s schema each time
/// the buffer doubles from 64 KiB up to 16 MiB. Input that is not an encoded `msg` (zeros from a device, text,
/// another format) stops the read at its first fault instead of filling memory up to the limit:
/// the bytes read so far come back with that fault, the one decoding the whole input would find
/// first. A prefix that only ends inside a field is no fault; reading goes on. The buffer grows
/// with the bytes that arrive, never with a declared length.
pub fn read_walked<S: Schema>(
    reader: impl Read,
    limit: u64,
    msg: S,
    path: &str,
) -> std::io::Result<(Vec<u8>, Option<Fault>)> {
    let mut reader = reader.take(limit.saturating_add(1));
    let mut buf = Vec::new();
    let mut next_walk = FIRST_WALK;
    loop {
        let want = next_walk.saturating_sub(buf.len()) as u64;
        (&mut reader).take(want).read_to_end(&mut buf)?;
        if buf.len() < next_walk {
            return Ok((buf, None));
        }
        if next_walk > LAST_WALK {
            reader.read_to_end(&mut buf)?;
            return Ok((buf, None));
        }
        if let Some(fault) = locate(msg, &buf, 0, true, path) {
            if !matches!(fault.problem, Problem::Truncated { .. }) {
                return Ok((buf, Some(fault)));
            }
        }
        next_walk = next_walk.saturating_mul(2);
    }
}

/// How many messages `buf` (an encoded `msg`) holds, itself and every nested one the schema
/// names, counted without allocating: what decoding it would build. Counting stops at the first
/// fault (decoding reports it).
pub fn count_messages<S: Schema>(msg: S, buf: &[u8]) -> u64 {
    fn walk<S: Schema>(msg: S, buf: &[u8], count: &mut u64) -> Option<()> {
        *count += 1;
        let mut pos = 0;
        while pos < buf.len() {
            let (number, wire_type) = crate::split_tag(crate::read_varint(buf, &mut pos).ok()?);
            match wire_type {
                crate::VARINT => {
                    crate::read_varint(buf, &mut pos).ok()?;
                }
                crate::FIXED64 => pos = pos.checked_add(8)?,
                crate::FIXED32 => pos = pos.checked_add(4)?,
                crate::LEN => {
                    let len = usize::try_from(crate::read_varint(buf, &mut pos).ok()?).ok()?;
                    let end = pos.checked_add(len)?;
                    let body = buf.get(pos..end)?;
                    if let Some(crate::schema::Field {
                        kind: crate::schema::Kind::Message(inner),
                        ..
                    }) = msg.field(number)
                    {
                        walk(inner, body, count)?;
                    }
                    pos = end;
                }
                // Groups are rare and never ours: stop counting (decoding decides).
                _ => return None,
            }
        }
        Some(())
    }
    let mut count = 0;
    let _ = walk(msg, buf, &mut count);
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    crate::schema! {
        enum Msg {
            Bag { 1 items: [bytes] }
            Outer { 1 inner: [Outer] }
        }
        impl {
            const MAX_GROUP_DEPTH: u32 = 8;
        }
    }

    /// Endless zeros: the read stops after the first walk, at byte 0.
    #[test]
    fn zeros_stop_at_the_first_walk() {
        let (buf, fault) = read_walked(std::io::repeat(0), u64::MAX, Msg::Bag, "Bag").unwrap();
        assert_eq!(buf.len(), FIRST_WALK);
        let fault = fault.unwrap();
        assert_eq!(fault.offset, 0);
        assert_eq!(fault.problem, Problem::InvalidFieldNumber(0));
    }

    /// A valid message is read whole, whatever its size, and up to `limit + 1` bytes.
    #[test]
    fn valid_input_is_read_whole() {
        let item = [0x0a, 0x02, b'h', b'i'];
        let bytes: Vec<u8> = item.iter().copied().cycle().take(4 * 100_000).collect();
        let (buf, fault) = read_walked(&bytes[..], u64::MAX, Msg::Bag, "Bag").unwrap();
        assert_eq!((buf.len(), fault), (bytes.len(), None));
        let (buf, fault) = read_walked(&bytes[..], 1000, Msg::Bag, "Bag").unwrap();
        assert_eq!((buf.len(), fault), (1001, None));
    }

    /// A fault after valid fields is found by the walk after it arrives.
    #[test]
    fn a_later_fault_stops_the_read() {
        let mut bytes: Vec<u8> = [0x0a, 0x02, b'h', b'i'].repeat(50_000);
        bytes.extend(std::iter::repeat_n(0xff, 1 << 20));
        let (buf, fault) = read_walked(&bytes[..], u64::MAX, Msg::Bag, "Bag").unwrap();
        assert!(buf.len() < bytes.len());
        assert_eq!(fault.unwrap().offset, 200_000);
    }

    /// Every message counts, the outer one and each nested one, empty or not.
    #[test]
    fn messages_are_counted_nested() {
        // outer { inner {} inner { inner {} } } plus a varint field 2, skipped.
        let bytes = [0x0a, 0x00, 0x0a, 0x02, 0x0a, 0x00, 0x10, 0x05];
        assert_eq!(count_messages(Msg::Outer, &bytes), 4);
        // Counting stops at a fault: the inner message's length runs past the end.
        assert_eq!(count_messages(Msg::Outer, &[0x0a, 0x00, 0x0a, 0x09]), 2);
    }
}

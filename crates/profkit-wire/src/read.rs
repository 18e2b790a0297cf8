//! Fields read one at a time from any `Read`, for the streaming readers.

use std::io::{BufRead, BufReader, ErrorKind, Read};

use crate::walk::{Fault, Problem};
use crate::{FIXED32, FIXED64, LEN, VARINT};

/// Reads the wire format from a `Read`, keeping the offset: varints, lengths, bodies and skipped
/// values. Its errors are the caller's own: made from a [`Fault`] by the function given to
/// [`WireReader::new`], and from a failed read by `From`. Bodies are read into buffers that grow
/// with the bytes that arrive.
pub struct WireReader<R, E> {
    reader: BufReader<R>,
    offset: u64,
    error: fn(Fault) -> E,
}

impl<R: Read, E: From<std::io::Error>> WireReader<R, E> {
    /// Reads `reader` through a 64 KiB buffer; `error` makes the caller's error of a fault.
    pub fn new(reader: R, error: fn(Fault) -> E) -> Self {
        WireReader {
            reader: BufReader::with_capacity(1 << 16, reader),
            offset: 0,
            error,
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The caller's error for `problem` at `offset` in `path`.
    pub fn fault(&self, offset: u64, path: &str, problem: Problem) -> E {
        (self.error)(Fault::new(offset, path, problem))
    }

    /// The next tag (a varint), or `None` where the input ends cleanly before it.
    pub fn tag(&mut self, path: &str) -> Result<Option<u64>, E> {
        self.read_varint(path, true)
    }

    /// The next varint, which the input must hold.
    pub fn varint(&mut self, path: &str) -> Result<u64, E> {
        Ok(self.read_varint(path, false)?.unwrap_or(0))
    }

    fn read_varint(&mut self, path: &str, eof_ok: bool) -> Result<Option<u64>, E> {
        let start = self.offset;
        let mut value: u64 = 0;
        for i in 0..10u32 {
            let available = loop {
                match self.reader.fill_buf() {
                    Ok(buf) => break buf,
                    // A reader may be interrupted at any call; `Read` asks callers to retry.
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
            };
            let byte = match available.first() {
                Some(&b) => b,
                None if i == 0 && eof_ok => return Ok(None),
                None => {
                    let needed = Problem::Truncated { needed: 1 };
                    return Err(self.fault(self.offset, path, needed));
                }
            };
            self.reader.consume(1);
            self.offset += 1;
            if i == 9 && byte > 1 {
                break;
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(Some(value));
            }
        }
        Err(self.fault(start, path, Problem::VarintTooLong))
    }

    /// Reads the `len` bytes of a body (a length the caller has checked against its limit).
    pub fn body(&mut self, len: u64, path: &str) -> Result<Vec<u8>, E> {
        // Reserved up to 1 MiB; a longer body grows as its bytes arrive.
        let mut body = Vec::with_capacity(len.min(1 << 20) as usize);
        let got = (&mut self.reader).take(len).read_to_end(&mut body)? as u64;
        self.offset += got;
        self.check_got(got, len, path)?;
        // A body longer than the reservation grew by doubling, up to twice its length: the tail
        // is given back, since a body (a whole plane) may be held while it is read.
        if body.capacity() - body.len() > 1 << 16 {
            body.shrink_to_fit();
        }
        Ok(body)
    }

    /// Skips `len` bytes.
    pub fn skip(&mut self, len: u64, path: &str) -> Result<(), E> {
        let sink = &mut std::io::sink();
        let got = std::io::copy(&mut (&mut self.reader).take(len), sink)?;
        self.offset += got;
        self.check_got(got, len, path)
    }

    fn check_got(&self, got: u64, len: u64, path: &str) -> Result<(), E> {
        if got < len {
            let problem = Problem::Truncated { needed: len - got };
            return Err(self.fault(self.offset, path, problem));
        }
        Ok(())
    }

    /// Skips the value of a field of `wire_type` whose tag was just read, if it is a varint, a
    /// fixed-width value or length-delimited; `Ok(false)` leaves groups and invalid wire types to
    /// the caller.
    pub fn skip_value(&mut self, wire_type: u8, path: &str) -> Result<bool, E> {
        match wire_type {
            VARINT => {
                self.varint(path)?;
            }
            FIXED64 => self.skip(8, path)?,
            FIXED32 => self.skip(4, path)?,
            LEN => {
                let len = self.varint(path)?;
                self.skip(len, path)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error of the tests: a fault, or a failed read.
    #[derive(Debug)]
    enum Failure {
        Fault(Fault),
        Io,
    }

    impl From<std::io::Error> for Failure {
        fn from(_: std::io::Error) -> Self {
            Failure::Io
        }
    }

    fn reader(bytes: &[u8]) -> WireReader<&[u8], Failure> {
        WireReader::new(bytes, Failure::Fault)
    }

    fn fault(result: Result<impl std::fmt::Debug, Failure>) -> Fault {
        match result {
            Err(Failure::Fault(f)) => f,
            other => panic!("not a fault: {other:?}"),
        }
    }

    #[test]
    fn reads_and_skips() {
        let mut r = reader(&[0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i', 0x1d, 1, 2, 3, 4]);
        assert_eq!(r.tag("M").ok().flatten(), Some(0x08));
        assert!(r.skip_value(VARINT, "M.a").unwrap_or(false));
        assert_eq!(r.tag("M").ok().flatten(), Some(0x12));
        let len = r.varint("M.b").unwrap_or(0);
        assert_eq!(r.body(len, "M.b").ok(), Some(b"hi".to_vec()));
        assert_eq!(r.tag("M").ok().flatten(), Some(0x1d));
        assert!(r.skip_value(FIXED32, "M.c").unwrap_or(false));
        assert_eq!(r.offset(), 12);
        assert!(matches!(r.tag("M"), Ok(None)));
    }

    #[test]
    fn locates_faults() {
        // A length of 5 with one byte after it.
        let f = fault(reader(&[0x05, b'h']).skip_value(LEN, "M.b"));
        assert_eq!(f, Fault::new(2, "M.b", Problem::Truncated { needed: 4 }));
        let f = fault(reader(&[0x80]).tag("M"));
        assert_eq!(f, Fault::new(1, "M", Problem::Truncated { needed: 1 }));
        let mut long = vec![0xff; 9];
        long.push(0x02);
        let f = fault(reader(&long).varint("M"));
        assert_eq!(f, Fault::new(0, "M", Problem::VarintTooLong));
        assert!(!reader(&[]).skip_value(3, "M").unwrap_or(true));
    }
}

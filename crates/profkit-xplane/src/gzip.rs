//! gzip-compressed XSpaces, read as the plain ones are. Profilers and the tools around them keep
//! `.xplane.pb.gz` files; an encoded XSpace never starts with gzip's magic (its first byte would
//! be a tag of field 3 with the invalid wire type 7), so the first two bytes tell them apart and
//! no file name is needed. What a compressed input may decompress to is bounded by
//! [`ReadOptions::max_inflated`](crate::ReadOptions::max_inflated), profkit-gzip's limit.

use std::io::{BufReader, Chain, Cursor, Read};

use profkit_gzip::{GzipReader, Limit, Options};

type Prefixed<R> = Chain<Cursor<Vec<u8>>, R>;

/// A reader that undoes gzip when its input starts with gzip's magic, and passes the bytes on
/// unchanged otherwise. The input is looked at on the first read, not when it is made.
pub(crate) struct MaybeGzip<R> {
    state: State<R>,
    limit: Limit,
    compressed_len: Option<u64>,
}

enum State<R> {
    Unread(R),
    Plain(Prefixed<R>),
    Gzip(Box<GzipReader<BufReader<Prefixed<R>>>>),
    /// Sniffing failed: the error was returned, and the input is gone.
    Failed,
}

impl<R: Read> MaybeGzip<R> {
    /// `reader`, decompressed if it is gzip, under `limit`; `compressed_len` is its size when
    /// known (a file's length), for a ratio limit.
    pub(crate) fn new(reader: R, limit: Limit, compressed_len: Option<u64>) -> MaybeGzip<R> {
        MaybeGzip {
            state: State::Unread(reader),
            limit,
            compressed_len,
        }
    }

    fn sniff(&mut self) -> std::io::Result<()> {
        let State::Unread(mut reader) = std::mem::replace(&mut self.state, State::Failed) else {
            return Ok(());
        };
        let mut prefix = [0u8; 2];
        let mut got = 0;
        while got < prefix.len() {
            match reader.read(&mut prefix[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let head = prefix.get(..got).unwrap_or_default();
        let is_gzip = profkit_gzip::is_gzip(head);
        let chained = Cursor::new(head.to_vec()).chain(reader);
        self.state = if is_gzip {
            let options = Options {
                limit: self.limit,
                compressed_len: self.compressed_len,
                hint: "; raise ReadOptions::max_inflated to read it".to_owned(),
            };
            State::Gzip(Box::new(GzipReader::new(BufReader::new(chained), options)))
        } else {
            State::Plain(chained)
        };
        Ok(())
    }

    /// Whether the input was gzip (false before the first read).
    #[cfg(test)]
    pub(crate) fn is_gzip(&self) -> bool {
        matches!(self.state, State::Gzip(_))
    }
}

impl<R: Read> Read for MaybeGzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let State::Unread(_) = self.state {
            self.sniff()?;
        }
        match &mut self.state {
            State::Plain(r) => r.read(buf),
            State::Gzip(r) => r.read(buf),
            State::Unread(_) | State::Failed => Err(std::io::Error::other(
                "the input failed before its first bytes were read",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn plain_bytes_pass_unchanged() {
        for input in [&b""[..], b"\x0a", b"\x0a\x00", b"\x1f", b"\x0a\x02\x08\x01"] {
            let mut r = MaybeGzip::new(input, Limit::default(), None);
            let mut out = Vec::new();
            r.read_to_end(&mut out).unwrap();
            assert_eq!(out, input);
            assert!(!r.is_gzip());
        }
    }

    #[test]
    fn gzip_is_undone_under_the_limit() {
        let data = vec![7u8; 10_000];
        let compressed = gzip(&data);
        let mut r = MaybeGzip::new(&compressed[..], Limit::default(), None);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert!(r.is_gzip());
        assert_eq!(out, data);

        let mut r = MaybeGzip::new(&compressed[..], Limit::Bytes(100), None);
        let err = r.read_to_end(&mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("max_inflated"), "{err}");
    }
}

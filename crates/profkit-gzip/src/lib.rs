//! gzip input for every profkit reader: [`GzipReader`] undoes gzip as the bytes arrive, member
//! by member, and checks what gzip lets it check, each failure with a message of its own naming
//! the place:
//!
//! - each member's header (magic, method, flags; the optional name, comment and extra field are
//!   skipped without being kept, whatever their length), its deflate data, its CRC-32 and its
//!   length (ISIZE);
//! - concatenated members read as one stream, as `gzip -d` reads them; anything after the last
//!   member that is not another member is refused as trailing data;
//! - a [`Limit`] on what the input decompresses to (by default 16 times its compressed size
//!   plus 4 MiB), so that a gzip bomb is refused after a few megabytes instead of filling the
//!   memory of whatever reads it.
//!
//! Nothing is allocated by what the input says: the reader's own memory is deflate's window and
//! a few counters.
//!
//! ```
//! use std::io::{Read, Write};
//! let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
//! gz.write_all(&[b'x'; 1000]).unwrap();
//! let compressed = gz.finish().unwrap();
//!
//! let options = profkit_gzip::Options::new(profkit_gzip::Limit::Bytes(100));
//! let mut reader = profkit_gzip::GzipReader::new(&compressed[..], options);
//! let err = reader.read_to_end(&mut Vec::new()).unwrap_err();
//! let gzip = profkit_gzip::Error::find(&err).unwrap();
//! assert!(matches!(gzip, profkit_gzip::Error::TooLarge { limit: 100, .. }));
//! ```

#![forbid(unsafe_code)]

mod limit;

use std::io::{self, BufRead, Read};

use flate2::{Crc, Decompress, FlushDecompress, Status};

pub use limit::{DEFAULT_FLOOR, DEFAULT_RATIO, Limit};

/// The two bytes every gzip member starts with.
pub const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `prefix` starts with gzip's magic.
pub fn is_gzip(prefix: &[u8]) -> bool {
    prefix.starts_with(&MAGIC)
}

/// Why a gzip input does not read. Members count from 1, offsets are in the compressed input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A member's header is not gzip's.
    #[error("bad gzip header in member {member} at compressed byte {offset}: {reason}")]
    Header {
        /// The member.
        member: u64,
        /// Where the fault is.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A member's deflate data is damaged.
    #[error(
        "corrupt gzip data in member {member} (its deflate data starts at compressed byte {offset}): {reason}"
    )]
    Deflate {
        /// The member.
        member: u64,
        /// Where the member's deflate data starts (deflate reads ahead, so the byte at fault is
        /// not known exactly).
        offset: u64,
        /// What deflate said.
        reason: String,
    },
    /// The input ends inside a member.
    #[error(
        "truncated gzip: the input ends at compressed byte {offset}, inside the {part} of member {member} (after {inflated} decompressed bytes)"
    )]
    Truncated {
        /// The member.
        member: u64,
        /// Where the input ends.
        offset: u64,
        /// `header`, `data` or `trailer`.
        part: &'static str,
        /// The decompressed bytes read before.
        inflated: u64,
    },
    /// A member's data does not have the CRC-32 its trailer gives.
    #[error(
        "bad gzip CRC in member {member} (its trailer at compressed byte {offset} says {stored:08x}, its data has {computed:08x}): the file is damaged"
    )]
    Crc {
        /// The member.
        member: u64,
        /// Where its trailer starts.
        offset: u64,
        /// The CRC the trailer gives.
        stored: u32,
        /// The CRC of the data.
        computed: u32,
    },
    /// A member's data does not have the length its trailer gives (modulo 2^32).
    #[error(
        "bad gzip length in member {member} (its trailer at compressed byte {offset} says {stored} bytes, its data has {actual}, modulo 2^32): the file is damaged"
    )]
    Size {
        /// The member.
        member: u64,
        /// Where its trailer starts.
        offset: u64,
        /// The ISIZE the trailer gives.
        stored: u32,
        /// The member's decompressed length.
        actual: u64,
    },
    /// Bytes after the last member that are not another member.
    #[error(
        "trailing data after the gzip stream at compressed byte {offset} (after {members} complete members): not another gzip member, so the file is damaged or has something appended"
    )]
    Trailing {
        /// Where the data starts.
        offset: u64,
        /// The members read whole before it.
        members: u64,
    },
    /// The input decompresses past the limit.
    #[error(
        "decompresses to more than {limit} bytes, the limit for gzip input ({how}), by compressed byte {offset}: a gzip bomb, or data that compresses unusually well{hint}"
    )]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
        /// How the limit was set.
        how: String,
        /// How far the compressed input was read.
        offset: u64,
        /// How to raise it (`; raise it with ...`), or nothing.
        hint: String,
    },
    /// Reading the compressed input failed.
    #[error("cannot read the compressed input: {0}")]
    Io(#[source] io::Error),
}

impl Error {
    /// The gzip error inside an I/O error that [`GzipReader`] returned, however deep (an
    /// `io::Error` wrapping this error, as readers above it pass it on).
    pub fn find(e: &io::Error) -> Option<&Error> {
        let mut inner: &(dyn std::error::Error + 'static) = e.get_ref()?;
        loop {
            if let Some(found) = inner.downcast_ref::<Error>() {
                return Some(found);
            }
            if let Some(io) = inner.downcast_ref::<io::Error>() {
                inner = io.get_ref()?;
                continue;
            }
            inner = inner.source()?;
        }
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        let kind = match &e {
            Error::Io(io) => io.kind(),
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, e)
    }
}

/// How a [`GzipReader`] reads.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// What the input may decompress to.
    pub limit: Limit,
    /// The compressed size, when known (a file's length), for a [`Limit::Ratio`]; without it
    /// the compressed bytes read so far count.
    pub compressed_len: Option<u64>,
    /// Appended to the [`Error::TooLarge`] message: how the user raises the limit (for example
    /// `; raise it with --max-inflated SIZE`).
    pub hint: String,
}

impl Options {
    /// Options with `limit`, no known size and no hint.
    pub fn new(limit: Limit) -> Options {
        Options {
            limit,
            ..Options::default()
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before a member's header (the first member's magic not read yet).
    First,
    /// Inside a member's deflate data.
    Data,
    /// After a member's trailer.
    Between,
    /// Every member read.
    Done,
    /// An error was returned: every later read returns one too.
    Failed,
}

/// Decompresses gzip from a buffered reader as it is read (see the crate documentation).
pub struct GzipReader<R> {
    inner: R,
    state: State,
    inflate: Decompress,
    crc: Crc,
    /// The member being read, from 1.
    member: u64,
    /// Decompressed bytes of the current member.
    member_out: u64,
    /// Compressed bytes consumed.
    consumed: u64,
    /// Where the current member's deflate data starts.
    data_start: u64,
    /// Decompressed bytes returned.
    inflated: u64,
    options: Options,
    /// A fixed limit when the compressed size is known (or the limit is not a ratio).
    fixed: Option<u64>,
    /// The message of the error returned, for any read after it.
    failure: String,
}

impl<R: BufRead> GzipReader<R> {
    /// A reader of the gzip stream `inner`.
    pub fn new(inner: R, options: Options) -> GzipReader<R> {
        let fixed = match (options.limit, options.compressed_len) {
            (Limit::Ratio { .. }, None) => None,
            (limit, len) => Some(limit.bytes_for(len.unwrap_or(0))),
        };
        GzipReader {
            inner,
            state: State::First,
            inflate: Decompress::new(false),
            crc: Crc::new(),
            member: 1,
            member_out: 0,
            consumed: 0,
            data_start: 0,
            inflated: 0,
            options,
            fixed,
            failure: String::new(),
        }
    }

    /// Decompressed bytes returned so far.
    pub fn inflated(&self) -> u64 {
        self.inflated
    }

    /// Compressed bytes read so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The reader of the compressed input.
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn truncated(&self, part: &'static str) -> Error {
        Error::Truncated {
            member: self.member,
            offset: self.consumed,
            part,
            inflated: self.inflated,
        }
    }

    /// One byte of the compressed input, `None` at its end.
    fn byte(&mut self) -> Result<Option<u8>, Error> {
        let buf = loop {
            match self.inner.fill_buf() {
                Ok(buf) => break buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::Io(e)),
            }
        };
        let Some(&b) = buf.first() else {
            return Ok(None);
        };
        self.inner.consume(1);
        self.consumed += 1;
        Ok(Some(b))
    }

    fn need(&mut self, part: &'static str) -> Result<u8, Error> {
        self.byte()?.ok_or_else(|| self.truncated(part))
    }

    fn skip(&mut self, n: usize, part: &'static str) -> Result<(), Error> {
        for _ in 0..n {
            self.need(part)?;
        }
        Ok(())
    }

    fn u32_le(&mut self, part: &'static str) -> Result<u32, Error> {
        let mut bytes = [0u8; 4];
        for b in &mut bytes {
            *b = self.need(part)?;
        }
        Ok(u32::from_le_bytes(bytes))
    }

    /// A member's header after its magic.
    fn header(&mut self) -> Result<(), Error> {
        let at = self.consumed;
        let bad = |offset: u64, member: u64, reason: String| Error::Header {
            member,
            offset,
            reason,
        };
        let method = self.need("header")?;
        if method != 8 {
            return Err(bad(
                at,
                self.member,
                format!("compression method {method}, where gzip has only deflate (8)"),
            ));
        }
        let flags = self.need("header")?;
        if flags & 0xe0 != 0 {
            return Err(bad(
                at + 1,
                self.member,
                format!("reserved flag bits set ({flags:#04x})"),
            ));
        }
        // MTIME, XFL, OS.
        self.skip(6, "header")?;
        if flags & 0x04 != 0 {
            let low = self.need("header")?;
            let high = self.need("header")?;
            self.skip(usize::from(u16::from_le_bytes([low, high])), "header")?;
        }
        // FNAME and FCOMMENT: zero-terminated, skipped without being kept.
        for flag in [0x08, 0x10] {
            if flags & flag != 0 {
                while self.need("header")? != 0 {}
            }
        }
        if flags & 0x02 != 0 {
            self.skip(2, "header")?;
        }
        Ok(())
    }

    /// The trailer of the member whose data just ended.
    fn trailer(&mut self) -> Result<(), Error> {
        let offset = self.consumed;
        let stored = self.u32_le("trailer")?;
        let size = self.u32_le("trailer")?;
        let computed = self.crc.sum();
        if stored != computed {
            return Err(Error::Crc {
                member: self.member,
                offset,
                stored,
                computed,
            });
        }
        // ISIZE is the length modulo 2^32.
        if u64::from(size) != self.member_out & 0xffff_ffff {
            return Err(Error::Size {
                member: self.member,
                offset,
                stored: size,
                actual: self.member_out,
            });
        }
        Ok(())
    }

    /// The magic of the next member, `false` at the end of the input.
    fn next_member(&mut self) -> Result<bool, Error> {
        let offset = self.consumed;
        let trailing = Error::Trailing {
            offset,
            members: self.member,
        };
        match self.byte()? {
            None if self.state == State::First => Err(self.truncated("header")),
            None => Ok(false),
            Some(0x1f) => match self.byte()? {
                Some(0x8b) => Ok(true),
                None => {
                    if self.state == State::Between {
                        self.member += 1;
                    }
                    Err(self.truncated("header"))
                }
                _ if self.state == State::First => Err(Error::Header {
                    member: 1,
                    offset,
                    reason: "no gzip magic (1f 8b)".into(),
                }),
                _ => Err(trailing),
            },
            Some(_) if self.state == State::First => Err(Error::Header {
                member: 1,
                offset,
                reason: "no gzip magic (1f 8b)".into(),
            }),
            Some(_) => Err(trailing),
        }
    }

    fn limit(&self) -> u64 {
        self.fixed
            .unwrap_or_else(|| self.options.limit.bytes_for(self.consumed))
    }

    /// Decompresses into `out` (not empty); 0 only at the end of the last member.
    fn fill(&mut self, out: &mut [u8]) -> Result<usize, Error> {
        loop {
            match self.state {
                State::Done | State::Failed => return Ok(0),
                State::First | State::Between => {
                    if !self.next_member()? {
                        self.state = State::Done;
                        return Ok(0);
                    }
                    if self.state == State::Between {
                        self.member += 1;
                    }
                    self.header()?;
                    self.data_start = self.consumed;
                    self.inflate.reset(false);
                    self.crc.reset();
                    self.member_out = 0;
                    self.state = State::Data;
                }
                State::Data => {
                    // No more than one byte past the limit, so that a bomb stops there.
                    let room = self.limit().saturating_sub(self.inflated).saturating_add(1);
                    let room = usize::try_from(room).unwrap_or(usize::MAX).min(out.len());
                    let out = out.get_mut(..room).unwrap_or_default();
                    let input = loop {
                        match self.inner.fill_buf() {
                            Ok(buf) => break buf,
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => return Err(Error::Io(e)),
                        }
                    };
                    let eof = input.is_empty();
                    let (in_before, out_before) =
                        (self.inflate.total_in(), self.inflate.total_out());
                    let flush = if eof {
                        FlushDecompress::Finish
                    } else {
                        FlushDecompress::None
                    };
                    let status =
                        self.inflate
                            .decompress(input, out, flush)
                            .map_err(|e| Error::Deflate {
                                member: self.member,
                                offset: self.data_start,
                                reason: e.to_string(),
                            })?;
                    let used = usize::try_from(self.inflate.total_in() - in_before).unwrap_or(0);
                    let made = usize::try_from(self.inflate.total_out() - out_before).unwrap_or(0);
                    self.inner.consume(used);
                    self.consumed += used as u64;
                    let made_bytes = out.get(..made).unwrap_or_default();
                    self.crc.update(made_bytes);
                    self.member_out += made as u64;
                    self.inflated += made as u64;
                    let limit = self.limit();
                    if self.inflated > limit {
                        return Err(Error::TooLarge {
                            limit,
                            how: self.options.limit.to_string(),
                            offset: self.consumed,
                            hint: self.options.hint.clone(),
                        });
                    }
                    if status == Status::StreamEnd {
                        self.trailer()?;
                        self.state = State::Between;
                    }
                    if made > 0 {
                        return Ok(made);
                    }
                    if status == Status::StreamEnd {
                        continue;
                    }
                    if eof {
                        return Err(self.truncated("data"));
                    }
                    if used == 0 {
                        // Input and room were both there: deflate cannot go on.
                        return Err(Error::Deflate {
                            member: self.member,
                            offset: self.data_start,
                            reason: "the data stops making progress".into(),
                        });
                    }
                }
            }
        }
    }
}

impl<R: BufRead> Read for GzipReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.state == State::Failed {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                self.failure.clone(),
            ));
        }
        self.fill(buf).map_err(|e| {
            self.state = State::Failed;
            self.failure = e.to_string();
            e.into()
        })
    }
}

#[cfg(test)]
mod tests;

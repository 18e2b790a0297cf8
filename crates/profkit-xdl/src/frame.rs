//! Frames: the data file's only structure, a 4-byte little-endian length and that many bytes.
//!
//! [`FrameReader`] yields frames from any `Read`, checking each declared length against
//! [`ReadOptions::max_frame_size`] before reading anything for it; [`FrameWriter`] writes them.
//! Neither knows what the frames hold (the header, then records): see [`crate::DataReader`].

use std::io::{BufRead, BufReader, Read, Write};

use bytes::Bytes;

use crate::error::{Error, Result};

/// Bytes in a frame's length prefix.
pub const LENGTH_PREFIX: u64 = 4;

/// The default limit on one frame: 1 GiB. A record holds every traced tensor of one step, so
/// frames of hundreds of megabytes are legitimate; the buffer for a frame grows with the bytes that
/// actually arrive, so a corrupt length under the limit costs no more memory than the file holds.
pub const DEFAULT_MAX_FRAME_SIZE: u64 = 1 << 30;

/// How much of a frame's declared length is reserved up front; larger frames grow as they arrive.
/// Frames up to this size are read straight into a buffer of the right size, without a copy.
const PREALLOCATE: u64 = 16 << 20;

/// Alignment given to the data of a record frame's first large column (the widest element size).
const ALIGN: usize = 8;

/// Record frames at least this long are placed so that their first column of at least this many
/// bytes is aligned; smaller ones are not worth the look.
const ALIGN_MIN: u64 = 256;

/// Settings for reading data files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The largest frame accepted, in bytes (the length prefix not counted).
    pub max_frame_size: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
        }
    }
}

impl ReadOptions {
    /// Options with the given frame size limit.
    pub fn with_max_frame_size(max_frame_size: u64) -> Self {
        ReadOptions { max_frame_size }
    }
}

/// One frame of a data file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The frame's position in the file: 0 is the header, 1 the first record.
    pub index: u64,
    /// Byte offset of the frame's length prefix in the file.
    pub offset: u64,
    /// The frame's body (an encoded Header or Record).
    pub data: Bytes,
}

impl Frame {
    /// Byte offset of the body, just after the length prefix.
    pub fn body_offset(&self) -> u64 {
        self.offset + LENGTH_PREFIX
    }

    /// Bytes the frame occupies in the file, prefix included.
    pub fn encoded_len(&self) -> u64 {
        LENGTH_PREFIX + self.data.len() as u64
    }
}

/// Reads frames one at a time. After the first error the iterator ends.
///
/// A clean end of input between frames ends the iteration; an end inside a length prefix or a body
/// yields [`Error::Truncated`] (see [`Error::is_truncation`]) after every complete frame.
///
/// ```
/// use profkit_xdl::{FrameReader, FrameWriter, ReadOptions};
/// let mut w = FrameWriter::new(Vec::new());
/// w.write_frame(b"first")?;
/// w.write_frame(b"second")?;
/// let mut bytes = w.into_inner();
/// bytes.truncate(bytes.len() - 2);
/// let mut frames = FrameReader::new(&bytes[..], ReadOptions::default());
/// assert_eq!(&frames.next().unwrap()?.data[..], b"first");
/// let cut = frames.next().unwrap().unwrap_err();
/// assert!(cut.is_truncation());
/// assert_eq!(cut.to_string(), "truncated at byte 17: frame 1 (starting at byte 9) needs 2 more bytes");
/// # Ok::<(), profkit_xdl::Error>(())
/// ```
pub struct FrameReader<R> {
    reader: BufReader<R>,
    options: ReadOptions,
    offset: u64,
    index: u64,
    done: bool,
}

impl<R: Read> FrameReader<R> {
    /// A reader over `reader`, positioned at the start of a data file.
    pub fn new(reader: R, options: ReadOptions) -> Self {
        FrameReader {
            reader: BufReader::with_capacity(1 << 16, reader),
            options,
            offset: 0,
            index: 0,
            done: false,
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The index the next frame will have.
    pub fn next_index(&self) -> u64 {
        self.index
    }

    /// The options in force.
    pub fn options(&self) -> ReadOptions {
        self.options
    }

    fn read_frame(&mut self) -> Result<Option<Frame>> {
        let frame_offset = self.offset;
        let mut prefix = [0u8; 4];
        let got = read_up_to(&mut self.reader, &mut prefix)?;
        self.offset += got as u64;
        if got == 0 {
            return Ok(None);
        }
        if got < prefix.len() {
            return Err(Error::Truncated {
                offset: self.offset,
                frame: self.index,
                frame_offset,
                needed: (prefix.len() - got) as u64,
            });
        }
        let len = u64::from(u32::from_le_bytes(prefix));
        if len > self.options.max_frame_size {
            return Err(Error::FrameTooLarge {
                frame: self.index,
                offset: frame_offset,
                size: len,
                limit: self.options.max_frame_size,
            });
        }
        // Where a record's first large column starts, from the bytes already buffered: the body
        // is then placed so that those elements are aligned, and typed access can borrow them.
        let data_offset = if self.index > 0 && len >= ALIGN_MIN {
            let visible = self.reader.fill_buf()?;
            let visible = visible.get(..len as usize).unwrap_or(visible);
            crate::wire::first_large_data_offset(visible, ALIGN_MIN)
        } else {
            None
        };
        // Without a column to align, the capacity is exact, so that `Bytes` takes the buffer
        // over without another allocation.
        let slack = if data_offset.is_some() { ALIGN } else { 0 };
        let mut body = Vec::with_capacity(len.min(PREALLOCATE) as usize + slack);
        let pad = data_offset.map_or(0, |at| {
            (ALIGN - (body.as_ptr() as usize + at) % ALIGN) % ALIGN
        });
        body.resize(pad, 0);
        let read = (&mut self.reader).take(len).read_to_end(&mut body)? as u64;
        self.offset += read;
        if read < len {
            return Err(Error::Truncated {
                offset: self.offset,
                frame: self.index,
                frame_offset,
                needed: len - read,
            });
        }
        let frame = Frame {
            index: self.index,
            offset: frame_offset,
            data: Bytes::from(body).slice(pad..),
        };
        self.index += 1;
        Ok(Some(frame))
    }
}

/// Fills `buf` as far as the input allows; returns how many bytes were read.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl<R: Read> Iterator for FrameReader<R> {
    type Item = Result<Frame>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.read_frame() {
            Ok(Some(frame)) => Some(Ok(frame)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<R: Read> std::iter::FusedIterator for FrameReader<R> {}

/// Writes frames: a 4-byte little-endian length, then the bytes.
pub struct FrameWriter<W> {
    writer: W,
    written: u64,
    frames: u64,
}

impl<W: Write> FrameWriter<W> {
    /// A writer at the start of a data file.
    pub fn new(writer: W) -> Self {
        FrameWriter {
            writer,
            written: 0,
            frames: 0,
        }
    }

    /// Writes one frame; returns the bytes it took, prefix included. A body of 4 GiB or more cannot
    /// be framed and is refused.
    pub fn write_frame(&mut self, body: &[u8]) -> Result<u64> {
        let prefix = frame_prefix(body.len(), self.frames, self.written)?;
        self.writer.write_all(&prefix)?;
        self.writer.write_all(body)?;
        let n = LENGTH_PREFIX + body.len() as u64;
        self.written += n;
        self.frames += 1;
        Ok(n)
    }

    /// Encodes `message` and writes it as one frame.
    pub fn write_message(&mut self, message: &impl prost::Message) -> Result<u64> {
        self.write_frame(&message.encode_to_vec())
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Frames written so far.
    pub fn frames_written(&self) -> u64 {
        self.frames
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> Result<()> {
        self.writer.flush()?;
        Ok(())
    }

    /// The underlying writer (not flushed).
    pub fn into_inner(self) -> W {
        self.writer
    }
}

/// The length prefix for a body of `len` bytes, or an error when it does not fit in 32 bits.
pub(crate) fn frame_prefix(len: usize, frame: u64, offset: u64) -> Result<[u8; 4]> {
    let len32 = u32::try_from(len).map_err(|_| Error::FrameTooLarge {
        frame,
        offset,
        size: len as u64,
        limit: u64::from(u32::MAX),
    })?;
    Ok(len32.to_le_bytes())
}

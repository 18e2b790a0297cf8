//! Data files: a Header frame, then one Record frame per traced step.

use std::io::Read;
use std::path::Path;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::frame::{Frame, FrameReader, ReadOptions};
use crate::proto::{Column, Header, Record};
use crate::source::FileSource;
use crate::wire::{self, Msg};

/// Decodes a Header message (the body of a data file's first frame).
pub fn decode_header(bytes: impl Into<Bytes>) -> Result<Header> {
    wire::decode(Msg::Header, bytes.into(), 0, None)
}

/// Decodes a Record message (the body of a record frame). Column data shares `bytes`' buffer.
pub fn decode_record(bytes: impl Into<Bytes>) -> Result<Record> {
    wire::decode(Msg::Record, bytes.into(), 0, None)
}

/// Decodes the header frame, with errors located in the file.
pub fn decode_header_frame(frame: &Frame) -> Result<Header> {
    wire::decode(
        Msg::Header,
        frame.data.clone(),
        frame.body_offset(),
        Some(frame.index),
    )
}

/// Decodes a record frame, with errors located in the file.
pub fn decode_record_frame(frame: &Frame) -> Result<Record> {
    wire::decode(
        Msg::Record,
        frame.data.clone(),
        frame.body_offset(),
        Some(frame.index),
    )
}

/// Encodes a Header message.
pub fn encode_header(header: &Header) -> Vec<u8> {
    prost::Message::encode_to_vec(header)
}

/// Encodes a Record message.
pub fn encode_record(record: &Record) -> Vec<u8> {
    prost::Message::encode_to_vec(record)
}

impl Header {
    /// A header with these keys.
    pub fn new<S: Into<String>>(keys: impl IntoIterator<Item = S>) -> Header {
        Header {
            key: keys.into_iter().map(Into::into).collect(),
        }
    }
}

impl Record {
    /// A record of one step.
    pub fn new(gstep: i64, lstep: i64, timestamp: i64, columns: Vec<Column>) -> Record {
        Record {
            gstep,
            lstep,
            column: columns,
            timestamp,
        }
    }

    /// The columns paired with the header's keys, in order.
    pub fn columns_with_keys<'a>(
        &'a self,
        header: &'a Header,
    ) -> impl Iterator<Item = (&'a str, &'a Column)> + 'a {
        header
            .key
            .iter()
            .map(String::as_str)
            .zip(self.column.iter())
    }

    /// The column for `key`, if the header has it.
    pub fn column_for<'a>(&'a self, header: &Header, key: &str) -> Option<&'a Column> {
        self.column_named(&header.key, key)
    }

    /// The column for `key` among `keys`, a header's keys in order (as [`DataReader::keys`] and
    /// [`crate::DatasetReader::keys`] give them); `None` when no key is `key` (or the record has
    /// fewer columns than keys).
    pub fn column_named<'a, K: AsRef<str>>(&'a self, keys: &[K], key: &str) -> Option<&'a Column> {
        let i = keys.iter().position(|k| k.as_ref() == key)?;
        self.column.get(i)
    }

    /// Checks the record against its header: one column per key, each column valid. Errors name
    /// the column.
    pub fn check(&self, header: &Header) -> Result<()> {
        if self.column.len() != header.key.len() {
            return Err(Error::ColumnCount {
                expected: header.key.len(),
                found: self.column.len(),
            });
        }
        for (i, column) in self.column.iter().enumerate() {
            column.check().map_err(|e| Error::Column {
                index: i,
                key: header.key.get(i).cloned().unwrap_or_default(),
                source: Box::new(e),
            })?;
        }
        Ok(())
    }
}

/// Reads a data file: the header on creation, then records as an iterator. After the first error
/// the iterator ends; a [truncation](Error::is_truncation) comes after every complete record.
///
/// ```
/// use profkit_xdl::{Column, DataReader, FrameWriter, Header, ReadOptions, Record};
/// let mut w = FrameWriter::new(Vec::new());
/// w.write_message(&Header::new(["loss"]))?;
/// w.write_message(&Record::new(101, 1, 1_700_000_000_000, vec![Column::scalar(0.5f64)]))?;
/// let bytes = w.into_inner();
/// let mut reader = DataReader::new(&bytes[..], ReadOptions::default())?;
/// assert_eq!(reader.keys(), ["loss"]);
/// let record = reader.next().unwrap()?;
/// assert_eq!(record.column[0].values::<f64>()?[0], 0.5);
/// # Ok::<(), profkit_xdl::Error>(())
/// ```
pub struct DataReader<R> {
    frames: FrameReader<R>,
    header: Option<Header>,
    records: u64,
    failed: bool,
}

impl DataReader<FileSource> {
    /// Opens a data file, gzipped or not (see [`FileSource`]). Errors, including those of later
    /// records, do not name the file: wrap them with [`Error::in_file`].
    pub fn open(path: impl AsRef<Path>, options: ReadOptions) -> Result<DataReader<FileSource>> {
        let path = path.as_ref();
        let file = FileSource::open(path).map_err(|e| Error::from(e).in_file(path))?;
        DataReader::new(file, options).map_err(|e| e.in_file(path))
    }
}

impl<R: Read> DataReader<R> {
    /// Reads the header frame. An empty input (what the original writer left when no record was
    /// traced) has no header and no records.
    pub fn new(reader: R, options: ReadOptions) -> Result<Self> {
        let mut frames = FrameReader::new(reader, options);
        let header = match frames.next() {
            None => None,
            Some(frame) => Some(decode_header_frame(&frame?)?),
        };
        Ok(DataReader {
            frames,
            header,
            records: 0,
            failed: false,
        })
    }

    /// The header, or `None` for an empty file.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The header's keys (none for an empty file).
    pub fn keys(&self) -> &[String] {
        self.header
            .as_ref()
            .map(|h| h.key.as_slice())
            .unwrap_or_default()
    }

    /// The column of `record`, one of this file's records, for the traced key `key` (`None` when
    /// the header has no such key).
    pub fn column<'r>(&self, record: &'r Record, key: &str) -> Option<&'r Column> {
        record.column_named(self.keys(), key)
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.frames.offset()
    }

    /// Records read so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// The next record together with the frame it was decoded from (whose bytes it shares).
    pub fn next_with_frame(&mut self) -> Option<Result<(Frame, Record)>> {
        if self.failed {
            return None;
        }
        let result = match self.frames.next()? {
            Ok(frame) => decode_record_frame(&frame).map(|record| (frame, record)),
            Err(e) => Err(e),
        };
        match &result {
            Ok(_) => self.records += 1,
            // A record that does not decode ends the file as surely as a bad frame does.
            Err(_) => self.failed = true,
        }
        Some(result)
    }
}

impl<R: Read> std::iter::FusedIterator for DataReader<R> {}

impl<R: Read> Iterator for DataReader<R> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with_frame().map(|r| r.map(|(_, record)| record))
    }
}

/// Whether `prefix` (the first bytes of a file, any length) looks like the start of a data file:
/// a 4-byte length, then a Header whose every field in the prefix is a `key` string of valid UTF-8
/// and, when the prefix goes past the header, the start of a record frame. A quick content check
/// for format detection, not a validation; an empty file is not recognised (it holds nothing).
pub fn looks_like_data_file(prefix: &[u8]) -> bool {
    let Some((len_bytes, rest)) = prefix.split_first_chunk::<4>() else {
        return false;
    };
    let len = u32::from_le_bytes(*len_bytes) as usize;
    // A header with no key would be 0 bytes, one with a key at least 2.
    if !(2..=16 << 20).contains(&len) {
        return false;
    }
    let body = rest.get(..len).unwrap_or(rest);
    let mut pos = 0usize;
    while pos < body.len() {
        if body.get(pos) != Some(&0x0a) {
            return false;
        }
        pos += 1;
        let mut key_len: u64 = 0;
        let mut shift = 0;
        loop {
            let Some(&b) = body.get(pos) else { return true };
            pos += 1;
            key_len |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
            if shift > 28 {
                return false;
            }
        }
        let end = pos.saturating_add(key_len as usize);
        let key = body.get(pos..end.min(body.len())).unwrap_or_default();
        match std::str::from_utf8(key) {
            Ok(_) => {}
            // A multi-byte character cut by the end of the prefix is fine.
            Err(e) if e.error_len().is_none() && end > body.len() => {}
            Err(_) => return false,
        }
        if end > len {
            return false;
        }
        pos = end;
    }
    // After a complete header: a record frame whose body starts with a Record field.
    match rest.get(len..).and_then(|r| r.get(4)) {
        Some(tag) => matches!(tag, 0x08 | 0x10 | 0x1a | 0x20),
        None => true,
    }
}

/// Whether `bytes` (a whole file) could be a meta file: a non-empty sequence of varint fields
/// numbered 1 to 6, nothing else.
pub fn looks_like_meta(bytes: &[u8]) -> bool {
    if bytes.is_empty() || bytes.len() as u64 > crate::meta::MAX_META_SIZE {
        return false;
    }
    let mut pos = 0usize;
    while pos < bytes.len() {
        let Some(&tag) = bytes.get(pos) else {
            return false;
        };
        if !matches!(tag, 0x08 | 0x10 | 0x18 | 0x20 | 0x28 | 0x30) {
            return false;
        }
        pos += 1;
        for i in 0..10 {
            let Some(&b) = bytes.get(pos) else {
                return false;
            };
            pos += 1;
            if b & 0x80 == 0 {
                break;
            }
            if i == 9 {
                return false;
            }
        }
    }
    true
}

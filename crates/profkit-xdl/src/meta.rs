//! Meta files: one bare `Meta` message (no length prefix) beside each data file, at
//! `<data file>.meta`, giving the steps and timestamps of the file's first and last record.
//!
//! Every field starts at -1, so a data file without records has an all -1 meta. The original
//! writer filled the `*_begin` fields lazily, at a file's second record: when the last file of a
//! dataset holds a single record, its meta has `lstep_begin = gstep_begin = timestamp_begin = -1`.
//! [`check_meta`] accepts that; [`MetaTracker`] (and so our writer) computes the right values.

use std::io::Read;
use std::path::Path;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::proto::{Meta, Record};
use crate::wire::{self, Msg};

/// The most bytes read from a meta file. A Meta is at most 66 bytes; the rest is slack for unknown
/// fields a newer writer might add.
pub const MAX_META_SIZE: u64 = 64 << 10;

impl Meta {
    /// The meta of a data file without records: every field -1, as the original writer starts them.
    pub const UNSET: Meta = Meta {
        lstep_begin: -1,
        lstep_end: -1,
        gstep_begin: -1,
        gstep_end: -1,
        timestamp_begin: -1,
        timestamp_end: -1,
    };

    /// Whether this is the original writer's lazy-begin quirk: every `*_begin` is -1 while the
    /// `*_end` fields are set.
    pub fn has_unset_begin(&self) -> bool {
        self.lstep_begin == -1
            && self.gstep_begin == -1
            && self.timestamp_begin == -1
            && (self.lstep_end != -1 || self.gstep_end != -1 || self.timestamp_end != -1)
    }

    /// The six fields with their schema names, in field order.
    pub fn fields(&self) -> [(&'static str, i64); 6] {
        [
            ("lstep_begin", self.lstep_begin),
            ("lstep_end", self.lstep_end),
            ("gstep_begin", self.gstep_begin),
            ("gstep_end", self.gstep_end),
            ("timestamp_begin", self.timestamp_begin),
            ("timestamp_end", self.timestamp_end),
        ]
    }
}

/// Computes a data file's meta from its records, in order.
///
/// ```
/// use profkit_xdl::{Meta, MetaTracker, Record};
/// let mut t = MetaTracker::new();
/// assert_eq!(t.meta(), Meta::UNSET);
/// for (lstep, gstep) in [(1, 101), (2, 102)] {
///     t.add(&Record { lstep, gstep, timestamp: 1_700_000_000_000 + lstep, ..Default::default() });
/// }
/// assert_eq!((t.meta().lstep_begin, t.meta().gstep_end, t.records()), (1, 102, 2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetaTracker {
    meta: Meta,
    records: u64,
}

impl Default for MetaTracker {
    fn default() -> Self {
        MetaTracker::new()
    }
}

impl MetaTracker {
    /// A tracker that has seen no record.
    pub fn new() -> Self {
        MetaTracker {
            meta: Meta::UNSET,
            records: 0,
        }
    }

    /// Accounts for the next record.
    pub fn add(&mut self, record: &Record) {
        self.add_steps(record.lstep, record.gstep, record.timestamp);
    }

    /// Accounts for the next record, given its steps and timestamp.
    pub fn add_steps(&mut self, lstep: i64, gstep: i64, timestamp: i64) {
        if self.records == 0 {
            self.meta.lstep_begin = lstep;
            self.meta.gstep_begin = gstep;
            self.meta.timestamp_begin = timestamp;
        }
        self.meta.lstep_end = lstep;
        self.meta.gstep_end = gstep;
        self.meta.timestamp_end = timestamp;
        self.records += 1;
    }

    /// The meta of the records seen so far.
    pub fn meta(&self) -> Meta {
        self.meta
    }

    /// How many records were seen.
    pub fn records(&self) -> u64 {
        self.records
    }
}

/// Computes the correct meta of a data file read from `reader`, whatever its `.meta` says, and the
/// number of records. Fails on the first record that cannot be read (a truncated file included).
///
/// ```
/// use profkit_xdl::{FrameWriter, Header, Record, ReadOptions, meta::compute_meta};
/// let mut w = FrameWriter::new(Vec::new());
/// w.write_message(&Header::new(["x"]))?;
/// w.write_message(&Record { lstep: 7, gstep: 107, ..Default::default() })?;
/// let (meta, records) = compute_meta(&w.into_inner()[..], ReadOptions::default())?;
/// assert_eq!((meta.lstep_begin, meta.lstep_end, meta.gstep_begin, records), (7, 7, 107, 1));
/// # Ok::<(), profkit_xdl::Error>(())
/// ```
pub fn compute_meta<R: Read>(reader: R, options: crate::ReadOptions) -> Result<(Meta, u64)> {
    let mut tracker = MetaTracker::new();
    for record in crate::DataReader::new(reader, options)? {
        tracker.add(&record?);
    }
    Ok((tracker.meta(), tracker.records()))
}

/// Decodes a bare Meta message.
pub fn decode_meta(bytes: impl Into<Bytes>) -> Result<Meta> {
    wire::decode(Msg::Meta, bytes.into(), 0, None)
}

/// Encodes a Meta message (the whole content of a meta file).
pub fn encode_meta(meta: &Meta) -> Vec<u8> {
    prost::Message::encode_to_vec(meta)
}

/// Whether a path is named as a meta file (`*.meta`, or gzipped `*.meta.gz`).
pub fn is_meta_path(path: impl AsRef<Path>) -> bool {
    let name = path.as_ref().to_string_lossy();
    name.strip_suffix(".gz").unwrap_or(&name).ends_with(".meta")
}

/// Reads and decodes a meta file, gzipped or not (see [`crate::FileSource`]). Errors name the
/// file.
pub fn read_meta_file(path: impl AsRef<Path>) -> Result<Meta> {
    let path = path.as_ref();
    let inner = || -> Result<Meta> {
        let mut buf = Vec::new();
        crate::FileSource::open(path)?
            .take(MAX_META_SIZE + 1)
            .read_to_end(&mut buf)?;
        if buf.len() as u64 > MAX_META_SIZE {
            return Err(Error::Malformed {
                offset: 0,
                frame: None,
                path: "Meta".into(),
                reason: format!(
                    "a meta file of more than {MAX_META_SIZE} bytes is not a meta file"
                ),
            });
        }
        decode_meta(buf)
    };
    inner().map_err(|e| e.in_file(path))
}

/// Writes a meta file, replacing it.
pub fn write_meta_file(path: impl AsRef<Path>, meta: &Meta) -> Result<()> {
    let path = path.as_ref();
    std::fs::write(path, encode_meta(meta)).map_err(|e| Error::from(e).in_file(path))
}

/// How a stored meta compares with the one computed from its data file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetaCheck {
    /// Every field agrees.
    Agrees,
    /// The fields agree except the `*_begin` ones, which are -1: the original writer's quirk for a
    /// last file holding one record.
    AgreesWithQuirk,
    /// Some fields disagree: `(field, stored, computed)`.
    Disagrees(Vec<(&'static str, i64, i64)>),
}

/// Compares a stored meta with the one computed from the data file's records. `records` is how
/// many records the file holds; `may_be_last` says whether the file can be the last of its dataset
/// (the only place the original writer left the quirk).
pub fn check_meta(stored: &Meta, computed: &Meta, records: u64, may_be_last: bool) -> MetaCheck {
    if stored == computed {
        return MetaCheck::Agrees;
    }
    if records == 1 && may_be_last && stored.has_unset_begin() {
        let fixed = Meta {
            lstep_begin: computed.lstep_begin,
            gstep_begin: computed.gstep_begin,
            timestamp_begin: computed.timestamp_begin,
            ..*stored
        };
        if &fixed == computed {
            return MetaCheck::AgreesWithQuirk;
        }
    }
    let diffs = stored
        .fields()
        .into_iter()
        .zip(computed.fields())
        .filter(|((_, s), (_, c))| s != c)
        .map(|((name, s), (_, c))| (name, s, c))
        .collect();
    MetaCheck::Disagrees(diffs)
}

//! Datasets: the files one trace writer (one worker, one phase) leaves in a directory.
//!
//! The original writer names its files `<train|test>.<output_file_name>.<rank>.<file_index>`, with
//! the meta of each at the same name plus `.meta`: `train.trace.0.5.meta` is rank 0's fifth meta
//! file. File indices start at 1. Every data file starts with the same header, so the files of a
//! rank, read in index order, are one stream of records.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::data::DataReader;
use crate::error::{Error, Result};
use crate::frame::{Frame, ReadOptions};
use crate::proto::Record;
use crate::source::{FileSource, strip_gz};

/// The first part of a file name: whether the writer traced training or testing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// `train`: a training session.
    Train,
    /// `test`: an evaluation session.
    Test,
}

impl Phase {
    /// The file-name prefix.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Train => "train",
            Phase::Test => "test",
        }
    }

    /// The phase for a file-name prefix.
    pub fn from_prefix(prefix: &str) -> Option<Phase> {
        match prefix {
            "train" => Some(Phase::Train),
            "test" => Some(Phase::Test),
            _ => None,
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What names a dataset: phase, output file name and rank, as in `train.trace.0`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DatasetId {
    /// `train` or `test`.
    pub phase: Phase,
    /// The writer's `output_file_name` (default `trace`); may contain dots.
    pub name: String,
    /// The worker's rank (task index).
    pub rank: u64,
}

impl DatasetId {
    /// The id `<phase>.<name>.<rank>`.
    pub fn new(phase: Phase, name: impl Into<String>, rank: u64) -> DatasetId {
        DatasetId {
            phase,
            name: name.into(),
            rank,
        }
    }

    /// The name of data file `index`: `train.trace.0.5`.
    pub fn data_file_name(&self, index: u64) -> String {
        format!("{self}.{index}")
    }

    /// The name of meta file `index`: `train.trace.0.5.meta`.
    pub fn meta_file_name(&self, index: u64) -> String {
        format!("{self}.{index}.meta")
    }
}

impl fmt::Display for DatasetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.phase, self.name, self.rank)
    }
}

/// A file name taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileName {
    /// The dataset it belongs to.
    pub id: DatasetId,
    /// Its file index (from 1).
    pub index: u64,
    /// Whether it is a meta file.
    pub is_meta: bool,
    /// Whether the name ends in `.gz` (a gzipped file; the content decides, whatever the name).
    pub gzip: bool,
}

/// A canonical decimal number: no sign, no leading zero (so that the name written back is the same).
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

/// Parses a data or meta file name (`train.trace.0.5`, `test.my.trace.3.1.meta`), plain or with
/// `.gz` after it (`train.trace.0.5.gz`, `train.trace.0.5.meta.gz`).
pub fn parse_file_name(name: &str) -> Option<FileName> {
    let (name, gzip) = strip_gz(name);
    let (stem, is_meta) = match name.strip_suffix(".meta") {
        Some(stem) => (stem, true),
        None => (name, false),
    };
    let (rest, index) = stem.rsplit_once('.')?;
    let (rest, rank) = rest.rsplit_once('.')?;
    let (phase, trace_name) = rest.split_once('.')?;
    let index = number(index)?;
    if index == 0 || trace_name.is_empty() {
        return None;
    }
    Some(FileName {
        id: DatasetId::new(Phase::from_prefix(phase)?, trace_name, number(rank)?),
        index,
        is_meta,
        gzip,
    })
}

/// The files of one dataset under one index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetFile {
    /// The file index (from 1).
    pub index: u64,
    /// The data file, if present.
    pub data: Option<PathBuf>,
    /// The meta file, if present.
    pub meta: Option<PathBuf>,
}

/// One dataset: the files of one phase, name and rank in a directory, by index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    /// The directory holding the files.
    pub dir: PathBuf,
    /// Phase, name and rank.
    pub id: DatasetId,
    /// The files, in index order. Indices may have gaps (see [`crate::validate`]).
    pub files: Vec<DatasetFile>,
    /// Whether `files` holds every file of the dataset in `dir`; false when one file was asked for.
    pub whole: bool,
}

impl Dataset {
    /// The data files present, in index order.
    pub fn data_files(&self) -> impl Iterator<Item = (u64, &Path)> {
        self.files
            .iter()
            .filter_map(|f| f.data.as_deref().map(|p| (f.index, p)))
    }

    /// Reads the data files in index order as one stream of records.
    pub fn records(&self, options: ReadOptions) -> DatasetReader {
        DatasetReader::new(
            self.data_files()
                .map(|(i, p)| (i, p.to_path_buf()))
                .collect(),
            options,
        )
    }
}

/// Which file names of a directory a discovery keeps.
type NameFilter = Box<dyn Fn(&str) -> bool>;

/// Finds the datasets at `path`, sorted by phase, name and rank:
/// - a directory: every dataset in it;
/// - a data or meta file: that file's index of its dataset (with its partner file if present,
///   gzipped or not);
/// - otherwise a path prefix `dir/start`: the datasets in `dir` whose file names start with
///   `start.` (so `out/train` selects every training dataset and `out/train.trace.3` rank 3's).
///
/// Files whose names do not follow the naming scheme are ignored; finding no dataset is an error.
/// Data and meta files may be gzipped (named with `.gz` after the plain name, or not: the content
/// decides when they are read); where a file is there both plain and gzipped, the plain one is
/// used.
pub fn discover(path: impl AsRef<Path>) -> Result<Vec<Dataset>> {
    let path = path.as_ref();
    let io = |e: std::io::Error| Error::Dataset {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let meta = std::fs::metadata(path);
    let whole = !meta.as_ref().is_ok_and(|m| !m.is_dir());
    let (dir, filter): (PathBuf, NameFilter) = match &meta {
        Ok(m) if m.is_dir() => (path.to_path_buf(), Box::new(|_| true)),
        Ok(_) => {
            let name = file_name(path).ok_or_else(|| Error::Dataset {
                path: path.to_path_buf(),
                reason: "not a file name".into(),
            })?;
            let parsed = parse_file_name(&name).ok_or_else(|| Error::Dataset {
                path: path.to_path_buf(),
                reason: "not an XDL trace file name (<train|test>.<name>.<rank>.<index>[.meta])"
                    .into(),
            })?;
            let stem = parsed.id.data_file_name(parsed.index);
            (
                parent(path),
                Box::new(move |n: &str| {
                    let n = strip_gz(n).0;
                    n == stem || n.strip_suffix(".meta") == Some(stem.as_str())
                }),
            )
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let start = file_name(path)
                .ok_or_else(|| io(std::io::Error::from(std::io::ErrorKind::NotFound)))?;
            let start = format!("{start}.");
            (parent(path), Box::new(move |n: &str| n.starts_with(&start)))
        }
        Err(e) => return Err(io(std::io::Error::new(e.kind(), e.to_string()))),
    };
    let mut found: BTreeMap<DatasetId, BTreeMap<u64, DatasetFile>> = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if !filter(&name) {
            continue;
        }
        let Some(parsed) = parse_file_name(&name) else {
            continue;
        };
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        let slot = found
            .entry(parsed.id)
            .or_default()
            .entry(parsed.index)
            .or_insert_with(|| DatasetFile {
                index: parsed.index,
                data: None,
                meta: None,
            });
        let file = if parsed.is_meta {
            &mut slot.meta
        } else {
            &mut slot.data
        };
        // A file kept both plain and gzipped: the plain one is read (the same content, cheaper).
        let plain_there = file
            .as_deref()
            .and_then(file_name)
            .is_some_and(|n| !n.ends_with(crate::source::GZ_SUFFIX));
        if !(parsed.gzip && plain_there) {
            *file = Some(entry.path());
        }
    }
    if found.is_empty() {
        return Err(Error::Dataset {
            path: path.to_path_buf(),
            reason: "no XDL trace files (<train|test>.<name>.<rank>.<index>) found".into(),
        });
    }
    Ok(found
        .into_iter()
        .map(|(id, files)| Dataset {
            dir: dir.clone(),
            id,
            files: files.into_values().collect(),
            whole,
        })
        .collect())
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name().and_then(|n| n.to_str()).map(str::to_owned)
}

fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Reads a dataset's data files in index order as one stream of records.
///
/// The first file's header gives the keys; a later file with other keys yields
/// [`Error::HeaderMismatch`]. An error ends its file only: iteration goes on with the next file, so
/// a file cut short (see [`Error::is_truncation`]) loses nothing but its own tail. Errors name the
/// file. Empty data files (what the original writer left when nothing was traced) are skipped.
pub struct DatasetReader {
    pending: VecDeque<(u64, PathBuf)>,
    current: Option<(u64, PathBuf, DataReader<FileSource>)>,
    keys: Option<Vec<String>>,
    options: ReadOptions,
}

impl DatasetReader {
    /// A reader over these data files, `(index, path)`, in the order given.
    pub fn new(files: Vec<(u64, PathBuf)>, options: ReadOptions) -> DatasetReader {
        DatasetReader {
            pending: files.into(),
            current: None,
            keys: None,
            options,
        }
    }

    /// The header's keys: known once the first non-empty file was opened (by the first call to
    /// `next`, or by [`DatasetReader::open_next`]).
    pub fn keys(&self) -> Option<&[String]> {
        self.keys.as_deref()
    }

    /// The column of `record`, one of this dataset's records, for the traced key `key` (`None`
    /// when the header has no such key, or before the first record was read). Every file of a
    /// dataset has the same keys (a file that differs is an error), so this holds for any of its
    /// records.
    pub fn column<'r>(&self, record: &'r Record, key: &str) -> Option<&'r crate::Column> {
        record.column_named(self.keys()?, key)
    }

    /// The index and path of the file being read.
    pub fn current_file(&self) -> Option<(u64, &Path)> {
        self.current.as_ref().map(|(i, p, _)| (*i, p.as_path()))
    }

    /// Opens files until one has a header (or none is left). Returns an error for a file that
    /// cannot be opened or whose header is bad or differs; that file is then skipped.
    pub fn open_next(&mut self) -> Option<Result<()>> {
        while let Some((index, path)) = self.pending.pop_front() {
            let reader = match DataReader::open(&path, self.options) {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            let Some(header) = reader.header() else {
                continue;
            };
            match &self.keys {
                None => self.keys = Some(header.key.clone()),
                Some(keys) if *keys != header.key => {
                    return Some(Err(Error::HeaderMismatch {
                        expected: keys.clone(),
                        found: header.key.clone(),
                    }
                    .in_file(&path)));
                }
                Some(_) => {}
            }
            self.current = Some((index, path, reader));
            return Some(Ok(()));
        }
        None
    }

    /// The next record with the frame it came from.
    pub fn next_with_frame(&mut self) -> Option<Result<(Frame, Record)>> {
        loop {
            if let Some((_, path, reader)) = &mut self.current {
                match reader.next_with_frame() {
                    Some(Ok(item)) => return Some(Ok(item)),
                    Some(Err(e)) => {
                        let e = e.in_file(path.as_path());
                        self.current = None;
                        return Some(Err(e));
                    }
                    None => self.current = None,
                }
            }
            match self.open_next()? {
                Ok(()) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Iterator for DatasetReader {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with_frame().map(|r| r.map(|(_, record)| record))
    }
}

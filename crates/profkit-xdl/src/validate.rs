//! Checking data files and datasets: framing, header and records, column shapes against data,
//! meta files against their data, and the sequence of files.
//!
//! A check reads every frame and keeps going after a record that does not decode (frames are
//! length-prefixed, so the next one is still found); it stops at a frame it cannot delimit (a
//! truncated file or a corrupt length). Alongside the problems it reports what it saw, per file and
//! per key, which is what `profkit inspect` prints.

use std::collections::BTreeSet;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

use crate::column::DType;
use crate::data::{decode_header_frame, decode_record_frame};
use crate::dataset::{Dataset, DatasetId};
use crate::error::Error;
use crate::frame::{FrameReader, ReadOptions};
use crate::meta::{MetaCheck, MetaTracker, check_meta, read_meta_file};
use crate::proto::{Meta, Record};
use crate::source::FileSource;

/// How many distinct shapes a key summary lists before it only counts.
const MAX_SHAPES: usize = 8;

/// What kind of problem was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemKind {
    /// The file ends inside a frame; the records before it are complete.
    Truncated,
    /// A frame length is over the limit (a corrupt length, or not a data file).
    Framing,
    /// A header or record frame does not decode.
    Decode,
    /// A record's column count differs from the header's key count.
    ColumnCount,
    /// A column's dtype is unknown, its shape invalid, or its data of the wrong length.
    Column,
    /// A `Bool` column holds a byte other than 0 or 1.
    BoolValue,
    /// A data file's header differs from the dataset's first file's.
    HeaderMismatch,
    /// A data file is empty (no header) although the dataset has other files.
    EmptyFile,
    /// A data file has no meta file.
    MissingMeta,
    /// A meta file has no data file.
    MissingData,
    /// File indices do not run 1, 2, 3, ... without gaps.
    IndexGap,
    /// A meta file does not decode.
    MetaUnreadable,
    /// A meta file disagrees with its data file.
    MetaMismatch,
    /// A file could not be read.
    Io,
}

/// A problem, with where it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What kind of problem.
    pub kind: ProblemKind,
    /// The file, when known.
    #[serde(serialize_with = "opt_path")]
    pub file: Option<PathBuf>,
    /// The frame index (0 is the header), when the problem is in one.
    pub frame: Option<u64>,
    /// The byte offset in the file, when known.
    pub offset: Option<u64>,
    /// What is wrong, and where in the file when known.
    pub message: String,
}

fn opt_path<S: Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match path {
        Some(p) => s.serialize_str(&p.display().to_string()),
        None => s.serialize_none(),
    }
}

impl fmt::Display for Problem {
    /// `file: message`; the message says where in the file (frame and byte) when that is known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        f.write_str(&self.message)
    }
}

impl Problem {
    fn new(kind: ProblemKind, file: Option<&Path>, message: impl Into<String>) -> Problem {
        Problem {
            kind,
            file: file.map(Path::to_path_buf),
            frame: None,
            offset: None,
            message: message.into(),
        }
    }

    fn from_error(kind: ProblemKind, file: Option<&Path>, e: &Error) -> Problem {
        Problem {
            kind,
            file: file.map(Path::to_path_buf),
            frame: e.frame(),
            offset: e.offset(),
            message: e.root().to_string(),
        }
    }
}

/// The dtypes and shapes one key's columns had.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KeySummary {
    /// The header key.
    pub key: String,
    /// The dtype names seen (unknown ones as their number).
    pub dtypes: BTreeSet<String>,
    /// The distinct shapes seen, in order of appearance (at most eight).
    pub shapes: Vec<Vec<i32>>,
    /// Whether more distinct shapes were seen than listed.
    pub more_shapes: bool,
    /// Bytes of column data, over all records.
    pub data_bytes: u64,
}

impl KeySummary {
    fn new(key: &str) -> KeySummary {
        KeySummary {
            key: key.to_owned(),
            dtypes: BTreeSet::new(),
            shapes: Vec::new(),
            more_shapes: false,
            data_bytes: 0,
        }
    }

    fn add_shape(&mut self, shape: &[i32]) {
        if !self.shapes.iter().any(|s| s == shape) {
            if self.shapes.len() < MAX_SHAPES {
                self.shapes.push(shape.to_vec());
            } else {
                self.more_shapes = true;
            }
        }
    }

    /// Adds what another summary of the same key saw.
    pub fn merge(&mut self, other: &KeySummary) {
        self.dtypes.extend(other.dtypes.iter().cloned());
        for s in &other.shapes {
            self.add_shape(s);
        }
        self.more_shapes |= other.more_shapes;
        self.data_bytes += other.data_bytes;
    }
}

fn meta_json<S: Serializer>(meta: &Meta, s: S) -> Result<S::Ok, S::Error> {
    crate::json::MetaView(meta).serialize(s)
}

fn opt_meta_json<S: Serializer>(meta: &Option<Meta>, s: S) -> Result<S::Ok, S::Error> {
    meta.as_ref().map(crate::json::MetaView).serialize(s)
}

fn meta_check_json<S: Serializer>(check: &Option<MetaCheck>, s: S) -> Result<S::Ok, S::Error> {
    match check {
        None => s.serialize_none(),
        Some(MetaCheck::Agrees) => s.serialize_str("agrees"),
        Some(MetaCheck::AgreesWithQuirk) => s.serialize_str("agrees_with_unset_begin_quirk"),
        Some(MetaCheck::Disagrees(_)) => s.serialize_str("disagrees"),
    }
}

/// What a check saw in one data file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileReport {
    /// The file index, when the file is part of a dataset.
    pub index: Option<u64>,
    /// The data file, when read from one.
    #[serde(serialize_with = "opt_path")]
    pub path: Option<PathBuf>,
    /// Bytes read.
    pub bytes: u64,
    /// Whether the file had a header (an empty file has none).
    pub has_header: bool,
    /// The header keys.
    pub keys: Vec<String>,
    /// Records that decoded.
    pub records: u64,
    /// The meta computed from the records.
    #[serde(serialize_with = "meta_json")]
    pub meta: Meta,
    /// The meta file's content, when there is one.
    #[serde(serialize_with = "opt_meta_json")]
    pub stored_meta: Option<Meta>,
    /// How the stored meta compares with the computed one.
    #[serde(serialize_with = "meta_check_json")]
    pub meta_check: Option<MetaCheck>,
    /// Per key, in header order.
    pub columns: Vec<KeySummary>,
    /// Whether the file ended inside a frame.
    pub truncated: bool,
}

impl FileReport {
    fn new(index: Option<u64>, path: Option<&Path>) -> FileReport {
        FileReport {
            index,
            path: path.map(Path::to_path_buf),
            bytes: 0,
            has_header: false,
            keys: Vec::new(),
            records: 0,
            meta: Meta::UNSET,
            stored_meta: None,
            meta_check: None,
            columns: Vec::new(),
            truncated: false,
        }
    }
}

/// Checks one data file read from `reader`. `path` is only used to name it in problems.
pub fn check_data<R: Read>(
    reader: R,
    path: Option<&Path>,
    options: ReadOptions,
) -> (FileReport, Vec<Problem>) {
    let mut report = FileReport::new(None, path);
    let mut problems = Vec::new();
    let mut tracker = MetaTracker::new();
    let mut frames = FrameReader::new(reader, options);
    for frame in frames.by_ref() {
        let frame = match frame {
            Ok(f) => f,
            Err(e) => {
                let kind = if e.is_truncation() {
                    report.truncated = true;
                    ProblemKind::Truncated
                } else if matches!(e, Error::Io(_)) {
                    ProblemKind::Io
                } else {
                    ProblemKind::Framing
                };
                problems.push(Problem::from_error(kind, path, &e));
                break;
            }
        };
        if frame.index == 0 {
            match decode_header_frame(&frame) {
                Ok(h) => {
                    report.has_header = true;
                    report.columns = h.key.iter().map(|k| KeySummary::new(k)).collect();
                    report.keys = h.key;
                }
                Err(e) => {
                    problems.push(Problem::from_error(ProblemKind::Decode, path, &e));
                    // Without keys the records cannot be checked against anything; they are
                    // still decoded and counted.
                    report.has_header = true;
                }
            }
            continue;
        }
        match decode_record_frame(&frame) {
            Ok(record) => {
                check_record(
                    &record,
                    &mut report,
                    path,
                    frame.index,
                    frame.offset,
                    &mut problems,
                );
                tracker.add(&record);
            }
            Err(e) => problems.push(Problem::from_error(ProblemKind::Decode, path, &e)),
        }
    }
    report.bytes = frames.offset();
    report.records = tracker.records();
    report.meta = tracker.meta();
    (report, problems)
}

fn check_record(
    record: &Record,
    report: &mut FileReport,
    path: Option<&Path>,
    frame: u64,
    offset: u64,
    problems: &mut Vec<Problem>,
) {
    let at = |kind, message: String| Problem {
        kind,
        file: path.map(Path::to_path_buf),
        frame: Some(frame),
        offset: Some(offset),
        message: format!("frame {frame} at byte {offset}: {message}"),
    };
    if record.column.len() != report.keys.len() {
        problems.push(at(
            ProblemKind::ColumnCount,
            format!(
                "record (lstep {}) has {} columns but the header has {} keys",
                record.lstep,
                record.column.len(),
                report.keys.len()
            ),
        ));
    }
    // Columns past the header's keys are checked no further than their count (above): a record
    // of millions of empty columns would otherwise make a problem of each, hundreds of times the
    // input in memory.
    for (i, column) in record.column.iter().enumerate().take(report.keys.len()) {
        let key = report.keys.get(i).cloned().unwrap_or_default();
        if let Some(summary) = report.columns.get_mut(i) {
            summary.dtypes.insert(match column.try_dtype() {
                Ok(d) => d.as_str_name().to_owned(),
                Err(_) => column.dtype.to_string(),
            });
            summary.add_shape(&column.shape);
            summary.data_bytes += column.data.len() as u64;
        }
        if let Err(e) = column.check() {
            problems.push(at(
                ProblemKind::Column,
                format!("column {i} ({key:?}): {e}"),
            ));
            continue;
        }
        if column.try_dtype().ok() == Some(DType::Bool) {
            if let Some(pos) = column.data.iter().position(|&b| b > 1) {
                problems.push(at(
                    ProblemKind::BoolValue,
                    format!(
                        "column {i} ({key:?}): Bool element {pos} is byte {}, not 0 or 1",
                        column.data.get(pos).copied().unwrap_or(0)
                    ),
                ));
            }
        }
    }
}

/// Checks a data file at `path`, gzipped or not, and the meta file beside it (`<path>.meta`, or
/// gzipped) if there is one.
/// The meta may show the original writer's quirk, as if the file were its dataset's last.
pub fn check_file(path: &Path, options: ReadOptions) -> (FileReport, Vec<Problem>) {
    let meta = meta_partner(path);
    check_pair(None, path, meta.as_deref(), true, options)
}

/// The meta file beside a data file: `<data>.meta`, or for a gzipped `<stem>.gz` also
/// `<stem>.meta.gz` and `<stem>.meta`; `None` when there is none.
fn meta_partner(data: &Path) -> Option<PathBuf> {
    let name = data.as_os_str().to_string_lossy();
    let mut candidates = vec![format!("{name}.meta")];
    if let Some(stem) = name.strip_suffix(".gz") {
        candidates.push(format!("{stem}.meta"));
        candidates.push(format!("{stem}.meta.gz"));
    } else {
        candidates.push(format!("{name}.meta.gz"));
    }
    candidates
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

fn check_pair(
    index: Option<u64>,
    data: &Path,
    meta: Option<&Path>,
    may_be_last: bool,
    options: ReadOptions,
) -> (FileReport, Vec<Problem>) {
    let (mut report, mut problems) = match FileSource::open(data) {
        Ok(file) => check_data(file, Some(data), options),
        Err(e) => {
            let problem = Problem::new(ProblemKind::Io, Some(data), format!("cannot open: {e}"));
            return (FileReport::new(index, Some(data)), vec![problem]);
        }
    };
    report.index = index;
    if let Some(meta_path) = meta {
        match read_meta_file(meta_path) {
            Ok(stored) => {
                let check = check_meta(&stored, &report.meta, report.records, may_be_last);
                if let MetaCheck::Disagrees(diffs) = &check {
                    let list: Vec<String> = diffs
                        .iter()
                        .map(|(name, s, c)| format!("{name} is {s}, the data says {c}"))
                        .collect();
                    problems.push(Problem::new(
                        ProblemKind::MetaMismatch,
                        Some(meta_path),
                        format!("disagrees with its data file: {}", list.join("; ")),
                    ));
                }
                report.stored_meta = Some(stored);
                report.meta_check = Some(check);
            }
            Err(e) => problems.push(Problem::from_error(
                ProblemKind::MetaUnreadable,
                Some(meta_path),
                &e,
            )),
        }
    }
    (report, problems)
}

/// What a check saw in a dataset.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DatasetReport {
    /// The directory.
    #[serde(serialize_with = "path_json")]
    pub dir: PathBuf,
    /// `train` or `test`.
    pub phase: String,
    /// The output file name.
    pub name: String,
    /// The rank.
    pub rank: u64,
    /// The header keys (of the first file with a header).
    pub keys: Vec<String>,
    /// Records over all files.
    pub records: u64,
    /// The meta of the whole dataset, computed from the records.
    #[serde(serialize_with = "meta_json")]
    pub meta: Meta,
    /// Per key, over all files.
    pub columns: Vec<KeySummary>,
    /// Per data file, in index order.
    pub files: Vec<FileReport>,
}

fn path_json<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.display().to_string())
}

impl DatasetReport {
    /// The dataset's id.
    pub fn id(&self) -> String {
        format!("{}.{}.{}", self.phase, self.name, self.rank)
    }
}

/// Checks every file of a dataset, and the files as a sequence: indices from 1 without gaps (for a
/// [whole](Dataset::whole) dataset), a meta per data file, the same header in every file.
pub fn check_dataset(dataset: &Dataset, options: ReadOptions) -> (DatasetReport, Vec<Problem>) {
    let DatasetId { phase, name, rank } = &dataset.id;
    let mut report = DatasetReport {
        dir: dataset.dir.clone(),
        phase: phase.to_string(),
        name: name.clone(),
        rank: *rank,
        keys: Vec::new(),
        records: 0,
        meta: Meta::UNSET,
        columns: Vec::new(),
        files: Vec::new(),
    };
    let mut problems = Vec::new();
    let mut expected = 1u64;
    let last_index = dataset.files.last().map(|f| f.index);
    let mut keys: Option<Vec<String>> = None;
    let mut whole = Meta::UNSET;
    for file in &dataset.files {
        if dataset.whole && file.index > expected {
            let missing = if file.index == expected + 1 {
                format!("file index {expected} is missing")
            } else {
                format!("file indices {expected} to {} are missing", file.index - 1)
            };
            problems.push(Problem::new(
                ProblemKind::IndexGap,
                Some(&dataset.dir),
                format!("{missing} from dataset {}", dataset.id),
            ));
        }
        expected = file.index + 1;
        let Some(data) = &file.data else {
            if let Some(meta) = &file.meta {
                problems.push(Problem::new(
                    ProblemKind::MissingData,
                    Some(meta),
                    "meta file without its data file",
                ));
            }
            continue;
        };
        if file.meta.is_none() {
            problems.push(Problem::new(
                ProblemKind::MissingMeta,
                Some(data),
                "data file without its meta file",
            ));
        }
        let is_last = Some(file.index) == last_index;
        let (file_report, file_problems) = check_pair(
            Some(file.index),
            data,
            file.meta.as_deref(),
            is_last,
            options,
        );
        problems.extend(file_problems);
        if !file_report.has_header {
            if dataset.files.len() > 1 {
                problems.push(Problem::new(
                    ProblemKind::EmptyFile,
                    Some(data),
                    "empty data file (no header) in a dataset of several files",
                ));
            }
        } else {
            match &keys {
                None => {
                    keys = Some(file_report.keys.clone());
                    report.keys = file_report.keys.clone();
                    report.columns = file_report.columns.clone();
                }
                Some(k) if *k != file_report.keys => problems.push(Problem::new(
                    ProblemKind::HeaderMismatch,
                    Some(data),
                    format!(
                        "header keys {:?} differ from the first file's {k:?}",
                        file_report.keys
                    ),
                )),
                Some(_) => {
                    for (into, from) in report.columns.iter_mut().zip(&file_report.columns) {
                        into.merge(from);
                    }
                }
            }
        }
        if file_report.records > 0 {
            if report.records == 0 {
                whole.lstep_begin = file_report.meta.lstep_begin;
                whole.gstep_begin = file_report.meta.gstep_begin;
                whole.timestamp_begin = file_report.meta.timestamp_begin;
            }
            whole.lstep_end = file_report.meta.lstep_end;
            whole.gstep_end = file_report.meta.gstep_end;
            whole.timestamp_end = file_report.meta.timestamp_end;
        }
        report.records += file_report.records;
        report.files.push(file_report);
    }
    report.meta = whole;
    (report, problems)
}

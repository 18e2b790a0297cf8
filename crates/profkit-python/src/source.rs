//! Opening an input as Arrow tables: format detection, then profkit-arrow's events stream (or its
//! XDL records). This is the only module that uses profkit-arrow, so a change of its API stays here.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use profkit_arrow::events::SpaceItems;
use profkit_arrow::sources::{self, Prepared};
use profkit_arrow::{EventBatches, HostInfo, Layout, Options, SideTables};
use profkit_poplar::ProfileFile;
use profkit_xplane::{ReadOptions, XSpaceReader};

/// How many leading bytes detection looks at (as the CLI).
const SNIFF_LEN: usize = 4096;

/// A failure, as the Python side raises it: the message (which names the place: byte offset and
/// field path, JSON path, line and column) and the file.
#[derive(Debug)]
pub struct Failure {
    /// The input's name.
    pub file: String,
    /// What went wrong and where.
    pub message: String,
    /// `usage` for a call that cannot work (wrong format asked for), `io` when a file cannot be
    /// opened or read, `format` when the content is of no known format, `decode` otherwise.
    pub kind: &'static str,
}

impl Failure {
    fn new(file: &str, kind: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            file: file.to_owned(),
            message: message.into(),
            kind,
        }
    }

    fn decode(file: &str, e: impl std::fmt::Display) -> Failure {
        Failure::new(file, "decode", e.to_string())
    }
}

/// The formats profkit reads, as the CLI names them.
pub const FORMATS: &[&str] = &[
    "xspace",
    "chrome",
    "paddle",
    "paddle-trace",
    "poplar",
    "xdl",
];

fn canonical_format(name: &str) -> Option<&'static str> {
    Some(match name {
        "xspace" | "xplane" => "xspace",
        "chrome" | "trace-event" | "json" | "paddle-timeline" => "chrome",
        "paddle" | "paddle-profile" => "paddle",
        "paddle-trace" | "paddle-nodetrees" => "paddle-trace",
        "poplar" => "poplar",
        "xdl" => "xdl",
        _ => return None,
    })
}

/// The limits a read is held to: what a gzip input may decompress to, and Paddle's message
/// budget. Each is the argument given, else its environment variable (as for the command line),
/// else the default.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// What a gzip-compressed input may decompress to.
    pub gzip: profkit_gzip::Limit,
    /// How Paddle's protobufs are read (the message budget).
    pub paddle: profkit_events::paddle::ReadOptions,
}

impl Limits {
    /// The limits of `max_inflated` (`2G`, `64x`, `unlimited`, ...) and
    /// `paddle_bytes_per_message`, for the input `file`.
    pub fn new(
        max_inflated: Option<&str>,
        paddle_bytes_per_message: Option<u64>,
        file: &str,
    ) -> Result<Limits, Failure> {
        let env = |name: &str| std::env::var(name).ok();
        let gzip = match max_inflated
            .map(|t| (t.to_owned(), "max_inflated"))
            .or_else(|| env("PROFKIT_MAX_INFLATED").map(|t| (t, "PROFKIT_MAX_INFLATED")))
        {
            Some((text, what)) => profkit_gzip::Limit::parse(&text)
                .map_err(|e| Failure::new(file, "usage", format!("{what}: {e}")))?,
            None => profkit_gzip::Limit::default(),
        };
        let per = match paddle_bytes_per_message {
            Some(per) => per,
            None => match env("PROFKIT_PADDLE_BYTES_PER_MESSAGE") {
                Some(text) => text.trim().parse().map_err(|_| {
                    Failure::new(
                        file,
                        "usage",
                        format!("PROFKIT_PADDLE_BYTES_PER_MESSAGE: {text:?} is not a whole number"),
                    )
                })?,
                None => profkit_events::paddle::DEFAULT_BYTES_PER_MESSAGE,
            },
        };
        Ok(Limits {
            gzip,
            paddle: profkit_events::paddle::ReadOptions {
                bytes_per_message: per,
                ..profkit_events::paddle::ReadOptions::default()
            },
        })
    }
}

/// A reader that counts the bytes read, for progress.
struct Counting<R> {
    inner: R,
    done: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

type Boxed = Box<dyn Read + Send + Sync>;

/// The events stream of an input, whatever its format.
pub enum Events {
    /// An XSpace read plane by plane.
    Streamed(EventBatches<XSpaceReader<Boxed>>),
    /// Another format, converted to an XSpace in memory first.
    Whole(EventBatches<SpaceItems>),
}

impl Events {
    /// The `events` table's schema.
    pub fn schema(&self) -> SchemaRef {
        use arrow_array::RecordBatchReader as _;
        match self {
            Events::Streamed(b) => b.schema(),
            Events::Whole(b) => b.schema(),
        }
    }

    /// The next batch of events, `None` at the end.
    pub fn next_batch(&mut self) -> profkit_arrow::Result<Option<RecordBatch>> {
        match self {
            Events::Streamed(b) => b.next_batch(),
            Events::Whole(b) => b.next_batch(),
        }
    }

    /// The planes, lines and metadata tables (after the last batch).
    pub fn side_tables(&self) -> profkit_arrow::Result<SideTables> {
        match self {
            Events::Streamed(b) => b.side_tables(),
            Events::Whole(b) => b.side_tables(),
        }
    }
}

/// An opened input: its events stream, and the conversion's warnings.
pub struct Opened {
    /// The input's name in messages.
    pub name: String,
    /// The format read.
    pub format: &'static str,
    /// The events.
    pub events: Events,
    /// Warnings of the conversion to the XSpace (events left out, unmatched pairs).
    pub warnings: Vec<String>,
}

/// Bytes read so far and the input's size (0 when unknown), shared with the progress reporter.
#[derive(Clone, Default)]
pub struct Progress {
    /// Bytes read so far.
    pub done: Arc<AtomicU64>,
    /// The input's size in bytes.
    pub total: u64,
}

fn open_file(path: &Path, name: &str, progress: &Progress) -> Result<BufReader<Boxed>, Failure> {
    let file =
        File::open(path).map_err(|e| Failure::new(name, "io", format!("cannot open: {e}")))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(Failure::new(name, "io", "is a directory, expected a file"));
    }
    let counting = Counting {
        inner: file,
        done: progress.done.clone(),
    };
    Ok(BufReader::with_capacity(
        1 << 16,
        Box::new(counting) as Boxed,
    ))
}

/// Detects the format from the first bytes of the file, as the CLI does: the formats the content
/// fits, the one the file name gives first when the bytes could start it (see
/// `profkit_convert::detect`).
fn detect(prefix: &[u8], path: &Path) -> Option<&'static str> {
    use profkit_convert::detect::{Detected, candidates};
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    candidates(prefix, &name).into_iter().find_map(|d| match d {
        Detected::Xspace => Some("xspace"),
        Detected::Xdl => Some("xdl"),
        Detected::Poplar => Some("poplar"),
        Detected::PaddleProfile => Some("paddle"),
        Detected::PaddleNodeTrees => Some("paddle-trace"),
        Detected::Chrome => Some("chrome"),
        _ => None,
    })
}

/// The host name of an input, as the CLI's `--to parquet` names it (`<host>.xplane.pb` gives
/// `host`, any other file its name up to the first dot).
fn host_of(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = file
        .strip_suffix(".xplane.pb")
        .or_else(|| file.split('.').next())
        .unwrap_or(&file);
    profkit_arrow::host_name(stem)
}

/// The events table's layouts, as the Python side names them.
pub const LAYOUTS: &[&str] = &["frame", "parquet"];

/// The layout named `name` (`frame`: exact int64 times and stats as JSON text, for data frames;
/// `parquet`: the Parquet dataset's columns).
fn layout_of(name: &str, file: &str) -> Result<Layout, Failure> {
    match name {
        "frame" => Ok(Layout::Frame),
        "parquet" => Ok(Layout::Dataset),
        _ => Err(Failure::new(
            file,
            "usage",
            format!(
                "unknown layout {name:?}: the events table is laid out as {}",
                LAYOUTS.join(" or ")
            ),
        )),
    }
}

/// Opens `path` (a file, or an XDL dataset directory or prefix) as an events stream of
/// `batch_rows`-row batches laid out as `layout` names. `format` overrides detection.
pub fn open(
    path: &Path,
    format: Option<&str>,
    host: Option<&str>,
    batch_rows: usize,
    layout: &str,
    progress: &Progress,
    limits: &Limits,
) -> Result<Opened, Failure> {
    let name = path.display().to_string();
    let layout = layout_of(layout, &name)?;
    let format = match format {
        Some(f) => Some(canonical_format(f).ok_or_else(|| {
            Failure::new(
                &name,
                "usage",
                format!(
                    "unknown format {f:?}: profkit reads {} (parquet is written only)",
                    FORMATS.join(", ")
                ),
            )
        })?),
        None => None,
    };
    let options = Options::with_batch_rows(batch_rows).layout(layout);
    let host = host.map_or_else(|| host_of(path), str::to_owned);
    if !path.is_file() && format.is_none_or(|f| f == "xdl") {
        if let Ok(datasets) = profkit_xdl::discover(path) {
            let info = HostInfo::new(host, "xdl", [name.clone()]);
            let Prepared { batches, warnings } =
                sources::xdl(&datasets, info, options).map_err(|e| Failure::decode(&name, e))?;
            return Ok(Opened {
                name,
                format: "xdl",
                events: Events::Whole(batches),
                warnings,
            });
        }
        if path.is_dir() {
            return Err(Failure::new(
                &name,
                "format",
                "is a directory without XDL trace files (<train|test>.<name>.<rank>.<index>)",
            ));
        }
    }
    let mut reader = open_file(path, &name, progress)?;
    let compressed = reader
        .fill_buf()
        .map_err(|e| Failure::new(&name, "io", format!("cannot read: {e}")))?;
    if profkit_gzip::is_gzip(compressed) {
        // Undone as it is read, checked and held to the limit (as the command line does).
        let options = profkit_gzip::Options {
            limit: limits.gzip,
            compressed_len: std::fs::metadata(path).ok().map(|m| m.len()),
            hint: "; raise it with max_inflated= (or PROFKIT_MAX_INFLATED; \"2G\", \"64x\", \"unlimited\")"
                .into(),
        };
        let inflated: Boxed = Box::new(profkit_gzip::GzipReader::new(reader, options));
        reader = BufReader::with_capacity(1 << 16, inflated);
    }
    let format = match format {
        Some(f) => f,
        None => {
            let prefix = reader
                .fill_buf()
                .map_err(|e| Failure::new(&name, "io", format!("cannot read: {e}")))?;
            let prefix = prefix.get(..SNIFF_LEN.min(prefix.len())).unwrap_or(prefix);
            detect(prefix, path).ok_or_else(|| {
                Failure::new(
                    &name,
                    "format",
                    "unrecognised format (the content is not an XSpace, XDL trace, Poplar profile, \
                     Paddle profile or Chrome trace); name the format with format=... if you know it",
                )
            })?
        }
    };
    let info = HostInfo::new(host, format, [name.clone()]);
    let prepared = match format {
        "xspace" => {
            let boxed: Boxed = Box::new(reader);
            return Ok(Opened {
                name,
                format,
                events: Events::Streamed(sources::xspace(
                    boxed,
                    info,
                    options,
                    ReadOptions::default(),
                )),
                warnings: Vec::new(),
            });
        }
        "paddle" => sources::paddle_profile_with(reader, info, options, limits.paddle),
        "paddle-trace" => sources::paddle_node_trees_with(reader, info, options, limits.paddle),
        "chrome" => {
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .map_err(|e| match profkit_gzip::Error::find(&e) {
                    Some(gzip) => Failure::decode(&name, gzip),
                    None => Failure::new(&name, "io", format!("cannot read: {e}")),
                })?;
            sources::chrome(&bytes, info, options)
        }
        "poplar" => {
            let file: ProfileFile =
                profkit_poplar::from_reader(reader).map_err(|e| Failure::decode(&name, e))?;
            sources::poplar(file.execution(), file.graph(), info, options)
        }
        _ => {
            // An XDL data or meta file named on its own: its dataset.
            let datasets = profkit_xdl::discover(path).map_err(|e| Failure::decode(&name, e))?;
            sources::xdl(&datasets, info, options)
        }
    }
    .map_err(|e| Failure::decode(&name, e))?;
    Ok(Opened {
        name,
        format,
        events: Events::Whole(prepared.batches),
        warnings: prepared.warnings,
    })
}

/// The XDL records of the datasets at `path` (a directory, prefix or file of a dataset), one
/// table per dataset, keyed by the dataset's id.
pub fn xdl_records(
    path: &Path,
    host: Option<&str>,
    batch_rows: usize,
) -> Result<Vec<(String, SchemaRef, Vec<RecordBatch>)>, Failure> {
    let name = path.display().to_string();
    let datasets = profkit_xdl::discover(path).map_err(|e| Failure::decode(&name, e))?;
    let host = host.map_or_else(|| host_of(path), str::to_owned);
    let options = Options::with_batch_rows(batch_rows);
    let mut out = Vec::new();
    for dataset in &datasets {
        let mut records = profkit_arrow::xdl::records(dataset, &host, &options)
            .map_err(|e| Failure::decode(&name, e))?;
        let schema = {
            use arrow_array::RecordBatchReader as _;
            records.schema()
        };
        let mut batches = Vec::new();
        while let Some(batch) = records
            .next_batch()
            .map_err(|e| Failure::decode(&name, e))?
        {
            batches.push(batch);
        }
        out.push((records.dataset().to_owned(), schema, batches));
    }
    Ok(out)
}

/// The error of an events stream, as a failure of `name`.
pub fn stream_failure(name: &str, e: profkit_arrow::Error) -> Failure {
    Failure::decode(name, e)
}

/// The side tables of a finished stream, in the order `planes`, `lines`, `metadata`.
pub fn side(events: &Events, name: &str) -> Result<[(&'static str, RecordBatch); 3], Failure> {
    let side = events.side_tables().map_err(|e| Failure::decode(name, e))?;
    Ok([
        ("planes", side.planes),
        ("lines", side.lines),
        ("metadata", side.metadata),
    ])
}

//! The formats the CLI reads, and their detection from content.

use std::fmt;
use std::path::Path;

use profkit_convert::detect::Detected;

/// A file format `profkit` understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// TensorFlow / XLA profiler XSpace protobuf (`.xplane.pb`).
    #[value(name = "xspace", alias = "xplane")]
    Xspace,
    /// X-DeepLearning tensor trace: a dataset directory, a path prefix, a data or a `.meta` file.
    #[value(name = "xdl")]
    Xdl,
    /// Graphcore Poplar profile (JSON): a graph profile, an execution profile, or both combined.
    #[value(name = "poplar")]
    Poplar,
    /// PaddlePaddle legacy profiler `Profile` protobuf (what `disable_profiler(key, path)` writes).
    #[value(name = "paddle", alias = "paddle-profile")]
    Paddle,
    /// PaddlePaddle profiler node trees protobuf (`*.paddle_trace.pb`).
    #[value(name = "paddle-trace", alias = "paddle-nodetrees")]
    PaddleNodeTrees,
    /// Chrome trace JSON (Trace Event Format); written as xprof's trace viewer writes it.
    #[value(name = "chrome", alias = "trace-event", alias = "json")]
    Chrome,
    /// The Chrome trace PaddlePaddle's `tools/timeline.py` writes from `Profile`s (output only;
    /// read back as chrome).
    #[value(name = "paddle-timeline")]
    PaddleTimeline,
    /// A Hive-partitioned Parquet dataset of Arrow tables (output only: a directory
    /// `host=<host>/table=<table>/`, one host per input, appended to an existing dataset).
    #[value(name = "parquet")]
    Parquet,
    /// xprof's OpStats protobuf, as xprof caches it (`ALL_HOSTS.op_stats_v2.pb`; output only,
    /// from XSpaces: one per input, the hosts of one run).
    #[value(name = "op-stats")]
    OpStats,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Xspace => "xspace",
            Format::Xdl => "xdl",
            Format::Poplar => "poplar",
            Format::Paddle => "paddle",
            Format::PaddleNodeTrees => "paddle-trace",
            Format::Chrome => "chrome",
            Format::PaddleTimeline => "paddle-timeline",
            Format::Parquet => "parquet",
            Format::OpStats => "op-stats",
        })
    }
}

/// The formats `profkit` reads, for messages.
pub(crate) const READ_FORMATS: &str = "XSpace (xspace), XDL traces (xdl), Poplar profiles (poplar), \
     Paddle profiles (paddle), Paddle node trees (paddle-trace) and Chrome trace JSON (chrome)";

impl Format {
    /// The format's name in messages.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Format::Xspace => "XSpace",
            Format::Xdl => "XDL trace",
            Format::Poplar => "Poplar profile",
            Format::Paddle => "Paddle Profile",
            Format::PaddleNodeTrees => "Paddle node trees",
            Format::Chrome => "Chrome trace JSON",
            Format::PaddleTimeline => "Paddle timeline",
            Format::Parquet => "Parquet dataset",
            Format::OpStats => "xprof OpStats",
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn from_detected(d: Detected) -> Option<Format> {
    Some(match d {
        Detected::Xspace => Format::Xspace,
        Detected::Xdl => Format::Xdl,
        Detected::Poplar => Format::Poplar,
        Detected::PaddleProfile => Format::Paddle,
        Detected::PaddleNodeTrees => Format::PaddleNodeTrees,
        Detected::Chrome => Format::Chrome,
        _ => return None,
    })
}

/// The formats to read an input as, from its first bytes, in order: the one its name gives when
/// the bytes could start it, then every format the content fits (see
/// [`profkit_convert::detect`]). Empty when nothing fits.
pub(crate) fn candidates(prefix: &[u8], path: &Path) -> Vec<Format> {
    profkit_convert::detect::candidates(prefix, &file_name(path))
        .into_iter()
        .filter_map(from_detected)
        .collect()
}

/// The format `path`'s name gives, as the producers name their files.
pub(crate) fn named(path: &Path) -> Option<Format> {
    profkit_convert::detect::named(&file_name(path)).and_then(from_detected)
}

/// Formats `--from` takes: every format profkit reads (Paddle's timeline is read as the Chrome
/// trace it is).
pub(crate) const READABLE: &[Format] = &[
    Format::Xspace,
    Format::Xdl,
    Format::Poplar,
    Format::Paddle,
    Format::PaddleNodeTrees,
    Format::Chrome,
    Format::PaddleTimeline,
];

/// Formats `convert --to` writes.
pub(crate) const WRITABLE: &[Format] = &[
    Format::Chrome,
    Format::Xspace,
    Format::PaddleTimeline,
    Format::Xdl,
    Format::Parquet,
    Format::OpStats,
];

/// Formats `report` reads (`--from` of `report`).
pub(crate) const REPORTABLE: &[Format] = &[
    Format::Paddle,
    Format::PaddleNodeTrees,
    Format::Xspace,
    Format::Chrome,
    Format::PaddleTimeline,
];

/// A clap value parser for a format option that offers (in `--help` and completions) and takes
/// only `allowed`, and says why another format name is refused.
#[derive(Clone, Copy)]
pub(crate) struct FormatParser {
    allowed: &'static [Format],
    /// What the option is for, in the refusal: "--to" says "profkit cannot write X".
    role: Role,
}

#[derive(Clone, Copy)]
enum Role {
    Read,
    Write,
    Report,
}

impl FormatParser {
    /// `--from` of `inspect`, `dump`, `validate` and `convert`.
    pub(crate) fn read() -> Self {
        FormatParser {
            allowed: READABLE,
            role: Role::Read,
        }
    }

    /// `--to` of `convert`.
    pub(crate) fn write() -> Self {
        FormatParser {
            allowed: WRITABLE,
            role: Role::Write,
        }
    }

    /// `--from` of `report`.
    pub(crate) fn report() -> Self {
        FormatParser {
            allowed: REPORTABLE,
            role: Role::Report,
        }
    }

    fn names(&self) -> String {
        self.allowed
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl clap::builder::TypedValueParser for FormatParser {
    type Value = Format;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, clap::Error> {
        use clap::ValueEnum;
        let option = arg.map_or_else(|| "the format".to_owned(), |a| format!("--{}", a.get_id()));
        let text = value.to_string_lossy();
        let why = match Format::from_str(&text, true) {
            Ok(format) if self.allowed.contains(&format) => return Ok(format),
            Ok(Format::Parquet) => "parquet is an output format only (--to parquet)".to_owned(),
            Ok(Format::OpStats) => "op-stats is an output format only (--to op-stats)".to_owned(),
            Ok(format) => match self.role {
                Role::Read => format!("{format} is not read by profkit"),
                Role::Write => format!("profkit cannot write {format}"),
                Role::Report => format!("report does not read {format}"),
            },
            Err(_) => format!("unknown format {text:?}"),
        };
        let mut cmd = cmd.clone();
        Err(cmd.error(
            clap::error::ErrorKind::InvalidValue,
            format!("{why}; {option} takes {}", self.names()),
        ))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        use clap::ValueEnum;
        Some(Box::new(
            self.allowed.iter().filter_map(|f| f.to_possible_value()),
        ))
    }
}

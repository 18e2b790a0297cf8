//! The formats the CLI reads, and their detection from content.

use std::fmt;
use std::path::Path;

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
        })
    }
}

/// The formats `profkit` reads, for messages.
pub(crate) const READ_FORMATS: &str = "XSpace (xspace), XDL traces (xdl), Poplar profiles (poplar), \
     Paddle profiles (paddle), Paddle node trees (paddle-trace) and Chrome trace JSON (chrome)";

/// Detects the format from the first bytes of the file, using the name only to break ties.
pub(crate) fn detect(prefix: &[u8], path: &Path) -> Option<Format> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // XDL first: its check is the stricter one (a framed Header of UTF-8 keys).
    if profkit_xdl::looks_like_data_file(prefix)
        || (prefix.is_empty() && profkit_xdl::parse_file_name(&name).is_some_and(|n| !n.is_meta))
        || (name.ends_with(".meta") && profkit_xdl::looks_like_meta(prefix))
    {
        return Some(Format::Xdl);
    }
    // A JSON object is never an XSpace; check Poplar's keys before the looser protobuf check.
    if profkit_poplar::looks_like_poplar(prefix).is_some() {
        return Some(Format::Poplar);
    }
    if profkit_convert::chrome::looks_like_chrome(prefix) {
        return Some(Format::Chrome);
    }
    // Paddle's two protobufs before the XSpace check: their first elements differ from a plane's
    // in field wire types (see profkit_events::paddle), so the three never match the same bytes.
    match profkit_events::paddle::Format::detect(prefix) {
        Some(profkit_events::paddle::Format::NodeTrees) => return Some(Format::PaddleNodeTrees),
        Some(profkit_events::paddle::Format::Profile) => return Some(Format::Paddle),
        None => {}
    }
    if profkit_xplane::looks_like_xspace(prefix)
        && (!prefix.is_empty() || name.ends_with(".xplane.pb"))
    {
        return Some(Format::Xspace);
    }
    None
}

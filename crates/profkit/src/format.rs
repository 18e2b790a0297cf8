//! The formats the CLI reads, and their detection from content.

use std::fmt;
use std::path::Path;

/// A file format `profkit` understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// TensorFlow / XLA profiler XSpace protobuf (`.xplane.pb`).
    #[value(name = "xspace", alias = "xplane")]
    Xspace,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Xspace => "xspace",
        })
    }
}

/// Detects the format from the first bytes of the file, using the name only to break ties.
pub(crate) fn detect(prefix: &[u8], path: &Path) -> Option<Format> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if profkit_xplane::looks_like_xspace(prefix) && (!prefix.is_empty() || name.ends_with(".xplane.pb")) {
        return Some(Format::Xspace);
    }
    None
}

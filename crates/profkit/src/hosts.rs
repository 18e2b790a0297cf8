//! How an input's host is named, for the datasets and merges that hold several: `--host`, else
//! the file's name as xprof reads it (`<host>.xplane.pb`), else, when that name says nothing of
//! the host (`host.xplane.pb`, `trace.json`), the first of the hostnames the XSpace records.

use std::path::Path;

use profkit_xplane::ReadOptions;

use crate::input::Input;

/// Whether a host named after a file (by [`host_of`]) says nothing of the host: the names
/// profilers and tools give every file (`host.xplane.pb`, `trace.json`, `input.xplane.pb`).
pub(crate) fn says_nothing(host: &str) -> bool {
    matches!(
        host,
        "" | "host" | "trace" | "stdin" | "input" | "profile" | "xplane" | "localhost"
    )
}

/// The first of the `hostnames` an XSpace file records, read through (gzip or not); `None`
/// when it records none or does not read (reading it for real reports why), and for anything
/// but a regular file: a FIFO or a device is read once, by the conversion.
pub(crate) fn recorded_hostname(path: &Path) -> Option<String> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let mut reader = profkit_xplane::XSpaceReader::new(file, ReadOptions::default());
    while let Some(item) = reader.next_raw() {
        if let profkit_xplane::RawSpaceItem::Hostname(h) = item.ok()?
            && !h.trim().is_empty()
        {
            return Some(h);
        }
    }
    None
}

/// The host xprof would see for a file: `<host>.xplane.pb` gives `host`, any other name its
/// stem; standard input is `stdin`.
pub(crate) fn host_of(input: &Input) -> String {
    let Some(name) = input
        .path
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
    else {
        return "stdin".into();
    };
    name.strip_suffix(".xplane.pb")
        .or_else(|| name.split('.').next())
        .unwrap_or(&name)
        .to_owned()
}

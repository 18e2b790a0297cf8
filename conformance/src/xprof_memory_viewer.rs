//! xprof's memory viewer (`profkit xprof memory_viewer --module NAME [--memory-space N]`) against
//! what xprof 2.24.2 returned for the same case, module and memory space, saved in the case's
//! `xprof.memory_viewer/` folder as `<module>.json` (memory space 0) or `<module>.space<N>.json`
//! (`.json.gz` for the device cases) by `BLESS=1 conformance/xprof/tools_check.py`.
//!
//! The outputs are compared once parsed, every field of every object: xprof prints its map of
//! buffer spans in hash order, so only the bytes of an output without that map are required to
//! be xprof's. A module profkit names a part of as not reproduced fails here: every real module
//! is reproduced whole.

use std::path::Path;

use profkit_xplane::XSpace;
use profkit_xprof::tools::memory_viewer;
use serde_json::Value;

/// Checks every saved output of the case; returns a line per module and memory space.
pub fn check(case_dir: &Path, space: &XSpace) -> Result<String, String> {
    let dir = case_dir.join("xprof.memory_viewer");
    if !dir.is_dir() {
        return Ok(String::new());
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") || n.ends_with(".json.gz"))
        .collect();
    files.sort();
    let spaces = [space.clone()];
    let mut report = String::new();
    for file in files {
        let stem = file
            .trim_end_matches(".gz")
            .trim_end_matches(".json")
            .to_owned();
        let (module, memory_space) = match stem.rsplit_once(".space") {
            Some((m, n)) if n.parse::<i64>().is_ok() => (m.to_owned(), n.parse().unwrap_or(0)),
            _ => (stem.clone(), 0),
        };
        let theirs = read(&dir.join(&file))?;
        let viewer = memory_viewer::memory_viewer(&spaces, &module, memory_space)
            .map_err(|e| format!("memory_viewer {module} space {memory_space}: {e}"))?;
        if !viewer.missing.is_empty() {
            return Err(format!(
                "memory_viewer {module} space {memory_space}: not reproduced: {}",
                viewer.missing.join("; ")
            ));
        }
        let ours = memory_viewer::to_json(&viewer.result);
        let a: Value = serde_json::from_str(&ours).map_err(|e| format!("ours not JSON: {e}"))?;
        let b: Value =
            serde_json::from_str(&theirs).map_err(|e| format!("xprof's not JSON: {e}"))?;
        if let Some(path) = first_difference(&a, &b, "$") {
            return Err(format!(
                "memory_viewer {module} space {memory_space}: differs from xprof at {path}"
            ));
        }
        let how = if ours == theirs {
            "xprof's bytes"
        } else {
            "identical once parsed (spans in another order)"
        };
        report.push_str(&format!(
            "memory_viewer {module} space {memory_space}: {how}\n"
        ));
    }
    Ok(report)
}

/// A saved output, gunzipped when its name ends in `.gz`.
fn read(path: &Path) -> Result<String, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut text = String::new();
    let read = if path.extension().is_some_and(|e| e == "gz") {
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text)
    } else {
        std::io::Read::read_to_string(&mut std::io::BufReader::new(file), &mut text)
    };
    read.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(text)
}

/// The first path at which two JSON values differ (objects by key, arrays by index).
pub(crate) fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q, &format!("{path}.{k}")),
                (Some(_), None) => Some(format!("{path}.{k} (profkit only)")),
                _ => Some(format!("{path}.{k} (xprof only)")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{path}: profkit {a}, xprof {b}")),
    }
}

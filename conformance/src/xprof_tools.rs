//! xprof's tools (`profkit xprof TOOL`) against what xprof 2.24.2 returned for the same case,
//! saved beside its input as `xprof.<tool>.json` (`.json.gz` for the device cases) by
//! `BLESS=1 conformance/xprof/tools_check.py`, which also runs xprof live in CI.
//!
//! Where profkit builds the whole of what a tool shows, its JSON must be xprof's bytes. Where it
//! names a part it does not build (`OpStatsBuild::missing`: the TPU and XLA op metrics), the part
//! it builds must equal xprof's: for `framework_op_stats`, every host row (rank aside).

use std::path::Path;

use profkit_xplane::XSpace;
use profkit_xprof::op_stats;
use profkit_xprof::tools::framework_op_stats;
use serde_json::Value;

/// The tools checked, by the file xprof's output is saved in.
pub const TOOLS: [&str; 1] = ["framework_op_stats"];

fn saved(case_dir: &Path, tool: &str) -> Result<Option<String>, String> {
    let plain = case_dir.join(format!("xprof.{tool}.json"));
    if plain.exists() {
        return std::fs::read_to_string(&plain)
            .map(Some)
            .map_err(|e| format!("cannot read {}: {e}", plain.display()));
    }
    let gz = case_dir.join(format!("xprof.{tool}.json.gz"));
    if gz.exists() {
        let file =
            std::fs::File::open(&gz).map_err(|e| format!("cannot open {}: {e}", gz.display()))?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text)
            .map_err(|e| format!("cannot read {}: {e}", gz.display()))?;
        return Ok(Some(text));
    }
    Ok(None)
}

fn host_rows(text: &str) -> Result<Vec<Vec<Value>>, String> {
    let tables: Vec<Value> = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    Ok(tables
        .iter()
        .map(|t| {
            t["rows"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| r["c"][1]["v"] == "Host")
                .map(|r| {
                    r["c"]
                        .as_array()
                        .map(|c| c[1..].to_vec())
                        .unwrap_or_default()
                })
                .map(Value::Array)
                .collect()
        })
        .collect())
}

/// Checks each tool whose xprof output the case holds; returns a line per tool checked.
pub fn check(case_dir: &Path, space: &XSpace) -> Result<String, String> {
    let mut report = String::new();
    for tool in TOOLS {
        let Some(theirs) = saved(case_dir, tool)? else {
            continue;
        };
        let built = op_stats::build(vec![space.clone()], &["host"]);
        let ours = framework_op_stats::to_json(&built.op_stats);
        // The parts this tool does not read (steps, kernel stats, busy time) aside, the bytes
        // are required when nothing else is missing.
        let lacking = built.missing_op_metrics().next().is_some();
        if !lacking {
            if ours != theirs {
                return Err(format!(
                    "{tool}: profkit differs from xprof (- xprof, + profkit):\n{}",
                    crate::diff::diff(
                        &theirs.replace("},{", "},\n{"),
                        &ours.replace("},{", "},\n{")
                    )
                ));
            }
            report.push_str(&format!("{tool}: xprof's bytes\n"));
        } else {
            let (a, b) = (host_rows(&theirs)?, host_rows(&ours)?);
            if a != b {
                return Err(format!(
                    "{tool}: profkit's host rows differ from xprof's ({} and {} rows)",
                    b.iter().map(Vec::len).sum::<usize>(),
                    a.iter().map(Vec::len).sum::<usize>()
                ));
            }
            report.push_str(&format!(
                "{tool}: xprof's host rows; not reproduced: {}\n",
                built.missing_op_metrics().collect::<Vec<_>>().join("; ")
            ));
        }
    }
    Ok(report)
}

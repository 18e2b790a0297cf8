//! Real device profiles (`conformance/xplane-device/`): XSpaces that TensorFlow and JAX wrote on
//! GPUs and TPUs, kept gzipped with xprof 2.24.2's trace viewer output for each.
//!
//! A case folder holds `input.xplane.pb.gz`, `xprof.trace_viewer.json.gz` and `xprof.tools.json`
//! (`xspace_to_tool_names`, which the runner requires of `profkit_xprof::tools`). The runner converts
//! the input as `profkit convert --to chrome` does (the streaming converter, checked against the
//! in-memory one) and requires xprof's text exactly, flow ids compared as the partition they make
//! ([`crate::xplane::flows_renamed`]), so every event, arg and flow is compared. It records:
//! - `trace.txt`: how many events, how many carry a flow and how many flows link them;
//! - `validate.txt` and `summary.json`: as for the XSpace cases;
//! - `xprof-tools.txt`: the xprof tools checked against xprof's saved output (`crate::xprof_tools`),
//!   from profkit's OpStats and, when the case keeps it (`xprof.op_stats.pb.gz`), from xprof's.
//!
//! The canonical dump and our trace viewer JSON are not stored: they are megabytes, and the
//! latter is xprof's file.

use std::io::Read;
use std::path::Path;

use profkit_xplane::decode;
use profkit_xplane::summary::Summary;

use crate::xplane::{check_reencode, chrome, flows_renamed, validate_text};
use crate::{Format, Outputs};

/// The handler for `conformance/xplane-device/`.
pub struct XPlaneDeviceFormat;

/// The case's input.
pub const INPUT: &str = "input.xplane.pb.gz";
/// xprof's trace viewer output for it.
pub const XPROF: &str = "xprof.trace_viewer.json.gz";
/// The tools xprof lists for it (`xspace_to_tool_names`).
pub const XPROF_TOOLS: &str = "xprof.tools.json";

impl Format for XPlaneDeviceFormat {
    fn name(&self) -> &'static str {
        "xplane-device"
    }

    fn output_names(&self) -> &'static [&'static str] {
        &[
            "trace.txt",
            "validate.txt",
            "summary.json",
            "xprof-tools.txt",
        ]
    }

    fn run(&self, case_dir: &Path) -> Result<Outputs, String> {
        let bytes = gunzip(&case_dir.join(INPUT))?;
        let theirs = String::from_utf8(gunzip(&case_dir.join(XPROF))?)
            .map_err(|e| format!("{XPROF} is not UTF-8: {e}"))?;
        check_reencode(&bytes)?;
        let space = decode(bytes.clone()).map_err(|e| format!("the input does not decode: {e}"))?;
        let ours = chrome(&bytes, &space)?;
        let ours = String::from_utf8(ours).map_err(|e| format!("our JSON is not UTF-8: {e}"))?;
        let (ours_renamed, theirs_renamed) = (
            flows_renamed(ours.trim_end()),
            flows_renamed(theirs.trim_end()),
        );
        if ours_renamed != theirs_renamed {
            return Err(format!(
                "our trace viewer JSON differs from xprof's ({XPROF}, flow ids renamed by first appearance; - xprof, + profkit):\n{}",
                crate::diff::diff(&theirs_renamed, &ours_renamed)
            ));
        }
        // The tools xprof listed for the file.
        let listed = std::fs::read_to_string(case_dir.join(XPROF_TOOLS))
            .map_err(|e| format!("cannot read {XPROF_TOOLS}: {e}"))?;
        let tools = crate::xplane::tools_json(&space);
        if serde_json::from_str::<serde_json::Value>(&listed).ok()
            != serde_json::from_str::<serde_json::Value>(&tools).ok()
        {
            return Err(format!(
                "xprof lists the tools {}, profkit {}",
                listed.trim(),
                tools.trim()
            ));
        }
        let mut outputs = Outputs::new();
        let mut report = crate::xprof_tools::check(case_dir, &space)?;
        report.push_str(&crate::xprof_tools::check_renderers(case_dir)?);
        if !report.is_empty() {
            outputs.insert("xprof-tools.txt".into(), report.into_bytes());
        }
        outputs.insert("trace.txt".into(), trace_counts(&ours).into_bytes());
        outputs.insert("validate.txt".into(), validate_text(&space).into_bytes());
        let summary = serde_json::to_string_pretty(&Summary::of(&space))
            .map_err(|e| format!("cannot serialise the summary: {e}"))?;
        outputs.insert("summary.json".into(), format!("{summary}\n").into_bytes());
        Ok(outputs)
    }
}

fn gunzip(path: &Path) -> Result<Vec<u8>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(file)
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot inflate {}: {e}", path.display()))?;
    Ok(out)
}

/// Events (one per line of the JSON but the metadata and the brackets), those with a `flow`, and
/// the distinct flows linking them.
fn trace_counts(json: &str) -> String {
    let mut events = 0usize;
    let mut with_flow = 0usize;
    let mut flows = std::collections::HashSet::new();
    for line in json.lines() {
        if !line.starts_with("{\"")
            || line.contains("\"ph\": \"M\"")
            || line.starts_with("{\"displayTimeUnit")
        {
            continue;
        }
        events += 1;
        if let Some(at) = line.find("\"flow\": \"") {
            let digits: String = line[at + 9..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(value) = digits.parse::<u64>() {
                with_flow += 1;
                flows.insert(profkit_xprof::flows::decode(value).0);
            }
        }
    }
    format!(
        "{events} events; {with_flow} with a flow, linked by {} flows\n",
        flows.len()
    )
}

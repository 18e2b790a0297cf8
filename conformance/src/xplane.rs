//! The `xplane` format: XSpace files read with `profkit-xplane`.
//!
//! A case holds `input.xplane.pb`. When it decodes, the outputs are `dump.json` (the canonical JSON
//! view), `validate.txt` (one line per validation problem, warnings marked `warning: `, empty
//! when valid) and `summary.json` (what `profkit inspect` summarises). When it does not, the only output is `error.txt`, the
//! decode error as displayed (byte offset and field path included).
//! A case that holds xprof's output for a tool (`xprof.<tool>.json`) also records
//! `xprof-tools.txt`, what `crate::xprof_tools` found in comparing profkit's with it.
//!
//! Asserted rather than recorded: re-encoding keeps every field (`decode(encode(x)) == x`), the
//! JSON view reads back to the same space, the streaming reader agrees with the whole-file
//! decoder, the summary `profkit report` builds through views equals the one of the event model,
//! and an input the decoder rejects is rejected by the streaming reader (and by the trace viewer
//! conversion and the summary's walk through views) with the same error. `convert --to xspace`,
//! which copies planes and lines already in canonical encoding, writes exactly the bytes of
//! decoding and encoding every plane, or fails with the same error.

use std::path::Path;

use profkit_convert::events::{xspace_forest, xspace_to_recording};
use profkit_convert::merge::{reencode, reencode_decoded};
use profkit_events::report::summary::{
    Forest, SortedKey, Summary as ReportSummary, SummaryOptions,
};
use profkit_xplane::summary::Summary;
use profkit_xplane::{ReadOptions, XSpace, XSpaceReader, decode, encode, validate, view};
use profkit_xprof::trace_viewer::{self, TraceViewerOptions};

use crate::{Format, GeneratedFile, Outputs};

/// The input file of every xplane case.
pub const INPUT: &str = "input.xplane.pb";
/// xprof's trace viewer output for the case's input, kept for golden tests of our converter.
pub const XPROF_TRACE_VIEWER: &str = "xprof.trace_viewer.json";

/// The handler for `conformance/xplane/`.
pub struct XPlaneFormat;

impl Format for XPlaneFormat {
    fn name(&self) -> &'static str {
        "xplane"
    }

    fn output_names(&self) -> &'static [&'static str] {
        &[
            "dump.json",
            "validate.txt",
            "summary.json",
            "chrome.json",
            "tools.json",
            "xprof-tools.txt",
            "error.txt",
        ]
    }

    fn run(&self, case_dir: &Path) -> Result<Outputs, String> {
        let path = case_dir.join(INPUT);
        let bytes =
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut outputs = run_bytes(&bytes)?;
        if let Ok(space) = decode(bytes.clone()) {
            let report = crate::xprof_tools::check(case_dir, &space)?;
            if !report.is_empty() {
                outputs.insert("xprof-tools.txt".into(), report.into_bytes());
            }
        }
        let xprof_path = case_dir.join(XPROF_TRACE_VIEWER);
        if let (Some(ours), Ok(theirs)) = (outputs.get("chrome.json"), std::fs::read(&xprof_path)) {
            // The shared sample's copy was saved with one more newline than xprof returns.
            let theirs = flows_renamed(String::from_utf8_lossy(&theirs).trim_end());
            let ours = flows_renamed(String::from_utf8_lossy(ours).trim_end());
            if ours != theirs {
                return Err(format!(
                    "chrome.json differs from xprof's output ({XPROF_TRACE_VIEWER}, flow ids renamed by first appearance; - xprof, + profkit):\n{}",
                    crate::diff::diff(&theirs, &ours)
                ));
            }
        }
        Ok(outputs)
    }

    fn generated_inputs(&self) -> Vec<GeneratedFile> {
        crate::xplane_cases::cases()
            .into_iter()
            .map(|case| GeneratedFile {
                case: case.name.to_owned(),
                file: INPUT.to_owned(),
                contents: case.input,
            })
            .collect()
    }
}

/// The outputs for one encoded XSpace (see the module documentation).
pub fn run_bytes(bytes: &[u8]) -> Result<Outputs, String> {
    let mut outputs = Outputs::new();
    check_reencode(bytes)?;
    let space = match decode(bytes.to_vec()) {
        Ok(space) => space,
        Err(error) => {
            match XSpaceReader::new(bytes, ReadOptions::default()).collect_space() {
                Ok(space) => {
                    return Err(format!(
                        "decode rejects the input ({error}) but the streaming reader accepts it ({} planes)",
                        space.planes.len()
                    ));
                }
                Err(streamed) if streamed.to_string() != error.to_string() => {
                    return Err(format!(
                        "decode and the streaming reader disagree on the error:\n  decode: {error}\n  stream: {streamed}"
                    ));
                }
                Err(_) => {}
            }
            // The trace viewer conversion reads the space its own way; it must fail alike.
            let mut sink = Vec::new();
            match trace_viewer::convert(
                std::io::Cursor::new(bytes),
                &mut sink,
                &TraceViewerOptions::default(),
                None,
            ) {
                Ok(_) => {
                    return Err(
                        "decode rejects the input but the trace viewer conversion accepts it"
                            .into(),
                    );
                }
                Err(e) if e.to_string() != error.to_string() => {
                    return Err(format!(
                        "decode and the trace viewer conversion disagree on the error:\n  decode: {error}\n  convert: {e}"
                    ));
                }
                Err(_) => {}
            }
            // So does the summary's walk through views (`profkit report`).
            match xspace_forest(std::io::Cursor::new(bytes), ReadOptions::default()) {
                Ok(_) => {
                    return Err(
                        "decode rejects the input but the summary's walk through views accepts it"
                            .into(),
                    );
                }
                Err(e) if e.to_string() != error.to_string() => {
                    return Err(format!(
                        "decode and the summary's walk through views disagree on the error:\n  decode: {error}\n  views: {e}"
                    ));
                }
                Err(_) => {}
            }
            outputs.insert("error.txt".into(), format!("{error}\n").into_bytes());
            return Ok(outputs);
        }
    };
    check_round_trips(bytes, &space)?;
    check_summary_forest(bytes, &space)?;

    let dump = view::to_json(&space);
    // `dump` writes the same text plane by plane as it reads them.
    let mut streamed = Vec::new();
    view::write_json_streamed(
        profkit_xplane::XSpaceReader::new(bytes, profkit_xplane::ReadOptions::default()),
        &mut streamed,
    )
    .map_err(|e| format!("the streamed canonical JSON fails: {e}"))?;
    if streamed != dump.as_bytes() {
        return Err(format!(
            "the streamed canonical JSON differs from the whole one:\n{}",
            crate::diff::diff(&dump, &String::from_utf8_lossy(&streamed))
        ));
    }
    let problems = validate_text(&space);
    let summary = serde_json::to_string_pretty(&Summary::of(&space))
        .map_err(|e| format!("cannot serialise the summary: {e}"))?;
    outputs.insert("dump.json".into(), dump.into_bytes());
    outputs.insert("validate.txt".into(), problems.into_bytes());
    outputs.insert("summary.json".into(), format!("{summary}\n").into_bytes());
    outputs.insert("chrome.json".into(), chrome(bytes, &space)?);
    outputs.insert("tools.json".into(), tools_json(&space).into_bytes());
    Ok(outputs)
}

/// What `validate` finds in a space, a problem a line (warnings marked so), as `validate.txt`.
pub fn validate_text(space: &XSpace) -> String {
    validate(space)
        .iter()
        .map(|p| match p.severity {
            profkit_xplane::Severity::Error => format!("{p}\n"),
            _ => format!("warning: {p}\n"),
        })
        .collect()
}

/// `convert --to xspace` (`reencode`, which copies what is already canonical) writes the bytes of
/// decoding and encoding every plane (`reencode_decoded`), or fails with the same error.
pub fn check_reencode(bytes: &[u8]) -> Result<(), String> {
    let run = |fast: bool| {
        let mut out = Vec::new();
        let input = std::io::Cursor::new(bytes);
        let options = ReadOptions::default();
        let planes = if fast {
            reencode(input, &mut out, options, None)
        } else {
            reencode_decoded(input, &mut out, options, None)
        };
        (planes.map_err(|e| e.to_string()), out)
    };
    let (fast, fast_out) = run(true);
    let (slow, slow_out) = run(false);
    if fast != slow {
        return Err(format!(
            "reencode and decoding every plane disagree:\n  reencode: {fast:?}\n  decoded: {slow:?}"
        ));
    }
    if fast_out != slow_out {
        return Err(format!(
            "reencode writes other bytes than decoding every plane ({} against {} bytes)",
            fast_out.len(),
            slow_out.len()
        ));
    }
    Ok(())
}

/// The summary of the space's trees built through views (what `profkit report` prints) must be
/// the summary of its event model, for every set of options.
pub fn check_summary_forest(bytes: &[u8], space: &XSpace) -> Result<(), String> {
    let forest =
        xspace_forest(std::io::Cursor::new(bytes), ReadOptions::default()).map_err(|e| {
            format!("decode accepts the input but the summary's walk through views fails: {e}")
        })?;
    let recording = xspace_to_recording(space);
    let mut expected = Forest::from_recording(&recording);
    // The summary of an XSpace heads its threads by their lines' names.
    expected.name_threads(&recording);
    for options in [
        SummaryOptions::default(),
        SummaryOptions {
            sorted_by: SortedKey::GPUMin,
            thread_sep: true,
            ..SummaryOptions::default()
        },
    ] {
        let ours = ReportSummary::new(&forest, options);
        let theirs = ReportSummary::new(&expected, options);
        let (ours_json, theirs_json) = (
            serde_json::to_string_pretty(&ours).map_err(|e| e.to_string())?,
            serde_json::to_string_pretty(&theirs).map_err(|e| e.to_string())?,
        );
        if ours.text() != theirs.text() || ours_json != theirs_json {
            return Err(format!(
                "the summary through views differs from the event model's (- event model, + views):\n{}",
                crate::diff::diff(
                    &format!("{}{theirs_json}", theirs.text()),
                    &format!("{}{ours_json}", ours.text())
                )
            ));
        }
    }
    Ok(())
}

/// Our trace viewer JSON for the input, by the streaming converter; the in-memory one must agree.
pub fn chrome(bytes: &[u8], space: &XSpace) -> Result<Vec<u8>, String> {
    let options = TraceViewerOptions::default();
    let mut streamed = Vec::new();
    trace_viewer::convert(std::io::Cursor::new(bytes), &mut streamed, &options, None)
        .map_err(|e| format!("the trace viewer conversion fails: {e}"))?;
    let mut whole = Vec::new();
    trace_viewer::write_space(space, &mut whole, &options)
        .map_err(|e| format!("the in-memory trace viewer conversion fails: {e}"))?;
    if whole != streamed {
        return Err(format!(
            "the streaming and in-memory trace viewer conversions differ (- streaming, + in memory):\n{}",
            crate::diff::diff(
                &String::from_utf8_lossy(&streamed),
                &String::from_utf8_lossy(&whole)
            )
        ));
    }
    Ok(streamed)
}

/// Trace viewer JSON with each `flow` arg's id renamed by first appearance (see
/// [`profkit_xprof::flows::ids_renamed`]): what can be compared of xprof's salted ids.
pub fn flows_renamed(text: &str) -> String {
    profkit_xprof::flows::ids_renamed(text)
}

/// Whether two spaces hold the same data. `==` would do but for NaN doubles (NaN != NaN), so
/// compare the canonical JSON (every field, NaN spelled out) and the encodings.
fn same(a: &XSpace, b: &XSpace) -> bool {
    a == b || (view::to_json(a) == view::to_json(b) && encode(a) == encode(b))
}

fn check_round_trips(bytes: &[u8], space: &XSpace) -> Result<(), String> {
    let encoded = encode(space);
    let again =
        decode(encoded.clone()).map_err(|e| format!("our own encoding does not decode: {e}"))?;
    if !same(&again, space) {
        return Err(format!(
            "decode(encode(x)) != x; the re-encoded space reads as:\n{}",
            crate::diff::diff(&view::to_json(space), &view::to_json(&again))
        ));
    }
    if encode(&again) != encoded {
        return Err("encoding is not a fixed point: encode(decode(encode(x))) != encode(x)".into());
    }

    let streamed = XSpaceReader::new(bytes, ReadOptions::default())
        .collect_space()
        .map_err(|e| format!("decode accepts the input but the streaming reader fails: {e}"))?;
    if !same(&streamed, space) {
        return Err(format!(
            "the streaming reader reads a different space (- decode, + stream):\n{}",
            crate::diff::diff(&view::to_json(space), &view::to_json(&streamed))
        ));
    }

    let json = view::to_json(space);
    let from_json =
        view::from_json(&json).map_err(|e| format!("the JSON view does not read back: {e}"))?;
    if !same(&from_json, space) {
        return Err(format!(
            "from_json(to_json(x)) != x (- original, + read back):\n{}",
            crate::diff::diff(&json, &view::to_json(&from_json))
        ));
    }
    Ok(())
}

/// The host name xprof should see for a case: the space's first hostname when it is a plain file
/// name, else the case directory name. xprof takes the host from the file name `<host>.xplane.pb`.
pub fn host_name(case: &str, space: Option<&XSpace>) -> String {
    let plain = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    match space.and_then(|s| s.hostnames.first()) {
        Some(host) if plain(host) => host.clone(),
        _ => case.to_owned(),
    }
}

/// The tools xprof lists for a space (`profkit_xprof::tools`), as a JSON list the way Python's
/// `json.dump` writes xprof's `xspace_to_tool_names` (what `conformance/xprof/check.sh` compares).
pub fn tools_json(space: &profkit_xplane::XSpace) -> String {
    let names: Vec<String> = profkit_xprof::tools::tool_names(std::slice::from_ref(space))
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect();
    format!("[{}]\n", names.join(", "))
}

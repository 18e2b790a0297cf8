//! The `chrome` format: Chrome trace JSON (the Trace Event Format) read with
//! `profkit_convert::chrome` into an XSpace.
//!
//! A case holds `input.json`. The outputs are `xspace.json` (the canonical JSON view of the
//! XSpace the trace reads as), `notes.txt` (events left out, with why, and the phases skipped),
//! `report.txt` (Paddle's legacy report of it, as `profkit report` prints it) and `chrome.json`
//! (the XSpace written back as Chrome trace JSON, counters as counter events); `error.txt`
//! instead when the input does not read, the error with its JSON path, line and column.
//!
//! Asserted rather than recorded: `chrome.json` reads back to a space that writes the same
//! `chrome.json` (the round trip is a fixed point).

use std::path::Path;

use profkit_convert::chrome::chrome_to_xspace;
use profkit_convert::events::xspace_to_recording;
use profkit_convert::trace_viewer::{self, TraceViewerOptions};
use profkit_events::report::{Report, ReportOptions};

use crate::{Format, Outputs};

/// The input of every chrome case.
pub const INPUT: &str = "input.json";

/// The handler for `conformance/chrome/`.
pub struct ChromeFormat;

impl Format for ChromeFormat {
    fn name(&self) -> &'static str {
        "chrome"
    }

    fn output_names(&self) -> &'static [&'static str] {
        &[
            "xspace.json",
            "notes.txt",
            "report.txt",
            "chrome.json",
            "error.txt",
        ]
    }

    fn run(&self, case_dir: &Path) -> Result<Outputs, String> {
        let path = case_dir.join(INPUT);
        let bytes =
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        run_bytes(&bytes)
    }
}

fn write(space: &profkit_xplane::XSpace) -> Result<Vec<u8>, String> {
    let options = TraceViewerOptions {
        counter_events: true,
        ..TraceViewerOptions::default()
    };
    let mut out = Vec::new();
    trace_viewer::write_space(space, &mut out, &options).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The outputs for one input (see the module documentation).
pub fn run_bytes(bytes: &[u8]) -> Result<Outputs, String> {
    let mut outputs = Outputs::new();
    let import = match chrome_to_xspace(bytes) {
        Ok(import) => import,
        Err(e) => {
            outputs.insert("error.txt".into(), format!("{e}\n").into_bytes());
            return Ok(outputs);
        }
    };
    let mut notes = format!("{} events\n", import.events);
    for (phase, count) in &import.skipped {
        notes += &format!("skipped {count} events of phase {phase:?}\n");
    }
    for w in &import.warnings {
        notes += &format!("warning: {w}\n");
    }
    let report = Report::new(
        &xspace_to_recording(&import.space),
        ReportOptions::default(),
    );
    let chrome = write(&import.space)?;
    let again = chrome_to_xspace(&chrome)
        .map_err(|e| format!("our chrome.json does not read back: {e}"))?;
    let chrome_again = write(&again.space)?;
    if chrome_again != chrome {
        return Err(format!(
            "chrome.json does not come back through an XSpace (- first, + second):\n{}",
            crate::diff::diff(
                &String::from_utf8_lossy(&chrome),
                &String::from_utf8_lossy(&chrome_again)
            )
        ));
    }
    outputs.insert(
        "xspace.json".into(),
        profkit_xplane::view::to_json(&import.space).into_bytes(),
    );
    outputs.insert("notes.txt".into(), notes.into_bytes());
    outputs.insert("report.txt".into(), report.text().into_bytes());
    outputs.insert("chrome.json".into(), chrome);
    Ok(outputs)
}

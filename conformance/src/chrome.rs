//! The `chrome` format: Chrome trace JSON (the Trace Event Format) read with
//! `profkit_chrome` into an XSpace.
//!
//! A case holds `input.json` (or `input.json.gz`, gzipped as its producer wrote it). The outputs
//! are `xspace.json` (the canonical JSON view of the
//! XSpace the trace reads as), `notes.txt` (events left out, with why, and the phases skipped),
//! `report.txt` (Paddle's legacy report of it, as `profkit report` prints it) and `chrome.json`
//! (the XSpace written back as Chrome trace JSON, counters as counter events) and `validate.txt`
//! (what `profkit validate` finds: warnings, errors, and whether the trace is valid); `error.txt`
//! instead when the input does not read, the error with its JSON path, line and column.
//!
//! Asserted rather than recorded: `chrome.json` reads back to a space that writes the same
//! `chrome.json` (the round trip is a fixed point).

use std::path::Path;

use profkit_chrome::{ChromeImport, ChromeReadOptions, chrome_to_xspace, read_chrome_with};
use profkit_convert::events::xspace_to_recording;
use profkit_events::report::{Report, ReportOptions};
use profkit_xprof::trace_viewer::{self, Layout, TraceViewerOptions};

use crate::{Format, Outputs};

/// The input of every chrome case.
pub const INPUT: &str = "input.json";

/// The input of a case whose trace is kept gzipped.
pub const INPUT_GZ: &str = "input.json.gz";

/// The folder of real traces (`corpus/<source>/<file>`, gzipped or not), each of which must
/// read; `corpus.txt` records what each reads as.
pub const CORPUS: &str = "corpus";

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
            "validate.txt",
            "error.txt",
            "corpus.txt",
        ]
    }

    fn run(&self, case_dir: &Path) -> Result<Outputs, String> {
        if case_dir.file_name().is_some_and(|n| n == CORPUS) {
            return run_corpus(case_dir);
        }
        let plain = case_dir.join(INPUT);
        let path = if plain.exists() {
            plain
        } else {
            case_dir.join(INPUT_GZ)
        };
        run_bytes(&read_maybe_gzip(&path)?)
    }
}

fn write(space: &profkit_xplane::XSpace) -> Result<Vec<u8>, String> {
    let options = TraceViewerOptions::of_layout(Layout::TraceEvent);
    let mut out = Vec::new();
    trace_viewer::write_space(space, &mut out, &options).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The outputs for one input (see the module documentation).
pub fn run_bytes(bytes: &[u8]) -> Result<Outputs, String> {
    let mut outputs = Outputs::new();
    let import = same_without_fast_path(bytes, chrome_to_xspace(bytes))?;
    let import = match import {
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
    crate::xplane::check_summary_forest(&profkit_xplane::encode(&import.space), &import.space)?;
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
    outputs.insert(
        "validate.txt".into(),
        validate_text(&import, bytes).into_bytes(),
    );
    Ok(outputs)
}

/// What `profkit validate` prints for the trace (every problem, uncapped), its events named in
/// the trace's own terms.
fn validate_text(import: &profkit_chrome::ChromeImport, bytes: &[u8]) -> String {
    let check = import.check_source(bytes);
    let mut text = String::new();
    for (_, w) in &check.warnings {
        text += &format!("warning: {w}\n");
    }
    for (_, e) in &check.errors {
        text += &format!("{e}\n");
    }
    if check.errors.is_empty() {
        text += &format!("valid Chrome trace ({} warnings)\n", check.warnings.len());
    } else {
        text += &format!("not valid: {} errors\n", check.errors.len());
    }
    text
}

/// The import, after checking that reading every event through serde's visitors (the importer's
/// fast path off) gives the same import, or the same error, and so does reading with 2 and 5
/// threads (the events scanned ahead on a thread of their own, the text cut into windows of the
/// default size and of a few bytes, between and inside events): the same XSpace, byte for byte.
fn same_without_fast_path(
    bytes: &[u8],
    fast: profkit_chrome::Result<ChromeImport>,
) -> Result<profkit_chrome::Result<ChromeImport>, String> {
    let one = ChromeReadOptions::default().threads(1);
    let others = [
        ("the visitors", one.fast_events(false)),
        ("one thread", one),
        ("2 threads", ChromeReadOptions::default().threads(2)),
        (
            "2 threads, windows of 97 bytes",
            ChromeReadOptions::default().threads(2).scan_cut(97, 1),
        ),
        (
            "5 threads, windows of 1000 bytes",
            ChromeReadOptions::default().threads(5).scan_cut(1000, 3),
        ),
    ];
    for (what, options) in others {
        let other = read_chrome_with(bytes, options);
        match (&fast, &other) {
            (Ok(a), Ok(b))
                if a == b
                    && profkit_xplane::encode(&a.space) == profkit_xplane::encode(&b.space) => {}
            (Err(a), Err(b)) if a.to_string() == b.to_string() => {}
            (Ok(_), Ok(_)) => return Err(format!("{what} read another import")),
            (a, b) => {
                return Err(format!(
                    "the default read gives {:?}, {what} {:?}",
                    a.as_ref().err().map(ToString::to_string),
                    b.as_ref().err().map(ToString::to_string)
                ));
            }
        }
    }
    Ok(fast)
}

/// Reads a file, undoing gzip when it starts with gzip's magic.
fn read_maybe_gzip(path: &Path) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut out)
        .map_err(|e| format!("{}: bad gzip: {e}", path.display()))?;
    Ok(out)
}

/// Every trace of the corpus reads and is valid (real producers wrote them, untouched);
/// `corpus.txt` has a line per trace: its planes with their lines and events, flows, skipped
/// phases and warnings by kind; `validate.txt` what `profkit validate` prints of each (at most
/// ten warnings of a kind, then their count, as without `--all`).
fn run_corpus(dir: &Path) -> Result<Outputs, String> {
    let mut files = Vec::new();
    for source in std::fs::read_dir(dir).map_err(|e| e.to_string())? {
        let source = source.map_err(|e| e.to_string())?.path();
        if !source.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&source).map_err(|e| e.to_string())? {
            files.push(file.map_err(|e| e.to_string())?.path());
        }
    }
    files.sort();
    let mut text = String::new();
    let mut validate = String::new();
    for path in files {
        let name = path
            .strip_prefix(dir)
            .map_err(|e| e.to_string())?
            .display()
            .to_string();
        let bytes = read_maybe_gzip(&path)?;
        let import = same_without_fast_path(&bytes, chrome_to_xspace(&bytes))
            .map_err(|e| format!("{name}: {e}"))?
            .map_err(|e| format!("{name} does not read: {e}"))?;
        crate::xplane::check_summary_forest(&profkit_xplane::encode(&import.space), &import.space)
            .map_err(|e| format!("{name}: {e}"))?;
        let planes: Vec<String> = import
            .space
            .planes
            .iter()
            .filter(|p| !p.lines.is_empty())
            .map(|p| {
                let events: usize = p.lines.iter().map(|l| l.events.len()).sum();
                format!("{} ({} lines, {events} events)", p.name, p.lines.len())
            })
            .collect();
        text += &format!(
            "{name}: {} events, {} flows; {}",
            import.events,
            import.flows,
            planes.join(", ")
        );
        for (phase, n) in &import.skipped {
            text += &format!("; skipped {n} {phase:?}");
        }
        for (kind, n) in &import.warning_counts {
            text += &format!("; {n} warnings {kind:?}");
        }
        let problems = profkit_xplane::validate(&import.space);
        if !problems.is_empty() {
            text += &format!("; {} XSpace problems", problems.len());
        }
        text.push('\n');
        let check = import.check_source(&bytes);
        if let Some((_, first)) = check.errors.first() {
            return Err(format!(
                "{name}: a real trace, untouched, is not valid ({} errors), first: {first}",
                check.errors.len()
            ));
        }
        let mut per_kind: std::collections::BTreeMap<&str, usize> = Default::default();
        for (kind, message) in &check.warnings {
            let seen = per_kind.entry(kind.as_str()).or_default();
            *seen += 1;
            if *seen <= 10 {
                validate += &format!("{name}: warning: {message}\n");
            }
        }
        for (kind, seen) in per_kind {
            if seen > 10 {
                validate += &format!(
                    "{name}: warning: ... and {} more of this kind ({kind})\n",
                    seen - 10
                );
            }
        }
        validate += &format!(
            "{name}: valid Chrome trace ({} warnings)\n",
            check.warnings.len()
        );
    }
    let mut outputs = Outputs::new();
    outputs.insert("corpus.txt".into(), text.into_bytes());
    outputs.insert("validate.txt".into(), validate.into_bytes());
    Ok(outputs)
}

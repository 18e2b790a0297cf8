//! Target `chrome_json`: any bytes into the Chrome trace reader.
//!
//! The reader streams through profkit-json's parser, so it is checked against serde_json's: a text
//! serde_json refuses, the reader refuses too (but for the one leniency the Trace Event Format asks
//! for, a bare event array left open at the end). Refusals name a line within the text and a column
//! (or 0 and 0 for the whole trace). Reading one byte per `read` gives the same import, and so does
//! reading every event through serde's visitors (the importer's fast path off), or the same error. What reads
//! converts to an XSpace that validates without problems of the references kind, writes as Chrome
//! trace JSON that is valid JSON, and that JSON reads back to a space writing the same lines. The
//! lines may come in another order: the writer follows the order of the space's lines, which the
//! JSON does not carry (its tids are xprof's display positions, and the second import orders its
//! threads by them); and a category the first write took from a `category` stat (written as the
//! event's `cat`) may come back in the args (see [`categories_in_args`]).

use profkit_chrome::Error;
use profkit_chrome::{ChromeReadOptions, chrome_to_xspace, read_chrome, read_chrome_with};
use profkit_xplane::ProblemKind;
use profkit_xprof::trace_viewer::{TraceViewerOptions, write_space};

fn write(space: &profkit_xplane::XSpace) -> Vec<u8> {
    let options = TraceViewerOptions {
        counter_events: true,
        flow_events: true,
        ..TraceViewerOptions::default()
    };
    let mut out = Vec::new();
    write_space(space, &mut out, &options).unwrap_or_else(|e| panic!("cannot write: {e}"));
    out
}

/// A reader that hands over one byte per `read`.
struct OneByte<'a>(&'a [u8]);

impl std::io::Read for OneByte<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (self.0.split_first(), buf.first_mut()) {
            (Some((&b, rest)), Some(slot)) => {
                *slot = b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

/// The lines of a text, sorted.
fn sorted_lines(text: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    lines.sort_unstable();
    lines
}

/// The lines of a text, sorted, each event's top-level `cat` moved into its args (where the
/// args have no `cat`). The writer writes a `category` stat (a Paddle event type) as the event's
/// `cat`, and the importer keeps a `cat` as the stat `cat`, which the writer shows in the args as
/// xprof does: a category written from a `category` stat comes back in the args the second time.
fn categories_in_args(text: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = text
        .split(|&b| b == b'\n')
        .map(|line| {
            let body = line.strip_suffix(b",").unwrap_or(line);
            let Ok(serde_json::Value::Object(mut event)) = serde_json::from_slice(body) else {
                return String::from_utf8_lossy(line).into_owned();
            };
            if let Some(cat) = event.remove("cat") {
                let args = event
                    .entry("args")
                    .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
                match args {
                    serde_json::Value::Object(args) if !args.contains_key("cat") => {
                        args.insert("cat".into(), cat);
                    }
                    _ => {
                        event.insert("cat".into(), cat);
                    }
                }
            }
            serde_json::Value::Object(event).to_string()
        })
        .collect();
    lines.sort_unstable();
    lines
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let serde = serde_json::from_slice::<serde_json::Value>(data);
    let serde_ok = serde.is_ok();
    let streamed = read_chrome(OneByte(data));
    let fast = chrome_to_xspace(data);
    // The importer's fast path reads what serde's visitors read, and fails where they fail, with
    // the same error.
    let slow = read_chrome_with(data, ChromeReadOptions::default().fast_events(false));
    match (&fast, &slow) {
        (Ok(a), Ok(b)) => assert!(a == b, "the fast path reads another import"),
        (a, b) => assert_eq!(
            a.as_ref().err().map(ToString::to_string),
            b.as_ref().err().map(ToString::to_string),
            "the fast path and the visitors disagree"
        ),
    }
    // A second thread scanning ahead in windows of a few bytes (cut between and inside events):
    // the same import, or the same error, as the default read (which the visitors' read, one
    // thread, matched above).
    let ahead = read_chrome_with(
        data,
        ChromeReadOptions::default().threads(2).scan_cut(61, 2),
    );
    match (&fast, &ahead) {
        (Ok(a), Ok(b)) => assert!(a == b, "the threads read another import"),
        (a, b) => assert_eq!(
            a.as_ref().err().map(ToString::to_string),
            b.as_ref().err().map(ToString::to_string),
            "the threads disagree"
        ),
    }
    let import = match fast {
        Ok(import) => import,
        Err(e @ Error::Json { line, column, .. }) => {
            assert_eq!(
                streamed.map_err(|e| e.to_string()).err(),
                Some(e.to_string()),
                "one byte at a time reads differently"
            );
            let lines = data.iter().filter(|b| **b == b'\n').count() as u64 + 1;
            // 0 and 0 for an error about the whole trace (its time span).
            assert!(line <= lines, "line {line} of {lines}");
            assert_eq!(line == 0, column == 0, "line {line}, column {column}");
            return;
        }
        Err(other) => panic!("an error that is not a Chrome error: {other}"),
    };
    let streamed = streamed.unwrap_or_else(|e| panic!("one byte at a time fails: {e}"));
    assert_eq!(streamed, import, "one byte at a time reads differently");
    let text = String::from_utf8_lossy(data);
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    let open_array = trimmed.starts_with('[') && !trimmed.ends_with(']');
    // A string with a lone surrogate or bad UTF-8 is kept as replaced text, with a warning.
    let replaced = import
        .warning_counts
        .contains_key(&profkit_chrome::WarningKind::ReplacedText);
    assert!(
        serde_ok || open_array || replaced,
        "the reader accepts a text serde_json refuses: {:?}",
        serde.err()
    );
    for problem in profkit_xplane::validate(&import.space) {
        assert!(
            !matches!(
                problem.kind,
                ProblemKind::UnknownEventMetadata
                    | ProblemKind::UnknownStatMetadata
                    | ProblemKind::MapKeyMismatch
            ),
            "the reader built a space with broken references: {problem}"
        );
    }
    let chrome = write(&import.space);
    serde_json::from_slice::<serde_json::Value>(&chrome)
        .unwrap_or_else(|e| panic!("our Chrome JSON is not JSON: {e}"));
    let again = chrome_to_xspace(&chrome)
        .unwrap_or_else(|e| panic!("our Chrome JSON does not read back: {e}"));
    let second = write(&again.space);
    if second != chrome
        && sorted_lines(&second) != sorted_lines(&chrome)
        && categories_in_args(&second) != categories_in_args(&chrome)
    {
        let (a, b) = (
            String::from_utf8_lossy(&chrome),
            String::from_utf8_lossy(&second),
        );
        let first_difference = a
            .lines()
            .zip(b.lines())
            .find(|(x, y)| x != y)
            .map(|(x, y)| format!("\n- {x}\n+ {y}"))
            .unwrap_or_default();
        panic!(
            "the Chrome JSON does not come back through an XSpace:{first_difference}\nINPUT {:?}",
            String::from_utf8_lossy(data)
        );
    }
}

//! The summary outputs of `paddle` cases: what `paddle.profiler.Profiler.summary()` prints, as
//! `profkit report` prints it (`summary.txt`, `summary.json`), and the checks against Paddle's own
//! printed summaries.
//!
//! For node trees the summary is computed from the trees; asserted, when the trees validate and
//! pair without warnings: the node trees through the event model, an XSpace and back give the same
//! text (the conversions keep types, memory and run information). For other inputs it is computed
//! from the event model.
//!
//! A case may hold Paddle's printed summaries of the same run, listed in `paddle-summaries.json`
//! (`[{"file", "sorted_by", "op_detail", "thread_sep", "time_unit"}]`): our summary with the same
//! options must have Paddle's tables, rows, order and cells, row by row ([`compare`]), but for
//! the FLOPs column (Paddle computes FLOPs from operator attributes no file keeps). With
//! `paddle_trace.json` (Paddle's Chrome trace of the run), `chrome-summary.txt` records the
//! summary read from the trace and how each of its tables compares with Paddle's.

use std::path::Path;

use profkit_chrome::chrome_to_xspace;
use profkit_convert::events::{recording_to_xspace, xspace_to_recording};
use profkit_events::paddle::nodetree;
use profkit_events::report::summary::{Forest, SortedKey, Summary, SummaryOptions, TimeUnit};
use profkit_events::{Recording, pair};
use serde_json::Value;

use crate::Outputs;

/// One row of a printed summary: its table's title, its thread group, its cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableRow {
    /// The table's title (`Operator Summary`, `Memory Summary - Place(cpu)`, ...).
    pub table: String,
    /// The `Thread: ...` group, in the Operator and UserDefined tables.
    pub group: String,
    /// The cells, split at runs of two or more spaces (the first keeps its indentation).
    pub cells: Vec<String>,
}

/// The rows of a printed summary: the lines between a table's header and its closing rule.
pub fn parse_tables(text: &str) -> Vec<TableRow> {
    let mut rows = Vec::new();
    let mut table = String::new();
    let mut group = String::new();
    // 0: outside a body; 1: header seen, waiting for the rule under it; 2: in a body.
    let mut state = 0;
    let is_rule = |l: &str| !l.is_empty() && l.trim_end().chars().all(|c| c == '-' || c == ' ');
    for line in text.lines() {
        let titled = line.starts_with('-')
            && !is_rule(line)
            && line.trim_matches('-').len() + 2 <= line.len();
        if titled {
            let title = line.trim_matches('-').to_owned();
            if let Some(thread) = title.strip_prefix("Thread: ") {
                group = thread.to_owned();
                state = 2;
            } else {
                table = title;
                group.clear();
                state = 0;
            }
            continue;
        }
        if is_rule(line) {
            state = match state {
                1 => 2,
                2 => 0,
                s => s,
            };
            continue;
        }
        if line.trim().is_empty() {
            if state == 2 {
                state = 0;
            }
            continue;
        }
        if state == 0 {
            if line.starts_with("Name")
                || line.starts_with("Device")
                || line.starts_with("Event Type")
                || line.trim_start().starts_with("Calls")
            {
                state = 1;
            }
            continue;
        }
        if state == 2 {
            let indent = line.len() - line.trim_start().len();
            let mut cells: Vec<String> = line
                .trim()
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
            if let Some(first) = cells.first_mut() {
                *first = format!("{}{first}", " ".repeat(indent));
            }
            rows.push(TableRow {
                table: table.clone(),
                group: group.clone(),
                cells,
            });
        }
    }
    rows
}

/// Compares our printed summary with Paddle's, row by row: the same tables, rows in the same
/// order, the same cells, but for the Operator table's FLOPs cell and the Device table's CPU cells
/// where ours are `-` (not in the input). Returns the differences, one line each.
pub fn compare(ours: &str, theirs: &str) -> Vec<String> {
    let normal = |rows: Vec<TableRow>, mine: bool| -> Vec<TableRow> {
        rows.into_iter()
            .map(|mut r| {
                if r.table == "Operator Summary" && r.cells.len() == 5 {
                    r.cells.pop();
                }
                if mine && r.table == "Device Summary" && r.cells.get(1).is_some_and(|c| c == "-") {
                    r.cells.truncate(1);
                }
                r
            })
            .collect()
    };
    let ours = normal(parse_tables(ours), true);
    let theirs = normal(parse_tables(theirs), false);
    let mut diffs = Vec::new();
    let show = |r: &TableRow| {
        format!(
            "[{}{}] {}",
            r.table,
            if r.group.is_empty() {
                String::new()
            } else {
                format!(" / {}", r.group)
            },
            r.cells.join(" | ")
        )
    };
    for k in 0..ours.len().max(theirs.len()) {
        match (ours.get(k), theirs.get(k)) {
            (Some(a), Some(b)) => {
                let same = a.table == b.table
                    && a.group == b.group
                    && if a.table == "Device Summary" && a.cells.len() == 1 {
                        a.cells.first() == b.cells.first()
                    } else {
                        a.cells == b.cells
                    };
                if !same {
                    diffs.push(format!(
                        "row {k}: Paddle {}\nrow {k}: ours   {}",
                        show(b),
                        show(a)
                    ));
                }
            }
            (Some(a), None) => diffs.push(format!("row {k}: only ours {}", show(a))),
            (None, Some(b)) => diffs.push(format!("row {k}: only Paddle's {}", show(b))),
            (None, None) => {}
        }
    }
    diffs
}

/// Which tables of ours match Paddle's, table by table, as lines `<table>: <verdict>`.
fn table_verdicts(ours: &str, theirs: &str) -> String {
    let ours_rows = parse_tables(ours);
    let theirs_rows = parse_tables(theirs);
    let mut tables: Vec<String> = Vec::new();
    for r in theirs_rows.iter().chain(&ours_rows) {
        if !tables.contains(&r.table) {
            tables.push(r.table.clone());
        }
    }
    let mut out = String::new();
    for t in tables {
        let a: Vec<&TableRow> = ours_rows.iter().filter(|r| r.table == t).collect();
        let b: Vec<&TableRow> = theirs_rows.iter().filter(|r| r.table == t).collect();
        let names = |rows: &[&TableRow]| -> Vec<(String, Option<String>)> {
            rows.iter()
                .map(|r| {
                    (
                        r.cells.first().cloned().unwrap_or_default(),
                        r.cells.get(1).cloned(),
                    )
                })
                .collect()
        };
        let cells_equal = a.len() == b.len()
            && a.iter().zip(&b).all(|(x, y)| {
                let strip = |r: &TableRow| {
                    let mut c = r.cells.clone();
                    if r.table == "Operator Summary" && c.len() == 5 {
                        c.pop();
                    }
                    c
                };
                strip(x) == strip(y)
            });
        let verdict = if cells_equal {
            "same rows, order, calls and times".to_owned()
        } else if names(&a) == names(&b) {
            "same rows, order and calls; times differ".to_owned()
        } else {
            format!("differs ({} rows here, {} in Paddle's)", a.len(), b.len())
        };
        out.push_str(&format!("{t}: {verdict}\n"));
    }
    out
}

fn options_of(v: &Value) -> Result<SummaryOptions, String> {
    let mut o = SummaryOptions::default();
    if let Some(s) = v["sorted_by"].as_str() {
        o.sorted_by = match s {
            "CPUTotal" => SortedKey::CPUTotal,
            "CPUAvg" => SortedKey::CPUAvg,
            "CPUMax" => SortedKey::CPUMax,
            "CPUMin" => SortedKey::CPUMin,
            "GPUTotal" => SortedKey::GPUTotal,
            "GPUAvg" => SortedKey::GPUAvg,
            "GPUMax" => SortedKey::GPUMax,
            "GPUMin" => SortedKey::GPUMin,
            other => return Err(format!("unknown sorted_by {other:?}")),
        };
    }
    if let Some(b) = v["op_detail"].as_bool() {
        o.op_detail = b;
    }
    if let Some(b) = v["thread_sep"].as_bool() {
        o.thread_sep = b;
    }
    if let Some(u) = v["time_unit"].as_str() {
        o.time_unit = match u {
            "s" => TimeUnit::S,
            "ms" => TimeUnit::Ms,
            "us" => TimeUnit::Us,
            "ns" => TimeUnit::Ns,
            other => return Err(format!("unknown time_unit {other:?}")),
        };
    }
    Ok(o)
}

/// Adds `summary.txt`, `summary.json` (and `chrome-summary.txt`) to a case's outputs, after the
/// checks of the module documentation.
pub fn add_outputs(
    case_dir: &Path,
    trees: Option<&nodetree::NodeTreesProto>,
    recording: &Recording,
    outputs: &mut Outputs,
) -> Result<(), String> {
    let forest = match trees {
        Some(t) => Forest::from_node_trees(t),
        None => Forest::from_recording(recording),
    };
    let summary = Summary::new(&forest, SummaryOptions::default());
    let text = summary.text();
    if let Some(t) = trees {
        let clean = nodetree::validate(t).is_empty()
            && pair(&recording.threads).warnings().next().is_none();
        if clean {
            let (space, _) = recording_to_xspace(recording);
            crate::xplane::check_summary_forest(&profkit_xplane::encode(&space), &space)?;
            let back = xspace_to_recording(&space);
            let again =
                Summary::new(&Forest::from_recording(&back), SummaryOptions::default()).text();
            if again != text {
                return Err(format!(
                    "the node trees' summary differs after the event model and an XSpace (- trees, + through XSpace):\n{}",
                    crate::diff::diff(&text, &again)
                ));
            }
        }
    }
    let mut verdicts = String::new();
    if let Ok(list) = std::fs::read(case_dir.join("paddle-summaries.json")) {
        let list: Value =
            serde_json::from_slice(&list).map_err(|e| format!("paddle-summaries.json: {e}"))?;
        for entry in list.as_array().into_iter().flatten() {
            let file = entry["file"]
                .as_str()
                .ok_or("paddle-summaries.json: an entry without file")?;
            let theirs =
                std::fs::read_to_string(case_dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
            let options = options_of(entry).map_err(|e| format!("paddle-summaries.json: {e}"))?;
            let ours = Summary::new(&forest, options).text();
            let diffs = compare(&ours, &theirs);
            if !diffs.is_empty() {
                return Err(format!(
                    "our summary differs from Paddle's {file}:\n{}",
                    diffs.join("\n")
                ));
            }
            if let Ok(json) = std::fs::read(case_dir.join("paddle_trace.json")) {
                let import =
                    chrome_to_xspace(&json).map_err(|e| format!("paddle_trace.json: {e}"))?;
                crate::xplane::check_summary_forest(
                    &profkit_xplane::encode(&import.space),
                    &import.space,
                )?;
                let from_chrome = Summary::new(
                    &Forest::from_recording(&xspace_to_recording(&import.space)),
                    options,
                )
                .text();
                verdicts.push_str(&format!(
                    "# paddle_trace.json's summary against Paddle's {file}\n{}\n",
                    table_verdicts(&from_chrome, &theirs)
                ));
                if entry
                    == list
                        .as_array()
                        .and_then(|l| l.first())
                        .unwrap_or(&Value::Null)
                {
                    verdicts.push_str(&from_chrome);
                    verdicts.push('\n');
                }
            }
        }
    }
    if !verdicts.is_empty() {
        outputs.insert("chrome-summary.txt".into(), verdicts.into_bytes());
    }
    outputs.insert("summary.txt".into(), text.into_bytes());
    let json = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
    outputs.insert("summary.json".into(), format!("{json}\n").into_bytes());
    Ok(())
}

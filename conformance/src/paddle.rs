//! The `paddle` format: PaddlePaddle's legacy `Profile` and node trees, and the event model,
//! read with `profkit-events`.
//!
//! A case holds one input: `input.pb` (a legacy `Profile`), `input.paddle_trace.pb` (node trees)
//! or `input.events.json` (a recording of the event model). `options.json` (`{"sort", "place"}`)
//! chooses the report's sort key and place; for a case with `paddle-report.txt` (Paddle's own
//! printed report of the same run) they are read from that report's header instead.
//!
//! Outputs: `inspect.json` (the file's summary and the pairing's counts), `spans.txt` (each
//! thread's spans as a tree with their times relative to the first event, then the warnings),
//! `report.txt` and `report.json` (the legacy report as `profkit report` prints it, with and
//! without `--json`), `validate.txt` (the file's problems, one per line); `error.txt` instead of
//! all of them when the input does not decode (the whole decode's error and the streaming
//! reader's); `summary.txt`, `summary.json` (and `chrome-summary.txt`): the tables of
//! `Profiler.summary()`, see [`crate::paddle_summary`].
//!
//! Asserted rather than recorded: the input re-encodes to its own bytes, and, when it has no
//! problems, goes through the event model back to the same bytes (`Profile`); the streaming reader
//! yields what the whole decode does; with `paddle-report.txt`, our report has Paddle's rows in
//! Paddle's order with Paddle's calls; with `paddle_trace.json` (Paddle's Chrome trace of the same
//! run), every thread has as many host nodes as the trace has host events; an event-model case
//! without warnings writes a `Profile` whose report is the same text.

use std::collections::BTreeMap;
use std::path::Path;

use profkit_convert::events::{recording_to_xspace, xspace_to_recording};
use profkit_convert::paddle::{SINGLE_KEY, write_timeline};
use profkit_events::paddle::{ReadOptions, legacy, nodetree};
use profkit_events::report::{Place, Report, ReportOptions, SortKey, parse_rows};
use profkit_events::{Recording, Spans, pair};
use profkit_xprof::trace_viewer;
use serde_json::{Value, json};

use crate::{Format, GeneratedFile, Outputs};

/// The handler for `conformance/paddle/`.
pub struct PaddleFormat;

impl Format for PaddleFormat {
    fn name(&self) -> &'static str {
        "paddle"
    }

    fn output_names(&self) -> &'static [&'static str] {
        &[
            "inspect.json",
            "spans.txt",
            "report.txt",
            "report.json",
            "validate.txt",
            "chrome.json",
            "timeline.json",
            "summary.txt",
            "summary.json",
            "chrome-summary.txt",
            "error.txt",
        ]
    }

    fn run(&self, case_dir: &Path) -> Result<Outputs, String> {
        run_case(case_dir)
    }

    fn generated_inputs(&self) -> Vec<GeneratedFile> {
        crate::paddle_cases::cases()
    }
}

/// What a case's input decoded to.
enum Input {
    Profile(legacy::Profile, Vec<u8>),
    NodeTrees(nodetree::NodeTreesProto, Vec<u8>),
    Events(Recording),
}

fn read(case_dir: &Path) -> Result<Result<Input, String>, String> {
    let options = ReadOptions::default();
    let file = |name: &str| std::fs::read(case_dir.join(name)).ok();
    if let Some(bytes) = file("input.pb") {
        let whole = legacy::decode_profile(&bytes);
        let streamed = legacy::ProfileReader::new(&bytes[..], options).collect_profile();
        return Ok(match (whole, streamed) {
            (Ok(p), Ok(s)) if p == s => Ok(Input::Profile(p, bytes)),
            (Ok(_), Ok(_)) => return Err("the streaming reader disagrees with decode".into()),
            (Err(a), b) => Err(format!(
                "decode: {a}\nstream: {}\n",
                b.err().map_or("accepted".to_owned(), |e| e.to_string())
            )),
            (Ok(_), Err(b)) => return Err(format!("only the streaming reader fails: {b}")),
        });
    }
    if let Some(bytes) = file("input.paddle_trace.pb") {
        let whole = nodetree::decode_node_trees(&bytes);
        let streamed = nodetree::NodeTreesReader::new(&bytes[..], options).collect_trees();
        return Ok(match (whole, streamed) {
            (Ok(t), Ok(s)) if t == s => Ok(Input::NodeTrees(t, bytes)),
            (Ok(_), Ok(_)) => return Err("the streaming reader disagrees with decode".into()),
            (Err(a), b) => Err(format!(
                "decode: {a}\nstream: {}\n",
                b.err().map_or("accepted".to_owned(), |e| e.to_string())
            )),
            (Ok(_), Err(b)) => return Err(format!("only the streaming reader fails: {b}")),
        });
    }
    if let Some(bytes) = file("input.events.json") {
        return serde_json::from_slice(&bytes)
            .map(|r| Ok(Input::Events(r)))
            .map_err(|e| format!("input.events.json: {e}"));
    }
    Err("no input.pb, input.paddle_trace.pb or input.events.json".into())
}

/// The report options of a case: from Paddle's report header, `options.json`, or the defaults.
fn report_options(case_dir: &Path) -> Result<ReportOptions, String> {
    let mut options = ReportOptions::default();
    let sort_of = |s: &str| match s {
        "calls" => Some(SortKey::Calls),
        "total" => Some(SortKey::Total),
        "max" => Some(SortKey::Max),
        "min" => Some(SortKey::Min),
        "ave" => Some(SortKey::Ave),
        "default" => Some(SortKey::Default),
        _ => None,
    };
    if let Ok(theirs) = std::fs::read_to_string(case_dir.join("paddle-report.txt")) {
        options.sort = [
            SortKey::Calls,
            SortKey::Total,
            SortKey::Max,
            SortKey::Min,
            SortKey::Ave,
        ]
        .into_iter()
        .find(|k| theirs.contains(&format!("Sorted by {} in", k.domain())))
        .unwrap_or(SortKey::Default);
        options.place = Some(if theirs.contains("\nPlace: All") {
            Place::All
        } else if theirs.contains("\nPlace: CUDA") {
            Place::Cuda
        } else {
            Place::Cpu
        });
    } else if let Ok(text) = std::fs::read(case_dir.join("options.json")) {
        let v: Value = serde_json::from_slice(&text).map_err(|e| format!("options.json: {e}"))?;
        if let Some(s) = v["sort"].as_str() {
            options.sort = sort_of(s).ok_or(format!("options.json: unknown sort {s:?}"))?;
        }
        options.place = match v["place"].as_str() {
            Some("cpu") => Some(Place::Cpu),
            Some("cuda") => Some(Place::Cuda),
            Some("all") => Some(Place::All),
            None => None,
            Some(other) => return Err(format!("options.json: unknown place {other:?}")),
        };
    }
    Ok(options)
}

/// Each thread's spans as an indented tree, times relative to the recording's first event.
fn spans_text(recording: &Recording, spans: &Spans) -> String {
    let t0 = recording
        .threads
        .iter()
        .flat_map(|t| t.events.iter().map(|e| e.cpu_ns))
        .min()
        .unwrap_or(0);
    let mut text = String::new();
    for (thread, paired) in recording.threads.iter().zip(&spans.threads) {
        text += &format!(
            "thread {}{}{}: {} events, {} spans, {} marks, {} warnings\n",
            thread.thread,
            thread
                .name
                .as_deref()
                .map(|n| format!(" {n:?}"))
                .unwrap_or_default(),
            thread
                .os_tid
                .map(|t| format!(" (os tid {t})"))
                .unwrap_or_default(),
            thread.events.len(),
            paired.spans.len(),
            paired.marks.len(),
            paired.warnings.len()
        );
        let children = paired.children();
        let mut stack: Vec<usize> = paired.roots().into_iter().rev().collect();
        while let Some(i) = stack.pop() {
            let s = &paired.spans[i];
            text += &format!(
                "  {}{} +{} ns, {} ns\n",
                "  ".repeat(s.depth as usize),
                spans.paths.last(s.path),
                s.start_ns.wrapping_sub(t0),
                s.end_ns.wrapping_sub(s.start_ns)
            );
            stack.extend(children[i].iter().rev());
        }
        for w in &paired.warnings {
            text += &format!("  warning: {w}\n");
        }
    }
    text
}

/// Paddle's own `tools/timeline.py` output for a case's `Profile`, where the case has it.
pub const PADDLE_TIMELINE: &str = "paddle-timeline.json";

/// timeline.py's output for a profile, `Err` with the reason where timeline.py fails (then the
/// case has no `timeline.json`).
fn timeline(profile: &legacy::Profile) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    write_timeline(&[(SINGLE_KEY.to_owned(), profile)], &mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The recording through the XSpace to Chrome trace JSON; asserted on the way: the XSpace reads
/// back to a recording whose CPU report is the same (when threads carry no OS ids, which become
/// line ids, and pairing left nothing out), memory aside.
fn chrome(
    recording: &Recording,
    report: &Report,
    options: ReportOptions,
) -> Result<Vec<u8>, String> {
    let (space, warnings) = recording_to_xspace(recording);
    let back = xspace_to_recording(&space);
    if warnings.is_empty() && recording.threads.iter().all(|t| t.os_tid.is_none()) {
        let cpu = ReportOptions {
            place: Some(Place::Cpu),
            ..options
        };
        // Memory records become counters, which the event model does not read back.
        let events_only = |text: String| match text.find("Memory Profiling Report") {
            Some(i) => text[..i].to_owned(),
            None => text,
        };
        let ours = events_only(Report::new(&back, cpu).text());
        let original = events_only(Report::new(recording, cpu).text());
        if ours != original {
            return Err(format!(
                "the recording reports differently after a trip through XSpace (- before, + after):\n{}",
                crate::diff::diff(&original, &ours)
            ));
        }
    }
    let _ = report;
    let mut out = Vec::new();
    // As `profkit convert` writes any input but an XSpace.
    let options = profkit_xprof::trace_viewer::TraceViewerOptions::of_layout(
        profkit_xprof::trace_viewer::Layout::TraceEvent,
    );
    trace_viewer::write_space(&space, &mut out, &options).map_err(|e| e.to_string())?;
    Ok(out)
}

fn pretty(value: &Value) -> Result<Vec<u8>, String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    Ok(format!("{text}\n").into_bytes())
}

/// The outputs for one case folder (see the module documentation).
pub fn run_case(case_dir: &Path) -> Result<Outputs, String> {
    let mut outputs = Outputs::new();
    let input = match read(case_dir)? {
        Ok(input) => input,
        Err(error) => {
            outputs.insert("error.txt".into(), error.into_bytes());
            return Ok(outputs);
        }
    };
    let (recording, summary, problems) = match &input {
        Input::Profile(p, bytes) => {
            if &legacy::encode_profile(p) != bytes {
                return Err("the Profile does not re-encode to its own bytes".into());
            }
            let problems = legacy::validate(p);
            let recording = legacy::to_recording(p);
            let written = legacy::from_recording(&recording);
            if problems.is_empty() && legacy::to_recording(&written) != recording {
                return Err("the event model does not come back through a written Profile".into());
            }
            // Paddle's own files come back byte for byte.
            if case_dir.join("paddle-report.txt").is_file()
                && &legacy::encode_profile(&written) != bytes
            {
                return Err(
                    "Paddle's Profile does not come back from the event model byte for byte".into(),
                );
            }
            let summary = serde_json::to_value(legacy::summarize(p)).map_err(|e| e.to_string())?;
            (recording, summary, Some(problems))
        }
        Input::NodeTrees(t, bytes) => {
            if &nodetree::encode_node_trees(t) != bytes {
                return Err("the node trees do not re-encode to their own bytes".into());
            }
            let summary = nodetree::summarize(t);
            check_chrome_trace(case_dir, &summary)?;
            let recording = nodetree::to_recording(t);
            check_memory_nodes(t, &recording)?;
            let summary = serde_json::to_value(summary).map_err(|e| e.to_string())?;
            (recording, summary, Some(nodetree::validate(t)))
        }
        Input::Events(r) => {
            let threads: Vec<Value> = r
                .threads
                .iter()
                .map(|t| json!({"thread": t.thread, "events": t.events.len()}))
                .collect();
            (r.clone(), json!({ "threads": threads }), None)
        }
    };
    let spans = pair(&recording.threads);
    let ranges: usize = spans.threads.iter().map(|t| t.spans.len()).sum();
    let warnings = spans.warnings().count();
    outputs.insert(
        "inspect.json".into(),
        pretty(&json!({
            "summary": summary,
            "threads": recording.threads.len(),
            "events": recording.event_count(),
            "ranges": ranges,
            "device_spans": recording.device_spans.len(),
            "memory_records": recording.memory.len(),
            "pairing_warnings": warnings,
        }))?,
    );
    outputs.insert(
        "spans.txt".into(),
        spans_text(&recording, &spans).into_bytes(),
    );

    let options = report_options(case_dir)?;
    let report = Report::from_spans(&recording, &spans, options);
    let text = report.text();
    if parse_rows(&text) != report.printed_rows() {
        let show = |rows: &[profkit_events::report::PrintedRow]| {
            rows.iter().map(|r| format!("{r}\n")).collect::<String>()
        };
        return Err(format!(
            "the printed report does not parse back to its rows:\n{}",
            crate::diff::diff(&show(&report.printed_rows()), &show(&parse_rows(&text)))
        ));
    }
    if let Ok(theirs) = std::fs::read_to_string(case_dir.join("paddle-report.txt")) {
        let (ours, theirs) = (parse_rows(&text), parse_rows(&theirs));
        if ours != theirs {
            let show = |rows: &[profkit_events::report::PrintedRow]| {
                rows.iter().map(|r| format!("{r}\n")).collect::<String>()
            };
            return Err(format!(
                "our report's rows differ from Paddle's (- Paddle, + ours):\n{}",
                crate::diff::diff(&show(&theirs), &show(&ours))
            ));
        }
    }
    if let Input::Events(_) = &input
        && warnings == 0
    {
        let profile = legacy::from_recording(&recording);
        let back = legacy::to_recording(
            &legacy::decode_profile(&legacy::encode_profile(&profile))
                .map_err(|e| e.to_string())?,
        );
        // A Profile keeps CPU times only (device timing goes to kernel events).
        let cpu = ReportOptions {
            place: Some(Place::Cpu),
            ..options
        };
        if Report::new(&back, cpu).text() != Report::from_spans(&recording, &spans, cpu).text() {
            return Err("the Profile written from the events reports differently".into());
        }
    }
    outputs.insert("report.txt".into(), text.into_bytes());
    outputs.insert(
        "report.json".into(),
        pretty(&serde_json::to_value(&report).map_err(|e| e.to_string())?)?,
    );
    outputs.insert("chrome.json".into(), chrome(&recording, &report, options)?);
    let trees = match &input {
        Input::NodeTrees(t, _) => Some(t),
        _ => None,
    };
    crate::paddle_summary::add_outputs(case_dir, trees, &recording, &mut outputs)?;
    if let Input::Profile(profile, _) = &input
        && let Ok(timeline) = timeline(profile)
    {
        if let Ok(theirs) = std::fs::read(case_dir.join(PADDLE_TIMELINE)) {
            if theirs != timeline {
                return Err(format!(
                    "our timeline differs from timeline.py's ({PADDLE_TIMELINE}; - timeline.py, + profkit):\n{}",
                    crate::diff::diff(
                        &String::from_utf8_lossy(&theirs).replace("},{", "},\n{"),
                        &String::from_utf8_lossy(&timeline).replace("},{", "},\n{")
                    )
                ));
            }
        }
        outputs.insert("timeline.json".into(), timeline);
    }
    if let Some(problems) = problems {
        let text: String = problems
            .iter()
            .map(|p| format!("{:?}: {p}\n", p.kind))
            .collect();
        outputs.insert("validate.txt".into(), text.into_bytes());
    }
    Ok(outputs)
}

/// With Paddle's Chrome trace of the same run beside the node trees: every thread has as many
/// host nodes as the trace has host events (`ph: X` on the thread's `<tid>(C++)` and
/// `<tid>(Python)` rows), and as many memory nodes as the trace has memory events (its `ph: i`
/// instants there).
fn check_chrome_trace(case_dir: &Path, summary: &nodetree::NodeTreesSummary) -> Result<(), String> {
    let Ok(text) = std::fs::read(case_dir.join("paddle_trace.json")) else {
        return Ok(());
    };
    let trace: Value =
        serde_json::from_slice(&text).map_err(|e| format!("paddle_trace.json: {e}"))?;
    let mut host: BTreeMap<u64, usize> = BTreeMap::new();
    let mut memory: BTreeMap<u64, usize> = BTreeMap::new();
    for e in trace["traceEvents"].as_array().into_iter().flatten() {
        let Some(tid) = e["tid"].as_str() else {
            continue;
        };
        if !(tid.ends_with("(C++)") || tid.ends_with("(Python)")) {
            continue;
        }
        let Some(id) = tid.split('(').next().and_then(|t| t.parse().ok()) else {
            continue;
        };
        if e["ph"] == "X" {
            *host.entry(id).or_default() += 1;
        } else if e["ph"] == "i" {
            *memory.entry(id).or_default() += 1;
        }
    }
    let ours: BTreeMap<u64, usize> = summary
        .threads
        .iter()
        .filter(|t| t.host_nodes > 0)
        .map(|t| (t.thread_id, t.host_nodes))
        .collect();
    if ours != host {
        return Err(format!(
            "host nodes per thread {ours:?}, but the Chrome trace has host events {host:?}"
        ));
    }
    let ours: BTreeMap<u64, usize> = summary
        .threads
        .iter()
        .filter(|t| t.mem_nodes > 0)
        .map(|t| (t.thread_id, t.mem_nodes))
        .collect();
    if ours != memory {
        return Err(format!(
            "memory nodes per thread {ours:?}, but the Chrome trace has memory events {memory:?}"
        ));
    }
    Ok(())
}

/// Every memory node of every thread tree (those hanging from the synthetic root too) is a
/// memory event of the event model and of the XSpace's memory line, allocations and frees alike.
fn check_memory_nodes(
    trees: &nodetree::NodeTreesProto,
    recording: &Recording,
) -> Result<(), String> {
    let mut nodes: BTreeMap<i32, usize> = BTreeMap::new();
    for node in trees.thread_trees.iter().flat_map(|t| &t.host_nodes) {
        for mem in &node.mem_nodes {
            *nodes.entry(mem.mem_event.r#type).or_default() += 1;
        }
    }
    let total: usize = nodes.values().sum();
    if recording.memory_events.len() != total {
        return Err(format!(
            "{total} memory nodes (by type {nodes:?}), but {} memory events in the event model",
            recording.memory_events.len()
        ));
    }
    let (space, _) = recording_to_xspace(recording);
    let line = space
        .planes
        .iter()
        .flat_map(|p| &p.lines)
        .find(|l| l.id == profkit_convert::events::MEMORY_LINE_ID);
    let kept = line.map_or(0, |l| l.events.len());
    if kept != total {
        return Err(format!(
            "{total} memory nodes (by type {nodes:?}), but {kept} events on the XSpace's memory line"
        ));
    }
    Ok(())
}

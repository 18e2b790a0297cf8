//! `profkit xprof overview_page|input_pipeline_analyzer|pod_viewer`: the tools xprof renders
//! from an OpStats, rendered from profkit's (`profkit_xprof::tools`), with notes naming what the
//! OpStats lacks, and `--text` tables.

use std::io::Write;

use profkit_xprof::datatable::{Cell, DataTable};
use profkit_xprof::op_stats;
use profkit_xprof::tools::{input_pipeline, overview_page, pod_viewer};

use crate::Failure;

/// The tools of this module.
pub(crate) const TOOLS: [&str; 3] = ["overview_page", "input_pipeline_analyzer", "pod_viewer"];

/// Writes the tool's JSON (or `--text` tables) for these hosts' spaces; returns the notes.
pub(crate) fn run(
    tool: &str,
    spaces: Vec<op_stats::OpStatsSpace>,
    hosts: &[String],
    parts: op_stats::Parts,
    out: &mut dyn Write,
    text: bool,
    rows: usize,
) -> Result<Vec<String>, Failure> {
    let host_refs: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let built = op_stats::build_for(spaces, &host_refs, parts);
    let mut missing: Vec<String> = built.missing_pages().map(str::to_owned).collect();
    if tool != "pod_viewer" {
        missing.extend(input_pipeline::missing(&built.op_stats));
    }
    let notes: Vec<String> = missing
        .iter()
        .map(|m| format!("not reproduced: {m}; what {tool} shows of it is not xprof's"))
        .collect();
    let unsupported =
        |e: input_pipeline::Unsupported| Failure::BadInput(format!("xprof {tool}: {e}"));
    let stats = &built.op_stats;
    if text {
        let tables: Vec<(&str, DataTable)> = match tool {
            "overview_page" => {
                let [a, steps, env, reco, latency, diag] =
                    overview_page::data_tables(stats).map_err(unsupported)?;
                vec![
                    ("Top device ops", a),
                    ("Steps", steps),
                    ("Run environment", env),
                    ("Recommendation", reco),
                    ("Inference latency", latency),
                    ("Diagnostics", diag),
                ]
            }
            "input_pipeline_analyzer" => {
                let a = input_pipeline::analyze(stats).map_err(unsupported)?;
                let [cores, steps, host, reco, diag] = input_pipeline::data_tables(&a);
                vec![
                    ("Core with the most input time, by step", cores),
                    ("Steps", steps),
                    ("Host input ops", host),
                    ("Recommendations", reco),
                    ("Diagnostics", diag),
                ]
            }
            _ => vec![("Steps by core (microseconds)", pod_table(stats))],
        };
        let mut s = String::new();
        for (title, table) in &tables {
            write_table(&mut s, title, table, rows);
        }
        out.write_all(s.as_bytes()).map_err(Failure::Output)?;
    } else {
        let json = match tool {
            "overview_page" => overview_page::to_json(stats).map_err(unsupported)?,
            "input_pipeline_analyzer" => input_pipeline::to_json(stats).map_err(unsupported)?,
            _ => pod_viewer::to_json(stats),
        };
        out.write_all(json.as_bytes()).map_err(Failure::Output)?;
    }
    Ok(notes)
}

/// The pod viewer's records as a table: a row per step and core, its time by kind.
fn pod_table(stats: &profkit_xprof::proto::OpStats) -> DataTable {
    let p = pod_viewer::pod_viewer(stats);
    let mut t = DataTable::default();
    t.column("step", "number", "Step");
    t.column("core", "number", "Core");
    t.column("host", "string", "Host");
    t.column("duration", "number", "Duration");
    t.column("bottleneck", "string", "Bottleneck");
    for name in pod_viewer::KIND_NAMES {
        t.column(name, "number", name);
    }
    for step in &p.steps {
        for (core, r) in &step.per_core {
            let mut row = vec![
                Cell::Number(f64::from(step.step_num)),
                Cell::Number(f64::from(*core)),
                Cell::Text(r.host_name.clone()),
                Cell::Number(r.total_duration_us),
                Cell::Text(r.bottleneck.to_owned()),
            ];
            row.extend(r.step_breakdown_us.iter().map(|us| Cell::Number(*us)));
            t.rows.push(row);
        }
    }
    t.properties.insert("device_type".into(), p.device_type);
    for (i, w) in p.warnings.iter().enumerate() {
        t.properties.insert(format!("warning {}", i + 1), w.clone());
    }
    t
}

/// A cell as the terminal shows it: numbers with up to four decimals.
fn show(cell: &Cell) -> String {
    match cell {
        Cell::Number(v) => {
            let s = format!("{v:.4}");
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        Cell::Text(t) => crate::text::clip(&t.replace('\n', " ")).into_owned(),
        Cell::Bool(b) => b.to_string(),
    }
}

/// One DataTable: its title, its properties (`key: value`), then its columns' labels and at most
/// `rows` rows, aligned (text left, numbers right).
pub(crate) fn write_table(s: &mut String, title: &str, table: &DataTable, rows: usize) {
    s.push_str(title);
    s.push('\n');
    for (k, v) in &table.properties {
        if !v.is_empty() {
            s.push_str(&format!("  {k}: {}\n", crate::text::clip(v)));
        }
    }
    if table.columns.is_empty() {
        s.push('\n');
        return;
    }
    let header: Vec<String> = table.columns.iter().map(|c| c.label.clone()).collect();
    let shown: Vec<Vec<String>> = table
        .rows
        .iter()
        .take(rows)
        .map(|r| r.iter().map(show).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &shown {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let numeric: Vec<bool> = table.columns.iter().map(|c| c.kind == "number").collect();
    let line = |cells: &[String]| -> String {
        let mut l = String::from(" ");
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            l.push(' ');
            if numeric.get(i).copied().unwrap_or(false) {
                l.push_str(&format!("{c:>w$}"));
            } else {
                l.push_str(&format!("{c:<w$}"));
            }
            l.push(' ');
        }
        l.trim_end().to_owned()
    };
    s.push_str(&line(&header));
    s.push('\n');
    for row in &shown {
        s.push_str(&line(row));
        s.push('\n');
    }
    if table.rows.len() > shown.len() {
        s.push_str(&format!(
            "  ... {} more rows (--rows N shows more)\n",
            table.rows.len() - shown.len()
        ));
    }
    s.push('\n');
}

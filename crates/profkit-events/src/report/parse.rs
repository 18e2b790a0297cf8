//! Reading the rows back from a printed report (Paddle's or ours), to compare two reports by
//! rows, order and calls when their times differ.

use serde::Serialize;

/// One Event Summary row of a printed report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PrintedRow {
    /// Which report section it is in (0 for the first `Profiling Report` header).
    pub section: usize,
    /// Whether that section is the merged one.
    pub merged: bool,
    /// Nesting level (indentation / 2; 0 for an empty name, whose indentation cannot be told from
    /// the padding).
    pub depth: usize,
    /// The name shown, without the indentation.
    pub name: String,
    /// The Calls column.
    pub calls: u64,
}

impl std::fmt::Display for PrintedRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{}{} x{}",
            if self.merged { "[merged] " } else { "" },
            "  ".repeat(self.depth),
            self.name,
            self.calls
        )
    }
}

/// The Event Summary rows of every section of a printed report, in order. Lines that do not
/// parse as rows (other blocks, text around the report) are skipped.
pub fn parse_rows(text: &str) -> Vec<PrintedRow> {
    let mut rows = Vec::new();
    let mut section: Option<usize> = None;
    let mut merged = false;
    // The byte offset of the Calls column while inside a table.
    let mut calls_at: Option<usize> = None;
    for line in text.lines() {
        if line.contains("Memory Profiling Report") {
            calls_at = None;
            continue;
        }
        if line.contains("Profiling Report") {
            section = Some(section.map_or(0, |s| s + 1));
            merged = false;
            calls_at = None;
            continue;
        }
        if line.starts_with("Note! This Report merge all thread info into one.") {
            merged = true;
            continue;
        }
        if line.starts_with("Event ") && line.split_whitespace().nth(1) == Some("Calls") {
            calls_at = line.find("Calls");
            continue;
        }
        let Some(width) = calls_at else { continue };
        if line.trim().is_empty() || line.starts_with("---") {
            calls_at = None;
            continue;
        }
        if let Some(row) = parse_row(line, width) {
            rows.push(PrintedRow {
                section: section.unwrap_or(0),
                merged,
                ..row
            });
        }
    }
    rows
}

fn parse_row(line: &str, width: usize) -> Option<PrintedRow> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    // The name fills its column unless it is longer, in which case the calls follow it directly.
    let (name, rest) = match line.get(..width) {
        Some(head) if head.ends_with(' ') => (head.trim_end(), &line[width..]),
        _ => {
            // The token holding the calls is followed by the other cells: Total, Min., Max.,
            // Ave., Ratio. (and the two `time (ratio)` cells, four tokens, in All mode).
            let mut tokens = Vec::new();
            let mut start = None;
            for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
                match (c == ' ', start) {
                    (false, None) => start = Some(i),
                    (true, Some(s)) => {
                        tokens.push((s, i));
                        start = None;
                    }
                    _ => {}
                }
            }
            let cells = if line.contains(" (") { 9 } else { 5 };
            let (_, head_end) = *tokens.get(tokens.len().checked_sub(cells + 1)?)?;
            let head = line.get(..head_end)?;
            let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            let split = head_end - digits;
            (line.get(..split)?, line.get(split..)?)
        }
    };
    let calls = rest.split_whitespace().next()?.parse().ok()?;
    let name = name.trim_start_matches(' ');
    Some(PrintedRow {
        section: 0,
        merged: false,
        // An empty name leaves only spaces before the calls: its depth cannot be told.
        depth: if name.is_empty() { 0 } else { indent / 2 },
        name: name.to_owned(),
        calls,
    })
}

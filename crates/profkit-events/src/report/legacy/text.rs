//! Printing the legacy report as Paddle does.

use std::fmt::Write as _;

use super::{MemcpyLine, MemoryRow, Overhead, Place, Report, Row, Section};
use crate::report::parse::PrintedRow;
use crate::report::{cfmt, pad};

impl Report {
    /// The report as Paddle prints it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for section in &self.sections {
            self.write_section(&mut out, section);
        }
        write_memory(&mut out, &self.memory);
        out
    }

    fn write_section(&self, out: &mut String, section: &Section) {
        out.push_str(
            "\n------------------------->     Profiling Report     <-------------------------\n\n",
        );
        if section.merged {
            out.push_str("Note! This Report merge all thread info into one.\n");
        }
        let _ = writeln!(out, "Place: {}", self.place.name());
        out.push_str("Time unit: ms\n");
        let _ = write!(
            out,
            "Sorted by {} in descending order in the same thread\n\n",
            self.sorted_domain
        );
        if let Some(o) = &section.overhead {
            write_overhead(out, o);
        }
        out.push_str(
            "\n-------------------------       Event Summary       -------------------------\n\n",
        );
        let w = section.name_width;
        pad(out, "Event", w);
        pad(out, "Calls", 12);
        pad(out, "Total", 12);
        if self.place == Place::All {
            pad(out, "CPU Time (Ratio)", 24);
            pad(out, "GPU Time (Ratio)", 24);
        }
        for title in ["Min.", "Max.", "Ave.", "Ratio."] {
            pad(out, title, 12);
        }
        out.push('\n');
        for table in &section.tables {
            for row in &table.rows {
                self.write_row(out, row, w);
            }
        }
    }

    fn write_row(&self, out: &mut String, row: &Row, width: usize) {
        let name = format!("{}{}", "  ".repeat(row.depth), row.display);
        pad(out, &name, width);
        pad(out, &row.calls.to_string(), 12);
        pad(out, &cfmt::g(row.total), 12);
        if self.place == Place::All {
            let share = |t: f64| if row.total > 0.0 { t / row.total } else { 0.0 };
            let cell = |t: f64| format!("{} ({})", cfmt::f(t), cfmt::f(share(t)));
            pad(out, &cell(row.cpu_time), 24);
            pad(out, &cell(row.gpu_time), 24);
        }
        pad(out, &cfmt::g(row.min), 12);
        pad(out, &cfmt::g(row.max), 12);
        pad(out, &cfmt::g(row.ave), 12);
        if row.name.contains("ext_reorder") || row.name.contains("int_reorder") {
            let _ = write!(out, "{}*", cfmt::g(row.ratio));
        } else {
            pad(out, &cfmt::g(row.ratio), 12);
        }
        out.push('\n');
        for child in &row.children {
            self.write_row(out, child, width);
        }
    }

    /// The rows as [`parse_rows`](crate::report::parse_rows) reads them from [`Report::text`] (so a row with an empty name has
    /// depth 0).
    pub fn printed_rows(&self) -> Vec<PrintedRow> {
        let mut sections: Vec<*const Section> = Vec::new();
        self.rows()
            .into_iter()
            .map(|(section, row)| {
                let ptr: *const Section = section;
                if sections.last() != Some(&ptr) {
                    sections.push(ptr);
                }
                PrintedRow {
                    section: sections.len() - 1,
                    merged: section.merged,
                    depth: if row.display.is_empty() { 0 } else { row.depth },
                    name: row.display.clone(),
                    calls: row.calls,
                }
            })
            .collect()
    }

    /// Every row of every section, depth first in report order, with its section.
    pub fn rows(&self) -> Vec<(&Section, &Row)> {
        let mut out = Vec::new();
        for section in &self.sections {
            let mut stack: Vec<&Row> = section
                .tables
                .iter()
                .flat_map(|t| t.rows.iter())
                .rev()
                .collect();
            while let Some(row) = stack.pop() {
                out.push((section, row));
                stack.extend(row.children.iter().rev());
            }
        }
        out
    }
}

pub(super) fn write_overhead(out: &mut String, o: &Overhead) {
    out.push_str(
        "-------------------------     Overhead Summary      -------------------------\n\n",
    );
    let _ = writeln!(out, "Total time: {}", cfmt::g(o.elapsed_time));
    let percent = |ratio: f32| cfmt::g(f64::from(ratio * 100.0));
    pad(out, "  Computation time", 25);
    out.push_str("Total: ");
    pad(out, &cfmt::g(o.compute_time), 12);
    let _ = writeln!(out, "Ratio: {}%", percent(o.compute_ratio));
    pad(out, "  Framework overhead", 25);
    out.push_str("Total: ");
    pad(out, &cfmt::g(o.framework_time), 12);
    let _ = writeln!(out, "Ratio: {}%", percent(o.framework_ratio));
    out.push_str(
        "\n-------------------------     GpuMemCpy Summary     -------------------------\n\n",
    );
    let line = |out: &mut String, name: &str, l: &MemcpyLine| {
        pad(out, name, 25);
        out.push_str("Calls: ");
        pad(out, &l.calls.to_string(), 12);
        out.push_str("Total: ");
        pad(out, &cfmt::g(l.total), 12);
        let _ = writeln!(out, "Ratio: {}%", cfmt::g(l.ratio * 100.0));
    };
    line(out, "GpuMemcpy", &o.memcpy);
    for (name, l) in [
        ("  GpuMemcpyAsync", &o.memcpy_async),
        ("  GpuMemcpySync", &o.memcpy_sync),
    ] {
        if l.calls != 0 {
            line(out, name, l);
        }
    }
}

pub(super) fn write_memory(out: &mut String, rows: &[MemoryRow]) {
    out.push_str("\n------------------------->    Memory Profiling Report     <-------------------------\n\n");
    pad(out, "Event", 55);
    for title in ["Alloc Calls", "Size(MB)", "Free Calls", "Size(MB)"] {
        pad(out, title, 18);
    }
    out.push('\n');
    for row in rows {
        pad(out, &format!("{}:{}", row.place, row.annotation), 55);
        pad(out, &row.alloc_calls.to_string(), 18);
        pad(out, &cfmt::g(row.alloc_mb), 18);
        pad(out, &row.free_calls.to_string(), 18);
        pad(out, &cfmt::g(row.free_mb), 18);
        out.push('\n');
    }
    out.push('\n');
}

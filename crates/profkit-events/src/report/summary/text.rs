//! Printing the summary as Paddle's `_build_table` does: left-aligned cells padded to their
//! column's width and followed by two spaces, dashed rules, titles centred in dashes, times with
//! two decimals in the chosen unit, ratios as percentages with two decimals.

use super::{Group, Row, Summary, TimeUnit, Times};
use crate::report::pad;

/// A table's columns: their widths.
struct Columns(Vec<usize>);

impl Columns {
    /// The length of a full line (cells and the spaces between them).
    fn line_length(&self) -> usize {
        (self.0.iter().sum::<usize>() + 2 * self.0.len()).saturating_sub(2)
    }

    fn sep(&self, out: &mut String) {
        for w in &self.0 {
            out.push_str(&"-".repeat(*w));
            out.push_str("  ");
        }
        out.push('\n');
    }

    fn row(&self, out: &mut String, cells: &[&str]) {
        for (w, c) in self.0.iter().zip(cells) {
            pad(out, c, *w);
            out.push_str("  ");
        }
        out.push('\n');
    }

    fn title(&self, out: &mut String, text: &str) {
        title(out, self.line_length(), text);
    }
}

fn title(out: &mut String, length: usize, text: &str) {
    let left = length.saturating_sub(text.len());
    let half = left / 2;
    out.push_str(&"-".repeat(half));
    out.push_str(text);
    out.push_str(&"-".repeat(left - half));
    out.push('\n');
}

/// Python's `'{:.2f}'` of a float.
fn f2(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    format!("{v:.2}")
}

fn time(t: f64, unit: TimeUnit) -> String {
    let v = match unit {
        TimeUnit::S => t / 1e9,
        TimeUnit::Ms => t / 1e6,
        TimeUnit::Us => t / 1e3,
        TimeUnit::Ns => t,
    };
    f2(v)
}

fn time_i(t: i64, unit: TimeUnit) -> String {
    time(t as f64, unit)
}

fn ratio(r: f64) -> String {
    f2(r * 100.0)
}

/// `Total / Avg / Max / Min / Ratio(%)`.
fn times_cell(t: &Times, calls: u64, r: f64, unit: TimeUnit) -> String {
    let avg = if calls == 0 {
        f64::NAN
    } else {
        t.total as f64 / calls as f64
    };
    format!(
        "{} / {} / {} / {} / {}",
        time_i(t.total, unit),
        time(avg, unit),
        time_i(t.max, unit),
        t.min.map_or_else(|| "-".to_owned(), |m| time_i(m, unit)),
        ratio(r)
    )
}

/// A row's name, calls, CPU and GPU cells.
type Cells = (String, String, String, String);

fn cells(row: &Row, unit: TimeUnit) -> Cells {
    let indent = "  ".repeat(row.depth);
    let calls = row.calls.map_or_else(|| "-".to_owned(), |c| c.to_string());
    let (cpu, gpu) = match (row.calls, &row.cpu) {
        (None, Some(cpu)) => (
            format!(
                "{} / - / - / - / {}",
                time_i(cpu.total, unit),
                ratio(row.cpu_ratio)
            ),
            format!(
                "{} / - / - / - / {}",
                time_i(row.gpu.total, unit),
                ratio(row.gpu_ratio)
            ),
        ),
        (Some(c), Some(cpu)) => (
            times_cell(cpu, c, row.cpu_ratio, unit),
            times_cell(&row.gpu, c, row.gpu_ratio, unit),
        ),
        (c, None) => (
            "- / - / - / - / -".to_owned(),
            times_cell(&row.gpu, c.unwrap_or(0), row.gpu_ratio, unit),
        ),
    };
    (format!("{indent}{}", row.name), calls, cpu, gpu)
}

/// Cuts a detail row's name as Paddle does to fit the Operator table's name column.
fn cut(name: &str, depth: usize, width: usize) -> String {
    let indent = 2 * depth;
    if depth == 0 || name.len() + indent <= width {
        return name.to_owned();
    }
    let keep = width.saturating_sub(3 + indent);
    let mut end = keep.min(name.len());
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &name[..end])
}

impl Summary {
    /// The summary as Paddle prints it, then what the input lacks (the notes).
    pub fn text(&self) -> String {
        let mut out = String::new();
        let unit = self.options.time_unit;
        self.device_table(&mut out);
        self.overview_table(&mut out, unit);
        self.model_table(&mut out, unit);
        self.distributed_table(&mut out, unit);
        self.operator_table(&mut out, unit);
        self.kernel_table(&mut out, unit);
        self.manipulation_table(&mut out, unit);
        self.user_table(&mut out, unit);
        self.memory_tables(&mut out);
        if !self.notes.is_empty() || self.left_out > 0 {
            out.push_str("Not in the input:\n");
            for n in &self.notes {
                out.push_str(n);
                out.push('\n');
            }
            if self.left_out > 0 {
                out.push_str(&format!(
                    "{} host ranges were left out: not in their thread's tree, or unpaired.\n",
                    self.left_out
                ));
            }
        }
        out
    }

    fn device_table(&self, out: &mut String) {
        let c = Columns(vec![30, 20]);
        c.title(out, "Device Summary");
        c.sep(out);
        c.row(out, &["Device", "Utilization (%)"]);
        c.sep(out);
        let cpu = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), ratio);
        c.row(out, &["CPU(Process)", &cpu(self.device.cpu_process)]);
        c.row(out, &["CPU(System)", &cpu(self.device.cpu_system)]);
        for (id, r) in &self.device.gpus {
            c.row(out, &[&format!("GPU{id}"), &ratio(*r)]);
        }
        c.sep(out);
        out.push_str("Note:\nCPU(Process) Utilization = Current process CPU time over all cpu cores / elapsed time, so max utilization can be reached 100% * number of cpu cores.\nCPU(System) Utilization = All processes CPU time over all cpu cores(busy time) / (busy time + idle time).\nGPU Utilization = Current process GPU time / elapsed time.\n");
        if self.device.cpu_process.is_none() || self.device.cpu_system.is_none() {
            out.push_str("(-: CPU utilisation is not in the input.)\n");
        }
        out.push_str(&"-".repeat(c.line_length()));
        out.push_str("\n\n\n");
    }

    fn overview_table(&self, out: &mut String, unit: TimeUnit) {
        let c = Columns(vec![25; 4]);
        c.title(out, "Overview Summary");
        out.push_str(&format!("Time unit: {}\n", unit.name()));
        c.sep(out);
        c.row(out, &["Event Type", "Calls", "CPU Time", "Ratio (%)"]);
        c.sep(out);
        for (k, r) in self.overview_cpu.iter().enumerate() {
            let name = if k == 0 {
                r.event_type.clone()
            } else {
                format!("  {}", r.event_type)
            };
            c.row(
                out,
                &[
                    &name,
                    &r.calls.to_string(),
                    &time_i(r.time, unit),
                    &ratio(r.ratio),
                ],
            );
        }
        c.sep(out);
        c.row(out, &["", "Calls", "GPU Time", "Ratio (%)"]);
        c.sep(out);
        for r in &self.overview_gpu {
            c.row(
                out,
                &[
                    &format!("  {}", r.event_type),
                    &r.calls.to_string(),
                    &time_i(r.time, unit),
                    &ratio(r.ratio),
                ],
            );
        }
        c.sep(out);
        out.push_str("Note:\nIn this table, We sum up all collected events in terms of event type.\nThe time of events collected on host are presented as CPU Time, and as GPU Time if on device.\nEvents with different types may overlap or inclusion, e.g. Operator includes OperatorInner, so the sum of ratios is not 100%.\nThe time of events in the same type with overlap will not calculate twice, and all time is summed after merged.\nExample:\nThread 1:\n  Operator: |___________|     |__________|\nThread 2:\n  Operator:   |____________|     |___|\nAfter merged:\n  Result:   |______________|  |__________|\n\n");
        out.push_str(&"-".repeat(c.line_length()));
        out.push_str("\n\n\n");
    }

    fn model_table(&self, out: &mut String, unit: TimeUnit) {
        if self.model.is_empty() {
            return;
        }
        let rows: Vec<_> = self.model.iter().map(|r| cells(r, unit)).collect();
        let c = widths(&rows, 15, None);
        c.title(out, "Model Summary");
        out.push_str(&format!("Time unit: {}\n", unit.name()));
        c.sep(out);
        c.row(out, &HEADERS4);
        c.sep(out);
        for r in &rows {
            c.row(out, &[&r.0, &r.1, &r.2, &r.3]);
        }
        c.sep(out);
        out.push_str("Note:\nIn this table, GPU time is the sum of all device(GPU) events called in the phase.\nUnlike overview summary, if two device(GPU) events execute on different streams with overlap time, we sum them directly here.\n\n");
        out.push_str(&"-".repeat(c.line_length()));
        out.push_str("\n\n\n");
    }

    fn distributed_table(&self, out: &mut String, unit: TimeUnit) {
        let Some(d) = &self.distributed else { return };
        let c = Columns(vec![25; 3]);
        c.title(out, "Distribution Summary");
        out.push_str(&format!("Time unit: {}\n", unit.name()));
        c.sep(out);
        c.row(out, &["Name", "Total Time", "Ratio (%)"]);
        c.sep(out);
        let r = |t: i64| {
            if self.total == 0 {
                0.0
            } else {
                t as f64 / self.total as f64
            }
        };
        for (name, t) in [
            ("ProfileStep", self.total),
            ("  Communication", d.communication),
            ("  Computation", d.computation),
            ("  Overlap", d.overlap),
        ] {
            c.row(out, &[name, &time_i(t, unit), &ratio(r(t))]);
        }
        c.sep(out);
        out.push_str("Note:\nCommunication time: Communication Event time, Communication Op time and its kernel time on gpu.\nComputation time: Kernel time, except kernels belong to communication(nccl kernels).\nOverlap time: Communication time intersects with computation time.\nExample:\nCommunication:\n  CPU:              |_________________|\n  GPU:                                  |______________|\n  Total:            |_________________| |______________|\nComputation time(Kernel):\n  GPU:         |________________|\nOverlap time:       |___________|\n\n");
        out.push_str(&"-".repeat(c.line_length()));
        out.push_str("\n\n\n");
    }

    fn operator_table(&self, out: &mut String, unit: TimeUnit) {
        if self.operator.is_empty() {
            return;
        }
        const NAME: usize = 52;
        let groups: Vec<(String, Vec<Cells>)> = self
            .operator
            .iter()
            .map(|g| {
                let rows = g
                    .rows
                    .iter()
                    .map(|r| {
                        let mut cut_row = r.clone();
                        cut_row.name = cut(&r.name, r.depth, NAME);
                        cells(&cut_row, unit)
                    })
                    .collect();
                (g.thread.clone(), rows)
            })
            .collect();
        let all: Vec<_> = groups.iter().flat_map(|g| g.1.iter().cloned()).collect();
        let mut c = widths(&all, NAME, None);
        c.0.push(10);
        c.title(out, "Operator Summary");
        out.push_str(&format!("Time unit: {}\n", unit.name()));
        c.sep(out);
        c.row(
            out,
            &[HEADERS4[0], HEADERS4[1], HEADERS4[2], HEADERS4[3], "FLOPs"],
        );
        c.sep(out);
        for (thread, rows) in &groups {
            c.title(out, &format!("Thread: {thread}"));
            for r in rows {
                // FLOPs need operator attributes, which no file keeps.
                c.row(out, &[&r.0, &r.1, &r.2, &r.3, "-"]);
            }
        }
        c.sep(out);
        out.push_str("\n\n");
    }

    fn kernel_table(&self, out: &mut String, unit: TimeUnit) {
        if self.kernel.is_empty() {
            return;
        }
        const NAME: usize = 90;
        let rows: Vec<(String, String, String)> = self
            .kernel
            .iter()
            .map(|r| {
                let calls = r.calls.unwrap_or(0);
                (
                    kernel_name(&r.name, NAME),
                    calls.to_string(),
                    times_cell(&r.gpu, calls, r.gpu_ratio, unit),
                )
            })
            .collect();
        let calls_w = rows.iter().map(|r| r.1.len()).fold(6, usize::max);
        let gpu_w = rows.iter().map(|r| r.2.len()).fold(40, usize::max);
        let c = Columns(vec![NAME, calls_w, gpu_w]);
        c.title(out, "Kernel Summary");
        out.push_str(&format!("Time unit: {}\n", unit.name()));
        c.sep(out);
        c.row(
            out,
            &["Name", "Calls", "GPU Total / Avg / Max / Min / Ratio(%)"],
        );
        c.sep(out);
        for r in &rows {
            c.row(out, &[&r.0, &r.1, &r.2]);
        }
        c.sep(out);
        out.push_str("\n\n");
    }

    fn manipulation_table(&self, out: &mut String, unit: TimeUnit) {
        if self.memory_manipulation.is_empty() {
            return;
        }
        let rows: Vec<_> = self
            .memory_manipulation
            .iter()
            .map(|r| cells(r, unit))
            .collect();
        let c = widths(&rows, 0, Some(()));
        c.title(out, "Memory Manipulation Summary");
        out.push_str(&format!("Time unit: {}\n", unit.name()));
        c.sep(out);
        c.row(out, &HEADERS4);
        c.sep(out);
        for r in &rows {
            c.row(out, &[&r.0, &r.1, &r.2, &r.3]);
        }
        c.sep(out);
        out.push_str("\n\n");
    }

    fn user_table(&self, out: &mut String, unit: TimeUnit) {
        if self.user_defined.is_empty() {
            return;
        }
        let groups: Vec<(&Group, Vec<_>)> = self
            .user_defined
            .iter()
            .map(|g| (g, g.rows.iter().map(|r| cells(r, unit)).collect()))
            .collect();
        let all: Vec<_> = groups.iter().flat_map(|g| g.1.iter().cloned()).collect();
        let c = widths(&all, 0, Some(()));
        c.title(out, "UserDefined Summary");
        out.push_str(&format!("Time unit: {}\n", unit.name()));
        c.sep(out);
        c.row(out, &HEADERS4);
        c.sep(out);
        for (g, rows) in &groups {
            c.title(out, &format!("Thread: {}", g.thread));
            for r in rows {
                c.row(out, &[&r.0, &r.1, &r.2, &r.3]);
            }
        }
        out.push_str("\n\n");
    }

    fn memory_tables(&self, out: &mut String) {
        for t in &self.memory {
            let c = Columns(vec![50, 12, 15, 15, 15, 15, 15]);
            c.title(out, &format!("Memory Summary - {}", t.place));
            out.push_str(&format!("Peak Allocated Memory: {}\n", t.peak_allocated));
            out.push_str(&format!("Peak Reserved Memory: {}\n", t.peak_reserved));
            c.sep(out);
            c.row(
                out,
                &[
                    "Name",
                    "Type",
                    "Allocation Count",
                    "Free Count",
                    "Allocation Size",
                    "Free Size",
                    "Increased Size",
                ],
            );
            c.sep(out);
            for r in &t.rows {
                c.row(
                    out,
                    &[
                        &r.name,
                        r.memory_type,
                        &r.allocation_count.to_string(),
                        &r.free_count.to_string(),
                        &r.allocation_size.to_string(),
                        &r.free_size.to_string(),
                        &r.increased_size.to_string(),
                    ],
                );
            }
            out.push_str("\n\n");
        }
    }
}

const HEADERS4: [&str; 4] = [
    "Name",
    "Calls",
    "CPU Total / Avg / Max / Min / Ratio(%)",
    "GPU Total / Avg / Max / Min / Ratio(%)",
];

/// The four columns' widths: the name column `name` wide (or, with `fit`, as wide as the longest
/// name), calls at least 6, the time columns at least 40.
fn widths(rows: &[Cells], name: usize, fit: Option<()>) -> Columns {
    let name = match fit {
        Some(()) => rows.iter().map(|r| r.0.len()).fold(name, usize::max),
        None => name,
    };
    // Paddle widens the calls column only for numbers, not for `-`.
    let calls = rows
        .iter()
        .filter(|r| r.1 != "-")
        .map(|r| r.1.len())
        .fold(6, usize::max);
    let cpu = rows.iter().map(|r| r.2.len()).fold(40, usize::max);
    let gpu = rows.iter().map(|r| r.3.len()).fold(40, usize::max);
    Columns(vec![name, calls, cpu, gpu])
}

/// A kernel's name as the Kernel table shows it: the arguments of a C++ signature
/// `name<...>(...)` taken off, then cut to the column.
fn kernel_name(name: &str, width: usize) -> String {
    // Python's `re.match(r'(.+?)(<.*>)(\(.*\))', name)`: the first `<` after the first byte,
    // the last `>` after it that a `(` follows with a `)` somewhere after.
    let lt = name.get(1..).and_then(|rest| rest.find('<')).map(|i| i + 1);
    let gt = lt.and_then(|lt| {
        let bytes = name.as_bytes();
        (lt + 1..bytes.len()).rev().find(|&g| {
            bytes.get(g) == Some(&b'>')
                && bytes.get(g + 1) == Some(&b'(')
                && bytes.get(g + 2..).is_some_and(|r| r.contains(&b')'))
        })
    });
    let shown = match gt {
        Some(gt) => name.get(..=gt).unwrap_or(name).to_owned(),
        None => name.to_owned(),
    };
    if shown.len() > width {
        let mut end = width.saturating_sub(3);
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &shown[..end])
    } else {
        shown
    }
}

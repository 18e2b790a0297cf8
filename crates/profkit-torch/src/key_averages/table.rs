//! The table as torch's `_build_table` prints it: right-aligned columns two spaces apart (each
//! line ends with those two spaces), names cut to 52 characters and `...`, times with three
//! decimals in us, ms or s (`_format_time`), shares with two decimals, memory in B, KB, MB or GB
//! (`_format_memory`), FLOPs scaled by the smallest count's power of a thousand, and the totals
//! under the rows.

use super::{KeyAverages, Row, SortKey};

/// The unit every time is printed in (`time_unit=`); by default each its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
}

/// `table(...)`'s options.
#[derive(Clone, Debug)]
pub struct TableOptions {
    /// `sort_by`; `None` keeps `key_averages`' order.
    pub sort_by: Option<SortKey>,
    /// `row_limit`: at most this many rows (negative: all; torch's default is 100).
    pub row_limit: i64,
    /// `time_unit`.
    pub time_unit: Option<TimeUnit>,
    /// `header`: a line printed above the table, between lines of `=`.
    pub header: Option<String>,
    /// `top_level_events_only`: only the rows whose first event has no parent (an operator
    /// called from a Python call of a `with_stack` trace has one); the totals still count every
    /// row.
    pub top_level_events_only: bool,
    /// `max_name_column_width` (55).
    pub max_name_column_width: usize,
    /// `max_shapes_column_width` (80).
    pub max_shapes_column_width: usize,
    /// `max_src_column_width` (75).
    pub max_src_column_width: usize,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            sort_by: None,
            row_limit: 100,
            time_unit: None,
            header: None,
            top_level_events_only: false,
            max_name_column_width: 55,
            max_shapes_column_width: 80,
            max_src_column_width: 75,
        }
    }
}

/// `_format_time`.
pub(crate) fn format_time(us: f64) -> String {
    if us >= 1_000_000.0 {
        format!("{:.3}s", us / 1_000_000.0)
    } else if us >= 1000.0 {
        format!("{:.3}ms", us / 1000.0)
    } else {
        format!("{us:.3}us")
    }
}

fn time(us: f64, unit: Option<TimeUnit>) -> String {
    match unit {
        Some(TimeUnit::S) => format!("{:.3}s", us / 1_000_000.0),
        Some(TimeUnit::Ms) => format!("{:.3}ms", us / 1000.0),
        Some(TimeUnit::Us) => format!("{us:.3}us"),
        None => format_time(us),
    }
}

/// `_format_time_share`.
fn share(us: f64, total_us: f64) -> String {
    if total_us == 0.0 {
        return "NaN".to_owned();
    }
    format!("{:.2}%", us * 100.0 / total_us)
}

/// `_format_memory`.
pub(crate) fn format_memory(bytes: i64) -> String {
    const KB: i64 = 1024;
    const MB: i64 = 1024 * KB;
    const GB: i64 = 1024 * MB;
    let b = bytes as f64;
    if bytes.unsigned_abs() >= GB as u64 {
        format!("{:.2} GB", b / GB as f64)
    } else if bytes.unsigned_abs() >= MB as u64 {
        format!("{:.2} MB", b / MB as f64)
    } else if bytes.unsigned_abs() >= KB as u64 {
        format!("{:.2} KB", b / KB as f64)
    } else {
        format!("{bytes} B")
    }
}

/// Python's `len`: characters, not bytes.
fn chars(s: &str) -> usize {
    s.chars().count()
}

fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

struct Layout {
    widths: Vec<(usize, bool)>, // (width, left-aligned)
}

impl Layout {
    fn line(&self, values: &[String]) -> String {
        let mut s = String::new();
        for ((w, left), v) in self.widths.iter().zip(values) {
            let pad = w.saturating_sub(chars(v));
            if *left {
                s.push_str(v);
                s.extend(std::iter::repeat_n(' ', pad));
            } else {
                s.extend(std::iter::repeat_n(' ', pad));
                s.push_str(v);
            }
            s.push_str("  ");
        }
        s
    }

    /// torch's `line_length`: the columns and the spaces between them.
    fn length(&self) -> usize {
        self.widths
            .iter()
            .map(|(w, _)| w + 2)
            .sum::<usize>()
            .saturating_sub(2)
    }

    fn separator(&self) -> String {
        let mut s = String::new();
        for (w, _) in &self.widths {
            s.extend(std::iter::repeat_n('-', *w));
            s.push_str("  ");
        }
        s
    }
}

/// torch's `auto_scale_flops`: the scale and header for the smallest positive count.
fn flops_scale(min: i64) -> (f64, &'static str) {
    const HEADERS: [&str; 6] = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"];
    let log = ((min as f64).log10() / 3.0).clamp(0.0, (HEADERS.len() - 1) as f64);
    let i = log.floor() as usize;
    (
        10f64.powf(log.floor() * -3.0),
        HEADERS[i.min(HEADERS.len() - 1)],
    )
}

impl KeyAverages {
    /// The table `table(...)` prints for these averages ("" without rows, as torch).
    pub fn table(&self, options: &TableOptions) -> String {
        if self.rows.is_empty() {
            return String::new();
        }
        let unit = options.time_unit;
        let rows = self.sorted(options.sort_by);
        let has_device_time = rows.iter().any(|r| r.self_device_time_total_us > 0.0);
        let has_device_mem = rows.iter().any(|r| r.self_device_memory_usage > 0);
        let has_overloads = rows
            .iter()
            .any(|r| r.overload_name.as_deref().is_some_and(|o| !o.is_empty()));
        let has_shapes = rows
            .iter()
            .any(|r| r.input_shapes.as_deref().is_some_and(|s| s != "[]"));
        let stacks: Vec<&Vec<String>> = rows
            .iter()
            .map(|r| &r.stack)
            .filter(|s| !s.is_empty())
            .collect();
        let has_stack = !stacks.is_empty();
        let name_width = (rows.iter().map(|r| chars(&r.name)).max().unwrap_or(0) + 4)
            .min(options.max_name_column_width);
        let shapes_width = (rows
            .iter()
            .map(|r| chars(r.input_shapes.as_deref().unwrap_or("")))
            .max()
            .unwrap_or(0)
            + 4)
        .min(options.max_shapes_column_width);
        let src_width = (stacks
            .iter()
            .flat_map(|s| s.iter().map(|f| chars(f)))
            .max()
            .unwrap_or(0)
            + 4)
        .min(options.max_src_column_width);

        let mut headers: Vec<String> = vec!["Name".to_owned()];
        if has_overloads {
            headers.push("Overload Name".to_owned());
        }
        headers.extend(
            [
                "Self CPU %",
                "Self CPU",
                "CPU total %",
                "CPU total",
                "CPU time avg",
            ]
            .map(String::from),
        );
        let device = if self.use_device { "CUDA" } else { "None" };
        if has_device_time {
            headers.extend([
                format!("Self {device}"),
                format!("Self {device} %"),
                format!("{device} total"),
                format!("{device} time avg"),
            ]);
        }
        let device_mem = self.profile_memory && self.use_device && has_device_mem;
        if self.profile_memory {
            headers.extend(["CPU Mem".to_owned(), "Self CPU Mem".to_owned()]);
            if device_mem {
                headers.extend([format!("{device} Mem"), format!("Self {device} Mem")]);
            }
        }
        headers.push("# of Calls".to_owned());
        let mut widths: Vec<(usize, bool)> = vec![(name_width, false)];
        if has_overloads {
            widths.push((name_width, false));
        }
        widths.extend(std::iter::repeat_n(
            (12, false),
            headers.len() - 1 - usize::from(has_overloads),
        ));
        if has_shapes {
            headers.push("Input Shapes".to_owned());
            widths.push((shapes_width, false));
        }
        if has_stack {
            headers.push("Source Location".to_owned());
            widths.push((src_width, true));
        }
        let min_flops = rows.iter().map(|r| r.flops).filter(|&f| f > 0).min();
        let flops = match (self.with_flops, min_flops) {
            (true, Some(min)) => {
                let (scale, header) = flops_scale(min);
                headers.push(format!("Total {header}"));
                widths.push((12, false));
                Some(scale)
            }
            _ => None,
        };
        let layout = Layout { widths };

        // Summed in the printed order, as torch sums them.
        let sum_self_cpu: f64 = rows.iter().map(|r| r.self_cpu_time_total_us).sum();
        let sum_self_device: f64 = rows
            .iter()
            .filter(|r| r.device && !r.user_annotation)
            .map(|r| r.self_device_time_total_us)
            .sum();
        let mut out = String::new();
        let sep = layout.separator();
        let mut push = |s: &str| {
            out.push_str(s);
            out.push('\n');
        };
        if let Some(header) = &options.header {
            push(&"=".repeat(layout.length()));
            push(header);
        }
        if options.top_level_events_only {
            push(&"=".repeat(layout.length()));
            push("This report only display top-level ops statistics");
        }
        push(&sep);
        push(&layout.line(&headers));
        push(&sep);
        let limit = if options.row_limit < 0 {
            usize::MAX
        } else {
            options.row_limit as usize
        };
        let listed = rows
            .iter()
            .filter(|r| r.top_level || !options.top_level_events_only);
        for row in listed.take(limit) {
            push(&layout.line(&self.values(
                row,
                &RowContext {
                    name_width: options.max_name_column_width,
                    unit,
                    sum_self_cpu,
                    sum_self_device,
                    has_device_time,
                    has_overloads,
                    device_mem,
                    shapes_width: has_shapes.then_some(shapes_width),
                    flops,
                    src_width: has_stack.then_some(src_width),
                },
            )));
            if has_stack {
                let mut empty = vec![String::new(); headers.len() - 1];
                for frame in row.stack.iter().skip(1) {
                    let mut line = empty.clone();
                    line.push(trim_path(frame, src_width));
                    push(&layout.line(&line));
                }
                empty.push(String::new());
                push(&layout.line(&empty));
            }
        }
        push(&sep);
        push(&format!(
            "Self CPU time total: {}",
            time(sum_self_cpu, unit)
        ));
        if has_device_time {
            push(&format!(
                "Self {device} time total: {}",
                time(sum_self_device, unit)
            ));
        }
        out
    }

    fn values(&self, row: &Row, c: &RowContext) -> Vec<String> {
        let cut_name = |name: &str| {
            if chars(name) >= c.name_width.saturating_sub(3) {
                cut(name, c.name_width.saturating_sub(3)) + "..."
            } else {
                name.to_owned()
            }
        };
        let mut v = vec![cut_name(&row.name)];
        if c.has_overloads {
            v.push(cut_name(row.overload_name.as_deref().unwrap_or("")));
        }
        v.extend([
            share(row.self_cpu_time_total_us, c.sum_self_cpu),
            time(row.self_cpu_time_total_us, c.unit),
            share(row.cpu_time_total_us, c.sum_self_cpu),
            time(row.cpu_time_total_us, c.unit),
            time(row.cpu_time_us(), c.unit),
        ]);
        if c.has_device_time {
            v.extend([
                time(row.self_device_time_total_us, c.unit),
                share(row.self_device_time_total_us, c.sum_self_device),
                time(row.device_time_total_us, c.unit),
                time(row.device_time_us(), c.unit),
            ]);
        }
        if self.profile_memory {
            v.push(format_memory(row.cpu_memory_usage));
            v.push(format_memory(row.self_cpu_memory_usage));
            if c.device_mem {
                v.push(format_memory(row.device_memory_usage));
                v.push(format_memory(row.self_device_memory_usage));
            }
        }
        v.push(row.count.to_string());
        if let Some(w) = c.shapes_width {
            v.push(cut(row.input_shapes.as_deref().unwrap_or("[]"), w));
        }
        if let Some(scale) = c.flops {
            if row.flops <= 0 {
                v.push("--".to_owned());
            } else {
                v.push(format!("{:8.3}", row.flops as f64 * scale));
            }
        }
        if let Some(w) = c.src_width {
            v.push(
                row.stack
                    .first()
                    .map_or_else(String::new, |f| trim_path(f, w)),
            );
        }
        v
    }
}

struct RowContext {
    name_width: usize,
    unit: Option<TimeUnit>,
    sum_self_cpu: f64,
    sum_self_device: f64,
    has_device_time: bool,
    has_overloads: bool,
    device_mem: bool,
    shapes_width: Option<usize>,
    flops: Option<f64>,
    src_width: Option<usize>,
}

/// `trim_path`: a frame longer than the column keeps its end, `...` in front.
fn trim_path(path: &str, width: usize) -> String {
    let n = chars(path);
    if n <= width {
        return path.to_owned();
    }
    let tail: String = path.chars().skip(n - width).collect();
    if chars(&tail) > 3 {
        format!("...{}", tail.chars().skip(3).collect::<String>())
    } else {
        tail
    }
}

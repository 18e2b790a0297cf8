//! `profkit xprof` for the tools computed from OpStats besides framework_op_stats:
//! `kernel_stats`, `hlo_stats`, `roofline_model` and `op_profile`'s `--text`. Each writes
//! xprof's JSON, or with `--text` a plain table of its first rows (the roofline model and the op
//! profile as aligned tables in the units their pages show).

use std::io::Write;

use profkit_xprof::datatable::{Cell, DataTable};
use profkit_xprof::op_stats::OpStatsBuild;
use profkit_xprof::proto::op_profile::node::Contents;
use profkit_xprof::proto::op_profile::{Node, Profile};
use profkit_xprof::tools::{hlo_stats, kernel_stats, roofline_model};

use crate::Failure;

/// The tool's JSON.
pub(crate) fn to_json(tool: &str, built: &OpStatsBuild) -> String {
    match tool {
        "kernel_stats" => kernel_stats::to_json(&built.op_stats),
        "hlo_stats" => hlo_stats::to_json(&built.op_stats),
        _ => roofline_model::to_json(&built.op_stats),
    }
}

/// What the tool shows that profkit's OpStats does not reproduce, as notes (none when all is).
pub(crate) fn notes(tool: &str, built: &OpStatsBuild) -> Vec<String> {
    profkit_xprof::tools::lacking::not_reproduced(tool, built)
        .into_iter()
        .map(|m| format!("not reproduced: {m}"))
        .collect()
}

/// `--text`: the tool's (first) table, `rows` rows at most, as tab-separated text.
pub(crate) fn write_text(
    tool: &str,
    w: &mut dyn Write,
    built: &OpStatsBuild,
    rows: usize,
) -> Result<(), Failure> {
    let table: DataTable = match tool {
        "kernel_stats" => kernel_stats::data_table(
            built
                .op_stats
                .kernel_stats_db
                .as_ref()
                .unwrap_or(&Default::default()),
        ),
        "hlo_stats" => hlo_stats::data_table(&built.op_stats),
        _ => return write_roofline_text(w, built, rows),
    };
    let header: Vec<&str> = table.columns.iter().map(|c| c.label.as_str()).collect();
    writeln!(w, "{}", header.join("\t")).map_err(Failure::Output)?;
    for row in table.rows.iter().take(rows) {
        let cells: Vec<String> = row
            .iter()
            .map(|c| match c {
                Cell::Number(v) => {
                    if v.fract() == 0.0 && v.abs() < 1e15 {
                        format!("{v:.0}")
                    } else {
                        format!("{v:.3}")
                    }
                }
                Cell::Text(s) => s.replace(['\t', '\n'], " "),
                Cell::Bool(b) => b.to_string(),
            })
            .collect();
        writeln!(w, "{}", cells.join("\t")).map_err(Failure::Output)?;
    }
    if table.rows.len() > rows {
        writeln!(
            w,
            "({} more rows; --rows N for more)",
            table.rows.len() - rows
        )
        .map_err(Failure::Output)?;
    }
    Ok(())
}

/// The roofline page's columns `--text` shows: (id in the records table, label, percent of a
/// fraction).
const ROOFLINE_COLUMNS: [(&str, &str, bool); 10] = [
    ("rank", "Rank", false),
    ("category", "Category", false),
    ("operation", "Operation", false),
    ("total_time", "Total time (us)", false),
    ("total_self_time_percent", "Self time (%)", true),
    ("measured_flop_rate", "FLOP rate (GFLOP/s)", false),
    (
        "operational_intensity",
        "Operational intensity (FLOP/Byte)",
        false,
    ),
    ("measured_memory_bw", "Memory BW (GiB/s)", false),
    ("bound_by", "Bound by", false),
    ("roofline_efficiency", "Roofline efficiency (%)", true),
];

/// The device's peaks the page shows, with their units.
const PEAKS: [(&str, &str); 11] = [
    ("peak_flop_rate", "Peak FLOP rate (GFLOP/s)"),
    ("peak_hbm_bw", "Peak HBM BW (GiB/s)"),
    ("hbm_ridge_point", "HBM ridge point (FLOP/Byte)"),
    ("peak_cmem_read_bw", "Peak CMEM read BW (GiB/s)"),
    ("cmem_read_ridge_point", "CMEM read ridge point (FLOP/Byte)"),
    ("peak_cmem_write_bw", "Peak CMEM write BW (GiB/s)"),
    (
        "cmem_write_ridge_point",
        "CMEM write ridge point (FLOP/Byte)",
    ),
    ("peak_vmem_read_bw", "Peak VMEM read BW (GiB/s)"),
    ("vmem_read_ridge_point", "VMEM read ridge point (FLOP/Byte)"),
    ("peak_vmem_write_bw", "Peak VMEM write BW (GiB/s)"),
    (
        "vmem_write_ridge_point",
        "VMEM write ridge point (FLOP/Byte)",
    ),
];

/// `roofline_model --text`: the device and its peaks, then each set of records the page offers
/// (the whole profile, the average step, each step; with and without infeed and outfeed), its
/// ops with their time, FLOP rate, operational intensity, bound and roofline efficiency; then
/// the diagnostics.
fn write_roofline_text(
    w: &mut dyn Write,
    built: &OpStatsBuild,
    rows: usize,
) -> Result<(), Failure> {
    let [records, diagnostics] = roofline_model::data_tables(&built.op_stats);
    let gpu = records
        .properties
        .get("device_type")
        .is_some_and(|d| d.contains("GPU"));
    let mut s = String::new();
    let device = records
        .properties
        .get("device_type")
        .map_or("", String::as_str);
    s.push_str(&format!(
        "Roofline model of {}\n",
        if device.is_empty() {
            "the device"
        } else {
            device
        }
    ));
    for (key, label) in PEAKS {
        // A GPU's shared memory stands as VMEM on the page.
        let label = if gpu {
            label.replace("VMEM write", "SHM/L1")
        } else {
            label.to_owned()
        };
        if let Some(v) = records.properties.get(key) {
            s.push_str(&format!("  {label}: {v}\n"));
        }
    }
    s.push('\n');
    let index = |id: &str| records.columns.iter().position(|c| c.id == id);
    let columns: Vec<(usize, &str, bool)> = ROOFLINE_COLUMNS
        .iter()
        .filter_map(|(id, label, percent)| index(id).map(|i| (i, *label, *percent)))
        .collect();
    let (Some(step), Some(infeed)) = (index("step"), index("include_infeed_outfeed")) else {
        return w.write_all(s.as_bytes()).map_err(Failure::Output);
    };
    // The sets in the order the records list them.
    let mut sets: Vec<(String, bool, DataTable)> = Vec::new();
    for row in &records.rows {
        let key = (
            match row.get(step) {
                Some(Cell::Text(t)) => t.clone(),
                _ => String::new(),
            },
            matches!(row.get(infeed), Some(Cell::Bool(true))),
        );
        let at = match sets.iter().position(|(k, i, _)| *k == key.0 && *i == key.1) {
            Some(at) => at,
            None => {
                let mut t = DataTable::default();
                for (i, label, _) in &columns {
                    let kind = records
                        .columns
                        .get(*i)
                        .map_or("string", |c| c.kind.as_str());
                    t.column("", kind, label);
                }
                sets.push((key.0, key.1, t));
                sets.len() - 1
            }
        };
        let cells = columns
            .iter()
            .map(|(i, _, percent)| match row.get(*i) {
                Some(Cell::Number(v)) if *percent => Cell::Number(v * 100.0),
                Some(c) => c.clone(),
                None => Cell::Text(String::new()),
            })
            .collect();
        if let Some((_, _, t)) = sets.get_mut(at) {
            t.rows.push(cells);
        }
    }
    for (step, infeed, table) in &sets {
        let which = match step.as_str() {
            "Total" => "the whole profile".to_owned(),
            "Average" => "the average step".to_owned(),
            n => format!("step {n}"),
        };
        let feeds = if *infeed {
            "infeed and outfeed included"
        } else {
            "without infeed and outfeed"
        };
        crate::xprof_pages::write_table(
            &mut s,
            &format!("Records of {which}, {feeds}"),
            table,
            rows,
        );
    }
    if !diagnostics.rows.is_empty() {
        crate::xprof_pages::write_table(&mut s, "Diagnostics", &diagnostics, rows);
    }
    w.write_all(s.as_bytes()).map_err(Failure::Output)
}

/// A fraction as xprof's pages write percentages: two decimals, `0.0%` below 0.001%, `-` when
/// undefined.
fn percent(fraction: f64) -> String {
    if fraction.is_nan() {
        "-".to_owned()
    } else if fraction < 0.00001 {
        "0.0%".to_owned()
    } else {
        format!("{:.2}%", fraction * 100.0)
    }
}

/// A node's share of the root's time, its FLOPS utilisation and its HBM bandwidth utilisation,
/// as the op profile page computes them (undefined: NaN).
fn node_figures(node: &Node, root_time: f64) -> (f64, f64, f64) {
    let m = node.metrics.clone().unwrap_or_default();
    let time = if m.raw_time == 0.0 || root_time == 0.0 {
        0.0
    } else {
        m.raw_time / root_time
    };
    let flops = if time == 0.0 {
        f64::NAN
    } else {
        m.uncapped_flops / time
    };
    let hbm = match m.bandwidth_utils.first() {
        Some(v) if *v != 0.0 => *v,
        _ => f64::NAN,
    };
    (time, flops, hbm)
}

/// `op_profile --text`: the tree the page shows (without the idle time, as the page opens),
/// indented to `depth` levels below the root, `rows` children per node at most, each node with
/// its share of the time, its FLOPS and HBM bandwidth utilisation.
pub(crate) fn write_op_profile_text(
    w: &mut dyn Write,
    profile: &Profile,
    depth: usize,
    rows: usize,
) -> Result<(), Failure> {
    let (root, grouping) = if let Some(root) = &profile.by_program_exclude_idle {
        (root, "program")
    } else if let Some(root) = &profile.by_category_exclude_idle {
        (root, "category")
    } else if let Some(root) = &profile.by_provenance_exclude_idle {
        (root, "provenance")
    } else {
        return writeln!(w, "Op profile: no device ops").map_err(Failure::Output);
    };
    let root_time = root.metrics.as_ref().map_or(0.0, |m| m.raw_time);
    // (time %, FLOPS, HBM, indented name, framework op)
    let mut lines: Vec<[String; 5]> = Vec::new();
    fn walk(
        node: &Node,
        level: usize,
        depth: usize,
        rows: usize,
        root_time: f64,
        lines: &mut Vec<[String; 5]>,
    ) {
        let (time, flops, hbm) = node_figures(node, root_time);
        let provenance = match &node.contents {
            Some(Contents::Xla(x)) => x.provenance.clone(),
            _ => String::new(),
        };
        lines.push([
            percent(time),
            percent(flops),
            percent(hbm),
            format!(
                "{}{}",
                "  ".repeat(level),
                crate::text::clip(&node.name.replace('\n', " "))
            ),
            crate::text::clip(&provenance).into_owned(),
        ]);
        if level >= depth {
            return;
        }
        for child in node.children.iter().take(rows) {
            walk(child, level + 1, depth, rows, root_time, lines);
        }
        if node.children.len() > rows {
            lines.push([
                String::new(),
                String::new(),
                String::new(),
                format!(
                    "{}... {} more (--rows N shows more)",
                    "  ".repeat(level + 1),
                    node.children.len() - rows
                ),
                String::new(),
            ]);
        }
    }
    walk(root, 0, depth, rows, root_time, &mut lines);
    let header = ["Time %", "FLOPS", "HBM", "Name", "Framework op"].map(str::to_owned);
    let mut widths = header.clone().map(|h| h.chars().count());
    for line in &lines {
        for (w, c) in widths.iter_mut().zip(line) {
            *w = (*w).max(c.chars().count());
        }
    }
    let format = |cells: &[String; 5]| -> String {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            l.push_str("  ");
            if i < 3 {
                l.push_str(&format!("{c:>w$}"));
            } else {
                l.push_str(&format!("{c:<w$}"));
            }
        }
        l.trim_end().to_owned()
    };
    let mut s = format!(
        "Op profile by {grouping} of {} (idle time excluded; FLOPS and HBM: utilisation of the device's peaks)\n",
        if profile.device_type.is_empty() {
            "the device"
        } else {
            profile.device_type.as_str()
        }
    );
    s.push_str(&format(&header));
    s.push('\n');
    for line in &lines {
        s.push_str(&format(line));
        s.push('\n');
    }
    w.write_all(s.as_bytes()).map_err(Failure::Output)
}

//! `profkit xprof` for the tools computed from OpStats besides framework_op_stats:
//! `kernel_stats`, `hlo_stats`, `roofline_model`. Each writes xprof's JSON, or with `--text`
//! a plain table of its first rows.

use std::io::Write;

use profkit_xprof::datatable::{Cell, DataTable};
use profkit_xprof::op_stats::OpStatsBuild;
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

/// What the tool shows that profkit's OpStats does not reproduce, as notes. The kernel stats
/// read no part OpStats leaves out; the HLO op stats and the roofline model show the device op
/// metrics (cost model, peaks), and the roofline model the steps database besides.
pub(crate) fn notes(tool: &str, built: &OpStatsBuild) -> Vec<String> {
    if tool == "kernel_stats" {
        return Vec::new();
    }
    let mut notes: Vec<String> = built
        .missing
        .iter()
        .map(|m| format!("not reproduced: {m}; those rows are not xprof's"))
        .collect();
    if tool == "roofline_model" && has_device(built) {
        notes.push(
            "not reproduced: the steps database (the roofline model's per-step and average-step records and its step diagnostics)"
                .to_owned(),
        );
    }
    notes
}

/// Whether the OpStats is of a GPU or TPU profile (the roofline model has records).
fn has_device(built: &OpStatsBuild) -> bool {
    use profkit_xprof::proto::HardwareType;
    built.op_stats.run_environment.as_ref().is_some_and(|e| {
        e.hardware_type == HardwareType::Gpu as i32 || e.hardware_type == HardwareType::Tpu as i32
    })
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
        _ => {
            return Err(Failure::Usage(
                "xprof roofline_model: no --text table yet; it writes xprof's JSON".into(),
            ));
        }
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

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

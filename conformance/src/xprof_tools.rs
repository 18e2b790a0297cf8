//! xprof's tools (`profkit xprof TOOL`) against what xprof 2.24.2 returned for the same case,
//! saved beside its input as `xprof.<tool>.json` (`.json.gz` for the device cases) by
//! `BLESS=1 conformance/xprof/tools_check.py`, which also runs xprof live in CI.
//!
//! Where profkit builds the whole of what a tool shows, its JSON must be xprof's bytes. Where it
//! names a part it does not build (`OpStatsBuild::missing`: the TPU and XLA op metrics), the part
//! it builds must equal xprof's: for `framework_op_stats`, every host row (rank aside); for
//! `hlo_stats` and `roofline_model` (whose gaps `tools::lacking` names), the same rows
//! (`roofline_model`: its Total records when the steps database is named), every cell the same
//! but in the columns the gaps name ([`may_differ`]). `kernel_stats` has no gap: its bytes always.
//!
//! A device case may also keep xprof's own OpStats (`xprof.op_stats.pb.gz`, its cache file): the
//! tools rendered from it must be xprof's bytes, which tests the renderers apart from the build.

use std::path::Path;

use profkit_xplane::XSpace;
use profkit_xprof::op_stats;
use profkit_xprof::tools::{framework_op_stats, hlo_stats, kernel_stats, lacking, roofline_model};
use serde_json::Value;

/// The tools checked, by the file xprof's output is saved in.
pub const TOOLS: [&str; 4] = [
    "framework_op_stats",
    "kernel_stats",
    "hlo_stats",
    "roofline_model",
];

/// xprof's saved output for a tool, if the case holds it.
pub(crate) fn saved(case_dir: &Path, tool: &str) -> Result<Option<String>, String> {
    let plain = case_dir.join(format!("xprof.{tool}.json"));
    if plain.exists() {
        return std::fs::read_to_string(&plain)
            .map(Some)
            .map_err(|e| format!("cannot read {}: {e}", plain.display()));
    }
    let gz = case_dir.join(format!("xprof.{tool}.json.gz"));
    if gz.exists() {
        let file =
            std::fs::File::open(&gz).map_err(|e| format!("cannot open {}: {e}", gz.display()))?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text)
            .map_err(|e| format!("cannot read {}: {e}", gz.display()))?;
        return Ok(Some(text));
    }
    Ok(None)
}

fn host_rows(text: &str) -> Result<Vec<Vec<Value>>, String> {
    let tables: Vec<Value> = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    Ok(tables
        .iter()
        .map(|t| {
            t["rows"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| r["c"][1]["v"] == "Host")
                .map(|r| {
                    r["c"]
                        .as_array()
                        .map(|c| c[1..].to_vec())
                        .unwrap_or_default()
                })
                .map(Value::Array)
                .collect()
        })
        .collect())
}

/// Checks each tool whose xprof output the case holds; returns a line per tool checked.
pub fn check(case_dir: &Path, space: &XSpace) -> Result<String, String> {
    let mut report = String::new();
    for tool in TOOLS {
        let Some(theirs) = saved(case_dir, tool)? else {
            continue;
        };
        let built = op_stats::build_for(
            vec![space.clone()],
            &["host"],
            op_stats::Parts::for_tool(tool),
        );
        if tool != "framework_op_stats" {
            report.push_str(&check_tool(tool, &built, &theirs)?);
            continue;
        }
        let ours = framework_op_stats::to_json(&built.op_stats);
        // The parts this tool does not read (steps, kernel stats, busy time) aside, the bytes
        // are required when nothing else is missing.
        let lacking = built.missing_op_metrics().next().is_some();
        if !lacking {
            if ours != theirs {
                return Err(format!(
                    "{tool}: profkit differs from xprof (- xprof, + profkit):\n{}",
                    crate::diff::diff(
                        &theirs.replace("},{", "},\n{"),
                        &ours.replace("},{", "},\n{")
                    )
                ));
            }
            report.push_str(&format!("{tool}: xprof's bytes\n"));
        } else {
            let (a, b) = (host_rows(&theirs)?, host_rows(&ours)?);
            if a != b {
                return Err(format!(
                    "{tool}: profkit's host rows differ from xprof's ({} and {} rows)",
                    b.iter().map(Vec::len).sum::<usize>(),
                    a.iter().map(Vec::len).sum::<usize>()
                ));
            }
            report.push_str(&format!(
                "{tool}: xprof's host rows; not reproduced: {}\n",
                built.missing_op_metrics().collect::<Vec<_>>().join("; ")
            ));
        }
    }
    report.push_str(&crate::xprof_op_profile::check(case_dir, space)?);
    report.push_str(&crate::xprof_memory_viewer::check(case_dir, space)?);
    Ok(report)
}

fn render(tool: &str, stats: &profkit_xprof::proto::OpStats) -> String {
    match tool {
        "framework_op_stats" => framework_op_stats::to_json(stats),
        "kernel_stats" => kernel_stats::to_json(stats),
        "hlo_stats" => hlo_stats::to_json(stats),
        _ => roofline_model::to_json(stats),
    }
}

fn bytes_differ(tool: &str, theirs: &str, ours: &str) -> String {
    format!(
        "{tool}: profkit differs from xprof (- xprof, + profkit):\n{}",
        crate::diff::diff(
            &theirs.replace("},{", "},\n{"),
            &ours.replace("},{", "},\n{")
        )
    )
}

/// The columns a gap of `tools::lacking` may leave different.
pub fn may_differ(gaps: &[String]) -> Vec<&'static str> {
    let mut columns = Vec::new();
    for gap in gaps {
        // The expression names the op and marks rematerialization and outside compilation.
        if gap.contains("XLA's printer") {
            columns.extend([
                "hlo_op_name",
                "hlo_op_expression",
                "hlo_rematerialization",
                "outside_compilation",
            ]);
        }
        if gap.contains("XLA's cost model") {
            columns.extend([
                "model_flop_rate",
                "normalized_flop_rate",
                "measured_flop_rate",
                "measured_memory_bw",
                "hbm_bw",
                "operational_intensity",
                "hbm_operational_intensity",
                "vmem_write_bw",
                "vmem_write_operational_intensity",
                "bottleneck_operational_intensity",
                "bound_by",
                "optimal_flop_rate",
                "roofline_efficiency",
                "compute_efficiency",
                "max_mem_bw_utilization",
            ]);
        }
        if gap.contains("peaks") {
            columns.extend([
                "bound_by",
                "bottleneck_operational_intensity",
                "optimal_flop_rate",
                "roofline_efficiency",
                "compute_efficiency",
                "max_mem_bw_utilization",
            ]);
        }
    }
    columns
}

/// `kernel_stats`, `hlo_stats`, `roofline_model` of profkit's OpStats against xprof's output.
fn check_tool(tool: &str, built: &op_stats::OpStatsBuild, theirs: &str) -> Result<String, String> {
    let ours = render(tool, &built.op_stats);
    let gaps = lacking::not_reproduced(tool, built);
    if gaps.is_empty() {
        if ours != theirs {
            return Err(bytes_differ(tool, theirs, &ours));
        }
        return Ok(format!("{tool}: xprof's bytes\n"));
    }
    let allowed = may_differ(&gaps);
    let parse = |text: &str| -> Result<Vec<Value>, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("{tool}: not JSON: {e}"))?;
        Ok(match v {
            Value::Array(tables) => tables.into_iter().take(1).collect(),
            table => vec![table],
        })
    };
    let (a, b) = (parse(&ours)?, parse(theirs)?);
    let steps_named = gaps.iter().any(|g| g.starts_with("the steps database"));
    let key: &[&str] = if tool == "hlo_stats" {
        &[
            "rank",
            "program_id",
            "category",
            "tf_op_name",
            "occurrences",
            "total_time",
        ]
    } else {
        &[
            "step",
            "rank",
            "category",
            "operation",
            "occurrences",
            "total_time",
        ]
    };
    let mut differing = std::collections::BTreeSet::new();
    for (x, y) in a.iter().zip(&b) {
        let ids: Vec<&str> = y["cols"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["id"].as_str())
            .collect();
        if x["cols"] != y["cols"] {
            return Err(format!("{tool}: columns differ from xprof's"));
        }
        let rows = |t: &Value| -> Vec<Vec<Value>> {
            t["rows"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["c"].as_array().cloned())
                .filter(|c| !steps_named || c.first().is_some_and(|s| s["v"] == "Total"))
                .collect()
        };
        let (rx, ry) = (rows(x), rows(y));
        if rx.len() != ry.len() {
            return Err(format!("{tool}: {} rows, xprof {}", rx.len(), ry.len()));
        }
        let key: Vec<usize> = key
            .iter()
            .filter_map(|k| ids.iter().position(|i| i == k))
            .collect();
        for (r1, r2) in rx.iter().zip(&ry) {
            if key.iter().any(|&i| r1.get(i) != r2.get(i)) {
                return Err(format!("{tool}: rows are not xprof's ops"));
            }
            for (i, (c1, c2)) in r1.iter().zip(r2).enumerate() {
                if c1 != c2 {
                    differing.insert(ids.get(i).copied().unwrap_or("?").to_owned());
                }
            }
        }
        let empty = serde_json::Map::new();
        let (px, py) = (
            x["p"].as_object().unwrap_or(&empty),
            y["p"].as_object().unwrap_or(&empty),
        );
        for k in px.keys().chain(py.keys()) {
            if px.get(k) != py.get(k) {
                let peak = k.starts_with("peak_") || k.ends_with("_ridge_point");
                if !(peak && gaps.iter().any(|g| g.contains("peaks"))) {
                    return Err(format!("{tool}: table property {k} differs from xprof's"));
                }
                differing.insert(format!("p.{k}"));
            }
        }
    }
    let unexplained: Vec<&String> = differing
        .iter()
        .filter(|c| !c.starts_with("p.") && !allowed.contains(&c.as_str()))
        .collect();
    if !unexplained.is_empty() {
        return Err(format!(
            "{tool}: cells differ from xprof's in {unexplained:?}"
        ));
    }
    let scope = if steps_named { "Total records" } else { "rows" };
    let shown = if differing.is_empty() {
        "identical".to_owned()
    } else {
        format!(
            "identical but {}",
            differing.into_iter().collect::<Vec<_>>().join(", ")
        )
    };
    Ok(format!(
        "{tool}: xprof's {scope}, {shown}; not reproduced: {}\n",
        gaps.join("; ")
    ))
}

/// The tools rendered from xprof's own OpStats (`xprof.op_stats.pb.gz`), each against xprof's
/// output: the bytes (the op profile in each grouping too).
pub fn check_renderers(case_dir: &Path) -> Result<String, String> {
    let path = case_dir.join("xprof.op_stats.pb.gz");
    if !path.exists() {
        return Ok(String::new());
    }
    let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(file), &mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let stats = op_stats::decode(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut report = String::new();
    for tool in TOOLS {
        let Some(theirs) = saved(case_dir, tool)? else {
            continue;
        };
        let ours = render(tool, &stats);
        if ours != theirs {
            return Err(format!(
                "from xprof's OpStats: {}",
                bytes_differ(tool, &theirs, &ours)
            ));
        }
        report.push_str(&format!("{tool} from xprof's OpStats: xprof's bytes\n"));
    }
    // The op profile of each grouping, from xprof's OpStats (its ops' fused children too).
    for (file, group_by) in crate::xprof_op_profile::GROUPINGS {
        let Some(theirs) = saved(case_dir, file)? else {
            continue;
        };
        let ours = profkit_xprof::tools::op_profile::op_profile_json(&stats, group_by)
            .map_err(|e| format!("from xprof's OpStats: {file}: {e}"))?;
        if ours != theirs {
            return Err(format!(
                "from xprof's OpStats: {}",
                bytes_differ(file, &theirs, &ours)
            ));
        }
        report.push_str(&format!("{file} from xprof's OpStats: xprof's bytes\n"));
    }
    Ok(report)
}

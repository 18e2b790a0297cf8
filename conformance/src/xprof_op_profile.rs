//! xprof's op_profile (`profkit xprof op_profile [--group-by G]`) against what xprof 2.24.2
//! returned for the same case with each `group_by` (program, category, provenance), saved beside
//! the input as `xprof.op_profile.json`, `xprof.op_profile.category.json` and
//! `xprof.op_profile.provenance.json` (`.json.gz` for the device cases) by
//! `BLESS=1 conformance/xprof/tools_check.py`.
//!
//! Where profkit names no gap, its JSON must be xprof's bytes. Where it names some
//! (`op_profile::missing`, each ending with the fields it touches), the parsed trees must be equal
//! in every other field.

use std::collections::BTreeSet;
use std::path::Path;

use profkit_xplane::XSpace;
use profkit_xprof::op_stats;
use profkit_xprof::tools::op_profile::{self, Grouping};
use serde_json::Value;

/// The groupings checked, by the file xprof's output is saved in.
pub(crate) const GROUPINGS: [(&str, Grouping); 3] = [
    ("op_profile", Grouping::Program),
    ("op_profile.category", Grouping::Category),
    ("op_profile.provenance", Grouping::Provenance),
];

/// The fields the notes name (`(op_profile fields: a, b)` ending each).
fn note_fields(notes: &[String]) -> BTreeSet<String> {
    let mut fields = BTreeSet::new();
    for note in notes {
        for part in note.split("(op_profile fields: ").skip(1) {
            let list = part.split(')').next().unwrap_or("");
            fields.extend(list.split(',').map(|f| f.trim().to_owned()));
        }
    }
    fields
}

/// The first path where two op profiles differ outside `fields`.
fn difference(a: &Value, b: &Value, fields: &BTreeSet<String>, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter()
                .filter(|k| !fields.contains(*k))
                .find_map(|k| match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => difference(p, q, fields, &format!("{path}.{k}")),
                    _ => Some(format!("{path}.{k} present on one side only")),
                })
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items, xprof {}", x.len(), y.len()));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| difference(p, q, fields, &format!("{path}[{i}]")))
        }
        _ => (a != b).then(|| format!("{path}: {a}, xprof {b}")),
    }
}

/// Checks each grouping whose xprof output the case holds; a line per grouping checked.
pub fn check(case_dir: &Path, space: &XSpace) -> Result<String, String> {
    let mut report = String::new();
    let mut built = None;
    for (file, group_by) in GROUPINGS {
        let Some(theirs) = crate::xprof_tools::saved(case_dir, file)? else {
            continue;
        };
        let built = built.get_or_insert_with(|| {
            op_stats::build_for(
                vec![space.clone()],
                &["host"],
                op_stats::Parts::for_tool("op_profile"),
            )
        });
        let ours = op_profile::op_profile_json(&built.op_stats, group_by)
            .map_err(|e| format!("{file}: {e}"))?;
        let notes = op_profile::missing(built);
        if notes.is_empty() {
            if ours != theirs {
                return Err(format!(
                    "{file}: profkit differs from xprof (- xprof, + profkit):\n{}",
                    crate::diff::diff(
                        &theirs.replace("},{", "},\n{"),
                        &ours.replace("},{", "},\n{")
                    )
                ));
            }
            report.push_str(&format!("{file}: xprof's bytes\n"));
            continue;
        }
        let fields = note_fields(&notes);
        let parse = |t: &str| serde_json::from_str::<Value>(t).map_err(|e| format!("{file}: {e}"));
        if let Some(d) = difference(&parse(&ours)?, &parse(&theirs)?, &fields, "$") {
            return Err(format!(
                "{file}: profkit differs from xprof outside the fields its notes name: {d}"
            ));
        }
        let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
        report.push_str(&format!(
            "{file}: xprof's but {}; not reproduced: {}\n",
            fields.join(", "),
            notes.join("; ")
        ));
    }
    Ok(report)
}

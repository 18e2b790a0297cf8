//! torch's own tables, printed by torch 2.15 at profiling time (`conformance/torch`), against
//! ours from the traces it exported: byte for byte.

use std::path::{Path, PathBuf};

use profkit_torch::key_averages::{Grouping, KeyAverages, SortKey, TableOptions, TimeUnit};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/torch")
}

/// A run's trace: its `trace.json.gz`, or (the device cases) the corpus trace its `trace` names.
fn read(run: &Path) -> profkit_torch::Trace {
    let own = run.join("trace.json.gz");
    let path = if own.exists() {
        own
    } else {
        let rel = std::fs::read_to_string(run.join("trace")).unwrap();
        root().join("../chrome/corpus").join(rel.trim())
    };
    let file = std::fs::File::open(path).unwrap();
    profkit_torch::read_trace(std::io::BufReader::new(flate2::read::GzDecoder::new(file))).unwrap()
}

/// The table named `name` of `run`, as `tables.json` says torch was asked for it.
fn ours(trace: &profkit_torch::Trace, spec: &serde_json::Value) -> String {
    let group = &spec["key_averages"];
    let grouping = Grouping {
        input_shape: group["group_by_input_shape"].as_bool().unwrap_or(false),
        stack_n: group["group_by_stack_n"].as_u64().unwrap_or(0) as usize,
        overload_name: group["group_by_overload_name"].as_bool().unwrap_or(false),
        python_functions: group["include_python_functions"].as_bool().unwrap_or(false),
    };
    for key in group.as_object().unwrap().keys() {
        assert!(
            [
                "group_by_input_shape",
                "group_by_stack_n",
                "group_by_overload_name",
                "include_python_functions"
            ]
            .contains(&key.as_str()),
            "key_averages option {key} not read"
        );
    }
    let table = &spec["table"];
    let width = |name: &str, default: usize| table[name].as_u64().map_or(default, |w| w as usize);
    let options = TableOptions {
        sort_by: table["sort_by"]
            .as_str()
            .map(|k| SortKey::from_name(k).unwrap()),
        row_limit: table["row_limit"].as_i64().unwrap_or(100),
        time_unit: table["time_unit"].as_str().map(|u| match u {
            "s" => TimeUnit::S,
            "ms" => TimeUnit::Ms,
            _ => TimeUnit::Us,
        }),
        header: table["header"].as_str().map(str::to_owned),
        top_level_events_only: table["top_level_events_only"].as_bool().unwrap_or(false),
        max_name_column_width: width("max_name_column_width", 55),
        max_shapes_column_width: width("max_shapes_column_width", 80),
        max_src_column_width: width("max_src_column_width", 75),
    };
    for key in table.as_object().unwrap().keys() {
        assert!(
            [
                "sort_by",
                "row_limit",
                "time_unit",
                "header",
                "top_level_events_only",
                "max_name_column_width",
                "max_shapes_column_width",
                "max_src_column_width"
            ]
            .contains(&key.as_str()),
            "table option {key} not read"
        );
    }
    KeyAverages::new(trace, &grouping).table(&options)
}

fn check(run: &str) {
    let dir = root().join(run);
    let mut trace = read(&dir);
    if run.starts_with("device/") {
        // device_tables.py runs torch's table code without FLOPs (torch computes them in C++).
        trace.meta.with_flops = Some(false);
    }
    let specs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("tables.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    for (name, spec) in specs.as_object().unwrap() {
        let expected =
            std::fs::read_to_string(dir.join("tables").join(format!("{name}.txt"))).unwrap();
        let got = ours(&trace, spec);
        if got != expected {
            if std::env::var_os("PROFKIT_TORCH_DIFF").is_some() {
                std::fs::write(format!("/tmp/torch-{run}-{name}.got"), &got).unwrap();
            }
            let line = got
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            failures.push(format!(
                "{run}/{name}: first difference on line {}:\n  ours:  {}\n  torch: {}",
                line + 1,
                got.lines().nth(line).unwrap_or(""),
                expected.lines().nth(line).unwrap_or("")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cnn_tables_are_torchs() {
    check("cnn");
}

#[test]
fn transformer_tables_are_torchs() {
    check("transformer");
}

#[test]
fn overload_tables_are_torchs() {
    check("overload");
}

#[test]
fn python_tables_are_torchs() {
    check("python");
}

/// The GPU traces of the corpus: torch's own table code on the events `device_tables.py` makes of
/// them, device columns and all (no GPU here to print them at profiling time).
#[test]
fn device_tables_are_torchs_table_code() {
    let mut cases: Vec<_> = std::fs::read_dir(root().join("device"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    cases.sort();
    assert_eq!(cases.len(), 13);
    for case in cases {
        check(&format!("device/{case}"));
    }
}

#[test]
fn plain_tables_are_torchs() {
    check("plain");
}

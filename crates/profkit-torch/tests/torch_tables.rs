//! torch's own tables, printed by torch 2.15 at profiling time (`conformance/torch`), against
//! ours from the traces it exported: byte for byte.

use std::path::{Path, PathBuf};

use profkit_torch::key_averages::{Grouping, KeyAverages, SortKey, TableOptions, TimeUnit};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/torch")
}

fn read(run: &Path) -> profkit_torch::Trace {
    let file = std::fs::File::open(run.join("trace.json.gz")).unwrap();
    profkit_torch::read_trace(std::io::BufReader::new(flate2::read::GzDecoder::new(file))).unwrap()
}

/// The table named `name` of `run`, as `tables.json` says torch was asked for it.
fn ours(trace: &profkit_torch::Trace, spec: &serde_json::Value) -> String {
    let group = &spec["key_averages"];
    let grouping = Grouping {
        input_shape: group["group_by_input_shape"].as_bool().unwrap_or(false),
        stack_n: group["group_by_stack_n"].as_u64().unwrap_or(0) as usize,
    };
    let table = &spec["table"];
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
        ..TableOptions::default()
    };
    KeyAverages::new(trace, &grouping).table(&options)
}

fn check(run: &str) {
    let dir = root().join(run);
    let trace = read(&dir);
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
fn plain_tables_are_torchs() {
    check("plain");
}

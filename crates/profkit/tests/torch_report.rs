//! `profkit report` on PyTorch profiler traces: torch's table by default, Paddle's on request,
//! and the options of one style refused in the other.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const CNN: &str = "conformance/torch/cnn/trace.json.gz";

#[test]
fn torch_is_the_default_for_pytorch_traces() {
    let (code, out, _) = run(&["report", CNN, "--sorted-by", "count", "--row-limit", "10"]);
    assert_eq!(code, 0);
    let expected = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../conformance/torch/cnn/tables/count.txt"
    ))
    .unwrap();
    assert_eq!(out, expected);
    let (code, out, _) = run(&["report", CNN, "--style", "paddle"]);
    assert_eq!(code, 0);
    assert!(out.contains("Device Summary"), "{out}");
    // A Paddle trace keeps Paddle's tables.
    let (code, out, _) = run(&["report", "conformance/chrome/paddle-sample/input.json"]);
    assert_eq!(code, 0);
    assert!(out.contains("Device Summary"), "{out}");
}

#[test]
fn options_of_the_other_style_are_usage_errors() {
    let (code, _, err) = run(&["report", CNN, "--sorted-by", "CPUTotal"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("torch's keys are"), "{err}");
    let (code, _, err) = run(&["report", CNN, "--thread-sep"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&[
        "report",
        "conformance/chrome/paddle-sample/input.json",
        "--row-limit",
        "3",
    ]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&["report", CNN, "--style", "paddle", "--sorted-by", "count"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn json_rows_and_notes() {
    let (code, out, _) = run(&[
        "report",
        "conformance/chrome/corpus/hta/critical_path-alexnet-benchmark_result_2869224_1695835535_trace.json.gz",
        "--json",
        "--row-limit",
        "2",
        "--group-by-stack-n",
        "3",
    ]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["rows"].as_array().unwrap().len(), 2);
    assert_eq!(doc["use_device"], true);
    assert_eq!(doc["notes"].as_array().unwrap().len(), 1, "{out}");
}

fn golden(run: &str, table: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../conformance/torch/{run}/tables/{table}.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

const OVERLOAD: &str = "conformance/torch/overload/trace.json.gz";
const PYTHON: &str = "conformance/torch/python/trace.json.gz";

#[test]
fn later_options_print_torchs_tables() {
    let cases: [(&str, &str, &[&str]); 3] = [
        (
            OVERLOAD,
            "top_level_self_cpu",
            &[
                "--group-by-overload-name",
                "--top-level-events-only",
                "--sorted-by",
                "self_cpu_time_total",
                "--row-limit",
                "5",
            ],
        ),
        (
            OVERLOAD,
            "widths",
            &[
                "--group-by-overload-name",
                "--group-by-input-shape",
                "--sorted-by",
                "cpu_time_total",
                "--row-limit",
                "12",
                "--max-name-column-width",
                "24",
                "--max-shapes-column-width",
                "30",
                "--header",
                "narrow",
            ],
        ),
        (
            PYTHON,
            "python_stack_3",
            &[
                "--include-python-functions",
                "--group-by-stack-n",
                "3",
                "--sorted-by",
                "cpu_time",
                "--row-limit",
                "10",
                "--max-src-column-width",
                "40",
            ],
        ),
    ];
    for (trace, table, options) in cases {
        let mut args = vec!["report", trace];
        args.extend_from_slice(options);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let run_name = if trace == OVERLOAD {
            "overload"
        } else {
            "python"
        };
        // The table, then the notes naming what the trace does not hold (here: the stacks
        // `group_by_stack_n` groups by, which torch keeps empty for such a run too).
        let (table_text, notes) = out.split_at(out.find("Note: ").unwrap_or(out.len()));
        assert_eq!(table_text, golden(run_name, table), "{table}");
        assert_eq!(notes.is_empty(), table != "python_stack_3", "{notes}");
    }
}

#[test]
fn json_overloads_and_top_level_rows() {
    let (code, out, err) = run(&[
        "report",
        OVERLOAD,
        "--json",
        "--group-by-overload-name",
        "--sorted-by",
        "cpu_time_total",
        "--row-limit",
        "-1",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["name"] == "aten::div" && r["overload_name"] == "Tensor"),
        "{out}"
    );
    assert!(rows.iter().all(|r| r["overload_name"].is_string()));
    let (code, out, _) = run(&["report", OVERLOAD, "--json", "--top-level-events-only"]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0]["name"], "ProfilerStep*");
    assert_eq!(rows[0]["top_level"], true);
    // A trace recorded without capture_overload_names says why no row is split.
    let (code, out, _) = run(&["report", CNN, "--group-by-overload-name"]);
    assert_eq!(code, 0);
    assert!(out.contains("Note: the trace names no overloads"), "{out}");
    assert!(!out.contains("Overload Name"), "{out}");
    // Paddle's tables refuse them.
    let (code, _, err) = run(&[
        "report",
        "conformance/chrome/paddle-sample/input.json",
        "--top-level-events-only",
    ]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_trace_opening_with_metadata_is_known_for_pytorchs() {
    // Its first 64 KiB are a long `metadata` object, then Kineto's events.
    let trace =
        "conformance/chrome/corpus/tracelens/h100-gaunernst_bert-small-uncased__1016001.json.gz";
    let (code, out, err) = run(&["report", trace, "--row-limit", "3"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Self CUDA %"), "{out}");
}

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

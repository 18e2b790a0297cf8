//! `profkit` on PaddlePaddle's files: detection among every format's samples, inspect, dump,
//! validate and report, errors and exit codes.

mod common;

use std::path::{Path, PathBuf};

use common::{profkit, text};

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

fn case(name: &str, file: &str) -> String {
    conformance()
        .join("paddle")
        .join(name)
        .join(file)
        .to_string_lossy()
        .into_owned()
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = profkit(args, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every input file shipped in `conformance/` (and the shared samples beside the repository, if
/// present), with the format directory it belongs to.
fn samples() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![conformance()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let format = path
                .strip_prefix(conformance())
                .unwrap()
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy()
                .into_owned();
            if name.starts_with("input") && !name.ends_with(".json")
                || format == "xdl" && name.contains(".trace.")
            {
                out.push((format, path));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn detection_tells_every_shipped_sample_apart() {
    let mut paddle = 0;
    for (dir, path) in samples() {
        let bytes = std::fs::read(&path).unwrap();
        let out = profkit(&["inspect", "--json", "-"], Some(&bytes));
        let stderr = text(&out.stderr);
        let stdout = text(&out.stdout);
        let detected = serde_json::from_str::<serde_json::Value>(&stdout)
            .ok()
            .and_then(|v| v["format"].as_str().map(str::to_owned));
        let name = path.display();
        match dir.as_str() {
            "paddle" => {
                let is_error_case = name.to_string().contains("/error-");
                if !is_error_case {
                    let expected = if name.to_string().ends_with(".paddle_trace.pb") {
                        "paddle-trace"
                    } else {
                        "paddle"
                    };
                    assert_eq!(detected.as_deref(), Some(expected), "{name}: {stderr}");
                    paddle += 1;
                }
            }
            _ => {
                // Not ours: never detected as Paddle (which would fail with an error of our
                // decoders, naming `Profile.` or `NodeTreesProto`), whatever else happens to it.
                let ours = stderr.contains("Profile.") || stderr.contains("NodeTreesProto");
                assert!(
                    !ours && !matches!(detected.as_deref(), Some("paddle" | "paddle-trace")),
                    "{name} is taken for a Paddle file: {stdout}{stderr}"
                );
            }
        }
    }
    assert!(paddle >= 9, "only {paddle} Paddle samples");
}

#[test]
fn inspect_summarises_both_formats() {
    let out = profkit(&["inspect", &case("static-cpu-calls", "input.pb")], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(": Paddle legacy Profile\n"), "{stdout}");
    assert!(
        stdout.contains("threads: 2 (thread 0: 4, thread 1: 32)"),
        "{stdout}"
    );
    assert!(stdout.contains("0 pairing warnings"), "{stdout}");

    let doc = json(&[
        "inspect",
        "--json",
        &case("nodetree-sample", "input.paddle_trace.pb"),
    ]);
    assert_eq!(doc["format"], "paddle-trace");
    assert_eq!(doc["summary"]["threads"][0]["host_nodes"], 300);
    assert_eq!(
        doc["summary"]["threads"][0]["by_type"]["DygraphKernelLaunch"],
        63
    );
    assert_eq!(doc["ranges"], 300);
}

#[test]
fn dump_prints_every_field() {
    let doc = json(&["dump", &case("dygraph-cpu-total", "input.pb")]);
    assert_eq!(doc["events"].as_array().unwrap().len(), 36);
    assert_eq!(doc["events"][0]["name"], "sum pybind_imperative_func");
    assert_eq!(doc["start_ns"], 0);
    let doc = json(&[
        "dump",
        &case("nodetree-open-types", "input.paddle_trace.pb"),
    ]);
    let node = &doc["thread_trees"][0]["host_nodes"][5]["host_trace_event"];
    assert_eq!(node["type"], 99);
    assert_eq!(
        doc["thread_trees"][0]["host_nodes"][0]["host_trace_event"]["end_ns"],
        u64::MAX
    );
}

#[test]
fn validate_reports_problems_with_exit_code_1() {
    let out = profkit(&["validate", &case("dygraph-cpu-ave", "input.pb")], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).ends_with(": valid Paddle legacy Profile\n"));
    let out = profkit(&["validate", &case("profile-problems", "input.pb")], None);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 5, "{stdout}");
    assert!(
        stdout.contains("input.pb: Profile.events[3]: ends at"),
        "{stdout}"
    );
    let doc = {
        let out = profkit(
            &[
                "validate",
                "--json",
                &case("nodetree-broken-tree", "input.paddle_trace.pb"),
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(1));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    assert_eq!(doc["valid"], false);
    assert_eq!(doc["problems"][0]["kind"], "duplicate_id");
}

#[test]
fn report_prints_paddles_layout() {
    let out = profkit(
        &[
            "report",
            &case("dygraph-cpu-total", "input.pb"),
            "--sort",
            "total",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expected = std::fs::read_to_string(case("dygraph-cpu-total", "report.txt")).unwrap();
    assert_eq!(text(&out.stdout), expected);
    assert!(expected.contains("Sorted by total time in descending order"));
    // Standard input, the All place, the other sort keys.
    let bytes = std::fs::read(case("dygraph-cpu-total", "input.pb")).unwrap();
    for sort in ["calls", "total", "max", "min", "ave"] {
        let out = profkit(
            &["report", "-", "--sort", sort, "--place", "all"],
            Some(&bytes),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("CPU Time (Ratio)"));
    }
    let doc = json(&[
        "report",
        "--json",
        &case("static-cpu-calls", "input.pb"),
        "--sort",
        "calls",
    ]);
    assert_eq!(doc["sections"][0]["merged"], true);
    assert_eq!(doc["sections"][1]["tables"][0]["thread"], 1);
    assert_eq!(doc["sorted_by"], "calls");
}

#[test]
fn report_warns_on_stderr_and_reads_node_trees() {
    let out = profkit(
        &[
            "report",
            &case("nodetree-open-types", "input.paddle_trace.pb"),
            "--place",
            "cuda",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Place: CUDA"));
    assert!(text(&out.stdout).contains("thread0::ProfileStep#3"));
}

#[test]
fn errors_name_the_file_offset_and_path() {
    let path = case("error-wrong-wire-type", "input.pb");
    for command in ["inspect", "dump", "validate", "report"] {
        let out = profkit(&[command, &path], None);
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "profkit: {path}: malformed Profile.events[1].start_ns at byte 54: wire type 2 (length-delimited), expected 0 (varint)\n"
            )
        );
    }
    let out = profkit(&["report", &case("error-truncated", "input.pb")], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("truncated: the input ends at byte 507 inside Profile.mem_events[3]")
    );
    // Naming the format explicitly reads anything as it; the error then says where it breaks.
    let out = profkit(
        &[
            "report",
            "--from",
            "paddle-trace",
            &case("dygraph-cpu-total", "input.pb"),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("NodeTreesProto"),
        "{}",
        text(&out.stderr)
    );
    // report reads Paddle's files, XSpaces and Chrome traces, not Poplar profiles.
    let poplar = conformance().join("poplar/combined/input.json");
    let out = profkit(&["report", poplar.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("report reads Paddle profiles"));
}

#[test]
fn report_prints_paddles_summary_of_node_trees() {
    let input = case("nodetree-lenet", "input.paddle_trace.pb");
    let out = profkit(&["report", &input], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expected = std::fs::read_to_string(case("nodetree-lenet", "summary.txt")).unwrap();
    assert_eq!(text(&out.stdout), expected);

    // summary() options.
    let out = profkit(
        &[
            "report",
            &input,
            "--sorted-by",
            "CPUMin",
            "--no-op-detail",
            "--thread-sep",
            "--time-unit",
            "us",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Time unit: us\n"));
    assert!(stdout.contains("Thread: 20652"));
    assert!(!stdout.contains("  adam_ infer_meta"), "op detail left out");

    let out = profkit(
        &["report", &input, "--json", "--sorted-by", "cpu-max"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["options"]["sorted_by"], "CPUMax");
    // The longest call: Global_Pool2dGradNode, 8.56 ms.
    assert_eq!(
        doc["operator"][0]["rows"][0]["name"],
        "Global_Pool2dGradNode"
    );
    assert_eq!(doc["operator"][0]["rows"][0]["calls"], 8);
    assert_eq!(doc["overview_cpu"][0]["event_type"], "ProfileStep");

    // The legacy layout, on request.
    let out = profkit(&["report", "--legacy", &input], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Event Summary"));

    // Summary options do not go with the legacy report.
    let out = profkit(&["report", "--legacy", "--thread-sep", &input], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("options of the summary"));
    let out = profkit(
        &[
            "report",
            &case("dygraph-cpu-total", "input.pb"),
            "--time-unit",
            "s",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn report_summarises_chrome_and_xspace_input() {
    let out = profkit(
        &["report", &case("nodetree-lenet", "paddle_trace.json")],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("\nProfileStep                4 "),
        "{stdout}"
    );
    assert!(stdout.contains("UserDefined Summary"));
}

//! `profkit validate` exits 0 on every untouched file a real tool wrote that the repository keeps
//! (`conformance/`, each listed in its folder's README with the tool that wrote it): what real
//! producers write is at most a warning.

mod common;

use common::{profkit, text};

use std::path::{Path, PathBuf};

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

/// The files of `dir` (recursively), sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Every real file: the inputs of the cases a real tool wrote, and what xprof and Paddle wrote
/// beside them.
fn real_files() -> Vec<PathBuf> {
    let root = conformance();
    let mut files = Vec::new();
    // XSpaces written by TensorFlow, JAX and the official protobuf classes, and xprof's JSON.
    for entry in std::fs::read_dir(root.join("xplane")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("real-") || name == "sample-myhost" {
            files.push(dir.join("input.xplane.pb"));
            let xprof = dir.join("xprof.trace_viewer.json");
            if xprof.exists() {
                files.push(xprof);
            }
        }
    }
    // Chrome traces: the corpus (Kineto, catapult) and the cases real tools wrote.
    files.extend(
        files_under(&root.join("chrome/corpus"))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "gz")),
    );
    for case in [
        "kineto-event-sync",
        "jax-trace",
        "jax-perfetto",
        "paddle-sample",
        "xprof-output",
        "xprof-jax-plain",
        "xprof-tf-nostep",
        "xprof-tf-fnloop",
    ] {
        let dir = root.join("chrome").join(case);
        let plain = dir.join("input.json");
        files.push(if plain.exists() {
            plain
        } else {
            dir.join("input.json.gz")
        });
    }
    // Paddle's legacy Profiles, node trees and Chrome traces (paddlepaddle 3.3.1).
    for case in [
        "dygraph-cpu-total",
        "dygraph-cpu-ave",
        "dygraph-all-default",
        "static-cpu-calls",
    ] {
        files.push(root.join("paddle").join(case).join("input.pb"));
    }
    for case in [
        "nodetree-sample",
        "nodetree-lenet",
        "nodetree-static",
        "nodetree-static-memory",
    ] {
        let dir = root.join("paddle").join(case);
        files.push(dir.join("input.paddle_trace.pb"));
        files.push(dir.join("paddle_trace.json"));
    }
    // X-DeepLearning's own writer.
    files.push(root.join("xdl/original-writer/input"));
    files
}

#[test]
fn validate_exits_0_on_every_real_file() {
    let files = real_files();
    assert!(files.len() > 50, "{} files", files.len());
    let mut failures = Vec::new();
    for file in &files {
        assert!(file.exists(), "{} is gone", file.display());
        let out = profkit(&["validate", file.to_str().unwrap()], None);
        if out.status.code() != Some(0) {
            let stdout = text(&out.stdout);
            let first: Vec<&str> = stdout.lines().take(3).collect();
            failures.push(format!(
                "{} exits {:?}: {}{}",
                file.display(),
                out.status.code(),
                first.join("\n"),
                text(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn chrome_problems_name_the_trace_events() {
    // Two operators on one thread that partly overlap: an error, named by the trace's own index,
    // name, `ts` and `dur`; a Python function crossing the step: a warning.
    let file = conformance().join("chrome/invalid-overlap/input.json");
    let out = profkit(&["validate", file.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            ": traceEvents[4] \"aten::add\" (ts 205.125, dur 10) partially overlaps \
             traceEvents[3] \"aten::mm\" (ts 200, dur 10) by 4.875 us"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            ": warning: traceEvents[2] \"torch/profiler/profiler.py(811): step\" (ts 140.25, \
             dur 20) partially overlaps traceEvents[1] \"ProfilerStep#1\""
        ),
        "{stdout}"
    );
    // The same from standard input.
    let bytes = std::fs::read(&file).unwrap();
    let piped = profkit(&["validate", "-"], Some(&bytes));
    assert_eq!(piped.status.code(), Some(1));
    assert!(text(&piped.stdout).contains("traceEvents[4] \"aten::add\""));
}

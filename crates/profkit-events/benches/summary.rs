//! `Profiler.summary()`'s tables of a node trees file: the time profkit takes to decode
//! `conformance/paddle/nodetree-lenet/input.paddle_trace.pb` (1,060 host nodes, 408 memory nodes)
//! and print its summary (what `profkit report` does), next to paddlepaddle 3.3.1's own
//! `summary()` of a run of the same program (`benches/paddle_summary.py`, in the venv
//! `.oracle/paddle`, `PADDLE_VENV` elsewhere; skipped with a note when missing). Medians of 20
//! runs (5 for Paddle); printed as a table.
//!
//! `cargo bench -p profkit-events --bench summary`; without `--bench` (as under
//! `cargo test --benches`) it runs once as a smoke test and skips Paddle.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use profkit_events::paddle::nodetree;
use profkit_events::report::summary::{Forest, Summary, SummaryOptions};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let input = root.join("conformance/paddle/nodetree-lenet/input.paddle_trace.pb");
    let bytes = std::fs::read(&input).expect("the nodetree-lenet case");
    let runs = if full { 20 } else { 1 };
    let mut ours = Vec::new();
    let mut out = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let trees = nodetree::decode_node_trees(&bytes).expect("decodes");
        let summary = Summary::new(&Forest::from_node_trees(&trees), SummaryOptions::default());
        out += summary.text().len();
        ours.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    assert!(out > 0);
    println!("| summary of nodetree-lenet (1,060 host nodes) | median ms |");
    println!("|---|---|");
    println!("| profkit: decode + summary + text | {:.3} |", median(ours));
    if !full {
        return;
    }
    let venv = std::env::var_os("PADDLE_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".oracle/paddle"));
    let python = venv.join("bin/python");
    if !python.exists() {
        println!(
            "(paddlepaddle not in {}: Paddle's figure skipped)",
            venv.display()
        );
        return;
    }
    let script = root.join("crates/profkit-events/benches/paddle_summary.py");
    match Command::new(python).arg(script).arg("5").output() {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let line = text.lines().last().unwrap_or("");
            let doc: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
            let times: Vec<f64> = doc["ms"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_f64)
                .collect();
            println!(
                "| paddlepaddle 3.3.1: prof.summary() of its run of the program ({} host nodes) | {:.3} |",
                doc["nodes"],
                median(times)
            );
        }
        Ok(o) => println!(
            "(Paddle failed: {})",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ),
        Err(e) => println!("(Paddle did not run: {e})"),
    }
}

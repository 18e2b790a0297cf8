//! xprof's tools computed from an XSpace: time and peak memory of profkit's (what `profkit xprof
//! TOOL x.xplane.pb` runs: read the file, build OpStats, write the tool's JSON) against xprof
//! 2.24.2's `xspace_to_tool_data` for the same tool and file, in the same run.
//!
//! The data set is `profkit-xplane`'s benchmark XSpace of one million events
//! (`target/bench-data/xspace_1m.xplane.pb`), or the file `PROFKIT_BENCH_INPUT` names (a real
//! profile). Each measurement runs in a fresh child process (this binary re-run with
//! `--measure`), which reports its wall time and peak resident set (`VmHWM`); xprof runs in a
//! child Python (`benches/xprof_trace_viewer.py` with the tool's name) from `.oracle/xprof`
//! (`XPROF_VENV` elsewhere), skipped with a note when missing. Three runs each, in turn, the
//! median reported; then the outputs are compared byte for byte.
//!
//! `cargo bench -p profkit-xprof --bench xprof_tools`; without `--bench` (as under `cargo test
//! --benches`) it runs on 10,000 events and skips xprof.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use profkit_bench::paths::workspace_root;
use profkit_bench::{alloc, bench_mode, child, timing};
use profkit_xprof::op_stats;
use profkit_xprof::tools::framework_op_stats;

#[path = "../../profkit-xplane/benches/common/mod.rs"]
#[allow(dead_code)]
mod common;
use common::{Dataset, FULL_EVENTS, SMOKE_EVENTS};

const TOOLS: [&str; 1] = ["framework_op_stats"];

/// In the child: computes `tool` of `input` into `output` and prints seconds and VmHWM.
fn measure(input: &Path, tool: &str, output: &str) {
    let start = Instant::now();
    let file = std::fs::File::open(input).expect("open the input");
    let space = op_stats::read_space(file, profkit_xplane::ReadOptions::default()).expect("read");
    let built = op_stats::build(vec![space], &["bench"]);
    let json = match tool {
        "framework_op_stats" => framework_op_stats::to_json(&built.op_stats),
        other => panic!("no tool {other}"),
    };
    std::fs::write(output, json).expect("write");
    child::print_json(&serde_json::json!({
        "seconds": start.elapsed().as_secs_f64(),
        "vmhwm_kb": alloc::vm_hwm().map_or(0, |bytes| bytes / 1024),
    }));
}

fn child_json(answer: Result<serde_json::Value, String>) -> Option<serde_json::Value> {
    answer.map_err(|why| eprintln!("child failed: {why}")).ok()
}

fn xprof(input: &Path, tool: &str, output: &Path) -> Option<serde_json::Value> {
    let venv = std::env::var_os("XPROF_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".oracle/xprof"));
    let python = venv.join("bin/python");
    if !python.exists() {
        eprintln!("no xprof venv at {}: skipping xprof", venv.display());
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/xprof_trace_viewer.py");
    child_json(child::json_of(
        Command::new(python)
            .arg(script)
            .arg(input)
            .arg(output)
            .arg(tool),
    ))
}

fn main() {
    if let Some(args) = child::measure_args() {
        let Ok([input, tool, output]) = <[String; 3]>::try_from(args) else {
            panic!("--measure INPUT TOOL OUTPUT");
        };
        measure(Path::new(&input), &tool, &output);
        return;
    }
    let given = std::env::var_os("PROFKIT_BENCH_INPUT").map(PathBuf::from);
    let input = match &given {
        Some(path) => path.clone(),
        None => {
            let (events, stem) = if bench_mode() {
                (FULL_EVENTS, "xspace_1m")
            } else {
                (SMOKE_EVENTS, "xspace_10k")
            };
            Dataset::prepare(events, stem).expect("the data set").path
        }
    };
    let size = std::fs::metadata(&input).map_or(0, |m| m.len());
    println!("{}: {:.1} MB", input.display(), size as f64 / 1e6);
    let dir = std::env::temp_dir().join(format!("profkit-xprof-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    for tool in TOOLS {
        let ours_out = dir.join(format!("ours.{tool}.json"));
        let theirs_out = dir.join(format!("xprof.{tool}.json"));
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let runs = if bench_mode() { 3 } else { 1 };
        for _ in 0..runs {
            if let Some(r) = child_json(child::run_json(&[
                input.as_os_str(),
                OsStr::new(tool),
                ours_out.as_os_str(),
            ])) {
                ours.push(r);
            }
            if bench_mode() {
                if let Some(r) = xprof(&input, tool, &theirs_out) {
                    theirs.push(r);
                }
            }
        }
        let med = |v: &[serde_json::Value], key: &str| {
            let xs: Vec<f64> = v.iter().filter_map(|r| r[key].as_f64()).collect();
            if xs.is_empty() {
                f64::NAN
            } else {
                timing::best_median(&xs).1
            }
        };
        let (os, om) = (med(&ours, "seconds"), med(&ours, "vmhwm_kb") / 1024.0);
        let (xs, xm) = (med(&theirs, "seconds"), med(&theirs, "vmhwm_kb") / 1024.0);
        let same = match (std::fs::read(&ours_out), std::fs::read(&theirs_out)) {
            (Ok(a), Ok(b)) if a == b => "identical",
            (Ok(_), Ok(_)) => "DIFFERENT",
            _ => "not compared",
        };
        println!(
            "{tool}: profkit {os:.3} s, {om:.1} MB; xprof {xs:.3} s, {xm:.1} MB; {:.1}x faster, memory {:.1}%; output {same}",
            xs / os,
            100.0 * om / xm
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

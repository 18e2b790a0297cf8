//! xprof's tools computed from an XSpace: time and peak memory of profkit's (what `profkit xprof
//! TOOL x.xplane.pb` runs: read the file, build OpStats, write the tool's JSON) against xprof
//! 2.24.2's `xspace_to_tool_data` for the same tool and file, in the same run.
//!
//! The data set is `profkit-xplane`'s benchmark XSpace of one million events
//! (`target/bench-data/xspace_1m.xplane.pb`), or the file `PROFKIT_BENCH_INPUT` names (a real
//! profile), or, with `PROFKIT_BENCH_TILE=CASE`, a real device profile of
//! `conformance/xplane-device/CASE` (`rocm1`: JAX on ROCm GPUs, with kernel details and the
//! programs' HLO protos; `gpu`, `tpu`) tiled in time to about a million events: every event of
//! every line repeated, each copy shifted by the profile's span, metadata and HLO protos as they
//! are, so the device tools have a million events of a real shape to read
//! (`target/bench-data/CASE_tiled_1m.xplane.pb`). `PROFKIT_BENCH_TOOLS=a,b` picks the tools
//! (framework_op_stats, kernel_stats, hlo_stats, roofline_model, op_profile, overview_page,
//! input_pipeline_analyzer; by default framework_op_stats, and on a tiled device profile the
//! device tools too). Each measurement runs in a fresh child process (this binary re-run with
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
use profkit_xprof::tools::{self, framework_op_stats};

#[path = "../../profkit-xplane/benches/common/mod.rs"]
#[allow(dead_code)]
mod common;
use common::{Dataset, FULL_EVENTS, SMOKE_EVENTS};

/// The tools measured by default, and on a tiled device profile.
const HOST_TOOLS: [&str; 1] = ["framework_op_stats"];
const DEVICE_TOOLS: [&str; 5] = [
    "framework_op_stats",
    "kernel_stats",
    "hlo_stats",
    "roofline_model",
    "op_profile",
];

/// `space` with every line's events repeated `copies` times in all, copy `k` shifted by `k`
/// times the space's span (its first begin to its last end, over every line, plus a microsecond).
fn tile(space: &mut profkit_xplane::XSpace, copies: usize) {
    use profkit_xplane::x_event::Data;
    let (mut first, mut last) = (i128::MAX, i128::MIN);
    for line in space.planes.iter().flat_map(|p| &p.lines) {
        for event in &line.events {
            if let Some(Data::OffsetPs(offset)) = event.data {
                let begin = i128::from(line.timestamp_ns) * 1000 + i128::from(offset);
                first = first.min(begin);
                last = last.max(begin + i128::from(event.duration_ps));
            }
        }
    }
    if first > last {
        return;
    }
    let period = i64::try_from(last - first + 1_000_000).expect("a span of i64 picoseconds");
    for line in space.planes.iter_mut().flat_map(|p| &mut p.lines) {
        let original = line.events.len();
        line.events.reserve(original * copies.saturating_sub(1));
        for k in 1..copies as i64 {
            for i in 0..original {
                let mut event = line.events[i].clone();
                if let Some(Data::OffsetPs(offset)) = &mut event.data {
                    *offset += k * period;
                }
                line.events.push(event);
            }
        }
    }
}

/// The tiled device profile of `case`, written once into the bench data folder.
fn tiled(case: &str, events: usize) -> PathBuf {
    let out = workspace_root().join(format!(
        "target/bench-data/{case}_tiled_{}k.xplane.pb",
        events / 1000
    ));
    if out.exists() {
        return out;
    }
    let input = workspace_root().join(format!(
        "conformance/xplane-device/{case}/input.xplane.pb.gz"
    ));
    let file = std::fs::File::open(&input).expect("open the device case");
    let mut space =
        profkit_xplane::read(file, profkit_xplane::ReadOptions::default()).expect("read");
    let have: usize = space
        .planes
        .iter()
        .flat_map(|p| &p.lines)
        .map(|l| l.events.len())
        .sum();
    tile(&mut space, events.div_ceil(have.max(1)));
    std::fs::create_dir_all(out.parent().expect("a folder")).expect("the bench data folder");
    profkit_xplane::write_file(&space, &out).expect("write the tiled profile");
    out
}

/// In the child: computes `tool` of `input` into `output` and prints seconds and VmHWM.
fn measure(input: &Path, tool: &str, output: &str) {
    let start = Instant::now();
    let file = std::fs::File::open(input).expect("open the input");
    // The parts of OpStats the tool shows, as `profkit xprof TOOL` builds them.
    let parts = op_stats::Parts::for_tool(tool);
    let space =
        op_stats::read_for(file, profkit_xplane::ReadOptions::default(), parts).expect("read");
    let built = op_stats::build_for(vec![space], &["bench"], parts);
    let stats = &built.op_stats;
    let json = match tool {
        "framework_op_stats" => framework_op_stats::to_json(stats),
        "kernel_stats" => tools::kernel_stats::to_json(stats),
        "hlo_stats" => tools::hlo_stats::to_json(stats),
        "roofline_model" => tools::roofline_model::to_json(stats),
        "op_profile" => {
            tools::op_profile::op_profile_json(stats, tools::op_profile::Grouping::Program)
                .expect("op_profile")
        }
        "overview_page" => tools::overview_page::to_json(stats).expect("overview_page"),
        "input_pipeline_analyzer" => {
            tools::input_pipeline::to_json(stats).expect("input_pipeline_analyzer")
        }
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
    let tile_case = std::env::var("PROFKIT_BENCH_TILE").ok();
    let events = if bench_mode() {
        FULL_EVENTS
    } else {
        SMOKE_EVENTS
    };
    let input = match (&given, &tile_case) {
        (Some(path), _) => path.clone(),
        (None, Some(case)) => tiled(case, events),
        (None, None) => {
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
    let chosen = std::env::var("PROFKIT_BENCH_TOOLS").ok();
    let tools: Vec<&str> = match &chosen {
        Some(list) => list.split(',').filter(|t| !t.is_empty()).collect(),
        None if tile_case.is_some() => DEVICE_TOOLS.to_vec(),
        None => HOST_TOOLS.to_vec(),
    };
    for tool in tools {
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
        // op_profile is protobuf JSON: equal once parsed (its bytes are xprof's too, but the
        // comparison the conformance checks make is of the parsed values).
        let parsed = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).ok();
        let same = match (std::fs::read(&ours_out), std::fs::read(&theirs_out)) {
            (Ok(a), Ok(b)) if a == b => "identical",
            (Ok(a), Ok(b))
                if tool == "op_profile" && parsed(&a).is_some() && parsed(&a) == parsed(&b) =>
            {
                "equal once parsed"
            }
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

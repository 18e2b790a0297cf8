//! xprof's `memory_profile` tool: time and peak memory of profkit's
//! (`tools::memory_profile::memory_profile_json` on a file read whole) against xprof 2.24.2's own
//! `xspace_to_tool_data([path], "memory_profile", ...)` on the same file, in the same run.
//!
//! Inputs: the real GPU profile of `conformance/xplane-device/gpu` (TensorFlow on a multi-GPU
//! worker, 1,101 allocator events among 118,000 events), written out uncompressed to
//! `target/bench-data/memory_profile_gpu.xplane.pb`; and a generated host plane of 400,000
//! allocator events over four allocators inside 1,000 steps (`memory_profile_400k.xplane.pb`).
//! With `PROFKIT_BENCH_INPUT=path.xplane.pb`, that file instead.
//!
//! Each measurement runs in a fresh child process: ours is this binary re-run with `--measure`,
//! xprof a child Python (`benches/xprof_trace_viewer.py memory_profile`) from the venv `.oracle/xprof`
//! (`XPROF_VENV` elsewhere), skipped with a note when it is missing. Each reports the time from
//! reading the file to the JSON written and its peak resident set (`VmHWM`, Python's import
//! included); the parent also times each child whole, from spawn to exit (the "whole process"
//! figure: Python's start-up and xprof's import on its side). Five runs each, in turn, medians
//! reported; results in `target/bench-data/<stem>.memory_profile.results.json`.
//!
//! `cargo bench -p profkit-xprof --bench memory_profile`; without `--bench` (as under `cargo test
//! --benches`) one run of ours on a small generated file, without xprof.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use profkit_bench::paths::{data_dir, workspace_root, write_if_changed, write_results};
use profkit_bench::{alloc, bench_mode, child, timing};
use profkit_xplane::{PlaneBuilder, ReadOptions, XPlane, XSpace, encode, read_file};
use profkit_xprof::tools::memory_profile::memory_profile_json;

/// In the child: reads `input`, writes its memory profile JSON to `output`, prints the figures.
fn measure(input: &Path, output: &Path) {
    let start = Instant::now();
    let space = read_file(input, ReadOptions::default()).expect("read the input");
    let json = memory_profile_json(std::slice::from_ref(&space)).expect("one host");
    std::fs::write(output, &json).expect("write the output");
    child::print_json(&serde_json::json!({
        "seconds": start.elapsed().as_secs_f64(),
        "vmhwm_kb": alloc::vm_hwm().map_or(0, |bytes| bytes / 1024),
        "bytes": json.len(),
    }));
}

/// A host plane of `steps` steps (`_r` roots), each with `per_step` allocator events over four
/// allocators, half of them freeing what the step allocated.
fn generated(steps: i64, per_step: i64) -> XSpace {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/host:CPU");
    let mut line = b.line(1);
    line.set_name("tf_executor");
    let allocators = ["GPU_0_bfc", "GPU_1_bfc", "GPU_2_bfc", "gpu_host_bfc"];
    for step in 0..steps {
        let base = step * (per_step + 2) * 1_000;
        line.add_event("train")
            .set_offset_ps(base)
            .set_duration_ps((per_step + 1) * 1_000)
            .add_stat("_r", 1_i64)
            .add_stat("step_num", step);
        for i in 0..per_step {
            let allocator = allocators[(i % 4) as usize];
            let k = i / 8;
            let freeing = (i / 4) % 2 == 1;
            let heap = 1_000_000 + (step % 7) * 4_096 + if freeing { 0 } else { k * 256 };
            let name = if freeing {
                "MemoryDeallocation"
            } else {
                "MemoryAllocation"
            };
            line.add_event(name)
                .set_offset_ps(base + (i + 1) * 1_000)
                .add_stat(
                    "allocator_name",
                    profkit_xplane::StatValue::Ref(allocator.into()),
                )
                .add_stat("bytes_reserved", 0_i64)
                .add_stat("bytes_allocated", heap)
                .add_stat("bytes_available", 1_i64 << 34)
                .add_stat("fragmentation", 0.01 * (i % 10) as f64)
                .add_stat("peak_bytes_in_use", heap)
                .add_stat("requested_bytes", 256_i64)
                .add_stat("allocation_bytes", 256_i64)
                .add_stat("addr", 0x7f00_0000_0000 + k * 256)
                .add_stat(
                    "tf_op",
                    profkit_xplane::StatValue::Ref(format!("model/layer_{}/MatMul", k % 50)),
                )
                .add_stat(
                    "region_type",
                    profkit_xplane::StatValue::Ref("output".into()),
                )
                .add_stat("data_type", 1_i64)
                .add_stat("shape", profkit_xplane::StatValue::Ref("[32,64]".into()));
        }
    }
    XSpace {
        planes: vec![plane],
        hostnames: vec!["host".into()],
        ..XSpace::default()
    }
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    timing::best_median(v).1
}

fn xprof_python() -> Option<PathBuf> {
    let venv = std::env::var_os("XPROF_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".oracle/xprof"));
    let python = venv.join("bin/python");
    python.exists().then_some(python)
}

/// Runs `command` to its end; its JSON line and its whole wall time.
fn timed(command: &mut Command) -> Option<(serde_json::Value, f64)> {
    let start = Instant::now();
    let answer = child::json_of(command);
    let wall = start.elapsed().as_secs_f64();
    answer
        .map_err(|why| eprintln!("child failed: {why}"))
        .ok()
        .map(|v| (v, wall))
}

/// Medians of (in-process seconds, whole-process seconds, VmHWM MB) over `runs`.
#[derive(Default)]
struct Side {
    seconds: Vec<f64>,
    wall: Vec<f64>,
    mb: Vec<f64>,
}

impl Side {
    fn push(&mut self, answer: Option<(serde_json::Value, f64)>) {
        if let Some((v, wall)) = answer {
            self.seconds.push(v["seconds"].as_f64().unwrap_or(f64::NAN));
            self.mb
                .push(v["vmhwm_kb"].as_f64().unwrap_or(f64::NAN) * 1024.0 / 1e6);
            self.wall.push(wall);
        }
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "runs": self.seconds.len(),
            "seconds_median": median(&self.seconds),
            "whole_process_seconds_median": median(&self.wall),
            "vmhwm_mb_median": median(&self.mb),
        })
    }
}

fn compare(path: &Path, stem: &str) {
    let dir = data_dir();
    let ours_out = dir.join(format!("{stem}.memory_profile.profkit.json"));
    let xprof_out = dir.join(format!("{stem}.memory_profile.xprof.json"));
    let python = if bench_mode() { xprof_python() } else { None };
    if bench_mode() && python.is_none() {
        eprintln!("no xprof venv: skipping xprof");
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/xprof_trace_viewer.py");
    let runs = if bench_mode() { 5 } else { 1 };
    let exe = std::env::current_exe().expect("this binary");
    let (mut ours, mut xprof) = (Side::default(), Side::default());
    for _ in 0..runs {
        ours.push(timed(
            Command::new(&exe)
                .arg("--measure")
                .args([path.as_os_str(), ours_out.as_os_str()]),
        ));
        if let Some(python) = &python {
            xprof.push(timed(
                Command::new(python)
                    .arg(&script)
                    .args([path.as_os_str(), xprof_out.as_os_str()])
                    .arg("memory_profile"),
            ));
        }
    }
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    println!("{stem}: {:.1} MB", size as f64 / 1e6);
    let line = |who: &str, s: &Side| {
        println!(
            "  {who:7} {:.3} s (whole process {:.3} s), peak RSS {:.0} MB",
            median(&s.seconds),
            median(&s.wall),
            median(&s.mb)
        );
    };
    line("profkit", &ours);
    if !xprof.seconds.is_empty() {
        line("xprof", &xprof);
        println!(
            "  xprof / profkit: {:.1}x time, {:.1}x whole process, {:.1}x memory",
            median(&xprof.seconds) / median(&ours.seconds),
            median(&xprof.wall) / median(&ours.wall),
            median(&xprof.mb) / median(&ours.mb)
        );
    }
    write_results(
        &format!("{stem}.memory_profile.results.json"),
        &serde_json::json!({"input": path, "bytes": size, "profkit": ours.json(), "xprof": xprof.json()}),
    );
}

fn main() {
    if let Some(args) = child::measure_args() {
        let Ok([input, output]) = <[String; 2]>::try_from(args) else {
            panic!("--measure INPUT OUTPUT");
        };
        measure(Path::new(&input), Path::new(&output));
        return;
    }
    let dir = data_dir();
    std::fs::create_dir_all(&dir).expect("data dir");
    if let Some(path) = std::env::var_os("PROFKIT_BENCH_INPUT").map(PathBuf::from) {
        let stem = path
            .file_stem()
            .and_then(OsStr::to_str)
            .unwrap_or("input")
            .trim_end_matches(".xplane")
            .to_owned();
        compare(&path, &stem);
        return;
    }
    if !bench_mode() {
        let path = dir.join("memory_profile_smoke.xplane.pb");
        write_if_changed(&path, &encode(&generated(10, 40))).expect("write the input");
        compare(&path, "memory_profile_smoke");
        return;
    }
    let gpu = workspace_root().join("conformance/xplane-device/gpu/input.xplane.pb.gz");
    let file = std::fs::File::open(&gpu).expect("the GPU sample");
    let bytes = profkit_xplane::read_bytes(file, ReadOptions::default()).expect("the GPU sample");
    let path = dir.join("memory_profile_gpu.xplane.pb");
    write_if_changed(&path, &bytes).expect("write the GPU sample");
    compare(&path, "memory_profile_gpu");
    let path = dir.join("memory_profile_400k.xplane.pb");
    write_if_changed(&path, &encode(&generated(1_000, 400))).expect("write the input");
    compare(&path, "memory_profile_400k");
}

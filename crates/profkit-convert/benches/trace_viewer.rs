//! XSpace to Chrome trace JSON: time and peak memory of profkit's conversion (what `profkit
//! convert x.xplane.pb out.json --to chrome` runs) against xprof 2.24.2's own `trace_viewer`
//! conversion of the same file, in the same run; and, with `PROFKIT_BENCH_LARGE=1`, the peak
//! memory of converting a generated XSpace of about 4 GB.
//!
//! The data set is `profkit-xplane`'s benchmark XSpace of one million events
//! (`target/bench-data/xspace_1m.xplane.pb`, see that crate's `benches/common`). Each measurement
//! runs in a fresh child process (this binary re-run with `--measure`), which reports its wall
//! time and its peak resident set (`VmHWM`); xprof runs in a child Python
//! (`benches/xprof_trace_viewer.py`) from the venv `.oracle/xprof` (`XPROF_VENV` elsewhere),
//! skipped with a note when it is missing. Both sides convert from the file and write the JSON to
//! a file; the outputs are then compared, xprof's salted `flow` args aside. Three runs each, in
//! turn, the median reported. Results go to `target/bench-data/trace_viewer.results.json`.
//!
//! `cargo bench -p profkit-convert --bench trace_viewer`; without `--bench` (as under
//! `cargo test --benches`) it runs on 10,000 events and skips xprof. With
//! `PROFKIT_BENCH_INPUT=path.xplane.pb` it runs the same comparison on that file instead (a real
//! profile, such as a long Keras `model.fit`), its results named after the file.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use profkit_bench::paths::{data_dir, workspace_root};
use profkit_bench::{alloc, bench_mode, child, timing};
use profkit_convert::trace_viewer::{TraceViewerOptions, convert};

mod large;
use large::write_large;

#[path = "../../profkit-xplane/benches/common/mod.rs"]
#[allow(dead_code)]
mod common;
use common::{Dataset, FULL_EVENTS, SMOKE_EVENTS};

/// In the child: converts `input` to `output` (`-` for a sink) and prints seconds and VmHWM.
fn measure(input: &Path, output: &str) {
    let start = Instant::now();
    let file = BufReader::with_capacity(1 << 16, File::open(input).expect("open the input"));
    let summary = if output == "-" {
        convert(file, std::io::sink(), &TraceViewerOptions::default(), None)
    } else {
        let out = BufWriter::with_capacity(1 << 16, File::create(output).expect("create"));
        convert(file, out, &TraceViewerOptions::default(), None)
    }
    .expect("the conversion");
    let seconds = start.elapsed().as_secs_f64();
    child::print_json(&serde_json::json!({
        "seconds": seconds,
        "vmhwm_kb": alloc::vm_hwm().map_or(0, |bytes| bytes / 1024),
        "events": summary.events,
    }));
}

/// A child's JSON line, or `None` after saying on stderr why there is none.
fn child_json(answer: Result<serde_json::Value, String>) -> Option<serde_json::Value> {
    answer.map_err(|why| eprintln!("child failed: {why}")).ok()
}

fn median(v: &[f64]) -> f64 {
    timing::best_median(v).1
}

fn ours(input: &Path, output: &str) -> Option<serde_json::Value> {
    child_json(child::run_json(&[input.as_os_str(), OsStr::new(output)]))
}

fn xprof(input: &Path, output: &Path) -> Option<serde_json::Value> {
    let venv = std::env::var_os("XPROF_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".oracle/xprof"));
    let python = venv.join("bin/python");
    if !python.exists() {
        eprintln!(
            "no xprof venv at {}: skipping the comparison",
            venv.display()
        );
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/xprof_trace_viewer.py");
    child_json(child::json_of(
        Command::new(python).arg(script).arg(input).arg(output),
    ))
}

/// xprof's JSON text without its salted `flow` args, as profkit writes it.
fn without_flow(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.trim_end().split('\n') {
        let mut line = line.to_owned();
        while let Some(start) = line.find("\"flow\": \"") {
            let from = start + "\"flow\": \"".len();
            let Some(len) = line[from..].find('"') else {
                break;
            };
            let mut end = from + len + 1;
            let mut begin = start;
            if line[end..].starts_with(", ") {
                end += 2;
            } else if line[..begin].ends_with(", ") {
                begin -= 2;
            }
            line.replace_range(begin..end, "");
        }
        out.push_str(&line.replace("\"args\": {}, ", ""));
        out.push('\n');
    }
    out
}

/// The benchmark's data set read from a given file.
fn dataset_of_file(path: &Path) -> Dataset {
    let bytes = std::fs::read(path).expect("read the input");
    let space =
        profkit_xplane::decode(bytes::Bytes::from(bytes.clone())).expect("decode the input");
    Dataset {
        events: common::count_events(&space),
        space,
        bytes,
        path: path.to_owned(),
        descriptor_set_path: PathBuf::new(),
    }
}

fn large() {
    let dir = data_dir();
    std::fs::create_dir_all(&dir).expect("data dir");
    let path = dir.join("xspace_4g.xplane.pb");
    let planes = 105;
    let per_plane = 1_000_000;
    if !path.exists() {
        eprintln!("generating {} (about 4 GB)...", path.display());
        let start = Instant::now();
        let size = write_large(&path, planes, per_plane);
        eprintln!("{size} bytes in {:.1} s", start.elapsed().as_secs_f64());
    }
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let result = ours(&path, "-").expect("the conversion of the large file");
    println!(
        "large: {size} bytes, {} events: {:.1} s, peak RSS {:.0} MB",
        result["events"],
        result["seconds"].as_f64().unwrap_or(f64::NAN),
        result["vmhwm_kb"].as_f64().unwrap_or(f64::NAN) * 1024.0 / 1e6
    );
    let record = serde_json::json!({"bytes": size, "planes": planes, "events_per_plane": per_plane, "result": result});
    let _ = std::fs::write(
        dir.join("trace_viewer_large.results.json"),
        record.to_string(),
    );
}

fn main() {
    if let Some(args) = child::measure_args() {
        let Ok([input, output]) = <[String; 2]>::try_from(args) else {
            panic!("--measure INPUT OUTPUT");
        };
        measure(Path::new(&input), &output);
        return;
    }
    if bench_mode() && std::env::var_os("PROFKIT_BENCH_LARGE").is_some() {
        large();
        return;
    }
    let events = if bench_mode() {
        FULL_EVENTS
    } else {
        SMOKE_EVENTS
    };
    let stem = if bench_mode() {
        "xspace_1m"
    } else {
        "xspace_10k"
    };
    let given = std::env::var_os("PROFKIT_BENCH_INPUT").map(PathBuf::from);
    let dataset = match &given {
        Some(path) => dataset_of_file(path),
        None => Dataset::prepare(events, stem).expect("the data set"),
    };
    let stem = match &given {
        Some(path) => path
            .file_stem()
            .and_then(OsStr::to_str)
            .unwrap_or("input")
            .trim_end_matches(".xplane")
            .to_owned(),
        None => stem.to_owned(),
    };
    let dir = data_dir();
    std::fs::create_dir_all(&dir).expect("data dir");
    let ours_out = dir.join(format!("{stem}.profkit.json"));
    let xprof_out = dir.join(format!("{stem}.xprof.json"));
    let runs = if bench_mode() { 3 } else { 1 };
    let (mut our_s, mut our_kb, mut xprof_s, mut xprof_kb) = (vec![], vec![], vec![], vec![]);
    for _ in 0..runs {
        if let Some(r) = ours(&dataset.path, ours_out.to_str().unwrap_or("-")) {
            our_s.push(r["seconds"].as_f64().unwrap_or(f64::NAN));
            our_kb.push(r["vmhwm_kb"].as_f64().unwrap_or(f64::NAN));
        }
        if bench_mode() {
            if let Some(r) = xprof(&dataset.path, &xprof_out) {
                xprof_s.push(r["seconds"].as_f64().unwrap_or(f64::NAN));
                xprof_kb.push(r["vmhwm_kb"].as_f64().unwrap_or(f64::NAN));
            }
        }
    }
    let file_mb = dataset.bytes.len() as f64 / 1e6;
    println!(
        "{} events, {file_mb:.1} MB; largest plane {:.1} MB",
        dataset.events,
        dataset.largest_plane_bytes() as f64 / 1e6
    );
    println!(
        "profkit: {:.3} s, peak RSS {:.1} MB",
        median(&our_s),
        median(&our_kb) / 1e3 * 1.024
    );
    let mut identical = None;
    if !xprof_s.is_empty() {
        println!(
            "xprof:   {:.3} s, peak RSS {:.1} MB",
            median(&xprof_s),
            median(&xprof_kb) / 1e3 * 1.024
        );
        println!(
            "profkit is {:.1}x faster and uses {:.1}% of xprof's peak memory",
            median(&xprof_s) / median(&our_s),
            100.0 * median(&our_kb) / median(&xprof_kb)
        );
        let a = std::fs::read_to_string(&ours_out).unwrap_or_default();
        let b = std::fs::read_to_string(&xprof_out).unwrap_or_default();
        let same = a == without_flow(&b);
        println!(
            "outputs: {}",
            if same {
                "identical (xprof's flow args aside)"
            } else {
                "DIFFERENT"
            }
        );
        identical = Some(same);
    }
    let record = serde_json::json!({
        "events": dataset.events,
        "bytes": dataset.bytes.len(),
        "profkit": {"seconds": our_s, "vmhwm_kb": our_kb},
        "xprof": {"seconds": xprof_s, "vmhwm_kb": xprof_kb},
        "identical_outputs": identical,
    });
    let _ = std::fs::write(
        dir.join(format!("{stem}.trace_viewer.results.json")),
        record.to_string(),
    );
}

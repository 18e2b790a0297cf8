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
//! a file; the outputs are then compared, flow ids renamed by first appearance (xprof salts them). Three runs each, in
//! turn, the median reported. Results go to `target/bench-data/trace_viewer.results.json`.
//!
//! `cargo bench -p profkit-xprof --bench trace_viewer`; without `--bench` (as under
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
use profkit_xprof::flows::ids_renamed;
use profkit_xprof::trace_viewer::{TraceViewerOptions, convert};

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
    println!(
        "{} events, {:.1} MB; largest plane {:.1} MB",
        dataset.events,
        dataset.bytes.len() as f64 / 1e6,
        dataset.largest_plane_bytes() as f64 / 1e6
    );
    if let Some(path) = &given {
        let stem = path
            .file_stem()
            .and_then(OsStr::to_str)
            .unwrap_or("input")
            .trim_end_matches(".xplane");
        compare(path, stem, dataset.events, dataset.bytes.len());
        return;
    }
    compare(&dataset.path, stem, dataset.events, dataset.bytes.len());
    // The same space with the stats XLA gives GPU kernels, so that xprof and profkit derive
    // `XLA Modules` and `XLA Ops` lines for every stream.
    let xla_stem = format!("{stem}_xla");
    let (xla_path, xla_bytes) = write_xla_variant(&dataset.space, &xla_stem);
    println!(
        "with XLA kernel stats (derived lines): {:.1} MB",
        xla_bytes as f64 / 1e6
    );
    compare(&xla_path, &xla_stem, dataset.events, xla_bytes);
}

/// Writes `space` with `kernel_details`, `hlo_module`, `program_id` and `hlo_op` stats on every
/// GPU event (runs of four kernels of one op, every eighth op nested in a `while`) to
/// `<stem>.xplane.pb`; returns its path and size.
fn write_xla_variant(space: &profkit_xplane::XSpace, stem: &str) -> (PathBuf, usize) {
    use profkit_xplane::{XStat, XStatMetadata, x_stat};
    let mut space = space.clone();
    for plane in &mut space.planes {
        if !plane.name.starts_with("/device:GPU:") {
            continue;
        }
        let mut next = plane.stat_metadata.keys().copied().max().unwrap_or(0);
        let mut intern = |plane: &mut profkit_xplane::XPlane, name: &str| {
            next += 1;
            plane.stat_metadata.insert(
                next,
                XStatMetadata {
                    id: next,
                    name: name.to_owned(),
                    description: String::new(),
                },
            );
            next
        };
        let details = intern(plane, "kernel_details");
        let module = intern(plane, "hlo_module");
        let program = intern(plane, "program_id");
        let op = intern(plane, "hlo_op");
        for line in &mut plane.lines {
            for (k, event) in line.events.iter_mut().enumerate() {
                let n = (k / 4) % 64;
                let name = if n % 8 == 0 {
                    format!("while.{}::fusion.{n}", n / 8)
                } else {
                    format!("fusion.{n}")
                };
                let str_stat = |id: i64, v: String| XStat {
                    metadata_id: id,
                    value: Some(x_stat::Value::StrValue(v)),
                };
                event.stats.push(str_stat(
                    details,
                    "regs:32 static_shared:0 dynamic_shared:0 grid:8,1,1 block:128,1,1".to_owned(),
                ));
                event
                    .stats
                    .push(str_stat(module, "jit_train_step".to_owned()));
                event.stats.push(XStat {
                    metadata_id: program,
                    value: Some(x_stat::Value::Uint64Value(7)),
                });
                event.stats.push(str_stat(op, name));
            }
        }
    }
    let bytes = profkit_xplane::encode(&space);
    let path = data_dir().join(format!("{stem}.xplane.pb"));
    let unchanged = std::fs::read(&path).is_ok_and(|old| old == bytes);
    if !unchanged {
        std::fs::write(&path, &bytes).expect("write the XLA variant");
    }
    (path, bytes.len())
}

/// Converts `path` with profkit and (in bench mode) xprof, three runs each in turn; prints the
/// medians and whether the outputs agree; records them under `<stem>.trace_viewer.results.json`.
fn compare(path: &Path, stem: &str, events: u64, bytes: usize) {
    let dir = data_dir();
    std::fs::create_dir_all(&dir).expect("data dir");
    let ours_out = dir.join(format!("{stem}.profkit.json"));
    let xprof_out = dir.join(format!("{stem}.xprof.json"));
    let runs = if bench_mode() { 3 } else { 1 };
    let (mut our_s, mut our_kb, mut xprof_s, mut xprof_kb) = (vec![], vec![], vec![], vec![]);
    for _ in 0..runs {
        if let Some(r) = ours(path, ours_out.to_str().unwrap_or("-")) {
            our_s.push(r["seconds"].as_f64().unwrap_or(f64::NAN));
            our_kb.push(r["vmhwm_kb"].as_f64().unwrap_or(f64::NAN));
        }
        if bench_mode() {
            if let Some(r) = xprof(path, &xprof_out) {
                xprof_s.push(r["seconds"].as_f64().unwrap_or(f64::NAN));
                xprof_kb.push(r["vmhwm_kb"].as_f64().unwrap_or(f64::NAN));
            }
        }
    }
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
        let same = ids_renamed(a.trim_end()) == ids_renamed(b.trim_end());
        println!(
            "outputs: {}",
            if same {
                "identical (flow ids renamed by first appearance: the same events linked)"
            } else {
                "DIFFERENT"
            }
        );
        identical = Some(same);
    }
    // The outputs are only for this comparison (hundreds of MB each).
    let _ = std::fs::remove_file(&ours_out);
    let _ = std::fs::remove_file(&xprof_out);
    let record = serde_json::json!({
        "events": events,
        "bytes": bytes,
        "profkit": {"seconds": our_s, "vmhwm_kb": our_kb},
        "xprof": {"seconds": xprof_s, "vmhwm_kb": xprof_kb},
        "identical_outputs": identical,
    });
    let _ = std::fs::write(
        dir.join(format!("{stem}.trace_viewer.results.json")),
        record.to_string(),
    );
}

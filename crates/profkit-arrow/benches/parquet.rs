//! XSpace to Parquet: time and peak memory of profkit's conversion (what `profkit convert
//! x.xplane.pb DIR --to parquet` runs) against the conversion to Chrome JSON (`--to chrome`) of
//! the same file, in the same run; then a DuckDB aggregation over the Parquet against the same
//! aggregation done by Python's `json` over our Chrome JSON; and, with `PROFKIT_BENCH_LARGE=1`,
//! the peak memory of converting a generated XSpace of 4 GB (the 1M file's bytes 105 times over;
//! `PROFKIT_BENCH_LARGE=wide` makes 105 planes of a million events instead, whose largest plane is
//! 38 MB encoded).
//!
//! The data set is `profkit-xplane`'s benchmark XSpace of one million events
//! (`target/bench-data/xspace_1m.xplane.pb`, see that crate's `benches/common`). Each conversion
//! runs in a fresh child process (this binary re-run with `--measure`), which reports its wall
//! time, CPU time and peak resident set (`VmHWM`); five runs of each side, in turn, the median
//! reported. The queries run in a child Python (`benches/query.py`) from the venv `.oracle/arrow`
//! that `conformance/arrow/check.sh` installs (`ARROW_VENV` elsewhere), skipped with a note when
//! it is missing. Results go to `target/bench-data/xspace_1m.parquet.results.json`.
//!
//! `cargo bench -p profkit-arrow --bench parquet`; without `--bench` (as under
//! `cargo test --benches`) it runs on 10,000 events and skips the queries.

// The counting allocator must implement `GlobalAlloc`, an unsafe trait; bench binaries are the
// only places outside the C ABI crate that do (as profkit-xplane's stream_memory), and every
// library crate still forbids unsafe.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use profkit_arrow::{HostInfo, Options, WriteOptions, sources};
use profkit_xplane::ReadOptions;
use profkit_xprof::trace_viewer::{TraceViewerOptions, convert};

#[path = "../../profkit-xprof/benches/large/mod.rs"]
mod large;
use large::write_large;

#[path = "../../profkit-xplane/benches/common/mod.rs"]
#[allow(dead_code)]
mod common;
use common::{Dataset, FULL_EVENTS, SMOKE_EVENTS};
use profkit_bench::alloc::{self, Counting};
use profkit_bench::bench_mode;
use profkit_bench::paths::{data_dir, workspace_root};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// In the child: converts `input` to `output` as `to` says and prints seconds, VmHWM and events.
fn measure(to: &str, input: &Path, output: &Path, heap: bool) {
    let start = Instant::now();
    let (events, heap_peak) = alloc::measure(|| convert_as(to, input, output));
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{{\"seconds\": {seconds}, \"cpu_seconds\": {}, \"vmhwm_kb\": {}, \"heap_peak_bytes\": {}, \"events\": {events}}}",
        profkit_bench::timing::process_cpu(),
        alloc::vm_hwm().unwrap_or(0) / 1024,
        if heap { heap_peak } else { 0 }
    );
}

/// Converts `input` to `output` as `to` says; the events converted.
fn convert_as(to: &str, input: &Path, output: &Path) -> u64 {
    let file = BufReader::with_capacity(1 << 16, File::open(input).expect("open the input"));
    if to == "batches" {
        // The events stream alone, nothing written: what the reader and the batches hold.
        let info = HostInfo::new("bench", "xspace", [input.display().to_string()]);
        let mut batches = sources::xspace(file, info, Options::default(), ReadOptions::default());
        let mut rows = 0;
        while let Some(batch) = batches.next_batch().expect("the conversion") {
            rows += batch.num_rows() as u64;
        }
        rows
    } else if to == "parquet" {
        let _ = std::fs::remove_dir_all(output);
        let info = HostInfo::new("bench", "xspace", [input.display().to_string()]);
        let mut batches = sources::xspace(file, info, Options::default(), ReadOptions::default());
        let (rows, _) = profkit_arrow::write_host(output, &mut batches, WriteOptions::default())
            .expect("the conversion");
        rows
    } else {
        let out = BufWriter::with_capacity(1 << 16, File::create(output).expect("create"));
        convert(file, out, &TraceViewerOptions::default(), None)
            .expect("the conversion")
            .events
    }
}

fn child_json(command: &mut Command) -> Option<serde_json::Value> {
    profkit_bench::child::json_of(command)
        .map_err(|e| eprintln!("child failed: {e}"))
        .ok()
}

/// One child run; with `heap`, one that counts the live heap (and is not timed).
fn ours_with(heap: bool, to: &str, input: &Path, output: &Path) -> Option<serde_json::Value> {
    let exe = std::env::current_exe().ok()?;
    let mut command = Command::new(exe);
    if heap {
        command.arg("--heap");
    }
    child_json(command.arg("--measure").arg(to).arg(input).arg(output))
}

fn ours(to: &str, input: &Path, output: &Path) -> Option<serde_json::Value> {
    ours_with(false, to, input, output)
}

fn median(v: Vec<f64>) -> f64 {
    profkit_bench::timing::best_median(&v).1
}

fn field(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(f64::NAN)
}

fn queries(dataset: &Path, chrome: &Path) -> Option<serde_json::Value> {
    let venv = std::env::var_os("ARROW_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".oracle/arrow"));
    let python = venv.join("bin/python");
    if !python.exists() {
        eprintln!(
            "no venv at {} (conformance/arrow/check.sh makes it): skipping the queries",
            venv.display()
        );
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/query.py");
    child_json(
        Command::new(python)
            .arg(script)
            .arg(dataset)
            .arg(chrome)
            .arg("--runs")
            .arg("3"),
    )
}

/// The large file: `wide` is 105 planes of a million events each (as the trace viewer bench
/// makes it, largest plane 38 MB encoded); otherwise the 1M data set's bytes concatenated 105
/// times (an XSpace too: repeated fields append), 4.0 GB with the largest plane of the 1M file.
fn large(kind: &str) {
    let dir = data_dir();
    std::fs::create_dir_all(&dir).expect("data dir");
    let copies: usize = std::env::var("PROFKIT_BENCH_LARGE_COPIES")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(105);
    let path = if kind == "wide" {
        let path = dir.join("xspace_4g.xplane.pb");
        if !path.exists() {
            eprintln!(
                "generating {} ({copies} planes of 1M events)...",
                path.display()
            );
            let size = write_large(&path, copies, 1_000_000);
            eprintln!("{size} bytes");
        }
        path
    } else {
        let path = dir.join(format!("xspace_1m_x{copies}.xplane.pb"));
        if !path.exists() {
            let one = Dataset::prepare(FULL_EVENTS, "xspace_1m").expect("the data set");
            eprintln!(
                "writing {} ({copies} copies of the 1M file)...",
                path.display()
            );
            let mut out = BufWriter::with_capacity(1 << 20, File::create(&path).expect("create"));
            for _ in 0..copies {
                out.write_all(&one.bytes).expect("write");
            }
            out.flush().expect("flush");
        }
        path
    };
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let out = dir.join("xspace_large.parquet");
    let result = ours_with(true, "parquet", &path, &out).expect("the conversion of the large file");
    let parquet_bytes = dir_size(&out);
    println!(
        "large ({kind}): {size} bytes, {} events: {:.1} s, peak RSS {:.1} MB, live heap peak {:.1} MB; Parquet {:.0} MB",
        result["events"],
        field(&result, "seconds"),
        field(&result, "vmhwm_kb") * 1024.0 / 1e6,
        field(&result, "heap_peak_bytes") / 1e6,
        parquet_bytes as f64 / 1e6
    );
    let record = serde_json::json!({"kind": kind, "bytes": size, "copies": copies,
        "parquet_bytes": parquet_bytes, "result": result});
    let _ = std::fs::write(
        dir.join(format!("parquet_large_{kind}.results.json")),
        record.to_string(),
    );
    let _ = std::fs::remove_dir_all(&out);
}

fn dir_size(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    };
    entries
        .filter_map(Result::ok)
        .map(|e| dir_size(&e.path()))
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // Counting costs every allocation two atomic operations, which would tax the side that
    // allocates more: only the runs that report the heap (`--heap`, not timed) count.
    let heap = args.iter().any(|a| a == "--heap");
    alloc::set_counting(heap);
    if let Some(i) = args.iter().position(|a| a == "--measure") {
        let (Some(to), Some(input), Some(output)) =
            (args.get(i + 1), args.get(i + 2), args.get(i + 3))
        else {
            panic!("--measure parquet|chrome|batches INPUT OUTPUT");
        };
        measure(to, Path::new(input), Path::new(output), heap);
        return;
    }
    if let Some(kind) = std::env::var_os("PROFKIT_BENCH_LARGE").filter(|_| bench_mode()) {
        large(&kind.to_string_lossy());
        return;
    }
    let (events, stem) = if bench_mode() {
        (FULL_EVENTS, "xspace_1m")
    } else {
        (SMOKE_EVENTS, "xspace_10k")
    };
    let dataset = Dataset::prepare(events, stem).expect("the data set");
    let dir = data_dir();
    let parquet_out = dir.join(format!("{stem}.parquet"));
    let chrome_out = dir.join(format!("{stem}.profkit.json"));
    let runs = if bench_mode() { 5 } else { 1 };
    let (mut pq_s, mut pq_kb, mut ch_s, mut ch_kb) = (vec![], vec![], vec![], vec![]);
    let (mut pq_heap, mut ch_heap, mut pq_cpu, mut ch_cpu) = (vec![], vec![], vec![], vec![]);
    for _ in 0..runs {
        if let Some(r) = ours("parquet", &dataset.path, &parquet_out) {
            assert_eq!(r["events"].as_u64(), Some(dataset.events));
            pq_s.push(field(&r, "seconds"));
            pq_kb.push(field(&r, "vmhwm_kb"));
            pq_cpu.push(field(&r, "cpu_seconds"));
        }
        if let Some(r) = ours("chrome", &dataset.path, &chrome_out) {
            ch_s.push(field(&r, "seconds"));
            ch_kb.push(field(&r, "vmhwm_kb"));
            ch_cpu.push(field(&r, "cpu_seconds"));
        }
    }
    // The live heap peak, once each, in runs that count it (and are not timed).
    if let Some(r) = ours_with(true, "parquet", &dataset.path, &parquet_out) {
        pq_heap.push(field(&r, "heap_peak_bytes"));
    }
    if let Some(r) = ours_with(true, "chrome", &dataset.path, &chrome_out) {
        ch_heap.push(field(&r, "heap_peak_bytes"));
    }
    let parquet_bytes = dir_size(&parquet_out);
    let chrome_bytes = std::fs::metadata(&chrome_out).map(|m| m.len()).unwrap_or(0);
    println!(
        "{} events, XSpace {:.1} MB; largest plane {:.1} MB",
        dataset.events,
        dataset.bytes.len() as f64 / 1e6,
        dataset.largest_plane_bytes() as f64 / 1e6
    );
    println!(
        "--to parquet: {:.3} s (CPU {:.2} s), peak RSS {:.1} MB, live heap peak {:.1} MB, dataset {:.1} MB",
        median(pq_s.clone()),
        median(pq_cpu.clone()),
        median(pq_kb.clone()) * 1024.0 / 1e6,
        median(pq_heap.clone()) / 1e6,
        parquet_bytes as f64 / 1e6
    );
    println!(
        "--to chrome:  {:.3} s (CPU {:.2} s), peak RSS {:.1} MB, live heap peak {:.1} MB, JSON {:.1} MB",
        median(ch_s.clone()),
        median(ch_cpu.clone()),
        median(ch_kb.clone()) * 1024.0 / 1e6,
        median(ch_heap.clone()) / 1e6,
        chrome_bytes as f64 / 1e6
    );
    let query = if bench_mode() {
        queries(&parquet_out, &chrome_out)
    } else {
        None
    };
    if let Some(q) = &query {
        println!(
            "aggregation by name: DuckDB over Parquet {:.3} s, Python json over Chrome JSON {:.3} s ({:.1}x); same answer: {}",
            field(q, "duckdb_seconds"),
            field(q, "json_seconds"),
            field(q, "json_seconds") / field(q, "duckdb_seconds"),
            q["same_counts"]
        );
    }
    let record = serde_json::json!({
        "events": dataset.events,
        "bytes": dataset.bytes.len(),
        "parquet": {"seconds": pq_s, "cpu_seconds": pq_cpu, "vmhwm_kb": pq_kb, "heap_peak_bytes": pq_heap, "bytes": parquet_bytes},
        "chrome": {"seconds": ch_s, "cpu_seconds": ch_cpu, "vmhwm_kb": ch_kb, "heap_peak_bytes": ch_heap, "bytes": chrome_bytes},
        "query": query,
    });
    let _ = std::fs::write(
        dir.join(format!("{stem}.parquet.results.json")),
        record.to_string(),
    );
}

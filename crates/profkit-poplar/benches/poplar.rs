//! Parse throughput of a graph profile of 16 IPUs x 1,216 tiles (about 200 MB), next to Python's
//! `json.load` and serde_json's untyped `Value` of the same file, in the same run.
//!
//! `cargo bench -p profkit-poplar --bench poplar` generates the file (`benches/common/mod.rs`),
//! runs criterion on three ways of reading it: this crate's streaming reader from the file
//! (`read_file`, what `profkit` does), the same reader on the bytes already in memory
//! (`from_slice`), and `serde_json::from_slice::<Value>` (the untyped tree), then times, in
//! alternating runs, `read_file`, `std::fs::read` + serde_json's `Value`, and `json.load` in a
//! Python child (`benches/json_load.py --serve`, under `$PROFKIT_PYTHON` or `python3`), by wall
//! clock and by the thread's CPU time. Results go to `target/bench-data/poplar.results.json`;
//! docs/performance.md records them. No figure is a threshold.
//!
//! Without `--bench` (as under `cargo test --benches`) it is a smoke test on one IPU.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput};
use profkit_bench::peer::{self, Peer};
use profkit_bench::timing::{Timings, time_once};
use profkit_poplar::GraphProfile;

mod common;

/// Runs of each side in the peer comparison.
const PEER_RUNS: usize = 5;

/// What proves the whole file was read: the numbers the Python peer reports too.
fn counts(g: &GraphProfile) -> serde_json::Value {
    serde_json::json!({
        "programs": g.programs().len(),
        "tiles": g.target.num_tiles,
        "total_including_gaps": g
            .memory
            .as_ref()
            .and_then(|m| m.by_tile.as_ref())
            .map_or(0, |t| t.total_including_gaps.sum()),
    })
}

fn read_typed(path: &Path) -> Result<GraphProfile, String> {
    profkit_poplar::read_file(path).map_err(|e| e.to_string())
}

fn read_value(path: &Path) -> Result<serde_json::Value, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}

fn main() {
    let bench = profkit_bench::bench_mode();
    let (stem, sizes) = if bench {
        ("poplar_graph_16ipu", common::FULL)
    } else {
        ("poplar_graph_smoke", common::SMOKE)
    };
    let path = common::prepare(stem, sizes)
        .unwrap_or_else(|e| panic!("cannot write the benchmark data: {e}"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let graph = read_typed(&path).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "data: {} ({} bytes; {} tiles, {} compute sets, {} programs)",
        path.display(),
        data.len(),
        graph.target.num_tiles,
        graph.num_compute_sets().unwrap_or(0),
        graph.programs().len()
    );
    let problems = profkit_poplar::validate::validate_graph(&graph, "");
    assert!(
        problems.is_empty(),
        "the generated profile is not valid: {:?}",
        problems
            .iter()
            .take(5)
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
    let expected = counts(&graph);
    drop(graph);

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(if bench { 12 } else { 1 }))
        .configure_from_args();
    let mut group = criterion.benchmark_group(stem);
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::BytesDecimal(data.len() as u64));
    group.bench_function("read_file", |b| {
        b.iter_with_large_drop(|| read_typed(black_box(&path)))
    });
    group.bench_function("from_slice", |b| {
        b.iter_with_large_drop(|| profkit_poplar::from_slice::<GraphProfile>(black_box(&data)))
    });
    group.bench_function("serde_json_value", |b| {
        b.iter_with_large_drop(|| serde_json::from_slice::<serde_json::Value>(black_box(&data)))
    });
    group.finish();
    criterion.final_summary();
    drop(data);

    if bench && !std::env::args().any(|a| a.starts_with("--profile-time")) {
        peer_comparison(&path, &expected);
    }
}

/// Our reader, serde_json's `Value` and Python's `json.load`, one run of each in turn.
fn peer_comparison(path: &Path, expected: &serde_json::Value) {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) as f64;
    println!("\npeer comparison: {PEER_RUNS} alternating runs, the file in the page cache");
    let mut peer = peer::or_skip(start_peer(path, expected));
    let mut timings: [Timings; 3] = Default::default();
    for _ in 0..PEER_RUNS {
        timings[0].push(time_once(|| read_typed(path)));
        timings[1].push(time_once(|| read_value(path)));
        if let Some(run) = peer::ask_or_drop(&mut peer, run) {
            timings[2].push(run);
        }
    }
    let names = [
        "profkit_poplar::read_file (typed, streaming)",
        "std::fs::read + serde_json Value",
        "Python json.load",
    ];
    let mut results = serde_json::json!({ "runs": PEER_RUNS, "bytes": size, "counts": expected });
    let stats: Vec<((f64, f64), (f64, f64))> =
        timings.iter().map(|t| (t.wall(), t.cpu())).collect();
    for (i, ((wb, wm), (cb, cm))) in stats.iter().enumerate() {
        if !wb.is_finite() {
            continue;
        }
        println!(
            "  {:<46} best {:>8.1} ms  median {:>8.1} ms  cpu best {:>8.1} ms  cpu median {:>8.1} ms  {:>7.1} MB/s",
            names[i],
            wb * 1e3,
            wm * 1e3,
            cb * 1e3,
            cm * 1e3,
            size / wb / 1e6
        );
        results[["profkit", "serde_json_value", "python_json_load"][i]] = serde_json::json!({
            "wall_best_s": wb, "wall_median_s": wm, "cpu_best_s": cb, "cpu_median_s": cm,
            "wall_s": timings[i].wall, "cpu_s": timings[i].cpu,
        });
    }
    let ours = stats[0];
    for (i, what) in [(2, "Python json.load"), (1, "serde_json Value")] {
        let theirs = stats[i];
        if theirs.0.0.is_finite() {
            println!(
                "  profkit is {:.1}x the speed of {what} by best wall time, {:.1}x by median, {:.1}x by best CPU time",
                theirs.0.0 / ours.0.0,
                theirs.0.1 / ours.0.1,
                theirs.1.0 / ours.1.0
            );
        }
    }
    if let Some(p) = &mut peer {
        if let Ok(rss) = peak_rss(p) {
            println!(
                "  Python's peak resident set: {:.0} MB ({:.1}x the file)",
                rss / 1e6,
                rss / size
            );
            results["python_peak_rss_bytes"] = serde_json::json!(rss);
        }
        println!(
            "  (Python {} {})",
            p.header["implementation"].as_str().unwrap_or("?"),
            p.header["python_version"].as_str().unwrap_or("?")
        );
        results["python"] = p.header.clone();
    }
    profkit_bench::paths::write_results("poplar.results.json", &results);
}

/// `benches/json_load.py --serve` (the standard library only, so any `python3`), once it has
/// read the same data as ours.
fn start_peer(path: &Path, expected: &serde_json::Value) -> Result<Peer, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/json_load.py");
    let data = [Path::new("--data"), path];
    let peer = Peer::start(&peer::system_python(), &script, &data)?;
    if &peer.header["counts"] != expected {
        return Err(format!(
            "the peer read other data: {} against {expected}",
            peer.header["counts"]
        ));
    }
    Ok(peer)
}

/// (wall, CPU) seconds of one `json.load` in the peer.
fn run(peer: &mut Peer) -> Result<(f64, f64), String> {
    let answer = peer.json("run")?;
    match (answer["wall"].as_f64(), answer["cpu"].as_f64()) {
        (Some(w), Some(c)) => Ok((w, c)),
        _ => Err(format!("peer answered {answer}")),
    }
}

/// The peer's peak resident set in bytes.
fn peak_rss(peer: &mut Peer) -> Result<f64, String> {
    peer.json("rss")?["peak_rss"]
        .as_f64()
        .ok_or_else(|| "no peak_rss".to_owned())
}

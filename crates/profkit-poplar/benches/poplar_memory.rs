//! Peak memory of reading the graph profile of 16 IPUs x 1,216 tiles that `benches/poplar.rs`
//! times, against the size of the file.
//!
//! A counting global allocator records the peak of live heap bytes; each measurement runs in a
//! fresh child process (this binary re-run with `--measure`), which also reports its peak
//! resident set (`VmHWM`). Modes: `stream` reads the file through `read_file` (what `profkit`
//! does: a fixed buffer of the text at a time); `slice` reads the whole file into memory, then
//! parses it with `from_slice`; `value` parses the bytes in memory into serde_json's `Value`, for
//! comparison. Each reports the heap the typed profile keeps once read.
//!
//! `cargo bench -p profkit-poplar --bench poplar_memory`; without `--bench` it runs on the smoke
//! data set.

use std::hint::black_box;
use std::path::Path;

use profkit_bench::alloc::{self, Counting};
use profkit_bench::child;
use profkit_poplar::GraphProfile;

mod common;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// In a child: one measurement, printed as `key=value` words.
fn measure(mode: &str, path: &Path) -> Result<(), String> {
    let base = alloc::live();
    // What the result keeps: the heap live once it is read, the text it was read from freed.
    let kept = || alloc::live().saturating_sub(base);
    let (kept, peak) = alloc::measure(|| -> Result<usize, String> {
        Ok(match mode {
            "stream" => {
                let g: GraphProfile = profkit_poplar::read_file(path).map_err(|e| e.to_string())?;
                black_box(&g);
                kept()
            }
            "slice" => {
                let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
                let g: GraphProfile =
                    profkit_poplar::from_slice(&bytes).map_err(|e| e.to_string())?;
                drop(bytes);
                black_box(&g);
                kept()
            }
            "value" => {
                let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
                let v: serde_json::Value =
                    serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
                drop(bytes);
                black_box(&v);
                kept()
            }
            other => return Err(format!("unknown mode {other}")),
        })
    });
    child::print(&[
        ("heap_peak", peak as u64),
        ("kept", kept? as u64),
        ("vm_hwm", alloc::vm_hwm().unwrap_or(0)),
    ]);
    Ok(())
}

fn main() -> Result<(), String> {
    if let Some(args) = child::mode_and_file() {
        let (mode, path) = args?;
        return measure(&mode, &path);
    }
    let (stem, sizes) = if profkit_bench::bench_mode() {
        ("poplar_graph_16ipu", common::FULL)
    } else {
        ("poplar_graph_smoke", common::SMOKE)
    };
    let path = common::prepare(stem, sizes).map_err(|e| e.to_string())?;
    let size = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
    let mb = |b: u64| b as f64 / 1e6;
    println!("data: {} ({:.1} MB)", path.display(), mb(size));
    println!(
        "  {:<34} {:>14} {:>10} {:>14} {:>10} {:>14}",
        "", "heap peak (MB)", "x file", "VmHWM (MB)", "x file", "kept (MB)"
    );
    let mut results = serde_json::json!({ "bytes": size });
    for (mode, what) in [
        ("stream", "read_file (typed, streaming)"),
        ("slice", "fs::read + from_slice (typed)"),
        ("value", "fs::read + serde_json Value"),
    ] {
        let figures = child::run_mode(mode, &path)?;
        let [peak, kept, hwm] = ["heap_peak", "kept", "vm_hwm"].map(|k| child::figure(&figures, k));
        let (peak, kept, hwm) = (peak?, kept?, hwm?);
        println!(
            "  {what:<34} {:>14.1} {:>10.2} {:>14.1} {:>10.2} {:>14.1}",
            mb(peak),
            peak as f64 / size as f64,
            mb(hwm),
            hwm as f64 / size as f64,
            mb(kept)
        );
        results[mode] = serde_json::json!({ "heap_peak": peak, "kept": kept, "vm_hwm": hwm });
    }
    profkit_bench::paths::write_results("poplar_memory.results.json", &results);
    Ok(())
}

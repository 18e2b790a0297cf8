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

// The counting allocator must implement `GlobalAlloc`, an unsafe trait; this bench binary is one
// of the few places outside the C ABI crate that does, and the library still forbids unsafe.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use profkit_poplar::GraphProfile;

mod common;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so `System`'s
// guarantees are ours; the counting touches only atomics and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, which we pass on.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (through us) with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout` and `new_size` is valid for it.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            // Counted as the new size only: a realloc holds both copies for an instant at most.
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The process's peak resident set in bytes (`VmHWM`).
fn vm_hwm() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// In a child: one measurement, printed as `key=value` words.
fn child(mode: &str, path: &Path) -> Result<(), String> {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let kept = match mode {
        "stream" => {
            let g: GraphProfile = profkit_poplar::read_file(path).map_err(|e| e.to_string())?;
            let kept = LIVE.load(Ordering::Relaxed) - base;
            std::hint::black_box(&g);
            kept
        }
        "slice" => {
            let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
            let g: GraphProfile = profkit_poplar::from_slice(&bytes).map_err(|e| e.to_string())?;
            drop(bytes);
            let kept = LIVE.load(Ordering::Relaxed) - base;
            std::hint::black_box(&g);
            kept
        }
        "value" => {
            let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
            let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            drop(bytes);
            let kept = LIVE.load(Ordering::Relaxed) - base;
            std::hint::black_box(&v);
            kept
        }
        other => return Err(format!("unknown mode {other}")),
    };
    let peak = PEAK.load(Ordering::Relaxed) - base;
    println!("heap_peak={peak} kept={kept} vm_hwm={}", vm_hwm());
    Ok(())
}

fn run_child(mode: &str, path: &Path) -> Result<[u64; 3], String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["--measure", mode])
        .arg(path)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!(
            "{mode}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let field = |key: &str| -> Result<u64, String> {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
            .ok_or_else(|| format!("no {key} in {text:?}"))
    };
    Ok([field("heap_peak")?, field("kept")?, field("vm_hwm")?])
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--measure") {
        let mode = args.get(i + 1).ok_or("--measure needs a mode")?;
        let path = args.get(i + 2).ok_or("--measure needs a file")?;
        return child(mode, Path::new(path));
    }
    let (stem, sizes) = if common::bench_mode() {
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
        let [peak, kept, hwm] = run_child(mode, &path)?;
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
    let out = common::data_dir().join("poplar_memory.results.json");
    std::fs::write(&out, format!("{results:#}\n")).map_err(|e| e.to_string())?;
    println!("  results written to {}", out.display());
    Ok(())
}

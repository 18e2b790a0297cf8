//! Peak memory of the streaming reader against decoding the whole file, on the XSpace of one
//! million events that `benches/xspace.rs` times.
//!
//! A counting global allocator records the peak of live heap bytes. Each measurement runs in a
//! fresh child process (this binary re-run with `--measure`) so that the generator's memory and
//! earlier measurements cannot raise it, and the child's `VmHWM` (peak resident set) is reported
//! as a check at the level of the OS. To show that streaming memory follows the largest plane and
//! not the file, it also streams a file holding the same planes twice: twice the bytes, the same
//! largest plane.
//!
//! `cargo bench -p profkit-xplane --bench stream_memory`; without `--bench` (as under
//! `cargo test --benches`) it runs on 10,000 events.

// The counting allocator must implement `GlobalAlloc`, an unsafe trait; this bench binary is the
// only place outside the C ABI crate that does, and every library crate still forbids unsafe.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use profkit_xplane::xview::{XPlaneView, XSpaceView, read_file_bytes};
use profkit_xplane::{
    RawSpaceItem, ReadOptions, XSpace, XSpaceReader, decode_plane, encode, read_file,
};

mod common;
use common::{Dataset, FULL_EVENTS, SMOKE_EVENTS};

/// Counts live heap bytes (as requested by callers, not as rounded by the system allocator) and
/// their peak.
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
        // SAFETY: the caller upholds `alloc`'s contract (non-zero size), which we pass on.
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
        // SAFETY: `ptr` was allocated by `System` (through us) with `layout`, as the caller
        // guarantees.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout` and `new_size` is valid for it, as the
        // caller guarantees.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            // Counted as the new size only: large blocks are moved by remapping pages, without
            // holding old and new copies at once.
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

/// Heap bytes at the start of a measurement and their peak during it.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

/// The process's peak resident set in bytes (`VmHWM`), where `/proc` has it.
fn vm_hwm() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// In a child process: one measurement of `mode` on `path`, printed as `key=value` words.
fn child(mode: &str, path: &Path) -> Result<(), String> {
    let (events, peak) = match mode {
        "stream" => measure(|| -> Result<u64, String> {
            let file = File::open(path).map_err(|e| e.to_string())?;
            let mut events = 0;
            for plane in XSpaceReader::new(file, ReadOptions::default()).planes() {
                events += common::plane_events(&plane.map_err(|e| e.to_string())?);
            }
            Ok(events)
        }),
        "whole" => measure(|| -> Result<u64, String> {
            let space = read_file(path, ReadOptions::default()).map_err(|e| e.to_string())?;
            Ok(common::count_events(&space))
        }),
        "stream_views" => measure(|| -> Result<u64, String> {
            let file = File::open(path).map_err(|e| e.to_string())?;
            let mut reader = XSpaceReader::new(file, ReadOptions::default());
            let mut events = 0;
            while let Some(item) = reader.next_raw() {
                if let RawSpaceItem::Plane(plane) = item.map_err(|e| e.to_string())? {
                    let view = plane.view().map_err(|e| e.to_string())?;
                    events += view_events(&view)?;
                }
            }
            Ok(events)
        }),
        "view_whole" => measure(|| -> Result<u64, String> {
            let bytes = read_file_bytes(path, ReadOptions::default()).map_err(|e| e.to_string())?;
            let view = XSpaceView::new(&bytes).map_err(|e| e.to_string())?;
            let mut events = 0;
            for plane in view.planes() {
                events += view_events(&plane.map_err(|e| e.to_string())?)?;
            }
            Ok(events)
        }),
        other => return Err(format!("unknown mode {other}")),
    };
    let events = events?;
    println!(
        "events={events} heap_peak={peak} vm_hwm={}",
        vm_hwm().unwrap_or(0)
    );
    Ok(())
}

/// Events of a viewed plane, every stat walked too.
fn view_events(plane: &XPlaneView<'_>) -> Result<u64, String> {
    let mut events = 0;
    plane.metadata().map_err(|e| e.to_string())?;
    for line in plane.lines() {
        for event in line.map_err(|e| e.to_string())?.events() {
            for stat in event.map_err(|e| e.to_string())?.stats() {
                stat.map_err(|e| e.to_string())?;
            }
            events += 1;
        }
    }
    Ok(events)
}

struct Measured {
    events: u64,
    heap_peak: u64,
    vm_hwm: u64,
}

fn run_child(mode: &str, path: &Path) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .arg("--measure")
        .arg(mode)
        .arg(path)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{mode} on {}: {}{}",
            path.display(),
            text,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let field = |key: &str| -> Result<u64, String> {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
            .ok_or_else(|| format!("no {key} in {text:?}"))
    };
    Ok(Measured {
        events: field("events")?,
        heap_peak: field("heap_peak")?,
        vm_hwm: field("vm_hwm")?,
    })
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--measure") {
        let mode = args.get(i + 1).ok_or("--measure needs a mode")?;
        let path = args.get(i + 2).ok_or("--measure needs a file")?;
        return child(mode, Path::new(path));
    }

    let (events, stem) = if common::bench_mode() {
        (FULL_EVENTS, "xspace_1m")
    } else {
        (SMOKE_EVENTS, "xspace_smoke")
    };
    let data = Dataset::prepare(events, stem).map_err(|e| e.to_string())?;
    let largest = data.largest_plane_bytes() as u64;

    // The heap a decoded copy of the largest plane holds, to set the streaming peak against.
    let largest_index = {
        use prost::Message;
        (0..data.space.planes.len())
            .max_by_key(|&i| data.space.planes.get(i).map_or(0, Message::encoded_len))
            .unwrap_or(0)
    };
    let plane_bytes = data
        .space
        .planes
        .get(largest_index)
        .map(prost::Message::encode_to_vec)
        .unwrap_or_default();
    let plane_bytes = bytes::Bytes::from(plane_bytes);
    let (decoded, _) = measure(|| {
        let before = LIVE.load(Ordering::Relaxed);
        let plane = decode_plane(plane_bytes.clone());
        (LIVE.load(Ordering::Relaxed).saturating_sub(before), plane)
    });
    let (decoded_plane_heap, plane) = decoded;
    plane.map_err(|e| e.to_string())?;

    // The same planes twice: the file doubles, the largest plane does not.
    let doubled = XSpace {
        planes: data
            .space
            .planes
            .iter()
            .chain(&data.space.planes)
            .cloned()
            .collect(),
        ..data.space.clone()
    };
    let doubled_path = common::data_dir().join(format!("{stem}_x2.xplane.pb"));
    let doubled_bytes = encode(&doubled);
    std::fs::write(&doubled_path, &doubled_bytes).map_err(|e| e.to_string())?;
    drop(doubled);

    println!(
        "data: {} ({} bytes, {} events, {} planes)",
        data.path.display(),
        data.bytes.len(),
        data.events,
        data.space.planes.len()
    );
    println!(
        "decoded sizes: XEvent {} bytes, XStat {} bytes (a Vec<XStat> grown by push holds 4)",
        std::mem::size_of::<profkit_xplane::XEvent>(),
        std::mem::size_of::<profkit_xplane::XStat>()
    );
    println!(
        "largest plane: {} bytes encoded ({:.1} MB), {} bytes of heap decoded ({:.1} MB)",
        largest,
        mb(largest),
        decoded_plane_heap,
        mb(decoded_plane_heap as u64)
    );
    println!(
        "\n  {:<44} {:>10} {:>14} {:>14} {:>10}",
        "measurement", "events", "heap peak MB", "VmHWM MB", "file MB"
    );
    let cases = [
        (
            "stream planes (XSpaceReader over File)",
            "stream",
            &data.path,
            data.bytes.len(),
        ),
        (
            "decode whole (read_file)",
            "whole",
            &data.path,
            data.bytes.len(),
        ),
        (
            "stream plane views (next_raw, PlaneBytes::view)",
            "stream_views",
            &data.path,
            data.bytes.len(),
        ),
        (
            "view whole (read_file_bytes, XSpaceView)",
            "view_whole",
            &data.path,
            data.bytes.len(),
        ),
        (
            "stream planes, same planes twice",
            "stream",
            &doubled_path,
            doubled_bytes.len(),
        ),
        (
            "decode whole, same planes twice",
            "whole",
            &doubled_path,
            doubled_bytes.len(),
        ),
    ];
    let mut results = Vec::new();
    for (what, mode, path, size) in cases {
        let m = run_child(mode, path)?;
        println!(
            "  {what:<44} {:>10} {:>14.1} {:>14.1} {:>10.1}",
            m.events,
            mb(m.heap_peak),
            mb(m.vm_hwm),
            mb(size as u64)
        );
        results.push((what, m, size));
    }
    if let [(_, stream, _), (_, whole, _), _, _, (_, stream2, _), ..] = &results[..] {
        println!(
            "\n  streaming peak = {:.2}x the largest plane's encoded size, {:.2}x (encoded + decoded plane);",
            stream.heap_peak as f64 / largest as f64,
            stream.heap_peak as f64 / (largest as f64 + decoded_plane_heap as f64),
        );
        println!(
            "  {:.1}% of decoding whole; with the file doubled it goes from {:.1} MB to {:.1} MB",
            100.0 * stream.heap_peak as f64 / whole.heap_peak as f64,
            mb(stream.heap_peak),
            mb(stream2.heap_peak)
        );
    }
    Ok(())
}

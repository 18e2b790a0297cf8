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

use std::fs::File;
use std::path::Path;

use profkit_bench::alloc::{self, Counting, measure};
use profkit_bench::child;
use profkit_xplane::xview::{XPlaneView, XSpaceView, read_file_bytes};
use profkit_xplane::{
    RawSpaceItem, ReadOptions, XSpace, XSpaceReader, decode_plane, encode, read_file,
};

mod common;
use common::{Dataset, FULL_EVENTS, SMOKE_EVENTS};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// In a child process: one measurement of `mode` on `path`, printed as `key=value` words.
fn measure_one(mode: &str, path: &Path) -> Result<(), String> {
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
    child::print(&[
        ("events", events?),
        ("heap_peak", peak as u64),
        ("vm_hwm", alloc::vm_hwm().unwrap_or(0)),
    ]);
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
    let figures = child::run_mode(mode, path)?;
    Ok(Measured {
        events: child::figure(&figures, "events")?,
        heap_peak: child::figure(&figures, "heap_peak")?,
        vm_hwm: child::figure(&figures, "vm_hwm")?,
    })
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn main() -> Result<(), String> {
    if let Some(args) = child::mode_and_file() {
        let (mode, path) = args?;
        return measure_one(&mode, &path);
    }

    let (events, stem) = if profkit_bench::bench_mode() {
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
        let before = alloc::live();
        let plane = decode_plane(plane_bytes.clone());
        (alloc::live().saturating_sub(before), plane)
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
    let doubled_path = profkit_bench::paths::data_dir().join(format!("{stem}_x2.xplane.pb"));
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

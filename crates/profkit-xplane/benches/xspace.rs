//! Decode, encode and streaming throughput on a generated XSpace of one million events with two
//! stats each, next to Python protobuf (upb) parsing the same file in the same run.
//!
//! `cargo bench -p profkit-xplane --bench xspace` runs criterion (MB/s and events/s for each
//! benchmark), then times our decode and encode and upb's parse and serialize the same way (runs
//! from memory, in turn, each result freed outside the timed region; best and median) and prints
//! the comparison. The peer runs `benches/upb_parse.py` with `$PROFKIT_PYTHON`, or else
//! `.oracle/xprof/bin/python` under the workspace root; without either it is skipped with a note.
//! No figure here is a pass/fail threshold: docs/performance.md records them.
//!
//! Without `--bench` (as under `cargo test --benches`) it is a smoke test on 10,000 events.

use std::ffi::OsStr;
use std::fs::File;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, SamplingMode, Throughput};
use profkit_bench::paths;
use profkit_bench::peer::{self, Peer};
use profkit_bench::timing::{Timings, loadavg, time_once};
use profkit_xplane::xview::{StatValueView, XSpaceView};
use profkit_xplane::{ReadOptions, XSpaceReader, decode, encode, read_file};

mod common;
use common::{Dataset, FULL_EVENTS, SMOKE_EVENTS};

/// Runs of each side in the peer comparison.
const PEER_RUNS: usize = 10;

/// What the notes about the peer call it.
const PEER: &str = "Python upb peer";

fn main() {
    let bench = profkit_bench::bench_mode();
    let (events, stem) = if bench {
        (FULL_EVENTS, "xspace_1m")
    } else {
        (SMOKE_EVENTS, "xspace_smoke")
    };
    let data = match Dataset::prepare(events, stem) {
        Ok(data) => data,
        Err(e) => {
            eprintln!(
                "cannot write the benchmark data under {}: {e}",
                paths::data_dir().display()
            );
            std::process::exit(1);
        }
    };
    println!(
        "data: {} ({} bytes, {} events, {} planes, largest plane {} bytes)",
        data.path.display(),
        data.bytes.len(),
        data.events,
        data.space.planes.len(),
        data.largest_plane_bytes()
    );

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    benches(&mut criterion, &data, stem);
    criterion.final_summary();

    // Under `--profile-time` criterion runs for a profiler, which wants only the benchmark.
    if bench && !std::env::args().any(|a| a.starts_with("--profile-time")) {
        peer_comparison(&data, stem);
    }
}

fn benches(c: &mut Criterion, data: &Dataset, stem: &str) {
    let mut group = c.benchmark_group(stem);
    // One iteration takes tenths of a second: flat sampling keeps the run short.
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::ElementsAndBytes {
        elements: data.events,
        bytes: data.bytes.len() as u64,
    });

    let input = Bytes::from(data.bytes.clone());
    group.bench_function("decode", |b| {
        b.iter_with_large_drop(|| decode(black_box(input.clone())).map_err(|e| e.to_string()))
    });
    group.bench_function("view_walk", |b| b.iter(|| walk(black_box(&data.bytes))));
    group.bench_function("view_materialise", |b| {
        b.iter_with_large_drop(|| materialise(black_box(&data.bytes)))
    });
    group.bench_function("encode", |b| b.iter(|| encode(black_box(&data.space))));
    group.bench_function("read_file", |b| {
        b.iter_with_large_drop(|| {
            read_file(black_box(&data.path), ReadOptions::default()).map_err(|e| e.to_string())
        })
    });
    group.bench_function("stream_planes", |b| {
        b.iter(|| {
            let file = File::open(black_box(&data.path)).map_err(|e| e.to_string())?;
            let mut events = 0;
            for plane in XSpaceReader::new(file, ReadOptions::default()).planes() {
                events += common::plane_events(&plane.map_err(|e| e.to_string())?);
            }
            Ok::<u64, String>(events)
        })
    });
    group.finish();
}

/// A full walk of a view: every plane, line, event and stat, each field read, event names
/// resolved through the plane's metadata index. Returns what it counted and a checksum, so that
/// nothing is optimised away.
fn walk(bytes: &[u8]) -> Result<(u64, u64, i64), String> {
    let view = XSpaceView::new(bytes).map_err(|e| e.to_string())?;
    let (mut events, mut stats, mut sum) = (0u64, 0u64, 0i64);
    for plane in view.planes() {
        let plane = plane.map_err(|e| e.to_string())?;
        let metadata = plane.metadata().map_err(|e| e.to_string())?;
        for line in plane.lines() {
            let line = line.map_err(|e| e.to_string())?;
            sum = sum.wrapping_add(line.timestamp_ns());
            for event in line.events() {
                let event = event.map_err(|e| e.to_string())?;
                events += 1;
                sum = sum
                    .wrapping_add(event.offset_ps())
                    .wrapping_add(event.duration_ps())
                    .wrapping_add(metadata.event_name(event.metadata_id()).len() as i64);
                for stat in event.stats() {
                    let stat = stat.map_err(|e| e.to_string())?;
                    stats += 1;
                    let value = match stat.value() {
                        Some(StatValueView::Int64(v)) => v,
                        Some(StatValueView::Uint64(v) | StatValueView::Ref(v)) => v as i64,
                        Some(StatValueView::Double(v)) => v as i64,
                        Some(StatValueView::Str(v)) => v.len() as i64,
                        Some(StatValueView::Bytes(v)) => v.len() as i64,
                        None => 0,
                    };
                    sum = sum.wrapping_add(stat.metadata_id()).wrapping_add(value);
                }
            }
        }
    }
    Ok((events, stats, sum))
}

/// The owned XSpace built from a view (what `decode` builds with prost).
fn materialise(bytes: &[u8]) -> Result<profkit_xplane::XSpace, String> {
    XSpaceView::new(bytes)
        .and_then(|view| view.to_owned_space())
        .map_err(|e| e.to_string())
}

/// Times our decode and encode against upb's parse and serialize of the same file, one run of
/// each in turn, so that load from elsewhere on the machine falls on both sides alike.
fn peer_comparison(data: &Dataset, stem: &str) {
    let size = data.bytes.len() as f64;
    let events = data.events as f64;
    let line = |what: &str, t: &Timings| {
        let ((best, median), (cpu_best, cpu_median)) = (t.wall(), t.cpu());
        println!(
            "  {what:<22} {:>7.1} {:>7.1} {:>7.1} {:>7.1}   {:>6.1} MB/s  {:>5.2} M events/s",
            best * 1e3,
            median * 1e3,
            cpu_best * 1e3,
            cpu_median * 1e3,
            size / best / 1e6,
            events / best / 1e6
        );
    };
    println!(
        "\npeer comparison: {} ({} bytes, {} events), {PEER_RUNS} alternating runs from memory",
        data.path.display(),
        data.bytes.len(),
        data.events
    );

    let load_before = loadavg();
    let mut peer = peer::or_skip_as(PEER, start_peer(data));
    let input = Bytes::from(data.bytes.clone());
    let [mut decode_t, mut encode_t, mut parse_t, mut serialize_t] = <[Timings; 4]>::default();
    let [mut walk_t, mut materialise_t] = <[Timings; 2]>::default();
    for _ in 0..PEER_RUNS {
        walk_t.push(time_once(|| walk(&data.bytes)));
        materialise_t.push(time_once(|| materialise(&data.bytes)));
        decode_t.push(time_once(|| {
            decode(input.clone()).map_err(|e| e.to_string())
        }));
        encode_t.push(time_once(|| encode(&data.space)));
        if let Some((parse, serialize)) = peer::ask_or_drop_as(PEER, &mut peer, |p| {
            Ok((p.wall_cpu("parse")?, p.wall_cpu("serialize")?))
        }) {
            parse_t.push(parse);
            serialize_t.push(serialize);
        }
    }
    println!(
        "  {:<22} {:>7} {:>7} {:>7} {:>7}   (throughput from the best wall time)",
        "ms:", "best", "median", "cpu.bst", "cpu.med"
    );
    line("profkit view walk", &walk_t);
    line("profkit materialise", &materialise_t);
    line("profkit decode", &decode_t);
    line("profkit encode", &encode_t);

    let mut results = serde_json::json!({
        "file": data.path.display().to_string(),
        "bytes": data.bytes.len(),
        "events": data.events,
        "runs": PEER_RUNS,
        "profkit_view_walk": walk_t.json(),
        "profkit_view_materialise": materialise_t.json(),
        "profkit_decode": decode_t.json(),
        "profkit_encode": encode_t.json(),
    });
    if let Some(p) = peer {
        let text = |key: &str| {
            p.header
                .get(key)
                .and_then(|v| v.as_str())
                .unwrap_or("?")
                .to_owned()
        };
        line("upb parse", &parse_t);
        line("upb serialize", &serialize_t);
        println!(
            "  (Python {}, protobuf {} on {}; the peer counted {} events)",
            text("python_version"),
            text("protobuf_version"),
            text("implementation"),
            p.header
                .get("events")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        );
        let (decode_wall, parse_wall) = (decode_t.wall(), parse_t.wall());
        let (decode_cpu, parse_cpu) = (decode_t.cpu(), parse_t.cpu());
        let verdict = if decode_wall.0 <= parse_wall.0 {
            "at least as fast as"
        } else {
            "SLOWER than"
        };
        println!(
            "  profkit decode is {verdict} upb's parse: {:.2}x its speed by best wall time, {:.2}x by \
             median; {:.2}x and {:.2}x by CPU time",
            parse_wall.0 / decode_wall.0,
            parse_wall.1 / decode_wall.1,
            parse_cpu.0 / decode_cpu.0,
            parse_cpu.1 / decode_cpu.1
        );
        for (what, t) in [("view walk", &walk_t), ("materialise", &materialise_t)] {
            println!(
                "  profkit {what} is {:.2}x the speed of upb's parse by best wall time, {:.2}x by median; \
                 {:.2}x and {:.2}x by CPU time",
                parse_wall.0 / t.wall().0,
                parse_wall.1 / t.wall().1,
                parse_cpu.0 / t.cpu().0,
                parse_cpu.1 / t.cpu().1
            );
        }
        println!(
            "  profkit encode is {:.2}x the speed of upb's serialize by best wall time, {:.2}x by median",
            serialize_t.wall().0 / encode_t.wall().0,
            serialize_t.wall().1 / encode_t.wall().1
        );
        results["upb"] = p.header.clone();
        results["upb_parse"] = parse_t.json();
        results["upb_serialize"] = serialize_t.json();
    }
    // Other work on the machine is what spreads the timings; keep it with the figures.
    results["loadavg_before"] = load_before.into();
    results["loadavg_after"] = loadavg().into();

    paths::write_results(&format!("{stem}.results.json"), &results);
}

/// `benches/upb_parse.py --serve` under the interpreter with the protobuf wheel
/// (`$PROFKIT_PYTHON`, else the oracle venv), once it has counted the same events as ours; it
/// answers `parse` and `serialize` with the (wall, CPU) seconds of one run.
fn start_peer(data: &Dataset) -> Result<Peer, String> {
    let python = peer::python("xprof").ok_or(
        "no $PROFKIT_PYTHON and no .oracle/xprof/bin/python (docs/performance.md says how to create it)",
    )?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/upb_parse.py");
    let args = [
        OsStr::new("--descriptor-set"),
        data.descriptor_set_path.as_os_str(),
        OsStr::new("--data"),
        data.path.as_os_str(),
    ];
    let peer = Peer::start(&python, &script, &args)?;
    if peer
        .header
        .get("events")
        .and_then(serde_json::Value::as_u64)
        != Some(data.events)
    {
        return Err(format!(
            "the peer counted a different number of events: {}",
            peer.header
        ));
    }
    Ok(peer)
}

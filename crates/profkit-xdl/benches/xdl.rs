//! Read and write throughput of XDL datasets, next to the original reader's Python script (from the XDL Trace page) on the same
//! files in the same run.
//!
//! Two datasets, written by our writer under `target/bench-data/xdl/`:
//! - `large`: 32 records, each a 4 MiB `Float` tensor of shape [1024, 1024] and a `Double` scalar
//!   (128 MiB in one data file);
//! - `tiny`: 100,000 records of three small columns (a `Double` scalar, an `Int64` scalar and a
//!   `Float` vector of 4), about 6.6 MB.
//!
//! `cargo bench -p profkit-xdl --bench xdl` runs criterion (MB/s and records/s) for reading (the
//! dataset reader, every column read as its typed slice, as the original script makes NumPy arrays)
//! and writing (our writer: encode, queue, IO thread, files and metas), then times, in alternating
//! runs, our read, the original script (`benches/xdl_read.py` under `$PROFKIT_PYTHON`, else
//! `.oracle/bench/bin/python`; skipped with a note without one), and two references for the memory
//! bandwidth of this machine: reading the files into memory with `std::fs::read`, and copying that
//! many bytes in memory. No figure is a threshold; docs/performance.md records them.
//!
//! Without `--bench` (as under `cargo test --benches`) it is a smoke test on small datasets.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput};
use profkit_bench::paths::data_dir;
use profkit_bench::peer::{self, Peer};
use profkit_bench::timing::{best_median, time_once};
use profkit_xdl::{Column, DType, DatasetWriter, ReadOptions, Record, WriterOptions, discover};

/// Runs of each side in the peer comparison.
const PEER_RUNS: usize = 5;

/// One benchmark dataset.
struct Data {
    name: &'static str,
    dir: PathBuf,
    keys: Vec<String>,
    records: Vec<Record>,
    /// Bytes of the data files.
    bytes: u64,
    /// Elements over all columns of all records.
    elements: u64,
}

fn large_records(n: usize) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let values: Vec<f32> = (0..1024 * 1024).map(|k| (k ^ i) as f32 * 0.001).collect();
            let w = Column::tensor(&[1024, 1024], &values).unwrap_or_default();
            Record::new(
                1000 + i as i64,
                i as i64 + 1,
                1_700_000_000_000 + i as i64,
                vec![w, Column::scalar(i as f64)],
            )
        })
        .collect()
}

fn tiny_records(n: usize) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let acc = Column::vector(&[i as f32, 0.5, 0.25, 1.0]).unwrap_or_default();
            Record::new(
                i as i64,
                i as i64 + 1,
                1_700_000_000_000 + i as i64,
                vec![
                    Column::scalar(1.0 / (i + 1) as f64),
                    Column::scalar(i as i64),
                    acc,
                ],
            )
        })
        .collect()
}

fn elements(records: &[Record]) -> u64 {
    records
        .iter()
        .flat_map(|r| &r.column)
        .map(|c| c.element_count().unwrap_or(0))
        .sum()
}

/// Writes the dataset with our writer (300 MB files, the original's default).
fn write(dir: &Path, keys: &[String], records: &[Record]) -> Result<u64, profkit_xdl::Error> {
    let mut writer = DatasetWriter::create(
        WriterOptions::new(dir).overwrite(true),
        keys.iter().cloned(),
    )?;
    for r in records {
        writer.write_record(r.clone())?;
    }
    Ok(writer.finish()?.bytes)
}

fn prepare(name: &'static str, keys: &[&str], records: Vec<Record>) -> Data {
    let dir = data_dir().join("xdl").join(name);
    let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let bytes = write(&dir, &keys, &records)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", dir.display()));
    Data {
        name,
        dir,
        elements: elements(&records),
        keys,
        records,
        bytes,
    }
}

/// Reads every record of the dataset and every column as its typed slice; returns the elements.
fn read(dir: &Path) -> Result<u64, profkit_xdl::Error> {
    let mut elements = 0u64;
    for dataset in discover(dir)? {
        for record in dataset.records(ReadOptions::default()) {
            for column in &record?.column {
                elements += match column.try_dtype()? {
                    DType::Int8 => black_box(column.values::<i8>()?).len(),
                    DType::Int16 => black_box(column.values::<i16>()?).len(),
                    DType::Int32 => black_box(column.values::<i32>()?).len(),
                    DType::Int64 => black_box(column.values::<i64>()?).len(),
                    DType::Float => black_box(column.values::<f32>()?).len(),
                    DType::Double => black_box(column.values::<f64>()?).len(),
                    DType::Bool => black_box(column.values::<bool>()?).len(),
                    DType::Byte => black_box(column.values::<u8>()?).len(),
                } as u64;
            }
        }
    }
    Ok(elements)
}

/// Reads every record, decoding it, without typed access to the columns (which may copy).
fn decode_only(dir: &Path) -> Result<u64, profkit_xdl::Error> {
    let mut bytes = 0u64;
    for dataset in discover(dir)? {
        for record in dataset.records(ReadOptions::default()) {
            bytes += record?
                .column
                .iter()
                .map(|c| black_box(c.data.len()) as u64)
                .sum::<u64>();
        }
    }
    Ok(bytes)
}

fn main() {
    let bench = profkit_bench::bench_mode();
    let (large_n, tiny_n, suffix) = if bench {
        (32, 100_000, "")
    } else {
        (2, 1_000, "-smoke")
    };
    let datasets = [
        prepare(
            if bench { "large" } else { "large-smoke" },
            &["fc/weight", "loss"],
            large_records(large_n),
        ),
        prepare(
            if bench { "tiny" } else { "tiny-smoke" },
            &["loss", "step", "accuracy"],
            tiny_records(tiny_n),
        ),
    ];
    for d in &datasets {
        println!(
            "data {}: {} ({} records, {} bytes, {} elements)",
            d.name,
            d.dir.display(),
            d.records.len(),
            d.bytes,
            d.elements
        );
        assert_eq!(
            read(&d.dir).ok(),
            Some(d.elements),
            "reading back {} gives other elements",
            d.name
        );
    }

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    for d in &datasets {
        let mut group = criterion.benchmark_group(format!("xdl_{}", d.name));
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::BytesDecimal(d.bytes));
        group.bench_function("read", |b| {
            b.iter(|| read(black_box(&d.dir)).map_err(|e| e.to_string()))
        });
        group.bench_function("read_decode_only", |b| {
            b.iter(|| decode_only(black_box(&d.dir)).map_err(|e| e.to_string()))
        });
        let out = data_dir()
            .join("xdl")
            .join(format!("{}-write{suffix}", d.name));
        group.bench_function("write", |b| {
            b.iter(|| write(black_box(&out), &d.keys, &d.records).map_err(|e| e.to_string()))
        });
        group.finish();
    }
    criterion.final_summary();

    if bench && !std::env::args().any(|a| a.starts_with("--profile-time")) {
        peer_comparison(&datasets);
    }
}

/// Our read, the original script, and the bandwidth references, one run of each in turn.
fn peer_comparison(datasets: &[Data]) {
    println!(
        "\npeer comparison: {PEER_RUNS} alternating runs per dataset, files in the page cache"
    );
    let mut peer = peer::or_skip(start_peer(datasets));
    let mut results = serde_json::json!({ "runs": PEER_RUNS });
    for d in datasets {
        let files: Vec<PathBuf> = discover(&d.dir)
            .map(|ds| {
                ds.iter()
                    .flat_map(|x| {
                        x.data_files()
                            .map(|(_, p)| p.to_path_buf())
                            .collect::<Vec<_>>()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let buffer = vec![1u8; d.bytes as usize];
        let mut target = vec![0u8; d.bytes as usize];
        let mut times: [Vec<f64>; 5] = Default::default();
        for _ in 0..PEER_RUNS {
            times[0].push(wall(|| read(&d.dir).map_err(|e| e.to_string())));
            times[1].push(wall(|| decode_only(&d.dir).map_err(|e| e.to_string())));
            times[2].push(wall(|| {
                files
                    .iter()
                    .map(|f| std::fs::read(f).map(|b| b.len()).unwrap_or(0))
                    .sum::<usize>()
            }));
            times[3].push(wall(|| {
                target.copy_from_slice(black_box(&buffer));
                black_box(target.last().copied())
            }));
            if let Some(t) = peer::ask_or_drop(&mut peer, |p| time(p, d.name)) {
                times[4].push(t);
            }
        }
        let [ours, decode, fs_read, memcpy, python] = times.map(|t| best_median(&t));
        let size = d.bytes as f64;
        let records = d.records.len() as f64;
        let line = |what: &str, (best, median): (f64, f64)| {
            if best.is_finite() {
                println!(
                    "  {:<6} {what:<34} best {:>8.2} ms  median {:>8.2} ms  {:>8.0} MB/s  {:>6.2} M records/s",
                    d.name,
                    best * 1e3,
                    median * 1e3,
                    size / best / 1e6,
                    records / best / 1e6
                );
            }
        };
        line("profkit read (typed columns)", ours);
        line("profkit read (decode only)", decode);
        line("std::fs::read of the files", fs_read);
        line("memcpy of as many bytes", memcpy);
        line("original Python script (upb, NumPy)", python);
        if python.0.is_finite() {
            println!(
                "  {:<6} profkit read is {:.1}x the speed of the original script (best)",
                d.name,
                python.0 / ours.0
            );
        }
        results[d.name] = serde_json::json!({
            "bytes": d.bytes,
            "records": d.records.len(),
            "profkit_read_best_s": ours.0,
            "profkit_read_median_s": ours.1,
            "profkit_decode_only_best_s": decode.0,
            "fs_read_best_s": fs_read.0,
            "memcpy_best_s": memcpy.0,
            "python_best_s": if python.0.is_finite() { serde_json::json!(python.0) } else { serde_json::Value::Null },
            "python_median_s": if python.1.is_finite() { serde_json::json!(python.1) } else { serde_json::Value::Null },
        });
    }
    if let Some(p) = &peer {
        println!(
            "  (Python {}, protobuf {} on {}, NumPy {})",
            p.header["python_version"].as_str().unwrap_or("?"),
            p.header["protobuf_version"].as_str().unwrap_or("?"),
            p.header["implementation"].as_str().unwrap_or("?"),
            p.header["numpy_version"].as_str().unwrap_or("?")
        );
        results["python"] = p.header.clone();
    }
    profkit_bench::paths::write_results("xdl.results.json", &results);
}

/// Wall-clock seconds of one run of `f`, its result dropped after the clock stops.
fn wall<T>(f: impl FnOnce() -> T) -> f64 {
    time_once(f).0
}

/// `benches/xdl_read.py --serve` under the bench venv's Python (protobuf and NumPy), once it has
/// read the same records as ours.
fn start_peer(datasets: &[Data]) -> Result<Peer, String> {
    let python = peer::python("bench").ok_or(
        "no $PROFKIT_PYTHON and no .oracle/bench/bin/python (docs/performance.md says how to create it)",
    )?;
    let fds = data_dir().join("xdl.fds.pb");
    std::fs::write(&fds, profkit_xdl::FILE_DESCRIPTOR_SET).map_err(|e| e.to_string())?;
    let dir = |name: &str| {
        datasets
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.dir.clone())
            .unwrap_or_default()
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/xdl_read.py");
    let args = [
        PathBuf::from("--descriptor-set"),
        fds,
        PathBuf::from("--large"),
        dir("large"),
        PathBuf::from("--tiny"),
        dir("tiny"),
    ];
    let peer = Peer::start(&python, &script, &args)?;
    for d in datasets {
        let counts = &peer.header["counts"][d.name];
        if counts["records"].as_u64() != Some(d.records.len() as u64)
            || counts["elements"].as_u64() != Some(d.elements)
        {
            return Err(format!("the peer read other data for {}: {counts}", d.name));
        }
    }
    Ok(peer)
}

/// Seconds the peer took to read the dataset `name`.
fn time(peer: &mut Peer, name: &str) -> Result<f64, String> {
    match peer.numbers(name)?[..] {
        [seconds] => Ok(seconds),
        ref other => Err(format!("peer answered {other:?}")),
    }
}

//! Chrome trace JSON to XSpace: time and peak memory of profkit's streaming import (what `profkit
//! inspect trace.json` runs) of a 1 GB PyTorch-profiler-shaped (Kineto) trace, plain and gzipped,
//! against Python's `json.load` and HolisticTraceAnalysis's parse of the same files, in the same
//! run.
//!
//! The trace is generated at bench time into `target/bench-data/kineto_1g.json` (and
//! `kineto_1g.json.gz`, gzip level 1), not committed: Kineto's layout (`schemaVersion`,
//! `deviceProperties` and `distributedInfo` before `traceEvents`, one event per line), and per
//! step a Python function, CPU ops with `External id`/`Sequence number` args, `cudaLaunchKernel`
//! runtime calls with their `correlation`, kernels on GPU 0 stream 7 with Kineto's kernel args
//! (grid and block arrays, occupancy), `ac2g` flow pairs, a memcpy and a user annotation; times
//! in microseconds with nanosecond fractions. Each measurement runs in a fresh child process (this
//! binary re-run with `--measure`), which reports its wall time, the peak of live heap bytes
//! (a counting allocator) and its peak resident set (`VmHWM`); the Python peers run in child
//! interpreters (`benches/chrome_peer.py`: `$PROFKIT_PYTHON` or `python3` for `json.load`, the
//! venv `.oracle/hta` (`HTA_VENV`) for HTA, skipped with a note when missing). Results go to
//! `target/bench-data/chrome_import.results.json`.
//!
//! `cargo bench -p profkit-chrome --bench chrome_import` (`PROFKIT_CHROME_BENCH_MB` sets the
//! size, 1000 by default); without `--bench` (as under `cargo test --benches`) it runs on 2 MB and
//! skips the peers. profkit's import is measured with each thread count of
//! `PROFKIT_CHROME_BENCH_THREADS` ("1,2" by default; the child also reports the CPU time of the
//! reader's thread alone, `main_cpu`); `PROFKIT_CHROME_BENCH_HTA=0` leaves HTA out.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use profkit_bench::alloc::{self, Counting};
use profkit_bench::bench_mode;
use profkit_bench::paths::data_dir;
use profkit_bench::timing::{process_cpu, thread_cpu};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Writes a Kineto-shaped trace of about `target` bytes; returns the number of events.
fn generate(path: &Path, target: u64) -> std::io::Result<u64> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let written = std::cell::Cell::new(0u64);
    let put = |out: &mut BufWriter<File>, text: &str| -> std::io::Result<()> {
        written.set(written.get() + text.len() as u64);
        out.write_all(text.as_bytes())
    };
    put(
        &mut out,
        "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85097971712,\n      \"computeMajor\": 8, \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 167936,\n      \"numSms\": 108, \"sharedMemPerBlockOptin\": 166912\n    }\n  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8, \"pg_count\": 1, \"pg_config\": [], \"nccl_version\": \"2.18.1\"},\n  \"record_shapes\": 1,\n  \"traceEvents\": [\n",
    )?;
    let (pid, tid) = (2_345_671u64, 2_345_671u64);
    let base: u64 = 1_712_345_678_000_000; // ns
    let mut t: u64 = 0; // ns since base
    let mut n: u64 = 0;
    let mut events: u64 = 0;
    let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
    let kernels = [
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "ampere_sgemm_128x64_tn",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
    ];
    let ops = ["aten::linear", "aten::addmm", "aten::relu", "aten::mean"];
    while written.get() < target {
        let step_start = t;
        put(
            &mut out,
            &format!(
                "  {{\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"nn.Module: Linear_{n}\", \"pid\": {pid}, \"tid\": {tid},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"Python parent id\": {}, \"Python id\": {}, \"Python module id\": 3, \"Ev Idx\": {n}\n    }}\n  }},\n",
                us(base + t),
                us(40_000),
                n,
                n + 1
            ),
        )?;
        events += 1;
        for k in 0..4u64 {
            n += 1;
            let op_start = t + 500 + k * 9_000;
            let launch = op_start + 2_000;
            let kernel_start = launch + 6_500;
            let kernel_dur = 3_000 + (n * 7919) % 20_000;
            let op = ops[(k % 4) as usize];
            let kernel = kernels[(n % 4) as usize];
            put(
                &mut out,
                &format!(
                    "  {{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{op}\", \"pid\": {pid}, \"tid\": {tid},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {n},\"Record function id\": 0, \"Sequence number\": {}, \"Fwd thread id\": 0, \"Ev Idx\": {n}\n    }}\n  }},\n",
                    us(base + op_start),
                    us(8_000),
                    n / 2
                ),
            )?;
            put(
                &mut out,
                &format!(
                    "  {{\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": {pid}, \"tid\": {tid},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {n},\n      \"cbid\": 211, \"correlation\": {n}\n    }}\n  }},\n  {{\n    \"ph\": \"s\", \"id\": {n}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }},\n",
                    us(base + launch),
                    us(4_200),
                    us(base + launch)
                ),
            )?;
            put(
                &mut out,
                &format!(
                    "  {{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{kernel}\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {n},\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": {n},\n      \"registers per thread\": 32,\n      \"shared memory\": 4096,\n      \"blocks per SM\": 0.592593,\n      \"warps per SM\": 2.370370,\n      \"grid\": [{}, 1, 1],\n      \"block\": [128, 1, 1],\n      \"est. achieved occupancy %\": 4\n    }}\n  }},\n  {{\n    \"ph\": \"f\", \"id\": {n}, \"pid\": 0, \"tid\": 7, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }},\n",
                    us(base + kernel_start),
                    us(kernel_dur),
                    64 + n % 512,
                    us(base + kernel_start)
                ),
            )?;
            events += 5;
        }
        n += 1;
        put(
            &mut out,
            &format!(
                "  {{\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> Pinned)\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {n},\n      \"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": {n},\n      \"bytes\": 4096, \"memory bandwidth (GB/s)\": 1.2\n    }}\n  }},\n  {{\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#{n}\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {n}\n    }}\n  }},\n",
                us(base + step_start + 38_000),
                us(1_500),
                us(base + step_start + 500),
                us(39_000)
            ),
        )?;
        events += 2;
        t += 41_000;
    }
    put(
        &mut out,
        &format!(
            "  {{\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\",\n    \"ts\": {}\n  }}\n],\n  \"traceName\": \"kineto_1g.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1700000000000000000\n}}\n",
            us(base + t)
        ),
    )?;
    out.flush()?;
    Ok(events + 1)
}

fn gzip(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(1 << 20, File::open(from)?);
    let mut encoder = flate2::write::GzEncoder::new(
        BufWriter::with_capacity(1 << 20, File::create(to)?),
        flate2::Compression::fast(),
    );
    std::io::copy(&mut input, &mut encoder)?;
    encoder.finish()?.flush()
}

/// In a child: one import on `threads` threads, printed as `key=value` words.
fn child(mode: &str, threads: usize, path: &Path) -> Result<(), String> {
    let options = profkit_chrome::ChromeReadOptions::default().threads(threads);
    let base = alloc::live();
    let start = Instant::now();
    let cpu_start = process_cpu();
    let main_start = thread_cpu().unwrap_or(f64::NAN);
    let (import, peak) = alloc::measure(|| {
        let file = BufReader::with_capacity(1 << 16, File::open(path).map_err(|e| e.to_string())?);
        match mode {
            "plain" => profkit_chrome::read_chrome_with(file, options),
            "gzip" => {
                profkit_chrome::read_chrome_with(flate2::read::MultiGzDecoder::new(file), options)
            }
            other => return Err(format!("unknown mode {other}")),
        }
        .map_err(|e| e.to_string())
    });
    let import = import?;
    let secs = start.elapsed().as_secs_f64();
    let cpu = process_cpu() - cpu_start;
    // The CPU time of the reader's thread alone: what the wall time would be with a core for
    // each thread and no waiting (the machine is shared, so wall times are inflated).
    let main_cpu = thread_cpu().unwrap_or(f64::NAN) - main_start;
    let kept = alloc::live().saturating_sub(base);
    let gpu_events: usize = import
        .space
        .planes
        .iter()
        .filter(|p| p.name.starts_with("/device:GPU:"))
        .flat_map(|p| &p.lines)
        .map(|l| l.events.len())
        .sum();
    println!(
        "secs={secs} cpu={cpu} main_cpu={main_cpu:.3} heap_peak={peak} kept={kept} vm_hwm={} events={} flows={} gpu_events={gpu_events}",
        alloc::vm_hwm().unwrap_or(0),
        import.events,
        import.flows
    );
    Ok(())
}

fn field(text: &str, key: &str) -> Option<f64> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

fn run_child(mode: &str, threads: usize, path: &Path) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["--measure", mode, &threads.to_string()])
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
    Ok(text)
}

/// Runs the Python peer; `None` (with a note) when its interpreter is missing or it fails.
fn run_peer(python: &Path, what: &str, path: &Path) -> Option<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/chrome_peer.py");
    let out = Command::new(python)
        .arg(&script)
        .arg(what)
        .arg(path)
        .output();
    match out {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => {
            println!(
                "  note: the {what} peer failed: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            None
        }
        Err(e) => {
            println!("  note: no {what} peer ({}): {e}", python.display());
            None
        }
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--measure") {
        let mode = args.get(i + 1).ok_or("--measure needs a mode")?;
        let threads = args
            .get(i + 2)
            .and_then(|t| t.parse().ok())
            .ok_or("--measure needs a thread count")?;
        let path = args.get(i + 3).ok_or("--measure needs a file")?;
        return child(mode, threads, Path::new(path));
    }
    let full = bench_mode();
    let mb: u64 = if full {
        std::env::var("PROFKIT_CHROME_BENCH_MB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000)
    } else {
        2
    };
    let dir = data_dir();
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let stem = if full {
        format!("kineto_{mb}m")
    } else {
        "kineto_smoke".to_owned()
    };
    let json = dir.join(format!("{stem}.json"));
    let gz = dir.join(format!("{stem}.json.gz"));
    if std::fs::metadata(&json).map(|m| m.len()).unwrap_or(0) < mb * 1_000_000 {
        let start = Instant::now();
        let events = generate(&json, mb * 1_000_000).map_err(|e| e.to_string())?;
        println!(
            "generated {} ({events} events) in {:.1} s",
            json.display(),
            start.elapsed().as_secs_f64()
        );
        gzip(&json, &gz).map_err(|e| e.to_string())?;
    }
    let size = std::fs::metadata(&json).map_err(|e| e.to_string())?.len();
    let gz_size = std::fs::metadata(&gz).map_err(|e| e.to_string())?.len();
    let to_mb = |b: f64| b / 1e6;
    println!(
        "data: {} ({:.1} MB), gzipped {:.1} MB",
        json.display(),
        to_mb(size as f64),
        to_mb(gz_size as f64)
    );
    let mut results = serde_json::json!({ "bytes": size, "gzip_bytes": gz_size });
    println!(
        "  {:<40} {:>9} {:>8} {:>9} {:>14} {:>12} {:>8}",
        "", "time (s)", "CPU (s)", "MB/s", "heap peak (MB)", "VmHWM (MB)", "x text"
    );
    println!("  (CPU: the whole process; main_cpu below: the reader's thread alone)");
    let runs = if full { 3 } else { 1 };
    // The thread counts measured (`PROFKIT_CHROME_BENCH_THREADS`, "1,2" by default).
    let counts: Vec<usize> = std::env::var("PROFKIT_CHROME_BENCH_THREADS")
        .unwrap_or_else(|_| "1,2".to_owned())
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .collect();
    let mut cases = Vec::new();
    for (mode, what, file) in [
        ("plain", "profkit read_chrome", &json),
        ("gzip", "profkit read_chrome of the .gz", &gz),
    ] {
        for &threads in &counts {
            cases.push((mode, threads, format!("{what}, {threads} thr"), file));
        }
    }
    for (mode, threads, what, file) in cases {
        let mut best: Option<String> = None;
        for _ in 0..runs {
            let text = run_child(mode, threads, file)?;
            let better = match &best {
                Some(b) => field(&text, "secs") < field(b, "secs"),
                None => true,
            };
            if better {
                best = Some(text);
            }
        }
        let text = best.unwrap_or_default();
        let secs = field(&text, "secs").unwrap_or(0.0);
        let cpu = field(&text, "cpu").unwrap_or(0.0);
        let peak = field(&text, "heap_peak").unwrap_or(0.0);
        let hwm = field(&text, "vm_hwm").unwrap_or(0.0);
        println!(
            "  {what:<40} {secs:>9.2} {cpu:>8.2} {:>9.0} {:>14.0} {:>12.0} {:>8.2}   ({})",
            to_mb(size as f64) / secs,
            to_mb(peak),
            to_mb(hwm),
            hwm / size as f64,
            text.trim()
        );
        let key = match threads {
            1 => mode.to_owned(),
            n => format!("{mode}_threads{n}"),
        };
        results[key] = serde_json::json!({
            "best_secs": secs, "cpu_secs": cpu,
            "main_cpu_secs": field(&text, "main_cpu"), "heap_peak": peak, "vm_hwm": hwm,
            "events": field(&text, "events"), "flows": field(&text, "flows"),
            "gpu_events": field(&text, "gpu_events"),
        });
    }
    if full {
        let python = std::env::var_os("PROFKIT_PYTHON")
            .map_or_else(|| PathBuf::from("python3"), PathBuf::from);
        let hta_venv = std::env::var_os("HTA_VENV").map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.oracle/hta"),
            PathBuf::from,
        );
        let hta_python = hta_venv.join("bin/python");
        for (what, interpreter, file, key) in [
            ("json.load", python.as_path(), &json, "json_load"),
            ("json.load", python.as_path(), &gz, "json_load_gzip"),
            ("hta", hta_python.as_path(), &json, "hta"),
        ] {
            // HTA takes minutes per 50 MB: `PROFKIT_CHROME_BENCH_HTA=0` leaves it out.
            if what == "hta" && std::env::var("PROFKIT_CHROME_BENCH_HTA").as_deref() == Ok("0") {
                println!("  note: HTA left out (PROFKIT_CHROME_BENCH_HTA=0)");
                continue;
            }
            let Some(text) = run_peer(interpreter, what, file) else {
                continue;
            };
            let secs = field(&text, "secs").unwrap_or(0.0);
            let cpu = field(&text, "cpu").unwrap_or(0.0);
            let rss = field(&text, "maxrss").unwrap_or(0.0);
            let label = format!(
                "Python {what} of {}",
                file.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            );
            println!(
                "  {label:<40} {secs:>9.2} {cpu:>8.2} {:>9.0} {:>14} {:>12.0} {:>8.2}   ({})",
                to_mb(size as f64) / secs,
                "-",
                to_mb(rss),
                rss / size as f64,
                text.trim()
            );
            results[key] =
                serde_json::json!({ "secs": secs, "maxrss": rss, "output": text.trim() });
        }
    }
    let out = dir.join("chrome_import.results.json");
    std::fs::write(
        &out,
        serde_json::to_string_pretty(&results).unwrap_or_default(),
    )
    .map_err(|e| e.to_string())?;
    println!("results: {}", out.display());
    Ok(())
}

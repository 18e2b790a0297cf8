//! Device time counted once, hosts named by the files, self time, on the real device profiles of
//! `conformance/xplane-device` (GPU, ROCm, TPU) and JAX's CPU profiles of `conformance/xplane`.

mod common;

use std::path::{Path, PathBuf};

use common::{profkit, text};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn device(case: &str) -> String {
    repo()
        .join("conformance/xplane-device")
        .join(case)
        .join("input.xplane.pb.gz")
        .to_string_lossy()
        .into_owned()
}

fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-device-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = profkit(args, None);
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// The three device profiles saved as xprof's tools save them, all `host.xplane.pb.gz`.
fn as_host_files(work: &Path) -> Vec<String> {
    ["gpu", "rocm1", "tpu"]
        .iter()
        .map(|case| {
            let dir = work.join(case);
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join("host.xplane.pb.gz");
            std::fs::copy(device(case), &file).unwrap();
            file.to_string_lossy().into_owned()
        })
        .collect()
}

fn hosts(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn host_files_convert_to_one_dataset_named_by_their_hostnames() {
    let work = dir("hosts");
    let files = as_host_files(&work);
    let ds = work.join("dataset");
    let mut args = vec!["convert"];
    args.extend(files.iter().map(String::as_str));
    args.extend([ds.to_str().unwrap(), "--to", "parquet"]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    // The TPU profile records no hostnames: its file names it.
    assert_eq!(
        hosts(&ds),
        ["host=34.83.195.179_6003", "host=host", "host=tw003"],
        "{stdout}"
    );

    // --host names each input, once per input in their order.
    let named = work.join("named");
    let mut args = vec!["convert"];
    args.extend(files.iter().map(String::as_str));
    args.extend([named.to_str().unwrap(), "--to", "parquet"]);
    args.extend(["--host", "gpu-0", "--host", "rocm-0", "--host", "tpu-0"]);
    let (code, _, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(hosts(&named), ["host=gpu-0", "host=rocm-0", "host=tpu-0"]);

    // Too few, and a collision: refused before anything is written, saying what to do.
    let (code, _, stderr) = run(&[
        "convert",
        &files[0],
        &files[1],
        work.join("few").to_str().unwrap(),
        "--to",
        "parquet",
        "--host",
        "a",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("once per input"), "{stderr}");
    let (code, _, stderr) = run(&[
        "convert",
        &files[0],
        &files[1],
        work.join("same").to_str().unwrap(),
        "--to",
        "parquet",
        "--host",
        "a",
        "--host",
        "a",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("two inputs make host a"), "{stderr}");
    assert!(stderr.contains("--host NAME"), "{stderr}");
    assert!(!work.join("same").exists());
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn merge_takes_a_host_per_input() {
    let work = dir("merge");
    let files = as_host_files(&work);
    let out = work.join("merged.xplane.pb");
    let (code, stdout, stderr) = run(&[
        "merge",
        &files[0],
        &files[1],
        out.to_str().unwrap(),
        "--host",
        "gpu-0",
        "--host",
        "rocm-0",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("merged 2 hosts (gpu-0, rocm-0)"),
        "{stdout}"
    );
    // Without --host: the hostnames the spaces record.
    let (code, stdout, stderr) = run(&["merge", &files[0], &files[1], out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("merged 2 hosts (34.83.195.179:6003, tw003)"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn the_kernel_summary_holds_kernels_not_steps_or_scopes() {
    let (code, stdout, stderr) = run(&["report", "--style", "paddle", &device("gpu"), "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let kernels: Vec<&str> = report["kernel"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(!kernels.is_empty());
    for scope in ["0", "bert_span_labeler", "replica_6", "dropout"] {
        assert!(!kernels.contains(&scope), "{scope} in {kernels:?}");
    }
    assert!(
        kernels
            .iter()
            .all(|k| k.contains("Kernel") || k.contains("kernel"))
    );
}

#[test]
fn inspect_numbers_jax_planes_and_shows_self_time() {
    let jax = repo().join("conformance/xplane/real-jax-plain/input.xplane.pb");
    let (code, stdout, stderr) = run(&["inspect", jax.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("plane 0 \"/host:metadata\""), "{stdout}");
    assert!(stdout.contains("plane 1 (id 0) \"/host:CPU\""), "{stdout}");
    assert!(
        stdout.contains("plane 2 (id 0) \"Task Environment\""),
        "{stdout}"
    );
    // `PjitFunction(step)` holds the ops it launched: its self time is a small part of it.
    let line = stdout
        .lines()
        .find(|l| l.contains("PjitFunction(step)"))
        .unwrap();
    assert!(
        line.contains("total  712.270000 us  self   68.638000 us"),
        "{line}"
    );

    // A TPU plane's ops, not its modules.
    let (code, stdout, _) = run(&["inspect", &device("tpu"), "--json"]);
    assert_eq!(code, 0);
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let tpu0 = &summary["summary"]["planes"][0];
    assert_eq!(tpu0["index"], 0);
    assert_eq!(tpu0["top_events_device_ops"], true);
    assert_eq!(tpu0["line_roles"]["xla_ops"], 1);
    assert_eq!(tpu0["line_roles"]["xla_modules"], 1);
    let names: Vec<&str> = tpu0["top_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with("jit_")), "{names:?}");
}

#[test]
fn report_sorts_by_self_time_and_heads_jax_threads_by_name() {
    let jax = repo().join("conformance/xplane/real-jax-plain/input.xplane.pb");
    let jax = jax.to_str().unwrap();
    let rows = |args: &[&str]| -> Vec<String> {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 0, "{stderr}");
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        report["operator"][0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["depth"] == 0)
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let by_total = rows(&["report", jax, "--json", "--no-op-detail"]);
    let by_self = rows(&[
        "report",
        jax,
        "--json",
        "--no-op-detail",
        "--sorted-by",
        "self",
    ]);
    // `trace` and `__exit__` only wrap `stop_trace`: first by total, not by self.
    assert_eq!(by_total[0], "$profiler.py:307 trace");
    assert_eq!(by_self[0], "$profiler.py:271 stop_trace");
    let mut a = by_total.clone();
    let mut b = by_self.clone();
    a.sort();
    b.sort();
    assert_eq!(a, b);

    let (code, stdout, _) = run(&["report", jax, "--thread-sep"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Thread: python-"), "{stdout}");
    assert!(!stdout.contains("Thread: 1"), "{stdout}");
    // Microseconds by default for an XSpace: XLA's CPU ops are not all 0.00.
    assert!(stdout.contains("Time unit: us"));
    let fusion = stdout
        .lines()
        .find(|l| l.starts_with("ynn_fusion"))
        .unwrap();
    // CPU total, average, longest and shortest call (the GPU column is 0: no device).
    assert!(
        fusion.contains(" 28.28 / 9.43 / 23.79 / 1.72 / "),
        "{fusion}"
    );
}

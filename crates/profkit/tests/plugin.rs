//! `profkit plugin check` and `profkit plugin run` against the example plugin, the deliberately
//! broken Rust plugin and the C test plugin of profkit-plugin in its broken modes; and the Rust
//! plugins inside a stand-in for TensorFlow's side of the ABI.
//!
//! The Rust plugins are dev-dependencies, built as shared libraries next to this test binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn profkit(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A shared library built by a dev-dependency: `target/<profile>/deps/lib<name>.so`.
fn rust_plugin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let path = deps.join(format!("lib{name}.so"));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

fn example() -> PathBuf {
    rust_plugin("profkit_plugin_example")
}

fn broken_rust() -> PathBuf {
    rust_plugin("profkit_plugin_broken")
}

fn plugin_crate() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../profkit-plugin")
}

fn scratch() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("profkit-plugin-cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn cc(out: &Path, args: &[&str]) {
    let output = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(plugin_crate().join("include"))
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .expect("a C compiler (cc, or $CC)");
    assert!(
        output.status.success(),
        "compiling {}: {}",
        out.display(),
        text(&output.stderr)
    );
}

/// A name no other call in this process uses (tests run in parallel and compile the same sources).
fn unique(stem: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("{stem}-{}-{n}", std::process::id())
}

/// profkit-plugin's C test plugin in `mode`.
fn c_plugin(mode: &str) -> PathBuf {
    let out = scratch().join(format!("lib{}.so", unique(&format!("broken_{mode}"))));
    let source = plugin_crate().join("tests/plugins/broken.c");
    cc(
        &out,
        &[
            "-shared",
            "-fPIC",
            &format!("-DMODE_{}", mode.to_uppercase()),
            source.to_str().unwrap(),
        ],
    );
    out
}

/// Runs `plugin check` and returns (exit code, stdout lines).
fn check(lib: &Path, extra: &[&str], env: &[(&str, &str)]) -> (i32, Vec<String>) {
    let mut args = vec!["plugin", "check", lib.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = profkit(&args, env);
    let stdout = text(&out.stdout);
    (
        out.status.code().unwrap_or(-1),
        stdout.lines().map(str::to_owned).collect(),
    )
}

/// The line of check `name`.
#[track_caller]
fn line<'a>(lines: &'a [String], name: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no {name} line in {lines:#?}"))
}

#[track_caller]
fn expect(lines: &[String], name: &str, outcome: &str, needle: &str) {
    let l = line(lines, name);
    assert!(
        l.starts_with(outcome) && l.contains(needle),
        "{name}: want {outcome} with {needle:?}, got {l:?}\n{lines:#?}"
    );
}

#[test]
fn the_example_plugin_passes_every_check() {
    let (code, lines) = check(&example(), &["--sessions", "5"], &[]);
    assert_eq!(code, 0, "{lines:#?}");
    assert_eq!(lines.len(), 15, "{lines:#?}");
    for l in &lines[..14] {
        assert!(l.starts_with("pass"), "{l}");
    }
    assert_eq!(lines[14], "14 passed, 0 failed");
    expect(&lines, "device-type", "pass", "PROFKIT_SAMPLER");
    expect(&lines, "restart", "pass", "5 sessions");
}

#[test]
fn check_json_lists_every_check() {
    let out = profkit(
        &[
            "plugin",
            "check",
            example().to_str().unwrap(),
            "--json",
            "--sessions",
            "2",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stdout));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["failed"], 0);
    let checks = doc["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 14);
    assert_eq!(checks[0]["check"], "load");
    assert_eq!(checks[13]["check"], "no-crash");
    assert!(checks.iter().all(|c| c["outcome"] == "pass"));
}

#[test]
fn a_panic_inside_collect_is_caught_and_reported() {
    let (code, lines) = check(&broken_rust(), &["--sessions", "3"], &[]);
    assert_eq!(code, 1);
    expect(
        &lines,
        "restart",
        "FAIL",
        "collect_data_xspace returned INTERNAL: panic in collect_data_xspace: deliberate panic in collect",
    );
    // The panic never crossed the FFI boundary: the process lived.
    expect(&lines, "no-crash", "pass", "exited normally");
    assert_eq!(lines.last().unwrap(), "9 passed, 3 failed, 2 skipped");
}

#[test]
fn panics_and_errors_in_start() {
    for (mode, needle) in [
        (
            "panic-start",
            "INTERNAL: panic in start: deliberate panic in start",
        ),
        (
            "panic-new",
            "panic in start: deliberate panic while making the profiler",
        ),
        (
            "error-start",
            "start returned UNAVAILABLE: deliberately unavailable",
        ),
    ] {
        let (code, lines) = check(
            &broken_rust(),
            &["--sessions", "2"],
            &[("PROFKIT_BROKEN_MODE", mode)],
        );
        assert_eq!(code, 1, "{mode}");
        expect(&lines, "restart", "FAIL", needle);
        expect(&lines, "no-crash", "pass", "");
    }
    let (code, lines) = check(
        &broken_rust(),
        &["--sessions", "2"],
        &[("PROFKIT_BROKEN_MODE", "fine")],
    );
    assert_eq!(code, 0, "{lines:#?}");
}

#[test]
fn a_null_function() {
    let (code, lines) = check(&c_plugin("null_fn"), &[], &[]);
    assert_eq!(code, 1);
    expect(
        &lines,
        "init",
        "FAIL",
        "TensorFlow would abort the process at import: 'collect_data_xspace' field in TP_ProfilerFns must be set",
    );
    expect(&lines, "restart", "skip", "null");
    expect(&lines, "no-crash", "pass", "");
}

#[test]
fn an_illegal_device_type() {
    let (code, lines) = check(&c_plugin("bad_device"), &["--sessions", "2"], &[]);
    assert_eq!(code, 1);
    expect(
        &lines,
        "device-type",
        "FAIL",
        "\"MyDevice\" does not match [A-Z][A-Z_]*",
    );
    expect(&lines, "init", "FAIL", "does not match");
    expect(&lines, "restart", "pass", "");
}

#[test]
fn sizes_that_differ_between_the_two_calls() {
    let (code, lines) = check(&c_plugin("size_mismatch"), &["--sessions", "2"], &[]);
    assert_eq!(code, 1);
    expect(&lines, "calls-agree", "FAIL", "the first call said");
}

#[test]
fn a_segfault_is_reported_not_fatal() {
    let (code, lines) = check(&c_plugin("crash"), &[], &[]);
    assert_eq!(code, 1);
    expect(
        &lines,
        "no-crash",
        "FAIL",
        "signal 11 (SIGSEGV) during collect_data_xspace (size) in session 2",
    );
    expect(&lines, "init", "pass", "");
    expect(&lines, "restart", "FAIL", "not reached");
}

#[test]
fn an_abort_is_reported() {
    let (code, lines) = check(&c_plugin("abort"), &[], &[]);
    assert_eq!(code, 1);
    expect(
        &lines,
        "no-crash",
        "FAIL",
        "signal 6 (SIGABRT) during start in session 2",
    );
}

#[test]
fn a_hang_is_killed_and_reported() {
    let started = std::time::Instant::now();
    let (code, lines) = check(&c_plugin("hang"), &["--max-call-ms", "100"], &[]);
    assert_eq!(code, 1);
    expect(
        &lines,
        "no-crash",
        "FAIL",
        "start in session 2 did not return within 1.00 s",
    );
    expect(&lines, "call-time", "FAIL", "did not return");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn a_slow_call_fails_the_bound() {
    let (code, lines) = check(
        &c_plugin("slow"),
        &["--sessions", "2", "--max-call-ms", "500"],
        &[],
    );
    assert_eq!(code, 1);
    expect(
        &lines,
        "call-time",
        "FAIL",
        "stop in session 1 took 1.30 s (bound 500.0 ms)",
    );
    expect(&lines, "no-crash", "pass", "");
}

#[test]
fn a_leak_across_sessions() {
    let (code, lines) = check(&c_plugin("leak"), &["--sessions", "6"], &[]);
    assert_eq!(code, 1);
    expect(&lines, "memory", "FAIL", "over the 4.0 MiB limit");
    expect(&lines, "restart", "pass", "");
}

#[test]
fn check_refuses_missing_files_and_bad_arguments() {
    let out = profkit(&["plugin", "check", "/nonexistent/lib.so"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no such file"),
        "{}",
        text(&out.stderr)
    );
    let out = profkit(&["plugin", "check", "x.so", "--sessions", "0"], &[]);
    assert_eq!(out.status.code(), Some(2));
    // Not a shared library: a load failure, reported as a check.
    let not_lib = scratch().join("not-a-library.so");
    std::fs::write(&not_lib, b"hello").unwrap();
    let (code, lines) = check(&not_lib, &[], &[]);
    assert_eq!(code, 1);
    expect(&lines, "load", "FAIL", "cannot load");
    expect(&lines, "no-crash", "pass", "");
}

#[test]
fn run_writes_what_tensorflow_would() {
    let out_path = scratch().join("example.xplane.pb");
    let out = profkit(
        &[
            "plugin",
            "run",
            example().to_str().unwrap(),
            out_path.to_str().unwrap(),
            "--seconds",
            "0.3",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("device type PROFKIT_SAMPLER"));
    let space = profkit_xplane::read_file(&out_path, Default::default()).unwrap();
    let names: Vec<&str> = space.planes.iter().map(|p| p.name.as_str()).collect();
    assert!(names.contains(&"Task Environment"), "{names:?}");
    assert_eq!(profkit_xplane::validate(&space), []);
    // The written file reads back through the rest of the CLI.
    let out = profkit(&["inspect", out_path.to_str().unwrap()], &[]);
    assert!(out.status.success());
}

#[test]
fn run_refuses_a_plugin_tensorflow_would_refuse() {
    let out_path = scratch().join("never.xplane.pb");
    let lib = c_plugin("bad_device");
    let out = profkit(
        &[
            "plugin",
            "run",
            lib.to_str().unwrap(),
            out_path.to_str().unwrap(),
            "--seconds",
            "0",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("TensorFlow would refuse the registration"),
        "{}",
        text(&out.stderr)
    );
    assert!(!out_path.exists());
    let out = profkit(
        &[
            "plugin",
            "run",
            lib.to_str().unwrap(),
            out_path.to_str().unwrap(),
            "--seconds",
            "-1",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
}

/// The fake TensorFlow, with its status functions exported (`-rdynamic`) or not.
fn fake_tensorflow(exported: bool) -> PathBuf {
    let out = scratch().join(unique(if exported {
        "fake_tf"
    } else {
        "fake_tf_hidden"
    }));
    let source = plugin_crate().join("tests/plugins/fake_tensorflow.c");
    let mut args = vec![source.to_str().unwrap(), "-ldl"];
    if exported {
        args.push("-rdynamic");
    }
    cc(&out, &args);
    out
}

/// Runs the fake TensorFlow on `lib`: its report lines and the collected buffers.
fn in_fake_tensorflow(
    exported: bool,
    lib: &Path,
    env: &[(&str, &str)],
    tag: &str,
) -> (Vec<String>, Vec<Vec<u8>>) {
    let prefix = scratch().join(format!("{}-", unique(&format!("fake-{tag}"))));
    let out = Command::new(fake_tensorflow(exported))
        .arg(lib)
        .arg("2")
        .arg(&prefix)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let lines = text(&out.stdout).lines().map(str::to_owned).collect();
    let buffers = (1..=2)
        .filter_map(|n| std::fs::read(format!("{}{n}.pb", prefix.display())).ok())
        .collect();
    (lines, buffers)
}

#[test]
fn inside_a_tensorflow_like_host_errors_reach_its_own_status() {
    let (lines, buffers) = in_fake_tensorflow(true, &example(), &[], "example");
    assert!(lines.contains(&"init 0 0 ".to_owned()), "{lines:#?}");
    assert!(lines.contains(&"device_type PROFKIT_SAMPLER".to_owned()));
    assert!(lines.contains(&"collect 2 0 ".to_owned()), "{lines:#?}");
    // The too-small buffer's error went through the host's TF_SetStatus into its own status.
    let small = lines
        .iter()
        .find(|l| l.starts_with("collect-too-small"))
        .unwrap();
    assert!(
        small.starts_with("collect-too-small 3 9 the buffer holds"),
        "{small}"
    );
    assert_eq!(buffers.len(), 2);
    for bytes in buffers {
        let space = profkit_xplane::decode(bytes).unwrap();
        assert_eq!(space.planes[0].name, "/device:CUSTOM:0");
    }

    let (lines, _) = in_fake_tensorflow(true, &broken_rust(), &[], "broken");
    let collect = lines.iter().find(|l| l.starts_with("collect 1")).unwrap();
    assert!(
        collect.starts_with("collect 1 13 panic in collect_data_xspace: deliberate panic"),
        "{collect}"
    );
    assert!(
        lines.contains(&"size 1 0".to_owned()),
        "a panic leaves size 0: {lines:#?}"
    );
}

#[test]
fn without_status_functions_in_the_process_plugins_still_work() {
    let (lines, buffers) = in_fake_tensorflow(false, &example(), &[], "hidden");
    assert!(lines.contains(&"init 0 0 ".to_owned()), "{lines:#?}");
    assert_eq!(buffers.len(), 2, "sessions work");
    // Nobody to report the error to: the status stays OK, nothing is written, nothing crashes.
    let small = lines
        .iter()
        .find(|l| l.starts_with("collect-too-small"))
        .unwrap();
    assert_eq!(small, "collect-too-small 3 0 ");
}

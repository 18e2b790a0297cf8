//! `profkit plugin check` and `profkit plugin run` against the example plugin, the deliberately
//! broken Rust plugin and the C test plugin of profkit-plugin in its broken modes; and the Rust
//! plugins inside a stand-in for TensorFlow's side of the ABI.
//!
//! The Rust plugins are dev-dependencies, built as shared libraries next to this test binary.

// profkit-plugin's test support: compiling its C test plugins, running a table of cases.
#[path = "../../profkit-plugin/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use profkit_plugin::check::CheckId;
use support::{c_plugin, scratch, unique};

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

/// The plugin a case checks.
#[derive(Clone, Copy, Debug)]
enum Plugin {
    Example,
    /// The broken Rust plugin in its default mode, or in the `PROFKIT_BROKEN_MODE` given.
    BrokenRust(Option<&'static str>),
    /// profkit-plugin's C test plugin in a mode.
    C(&'static str),
    /// A file that is not a shared library: a load failure, reported as a check.
    NotALibrary,
}

/// One run of `profkit plugin check` and what it must print.
struct Case {
    name: &'static str,
    plugin: Plugin,
    args: &'static [&'static str],
    /// The exit code.
    code: i32,
    /// Lines that must be there, each as `outcome check words-the-line-holds`; without a no-crash
    /// line, `pass no-crash`.
    want: &'static [&'static str],
    /// The summary line, where the case pins it.
    summary: Option<&'static str>,
    /// For a hang: the child is killed and reported within this time.
    within: Option<Duration>,
    /// The plugin forks a process and writes its pid to `$PROFKIT_TEST_PIDFILE`: it must be gone
    /// once the check has ended.
    grandchild: bool,
    /// Environment for the plugin.
    env: &'static [(&'static str, &'static str)],
    /// Run the checker under this limit on its address space (`ulimit -v`, in MiB).
    address_space_mib: Option<u64>,
}

const CASE: Case = Case {
    name: "",
    plugin: Plugin::Example,
    args: &[],
    code: 1,
    want: &[],
    summary: None,
    within: None,
    grandchild: false,
    env: &[],
    address_space_mib: None,
};

const CASES: &[Case] = &[
    Case {
        name: "the example plugin passes every check",
        args: &["--sessions", "5"],
        code: 0,
        want: &[
            "pass device-type PROFKIT_SAMPLER",
            "pass restart 5 sessions",
        ],
        summary: Some("14 passed, 0 failed"),
        ..CASE
    },
    Case {
        name: "a panic inside collect is caught and reported",
        plugin: Plugin::BrokenRust(None),
        args: &["--sessions", "3"],
        want: &[
            "FAIL restart collect_data_xspace returned INTERNAL: panic in collect_data_xspace: \
             deliberate panic in collect",
            // The panic never crossed the FFI boundary: the process lived.
            "pass no-crash exited normally",
        ],
        summary: Some("9 passed, 3 failed, 2 skipped"),
        ..CASE
    },
    Case {
        name: "a panic in start",
        plugin: Plugin::BrokenRust(Some("panic-start")),
        args: &["--sessions", "2"],
        want: &["FAIL restart INTERNAL: panic in start: deliberate panic in start"],
        ..CASE
    },
    Case {
        name: "a panic while making the profiler",
        plugin: Plugin::BrokenRust(Some("panic-new")),
        args: &["--sessions", "2"],
        want: &["FAIL restart panic in start: deliberate panic while making the profiler"],
        ..CASE
    },
    Case {
        name: "an error in start",
        plugin: Plugin::BrokenRust(Some("error-start")),
        args: &["--sessions", "2"],
        want: &["FAIL restart start returned UNAVAILABLE: deliberately unavailable"],
        ..CASE
    },
    Case {
        name: "the broken plugin's fine mode",
        plugin: Plugin::BrokenRust(Some("fine")),
        args: &["--sessions", "2"],
        code: 0,
        ..CASE
    },
    Case {
        name: "a null function",
        plugin: Plugin::C("null_fn"),
        want: &[
            "FAIL init TensorFlow would abort the process at import: 'collect_data_xspace' field \
             in TP_ProfilerFns must be set",
            "skip restart null",
        ],
        ..CASE
    },
    Case {
        name: "an illegal device type",
        plugin: Plugin::C("bad_device"),
        args: &["--sessions", "2"],
        want: &[
            "FAIL device-type \"MyDevice\" does not match [A-Z][A-Z_]*",
            "FAIL init does not match",
            "pass restart",
        ],
        ..CASE
    },
    Case {
        name: "sizes that differ between the two calls",
        plugin: Plugin::C("size_mismatch"),
        args: &["--sessions", "2"],
        want: &["FAIL calls-agree the first call said"],
        ..CASE
    },
    Case {
        name: "a segfault is reported, not fatal",
        plugin: Plugin::C("crash"),
        want: &[
            "FAIL no-crash signal 11 (SIGSEGV) during collect_data_xspace (size) in session 2",
            "pass init",
            "FAIL restart not reached",
        ],
        ..CASE
    },
    Case {
        name: "an abort is reported",
        plugin: Plugin::C("abort"),
        want: &["FAIL no-crash signal 6 (SIGABRT) during start in session 2"],
        ..CASE
    },
    Case {
        name: "a hang is killed and reported",
        plugin: Plugin::C("hang"),
        args: &["--max-call-ms", "100"],
        want: &[
            "FAIL no-crash start in session 2 did not return within 1.00 s",
            "FAIL call-time did not return",
        ],
        within: Some(Duration::from_secs(20)),
        ..CASE
    },
    Case {
        name: "a slow call fails the bound",
        plugin: Plugin::C("slow"),
        args: &["--sessions", "2", "--max-call-ms", "500"],
        want: &[
            // The plugin sleeps 1.3 s; on a loaded machine the call can take a good deal more
            // (the case is about the bound failing, not about the machine's speed).
            "FAIL call-time stop in session 1 took 1.",
            "FAIL call-time s (bound 500.0 ms)",
        ],
        ..CASE
    },
    Case {
        name: "a leak across sessions",
        plugin: Plugin::C("leak"),
        args: &["--sessions", "6"],
        want: &["FAIL memory over the 4.0 MiB limit", "pass restart"],
        ..CASE
    },
    Case {
        // The forked process holds the child's stdout and stderr for 30 s: the checker neither
        // waits for it nor calls the child silent, and kills it with the child's process group.
        name: "a process forked by TF_InitProfiler is killed, not waited for",
        plugin: Plugin::C("fork_daemon"),
        args: &["--sessions", "2", "--max-call-ms", "100"],
        code: 0,
        want: &["pass no-crash exited normally"],
        grandchild: true,
        ..CASE
    },
    Case {
        // It prints passing results in the old line format on stdout and on every descriptor,
        // from a destructor: none counts, and the lines on the private channel are refused.
        name: "a plugin cannot forge results",
        plugin: Plugin::C("forge"),
        args: &["--sessions", "2"],
        want: &[
            "FAIL device-type \"MyDevice\" does not match",
            "FAIL init does not match",
            "FAIL no-crash did not carry the run's secret and were refused",
        ],
        ..CASE
    },
    Case {
        // 384 MiB on each stream without a newline, under a 320 MiB address space: only a tail
        // of the output may be kept.
        name: "output without newlines is not kept whole",
        plugin: Plugin::C("flood"),
        // Writing 768 MiB through pipes on a loaded machine may take seconds: the case is about
        // memory, so the call-time bound is set out of its way.
        args: &["--sessions", "2", "--max-call-ms", "60000"],
        code: 0,
        env: &[("PROFKIT_TEST_FLOOD_MIB", "384")],
        address_space_mib: Some(320),
        ..CASE
    },
    Case {
        name: "not a shared library",
        plugin: Plugin::NotALibrary,
        want: &["FAIL load cannot load"],
        ..CASE
    },
];

/// Runs `plugin check` for `case` and returns what is wrong with its output.
fn check_case(case: &Case) -> Vec<String> {
    let (lib, env) = match case.plugin {
        Plugin::Example => (example(), None),
        Plugin::BrokenRust(mode) => (broken_rust(), mode),
        Plugin::C(mode) => (c_plugin(mode), None),
        Plugin::NotALibrary => {
            let path = scratch().join("not-a-library.so");
            std::fs::write(&path, b"hello").unwrap();
            (path, None)
        }
    };
    let mut env: Vec<(&str, &str)> = env
        .map(|m| ("PROFKIT_BROKEN_MODE", m))
        .into_iter()
        .collect();
    env.extend_from_slice(case.env);
    let pidfile = scratch().join(unique("grandchild.pid"));
    if case.grandchild {
        env.push(("PROFKIT_TEST_PIDFILE", pidfile.to_str().unwrap()));
    }
    let mut args = vec!["plugin", "check", lib.to_str().unwrap()];
    args.extend_from_slice(case.args);
    let started = Instant::now();
    let out = match case.address_space_mib {
        None => profkit(&args, &env),
        Some(mib) => Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mib * 1024))
            .arg(env!("CARGO_BIN_EXE_profkit"))
            .args(&args)
            .envs(env.iter().copied())
            .output()
            .unwrap(),
    };
    let took = started.elapsed();
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let mut problems = Vec::new();
    if out.status.code() != Some(case.code) {
        problems.push(format!("exit {:?}, want {}", out.status.code(), case.code));
    }
    // One line per check, in report order, then a summary that counts them.
    let names: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    let all: Vec<&str> = CheckId::ALL.iter().map(|c| c.name()).collect();
    if lines.len() != all.len() + 1 || names.get(..all.len()) != Some(&all[..]) {
        problems.push(format!("not one line per check in order: {lines:#?}"));
    }
    let count = |outcome: &str| lines.iter().filter(|l| l.starts_with(outcome)).count();
    let mut counted = format!("{} passed, {} failed", count("pass "), count("FAIL "));
    if count("skip ") > 0 {
        counted += &format!(", {} skipped", count("skip "));
    }
    let summary = lines.last().copied().unwrap_or_default();
    if summary != counted || case.summary.is_some_and(|want| summary != want) {
        let pinned = case.summary;
        problems.push(format!(
            "summary {summary:?}, counted {counted:?}, pinned {pinned:?}"
        ));
    }
    let lives: &[&str] = if case.want.iter().any(|w| w.contains(" no-crash")) {
        &[]
    } else {
        &["pass no-crash"]
    };
    for want in case.want.iter().chain(lives) {
        let mut words = want.splitn(3, ' ');
        let (outcome, name) = (words.next().unwrap(), words.next().unwrap());
        let needle = words.next().unwrap_or_default();
        match lines
            .iter()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
        {
            Some(l) if l.starts_with(outcome) && l.contains(needle) => {}
            found => problems.push(format!(
                "{name}: want {outcome} with {needle:?}, got {found:?}"
            )),
        }
    }
    if let Some(within) = case.within
        && took >= within
    {
        problems.push(format!("took {took:?}, over {within:?}"));
    }
    if case.grandchild {
        match std::fs::read_to_string(&pidfile) {
            Ok(pid) => {
                if alive(pid.trim()) {
                    problems.push(format!(
                        "the forked process {} outlived the check",
                        pid.trim()
                    ));
                }
                let _ = std::fs::remove_file(&pidfile);
            }
            Err(e) => problems.push(format!("the plugin wrote no pid file: {e}")),
        }
    }
    if !out.stderr.is_empty() && case.address_space_mib.is_some() {
        problems.push(format!("stderr: {}", text(&out.stderr)));
    }
    problems
}

/// Whether the process `pid` still runs: a zombie waiting for its reaper counts as ended. It
/// was sent SIGKILL when the check ended; give the kernel a moment to deliver it.
fn alive(pid: &str) -> bool {
    let stat = format!("/proc/{pid}/stat");
    for _ in 0..50 {
        match std::fs::read_to_string(&stat) {
            Err(_) => return false,
            // The state follows the command name in parentheses.
            Ok(s)
                if s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z')) =>
            {
                return false;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    true
}

#[test]
fn check_finds_what_each_plugin_gets_wrong() {
    support::run_cases(CASES, |case| case.name, check_case);
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
fn the_check_child_ends_quietly_when_its_parent_is_gone() {
    use std::io::Write;
    use std::process::Stdio;
    // The child's channel is its stdout here, a pipe whose reading end is closed before the
    // child writes its first message: every write fails with EPIPE.
    let mut child = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(["plugin", "__check-child", example().to_str().unwrap()])
        .args(["--sessions", "1", "--max-call-ms", "1000"])
        .env("PROFKIT_CHECK_CHANNEL", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    // The child may already be gone (it writes nothing to stdin's reader): ignore EPIPE here.
    let _ = stdin.write_all(b"0123456789abcdef\n");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

#[test]
fn the_check_child_dies_with_the_checker() {
    // The plugin hangs in session 2 and the hang limit is an hour: only the checker's death ends
    // the child, which reports nothing more once it hangs.
    let lib = c_plugin("hang");
    let pidfile = scratch().join(unique("hanging.pid"));
    let mut checker = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args([
            "plugin",
            "check",
            lib.to_str().unwrap(),
            "--max-call-ms",
            "360000",
        ])
        .env("PROFKIT_TEST_PIDFILE", &pidfile)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The plugin writes the child's pid as it starts to hang.
    let mut child = None;
    for _ in 0..600 {
        child = std::fs::read_to_string(&pidfile)
            .ok()
            .filter(|p| p.ends_with('\n'))
            .map(|p| p.trim().to_owned());
        if child.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_file(&pidfile);
    let Some(child) = child else {
        let _ = checker.kill();
        panic!("the plugin never reached its hang");
    };
    checker.kill().unwrap();
    checker.wait().unwrap();
    let lived = alive(&child);
    if lived {
        let _ = Command::new("kill").args(["-9", &child]).status();
    }
    assert!(!lived, "the check child {child} outlived the checker");
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
    let source = support::plugins_dir().join("fake_tensorflow.c");
    let mut args = vec![source.to_str().unwrap(), "-ldl"];
    if exported {
        args.push("-rdynamic");
    }
    support::compile(&out, &args);
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

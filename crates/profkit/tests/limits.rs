//! Bounded resources: standard input that is no profile is refused as it arrives, and hostile
//! inputs of every format (the cases under `conformance/limits/`) keep every command's peak
//! memory under the documented bound (docs/cli.md, "Limits"): 64 times the input, plus a fixed
//! base for the program itself.
//!
//! The peak is the child's own maximum resident set, which `wait4` returns for the one child it
//! reaps (so tests running in parallel do not see each other's children), the child started from
//! a fresh process so that this one's own peak does not count (see `profkit_measured`). This is a
//! memory bound, not a timing threshold.

// wait4 is the one call here that is not safe Rust; it only fills the two values it is given.
#![allow(unsafe_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What the program itself takes whatever the input (code, buffers, the allocator's arenas).
const BASE: u64 = 48 << 20;

/// The bound of docs/cli.md: peak memory at most 64 times the input.
const FACTOR: u64 = 64;

/// What standard input gets.
enum Stdin<'a> {
    /// `len` zero bytes, written while the child runs (it may stop reading long before).
    Zeros(u64),
    Bytes(&'a [u8]),
}

struct Run {
    code: Option<i32>,
    stderr: String,
    /// Peak resident set, in bytes.
    peak: u64,
}

/// Runs profkit with `args` and measures its peak. The child is started from a fresh process (this
/// test binary run again for [`measured_child`] alone), not from this one: a child spawned here
/// (std spawns with vfork) would report at least this process's own peak, which the hostile
/// inputs other tests build in memory can raise past the bound.
fn profkit_measured(args: &[&str], stdin: Stdin<'_>) -> Run {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "measured_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(MEASURED_ARGS, args.join("\u{1f}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let owned: Option<Vec<u8>> = match stdin {
        Stdin::Bytes(b) => Some(b.to_vec()),
        _ => None,
    };
    let zeros = match stdin {
        Stdin::Zeros(n) => n,
        _ => 0,
    };
    let writer = std::thread::spawn(move || {
        if let Some(bytes) = owned {
            let _ = pipe.write_all(&bytes);
        }
        let chunk = vec![0u8; 1 << 20];
        let mut left = zeros;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            if pipe.write_all(&chunk[..n]).is_err() {
                break;
            }
            left -= n as u64;
        }
    });
    let mut stderr_pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let mut report = String::new();
    let _ = child.stdout.take().unwrap().read_to_string(&mut report);
    let _ = child.wait();
    let _ = writer.join();
    let stderr = reader.join().unwrap();
    let line = report
        .lines()
        .find_map(|l| l.strip_prefix("PROFKIT_MEASURED "))
        .unwrap_or_else(|| panic!("no measurement from the helper process: {report}{stderr}"));
    let mut fields = line.split(' ');
    let peak = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
    let code = fields.next().and_then(|f| f.parse().ok());
    Run { code, stderr, peak }
}

/// The environment variable that makes [`measured_child`] run profkit (its args joined by
/// U+001F).
const MEASURED_ARGS: &str = "PROFKIT_MEASURED_ARGS";

/// Not a test of its own: in the fresh process [`profkit_measured`] starts, runs profkit with the
/// given args (standard input and error passed through) and prints its exit code and the peak
/// `wait4` reports for it. Does nothing when run as a test.
// The child is reaped by wait4 below, which std does not know of.
#[allow(clippy::zombie_processes)]
#[test]
fn measured_child() {
    let Ok(args) = std::env::var(MEASURED_ARGS) else {
        return;
    };
    let args: Vec<&str> = args.split('\u{1f}').collect();
    let child = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(&args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: a zeroed rusage is a valid value of the plain C struct; wait4 writes only to the
    // status and rusage it is given, both alive for the call.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status).to_string()
    } else {
        "signal".to_owned()
    };
    // Linux gives ru_maxrss in KiB.
    let peak = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    println!("PROFKIT_MEASURED {peak} {code}");
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// Endless zeros on standard input (here 512 MiB, so that a regression fails rather than fills
/// the machine) are no XSpace, Paddle profile, node trees, Chrome trace or Poplar profile: each
/// reader refuses them at byte 0 as they arrive instead of reading them into memory first.
#[test]
fn zeros_on_standard_input_are_refused_as_they_arrive() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["convert", "-", "out.json", "--from", "xspace"],
            "malformed XSpace at byte 0",
        ),
        (
            &["convert", "-", "out.pb", "--from", "xspace"],
            "malformed XSpace at byte 0",
        ),
        (&["merge", "-", "out.pb"], "malformed XSpace at byte 0"),
        (
            &["report", "-", "--from", "xspace"],
            "malformed XSpace at byte 0",
        ),
        (
            &["dump", "-", "--from", "paddle"],
            "malformed Profile at byte 0",
        ),
        (
            &["convert", "-", "out.json", "--from", "paddle"],
            "malformed Profile at byte 0",
        ),
        (
            &["inspect", "-", "--from", "paddle-trace"],
            "malformed NodeTreesProto at byte 0",
        ),
        (
            &["report", "-", "--from", "paddle-trace"],
            "malformed NodeTreesProto at byte 0",
        ),
        (
            &["convert", "-", "out.json", "--from", "chrome"],
            "(line 1, column 1)",
        ),
        (
            &["inspect", "-", "--from", "poplar"],
            "(line 1, column 1, byte 0)",
        ),
    ];
    let dir = scratch("zeros");
    for (args, message) in cases {
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                if a.starts_with("out.") {
                    dir.join(a).display().to_string()
                } else {
                    (*a).to_owned()
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = profkit_measured(&args, Stdin::Zeros(512 << 20));
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
        assert!(
            run.peak < BASE,
            "{args:?}: peak {} reading zeros from standard input, over {}",
            mb(run.peak),
            mb(BASE)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A valid XSpace on standard input still converts (it is read into memory, for two passes).
#[test]
fn an_xspace_on_standard_input_converts() {
    let input = std::fs::read(conformance().join("xplane/gpu-device/input.xplane.pb")).unwrap();
    let dir = scratch("stdin-xspace");
    let out = dir.join("out.json");
    let run = profkit_measured(
        &["convert", "-", out.to_str().unwrap(), "--to", "chrome"],
        Stdin::Bytes(&input),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let expected = std::fs::read(conformance().join("xplane/gpu-device/chrome.json")).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), expected);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Size of each hostile input: large enough that the program's own base is small beside 64
/// times it, small enough for a debug build to get through every command quickly.
const HOSTILE_SIZE: usize = 6 << 20;

/// Commands that still pass the bound on a case, as (case, the end of an argument of the
/// command). They are still run, and must still end cleanly. None today: an XSpace of millions
/// of empty planes was the last (the Parquet conversion kept a row per plane, 74 times the input;
/// its planes table is now written in batches of 65,536 rows as they come).
const KNOWN_OVER: &[(&str, &str)] = &[];

/// The xprof tools run on every hostile XSpace.
const XPROF_TOOLS: &[&str] = &[
    "framework_op_stats",
    "overview_page",
    "input_pipeline_analyzer",
    "memory_profile",
    "kernel_stats",
    "hlo_stats",
    "op_profile",
    "roofline_model",
];

/// Every command on every hostile input of `conformance::limits`: each ends with success or a
/// clean error (exit 0 or 1, never killed), and its peak resident set stays under 64 times the
/// input plus the base. The inputs budgeted readers refuse are refused with the budget's message.
#[test]
fn hostile_inputs_stay_within_the_memory_bound() {
    let dir = scratch("hostile");
    let mut failures = Vec::new();
    let mut table = String::new();
    // This process stays small: a spawned child's peak starts at its parent's (Linux counts the
    // parent's peak in the child's when it execs), so each input is made, written and dropped
    // before its commands run.
    for case in conformance::limits::cases() {
        let case_dir = dir.join(case.name);
        std::fs::create_dir_all(&case_dir).unwrap();
        let input = case_dir.join(case.file_name);
        let len = {
            let bytes = case.bytes(HOSTILE_SIZE);
            std::fs::write(&input, &bytes).unwrap();
            bytes.len() as u64
        };
        let file = input.to_str().unwrap().to_owned();
        let whole = if case.xdl {
            case_dir.to_str().unwrap().to_owned()
        } else {
            file.clone()
        };
        let out = |name: &str| {
            dir.join(format!("{}-{name}", case.name))
                .display()
                .to_string()
        };
        let mut commands: Vec<Vec<String>> = vec![
            vec!["inspect".into(), file.clone()],
            vec!["validate".into(), file.clone()],
            vec!["dump".into(), file.clone()],
            vec!["convert".into(), whole.clone(), out("out.json")],
            vec!["convert".into(), whole.clone(), out("out.xplane.pb")],
            vec![
                "convert".into(),
                whole.clone(),
                out("parquet"),
                "--to".into(),
                "parquet".into(),
            ],
        ];
        if case.xdl {
            commands.push(vec![
                "convert".into(),
                whole.clone(),
                out("xdl"),
                "--to".into(),
                "xdl".into(),
            ]);
        } else if !case.name.starts_with("poplar") {
            commands.push(vec!["report".into(), file.clone()]);
        }
        // xprof's tools: the host ones (OpStats, the steps, the memory profile) and the device
        // ones.
        if case.name.starts_with("xspace") {
            for tool in XPROF_TOOLS {
                commands.push(vec![
                    "xprof".into(),
                    (*tool).into(),
                    file.clone(),
                    "-o".into(),
                    out(&format!("{tool}.json")),
                ]);
            }
        }
        if let Some(from) = case.from {
            for command in &mut commands {
                command.extend(["--from".into(), from.into()]);
            }
        }
        let bound = FACTOR * len + BASE;
        for args in commands {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = profkit_measured(&args, Stdin::Bytes(&[]));
            let command = match args.as_slice() {
                ["xprof", tool, ..] => format!("xprof {tool}"),
                [first, ..] => (*first).to_owned(),
                [] => String::new(),
            };
            let what = format!("{} {command}", case.name);
            table.push_str(&format!(
                "{what:<48} {:>10} {:>6.1}x exit {:?}\n",
                mb(run.peak),
                run.peak as f64 / len as f64,
                run.code
            ));
            if !matches!(run.code, Some(0 | 1)) {
                failures.push(format!("{args:?}: exit {:?}: {}", run.code, run.stderr));
            }
            let known = KNOWN_OVER
                .iter()
                .any(|(c, a)| *c == case.name && args.iter().any(|x| x.ends_with(a)));
            if run.peak > bound && !known {
                failures.push(format!(
                    "{args:?}: peak {} over the bound {} (64 x {} bytes + {})",
                    mb(run.peak),
                    mb(bound),
                    len,
                    mb(BASE)
                ));
            }
            if case.refused && (run.code != Some(1) || !run.stderr.contains("messages in")) {
                failures.push(format!(
                    "{args:?}: expected the message budget's refusal: exit {:?}: {}",
                    run.code, run.stderr
                ));
            }
        }
    }
    eprintln!("{table}");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-limits-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ----- no silent data changes -----

mod common;

use common::{profkit, text};
use conformance::limits::{len_field, varint};

fn varint_field(number: u64, value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(number << 3, &mut out);
    varint(value, &mut out);
    out
}

/// A Chrome `"dur": -50` is kept as an instant, and the warning says so with the value.
#[test]
fn a_negative_chrome_duration_is_warned_of_with_its_value() {
    let dir = scratch("negative-dur");
    let input = dir.join("in.json");
    std::fs::write(
        &input,
        r#"{"traceEvents":[{"ph":"X","name":"a","ts":100,"dur":-50,"pid":1,"tid":1}]}"#,
    )
    .unwrap();
    let out = dir.join("out.json");
    let run = profkit(
        &["convert", input.to_str().unwrap(), out.to_str().unwrap()],
        None,
    );
    let stderr = text(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains(r#"traceEvents[0]: "a" has a negative duration (-50 us); taken as 0, so the event becomes an instant"#),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Duplicate keys in a Chrome event (members or args) are warned of, the last value used, and
/// `validate` counts them as errors.
#[test]
fn duplicate_chrome_keys_are_warned_of() {
    let dir = scratch("duplicate-keys");
    let input = dir.join("in.json");
    std::fs::write(
        &input,
        r#"{"traceEvents":[{"ph":"X","name":"b","ts":100,"dur":10,"dur":20,"pid":1,"tid":1,"args":{"x":1,"y":2,"x":3}}]}"#,
    )
    .unwrap();
    let out = dir.join("out.json");
    let run = profkit(
        &["convert", input.to_str().unwrap(), out.to_str().unwrap()],
        None,
    );
    let stderr = text(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            r#"traceEvents[0]: "b" has the key "dur" more than once; the last value is used"#
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            r#"traceEvents[0]: "b" has the arg "x" more than once; the last value is used"#
        ),
        "{stderr}"
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.contains(r#"{"args": {"x": 3, "y": 2}, "dur": 20.0, "name": "b""#),
        "{written}"
    );
    let run = profkit(&["validate", input.to_str().unwrap()], None);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("DuplicateKey"),
        "{}",
        text(&run.stdout)
    );
    // Two traceEvents arrays: both are read, and said so.
    std::fs::write(
        &input,
        r#"{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1}],"traceEvents":[{"ph":"X","name":"b","ts":1,"dur":1}]}"#,
    )
    .unwrap();
    let run = profkit(
        &["convert", input.to_str().unwrap(), out.to_str().unwrap()],
        None,
    );
    let stderr = text(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains(r#"the trace has the key "traceEvents" more than once; the events of every one are read"#),
        "{stderr}"
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.contains(r#""name": "a""#) && written.contains(r#""name": "b""#),
        "{written}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Paddle profile whose events lie 200 days apart: an XSpace holds about 106 days of
/// picoseconds, so the later event's times are clamped, and the warning says so.
#[test]
fn times_past_what_an_xspace_holds_are_warned_of() {
    const DAY: u64 = 86_400_000_000_000;
    let event = |name: &[u8], start: u64| {
        let mut e = len_field(1, name);
        e.extend(varint_field(2, start));
        e.extend(varint_field(3, start + 1000));
        e.extend(varint_field(8, 0));
        len_field(1, &e)
    };
    let mut profile = event(b"a", 1_000_000_000);
    profile.extend(event(b"b", 1_000_000_000 + 200 * DAY));
    let dir = scratch("far-times");
    let input = dir.join("far.pb");
    std::fs::write(&input, &profile).unwrap();
    for out in ["out.xplane.pb", "out.json"] {
        let out = dir.join(out);
        let run = profkit(
            &[
                "convert",
                input.to_str().unwrap(),
                out.to_str().unwrap(),
                "--from",
                "paddle",
            ],
            None,
        );
        let stderr = text(&run.stderr);
        assert!(run.status.success(), "{stderr}");
        assert!(
            stderr.contains("1 events lie further from the session start than an XSpace holds"),
            "{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Merging hosts whose sessions start too far apart for an XSpace's line times (nanoseconds in
/// an i64) clamps the later host's lines, and says so.
#[test]
fn merged_hosts_too_far_apart_are_warned_of() {
    let space = |start_ns: u64, line_ns: u64| {
        let mut event = varint_field(1, 1);
        event.extend(varint_field(2, 5));
        event.extend(varint_field(3, 1000));
        let mut line = varint_field(1, 1);
        line.extend(len_field(2, b"thread"));
        line.extend(varint_field(3, line_ns));
        line.extend(len_field(4, &event));
        let mut metadata = varint_field(1, 1);
        metadata.extend(len_field(2, b"op"));
        let mut entry = varint_field(1, 1);
        entry.extend(len_field(2, &metadata));
        let mut plane = varint_field(1, 1);
        plane.extend(len_field(2, b"/host:CPU"));
        plane.extend(len_field(3, &line));
        plane.extend(len_field(4, &entry));
        let mut stat_metadata = varint_field(1, 1);
        stat_metadata.extend(len_field(2, b"profile_start_time"));
        let mut stat_entry = varint_field(1, 1);
        stat_entry.extend(len_field(2, &stat_metadata));
        let mut stat = varint_field(1, 1);
        stat.extend(varint_field(3, start_ns));
        let mut env = varint_field(1, 2);
        env.extend(len_field(2, b"Task Environment"));
        env.extend(len_field(5, &stat_entry));
        env.extend(len_field(6, &stat));
        let mut out = len_field(1, &plane);
        out.extend(len_field(1, &env));
        out
    };
    let dir = scratch("far-hosts");
    let a = dir.join("a.xplane.pb");
    let b = dir.join("b.xplane.pb");
    std::fs::write(&a, space(1000, 1_000_000)).unwrap();
    std::fs::write(
        &b,
        space(9_000_000_000_000_000_000, 9_000_000_000_000_000_000),
    )
    .unwrap();
    let out = dir.join("both.xplane.pb");
    let run = profkit(
        &[
            "merge",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
        None,
    );
    let stderr = text(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("host b: its session starts 8999999999999999000 ns after the earliest host's, so 1 of its lines start later than an XSpace holds"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ----- gzip bombs -----

/// Every command on gzip bombs (of Chrome events, of one huge XSpace plane, of a plane that
/// declares more than an XSpace holds, of Poplar JSON): each is refused with a message naming
/// the file, the limit and how to raise it; the peak stays under 64 times the compressed input
/// plus the base; nothing is left behind.
#[test]
fn gzip_bombs_are_refused_within_the_bound() {
    let dir = scratch("bombs");
    let bombs = conformance::limits::gzip_bombs(384);
    let mut failures = Vec::new();
    let mut table = String::new();
    for conformance::limits::GzipBomb {
        file_name,
        bytes,
        message,
    } in bombs
    {
        let input = dir.join(file_name);
        std::fs::write(&input, &bytes).unwrap();
        let len = bytes.len() as u64;
        drop(bytes);
        let file = input.to_str().unwrap().to_owned();
        let out = dir.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let o = |name: &str| out.join(name).display().to_string();
        let commands: Vec<Vec<String>> = vec![
            vec!["inspect".into(), file.clone()],
            vec!["validate".into(), file.clone()],
            vec!["dump".into(), file.clone()],
            vec!["report".into(), file.clone()],
            vec!["convert".into(), file.clone(), o("out.json")],
            vec!["convert".into(), file.clone(), o("out.xplane.pb")],
            vec![
                "convert".into(),
                file.clone(),
                o("parquet"),
                "--to".into(),
                "parquet".into(),
            ],
        ];
        let bound = FACTOR * len + BASE;
        for args in commands {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = profkit_measured(&args, Stdin::Bytes(&[]));
            table.push_str(&format!(
                "{file_name:<24} {:<10} {:>10} {:>6.1}x of {} exit {:?}\n",
                args[0],
                mb(run.peak),
                run.peak as f64 / len as f64,
                mb(len),
                run.code
            ));
            // `report` does not read Poplar profiles: a usage error, at once.
            let usage = args[0] == "report" && file_name.starts_with("graph");
            if run.code != Some(if usage { 2 } else { 1 }) {
                failures.push(format!("{args:?}: exit {:?}: {}", run.code, run.stderr));
            } else if !(usage || run.stderr.contains(&file) && run.stderr.contains(message)) {
                failures.push(format!("{args:?}: expected {message:?}: {}", run.stderr));
            }
            if run.peak > bound {
                failures.push(format!(
                    "{args:?}: peak {} over the bound {} (64 x {len} bytes + {})",
                    mb(run.peak),
                    mb(bound),
                    mb(BASE)
                ));
            }
            let left: Vec<_> = std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            if !left.is_empty() {
                failures.push(format!("{args:?}: left behind {left:?}"));
                let _ = std::fs::remove_dir_all(&out);
                std::fs::create_dir_all(&out).unwrap();
            }
        }
        let _ = std::fs::remove_file(&input);
    }
    eprintln!("{table}");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Paddle's message budget refuses a dense file with a message that says how to read it anyway;
/// `--paddle-bytes-per-message` (or its environment variable) lowers the budget, 0 turns it off.
#[test]
fn the_paddle_message_budget_can_be_lowered() {
    let dir = scratch("paddle-budget");
    let case = conformance::limits::cases()
        .into_iter()
        .find(|c| c.refused && c.file_name.ends_with(".paddle_trace.pb"))
        .unwrap();
    let input = dir.join(case.file_name);
    std::fs::write(&input, case.bytes(64 << 10)).unwrap();
    let file = input.to_str().unwrap();
    let run = profkit(&["inspect", file], None);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("more than the budget of one per 20 bytes")
            && stderr.contains("--paddle-bytes-per-message N")
            && stderr.contains("PROFKIT_PADDLE_BYTES_PER_MESSAGE"),
        "{stderr}"
    );
    for args in [
        &["inspect", file, "--paddle-bytes-per-message", "0"][..],
        &["inspect", file, "--paddle-bytes-per-message", "2"],
        &["report", file, "--paddle-bytes-per-message", "1"],
    ] {
        let run = profkit(args, None);
        assert!(run.status.success(), "{args:?}: {}", text(&run.stderr));
    }
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(["inspect", file])
        .env("PROFKIT_PADDLE_BYTES_PER_MESSAGE", "0")
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each fault of a gzip input has its own message, naming the input (never the output), for
/// every format and command: a bad CRC, a bad length, trailing data, a cut.
#[test]
fn each_gzip_fault_names_the_input() {
    use flate2::Compression;
    use flate2::write::GzEncoder;
    let dir = scratch("gzip-faults");
    let gz = |data: &[u8]| {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    let inputs = [
        ("space.xplane.pb.gz", "xplane/gpu-device/input.xplane.pb"),
        ("trace.json.gz", "chrome/paddle-sample/input.json"),
        ("graph.json.gz", "poplar/graph-complete/input.json"),
    ];
    let mut failures = Vec::new();
    for (file_name, sample) in inputs {
        let good = gz(&std::fs::read(conformance().join(sample)).unwrap());
        let n = good.len();
        let mut crc = good.clone();
        crc[n - 8] ^= 1;
        let mut size = good.clone();
        size[n - 1] ^= 1;
        let mut trailing = good.clone();
        trailing.extend(b"junk");
        let cut = good[..n - 20].to_vec();
        for (bytes, message) in [
            (crc, "bad gzip CRC in member 1"),
            (size, "bad gzip length in member 1"),
            (trailing, "trailing data after the gzip stream"),
            (cut, "truncated gzip: the input ends at compressed byte"),
        ] {
            let input = dir.join(file_name);
            std::fs::write(&input, &bytes).unwrap();
            let file = input.to_str().unwrap();
            let out_json = dir.join("out.json");
            let out_pb = dir.join("out.xplane.pb");
            let mut commands = vec![
                vec!["inspect", file],
                vec!["validate", file],
                vec!["convert", file, out_json.to_str().unwrap()],
                vec!["convert", file, out_pb.to_str().unwrap()],
            ];
            if !file_name.starts_with("graph") {
                commands.push(vec!["report", file]);
            }
            for args in commands {
                let run = profkit(&args, None);
                let stderr = text(&run.stderr);
                if run.status.code() != Some(1)
                    || !stderr.contains(&format!("profkit: {file}: "))
                    || !stderr.contains(message)
                    || stderr.contains("cannot write output")
                {
                    failures.push(format!("{args:?}: {:?}: {stderr}", run.status.code()));
                }
                if out_json.exists() || out_pb.exists() {
                    failures.push(format!("{args:?}: left an output"));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

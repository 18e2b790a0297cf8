//! Bounded resources: standard input that is no profile is refused as it arrives, and hostile
//! inputs of every format (the cases under `conformance/limits/`) keep every command's peak
//! memory under the documented bound (docs/cli.md, "Limits"): 64 times the input, plus a fixed
//! base for the program itself.
//!
//! The peak is the child's own maximum resident set, which `wait4` returns for the one child it
//! reaps (so tests running in parallel do not see each other's children). This is a memory
//! bound, not a timing threshold.

// wait4 is the one call here that is not safe Rust; it only fills the two values it is given.
#![allow(unsafe_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What the program itself takes whatever the input (code, buffers, the allocator's arenas).
const BASE: u64 = 64 << 20;

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

fn profkit_measured(args: &[&str], stdin: Stdin<'_>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
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
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: a zeroed rusage is a valid value of the plain C struct; wait4 writes only to the
    // status and rusage it is given, both alive for the call.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let _ = writer.join();
    let stderr = reader.join().unwrap();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    // Linux gives ru_maxrss in KiB.
    let peak = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    Run { code, stderr, peak }
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

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-limits-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

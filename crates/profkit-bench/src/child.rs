//! One measurement in a fresh child process: the bench binary runs itself again with
//! `--measure` and the arguments of the measurement, and the child prints `key=value` words
//! ([`print`](fn@print), read by [`run`]) or, where a figure is not a whole number, one JSON line
//! ([`print_json`], read by [`run_json`]; [`json_of`] reads such a line from any program, a
//! Python peer say).
//!
//! ```no_run
//! use profkit_bench::child;
//!
//! if let Some(args) = child::measure_args() {
//!     // In the child: measure what `args` names, then print the figures.
//!     child::print(&[("events", 10), ("heap_peak", 4096)]);
//!     return;
//! }
//! let figures = child::run(&["stream", "data.pb"]).unwrap();
//! let events = figures.get("events").unwrap();
//! # let _ = events;
//! ```

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The arguments after `--measure` when this process is a measuring child, else `None`.
pub fn measure_args() -> Option<Vec<String>> {
    let mut args = std::env::args().skip_while(|a| a != "--measure");
    args.next()?;
    Some(args.collect())
}

/// The arguments of a child that measures a mode on a file (`--measure MODE FILE`, as
/// [`run_mode`] starts it), or `None` when this process is not a measuring child.
pub fn mode_and_file() -> Option<Result<(String, PathBuf), String>> {
    let args = measure_args()?;
    Some(match <[String; 2]>::try_from(args) {
        Ok([mode, file]) => Ok((mode, PathBuf::from(file))),
        Err(_) => Err("--measure needs a mode and a file".into()),
    })
}

/// Runs this binary again as `--measure MODE FILE` (see [`mode_and_file`]) and reads its figures.
pub fn run_mode(mode: &str, file: &Path) -> Result<BTreeMap<String, u64>, String> {
    run(&[OsStr::new(mode), file.as_os_str()])
}

/// Prints the child's figures as one line of `key=value` words.
pub fn print(figures: &[(&str, u64)]) {
    let words: Vec<String> = figures.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("{}", words.join(" "));
}

/// Runs this binary again as `--measure ARGS...` and reads the `key=value` words it printed.
pub fn run<S: AsRef<OsStr>>(args: &[S]) -> Result<BTreeMap<String, u64>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .arg("--measure")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let what: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
        return Err(format!(
            "measuring {}: {text}{}",
            what.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(parse(&text))
}

/// Prints the child's figures as one line of JSON.
pub fn print_json(figures: &serde_json::Value) {
    println!("{figures}");
}

/// Runs this binary again as `--measure ARGS...` and reads the JSON line it printed last (see
/// [`print_json`]).
pub fn run_json<S: AsRef<OsStr>>(args: &[S]) -> Result<serde_json::Value, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    json_of(Command::new(exe).arg("--measure").args(args))
}

/// Runs `command` and reads the last line it printed as JSON; a failed run is an error with what
/// it wrote to stderr.
pub fn json_of(command: &mut Command) -> Result<serde_json::Value, String> {
    let out = command.output().map_err(|e| {
        format!(
            "cannot run {}: {e}",
            command.get_program().to_string_lossy()
        )
    })?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).map_err(|e| format!("the child printed {last:?}: {e}"))
}

/// The `key=value` words of `text` whose values are whole numbers.
fn parse(text: &str) -> BTreeMap<String, u64> {
    text.split_whitespace()
        .filter_map(|w| {
            let (k, v) = w.split_once('=')?;
            Some((k.to_owned(), v.parse().ok()?))
        })
        .collect()
}

/// The figure `key` of a child's answer, or an error naming what is missing.
pub fn figure(figures: &BTreeMap<String, u64>, key: &str) -> Result<u64, String> {
    figures
        .get(key)
        .copied()
        .ok_or_else(|| format!("the child did not report {key}: {figures:?}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn words() {
        let f = super::parse("events=3 heap_peak=40 junk x=y\n");
        assert_eq!(f.len(), 2);
        assert_eq!(super::figure(&f, "events"), Ok(3));
        assert!(super::figure(&f, "vm_hwm").is_err());
    }

    #[test]
    fn json_line() {
        let sh = |script: &str| {
            let mut c = std::process::Command::new("sh");
            c.args(["-c", script]);
            super::json_of(&mut c)
        };
        let v = sh(r#"echo log; echo '{"seconds": 1.5, "vmhwm_kb": 7}'"#);
        assert_eq!(v.map(|v| v["vmhwm_kb"].as_u64()), Ok(Some(7)));
        assert!(sh("echo not json").is_err());
        assert_eq!(sh("echo broken >&2; exit 3"), Err("broken\n".to_owned()));
    }
}

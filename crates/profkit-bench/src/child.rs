//! One measurement in a fresh child process: the bench binary runs itself again with
//! `--measure` and the arguments of the measurement, and the child prints `key=value` words.
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
}

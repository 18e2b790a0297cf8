//! Golden-file conformance runner for the profkit format crates.
//!
//! The directory `conformance/<format>/<case>/` holds one case: its input file(s), the expected
//! outputs, and nothing else that the runner owns. A [`Format`] handler, chosen by the name of the
//! format directory, reads a case's input and produces a set of named outputs; the runner compares
//! each with the file of the same name in the case directory and reports a line diff on mismatch.
//! With [`Mode::Bless`] (`BLESS=1 cargo test -p conformance`) it rewrites the expectations instead,
//! so that the change shows up in `git diff` for review.
//!
//! A handler may also generate inputs (see [`Format::generated_inputs`]): the runner checks that
//! the files on disk match what the generator makes today, and blessing rewrites them too.
//!
//! ```
//! use conformance::{Mode, run_all};
//! let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
//! let report = run_all(root, Mode::Check, Some("xplane/sample-myhost"));
//! assert_eq!(report.cases, 1);
//! assert!(report.failures.is_empty(), "{report}");
//! ```

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub mod chrome;
pub mod diff;
pub mod limits;
pub mod paddle;
pub mod paddle_cases;
pub mod paddle_summary;
pub mod poplar;
pub mod xdl;
pub mod xdl_cases;
pub mod xplane;
pub mod xplane_cases;
pub mod xplane_device;
pub mod xprof_memory_viewer;
pub mod xprof_op_profile;
pub mod xprof_tools;

/// The outputs of one case, by file name.
pub type Outputs = BTreeMap<String, Vec<u8>>;

/// An input file a generator makes for a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// The case directory name, for example `stat-kinds`.
    pub case: String,
    /// The file name inside the case directory, for example `input.xplane.pb`.
    pub file: String,
    /// The file's contents.
    pub contents: Vec<u8>,
}

/// How one format turns a case directory into outputs.
pub trait Format {
    /// The format directory name under `conformance/`, for example `xplane`.
    fn name(&self) -> &'static str;

    /// Every file name [`Format::run`] may produce. A file with one of these names that a run did
    /// not produce is a stale expectation: reported, and removed when blessing.
    fn output_names(&self) -> &'static [&'static str];

    /// Runs the case in `case_dir`. `Err` means the case could not run or broke an invariant
    /// that is asserted rather than recorded (a re-encoding that changes the data, say).
    fn run(&self, case_dir: &Path) -> Result<Outputs, String>;

    /// The inputs this format builds itself, if any, so that they can be checked and regenerated.
    fn generated_inputs(&self) -> Vec<GeneratedFile> {
        Vec::new()
    }
}

/// Every format handler, one per directory under `conformance/`.
pub fn formats() -> Vec<Box<dyn Format>> {
    vec![
        Box::new(xplane::XPlaneFormat),
        Box::new(xdl::XdlFormat),
        Box::new(poplar::PoplarFormat),
        Box::new(paddle::PaddleFormat),
        Box::new(chrome::ChromeFormat),
        Box::new(xplane_device::XPlaneDeviceFormat),
    ]
}

/// The handler for the format directory named `name`.
pub fn format_named(name: &str) -> Option<Box<dyn Format>> {
    formats().into_iter().find(|f| f.name() == name)
}

/// Directories under `conformance/` that hold tooling rather than cases.
pub const NON_FORMAT_DIRS: &[&str] = &[
    "src",
    "tests",
    "xprof",
    "tensorflow",
    "target",
    "arrow",
    "python",
    "engines",
    "torch",
    "xprof-tools",
];

/// Whether to compare with the expectations or rewrite them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Compare, and fail on any difference or missing file.
    Check,
    /// Rewrite generated inputs and expectations that differ, and remove stale ones.
    Bless,
}

impl Mode {
    /// `Bless` when the environment variable `BLESS` is set to anything but empty or `0`.
    pub fn from_env() -> Mode {
        match std::env::var_os("BLESS") {
            Some(v) if !v.is_empty() && v != "0" => Mode::Bless,
            _ => Mode::Check,
        }
    }
}

/// One failed check: which case (or directory) and what went wrong, diff included.
#[derive(Clone, Debug)]
pub struct Failure {
    /// `<format>/<case>`, or the directory the problem is about.
    pub case: String,
    /// What went wrong, possibly several lines.
    pub message: String,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Number of cases run.
    pub cases: usize,
    /// Files written or removed while blessing, relative to the conformance root.
    pub blessed: Vec<String>,
    /// Every failure.
    pub failures: Vec<Failure>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for file in &self.blessed {
            writeln!(f, "blessed {file}")?;
        }
        for failure in &self.failures {
            writeln!(f, "FAILED {}:", failure.case)?;
            for line in failure.message.lines() {
                writeln!(f, "    {line}")?;
            }
        }
        write!(
            f,
            "{} cases, {} failures, {} files blessed",
            self.cases,
            self.failures.len(),
            self.blessed.len()
        )
    }
}

impl Report {
    fn fail(&mut self, case: impl Into<String>, message: impl Into<String>) {
        self.failures.push(Failure {
            case: case.into(),
            message: message.into(),
        });
    }
}

/// Runs every format directory under `root` (the `conformance/` directory). `filter`, when given,
/// keeps only cases whose `<format>/<case>` name contains it.
pub fn run_all(root: &Path, mode: Mode, filter: Option<&str>) -> Report {
    let mut report = Report::default();
    let entries = match sorted_dirs(root) {
        Ok(entries) => entries,
        Err(e) => {
            report.fail(root.display().to_string(), e);
            return report;
        }
    };
    for dir in entries {
        let name = file_name(&dir);
        if NON_FORMAT_DIRS.contains(&name.as_str()) || name.starts_with('.') {
            continue;
        }
        match format_named(&name) {
            Some(format) => run_format(root, format.as_ref(), mode, filter, &mut report),
            // A filtered run is about the cases it names; unknown directories wait for a full run.
            None if filter.is_some() => {}
            None => report.fail(
                name.clone(),
                format!(
                    "no handler for format directory `{name}`: add one to conformance::formats() \
                     (or to NON_FORMAT_DIRS if it holds tooling)"
                ),
            ),
        }
    }
    for format in formats() {
        if filter.is_none() && !root.join(format.name()).is_dir() {
            report.fail(
                format.name(),
                "the format has a handler but no directory of cases",
            );
        }
    }
    report
}

/// Runs the cases of one format: generated inputs first, then every case directory.
pub fn run_format(
    root: &Path,
    format: &dyn Format,
    mode: Mode,
    filter: Option<&str>,
    report: &mut Report,
) {
    let format_dir = root.join(format.name());
    let keep = |case: &str| filter.is_none_or(|f| format!("{}/{case}", format.name()).contains(f));

    for generated in format.generated_inputs() {
        if !keep(&generated.case) {
            continue;
        }
        let rel = format!("{}/{}/{}", format.name(), generated.case, generated.file);
        let path = format_dir.join(&generated.case).join(&generated.file);
        let on_disk = std::fs::read(&path).ok();
        if on_disk.as_deref() == Some(generated.contents.as_slice()) {
            continue;
        }
        match mode {
            Mode::Bless => match write_file(&path, &generated.contents) {
                Ok(()) => report.blessed.push(rel),
                Err(e) => report.fail(rel, e),
            },
            Mode::Check => report.fail(
                rel,
                format!(
                    "generated input {} the generator's output; rerun the generator \
                     (`cargo run -p conformance --bin make-{}-cases`) or bless",
                    if on_disk.is_some() {
                        "differs from"
                    } else {
                        "is missing, unlike"
                    },
                    format.name()
                ),
            ),
        }
    }

    let cases = match sorted_dirs(&format_dir) {
        Ok(cases) => cases,
        Err(e) => {
            report.fail(format.name(), e);
            return;
        }
    };
    let readme = std::fs::read_to_string(format_dir.join("README.md")).unwrap_or_default();
    for case_dir in cases {
        let case = file_name(&case_dir);
        if !keep(&case) {
            continue;
        }
        report.cases += 1;
        let label = format!("{}/{case}", format.name());
        if !readme.contains(&format!("`{case}`")) {
            report.fail(
                &label,
                format!(
                    "{}/README.md has no line for `{case}`: say where its input came from",
                    format.name()
                ),
            );
        }
        run_case(format, &case_dir, &label, mode, report);
    }
}

/// Runs one case and compares (or blesses) its outputs.
pub fn run_case(
    format: &dyn Format,
    case_dir: &Path,
    label: &str,
    mode: Mode,
    report: &mut Report,
) {
    let outputs = match format.run(case_dir) {
        Ok(outputs) => outputs,
        Err(e) => {
            report.fail(label, e);
            return;
        }
    };
    for (name, actual) in &outputs {
        let path = case_dir.join(name);
        let rel = format!("{label}/{name}");
        let expected = std::fs::read(&path).ok();
        if expected.as_deref() == Some(actual.as_slice()) {
            continue;
        }
        match (mode, expected) {
            (Mode::Bless, _) => match write_file(&path, actual) {
                Ok(()) => report.blessed.push(rel),
                Err(e) => report.fail(rel, e),
            },
            (Mode::Check, None) => report.fail(
                label,
                format!("expected file {name} is missing; run `BLESS=1 cargo test -p conformance` and review it"),
            ),
            (Mode::Check, Some(expected)) => report.fail(
                label,
                format!(
                    "{name} differs from the expectation (- expected, + actual):\n{}",
                    diff::diff(
                        &String::from_utf8_lossy(&expected),
                        &String::from_utf8_lossy(actual)
                    )
                ),
            ),
        }
    }
    for name in format.output_names() {
        let path = case_dir.join(name);
        if outputs.contains_key(*name) || !path.exists() {
            continue;
        }
        let rel = format!("{label}/{name}");
        match mode {
            Mode::Bless => match std::fs::remove_file(&path) {
                Ok(()) => report.blessed.push(format!("{rel} (removed)")),
                Err(e) => report.fail(rel, format!("cannot remove stale expectation: {e}")),
            },
            Mode::Check => report.fail(
                label,
                format!(
                    "{name} is an expectation this case no longer produces; bless to remove it"
                ),
            ),
        }
    }
}

/// The subdirectories of `dir`, sorted by name.
fn sorted_dirs(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn write_file(path: &Path, contents: &[u8]) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes every generated input of `format` under `root` (the `conformance/` directory) and
/// returns the paths written, relative to `root`.
pub fn write_generated(root: &Path, format: &dyn Format) -> Result<Vec<String>, String> {
    let mut written = Vec::new();
    for generated in format.generated_inputs() {
        let path = root
            .join(format.name())
            .join(&generated.case)
            .join(&generated.file);
        write_file(&path, &generated.contents)?;
        written.push(format!(
            "{}/{}/{}",
            format.name(),
            generated.case,
            generated.file
        ));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upper-cases `in.txt` into `out.txt`; a case holding `bad` fails to run.
    struct Upper;

    impl Format for Upper {
        fn name(&self) -> &'static str {
            "upper"
        }
        fn output_names(&self) -> &'static [&'static str] {
            &["out.txt", "old.txt"]
        }
        fn run(&self, case_dir: &Path) -> Result<Outputs, String> {
            let input =
                std::fs::read_to_string(case_dir.join("in.txt")).map_err(|e| e.to_string())?;
            if input.contains("bad") {
                return Err("bad input".into());
            }
            Ok(Outputs::from([(
                "out.txt".to_owned(),
                input.to_uppercase().into_bytes(),
            )]))
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("conformance-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn run(case_dir: &Path, mode: Mode) -> Report {
        let mut report = Report::default();
        run_case(&Upper, case_dir, "upper/case", mode, &mut report);
        report
    }

    #[test]
    fn missing_expectation_fails_then_blesses() {
        let dir = scratch("missing");
        std::fs::write(dir.join("in.txt"), "abc\n").unwrap();
        let report = run(&dir, Mode::Check);
        assert_eq!(report.failures.len(), 1);
        assert!(report.failures[0].message.contains("out.txt is missing"));

        let report = run(&dir, Mode::Bless);
        assert!(report.failures.is_empty());
        assert_eq!(report.blessed, ["upper/case/out.txt"]);
        assert_eq!(
            std::fs::read_to_string(dir.join("out.txt")).unwrap(),
            "ABC\n"
        );
        assert!(run(&dir, Mode::Check).failures.is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn difference_is_shown_as_a_diff() {
        let dir = scratch("diff");
        std::fs::write(dir.join("in.txt"), "one\ntwo\n").unwrap();
        std::fs::write(dir.join("out.txt"), "ONE\nTOO\n").unwrap();
        let report = run(&dir, Mode::Check);
        let message = &report.failures[0].message;
        assert!(message.contains("out.txt differs"), "{message}");
        assert!(message.contains("-TOO\n+TWO"), "{message}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn stale_expectation_fails_then_is_removed() {
        let dir = scratch("stale");
        std::fs::write(dir.join("in.txt"), "x").unwrap();
        std::fs::write(dir.join("out.txt"), "X").unwrap();
        std::fs::write(dir.join("old.txt"), "left over").unwrap();
        let report = run(&dir, Mode::Check);
        assert!(
            report.failures[0]
                .message
                .contains("old.txt is an expectation")
        );
        run(&dir, Mode::Bless);
        assert!(!dir.join("old.txt").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_case_that_cannot_run_fails_even_when_blessing() {
        let dir = scratch("bad");
        std::fs::write(dir.join("in.txt"), "bad").unwrap();
        let report = run(&dir, Mode::Bless);
        assert_eq!(report.failures[0].message, "bad input");
        std::fs::remove_dir_all(dir).unwrap();
    }
}

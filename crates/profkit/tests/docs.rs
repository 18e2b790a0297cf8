//! Every `console` example of README.md and docs/*.md runs, and prints what the page says.
//!
//! A `console` block is a shell session: `$ command` lines (a trailing `\` continues one), each
//! followed by the output it prints (standard output, then standard error). A line `...` stands
//! for any number of lines; a command followed by no output may print anything but must succeed
//! unless it is a `validate` (whose exit code is the verdict). The commands of one block run in
//! order in one temporary directory holding a link to `conformance/` (as the pages run them from
//! the repository root, but without writing into it), with this build's `profkit` first on the
//! PATH. Commands that need what a test does not have (TensorBoard, a plugin built by cargo)
//! are left out, each named in `SKIPPED` with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Commands not run, by a word they contain, and why.
const SKIPPED: &[(&str, &str)] = &[
    ("tensorboard", "needs TensorBoard"),
    ("cargo ", "builds crates: the plugin tests run the plugin"),
    ("target/debug/", "needs the plugin built by cargo"),
    ("bomb.json.gz", "the gzip bomb is made by the limits tests"),
    (
        "session.xplane.pb",
        "made by the plugin run, which needs the plugin built",
    ),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Step {
    command: String,
    expected: Vec<String>,
}

/// The `console` blocks of a page: (line of the block, its steps).
fn blocks(text: &str) -> Vec<(usize, Vec<Step>)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        if line.trim() != "```console" {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let mut steps: Vec<Step> = Vec::new();
        let mut continued = false;
        for (_, line) in lines.by_ref() {
            let line = line.get(indent..).unwrap_or(line.trim_start());
            if line.trim_start().starts_with("```") {
                break;
            }
            if continued && let Some(step) = steps.last_mut() {
                step.command.push('\n');
                step.command.push_str(line);
                continued = line.ends_with('\\');
                continue;
            }
            if let Some(command) = line.strip_prefix("$ ") {
                steps.push(Step {
                    command: command.to_owned(),
                    expected: Vec::new(),
                });
                continued = command.ends_with('\\');
            } else if let Some(step) = steps.last_mut() {
                step.expected.push(line.to_owned());
            }
        }
        out.push((n + 1, steps));
    }
    out
}

/// Whether `got` is what `want` shows (`...` lines match any lines).
fn matches(want: &[String], got: &[&str]) -> bool {
    match want.split_first() {
        None => got.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=got.len()).any(|skip| matches(rest, got.get(skip..).unwrap_or_default()))
        }
        Some((first, rest)) => got
            .split_first()
            .is_some_and(|(line, more)| line.trim_end() == first.trim_end() && matches(rest, more)),
    }
}

fn run_page(page: &str, failures: &mut Vec<String>, ran: &mut usize) {
    let path = repo().join(page);
    let text = std::fs::read_to_string(&path).unwrap();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_profkit"));
    let bin_dir = bin.parent().unwrap().to_path_buf();
    let path_var = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (line, steps) in blocks(&text) {
        let dir = std::env::temp_dir().join(format!(
            "profkit-docs-{}-{}-{line}",
            std::process::id(),
            page.replace('/', "-")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(
            repo().join("conformance").canonicalize().unwrap(),
            dir.join("conformance"),
        )
        .unwrap();
        for step in &steps {
            if let Some((_, why)) = SKIPPED.iter().find(|(w, _)| step.command.contains(w)) {
                eprintln!("{page}:{line}: skipped ({why}): {}", step.command);
                continue;
            }
            *ran += 1;
            let done = Command::new("sh")
                .arg("-c")
                .arg(format!("{{ {}\n}} 2>&1", step.command))
                .current_dir(&dir)
                .env("PATH", &path_var)
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&done.stdout);
            let got: Vec<&str> = stdout.lines().collect();
            let validate = step.command.contains("profkit validate");
            if step.expected.is_empty() {
                if !done.status.success() && !validate {
                    failures.push(format!(
                        "{page}:{line}: `{}` failed ({}):\n{stdout}",
                        step.command, done.status
                    ));
                }
                continue;
            }
            if !matches(&step.expected, &got) {
                failures.push(format!(
                    "{page}:{line}: `{}` printed\n{stdout}\nthe page shows\n{}",
                    step.command,
                    step.expected.join("\n")
                ));
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn console_examples_print_what_the_pages_say() {
    let mut pages = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| format!("docs/{}", e.file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let (mut failures, mut ran) = (Vec::new(), 0);
    for page in &pages {
        run_page(page, &mut failures, &mut ran);
    }
    assert!(ran >= 45, "only {ran} commands found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_matcher_reads_ellipses() {
    let want: Vec<String> = ["a", "...", "c"].map(String::from).to_vec();
    assert!(matches(&want, &["a", "c"]));
    assert!(matches(&want, &["a", "b", "b", "c"]));
    assert!(!matches(&want, &["a", "b"]));
    assert!(!matches(&want, &["a", "c", "d"]));
}

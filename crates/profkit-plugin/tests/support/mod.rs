//! Helpers shared by the integration tests that compile C against the plugin ABI: profkit-plugin's
//! own, and the CLI's (`crates/profkit/tests/plugin.rs` includes this file by path).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// profkit-plugin's directory, from either crate's tests (both sit in `crates/`).
pub fn plugin_crate() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../profkit-plugin")
}

/// The crate's `include/` directory.
pub fn include_dir() -> PathBuf {
    plugin_crate().join("include")
}

/// The C test plugins' directory.
pub fn plugins_dir() -> PathBuf {
    plugin_crate().join("tests/plugins")
}

/// A scratch directory for the tests of this package.
pub fn scratch() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(concat!("plugin-tests-", env!("CARGO_PKG_NAME")));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A name no other call uses (tests run in parallel and compile the same sources; and a plugin
/// stays loaded for the life of the process, so each test loads its own copy).
pub fn unique(stem: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("{stem}-{}-{n}", std::process::id())
}

/// The C compiler: `$CC`, else `cc`.
pub fn cc() -> Command {
    Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
}

/// Compiles `args` (sources and flags) to `out`, panicking with the compiler's output on failure.
pub fn compile(out: &Path, args: &[&str]) {
    let output = cc()
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
        .arg(include_dir())
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .expect("a C compiler (cc, or $CC)");
    assert!(
        output.status.success(),
        "compiling {}: {}",
        out.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Builds the C test plugin `tests/plugins/broken.c` in mode `mode` (`null_fn`, `bad-device`, …)
/// as a shared library of its own.
pub fn c_plugin(mode: &str) -> PathBuf {
    let out = scratch().join(format!("lib{}.so", unique(&format!("broken_{mode}"))));
    let source = plugins_dir().join("broken.c");
    compile(
        &out,
        &[
            "-shared",
            "-fPIC",
            &format!("-DMODE_{}", mode.to_uppercase().replace('-', "_")),
            source.to_str().unwrap(),
        ],
    );
    out
}

/// Runs `check` on every case of a table, as many at a time as there are cores (as the test
/// harness runs tests), and fails once, listing every problem under the `name` of its case.
/// `check` returns the problems it found; a panic inside it counts as one.
#[track_caller]
pub fn run_cases<C: Sync>(
    cases: &[C],
    name: impl Fn(&C) -> &str + Sync,
    check: impl Fn(&C) -> Vec<String> + Sync,
) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut problems: Vec<(usize, String)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(cases.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut found = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let Some(case) = cases.get(i) else {
                            return found;
                        };
                        let run =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(case)));
                        let problems = run.unwrap_or_else(|panic| {
                            let text = panic
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()));
                            vec![format!("panicked: {}", text.unwrap_or_default())]
                        });
                        found.extend(problems.into_iter().map(|p| (i, p)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    problems.sort_by_key(|(i, _)| *i);
    let text: Vec<String> = problems
        .iter()
        .filter_map(|(i, p)| Some(format!("{}: {p}", name(cases.get(*i)?))))
        .collect();
    assert!(
        text.is_empty(),
        "{} of {} cases failed:\n{}",
        problems
            .iter()
            .map(|(i, _)| i)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        cases.len(),
        text.join("\n")
    );
}

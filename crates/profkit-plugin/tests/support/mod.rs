//! Helpers shared by the integration tests: compiling C with the system compiler.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crate's `include/` directory.
pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// The C test plugins' directory.
pub fn plugins_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugins")
}

/// A scratch directory for this test binary.
pub fn scratch() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("profkit-plugin-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir
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

/// Builds the C test plugin `tests/plugins/broken.c` in mode `mode` as a shared library with a
/// name unique to `tag` (a plugin stays loaded for the life of the process, so each test loads
/// its own copy).
pub fn c_plugin(mode: &str, tag: &str) -> PathBuf {
    let out = scratch().join(format!("libbroken_{mode}_{tag}.so"));
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

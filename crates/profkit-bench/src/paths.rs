//! Where benchmarks find the workspace and keep their generated data.

use std::path::{Path, PathBuf};

/// The workspace root (two levels above this crate's manifest).
pub fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// `target/bench-data/`, honouring `CARGO_TARGET_DIR`. Generated inputs live there so that the
/// peers outside Rust read exactly the same bytes, and so that they are never committed.
pub fn data_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
        .join("bench-data")
}

/// Writes `bytes` to `path` unless the file already holds exactly them, so that a rerun keeps
/// the file (and the page cache) of the last one.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::write(path, bytes)
}

/// Writes a benchmark's results as pretty JSON to `data_dir()/name` and says where (or why not).
pub fn write_results(name: &str, results: &serde_json::Value) {
    let out = data_dir().join(name);
    match std::fs::write(&out, format!("{results:#}\n")) {
        Ok(()) => println!("  results written to {}", out.display()),
        Err(e) => println!("  cannot write {}: {e}", out.display()),
    }
}

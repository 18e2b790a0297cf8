//! Every finding of a fuzz campaign stays fixed: each file under `fuzz/regressions/<target>/` goes
//! through the function of [`profkit_fuzz::TARGETS`] with that name (README.md says how to add one).

use std::path::{Path, PathBuf};

#[test]
fn every_finding_stays_fixed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut ran = 0;
    for dir in dirs {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let target = profkit_fuzz::TARGETS
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{}: no fuzz target of that name", dir.display()));
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            eprintln!("{name}: {}", file.display());
            (target.run)(&data);
            ran += 1;
        }
    }
    assert!(ran > 0, "no finding under {}", root.display());
}

//! Prepares the xplane cases for the xprof check (`conformance/xprof/check.sh`).
//!
//! `cargo run -p conformance --bin xprof-inputs -- OUT_DIR` writes, for every case under
//! `conformance/xplane/` whose input decodes, `OUT_DIR/<case>/input/<host>.xplane.pb` (the input as
//! it is) and `OUT_DIR/<case>/reencoded/<host>.xplane.pb` (decoded and encoded again by us), each in
//! its own folder as xprof wants. It prints one tab-separated line per file: case, variant
//! (`input` or `reencoded`), path; and `case`, `skip`, reason for inputs that do not decode.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use conformance::xplane::{INPUT, host_name};

fn main() -> ExitCode {
    let Some(out) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: xprof-inputs OUT_DIR");
        return ExitCode::from(2);
    };
    match run(&out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xprof-inputs: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(out: &Path) -> Result<(), String> {
    let cases_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("xplane");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&cases_dir)
        .map_err(|e| format!("cannot list {}: {e}", cases_dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.join(INPUT).is_file())
        .collect();
    cases.sort();
    for case_dir in cases {
        let case = case_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let input = case_dir.join(INPUT);
        let bytes =
            std::fs::read(&input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
        let space = match profkit_xplane::decode(bytes.clone()) {
            Ok(space) => space,
            Err(e) => {
                println!("{case}\tskip\tdoes not decode: {e}");
                continue;
            }
        };
        let file = format!("{}.xplane.pb", host_name(&case, Some(&space)));
        for (variant, contents) in [
            ("input", bytes),
            ("reencoded", profkit_xplane::encode(&space)),
        ] {
            let dir = out.join(&case).join(variant);
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let path = dir.join(&file);
            std::fs::write(&path, contents)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!("{case}\t{variant}\t{}", path.display());
        }
    }
    Ok(())
}

//! Writes the hostile inputs of `conformance::limits` and its gzip bombs into a directory, for
//! tests outside Rust (the Python package's): `DIR/<case>/<file>` for each case, `DIR/bombs/<file>`
//! for each bomb, and `DIR/cases.json` saying what each is.
//!
//! Usage: make-hostile-cases DIR [SIZE_BYTES] [BOMB_MEMBERS]   (defaults: 6 MiB, 384)

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: make-hostile-cases DIR [SIZE_BYTES] [BOMB_MEMBERS]");
        std::process::exit(2);
    };
    let size: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(6 << 20);
    let members: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(384);
    let mut manifest = Vec::new();
    for case in conformance::limits::cases() {
        let case_dir = dir.join(case.name);
        std::fs::create_dir_all(&case_dir)?;
        let file = case_dir.join(case.file_name);
        std::fs::write(&file, case.bytes(size))?;
        manifest.push(serde_json::json!({
            "name": case.name,
            "path": if case.xdl { case_dir.clone() } else { file },
            "refused": case.refused,
            "from": case.from,
            "bomb": false,
        }));
    }
    let bombs = dir.join("bombs");
    std::fs::create_dir_all(&bombs)?;
    for bomb in conformance::limits::gzip_bombs(members) {
        let file = bombs.join(bomb.file_name);
        std::fs::write(&file, &bomb.bytes)?;
        manifest.push(serde_json::json!({
            "name": bomb.file_name,
            "path": file,
            "refused": true,
            "from": null,
            "bomb": true,
            "message": bomb.message,
        }));
    }
    std::fs::write(
        dir.join("cases.json"),
        serde_json::to_string_pretty(&manifest).unwrap_or_default(),
    )
}

//! Writes the generated Paddle cases into `conformance/paddle/<case>/`.
//!
//! Run `cargo run -p conformance --bin make-paddle-cases`, then `BLESS=1 cargo test -p
//! conformance` to refresh the expectations, and review `git diff` before committing.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match conformance::write_generated(root, &conformance::paddle::PaddleFormat) {
        Ok(written) => {
            for path in &written {
                println!("wrote {path}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("make-paddle-cases: {e}");
            ExitCode::FAILURE
        }
    }
}

//! Writes the generated XDL cases into `conformance/xdl/<case>/input/`.
//!
//! Run `cargo run -p conformance --bin make-xdl-cases`, then `BLESS=1 cargo test -p conformance`
//! to refresh the expectations, and review `git diff` before committing.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match conformance::write_generated(root, &conformance::xdl::XdlFormat) {
        Ok(written) => {
            for path in &written {
                println!("wrote {path}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("make-xdl-cases: {e}");
            ExitCode::FAILURE
        }
    }
}

//! Writes what one of xprof's tools returns for the XSpaces given (one per host, gzipped or not)
//! to standard output, as `xspace_to_tool_data([paths], TOOL, ...)` returns it: the test hook of
//! `conformance/xprof/memory_profile_check.py`, until the CLI has `profkit xprof TOOL`.
//!
//!     cargo run -p profkit-xprof --example xprof_tool -- memory_profile IN.xplane.pb...
//!
//! Tools: `memory_profile`. Exit code 1 on an unreadable input, 2 on a usage error.

use std::io::Write;
use std::process::ExitCode;

use profkit_xplane::{ReadOptions, read_file};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((tool, paths)) = args.split_first() else {
        eprintln!("usage: xprof_tool TOOL IN...");
        return ExitCode::from(2);
    };
    let mut spaces = Vec::new();
    for path in paths {
        match read_file(path, ReadOptions::default()) {
            Ok(space) => spaces.push(space),
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let out = match tool.as_str() {
        "memory_profile" => profkit_xprof::tools::memory_profile::memory_profile_json(&spaces),
        _ => {
            eprintln!("unknown tool {tool} (known: memory_profile)");
            return ExitCode::from(2);
        }
    };
    match out {
        Ok(text) => {
            if std::io::stdout().write_all(text.as_bytes()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

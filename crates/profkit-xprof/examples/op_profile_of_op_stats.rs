//! Writes xprof's op profile of an OpStats file (as xprof caches it, `ALL_HOSTS.op_stats_v2.pb`)
//! to standard output: the op profile rendered from xprof's own OpStats, so that
//! `conformance/xprof/tools_check.py` can test the renderer apart from how OpStats is built.
//!
//!     cargo run -p profkit-xprof --example op_profile_of_op_stats -- OP_STATS.pb [program|category|provenance]
//!
//! Exit code 1 on an unreadable input, 2 on a usage error.

use std::io::Write;
use std::process::ExitCode;

use profkit_xprof::tools::op_profile::{Grouping, op_profile_json};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: op_profile_of_op_stats OP_STATS.pb [program|category|provenance]");
        return ExitCode::from(2);
    };
    let group_by = Grouping::from_option(args.get(1).map_or("program", String::as_str));
    let stats = match std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|b| profkit_xprof::op_stats::decode(&b).map_err(|e| e.to_string()))
    {
        Ok(stats) => stats,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(1);
        }
    };
    match op_profile_json(&stats, group_by) {
        Ok(text) => {
            if std::io::stdout().write_all(text.as_bytes()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            ExitCode::from(1)
        }
    }
}

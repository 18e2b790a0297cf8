//! Decodes a Paddle file for the real-client check (`conformance/paddle/check.py`) and prints, as
//! one JSON object, what the check compares: the format, whether the decoded message re-encodes
//! to the file's very bytes (so that no field went unread), and host nodes (node trees) or CPU
//! ranges (`Profile`) per thread.
//!
//! Usage: `cargo run -q -p conformance --bin paddle-decode -- FILE`

use std::collections::BTreeMap;
use std::process::ExitCode;

use profkit_events::paddle::{Format, legacy, nodetree};

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: paddle-decode FILE");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("paddle-decode: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match Format::detect(&bytes) {
        Some(Format::NodeTrees) => nodetree::decode_node_trees(&bytes).map(|t| {
            let threads: BTreeMap<String, usize> = nodetree::summarize(&t)
                .threads
                .iter()
                .map(|s| (s.thread_id.to_string(), s.host_nodes))
                .collect();
            serde_json::json!({
                "format": "node_trees",
                "reencodes": nodetree::encode_node_trees(&t) == bytes,
                "threads": threads,
                "problems": nodetree::validate(&t).len(),
            })
        }),
        Some(Format::Profile) => legacy::decode_profile(&bytes).map(|p| {
            let threads: BTreeMap<String, usize> = legacy::summarize(&p)
                .threads
                .iter()
                .map(|(t, n)| (t.to_string(), *n))
                .collect();
            serde_json::json!({
                "format": "profile",
                "reencodes": legacy::encode_profile(&p) == bytes,
                "threads": threads,
                "problems": legacy::validate(&p).len(),
            })
        }),
        None => {
            eprintln!("paddle-decode: {path}: not a Paddle profile");
            return ExitCode::FAILURE;
        }
    };
    match result {
        Ok(doc) => {
            println!("{doc}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("paddle-decode: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}

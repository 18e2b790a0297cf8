//! Every Chrome trace profkit writes (the `chrome.json` and `timeline.json` golden files of every
//! conformance case, xprof's and Paddle's own outputs beside them for comparison) is valid JSON
//! and follows the Trace Event Format: a `traceEvents` array of objects whose `ph` is a known
//! phase, with the fields that phase needs, of the types the format gives them.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if matches!(
            path.file_name().and_then(|n| n.to_str()),
            Some(
                "chrome.json"
                    | "timeline.json"
                    | "paddle-timeline.json"
                    | "xprof.trace_viewer.json"
            )
        ) {
            out.push(path);
        }
    }
}

fn check_event(event: &Value) -> Result<(), String> {
    let Value::Object(fields) = event else {
        return Err("an event is not an object".into());
    };
    if fields.is_empty() {
        return Ok(()); // the trailing `{}` xprof ends with
    }
    let ph = fields.get("ph").and_then(Value::as_str).ok_or("no ph")?;
    let number = |key: &str| -> Result<(), String> {
        match fields.get(key) {
            Some(Value::Number(_)) => Ok(()),
            other => Err(format!("{ph} event: {key} is {other:?}, not a number")),
        }
    };
    let integer = |key: &str| -> Result<(), String> {
        match fields.get(key) {
            Some(Value::Number(n)) if n.is_u64() || n.is_i64() => Ok(()),
            None if key == "tid" => Ok(()),
            other => Err(format!("{ph} event: {key} is {other:?}, not an integer")),
        }
    };
    let string = |key: &str| -> Result<(), String> {
        match fields.get(key) {
            Some(Value::String(_)) => Ok(()),
            other => Err(format!("{ph} event: {key} is {other:?}, not a string")),
        }
    };
    match ph {
        "X" => {
            string("name")?;
            integer("pid")?;
            integer("tid")?;
            number("ts")?;
            number("dur")?;
        }
        "i" | "I" => {
            string("name")?;
            integer("pid")?;
            number("ts")?;
            let scope = fields.get("s").and_then(Value::as_str).unwrap_or("t");
            if !matches!(scope, "t" | "p" | "g") {
                return Err(format!("instant scope {scope:?}"));
            }
        }
        "C" => {
            string("name")?;
            integer("pid")?;
            number("ts")?;
            let args = fields
                .get("args")
                .and_then(Value::as_object)
                .ok_or("C without args")?;
            if args.values().any(|v| !v.is_number()) {
                return Err("a counter value is not a number".into());
            }
        }
        "M" => {
            let name = fields
                .get("name")
                .and_then(Value::as_str)
                .ok_or("M without name")?;
            integer("pid")?;
            let args = fields
                .get("args")
                .and_then(Value::as_object)
                .ok_or("M without args")?;
            match name {
                "process_name" | "thread_name" => {
                    if !args.get("name").is_some_and(Value::is_string) {
                        return Err(format!("{name} without a string args.name"));
                    }
                }
                "process_sort_index" | "thread_sort_index" => {
                    if !args.get("sort_index").is_some_and(Value::is_number) {
                        return Err(format!("{name} without a numeric args.sort_index"));
                    }
                }
                other => return Err(format!("unknown metadata event {other:?}")),
            }
        }
        "s" | "t" | "f" => {
            // Flows, which the writer gives the events read from Chrome JSON's flows (and from
            // TSL's flow stats). Their id is a string or, as PyTorch writes it, a number.
            string("name")?;
            string("cat")?;
            match fields.get("id") {
                Some(Value::String(_)) => {}
                Some(Value::Number(n)) if n.is_u64() || n.is_i64() => {}
                other => return Err(format!("{ph} event: id is {other:?}")),
            }
            integer("pid")?;
            integer("tid")?;
            number("ts")?;
            if ph == "f" && fields.get("bp").and_then(Value::as_str) != Some("e") {
                return Err("a flow end without \"bp\": \"e\"".into());
            }
        }
        other => return Err(format!("phase {other:?} profkit never writes")),
    }
    if let Some(args) = fields.get("args") {
        if !args.is_object() {
            return Err("args is not an object".into());
        }
    }
    Ok(())
}

#[test]
fn every_chrome_trace_follows_the_trace_event_format() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
    let mut found = Vec::new();
    files(&root, &mut found);
    assert!(
        found.len() > 50,
        "the conformance outputs are missing ({})",
        found.len()
    );
    for path in found {
        let text = std::fs::read(&path).unwrap();
        let json: Value = serde_json::from_slice(&text)
            .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
        let events = json["traceEvents"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no traceEvents array", path.display()));
        for (i, event) in events.iter().enumerate() {
            check_event(event)
                .unwrap_or_else(|e| panic!("{}: traceEvents[{i}]: {e}", path.display()));
        }
    }
}

//! Names of any length: the text summaries of `inspect` and `validate` clip a long name with an
//! ellipsis (a column's width stays small), `--json` keeps it whole, `report` lays names out as
//! Paddle does (which cuts only inner rows' names), and nothing panics. A name of a million characters is valid protobuf and valid JSON.

mod common;

use std::path::{Path, PathBuf};

use common::{profkit, text};
use conformance::limits::{len_field, varint};

const LONG: usize = 1 << 20;

fn varint_field(number: u64, value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(number << 3, &mut out);
    varint(value, &mut out);
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-long-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn long_name() -> String {
    "n".repeat(LONG)
}

/// An XSpace of one plane whose one event and the plane itself have 1 MB names.
fn xspace() -> Vec<u8> {
    let name = long_name();
    let mut event = varint_field(1, 1);
    event.extend(varint_field(2, 5));
    event.extend(varint_field(3, 1000));
    let mut line = varint_field(1, 1);
    line.extend(len_field(2, b"thread"));
    line.extend(varint_field(3, 1_000_000));
    line.extend(len_field(4, &event));
    let mut metadata = varint_field(1, 1);
    metadata.extend(len_field(2, name.as_bytes()));
    let mut entry = varint_field(1, 1);
    entry.extend(len_field(2, &metadata));
    let mut plane = varint_field(1, 1);
    plane.extend(len_field(2, format!("/host:CPU{name}").as_bytes()));
    plane.extend(len_field(3, &line));
    plane.extend(len_field(4, &entry));
    let mut out = len_field(1, &plane);
    out.extend(len_field(4, name.as_bytes()));
    out
}

/// Runs `args` on `input` and checks it ends cleanly, every output line short (but for
/// `report`, which prints the names Paddle prints whole as Paddle does).
fn check_text(args: &[&str], input: &Path) {
    let mut all: Vec<&str> = args.to_vec();
    all.insert(1, input.to_str().unwrap());
    let run = profkit(&all, None);
    let stderr = text(&run.stderr);
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "{all:?}: {:?}: {stderr}",
        run.status
    );
    assert!(!stderr.contains("panicked"), "{all:?}: {stderr}");
    let stdout = text(&run.stdout);
    let name = input.to_str().unwrap();
    if args.first() == Some(&"report") {
        return;
    }
    for line in stdout.lines() {
        // The file's name plus a clipped name and the numbers around it.
        assert!(
            line.len() < name.len() + 800,
            "{all:?}: a line of {} bytes",
            line.len()
        );
    }
}

/// The name is kept whole in `--json`.
fn check_json(args: &[&str], input: &Path) {
    let mut all: Vec<&str> = args.to_vec();
    all.insert(1, input.to_str().unwrap());
    all.push("--json");
    let run = profkit(&all, None);
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "{all:?}: {}",
        text(&run.stderr)
    );
    assert!(
        text(&run.stdout).contains(&long_name()),
        "{all:?}: the whole name is not in the JSON"
    );
}

#[test]
fn an_xspace_with_a_long_name() {
    let dir = scratch("xspace");
    let input = dir.join("long.xplane.pb");
    std::fs::write(&input, xspace()).unwrap();
    let run = profkit(&["inspect", input.to_str().unwrap()], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let out = text(&run.stdout);
    assert!(
        out.contains(&format!("{}…", "n".repeat(119 - "/host:CPU".len()))),
        "{out}"
    );
    for args in [&["inspect"][..], &["validate"], &["report"]] {
        check_text(args, &input);
    }
    check_json(&["inspect"], &input);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_chrome_trace_with_a_long_name() {
    let dir = scratch("chrome");
    let input = dir.join("long.json");
    let name = long_name();
    std::fs::write(
        &input,
        format!(
            r#"{{"traceEvents":[{{"ph":"X","name":"{name}","ts":1,"dur":2,"pid":1,"tid":1}},{{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{{"name":"{name}"}}}}]}}"#
        ),
    )
    .unwrap();
    for args in [&["inspect"][..], &["validate"], &["report"]] {
        check_text(args, &input);
    }
    check_json(&["inspect"], &input);
    check_json(&["report"], &input);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_paddle_profile_with_a_long_name() {
    let dir = scratch("paddle");
    let input = dir.join("long.pb");
    let name = long_name();
    let mut event = len_field(1, name.as_bytes());
    event.extend(varint_field(2, 1_000_000));
    event.extend(varint_field(3, 1_002_000));
    event.extend(varint_field(8, 0));
    std::fs::write(&input, len_field(1, &event)).unwrap();
    for args in [
        &["inspect", "--from", "paddle"][..],
        &["validate", "--from", "paddle"],
        &["report", "--from", "paddle"],
    ] {
        check_text(args, &input);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_poplar_profile_with_a_long_category_name() {
    let dir = scratch("poplar");
    let input = dir.join("graph.json");
    let sample = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../conformance/poplar/graph-complete/input.json"),
    )
    .unwrap();
    assert!(sample.contains("\"controlCode\""));
    std::fs::write(
        &input,
        sample.replace("\"controlCode\"", &format!("\"{}\"", long_name())),
    )
    .unwrap();
    for args in [&["inspect"][..], &["validate"]] {
        check_text(args, &input);
    }
    check_json(&["inspect"], &input);
    let _ = std::fs::remove_dir_all(&dir);
}

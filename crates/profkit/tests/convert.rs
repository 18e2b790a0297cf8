//! `profkit convert`, `merge`, `formats` and `report` on the converted formats.

mod common;

use std::path::{Path, PathBuf};

use common::{profkit, text};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-convert-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

const SAMPLE: &str = "conformance/xplane/sample-myhost/input.xplane.pb";
const PROFILE: &str = "conformance/paddle/dygraph-cpu-total/input.pb";

#[test]
fn xspace_to_chrome_is_the_golden_file() {
    let dir = scratch("chrome");
    let out = dir.join("out.json");
    let run = profkit(&["convert", arg(&repo(SAMPLE)), arg(&out)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let golden = std::fs::read(repo("conformance/xplane/sample-myhost/chrome.json")).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), golden);
}

#[test]
fn dash_is_stdin_and_stdout() {
    let input = std::fs::read(repo(SAMPLE)).unwrap();
    let run = profkit(&["convert", "-", "-", "--to", "chrome"], Some(&input));
    assert!(run.status.success(), "{}", text(&run.stderr));
    let golden = std::fs::read(repo("conformance/xplane/sample-myhost/chrome.json")).unwrap();
    assert_eq!(run.stdout, golden);
}

#[test]
fn the_target_comes_from_the_output_name_or_must_be_given() {
    let dir = scratch("target");
    let out = dir.join("copy.xplane.pb");
    let run = profkit(&["convert", arg(&repo(SAMPLE)), arg(&out)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let original = profkit_xplane::read_file(repo(SAMPLE), Default::default()).unwrap();
    let copy = profkit_xplane::read_file(&out, Default::default()).unwrap();
    assert_eq!(
        copy, original,
        "an XSpace read and written back holds the same"
    );

    let run = profkit(
        &["convert", arg(&repo(SAMPLE)), arg(&dir.join("out.bin"))],
        None,
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("--to"), "{}", text(&run.stderr));
}

#[test]
fn paddle_timeline_is_timeline_py_byte_for_byte() {
    let dir = scratch("timeline");
    let out = dir.join("timeline.json");
    let run = profkit(
        &[
            "convert",
            arg(&repo(PROFILE)),
            arg(&out),
            "--to",
            "paddle-timeline",
        ],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let theirs = std::fs::read(repo(
        "conformance/paddle/dygraph-cpu-total/paddle-timeline.json",
    ))
    .unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), theirs);
}

#[test]
fn several_profiles_take_timeline_py_keys() {
    let dir = scratch("keys");
    let out = dir.join("timeline.json");
    let a = format!("trainer0={}", repo(PROFILE).display());
    let b = format!(
        "trainer1={}",
        repo("conformance/paddle/profile-kernels-memory/input.pb").display()
    );
    let run = profkit(
        &["convert", &a, &b, arg(&out), "--to", "paddle-timeline"],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let names: Vec<&str> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "trainer0:cpu:block:0");
    assert!(names.contains(&"trainer1:gpu:0"), "{names:?}");
    assert!(
        names.contains(&"memory usage on trainer1:cpu:0"),
        "{names:?}"
    );

    // The comma form of timeline.py's --profile_path works too; without keys, several is an error.
    let run = profkit(
        &[
            "convert",
            &format!("{a},{b}"),
            arg(&out),
            "--to",
            "paddle-timeline",
        ],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let plain = repo(PROFILE);
    let run = profkit(
        &[
            "convert",
            arg(&plain),
            arg(&plain),
            arg(&out),
            "--to",
            "paddle-timeline",
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
}

#[test]
fn every_format_converts_to_chrome_and_xspace() {
    let dir = scratch("all");
    let inputs = [
        PROFILE,
        "conformance/paddle/nodetree-sample/input.paddle_trace.pb",
        "conformance/poplar/combined/input.json",
        "conformance/xdl/scalars/input",
        "conformance/chrome/phases/input.json",
    ];
    for (i, input) in inputs.iter().enumerate() {
        let chrome = dir.join(format!("{i}.json"));
        let run = profkit(&["convert", arg(&repo(input)), arg(&chrome)], None);
        assert!(run.status.success(), "{input}: {}", text(&run.stderr));
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&chrome).unwrap()).unwrap();
        assert!(json["traceEvents"].as_array().unwrap().len() > 1, "{input}");

        let space = dir.join(format!("{i}.xplane.pb"));
        let run = profkit(&["convert", arg(&repo(input)), arg(&space)], None);
        assert!(run.status.success(), "{input}: {}", text(&run.stderr));
        let run = profkit(&["validate", arg(&space)], None);
        assert!(run.status.success(), "{input}: {}", text(&run.stdout));
    }
}

/// `convert --to xplane` of an XSpace writes the bytes of decoding and encoding it: what is
/// already in that encoding is copied (the lines of real profiles, whose maps are in hash order),
/// the rest normalised (unknown fields dropped).
#[test]
fn xspace_to_xspace_is_decode_and_encode() {
    let dir = scratch("reencode");
    for case in [
        "real-tf-fit",
        "real-jax-nested",
        "unknown-fields",
        "all-fields",
    ] {
        let input = repo(&format!("conformance/xplane/{case}/input.xplane.pb"));
        let out = dir.join(format!("{case}.xplane.pb"));
        let run = profkit(&["convert", arg(&input), arg(&out), "--to", "xplane"], None);
        assert!(run.status.success(), "{case}: {}", text(&run.stderr));
        let space = profkit_xplane::read_file(&input, Default::default()).unwrap();
        assert!(
            std::fs::read(&out).unwrap() == profkit_xplane::encode(&space),
            "{case}"
        );
    }
}

#[test]
fn poplar_execution_takes_its_graph_as_a_second_input() {
    let dir = scratch("poplar");
    let out = dir.join("run.json");
    let case = repo("conformance/poplar/execution-compute-sets");
    let run = profkit(
        &[
            "convert",
            arg(&case.join("input.json")),
            arg(&case.join("graph.json")),
            arg(&out),
        ],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(case.join("chrome.json")).unwrap()
    );
    let run = profkit(&["convert", arg(&case.join("input.json")), arg(&out)], None);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("graph profile"),
        "{}",
        text(&run.stderr)
    );
}

#[test]
fn merge_keeps_every_host() {
    let dir = scratch("merge");
    let a = dir.join("alpha.xplane.pb");
    let b = dir.join("beta.xplane.pb");
    std::fs::copy(repo("conformance/xplane/gpu-device/input.xplane.pb"), &a).unwrap();
    std::fs::copy(repo("conformance/xplane/gpu-device/input.xplane.pb"), &b).unwrap();
    let out = dir.join("merged.xplane.pb");
    let run = profkit(&["merge", arg(&a), arg(&b), arg(&out)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("merged 2 hosts (alpha, beta)"),
        "{}",
        text(&run.stdout)
    );
    let space = profkit_xplane::read_file(&out, Default::default()).unwrap();
    assert_eq!(space.hostnames, ["alpha", "beta"]);
    let names: Vec<&str> = space.planes.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains(&"/device:GPU:0") && names.contains(&"/device:GPU:1"),
        "{names:?}"
    );
    let host = space.planes.iter().find(|p| p.name == "/host:CPU").unwrap();
    assert_eq!(host.lines.len(), 2, "each host's thread keeps its own line");
    assert!(host.lines.iter().any(|l| l.display_name == "beta: python3"));

    // Several XSpaces given to convert are merged the same way.
    let chrome = dir.join("merged.json");
    let run = profkit(&["convert", arg(&a), arg(&b), arg(&chrome)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let json = String::from_utf8(std::fs::read(&chrome).unwrap()).unwrap();
    assert!(json.contains(
        r#"{"args": {"name": "/device:GPU:1"}, "name": "process_name", "ph": "M", "pid": 2},"#
    ));
}

#[test]
fn report_reads_xspace_and_chrome() {
    let run = profkit(
        &[
            "report",
            "--legacy",
            arg(&repo("conformance/xplane/nested-events/input.xplane.pb")),
        ],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("Event Summary"),
        "{}",
        text(&run.stdout)
    );
    let run = profkit(
        &[
            "report",
            "--legacy",
            arg(&repo("conformance/chrome/paddle-sample/input.json")),
        ],
        None,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    // Paddle's duration suffixes are gone, so an op's calls add up under one name (nested
    // under the Python half of its thread, which is one line with the C++ half).
    let out = text(&run.stdout);
    assert!(
        out.contains(" matmul dygraph  ") && !out.contains("matmul dygraph["),
        "{out}"
    );
}

#[test]
fn errors_name_the_file_and_the_place() {
    let dir = scratch("errors");
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "{\"traceEvents\": [\n {\"ph\": \"X\", \"ts\": \"soon\"}]}",
    )
    .unwrap();
    let out = dir.join("out.json");
    let run = profkit(&["convert", arg(&bad), arg(&out)], None);
    assert_eq!(run.status.code(), Some(1));
    let message = text(&run.stderr);
    assert!(
        message.contains("bad.json")
            && message.contains("traceEvents[0].ts")
            && message.contains("line 2"),
        "{message}"
    );
    assert!(!out.exists(), "a failed conversion leaves no output");

    let truncated = dir.join("cut.xplane.pb");
    let bytes = std::fs::read(repo(SAMPLE)).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let run = profkit(
        &["convert", arg(&truncated), arg(&out), "--from", "xspace"],
        None,
    );
    assert_eq!(run.status.code(), Some(1));
    let message = text(&run.stderr);
    assert!(
        message.contains("cut.xplane.pb") && message.contains("byte"),
        "{message}"
    );
    assert!(!out.exists());
}

#[test]
fn formats_lists_conversions() {
    let run = profkit(&["formats"], None);
    assert!(run.status.success());
    let out = text(&run.stdout);
    let conversions: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.contains(" -> "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(
        conversions.contains(&vec![
            "paddle",
            "->",
            "chrome,",
            "xspace,",
            "paddle-timeline"
        ]),
        "{out}"
    );
    // The descriptions of the format list start in one column, however long the names.
    let listing: Vec<&str> = out.lines().skip(1).take_while(|l| !l.is_empty()).collect();
    assert!(listing.len() >= 7, "{out}");
    let columns: std::collections::BTreeSet<usize> = listing
        .iter()
        .map(|l| {
            let name_end = 2 + l.trim_start().find(' ').unwrap_or(0);
            name_end + l[name_end..].len() - l[name_end..].trim_start().len()
        })
        .collect();
    assert_eq!(columns.len(), 1, "{out}");
}

#[test]
fn gzip_in_and_out() {
    let dir = scratch("gzip");
    let input = std::fs::read(repo("conformance/chrome/phases/input.json")).unwrap();
    let gz = dir.join("trace.json.gz");
    let mut encoder =
        flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), Default::default());
    std::io::Write::write_all(&mut encoder, &input).unwrap();
    encoder.finish().unwrap();
    // Detected by content (gzip magic, then JSON), whatever the name.
    let renamed = dir.join("trace.bin");
    std::fs::copy(&gz, &renamed).unwrap();
    let run = profkit(&["inspect", arg(&renamed)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains("Chrome trace"));
    // OUT ending in .gz is written gzip-compressed, and reads back.
    let out = dir.join("back.json.gz");
    let run = profkit(&["convert", arg(&gz), arg(&out)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes.get(..2), Some(&[0x1f, 0x8b][..]));
    let mut json = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut json)
        .unwrap();
    assert!(
        json.starts_with('{') && json.contains("traceEvents"),
        "{json}"
    );
    let run = profkit(&["validate", arg(&out)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
}

#[test]
fn unrecognised_json_says_what_it_is() {
    let dir = scratch("unrecognised");
    let path = dir.join("other.json");
    std::fs::write(&path, r#"{"a": {"deep": [1, 2]}, "b": 3}"#).unwrap();
    let run = profkit(&["inspect", arg(&path)], None);
    assert!(!run.status.success());
    let err = text(&run.stderr);
    assert!(
        err.contains("unrecognised format")
            && err.contains(r#"JSON object with keys "a", "b""#)
            && err.contains("Chrome trace JSON (chrome)"),
        "{err}"
    );
    // traceEvents after a long first key is still found.
    let late = dir.join("late.json");
    let padding = "x".repeat(10_000);
    std::fs::write(
        &late,
        format!(r#"{{"deviceProperties": "{padding}", "traceEvents": [{{"ph": "i", "ts": 1}}]}}"#),
    )
    .unwrap();
    let run = profkit(&["inspect", arg(&late)], None);
    assert!(run.status.success(), "{}", text(&run.stderr));
}

/// A Kineto trace (flows between launches and kernels) converted to Chrome JSON directly and
/// through an XSpace: the same text, every flow event kept, `cat` a member; `--layout xprof` of
/// the XSpace is xprof's view instead, with a `flow` arg per linked event.
#[test]
fn a_trace_through_an_xspace_comes_back_with_its_flows() {
    let dir = scratch("flows");
    let trace = repo("conformance/chrome/kineto-event-sync/input.json");
    let (direct, xspace, back, xprof) = (
        dir.join("direct.json"),
        dir.join("trace.xplane.pb"),
        dir.join("back.json"),
        dir.join("xprof.json"),
    );
    for args in [
        vec!["convert", arg(&trace), arg(&direct)],
        vec!["convert", arg(&trace), arg(&xspace)],
        vec!["convert", arg(&xspace), arg(&back)],
        vec!["convert", arg(&xspace), arg(&xprof), "--layout", "xprof"],
    ] {
        let run = profkit(&args, None);
        assert!(run.status.success(), "{args:?}: {}", text(&run.stderr));
    }
    let direct = std::fs::read_to_string(&direct).unwrap();
    assert_eq!(std::fs::read_to_string(&back).unwrap(), direct);
    let original = std::fs::read_to_string(&trace).unwrap();
    let count = |text: &str, what: &str| text.matches(what).count();
    for phase in ["\"ph\": \"s\"", "\"ph\": \"f\""] {
        assert_eq!(
            count(&direct, phase),
            count(&original.replace("\"ph\":\"", "\"ph\": \""), phase),
            "{phase}"
        );
    }
    assert!(
        direct.contains("\"cat\": \"kernel\", \"dur\""),
        "cat is a member"
    );
    let xprof = std::fs::read_to_string(&xprof).unwrap();
    assert_eq!(count(&xprof, "\"ph\": \"s\""), 0);
    assert!(
        count(&xprof, "\"flow\": \"") > 0,
        "xprof's view has flow args"
    );
}

//! The `profkit` binary on XDL tensor traces: outputs and exit codes.

mod common;

use common::{profkit, text};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/xdl/original-writer")
}

fn input() -> String {
    sample().join("input").display().to_string()
}

/// A fresh scratch directory.
fn scratch(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "profkit-cli-xdl-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A copy of the sample's files in a scratch directory.
fn sample_copy(tag: &str) -> PathBuf {
    let dir = scratch(tag);
    for entry in std::fs::read_dir(sample().join("input")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    dir
}

#[test]
fn inspect_shows_ranks_files_steps_and_keys() {
    let out = profkit(&["inspect", &input()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("XDL trace, 1 dataset, rank 0, 7 records"), "{s}");
    assert!(
        s.contains("dataset train.trace.0 (rank 0): 3 files, 7 records"),
        "{s}"
    );
    assert!(s.contains("steps: lstep 1 to 7, gstep 101 to 107"), "{s}");
    assert!(s.contains("w     Float   [2, 3]"), "{s}");
    assert!(s.contains("loss  Double  [] (scalar)"), "{s}");
    assert!(
        s.contains("meta agrees (original writer's -1 begin quirk)"),
        "{s}"
    );
}

#[test]
fn inspect_json() {
    let out = profkit(&["inspect", "--json", &input()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["format"], "xdl");
    let d = &doc["datasets"][0];
    assert_eq!(
        (
            d["phase"].as_str(),
            d["rank"].as_u64(),
            d["records"].as_u64()
        ),
        (Some("train"), Some(0), Some(7))
    );
    assert_eq!(
        d["keys"],
        serde_json::json!(["w", "loss", "flag", "ids", "d"])
    );
    assert_eq!(d["columns"][3]["dtypes"], serde_json::json!(["Int64"]));
    assert_eq!(d["files"][2]["meta_check"], "agrees_with_unset_begin_quirk");
    assert_eq!(d["files"].as_array().unwrap().len(), 3);
}

#[test]
fn dump_prints_the_writers_decoded_json() {
    let out = profkit(&["dump", &input()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expected = std::fs::read(sample().join("writer.decoded.json")).unwrap();
    assert!(out.stdout == expected, "{}", text(&out.stdout));
}

#[test]
fn dump_of_a_data_file_on_stdin() {
    let bytes = std::fs::read(sample().join("input/train.trace.0.2")).unwrap();
    let out = profkit(&["dump", "-"], Some(&bytes));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["<stdin>"]["records"][0]["columns"][3]["value"],
        serde_json::json!([4, -4])
    );
}

#[test]
fn detection_by_content_and_by_prefix() {
    let dir = scratch("detect");
    std::fs::copy(
        sample().join("input/train.trace.0.1"),
        dir.join("renamed.bin"),
    )
    .unwrap();
    let out = profkit(
        &["inspect", dir.join("renamed.bin").to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("XDL data file"));
    let prefix = sample().join("input/train.trace");
    let out = profkit(&["validate", prefix.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = profkit(
        &[
            "inspect",
            sample()
                .join("input/train.trace.0.1.meta")
                .to_str()
                .unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let empty = scratch("empty");
    let out = profkit(&["inspect", empty.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("without XDL trace files"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(empty);
}

#[test]
fn validate_reports_meta_disagreements() {
    let dir = sample_copy("meta");
    std::fs::copy(
        dir.join("train.trace.0.1.meta"),
        dir.join("train.trace.0.2.meta"),
    )
    .unwrap();
    let out = profkit(&["validate", dir.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    assert!(
        s.contains(
            "train.trace.0.2.meta: disagrees with its data file: lstep_begin is 1, the data says 4"
        ),
        "{s}"
    );
    let out = profkit(&["validate", "--json", dir.to_str().unwrap()], None);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["valid"], false);
    assert_eq!(doc["problems"][0]["kind"], "meta_mismatch");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_truncated_file_gives_its_records_then_exit_1() {
    let dir = sample_copy("trunc");
    let path = dir.join("train.trace.0.1");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..300]).unwrap();
    let out = profkit(&["dump", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = &doc["train.trace.0.1"];
    assert_eq!(file["records"].as_array().unwrap().len(), 2);
    assert_eq!(
        file["error"],
        "truncated at byte 300: frame 3 (starting at byte 245) needs 54 more bytes"
    );
    assert!(
        text(&out.stderr).contains("truncated at byte 300"),
        "{}",
        text(&out.stderr)
    );
    let out = profkit(&["inspect", dir.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("TRUNCATED"));
    let out = profkit(&["validate", dir.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout)
            .contains("train.trace.0.1: truncated at byte 300: frame 3 (starting at byte 245)"),
        "{}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_garbage_length_names_its_offset() {
    let dir = scratch("garbage");
    let mut bytes = std::fs::read(sample().join("input/train.trace.0.1")).unwrap();
    bytes[136..140].copy_from_slice(&[0xff, 0xff, 0xff, 0x7f]);
    std::fs::write(dir.join("train.trace.0.1"), &bytes).unwrap();
    let out = profkit(&["validate", dir.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    assert!(
        s.contains(
            "train.trace.0.1: frame 2 at byte 136 declares 2147483647 bytes, over the limit"
        ),
        "{s}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn convert_reproduces_the_original_files_byte_for_byte() {
    let out_dir = scratch("convert");
    let out = profkit(
        &[
            "convert",
            &input(),
            out_dir.to_str().unwrap(),
            "--to",
            "xdl",
            "--max-file-mb",
            "0.0003",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("train.trace.0: wrote 7 records in 3 files"),
        "{}",
        text(&out.stdout)
    );
    for i in 1..=3 {
        let name = format!("train.trace.0.{i}");
        assert_eq!(
            std::fs::read(out_dir.join(&name)).unwrap(),
            std::fs::read(sample().join("input").join(&name)).unwrap()
        );
    }
    let out = profkit(&["validate", out_dir.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // Again into the same place: refused, then allowed with --overwrite and the default limit.
    let out = profkit(
        &[
            "convert",
            &input(),
            out_dir.to_str().unwrap(),
            "--to",
            "xdl",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("already holds 6 file(s) of dataset train.trace.0"),
        "{}",
        text(&out.stderr)
    );
    let out = profkit(
        &[
            "convert",
            &input(),
            out_dir.to_str().unwrap(),
            "--to",
            "xdl",
            "--overwrite",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let out = profkit(&["dump", out_dir.to_str().unwrap()], None);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["train.trace.0.1"]["records"].as_array().unwrap().len(),
        7
    );
    assert_eq!(doc["train.trace.0.1.meta"]["lstep_begin"], 1);
    let _ = std::fs::remove_dir_all(out_dir);
}

#[test]
fn convert_usage_errors_exit_2() {
    let out = profkit(&["convert", &input(), &input(), "--to", "xdl"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is the input directory"),
        "{}",
        text(&out.stderr)
    );
    let out = profkit(
        &["convert", &input(), "/tmp/x", "--to", "paddle-timeline"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--to paddle-timeline reads Paddle legacy Profiles, not xdl"),
        "{}",
        text(&out.stderr)
    );
    let out = profkit(&["convert", &input(), "--to", "xdl"], None);
    assert_eq!(out.status.code(), Some(2));
    let out = profkit(
        &["convert", "-", "/tmp/x", "--to", "xdl"],
        Some(&std::fs::read(sample().join("input/train.trace.0.1")).unwrap()),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn convert_to_hdfs_says_not_yet() {
    let out = profkit(
        &["convert", &input(), "hdfs://nn:9000/traces", "--to", "xdl"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("HDFS output is not built in yet"),
        "{}",
        text(&out.stderr)
    );
}

/// The sample with every file gzipped (`<name>.gz`): inspect, validate and convert see what they
/// see in the plain dataset, and a gzipped data or meta file given alone reads too.
#[test]
fn a_gzipped_dataset_reads_like_the_plain_one() {
    use std::io::Write;
    let dir = scratch("gzip");
    for entry in std::fs::read_dir(sample().join("input")).unwrap() {
        let entry = entry.unwrap();
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder
            .write_all(&std::fs::read(entry.path()).unwrap())
            .unwrap();
        let name = format!("{}.gz", entry.file_name().to_str().unwrap());
        std::fs::write(dir.join(name), encoder.finish().unwrap()).unwrap();
    }
    let gz = dir.display().to_string();
    for command in [["inspect"], ["validate"]] {
        let plain = profkit(&[command[0], &input()], None);
        let zipped = profkit(&[command[0], &gz], None);
        assert_eq!(zipped.status.code(), Some(0), "{}", text(&zipped.stderr));
        assert_eq!(
            // The files are listed by their names, `.gz` and all.
            text(&zipped.stdout).replace(&gz, "DIR").replace(".gz", ""),
            text(&plain.stdout).replace(&input(), "DIR"),
            "{command:?}"
        );
    }
    let plain = profkit(&["convert", &input(), "-", "--to", "chrome"], None);
    let zipped = profkit(&["convert", &gz, "-", "--to", "chrome"], None);
    assert_eq!(zipped.status.code(), Some(0), "{}", text(&zipped.stderr));
    assert_eq!(text(&zipped.stdout), text(&plain.stdout));
    for name in ["train.trace.0.2.gz", "train.trace.0.2.meta.gz"] {
        let out = profkit(&["inspect", &dir.join(name).display().to_string()], None);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! `profkit convert IN... OUT_DIR --to parquet`: hosts appended, refused, replaced; bad input.

mod common;

use std::path::{Path, PathBuf};

use common::{profkit, text};
use profkit_xplane::{PlaneBuilder, XPlane, XSpace, encode};

fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-parquet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn space(events: usize) -> Vec<u8> {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/device:GPU:0");
    let mut line = b.line(1);
    line.set_name("Stream #1");
    for i in 0..events {
        line.add_event("kernel")
            .set_offset_ps(i as i64 * 10)
            .set_duration_ps(5)
            .add_stat("step_num", i as i64);
    }
    encode(&XSpace {
        planes: vec![plane],
        ..XSpace::default()
    })
}

fn names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = profkit(args, None);
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn hosts_are_appended_refused_and_replaced() {
    let work = dir("append");
    let a = work.join("worker-a.xplane.pb");
    let b = work.join("worker-b.xplane.pb");
    let c = work.join("worker-c.xplane.pb");
    std::fs::write(&a, space(3)).unwrap();
    std::fs::write(&b, space(4)).unwrap();
    std::fs::write(&c, space(5)).unwrap();
    let ds = work.join("dataset");
    let ds_s = ds.to_str().unwrap();
    let (code, stdout, stderr) = run(&[
        "convert",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        ds_s,
        "--to",
        "parquet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("3 events on 1 planes"), "{stdout}");
    assert_eq!(names(&ds), ["host=worker-a", "host=worker-b"]);
    assert_eq!(
        names(&ds.join("host=worker-a")),
        [
            "table=events",
            "table=lines",
            "table=metadata",
            // xprof's op metrics of the XSpace (see docs/scale.md).
            "table=op_metrics",
            "table=planes",
            // xprof's steps database of the XSpace.
            "table=steps"
        ]
    );
    let events_a = ds.join("host=worker-a/table=events/part-0.parquet");
    let before = std::fs::read(&events_a).unwrap();

    // Appending c rewrites nothing.
    let (code, _, stderr) = run(&["convert", c.to_str().unwrap(), ds_s, "--to", "parquet"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(names(&ds).len(), 3);
    assert_eq!(std::fs::read(&events_a).unwrap(), before);

    // A host already present is refused, and nothing of the command is written.
    std::fs::write(work.join("worker-d.xplane.pb"), space(1)).unwrap();
    let (code, _, stderr) = run(&[
        "convert",
        work.join("worker-d.xplane.pb").to_str().unwrap(),
        a.to_str().unwrap(),
        ds_s,
        "--to",
        "parquet",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("host worker-a is already in the dataset"),
        "{stderr}"
    );
    assert_eq!(names(&ds).len(), 3);

    // --overwrite replaces it.
    std::fs::write(&a, space(7)).unwrap();
    let (code, stdout, stderr) = run(&[
        "convert",
        a.to_str().unwrap(),
        ds_s,
        "--to",
        "parquet",
        "--overwrite",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("7 events"), "{stdout}");
    assert_ne!(std::fs::read(&events_a).unwrap(), before);
    assert_eq!(names(&ds).len(), 3);

    // Two inputs of one command making one host.
    let other = work.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("worker-b.xplane.pb"), space(1)).unwrap();
    let (code, _, stderr) = run(&[
        "convert",
        b.to_str().unwrap(),
        other.join("worker-b.xplane.pb").to_str().unwrap(),
        work.join("fresh").to_str().unwrap(),
        "--to",
        "parquet",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("two inputs make host worker-b"), "{stderr}");
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn every_input_format_converts() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let work = dir("formats");
    let ds = work.join("dataset");
    let inputs = [
        ("conformance/chrome/phases/input.json", "input"),
        ("conformance/paddle/dygraph-all-default/input.pb", "input"),
        (
            "conformance/paddle/nodetree-sample/input.paddle_trace.pb",
            "input",
        ),
        ("conformance/xdl/scalars/input", "input"),
        ("conformance/poplar/combined/input.json", "combined"),
    ];
    for (i, (input, host)) in inputs.iter().enumerate() {
        // Each into a dataset of its own: the inputs share a name.
        let out = ds.join(i.to_string());
        let (code, stdout, stderr) = run(&[
            "convert",
            repo.join(input).to_str().unwrap(),
            out.to_str().unwrap(),
            "--to",
            "parquet",
        ]);
        assert_eq!(code, 0, "{input}: {stderr}");
        assert!(stdout.contains("events on"), "{input}: {stdout}");
        assert_eq!(names(&out), [format!("host={host}")], "{input}");
        let tables = names(&out.join(format!("host={host}")));
        assert!(
            tables.contains(&"table=events".to_owned()),
            "{input}: {tables:?}"
        );
        if input.contains("xdl") {
            assert!(
                tables.contains(&"table=xdl_records".to_owned()),
                "{tables:?}"
            );
            assert!(stdout.contains("XDL records"), "{stdout}");
        }
    }
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn truncated_input_is_located_and_leaves_nothing() {
    let work = dir("truncated");
    let bytes = space(50);
    let input = work.join("cut.xplane.pb");
    std::fs::write(&input, &bytes[..bytes.len() - 7]).unwrap();
    let ds = work.join("dataset");
    let convert = || {
        run(&[
            "convert",
            input.to_str().unwrap(),
            ds.to_str().unwrap(),
            "--to",
            "parquet",
            "--from",
            "xspace",
        ])
    };
    let (code, _, stderr) = convert();
    assert_eq!(code, 1);
    assert!(stderr.contains("cut.xplane.pb"), "{stderr}");
    assert!(stderr.contains("byte"), "{stderr}");
    // No host, not even a hidden one, and not the dataset directory the command made.
    assert!(!ds.exists(), "{ds:?} left behind");
    // A dataset that was there before stays, as it was.
    std::fs::create_dir(&ds).unwrap();
    assert_eq!(convert().0, 1);
    assert!(names(&ds).is_empty(), "{:?}", names(&ds));

    let chrome = work.join("bad.json");
    std::fs::write(&chrome, br#"{"traceEvents": [{"ph": "X", "ts": 1, "dur": "#).unwrap();
    let (code, _, stderr) = run(&[
        "convert",
        chrome.to_str().unwrap(),
        ds.to_str().unwrap(),
        "--to",
        "parquet",
    ]);
    assert_eq!(code, 1);
    assert!(stderr.contains("bad.json"), "{stderr}");
    assert!(names(&ds).is_empty());
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn parquet_is_an_output_only() {
    let work = dir("usage");
    let input = work.join("h.xplane.pb");
    std::fs::write(&input, space(1)).unwrap();
    let (code, _, stderr) = run(&["inspect", input.to_str().unwrap(), "--from", "parquet"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("output format only"), "{stderr}");
    let (code, _, stderr) = run(&["convert", input.to_str().unwrap(), "-", "--to", "parquet"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("dataset directory"), "{stderr}");
    let (code, stdout, _) = run(&["formats"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("parquet"), "{stdout}");
    std::fs::remove_dir_all(&work).unwrap();
}

/// `inspect --json` of an XSpace with epoch timestamps (picoseconds past `u64`), which the
/// conformance check of the Parquet datasets compares against.
#[test]
fn inspect_json_prints_epoch_picoseconds() {
    let work = dir("epoch");
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/host:CPU");
    let mut line = b.line(1);
    line.set_timestamp_ns(1_700_000_000_000_000_000);
    line.add_event("step").set_offset_ps(5).set_duration_ps(10);
    let input = work.join("epoch.xplane.pb");
    std::fs::write(
        &input,
        encode(&XSpace {
            planes: vec![plane],
            ..XSpace::default()
        }),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["inspect", "--json", input.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("\"start_ps\": 1700000000000000000005"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\"end_ps\": 1700000000000000000015"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&work).unwrap();
}

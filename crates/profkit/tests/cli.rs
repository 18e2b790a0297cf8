//! The `profkit` binary as a user runs it: outputs and exit codes.

mod common;

use common::{profkit, text};

use std::path::PathBuf;

use profkit_xplane::{PlaneBuilder, XPlane, XSpace, encode};

/// A small valid space: one host plane, two nested events with stats.
fn sample_space() -> XSpace {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/host:CPU");
    let mut line = b.line(3);
    line.set_name("main");
    line.add_event("outer")
        .set_offset_ps(0)
        .set_duration_ps(10_000_000)
        .add_stat("step_num", 1_i64);
    line.add_event("inner")
        .set_offset_ps(1_000_000)
        .set_duration_ps(2_000_000);
    XSpace {
        planes: vec![plane],
        hostnames: vec!["host-a".into()],
        ..Default::default()
    }
}

fn write_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn inspect_prints_counts_and_top_events() {
    let path = write_temp("a.xplane.pb", &encode(&sample_space()));
    let out = profkit(&["inspect", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("planes: 1, lines: 1, events: 2"),
        "{stdout}"
    );
    assert!(
        stdout.contains("time span: 0.000000 us to 10.000000 us (10.000000 us)"),
        "{stdout}"
    );
    assert!(stdout.contains("hostnames: host-a"), "{stdout}");
    let outer = stdout.find("outer").unwrap();
    let inner = stdout.find("inner").unwrap();
    assert!(outer < inner, "longest first: {stdout}");
}

#[test]
fn inspect_json_is_machine_readable() {
    let out = profkit(&["inspect", "--json", "-"], Some(&encode(&sample_space())));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["format"], "xspace");
    assert_eq!(doc["summary"]["total_events"], 2);
    assert_eq!(
        doc["summary"]["planes"][0]["top_events"][0]["name"],
        "outer"
    );
    assert_eq!(doc["summary"]["planes"][0]["end_ps"], 10_000_000);
}

#[test]
fn dump_prints_canonical_json_that_reads_back() {
    let space = sample_space();
    let out = profkit(&["dump", "-"], Some(&encode(&space)));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let back = profkit_xplane::view::from_json(&text(&out.stdout)).unwrap();
    assert_eq!(back, space);
}

#[test]
fn validate_exits_0_when_valid_and_1_with_one_line_per_problem() {
    let out = profkit(&["validate", "-"], Some(&encode(&sample_space())));
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("valid XSpace"));

    let mut space = sample_space();
    space.planes[0].lines[0].events[1].metadata_id = 99;
    space.planes[0].lines[0].events[1].duration_ps = 50_000_000; // now sticks out of `outer`
    let out = profkit(&["validate", "-"], Some(&encode(&space)));
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("planes[0].lines[0].events[1]") && l.contains("metadata id 99"))
    );
    assert!(lines.iter().any(|l| l.contains("partially overlaps")));
}

#[test]
fn validate_streams_its_problems_in_the_layout_of_the_whole_document() {
    let mut space = sample_space();
    space.planes[0].lines[0].events[1].metadata_id = 99;
    space.planes[0].lines[0].events[1].duration_ps = 50_000_000;
    space.planes.push(space.planes[0].clone());
    for (space, code) in [(sample_space(), 0), (space, 1)] {
        let problems = profkit_xplane::validate(&space);
        let doc = serde_json::json!({
            "file": "<stdin>",
            "format": "xspace",
            "valid": !problems.iter().any(|p| p.severity == profkit_xplane::Severity::Error),
            "problems": problems,
        });
        let expected = serde_json::to_string_pretty(&doc).unwrap() + "\n";
        let out = profkit(&["validate", "--json", "-"], Some(&encode(&space)));
        assert_eq!(out.status.code(), Some(code));
        assert_eq!(text(&out.stdout), expected);
        let out = profkit(&["validate", "-"], Some(&encode(&space)));
        let lines: Vec<String> = problems.iter().map(|p| format!("<stdin>: {p}")).collect();
        if code == 1 {
            assert_eq!(text(&out.stdout), lines.join("\n") + "\n");
        }
    }
}

#[test]
fn truncated_input_exits_1_naming_offset_and_path() {
    let bytes = encode(&sample_space());
    let cut = &bytes[..bytes.len() / 2];
    for command in ["inspect", "dump", "validate"] {
        let out = profkit(&[command, "-"], Some(cut));
        assert_eq!(out.status.code(), Some(1), "{command}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains("<stdin>"), "{stderr}");
        assert!(stderr.contains("truncated"), "{stderr}");
        assert!(stderr.contains("XSpace.planes[0]"), "{stderr}");
        assert!(stderr.contains(&format!("byte {}", cut.len())), "{stderr}");
    }
}

#[test]
fn validate_json_of_a_truncated_input_is_one_document_naming_the_error() {
    let bytes = encode(&sample_space());
    let cut = &bytes[..bytes.len() / 2];
    let out = profkit(&["validate", "--json", "-"], Some(cut));
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect(&stdout);
    assert_eq!(doc["valid"], false);
    let error = doc["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("truncated") && error.contains("XSpace.planes[0]"),
        "{doc}"
    );
    assert!(text(&out.stderr).contains("truncated"));
}

#[test]
fn unknown_content_exits_1_and_from_overrides_detection() {
    let out = profkit(&["inspect", "-"], Some(b"{\"not\": \"xspace\"}"));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unrecognised format"));
    // With --from the content is decoded as XSpace, and the decoder says where it breaks:
    // here `planes` (field 1) arrives as a varint.
    let out = profkit(&["inspect", "--from", "xspace", "-"], Some(b"\x08\x01"));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("at byte 0 in XSpace.planes[0]"), "{stderr}");
    assert!(stderr.contains("wire type 0"), "{stderr}");
    // Without --from those bytes are not recognised at all.
    assert_eq!(
        profkit(&["inspect", "-"], Some(b"\x08\x01")).status.code(),
        Some(1)
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(profkit(&["frobnicate"], None).status.code(), Some(2));
    assert_eq!(profkit(&["inspect"], None).status.code(), Some(2));
    assert_eq!(
        profkit(&["inspect", "--from", "nope", "x"], None)
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn missing_file_exits_1_naming_it() {
    let out = profkit(&["inspect", "/nonexistent/x.xplane.pb"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("/nonexistent/x.xplane.pb"));
}

#[test]
fn a_real_jax_profile_is_valid_with_its_python_tracer_overlaps_as_warnings() {
    // JAX's Python tracer writes `$file:line function` events that partly overlap the
    // annotations the functions open: valid, with a warning each (text and JSON).
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/xplane/real-jax-steps/input.xplane.pb");
    let path = path.to_string_lossy().into_owned();
    let out = profkit(&["validate", &path], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{stdout}");
    assert!(lines[..5].iter().all(|l| l.contains(": warning: planes[1].lines[0].events[")
        && l.contains("partially overlaps")
        && l.ends_with("(a Python tracer event: JAX and TensorFlow write these across their annotations)")));
    assert!(
        lines[5].ends_with(": valid XSpace (3 planes, 5 warnings)"),
        "{stdout}"
    );
    let out = profkit(&["validate", "--json", &path], None);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["valid"], true);
    let problems = doc["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 5);
    assert!(problems.iter().all(|p| p["severity"] == "warning"));
}

#[test]
fn every_damaged_xspace_case_is_refused_by_every_reading_command() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance/xplane");
    let mut cases = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let input = dir.join("input.xplane.pb");
        let is_error = dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("error-"));
        if !is_error || !input.is_file() {
            continue;
        }
        cases += 1;
        let path = input.to_string_lossy().into_owned();
        // inspect walks views and reads only what it counts: it must still see the damage.
        for command in ["inspect", "validate", "dump"] {
            let out = profkit(&[command, &path], None);
            assert_eq!(out.status.code(), Some(1), "{command} {path}");
            assert!(text(&out.stderr).contains("XSpace"), "{command} {path}");
        }
    }
    assert!(cases >= 5, "only {cases} damaged cases");
}

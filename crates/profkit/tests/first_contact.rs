//! What a newcomer meets first: format detection of ambiguous files, the help text, capped
//! `validate` output.

mod common;

use common::{profkit, text};

use std::path::PathBuf;

fn write_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-first-contact-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Three empty planes: a degenerate XSpace whose bytes also frame like an XDL data file.
const EMPTY_PLANES: &[u8] = &[0x0a, 0x00, 0x0a, 0x00, 0x0a, 0x00];

#[test]
fn a_degenerate_xspace_named_xplane_is_read_as_an_xspace() {
    let path = write_temp("degenerate.xplane.pb", EMPTY_PLANES);
    let out = profkit(&["inspect", path.to_str().unwrap()], None);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.contains(": XSpace"), "{stdout}");
    assert!(stdout.contains("planes: 3"), "{stdout}");
}

#[test]
fn a_degenerate_xspace_under_another_name_reads_as_the_format_that_reads_it() {
    // Its content fits XDL first, which does not read it (the frame runs past the end): the
    // XSpace does, with a note saying so.
    let path = write_temp("degenerate.bin", EMPTY_PLANES);
    let out = profkit(&["inspect", path.to_str().unwrap()], None);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains(": XSpace"), "{stdout}");
    assert!(
        stderr.contains("read as XSpace, the first that reads it"),
        "{stderr}"
    );
}

#[test]
fn a_bad_xspace_is_not_read_as_paddle_node_trees() {
    // Field 1 with printable bytes: Paddle node trees' version string, or a broken plane.
    let path = write_temp("bad.xplane.pb", b"\x0a\x05hello");
    for command in ["inspect", "validate", "dump", "report"] {
        let out = profkit(&[command, path.to_str().unwrap()], None);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}: {stderr}");
        assert!(
            stderr.contains("named as an XSpace but does not read as one; tried: XSpace ("),
            "{command}: {stderr}"
        );
        assert!(
            stderr.contains("Paddle node trees (reads as one: name it with --from paddle-trace)"),
            "{command}: {stderr}"
        );
        // --from still reads it as what it names.
        let out = profkit(
            &[command, path.to_str().unwrap(), "--from", "paddle-trace"],
            None,
        );
        assert!(
            !text(&out.stderr).contains("tried:"),
            "{command}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_garbage_file_named_xplane_gets_the_xspace_error() {
    let path = write_temp("garbage.xplane.pb", b"\x0a\xff\xff\xff\xff\x0f");
    let out = profkit(&["inspect", path.to_str().unwrap()], None);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("XSpace"), "{stderr}");
    assert!(!stderr.contains("unrecognised format"), "{stderr}");
}

#[test]
fn convert_help_offers_only_what_convert_writes_and_a_plain_usage_line() {
    let out = profkit(&["convert", "--help"], None);
    let help = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(help.contains("convert [OPTIONS] <IN>... <OUT>"), "{help}");
    assert!(!help.contains("<IN... OUT>"), "{help}");
    let to = help
        .split("--to <TO>")
        .nth(1)
        .and_then(|rest| rest.split("--from").next())
        .unwrap_or_default()
        .to_owned();
    for writable in ["chrome", "xspace", "paddle-timeline", "xdl", "parquet"] {
        assert!(to.contains(writable), "--to should offer {writable}: {to}");
    }
    for not_written in ["poplar", "paddle-trace"] {
        assert!(!to.contains(not_written), "--to offers {not_written}: {to}");
    }
    let out = profkit(&["convert", "in.pb", "out.json", "--to", "poplar"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("profkit cannot write poplar"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn report_from_offers_only_what_report_reads() {
    let out = profkit(&["report", "--help"], None);
    let help = text(&out.stdout);
    let from = help
        .split("--from <FROM>")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    assert!(
        from.contains("paddle-trace") && from.contains("chrome"),
        "{from}"
    );
    for refused in ["xdl", "poplar", "parquet"] {
        assert!(
            !from.contains(refused),
            "report --from offers {refused}: {from}"
        );
    }
    let out = profkit(&["report", "x.json", "--from", "xdl"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("report does not read xdl"),
        "{}",
        text(&out.stderr)
    );
    let out = profkit(&["inspect", "--help"], None);
    let help = text(&out.stdout);
    assert!(
        !help
            .split("--from")
            .nth(1)
            .unwrap_or_default()
            .contains("parquet"),
        "{help}"
    );
}

/// A host plane with `events` events on one line starting at `line_ns`, each naming event
/// metadata that does not exist when `dangling`.
fn space_bytes(events: usize, line_ns: i64, dangling: bool) -> Vec<u8> {
    use profkit_xplane::{PlaneBuilder, XPlane, XSpace, encode};
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/host:CPU");
    let mut line = b.line(1);
    line.set_name("main").set_timestamp_ns(line_ns);
    for i in 0..events {
        line.add_event("step")
            .set_offset_ps(i as i64 * 10)
            .set_duration_ps(5);
    }
    if dangling {
        for event in &mut plane.lines[0].events {
            event.metadata_id = 999;
        }
    }
    encode(&XSpace {
        planes: vec![plane],
        ..XSpace::default()
    })
}

#[test]
fn validate_prints_ten_problems_of_a_kind_and_counts_the_rest() {
    let path = write_temp("dangling.xplane.pb", &space_bytes(1244, 0, true));
    let out = profkit(&["validate", path.to_str().unwrap()], None);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 11, "{stdout}");
    assert!(
        lines[10].ends_with(
            "... and 1,234 more of this kind (UnknownEventMetadata; --all prints them all)"
        ),
        "{stdout}"
    );
    let out = profkit(&["validate", path.to_str().unwrap(), "--all"], None);
    assert_eq!(text(&out.stdout).lines().count(), 1244);
    // JSON lists every problem.
    let out = profkit(&["validate", path.to_str().unwrap(), "--json"], None);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["problems"].as_array().map(Vec::len), Some(1244));
}

#[test]
fn epoch_line_timestamps_get_one_clear_message() {
    // A builder user who takes the line start from the wall clock.
    let path = write_temp(
        "epoch.xplane.pb",
        &space_bytes(500, 1_763_900_000_000_000_000, false),
    );
    let out = profkit(&["validate", path.to_str().unwrap()], None);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.contains("planes[0].lines[0]: line timestamp_ns 1763900000000000000"),
        "{stdout}"
    );
    assert!(stdout.contains("session-relative"), "{stdout}");
    assert!(stdout.contains("profile_start_time"), "{stdout}");
}

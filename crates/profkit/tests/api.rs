//! `profkit::api`: the commands in-process, their answers as values equal to the command's JSON,
//! failures as errors, and a cancelled call leaving nothing behind.

use std::path::{Path, PathBuf};
use std::process::Command;

use profkit::Value;
use profkit::api::{self, Control, ErrorKind, Limits};

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-api-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The command's own `--json` answer, for comparison.
fn command_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(args)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A value as `serde_json` holds it (the samples' numbers fit in 64 bits).
fn as_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => match (i64::try_from(*i), u64::try_from(*i)) {
            (Ok(i), _) => i.into(),
            (_, Ok(u)) => u.into(),
            _ => i.to_string().into(),
        },
        Value::Float(f) => (*f).into(),
        Value::Str(s) => s.clone().into(),
        Value::List(items) => items.iter().map(as_json).collect(),
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| (k.clone(), as_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn inspect_and_validate_answer_what_the_command_prints() {
    let inputs = [
        "xplane/gpu-device/input.xplane.pb",
        "chrome/paddle-sample/input.json",
    ];
    for input in inputs {
        let path = conformance().join(input);
        let shown = path.to_str().unwrap();
        let doc = api::inspect(
            &path,
            &api::InspectOptions::default(),
            &Limits::default(),
            &Control::new(),
        )
        .unwrap();
        assert_eq!(
            as_json(&doc),
            command_json(&["inspect", "--json", shown]),
            "{input}"
        );
        let doc = api::validate(
            &path,
            &api::ValidateOptions::default(),
            &Limits::default(),
            &Control::new(),
        )
        .unwrap();
        assert_eq!(
            as_json(&doc),
            command_json(&["validate", "--json", shown]),
            "{input}"
        );
    }
}

#[test]
fn failures_are_errors_of_their_kind() {
    let control = Control::new();
    let missing = api::inspect(
        Path::new("/nonexistent/x.xplane.pb"),
        &api::InspectOptions::default(),
        &Limits::default(),
        &control,
    )
    .unwrap_err();
    assert_eq!(missing.kind, ErrorKind::Input);
    assert!(missing.message.starts_with("/nonexistent/x.xplane.pb: "));
    let sample = conformance().join("xplane/gpu-device/input.xplane.pb");
    let mut options = api::ConvertOptions::new();
    options.to = Some("no-such-format".into());
    let usage = api::convert(
        &[sample],
        Path::new("out.json"),
        &options,
        &Limits::default(),
        &control,
    )
    .unwrap_err();
    assert_eq!(usage.kind, ErrorKind::Usage, "{usage}");
    let bad_limit = Limits::new(Some("lots".into()), None);
    let usage = api::inspect(
        &conformance().join("xplane/gpu-device/input.xplane.pb"),
        &api::InspectOptions::default(),
        &bad_limit,
        &control,
    )
    .unwrap_err();
    assert_eq!(usage.kind, ErrorKind::Usage, "{usage}");
}

#[test]
fn convert_writes_the_output_and_a_report_is_text_or_data() {
    let dir = scratch("convert");
    let sample = conformance().join("xplane/gpu-device/input.xplane.pb");
    let out = dir.join("out.json");
    api::convert(
        std::slice::from_ref(&sample),
        &out,
        &api::ConvertOptions::new(),
        &Limits::default(),
        &Control::new(),
    )
    .unwrap();
    let expected = std::fs::read(conformance().join("xplane/gpu-device/chrome.json")).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), expected);
    // An XSpace's report is xprof's TF Stats table by default, Paddle's tables with their style.
    let mut options = api::ReportOptions::new();
    let text = api::report(&sample, &options, &Limits::default(), &Control::new()).unwrap();
    assert!(
        matches!(&text, api::Report::Text(t) if t.starts_with("Framework op stats")),
        "{text:?}"
    );
    options.json = true;
    let data = api::report(&sample, &options, &Limits::default(), &Control::new()).unwrap();
    assert!(matches!(&data, api::Report::Data(Value::List(tables)) if tables.len() == 2));
    options.style = Some("paddle".into());
    let data = api::report(&sample, &options, &Limits::default(), &Control::new()).unwrap();
    assert!(matches!(data, api::Report::Data(Value::Map(_))));
    options.json = false;
    let text = api::report(&sample, &options, &Limits::default(), &Control::new()).unwrap();
    assert!(matches!(text, api::Report::Text(t) if t.contains("Overview Summary")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cancelled_call_ends_cancelled_and_leaves_nothing_behind() {
    let sample = conformance().join("xplane/gpu-device/input.xplane.pb");
    for to in ["chrome", "parquet"] {
        let dir = scratch(&format!("cancel-{to}"));
        let out = dir.join("out");
        let control = Control::new();
        control.cancel();
        let mut options = api::ConvertOptions::new();
        options.to = Some(to.into());
        let error = api::convert(
            std::slice::from_ref(&sample),
            &out,
            &options,
            &Limits::default(),
            &control,
        )
        .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Cancelled, "{to}: {error}");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{to}: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn xprof_with_a_grouping_is_the_commands() {
    // JAX on CPU: op_profile by each grouping is xprof's bytes, as `--group-by` gives them.
    let case = conformance().join("xplane/real-jax-plain");
    let inputs = [case.join("input.xplane.pb")];
    for (group_by, file) in [
        (None, "xprof.op_profile.json"),
        (Some("category"), "xprof.op_profile.category.json"),
        (Some("provenance"), "xprof.op_profile.provenance.json"),
    ] {
        let mut options = api::XprofOptions::new();
        options.group_by = group_by.map(str::to_owned);
        let (text, notes) = api::xprof_with(
            Some("op_profile"),
            &inputs,
            &options,
            &Limits::default(),
            &Control::new(),
        )
        .unwrap();
        assert_eq!(text, std::fs::read_to_string(case.join(file)).unwrap());
        assert!(notes.is_empty(), "{notes:?}");
    }
    let mut options = api::XprofOptions::new();
    options.group_by = Some("category".into());
    let err = api::xprof_with(
        Some("hlo_stats"),
        &inputs,
        &options,
        &Limits::default(),
        &Control::new(),
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Usage);
}

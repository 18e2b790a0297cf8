//! The host and the checker, in this process, against the C test plugin `tests/plugins/broken.c`
//! in its modes. Modes that crash or hang the process are tested through `profkit plugin check`,
//! which runs the plugin in a child process (crates/profkit/tests/plugin.rs).

mod support;

use std::path::Path;

use profkit_plugin::check::{Check, CheckId, CheckOptions, Message, Outcome, run_in_process};
use profkit_plugin::host::Library;
use profkit_plugin::{Error, status};

// This test binary is the host: it exports the TF_Status functions (see build.rs).
profkit_plugin::export_tf_status!();

/// The checks of the plugin at `lib`, run in this process.
fn checks_of(lib: &Path) -> Vec<Check> {
    let options = CheckOptions {
        sessions: 3,
        // Other tests run in this process at the same time: memory is checked in the CLI tests.
        max_rss_growth: u64::MAX,
        ..CheckOptions::default()
    };
    let mut checks = Vec::new();
    run_in_process(lib, &options, &mut |m| {
        if let Message::Check { check } = m {
            checks.push(check.clone());
        }
    });
    checks
}

/// What a check must find: its outcome, and words its detail holds.
type Want = (CheckId, Outcome, &'static str);

/// The problems with `checks` against `want`: a check missing or with another outcome or detail,
/// and checks out of report order (the child reports all but no-crash, each once).
fn problems(checks: &[Check], want: &[Want]) -> Vec<String> {
    let mut found = Vec::new();
    let ids: Vec<CheckId> = checks.iter().map(|c| c.id).collect();
    if ids != CheckId::ALL[..CheckId::ALL.len() - 1] {
        found.push(format!("the child reported {ids:?}"));
    }
    for &(id, outcome, needle) in want {
        match checks.iter().find(|c| c.id == id) {
            None => found.push(format!("{id:?} missing")),
            Some(c) if c.outcome != outcome || !c.detail.contains(needle) => found.push(format!(
                "{id:?}: want {outcome:?} with {needle:?}, got {:?}: {:?}",
                c.outcome, c.detail
            )),
            Some(_) => {}
        }
    }
    found
}

/// The C test plugin's modes and what the checker must find in each.
const CASES: &[(&str, &[Want])] = &[
    (
        "null_fn",
        &[
            (
                CheckId::Init,
                Outcome::Fail,
                "'collect_data_xspace' field in TP_ProfilerFns must be set",
            ),
            (CheckId::Restart, Outcome::Skip, "null"),
        ],
    ),
    (
        "bad_device",
        &[
            (
                CheckId::DeviceType,
                Outcome::Fail,
                "\"MyDevice\" does not match",
            ),
            (CheckId::Init, Outcome::Fail, "abort"),
            (CheckId::Restart, Outcome::Pass, "3 sessions"),
        ],
    ),
    (
        // TF_SetStatus hard-linked.
        "error_init",
        &[(
            CheckId::Init,
            Outcome::Fail,
            "TF_InitProfiler returned UNAVAILABLE: no device here",
        )],
    ),
    (
        "size_mismatch",
        &[(CheckId::CallsAgree, Outcome::Fail, "the second")],
    ),
    (
        // Asks for more than any buffer: every session fails, and nothing was compared.
        "size_max",
        &[
            (
                CheckId::Restart,
                Outcome::Fail,
                "over the 2 GiB protobuf limit",
            ),
            (CheckId::CallsAgree, Outcome::Fail, "no buffer was fetched"),
            (CheckId::ValidXspace, Outcome::Skip, "no XSpace"),
        ],
    ),
    (
        "no_size",
        &[(CheckId::FirstCallSize, Outcome::Fail, "uninitialised")],
    ),
    (
        "ignore_small",
        &[(CheckId::SmallBuffer, Outcome::Fail, "wrote past the end")],
    ),
    (
        "accept_small",
        &[(CheckId::SmallBuffer, Outcome::Fail, "accepted")],
    ),
    (
        "empty_bytes",
        &[(CheckId::EmptySession, Outcome::Fail, "holding no events")],
    ),
    (
        "not_restartable",
        &[(
            CheckId::Restart,
            Outcome::Fail,
            "this profiler starts only once",
        )],
    ),
    (
        "destroy_frees",
        &[(
            CheckId::Destroy,
            Outcome::Fail,
            "state freed by destroy_profiler",
        )],
    ),
    (
        // Replacing core-owned pointers.
        "clobber",
        &[
            (
                CheckId::Init,
                Outcome::Fail,
                "'device_type' field in TP_Profiler must be set",
            ),
            (CheckId::Abi, Outcome::Fail, "params.profiler was replaced"),
        ],
    ),
    (
        // Stricter than TensorFlow.
        "bad_struct_size",
        &[
            (CheckId::Init, Outcome::Pass, "OK"),
            (
                CheckId::Abi,
                Outcome::Fail,
                "TP_Profiler.struct_size is 16, not 24",
            ),
        ],
    ),
];

#[test]
#[cfg_attr(miri, ignore)]
fn this_process_exports_its_status_functions() {
    assert!(status::host_exported());
    assert!(status::lookup().is_some());
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_correct_c_plugin_registers_and_runs_sessions() {
    let lib = Library::open(support::c_plugin("good")).unwrap();
    let registration = lib.init();
    assert_eq!(registration.tensorflow_problems(), Vec::<String>::new());
    assert_eq!(registration.strict_problems(), Vec::<String>::new());
    assert_eq!(registration.device_type().as_deref(), Some("C_PLUGIN"));
    let mut profiler = registration.profiler().unwrap();
    for session in 1..=3 {
        let profile = profiler.session(|| {}).unwrap();
        let plane = &profile.collected.space.planes[0];
        assert_eq!(plane.name, "/device:CUSTOM:0");
        assert_eq!(plane.lines[0].events.len(), session);
        let space = profile.into_xspace();
        let names: Vec<&str> = space.planes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["/device:CUSTOM:0", "Task Environment"]);
        // Rebased to the session start, as TensorFlow does.
        assert!(space.planes[0].lines[0].timestamp_ns < 60_000_000_000);
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn every_check_passes_for_a_correct_plugin() {
    let checks = checks_of(&support::c_plugin("good"));
    for check in &checks {
        assert_eq!(check.outcome, Outcome::Pass, "{check:?}");
    }
    assert_eq!(
        checks.len(),
        CheckId::ALL.len() - 1,
        "all but no-crash come from the child"
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn missing_files_and_symbols_are_load_failures() {
    let err = Library::open("/nonexistent/libnothing.so").unwrap_err();
    assert!(matches!(err, Error::Load { .. }), "{err}");
    let dir = support::scratch();
    let source = dir.join("nothing.c");
    std::fs::write(&source, "int not_a_plugin = 1;\n").unwrap();
    let lib = dir.join("libnothing.so");
    support::compile(&lib, &["-shared", "-fPIC", source.to_str().unwrap()]);
    let err = Library::open(&lib).unwrap_err();
    assert!(
        err.to_string().contains("does not export TF_InitProfiler"),
        "{err}"
    );
    let checks = checks_of(&lib);
    let want = [
        (CheckId::Load, Outcome::Fail, "TF_InitProfiler"),
        (CheckId::Restart, Outcome::Skip, "did not load"),
    ];
    assert_eq!(problems(&checks, &want), Vec::<String>::new());
}

#[test]
#[cfg_attr(miri, ignore)]
fn each_broken_mode_fails_its_checks() {
    support::run_cases(
        CASES,
        |(mode, _)| mode,
        |(mode, want)| problems(&checks_of(&support::c_plugin(mode)), want),
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn the_host_refuses_a_null_function() {
    let lib = Library::open(support::c_plugin("null_fn")).unwrap();
    assert!(matches!(lib.init().profiler(), Err(Error::Invalid { .. })));
}

#[test]
#[cfg_attr(miri, ignore)]
fn the_host_refuses_sizes_that_differ_between_the_two_calls() {
    let lib = Library::open(support::c_plugin("size_mismatch")).unwrap();
    let mut profiler = lib.init().profiler().unwrap();
    let err = profiler.session(|| {}).unwrap_err();
    assert!(matches!(err, Error::SizeMismatch { .. }), "{err}");
}

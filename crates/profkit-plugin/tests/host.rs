//! The host and the checker, in this process, against the C test plugin `tests/plugins/broken.c`
//! in its modes. Modes that crash or hang the process are tested through `profkit plugin check`,
//! which runs the plugin in a child process (crates/profkit/tests/plugin.rs).

mod support;

use profkit_plugin::check::{Check, CheckId, CheckOptions, Outcome, run_in_process};
use profkit_plugin::host::Library;
use profkit_plugin::{Error, status};

// This test binary is the host: it exports the TF_Status functions (see build.rs).
profkit_plugin::export_tf_status!();

fn checks(mode: &str, tag: &str) -> Vec<Check> {
    let lib = support::c_plugin(mode, tag);
    let options = CheckOptions {
        sessions: 3,
        // Other tests run in this process at the same time: memory is checked in the CLI tests.
        max_rss_growth: u64::MAX,
        ..CheckOptions::default()
    };
    let mut checks = Vec::new();
    run_in_process(&lib, &options, &mut |m| {
        if let profkit_plugin::check::Message::Check { check } = m {
            checks.push(check.clone());
        }
    });
    checks
}

fn outcome(checks: &[Check], id: CheckId) -> (Outcome, String) {
    let c = checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("{id:?} missing from {checks:#?}"));
    (c.outcome, c.detail.clone())
}

#[track_caller]
fn expect(checks: &[Check], id: CheckId, want: Outcome, needle: &str) {
    let (got, detail) = outcome(checks, id);
    assert_eq!(got, want, "{id:?}: {detail}\n{checks:#?}");
    assert!(
        detail.contains(needle),
        "{id:?}: {detail:?} lacks {needle:?}"
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn this_process_exports_its_status_functions() {
    assert!(status::host_exported());
    assert!(status::lookup().is_some());
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_correct_c_plugin_registers_and_runs_sessions() {
    let lib = Library::open(support::c_plugin("good", "session")).unwrap();
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
    let checks = checks("good", "checks");
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
    let checks = {
        let mut v = Vec::new();
        run_in_process(&lib, &CheckOptions::default(), &mut |m| {
            if let profkit_plugin::check::Message::Check { check } = m {
                v.push(check.clone());
            }
        });
        v
    };
    expect(&checks, CheckId::Load, Outcome::Fail, "TF_InitProfiler");
    expect(&checks, CheckId::Restart, Outcome::Skip, "did not load");
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_null_function_fails_init_and_stops_the_run() {
    let checks = checks("null_fn", "a");
    expect(
        &checks,
        CheckId::Init,
        Outcome::Fail,
        "'collect_data_xspace' field in TP_ProfilerFns must be set",
    );
    expect(&checks, CheckId::Restart, Outcome::Skip, "null");
    let lib = Library::open(support::c_plugin("null_fn", "b")).unwrap();
    assert!(matches!(lib.init().profiler(), Err(Error::Invalid { .. })));
}

#[test]
#[cfg_attr(miri, ignore)]
fn an_illegal_device_type_fails_but_sessions_still_run() {
    let checks = checks("bad_device", "a");
    expect(
        &checks,
        CheckId::DeviceType,
        Outcome::Fail,
        "\"MyDevice\" does not match",
    );
    expect(&checks, CheckId::Init, Outcome::Fail, "abort");
    expect(&checks, CheckId::Restart, Outcome::Pass, "3 sessions");
}

#[test]
#[cfg_attr(miri, ignore)]
fn an_init_error_set_through_a_hard_linked_tf_set_status() {
    let checks = checks("error_init", "a");
    expect(
        &checks,
        CheckId::Init,
        Outcome::Fail,
        "TF_InitProfiler returned UNAVAILABLE: no device here",
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn sizes_that_differ_between_the_two_calls() {
    let checks = checks("size_mismatch", "a");
    expect(&checks, CheckId::CallsAgree, Outcome::Fail, "the second");
    let lib = Library::open(support::c_plugin("size_mismatch", "b")).unwrap();
    let mut profiler = lib.init().profiler().unwrap();
    let err = profiler.session(|| {}).unwrap_err();
    assert!(matches!(err, Error::SizeMismatch { .. }), "{err}");
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_first_call_that_leaves_the_size_unwritten() {
    let checks = checks("no_size", "a");
    expect(
        &checks,
        CheckId::FirstCallSize,
        Outcome::Fail,
        "uninitialised",
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn too_small_buffers_overrun_or_accepted() {
    let checks = checks("ignore_small", "a");
    expect(
        &checks,
        CheckId::SmallBuffer,
        Outcome::Fail,
        "wrote past the end",
    );
    let checks = self::checks("accept_small", "a");
    expect(&checks, CheckId::SmallBuffer, Outcome::Fail, "accepted");
}

#[test]
#[cfg_attr(miri, ignore)]
fn bytes_without_events_from_an_idle_session() {
    let checks = checks("empty_bytes", "a");
    expect(
        &checks,
        CheckId::EmptySession,
        Outcome::Fail,
        "holding no events",
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_plugin_that_starts_once() {
    let checks = checks("not_restartable", "a");
    expect(
        &checks,
        CheckId::Restart,
        Outcome::Fail,
        "this profiler starts only once",
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn destroy_callbacks_that_free_state_in_use() {
    let checks = checks("destroy_frees", "a");
    expect(
        &checks,
        CheckId::Destroy,
        Outcome::Fail,
        "state freed by destroy_profiler",
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn replacing_core_owned_pointers() {
    let checks = checks("clobber", "a");
    expect(
        &checks,
        CheckId::Init,
        Outcome::Fail,
        "'device_type' field in TP_Profiler must be set",
    );
    expect(
        &checks,
        CheckId::Abi,
        Outcome::Fail,
        "params.profiler was replaced",
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn wrong_struct_sizes_are_stricter_than_tensorflow() {
    let checks = checks("bad_struct_size", "a");
    expect(&checks, CheckId::Init, Outcome::Pass, "OK");
    expect(
        &checks,
        CheckId::Abi,
        Outcome::Fail,
        "TP_Profiler.struct_size is 16, not 24",
    );
}

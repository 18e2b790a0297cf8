//! `profkit plugin`: run and check TensorFlow profiler plugins without TensorFlow.
//!
//! This executable is the host: it exports `TF_SetStatus` and the other `TF_Status` functions
//! (defined below by `export_tf_status!`, exported by the linker flags in `build.rs`) so plugins
//! find them as they would find TensorFlow's. `check` runs the plugin in a child process, this
//! same executable with the hidden `__check-child` subcommand, so a crash is reported rather than
//! fatal; the child reports on a private channel (see `profkit_plugin::check::run_isolated`).

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use clap::Subcommand;
use profkit_plugin::check::{self, CheckOptions, Outcome, Report};
use profkit_plugin::host::Library;

use crate::Failure;

profkit_plugin::export_tf_status!();

#[derive(Subcommand)]
pub(crate) enum PluginCommand {
    /// Check a plugin against the pluggable profiler RFC's requirements, in a child process.
    ///
    /// Prints one line per check (pass, fail or skip, and why) and exits 0 only when none fails:
    /// load, init and TensorFlow's validation, device type, strict ABI, destroy callbacks,
    /// restartability, the two-call collect, XSpace validity, an idle session, a too-small
    /// buffer, memory growth, call times, and crashes or hangs.
    Check {
        /// The plugin: a shared library exporting `TF_InitProfiler`.
        lib: PathBuf,
        /// How many sessions to run for restartability and memory growth.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        sessions: u32,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
        /// A plugin call taking longer fails the call-time check; ten times this is a hang.
        #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
        max_call_ms: u64,
    },
    /// Profile for a while with a plugin and write the XSpace, as TensorFlow would write it.
    ///
    /// The plugin runs in this process (`check` isolates it; use that for untrusted plugins). It
    /// is validated as TensorFlow validates it; the planes it returns are merged by name, their
    /// line timestamps rebased to the session start, and a `Task Environment` plane added.
    Run {
        /// The plugin: a shared library exporting `TF_InitProfiler`.
        lib: PathBuf,
        /// The `.xplane.pb` file to write.
        out: PathBuf,
        /// How long the session lasts.
        #[arg(long, value_name = "S", default_value_t = 1.0)]
        seconds: f64,
    },
    /// The child process of `check` (internal).
    #[command(name = "__check-child", hide = true)]
    CheckChild {
        lib: PathBuf,
        #[arg(long)]
        sessions: u32,
        #[arg(long)]
        max_call_ms: u64,
    },
}

fn options(sessions: u32, max_call_ms: u64) -> CheckOptions {
    let max_call = Duration::from_millis(max_call_ms);
    CheckOptions {
        sessions,
        max_call,
        kill_after: (max_call * 10).max(Duration::from_millis(100)),
        ..CheckOptions::default()
    }
}

pub(crate) fn run(command: PluginCommand) -> Result<(), Failure> {
    match command {
        PluginCommand::Check {
            lib,
            sessions,
            json,
            max_call_ms,
        } => check(&lib, sessions, json, max_call_ms),
        PluginCommand::Run { lib, out, seconds } => run_session(&lib, &out, seconds),
        PluginCommand::CheckChild {
            lib,
            sessions,
            max_call_ms,
        } => {
            let options = options(sessions, max_call_ms);
            // Opened before the plugin is loaded, so the secret is read before the plugin runs.
            let mut channel = check::ChildChannel::from_parent()
                .map_err(|e| Failure::BadInput(format!("the checker child: {e}")))?;
            check::run_in_process(&lib, &options, &mut |message| {
                // One write per line: it reaches the parent before the next plugin call. A
                // failed write means the parent is gone: nobody to report to, so end quietly.
                if channel.send(message).is_err() {
                    std::process::exit(1);
                }
            });
            Ok(())
        }
    }
}

/// The command that runs this CLI again, when it is not the current executable.
static SELF_COMMAND: OnceLock<Vec<OsString>> = OnceLock::new();

/// Says how to run this CLI again, for `plugin check`, which runs each check in a child of
/// itself: the program and the arguments that come before the CLI's own (for the Python
/// package's command, the interpreter, `-m` and `profkit`). Without it the child is the current
/// executable, which is right for the `profkit` binary. Only the first call counts.
pub fn set_self_command(command: Vec<OsString>) {
    let _ = SELF_COMMAND.set(command);
}

fn self_command() -> Result<Command, Failure> {
    if let Some((program, args)) = SELF_COMMAND.get().and_then(|c| c.split_first()) {
        let mut command = Command::new(program);
        command.args(args);
        return Ok(command);
    }
    let exe = std::env::current_exe()
        .map_err(|e| Failure::BadInput(format!("cannot find the profkit executable: {e}")))?;
    Ok(Command::new(exe))
}

fn check(lib: &Path, sessions: u32, json: bool, max_call_ms: u64) -> Result<(), Failure> {
    if !lib.exists() {
        return Err(Failure::BadInput(format!(
            "{}: no such file",
            lib.display()
        )));
    }
    let mut child = self_command()?;
    child
        .args(["plugin", "__check-child"])
        .arg(lib)
        .args(["--sessions", &sessions.to_string()])
        .args(["--max-call-ms", &max_call_ms.to_string()]);
    let options = options(sessions, max_call_ms);
    let report = check::run_isolated(child, lib, &options)
        .map_err(|e| Failure::BadInput(format!("cannot run the checker: {e}")))?;
    let mut out = std::io::stdout().lock();
    if json {
        write_json(&mut out, &report).map_err(Failure::Output)?;
    } else {
        write_report(&mut out, &report).map_err(Failure::Output)?;
    }
    if report.failed() > 0 {
        return Err(Failure::Invalid);
    }
    Ok(())
}

fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "pass",
        Outcome::Fail => "FAIL",
        Outcome::Skip => "skip",
    }
}

fn write_report(out: &mut impl Write, report: &Report) -> std::io::Result<()> {
    for c in &report.checks {
        writeln!(
            out,
            "{:<4}  {:<15}  {}",
            outcome_word(c.outcome),
            c.id.name(),
            c.detail
        )?;
    }
    write!(
        out,
        "{} passed, {} failed",
        report.passed(),
        report.failed()
    )?;
    if report.skipped() > 0 {
        write!(out, ", {} skipped", report.skipped())?;
    }
    writeln!(out)
}

fn write_json(out: &mut impl Write, report: &Report) -> std::io::Result<()> {
    let checks: Vec<serde_json::Value> = report
        .checks
        .iter()
        .map(|c| {
            serde_json::json!({
                "check": c.id.name(),
                "outcome": c.outcome,
                "detail": c.detail,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "library": report.library.display().to_string(),
        "checks": checks,
        "passed": report.passed(),
        "failed": report.failed(),
        "skipped": report.skipped(),
        "plugin_output": {
            "stdout_bytes": report.output.stdout_bytes,
            "stderr_bytes": report.output.stderr_bytes,
        },
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

fn run_session(lib: &Path, out: &Path, seconds: f64) -> Result<(), Failure> {
    if !seconds.is_finite() || !(0.0..=86_400.0).contains(&seconds) {
        return Err(Failure::Usage(
            "--seconds must be a number from 0 to 86400".into(),
        ));
    }
    let bad = |e: profkit_plugin::Error| Failure::BadInput(format!("{}: {e}", lib.display()));
    let library = Library::open(lib).map_err(bad)?;
    let registration = library.init();
    let mut profiler = registration.profiler().map_err(bad)?;
    let profile = profiler
        .session(|| std::thread::sleep(Duration::from_secs_f64(seconds)))
        .map_err(bad)?;
    let bytes = profile.collected.bytes.len();
    let space = profile.into_xspace();
    profkit_xplane::write_file(&space, out).map_err(|e| Failure::BadInput(e.to_string()))?;
    let events: usize = space
        .planes
        .iter()
        .flat_map(|p| &p.lines)
        .map(|l| l.events.len())
        .sum();
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{}: device type {}, {bytes} bytes collected; wrote {} planes, {events} events to {}",
        lib.display(),
        profiler.device_type(),
        space.planes.len(),
        out.display()
    )
    .map_err(Failure::Output)
}

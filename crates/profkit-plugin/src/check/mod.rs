//! The checker behind `profkit plugin check`: the RFC's requirements for a profiler library, run
//! against any plugin, each reported as one [`Check`] that passes, fails (with why) or is skipped.
//!
//! The plugin runs in a child process so that a crash or a hang is a finding, not the end of the
//! checker: [`run_isolated`] starts the child (the caller supplies the command, normally its own
//! executable with a hidden subcommand), which calls [`run_in_process`] and prints each
//! [`Message`] as a line ([`Message::to_line`]). The parent follows the calls as they begin and
//! end, kills the child when a call does not return in time, and reports a crash together with the
//! call it happened in.
//!
//! The sequence in the child: load; `TF_InitProfiler` and TensorFlow's validation (plus stricter
//! checks); a first session; the destroy callbacks on copies, twice, as TensorFlow may call them
//! right after registration; `sessions` more sessions with some CPU work between start and stop;
//! a session without work; a session whose second collect call gets a buffer one byte too small,
//! then one more session. Resident memory is read after the first and the last of the numbered
//! sessions, and every call is timed.

//!
//! The code follows that split: [`run_in_process`] and the session driver are the child's side,
//! [`run_isolated`] the parent's, [`Message`] the line protocol between them, and each family of
//! checks decides its checks from what the sessions recorded: loading and registration (`load`,
//! `init`, `device-type`, `abi`), restarts (`destroy`, `restart`), the collect calls
//! (`first-call-size`, `calls-agree`, `valid-xspace`, `empty-session`, `small-buffer`) and limits
//! (`memory`, `call-time`); `no-crash` is the parent's.

use std::path::PathBuf;
use std::time::Duration;

mod calls;
mod channel;
mod collect;
mod init;
mod isolated;
mod limits;
mod protocol;
mod restart;
mod runner;
mod session;
mod text;

pub use calls::{busy_work, resident_memory};
pub use channel::{CHANNEL_ENV, ChildChannel, OUTPUT_TAIL};
pub use isolated::run_isolated;
pub use protocol::Message;
pub use runner::run_in_process;

/// How the checks run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// How many sessions test restartability (at least 1; memory growth needs 2).
    pub sessions: u32,
    /// A call taking longer than this fails the call-time check.
    pub max_call: Duration,
    /// A call taking longer than this is a hang: the child is killed.
    pub kill_after: Duration,
    /// CPU work done between start and stop in each session, so a sampling plugin has something
    /// to record.
    pub work: Duration,
    /// How much resident memory may grow from the first to the last session.
    pub max_rss_growth: u64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            sessions: 10,
            max_call: Duration::from_secs(1),
            kill_after: Duration::from_secs(10),
            work: Duration::from_millis(20),
            max_rss_growth: 4 << 20,
        }
    }
}

/// What a check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The requirement holds.
    Pass,
    /// The requirement is broken.
    Fail,
    /// The check could not be exercised (for example: the plugin never returned data); not a
    /// failure.
    Skip,
}

/// The checks, in the order they are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CheckId {
    /// The library loads with `RTLD_NOW | RTLD_LOCAL` and exports `TF_InitProfiler`.
    Load,
    /// `TF_InitProfiler` returns OK and the registration passes TensorFlow's validation.
    Init,
    /// The device type matches `[A-Z][A-Z_]*`.
    DeviceType,
    /// Stricter than TensorFlow: exact struct sizes, core-owned pointers kept, reserved fields null.
    Abi,
    /// The destroy callbacks are harmless when called early and twice.
    Destroy,
    /// Sessions restart cleanly, without error statuses.
    Restart,
    /// The first collect call always writes the size.
    FirstCallSize,
    /// Both collect calls agree on the size and the bytes parse as an XSpace.
    CallsAgree,
    /// The collected XSpace passes profkit's validation.
    ValidXspace,
    /// A session without work returns size 0, or data with events (a sampling plugin).
    EmptySession,
    /// A buffer smaller than the size is refused with `FAILED_PRECONDITION`, untouched past its end.
    SmallBuffer,
    /// Resident memory does not grow across sessions.
    Memory,
    /// No call blocks longer than the bound.
    CallTime,
    /// The plugin never crashes or hangs the process.
    NoCrash,
}

impl CheckId {
    /// Every check, in report order.
    pub const ALL: [CheckId; 14] = [
        CheckId::Load,
        CheckId::Init,
        CheckId::DeviceType,
        CheckId::Abi,
        CheckId::Destroy,
        CheckId::Restart,
        CheckId::FirstCallSize,
        CheckId::CallsAgree,
        CheckId::ValidXspace,
        CheckId::EmptySession,
        CheckId::SmallBuffer,
        CheckId::Memory,
        CheckId::CallTime,
        CheckId::NoCrash,
    ];

    /// The check's short name, as printed.
    pub fn name(self) -> &'static str {
        match self {
            CheckId::Load => "load",
            CheckId::Init => "init",
            CheckId::DeviceType => "device-type",
            CheckId::Abi => "abi",
            CheckId::Destroy => "destroy",
            CheckId::Restart => "restart",
            CheckId::FirstCallSize => "first-call-size",
            CheckId::CallsAgree => "calls-agree",
            CheckId::ValidXspace => "valid-xspace",
            CheckId::EmptySession => "empty-session",
            CheckId::SmallBuffer => "small-buffer",
            CheckId::Memory => "memory",
            CheckId::CallTime => "call-time",
            CheckId::NoCrash => "no-crash",
        }
    }
}

/// One check's result.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Check {
    /// Which check.
    pub id: CheckId,
    /// What it found.
    pub outcome: Outcome,
    /// Why, in a sentence.
    pub detail: String,
}

impl Check {
    fn new(id: CheckId, outcome: Outcome, detail: impl Into<String>) -> Check {
        Check {
            id,
            outcome,
            detail: detail.into(),
        }
    }
    fn pass(id: CheckId, detail: impl Into<String>) -> Check {
        Check::new(id, Outcome::Pass, detail)
    }
    fn fail(id: CheckId, detail: impl Into<String>) -> Check {
        Check::new(id, Outcome::Fail, detail)
    }
    fn skip(id: CheckId, detail: impl Into<String>) -> Check {
        Check::new(id, Outcome::Skip, detail)
    }
}

/// All checks of one plugin.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The plugin library.
    pub library: PathBuf,
    /// One entry per [`CheckId`], in [`CheckId::ALL`] order.
    pub checks: Vec<Check>,
    /// What the plugin printed, as text: it never counts as a result.
    pub output: PluginOutput,
}

/// What the checker child (the plugin, mostly) printed on its standard output and error: the
/// last [`OUTPUT_TAIL`] bytes of each, and how many bytes there were in all.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PluginOutput {
    /// Bytes written to standard output.
    pub stdout_bytes: u64,
    /// Bytes written to standard error.
    pub stderr_bytes: u64,
    /// The end of standard output.
    pub stdout_tail: String,
    /// The end of standard error.
    pub stderr_tail: String,
}

impl Report {
    /// How many checks passed.
    pub fn passed(&self) -> usize {
        self.count(Outcome::Pass)
    }
    /// How many checks failed.
    pub fn failed(&self) -> usize {
        self.count(Outcome::Fail)
    }
    /// How many checks were skipped.
    pub fn skipped(&self) -> usize {
        self.count(Outcome::Skip)
    }
    fn count(&self, outcome: Outcome) -> usize {
        self.checks.iter().filter(|c| c.outcome == outcome).count()
    }
    /// The check with `id`.
    pub fn get(&self, id: CheckId) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }
}

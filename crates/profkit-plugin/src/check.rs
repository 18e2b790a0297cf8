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

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use profkit_xplane::XSpace;

use crate::abi::Code;
use crate::host::{DEFAULT_MAX_XSPACE_SIZE, Library, PluginProfiler, Registration};
use crate::status::HostStatus;
use crate::{Error, Result};

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

/// What the child tells the parent, one per line.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// A call into the plugin begins.
    Begin {
        /// The call.
        call: String,
        /// The session it belongs to, if any.
        session: Option<u32>,
    },
    /// The call that began last returned.
    End,
    /// A check is decided.
    Check {
        /// The result.
        check: Check,
    },
    /// Everything ran.
    Done,
}

/// Marks protocol lines, so output the plugin itself prints to stdout does not confuse the parent.
const LINE_MARK: &str = "\u{1e}profkit-check ";

impl Message {
    /// The line the child prints for this message (without the newline).
    pub fn to_line(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_else(|_| "{\"type\":\"end\"}".into());
        format!("{LINE_MARK}{json}")
    }

    /// The message in a line of the child's output, if there is one.
    pub fn from_line(line: &str) -> Option<Message> {
        let at = line.find(LINE_MARK)?;
        serde_json::from_str(line.get(at + LINE_MARK.len()..)?).ok()
    }
}

/// Runs the checks in this process, reporting progress and results through `emit`. A plugin that
/// crashes or hangs takes this process with it: run this in a child ([`run_isolated`]).
pub fn run_in_process(library: &Path, options: &CheckOptions, emit: &mut dyn FnMut(&Message)) {
    let mut runner = Runner {
        emit,
        options: options.clone(),
        slowest: None,
    };
    runner.run(library);
    (runner.emit)(&Message::Done);
}

/// Busy CPU work for `duration`, so a sampling plugin sees this thread run.
pub fn busy_work(duration: Duration) {
    let started = Instant::now();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while started.elapsed() < duration {
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        std::hint::black_box(x);
    }
}

/// Resident memory of this process in bytes, from `/proc/self/status`.
pub fn resident_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// What one session did.
#[derive(Default)]
struct SessionRun {
    index: u32,
    /// The first error, as a sentence; the session ended there.
    failure: Option<String>,
    /// Whether the first collect call wrote the size (`None`: not reached).
    size_written: Option<bool>,
    /// The size from the first call.
    size: usize,
    /// The status of the second call.
    second_status: Option<Result<()>>,
    /// The size after the second call.
    second_size: Option<usize>,
    /// Whether the second call wrote past the buffer it was told about.
    overran: bool,
    /// What the bytes held (`None` for no data), or why they did not parse.
    parsed: Option<std::result::Result<Parsed, String>>,
    /// When start was called, in nanoseconds since the Unix epoch.
    start_time_ns: u64,
}

impl SessionRun {
    fn events(&self) -> usize {
        match &self.parsed {
            Some(Ok(parsed)) => parsed.events,
            _ => 0,
        }
    }
}

/// What a collected XSpace held: kept instead of the XSpace, so the checker's own memory does not
/// grow with the sessions it runs.
#[derive(Debug, Default)]
struct Parsed {
    planes: Vec<String>,
    events: usize,
    /// profkit's validation problems once the space is rebased to the session start, as
    /// TensorFlow does (plugins write absolute line timestamps).
    problems: Vec<String>,
}

impl Parsed {
    fn of(mut space: XSpace, start_time_ns: u64) -> Parsed {
        let start = i64::try_from(start_time_ns).unwrap_or(i64::MAX);
        profkit_xplane::utils::normalize_space_timestamps(&mut space, start);
        Parsed {
            planes: space.planes.iter().map(|p| p.name.clone()).collect(),
            events: count_events(&space),
            problems: profkit_xplane::validate(&space)
                .iter()
                .map(ToString::to_string)
                .collect(),
        }
    }
}

fn count_events(space: &XSpace) -> usize {
    space
        .planes
        .iter()
        .flat_map(|p| &p.lines)
        .map(|l| l.events.len())
        .sum()
}

/// Bytes after the buffer the plugin is told about, to see whether it writes past the end.
const GUARD: usize = 64;
const GUARD_BYTE: u8 = 0xA5;

struct Runner<'e> {
    emit: &'e mut dyn FnMut(&Message),
    options: CheckOptions,
    /// The slowest call so far: (call, session, duration).
    slowest: Option<(String, Option<u32>, Duration)>,
}

impl Runner<'_> {
    fn report(&mut self, check: Check) {
        (self.emit)(&Message::Check { check });
    }

    /// Runs `f` as the plugin call `call` of `session`: announced, timed.
    fn call<R>(&mut self, call: &str, session: Option<u32>, f: impl FnOnce() -> R) -> R {
        (self.emit)(&Message::Begin {
            call: call.to_owned(),
            session,
        });
        let started = Instant::now();
        let result = f();
        let took = started.elapsed();
        (self.emit)(&Message::End);
        if self.slowest.as_ref().is_none_or(|(_, _, d)| took > *d) {
            self.slowest = Some((call.to_owned(), session, took));
        }
        result
    }

    fn skip_rest(&mut self, from: CheckId, why: &str) {
        let start = CheckId::ALL.iter().position(|&c| c == from).unwrap_or(0);
        for &id in CheckId::ALL.get(start..).unwrap_or(&[]) {
            if id != CheckId::NoCrash {
                self.report(Check::skip(id, format!("not run: {why}")));
            }
        }
    }

    fn run(&mut self, path: &Path) {
        let library = match self.call("dlopen", None, || Library::open(path)) {
            Ok(library) => library,
            Err(e) => {
                self.report(Check::fail(CheckId::Load, e.to_string()));
                self.skip_rest(CheckId::Init, "the library did not load");
                return;
            }
        };
        self.report(Check::pass(
            CheckId::Load,
            "opened with RTLD_NOW | RTLD_LOCAL, as TensorFlow does; TF_InitProfiler found",
        ));
        let registration = self.call("TF_InitProfiler", None, || library.init());
        self.report_registration(&registration);
        let Some(mut profiler) = registration.profiler_unchecked() else {
            self.skip_rest(
                CheckId::Destroy,
                "start, stop or collect_data_xspace is null",
            );
            return;
        };
        self.sessions(&registration, &mut profiler);
    }

    fn report_registration(&mut self, registration: &Registration) {
        let problems = registration.tensorflow_problems();
        let took = fmt_duration(registration.duration);
        self.report(if problems.is_empty() {
            Check::pass(
                CheckId::Init,
                format!(
                    "TF_InitProfiler returned OK in {took} and the registration passes \
                     TensorFlow's validation"
                ),
            )
        } else {
            Check::fail(
                CheckId::Init,
                format!(
                    "TensorFlow would abort the process at import: {}",
                    problems.join("; ")
                ),
            )
        });
        self.report(match registration.device_type() {
            None => Check::fail(CheckId::DeviceType, "TP_Profiler.device_type is null"),
            Some(d) if crate::abi::is_valid_device_type(&d) => {
                Check::pass(CheckId::DeviceType, format!("{d:?} matches [A-Z][A-Z_]*"))
            }
            Some(d) => Check::fail(
                CheckId::DeviceType,
                format!(
                    "{d:?} does not match [A-Z][A-Z_]*: TensorFlow aborts the process at import"
                ),
            ),
        });
        let strict = registration.strict_problems();
        self.report(if strict.is_empty() {
            Check::pass(
                CheckId::Abi,
                "struct sizes are those of version 0.0.1, the core-owned pointers and version \
                 are untouched, reserved fields are null",
            )
        } else {
            Check::fail(CheckId::Abi, strict.join("; "))
        });
    }

    /// Everything from the first session on.
    fn sessions(&mut self, registration: &Registration, profiler: &mut PluginProfiler) {
        let work = self.options.work;
        let probe = self.session(profiler, 0, Some(work), 0);
        self.call("destroy_profiler, destroy_profiler_fns", None, || {
            registration.destroy_copies()
        });
        self.call("destroy_profiler, destroy_profiler_fns", None, || {
            registration.destroy_copies()
        });

        let count = self.options.sessions.max(1);
        let mut runs = Vec::new();
        let mut rss_first = None;
        let mut rss_last = None;
        for index in 1..=count {
            let run = self.session(profiler, index, Some(work), 0);
            if index == 1 {
                self.report(destroy_check(&probe, &run));
                rss_first = resident_memory();
            }
            if index == count {
                rss_last = resident_memory();
            }
            runs.push(run);
        }
        self.report(restart_check(&runs));
        self.report(first_call_check(&runs));
        self.report(agree_check(&runs));
        self.report(valid_check(&runs));

        let empty = self.session(profiler, count + 1, None, 0);
        self.report(empty_check(&empty));

        let small = self.session(profiler, count + 2, Some(work), 1);
        let after = self.session(profiler, count + 3, Some(work), 0);
        self.report(small_buffer_check(&small, &after));

        self.report(memory_check(
            rss_first,
            rss_last,
            count,
            self.options.max_rss_growth,
        ));
        let check = match &self.slowest {
            Some((call, session, took)) => {
                let place = in_session(call, *session);
                let bound = fmt_duration(self.options.max_call);
                if *took > self.options.max_call {
                    Check::fail(
                        CheckId::CallTime,
                        format!("{place} took {} (bound {bound})", fmt_duration(*took)),
                    )
                } else {
                    Check::pass(
                        CheckId::CallTime,
                        format!(
                            "slowest call: {place}, {} (bound {bound})",
                            fmt_duration(*took)
                        ),
                    )
                }
            }
            None => Check::skip(CheckId::CallTime, "no call was made"),
        };
        self.report(check);
    }

    /// One session: start, optional work, stop, the size call and the copy call, with the buffer
    /// `shortfall` bytes smaller than the size.
    fn session(
        &mut self,
        profiler: &mut PluginProfiler,
        index: u32,
        work: Option<Duration>,
        shortfall: usize,
    ) -> SessionRun {
        let mut run = SessionRun {
            index,
            ..Default::default()
        };
        run.start_time_ns = crate::host::now_ns();
        if let Err(e) = self.call("start", Some(index), || profiler.start()) {
            run.failure = Some(e.to_string());
            return run;
        }
        if let Some(work) = work {
            busy_work(work);
        }
        if let Err(e) = self.call("stop", Some(index), || profiler.stop()) {
            run.failure = Some(e.to_string());
            return run;
        }
        let mut status = HostStatus::new();
        let first = self.call("collect_data_xspace (size)", Some(index), || {
            profiler.collect_size(&mut status)
        });
        run.size_written = Some(first.size.is_some());
        if let Err(e) = first.status {
            run.failure = Some(format!("{e} (first call)"));
            return run;
        }
        let Some(size) = first.size else {
            run.failure = Some("collect_data_xspace left the size unwritten".into());
            return run;
        };
        run.size = size;
        if size == 0 {
            return run;
        }
        if size > DEFAULT_MAX_XSPACE_SIZE {
            run.failure = Some(format!(
                "collect_data_xspace asks for {size} bytes, over the 2 GiB protobuf limit"
            ));
            return run;
        }
        let declared = size - shortfall.min(size);
        let mut buffer = vec![0u8; declared + GUARD];
        if let Some(guard) = buffer.get_mut(declared..) {
            guard.fill(GUARD_BYTE);
        }
        let second = self.call("collect_data_xspace (copy)", Some(index), || {
            profiler.collect_into(&mut buffer, declared, &mut status)
        });
        run.overran = buffer
            .get(declared..)
            .is_some_and(|g| g.iter().any(|&b| b != GUARD_BYTE));
        run.second_size = second.size;
        let failed = second.status.is_err();
        run.second_status = Some(second.status);
        if shortfall > 0 || failed {
            if failed && shortfall == 0 {
                if let Some(Err(e)) = &run.second_status {
                    run.failure = Some(format!("{e} (second call)"));
                }
            }
            return run;
        }
        buffer.truncate(size);
        run.parsed = Some(
            profkit_xplane::decode(buffer)
                .map(|space| Parsed::of(space, run.start_time_ns))
                .map_err(|e| e.to_string()),
        );
        run
    }
}

fn in_session(call: &str, session: Option<u32>) -> String {
    match session {
        None => call.to_owned(),
        Some(session) => format!("{call} in session {session}"),
    }
}

fn fmt_duration(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        format!("{:.2} s", d.as_secs_f64())
    } else {
        format!("{:.1} ms", d.as_secs_f64() * 1000.0)
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

fn failures(runs: &[SessionRun]) -> Vec<String> {
    runs.iter()
        .filter_map(|r| Some(format!("session {}: {}", r.index, r.failure.as_ref()?)))
        .collect()
}

fn first_few(items: &[String]) -> String {
    let mut text = items.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
    if items.len() > 3 {
        text.push_str(&format!("; and {} more", items.len() - 3));
    }
    text
}

fn destroy_check(probe: &SessionRun, after: &SessionRun) -> Check {
    match (&probe.failure, &after.failure) {
        (None, Some(f)) => Check::fail(
            CheckId::Destroy,
            format!(
                "a session worked before the destroy callbacks ran (early, twice, on copies, as \
                 TensorFlow calls them) and failed after: {f}"
            ),
        ),
        _ => Check::pass(
            CheckId::Destroy,
            "destroy_profiler and destroy_profiler_fns ran twice on copies right after a first \
             session; the next session was not affected",
        ),
    }
}

fn restart_check(runs: &[SessionRun]) -> Check {
    let failed = failures(runs);
    if failed.is_empty() {
        Check::pass(
            CheckId::Restart,
            format!(
                "{} sessions ran start, stop and both collect calls without an error status",
                runs.len()
            ),
        )
    } else {
        Check::fail(
            CheckId::Restart,
            format!(
                "{} of {} sessions failed: {}",
                failed.len(),
                runs.len(),
                first_few(&failed)
            ),
        )
    }
}

fn first_call_check(runs: &[SessionRun]) -> Check {
    let reached: Vec<&SessionRun> = runs.iter().filter(|r| r.size_written.is_some()).collect();
    if reached.is_empty() {
        return Check::skip(
            CheckId::FirstCallSize,
            "no session reached collect_data_xspace",
        );
    }
    let unwritten: Vec<String> = reached
        .iter()
        .filter(|r| r.size_written == Some(false))
        .map(|r| format!("session {}", r.index))
        .collect();
    if unwritten.is_empty() {
        Check::pass(
            CheckId::FirstCallSize,
            format!(
                "the first call wrote the size in all {} sessions (TensorFlow leaves it \
                 uninitialised)",
                reached.len()
            ),
        )
    } else {
        Check::fail(
            CheckId::FirstCallSize,
            format!(
                "the first call left *size_in_bytes unwritten in {}: TensorFlow would read an \
                 uninitialised size",
                first_few(&unwritten)
            ),
        )
    }
}

fn agree_check(runs: &[SessionRun]) -> Check {
    let with_data: Vec<&SessionRun> = runs.iter().filter(|r| r.size > 0).collect();
    if with_data.is_empty() {
        return Check::skip(
            CheckId::CallsAgree,
            "no session returned data, so there was nothing to compare (a plugin without a \
             device returns size 0)",
        );
    }
    let mut problems = Vec::new();
    for run in &with_data {
        let n = run.index;
        if let Some(second) = run.second_size
            && second != run.size
        {
            problems.push(format!(
                "session {n}: the first call said {} bytes, the second {second}",
                run.size
            ));
        }
        if run.overran {
            problems.push(format!(
                "session {n}: the second call wrote past the {}-byte buffer",
                run.size
            ));
        }
        if let Some(Err(e)) = &run.parsed {
            problems.push(format!(
                "session {n}: the {} bytes do not parse as an XSpace: {e}",
                run.size
            ));
        }
    }
    if problems.is_empty() {
        let sizes: Vec<usize> = with_data.iter().map(|r| r.size).collect();
        let (lo, hi) = (
            sizes.iter().min().copied().unwrap_or(0),
            sizes.iter().max().copied().unwrap_or(0),
        );
        Check::pass(
            CheckId::CallsAgree,
            format!(
                "{} of {} sessions returned data ({lo} to {hi} bytes); both calls agreed on the \
                 size and every buffer parsed as an XSpace",
                with_data.len(),
                runs.len()
            ),
        )
    } else {
        Check::fail(CheckId::CallsAgree, first_few(&problems))
    }
}

fn valid_check(runs: &[SessionRun]) -> Check {
    let parsed: Vec<(u32, &Parsed)> = runs
        .iter()
        .filter_map(|r| match &r.parsed {
            Some(Ok(parsed)) => Some((r.index, parsed)),
            _ => None,
        })
        .collect();
    let Some((_, last)) = parsed.last() else {
        return Check::skip(CheckId::ValidXspace, "no XSpace was collected");
    };
    let problems: Vec<String> = parsed
        .iter()
        .flat_map(|(index, p)| {
            p.problems
                .iter()
                .map(move |m| format!("session {index}: {m}"))
        })
        .collect();
    if problems.is_empty() {
        Check::pass(
            CheckId::ValidXspace,
            format!(
                "every collected XSpace is valid once rebased to its session start, as \
                 TensorFlow does; the last holds {} plane(s) ({}) with {} events",
                last.planes.len(),
                last.planes.join(", "),
                last.events
            ),
        )
    } else {
        Check::fail(CheckId::ValidXspace, first_few(&problems))
    }
}

fn empty_check(run: &SessionRun) -> Check {
    if let Some(f) = &run.failure {
        return Check::fail(CheckId::EmptySession, format!("the session failed: {f}"));
    }
    if run.size == 0 {
        return Check::pass(
            CheckId::EmptySession,
            "a session without work returned size 0",
        );
    }
    match &run.parsed {
        Some(Err(e)) => Check::fail(
            CheckId::EmptySession,
            format!("returned {} bytes that do not parse: {e}", run.size),
        ),
        _ if run.events() == 0 => Check::fail(
            CheckId::EmptySession,
            format!(
                "returned {} bytes holding no events: with nothing recorded the size must be 0",
                run.size
            ),
        ),
        _ => Check::pass(
            CheckId::EmptySession,
            format!(
                "a session without work returned {} event(s) (fine for a plugin that samples \
                 regardless of use)",
                run.events()
            ),
        ),
    }
}

fn small_buffer_check(small: &SessionRun, after: &SessionRun) -> Check {
    if let Some(f) = &small.failure {
        return Check::fail(CheckId::SmallBuffer, format!("the session failed: {f}"));
    }
    if small.size == 0 {
        return Check::skip(
            CheckId::SmallBuffer,
            "the plugin returned no data, so there was no buffer to refuse",
        );
    }
    let declared = small.size - 1;
    let check = match &small.second_status {
        Some(Ok(())) => Check::fail(
            CheckId::SmallBuffer,
            format!(
                "accepted a {declared}-byte buffer for a {}-byte XSpace without an error",
                small.size
            ),
        ),
        Some(Err(Error::Call { code, .. })) if *code == Code::FAILED_PRECONDITION => Check::pass(
            CheckId::SmallBuffer,
            format!(
                "a {declared}-byte buffer for {} bytes was refused with FAILED_PRECONDITION",
                small.size
            ),
        ),
        Some(Err(e)) => Check::fail(
            CheckId::SmallBuffer,
            format!("refused with {e}, where FAILED_PRECONDITION is expected"),
        ),
        None => Check::fail(CheckId::SmallBuffer, "the second call was not made"),
    };
    if small.overran {
        return Check::fail(
            CheckId::SmallBuffer,
            format!("wrote past the end of a {declared}-byte buffer"),
        );
    }
    if check.outcome == Outcome::Pass
        && let Some(f) = &after.failure
    {
        return Check::fail(
            CheckId::SmallBuffer,
            format!("the session after the refused buffer failed: {f}"),
        );
    }
    check
}

fn memory_check(first: Option<u64>, last: Option<u64>, sessions: u32, limit: u64) -> Check {
    if sessions < 2 {
        return Check::skip(CheckId::Memory, "needs at least 2 sessions");
    }
    let (Some(first), Some(last)) = (first, last) else {
        return Check::skip(
            CheckId::Memory,
            "resident memory is read from /proc/self/status, which is not available",
        );
    };
    let growth = last.saturating_sub(first);
    let text = format!(
        "resident memory went from {} after session 1 to {} after session {sessions}",
        mib(first),
        mib(last)
    );
    if growth > limit {
        Check::fail(
            CheckId::Memory,
            format!(
                "{text}: grew by {}, over the {} limit",
                mib(growth),
                mib(limit)
            ),
        )
    } else {
        Check::pass(CheckId::Memory, format!("{text} (limit +{})", mib(limit)))
    }
}

/// Runs the checks in a child process made from `command`, which must run [`run_in_process`] for
/// `library` with `options` and print every message with [`Message::to_line`] on its own line of
/// standard output. A crash, a hang (a call running longer than `options.kill_after`; the child is
/// then killed) or an early exit of the child becomes a failed check. Errors only when the child
/// cannot be started.
pub fn run_isolated(
    mut command: Command,
    library: &Path,
    options: &CheckOptions,
) -> Result<Report> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| Error::Child("no standard output".into()))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| Error::Child("no standard error".into()))?;
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        // Bytes, not `lines()`: the plugin may print anything, and the pipe must be drained to the
        // end or the child would block writing to it.
        let mut stdout = BufReader::new(stdout);
        let mut line = Vec::new();
        while matches!(stdout.read_until(b'\n', &mut line), Ok(n) if n > 0) {
            if let Some(message) = Message::from_line(&String::from_utf8_lossy(&line)) {
                let _ = tx.send(message);
            }
            line.clear();
        }
    });
    let err_reader = std::thread::spawn(move || tail(stderr, 4096));

    let mut checks: Vec<Check> = Vec::new();
    let mut current: Option<(String, Option<u32>, Instant)> = None;
    let mut last_seen = Instant::now();
    let mut done = false;
    let mut hang: Option<String> = None;
    // Outside plugin calls the child only does its own work and sleeps.
    let quiet_limit = options.kill_after + options.work * 4 + Duration::from_secs(10);
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(message) => {
                last_seen = Instant::now();
                match message {
                    Message::Begin { call, session } => {
                        current = Some((call, session, Instant::now()));
                    }
                    Message::End => current = None,
                    Message::Check { check } => checks.push(check),
                    Message::Done => done = true,
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let stuck = match &current {
                    Some((call, session, began)) if began.elapsed() > options.kill_after => {
                        Some(format!(
                            "{} did not return within {}",
                            in_session(call, *session),
                            fmt_duration(options.kill_after)
                        ))
                    }
                    None if last_seen.elapsed() > quiet_limit => Some(format!(
                        "the checker child went silent for {}",
                        fmt_duration(quiet_limit)
                    )),
                    _ => None,
                };
                if let Some(why) = stuck {
                    hang = Some(why);
                    kill(&mut child);
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait()?;
    let _ = reader.join();
    let stderr_tail = err_reader.join().unwrap_or_default();
    let during = current
        .as_ref()
        .map(|(call, session, _)| format!(" during {}", in_session(call, *session)))
        .unwrap_or_default();

    let crash = if let Some(why) = &hang {
        Some(format!("{why}; the child process was killed"))
    } else if done && status.success() {
        None
    } else {
        Some(format!(
            "the plugin {}{during}{}",
            describe_exit(status),
            last_line(&stderr_tail)
                .map(|l| format!("; its last words: {l}"))
                .unwrap_or_default()
        ))
    };
    let mut report = Report {
        library: library.to_path_buf(),
        checks: Vec::new(),
    };
    for id in CheckId::ALL {
        if id == CheckId::NoCrash {
            report.checks.push(match &crash {
                None => Check::pass(
                    CheckId::NoCrash,
                    "every call returned and the child process exited normally",
                ),
                Some(why) => Check::fail(CheckId::NoCrash, why.clone()),
            });
            continue;
        }
        if id == CheckId::CallTime
            && let Some(why) = &hang
        {
            report.checks.push(Check::fail(id, why.clone()));
            continue;
        }
        match checks.iter().rev().find(|c| c.id == id) {
            Some(check) => report.checks.push(check.clone()),
            None => report.checks.push(Check::fail(
                id,
                if hang.is_some() {
                    "not reached: a call hung first (see no-crash)"
                } else if crash.is_some() {
                    "not reached: the process died first (see no-crash)"
                } else {
                    "not reached: the checker child ended early"
                },
            )),
        }
    }
    Ok(report)
}

fn kill(child: &mut Child) {
    let _ = child.kill();
}

/// How the child ended, in words.
fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                5 => " (SIGTRAP)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("crashed the process with signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("ended the process with exit status {code}"),
        None => "ended the process".to_owned(),
    }
}

/// The last `limit` bytes of `reader`.
fn tail(mut reader: impl Read, limit: usize) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = reader.read(&mut chunk) {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(chunk.get(..n).unwrap_or_default());
        if kept.len() > limit * 2 {
            kept.drain(..kept.len() - limit);
        }
    }
    if kept.len() > limit {
        kept.drain(..kept.len() - limit);
    }
    String::from_utf8_lossy(&kept).into_owned()
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_through_lines_with_noise() {
        let message = Message::Check {
            check: Check::fail(CheckId::SmallBuffer, "why"),
        };
        let line = format!("plugin chatter{}", message.to_line());
        assert_eq!(Message::from_line(&line), Some(message));
        assert_eq!(Message::from_line("just output"), None);
        assert!(Message::Done.to_line().contains("\"type\":\"done\""));
    }

    fn run(size: usize, events: bool) -> SessionRun {
        let mut space = XSpace::default();
        if events {
            let mut plane = profkit_xplane::XPlane::default();
            profkit_xplane::PlaneBuilder::new(&mut plane)
                .line(1)
                .add_event("e");
            space.planes.push(plane);
        }
        SessionRun {
            index: 1,
            size_written: Some(true),
            size,
            second_size: Some(size),
            second_status: Some(Ok(())),
            parsed: (size > 0).then(|| Ok(Parsed::of(space, 0))),
            ..Default::default()
        }
    }

    #[test]
    fn empty_session_rules() {
        assert_eq!(empty_check(&run(0, false)).outcome, Outcome::Pass);
        assert_eq!(empty_check(&run(10, true)).outcome, Outcome::Pass);
        assert_eq!(empty_check(&run(10, false)).outcome, Outcome::Fail);
    }

    #[test]
    fn agreeing_and_disagreeing_sizes() {
        assert_eq!(agree_check(&[run(0, false)]).outcome, Outcome::Skip);
        assert_eq!(agree_check(&[run(5, true)]).outcome, Outcome::Pass);
        let mut bad = run(5, true);
        bad.second_size = Some(4);
        let check = agree_check(&[bad]);
        assert_eq!(check.outcome, Outcome::Fail);
        assert!(
            check.detail.contains("said 5 bytes, the second 4"),
            "{}",
            check.detail
        );
    }

    #[test]
    fn small_buffer_rules() {
        let mut refused = run(5, true);
        refused.second_status = Some(Err(Error::Call {
            call: "collect_data_xspace",
            code: Code::FAILED_PRECONDITION,
            message: String::new(),
        }));
        let ok = run(5, true);
        assert_eq!(small_buffer_check(&refused, &ok).outcome, Outcome::Pass);
        assert_eq!(small_buffer_check(&ok, &ok).outcome, Outcome::Fail);
        assert_eq!(
            small_buffer_check(&run(0, false), &ok).outcome,
            Outcome::Skip
        );
        refused.overran = true;
        assert_eq!(small_buffer_check(&refused, &ok).outcome, Outcome::Fail);
    }

    #[test]
    fn memory_rules() {
        assert_eq!(
            memory_check(Some(10 << 20), Some(11 << 20), 10, 4 << 20).outcome,
            Outcome::Pass
        );
        assert_eq!(
            memory_check(Some(10 << 20), Some(20 << 20), 10, 4 << 20).outcome,
            Outcome::Fail
        );
        assert_eq!(memory_check(None, None, 10, 1).outcome, Outcome::Skip);
        assert_eq!(memory_check(Some(1), Some(1), 1, 1).outcome, Outcome::Skip);
    }

    #[test]
    fn stderr_tail_keeps_the_end() {
        let text = "a".repeat(10_000) + "\nlast words\n";
        let kept = tail(text.as_bytes(), 100);
        assert_eq!(kept.len(), 100);
        assert_eq!(last_line(&kept), Some("last words"));
    }
}

//! The commands as functions: `inspect`, `validate`, `report`, `convert` and `merge` run in the
//! calling process and give their answers as data, for programs that embed profkit (the Python
//! package calls them in-process, with the GIL released).
//!
//! Each function does exactly what the command of the same name does with the same options
//! (one code path: the options become the command's own arguments, parsed as the command parses
//! them), except that nothing is printed: the `--json` document comes back as a [`Value`] built
//! from the document itself (no text is made and parsed back), text as a `String`, and the
//! warnings the command would print as a list. Limits are those of the command line
//! ([`Limits`]: gzip's inflated size, Paddle's message budget; each from its environment
//! variable when not given).
//!
//! A call runs on the calling thread and may be cancelled from another through [`Control`]:
//! the command stops at its next read or write (every input and output goes through readers
//! and writers that look at the flag), its error path removes what it made (the temporary
//! `OUT.profkit-PID.tmp`, a Parquet host's `.host=NAME.tmp-PID` staging directory), and the call
//! returns [`ErrorKind::Cancelled`]. Calls on different threads are independent.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

use crate::value::Value;
use crate::{Cli, Failure};

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The call asks for something that cannot be done (the command's exit code 2).
    Usage,
    /// An input could not be read, or is not valid (the message says what and where).
    Input,
    /// The output could not be written.
    Output,
    /// The caller cancelled the call ([`Control::cancel`]); nothing was left behind.
    Cancelled,
}

/// Why a call failed: its kind and the message the command would print (without `profkit: `).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The message, naming the file and place.
    pub message: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl Error {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }
}

/// The limits of the readers, as the command line's `--max-inflated` and
/// `--paddle-bytes-per-message` (each from its environment variable when `None`).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Limits {
    /// What a gzip-compressed input may decompress to (`2G`, `64x`, `unlimited`).
    pub max_inflated: Option<String>,
    /// Paddle's message budget: one message per this many bytes (0 turns it off).
    pub paddle_bytes_per_message: Option<u64>,
}

impl Limits {
    /// Limits from the two options.
    pub fn new(max_inflated: Option<String>, paddle_bytes_per_message: Option<u64>) -> Limits {
        Limits {
            max_inflated,
            paddle_bytes_per_message,
        }
    }
}

/// A call's cancellation flag: cancel from any thread; the call stops at its next read or write.
#[derive(Clone, Debug, Default)]
pub struct Control {
    cancel: Arc<AtomicBool>,
}

impl Control {
    /// A flag not yet set.
    pub fn new() -> Control {
        Control::default()
    }

    /// Asks the call to stop.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether [`Control::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// What a call said.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Answer {
    /// The `--json` document (for `inspect`, `validate`, `report` with `json`).
    pub doc: Option<Value>,
    /// What the command printed as text (the report; a conversion's one-line summary).
    pub text: String,
    /// The warnings the command printed, as `NAME: warning: MESSAGE`.
    pub warnings: Vec<String>,
    /// `validate`: false when the input has errors (the command's exit code 1).
    pub valid: bool,
}

/// Runs the command of `args` (without the program name) under a capture. Problems found are an
/// answer with `valid` false when `problems_answer` (validate), an [`Error`] otherwise (what the
/// command printed last says why: an XDL dataset `inspect` cannot read whole).
fn run(
    mut args: Vec<OsString>,
    limits: &Limits,
    control: &Control,
    problems_answer: bool,
) -> Result<Answer, Error> {
    if let Some(max) = &limits.max_inflated {
        args.push("--max-inflated".into());
        args.push(max.into());
    }
    if let Some(per) = limits.paddle_bytes_per_message {
        args.push("--paddle-bytes-per-message".into());
        args.push(per.to_string().into());
    }
    let cli = Cli::try_parse_from(std::iter::once(OsString::from("profkit")).chain(args)).map_err(
        |e| {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            Error::new(
                ErrorKind::Usage,
                first.strip_prefix("error: ").unwrap_or(first),
            )
        },
    )?;
    // In the pool of `--threads` / `PROFKIT_THREADS`, kept per size for the process, with the
    // capture installed on the pool's thread that runs the command.
    let pool = crate::threads::count(cli.threads)
        .and_then(crate::threads::pool)
        .map_err(|f| match f {
            crate::Failure::Usage(m) | crate::Failure::BadInput(m) => {
                Error::new(ErrorKind::Usage, m)
            }
            _ => Error::new(ErrorKind::Usage, "cannot make the thread pool"),
        })?;
    let cancel = Arc::clone(&control.cancel);
    let (result, said) =
        pool.install(move || crate::session::captured(cancel, || crate::outcome(crate::run(cli))));
    if control.is_cancelled() {
        return Err(Error::new(ErrorKind::Cancelled, "cancelled by the caller"));
    }
    let text = String::from_utf8_lossy(&said.text).into_owned();
    let answer = |valid| Answer {
        doc: said.doc.clone(),
        text: text.clone(),
        warnings: said.warnings.clone(),
        valid,
    };
    match result {
        Ok(()) => Ok(answer(true)),
        // Problems found: the document says which. A command that printed no document and
        // failed said why last (an XDL input that cannot be read whole).
        Err(Failure::Invalid) if problems_answer && said.doc.is_some() => Ok(answer(false)),
        Err(Failure::Invalid) => Err(Error::new(
            ErrorKind::Input,
            said.last_message
                .clone()
                .unwrap_or_else(|| "the input is not valid".into()),
        )),
        Err(Failure::BadInput(message)) => Err(Error::new(ErrorKind::Input, message)),
        Err(Failure::Usage(message)) => Err(Error::new(ErrorKind::Usage, message)),
        Err(Failure::Output(e)) => Err(Error::new(
            ErrorKind::Output,
            format!("cannot write output: {e}"),
        )),
    }
}

fn path_arg(path: &Path) -> OsString {
    path.as_os_str().to_owned()
}

fn from_arg(args: &mut Vec<OsString>, format: Option<&str>) {
    if let Some(format) = format {
        args.push("--from".into());
        args.push(format.into());
    }
}

/// `inspect`'s options.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct InspectOptions {
    /// The format, when detection from the content is not wanted (`--from`).
    pub format: Option<String>,
    /// Poplar: the graph profile of an execution profile (`--graph`).
    pub graph: Option<PathBuf>,
    /// XSpace: list at most this many planes (`--max-planes`).
    pub max_planes: Option<usize>,
}

impl InspectOptions {
    /// The options, all given.
    pub fn new(format: Option<String>, graph: Option<PathBuf>, max_planes: Option<usize>) -> Self {
        InspectOptions {
            format,
            graph,
            max_planes,
        }
    }
}

/// `profkit inspect --json FILE`: the summary document.
pub fn inspect(
    path: &Path,
    options: &InspectOptions,
    limits: &Limits,
    control: &Control,
) -> Result<Value, Error> {
    let mut args = vec!["inspect".into(), "--json".into(), path_arg(path)];
    from_arg(&mut args, options.format.as_deref());
    if let Some(graph) = &options.graph {
        args.push("--graph".into());
        args.push(path_arg(graph));
    }
    if let Some(max) = options.max_planes {
        args.push("--max-planes".into());
        args.push(max.to_string().into());
    }
    let answer = run(args, limits, control, false)?;
    answer
        .doc
        .ok_or_else(|| Error::new(ErrorKind::Output, "inspect made no summary"))
}

/// `validate`'s options.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ValidateOptions {
    /// The format (`--from`).
    pub format: Option<String>,
    /// Poplar: the graph profile (`--graph`).
    pub graph: Option<PathBuf>,
    /// List at most this many problems (`--max-problems`; the rest are counted).
    pub max_problems: Option<usize>,
}

impl ValidateOptions {
    /// The options, all given.
    pub fn new(
        format: Option<String>,
        graph: Option<PathBuf>,
        max_problems: Option<usize>,
    ) -> Self {
        ValidateOptions {
            format,
            graph,
            max_problems,
        }
    }
}

/// `profkit validate --json FILE`: the document of problems (its `valid` says whether there is
/// an error). An input that cannot be read is an [`Error`].
pub fn validate(
    path: &Path,
    options: &ValidateOptions,
    limits: &Limits,
    control: &Control,
) -> Result<Value, Error> {
    let mut args = vec!["validate".into(), "--json".into(), path_arg(path)];
    from_arg(&mut args, options.format.as_deref());
    if let Some(graph) = &options.graph {
        args.push("--graph".into());
        args.push(path_arg(graph));
    }
    if let Some(max) = options.max_problems {
        args.push("--max-problems".into());
        args.push(max.to_string().into());
    }
    let answer = run(args, limits, control, true)?;
    answer
        .doc
        .ok_or_else(|| Error::new(ErrorKind::Output, "validate made no document"))
}

/// `report`'s options, named as the command's.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ReportOptions {
    /// The format (`--from`).
    pub format: Option<String>,
    /// The legacy report (`--legacy`).
    pub legacy: bool,
    /// The legacy report's order (`--sort`: calls, total, max, min, ave).
    pub sort: Option<String>,
    /// What the legacy report's times measure (`--place`: cpu, cuda, all).
    pub place: Option<String>,
    /// The summary's sort key (`--sorted-by`).
    pub sorted_by: Option<String>,
    /// Leave out the Operator Summary's inner rows (`--no-op-detail`).
    pub no_op_detail: bool,
    /// A table per thread (`--thread-sep`).
    pub thread_sep: bool,
    /// The time unit (`--time-unit`: s, ms, us, ns).
    pub time_unit: Option<String>,
    /// The tables as data (`--json`) rather than text.
    pub json: bool,
    /// The layout (`--style`: xprof, torch, paddle; default: the input's framework's).
    pub style: Option<String>,
    /// torch's table: at most this many rows (`--row-limit`; -1 for all).
    pub row_limit: Option<i64>,
    /// torch's table: rows by input shapes too (`--group-by-input-shape`).
    pub group_by_input_shape: bool,
    /// torch's table: rows by the first N frames of their stacks too (`--group-by-stack-n`).
    pub group_by_stack_n: Option<u32>,
    /// torch's table: rows by operator overload too (`--group-by-overload-name`).
    pub group_by_overload_name: bool,
    /// torch's table: rows for Python calls too (`--include-python-functions`).
    pub include_python_functions: bool,
    /// torch's table: only rows of events without a parent (`--top-level-events-only`).
    pub top_level_events_only: bool,
    /// torch's table: a line above it (`--header`).
    pub header: Option<String>,
    /// torch's table: the name columns' widest (`--max-name-column-width`).
    pub max_name_column_width: Option<u32>,
    /// torch's table: the input shapes column's widest (`--max-shapes-column-width`).
    pub max_shapes_column_width: Option<u32>,
    /// torch's table: the source location column's widest (`--max-src-column-width`).
    pub max_src_column_width: Option<u32>,
}

impl ReportOptions {
    /// Defaults: Paddle's summary tables as text.
    pub fn new() -> Self {
        ReportOptions::default()
    }
}

/// A report: text, or with [`ReportOptions::json`] the tables as data.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Report {
    /// The report as the command prints it.
    Text(String),
    /// The tables as `--json` gives them.
    Data(Value),
}

/// `profkit report FILE`.
pub fn report(
    path: &Path,
    options: &ReportOptions,
    limits: &Limits,
    control: &Control,
) -> Result<Report, Error> {
    let mut args = vec!["report".into(), path_arg(path)];
    from_arg(&mut args, options.format.as_deref());
    let flags = [
        (options.legacy, "--legacy"),
        (options.no_op_detail, "--no-op-detail"),
        (options.thread_sep, "--thread-sep"),
        (options.json, "--json"),
        (options.group_by_input_shape, "--group-by-input-shape"),
        (options.group_by_overload_name, "--group-by-overload-name"),
        (
            options.include_python_functions,
            "--include-python-functions",
        ),
        (options.top_level_events_only, "--top-level-events-only"),
    ];
    args.extend(flags.iter().filter(|(on, _)| *on).map(|(_, f)| f.into()));
    for (value, flag) in [
        (&options.sort, "--sort"),
        (&options.place, "--place"),
        (&options.sorted_by, "--sorted-by"),
        (&options.time_unit, "--time-unit"),
        (&options.style, "--style"),
        (&options.row_limit.map(|n| n.to_string()), "--row-limit"),
        (
            &options.group_by_stack_n.map(|n| n.to_string()),
            "--group-by-stack-n",
        ),
        (&options.header, "--header"),
        (
            &options.max_name_column_width.map(|n| n.to_string()),
            "--max-name-column-width",
        ),
        (
            &options.max_shapes_column_width.map(|n| n.to_string()),
            "--max-shapes-column-width",
        ),
        (
            &options.max_src_column_width.map(|n| n.to_string()),
            "--max-src-column-width",
        ),
    ] {
        if let Some(value) = value {
            args.push(flag.into());
            args.push(value.into());
        }
    }
    let answer = run(args, limits, control, false)?;
    Ok(match answer.doc {
        Some(doc) if options.json => Report::Data(doc),
        _ => Report::Text(answer.text),
    })
}

/// `convert`'s options, named as the command's.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ConvertOptions {
    /// The output format (`--to`; by default from OUT's extension).
    pub to: Option<String>,
    /// The inputs' format (`--from`).
    pub format: Option<String>,
    /// XDL output: the data file size (`--max-file-mb`).
    pub max_file_mb: Option<f64>,
    /// Replace what is already in the output (`--overwrite`).
    pub overwrite: bool,
    /// Chrome output's layout (`--layout`: xprof, trace-event).
    pub layout: Option<String>,
    /// Each input's host (`--host`, once per input).
    pub hosts: Vec<String>,
}

impl ConvertOptions {
    /// Defaults: everything from OUT and the inputs.
    pub fn new() -> Self {
        ConvertOptions::default()
    }
}

/// `profkit convert IN... OUT`: the warnings it printed.
pub fn convert(
    inputs: &[PathBuf],
    out: &Path,
    options: &ConvertOptions,
    limits: &Limits,
    control: &Control,
) -> Result<Vec<String>, Error> {
    let mut args: Vec<OsString> = vec!["convert".into()];
    args.extend(inputs.iter().map(|p| path_arg(p)));
    args.push(path_arg(out));
    if let Some(to) = &options.to {
        args.push("--to".into());
        args.push(to.into());
    }
    from_arg(&mut args, options.format.as_deref());
    if let Some(mb) = options.max_file_mb {
        args.push("--max-file-mb".into());
        args.push(mb.to_string().into());
    }
    if options.overwrite {
        args.push("--overwrite".into());
    }
    if let Some(layout) = &options.layout {
        args.push("--layout".into());
        args.push(layout.into());
    }
    for host in &options.hosts {
        args.push("--host".into());
        args.push(host.into());
    }
    run(args, limits, control, false).map(|a| a.warnings)
}

/// `profkit merge IN... OUT`: the warnings it printed.
pub fn merge(
    inputs: &[PathBuf],
    out: &Path,
    hosts: &[String],
    limits: &Limits,
    control: &Control,
) -> Result<Vec<String>, Error> {
    let mut args: Vec<OsString> = vec!["merge".into()];
    args.extend(inputs.iter().map(|p| path_arg(p)));
    args.push(path_arg(out));
    for host in hosts {
        args.push("--host".into());
        args.push(host.into());
    }
    run(args, limits, control, false).map(|a| a.warnings)
}

/// `profkit hta ANALYSIS TRACE... --json`: HolisticTraceAnalysis's analysis of PyTorch traces,
/// one per rank, as a document (`{"analysis", "ranks", "frames": {name: [records]}, "notes"}`).
pub fn hta(
    analysis: &str,
    traces: &[PathBuf],
    limits: &Limits,
    control: &Control,
) -> Result<Value, Error> {
    hta_with(analysis, traces, &HtaOptions::new(), limits, control)
}

/// `hta`'s options, named as the command's.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct HtaOptions {
    /// kernel-launch-stats: leave out copies' and sets' launches (`--no-memory-events`).
    pub no_memory_events: bool,
    /// user-annotation-breakdown: the host's ranges (`--cpu-annotations`).
    pub cpu_annotations: bool,
    /// queue-full-time: the queue length counted as full (`--max-queue-length`).
    pub max_queue_length: Option<i64>,
}

impl HtaOptions {
    /// HTA's defaults.
    pub fn new() -> Self {
        HtaOptions::default()
    }
}

/// [`hta`] with its options.
pub fn hta_with(
    analysis: &str,
    traces: &[PathBuf],
    options: &HtaOptions,
    limits: &Limits,
    control: &Control,
) -> Result<Value, Error> {
    let mut args: Vec<OsString> = vec!["hta".into(), analysis.into()];
    args.extend(traces.iter().map(|p| path_arg(p)));
    if options.no_memory_events {
        args.push("--no-memory-events".into());
    }
    if options.cpu_annotations {
        args.push("--cpu-annotations".into());
    }
    if let Some(n) = options.max_queue_length {
        args.push("--max-queue-length".into());
        args.push(n.to_string().into());
    }
    args.push("--json".into());
    let answer = run(args, limits, control, false)?;
    answer
        .doc
        .ok_or_else(|| Error::new(ErrorKind::Usage, "hta gave no document"))
}

/// `profkit xprof TOOL IN...` (or `--list` when `tool` is `None`): what xprof's tool returns for
/// the XSpaces (hosts of one run), as its text (xprof's JSON), and the notes naming what is not
/// reproduced.
pub fn xprof(
    tool: Option<&str>,
    inputs: &[PathBuf],
    limits: &Limits,
    control: &Control,
) -> Result<(String, Vec<String>), Error> {
    xprof_with(tool, inputs, &XprofOptions::new(), limits, control)
}

/// `xprof`'s options, named as the command's.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct XprofOptions {
    /// op_profile's grouping: `program` (the default), `category` or `provenance`
    /// (`--group-by`).
    pub group_by: Option<String>,
}

impl XprofOptions {
    /// xprof's defaults.
    pub fn new() -> Self {
        XprofOptions::default()
    }
}

/// [`xprof`] with its options.
pub fn xprof_with(
    tool: Option<&str>,
    inputs: &[PathBuf],
    options: &XprofOptions,
    limits: &Limits,
    control: &Control,
) -> Result<(String, Vec<String>), Error> {
    let mut args: Vec<OsString> = vec!["xprof".into()];
    match tool {
        Some(tool) => args.push(tool.into()),
        None => args.push("--list".into()),
    }
    args.extend(inputs.iter().map(|p| path_arg(p)));
    if let Some(group_by) = &options.group_by {
        args.push("--group-by".into());
        args.push(group_by.into());
    }
    let answer = run(args, limits, control, false)?;
    Ok((answer.text, answer.warnings))
}

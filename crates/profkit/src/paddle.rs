//! The commands for PaddlePaddle's profiles: the legacy `Profile` and the new profiler's node trees
//! (`*.paddle_trace.pb`). Both are read whole (a few megabytes for long runs) and turned into the
//! event model for `report`.

use std::io::Write;

use profkit_events::paddle::{Problem, legacy, nodetree};
use profkit_events::report::summary::{Forest, SortedKey, Summary, SummaryOptions, TimeUnit};
use profkit_events::report::{Place, Report, ReportOptions, SortKey};
use profkit_events::{Recording, pair};

use crate::Failure;
use crate::format::Format;
use crate::input::Input;

/// A decoded Paddle file.
enum Decoded {
    Profile(legacy::Profile),
    NodeTrees(nodetree::NodeTreesProto),
}

impl Decoded {
    fn recording(&self) -> Recording {
        match self {
            Decoded::Profile(p) => legacy::to_recording(p),
            Decoded::NodeTrees(t) => nodetree::to_recording(t),
        }
    }

    fn problems(&self) -> Vec<Problem> {
        match self {
            Decoded::Profile(p) => legacy::validate(p),
            Decoded::NodeTrees(t) => nodetree::validate(t),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Decoded::Profile(_) => "Paddle legacy Profile",
            Decoded::NodeTrees(_) => "Paddle node trees",
        }
    }
}

fn decode(input: Input) -> Result<(String, Format, Decoded), Failure> {
    let options = crate::input::paddle_options();
    let decoded = match input.format {
        Format::PaddleNodeTrees => {
            nodetree::read_node_trees(input.reader, options).map(Decoded::NodeTrees)
        }
        _ => legacy::read_profile(input.reader, options).map(Decoded::Profile),
    }
    .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
    Ok((input.name, input.format, decoded))
}

fn json_out(doc: &impl serde::Serialize) -> Result<(), Failure> {
    crate::session::json(doc)
}

fn ms(ns: u64) -> String {
    format!("{}.{:06} ms", ns / 1_000_000, ns % 1_000_000)
}

pub(crate) fn inspect(input: Input, json: bool) -> Result<(), Failure> {
    let (name, format, decoded) = decode(input)?;
    let recording = decoded.recording();
    let spans = pair(&recording.threads);
    let ranges: usize = spans.threads.iter().map(|t| t.spans.len()).sum();
    let warnings = spans.warnings().count();
    if json {
        let summary = match &decoded {
            Decoded::Profile(p) => serde_json::to_value(legacy::summarize(p)),
            Decoded::NodeTrees(t) => serde_json::to_value(nodetree::summarize(t)),
        }
        .map_err(|e| Failure::Output(e.into()))?;
        return json_out(&serde_json::json!({
            "file": name,
            "format": format.to_string(),
            "summary": summary,
            "threads": recording.threads.len(),
            "ranges": ranges,
            "device_spans": recording.device_spans.len(),
            "pairing_warnings": warnings,
        }));
    }
    let mut text = format!("{name}: {}\n", decoded.kind());
    match &decoded {
        Decoded::Profile(p) => {
            let s = legacy::summarize(p);
            text += &format!(
                "events: {} ({} CPU ranges, {} device), memory events: {}\n",
                s.cpu_events + s.device_events,
                s.cpu_events,
                s.device_events,
                s.mem_events
            );
            let threads: Vec<String> = s
                .threads
                .iter()
                .map(|(t, n)| format!("thread {t}: {n}"))
                .collect();
            text += &format!("threads: {} ({})\n", s.threads.len(), threads.join(", "));
            if let Some((start, end)) = s.cpu_span_ns {
                text += &format!(
                    "time span: {start} to {end} ns ({})\n",
                    ms(end.saturating_sub(start))
                );
            }
            text += &format!("nesting: up to {} levels\n", s.max_depth + 1);
        }
        Decoded::NodeTrees(t) => {
            let s = nodetree::summarize(t);
            text += &format!("version {}, span index {}\n", s.version, s.span_index);
            for th in &s.threads {
                let types: Vec<String> =
                    th.by_type.iter().map(|(k, v)| format!("{k} {v}")).collect();
                text += &format!(
                    "thread {}{}: {} host nodes ({}), {} runtime, {} device, {} memory, {} operator supplements\n",
                    th.thread_id,
                    th.name
                        .as_deref()
                        .map(|n| format!(" {n:?}"))
                        .unwrap_or_default(),
                    th.host_nodes,
                    types.join(", "),
                    th.runtime_nodes,
                    th.device_nodes,
                    th.mem_nodes,
                    th.op_supplement_nodes
                );
                if let Some((start, end)) = th.span_ns {
                    text += &format!(
                        "  time span: {start} to {end} ns ({})\n",
                        ms(end.saturating_sub(start))
                    );
                }
            }
            for (k, v) in &s.extra_info {
                text += &format!("extra info: {k} = {v}\n");
            }
            for d in &s.devices {
                text += &format!("device: {d}\n");
            }
        }
    }
    text += &format!(
        "ranges: {ranges} on {} threads, {} device spans, {warnings} pairing warnings\n",
        recording.threads.len(),
        recording.device_spans.len()
    );
    crate::session::stdout()
        .write_all(text.as_bytes())
        .map_err(Failure::Output)
}

pub(crate) fn dump(input: Input) -> Result<(), Failure> {
    let (_, _, decoded) = decode(input)?;
    match &decoded {
        Decoded::Profile(p) => json_out(p),
        Decoded::NodeTrees(t) => json_out(t),
    }
}

pub(crate) fn validate(input: Input, json: bool, mut cap: crate::cap::Cap) -> Result<(), Failure> {
    let (name, format, decoded) = decode(input)?;
    let problems = decoded.problems();
    if json {
        let (listed, not_listed) = cap.json_problems(&problems);
        json_out(&crate::cap::with_not_listed(
            serde_json::json!({
                "file": name,
                "format": format.to_string(),
                "valid": problems.is_empty(),
                "problems": listed,
            }),
            not_listed,
        ))?;
    } else {
        let mut out = crate::session::stdout();
        if problems.is_empty() {
            writeln!(out, "{name}: valid {}", decoded.kind()).map_err(Failure::Output)?;
        }
        for p in &problems {
            if cap.admit(&format!("{:?}", p.kind)) {
                writeln!(out, "{name}: {p}").map_err(Failure::Output)?;
            }
        }
        for rest in cap.rest() {
            writeln!(out, "{name}: {rest}").map_err(Failure::Output)?;
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Failure::Invalid)
    }
}

/// The `--sort` values of `profkit report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SortArg {
    /// Number of calls.
    Calls,
    /// Total time.
    Total,
    /// Longest call.
    Max,
    /// Shortest call.
    Min,
    /// Average call.
    Ave,
}

/// The `--place` values of `profkit report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PlaceArg {
    /// CPU time.
    Cpu,
    /// Device time.
    Cuda,
    /// CPU and device time.
    All,
}

/// Prints Paddle's legacy report of a recording (read from any format `report` takes).
pub(crate) fn report(
    name: &str,
    recording: &Recording,
    sort: Option<SortArg>,
    place: Option<PlaceArg>,
    json: bool,
) -> Result<(), Failure> {
    let options = ReportOptions {
        sort: match sort {
            None => SortKey::Default,
            Some(SortArg::Calls) => SortKey::Calls,
            Some(SortArg::Total) => SortKey::Total,
            Some(SortArg::Max) => SortKey::Max,
            Some(SortArg::Min) => SortKey::Min,
            Some(SortArg::Ave) => SortKey::Ave,
        },
        place: place.map(|p| match p {
            PlaceArg::Cpu => Place::Cpu,
            PlaceArg::Cuda => Place::Cuda,
            PlaceArg::All => Place::All,
        }),
        ..ReportOptions::default()
    };
    let report = Report::new(recording, options);
    for w in &report.warnings {
        crate::session::warn(name, w);
    }
    if report.hidden_rows > 0 {
        crate::session::warn(
            name,
            format_args!(
                "{} rows nested deeper than {} levels are not shown",
                report.hidden_rows, options.max_depth
            ),
        );
    }
    if json {
        return json_out(&report);
    }
    crate::session::stdout()
        .write_all(report.text().as_bytes())
        .map_err(Failure::Output)
}

/// The `--sorted-by` values of `profkit report` (Paddle's `SortedKeys`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SortedArg {
    /// CPU total time.
    #[value(name = "CPUTotal", alias = "cpu-total")]
    CpuTotal,
    /// CPU average time.
    #[value(name = "CPUAvg", alias = "cpu-avg")]
    CpuAvg,
    /// CPU longest call.
    #[value(name = "CPUMax", alias = "cpu-max")]
    CpuMax,
    /// CPU shortest call (ascending).
    #[value(name = "CPUMin", alias = "cpu-min")]
    CpuMin,
    /// GPU total time.
    #[value(name = "GPUTotal", alias = "gpu-total")]
    GpuTotal,
    /// GPU average time.
    #[value(name = "GPUAvg", alias = "gpu-avg")]
    GpuAvg,
    /// GPU longest call.
    #[value(name = "GPUMax", alias = "gpu-max")]
    GpuMax,
    /// GPU shortest call (ascending).
    #[value(name = "GPUMin", alias = "gpu-min")]
    GpuMin,
    /// CPU self time: each call's time less the calls inside it (not one of Paddle's keys).
    #[value(name = "CPUSelf", alias = "cpu-self", alias = "self")]
    CpuSelf,
}

/// The `--time-unit` values of `profkit report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum UnitArg {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
    /// Nanoseconds.
    Ns,
}

/// The options of `summary()`, for `profkit report`.
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct SummaryArgs {
    /// Sort the rows by this. Paddle's summary: CPUTotal (default), CPUAvg, CPUMax, CPUMin,
    /// GPUTotal, GPUAvg, GPUMax, GPUMin, CPUSelf. --style torch: torch's `sort_by` keys
    /// (cpu_time_total, self_cpu_time_total, cpu_time, cuda_time_total, self_cuda_time_total,
    /// cuda_time, cpu_memory_usage, self_cpu_memory_usage, cuda_memory_usage,
    /// self_cuda_memory_usage, count, flops; default: torch's order of first calls).
    #[arg(long, value_name = "KEY")]
    sorted_by: Option<String>,
    /// Summary: leave out the operators' inner rows and device activity (Paddle's
    /// `op_detail=False`).
    #[arg(long)]
    no_op_detail: bool,
    /// Summary: one Operator and UserDefined table per thread (Paddle's `thread_sep=True`).
    #[arg(long)]
    thread_sep: bool,
    /// Summary: the unit of times (default: us for XSpaces, whose XLA CPU ops take microseconds
    /// and would all print 0.00 in ms; ms, as Paddle prints them, for the other inputs).
    #[arg(long, value_enum)]
    time_unit: Option<UnitArg>,
}

impl SummaryArgs {
    pub(crate) fn given(&self) -> bool {
        self.sorted_by.is_some() || self.no_op_detail || self.thread_sep || self.time_unit.is_some()
    }

    /// `--sorted-by` as given.
    pub(crate) fn sorted_by(&self) -> Option<&str> {
        self.sorted_by.as_deref()
    }

    /// `--time-unit` as given.
    pub(crate) fn time_unit(&self) -> Option<UnitArg> {
        self.time_unit
    }

    /// Whether an option of Paddle's summary alone is given.
    pub(crate) fn paddle_only(&self) -> bool {
        self.no_op_detail || self.thread_sep
    }

    /// The summary's options; `default_unit` when `--time-unit` is not given.
    fn options(&self, default_unit: UnitArg) -> Result<SummaryOptions, Failure> {
        let sorted_by = match &self.sorted_by {
            None => SortedArg::CpuTotal,
            Some(key) => <SortedArg as clap::ValueEnum>::from_str(key, false).map_err(|_| {
                Failure::Usage(format!(
                    "--sorted-by {key}: Paddle's summary sorts by CPUTotal, CPUAvg, CPUMax, CPUMin, GPUTotal, GPUAvg, GPUMax, GPUMin or CPUSelf (torch's keys need --style torch)"
                ))
            })?,
        };
        Ok(SummaryOptions {
            sorted_by: match sorted_by {
                SortedArg::CpuTotal => SortedKey::CPUTotal,
                SortedArg::CpuAvg => SortedKey::CPUAvg,
                SortedArg::CpuMax => SortedKey::CPUMax,
                SortedArg::CpuMin => SortedKey::CPUMin,
                SortedArg::GpuTotal => SortedKey::GPUTotal,
                SortedArg::GpuAvg => SortedKey::GPUAvg,
                SortedArg::GpuMax => SortedKey::GPUMax,
                SortedArg::GpuMin => SortedKey::GPUMin,
                SortedArg::CpuSelf => SortedKey::CPUSelf,
            },
            op_detail: !self.no_op_detail,
            thread_sep: self.thread_sep,
            time_unit: match self.time_unit.unwrap_or(default_unit) {
                UnitArg::S => TimeUnit::S,
                UnitArg::Ms => TimeUnit::Ms,
                UnitArg::Us => TimeUnit::Us,
                UnitArg::Ns => TimeUnit::Ns,
            },
        })
    }
}

/// `profkit report`: the summary for node trees, XSpaces and Chrome traces, the legacy report for
/// a legacy `Profile` or with `legacy`.
pub(crate) fn report_command(
    input: Input,
    legacy: bool,
    sort: Option<SortArg>,
    place: Option<PlaceArg>,
    summary: &SummaryArgs,
    json: bool,
) -> Result<(), Failure> {
    let legacy = legacy || input.format == Format::Paddle;
    // Paddle's unit for what Paddle reads (its files and Chrome traces); XSpaces, whose XLA
    // CPU ops take microseconds, in microseconds.
    let default_unit = match input.format {
        Format::Xspace => UnitArg::Us,
        _ => UnitArg::Ms,
    };
    if legacy && summary.given() {
        return Err(Failure::Usage(
            "--sorted-by, --no-op-detail, --thread-sep and --time-unit are options of the summary, not of the legacy report (--legacy, --sort, --place, or a legacy Profile)".into(),
        ));
    }
    let (name, forest, recording) = match input.format {
        Format::PaddleNodeTrees if !legacy => {
            let name = input.name.clone();
            let trees = nodetree::read_node_trees(input.reader, crate::input::paddle_options())
                .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
            (name, Some(Forest::from_node_trees(&trees)), None)
        }
        Format::Paddle | Format::PaddleNodeTrees => {
            let (name, recording) = crate::convert::paddle_recording(input)?;
            (name, None, Some(recording))
        }
        // The summary of an XSpace walks it plane by plane through views, into the summary's
        // trees: neither the decoded space nor the event model is built.
        Format::Xspace if !legacy => {
            let name = input.name.clone();
            let source = crate::convert::Source::open(input)?;
            let options = profkit_xplane::ReadOptions::default();
            let forest = profkit_convert::events::xspace_forest(source, options)
                .map_err(|e| Failure::BadInput(format!("{name}: {e}")))?;
            (name, Some(forest), None)
        }
        Format::Xspace => {
            let (name, space) = crate::convert::xspace_whole(input)?;
            let recording = profkit_convert::events::xspace_to_recording(&space);
            (name, None, Some(recording))
        }
        Format::Chrome | Format::PaddleTimeline => {
            let (name, space) = crate::convert::chrome_space(input)?;
            let recording = profkit_convert::events::xspace_to_recording(&space);
            (name, None, Some(recording))
        }
        other => {
            return Err(Failure::Usage(format!(
                "{}: report reads Paddle profiles (a legacy Profile or node trees), XSpaces and Chrome traces, not {other}",
                input.name
            )));
        }
    };
    if legacy {
        let recording = recording.unwrap_or_default();
        return report(&name, &recording, sort, place, json);
    }
    let forest = match (forest, &recording) {
        (Some(f), _) => f,
        (None, Some(r)) => Forest::from_recording(r),
        (None, None) => Forest::default(),
    };
    let summary = Summary::new(&forest, summary.options(default_unit)?);
    if json {
        return json_out(&summary);
    }
    crate::session::stdout()
        .write_all(summary.text().as_bytes())
        .map_err(Failure::Output)
}

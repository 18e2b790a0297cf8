//! `profkit`: read, write, check and convert the interchange formats of machine-learning
//! profilers (TensorFlow / XLA XSpace, TensorFlow profiler plugins, Graphcore Poplar profiles,
//! X-DeepLearning tensor traces, PaddlePaddle profiles, Chrome trace JSON).
//!
//! This crate is the `profkit` command line (`cargo install --path crates/profkit`; every command
//! is described in `docs/cli.md`), and its page is where the documentation of the libraries
//! starts:
//!
//! - [`profkit_xplane`]: XSpace / XPlane protobufs: zero-copy views, whole and streaming reads
//!   with size limits, writes, the TSL-style builder and visitor, merging, validation, canonical
//!   JSON.
//! - [`profkit_xdl`]: X-DeepLearning tensor traces: frame and data file readers, typed columns
//!   (by key name too), metas, dataset discovery and checks, the writer.
//! - [`profkit_events`]: the profiler event model, the low-overhead recorder, Paddle's legacy
//!   report and `summary()` tables, Paddle's `Profile` and node trees.
//! - [`profkit_poplar`]: Graphcore Poplar graph and execution profiles: the typed schema, the
//!   streaming reader, validation and analysis.
//! - [`profkit_convert`]: conversions between the formats through the XSpace, the Chrome trace
//!   JSON xprof's trace viewer writes, format detection.
//! - [`profkit_arrow`]: every input as Arrow record batches and Parquet datasets.
//! - [`profkit_torch`]: PyTorch users' summaries of a saved Kineto trace: torch's
//!   `key_averages()` table and HolisticTraceAnalysis's analyses.
//! - [`profkit_plugin`]: TensorFlow's pluggable profiler C ABI: write, load, run and check
//!   plugins.
//! - [`profkit_json`](../profkit_json/index.html): the streaming JSON reader the JSON formats
//!   share; [`profkit_wire`](../profkit_wire/index.html) and
//!   [`profkit_error`](../profkit_error/index.html): the protobuf wire walk and the file an error
//!   is attached to.
//!
//! (Built with `cargo doc --no-deps --open` at the repository root, which leaves out the internal
//! crates: the conformance runner, the fuzz targets, the benchmarks' helpers, the test plugins
//! and the Python extension.)
//!
//! As a library, [`run_args`] runs the command line on a list of arguments, as the `profkit`
//! binary and the Python package's `profkit` command do. Exit codes: 0 success, 1 bad or invalid
//! input, 2 usage error. [`api`] runs `inspect`, `validate`, `report`, `convert` and `merge` in
//! the calling process and gives their answers as data ([`Value`]), never printing: what the
//! Python package calls.

#![forbid(unsafe_code)]

pub mod api;
mod cap;
mod convert;
mod format;
mod hosts;
mod hta;
mod input;
mod output;
mod paddle;
mod parquet;
mod plugin;
mod poplar;
mod session;
mod text;
mod threads;
mod torch;
mod value;
mod xdl;
mod xprof;
mod xprof_memory;
mod xprof_ops;
mod xprof_pages;
mod xspace;

pub use plugin::set_self_command;
pub use value::{Value, ValueError, to_value};

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::format::{Format, FormatParser};

/// Read, check and convert the files of machine-learning profilers.
#[derive(Parser)]
#[command(name = "profkit", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The most a gzip-compressed input may decompress to: a size (`2G`, `500M`, bytes), a
    /// ratio to its compressed size (`64x`), or `unlimited` (default: 16 times the compressed
    /// size plus 4 MiB; also set by the PROFKIT_MAX_INFLATED environment variable).
    #[arg(long, global = true, value_name = "SIZE")]
    max_inflated: Option<String>,
    /// Paddle's protobufs: allow one decoded message per N bytes of input (default 20; 0 turns
    /// the budget off; also set by the PROFKIT_PADDLE_BYTES_PER_MESSAGE environment variable).
    /// Dense valid files (deep chains of ranges) may need a lower N, at more memory.
    #[arg(long, global = true, value_name = "N")]
    paddle_bytes_per_message: Option<u64>,
    /// Threads to convert, summarise and write with (default: every core; 0 also means every
    /// core; also set by the PROFKIT_THREADS environment variable). The output is the same
    /// whatever the count.
    #[arg(long, global = true, value_name = "N")]
    threads: Option<usize>,
}

#[derive(Subcommand)]
enum Command {
    /// Summarise a profile: planes, lines, events, time span, busiest event names.
    Inspect {
        /// The file to read (`-` for standard input).
        file: PathBuf,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// XSpace with --json: list at most N planes (`planes_not_listed` counts the rest; the
        /// totals count every one).
        #[arg(long, value_name = "N")]
        max_planes: Option<usize>,
        /// The file's format, when detection from its content is not wanted.
        #[arg(long, value_parser = FormatParser::read())]
        from: Option<Format>,
        /// Poplar: the graph profile (`graph.json`) an execution profile belongs to, to check its
        /// references and work out times and balances.
        #[arg(long, value_name = "FILE")]
        graph: Option<PathBuf>,
    },
    /// Print a profile's complete content as canonical JSON.
    Dump {
        /// The file to read (`-` for standard input).
        file: PathBuf,
        /// The file's format, when detection from its content is not wanted.
        #[arg(long, value_parser = FormatParser::read())]
        from: Option<Format>,
    },
    /// Check a profile; prints one line per problem and exits 1 when any is found.
    ///
    /// At most ten problems of each kind are printed, then a count of the rest (`--all` prints
    /// every one; `--json` lists every one).
    Validate {
        /// The file to read (`-` for standard input).
        file: PathBuf,
        /// Print the problems as JSON.
        #[arg(long)]
        json: bool,
        /// Print every problem, not ten of each kind and a count of the rest.
        #[arg(long)]
        all: bool,
        /// With --json: list at most N problems (`problems_not_listed` counts the rest).
        #[arg(long, value_name = "N")]
        max_problems: Option<usize>,
        /// The file's format, when detection from its content is not wanted.
        #[arg(long, value_parser = FormatParser::read())]
        from: Option<Format>,
        /// Poplar: the graph profile (`graph.json`) an execution profile belongs to, to check its
        /// references and work out times and balances.
        #[arg(long, value_name = "FILE")]
        graph: Option<PathBuf>,
    },
    /// Convert profiles to another format, or rewrite them in the same one.
    ///
    /// `--to chrome` writes Chrome trace JSON as xprof's trace viewer does; `--to xspace` an
    /// XSpace (several XSpace inputs are merged, one per host); `--to paddle-timeline` what
    /// Paddle's tools/timeline.py writes (several profiles as KEY=FILE); `--to xdl` rewrites XDL
    /// datasets into the output directory, split at `--max-file-mb`; `--to parquet` adds each
    /// input as a host of the Parquet dataset OUT (`--overwrite` replaces hosts already there).
    /// Without `--to`, an OUT
    /// ending in .json means chrome and one ending in .pb xspace. OUT `-` is standard output.
    /// `profkit formats` lists what converts to what.
    Convert {
        /// The inputs (`-` for standard input).
        #[arg(value_name = "IN", num_args = 1.., required = true)]
        inputs: Vec<PathBuf>,
        /// The output file or directory (`-` for standard output).
        #[arg(value_name = "OUT", required = true)]
        out: PathBuf,
        /// The output format (default: from OUT's extension).
        #[arg(long, value_parser = FormatParser::write())]
        to: Option<Format>,
        /// The inputs' format, when detection from their content is not wanted.
        #[arg(long, value_parser = FormatParser::read())]
        from: Option<Format>,
        /// XDL output: start a new data file once one reaches this many million bytes (the
        /// original writer's `max_file_m_size`, default 300).
        #[arg(long, value_name = "MB")]
        max_file_mb: Option<f64>,
        /// Replace files of the same datasets already in the output.
        #[arg(long)]
        overwrite: bool,
        /// Chrome output: `xprof` writes xprof's trace viewer JSON exactly (flows as `flow` args,
        /// `cat` among the args, counters as instants); `trace-event` the Trace Event Format's
        /// own members, as PyTorch's profiler writes them (flow events, `cat`, counter events).
        /// Default: `xprof` for an XSpace, unless profkit made it from a Chrome trace, and
        /// `trace-event` for every other input.
        #[arg(long, value_enum)]
        layout: Option<ChromeLayout>,
        /// `--to parquet`, and several XSpaces merged: the host of the next input, given once
        /// per input in their order (default: an XSpace's recorded `hostnames` when the file's
        /// name says nothing, as `host.xplane.pb` or `trace.json`, else the file's name).
        #[arg(long = "host", value_name = "NAME")]
        hosts: Vec<String>,
    },
    /// Merge the XSpaces of several hosts into one file (device planes renumbered, host threads
    /// kept apart, times aligned on each host's session start).
    Merge {
        /// The XSpaces to merge.
        #[arg(value_name = "IN", num_args = 1.., required = true)]
        inputs: Vec<PathBuf>,
        /// The merged XSpace (`-` for standard output).
        #[arg(value_name = "OUT", required = true)]
        out: PathBuf,
        /// The host of the next input, given once per input in their order, whatever the
        /// XSpace's `hostnames` say (default: its `hostnames`, else the file's name).
        #[arg(long = "host", value_name = "NAME")]
        hosts: Vec<String>,
    },
    /// List the formats profkit reads and writes, and the conversions between them.
    Formats,
    /// Print a profile's summary as its framework's users know it: xprof's TF Stats table for
    /// TensorFlow's and JAX's XSpaces, torch's `key_averages().table()` for PyTorch traces,
    /// PaddlePaddle's tables (`paddle.profiler.Profiler.summary()`) for everything else and with
    /// `--style paddle` (or one of its options), Paddle's legacy profiling report with --legacy.
    Report {
        /// The file to read (`-` for standard input).
        file: PathBuf,
        /// Print the legacy profiling report (implied by --sort and --place).
        #[arg(long)]
        legacy: bool,
        /// Legacy report: order rows among siblings by this, descending (default: the order
        /// their first call ended).
        #[arg(long, value_enum)]
        sort: Option<paddle::SortArg>,
        /// Legacy report: what the times measure (default: cpu).
        #[arg(long, value_enum)]
        place: Option<paddle::PlaceArg>,
        #[command(flatten)]
        summary: paddle::SummaryArgs,
        /// The layout: xprof's TF Stats table (the default for XSpaces, unless an option of
        /// Paddle's summary is given), torch's `key_averages().table()` (the default for PyTorch
        /// profiler traces) or Paddle's tables (the default for everything else).
        #[arg(long, value_enum)]
        style: Option<torch::StyleArg>,
        #[command(flatten)]
        torch: torch::TorchArgs,
        /// Print the report's tables as JSON.
        #[arg(long)]
        json: bool,
        /// The file's format, when detection from its content is not wanted.
        #[arg(long, value_parser = FormatParser::report())]
        from: Option<Format>,
    },
    /// Print what xprof's tools show for XSpaces (TensorFlow's and JAX's profiles), as xprof
    /// 2.24.2 returns it: `profkit xprof TOOL IN... [-o OUT]`, several inputs being several
    /// hosts of one run. `--list` names the tools xprof offers for the inputs. Tools computed:
    /// `framework_op_stats` (JSON DataTables; `--text` prints its table), `overview_page`,
    /// `input_pipeline_analyzer` and `pod_viewer` (rendered from profkit's OpStats; `--text`
    /// prints their tables), `kernel_stats`, `hlo_stats`, `roofline_model`, `op_profile`
    /// (`--group-by program|category|provenance`; `--text` prints its tree to `--depth` levels),
    /// `memory_profile` (one host), `memory_viewer` (one XLA program's buffers: `--module NAME
    /// [--memory-space N]`, `--list-modules`) and `trace_viewer`.
    Xprof {
        /// The tool, then the XSpaces (with --list: the XSpaces only).
        #[arg(value_name = "TOOL IN", num_args = 1.., required = true)]
        args: Vec<PathBuf>,
        /// List the tools xprof offers for the inputs.
        #[arg(long)]
        list: bool,
        /// Where to write the tool's data (default: standard output).
        #[arg(short, long, value_name = "OUT")]
        out: Option<PathBuf>,
        /// Print the tool's tables for a terminal instead of xprof's JSON.
        #[arg(long)]
        text: bool,
        /// With --text: the rows shown per table (the rest are counted).
        #[arg(long, value_name = "N", default_value_t = 30)]
        rows: usize,
        /// op_profile's grouping of the ops (xprof's `group_by` option; default: program).
        #[arg(long, value_name = "GROUPING", value_parser = ["program", "category", "provenance"])]
        group_by: Option<String>,
        /// memory_viewer's program, as xprof names it: `<module name>(<program id>)`.
        #[arg(long, value_name = "NAME")]
        module: Option<String>,
        /// memory_viewer's memory space (XLA's memory color; default 0, a device's main memory).
        #[arg(long, value_name = "N")]
        memory_space: Option<i64>,
        /// With memory_viewer: list the programs of the inputs, one name a line.
        #[arg(long)]
        list_modules: bool,
        /// With op_profile --text: the tree's levels shown below the root (default 3).
        #[arg(long, value_name = "N")]
        depth: Option<usize>,
    },
    /// HolisticTraceAnalysis's analyses of PyTorch profiler traces of GPU runs (one trace per
    /// rank), as HTA 0.5.0's TraceAnalysis computes them.
    Hta {
        /// The analysis.
        #[arg(value_enum)]
        analysis: hta::Analysis,
        /// The traces, one per rank (its `distributedInfo.rank`, else 0).
        #[arg(value_name = "TRACE", num_args = 1.., required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        options: hta::HtaArgs,
        /// Print the analysis' tables as JSON records.
        #[arg(long)]
        json: bool,
    },
    /// Run and check TensorFlow profiler plugins (shared libraries exporting `TF_InitProfiler`).
    Plugin {
        #[command(subcommand)]
        command: plugin::PluginCommand,
    },
}

/// Why a command did not succeed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The input could not be read or decoded: the message says what and where.
    BadInput(String),
    /// The input was read but is invalid; the problems were already printed.
    Invalid,
    /// Writing the output failed (for example a closed pipe).
    Output(std::io::Error),
    /// The command line asks for something that cannot be done (exit code 2, as clap's errors).
    Usage(String),
}

pub(crate) fn output_only() -> Failure {
    Failure::Usage("parquet is an output format only (--to parquet)".into())
}

fn run(cli: Cli) -> Result<(), Failure> {
    input::set_gzip_limit(input::gzip_limit(cli.max_inflated.as_deref())?);
    input::set_paddle_budget(cli.paddle_bytes_per_message)?;
    match cli.command {
        Command::Inspect {
            file,
            json,
            max_planes,
            from,
            graph,
        } => {
            let input = input::Input::open(&file, from)?;
            match input.format {
                Format::Poplar => poplar::inspect(input, json, graph.as_deref()),
                Format::Xspace => xspace::inspect(input, json, max_planes),
                Format::Xdl => xdl::inspect(input, json),
                Format::Paddle | Format::PaddleNodeTrees => paddle::inspect(input, json),
                Format::Chrome | Format::PaddleTimeline => xspace::inspect_chrome(input, json),
                Format::Parquet | Format::OpStats => Err(output_only()),
            }
        }
        Command::Dump { file, from } => {
            let input = input::Input::open(&file, from)?;
            match input.format {
                Format::Poplar => poplar::dump(input),
                Format::Xspace => xspace::dump(input),
                Format::Xdl => xdl::dump(input),
                Format::Paddle | Format::PaddleNodeTrees => paddle::dump(input),
                Format::Chrome | Format::PaddleTimeline => xspace::dump_chrome(input),
                Format::Parquet | Format::OpStats => Err(output_only()),
            }
        }
        Command::Validate {
            file,
            json,
            all,
            max_problems,
            from,
            graph,
        } => {
            let input = input::Input::open(&file, from)?;
            let cap = cap::Cap::new(all).json_limit(max_problems);
            match input.format {
                Format::Poplar => poplar::validate(input, json, graph.as_deref(), cap),
                Format::Xspace => xspace::validate(input, json, cap),
                Format::Xdl => xdl::validate(input, json, cap),
                Format::Paddle | Format::PaddleNodeTrees => paddle::validate(input, json, cap),
                Format::Chrome | Format::PaddleTimeline => {
                    xspace::validate_chrome(input, json, cap)
                }
                Format::Parquet | Format::OpStats => Err(output_only()),
            }
        }
        Command::Convert {
            inputs: paths,
            out,
            to,
            from,
            max_file_mb,
            overwrite,
            layout,
            hosts,
        } => {
            if max_file_mb.is_some_and(|m| m.is_nan() || m < 0.0) {
                return Err(Failure::Usage(
                    "--max-file-mb must be a non-negative number".into(),
                ));
            }
            let hosts = convert::hosts_given(&hosts, paths.len())?;
            convert::convert(paths, out, to, from, max_file_mb, overwrite, layout, hosts)
        }
        Command::Merge { inputs, out, hosts } => {
            let hosts = convert::hosts_given(&hosts, inputs.len())?;
            convert::merge_command(inputs, out, hosts)
        }
        Command::Formats => convert::formats(),
        Command::Report {
            file,
            legacy,
            sort,
            place,
            summary,
            style,
            torch: torch_args,
            json,
            from,
        } => {
            let mut input = input::Input::open(&file, from)?;
            let legacy = legacy || sort.is_some() || place.is_some();
            let style = match style {
                Some(style) => style,
                None if !legacy
                    && input.format == Format::Chrome
                    && torch::is_kineto(&mut input) =>
                {
                    torch::StyleArg::Torch
                }
                None if !legacy && input.format == Format::Xspace && !summary.given() => {
                    torch::StyleArg::Xprof
                }
                None => torch::StyleArg::Paddle,
            };
            if style == torch::StyleArg::Xprof {
                if legacy || summary.given() || torch_args.given() {
                    return Err(Failure::Usage(
                        "--style xprof takes none of Paddle's or torch's options".into(),
                    ));
                }
                if input.format != Format::Xspace {
                    return Err(Failure::Usage(format!(
                        "{}: --style xprof reads XSpaces, not {}",
                        input.name, input.format
                    )));
                }
                return xprof::report(input, json);
            }
            if style == torch::StyleArg::Torch {
                if legacy {
                    return Err(Failure::Usage(
                        "--legacy, --sort and --place are Paddle's legacy report (--style paddle)"
                            .into(),
                    ));
                }
                if input.format != Format::Chrome {
                    return Err(Failure::Usage(format!(
                        "{}: --style torch reads PyTorch profiler traces (Chrome JSON), not {}",
                        input.name, input.format
                    )));
                }
                return torch::report(input, &summary, &torch_args, json);
            }
            if torch_args.given() {
                return Err(Failure::Usage(
                    "--row-limit, --group-by-input-shape, --group-by-stack-n, --group-by-overload-name, --include-python-functions, --top-level-events-only, --header and --max-*-column-width are options of torch's table (--style torch)".into(),
                ));
            }
            paddle::report_command(input, legacy, sort, place, &summary, json)
        }
        Command::Xprof {
            args,
            list,
            out,
            text,
            rows,
            group_by,
            module,
            memory_space,
            list_modules,
            depth,
        } => xprof::run(xprof::XprofArgs {
            args,
            list,
            out,
            text,
            rows,
            group_by,
            module,
            memory_space,
            list_modules,
            depth,
        }),
        Command::Hta {
            analysis,
            files,
            options,
            json,
        } => hta::run(analysis, &files, &options, json),
        Command::Plugin { command } => plugin::run(command),
    }
}

/// What the message of a Paddle input over its message budget says (`profkit_events`'
/// `TooManyMessages`), wherever a reader passed it on.
const BUDGET_REFUSAL: &str = "more than the budget of one per";

/// A command's result with its failure told as the user should read it: a gzip input that
/// failed is the cause, however the readers above it passed it on; a Paddle input over its
/// message budget says how to raise it.
pub(crate) fn outcome(result: Result<(), Failure>) -> Result<(), Failure> {
    match (result, input::take_gzip_failure()) {
        (Err(Failure::BadInput(_) | Failure::Output(_)), Some(gzip)) => {
            Err(Failure::BadInput(gzip))
        }
        (Err(Failure::BadInput(message)), None) if message.contains(BUDGET_REFUSAL) => Err(
            Failure::BadInput(format!("{message}{}", input::PADDLE_BUDGET_HINT)),
        ),
        (result, _) => result,
    }
}

/// Runs the CLI on `args` (the program name first, as `std::env::args_os` gives them) and
/// returns its exit code: what the `profkit` command of the Python wheel calls.
pub fn run_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    // clap exits with 2 on usage errors and 0 for --help / --version.
    let cli = Cli::parse_from(args);
    // The command runs on a thread of its pool (the input's settings and failures are
    // thread-local: they are set and taken there).
    let result = match threads::count(cli.threads).and_then(threads::pool) {
        Ok(pool) => pool.install(|| outcome(run(cli))),
        Err(failure) => Err(failure),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(message)) => {
            eprintln!("profkit: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Invalid) => ExitCode::from(1),
        Err(Failure::Usage(message)) => {
            eprintln!("profkit: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Output(e)) => {
            eprintln!("profkit: cannot write output: {e}");
            ExitCode::from(1)
        }
    }
}

/// The layouts of `convert --to chrome` (see `profkit_xprof::trace_viewer::Layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ChromeLayout {
    /// xprof's trace viewer JSON, exactly.
    Xprof,
    /// The Trace Event Format's own members (flow events, `cat`, counter events).
    TraceEvent,
}

//! `profkit report --style torch`: the table torch's `prof.key_averages().table(...)` prints,
//! from a saved PyTorch profiler (Kineto) trace (`profkit_torch`). The default style for such
//! traces: PyTorch users know this table, and Paddle's tables (`--style paddle`) count what
//! torch does not (Kineto's span of the whole trace, `[memory]` instants as an operator).

use std::io::Write;

use profkit_torch::key_averages::{Grouping, KeyAverages, SortKey, TableOptions, TimeUnit};

use crate::Failure;
use crate::input::Input;
use crate::paddle::{SummaryArgs, UnitArg};

/// The report's layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StyleArg {
    /// PaddlePaddle's summary tables (or its legacy report, with --legacy).
    Paddle,
    /// torch's `key_averages().table()` (the default for PyTorch profiler traces).
    Torch,
    /// xprof's TF Stats table (`framework_op_stats`), for TensorFlow's and JAX's XSpaces (their
    /// default).
    Xprof,
}

/// The options of torch's table.
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct TorchArgs {
    /// --style torch: print at most N rows (torch's `row_limit`, default 100; -1 for all).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    row_limit: Option<i64>,
    /// --style torch: one row per name and input shapes (`group_by_input_shape=True`).
    #[arg(long)]
    group_by_input_shape: bool,
    /// --style torch: one row per name and first N stack frames (`group_by_stack_n=N`).
    #[arg(long, value_name = "N")]
    group_by_stack_n: Option<usize>,
    /// --style torch: one row per operator and overload (`group_by_overload_name=True`; the
    /// trace names overloads when the run set `capture_overload_names`).
    #[arg(long)]
    group_by_overload_name: bool,
    /// --style torch: rows for the Python calls of `with_stack` traces too
    /// (`include_python_functions=True`).
    #[arg(long)]
    include_python_functions: bool,
    /// --style torch: only the rows of events without a parent (`top_level_events_only=True`).
    #[arg(long)]
    top_level_events_only: bool,
    /// --style torch: a line printed above the table (torch's `header`).
    #[arg(long, value_name = "TEXT")]
    header: Option<String>,
    /// --style torch: the name columns' widest (`max_name_column_width`, default 55).
    #[arg(long, value_name = "N")]
    max_name_column_width: Option<usize>,
    /// --style torch: the input shapes column's widest (`max_shapes_column_width`, default 80).
    #[arg(long, value_name = "N")]
    max_shapes_column_width: Option<usize>,
    /// --style torch: the source location column's widest (`max_src_column_width`, default 75).
    #[arg(long, value_name = "N")]
    max_src_column_width: Option<usize>,
}

impl TorchArgs {
    pub(crate) fn given(&self) -> bool {
        self.row_limit.is_some()
            || self.group_by_input_shape
            || self.group_by_stack_n.is_some()
            || self.group_by_overload_name
            || self.include_python_functions
            || self.top_level_events_only
            || self.header.is_some()
            || self.max_name_column_width.is_some()
            || self.max_shapes_column_width.is_some()
            || self.max_src_column_width.is_some()
    }
}

/// Whether a Chrome trace was written by PyTorch's profiler, from its first 64 KiB: Kineto's
/// categories or its `deviceProperties`, which other producers do not write.
pub(crate) fn is_kineto(input: &mut Input) -> bool {
    // Peeked rather than what the buffer holds: a gzip reader's first fill can be a few KiB,
    // and some traces open with a long `metadata` object before their events.
    let Ok(head) = crate::input::peek(&mut input.reader, 64 << 10) else {
        return false;
    };
    [
        &b"\"deviceProperties\""[..],
        b"\"cpu_op\"",
        b"\"user_annotation\"",
        b"\"python_function\"",
        b"\"cuda_runtime\"",
        b"\"PyTorch Profiler",
    ]
    .iter()
    .any(|needle| head.windows(needle.len()).any(|w| w == *needle))
}

/// Prints torch's table of the trace `input`.
pub(crate) fn report(
    input: Input,
    summary: &SummaryArgs,
    args: &TorchArgs,
    json: bool,
) -> Result<(), Failure> {
    if summary.paddle_only() {
        return Err(Failure::Usage(
            "--no-op-detail and --thread-sep are options of Paddle's summary (--style paddle)"
                .into(),
        ));
    }
    let sort_by = summary
        .sorted_by()
        .map(SortKey::from_name)
        .transpose()
        .map_err(|e| Failure::Usage(format!("--sorted-by: {e}")))?;
    let time_unit = match summary.time_unit() {
        None => None,
        Some(UnitArg::S) => Some(TimeUnit::S),
        Some(UnitArg::Ms) => Some(TimeUnit::Ms),
        Some(UnitArg::Us) => Some(TimeUnit::Us),
        Some(UnitArg::Ns) => {
            return Err(Failure::Usage(
                "--time-unit ns: torch's table prints s, ms or us".into(),
            ));
        }
    };
    let name = input.name.clone();
    let trace = profkit_torch::read_trace(input.reader)
        .map_err(|e| Failure::BadInput(format!("{name}: {e}")))?;
    let grouping = Grouping {
        input_shape: args.group_by_input_shape,
        stack_n: args.group_by_stack_n.unwrap_or(0),
        overload_name: args.group_by_overload_name,
        python_functions: args.include_python_functions,
    };
    let averages = KeyAverages::new(&trace, &grouping);
    let defaults = TableOptions::default();
    let options = TableOptions {
        sort_by,
        row_limit: args.row_limit.unwrap_or(100),
        time_unit,
        header: args.header.clone(),
        top_level_events_only: args.top_level_events_only,
        max_name_column_width: args
            .max_name_column_width
            .unwrap_or(defaults.max_name_column_width),
        max_shapes_column_width: args
            .max_shapes_column_width
            .unwrap_or(defaults.max_shapes_column_width),
        max_src_column_width: args
            .max_src_column_width
            .unwrap_or(defaults.max_src_column_width),
    };
    if json {
        return crate::session::json(&averages.json(&options));
    }
    let mut out = crate::session::stdout();
    out.write_all(averages.table(&options).as_bytes())
        .map_err(Failure::Output)?;
    for note in &averages.notes_for(&options) {
        writeln!(out, "Note: {note}").map_err(Failure::Output)?;
    }
    Ok(())
}

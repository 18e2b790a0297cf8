//! The partial overlaps real producers write, each kept as a warning (see
//! [`super::Severity::Warning`]), one producer's quirk beside the other's: JAX's and
//! TensorFlow's Python tracer, TensorFlow's executor iterations, XLA's async op lines, and
//! PyTorch's Python function events (in an XSpace read from a Kineto trace).

/// How far two events of one name may overlap and still be a producer's consecutive iterations
/// rather than two that mean to nest: 10 microseconds. TensorFlow 2.21's `ExecutorState::Process`
/// iterations overlap by 0.07 to 1.1 microseconds on a 2-core machine.
pub const ITERATION_SKEW_PS: i128 = 10_000_000;

/// What a partial overlap with a Python tracer event adds to its message.
const TRACER_OVERLAP: &str =
    " (a Python tracer event: JAX and TensorFlow write these across their annotations)";

/// What a partial overlap of consecutive events of one name adds to its message.
const ITERATION_OVERLAP: &str = " (consecutive events of one name overlapping by at most 10 us: \
     TensorFlow writes its `ExecutorState::Process` iterations so)";

/// What a partial overlap on a line of asynchronous ops adds to its message.
const ASYNC_LINE_OVERLAP: &str =
    " (on a line of asynchronous ops, which run at the same time: XLA's `Async XLA Ops`)";

/// What a partial overlap with a PyTorch Python function event adds to its message.
const PYTHON_FUNCTION_OVERLAP: &str = " (a PyTorch `python_function` event: Kineto writes these \
     with `with_stack=True` across the ranges their functions open and close)";

/// The category PyTorch's profiler gives the Python function events `with_stack=True` records
/// (a Chrome trace's `cat`, the `cat` stat of an XSpace read from one).
pub const PYTHON_FUNCTION_CATEGORY: &str = "python_function";

/// The name of the stat that holds a trace event's category in an XSpace read from a Chrome
/// trace.
pub const CATEGORY_STAT: &str = "cat";

/// One of two partly overlapping events, as the rules see it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overlapping<'a> {
    /// Its name (its metadata's).
    pub name: &'a str,
    /// Its `cat` stat ([`CATEGORY_STAT`], its own or its metadata's), empty when it has none.
    pub category: &'a str,
}

/// Why a partial overlap of `event` with the earlier `other`, by `overlap_ps`, on the line
/// named `line`, is a producer's own way of writing (the text its message ends with), or `None`
/// when it is an error. See [`super::Severity::Warning`].
pub fn overlap_quirk(
    line: &str,
    event: Overlapping<'_>,
    other: Overlapping<'_>,
    overlap_ps: i128,
) -> Option<&'static str> {
    let (name, other_name) = (event.name, other.name);
    if is_python_tracer(name) || is_python_tracer(other_name) {
        Some(TRACER_OVERLAP)
    } else if [event, other]
        .iter()
        .any(|e| e.category == PYTHON_FUNCTION_CATEGORY)
    {
        Some(PYTHON_FUNCTION_OVERLAP)
    } else if line.starts_with("Async") {
        Some(ASYNC_LINE_OVERLAP)
    } else if name == other_name && overlap_ps <= ITERATION_SKEW_PS {
        Some(ITERATION_OVERLAP)
    } else {
        None
    }
}

/// Whether an event name is the Python tracer's (`$<file>:<line> <function>`).
fn is_python_tracer(name: &str) -> bool {
    name.starts_with('$')
}

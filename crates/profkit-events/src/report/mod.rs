//! Paddle's printed reports, layout for layout, from the event model and Paddle's files.
//!
//! - [`legacy`]: the legacy profiler's profiling report (`Event Summary` tables per thread,
//!   Overhead and GpuMemCpy summaries, Memory Profiling Report), from any [`crate::Recording`];
//! - [`summary`]: the tables `paddle.profiler.Profiler.summary()` prints (Device, Overview,
//!   Model, Distributed, Operator, Kernel, Memory Manipulation, UserDefined and Memory
//!   summaries), from Paddle's node trees or from any [`crate::Recording`].
//!
//! The legacy report's types are re-exported here, where they lived before the summary came.

mod cfmt;
pub mod legacy;
mod parse;
mod stdsort;
pub mod summary;

pub use cfmt::{f as format_f, g as format_g};
pub use legacy::{
    DEFAULT_MAX_DEPTH, MAX_DEPTH_LIMIT, MAX_NAME_WIDTH, MemcpyLine, MemoryRow, Overhead, Place,
    Report, ReportOptions, Row, Section, SortKey, Table,
};
pub use parse::{PrintedRow, parse_rows};
/// libstdc++'s `std::sort`, step for step (unstable: ties come out where libstdc++ puts them), for
/// code that must order equal keys as a C++ tool does.
pub use stdsort::sort as std_sort;

/// Appends `text` left-aligned in a cell of `width` bytes (C++'s `setw`, Python's `{:<width}`:
/// longer text is not cut).
pub(crate) fn pad(out: &mut String, text: &str, width: usize) {
    out.push_str(text);
    for _ in text.len()..width {
        out.push(' ');
    }
}

//! The summaries PyTorch users know, from a saved PyTorch profiler (Kineto) trace
//! (`prof.export_chrome_trace(...)`, `tensorboard_trace_handler`'s `.pt.trace.json[.gz]`),
//! without torch or a Python stack: the table `prof.key_averages().table(...)` prints
//! ([`key_averages`]), and HolisticTraceAnalysis's analyses of GPU runs, several ranks at once
//! ([`hta`]).
//!
//! A Kineto trace is a Chrome trace (the Trace Event Format) whose complete events carry
//! Kineto's categories (`cpu_op`, `user_annotation`, `python_function`, `cuda_runtime`,
//! `kernel`, ...), `External id` and `correlation` args that tie a launch to its kernel, and
//! `[memory]` instants. [`read_trace`] streams it through `profkit-json`, keeping only what these
//! summaries use; times stay the integer nanoseconds the profiler recorded.
//!
//! This crate reads Chrome JSON itself rather than through `profkit-chrome`'s XSpace: torch's
//! and HTA's rules are about Kineto's own events and args (categories, `External id`, the
//! `[memory]` instants, thread ids as written), and skipping the XSpace keeps the summary of a
//! 200 MB trace a matter of one pass.
//!
//! ```
//! use profkit_torch::key_averages::{Grouping, KeyAverages, TableOptions};
//!
//! let text = br#"{"traceEvents": [
//!   {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
//!   {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1, "dur": 4},
//!   {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 2, "dur": 2}]}"#;
//! let trace = profkit_torch::read_trace(&text[..]).unwrap();
//! let averages = KeyAverages::new(&trace, &Grouping::default());
//! // torch folds an operator's only child of the same name into it.
//! assert_eq!(averages.rows[1].name, "aten::add");
//! assert_eq!(averages.rows[1].count, 1);
//! assert!(averages.table(&TableOptions::default()).contains("ProfilerStep*"));
//! ```

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod error;
pub mod hta;
pub mod key_averages;
pub mod trace;

pub use error::{Error, Result};
pub use trace::{Trace, read_trace};

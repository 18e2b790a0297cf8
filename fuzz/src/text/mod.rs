//! Targets of the text the commands print.

pub mod summaries;

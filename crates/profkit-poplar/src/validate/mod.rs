//! Checks of a profile's consistency: every problem, each with the JSON path of the value at
//! fault.
//!
//! Errors are what the format rules out: an index past the end of the array it indexes, a cycle
//! among programs (Poplar allows no recursion), a per-tile array whose length is not `numTiles`
//! (`tilesPerIPU` for `relativeSyncDelayByTile`), redundant figures that disagree (`numTiles`,
//! `totalMemory`, `byTile.total`, `memoryByInstruction.total`, `graph.numComputeSets`), arrays that
//! must run in parallel but differ in length, and an execution profile that refers to programs,
//! compute sets, exchanges or vertex types its graph profile lacks. Warnings are what a valid
//! profile may well have: a section the format documents but the file lacks (older SDKs), a tag or
//! mode this crate does not know, a step without a field the format's documentation says it has.

use std::fmt;

use serde::Serialize;

use crate::counts::Counts;
use crate::graph::GraphProfile;
use crate::path;
use crate::profile::ProfileFile;
use crate::program::ExchangeKind;

mod execution;
mod graph;
mod programs;

pub use execution::validate_execution;
pub use graph::validate_graph;

/// How serious a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The profile breaks a rule of the format.
    Error,
    /// The profile is unusual but may be valid.
    Warning,
}

/// What kind of problem it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemKind {
    /// A section (or field) the format documents is absent.
    MissingSection,
    /// An index past the end of the array it indexes.
    IndexOutOfRange,
    /// Programs that reach themselves through `children` and calls.
    ProgramCycle,
    /// A per-tile array whose length is not the number of tiles.
    TileArrayLength,
    /// Arrays that must have the same length do not.
    ArrayLength,
    /// `numTiles` is not `numIPUs` x `tilesPerIPU`.
    TileCount,
    /// `totalMemory` disagrees with the memory per tile or per IPU.
    TotalMemory,
    /// Redundant figures that disagree.
    Inconsistent,
    /// The execution profile refers to something the graph profile lacks.
    NotInGraph,
    /// A tag, mode or type this crate does not know.
    UnknownTag,
}

/// One problem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// How serious it is.
    pub severity: Severity,
    /// What kind it is.
    pub kind: ProblemKind,
    /// The JSON path of the value at fault (empty for the whole file).
    pub path: String,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let path = if self.path.is_empty() {
            "(top level)"
        } else {
            &self.path
        };
        write!(f, "{severity}: {path}: {}", self.message)
    }
}

/// Problems of one kind that are reported one by one up to this many per array, then counted.
const PER_ARRAY: usize = 20;

/// Collects problems.
#[derive(Default)]
pub(super) struct Problems(Vec<Problem>);

impl Problems {
    pub(super) fn error(&mut self, kind: ProblemKind, path: String, message: String) {
        self.0.push(Problem {
            severity: Severity::Error,
            kind,
            path,
            message,
        });
    }

    pub(super) fn warning(&mut self, kind: ProblemKind, path: String, message: String) {
        self.0.push(Problem {
            severity: Severity::Warning,
            kind,
            path,
            message,
        });
    }

    /// Reports `count` problems found in the array at `base` beyond the first [`PER_ARRAY`].
    pub(super) fn more(&mut self, kind: ProblemKind, base: &str, count: usize, what: &str) {
        if count > PER_ARRAY {
            self.error(
                kind,
                base.to_owned(),
                format!("and {} more {what} in this array", count - PER_ARRAY),
            );
        }
    }

    /// Checks that the per-tile array at `at` has `tiles` values.
    pub(super) fn tile_array(&mut self, at: String, counts: &Counts, tiles: u64, of: &str) {
        if counts.len() as u64 != tiles {
            self.error(
                ProblemKind::TileArrayLength,
                at,
                format!("has {} value(s), but {of} is {tiles}", counts.len()),
            );
        }
    }

    /// Checks a 2-D array `[index][tile]`: `expected` rows (when known) of `tiles` values each.
    pub(super) fn rows(
        &mut self,
        at: &str,
        rows: &[Counts],
        expected: Option<(usize, &str)>,
        tiles: Option<(u64, &str)>,
    ) {
        if let Some((n, what)) = expected
            && rows.len() != n
        {
            self.error(
                ProblemKind::ArrayLength,
                at.to_owned(),
                format!("has {} row(s), but there are {n} {what}", rows.len()),
            );
        }
        if let Some((tiles, of)) = tiles {
            for (i, row) in rows.iter().enumerate() {
                self.tile_array(path::index(at, i), row, tiles, of);
            }
        }
    }

    /// Checks that every index of `indices` (an array at `at`) is below `len`.
    pub(super) fn indices(
        &mut self,
        kind: ProblemKind,
        at: &str,
        indices: impl IntoIterator<Item = u32>,
        len: usize,
        what: &str,
    ) {
        let mut bad = 0usize;
        for (i, value) in indices.into_iter().enumerate() {
            if value as usize >= len {
                bad += 1;
                if bad <= PER_ARRAY {
                    let message = if kind == ProblemKind::NotInGraph {
                        format!("{what} {value} is not in the graph profile (it has {len})")
                    } else {
                        format!("{what} {value} is out of range (there are {len})")
                    };
                    self.error(kind, path::index(at, i), message);
                }
            }
        }
        self.more(kind, at, bad, "indices out of range");
    }
}

/// Every problem of a profile file (a combined file's execution profile is checked against its
/// graph profile).
pub fn validate(file: &ProfileFile) -> Vec<Problem> {
    validate_with_graph(file, None)
}

/// Every problem of a profile file, checking an execution profile against `graph` (the graph
/// profile of the same run, from a separate file) when the file has no graph profile of its own.
/// Problems of `graph` itself are not reported.
pub fn validate_with_graph(file: &ProfileFile, graph: Option<&GraphProfile>) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(graph) = file.graph() {
        problems.extend(validate_graph(graph, file.graph_path()));
    }
    if let Some(execution) = file.execution() {
        problems.extend(validate_execution(
            execution,
            file.graph().or(graph),
            file.execution_path(),
        ));
    }
    if let ProfileFile::Combined(p) = file
        && p.graph_profile.is_none()
        && p.execution_profile.is_none()
    {
        problems.push(Problem {
            severity: Severity::Warning,
            kind: ProblemKind::MissingSection,
            path: String::new(),
            message: "the combined profile has neither graphProfile nor executionProfile".into(),
        });
    }
    problems
}

/// The number of exchanges of `kind` the graph profile has, when it has the section.
pub(super) fn exchange_count(graph: &GraphProfile, kind: ExchangeKind) -> Option<usize> {
    match kind {
        ExchangeKind::Internal => graph.exchanges.as_ref().map(|e| e.len()),
        ExchangeKind::External => graph.external_exchanges.as_ref().map(|e| e.len()),
        ExchangeKind::Host => graph.host_exchanges.as_ref().map(|e| e.len()),
    }
}

//! Fixtures shared by the tests: the hand-written conformance inputs.

#![allow(dead_code, reason = "each test file uses some of the helpers")]

use std::path::PathBuf;

use profkit_poplar::{ExecutionProfile, GraphProfile, ProfileFile};

/// `conformance/poplar/<case>/<file>`.
pub fn case_path(case: &str, file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/poplar")
        .join(case)
        .join(file)
}

/// The bytes of a case's input.
pub fn input(case: &str) -> Vec<u8> {
    std::fs::read(case_path(case, "input.json")).unwrap()
}

/// A case's input, read.
pub fn file(case: &str) -> ProfileFile {
    profkit_poplar::read_file(case_path(case, "input.json")).unwrap()
}

/// The complete graph profile of 2 IPUs x 4 tiles.
pub fn graph() -> GraphProfile {
    match file("graph-complete") {
        ProfileFile::Graph(g) => g,
        other => panic!("not a graph profile: {other:?}"),
    }
}

/// A case's execution profile.
pub fn execution(case: &str) -> ExecutionProfile {
    match file(case) {
        ProfileFile::Execution(e) => e,
        other => panic!("not an execution profile: {other:?}"),
    }
}

//! Conformance case support.

//! JSON paths as profkit prints them (shared with the reader, in profkit-json).

pub(crate) use profkit_json::path::{index, key};

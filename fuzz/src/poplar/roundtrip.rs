//! Target `poplar_roundtrip`: profiles built from the input (`generate.rs`) through the writer and
//! back through the reader.

use arbitrary::Unstructured;
use profkit_poplar::{ProfileFile, from_str};

use super::generate;

/// The profile the input builds (`None` when the input is too short for one).
pub fn build(data: &[u8]) -> Option<ProfileFile> {
    generate::profile_file(&mut Unstructured::new(data)).ok()
}

/// Shows the profile an input builds.
pub fn describe(data: &[u8]) -> String {
    match build(data) {
        Some(file) => profkit_poplar::to_string_pretty(&file).unwrap_or_else(|e| e.to_string()),
        None => "(the input builds no profile)".into(),
    }
}

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let Some(file) = build(data) else {
        return;
    };
    super::json::check_profile(&file);
    let text = profkit_poplar::to_string(&file).unwrap_or_else(|e| panic!("cannot write: {e}"));
    let theirs: ProfileFile = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("serde_json's deserializer refuses the writing: {e}\n{text}"));
    assert_eq!(
        theirs, file,
        "the generic path reads the writing as another profile"
    );
    let back: ProfileFile = from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        profkit_poplar::to_string(&back).unwrap_or_default(),
        text,
        "writing is not a fixed point"
    );
    let _ = profkit_poplar::looks_like_poplar(text.as_bytes());
}

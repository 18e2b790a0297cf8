//! Target `xplane_json`: text into the reader of the canonical JSON view.
//!
//! Conformance cases are written by hand in this layout, so [`view::from_json`] meets text no
//! encoder produced. It must refuse bad text with a JSON error, and whatever it accepts must
//! print back as canonical JSON that is a fixed point: read again, it gives the same space and
//! prints the same text.

use profkit_xplane::{Error, encode, view};

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let space = match view::from_json(text) {
        Ok(space) => space,
        Err(Error::Json(message)) => {
            assert!(!message.is_empty(), "a JSON error without a message");
            return;
        }
        Err(other) => panic!("from_json fails with a non-JSON error: {other:?}"),
    };
    let json = view::to_json(&space);
    let back = view::from_json(&json)
        .unwrap_or_else(|e| panic!("canonical JSON does not read back: {e}\n{json}"));
    assert_eq!(
        encode(&back),
        encode(&super::decode::canonical_nans(&space)),
        "canonical JSON reads back as another space:\n{json}"
    );
    assert_eq!(
        view::to_json(&back),
        json,
        "canonical JSON is not a fixed point"
    );
    super::decode::check_space(&space);
}

//! Target `xplane_roundtrip`: an XSpace built from fuzzer bytes (see [`super::generate`]) is
//! encoded, then decoded whole and by the streaming reader, and read back from its canonical
//! JSON view; every way back must give the same space. What `encode` writes is canonical, so the
//! normalising rewrite (`reencode`) copies every plane of it and gives back the same bytes.

use arbitrary::Unstructured;
use profkit_xplane::xview::Normalised;
use profkit_xplane::{ReadOptions, XSpace, XSpaceReader, XSpaceView, decode, encode, view, x_stat};

use super::generate;

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let mut u = Unstructured::new(data);
    // Running out of bytes only cuts the space short; a short space is still worth checking.
    let Ok(space) = generate::space(&mut u) else {
        return;
    };
    let bytes = encode(&space);
    assert!(
        bytes == prost::Message::encode_to_vec(&space),
        "encode differs from prost's encoding"
    );
    assert!(
        profkit_xplane::looks_like_xspace(&bytes),
        "an encoded XSpace is not detected as one"
    );

    let decoded =
        decode(bytes.clone()).unwrap_or_else(|e| panic!("an encoded XSpace fails to decode: {e}"));
    assert_same(&decoded, &space, "decode(encode(space))");

    let streamed = XSpaceReader::new(&bytes[..], ReadOptions::default())
        .collect_space()
        .unwrap_or_else(|e| panic!("an encoded XSpace fails to stream: {e}"));
    assert_same(&streamed, &space, "XSpaceReader over encode(space)");

    let json = view::to_json(&space);
    let back = view::from_json(&json)
        .unwrap_or_else(|e| panic!("canonical JSON does not read back: {e}\n{json}"));
    assert_same(
        &back,
        &super::decode::canonical_nans(&space),
        "from_json(to_json(space))",
    );

    super::decode::check_space(&decoded);

    // What `encode` writes is canonical: every plane is copied by the normalising rewrite, which
    // gives back the input.
    let view =
        XSpaceView::new(&bytes).unwrap_or_else(|e| panic!("a view of an encoded XSpace: {e}"));
    for plane in view.planes() {
        let plane = plane.unwrap_or_else(|e| panic!("a plane of an encoded XSpace: {e}"));
        let how = plane
            .normalise(&mut Vec::new())
            .unwrap_or_else(|e| panic!("normalising a plane of an encoded XSpace: {e}"));
        assert_eq!(
            how,
            Normalised::Canonical,
            "a plane `encode` wrote is not found canonical"
        );
    }
    let mut rewritten = Vec::new();
    profkit_convert::merge::reencode(&bytes[..], &mut rewritten, ReadOptions::default(), None)
        .unwrap_or_else(|e| panic!("reencode of an encoded XSpace: {e}"));
    assert!(
        rewritten == bytes,
        "reencode does not give back an encoded XSpace"
    );
}

/// The space `data` builds, for reading a failing input.
pub fn describe(data: &[u8]) -> String {
    match generate::space(&mut Unstructured::new(data)) {
        Ok(space) => format!("{space:#?}"),
        Err(e) => format!("no space: {e}"),
    }
}

/// Asserts `actual` equals `expected` by encoding, which is exact for doubles (NaN != NaN and
/// -0.0 == 0.0, but their bits differ on the wire); a field-by-field diff is shown when it helps.
fn assert_same(actual: &XSpace, expected: &XSpace, what: &str) {
    if encode(actual) != encode(expected) {
        if !has_nan(expected) {
            assert_eq!(actual, expected, "{what} differs from the space");
        }
        panic!("{what} differs from the space in the bits of a double: {actual:?}");
    }
}

/// Whether any stat of `space` holds a NaN.
pub fn has_nan(space: &XSpace) -> bool {
    let is_nan = |s: &profkit_xplane::XStat| matches!(s.value, Some(x_stat::Value::DoubleValue(v)) if v.is_nan());
    space.planes.iter().any(|p| {
        p.stats.iter().any(is_nan)
            || p.event_metadata.values().flat_map(|m| &m.stats).any(is_nan)
            || p.lines
                .iter()
                .flat_map(|l| &l.events)
                .flat_map(|e| &e.stats)
                .any(is_nan)
    })
}

//! The real sample written with the official Python classes decodes, validates and re-encodes.

use profkit_xplane::{ReadOptions, XSpaceReader, decode, encode, read_file, validate};

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../conformance/xplane/sample-myhost/input.xplane.pb"
);

#[test]
fn sample_decodes_and_round_trips() {
    let bytes = std::fs::read(SAMPLE).unwrap();
    let space = decode(bytes.clone()).unwrap();
    assert!(!space.planes.is_empty());
    assert_eq!(validate(&space), vec![]);
    // Python wrote its maps in hash order and we write them sorted, so compare content; our
    // own encoding is a fixed point.
    let ours = encode(&space);
    assert_eq!(ours.len(), bytes.len());
    assert_eq!(decode(ours.clone()).unwrap(), space);
    assert_eq!(encode(&decode(ours.clone()).unwrap()), ours);
    let streamed = XSpaceReader::new(&bytes[..], ReadOptions::default())
        .collect_space()
        .unwrap();
    assert_eq!(streamed, space);
    let from_file = read_file(SAMPLE, ReadOptions::default()).unwrap();
    assert_eq!(from_file, space);
}

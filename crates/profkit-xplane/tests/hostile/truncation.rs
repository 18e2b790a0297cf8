//! Truncation.

use super::*;

#[test]
fn plane_length_past_the_end_is_a_truncation() {
    // planes[0] declares 5 bytes; 2 follow.
    let bytes = [0x0a, 0x05, 0x08, 0x01];
    assert_eq!(both_fail(&bytes), truncated(4, "XSpace.planes[0]", 3));
    assert!(decode(bytes.to_vec()).unwrap_err().is_truncation());
}

#[test]
fn tag_cut_short_is_a_truncation() {
    // A complete plane, then the first byte of a two-byte tag.
    let bytes = [0x0a, 0x02, 0x08, 0x01, 0x80];
    assert_eq!(both_fail(&bytes), truncated(5, "XSpace", 1));
    // The length of hostnames[0] cut short.
    let bytes = [0x0a, 0x00, 0x22, 0x80];
    assert_eq!(both_fail(&bytes), truncated(4, "XSpace.hostnames[0]", 1));
    // A string cut short.
    let bytes = [0x0a, 0x00, 0x1a, 0x04, b'a', b'b'];
    assert_eq!(both_fail(&bytes), truncated(6, "XSpace.warnings[0]", 2));
}

#[test]
fn unknown_field_cut_short_is_a_truncation() {
    // Field 9, 64-bit, with 3 of its 8 bytes.
    let bytes = [&key(9, FIXED64)[..], &[1, 2, 3]].concat();
    assert_eq!(
        both_fail(&bytes),
        truncated(4, "XSpace.<unknown field 9>", 5)
    );
    // Field 9, length-delimited, declaring 100 bytes with 1 present.
    let bytes = [&key(9, LEN)[..], &[100, 7]].concat();
    assert_eq!(
        both_fail(&bytes),
        truncated(3, "XSpace.<unknown field 9>", 99)
    );
    // A group that never ends.
    let bytes = [key(9, START_GROUP), vi(1, 5)].concat();
    assert_eq!(
        both_fail(&bytes),
        truncated(3, "XSpace.<unknown field 9>", 1)
    );
}

#[test]
fn every_prefix_of_a_valid_encoding_is_whole_or_a_truncation() {
    let space = rich_space();
    let bytes = encode(&space);
    let boundaries = top_level_boundaries(&bytes);
    assert_eq!(boundaries.last(), Some(&bytes.len()));
    for cut in 0..bytes.len() {
        let prefix = &bytes[..cut];
        let whole = decode(prefix.to_vec());
        let (items, streamed) = stream(prefix, ReadOptions::default());
        if boundaries.contains(&cut) {
            let whole = whole.unwrap_or_else(|e| panic!("cut {cut} at a field boundary: {e}"));
            assert!(streamed.is_none(), "cut {cut}: {streamed:?}");
            let collected = XSpaceReader::new(prefix, ReadOptions::default())
                .collect_space()
                .unwrap();
            assert_eq!(collected, whole);
            assert!(items.len() <= 2 + 1 + 2 + 1);
        } else {
            let e = whole.expect_err("a cut inside a field must fail");
            assert!(e.is_truncation(), "cut {cut}: {e}");
            let streamed = streamed.expect("stream must fail too");
            assert!(streamed.is_truncation(), "cut {cut}: {streamed}");
            assert_eq!(got(&e), got(&streamed), "cut {cut}");
            match got(&e) {
                Got::Truncated { offset, needed, .. } => {
                    assert_eq!(
                        offset, cut as u64,
                        "a truncation is reported where the input ends"
                    );
                    assert!(needed >= 1);
                }
                other => panic!("{other:?}"),
            }
        }
    }
}

#[test]
fn decode_plane_reports_truncation_of_a_single_plane() {
    let plane = rich_space().planes.remove(0);
    let bytes = prost::Message::encode_to_vec(&plane);
    assert_eq!(decode_plane(bytes.clone()).unwrap(), plane);
    let cut = bytes.len() - 1;
    let e = decode_plane(bytes[..cut].to_vec()).unwrap_err();
    assert!(e.is_truncation(), "{e}");
    match got(&e) {
        Got::Truncated { offset, path, .. } => {
            assert_eq!(offset, cut as u64);
            assert!(path.starts_with("XPlane."), "{path}");
        }
        other => panic!("{other:?}"),
    }
}

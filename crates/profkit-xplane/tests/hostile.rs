//! Hand-made hostile inputs: every one must give an error that names the byte offset and the
//! message/field path, the same from `decode` and from `XSpaceReader`, without panicking and
//! without allocating by a declared length.

use std::io::Read;

use profkit_error::Truncation;
use profkit_xplane::{
    DEFAULT_MAX_SIZE, Error, PlaneBuilder, ReadOptions, SpaceItem, StatValue, XPlane, XSpace,
    XSpaceReader, decode, decode_plane, decode_with, encode, read, read_file,
};

// ---------------------------------------------------------------------------------------------
// A tiny protobuf writer, so that each case shows its bytes.

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

fn key(field: u64, wire_type: u8) -> Vec<u8> {
    varint(field << 3 | u64::from(wire_type))
}

/// A varint field.
fn vi(field: u64, v: u64) -> Vec<u8> {
    [key(field, VARINT), varint(v)].concat()
}

/// A length-delimited field.
fn ld(field: u64, body: &[u8]) -> Vec<u8> {
    [key(field, LEN), varint(body.len() as u64), body.to_vec()].concat()
}

/// An encoded message body with one position of interest (`mark`) inside it.
struct Marked {
    bytes: Vec<u8>,
    mark: usize,
}

impl Marked {
    /// A message body whose byte `mark` is of interest.
    fn body(bytes: Vec<u8>, mark: usize) -> Marked {
        Marked { bytes, mark }
    }

    /// The body of the enclosing message: this one as its field `field`, between the sibling
    /// fields `before` and `after`.
    fn within(self, field: u64, before: &[u8], after: &[u8]) -> Marked {
        let header = [key(field, LEN), varint(self.bytes.len() as u64)].concat();
        Marked {
            mark: before.len() + header.len() + self.mark,
            bytes: [before, &header, &self.bytes, after].concat(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Comparing errors.

/// The parts of an error that tests compare: kind, offset, path and detail.
#[derive(Debug, PartialEq, Eq, Clone)]
enum Got {
    Malformed {
        offset: u64,
        path: String,
        reason: String,
    },
    Truncated {
        offset: u64,
        path: String,
        needed: u64,
    },
    TooLarge {
        what: String,
        offset: u64,
        size: u64,
        limit: u64,
    },
    Other(String),
}

fn got(e: &Error) -> Got {
    match e.root() {
        Error::Malformed {
            offset,
            path,
            reason,
        } => Got::Malformed {
            offset: *offset,
            path: path.clone(),
            reason: reason.clone(),
        },
        Error::Truncated(Truncation {
            offset,
            path,
            needed,
        }) => Got::Truncated {
            offset: *offset,
            path: path.clone(),
            needed: *needed,
        },
        Error::TooLarge(profkit_error::OverLimit {
            what,
            offset,
            size,
            limit,
        }) => Got::TooLarge {
            what: what.clone(),
            offset: *offset,
            size: *size,
            limit: *limit,
        },
        other => Got::Other(other.to_string()),
    }
}

fn malformed(offset: usize, path: &str, reason: &str) -> Got {
    Got::Malformed {
        offset: offset as u64,
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

fn truncated(offset: usize, path: &str, needed: u64) -> Got {
    Got::Truncated {
        offset: offset as u64,
        path: path.to_owned(),
        needed,
    }
}

/// Everything the streaming reader yields, stopping at its error.
fn stream(bytes: &[u8], options: ReadOptions) -> (Vec<SpaceItem>, Option<Error>) {
    let mut items = Vec::new();
    let mut reader = XSpaceReader::new(bytes, options);
    for item in reader.by_ref() {
        match item {
            Ok(item) => items.push(item),
            Err(e) => {
                assert!(reader.next().is_none(), "the reader ends after an error");
                return (items, Some(e));
            }
        }
    }
    (items, None)
}

/// The error of `decode` and of the streaming reader, which must agree; returns it.
fn both_fail(bytes: &[u8]) -> Got {
    let whole = decode(bytes.to_vec()).expect_err("decode must fail");
    let (_, streamed) = stream(bytes, ReadOptions::default());
    let streamed = streamed.expect("the streaming reader must fail");
    assert_eq!(
        got(&whole),
        got(&streamed),
        "decode and XSpaceReader disagree"
    );
    assert_eq!(whole.is_truncation(), streamed.is_truncation());
    // A full walk of a view, whole and plane by plane from the stream, fails with the same error.
    let view = profkit_xplane::XSpaceView::new(bytes).expect("within the size limit");
    let walked = view.check().expect_err("the view walk must fail");
    assert_eq!(
        got(&whole),
        got(&walked),
        "decode and the view walk disagree"
    );
    let mut reader = XSpaceReader::new(bytes, ReadOptions::default());
    let streamed_view = loop {
        match reader.next_raw() {
            Some(Ok(profkit_xplane::RawSpaceItem::Plane(plane))) => {
                if let Err(e) = plane.view().and_then(|view| view.check()) {
                    break e;
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => break e,
            None => panic!("the streamed views must fail"),
        }
    };
    assert_eq!(
        got(&whole),
        got(&streamed_view),
        "decode and the streamed views disagree"
    );
    // The message names the offset and the path.
    let text = whole.to_string();
    match got(&whole) {
        Got::Malformed { offset, path, .. } | Got::Truncated { offset, path, .. } => {
            assert!(text.contains(&format!("byte {offset}")), "{text}");
            assert!(text.contains(&path), "{text}");
        }
        other => panic!("unexpected error {other:?}"),
    }
    got(&whole)
}

// ---------------------------------------------------------------------------------------------
// Truncation.

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

/// A space with every kind of field, for cutting and mutating.
fn rich_space() -> XSpace {
    let mut space = XSpace {
        errors: vec!["e1".into()],
        warnings: vec!["w1".into(), "w2".into()],
        hostnames: vec!["host".into()],
        ..Default::default()
    };
    for (id, name) in [(0, "/host:CPU"), (1, "/device:GPU:0")] {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_id(id)
            .set_name(name)
            .add_stat("clock_rate", 1_500_u64);
        let md = b.event_metadata_id("kernel");
        let child = b.event_metadata_id("child");
        if let Some(mut m) = b.event_metadata(md) {
            m.set_display_name("Kernel")
                .set_metadata(vec![1, 2, 3])
                .add_stat("flops", 2.5)
                .add_child(child);
        }
        for line_id in 1..=2 {
            let mut line = b.line(line_id);
            line.set_name(format!("line{line_id}"))
                .set_timestamp_ns(1_000);
            for i in 0..3 {
                line.add_event("kernel")
                    .set_offset_ps(i * 10_000)
                    .set_duration_ps(5_000)
                    .add_stat("i", i)
                    .add_stat("u", 7_u64)
                    .add_stat("d", -0.5)
                    .add_stat("s", "text")
                    .add_stat("b", vec![0_u8, 255])
                    .add_stat("r", StatValue::Ref("interned".into()));
            }
            line.add_event("child")
                .set_num_occurrences(4)
                .set_duration_ps(9);
        }
        space.planes.push(plane);
    }
    space
}

/// Where each top-level field of a valid encoding ends.
fn top_level_boundaries(bytes: &[u8]) -> Vec<usize> {
    let mut ends = vec![0];
    let mut pos = 0;
    while pos < bytes.len() {
        let (_tag, n) = read_varint(&bytes[pos..]);
        pos += n;
        let (len, n) = read_varint(&bytes[pos..]);
        pos += n + len as usize;
        ends.push(pos);
    }
    ends
}

fn read_varint(bytes: &[u8]) -> (u64, usize) {
    let mut v = 0;
    for (i, b) in bytes.iter().enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    panic!("bad varint in a valid encoding")
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

// ---------------------------------------------------------------------------------------------
// Corruption: lengths that run past their message, wrong wire types, bad UTF-8, bad varints.

#[test]
fn string_longer_than_its_line_is_corruption_not_truncation() {
    // planes[0].lines[0] is 2 bytes long, but its name declares 10.
    let plane = Marked::body(vec![0x12, 10], 2) // the line
        .within(3, &vi(1, 3), &[]) // the plane: id, lines[0]
        .within(1, &[], &[]); // the space
    let offset = plane.mark;
    let reason = "field of 10 bytes runs past the end of the enclosing message";
    // With more input after the plane, and with the plane at the very end: both corruption.
    for after in [&ld(4, b"host")[..], &[]] {
        let bytes = [&plane.bytes[..], after].concat();
        let e = both_fail(&bytes);
        assert_eq!(
            e,
            malformed(offset, "XSpace.planes[0].lines[0].name", reason)
        );
        assert!(!decode(bytes).unwrap_err().is_truncation());
    }
}

#[test]
fn varint_crossing_the_end_of_its_message_is_corruption() {
    // planes[0] is 3 bytes: the tag of `id`, then a varint still open at the plane's end.
    let bytes = [0x0a, 0x03, 0x08, 0x80, 0x80, 0x80];
    let e = both_fail(&bytes);
    assert_eq!(
        e,
        malformed(
            3,
            "XSpace.planes[0].id",
            "varint runs past the end of the enclosing message"
        )
    );
}

#[test]
fn group_tag_crossing_the_end_of_its_plane_does_not_panic() {
    // A group in an unknown field of a 3-byte plane, whose next tag runs on into the bytes after
    // the plane and decodes as a 64-bit field: the walk once subtracted past the plane's end.
    let mut bytes = vec![0x0a, 0x03, 0xa3, 0x06, 0x89, 0x01];
    bytes.extend([0; 8]);
    bytes.extend(ld(4, b"h"));
    assert_eq!(
        both_fail(&bytes),
        malformed(
            4,
            "XSpace.planes[0].<unknown field 100>",
            "varint runs past the end of the enclosing message"
        )
    );
}

#[test]
fn wrong_wire_type_deep_in_a_stat() {
    // stats[0] of events[2] of lines[1] of planes[1] has `double_value` as a varint.
    let space = Marked::body([vi(1, 1), vi(2, 5)].concat(), 2) // the stat
        .within(4, &vi(1, 1), &[]) // the event: metadata_id, stats[0]
        .within(4, &[ld(4, &vi(1, 1)), ld(4, &vi(1, 1))].concat(), &vi(3, 0)) // events[2] of a line
        .within(3, &[ld(2, b"/host:CPU"), ld(3, &vi(1, 1))].concat(), &[]) // lines[1] of a plane
        .within(1, &[ld(4, b"host"), ld(1, &[])].concat(), &ld(2, b"err")); // planes[1]
    // The first plane is empty; the stat is in the second one.
    let e = both_fail(&space.bytes);
    assert_eq!(
        e,
        malformed(
            space.mark,
            "XSpace.planes[1].lines[1].events[2].stats[0].double_value",
            "wire type 0 (varint), expected 1 (64-bit)"
        )
    );
    assert!(!decode(space.bytes).unwrap_err().is_truncation());
}

#[test]
fn wrong_wire_type_at_the_top_level() {
    // planes as a varint.
    assert_eq!(
        both_fail(&[0x22, 0x00, 0x08, 0x01]),
        malformed(
            2,
            "XSpace.planes[0]",
            "wire type 0 (varint), expected 2 (length-delimited)"
        )
    );
    // The third hostname as a 64-bit value.
    let bytes = [ld(4, b"a"), ld(4, b"b"), key(4, FIXED64), vec![0; 8]].concat();
    assert_eq!(
        both_fail(&bytes),
        malformed(
            6,
            "XSpace.hostnames[2]",
            "wire type 1 (64-bit), expected 2 (length-delimited)"
        )
    );
}

#[test]
fn wrong_wire_type_in_a_map_entry_and_in_child_ids() {
    // event_metadata entry whose key is length-delimited.
    let space = Marked::body([ld(1, b"x"), ld(2, &vi(1, 1))].concat(), 0) // the entry
        .within(4, &[], &[]) // the plane
        .within(1, &[], &[]);
    assert_eq!(
        both_fail(&space.bytes),
        malformed(
            space.mark,
            "XSpace.planes[0].event_metadata[0].key",
            "wire type 2 (length-delimited), expected 0 (varint)"
        )
    );
    // Packed child ids whose last varint is open at the end of the packed field.
    let space = Marked::body([vi(1, 1), ld(6, &[1, 2, 0x80])].concat(), 2 + 2 + 2) // the metadata
        .within(2, &vi(1, 1), &[]) // the map entry
        .within(4, &[], &[]) // the plane
        .within(1, &[], &ld(4, b"h"));
    assert_eq!(
        both_fail(&space.bytes),
        malformed(
            space.mark,
            "XSpace.planes[0].event_metadata[0].value.child_id[0]",
            "varint runs past the end of the enclosing message"
        )
    );
    // Unpacked child ids are fine, and so are packed ones.
    let metadata = [vi(1, 1), vi(6, 2), vi(6, 3), ld(6, &[4, 5])].concat();
    let bytes = ld(1, &ld(4, &[vi(1, 1), ld(2, &metadata)].concat()));
    let space = decode(bytes.clone()).unwrap();
    assert_eq!(
        space.planes[0].event_metadata[&1].child_id,
        vec![2, 3, 4, 5]
    );
    assert_eq!(
        XSpaceReader::new(&bytes[..], ReadOptions::default())
            .collect_space()
            .unwrap(),
        space
    );
}

#[test]
fn metadata_maps_with_a_wrong_wire_type_are_refused_not_misread() {
    // prost itself takes the byte after a map tag as a length whatever the wire type, so `20 00`
    // (event_metadata as the varint 0) would become an entry `0 => {}`.
    let space = Marked::body([ld(2, b"/host:CPU"), vi(4, 0)].concat(), 11) // the plane
        .within(1, &[], &ld(4, b"h"));
    assert_eq!(
        both_fail(&space.bytes),
        malformed(
            space.mark,
            "XSpace.planes[0].event_metadata[0]",
            "wire type 0 (varint), expected 2 (length-delimited)"
        )
    );
    // stat_metadata as a group, in the second plane, after a well-formed entry.
    let entry = ld(
        5,
        &[vi(1, 1), ld(2, &[vi(1, 1), ld(2, b"s")].concat())].concat(),
    );
    let plane = [entry, key(5, START_GROUP), vi(1, 1), key(5, END_GROUP)].concat();
    let bytes = [ld(1, &[]), ld(1, &plane)].concat();
    assert_eq!(
        both_fail(&bytes),
        malformed(
            2 + 2
                + ld(
                    5,
                    &[vi(1, 1), ld(2, &[vi(1, 1), ld(2, b"s")].concat())].concat()
                )
                .len(),
            "XSpace.planes[1].stat_metadata[1]",
            "wire type 3 (start-group), expected 2 (length-delimited)"
        )
    );
    // A single plane too.
    let e = decode_plane([vi(5, 2), vi(2, 3)].concat()).unwrap_err();
    assert_eq!(
        got(&e),
        malformed(
            0,
            "XPlane.stat_metadata[0]",
            "wire type 0 (varint), expected 2 (length-delimited)"
        )
    );
}

#[test]
fn invalid_utf8_names_the_byte() {
    // planes[0].event_metadata[1].value.name = "ab\xffc": the bad byte is the third.
    let space = Marked::body([vi(1, 7), ld(2, b"ab\xffc")].concat(), 2 + 2 + 2) // the metadata
        .within(2, &vi(1, 7), &[]) // the map entry
        .within(4, &[ld(2, b"/host:CPU"), ld(4, &vi(1, 1))].concat(), &[]) // the plane
        .within(1, &[], &[]);
    assert_eq!(
        both_fail(&space.bytes),
        malformed(
            space.mark,
            "XSpace.planes[0].event_metadata[1].value.name",
            "string is not valid UTF-8"
        )
    );
    // A stat's str_value.
    let space = Marked::body([vi(1, 1), ld(5, b"\xc3")].concat(), 4) // the stat
        .within(
            4,
            &[vi(1, 1), ld(4, &[vi(1, 1), vi(4, 0)].concat())].concat(),
            &[],
        ) // stats[1]
        .within(4, &[], &[]) // the line
        .within(3, &[], &[]) // the plane
        .within(1, &[], &[]);
    assert_eq!(
        both_fail(&space.bytes),
        malformed(
            space.mark,
            "XSpace.planes[0].lines[0].events[0].stats[1].str_value",
            "string is not valid UTF-8"
        )
    );
    // A top-level hostname: the first byte of a cut-off multi-byte sequence.
    let bytes = [ld(4, b"ok"), ld(4, b"x\xe2\x82")].concat();
    assert_eq!(
        both_fail(&bytes),
        malformed(
            4 + 2 + 1,
            "XSpace.hostnames[1]",
            "string is not valid UTF-8"
        )
    );
}

#[test]
fn bad_varints_and_field_numbers() {
    // A varint of eleven bytes in planes[0].id.
    let mut bytes = vec![0x0a, 12, 0x08];
    bytes.extend([0xff; 10]);
    bytes.push(0x01);
    assert_eq!(
        both_fail(&bytes),
        malformed(3, "XSpace.planes[0].id", "varint longer than 64 bits")
    );
    // The same at the top level (a tag).
    let mut bytes = vec![0x0a, 0x00];
    bytes.extend([0xff; 9]);
    bytes.push(0x02);
    assert_eq!(
        both_fail(&bytes),
        malformed(2, "XSpace", "varint longer than 64 bits")
    );
    // Field number 0.
    assert_eq!(
        both_fail(&[0x0a, 0x02, 0x00, 0x00]),
        malformed(2, "XSpace.planes[0]", "invalid field number 0")
    );
    assert_eq!(
        both_fail(&[0x00, 0x00]),
        malformed(0, "XSpace", "invalid field number 0")
    );
    // Field number 2^29, one past the largest.
    let bytes = [key(1 << 29, VARINT), varint(0)].concat();
    assert_eq!(
        both_fail(&bytes),
        malformed(0, "XSpace", "invalid field number 536870912")
    );
    let bytes = ld(1, &[key(1 << 29, VARINT), varint(0)].concat());
    assert_eq!(
        both_fail(&bytes),
        malformed(2, "XSpace.planes[0]", "invalid field number 536870912")
    );
    // The largest field number is fine.
    let bytes = [
        key((1 << 29) - 1, VARINT),
        varint(0),
        ld(1, &[key((1 << 29) - 1, VARINT), varint(0)].concat()),
    ]
    .concat();
    assert_eq!(decode(bytes.clone()).unwrap().planes.len(), 1);
    assert_eq!(stream(&bytes, ReadOptions::default()).0.len(), 1);
}

#[test]
fn invalid_wire_types_and_stray_group_ends() {
    // Wire type 7 in an unknown field of a plane.
    let bytes = ld(1, &[vi(1, 1), key(20, 7)].concat());
    assert_eq!(
        both_fail(&bytes),
        malformed(
            4,
            "XSpace.planes[0].<unknown field 20>",
            "invalid wire type 7"
        )
    );
    // ... and at the top level.
    let bytes = [ld(1, &[]), key(20, 6)].concat();
    assert_eq!(
        both_fail(&bytes),
        malformed(2, "XSpace.<unknown field 20>", "invalid wire type 6")
    );
    // An end-group with no start.
    let bytes = ld(1, &key(20, END_GROUP));
    assert_eq!(
        both_fail(&bytes),
        malformed(
            2,
            "XSpace.planes[0].<unknown field 20>",
            "end-group tag without a start"
        )
    );
    assert_eq!(
        both_fail(&key(20, END_GROUP)),
        malformed(
            0,
            "XSpace.<unknown field 20>",
            "end-group tag without a start"
        )
    );
    // A group closed by the end of another field number.
    let bytes = ld(
        1,
        &[key(20, START_GROUP), vi(1, 1), key(21, END_GROUP)].concat(),
    );
    assert_eq!(
        both_fail(&bytes),
        malformed(
            6,
            "XSpace.planes[0].<unknown field 20>",
            "end-group tag does not match its start"
        )
    );
    let bytes = [key(20, START_GROUP), key(21, END_GROUP)].concat();
    assert_eq!(
        both_fail(&bytes),
        malformed(
            2,
            "XSpace.<unknown field 20>",
            "end-group tag does not match its start"
        )
    );
}

/// `depth` groups of field 15 nested in one another.
fn nested_groups(depth: usize) -> Vec<u8> {
    [
        key(15, START_GROUP).repeat(depth),
        vi(1, 9),
        key(15, END_GROUP).repeat(depth),
    ]
    .concat()
}

#[test]
fn groups_nested_beyond_reason_are_refused_with_their_path() {
    let deep = "<unknown field 15>";
    let expected_path = |prefix: &str| format!("{prefix}{}", format!(".{deep}").repeat(65));
    // 65 levels is already too many (prost alone would follow up to its recursion limit of 100,
    // so the outer levels are scanned even when it succeeds); 10 000 is far too many.
    for depth in [65, 99, 200, 10_000] {
        // In a plane: the 65th start tag is refused.
        let bytes = [ld(1, &nested_groups(depth)), ld(4, b"h")].concat();
        let header = 1 + varint(nested_groups(depth).len() as u64).len();
        assert_eq!(
            both_fail(&bytes),
            malformed(
                header + 64,
                &expected_path("XSpace.planes[0]"),
                "groups nested too deeply"
            ),
            "depth {depth}"
        );
        // At the top level.
        let bytes = [ld(4, b"h"), nested_groups(depth)].concat();
        assert_eq!(
            both_fail(&bytes),
            malformed(3 + 64, &expected_path("XSpace"), "groups nested too deeply"),
            "depth {depth}"
        );
    }
    // Deep in a stat, prost's own limit applies first; the walk still names the 65th group.
    let stat = [vi(1, 1), nested_groups(200)].concat();
    let space = Marked::body(stat, 2 + 64)
        .within(4, &vi(1, 1), &[]) // the event
        .within(4, &[], &[]) // the line
        .within(3, &[], &[]) // the plane
        .within(1, &[], &[]);
    assert_eq!(
        both_fail(&space.bytes),
        malformed(
            space.mark,
            &expected_path("XSpace.planes[0].lines[0].events[0].stats[0]"),
            "groups nested too deeply"
        )
    );
}

#[test]
fn groups_nested_within_reason_are_skipped() {
    for depth in [1, 10, 64] {
        let plane = [ld(2, b"/host:CPU"), nested_groups(depth), vi(1, 4)].concat();
        let bytes = [
            nested_groups(depth),
            ld(1, &plane),
            nested_groups(depth),
            ld(4, b"h"),
        ]
        .concat();
        let space = decode(bytes.clone()).unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        assert_eq!(space.planes[0].name, "/host:CPU");
        assert_eq!(space.planes[0].id, 4);
        assert_eq!(space.hostnames, vec!["h".to_owned()]);
        let streamed = XSpaceReader::new(&bytes[..], ReadOptions::default())
            .collect_space()
            .unwrap();
        assert_eq!(streamed, space);
    }
}

// ---------------------------------------------------------------------------------------------
// Size limits and untrusted lengths.

#[test]
fn ten_bytes_claiming_a_huge_plane_fail_fast() {
    let bytes = [vec![0x0a], varint(1 << 60)].concat();
    assert_eq!(bytes.len(), 10);
    let started = std::time::Instant::now();

    let e = decode(bytes.clone()).unwrap_err();
    assert_eq!(got(&e), truncated(10, "XSpace.planes[0]", 1 << 60));
    assert!(e.is_truncation());

    // The streaming reader refuses the plane by its declared size, before reading it.
    let (_, e) = stream(&bytes, ReadOptions::default());
    let e = e.unwrap();
    assert_eq!(
        got(&e),
        Got::TooLarge {
            what: "XSpace.planes[0]".into(),
            offset: 10,
            size: 1 << 60,
            limit: DEFAULT_MAX_SIZE
        }
    );
    assert!(!e.is_truncation());
    assert!(e.to_string().contains("at byte 10"), "{e}");

    // With no limit at all, the reader finds the bytes missing instead of reserving them.
    let (_, e) = stream(&bytes, ReadOptions::with_max_size(u64::MAX));
    assert_eq!(got(&e.unwrap()), truncated(10, "XSpace.planes[0]", 1 << 60));

    // Whole reads too.
    let e = read(&bytes[..], ReadOptions::with_max_size(u64::MAX)).unwrap_err();
    assert_eq!(got(&e), truncated(10, "XSpace.planes[0]", 1 << 60));

    // Lengths beyond usize and u63 as well, nested too.
    for len in [u64::MAX, 1 << 63, (1 << 32) + 1] {
        let bytes = [vec![0x22], varint(len)].concat();
        let expected = truncated(bytes.len(), "XSpace.hostnames[0]", len);
        assert_eq!(got(&decode(bytes.clone()).unwrap_err()), expected);
        let (_, e) = stream(&bytes, ReadOptions::with_max_size(u64::MAX));
        assert_eq!(got(&e.unwrap()), expected);
        let bytes = [ld(1, &[key(3, LEN), varint(len)].concat()), ld(4, b"h")].concat();
        let e = both_fail(&bytes);
        assert_eq!(
            e,
            malformed(
                2 + key(3, LEN).len() + varint(len).len(),
                "XSpace.planes[0].lines[0]",
                &format!("field of {len} bytes runs past the end of the enclosing message")
            )
        );
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// The process's peak virtual memory in bytes (Linux), for checking that nothing reserves a
/// declared size.
fn peak_virtual_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmPeak:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[test]
fn a_declared_gigabyte_is_never_reserved() {
    // 2 GiB is small enough for an allocator to grant, so only the peak shows a reservation.
    let claimed: u64 = 2 << 30;
    let bytes = [vec![0x0a], varint(claimed), vec![0x08, 0x01]].concat();
    let Some(before) = peak_virtual_memory() else {
        eprintln!("no /proc/self/status; skipped");
        return;
    };
    let no_limit = ReadOptions::with_max_size(u64::MAX);
    assert!(
        decode_with(bytes.clone(), no_limit)
            .unwrap_err()
            .is_truncation()
    );
    let (_, e) = stream(&bytes, no_limit);
    assert_eq!(
        got(&e.unwrap()),
        truncated(bytes.len(), "XSpace.planes[0]", claimed - 2)
    );
    assert!(read(&bytes[..], no_limit).unwrap_err().is_truncation());
    // A hostname and an unknown field claiming as much.
    let (_, e) = stream(&[vec![0x22], varint(claimed)].concat(), no_limit);
    assert!(e.unwrap().is_truncation());
    let (_, e) = stream(&[key(9, LEN), varint(claimed)].concat(), no_limit);
    assert!(e.unwrap().is_truncation());
    let after = peak_virtual_memory().unwrap();
    assert!(
        after.saturating_sub(before) < claimed / 4,
        "peak virtual memory grew by {} bytes",
        after - before
    );
}

#[test]
fn planes_over_the_limit_are_refused_by_the_stream() {
    let small = ld(2, b"/host:CPU");
    let big = ld(2, &[b'x'; 300]);
    let bytes = [ld(1, &small), ld(4, b"h"), ld(1, &big)].concat();
    let limit = ReadOptions::with_max_size(100);
    let (items, e) = stream(&bytes, limit);
    assert_eq!(items.len(), 2, "the planes before the big one are yielded");
    assert!(matches!(&items[0], SpaceItem::Plane(p) if p.name == "/host:CPU"));
    assert_eq!(items[1], SpaceItem::Hostname("h".into()));
    let body_offset = ld(1, &small).len() + 3 + 1 + 2;
    assert_eq!(
        got(&e.unwrap()),
        Got::TooLarge {
            what: "XSpace.planes[1]".into(),
            offset: body_offset as u64,
            size: big.len() as u64,
            limit: 100
        }
    );
    // Strings of the space are bounded too.
    let bytes = [ld(1, &small), ld(2, &[b'e'; 101])].concat();
    let (_, e) = stream(&bytes, limit);
    assert_eq!(
        got(&e.unwrap()),
        Got::TooLarge {
            what: "XSpace.errors[0]".into(),
            offset: (ld(1, &small).len() + 2) as u64,
            size: 101,
            limit: 100
        }
    );
    // A plane exactly at the limit is fine.
    let exact = ld(2, &[b'y'; 98]);
    assert_eq!(exact.len(), 100);
    let (items, e) = stream(&ld(1, &exact), limit);
    assert!(e.is_none(), "{e:?}");
    assert_eq!(items.len(), 1);
}

#[test]
fn whole_reads_over_the_limit_are_refused() {
    let bytes = encode(&rich_space());
    let n = bytes.len() as u64;
    let limit = ReadOptions::with_max_size(n - 1);
    let e = decode_with(bytes.clone(), limit).unwrap_err();
    assert_eq!(
        got(&e),
        Got::TooLarge {
            what: "XSpace".into(),
            offset: 0,
            size: n,
            limit: n - 1
        }
    );
    assert!(!e.is_truncation());
    // From a reader, the size is what arrived before the limit was passed.
    let e = read(&bytes[..], limit).unwrap_err();
    assert_eq!(
        got(&e),
        Got::TooLarge {
            what: "XSpace".into(),
            offset: 0,
            size: n,
            limit: n - 1
        }
    );
    // A reader that never ends is cut at the limit.
    let e = read(std::io::repeat(0x0a), ReadOptions::with_max_size(1000)).unwrap_err();
    assert!(
        matches!(
            got(&e),
            Got::TooLarge {
                size: 1001,
                limit: 1000,
                ..
            }
        ),
        "{e}"
    );
    // Exactly at the limit is fine.
    assert_eq!(
        decode_with(bytes.clone(), ReadOptions::with_max_size(n)).unwrap(),
        rich_space()
    );
    assert_eq!(
        read(&bytes[..], ReadOptions::with_max_size(n)).unwrap(),
        rich_space()
    );
}

#[test]
fn files_over_the_limit_are_refused_by_their_length() {
    let dir = std::env::temp_dir().join(format!("profkit-xplane-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.xplane.pb");
    let bytes = encode(&rich_space());
    std::fs::write(&path, &bytes).unwrap();
    let e = read_file(&path, ReadOptions::with_max_size(10)).unwrap_err();
    assert!(matches!(&e, Error::InFile(f) if f.path == path), "{e:?}");
    assert_eq!(
        got(&e),
        Got::TooLarge {
            what: "XSpace".into(),
            offset: 0,
            size: bytes.len() as u64,
            limit: 10
        }
    );
    // A truncated file is a truncation, through the file wrapper.
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = read_file(&path, ReadOptions::default()).unwrap_err();
    assert!(e.is_truncation(), "{e}");
    assert!(
        e.to_string().starts_with(&path.display().to_string()),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Readers that misbehave, and random damage.

/// Yields one byte per call and is interrupted before every byte.
struct Stuttering<'a> {
    bytes: &'a [u8],
    interrupt: bool,
}

impl Read for Stuttering<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.interrupt = !self.interrupt;
        if self.interrupt {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        match (self.bytes.split_first(), buf.first_mut()) {
            (Some((&b, rest)), Some(slot)) => {
                *slot = b;
                self.bytes = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

#[test]
fn interrupted_and_slow_readers_are_retried() {
    let space = rich_space();
    let bytes = encode(&space);
    let reader = Stuttering {
        bytes: &bytes,
        interrupt: false,
    };
    let mut stream = XSpaceReader::new(reader, ReadOptions::default());
    let mut collected = XSpace::default();
    for item in stream.by_ref() {
        match item.unwrap() {
            SpaceItem::Plane(p) => collected.planes.push(p),
            SpaceItem::Error(s) => collected.errors.push(s),
            SpaceItem::Warning(s) => collected.warnings.push(s),
            SpaceItem::Hostname(s) => collected.hostnames.push(s),
        }
    }
    assert_eq!(collected, space);
    assert_eq!(stream.offset(), bytes.len() as u64);
    let reader = Stuttering {
        bytes: &bytes,
        interrupt: false,
    };
    assert_eq!(read(reader, ReadOptions::default()).unwrap(), space);
}

struct Failing;

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("disk on fire"))
    }
}

#[test]
fn reader_errors_are_io_errors() {
    let mut stream = XSpaceReader::new(Failing, ReadOptions::default());
    let e = stream.next().unwrap().unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e:?}");
    assert!(!e.is_truncation());
    assert!(stream.next().is_none());
    assert!(matches!(
        read(Failing, ReadOptions::default()),
        Err(Error::Io(_))
    ));
    // Failing in the middle of a plane.
    let bytes = encode(&rich_space());
    let e = XSpaceReader::new((&bytes[..20]).chain(Failing), ReadOptions::default())
        .collect_space()
        .unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e:?}");
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_damage_gives_the_same_located_error_from_both_readers() {
    let valid = encode(&rich_space());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let interesting = [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x07, 0x0a, 0x7f, 0x80, 0xff, 0xc3,
    ];
    let (mut failures, mut truncations) = (0, 0);
    for round in 0..4000 {
        let mut bytes = valid.clone();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(bytes.len());
            match rng.below(5) {
                0 => bytes[at] = interesting[rng.below(interesting.len())],
                1 => bytes[at] ^= 1 << rng.below(8),
                2 => bytes.insert(at, interesting[rng.below(interesting.len())]),
                3 => {
                    bytes.remove(at);
                }
                _ => bytes.truncate(at),
            }
            if bytes.is_empty() {
                break;
            }
        }
        let whole = decode(bytes.clone());
        let (_, streamed) = stream(&bytes, ReadOptions::default());
        match (whole, streamed) {
            (Ok(space), None) => {
                let collected = XSpaceReader::new(&bytes[..], ReadOptions::default())
                    .collect_space()
                    .unwrap();
                assert_eq!(collected, space, "round {round}");
            }
            (Err(a), Some(b)) => {
                failures += 1;
                truncations += usize::from(a.is_truncation());
                assert_eq!(got(&a), got(&b), "round {round}: {bytes:02x?}");
                match got(&a) {
                    Got::Malformed { offset, reason, .. } => {
                        assert!(
                            !reason.contains("rejected by the protobuf decoder"),
                            "round {round}: {a}"
                        );
                        assert!(offset <= bytes.len() as u64);
                    }
                    Got::Truncated { offset, .. } => assert_eq!(offset, bytes.len() as u64),
                    other => panic!("round {round}: {other:?}"),
                }
            }
            (a, b) => panic!("round {round}: decode gave {a:?}, the stream {b:?}; {bytes:02x?}"),
        }
    }
    assert!(
        failures > 1000 && truncations > 100,
        "{failures} failures, {truncations} truncations"
    );
}

#[test]
fn groups_nested_too_deep_inside_an_event_are_refused_by_every_reader() {
    // prost follows groups to its recursion limit; the schema walk, the stream and the views stop
    // at 64 levels wherever the group is, so every reader refuses this event alike.
    let event = [vi(1, 1), nested_groups(70)].concat();
    let line = ld(4, &event);
    let plane = ld(3, &line);
    let bytes = ld(1, &plane);
    let got = both_fail(&bytes);
    assert!(
        matches!(&got, Got::Malformed { path, reason, .. }
            if path.starts_with("XSpace.planes[0].lines[0].events[0]") && reason.contains("groups")),
        "{got:?}"
    );
}

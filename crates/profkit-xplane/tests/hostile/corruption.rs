//! Corruption: lengths that run past their message, wrong wire types, bad UTF-8, bad varints.

use super::*;

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
pub(crate) fn nested_groups(depth: usize) -> Vec<u8> {
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

//! Spaces and bytes that break the format's rules: dangling ids, overlaps, overflows, unset
//! values, unknown fields and bytes that do not decode.

use profkit_xplane::constants;
use profkit_xplane::{
    XEvent, XEventMetadata, XPlane, XSpace, XStat, XStatMetadata, encode, x_event, x_stat,
};

use super::*;

/// Ids that resolve to nothing: event metadata, stat metadata, ref value, child.
pub(super) fn invalid_dangling_ids() -> XSpace {
    let mut p = base_plane();
    push_event(
        &mut p,
        XEvent {
            metadata_id: 99,
            data: Some(x_event::Data::OffsetPs(5 * US)),
            duration_ps: US,
            stats: vec![
                XStat {
                    metadata_id: 98,
                    value: Some(x_stat::Value::Int64Value(1)),
                },
                XStat {
                    metadata_id: 1,
                    value: Some(x_stat::Value::RefValue(97)),
                },
            ],
        },
    );
    if let Some(md) = p.event_metadata.get_mut(&1) {
        md.child_id.push(96);
    }
    p.stats.push(XStat {
        metadata_id: 95,
        value: Some(x_stat::Value::StrValue(
            "plane stat without metadata".into(),
        )),
    });
    space(vec![p])
}

/// Metadata map keys that differ from the ids inside.
pub(super) fn invalid_map_key_mismatch() -> XSpace {
    let mut p = base_plane();
    p.event_metadata.insert(
        5,
        XEventMetadata {
            id: 6,
            name: "keyed 5, says 6".into(),
            ..Default::default()
        },
    );
    p.stat_metadata.insert(
        7,
        XStatMetadata {
            id: 8,
            name: "keyed 7, says 8".into(),
            description: String::new(),
        },
    );
    space(vec![p])
}

/// Two events that overlap without nesting, and a third that overlaps the second.
pub(super) fn invalid_partial_overlap() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("overlapping").set_timestamp_ns(1_000);
        line.add_event("a")
            .set_offset_ps(0)
            .set_duration_ps(10 * US);
        line.add_event("b")
            .set_offset_ps(5 * US)
            .set_duration_ps(10 * US);
        line.add_event("c")
            .set_offset_ps(12 * US)
            .set_duration_ps(10 * US);
    });
    space(vec![host])
}

/// Epoch line timestamps: `timestamp_ns * 1000` does not fit in `i64` picoseconds.
pub(super) fn invalid_picosecond_overflow() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("epoch timestamps")
            .set_timestamp_ns(1_700_000_000_000_000_000);
        line.add_event("op").set_offset_ps(US).set_duration_ps(US);
        let mut edge = b.line(2);
        edge.set_name("offset overflow").set_timestamp_ns(1_000);
        edge.add_event("late")
            .set_offset_ps(i64::MAX - 10)
            .set_duration_ps(US);
    });
    space(vec![host])
}

/// Stats with no value set, on the plane, on event metadata and on an event.
pub(super) fn invalid_unset_stat_value() -> XSpace {
    let mut p = base_plane();
    let unset = |metadata_id| XStat {
        metadata_id,
        value: None,
    };
    p.stats.push(unset(1));
    if let Some(md) = p.event_metadata.get_mut(&1) {
        md.stats.push(unset(1));
    }
    if let Some(event) = p.lines.first_mut().and_then(|l| l.events.first_mut()) {
        event.stats.push(unset(1));
    }
    space(vec![p])
}

/// A negative duration and a negative occurrence count.
pub(super) fn invalid_negative_values() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("negative").set_timestamp_ns(1_000);
        line.add_event("backwards")
            .set_offset_ps(5 * US)
            .set_duration_ps(-US);
        line.add_event("negative_count")
            .set_num_occurrences(-2)
            .set_duration_ps(US);
    });
    space(vec![host])
}

// Raw protobuf, for the cases no message can express.

pub(super) const VARINT: u64 = 0;
pub(super) const LEN: u64 = 2;

pub(super) fn varint(mut value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
    out
}

pub(super) fn tag(field: u64, wire_type: u64) -> Vec<u8> {
    varint(field << 3 | wire_type)
}

pub(super) fn varint_field(field: u64, value: u64) -> Vec<u8> {
    [tag(field, VARINT), varint(value)].concat()
}

pub(super) fn len_field(field: u64, body: &[u8]) -> Vec<u8> {
    [tag(field, LEN), varint(body.len() as u64), body.to_vec()].concat()
}

/// Fields the schema does not have (and the reserved XLine fields 5 to 8) at every level: the
/// reader skips them, so the decoded space is the one without them.
pub(super) fn unknown_fields() -> Vec<u8> {
    let mut p = base_plane();
    let line = p.lines.remove(0);
    let line_bytes = [
        encode_line(&line),
        varint_field(5, 1),
        len_field(6, b"reserved"),
        varint_field(7, 3),
        [tag(8, 1), 8_u64.to_le_bytes().to_vec()].concat(),
    ]
    .concat();
    let plane_bytes = [
        encode_plane(&p),
        len_field(3, &line_bytes),
        varint_field(99, 12345),
        // A group (wire types 3 and 4) holding a varint.
        [tag(100, 3), varint_field(1, 1), tag(100, 4)].concat(),
        [tag(101, 5), vec![1, 2, 3, 4]].concat(),
    ]
    .concat();
    [
        len_field(1, &plane_bytes),
        len_field(4, b"unknownfields"),
        len_field(15, b"an unknown length-delimited field"),
        varint_field(2047, u64::MAX),
    ]
    .concat()
}

pub(super) fn encode_plane(plane: &XPlane) -> Vec<u8> {
    // An XSpace holding only this plane is `planes` (field 1) around the plane's encoding.
    let space = space(vec![plane.clone()]);
    strip_len_field(&encode(&space))
}

pub(super) fn encode_line(line: &profkit_xplane::XLine) -> Vec<u8> {
    let plane = XPlane {
        lines: vec![line.clone()],
        ..Default::default()
    };
    // The plane's encoding is just `lines` (field 3) around the line's encoding.
    strip_len_field(&encode_plane(&plane))
}

/// The body of a message that is a single length-delimited field with a one-byte tag.
pub(super) fn strip_len_field(bytes: &[u8]) -> Vec<u8> {
    // Skip the tag, then the length's varint: every byte but the last has the high bit set.
    let length_bytes = bytes.iter().skip(1).take_while(|&&b| b & 0x80 != 0).count() + 1;
    bytes.get(1 + length_bytes..).unwrap_or_default().to_vec()
}

/// Inputs the decoder must reject, each with a distinct error.
pub(super) fn error_cases() -> Vec<Case> {
    let valid = encode(&all_fields());
    let truncated = valid
        .get(..valid.len() * 3 / 5)
        .unwrap_or_default()
        .to_vec();

    // A plane (id 1) then a tag whose varint never ends.
    let truncated_varint = [len_field(1, &varint_field(1, 1)), vec![0x80]].concat();

    // The line inside the plane declares more bytes than the plane has; a hostname follows, so
    // this is corruption, not a cut-short file.
    let line = [varint_field(1, 1), len_field(2, b"main")].concat();
    let mut plane = varint_field(1, 1);
    plane.extend(tag(3, LEN));
    plane.extend(varint(line.len() as u64 + 20));
    plane.extend(&line);
    let length_past_end = [len_field(1, &plane), len_field(4, b"host")].concat();

    // XPlane.name (a string) written as a varint.
    let wrong_wire_type = len_field(1, &[varint_field(1, 1), varint_field(2, 5)].concat());

    // A stat's str_value deep in the space with bytes that are not UTF-8.
    let mut bad_utf8_space = space(vec![plane_with_str_stat("BAD?UTF8")]);
    bad_utf8_space.hostnames.push("host".into());
    let bad_utf8 = replace(&encode(&bad_utf8_space), b"BAD?UTF8", b"BAD\xff\xfeUT8");

    // XPlane.id as an 11-byte varint.
    let too_long = [len_field(
        1,
        &[tag(1, VARINT), vec![0xff; 10], vec![0x01]].concat(),
    )]
    .concat();

    // An unknown field with wire type 6, which does not exist.
    let invalid_wire_type = [len_field(4, b"host"), tag(9, 6), vec![0; 4]].concat();

    vec![
        Case {
            name: "error-truncated",
            input: truncated,
        },
        Case {
            name: "error-truncated-varint",
            input: truncated_varint,
        },
        Case {
            name: "error-length-past-end",
            input: length_past_end,
        },
        Case {
            name: "error-wrong-wire-type",
            input: wrong_wire_type,
        },
        Case {
            name: "error-bad-utf8",
            input: bad_utf8,
        },
        Case {
            name: "error-varint-too-long",
            input: too_long,
        },
        Case {
            name: "error-invalid-wire-type",
            input: invalid_wire_type,
        },
    ]
}

pub(super) fn plane_with_str_stat(value: &str) -> XPlane {
    plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("main").set_timestamp_ns(1_000);
        line.add_event("first").set_duration_ps(US);
        line.add_event("second")
            .set_offset_ps(2 * US)
            .set_duration_ps(US)
            .add_stat("fine", "ok")
            .add_stat("broken", value);
    })
}

/// `bytes` with the first occurrence of `from` replaced by `to` (of the same length).
pub(super) fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if let Some(at) = bytes.windows(from.len()).position(|w| w == from) {
        out.splice(at..at + from.len(), to.iter().copied());
    }
    out
}

//! `XPlaneView::normalise` gives `encode_plane(decode_plane(bytes))` on every input, copying what
//! is already canonical and only that.

use std::collections::BTreeMap;

use profkit_xplane::xview::{Normalised, XPlaneView};
use profkit_xplane::{
    XEvent, XEventMetadata, XLine, XPlane, XSpaceView, XStat, XStatMetadata, decode_plane,
    encode_plane, x_event, x_stat,
};

/// Normalises `bytes` (one XPlane) and checks the result against decoding and encoding: the same
/// bytes, or the same error. Returns how it was done (`None` on an error).
fn check(bytes: &[u8]) -> Option<Normalised> {
    let expected = decode_plane(bytes.to_vec()).map(|p| encode_plane(&p));
    let mut out = vec![0xff; 3]; // cleared by `normalise`
    let got = XPlaneView::new(bytes).and_then(|view| {
        let how = view.normalise(&mut out)?;
        Ok((
            how,
            match how {
                Normalised::Canonical => {
                    assert!(out.is_empty(), "a canonical plane wrote to the buffer");
                    bytes.to_vec()
                }
                Normalised::Rewritten { .. } => out.clone(),
            },
        ))
    });
    // Written as an element of `XSpace.planes` without a buffer for the plane: the same bytes
    // under their key and length, or the same error with nothing written.
    let mut written = Vec::new();
    let streamed = XPlaneView::new(bytes).and_then(|view| view.write_normalised(&mut written));
    match (&expected, &streamed) {
        (Ok(expected), Ok(_)) => {
            let mut element = vec![0x0a];
            element.extend(varint(expected.len() as u64));
            element.extend_from_slice(expected);
            assert_eq!(written, element, "written normalised bytes differ");
        }
        (Err(expected), Err(got)) => {
            assert_eq!(format!("{got:?}"), format!("{expected:?}"));
            assert!(
                written.is_empty(),
                "a plane that does not decode was written"
            );
        }
        (expected, got) => panic!("decode gives {expected:?}, write_normalised {got:?}"),
    }
    match (expected, got) {
        (Ok(expected), Ok((how, got))) => {
            assert_eq!(got, expected, "normalised bytes differ ({how:?})");
            assert_eq!(streamed.ok(), Some(how));
            Some(how)
        }
        (Err(expected), Err(got)) => {
            assert_eq!(format!("{got:?}"), format!("{expected:?}"));
            None
        }
        (expected, got) => panic!("decode gives {expected:?}, normalise {got:?}"),
    }
}

// A few wire-format pieces, to write non-canonical encodings by hand.

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// Field `number`, a varint.
fn int(number: u64, v: u64) -> Vec<u8> {
    [varint(number << 3), varint(v)].concat()
}

/// Field `number`, length-delimited.
fn len(number: u64, body: &[u8]) -> Vec<u8> {
    [
        varint((number << 3) | 2),
        varint(body.len() as u64),
        body.to_vec(),
    ]
    .concat()
}

/// A canonical stat: metadata id 2, an int64 value.
fn stat() -> Vec<u8> {
    [int(1, 2), int(4, 7)].concat()
}

/// A canonical event with `stats`.
fn event_with(stats: &[Vec<u8>]) -> Vec<u8> {
    let mut e = [int(1, 1), int(2, 1_000), int(3, 500)].concat();
    for s in stats {
        e.extend(len(4, s));
    }
    e
}

fn event() -> Vec<u8> {
    event_with(&[stat(), stat()])
}

/// A canonical line with `events`.
fn line_with(events: &[Vec<u8>]) -> Vec<u8> {
    let mut l = [int(1, 5), len(2, b"thread"), int(3, 1_000_000)].concat();
    for e in events {
        l.extend(len(4, e));
    }
    l.extend(int(9, 77));
    l.extend(int(10, 6));
    l.extend(len(11, b"Thread"));
    l
}

fn line() -> Vec<u8> {
    line_with(&[event(), event()])
}

fn event_md_entry(key: u64, name: &str) -> Vec<u8> {
    let value = [int(1, key), len(2, name.as_bytes()), len(6, &[3, 4])].concat();
    len(4, &[int(1, key), len(2, &value)].concat())
}

fn stat_md_entry(key: u64, name: &str) -> Vec<u8> {
    let value = [int(1, key), len(2, name.as_bytes())].concat();
    len(5, &[int(1, key), len(2, &value)].concat())
}

/// A canonical plane with `lines`, and the given metadata entries after them.
fn plane_with(lines: &[Vec<u8>], metadata: &[Vec<u8>]) -> Vec<u8> {
    let mut p = [int(1, 9), len(2, b"/host:CPU")].concat();
    for l in lines {
        p.extend(len(3, l));
    }
    for m in metadata {
        p.extend(m);
    }
    p.extend(len(6, &stat()));
    p
}

fn metadata() -> Vec<Vec<u8>> {
    vec![
        event_md_entry(1, "op"),
        event_md_entry(2, "step"),
        stat_md_entry(2, "flops"),
    ]
}

fn plane_of_lines(lines: &[Vec<u8>]) -> Vec<u8> {
    plane_with(lines, &metadata())
}

fn rewritten(lines_copied: usize, lines_encoded: usize) -> Option<Normalised> {
    Some(Normalised::Rewritten {
        lines_copied,
        lines_encoded,
    })
}

#[test]
fn hand_made_canonical_plane_is_copied() {
    let plane = plane_of_lines(&[line(), line(), line()]);
    assert_eq!(encode_plane(&decode_plane(plane.clone()).unwrap()), plane);
    assert_eq!(check(&plane), Some(Normalised::Canonical));
    assert_eq!(check(&[]), Some(Normalised::Canonical));
}

/// Every kind of value the schema has, edge values included, encoded by `encode_plane`, is
/// recognised as canonical.
#[test]
fn encoded_planes_are_canonical() {
    let stats = |base: i64| {
        vec![
            XStat {
                metadata_id: base,
                value: Some(x_stat::Value::DoubleValue(-0.0)),
            },
            XStat {
                metadata_id: 0,
                value: Some(x_stat::Value::DoubleValue(f64::NAN)),
            },
            XStat {
                metadata_id: -1,
                value: Some(x_stat::Value::Uint64Value(0)),
            },
            XStat {
                metadata_id: i64::MAX,
                value: Some(x_stat::Value::Uint64Value(u64::MAX)),
            },
            XStat {
                metadata_id: 3,
                value: Some(x_stat::Value::Int64Value(i64::MIN)),
            },
            XStat {
                metadata_id: 3,
                value: Some(x_stat::Value::Int64Value(0)),
            },
            XStat {
                metadata_id: 4,
                value: Some(x_stat::Value::StrValue(String::new())),
            },
            XStat {
                metadata_id: 4,
                value: Some(x_stat::Value::StrValue("é\u{10ffff}".into())),
            },
            XStat {
                metadata_id: 5,
                value: Some(x_stat::Value::BytesValue(Vec::new().into())),
            },
            XStat {
                metadata_id: 5,
                value: Some(x_stat::Value::BytesValue(vec![0xff, 0].into())),
            },
            XStat {
                metadata_id: 6,
                value: Some(x_stat::Value::RefValue(0)),
            },
            XStat {
                metadata_id: 6,
                value: None,
            },
            XStat::default(),
        ]
    };
    let event = |data, duration_ps| XEvent {
        metadata_id: -3,
        data,
        duration_ps,
        stats: stats(1),
    };
    let lines = vec![
        XLine {
            id: -1,
            display_id: i64::MIN,
            name: "n".into(),
            display_name: "d".repeat(300),
            timestamp_ns: i64::MAX,
            duration_ps: 1,
            events: vec![
                event(None, 0),
                event(Some(x_event::Data::OffsetPs(0)), -1),
                event(Some(x_event::Data::NumOccurrences(0)), 1 << 40),
                event(Some(x_event::Data::NumOccurrences(-5)), 0),
                XEvent::default(),
            ],
        },
        XLine::default(),
    ];
    let event_metadata: BTreeMap<i64, XEventMetadata> = [
        (i64::MIN, XEventMetadata::default()),
        (
            -2,
            XEventMetadata {
                id: -2,
                name: "a".into(),
                display_name: "A".into(),
                metadata: vec![1, 2, 3].into(),
                stats: stats(2),
                child_id: vec![0, -1, 300],
            },
        ),
        (0, XEventMetadata::default()),
        (
            7,
            XEventMetadata {
                child_id: vec![0],
                ..Default::default()
            },
        ),
    ]
    .into();
    let stat_metadata: BTreeMap<i64, XStatMetadata> = [
        (0, XStatMetadata::default()),
        (
            1,
            XStatMetadata {
                id: 1,
                name: "s".into(),
                description: "d".into(),
            },
        ),
        (
            i64::MAX,
            XStatMetadata {
                description: "only".into(),
                ..Default::default()
            },
        ),
    ]
    .into();
    let plane = XPlane {
        id: -7,
        name: "/device:GPU:0".into(),
        lines,
        event_metadata,
        stat_metadata,
        stats: stats(9),
    };
    let bytes = encode_plane(&plane);
    assert_eq!(check(&bytes), Some(Normalised::Canonical));
    assert_eq!(
        check(&encode_plane(&XPlane::default())),
        Some(Normalised::Canonical)
    );
}

#[test]
fn unknown_field_in_the_plane_rewrites_it_and_copies_its_lines() {
    let mut plane = plane_of_lines(&[line(), line()]);
    plane.extend(int(15, 1));
    assert_eq!(check(&plane), rewritten(2, 0));
    // An unknown length-delimited field between the lines.
    let mut plane = [int(1, 9), len(3, &line()), len(12, b"x"), len(3, &line())].concat();
    plane.extend(metadata().concat());
    assert_eq!(check(&plane), rewritten(2, 0));
}

#[test]
fn unknown_field_in_an_event_or_a_stat_encodes_its_line_only() {
    let mut odd = event();
    odd.extend(int(6, 3));
    let plane = plane_of_lines(&[line(), line_with(&[event(), odd]), line()]);
    assert_eq!(check(&plane), rewritten(2, 1));
    let mut odd = stat();
    odd.extend(len(9, b"??"));
    let plane = plane_of_lines(&[line_with(&[event_with(&[odd])]), line()]);
    assert_eq!(check(&plane), rewritten(1, 1));
    // An unknown field in a line, and in a stat of the metadata.
    let mut odd = line();
    odd.extend(int(5, 0)); // reserved in XLine
    assert_eq!(check(&plane_of_lines(&[line(), odd])), rewritten(1, 1));
}

#[test]
fn fields_out_of_order_are_encoded_again() {
    // An event's duration before its metadata id.
    let odd = [int(3, 500), int(1, 1), len(4, &stat())].concat();
    let plane = plane_of_lines(&[line_with(&[event(), odd]), line()]);
    assert_eq!(check(&plane), rewritten(1, 1));
    // A line's display id before its name (the order of the .proto file, not of the numbers).
    let odd = [int(1, 5), int(10, 6), len(2, b"t"), len(4, &event())].concat();
    assert_eq!(check(&plane_of_lines(&[odd, line()])), rewritten(1, 1));
    // A stat's value before its metadata id.
    let odd = [int(4, 7), int(1, 2)].concat();
    let plane = plane_of_lines(&[line_with(&[event_with(&[odd])])]);
    assert_eq!(check(&plane), rewritten(0, 1));
    // The oneof's num_occurrences after the duration and stats (TensorFlow's C++ writes it there).
    let odd = [int(1, 1), int(3, 500), len(4, &stat()), int(5, 2)].concat();
    let plane = plane_of_lines(&[line_with(&[odd])]);
    assert_eq!(check(&plane), rewritten(0, 1));
    // The plane's stats before its metadata, its name after its lines.
    let plane = [
        int(1, 9),
        len(6, &stat()),
        len(3, &line()),
        metadata().concat(),
    ]
    .concat();
    assert_eq!(check(&plane), rewritten(1, 0));
    let plane = [len(3, &line()), len(2, b"/host:CPU")].concat();
    assert_eq!(check(&plane), rewritten(1, 0));
    // Stat metadata before event metadata.
    let md = metadata();
    let plane = plane_with(&[line()], &[md[2].clone(), md[0].clone(), md[1].clone()]);
    assert_eq!(check(&plane), rewritten(1, 0));
    // An entry's value before its key, an event metadata's display name before its bytes.
    let value = [int(1, 4), len(2, b"op")].concat();
    let entry = len(4, &[len(2, &value), int(1, 4)].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
    let value = [len(4, b"Op"), len(3, b"\x01")].concat();
    let entry = len(4, &[int(1, 4), len(2, &value)].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
}

#[test]
fn map_entries_out_of_key_order_or_repeated_are_encoded_again() {
    // TensorFlow's C++ writes its maps in hash order.
    let plane = plane_with(
        &[line()],
        &[
            event_md_entry(2, "step"),
            event_md_entry(1, "op"),
            stat_md_entry(2, "flops"),
        ],
    );
    assert_eq!(check(&plane), rewritten(1, 0));
    let plane = plane_with(&[line()], &[stat_md_entry(3, "b"), stat_md_entry(1, "a")]);
    assert_eq!(check(&plane), rewritten(1, 0));
    // The last of a repeated key wins.
    let plane = plane_with(
        &[line()],
        &[event_md_entry(1, "op"), event_md_entry(1, "other")],
    );
    assert_eq!(check(&plane), rewritten(1, 0));
    // An entry's value in two parts, merged.
    let entry = len(
        4,
        &[int(1, 4), len(2, &len(2, b"op")), len(2, &int(1, 4))].concat(),
    );
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
}

#[test]
fn non_minimal_varints_and_lengths_are_encoded_again() {
    // A duration of 500 in three bytes instead of two.
    let odd = [int(1, 1), vec![0x18, 0xf4, 0x83, 0x00]].concat();
    let plane = plane_of_lines(&[line_with(&[odd]), line()]);
    assert_eq!(check(&plane), rewritten(1, 1));
    // A stat's length as 0x84 0x00.
    let mut odd = int(1, 1);
    odd.extend([0x22, 0x84, 0x00]);
    odd.extend(stat());
    let plane = plane_of_lines(&[line(), line_with(&[odd])]);
    assert_eq!(check(&plane), rewritten(1, 1));
    // A line's length in two bytes: the line itself is canonical and copied, the plane is not.
    let body = line();
    let mut plane = [int(1, 9), len(2, b"p")].concat();
    plane.push(0x1a);
    plane.push((body.len() as u8) | 0x80);
    plane.push(0);
    plane.extend(&body);
    assert!(body.len() < 0x80);
    assert_eq!(check(&plane), rewritten(1, 0));
    // A map key of 1 in two bytes; a packed child id of 3 in two bytes.
    let value = [int(1, 1), len(2, b"op")].concat();
    let entry = len(4, &[vec![0x08, 0x81, 0x00], len(2, &value)].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
    let value = [int(1, 1), len(6, &[0x83, 0x00])].concat();
    let entry = len(4, &[int(1, 1), len(2, &value)].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
    // A tag in two bytes (field 1 of an event as 0x88 0x00).
    let odd = [vec![0x88, 0x00, 0x01], int(3, 5)].concat();
    let plane = plane_of_lines(&[line_with(&[odd])]);
    check(&plane);
}

#[test]
fn unpacked_or_split_repeated_scalars_are_encoded_again() {
    let value = [int(1, 1), int(6, 3), int(6, 4)].concat();
    let entry = len(4, &[int(1, 1), len(2, &value)].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
    // Two packed runs; an empty packed run.
    let value = [int(1, 1), len(6, &[3]), len(6, &[4])].concat();
    let entry = len(4, &[int(1, 1), len(2, &value)].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
    let value = [int(1, 1), len(6, &[])].concat();
    let entry = len(4, &[int(1, 1), len(2, &value)].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
}

#[test]
fn default_values_written_are_encoded_again() {
    // An event's metadata id 0, written.
    let odd = [int(1, 0), int(3, 5)].concat();
    assert_eq!(
        check(&plane_of_lines(&[line_with(&[odd])])),
        rewritten(0, 1)
    );
    // A line's empty name, a plane's id 0, a plane's empty name.
    let odd = [int(1, 5), len(2, b"")].concat();
    assert_eq!(check(&plane_of_lines(&[odd, line()])), rewritten(1, 1));
    let plane = [int(1, 0), len(3, &line())].concat();
    assert_eq!(check(&plane), rewritten(1, 0));
    let plane = [len(2, b""), len(3, &line())].concat();
    assert_eq!(check(&plane), rewritten(1, 0));
    // A stat's metadata id 0; a stat metadata's empty description; a map key 0; an empty value.
    let odd = [int(1, 0), int(3, 1)].concat();
    let plane = plane_of_lines(&[line_with(&[event_with(&[odd])])]);
    assert_eq!(check(&plane), rewritten(0, 1));
    let value = [int(1, 1), len(3, b"")].concat();
    let entry = len(5, &[int(1, 1), len(2, &value)].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
    let entry = len(5, &[int(1, 0), len(2, &len(2, b"x"))].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
    let entry = len(4, &[int(1, 1), len(2, b"")].concat());
    assert_eq!(check(&plane_with(&[line()], &[entry])), rewritten(1, 0));
    // Zero in a oneof is not a default: it is written, and canonical.
    let zero = [int(1, 1), int(2, 0), len(4, &[int(3, 0)].concat())].concat();
    let plane = plane_of_lines(&[line_with(&[zero])]);
    assert_eq!(check(&plane), Some(Normalised::Canonical));
    // An empty entry (key 0, default value) is written too.
    let plane = plane_with(&[line()], &[len(4, &[])]);
    assert_eq!(check(&plane), Some(Normalised::Canonical));
}

#[test]
fn duplicated_fields_are_encoded_again() {
    // An event's duration twice: the last wins.
    let odd = [int(1, 1), int(3, 5), int(3, 6)].concat();
    assert_eq!(
        check(&plane_of_lines(&[line_with(&[odd])])),
        rewritten(0, 1)
    );
    // Both members of a oneof: the last wins.
    let odd = [int(1, 1), int(2, 5), int(5, 6)].concat();
    assert_eq!(
        check(&plane_of_lines(&[line_with(&[odd])])),
        rewritten(0, 1)
    );
    // A stat with two values.
    let odd = [int(1, 1), int(3, 5), len(5, b"s")].concat();
    let plane = plane_of_lines(&[line_with(&[event_with(&[odd])])]);
    assert_eq!(check(&plane), rewritten(0, 1));
    // A line's name twice; a plane's id twice.
    let odd = [len(2, b"a"), len(2, b"b")].concat();
    assert_eq!(check(&plane_of_lines(&[odd])), rewritten(0, 1));
    let plane = [int(1, 3), int(1, 4), len(3, &line())].concat();
    assert_eq!(check(&plane), rewritten(1, 0));
}

#[test]
fn damaged_planes_give_decodes_error() {
    let good = plane_of_lines(&[line(), line()]);
    for cut in 0..good.len() {
        check(&good[..cut]);
    }
    // Invalid UTF-8 in a line's name, in a stat's string, in the plane's name.
    let odd = [int(1, 5), len(2, b"\xff")].concat();
    assert_eq!(check(&plane_of_lines(&[line(), odd])), None);
    let odd = [int(1, 1), len(5, b"a\xc0")].concat();
    let plane = plane_of_lines(&[line_with(&[event_with(&[odd])])]);
    assert_eq!(check(&plane), None);
    assert_eq!(check(&len(2, b"\xe2\x82")), None);
    // A wrong wire type, a varint of eleven bytes, a varint whose tenth byte overflows.
    let odd = [int(1, 1), len(3, b"x")].concat();
    assert_eq!(check(&plane_of_lines(&[line_with(&[odd])])), None);
    let odd = [vec![0x08], vec![0xff; 10], vec![0x01]].concat();
    assert_eq!(check(&plane_of_lines(&[line_with(&[odd])])), None);
    let odd = [vec![0x08], vec![0xff; 9], vec![0x02]].concat();
    assert_eq!(check(&plane_of_lines(&[line_with(&[odd])])), None);
    // The largest ten-byte varint is valid, and canonical.
    let max = [vec![0x08], vec![0xff; 9], vec![0x01]].concat();
    assert_eq!(
        check(&plane_of_lines(&[line_with(&[max])])),
        Some(Normalised::Canonical)
    );
    // Bit flips of a canonical plane: whatever they make, the result is decode's.
    for at in 0..good.len() {
        for bit in 0..8 {
            let mut flipped = good.clone();
            flipped[at] ^= 1 << bit;
            check(&flipped);
        }
    }
}

/// Every plane of every conformance input (the real TensorFlow and JAX profiles among them) is
/// normalised to the bytes of decoding and encoding it, or fails with decoding's error.
#[test]
fn every_conformance_plane() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
    let (mut planes, mut canonical, mut copied, mut encoded) = (0, 0, 0, 0);
    // The real profiles (TensorFlow and JAX on CPU, GPU, ROCm, TPU): the rewritten planes of
    // these go through `write_normalised`'s piecewise writing as `convert --to xspace` writes them.
    let mut real = 0;
    let inputs = [
        ("xplane", "input.xplane.pb"),
        ("xplane-device", "input.xplane.pb.gz"),
    ]
    .into_iter()
    .flat_map(|(folder, file)| {
        std::fs::read_dir(root.join(folder))
            .unwrap()
            .map(move |entry| entry.unwrap().path().join(file))
    });
    for input in inputs {
        if !input.is_file() {
            continue;
        }
        let bytes = profkit_xplane::xview::read_file_bytes(&input, Default::default()).unwrap();
        let path = input.to_string_lossy();
        if path.contains("/real-") || path.contains("xplane-device") {
            real += 1;
        }
        let Ok(view) = XSpaceView::new(&bytes) else {
            continue;
        };
        for plane in view.planes() {
            let Ok(plane) = plane else { break };
            planes += 1;
            let how = check(plane.bytes());
            if std::env::var_os("NORMALISE_VERBOSE").is_some() {
                eprintln!("{} {:?} {how:?}", input.display(), plane.name());
            }
            match how {
                Some(Normalised::Canonical) => canonical += 1,
                Some(Normalised::Rewritten {
                    lines_copied,
                    lines_encoded,
                }) => {
                    copied += lines_copied;
                    encoded += lines_encoded;
                }
                None => {}
            }
        }
    }
    eprintln!(
        "{planes} planes: {canonical} canonical; in the others {copied} lines copied, {encoded} encoded"
    );
    assert!(planes >= 80, "only {planes} planes");
    assert!(real >= 12, "only {real} real profiles");
    assert!(canonical > 0 && copied > 0);
}

/// A line rewritten because of its own fields (the display name before the events, as the
/// real-shaped profile writes it) keeps its canonical events as they were and encodes the others
/// one at a time: runs of canonical events, events framed with a long key or length, events with
/// an unknown field or out-of-order fields, a damaged event among canonical ones.
#[test]
fn lines_rewritten_event_by_event() {
    let canonical = event();
    let unknown = [event(), int(15, 1)].concat();
    let reordered = [int(3, 500), int(1, 1), int(2, 1_000)].concat();
    let head = [
        int(1, 5),
        len(2, b"thread"),
        int(3, 1_000_000),
        len(11, b"T"),
    ]
    .concat();
    let framed = |events: &[Vec<u8>]| -> Vec<u8> {
        let mut l = head.clone();
        for e in events {
            l.extend(e);
        }
        l
    };
    // The event as a line's field: its key and length, canonical or not.
    let field = |e: &Vec<u8>| len(4, e);
    let long_length = |e: &Vec<u8>| {
        let mut f = vec![0x22, (e.len() as u8) | 0x80, 0x00];
        f.extend(e);
        f
    };
    let long_key = |e: &Vec<u8>| [vec![0xa2, 0x00], varint(e.len() as u64), e.clone()].concat();
    let cases: Vec<Vec<Vec<u8>>> = vec![
        vec![field(&canonical)],
        vec![field(&canonical), field(&canonical), field(&canonical)],
        vec![field(&canonical), field(&unknown), field(&canonical)],
        vec![field(&reordered), field(&canonical), field(&canonical)],
        vec![
            field(&canonical),
            long_length(&canonical),
            field(&canonical),
        ],
        vec![
            long_key(&canonical),
            field(&canonical),
            long_key(&canonical),
        ],
        vec![
            field(&canonical),
            int(9, 3),
            field(&canonical),
            field(&canonical),
        ],
    ];
    for events in &cases {
        let line = framed(events);
        assert_eq!(
            check(&plane_of_lines(std::slice::from_ref(&line))),
            rewritten(0, 1)
        );
        assert_eq!(
            check(&plane_of_lines(&[line_with(&[event()]), line])),
            rewritten(1, 1)
        );
    }
    // A damaged event (a stat cut short) after canonical ones: decoding's error, nothing written.
    let damaged = [event(), vec![0x22, 0x05, 0x08]].concat();
    let line = framed(&[field(&canonical), field(&damaged), field(&canonical)]);
    assert_eq!(check(&plane_of_lines(&[line])), None);
}

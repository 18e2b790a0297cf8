//! Reading and writing whole spaces (bytes, files, any `Read`/`Write`), the streaming reader on
//! valid input, and the exact wire layout of the schema (field numbers, set-but-zero oneofs).

use std::io::Read;

use bytes::Bytes;
use profkit_xplane::{
    Error, ReadOptions, SpaceItem, XEvent, XEventMetadata, XLine, XPlane, XSpace, XSpaceReader,
    XStat, XStatMetadata, decode, decode_plane, decode_with, encode, read, read_file, write,
    write_file, x_event, x_stat,
};
use prost::Message;

fn stat(metadata_id: i64, value: x_stat::Value) -> XStat {
    XStat {
        metadata_id,
        value: Some(value),
    }
}

/// A space written field by field, without the builder.
fn space() -> XSpace {
    let mut plane = XPlane {
        id: 3,
        name: "/device:GPU:0".into(),
        stats: vec![stat(1, x_stat::Value::Uint64Value(1_500))],
        ..Default::default()
    };
    plane.stat_metadata.insert(
        1,
        XStatMetadata {
            id: 1,
            name: "clock_rate".into(),
            description: "MHz".into(),
        },
    );
    plane.stat_metadata.insert(
        2,
        XStatMetadata {
            id: 2,
            name: "blob".into(),
            description: String::new(),
        },
    );
    plane.event_metadata.insert(
        7,
        XEventMetadata {
            id: 7,
            name: "kernel".into(),
            display_name: "Kernel".into(),
            metadata: Bytes::from_static(b"\x00opaque"),
            stats: vec![stat(1, x_stat::Value::DoubleValue(0.25))],
            child_id: vec![7, 8],
        },
    );
    plane.lines.push(XLine {
        id: 2,
        display_id: 9,
        name: "stream 2".into(),
        display_name: "Stream #2".into(),
        timestamp_ns: 1_000,
        duration_ps: 123_456,
        events: vec![
            XEvent {
                metadata_id: 7,
                data: Some(x_event::Data::OffsetPs(5)),
                duration_ps: 10,
                stats: vec![
                    stat(
                        2,
                        x_stat::Value::BytesValue(Bytes::from_static(&[0, 1, 2, 255])),
                    ),
                    stat(1, x_stat::Value::Int64Value(-1)),
                    stat(1, x_stat::Value::StrValue("s".into())),
                    stat(1, x_stat::Value::RefValue(2)),
                ],
            },
            XEvent {
                metadata_id: 7,
                data: Some(x_event::Data::NumOccurrences(3)),
                duration_ps: 30,
                stats: vec![],
            },
        ],
    });
    XSpace {
        planes: vec![plane, XPlane::default()],
        errors: vec!["an error".into()],
        warnings: vec!["a warning".into(), String::new()],
        hostnames: vec!["myhost".into()],
    }
}

#[test]
fn bytes_round_trip() {
    let space = space();
    let bytes = encode(&space);
    assert_eq!(decode(bytes.clone()).unwrap(), space);
    assert_eq!(decode(Bytes::from(bytes.clone())).unwrap(), space);
    // Our encoding is a fixed point.
    assert_eq!(encode(&decode(bytes.clone()).unwrap()), bytes);
    // An empty input is an empty space.
    assert_eq!(decode(Vec::new()).unwrap(), XSpace::default());
    assert!(encode(&XSpace::default()).is_empty());
}

#[test]
fn byte_fields_share_the_input_buffer() {
    let space = space();
    let input = Bytes::from(encode(&space));
    let decoded = decode(input.clone()).unwrap();
    let range = input.as_ptr() as usize..input.as_ptr() as usize + input.len();
    let metadata = &decoded.planes[0].event_metadata[&7].metadata;
    assert!(
        range.contains(&(metadata.as_ptr() as usize)),
        "metadata bytes were copied"
    );
    let Some(x_stat::Value::BytesValue(blob)) =
        &decoded.planes[0].lines[0].events[0].stats[0].value
    else {
        panic!("bytes value expected");
    };
    assert!(
        range.contains(&(blob.as_ptr() as usize)),
        "bytes_value was copied"
    );
}

#[test]
fn reader_and_writer_round_trip() {
    let space = space();
    let mut out = Vec::new();
    write(&space, &mut out).unwrap();
    assert_eq!(out, encode(&space));
    assert_eq!(read(&out[..], ReadOptions::default()).unwrap(), space);
    // A reader that hands out a few bytes at a time.
    let chunked = out.chunks(3).map(|c| c.to_vec()).collect::<Vec<_>>();
    let reader = chunked
        .iter()
        .fold(Box::new(std::io::empty()) as Box<dyn Read>, |r, c| {
            Box::new(r.chain(std::io::Cursor::new(c.clone())))
        });
    assert_eq!(read(reader, ReadOptions::default()).unwrap(), space);
}

struct BrokenWriter;

impl std::io::Write for BrokenWriter {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("no space left"))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn write_errors_are_reported() {
    let e = write(&space(), BrokenWriter).unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e:?}");
}

#[test]
fn files_round_trip_and_errors_name_the_file() {
    let dir = std::env::temp_dir().join(format!("profkit-xplane-codec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("myhost.xplane.pb");
    let space = space();
    write_file(&space, &path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), encode(&space));
    assert_eq!(read_file(&path, ReadOptions::default()).unwrap(), space);
    // Replacing a longer file leaves nothing of it behind.
    write_file(&XSpace::default(), &path).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);

    let missing = dir.join("missing.xplane.pb");
    let e = read_file(&missing, ReadOptions::default()).unwrap_err();
    match &e {
        Error::InFile(f) => {
            assert_eq!(f.path, missing);
            assert!(matches!(*f.source, Error::Io(_)));
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("missing.xplane.pb"), "{e}");
    assert!(!e.is_truncation());

    let unwritable = dir.join("no-such-dir").join("out.xplane.pb");
    let e = write_file(&space, &unwritable).unwrap_err();
    assert!(
        matches!(&e, Error::InFile(f) if f.path == unwritable),
        "{e:?}"
    );

    // A corrupt file: the error names the file, then the offset and path inside it.
    std::fs::write(&path, [0x0a, 0x02, 0x12, 0x05, 0x22, 0x00]).unwrap();
    let e = read_file(&path, ReadOptions::default()).unwrap_err();
    let text = e.to_string();
    assert!(text.starts_with(&path.display().to_string()), "{text}");
    assert!(
        text.contains("byte 4") && text.contains("XSpace.planes[0].name"),
        "{text}"
    );
    assert!(matches!(e.root(), Error::Malformed { offset: 4, .. }));
    // Wrapping twice keeps the first file.
    let twice = e.in_file("other");
    assert!(matches!(&twice, Error::InFile(f) if f.path == path));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn size_limit_options() {
    assert_eq!(
        ReadOptions::default().max_size,
        profkit_xplane::DEFAULT_MAX_SIZE
    );
    assert_eq!(profkit_xplane::DEFAULT_MAX_SIZE, 2 * 1024 * 1024 * 1024);
    assert_eq!(ReadOptions::with_max_size(5).max_size, 5);
    let bytes = encode(&space());
    assert!(
        decode_with(
            bytes.clone(),
            ReadOptions::with_max_size(bytes.len() as u64)
        )
        .is_ok()
    );
    assert!(matches!(
        decode_with(bytes.clone(), ReadOptions::with_max_size(0)),
        Err(Error::TooLarge(profkit_error::OverLimit { offset: 0, .. }))
    ));
    assert!(decode_with(Vec::new(), ReadOptions::with_max_size(0)).is_ok());
}

#[test]
fn decode_plane_reads_one_element_of_planes() {
    let space = space();
    let bytes = space.planes[0].encode_to_vec();
    assert_eq!(decode_plane(bytes).unwrap(), space.planes[0]);
    let e = decode_plane(vec![0x12, 0x01, 0xff]).unwrap_err();
    assert!(
        matches!(e.root(), Error::Malformed { offset: 2, path, .. } if path == "XPlane.name"),
        "{e:?}"
    );
}

#[test]
fn stream_yields_items_in_file_order() {
    let space = space();
    // Interleave the top-level fields by hand: hostname, plane, error, plane, warning, warning.
    let field = |n: u8, body: &[u8]| {
        let mut v = vec![n << 3 | 2];
        let mut len = body.len();
        loop {
            let b = (len & 0x7f) as u8;
            len >>= 7;
            v.push(if len == 0 { b } else { b | 0x80 });
            if len == 0 {
                break;
            }
        }
        v.extend_from_slice(body);
        v
    };
    let bytes = [
        field(4, b"myhost"),
        field(1, &space.planes[0].encode_to_vec()),
        field(2, b"an error"),
        field(1, &[]),
        field(3, b"a warning"),
        field(3, b""),
    ]
    .concat();
    let mut reader = XSpaceReader::new(&bytes[..], ReadOptions::default());
    assert_eq!(reader.offset(), 0);
    let items: Vec<SpaceItem> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(reader.offset(), bytes.len() as u64);
    assert_eq!(
        items,
        vec![
            SpaceItem::Hostname("myhost".into()),
            SpaceItem::Plane(space.planes[0].clone()),
            SpaceItem::Error("an error".into()),
            SpaceItem::Plane(XPlane::default()),
            SpaceItem::Warning("a warning".into()),
            SpaceItem::Warning(String::new()),
        ]
    );
    // Fused: nothing after the end.
    assert!(reader.next().is_none());
    // The whole-space helpers agree with decode.
    assert_eq!(
        XSpaceReader::new(&bytes[..], ReadOptions::default())
            .collect_space()
            .unwrap(),
        decode(bytes.clone()).unwrap()
    );
    assert_eq!(decode(bytes.clone()).unwrap(), space);
    let planes: Vec<XPlane> = XSpaceReader::new(&bytes[..], ReadOptions::default())
        .planes()
        .map(Result::unwrap)
        .collect();
    assert_eq!(planes, space.planes);
}

#[test]
fn stream_skips_unknown_top_level_fields() {
    // Field 9 as varint, 64-bit, 32-bit and length-delimited, around a hostname.
    let bytes = [
        &[0x48, 0x96, 0x01][..],
        &[0x49, 1, 2, 3, 4, 5, 6, 7, 8],
        &[0x22, 0x01, b'h'],
        &[0x4d, 1, 2, 3, 4],
        &[0x4a, 0x02, 0xff, 0xff],
    ]
    .concat();
    let mut reader = XSpaceReader::new(&bytes[..], ReadOptions::default());
    assert_eq!(
        reader.next().unwrap().unwrap(),
        SpaceItem::Hostname("h".into())
    );
    assert!(reader.next().is_none());
    assert_eq!(reader.offset(), bytes.len() as u64);
    assert_eq!(decode(bytes).unwrap().hostnames, vec!["h".to_owned()]);
}

/// Endless bytes of an XSpace made of `count` planes of `size` bytes each, produced on demand.
struct ManyPlanes {
    plane: Vec<u8>,
    left: usize,
    pos: usize,
}

impl Read for ManyPlanes {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.plane.len() {
            if self.left == 0 {
                return Ok(0);
            }
            self.left -= 1;
            self.pos = 0;
        }
        let n = buf.len().min(self.plane.len() - self.pos);
        buf[..n].copy_from_slice(&self.plane[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Peak resident memory of the process (Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

#[test]
fn stream_memory_is_bounded_by_the_largest_plane() {
    // 96 planes of 1 MiB each: holding them all would take 96 MiB.
    let mut plane = XPlane {
        name: "/host:CPU".into(),
        ..Default::default()
    };
    plane.stats.push(stat(
        1,
        x_stat::Value::BytesValue(Bytes::from(vec![0x5a; 1 << 20])),
    ));
    let field = XSpace {
        planes: vec![plane.clone()],
        ..Default::default()
    }
    .encode_to_vec();
    let count = 96;
    let Some(before) = peak_rss() else {
        eprintln!("no /proc/self/status; skipped");
        return;
    };
    let reader = ManyPlanes {
        plane: field.clone(),
        left: count,
        pos: field.len(),
    };
    let mut seen = 0;
    for p in XSpaceReader::new(reader, ReadOptions::with_max_size(2 << 20)).planes() {
        assert_eq!(p.unwrap().stats[0].metadata_id, 1);
        seen += 1;
    }
    assert_eq!(seen, count);
    let grown = peak_rss().unwrap().saturating_sub(before);
    // The other tests of this binary run alongside; they need far less than the 96 MiB.
    assert!(
        grown < 40 << 20,
        "peak resident memory grew by {} MiB",
        grown >> 20
    );
}

// ---------------------------------------------------------------------------------------------
// The exact wire layout, against the field table of the schema.

fn bytes_of(m: &impl Message) -> Vec<u8> {
    m.encode_to_vec()
}

#[test]
fn field_numbers_match_the_schema() {
    let space = XSpace {
        planes: vec![XPlane::default()],
        errors: vec!["e".into()],
        warnings: vec!["w".into()],
        hostnames: vec!["h".into()],
    };
    assert_eq!(
        bytes_of(&space),
        [
            0x0a, 0x00, 0x12, 0x01, b'e', 0x1a, 0x01, b'w', 0x22, 0x01, b'h'
        ]
    );

    let mut plane = XPlane {
        id: 1,
        name: "p".into(),
        lines: vec![XLine::default()],
        stats: vec![XStat::default()],
        ..Default::default()
    };
    plane.event_metadata.insert(2, XEventMetadata::default());
    plane.stat_metadata.insert(3, XStatMetadata::default());
    assert_eq!(
        bytes_of(&plane),
        [
            0x08, 0x01, 0x12, 0x01, b'p', 0x1a, 0x00, // id, name, lines
            0x22, 0x02, 0x08, 0x02, // event_metadata: key 2 (an empty value is left out)
            0x2a, 0x02, 0x08, 0x03, // stat_metadata: key 3
            0x32, 0x00, // stats
        ]
    );

    let line = XLine {
        id: 1,
        display_id: 2,
        name: "n".into(),
        display_name: "d".into(),
        timestamp_ns: 3,
        duration_ps: 4,
        events: vec![XEvent::default()],
    };
    assert_eq!(
        bytes_of(&line),
        [
            0x08, 0x01, 0x12, 0x01, b'n', 0x18, 0x03, 0x22, 0x00, 0x48, 0x04, 0x50, 0x02, 0x5a,
            0x01, b'd'
        ]
    );

    let event = XEvent {
        metadata_id: 1,
        data: Some(x_event::Data::OffsetPs(2)),
        duration_ps: 3,
        stats: vec![XStat::default()],
    };
    assert_eq!(
        bytes_of(&event),
        [0x08, 0x01, 0x10, 0x02, 0x18, 0x03, 0x22, 0x00]
    );
    let aggregated = XEvent {
        data: Some(x_event::Data::NumOccurrences(4)),
        ..Default::default()
    };
    assert_eq!(bytes_of(&aggregated), [0x28, 0x04]);

    let md = XEventMetadata {
        id: 1,
        name: "n".into(),
        display_name: "d".into(),
        metadata: Bytes::from_static(b"m"),
        stats: vec![XStat::default()],
        child_id: vec![5, 6],
    };
    assert_eq!(
        bytes_of(&md),
        [
            0x08, 0x01, 0x12, 0x01, b'n', 0x1a, 0x01, b'm', 0x22, 0x01, b'd', 0x2a, 0x00, 0x32,
            0x02, 0x05, 0x06
        ]
    );
    let smd = XStatMetadata {
        id: 1,
        name: "n".into(),
        description: "d".into(),
    };
    assert_eq!(
        bytes_of(&smd),
        [0x08, 0x01, 0x12, 0x01, b'n', 0x1a, 0x01, b'd']
    );
}

#[test]
fn set_oneof_members_are_encoded_even_when_zero() {
    let cases: Vec<(x_stat::Value, Vec<u8>)> = vec![
        (
            x_stat::Value::DoubleValue(0.0),
            vec![0x11, 0, 0, 0, 0, 0, 0, 0, 0],
        ),
        (x_stat::Value::Uint64Value(0), vec![0x18, 0x00]),
        (x_stat::Value::Int64Value(0), vec![0x20, 0x00]),
        (x_stat::Value::StrValue(String::new()), vec![0x2a, 0x00]),
        (x_stat::Value::BytesValue(Bytes::new()), vec![0x32, 0x00]),
        (x_stat::Value::RefValue(0), vec![0x38, 0x00]),
    ];
    for (value, tail) in cases {
        let s = stat(1, value.clone());
        let encoded = bytes_of(&s);
        assert_eq!(encoded, [&[0x08, 0x01][..], &tail].concat(), "{value:?}");
        // And it comes back set.
        let space = XSpace {
            planes: vec![XPlane {
                stats: vec![s.clone()],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(decode(encode(&space)).unwrap().planes[0].stats[0], s);
    }
    // An unset value is absent, and stays unset.
    let unset = XStat {
        metadata_id: 1,
        value: None,
    };
    assert_eq!(bytes_of(&unset), [0x08, 0x01]);
    // Event offset 0 and occurrence count 0 are kept apart from no data at all.
    let at_zero = XEvent {
        data: Some(x_event::Data::OffsetPs(0)),
        ..Default::default()
    };
    assert_eq!(bytes_of(&at_zero), [0x10, 0x00]);
    let never = XEvent {
        data: Some(x_event::Data::NumOccurrences(0)),
        ..Default::default()
    };
    assert_eq!(bytes_of(&never), [0x28, 0x00]);
    assert!(bytes_of(&XEvent::default()).is_empty());
    for event in [at_zero, never, XEvent::default()] {
        let line = XLine {
            events: vec![event.clone()],
            ..Default::default()
        };
        let space = XSpace {
            planes: vec![XPlane {
                lines: vec![line],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(
            decode(encode(&space)).unwrap().planes[0].lines[0].events[0],
            event
        );
    }
}

#[test]
fn maps_are_written_in_key_order_and_keys_kept_apart_from_ids() {
    let mut plane = XPlane::default();
    for key in [30, -5, 7] {
        plane.stat_metadata.insert(
            key,
            XStatMetadata {
                id: key + 1, // deliberately not the key
                name: format!("s{key}"),
                description: String::new(),
            },
        );
    }
    let bytes = plane.encode_to_vec();
    let decoded = decode_plane(bytes.clone()).unwrap();
    assert_eq!(decoded, plane);
    assert_eq!(decoded.stat_metadata[&-5].id, -4);
    // Keys in ascending order in the bytes: -5, 7, 30.
    let names: Vec<usize> = ["s-5", "s7", "s30"]
        .iter()
        .map(|n| {
            bytes
                .windows(n.len())
                .position(|w| w == n.as_bytes())
                .unwrap()
        })
        .collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
    // The same space encodes to the same bytes however its maps were filled.
    let mut reversed = XPlane::default();
    for (k, v) in plane.stat_metadata.iter().rev() {
        reversed.stat_metadata.insert(*k, v.clone());
    }
    assert_eq!(reversed.encode_to_vec(), bytes);
}

#[test]
fn negative_and_extreme_integers_round_trip() {
    let mut space = space();
    let line = &mut space.planes[0].lines[0];
    line.timestamp_ns = i64::MIN;
    line.duration_ps = i64::MAX;
    line.id = -1;
    line.events[0].data = Some(x_event::Data::OffsetPs(i64::MIN));
    line.events[0]
        .stats
        .push(stat(1, x_stat::Value::Uint64Value(u64::MAX)));
    line.events[0]
        .stats
        .push(stat(1, x_stat::Value::DoubleValue(f64::NAN)));
    let bytes = encode(&space);
    let back = decode(bytes.clone()).unwrap();
    // NaN != NaN, so compare bytes.
    assert_eq!(encode(&back), bytes);
    assert_eq!(back.planes[0].lines[0].timestamp_ns, i64::MIN);
    assert_eq!(
        back.planes[0].lines[0].events[0].offset_ps(),
        Some(i64::MIN)
    );
}

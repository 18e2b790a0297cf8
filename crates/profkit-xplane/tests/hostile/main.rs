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

mod corruption;
mod limits;
mod readers;
mod truncation;

//! Readers that misbehave, and random damage.

use super::*;
use crate::corruption::nested_groups;

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

use std::io::{Read, Write};

use flate2::Compression;
use flate2::write::GzEncoder;

use super::*;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn read(bytes: &[u8], limit: Limit) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    GzipReader::new(bytes, Options::new(limit))
        .read_to_end(&mut out)
        .map(|_| out)
        .map_err(|e| match Error::find(&e) {
            Some(_) => *e.into_inner().unwrap().downcast::<Error>().unwrap(),
            None => Error::Io(e),
        })
}

fn data() -> Vec<u8> {
    (0..100_000u32)
        .flat_map(|i| (i % 251).to_le_bytes())
        .collect()
}

#[test]
fn one_member_reads_back() {
    let data = data();
    assert_eq!(read(&gzip(&data), Limit::Unlimited).unwrap(), data);
    assert_eq!(read(&gzip(b""), Limit::Unlimited).unwrap(), b"");
}

#[test]
fn concatenated_members_read_as_one_stream() {
    let mut both = gzip(b"first ");
    both.extend(gzip(b""));
    both.extend(gzip(b"second"));
    assert_eq!(read(&both, Limit::Unlimited).unwrap(), b"first second");
}

#[test]
fn header_fields_are_skipped() {
    let body = gzip(b"payload");
    // FEXTRA, FNAME, FCOMMENT and FHCRC, then the deflate data of `body` (after its 10 bytes).
    let mut with = vec![0x1f, 0x8b, 8, 0x1e, 0, 0, 0, 0, 0, 3, 3, 0, 1, 2, 3];
    with.extend(b"name.json\0a comment\0");
    with.extend([0xaa, 0xbb]);
    with.extend(&body[10..]);
    assert_eq!(read(&with, Limit::Unlimited).unwrap(), b"payload");
}

#[test]
fn each_fault_has_its_own_error() {
    let good = gzip(&data());
    let n = good.len();
    // The CRC.
    let mut bad = good.clone();
    bad[n - 8] ^= 1;
    assert!(matches!(
        read(&bad, Limit::Unlimited),
        Err(Error::Crc { member: 1, .. })
    ));
    // ISIZE.
    let mut bad = good.clone();
    bad[n - 1] ^= 1;
    assert!(matches!(
        read(&bad, Limit::Unlimited),
        Err(Error::Size { member: 1, .. })
    ));
    // Trailing data, after the second member.
    let mut bad = good.clone();
    bad.extend(gzip(b"x"));
    bad.extend(b"garbage");
    let offset = (n + gzip(b"x").len()) as u64;
    match read(&bad, Limit::Unlimited) {
        Err(Error::Trailing {
            offset: at,
            members: 2,
        }) => assert_eq!(at, offset),
        other => panic!("{other:?}"),
    }
    // Trailing zeros are trailing data too.
    let mut bad = good.clone();
    bad.extend([0, 0, 0, 0]);
    assert!(matches!(
        read(&bad, Limit::Unlimited),
        Err(Error::Trailing { .. })
    ));
    // A lone 1f after the last member: a second member cut short.
    let mut bad = good.clone();
    bad.push(0x1f);
    assert!(matches!(
        read(&bad, Limit::Unlimited),
        Err(Error::Truncated {
            member: 2,
            part: "header",
            ..
        })
    ));
    // The method and the flags.
    let mut bad = good.clone();
    bad[2] = 7;
    assert!(matches!(
        read(&bad, Limit::Unlimited),
        Err(Error::Header { offset: 2, .. })
    ));
    let mut bad = good.clone();
    bad[3] = 0x80;
    assert!(matches!(
        read(&bad, Limit::Unlimited),
        Err(Error::Header { offset: 3, .. })
    ));
    // Damaged deflate data.
    let mut bad = good.clone();
    bad[10] = 0xff;
    assert!(matches!(
        read(&bad, Limit::Unlimited),
        Err(Error::Deflate { .. })
    ));
    // Not gzip at all.
    assert!(matches!(
        read(b"{}", Limit::Unlimited),
        Err(Error::Header { .. })
    ));
}

#[test]
fn every_truncation_is_an_error_never_a_panic() {
    let mut both = gzip(&data()[..5000]);
    both.extend(gzip(b"second"));
    for end in 0..both.len() {
        let cut = &both[..end];
        match read(cut, Limit::Unlimited) {
            Err(Error::Truncated { offset, .. }) => assert_eq!(offset, end as u64),
            // Right after the first member's trailer, the input is one whole member.
            Ok(out) => assert_eq!(end, both.len() - gzip(b"second").len(), "{}", out.len()),
            other => panic!("cut at {end}: {other:?}"),
        }
    }
}

#[test]
fn the_limit_stops_a_bomb() {
    let bomb = gzip(&vec![b'x'; 20 << 20]);
    let limit = Limit::Ratio {
        ratio: 32,
        floor: 1 << 20,
    };
    let mut reader = GzipReader::new(
        &bomb[..],
        Options {
            limit,
            compressed_len: Some(bomb.len() as u64),
            hint: "; raise it with --max-inflated".into(),
        },
    );
    let e = reader.read_to_end(&mut Vec::new()).unwrap_err();
    let expected = 32 * bomb.len() as u64 + (1 << 20);
    match Error::find(&e) {
        Some(Error::TooLarge { limit, hint, .. }) => {
            assert_eq!(*limit, expected);
            assert_eq!(hint, "; raise it with --max-inflated");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("--max-inflated"), "{e}");
    // Stopped within one read of the limit.
    assert!(reader.inflated() <= expected + (64 << 10));
    // A later read fails again, with the same message.
    let again = reader.read(&mut [0; 16]).unwrap_err();
    assert_eq!(again.to_string(), e.to_string());
    // Without the compressed size, the bytes read so far count: stopped all the same.
    assert!(matches!(read(&bomb, limit), Err(Error::TooLarge { .. })));
    // A fixed limit, and none.
    assert!(matches!(
        read(&bomb, Limit::Bytes(1000)),
        Err(Error::TooLarge { limit: 1000, .. })
    ));
    assert_eq!(read(&bomb, Limit::Unlimited).unwrap().len(), 20 << 20);
    // Data that compresses as real profiles do passes the default.
    let data = data();
    assert_eq!(read(&gzip(&data), Limit::default()).unwrap(), data);
}

//! The `gzip` target: `profkit_gzip::GzipReader` on any bytes, and on valid gzip streams of one
//! to three members that the input cuts, damages or extends.
//!
//! The input's first byte chooses: even, the rest is read as a gzip stream as it is; odd, the
//! rest is split into member payloads (at the bytes 0xff), compressed, and then one edit made by
//! the next bytes of the input: a cut, a flipped byte of a member's CRC or length, or bytes
//! appended. Properties:
//!
//! - no panic; reading one byte per `read` gives the same result (the same data, or an error
//!   with the same message); the data never passes the limit;
//! - what reads is what flate2's own multi-member decoder reads;
//! - an error of a cut stream is a truncation exactly at its end (or, cut between members, the
//!   data of the whole members); a flipped CRC byte is a CRC error, a flipped length byte a length
//!   error, of that member; a byte other than gzip's magic appended after the last member is
//!   trailing data, at the stream's end.

use std::io::{BufReader, Read, Write};

use flate2::Compression;
use flate2::write::GzEncoder;
use profkit_gzip::{Error, GzipReader, Limit, Options};

/// The limit the target reads under: small enough that random inputs reach it.
const LIMIT: u64 = 1 << 20;

fn read_all(bytes: &[u8], one_byte: bool) -> Result<Vec<u8>, String> {
    let options = Options::new(Limit::Bytes(LIMIT));
    let mut out = Vec::new();
    let result = if one_byte {
        GzipReader::new(BufReader::with_capacity(1, bytes), options).read_to_end(&mut out)
    } else {
        GzipReader::new(bytes, options).read_to_end(&mut out)
    };
    assert!(
        out.len() as u64 <= LIMIT,
        "{} bytes past the limit",
        out.len()
    );
    result.map(|_| out).map_err(|e| {
        match Error::find(&e) {
            Some(Error::TooLarge { limit, .. }) => assert_eq!(*limit, LIMIT),
            Some(Error::Truncated { offset, .. }) => assert_eq!(*offset, bytes.len() as u64),
            Some(
                Error::Header { offset, .. }
                | Error::Deflate { offset, .. }
                | Error::Crc { offset, .. }
                | Error::Size { offset, .. }
                | Error::Trailing { offset, .. },
            ) => assert!(*offset <= bytes.len() as u64, "{e}"),
            Some(other) => panic!("unexpected {other}"),
            None => panic!("not a gzip error: {e}"),
        }
        e.to_string()
    })
}

fn flate2_reads(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .ok()
        .map(|_| out)
}

/// Reads `bytes` both ways and checks they agree; the result.
fn check(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let whole = read_all(bytes, false);
    let one = read_all(bytes, true);
    assert_eq!(whole, one, "one byte per read differs");
    if let Ok(data) = &whole {
        assert_eq!(
            flate2_reads(bytes).as_ref(),
            Some(data),
            "flate2 reads otherwise"
        );
    }
    whole
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    let _ = e.write_all(data);
    e.finish().unwrap_or_default()
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        let _ = check(&[]);
        return;
    };
    if mode & 1 == 0 {
        let _ = check(rest);
        return;
    }
    let (edit, payload) = rest.split_at(rest.len().min(3));
    let members: Vec<&[u8]> = payload.splitn(3, |&b| b == 0xff).collect();
    let mut stream = Vec::new();
    let mut ends = Vec::new();
    for member in &members {
        stream.extend(gzip(member));
        ends.push(stream.len());
    }
    let whole: Vec<u8> = members.concat();
    assert_eq!(check(&stream), Ok(whole.clone()));
    let pick = |n: usize| {
        let k = usize::from(edit.get(1).copied().unwrap_or(0))
            | usize::from(edit.get(2).copied().unwrap_or(0)) << 8;
        k % n.max(1)
    };
    let member = pick(ends.len());
    let end = ends.get(member).copied().unwrap_or(0);
    match edit.first().copied().unwrap_or(0) % 4 {
        0 => {
            let cut = pick(stream.len());
            let result = check(stream.get(..cut).unwrap_or_default());
            if let Ok(data) = result {
                // Only at the end of a member (or of nothing).
                let whole_members = ends.iter().position(|&e| e == cut);
                assert!(cut == 0 || whole_members.is_some(), "a cut at {cut} reads");
                let upto = whole_members.map_or(0, |i| i + 1);
                assert_eq!(data, members.get(..upto).unwrap_or_default().concat());
            }
        }
        1 => {
            let mut bad = stream.clone();
            if let Some(b) = bad.get_mut(end - 8 + pick(4)) {
                *b ^= 0x01;
            }
            let e = check(&bad).expect_err("a flipped CRC reads");
            assert!(
                e.contains(&format!("bad gzip CRC in member {}", member + 1)),
                "{e}"
            );
        }
        2 => {
            let mut bad = stream.clone();
            if let Some(b) = bad.get_mut(end - 4 + pick(4)) {
                *b ^= 0x80;
            }
            let e = check(&bad).expect_err("a flipped length reads");
            assert!(
                e.contains(&format!("bad gzip length in member {}", member + 1)),
                "{e}"
            );
        }
        _ => {
            let mut bad = stream.clone();
            let extra = edit.get(1).copied().unwrap_or(0);
            if extra == 0x1f {
                return;
            }
            bad.push(extra);
            bad.extend_from_slice(payload.get(..pick(8)).unwrap_or_default());
            let e = check(&bad).expect_err("trailing data reads");
            assert!(
                e.contains(&format!(
                    "trailing data after the gzip stream at compressed byte {}",
                    stream.len()
                )),
                "{e}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    #[test]
    fn smoke_gzip_random() {
        smoke::run_random(171, smoke::scaled(300), 96, run);
        // Random bytes behind a gzip header.
        let mut rng = smoke::XorShift::new(172);
        for _ in 0..smoke::scaled(300) {
            let mut input = vec![0, 0x1f, 0x8b, 8, rng.below(32) as u8, 0, 0, 0, 0, 0, 3];
            let n = rng.below(64);
            input.extend(rng.bytes(n));
            run(&input);
        }
    }

    #[test]
    fn smoke_gzip_edits() {
        let mut rng = smoke::XorShift::new(173);
        for round in 0..smoke::scaled(300) {
            let n = rng.below(200);
            let mut input = vec![1, (round % 4) as u8];
            input.extend(rng.bytes(2));
            // Payloads that compress, and 0xff that splits them into members.
            input.extend((0..n).map(|_| [b'a', b'b', 0xff, rng.bytes(1)[0]][rng.below(4)]));
            run(&input);
        }
        for start in [
            &b"\x01\x00\x00\x00hello\xffworld"[..],
            b"\x01\x03\x41\x00\xff\xff",
        ] {
            run(start);
            for edited in smoke::havoc(start, 174, smoke::scaled(100)) {
                run(&edited);
            }
        }
        // A valid stream's every truncation and bit flip.
        let mut stream = gzip(b"first member ");
        stream.extend(gzip(b"second"));
        for cut in smoke::truncations(&stream) {
            let mut input = vec![0];
            input.extend_from_slice(cut);
            run(&input);
        }
        for flipped in smoke::bit_flips(&stream) {
            let mut input = vec![0];
            input.extend(flipped);
            run(&input);
        }
    }
}

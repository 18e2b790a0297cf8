//! The scanner against the visitors on events it takes and events it leaves to them.

use super::*;

fn cursor(text: &[u8]) -> Cursor<'_> {
    Cursor {
        text,
        at: 0,
        time: (0, 0),
        newlines: 0,
        last_newline: 0,
    }
}

/// The word-at-a-time string and whitespace scans end where the byte loops end, whatever
/// byte comes where (quotes, backslashes, control characters, UTF-8, the end of the text).
#[test]
fn words_scan_as_bytes_do() {
    let alphabet: &[&[u8]] = &[
        b"a",
        b" ",
        b"\"",
        b"\\",
        b"\x1f",
        b"\x7f",
        b"\xc3\xa9",
        b"\xff",
        b"\n",
        b"\t",
        b"\r",
        b"0",
        b"{",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..20_000 {
        let mut text = Vec::new();
        let len = (seed % 40) as usize;
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Mostly plain letters and spaces, as real text.
            let pick = (seed % 64) as usize;
            let piece: &[u8] = match alphabet.get(pick) {
                Some(p) => p,
                None if pick % 2 == 0 => b"x",
                None => b" ",
            };
            text.extend_from_slice(piece);
        }
        let mut quoted = vec![b'"'];
        quoted.extend_from_slice(&text);
        let (mut word, mut byte) = (cursor(&quoted), cursor(&quoted));
        assert_eq!(word.string(), byte.string_run(), "{quoted:?}");
        assert_eq!(word.at, byte.at, "{quoted:?}");
        let mut word = cursor(&text);
        let got = word.ws_run();
        let mut at = 0;
        let (mut newlines, mut last) = (0, 0);
        while let Some(&b) = text
            .get(at)
            .filter(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            if b == b'\n' {
                newlines += 1;
                last = at;
            }
            at += 1;
        }
        let want = text.get(at).copied().ok_or(Stop::More);
        assert_eq!((got, word.at), (want, at), "{text:?}");
        assert_eq!(
            (word.newlines, word.last_newline),
            (newlines, last),
            "{text:?}"
        );
    }
}

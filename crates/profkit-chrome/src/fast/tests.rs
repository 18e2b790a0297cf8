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

/// Reads `text` with `threads` threads and the scanning thread's text cut by `limits`.
fn read_cut(text: &[u8], threads: usize, limits: Limits) -> Result<crate::ChromeImport, String> {
    let mut options = crate::ChromeReadOptions::default().threads(threads);
    options.limits = limits;
    crate::read_chrome_with(text, options).map_err(|e| e.to_string())
}

/// The cuts tried: windows that end inside events, inside strings and between them, batches of
/// one event and more, and the default.
fn cuts() -> Vec<Limits> {
    let mut cuts = vec![Limits::default()];
    for (window, events, least) in [
        (1, 1, 0),
        (97, 1, 0),
        (200, 2, 16),
        (511, 3, 0),
        (4096, 1, 1024),
        (65_536, 7, 300),
    ] {
        for wait in [true, false] {
            cuts.push(Limits {
                window,
                events,
                least,
                wait,
            });
        }
    }
    cuts
}

/// Events with escaped quotes and brackets in strings, nested args, odd members and events the
/// scanner declines, in a trace of `len` bytes or more.
fn mixed_trace(len: usize) -> String {
    let shapes = [
        r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 8, "ts": 1712345678000.125, "dur": 3.5, "args": {"External id": 4, "grid": [64, 1, 1], "nested": {"a": [true, null, "x]}", 1e3, {}], "b": []}, "s": "te{x}t"}}"#,
        r#"{"ph": "X", "name": "q\"uo\"ted } ] {", "pid": 7, "tid": 8, "ts": 1712345678000.5, "dur": 1, "args": {"k\\": "v\\\"}", "arr": ["\"[", "]\""]}}"#,
        r#"{"ph": "s", "id": 17, "pid": 7, "tid": 8, "ts": 1712345678000.130, "cat": "ac2g", "name": "ac2g"}"#,
        r#"{"ph": "f", "id": 17, "pid": 0, "tid": 7, "ts": 1712345678000.140, "cat": "ac2g", "name": "ac2g", "bp": "e"}"#,
        r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1712345678000.140, "dur": 1, "args": {"correlation": 17, "device": 0}}"#,
        r#"{"ph": "B", "name": "é{", "pid": 1.5, "tid": 9223372036854775808, "ts": "1712345678001", "args": {"é": "ü"}}"#,
        r#"{"ph": "E", "pid": 1.5, "tid": 9223372036854775808, "ts": 1712345678002}"#,
        r#"{"ph": "e", "cat": "async", "name": "req", "id2": {"local": "0x1"}, "pid": 1, "tid": 1, "ts": 1712345678004}"#,
        r#"{"ph": "C", "name": "mem", "pid": 1, "ts": 1712345678005, "args": {"a": 1, "b": 2.5}}"#,
        r#"{"ph": "X", "name": "dup", "name": "dup2", "pid": 1, "tid": 2, "ts": 1712345678008, "dur": 0.001, "args": {"k": 1, "k": 2}, "other": {"deep": [[[[1]]]], "u": "\u0041"}}"#,
        r#"{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "w\"orker"}}"#,
        r#"{}"#,
    ];
    let mut text = String::from("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
    let mut k = 0usize;
    while text.len() < len {
        text.push_str(&" ".repeat(k % 5));
        text.push_str(shapes[k % shapes.len()]);
        text.push_str(if k % 3 == 0 { ",\n" } else { "," });
        k += 1;
    }
    text.push_str("{}]}\n");
    text
}

/// The scanning thread gives the import of one thread, wherever windows and batches cut the
/// events, and the same error for bad input.
#[test]
fn threads_read_as_one_thread() {
    let text = mixed_trace(40_000);
    let one = read_cut(text.as_bytes(), 1, Limits::default());
    assert!(one.is_ok(), "{:?}", one.as_ref().err());
    for limits in cuts() {
        for threads in [2, 5] {
            assert!(
                read_cut(text.as_bytes(), threads, limits) == one,
                "{threads} threads, {limits:?}"
            );
        }
    }
    // Bad input at several places: the same error (text, line, column) whatever the threads.
    let at = text.len() / 2;
    let at = at + text[at..].find("\"dur\": 3.5").unwrap();
    for (from, to) in [
        ("\"dur\": 3.5", "\"dur\": 3.5.1"),
        ("\"dur\": 3.5", "\"dur\": true"),
        ("\"dur\": 3.5", "\"dur\" 3.5"),
        ("\"dur\": 3.5", "\"dur\": 3.5}"),
        ("\"dur\": 3.5", "\"dur\": \"3.5"),
        ("\"dur\": 3.5", "\"dur\": [3.5"),
        ("\"dur\": 3.5", "\"dur\": 1e999999"),
        ("\"dur\": 3.5", "\"dur\": \"\\q\""),
    ] {
        let mut bad = text.clone();
        bad.replace_range(at..at + from.len(), to);
        let one = read_cut(bad.as_bytes(), 1, Limits::default());
        for limits in cuts() {
            assert_eq!(
                read_cut(bad.as_bytes(), 2, limits).err(),
                one.clone().err(),
                "{to}: {limits:?}"
            );
        }
    }
    // Truncated anywhere in the last events.
    for cut in (text.len() - 700..text.len()).step_by(37) {
        let short = &text.as_bytes()[..cut];
        let one = read_cut(short, 1, Limits::default());
        for limits in cuts() {
            assert!(read_cut(short, 2, limits) == one, "{cut}: {limits:?}");
        }
    }
}

/// A large trace through the default cut, the read buffer refilled under the windows, in
/// events that the scanner takes and declines.
#[test]
fn threads_read_a_large_trace_as_one_thread() {
    let text = mixed_trace(5 << 20);
    let one = read_cut(text.as_bytes(), 1, Limits::default());
    assert!(one.is_ok());
    let before = ahead::TAKEN.load(std::sync::atomic::Ordering::Relaxed);
    let waiting = Limits {
        wait: true,
        ..Limits::default()
    };
    assert!(read_cut(text.as_bytes(), 2, waiting) == one);
    let taken = ahead::TAKEN.load(std::sync::atomic::Ordering::Relaxed) - before;
    // Nearly every event is scanned ahead (those past the last window of a buffer are not).
    let events = one.as_ref().map_or(0, |i| i.events);
    assert!(taken > events / 2, "{taken} of {events}");
    let mut bad = text.clone().into_bytes();
    let at = bad.len() - 1000;
    bad[at] = 0xff;
    assert_eq!(
        read_cut(&bad, 2, Limits::default()).err(),
        read_cut(&bad, 1, Limits::default()).err()
    );
}

/// The extent of an object found by brackets and quotes alone.
#[test]
fn object_len_skips_strings() {
    assert_eq!(ahead::object_len(br#"{"a": "}\"]"}, {}"#), Some(13));
    assert_eq!(ahead::object_len(br#"{"a": [1, {"b": "\\"}]}x"#), Some(23));
    assert_eq!(ahead::object_len(br#"{"a": "}"#), None);
    assert_eq!(ahead::object_len(br#"{"a": [{}"#), None);
}

//! The Chrome importer on truncated and hostile input: errors name the JSON path, line and
//! column, and nothing panics, hangs or allocates without bound.

use profkit_chrome::Error;
use profkit_chrome::{chrome_to_xspace, read_chrome};

fn error(text: &[u8]) -> (String, u64, u64, String) {
    match chrome_to_xspace(text) {
        Err(Error::Json {
            path,
            line,
            column,
            reason,
        }) => (path, line, column, reason),
        Err(other) => panic!("not a Chrome error: {other}"),
        Ok(_) => panic!("read: {}", String::from_utf8_lossy(text)),
    }
}

const TRACE: &[u8] = br#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "G"}],
"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.5, "dur": 2, "args": {"grid": [1, 2, 3]}},
{"ph": "b", "cat": "c", "id": "0x1", "name": "a", "pid": 1, "tid": 1, "ts": 2},
{"ph": "e", "cat": "c", "id": "0x1", "name": "a", "pid": 1, "tid": 1, "ts": 3}
], "traceName": "t"}"#;

#[test]
fn every_truncation_is_an_error_at_the_end_or_reads() {
    for cut in 0..TRACE.len() {
        let text = &TRACE[..cut];
        if let Err(e) = chrome_to_xspace(text) {
            let Error::Json { line, column, .. } = &e else {
                panic!("{e}")
            };
            let lines = text.iter().filter(|b| **b == b'\n').count() as u64 + 1;
            assert!(*line >= 1 && *line <= lines && *column >= 1, "{cut}: {e}");
        }
    }
    // Cut inside the events: the path names the event being read.
    let cut = TRACE.windows(4).position(|w| w == b"\"dur").unwrap();
    let (path, line, _, reason) = error(&TRACE[..cut + 7]);
    assert_eq!((path.as_str(), line), ("traceEvents[0].dur", 3), "{reason}");
    assert!(reason.contains("ends"), "{reason}");
}

#[test]
fn errors_name_the_json_path() {
    let (path, _, _, reason) =
        error(br#"{"traceEvents": [{"ph": "X", "ts": 1}, {"ph": "X", "ts": 1, "dur": [1]}]}"#);
    assert_eq!(path, "traceEvents[1].dur", "{reason}");
    let (path, _, _, reason) = error(br#"{"traceEvents": [{"ph": 5}]}"#);
    assert_eq!(path, "traceEvents[0]", "{reason}");
    assert!(reason.contains("phase"), "{reason}");
    let (path, _, _, reason) = error(br#"{"traceEvents": [{"ph": "X"}]}"#);
    assert_eq!(path, "traceEvents[0]");
    assert!(reason.contains("\"ts\""), "{reason}");
    let (path, _, _, reason) = error(br#"{"traceEvents": [1]}"#);
    assert_eq!(path, "traceEvents[0]");
    assert!(reason.contains("object"), "{reason}");
    let (path, _, _, reason) = error(br#"{"other": {"a": [tru]}}"#);
    assert_eq!(path, "other.a[0]", "{reason}");
    let (path, _, _, reason) = error(br#"{"other": 1}"#);
    assert_eq!(path, "");
    assert!(reason.contains("no traceEvents"), "{reason}");
    let (path, _, _, reason) = error(br#"{"traceEvents": [{"ph": "s", "ts": 1}]}"#);
    assert_eq!(path, "traceEvents[0]");
    assert!(reason.contains("\"id\""), "{reason}");
    let (_, _, _, reason) = error(br#"{"traceEvents": [{"ph": "X", "ts": 1e400}]}"#);
    assert!(reason.contains("range"), "{reason}");
}

#[test]
fn hostile_inputs_are_bounded() {
    // Deep nesting stops at the reader's limit, with the path.
    let deep = format!(
        r#"{{"traceEvents": [{{"ph": "X", "ts": 1, "args": {{"x": {}}}}}]}}"#,
        "[".repeat(100_000)
    );
    let (path, _, _, reason) = error(deep.as_bytes());
    assert!(path.starts_with("traceEvents[0].args.x[0]"), "{path}");
    assert!(reason.contains("limit"), "{reason}");
    // A huge time span is refused, not overflowed.
    let (_, _, _, reason) =
        error(br#"{"traceEvents": [{"ph": "i", "ts": 0}, {"ph": "i", "ts": 1e30}]}"#);
    assert!(
        reason.contains("span") || reason.contains("range"),
        "{reason}"
    );
    // Many processes and threads stay linear (100k pids: a fraction of a second).
    let mut text = String::from("[");
    for i in 0..100_000 {
        text.push_str(&format!(
            r#"{{"ph": "X", "name": "e", "pid": {i}, "tid": {i}, "ts": {i}, "dur": 1}},"#
        ));
    }
    let import = chrome_to_xspace(text.as_bytes()).unwrap();
    assert_eq!(import.events, 100_000);
    // Warnings are capped per kind, with a count of the rest.
    let mut text = String::from("[");
    for i in 0..500 {
        text.push_str(&format!(r#"{{"ph": "E", "pid": 1, "tid": 1, "ts": {i}}},"#));
    }
    let import = chrome_to_xspace(text.as_bytes()).unwrap();
    assert!(import.warnings.len() <= 21, "{}", import.warnings.len());
    assert!(
        import.warnings.last().unwrap().contains("480 more"),
        "{:?}",
        import.warnings.last()
    );
}

#[test]
fn streaming_reads_what_the_whole_text_reads() {
    struct OneByte<'a>(&'a [u8]);
    impl std::io::Read for OneByte<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((&b, rest)), Some(slot)) => {
                    *slot = b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }
    let whole = chrome_to_xspace(TRACE).unwrap();
    let streamed = read_chrome(OneByte(TRACE)).unwrap();
    assert_eq!(whole, streamed);
    assert_eq!(whole.space.planes.len(), 3);
}

#[test]
fn invalid_utf8_in_a_string_is_an_error_where_it_is() {
    // Names, categories and arg values are looked up by their bytes before their UTF-8 is
    // checked: a string seen before reads, a new one that is not UTF-8 is an error at its path.
    for (text, at) in [
        (&b"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\xff\", \"ts\": 1}]}"[..], "traceEvents[0].name"),
        (&b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"\xc3\", \"ts\": 1}]}"[..], "traceEvents[0].cat"),
        (
            &b"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"k\", \"ts\": 1, \"args\": {\"v\": \"ok\"}},\n{\"ph\": \"X\", \"name\": \"k\", \"ts\": 2, \"args\": {\"v\": \"\xe2\x82\"}}]}"[..],
            "traceEvents[1].args.v",
        ),
    ] {
        let (path, _, _, reason) = error(text);
        assert_eq!(path, at, "{reason}");
        assert!(reason.contains("UTF-8"), "{reason}");
    }
    // Valid multi-byte strings, new and seen again, read.
    let text = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"µs ✓\", \"ts\": 1, \"args\": {\"v\": \"é\"}}, {\"ph\": \"X\", \"name\": \"µs ✓\", \"ts\": 2, \"args\": {\"v\": \"é\"}}]}";
    let import = chrome_to_xspace(text.as_bytes()).unwrap();
    assert_eq!(import.events, 2);
}

//! Tests of the reader's parts that are not public.

use crate::event::Item;
use crate::flows::partition_from;
use crate::time::{micros_to_ps, plain_micros_to_ps};
use crate::*;

#[test]
fn exact_microseconds() {
    let ps = |t: &str| micros_to_ps(t).map(|(v, _)| v);
    assert_eq!(
        ps("1795211085403342.685"),
        Some(1_795_211_085_403_342_685_000)
    );
    assert_eq!(ps("1.5e3"), Some(1_500_000_000));
    assert_eq!(ps("-2"), Some(-2_000_000));
    assert_eq!(ps("0.0000004"), Some(0));
    assert_eq!(ps("0.0000006"), Some(1));
    assert_eq!(micros_to_ps("12.345").map(|(_, d)| d), Some(3));
    assert_eq!(ps("1x"), None);
    // The plain form's fast path gives what the general path gives, or leaves it to it.
    let general = |t: &str| {
        let bytes = t.as_bytes();
        let mut text = String::from(t);
        // An exponent of zero sends the same number down the general path.
        if !bytes.contains(&b'e') {
            text.push_str("e0");
        }
        micros_to_ps(&text)
    };
    for t in [
        "0",
        "7",
        "-7",
        "-0",
        "007",
        "12.5",
        "1712345678000.123",
        "1712345678000.123456",
        "999999999999999999",
        "999999999999999999.999999",
        "-0.000001",
        "3.100",
    ] {
        assert_eq!(plain_micros_to_ps(t.as_bytes()), general(t), "{t}");
    }
    for t in [
        "1.",
        ".5",
        "1.2345678",
        "1e3",
        "1234567890123456789",
        "--1",
        "1.2.3",
        "",
        "-",
    ] {
        assert_eq!(plain_micros_to_ps(t.as_bytes()), None, "{t}");
    }
}

#[test]
fn errors_name_the_place() {
    let text = b"{\"traceEvents\": [\n{\"ph\": \"X\", \"ts\": \"soon\"}]}";
    let err = chrome_to_xspace(text).unwrap_err().to_string();
    assert!(
        err.contains("traceEvents[0].ts") && err.contains("line 2"),
        "{err}"
    );
}

#[test]
fn trace_events_anywhere() {
    let text = br#"{"deviceProperties": [{"id": 0, "name": "G", "numSms": 2}], "x": {"y": [1, {"z": null}]},
        "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2,
        "args": {"correlation": 5}}]}"#;
    assert_eq!(sniff_json(&text[..]), JsonShape::Chrome);
    let import = chrome_to_xspace(text).unwrap();
    assert!(import.kineto);
    let names: Vec<_> = import
        .space
        .planes
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["/host:CPU", "/device:GPU:0", "Task Environment"]);
    assert_eq!(
        sniff_json(&br#"{"a": 1, "b": [2]}"#[..]),
        JsonShape::Object(vec!["a".into(), "b".into()])
    );
    assert!(matches!(
        sniff_json(&b"{\"a\": "[..]),
        JsonShape::NotJson(_)
    ));
    assert_eq!(sniff_json(&b"[{\"ph\": \"X\""[..]), JsonShape::Chrome);
}

#[test]
fn partition_from_any_hint() {
    let items: Vec<Item> = [1, 2, 2, 3, 5, 5, 5, 8, 9]
        .iter()
        .map(|&t| Item {
            name: 0,
            len: 0,
            at: 0,
            start: t,
            end: t,
        })
        .collect();
    for n in 0..=items.len() {
        let items = &items[..n];
        for ts in 0..11 {
            for hint in 0..=n + 2 {
                assert_eq!(
                    partition_from(items, hint, |i| i.start <= ts),
                    items.partition_point(|i| i.start <= ts),
                    "{n} {ts} {hint}"
                );
                assert_eq!(
                    partition_from(items, hint, |i| i.start < ts),
                    items.partition_point(|i| i.start < ts),
                    "{n} {ts} {hint}"
                );
            }
        }
    }
}

/// The fast path reads what serde's visitors read, whatever the events look like and
/// wherever the read buffer cuts them, and leaves every malformed event to them, so that
/// errors are the same too.
#[test]
fn the_fast_path_reads_as_the_visitors() {
    let shapes = [
        r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 8, "ts": 1712345678000.125, "dur": 3.5, "args": {"External id": 4, "Sequence number": -2, "grid": [64, 1, 1], "block": [ 128 , 1,1 ], "ratio": 0.25, "big": 18446744073709551615, "neg0": -0, "nested": {"a": [true, false, null, "x", 1e3, {}], "b": []}, "s": "text", "n": null, "t": true}}"#,
        r#"{"ph": "s", "id": 17, "pid": 7, "tid": 8, "ts": 1712345678000.130, "cat": "ac2g", "name": "ac2g"}"#,
        r#"{"ph": "f", "id": 17, "pid": 0, "tid": 7, "ts": 1712345678000.140, "cat": "ac2g", "name": "ac2g", "bp": "e"}"#,
        r#"{"ph": "X", "cat": "kernel", "name": "k\"quoted\"", "pid": 0, "tid": 7, "ts": 1712345678000.140, "dur": 1, "args": {"correlation": 17, "device": 0}}"#,
        r#"{"ph": "i", "s": "g", "name": "mark", "pid": "", "tid": "", "ts": 1712345678000}"#,
        r#"{"ph": "B", "name": 12, "pid": 1.5, "tid": 9223372036854775808, "ts": "1712345678001", "args": {"é": "ü"}}"#,
        r#"{"ph": "E", "pid": 1.5, "tid": 9223372036854775808, "ts": 1712345678002, "args": {"x": 1}}"#,
        r#"{"ph": "b", "cat": "async", "name": "req", "id": "0x1", "pid": 1, "tid": 1, "ts": 1712345678003, "scope": "s"}"#,
        r#"{"ph": "e", "cat": "async", "name": "req", "id2": {"local": "0x1"}, "pid": 1, "tid": 1, "ts": 1712345678004}"#,
        r#"{"ph": "C", "name": "mem", "pid": 1, "ts": 1712345678005, "args": {"a": 1, "b": 2.5}, "id": 3}"#,
        r#"{"ph": "X", "name": "bound", "pid": 1, "tid": 2, "ts": 1712345678006, "dur": 1, "bind_id": "0x9", "flow_out": true, "flow_in": false, "cat": null}"#,
        r#"{"ph": "X", "name": "dup", "name": "dup2", "pid": 1, "tid": 2, "ts": 1712345678008, "dur": 0.001, "args": {"k": 1, "k": 2}, "args": {"m": [1,2]}, "other": {"deep": [[[[1]]]], "u": "\u0041"}}"#,
        r#"{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}}"#,
        r#"{"ph": "X", "name": "nulls", "pid": null, "tid": true, "ts": 1712345678009, "dur": null}"#,
        r#"{}"#,
        r#"{"ph": "P", "ts": 1, "pid": 1}"#,
    ];
    let mut text = String::from("{\"traceEvents\": [\n");
    let mut k = 0usize;
    while text.len() < 3 << 20 {
        let shape = shapes[k % shapes.len()];
        text.push_str(&" ".repeat(k % 7));
        text.push_str(shape);
        text.push_str(",\n");
        k += 1;
    }
    text.push_str("{}]}\n");
    let read = |t: &[u8], fast: bool| {
        read_chrome_with(t, ChromeReadOptions::default().fast_events(fast))
            .map_err(|e| e.to_string())
    };
    let fast = read(text.as_bytes(), true);
    assert!(fast.is_ok(), "{:?}", fast.as_ref().err());
    assert!(fast == read(text.as_bytes(), false));
    // Malformed events past the first buffer: the same error, at the same place.
    let at = text[(1 << 20) + 100..]
        .find("{\"ph\": \"X\", \"cat\": \"cpu_op\"")
        .unwrap()
        + (1 << 20)
        + 100;
    for (from, to) in [
        ("\"dur\": 3.5", "\"dur\": 3.5.1"),
        ("\"dur\": 3.5", "\"dur\": true"),
        ("\"dur\": 3.5", "\"dur\": 1e999999"),
        ("\"ratio\": 0.25", "\"ratio\": 1e400"),
        ("\"ratio\": 0.25", "\"ratio\": 01"),
        ("\"s\": \"text\"", "\"s\": \"te\u{1}xt\""),
        ("\"s\": \"text\"", "\"s\": \"te\\qxt\""),
        ("\"ph\": \"X\"", "\"ph\": 1"),
        ("\"ph\": \"X\"", "\"pf\": \"X\""),
        ("\"ts\": 1712345678000.125", "\"ts\": null"),
        ("\"t\": true", "\"t\": tru"),
        ("\"block\": [ 128 , 1,1 ]", "\"block\": [ 128 , 1,1, ]"),
        ("\"External id\": 4,", "\"External id\": 4"),
        ("\"nested\": {", "\"nested\": {,"),
    ] {
        let mut bad = text.clone();
        let i = at + bad[at..].find(from).unwrap();
        bad.replace_range(i..i + from.len(), to);
        let (fast, slow) = (read(bad.as_bytes(), true), read(bad.as_bytes(), false));
        assert!(fast == slow, "{to}: {:?} / {:?}", fast.err(), slow.err());
    }
    let mut bad = text.clone().into_bytes();
    bad[at + 40] = 0xff;
    assert_eq!(read(&bad, true).err(), read(&bad, false).err());
    assert!(read(&bad, true).is_err());
}

/// xprof's output names every device plane, also one whose lines are all empty and so not
/// written: such a process is the plane again (found by the `chrome_json` fuzz target).
#[test]
fn a_named_device_without_threads_is_a_plane() {
    let text =
        br#"[{"args": {"name": "/device:GPU:0"}, "name": "process_name", "ph": "M", "pid": 2},
        {"args": {"name": "/host:CPU"}, "name": "process_name", "ph": "M", "pid": 701},
        {"ph": "X", "name": "k", "pid": 701, "tid": 1, "ts": 1, "dur": 2}]"#;
    let import = chrome_to_xspace(&text[..]).unwrap();
    let planes: Vec<_> = import
        .space
        .planes
        .iter()
        .map(|p| (p.name.as_str(), p.id, p.lines.len()))
        .collect();
    assert_eq!(
        planes,
        [
            ("/host:CPU", 0, 1),
            ("/device:GPU:0", 1, 0),
            ("Task Environment", 2, 0)
        ]
    );
}

/// An event with a `cat` and an arg `cat` keeps both: its own as the `category` stat, which
/// `--to chrome` writes as the event's `cat` (found by the `chrome_json` fuzz target).
#[test]
fn a_cat_beside_an_arg_cat_is_kept() {
    let text = br#"[{"ph": "X", "name": "k", "cat": "A", "pid": 1, "tid": 1, "ts": 1, "dur": 2,
        "args": {"cat": "B"}}, {"ph": "X", "name": "j", "cat": "C", "pid": 1, "tid": 1, "ts": 5,
        "dur": 1}]"#;
    let import = chrome_to_xspace(&text[..]).unwrap();
    let plane = &import.space.planes[0];
    let stats: Vec<Vec<(String, String)>> = plane.lines[0]
        .events
        .iter()
        .map(|event| {
            event
                .stats
                .iter()
                .map(|stat| {
                    let name = plane.stat_metadata[&stat.metadata_id].name.clone();
                    let value = match &stat.value {
                        Some(profkit_xplane::x_stat::Value::StrValue(v)) => v.clone(),
                        Some(profkit_xplane::x_stat::Value::RefValue(r)) => {
                            plane.stat_metadata[&(*r as i64)].name.clone()
                        }
                        other => format!("{other:?}"),
                    };
                    (name, value)
                })
                .collect()
        })
        .collect();
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        stats,
        [
            vec![pair("cat", "B"), pair(CATEGORY_STAT, "A")],
            vec![pair("cat", "C")]
        ]
    );
}

/// Flows of different categories on one slice keep each its own: a `flow_cat` per flow
/// stat, which the writer pairs by position (found by the `chrome_json` fuzz target).
#[test]
fn ids_that_are_not_integers_keep_their_shortest_text() {
    let text = br#"[{"ph": "X", "name": "a", "pid": 1, "tid": 1.5, "ts": 1, "dur": 2},
        {"ph": "X", "name": "b", "pid": 1, "tid": 1.8446744073709552e19, "ts": 1, "dur": 2}]"#;
    for fast in [true, false] {
        let import =
            read_chrome_with(&text[..], ChromeReadOptions::default().fast_events(fast)).unwrap();
        let names: Vec<&str> = import.space.planes[0]
            .lines
            .iter()
            .map(|l| l.name.as_str())
            .collect();
        assert!(names.contains(&"1.5"), "{names:?}");
        assert!(names.contains(&"1.8446744073709552e19"), "{names:?}");
    }
}

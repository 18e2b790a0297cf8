//! The reader against serde_json on the same texts, and its errors' places.

use std::fmt;

use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde_json::Value;

use super::*;
use crate::error::Error;

fn both(text: &str) -> (std::result::Result<Value, String>, Option<Value>) {
    (
        from_str::<Value>(text).map_err(|e| e.to_string()),
        serde_json::from_str::<Value>(text).ok(),
    )
}

#[test]
fn agrees_with_serde_json() {
    for text in [
        "0",
        "-0",
        "12",
        "12.0",
        "1.2e1",
        "-3",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "1e400",
        "1e-400",
        "0.1",
        r#""a\u00e9\ud83d\ude00\n""#,
        r#"{"a":[1,2,{"b":null}],"c":true,"d":false}"#,
        "[ ]",
        " { } ",
        "[1,]",
        "[01]",
        "{\"a\" 1}",
        "[1 2]",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\u{1}\"",
        "tru",
        "[1] x",
        "",
        "-",
        "1.",
        ".5",
        "1e",
        "[-]",
        "{\"a\":1,}",
    ] {
        let (ours, theirs) = both(text);
        assert_eq!(ours.as_ref().ok(), theirs.as_ref(), "{text:?}: {ours:?}");
    }
}

#[test]
fn numbers_across_buffer_boundaries() {
    let text = r#"[123456789, -5, 0.25, "abcdefghij\"k", 7]"#;
    for size in 1..12 {
        let mut reader = Reader::with_buffer(text.as_bytes(), ReadOptions::default(), size);
        let value: Value = reader.read_document().unwrap();
        assert_eq!(
            value,
            serde_json::from_str::<Value>(text).unwrap(),
            "{size}"
        );
    }
}

#[test]
fn errors_say_where() {
    let e = from_str::<Value>("{\n  \"a\": [1, 2,, 3]\n}").unwrap_err();
    let location = e.location().unwrap();
    assert_eq!(location.path, "a[2]");
    assert_eq!((location.line, location.column), (2, 14));
    assert!(matches!(e, Error::Syntax { .. }), "{e}");

    let e = from_str::<Value>("{\"a\": [1, 2").unwrap_err();
    assert!(e.is_truncation(), "{e}");
    assert_eq!(e.path(), Some("a[1]"));
}

#[test]
fn paths_survive_refills() {
    // Keys stay in the read buffer until it is refilled: whatever the buffer's size, an
    // error names the same path at the same place.
    for text in [
        r#"{"alpha": {"b c": [1, {"delta": tru}]}}"#,
        r#"{"alpha": {"b\"c": [1, {"delta": 1, "e\u00e9": [2, 3,, 4]}]}}"#,
        r#"{"k": {"long key of some length": {"x": [1, 2, "a\u0001"], "y": "\q"}}}"#,
    ] {
        let whole = from_str::<Value>(text).unwrap_err().to_string();
        for size in 1..text.len() + 2 {
            let cut = Reader::with_buffer(text.as_bytes(), ReadOptions::default(), size)
                .read_document::<Value>()
                .unwrap_err()
                .to_string();
            assert_eq!(cut, whole, "{text} with a buffer of {size}");
        }
    }
    let e = from_str::<Value>(r#"{"alpha": {"b c": [1, {"delta": tru}]}}"#).unwrap_err();
    assert_eq!(e.path(), Some(r#"alpha["b c"][1].delta"#));
}

#[test]
fn keys_as_identifiers() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct S {
        #[serde(rename = "é")]
        e: u32,
        plain: Vec<u32>,
    }
    let ok: S = from_str(r#"{"\u00e9": 1, "plain": [2]}"#).unwrap();
    assert_eq!(
        ok,
        S {
            e: 1,
            plain: vec![2]
        }
    );
    let e = from_str::<S>(r#"{"é": 1, "other": 2}"#).unwrap_err();
    let theirs = serde_json::from_str::<S>(r#"{"é": 1, "other": 2}"#).unwrap_err();
    assert!(
        e.to_string()
            .contains("unknown field `other`, expected `é` or `plain`"),
        "{e} / {theirs}"
    );
    assert_eq!(e.path(), Some("other"));
    let bad = b"{\"a\xff\": 1}";
    let e = from_slice::<Value>(bad).unwrap_err();
    assert!(e.to_string().contains("invalid UTF-8 in a key"), "{e}");
    assert!(serde_json::from_slice::<Value>(bad).is_err());
}

#[test]
fn open_top_array() {
    let read = |text: &str| {
        Reader::new(text.as_bytes(), ReadOptions::default().open_top_array(true))
            .read_document::<Value>()
    };
    for text in ["[1, 2", "[1, 2,", "[1, 2]", "[1, 2\n"] {
        let text = text.replace("\\n", "\n");
        assert_eq!(read(&text).unwrap(), serde_json::json!([1, 2]), "{text}");
    }
    assert!(read("[1, [2").unwrap_err().is_truncation());
    assert!(read("{\"a\": [1").unwrap_err().is_truncation());
    assert!(from_str::<Value>("[1, 2").unwrap_err().is_truncation());
}

#[test]
fn raw_numbers() {
    struct Raw;
    impl<'de> Visitor<'de> for Raw {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a number")
        }
        fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<String, E> {
            Ok(format!("n:{}", String::from_utf8_lossy(v)))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
            Ok(format!("s:{v}"))
        }
    }
    struct Seed;
    impl<'de> DeserializeSeed<'de> for Seed {
        type Value = String;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
            d.deserialize_newtype_struct(RAW_NUMBER_TOKEN, Raw)
        }
    }
    let read =
        |text: &str| Reader::new(text.as_bytes(), ReadOptions::default()).read_document_seed(Seed);
    assert_eq!(
        read("1795211085403342.685").unwrap(),
        "n:1795211085403342.685"
    );
    assert_eq!(read(" -1e3 ").unwrap(), "n:-1e3");
    assert_eq!(read("\"12.5\"").unwrap(), "s:12.5");
    assert!(read("01").is_err());
    assert!(read("1.").unwrap_err().is_truncation());
    // Whether a number lies whole in the buffer (checked in place) or across its end
    // (gathered), the bytes handed over and the errors are the same.
    struct Numbers;
    impl<'de> Visitor<'de> for Numbers {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("numbers")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(n) = seq.next_element_seed(Seed)? {
                out.push(n);
            }
            Ok(out)
        }
    }
    struct All;
    impl<'de> DeserializeSeed<'de> for All {
        type Value = Vec<String>;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<String>, D::Error> {
            d.deserialize_any(Numbers)
        }
    }
    let cases = [
        "[1712345678000.123, -0.25e+3, 12, 0, -7, 3E-2, \"x\"]",
        "[1, 01]",
        "[1, 1.e5]",
        "[2, --1]",
        "[1e, 2]",
        "[1-2]",
        "[0.5, -]",
    ];
    for text in cases {
        let whole = Reader::new(text.as_bytes(), ReadOptions::default())
            .read_document_seed(All)
            .map_err(|e| e.to_string());
        for size in 1..text.len() + 2 {
            let cut = Reader::with_buffer(text.as_bytes(), ReadOptions::default(), size)
                .read_document_seed(All)
                .map_err(|e| e.to_string());
            assert_eq!(cut, whole, "{text} with a buffer of {size}");
        }
    }
    assert_eq!(
        Reader::new(cases[0].as_bytes(), ReadOptions::default())
            .read_document_seed(All)
            .unwrap(),
        [
            "n:1712345678000.123",
            "n:-0.25e+3",
            "n:12",
            "n:0",
            "n:-7",
            "n:3E-2",
            "s:x"
        ]
    );
}

#[test]
fn raw_hook() {
    // A hook that takes objects written exactly `{"k": <digit>}` and declines the others.
    struct Digits(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
    impl RawHook for Digits {
        fn read(&mut self, text: &[u8], _complete: bool) -> RawRead {
            let want = br#"{"k": "#;
            if text.len() < want.len() + 2 {
                return if want.starts_with(&text[..text.len().min(want.len())]) {
                    RawRead::More
                } else {
                    RawRead::Declined
                };
            }
            match (&text[..want.len()], text[want.len()], text[want.len() + 1]) {
                (w, d @ b'0'..=b'9', b'}') if w == want => {
                    self.0.borrow_mut().push(d - b'0');
                    RawRead::Read {
                        len: want.len() + 2,
                        newlines: 0,
                        last_newline: 0,
                    }
                }
                _ => RawRead::Declined,
            }
        }
    }
    struct Element(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
    impl<'de> DeserializeSeed<'de> for Element {
        type Value = ();
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_newtype_struct(RAW_HOOK_TOKEN, self)
        }
    }
    impl<'de> Visitor<'de> for Element {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an element")
        }
        fn visit_unit<E: de::Error>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            #[derive(serde::Deserialize)]
            #[serde(deny_unknown_fields)]
            struct K {
                k: u8,
            }
            let k = <K as de::Deserialize>::deserialize(d)?;
            self.0.borrow_mut().push(k.k + 100);
            Ok(())
        }
    }
    struct All(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
    impl<'de> DeserializeSeed<'de> for All {
        type Value = ();
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_seq(self)
        }
    }
    impl<'de> Visitor<'de> for All {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("elements")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(Element(self.0.clone()))?.is_some() {}
            Ok(())
        }
    }
    let read = |text: &str, size: usize, hook: bool| {
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut reader = Reader::with_buffer(text.as_bytes(), ReadOptions::default(), size);
        if hook {
            reader.set_raw_hook(Box::new(Digits(seen.clone())));
        }
        let result = reader
            .read_document_seed(All(seen.clone()))
            .map_err(|e| e.to_string());
        (result, seen.take())
    };
    let text = "[{\"k\": 1}, {\"k\": 22},\n {\"k\":3}, {\"k\": 4}, {\"k\": 5}]";
    let (ok, seen) = read(text, 1 << 10, true);
    assert_eq!(ok, Ok(()));
    // Taken by the hook, or (not in its form) by the visitor (100 more).
    assert_eq!(seen, [1, 122, 103, 4, 5]);
    for size in 1..text.len() + 2 {
        let (ok, hooked) = read(text, size, true);
        assert_eq!(ok, Ok(()), "{size}");
        assert_eq!(
            hooked.iter().map(|k| k % 100).collect::<Vec<_>>(),
            [1, 22, 3, 4, 5]
        );
    }
    // An error after objects the hook took is where it is without the hook, whatever the
    // buffer's size.
    let bad = "[{\"k\": 1},\n {\"k\": 2}, {\"k\": 3, \"x\": 1}]";
    let (without, _) = read(bad, 1 << 10, false);
    assert!(
        without
            .as_ref()
            .is_err_and(|e| e.contains("[2]") && e.contains("line 2"))
    );
    for size in 1..bad.len() + 2 {
        assert_eq!(read(bad, size, true).0, without, "{size}");
    }
}

#[test]
fn depth_is_limited() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(from_str::<Value>(&deep(127)).is_ok());
    assert!(serde_json::from_str::<Value>(&deep(127)).is_ok());
    let e = from_str::<Value>(&deep(128)).unwrap_err();
    assert!(serde_json::from_str::<Value>(&deep(128)).is_err());
    assert!(matches!(e, Error::Limit { limit: 127, .. }), "{e}");
    let e = from_str::<Value>(&"[".repeat(1_000_000)).unwrap_err();
    assert!(matches!(e, Error::Limit { .. }), "{e}");
}

#[test]
fn strings_are_limited() {
    let text = format!("\"{}\"", "x".repeat(100));
    let mut reader = Reader::with_buffer(
        text.as_bytes(),
        ReadOptions::default().max_string_bytes(10),
        16,
    );
    let e = reader.read_document::<Value>().unwrap_err();
    assert!(matches!(e, Error::Limit { limit: 10, .. }), "{e}");
}

#[test]
fn damaged_strings_are_kept_with_replacements_when_asked() {
    let read = |text: &[u8], buffer: usize| {
        let options = ReadOptions::default().replace_invalid(true);
        let mut reader = Reader::with_buffer(text, options, buffer);
        let value = reader.read_document::<Value>();
        let (count, places) = reader.replaced_strings();
        (value.map_err(|e| e.to_string()), count, places.to_vec())
    };
    let cases: &[(&[u8], &str, u64)] = &[
        (br#"["\udc00", "ok"]"#, "[\"\u{fffd}\",\"ok\"]", 1),
        (br#"["a\ud800b"]"#, "[\"a\u{fffd}b\"]", 1),
        (br#"["\ud800\n"]"#, "[\"\u{fffd}\\n\"]", 1),
        (br#"["\ud800\ud800\udc00"]"#, "[\"\u{fffd}\u{10000}\"]", 1),
        (
            br#"["\ud800\u0041", "\udfff\udfff"]"#,
            "[\"\u{fffd}A\",\"\u{fffd}\u{fffd}\"]",
            2,
        ),
        (b"[\"a\xffb\"]", "[\"a\u{fffd}b\"]", 1),
        (br#"["\ud83d\ude00"]"#, "[\"\u{1f600}\"]", 0),
    ];
    for &(text, expected, count) in cases {
        let expected: Value = serde_json::from_str(expected).unwrap();
        for buffer in [1, 3, 64] {
            let (value, n, places) = read(text, buffer);
            assert_eq!(value.as_ref(), Ok(&expected), "{text:?} {buffer}");
            assert_eq!(n, count, "{text:?}");
            assert_eq!(places.len() as u64, count);
        }
    }
    let (_, _, places) = read(br#"{"a": ["x", "\udc00"]}"#, 64);
    assert_eq!(places.first().map(|l| l.path.as_str()), Some("a[1]"));
    // Without the option, refused as before.
    assert!(from_slice::<Value>(br#""\udc00""#).is_err());
    // Many damaged strings: all counted, the first places kept.
    let many = format!("[{}]", vec![r#""\udc00""#; 100].join(","));
    let (_, n, places) = read(many.as_bytes(), 64);
    assert_eq!((n, places.len()), (100, REPLACED_PLACES_KEPT));
}

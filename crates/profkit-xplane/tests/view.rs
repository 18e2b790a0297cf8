//! The canonical JSON view: stable order, exact round trip, and errors that name the JSON path.

use bytes::Bytes;
use profkit_xplane::view::{from_json, to_json, write_json};
use profkit_xplane::{
    Error, PlaneBuilder, StatValue, XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat,
    XStatMetadata, decode, encode, x_event, x_stat,
};

fn stat(metadata_id: i64, value: Option<x_stat::Value>) -> XStat {
    XStat { metadata_id, value }
}

/// A space with every corner the view must keep: zero-but-set oneofs, unset values, odd
/// doubles, bytes, map keys that differ from ids, extreme integers.
fn tricky() -> XSpace {
    let mut plane = XPlane {
        id: -3,
        name: "/device:GPU:0 \"quoted\" \u{1F600}".into(),
        ..Default::default()
    };
    plane.event_metadata.insert(
        5,
        XEventMetadata {
            id: 6, // not the key
            name: "ev".into(),
            display_name: "Ev".into(),
            metadata: Bytes::from_static(&[0, 0xff, 0x10]),
            stats: vec![stat(1, Some(x_stat::Value::RefValue(0)))],
            child_id: vec![5, -1, i64::MAX],
        },
    );
    plane.event_metadata.insert(-7, XEventMetadata::default());
    plane.stat_metadata.insert(
        1,
        XStatMetadata {
            id: 1,
            name: "s".into(),
            description: "line\nbreak".into(),
        },
    );
    plane.stat_metadata.insert(
        i64::MIN,
        XStatMetadata {
            id: i64::MAX,
            name: String::new(),
            description: String::new(),
        },
    );
    let doubles = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        f64::MIN,
        0.1,
        1.0 / 3.0,
        f64::from_bits(0x000f_ffff_ffff_ffff), // the largest subnormal
        f64::from_bits(0x3de0_0000_0000_0000), // 2^-33, misread without exact float parsing
        9007199254740993.0,
        1e23,
    ];
    let mut stats: Vec<XStat> = doubles
        .iter()
        .map(|&d| stat(1, Some(x_stat::Value::DoubleValue(d))))
        .collect();
    stats.extend([
        stat(1, Some(x_stat::Value::Uint64Value(0))),
        stat(1, Some(x_stat::Value::Uint64Value(u64::MAX))),
        stat(1, Some(x_stat::Value::Int64Value(0))),
        stat(1, Some(x_stat::Value::Int64Value(i64::MIN))),
        stat(1, Some(x_stat::Value::StrValue(String::new()))),
        stat(1, Some(x_stat::Value::StrValue("\u{0}\t\u{7f}é".into()))),
        stat(1, Some(x_stat::Value::BytesValue(Bytes::new()))),
        stat(
            1,
            Some(x_stat::Value::BytesValue(Bytes::from_static(
                b"\xff\xfe\x00abc",
            ))),
        ),
        stat(1, Some(x_stat::Value::RefValue(u64::MAX))),
        stat(2, None),
    ]);
    plane.lines.push(XLine {
        id: i64::MAX,
        display_id: 0,
        name: "_counters_".into(),
        display_name: String::new(),
        timestamp_ns: i64::MIN,
        duration_ps: -1,
        events: vec![
            XEvent {
                metadata_id: 5,
                data: Some(x_event::Data::OffsetPs(0)),
                duration_ps: 0,
                stats,
            },
            XEvent {
                metadata_id: 5,
                data: Some(x_event::Data::NumOccurrences(0)),
                duration_ps: 1,
                stats: vec![],
            },
            XEvent {
                metadata_id: 0,
                data: None,
                duration_ps: i64::MAX,
                stats: vec![],
            },
        ],
    });
    plane.lines.push(XLine::default());
    XSpace {
        planes: vec![plane, XPlane::default()],
        errors: vec![String::new(), "e".into()],
        warnings: vec!["w".into()],
        hostnames: vec!["h".into()],
    }
}

/// Equality that sees NaN payloads and the sign of zero: compare encodings.
fn same(a: &XSpace, b: &XSpace) -> bool {
    encode(a) == encode(b)
}

#[test]
fn round_trip_is_exact() {
    let space = tricky();
    let json = to_json(&space);
    let back = from_json(&json).unwrap();
    assert!(same(&back, &space), "{json}");
    // And the JSON of the result is the same text.
    assert_eq!(to_json(&back), json);
    // Through bytes too.
    let decoded = decode(encode(&space)).unwrap();
    assert_eq!(to_json(&decoded), json);
}

#[test]
fn doubles_keep_every_bit() {
    // Random bit patterns, with NaNs normalised to one payload (JSON has a single NaN).
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut values = Vec::new();
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let v = f64::from_bits(state);
        values.push(if v.is_nan() { f64::NAN } else { v });
        // Short decimals too, and values around powers of two.
        values.push((state % 1_000_000) as f64 / 1000.0);
        values.push(f64::from_bits((state % 2047) << 52) * (1.0 + f64::EPSILON));
    }
    let plane = XPlane {
        stats: values
            .iter()
            .map(|&d| stat(1, Some(x_stat::Value::DoubleValue(d))))
            .collect(),
        ..Default::default()
    };
    let space = XSpace {
        planes: vec![plane],
        ..Default::default()
    };
    let back = from_json(&to_json(&space)).unwrap();
    for (a, b) in space.planes[0].stats.iter().zip(&back.planes[0].stats) {
        let (Some(x_stat::Value::DoubleValue(a)), Some(x_stat::Value::DoubleValue(b))) =
            (&a.value, &b.value)
        else {
            panic!("double expected");
        };
        assert_eq!(a.to_bits(), b.to_bits(), "{a:e} came back as {b:e}");
    }
}

#[test]
fn the_layout_is_canonical() {
    let json = to_json(&tricky());
    assert!(json.ends_with("}\n"));
    assert!(json.starts_with("{\n  \"planes\": ["), "{json}");
    // Keys in schema order.
    let order = [
        "\"planes\"",
        "\"id\"",
        "\"name\"",
        "\"lines\"",
        "\"display_id\"",
        "\"display_name\"",
        "\"timestamp_ns\"",
        "\"duration_ps\"",
        "\"events\"",
        "\"event_metadata\"",
        "\"stat_metadata\"",
        "\"errors\"",
        "\"warnings\"",
        "\"hostnames\"",
    ];
    let positions: Vec<usize> = order.iter().map(|k| json.find(k).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    // Map keys in numeric order, as strings; the id inside kept apart from the key.
    let keys: Vec<usize> = ["\"-7\": {", "\"5\": {"]
        .iter()
        .map(|k| json.find(k).unwrap())
        .collect();
    assert!(keys[0] < keys[1]);
    assert!(
        json.contains("\"-9223372036854775808\": {\n          \"id\": 9223372036854775807"),
        "{json}"
    );
    // Set oneof members by name, zero or not; unset ones absent.
    assert!(json.contains("\"offset_ps\": 0"));
    assert!(json.contains("\"num_occurrences\": 0"));
    assert!(json.contains("\"int64_value\": 0"));
    assert!(json.contains("\"uint64_value\": 18446744073709551615"));
    assert!(json.contains("\"int64_value\": -9223372036854775808"));
    assert!(json.contains("\"str_value\": \"\""));
    assert!(json.contains("\"bytes_value\": \"\""));
    assert!(json.contains("\"bytes_value\": \"//4AYWJj\""));
    assert!(json.contains("\"metadata\": \"AP8Q\""));
    assert!(json.contains("\"double_value\": \"NaN\""));
    assert!(json.contains("\"double_value\": \"Infinity\""));
    assert!(json.contains("\"double_value\": \"-Infinity\""));
    assert!(json.contains("\"double_value\": -0.0"));
    assert!(json.contains("\"ref_value\": 0"));
    // The event without data has neither oneof member; the stat without value only its id.
    assert!(
        json.contains("{\n                  \"metadata_id\": 2\n                }"),
        "{json}"
    );
    assert!(
        json.contains("{\n              \"metadata_id\": 0,\n              \"duration_ps\""),
        "{json}"
    );
    // Equal spaces print equal text, however their maps were filled.
    let mut reordered = tricky();
    let md = std::mem::take(&mut reordered.planes[0].event_metadata);
    for (k, v) in md.into_iter().rev() {
        reordered.planes[0].event_metadata.insert(k, v);
    }
    assert_eq!(to_json(&reordered), json);
    // write_json writes the same text.
    let mut out = Vec::new();
    write_json(&tricky(), &mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), json);
}

#[test]
fn built_spaces_round_trip() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/host:CPU").add_stat("b", true);
    b.line(1)
        .set_timestamp_ns(5)
        .add_event("e")
        .set_duration_ps(3)
        .add_stat("r", StatValue::Ref("x".into()))
        .add_stat("z", 0.0);
    let space = XSpace {
        planes: vec![plane],
        ..Default::default()
    };
    assert_eq!(from_json(&to_json(&space)).unwrap(), space);
}

#[test]
fn hand_written_json_with_defaults() {
    // Fields left out take their defaults; a plane may be just a name.
    let space = from_json(
        r#"{"planes": [{"name": "/host:CPU", "lines": [{"id": 1, "events": [{"metadata_id": 1, "offset_ps": 0}]}],
            "stat_metadata": {"3": {"id": 3, "name": "x"}},
            "stats": [{"metadata_id": 3, "double_value": 1}, {"metadata_id": 3, "double_value": "-Infinity"}]}]}"#,
    )
    .unwrap();
    let plane = &space.planes[0];
    assert_eq!(plane.name, "/host:CPU");
    assert_eq!(
        plane.lines[0].events[0].data,
        Some(x_event::Data::OffsetPs(0))
    );
    assert_eq!(plane.stat_metadata[&3].name, "x");
    assert_eq!(plane.stats[0].value, Some(x_stat::Value::DoubleValue(1.0)));
    assert_eq!(
        plane.stats[1].value,
        Some(x_stat::Value::DoubleValue(f64::NEG_INFINITY))
    );
    assert_eq!(from_json("{}").unwrap(), XSpace::default());
}

fn json_error(text: &str) -> String {
    match from_json(text) {
        Err(Error::Json(message)) => message,
        other => panic!("expected a JSON error, got {other:?}"),
    }
}

#[test]
fn bad_json_is_refused_with_its_path() {
    let e = json_error(
        r#"{"planes": [{}, {"lines": [{"events": [{}, {"offset_ps": 1, "num_occurrences": 2}]}]}]}"#,
    );
    assert!(e.contains("planes[1].lines[0].events[1]"), "{e}");
    let e = json_error(
        r#"{"planes": [{"lines": [{"events": [{"stats": [{}, {"int64_value": 1, "str_value": ""}]}]}]}]}"#,
    );
    assert!(e.contains("planes[0].lines[0].events[0].stats[1]"), "{e}");
    let e = json_error(r#"{"planes": [{"stats": [{"bytes_value": "not base64!"}]}]}"#);
    assert!(
        e.contains("planes[0].stats[0].bytes_value") && e.contains("base64"),
        "{e}"
    );
    let e = json_error(r#"{"planes": [{"event_metadata": {"4": {"metadata": "%%"}}}]}"#);
    assert!(e.contains("planes[0].event_metadata.4.metadata"), "{e}");
    let e = json_error(r#"{"planes": [{"stats": [{"double_value": "nan"}]}]}"#);
    assert!(e.contains("NaN"), "{e}");
    // Unknown fields and wrong types are refused, with serde's line and column.
    let e = json_error(r#"{"planes": [{"nmae": "x"}]}"#);
    assert!(e.contains("nmae") && e.contains("line 1"), "{e}");
    let e = json_error(r#"{"planes": [{"id": 9223372036854775808}]}"#);
    assert!(e.contains("line 1"), "{e}");
    json_error(r#"{"planes": [{"event_metadata": {"x": {}}}]}"#);
    json_error(r#"{"planes": [{"stats": [{"uint64_value": -1}]}]}"#);
    json_error("[");
}

//! Fuzz targets for `profkit-xplane`.
//!
//! | target             | input                         | what it checks                                 |
//! |--------------------|-------------------------------|------------------------------------------------|
//! | `xplane_decode`    | raw bytes                     | [`decode`]: whole vs streaming decode, errors, |
//! |                    |                               | validate, summary, visitors, merge, JSON view  |
//! | `xplane_view`      | raw bytes                     | [`view`]: a full view walk against prost and  |
//! |                    |                               | `decode`: acceptance, content, errors, streams |
//! | `xplane_roundtrip` | an XSpace built by [`generate`] | [`roundtrip`]: encode, decode, stream, JSON  |
//! | `xplane_builder`   | a sequence of operations      | [`builder`]: builder and utility invariants    |
//! | `xplane_json`      | text                          | [`json`]: the canonical JSON view's reader     |

pub mod builder;
pub mod decode;
pub mod generate;
pub mod json;
pub mod roundtrip;
pub mod view;

#[cfg(test)]
mod regressions;

use profkit_xplane::{PlaneBuilder, StatValue, XPlane, XSpace, encode};

/// Valid encodings to mutate: spaces written with the builder that use every field, every stat
/// value kind, zero-valued oneofs, aggregated events, metadata stats and children.
pub fn seed_encodings() -> Vec<Vec<u8>> {
    let mut host = XPlane::default();
    let mut b = PlaneBuilder::new(&mut host);
    b.set_id(1).set_name("/host:CPU").add_stat("cores", 8_u32);
    let op = b.event_metadata_id("matmul");
    if let Some(mut md) = b.event_metadata(op) {
        md.set_display_name("MatMul")
            .set_metadata(vec![0xde, 0xad])
            .add_stat("flops", 1_000_u64);
    }
    let parent = b.event_metadata_id("step");
    if let Some(mut md) = b.event_metadata(parent) {
        md.add_child(op);
    }
    let mut line = b.line(7);
    line.set_name("worker")
        .set_display_name("Worker 7")
        .set_display_id(70);
    line.set_timestamp_ns(1_000).set_duration_ps(9_000_000);
    line.add_event("step")
        .set_offset_ps(0)
        .set_duration_ps(5_000)
        .add_stat("step_num", 3_i64)
        .add_stat("ratio", 0.5_f64)
        .add_stat("nan", f64::NAN)
        .add_stat("negative_zero", -0.0_f64);
    line.add_event("matmul")
        .set_timestamp_ps(1_001_000)
        .set_duration_ps(2_000)
        .add_stat("tf_op", StatValue::Ref("MatMul:MatMul".into()))
        .add_stat("label", "é")
        .add_stat("payload", vec![0_u8, 255, 128])
        .add_stat("big", u64::MAX)
        .add_stat("min", i64::MIN);
    line.add_event("matmul").set_num_occurrences(0);
    line.add_event("matmul")
        .set_num_occurrences(12)
        .set_duration_ps(24_000);
    let mut counters = b.line(profkit_xplane::constants::COUNTERS_LINE_ID);
    counters.set_name(profkit_xplane::constants::COUNTERS_LINE_NAME);
    counters
        .add_event("memory")
        .set_offset_ps(42)
        .add_stat("bytes", 4096_u64);

    let mut device = XPlane::default();
    let mut b = PlaneBuilder::new(&mut device);
    b.set_id(2).set_name("/device:GPU:0");
    b.line(1)
        .set_timestamp_ns(i64::MAX / 1000)
        .add_event("kernel")
        .set_duration_ps(1);

    let full = XSpace {
        planes: vec![host, device],
        errors: vec!["an error".into()],
        warnings: vec!["a warning".into(), String::new()],
        hostnames: vec!["myhost".into()],
    };
    let strings_only = XSpace {
        hostnames: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    vec![encode(&full), encode(&strings_only)]
}

/// The real sample the conformance suite ships (written by the official Python classes).
pub fn sample_encoding() -> Option<Vec<u8>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../conformance/xplane/sample-myhost/input.xplane.pb"
    );
    std::fs::read(path).ok()
}

/// Texts to mutate for the JSON target: the canonical JSON of every seed encoding, and
/// hand-written corners of the layout (oneofs set twice, out-of-range numbers, bad map keys,
/// nesting deeper than any reader should follow).
pub fn json_seeds() -> Vec<String> {
    let mut seeds: Vec<String> = seed_encodings()
        .into_iter()
        .chain(sample_encoding())
        .filter_map(|bytes| profkit_xplane::decode(bytes).ok())
        .map(|space| profkit_xplane::view::to_json(&space))
        .collect();
    seeds.extend(
        [
            "{}",
            r#"{"planes": [{}], "hostnames": ["h"]}"#,
            r#"{"planes": [{"lines": [{"events": [{"offset_ps": 0, "num_occurrences": 1}]}]}]}"#,
            r#"{"planes": [{"stats": [{"int64_value": 1, "str_value": "two"}]}]}"#,
            r#"{"planes": [{"stats": [{"double_value": "nan"}, {"double_value": 1e400}]}]}"#,
            r#"{"planes": [{"id": 9223372036854775808, "event_metadata": {"x": {}}}]}"#,
            r#"{"planes": [{"event_metadata": {"-1": {"id": 2, "metadata": "not base64!"}}}]}"#,
            r#"{"planes": [{"stat_metadata": {"1": {"id": 1}, "1": {"id": 2}}}]}"#,
            r#"{"planes": [], "planes": [{}], "unknown": 1}"#,
        ]
        .map(String::from),
    );
    seeds.push(format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)));
    seeds.push(format!(
        r#"{{"planes": [{}]}}"#,
        "{\"name\": \"x\"}, ".repeat(50) + "{}"
    ));
    seeds
}

/// `text` with each of its first numbers replaced by values at and past the edges of the
/// layout's integer and double fields.
pub fn number_corruptions(text: &str) -> Vec<String> {
    const REPLACEMENTS: [&str; 9] = [
        "-0",
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "1e400",
        "0.5",
        "\"NaN\"",
        "null",
        "[]",
    ];
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    let mut found = 0;
    while pos < bytes.len() && found < 40 {
        if !bytes[pos].is_ascii_digit() {
            pos += 1;
            continue;
        }
        let end = pos
            + bytes[pos..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
        for replacement in REPLACEMENTS {
            out.push(format!("{}{replacement}{}", &text[..pos], &text[end..]));
        }
        found += 1;
        pos = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    /// Runs the decode target on a valid encoding and its mutations, and checks what truncation
    /// promises: a prefix of a valid encoding decodes or is reported as truncated at its end.
    fn mutate_and_decode(valid: &[u8], seed: u64) {
        mutate_and_view(valid, seed);
        decode::run(valid);
        assert!(profkit_xplane::decode(valid.to_vec()).is_ok());
        for prefix in smoke::truncations(valid) {
            decode::run(prefix);
            match profkit_xplane::decode(prefix.to_vec()) {
                Ok(_) => {}
                Err(e) => assert!(
                    e.is_truncation(),
                    "a {}-byte prefix of a valid encoding is reported as {e}",
                    prefix.len()
                ),
            }
            if let Err(e) = decode::stream(prefix, Default::default()) {
                assert!(
                    e.is_truncation(),
                    "the stream reports a {}-byte prefix as {e}",
                    prefix.len()
                );
            }
        }
        for input in smoke::bit_flips(valid) {
            decode::run(&input);
        }
        for input in smoke::length_corruptions(valid) {
            decode::run(&input);
        }
        for input in smoke::havoc(valid, seed, smoke::scaled(200)) {
            decode::run(&input);
        }
        let twice = [valid, valid].concat();
        decode::run(&twice);
    }

    /// The view target on a valid encoding and its truncations, bit flips, length corruptions and
    /// random edits.
    fn mutate_and_view(valid: &[u8], seed: u64) {
        view::run(valid);
        for prefix in smoke::truncations(valid) {
            view::run(prefix);
        }
        for input in smoke::bit_flips(valid) {
            view::run(&input);
        }
        for input in smoke::length_corruptions(valid) {
            view::run(&input);
        }
        for input in smoke::havoc(valid, seed, smoke::scaled(300)) {
            view::run(&input);
        }
    }

    #[test]
    fn smoke_view_random() {
        smoke::run_random(8, smoke::scaled(300), 128, view::run);
    }

    #[test]
    fn smoke_view_generated() {
        let mut rng = smoke::XorShift::new(9);
        for i in 0..smoke::scaled(150) as u64 {
            let len = rng.below(512);
            let data = rng.bytes(len);
            let Ok(space) = generate::space(&mut arbitrary::Unstructured::new(&data)) else {
                continue;
            };
            let valid = encode(&space);
            view::run(&valid);
            if let Some(prefix) = valid.get(..rng.below(valid.len() + 1)) {
                view::run(prefix);
            }
            for input in smoke::havoc(&valid, 100 + i, 5) {
                view::run(&input);
            }
        }
    }

    #[test]
    fn smoke_decode_random() {
        smoke::run_random(1, smoke::scaled(300), 128, decode::run);
    }

    #[test]
    fn smoke_decode_mutated_seeds() {
        for (i, valid) in seed_encodings().iter().enumerate() {
            mutate_and_decode(valid, 10 + i as u64);
        }
    }

    #[test]
    fn smoke_decode_mutated_sample() {
        // The sample lives outside the repository; without it only the builder seeds run.
        if let Some(valid) = sample_encoding() {
            mutate_and_decode(&valid, 20);
        }
    }

    #[test]
    fn smoke_decode_generated() {
        // Random bytes rarely get past the first field; encodings of generated spaces, whole and
        // damaged, reach every message.
        let mut rng = smoke::XorShift::new(5);
        for i in 0..smoke::scaled(150) as u64 {
            let len = rng.below(512);
            let data = rng.bytes(len);
            let Ok(space) = generate::space(&mut arbitrary::Unstructured::new(&data)) else {
                continue;
            };
            let valid = encode(&space);
            decode::run(&valid);
            if let Some(prefix) = valid.get(..rng.below(valid.len() + 1)) {
                decode::run(prefix);
            }
            for input in smoke::havoc(&valid, i, 3) {
                decode::run(&input);
            }
        }
    }

    #[test]
    fn smoke_roundtrip() {
        smoke::run_random(2, smoke::scaled(400), 512, roundtrip::run);
    }

    #[test]
    fn smoke_builder() {
        smoke::run_random(3, smoke::scaled(300), 512, builder::run);
    }

    #[test]
    fn smoke_json() {
        smoke::run_random(7, smoke::scaled(200), 64, json::run);
        for (i, seed) in json_seeds().iter().enumerate() {
            json::run(seed.as_bytes());
            let boundaries: Vec<usize> = (0..seed.len())
                .filter(|&i| seed.is_char_boundary(i))
                .collect();
            let step = boundaries.len() / 300 + 1;
            for &cut in boundaries.iter().step_by(step) {
                json::run(&seed.as_bytes()[..cut]);
            }
            for input in number_corruptions(seed) {
                json::run(input.as_bytes());
            }
            for input in smoke::havoc(seed.as_bytes(), 30 + i as u64, smoke::scaled(100)) {
                json::run(&input);
            }
        }
    }

    #[test]
    fn builder_inputs_build_something() {
        // Guards the operation decoding against drifting into doing nothing.
        let (mut events, mut stats, mut metadata, mut lines) = (0, 0, 0, 0);
        let mut rng = smoke::XorShift::new(6);
        for _ in 0..100 {
            for plane in builder::build(&rng.bytes(512)) {
                lines += plane.lines.len();
                metadata += plane.event_metadata.len() + plane.stat_metadata.len();
                for event in plane.lines.iter().flat_map(|l| &l.events) {
                    events += 1;
                    stats += event.stats.len();
                }
            }
        }
        assert!(
            events > 100 && stats > 100 && metadata > 100 && lines > 100,
            "{events} events, {stats} stats, {metadata} metadata, {lines} lines"
        );
    }

    #[test]
    fn generated_spaces_reach_every_kind() {
        // Guards the generator against drifting into producing only trivial spaces.
        let (mut stats, mut kinds, mut zero_oneofs, mut mismatched) = (0, [false; 7], 0, 0);
        let mut rng = smoke::XorShift::new(4);
        for _ in 0..200 {
            let data = rng.bytes(512);
            let Ok(space) = generate::space(&mut arbitrary::Unstructured::new(&data)) else {
                continue;
            };
            for plane in &space.planes {
                mismatched += plane
                    .event_metadata
                    .iter()
                    .filter(|(k, md)| **k != md.id)
                    .count();
                for event in plane.lines.iter().flat_map(|l| &l.events) {
                    use profkit_xplane::x_event::Data;
                    if matches!(
                        event.data,
                        Some(Data::OffsetPs(0) | Data::NumOccurrences(0))
                    ) {
                        zero_oneofs += 1;
                    }
                    for stat in &event.stats {
                        stats += 1;
                        let kind = match stat.value {
                            None => 0,
                            Some(profkit_xplane::x_stat::Value::DoubleValue(_)) => 1,
                            Some(profkit_xplane::x_stat::Value::Uint64Value(_)) => 2,
                            Some(profkit_xplane::x_stat::Value::Int64Value(_)) => 3,
                            Some(profkit_xplane::x_stat::Value::StrValue(_)) => 4,
                            Some(profkit_xplane::x_stat::Value::BytesValue(_)) => 5,
                            Some(profkit_xplane::x_stat::Value::RefValue(_)) => 6,
                        };
                        kinds[kind] = true;
                    }
                }
            }
        }
        assert!(
            stats > 50 && kinds.iter().all(|&k| k),
            "{stats} stats, kinds {kinds:?}"
        );
        assert!(
            zero_oneofs > 0 && mismatched > 0,
            "{zero_oneofs} zero oneofs, {mismatched} mismatched keys"
        );
    }
}

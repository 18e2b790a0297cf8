//! Bad input: truncated, corrupted, deep, huge, of the wrong types, missing what is required.
//! Every case must end in an error that says where, never in a panic, a stack overflow or a hang.

mod common;

use common::input;
use profkit_poplar::{
    Error, JsonError, ProfileFile, ReadOptions, from_reader_with, from_slice, from_str,
};

fn read(bytes: &[u8]) -> Result<ProfileFile, Error> {
    from_slice(bytes)
}

#[test]
fn every_prefix_is_a_truncation() {
    for case in ["execution-ipu-model", "combined"] {
        let bytes = input(case);
        let end = bytes.iter().rposition(|&b| b == b'}').unwrap();
        for cut in 0..end {
            let e = read(&bytes[..cut]).unwrap_err();
            assert!(e.is_truncation(), "{case} cut at {cut}: {e}");
            let location = e.location().unwrap();
            assert_eq!(location.offset, cut as u64, "{case} cut at {cut}: {e}");
        }
    }
}

#[test]
fn corrupted_bytes_give_errors_within_the_input() {
    let bytes = input("execution-ipu-model");
    for at in (0..bytes.len()).step_by(7) {
        for replacement in [b'x', b'"', b'{', b']', b'-', b'9', 0xff, b'.'] {
            let mut corrupt = bytes.clone();
            corrupt[at] = replacement;
            if let Err(e) = read(&corrupt)
                && let Some(location) = e.location()
            {
                assert!(location.offset <= corrupt.len() as u64, "{e}");
                assert!(location.line >= 1 && location.column >= 1, "{e}");
            }
        }
    }
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    for depth in [200, 100_000, 2_000_000] {
        let text = format!(r#"{{"profilerMode":"NONE","x":{}"#, "[".repeat(depth));
        let e = from_str::<ProfileFile>(&text).unwrap_err();
        assert!(
            matches!(e, Error::Json(JsonError::Limit { limit: 127, .. })),
            "{e}"
        );
        assert!(e.to_string().contains("levels..."), "{e}");
    }
    // A liveness tree nested deeper than the limit.
    let mut tree = String::from(r#"{"bytes":1}"#);
    for _ in 0..70 {
        tree = format!(r#"{{"bytes":1,"children":[{tree}]}}"#);
    }
    let text = format!(
        r#"{{"memory":{{"liveness":{{"notAlwaysLive":{{"byProgram":{tree},"maxBytesByTile":[]}}}}}},"target":{{}}}}"#
    );
    let e = from_str::<ProfileFile>(&text).unwrap_err();
    assert!(matches!(e, Error::Json(JsonError::Limit { .. })), "{e}");
    // The same tree as the second root of a list, the shape real files have.
    let text = format!(
        r#"{{"memory":{{"liveness":{{"notAlwaysLive":{{"byProgram":[{{"bytes":1}},{tree}],"maxBytesByTile":[]}}}}}},"target":{{}}}}"#
    );
    let e = from_str::<ProfileFile>(&text).unwrap_err();
    assert!(matches!(e, Error::Json(JsonError::Limit { .. })), "{e}");
    assert!(e.to_string().contains("byProgram[1]"), "{e}");
    // Within the limit, the same tree reads.
    let mut tree = String::from(r#"{"bytes":1}"#);
    for _ in 0..50 {
        tree = format!(r#"{{"bytes":1,"children":[{tree}]}}"#);
    }
    let node: profkit_poplar::LivenessNode = from_str(&tree).unwrap();
    assert_eq!(node.bytes, 1);
}

#[test]
fn huge_numbers_and_strings_are_refused() {
    let digits = "9".repeat(100_000);
    let e =
        from_str::<ProfileFile>(&format!(r#"{{"profilerMode":"X","n":{digits}}}"#)).unwrap_err();
    assert!(matches!(e, Error::Json(JsonError::Syntax { .. })), "{e}");
    assert!(e.to_string().contains("number out of range"), "{e}");
    let e = from_str::<ProfileFile>(r#"{"profilerMode":"X","programTrace":[1e400]}"#).unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");

    let long = format!(r#"{{"profilerMode":"{}"}}"#, "N".repeat(5_000));
    let options = ReadOptions::default().max_string_bytes(1_000);
    let e = from_reader_with::<ProfileFile, _>(long.as_bytes(), options).unwrap_err();
    assert!(
        matches!(e, Error::Json(JsonError::Limit { limit: 1_000, .. })),
        "{e}"
    );
    assert!(from_str::<ProfileFile>(&long).is_ok());
}

#[test]
fn wrong_types_name_the_path() {
    let target = r#""target":{"bytesPerIPU":1,"bytesPerTile":1,"clockFrequency":1,"numIPUs":1,"numTiles":1,"tilesPerIPU":1,"totalMemory":1,"type":"IPU"}"#;
    for (text, path, what) in [
        (r#"{"target":[]}"#.to_owned(), "target", "invalid type: sequence"),
        (format!(r#"{{"programs":{{}},{target}}}"#), "programs", "invalid type: map"),
        (format!(r#"{{"programs":[{{"type":7}}],{target}}}"#), "programs[0].type", "invalid type: integer"),
        (format!(r#"{{"memory":{{"byTile":{{"total":[1,"2"]}}}},{target}}}"#), "memory.byTile.total[1]", "invalid type: string"),
        (format!(r#"{{"memory":{{"byCategory":{{"odd key":{{"total":true}}}}}},{target}}}"#), r#"memory.byCategory["odd key"].total"#, "invalid type: boolean"),
        (format!(r#"{{"optimizationInfo":{{"x":"fast"}},{target}}}"#), "optimizationInfo.x", "invalid type: string"),
        (r#"{"profilerMode":"COMPUTE_SETS","computeSetCyclesByTile":[[1,2],[3,-4]]}"#.to_owned(), "computeSetCyclesByTile[1][1]", "negative number -4"),
        (r#"{"profilerMode":"NONE","simulation":{"cycles":1,"steps":[{"type":"OnTileExecute","program":0.5}]}}"#.to_owned(), "simulation.steps[0].program", "fraction 0.5"),
        (r#"{"profilerMode":"NONE","simulation":{"cycles":1,"steps":[{"program":1}]}}"#.to_owned(), "simulation.steps[0]", "a step needs a `type`"),
        (r#"{"profilerMode":17}"#.to_owned(), "profilerMode", "invalid type: integer"),
        (r#"[1,2]"#.to_owned(), "", "invalid type: sequence"),
    ] {
        let e = from_str::<ProfileFile>(&text).unwrap_err();
        assert!(matches!(e, Error::Json(JsonError::Schema { .. })), "{text}: {e}");
        assert_eq!(e.path(), Some(path), "{text}: {e}");
        assert!(e.to_string().contains(what), "{text}: {e}");
    }
}

#[test]
fn missing_required_fields_are_named() {
    let full = r#"{"bytesPerIPU":1,"bytesPerTile":1,"clockFrequency":1,"numIPUs":1,"numTiles":1,"tilesPerIPU":1,"totalMemory":1,"type":"IPU"}"#;
    let fields: serde_json::Map<String, serde_json::Value> = serde_json::from_str(full).unwrap();
    for key in fields.keys() {
        let mut without = fields.clone();
        without.remove(key);
        let text = format!(r#"{{"target":{}}}"#, serde_json::Value::Object(without));
        let e = from_str::<ProfileFile>(&text).unwrap_err();
        assert_eq!(e.path(), Some("target"), "{e}");
        assert!(
            e.to_string().contains(&format!("missing field `{key}`")),
            "{e}"
        );
    }
    for (text, what) in [
        (
            r#"{"profilerMode":"COMPUTE_SETS"}"#,
            "needs `computeSetCyclesByTile`",
        ),
        (
            r#"{"profilerMode":"SINGLE_TILE_COMPUTE_SETS"}"#,
            "needs `computeSetCycles`",
        ),
        (
            r#"{"profilerMode":"EXTERNAL_EXCHANGES"}"#,
            "needs `externalExchangeCycles`",
        ),
        (
            r#"{"profilerMode":"HOST_EXCHANGES"}"#,
            "needs `hostExchangeCycles`",
        ),
        (
            r#"{"profilerMode":"NONE","simulation":{"cycles":1}}"#,
            "missing field `steps`",
        ),
        (
            r#"{"executionProfile":{"programTrace":[]}}"#,
            "needs `profilerMode`",
        ),
        (r#"{}"#, "not a Poplar profile"),
    ] {
        let e = from_str::<ProfileFile>(text).unwrap_err();
        assert!(e.to_string().contains(what), "{text}: {e}");
    }
}

#[test]
fn text_after_the_profile_is_refused() {
    let e = from_str::<ProfileFile>(r#"{"profilerMode":"NONE"} {}"#).unwrap_err();
    assert!(matches!(e, Error::Json(JsonError::Syntax { .. })), "{e}");
    assert!(from_str::<ProfileFile>("{\"profilerMode\":\"NONE\"}\n\t ").is_ok());
}

#[test]
fn read_errors_are_reported() {
    struct Failing;
    impl std::io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let e = profkit_poplar::from_reader::<ProfileFile, _>(Failing).unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e}");
    let e = profkit_poplar::read_file::<ProfileFile>("/nonexistent/graph.json").unwrap_err();
    assert!(
        e.to_string().starts_with("/nonexistent/graph.json: "),
        "{e}"
    );
}

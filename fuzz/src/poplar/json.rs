//! Target `poplar_json`: any bytes into the Poplar reader.
//!
//! The reader is this crate's own JSON parser, so it is checked against serde_json's: both refuse
//! the same texts, read the same values, and (through the schema's generic serde path) the same
//! profiles. Refusals say where they are. What reads validates, analyses and writes without a
//! panic, writes back to the same profile compactly and pretty, and, when the text has no `null`
//! (which an optional field reads as absent), holds exactly the text's JSON.

use profkit_poplar::{Error, JsonError, ProfileFile, analysis, from_slice, from_str};
use serde_json::Value;

/// Every number as a double, so that `12` and `12.0` compare equal.
pub fn normalise(value: &Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), normalise(v))).collect())
        }
        other => other.clone(),
    }
}

fn has_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null),
        Value::Object(o) => o.values().any(has_null),
        _ => false,
    }
}

/// Checks what a profile that read must do: validate, analyse, and write back to itself.
pub fn check_profile(file: &ProfileFile) {
    let problems = profkit_poplar::validate(file);
    for p in &problems {
        assert!(!p.message.is_empty(), "a problem without a message: {p:?}");
    }
    let analysed = analysis::analyse(file, file.graph());
    profkit_poplar::to_string(&analysed)
        .unwrap_or_else(|e| panic!("cannot write the analysis: {e}"));
    let compact = profkit_poplar::to_string(file).unwrap_or_else(|e| panic!("cannot write: {e}"));
    let back: ProfileFile = from_str(&compact)
        .unwrap_or_else(|e| panic!("the writing does not read back: {e}\n{compact}"));
    assert_eq!(
        &back, file,
        "the writing reads back as another profile:\n{compact}"
    );
    let pretty = profkit_poplar::to_string_pretty(file).unwrap_or_else(|e| panic!("{e}"));
    let back: ProfileFile = from_str(&pretty)
        .unwrap_or_else(|e| panic!("the pretty writing does not read back: {e}\n{pretty}"));
    assert_eq!(
        &back, file,
        "the pretty writing reads back as another profile"
    );
}

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let _ = profkit_poplar::looks_like_poplar(data);
    let theirs_value = serde_json::from_slice::<Value>(data);
    let ours_value = from_slice::<Value>(data);
    match (&ours_value, &theirs_value) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the readers read different values"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("the readers disagree: ours {a:?}, serde_json's {b:?}"),
    }
    let ours = from_slice::<ProfileFile>(data);
    let theirs = serde_json::from_slice::<ProfileFile>(data);
    let file = match (ours, theirs) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "the generic path reads another profile");
            a
        }
        (Err(e), Err(_)) => {
            check_error(&e, data);
            if let Ok(value) = &theirs_value {
                assert!(
                    matches!(
                        e,
                        Error::Json(JsonError::Schema { .. } | JsonError::Limit { .. })
                    ),
                    "valid JSON refused as if it were not: {e}"
                );
                let _ = value;
            }
            return;
        }
        (a, b) => panic!("the readers disagree on the profile: ours {a:?}, serde_json's {b:?}"),
    };
    check_profile(&file);
    if let Ok(value) = &theirs_value
        && !has_null(value)
    {
        let written: Value = serde_json::from_str(
            &profkit_poplar::to_string(&file).unwrap_or_else(|e| panic!("{e}")),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            normalise(value),
            normalise(&written),
            "reading then writing changed the JSON"
        );
    }
}

/// An error says where it is, within the input.
fn check_error(e: &Error, data: &[u8]) {
    assert!(!e.to_string().is_empty());
    if let Some(location) = e.location() {
        assert!(location.offset <= data.len() as u64, "{e}");
        assert!(location.line >= 1 && location.column >= 1, "{e}");
    }
    if e.is_truncation() {
        assert_eq!(
            e.location().map(|l| l.offset),
            Some(data.len() as u64),
            "{e}"
        );
    }
}

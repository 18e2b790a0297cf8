//! Target `xdl_record`: arbitrary bytes into the Record, Header and Meta decoders.
//!
//! A refusal must say where: an offset within the input and a path into the message. A record
//! that decodes must re-encode to something that decodes to the same record; its columns must be
//! checkable, and every valid column must read as its dtype with product(shape) elements and
//! refuse every other type. The JSON form of a record must read back to the same record (NaNs
//! aside, whose payload JSON cannot carry).

use profkit_xdl::json::{RecordView, record_from_json};
use profkit_xdl::{
    Column, DType, Error, Header, Record, decode_header, decode_meta, decode_record, encode_record,
};

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    match decode_record(data.to_vec()) {
        Ok(record) => check_record(&record),
        Err(e) => check_error(&e, data, "Record"),
    }
    match decode_header(data.to_vec()) {
        Ok(header) => assert_eq!(
            decode_header(profkit_xdl::encode_header(&header)).ok(),
            Some(header)
        ),
        Err(e) => check_error(&e, data, "Header"),
    }
    match decode_meta(data.to_vec()) {
        Ok(meta) => assert_eq!(
            decode_meta(profkit_xdl::encode_meta(&meta)).ok(),
            Some(meta)
        ),
        Err(e) => check_error(&e, data, "Meta"),
    }
    let _ = profkit_xdl::looks_like_meta(data);
}

fn check_error(e: &Error, data: &[u8], message: &str) {
    match e {
        Error::Malformed {
            offset,
            frame,
            path,
            reason,
        } => {
            assert!(*offset <= data.len() as u64, "{e}: offset past the input");
            assert!(frame.is_none());
            assert!(path.starts_with(message), "{e}: path outside {message}");
            assert!(!reason.is_empty());
        }
        other => panic!("decoding a {message} fails with {other:?}"),
    }
}

fn check_record(record: &Record) {
    let bytes = encode_record(record);
    let again = decode_record(bytes.clone())
        .unwrap_or_else(|e| panic!("a re-encoded record fails to decode: {e}"));
    assert_eq!(&again, record, "decode(encode(r)) != r");

    let header = Header::new((0..record.column.len()).map(|i| format!("k{i}")));
    let valid = record.check(&header).is_ok();
    for column in &record.column {
        check_column(column);
    }
    let short = Header::new(["only"]);
    assert_eq!(
        record.check(&short).is_ok(),
        valid && record.column.len() == 1
    );

    // The JSON form, for a valid record whose shapes nest within the JSON form's bounds (those
    // that do not are written with an error instead of a value).
    if valid
        && record
            .column
            .iter()
            .all(|c| profkit_xdl::json::json_limit(c).is_none())
    {
        let text = serde_json::to_string(&RecordView {
            record,
            keys: &header.key,
        })
        .unwrap_or_else(|e| panic!("a valid record does not serialize: {e}"));
        let value: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("the JSON form is not JSON: {e}\n{text}"));
        let back = record_from_json(&value, "record")
            .unwrap_or_else(|e| panic!("the JSON form does not read back: {e}\n{text}"));
        assert_eq!(
            encode_record(&back),
            encode_record(&canonical_nans(record)),
            "JSON round trip:\n{text}"
        );
    }
}

fn check_column(column: &Column) {
    let checked = column.check();
    let Ok(dtype) = column.try_dtype() else {
        assert!(
            checked.is_err(),
            "a column of unknown dtype passes its check"
        );
        return;
    };
    macro_rules! read_as {
        ($t:ty) => {{
            let got = column.values::<$t>();
            if dtype == <$t as profkit_xdl::Element>::DTYPE && checked.is_ok() {
                let values = got.unwrap_or_else(|e| panic!("a valid column does not read: {e}"));
                assert_eq!(Some(values.len() as u64), column.element_count().ok());
            } else {
                assert!(
                    got.is_err(),
                    "a column reads as a type it is not, or while invalid"
                );
            }
        }};
    }
    read_as!(i8);
    read_as!(i16);
    read_as!(i32);
    read_as!(i64);
    read_as!(f32);
    read_as!(f64);
    read_as!(bool);
    read_as!(u8);
    assert_eq!(column.bytes().is_ok(), checked.is_ok());
    if checked.is_ok() {
        // Rebuilding from the raw bytes gives the same column.
        let rebuilt = Column::from_raw(dtype, column.shape.clone(), column.data.clone())
            .unwrap_or_else(|e| panic!("a valid column does not rebuild: {e}"));
        assert_eq!(&rebuilt, column);
    }
}

/// `record` as a trip through JSON leaves it: every NaN of a float column the canonical quiet NaN
/// (JSON's `"NaN"` carries no payload), every Bool byte 0 or 1 (JSON has only true and false).
fn canonical_nans(record: &Record) -> Record {
    let mut record = record.clone();
    for column in &mut record.column {
        let fixed: Option<Vec<u8>> = match column.try_dtype() {
            Ok(DType::Float) => column.values::<f32>().ok().map(|v| {
                v.iter()
                    .flat_map(|x| if x.is_nan() { f32::NAN } else { *x }.to_le_bytes())
                    .collect()
            }),
            Ok(DType::Double) => column.values::<f64>().ok().map(|v| {
                v.iter()
                    .flat_map(|x| if x.is_nan() { f64::NAN } else { *x }.to_le_bytes())
                    .collect()
            }),
            Ok(DType::Bool) => Some(column.data.iter().map(|&b| u8::from(b != 0)).collect()),
            _ => None,
        };
        if let Some(bytes) = fixed {
            column.data = bytes.into();
        }
    }
    record
}

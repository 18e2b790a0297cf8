//! Frames, data files, columns, metas and the JSON form, in memory.

mod common;

use std::borrow::Cow;

use common::{KEYS, data_file, record};
use profkit_xdl::json::{RecordView, record_from_json};
use profkit_xdl::{
    Column, DType, DataReader, Error, FrameReader, FrameWriter, Header, Meta, MetaCheck,
    MetaTracker, ReadOptions, Record, check_meta, decode_meta, decode_record, encode_meta,
};

#[test]
fn frames_round_trip() {
    let mut w = FrameWriter::new(Vec::new());
    assert_eq!(w.write_frame(b"abc").unwrap(), 7);
    assert_eq!(w.write_frame(b"").unwrap(), 4);
    assert_eq!((w.bytes_written(), w.frames_written()), (11, 2));
    let bytes = w.into_inner();
    assert_eq!(bytes, b"\x03\x00\x00\x00abc\x00\x00\x00\x00");
    let frames: Vec<_> = FrameReader::new(&bytes[..], ReadOptions::default())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(frames.len(), 2);
    assert_eq!(
        (frames[0].index, frames[0].offset, &frames[0].data[..]),
        (0, 0, &b"abc"[..])
    );
    assert_eq!(
        (frames[1].index, frames[1].offset, frames[1].body_offset()),
        (1, 7, 11)
    );
}

#[test]
fn empty_input_has_no_frames() {
    assert_eq!(
        FrameReader::new(&b""[..], ReadOptions::default()).count(),
        0
    );
    let reader = DataReader::new(&b""[..], ReadOptions::default()).unwrap();
    assert!(reader.header().is_none());
    assert_eq!(reader.count(), 0);
}

#[test]
fn truncation_after_every_cut_keeps_complete_records() {
    let records: Vec<Record> = (1..=3).map(record).collect();
    let bytes = data_file(&records);
    // Frame ends, to know how many records each cut keeps.
    let ends: Vec<u64> = FrameReader::new(&bytes[..], ReadOptions::default())
        .map(|f| {
            let f = f.unwrap();
            f.offset + f.encoded_len()
        })
        .collect();
    for cut in 1..bytes.len() {
        let input = &bytes[..cut];
        let complete = ends.iter().filter(|&&e| e <= cut as u64).count();
        if complete == 0 {
            let err = DataReader::new(input, ReadOptions::default())
                .err()
                .expect("cut header");
            assert!(err.is_truncation(), "cut {cut}: {err}");
            continue;
        }
        let mut reader = DataReader::new(input, ReadOptions::default()).unwrap();
        let mut got = 0;
        let mut truncated = None;
        for item in reader.by_ref() {
            match item {
                Ok(r) => {
                    assert_eq!(r, records[got]);
                    got += 1;
                }
                Err(e) => truncated = Some(e),
            }
        }
        assert_eq!(got, complete - 1, "cut {cut}");
        let at_boundary = ends.contains(&(cut as u64));
        match truncated {
            None => assert!(at_boundary, "cut {cut} inside a frame reported nothing"),
            Some(Error::Truncated {
                offset,
                frame,
                frame_offset,
                needed,
            }) => {
                assert!(!at_boundary);
                assert_eq!(offset, cut as u64);
                assert_eq!(frame, complete as u64);
                assert_eq!(frame_offset, ends[complete - 1]);
                // Inside the length prefix only the prefix's missing bytes are known.
                let frame_end = ends.get(complete).copied().unwrap();
                let known_end = if offset < frame_offset + 4 {
                    frame_offset + 4
                } else {
                    frame_end
                };
                assert_eq!(offset + needed, known_end, "cut {cut}");
            }
            Some(other) => panic!("cut {cut}: {other}"),
        }
    }
}

#[test]
fn truncated_message_names_the_byte() {
    let bytes = data_file(&[record(1), record(2)]);
    let cut = &bytes[..bytes.len() - 10];
    let err = DataReader::new(cut, ReadOptions::default())
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("truncated at byte {}", cut.len())),
        "{text}"
    );
    assert!(text.contains("needs 10 more bytes"), "{text}");
}

#[test]
fn garbage_length_is_an_error_at_its_offset() {
    let mut bytes = data_file(&[record(1)]);
    let second = 4 + u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
    bytes[second..second + 4].copy_from_slice(&0xfff0_0000u32.to_le_bytes());
    let mut reader =
        DataReader::new(&bytes[..], ReadOptions::with_max_frame_size(1 << 20)).unwrap();
    let err = reader.next().unwrap().unwrap_err();
    assert!(!err.is_truncation());
    match err {
        Error::FrameTooLarge {
            frame,
            offset,
            size,
            limit,
        } => {
            assert_eq!(
                (frame, offset, size, limit),
                (1, second as u64, 0xfff0_0000, 1 << 20)
            );
        }
        other => panic!("{other}"),
    }
    assert!(reader.next().is_none());
}

#[test]
fn a_huge_declared_length_allocates_nothing_up_front() {
    // 4 GiB - 1 declared, limit raised to allow it: the reader must find the end of input rather
    // than reserve the declared size.
    let bytes = [0xff, 0xff, 0xff, 0xff, 1, 2, 3];
    let err = FrameReader::new(&bytes[..], ReadOptions::with_max_frame_size(u64::MAX))
        .next()
        .unwrap()
        .unwrap_err();
    assert!(err.is_truncation(), "{err}");
}

#[test]
fn malformed_record_names_offset_and_path() {
    let header = profkit_xdl::encode_header(&Header::new(KEYS));
    // Record { gstep: 1, column: [ {dtype: Float, shape: wire type 5} ] }
    let column = [0x08, 0x04, 0x15, 0, 0, 0, 0];
    let mut body = vec![0x08, 0x01, 0x1a, column.len() as u8];
    body.extend_from_slice(&column);
    let mut w = FrameWriter::new(Vec::new());
    w.write_frame(&header).unwrap();
    w.write_frame(&body).unwrap();
    let bytes = w.into_inner();
    let err = DataReader::new(&bytes[..], ReadOptions::default())
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    let body_start = 4 + header.len() as u64 + 4;
    match &err {
        Error::Malformed {
            offset,
            frame,
            path,
            reason,
        } => {
            assert_eq!(*offset, body_start + 6);
            assert_eq!(*frame, Some(1));
            assert_eq!(path, "Record.column[0].shape");
            assert!(reason.contains("wire type 5"), "{reason}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(err.frame(), Some(1));
}

#[test]
fn bad_utf8_key_is_located() {
    let mut w = FrameWriter::new(Vec::new());
    w.write_frame(&[0x0a, 0x02, b'o', 0xff]).unwrap();
    let err = DataReader::new(&w.into_inner()[..], ReadOptions::default())
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "malformed Header.key at byte 7 (frame 0): string is not valid UTF-8"
    );
}

#[test]
fn every_dtype_round_trips() {
    fn check<T: profkit_xdl::Element + PartialEq + std::fmt::Debug>(values: &[T], dtype: DType) {
        let c = Column::tensor(&[values.len()], values).unwrap();
        assert_eq!(c.try_dtype().unwrap(), dtype);
        assert_eq!(c.data.len(), values.len() * dtype.size());
        let back =
            decode_record(profkit_xdl::encode_record(&Record::new(0, 0, 0, vec![c]))).unwrap();
        assert_eq!(&back.column[0].values::<T>().unwrap()[..], values);
        assert_eq!(back.column[0].to_vec::<T>().unwrap(), values);
    }
    check(&[i8::MIN, -1, 0, i8::MAX], DType::Int8);
    check(&[i16::MIN, -1, 0, i16::MAX], DType::Int16);
    check(&[i32::MIN, -1, 0, i32::MAX], DType::Int32);
    check(&[i64::MIN, -1, 0, i64::MAX], DType::Int64);
    check(&[f32::MIN, -0.5, 0.0, f32::INFINITY], DType::Float);
    check(&[f64::MIN, -0.5, 0.0, f64::NEG_INFINITY], DType::Double);
    check(&[true, false, true], DType::Bool);
    check(&[0u8, 7, 255], DType::Byte);
    assert_eq!(Column::vector(&[1u8, 2]).unwrap().bytes().unwrap(), &[1, 2]);
}

#[test]
fn little_endian_layout() {
    let c = Column::vector(&[1i32, -2]).unwrap();
    assert_eq!(&c.data[..], &[1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]);
    let d = Column::scalar(1.0f64);
    assert_eq!(&d.data[..], &1.0f64.to_le_bytes());
}

#[test]
fn scalars_and_empty_tensors() {
    let s = Column::scalar(3i64);
    assert!(s.is_scalar());
    assert_eq!((s.element_count().unwrap(), s.data.len()), (1, 8));
    assert_eq!(s.to_vec::<i64>().unwrap(), [3]);
    let e = Column::vector::<f32>(&[]).unwrap();
    assert_eq!(
        (e.shape.as_slice(), e.element_count().unwrap(), e.data.len()),
        (&[0][..], 0, 0)
    );
    assert!(e.values::<f32>().unwrap().is_empty());
    let e2 = Column::tensor::<i16>(&[4, 0, 2], &[]).unwrap();
    e2.check().unwrap();
    // An empty shape with no data is not a scalar: it lacks its element.
    let bad = Column {
        dtype: DType::Float as i32,
        ..Default::default()
    };
    assert!(matches!(
        bad.check(),
        Err(Error::DataLength {
            expected: 4,
            actual: 0,
            ..
        })
    ));
}

#[test]
fn shape_and_data_disagreements_are_errors() {
    let c = Column::from_raw(DType::Float, vec![2, 2], vec![0u8; 12]).unwrap_err();
    assert_eq!(
        c.to_string(),
        "Float column of shape [2, 2] needs 16 bytes of data, has 12"
    );
    let neg = Column {
        dtype: DType::Int8 as i32,
        shape: vec![2, -1],
        data: Default::default(),
    };
    assert!(matches!(neg.check(), Err(Error::BadShape { .. })));
    let huge = Column {
        dtype: DType::Double as i32,
        shape: vec![i32::MAX; 4],
        data: Default::default(),
    };
    assert!(huge.check().is_err());
    let unknown = Column {
        dtype: 9,
        shape: vec![],
        data: vec![0].into(),
    };
    assert!(matches!(
        unknown.check(),
        Err(Error::UnknownDType { value: 9 })
    ));
    let wrong = Column::scalar(1.0f32).values::<f64>().unwrap_err();
    assert!(matches!(
        wrong,
        Error::WrongDType {
            expected: DType::Double,
            found: DType::Float
        }
    ));
    assert!(Column::tensor(&[3], &[1.0f32]).is_err());
    assert!(Column::tensor(&[1usize << 40], &[1.0f32]).is_err());
}

#[test]
fn typed_access_borrows_when_aligned() {
    let c = Column::vector(&[1.0f32, 2.0, 3.0]).unwrap();
    let aligned = c.data.as_ptr() as usize % 4 == 0;
    let v = c.values::<f32>().unwrap();
    assert_eq!(
        matches!(v, Cow::Borrowed(_)),
        aligned && cfg!(target_endian = "little")
    );
    // Misaligned: the same floats one byte into a buffer.
    let mut buf = vec![0u8];
    buf.extend_from_slice(&c.data);
    let shifted = bytes::Bytes::from(buf).slice(1..);
    let m = Column {
        data: shifted,
        ..c.clone()
    };
    let mv = m.values::<f32>().unwrap();
    if m.data.as_ptr() as usize % 4 != 0 {
        assert!(matches!(mv, Cow::Owned(_)));
    }
    assert_eq!(&mv[..], &[1.0, 2.0, 3.0]);
}

#[test]
fn bools_read_like_numpy() {
    let c = Column::from_raw(DType::Bool, vec![3], vec![0u8, 1, 2]).unwrap();
    assert_eq!(c.to_bools().unwrap(), [false, true, true]);
}

#[test]
fn meta_round_trip_and_unset() {
    let m = Meta {
        lstep_begin: 1,
        lstep_end: 3,
        gstep_begin: 101,
        gstep_end: 103,
        timestamp_begin: 7,
        timestamp_end: 9,
    };
    assert_eq!(decode_meta(encode_meta(&m)).unwrap(), m);
    let unset = encode_meta(&Meta::UNSET);
    assert_eq!(
        unset.len(),
        6 * 11,
        "every -1 takes a tag and ten varint bytes"
    );
    assert_eq!(decode_meta(unset).unwrap(), Meta::UNSET);
    let err = decode_meta(vec![0x08, 0x80]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed Meta.lstep_begin at byte 1: the message ends inside a varint"
    );
}

#[test]
fn meta_tracker_and_quirk() {
    let mut t = MetaTracker::new();
    t.add(&record(7));
    let computed = t.meta();
    assert_eq!(
        (
            computed.lstep_begin,
            computed.lstep_end,
            computed.gstep_begin
        ),
        (7, 7, 107)
    );
    let quirk = Meta {
        lstep_begin: -1,
        gstep_begin: -1,
        timestamp_begin: -1,
        ..computed
    };
    assert!(quirk.has_unset_begin());
    assert_eq!(
        check_meta(&quirk, &computed, 1, true),
        MetaCheck::AgreesWithQuirk
    );
    // Only a last file with one record can show it.
    assert!(matches!(
        check_meta(&quirk, &computed, 1, false),
        MetaCheck::Disagrees(_)
    ));
    let mut two = MetaTracker::new();
    two.add(&record(1));
    two.add(&record(2));
    let q2 = Meta {
        lstep_begin: -1,
        gstep_begin: -1,
        timestamp_begin: -1,
        ..two.meta()
    };
    match check_meta(&q2, &two.meta(), 2, true) {
        MetaCheck::Disagrees(d) => assert_eq!(d.len(), 3),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        check_meta(&Meta::UNSET, &MetaTracker::new().meta(), 0, true),
        MetaCheck::Agrees
    );
}

#[test]
fn json_round_trip_keeps_every_bit() {
    let keys: Vec<String> = KEYS.iter().map(|k| k.to_string()).collect();
    let mut r = record(3);
    r.column
        .push(Column::vector(&[f64::NAN, f64::INFINITY, -0.0, 1e-300]).unwrap());
    r.column.push(Column::tensor::<i8>(&[2, 0], &[]).unwrap());
    let text = serde_json::to_string(&RecordView {
        record: &r,
        keys: &keys,
    })
    .unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value["columns"][0]["value"],
        serde_json::json!([[0.0, 3.0, 6.0], [9.0, 12.0, 15.0]])
    );
    assert_eq!(value["columns"][1]["value"], serde_json::json!(1.5));
    assert_eq!(value["columns"][3]["value"][0], "NaN");
    assert_eq!(value["columns"][4]["value"], serde_json::json!([[], []]));
    let back = record_from_json(&value, "r").unwrap();
    assert_eq!(
        profkit_xdl::encode_record(&back),
        profkit_xdl::encode_record(&r)
    );
}

#[test]
fn json_of_f32_reads_back_exactly() {
    // A spread of bit patterns, subnormals and extremes included.
    let mut bits: u32 = 1;
    let mut values = vec![
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        1.0e-45,
        0.1,
        1.0 / 3.0,
    ];
    for _ in 0..200_000 {
        bits ^= bits << 13;
        bits ^= bits >> 17;
        bits ^= bits << 5;
        let f = f32::from_bits(bits);
        if f.is_finite() {
            values.push(f);
        }
    }
    let c = Column::vector(&values).unwrap();
    let r = Record::new(0, 0, 0, vec![c]);
    let keys = vec!["x".to_owned()];
    let text = serde_json::to_string(&RecordView {
        record: &r,
        keys: &keys,
    })
    .unwrap();
    let back = record_from_json(&serde_json::from_str(&text).unwrap(), "r").unwrap();
    assert_eq!(back.column[0].data, r.column[0].data);
}

#[test]
fn json_errors_say_where() {
    let v = serde_json::json!({"columns": [{"dtype": "Float", "shape": [2], "value": [1.0]}]});
    let err = record_from_json(&v, "records[4]").unwrap_err();
    assert_eq!(
        err.to_string(),
        "JSON at records[4].columns[0].value: 1 items, the shape says 2"
    );
    let v = serde_json::json!({"columns": [{"dtype": "Int8", "shape": [], "value": 300}]});
    let err = record_from_json(&v, "r").unwrap_err();
    assert!(err.to_string().contains("300 is not an int8"), "{err}");
    let v = serde_json::json!({"columns": [{"dtype": "Half", "value": 1}]});
    assert!(record_from_json(&v, "r").is_err());
}

#[test]
fn invalid_columns_dump_with_an_error() {
    let r = Record::new(
        1,
        1,
        1,
        vec![Column {
            dtype: 4,
            shape: vec![3],
            data: vec![0u8; 5].into(),
        }],
    );
    let keys = vec!["w".to_owned()];
    let v: serde_json::Value = serde_json::to_value(RecordView {
        record: &r,
        keys: &keys,
    })
    .unwrap();
    assert_eq!(v["columns"][0]["value"], serde_json::Value::Null);
    assert!(
        v["columns"][0]["error"]
            .as_str()
            .unwrap()
            .contains("needs 12 bytes")
    );
}

#[test]
fn record_check_against_header() {
    let header = Header::new(KEYS);
    record(1).check(&header).unwrap();
    let mut short = record(1);
    short.column.pop();
    assert!(matches!(
        short.check(&header),
        Err(Error::ColumnCount {
            expected: 3,
            found: 2
        })
    ));
    let mut bad = record(1);
    bad.column[1].data = vec![0u8; 3].into();
    let err = bad.check(&header).unwrap_err();
    assert!(err.to_string().starts_with("column 1 (\"loss\"):"), "{err}");
    assert_eq!(
        record(2)
            .column_for(&header, "loss")
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        [1.0]
    );
    let r = record(2);
    let keys: Vec<&str> = r.columns_with_keys(&header).map(|(k, _)| k).collect();
    assert_eq!(keys, KEYS);
}

#[test]
fn json_refuses_shapes_that_would_explode() {
    let keys = vec!["x".to_owned(), "y".to_owned()];
    let wide = Column {
        dtype: DType::Int8 as i32,
        shape: vec![i32::MAX, i32::MAX, 0],
        data: Default::default(),
    };
    wide.check().unwrap();
    let deep = Column {
        dtype: DType::Int8 as i32,
        shape: vec![1; 100_000],
        data: vec![7u8].into(),
    };
    deep.check().unwrap();
    let r = Record::new(0, 0, 0, vec![wide, deep]);
    let v: serde_json::Value = serde_json::to_value(RecordView {
        record: &r,
        keys: &keys,
    })
    .unwrap();
    assert!(
        v["columns"][0]["error"]
            .as_str()
            .unwrap()
            .contains("nested arrays"),
        "{v}"
    );
    assert!(
        v["columns"][1]["error"]
            .as_str()
            .unwrap()
            .contains("100000 dimensions"),
        "{v}"
    );
    assert_eq!(v["columns"][1]["value"], serde_json::Value::Null);
}

#[test]
fn large_columns_read_from_a_file_are_borrowed_not_copied() {
    // Frames land in memory so that the first large column's elements are aligned, whatever the
    // varint lengths before them; the column after it is wherever it falls.
    for n in [100usize, 1000, 70_000, 300_000] {
        let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let record = Record::new(
            1,
            1,
            1,
            vec![
                Column::scalar(1u8),
                Column::vector(&values).unwrap(),
                Column::vector(&values[..7]).unwrap(),
            ],
        );
        let mut w = FrameWriter::new(Vec::new());
        w.write_message(&Header::new(["a", "b", "c"])).unwrap();
        w.write_message(&record).unwrap();
        w.write_message(&record).unwrap();
        let bytes = w.into_inner();
        for r in DataReader::new(&bytes[..], ReadOptions::default()).unwrap() {
            let r = r.unwrap();
            let v = r.column[1].values::<f64>().unwrap();
            assert!(
                matches!(v, Cow::Borrowed(_)) || cfg!(target_endian = "big"),
                "{n} elements copied"
            );
            assert_eq!(&v[..], &values[..]);
            assert_eq!(&r.column[2].values::<f64>().unwrap()[..], &values[..7]);
        }
    }
}

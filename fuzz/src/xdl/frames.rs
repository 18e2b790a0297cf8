//! Target `xdl_frames`: arbitrary bytes as an XDL data file.
//!
//! The frame reader must account for every byte: frames follow each other without gaps, a clean
//! end comes exactly at the end of the input, a truncation is reported where the input ends, and a
//! length over the limit where its prefix starts; after an error the reader yields nothing. The
//! data file reader must agree with the frames decoded one by one, also when the bytes arrive one
//! at a time. The checker and the JSON dump must run to the end, the dump giving valid JSON.

use std::io::Read;

use profkit_xdl::json::{DumpEntry, DumpSource, write_dump};
use profkit_xdl::validate::check_data;
use profkit_xdl::{
    DataReader, Error, FrameReader, ReadOptions, decode_header_frame, decode_record_frame,
};

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let len = data.len() as u64;
    frames(data, ReadOptions::default());
    // A limit small enough to bite, taken from the input.
    let limit = data.first().map_or(0, |&b| u64::from(b));
    frames(data, ReadOptions::with_max_frame_size(limit));

    // No frame can be longer than the input, and a tight limit keeps a reader without `read_buf`
    // (whose buffer std zero-fills) from clearing megabytes for a length it will not get.
    let tight = ReadOptions::with_max_frame_size(len);
    let whole = records(data, tight);
    let trickled = records(Trickle(data), tight);
    assert_eq!(whole, trickled, "reading byte by byte gives other records");

    let (report, problems) = check_data(data, None, ReadOptions::default());
    assert!(report.bytes <= len);
    for p in &problems {
        assert!(!p.message.is_empty());
        if let Some(offset) = p.offset {
            assert!(offset <= len, "{p}: offset past the input");
        }
    }
    if problems.is_empty() {
        assert_eq!(
            report.bytes, len,
            "a clean check that does not read the whole input"
        );
    }
    let _ = profkit_xdl::looks_like_data_file(data);

    let mut out = Vec::new();
    let entries = vec![DumpEntry {
        name: "input".into(),
        source: DumpSource::Data(Box::new(std::io::Cursor::new(data.to_vec()))),
    }];
    let errors = write_dump(entries, &mut out, ReadOptions::default(), None)
        .unwrap_or_else(|e| panic!("the dump fails to write to memory: {e}"));
    let doc: serde_json::Value =
        serde_json::from_slice(&out).unwrap_or_else(|e| panic!("the dump is not JSON: {e}"));
    assert_eq!(
        errors.is_empty(),
        doc["input"].get("error").is_none(),
        "dump errors and JSON disagree"
    );
}

/// Reads every frame, checking the accounting and the errors.
fn frames(data: &[u8], options: ReadOptions) {
    let len = data.len() as u64;
    let mut reader = FrameReader::new(data, options);
    let mut expected_offset = 0u64;
    let mut index = 0u64;
    for item in reader.by_ref() {
        match item {
            Ok(frame) => {
                assert_eq!(
                    (frame.offset, frame.index),
                    (expected_offset, index),
                    "frames are not consecutive"
                );
                assert!(
                    frame.data.len() as u64 <= options.max_frame_size,
                    "a frame over the limit was read"
                );
                expected_offset += frame.encoded_len();
                index += 1;
            }
            Err(e) => {
                check_frame_error(&e, data, expected_offset, index);
                expected_offset = len;
            }
        }
    }
    assert!(reader.next().is_none(), "frames after the end");
    if expected_offset != len {
        panic!("the reader stopped at byte {expected_offset} of {len} without an error");
    }
}

/// Checks an error of the frame reader at frame `index` starting at `frame_offset`.
fn check_frame_error(e: &Error, data: &[u8], frame_offset: u64, index: u64) {
    let len = data.len() as u64;
    match e {
        Error::Truncated {
            offset,
            frame,
            frame_offset: at,
            needed,
        } => {
            assert_eq!(
                *offset, len,
                "{e}: a truncation not at the end of the input"
            );
            assert_eq!((*frame, *at), (index, frame_offset), "{e}: wrong frame");
            assert!(*needed > 0, "{e}");
        }
        Error::FrameTooLarge {
            frame,
            offset,
            size,
            limit,
        } => {
            assert_eq!((*frame, *offset), (index, frame_offset), "{e}: wrong frame");
            assert!(size > limit, "{e}");
        }
        other => panic!("the frame reader fails with {other:?}"),
    }
}

/// The records the data file reader yields, as encodings, with the error it ends with (as text).
fn records(reader: impl Read, options: ReadOptions) -> (Vec<Vec<u8>>, Option<String>) {
    let mut out = Vec::new();
    let mut reader = match DataReader::new(reader, options) {
        Ok(r) => r,
        Err(e) => return (out, Some(e.to_string())),
    };
    while let Some(item) = reader.next_with_frame() {
        match item {
            Ok((frame, record)) => {
                // The same frame decoded on its own gives the same record.
                let again = decode_record_frame(&frame)
                    .unwrap_or_else(|e| panic!("frame decodes once, not twice: {e}"));
                assert_eq!(again, record);
                let _ = decode_header_frame(&frame);
                out.push(profkit_xdl::encode_record(&record));
            }
            Err(e) => {
                if let Some(offset) = e.offset() {
                    assert!(offset <= reader.offset(), "{e}: offset past what was read");
                }
                assert!(reader.next().is_none(), "records after an error");
                return (out, Some(e.to_string()));
            }
        }
    }
    (out, None)
}

/// A reader that hands out one byte per call, as a slow pipe might.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
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

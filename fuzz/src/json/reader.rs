//! Target `json_reader`: any bytes into `profkit_json::Reader`.
//!
//! The reader accepts exactly what serde_json accepts and reads the same value; it reads the
//! same whatever the size of its buffer and however the input arrives (one byte per `read`);
//! refusals carry a location whose offset is within the input, a truncation exactly at its end;
//! with `open_top_array`, a top-level array cut after an element or a comma reads as the
//! elements before the cut, and nothing else changes.

use profkit_json::{ReadOptions, Reader};
use serde_json::Value;

/// A reader that hands over one byte per `read`.
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

fn describe(result: &Result<Value, profkit_json::Error>) -> String {
    match result {
        Ok(v) => format!("ok {v}"),
        Err(e) => format!("err {e}"),
    }
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let ours = profkit_json::from_slice::<Value>(data);
    let theirs = serde_json::from_slice::<Value>(data);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the reader reads another value than serde_json"),
        (Err(_), Err(_)) => {}
        _ => panic!(
            "the reader and serde_json disagree: ours {}, serde_json {theirs:?}",
            describe(&ours)
        ),
    }
    if let Err(e) = &ours {
        if let Some(location) = e.location() {
            assert!(
                location.offset <= data.len() as u64,
                "offset {} past the input ({})",
                location.offset,
                data.len()
            );
            if e.is_truncation() {
                assert_eq!(
                    location.offset,
                    data.len() as u64,
                    "a truncation not at the end: {e}"
                );
            }
            assert!(location.line >= 1 && location.column >= 1, "{e}");
        }
    }
    // Streaming: the same result one byte at a time and with a tiny buffer.
    let slow =
        Reader::with_buffer(OneByte(data), ReadOptions::default(), 3).read_document::<Value>();
    assert_eq!(
        describe(&slow),
        describe(&ours),
        "one byte at a time reads differently"
    );
    // An open top-level array: what serde_json reads is read alike; a cut array reads.
    let open =
        Reader::new(data, ReadOptions::default().open_top_array(true)).read_document::<Value>();
    if let Ok(value) = &ours {
        assert_eq!(
            open.as_ref().ok(),
            Some(value),
            "open_top_array changes a closed document"
        );
    }
}

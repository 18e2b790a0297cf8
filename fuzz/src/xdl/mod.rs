//! Fuzz targets for `profkit-xdl`.
//!
//! | target        | input     | what it checks                                                     |
//! |---------------|-----------|--------------------------------------------------------------------|
//! | `xdl_frames`  | raw bytes | [`frames`]: the frame reader, data file reader, checker and dump   |
//! | `xdl_record`  | raw bytes | [`record`]: the Record, Header and Meta decoders, columns, JSON    |

pub mod frames;
pub mod record;

use profkit_xdl::{Column, FrameWriter, Header, Meta, Record, encode_meta, encode_record};

/// Records using every dtype, scalars, empty tensors and multi-dimensional shapes.
pub fn seed_records() -> Vec<Record> {
    let tensor =
        |shape: &[usize], values: &[f32]| Column::tensor(shape, values).unwrap_or_default();
    vec![
        Record::new(
            101,
            1,
            1_700_000_000_001,
            vec![
                tensor(&[2, 3], &[0.0, 1.0, 2.0, f32::NAN, f32::INFINITY, -0.0]),
                Column::scalar(0.5f64),
                Column::vector(&[true, false]).unwrap_or_default(),
                Column::vector(&[1i64, -1]).unwrap_or_default(),
                Column::vector(&[1i8, 2, 3]).unwrap_or_default(),
            ],
        ),
        Record::new(
            -1,
            i64::MAX,
            i64::MIN,
            vec![
                Column::tensor::<i16>(&[3, 0], &[]).unwrap_or_default(),
                Column::scalar(i32::MIN),
                Column::vector(&[0u8, 255]).unwrap_or_default(),
                Column::tensor::<f32>(&[0], &[]).unwrap_or_default(),
                Column::scalar(false),
            ],
        ),
    ]
}

/// Data files to mutate: the seed records framed with a header, and the original writer's
/// sample copied into `conformance/xdl/`.
pub fn seed_data_files() -> Vec<Vec<u8>> {
    let mut w = FrameWriter::new(Vec::new());
    let _ = w.write_message(&Header::new(["w", "loss", "flag", "ids", "d"]));
    for r in seed_records() {
        let _ = w.write_message(&r);
    }
    let mut files = vec![w.into_inner()];
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../conformance/xdl/original-writer/input/train.trace.0.1"
    );
    if let Ok(bytes) = std::fs::read(sample) {
        files.push(bytes);
    }
    files
}

/// Encoded records and metas to mutate.
pub fn seed_messages() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = seed_records().iter().map(encode_record).collect();
    out.push(encode_meta(&Meta::UNSET));
    out.push(encode_meta(&Meta {
        lstep_begin: 1,
        lstep_end: 3,
        gstep_begin: 101,
        gstep_end: 103,
        timestamp_begin: 1_700_000_000_001,
        timestamp_end: 1_700_000_000_003,
    }));
    out
}

/// `file` with each frame length prefix replaced by wrong lengths: one short and one long, zero,
/// past the end, and the largest 32-bit value.
pub fn frame_length_corruptions(file: &[u8]) -> Vec<Vec<u8>> {
    let mut starts = Vec::new();
    let mut pos = 0usize;
    while let Some(prefix) = file.get(pos..pos + 4) {
        starts.push(pos);
        let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
        pos += 4 + len;
    }
    let mut out = Vec::new();
    for start in starts {
        let Some(prefix) = file.get(start..start + 4) else {
            continue;
        };
        let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
        for wrong in [
            len.wrapping_sub(1),
            len.wrapping_add(1),
            0,
            len.wrapping_add(1_000_000),
            u32::MAX,
        ] {
            let mut input = file.to_vec();
            if let Some(slot) = input.get_mut(start..start + 4) {
                slot.copy_from_slice(&wrong.to_le_bytes());
            }
            out.push(input);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    #[test]
    fn smoke_frames_random() {
        smoke::run_random(41, smoke::scaled(300), 96, frames::run);
        // Random bytes behind a plausible header reach the record decoder.
        let mut rng = smoke::XorShift::new(42);
        for _ in 0..smoke::scaled(300) {
            let n = rng.below(64);
            let body = rng.bytes(n);
            let mut input = vec![3, 0, 0, 0, 0x0a, 0x01, b'k'];
            input.extend_from_slice(&(body.len() as u32).to_le_bytes());
            input.extend_from_slice(&body);
            frames::run(&input);
        }
    }

    #[test]
    fn smoke_frames_mutated_seeds() {
        for (i, valid) in seed_data_files().iter().enumerate() {
            frames::run(valid);
            for prefix in smoke::truncations(valid) {
                frames::run(prefix);
                // A prefix of a valid file loses records, never reports them corrupt.
                let (_, problems) =
                    profkit_xdl::validate::check_data(prefix, None, Default::default());
                assert!(
                    problems
                        .iter()
                        .all(|p| p.kind == profkit_xdl::validate::ProblemKind::Truncated),
                    "a {}-byte prefix: {problems:?}",
                    prefix.len()
                );
            }
            for input in smoke::bit_flips(valid) {
                frames::run(&input);
            }
            for input in frame_length_corruptions(valid) {
                frames::run(&input);
            }
            for input in smoke::havoc(valid, 50 + i as u64, smoke::scaled(200)) {
                frames::run(&input);
            }
        }
    }

    #[test]
    fn smoke_record_random() {
        smoke::run_random(43, smoke::scaled(400), 64, record::run);
    }

    #[test]
    fn smoke_record_mutated_seeds() {
        for (i, valid) in seed_messages().iter().enumerate() {
            record::run(valid);
            for prefix in smoke::truncations(valid) {
                record::run(prefix);
            }
            for input in smoke::bit_flips(valid) {
                record::run(&input);
            }
            for input in smoke::length_corruptions(valid) {
                record::run(&input);
            }
            for input in smoke::havoc(valid, 60 + i as u64, smoke::scaled(200)) {
                record::run(&input);
            }
        }
    }

    #[test]
    fn seeds_are_valid() {
        for r in seed_records() {
            for c in &r.column {
                c.check()
                    .unwrap_or_else(|e| panic!("seed column invalid: {e}"));
            }
        }
        assert_eq!(
            seed_data_files().len(),
            2,
            "the sample in conformance/xdl is missing"
        );
    }
}

//! The XDL cases we build ourselves, written by `cargo run -p conformance --bin make-xdl-cases`
//! (or by `BLESS=1 cargo test -p conformance`) into `conformance/xdl/<case>/input/`.
//!
//! Valid datasets are written by `profkit_xdl::DatasetWriter` into a scratch folder and read back;
//! broken ones are then made by editing those bytes, or framed by hand with `FrameWriter`.
//! Everything is deterministic: fixed steps and timestamps, so the same code gives the same bytes.

use std::path::PathBuf;

use profkit_xdl::json::{dump_entries, write_dump};
use profkit_xdl::{
    Column, DatasetWriter, FrameWriter, Header, Meta, MetaTracker, Phase, ReadOptions, Record,
    WriterOptions, discover, encode_meta,
};

use crate::GeneratedFile;

/// A base timestamp: 2023-11-14T22:13:20Z in milliseconds, as the original writer recorded.
const T0: i64 = 1_700_000_000_000;

/// Files of one case, by name inside `input/` (or beside it, for writer inputs).
type Files = Vec<(String, Vec<u8>)>;

/// Every generated input file, in a fixed order.
pub fn cases() -> Vec<GeneratedFile> {
    let cases: Vec<(&str, Files)> = vec![
        ("single-record", single_record()),
        ("scalars", scalars()),
        ("every-dtype", every_dtype()),
        ("empty-tensors", empty_tensors()),
        ("split-files", split_files()),
        ("truncated", truncated()),
        ("bad-length", bad_length()),
        ("meta-mismatch", meta_mismatch()),
        ("malformed-record", malformed_record()),
        ("column-problems", column_problems()),
        ("header-mismatch", header_mismatch()),
        (
            "no-dataset",
            vec![("input/notes.txt".into(), b"not a trace\n".to_vec())],
        ),
    ];
    let mut out = Vec::new();
    for (case, files) in cases {
        for (file, contents) in files {
            out.push(GeneratedFile {
                case: case.to_owned(),
                file,
                contents,
            });
        }
    }
    out
}

fn scratch(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!(
        "conformance-xdl-gen-{}-{tag}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Writes a dataset with our writer and returns its files as `input/<name>`.
fn written(
    options: impl Fn(WriterOptions) -> WriterOptions,
    keys: &[&str],
    records: Vec<Record>,
) -> Files {
    let dir = scratch("written");
    let mut files = write_into(&dir, options, keys, records);
    let _ = std::fs::remove_dir_all(&dir);
    files.sort();
    files
}

fn write_into(
    dir: &std::path::Path,
    options: impl Fn(WriterOptions) -> WriterOptions,
    keys: &[&str],
    records: Vec<Record>,
) -> Files {
    let result = (|| -> Result<Files, profkit_xdl::Error> {
        let mut writer = DatasetWriter::create(
            options(WriterOptions::new(dir)).overwrite(true),
            keys.iter().copied(),
        )?;
        for r in records {
            writer.write_record(r)?;
        }
        let report = writer.finish()?;
        let mut files = Vec::new();
        for path in report.files {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            files.push((format!("input/{name}"), std::fs::read(&path)?));
            files.push((
                format!("input/{name}.meta"),
                std::fs::read(format!("{}.meta", path.display()))?,
            ));
        }
        Ok(files)
    })();
    result.unwrap_or_else(|e| panic!("generating a case failed: {e}"))
}

fn col<T: profkit_xdl::Element>(shape: &[usize], values: &[T]) -> Column {
    Column::tensor(shape, values).unwrap_or_else(|e| panic!("bad generated column: {e}"))
}

/// Record `step` of a small model: weights, a loss and a flag.
fn step_record(step: i64) -> Record {
    let s = step as f32;
    Record::new(
        1000 + step,
        step,
        T0 + 250 * step,
        vec![
            col(&[2, 2], &[s, -s, 0.5 * s, 0.25]),
            Column::scalar(1.0 / step as f64),
            col(&[3], &[step % 2 == 0, true, false]),
        ],
    )
}

const STEP_KEYS: [&str; 3] = ["fc1/weight", "loss", "mask"];

fn single_record() -> Files {
    // A zero limit: every file holds exactly one record (and never only a header).
    written(
        |o| o.max_file_mb(0.0),
        &STEP_KEYS,
        (1..=3).map(step_record).collect(),
    )
}

fn scalars() -> Files {
    let keys = [
        "int8", "int16", "int32", "int64", "float", "double", "bool", "byte",
    ];
    let records = (1..=2)
        .map(|i| {
            Record::new(
                i,
                i,
                T0 + i,
                vec![
                    Column::scalar(-(i as i8)),
                    Column::scalar(300 * i as i16),
                    Column::scalar(-70_000 * i as i32),
                    Column::scalar(i64::MAX - i),
                    Column::scalar(0.1f32 * i as f32),
                    Column::scalar(-2.5f64 * i as f64),
                    Column::scalar(i == 1),
                    Column::scalar(200u8 + i as u8),
                ],
            )
        })
        .collect();
    written(|o| o, &keys, records)
}

fn every_dtype() -> Files {
    let keys = [
        "int8", "int16", "int32", "int64", "float", "double", "bool", "byte",
    ];
    let record = |i: i64| {
        Record::new(
            10 * i,
            i,
            T0 + 1000 * i,
            vec![
                col(&[2, 2], &[i8::MIN, -1, 0, i8::MAX]),
                col(&[4], &[i16::MIN, -1, 1, i16::MAX]),
                col(&[1, 4], &[i32::MIN, -(i as i32), 0, i32::MAX]),
                col(&[2, 1, 2], &[i64::MIN, -1, i, i64::MAX]),
                col(
                    &[6],
                    &[
                        f32::NAN,
                        f32::INFINITY,
                        f32::NEG_INFINITY,
                        -0.0,
                        f32::MIN_POSITIVE / 2.0,
                        0.1 * i as f32,
                    ],
                ),
                col(
                    &[2, 3],
                    &[f64::NAN, f64::MAX, f64::MIN, -0.0, 5e-324, 1.0 / 3.0],
                ),
                col(&[2, 2], &[true, false, i == 1, true]),
                col(&[5], &[0u8, 1, 127, 128, 255]),
            ],
        )
    };
    let mut files = written(|o| o, &keys, vec![record(1), record(2)]);
    // A second rank and a test-phase dataset beside it.
    files.extend(written(|o| o.rank(1), &keys, vec![record(1)]));
    files.extend(written(
        |o| o.phase(Phase::Test).name("eval").rank(0),
        &keys[..2],
        vec![Record::new(
            5,
            1,
            T0,
            vec![col(&[1], &[7i8]), col(&[1], &[8i16])],
        )],
    ));
    files.sort();
    files
}

fn empty_tensors() -> Files {
    let keys = ["vector", "matrix-rows", "matrix-cols", "once"];
    let records = (1..=2)
        .map(|i| {
            Record::new(
                i,
                i,
                T0 + i,
                vec![
                    col::<f32>(&[0], &[]),
                    col::<i64>(&[3, 0], &[]),
                    col::<bool>(&[0, 2], &[]),
                    // What trace_once records after the first step: an empty float32 array.
                    if i == 1 {
                        col(&[2], &[1.0f32, 2.0])
                    } else {
                        col::<f32>(&[0], &[])
                    },
                ],
            )
        })
        .collect();
    let mut files = written(|o| o, &keys, records);
    // What the original writer leaves when nothing is traced: an empty data file, an all -1 meta.
    files.push(("input/test.trace.0.1".into(), Vec::new()));
    files.push((
        "input/test.trace.0.1.meta".into(),
        encode_meta(&Meta::UNSET),
    ));
    files.sort();
    files
}

fn split_files() -> Files {
    // 5 records of 8 KB each, 0.02 MB files: the limit is reached after the third record of a file.
    let keys = ["activations", "step"];
    let records: Vec<Record> = (1..=5)
        .map(|i| {
            let values: Vec<f32> = (0..2048).map(|k| (k as f32) * 0.5 + i as f32).collect();
            Record::new(
                i,
                i,
                T0 + i,
                vec![col(&[32, 64], &values), Column::scalar(i)],
            )
        })
        .collect();
    let dir = scratch("split");
    let mut files = write_into(&dir, |o| o.max_file_mb(0.02), &keys, records);
    // The writer's inputs for `write.txt`: the dump of what it wrote.
    let mut dump = Vec::new();
    let datasets = discover(&dir).unwrap_or_default();
    if let Err(e) = write_dump(
        dump_entries(&datasets),
        &mut dump,
        ReadOptions::default(),
        Some(1),
    ) {
        panic!("cannot dump the split case: {e}");
    }
    dump.push(b'\n');
    let _ = std::fs::remove_dir_all(&dir);
    files.push(("writer.decoded.json".into(), dump));
    files.push((
        "write-options.json".into(),
        b"{\"max_file_mb\": 0.02, \"phase\": \"train\", \"name\": \"trace\", \"rank\": 0}\n"
            .to_vec(),
    ));
    files.sort();
    files
}

fn find<'a>(files: &'a mut Files, name: &str) -> &'a mut Vec<u8> {
    match files.iter_mut().find(|(n, _)| n == name) {
        Some((_, bytes)) => bytes,
        None => panic!("no generated file {name}"),
    }
}

fn truncated() -> Files {
    let records: Vec<Record> = (1..=6).map(step_record).collect();
    let mut files = written(|o| o.max_file_mb(0.0003), &STEP_KEYS, records);
    // Rank 0's last file is cut inside its last record, as by a crash: no meta was written.
    let last = files
        .iter()
        .filter(|(n, _)| !n.ends_with(".meta"))
        .map(|(n, _)| n.clone())
        .max()
        .unwrap_or_default();
    let bytes = find(&mut files, &last);
    let cut = bytes.len() - 7;
    bytes.truncate(cut);
    files.retain(|(n, _)| *n != format!("{last}.meta"));
    // Rank 1's only file is cut inside the length prefix of its second record.
    let mut rank1 = written(
        |o| o.rank(1),
        &STEP_KEYS,
        (1..=2).map(step_record).collect(),
    );
    let header_len = 4 + profkit_xdl::encode_header(&Header::new(STEP_KEYS)).len();
    let first_len = 4 + profkit_xdl::encode_record(&step_record(1)).len();
    find(&mut rank1, "input/train.trace.1.1").truncate(header_len + first_len + 2);
    files.extend(rank1);
    files.sort();
    files
}

fn bad_length() -> Files {
    let mut files = written(|o| o, &STEP_KEYS, (1..=3).map(step_record).collect());
    let header_len = 4 + profkit_xdl::encode_header(&Header::new(STEP_KEYS)).len();
    let first_len = 4 + profkit_xdl::encode_record(&step_record(1)).len();
    let at = header_len + first_len;
    if let Some(prefix) = find(&mut files, "input/train.trace.0.1").get_mut(at..at + 4) {
        prefix.copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    }
    files
}

fn meta_mismatch() -> Files {
    let mut files = written(
        |o| o.max_file_mb(0.0),
        &STEP_KEYS,
        (1..=6).map(step_record).collect(),
    );
    // File 2: a meta one step off. File 3: the original's -1 begin quirk, but not on the last file.
    // File 4: gone (a gap). File 5: its meta gone. File 6: data gone, meta left. A meta that does
    // not decode on a second rank.
    let meta = |step: i64| {
        let mut t = MetaTracker::new();
        t.add(&step_record(step));
        t.meta()
    };
    *find(&mut files, "input/train.trace.0.2.meta") = encode_meta(&Meta {
        lstep_end: 3,
        ..meta(2)
    });
    *find(&mut files, "input/train.trace.0.3.meta") = encode_meta(&Meta {
        lstep_begin: -1,
        gstep_begin: -1,
        timestamp_begin: -1,
        ..meta(3)
    });
    files.retain(|(n, _)| {
        !n.starts_with("input/train.trace.0.4")
            && n != "input/train.trace.0.5.meta"
            && n != "input/train.trace.0.6"
    });
    let mut rank1 = written(|o| o.rank(1), &STEP_KEYS, vec![step_record(1)]);
    *find(&mut rank1, "input/train.trace.1.1.meta") = vec![0x08, 0x01, 0x12, 0x05, 0x00];
    files.extend(rank1);
    files.sort();
    files
}

fn framed(keys: &[&str], bodies: &[Vec<u8>]) -> Vec<u8> {
    let mut w = FrameWriter::new(Vec::new());
    let frames = std::iter::once(profkit_xdl::encode_header(&Header::new(
        keys.iter().copied(),
    )))
    .chain(bodies.iter().cloned());
    for body in frames {
        if let Err(e) = w.write_frame(&body) {
            panic!("{e}");
        }
    }
    w.into_inner()
}

fn meta_of(records: &[&Record]) -> Vec<u8> {
    let mut t = MetaTracker::new();
    for r in records {
        t.add(r);
    }
    encode_meta(&t.meta())
}

fn malformed_record() -> Files {
    let (r1, r3) = (step_record(1), step_record(3));
    // Record 2: a column whose `shape` field has wire type 5 (32-bit), which the schema forbids.
    let broken = vec![
        0x08, 0x02, 0x10, 0x02, 0x1a, 0x07, 0x08, 0x04, 0x15, 0x00, 0x00, 0x80, 0x3f,
    ];
    let data = framed(
        &STEP_KEYS,
        &[
            profkit_xdl::encode_record(&r1),
            broken,
            profkit_xdl::encode_record(&r3),
        ],
    );
    // Rank 1: a header key that is not UTF-8.
    let mut bad_header = FrameWriter::new(Vec::new());
    let _ = bad_header.write_frame(&[0x0a, 0x03, b'k', 0xc3, 0x28]);
    vec![
        ("input/train.trace.0.1".into(), data),
        ("input/train.trace.0.1.meta".into(), meta_of(&[&r1, &r3])),
        ("input/train.trace.1.1".into(), bad_header.into_inner()),
        (
            "input/train.trace.1.1.meta".into(),
            encode_meta(&Meta::UNSET),
        ),
    ]
}

fn column_problems() -> Files {
    let good = step_record(1);
    let mut short = step_record(2);
    short.column.pop();
    let mut wrong_len = step_record(3);
    wrong_len.column[0].data = wrong_len.column[0].data.slice(..12);
    let mut unknown = step_record(4);
    unknown.column[1].dtype = 9;
    let mut bad_bool = step_record(5);
    bad_bool.column[2].data = vec![0u8, 1, 2].into();
    let mut negative = step_record(6);
    negative.column[0].shape = vec![-2, -2];
    let records = [&good, &short, &wrong_len, &unknown, &bad_bool, &negative];
    let bodies: Vec<Vec<u8>> = records
        .iter()
        .map(|r| profkit_xdl::encode_record(r))
        .collect();
    vec![
        ("input/train.trace.0.1".into(), framed(&STEP_KEYS, &bodies)),
        ("input/train.trace.0.1.meta".into(), meta_of(&records)),
    ]
}

fn header_mismatch() -> Files {
    let mut files = written(
        |o| o.max_file_mb(0.0),
        &STEP_KEYS,
        (1..=2).map(step_record).collect(),
    );
    let r3 = step_record(3);
    files.push((
        "input/train.trace.0.3".into(),
        framed(
            &["fc1/weight", "loss", "accuracy"],
            &[profkit_xdl::encode_record(&r3)],
        ),
    ));
    files.push(("input/train.trace.0.3.meta".into(), meta_of(&[&r3])));
    files.sort();
    files
}

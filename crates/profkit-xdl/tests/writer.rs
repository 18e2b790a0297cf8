//! The dataset writer: the original's naming and split rule, byte for byte, and what it does better.

mod common;

use common::{KEYS, TempDir, record, sample_dir};
use profkit_xdl::json::{header_from_json, record_from_json};
use profkit_xdl::{
    Column, DataReader, DatasetWriter, Error, Meta, Phase, ReadOptions, Record, WriterOptions,
    discover, read_meta_file,
};

/// The original writer's inputs from the sample, in order, with the header keys.
fn sample_records() -> (Vec<String>, Vec<Record>) {
    let text = std::fs::read_to_string(sample_dir().join("writer.decoded.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys = header_from_json(&doc["train.trace.0.1"]["header"], "header")
        .unwrap()
        .key;
    let mut records = Vec::new();
    for file in ["train.trace.0.1", "train.trace.0.2", "train.trace.0.3"] {
        for r in doc[file]["records"].as_array().unwrap() {
            records.push(record_from_json(r, file).unwrap());
        }
    }
    (keys, records)
}

#[test]
fn writes_the_original_sample_byte_for_byte() {
    let (keys, records) = sample_records();
    let dir = TempDir::new("sample");
    let mut w =
        DatasetWriter::create(WriterOptions::new(dir.path()).max_file_mb(0.0003), keys).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    let report = w.finish().unwrap();
    assert_eq!(report.files.len(), 3);
    assert_eq!((report.records, report.bytes), (7, 354 + 354 + 136));
    for i in 1..=3 {
        let name = format!("train.trace.0.{i}");
        let ours = std::fs::read(dir.join(&name)).unwrap();
        let theirs = std::fs::read(sample_dir().join("input").join(&name)).unwrap();
        assert!(ours == theirs, "{name} differs");
        let our_meta = read_meta_file(dir.join(&format!("{name}.meta"))).unwrap();
        let their_meta =
            read_meta_file(sample_dir().join("input").join(format!("{name}.meta"))).unwrap();
        if i < 3 {
            assert_eq!(our_meta, their_meta, "{name}.meta");
        } else {
            // The original's lazy begin left -1 here; ours is right.
            assert_eq!(their_meta.lstep_begin, -1);
            assert_eq!(
                our_meta,
                Meta {
                    lstep_begin: 7,
                    lstep_end: 7,
                    gstep_begin: 107,
                    gstep_end: 107,
                    timestamp_begin: 1_700_000_000_007,
                    timestamp_end: 1_700_000_000_007,
                }
            );
        }
    }
}

#[test]
fn encoded_pass_through_is_byte_identical_too() {
    let dir = TempDir::new("passthrough");
    let mut w = DatasetWriter::create(
        WriterOptions::new(dir.path()).max_file_mb(0.0003),
        ["w", "loss", "flag", "ids", "d"],
    )
    .unwrap();
    for i in 1..=3 {
        let mut reader = DataReader::open(
            sample_dir().join(format!("input/train.trace.0.{i}")),
            ReadOptions::default(),
        )
        .unwrap();
        while let Some(item) = reader.next_with_frame() {
            w.write_encoded(item.unwrap().0.data).unwrap();
        }
    }
    w.finish().unwrap();
    for i in 1..=3 {
        let name = format!("train.trace.0.{i}");
        assert_eq!(
            std::fs::read(dir.join(&name)).unwrap(),
            std::fs::read(sample_dir().join("input").join(&name)).unwrap()
        );
    }
}

#[test]
fn split_rule_is_checked_before_each_record() {
    let dir = TempDir::new("split");
    let header_len = 4 + profkit_xdl::encode_header(&profkit_xdl::Header::new(KEYS)).len() as u64;
    let record_len = 4 + profkit_xdl::encode_record(&record(1)).len() as u64;
    // A limit the file reaches exactly after two records: the third starts a new file.
    let limit = (header_len + 2 * record_len) as f64 / 1e6;
    let mut w =
        DatasetWriter::create(WriterOptions::new(dir.path()).max_file_mb(limit), KEYS).unwrap();
    for step in 1..=5 {
        w.write_record(record(step)).unwrap();
    }
    let report = w.finish().unwrap();
    let sizes: Vec<u64> = report
        .files
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .collect();
    assert_eq!(
        sizes,
        [
            header_len + 2 * record_len,
            header_len + 2 * record_len,
            header_len + record_len
        ]
    );
    // One byte more of room and the third record still fits before the check trips.
    let dir2 = TempDir::new("split2");
    let mut w = DatasetWriter::create(
        WriterOptions::new(dir2.path()).max_file_mb(limit + 1e-6),
        KEYS,
    )
    .unwrap();
    for step in 1..=5 {
        w.write_record(record(step)).unwrap();
    }
    assert_eq!(w.finish().unwrap().files.len(), 2);
}

#[test]
fn a_zero_limit_gives_one_record_per_file_and_never_a_header_alone() {
    let dir = TempDir::new("zero");
    let mut w =
        DatasetWriter::create(WriterOptions::new(dir.path()).max_file_mb(0.0), KEYS).unwrap();
    for step in 1..=3 {
        w.write_record(record(step)).unwrap();
    }
    let report = w.finish().unwrap();
    assert_eq!(report.files.len(), 3);
    for (i, path) in report.files.iter().enumerate() {
        let records: Vec<_> = DataReader::open(path, ReadOptions::default())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(records, [record(i as i64 + 1)]);
        let meta = read_meta_file(format!("{}.meta", path.display())).unwrap();
        assert_eq!(
            (meta.lstep_begin, meta.lstep_end),
            (i as i64 + 1, i as i64 + 1)
        );
    }
}

#[test]
fn names_follow_phase_name_and_rank() {
    let dir = TempDir::new("names");
    let opts = WriterOptions::new(dir.path())
        .phase(Phase::Test)
        .name("my.trace")
        .rank(12);
    let mut w = DatasetWriter::create(opts, KEYS).unwrap();
    w.write_record(record(1)).unwrap();
    let report = w.finish().unwrap();
    assert_eq!(report.files, [dir.join("test.my.trace.12.1")]);
    assert!(dir.join("test.my.trace.12.1.meta").is_file());
    let ds = discover(dir.path()).unwrap();
    assert_eq!(ds[0].id.to_string(), "test.my.trace.12");
}

#[test]
fn no_record_no_file() {
    let dir = TempDir::new("none");
    let w = DatasetWriter::create(WriterOptions::new(dir.path()), KEYS).unwrap();
    let report = w.finish().unwrap();
    assert!(report.files.is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn summary_functions_apply_before_writing() {
    let dir = TempDir::new("summary");
    let mut w = DatasetWriter::create(WriterOptions::new(dir.path()), KEYS).unwrap();
    w.set_summary("w", |c| {
        let v = c.values::<f32>().unwrap();
        Column::scalar(v.iter().sum::<f32>() / v.len() as f32)
    })
    .unwrap();
    assert!(matches!(
        w.set_summary("nope", |c| c),
        Err(Error::UnknownKey(_))
    ));
    w.write_record(record(2)).unwrap();
    w.finish().unwrap();
    let r = discover(dir.path()).unwrap()[0]
        .records(ReadOptions::default())
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(r.column[0].to_vec::<f32>().unwrap(), [5.0]);
    assert!(r.column[0].is_scalar());
}

#[test]
fn refuses_bad_records_without_writing_them() {
    let dir = TempDir::new("bad");
    let mut w = DatasetWriter::create(WriterOptions::new(dir.path()), KEYS).unwrap();
    let mut short = record(1);
    short.column.pop();
    assert!(matches!(
        w.write_record(short),
        Err(Error::ColumnCount {
            expected: 3,
            found: 2
        })
    ));
    let mut broken = record(1);
    broken.column[2].shape = vec![5];
    assert!(matches!(
        w.write_record(broken),
        Err(Error::Column { index: 2, .. })
    ));
    w.write_record(record(1)).unwrap();
    assert_eq!(w.finish().unwrap().records, 1);
}

#[test]
fn outputs_file_urls_and_refuses_hdfs() {
    let dir = TempDir::new("url");
    let url = format!("file://{}", dir.join("sub").display());
    let mut w = DatasetWriter::create(WriterOptions::new(&url), KEYS).unwrap();
    w.write_record(record(1)).unwrap();
    w.finish().unwrap();
    assert!(dir.join("sub/train.trace.0.1").is_file());
    let err = DatasetWriter::create(WriterOptions::new("hdfs://namenode:9000/trace"), KEYS)
        .err()
        .unwrap();
    assert!(matches!(err, Error::UnsupportedOutput { .. }));
    assert!(err.to_string().contains("not built in yet"), "{err}");
    let err = DatasetWriter::create(WriterOptions::new("swift://x@y"), KEYS)
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("swift:// scheme is not supported"),
        "{err}"
    );
}

#[test]
fn existing_files_are_refused_or_replaced() {
    let dir = TempDir::new("existing");
    let write = |overwrite: bool, n: i64, limit: f64| -> Result<usize, Error> {
        let opts = WriterOptions::new(dir.path())
            .overwrite(overwrite)
            .max_file_mb(limit);
        let mut w = DatasetWriter::create(opts, KEYS)?;
        for step in 1..=n {
            w.write_record(record(step))?;
        }
        Ok(w.finish()?.files.len())
    };
    assert_eq!(write(false, 4, 0.0).unwrap(), 4);
    let err = write(false, 1, 0.0).unwrap_err();
    assert!(
        err.to_string()
            .contains("already holds 8 file(s) of dataset train.trace.0"),
        "{err}"
    );
    // Replacing removes the old tail, so no stale file 3 or 4 remains.
    assert_eq!(write(true, 2, 0.0).unwrap(), 2);
    let ds = discover(dir.path()).unwrap();
    assert_eq!(ds[0].files.len(), 2);
    // Another rank beside it is not touched.
    let mut other = DatasetWriter::create(WriterOptions::new(dir.path()).rank(1), KEYS).unwrap();
    other.write_record(record(1)).unwrap();
    other.finish().unwrap();
    assert_eq!(discover(dir.path()).unwrap().len(), 2);
}

#[test]
fn a_tiny_queue_applies_backpressure_and_loses_nothing() {
    let dir = TempDir::new("queue");
    let opts = WriterOptions::new(dir.path())
        .queue_bytes(1)
        .max_file_mb(0.001)
        .sync_on_rollover(true);
    let mut w = DatasetWriter::create(opts, KEYS).unwrap();
    for step in 1..=200 {
        w.write_record(record(step)).unwrap();
    }
    let report = w.finish().unwrap();
    assert!(report.files.len() > 1);
    let records: Vec<Record> = discover(dir.path()).unwrap()[0]
        .records(ReadOptions::default())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(records, (1..=200).map(record).collect::<Vec<_>>());
}

#[test]
fn dropping_without_finish_writes_everything() {
    let dir = TempDir::new("drop");
    {
        let mut w = DatasetWriter::create(WriterOptions::new(dir.path()).max_file_mb(0.0005), KEYS)
            .unwrap();
        for step in 1..=10 {
            w.write_record(record(step)).unwrap();
        }
    }
    let ds = discover(dir.path()).unwrap();
    let (report, problems) = profkit_xdl::validate::check_dataset(&ds[0], ReadOptions::default());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(report.records, 10);
}

#[cfg(target_os = "linux")]
#[test]
fn finish_returns_the_first_io_error_and_later_writes_fail_fast() {
    let dir = TempDir::new("enospc");
    let mut w =
        DatasetWriter::create(WriterOptions::new(dir.path()).max_file_mb(0.0), KEYS).unwrap();
    // File 2 will be /dev/full: every write to it fails with ENOSPC.
    std::os::unix::fs::symlink("/dev/full", dir.join("train.trace.0.2")).unwrap();
    w.write_record(record(1)).unwrap();
    let mut later = None;
    for step in 2..=50 {
        if let Err(e) = w.write_record(record(step)) {
            later = Some(e);
            break;
        }
    }
    if let Some(e) = later {
        assert!(matches!(e, Error::WriterFailed(_)), "{e}");
    }
    let err = w.finish().unwrap_err();
    assert!(err.to_string().contains("train.trace.0.2"), "{err}");
    assert!(matches!(err.root(), Error::Io(_)), "{err}");
}

#[test]
fn a_writer_moves_between_threads() {
    let dir = TempDir::new("thread");
    let mut w = DatasetWriter::create(WriterOptions::new(dir.path()), KEYS).unwrap();
    w.write_record(record(1)).unwrap();
    let handle = std::thread::spawn(move || {
        w.write_record(record(2)).unwrap();
        w.finish().unwrap()
    });
    assert_eq!(handle.join().unwrap().records, 2);
}

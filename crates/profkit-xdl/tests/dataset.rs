//! Discovering datasets, reading a rank as one stream, and checking files against their metas.

mod common;

use common::{KEYS, TempDir, data_file, record, sample_dir};
use profkit_xdl::json::{dump_entries, write_dump};
use profkit_xdl::validate::{ProblemKind, check_dataset, check_file};
use profkit_xdl::{
    DatasetWriter, Error, Header, Meta, MetaCheck, Phase, ReadOptions, Record, WriterOptions,
    discover, parse_file_name, write_meta_file,
};

#[test]
fn file_names() {
    let n = parse_file_name("train.trace.0.5.meta").unwrap();
    assert_eq!(
        (
            n.id.phase,
            n.id.name.as_str(),
            n.id.rank,
            n.index,
            n.is_meta
        ),
        (Phase::Train, "trace", 0, 5, true)
    );
    let n = parse_file_name("test.my.trace.12.3").unwrap();
    assert_eq!(
        (
            n.id.phase,
            n.id.name.as_str(),
            n.id.rank,
            n.index,
            n.is_meta
        ),
        (Phase::Test, "my.trace", 12, 3, false)
    );
    for bad in [
        "train.trace.0",
        "eval.trace.0.1",
        "train.trace.0.0",
        "train.trace.01.1",
        "train..0.1",
        "train.trace.x.1",
        "train.trace.0.1.bak",
    ] {
        assert!(parse_file_name(bad).is_none(), "{bad}");
    }
    assert_eq!(n.id.data_file_name(4), "test.my.trace.12.4");
    assert_eq!(n.id.meta_file_name(4), "test.my.trace.12.4.meta");
}

#[test]
fn discovers_the_sample() {
    let ds = discover(sample_dir().join("input")).unwrap();
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0].id.to_string(), "train.trace.0");
    assert_eq!(
        ds[0].files.iter().map(|f| f.index).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(
        ds[0]
            .files
            .iter()
            .all(|f| f.data.is_some() && f.meta.is_some())
    );
    let records: Vec<Record> = ds[0]
        .records(ReadOptions::default())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        records.iter().map(|r| r.lstep).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6, 7]
    );
    let header = Header::new(["w", "loss", "flag", "ids", "d"]);
    let ids = records[3]
        .column_for(&header, "ids")
        .unwrap()
        .to_vec::<i64>()
        .unwrap();
    assert_eq!(ids, [4, -4]);
    assert_eq!(
        records[0]
            .column_for(&header, "flag")
            .unwrap()
            .to_bools()
            .unwrap(),
        [true, false]
    );
    assert_eq!(
        records[6]
            .column_for(&header, "d")
            .unwrap()
            .to_vec::<i8>()
            .unwrap(),
        [1, 2, 3]
    );
}

#[test]
fn columns_by_key_name_from_the_readers() {
    // The sample spans three data files; the dataset reader knows the keys once it has read.
    let ds = discover(sample_dir().join("input")).unwrap();
    let mut records = ds[0].records(ReadOptions::default());
    let mut ids = Vec::new();
    while let Some(record) = records.next() {
        let record = record.unwrap();
        ids.push(
            records
                .column(&record, "ids")
                .unwrap()
                .to_vec::<i64>()
                .unwrap(),
        );
        assert!(records.column(&record, "no such key").is_none());
    }
    assert_eq!(ids[3], [4, -4]);
    // One data file read alone.
    let (_, first) = ds[0].data_files().next().unwrap();
    let mut reader = profkit_xdl::DataReader::open(first, ReadOptions::default()).unwrap();
    let record = reader.next().unwrap().unwrap();
    assert_eq!(
        reader.column(&record, "flag").unwrap().to_bools().unwrap(),
        [true, false]
    );
    assert!(reader.column(&record, "FLAG").is_none());
    // From a header's keys, as the readers give them.
    assert_eq!(
        record.column_named(reader.keys(), "d"),
        record.column_for(&Header::new(["w", "loss", "flag", "ids", "d"]), "d")
    );
}

#[test]
fn the_sample_validates_with_the_quirk_accepted() {
    let ds = discover(sample_dir().join("input")).unwrap();
    let (report, problems) = check_dataset(&ds[0], ReadOptions::default());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(report.records, 7);
    assert_eq!(
        (
            report.meta.lstep_begin,
            report.meta.lstep_end,
            report.meta.gstep_end
        ),
        (1, 7, 107)
    );
    let checks: Vec<_> = report
        .files
        .iter()
        .map(|f| f.meta_check.clone().unwrap())
        .collect();
    assert_eq!(
        checks,
        [
            MetaCheck::Agrees,
            MetaCheck::Agrees,
            MetaCheck::AgreesWithQuirk
        ]
    );
    assert_eq!(report.columns[0].shapes, [vec![2, 3]]);
    assert_eq!(report.columns[1].shapes, [Vec::<i32>::new()]);
}

#[test]
fn the_dump_of_the_sample_is_the_writers_decoded_json() {
    let ds = discover(sample_dir().join("input")).unwrap();
    let mut out = Vec::new();
    let errors = write_dump(dump_entries(&ds), &mut out, ReadOptions::default(), Some(1)).unwrap();
    assert!(errors.is_empty());
    out.push(b'\n');
    let expected = std::fs::read(sample_dir().join("writer.decoded.json")).unwrap();
    assert!(out == expected, "dump differs from writer.decoded.json");
}

fn write_dataset(
    dir: &std::path::Path,
    rank: u64,
    steps: std::ops::RangeInclusive<i64>,
    limit: f64,
) {
    let mut w =
        DatasetWriter::create(WriterOptions::new(dir).rank(rank).max_file_mb(limit), KEYS).unwrap();
    for step in steps {
        w.write_record(record(step)).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn prefixes_and_single_files() {
    let dir = TempDir::new("prefix");
    write_dataset(dir.path(), 0, 1..=4, 0.0);
    write_dataset(dir.path(), 1, 1..=2, 0.0);
    std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
    assert_eq!(discover(dir.path()).unwrap().len(), 2);
    assert_eq!(discover(dir.join("train")).unwrap().len(), 2);
    let rank1 = discover(dir.join("train.trace.1")).unwrap();
    assert_eq!(
        (rank1.len(), rank1[0].id.rank, rank1[0].files.len()),
        (1, 1, 2)
    );
    // A prefix matches whole name parts: `train.trace.1` is not `train.trace.10`.
    assert!(discover(dir.join("train.trace.2")).is_err());
    let one = discover(dir.join("train.trace.0.3")).unwrap();
    assert_eq!(one[0].files.len(), 1);
    assert_eq!(one[0].files[0].index, 3);
    assert!(one[0].files[0].meta.is_some());
    let via_meta = discover(dir.join("train.trace.0.3.meta")).unwrap();
    assert_eq!(via_meta, one);
    let err = discover(dir.join("notes.txt")).unwrap_err();
    assert!(
        err.to_string().contains("not an XDL trace file name"),
        "{err}"
    );
    let err = discover(dir.join("nothing")).unwrap_err();
    assert!(err.to_string().contains("no XDL trace files"), "{err}");
}

#[test]
fn a_truncated_middle_file_loses_only_its_tail() {
    let dir = TempDir::new("trunc");
    // Two records per file: the limit trips once a file holds a header and two records.
    let two = (4
        + profkit_xdl::encode_header(&Header::new(KEYS)).len()
        + 2 * (4 + profkit_xdl::encode_record(&record(1)).len())) as f64
        / 1e6;
    write_dataset(dir.path(), 0, 1..=6, two);
    let ds = discover(dir.path()).unwrap().remove(0);
    assert_eq!(ds.files.len(), 3);
    let victim = ds.files[1].data.clone().unwrap();
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() - 5]).unwrap();
    let mut steps = Vec::new();
    let mut errors = Vec::new();
    for item in ds.records(ReadOptions::default()) {
        match item {
            Ok(r) => steps.push(r.lstep),
            Err(e) => errors.push(e),
        }
    }
    assert_eq!(errors.len(), 1);
    assert!(errors[0].is_truncation());
    assert!(errors[0].to_string().starts_with(&format!(
        "{}: truncated at byte {}",
        victim.display(),
        bytes.len() - 5
    )));
    assert_eq!(steps, [1, 2, 3, 5, 6]);
    let (report, problems) = check_dataset(&ds, ReadOptions::default());
    let kinds: Vec<_> = problems.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [ProblemKind::Truncated, ProblemKind::MetaMismatch],
        "{problems:?}"
    );
    assert!(report.files[1].truncated);
}

#[test]
fn gaps_missing_files_and_meta_disagreements() {
    let dir = TempDir::new("gaps");
    write_dataset(dir.path(), 0, 1..=5, 0.0);
    std::fs::remove_file(dir.join("train.trace.0.2")).unwrap();
    std::fs::remove_file(dir.join("train.trace.0.2.meta")).unwrap();
    std::fs::remove_file(dir.join("train.trace.0.3")).unwrap();
    std::fs::remove_file(dir.join("train.trace.0.4.meta")).unwrap();
    let mut meta = profkit_xdl::read_meta_file(dir.join("train.trace.0.5.meta")).unwrap();
    meta.gstep_end = 999;
    write_meta_file(dir.join("train.trace.0.5.meta"), &meta).unwrap();
    let ds = discover(dir.path()).unwrap().remove(0);
    let (_, problems) = check_dataset(&ds, ReadOptions::default());
    let text: Vec<String> = problems
        .iter()
        .map(|p| format!("{:?} {}", p.kind, p.message))
        .collect();
    assert_eq!(
        text,
        [
            "IndexGap file index 2 is missing from dataset train.trace.0",
            "MissingData meta file without its data file",
            "MissingMeta data file without its meta file",
            "MetaMismatch disagrees with its data file: gstep_end is 999, the data says 105",
        ]
    );
}

#[test]
fn header_mismatch_across_files() {
    let dir = TempDir::new("headers");
    write_dataset(dir.path(), 0, 1..=2, 0.0);
    let mut other = data_file(&[record(3)]);
    // Same length key, different name: "w" -> "v".
    other[6] = b'v';
    std::fs::write(dir.join("train.trace.0.3"), &other).unwrap();
    let mut t = profkit_xdl::MetaTracker::new();
    t.add(&record(3));
    write_meta_file(dir.join("train.trace.0.3.meta"), &t.meta()).unwrap();
    let ds = discover(dir.path()).unwrap().remove(0);
    let items: Vec<_> = ds.records(ReadOptions::default()).collect();
    assert_eq!(items.len(), 3);
    assert!(matches!(
        items[2].as_ref().unwrap_err().root(),
        Error::HeaderMismatch { .. }
    ));
    let (_, problems) = check_dataset(&ds, ReadOptions::default());
    assert_eq!(
        problems.iter().map(|p| p.kind).collect::<Vec<_>>(),
        [ProblemKind::HeaderMismatch]
    );
}

#[test]
fn record_level_problems_are_all_reported() {
    let dir = TempDir::new("records");
    let mut short = record(2);
    short.column.pop();
    let mut bad_len = record(3);
    bad_len.column[0].data = bad_len.column[0].data.slice(..20);
    let mut bad_bool = record(4);
    bad_bool.column[2].data = vec![1u8, 2].into();
    let mut unknown = record(5);
    unknown.column[1].dtype = 42;
    let bytes = data_file(&[record(1), short, bad_len, bad_bool, unknown, record(6)]);
    let path = dir.join("train.trace.0.1");
    std::fs::write(&path, bytes).unwrap();
    let (report, problems) = check_file(&path, ReadOptions::default());
    assert_eq!(report.records, 6);
    let kinds: Vec<_> = problems.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ProblemKind::ColumnCount,
            ProblemKind::Column,
            ProblemKind::BoolValue,
            ProblemKind::Column
        ]
    );
    assert!(
        problems
            .iter()
            .all(|p| p.frame.is_some() && p.offset.is_some())
    );
    assert_eq!(problems[1].frame, Some(3));
    assert!(
        problems[1].to_string().contains(
            "column 0 (\"w\"): Float column of shape [2, 3] needs 24 bytes of data, has 20"
        ),
        "{}",
        problems[1]
    );
    assert!(report.columns[1].dtypes.contains("42"));
}

#[test]
fn an_empty_file_is_the_original_writer_with_nothing_traced() {
    let dir = TempDir::new("empty");
    std::fs::write(dir.join("train.trace.0.1"), b"").unwrap();
    write_meta_file(dir.join("train.trace.0.1.meta"), &Meta::UNSET).unwrap();
    let ds = discover(dir.path()).unwrap().remove(0);
    let (report, problems) = check_dataset(&ds, ReadOptions::default());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((report.records, report.files[0].has_header), (0, false));
    assert_eq!(ds.records(ReadOptions::default()).count(), 0);
}

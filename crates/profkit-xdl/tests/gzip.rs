//! Gzipped datasets: data and meta files compressed (named `*.gz`, or under their plain names)
//! read, discover and check like the plain ones.

mod common;

use std::io::Write;
use std::path::Path;

use common::{TempDir, sample_dir};
use profkit_xdl::validate::{check_dataset, check_file};
use profkit_xdl::{DataReader, FileSource, ReadOptions, Record, discover, read_meta_file};

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// The sample dataset with every file gzipped: data files as `<name>.gz`, meta files as
/// `<name>.meta.gz` except the second, gzipped under its plain name (the content decides).
fn gzipped_sample(dir: &TempDir) {
    for entry in std::fs::read_dir(sample_dir().join("input")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let target = if name == "train.trace.0.2.meta" {
            name
        } else {
            format!("{name}.gz")
        };
        std::fs::write(dir.join(&target), gzip(&std::fs::read(&path).unwrap())).unwrap();
    }
}

fn records(dir: &Path) -> Vec<Record> {
    let datasets = discover(dir).unwrap();
    assert_eq!(datasets.len(), 1);
    datasets[0]
        .records(ReadOptions::default())
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_gzipped_dataset_reads_like_the_plain_one() {
    let dir = TempDir::new("gzip-dataset");
    gzipped_sample(&dir);
    let plain_dir = sample_dir().join("input");
    let plain = discover(&plain_dir).unwrap();
    let gz = discover(dir.path()).unwrap();
    assert_eq!(gz.len(), 1);
    assert_eq!(gz[0].id, plain[0].id);
    assert_eq!(
        gz[0].files.iter().map(|f| f.index).collect::<Vec<_>>(),
        plain[0].files.iter().map(|f| f.index).collect::<Vec<_>>()
    );
    assert!(
        gz[0]
            .files
            .iter()
            .all(|f| f.data.is_some() && f.meta.is_some())
    );
    let got = records(dir.path());
    assert_eq!(got.len(), 7);
    assert_eq!(got, records(&plain_dir));

    // The check finds the same: every meta agrees with its (gzipped) data file.
    let (report, problems) = check_dataset(&gz[0], ReadOptions::default());
    let (plain_report, plain_problems) = check_dataset(&plain[0], ReadOptions::default());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(plain_problems.len(), problems.len());
    assert_eq!(report.records, plain_report.records);
    assert_eq!(report.meta, plain_report.meta);
    assert_eq!(
        report
            .files
            .iter()
            .map(|f| f.meta_check.clone())
            .collect::<Vec<_>>(),
        plain_report
            .files
            .iter()
            .map(|f| f.meta_check.clone())
            .collect::<Vec<_>>()
    );

    // One file asked for by its gzipped name: discovery pairs it with its gzipped meta, and the
    // file check finds that meta too.
    let one = discover(dir.join("train.trace.0.1.gz")).unwrap();
    assert_eq!(one[0].files.len(), 1);
    assert!(one[0].files[0].meta.is_some());
    let (file_report, problems) =
        check_file(&dir.join("train.trace.0.1.gz"), ReadOptions::default());
    assert!(problems.is_empty(), "{problems:?}");
    assert!(file_report.stored_meta.is_some());

    // Meta files read through gzip, whatever their name.
    for name in ["train.trace.0.1.meta.gz", "train.trace.0.2.meta"] {
        let meta = read_meta_file(dir.join(name)).unwrap();
        let plain_name = name.strip_suffix(".gz").unwrap_or(name);
        assert_eq!(meta, read_meta_file(plain_dir.join(plain_name)).unwrap());
    }
    let source = FileSource::open(dir.join("train.trace.0.1.gz")).unwrap();
    assert!(source.is_gzip());
    assert!(
        !FileSource::open(plain_dir.join("train.trace.0.1"))
            .unwrap()
            .is_gzip()
    );
}

#[test]
fn plain_and_gzipped_copies_of_a_file_read_once() {
    let dir = TempDir::new("gzip-both");
    gzipped_sample(&dir);
    for entry in std::fs::read_dir(sample_dir().join("input")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap().to_str().unwrap())).unwrap();
    }
    let datasets = discover(dir.path()).unwrap();
    assert!(
        datasets[0].files.iter().all(|f| !f
            .data
            .as_ref()
            .unwrap()
            .to_string_lossy()
            .ends_with(".gz"))
    );
    assert_eq!(records(dir.path()).len(), 7);
}

#[test]
fn a_cut_gzip_stream_is_an_error_naming_the_file() {
    let dir = TempDir::new("gzip-cut");
    let data = std::fs::read(sample_dir().join("input/train.trace.0.1")).unwrap();
    let zipped = gzip(&data);
    for cut in [3, 10, zipped.len() / 2, zipped.len() - 4] {
        let path = dir.join("train.trace.0.1.gz");
        std::fs::write(&path, &zipped[..cut]).unwrap();
        let result = DataReader::open(&path, ReadOptions::default())
            .and_then(|reader| reader.collect::<Result<Vec<_>, _>>().map(|_| ()));
        match result {
            Err(e) => {
                let e = e.in_file(&path);
                assert!(e.to_string().contains("train.trace.0.1.gz"), "{e}");
            }
            Ok(()) => panic!("a gzip stream cut at {cut} of {} read whole", zipped.len()),
        }
        let datasets = discover(dir.path()).unwrap();
        let results: Vec<_> = datasets[0].records(ReadOptions::default()).collect();
        assert!(results.iter().any(Result::is_err), "cut at {cut}");
    }
}

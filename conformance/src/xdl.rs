//! The `xdl` format: XDL tensor trace datasets read and written with `profkit-xdl`.
//!
//! A case holds `input/`, a directory of trace files. The outputs are `inspect.json` (what
//! `profkit inspect --json` reports per dataset and file: keys, dtypes, shapes, steps, metas),
//! `dump.json` (every record with decoded values, as `profkit dump` prints it, in the form of the
//! original sample's `writer.decoded.json`) and `validate.txt` (one line per problem, empty when
//! the datasets are valid); `error.txt` instead when `input/` holds no dataset. Paths are relative
//! to the case folder.
//!
//! A case may also hold `writer.decoded.json` (the records a writer was given, in the dump's form)
//! and `write-options.json` (`{"max_file_mb", "phase", "name", "rank"}`). Then our writer writes
//! those records and `write.txt` lists each file it made and whether it is byte-identical to the
//! file of the same name in `input/`.
//!
//! Asserted rather than recorded: for a case without problems, the dump reads back (through
//! [`profkit_xdl::json`]) to records that encode to the very bytes of the input frames; the
//! streaming dataset reader yields the same records as the dump; and with `write-options.json`
//! every data file our writer makes is byte-identical to the input's, and every meta file holds the
//! meta computed from its data.

use std::path::{Path, PathBuf};

use profkit_xdl::json::{dump_entries, record_from_json, write_dump};
use profkit_xdl::validate::{Problem, check_dataset};
use profkit_xdl::{
    DataReader, DatasetWriter, Phase, ReadOptions, WriterOptions, discover, encode_record,
    read_meta_file,
};
use serde_json::Value;

use crate::{Format, GeneratedFile, Outputs};

/// The input directory of every xdl case.
pub const INPUT: &str = "input";
/// The writer's inputs, when the case has some.
pub const WRITER_INPUT: &str = "writer.decoded.json";
/// The writer's options, when the case has some.
pub const WRITE_OPTIONS: &str = "write-options.json";

/// The handler for `conformance/xdl/`.
pub struct XdlFormat;

impl Format for XdlFormat {
    fn name(&self) -> &'static str {
        "xdl"
    }

    fn output_names(&self) -> &'static [&'static str] {
        &[
            "inspect.json",
            "dump.json",
            "validate.txt",
            "write.txt",
            "chrome.json",
            "error.txt",
        ]
    }

    fn run(&self, case_dir: &Path) -> Result<Outputs, String> {
        run_case(case_dir)
    }

    fn generated_inputs(&self) -> Vec<GeneratedFile> {
        crate::xdl_cases::cases()
    }
}

/// Makes `path` relative to the case folder, for outputs that do not depend on where the
/// repository is.
fn rel(case_dir: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(case_dir)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

fn problem_line(case_dir: &Path, p: &Problem) -> String {
    let mut p = p.clone();
    p.file = p.file.map(|f| rel(case_dir, &f));
    format!("{:?}: {p}\n", p.kind)
}

/// The outputs for one case folder (see the module documentation).
pub fn run_case(case_dir: &Path) -> Result<Outputs, String> {
    let mut outputs = Outputs::new();
    let input = case_dir.join(INPUT);
    let datasets = match discover(&input) {
        Ok(d) => d,
        Err(e) => {
            let text = e
                .to_string()
                .replace(&format!("{}/", case_dir.display()), "");
            outputs.insert("error.txt".into(), format!("{text}\n").into_bytes());
            return Ok(outputs);
        }
    };
    let options = ReadOptions::default();

    let mut reports = Vec::new();
    let mut problems = String::new();
    let mut clean = true;
    for dataset in &datasets {
        let (mut report, found) = check_dataset(dataset, options);
        clean &= found.is_empty();
        report.dir = rel(case_dir, &report.dir);
        for f in &mut report.files {
            f.path = f.path.as_deref().map(|p| rel(case_dir, p));
        }
        reports.push(report);
        problems.extend(found.iter().map(|p| problem_line(case_dir, p)));
    }
    let inspect = serde_json::to_string_pretty(&reports)
        .map_err(|e| format!("cannot serialise the reports: {e}"))?;
    outputs.insert("inspect.json".into(), format!("{inspect}\n").into_bytes());
    outputs.insert("validate.txt".into(), problems.into_bytes());

    if clean {
        let space = profkit_convert::xdl::datasets_to_xspace(&datasets, options)
            .map_err(|e| format!("the XSpace conversion fails: {e}"))?;
        let mut chrome = Vec::new();
        // As `profkit convert` writes any input but an XSpace.
        let chrome_options = profkit_xprof::trace_viewer::TraceViewerOptions::of_layout(
            profkit_xprof::trace_viewer::Layout::TraceEvent,
        );
        profkit_xprof::trace_viewer::write_space(&space, &mut chrome, &chrome_options)
            .map_err(|e| format!("the Chrome conversion fails: {e}"))?;
        outputs.insert("chrome.json".into(), chrome);
    }

    let mut dump = Vec::new();
    write_dump(dump_entries(&datasets), &mut dump, options, Some(1))
        .map_err(|e| format!("cannot write the dump: {e}"))?;
    dump.push(b'\n');
    if clean {
        check_dump(&datasets, &dump)?;
    }
    outputs.insert("dump.json".into(), dump);

    if case_dir.join(WRITER_INPUT).is_file() {
        outputs.insert("write.txt".into(), run_writer(case_dir)?.into_bytes());
    }
    Ok(outputs)
}

/// The dump reads back to records encoding to the input's frames, and the dataset reader agrees.
fn check_dump(datasets: &[profkit_xdl::Dataset], dump: &[u8]) -> Result<(), String> {
    let doc: Value =
        serde_json::from_slice(dump).map_err(|e| format!("the dump is not JSON: {e}"))?;
    for dataset in datasets {
        let mut streamed = dataset.records(ReadOptions::default());
        for (index, path) in dataset.data_files() {
            let name = dataset.id.data_file_name(index);
            let records = doc[&name]["records"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let mut reader =
                DataReader::open(path, ReadOptions::default()).map_err(|e| e.to_string())?;
            for (i, json) in records.iter().enumerate() {
                let (frame, _) = reader
                    .next_with_frame()
                    .ok_or_else(|| format!("{name}: the dump has more records than the file"))?
                    .map_err(|e| e.to_string())?;
                let back = record_from_json(json, &format!("{name}.records[{i}]"))
                    .map_err(|e| e.to_string())?;
                if encode_record(&back) != frame.data {
                    return Err(format!(
                        "{name}: record {i} of the dump does not encode to the file's frame"
                    ));
                }
                let other = streamed
                    .next()
                    .ok_or_else(|| format!("{name}: the dataset reader ends early"))?
                    .map_err(|e| e.to_string())?;
                if encode_record(&other) != frame.data {
                    return Err(format!("{name}: the dataset reader's record {i} differs"));
                }
            }
            if reader.next().is_some() {
                return Err(format!("{name}: the file has more records than the dump"));
            }
        }
        if streamed.next().is_some() {
            return Err(format!(
                "{}: the dataset reader yields extra records",
                dataset.id
            ));
        }
    }
    Ok(())
}

/// Writes the case's writer inputs with our writer into a scratch folder and compares.
fn run_writer(case_dir: &Path) -> Result<String, String> {
    let read_json = |name: &str| -> Result<Value, String> {
        let text =
            std::fs::read(case_dir.join(name)).map_err(|e| format!("cannot read {name}: {e}"))?;
        serde_json::from_slice(&text).map_err(|e| format!("{name}: {e}"))
    };
    let inputs = read_json(WRITER_INPUT)?;
    let opts = if case_dir.join(WRITE_OPTIONS).is_file() {
        read_json(WRITE_OPTIONS)?
    } else {
        Value::Null
    };
    let phase = match opts["phase"].as_str().unwrap_or("train") {
        "test" => Phase::Test,
        _ => Phase::Train,
    };
    let scratch = std::env::temp_dir().join(format!(
        "conformance-xdl-{}-{}",
        std::process::id(),
        case_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    let options = WriterOptions::new(&scratch)
        .phase(phase)
        .name(opts["name"].as_str().unwrap_or("trace"))
        .rank(opts["rank"].as_u64().unwrap_or(0))
        .max_file_mb(
            opts["max_file_mb"]
                .as_f64()
                .unwrap_or(profkit_xdl::writer::DEFAULT_MAX_FILE_MB),
        );

    // The writer gets the records of every data file in order, with the first file's header.
    let obj = inputs
        .as_object()
        .ok_or("writer.decoded.json is not an object")?;
    let mut names: Vec<&String> = obj.keys().filter(|k| !k.ends_with(".meta")).collect();
    names.sort_by_key(|n| profkit_xdl::parse_file_name(n).map(|p| p.index));
    let first = names
        .first()
        .ok_or("writer.decoded.json has no data file")?;
    let keys = profkit_xdl::json::header_from_json(&obj[first.as_str()]["header"], "header")
        .map_err(|e| e.to_string())?;
    let mut writer = DatasetWriter::create(options, keys.key).map_err(|e| e.to_string())?;
    for name in &names {
        for (i, r) in obj[name.as_str()]["records"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let record =
                record_from_json(r, &format!("{name}.records[{i}]")).map_err(|e| e.to_string())?;
            writer.write_record(record).map_err(|e| e.to_string())?;
        }
    }
    let report = writer.finish().map_err(|e| e.to_string())?;

    let mut text = String::new();
    for path in &report.files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ours = std::fs::read(path).map_err(|e| e.to_string())?;
        let theirs = std::fs::read(case_dir.join(INPUT).join(&name)).ok();
        let same = theirs.as_deref() == Some(ours.as_slice());
        if !same {
            let _ = std::fs::remove_dir_all(&scratch);
            return Err(format!(
                "our writer's {name} is not byte-identical to input/{name}"
            ));
        }
        let meta = read_meta_file(format!("{}.meta", path.display())).map_err(|e| e.to_string())?;
        let (report, _) = profkit_xdl::validate::check_file(path, ReadOptions::default());
        if meta != report.meta {
            let _ = std::fs::remove_dir_all(&scratch);
            return Err(format!(
                "our writer's {name}.meta is not the meta of its data"
            ));
        }
        let theirs_meta = read_meta_file(case_dir.join(INPUT).join(format!("{name}.meta"))).ok();
        text.push_str(&format!(
            "{name}: {} bytes, identical to input/{name}; meta {}\n",
            ours.len(),
            match theirs_meta {
                Some(m) if m == meta => "identical to the input's".to_owned(),
                Some(_) => "corrected (the input's differs)".to_owned(),
                None => "written (the input has none)".to_owned(),
            }
        ));
    }
    text.push_str(&format!(
        "{} records, {} bytes in {} files\n",
        report.records,
        report.bytes,
        report.files.len()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(text)
}

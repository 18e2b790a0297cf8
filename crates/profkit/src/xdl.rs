//! The commands for XDL tensor traces. An input is a directory of datasets, a path prefix, one data
//! or meta file, or a data file on standard input. Everything streams record by record.

use std::io::Write;
use std::path::{Path, PathBuf};

use profkit_xdl::json::{DumpEntry, DumpSource, MetaView, dump_entries, write_dump};
use profkit_xdl::validate::{
    DatasetReport, FileReport, KeySummary, Problem, check_data, check_dataset,
};
use profkit_xdl::{Dataset, DatasetWriter, MetaCheck, ReadOptions, WriterOptions, discover};

use crate::Failure;
use crate::input::Input;
use crate::output::{Temp, follow_links};

/// What an input holds: datasets found by name, or one data stream.
enum Source {
    Datasets(Vec<Dataset>),
    Stream(Input),
    /// A meta file whose name is not a trace file name: shown on its own.
    Meta(PathBuf),
}

fn source(input: Input) -> Result<Source, Failure> {
    let Some(path) = input.path.clone() else {
        return Ok(Source::Stream(input));
    };
    match discover(&path) {
        Ok(datasets) => Ok(Source::Datasets(datasets)),
        Err(_) if profkit_xdl::is_meta_path(&path) => Ok(Source::Meta(path)),
        // A data file under another name: read it alone.
        Err(_) if path.is_file() => Ok(Source::Stream(input)),
        Err(e) => Err(Failure::BadInput(e.to_string())),
    }
}

/// What a check of an input found.
type Checked = (Vec<DatasetReport>, Vec<FileReport>, Vec<Problem>);

/// Reads and checks everything: per dataset (or the one stream) a report and its problems.
fn check(source: Source, name: &str) -> Result<Checked, Failure> {
    let options = ReadOptions::default();
    let mut problems = Vec::new();
    match source {
        Source::Datasets(datasets) => {
            let mut reports = Vec::new();
            for dataset in &datasets {
                let (report, found) = check_dataset(dataset, options);
                reports.push(report);
                problems.extend(found);
            }
            Ok((reports, Vec::new(), problems))
        }
        Source::Stream(input) => {
            let path = input.path.clone().unwrap_or_else(|| PathBuf::from(name));
            let (report, found) = check_data(input.reader, Some(&path), options);
            problems.extend(found);
            Ok((Vec::new(), vec![report], problems))
        }
        Source::Meta(path) => {
            profkit_xdl::read_meta_file(&path).map_err(|e| Failure::BadInput(e.to_string()))?;
            Ok((Vec::new(), Vec::new(), problems))
        }
    }
}

/// Whether a problem means the data could not be read whole (as opposed to being inconsistent).
fn is_read_failure(p: &Problem) -> bool {
    use profkit_xdl::validate::ProblemKind as K;
    matches!(
        p.kind,
        K::Truncated | K::Framing | K::Decode | K::Io | K::MetaUnreadable
    )
}

fn json_out(doc: &serde_json::Value) -> Result<(), Failure> {
    crate::session::json(doc)
}

pub(crate) fn inspect(input: Input, json: bool) -> Result<(), Failure> {
    let name = input.name.clone();
    let src = source(input)?;
    if let Source::Meta(path) = &src {
        return show_meta(path, &name, json);
    }
    let (datasets, files, problems) = check(src, &name)?;
    let unreadable: Vec<&Problem> = problems.iter().filter(|p| is_read_failure(p)).collect();
    if json {
        json_out(&serde_json::json!({
            "input": name,
            "format": "xdl",
            "datasets": datasets,
            "files": files,
            "problems": problems,
        }))?;
    } else {
        let mut out = crate::session::stdout();
        write_inspect(&mut out, &name, &datasets, &files, &problems).map_err(Failure::Output)?;
    }
    if unreadable.is_empty() {
        Ok(())
    } else {
        for p in unreadable {
            crate::session::note(p);
        }
        Err(Failure::Invalid)
    }
}

fn show_meta(path: &Path, name: &str, json: bool) -> Result<(), Failure> {
    let meta = profkit_xdl::read_meta_file(path).map_err(|e| Failure::BadInput(e.to_string()))?;
    let mut out = crate::session::stdout();
    if json {
        drop(out);
        return json_out(
            &serde_json::json!({ "input": name, "format": "xdl", "meta": MetaView(&meta) }),
        );
    }
    writeln!(out, "{name}: XDL meta file").map_err(Failure::Output)?;
    for (field, value) in meta.fields() {
        writeln!(out, "  {field}: {value}").map_err(Failure::Output)?;
    }
    Ok(())
}

fn range(begin: i64, end: i64) -> String {
    if begin == end {
        begin.to_string()
    } else {
        format!("{begin} to {end}")
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn shape_text(shape: &[i32]) -> String {
    let dims: Vec<String> = shape.iter().map(i32::to_string).collect();
    format!("[{}]", dims.join(", "))
}

fn write_keys(out: &mut impl Write, columns: &[KeySummary]) -> std::io::Result<()> {
    if columns.is_empty() {
        return Ok(());
    }
    writeln!(out, "  keys:")?;
    let width = crate::text::width(columns.iter().map(|c| c.key.as_str()));
    for c in columns {
        let dtypes: Vec<&str> = c.dtypes.iter().map(String::as_str).collect();
        let mut shapes: Vec<String> = c.shapes.iter().map(|s| shape_text(s)).collect();
        if c.more_shapes {
            shapes.push("...".into());
        }
        let scalar = if c.shapes.len() == 1 && c.shapes.first().is_some_and(Vec::is_empty) {
            " (scalar)"
        } else {
            ""
        };
        writeln!(
            out,
            "    {:width$}  {:7} {}{scalar}  ({} bytes of data)",
            crate::text::clip(&c.key),
            dtypes.join("|"),
            shapes.join(" | "),
            c.data_bytes,
            width = width
        )?;
    }
    Ok(())
}

fn meta_text(f: &FileReport) -> &'static str {
    match &f.meta_check {
        None => "no meta file",
        Some(MetaCheck::Agrees) => "meta agrees",
        Some(MetaCheck::AgreesWithQuirk) => "meta agrees (original writer's -1 begin quirk)",
        Some(MetaCheck::Disagrees(_)) => "meta DISAGREES",
    }
}

fn write_file_line(out: &mut impl Write, f: &FileReport) -> std::io::Result<()> {
    let name = f
        .path
        .as_deref()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let index = f.index.map(|i| format!("{i:>3}  ")).unwrap_or_default();
    let mut line = format!(
        "    {index}{name}  {} bytes  {}",
        f.bytes,
        plural(f.records, "record", "records")
    );
    if f.records > 0 {
        line.push_str(&format!(
            "  lstep {}  gstep {}",
            range(f.meta.lstep_begin, f.meta.lstep_end),
            range(f.meta.gstep_begin, f.meta.gstep_end)
        ));
    }
    if f.index.is_some() {
        line.push_str(&format!("  {}", meta_text(f)));
    }
    if f.truncated {
        line.push_str("  TRUNCATED");
    }
    writeln!(out, "{line}")
}

fn write_inspect(
    out: &mut impl Write,
    name: &str,
    datasets: &[DatasetReport],
    files: &[FileReport],
    problems: &[Problem],
) -> std::io::Result<()> {
    if datasets.is_empty() {
        writeln!(out, "{name}: XDL data file")?;
        for f in files {
            writeln!(out, "  records: {}, bytes: {}", f.records, f.bytes)?;
            if f.records > 0 {
                writeln!(
                    out,
                    "  steps: lstep {}, gstep {}, timestamps {} (ms)",
                    range(f.meta.lstep_begin, f.meta.lstep_end),
                    range(f.meta.gstep_begin, f.meta.gstep_end),
                    range(f.meta.timestamp_begin, f.meta.timestamp_end)
                )?;
            }
            write_keys(out, &f.columns)?;
        }
    } else {
        let records: u64 = datasets.iter().map(|d| d.records).sum();
        let mut ranks: Vec<u64> = datasets.iter().map(|d| d.rank).collect();
        ranks.sort_unstable();
        ranks.dedup();
        let ranks: Vec<String> = ranks.iter().map(u64::to_string).collect();
        writeln!(
            out,
            "{name}: XDL trace, {}, {} {}, {}",
            plural(datasets.len() as u64, "dataset", "datasets"),
            if ranks.len() == 1 { "rank" } else { "ranks" },
            ranks.join(", "),
            plural(records, "record", "records")
        )?;
        for d in datasets {
            writeln!(out)?;
            writeln!(
                out,
                "dataset {} (rank {}): {}, {}",
                d.id(),
                d.rank,
                plural(d.files.len() as u64, "file", "files"),
                plural(d.records, "record", "records")
            )?;
            if d.records > 0 {
                writeln!(
                    out,
                    "  steps: lstep {}, gstep {}, timestamps {} (ms)",
                    range(d.meta.lstep_begin, d.meta.lstep_end),
                    range(d.meta.gstep_begin, d.meta.gstep_end),
                    range(d.meta.timestamp_begin, d.meta.timestamp_end)
                )?;
            }
            write_keys(out, &d.columns)?;
            writeln!(out, "  files:")?;
            for f in &d.files {
                write_file_line(out, f)?;
            }
        }
    }
    if !problems.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{} found (see `profkit validate`)",
            plural(problems.len() as u64, "problem", "problems")
        )?;
    }
    Ok(())
}

pub(crate) fn dump(input: Input) -> Result<(), Failure> {
    let name = input.name.clone();
    let entries = match source(input)? {
        Source::Datasets(datasets) => dump_entries(&datasets),
        Source::Stream(input) => vec![DumpEntry {
            name: input
                .path
                .as_deref()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or(name),
            source: DumpSource::Data(Box::new(input.reader)),
        }],
        Source::Meta(path) => vec![DumpEntry {
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or(name),
            source: DumpSource::MetaFile(path),
        }],
    };
    let out = crate::session::stdout();
    let mut out = std::io::BufWriter::new(out);
    let errors =
        write_dump(entries, &mut out, ReadOptions::default(), Some(1)).map_err(Failure::Output)?;
    writeln!(out).map_err(Failure::Output)?;
    out.flush().map_err(Failure::Output)?;
    if errors.is_empty() {
        return Ok(());
    }
    for e in &errors {
        crate::session::note(e);
    }
    Err(Failure::Invalid)
}

pub(crate) fn validate(input: Input, json: bool, mut cap: crate::cap::Cap) -> Result<(), Failure> {
    let name = input.name.clone();
    let src = source(input)?;
    let (datasets, files, problems) = check(src, &name)?;
    let records: u64 = datasets.iter().map(|d| d.records).sum::<u64>()
        + files.iter().map(|f| f.records).sum::<u64>();
    let file_count = datasets.iter().map(|d| d.files.len()).sum::<usize>() + files.len();
    if json {
        let (listed, not_listed) = cap.json_problems(&problems);
        json_out(&crate::cap::with_not_listed(
            serde_json::json!({
                "input": name,
                "format": "xdl",
                "valid": problems.is_empty(),
                "problems": listed,
            }),
            not_listed,
        ))?;
    } else {
        let mut out = crate::session::stdout();
        if problems.is_empty() {
            writeln!(
                out,
                "{name}: valid XDL trace ({}, {}, {})",
                plural(datasets.len() as u64, "dataset", "datasets"),
                plural(file_count as u64, "data file", "data files"),
                plural(records, "record", "records")
            )
            .map_err(Failure::Output)?;
        } else {
            for p in &problems {
                if cap.admit(&format!("{:?}", p.kind)) {
                    writeln!(out, "{p}").map_err(Failure::Output)?;
                }
            }
            for rest in cap.rest() {
                writeln!(out, "{name}: {rest}").map_err(Failure::Output)?;
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Failure::Invalid)
    }
}

/// `profkit convert IN... OUT --to xdl`: rewrites each dataset into `out` with its phase, name and
/// rank, passing every record frame through unchanged, split at `max_file_mb`.
///
/// Nothing appears in OUT before every dataset is written: they go to a temporary directory (OUT's
/// sibling `OUT.profkit-<pid>.tmp` when OUT is new, which is then renamed to OUT; a hidden
/// `OUT/.xdl.profkit-<pid>.tmp` when OUT exists, whose files are then moved in, replacing those of
/// the same datasets with `--overwrite`). A failure or a signal removes it.
pub(crate) fn convert(
    inputs: Vec<Input>,
    out: &Path,
    max_file_mb: Option<f64>,
    overwrite: bool,
) -> Result<(), Failure> {
    if out.as_os_str() == "-" {
        return Err(Failure::Usage(
            "--to xdl writes a dataset directory (data and .meta files), which standard output cannot hold: name a directory"
                .into(),
        ));
    }
    let out_dir =
        profkit_xdl::local_output_dir(out).map_err(|e| Failure::BadInput(e.to_string()))?;
    // A link to a directory is written through (the link stays); trailing slashes go.
    let target: PathBuf = follow_links(&out_dir)
        .map_err(|e| Failure::BadInput(format!("{}: cannot open: {e}", out_dir.display())))?
        .components()
        .collect();
    let exists = match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => true,
        Ok(_) => {
            return Err(Failure::Usage(format!(
                "{}: is not a directory: --to xdl writes a dataset directory (data and .meta files)",
                out_dir.display()
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            return Err(Failure::BadInput(format!(
                "{}: cannot open: {e}",
                out_dir.display()
            )));
        }
    };
    let mut datasets: Vec<Dataset> = Vec::new();
    for input in inputs {
        let Some(path) = input.path.clone() else {
            return Err(Failure::Usage(
                "cannot convert an XDL trace from standard input: a dataset's phase, name and rank come from its file names"
                    .into(),
            ));
        };
        let found = discover(&path).map_err(|e| Failure::BadInput(e.to_string()))?;
        for d in found {
            if let Some(other) = datasets.iter().find(|o| o.id == d.id) {
                return Err(Failure::BadInput(format!(
                    "dataset {} is in both {} and {}",
                    d.id,
                    other.dir.display(),
                    d.dir.display()
                )));
            }
            datasets.push(d);
        }
    }
    let same_dir = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if let Some(d) = datasets.iter().find(|d| same_dir(&d.dir, &out_dir)) {
        return Err(Failure::Usage(format!(
            "the output {} is the input directory of dataset {}; write to another directory",
            out_dir.display(),
            d.id
        )));
    }
    let cannot = |what: &str, e: std::io::Error| {
        Failure::BadInput(format!("{}: cannot {what}: {e}", out_dir.display()))
    };
    let temp = if exists {
        Temp::dir(&target.join(".xdl"))
    } else {
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| cannot("create", e))?;
        }
        Temp::dir(&target)
    }
    .map_err(|e| cannot("create a temporary directory", e))?;
    let limit = max_file_mb.unwrap_or(profkit_xdl::writer::DEFAULT_MAX_FILE_MB);
    let mut lines = Vec::new();
    let mut written: Vec<profkit_xdl::DatasetId> = Vec::new();
    for dataset in &datasets {
        let mut reader = dataset.records(ReadOptions::default());
        let keys = match reader.open_next() {
            None => {
                lines.push(format!("{}: no records, nothing written", dataset.id));
                continue;
            }
            Some(Err(e)) => return Err(Failure::BadInput(e.to_string())),
            Some(Ok(())) => reader.keys().map(<[String]>::to_vec).unwrap_or_default(),
        };
        if exists && !overwrite {
            let existing = dataset_files(&target, &dataset.id).map_err(|e| cannot("read", e))?;
            if let Some(first) = existing.first() {
                return Err(Failure::BadInput(format!(
                    "{}: already holds {} file(s) of dataset {} (such as {}); remove them or give --overwrite",
                    out_dir.display(),
                    existing.len(),
                    dataset.id,
                    out_dir.join(first).display()
                )));
            }
        }
        let options = WriterOptions::new(temp.path())
            .phase(dataset.id.phase)
            .name(dataset.id.name.clone())
            .rank(dataset.id.rank)
            .max_file_mb(limit);
        let mut writer =
            DatasetWriter::create(options, keys).map_err(|e| Failure::BadInput(e.to_string()))?;
        let mut failure = None;
        while let Some(item) = reader.next_with_frame() {
            match item {
                Ok((frame, record)) => {
                    // The writer decodes the frame again to check it: two decoded copies of a
                    // record of millions of columns would double the peak.
                    drop(record);
                    if let Err(e) = writer.write_encoded(frame.data) {
                        failure = Some(e.to_string());
                        break;
                    }
                }
                Err(e) => {
                    failure = Some(e.to_string());
                    break;
                }
            }
        }
        // The writer's IO thread is done with the temporary directory once `finish` returns.
        let finished = writer.finish();
        if let Some(reason) = failure {
            return Err(Failure::BadInput(format!(
                "{reason}; nothing was written to {}",
                out_dir.display()
            )));
        }
        let report = finished.map_err(|e| {
            Failure::BadInput(format!("{e}; nothing was written to {}", out_dir.display()))
        })?;
        lines.push(format!(
            "{}: wrote {} in {} to {}",
            dataset.id,
            plural(report.records, "record", "records"),
            plural(report.files.len() as u64, "file", "files"),
            out_dir.display()
        ));
        written.push(dataset.id.clone());
    }
    if written.is_empty() {
        drop(temp);
    } else if exists {
        temp.commit(|tmp| move_in(tmp, &target, &written))
            .map_err(|e| cannot("move the new files into place", e))?;
    } else {
        temp.commit(|tmp| std::fs::rename(tmp, &target))
            .map_err(|e| cannot("move the new dataset into place", e))?;
    }
    let mut stdout = crate::session::stdout();
    for line in lines {
        writeln!(stdout, "{line}").map_err(Failure::Output)?;
    }
    Ok(())
}

/// The names of the files of dataset `id` in `dir`, sorted.
fn dataset_files(dir: &Path, id: &profkit_xdl::DatasetId) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if profkit_xdl::parse_file_name(&name).is_some_and(|f| f.id == *id) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Moves the files written into `tmp` into `dir`: for each dataset written, the files of it that
/// `dir` holds and the new ones do not replace are removed first (only `--overwrite` lets there be
/// any), then the new files (each data file before its meta) are renamed in.
fn move_in(tmp: &Path, dir: &Path, written: &[profkit_xdl::DatasetId]) -> std::io::Result<()> {
    for id in written {
        let new = dataset_files(tmp, id)?;
        for old in dataset_files(dir, id)? {
            if !new.contains(&old) {
                std::fs::remove_file(dir.join(&old))?;
            }
        }
        for name in &new {
            std::fs::rename(tmp.join(name), dir.join(name))?;
        }
    }
    Ok(())
}

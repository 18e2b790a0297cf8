//! `profkit convert IN... OUT_DIR --to parquet`: each input a host of a Hive-partitioned Parquet
//! dataset (`OUT_DIR/host=<host>/table=<table>/*.parquet`, see profkit-arrow).
//!
//! XSpaces stream plane by plane; the other formats are read whole into an XSpace first. The host
//! is the one `--host` gives, else named after the input file as xprof names hosts
//! (`<host>.xplane.pb` gives `host`, any other file its stem), except that an XSpace whose file
//! name says nothing (`host.xplane.pb`, `input.xplane.pb.gz`) is named after the `hostnames` it
//! records; Poplar's graph and execution profiles make one host together, named after the
//! execution profile. A host already in the dataset is refused (before anything is written)
//! unless `--overwrite` replaces it; other hosts are never rewritten.

use std::path::{Path, PathBuf};

use profkit_arrow::dataset::{host_name, hosts};
use profkit_arrow::sources::{self, Prepared};
use profkit_arrow::{HostInfo, HostWriter, Options, WriteOptions};
use profkit_poplar::ProfileFile;
use profkit_xplane::ReadOptions;

use crate::Failure;
use crate::format::Format;
use crate::hosts::host_of;
use crate::input::Input;
use crate::output::{Temp, holding_signals};

fn bad(name: &str, e: profkit_arrow::Error) -> Failure {
    match e {
        profkit_arrow::Error::Interrupted => {
            Failure::Output(std::io::Error::other(crate::session::CANCELLED))
        }
        profkit_arrow::Error::Io { .. } => Failure::BadInput(e.to_string()),
        profkit_arrow::Error::Dataset { .. } => Failure::Usage(e.to_string()),
        other => Failure::BadInput(format!("{name}: {other}")),
    }
}

fn warn(name: &str, warnings: &[String]) {
    for w in warnings {
        crate::session::warn(name, w);
    }
}

/// One host to write: its inputs, opened.
struct Host {
    name: String,
    inputs: Vec<Input>,
}

/// Poplar's files are named `graph.json` and `execution.json` in a report directory: the host is
/// named after that directory (or the file's stem when there is none).
fn poplar_host(input: &Input) -> String {
    input
        .path
        .as_ref()
        .and_then(|p| std::path::absolute(p).ok())
        .and_then(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| host_of(input))
}

pub(crate) fn convert(
    paths: &[PathBuf],
    from: Option<Format>,
    out: &Path,
    overwrite: bool,
    given: &[Option<String>],
) -> Result<(), Failure> {
    if out.as_os_str() == "-" {
        return Err(Failure::Usage(
            "--to parquet writes a dataset directory, not standard output".into(),
        ));
    }
    if out.is_file() {
        return Err(Failure::Usage(format!(
            "{}: --to parquet writes a dataset directory, and this is a file",
            out.display()
        )));
    }
    let mut planned: Vec<Host> = Vec::new();
    let mut poplar: Option<usize> = None;
    for (index, path) in paths.iter().enumerate() {
        let input = Input::open(path, from)?;
        let given = given.get(index).cloned().flatten();
        if input.format == Format::Poplar {
            match poplar.and_then(|i| planned.get_mut(i)) {
                Some(host) => {
                    if let Some(given) = given {
                        host.name = host_name(&given);
                    }
                    host.inputs.push(input);
                }
                None => {
                    poplar = Some(planned.len());
                    planned.push(Host {
                        name: host_name(&given.unwrap_or_else(|| poplar_host(&input))),
                        inputs: vec![input],
                    });
                }
            }
            continue;
        }
        let name = match given {
            Some(given) => given,
            None => default_host(&input),
        };
        planned.push(Host {
            name: host_name(&name),
            inputs: vec![input],
        });
    }
    let mut seen = std::collections::BTreeMap::new();
    for host in &planned {
        let inputs = || {
            host.inputs
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>()
                .join(" + ")
        };
        if let Some(first) = seen.insert(host.name.clone(), inputs()) {
            return Err(Failure::Usage(format!(
                "two inputs make host {} ({first} and {}; a host is named after its file, or after the hostnames an XSpace records when its file name says nothing); nothing was written: name each input's host with --host NAME (once per input, in the inputs' order), or convert them into different datasets",
                host.name,
                inputs()
            )));
        }
    }
    if !overwrite {
        let present = hosts(out).map_err(|e| bad("", e))?;
        if let Some(host) = planned.iter().find(|h| present.contains(&h.name)) {
            return Err(Failure::Usage(format!(
                "{}: host {} is already in the dataset; nothing was written (replace it with --overwrite, or give the input another name)",
                out.join(format!("host={}", host.name)).display(),
                host.name
            )));
        }
    }
    // A dataset this run creates is removed again if nothing was written into it (a failure or
    // a signal before the first host was in place).
    let created = Temp::new_directory(out);
    for host in planned {
        write_host(host, out, overwrite)?;
    }
    if let Some(created) = created {
        created.keep();
    }
    Ok(())
}

/// An input's host when none is given: its file's name as xprof names hosts, or, when that says
/// nothing (`host.xplane.pb`), the first of the `hostnames` an XSpace records.
fn default_host(input: &Input) -> String {
    let from_file = host_of(input);
    if input.format == Format::Xspace
        && crate::hosts::says_nothing(&from_file)
        && let Some(recorded) = input
            .path
            .as_deref()
            .filter(|p| p.as_os_str() != "-")
            .and_then(crate::hosts::recorded_hostname)
    {
        return recorded;
    }
    from_file
}

fn info(host: &Host, format: Format) -> HostInfo {
    HostInfo::new(
        host.name.clone(),
        format.to_string(),
        host.inputs.iter().map(|i| i.name.clone()),
    )
}

fn finish(
    name: &str,
    writer: HostWriter,
    rows: u64,
    planes: u64,
    extra: &str,
) -> Result<(), Failure> {
    // A signal waits for the host to be moved into place (and the old one, with --overwrite,
    // removed), so that it never ends the process half way.
    let dir = holding_signals(|| writer.commit()).map_err(|e| bad(name, e))?;
    std::io::Write::write_fmt(
        &mut crate::session::stdout(),
        format_args!(
            "{name}: {rows} events on {planes} planes{extra} -> {}\n",
            dir.display()
        ),
    )
    .map_err(Failure::Output)
}

/// xprof's OpStats of an XSpace file (the planes OpStats reads, read again), for the
/// `op_metrics`, `steps`, `kernels` and `hlo_ops` tables.
fn op_stats(path: &Path, host: &str) -> Result<profkit_xprof::op_stats::OpStatsBuild, Failure> {
    // Opened as every input is (a gzip input under the command's `--max-inflated`).
    let input = Input::open(path, Some(Format::Xspace))?;
    // Every part but the tf-function stats, which no table holds.
    let parts = profkit_xprof::op_stats::Parts {
        tf_functions: false,
        ..profkit_xprof::op_stats::Parts::ALL
    };
    // Its peak is while the host plane's lines are grouped: one after the other, the least.
    let space = crate::xprof::read_for_on(input, parts, false)?;
    Ok(profkit_xprof::op_stats::build_for(
        vec![space],
        &[host],
        parts,
    ))
}

/// Converts one host's inputs and writes its tables.
fn write_host(mut host: Host, out: &Path, overwrite: bool) -> Result<(), Failure> {
    let options = Options::default();
    let write_options = WriteOptions::with_overwrite(overwrite);
    let Some(first) = host.inputs.first() else {
        return Ok(());
    };
    let format = first.format;
    let name = host
        .inputs
        .iter()
        .map(|i| i.name.as_str())
        .collect::<Vec<_>>()
        .join(" + ");
    let info = info(&host, format);
    // The staging directory (and the old host set aside while the new one is moved in) are
    // removed should a signal end the process.
    let create = || {
        Temp::watching(
            || {
                let mut writer = HostWriter::create(out, &host.name, write_options.clone())?;
                // A library API run cancelled by its caller stops between batches.
                writer.stop_when(crate::session::cancelled);
                Ok(writer)
            },
            |writer| {
                let staging = writer.staging_dir().to_path_buf();
                let mut aside = staging.clone().into_os_string();
                aside.push(".old");
                vec![staging, PathBuf::from(aside)]
            },
        )
    };
    match format {
        Format::Xspace => {
            let Some(input) = host.inputs.pop() else {
                return Ok(());
            };
            let path = input.path.clone().filter(|p| p.as_os_str() != "-");
            // OpStats is built before the events are written, not after: built after, it met
            // the heap the events tables had left behind (the allocator keeps what a plane's
            // buffer gave back), and the conversion of a 14.3 MB profile peaked at 94 MB
            // resident instead of 65 MB. What it keeps meanwhile is small. The events' batch
            // builders are made after it, so that its peak is not theirs too.
            // The staging directory first: a signal meanwhile removes it.
            let (mut writer, _watched) = create().map_err(|e| bad(&name, e))?;
            let stats = path
                .as_deref()
                .map(|path| op_stats(path, &host.name))
                .transpose()?;
            let mut batches = sources::xspace(input.reader, info, options, ReadOptions::default());
            let written = writer
                .write_host_tables(&mut batches)
                .map_err(|e| bad(&name, e))?;
            let extra = match stats {
                Some(stats) => {
                    let rows = writer
                        .write_op_metrics(&stats.op_stats)
                        .map_err(|e| bad(&name, e))?;
                    writer
                        .write_steps(&stats.op_stats)
                        .map_err(|e| bad(&name, e))?;
                    // The device tables come from the same OpStats (built once).
                    let kernels = writer
                        .write_kernels(&stats.op_stats)
                        .map_err(|e| bad(&name, e))?;
                    let hlo_ops = writer
                        .write_hlo_ops(&stats.op_stats)
                        .map_err(|e| bad(&name, e))?;
                    for missing in stats.missing_op_metrics() {
                        crate::session::note(format!(
                            "{name}: op_metrics: not reproduced: {missing}"
                        ));
                    }
                    if hlo_ops > 0 {
                        let op_metrics: Vec<&str> = stats.missing_op_metrics().collect();
                        for missing in
                            profkit_xprof::tools::lacking::not_reproduced("hlo_stats", &stats)
                        {
                            // The op metrics' gaps are named above.
                            if !op_metrics.iter().any(|m| missing.starts_with(m)) {
                                crate::session::note(format!(
                                    "{name}: hlo_ops: not reproduced: {missing}"
                                ));
                            }
                        }
                    }
                    let mut extra = format!(", {rows} op metrics");
                    let s = |n: u64| if n == 1 { "" } else { "s" };
                    if kernels > 0 {
                        extra.push_str(&format!(", {kernels} kernel{}", s(kernels)));
                    }
                    if hlo_ops > 0 {
                        extra.push_str(&format!(", {hlo_ops} HLO op{}", s(hlo_ops)));
                    }
                    extra
                }
                None => {
                    crate::session::note(format!(
                        "{name}: no op_metrics table from standard input (xprof's OpStats reads the file again)"
                    ));
                    String::new()
                }
            };
            finish(&name, writer, written.events, written.planes, &extra)
        }
        Format::Xdl => {
            let Some(input) = host.inputs.pop() else {
                return Ok(());
            };
            let Some(path) = input.path.clone() else {
                return Err(Failure::Usage(
                    "cannot convert an XDL trace from standard input: a dataset's rank comes from its file names".into(),
                ));
            };
            let datasets = profkit_xdl::discover(&path)
                .map_err(|e| Failure::BadInput(format!("{name}: {e}")))?;
            let Prepared {
                mut batches,
                warnings,
            } = sources::xdl(&datasets, info, options.clone()).map_err(|e| bad(&name, e))?;
            warn(&name, &warnings);
            let (mut writer, _watched) = create().map_err(|e| bad(&name, e))?;
            let written = writer
                .write_host_tables(&mut batches)
                .map_err(|e| bad(&name, e))?;
            let mut records = 0;
            for dataset in &datasets {
                let mut reader = profkit_arrow::xdl::records(dataset, writer.host(), &options)
                    .map_err(|e| bad(&name, e))?;
                records += writer
                    .write_xdl(&mut reader, &dataset.id.to_string())
                    .map_err(|e| bad(&name, e))?;
            }
            finish(
                &name,
                writer,
                written.events,
                written.planes,
                &format!(", {records} XDL records"),
            )
        }
        _ => {
            let prepared = prepare(host.inputs, format, info, options, &name)?;
            warn(&name, &prepared.warnings);
            let mut batches = prepared.batches;
            let (mut writer, _watched) = create().map_err(|e| bad(&name, e))?;
            let written = writer
                .write_host_tables(&mut batches)
                .map_err(|e| bad(&name, e))?;
            finish(&name, writer, written.events, written.planes, "")
        }
    }
}

/// The inputs of formats read whole, as an events stream.
fn prepare(
    inputs: Vec<Input>,
    format: Format,
    info: HostInfo,
    options: Options,
    name: &str,
) -> Result<Prepared, Failure> {
    if format == Format::Poplar {
        let mut files = Vec::new();
        for input in inputs {
            let file: ProfileFile = profkit_poplar::from_reader(input.reader)
                .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
            files.push(file);
        }
        let graph = files.iter().find_map(ProfileFile::graph);
        let executions: Vec<_> = files.iter().filter_map(ProfileFile::execution).collect();
        if executions.len() > 1 {
            return Err(Failure::Usage(format!(
                "{name}: give one Poplar execution profile (and its graph profile) per conversion"
            )));
        }
        return sources::poplar(executions.first().copied(), graph, info, options)
            .map_err(|e| bad(name, e));
    }
    let Some(input) = inputs.into_iter().next() else {
        return Err(Failure::Usage("convert needs IN... OUT".into()));
    };
    match format {
        Format::Paddle => sources::paddle_profile_with(
            input.reader,
            info,
            options,
            crate::input::paddle_options(),
        ),
        Format::PaddleNodeTrees => sources::paddle_node_trees_with(
            input.reader,
            info,
            options,
            crate::input::paddle_options(),
        ),
        // Streamed, so that standard input is never held whole.
        Format::Chrome | Format::PaddleTimeline => {
            sources::chrome_reader(input.reader, info, options)
        }
        other => {
            return Err(Failure::Usage(format!(
                "{}: cannot convert {other} to parquet",
                input.name
            )));
        }
    }
    .map_err(|e| bad(name, e))
}

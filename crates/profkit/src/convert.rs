//! `profkit convert`, `profkit merge` and `profkit formats`: every format to the XSpace hub and on
//! to Chrome trace JSON (as xprof's trace viewer writes it), Paddle's timeline, or back to XSpace.
//!
//! XSpace inputs stream (two passes for Chrome output, so a file is read twice; standard input is
//! read into memory first); the other formats are read whole into an XSpace. Output goes through
//! [`Output`] (a temporary file beside OUT that replaces it only when the conversion succeeds, so
//! a failure never leaves half a file; see `output.rs` for devices, links and OUT = IN); `-`
//! writes to standard output.

use std::fs::File;
use std::io::{BufReader, Cursor, IsTerminal, Read, Seek, Write};
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use profkit_chrome as chrome;
use profkit_convert::merge::{HostInput, merge, merge_spilled, reencode};
use profkit_convert::{events, paddle as paddle_timeline, poplar, xdl};
use profkit_events::Recording;
use profkit_events::paddle::{legacy, nodetree};
use profkit_poplar::ProfileFile;
use profkit_xplane::{ReadOptions, XSpace, encode};
use profkit_xprof::trace_viewer::{self, Layout, TraceViewerOptions};

use crate::format::Format;
use crate::input::Input;
use crate::output::{Output, refuse_inputs};
use crate::{ChromeLayout, Failure};

/// The conversions `profkit convert` makes, as (from, to).
pub(crate) const CONVERSIONS: &[(Format, &[Format])] = &[
    (
        Format::Xspace,
        &[Format::Chrome, Format::Xspace, Format::OpStats],
    ),
    (
        Format::Paddle,
        &[Format::Chrome, Format::Xspace, Format::PaddleTimeline],
    ),
    (Format::PaddleNodeTrees, &[Format::Chrome, Format::Xspace]),
    (Format::Poplar, &[Format::Chrome, Format::Xspace]),
    (Format::Xdl, &[Format::Chrome, Format::Xspace, Format::Xdl]),
    (Format::Chrome, &[Format::Chrome, Format::Xspace]),
];

/// Formats `report` reads.
pub(crate) const REPORTED: &[Format] = &[
    Format::Paddle,
    Format::PaddleNodeTrees,
    Format::Xspace,
    Format::Chrome,
];

/// `profkit formats`: every format, what reads it, and where it converts to.
pub(crate) fn formats() -> Result<(), Failure> {
    use clap::ValueEnum;
    let mut out = crate::session::stdout();
    let mut text =
        String::from("Formats (detected from content; --from and --to take these names):\n");
    let width = Format::value_variants()
        .iter()
        .map(|f| f.to_string().len())
        .max()
        .unwrap_or(0);
    for format in Format::value_variants() {
        let help = format
            .to_possible_value()
            .and_then(|v| v.get_help().map(|h| h.to_string()))
            .unwrap_or_default();
        text.push_str(&format!("  {:<width$} {help}\n", format.to_string()));
    }
    text.push_str("\nConversions (profkit convert IN... OUT --to TO):\n");
    for (from, targets) in CONVERSIONS {
        let to: Vec<String> = targets.iter().map(ToString::to_string).collect();
        text.push_str(&format!(
            "  {:<width$} -> {}\n",
            from.to_string(),
            to.join(", ")
        ));
    }
    let reported: Vec<String> = REPORTED.iter().map(ToString::to_string).collect();
    text.push_str(&format!(
        "\nprofkit report reads: {}\nprofkit merge reads and writes: xspace\n\
         profkit convert IN... OUT_DIR --to parquet reads every format but paddle-timeline (a dataset, see docs/scale.md)\n",
        reported.join(", ")
    ));
    out.write_all(text.as_bytes()).map_err(Failure::Output)
}

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub(crate) struct Progress(Option<ProgressBar>);

impl Progress {
    pub(crate) fn new(total: u64, what: &str) -> Progress {
        if !std::io::stderr().is_terminal() || total == 0 {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({eta})",
        ) {
            bar.set_style(style);
        }
        bar.set_message(what.to_owned());
        Progress(Some(bar))
    }

    pub(crate) fn inc(&mut self, bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(bytes);
        }
    }

    pub(crate) fn finish(self) {
        if let Some(bar) = self.0 {
            bar.finish_and_clear();
        }
    }
}

/// A conversion error: a broken pipe is the reader's business, anything else names the input
/// (the error itself names the place in it).
fn failure(name: &str, e: profkit_convert::Error) -> Failure {
    if let profkit_convert::Error::Io(io)
    | profkit_convert::Error::Xspace(profkit_xplane::Error::Io(io)) = e.root()
        && let Some(gzip) = profkit_gzip::Error::find(io)
    {
        return Failure::BadInput(format!("{name}: {gzip}"));
    }
    if e.is_broken_pipe() {
        return Failure::Output(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
    }
    match e.root() {
        profkit_convert::Error::Io(io) if io.kind() != std::io::ErrorKind::UnexpectedEof => {
            Failure::Output(std::io::Error::new(io.kind(), io.to_string()))
        }
        _ => Failure::BadInput(format!("{name}: {e}")),
    }
}

/// A seekable source for an XSpace input: the file itself, or standard input read into memory.
pub(crate) enum Source {
    File(BufReader<File>, u64),
    Memory(Cursor<Vec<u8>>),
}

impl Source {
    pub(crate) fn open(input: Input) -> Result<Source, Failure> {
        match &input.path {
            Some(path) if !input.gzip => {
                let file = File::open(path)
                    .map_err(|e| Failure::BadInput(format!("{}: cannot open: {e}", input.name)))?;
                let len = file.metadata().map(|m| m.len()).unwrap_or(0);
                Ok(Source::File(BufReader::with_capacity(1 << 16, file), len))
            }
            // gzip cannot seek: it is decompressed once into a temporary file, walked plane by
            // plane as it arrives as `inspect` walks a plain file (standard input too).
            Some(_) => spool(input),
            None if input.gzip => spool(input),
            // Plain standard input: read whole (it is read twice), up to the XSpace size limit, and refused at the first
            // fault as it arrives, so that endless input that is no XSpace stops at once.
            None => {
                let bytes = profkit_xplane::read_bytes(input.reader, ReadOptions::default())
                    .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
                Ok(Source::Memory(Cursor::new(bytes)))
            }
        }
    }

    fn len(&self) -> u64 {
        match self {
            Source::File(_, len) => *len,
            Source::Memory(c) => c.get_ref().len() as u64,
        }
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::File(f, _) => f.read(buf),
            Source::Memory(c) => c.read(buf),
        }
    }
}

impl Seek for Source {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        match self {
            Source::File(f, _) => f.seek(pos),
            Source::Memory(c) => c.seek(pos),
        }
    }
}

/// A gzip-compressed XSpace decompressed into an unnamed temporary file (removed as soon as it
/// is made, on unix, so that nothing is left behind whatever ends the process), each plane
/// checked as it arrives: memory holds one encoded plane at a time, as for a plain file, and
/// what it decompresses to is held to the gzip limit.
fn spool(input: Input) -> Result<Source, Failure> {
    let name = input.name.clone();
    let cannot = |e: std::io::Error| {
        Failure::BadInput(format!(
            "{name}: cannot decompress into a temporary file in {}: {e}",
            std::env::temp_dir().display()
        ))
    };
    let mut file = anonymous_file().map_err(cannot)?;
    let bad = |e: profkit_xplane::Error| Failure::BadInput(format!("{name}: {e}"));
    {
        let mut tee = SpoolTee {
            inner: input.reader,
            file: std::io::BufWriter::with_capacity(1 << 16, &mut file),
            failed: None,
        };
        let mut reader = profkit_xplane::XSpaceReader::new(&mut tee, ReadOptions::default());
        while let Some(item) = reader.next_raw() {
            if let profkit_xplane::RawSpaceItem::Plane(plane) = item.map_err(bad)? {
                plane.view().and_then(|view| view.check()).map_err(bad)?;
            }
        }
        drop(reader);
        if let Some(e) = tee.failed.take() {
            return Err(cannot(e));
        }
        tee.file.flush().map_err(cannot)?;
    }
    let len = file.seek(std::io::SeekFrom::End(0)).map_err(cannot)?;
    file.seek(std::io::SeekFrom::Start(0)).map_err(cannot)?;
    Ok(Source::File(BufReader::with_capacity(1 << 16, file), len))
}

/// A new file in the temporary directory, already unlinked on unix.
pub(crate) fn anonymous_file() -> std::io::Result<File> {
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    let mut last = None;
    for n in 0..100 {
        let path = dir.join(format!("profkit-{pid}-{n}.inflated.tmp"));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                if cfg!(unix) {
                    std::fs::remove_file(&path)?;
                }
                return Ok(file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary name is free")))
}

/// Where a merge keeps the merged hosts' lines until it writes them (so that its memory does not
/// grow with the hosts): an unnamed temporary file, or memory when none can be made.
fn spill() -> Option<File> {
    anonymous_file().ok()
}

/// Reads from `inner` and writes what it read to `file`. A write error stops the reading (as the
/// end of the input) and is kept, to be reported as what it is.
struct SpoolTee<R, W> {
    inner: R,
    file: W,
    failed: Option<std::io::Error>,
}

impl<R: Read, W: Write> Read for SpoolTee<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.failed.is_some() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        if let Err(e) = self.file.write_all(buf.get(..n).unwrap_or_default()) {
            self.failed = Some(e);
            return Ok(0);
        }
        Ok(n)
    }
}

/// `--host NAME`, given once per input in their order: each input's host, `None` for every one
/// when none is given.
pub(crate) fn hosts_given(hosts: &[String], inputs: usize) -> Result<Vec<Option<String>>, Failure> {
    if hosts.is_empty() {
        return Ok(vec![None; inputs]);
    }
    if hosts.len() != inputs {
        return Err(Failure::Usage(format!(
            "--host is given once per input, in the inputs' order: {} inputs, {} --host",
            inputs,
            hosts.len()
        )));
    }
    if let Some(empty) = hosts.iter().position(|h| h.trim().is_empty()) {
        return Err(Failure::Usage(format!(
            "--host number {} is empty: name the host",
            empty + 1
        )));
    }
    Ok(hosts.iter().cloned().map(Some).collect())
}

fn print_warnings(name: &str, warnings: impl IntoIterator<Item = String>) {
    for w in warnings {
        crate::session::warn(name, w);
    }
}

/// The event model of a Paddle input, for `convert` and `report`.
pub(crate) fn paddle_recording(input: Input) -> Result<(String, Recording), Failure> {
    let options = crate::input::paddle_options();
    let recording = match input.format {
        Format::PaddleNodeTrees => {
            nodetree::read_node_trees(input.reader, options).map(|t| nodetree::to_recording(&t))
        }
        _ => legacy::read_profile(input.reader, options).map(|p| legacy::to_recording(&p)),
    }
    .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
    Ok((input.name, recording))
}

/// The XSpace of a Chrome trace input.
pub(crate) fn chrome_space(input: Input) -> Result<(String, XSpace), Failure> {
    let (name, import) = chrome_import(input)?;
    Ok((name, import.space))
}

/// A Chrome trace input read (streaming), its warnings printed.
pub(crate) fn chrome_import(input: Input) -> Result<(String, chrome::ChromeImport), Failure> {
    let import = chrome::read_chrome(input.reader).map_err(|e| failure(&input.name, e.into()))?;
    Ok((input.name.clone(), imported(&input.name, import)))
}

/// A Chrome trace read from its whole text (which `validate` keeps, to name the events of its
/// problems), its warnings printed.
pub(crate) fn chrome_import_text(name: &str, text: &[u8]) -> Result<chrome::ChromeImport, Failure> {
    let import = chrome::read_chrome(text).map_err(|e| failure(name, e.into()))?;
    Ok(imported(name, import))
}

/// The import's warnings and skipped phases printed.
fn imported(name: &str, mut import: chrome::ChromeImport) -> chrome::ChromeImport {
    print_warnings(name, std::mem::take(&mut import.warnings));
    for (phase, count) in &import.skipped {
        crate::session::note(format_args!(
            "{name}: note: {count} events of phase {phase:?} have no place in an XSpace and are left out"
        ));
    }
    import
}

/// The XSpace of an XSpace input, whole.
pub(crate) fn xspace_whole(input: Input) -> Result<(String, XSpace), Failure> {
    let space = profkit_xplane::read(input.reader, ReadOptions::default())
        .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
    Ok((input.name, space))
}

/// Inputs of other formats than XSpace as spaces (one per input, Poplar's graph and execution
/// profiles and XDL's datasets taken together).
fn spaces_of(inputs: Vec<Input>) -> Result<Vec<(String, XSpace)>, Failure> {
    let mut spaces = Vec::new();
    let mut poplar_files: Vec<(String, ProfileFile)> = Vec::new();
    let mut datasets = Vec::new();
    let mut xdl_names = Vec::new();
    for input in inputs {
        match input.format {
            Format::Xspace => spaces.push(xspace_whole(input)?),
            Format::Chrome | Format::PaddleTimeline => spaces.push(chrome_space(input)?),
            Format::Parquet | Format::OpStats => return Err(crate::output_only()),
            Format::Paddle | Format::PaddleNodeTrees => {
                let (name, recording) = paddle_recording(input)?;
                let (space, warnings) = events::recording_to_xspace(&recording);
                print_warnings(&name, warnings.iter().map(ToString::to_string));
                spaces.push((name, space));
            }
            Format::Poplar => {
                let file = profkit_poplar::from_reader(input.reader)
                    .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
                poplar_files.push((input.name, file));
            }
            Format::Xdl => {
                let Some(path) = input.path.clone() else {
                    return Err(Failure::Usage(
                        "cannot convert an XDL trace from standard input: a dataset's rank comes from its file names".into(),
                    ));
                };
                datasets.extend(
                    profkit_xdl::discover(&path)
                        .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?,
                );
                xdl_names.push(input.name);
            }
        }
    }
    if !poplar_files.is_empty() {
        let graph = poplar_files.iter().find_map(|(_, f)| f.graph());
        let executions: Vec<&(String, ProfileFile)> = poplar_files
            .iter()
            .filter(|(_, f)| f.execution().is_some())
            .collect();
        let name = poplar_files
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(" + ");
        if executions.len() > 1 {
            return Err(Failure::Usage(format!(
                "{name}: give one Poplar execution profile (and its graph profile) per conversion"
            )));
        }
        let execution = executions.first().and_then(|(_, f)| f.execution());
        let space = poplar::poplar_to_xspace(execution, graph).map_err(|e| failure(&name, e))?;
        spaces.push((name, space));
    }
    if !datasets.is_empty() {
        let name = xdl_names.join(" + ");
        let space = xdl::datasets_to_xspace(&datasets, profkit_xdl::ReadOptions::default())
            .map_err(|e| failure(&name, e))?;
        spaces.push((name, space));
    }
    Ok(spaces)
}

/// Merges spaces (the multi-host case) through their encodings; one space passes through.
fn merged(spaces: Vec<(String, XSpace)>) -> Result<(String, XSpace), Failure> {
    if spaces.len() == 1 {
        if let Some(only) = spaces.into_iter().next() {
            return Ok(only);
        }
        return Err(Failure::Usage("nothing to convert".into()));
    }
    let name = spaces
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(" + ");
    let mut inputs: Vec<HostInput<Cursor<Vec<u8>>>> = spaces
        .iter()
        .enumerate()
        .map(|(i, (_, space))| HostInput {
            fallback_host: format!("host-{i}"),
            host: None,
            reader: Cursor::new(encode(space)),
        })
        .collect();
    let mut out = Vec::new();
    let summary =
        merge(&mut inputs, &mut out, ReadOptions::default()).map_err(|e| failure(&name, e))?;
    print_warnings(&name, summary.warnings);
    let space =
        profkit_xplane::decode(out).map_err(|e| Failure::BadInput(format!("{name}: {e}")))?;
    Ok((name, space))
}

/// Splits `trainer0=a.pb,trainer1=b.pb` arguments into (key, path), as timeline.py's
/// `--profile_path` does; an argument that names an existing file is a path as it is.
fn timeline_keys(paths: &[PathBuf]) -> Result<Vec<(Option<String>, PathBuf)>, Failure> {
    let mut out = Vec::new();
    for path in paths {
        if path.exists() || path.as_os_str() == "-" {
            out.push((None, path.clone()));
            continue;
        }
        let text = path.to_string_lossy();
        for part in text.split(',') {
            match part.split_once('=') {
                Some((key, file)) => out.push((Some(key.to_owned()), PathBuf::from(file))),
                None => out.push((None, PathBuf::from(part))),
            }
        }
    }
    Ok(out)
}

fn paddle_timeline(paths: &[PathBuf], from: Option<Format>, out: &Path) -> Result<(), Failure> {
    let keyed = timeline_keys(paths)?;
    let files: Vec<PathBuf> = keyed.iter().map(|(_, p)| p.clone()).collect();
    refuse_inputs(&files, out)?;
    let several = keyed.len() > 1;
    let mut profiles = Vec::new();
    for (key, path) in keyed {
        let key = match key {
            Some(key) => key,
            None if !several => paddle_timeline::SINGLE_KEY.to_owned(),
            None => {
                return Err(Failure::Usage(format!(
                    "{}: with several profiles, give each its key as timeline.py does (trainer0=a.pb trainer1=b.pb)",
                    path.display()
                )));
            }
        };
        let input = Input::open(&path, from)?;
        if input.format != Format::Paddle {
            return Err(Failure::Usage(format!(
                "{}: --to paddle-timeline reads Paddle legacy Profiles, not {}",
                input.name, input.format
            )));
        }
        let profile = legacy::read_profile(input.reader, crate::input::paddle_options())
            .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
        profiles.push((key, profile));
    }
    let keyed = paddle_timeline::keyed(profiles);
    let refs: Vec<(String, &legacy::Profile)> = keyed.iter().map(|(k, p)| (k.clone(), p)).collect();
    let (output, writer) = Output::create(out)?;
    let result = paddle_timeline::write_timeline(&refs, writer).map_err(|e| failure("timeline", e));
    output.finish(result)
}

/// `profkit convert IN... OUT [--from F] [--to F]`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn convert(
    paths: Vec<PathBuf>,
    out: PathBuf,
    to: Option<Format>,
    from: Option<Format>,
    max_file_mb: Option<f64>,
    overwrite: bool,
    layout: Option<ChromeLayout>,
    hosts: Vec<Option<String>>,
) -> Result<(), Failure> {
    let to = match to {
        Some(to) => to,
        None => infer_target(&out)?,
    };
    let named = hosts.iter().any(Option::is_some);
    if to == Format::Parquet {
        return crate::parquet::convert(&paths, from, &out, overwrite, &hosts);
    }
    if to == Format::OpStats {
        return crate::xprof::op_stats_file(&paths, from, &out, &hosts);
    }
    if named && !matches!(to, Format::Xspace | Format::Chrome) {
        return Err(Failure::Usage(format!(
            "--host names the hosts of --to parquet, --to op-stats and of several XSpaces merged, not of --to {to}"
        )));
    }
    if to == Format::PaddleTimeline {
        return paddle_timeline(&paths, from, &out);
    }
    if to == Format::Xdl {
        let mut inputs = Vec::with_capacity(paths.len());
        for path in &paths {
            let input = Input::open(path, from)?;
            if input.format != Format::Xdl {
                return Err(Failure::Usage(format!(
                    "{}: --to xdl rewrites XDL datasets, not {}",
                    input.name, input.format
                )));
            }
            inputs.push(input);
        }
        return crate::xdl::convert(inputs, &out, max_file_mb, overwrite);
    }
    if !matches!(to, Format::Xspace | Format::Chrome) {
        return Err(Failure::Usage(format!(
            "converting to {to} is not supported (see profkit formats)"
        )));
    }
    refuse_inputs(&paths, &out)?;
    let mut inputs = Vec::with_capacity(paths.len());
    for path in &paths {
        inputs.push(Input::open(path, from)?);
    }
    if inputs.iter().all(|i| i.format == Format::Xspace) {
        return convert_xspaces(inputs, &out, to, chrome_options(layout, true), hosts);
    }
    if named {
        return Err(Failure::Usage(
            "--host names the hosts of --to parquet and of several XSpaces merged; these inputs are not all XSpaces".into(),
        ));
    }
    let spaces = spaces_of(inputs)?;
    let (name, space) = merged(spaces)?;
    let (output, mut writer) = Output::create(&out)?;
    let result = match to {
        Format::Xspace => {
            // Plane by plane: the space is held, its encoding is not.
            let written = profkit_xplane::write(&space, &mut writer).map_err(|e| match e {
                profkit_xplane::Error::Io(io) => Failure::Output(io),
                other => Failure::Output(std::io::Error::other(other.to_string())),
            });
            // Dropping the writer finishes it (gzip's trailer); `finish` sees any error then.
            drop(writer);
            written
        }
        _ => trace_viewer::write_space(&space, writer, &chrome_options(layout, false))
            .map(|_| ())
            .map_err(|e| failure(&name, e.into())),
    };
    output.finish(result)
}

fn infer_target(out: &Path) -> Result<Format, Failure> {
    let name = out.to_string_lossy();
    let plain = name.strip_suffix(".gz").unwrap_or(&name);
    if plain.ends_with("op_stats_v2.pb") || plain.ends_with(".op_stats.pb") {
        Ok(Format::OpStats)
    } else if plain.ends_with(".json") {
        Ok(Format::Chrome)
    } else if plain.ends_with(".pb") {
        Ok(Format::Xspace)
    } else {
        Err(Failure::Usage(format!(
            "{name}: name the output format with --to (chrome, xspace, paddle-timeline, xdl, parquet, op-stats)"
        )))
    }
}

/// The trace viewer's options for `--layout` (see the option's help): by default, an XSpace's
/// layout follows its source and other inputs get the Trace Event Format's.
fn chrome_options(layout: Option<ChromeLayout>, xspace: bool) -> TraceViewerOptions {
    match layout {
        Some(ChromeLayout::Xprof) => TraceViewerOptions::of_layout(Layout::Xprof),
        Some(ChromeLayout::TraceEvent) => TraceViewerOptions::of_layout(Layout::TraceEvent),
        None if xspace => TraceViewerOptions {
            follow_source: true,
            ..TraceViewerOptions::default()
        },
        None => TraceViewerOptions::of_layout(Layout::TraceEvent),
    }
}

/// XSpace inputs: streamed.
fn convert_xspaces(
    inputs: Vec<Input>,
    out: &Path,
    to: Format,
    chrome: TraceViewerOptions,
    given: Vec<Option<String>>,
) -> Result<(), Failure> {
    let options = ReadOptions::default();
    if inputs.len() == 1 && given.iter().any(Option::is_some) {
        return Err(Failure::Usage(
            "--host names the hosts of several XSpaces merged (or of --to parquet); one XSpace keeps its own".into(),
        ));
    }
    if inputs.len() > 1 {
        // Several hosts: merged first (in memory for Chrome output, which reads it twice).
        let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
        let name = names.join(" + ");
        let mut hosts = Vec::with_capacity(inputs.len());
        for (input, host) in inputs
            .into_iter()
            .zip(given.into_iter().chain(std::iter::repeat(None)))
        {
            let fallback_host = crate::hosts::host_of(&input);
            hosts.push(HostInput {
                fallback_host,
                host,
                reader: Source::open(input)?,
            });
        }
        if to == Format::Xspace {
            let (output, writer) = Output::create(out)?;
            let result = merge_spilled(&mut hosts, writer, options, spill())
                .map(|s| print_warnings(&name, s.warnings))
                .map_err(|e| failure(&name, e));
            return output.finish(result);
        }
        let mut merged_bytes = Vec::new();
        let summary = merge_spilled(&mut hosts, &mut merged_bytes, options, spill())
            .map_err(|e| failure(&name, e))?;
        print_warnings(&name, summary.warnings);
        let (output, writer) = Output::create(out)?;
        let result = trace_viewer::convert(Cursor::new(merged_bytes), writer, &chrome, None)
            .map(|s| note_unreproduced(&name, &s.unreproduced))
            .map_err(|e| failure(&name, e.into()));
        return output.finish(result);
    }
    let Some(input) = inputs.into_iter().next() else {
        return Err(Failure::Usage("convert needs IN... OUT".into()));
    };
    let name = input.name.clone();
    let mut source = Source::open(input)?;
    let (output, writer) = Output::create(out)?;
    let result = if to == Format::Xspace {
        let mut progress = Progress::new(source.len(), "re-encoding");
        let mut report = |n: u64| progress.inc(n);
        let result = reencode(&mut source, writer, options, Some(&mut report))
            .map(|_| ())
            .map_err(|e| failure(&name, e));
        progress.finish();
        result
    } else {
        let mut progress = Progress::new(source.len() * 2, "converting");
        let mut report = |n: u64| progress.inc(n);
        let result = trace_viewer::convert(&mut source, writer, &chrome, Some(&mut report))
            .map(|s| note_unreproduced(&name, &s.unreproduced))
            .map_err(|e| failure(&name, e.into()));
        progress.finish();
        result
    };
    output.finish(result)
}

fn note_unreproduced(name: &str, what: &[&str]) {
    for w in what {
        crate::session::note(format_args!(
            "{name}: note: xprof would also apply {w}; profkit does not reproduce it, so its trace viewer output differs there"
        ));
    }
}

/// `profkit merge IN... OUT`: the spaces of several hosts in one.
pub(crate) fn merge_command(
    paths: Vec<PathBuf>,
    out: PathBuf,
    given: Vec<Option<String>>,
) -> Result<(), Failure> {
    refuse_inputs(&paths, &out)?;
    let mut hosts = Vec::with_capacity(paths.len());
    let mut names = Vec::new();
    for (path, host) in paths.iter().zip(given) {
        let input = Input::open(path, Some(Format::Xspace))?;
        names.push(input.name.clone());
        let fallback_host = crate::hosts::host_of(&input);
        hosts.push(HostInput {
            fallback_host,
            host,
            reader: Source::open(input)?,
        });
    }
    let name = names.join(" + ");
    let (output, writer) = Output::create(&out)?;
    let result = merge_spilled(&mut hosts, writer, ReadOptions::default(), spill())
        .map_err(|e| failure(&name, e));
    let summary = output.finish(result)?;
    print_warnings(&name, summary.warnings.iter().cloned());
    if out.as_os_str() != "-" {
        writeln!(
            crate::session::stdout(),
            "merged {} hosts ({}) into {} planes in {}",
            summary.hosts.len(),
            summary.hosts.join(", "),
            summary.planes,
            out.display()
        )
        .map_err(Failure::Output)?;
    }
    Ok(())
}

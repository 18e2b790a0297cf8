//! Opening an input file (or standard input) and finding its format: gzip is undone first
//! (detected by its magic, whatever the name), then the content decides.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use std::cell::{Cell, RefCell};

use profkit_chrome::{JsonShape, sniff_json};
use profkit_gzip::{GzipReader, Limit};

use crate::Failure;
use crate::format::{self, Format};

/// How many bytes detection looks at.
const SNIFF_LEN: usize = 4096;

/// The most of standard input kept while looking for `traceEvents` in a JSON object (a file is
/// opened a second time instead).
const STDIN_SNIFF_LIMIT: u64 = 256 << 20;

/// The environment variable that sets the limit on what a gzip input decompresses to, as
/// `--max-inflated` does.
pub(crate) const MAX_INFLATED_ENV: &str = "PROFKIT_MAX_INFLATED";

/// The environment variable that sets Paddle's message budget, as `--paddle-bytes-per-message`.
pub(crate) const PADDLE_BUDGET_ENV: &str = "PROFKIT_PADDLE_BYTES_PER_MESSAGE";

thread_local! {
    /// How Paddle's protobufs are read, for the command being run (the message budget).
    static PADDLE_OPTIONS: Cell<profkit_events::paddle::ReadOptions> =
        Cell::new(profkit_events::paddle::ReadOptions::default());
    /// The limit on what a gzip input decompresses to, for the command being run.
    static GZIP_LIMIT: Cell<Limit> = Cell::new(Limit::default());
    /// The first gzip failure of the command being run, as `NAME: message`: readers above the
    /// gzip layer may pass it on as a plain I/O error (or as an output error); the command's
    /// message is this one.
    static GZIP_FAILURE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Sets the gzip limit for the commands run next on this thread, and forgets any failure.
pub(crate) fn set_gzip_limit(limit: Limit) {
    GZIP_LIMIT.with(|l| l.set(limit));
    GZIP_FAILURE.with(|f| f.borrow_mut().take());
}

/// The gzip limit from `--max-inflated`, else from the environment, else the default.
pub(crate) fn gzip_limit(flag: Option<&str>) -> Result<Limit, Failure> {
    match flag {
        Some(text) => {
            Limit::parse(text).map_err(|e| Failure::Usage(format!("--max-inflated: {e}")))
        }
        None => match std::env::var(MAX_INFLATED_ENV) {
            Ok(text) => {
                Limit::parse(&text).map_err(|e| Failure::Usage(format!("{MAX_INFLATED_ENV}: {e}")))
            }
            Err(_) => Ok(Limit::default()),
        },
    }
}

/// Sets Paddle's message budget for the commands run next on this thread: from
/// `--paddle-bytes-per-message`, else from the environment, else the default.
pub(crate) fn set_paddle_budget(flag: Option<u64>) -> Result<(), Failure> {
    let per = match flag {
        Some(per) => per,
        None => match std::env::var(PADDLE_BUDGET_ENV) {
            Ok(text) => text.trim().parse().map_err(|_| {
                Failure::Usage(format!(
                    "{PADDLE_BUDGET_ENV}: {text:?} is not a whole number of bytes (0 turns the budget off)"
                ))
            })?,
            Err(_) => profkit_events::paddle::DEFAULT_BYTES_PER_MESSAGE,
        },
    };
    PADDLE_OPTIONS.with(|o| {
        o.set(profkit_events::paddle::ReadOptions {
            bytes_per_message: per,
            ..o.get()
        })
    });
    Ok(())
}

/// How the command being run reads Paddle's protobufs.
pub(crate) fn paddle_options() -> profkit_events::paddle::ReadOptions {
    PADDLE_OPTIONS.with(Cell::get)
}

/// What the message of a Paddle input over the message budget adds: how to read it anyway.
pub(crate) const PADDLE_BUDGET_HINT: &str = "; to read it anyway, allow more messages with --paddle-bytes-per-message N (one message per N bytes; 0 turns the budget off) or PROFKIT_PADDLE_BYTES_PER_MESSAGE=N";

/// The gzip failure of the command that just ran, if any (see `GZIP_FAILURE`).
pub(crate) fn take_gzip_failure() -> Option<String> {
    GZIP_FAILURE.with(|f| f.borrow_mut().take())
}

/// A gzip input that records its failure (see `GZIP_FAILURE`).
struct Watched<R> {
    inner: GzipReader<R>,
    name: String,
}

impl<R: BufRead> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).inspect_err(|e| {
            if let Some(gzip) = profkit_gzip::Error::find(e) {
                let message = format!("{}: {gzip}", self.name);
                GZIP_FAILURE.with(|f| {
                    f.borrow_mut().get_or_insert(message);
                });
            }
        })
    }
}

/// A gzip reader of `compressed` (of `len` bytes, when known) under the command's limit.
pub(crate) fn gunzip<R: BufRead + 'static>(
    compressed: R,
    len: Option<u64>,
    name: &str,
) -> Box<dyn BufRead> {
    let options = profkit_gzip::Options {
        limit: GZIP_LIMIT.with(Cell::get),
        compressed_len: len,
        hint: format!(
            "; raise it with --max-inflated SIZE (or {MAX_INFLATED_ENV}=SIZE; 2G, 64x, unlimited)"
        ),
    };
    Box::new(BufReader::with_capacity(
        1 << 16,
        Watched {
            inner: GzipReader::new(compressed, options),
            name: name.to_owned(),
        },
    ))
}

/// A raw input that stops when the library API's caller cancels the run (see `session`): every
/// command reads through one, so a cancel is seen at the next read.
struct Polled<R>(R);

impl<R: Read> Read for Polled<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        crate::session::check()?;
        self.0.read(buf)
    }
}

/// An opened input with its format decided.
pub(crate) struct Input {
    /// How the input is named in messages.
    pub name: String,
    /// The format, detected or given with `--from`.
    pub format: Format,
    /// The content, positioned at its start, gzip undone (empty for a directory or a path
    /// prefix).
    pub reader: Box<dyn BufRead>,
    /// The path given, `None` for standard input. Formats made of several files (XDL datasets)
    /// read from it rather than from `reader`.
    pub path: Option<PathBuf>,
    /// Whether the file is gzip-compressed (so reading it again from `path` means undoing it).
    pub gzip: bool,
}

impl Input {
    pub(crate) fn open(path: &Path, from: Option<Format>) -> Result<Input, Failure> {
        if let Some(only @ (Format::Parquet | Format::OpStats)) = from {
            return Err(Failure::Usage(format!(
                "{only} is an output format only (--to {only})"
            )));
        }
        let is_stdin = path.as_os_str() == "-";
        let name = if is_stdin {
            "<stdin>".to_owned()
        } else {
            path.display().to_string()
        };
        if !is_stdin && from.is_none_or(|f| f == Format::Xdl) && !path.is_file() {
            // A directory or a path prefix can only be an XDL dataset.
            match profkit_xdl::discover(path) {
                Ok(_) => {
                    return Ok(Input {
                        name,
                        format: Format::Xdl,
                        reader: Box::new(std::io::empty()),
                        path: Some(path.to_path_buf()),
                        gzip: false,
                    });
                }
                Err(_) if path.is_dir() => {
                    return Err(Failure::BadInput(format!(
                        "{name}: is a directory without XDL trace files (<train|test>.<name>.<rank>.<index>)"
                    )));
                }
                Err(_) => {}
            }
        }
        let (raw, len): (Box<dyn Read>, Option<u64>) = if is_stdin {
            (Box::new(Polled(std::io::stdin())), None)
        } else {
            let file = open_file(path, &name)?;
            let len = file.metadata().ok().map(|m| m.len());
            (Box::new(Polled(file)), len)
        };
        let (mut reader, gzip) = ungzip(raw, len, &name)
            .map_err(|e| Failure::BadInput(format!("{name}: cannot read: {e}")))?;
        let format = match from {
            Some(format) => format,
            None => {
                let prefix = peek(&mut reader, SNIFF_LEN).map_err(|e| {
                    Failure::BadInput(format!("{name}: cannot read{}: {e}", gz_note(gzip)))
                })?;
                let candidates = format::candidates(&prefix, path);
                match candidates.as_slice() {
                    [only] => *only,
                    // Standard input is read once: the first candidate it is.
                    [first, ..] if is_stdin => *first,
                    [_, _, ..] => choose(&candidates, path, &name, gzip)?,
                    [] => {
                        let shape = if looks_like_json(&prefix) {
                            Some(if is_stdin {
                                sniff_stdin(&mut reader)
                            } else {
                                sniff_json(open_decoded(path, &name, gzip)?)
                            })
                        } else {
                            None
                        };
                        match shape {
                            Some(JsonShape::Chrome) => Format::Chrome,
                            shape => return Err(unrecognised(&name, gzip, shape.as_ref())),
                        }
                    }
                }
            }
        };
        Ok(Input {
            name,
            format,
            reader,
            path: (!is_stdin).then(|| path.to_path_buf()),
            gzip,
        })
    }
}

/// The format of a file whose content fits several (or whose name says one its content does not
/// pass the check of): each candidate is read through in turn. When the name gave the first
/// candidate, the name decides: a file that does not read as it is refused, with what each
/// candidate made of it. Otherwise the first candidate that reads is the format.
fn choose(candidates: &[Format], path: &Path, name: &str, gzip: bool) -> Result<Format, Failure> {
    let by_name = candidates
        .first()
        .copied()
        .filter(|f| format::named(path) == Some(*f));
    let mut tried = Vec::new();
    for (index, &candidate) in candidates.iter().enumerate() {
        match probe(candidate, path, name, gzip)? {
            Ok(()) if index == 0 => return Ok(candidate),
            Ok(()) if by_name.is_none() => {
                crate::session::note(format_args!(
                    "{name}: note: its first bytes fit {} and {}; read as {}, the first that reads it (--from names the format)",
                    tried_titles(candidates, index),
                    candidate.title(),
                    candidate.title()
                ));
                return Ok(candidate);
            }
            Ok(()) => tried.push(format!(
                "{} (reads as one: name it with --from {candidate})",
                candidate.title()
            )),
            Err(why) => tried.push(format!("{} ({why})", candidate.title())),
        }
    }
    let lead = match by_name {
        Some(f) => format!("named as {} but does not read as one", a_title(f)),
        None => "does not read as any format its first bytes fit".to_owned(),
    };
    Err(Failure::BadInput(format!(
        "{name}: {lead}; tried: {}",
        tried.join(", ")
    )))
}

fn tried_titles(candidates: &[Format], upto: usize) -> String {
    candidates
        .get(..upto)
        .unwrap_or_default()
        .iter()
        .map(|f| f.title())
        .collect::<Vec<_>>()
        .join(" and ")
}

fn a_title(f: Format) -> String {
    match f {
        Format::Xspace | Format::Xdl => format!("an {}", f.title()),
        _ => format!("a {}", f.title()),
    }
}

/// Reads the file at `path` through as `format`, keeping nothing: `Ok(Err(why))` when it does not
/// read (`why` says what and where), `Err` when the file cannot be opened again.
fn probe(
    format: Format,
    path: &Path,
    name: &str,
    gzip: bool,
) -> Result<Result<(), String>, Failure> {
    use profkit_events::paddle::{legacy, nodetree};
    let reader = open_decoded(path, name, gzip)?;
    Ok(match format {
        Format::Xspace => {
            let mut items =
                profkit_xplane::XSpaceReader::new(reader, profkit_xplane::ReadOptions::default());
            let mut result = Ok(());
            while let Some(item) = items.next_raw() {
                let checked = item.and_then(|item| match item {
                    profkit_xplane::RawSpaceItem::Plane(plane) => {
                        plane.view().and_then(|view| view.check())
                    }
                    _ => Ok(()),
                });
                if let Err(e) = checked {
                    result = Err(e.to_string());
                    break;
                }
            }
            result
        }
        Format::Paddle => legacy::read_profile(reader, paddle_options())
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Format::PaddleNodeTrees => nodetree::read_node_trees(reader, paddle_options())
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Format::Xdl if profkit_xdl::is_meta_path(path) => profkit_xdl::read_meta_file(path)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Format::Xdl => profkit_xdl::DataReader::new(reader, profkit_xdl::ReadOptions::default())
            .and_then(|mut records| records.try_for_each(|r| r.map(|_| ())))
            .map_err(|e| e.to_string()),
        Format::Poplar => profkit_poplar::from_reader::<profkit_poplar::ProfileFile, _>(reader)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Format::Chrome | Format::PaddleTimeline => profkit_chrome::read_chrome(reader)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Format::Parquet | Format::OpStats => Err("an output format only".to_owned()),
    })
}

fn open_file(path: &Path, name: &str) -> Result<File, Failure> {
    let file =
        File::open(path).map_err(|e| Failure::BadInput(format!("{name}: cannot open: {e}")))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(Failure::BadInput(format!(
            "{name}: is a directory, expected a file"
        )));
    }
    Ok(file)
}

/// The file at `path` from its start, gzip undone when it is compressed.
pub(crate) fn open_decoded(
    path: &Path,
    name: &str,
    gzip: bool,
) -> Result<Box<dyn BufRead>, Failure> {
    let file = open_file(path, name)?;
    let len = file.metadata().ok().map(|m| m.len());
    let file = BufReader::with_capacity(1 << 16, file);
    Ok(if gzip {
        gunzip(file, len, name)
    } else {
        Box::new(file)
    })
}

/// A buffered reader of `raw` (of `len` bytes, when known) with gzip undone when its first bytes
/// are gzip's magic, and whether they were. Concatenated gzip members read as one stream, as
/// `gzip -d` does; the stream is checked as it arrives and held to the command's limit.
pub(crate) fn ungzip(
    raw: Box<dyn Read>,
    len: Option<u64>,
    name: &str,
) -> std::io::Result<(Box<dyn BufRead>, bool)> {
    let mut reader = BufReader::with_capacity(1 << 16, raw);
    let is_gzip = profkit_gzip::is_gzip(reader.fill_buf()?);
    if is_gzip {
        Ok((gunzip(reader, len, name), true))
    } else {
        Ok((Box::new(reader), false))
    }
}

fn gz_note(gzip: bool) -> &'static str {
    if gzip { " (gzip-compressed)" } else { "" }
}

fn looks_like_json(prefix: &[u8]) -> bool {
    let text = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    matches!(
        text.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

/// Looks for `traceEvents` in standard input, keeping what it reads (up to a limit) so that the
/// reader still starts at the beginning.
fn sniff_stdin(reader: &mut Box<dyn BufRead>) -> JsonShape {
    let taken = std::mem::replace(reader, Box::new(std::io::empty()));
    let mut tee = Tee {
        inner: taken,
        kept: Vec::new(),
    };
    let shape = sniff_json((&mut tee).take(STDIN_SNIFF_LIMIT));
    let Tee { inner, kept } = tee;
    *reader = Box::new(BufReader::new(std::io::Cursor::new(kept).chain(inner)));
    shape
}

struct Tee {
    inner: Box<dyn BufRead>,
    kept: Vec<u8>,
}

impl Read for Tee {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.kept
            .extend_from_slice(buf.get(..n).unwrap_or_default());
        Ok(n)
    }
}

/// The message for an input of no format we read: every format we do, and what the input is
/// when that much is known (gzip, JSON).
fn unrecognised(name: &str, gzip: bool, shape: Option<&JsonShape>) -> Failure {
    let what = match shape {
        Some(JsonShape::Object(keys)) if keys.is_empty() => {
            "it is an empty JSON object, not a Chrome trace (no traceEvents) or Poplar profile"
                .to_owned()
        }
        Some(JsonShape::Object(keys)) => format!(
            "it is a JSON object with keys {}, not a Chrome trace (no traceEvents) or Poplar profile",
            keys.iter()
                .map(|k| format!("{k:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Some(JsonShape::OtherJson) => {
            "it is JSON, but neither a Chrome trace nor a Poplar profile".to_owned()
        }
        Some(JsonShape::NotJson(why)) => format!("it starts like JSON but does not read: {why}"),
        _ => "its content is none of them".to_owned(),
    };
    let gz = if gzip {
        " (gzip-compressed: decompressed, then looked at)"
    } else {
        ""
    };
    Failure::BadInput(format!(
        "{name}: unrecognised format{gz}: profkit reads {}, gzip-compressed or not; {what}. \
         Name the format with --from if you know it",
        format::READ_FORMATS
    ))
}

/// Returns up to `n` leading bytes without consuming them: they are read into a buffer that is then
/// chained in front of the rest.
pub(crate) fn peek(reader: &mut Box<dyn BufRead>, n: usize) -> std::io::Result<Vec<u8>> {
    let mut prefix = Vec::with_capacity(n);
    let taken = std::mem::replace(reader, Box::new(std::io::empty()));
    let mut limited = taken.take(n as u64);
    // On an error the bytes read so far are put back too, so the next read meets it again.
    let read = limited.read_to_end(&mut prefix);
    let rest = limited.into_inner();
    *reader = Box::new(BufReader::with_capacity(
        1 << 16,
        std::io::Cursor::new(prefix.clone()).chain(rest),
    ));
    read.map(|_| prefix)
}

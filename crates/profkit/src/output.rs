//! Where `convert` and `merge` write, and how an existing OUT is treated.
//!
//! - `-` is standard output.
//! - OUT that is an input (the same file, also through a symbolic or hard link) is refused before
//!   anything is read: replacing it would lose the input.
//! - OUT that exists and is not a regular file (a character device such as `/dev/null`, a FIFO,
//!   a socket; or a link to one) is opened and written through, as a shell's `>` does: replacing a
//!   device with a renamed file would be wrong (and, as root, would replace the device node). So
//!   is a path naming an open descriptor (`/dev/stdout`, `/dev/fd/N`), whatever it leads to.
//! - Otherwise (a regular file, or nothing yet) output goes to a temporary file beside OUT that
//!   replaces OUT only when the conversion succeeded, so a failure never leaves half a file. A
//!   symbolic link is followed: its target is replaced (keeping the link), and an existing file's
//!   permissions carry over.
//! - Temporary files and directories are registered in a process-wide list: the error paths and
//!   `Drop` remove them, and on unix SIGINT, SIGTERM and SIGHUP do too (a thread started with the
//!   first temporary path removes them, then ends the process with the signal's default action).
//!   Moving a finished output into place holds the list's lock, so a signal waits for it and
//!   never sees a half-moved dataset.
//!
//! The signals are caught with `signal-hook`: its iterator hands each signal to an ordinary
//! thread, where removing files is safe (a signal handler may do almost nothing), it needs no
//! `unsafe` of ours, keeps any handler that was there before (so an embedding Python still sees
//! its own), and can end the process with the signal's own default action, so the parent sees
//! "killed by SIGINT" as it would without profkit's handler.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::Failure;

/// What a temporary path is, and so how it is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TempKind {
    File,
    /// A directory, removed with everything in it.
    Dir,
    /// A directory the run made for OUT (a new dataset), removed only while it is empty: other
    /// runs may add their hosts to it meanwhile.
    EmptyDir,
}

/// Temporary paths to remove if the process is interrupted.
static PENDING: Mutex<Vec<(PathBuf, TempKind)>> = Mutex::new(Vec::new());

/// The list of temporary paths (a panic elsewhere while it was held does not make it unusable).
fn pending() -> MutexGuard<'static, Vec<(PathBuf, TempKind)>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

fn remove(path: &Path, kind: TempKind) {
    if kind == TempKind::EmptyDir {
        let _ = std::fs::remove_dir(path);
    } else if kind == TempKind::Dir {
        // The XDL writer's IO thread may create a file while the directory is being removed.
        for _ in 0..3 {
            if std::fs::remove_dir_all(path).is_ok() || !path.exists() {
                return;
            }
        }
    } else {
        let _ = std::fs::remove_file(path);
    }
}

/// Starts (once) the thread that removes the temporary paths when a signal ends the process.
#[cfg(unix)]
fn catch_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // Embedded (the library API, in Python): the caller handles interrupts, and cancels the run,
    // whose error path removes what it made; ending the process on SIGINT would be wrong there.
    if crate::session::embedded() {
        return;
    }
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("profkit-signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    // Held until the process ends: nothing new is registered or moved into place.
                    let list = pending();
                    // Latest first: what a run made inside a directory it made goes first.
                    for (path, kind) in list.iter().rev() {
                        remove(path, *kind);
                    }
                    let _ = signal_hook::low_level::emulate_default_handler(signal);
                    std::process::exit(128 + signal);
                }
            });
    });
}

#[cfg(not(unix))]
fn catch_signals() {}

/// Runs `f` with signals held off: one arriving meanwhile ends the process only after it.
pub(crate) fn holding_signals<T>(f: impl FnOnce() -> T) -> T {
    let _list = pending();
    f()
}

/// A temporary file or directory beside its final place, removed unless it was moved there.
pub(crate) struct Temp {
    path: PathBuf,
    kind: TempKind,
    done: bool,
}

impl Temp {
    /// Candidate names for the temporary path of `target`: `TARGET.profkit-<pid>.tmp`, then
    /// numbered ones should that name be taken.
    fn names(target: &Path) -> impl Iterator<Item = PathBuf> + '_ {
        let pid = std::process::id();
        (0..100).map(move |n| {
            let mut name = target.as_os_str().to_owned();
            if n == 0 {
                name.push(format!(".profkit-{pid}.tmp"));
            } else {
                name.push(format!(".profkit-{pid}-{n}.tmp"));
            }
            PathBuf::from(name)
        })
    }

    /// Creates a new temporary file for `target` (never an existing one, nor through a link).
    fn file(target: &Path) -> std::io::Result<(Temp, File)> {
        catch_signals();
        let mut list = pending();
        let mut last = None;
        for path in Temp::names(target) {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    list.push((path.clone(), TempKind::File));
                    let temp = Temp {
                        path,
                        kind: TempKind::File,
                        done: false,
                    };
                    return Ok((temp, file));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no temporary name is free")))
    }

    /// Creates a new temporary directory at `TARGET.profkit-<pid>.tmp` (or a numbered name).
    pub(crate) fn dir(target: &Path) -> std::io::Result<Temp> {
        catch_signals();
        let mut list = pending();
        let mut last = None;
        for path in Temp::names(target) {
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    list.push((path.clone(), TempKind::Dir));
                    return Ok(Temp {
                        path,
                        kind: TempKind::Dir,
                        done: false,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no temporary name is free")))
    }

    /// Runs `create`, which makes directories someone else moves into place (the Parquet
    /// writer's staging directory), and watches the ones `watched` names: each is removed on drop
    /// or on a signal, if it is still there. Signals are held off meanwhile, so none can end the
    /// process between a directory made and watched.
    pub(crate) fn watching<T, E>(
        create: impl FnOnce() -> Result<T, E>,
        watched: impl FnOnce(&T) -> Vec<PathBuf>,
    ) -> Result<(T, Vec<Temp>), E> {
        catch_signals();
        let mut list = pending();
        let made = create()?;
        let temps = watched(&made)
            .into_iter()
            .map(|path| {
                list.push((path.clone(), TempKind::Dir));
                Temp {
                    path,
                    kind: TempKind::Dir,
                    done: false,
                }
            })
            .collect();
        Ok((made, temps))
    }

    /// Watches OUT when it does not exist yet and the run makes it as a directory (a new
    /// dataset): removed on drop or on a signal while it is still empty, kept by
    /// [`Temp::keep`]. `None` when OUT exists (or is a link, even a dangling one).
    pub(crate) fn new_directory(path: &Path) -> Option<Temp> {
        if std::fs::symlink_metadata(path).is_ok() {
            return None;
        }
        catch_signals();
        pending().push((path.to_path_buf(), TempKind::EmptyDir));
        Some(Temp {
            path: path.to_path_buf(),
            kind: TempKind::EmptyDir,
            done: false,
        })
    }

    /// Keeps the path: it is no longer removed on drop or on a signal.
    pub(crate) fn keep(mut self) {
        pending().retain(|(p, _)| *p != self.path);
        self.done = true;
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the temporary path into place with `place`, signals held off meanwhile; what is
    /// left of it afterwards (all of it when `place` failed) is removed.
    pub(crate) fn commit<T>(
        mut self,
        place: impl FnOnce(&Path) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let mut list = pending();
        let result = place(&self.path);
        if self.path.exists() {
            remove(&self.path, self.kind);
        }
        list.retain(|(p, _)| *p != self.path);
        self.done = true;
        result
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.done {
            let mut list = pending();
            remove(&self.path, self.kind);
            list.retain(|(p, _)| *p != self.path);
        }
    }
}

/// `path` with its symbolic links followed to the path they end at (which may not exist yet),
/// so that a link's target is what gets written, not the link.
pub(crate) fn follow_links(path: &Path) -> std::io::Result<PathBuf> {
    follow(path).map(|(path, _)| path)
}

/// A path that names an open file descriptor (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`):
/// its "link" is the kernel's, to a pipe, terminal or file already opened by someone else.
fn names_descriptor(path: &Path) -> bool {
    path.starts_with("/proc")
        || path.starts_with("/dev/fd")
        || path == Path::new("/dev/stdout")
        || path == Path::new("/dev/stderr")
}

/// [`follow_links`], and whether a descriptor path was met on the way.
fn follow(path: &Path) -> std::io::Result<(PathBuf, bool)> {
    let mut descriptor = names_descriptor(path);
    let mut path = path.to_path_buf();
    // Linux's own limit on links in one lookup.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
                descriptor |= names_descriptor(&path);
            }
            _ => return Ok((path, descriptor)),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// What identifies a file whatever the name it is reached by: device and inode on unix, the
/// canonical path elsewhere. `None` when it does not exist (or cannot be looked at).
#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    // `-` (standard input) is the file, pipe or terminal behind descriptor 0.
    let path = if path.as_os_str() == "-" {
        Path::new("/dev/stdin")
    } else {
        path
    };
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<PathBuf> {
    if path.as_os_str() == "-" {
        return None;
    }
    std::fs::canonicalize(path).ok()
}

/// Refuses an OUT that is one of the inputs (same file, also through links): the conversion
/// would replace what it reads.
pub(crate) fn refuse_inputs(inputs: &[PathBuf], out: &Path) -> Result<(), Failure> {
    if out.as_os_str() == "-" {
        return Ok(());
    }
    let Some(out_id) = identity(out) else {
        return Ok(());
    };
    for input in inputs {
        let same = |path: &Path| identity(path).as_ref() == Some(&out_id);
        // An XDL dataset given as a directory or path prefix: OUT must be none of its files.
        let dataset_file = || {
            if input.as_os_str() == "-" || input.is_file() {
                return None;
            }
            let datasets = profkit_xdl::discover(input).ok()?;
            datasets
                .iter()
                .flat_map(|d| &d.files)
                .flat_map(|f| [&f.data, &f.meta])
                .flatten()
                .find(|path| same(path))
                .cloned()
        };
        let found = if same(input) {
            Some(input.clone())
        } else {
            dataset_file()
        };
        if let Some(found) = found {
            let how = if found == out {
                String::new()
            } else {
                format!(" (the same file as the input {})", found.display())
            };
            return Err(Failure::Usage(format!(
                "{}: the output is an input{how}; writing it would replace what is read: name another output",
                out.display()
            )));
        }
    }
    Ok(())
}

/// Where output goes: standard output, a file written through, or a temporary file that
/// replaces OUT on success.
pub(crate) struct Output {
    shown: PathBuf,
    kind: Kind,
    /// The first error the writer met (writing, flushing, or finishing when dropped).
    late_error: Arc<Mutex<Option<std::io::Error>>>,
}

enum Kind {
    Stdout,
    Through,
    Replace { temp: Temp, target: PathBuf },
}

impl Output {
    /// Opens OUT for writing (see the module's documentation for what happens to an existing
    /// OUT). The writer must be dropped before [`Output::finish`]: dropping it flushes it (and
    /// writes gzip's trailer), and an error then is what `finish` reports.
    pub(crate) fn create(path: &Path) -> Result<(Output, Box<dyn Write>), Failure> {
        let late_error = Arc::new(Mutex::new(None));
        let gzip = path.extension().is_some_and(|e| e == "gz");
        let cannot = |what: &str, e: std::io::Error| {
            Failure::BadInput(format!("{}: cannot {what}: {e}", path.display()))
        };
        if path.as_os_str() == "-" {
            let sink = Sink::new(
                Box::new(BufWriter::with_capacity(1 << 16, std::io::stdout())),
                false,
                Arc::clone(&late_error),
            );
            let output = Output {
                shown: PathBuf::from("standard output"),
                kind: Kind::Stdout,
                late_error,
            };
            return Ok((output, Box::new(sink)));
        }
        let (target, descriptor) = follow(path).map_err(|e| cannot("open", e))?;
        // `/dev/stdout` and the like are written through whatever they are: the file behind is
        // someone else's open file (a shell's `>` or `>>`), appended to as they left it. Only
        // the kernel follows their links (to `pipe:[N]` and such).
        let looked_at = if descriptor { path } else { target.as_path() };
        let (kind, file) = match std::fs::metadata(looked_at) {
            Ok(m) if descriptor && !m.is_dir() => {
                let file = OpenOptions::new()
                    .append(true)
                    .open(path)
                    .map_err(|e| cannot("open", e))?;
                (Kind::Through, file)
            }
            Ok(m) if m.is_dir() => {
                return Err(Failure::Usage(format!(
                    "{}: is a directory; name the output file",
                    path.display()
                )));
            }
            Ok(m) if !m.is_file() => {
                // A device, FIFO or socket: written through, never replaced.
                let file = OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(|e| cannot("open", e))?;
                (Kind::Through, file)
            }
            existing => {
                let (temp, file) = Temp::file(&target).map_err(|e| cannot("create", e))?;
                if let Ok(m) = existing {
                    // The replacement keeps the file's permissions (not its owner).
                    let _ = std::fs::set_permissions(temp.path(), m.permissions());
                }
                (Kind::Replace { temp, target }, file)
            }
        };
        let sink = Sink::new(
            Box::new(BufWriter::with_capacity(1 << 16, file)),
            gzip,
            Arc::clone(&late_error),
        );
        let output = Output {
            shown: path.to_path_buf(),
            kind,
            late_error,
        };
        Ok((output, Box::new(sink)))
    }

    /// Moves the output into place after `result` succeeded (and the writer, already dropped,
    /// flushed without error), or removes it.
    pub(crate) fn finish<T>(self, result: Result<T, Failure>) -> Result<T, Failure> {
        let late = self
            .late_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let shown = self.shown;
        let named = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                Failure::Output(e)
            } else {
                Failure::Output(std::io::Error::new(
                    e.kind(),
                    format!("{}: {e}", shown.display()),
                ))
            }
        };
        let result = match (result, late) {
            (Err(Failure::Output(e)), Some(_)) => Err(named(e)),
            // An IO error the output never saw came from reading (a converter's errors do not
            // say which side they met).
            (Err(Failure::Output(e)), None) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(Failure::BadInput(format!("cannot read the input: {e}")))
            }
            (Err(e), _) => Err(e),
            (Ok(_), Some(e)) => Err(named(e)),
            (Ok(value), None) => Ok(value),
        };
        match self.kind {
            Kind::Stdout | Kind::Through => result,
            Kind::Replace { temp, target } => match result {
                Ok(value) => {
                    temp.commit(|tmp| std::fs::rename(tmp, &target))
                        .map_err(|e| {
                            Failure::BadInput(format!("{}: cannot write: {e}", shown.display()))
                        })?;
                    Ok(value)
                }
                // Dropping the temporary file removes it.
                Err(e) => Err(e),
            },
        }
    }
}

/// The writer handed to the converters: buffered, gzip-compressed when OUT ends in `.gz`, and
/// finished when dropped (the converters take their output by value, so dropping is how they
/// end it), the first error then kept for [`Output::finish`].
struct Sink {
    inner: Option<Inner>,
    late_error: Arc<Mutex<Option<std::io::Error>>>,
}

enum Inner {
    Plain(Box<dyn Write>),
    /// Boxed: the encoder's state is far larger than a box.
    Gzip(Box<flate2::write::GzEncoder<Box<dyn Write>>>),
}

impl Sink {
    fn new(
        out: Box<dyn Write>,
        gzip: bool,
        late_error: Arc<Mutex<Option<std::io::Error>>>,
    ) -> Sink {
        let inner = if gzip {
            Inner::Gzip(Box::new(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::default(),
            )))
        } else {
            Inner::Plain(out)
        };
        Sink {
            inner: Some(inner),
            late_error,
        }
    }
}

impl Sink {
    /// Keeps the first error (a copy: the writer returns the error itself to its caller).
    fn note<T>(&self, result: std::io::Result<T>) -> std::io::Result<T> {
        match &result {
            // Retried by `write_all`: not a failure.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let mut slot = self.late_error.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert_with(|| std::io::Error::new(e.kind(), e.to_string()));
            }
            Ok(_) => {}
        }
        result
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // A cancelled library API run stops at its next write (and its temporary output goes).
        crate::session::check()?;
        let result = match &mut self.inner {
            Some(Inner::Plain(w)) => w.write(buf),
            Some(Inner::Gzip(w)) => w.write(buf),
            None => Err(std::io::Error::other("the output is finished")),
        };
        self.note(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = match &mut self.inner {
            Some(Inner::Plain(w)) => w.flush(),
            Some(Inner::Gzip(w)) => w.flush(),
            None => Ok(()),
        };
        self.note(result)
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let result = match self.inner.take() {
            Some(Inner::Plain(mut w)) => w.flush(),
            Some(Inner::Gzip(w)) => w.finish().and_then(|mut w| w.flush()),
            None => Ok(()),
        };
        if let Err(e) = result {
            let mut slot = self.late_error.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert(e);
        }
    }
}

//! Writing a dataset the way the original `TraceWriter` does, without its failure modes.
//!
//! Naming, the header at the top of every file and the split rule are the original's, so the same
//! records and limit give byte-identical data files: before each record, when the bytes already
//! written to the current file (length prefixes, header and records) reach
//! `max_file_mb x 1,000,000`, the file is closed (its meta written) and the next one started with
//! the header. A file therefore never splits a record, may pass the limit by one record, and never
//! holds only a header (the original could, when its header alone reached the limit).
//!
//! Unlike the original: encoding happens in the caller's thread and file IO in a background thread
//! fed by a queue bounded in bytes (a writer faster than the disk waits, memory stays bounded);
//! [`DatasetWriter::finish`] returns the first IO error; dropping the writer writes everything
//! queued and closes the files (but can report no error); the meta files have correct `*_begin`
//! values; and files can be synced to disk at each rollover.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use bytes::Bytes;

use crate::data::{decode_record, encode_header};
use crate::dataset::{DatasetId, Phase, parse_file_name};
use crate::error::{Error, Result};
use crate::frame::{LENGTH_PREFIX, frame_prefix};
use crate::meta::{MetaTracker, encode_meta};
use crate::proto::{Column, Header, Meta, Record};

/// The original writer's default `max_file_m_size`.
pub const DEFAULT_MAX_FILE_MB: f64 = 300.0;

/// The default bound on bytes queued for the IO thread.
pub const DEFAULT_QUEUE_BYTES: usize = 64 << 20;

/// Small records are gathered into chunks of about this size before they are queued.
const COALESCE: usize = 64 << 10;

/// Where and how a [`DatasetWriter`] writes.
#[derive(Clone, Debug, PartialEq)]
pub struct WriterOptions {
    output: PathBuf,
    phase: Phase,
    name: String,
    rank: u64,
    max_file_mb: f64,
    sync: bool,
    queue_bytes: usize,
    overwrite: bool,
}

impl WriterOptions {
    /// Options for writing into `output`: a local directory, optionally as a `file://` URL (the
    /// original's `output_dir`). It is created if missing. Defaults: `train`, name `trace`, rank 0,
    /// 300 MB files, no fsync, 64 MiB queue, existing files of the dataset refused.
    pub fn new(output: impl Into<PathBuf>) -> WriterOptions {
        WriterOptions {
            output: output.into(),
            phase: Phase::Train,
            name: "trace".into(),
            rank: 0,
            max_file_mb: DEFAULT_MAX_FILE_MB,
            sync: false,
            queue_bytes: DEFAULT_QUEUE_BYTES,
            overwrite: false,
        }
    }

    /// `train` or `test` (the original's `is_training`).
    pub fn phase(mut self, phase: Phase) -> Self {
        self.phase = phase;
        self
    }

    /// The file name part after the phase (the original's `output_file_name`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The worker's rank (the original used its task index).
    pub fn rank(mut self, rank: u64) -> Self {
        self.rank = rank;
        self
    }

    /// The split limit in units of 1,000,000 bytes, fractions allowed (`max_file_m_size`).
    pub fn max_file_mb(mut self, max_file_mb: f64) -> Self {
        self.max_file_mb = max_file_mb;
        self
    }

    /// Whether to fsync each data and meta file when it is closed (at rollover and at the end).
    pub fn sync_on_rollover(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }

    /// The most bytes waiting for the IO thread; a record larger than this still passes alone.
    pub fn queue_bytes(mut self, queue_bytes: usize) -> Self {
        self.queue_bytes = queue_bytes;
        self
    }

    /// Whether to delete the dataset's existing files first instead of refusing to start.
    pub fn overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }

    /// The dataset the options name.
    pub fn id(&self) -> DatasetId {
        DatasetId::new(self.phase, self.name.clone(), self.rank)
    }
}

/// The local directory an output names: a path, or a `file://` URL. `hdfs://` and other schemes
/// are refused with [`Error::UnsupportedOutput`].
pub fn local_output_dir(output: &Path) -> Result<PathBuf> {
    let Some(text) = output.to_str() else {
        return Ok(output.to_path_buf());
    };
    if let Some(rest) = text.strip_prefix("file://") {
        return Ok(PathBuf::from(rest));
    }
    if text.starts_with("hdfs://") {
        return Err(Error::UnsupportedOutput {
            url: text.to_owned(),
            reason:
                "HDFS output is not built in yet; write to a local directory and copy the files \
                     (for example with `hdfs dfs -put`)"
                    .into(),
        });
    }
    if let Some((scheme, _)) = text.split_once("://") {
        if !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(Error::UnsupportedOutput {
                url: text.to_owned(),
                reason: format!(
                    "the {scheme}:// scheme is not supported; give a local path or a file:// URL"
                ),
            });
        }
    }
    Ok(output.to_path_buf())
}

/// What a finished writer wrote.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct WriteReport {
    /// The data files, in index order (each has its `.meta` beside it).
    pub files: Vec<PathBuf>,
    /// Records written.
    pub records: u64,
    /// Bytes written to data files.
    pub bytes: u64,
}

/// A function applied to a key's column before it is written (the original writer's `summary=`).
pub type SummaryFn = Box<dyn FnMut(Column) -> Column + Send>;

/// Writes one dataset: one phase, name and rank.
///
/// ```
/// use profkit_xdl::{Column, DatasetWriter, WriterOptions, discover, ReadOptions};
/// let dir = std::env::temp_dir().join(format!("profkit-xdl-doc-{}", std::process::id()));
/// let mut w = DatasetWriter::create(WriterOptions::new(&dir).overwrite(true), ["loss", "w"])?;
/// w.set_summary("w", |c| Column::scalar(c.values::<f32>().map(|v| v.iter().sum::<f32>()).unwrap_or(0.0)))?;
/// for step in 1..=3 {
///     w.write(100 + step, step, 1_700_000_000_000, vec![Column::scalar(0.5f64), Column::vector(&[1.0f32, 2.0])?])?;
/// }
/// let report = w.finish()?;
/// assert_eq!((report.files.len(), report.records), (1, 3));
/// let records: Vec<_> = discover(&dir)?[0].records(ReadOptions::default()).collect::<Result<_, _>>()?;
/// assert_eq!(records[2].column[1].values::<f32>()?[0], 3.0);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), profkit_xdl::Error>(())
/// ```
pub struct DatasetWriter {
    id: DatasetId,
    dir: PathBuf,
    header_frame: Vec<u8>,
    keys: Vec<String>,
    summaries: Vec<Option<SummaryFn>>,
    limit: f64,
    queue: Arc<Queue>,
    thread: Option<JoinHandle<()>>,
    file_index: u64,
    cur_size: u64,
    tracker: MetaTracker,
    report: WriteReport,
    /// Small records (and the header) not yet queued, all for the current file.
    pending: Vec<u8>,
}

impl DatasetWriter {
    /// Starts a dataset with these header keys. No file is created before the first record.
    pub fn create<S: Into<String>>(
        options: WriterOptions,
        keys: impl IntoIterator<Item = S>,
    ) -> Result<DatasetWriter> {
        let dir = local_output_dir(&options.output)?;
        if options.max_file_mb.is_nan() || options.max_file_mb < 0.0 {
            return Err(Error::Dataset {
                path: dir,
                reason: format!(
                    "max file size {} MB is not a non-negative number",
                    options.max_file_mb
                ),
            });
        }
        let id = options.id();
        if id.name.is_empty() || id.name.contains('/') || id.name.contains('\\') {
            return Err(Error::Dataset {
                path: dir,
                reason: format!("{:?} cannot be a trace file name", id.name),
            });
        }
        std::fs::create_dir_all(&dir).map_err(|e| Error::from(e).in_file(&dir))?;
        clear_existing(&dir, &id, options.overwrite)?;
        let header = Header::new(keys);
        let body = encode_header(&header);
        let mut header_frame = Vec::with_capacity(body.len() + 4);
        header_frame.extend_from_slice(&frame_prefix(body.len(), 0, 0)?);
        header_frame.extend_from_slice(&body);
        let queue = Arc::new(Queue::new(options.queue_bytes));
        let io_queue = Arc::clone(&queue);
        let sync = options.sync;
        let thread = std::thread::Builder::new()
            .name(format!("xdl-writer {id}"))
            .spawn(move || io_thread(&io_queue, sync))?;
        Ok(DatasetWriter {
            id,
            dir,
            header_frame,
            summaries: header.key.iter().map(|_| None).collect(),
            keys: header.key,
            limit: options.max_file_mb * 1e6,
            queue,
            thread: Some(thread),
            file_index: 0,
            cur_size: 0,
            tracker: MetaTracker::new(),
            report: WriteReport::default(),
            pending: Vec::with_capacity(COALESCE),
        })
    }

    /// The header keys.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The dataset being written.
    pub fn id(&self) -> &DatasetId {
        &self.id
    }

    /// Applies `f` to `key`'s column of every later record before it is encoded (in the caller's
    /// thread, as the original did). Fails for a key the header lacks.
    pub fn set_summary(
        &mut self,
        key: &str,
        f: impl FnMut(Column) -> Column + Send + 'static,
    ) -> Result<()> {
        let i = self
            .keys
            .iter()
            .position(|k| k == key)
            .ok_or_else(|| Error::UnknownKey(key.to_owned()))?;
        if let Some(slot) = self.summaries.get_mut(i) {
            *slot = Some(Box::new(f));
        }
        Ok(())
    }

    /// Writes one record: a column per key, in header order.
    pub fn write(
        &mut self,
        gstep: i64,
        lstep: i64,
        timestamp: i64,
        columns: Vec<Column>,
    ) -> Result<()> {
        self.write_record(Record::new(gstep, lstep, timestamp, columns))
    }

    /// Writes one record after applying the summary functions. The record is refused, and nothing
    /// written, when its column count differs from the header's or a column is invalid.
    pub fn write_record(&mut self, mut record: Record) -> Result<()> {
        if record.column.len() != self.keys.len() {
            return Err(Error::ColumnCount {
                expected: self.keys.len(),
                found: record.column.len(),
            });
        }
        for (column, summary) in record.column.iter_mut().zip(self.summaries.iter_mut()) {
            if let Some(f) = summary {
                *column = f(std::mem::take(column));
            }
        }
        self.check_columns(&record)?;
        let len = prost::Message::encoded_len(&record);
        let prefix = frame_prefix(len, self.report.records + 1, self.cur_size)?;
        self.before_record()?;
        if len < COALESCE / 4 {
            // Small records are gathered into one chunk, so the IO thread is woken per 64 KiB
            // rather than per record.
            if self.pending.len() + 4 + len > COALESCE {
                self.flush_pending()?;
            }
            self.pending.extend_from_slice(&prefix);
            prost::Message::encode_raw(&record, &mut self.pending);
        } else {
            self.flush_pending()?;
            let mut buf = Vec::with_capacity(len + 4);
            buf.extend_from_slice(&prefix);
            prost::Message::encode_raw(&record, &mut buf);
            self.queue.push(Cmd::Write(Chunk::Bytes(buf)))?;
        }
        self.after_record(4 + len as u64, &record);
        Ok(())
    }

    /// Writes a record frame's body exactly as given (a rewrite passes records through this way,
    /// keeping any field our schema lacks). The body is decoded to check it and to keep the meta;
    /// summary functions do not apply.
    pub fn write_encoded(&mut self, body: Bytes) -> Result<()> {
        let record = decode_record(body.clone())?;
        if record.column.len() != self.keys.len() {
            return Err(Error::ColumnCount {
                expected: self.keys.len(),
                found: record.column.len(),
            });
        }
        self.check_columns(&record)?;
        let prefix = frame_prefix(body.len(), self.report.records + 1, self.cur_size)?;
        self.before_record()?;
        if body.len() < COALESCE / 4 {
            if self.pending.len() + 4 + body.len() > COALESCE {
                self.flush_pending()?;
            }
            self.pending.extend_from_slice(&prefix);
            self.pending.extend_from_slice(&body);
        } else {
            self.flush_pending()?;
            self.queue
                .push(Cmd::Write(Chunk::Frame(prefix, body.clone())))?;
        }
        self.after_record(4 + body.len() as u64, &record);
        Ok(())
    }

    fn check_columns(&self, record: &Record) -> Result<()> {
        for (i, column) in record.column.iter().enumerate() {
            column.check().map_err(|e| Error::Column {
                index: i,
                key: self.keys.get(i).cloned().unwrap_or_default(),
                source: Box::new(e),
            })?;
        }
        Ok(())
    }

    /// The original's split rule, checked before each record; a file always gets at least one
    /// record.
    fn before_record(&mut self) -> Result<()> {
        if self.file_index == 0
            || (self.tracker.records() > 0 && self.cur_size as f64 >= self.limit)
        {
            self.rollover()?;
        }
        Ok(())
    }

    fn after_record(&mut self, size: u64, record: &Record) {
        self.cur_size += size;
        self.report.bytes += size;
        self.report.records += 1;
        self.tracker.add(record);
    }

    /// Hands the gathered small records to the IO thread.
    fn flush_pending(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.pending, Vec::with_capacity(COALESCE));
        self.queue.push(Cmd::Write(Chunk::Bytes(chunk)))
    }

    fn close_current(&mut self) -> Result<()> {
        if self.file_index > 0 {
            self.flush_pending()?;
            let meta_path = self.dir.join(self.id.meta_file_name(self.file_index));
            self.queue.push(Cmd::Close {
                meta_path,
                meta: self.tracker.meta(),
            })?;
        }
        Ok(())
    }

    fn rollover(&mut self) -> Result<()> {
        self.close_current()?;
        let index = self.file_index + 1;
        let path = self.dir.join(self.id.data_file_name(index));
        self.queue.push(Cmd::Open(path.clone()))?;
        self.pending.extend_from_slice(&self.header_frame);
        self.file_index = index;
        self.cur_size = self.header_frame.len() as u64;
        self.report.bytes += self.cur_size;
        self.tracker = MetaTracker::new();
        self.report.files.push(path);
        Ok(())
    }

    /// Closes the last file (writing its meta), waits for the IO thread, and returns what was
    /// written, or the first error the IO thread met.
    pub fn finish(mut self) -> Result<WriteReport> {
        self.shutdown()?;
        Ok(std::mem::take(&mut self.report))
    }

    fn shutdown(&mut self) -> Result<()> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        let closed = self.close_current();
        self.queue.close();
        let joined = thread.join();
        if let Some(e) = self.queue.take_error() {
            return Err(e);
        }
        closed?;
        if joined.is_err() {
            return Err(Error::WriterFailed("the IO thread panicked".into()));
        }
        Ok(())
    }
}

impl Drop for DatasetWriter {
    /// Writes everything queued, closes the last file with its meta and joins the IO thread. An
    /// error here cannot be reported: call [`DatasetWriter::finish`] to see it.
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Refuses (or, with `overwrite`, deletes) files of the dataset already in `dir`, so that a new
/// dataset is never mixed with the tail of an older one.
fn clear_existing(dir: &Path, id: &DatasetId, overwrite: bool) -> Result<()> {
    let mut existing = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::from(e).in_file(dir))? {
        let entry = entry.map_err(|e| Error::from(e).in_file(dir))?;
        let name = entry.file_name();
        if let Some(parsed) = name.to_str().and_then(parse_file_name) {
            if parsed.id == *id {
                existing.push(entry.path());
            }
        }
    }
    if existing.is_empty() {
        return Ok(());
    }
    if !overwrite {
        existing.sort();
        return Err(Error::Dataset {
            path: dir.to_path_buf(),
            reason: format!(
                "already holds {} file(s) of dataset {id} (such as {}); remove them or allow overwriting",
                existing.len(),
                existing
                    .first()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            ),
        });
    }
    for path in existing {
        std::fs::remove_file(&path).map_err(|e| Error::from(e).in_file(&path))?;
    }
    Ok(())
}

/// Bytes on their way to the current file.
enum Chunk {
    /// Already framed.
    Bytes(Vec<u8>),
    /// A length prefix and a body shared with the caller.
    Frame([u8; 4], Bytes),
}

impl Chunk {
    fn len(&self) -> usize {
        match self {
            Chunk::Bytes(b) => b.len(),
            Chunk::Frame(_, b) => LENGTH_PREFIX as usize + b.len(),
        }
    }
}

/// What the IO thread does, in order.
enum Cmd {
    Open(PathBuf),
    Write(Chunk),
    Close { meta_path: PathBuf, meta: Meta },
}

impl Cmd {
    fn queued_bytes(&self) -> usize {
        match self {
            Cmd::Write(chunk) => chunk.len(),
            _ => 0,
        }
    }
}

struct State {
    cmds: VecDeque<Cmd>,
    bytes: usize,
    closed: bool,
    io_exited: bool,
    error: Option<Error>,
    error_text: Option<String>,
}

/// A queue bounded in bytes between the caller and the IO thread.
struct Queue {
    state: Mutex<State>,
    changed: Condvar,
    capacity: usize,
}

impl Queue {
    fn new(capacity: usize) -> Queue {
        Queue {
            state: Mutex::new(State {
                cmds: VecDeque::new(),
                bytes: 0,
                closed: false,
                io_exited: false,
                error: None,
                error_text: None,
            }),
            changed: Condvar::new(),
            capacity,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means the other side panicked; the state itself stays consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(guard).unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `cmd`, waiting while the queue is over capacity. Fails at once when the IO thread
    /// has failed or stopped, so a caller never waits on a thread that will not drain the queue.
    fn push(&self, cmd: Cmd) -> Result<()> {
        let size = cmd.queued_bytes();
        let mut st = self.lock();
        loop {
            if let Some(text) = &st.error_text {
                return Err(Error::WriterFailed(text.clone()));
            }
            if st.io_exited || st.closed {
                return Err(Error::WriterFailed("the IO thread has stopped".into()));
            }
            if st.bytes == 0 || st.bytes.saturating_add(size) <= self.capacity {
                break;
            }
            st = self.wait(st);
        }
        st.bytes += size;
        st.cmds.push_back(cmd);
        drop(st);
        self.changed.notify_all();
        Ok(())
    }

    fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }

    fn take_error(&self) -> Option<Error> {
        self.lock().error.take()
    }

    /// The next command, or `None` once the queue is closed and drained.
    fn pop(&self) -> Option<Cmd> {
        let mut st = self.lock();
        loop {
            if let Some(cmd) = st.cmds.pop_front() {
                return Some(cmd);
            }
            if st.closed {
                return None;
            }
            st = self.wait(st);
        }
    }

    fn done(&self, size: usize, result: Result<()>) {
        let mut st = self.lock();
        st.bytes = st.bytes.saturating_sub(size);
        if let Err(e) = result {
            if st.error_text.is_none() {
                st.error_text = Some(e.to_string());
                st.error = Some(e);
            }
        }
        drop(st);
        self.changed.notify_all();
    }

    fn failed(&self) -> bool {
        self.lock().error_text.is_some()
    }
}

/// Marks the IO thread as gone however it ends (a panic included), waking any waiting caller.
struct ExitGuard<'a>(&'a Queue);

impl Drop for ExitGuard<'_> {
    fn drop(&mut self) {
        self.0.lock().io_exited = true;
        self.0.changed.notify_all();
    }
}

struct OpenFile {
    path: PathBuf,
    writer: BufWriter<File>,
}

fn io_thread(queue: &Queue, sync: bool) {
    let _guard = ExitGuard(queue);
    let mut current: Option<OpenFile> = None;
    while let Some(cmd) = queue.pop() {
        let size = cmd.queued_bytes();
        // After a failure the rest is dropped: the caller learns of it from the next write or
        // from finish, and nothing after a hole in a file would be readable as written.
        let result = if queue.failed() {
            Ok(())
        } else {
            execute(cmd, &mut current, sync)
        };
        queue.done(size, result);
    }
    if let Some(file) = current.take() {
        let result = close_data(file, sync);
        queue.done(0, result);
    }
}

fn execute(cmd: Cmd, current: &mut Option<OpenFile>, sync: bool) -> Result<()> {
    match cmd {
        Cmd::Open(path) => {
            if let Some(file) = current.take() {
                close_data(file, sync)?;
            }
            let file = File::create(&path).map_err(|e| Error::from(e).in_file(&path))?;
            *current = Some(OpenFile {
                writer: BufWriter::with_capacity(1 << 20, file),
                path,
            });
            Ok(())
        }
        Cmd::Write(chunk) => {
            let Some(file) = current.as_mut() else {
                return Err(Error::WriterFailed(
                    "a record came before its file was opened".into(),
                ));
            };
            let result = match &chunk {
                Chunk::Bytes(b) => file.writer.write_all(b),
                Chunk::Frame(prefix, body) => file
                    .writer
                    .write_all(prefix)
                    .and_then(|()| file.writer.write_all(body)),
            };
            result.map_err(|e| Error::from(e).in_file(&file.path))
        }
        Cmd::Close { meta_path, meta } => {
            if let Some(file) = current.take() {
                close_data(file, sync)?;
            }
            let write_meta = || -> std::io::Result<()> {
                let mut f = File::create(&meta_path)?;
                f.write_all(&encode_meta(&meta))?;
                if sync {
                    f.sync_all()?;
                }
                Ok(())
            };
            write_meta().map_err(|e| Error::from(e).in_file(&meta_path))
        }
    }
}

fn close_data(file: OpenFile, sync: bool) -> Result<()> {
    let OpenFile { path, writer } = file;
    let result = writer
        .into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| if sync { f.sync_all() } else { Ok(()) });
    result.map_err(|e| Error::from(e).in_file(&path))
}

//! Hive-partitioned Parquet datasets: `ROOT/host=<host>/table=<table>/<part>.parquet`.
//!
//! Each host is written into a hidden directory beside its final place (`ROOT/.host=<host>.tmp-<pid>`,
//! which engines skip) and moved into place only when every table is complete, so a dataset
//! never shows half a host, and hosts converted in parallel (by processes on different machines
//! writing to shared storage) never touch each other's files. Adding a host rewrites nothing. A
//! host already present is refused unless [`WriteOptions::overwrite`] asks to replace it.
//!
//! The files leave out the `host` column: the directory names carry it, as Hive partitioning
//! does, so engines reading the dataset with Hive partitioning see `host` (and `table`) as
//! columns.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use crate::error::{Error, Result};
use crate::events::{Chunk, EventBatches, SideTables};
use crate::schema;
use crate::xdl::XdlRecords;

/// Rows per Parquet row group unless [`WriteOptions::row_group_rows`] says otherwise: large
/// enough for scans, while the writer's buffer stays bounded by [`MAX_BUFFERED_BYTES`].
pub const DEFAULT_ROW_GROUP_ROWS: usize = 1 << 20;

/// A row group is closed early once the writer buffers this many encoded bytes (4 MiB: about
/// 450,000 events of a real host plane a row group; 16 MiB cost the conversion of a 14.3 MB
/// profile 3 MB more at its peak).
pub const MAX_BUFFERED_BYTES: usize = 4 << 20;

/// The buffer between a Parquet writer and its file.
const WRITE_BUFFER_BYTES: usize = 64 << 10;

/// Rows of the planes and lines tables [`HostWriter::write_host_tables`] holds before writing
/// them: an XSpace of millions of empty planes costs a bounded batch, not a row per plane.
pub const SIDE_BATCH_ROWS: usize = 1 << 16;

/// The rows [`HostWriter::write_host_tables`] wrote, per table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Written {
    /// Rows of the events table.
    pub events: u64,
    /// Rows of the planes table.
    pub planes: u64,
    /// Rows of the lines table.
    pub lines: u64,
}

/// How a host's tables are written.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Rows per row group.
    pub row_group_rows: usize,
    /// zstd compression level (1 to 22; 1 by default: level 3 made files 4% smaller and the
    /// conversion a quarter slower).
    pub zstd_level: i32,
    /// Replace a host already in the dataset instead of refusing it.
    pub overwrite: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            row_group_rows: DEFAULT_ROW_GROUP_ROWS,
            zstd_level: 1,
            overwrite: false,
        }
    }
}

impl WriteOptions {
    /// Default options, replacing a host already present when `overwrite` is true.
    pub fn with_overwrite(overwrite: bool) -> WriteOptions {
        WriteOptions {
            overwrite,
            ..WriteOptions::default()
        }
    }
}

/// The name a host has in a dataset: characters other than ASCII letters, digits, `.`, `-` and
/// `_` become `_` (so the directory name needs no escaping in any engine), and a leading `.` or
/// `_` (which engines take for hidden files) gets an `h` in front; an empty name is `unknown`.
pub fn host_name(host: &str) -> String {
    let mut name: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        name.push_str("unknown");
    }
    if name.starts_with(['.', '_']) {
        name.insert(0, 'h');
    }
    name
}

/// The hosts already in the dataset at `root` (empty when it does not exist yet).
pub fn hosts(root: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::Io {
                path: root.to_path_buf(),
                source,
            });
        }
    };
    let mut hosts = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::Io {
            path: root.to_path_buf(),
            source,
        })?;
        if let Some(host) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix("host="))
        {
            hosts.push(host.to_owned());
        }
    }
    hosts.sort();
    Ok(hosts)
}

/// One host being written into a dataset; nothing shows in the dataset until [`HostWriter::commit`].
/// Dropped without a commit, it removes what it wrote.
pub struct HostWriter {
    host: String,
    tmp: PathBuf,
    target: PathBuf,
    options: WriteOptions,
    committed: bool,
    /// Asked before each batch is written: true stops the writing with [`Error::Interrupted`].
    stop: Option<Box<dyn Fn() -> bool + Send + Sync>>,
}

/// One Parquet file being written.
struct TableFile {
    writer: ArrowWriter<BufWriter<File>>,
    /// The columns written (all but `host`).
    keep: Vec<usize>,
    /// Where the file ends up, for messages.
    final_path: PathBuf,
    rows: u64,
}

impl TableFile {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let batch = batch.project(&self.keep)?;
        self.rows += batch.num_rows() as u64;
        let path = self.final_path.clone();
        let parquet = |source| Error::Parquet {
            path: path.clone(),
            source,
        };
        self.writer.write(&batch).map_err(parquet)?;
        if self.writer.in_progress_size() > MAX_BUFFERED_BYTES {
            self.writer.flush().map_err(parquet)?;
        }
        Ok(())
    }

    fn close(self) -> Result<u64> {
        let path = self.final_path.clone();
        self.writer
            .close()
            .map_err(|source| Error::Parquet { path, source })?;
        Ok(self.rows)
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl HostWriter {
    /// Starts writing `host` (named as [`host_name`] makes it) into the dataset at `root`, which
    /// is created if needed. Refuses a host already present unless `options.overwrite`.
    pub fn create(root: &Path, host: &str, options: WriteOptions) -> Result<HostWriter> {
        let host = host_name(host);
        std::fs::create_dir_all(root).map_err(io(root))?;
        let target = root.join(format!("host={host}"));
        if target.exists() && !options.overwrite {
            return Err(Error::Dataset {
                path: target,
                reason: format!(
                    "host {host} is already in the dataset; nothing was written (replace it with --overwrite, or give the input another name)"
                ),
            });
        }
        let tmp = root.join(format!(".host={host}.tmp-{}", std::process::id()));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
        }
        std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
        Ok(HostWriter {
            host,
            tmp,
            target,
            options,
            committed: false,
            stop: None,
        })
    }

    /// Asks `stop` before each batch is written: when it says true, writing ends with
    /// [`Error::Interrupted`] (and the host, never committed, is removed when the writer is
    /// dropped). How a caller cancels a long conversion.
    pub fn stop_when(&mut self, stop: impl Fn() -> bool + Send + Sync + 'static) {
        self.stop = Some(Box::new(stop));
    }

    fn check_stop(&self) -> Result<()> {
        match &self.stop {
            Some(stop) if stop() => Err(Error::Interrupted),
            _ => Ok(()),
        }
    }

    /// Writes every table of the host from `batches` (to its end): events, planes, lines and
    /// metadata, the planes and lines in batches of [`SIDE_BATCH_ROWS`] rows as they come, so that
    /// memory does not grow with the number of planes.
    pub fn write_host_tables<I>(&mut self, batches: &mut EventBatches<I>) -> Result<Written>
    where
        I: crate::events::RawItems,
    {
        batches.spill_side(SIDE_BATCH_ROWS);
        let events_schema = arrow_array::RecordBatchReader::schema(batches);
        let mut events = self.open_table(schema::EVENTS, "part-0", &events_schema)?;
        let mut planes = self.open_table(schema::PLANES, "part-0", &schema::planes())?;
        let mut lines = self.open_table(schema::LINES, "part-0", &schema::lines())?;
        while let Some(chunk) = batches.next_chunk()? {
            self.check_stop()?;
            match chunk {
                Chunk::Events(batch) => events.write(&batch)?,
                Chunk::Planes(batch) => planes.write(&batch)?,
                Chunk::Lines(batch) => lines.write(&batch)?,
            }
        }
        let side = batches.side_tables()?;
        planes.write(&side.planes)?;
        lines.write(&side.lines)?;
        let mut metadata = self.open_table(schema::METADATA, "part-0", &side.metadata.schema())?;
        metadata.write(&side.metadata)?;
        metadata.close()?;
        Ok(Written {
            events: events.close()?,
            planes: planes.close()?,
            lines: lines.close()?,
        })
    }

    /// The hidden directory the host is written into before [`HostWriter::commit`] moves it into
    /// place (so that a caller can remove it should the process be interrupted).
    pub fn staging_dir(&self) -> &Path {
        &self.tmp
    }

    /// The host's name in the dataset.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Writes the events of `batches` (to its end) as `table=events/part-0.parquet`; the rows.
    pub fn write_events<I>(&mut self, batches: &mut EventBatches<I>) -> Result<u64>
    where
        I: crate::events::RawItems,
    {
        let schema = arrow_array::RecordBatchReader::schema(batches);
        self.write_table(schema::EVENTS, "part-0", &schema, || batches.next_batch())
    }

    /// Writes the planes, lines and metadata tables.
    pub fn write_side(&mut self, side: &SideTables) -> Result<()> {
        for (table, batch) in [
            (schema::PLANES, &side.planes),
            (schema::LINES, &side.lines),
            (schema::METADATA, &side.metadata),
        ] {
            let mut once = Some(batch.clone());
            self.write_table(table, "part-0", &batch.schema(), || Ok(once.take()))?;
        }
        Ok(())
    }

    /// Writes xprof's op metrics of the host's OpStats as `table=op_metrics/part-0.parquet`
    /// (see [`crate::op_metrics`]); the rows written.
    pub fn write_op_metrics(&mut self, stats: &profkit_xprof::proto::OpStats) -> Result<u64> {
        let mut once = Some(crate::op_metrics::batch(&self.host, stats)?);
        let schema = crate::op_metrics::schema();
        self.write_table(crate::op_metrics::OP_METRICS, "part-0", &schema, || {
            Ok(once.take())
        })
    }

    /// Writes the steps database of the host's OpStats as `table=steps/part-0.parquet` (see
    /// [`crate::steps`]); the rows written.
    pub fn write_steps(&mut self, stats: &profkit_xprof::proto::OpStats) -> Result<u64> {
        let mut once = Some(crate::steps::batch(&self.host, stats)?);
        let schema = crate::steps::schema();
        self.write_table(crate::steps::STEPS, "part-0", &schema, || Ok(once.take()))
    }

    /// Writes the kernel stats database of the host's OpStats as
    /// `table=kernels/part-0.parquet` (see [`crate::kernels`]); the rows written.
    pub fn write_kernels(&mut self, stats: &profkit_xprof::proto::OpStats) -> Result<u64> {
        let mut once = Some(crate::kernels::batch(&self.host, stats)?);
        let schema = crate::kernels::schema();
        self.write_table(crate::kernels::KERNELS, "part-0", &schema, || {
            Ok(once.take())
        })
    }

    /// Writes the HLO ops of the host's OpStats as `table=hlo_ops/part-0.parquet` (see
    /// [`crate::hlo_ops`]); the rows written.
    pub fn write_hlo_ops(&mut self, stats: &profkit_xprof::proto::OpStats) -> Result<u64> {
        let mut once = Some(crate::hlo_ops::batch(&self.host, stats)?);
        let schema = crate::hlo_ops::schema();
        self.write_table(crate::hlo_ops::HLO_OPS, "part-0", &schema, || {
            Ok(once.take())
        })
    }

    /// Writes the records of one XDL dataset as `table=xdl_records/<dataset>.<rank>.parquet`.
    pub fn write_xdl(&mut self, records: &mut XdlRecords, part: &str) -> Result<u64> {
        let schema = arrow_array::RecordBatchReader::schema(records);
        self.write_table(schema::XDL_RECORDS, part, &schema, || records.next_batch())
    }

    /// Writes one Parquet file of `table` from a stream of batches of `schema`, without the
    /// `host` column; the rows written.
    pub fn write_table(
        &mut self,
        table: &str,
        part: &str,
        schema: &SchemaRef,
        mut next: impl FnMut() -> Result<Option<RecordBatch>>,
    ) -> Result<u64> {
        let mut file = self.open_table(table, part, schema)?;
        while let Some(batch) = next()? {
            self.check_stop()?;
            file.write(&batch)?;
        }
        file.close()
    }

    /// Starts the Parquet file of `table` (`part`), for batches of `schema`.
    fn open_table(&self, table: &str, part: &str, schema: &SchemaRef) -> Result<TableFile> {
        let dir = self.tmp.join(format!("table={table}"));
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let path = dir.join(format!("{part}.parquet"));
        let final_path = self
            .target
            .join(format!("table={table}"))
            .join(format!("{part}.parquet"));
        let parquet = |source| Error::Parquet {
            path: final_path.clone(),
            source,
        };
        let (file_schema, keep) = schema::without_host(schema);
        let level = ZstdLevel::try_new(self.options.zstd_level).map_err(parquet)?;
        let mut kv = vec![
            KeyValue::new(schema::VERSION_KEY.to_owned(), schema::VERSION.to_owned()),
            KeyValue::new(schema::TABLE_KEY.to_owned(), table.to_owned()),
        ];
        kv.push(KeyValue::new("profkit.host".to_owned(), self.host.clone()));
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_max_row_group_size(self.options.row_group_rows.max(1))
            .set_key_value_metadata(Some(kv))
            // Min and max per row group, not per page: the page indexes would be kept in memory
            // until the file is closed, growing with the file (half a megabyte per million
            // events); engines prune by row group.
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_offset_index_disabled(true);
        // Columns whose values rarely repeat get no Parquet dictionary (it would be built, then
        // dropped when it outgrows its page); names and the other repeating columns keep one.
        for column in schema::UNIQUE_COLUMNS {
            props = props.set_column_dictionary_enabled(ColumnPath::from(*column), false);
        }
        let values = ColumnPath::new(vec!["stats".into(), "entries".into(), "values".into()]);
        let keys = ColumnPath::new(vec!["stats".into(), "entries".into(), "keys".into()]);
        props = props.set_column_dictionary_enabled(values.clone(), false);
        // Min and max of the map's texts help no query, and cost a comparison per stat.
        for path in [keys, values] {
            props = props.set_column_statistics_enabled(path, EnabledStatistics::None);
        }
        // Nor do those of the event names and the typed string stats: a row group holds most of
        // a plane's names, so their range prunes nothing, and each costs a string comparison per
        // row (4% of the conversion). Plane and line names keep theirs (a row group spans one
        // or two planes).
        if table == schema::EVENTS {
            let typed_strings = schema::TYPED_STATS
                .iter()
                .filter(|t| t.2 == schema::TypedKind::Str)
                .map(|t| t.0);
            for column in ["name", "display_name"].into_iter().chain(typed_strings) {
                props = props.set_column_statistics_enabled(
                    ColumnPath::from(column),
                    EnabledStatistics::None,
                );
            }
        }
        let props = props.build();
        let file = File::create(&path).map_err(io(&path))?;
        let writer = ArrowWriter::try_new(
            // Small: the writer hands over whole pages, which bypass the buffer, and a megabyte
            // per open table (events, planes and lines are open at once) is memory held for
            // nothing.
            BufWriter::with_capacity(WRITE_BUFFER_BYTES, file),
            file_schema,
            Some(props),
        )
        .map_err(parquet)?;
        Ok(TableFile {
            writer,
            keep,
            final_path,
            rows: 0,
        })
    }

    /// Moves the host into the dataset (replacing the one there with `overwrite`).
    pub fn commit(mut self) -> Result<PathBuf> {
        let mut old = None;
        if self.target.exists() {
            if !self.options.overwrite {
                return Err(Error::Dataset {
                    path: self.target.clone(),
                    reason: format!(
                        "host {} appeared in the dataset while it was being written; nothing was written",
                        self.host
                    ),
                });
            }
            let mut aside = self.tmp.clone().into_os_string();
            aside.push(".old");
            let aside = PathBuf::from(aside);
            std::fs::rename(&self.target, &aside).map_err(io(&self.target))?;
            old = Some(aside);
        }
        std::fs::rename(&self.tmp, &self.target).map_err(|source| Error::Dataset {
            path: self.target.clone(),
            reason: format!("cannot move the host into place: {source}"),
        })?;
        self.committed = true;
        if let Some(old) = old {
            std::fs::remove_dir_all(&old).map_err(io(&old))?;
        }
        Ok(self.target.clone())
    }
}

impl Drop for HostWriter {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

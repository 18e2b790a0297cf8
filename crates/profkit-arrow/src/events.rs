//! The events of a space as record batches, plane by plane, with the small tables beside them.
//!
//! Planes are read through zero-copy views ([`profkit_xplane::XPlaneView`]) of their encoded
//! bytes, never decoded into owned trees: memory is the plane being read (its bytes, and small
//! tables of its metadata) plus the batch being built. Names are looked up by metadata id in
//! tables made once per plane; each name is hashed once per batch, when first met, never per row.

use std::io::Read;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use profkit_xplane::{RawSpaceItem, ReadOptions, XSpace, XSpaceReader};

use crate::error::{Error, Result};
use crate::schema::{self, Layout};

mod builders;
mod lookup;
mod plane;
mod side;
mod stat_text;

use builders::*;
use lookup::*;
use plane::*;
use side::*;
use stat_text::*;

/// Rows per record batch unless [`Options::batch_rows`] says otherwise.
pub const DEFAULT_BATCH_ROWS: usize = 8 * 1024;

/// How batches are made.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// Rows per events batch (at least 1): memory grows with it.
    pub batch_rows: usize,
    /// The columns of the events table: the dataset's (the default) or the frame's.
    pub layout: Layout,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            batch_rows: DEFAULT_BATCH_ROWS,
            layout: Layout::Dataset,
        }
    }
}

impl Options {
    /// Options with `batch_rows` rows per batch.
    pub fn with_batch_rows(batch_rows: usize) -> Options {
        Options {
            batch_rows: batch_rows.max(1),
            ..Options::default()
        }
    }

    /// These options with the events table's columns laid out as `layout` says.
    pub fn layout(mut self, layout: Layout) -> Options {
        self.layout = layout;
        self
    }
}

/// Where a host's events came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostInfo {
    /// The host's name: the `host` column and the dataset's `host=` directory.
    pub host: String,
    /// The input's format (`xspace`, `chrome`, `paddle`, `paddle-trace`, `poplar`, `xdl`).
    pub source_format: String,
    /// The input files (or other names), for the metadata table.
    pub sources: Vec<String>,
}

impl HostInfo {
    /// A host read from `sources` in `source_format`.
    pub fn new(
        host: impl Into<String>,
        source_format: impl Into<String>,
        sources: impl IntoIterator<Item = impl Into<String>>,
    ) -> HostInfo {
        HostInfo {
            host: host.into(),
            source_format: source_format.into(),
            sources: sources.into_iter().map(Into::into).collect(),
        }
    }
}

/// The `planes`, `lines` and `metadata` tables of one host (small: a row per plane, line or fact).
#[derive(Clone, Debug)]
pub struct SideTables {
    /// One row per plane.
    pub planes: RecordBatch,
    /// One row per line.
    pub lines: RecordBatch,
    /// Key-value facts: schema version, source format and files, the XSpace's hostnames, errors
    /// and warnings.
    pub metadata: RecordBatch,
}

/// A batch of one of a host's tables, as [`EventBatches::next_chunk`] gives them.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Chunk {
    /// Rows of the events table.
    Events(RecordBatch),
    /// Rows of the planes table.
    Planes(RecordBatch),
    /// Rows of the lines table.
    Lines(RecordBatch),
}

/// Where [`EventBatches`] takes the items of an XSpace from: planes kept encoded, to be viewed.
pub trait RawItems {
    /// The next item in file order, `None` at the end (and after an error).
    fn next_raw_item(&mut self) -> Option<profkit_xplane::Result<RawSpaceItem>>;
}

impl<R: Read> RawItems for XSpaceReader<R> {
    fn next_raw_item(&mut self) -> Option<profkit_xplane::Result<RawSpaceItem>> {
        self.next_raw()
    }
}

// ---------------------------------------------------------------------------------------------
// The stream

/// The events table of one host as a stream of record batches (see the crate documentation).
///
/// It reads the input one plane at a time, through a view of the plane's bytes, and fills
/// batches of [`Options::batch_rows`] rows that may span planes, so memory is one plane's bytes
/// (what the XSpace reader holds) plus one batch. It is a [`RecordBatchReader`] (errors become
/// [`ArrowError::ExternalError`] holding an [`Error`]); use [`EventBatches::next_batch`] for this
/// crate's error type. Once it has ended, [`EventBatches::side_tables`] gives the planes, lines
/// and metadata tables.
pub struct EventBatches<I> {
    items: I,
    info: HostInfo,
    options: Options,
    schema: SchemaRef,
    cursor: Option<PlaneCursor>,
    builders: Builders,
    side: Side,
    ended: bool,
    text: String,
    /// With [`EventBatches::spill_side`]: the most planes or lines rows held before they are
    /// given out by [`EventBatches::next_chunk`].
    side_rows: Option<usize>,
    /// Chunks made and not yet given out.
    pending: std::collections::VecDeque<Chunk>,
}

impl<I: RawItems> EventBatches<I> {
    /// Events from the items of an XSpace (as [`XSpaceReader::next_raw`] yields them).
    pub fn new(items: I, info: HostInfo, options: Options) -> EventBatches<I> {
        let capacity = options.batch_rows.min(DEFAULT_BATCH_ROWS);
        let side = Side::new(&info);
        EventBatches {
            items,
            info,
            schema: schema::events_for(options.layout),
            builders: Builders::new(capacity, options.layout),
            options,
            cursor: None,
            side,
            ended: false,
            text: String::new(),
            side_rows: None,
            pending: std::collections::VecDeque::new(),
        }
    }

    /// Gives the planes and lines rows out as they come, `rows` at a time, through
    /// [`EventBatches::next_chunk`] (which is then how the stream is read), instead of holding
    /// them until the end: [`EventBatches::side_tables`] then holds only the rows not given out.
    /// An XSpace of millions of empty planes then costs a batch of plane rows, not all of them.
    pub fn spill_side(&mut self, rows: usize) {
        self.side_rows = Some(rows.max(1));
    }

    /// Whether the planes or lines rows held reached [`EventBatches::spill_side`]'s count.
    fn side_full(&self) -> bool {
        self.side_rows
            .is_some_and(|n| self.side.plane_rows() >= n || self.side.line_rows() >= n)
    }

    /// The next batch of any of the host's tables, `None` at the end: events batches as
    /// [`EventBatches::next_batch`] makes them and, with [`EventBatches::spill_side`], planes
    /// and lines batches between them. After an error the stream ends.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        loop {
            if let Some(chunk) = self.pending.pop_front() {
                return Ok(Some(chunk));
            }
            if self.ended {
                return Ok(None);
            }
            let exhausted = match self.fill() {
                Ok(exhausted) => exhausted,
                Err(e) => {
                    self.ended = true;
                    self.cursor = None;
                    return Err(e);
                }
            };
            if let Some(n) = self.side_rows {
                if self.side.plane_rows() >= n {
                    let batch = self.side.planes_batch(&self.info)?;
                    self.pending.push_back(Chunk::Planes(batch));
                }
                if self.side.line_rows() >= n {
                    let batch = self.side.lines_batch(&self.info)?;
                    self.pending.push_back(Chunk::Lines(batch));
                }
            }
            let rows = self.builders.rows;
            if rows >= self.options.batch_rows || (exhausted && rows > 0) {
                let batch = self.builders.finish(&self.schema, &self.info)?;
                self.pending.push_back(Chunk::Events(batch));
            }
            if exhausted {
                self.ended = true;
                self.side.finish(&self.info)?;
            }
        }
    }

    /// Who the events belong to.
    pub fn info(&self) -> &HostInfo {
        &self.info
    }

    /// The next batch, `None` at the end. After an error the stream ends.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.ended {
            return Ok(None);
        }
        match self.fill() {
            Ok(_) => {}
            Err(e) => {
                self.ended = true;
                self.cursor = None;
                return Err(e);
            }
        }
        if self.builders.rows == 0 {
            self.ended = true;
            self.side.finish(&self.info)?;
            return Ok(None);
        }
        self.builders.finish(&self.schema, &self.info).map(Some)
    }

    /// The planes, lines and metadata tables, once every batch has been read; an error before.
    pub fn side_tables(&self) -> Result<SideTables> {
        self.side.done.clone().ok_or(Error::Unfinished)
    }

    /// Fills the builders up to a batch, taking planes from the input as needed (and, with
    /// [`EventBatches::spill_side`], stopping when the planes or lines rows should be given out);
    /// whether the input has ended.
    fn fill(&mut self) -> Result<bool> {
        if self.builders.rows == 0 {
            self.builders.presize();
        }
        while self.builders.rows < self.options.batch_rows {
            if self.side_full() {
                return Ok(false);
            }
            if let Some(cursor) = self.cursor.as_mut() {
                let (b, side, text) = (&mut self.builders, &mut self.side, &mut self.text);
                let batch_rows = self.options.batch_rows;
                let more =
                    cursor.with_dependent_mut(|_, plane| plane.fill(b, side, batch_rows, text))?;
                if !more {
                    self.cursor = None;
                }
                continue;
            }
            match self.items.next_raw_item() {
                None => return Ok(true),
                Some(Err(e)) => return Err(Error::XSpace(e)),
                Some(Ok(RawSpaceItem::Plane(plane))) => {
                    self.cursor =
                        Some(PlaneCursor::try_new(plane, |bytes| PlaneState::new(bytes))?);
                }
                Some(Ok(RawSpaceItem::Hostname(h))) => self.side.fact("hostname", &h),
                Some(Ok(RawSpaceItem::Error(e))) => self.side.fact("error", &e),
                Some(Ok(RawSpaceItem::Warning(w))) => self.side.fact("warning", &w),
            }
        }
        Ok(false)
    }
}

impl<I: RawItems> Iterator for EventBatches<I> {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))
            .transpose()
    }
}

impl<I: RawItems> RecordBatchReader for EventBatches<I> {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The items of an in-memory space: the space encoded, read back plane by plane as a file is.
pub type SpaceItems = XSpaceReader<std::io::Cursor<Vec<u8>>>;

/// The items of `space`, in the order a file written by profkit holds them, as [`EventBatches`]
/// takes them.
pub fn space_items(space: XSpace) -> SpaceItems {
    let bytes = profkit_xplane::encode(&space);
    drop(space);
    XSpaceReader::new(
        std::io::Cursor::new(bytes),
        ReadOptions::with_max_size(u64::MAX),
    )
}

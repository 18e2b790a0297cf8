//! The events of a space as record batches, plane by plane, with the small tables beside them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::builder::{
    ArrayBuilder, Decimal128Builder, Int32Builder, Int64Builder, MapBuilder, MapFieldNames,
    StringBuilder, StringDictionaryBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use base64::Engine as _;
use profkit_xplane::proto::{XEventMetadata, XPlane, XStat, x_event, x_stat};
use profkit_xplane::{SpaceItem, XSpace};

use crate::error::{Error, Result};
use crate::schema::{self, TYPED_STATS, TypedKind};

/// Rows per record batch unless [`Options::batch_rows`] says otherwise.
pub const DEFAULT_BATCH_ROWS: usize = 32 * 1024;

/// How batches are made.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// Rows per events batch (at least 1): memory grows with it.
    pub batch_rows: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            batch_rows: DEFAULT_BATCH_ROWS,
        }
    }
}

impl Options {
    /// Options with `batch_rows` rows per batch.
    pub fn with_batch_rows(batch_rows: usize) -> Options {
        Options {
            batch_rows: batch_rows.max(1),
        }
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

type Dict = StringDictionaryBuilder<Int32Type>;

fn dict() -> Dict {
    StringDictionaryBuilder::new()
}

/// A dictionary-encoded string column that remembers the last string appended (by address, so
/// the rows of one plane, line or event name skip the hash lookup) and can append a key it gave
/// before. Arrow's builders hold the keys and values.
struct DictColumn {
    keys: Int32Builder,
    values: StringBuilder,
    index: HashMap<String, i32>,
    last: Option<(usize, usize, i32)>,
}

impl DictColumn {
    fn new(capacity: usize) -> DictColumn {
        DictColumn {
            keys: Int32Builder::with_capacity(capacity),
            values: StringBuilder::new(),
            index: HashMap::new(),
            last: None,
        }
    }

    /// Appends `value`; its key.
    fn append(&mut self, value: &str) -> i32 {
        let address = (value.as_ptr() as usize, value.len());
        let key = match self.last {
            Some((ptr, len, key)) if (ptr, len) == address => key,
            _ => {
                let key = match self.index.get(value) {
                    Some(&key) => key,
                    None => {
                        let key = i32::try_from(self.index.len()).unwrap_or(i32::MAX);
                        self.values.append_value(value);
                        self.index.insert(value.to_owned(), key);
                        key
                    }
                };
                self.last = Some((address.0, address.1, key));
                key
            }
        };
        self.keys.append_value(key);
        key
    }

    /// Forgets the last string's address (before the strings it may point into are dropped).
    fn forget_last(&mut self) {
        self.last = None;
    }

    /// Appends a key `append` returned since the last `finish`.
    fn append_key(&mut self, key: i32) {
        self.keys.append_value(key);
    }

    fn finish(&mut self) -> Result<DictionaryArray<Int32Type>> {
        self.index.clear();
        self.last = None;
        Ok(DictionaryArray::try_new(
            self.keys.finish(),
            Arc::new(self.values.finish()),
        )?)
    }
}

fn stats_builder() -> MapBuilder<StringBuilder, StringBuilder> {
    stats_builder_like(0, StatsSize::default())
}

/// The size of a batch's `stats` map: entries and bytes of the keys and of the values.
#[derive(Clone, Copy, Debug, Default)]
struct StatsSize {
    entries: usize,
    key_bytes: usize,
    value_bytes: usize,
}

/// A `stats` builder for `rows` rows, sized like a batch whose map was `size`.
fn stats_builder_like(rows: usize, size: StatsSize) -> MapBuilder<StringBuilder, StringBuilder> {
    MapBuilder::with_capacity(
        Some(MapFieldNames {
            entry: "entries".into(),
            key: "keys".into(),
            value: "values".into(),
        }),
        StringBuilder::with_capacity(size.entries, size.key_bytes),
        StringBuilder::with_capacity(size.entries, size.value_bytes),
        rows,
    )
}

fn time_builder(capacity: usize) -> Decimal128Builder {
    Decimal128Builder::with_capacity(capacity).with_data_type(schema::time_type())
}

/// A stat's value as the text of the `stats` map: integers in decimal, doubles in their shortest
/// round-trip form (`1.5`, `1e20`, `NaN`, `inf`), references as the referenced name, bytes in
/// standard base64.
fn stat_text(stat: &XStat, plane: &XPlane, out: &mut String) {
    out.clear();
    match &stat.value {
        Some(x_stat::Value::DoubleValue(v)) => out.push_str(zmij::Buffer::new().format(*v)),
        Some(x_stat::Value::Uint64Value(v)) => out.push_str(itoa::Buffer::new().format(*v)),
        Some(x_stat::Value::Int64Value(v)) => out.push_str(itoa::Buffer::new().format(*v)),
        Some(x_stat::Value::StrValue(v)) => out.push_str(v),
        Some(x_stat::Value::BytesValue(v)) => {
            base64::engine::general_purpose::STANDARD.encode_string(v, out);
        }
        Some(x_stat::Value::RefValue(id)) => {
            if let Some(md) = i64::try_from(*id)
                .ok()
                .and_then(|id| plane.stat_metadata.get(&id))
            {
                out.push_str(&md.name);
            }
        }
        None => {}
    }
}

fn stat_i64(stat: &XStat) -> Option<i64> {
    match stat.value {
        Some(x_stat::Value::Int64Value(v)) => Some(v),
        Some(x_stat::Value::Uint64Value(v)) => i64::try_from(v).ok(),
        Some(x_stat::Value::DoubleValue(v)) if v.fract() == 0.0 && v.abs() < 9.0e18 => {
            Some(v as i64)
        }
        Some(x_stat::Value::StrValue(ref s)) => s.parse().ok(),
        _ => None,
    }
}

/// Entries of the direct-mapped caches in front of the per-plane maps (ids are mostly small and
/// dense in real files, so nearly every lookup is one comparison instead of a hash).
const CACHE_SLOTS: usize = 1024;

/// The slot of `id` in a direct-mapped cache of [`CACHE_SLOTS`] entries.
fn cache_slot_of(id: i64) -> usize {
    (id as u64 % CACHE_SLOTS as u64) as usize
}

/// What one stat metadata id of a plane means: its name and its typed column and priority.
struct StatInfo {
    id: i64,
    name: String,
    typed: Option<(usize, usize)>,
}

/// A plane's stat metadata by id, with a direct-mapped cache in front of the map. A slot holds
/// the index of the last info looked up through it (or `usize::MAX`); the info's own id tells a
/// hit, so one atomic word per slot is enough and the table stays `Sync`.
struct StatTable {
    infos: Vec<StatInfo>,
    index: HashMap<i64, usize>,
    cache: Vec<AtomicUsize>,
}

impl StatTable {
    fn new(plane: &XPlane) -> StatTable {
        let mut infos = Vec::with_capacity(plane.stat_metadata.len());
        let mut index = HashMap::with_capacity(plane.stat_metadata.len());
        for (id, md) in &plane.stat_metadata {
            let mut typed = None;
            for (column, (_, names, _)) in TYPED_STATS.iter().enumerate() {
                if let Some(priority) = names.iter().position(|n| *n == md.name) {
                    typed = Some((column, priority));
                }
            }
            index.insert(*id, infos.len());
            infos.push(StatInfo {
                id: *id,
                name: md.name.clone(),
                typed,
            });
        }
        StatTable {
            infos,
            index,
            cache: (0..CACHE_SLOTS)
                .map(|_| AtomicUsize::new(usize::MAX))
                .collect(),
        }
    }

    fn get(&self, id: i64) -> Option<&StatInfo> {
        let slot = self.cache.get(cache_slot_of(id))?;
        if let Some(info) = self.infos.get(slot.load(Ordering::Relaxed))
            && info.id == id
        {
            return Some(info);
        }
        let i = *self.index.get(&id)?;
        slot.store(i, Ordering::Relaxed);
        self.infos.get(i)
    }

    /// The name of stat metadata `id` ("" when the plane has none).
    fn name(&self, id: i64) -> &str {
        self.get(id).map_or("", |s| s.name.as_str())
    }

    /// The name a `ref_value` refers to ("" when out of range or absent).
    fn ref_name(&self, id: u64) -> &str {
        i64::try_from(id).map_or("", |id| self.name(id))
    }
}

/// The plane being turned into rows, and where in it.
struct Cursor {
    plane: XPlane,
    stats: StatTable,
    line: usize,
    event: usize,
}

/// Names of an event metadata id in the current batch and plane: (id, name key, display key,
/// whether the metadata has stats); a name key of -1 marks an empty slot.
type NameSlot = (i64, i32, i32, bool);

const EMPTY_NAME: NameSlot = (0, -1, -1, false);

/// The builders of one events batch.
struct Builders {
    host: DictColumn,
    source_format: DictColumn,
    plane: DictColumn,
    plane_id: Int64Builder,
    line: DictColumn,
    line_id: Int64Builder,
    name: DictColumn,
    display_name: DictColumn,
    /// Event metadata id -> names in this batch, for the current plane: a direct-mapped cache
    /// in front of the map.
    names: HashMap<i64, NameSlot>,
    name_cache: Vec<NameSlot>,
    start_ps: Decimal128Builder,
    duration_ps: Int64Builder,
    num_occurrences: Int64Builder,
    typed_int: Vec<Int64Builder>,
    typed_str: Vec<Dict>,
    stats: MapBuilder<StringBuilder, StringBuilder>,
    rows: usize,
    /// Rows the builders were made for.
    capacity: usize,
    /// The size of the last batch's `stats`, once one is finished: the next batch's builders
    /// are made that size (Arrow's builders are empty after `finish`, and would grow again by
    /// doubling, copying each time).
    last_stats: Option<StatsSize>,
}

impl Builders {
    fn new(capacity: usize) -> Builders {
        Builders::sized(capacity, StatsSize::default())
    }

    /// Builders for `capacity` rows whose `stats` are sized as `stats` says.
    fn sized(capacity: usize, stats: StatsSize) -> Builders {
        let ints = TYPED_STATS.iter().filter(|t| t.2 == TypedKind::Int).count();
        let strs = TYPED_STATS.len() - ints;
        Builders {
            host: DictColumn::new(capacity),
            source_format: DictColumn::new(capacity),
            plane: DictColumn::new(capacity),
            plane_id: Int64Builder::with_capacity(capacity),
            line: DictColumn::new(capacity),
            line_id: Int64Builder::with_capacity(capacity),
            name: DictColumn::new(capacity),
            display_name: DictColumn::new(capacity),
            names: HashMap::new(),
            name_cache: vec![EMPTY_NAME; CACHE_SLOTS],
            start_ps: time_builder(capacity),
            duration_ps: Int64Builder::with_capacity(capacity),
            num_occurrences: Int64Builder::with_capacity(capacity),
            typed_int: (0..ints)
                .map(|_| Int64Builder::with_capacity(capacity))
                .collect(),
            typed_str: (0..strs).map(|_| dict()).collect(),
            stats: stats_builder_like(capacity, stats),
            rows: 0,
            capacity,
            last_stats: None,
        }
    }

    /// Forgets the event names' keys (at a new batch or plane).
    fn forget_names(&mut self) {
        self.names.clear();
        self.name_cache.fill(EMPTY_NAME);
    }

    /// Makes fresh builders of the size the last batch had, when one has been finished (called
    /// before a batch is filled, so they are not held while the last batch is written).
    fn presize(&mut self) {
        if let Some(stats) = self.last_stats.take() {
            *self = Builders::sized(self.capacity, stats);
        }
    }

    fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch> {
        self.forget_names();
        self.last_stats = Some(StatsSize {
            entries: self.stats.keys().len(),
            key_bytes: self.stats.keys().values_slice().len(),
            value_bytes: self.stats.values().values_slice().len(),
        });
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.host.finish()?),
            Arc::new(self.source_format.finish()?),
            Arc::new(self.plane.finish()?),
            Arc::new(self.plane_id.finish()),
            Arc::new(self.line.finish()?),
            Arc::new(self.line_id.finish()),
            Arc::new(self.name.finish()?),
            Arc::new(self.display_name.finish()?),
            Arc::new(self.start_ps.finish().with_data_type(schema::time_type())),
            Arc::new(self.duration_ps.finish()),
            Arc::new(self.num_occurrences.finish()),
        ];
        let (mut ints, mut strs) = (self.typed_int.iter_mut(), self.typed_str.iter_mut());
        for (_, _, kind) in TYPED_STATS {
            let column: Option<ArrayRef> = match kind {
                TypedKind::Int => ints.next().map(|b| Arc::new(b.finish()) as ArrayRef),
                TypedKind::Str => strs.next().map(|b| Arc::new(b.finish()) as ArrayRef),
            };
            columns.push(column.ok_or(Error::Internal("typed stat builders"))?);
        }
        columns.push(Arc::new(self.stats.finish()));
        self.rows = 0;
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}

/// A typed stat value found for an event: (from metadata?, priority, value).
#[derive(Clone, Copy)]
enum Found<'a> {
    Int(i64),
    Str(&'a str),
}

/// Rows of the small tables, gathered while the events stream.
#[derive(Default)]
struct Side {
    planes: Vec<PlaneRow>,
    lines: Vec<LineRow>,
    facts: Vec<(String, String)>,
}

struct PlaneRow {
    name: String,
    id: i64,
    lines: i64,
    events: i64,
    event_metadata: i64,
    stat_metadata: i64,
    start_ps: Option<i128>,
    end_ps: Option<i128>,
    total_duration_ps: i128,
    stats: Vec<(String, String)>,
}

struct LineRow {
    plane: String,
    plane_id: i64,
    name: String,
    id: i64,
    display_id: i64,
    display_name: String,
    timestamp_ns: i64,
    duration_ps: i64,
    events: i64,
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Side {
    fn add_plane(&mut self, plane: &XPlane) {
        let mut events = 0usize;
        let mut span: Option<(i128, i128)> = None;
        let mut total: i128 = 0;
        for line in &plane.lines {
            events += line.events.len();
            self.lines.push(LineRow {
                plane: plane.name.clone(),
                plane_id: plane.id,
                name: line.name.clone(),
                id: line.id,
                display_id: line.display_id,
                display_name: line.display_name.clone(),
                timestamp_ns: line.timestamp_ns,
                duration_ps: line.duration_ps,
                events: count(line.events.len()),
            });
            let base = i128::from(line.timestamp_ns) * 1000;
            for event in &line.events {
                total += i128::from(event.duration_ps);
                if let Some(x_event::Data::OffsetPs(offset)) = event.data {
                    let start = base + i128::from(offset);
                    let end = start + i128::from(event.duration_ps);
                    span = Some(span.map_or((start, end), |(s, e)| (s.min(start), e.max(end))));
                } else if event.data.is_none() {
                    let start = base;
                    let end = start + i128::from(event.duration_ps);
                    span = Some(span.map_or((start, end), |(s, e)| (s.min(start), e.max(end))));
                }
            }
        }
        let mut text = String::new();
        let stats = plane
            .stats
            .iter()
            .map(|s| {
                stat_text(s, plane, &mut text);
                (stat_name(plane, s.metadata_id).to_owned(), text.clone())
            })
            .collect();
        self.planes.push(PlaneRow {
            name: plane.name.clone(),
            id: plane.id,
            lines: count(plane.lines.len()),
            events: count(events),
            event_metadata: count(plane.event_metadata.len()),
            stat_metadata: count(plane.stat_metadata.len()),
            start_ps: span.map(|s| s.0),
            end_ps: span.map(|s| s.1),
            total_duration_ps: total,
            stats,
        });
    }

    fn finish(&self, info: &HostInfo) -> Result<SideTables> {
        let host = |n: usize| -> ArrayRef {
            let mut b = StringBuilder::new();
            for _ in 0..n {
                b.append_value(&info.host);
            }
            Arc::new(b.finish())
        };
        let strings = |values: &mut dyn Iterator<Item = &str>| -> ArrayRef {
            let mut b = StringBuilder::new();
            for v in values {
                b.append_value(v);
            }
            Arc::new(b.finish())
        };
        let ints = |values: &mut dyn Iterator<Item = i64>| -> ArrayRef {
            let mut b = Int64Builder::new();
            for v in values {
                b.append_value(v);
            }
            Arc::new(b.finish())
        };
        let times = |values: &mut dyn Iterator<Item = Option<i128>>| -> ArrayRef {
            let mut b = time_builder(0);
            for v in values {
                b.append_option(v);
            }
            Arc::new(b.finish().with_data_type(schema::time_type()))
        };
        let p = &self.planes;
        let mut stats = stats_builder();
        for row in p {
            for (k, v) in &row.stats {
                stats.keys().append_value(k);
                stats.values().append_value(v);
            }
            stats.append(true)?;
        }
        let planes = RecordBatch::try_new(
            schema::planes(),
            vec![
                host(p.len()),
                strings(&mut p.iter().map(|_| info.source_format.as_str())),
                strings(&mut p.iter().map(|r| r.name.as_str())),
                ints(&mut p.iter().map(|r| r.id)),
                ints(&mut p.iter().map(|r| r.lines)),
                ints(&mut p.iter().map(|r| r.events)),
                ints(&mut p.iter().map(|r| r.event_metadata)),
                ints(&mut p.iter().map(|r| r.stat_metadata)),
                times(&mut p.iter().map(|r| r.start_ps)),
                times(&mut p.iter().map(|r| r.end_ps)),
                times(&mut p.iter().map(|r| Some(r.total_duration_ps))),
                Arc::new(stats.finish()),
            ],
        )?;
        let l = &self.lines;
        let lines = RecordBatch::try_new(
            schema::lines(),
            vec![
                host(l.len()),
                strings(&mut l.iter().map(|r| r.plane.as_str())),
                ints(&mut l.iter().map(|r| r.plane_id)),
                strings(&mut l.iter().map(|r| r.name.as_str())),
                ints(&mut l.iter().map(|r| r.id)),
                ints(&mut l.iter().map(|r| r.display_id)),
                strings(&mut l.iter().map(|r| r.display_name.as_str())),
                ints(&mut l.iter().map(|r| r.timestamp_ns)),
                ints(&mut l.iter().map(|r| r.duration_ps)),
                ints(&mut l.iter().map(|r| r.events)),
            ],
        )?;
        let mut facts: Vec<(&str, &str)> = vec![
            ("schema_version", schema::VERSION),
            ("source_format", &info.source_format),
            (
                "writer",
                concat!("profkit-arrow ", env!("CARGO_PKG_VERSION")),
            ),
        ];
        facts.extend(info.sources.iter().map(|s| ("source", s.as_str())));
        facts.extend(self.facts.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let metadata = RecordBatch::try_new(
            schema::metadata_table(),
            vec![
                host(facts.len()),
                strings(&mut facts.iter().map(|f| f.0)),
                strings(&mut facts.iter().map(|f| f.1)),
            ],
        )?;
        Ok(SideTables {
            planes,
            lines,
            metadata,
        })
    }
}

fn stat_name(plane: &XPlane, id: i64) -> &str {
    plane.stat_metadata.get(&id).map_or("", |m| m.name.as_str())
}

/// The events table of one host as a stream of record batches (see the crate documentation).
///
/// It reads the input one plane at a time and fills batches of [`Options::batch_rows`] rows that
/// may span planes, so memory is one plane (what the XSpace reader holds) plus one batch. It is a
/// [`RecordBatchReader`] (errors become [`ArrowError::ExternalError`] holding an [`Error`]); use
/// [`EventBatches::next_batch`] for this crate's error type. Once it has ended,
/// [`EventBatches::side_tables`] gives the planes, lines and metadata tables.
pub struct EventBatches<I> {
    items: I,
    info: HostInfo,
    options: Options,
    schema: SchemaRef,
    cursor: Option<Cursor>,
    builders: Builders,
    side: Side,
    ended: bool,
    planes_read: usize,
    text: String,
}

impl<I> EventBatches<I>
where
    I: Iterator<Item = profkit_xplane::Result<SpaceItem>>,
{
    /// Events from the items of an XSpace (as [`profkit_xplane::XSpaceReader`] yields them).
    pub fn new(items: I, info: HostInfo, options: Options) -> EventBatches<I> {
        let capacity = options.batch_rows.min(DEFAULT_BATCH_ROWS);
        EventBatches {
            items,
            info,
            options,
            schema: schema::events(),
            cursor: None,
            builders: Builders::new(capacity),
            side: Side::default(),
            ended: false,
            planes_read: 0,
            text: String::new(),
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
            Ok(()) => {}
            Err(e) => {
                self.ended = true;
                return Err(e);
            }
        }
        if self.builders.rows == 0 {
            self.ended = true;
            return Ok(None);
        }
        self.builders.finish(&self.schema).map(Some)
    }

    /// The planes, lines and metadata tables, once every batch has been read; an error before.
    pub fn side_tables(&self) -> Result<SideTables> {
        if !self.ended || self.cursor.is_some() {
            return Err(Error::Unfinished);
        }
        self.side.finish(&self.info)
    }

    /// Fills the builders up to a batch, taking planes from the input as needed.
    fn fill(&mut self) -> Result<()> {
        if self.builders.rows == 0 {
            self.builders.presize();
        }
        while self.builders.rows < self.options.batch_rows {
            if self.cursor.is_none() {
                match self.items.next() {
                    None => return Ok(()),
                    Some(Err(e)) => return Err(Error::XSpace(e)),
                    Some(Ok(SpaceItem::Plane(plane))) => {
                        self.side.add_plane(&plane);
                        // The previous plane's strings are gone: no address may be reused.
                        let b = &mut self.builders;
                        b.forget_names();
                        for column in [&mut b.plane, &mut b.line, &mut b.name, &mut b.display_name]
                        {
                            column.forget_last();
                        }
                        self.planes_read += 1;
                        self.cursor = Some(Cursor {
                            stats: StatTable::new(&plane),
                            plane,
                            line: 0,
                            event: 0,
                        });
                    }
                    Some(Ok(SpaceItem::Hostname(h))) => {
                        self.side.facts.push(("hostname".into(), h));
                    }
                    Some(Ok(SpaceItem::Error(e))) => self.side.facts.push(("error".into(), e)),
                    Some(Ok(SpaceItem::Warning(w))) => {
                        self.side.facts.push(("warning".into(), w));
                    }
                }
                continue;
            }
            if !self.rows_from_cursor()? {
                self.cursor = None;
            }
        }
        Ok(())
    }

    /// Appends rows from the current plane until the batch is full; false when the plane is done.
    fn rows_from_cursor(&mut self) -> Result<bool> {
        let Some(cursor) = self.cursor.as_mut() else {
            return Ok(false);
        };
        let b = &mut self.builders;
        let plane = &cursor.plane;
        let empty = XEventMetadata::default();
        while let Some(line) = plane.lines.get(cursor.line) {
            let base = i128::from(line.timestamp_ns) * 1000;
            while let Some(event) = line.events.get(cursor.event) {
                if b.rows >= self.options.batch_rows {
                    return Ok(true);
                }
                cursor.event += 1;
                b.rows += 1;
                b.host.append(&self.info.host);
                b.source_format.append(&self.info.source_format);
                b.plane.append(&plane.name);
                b.plane_id.append_value(plane.id);
                b.line.append(&line.name);
                b.line_id.append_value(line.id);
                let cache_slot = cache_slot_of(event.metadata_id);
                let cached = b
                    .name_cache
                    .get(cache_slot)
                    .copied()
                    .filter(|c| c.0 == event.metadata_id && c.1 >= 0)
                    .or_else(|| b.names.get(&event.metadata_id).copied());
                let md_stats: &[XStat] = match cached {
                    Some((_, name, display, has_stats)) => {
                        b.name.append_key(name);
                        b.display_name.append_key(display);
                        if let Some(c) = b.name_cache.get_mut(cache_slot) {
                            *c = (event.metadata_id, name, display, has_stats);
                        }
                        if has_stats {
                            plane
                                .event_metadata
                                .get(&event.metadata_id)
                                .map_or(&[], |md| md.stats.as_slice())
                        } else {
                            &[]
                        }
                    }
                    None => {
                        let md = plane
                            .event_metadata
                            .get(&event.metadata_id)
                            .unwrap_or(&empty);
                        let name = b.name.append(&md.name);
                        let display = b.display_name.append(if md.display_name.is_empty() {
                            &md.name
                        } else {
                            &md.display_name
                        });
                        let entry = (event.metadata_id, name, display, !md.stats.is_empty());
                        b.names.insert(event.metadata_id, entry);
                        if let Some(c) = b.name_cache.get_mut(cache_slot) {
                            *c = entry;
                        }
                        md.stats.as_slice()
                    }
                };
                match event.data {
                    Some(x_event::Data::NumOccurrences(n)) => {
                        b.start_ps.append_null();
                        b.num_occurrences.append_value(n);
                    }
                    Some(x_event::Data::OffsetPs(offset)) => {
                        b.start_ps.append_value(base + i128::from(offset));
                        b.num_occurrences.append_null();
                    }
                    None => {
                        b.start_ps.append_value(base);
                        b.num_occurrences.append_null();
                    }
                }
                b.duration_ps.append_value(event.duration_ps);
                // Typed stats: event stats first, then the metadata's; within each, the earlier
                // name of a column's list wins.
                let mut found: [Option<(bool, usize, Found<'_>)>; TYPED_STATS.len()] =
                    [None; TYPED_STATS.len()];
                let event_ids_end = event.stats.len();
                let stats = &cursor.stats;
                for (i, stat) in event.stats.iter().chain(md_stats.iter()).enumerate() {
                    let from_md = i >= event_ids_end;
                    if from_md
                        && event
                            .stats
                            .iter()
                            .any(|s| s.metadata_id == stat.metadata_id)
                    {
                        continue;
                    }
                    let info = stats.get(stat.metadata_id);
                    b.stats
                        .keys()
                        .append_value(info.map_or("", |s| s.name.as_str()));
                    match &stat.value {
                        Some(x_stat::Value::RefValue(id)) => {
                            b.stats.values().append_value(stats.ref_name(*id));
                        }
                        Some(x_stat::Value::StrValue(v)) => b.stats.values().append_value(v),
                        _ => {
                            stat_text(stat, plane, &mut self.text);
                            b.stats.values().append_value(&self.text);
                        }
                    }
                    let Some((column, priority)) = info.and_then(|s| s.typed) else {
                        continue;
                    };
                    let Some(slot) = found.get_mut(column) else {
                        continue;
                    };
                    if slot.is_some_and(|(m, p, _)| (m, p) <= (from_md, priority)) {
                        continue;
                    }
                    let value = match TYPED_STATS.get(column).map(|t| t.2) {
                        Some(TypedKind::Int) => stat_i64(stat).map(Found::Int),
                        _ => match &stat.value {
                            Some(x_stat::Value::StrValue(s)) => Some(Found::Str(s.as_str())),
                            Some(x_stat::Value::RefValue(id)) => {
                                Some(Found::Str(stats.ref_name(*id)))
                            }
                            _ => None,
                        },
                    };
                    if let Some(value) = value {
                        *slot = Some((from_md, priority, value));
                    }
                }
                b.stats.append(true)?;
                let (mut ints, mut strs) = (b.typed_int.iter_mut(), b.typed_str.iter_mut());
                for ((_, _, kind), slot) in TYPED_STATS.iter().zip(found) {
                    match kind {
                        TypedKind::Int => {
                            if let Some(builder) = ints.next() {
                                match slot {
                                    Some((_, _, Found::Int(v))) => builder.append_value(v),
                                    _ => builder.append_null(),
                                }
                            }
                        }
                        TypedKind::Str => {
                            if let Some(builder) = strs.next() {
                                match slot {
                                    Some((_, _, Found::Str(v))) => builder.append_value(v),
                                    _ => builder.append_null(),
                                }
                            }
                        }
                    }
                }
            }
            cursor.line += 1;
            cursor.event = 0;
        }
        Ok(false)
    }
}

impl<I> Iterator for EventBatches<I>
where
    I: Iterator<Item = profkit_xplane::Result<SpaceItem>>,
{
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))
            .transpose()
    }
}

impl<I> RecordBatchReader for EventBatches<I>
where
    I: Iterator<Item = profkit_xplane::Result<SpaceItem>>,
{
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The items of an in-memory space, in the order a file written by profkit holds them.
pub type SpaceItems = std::iter::Map<
    std::vec::IntoIter<SpaceItem>,
    fn(SpaceItem) -> profkit_xplane::Result<SpaceItem>,
>;

/// The items of `space`, planes first, as [`EventBatches`] takes them.
pub fn space_items(space: XSpace) -> SpaceItems {
    let XSpace {
        planes,
        errors,
        warnings,
        hostnames,
    } = space;
    let items: Vec<SpaceItem> = planes
        .into_iter()
        .map(SpaceItem::Plane)
        .chain(errors.into_iter().map(SpaceItem::Error))
        .chain(warnings.into_iter().map(SpaceItem::Warning))
        .chain(hostnames.into_iter().map(SpaceItem::Hostname))
        .collect();
    items.into_iter().map(Ok as fn(_) -> _)
}

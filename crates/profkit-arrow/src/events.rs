//! The events of a space as record batches, plane by plane, with the small tables beside them.
//!
//! Planes are read through zero-copy views ([`profkit_xplane::XPlaneView`]) of their encoded
//! bytes, never decoded into owned trees: memory is the plane being read (its bytes, and small
//! tables of its metadata) plus the batch being built. Names are looked up by metadata id in
//! tables made once per plane; each name is hashed once per batch, when first met, never per row.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, Decimal128Builder, Int32Builder, Int64Builder, MapBuilder, MapFieldNames,
    StringBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, DictionaryArray, Int32Array, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use base64::Engine as _;
use profkit_xplane::utils::SelfTimer;
use profkit_xplane::xview::{Events, Lines, StatValueView, XStatView};
use profkit_xplane::{
    LineRole, PlaneBytes, RawSpaceItem, ReadOptions, XSpace, XSpaceReader, line_role,
};

use crate::error::{Error, Result};
use crate::schema::{self, Layout, TYPED_STATS, TypedKind};

/// Rows per record batch unless [`Options::batch_rows`] says otherwise.
pub const DEFAULT_BATCH_ROWS: usize = 32 * 1024;

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
// Lookups by metadata id

/// Positions of a plane's metadata by id: a table for ids that are small and dense (as writers
/// assign them), a map otherwise.
#[derive(Default)]
struct IdIndex {
    /// `dense[id]` is the position + 1 of that id's entry, 0 for none.
    dense: Vec<u32>,
    sparse: HashMap<i64, usize>,
}

impl IdIndex {
    fn new(keys: &[i64]) -> IdIndex {
        let count = keys.len();
        let (min, max) = keys
            .iter()
            .fold((i64::MAX, i64::MIN), |(lo, hi), &k| (lo.min(k), hi.max(k)));
        let dense_ok = count > 0
            && min >= 0
            && usize::try_from(max).is_ok_and(|m| m < count.saturating_mul(4).saturating_add(1024))
            && count < u32::MAX as usize;
        if dense_ok {
            let mut dense = vec![0u32; usize::try_from(max).unwrap_or(0).saturating_add(1)];
            for (position, key) in keys.iter().enumerate() {
                if let Some(slot) = usize::try_from(*key).ok().and_then(|k| dense.get_mut(k)) {
                    *slot = u32::try_from(position + 1).unwrap_or(0);
                }
            }
            return IdIndex {
                dense,
                sparse: HashMap::new(),
            };
        }
        IdIndex {
            dense: Vec::new(),
            sparse: keys.iter().enumerate().map(|(p, k)| (*k, p)).collect(),
        }
    }

    #[inline]
    fn get(&self, id: i64) -> Option<usize> {
        if self.dense.is_empty() {
            return self.sparse.get(&id).copied();
        }
        let slot = *usize::try_from(id).ok().and_then(|i| self.dense.get(i))?;
        (slot as usize).checked_sub(1)
    }
}

/// One event metadata of a plane: its names and where its stats are in [`PlaneTables::md_stats`].
struct EventMd<'a> {
    name: &'a str,
    display: &'a str,
    stats: std::ops::Range<usize>,
}

/// One stat metadata of a plane: its name, and its typed column and priority.
struct StatMd<'a> {
    name: &'a str,
    /// The name needs no escaping in JSON text.
    plain: bool,
    typed: Option<(usize, usize)>,
}

/// A batch's dictionary keys of one name, valid while the batch's generation is `generation`.
#[derive(Clone, Copy, Default)]
struct Keys {
    generation: u32,
    name: i32,
    display: i32,
}

/// What the batch builder needs of a plane's metadata, made once per plane.
struct PlaneTables<'a> {
    events: Vec<EventMd<'a>>,
    event_index: IdIndex,
    md_stats: Vec<XStatView<'a>>,
    stats: Vec<StatMd<'a>>,
    stat_index: IdIndex,
    /// Dictionary keys of each event metadata's names in the current batch.
    keys: Vec<Keys>,
    /// Dictionary keys of each stat metadata's name in the current batch, per typed string
    /// column (for `ref_value` stats).
    ref_keys: Vec<Vec<(u32, i32)>>,
}

impl<'a> PlaneTables<'a> {
    fn new(metadata: &profkit_xplane::xview::PlaneMetadata<'a>) -> PlaneTables<'a> {
        let mut md_stats = Vec::new();
        let mut events = Vec::with_capacity(metadata.events().len());
        let mut event_keys = Vec::with_capacity(metadata.events().len());
        for md in metadata.events() {
            let start = md_stats.len();
            md_stats.extend_from_slice(md.stats());
            events.push(EventMd {
                name: md.name(),
                display: md.display_name(),
                stats: start..md_stats.len(),
            });
            event_keys.push(md.key());
        }
        let mut stats = Vec::with_capacity(metadata.stats().len());
        let mut stat_keys = Vec::with_capacity(metadata.stats().len());
        for md in metadata.stats() {
            let mut typed = None;
            for (column, (_, names, _)) in TYPED_STATS.iter().enumerate() {
                if let Some(priority) = names.iter().position(|n| *n == md.name()) {
                    typed = Some((column, priority));
                }
            }
            stats.push(StatMd {
                name: md.name(),
                plain: json_plain(md.name()),
                typed,
            });
            stat_keys.push(md.key());
        }
        let strs = TYPED_STATS.iter().filter(|t| t.2 == TypedKind::Str).count();
        PlaneTables {
            keys: vec![Keys::default(); events.len()],
            ref_keys: (0..strs).map(|_| vec![(0, 0); stats.len()]).collect(),
            event_index: IdIndex::new(&event_keys),
            stat_index: IdIndex::new(&stat_keys),
            events,
            md_stats,
            stats,
        }
    }

    #[inline]
    fn stat(&self, id: i64) -> Option<(usize, &StatMd<'a>)> {
        let position = self.stat_index.get(id)?;
        self.stats.get(position).map(|s| (position, s))
    }

    /// The name a `ref_value` refers to ("" when out of range or absent), with its position.
    #[inline]
    fn referenced(&self, id: u64) -> (Option<usize>, &'a str) {
        match i64::try_from(id).ok().and_then(|id| self.stat(id)) {
            Some((position, md)) => (Some(position), md.name),
            None => (None, ""),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stat values as text

/// A stat's value as the text of the `stats` column, appended to `out`: integers in decimal,
/// doubles in their shortest round-trip form (`1.5`, `1e20`, `NaN`, `inf`), references as the
/// referenced name, bytes in standard base64.
fn push_text(value: Option<StatValueView<'_>>, tables: &PlaneTables<'_>, out: &mut String) {
    match value {
        Some(StatValueView::Double(v)) => out.push_str(zmij::Buffer::new().format(v)),
        Some(StatValueView::Uint64(v)) => out.push_str(itoa::Buffer::new().format(v)),
        Some(StatValueView::Int64(v)) => out.push_str(itoa::Buffer::new().format(v)),
        Some(StatValueView::Str(v)) => out.push_str(v),
        Some(StatValueView::Bytes(v)) => {
            base64::engine::general_purpose::STANDARD.encode_string(v, out);
        }
        Some(StatValueView::Ref(id)) => out.push_str(tables.referenced(id).1),
        None => {}
    }
}

/// The text of a string-like value without copying it (`None` for the others).
#[inline]
fn borrowed_text<'a>(
    value: Option<StatValueView<'a>>,
    tables: &PlaneTables<'a>,
) -> Option<&'a str> {
    match value {
        Some(StatValueView::Str(v)) => Some(v),
        Some(StatValueView::Ref(id)) => Some(tables.referenced(id).1),
        None => Some(""),
        _ => None,
    }
}

fn stat_i64(value: Option<StatValueView<'_>>) -> Option<i64> {
    match value {
        Some(StatValueView::Int64(v)) => Some(v),
        Some(StatValueView::Uint64(v)) => i64::try_from(v).ok(),
        Some(StatValueView::Double(v)) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
        Some(StatValueView::Str(s)) => s.parse().ok(),
        _ => None,
    }
}

/// Whether `s` can stand in JSON text between quotes as it is.
#[inline]
fn json_plain(s: &str) -> bool {
    !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)
}

/// Appends `s` to `out` as a JSON string (quoted, escaped as RFC 8259 requires).
fn push_json_str(s: &str, plain: bool, out: &mut String) {
    out.push('"');
    if plain {
        out.push_str(s);
    } else {
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                }
                c => out.push(c),
            }
        }
    }
    out.push('"');
}

// ---------------------------------------------------------------------------------------------
// Builders

/// A dictionary-encoded string column whose strings are hashed once per batch: callers keep the
/// keys `intern` gives and append them.
struct DictColumn {
    keys: Int32Builder,
    values: StringBuilder,
    index: HashMap<String, i32>,
}

impl DictColumn {
    fn new(capacity: usize) -> DictColumn {
        DictColumn {
            keys: Int32Builder::with_capacity(capacity),
            values: StringBuilder::new(),
            index: HashMap::new(),
        }
    }

    /// The key of `value` in this batch (added to the dictionary when new).
    fn intern(&mut self, value: &str) -> i32 {
        if let Some(&key) = self.index.get(value) {
            return key;
        }
        let key = i32::try_from(self.index.len()).unwrap_or(i32::MAX);
        self.values.append_value(value);
        self.index.insert(value.to_owned(), key);
        key
    }

    #[inline]
    fn append_key(&mut self, key: i32) {
        self.keys.append_value(key);
    }

    fn finish(&mut self) -> Result<DictionaryArray<Int32Type>> {
        self.index.clear();
        Ok(DictionaryArray::try_new(
            self.keys.finish(),
            Arc::new(self.values.finish()),
        )?)
    }
}

/// The size of a batch's `stats`: entries and bytes of the keys and of the values (the JSON
/// text's bytes in `value_bytes` for the frame).
#[derive(Clone, Copy, Debug, Default)]
struct StatsSize {
    entries: usize,
    key_bytes: usize,
    value_bytes: usize,
}

fn map_field_names() -> MapFieldNames {
    MapFieldNames {
        entry: "entries".into(),
        key: "keys".into(),
        value: "values".into(),
    }
}

/// A `stats` map builder for `rows` rows, sized like a batch whose map was `size`.
fn stats_map_like(rows: usize, size: StatsSize) -> MapBuilder<StringBuilder, StringBuilder> {
    MapBuilder::with_capacity(
        Some(map_field_names()),
        StringBuilder::with_capacity(size.entries, size.key_bytes),
        StringBuilder::with_capacity(size.entries, size.value_bytes),
        rows,
    )
}

fn time_builder(capacity: usize) -> Decimal128Builder {
    Decimal128Builder::with_capacity(capacity).with_data_type(schema::time_type())
}

/// The `stats` column being built: the dataset's map or the frame's JSON text.
// One per stream, never moved in a hot path: boxing the map would only add an indirection.
#[allow(clippy::large_enum_variant)]
enum StatsColumn {
    Map(MapBuilder<StringBuilder, StringBuilder>),
    Json(StringBuilder),
}

/// The time columns being built: the dataset's exact start, or the frame's pair.
enum TimeColumns {
    Start(Decimal128Builder),
    Pair {
        timestamp_ns: Int64Builder,
        offset_ps: Int64Builder,
    },
}

/// The builders of one events batch.
struct Builders {
    layout: Layout,
    plane: DictColumn,
    plane_id: Int64Builder,
    line: DictColumn,
    line_id: Int64Builder,
    line_role: DictColumn,
    name: DictColumn,
    display_name: DictColumn,
    times: TimeColumns,
    duration_ps: Int64Builder,
    self_ps: Int64Builder,
    num_occurrences: Int64Builder,
    typed_int: Vec<Int64Builder>,
    typed_str: Vec<DictColumn>,
    stats: StatsColumn,
    rows: usize,
    /// Rows the builders were made for.
    capacity: usize,
    /// Which batch this is: keys cached by the plane tables are valid in this one only.
    generation: u32,
    /// The size of the last batch's `stats`, once one is finished: the next batch's builders
    /// are made that size (Arrow's builders are empty after `finish`, and would grow again by
    /// doubling, copying each time).
    last_stats: Option<StatsSize>,
}

impl Builders {
    fn new(capacity: usize, layout: Layout) -> Builders {
        Builders::sized(capacity, layout, StatsSize::default(), 1)
    }

    /// Builders for `capacity` rows whose `stats` are sized as `stats` says.
    fn sized(capacity: usize, layout: Layout, stats: StatsSize, generation: u32) -> Builders {
        let ints = TYPED_STATS.iter().filter(|t| t.2 == TypedKind::Int).count();
        let strs = TYPED_STATS.len() - ints;
        Builders {
            layout,
            plane: DictColumn::new(capacity),
            plane_id: Int64Builder::with_capacity(capacity),
            line: DictColumn::new(capacity),
            line_id: Int64Builder::with_capacity(capacity),
            line_role: DictColumn::new(capacity),
            name: DictColumn::new(capacity),
            display_name: DictColumn::new(capacity),
            times: match layout {
                Layout::Dataset => TimeColumns::Start(time_builder(capacity)),
                Layout::Frame => TimeColumns::Pair {
                    timestamp_ns: Int64Builder::with_capacity(capacity),
                    offset_ps: Int64Builder::with_capacity(capacity),
                },
            },
            duration_ps: Int64Builder::with_capacity(capacity),
            self_ps: Int64Builder::with_capacity(capacity),
            num_occurrences: Int64Builder::with_capacity(capacity),
            typed_int: (0..ints)
                .map(|_| Int64Builder::with_capacity(capacity))
                .collect(),
            typed_str: (0..strs).map(|_| DictColumn::new(capacity)).collect(),
            stats: match layout {
                Layout::Dataset => StatsColumn::Map(stats_map_like(capacity, stats)),
                Layout::Frame => {
                    StatsColumn::Json(StringBuilder::with_capacity(capacity, stats.value_bytes))
                }
            },
            rows: 0,
            capacity,
            generation,
            last_stats: None,
        }
    }

    /// Makes fresh builders of the size the last batch had, when one has been finished (called
    /// before a batch is filled, so they are not held while the last batch is written).
    fn presize(&mut self) {
        if let Some(stats) = self.last_stats.take() {
            *self = Builders::sized(self.capacity, self.layout, stats, self.generation);
        }
    }

    fn finish(&mut self, schema: &SchemaRef, info: &HostInfo) -> Result<RecordBatch> {
        self.last_stats = Some(match &mut self.stats {
            StatsColumn::Map(map) => StatsSize {
                entries: map.keys().len(),
                key_bytes: map.keys().values_slice().len(),
                value_bytes: map.values().values_slice().len(),
            },
            StatsColumn::Json(text) => StatsSize {
                entries: 0,
                key_bytes: 0,
                value_bytes: text.values_slice().len(),
            },
        });
        // Keys cached for this batch are stale from now on.
        self.generation = self.generation.wrapping_add(1).max(1);
        let rows = self.rows;
        let constant = |value: &str| -> Result<ArrayRef> {
            let keys = Int32Array::from(vec![0; rows]);
            let values = arrow_array::StringArray::from(vec![value]);
            Ok(Arc::new(DictionaryArray::try_new(keys, Arc::new(values))?))
        };
        let mut columns: Vec<ArrayRef> = vec![
            constant(&info.host)?,
            constant(&info.source_format)?,
            Arc::new(self.plane.finish()?),
            Arc::new(self.plane_id.finish()),
            Arc::new(self.line.finish()?),
            Arc::new(self.line_id.finish()),
            Arc::new(self.line_role.finish()?),
            Arc::new(self.name.finish()?),
            Arc::new(self.display_name.finish()?),
        ];
        match &mut self.times {
            TimeColumns::Start(start) => {
                columns.push(Arc::new(start.finish().with_data_type(schema::time_type())));
            }
            TimeColumns::Pair {
                timestamp_ns,
                offset_ps,
            } => {
                columns.push(Arc::new(timestamp_ns.finish()));
                columns.push(Arc::new(offset_ps.finish()));
            }
        }
        columns.push(Arc::new(self.duration_ps.finish()));
        columns.push(Arc::new(self.self_ps.finish()));
        columns.push(Arc::new(self.num_occurrences.finish()));
        let (mut ints, mut strs) = (self.typed_int.iter_mut(), self.typed_str.iter_mut());
        for (_, _, kind) in TYPED_STATS {
            let column: Option<ArrayRef> = match kind {
                TypedKind::Int => ints.next().map(|b| Arc::new(b.finish()) as ArrayRef),
                TypedKind::Str => match strs.next() {
                    Some(b) => Some(Arc::new(b.finish()?) as ArrayRef),
                    None => None,
                },
            };
            columns.push(column.ok_or(Error::Internal("typed stat builders"))?);
        }
        columns.push(match &mut self.stats {
            StatsColumn::Map(map) => Arc::new(map.finish()),
            StatsColumn::Json(text) => Arc::new(text.finish()),
        });
        self.rows = 0;
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}

/// A typed stat value found for an event.
#[derive(Clone, Copy)]
enum Found<'a> {
    Int(i64),
    Str(&'a str),
    /// A `ref_value`: the referenced stat metadata's position and name.
    Ref(usize, &'a str),
}

// ---------------------------------------------------------------------------------------------
// The side tables

/// The small tables, built as the events stream (their builders, so that a row costs what its
/// values take and nothing is copied at the end).
struct Side {
    planes: PlaneRows,
    lines: LineRows,
    fact_keys: StringBuilder,
    fact_values: StringBuilder,
    /// The tables, once the stream has ended.
    done: Option<SideTables>,
}

struct PlaneRows {
    name: StringBuilder,
    id: Int64Builder,
    lines: Int64Builder,
    events: Int64Builder,
    event_metadata: Int64Builder,
    stat_metadata: Int64Builder,
    start_ps: Decimal128Builder,
    end_ps: Decimal128Builder,
    total_duration_ps: Decimal128Builder,
    stats: MapBuilder<StringBuilder, StringBuilder>,
}

struct LineRows {
    plane: StringBuilder,
    plane_id: Int64Builder,
    name: StringBuilder,
    id: Int64Builder,
    display_id: Int64Builder,
    display_name: StringBuilder,
    role: StringBuilder,
    timestamp_ns: Int64Builder,
    duration_ps: Int64Builder,
    events: Int64Builder,
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A column of `n` copies of `value`.
fn repeated(value: &str, n: usize) -> ArrayRef {
    let mut b = StringBuilder::with_capacity(n, value.len().saturating_mul(n));
    for _ in 0..n {
        b.append_value(value);
    }
    Arc::new(b.finish())
}

impl Side {
    /// The side tables of `info`'s host, its first facts written.
    fn new(info: &HostInfo) -> Side {
        let mut side = Side {
            planes: PlaneRows {
                name: StringBuilder::new(),
                id: Int64Builder::new(),
                lines: Int64Builder::new(),
                events: Int64Builder::new(),
                event_metadata: Int64Builder::new(),
                stat_metadata: Int64Builder::new(),
                start_ps: time_builder(0),
                end_ps: time_builder(0),
                total_duration_ps: time_builder(0),
                stats: stats_map_like(0, StatsSize::default()),
            },
            lines: LineRows {
                plane: StringBuilder::new(),
                plane_id: Int64Builder::new(),
                name: StringBuilder::new(),
                id: Int64Builder::new(),
                display_id: Int64Builder::new(),
                display_name: StringBuilder::new(),
                role: StringBuilder::new(),
                timestamp_ns: Int64Builder::new(),
                duration_ps: Int64Builder::new(),
                events: Int64Builder::new(),
            },
            fact_keys: StringBuilder::new(),
            fact_values: StringBuilder::new(),
            done: None,
        };
        side.fact("schema_version", schema::VERSION);
        side.fact("source_format", &info.source_format);
        side.fact(
            "writer",
            concat!("profkit-arrow ", env!("CARGO_PKG_VERSION")),
        );
        for source in &info.sources {
            side.fact("source", source);
        }
        side
    }

    fn fact(&mut self, key: &str, value: &str) {
        self.fact_keys.append_value(key);
        self.fact_values.append_value(value);
    }

    /// Makes the tables (once, when the stream ends).
    fn finish(&mut self, info: &HostInfo) -> Result<()> {
        let p = &mut self.planes;
        let n = p.id.len();
        let planes = RecordBatch::try_new(
            schema::planes(),
            vec![
                repeated(&info.host, n),
                repeated(&info.source_format, n),
                Arc::new(p.name.finish()),
                Arc::new(p.id.finish()),
                Arc::new(p.lines.finish()),
                Arc::new(p.events.finish()),
                Arc::new(p.event_metadata.finish()),
                Arc::new(p.stat_metadata.finish()),
                Arc::new(p.start_ps.finish().with_data_type(schema::time_type())),
                Arc::new(p.end_ps.finish().with_data_type(schema::time_type())),
                Arc::new(
                    p.total_duration_ps
                        .finish()
                        .with_data_type(schema::time_type()),
                ),
                Arc::new(p.stats.finish()),
            ],
        )?;
        let l = &mut self.lines;
        let n = l.id.len();
        let lines = RecordBatch::try_new(
            schema::lines(),
            vec![
                repeated(&info.host, n),
                Arc::new(l.plane.finish()),
                Arc::new(l.plane_id.finish()),
                Arc::new(l.name.finish()),
                Arc::new(l.id.finish()),
                Arc::new(l.display_id.finish()),
                Arc::new(l.display_name.finish()),
                Arc::new(l.role.finish()),
                Arc::new(l.timestamp_ns.finish()),
                Arc::new(l.duration_ps.finish()),
                Arc::new(l.events.finish()),
            ],
        )?;
        let (keys, values) = (self.fact_keys.finish(), self.fact_values.finish());
        let n = keys.len();
        let metadata = RecordBatch::try_new(
            schema::metadata_table(),
            vec![repeated(&info.host, n), Arc::new(keys), Arc::new(values)],
        )?;
        self.done = Some(SideTables {
            planes,
            lines,
            metadata,
        });
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The plane being read

/// Each event's self time on a line whose events are `events` (see [`LineState::self_times`]).
/// A line in order (as profilers write them) is timed as it streams; one out of order is sorted.
/// A damaged event ends the walk: the rows' own walk reports it (where decoding would).
fn line_self_times(timestamp_ns: i64, events: Events<'_>) -> Vec<Option<i64>> {
    let base = i128::from(timestamp_ns) * 1000;
    let mut result: Vec<Option<i64>> = Vec::new();
    let mut timer = SelfTimer::new();
    let mut in_order = true;
    for event in events.clone().map_while(|event| event.ok()) {
        let index = result.len();
        if event.num_occurrences().is_some() {
            result.push(None);
            continue;
        }
        result.push(Some(event.duration_ps().max(0)));
        let start = base + i128::from(event.offset_ps());
        let set = |i: usize, t: i64| {
            if let Some(slot) = result.get_mut(i) {
                *slot = Some(t);
            }
        };
        if !timer.push(start, event.duration_ps(), index, set) {
            in_order = false;
            break;
        }
    }
    if in_order {
        timer.finish(|i, t| {
            if let Some(slot) = result.get_mut(i) {
                *slot = Some(t);
            }
        });
        return result;
    }
    let spans: Vec<Option<(i128, i64)>> = events
        .map_while(|event| event.ok())
        .map(|event| match event.num_occurrences() {
            Some(_) => None,
            None => Some((base + i128::from(event.offset_ps()), event.duration_ps())),
        })
        .collect();
    profkit_xplane::utils::self_times(&spans)
}

/// The line being turned into rows.
struct LineState<'a> {
    name: &'a str,
    id: i64,
    role: LineRole,
    timestamp_ns: i64,
    events: Events<'a>,
    /// This line's key in the batch of generation `.0`.
    key: (u32, i32),
    /// The line's role's key in the batch of generation `.0`.
    role_key: (u32, i32),
    /// Each event's self time, in line order ([`profkit_xplane::utils::self_times`]); the line's
    /// events are walked once before their rows are made, since an event's self time depends on
    /// the events after it.
    self_times: std::vec::IntoIter<Option<i64>>,
}

/// The plane being turned into rows, viewed in its bytes, and where in it.
struct PlaneState<'a> {
    name: &'a str,
    id: i64,
    tables: PlaneTables<'a>,
    lines: Lines<'a>,
    line: Option<LineState<'a>>,
    /// This plane's key in the batch of generation `.0`.
    key: (u32, i32),
    /// The event's own stats, for the row being built.
    own: Vec<XStatView<'a>>,
    /// The planes table's row, filled in as the events pass.
    line_count: usize,
    event_count: usize,
    span: Option<(i128, i128)>,
    total: i128,
    stats: Vec<(&'a str, String)>,
}

self_cell::self_cell!(
    /// A plane's bytes with the view walking them.
    struct PlaneCursor {
        owner: PlaneBytes,
        #[not_covariant]
        dependent: PlaneState,
    }
);

impl<'a> PlaneState<'a> {
    fn new(bytes: &'a PlaneBytes) -> Result<PlaneState<'a>> {
        let view = bytes.view()?;
        let tables = PlaneTables::new(view.metadata()?);
        // The plane's own stats first: the order in which decoding finds a plane's faults.
        let mut stats = Vec::with_capacity(view.stat_count());
        for stat in view.stats() {
            let stat = stat?;
            let name = tables.stat(stat.metadata_id()).map_or("", |(_, s)| s.name);
            let mut text = String::new();
            push_text(stat.value(), &tables, &mut text);
            stats.push((name, text));
        }
        Ok(PlaneState {
            name: view.name(),
            id: view.id(),
            lines: view.lines(),
            line: None,
            key: (0, 0),
            own: Vec::new(),
            line_count: 0,
            event_count: 0,
            span: None,
            total: 0,
            stats,
            tables,
        })
    }

    /// Appends the planes table's row (when the plane is done).
    fn plane_row(&self, side: &mut Side) -> Result<()> {
        let p = &mut side.planes;
        p.name.append_value(self.name);
        p.id.append_value(self.id);
        p.lines.append_value(count(self.line_count));
        p.events.append_value(count(self.event_count));
        p.event_metadata
            .append_value(count(self.tables.events.len()));
        p.stat_metadata.append_value(count(self.tables.stats.len()));
        p.start_ps.append_option(self.span.map(|s| s.0));
        p.end_ps.append_option(self.span.map(|s| s.1));
        p.total_duration_ps.append_value(self.total);
        for (k, v) in &self.stats {
            p.stats.keys().append_value(k);
            p.stats.values().append_value(v);
        }
        p.stats.append(true)?;
        Ok(())
    }

    /// Appends rows until the batch is full (true) or the plane is done (false).
    fn fill(
        &mut self,
        b: &mut Builders,
        side: &mut Side,
        batch_rows: usize,
        text: &mut String,
    ) -> Result<bool> {
        loop {
            if self.line.is_none() {
                let Some(line) = self.lines.next() else {
                    self.plane_row(side)?;
                    return Ok(false);
                };
                let line = line?;
                self.line_count += 1;
                let l = &mut side.lines;
                l.plane.append_value(self.name);
                l.plane_id.append_value(self.id);
                l.name.append_value(line.name());
                l.id.append_value(line.id());
                l.display_id.append_value(line.raw_display_id());
                l.display_name.append_value(line.raw_display_name());
                let role = line_role(self.name, line.name());
                l.role.append_value(role.as_str());
                l.timestamp_ns.append_value(line.timestamp_ns());
                l.duration_ps.append_value(line.duration_ps());
                l.events.append_value(count(line.event_count()));
                self.line = Some(LineState {
                    name: line.name(),
                    id: line.id(),
                    role,
                    timestamp_ns: line.timestamp_ns(),
                    events: line.events(),
                    key: (0, 0),
                    role_key: (0, 0),
                    self_times: line_self_times(line.timestamp_ns(), line.events()).into_iter(),
                });
            }
            if self.rows(b, batch_rows, text)? {
                return Ok(true);
            }
            self.line = None;
        }
    }

    /// Appends the current line's rows until the batch is full (true) or the line is done.
    fn rows(&mut self, b: &mut Builders, batch_rows: usize, text: &mut String) -> Result<bool> {
        let Some(line) = self.line.as_mut() else {
            return Ok(false);
        };
        let tables = &mut self.tables;
        let base = i128::from(line.timestamp_ns) * 1000;
        loop {
            if b.rows >= batch_rows {
                return Ok(true);
            }
            let Some(event) = line.events.next() else {
                return Ok(false);
            };
            let event = event?;
            b.rows += 1;
            self.event_count += 1;
            let generation = b.generation;
            if self.key.0 != generation {
                self.key = (generation, b.plane.intern(self.name));
            }
            b.plane.append_key(self.key.1);
            b.plane_id.append_value(self.id);
            if line.key.0 != generation {
                line.key = (generation, b.line.intern(line.name));
            }
            b.line.append_key(line.key.1);
            b.line_id.append_value(line.id);
            if line.role_key.0 != generation {
                line.role_key = (generation, b.line_role.intern(line.role.as_str()));
            }
            b.line_role.append_key(line.role_key.1);

            // Names: keys cached per metadata and batch.
            let md_position = tables.event_index.get(event.metadata_id());
            let md_stats: std::ops::Range<usize> = match md_position {
                Some(position) => {
                    let (keys, md) =
                        match (tables.keys.get_mut(position), tables.events.get(position)) {
                            (Some(k), Some(md)) => (k, md),
                            _ => return Err(Error::Internal("event metadata tables")),
                        };
                    if keys.generation != generation {
                        *keys = Keys {
                            generation,
                            name: b.name.intern(md.name),
                            display: b.display_name.intern(md.display),
                        };
                    }
                    b.name.append_key(keys.name);
                    b.display_name.append_key(keys.display);
                    md.stats.clone()
                }
                None => {
                    let key = b.name.intern("");
                    b.name.append_key(key);
                    let key = b.display_name.intern("");
                    b.display_name.append_key(key);
                    0..0
                }
            };

            // Times.
            let duration = event.duration_ps();
            let occurrences = event.num_occurrences();
            let offset = event.offset_ps();
            match &mut b.times {
                TimeColumns::Start(start) => match occurrences {
                    Some(_) => start.append_null(),
                    None => start.append_value(base + i128::from(offset)),
                },
                TimeColumns::Pair {
                    timestamp_ns,
                    offset_ps,
                } => {
                    timestamp_ns.append_value(line.timestamp_ns);
                    offset_ps.append_value(offset);
                }
            }
            b.num_occurrences.append_option(occurrences);
            b.duration_ps.append_value(duration);
            b.self_ps.append_option(line.self_times.next().flatten());
            self.total += i128::from(duration);
            if occurrences.is_none() {
                let start = base + i128::from(offset);
                let end = start + i128::from(duration);
                self.span = Some(
                    self.span
                        .map_or((start, end), |(s, e)| (s.min(start), e.max(end))),
                );
            }

            // Stats: the event's own, then its metadata's (unless the event has the same one).
            self.own.clear();
            for stat in event.stats() {
                self.own.push(stat?);
            }
            let own_count = self.own.len();
            let md_slice = tables.md_stats.get(md_stats).unwrap_or_default();
            // Typed stats: event stats first, then the metadata's; within each, the earlier name
            // of a column's list wins.
            let mut found: [Option<(bool, usize, Found<'a>)>; TYPED_STATS.len()] =
                [None; TYPED_STATS.len()];
            if let StatsColumn::Json(_) = b.stats {
                text.clear();
                text.push('{');
            }
            let mut first = true;
            for (i, stat) in self.own.iter().chain(md_slice.iter()).enumerate() {
                let from_md = i >= own_count;
                if from_md
                    && self
                        .own
                        .iter()
                        .any(|s| s.metadata_id() == stat.metadata_id())
                {
                    continue;
                }
                let info = tables.stat(stat.metadata_id());
                let value = stat.value();
                match &mut b.stats {
                    StatsColumn::Map(map) => {
                        map.keys().append_value(info.map_or("", |(_, s)| s.name));
                        match borrowed_text(value, tables) {
                            Some(v) => map.values().append_value(v),
                            None => {
                                text.clear();
                                push_text(value, tables, text);
                                map.values().append_value(&*text);
                            }
                        }
                    }
                    StatsColumn::Json(_) => {
                        if !first {
                            text.push(',');
                        }
                        match info {
                            Some((_, s)) => push_json_str(s.name, s.plain, text),
                            None => text.push_str("\"\""),
                        }
                        text.push(':');
                        match borrowed_text(value, tables) {
                            Some(v) => push_json_str(v, json_plain(v), text),
                            None => {
                                // Numbers and base64 need no escaping.
                                text.push('"');
                                push_text(value, tables, text);
                                text.push('"');
                            }
                        }
                    }
                }
                first = false;
                let Some((column, priority)) = info.and_then(|(_, s)| s.typed) else {
                    continue;
                };
                let Some(slot) = found.get_mut(column) else {
                    continue;
                };
                if slot.is_some_and(|(m, p, _)| (m, p) <= (from_md, priority)) {
                    continue;
                }
                let found_value = match TYPED_STATS.get(column).map(|t| t.2) {
                    Some(TypedKind::Int) => stat_i64(value).map(Found::Int),
                    _ => match value {
                        Some(StatValueView::Str(s)) => Some(Found::Str(s)),
                        Some(StatValueView::Ref(id)) => Some(match tables.referenced(id) {
                            (Some(position), name) => Found::Ref(position, name),
                            (None, name) => Found::Str(name),
                        }),
                        _ => None,
                    },
                };
                if let Some(v) = found_value {
                    *slot = Some((from_md, priority, v));
                }
            }
            match &mut b.stats {
                StatsColumn::Map(map) => map.append(true)?,
                StatsColumn::Json(json) => {
                    text.push('}');
                    json.append_value(&*text);
                }
            }
            let (mut ints, mut strs) = (b.typed_int.iter_mut(), b.typed_str.iter_mut().enumerate());
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
                        if let Some((column, builder)) = strs.next() {
                            match slot {
                                Some((_, _, Found::Str(v))) => {
                                    let key = builder.intern(v);
                                    builder.append_key(key);
                                }
                                Some((_, _, Found::Ref(position, name))) => {
                                    let cached = tables
                                        .ref_keys
                                        .get_mut(column)
                                        .and_then(|c| c.get_mut(position));
                                    let key = match cached {
                                        Some(c) if c.0 == generation => c.1,
                                        Some(c) => {
                                            *c = (generation, builder.intern(name));
                                            c.1
                                        }
                                        None => builder.intern(name),
                                    };
                                    builder.append_key(key);
                                }
                                _ => builder.keys.append_null(),
                            }
                        }
                    }
                }
            }
        }
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

    /// Fills the builders up to a batch, taking planes from the input as needed.
    fn fill(&mut self) -> Result<()> {
        if self.builders.rows == 0 {
            self.builders.presize();
        }
        while self.builders.rows < self.options.batch_rows {
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
                None => return Ok(()),
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
        Ok(())
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

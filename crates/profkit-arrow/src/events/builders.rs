//! The events table's column builders: dictionary-encoded names, times, typed stats, the stats map.

use std::collections::HashMap;

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, Decimal128Builder, Int32Builder, Int64Builder, MapBuilder, MapFieldNames,
    StringBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, RecordBatch};
use arrow_schema::SchemaRef;

use crate::error::{Error, Result};
use crate::schema::{self, Layout, TYPED_STATS, TypedKind};

use super::*;

/// A dictionary-encoded string column whose strings are hashed once per batch: callers keep the
/// keys `intern` gives and append them.
pub(super) struct DictColumn {
    pub(super) keys: Int32Builder,
    pub(super) values: StringBuilder,
    pub(super) index: HashMap<String, i32>,
}

impl DictColumn {
    pub(super) fn new(capacity: usize) -> DictColumn {
        DictColumn {
            keys: Int32Builder::with_capacity(capacity),
            values: StringBuilder::new(),
            index: HashMap::new(),
        }
    }

    /// The key of `value` in this batch (added to the dictionary when new).
    pub(super) fn intern(&mut self, value: &str) -> i32 {
        if let Some(&key) = self.index.get(value) {
            return key;
        }
        let key = i32::try_from(self.index.len()).unwrap_or(i32::MAX);
        self.values.append_value(value);
        self.index.insert(value.to_owned(), key);
        key
    }

    #[inline]
    pub(super) fn append_key(&mut self, key: i32) {
        self.keys.append_value(key);
    }

    pub(super) fn finish(&mut self) -> Result<DictionaryArray<Int32Type>> {
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
pub(super) struct StatsSize {
    pub(super) entries: usize,
    pub(super) key_bytes: usize,
    pub(super) value_bytes: usize,
}

pub(super) fn map_field_names() -> MapFieldNames {
    MapFieldNames {
        entry: "entries".into(),
        key: "keys".into(),
        value: "values".into(),
    }
}

/// A `stats` map builder for `rows` rows, sized like a batch whose map was `size`.
pub(super) fn stats_map_like(
    rows: usize,
    size: StatsSize,
) -> MapBuilder<StringBuilder, StringBuilder> {
    MapBuilder::with_capacity(
        Some(map_field_names()),
        StringBuilder::with_capacity(size.entries, size.key_bytes),
        StringBuilder::with_capacity(size.entries, size.value_bytes),
        rows,
    )
}

pub(super) fn time_builder(capacity: usize) -> Decimal128Builder {
    Decimal128Builder::with_capacity(capacity).with_data_type(schema::time_type())
}

/// The `stats` column being built: the dataset's map or the frame's JSON text.
// One per stream, never moved in a hot path: boxing the map would only add an indirection.
#[allow(clippy::large_enum_variant)]
pub(super) enum StatsColumn {
    Map(MapBuilder<StringBuilder, StringBuilder>),
    Json(StringBuilder),
}

/// The time columns being built: the dataset's exact start, or the frame's pair.
pub(super) enum TimeColumns {
    Start(Decimal128Builder),
    Pair {
        timestamp_ns: Int64Builder,
        offset_ps: Int64Builder,
    },
}

/// The builders of one events batch.
pub(super) struct Builders {
    pub(super) layout: Layout,
    pub(super) plane: DictColumn,
    pub(super) plane_id: Int64Builder,
    pub(super) line: DictColumn,
    pub(super) line_id: Int64Builder,
    pub(super) line_role: DictColumn,
    pub(super) name: DictColumn,
    pub(super) display_name: DictColumn,
    pub(super) times: TimeColumns,
    pub(super) duration_ps: Int64Builder,
    pub(super) self_ps: Int64Builder,
    pub(super) num_occurrences: Int64Builder,
    pub(super) typed_int: Vec<Int64Builder>,
    pub(super) typed_str: Vec<DictColumn>,
    pub(super) stats: StatsColumn,
    pub(super) rows: usize,
    /// Rows the builders were made for.
    pub(super) capacity: usize,
    /// Which batch this is: keys cached by the plane tables are valid in this one only.
    pub(super) generation: u32,
    /// The size of the last batch's `stats`, once one is finished: the next batch's builders
    /// are made that size (Arrow's builders are empty after `finish`, and would grow again by
    /// doubling, copying each time).
    pub(super) last_stats: Option<StatsSize>,
}

impl Builders {
    pub(super) fn new(capacity: usize, layout: Layout) -> Builders {
        Builders::sized(capacity, layout, StatsSize::default(), 1)
    }

    /// Builders for `capacity` rows whose `stats` are sized as `stats` says.
    pub(super) fn sized(
        capacity: usize,
        layout: Layout,
        stats: StatsSize,
        generation: u32,
    ) -> Builders {
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
    pub(super) fn presize(&mut self) {
        if let Some(stats) = self.last_stats.take() {
            *self = Builders::sized(self.capacity, self.layout, stats, self.generation);
        }
    }

    pub(super) fn finish(&mut self, schema: &SchemaRef, info: &HostInfo) -> Result<RecordBatch> {
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
pub(super) enum Found<'a> {
    Int(i64),
    Str(&'a str),
    /// A `ref_value`: the referenced stat metadata's position and name.
    Ref(usize, &'a str),
}

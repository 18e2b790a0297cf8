//! The tables and their columns: schema version 2.
//!
//! Every schema carries two metadata keys, [`VERSION_KEY`] (the schema version, [`VERSION`]) and
//! [`TABLE_KEY`] (the table's name); the Parquet files repeat them in their key-value metadata.
//! A new column may be added within a version; renaming, removing or retyping one makes a new
//! version. The columns are described in `docs/scale.md`.
//!
//! Times: `start_ps` is the event's start in picoseconds on the input's clock (the line's
//! `timestamp_ns` times 1,000 plus the event's `offset_ps`), a 38-digit decimal because epoch
//! picoseconds do not fit in 64 bits; durations are 64-bit picoseconds.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};

/// The schema version this crate writes. Version 2 added the `line_role` column to the `lines`
/// and `events` tables and `self_ps` to `events`.
pub const VERSION: &str = "2";
/// Schema metadata key holding [`VERSION`].
pub const VERSION_KEY: &str = "profkit.schema_version";
/// Schema metadata key holding the table's name.
pub const TABLE_KEY: &str = "profkit.table";

/// The events table: one row per event.
pub const EVENTS: &str = "events";
/// The planes table: one row per plane.
pub const PLANES: &str = "planes";
/// The lines table: one row per line.
pub const LINES: &str = "lines";
/// The metadata table: key-value facts about each host's input.
pub const METADATA: &str = "metadata";
/// The XDL records table: one row per record of an X-DeepLearning dataset.
pub const XDL_RECORDS: &str = "xdl_records";

/// The column the Hive-partitioned dataset keeps in its directory names instead of its files.
pub const HOST: &str = "host";

/// Precision of the picosecond time columns (`Decimal128(38, 0)`).
pub const TIME_PRECISION: u8 = 38;

/// Columns whose values are mostly distinct (times, sizes, ids): written without a Parquet
/// dictionary.
pub const UNIQUE_COLUMNS: &[&str] = &[
    "start_ps",
    "end_ps",
    "duration_ps",
    "self_ps",
    "correlation_id",
    "bytes_accessed",
    "flops",
    "timestamp",
    "timestamp_ns",
];

/// The type of the picosecond time columns.
pub fn time_type() -> DataType {
    DataType::Decimal128(TIME_PRECISION, 0)
}

/// A dictionary-encoded string (names repeat, so each batch stores each once).
pub fn dict_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The type of the `stats` columns: every stat as a string, by stat name.
pub fn stats_type() -> DataType {
    DataType::Map(
        Arc::new(Field::new(
            "entries",
            DataType::Struct(Fields::from(vec![
                Field::new("keys", DataType::Utf8, false),
                Field::new("values", DataType::Utf8, true),
            ])),
            false,
        )),
        false,
    )
}

fn metadata(table: &str) -> HashMap<String, String> {
    HashMap::from([
        (VERSION_KEY.to_owned(), VERSION.to_owned()),
        (TABLE_KEY.to_owned(), table.to_owned()),
    ])
}

fn schema(table: &str, fields: Vec<Field>) -> SchemaRef {
    Arc::new(Schema::new_with_metadata(fields, metadata(table)))
}

/// The stats given typed columns of the events table, as (column, stat names looked for in
/// order, kind). Event stats win over those of the event's metadata.
pub const TYPED_STATS: &[(&str, &[&str], TypedKind)] = &[
    (
        "step_num",
        &["step_num", "step_id", "iter_num"],
        TypedKind::Int,
    ),
    ("group_id", &["group_id"], TypedKind::Int),
    ("correlation_id", &["correlation_id"], TypedKind::Int),
    ("tf_op", &["tf_op"], TypedKind::Str),
    ("hlo_op", &["hlo_op"], TypedKind::Str),
    ("hlo_module", &["hlo_module"], TypedKind::Str),
    (
        "bytes_accessed",
        &["bytes_accessed", "bytes"],
        TypedKind::Int,
    ),
    ("flops", &["flops", "model_flops"], TypedKind::Int),
];

/// The Arrow type of a typed stat column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypedKind {
    /// A 64-bit integer (unsigned values above `i64::MAX` and non-integers are null).
    Int,
    /// A dictionary-encoded string.
    Str,
}

/// How the events table lays out its times and its stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Layout {
    /// The dataset's columns (what the Parquet files hold): `start_ps` as exact picoseconds in a
    /// `Decimal128(38, 0)`, `stats` as a map of names to texts.
    #[default]
    Dataset,
    /// Columns a data frame holds without an object per row, losing nothing: instead of
    /// `start_ps`, the XSpace's own exact pair `timestamp_ns` (the line's start, `Int64`) and
    /// `offset_ps` (the event's offset from it, `Int64`, 0 for an aggregated event), so that
    /// `start_ps = timestamp_ns * 1000 + offset_ps` when `num_occurrences` is null (and null
    /// otherwise); instead of the map, `stats` as the text of a JSON object of the same names
    /// and texts in the same order (a name met twice is written twice). The schema's metadata
    /// says `profkit.layout: frame`.
    Frame,
}

/// Schema metadata key naming the events table's [`Layout`] (present for [`Layout::Frame`]).
pub const LAYOUT_KEY: &str = "profkit.layout";

/// The events table (with its `host` column; the dataset's files leave it to the directory).
pub fn events() -> SchemaRef {
    events_for(Layout::Dataset)
}

/// The events table laid out as `layout` says.
pub fn events_for(layout: Layout) -> SchemaRef {
    let mut fields = vec![
        Field::new(HOST, dict_type(), false),
        Field::new("source_format", dict_type(), false),
        Field::new("plane", dict_type(), false),
        Field::new("plane_id", DataType::Int64, false),
        Field::new("line", dict_type(), false),
        Field::new("line_id", DataType::Int64, false),
        Field::new("line_role", dict_type(), false),
        Field::new("name", dict_type(), false),
        Field::new("display_name", dict_type(), false),
    ];
    match layout {
        Layout::Dataset => fields.push(Field::new("start_ps", time_type(), true)),
        Layout::Frame => {
            fields.push(Field::new("timestamp_ns", DataType::Int64, false));
            fields.push(Field::new("offset_ps", DataType::Int64, false));
        }
    }
    fields.push(Field::new("duration_ps", DataType::Int64, false));
    fields.push(Field::new("self_ps", DataType::Int64, true));
    fields.push(Field::new("num_occurrences", DataType::Int64, true));
    for (column, _, kind) in TYPED_STATS {
        let data_type = match kind {
            TypedKind::Int => DataType::Int64,
            TypedKind::Str => dict_type(),
        };
        fields.push(Field::new(*column, data_type, true));
    }
    match layout {
        Layout::Dataset => {
            fields.push(Field::new("stats", stats_type(), false));
            schema(EVENTS, fields)
        }
        Layout::Frame => {
            fields.push(Field::new("stats", DataType::Utf8, false));
            let mut metadata = metadata(EVENTS);
            metadata.insert(LAYOUT_KEY.to_owned(), "frame".to_owned());
            Arc::new(Schema::new_with_metadata(fields, metadata))
        }
    }
}

/// The planes table.
pub fn planes() -> SchemaRef {
    schema(
        PLANES,
        vec![
            Field::new(HOST, DataType::Utf8, false),
            Field::new("source_format", DataType::Utf8, false),
            Field::new("plane", DataType::Utf8, false),
            Field::new("plane_id", DataType::Int64, false),
            Field::new("lines", DataType::Int64, false),
            Field::new("events", DataType::Int64, false),
            Field::new("event_metadata", DataType::Int64, false),
            Field::new("stat_metadata", DataType::Int64, false),
            Field::new("start_ps", time_type(), true),
            Field::new("end_ps", time_type(), true),
            Field::new("total_duration_ps", time_type(), false),
            Field::new("stats", stats_type(), false),
        ],
    )
}

/// The lines table.
pub fn lines() -> SchemaRef {
    schema(
        LINES,
        vec![
            Field::new(HOST, DataType::Utf8, false),
            Field::new("plane", DataType::Utf8, false),
            Field::new("plane_id", DataType::Int64, false),
            Field::new("line", DataType::Utf8, false),
            Field::new("line_id", DataType::Int64, false),
            Field::new("display_id", DataType::Int64, false),
            Field::new("display_name", DataType::Utf8, false),
            Field::new("line_role", DataType::Utf8, false),
            Field::new("timestamp_ns", DataType::Int64, false),
            Field::new("duration_ps", DataType::Int64, false),
            Field::new("events", DataType::Int64, false),
        ],
    )
}

/// The metadata table.
pub fn metadata_table() -> SchemaRef {
    schema(
        METADATA,
        vec![
            Field::new(HOST, DataType::Utf8, false),
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Utf8, false),
        ],
    )
}

/// The leading columns of the XDL records table; one column per scalar key follows.
pub fn xdl_fixed_fields() -> Vec<Field> {
    vec![
        Field::new(HOST, DataType::Utf8, false),
        Field::new("dataset", DataType::Utf8, false),
        Field::new("rank", DataType::Int64, false),
        Field::new("gstep", DataType::Int64, false),
        Field::new("lstep", DataType::Int64, false),
        Field::new("timestamp", DataType::Int64, false),
    ]
}

/// The XDL records table with these scalar key columns.
pub fn xdl_records(keys: Vec<Field>) -> SchemaRef {
    let mut fields = xdl_fixed_fields();
    fields.extend(keys);
    schema(XDL_RECORDS, fields)
}

/// `schema` without its `host` column (what the dataset's files hold).
pub fn without_host(schema: &Schema) -> (SchemaRef, Vec<usize>) {
    let keep: Vec<usize> = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name() != HOST)
        .map(|(i, _)| i)
        .collect();
    let fields: Vec<Field> = keep
        .iter()
        .filter_map(|&i| schema.fields().get(i).map(|f| f.as_ref().clone()))
        .collect();
    (
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        keep,
    )
}

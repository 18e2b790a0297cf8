//! The small tables (planes, lines, metadata), built as the events stream.

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, Decimal128Builder, Int64Builder, MapBuilder, StringBuilder,
};
use arrow_array::{Array, ArrayRef, RecordBatch};

use crate::error::Result;
use crate::schema::{self};

use super::*;

/// The small tables, built as the events stream (their builders, so that a row costs what its
/// values take and nothing is copied at the end).
pub(super) struct Side {
    pub(super) planes: PlaneRows,
    pub(super) lines: LineRows,
    pub(super) fact_keys: StringBuilder,
    pub(super) fact_values: StringBuilder,
    /// The tables, once the stream has ended.
    pub(super) done: Option<SideTables>,
}

pub(super) struct PlaneRows {
    pub(super) name: StringBuilder,
    pub(super) id: Int64Builder,
    pub(super) lines: Int64Builder,
    pub(super) events: Int64Builder,
    pub(super) event_metadata: Int64Builder,
    pub(super) stat_metadata: Int64Builder,
    pub(super) start_ps: Decimal128Builder,
    pub(super) end_ps: Decimal128Builder,
    pub(super) total_duration_ps: Decimal128Builder,
    pub(super) stats: MapBuilder<StringBuilder, StringBuilder>,
}

pub(super) struct LineRows {
    pub(super) plane: StringBuilder,
    pub(super) plane_id: Int64Builder,
    pub(super) name: StringBuilder,
    pub(super) id: Int64Builder,
    pub(super) display_id: Int64Builder,
    pub(super) display_name: StringBuilder,
    pub(super) role: StringBuilder,
    pub(super) timestamp_ns: Int64Builder,
    pub(super) duration_ps: Int64Builder,
    pub(super) events: Int64Builder,
}

pub(super) fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A column of `n` copies of `value`.
pub(super) fn repeated(value: &str, n: usize) -> ArrayRef {
    let mut b = StringBuilder::with_capacity(n, value.len().saturating_mul(n));
    for _ in 0..n {
        b.append_value(value);
    }
    Arc::new(b.finish())
}

impl Side {
    /// The side tables of `info`'s host, its first facts written.
    pub(super) fn new(info: &HostInfo) -> Side {
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

    pub(super) fn fact(&mut self, key: &str, value: &str) {
        self.fact_keys.append_value(key);
        self.fact_values.append_value(value);
    }

    /// Rows of the planes table not yet given out.
    pub(super) fn plane_rows(&self) -> usize {
        self.planes.id.len()
    }

    /// Rows of the lines table not yet given out.
    pub(super) fn line_rows(&self) -> usize {
        self.lines.id.len()
    }

    /// Makes the tables (once, when the stream ends): what is left of the planes and lines.
    pub(super) fn finish(&mut self, info: &HostInfo) -> Result<()> {
        let planes = self.planes_batch(info)?;
        let lines = self.lines_batch(info)?;
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

    /// The planes rows so far as a batch (the builders start again empty).
    pub(super) fn planes_batch(&mut self, info: &HostInfo) -> Result<RecordBatch> {
        let p = &mut self.planes;
        let n = p.id.len();
        Ok(RecordBatch::try_new(
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
        )?)
    }

    /// The lines rows so far as a batch (the builders start again empty).
    pub(super) fn lines_batch(&mut self, info: &HostInfo) -> Result<RecordBatch> {
        let l = &mut self.lines;
        let n = l.id.len();
        Ok(RecordBatch::try_new(
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
        )?)
    }
}

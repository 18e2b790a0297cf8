//! X-DeepLearning records as a table: one row per record (gstep, lstep, timestamp) with one
//! column per scalar key.
//!
//! The key columns are those of the dataset's header whose column in the first record holds one
//! element: integer dtypes become `Int64`, `float` and `double` `Float64`, `bool` `Boolean`.
//! Tensors (more than one element) are left to the XDL files. A later record whose column is not
//! a scalar of the first one's kind has a null there.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, SchemaRef};
use profkit_xdl::{Column, DType, Dataset, DatasetReader, Record};

use crate::error::{Error, Result};
use crate::events::Options;
use crate::schema;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Float,
    Bool,
}

enum Builder {
    Int(Int64Builder),
    Float(Float64Builder),
    Bool(BooleanBuilder),
}

fn first<T: profkit_xdl::Element + Copy>(c: &Column) -> Option<T> {
    c.values::<T>().ok()?.first().copied()
}

/// The value of a one-element column, in its kind.
fn scalar(column: &Column) -> Option<(Kind, f64, i64, bool)> {
    if column.element_count().ok()? != 1 {
        return None;
    }
    let dtype = column.try_dtype().ok()?;
    let int = |v: i64| Some((Kind::Int, 0.0, v, false));
    match dtype {
        DType::Int8 => int(i64::from(first::<i8>(column)?)),
        DType::Int16 => int(i64::from(first::<i16>(column)?)),
        DType::Int32 => int(i64::from(first::<i32>(column)?)),
        DType::Int64 => int(first::<i64>(column)?),
        DType::Byte => int(i64::from(first::<u8>(column)?)),
        DType::Float => Some((Kind::Float, f64::from(first::<f32>(column)?), 0, false)),
        DType::Double => Some((Kind::Float, first::<f64>(column)?, 0, false)),
        DType::Bool => Some((Kind::Bool, 0.0, 0, *column.to_bools().ok()?.first()?)),
    }
}

/// The records of one XDL dataset as record batches (the `xdl_records` table).
pub struct XdlRecords {
    reader: DatasetReader,
    host: String,
    dataset: String,
    rank: i64,
    keys: Vec<(usize, Kind)>,
    schema: SchemaRef,
    pending: Option<Record>,
    batch_rows: usize,
    ended: bool,
}

/// The records of `dataset` for `host`. Reads the first record to learn the key columns; errors
/// name the file and frame.
pub fn records(dataset: &Dataset, host: &str, options: &Options) -> Result<XdlRecords> {
    let mut reader = dataset.records(profkit_xdl::ReadOptions::default());
    let pending = reader.next().transpose()?;
    let header_keys: Vec<String> = reader.keys().map(<[String]>::to_vec).unwrap_or_default();
    let mut keys = Vec::new();
    let mut fields = Vec::new();
    if let Some(record) = &pending {
        for (i, (key, column)) in header_keys.iter().zip(&record.column).enumerate() {
            if let Some((kind, ..)) = scalar(column) {
                let data_type = match kind {
                    Kind::Int => DataType::Int64,
                    Kind::Float => DataType::Float64,
                    Kind::Bool => DataType::Boolean,
                };
                if schema::xdl_fixed_fields().iter().any(|f| f.name() == key) {
                    continue;
                }
                keys.push((i, kind));
                fields.push(Field::new(key, data_type, true));
            }
        }
    }
    Ok(XdlRecords {
        reader,
        host: host.to_owned(),
        dataset: format!("{}.{}", dataset.id.phase, dataset.id.name),
        rank: i64::try_from(dataset.id.rank).unwrap_or(i64::MAX),
        keys,
        schema: schema::xdl_records(fields),
        pending,
        batch_rows: options.batch_rows,
        ended: false,
    })
}

impl XdlRecords {
    /// The dataset's id without its rank (`<phase>.<name>`).
    pub fn dataset(&self) -> &str {
        &self.dataset
    }

    /// The next batch, `None` at the end; after an error the stream ends.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.ended {
            return Ok(None);
        }
        let result = self.fill();
        if !matches!(result, Ok(Some(_))) {
            self.ended = true;
        }
        result
    }

    fn fill(&mut self) -> Result<Option<RecordBatch>> {
        let mut gstep = Int64Builder::new();
        let mut lstep = Int64Builder::new();
        let mut timestamp = Int64Builder::new();
        let mut builders: Vec<Builder> = self
            .keys
            .iter()
            .map(|(_, kind)| match kind {
                Kind::Int => Builder::Int(Int64Builder::new()),
                Kind::Float => Builder::Float(Float64Builder::new()),
                Kind::Bool => Builder::Bool(BooleanBuilder::new()),
            })
            .collect();
        let mut rows = 0usize;
        while rows < self.batch_rows {
            let record = match self.pending.take() {
                Some(r) => r,
                None => match self.reader.next() {
                    Some(r) => r?,
                    None => break,
                },
            };
            rows += 1;
            gstep.append_value(record.gstep);
            lstep.append_value(record.lstep);
            timestamp.append_value(record.timestamp);
            for ((index, kind), builder) in self.keys.iter().zip(builders.iter_mut()) {
                let value = record
                    .column
                    .get(*index)
                    .and_then(scalar)
                    .filter(|v| v.0 == *kind);
                match builder {
                    Builder::Int(b) => b.append_option(value.map(|v| v.2)),
                    Builder::Float(b) => b.append_option(value.map(|v| v.1)),
                    Builder::Bool(b) => b.append_option(value.map(|v| v.3)),
                }
            }
        }
        if rows == 0 {
            return Ok(None);
        }
        let repeat = |value: &str| -> ArrayRef {
            let mut b = StringBuilder::new();
            for _ in 0..rows {
                b.append_value(value);
            }
            Arc::new(b.finish())
        };
        let mut rank = Int64Builder::new();
        rank.append_value_n(self.rank, rows);
        let mut columns: Vec<ArrayRef> = vec![
            repeat(&self.host),
            repeat(&self.dataset),
            Arc::new(rank.finish()),
            Arc::new(gstep.finish()),
            Arc::new(lstep.finish()),
            Arc::new(timestamp.finish()),
        ];
        for builder in builders {
            columns.push(match builder {
                Builder::Int(mut b) => Arc::new(b.finish()),
                Builder::Float(mut b) => Arc::new(b.finish()),
                Builder::Bool(mut b) => Arc::new(b.finish()),
            });
        }
        RecordBatch::try_new(self.schema.clone(), columns)
            .map(Some)
            .map_err(Error::from)
    }
}

impl Iterator for XdlRecords {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))
            .transpose()
    }
}

impl RecordBatchReader for XdlRecords {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

//! The JSON form of records and metas, with decoded values, and its parser.
//!
//! A record is `{"gstep", "lstep", "timestamp", "columns": [{"key", "dtype", "shape", "nbytes",
//! "value"}]}` where `dtype` is the schema's name (`Float`, `Int64`, ...) and `value` nests arrays
//! by the shape (a scalar is a bare number). Floats are written in their shortest exact form, so
//! the JSON reads back to the same bits; NaN and the infinities, which JSON lacks, are the strings
//! `"NaN"`, `"Infinity"` and `"-Infinity"`. A column that is not valid gets `"value": null` and an
//! `"error"`. This is the form of `writer.decoded.json` in the shared samples.

use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::column::{DType, Element, element_count};
use crate::error::{Error, Result};
use crate::proto::{Column, Header, Meta, Record};

/// How one element is written as JSON.
trait JsonElement: Element {
    fn write<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
}

macro_rules! int_json {
    ($($t:ty),*) => {$(
        impl JsonElement for $t {
            fn write<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.serialize(s)
            }
        }
    )*};
}
int_json!(i8, i16, i32, i64, u8, bool);

macro_rules! float_json {
    ($($t:ty),*) => {$(
        impl JsonElement for $t {
            fn write<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                if self.is_finite() {
                    self.serialize(s)
                } else if self.is_nan() {
                    s.serialize_str("NaN")
                } else if *self > 0.0 {
                    s.serialize_str("Infinity")
                } else {
                    s.serialize_str("-Infinity")
                }
            }
        }
    )*};
}
float_json!(f32, f64);

/// Elements nested by dimensions.
struct Nested<'a, T> {
    dims: &'a [usize],
    values: &'a [T],
}

impl<T: JsonElement> Serialize for Nested<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some((&first, rest)) = self.dims.split_first() else {
            return match self.values.first() {
                Some(v) => v.write(s),
                None => s.serialize_none(),
            };
        };
        // Cannot overflow: `json_limit` bounds the product of the dimensions.
        let chunk = rest
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .unwrap_or(0);
        let mut seq = s.serialize_seq(Some(first))?;
        for i in 0..first {
            let values = self
                .values
                .get(i * chunk..(i + 1) * chunk)
                .unwrap_or_default();
            seq.serialize_element(&Nested { dims: rest, values })?;
        }
        seq.end()
    }
}

/// The most dimensions the JSON form nests (NumPy allows 64).
pub const MAX_JSON_DIMS: usize = 64;

/// Why a valid column's value cannot be written as nested JSON arrays, if it cannot: too many
/// dimensions to nest, or a shape such as `[2147483647, 0]` that describes billions of empty
/// arrays in a few bytes.
pub fn json_limit(column: &Column) -> Option<String> {
    if column.shape.len() > MAX_JSON_DIMS {
        return Some(format!(
            "{} dimensions, more than the {MAX_JSON_DIMS} the JSON form nests",
            column.shape.len()
        ));
    }
    let elements = element_count(&column.shape).unwrap_or(0);
    // Arrays the nesting writes: 1 + d0 + d0*d1 + ... (the last dimension holds elements).
    let mut arrays: u64 = 1;
    let mut level: u64 = 1;
    for &d in column
        .shape
        .iter()
        .take(column.shape.len().saturating_sub(1))
    {
        level = level.saturating_mul(u64::try_from(d).unwrap_or(0));
        arrays = arrays.saturating_add(level);
    }
    let allowed = elements.saturating_mul(64).saturating_add(1 << 20);
    (arrays > allowed).then(|| {
        format!(
            "shape {:?} describes {arrays} nested arrays for {elements} elements",
            column.shape
        )
    })
}

fn nested<T: JsonElement, S: Serializer>(column: &Column, s: S) -> Result<S::Ok, S::Error> {
    if let Some(why) = json_limit(column) {
        return Err(S::Error::custom(why));
    }
    let values = column.values::<T>().map_err(S::Error::custom)?;
    let dims: Vec<usize> = column
        .shape
        .iter()
        .map(|&d| usize::try_from(d).unwrap_or(0))
        .collect();
    Nested {
        dims: &dims,
        values: &values,
    }
    .serialize(s)
}

/// A column's decoded value, nested by its shape. Serializing fails for an invalid column.
pub struct ValueView<'a>(pub &'a Column);

impl Serialize for ValueView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.try_dtype().map_err(S::Error::custom)? {
            DType::Int8 => nested::<i8, S>(self.0, s),
            DType::Int16 => nested::<i16, S>(self.0, s),
            DType::Int32 => nested::<i32, S>(self.0, s),
            DType::Int64 => nested::<i64, S>(self.0, s),
            DType::Float => nested::<f32, S>(self.0, s),
            DType::Double => nested::<f64, S>(self.0, s),
            DType::Bool => nested::<bool, S>(self.0, s),
            DType::Byte => nested::<u8, S>(self.0, s),
        }
    }
}

/// A column with its key, as `{"key", "dtype", "shape", "nbytes", "value"}`.
pub struct ColumnView<'a> {
    /// The header's key for the column, if there is one.
    pub key: Option<&'a str>,
    /// The column.
    pub column: &'a Column,
}

impl Serialize for ColumnView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.column;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("key", &self.key)?;
        match c.try_dtype() {
            Ok(d) => map.serialize_entry("dtype", d.as_str_name())?,
            Err(_) => map.serialize_entry("dtype", &c.dtype)?,
        }
        map.serialize_entry("shape", &c.shape)?;
        map.serialize_entry("nbytes", &c.data.len())?;
        match c
            .check()
            .map_err(|e| e.to_string())
            .and_then(|()| json_limit(c).map_or(Ok(()), Err))
        {
            Ok(()) => map.serialize_entry("value", &ValueView(c))?,
            Err(why) => {
                map.serialize_entry("value", &None::<()>)?;
                map.serialize_entry("error", &why)?;
            }
        }
        map.end()
    }
}

/// A record with its header's keys, as `{"gstep", "lstep", "timestamp", "columns"}`.
///
/// ```
/// use profkit_xdl::{Column, Record, json::RecordView};
/// let record = Record::new(101, 1, 1_700_000_000_001, vec![Column::vector(&[1.5f32, f32::NAN])?]);
/// let keys = ["w".to_owned()];
/// let text = serde_json::to_string(&RecordView { record: &record, keys: &keys }).unwrap();
/// assert_eq!(text, r#"{"gstep":101,"lstep":1,"timestamp":1700000000001,"columns":[{"key":"w","dtype":"Float","shape":[2],"nbytes":8,"value":[1.5,"NaN"]}]}"#);
/// let back = profkit_xdl::json::record_from_json(&serde_json::from_str(&text).unwrap(), "record")?;
/// assert_eq!(back.column[0].data, record.column[0].data);
/// # Ok::<(), profkit_xdl::Error>(())
/// ```
pub struct RecordView<'a> {
    /// The record.
    pub record: &'a Record,
    /// The keys of the file's header.
    pub keys: &'a [String],
}

impl Serialize for RecordView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Columns<'a>(&'a RecordView<'a>);
        impl Serialize for Columns<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.record.column.len()))?;
                for (i, column) in self.0.record.column.iter().enumerate() {
                    seq.serialize_element(&ColumnView {
                        key: self.0.keys.get(i).map(String::as_str),
                        column,
                    })?;
                }
                seq.end()
            }
        }
        let mut map = s.serialize_map(Some(4))?;
        map.serialize_entry("gstep", &self.record.gstep)?;
        map.serialize_entry("lstep", &self.record.lstep)?;
        map.serialize_entry("timestamp", &self.record.timestamp)?;
        map.serialize_entry("columns", &Columns(self))?;
        map.end()
    }
}

/// A meta as a JSON object with the schema's field names, in schema order.
pub struct MetaView<'a>(pub &'a Meta);

impl Serialize for MetaView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(6))?;
        for (name, value) in self.0.fields() {
            map.serialize_entry(name, &value)?;
        }
        map.end()
    }
}

/// A meta as a JSON object with the schema's field names.
pub fn meta_to_json(meta: &Meta) -> Value {
    Value::Object(
        meta.fields()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::from(v)))
            .collect(),
    )
}

fn json_err(path: &str, reason: impl Into<String>) -> Error {
    Error::Json {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn int_field(obj: &serde_json::Map<String, Value>, name: &str, path: &str) -> Result<i64> {
    match obj.get(name) {
        None => Ok(0),
        Some(v) => v
            .as_i64()
            .ok_or_else(|| json_err(&format!("{path}.{name}"), "expected a 64-bit integer")),
    }
}

/// Parses a meta from its JSON object (absent fields are 0, as on the wire).
pub fn meta_from_json(value: &Value, path: &str) -> Result<Meta> {
    let obj = value
        .as_object()
        .ok_or_else(|| json_err(path, "expected an object"))?;
    Ok(Meta {
        lstep_begin: int_field(obj, "lstep_begin", path)?,
        lstep_end: int_field(obj, "lstep_end", path)?,
        gstep_begin: int_field(obj, "gstep_begin", path)?,
        gstep_end: int_field(obj, "gstep_end", path)?,
        timestamp_begin: int_field(obj, "timestamp_begin", path)?,
        timestamp_end: int_field(obj, "timestamp_end", path)?,
    })
}

/// Parses a header from a JSON array of keys.
pub fn header_from_json(value: &Value, path: &str) -> Result<Header> {
    let keys = value
        .as_array()
        .ok_or_else(|| json_err(path, "expected an array of keys"))?;
    keys.iter()
        .enumerate()
        .map(|(i, k)| {
            k.as_str()
                .map(str::to_owned)
                .ok_or_else(|| json_err(&format!("{path}[{i}]"), "expected a string"))
        })
        .collect::<Result<Vec<_>>>()
        .map(|key| Header { key })
}

/// Parses a record from its JSON form (see the module documentation). `nbytes` and `key` are
/// ignored; `path` names the record in errors.
pub fn record_from_json(value: &Value, path: &str) -> Result<Record> {
    let obj = value
        .as_object()
        .ok_or_else(|| json_err(path, "expected an object"))?;
    let columns = match obj.get("columns") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, c)| column_from_json(c, &format!("{path}.columns[{i}]")))
            .collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(json_err(&format!("{path}.columns"), "expected an array")),
    };
    Ok(Record {
        gstep: int_field(obj, "gstep", path)?,
        lstep: int_field(obj, "lstep", path)?,
        column: columns,
        timestamp: int_field(obj, "timestamp", path)?,
    })
}

/// Parses a column from `{"dtype", "shape", "value"}`.
pub fn column_from_json(value: &Value, path: &str) -> Result<Column> {
    let obj = value
        .as_object()
        .ok_or_else(|| json_err(path, "expected an object"))?;
    let dtype = match obj.get("dtype") {
        Some(Value::String(name)) => DType::from_str_name(name)
            .ok_or_else(|| json_err(&format!("{path}.dtype"), format!("unknown dtype {name:?}")))?,
        Some(other) => other
            .as_i64()
            .and_then(|v| i32::try_from(v).ok())
            .and_then(|v| DType::from_wire(v).ok())
            .ok_or_else(|| {
                json_err(
                    &format!("{path}.dtype"),
                    "expected a dtype name such as \"Float\"",
                )
            })?,
        None => DType::Int8,
    };
    let shape: Vec<i32> = match obj.get("shape") {
        None => Vec::new(),
        Some(Value::Array(dims)) => dims
            .iter()
            .enumerate()
            .map(|(i, d)| {
                d.as_i64()
                    .and_then(|d| i32::try_from(d).ok())
                    .filter(|d| *d >= 0)
                    .ok_or_else(|| {
                        json_err(
                            &format!("{path}.shape[{i}]"),
                            "expected a dimension from 0 to 2^31-1",
                        )
                    })
            })
            .collect::<Result<_>>()?,
        Some(_) => return Err(json_err(&format!("{path}.shape"), "expected an array")),
    };
    let count =
        element_count(&shape).map_err(|e| json_err(&format!("{path}.shape"), e.to_string()))?;
    let value_path = format!("{path}.value");
    let value = obj
        .get("value")
        .ok_or_else(|| json_err(&value_path, "missing"))?;
    let mut leaves = Vec::new();
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    flatten(value, &dims, &value_path, &mut leaves)?;
    if leaves.len() as u64 != count {
        return Err(json_err(
            &value_path,
            format!("{} elements for shape {shape:?}", leaves.len()),
        ));
    }
    let mut data = Vec::with_capacity(leaves.len() * dtype.size());
    for (i, leaf) in leaves.iter().enumerate() {
        encode_leaf(dtype, leaf, &mut data)
            .map_err(|reason| json_err(&format!("{value_path} element {i}"), reason))?;
    }
    Ok(Column {
        dtype: dtype as i32,
        shape,
        data: data.into(),
    })
}

/// Collects the leaves of `value`, checking its nesting against `dims`.
fn flatten<'v>(
    value: &'v Value,
    dims: &[usize],
    path: &str,
    out: &mut Vec<&'v Value>,
) -> Result<()> {
    let Some((&first, rest)) = dims.split_first() else {
        if value.is_array() {
            return Err(json_err(path, "more nesting than the shape has dimensions"));
        }
        out.push(value);
        return Ok(());
    };
    let items = value
        .as_array()
        .ok_or_else(|| json_err(path, format!("expected an array of {first} items")))?;
    if items.len() != first {
        return Err(json_err(
            path,
            format!("{} items, the shape says {first}", items.len()),
        ));
    }
    for (i, item) in items.iter().enumerate() {
        flatten(item, rest, &format!("{path}[{i}]"), out)?;
    }
    Ok(())
}

fn encode_leaf(dtype: DType, leaf: &Value, out: &mut Vec<u8>) -> Result<(), String> {
    fn int<T: TryFrom<i64>>(leaf: &Value, name: &str) -> Result<T, String> {
        leaf.as_i64()
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| format!("{leaf} is not an {name}"))
    }
    fn float(leaf: &Value) -> Result<f64, String> {
        match leaf {
            Value::Number(n) => n.as_f64().ok_or_else(|| format!("{leaf} is not a number")),
            Value::String(s) if s == "NaN" => Ok(f64::NAN),
            Value::String(s) if s == "Infinity" => Ok(f64::INFINITY),
            Value::String(s) if s == "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(format!("{leaf} is not a number")),
        }
    }
    match dtype {
        DType::Int8 => out.extend_from_slice(&int::<i8>(leaf, "int8")?.to_le_bytes()),
        DType::Int16 => out.extend_from_slice(&int::<i16>(leaf, "int16")?.to_le_bytes()),
        DType::Int32 => out.extend_from_slice(&int::<i32>(leaf, "int32")?.to_le_bytes()),
        DType::Int64 => out.extend_from_slice(&int::<i64>(leaf, "int64")?.to_le_bytes()),
        DType::Byte => out.push(int::<u8>(leaf, "unsigned byte")?),
        // The shortest form of an f32 reads back to the same f32 through f64.
        DType::Float => out.extend_from_slice(&(float(leaf)? as f32).to_le_bytes()),
        DType::Double => out.extend_from_slice(&float(leaf)?.to_le_bytes()),
        DType::Bool => out.push(u8::from(
            leaf.as_bool()
                .ok_or_else(|| format!("{leaf} is not a boolean"))?,
        )),
    }
    Ok(())
}

/// Where one entry of a dump comes from.
pub enum DumpSource {
    /// A data file on disk.
    DataFile(std::path::PathBuf),
    /// A meta file on disk.
    MetaFile(std::path::PathBuf),
    /// A data file's bytes from a stream (standard input, say).
    Data(Box<dyn std::io::Read>),
}

/// One entry of a dump: a file name and its content.
pub struct DumpEntry {
    /// The key of the entry in the dump object: the file name.
    pub name: String,
    /// The content.
    pub source: DumpSource,
}

/// The entries of every file of these datasets: each data file, then its meta, in index order.
pub fn dump_entries(datasets: &[crate::Dataset]) -> Vec<DumpEntry> {
    let mut entries = Vec::new();
    for dataset in datasets {
        for file in &dataset.files {
            if let Some(data) = &file.data {
                entries.push(DumpEntry {
                    name: dataset.id.data_file_name(file.index),
                    source: DumpSource::DataFile(data.clone()),
                });
            }
            if let Some(meta) = &file.meta {
                entries.push(DumpEntry {
                    name: dataset.id.meta_file_name(file.index),
                    source: DumpSource::MetaFile(meta.clone()),
                });
            }
        }
    }
    entries
}

/// Writes `entries` as one JSON object keyed by file name, streaming record by record: a data file
/// becomes `{"header": [keys], "records": [...]}`, a meta file its six fields. A file that cannot
/// be read whole gets an `"error"` member after what could be read (for a truncated file, every
/// complete record); the errors are also returned, and the JSON stays valid. `indent` spaces per
/// level (`None`: compact). An `Err` is a failure to write the output.
///
/// The result has the form of the shared sample's `writer.decoded.json`.
pub fn write_dump<W: std::io::Write>(
    entries: Vec<DumpEntry>,
    writer: W,
    options: crate::ReadOptions,
    indent: Option<usize>,
) -> std::io::Result<Vec<Error>> {
    let dump = Dump {
        entries: std::cell::RefCell::new(entries.into_iter().map(Some).collect()),
        errors: std::cell::RefCell::new(Vec::new()),
        options,
    };
    let result = match indent {
        None => serde_json::to_writer(writer, &dump),
        Some(n) => {
            let pad = vec![b' '; n];
            let mut ser = serde_json::Serializer::with_formatter(
                writer,
                serde_json::ser::PrettyFormatter::with_indent(&pad),
            );
            dump.serialize(&mut ser)
        }
    };
    result.map_err(|e| match e.io_error_kind() {
        Some(kind) => std::io::Error::new(kind, e.to_string()),
        None => std::io::Error::other(e.to_string()),
    })?;
    Ok(dump.errors.into_inner())
}

struct Dump {
    entries: std::cell::RefCell<Vec<Option<DumpEntry>>>,
    errors: std::cell::RefCell<Vec<Error>>,
    options: crate::ReadOptions,
}

impl Serialize for Dump {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let count = self.entries.borrow().len();
        let mut map = s.serialize_map(Some(count))?;
        for i in 0..count {
            let entry = self.entries.borrow_mut().get_mut(i).and_then(Option::take);
            let Some(DumpEntry { name, source }) = entry else {
                continue;
            };
            match source {
                DumpSource::MetaFile(path) => match crate::read_meta_file(&path) {
                    Ok(meta) => map.serialize_entry(&name, &MetaView(&meta))?,
                    Err(e) => {
                        map.serialize_entry(
                            &name,
                            &serde_json::json!({ "error": e.root().to_string() }),
                        )?;
                        self.errors.borrow_mut().push(e);
                    }
                },
                DumpSource::DataFile(path) => {
                    let opened = crate::FileSource::open(&path)
                        .map_err(Error::from)
                        .map(|f| Box::new(f) as Box<dyn std::io::Read>);
                    map.serialize_entry(&name, &DataDump::new(opened, Some(path), self))?;
                }
                DumpSource::Data(reader) => {
                    map.serialize_entry(&name, &DataDump::new(Ok(reader), None, self))?
                }
            }
        }
        map.end()
    }
}

/// One data file, read while it is serialized.
struct DataDump<'a> {
    reader: std::cell::RefCell<Option<crate::DataReader<Box<dyn std::io::Read>>>>,
    error: std::cell::RefCell<Option<Error>>,
    path: Option<std::path::PathBuf>,
    dump: &'a Dump,
}

impl<'a> DataDump<'a> {
    fn new(
        source: Result<Box<dyn std::io::Read>>,
        path: Option<std::path::PathBuf>,
        dump: &'a Dump,
    ) -> Self {
        let (reader, error) = match source.and_then(|r| crate::DataReader::new(r, dump.options)) {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e)),
        };
        DataDump {
            reader: std::cell::RefCell::new(reader),
            error: std::cell::RefCell::new(error),
            path,
            dump,
        }
    }
}

impl Serialize for DataDump<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Records<'b, 'a>(&'b DataDump<'a>, &'b [String]);
        impl Serialize for Records<'_, '_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(None)?;
                loop {
                    let next = self.0.reader.borrow_mut().as_mut().and_then(Iterator::next);
                    match next {
                        None => break,
                        Some(Ok(record)) => seq.serialize_element(&RecordView {
                            record: &record,
                            keys: self.1,
                        })?,
                        Some(Err(e)) => {
                            *self.0.error.borrow_mut() = Some(e);
                            break;
                        }
                    }
                }
                seq.end()
            }
        }
        let mut map = s.serialize_map(None)?;
        let keys: Vec<String> = self
            .reader
            .borrow()
            .as_ref()
            .map(|r| r.keys().to_vec())
            .unwrap_or_default();
        let has_reader = self.reader.borrow().is_some();
        if has_reader {
            map.serialize_entry("header", &keys)?;
            map.serialize_entry("records", &Records(self, &keys))?;
        }
        if let Some(e) = self.error.borrow_mut().take() {
            map.serialize_entry("error", &e.root().to_string())?;
            let e = match &self.path {
                Some(p) => e.in_file(p),
                None => e,
            };
            self.dump.errors.borrow_mut().push(e);
        }
        map.end()
    }
}

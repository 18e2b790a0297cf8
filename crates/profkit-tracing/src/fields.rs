//! Field values as the layer keeps them, and which fields it keeps.

use std::fmt;

use profkit_xplane::StatValue;
use tracing_core::field::{Field, Visit};

/// A field's value, typed as `tracing` gave it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A signed integer (`i64`, and the smaller signed types).
    I64(i64),
    /// An unsigned integer.
    U64(u64),
    /// A floating-point number.
    F64(f64),
    /// A boolean.
    Bool(bool),
    /// Text: a `&str` field, or any other value formatted (`%value` with `Display`, `?value`
    /// and everything else with `Debug`).
    Str(String),
}

impl Value {
    /// The value as an XSpace stat: numbers as numbers, booleans and text as text.
    pub fn to_stat(&self) -> StatValue {
        match self {
            Value::I64(v) => StatValue::Int64(*v),
            Value::U64(v) => StatValue::Uint64(*v),
            Value::F64(v) => StatValue::Double(*v),
            Value::Bool(v) => StatValue::Str(v.to_string()),
            Value::Str(v) => StatValue::Str(v.clone()),
        }
    }

    /// Bytes the value takes in memory (charged to the recorder's cap).
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of::<Value>()
            + match self {
                Value::Str(s) => s.len(),
                _ => 0,
            }
    }
}

/// Which fields of spans and events become stats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Fields {
    /// Every field (the default).
    #[default]
    All,
    /// None: spans and events are recorded by name and time only (an event's name is still its
    /// message).
    None,
    /// Only the fields of these names (an event's `message`, its text, always names it).
    Only(Vec<String>),
}

impl Fields {
    #[inline]
    pub(crate) fn keeps(&self, name: &str) -> bool {
        match self {
            Fields::All => true,
            Fields::None => false,
            Fields::Only(names) => names.iter().any(|n| n == name),
        }
    }

    pub(crate) fn any(&self) -> bool {
        !matches!(self, Fields::None)
    }
}

/// Collects the kept fields of a span or event.
pub(crate) struct Collect<'a> {
    pub(crate) filter: &'a Fields,
    /// Keep `message` whatever the filter says (an event's text, which names it).
    pub(crate) message: bool,
    pub(crate) values: Vec<(&'static str, Value)>,
}

impl Collect<'_> {
    fn keeps(&self, field: &Field) -> bool {
        self.filter.keeps(field.name()) || (self.message && field.name() == "message")
    }

    fn put(&mut self, field: &Field, value: Value) {
        if self.keeps(field) {
            self.values.push((field.name(), value));
        }
    }
}

impl Visit for Collect<'_> {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::U64(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::F64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::Bool(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if self.keeps(field) {
            self.values
                .push((field.name(), Value::Str(value.to_owned())));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.keeps(field) {
            self.values
                .push((field.name(), Value::Str(format!("{value:?}"))));
        }
    }
}

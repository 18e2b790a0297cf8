//! The answers of the library API ([`crate::api`]) as data: a JSON-like tree built straight from
//! the documents the commands serialize, never from their printed text.
//!
//! `serde_json::Value` would do but for one thing: its numbers stop at 64 bits, and an XSpace's
//! picosecond times since the Unix epoch (`start_ps` of a summary) need 128. Integers here are
//! `i128`; floats that are not finite become `Null`, as `serde_json` writes them.

use serde::ser::{self, Serialize};

/// One value of an answer.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// `null` (also a float that is not finite, and a unit).
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i128),
    /// A finite floating-point number.
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    List(Vec<Value>),
    /// An object, its keys in the order they were written.
    Map(Vec<(String, Value)>),
}

impl Value {
    /// The value under `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key` of an object (replacing it, or appended); nothing for other values.
    pub(crate) fn set(&mut self, key: &str, value: Value) {
        if let Value::Map(entries) = self {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => entries.push((key.to_owned(), value)),
            }
        }
    }
}

/// Why a document could not become a [`Value`] (a number past 128 bits, a map key that is not
/// text: neither happens with the commands' documents).
#[derive(Debug)]
pub struct ValueError(String);

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ValueError {}

impl ser::Error for ValueError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        ValueError(msg.to_string())
    }
}

/// `doc` as a [`Value`].
pub fn to_value<T: Serialize + ?Sized>(doc: &T) -> Result<Value, ValueError> {
    doc.serialize(Serializer)
}

struct Serializer;

/// A list being built (sequences, tuples, and a variant's fields).
pub(crate) struct ListBuilder {
    items: Vec<Value>,
    variant: Option<&'static str>,
}

/// An object being built (maps, structs, and a variant's named fields).
pub(crate) struct MapBuilder {
    entries: Vec<(String, Value)>,
    key: Option<String>,
    variant: Option<&'static str>,
}

fn wrap(variant: Option<&'static str>, value: Value) -> Value {
    match variant {
        Some(name) => Value::Map(vec![(name.to_owned(), value)]),
        None => value,
    }
}

impl ser::Serializer for Serializer {
    type Ok = Value;
    type Error = ValueError;
    type SerializeSeq = ListBuilder;
    type SerializeTuple = ListBuilder;
    type SerializeTupleStruct = ListBuilder;
    type SerializeTupleVariant = ListBuilder;
    type SerializeMap = MapBuilder;
    type SerializeStruct = MapBuilder;
    type SerializeStructVariant = MapBuilder;

    fn serialize_bool(self, v: bool) -> Result<Value, ValueError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, ValueError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, ValueError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, ValueError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, ValueError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, ValueError> {
        Ok(Value::Int(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, ValueError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, ValueError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, ValueError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, ValueError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, ValueError> {
        i128::try_from(v)
            .map(Value::Int)
            .map_err(|_| ValueError(format!("{v} is past the largest whole number kept")))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, ValueError> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<Value, ValueError> {
        Ok(if v.is_finite() {
            Value::Float(v)
        } else {
            Value::Null
        })
    }
    fn serialize_char(self, v: char) -> Result<Value, ValueError> {
        Ok(Value::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, ValueError> {
        Ok(Value::Str(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, ValueError> {
        Ok(Value::List(
            v.iter().map(|b| Value::Int((*b).into())).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Value, ValueError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, ValueError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, ValueError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Value, ValueError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Value, ValueError> {
        Ok(Value::Str(variant.to_owned()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Value, ValueError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, ValueError> {
        Ok(wrap(Some(variant), value.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<ListBuilder, ValueError> {
        Ok(ListBuilder {
            // A length hint from the document, never from input bytes; still bounded.
            items: Vec::with_capacity(len.unwrap_or(0).min(1 << 16)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<ListBuilder, ValueError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<ListBuilder, ValueError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<ListBuilder, ValueError> {
        let mut list = self.serialize_seq(Some(len))?;
        list.variant = Some(variant);
        Ok(list)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<MapBuilder, ValueError> {
        Ok(MapBuilder {
            entries: Vec::new(),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<MapBuilder, ValueError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<MapBuilder, ValueError> {
        let mut map = self.serialize_map(Some(len))?;
        map.variant = Some(variant);
        Ok(map)
    }
}

impl ser::SerializeSeq for ListBuilder {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        self.items.push(value.serialize(Serializer)?);
        Ok(())
    }
    fn end(self) -> Result<Value, ValueError> {
        Ok(wrap(self.variant, Value::List(self.items)))
    }
}

impl ser::SerializeTuple for ListBuilder {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, ValueError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for ListBuilder {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, ValueError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for ListBuilder {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, ValueError> {
        ser::SerializeSeq::end(self)
    }
}

/// A map key as text, as `serde_json` writes keys (numbers and booleans as their text).
fn key_text(key: Value) -> Result<String, ValueError> {
    match key {
        Value::Str(s) => Ok(s),
        Value::Int(i) => Ok(i.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Float(f) => Ok(f.to_string()),
        other => Err(ValueError(format!("a map key must be text, not {other:?}"))),
    }
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ValueError> {
        self.key = Some(key_text(key.serialize(Serializer)?)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueError> {
        let key = self.key.take().unwrap_or_default();
        self.entries.push((key, value.serialize(Serializer)?));
        Ok(())
    }
    fn end(self) -> Result<Value, ValueError> {
        Ok(wrap(self.variant, Value::Map(self.entries)))
    }
}

impl ser::SerializeStruct for MapBuilder {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ValueError> {
        self.entries
            .push((key.to_owned(), value.serialize(Serializer)?));
        Ok(())
    }
    fn end(self) -> Result<Value, ValueError> {
        ser::SerializeMap::end(self)
    }
}

impl ser::SerializeStructVariant for MapBuilder {
    type Ok = Value;
    type Error = ValueError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ValueError> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<Value, ValueError> {
        ser::SerializeMap::end(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_become_values_with_wide_integers_kept() {
        #[derive(serde::Serialize)]
        struct Doc {
            start_ps: i128,
            name: &'static str,
            ratio: f64,
            missing: Option<u8>,
            list: Vec<u32>,
        }
        let doc = Doc {
            start_ps: 1_700_000_000_000_000_000_000,
            name: "x",
            ratio: f64::NAN,
            missing: None,
            list: vec![1, 2],
        };
        let value = to_value(&doc).unwrap();
        assert_eq!(
            value.get("start_ps"),
            Some(&Value::Int(1_700_000_000_000_000_000_000))
        );
        assert_eq!(value.get("ratio"), Some(&Value::Null));
        assert_eq!(
            value.get("list"),
            Some(&Value::List(vec![Value::Int(1), Value::Int(2)]))
        );
        let json = serde_json::json!({"a": [true, 1.5, "b"], "c": null});
        let value = to_value(&json).unwrap();
        assert_eq!(
            value.get("a"),
            Some(&Value::List(vec![
                Value::Bool(true),
                Value::Float(1.5),
                Value::Str("b".into())
            ]))
        );
    }
}

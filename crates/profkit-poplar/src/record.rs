//! The machinery shared by every object of the schema: known keys read into typed fields, unknown
//! keys kept as JSON values, and everything written back with keys in sorted order.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde_json::Value;

/// The keys of an object that this crate does not know, with their values as read. They are
/// written back among the known keys, so that reading then writing a profile loses nothing.
pub type Extra = BTreeMap<String, Value>;

/// The typed fields of an object, filled key by key.
pub(crate) trait FieldSet: Default {
    /// The object built from them.
    type Output;

    /// Reads the value of `key` if it is one of these fields; returns `false` (reading nothing)
    /// if it is not.
    fn accept<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error>;

    /// The object, once every key was read; `extra` holds the unknown keys.
    fn finish<E: de::Error>(self, extra: Extra) -> Result<Self::Output, E>;
}

/// Reads a key into a reused buffer.
pub(crate) struct KeySeed<'a>(pub(crate) &'a mut String);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.clear();
        self.0.push_str(v);
        Ok(())
    }
}

/// Reads the value of an unknown key into `extra`, refusing a key seen before.
pub(crate) fn read_extra<'de, A: MapAccess<'de>>(
    key: &str,
    map: &mut A,
    extra: &mut Extra,
) -> Result<(), A::Error> {
    if extra.contains_key(key) {
        return Err(de::Error::custom(format!("duplicate key `{key}`")));
    }
    let value: Value = map.next_value()?;
    extra.insert(key.to_owned(), value);
    Ok(())
}

/// Reads an object with the fields of `F`.
pub(crate) struct RecordVisitor<F> {
    expecting: &'static str,
    fields: PhantomData<F>,
}

impl<F> RecordVisitor<F> {
    pub(crate) fn new(expecting: &'static str) -> Self {
        RecordVisitor {
            expecting,
            fields: PhantomData,
        }
    }
}

impl<'de, F: FieldSet> Visitor<'de> for RecordVisitor<F> {
    type Value = F::Output;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<F::Output, A::Error> {
        let mut fields = F::default();
        let mut extra = Extra::new();
        let mut key = String::new();
        while map.next_key_seed(KeySeed(&mut key))?.is_some() {
            if !fields.accept(&key, &mut map)? {
                read_extra(&key, &mut map, &mut extra)?;
            }
        }
        fields.finish(extra)
    }
}

/// Writes the entries of an object in sorted key order: the typed fields present (`fields`, each
/// written by `write_field`), an optional tag such as `("type", "Sequence")`, and the unknown keys
/// (those equal to a typed key or the tag are left out).
pub(crate) fn write_sorted<M: SerializeMap>(
    map: &mut M,
    fields: &[&'static str],
    tag: Option<(&'static str, &str)>,
    extra: &Extra,
    mut write_field: impl FnMut(&mut M, &str) -> Result<(), M::Error>,
) -> Result<(), M::Error> {
    enum Entry<'a> {
        Field(&'a str),
        Tag(&'a str, &'a str),
        Extra(&'a str, &'a Value),
    }
    fn key<'a>(e: &Entry<'a>) -> &'a str {
        match *e {
            Entry::Field(k) | Entry::Tag(k, _) | Entry::Extra(k, _) => k,
        }
    }
    let mut entries: Vec<Entry<'_>> = fields.iter().map(|&k| Entry::Field(k)).collect();
    if let Some((k, v)) = tag {
        entries.push(Entry::Tag(k, v));
    }
    for (k, v) in extra {
        let shadowed = fields.contains(&k.as_str()) || tag.is_some_and(|(t, _)| t == k);
        if !shadowed {
            entries.push(Entry::Extra(k, v));
        }
    }
    entries.sort_by(|a, b| key(a).cmp(key(b)));
    for entry in entries {
        match entry {
            Entry::Field(k) => write_field(map, k)?,
            Entry::Tag(k, v) => map.serialize_entry(k, v)?,
            Entry::Extra(k, v) => map.serialize_entry(k, v)?,
        }
    }
    Ok(())
}

/// Puts a typed value back among the unknown keys (when a tag does not have that field).
pub(crate) fn keep<T: serde::Serialize>(extra: &mut Extra, key: &str, value: Option<T>) {
    if let Some(value) = value {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        extra.insert(key.to_owned(), value);
    }
}

/// Defines an object of the schema: a struct with one public field per known key (required
/// fields as `T`, optional ones as `Option<T>`) and `extra` for the unknown keys, its field set,
/// and serde implementations that read through the lenient number types (`as Int`) and write
/// the keys, known and unknown, in sorted order.
macro_rules! record {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident / $fields:ident {
            $(
                $(#[$fmeta:meta])*
                $key:literal => $field:ident : $kind:ident $ty:ty $(as $via:ty)?,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq)]
        $vis struct $name {
            $(
                $(#[$fmeta])*
                pub $field: record!(@ty $kind $ty),
            )*
            /// Keys this crate does not know, with their values, written back in place.
            pub extra: $crate::record::Extra,
        }

        #[derive(Default)]
        #[allow(dead_code, reason = "a field set of a record without fields is empty")]
        pub(crate) struct $fields {
            $( $field: Option<$ty>, )*
        }

        impl $crate::record::FieldSet for $fields {
            type Output = $name;

            #[allow(unused_variables, reason = "a record without fields reads nothing")]
            fn accept<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<bool, A::Error> {
                match key {
                    $(
                        $key => {
                            if self.$field.is_some() {
                                return Err(serde::de::Error::duplicate_field($key));
                            }
                            self.$field = record!(@read $kind map, record!(@via $ty $(, $via)?));
                            Ok(true)
                        }
                    )*
                    _ => Ok(false),
                }
            }

            fn finish<E: serde::de::Error>(
                self,
                extra: $crate::record::Extra,
            ) -> Result<$name, E> {
                Ok($name {
                    $( $field: record!(@take $kind self.$field, $key), )*
                    extra,
                })
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_map($crate::record::RecordVisitor::<$fields>::new(
                    concat!("an object (", stringify!($name), ")"),
                ))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(None)?;
                self.serialize_entries(&mut map, None)?;
                map.end()
            }
        }

        impl $name {
            /// Writes the entries of this object, with `tag` (a key and a value) among them.
            #[allow(dead_code, reason = "only the bodies of tagged unions write a tag")]
            pub(crate) fn serialize_entries<M: serde::ser::SerializeMap>(
                &self,
                map: &mut M,
                tag: Option<(&'static str, &str)>,
            ) -> Result<(), M::Error> {
                #[allow(unused_mut, reason = "a record without fields has no keys")]
                let mut present: Vec<&'static str> = Vec::new();
                $( if record!(@present $kind self.$field) { present.push($key); } )*
                $crate::record::write_sorted(map, &present, tag, &self.extra, |map, key| {
                    #[allow(clippy::match_single_binding, reason = "generated")]
                    match key {
                        $( $key => record!(@write $kind map, $key, &self.$field), )*
                        _ => Ok(()),
                    }
                })
            }
        }
    };
    (@ty req $ty:ty) => { $ty };
    (@ty opt $ty:ty) => { Option<$ty> };
    (@via $ty:ty) => { $ty };
    (@via $ty:ty, $via:ty) => { $via };
    (@read req $map:ident, $via:ty) => {
        Some(<$via as Into<_>>::into($map.next_value::<$via>()?))
    };
    (@read opt $map:ident, $via:ty) => {
        $map.next_value::<Option<$via>>()?.map(Into::into)
    };
    (@take req $value:expr, $key:literal) => {
        $value.ok_or_else(|| E::missing_field($key))?
    };
    (@take opt $value:expr, $key:literal) => { $value };
    (@present req $value:expr) => { true };
    (@present opt $value:expr) => { $value.is_some() };
    (@write req $map:ident, $key:literal, $value:expr) => { $map.serialize_entry($key, $value) };
    (@write opt $map:ident, $key:literal, $value:expr) => {
        match $value {
            Some(v) => $map.serialize_entry($key, v),
            None => Ok(()),
        }
    };
}

pub(crate) use record;

/// A string-valued enumeration of the format (`TargetType`, `SyncType`): known names as
/// variants, any other kept as `Other`.
macro_rules! names {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A name this crate does not know, kept as written.
            Other(String),
        }

        impl $name {
            /// The name as written in the file.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $text, )*
                    $name::Other(s) => s,
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $( $text => $name::$variant, )*
                    other => $name::Other(other.to_owned()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Ok($name::from(s.as_str()))
            }
        }
    };
}

pub(crate) use names;

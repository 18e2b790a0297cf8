//! The values of an event's members as serde's visitors read them: text, ids, times and args
//! (interned as they are read, containers as their compact JSON text).

use std::fmt;

use profkit_json::RAW_NUMBER_TOKEN;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::arg::{Arg, Id, KeyArg};
use crate::intern::Interner;
use crate::time::{micros_to_ps, plain_micros_to_ps};
use crate::trace::Trace;

/// A string, or the text of any other scalar (numeric names and ids), or the compact JSON of a
/// container.
pub(crate) struct Text;

seed!(Text => String, deserialize_newtype_struct, RAW_NUMBER_TOKEN);

impl<'de> Visitor<'de> for Text {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<String, E> {
        Ok(v)
    }
    fn visit_bytes<E>(self, v: &[u8]) -> std::result::Result<String, E> {
        Ok(String::from_utf8_lossy(v).into_owned())
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_unit<E>(self) -> std::result::Result<String, E> {
        Ok(String::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<String, A::Error> {
        let value: serde_json::Value =
            de::Deserialize::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(value.to_string())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<String, A::Error> {
        let value: serde_json::Value =
            de::Deserialize::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(value.to_string())
    }
}

/// A pid or tid written as a number that is not an integer, as text: the shortest form that
/// reads back as the same double (`1.5`, `1.8446744073709552e19`), not every digit of its value.
pub(crate) fn float_id(v: f64) -> String {
    format!("{v:?}")
}

/// A pid or tid.
pub(crate) struct IdSeed;

// Integers take the reader's fast path; a fraction keeps its text through `visit_f64`.
seed!(IdSeed => Id, deserialize_any);

impl<'de> Visitor<'de> for IdSeed {
    type Value = Id;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a process or thread id")
    }
    fn visit_bytes<E>(self, v: &[u8]) -> std::result::Result<Id, E> {
        let text = String::from_utf8_lossy(v);
        Ok(text
            .parse::<i64>()
            .map_or_else(|_| Id::Text(text.into()), Id::Int))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Id, E> {
        Ok(i64::try_from(v).map_or_else(|_| Id::Text(v.to_string().into()), Id::Int))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Id, E> {
        Ok(Id::Int(v))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Id, E> {
        Ok(Id::Text(float_id(v).into()))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Id, E> {
        Ok(Id::Text(v.into()))
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Id, E> {
        Ok(Id::Text(v.to_string().into()))
    }
    fn visit_unit<E>(self) -> std::result::Result<Id, E> {
        Ok(Id::Int(0))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Id, A::Error> {
        Text.visit_seq(seq).map(|s| Id::Text(s.into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Id, A::Error> {
        Text.visit_map(map).map(|s| Id::Text(s.into()))
    }
}

/// A time in microseconds (a number, or a string holding one) as picoseconds, with its decimals.
pub(crate) struct TimeSeed;

seed!(TimeSeed => Option<(i128, u32)>, deserialize_newtype_struct, RAW_NUMBER_TOKEN);

impl<'de> Visitor<'de> for TimeSeed {
    type Value = Option<(i128, u32)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number of microseconds")
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<Self::Value, E> {
        if let Some(found) = plain_micros_to_ps(v) {
            return Ok(Some(found));
        }
        let text = std::str::from_utf8(v).map_err(|_| E::custom("invalid number"))?;
        micros_to_ps(text)
            .map(Some)
            .ok_or_else(|| E::custom("the number is out of range"))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
        micros_to_ps(v.trim())
            .map(Some)
            .ok_or_else(|| E::custom("expected a number of microseconds"))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
        Ok(Some((i128::from(v) * 1_000_000, 0)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Self::Value, E> {
        Ok(Some((i128::from(v) * 1_000_000, 0)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Self::Value, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Err(E::custom("expected a number of microseconds"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> std::result::Result<Self::Value, A::Error> {
        Err(de::Error::custom("expected a number of microseconds"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> std::result::Result<Self::Value, A::Error> {
        Err(de::Error::custom("expected a number of microseconds"))
    }
}

/// The args of an event, into the raw event's list with interned keys and string values.
pub(crate) struct ArgsSeed<'t> {
    pub(crate) trace: &'t mut Trace,
}

seed!(ArgsSeed<'_> => (), deserialize_any);

impl<'de> Visitor<'de> for ArgsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of args")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let trace = self.trace;
        let mut position = 0;
        while let Some(key) = map.next_key_seed(KeySeed {
            strings: &mut trace.strings,
            // Events of a kind write their args in the same order: the key at this position in
            // the last event's args is the likely one, checked before any hashing.
            likely: trace.last_keys.get(position).copied(),
        })? {
            match trace.last_keys.get_mut(position) {
                Some(slot) => *slot = key,
                None => trace.last_keys.push(key),
            }
            position += 1;
            let value = map.next_value_seed(ArgSeed {
                strings: &mut trace.strings,
            })?;
            trace.raw.args.push(KeyArg::new(key, value));
        }
        Ok(())
    }
    // Args that are not an object carry nothing an XSpace keeps.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        Ok(())
    }
}

pub(crate) struct KeySeed<'s> {
    pub(crate) strings: &'s mut Interner,
    pub(crate) likely: Option<u32>,
}

// As bytes: profkit-json's reader checked the key for UTF-8 once already.
seed!(KeySeed<'_> => u32, deserialize_bytes);

impl Visitor<'_> for KeySeed<'_> {
    type Value = u32;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<u32, E> {
        self.visit_bytes(v.as_bytes())
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<u32, E> {
        if let Some(id) = self
            .likely
            .filter(|&id| self.strings.get(id).as_bytes() == v)
        {
            // As `id` would: the string is asked for again.
            if let Some(r) = self.strings.repeated.get_mut(id as usize) {
                *r = true;
            }
            return Ok(id);
        }
        self.strings
            .id_bytes(v)
            .ok_or_else(|| E::custom("invalid UTF-8 in a key"))
    }
}

pub(crate) struct ArgSeed<'s> {
    pub(crate) strings: &'s mut Interner,
}

// Strings come as bytes, looked up before they are checked for UTF-8 (profkit-json's
// reader hands any other value over as `deserialize_any` does).
seed!(ArgSeed<'_> => Arg, deserialize_bytes);

impl<'de> Visitor<'de> for ArgSeed<'_> {
    type Value = Arg;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an arg value")
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Arg, E> {
        Ok(i64::try_from(v).map_or(Arg::Uint(v), Arg::Int))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Arg, E> {
        Ok(Arg::Int(v))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Arg, E> {
        Ok(Arg::Double(v))
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Arg, E> {
        Ok(Arg::Int(i64::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Arg, E> {
        Ok(Arg::Str(self.strings.id(v)))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<Arg, E> {
        match self.strings.id_bytes(v) {
            Some(id) => Ok(Arg::Str(id)),
            None => Err(E::custom("invalid UTF-8 in a string")),
        }
    }
    fn visit_unit<E>(self) -> std::result::Result<Arg, E> {
        Ok(Arg::Str(self.strings.id("null")))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Arg, A::Error> {
        // Compact JSON text written straight into a reused buffer (Kineto's kernels have two
        // small arrays each: no tree is built for them).
        let mut buf = std::mem::take(&mut self.strings.scratch);
        buf.clear();
        let result = Compact { out: &mut buf }.visit_seq(seq);
        let id = self.strings.id(std::str::from_utf8(&buf).unwrap_or(""));
        self.strings.scratch = buf;
        result.map(|()| Arg::Str(id))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Arg, A::Error> {
        let mut buf = std::mem::take(&mut self.strings.scratch);
        buf.clear();
        let result = Compact { out: &mut buf }.visit_map(map);
        let id = self.strings.id(std::str::from_utf8(&buf).unwrap_or(""));
        self.strings.scratch = buf;
        result.map(|()| Arg::Str(id))
    }
}

/// Writes the value it reads as compact JSON (keys in the order written).
pub(crate) struct Compact<'b> {
    pub(crate) out: &'b mut Vec<u8>,
}

impl Compact<'_> {
    pub(crate) fn json<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        // Writing to a Vec cannot fail; a value serde_json cannot write (none here) is `null`.
        if serde_json::to_writer(&mut *self.out, value).is_err() {
            self.out.extend_from_slice(b"null");
        }
    }
}

seed!(Compact<'_> => (), deserialize_any);

impl<'de> Visitor<'de> for Compact<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(mut self, v: bool) -> std::result::Result<(), E> {
        self.json(&v);
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<(), E> {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<(), E> {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
    fn visit_f64<E>(mut self, v: f64) -> std::result::Result<(), E> {
        self.json(&v);
        Ok(())
    }
    fn visit_str<E>(mut self, v: &str) -> std::result::Result<(), E> {
        self.json(v);
        Ok(())
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        self.out.push(b'[');
        let mut first = true;
        loop {
            let at = self.out.len();
            if !first {
                self.out.push(b',');
            }
            if seq
                .next_element_seed(Compact {
                    out: &mut *self.out,
                })?
                .is_none()
            {
                self.out.truncate(at);
                break;
            }
            first = false;
        }
        self.out.push(b']');
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        self.out.push(b'{');
        let mut first = true;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if !first {
                self.out.push(b',');
            }
            first = false;
            Compact {
                out: &mut *self.out,
            }
            .json(key.as_ref());
            self.out.push(b':');
            map.next_value_seed(Compact {
                out: &mut *self.out,
            })?;
        }
        self.out.push(b'}');
        Ok(())
    }
}

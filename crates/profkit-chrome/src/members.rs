//! The members of one event (`ph`, `name`, `cat`, `pid`, `tid`, `ts`, `dur`, `id`, `id2`, `scope`,
//! `bp`, `bind_id`, `flow_in`, `flow_out`, `args`) read through serde's visitors.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::arg::Arg;
use crate::seeds::{ArgSeed, ArgsSeed, IdSeed, Text, TimeSeed};
use crate::trace::Trace;

/// The members of one event, through serde's visitors.
pub(crate) struct EventMembers<'t> {
    pub(crate) trace: &'t RefCell<Trace>,
}

#[derive(Clone, Copy)]
pub(crate) enum Field {
    Ph,
    Name,
    Cat,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Id2,
    Scope,
    Bp,
    BindId,
    FlowIn,
    FlowOut,
    Args,
    Other,
}

impl Field {
    /// The key of a known member, `None` for the others (which are ignored, duplicates too).
    pub(crate) fn key(&self) -> Option<&'static str> {
        Some(match self {
            Field::Ph => "ph",
            Field::Name => "name",
            Field::Cat => "cat",
            Field::Pid => "pid",
            Field::Tid => "tid",
            Field::Ts => "ts",
            Field::Dur => "dur",
            Field::Id => "id",
            Field::Id2 => "id2",
            Field::Scope => "scope",
            Field::Bp => "bp",
            Field::BindId => "bind_id",
            Field::FlowIn => "flow_in",
            Field::FlowOut => "flow_out",
            Field::Args => "args",
            Field::Other => return None,
        })
    }
}

impl<'de> de::Deserialize<'de> for Field {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Field, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Field, E> {
                self.visit_bytes(v.as_bytes())
            }
            // profkit-json's reader hands identifiers over as bytes (already checked for UTF-8).
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<Field, E> {
                Ok(field_of(v))
            }
        }
        d.deserialize_identifier(V)
    }
}

impl<'de> Visitor<'de> for EventMembers<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event (an object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let mut guard = self.trace.borrow_mut();
        let trace = &mut *guard;
        trace.raw.clear();
        while let Some(field) = map.next_key::<Field>()? {
            trace.raw.member(field);
            match field {
                Field::Ph => match map.next_value_seed(PhaseSeed)? {
                    Some(ph) => trace.raw.ph = Some(ph),
                    None => trace.raw.ph_not_string = true,
                },
                Field::Name => {
                    // Interned as it is read (a name that is not a string, as its text).
                    let arg = map.next_value_seed(ArgSeed {
                        strings: &mut trace.strings,
                    })?;
                    trace.raw.name = Some(match arg {
                        Arg::Str(id) => id,
                        Arg::Int(i) => trace.strings.id(&i.to_string()),
                        Arg::Uint(u) => trace.strings.id(&u.to_string()),
                        Arg::Double(d) => trace.strings.id(&d.to_string()),
                    });
                }
                Field::Cat => {
                    trace.raw.cat = Some(map.next_value_seed(ArgSeed {
                        strings: &mut trace.strings,
                    })?)
                    .and_then(|arg| match arg {
                        Arg::Str(id) => Some(id),
                        _ => None,
                    });
                }
                Field::Pid => trace.raw.pid = Some(map.next_value_seed(IdSeed)?),
                Field::Tid => trace.raw.tid = Some(map.next_value_seed(IdSeed)?),
                Field::Ts => {
                    let t = map.next_value_seed(TimeSeed)?;
                    trace.raw.ts = t.map(|(v, d)| {
                        trace.decimals = trace.decimals.max(d);
                        v
                    });
                }
                Field::Dur => {
                    let t = map.next_value_seed(TimeSeed)?;
                    trace.raw.dur = t.map(|(v, d)| {
                        trace.decimals = trace.decimals.max(d);
                        v
                    });
                }
                Field::Id => trace.raw.id = Some(map.next_value_seed(Text)?),
                Field::Id2 => {
                    // `{"local": "0x1"}` or `{"global": "0x1"}`: the scope is part of the id.
                    let value = map.next_value::<serde_json::Value>()?;
                    let id = match &value {
                        serde_json::Value::Object(m) => m
                            .iter()
                            .next()
                            .map(|(k, v)| {
                                format!(
                                    "{k}:{}",
                                    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
                                )
                            })
                            .unwrap_or_default(),
                        other => other.to_string(),
                    };
                    trace.raw.id = Some(id);
                }
                Field::Scope => trace.raw.scope = Some(map.next_value_seed(Text)?),
                Field::Bp => trace.raw.bp_enclosing = map.next_value_seed(Text)? == "e",
                Field::BindId => trace.raw.bind_id = Some(map.next_value_seed(Text)?),
                Field::FlowIn => trace.raw.flow_in = map.next_value::<serde_json::Value>()? == true,
                Field::FlowOut => {
                    trace.raw.flow_out = map.next_value::<serde_json::Value>()? == true;
                }
                Field::Args => map.next_value_seed(ArgsSeed { trace: &mut *trace })?,
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        trace.take_event()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> std::result::Result<(), A::Error> {
        Err(de::Error::custom("an event must be an object"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
}

/// A phase as written (one or two bytes in every producer; longer ones are kept whole).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Short([u8; 2], u8),
    Long(String),
}

impl Phase {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Phase::Short(bytes, len) => bytes
                .get(..usize::from(*len))
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or(""),
            Phase::Long(s) => s,
        }
    }
}

/// The phase: a string, or `None` for any other value.
pub(crate) struct PhaseSeed;

seed!(PhaseSeed => Option<Phase>, deserialize_any);

impl<'de> Visitor<'de> for PhaseSeed {
    type Value = Option<Phase>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a phase")
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        let bytes = v.as_bytes();
        Ok(Some(match bytes {
            [a] => Phase::Short([*a, 0], 1),
            [a, b] => Phase::Short([*a, *b], 2),
            _ => Phase::Long(v.to_owned()),
        }))
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// The event member a key names (the serde path's field visitor asks it too).
pub(crate) fn field_of(key: &[u8]) -> Field {
    match key {
        b"ph" => Field::Ph,
        b"name" => Field::Name,
        b"cat" => Field::Cat,
        b"pid" => Field::Pid,
        b"tid" => Field::Tid,
        b"ts" => Field::Ts,
        b"dur" => Field::Dur,
        b"id" => Field::Id,
        b"id2" => Field::Id2,
        b"scope" => Field::Scope,
        b"bp" => Field::Bp,
        b"bind_id" => Field::BindId,
        b"flow_in" => Field::FlowIn,
        b"flow_out" => Field::FlowOut,
        b"args" => Field::Args,
        _ => Field::Other,
    }
}

//! The document as serde's visitors read it: an object with `traceEvents` (wherever it sits among
//! the other keys, which are skipped, but for the few kept as the trace's properties), or a bare
//! array of events; each event offered to the fast path first.

use std::cell::RefCell;
use std::fmt;

use profkit_json::RAW_HOOK_TOKEN;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::members::EventMembers;
use crate::trace::Trace;
use crate::warnings::WarningKind;

/// The whole document: an object with `traceEvents`, or a bare array of events.
pub(crate) struct Document<'t> {
    pub(crate) trace: &'t RefCell<Trace>,
}

seed!(Document<'_> => (), deserialize_any);

impl<'de> Visitor<'de> for Document<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Chrome trace: an object with traceEvents or an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<(), A::Error> {
        Events { trace: self.trace }.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let trace = self.trace;
        let mut seen_events = false;
        while let Some(key) = map.next_key::<TopKey>()? {
            match key {
                TopKey::TraceEvents => {
                    if seen_events {
                        // Readers that keep the last value of a key would see only these.
                        trace.borrow_mut().warnings.push(WarningKind::DuplicateKey, || {
                            "the trace has the key \"traceEvents\" more than once; the events of every one are read".to_owned()
                        });
                    }
                    seen_events = true;
                    map.next_value_seed(Events { trace })?;
                }
                TopKey::SpanIndex => {
                    trace.borrow_mut().paddle = true;
                    map.next_value::<IgnoredAny>()?;
                }
                TopKey::SchemaVersion => {
                    let value = map.next_value::<serde_json::Value>()?;
                    trace.borrow_mut().paddle |= value.is_string();
                }
                TopKey::DeviceProperties => {
                    trace.borrow_mut().kineto = true;
                    let value = map.next_value::<serde_json::Value>()?;
                    if let serde_json::Value::Array(items) = value {
                        trace.borrow_mut().device_properties = items
                            .into_iter()
                            .filter_map(|v| match v {
                                serde_json::Value::Object(m) => Some(m),
                                _ => None,
                            })
                            .collect();
                    }
                }
                TopKey::DistributedInfo => {
                    if let serde_json::Value::Object(m) = map.next_value::<serde_json::Value>()? {
                        trace.borrow_mut().distributed = m.into_iter().collect();
                    }
                }
                TopKey::DisplayTimeUnit => {
                    if let serde_json::Value::String(s) = map.next_value::<serde_json::Value>()? {
                        trace.borrow_mut().display_time_unit = Some(s);
                    }
                }
                TopKey::StackFrames | TopKey::Samples => {
                    let skipped = map.next_value::<Counted>()?.0;
                    if skipped > 0 {
                        let what = match key {
                            TopKey::Samples => "samples",
                            _ => "stackFrames",
                        };
                        *trace
                            .borrow_mut()
                            .skipped
                            .entry(what.to_owned())
                            .or_default() += skipped;
                    }
                }
                TopKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !seen_events {
            return Err(de::Error::custom(
                "not a Chrome trace: the object has no traceEvents",
            ));
        }
        Ok(())
    }
}

/// How many members or elements a value has (its contents skipped).
pub(crate) struct Counted(u64);

impl<'de> de::Deserialize<'de> for Counted {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Counted, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Counted;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object or an array")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Counted, A::Error> {
                let mut n = 0;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Counted(n))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Counted, A::Error> {
                let mut n = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Counted(n))
            }
            fn visit_unit<E>(self) -> std::result::Result<Counted, E> {
                Ok(Counted(0))
            }
        }
        d.deserialize_any(V)
    }
}

pub(crate) enum TopKey {
    TraceEvents,
    SpanIndex,
    SchemaVersion,
    DeviceProperties,
    DistributedInfo,
    DisplayTimeUnit,
    StackFrames,
    Samples,
    Other,
}

impl<'de> de::Deserialize<'de> for TopKey {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<TopKey, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TopKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<TopKey, E> {
                Ok(match v {
                    "traceEvents" => TopKey::TraceEvents,
                    "span_index" => TopKey::SpanIndex,
                    "schemaVersion" => TopKey::SchemaVersion,
                    "deviceProperties" => TopKey::DeviceProperties,
                    "distributedInfo" => TopKey::DistributedInfo,
                    "displayTimeUnit" => TopKey::DisplayTimeUnit,
                    "stackFrames" => TopKey::StackFrames,
                    "samples" => TopKey::Samples,
                    _ => TopKey::Other,
                })
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<TopKey, E> {
                self.visit_str(std::str::from_utf8(v).unwrap_or_default())
            }
        }
        d.deserialize_identifier(V)
    }
}

/// The event array, taken one event at a time.
pub(crate) struct Events<'t> {
    pub(crate) trace: &'t RefCell<Trace>,
}

seed!(Events<'_> => (), deserialize_seq);

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        self.trace.borrow_mut().index = 0;
        while seq
            .next_element_seed(EventSeed { trace: self.trace })?
            .is_some()
        {
            self.trace.borrow_mut().index += 1;
        }
        Ok(())
    }
}

/// One event: offered to the fast path first (see [`fast`]), read by [`EventMembers`] when it
/// declines.
pub(crate) struct EventSeed<'t> {
    pub(crate) trace: &'t RefCell<Trace>,
}

seed!(EventSeed<'_> => (), deserialize_newtype_struct, RAW_HOOK_TOKEN);

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event (an object)")
    }

    /// The fast path read the event.
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_newtype_struct<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<(), D::Error> {
        d.deserialize_map(EventMembers { trace: self.trace })
    }
}

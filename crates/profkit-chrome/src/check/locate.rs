//! The events of `validate`'s problems found again in the trace's text: for each event of the
//! XSpace a problem is about, the `traceEvents` element of its name whose `ts` (and `dur`, for a
//! complete event) give its time, read with a second pass over the text that keeps only a few
//! fields of each event. The import keeps the session start to the nanosecond below the exact
//! one, so a start matches within a nanosecond; of two events of one name and time (on two
//! threads), the problems take them in file order.

use std::collections::HashMap;

use profkit_json::{RAW_NUMBER_TOKEN, ReadOptions, Reader};
use profkit_xplane::constants::TASK_ENV_PLANE_NAME;
use profkit_xplane::proto::{x_event, x_stat};
use profkit_xplane::validate::ProblemKind;
use profkit_xplane::{Problem, XSpace};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{event_at, event_path, overlap_parts, overlap_ps};
use profkit_xplane::constants::stats;

use crate::time::micros_to_ps;

/// An event of the XSpace as it was found in the trace's text.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Source {
    /// Its index in `traceEvents`.
    index: usize,
    /// Its name, phase, `ts` and `dur`, as written.
    name: String,
    ph: String,
    ts: String,
    dur: Option<String>,
}

/// The events of the problems found again in the trace: by event path.
#[derive(Default)]
pub(super) struct Places {
    found: HashMap<String, Source>,
}

/// An event looked for: its name, its time in the trace's clock (picoseconds, to within the
/// nanosecond the session start is kept to) and its duration.
struct Wanted {
    path: String,
    name: String,
    start_ps: i128,
    dur_ps: i128,
}

impl Places {
    /// Finds the events of `problems` (and the events they overlap) in `text`.
    pub(super) fn find(space: &XSpace, problems: &[Problem], text: &[u8]) -> Places {
        let mut places = Places::default();
        if problems.is_empty() {
            return places;
        }
        let Some(base_ps) = session_start_ps(space) else {
            return places;
        };
        let mut wanted: Vec<Wanted> = Vec::new();
        let paths = problems
            .iter()
            .flat_map(|p| [Some(p.path.as_str()), p.other.as_deref()])
            .flatten()
            .filter_map(event_path);
        let mut seen = std::collections::HashSet::new();
        for path in paths {
            if !seen.insert(path) {
                continue;
            }
            let Some((plane, line, event)) = event_at(space, path) else {
                continue;
            };
            let Some(x_event::Data::OffsetPs(offset)) = event.data else {
                continue;
            };
            let name = plane
                .event_metadata
                .get(&event.metadata_id)
                .map_or("", |m| m.name.as_str());
            wanted.push(Wanted {
                path: path.to_owned(),
                name: name.to_owned(),
                start_ps: base_ps + i128::from(line.timestamp_ns) * 1000 + i128::from(offset),
                dur_ps: i128::from(event.duration_ps),
            });
        }
        // By name, each list by start.
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, w) in wanted.iter().enumerate() {
            by_name.entry(w.name.as_str()).or_default().push(i);
        }
        for list in by_name.values_mut() {
            list.sort_by_key(|&i| wanted.get(i).map_or(0, |w| w.start_ps));
        }
        let mut matched: Vec<Option<Source>> = vec![None; wanted.len()];
        let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
        let mut finder = Finder {
            wanted: &wanted,
            by_name: &by_name,
            matched: &mut matched,
        };
        // A text that stops reading part way (it read once already, so it does not) leaves what
        // was found so far.
        let _ = Reader::new(text, ReadOptions::default()).read_document_seed(Document {
            finder: &mut finder,
        });
        for (w, m) in wanted.iter().zip(matched) {
            if let Some(m) = m {
                places.found.insert(w.path.clone(), m);
            }
        }
        places
    }

    /// A problem's message in the trace's terms where its events were found, else the
    /// validator's.
    pub(super) fn describe(&self, space: &XSpace, p: &Problem) -> String {
        let bare = || format!("{}: {}", p.path, overlap_parts(&p.message).0);
        let Some(path) = event_path(&p.path) else {
            return bare();
        };
        let Some(source) = self.found.get(path) else {
            return bare();
        };
        let here = source.describe();
        if p.kind == ProblemKind::PartialOverlap {
            let other = p.other.as_deref().and_then(|o| match self.found.get(o) {
                Some(s) => Some(s.describe()),
                None => event_at(space, o).map(|(plane, _, e)| {
                    let name = plane
                        .event_metadata
                        .get(&e.metadata_id)
                        .map_or("", |m| m.name.as_str());
                    format!("{o} {name:?}")
                }),
            });
            let by = overlap_ps(&p.message)
                .map(|ps| format!(" by {}", micros(ps)))
                .unwrap_or_default();
            if let Some(other) = other {
                return format!(
                    "{here} partially overlaps {other}{by} (in the XSpace: {}, {})",
                    p.path,
                    p.other.as_deref().unwrap_or("")
                );
            }
        }
        let message = overlap_parts(&p.message).0;
        format!("{here}: {message} (in the XSpace: {})", p.path)
    }
}

impl Source {
    fn describe(&self) -> String {
        let times = match &self.dur {
            Some(dur) => format!("ts {}, dur {dur}", self.ts),
            None => format!("ph {:?}, ts {}", self.ph, self.ts),
        };
        format!("traceEvents[{}] {:?} ({times})", self.index, self.name)
    }
}

/// Picoseconds as microseconds, with as many decimals as they need.
fn micros(ps: i128) -> String {
    let sign = if ps < 0 { "-" } else { "" };
    let ps = ps.unsigned_abs();
    let (whole, frac) = (ps / 1_000_000, ps % 1_000_000);
    if frac == 0 {
        return format!("{sign}{whole} us");
    }
    let frac = format!("{frac:06}");
    format!("{sign}{whole}.{} us", frac.trim_end_matches('0'))
}

/// The session start the import kept (the `profile_start_time` of the `Task Environment`
/// plane), in picoseconds of the trace's clock.
fn session_start_ps(space: &XSpace) -> Option<i128> {
    let env = space
        .planes
        .iter()
        .find(|p| p.name == TASK_ENV_PLANE_NAME)?;
    let id = env
        .stat_metadata
        .values()
        .find(|m| m.name == stats::PROFILE_START_TIME)?
        .id;
    let stat = env.stats.iter().find(|s| s.metadata_id == id)?;
    let ns = match stat.value {
        Some(x_stat::Value::Uint64Value(v)) => i128::from(v),
        Some(x_stat::Value::Int64Value(v)) => i128::from(v),
        _ => return None,
    };
    Some(ns * 1000)
}

/// Matches the events of the text with those wanted.
struct Finder<'w> {
    wanted: &'w [Wanted],
    by_name: &'w HashMap<&'w str, Vec<usize>>,
    matched: &'w mut Vec<Option<Source>>,
}

impl Finder<'_> {
    /// An event of the text: the first wanted event of its name not yet found whose start (and
    /// duration, for a complete event) it has. The session start is kept to the nanosecond
    /// below the exact one, so a start matches within a nanosecond after it.
    fn event(&mut self, index: usize, fields: EventFields) {
        let (Some(name), Some(ts)) = (fields.name, fields.ts) else {
            return;
        };
        let Some(list) = self.by_name.get(name.as_str()) else {
            return;
        };
        let Some((ts_ps, _)) = micros_to_ps(&ts) else {
            return;
        };
        let dur_ps = fields
            .dur
            .as_deref()
            .and_then(micros_to_ps)
            .map(|(d, _)| d.max(0));
        let ph = fields.ph.unwrap_or_default();
        let first = list.partition_point(|&i| {
            self.wanted
                .get(i)
                .is_some_and(|w| w.start_ps + 1000 < ts_ps)
        });
        for &i in list.get(first..).unwrap_or_default() {
            let Some(w) = self.wanted.get(i) else {
                continue;
            };
            if w.start_ps > ts_ps {
                break;
            }
            let taken = self.matched.get(i).is_some_and(Option::is_some);
            let same_dur = match (ph.as_str(), dur_ps) {
                ("X", Some(d)) => d == w.dur_ps,
                ("X", None) => w.dur_ps == 0,
                _ => true,
            };
            if !taken && same_dur {
                if let Some(slot) = self.matched.get_mut(i) {
                    *slot = Some(Source {
                        index,
                        name,
                        ph,
                        ts,
                        dur: fields.dur,
                    });
                }
                return;
            }
        }
    }
}

/// What the finder reads of an event.
#[derive(Default)]
struct EventFields {
    name: Option<String>,
    ph: Option<String>,
    ts: Option<String>,
    dur: Option<String>,
}

/// The document: an object whose `traceEvents` are read, or the bare array of events.
struct Document<'f, 'w> {
    finder: &'f mut Finder<'w>,
}

impl<'de> DeserializeSeed<'de> for Document<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Document<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a Chrome trace")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Events {
            finder: self.finder,
        }
        .visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "traceEvents" {
                map.next_value_seed(Events {
                    finder: &mut *self.finder,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The `traceEvents` array, read one event at a time.
struct Events<'f, 'w> {
    finder: &'f mut Finder<'w>,
}

impl<'de> DeserializeSeed<'de> for Events<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        while let Some(fields) = seq.next_element::<Event>()? {
            if let Some(fields) = fields.0 {
                self.finder.event(index, fields);
            }
            index += 1;
        }
        Ok(())
    }
}

/// One element of `traceEvents`: the fields the finder reads of an object, nothing of anything
/// else.
struct Event(Option<EventFields>);

impl<'de> de::Deserialize<'de> for Event {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Event, D::Error> {
        d.deserialize_any(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a trace event")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut fields = EventFields::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => fields.name = map.next_value::<Text>()?.0,
                "ph" => fields.ph = map.next_value::<Text>()?.0,
                "ts" => fields.ts = map.next_value::<Text>()?.0,
                "dur" => fields.dur = map.next_value::<Text>()?.0,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Event(Some(fields)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Event, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Event(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Event, E> {
        Ok(Event(None))
    }
    fn visit_none<E: de::Error>(self) -> Result<Event, E> {
        Ok(Event(None))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Event, E> {
        Ok(Event(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Event, E> {
        Ok(Event(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Event, E> {
        Ok(Event(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Event, E> {
        Ok(Event(None))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Event, E> {
        Ok(Event(None))
    }
}

/// A string, or a number as written (times keep every digit), as text; anything else `None`.
struct Text(Option<String>);

impl<'de> de::Deserialize<'de> for Text {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        d.deserialize_newtype_struct(RAW_NUMBER_TOKEN, TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string or a number")
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Text, E> {
        // A number as written.
        Ok(Text(std::str::from_utf8(v).ok().map(str::to_owned)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
        Ok(Text(Some(v.to_owned())))
    }
    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<Text, D::Error> {
        // Any other value, skipped.
        <IgnoredAny as de::Deserialize>::deserialize(d)?;
        Ok(Text(None))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
        Ok(Text(Some(v.to_string())))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
        Ok(Text(Some(v.to_string())))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
        Ok(Text(Some(v.to_string())))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Text, E> {
        Ok(Text(None))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Text, E> {
        Ok(Text(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_are_written_with_the_decimals_they_need() {
        assert_eq!(micros(1_000_000), "1 us");
        assert_eq!(micros(70_000), "0.07 us");
        assert_eq!(micros(-1_234_567), "-1.234567 us");
    }
}

//! The metadata of one plane as the import builds it: event and stat metadata by interned string,
//! args every event of a name shares hoisted to its event metadata (as xprof stores kernel
//! details), and strings many events share stored once as `ref_value`s.

use profkit_xplane::proto::{x_event, x_stat};
use profkit_xplane::{PlaneBuilder, StatValue, XEvent, XPlane, XStat};

use crate::arg::{Arg, KeyArg};
use crate::intern::Interner;

/// What an arg of the events of one name is: the same on all of them (then it is a stat of their
/// event metadata, stored once, as xprof stores kernel details), or not.
#[derive(Clone, Copy)]
pub(crate) enum Shared {
    /// The value, how many events have it, and the last of them (by its place in the items).
    Same(Arg, u64, usize),
    Differs,
}

pub(crate) fn same_arg(a: Arg, b: Arg) -> bool {
    match (a, b) {
        (Arg::Double(x), Arg::Double(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// The metadata of one plane: event and stat metadata ids by interned string, and the args the
/// events of a name all share.
pub(crate) struct Metadata {
    /// By name, in the order of their first events, each with the name's keys in a short list
    /// (the events of a name write their args in the same order, so the key is nearly always at
    /// its position).
    pub(crate) by_name: Vec<NameMetadata>,
    /// Where each name is in `by_name`, by interned string (`u32::MAX`: not a name here): an
    /// array rather than a map, since a trace can have as many names as events (Kineto's
    /// `ProfilerStep#<n>`), and the events of such names come in the order of their ids.
    pub(crate) slot: Vec<u32>,
    /// Which strings are stored as `ref_value`s, by id (while counting).
    pub(crate) is_ref: Vec<bool>,
    /// Events counted so far.
    pub(crate) counted: usize,
    /// Strings stored as `ref_value`s.
    pub(crate) refs: Vec<u32>,
    /// Stat metadata ids by interned string (0: none).
    pub(crate) stat_ids: Vec<i64>,
}

/// What the events of one name have.
#[derive(Default)]
pub(crate) struct NameMetadata {
    pub(crate) name: u32,
    pub(crate) events: u64,
    /// Each key an event of the name has, with whether they all share its value.
    pub(crate) keys: Vec<(u32, Shared)>,
    pub(crate) event_id: i64,
    /// The keys of the args the name's events share (stats of their event metadata).
    pub(crate) hoisted: Vec<u32>,
}

impl Metadata {
    pub(crate) fn new(strings: &Interner) -> Metadata {
        Metadata {
            by_name: Vec::new(),
            slot: vec![u32::MAX; strings.strings.len()],
            is_ref: vec![false; strings.strings.len()],
            counted: 0,
            refs: Vec::new(),
            stat_ids: Vec::new(),
        }
    }

    /// Counts one event of the plane with its args (every event, in the order they are written).
    pub(crate) fn count<'a>(
        &mut self,
        name: u32,
        args: impl Iterator<Item = &'a KeyArg>,
        strings: &Interner,
    ) {
        let event = self.counted;
        self.counted += 1;
        let index = match self.slot.get(name as usize) {
            Some(&i) if i != u32::MAX => i as usize,
            _ => {
                let i = self.by_name.len();
                if self.slot.len() <= name as usize {
                    self.slot.resize(name as usize + 1, u32::MAX);
                }
                if let Some(slot) = self.slot.get_mut(name as usize) {
                    *slot = u32::try_from(i).unwrap_or(u32::MAX);
                }
                self.by_name.push(NameMetadata {
                    name,
                    ..NameMetadata::default()
                });
                i
            }
        };
        let Some(NameMetadata { events, keys, .. }) = self.by_name.get_mut(index) else {
            return;
        };
        *events += 1;
        for (position, (key, value)) in args.map(|a| (a.key, a.arg())).enumerate() {
            if let Arg::Str(s) = value {
                if strings.is_repeated(s) {
                    if let Some(seen @ false) = self.is_ref.get_mut(s as usize) {
                        *seen = true;
                        self.refs.push(s);
                    }
                }
            }
            let slot = match keys.get(position) {
                Some((k, _)) if *k == key => Some(position),
                _ => keys.iter().position(|(k, _)| *k == key),
            };
            match slot.and_then(|i| keys.get_mut(i)) {
                Some((_, s)) => {
                    *s = match *s {
                        // An arg an event has twice (two flows ending on it) is its own: once
                        // hoisted, it would be one stat, and the other events would get it.
                        Shared::Same(v, n, last) if last != event && same_arg(v, value) => {
                            Shared::Same(v, n + 1, event)
                        }
                        _ => Shared::Differs,
                    }
                }
                None => keys.push((key, Shared::Same(value, 1, event))),
            }
        }
    }

    /// Decides, once every event is counted, which args the events of a name share: those every
    /// event of the name (two at least) has with that value, once each.
    pub(crate) fn finish(&mut self) {
        self.is_ref = Vec::new();
        for meta in &mut self.by_name {
            for (_, s) in meta.keys.iter_mut() {
                if let Shared::Same(_, n, _) = *s {
                    if meta.events != n || n < 2 {
                        *s = Shared::Differs;
                    }
                }
            }
            meta.keys.sort_unstable_by_key(|(k, _)| *k);
        }
    }

    /// Declares every event and stat metadata the plane needs, and the shared args as stats of
    /// their event metadata. The event metadata are named by [`Metadata::name_events`].
    pub(crate) fn declare(
        &mut self,
        builder: &mut PlaneBuilder<'_>,
        strings: &Interner,
        stat: impl Fn(Arg) -> StatValue,
    ) {
        // Metadata ids in order of the strings' first appearance, so that output is stable.
        // Interned names are distinct strings: each is a new metadata.
        let mut names: Vec<(u32, usize)> = self
            .by_name
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name, i))
            .collect();
        names.sort_unstable();
        let mut keys: Vec<u32> = Vec::new();
        for &(_, i) in &names {
            if let Some(meta) = self.by_name.get_mut(i) {
                meta.event_id = builder.new_event_metadata();
                keys.extend(meta.keys.iter().map(|(k, _)| *k));
            }
        }
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            let id = builder.stat_metadata_id(strings.get(key));
            self.set_stat_id(key, id);
        }
        for &(_, i) in &names {
            let Some(meta) = self.by_name.get_mut(i) else {
                continue;
            };
            for &(key, s) in &meta.keys {
                let Shared::Same(value, _, _) = s else {
                    continue;
                };
                meta.hoisted.push(key);
                if let Some(mut metadata) = builder.event_metadata(meta.event_id) {
                    metadata.add_stat(strings.get(key), stat(value));
                }
            }
        }
        // Strings stored as `ref_value`s are the names of stat metadata.
        let mut refs = std::mem::take(&mut self.refs);
        refs.sort_unstable();
        for s in refs {
            let id = builder.stat_metadata_id(strings.get(s));
            self.set_stat_id(s, id);
        }
    }

    /// Names the event metadata [`Metadata::declare`] made.
    pub(crate) fn name_events(&self, plane: &mut XPlane, strings: &Interner) {
        for meta in &self.by_name {
            if let Some(metadata) = plane.event_metadata.get_mut(&meta.event_id) {
                metadata.name = strings.get(meta.name).to_owned();
            }
        }
    }

    pub(crate) fn set_stat_id(&mut self, key: u32, id: i64) {
        let index = key as usize;
        if self.stat_ids.len() <= index {
            self.stat_ids.resize(index + 1, 0);
        }
        if let Some(slot) = self.stat_ids.get_mut(index) {
            *slot = id;
        }
    }

    pub(crate) fn stat_id(&self, key: u32) -> i64 {
        self.stat_ids.get(key as usize).copied().unwrap_or(0)
    }

    /// One event with the stats that are its own.
    pub(crate) fn event(
        &self,
        name: u32,
        offset_ps: i64,
        duration_ps: i64,
        stats: &[KeyArg],
        flow_stats: &[(usize, KeyArg)],
        strings: &Interner,
    ) -> XEvent {
        let (event_id, hoisted) = self
            .slot
            .get(name as usize)
            .and_then(|&i| self.by_name.get(i as usize))
            .map_or((0, &[][..]), |m| (m.event_id, m.hoisted.as_slice()));
        let all = stats.len() + flow_stats.len();
        let mut own = Vec::with_capacity(all.saturating_sub(hoisted.len()));
        for a in stats.iter().chain(flow_stats.iter().map(|(_, a)| a)) {
            if hoisted.contains(&a.key) {
                continue;
            }
            // Strings many events share are stored once, as the stat metadata named by them
            // (declared beforehand by [`Metadata::declare`]).
            let value = match a.arg() {
                Arg::Str(s) if strings.is_repeated(s) => {
                    x_stat::Value::RefValue(u64::try_from(self.stat_id(s)).unwrap_or(0))
                }
                Arg::Str(s) => x_stat::Value::StrValue(strings.get(s).to_owned()),
                Arg::Int(i) => x_stat::Value::Int64Value(i),
                Arg::Uint(u) => x_stat::Value::Uint64Value(u),
                Arg::Double(d) => x_stat::Value::DoubleValue(d),
            };
            own.push(XStat {
                metadata_id: self.stat_id(a.key),
                value: Some(value),
            });
        }
        XEvent {
            metadata_id: event_id,
            duration_ps,
            stats: own,
            data: Some(x_event::Data::OffsetPs(offset_ps)),
        }
    }
}

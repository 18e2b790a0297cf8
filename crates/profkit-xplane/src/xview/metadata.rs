//! The plane's event and stat metadata, looked up by id without decoding them all.

use std::collections::HashMap;

use profkit_wire::{LEN, VARINT};

use crate::proto::{XEventMetadata, XStatMetadata};
use crate::visitor::{self, StatValueRef};
use crate::wire::Msg;

use super::*;

/// A borrowed view of one `event_metadata` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct XEventMetadataView<'a> {
    pub(super) key: i64,
    pub(super) id: i64,
    pub(super) name: &'a str,
    pub(super) display_name: &'a str,
    pub(super) metadata: &'a [u8],
    pub(super) stats: Vec<XStatView<'a>>,
    pub(super) child_id: Vec<i64>,
}

impl<'a> XEventMetadataView<'a> {
    /// Decodes an entry: its key, and its value (merged, when the entry holds several).
    pub(super) fn decode_entry(body: &'a [u8]) -> Walk<Self> {
        let mut md = XEventMetadataView {
            key: 0,
            id: 0,
            name: "",
            display_name: "",
            metadata: &[],
            stats: Vec::new(),
            child_id: Vec::new(),
        };
        let mut entry = Fields::new(body);
        while !entry.at_end() {
            match entry.tag()? {
                (1, VARINT) => md.key = entry.varint()? as i64,
                (2, LEN) => md.merge(entry.bytes()?)?,
                (number, wire_type) => entry.other(Msg::EventMetadataEntry, number, wire_type)?,
            }
        }
        Ok(md)
    }

    pub(super) fn merge(&mut self, body: &'a [u8]) -> Walk<()> {
        let mut f = Fields::new(body);
        while !f.at_end() {
            match f.tag()? {
                (1, VARINT) => self.id = f.varint()? as i64,
                (2, LEN) => self.name = f.str()?,
                (4, LEN) => self.display_name = f.str()?,
                (3, LEN) => self.metadata = f.bytes()?,
                (5, LEN) => self.stats.push(XStatView::decode(f.bytes()?)?),
                (6, VARINT) => self.child_id.push(f.varint()? as i64),
                (6, LEN) => {
                    let mut packed = Fields::new(f.bytes()?);
                    while !packed.at_end() {
                        self.child_id.push(packed.varint()? as i64);
                    }
                }
                (number, wire_type) => f.other(Msg::EventMetadata, number, wire_type)?,
            }
        }
        Ok(())
    }

    /// The map key.
    pub fn key(&self) -> i64 {
        self.key
    }

    /// `id` (which should equal the key).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// `name`.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// `display_name` when set, else `name`.
    pub fn display_name(&self) -> &'a str {
        visitor::display_or(self.display_name, self.name)
    }

    /// `display_name` as stored.
    pub fn raw_display_name(&self) -> &'a str {
        self.display_name
    }

    /// `metadata`: opaque bytes.
    pub fn metadata(&self) -> &'a [u8] {
        self.metadata
    }

    /// Its stats, in file order.
    pub fn stats(&self) -> &[XStatView<'a>] {
        &self.stats
    }

    /// `child_id`.
    pub fn child_id(&self) -> &[i64] {
        &self.child_id
    }

    pub(super) fn to_owned_metadata(&self, owner: Option<&bytes::Bytes>) -> XEventMetadata {
        XEventMetadata {
            id: self.id,
            name: self.name.to_owned(),
            display_name: self.display_name.to_owned(),
            metadata: share(owner, self.metadata),
            stats: self.stats.iter().map(|s| s.owned_with(owner)).collect(),
            child_id: self.child_id.clone(),
        }
    }
}

/// A borrowed view of one `stat_metadata` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XStatMetadataView<'a> {
    pub(super) key: i64,
    pub(super) id: i64,
    pub(super) name: &'a str,
    pub(super) description: &'a str,
}

impl<'a> XStatMetadataView<'a> {
    pub(super) fn decode_entry(body: &'a [u8]) -> Walk<Self> {
        let mut md = XStatMetadataView {
            key: 0,
            id: 0,
            name: "",
            description: "",
        };
        let mut entry = Fields::new(body);
        while !entry.at_end() {
            match entry.tag()? {
                (1, VARINT) => md.key = entry.varint()? as i64,
                (2, LEN) => {
                    let mut f = Fields::new(entry.bytes()?);
                    while !f.at_end() {
                        match f.tag()? {
                            (1, VARINT) => md.id = f.varint()? as i64,
                            (2, LEN) => md.name = f.str()?,
                            (3, LEN) => md.description = f.str()?,
                            (number, wire_type) => f.other(Msg::StatMetadata, number, wire_type)?,
                        }
                    }
                }
                (number, wire_type) => entry.other(Msg::StatMetadataEntry, number, wire_type)?,
            }
        }
        Ok(md)
    }

    /// The map key.
    pub fn key(&self) -> i64 {
        self.key
    }

    /// `id` (which should equal the key).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// `name`.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// `description`.
    pub fn description(&self) -> &'a str {
        self.description
    }

    pub(super) fn to_owned_metadata(self) -> XStatMetadata {
        XStatMetadata {
            id: self.id,
            name: self.name.to_owned(),
            description: self.description.to_owned(),
        }
    }
}

/// Lookup by id: a table for keys that are small and dense (as writers assign them), a binary
/// search otherwise.
#[derive(Clone, Debug, Default)]
pub(super) struct Lookup {
    /// `slots[key]` is the position + 1 of that key's entry, 0 for none.
    pub(super) slots: Vec<u32>,
}

impl Lookup {
    pub(super) fn new(keys: impl ExactSizeIterator<Item = i64> + Clone) -> Self {
        let count = keys.len();
        let max = keys.clone().max().unwrap_or(-1);
        let min = keys.clone().min().unwrap_or(0);
        let Ok(max) = usize::try_from(max) else {
            return Lookup::default();
        };
        if min < 0
            || max >= count.saturating_mul(4).saturating_add(1024)
            || count > u32::MAX as usize - 1
        {
            return Lookup::default();
        }
        let mut slots = vec![0u32; max + 1];
        for (position, key) in keys.enumerate() {
            if let Some(slot) = usize::try_from(key).ok().and_then(|k| slots.get_mut(k)) {
                *slot = position as u32 + 1;
            }
        }
        Lookup { slots }
    }

    #[inline]
    pub(super) fn find<T>(&self, entries: &[T], key: impl Fn(&T) -> i64, id: i64) -> Option<usize> {
        if !self.slots.is_empty() {
            let slot = usize::try_from(id).ok().and_then(|i| self.slots.get(i))?;
            return slot.checked_sub(1).map(|p| p as usize);
        }
        entries.binary_search_by_key(&id, key).ok()
    }
}

/// The metadata maps of a plane, indexed: entries in key order (the last of a repeated key wins,
/// as when decoding), found by id in constant time for the usual dense ids.
#[derive(Clone, Debug)]
pub struct PlaneMetadata<'a> {
    pub(super) events: Vec<XEventMetadataView<'a>>,
    pub(super) stats: Vec<XStatMetadataView<'a>>,
    pub(super) event_lookup: Lookup,
    pub(super) stat_lookup: Lookup,
    pub(super) stat_names: HashMap<&'a str, i64>,
}

impl<'a> PlaneMetadata<'a> {
    pub(super) fn build(plane: &'a [u8]) -> Walk<Self> {
        let mut events = Vec::new();
        let mut stats = Vec::new();
        let mut f = Fields::new(plane);
        while !f.at_end() {
            let key = f.varint()?;
            if key_byte(key) == T3_LEN {
                f.bytes()?;
                continue;
            }
            match checked_tag(key)? {
                (4, LEN) => events.push(XEventMetadataView::decode_entry(f.bytes()?)?),
                (5, LEN) => stats.push(XStatMetadataView::decode_entry(f.bytes()?)?),
                (number, wire_type) => f.other(Msg::Plane, number, wire_type)?,
            }
        }
        let events = last_of_each_key(events, |md| md.key);
        let stats = last_of_each_key(stats, |md| md.key);
        let mut stat_names = HashMap::with_capacity(stats.len());
        for md in &stats {
            stat_names.entry(md.name).or_insert(md.key);
        }
        Ok(PlaneMetadata {
            event_lookup: Lookup::new(events.iter().map(|md| md.key)),
            stat_lookup: Lookup::new(stats.iter().map(|md| md.key)),
            events,
            stats,
            stat_names,
        })
    }

    /// Every event metadata, in key order.
    pub fn events(&self) -> &[XEventMetadataView<'a>] {
        &self.events
    }

    /// Every stat metadata, in key order.
    pub fn stats(&self) -> &[XStatMetadataView<'a>] {
        &self.stats
    }

    /// The event metadata with key `id`.
    #[inline]
    pub fn event(&self, id: i64) -> Option<&XEventMetadataView<'a>> {
        let position = self.event_lookup.find(&self.events, |md| md.key, id)?;
        self.events.get(position)
    }

    /// The stat metadata with key `id`.
    #[inline]
    pub fn stat(&self, id: i64) -> Option<&XStatMetadataView<'a>> {
        let position = self.stat_lookup.find(&self.stats, |md| md.key, id)?;
        self.stats.get(position)
    }

    /// The name of event metadata `id`; empty when it resolves to nothing (as in TSL).
    #[inline]
    pub fn event_name(&self, id: i64) -> &'a str {
        self.event(id).map_or("", |md| md.name)
    }

    /// The display name of event metadata `id` when set, else its name.
    #[inline]
    pub fn event_display_name(&self, id: i64) -> &'a str {
        self.event(id).map_or("", |md| md.display_name())
    }

    /// The name of stat metadata `id`; empty when it resolves to nothing.
    #[inline]
    pub fn stat_name(&self, id: i64) -> &'a str {
        self.stat(id).map_or("", |md| md.name)
    }

    /// The key of the stat metadata named `name` (the smallest, if several share it).
    pub fn stat_id(&self, name: &str) -> Option<i64> {
        self.stat_names.get(name).copied()
    }

    /// A stat's value with a `ref_value` resolved to the referenced stat metadata's name (empty
    /// when it resolves to nothing), as [`crate::StatVisitor::value`] gives it.
    pub fn resolve(&self, value: StatValueView<'a>) -> StatValueRef<'a> {
        match value {
            StatValueView::Double(v) => StatValueRef::Double(v),
            StatValueView::Uint64(v) => StatValueRef::Uint64(v),
            StatValueView::Int64(v) => StatValueRef::Int64(v),
            StatValueView::Str(v) => StatValueRef::Str(v),
            StatValueView::Bytes(v) => StatValueRef::Bytes(v),
            StatValueView::Ref(id) => {
                StatValueRef::Ref(visitor::ref_name(id, |id| self.stat(id).map(|md| md.name)))
            }
        }
    }
}

/// `sub`, a slice of `owner`'s buffer, as a `Bytes` sharing it; a copy when there is no owner (or,
/// defensively, when `sub` lies outside it).
pub(super) fn share(owner: Option<&bytes::Bytes>, sub: &[u8]) -> bytes::Bytes {
    if let Some(owner) = owner {
        let (start, end) = (
            owner.as_ptr() as usize,
            owner.as_ptr() as usize + owner.len(),
        );
        let at = sub.as_ptr() as usize;
        if sub.is_empty() {
            return bytes::Bytes::new();
        }
        if at >= start && at + sub.len() <= end {
            return owner.slice_ref(sub);
        }
    }
    bytes::Bytes::copy_from_slice(sub)
}

/// Sorts entries by key, keeping the last of each key in file order.
pub(super) fn last_of_each_key<T>(mut entries: Vec<T>, key: impl Fn(&T) -> i64) -> Vec<T> {
    // A stable sort keeps file order among equal keys; the last of each run wins.
    entries.sort_by_key(&key);
    let mut out: Vec<T> = Vec::with_capacity(entries.len());
    for entry in entries {
        match out.last_mut() {
            Some(last) if key(last) == key(&entry) => *last = entry,
            _ => out.push(entry),
        }
    }
    out
}

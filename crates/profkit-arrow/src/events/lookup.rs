//! Lookups by metadata id: a plane's event and stat metadata, and the stats the typed columns take.

use std::collections::HashMap;

use profkit_xplane::xview::XStatView;

use crate::schema::{TYPED_STATS, TypedKind};

use super::*;

/// Positions of a plane's metadata by id: a table for ids that are small and dense (as writers
/// assign them), a map otherwise.
#[derive(Default)]
pub(super) struct IdIndex {
    /// `dense[id]` is the position + 1 of that id's entry, 0 for none.
    pub(super) dense: Vec<u32>,
    pub(super) sparse: HashMap<i64, usize>,
}

impl IdIndex {
    pub(super) fn new(keys: &[i64]) -> IdIndex {
        let count = keys.len();
        let (min, max) = keys
            .iter()
            .fold((i64::MAX, i64::MIN), |(lo, hi), &k| (lo.min(k), hi.max(k)));
        let dense_ok = count > 0
            && min >= 0
            && usize::try_from(max).is_ok_and(|m| m < count.saturating_mul(4).saturating_add(1024))
            && count < u32::MAX as usize;
        if dense_ok {
            let mut dense = vec![0u32; usize::try_from(max).unwrap_or(0).saturating_add(1)];
            for (position, key) in keys.iter().enumerate() {
                if let Some(slot) = usize::try_from(*key).ok().and_then(|k| dense.get_mut(k)) {
                    *slot = u32::try_from(position + 1).unwrap_or(0);
                }
            }
            return IdIndex {
                dense,
                sparse: HashMap::new(),
            };
        }
        IdIndex {
            dense: Vec::new(),
            sparse: keys.iter().enumerate().map(|(p, k)| (*k, p)).collect(),
        }
    }

    #[inline]
    pub(super) fn get(&self, id: i64) -> Option<usize> {
        if self.dense.is_empty() {
            return self.sparse.get(&id).copied();
        }
        let slot = *usize::try_from(id).ok().and_then(|i| self.dense.get(i))?;
        (slot as usize).checked_sub(1)
    }
}

/// One event metadata of a plane: its names and where its stats are in [`PlaneTables::md_stats`].
pub(super) struct EventMd<'a> {
    pub(super) name: &'a str,
    pub(super) display: &'a str,
    pub(super) stats: std::ops::Range<usize>,
}

/// One stat metadata of a plane: its name, and its typed column and priority.
pub(super) struct StatMd<'a> {
    pub(super) name: &'a str,
    /// The name needs no escaping in JSON text.
    pub(super) plain: bool,
    pub(super) typed: Option<(usize, usize)>,
}

/// A batch's dictionary keys of one name, valid while the batch's generation is `generation`.
#[derive(Clone, Copy, Default)]
pub(super) struct Keys {
    pub(super) generation: u32,
    pub(super) name: i32,
    pub(super) display: i32,
}

/// What the batch builder needs of a plane's metadata, made once per plane.
pub(super) struct PlaneTables<'a> {
    pub(super) events: Vec<EventMd<'a>>,
    pub(super) event_index: IdIndex,
    pub(super) md_stats: Vec<XStatView<'a>>,
    pub(super) stats: Vec<StatMd<'a>>,
    pub(super) stat_index: IdIndex,
    /// Dictionary keys of each event metadata's names in the current batch.
    pub(super) keys: Vec<Keys>,
    /// Dictionary keys of each stat metadata's name in the current batch, per typed string
    /// column (for `ref_value` stats).
    pub(super) ref_keys: Vec<Vec<(u32, i32)>>,
}

impl<'a> PlaneTables<'a> {
    pub(super) fn new(metadata: &profkit_xplane::xview::PlaneMetadata<'a>) -> PlaneTables<'a> {
        let mut md_stats = Vec::new();
        let mut events = Vec::with_capacity(metadata.events().len());
        let mut event_keys = Vec::with_capacity(metadata.events().len());
        for md in metadata.events() {
            let start = md_stats.len();
            md_stats.extend_from_slice(md.stats());
            events.push(EventMd {
                name: md.name(),
                display: md.display_name(),
                stats: start..md_stats.len(),
            });
            event_keys.push(md.key());
        }
        let mut stats = Vec::with_capacity(metadata.stats().len());
        let mut stat_keys = Vec::with_capacity(metadata.stats().len());
        for md in metadata.stats() {
            let mut typed = None;
            for (column, (_, names, _)) in TYPED_STATS.iter().enumerate() {
                if let Some(priority) = names.iter().position(|n| *n == md.name()) {
                    typed = Some((column, priority));
                }
            }
            stats.push(StatMd {
                name: md.name(),
                plain: json_plain(md.name()),
                typed,
            });
            stat_keys.push(md.key());
        }
        let strs = TYPED_STATS.iter().filter(|t| t.2 == TypedKind::Str).count();
        PlaneTables {
            keys: vec![Keys::default(); events.len()],
            ref_keys: (0..strs).map(|_| vec![(0, 0); stats.len()]).collect(),
            event_index: IdIndex::new(&event_keys),
            stat_index: IdIndex::new(&stat_keys),
            events,
            md_stats,
            stats,
        }
    }

    #[inline]
    pub(super) fn stat(&self, id: i64) -> Option<(usize, &StatMd<'a>)> {
        let position = self.stat_index.get(id)?;
        self.stats.get(position).map(|s| (position, s))
    }

    /// The name a `ref_value` refers to ("" when out of range or absent), with its position.
    #[inline]
    pub(super) fn referenced(&self, id: u64) -> (Option<usize>, &'a str) {
        match i64::try_from(id).ok().and_then(|id| self.stat(id)) {
            Some((position, md)) => (Some(position), md.name),
            None => (None, ""),
        }
    }
}

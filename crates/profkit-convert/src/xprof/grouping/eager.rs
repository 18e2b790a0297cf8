//! The `is_eager` stat: the search for an enclosing `EagerExecute`.

use std::collections::HashMap;

use profkit_xplane::constants::{HOST_PLANE_NAME, TPU_PLANE_PREFIX};
use profkit_xplane::{XLine, XPlane, XStat, x_stat};

use crate::xprof::event_types::{Kind, kind_of};
use crate::xprof::facts::SpaceFacts;
use crate::xprof::stats::{int_or_uint, int_value, intern_stat, stat_id, timespan};
use crate::xprof::tpu::{tpu_grouping_line, tpu_plane_has_core_id};

/// Event metadata kinds and the stat ids the search needs, for one plane.
pub(crate) struct EventKinds {
    kinds: HashMap<i64, Kind>,
    correlation_stat: Option<i64>,
    pub(crate) async_stat: Option<i64>,
    is_func: Option<i64>,
}

impl EventKinds {
    pub(crate) fn of(plane: &XPlane) -> EventKinds {
        let kinds = plane
            .event_metadata
            .iter()
            .map(|(id, m)| (*id, kind_of(&m.name)))
            .collect();
        EventKinds {
            kinds,
            correlation_stat: stat_id(plane, "correlation_id"),
            async_stat: stat_id(plane, "_a"),
            is_func: stat_id(plane, "is_func"),
        }
    }

    pub(crate) fn kind(&self, metadata_id: i64) -> Kind {
        // An id that resolves to nothing has the empty name: untyped.
        self.kinds
            .get(&metadata_id)
            .copied()
            .unwrap_or(Kind::Untyped)
    }

    /// The event's own `correlation_id`, as TSL's `IntOrUintValue` reads it.
    pub(crate) fn correlation_id(&self, event: &profkit_xplane::XEvent) -> Option<u64> {
        let id = self.correlation_stat?;
        event
            .stats
            .iter()
            .find(|s| s.metadata_id == id)
            .map(int_or_uint)
    }
}

/// Each event's enclosing event on its line, as TSL's `ConnectIntraThread` finds it: a stack of
/// open events in line order, popped until one includes the new event. Async events (`_a` stat)
/// take no part.
pub(crate) fn nesting_parents(
    plane: &XPlane,
    line: &XLine,
    async_stat: &Option<i64>,
) -> Vec<Option<usize>> {
    let _ = plane;
    let mut parents = vec![None; line.events.len()];
    let mut stack: Vec<usize> = Vec::new();
    for (index, event) in line.events.iter().enumerate() {
        let is_async = async_stat.is_some_and(|id| {
            event
                .stats
                .iter()
                .find(|s| s.metadata_id == id)
                .is_some_and(|s| matches!(s.value, Some(x_stat::Value::Int64Value(v)) if v != 0))
        });
        if is_async {
            continue;
        }
        let (begin, end) = timespan(line, event);
        while let Some(&top) = stack.last() {
            let (top_begin, top_end) = line.events.get(top).map_or((0, 0), |e| timespan(line, e));
            if top_begin <= begin && end <= top_end {
                if let Some(p) = parents.get_mut(index) {
                    *p = Some(top);
                }
                break;
            }
            stack.pop();
        }
        stack.push(index);
    }
    parents
}

/// Where a search for an enclosing `EagerExecute` ends: how many parent links up it was found
/// and whether it runs an op eagerly (an `is_func` stat of 0; without one, or with any other
/// value, it runs a compiled function), or not found at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EagerSearch {
    /// An `EagerExecute` at this distance; the flag says whether it is eager.
    Found { distance: u32, eager: bool },
    /// No `EagerExecute` encloses the event.
    NotFound,
}

pub(crate) fn eager_search(
    kinds: &EventKinds,
    line: &XLine,
    parents: &[Option<usize>],
    index: usize,
) -> EagerSearch {
    let mut current = Some(index);
    let mut distance = 0;
    while let Some(i) = current {
        let Some(event) = line.events.get(i) else {
            break;
        };
        if kinds.kind(event.metadata_id) == Kind::Eager {
            // TSL's `IsCompiledFunc`: without an `is_func` stat the op counts as compiled.
            let eager = kinds.is_func.is_some_and(|id| {
                event
                    .stats
                    .iter()
                    .find(|s| s.metadata_id == id)
                    .is_some_and(|s| int_value(s) == 0)
            });
            return EagerSearch::Found { distance, eager };
        }
        current = parents.get(i).copied().flatten();
        distance += 1;
    }
    EagerSearch::NotFound
}

/// Sets `is_eager` on the plane's kernel-execute and TensorFlow op events.
pub(crate) fn mark_eager(plane: &mut XPlane, facts: &SpaceFacts) {
    let is_host = plane.name == HOST_PLANE_NAME;
    let kinds = EventKinds::of(plane);
    // On TPU planes only the grouping line's events take part in grouping.
    let tpu = plane.name.starts_with(TPU_PLANE_PREFIX);
    let only_line = if tpu {
        if !tpu_plane_has_core_id(&plane.name) {
            return;
        }
        match tpu_grouping_line(plane) {
            Some(i) => Some(i),
            None => return,
        }
    } else {
        None
    };
    let mut marks: Vec<(usize, usize, bool)> = Vec::new();
    for (line_index, line) in plane.lines.iter().enumerate() {
        if only_line.is_some_and(|only| only != line_index) {
            continue;
        }
        let parents = nesting_parents(plane, line, &kinds.async_stat);
        for (index, event) in line.events.iter().enumerate() {
            let kind = kinds.kind(event.metadata_id);
            let kernel = !is_host && kind == Kind::Untyped;
            let correlation = if kernel {
                kinds.correlation_id(event)
            } else {
                None
            };
            if kind != Kind::TfOp && correlation.is_none() {
                continue;
            }
            let own = eager_search(&kinds, line, &parents, index);
            // A kernel's parents are its enclosing event (searched first at each distance) and
            // the launch; breadth-first, the nearer `EagerExecute` wins.
            let launch = correlation
                .and_then(|id| facts.launches.get(&id).copied())
                .unwrap_or(EagerSearch::NotFound);
            let eager = match (own, launch) {
                (
                    EagerSearch::Found { distance: d, eager },
                    EagerSearch::Found { distance: l, .. },
                ) if d <= l + 1 => eager,
                (_, EagerSearch::Found { eager, .. }) => eager,
                (EagerSearch::Found { eager, .. }, EagerSearch::NotFound) => eager,
                (EagerSearch::NotFound, EagerSearch::NotFound) => false,
            };
            marks.push((line_index, index, eager));
        }
    }
    if marks.is_empty() {
        return;
    }
    let stat = intern_stat(plane, "is_eager");
    for (line_index, index, eager) in marks {
        let Some(event) = plane
            .lines
            .get_mut(line_index)
            .and_then(|l| l.events.get_mut(index))
        else {
            continue;
        };
        let value = Some(x_stat::Value::Int64Value(i64::from(eager)));
        match event.stats.iter_mut().find(|s| s.metadata_id == stat) {
            Some(existing) => existing.value = value,
            None => event.stats.push(XStat {
                metadata_id: stat,
                value,
            }),
        }
    }
}

//! What xprof's preprocessing for the memory profile (`PreprocessSingleHostXSpace` with step
//! grouping, without derived timelines) changes of the host plane's allocator events: the
//! `group_id` that step grouping gives them, and the order xprof visits them in, which changes
//! on the lines where it adds thread pool regions (it sorts those lines' events by start, longer
//! first, keeping the order of ties; other lines keep the file's order).

use profkit_xplane::{XEvent, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat};

use crate::preprocess::{SpaceFacts, preprocess_plane};

/// The instants a thread pool region starts and stops with (see `preprocess::regions`).
const REGION_INSTANTS: [&str; 2] = [
    "ThreadpoolListener::StartRegion",
    "ThreadpoolListener::StopRegion",
];

/// What preprocessing changes for the events of the host plane.
#[derive(Default)]
pub(super) struct Visit {
    /// Per event of the plane (in line and event order), the group step grouping gives it;
    /// `None` when xprof does not group.
    pub groups: Option<Vec<Option<i64>>>,
    /// Per line, whether xprof re-sorts its events (it added regions to it).
    pub sorted: Vec<bool>,
}

impl Visit {
    /// The order xprof visits the events of line `index` in.
    pub fn order(&self, index: usize, events: &[XEvent]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..events.len()).collect();
        if self.sorted.get(index) == Some(&true) {
            // A stable sort: ties keep the file's order.
            order.sort_by_key(|&i| {
                events.get(i).map_or((0, std::cmp::Reverse(0)), |e| {
                    let offset = match e.data {
                        Some(x_event::Data::OffsetPs(v)) => v,
                        _ => 0,
                    };
                    (offset, std::cmp::Reverse(e.duration_ps))
                })
            });
        }
        order
    }

    /// The group of the event with this ordinal (its position in line and event order).
    pub fn group(&self, ordinal: usize) -> Option<i64> {
        self.groups.as_ref()?.get(ordinal).copied().flatten()
    }
}

/// What xprof's preprocessing does to the allocator events of `host`, plane `index` of `space`.
pub(super) fn visit(space: &XSpace, index: usize, host: &XPlane) -> Visit {
    // The names tell what xprof does, without taking in any event.
    let mut names = SpaceFacts::default();
    for plane in &space.planes {
        names.observe_names(
            &plane.name,
            plane.event_metadata.values().map(|m| m.name.as_str()),
            plane.stat_metadata.values().map(|m| m.name.as_str()),
        );
    }
    let regions = REGION_INSTANTS
        .iter()
        .all(|r| host.event_metadata.values().any(|m| m.name == *r));
    if !names.preprocesses() || !(names.groups() || regions) {
        return Visit::default();
    }
    let mut facts = SpaceFacts::default();
    for plane in &space.planes {
        facts.observe(plane);
    }
    facts.finish();
    if !regions {
        // One mark per event, in order: read beside the events, the plane not copied.
        return Visit {
            groups: facts
                .forest
                .marks(index)
                .map(|marks| marks.map(|m| m.group_id).collect()),
            sorted: Vec::new(),
        };
    }
    with_regions(host, index, &facts)
}

/// [`visit`] on a plane that gets regions: preprocessed on a copy whose events carry their
/// ordinal in a stat of their own, to find each event again once regions are in.
fn with_regions(host: &XPlane, index: usize, facts: &SpaceFacts) -> Visit {
    let mut copy = host.clone();
    let tag = copy.stat_metadata.keys().max().copied().unwrap_or(0) + 1;
    copy.stat_metadata.insert(
        tag,
        XStatMetadata {
            id: tag,
            name: String::new(),
            description: String::new(),
        },
    );
    let mut ordinal: i64 = 0;
    for line in &mut copy.lines {
        for event in &mut line.events {
            event.stats.push(XStat {
                metadata_id: tag,
                value: Some(x_stat::Value::Int64Value(ordinal)),
            });
            ordinal += 1;
        }
    }
    preprocess_plane(&mut copy, index, facts, true);
    let group_ids: Vec<i64> = copy
        .stat_metadata
        .iter()
        .filter(|(_, m)| m.name == "group_id")
        .map(|(id, _)| *id)
        .collect();
    let mut groups = vec![None; usize::try_from(ordinal).unwrap_or(0)];
    let mut sorted = Vec::with_capacity(copy.lines.len());
    for (line, original) in copy.lines.iter().zip(&host.lines) {
        sorted.push(line.events.len() > original.events.len());
        for event in &line.events {
            let Some(n) = event.stats.iter().find_map(|s| match s.value {
                Some(x_stat::Value::Int64Value(v)) if s.metadata_id == tag => Some(v),
                _ => None,
            }) else {
                continue;
            };
            let group = event
                .stats
                .iter()
                .filter(|s| group_ids.contains(&s.metadata_id))
                .filter_map(|s| match s.value {
                    Some(x_stat::Value::Int64Value(v)) => Some(v),
                    _ => None,
                })
                .next_back();
            if let Some(slot) = usize::try_from(n).ok().and_then(|n| groups.get_mut(n)) {
                *slot = group;
            }
        }
    }
    Visit {
        groups: facts.groups().then_some(groups),
        sorted,
    }
}

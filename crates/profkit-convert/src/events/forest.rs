//! An XSpace straight into the summary's forest, plane by plane through views (neither the
//! decoded space nor the event model is built): what `profkit report` runs on an XSpace.

use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};

use profkit_events::MemEventKind;
use profkit_events::report::summary::{EventType, Forest, ForestBuilder, Mem};
use profkit_events::span::paired_ranges;
use profkit_xplane::constants::{
    COUNTERS_LINE_ID, COUNTERS_LINE_NAME, HOST_PLANE_NAME, TASK_ENV_PLANE_NAME, stats,
};
use profkit_xplane::xview::{PlaneMetadata, XEventView, XPlaneView};
use profkit_xplane::{RawSpaceItem, ReadOptions, StatValueRef, XSpaceReader, line_role};

use super::*;

/// The summary's trees ([`Forest`]) of an XSpace, read plane by plane through views: what
/// `Forest::from_recording(&xspace_to_recording(&space))` gives, without the decoded space or the
/// event model. Memory is the largest plane's encoded bytes and the forest (a node per host
/// range; device activity is kept per device and type as time ranges, and per kernel name).
///
/// `source` is read twice: first up to the `Task Environment` plane, whose session start every
/// time is relative to, then whole. Each plane is checked in full before it is walked, so a
/// damaged file is refused with the error reading it whole would give.
pub fn xspace_forest<R: Read + Seek>(mut source: R, options: ReadOptions) -> crate::Result<Forest> {
    let mut builder = ForestBuilder::new();
    let start = session_start_streamed(&mut source, options, &mut builder);
    source.seek(SeekFrom::Start(0))?;
    let mut reader = XSpaceReader::new(source, options);
    let mut host_seen = false;
    while let Some(item) = reader.next_raw() {
        let RawSpaceItem::Plane(plane) = item? else {
            continue;
        };
        let view = plane.view()?;
        view.check()?;
        if view.name() == HOST_PLANE_NAME && !host_seen {
            host_seen = true;
            host_plane_forest(&view, start, &mut builder)?;
        } else if view.name().starts_with("/device:") {
            device_plane_forest(&view, start, &mut builder)?;
        }
    }
    Ok(builder.finish())
}

/// The session start and the run's information, from the first `Task Environment` plane; 0 and
/// none when there is none, or when the input fails before it (the second pass reports that).
pub(super) fn session_start_streamed<R: Read>(
    source: &mut R,
    options: ReadOptions,
    builder: &mut ForestBuilder,
) -> u64 {
    let mut reader = XSpaceReader::new(source, options);
    while let Some(Ok(item)) = reader.next_raw() {
        let RawSpaceItem::Plane(plane) = item else {
            continue;
        };
        let Ok(view) = plane.view() else { return 0 };
        if view.name() != TASK_ENV_PLANE_NAME {
            continue;
        }
        let Ok(metadata) = view.metadata() else {
            return 0;
        };
        let start_id = metadata.stat_id(stats::PROFILE_START_TIME);
        let mut start = None;
        let mut info = Vec::new();
        for stat in view.stats() {
            let Ok(stat) = stat else { return 0 };
            let value = stat.value().map(|v| metadata.resolve(v));
            if start.is_none() && start_id == Some(stat.metadata_id()) {
                start = Some(value.as_ref().and_then(|v| v.as_u64()).unwrap_or(0));
            }
            let name = metadata.stat_name(stat.metadata_id());
            if [stats::PROFILE_START_TIME, stats::PROFILE_STOP_TIME].contains(&name) {
                continue;
            }
            if let Some(text) = value.as_ref().and_then(stat_text) {
                info.push((name.to_owned(), text));
            }
        }
        for (key, value) in info {
            builder.info(key, value);
        }
        return start.unwrap_or(0);
    }
    0
}

/// The value of the stat with metadata id `id` on a viewed event: its own first, then its
/// metadata's, as [`profkit_xplane::EventVisitor::stat`] finds it: `Some(None)` for a stat found
/// without a value.
pub(super) fn view_stat<'a>(
    event: &XEventView<'a>,
    metadata: &PlaneMetadata<'a>,
    id: Option<i64>,
) -> crate::Result<Option<Option<StatValueRef<'a>>>> {
    let Some(id) = id else { return Ok(None) };
    for stat in event.stats() {
        let stat = stat?;
        if stat.metadata_id() == id {
            return Ok(Some(stat.value().map(|v| metadata.resolve(v))));
        }
    }
    let own = metadata.event(event.metadata_id());
    let found = own.and_then(|md| md.stats().iter().find(|s| s.metadata_id() == id));
    Ok(found.map(|s| s.value().map(|v| metadata.resolve(v))))
}

/// The stat ids a memory event reads.
pub(super) struct MemoryStats {
    pub(super) place: Option<i64>,
    pub(super) increase_bytes: Option<i64>,
    pub(super) peak_allocated: Option<i64>,
    pub(super) peak_reserved: Option<i64>,
    pub(super) thread_id: Option<i64>,
}

impl MemoryStats {
    pub(super) fn new(metadata: &PlaneMetadata<'_>) -> MemoryStats {
        MemoryStats {
            place: metadata.stat_id("place"),
            increase_bytes: metadata.stat_id("increase_bytes"),
            peak_allocated: metadata.stat_id("peak_allocated"),
            peak_reserved: metadata.stat_id("peak_reserved"),
            thread_id: metadata.stat_id("thread_id"),
        }
    }

    /// The summary's memory event of a viewed event, as [`memory_event`] reads it.
    pub(super) fn mem(
        &self,
        event: &XEventView<'_>,
        metadata: &PlaneMetadata<'_>,
        kind: MemEventKind,
    ) -> crate::Result<Mem> {
        // Paddle's Chrome traces write some numbers as strings.
        let number = |id| -> crate::Result<Option<u64>> {
            Ok(view_stat(event, metadata, id)?
                .flatten()
                .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok())))
        };
        Ok(Mem {
            kind,
            place: view_stat(event, metadata, self.place)?
                .flatten()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            increase_bytes: view_stat(event, metadata, self.increase_bytes)?
                .flatten()
                .and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok()))
                .unwrap_or(0),
            peak_allocated: number(self.peak_allocated)?.unwrap_or(0),
            peak_reserved: number(self.peak_reserved)?.unwrap_or(0),
        })
    }
}

/// The threads of the host plane (as [`xspace_to_recording`] reads them) into the forest.
pub(super) fn host_plane_forest(
    plane: &XPlaneView<'_>,
    start: u64,
    builder: &mut ForestBuilder,
) -> crate::Result<()> {
    let metadata = plane.metadata()?;
    let mark_id = metadata.stat_id(MARK_STAT);
    let category_id = metadata.stat_id(CATEGORY_STAT);
    let cat_id = metadata.stat_id("cat");
    let memory = MemoryStats::new(metadata);
    let mut used: HashSet<u32> = HashSet::new();
    // The plane's event names, each once, and their numbers.
    let mut names: Vec<&str> = Vec::new();
    let mut numbers: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    // One line's ranges (name's number, start, end) and their types, reused.
    let mut ranges: Vec<(u32, u64, u64)> = Vec::new();
    let mut types: Vec<EventType> = Vec::new();
    for (index, line) in plane.lines().enumerate() {
        let line = line?;
        if line.id() == COUNTERS_LINE_ID || line.name() == COUNTERS_LINE_NAME {
            continue;
        }
        if line.id() == MEMORY_LINE_ID && line.name() == MEMORY_LINE_NAME {
            for event in line.events() {
                let event = event?;
                let kind = MemEventKind::from_name(metadata.event_name(event.metadata_id()))
                    .unwrap_or(MemEventKind::Other(-1));
                let thread_id = view_stat(&event, metadata, memory.thread_id)?
                    .flatten()
                    .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
                    .unwrap_or(0);
                let mem = memory.mem(&event, metadata, kind)?;
                builder.memory(thread_id, to_ns(start, event.timestamp_ps()), mem);
            }
            continue;
        }
        let thread = thread_index(line.id(), index, &mut used);
        let tid = u64::try_from(line.id()).unwrap_or(u64::from(thread));
        for event in line.events() {
            let event = event?;
            if event.is_aggregated() {
                continue;
            }
            let begin = to_ns(start, event.timestamp_ps());
            let is_mark = event.duration_ps() == 0
                && view_stat(&event, metadata, mark_id)?
                    .flatten()
                    .is_some_and(|v| v.as_str() == Some(MARK));
            let category = match view_stat(&event, metadata, category_id)? {
                Some(found) => Some(found),
                None => view_stat(&event, metadata, cat_id)?,
            };
            let category = category.flatten().and_then(|v| v.as_str());
            if let Some(kind) = category.and_then(MemEventKind::from_name)
                && event.duration_ps() == 0
                && view_stat(&event, metadata, memory.place)?.is_some()
            {
                // A memory event written as an instant with a memory category.
                let mem = memory.mem(&event, metadata, kind)?;
                builder.memory(u64::try_from(line.id()).unwrap_or(0), begin, mem);
                continue;
            }
            if is_mark {
                continue;
            }
            let name = metadata.event_name(event.metadata_id());
            let number = *numbers.entry(name).or_insert_with(|| {
                names.push(name);
                u32::try_from(names.len() - 1).unwrap_or(u32::MAX)
            });
            ranges.push((number, begin, to_ns(start, event.end_timestamp_ps())));
            types.push(EventType::from_category(category));
        }
        let spans = paired_ranges(&ranges);
        // What the nodes take of each range once paired (its name and type, 12 bytes), the
        // line's lists let go before the nodes are made.
        let kept: Vec<(u32, EventType)> = ranges
            .iter()
            .zip(&types)
            .map(|(&(number, _, _), &ty)| (number, ty))
            .collect();
        ranges = Vec::new();
        types = Vec::new();
        let name = line.display_name();
        builder.thread_name(tid, if name.is_empty() { line.name() } else { name });
        builder.thread(
            tid,
            spans.iter().filter_map(|&(j, begin, end)| {
                let &(number, ty) = kept.get(j)?;
                let name = names.get(number as usize)?;
                Some((*name, ty, begin, end))
            }),
        );
    }
    Ok(())
}

/// The device activity of a device plane (as [`xspace_to_recording`] reads it) into the forest.
pub(super) fn device_plane_forest(
    plane: &XPlaneView<'_>,
    start: u64,
    builder: &mut ForestBuilder,
) -> crate::Result<()> {
    let metadata = plane.metadata()?;
    let device = plane
        .name()
        .rsplit(':')
        .next()
        .and_then(|n| n.parse::<i64>().ok())
        .unwrap_or(plane.id());
    let device = u64::try_from(device).unwrap_or(0);
    let memcpy_id = metadata.stat_id(stats::MEMCPY_DETAILS);
    let mut roles = Vec::with_capacity(plane.line_count());
    for line in plane.lines() {
        roles.push(line_role(plane.name(), line?.name()));
    }
    let kept = device_activity_lines(&roles);
    for (line, keep) in plane.lines().zip(kept) {
        let line = line?;
        if line.id() == COUNTERS_LINE_ID || !keep {
            continue;
        }
        for event in line.events() {
            let event = event?;
            if event.is_aggregated() {
                continue;
            }
            let name = metadata.event_name(event.metadata_id());
            let ty = if view_stat(&event, metadata, memcpy_id)?.is_some() || name.contains("emcpy")
            {
                EventType::Memcpy
            } else if name.contains("emset") {
                EventType::Memset
            } else {
                EventType::Kernel
            };
            builder.device_span(
                name,
                ty,
                device,
                to_ns(start, event.timestamp_ps()),
                to_ns(start, event.end_timestamp_ps()),
            );
        }
    }
    Ok(())
}

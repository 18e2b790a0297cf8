//! The first pass: what the metadata events and xprof's preprocessing need of every plane, read
//! lightly where it can be (see `crate::lite`), and the layouts of derived lines.

use std::io::{Read, Seek, SeekFrom};

use profkit_xplane::{SpaceItem, XPlane, XSpaceReader};

use crate::error::Result;
use crate::preprocess::{self, SpaceFacts};

use super::*;

/// What the first pass keeps of each plane: the shadow of a plane xprof could show (the host plane,
/// a device plane), nothing of the others, so that a space of millions of planes xprof does not
/// show costs a few bytes a plane.
pub(super) type Kept = Option<Box<Shadow>>;

/// Whether xprof could show a plane of this name (see `select`).
pub(super) fn could_show(name: &str) -> bool {
    name == HOST_PLANE_NAME
        || [GPU_PLANE_PREFIX, TPU_PLANE_PREFIX, CUSTOM_PLANE_PREFIX]
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

/// The shadow of a plane if it could be shown.
fn kept(name: &str, shadow: impl FnOnce() -> Option<Shadow>) -> Option<Kept> {
    if could_show(name) {
        shadow().map(|s| Some(Box::new(s)))
    } else {
        Some(None)
    }
}

/// What the first pass learns of a space: the facts preprocessing needs, the shadow of each plane
/// that could be shown, each plane's place in the input and whether it was decoded whole.
pub(super) struct FirstPass {
    pub(super) facts: SpaceFacts,
    pub(super) shadows: Vec<Kept>,
    pub(super) ranges: Vec<(u64, u64)>,
    pub(super) decoded: Vec<bool>,
}

/// The lines of a plane without their events (and the lines it shows once derived): all the first pass
/// keeps of a plane.
pub(super) struct Shadow {
    pub(super) plane: XPlane,
    /// The plane's lines once xprof has derived its timelines, for planes where it does.
    pub(super) derived: Option<Vec<(i64, String)>>,
    /// How many HLO modules were known when `derived` was made.
    pub(super) symbols_known: usize,
}

impl Shadow {
    /// The shadow of a lightly decoded plane, its lines decoded one at a time from `bytes`;
    /// `None` on anything unexpected.
    pub(super) fn of_lite(plane: &crate::lite::PlaneLite, bytes: &bytes::Bytes) -> Option<Shadow> {
        let mut lines = Vec::new();
        let mut counts = Vec::new();
        crate::lite::for_each_line(bytes, |l| {
            counts.push(l.events.len());
            lines.push(profkit_xplane::XLine {
                id: l.id,
                display_id: l.display_id,
                name: l.name,
                display_name: l.display_name,
                ..Default::default()
            });
        })?;
        let shadow = XPlane {
            id: plane.id,
            name: plane.name.clone(),
            lines,
            ..XPlane::default()
        };
        Some(Shadow {
            derived: SpaceFacts::derived_layout_without_events(&shadow, &counts),
            plane: shadow,
            symbols_known: usize::MAX,
        })
    }

    /// [`Shadow::of`] of a plane the caller no longer needs.
    pub(super) fn of_owned(plane: XPlane, facts: &SpaceFacts) -> Shadow {
        let mut shadow = Shadow::of_lines(&plane);
        shadow.derived = facts.derived_layout_owned(plane);
        shadow.symbols_known = facts.symbols_known();
        shadow
    }

    pub(super) fn of(plane: &XPlane, facts: &SpaceFacts) -> Shadow {
        let mut shadow = Shadow::of_lines(plane);
        shadow.derived = facts.derived_layout(plane);
        shadow.symbols_known = facts.symbols_known();
        shadow
    }

    /// The lines of a plane, without derived layout.
    pub(super) fn of_lines(plane: &XPlane) -> Shadow {
        Shadow {
            plane: preprocess::lines_only(plane),
            derived: None,
            symbols_known: 0,
        }
    }
}

/// How many events the writer writes between two progress reports.
pub(super) const PROGRESS_EVENTS: u64 = 16_384;

/// A plane's encoded bytes handed out to progress in proportion to its events written.
pub(super) struct EventShare {
    pub(super) bytes: u64,
    pub(super) events: u64,
    pub(super) written: u64,
    pub(super) reported: u64,
}

impl EventShare {
    pub(super) fn new(events: u64, bytes: u64) -> Self {
        EventShare {
            bytes,
            events,
            written: 0,
            reported: 0,
        }
    }

    /// The bytes to report now that `events` more events are written.
    pub(super) fn bytes_for(&mut self, events: u64) -> u64 {
        self.written = self.written.saturating_add(events).min(self.events);
        let due = if self.events == 0 {
            0
        } else {
            (u128::from(self.bytes) * u128::from(self.written) / u128::from(self.events)) as u64
        };
        let now = due.saturating_sub(self.reported);
        self.reported = self.reported.max(due);
        now
    }

    /// The bytes not reported yet (all of them once the plane is written).
    pub(super) fn rest(&mut self) -> u64 {
        let now = self.bytes.saturating_sub(self.reported);
        self.reported = self.bytes;
        now
    }
}

/// Derived layouts made before the metadata plane's HLO modules were all known (a device plane
/// before `/host:metadata` in the file) are made again, reading their planes once more.
pub(super) fn refresh_layouts<R: Read + Seek>(
    input: &mut R,
    start: u64,
    options: &TraceViewerOptions,
    facts: &SpaceFacts,
    shadows: &mut [Kept],
    ranges: &[(u64, u64)],
) -> Result<()> {
    for (shadow, &(from, to)) in shadows.iter_mut().zip(ranges) {
        let Some(shadow) = shadow.as_deref_mut() else {
            continue;
        };
        // (A layout made without events, `symbols_known` at its maximum, needs no symbols.)
        if shadow.derived.is_none() || shadow.symbols_known >= facts.symbols_known() {
            continue;
        }
        input.seek(SeekFrom::Start(start + from))?;
        for item in XSpaceReader::new((&mut *input).take(to - from), options.read) {
            match item {
                Ok(SpaceItem::Plane(plane)) => {
                    shadow.derived = facts.derived_layout_owned(plane);
                    shadow.symbols_known = facts.symbols_known();
                }
                Ok(_) => {}
                Err(e) => return Err(located(input, start, options, e)),
            }
        }
    }
    Ok(())
}

/// The error `e` found reading one plane on its own, located in the whole space: the streaming
/// reader reads the space from `start` and reports where it fails (with offsets from the start
/// of the input and the plane's index in the path).
pub(super) fn located<R: Read + Seek>(
    input: &mut R,
    start: u64,
    options: &TraceViewerOptions,
    e: profkit_xplane::Error,
) -> crate::Error {
    if input.seek(SeekFrom::Start(start)).is_err() {
        return e.into();
    }
    match full_pass(input, options, &mut None) {
        Err(found) => found,
        Ok(_) => e.into(),
    }
}

/// The first pass with the streaming reader: every plane decoded whole.
pub(super) fn full_pass<R: Read>(
    input: &mut R,
    options: &TraceViewerOptions,
    progress: &mut Progress<'_>,
) -> Result<FirstPass> {
    let mut facts = SpaceFacts::default();
    let mut shadows = Vec::new();
    let mut ranges = Vec::new();
    let mut decoded = Vec::new();
    let mut reader = XSpaceReader::new(input, options.read);
    loop {
        let before = reader.offset();
        let Some(item) = reader.next() else { break };
        if let SpaceItem::Plane(mut plane) = item? {
            facts.observe_mut(&mut plane);
            let name = std::mem::take(&mut plane.name);
            let shadow = could_show(&name).then(|| {
                let mut plane = plane;
                plane.name = name;
                Box::new(Shadow::of_owned(plane, &facts))
            });
            shadows.push(shadow);
            ranges.push((before, reader.offset()));
            decoded.push(true);
        }
        if let Some(report) = progress.as_mut() {
            report(reader.offset() - before);
        }
    }
    facts.finish();
    Ok(FirstPass {
        facts,
        shadows,
        ranges,
        decoded,
    })
}

/// The first pass without decoding the events of planes whose events it does not need (see
/// [`crate::lite`]); `None` when anything is unexpected, for [`full_pass`] to say what.
pub(super) fn light_pass<R: Read + std::io::Seek>(
    input: &mut R,
    options: &TraceViewerOptions,
    progress: &mut Progress<'_>,
) -> Option<FirstPass> {
    let mut facts = SpaceFacts::default();
    let mut shadows = Vec::new();
    let mut ranges = Vec::new();
    let mut decoded = Vec::new();
    let mut splitter = crate::lite::Splitter::new(input, options.read.max_size);
    let mut done = 0;
    while let Some(item) = splitter.next_item()? {
        if let crate::lite::Item::Plane { bytes, from, to } = item {
            let lite = crate::lite::decode(bytes.clone())?;
            if SpaceFacts::needs_events(
                &lite.name,
                lite.event_metadata.values().map(|m| m.name.as_str()),
                lite.stat_metadata.values().map(|m| m.name.as_str()),
            ) {
                if !crate::preprocess::derived::applies(&lite.name)
                    && !crate::preprocess::has_runtime_events(
                        lite.event_metadata.values().map(|m| m.name.as_str()),
                    )
                {
                    // A plane without derived lines (the host threads'): its events read through
                    // an index of its bytes, not decoded.
                    drop(lite);
                    let body_len = bytes.len() as u64;
                    let mut indexed = crate::indexed::IndexedPlane::from_bytes(bytes).ok()??;
                    // Split by line (each line's bytes read again from the input), so that the
                    // forest's intake lets go of each line's bytes once taken in; the input is
                    // put back where the splitter left it.
                    splitter.split_lines(&mut indexed, body_len)?;
                    facts.sequential_intake = true;
                    facts.observe_indexed(&mut indexed);
                    let name = indexed.shadow().name.clone();
                    shadows.push(kept(&name, || Some(Shadow::of(indexed.shadow(), &facts)))?);
                    decoded.push(true);
                    ranges.push((from, to));
                    if let Some(report) = progress.as_mut() {
                        report(to - done);
                    }
                    done = to;
                    continue;
                }
                // The light view goes before the plane is decoded whole: one copy at a time.
                drop(lite);
                let mut plane = profkit_xplane::decode_plane(bytes).ok()?;
                facts.observe_mut(&mut plane);
                let name = plane.name.clone();
                shadows.push(kept(&name, || Some(Shadow::of_owned(plane, &facts)))?);
                decoded.push(true);
            } else {
                facts.observe_names(
                    &lite.name,
                    lite.event_metadata.values().map(|m| m.name.as_str()),
                    lite.stat_metadata.values().map(|m| m.name.as_str()),
                );
                shadows.push(kept(&lite.name, || Shadow::of_lite(&lite, &bytes))?);
                decoded.push(false);
            }
            ranges.push((from, to));
            if let Some(report) = progress.as_mut() {
                report(to - done);
            }
            done = to;
        }
    }
    facts.finish();
    Some(FirstPass {
        facts,
        shadows,
        ranges,
        decoded,
    })
}

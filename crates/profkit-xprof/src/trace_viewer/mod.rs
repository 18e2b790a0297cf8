//! XSpace to Chrome trace JSON, byte for byte as xprof 2.24.2's `trace_viewer` tool makes it.
//!
//! xprof shows the plane named exactly `/host:CPU` as process 701, and the device planes: those
//! named `/device:GPU:...`, or if there are none `/device:TPU:...`, or if none `/device:CUSTOM:...`,
//! each as process `1 + plane id`; other planes are not shown. A line is a thread whose id is the
//! line's display id (as a 32-bit unsigned number) and whose name is its display name; lines named
//! `Async XLA Ops` are left out. An event is named by its metadata's display name (the metadata
//! name going to the `long_name` arg) or its name, renamed by a `step_name` stat; its args are the
//! metadata's stats then its own, every value a string (`absl::StrCat` for numbers, `<opaque
//! bytes>`, the referenced name for a ref), stats the viewer hides left out. Times are picoseconds
//! divided by 10^6, written by Python's `json` module: an event with a duration is `"ph": "X"`,
//! one without is an instant `"ph": "i"` on its thread. The document starts with process and
//! thread metadata events, sorted by pid and tid, and ends with an empty event `{}`.
//!
//! The conversion streams: a first pass over the planes learns what the metadata events and
//! xprof's preprocessing need (see [`crate::preprocess`]), decoding the events only of the planes whose
//! events it needs and keeping the others' as bytes; a second writes each shown plane's events as
//! it reads the plane again, host plane first, then walks the planes not shown through views so
//! that a malformed file fails as with the streaming reader. The host threads' plane (the largest
//! of most real profiles) is never decoded: both passes read its events through an index of its
//! bytes (8 bytes an event, its threadpool regions kept beside it), where a decoded event takes 56
//! bytes and each stat 40. Memory is bounded by the largest device plane decoded, or the host
//! plane's bytes and index, plus what xprof's grouping needs (its event forest, see
//! [`crate::preprocess`]).
//!
//! Flows: xprof links events by the `flow` stats its preprocessing adds (see
//! [`crate::preprocess::flows`]); each linked event gets a `flow` arg. xprof's ids are salted per
//! process, profkit's deterministic: the same events share an id, with the same direction and
//! category, but the numbers differ.
//!
//! Where profkit differs from xprof, on purpose: xprof keeps only the 1,000,000 earliest events of
//! a bigger trace (its non-streaming viewer cannot load more) and then lists them by time; profkit
//! writes every event.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};

use profkit_xplane::constants::{
    CUSTOM_PLANE_PREFIX, GPU_PLANE_PREFIX, HOST_PLANE_NAME, TPU_PLANE_PREFIX,
};
use profkit_xplane::{RawSpaceItem, ReadOptions, XSpace, XSpaceReader};

use crate::error::Result;
use crate::indexed::{IndexedPlane, PlaneRef};
use crate::preprocess::{self, SpaceFacts};
use profkit_json::write::push_json_str;

mod json;
mod passes;
mod writer;

use passes::{
    EventShare, FirstPass, Kept, Shadow, could_show, full_pass, light_pass, located,
    refresh_layouts,
};
use writer::Writer;

/// xprof's process id for the host plane (`kHostThreadsDeviceId`).
pub const HOST_PID: u32 = 701;
/// xprof's process id of a device plane is this plus the plane id (`kFirstDeviceId`).
pub const FIRST_DEVICE_PID: u32 = 1;

const HEADER: &str =
    "{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true},\n\"traceEvents\":[\n";
const FOOTER: &str = "{}]}\n";

/// How to convert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceViewerOptions {
    /// Apply the parts of xprof's preprocessing that profkit reproduces ([`crate::preprocess`]). On by
    /// default; without it the output is what xprof's converter makes of the space as it is.
    pub preprocess: bool,
    /// Write the events of each plane's counter line (`_counters_`) as Chrome counter events
    /// (`"ph": "C"`, numeric stats as numbers) rather than as xprof's instant events. Off by
    /// default (xprof's output); the converters from other formats turn it on.
    pub counter_events: bool,
    /// Write the flows of events with `flow_out`/`flow_in` stats (what the Chrome importer makes
    /// of flow events, see [`profkit_chrome::flow_stats`]) as Chrome flow events (`"ph": "s"` and
    /// `"f"` with `"bp": "e"`, category and name from `flow_cat`) instead of as args, and leave out
    /// the flows xprof's preprocessing adds. Off by default (xprof's output); the converters from
    /// other formats turn it on.
    pub flow_events: bool,
    /// Write what the Trace Event Format has members and types for as it does, where the tools
    /// that read PyTorch's traces look for them, rather than as xprof's string args: an event's
    /// `cat` stat (what the Chrome importer makes of a trace's `cat` member) as its `cat` member,
    /// numeric args as JSON numbers, and an `X` of no duration as one (the importer notes it with
    /// a `ph` stat). Off by default (xprof's output).
    pub trace_event_members: bool,
    /// Write [`Layout::TraceEvent`] for a space that says it was read from a Chrome trace (its
    /// `Task Environment` plane's [`profkit_chrome::SOURCE_FORMAT_STAT`]), whatever the options
    /// above say, so that a trace converted to XSpace and back keeps its own layout. Off by
    /// default.
    pub follow_source: bool,
    /// Settings for reading the XSpace.
    pub read: ReadOptions,
}

impl Default for TraceViewerOptions {
    fn default() -> Self {
        TraceViewerOptions {
            preprocess: true,
            counter_events: false,
            flow_events: false,
            trace_event_members: false,
            follow_source: false,
            read: ReadOptions::default(),
        }
    }
}

/// The two layouts of Chrome trace JSON profkit writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// xprof's trace viewer output, exactly: flows as `flow` args, a trace's `cat` among the
    /// args, counters as instants.
    Xprof,
    /// The Trace Event Format's own members, as PyTorch's profiler and catapult write them and
    /// the tools that read their traces expect: flows as `s`/`t`/`f` flow events, `cat` as a
    /// member, counters as `C` events. xprof's preprocessing still applies (its grouping stats
    /// are args), but not its flows: the space's own are written.
    TraceEvent,
}

impl TraceViewerOptions {
    /// The options for a layout, reading with the default settings.
    pub fn of_layout(layout: Layout) -> TraceViewerOptions {
        let trace_event = layout == Layout::TraceEvent;
        TraceViewerOptions {
            counter_events: trace_event,
            flow_events: trace_event,
            trace_event_members: trace_event,
            ..TraceViewerOptions::default()
        }
    }
}

/// What a conversion wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceViewerSummary {
    /// Processes (shown planes).
    pub processes: usize,
    /// Threads (lines).
    pub threads: usize,
    /// Events other than metadata.
    pub events: u64,
    /// What xprof would do to this space before converting it that profkit does not reproduce
    /// (see [`crate::preprocess`]); empty when the output is xprof's (its flow ids renamed: see [`crate::preprocess::flows`]).
    pub unreproduced: Vec<&'static str>,
}

/// Reports progress as bytes of input processed (each byte counts twice: once per pass).
pub type Progress<'a> = Option<&'a mut dyn FnMut(u64)>;

/// The planes xprof shows, as indices into the space's planes: the host plane, then the devices.
/// `names` are those of the planes that could be shown, with their indices.
fn select(names: &[(usize, &str)]) -> (Option<usize>, Vec<usize>) {
    let host = names
        .iter()
        .find(|(_, n)| *n == HOST_PLANE_NAME)
        .map(|(i, _)| *i);
    let mut devices = Vec::new();
    for prefix in [GPU_PLANE_PREFIX, TPU_PLANE_PREFIX, CUSTOM_PLANE_PREFIX] {
        devices = names
            .iter()
            .filter(|(_, n)| n.starts_with(prefix))
            .map(|(i, _)| *i)
            .collect();
        if !devices.is_empty() {
            break;
        }
    }
    (host, devices)
}

fn device_pid(plane_id: i64) -> u32 {
    FIRST_DEVICE_PID.wrapping_add(plane_id as u32)
}

/// The trace's processes and threads, for the metadata events: pid to (name, tid to name).
#[derive(Default)]
struct Devices(BTreeMap<u32, (String, BTreeMap<u32, String>)>);

impl Devices {
    /// TSL's `BuildDeviceAndResources`: later planes and lines with the same ids overwrite names.
    fn add(&mut self, pid: u32, name: &str, lines: &[(i64, String)]) {
        let device = self.0.entry(pid).or_default();
        device.0 = name.to_owned();
        for (id, line_name) in lines {
            device.1.insert(*id as u32, line_name.clone());
        }
    }

    fn write(&self, out: &mut String) {
        for (pid, (name, resources)) in &self.0 {
            if !name.is_empty() {
                out.push_str("{\"args\": {\"name\": ");
                push_json_str(out, name);
                out.push_str(&format!(
                    "}}, \"name\": \"process_name\", \"ph\": \"M\", \"pid\": {pid}}},\n"
                ));
            }
            out.push_str(&format!(
                "{{\"args\": {{\"sort_index\": {pid}}}, \"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": {pid}}},\n"
            ));
            for (tid, thread) in resources {
                if !thread.is_empty() {
                    out.push_str("{\"args\": {\"name\": ");
                    push_json_str(out, thread);
                    out.push_str(&format!(
                        "}}, \"name\": \"thread_name\", \"ph\": \"M\", \"pid\": {pid}, \"tid\": {tid}}},\n"
                    ));
                }
                out.push_str(&format!(
                    "{{\"args\": {{\"sort_index\": {tid}}}, \"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": {pid}, \"tid\": {tid}}},\n"
                ));
            }
        }
    }

    fn threads(&self) -> usize {
        self.0.values().map(|(_, r)| r.len()).sum()
    }
}

/// Converts an XSpace held in memory.
pub fn write_space<W: Write>(
    space: &XSpace,
    output: W,
    options: &TraceViewerOptions,
) -> Result<TraceViewerSummary> {
    let mut facts = SpaceFacts::default();
    for plane in &space.planes {
        facts.observe(plane);
    }
    facts.finish();
    let shadows: Vec<Kept> = space
        .planes
        .iter()
        .map(|p| could_show(&p.name).then(|| Box::new(Shadow::of(p, &facts))))
        .collect();
    let names = shown_names(&shadows);
    let mut writer = Writer::new(output, *options, facts);
    let (host, devices) = select(&names);
    writer.metadata(&shadows, host, &devices)?;
    for index in host.into_iter().chain(devices) {
        if let Some(plane) = space.planes.get(index) {
            let pid = if Some(index) == host {
                HOST_PID
            } else {
                device_pid(plane.id)
            };
            if writer.options.preprocess && writer.facts.preprocesses() {
                let mut plane = plane.clone();
                preprocess::preprocess_plane(&mut plane, index, &writer.facts, false);
                writer.plane(
                    crate::indexed::PlaneRef::Owned(&plane),
                    index,
                    pid,
                    &mut |_| {},
                )?;
            } else {
                writer.plane(
                    crate::indexed::PlaneRef::Owned(plane),
                    index,
                    pid,
                    &mut |_| {},
                )?;
            }
        }
    }
    writer.finish()
}

/// Converts an encoded XSpace read from `input`, which is read twice (see the module
/// documentation); memory stays bounded by the largest plane.
pub fn convert<R: Read + Seek, W: Write>(
    mut input: R,
    output: W,
    options: &TraceViewerOptions,
    mut progress: Progress<'_>,
) -> Result<TraceViewerSummary> {
    let start = input.stream_position()?;
    // First pass: names, line layouts, what preprocessing needs, and where each plane is; light
    // (events left encoded) for the planes whose events it does not need.
    let first = match light_pass(&mut input, options, &mut progress) {
        Some(found) => found,
        None => {
            // Something is off: the streaming reader reads it again, and says what.
            input.seek(SeekFrom::Start(start))?;
            full_pass(&mut input, options, &mut progress)?
        }
    };
    let FirstPass {
        facts,
        mut shadows,
        ranges,
        decoded,
    } = first;
    refresh_layouts(&mut input, start, options, &facts, &mut shadows, &ranges)?;
    let names = shown_names(&shadows);
    let (host, devices) = select(&names);
    let mut writer = Writer::new(output, *options, facts);
    writer.metadata(&shadows, host, &devices)?;
    // Second pass: the shown planes, host first.
    let shown: Vec<usize> = host.into_iter().chain(devices.iter().copied()).collect();
    for &index in &shown {
        let (Some(&(from, to)), Some(shadow)) = (
            ranges.get(index),
            shadows.get(index).and_then(Option::as_deref),
        ) else {
            continue;
        };
        input.seek(SeekFrom::Start(start + from))?;
        let mut bytes = None;
        let mut reader = XSpaceReader::new((&mut input).take(to - from), options.read);
        while let Some(item) = reader.next_raw() {
            match item {
                Ok(RawSpaceItem::Plane(p)) => bytes = Some(p),
                Ok(_) => {}
                Err(e) => return Err(located(&mut input, start, options, e)),
            }
        }
        let Some(bytes) = bytes else { continue };
        let pid = if Some(index) == host {
            HOST_PID
        } else {
            device_pid(shadow.plane.id)
        };
        // The host threads' plane, the largest of most profiles, is written from its bytes and an
        // index of its events (its regions beside them), not decoded; so is any plane preprocessing
        // leaves but for regions.
        let plane = if Some(index) == host {
            match IndexedPlane::from_plane_bytes(bytes) {
                Ok(Ok(mut indexed)) if !rewritten(indexed.shadow()) => {
                    if writer.facts.preprocesses() {
                        preprocess::add_regions_indexed(&mut indexed);
                    }
                    Shown::Indexed(indexed)
                }
                Ok(Ok(indexed)) => Shown::Owned(indexed.to_owned_plane()),
                Ok(Err(bytes)) => Shown::Owned(
                    bytes
                        .decode()
                        .map_err(|e| located(&mut input, start, options, e))?,
                ),
                Err(e) => return Err(located(&mut input, start, options, e)),
            }
        } else {
            Shown::Owned(
                bytes
                    .decode()
                    .map_err(|e| located(&mut input, start, options, e))?,
            )
        };
        let plane = match plane {
            Shown::Owned(mut plane) => {
                if options.preprocess {
                    preprocess::preprocess_plane(&mut plane, index, &writer.facts, false);
                }
                Shown::Owned(plane)
            }
            indexed => indexed,
        };
        let plane = plane.as_ref();
        // The plane's bytes are reported as its events are written, so that a bar moves within
        // a plane (most files have a few planes of millions of events each).
        let mut share = EventShare::new(plane.event_count() as u64, to - from);
        writer.plane(plane, index, pid, &mut |events| {
            if let Some(report) = progress.as_mut() {
                report(share.bytes_for(events));
            }
        })?;
        if let Some(report) = progress.as_mut() {
            report(share.rest());
        }
    }
    // The planes not shown were only read lightly: decode them too, so that a malformed one is
    // an error, as it is for xprof.
    for (index, &(from, to)) in ranges.iter().enumerate() {
        if shown.contains(&index) || decoded.get(index).copied().unwrap_or(false) {
            continue;
        }
        input.seek(SeekFrom::Start(start + from))?;
        // Checked through a view: every field walked, nothing built.
        let mut reader = XSpaceReader::new((&mut input).take(to - from), options.read);
        let mut failed = None;
        while let Some(item) = reader.next_raw() {
            let checked = item.and_then(|item| match item {
                RawSpaceItem::Plane(plane) => plane.view().and_then(|view| view.check()),
                _ => Ok(()),
            });
            if let Err(e) = checked {
                failed = Some(e);
                break;
            }
        }
        if let Some(e) = failed {
            return Err(located(&mut input, start, options, e));
        }
    }
    writer.finish()
}

/// The names of the planes that could be shown, with their indices.
fn shown_names(shadows: &[Kept]) -> Vec<(usize, &str)> {
    shadows
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.as_deref().map(|s| (i, s.plane.name.as_str())))
        .collect()
}

/// A plane of the second pass: indexed or decoded.
enum Shown {
    Indexed(IndexedPlane),
    Owned(profkit_xplane::XPlane),
}

impl Shown {
    fn as_ref(&self) -> PlaneRef<'_> {
        match self {
            Shown::Indexed(p) => PlaneRef::Indexed(p),
            Shown::Owned(p) => PlaneRef::Owned(p),
        }
    }
}

/// Whether preprocessing rewrites events of this plane in place beyond adding its regions (the
/// TPU runtime's run ids; the other rewrites are of device planes), so that it is decoded.
fn rewritten(plane: &profkit_xplane::XPlane) -> bool {
    preprocess::has_runtime_events(plane.event_metadata.values().map(|m| m.name.as_str()))
}

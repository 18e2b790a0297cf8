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
//! that a malformed file fails as with the streaming reader. Memory is bounded by the largest plane
//! plus what xprof's grouping needs (its event forest, see [`crate::preprocess`]).
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
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};

use profkit_xplane::constants::{
    COUNTERS_LINE_ID, CUSTOM_PLANE_PREFIX, GPU_PLANE_PREFIX, HOST_PLANE_NAME, TPU_PLANE_PREFIX,
    XLA_ASYNC_OP_LINE_NAME, stats::FLOW, stats::is_hidden_in_trace_viewer,
};
use profkit_xplane::{RawSpaceItem, ReadOptions, SpaceItem, XPlane, XSpace, XSpaceReader, x_stat};

use crate::error::Result;
use crate::preprocess::flows::PlaneFlows;
use crate::preprocess::{self, INTERNAL_EVENTS, SpaceFacts};
use profkit_chrome::flow_stats;
use profkit_json::write::{push_json_str, push_py_float, push_six_digits};

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
fn select(names: &[&str]) -> (Option<usize>, Vec<usize>) {
    let host = names.iter().position(|n| *n == HOST_PLANE_NAME);
    let mut devices = Vec::new();
    for prefix in [GPU_PLANE_PREFIX, TPU_PLANE_PREFIX, CUSTOM_PLANE_PREFIX] {
        devices = names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.starts_with(prefix))
            .map(|(i, _)| i)
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

/// The lines of a plane without their events (and the lines it shows once derived): all the first pass
/// keeps of a plane.
struct Shadow {
    plane: XPlane,
    /// The first pass decoded the plane whole (so it is known to be well formed).
    decoded: bool,
    /// The plane's lines once xprof has derived its timelines, for planes where it does.
    derived: Option<Vec<(i64, String)>>,
    /// How many HLO modules were known when `derived` was made.
    symbols_known: usize,
}

impl Shadow {
    /// The shadow of a lightly decoded plane, its lines decoded one at a time from `bytes`;
    /// `None` on anything unexpected.
    fn of_lite(plane: &crate::lite::PlaneLite, bytes: &bytes::Bytes) -> Option<Shadow> {
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
            decoded: false,
            symbols_known: usize::MAX,
        })
    }

    /// [`Shadow::of`] of a plane the caller no longer needs.
    fn of_owned(plane: XPlane, facts: &SpaceFacts) -> Shadow {
        let mut shadow = Shadow::of_lines(&plane);
        shadow.derived = facts.derived_layout_owned(plane);
        shadow.symbols_known = facts.symbols_known();
        shadow
    }

    fn of(plane: &XPlane, facts: &SpaceFacts) -> Shadow {
        let mut shadow = Shadow::of_lines(plane);
        shadow.derived = facts.derived_layout(plane);
        shadow.symbols_known = facts.symbols_known();
        shadow
    }

    /// The lines of a plane, without derived layout.
    fn of_lines(plane: &XPlane) -> Shadow {
        Shadow {
            plane: preprocess::lines_only(plane),
            decoded: true,
            derived: None,
            symbols_known: 0,
        }
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
    let names: Vec<&str> = space.planes.iter().map(|p| p.name.as_str()).collect();
    let shadows: Vec<Shadow> = space.planes.iter().map(|p| Shadow::of(p, &facts)).collect();
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
                writer.plane(&plane, index, pid, &mut |_| {})?;
            } else {
                writer.plane(plane, index, pid, &mut |_| {})?;
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
    let (facts, shadows, ranges) = match light_pass(&mut input, options, &mut progress) {
        Some(found) => found,
        None => {
            // Something is off: the streaming reader reads it again, and says what.
            input.seek(SeekFrom::Start(start))?;
            full_pass(&mut input, options, &mut progress)?
        }
    };
    let mut shadows = shadows;
    refresh_layouts(&mut input, start, options, &facts, &mut shadows, &ranges)?;
    let names: Vec<&str> = shadows.iter().map(|s| s.plane.name.as_str()).collect();
    let (host, devices) = select(&names);
    let mut writer = Writer::new(output, *options, facts);
    writer.metadata(&shadows, host, &devices)?;
    // Second pass: the shown planes, host first.
    let shown: Vec<usize> = host.into_iter().chain(devices.iter().copied()).collect();
    for &index in &shown {
        let (Some(&(from, to)), Some(shadow)) = (ranges.get(index), shadows.get(index)) else {
            continue;
        };
        input.seek(SeekFrom::Start(start + from))?;
        let mut plane = None;
        for item in XSpaceReader::new((&mut input).take(to - from), options.read) {
            match item {
                Ok(SpaceItem::Plane(p)) => plane = Some(p),
                Ok(_) => {}
                Err(e) => return Err(located(&mut input, start, options, e)),
            }
        }
        let Some(mut plane) = plane else { continue };
        let pid = if Some(index) == host {
            HOST_PID
        } else {
            device_pid(shadow.plane.id)
        };
        if options.preprocess {
            preprocess::preprocess_plane(&mut plane, index, &writer.facts, false);
        }
        // The plane's bytes are reported as its events are written, so that a bar moves within
        // a plane (most files have a few planes of millions of events each).
        let mut share = EventShare::new(&plane, to - from);
        writer.plane(&plane, index, pid, &mut |events| {
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
        if shown.contains(&index) || shadows.get(index).is_some_and(|s| s.decoded) {
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

type FirstPass = (SpaceFacts, Vec<Shadow>, Vec<(u64, u64)>);

/// How many events the writer writes between two progress reports.
const PROGRESS_EVENTS: u64 = 16_384;

/// A plane's encoded bytes handed out to progress in proportion to its events written.
struct EventShare {
    bytes: u64,
    events: u64,
    written: u64,
    reported: u64,
}

impl EventShare {
    fn new(plane: &XPlane, bytes: u64) -> Self {
        EventShare {
            bytes,
            events: plane.lines.iter().map(|l| l.events.len() as u64).sum(),
            written: 0,
            reported: 0,
        }
    }

    /// The bytes to report now that `events` more events are written.
    fn bytes_for(&mut self, events: u64) -> u64 {
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
    fn rest(&mut self) -> u64 {
        let now = self.bytes.saturating_sub(self.reported);
        self.reported = self.bytes;
        now
    }
}

/// Derived layouts made before the metadata plane's HLO modules were all known (a device plane
/// before `/host:metadata` in the file) are made again, reading their planes once more.
fn refresh_layouts<R: Read + Seek>(
    input: &mut R,
    start: u64,
    options: &TraceViewerOptions,
    facts: &SpaceFacts,
    shadows: &mut [Shadow],
    ranges: &[(u64, u64)],
) -> Result<()> {
    for (shadow, &(from, to)) in shadows.iter_mut().zip(ranges) {
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
fn located<R: Read + Seek>(
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
fn full_pass<R: Read>(
    input: &mut R,
    options: &TraceViewerOptions,
    progress: &mut Progress<'_>,
) -> Result<FirstPass> {
    let mut facts = SpaceFacts::default();
    let mut shadows = Vec::new();
    let mut ranges = Vec::new();
    let mut reader = XSpaceReader::new(input, options.read);
    loop {
        let before = reader.offset();
        let Some(item) = reader.next() else { break };
        if let SpaceItem::Plane(mut plane) = item? {
            facts.observe_mut(&mut plane);
            shadows.push(Shadow::of_owned(plane, &facts));
            ranges.push((before, reader.offset()));
        }
        if let Some(report) = progress.as_mut() {
            report(reader.offset() - before);
        }
    }
    facts.finish();
    Ok((facts, shadows, ranges))
}

/// The first pass without decoding the events of planes whose events it does not need (see
/// [`crate::lite`]); `None` when anything is unexpected, for [`full_pass`] to say what.
fn light_pass<R: Read>(
    input: &mut R,
    options: &TraceViewerOptions,
    progress: &mut Progress<'_>,
) -> Option<FirstPass> {
    let mut facts = SpaceFacts::default();
    let mut shadows = Vec::new();
    let mut ranges = Vec::new();
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
                // The light view goes before the plane is decoded whole: one copy at a time.
                drop(lite);
                let mut plane = profkit_xplane::decode_plane(bytes).ok()?;
                facts.observe_mut(&mut plane);
                shadows.push(Shadow::of_owned(plane, &facts));
            } else {
                facts.observe_names(
                    &lite.name,
                    lite.event_metadata.values().map(|m| m.name.as_str()),
                    lite.stat_metadata.values().map(|m| m.name.as_str()),
                );
                shadows.push(Shadow::of_lite(&lite, &bytes)?);
            }
            ranges.push((from, to));
            if let Some(report) = progress.as_mut() {
                report(to - done);
            }
            done = to;
        }
    }
    facts.finish();
    Some((facts, shadows, ranges))
}

/// Writes the document piece by piece.
struct Writer<W: Write> {
    out: W,
    buf: String,
    options: TraceViewerOptions,
    facts: SpaceFacts,
    summary: TraceViewerSummary,
}

impl<W: Write> Writer<W> {
    fn new(out: W, mut options: TraceViewerOptions, facts: SpaceFacts) -> Self {
        if options.follow_source && facts.from_chrome {
            options.counter_events = true;
            options.flow_events = true;
            options.trace_event_members = true;
        }
        let facts = if options.preprocess {
            facts
        } else {
            SpaceFacts {
                grouped: true,
                ..SpaceFacts::default()
            }
        };
        Writer {
            out,
            buf: String::with_capacity(1 << 16),
            options,
            facts,
            summary: TraceViewerSummary::default(),
        }
    }

    fn flush_if_full(&mut self) -> Result<()> {
        if self.buf.len() >= 1 << 16 {
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
        }
        Ok(())
    }

    fn metadata(
        &mut self,
        shadows: &[Shadow],
        host: Option<usize>,
        devices: &[usize],
    ) -> Result<()> {
        let mut table = Devices::default();
        for index in host.iter().copied().chain(devices.iter().copied()) {
            let Some(shadow) = shadows.get(index) else {
                continue;
            };
            let pid = if Some(index) == host {
                HOST_PID
            } else {
                device_pid(shadow.plane.id)
            };
            let lines = preprocess::line_layout(
                &shadow.plane,
                index,
                shadow.derived.as_deref(),
                &self.facts,
            );
            table.add(pid, &shadow.plane.name, &lines);
        }
        self.summary.processes = table.0.len();
        self.summary.unreproduced = self.facts.unreproduced();
        self.summary.threads = table.threads();
        self.buf.push_str(HEADER);
        table.write(&mut self.buf);
        self.flush_if_full()
    }

    /// Writes the events of plane number `index` (preprocessed), with the stats grouping gave
    /// them that the plane does not hold; `written` is told how many events were written since
    /// it was last told, every [`PROGRESS_EVENTS`] events.
    fn plane(
        &mut self,
        plane: &XPlane,
        index: usize,
        pid: u32,
        written: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let marks = preprocess::event_marks(plane, index, &self.facts);
        // xprof's flows, unless the space's own flows are written as flow events.
        let flows = if self.facts.preprocesses() && !self.options.flow_events {
            PlaneFlows::of(plane)
        } else {
            None
        };
        PlaneWriter {
            out: &mut self.out,
            buf: &mut self.buf,
            options: self.options,
            summary: &mut self.summary,
        }
        .plane(plane, pid, marks, flows.as_ref(), written)
    }

    fn finish(mut self) -> Result<TraceViewerSummary> {
        self.buf.push_str(FOOTER);
        self.out.write_all(self.buf.as_bytes())?;
        self.out.flush()?;
        Ok(self.summary)
    }
}

/// Writes the events of planes: the part of [`Writer`] the second pass needs while the reader
/// thread borrows the rest.
struct PlaneWriter<'w, W: Write> {
    out: &'w mut W,
    buf: &'w mut String,
    options: TraceViewerOptions,
    summary: &'w mut TraceViewerSummary,
}

impl<W: Write> PlaneWriter<'_, W> {
    fn flush_if_full(&mut self) -> Result<()> {
        if self.buf.len() >= 1 << 16 {
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
        }
        Ok(())
    }

    fn plane(
        &mut self,
        plane: &XPlane,
        pid: u32,
        mut marks: Option<preprocess::Marks<'_>>,
        xprof_flows: Option<&PlaneFlows>,
        written: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let mut unreported = 0u64;
        let stats: HashMap<i64, &str> = plane
            .stat_metadata
            .iter()
            .map(|(id, m)| (*id, m.name.as_str()))
            .collect();
        let mut args: Vec<(&str, Arg<'_>)> = Vec::new();
        let mut numbers: Vec<(&str, Number)> = Vec::new();
        let mut flows: Vec<(&str, Arg<'_>)> = Vec::new();
        let mut flow_cats: Vec<Arg<'_>> = Vec::new();
        let mut xflows: Vec<u64> = Vec::new();
        for line in &plane.lines {
            let display_name = if line.display_name.is_empty() {
                &line.name
            } else {
                &line.display_name
            };
            if display_name == XLA_ASYNC_OP_LINE_NAME {
                if let (Some(marks), Some(last)) =
                    (marks.as_mut(), line.events.len().checked_sub(1))
                {
                    marks.nth(last);
                }
                continue;
            }
            let display_id = if line.display_id != 0 {
                line.display_id
            } else {
                line.id
            };
            let tid = display_id as u32;
            let counters = self.options.counter_events && line.id == COUNTERS_LINE_ID;
            for event in &line.events {
                let mark = marks.as_mut().and_then(Iterator::next).unwrap_or_default();
                let metadata = plane.event_metadata.get(&event.metadata_id);
                let name = metadata.map_or("", |m| m.name.as_str());
                if INTERNAL_EVENTS.contains(&name) {
                    continue;
                }
                args.clear();
                numbers.clear();
                let mut shown = match metadata {
                    Some(m) if !m.display_name.is_empty() => {
                        args.push(("long_name", Arg::Str(name)));
                        Arg::Str(&m.display_name)
                    }
                    _ => Arg::Str(name),
                };
                let metadata_stats = metadata.map(|m| m.stats.as_slice()).unwrap_or(&[]);
                let mut category = None;
                let mut cat_member = None;
                let mut phase = Phase::Instant;
                flows.clear();
                flow_cats.clear();
                xflows.clear();
                for stat in metadata_stats.iter().chain(&event.stats) {
                    let Some(value) = &stat.value else { continue };
                    let stat_name = stats.get(&stat.metadata_id).copied().unwrap_or("");
                    if is_hidden_in_trace_viewer(stat_name) {
                        continue;
                    }
                    let arg = Arg::of(value, &stats);
                    if self.options.flow_events {
                        match stat_name {
                            // TSL's encoding is a uint64; a `flow` of another kind (an xprof JSON
                            // read back keeps its ids as text) is an arg like any other.
                            FLOW if matches!(arg, Arg::Uint(_)) => {
                                if let Arg::Uint(v) = arg {
                                    xflows.push(v);
                                }
                                continue;
                            }
                            flow_stats::FLOW_OUT => {
                                flows.push(("s", arg));
                                continue;
                            }
                            flow_stats::FLOW_IN => {
                                flows.push(("f", arg));
                                continue;
                            }
                            flow_stats::FLOW_CAT => {
                                flow_cats.push(arg);
                                continue;
                            }
                            _ => {}
                        }
                    }
                    if stat_name == "step_name" {
                        shown = arg;
                    }
                    if stat_name == profkit_chrome::CATEGORY_STAT {
                        category = Some(arg);
                        continue;
                    }
                    if self.options.trace_event_members {
                        match stat_name {
                            "cat" => {
                                cat_member = Some(arg);
                                continue;
                            }
                            profkit_chrome::PHASE_STAT if matches!(arg, Arg::Str("X")) => {
                                phase = Phase::Complete;
                                continue;
                            }
                            _ => {}
                        }
                    }
                    if counters {
                        if let Some(number) = Number::of(value) {
                            numbers.push((stat_name, number));
                        }
                    }
                    args.push((stat_name, arg));
                }
                // A trace's `cat` is the member unless the event model's category takes it.
                match (category, cat_member) {
                    (None, Some(cat)) => category = Some(cat),
                    (Some(_), Some(cat)) => args.push(("cat", cat)),
                    _ => {}
                }
                // TSL's flows, as flow events, for an event without flows of profkit's own (the
                // Chrome importer writes both for one flow).
                if flows.is_empty() {
                    for &value in &xflows {
                        let (id, direction, _) = preprocess::flows::decode(value);
                        let phase = match direction {
                            1 => "f",
                            2 => "s",
                            3 => "t",
                            _ => continue,
                        };
                        flows.push((phase, Arg::Uint(id)));
                    }
                }
                // What grouping gave the event, as if set on it (the last of a key wins).
                let preprocess::Mark {
                    group_id,
                    step_name,
                    is_eager,
                } = mark;
                if let Some(group) = group_id {
                    args.push(("group_id", Arg::Int(group)));
                    if counters {
                        numbers.push(("group_id", Number::Int(i128::from(group))));
                    }
                }
                if let Some(name) = step_name {
                    shown = Arg::Str(name);
                    args.push(("step_name", shown));
                }
                if let Some(eager) = is_eager {
                    args.push(("is_eager", Arg::Int(i64::from(eager))));
                    if counters {
                        numbers.push(("is_eager", Number::Int(i128::from(eager))));
                    }
                }
                // The flow xprof adds (after the event's own stats: it wins).
                if let Some(flow) = xprof_flows.and_then(|f| f.flow(line, event, name)) {
                    args.push((FLOW, Arg::Uint(flow)));
                    if counters {
                        numbers.push((FLOW, Number::Int(i128::from(flow))));
                    }
                }
                let (begin, _) = preprocess::timespan(line, event);
                let duration = event.duration_ps as u64;
                if counters && !numbers.is_empty() {
                    write_counter(self.buf, pid, shown, begin, &mut numbers);
                } else {
                    let event = Shown {
                        pid,
                        tid,
                        name: shown,
                        category,
                        typed: self.options.trace_event_members,
                        phase,
                    };
                    write_event(self.buf, event, begin, duration, &mut args);
                }
                // One category for all the event's flows (the last `flow_cat`), or one per flow
                // stat, in order, when there are as many.
                let per_flow = flow_cats.len() == flows.len();
                for (i, (phase, id)) in flows.iter().enumerate() {
                    let cat = match (per_flow, flow_cats.get(i), flow_cats.last()) {
                        (true, Some(cat), _) | (false, _, Some(cat)) => *cat,
                        _ => Arg::Str("flow"),
                    };
                    let typed = self.options.trace_event_members;
                    write_flow(self.buf, (pid, tid), phase, *id, cat, begin, typed);
                }
                self.summary.events += 1;
                self.flush_if_full()?;
                unreported += 1;
                if unreported == PROGRESS_EVENTS {
                    written(unreported);
                    unreported = 0;
                }
            }
        }
        Ok(())
    }
}

/// A stat value, to be written as xprof's `XStatVisitor::ToString` writes it.
#[derive(Clone, Copy)]
enum Arg<'a> {
    Str(&'a str),
    Int(i64),
    Uint(u64),
    Double(f64),
    Bytes,
}

impl<'a> Arg<'a> {
    fn of(value: &'a x_stat::Value, stats: &HashMap<i64, &'a str>) -> Arg<'a> {
        match value {
            x_stat::Value::DoubleValue(v) => Arg::Double(*v),
            x_stat::Value::Uint64Value(v) => Arg::Uint(*v),
            x_stat::Value::Int64Value(v) => Arg::Int(*v),
            x_stat::Value::StrValue(v) => Arg::Str(v),
            x_stat::Value::BytesValue(_) => Arg::Bytes,
            x_stat::Value::RefValue(id) => Arg::Str(
                i64::try_from(*id)
                    .ok()
                    .and_then(|id| stats.get(&id))
                    .copied()
                    .unwrap_or(""),
            ),
        }
    }

    /// Appends the value as a JSON string.
    /// The value with its JSON type: numbers as numbers (a double that is not finite as text).
    fn push_typed(self, out: &mut String) {
        match self {
            Arg::Int(v) => out.push_str(itoa::Buffer::new().format(v)),
            Arg::Uint(v) => out.push_str(itoa::Buffer::new().format(v)),
            Arg::Double(v) if v.is_finite() => push_py_float(out, v),
            other => other.push(out),
        }
    }

    fn push(self, out: &mut String) {
        match self {
            Arg::Str(s) => push_json_str(out, s),
            Arg::Int(v) => {
                out.push('"');
                out.push_str(itoa::Buffer::new().format(v));
                out.push('"');
            }
            Arg::Uint(v) => {
                out.push('"');
                out.push_str(itoa::Buffer::new().format(v));
                out.push('"');
            }
            Arg::Double(v) => {
                out.push('"');
                push_six_digits(out, v);
                out.push('"');
            }
            Arg::Bytes => out.push_str("\"<opaque bytes>\""),
        }
    }
}

/// A numeric stat, for counter events.
#[derive(Clone, Copy)]
enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    fn of(value: &x_stat::Value) -> Option<Number> {
        match value {
            x_stat::Value::DoubleValue(v) if v.is_finite() => Some(Number::Float(*v)),
            x_stat::Value::Uint64Value(v) => Some(Number::Int(i128::from(*v))),
            x_stat::Value::Int64Value(v) => Some(Number::Int(i128::from(*v))),
            _ => None,
        }
    }
}

/// Sorts `(key, value)` pairs by key and keeps the last of equal keys: a Python dict filled in
/// order, then dumped with `sort_keys`.
fn sort_last_wins<T>(pairs: &mut Vec<(&str, T)>) {
    pairs.reverse();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    pairs.dedup_by(|later, earlier| later.0 == earlier.0);
}

fn push_u32(out: &mut String, v: u32) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// Where an event is shown, its name and its category (`cat`), whether its args keep their
/// types, and its phase when the Chrome importer noted it.
struct Shown<'a> {
    pid: u32,
    tid: u32,
    name: Arg<'a>,
    category: Option<Arg<'a>>,
    typed: bool,
    phase: Phase,
}

/// The phase of an event without a duration: an instant, or a complete event of no duration
/// where the Chrome importer noted one.
#[derive(Clone, Copy)]
enum Phase {
    Instant,
    Complete,
}

fn write_event(
    out: &mut String,
    event: Shown<'_>,
    begin_ps: u64,
    duration_ps: u64,
    args: &mut Vec<(&str, Arg<'_>)>,
) {
    let Shown {
        pid,
        tid,
        name,
        category,
        typed,
        phase,
    } = event;
    out.push('{');
    if !args.is_empty() {
        sort_last_wins(args);
        out.push_str("\"args\": {");
        for (i, (key, value)) in args.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            push_json_str(out, key);
            out.push_str(": ");
            if typed {
                value.push_typed(out);
            } else {
                value.push(out);
            }
        }
        out.push_str("}, ");
    }
    // The event model's category (a Paddle node's event type) is the event's `cat`.
    if let Some(category) = category {
        out.push_str("\"cat\": ");
        category.push(out);
        out.push_str(", ");
    }
    let complete = duration_ps != 0 || matches!(phase, Phase::Complete);
    if complete {
        out.push_str("\"dur\": ");
        push_py_float(out, duration_ps as f64 / 1e6);
        out.push_str(", ");
    }
    out.push_str("\"name\": ");
    name.push(out);
    if complete {
        out.push_str(", \"ph\": \"X\", \"pid\": ");
        push_u32(out, pid);
        out.push_str(", \"tid\": ");
    } else {
        out.push_str(", \"ph\": \"i\", \"pid\": ");
        push_u32(out, pid);
        out.push_str(", \"s\": \"t\", \"tid\": ");
    }
    push_u32(out, tid);
    out.push_str(", \"ts\": ");
    push_py_float(out, begin_ps as f64 / 1e6);
    out.push_str("},\n");
}

/// A flow event at the start of the event it binds to (`"bp": "e"` on the end, so that it binds
/// to the enclosing slice as the start does).
fn write_flow(
    out: &mut String,
    (pid, tid): (u32, u32),
    phase: &str,
    id: Arg<'_>,
    cat: Arg<'_>,
    begin_ps: u64,
    typed: bool,
) {
    out.push('{');
    if phase == "f" {
        out.push_str("\"bp\": \"e\", ");
    }
    out.push_str("\"cat\": ");
    cat.push(out);
    out.push_str(", \"id\": ");
    if typed {
        id.push_typed(out);
    } else {
        id.push(out);
    }
    out.push_str(", \"name\": ");
    cat.push(out);
    out.push_str(", \"ph\": \"");
    out.push_str(phase);
    out.push_str("\", \"pid\": ");
    push_u32(out, pid);
    out.push_str(", \"tid\": ");
    push_u32(out, tid);
    out.push_str(", \"ts\": ");
    push_py_float(out, begin_ps as f64 / 1e6);
    out.push_str("},\n");
}

fn write_counter(
    out: &mut String,
    pid: u32,
    name: Arg<'_>,
    begin_ps: u64,
    numbers: &mut Vec<(&str, Number)>,
) {
    sort_last_wins(numbers);
    out.push_str("{\"args\": {");
    for (i, (key, value)) in numbers.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_json_str(out, key);
        out.push_str(": ");
        match value {
            Number::Int(v) => out.push_str(&v.to_string()),
            Number::Float(v) => push_py_float(out, *v),
        }
    }
    out.push_str("}, \"name\": ");
    name.push(out);
    out.push_str(", \"ph\": \"C\", \"pid\": ");
    push_u32(out, pid);
    out.push_str(", \"ts\": ");
    push_py_float(out, begin_ps as f64 / 1e6);
    out.push_str("},\n");
}

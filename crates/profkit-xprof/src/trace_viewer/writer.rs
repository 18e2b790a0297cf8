//! The second pass: the document written piece by piece, each shown plane's events as its plane
//! is read again.

use std::collections::HashMap;
use std::io::Write;

use rayon::prelude::*;

use crate::indexed::{PlaneRef, Stat};
use profkit_xplane::constants::{
    COUNTERS_LINE_ID, XLA_ASYNC_OP_LINE_NAME, stats::FLOW, stats::is_hidden_in_trace_viewer,
};

use crate::error::Result;
use crate::preprocess::flows::PlaneFlows;
use crate::preprocess::{self, INTERNAL_EVENTS, SpaceFacts};
use profkit_chrome::flow_stats;

use super::json::{Arg, Number, Phase, Shown, write_counter, write_event, write_flow};
use super::passes::{Kept, PROGRESS_EVENTS};
use super::*;

/// Writes the document piece by piece.
pub(super) struct Writer<W: Write> {
    pub(super) out: W,
    pub(super) buf: String,
    pub(super) options: TraceViewerOptions,
    pub(super) facts: SpaceFacts,
    pub(super) summary: TraceViewerSummary,
    /// The texts of a batch of pieces written on the pool, kept from batch to batch (see
    /// [`PlaneWriter::texts`]).
    pub(super) texts: Vec<String>,
}

impl<W: Write> Writer<W> {
    pub(super) fn new(out: W, mut options: TraceViewerOptions, facts: SpaceFacts) -> Self {
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
            texts: Vec::new(),
        }
    }

    pub(super) fn flush_if_full(&mut self) -> Result<()> {
        if self.buf.len() >= 1 << 16 {
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
        }
        Ok(())
    }

    pub(super) fn metadata(
        &mut self,
        shadows: &[Kept],
        host: Option<usize>,
        devices: &[usize],
    ) -> Result<()> {
        let mut table = Devices::default();
        for index in host.iter().copied().chain(devices.iter().copied()) {
            let Some(shadow) = shadows.get(index).and_then(Option::as_deref) else {
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
    pub(super) fn plane(
        &mut self,
        plane: PlaneRef<'_>,
        index: usize,
        pid: u32,
        written: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let marks = preprocess::event_marks(plane.shadow(), index, &self.facts);
        // xprof's flows, unless the space's own flows are written as flow events.
        let flows = if self.facts.preprocesses() && !self.options.flow_events {
            PlaneFlows::of(plane.shadow())
        } else {
            None
        };
        PlaneWriter {
            out: &mut self.out,
            buf: &mut self.buf,
            options: self.options,
            summary: &mut self.summary,
            texts: &mut self.texts,
        }
        .plane(plane, pid, marks, flows.as_ref(), written)
    }

    pub(super) fn finish(mut self) -> Result<TraceViewerSummary> {
        self.buf.push_str(FOOTER);
        self.out.write_all(self.buf.as_bytes())?;
        self.out.flush()?;
        Ok(self.summary)
    }
}

/// Writes the events of planes: the part of [`Writer`] the second pass needs while the reader
/// thread borrows the rest.
pub(super) struct PlaneWriter<'w, W: Write> {
    pub(super) out: &'w mut W,
    pub(super) buf: &'w mut String,
    pub(super) options: TraceViewerOptions,
    pub(super) summary: &'w mut TraceViewerSummary,
    /// One text a piece of a batch written on the pool, cleared and reused batch after batch:
    /// a text freshly allocated for each piece (most are above the allocator's threshold for
    /// blocks of their own) cost a page fault every 4 KiB of the output.
    pub(super) texts: &'w mut Vec<String>,
}

impl<W: Write> PlaneWriter<'_, W> {
    pub(super) fn flush_if_full(&mut self) -> Result<()> {
        if self.buf.len() >= 1 << 16 {
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
        }
        Ok(())
    }

    pub(super) fn plane(
        &mut self,
        plane: PlaneRef<'_>,
        pid: u32,
        marks: Option<preprocess::Marks<'_>>,
        xprof_flows: Option<&PlaneFlows>,
        written: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let context = PlaneContext {
            stats: plane
                .shadow()
                .stat_metadata
                .iter()
                .map(|(id, m)| (*id, m.name.as_str()))
                .collect(),
            plane,
            options: self.options,
            pid,
            xprof_flows,
        };
        let pieces = pieces(plane);
        let mut unreported = 0u64;
        let mut done = |summary: &mut TraceViewerSummary, events: u64| {
            summary.events += events;
            unreported += events;
            if unreported >= PROGRESS_EVENTS {
                written(unreported);
                unreported = 0;
            }
        };
        let threads = rayon::current_num_threads();
        if threads <= 1 || pieces.len() <= 1 {
            for piece in &pieces {
                let events = context.piece(piece, marks.as_ref(), self.buf);
                done(self.summary, events);
                self.flush_if_full()?;
            }
        } else {
            // A few pieces a thread at a time, written in order: the output is the one-thread
            // output, and memory holds one batch of text.
            for batch in pieces.chunks(threads * PIECES_PER_THREAD) {
                if self.texts.len() < batch.len() {
                    self.texts.resize_with(batch.len(), String::new);
                }
                let texts = &mut self.texts[..batch.len()];
                let counts: Vec<u64> = batch
                    .par_iter()
                    .zip(texts.par_iter_mut())
                    .map(|(piece, text)| {
                        text.clear();
                        context.piece(piece, marks.as_ref(), text)
                    })
                    .collect();
                for (text, events) in texts.iter().zip(counts) {
                    // What is buffered goes first, then the text as it is (no copy into the
                    // buffer).
                    if !self.buf.is_empty() {
                        self.out.write_all(self.buf.as_bytes())?;
                        self.buf.clear();
                    }
                    self.out.write_all(text.as_bytes())?;
                    done(self.summary, events);
                }
            }
        }
        if unreported > 0 {
            written(unreported);
        }
        Ok(())
    }
}

/// Events of a line written as one piece, at most this many: small enough that a batch of
/// pieces a thread stays a few megabytes of text, large enough that a piece is worth a task.
const PIECE_EVENTS: usize = 4_096;

/// Pieces handed to each thread at a time.
const PIECES_PER_THREAD: usize = 2;

/// A run of one line's events written on its own: line `line`'s events `from..to`, whose first
/// event is the plane's `mark`th (the order grouping's marks are in).
struct Piece {
    line: usize,
    from: usize,
    to: usize,
    mark: u32,
}

/// The pieces of a plane's lines, in the output's order (lines xprof leaves out make none, but
/// count in the marks' order).
fn pieces(plane: PlaneRef<'_>) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut mark = 0u32;
    for (k, line) in plane.shadow().lines.iter().enumerate() {
        let display_name = if line.display_name.is_empty() {
            &line.name
        } else {
            &line.display_name
        };
        let count = plane.line_len(k);
        if display_name != XLA_ASYNC_OP_LINE_NAME {
            let mut from = 0;
            while from < count {
                let to = count.min(from + PIECE_EVENTS);
                out.push(Piece {
                    line: k,
                    from,
                    to,
                    mark: mark.saturating_add(from as u32),
                });
                from = to;
            }
        }
        mark = mark.saturating_add(count as u32);
    }
    out
}

/// What every event of a plane is written with.
struct PlaneContext<'p> {
    plane: PlaneRef<'p>,
    stats: HashMap<i64, &'p str>,
    options: TraceViewerOptions,
    pid: u32,
    xprof_flows: Option<&'p PlaneFlows>,
}

impl PlaneContext<'_> {
    /// Writes the events of `piece` to `buf`; returns how many were written.
    fn piece(&self, piece: &Piece, marks: Option<&preprocess::Marks<'_>>, buf: &mut String) -> u64 {
        let plane = self.plane;
        let stats = &self.stats;
        let xprof_flows = self.xprof_flows;
        let pid = self.pid;
        let Some(line) = plane.shadow().lines.get(piece.line) else {
            return 0;
        };
        let events = plane.line_range(piece.line, piece.from, piece.to);
        let mut marks = marks.map(|m| m.starting_at(piece.mark));
        let mut count = 0u64;
        let mut args: Vec<(&str, Arg<'_>)> = Vec::new();
        let mut numbers: Vec<(&str, Number)> = Vec::new();
        let mut flows: Vec<(&str, Arg<'_>)> = Vec::new();
        let mut flow_cats: Vec<Arg<'_>> = Vec::new();
        let mut xflows: Vec<u64> = Vec::new();
        {
            let display_id = if line.display_id != 0 {
                line.display_id
            } else {
                line.id
            };
            let tid = display_id as u32;
            let counters = self.options.counter_events && line.id == COUNTERS_LINE_ID;
            for event in events {
                let mark = marks.as_mut().and_then(Iterator::next).unwrap_or_default();
                let metadata = plane.shadow().event_metadata.get(&event.metadata_id());
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
                let event_stats = event.has_stats().then(|| event.stats());
                for stat in metadata_stats
                    .iter()
                    .map(Stat::of)
                    .chain(event_stats.into_iter().flatten())
                {
                    let Some(value) = stat.value else { continue };
                    let stat_name = stats.get(&stat.metadata_id).copied().unwrap_or("");
                    if is_hidden_in_trace_viewer(stat_name) {
                        continue;
                    }
                    let arg = Arg::of(value, stats);
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
                if let Some(flow) = xprof_flows.and_then(|f| f.flow(line, &event, name)) {
                    args.push((FLOW, Arg::Uint(flow)));
                    if counters {
                        numbers.push((FLOW, Number::Int(i128::from(flow))));
                    }
                }
                let (begin, _) = event.timespan(line.timestamp_ns);
                let duration = event.duration_ps() as u64;
                if counters && !numbers.is_empty() {
                    write_counter(buf, pid, shown, begin, &mut numbers);
                } else {
                    let event = Shown {
                        pid,
                        tid,
                        name: shown,
                        category,
                        typed: self.options.trace_event_members,
                        phase,
                    };
                    write_event(buf, event, begin, duration, &mut args);
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
                    write_flow(buf, (pid, tid), phase, *id, cat, begin, typed);
                }
                count += 1;
            }
        }
        count
    }
}

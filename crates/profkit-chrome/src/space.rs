//! The XSpace built from the trace once every event is read: the host plane and a plane per GPU,
//! a line per thread (and per async name), counters, metadata shared by the events of a name, and
//! the `Task Environment` plane.

use std::collections::HashMap;

use profkit_xplane::constants::{
    COUNTERS_LINE_ID, COUNTERS_LINE_NAME, GPU_PLANE_PREFIX, HOST_PLANE_NAME, TASK_ENV_PLANE_NAME,
    stats,
};
use profkit_xplane::{PlaneBuilder, StatValue, XLine, XPlane, XSpace};

use crate::arg::{Arg, Id};
use crate::async_events::first_begin;
use crate::error::{Error, Result};
use crate::flows::flow_categories;
use crate::plane_metadata::Metadata;
use crate::read::ChromeImport;
use crate::trace::{Process, Thread, Trace, Track};
use crate::warnings::WarningKind;
use crate::{SOURCE_CHROME, SOURCE_FORMAT_STAT, xflow};

/// Below this many items a line's item buffer is not shrunk while it is converted (the copy would
/// cost more than the memory is worth).
pub(crate) const SHRINK_MIN_ITEMS: usize = 1 << 12;

impl Trace {
    /// A stat value: a string that many events share (a category, a launch grid) is stored once,
    /// as a `ref_value` naming a stat metadata, as xprof stores its repeated strings; one that
    /// only this event has is stored in the event.
    pub(crate) fn stat(&self, arg: Arg) -> StatValue {
        match arg {
            Arg::Int(i) => StatValue::Int64(i),
            Arg::Uint(u) => StatValue::Uint64(u),
            Arg::Double(d) => StatValue::Double(d),
            Arg::Str(s) if self.strings.is_repeated(s) => {
                StatValue::Ref(self.strings.get(s).to_owned())
            }
            Arg::Str(s) => StatValue::Str(self.strings.get(s).to_owned()),
        }
    }

    pub(crate) fn into_import(mut self) -> Result<ChromeImport> {
        for thread in &self.threads {
            for open in &thread.open {
                let name = self.strings.get(open.name).to_owned();
                let (tid, pid) = (
                    match &thread.track {
                        Track::Thread(t) => t.text(),
                        Track::Async(_) => String::new(),
                    },
                    thread.pid.text(),
                );
                self.warnings.push(WarningKind::UnendedBegin, || {
                    format!(
                        "begin of {name:?} on thread {tid} of process {pid} never ends; left out"
                    )
                });
            }
        }
        let mut open_async: Vec<_> = self.async_open.drain().collect();
        // By id, then scope, category and process: the map's order is not the same from run to
        // run, and these warnings must be.
        open_async.sort_by(|a, b| {
            (&a.0.2, &a.0.3, a.0.1)
                .cmp(&(&b.0.2, &b.0.3, b.0.1))
                .then_with(|| a.0.0.text().cmp(&b.0.0.text()))
                .then_with(|| first_begin(&a.1).cmp(&first_begin(&b.1)))
        });
        for (key, items) in open_async {
            for (_, item) in items {
                let name = self.strings.get(item.name).to_owned();
                self.warnings.push(WarningKind::UnendedBegin, || {
                    format!(
                        "async begin of {name:?} (id {}) never ends; left out",
                        key.2
                    )
                });
            }
        }
        for thread in &mut self.threads {
            thread
                .items
                .sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        }
        let flows = self.bind_flows();
        let flow_word = self.strings.id("flow");
        for thread in &mut self.threads {
            // Each item's flow args in the order they were bound (the sort is stable).
            thread.flow_args.sort_by_key(|(i, _)| *i);
            if thread.flow_care {
                flow_categories(thread, &self.keys, flow_word);
            }
        }
        // The first start and the last end of the items kept, exact.
        let (start, stop) = match self.clock.base {
            Some(_) => (self.clock.first, self.clock.last),
            None => (0, 0),
        };
        if stop - start > i128::from(i64::MAX / 2) {
            return Err(Error::Json {
                path: "traceEvents".into(),
                line: 0,
                column: 0,
                reason: format!(
                    "the events span {} microseconds, more than an XSpace holds (about 53 days)",
                    (stop - start) / 1_000_000
                ),
            });
        }
        // The processes xprof's output names by a GPU plane (`/device:GPU:0`) are that plane again,
        // whatever their pid (which for GPU events would otherwise be the device, as in Kineto's).
        for thread in &mut self.threads {
            let name = self
                .processes
                .get(&thread.pid)
                .and_then(|p| p.name.as_deref());
            let named = name
                .and_then(|n| n.strip_prefix(GPU_PLANE_PREFIX))
                .and_then(|n| n.parse().ok());
            if named.is_some() {
                thread.gpu = named;
            }
        }
        // Line names say their process when the host plane holds several.
        let mut host_processes: Vec<&Id> = self
            .threads
            .iter()
            .filter(|t| t.gpu.is_none())
            .map(|t| &t.pid)
            .chain(self.counters.iter().map(|(p, _)| p))
            .collect();
        host_processes.sort_by_key(|p| p.text());
        host_processes.dedup();
        let several = host_processes.len() > 1;
        let process_label = |pid: &Id, processes: &HashMap<Id, Process>| {
            processes
                .get(pid)
                .and_then(|p| p.name.clone())
                .unwrap_or_else(|| format!("pid {}", pid.text()))
        };
        // Items hold times from the clock's base (in range: the span was checked).
        let start_rel = self.clock.rel(start);
        let rel = |t: i64| i64::try_from(i128::from(t) - i128::from(start_rel)).unwrap_or(i64::MAX);

        // Threads by plane: the host (None) and each GPU.
        // A process named by a GPU plane is that plane even without a thread: xprof's output names
        // every device plane, also one whose lines are all empty (and so not written), and reading
        // that output must give the plane again for writing to be a fixed point.
        let named_devices = self.processes.values().filter_map(|p| {
            p.name
                .as_deref()
                .and_then(|n| n.strip_prefix(GPU_PLANE_PREFIX))
                .and_then(|n| n.parse::<i64>().ok())
        });
        let mut devices: Vec<i64> = self
            .threads
            .iter()
            .filter_map(|t| t.gpu)
            .chain(named_devices)
            .collect();
        devices.sort_unstable();
        devices.dedup();
        let mut overlapping_lines = Vec::new();
        let mut planes = Vec::new();
        let threads = std::mem::take(&mut self.threads);
        let mut by_plane: Vec<Vec<Thread>> = (0..=devices.len()).map(|_| Vec::new()).collect();
        for thread in threads {
            let slot = match thread.gpu {
                Some(d) => devices.binary_search(&d).map_or(0, |i| i + 1),
                None => 0,
            };
            if let Some(list) = by_plane.get_mut(slot) {
                list.push(thread);
            }
        }
        for (slot, threads) in by_plane.into_iter().enumerate() {
            let device = slot.checked_sub(1).and_then(|i| devices.get(i)).copied();
            let plane_index = planes.len();
            let ids = self.line_ids(&threads);
            let mut lines: Vec<(i64, Thread)> = ids.into_iter().zip(threads).collect();
            // Lines in id order, so that reading a trace this module's output wrote gives the
            // same space again.
            lines.sort_by_key(|(id, _)| *id);
            let counters = if device.is_none() {
                let mut counters = std::mem::take(&mut self.counters);
                counters.sort_by_key(|(_, i)| i.start);
                counters
            } else {
                Vec::new()
            };
            let mut plane = XPlane::default();
            let mut builder = PlaneBuilder::new(&mut plane);
            match device {
                None => {
                    builder.set_id(0).set_name(HOST_PLANE_NAME);
                }
                Some(d) => {
                    builder
                        .set_id(plane_index as i64)
                        .set_name(format!("{GPU_PLANE_PREFIX}{d}"));
                    self.device_stats(&mut builder, d);
                }
            }
            // Counter events are named by process when the host plane holds several.
            let counter_names: Vec<u32> = counters
                .iter()
                .map(|(pid, item)| {
                    if several {
                        let name = format!(
                            "{} / {}",
                            process_label(pid, &self.processes),
                            self.strings.get(item.name)
                        );
                        self.strings.id(&name)
                    } else {
                        item.name
                    }
                })
                .collect();
            let mut meta = Metadata::new(&self.strings);
            for (_, t) in &lines {
                let mut flow_args = t.flow_args.as_slice();
                for (index, item) in t.items.iter().enumerate() {
                    let extra = flow_args.iter().take_while(|(i, _)| *i == index).count();
                    let (mine, rest) = flow_args.split_at(extra);
                    flow_args = rest;
                    let own = t.args.get(item.at, item.len);
                    meta.count(
                        item.name,
                        own.iter().chain(mine.iter().map(|(_, a)| a)),
                        &self.strings,
                    );
                }
            }
            for ((_, item), &name) in counters.iter().zip(&counter_names) {
                meta.count(
                    name,
                    self.counter_args.get(item.at, item.len).iter(),
                    &self.strings,
                );
            }
            meta.finish();
            meta.declare(&mut builder, &self.strings, |a| self.stat(a));
            drop(builder);
            meta.name_events(&mut plane, &self.strings);
            for (id, thread) in lines {
                let thread_name = match (&thread.name, &thread.track) {
                    // A line always has a name (the writer leaves out empty ones, which would
                    // read back under another name).
                    (Some(n), _) if !n.is_empty() => n.clone(),
                    (_, Track::Thread(tid)) => match (device, tid.text()) {
                        (Some(_), tid) => format!("stream {tid}"),
                        (None, tid) if tid.is_empty() => "thread".to_owned(),
                        (None, tid) => tid,
                    },
                    (_, Track::Async(name)) => match self.strings.get(*name) {
                        "" => "async".to_owned(),
                        name => name.to_owned(),
                    },
                };
                if device.is_some() || matches!(thread.track, Track::Async(_)) {
                    overlapping_lines.push((plane_index, id));
                }
                let first = thread.items.first().map_or(start_rel, |i| i.start);
                let timestamp_ns = rel(first) / 1000;
                let line_ps = i128::from(timestamp_ns) * 1000 + i128::from(start_rel);
                let display_name = if several && device.is_none() {
                    format!(
                        "{} / {thread_name}",
                        process_label(&thread.pid, &self.processes)
                    )
                } else {
                    String::new()
                };
                // Converted from the last item back, the items' buffer shrinking as it empties
                // and each chunk of args freed once its items are converted, so that the line's
                // events take the place of its items rather than adding to them (the peak of
                // memory is here).
                let mut items = thread.items;
                let mut args = thread.args;
                let mut flow_args = thread.flow_args;
                let mut events = Vec::with_capacity(items.len());
                let mut shrink_at = items.len() / 2;
                while let Some(item) = items.pop() {
                    let index = items.len();
                    let from = flow_args
                        .iter()
                        .rposition(|(i, _)| *i != index)
                        .map_or(0, |p| p + 1);
                    events.push(
                        meta.event(
                            item.name,
                            i64::try_from(i128::from(item.start) - line_ps).unwrap_or(i64::MAX),
                            i64::try_from(i128::from(item.end) - i128::from(item.start))
                                .unwrap_or(i64::MAX),
                            args.get(item.at, item.len),
                            flow_args.get(from..).unwrap_or_default(),
                            &self.strings,
                        ),
                    );
                    args.release(item.at, item.len);
                    flow_args.truncate(from);
                    if items.len() <= shrink_at && items.len() >= SHRINK_MIN_ITEMS {
                        items.shrink_to_fit();
                        flow_args.shrink_to_fit();
                        shrink_at = items.len() / 2;
                    }
                }
                drop(items);
                drop(args);
                drop(flow_args);
                events.reverse();
                plane.lines.push(XLine {
                    id,
                    display_id: 0,
                    name: thread_name,
                    display_name,
                    timestamp_ns,
                    duration_ps: 0,
                    events,
                });
            }
            if !counters.is_empty() {
                overlapping_lines.push((plane_index, COUNTERS_LINE_ID));
                let mut events = Vec::with_capacity(counters.len());
                for ((_, item), name) in counters.into_iter().zip(counter_names) {
                    events.push(meta.event(
                        name,
                        rel(item.start),
                        0,
                        self.counter_args.get(item.at, item.len),
                        &[],
                        &self.strings,
                    ));
                }
                plane.lines.push(XLine {
                    id: COUNTERS_LINE_ID,
                    name: COUNTERS_LINE_NAME.to_owned(),
                    events,
                    ..XLine::default()
                });
            }
            xflow::add_flow_stats(&mut plane);
            planes.push(plane);
        }
        let mut env = XPlane::default();
        {
            let mut builder = PlaneBuilder::new(&mut env);
            builder
                .set_id(planes.len() as i64)
                .set_name(TASK_ENV_PLANE_NAME);
            let ns = |ps: i128| u64::try_from(ps.div_euclid(1000).max(0)).unwrap_or(u64::MAX);
            builder.add_stat(stats::PROFILE_START_TIME, ns(start));
            builder.add_stat(stats::PROFILE_STOP_TIME, ns(stop));
            for (key, value) in &self.distributed {
                builder.add_stat(key, json_stat(value));
            }
            if let Some(unit) = &self.display_time_unit {
                builder.add_stat("display_time_unit", unit.as_str());
            }
            builder.add_stat(SOURCE_FORMAT_STAT, SOURCE_CHROME);
        }
        planes.push(env);
        let (warnings, warning_counts) = self.warnings.finish();
        let precision_ps = 10i64.pow(6u32.saturating_sub(self.decimals.min(6)));
        Ok(ChromeImport {
            space: XSpace {
                planes,
                ..XSpace::default()
            },
            events: self.events,
            flows,
            skipped: self.skipped,
            warnings,
            warning_counts,
            overlapping_lines,
            precision_ps,
            kineto: self.kineto,
            paddle: self.paddle,
        })
    }

    /// Line ids for the threads of one plane: a numeric tid keeps its number when it is the
    /// first to claim it, the others take the smallest free ids; lines come in order of their
    /// sort index (when given) and id.
    pub(crate) fn line_ids(&self, threads: &[Thread]) -> Vec<i64> {
        let mut used = std::collections::HashSet::new();
        let mut ids: Vec<Option<i64>> = threads
            .iter()
            .map(|t| match &t.track {
                Track::Thread(Id::Int(i))
                    if *i >= 0 && *i != COUNTERS_LINE_ID && used.insert(*i) =>
                {
                    Some(*i)
                }
                _ => None,
            })
            .collect();
        // The others take the smallest free ids in order of their sort index (`M`
        // `thread_sort_index`), then of first appearance.
        let mut order: Vec<usize> = (0..threads.len()).collect();
        order.sort_by_key(|&i| threads.get(i).and_then(|t| t.sort_index).unwrap_or(0));
        let mut next_free: i64 = 1;
        for index in order {
            if let Some(slot @ None) = ids.get_mut(index) {
                while used.contains(&next_free) {
                    next_free += 1;
                }
                used.insert(next_free);
                *slot = Some(next_free);
            }
        }
        ids.into_iter().map(|id| id.unwrap_or(0)).collect()
    }
}

/// A stat value for a JSON value of the top level.
pub(crate) fn json_stat(value: &serde_json::Value) -> StatValue {
    match value {
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => StatValue::Int64(i),
            (_, Some(u), _) => StatValue::Uint64(u),
            (_, _, Some(f)) => StatValue::Double(f),
            _ => StatValue::Str(n.to_string()),
        },
        serde_json::Value::String(s) => StatValue::Str(s.clone()),
        serde_json::Value::Bool(b) => StatValue::Int64(i64::from(*b)),
        other => StatValue::Str(other.to_string()),
    }
}

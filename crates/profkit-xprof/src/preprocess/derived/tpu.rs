//! xprof's `DeriveLinesFromStats` on a TensorCore plane: `Framework Name Scope`, `Framework Ops`
//! and `Source code` from the `tf_op` and `source` stats of its events, and `Host Offload Ops row
//! N` from host-offload copies (`HostOffloadEventProcessor`).

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use profkit_xplane::{XPlane, XStat, x_stat};

use super::builder::{Editor, Lines, Span, metadata_of, sort_by_span, span_of};
use super::gpu::{StatReader, int_or_uint, int_value};
use super::tf_op::{FrameworkLines, add_op_event};
use super::{
    LINE_HOST_OFFLOAD_END, LINE_HOST_OFFLOAD_START, LINE_SOURCE, LINE_TF_NAME_SCOPE, LINE_TF_OP,
};
use crate::preprocess::stats::start_timestamp_ns;

/// The label of buffers in host memory in HLO shapes (`S(kHostMemorySpace)`).
const HOST_MEMORY_LABEL: &str = "S(5)";
/// The op names whose `-start` … `-done` pairs are host-offload copies.
const OFFLOAD_KEYWORDS: &[&str] = &[
    "copy-start",
    "copy-done",
    "dynamic-slice-start",
    "dynamic-slice-done",
    "dynamic-update-slice-start",
    "dynamic-update-slice-done",
];

/// What one event says for the derived lines.
struct EventInfo {
    tf_op: Option<String>,
    source: Option<String>,
    group: Option<u64>,
    is_async: Option<u64>,
}

/// Whether any event of the plane can give a derived event: the plane has `tf_op` or `source`
/// stats, or an op on a buffer in host memory (`S(5)` in its name).
pub(super) fn could_derive(plane: &XPlane) -> bool {
    plane
        .stat_metadata
        .values()
        .any(|m| m.name == "tf_op" || m.name == "source")
        || plane
            .event_metadata
            .values()
            .any(|m| m.name.contains(HOST_MEMORY_LABEL))
}

/// `DeriveLinesFromStats` on a TensorCore plane.
pub(super) fn derive(plane: &mut XPlane) {
    if !could_derive(plane) {
        plane.lines.retain(|l| !l.events.is_empty());
        return;
    }
    // Every event of every line, sorted by start then shorter first.
    let mut order: Vec<(Span, (usize, usize))> = Vec::new();
    for (li, line) in plane.lines.iter().enumerate() {
        for (ei, event) in line.events.iter().enumerate() {
            order.push((span_of(line, event), (li, ei)));
        }
    }
    sort_by_span(&mut order);
    let mut editor = Editor::new(plane);
    let start = start_timestamp_ns(plane);
    let mut lines = Lines::new(false);
    let ops = lines.add(
        plane,
        &mut editor,
        LINE_TF_OP,
        "Framework Ops",
        start,
        vec![],
    );
    let name_scope = lines.add(
        plane,
        &mut editor,
        LINE_TF_NAME_SCOPE,
        "Framework Name Scope",
        start,
        vec![ops],
    );
    let source = lines.add(
        plane,
        &mut editor,
        LINE_SOURCE,
        "Source code",
        start,
        vec![],
    );
    let framework = FrameworkLines { name_scope, ops };
    let mut offload = HostOffload::new(start);
    let reader = StatReader::new(plane);
    for (span, (li, ei)) in order {
        let Some(info) = event_info(plane, &reader, li, ei) else {
            continue;
        };
        if info.is_async.is_some_and(|a| a != 0) {
            continue;
        }
        let group = info.group.map(|g| g as i64);
        if let Some(tf_op) = info.tf_op.filter(|t| !t.is_empty()) {
            add_op_event(
                plane,
                &mut editor,
                &mut lines,
                framework,
                &tf_op,
                span,
                group,
            );
        }
        if let Some(text) = info.source.filter(|s| !s.is_empty()) {
            let id = editor.event_metadata(plane, &text);
            lines.expand_or_add(plane, &mut editor, source, id, span, group, None);
        }
        offload.process(plane, &mut editor, &reader, (li, ei), span);
    }
    lines.reset(plane, name_scope, 0);
    plane.lines.retain(|l| !l.events.is_empty());
}

/// The stats of an event and its metadata that derive lines, the event's own last.
fn event_info(plane: &XPlane, reader: &StatReader, li: usize, ei: usize) -> Option<EventInfo> {
    let event = plane.lines.get(li)?.events.get(ei)?;
    let mut info = EventInfo {
        tf_op: None,
        source: None,
        group: None,
        is_async: None,
    };
    let metadata_stats: &[XStat] = metadata_of(plane, event.metadata_id)
        .map(|m| m.stats.as_slice())
        .unwrap_or(&[]);
    for stat in metadata_stats.iter().chain(&event.stats) {
        match reader.name(stat) {
            "tf_op" => info.tf_op = Some(reader.str_or_ref(stat)),
            "group_id" => info.group = Some(int_or_uint(stat)),
            "source" => info.source = Some(reader.str_or_ref(stat)),
            "_a" => info.is_async = Some(int_or_uint(stat)),
            _ => {}
        }
    }
    Some(info)
}

/// One `Host Offload Ops row N` line: its plane line and the end of its last event.
struct Row {
    line: usize,
    frontier: u64,
}

/// A `-start` event waiting for its `-done`: its span and metadata.
struct Pending {
    span: Span,
    metadata_id: i64,
}

/// xprof's `HostOffloadEventProcessor`: pairs each `-start` with the next `-done` of the same
/// instruction and lays the copies out on as few rows as do not overlap.
struct HostOffload {
    start_ns: i64,
    seen: HashMap<String, VecDeque<Pending>>,
    rows: Vec<Row>,
}

impl HostOffload {
    fn new(start_ns: i64) -> HostOffload {
        HostOffload {
            start_ns,
            seen: HashMap::default(),
            rows: Vec::new(),
        }
    }

    /// The event's display name, if it is a host-offload op (`IsHostOffloadOpName`).
    fn offload_name(plane: &XPlane, metadata_id: i64) -> Option<String> {
        let metadata = metadata_of(plane, metadata_id)?;
        let display = if metadata.display_name.is_empty() {
            &metadata.name
        } else {
            &metadata.display_name
        };
        let is_offload = OFFLOAD_KEYWORDS
            .iter()
            .any(|k| display.contains(k) && metadata.name.contains(HOST_MEMORY_LABEL));
        is_offload.then(|| display.clone())
    }

    /// `GetOffloadInstructionName`: `offload-<op>.<id>` from `<op>-start.<id>` or `-done`.
    fn instruction_name(op_name: &str) -> String {
        let parts: Vec<&str> = op_name.split('.').collect();
        let id = if parts.len() < 2 {
            "0"
        } else {
            parts.last().copied().unwrap_or("0")
        };
        let op = match (op_name.find("-start"), op_name.find("-done")) {
            (Some(i), _) | (None, Some(i)) => &op_name[..i],
            (None, None) => op_name,
        };
        format!("offload-{op}.{id}")
    }

    fn process(
        &mut self,
        plane: &mut XPlane,
        editor: &mut Editor,
        reader: &StatReader,
        (li, ei): (usize, usize),
        span: Span,
    ) {
        let Some(metadata_id) = plane
            .lines
            .get(li)
            .and_then(|l| l.events.get(ei))
            .map(|e| e.metadata_id)
        else {
            return;
        };
        let Some(display) = Self::offload_name(plane, metadata_id) else {
            return;
        };
        let name = Self::instruction_name(&display);
        let queue = self.seen.entry(name.clone()).or_default();
        if display.contains("-start") {
            queue.push_back(Pending { span, metadata_id });
            return;
        }
        if !display.contains("-done") {
            return;
        }
        let Some(started) = queue.pop_front() else {
            return;
        };
        let copy = Span {
            begin: started.span.begin,
            duration: span.end().wrapping_sub(started.span.begin),
        };
        let mut index: Option<usize> = None;
        let mut lowest = copy.begin;
        for (i, row) in self.rows.iter().enumerate() {
            if row.frontier <= lowest {
                index = Some(i);
                lowest = row.frontier;
            }
        }
        let max_rows = (LINE_HOST_OFFLOAD_END - LINE_HOST_OFFLOAD_START + 1) as usize;
        let index = match index {
            Some(i) => i,
            None => {
                if self.rows.len() < max_rows {
                    let n = self.rows.len();
                    let line = editor.line(plane, LINE_HOST_OFFLOAD_START + n as i64);
                    if let Some(l) = plane.lines.get_mut(line) {
                        l.name = format!("Host Offload Ops row {n}");
                        l.timestamp_ns = self.start_ns;
                    }
                    self.rows.push(Row {
                        line,
                        frontier: copy.end(),
                    });
                }
                match self.rows.len().checked_sub(1) {
                    Some(i) => i,
                    None => return,
                }
            }
        };
        let Some(row) = self.rows.get_mut(index) else {
            return;
        };
        row.frontier = row.frontier.max(copy.end());
        let row_line = row.line;
        let metadata = editor.new_event_metadata(plane);
        if let Some(m) = plane.event_metadata.get_mut(&metadata) {
            m.display_name = name;
        }
        let async_stat = editor.stat_metadata(plane, "_a");
        let raw_stat = editor.stat_metadata(plane, "raw_bytes_accessed");
        let shape_stat = editor.stat_metadata(plane, "shape_with_layout");
        let mut stats = vec![XStat {
            metadata_id: async_stat,
            value: Some(x_stat::Value::Int64Value(1)),
        }];
        if let Some(done) = metadata_of(plane, metadata_id) {
            for stat in &done.stats {
                if reader.name(stat) == "raw_bytes_accessed" {
                    stats.push(XStat {
                        metadata_id: raw_stat,
                        value: Some(x_stat::Value::Int64Value(int_value(stat))),
                    });
                }
            }
        }
        if let Some(start) = metadata_of(plane, started.metadata_id) {
            for stat in &start.stats {
                if reader.name(stat) == "shape_with_layout" {
                    stats.push(XStat {
                        metadata_id: shape_stat,
                        value: Some(x_stat::Value::StrValue(reader.str_or_ref(stat))),
                    });
                }
            }
        }
        if let Some(line) = plane.lines.get_mut(row_line) {
            let base = line.timestamp_ns.wrapping_mul(1000);
            line.events.push(profkit_xplane::XEvent {
                metadata_id: metadata,
                duration_ps: copy.duration as i64,
                data: Some(profkit_xplane::x_event::Data::OffsetPs(
                    (copy.begin as i64).wrapping_sub(base),
                )),
                stats,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_names() {
        assert_eq!(
            HostOffload::instruction_name("copy-start.1"),
            "offload-copy.1"
        );
        assert_eq!(HostOffload::instruction_name("copy-done"), "offload-copy.0");
        assert_eq!(
            HostOffload::instruction_name("dynamic-slice-done.12"),
            "offload-dynamic-slice.12"
        );
    }
}

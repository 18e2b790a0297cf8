//! xprof's `DeriveEventsFromAnnotations` on a GPU plane: per stream, the `XLA Modules`, `XLA
//! Ops`, `Framework Name Scope`, `Framework Ops` (and `Source code`) lines of its kernels, and the
//! display order of every line.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use profkit_events::report::std_sort;
use profkit_xplane::{XEvent, XLine, XPlane, XStat, x_stat};

use super::Symbols;
use super::builder::{Editor, Lines, Span, sort_by_span, span_of};
use super::tf_op::{FrameworkLines, add_op_event};
use super::{
    DEVICE_DERIVED_MAX, DEVICE_DERIVED_MIN, LINE_HLO_MODULE, LINE_HLO_OP, LINE_SOURCE,
    LINE_TF_NAME_SCOPE, LINE_TF_OP, is_derived_line_id,
};
use crate::preprocess::stats::start_timestamp_ns;

/// Derived line ids each stream takes (`kThreadIdSource - kThreadIdTfNameScope + 1`), each with a
/// display position after the stream's own.
const LINES_PER_STREAM: i64 = LINE_SOURCE - LINE_TF_NAME_SCOPE + 1;
/// The offset from a stream's first derived line id of its `Command Buffers` line (xprof 2.24.2's
/// own id for it is not seen in its output; this one is free in each stream's range).
const COMMAND_BUFFERS_OFFSET: i64 = 4;
/// The kind of the `Command Buffers` line, for [`derived_line`].
const LINE_COMMAND_BUFFERS: i64 = LINE_TF_NAME_SCOPE + COMMAND_BUFFERS_OFFSET;

/// A stat value as TSL's visitor reads it, by the stat's metadata name.
/// The names are those of the plane when it is made: stats added later are not read.
pub(super) struct StatReader {
    names: HashMap<i64, String>,
}

impl StatReader {
    pub fn new(plane: &XPlane) -> StatReader {
        StatReader {
            names: plane
                .stat_metadata
                .iter()
                .map(|(id, m)| (*id, m.name.clone()))
                .collect(),
        }
    }

    pub fn name(&self, stat: &XStat) -> &str {
        self.names.get(&stat.metadata_id).map_or("", String::as_str)
    }

    /// [`StatReader::str_or_ref`] without a copy.
    pub fn str_or_ref_ref<'a>(&'a self, stat: &'a XStat) -> &'a str {
        crate::preprocess::stats::str_or_ref(stat, &self.names)
    }

    /// `StrOrRefValue`: the text, the referenced stat metadata's name, or empty.
    pub fn str_or_ref(&self, stat: &XStat) -> String {
        self.str_or_ref_ref(stat).to_owned()
    }
}

pub(super) use crate::preprocess::stats::{int_or_uint, int_value};

/// `UintValue`.
fn uint_value(stat: &XStat) -> u64 {
    match stat.value {
        Some(x_stat::Value::Uint64Value(v)) => v,
        _ => 0,
    }
}

/// xprof's `GpuEventStats`: what a device event's own stats say (borrowed from the event).
#[derive(Clone, Debug, Default)]
struct GpuEventStats<'a> {
    tf_op: &'a str,
    hlo_ops: Vec<&'a str>,
    hlo_module: &'a str,
    program_id: Option<u64>,
    kernel_details: &'a str,
    correlation_id: Option<i64>,
    group_id: Option<i64>,
    cuda_graph_exec_id: Option<u64>,
    cuda_graph_id: Option<u64>,
    scope_range_id: Option<i64>,
}

impl<'a> GpuEventStats<'a> {
    fn of(reader: &'a StatReader, stats: &'a [XStat]) -> GpuEventStats<'a> {
        let mut out = GpuEventStats::default();
        for stat in stats {
            match reader.name(stat) {
                "tf_op" => out.tf_op = reader.str_or_ref_ref(stat),
                "hlo_op" => out.hlo_ops = reader.str_or_ref_ref(stat).split("::").collect(),
                "hlo_module" => out.hlo_module = reader.str_or_ref_ref(stat),
                "program_id" => out.program_id = Some(int_or_uint(stat)),
                "kernel_details" => out.kernel_details = reader.str_or_ref_ref(stat),
                "correlation_id" => out.correlation_id = Some(int_or_uint(stat) as i64),
                "group_id" => out.group_id = Some(int_value(stat)),
                "cuda_graph_exec_id" => out.cuda_graph_exec_id = Some(uint_value(stat)),
                "cuda_graph_id" => out.cuda_graph_id = Some(uint_value(stat)),
                "scope_range_id" => out.scope_range_id = Some(int_value(stat)),
                _ => {}
            }
        }
        out
    }

    fn is_kernel(&self) -> bool {
        !self.kernel_details.is_empty()
    }

    fn is_xla_op(&self) -> bool {
        !self.hlo_ops.is_empty()
    }

    /// `HloModuleEventName`: `module(program_id)`, or the module alone (into `out`).
    fn module_event_name(&self, out: &mut String) {
        out.clear();
        out.push_str(self.hlo_module);
        if let Some(id) = self.program_id {
            out.push('(');
            out.push_str(itoa::Buffer::new().format(id));
            out.push(')');
        }
    }

    /// `HloOpEventPrefix` and the op: what makes an op's metadata name unique to its module
    /// (into `out`).
    fn op_event_name(&self, op: &str, out: &mut String) {
        out.clear();
        match self.program_id {
            Some(id) => out.push_str(itoa::Buffer::new().format(id)),
            None => out.push_str(self.hlo_module),
        }
        out.push('/');
        out.push_str(op);
    }
}

/// `DeriveEventsFromAnnotations` on a GPU plane.
pub(super) fn derive(plane: &mut XPlane, symbols: &Symbols, group_names: &BTreeMap<i64, String>) {
    let counts: Vec<usize> = plane.lines.iter().map(|l| l.events.len()).collect();
    let derives = could_derive(plane);
    let grouped = has_group_stat(plane.stat_metadata.values().map(|m| m.name.as_str()));
    let mut editor = (derives || grouped).then(|| Editor::new(plane));
    if let (true, Some(editor)) = (grouped, editor.as_mut()) {
        super::steps::derive(plane, editor, group_names);
    }
    let reader = StatReader::new(plane);
    number_lines(plane, &counts, |plane, stream, first| {
        if let (true, Some(editor)) = (derives, editor.as_mut()) {
            derive_for_stream(plane, editor, &reader, symbols, stream, first);
        }
    });
    plane.lines.retain(|l| !l.events.is_empty());
}

/// Whether a plane with stat metadata named `stat_names` has `group_id`s (and may get a `Steps`
/// line).
pub(super) fn has_group_stat<'a>(mut stat_names: impl Iterator<Item = &'a str>) -> bool {
    stat_names.any(|n| n == "group_id")
}

/// The lines [`derive`] leaves on the plane, without deriving their events: each stream's
/// derived lines are added (with a placeholder event) where some kernel of the stream gives them
/// an event, which a scan of the kernels tells without merging anything.
pub(super) fn derive_layout(plane: &mut XPlane, symbols: &Symbols) {
    let counts: Vec<usize> = plane.lines.iter().map(|l| l.events.len()).collect();
    if super::steps::has_steps(plane) {
        plane.lines.push(super::steps::placeholder());
    }
    let reader = StatReader::new(plane);
    number_lines(plane, &counts, |plane, stream, first| {
        let present = present_lines(plane, &reader, symbols, stream);
        for (kind, name) in present {
            let (id, name) = derived_line(first, kind, stream, name);
            plane.lines.push(XLine {
                id,
                name,
                events: vec![XEvent::default()],
                ..XLine::default()
            });
        }
    });
    plane.lines.retain(|l| !l.events.is_empty());
}

/// The derived lines (kind, name) that the kernels of stream `stream` give events.
fn present_lines(
    plane: &XPlane,
    reader: &StatReader,
    symbols: &Symbols,
    stream: i64,
) -> Vec<(i64, &'static str)> {
    let (mut scope, mut ops, mut modules, mut hlo, mut source, mut buffers) =
        (false, false, false, false, false, false);
    let framework = |name: &str, scope: &mut bool, ops: &mut bool| {
        *ops = true;
        let op = super::tf_op::parse(name);
        if matches!(
            op.category,
            super::tf_op::Category::TensorFlow | super::tf_op::Category::Jax
        ) && op.name.contains('/')
        {
            *scope = true;
        }
    };
    for line in &plane.lines {
        if line.id != stream || is_derived_line_id(line.id) {
            continue;
        }
        for event in &line.events {
            let stats = GpuEventStats::of(reader, &event.stats);
            if !stats.is_kernel() && stats.cuda_graph_exec_id.is_none() {
                continue;
            }
            modules |= !stats.hlo_module.is_empty();
            buffers |= stats.cuda_graph_id.is_some_and(|g| g != 0);
            if stats.is_xla_op() {
                hlo = true;
                let innermost = stats.hlo_ops.last().copied().unwrap_or("");
                if let Some(symbol) = symbols.resolve(stats.program_id, innermost) {
                    if !symbol.tf_op_name.is_empty() {
                        framework(&symbol.tf_op_name, &mut scope, &mut ops);
                    }
                    source |= !symbol.source_info.is_empty();
                }
            } else if !stats.tf_op.is_empty() {
                framework(stats.tf_op, &mut scope, &mut ops);
            }
        }
    }
    let mut out = Vec::new();
    for (present, kind, name) in [
        (scope, LINE_TF_NAME_SCOPE, "Framework Name Scope"),
        (ops, LINE_TF_OP, "Framework Ops"),
        (modules, LINE_HLO_MODULE, "XLA Modules"),
        (hlo, LINE_HLO_OP, "XLA Ops"),
        (source, LINE_SOURCE, "Source code"),
    ] {
        if present {
            out.push((kind, name));
        }
    }
    if buffers {
        out.push((LINE_COMMAND_BUFFERS, "Command Buffers"));
    }
    out
}

/// Whether any kernel of the plane can give a derived event: the plane has kernel stats
/// (`kernel_details`, `cuda_graph_exec_id`) and stats to derive from (`hlo_module`, `hlo_op`,
/// `tf_op`, `cuda_graph_id`). Without them xprof derives nothing and only numbers the lines.
pub(super) fn could_derive(plane: &XPlane) -> bool {
    could_derive_with(plane.stat_metadata.values().map(|m| m.name.as_str()))
}

/// [`could_derive`] from the names of the plane's stat metadata.
pub(super) fn could_derive_with<'a>(stat_names: impl Iterator<Item = &'a str> + Clone) -> bool {
    if has_group_stat(stat_names.clone()) {
        return true;
    }
    let has = |names: &[&str]| stat_names.clone().any(|n| names.contains(&n));
    has(&["kernel_details", "cuda_graph_exec_id"])
        && has(&["hlo_module", "hlo_op", "tf_op", "cuda_graph_id"])
}

/// Gives every line its display position, streams in xprof's order (compute streams first, then
/// more events first, with libstdc++'s `std::sort`), each followed by the positions of its derived
/// lines; `derive` adds a stream's derived lines (stream line id, first derived id) first.
/// `counts` are the events of each line before any is derived.
pub(super) fn number_lines(
    plane: &mut XPlane,
    counts: &[usize],
    mut derive: impl FnMut(&mut XPlane, i64, i64),
) {
    let streams: Vec<usize> = (0..plane.lines.len())
        .filter(|&i| {
            plane
                .lines
                .get(i)
                .is_some_and(|l| !is_derived_line_id(l.id))
        })
        .collect();
    let compute: Vec<bool> = plane
        .lines
        .iter()
        .map(|l| l.name.contains("Compute"))
        .collect();
    let is_compute = |i: usize| compute.get(i).copied().unwrap_or(false);
    let count = |i: usize| counts.get(i).copied().unwrap_or(0);
    let mut sorted = streams;
    std_sort(&mut sorted, &|&a: &usize, &b: &usize| {
        if is_compute(a) == is_compute(b) {
            count(a) > count(b)
        } else {
            is_compute(a)
        }
    });
    let stream_ids: Vec<i64> = sorted
        .iter()
        .filter_map(|&i| plane.lines.get(i).map(|l| l.id))
        .collect();
    let mut next = DEVICE_DERIVED_MIN;
    let mut ordered: Vec<i64> = Vec::new();
    for stream in stream_ids {
        if next + LINES_PER_STREAM > DEVICE_DERIVED_MAX {
            break;
        }
        derive(plane, stream, next);
        ordered.push(stream);
        // xprof 2.24.2 gives each stream six positions after its own: its derived lines in the
        // order name scope, framework ops, modules, XLA ops, source, command buffers.
        for kind in [
            LINE_TF_NAME_SCOPE,
            LINE_TF_OP,
            LINE_HLO_MODULE,
            LINE_HLO_OP,
            LINE_SOURCE,
        ] {
            ordered.push(derived_line(next, kind, stream, "").0);
        }
        ordered.push(next + COMMAND_BUFFERS_OFFSET);
        next += LINES_PER_STREAM;
    }
    let mut position: HashMap<i64, i64> = HashMap::default();
    for (index, id) in ordered.iter().enumerate() {
        position.insert(*id, index as i64 + 1);
    }
    for line in &mut plane.lines {
        if let Some(&p) = position.get(&line.id) {
            line.display_id = p;
        }
    }
}

/// The derived line id and name of kind `kind` (a `kThreadId...` constant) for the stream `from`,
/// whose derived ids start at `first`.
fn derived_line(first: i64, kind: i64, from: i64, name: &str) -> (i64, String) {
    (
        first + (kind - LINE_TF_NAME_SCOPE),
        format!("{name} - from #{from}"),
    )
}

/// `DeriveEventsFromAnnotationsForLines` for the stream(s) with line id `stream`.
fn derive_for_stream(
    plane: &mut XPlane,
    editor: &mut Editor,
    reader: &StatReader,
    symbols: &Symbols,
    stream: i64,
    first: i64,
) {
    // The stream's events are taken out of the plane while the derived lines are added, and put
    // back after (derived lines never have a stream's id).
    let mut taken: Vec<(usize, Vec<XEvent>)> = Vec::new();
    let mut order: Vec<(Span, (usize, usize))> = Vec::new();
    for (li, line) in plane.lines.iter_mut().enumerate() {
        if line.id != stream || is_derived_line_id(line.id) {
            continue;
        }
        for (ei, event) in line.events.iter().enumerate() {
            order.push((span_of(line, event), (taken.len(), ei)));
        }
        taken.push((li, std::mem::take(&mut line.events)));
    }
    sort_by_span(&mut order);
    derive_events(
        plane, editor, reader, symbols, stream, first, &taken, &order,
    );
    for (li, events) in taken {
        if let Some(line) = plane.lines.get_mut(li) {
            line.events = events;
        }
    }
}

/// The derived lines of one stream from its kernels (`taken`, visited in `order`).
#[allow(clippy::too_many_arguments)]
fn derive_events(
    plane: &mut XPlane,
    editor: &mut Editor,
    reader: &StatReader,
    symbols: &Symbols,
    stream: i64,
    first: i64,
    taken: &[(usize, Vec<XEvent>)],
    order: &[(Span, (usize, usize))],
) {
    let start = start_timestamp_ns(plane);
    let mut lines = Lines::new(true);
    let mut add = |lines: &mut Lines, (id, name): (i64, String), deps: Vec<usize>| {
        lines.add(plane, editor, id, &name, start, deps)
    };
    let line = |kind: i64, name: &str| derived_line(first, kind, stream, name);
    let ops = add(&mut lines, line(LINE_TF_OP, "Framework Ops"), vec![]);
    let name_scope = add(
        &mut lines,
        line(LINE_TF_NAME_SCOPE, "Framework Name Scope"),
        vec![ops],
    );
    let hlo_ops = add(&mut lines, line(LINE_HLO_OP, "XLA Ops"), vec![]);
    let command_buffers = add(
        &mut lines,
        (
            first + COMMAND_BUFFERS_OFFSET,
            format!("Command Buffers - from #{stream}"),
        ),
        vec![],
    );
    let modules = add(
        &mut lines,
        line(LINE_HLO_MODULE, "XLA Modules"),
        vec![name_scope, hlo_ops, command_buffers],
    );
    let source = add(&mut lines, line(LINE_SOURCE, "Source code"), vec![]);
    let framework = FrameworkLines { name_scope, ops };
    let mut name = String::new();
    for &(span, (slot, ei)) in order {
        let Some(event) = taken.get(slot).and_then(|(_, events)| events.get(ei)) else {
            continue;
        };
        let stats = GpuEventStats::of(reader, &event.stats);
        if !stats.is_kernel() && stats.cuda_graph_exec_id.is_none() {
            continue;
        }
        // The scope range ids from the innermost level out to the module's.
        let level_scopes: Vec<Option<i64>> = stats
            .scope_range_id
            .map(|id| symbols.scope_chain(id))
            .unwrap_or_default()
            .into_iter()
            .map(Some)
            .collect();
        if !stats.hlo_module.is_empty() {
            stats.module_event_name(&mut name);
            let id = editor.event_metadata(plane, &name);
            let scope = level_scopes.last().copied().flatten();
            lines.expand_or_add(plane, editor, modules, id, span, stats.group_id, scope);
        }
        if stats.is_xla_op() {
            let innermost = stats.hlo_ops.last().copied().unwrap_or("");
            let symbol = symbols.resolve(stats.program_id, innermost);
            let mut ids: Vec<i64> = Vec::with_capacity(stats.hlo_ops.len());
            for op in &stats.hlo_ops {
                stats.op_event_name(op, &mut name);
                let id = editor.event_metadata(plane, &name);
                super::builder::set_display_name_if_empty(plane, id, || (*op).to_owned());
                ids.push(id);
            }
            let scopes: Vec<Option<i64>> = if level_scopes.len() == ids.len() {
                level_scopes.iter().rev().copied().collect()
            } else {
                Vec::new()
            };
            lines.expand_or_add_levels(plane, editor, hlo_ops, &ids, span, stats.group_id, &scopes);
            if let Some(graph) = stats.cuda_graph_id.filter(|&g| g != 0) {
                if let Some(level) = ids.len().checked_sub(1) {
                    let graph_stat = editor.stat_metadata(plane, "cuda_graph_id");
                    lines.set_stat_on_level(
                        plane,
                        hlo_ops,
                        level,
                        graph_stat,
                        x_stat::Value::Uint64Value(graph),
                    );
                    if let Some(correlation) = stats.correlation_id {
                        let stat = editor.stat_metadata(plane, "correlation_id");
                        lines.set_stat_on_level(
                            plane,
                            hlo_ops,
                            level,
                            stat,
                            x_stat::Value::Int64Value(correlation),
                        );
                    }
                }
            }
            let (tf_op_name, source_info) = symbol.map_or(("", ""), |s| {
                (s.tf_op_name.as_str(), s.source_info.as_str())
            });
            if !tf_op_name.is_empty() {
                let group = stats.group_id;
                add_op_event(
                    plane, editor, &mut lines, framework, tf_op_name, span, group,
                );
            }
            if !source_info.is_empty() {
                let id = editor.event_metadata(plane, source_info);
                lines.expand_or_add(plane, editor, source, id, span, stats.group_id, None);
            }
        } else if !stats.tf_op.is_empty() {
            add_op_event(
                plane,
                editor,
                &mut lines,
                framework,
                stats.tf_op,
                span,
                stats.group_id,
            );
        }
        // A CUDA graph's inner node: its graph's `Command Buffer <id>` event, which keeps the
        // last node's correlation id.
        if let Some(graph) = stats.cuda_graph_id.filter(|&g| g != 0) {
            name.clear();
            name.push_str("Command Buffer ");
            name.push_str(itoa::Buffer::new().format(graph));
            let id = editor.event_metadata(plane, &name);
            lines.expand_or_add(
                plane,
                editor,
                command_buffers,
                id,
                span,
                stats.group_id,
                None,
            );
            let graph_stat = editor.stat_metadata(plane, "cuda_graph_id");
            let value = x_stat::Value::Uint64Value(graph);
            lines.set_stat_on_level(plane, command_buffers, 0, graph_stat, value);
            if let Some(correlation) = stats.correlation_id {
                let stat = editor.stat_metadata(plane, "correlation_id");
                let value = x_stat::Value::Int64Value(correlation);
                lines.set_stat_on_level(plane, command_buffers, 0, stat, value);
            }
        }
    }
}

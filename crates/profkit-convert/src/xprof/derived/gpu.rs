//! xprof's `DeriveEventsFromAnnotations` on a GPU plane: per stream, the `XLA Modules`, `XLA
//! Ops`, `Framework Name Scope`, `Framework Ops` (and `Source code`) lines of its kernels, and the
//! display order of every line.

use std::collections::HashMap;

use profkit_events::report::std_sort;
use profkit_xplane::{XPlane, XStat, x_stat};

use super::Symbols;
use super::builder::{Editor, Lines, Span, sort_by_span, span_of, start_timestamp_ns};
use super::tf_op::{FrameworkLines, add_op_event};
use super::{
    DEVICE_DERIVED_MAX, DEVICE_DERIVED_MIN, LINE_HLO_MODULE, LINE_HLO_OP, LINE_SOURCE,
    LINE_TF_NAME_SCOPE, LINE_TF_OP, is_derived_line_id,
};

/// Derived line ids each stream takes (`kThreadIdSource - kThreadIdTfNameScope + 1`), each with a
/// display position after the stream's own.
const LINES_PER_STREAM: i64 = LINE_SOURCE - LINE_TF_NAME_SCOPE + 1;
/// A line id no line has, for the display position xprof leaves unused after each stream's
/// derived lines.
const UNUSED_POSITION: i64 = i64::MIN;

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

    /// `StrOrRefValue`: the text, the referenced stat metadata's name, or empty.
    pub fn str_or_ref(&self, stat: &XStat) -> String {
        match &stat.value {
            Some(x_stat::Value::StrValue(s)) => s.clone(),
            Some(x_stat::Value::RefValue(r)) => i64::try_from(*r)
                .ok()
                .and_then(|r| self.names.get(&r))
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

/// `IntOrUintValue`.
pub(super) fn int_or_uint(stat: &XStat) -> u64 {
    match stat.value {
        Some(x_stat::Value::Uint64Value(v)) => v,
        Some(x_stat::Value::Int64Value(v)) => v as u64,
        _ => 0,
    }
}

/// `IntValue`.
pub(super) fn int_value(stat: &XStat) -> i64 {
    match stat.value {
        Some(x_stat::Value::Int64Value(v)) => v,
        _ => 0,
    }
}

/// `UintValue`.
fn uint_value(stat: &XStat) -> u64 {
    match stat.value {
        Some(x_stat::Value::Uint64Value(v)) => v,
        _ => 0,
    }
}

/// xprof's `GpuEventStats`: what a device event's own stats say.
#[derive(Clone, Debug, Default)]
struct GpuEventStats {
    tf_op: String,
    hlo_ops: Vec<String>,
    hlo_module: String,
    program_id: Option<u64>,
    kernel_details: String,
    correlation_id: Option<i64>,
    group_id: Option<i64>,
    cuda_graph_exec_id: Option<u64>,
    cuda_graph_id: Option<u64>,
    scope_range_id: Option<i64>,
}

impl GpuEventStats {
    fn of(reader: &StatReader, stats: &[XStat]) -> GpuEventStats {
        let mut out = GpuEventStats::default();
        for stat in stats {
            match reader.name(stat) {
                "tf_op" => out.tf_op = reader.str_or_ref(stat),
                "hlo_op" => {
                    out.hlo_ops = reader
                        .str_or_ref(stat)
                        .split("::")
                        .map(str::to_owned)
                        .collect();
                }
                "hlo_module" => out.hlo_module = reader.str_or_ref(stat),
                "program_id" => out.program_id = Some(int_or_uint(stat)),
                "kernel_details" => out.kernel_details = reader.str_or_ref(stat),
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

    /// `HloModuleEventName`: `module(program_id)`, or the module alone.
    fn module_event_name(&self) -> String {
        match self.program_id {
            Some(id) => format!("{}({id})", self.hlo_module),
            None => self.hlo_module.clone(),
        }
    }

    /// `HloOpEventPrefix`: what makes an op's metadata name unique to its module.
    fn op_prefix(&self) -> String {
        match self.program_id {
            Some(id) => format!("{id}/"),
            None => format!("{}/", self.hlo_module),
        }
    }
}

/// `DeriveEventsFromAnnotations` on a GPU plane.
pub(super) fn derive(plane: &mut XPlane, symbols: &Symbols) {
    let counts: Vec<usize> = plane.lines.iter().map(|l| l.events.len()).collect();
    let mut editor = could_derive(plane).then(|| Editor::new(plane));
    number_lines(plane, &counts, |plane, stream, first| {
        if let Some(editor) = editor.as_mut() {
            derive_for_stream(plane, editor, symbols, stream, first);
        }
    });
    plane.lines.retain(|l| !l.events.is_empty());
}

/// Whether any kernel of the plane can give a derived event: the plane has kernel stats
/// (`kernel_details`, `cuda_graph_exec_id`) and stats to derive from (`hlo_module`, `hlo_op`,
/// `tf_op`). Without them xprof derives nothing and only numbers the lines.
pub(super) fn could_derive(plane: &XPlane) -> bool {
    could_derive_with(plane.stat_metadata.values().map(|m| m.name.as_str()))
}

/// [`could_derive`] from the names of the plane's stat metadata.
pub(super) fn could_derive_with<'a>(stat_names: impl Iterator<Item = &'a str> + Clone) -> bool {
    let has = |names: &[&str]| stat_names.clone().any(|n| names.contains(&n));
    has(&["kernel_details", "cuda_graph_exec_id"]) && has(&["hlo_module", "hlo_op", "tf_op"])
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
        // order name scope, framework ops, modules, XLA ops, source, then one left unused.
        for kind in [
            LINE_TF_NAME_SCOPE,
            LINE_TF_OP,
            LINE_HLO_MODULE,
            LINE_HLO_OP,
            LINE_SOURCE,
        ] {
            ordered.push(derived_line(next, kind, stream, "").0);
        }
        ordered.push(UNUSED_POSITION);
        next += LINES_PER_STREAM;
    }
    let mut position: HashMap<i64, i64> = HashMap::new();
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
    symbols: &Symbols,
    stream: i64,
    first: i64,
) {
    let reader = StatReader::new(plane);
    let mut stats: Vec<GpuEventStats> = Vec::new();
    let mut order: Vec<(Span, usize)> = Vec::new();
    for line in &plane.lines {
        if line.id != stream || is_derived_line_id(line.id) {
            continue;
        }
        for event in &line.events {
            order.push((span_of(line, event), stats.len()));
            stats.push(GpuEventStats::of(&reader, &event.stats));
        }
    }
    drop(reader);
    sort_by_span(&mut order);
    let mut stats: Vec<Option<GpuEventStats>> = stats.into_iter().map(Some).collect();
    let start = start_timestamp_ns(plane);
    let mut lines = Lines::new(true);
    let mut add = |lines: &mut Lines, kind: i64, name: &str, deps: Vec<usize>| {
        let (id, name) = derived_line(first, kind, stream, name);
        lines.add(plane, editor, id, &name, start, deps)
    };
    let ops = add(&mut lines, LINE_TF_OP, "Framework Ops", vec![]);
    let name_scope = add(
        &mut lines,
        LINE_TF_NAME_SCOPE,
        "Framework Name Scope",
        vec![ops],
    );
    let hlo_ops = add(&mut lines, LINE_HLO_OP, "XLA Ops", vec![]);
    let modules = add(
        &mut lines,
        LINE_HLO_MODULE,
        "XLA Modules",
        vec![name_scope, hlo_ops],
    );
    let source = add(&mut lines, LINE_SOURCE, "Source code", vec![]);
    let framework = FrameworkLines { name_scope, ops };
    for (span, index) in order {
        let Some(stats) = stats.get_mut(index).and_then(Option::take) else {
            continue;
        };
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
            let id = editor.event_metadata(plane, &stats.module_event_name());
            let scope = level_scopes.last().copied().flatten();
            lines.expand_or_add(plane, editor, modules, id, span, stats.group_id, scope);
        }
        if stats.is_xla_op() {
            let innermost = stats.hlo_ops.last().map_or("", String::as_str);
            let symbol = symbols.resolve(stats.program_id, innermost);
            let prefix = stats.op_prefix();
            let ids: Vec<i64> = stats
                .hlo_ops
                .iter()
                .map(|op| {
                    let id = editor.event_metadata(plane, &format!("{prefix}{op}"));
                    super::builder::set_display_name_if_empty(plane, id, || op.clone());
                    id
                })
                .collect();
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
            if !symbol.tf_op_name.is_empty() {
                let group = stats.group_id;
                add_op_event(
                    plane,
                    editor,
                    &mut lines,
                    framework,
                    &symbol.tf_op_name,
                    span,
                    group,
                );
            }
            if !symbol.source_info.is_empty() {
                let id = editor.event_metadata(plane, &symbol.source_info);
                lines.expand_or_add(plane, editor, source, id, span, stats.group_id, None);
            }
        } else if !stats.tf_op.is_empty() {
            add_op_event(
                plane,
                editor,
                &mut lines,
                framework,
                &stats.tf_op,
                span,
                stats.group_id,
            );
        }
    }
}

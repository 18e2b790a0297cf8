//! The TPU op metrics databases (xprof's `ConvertTensorCoreDeviceTraceXPlaneToOpMetricsDb` and
//! `ConvertSparseCoreDeviceTraceXPlaneToOpMetricsDb`): the XLA ops a TPU core ran, from the
//! events of its op lines.
//!
//! On a TensorCore plane the op lines are `XLA Ops` and `Framework Ops` (and `Sparse Core Ops`,
//! TSL's `IsOpLineName`). Each line's events are nested by timespan (an event inside the span of
//! the one before it is its child; an event's self time is its span less its children's), and
//! each op becomes metrics from its event metadata's stats (`FromXEvent`): the name (the
//! metadata's display name when it has one), `program_id`, `hlo_category`, `tf_op` (the
//! provenance), `flops`, `model_flops`, `bytes_accessed`, `memory_access_breakdown` (an encoded
//! `MemoryAccessBreakdown`), `deduplicated_name`, `source` and `source_stack`; from the event's
//! own stats the `min_duration_ps`, `self_duration_ps`, `dma_stall_duration_ps` and
//! `time_scale_multiplier`. Ops are summed by their metadata's `program_id` and `symbol_id`
//! (`XEventsOpMetricsDbBuilder`): an op without both, or with symbol id 0 (the root), is left
//! out. FLOPs and bytes are per occurrence in the metadata, so they are multiplied by the
//! occurrences, model FLOPs taking the FLOPs when the metadata has none. Custom calls are no
//! exception in xprof 2.24.2 as installed (checked live on `tpu-op-metrics`): the FLOPs and bytes
//! their events carry are not read, although xprof's newer sources add them. An event's span is
//! its `device_offset_ps` and `device_duration_ps` stats when it has both, else its timestamp
//! and duration. The plane's total time runs from the first to the last op or step (`Steps`,
//! `Sparse Core Steps`) event, in unsigned 64-bit picoseconds as xprof computes it (a plane
//! without such events has a total of 1 ps, xprof's `0 - u64::MAX`); the rest is the idle op.
//!
//! xprof keeps the ops in a hash map, in no set order; profkit lists them by program id, then
//! symbol id. No tool output depends on that order but through ties that the tools break by
//! name.
//!
//! SparseCore planes (`/device:TPU:<n> SparseCore <m>`) are nested the same way within each
//! `Sparse Core Modules` event that carries `offload_core_id` and `tc_offload_start_id`; each
//! such module's ops become the children of the TensorCore op whose event carries the same two
//! stats.

use std::collections::{BTreeMap, HashMap};

use profkit_xplane::XPlane;
use profkit_xplane::constants::{
    SPARSE_CORE_MODULE_LINE_NAME, SPARSE_CORE_OP_LINE_NAME, SPARSE_CORE_STEP_LINE_NAME,
    STEP_LINE_NAME, TENSORFLOW_OP_LINE_NAME, XLA_OP_LINE_NAME,
};
use profkit_xplane::visitor::{EventVisitor, PlaneVisitor, StatValueRef};
use prost::Message;

use super::metrics_db::{DbBuilder, add_idle_op, set_total_time_ps};
use crate::proto::{MemoryAccessBreakdown, OpMetrics, OpMetricsDb, SourceInfo};

/// `OpMetrics::TpuCoreType`.
const TENSOR_CORE: i32 = 1;
const SPARSE_CORE: i32 = 2;
/// The most children (at every level) an op takes from its event metadata.
const MAX_CHILDREN: usize = 10_000;
/// The symbol id of a program's root, which is no op.
const ROOT_SYMBOL_ID: u64 = 0;

/// TSL's `IsOpLineName`.
pub(super) fn is_op_line(name: &str) -> bool {
    name == XLA_OP_LINE_NAME || name == TENSORFLOW_OP_LINE_NAME || name == SPARSE_CORE_OP_LINE_NAME
}

/// TSL's `IntOrUintValue`: an unsigned value as it is, a signed one reinterpreted, 0 otherwise.
pub(crate) fn int_or_uint(v: Option<StatValueRef<'_>>) -> u64 {
    match v {
        Some(StatValueRef::Uint64(v)) => v,
        Some(StatValueRef::Int64(v)) => v as u64,
        _ => 0,
    }
}

/// TSL's `IntValue`: the `int64_value` field (0 for other kinds).
fn int_value(v: Option<StatValueRef<'_>>) -> i64 {
    match v {
        Some(StatValueRef::Int64(v)) => v,
        _ => 0,
    }
}

/// TSL's `DoubleValue`: the `double_value` field (0 for other kinds).
pub(crate) fn double_value(v: Option<StatValueRef<'_>>) -> f64 {
    match v {
        Some(StatValueRef::Double(v)) => v,
        _ => 0.0,
    }
}

fn str_value(v: Option<StatValueRef<'_>>) -> &str {
    v.and_then(|v| v.as_str()).unwrap_or("")
}

/// An event's own stat (TSL's `XEventVisitor::GetStat` does not look at the metadata).
fn own_stat<'v>(event: &EventVisitor<'v>, name: &str) -> Option<StatValueRef<'v>> {
    event
        .stats()
        .find(|s| s.name() == name)
        .and_then(|s| s.value())
}

/// `GetDeviceEventTimespan`: `(begin, end)` in picoseconds, wrapping as xprof's unsigned
/// arithmetic does.
pub(super) fn device_timespan(event: &EventVisitor<'_>, line_timestamp_ns: i64) -> (u64, u64) {
    let offset = own_stat(event, "device_offset_ps");
    let duration = own_stat(event, "device_duration_ps");
    if offset.is_some() && duration.is_some() {
        let begin = int_or_uint(offset);
        return (begin, begin.wrapping_add(int_or_uint(duration)));
    }
    let begin = (line_timestamp_ns as u64)
        .wrapping_mul(1000)
        .wrapping_add(event.offset_ps() as u64);
    (begin, begin.wrapping_add(event.duration_ps() as u64))
}

/// `GetOpKeyFromXEvent`: the metadata's program and symbol ids.
pub(super) fn op_key(event: &EventVisitor<'_>) -> OpKey {
    let mut key = (None, None);
    for stat in event.metadata_stats() {
        match stat.name() {
            "program_id" => key.0 = Some(int_or_uint(stat.value())),
            "symbol_id" => key.1 = Some(int_or_uint(stat.value())),
            _ => {}
        }
    }
    key
}

/// `PopulateSourceInfo`: `file:line`, left empty when it does not parse.
fn populate_source_info(top_line: &str, info: &mut SourceInfo) {
    if let Some((file, line)) = top_line.split_once(':') {
        if let Some(line) = parse_atoi32(line) {
            info.file_name = file.to_owned();
            info.line_number = line;
        }
    }
}

/// absl's `SimpleAtoi` into an `int32`: optional surrounding whitespace and sign, digits only.
fn parse_atoi32(s: &str) -> Option<i32> {
    let s = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.strip_prefix('+').unwrap_or(s).parse().ok()
}

/// `SetOpMetadataFromHloEventMetadata`.
#[allow(deprecated)]
fn metadata_from_event_metadata(
    metadata: profkit_xplane::visitor::EventMetadataVisitor<'_>,
    op: &mut OpMetrics,
    depth: usize,
    budget: &mut usize,
) {
    // `HasDisplayName`: the metadata's own display name (the visitor's falls back to the name).
    if metadata.raw().display_name.is_empty() {
        op.name = metadata.name().to_owned();
    } else {
        op.name = metadata.raw().display_name.clone();
        op.long_name = metadata.name().to_owned();
    }
    for stat in metadata.stats() {
        let value = stat.value();
        match stat.name() {
            "program_id" => op.hlo_module_id = int_or_uint(value),
            "hlo_category" => op.category = str_value(value).to_owned(),
            "tf_op" => op.provenance = str_value(value).to_owned(),
            "flops" => {
                op.flops = int_or_uint(value);
                op.flops_v2 = op.flops as f64;
            }
            "model_flops" => {
                op.model_flops = int_or_uint(value);
                op.model_flops_v2 = op.model_flops as f64;
            }
            "bytes_accessed" => op.bytes_accessed = int_or_uint(value),
            "memory_access_breakdown" => {
                if let Some(StatValueRef::Bytes(bytes)) = value {
                    if let Ok(breakdown) = MemoryAccessBreakdown::decode(bytes) {
                        op.memory_accessed_breakdown = breakdown.memory_accessed;
                    }
                }
            }
            "deduplicated_name" => op.deduplicated_name = str_value(value).to_owned(),
            "source" => populate_source_info(
                str_value(value),
                op.source_info.get_or_insert_with(SourceInfo::default),
            ),
            "source_stack" => {
                op.source_info
                    .get_or_insert_with(SourceInfo::default)
                    .stack_frame = str_value(value).to_owned();
            }
            _ => {}
        }
    }
    // Children of children are the metadata's own tree; a cycle (or a tree that names the same
    // children over and over) in a damaged file would never end, so the depth and the number of
    // children an op gets are bounded (real trees are a fusion and its few levels).
    if depth >= 64 {
        return;
    }
    for child in metadata.children() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let children = op.children.get_or_insert_with(OpMetricsDb::default);
        let mut c = OpMetrics {
            occurrences: 1,
            ..OpMetrics::default()
        };
        metadata_from_event_metadata(child, &mut c, depth + 1, budget);
        children.metrics_db.push(c);
    }
}

/// `FromXEvent` for a new op: its metadata and this one event's times.
#[allow(deprecated)]
pub(super) fn from_event(event: &EventVisitor<'_>) -> OpMetrics {
    let duration = event.duration_ps() as u64;
    let mut op = OpMetrics::default();
    let mut min_duration = duration;
    let mut self_duration = duration;
    let mut dma_stall = 0u64;
    for stat in event.stats() {
        match stat.name() {
            "vdd_energy_j" => {
                op.vdd_energy_j = Some(op.vdd_energy_j.unwrap_or(0.0) + double_value(stat.value()));
            }
            "min_duration_ps" => min_duration = int_value(stat.value()) as u64,
            "self_duration_ps" => self_duration = int_value(stat.value()) as u64,
            "dma_stall_duration_ps" => dma_stall = int_value(stat.value()) as u64,
            _ => {}
        }
    }
    let normalized = own_stat(event, "time_scale_multiplier")
        .map_or(0, |v| (duration as f64 * double_value(Some(v))) as u64);
    if let Some(metadata) = event.metadata() {
        let mut budget = MAX_CHILDREN;
        metadata_from_event_metadata(metadata, &mut op, 0, &mut budget);
    }
    let occurrences = event.num_occurrences().unwrap_or(0).max(1);
    op.occurrences = u32::try_from(occurrences).unwrap_or(u32::MAX);
    op.time_ps = duration;
    op.min_time_ps = min_duration;
    op.self_time_ps = self_duration;
    op.normalized_time_ps = normalized;
    op.dma_stall_ps = dma_stall;
    op.num_cores = 1;
    op
}

/// `MergeOpMetrics`: a later occurrence of the same op.
#[allow(deprecated)]
fn merge(src: OpMetrics, dst: &mut OpMetrics) {
    if dst.occurrences == 0 {
        *dst = src;
        return;
    }
    dst.occurrences = dst.occurrences.wrapping_add(src.occurrences);
    dst.time_ps = dst.time_ps.wrapping_add(src.time_ps);
    dst.min_time_ps = dst.min_time_ps.min(src.min_time_ps);
    dst.self_time_ps = dst.self_time_ps.wrapping_add(src.self_time_ps);
    dst.dma_stall_ps = dst.dma_stall_ps.wrapping_add(src.dma_stall_ps);
    dst.normalized_time_ps = dst.normalized_time_ps.wrapping_add(src.normalized_time_ps);
    dst.core_type = src.core_type;
    if src.vdd_energy_j.is_some() || dst.vdd_energy_j.is_some() {
        dst.vdd_energy_j =
            Some(src.vdd_energy_j.unwrap_or_default() + dst.vdd_energy_j.unwrap_or_default());
    }
}

/// `AdjustFlopsAndBytesAccessed`: per-occurrence figures times the occurrences.
#[allow(deprecated)]
fn adjust_flops_and_bytes(op: &mut OpMetrics) {
    let n = u64::from(op.occurrences);
    op.flops = op.flops.wrapping_mul(n);
    op.flops_v2 *= n as f64;
    if op.model_flops > 0 {
        op.model_flops = op.model_flops.wrapping_mul(n);
        op.model_flops_v2 *= n as f64;
    } else {
        op.model_flops = op.flops;
        op.model_flops_v2 = op.flops_v2;
    }
    op.bytes_accessed = op.bytes_accessed.wrapping_mul(n);
    for m in &mut op.memory_accessed_breakdown {
        m.bytes_accessed = m.bytes_accessed.wrapping_mul(n);
    }
}

/// An op's key: its metadata's program id and symbol id, either possibly absent.
pub(super) type OpKey = (Option<u64>, Option<u64>);

/// An event with its device timespan `(begin, end)`.
type SpannedEvent<'v> = (EventVisitor<'v>, (u64, u64));

/// xprof's `XEventsOpMetricsDbBuilder`: ops by program id and symbol id.
#[derive(Default)]
pub(super) struct XEventsDb {
    ops: BTreeMap<(u64, u64), OpMetrics>,
}

impl XEventsDb {
    pub(super) fn add(&mut self, op: OpMetrics, key: OpKey) {
        let (Some(program), Some(symbol)) = key else {
            return;
        };
        if symbol == ROOT_SYMBOL_ID {
            return;
        }
        merge(op, self.ops.entry((program, symbol)).or_default());
    }

    fn finalize(self, total_time_ps: u64) -> OpMetricsDb {
        let mut db = self.finalize_ops();
        set_total_time_ps(&mut db, total_time_ps);
        add_idle_op(&mut db);
        db
    }

    /// `Finalize()` without a total time: the ops, their total and normalized total time.
    pub(super) fn finalize_ops(self) -> OpMetricsDb {
        let mut db = OpMetricsDb::default();
        let mut total_op = 0u64;
        let mut normalized_total = 0u64;
        for (_, mut op) in self.ops {
            adjust_flops_and_bytes(&mut op);
            total_op = total_op.wrapping_add(op.self_time_ps);
            let ratio = if op.time_ps == 0 {
                0.0
            } else {
                op.normalized_time_ps as f64 / op.time_ps as f64
            };
            // C++'s `uint64 += double`: the sum in doubles, truncated back.
            normalized_total = (normalized_total as f64 + op.self_time_ps as f64 * ratio) as u64;
            db.metrics_db.push(op);
        }
        db.total_op_time_ps = total_op;
        db.normalized_total_op_time_ps = normalized_total;
        db
    }
}

/// An op on the nesting stack (TSL's `AncestorStack`): its metrics (`None` when it has no key
/// and is only there for its span), key, span and children's time.
struct Open {
    op: Option<(OpMetrics, OpKey)>,
    offload: Option<(u64, u64)>,
    begin: u64,
    end: u64,
    children: u64,
    /// The event's `time_scale_multiplier` (its own or its metadata's), else 1.
    scale: f64,
}

fn includes(parent: &Open, begin: u64, end: u64) -> bool {
    parent.begin <= begin && end <= parent.end
}

/// Pops `open` into the database with its time, self time and (TensorCore ops) the SparseCore
/// children its offload stats name.
fn close(
    open: Open,
    core_type: i32,
    sparse: &HashMap<(u64, u64), OpMetricsDb>,
    db: &mut XEventsDb,
) {
    let Some((mut op, key)) = open.op else {
        return;
    };
    op.time_ps = open.end.wrapping_sub(open.begin);
    op.self_time_ps = op.time_ps.wrapping_sub(open.children);
    op.core_type = core_type;
    if core_type == TENSOR_CORE {
        // A TensorCore op's time scaled by its multiplier (1 without one).
        op.normalized_time_ps = (op.time_ps as f64 * open.scale) as u64;
    }
    if let Some(found) = open.offload.and_then(|k| sparse.get(&k)) {
        // xprof's combiner starts with an empty index over the children already there.
        let mut children = DbBuilder::appending_to(op.children.take().unwrap_or_default());
        children.combine(found, false);
        op.children = Some(children.db);
    }
    db.add(op, key);
}

/// Nests one line's events (in file order) into `db`.
fn nest_line<'v>(
    events: impl Iterator<Item = SpannedEvent<'v>>,
    core_type: i32,
    sparse: &HashMap<(u64, u64), OpMetricsDb>,
    db: &mut XEventsDb,
) {
    let mut stack: Vec<Open> = Vec::new();
    for (event, (begin, end)) in events {
        while let Some(top) = stack.last() {
            if includes(top, begin, end) {
                break;
            }
            if let Some(top) = stack.pop() {
                close(top, core_type, sparse, db);
            }
        }
        if let Some(parent) = stack.last_mut() {
            parent.children = parent.children.wrapping_add(end.wrapping_sub(begin));
        }
        let key = op_key(&event);
        let op = (key.0.is_some() && key.1.is_some_and(|s| s != ROOT_SYMBOL_ID))
            .then(|| (from_event(&event), key));
        let offload = match (
            own_stat(&event, "offload_core_id"),
            own_stat(&event, "tc_offload_start_id"),
        ) {
            (Some(core), Some(start)) => {
                Some((int_or_uint(Some(core)), int_value(Some(start)) as u64))
            }
            _ => None,
        };
        let scale = event
            .stat("time_scale_multiplier")
            .map_or(1.0, |s| double_value(s.value()));
        stack.push(Open {
            op,
            offload,
            begin,
            end,
            children: 0,
            scale,
        });
    }
    while let Some(top) = stack.pop() {
        close(top, core_type, sparse, db);
    }
}

/// The op metrics of one TensorCore plane, with the SparseCore modules' ops as children of the
/// ops that offloaded them.
pub fn tensor_core_op_metrics_db(
    plane: &XPlane,
    sparse: &HashMap<(u64, u64), OpMetricsDb>,
) -> OpMetricsDb {
    let visitor = PlaneVisitor::new(plane);
    let mut db = XEventsDb::default();
    let mut first = u64::MAX;
    let mut last = 0u64;
    for line in visitor.lines() {
        let name = line.name();
        let ts = line.timestamp_ns();
        if name == SPARSE_CORE_STEP_LINE_NAME || name == STEP_LINE_NAME {
            for event in line.events() {
                let (begin, end) = device_timespan(&event, ts);
                first = first.min(begin);
                last = last.max(end);
            }
        }
        if !is_op_line(name) {
            continue;
        }
        let events = line.events().map(|event| {
            let span = device_timespan(&event, ts);
            first = first.min(span.0);
            last = last.max(span.1);
            (event, span)
        });
        nest_line(events, TENSOR_CORE, sparse, &mut db);
    }
    db.finalize(last.wrapping_sub(first))
}

/// Adds one SparseCore plane's modules to `out`, keyed by `(offload_core_id,
/// tc_offload_start_id)`.
pub fn add_sparse_core_op_metrics(plane: &XPlane, out: &mut HashMap<(u64, u64), OpMetricsDb>) {
    let visitor = PlaneVisitor::new(plane);
    // (begin, end, key), ordered as xprof's btree set of timespans orders them.
    let mut modules: Vec<(u64, u64, (u64, u64))> = Vec::new();
    for line in visitor.lines() {
        if line.name() != SPARSE_CORE_MODULE_LINE_NAME {
            continue;
        }
        for event in line.events() {
            let core = own_stat(&event, "offload_core_id");
            let start = own_stat(&event, "tc_offload_start_id");
            if core.is_some() && start.is_some() {
                let (begin, end) = device_timespan(&event, line.timestamp_ns());
                modules.push((begin, end, (int_or_uint(core), int_or_uint(start))));
            }
        }
    }
    // TSL's `Timespan::operator<`: by begin, then the longer first; equal spans are one entry.
    modules.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    modules.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let mut per_module: HashMap<(u64, u64), Vec<SpannedEvent<'_>>> = HashMap::new();
    for line in visitor.lines() {
        if line.name() != SPARSE_CORE_OP_LINE_NAME {
            continue;
        }
        let mut i = 0;
        for event in line.events() {
            let (begin, end) = device_timespan(&event, line.timestamp_ns());
            while modules.get(i).is_some_and(|m| m.1 < begin) {
                i += 1;
            }
            let Some(module) = modules.get(i) else {
                break;
            };
            if module.0 <= begin && end <= module.1 {
                per_module
                    .entry(module.2)
                    .or_default()
                    .push((event, (begin, end)));
            }
        }
    }
    let mut total: HashMap<(u64, u64), u64> = HashMap::new();
    for m in &modules {
        if per_module.contains_key(&m.2) {
            let t = total.entry(m.2).or_default();
            *t = t.wrapping_add(m.1.wrapping_sub(m.0));
        }
    }
    let empty = HashMap::new();
    for (key, events) in per_module {
        let mut db = XEventsDb::default();
        nest_line(events.into_iter(), SPARSE_CORE, &empty, &mut db);
        out.insert(key, db.finalize(total.get(&key).copied().unwrap_or(0)));
    }
}

#[cfg(test)]
mod tests {
    use profkit_xplane::{PlaneBuilder, StatValue, XPlane};

    use super::*;

    fn op_plane() -> XPlane {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/device:TPU:0");
        let fusion = b.event_metadata_id("fusion.1");
        let conv = b.event_metadata_id("convolution.2");
        for (id, symbol, flops, bytes) in [(fusion, 7u64, 100u64, 64u64), (conv, 8, 0, 32)] {
            if let Some(mut m) = b.event_metadata(id) {
                m.add_stat("program_id", StatValue::Uint64(42));
                m.add_stat("symbol_id", StatValue::Uint64(symbol));
                m.add_stat("flops", StatValue::Uint64(flops));
                m.add_stat("bytes_accessed", StatValue::Uint64(bytes));
            }
        }
        if let Some(mut m) = b.event_metadata(conv) {
            m.add_stat("tf_op", StatValue::Str("model/conv:Conv2D".into()));
        }
        let mut steps = b.line(1);
        steps.set_name("Steps");
        steps
            .add_event("1")
            .set_offset_ps(0)
            .set_duration_ps(20_000);
        let mut ops = b.line(2);
        ops.set_name("XLA Ops");
        // fusion.1 holds convolution.2; a second fusion.1 stands alone.
        ops.add_event("fusion.1")
            .set_offset_ps(1_000)
            .set_duration_ps(8_000);
        ops.add_event("convolution.2")
            .set_offset_ps(2_000)
            .set_duration_ps(3_000);
        ops.add_event("fusion.1")
            .set_offset_ps(10_000)
            .set_duration_ps(2_000);
        ops.add_event("unkeyed")
            .set_offset_ps(13_000)
            .set_duration_ps(1_000);
        plane
    }

    #[allow(deprecated)]
    #[test]
    fn nests_ops_and_sums_them_by_symbol() {
        let db = tensor_core_op_metrics_db(&op_plane(), &HashMap::new());
        let rows: Vec<_> = db
            .metrics_db
            .iter()
            .map(|m| {
                (
                    m.name.as_str(),
                    m.occurrences,
                    m.time_ps,
                    m.self_time_ps,
                    m.flops,
                    m.bytes_accessed,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("fusion.1", 2, 10_000, 7_000, 200, 128),
                ("convolution.2", 1, 3_000, 3_000, 0, 32),
                ("IDLE", 0, 10_000, 10_000, 0, 0),
            ]
        );
        assert_eq!(db.metrics_db[1].provenance, "model/conv:Conv2D");
        assert_eq!(db.total_time_ps, 20_000);
        assert_eq!(db.total_op_time_ps, 10_000);
    }

    #[test]
    fn a_plane_without_ops_spans_one_picosecond() {
        let mut plane = XPlane::default();
        PlaneBuilder::new(&mut plane).set_name("/device:TPU:0");
        let db = tensor_core_op_metrics_db(&plane, &HashMap::new());
        assert_eq!(db.total_time_ps, 1);
        assert_eq!(db.metrics_db.len(), 1);
    }

    /// What xprof 2.24.2's OpStats holds for the `tpu-sparse-core` case (read from the
    /// `ALL_HOSTS.op_stats_v2.pb` it cached): the module's ops, nested, with its idle time, as
    /// children of the op that offloaded them, without cores.
    #[test]
    fn sparse_core_ops_are_children_of_the_offloading_op() {
        let mut tc = XPlane::default();
        let mut b = PlaneBuilder::new(&mut tc);
        b.set_name("/device:TPU:0");
        let id = b.event_metadata_id("sparse-offload.1");
        if let Some(mut m) = b.event_metadata(id) {
            m.add_stat("program_id", StatValue::Uint64(7));
            m.add_stat("symbol_id", StatValue::Uint64(1));
        }
        let mut ops = b.line(1);
        ops.set_name("XLA Ops").set_timestamp_ns(1_000);
        ops.add_event("sparse-offload.1")
            .set_offset_ps(1_000_000)
            .set_duration_ps(10_000_000)
            .add_stat("offload_core_id", StatValue::Uint64(0))
            .add_stat("tc_offload_start_id", StatValue::Int64(5));
        let mut sc = XPlane::default();
        let mut b = PlaneBuilder::new(&mut sc);
        b.set_name("/device:TPU:0 SparseCore 0");
        for (name, symbol) in [("sc-gather", 100u64), ("sc-inner", 101), ("sc-stray", 102)] {
            let id = b.event_metadata_id(name);
            if let Some(mut m) = b.event_metadata(id) {
                m.add_stat("program_id", StatValue::Uint64(7));
                m.add_stat("symbol_id", StatValue::Uint64(symbol));
            }
        }
        let mut modules = b.line(1);
        modules
            .set_name("Sparse Core Modules")
            .set_timestamp_ns(1_000);
        modules
            .add_event("sc-module")
            .set_offset_ps(2_000_000)
            .set_duration_ps(6_000_000)
            .add_stat("offload_core_id", StatValue::Uint64(0))
            .add_stat("tc_offload_start_id", StatValue::Uint64(5));
        let mut ops = b.line(2);
        ops.set_name("Sparse Core Ops").set_timestamp_ns(1_000);
        for (name, offset, duration) in
            [("sc-gather", 3, 3), ("sc-inner", 4, 1), ("sc-stray", 9, 1)]
        {
            ops.add_event(name)
                .set_offset_ps(offset * 1_000_000)
                .set_duration_ps(duration * 1_000_000);
        }
        let mut sparse = HashMap::new();
        add_sparse_core_op_metrics(&sc, &mut sparse);
        let db = tensor_core_op_metrics_db(&tc, &sparse);
        let op = &db.metrics_db[0];
        assert_eq!(
            (op.name.as_str(), op.core_type),
            ("sparse-offload.1", TENSOR_CORE)
        );
        let children: Vec<_> = op
            .children
            .iter()
            .flat_map(|c| &c.metrics_db)
            .map(|c| {
                (
                    c.name.as_str(),
                    c.occurrences,
                    c.time_ps,
                    c.self_time_ps,
                    c.core_type,
                    c.num_cores,
                )
            })
            .collect();
        assert_eq!(
            children,
            [
                ("sc-gather", 1, 3_000_000, 2_000_000, SPARSE_CORE, 0),
                ("sc-inner", 1, 1_000_000, 1_000_000, SPARSE_CORE, 0),
                ("IDLE", 0, 3_000_000, 3_000_000, 0, 0),
            ]
        );
        assert_eq!(
            (db.total_time_ps, db.total_op_time_ps),
            (10_000_000, 10_000_000)
        );
    }

    #[test]
    fn metadata_whose_children_loop_ends() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/device:TPU:0");
        let id = b.event_metadata_id("fusion.9");
        if let Some(mut m) = b.event_metadata(id) {
            m.add_stat("program_id", StatValue::Uint64(1));
            m.add_stat("symbol_id", StatValue::Uint64(2));
            // Its own child, twice.
            m.add_child(id).add_child(id);
        }
        let mut ops = b.line(1);
        ops.set_name("XLA Ops");
        ops.add_event("fusion.9").set_duration_ps(1_000);
        let db = tensor_core_op_metrics_db(&plane, &HashMap::new());
        let count = |db: &OpMetricsDb| -> usize {
            fn walk(db: &OpMetricsDb) -> usize {
                db.metrics_db
                    .iter()
                    .map(|m| 1 + m.children.as_ref().map_or(0, walk))
                    .sum()
            }
            walk(db)
        };
        // The op, its children up to the bound, and the idle op.
        assert_eq!(count(&db), 1 + MAX_CHILDREN + 1);
    }
}

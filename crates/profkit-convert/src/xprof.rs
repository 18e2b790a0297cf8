//! The parts of xprof's XSpace preprocessing that change what its trace viewer shows.
//!
//! Before converting, xprof 2.24.2 runs `PreprocessSingleHostXSpace(space, step_grouping=true,
//! derived_timeline=true)`. On a space that is already grouped (every host and device plane, as
//! TSL's `IsHostPlane` and `IsDevicePlane` name them, `/host:metadata` included, has a `group_id`
//! stat metadata) it does nothing. Otherwise it groups events into steps (`GroupTfEvents`, or
//! `GroupTpuEventsOSS` when there is a TPU plane) and derives timelines. What this module
//! reproduces of that, exactly as xprof does it (every case in `conformance/xplane/` comes out as
//! xprof's output byte for byte, its salted `flow` args aside):
//!
//! - `is_eager` (0 or 1) on every kernel-execute event (an event with a `correlation_id` stat on a
//!   plane other than `/host:CPU`, whose name is not one of TSL's host event types; on a TPU plane
//!   only the grouping line's events) and on every TensorFlow op event (`name:Type`, `TfOpRun`):
//!   1 when the nearest enclosing `EagerExecute` (on the event's line or, for a kernel, around the
//!   host event that launched it, same `correlation_id`, breadth first as TSL searches) has an
//!   `is_func` stat of 0; none at all when the space holds one of TensorFlow's loop ops;
//! - on a TPU space without host step roots, lock-step grouping: the k-th event of each TensorCore
//!   plane's grouping line (`Steps`, else `XLA Modules`) becomes group k, named by its `step_num`;
//!   on every device plane with a grouping line, step events get `step_idle_time_ps` and
//!   `step_name` (consecutive steps of one group merged), and the events of other lines the
//!   `group_id` of the grouping event they overlap;
//! - the derived timelines of GPU and TensorCore planes (`XLA Modules`, `XLA Ops`, `Framework
//!   Name Scope`, `Framework Ops`, `Source code`, `Command Buffers`, `Host Offload Ops row N`, and
//!   on GPU planes with `group_id`s the `Steps` line; see [`derived`]), with
//!   GPU display ids renumbered in xprof's stream order (compute streams first, then by event
//!   count, with libstdc++'s `std::sort` for ties, each stream followed by six positions for its
//!   derived lines) and lines without events removed;
//! - on TPU TensorCore planes (`/device:TPU:<n>`), lines without events removed and each line's
//!   events sorted by offset, then longer first (`SortXPlane`, again with libstdc++'s sort).
//!
//! What it leaves out, and reports as such (`TraceViewerSummary::unreproduced`): step grouping from
//! host roots (events with an `_r` stat or `TraceContext`), which spreads `group_id` and
//! `step_name` along nesting, launches and TraceMe 2.0 context links (and so the step names of
//! GPU `Steps` events and the `Launch Stats` lines); TraceMe 2.0 context links (`_p`/`_c`) in the
//! `is_eager` search; `ThreadpoolListener` regions; and the salted `flow` stats. Spaces written
//! by profkit's converters, and spaces that xprof has already grouped, need none of that.

use std::collections::{BTreeMap, HashMap};

use profkit_events::report::std_sort;
use profkit_xplane::constants::{
    GPU_PLANE_PREFIX, HOST_PLANE_NAME, METADATA_PLANE_NAME, TPU_PLANE_PREFIX,
};
use profkit_xplane::{XLine, XPlane, XStat, x_stat};

mod derived;

/// TensorFlow's loop ops: with one of them in a space, xprof does not group (nor mark eager ops).
const LOOP_OPS: &[&str] = &[
    "WhileOp-EvalCond",
    "WhileOp-StartBody",
    "ForOp",
    "ParallelForOp",
    "ForeverOp",
];

/// Every name TSL's `FindHostEventType` knows (an event with one of these names is not a kernel).
const HOST_EVENT_TYPES: &[&str] = &[
    "UnknownHostEventType",
    "TraceContext",
    "SessionRun",
    "FunctionRun",
    "RunGraph",
    "RunGraphDone",
    "TfOpRun",
    "EagerExecute",
    "ExecutorState::Process",
    "ExecutorDoneCallback",
    "MemoryAllocation",
    "MemoryDeallocation",
    "RemotePerfCounter",
    "InstantiatedCapturedFunction::Run",
    "InstantiatedCapturedFunction::RunWithBorrowedArgs",
    "InstantiatedCapturedFunction::RunInstantiated",
    "InstantiatedCapturedFunction::RunAsync",
    "ParallelForOp",
    "ForeverOp",
    "WhileOp-EvalCond",
    "WhileOp-StartBody",
    "ForOp",
    "IteratorGetNextOp::DoCompute",
    "IteratorGetNextAsOptionalOp::DoCompute",
    "Iterator",
    "Iterator::Prefetch::Generator",
    "PrefetchProduce",
    "PrefetchConsume",
    "ParallelInterleaveProduce",
    "ParallelInterleaveConsume",
    "ParallelInterleaveInitializeInput",
    "ParallelMapProduce",
    "ParallelMapConsume",
    "MapAndBatchProduce",
    "MapAndBatchConsume",
    "ParseExampleProduce",
    "ParseExampleConsume",
    "ParallelBatchProduce",
    "ParallelBatchConsume",
    "BatchingSessionRun",
    "ProcessBatch",
    "BrainSessionRun",
    "ConcatInputTensors",
    "MergeInputTensors",
    "ScheduleWithoutSplit",
    "ScheduleWithSplit",
    "ScheduleWithEagerSplit",
    "ASBSQueue::Schedule",
    "OrbaxServing::ProcessBatch",
    "OrbaxServing::ConcatInputBuffers",
    "TfrtModelRun",
    "ServingModelRun",
    "KernelLaunch",
    "KernelExecute",
    "EnqueueRequestLocked",
    "RunProgramRequest",
    "HostCallbackRequest",
    "TransferH2DRequest",
    "TransferPreprocessedH2DRequest",
    "TransferD2HRequest",
    "OnDeviceSendRequest",
    "OnDeviceRecvRequest",
    "OnDeviceSendRecvLocalRequest",
    "CustomWait",
    "OnDeviceSendRequestMulti",
    "OnDeviceRecvRequestMulti",
    "PjrtAsyncWait",
    "DoEnqueueProgram",
    "DoEnqueueContinuationProgram",
    "WriteHbm",
    "ReadHbm",
    "TpuExecuteOp",
    "CompleteCallbacks",
    "TPUPartitionedCallOp-InitializeVarOnTPU",
    "TPUPartitionedCallOp-ExecuteRemote",
    "TPUPartitionedCallOp-ExecuteLocal",
    "Linearize",
    "Delinearize",
    "TransferBufferFromDevice-FastPath",
    "tpu::System::TransferToDevice=>IssueEvent",
    "tpu::System::TransferToDevice=>IssueEvent=>Done",
    "tpu::System::TransferFromDevice=>IssueEvent",
    "tpu::System::TransferFromDevice=>IssueEvent=>Done",
    "tpu::System::Execute",
];

/// Host event types the trace viewer never shows (TSL's `IsInternalEvent`).
pub(crate) const INTERNAL_EVENTS: &[&str] = &[
    "MemoryAllocation",
    "MemoryDeallocation",
    "PrefetchProduce",
    "PrefetchConsume",
    "ParallelInterleaveProduce",
    "ParallelInterleaveConsume",
    "ParallelInterleaveInitializeInput",
    "ParallelMapProduce",
    "ParallelMapConsume",
    "MapAndBatchProduce",
    "MapAndBatchConsume",
    "ParseExampleProduce",
    "ParseExampleConsume",
];

/// First and last line id TSL reserves for derived lines (`IsDerivedThreadId`, which takes the id
/// as a 32-bit int).
const DERIVED_THREAD_ID_MIN: i32 = 0xdead_beef_u32 as i32;
const DERIVED_THREAD_ID_MAX: i32 = DERIVED_THREAD_ID_MIN + 49 + 240;
/// Derived lines xprof makes for each GPU stream (`kThreadIdSource - kThreadIdTfNameScope`), all
/// of which take a display position after the stream's own.
const DERIVED_LINES_PER_STREAM: i64 = 6;

/// What the whole space says about preprocessing, learnt in a first pass over its planes.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpaceFacts {
    /// Preprocessing is off (xprof's output of the space as it is).
    pub grouped: bool,
    /// Some host or device plane (TSL's `IsHostPlane`, `IsDevicePlane`) has no `group_id` stat
    /// metadata: the space is not grouped (`IsXSpaceGrouped`), so xprof preprocesses it.
    pub ungrouped_plane: bool,
    /// Some plane has a loop op's event metadata: xprof does not group.
    pub loop_op: bool,
    /// For each correlation id, how the last host event launching it resolves (see
    /// [`EagerSearch`]).
    pub launches: HashMap<u64, EagerSearch>,
    /// Some plane is a TPU plane: xprof groups TPU steps.
    pub tpu: bool,
    /// Some event can be a step root (a `_r` stat or a `TraceContext` event): xprof's step
    /// grouping, which profkit does not reproduce, would start from it.
    pub roots: bool,
    /// The names of the groups xprof makes of TPU steps (by group id), when no host root groups
    /// them: the last TensorCore plane's name for each id.
    pub tpu_groups: BTreeMap<i64, String>,
    /// The HLO instructions of the `/host:metadata` plane, which name GPU ops' framework ops
    /// and source lines in the derived timelines.
    pub symbols: derived::Symbols,
}

impl SpaceFacts {
    /// Whether [`SpaceFacts::observe`] needs the plane named `name` whole (its events), rather
    /// than only its names ([`SpaceFacts::observe_names`]).
    pub fn needs_events(name: &str) -> bool {
        name == HOST_PLANE_NAME
            || name == METADATA_PLANE_NAME
            || name == derived::SCOPE_RANGE_TREE_PLANE_NAME
            || tensor_core_id(name).is_some()
    }

    /// Whether the first pass needs the events of the plane named `name`, given the names of its
    /// stat metadata: [`SpaceFacts::needs_events`], or a GPU plane whose derived lines depend on
    /// its events.
    pub fn needs_events_with<'a>(
        name: &str,
        stat_names: impl Iterator<Item = &'a str> + Clone,
    ) -> bool {
        Self::needs_events(name) || derived::needs_events(name, stat_names)
    }

    /// [`SpaceFacts::derived_layout`] of a plane with nothing to derive, from its lines without
    /// events and their event counts.
    pub fn derived_layout_without_events(
        shadow: &XPlane,
        counts: &[usize],
    ) -> Option<Vec<(i64, String)>> {
        derived::applies(&shadow.name).then(|| derived::layout_without_events(shadow, counts))
    }

    /// The lines the plane shows once xprof has derived its timelines (see
    /// [`derived::layout`]), as (display id, display name); `None` for planes without any.
    pub fn derived_layout(&self, plane: &XPlane) -> Option<Vec<(i64, String)>> {
        derived::applies(&plane.name).then(|| derived::layout(plane, &self.symbols))
    }

    /// [`SpaceFacts::derived_layout`] of a plane the caller no longer needs (no copy).
    pub fn derived_layout_owned(&self, plane: XPlane) -> Option<Vec<(i64, String)>> {
        derived::applies(&plane.name).then(|| derived::layout_owned(plane, &self.symbols))
    }

    /// How many HLO modules the space's metadata plane gave so far (a layout made with fewer is
    /// made again).
    pub fn symbols_known(&self) -> usize {
        self.symbols.len()
    }

    /// Takes in what the names of one plane say (its name, its event and stat metadata names).
    pub fn observe_names<'a>(
        &mut self,
        name: &str,
        event_names: impl Iterator<Item = &'a str> + Clone,
        stat_names: impl Iterator<Item = &'a str> + Clone,
    ) {
        if name.starts_with(TPU_PLANE_PREFIX) {
            self.tpu = true;
        }
        if is_host_or_device_plane(name) && !stat_names.clone().any(|n| n == "group_id") {
            self.ungrouped_plane = true;
        }
        if event_names.clone().any(|n| LOOP_OPS.contains(&n)) {
            self.loop_op = true;
        }
        if stat_names.clone().any(|n| n == "_r") || event_names.clone().any(|n| n == "TraceContext")
        {
            self.roots = true;
        }
    }

    /// Takes in one plane, in file order.
    pub fn observe(&mut self, plane: &XPlane) {
        self.observe_names(
            &plane.name,
            plane.event_metadata.values().map(|m| m.name.as_str()),
            plane.stat_metadata.values().map(|m| m.name.as_str()),
        );
        if tensor_core_id(&plane.name).is_some() {
            if let Some(grouping) = tpu_grouping_line(plane).and_then(|i| plane.lines.get(i)) {
                let stats = StatIds::of(plane);
                for (k, event) in grouping.events.iter().enumerate() {
                    let group = k as i64;
                    self.tpu_groups
                        .insert(group, stats.group_name(event, group));
                }
            }
        }
        if plane.name == METADATA_PLANE_NAME {
            self.symbols.observe(plane);
        }
        if plane.name == derived::SCOPE_RANGE_TREE_PLANE_NAME {
            self.symbols.observe_scope_tree(plane);
        }
        if plane.name == HOST_PLANE_NAME {
            let kinds = EventKinds::of(plane);
            for line in &plane.lines {
                let parents = nesting_parents(plane, line, &kinds.async_stat);
                for (index, event) in line.events.iter().enumerate() {
                    if kinds.kind(event.metadata_id) != Kind::Untyped {
                        continue;
                    }
                    let Some(id) = kinds.correlation_id(event) else {
                        continue;
                    };
                    // Every /host:CPU plane registers its launches, the later ones winning.
                    let search = eager_search(&kinds, line, &parents, index);
                    self.launches.insert(id, search);
                }
            }
        }
    }

    /// Whether xprof would preprocess this space at all.
    pub fn preprocesses(&self) -> bool {
        !self.grouped && self.ungrouped_plane
    }

    /// What xprof would do to this space that profkit does not reproduce (empty when the output
    /// is xprof's, `flow` args aside).
    pub fn unreproduced(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.preprocesses() && !self.loop_op && self.roots {
            out.push("step grouping (group_id and step_name stats on the events under step roots)");
        }
        out
    }
}

/// TSL's `IsHostPlane` or `IsDevicePlane`: the planes `IsXSpaceGrouped` asks a `group_id` of.
fn is_host_or_device_plane(name: &str) -> bool {
    const HOST_PREFIXES: &[&str] = &[
        HOST_PLANE_NAME,
        "Host CPUs",
        "/host:tfstreamz",
        METADATA_PLANE_NAME,
        "Syscalls",
        "/host:python-tracer",
        "/host:CUPTI",
        "/host:__ScopeRangeCallStack__",
    ];
    HOST_PREFIXES.iter().any(|p| name.starts_with(p))
        || name.starts_with("/device")
        || name.starts_with("#Chip")
        || name.starts_with("/custom:")
}

/// The stat ids TPU grouping reads.
struct StatIds {
    graph_type: Option<i64>,
    iter_num: Option<i64>,
    step_num: Option<i64>,
    names: HashMap<i64, String>,
}

impl StatIds {
    fn of(plane: &XPlane) -> StatIds {
        StatIds {
            graph_type: stat_id(plane, "graph_type"),
            iter_num: stat_id(plane, "iter_num"),
            step_num: stat_id(plane, "step_num"),
            names: plane
                .stat_metadata
                .iter()
                .map(|(id, m)| (*id, m.name.clone()))
                .collect(),
        }
    }

    /// TSL's `EventNode::GetGroupName` for a TPU step (an implicit root without parents).
    fn group_name(&self, event: &profkit_xplane::XEvent, group: i64) -> String {
        let find =
            |id: Option<i64>| id.and_then(|id| event.stats.iter().find(|s| s.metadata_id == id));
        let mut name = String::new();
        if let Some(stat) = find(self.graph_type) {
            let text = match &stat.value {
                Some(x_stat::Value::StrValue(v)) => v.clone(),
                Some(x_stat::Value::RefValue(r)) => i64::try_from(*r)
                    .ok()
                    .and_then(|r| self.names.get(&r))
                    .cloned()
                    .unwrap_or_default(),
                _ => String::new(),
            };
            name.push_str(&text);
            name.push(' ');
        }
        let step = match (find(self.iter_num), find(self.step_num)) {
            (Some(stat), _) | (None, Some(stat)) => int_value(stat),
            (None, None) => group,
        };
        name.push_str(&step.to_string());
        name
    }
}

/// The kind of event, as far as `is_eager` goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `EagerExecute`.
    Eager,
    /// A TensorFlow op (`name:Type`, or `TfOpRun`): marked.
    TfOp,
    /// Another of TensorFlow's host event types.
    OtherType,
    /// No type: a kernel launch on the host or a kernel on a device when it has a correlation id.
    Untyped,
}

/// Event metadata kinds and the stat ids the search needs, for one plane.
struct EventKinds {
    kinds: HashMap<i64, Kind>,
    correlation_stat: Option<i64>,
    async_stat: Option<i64>,
    is_func: Option<i64>,
}

impl EventKinds {
    fn of(plane: &XPlane) -> EventKinds {
        let kinds = plane
            .event_metadata
            .iter()
            .map(|(id, m)| (*id, kind_of(&m.name)))
            .collect();
        EventKinds {
            kinds,
            correlation_stat: stat_id(plane, "correlation_id"),
            async_stat: stat_id(plane, "_a"),
            is_func: stat_id(plane, "is_func"),
        }
    }

    fn kind(&self, metadata_id: i64) -> Kind {
        // An id that resolves to nothing has the empty name: untyped.
        self.kinds
            .get(&metadata_id)
            .copied()
            .unwrap_or(Kind::Untyped)
    }

    /// The event's own `correlation_id`, as TSL's `IntOrUintValue` reads it.
    fn correlation_id(&self, event: &profkit_xplane::XEvent) -> Option<u64> {
        let id = self.correlation_stat?;
        event
            .stats
            .iter()
            .find(|s| s.metadata_id == id)
            .map(int_or_uint)
    }
}

/// The id of the stat metadata named `name`; the smallest if several share it.
pub(crate) fn stat_id(plane: &XPlane, name: &str) -> Option<i64> {
    plane
        .stat_metadata
        .iter()
        .filter(|(_, m)| m.name == name)
        .map(|(id, _)| *id)
        .min()
}

/// TSL's `IntValue`: the `int64_value`, 0 for any other kind.
fn int_value(stat: &XStat) -> i64 {
    match stat.value {
        Some(x_stat::Value::Int64Value(v)) => v,
        _ => 0,
    }
}

fn int_or_uint(stat: &XStat) -> u64 {
    match stat.value {
        Some(x_stat::Value::Uint64Value(v)) => v,
        Some(x_stat::Value::Int64Value(v)) => v as u64,
        _ => 0,
    }
}

fn kind_of(name: &str) -> Kind {
    match name {
        "EagerExecute" => Kind::Eager,
        "TfOpRun" => Kind::TfOp,
        _ if HOST_EVENT_TYPES.contains(&name) => Kind::OtherType,
        _ if is_tf_op(name) => Kind::TfOp,
        _ => Kind::Untyped,
    }
}

/// Whether TSL's `ParseTfOpFullname` puts `name` in the TensorFlow category: `name:Type` with a
/// node name and a CamelCase op type, or `name:` whose last scope is not a JAX op type.
fn is_tf_op(name: &str) -> bool {
    let Some((op_name, op_type)) = name.split_once(':') else {
        return false;
    };
    if op_name == "Iterator" {
        return false;
    }
    let is_name = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
            && chars.all(|c| c.is_ascii_alphanumeric() || "_./>-".contains(c))
    };
    let is_type = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let is_jax_type = |s: &str| {
        let base = match s.find('[') {
            Some(i) if s.ends_with(']') => &s[..i],
            Some(_) => return false,
            None => s,
        };
        let mut chars = base.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if is_name(op_name) && is_type(op_type) {
        return true;
    }
    if op_type.is_empty() {
        let last = op_name.rsplit('/').next().unwrap_or(op_name);
        return !is_jax_type(last);
    }
    false
}

/// The start and end of an event in picoseconds as TSL's `Timespan` holds them (unsigned, with
/// the `int64` arithmetic wrapping as it does in practice).
pub(crate) fn timespan(line: &XLine, event: &profkit_xplane::XEvent) -> (u64, u64) {
    let begin = line
        .timestamp_ns
        .wrapping_mul(1000)
        .wrapping_add(event.offset_ps().unwrap_or(0)) as u64;
    (begin, begin.wrapping_add(event.duration_ps as u64))
}

/// Each event's enclosing event on its line, as TSL's `ConnectIntraThread` finds it: a stack of
/// open events in line order, popped until one includes the new event. Async events (`_a` stat)
/// take no part.
fn nesting_parents(plane: &XPlane, line: &XLine, async_stat: &Option<i64>) -> Vec<Option<usize>> {
    let _ = plane;
    let mut parents = vec![None; line.events.len()];
    let mut stack: Vec<usize> = Vec::new();
    for (index, event) in line.events.iter().enumerate() {
        let is_async = async_stat.is_some_and(|id| {
            event
                .stats
                .iter()
                .find(|s| s.metadata_id == id)
                .is_some_and(|s| matches!(s.value, Some(x_stat::Value::Int64Value(v)) if v != 0))
        });
        if is_async {
            continue;
        }
        let (begin, end) = timespan(line, event);
        while let Some(&top) = stack.last() {
            let (top_begin, top_end) = line.events.get(top).map_or((0, 0), |e| timespan(line, e));
            if top_begin <= begin && end <= top_end {
                if let Some(p) = parents.get_mut(index) {
                    *p = Some(top);
                }
                break;
            }
            stack.pop();
        }
        stack.push(index);
    }
    parents
}

/// Where a search for an enclosing `EagerExecute` ends: how many parent links up it was found
/// and whether it runs an op eagerly (an `is_func` stat of 0; without one, or with any other
/// value, it runs a compiled function), or not found at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EagerSearch {
    /// An `EagerExecute` at this distance; the flag says whether it is eager.
    Found { distance: u32, eager: bool },
    /// No `EagerExecute` encloses the event.
    NotFound,
}

fn eager_search(
    kinds: &EventKinds,
    line: &XLine,
    parents: &[Option<usize>],
    index: usize,
) -> EagerSearch {
    let mut current = Some(index);
    let mut distance = 0;
    while let Some(i) = current {
        let Some(event) = line.events.get(i) else {
            break;
        };
        if kinds.kind(event.metadata_id) == Kind::Eager {
            // TSL's `IsCompiledFunc`: without an `is_func` stat the op counts as compiled.
            let eager = kinds.is_func.is_some_and(|id| {
                event
                    .stats
                    .iter()
                    .find(|s| s.metadata_id == id)
                    .is_some_and(|s| int_value(s) == 0)
            });
            return EagerSearch::Found { distance, eager };
        }
        current = parents.get(i).copied().flatten();
        distance += 1;
    }
    EagerSearch::NotFound
}

/// Whether xprof treats `name` as a TPU TensorCore plane (`/device:TPU:` and digits).
fn is_tensor_core_plane(name: &str) -> bool {
    name.strip_prefix(TPU_PLANE_PREFIX)
        .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
}

/// The TensorCore id of a plane named `/device:TPU:<n>`.
fn tensor_core_id(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(TPU_PLANE_PREFIX)?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// Whether TSL's `ConnectIntraThreadTPU` handles `name` (TensorCore or SparseCore ids parse).
fn tpu_plane_has_core_id(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(TPU_PLANE_PREFIX) else {
        return false;
    };
    if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
        return rest.parse::<i32>().is_ok();
    }
    // "<n> SparseCore[ <word>] <m>"
    let Some((chip, tail)) = rest.split_once(" SparseCore") else {
        return false;
    };
    if chip.is_empty() || !chip.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let Some((middle, core)) = tail.rsplit_once(' ') else {
        return false;
    };
    let middle_ok = middle.is_empty()
        || middle
            .strip_prefix(' ')
            .is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphabetic()));
    middle_ok
        && !core.is_empty()
        && core.bytes().all(|b| b.is_ascii_digit())
        && core.parse::<i32>().is_ok()
}

/// The index of the line xprof groups a TPU plane by: the last `Steps` line if it has events,
/// else the last `XLA Modules` line if it has events.
fn tpu_grouping_line(plane: &XPlane) -> Option<usize> {
    let mut step = None;
    let mut module = None;
    for (i, line) in plane.lines.iter().enumerate() {
        match line.name.as_str() {
            "Steps" | "Sparse Core Steps" => step = Some(i),
            "XLA Modules" | "Sparse Core Modules" => module = Some(i),
            _ => {}
        }
    }
    let non_empty =
        |i: Option<usize>| i.filter(|&i| plane.lines.get(i).is_some_and(|l| !l.events.is_empty()));
    non_empty(step).or_else(|| non_empty(module))
}

/// Changes a plane as xprof's preprocessing would before its trace viewer reads it (see the
/// module documentation). `facts` must come from a pass over the whole space.
pub(crate) fn preprocess_plane(plane: &mut XPlane, facts: &SpaceFacts) {
    if !facts.preprocesses() {
        return;
    }
    let tpu_grouping = facts.tpu && !facts.loop_op;
    if tpu_grouping && tensor_core_id(&plane.name).is_some() {
        group_tpu_steps(plane);
    }
    if !facts.loop_op {
        mark_eager(plane, facts);
    }
    if tpu_grouping && plane.name.starts_with("/device:") {
        group_tpu_plane_events(plane, facts);
    }
    // xprof's derived timelines (on GPU planes with the display order of the streams).
    // (Step names come with host step grouping, which profkit does not reproduce yet.)
    derived::derive_timelines(plane, &facts.symbols, &BTreeMap::new());
    if is_tensor_core_plane(&plane.name) {
        plane.lines.retain(|l| !l.events.is_empty());
        for line in &mut plane.lines {
            sort_events(line);
        }
    }
}

/// The lines a plane keeps after [`preprocess_plane`], as (display id, display name), from a
/// copy of the plane's lines without events and the number of events each had (for the trace
/// viewer's metadata, written before any event).
pub(crate) fn line_layout(
    lines: &XPlane,
    counts: &[usize],
    facts: &SpaceFacts,
) -> Vec<(i64, String)> {
    let mut shadow = lines.clone();
    let gpu = facts.preprocesses() && shadow.name.starts_with(GPU_PLANE_PREFIX);
    let tensor_core = facts.preprocesses() && is_tensor_core_plane(&shadow.name);
    if gpu {
        renumber_gpu_lines_by(&mut shadow, counts);
    }
    shadow
        .lines
        .iter()
        .zip(counts.iter().copied().chain(std::iter::repeat(0)))
        .filter(|(_, count)| !(gpu || tensor_core) || *count > 0)
        .map(|(l, _)| {
            let id = if l.display_id != 0 {
                l.display_id
            } else {
                l.id
            };
            let name = if l.display_name.is_empty() {
                l.name.clone()
            } else {
                l.display_name.clone()
            };
            (id, name)
        })
        .collect()
}

/// xprof's `DeriveEventsFromAnnotations` ordering of GPU streams: compute streams (name
/// containing `Compute`) first, then more events first, sorted with libstdc++'s `std::sort`; each
/// stream takes the next display position, followed by positions for its derived lines.
fn renumber_gpu_lines_by(plane: &mut XPlane, counts: &[usize]) {
    let is_derived = |id: i64| {
        let id = id as i32;
        (DERIVED_THREAD_ID_MIN..=DERIVED_THREAD_ID_MAX).contains(&id)
    };
    let compute: Vec<bool> = plane
        .lines
        .iter()
        .map(|l| l.name.contains("Compute"))
        .collect();
    let mut streams: Vec<usize> = (0..plane.lines.len())
        .filter(|&i| plane.lines.get(i).is_some_and(|l| !is_derived(l.id)))
        .collect();
    let count = |i: usize| counts.get(i).copied().unwrap_or(0);
    let is_compute = |i: usize| compute.get(i).copied().unwrap_or(false);
    std_sort(&mut streams, &|&a: &usize, &b: &usize| {
        if is_compute(a) == is_compute(b) {
            count(a) > count(b)
        } else {
            is_compute(a)
        }
    });
    // Positions by line id: a later line with the same id shares the earlier one's position.
    let mut position: HashMap<i64, i64> = HashMap::new();
    let mut next = 1i64;
    for &i in &streams {
        if let Some(line) = plane.lines.get(i) {
            position.insert(line.id, next);
        }
        next += 1 + DERIVED_LINES_PER_STREAM;
    }
    for line in &mut plane.lines {
        if let Some(&p) = position.get(&line.id) {
            line.display_id = p;
        }
    }
}

/// TSL's `SortXPlane` for one line: events by offset, then longer first, with `std::sort`.
fn sort_events(line: &mut XLine) {
    let keys: Vec<(i64, i64)> = line
        .events
        .iter()
        .map(|e| (e.offset_ps().unwrap_or(0), e.duration_ps))
        .collect();
    let mut order: Vec<usize> = (0..line.events.len()).collect();
    let key = |i: usize| keys.get(i).copied().unwrap_or((0, 0));
    std_sort(&mut order, &|&a: &usize, &b: &usize| {
        let (ka, kb) = (key(a), key(b));
        ka.0 < kb.0 || (ka.0 == kb.0 && ka.1 > kb.1)
    });
    let mut events: Vec<Option<profkit_xplane::XEvent>> = std::mem::take(&mut line.events)
        .into_iter()
        .map(Some)
        .collect();
    line.events = order
        .into_iter()
        .filter_map(|i| events.get_mut(i).and_then(Option::take))
        .collect();
}

/// Sets `is_eager` on the plane's kernel-execute and TensorFlow op events.
fn mark_eager(plane: &mut XPlane, facts: &SpaceFacts) {
    let is_host = plane.name == HOST_PLANE_NAME;
    let kinds = EventKinds::of(plane);
    // On TPU planes only the grouping line's events take part in grouping.
    let tpu = plane.name.starts_with(TPU_PLANE_PREFIX);
    let only_line = if tpu {
        if !tpu_plane_has_core_id(&plane.name) {
            return;
        }
        match tpu_grouping_line(plane) {
            Some(i) => Some(i),
            None => return,
        }
    } else {
        None
    };
    let mut marks: Vec<(usize, usize, bool)> = Vec::new();
    for (line_index, line) in plane.lines.iter().enumerate() {
        if only_line.is_some_and(|only| only != line_index) {
            continue;
        }
        let parents = nesting_parents(plane, line, &kinds.async_stat);
        for (index, event) in line.events.iter().enumerate() {
            let kind = kinds.kind(event.metadata_id);
            let kernel = !is_host && kind == Kind::Untyped;
            let correlation = if kernel {
                kinds.correlation_id(event)
            } else {
                None
            };
            if kind != Kind::TfOp && correlation.is_none() {
                continue;
            }
            let own = eager_search(&kinds, line, &parents, index);
            // A kernel's parents are its enclosing event (searched first at each distance) and
            // the launch; breadth-first, the nearer `EagerExecute` wins.
            let launch = correlation
                .and_then(|id| facts.launches.get(&id).copied())
                .unwrap_or(EagerSearch::NotFound);
            let eager = match (own, launch) {
                (
                    EagerSearch::Found { distance: d, eager },
                    EagerSearch::Found { distance: l, .. },
                ) if d <= l + 1 => eager,
                (_, EagerSearch::Found { eager, .. }) => eager,
                (EagerSearch::Found { eager, .. }, EagerSearch::NotFound) => eager,
                (EagerSearch::NotFound, EagerSearch::NotFound) => false,
            };
            marks.push((line_index, index, eager));
        }
    }
    if marks.is_empty() {
        return;
    }
    let stat = intern_stat(plane, "is_eager");
    for (line_index, index, eager) in marks {
        let Some(event) = plane
            .lines
            .get_mut(line_index)
            .and_then(|l| l.events.get_mut(index))
        else {
            continue;
        };
        let value = Some(x_stat::Value::Int64Value(i64::from(eager)));
        match event.stats.iter_mut().find(|s| s.metadata_id == stat) {
            Some(existing) => existing.value = value,
            None => event.stats.push(XStat {
                metadata_id: stat,
                value,
            }),
        }
    }
}

/// Sets the stat with metadata `id` (the first one) or appends it: TSL's `FindOrAddMutableStat`
/// followed by setting the value.
fn set_or_add(stats: &mut Vec<XStat>, id: i64, value: x_stat::Value) {
    match stats.iter_mut().find(|s| s.metadata_id == id) {
        Some(stat) => stat.value = Some(value),
        None => stats.push(XStat {
            metadata_id: id,
            value: Some(value),
        }),
    }
}

/// TSL's lock-step grouping of TPU steps when no host event groups them: the k-th event of a
/// TensorCore plane's grouping line becomes group k (`ProcessRootEvent`).
fn group_tpu_steps(plane: &mut XPlane) {
    let Some(grouping) = tpu_grouping_line(plane) else {
        return;
    };
    let group_stat = intern_stat(plane, "group_id");
    if let Some(line) = plane.lines.get_mut(grouping) {
        for (k, event) in line.events.iter_mut().enumerate() {
            set_or_add(
                &mut event.stats,
                group_stat,
                x_stat::Value::Int64Value(k as i64),
            );
        }
    }
}

/// TSL's `GroupTpuXPlaneEvents` on one device plane: merges the step line's consecutive steps of
/// one group (`MergeHostSteps`), names them after their group, and gives every event of the other
/// lines the group of the grouping-line event it overlaps.
fn group_tpu_plane_events(plane: &mut XPlane, facts: &SpaceFacts) {
    let Some(grouping) = tpu_grouping_line(plane) else {
        return;
    };
    let step_line = plane
        .lines
        .iter()
        .rposition(|l| l.name == "Steps" || l.name == "Sparse Core Steps");
    let group_stat = intern_stat(plane, "group_id");
    if let Some(step) = step_line {
        merge_host_steps(plane, step, group_stat);
        if !facts.tpu_groups.is_empty() {
            let name_stat = intern_stat(plane, "step_name");
            if let Some(line) = plane.lines.get_mut(step) {
                for event in &mut line.events {
                    let group = event
                        .stats
                        .iter()
                        .find(|s| s.metadata_id == group_stat)
                        .map(int_value);
                    if let Some(name) = group.and_then(|g| facts.tpu_groups.get(&g)) {
                        event.stats.push(XStat {
                            metadata_id: name_stat,
                            value: Some(x_stat::Value::StrValue(name.clone())),
                        });
                    }
                }
            }
        }
    }
    let Some(grouping_line) = plane.lines.get(grouping).cloned() else {
        return;
    };
    let groups: Vec<Option<i64>> = grouping_line
        .events
        .iter()
        .map(|e| {
            e.stats
                .iter()
                .find(|s| s.metadata_id == group_stat)
                .map(int_value)
        })
        .collect();
    for (index, line) in plane.lines.iter_mut().enumerate() {
        if Some(index) == step_line || line.name == "_counters_" {
            continue;
        }
        group_line(&grouping_line, &groups, group_stat, line);
    }
}

fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// TSL's `GroupLine`: a forward scan of the grouping line (`XEventContextTracker`) finds the
/// event each event overlaps, remembering the last one found.
fn group_line(grouping: &XLine, groups: &[Option<i64>], group_stat: i64, line: &mut XLine) {
    let spans: Vec<(u64, u64)> = grouping
        .events
        .iter()
        .map(|e| timespan(grouping, e))
        .collect();
    let span_at = |i: usize| spans.get(i).copied().unwrap_or((0, 0));
    let mut tracker: Option<usize> = None;
    let mut cached: Option<usize> = None;
    let mut group: Option<i64> = None;
    let timestamp_ns = line.timestamp_ns;
    for event in &mut line.events {
        let begin = timestamp_ns
            .wrapping_mul(1000)
            .wrapping_add(event.offset_ps().unwrap_or(0)) as u64;
        let span = (begin, begin.wrapping_add(event.duration_ps as u64));
        if !cached.is_some_and(|c| overlaps(span_at(c), span)) {
            cached = None;
            if let Some(current) = tracker.filter(|&c| overlaps(span_at(c), span)) {
                cached = Some(current);
            } else {
                let from = tracker.map_or(0, |c| c + 1);
                for i in from..spans.len() {
                    let candidate = span_at(i);
                    if candidate.0 > span.1 {
                        break;
                    }
                    if candidate.1 < span.0 {
                        continue;
                    }
                    tracker = Some(i);
                    if overlaps(candidate, span) {
                        cached = Some(i);
                    }
                    break;
                }
            }
            group = cached.and_then(|c| groups.get(c).copied().flatten());
        }
        if let Some(group) = group {
            event.stats.push(XStat {
                metadata_id: group_stat,
                value: Some(x_stat::Value::Int64Value(group)),
            });
        }
    }
}

/// TSL's `MergeHostSteps` on the step line: steps without a group go (unless none has one),
/// consecutive steps of one group merge into the first, and each kept step gets its
/// `step_idle_time_ps` (and merged device times).
fn merge_host_steps(plane: &mut XPlane, step: usize, group_stat: i64) {
    let duration_stat = intern_stat(plane, "device_duration_ps");
    let offset_stat = intern_stat(plane, "device_offset_ps");
    let idle_stat = intern_stat(plane, "step_idle_time_ps");
    let Some(line) = plane.lines.get_mut(step) else {
        return;
    };
    let get =
        |e: &profkit_xplane::XEvent, id: i64| e.stats.iter().find(|s| s.metadata_id == id).cloned();
    let mut merged_group: Option<i64> = None;
    let mut merged_device: Option<(u64, u64)> = None;
    let mut merged_step: Option<usize> = None;
    let mut merged_idle: i64 = 0;
    let mut remove = vec![false; line.events.len()];
    let timestamp_ps = line.timestamp_ns.wrapping_mul(1000);
    for index in 0..line.events.len() {
        let Some(event) = line.events.get(index).cloned() else {
            continue;
        };
        let group = get(&event, group_stat).map(|s| int_value(&s));
        let device_span = |e: &profkit_xplane::XEvent| {
            let offset = get(e, offset_stat).map_or(0, |s| int_or_uint(&s));
            let duration = get(e, duration_stat).map_or(0, |s| int_or_uint(&s));
            (offset, offset.wrapping_add(duration))
        };
        match group {
            None => {
                merged_group = None;
                merged_step = None;
                merged_idle = 0;
                if let Some(r) = remove.get_mut(index) {
                    *r = true;
                }
            }
            Some(g) if merged_group != Some(g) => {
                merged_group = Some(g);
                merged_device = None;
                if let Some(idle) = get(&event, idle_stat) {
                    merged_idle = int_or_uint(&idle) as i64;
                }
                if get(&event, offset_stat).is_some() && get(&event, duration_stat).is_some() {
                    merged_device = Some(device_span(&event));
                }
                merged_step = Some(index);
                if let Some(e) = line.events.get_mut(index) {
                    set_or_add(
                        &mut e.stats,
                        idle_stat,
                        x_stat::Value::Int64Value(merged_idle),
                    );
                }
            }
            Some(_) => {
                if let Some(idle) = get(&event, idle_stat) {
                    merged_idle = merged_idle.wrapping_add(int_or_uint(&idle) as i64);
                }
                let end_ps = timespan_end(timestamp_ps, &event);
                if let Some(target) = merged_step.and_then(|m| line.events.get_mut(m)) {
                    if let Some(span) = merged_device.as_mut() {
                        let other = device_span(&event);
                        *span = (span.0.min(other.0), span.1.max(other.1));
                        set_or_add(
                            &mut target.stats,
                            offset_stat,
                            x_stat::Value::Uint64Value(span.0),
                        );
                        set_or_add(
                            &mut target.stats,
                            duration_stat,
                            x_stat::Value::Uint64Value(span.1.wrapping_sub(span.0)),
                        );
                    }
                    let start = timestamp_ps.wrapping_add(target.offset_ps().unwrap_or(0));
                    target.duration_ps = end_ps.wrapping_sub(start);
                    set_or_add(
                        &mut target.stats,
                        idle_stat,
                        x_stat::Value::Int64Value(merged_idle),
                    );
                }
                if let Some(r) = remove.get_mut(index) {
                    *r = true;
                }
            }
        }
    }
    let removed = remove.iter().filter(|r| **r).count();
    if removed < line.events.len() {
        let mut flags = remove.into_iter();
        line.events.retain(|_| !flags.next().unwrap_or(false));
    }
}

fn timespan_end(timestamp_ps: i64, event: &profkit_xplane::XEvent) -> i64 {
    timestamp_ps
        .wrapping_add(event.offset_ps().unwrap_or(0))
        .wrapping_add(event.duration_ps)
}

/// The id of the stat metadata named `name`, created (with the next id) when missing.
fn intern_stat(plane: &mut XPlane, name: &str) -> i64 {
    if let Some(id) = stat_id(plane, name) {
        return id;
    }
    let id = plane
        .stat_metadata
        .keys()
        .copied()
        .max()
        .unwrap_or(0)
        .saturating_add(1);
    plane.stat_metadata.insert(
        id,
        profkit_xplane::XStatMetadata {
            id,
            name: name.to_owned(),
            description: String::new(),
        },
    );
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf_op_names() {
        assert!(is_tf_op("dense/MatMul:MatMul"));
        assert!(is_tf_op("a:_Send"));
        assert!(!is_tf_op("Iterator::Prefetch"));
        assert!(!is_tf_op("cudaLaunchKernel"));
        assert!(!is_tf_op("jit_f/add:add"));
    }

    #[test]
    fn tpu_planes() {
        assert!(is_tensor_core_plane("/device:TPU:0"));
        assert!(is_tensor_core_plane("/device:TPU:"));
        assert!(!is_tensor_core_plane("/device:TPU:0 SparseCore 1"));
        assert!(tpu_plane_has_core_id("/device:TPU:0 SparseCore 1"));
        assert!(tpu_plane_has_core_id("/device:TPU:0 SparseCore Core 1"));
        assert!(!tpu_plane_has_core_id("/device:TPU:"));
    }
}

//! TSL's `EventForest`: the events of the space linked into a graph, and the steps grouped from
//! its roots (`GroupTfEvents`, and the host side of `GroupTpuEventsOSS`).
//!
//! Links, as TSL makes them, in this order (a node's parents are searched in it):
//! 1. nesting on each line (`ConnectIntraThread`): the innermost open event that includes an
//!    event is its parent; events with a true `_a` stat take no part. On a TPU plane
//!    (`ConnectIntraThreadTPU`) only the grouping line's events are nodes, and each takes the
//!    producer/consumer stats of the events of other lines it includes;
//! 2. across threads (`ConnectInterThread`): `ExecutorState::Process` to
//!    `IteratorGetNextOp::DoCompute` and `IteratorGetNextAsOptionalOp::DoCompute` with the same
//!    `id` and `iter_num`, kernel launches to kernel executions with the same `correlation_id`
//!    (the last parent with a key wins);
//! 3. producer to consumer contexts (`ConnectContextGroups`): every event with `_pt`/`_p` is a
//!    parent of every event with the same `_ct`/`_c`, unless both sides have 64 or more.
//!
//! Roots are events with a `_r` stat (its value the root level) or named `TraceContext` (level
//! 1), less the tf.data functions (`id` of a captured function run); TF1 loop iterations
//! (`ExecutorState::Process` with `id` and `iter_num`) replace them when there are any. Roots are
//! taken by level (higher first) then start time; each one without a group and without an
//! ancestor root of its level starts the next group, given to every node reachable through
//! children that has none yet. A root that is not of an implicit type (`FunctionRun`,
//! `SessionRun`, `RunGraph`, `ExecutorState::Process`, TPU steps) gets the `step_name` stat: the
//! nearest `graph_type` (else its own name), a space, and the nearest `iter_num` (else
//! `step_num`, else the group id). When no host root reaches a TPU step, each TensorCore's steps
//! are grouped in lock step from the next group id. Last, `is_eager` is set on every kernel
//! execution and TensorFlow op: whether the nearest `EagerExecute` among the event and its
//! ancestors (breadth first) has an `is_func` of 0.
//!
//! Memory: one node per event of the planes that take part (see [`Forest::takes_part`]), 20 bytes
//! each, and 8 bytes per link while linking, 8 per link and 4 per node while grouping; from the
//! first pass to the second only the nodes, their groups (8 bytes each) and the marks stay.

use std::collections::{BTreeMap, VecDeque};

use profkit_events::report::std_sort;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use profkit_xplane::constants::{HOST_PLANE_NAME, TPU_PLANE_PREFIX};
use profkit_xplane::{XLine, XPlane, XStat, x_stat};

use crate::preprocess::derived::is_derived_line_id;
use crate::preprocess::event_types::EventType;
use crate::preprocess::runtime::{self, RuntimeStats};
use crate::preprocess::stats::{
    int_or_uint, int_value, intern_stat, set_or_add, start_timestamp_ns, timespan,
};
use crate::preprocess::tpu::{tensor_core_id, tpu_grouping_line, tpu_plane_has_core_id};

const NONE: u32 = u32::MAX;
/// `ConnectContextGroups` skips a context with this many producers and consumers.
const MAX_CONTEXT_FANOUT: usize = 64;

/// Stat names the forest reads.
const STAT_NAMES: &[&str] = &[
    "_pt",
    "_ct",
    "_p",
    "_c",
    "_r",
    "_a",
    "id",
    "iter_num",
    "step_num",
    "graph_type",
    "is_func",
    "correlation_id",
    "device_id",
];

#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum StatKind {
    ProducerType,
    ConsumerType,
    ProducerId,
    ConsumerId,
    IsRoot,
    IsAsync,
    StepId,
    IterNum,
    StepNum,
    GraphType,
    IsFunc,
    CorrelationId,
    DeviceId,
}

const STAT_KINDS: [StatKind; 13] = [
    StatKind::ProducerType,
    StatKind::ConsumerType,
    StatKind::ProducerId,
    StatKind::ConsumerId,
    StatKind::IsRoot,
    StatKind::IsAsync,
    StatKind::StepId,
    StatKind::IterNum,
    StatKind::StepNum,
    StatKind::GraphType,
    StatKind::IsFunc,
    StatKind::CorrelationId,
    StatKind::DeviceId,
];

/// One event of the graph (20 bytes: its start, end and group are kept beside it, the times only
/// for the nodes that need them).
#[derive(Clone, Debug)]
struct Node {
    line: u32,
    event: u32,
    ty: EventType,
    /// TSL's root level ([`NO_ROOT`]: not a root).
    root_level: i32,
    /// On a line named `Steps`, `Sparse Core Steps`, `XLA Modules` or `Sparse Core Modules`
    /// (TSL's `IsTPUParentLineEvent`: an implicit root).
    tpu_step: bool,
}

const NO_ROOT: i32 = i32::MIN;
/// In the search for an `EagerExecute`: not searched yet, on the walk in progress, none found.
const UNKNOWN: u32 = u32::MAX - 1;
const IN_CHAIN: u32 = u32::MAX - 2;
const NOT_FOUND: u32 = u32::MAX;
const NO_GROUP: i64 = i64::MIN;

/// The stats of nodes that naming, eager marking and loops read, each kept only where it can be
/// read: `is_func` of `EagerExecute` events, `id` of executor events, tf.data functions and roots.
#[derive(Clone, Debug, Default)]
struct NodeStats {
    graph_type: HashMap<u32, String>,
    iter_num: HashMap<u32, i64>,
    step_num: HashMap<u32, i64>,
    step_id: HashMap<u32, i64>,
    is_func: HashMap<u32, i64>,
}

/// A producer or consumer context key: its type and id.
type ContextKey = (i64, u64);

/// What grouping gives each node, once done.
#[derive(Clone, Debug, Default)]
struct NodeMarks {
    step_names: HashMap<u32, String>,
    /// `is_eager` by node: -1 none, else 0 or 1.
    eager: Vec<i8>,
}

/// The graph of the space's events, built plane by plane in file order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Forest {
    nodes: Vec<Node>,
    /// Start (`TimestampPs`) and end (as TSL's unsigned `Timespan` holds it) in picoseconds, of
    /// the roots, executor events and TPU steps.
    spans: HashMap<u32, (i64, u64)>,
    /// Each node's group ([`NO_GROUP`]: none), once grouped.
    groups: Vec<i64>,
    stats: NodeStats,
    /// The event names of the roots (by node).
    root_names: HashMap<u32, String>,
    /// Links in the order TSL adds them: (parent, child).
    links: Vec<(u32, u32)>,
    contexts: BTreeMap<ContextKey, (Vec<u32>, Vec<u32>)>,
    /// The events xprof counts as launches on a device (see [`Forest::launches_grouped`]).
    launches: Vec<Launch>,
    /// The index of the first plane named `/host:CPU`, and its earliest line timestamp.
    first_host: Option<usize>,
    host_start_ns: i64,
    /// Keys of the inter-thread links: (parent type, child type) to nodes with their key.
    launch_keys: Vec<(u32, u64, bool)>,
    iterator_keys: Vec<(u32, (u64, u64), bool)>,
    tensor_core_roots: Vec<Vec<u32>>,
    /// The nodes of each plane taken in (by plane index): first and end.
    planes: HashMap<usize, (u32, u32)>,
    /// Group names by group id (TSL's group metadata).
    pub names: BTreeMap<i64, String>,
    marks: NodeMarks,
    /// Two roots of one level start at the same time: TSL orders them with an unstable sort
    /// over a hash map, which profkit cannot reproduce.
    pub tied_roots: bool,
    done: bool,
}

/// The stat metadata ids of one plane, by kind.
struct PlaneStats {
    kinds: HashMap<i64, StatKind>,
    by_kind: [Option<i64>; 13],
    names: HashMap<i64, String>,
}

impl PlaneStats {
    fn of(plane: &XPlane) -> PlaneStats {
        let mut kinds = HashMap::default();
        let mut by_kind = [None; 13];
        for (id, m) in &plane.stat_metadata {
            if let Some(k) = STAT_NAMES.iter().position(|n| *n == m.name) {
                if let Some(kind) = STAT_KINDS.get(k) {
                    kinds.insert(*id, *kind);
                }
                if let Some(slot) = by_kind.get_mut(k) {
                    *slot = Some(slot.map_or(*id, |s: i64| s.min(*id)));
                }
            }
        }
        PlaneStats {
            kinds,
            by_kind,
            names: plane
                .stat_metadata
                .iter()
                .map(|(id, m)| (*id, m.name.clone()))
                .collect(),
        }
    }

    /// TSL's `GetStat(type)`: the first stat of the type's metadata.
    fn get<'a>(&self, stats: &'a [XStat], kind: StatKind) -> Option<&'a XStat> {
        let id = self.by_kind.get(kind as usize).copied().flatten()?;
        stats.iter().find(|s| s.metadata_id == id)
    }

    fn str_or_ref(&self, stat: &XStat) -> String {
        crate::preprocess::stats::str_or_ref(stat, &self.names).to_owned()
    }
}

/// The producer and consumer contexts `PreprocessXPlane` gives an event, if any.
type Runtime = (Option<ContextKey>, Option<ContextKey>);

/// TSL's `GroupingEventStats`.
#[derive(Default)]
struct Grouping {
    producer_type: Option<i64>,
    producer_id: Option<u64>,
    consumer_type: Option<i64>,
    consumer_id: Option<u64>,
    root_level: Option<i32>,
    is_async: bool,
}

impl Grouping {
    fn of(stats: &PlaneStats, event_stats: &[XStat], ty: EventType, runtime: Runtime) -> Grouping {
        let mut g = Grouping::default();
        for stat in event_stats {
            let Some(kind) = stats.kinds.get(&stat.metadata_id) else {
                continue;
            };
            match kind {
                StatKind::ProducerType => g.producer_type = Some(int_value(stat)),
                StatKind::ProducerId => g.producer_id = Some(int_or_uint(stat)),
                StatKind::ConsumerType => g.consumer_type = Some(int_value(stat)),
                StatKind::ConsumerId => g.consumer_id = Some(int_or_uint(stat)),
                StatKind::IsRoot => g.root_level = Some(int_value(stat) as i32),
                StatKind::IsAsync => g.is_async = int_value(stat) != 0,
                _ => {}
            }
        }
        // `PreprocessXPlane` sets these contexts (see `runtime`).
        let (producer, consumer) = runtime;
        if let Some((t, id)) = producer {
            g.producer_type = Some(t);
            g.producer_id = Some(id);
        }
        if let Some((t, id)) = consumer {
            g.consumer_type = Some(t);
            g.consumer_id = Some(id);
        }
        // `PreprocessXPlane` makes these roots (`XplaneRootEventMutatorFactory`).
        match ty {
            EventType::ProcessBatch | EventType::OrbaxProcessBatch => g.root_level = Some(2),
            EventType::BatchingSessionRun => g.root_level = Some(1),
            _ => {}
        }
        if g.root_level.is_none() && ty == EventType::TraceContext {
            g.root_level = Some(1);
        }
        g
    }
}

impl Forest {
    /// Whether a plane with these metadata names can hold a root or a link, so that its events
    /// are needed (the others' events can get nothing from grouping).
    pub(crate) fn takes_part<'a>(
        name: &str,
        mut event_names: impl Iterator<Item = &'a str>,
        mut stat_names: impl Iterator<Item = &'a str>,
    ) -> bool {
        name.starts_with(TPU_PLANE_PREFIX)
            || stat_names.any(|n| matches!(n, "_r" | "_p" | "_c" | "correlation_id" | "id"))
            || event_names.any(|n| EventType::of_name(n).is_some())
    }

    /// Takes in plane number `index` (after its regions were added).
    pub(crate) fn add_plane(&mut self, index: usize, plane: &XPlane) {
        let stats = PlaneStats::of(plane);
        let is_host = plane.name == HOST_PLANE_NAME;
        let types: HashMap<i64, Option<EventType>> = plane
            .event_metadata
            .iter()
            .map(|(id, m)| (*id, EventType::of_name(&m.name)))
            .collect();
        let event_type = |metadata_id: i64, event_stats: &[XStat]| -> EventType {
            match types.get(&metadata_id).copied().flatten() {
                Some(t) => t,
                None if stats.get(event_stats, StatKind::CorrelationId).is_some() => {
                    if is_host {
                        EventType::KernelLaunch
                    } else {
                        EventType::KernelExecute
                    }
                }
                None => EventType::Unknown,
            }
        };
        let first = u32::try_from(self.nodes.len()).unwrap_or(NONE);
        if is_host && self.first_host.is_none() {
            self.first_host = Some(index);
            self.host_start_ns = start_timestamp_ns(plane);
        }
        let runtime_stats = RuntimeStats::of(plane);
        let runtime_active = runtime::active(plane);
        let runtime = |line: &XLine, event: &profkit_xplane::XEvent| -> Runtime {
            if !runtime_active {
                return (None, None);
            }
            let name = plane
                .event_metadata
                .get(&event.metadata_id)
                .map_or("", |m| m.name.as_str());
            runtime_stats.contexts(name, &line.name, &event.stats)
        };
        if plane.name.starts_with(TPU_PLANE_PREFIX) {
            self.planes.insert(index, (first, first));
            if !tpu_plane_has_core_id(&plane.name) {
                return;
            }
            let Some(grouping) = tpu_grouping_line(plane) else {
                return;
            };
            let Some(line) = plane.lines.get(grouping) else {
                return;
            };
            let mut parents = Vec::with_capacity(line.events.len());
            for (e, event) in line.events.iter().enumerate() {
                let ty = event_type(event.metadata_id, &event.stats);
                let node = self.push((grouping, e), line, event, ty, &stats);
                let g = Grouping::of(&stats, &event.stats, ty, runtime(line, event));
                self.set_context(&g, node);
                parents.push(node);
            }
            for (l, other) in plane.lines.iter().enumerate() {
                if l == grouping {
                    continue;
                }
                let mut at = 0usize;
                for event in &other.events {
                    let span = timespan(other, event);
                    while parents.get(at).is_some_and(|&p| self.span(p).1 <= span.0) {
                        at += 1;
                    }
                    let Some(&parent) = parents.get(at) else {
                        break;
                    };
                    let ps = self.span(parent);
                    if ps.0 <= span.0 && span.1 <= ps.1 {
                        let ty = event_type(event.metadata_id, &event.stats);
                        let g = Grouping::of(&stats, &event.stats, ty, runtime(other, event));
                        self.set_context(&g, parent);
                    }
                }
            }
            if tensor_core_id(&plane.name).is_some() {
                self.tensor_core_roots.push(parents);
            }
            self.close_plane(index, first);
            return;
        }
        let events: usize = plane.lines.iter().map(|l| l.events.len()).sum();
        self.nodes.reserve_exact(events);
        self.links.reserve_exact(events);
        for (l, line) in plane.lines.iter().enumerate() {
            let mut open: Vec<(u32, (u64, u64))> = Vec::new();
            for (e, event) in line.events.iter().enumerate() {
                let ty = event_type(event.metadata_id, &event.stats);
                let node = self.push((l, e), line, event, ty, &stats);
                let g = Grouping::of(&stats, &event.stats, ty, runtime(line, event));
                if let (Some(n), Some(level)) = (self.nodes.get_mut(node as usize), g.root_level) {
                    n.root_level = level;
                    self.keep_span(node, line, event);
                    self.keep_step_id(node, event, &stats);
                }
                if g.root_level.is_some() {
                    let name = plane.event_metadata.get(&event.metadata_id);
                    let name = name.map(|m| m.name.clone()).unwrap_or_default();
                    self.root_names.insert(node, name);
                }
                self.set_context(&g, node);
                // `LaunchEventStats`: its stats read in order, the last of a kind winning.
                let last = |kind: StatKind| {
                    event
                        .stats
                        .iter()
                        .rev()
                        .find(|s| stats.kinds.get(&s.metadata_id) == Some(&kind))
                };
                if let (true, Some(device), Some(_)) = (
                    self.first_host == Some(index) && !is_derived_line_id(line.id),
                    last(StatKind::DeviceId),
                    last(StatKind::CorrelationId),
                ) {
                    let named_cu = plane
                        .event_metadata
                        .get(&event.metadata_id)
                        .is_some_and(|m| m.name.starts_with("cu"));
                    if !named_cu {
                        let (begin, end) = timespan(line, event);
                        self.launches.push(Launch {
                            node,
                            device: int_or_uint(device),
                            begin,
                            end,
                            duration: event.duration_ps as u64,
                        });
                    }
                }
                match ty {
                    EventType::KernelLaunch | EventType::KernelExecute => {
                        if let Some(s) = stats.get(&event.stats, StatKind::CorrelationId) {
                            let parent = ty == EventType::KernelLaunch;
                            self.launch_keys.push((node, int_or_uint(s), parent));
                        }
                    }
                    EventType::ExecutorStateProcess
                    | EventType::IteratorGetNext
                    | EventType::IteratorGetNextAsOptional => {
                        let id = stats.get(&event.stats, StatKind::StepId);
                        let iter = stats.get(&event.stats, StatKind::IterNum);
                        if let (Some(id), Some(iter)) = (id, iter) {
                            let key = (int_or_uint(id), int_or_uint(iter));
                            let parent = ty == EventType::ExecutorStateProcess;
                            self.iterator_keys.push((node, key, parent));
                        }
                    }
                    _ => {}
                }
                if g.is_async {
                    continue;
                }
                let span = timespan(line, event);
                while let Some(&(top, top_span)) = open.last() {
                    if top_span.0 <= span.0 && span.1 <= top_span.1 {
                        self.links.push((top, node));
                        break;
                    }
                    open.pop();
                }
                open.push((node, span));
            }
        }
        self.close_plane(index, first);
    }

    fn close_plane(&mut self, index: usize, first: u32) {
        let end = u32::try_from(self.nodes.len()).unwrap_or(NONE);
        self.planes.insert(index, (first, end));
    }

    /// Adds the node of the event at (line, event) of the plane being taken in.
    fn push(
        &mut self,
        (line, event_index): (usize, usize),
        xline: &XLine,
        event: &profkit_xplane::XEvent,
        ty: EventType,
        stats: &PlaneStats,
    ) -> u32 {
        let tpu_step = matches!(
            xline.name.as_str(),
            "Steps" | "Sparse Core Steps" | "XLA Modules" | "Sparse Core Modules"
        );
        let node = u32::try_from(self.nodes.len()).unwrap_or(NONE);
        self.nodes.push(Node {
            line: u32::try_from(line).unwrap_or(NONE),
            event: u32::try_from(event_index).unwrap_or(NONE),
            ty,
            root_level: NO_ROOT,
            tpu_step,
        });
        if tpu_step || ty == EventType::ExecutorStateProcess {
            self.keep_span(node, xline, event);
        }
        if let Some(v) = stats.get(&event.stats, StatKind::GraphType) {
            self.stats.graph_type.insert(node, stats.str_or_ref(v));
        }
        if let Some(v) = stats.get(&event.stats, StatKind::IterNum) {
            self.stats.iter_num.insert(node, int_value(v));
        }
        if let Some(v) = stats.get(&event.stats, StatKind::StepNum) {
            self.stats.step_num.insert(node, int_value(v));
        }
        if ty == EventType::EagerExecute {
            if let Some(v) = stats.get(&event.stats, StatKind::IsFunc) {
                self.stats.is_func.insert(node, int_value(v));
            }
        }
        if matches!(
            ty,
            EventType::ExecutorStateProcess | EventType::CapturedFunctionRun
        ) {
            self.keep_step_id(node, event, stats);
        }
        node
    }

    fn keep_step_id(&mut self, node: u32, event: &profkit_xplane::XEvent, stats: &PlaneStats) {
        if let Some(v) = stats.get(&event.stats, StatKind::StepId) {
            self.stats.step_id.insert(node, int_value(v));
        }
    }

    fn keep_span(&mut self, node: u32, line: &XLine, event: &profkit_xplane::XEvent) {
        let start = line
            .timestamp_ns
            .wrapping_mul(1000)
            .wrapping_add(event.offset_ps().unwrap_or(0));
        self.spans.insert(node, (start, timespan(line, event).1));
    }

    fn span(&self, node: u32) -> (u64, u64) {
        self.spans
            .get(&node)
            .map_or((0, 0), |&(start, end)| (start as u64, end))
    }

    fn start(&self, node: u32) -> i64 {
        self.spans.get(&node).map_or(0, |s| s.0)
    }

    fn set_context(&mut self, g: &Grouping, node: u32) {
        if let (Some(t), Some(id)) = (g.producer_type, g.producer_id) {
            self.contexts.entry((t, id)).or_default().0.push(node);
        }
        if let (Some(t), Some(id)) = (g.consumer_type, g.consumer_id) {
            self.contexts.entry((t, id)).or_default().1.push(node);
        }
    }
}

/// Links by node, in the order they were made.
struct Adjacency {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Adjacency {
    fn build(nodes: usize, links: &[(u32, u32)], forward: bool) -> Adjacency {
        let mut offsets = vec![0u32; nodes + 1];
        for &(p, c) in links {
            let from = if forward { p } else { c } as usize;
            if let Some(o) = offsets.get_mut(from + 1) {
                *o += 1;
            }
        }
        for i in 1..offsets.len() {
            let before = offsets.get(i - 1).copied().unwrap_or(0);
            if let Some(o) = offsets.get_mut(i) {
                *o += before;
            }
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; links.len()];
        for &(p, c) in links {
            let (from, to) = if forward { (p, c) } else { (c, p) };
            if let Some(slot) = fill.get_mut(from as usize) {
                if let Some(t) = targets.get_mut(*slot as usize) {
                    *t = to;
                }
                *slot += 1;
            }
        }
        Adjacency { offsets, targets }
    }

    fn of(&self, node: u32) -> &[u32] {
        let from = self.offsets.get(node as usize).copied().unwrap_or(0) as usize;
        let to = self.offsets.get(node as usize + 1).copied().unwrap_or(0) as usize;
        self.targets.get(from..to).unwrap_or(&[])
    }
}

impl Forest {
    /// Links the planes taken in and groups their events (`ConnectInterThread`,
    /// `ConnectContextGroups`, then `GroupEvents`). Call once, after the last plane.
    pub(crate) fn group(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        self.connect_inter_thread();
        let contexts = std::mem::take(&mut self.contexts);
        for (producers, consumers) in contexts.values() {
            if producers.len() >= MAX_CONTEXT_FANOUT && consumers.len() >= MAX_CONTEXT_FANOUT {
                continue;
            }
            for &p in producers {
                for &c in consumers {
                    self.links.push((p, c));
                }
            }
        }
        let tf_data: HashSet<i64> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.ty == EventType::CapturedFunctionRun)
            .filter_map(|(i, _)| self.stats.step_id.get(&(i as u32)).copied())
            .collect();
        let loop_roots = self.tensorflow_loops(&tf_data);
        let links = std::mem::take(&mut self.links);
        self.groups = vec![NO_GROUP; self.nodes.len()];
        let children = Adjacency::build(self.nodes.len(), &links, true);
        let parents = Adjacency::build(self.nodes.len(), &links, false);
        drop(links);
        self.create_groups(&loop_roots, &tf_data, &children, &parents);
        let mut eager = vec![-1i8; self.nodes.len()];
        let mut memo = vec![UNKNOWN; self.nodes.len()];
        for ty in [EventType::KernelExecute, EventType::TfOpRun] {
            for i in 0..self.nodes.len() {
                if self.nodes.get(i).is_some_and(|n| n.ty == ty) {
                    let found = self.nearest_eager_execute(i as u32, &parents, &mut memo);
                    let is_eager = found != NOT_FOUND && self.stats.is_func.get(&found) == Some(&0);
                    if let Some(e) = eager.get_mut(i) {
                        *e = i8::from(is_eager);
                    }
                }
            }
        }
        self.marks.eager = eager;
        // Only what `apply` needs stays for the second pass.
        self.launch_keys = Vec::new();
        self.iterator_keys = Vec::new();
        self.spans = HashMap::default();
        self.stats = NodeStats::default();
        self.root_names = HashMap::default();
    }

    fn connect_inter_thread(&mut self) {
        for child_type in [
            EventType::IteratorGetNext,
            EventType::IteratorGetNextAsOptional,
        ] {
            let mut map: HashMap<(u64, u64), u32> = HashMap::default();
            for &(node, key, parent) in &self.iterator_keys {
                if parent {
                    map.insert(key, node);
                }
            }
            for &(node, key, parent) in &self.iterator_keys {
                let ty = self.nodes.get(node as usize).map(|n| n.ty);
                if !parent && ty == Some(child_type) {
                    if let Some(&p) = map.get(&key) {
                        self.links.push((p, node));
                    }
                }
            }
        }
        let mut map: HashMap<u64, u32> = HashMap::default();
        for &(node, key, parent) in &self.launch_keys {
            if parent {
                map.insert(key, node);
            }
        }
        for &(node, key, parent) in &self.launch_keys {
            if !parent {
                if let Some(&p) = map.get(&key) {
                    self.links.push((p, node));
                }
            }
        }
    }

    /// TSL's `ProcessTensorFlowLoop`: the first executor event of each iteration of a TF1 loop,
    /// the iteration's other executor events linked under it.
    fn tensorflow_loops(&mut self, tf_data: &HashSet<i64>) -> Vec<u32> {
        // step id -> iteration -> (first event, events)
        let mut loops: BTreeMap<i64, BTreeMap<i64, (u32, Vec<u32>)>> = BTreeMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.ty != EventType::ExecutorStateProcess {
                continue;
            }
            let node = i as u32;
            let (Some(&step), Some(&iter)) = (
                self.stats.step_id.get(&node),
                self.stats.iter_num.get(&node),
            ) else {
                continue;
            };
            if tf_data.contains(&step) {
                continue;
            }
            let entry = loops
                .entry(step)
                .or_default()
                .entry(iter)
                .or_insert((i as u32, Vec::new()));
            if self.start(i as u32) < self.start(entry.0) {
                entry.0 = i as u32;
            }
            entry.1.push(i as u32);
        }
        let mut iterations: Vec<(u32, Vec<u32>)> = Vec::new();
        for tf_loop in loops.into_values() {
            if tf_loop.len() == 1 && tf_loop.contains_key(&0) {
                continue;
            }
            iterations.extend(tf_loop.into_values());
        }
        iterations.sort_by_key(|(first, _)| self.start(*first));
        let mut roots = Vec::new();
        for (first, events) in iterations {
            roots.push(first);
            for e in events {
                if e != first {
                    self.links.push((first, e));
                }
            }
        }
        roots
    }

    fn root_level(&self, node: u32) -> i32 {
        match self.nodes.get(node as usize).map(|n| n.root_level) {
            Some(NO_ROOT) | None => 0,
            Some(level) => level,
        }
    }

    fn is_root(&self, node: u32) -> bool {
        self.nodes
            .get(node as usize)
            .is_some_and(|n| n.root_level != NO_ROOT)
    }

    fn group_of(&self, node: u32) -> Option<i64> {
        self.groups
            .get(node as usize)
            .copied()
            .filter(|&g| g != NO_GROUP)
    }

    /// Breadth first over `node`'s ancestors (itself first when `include_self`), the first
    /// that `found` accepts.
    fn find_up(
        &self,
        node: u32,
        include_self: bool,
        parents: &Adjacency,
        mut found: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        let mut queue = VecDeque::new();
        let mut seen = HashSet::default();
        seen.insert(node);
        if include_self {
            queue.push_back(node);
        } else {
            for &p in parents.of(node) {
                if seen.insert(p) {
                    queue.push_back(p);
                } else {
                    // TSL queues a repeated parent twice here; it changes no answer.
                }
            }
        }
        while let Some(n) = queue.pop_front() {
            if found(n) {
                return Some(n);
            }
            for &p in parents.of(n) {
                if seen.insert(p) {
                    queue.push_back(p);
                }
            }
        }
        None
    }

    /// TSL's `RootNeedsGrouping`.
    fn needs_grouping(&self, root: u32, parents: &Adjacency) -> bool {
        if self.group_of(root).is_some() {
            return false;
        }
        let level = self.root_level(root);
        self.find_up(root, false, parents, |p| {
            self.is_root(p) && self.root_level(p) == level
        })
        .is_none()
    }

    fn create_groups(
        &mut self,
        loop_roots: &[u32],
        tf_data: &HashSet<i64>,
        children: &Adjacency,
        parents: &Adjacency,
    ) {
        let mut group_id: i64 = 0;
        if !loop_roots.is_empty() {
            for &root in loop_roots {
                self.process_root(group_id, root, children, parents);
                group_id += 1;
            }
        } else {
            let mut roots: Vec<u32> = Vec::new();
            for (i, n) in self.nodes.iter().enumerate() {
                if n.root_level == NO_ROOT {
                    continue;
                }
                let step = self.stats.step_id.get(&(i as u32)).copied();
                if step.is_some_and(|s| tf_data.contains(&s)) {
                    continue;
                }
                roots.push(i as u32);
            }
            // TSL lists the roots type by type (in hash-map order), each type's in the order
            // they were taken in, then sorts them with `std::sort`. With one type, that input
            // order is known and libstdc++'s sort gives TSL's order exactly; with several, ties
            // between types are the hash map's to break.
            let key = |n: u32| (std::cmp::Reverse(self.root_level(n)), self.start(n));
            let ty = |n: u32| self.nodes.get(n as usize).map(|n| n.ty);
            let one_type = roots.windows(2).all(|w| match w {
                [a, b] => ty(*a) == ty(*b),
                _ => true,
            });
            std_sort(&mut roots, &|a: &u32, b: &u32| key(*a) < key(*b));
            self.tied_roots = !one_type
                && roots.windows(2).any(|w| match w {
                    [a, b] => key(*a) == key(*b) && ty(*a) != ty(*b),
                    _ => false,
                });
            for root in roots {
                if self.needs_grouping(root, parents) {
                    self.process_root(group_id, root, children, parents);
                    group_id += 1;
                }
            }
        }
        let cores = std::mem::take(&mut self.tensor_core_roots);
        let tpu_needs_grouping = cores
            .iter()
            .all(|core| core.iter().all(|&e| self.needs_grouping(e, parents)));
        if tpu_needs_grouping {
            for core in &cores {
                let mut id = group_id;
                for &event in core {
                    if self.needs_grouping(event, parents) {
                        self.process_root(id, event, children, parents);
                        id += 1;
                    }
                }
            }
        }
    }

    /// TSL's `ProcessRootEvent`.
    fn process_root(
        &mut self,
        group_id: i64,
        root: u32,
        children: &Adjacency,
        parents: &Adjacency,
    ) {
        let mut queue = VecDeque::new();
        let mut seen = HashSet::default();
        seen.insert(root);
        queue.push_back(root);
        while let Some(n) = queue.pop_front() {
            let Some(group) = self.groups.get_mut(n as usize) else {
                continue;
            };
            if *group != NO_GROUP {
                continue;
            }
            *group = group_id;
            for &c in children.of(n) {
                if seen.insert(c) {
                    queue.push_back(c);
                }
            }
        }
        let name = self.group_name(root, parents);
        let implicit = self
            .nodes
            .get(root as usize)
            .is_some_and(|n| n.ty.is_implicit_root() || n.tpu_step);
        if !implicit {
            self.marks.step_names.insert(root, name.clone());
        }
        self.names.insert(group_id, name);
    }

    /// TSL's `EventNode::GetGroupName`.
    fn group_name(&self, root: u32, parents: &Adjacency) -> String {
        let mut name = String::new();
        let stats = &self.stats;
        if let Some(n) = self.find_up(root, true, parents, |n| stats.graph_type.contains_key(&n)) {
            name.push_str(stats.graph_type.get(&n).map_or("", String::as_str));
            name.push(' ');
        } else if !self
            .nodes
            .get(root as usize)
            .is_some_and(|n| n.ty.is_implicit_root() || n.tpu_step)
        {
            name.push_str(self.root_names.get(&root).map_or("", String::as_str));
            name.push(' ');
        }
        let mut step = self.group_of(root).unwrap_or(0);
        if let Some(n) = self.find_up(root, true, parents, |n| stats.iter_num.contains_key(&n)) {
            step = stats.iter_num.get(&n).copied().unwrap_or(0);
        } else if let Some(n) =
            self.find_up(root, true, parents, |n| stats.step_num.contains_key(&n))
        {
            step = stats.step_num.get(&n).copied().unwrap_or(0);
        }
        name.push_str(&step.to_string());
        name
    }

    /// The `EagerExecute` TSL's `EventNode::IsEager` finds for `node` (breadth first over it and
    /// its ancestors), or [`NOT_FOUND`]. Runs of single parents are remembered in `memo`, so that
    /// deep nesting costs each event one step rather than a walk to the top.
    fn nearest_eager_execute(&self, node: u32, parents: &Adjacency, memo: &mut [u32]) -> u32 {
        let is_eager_execute = |n: u32| {
            self.nodes
                .get(n as usize)
                .is_some_and(|n| n.ty == EventType::EagerExecute)
        };
        let mut chain = Vec::new();
        let mut at = node;
        let answer = loop {
            let known = memo.get(at as usize).copied().unwrap_or(NOT_FOUND);
            if known == IN_CHAIN {
                // A cycle of single parents, none an `EagerExecute`.
                break NOT_FOUND;
            }
            if known != UNKNOWN {
                break known;
            }
            if is_eager_execute(at) {
                break at;
            }
            match parents.of(at) {
                [] => break NOT_FOUND,
                [only] => {
                    chain.push(at);
                    if let Some(m) = memo.get_mut(at as usize) {
                        *m = IN_CHAIN;
                    }
                    at = *only;
                }
                // A node of several parents: TSL's search from there.
                _ => {
                    break self
                        .find_up(at, true, parents, is_eager_execute)
                        .unwrap_or(NOT_FOUND);
                }
            }
        };
        if memo.get(at as usize) == Some(&UNKNOWN) {
            chain.push(at);
        }
        for n in chain {
            if let Some(m) = memo.get_mut(n as usize) {
                *m = answer;
            }
        }
        answer
    }

    /// Whether any event of the plane numbered `index` is grouped.
    pub(crate) fn plane_grouped(&self, index: usize) -> bool {
        let Some(&(first, end)) = self.planes.get(&index) else {
            return false;
        };
        self.groups
            .get(first as usize..end as usize)
            .is_some_and(|groups| groups.iter().any(|&g| g != NO_GROUP))
    }

    /// xprof's `Launch Stats` of GPU number `device` (by position among the `devices` GPU
    /// planes): one per group its grouped launches belong to, by group id; and the earliest line
    /// timestamp of the host plane.
    pub(crate) fn launch_stats(&self, device: usize, devices: usize) -> (Vec<LaunchStats>, i64) {
        let mut by_group: BTreeMap<i64, LaunchStats> = BTreeMap::new();
        for launch in &self.launches {
            let Some(group) = self.group_of(launch.node) else {
                continue;
            };
            if launch.device >= devices as u64 || launch.device != device as u64 {
                continue;
            }
            let entry = by_group.entry(group).or_insert(LaunchStats {
                group,
                begin: launch.begin,
                end: launch.end,
                count: 0,
                max: 0,
                sum: 0,
            });
            entry.begin = entry.begin.min(launch.begin);
            entry.end = entry.end.max(launch.end);
            entry.count += 1;
            entry.max = entry.max.max(launch.duration);
            entry.sum = entry.sum.wrapping_add(launch.duration);
        }
        (by_group.into_values().collect(), self.host_start_ns)
    }

    /// What grouping gave each event of plane number `index`, in the plane's line and event
    /// order (for a plane other than a TPU plane, whose events are all nodes).
    pub(crate) fn marks(&self, index: usize) -> Option<Marks<'_>> {
        let &(first, end) = self.planes.get(&index)?;
        Some(Marks {
            forest: self,
            next: first,
            end,
        })
    }

    /// Writes what grouping gave the events of plane number `index` into it (the plane as it
    /// was taken in): `group_id`, `step_name` and `is_eager` stats.
    pub(crate) fn apply(&self, index: usize, plane: &mut XPlane) {
        let Some(&(first, end)) = self.planes.get(&index) else {
            return;
        };
        // TSL's `CreateStatMetadata`, on every plane it takes in.
        let group_stat = intern_stat(plane, "group_id");
        let name_stat = intern_stat(plane, "step_name");
        let eager_stat = intern_stat(plane, "is_eager");
        for n in first..end {
            let Some(node) = self.nodes.get(n as usize) else {
                continue;
            };
            let step_name = self.marks.step_names.get(&n);
            let eager = self.marks.eager.get(n as usize).filter(|&&e| e >= 0);
            let group = self.group_of(n);
            if group.is_none() && step_name.is_none() && eager.is_none() {
                continue;
            }
            let Some(event) = plane
                .lines
                .get_mut(node.line as usize)
                .and_then(|l| l.events.get_mut(node.event as usize))
            else {
                continue;
            };
            if let Some(g) = group {
                set_or_add(&mut event.stats, group_stat, x_stat::Value::Int64Value(g));
            }
            if let Some(name) = step_name {
                set_or_add(
                    &mut event.stats,
                    name_stat,
                    x_stat::Value::StrValue(name.clone()),
                );
            }
            if let Some(&e) = eager {
                set_or_add(
                    &mut event.stats,
                    eager_stat,
                    x_stat::Value::Int64Value(i64::from(e)),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use profkit_xplane::{PlaneBuilder, XPlane, x_stat};

    use crate::preprocess::{SpaceFacts, preprocess_plane};

    fn plane(name: &str, build: impl FnOnce(&mut PlaneBuilder<'_>)) -> XPlane {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name(name);
        build(&mut b);
        plane
    }

    /// The space preprocessed, plane by plane.
    fn preprocess(mut planes: Vec<XPlane>) -> (SpaceFacts, Vec<XPlane>) {
        let mut facts = SpaceFacts::default();
        for p in &planes {
            facts.observe(p);
        }
        facts.finish();
        for (i, p) in planes.iter_mut().enumerate() {
            preprocess_plane(p, i, &facts, true);
        }
        (facts, planes)
    }

    /// The value of the stat named `stat` on the first event named `event`.
    fn stat(plane: &XPlane, event: &str, stat: &str) -> Option<x_stat::Value> {
        let metadata = plane.event_metadata.values().find(|m| m.name == event)?.id;
        let stat_id = plane.stat_metadata.values().find(|m| m.name == stat)?.id;
        plane
            .lines
            .iter()
            .flat_map(|l| &l.events)
            .find(|e| e.metadata_id == metadata)?
            .stats
            .iter()
            .find(|s| s.metadata_id == stat_id)?
            .value
            .clone()
    }

    fn int(v: i64) -> Option<x_stat::Value> {
        Some(x_stat::Value::Int64Value(v))
    }

    #[test]
    fn a_step_root_groups_what_it_nests_and_launches() {
        let host = plane("/host:CPU", |b| {
            let mut line = b.line(1);
            line.add_event("train")
                .set_offset_ps(0)
                .set_duration_ps(100)
                .add_stat("_r", 1i64)
                .add_stat("step_num", 3i64);
            line.add_event("EagerExecute")
                .set_offset_ps(10)
                .set_duration_ps(50)
                .add_stat("is_func", 0i64);
            line.add_event("cudaLaunchKernel")
                .set_offset_ps(20)
                .set_duration_ps(5)
                .add_stat("correlation_id", 7u64);
            line.add_event("outside")
                .set_offset_ps(200)
                .set_duration_ps(5);
        });
        let gpu = plane("/device:GPU:0", |b| {
            b.line(1)
                .add_event("kernel")
                .set_offset_ps(300)
                .set_duration_ps(5)
                .add_stat("correlation_id", 7u64);
        });
        let (facts, planes) = preprocess(vec![host, gpu]);
        let [host, gpu] = planes.as_slice() else {
            panic!("two planes")
        };
        assert_eq!(stat(host, "train", "group_id"), int(0));
        assert_eq!(
            stat(host, "train", "step_name"),
            Some(x_stat::Value::StrValue("train 3".into()))
        );
        assert_eq!(stat(host, "cudaLaunchKernel", "group_id"), int(0));
        assert_eq!(stat(host, "outside", "group_id"), None);
        assert_eq!(stat(gpu, "kernel", "group_id"), int(0));
        assert_eq!(stat(gpu, "kernel", "is_eager"), int(1));
        assert_eq!(
            facts.forest.names.get(&0).map(String::as_str),
            Some("train 3")
        );
        // The GPU plane gets its `Steps` line; nothing is left unreproduced.
        assert!(
            gpu.lines
                .iter()
                .any(|l| l.name == "Steps" && l.events.len() == 1)
        );
        assert!(facts.unreproduced().is_empty());
    }

    #[test]
    fn contexts_link_threads_and_cycles_end() {
        let host = plane("/host:CPU", |b| {
            b.line(1)
                .add_event("step")
                .set_offset_ps(0)
                .set_duration_ps(100)
                .add_stat("_r", 1i64)
                .add_stat("_pt", 1i64)
                .add_stat("_p", 5u64);
            let mut line = b.line(2);
            // Consumes the step's context and produces b's; b and c make a cycle.
            line.add_event("a")
                .set_offset_ps(500)
                .set_duration_ps(10)
                .add_stat("_ct", 1i64)
                .add_stat("_c", 5u64)
                .add_stat("_pt", 2i64)
                .add_stat("_p", 1u64);
            line.add_event("c")
                .set_offset_ps(700)
                .set_duration_ps(10)
                .add_stat("_pt", 2i64)
                .add_stat("_p", 1u64)
                .add_stat("_ct", 2i64)
                .add_stat("_c", 2u64);
            line.add_event("b")
                .set_offset_ps(600)
                .set_duration_ps(10)
                .add_stat("_pt", 2i64)
                .add_stat("_p", 2u64)
                .add_stat("_ct", 2i64)
                .add_stat("_c", 1u64);
            // Async: nested in nothing.
            b.line(3)
                .add_event("async")
                .set_offset_ps(10)
                .set_duration_ps(1)
                .add_stat("_a", 1i64);
        });
        let (_, planes) = preprocess(vec![host]);
        let host = planes.first().expect("one plane");
        assert_eq!(stat(host, "step", "group_id"), int(0));
        assert_eq!(stat(host, "a", "group_id"), int(0));
        assert_eq!(stat(host, "b", "group_id"), int(0));
        assert_eq!(stat(host, "c", "group_id"), int(0));
        assert_eq!(stat(host, "async", "group_id"), None);
    }

    #[test]
    fn regions_span_start_to_every_stop() {
        let host = plane("/host:CPU", |b| {
            let mut line = b.line(1);
            line.add_event("ThreadpoolListener::StopRegion")
                .set_offset_ps(5);
            line.add_event("ThreadpoolListener::StartRegion")
                .set_offset_ps(8);
            line.add_event("ThreadpoolListener::StartRegion")
                .set_offset_ps(10)
                .add_stat("_c", 3u64);
            line.add_event("work").set_offset_ps(12).set_duration_ps(2);
            line.add_event("ThreadpoolListener::StopRegion")
                .set_offset_ps(20);
            line.add_event("ThreadpoolListener::StopRegion")
                .set_offset_ps(30);
        });
        let (facts, planes) = preprocess(vec![host]);
        assert!(facts.unreproduced().is_empty());
        let host = planes.first().expect("one plane");
        let region = host
            .event_metadata
            .values()
            .find(|m| m.name == "ThreadpoolListener::Region")
            .expect("the region metadata")
            .id;
        let spans: Vec<(i64, i64)> = host
            .lines
            .iter()
            .flat_map(|l| &l.events)
            .filter(|e| e.metadata_id == region)
            .map(|e| (e.offset_ps().unwrap_or(-1), e.duration_ps))
            .collect();
        assert_eq!(spans, vec![(10, 20), (10, 10)]);
    }

    #[test]
    fn nodes_stay_small() {
        assert!(std::mem::size_of::<super::Node>() <= 20);
    }

    #[test]
    fn deep_nesting_is_searched_once_per_event() {
        // 100,000 TensorFlow ops each nested in the one before, under an eager `EagerExecute`:
        // each op's search for it takes one step (a walk to the top each would take hours).
        let depth = 100_000_i64;
        let host = plane("/host:CPU", |b| {
            let mut line = b.line(1);
            line.add_event("EagerExecute")
                .set_offset_ps(0)
                .set_duration_ps(depth * 2 + 10)
                .add_stat("is_func", 0i64);
            for k in 0..depth {
                line.add_event("a/MatMul:MatMul")
                    .set_offset_ps(k)
                    .set_duration_ps(depth * 2 - 2 * k);
            }
        });
        let (_, planes) = preprocess(vec![host]);
        let host = planes.first().expect("one plane");
        let eager = host
            .stat_metadata
            .values()
            .find(|m| m.name == "is_eager")
            .expect("is_eager")
            .id;
        let marked = host
            .lines
            .iter()
            .flat_map(|l| &l.events)
            .filter(|e| {
                e.stats
                    .iter()
                    .any(|s| s.metadata_id == eager && s.value == int(1))
            })
            .count();
        assert_eq!(marked as i64, depth);
    }

    #[test]
    fn loop_ops_stop_grouping_but_not_regions() {
        let host = plane("/host:CPU", |b| {
            let mut line = b.line(1);
            line.add_event("train")
                .set_offset_ps(0)
                .set_duration_ps(100)
                .add_stat("_r", 1i64);
            line.add_event("WhileOp-EvalCond")
                .set_offset_ps(1)
                .set_duration_ps(1);
        });
        let (facts, planes) = preprocess(vec![host]);
        assert!(!facts.groups());
        let host = planes.first().expect("one plane");
        assert_eq!(stat(host, "train", "group_id"), None);
    }
}

/// A launch on a device, as xprof's `Launch Stats` count it.
#[derive(Clone, Copy, Debug)]
struct Launch {
    node: u32,
    device: u64,
    begin: u64,
    end: u64,
    duration: u64,
}

/// The launches of one group on one device (xprof's `GroupLaunchInfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaunchStats {
    pub group: i64,
    pub begin: u64,
    pub end: u64,
    pub count: i64,
    pub max: u64,
    pub sum: u64,
}

/// What grouping gave one event: the stats xprof adds to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mark<'a> {
    pub group_id: Option<i64>,
    pub step_name: Option<&'a str>,
    pub is_eager: Option<bool>,
}

/// The marks of a plane's events, one per event in line and event order.
pub(crate) struct Marks<'a> {
    forest: &'a Forest,
    next: u32,
    end: u32,
}

impl<'a> Iterator for Marks<'a> {
    type Item = Mark<'a>;

    fn next(&mut self) -> Option<Mark<'a>> {
        if self.next >= self.end {
            return None;
        }
        let n = self.next;
        self.next += 1;
        Some(Mark {
            group_id: self.forest.group_of(n),
            step_name: self.forest.marks.step_names.get(&n).map(String::as_str),
            is_eager: self
                .forest
                .marks
                .eager
                .get(n as usize)
                .filter(|&&e| e >= 0)
                .map(|&e| e == 1),
        })
    }
}

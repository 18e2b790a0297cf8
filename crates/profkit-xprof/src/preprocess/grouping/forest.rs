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
//! Memory: one node per event of the planes that take part (see [`Forest::takes_part`]), 4 bytes
//! each, and its parent on its line (4 bytes: the nesting links, most of them); 16 bytes per
//! producer or consumer of a context and 8 per other link while linking; the stats and times of
//! the few nodes that need them (roots, executor events) in vectors by node, 16 to 24 bytes an
//! entry; while grouping, each node's children (4 bytes per node and per link), its other parents
//! (8 bytes per link), its group (4 bytes) and the searches' marks (a bit); from the first pass
//! to the second only the groups and the marks (a byte per node, and the step names) stay.
//!
//! A plane split by line (read from a file for OpStats, unless the lines are asked for in turn)
//! of 50,000 to 4 million events has its lines taken in on the pool's threads, each into a part
//! numbered as the whole would number it, the parts joined in line order as each one's turn comes
//! and each line's bytes let go of once its part is made: the same forest as taken in line after line (a test compares both), for a little more
//! memory while the parts in flight wait (about 2 MB on a 14 MB profile).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use profkit_xplane::constants::{HOST_PLANE_NAME, TPU_PLANE_PREFIX};
use profkit_xplane::{XLine, XPlane};

use crate::indexed::{Event, IdTable, PlaneRef, Stat};

use crate::preprocess::derived::is_derived_line_id;
use crate::preprocess::event_types::EventType;
use crate::preprocess::runtime::{self, RuntimeStats};
use crate::preprocess::stats::start_timestamp_ns;
use crate::preprocess::tpu::{tensor_core_id, tpu_grouping_line, tpu_plane_has_core_id};

mod groups;
mod node_map;
#[cfg(test)]
mod tests;

pub(crate) use groups::{LaunchStats, Mark, Marks};
use node_map::NodeMap;

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

/// One event of the graph (4 bytes: its parent on its line, start, end and group are kept
/// beside it, the times only for the nodes that need them). Where its event is follows from its
/// place: a plane's nodes are its events in line and event order (the grouping line's only, on
/// TPU planes).
#[derive(Clone, Debug)]
struct Node {
    /// TSL's root level when it fits in 16 bits ([`NO_ROOT_16`]: not a root; [`WIDE_ROOT`]: in
    /// [`Forest::wide_roots`]).
    root: i16,
    ty: EventType,
}

// The sizes the memory of the module documentation counts.
const _: () = assert!(std::mem::size_of::<Node>() == 4);
const _: () = assert!(std::mem::size_of::<ContextUse>() == 16);
const NO_ROOT_16: i16 = i16::MIN;
const WIDE_ROOT: i16 = i16::MIN + 1;
/// In the search for an `EagerExecute`: not searched yet, on the walk in progress, none found.
const UNKNOWN: u32 = u32::MAX - 1;
const IN_CHAIN: u32 = u32::MAX - 2;
const NOT_FOUND: u32 = u32::MAX;
const NO_GROUP: u32 = u32::MAX;

/// The stats of nodes that naming, eager marking and loops read, each kept only where it can be
/// read: `is_func` of `EagerExecute` events, `id` of executor events, tf.data functions and roots.
#[derive(Clone, Debug, Default)]
struct NodeStats {
    graph_type: NodeMap<String>,
    iter_num: NodeMap<i64>,
    step_num: NodeMap<i64>,
    step_id: NodeMap<i64>,
    is_func: NodeMap<i64>,
}

/// A producer or consumer context key: its type and id.
type ContextKey = (i64, u64);

/// An event taking part in a producer/consumer context (16 bytes): the context's id, the node,
/// and its type (an index into [`ContextTypes`]) with whether the node consumes it.
#[derive(Clone, Copy, Debug)]
struct ContextUse {
    id: u64,
    node: u32,
    /// The type's index, shifted left once; the low bit set for a consumer.
    type_consumer: u32,
}

impl ContextUse {
    fn type_index(&self) -> usize {
        (self.type_consumer >> 1) as usize
    }

    fn consumer(&self) -> bool {
        self.type_consumer & 1 == 1
    }
}

/// The context types seen (few: TSL's context types), each once, by index.
#[derive(Clone, Debug, Default)]
struct ContextTypes {
    types: Vec<i64>,
    index: HashMap<i64, u32>,
}

impl ContextTypes {
    /// The index of `ty`, `None` past 2^31 types (a context then takes no part).
    fn index(&mut self, ty: i64) -> Option<u32> {
        if let Some(&i) = self.index.get(&ty) {
            return Some(i);
        }
        let i = u32::try_from(self.types.len())
            .ok()
            .filter(|&i| i < 1 << 31)?;
        self.types.push(ty);
        self.index.insert(ty, i);
        Some(i)
    }

    fn get(&self, index: usize) -> i64 {
        self.types.get(index).copied().unwrap_or(0)
    }
}

/// The nodes of a plane taken in: first and end, and on a TPU plane the grouping line (whose
/// events alone are nodes).
#[derive(Clone, Copy, Debug)]
struct PlaneNodes {
    first: u32,
    end: u32,
    grouping_line: Option<usize>,
}

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
    /// Each node's parent on its line (`ConnectIntraThread`), [`NONE`] for none: the first links
    /// TSL makes, by child.
    nest: Vec<u32>,
    /// The nodes on a line named `Steps`, `Sparse Core Steps`, `XLA Modules` or `Sparse Core
    /// Modules` (TSL's `IsTPUParentLineEvent`: implicit roots).
    tpu_steps: NodeMap<()>,
    /// The root levels that do not fit a [`Node`] (a `_r` stat outside 16 bits).
    wide_roots: NodeMap<i32>,
    /// Start (`TimestampPs`) and end (as TSL's unsigned `Timespan` holds it) in picoseconds, of
    /// the roots, executor events and TPU steps.
    spans: NodeMap<(i64, u64)>,
    /// Each node's group ([`NO_GROUP`]: none), once grouped.
    groups: Vec<u32>,
    stats: NodeStats,
    /// The event names of the roots (by node).
    root_names: NodeMap<String>,
    /// The links after those of [`Forest::nest`], in the order TSL adds them: (parent, child).
    links: Vec<(u32, u32)>,
    /// The producers and consumers of contexts, in the order they were taken in.
    contexts: Vec<ContextUse>,
    context_types: ContextTypes,
    /// The events xprof counts as launches on a device (see [`Forest::launches_grouped`]).
    launches: Vec<Launch>,
    /// The index of the first plane named `/host:CPU`, and its earliest line timestamp.
    first_host: Option<usize>,
    host_start_ns: i64,
    /// Keys of the inter-thread links: (parent type, child type) to nodes with their key.
    launch_keys: Vec<(u32, u64, bool)>,
    iterator_keys: Vec<(u32, (u64, u64), bool)>,
    tensor_core_roots: Vec<Vec<u32>>,
    /// The nodes of each plane taken in (by plane index).
    planes: HashMap<usize, PlaneNodes>,
    /// Group names by group id (TSL's group metadata).
    pub names: BTreeMap<i64, String>,
    marks: NodeMarks,
    /// Two roots of one level start at the same time: TSL orders them with an unstable sort
    /// over a hash map, which profkit cannot reproduce.
    pub tied_roots: bool,
    done: bool,
    /// The number of this forest's first node: 0, or for a part of a plane's lines taken in on
    /// its own (see [`Forest::add_plane_releasing`]), the number its first event has in the
    /// whole.
    base: u32,
}

/// The stat metadata ids of one plane, by kind.
struct PlaneStats {
    kinds: IdTable<StatKind>,
    by_kind: [Option<i64>; 13],
    names: HashMap<i64, String>,
}

impl PlaneStats {
    fn of(plane: &XPlane) -> PlaneStats {
        let mut kinds = Vec::new();
        let mut by_kind = [None; 13];
        for (id, m) in &plane.stat_metadata {
            if let Some(k) = STAT_NAMES.iter().position(|n| *n == m.name) {
                if let Some(kind) = STAT_KINDS.get(k) {
                    kinds.push((*id, *kind));
                }
                if let Some(slot) = by_kind.get_mut(k) {
                    *slot = Some(slot.map_or(*id, |s: i64| s.min(*id)));
                }
            }
        }
        PlaneStats {
            kinds: IdTable::new(kinds.into_iter()),
            by_kind,
            names: plane
                .stat_metadata
                .iter()
                .map(|(id, m)| (*id, m.name.clone()))
                .collect(),
        }
    }

    fn str_or_ref(&self, stat: &Stat<'_>) -> String {
        stat.str_or_ref(&self.names).to_owned()
    }
}

/// The stats of one event that the forest reads, found in one pass over them: of each kind, the
/// first stat of the kind's metadata (TSL's `GetStat(type)`) and the last stat of any metadata
/// of the kind's name (as the stats are read in order, the last of a kind winning). Numbers only
/// (the graph type aside); one is filled again for each event, only the kinds found marked.
#[derive(Default)]
struct EventStats<'a> {
    first_found: u16,
    last_found: u16,
    first: [Num; 13],
    last: [Num; 13],
    graph_type: Option<Stat<'a>>,
}

/// A stat's value as the forest reads it: an integer of either kind, or another kind.
#[derive(Clone, Copy, Default)]
enum Num {
    #[default]
    Other,
    Int(i64),
    Uint(u64),
}

impl Num {
    fn of(stat: &Stat<'_>) -> Num {
        match stat.value {
            Some(profkit_xplane::xview::StatValueView::Int64(v)) => Num::Int(v),
            Some(profkit_xplane::xview::StatValueView::Uint64(v)) => Num::Uint(v),
            _ => Num::Other,
        }
    }

    /// TSL's `IntValue`: the `int64_value`, 0 for any other kind.
    fn int_value(self) -> i64 {
        match self {
            Num::Int(v) => v,
            _ => 0,
        }
    }

    /// The `uint64_value`, or the `int64_value` as unsigned; 0 for any other kind.
    fn int_or_uint(self) -> u64 {
        match self {
            Num::Uint(v) => v,
            Num::Int(v) => v as u64,
            Num::Other => 0,
        }
    }
}

impl<'a> EventStats<'a> {
    /// Reads one event's stats in.
    #[inline]
    fn fill(&mut self, plane: &PlaneStats, stats: impl Iterator<Item = Stat<'a>>) {
        self.first_found = 0;
        self.last_found = 0;
        self.graph_type = None;
        for stat in stats {
            let Some(kind) = plane.kinds.get(stat.metadata_id) else {
                continue;
            };
            let k = kind as usize;
            let bit = 1u16 << k;
            if let Some(slot) = self.last.get_mut(k) {
                *slot = Num::of(&stat);
                self.last_found |= bit;
            }
            if self.first_found & bit == 0
                && plane.by_kind.get(k).copied().flatten() == Some(stat.metadata_id)
            {
                if let Some(slot) = self.first.get_mut(k) {
                    *slot = Num::of(&stat);
                    self.first_found |= bit;
                }
                if kind == StatKind::GraphType {
                    self.graph_type = Some(stat);
                }
            }
        }
    }

    /// TSL's `GetStat(type)`.
    fn get(&self, kind: StatKind) -> Option<Num> {
        let k = kind as usize;
        if self.first_found & (1 << k) == 0 {
            return None;
        }
        self.first.get(k).copied()
    }

    /// The last stat of the kind's name.
    fn last(&self, kind: StatKind) -> Option<Num> {
        let k = kind as usize;
        if self.last_found & (1 << k) == 0 {
            return None;
        }
        self.last.get(k).copied()
    }
}

/// The parts of a plane's lines taken in on the pool's threads, joined to the forest in line
/// order (see [`Forest::add_lines_releasing`]).
struct Joining<'f> {
    forest: &'f mut Forest,
    /// The line whose part is joined next.
    next: usize,
    /// The parts done before their turn.
    waiting: BTreeMap<usize, Forest>,
}

impl Joining<'_> {
    /// Joins the parts whose turn has come.
    fn join_ready(&mut self) {
        while let Some(part) = self.waiting.remove(&self.next) {
            self.forest.join(part);
            self.next += 1;
        }
    }
}

/// What taking in a plane's events reads of the plane: its stats by kind, event types by
/// metadata, and the runtime's contexts.
struct Intake<'p> {
    plane: &'p XPlane,
    stats: PlaneStats,
    types: IdTable<EventType>,
    is_host: bool,
    runtime_stats: RuntimeStats,
    runtime_active: bool,
}

impl<'p> Intake<'p> {
    fn of(plane: &'p XPlane) -> Intake<'p> {
        let types: Vec<(i64, EventType)> = plane
            .event_metadata
            .iter()
            .filter_map(|(id, m)| Some((*id, EventType::of_name(&m.name)?)))
            .collect();
        Intake {
            plane,
            stats: PlaneStats::of(plane),
            types: IdTable::new(types.into_iter()),
            is_host: plane.name == HOST_PLANE_NAME,
            runtime_stats: RuntimeStats::of(plane),
            runtime_active: runtime::active(plane),
        }
    }

    fn event_type(&self, metadata_id: i64, event_stats: &EventStats<'_>) -> EventType {
        match self.types.get(metadata_id) {
            Some(t) => t,
            None if event_stats.get(StatKind::CorrelationId).is_some() => {
                if self.is_host {
                    EventType::KernelLaunch
                } else {
                    EventType::KernelExecute
                }
            }
            None => EventType::Unknown,
        }
    }

    fn runtime(&self, line: &XLine, event: &Event<'_>) -> Runtime {
        if !self.runtime_active {
            return (None, None);
        }
        let name = self
            .plane
            .event_metadata
            .get(&event.metadata_id())
            .map_or("", |m| m.name.as_str());
        self.runtime_stats.contexts(name, &line.name, event.stats())
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
    fn of(stats: &EventStats<'_>, ty: EventType, runtime: Runtime) -> Grouping {
        let mut g = Grouping {
            producer_type: stats.last(StatKind::ProducerType).map(|s| s.int_value()),
            producer_id: stats.last(StatKind::ProducerId).map(|s| s.int_or_uint()),
            consumer_type: stats.last(StatKind::ConsumerType).map(|s| s.int_value()),
            consumer_id: stats.last(StatKind::ConsumerId).map(|s| s.int_or_uint()),
            root_level: stats.last(StatKind::IsRoot).map(|s| s.int_value() as i32),
            is_async: stats
                .last(StatKind::IsAsync)
                .is_some_and(|s| s.int_value() != 0),
        };
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
    pub(crate) fn add_plane(&mut self, index: usize, indexed: PlaneRef<'_>) {
        let first = u32::try_from(self.nodes.len()).unwrap_or(NONE);
        if self.add_lines(index, indexed, None) {
            self.close_plane(index, first, None);
        }
    }

    /// [`Forest::add_plane`] of an indexed plane whose bytes are split by line
    /// ([`IndexedPlane::split_lines`]): a line's bytes are let go of once it is taken in, so that
    /// the forest grows as the plane's bytes go. The same forest as [`Forest::add_plane`].
    pub(crate) fn add_plane_releasing(
        &mut self,
        index: usize,
        plane: &mut crate::indexed::IndexedPlane,
        allow_parallel: bool,
    ) {
        if !plane.is_split() || plane.shadow().name.starts_with(TPU_PLANE_PREFIX) {
            self.add_plane(index, PlaneRef::Indexed(plane));
            return;
        }
        let events = plane.event_count();
        let parallel = allow_parallel
            && crate::indexed::LINES_ON_POOL.contains(&events)
            && plane.line_count() > 1
            && rayon::current_num_threads() > 1;
        self.add_lines_releasing(index, plane, parallel);
    }

    /// [`Forest::add_plane_releasing`] of a plane split by line, its lines taken in one after the
    /// other or, when `parallel`, each into a part of its own on the pool's threads (its nodes
    /// numbered as they would be in the whole), the parts then joined in line order: the same
    /// forest either way.
    fn add_lines_releasing(
        &mut self,
        index: usize,
        plane: &mut crate::indexed::IndexedPlane,
        parallel: bool,
    ) {
        let first = u32::try_from(self.nodes.len()).unwrap_or(NONE);
        if !parallel {
            for line in 0..plane.line_count() {
                self.add_lines(index, PlaneRef::Indexed(plane), Some(line));
                plane.release_line(line);
            }
            self.close_plane(index, first, None);
            return;
        }
        use rayon::prelude::*;
        // What taking in the plane's first line would set, set before the parts copy it.
        if plane.shadow().name == HOST_PLANE_NAME && self.first_host.is_none() {
            self.first_host = Some(index);
            self.host_start_ns = start_timestamp_ns(plane.shadow());
        }
        let mut bases = Vec::with_capacity(plane.line_count());
        let mut base = first;
        for line in 0..plane.line_count() {
            bases.push(base);
            let len = u32::try_from(PlaneRef::Indexed(plane).line_len(line)).unwrap_or(NONE);
            base = base.saturating_add(len);
        }
        // Each line's bytes go with its part, let go of as soon as the part is taken in.
        let taken: Vec<Option<(bytes::Bytes, u32)>> = (0..plane.line_count())
            .map(|line| plane.take_line_bytes(line))
            .collect();
        let (first_host, host_start_ns) = (self.first_host, self.host_start_ns);
        let launches_here = first_host == Some(index);
        let shared = &*plane;
        let intake = Intake::of(shared.shadow());
        // The parts joined in line order as soon as each one's turn comes (so that few wait, each
        // holding its line's nodes), by whichever thread finishes the part that was waited for.
        let joining = std::sync::Mutex::new(Joining {
            forest: self,
            next: 0,
            waiting: BTreeMap::new(),
        });
        bases
            .into_par_iter()
            .zip(taken)
            .enumerate()
            .for_each(|(line, (base, taken))| {
                let mut part = Forest {
                    base,
                    first_host,
                    host_start_ns,
                    ..Forest::default()
                };
                if let Some((bytes, at)) = &taken {
                    if let Some((fields, events)) = shared.line_in(line, bytes, *at) {
                        part.nodes.reserve_exact(events.len());
                        part.nest.reserve_exact(events.len());
                        part.add_line(&intake, launches_here, fields, events);
                    }
                }
                drop(taken);
                let mut joining = joining
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                joining.waiting.insert(line, part);
                joining.join_ready();
            });
        let joining = joining
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        joining.forest.close_plane(index, first, None);
    }

    /// Adds a part taken in on its own (see [`Forest::add_lines_releasing`]), whose nodes follow
    /// this forest's: its nodes, their stats and links as if taken in here.
    fn join(&mut self, part: Forest) {
        self.nodes.extend(part.nodes);
        self.nest.extend(part.nest);
        self.tpu_steps.append(part.tpu_steps);
        self.wide_roots.append(part.wide_roots);
        self.spans.append(part.spans);
        self.stats.graph_type.append(part.stats.graph_type);
        self.stats.iter_num.append(part.stats.iter_num);
        self.stats.step_num.append(part.stats.step_num);
        self.stats.step_id.append(part.stats.step_id);
        self.stats.is_func.append(part.stats.is_func);
        self.root_names.append(part.root_names);
        self.links.extend(part.links);
        // The part numbered its context types as it met them: numbered again here, in the
        // order this forest meets them.
        for context in part.contexts {
            let ty = part.context_types.get(context.type_index());
            self.add_context(ty, context.id, context.node, context.consumer());
        }
        self.launches.extend(part.launches);
        self.launch_keys.extend(part.launch_keys);
        self.iterator_keys.extend(part.iterator_keys);
    }

    /// Takes in the lines of plane number `index` (`only` one of them when given); whether the
    /// caller closes the plane (a TPU plane closes itself).
    fn add_lines(&mut self, index: usize, indexed: PlaneRef<'_>, only: Option<usize>) -> bool {
        let plane = indexed.shadow();
        let intake = Intake::of(plane);
        let stats = &intake.stats;
        let mut event_stats = EventStats::default();
        let first = u32::try_from(self.nodes.len()).unwrap_or(NONE);
        if intake.is_host && self.first_host.is_none() {
            self.first_host = Some(index);
            self.host_start_ns = start_timestamp_ns(plane);
        }
        if plane.name.starts_with(TPU_PLANE_PREFIX) {
            self.close_plane(index, first, None);
            if !tpu_plane_has_core_id(&plane.name) {
                return false;
            }
            let Some(grouping) = tpu_grouping_line(indexed.lines().map(|(l, e)| (l, e.len())))
            else {
                return false;
            };
            let Some((line, events)) = indexed.line(grouping) else {
                return false;
            };
            let mut parents = Vec::with_capacity(events.len());
            for event in events {
                event_stats.fill(stats, event.stats());
                let ty = intake.event_type(event.metadata_id(), &event_stats);
                let node = self.push(line, &event, ty, stats, &event_stats, NONE);
                let g = Grouping::of(&event_stats, ty, intake.runtime(line, &event));
                self.set_context(&g, node);
                parents.push(node);
            }
            for (l, (other, events)) in indexed.lines().enumerate() {
                if l == grouping {
                    continue;
                }
                let mut at = 0usize;
                for event in events {
                    let span = event.timespan(other.timestamp_ns);
                    while parents.get(at).is_some_and(|&p| self.span(p).1 <= span.0) {
                        at += 1;
                    }
                    let Some(&parent) = parents.get(at) else {
                        break;
                    };
                    let ps = self.span(parent);
                    if ps.0 <= span.0 && span.1 <= ps.1 {
                        event_stats.fill(stats, event.stats());
                        let ty = intake.event_type(event.metadata_id(), &event_stats);
                        let g = Grouping::of(&event_stats, ty, intake.runtime(other, &event));
                        self.set_context(&g, parent);
                    }
                }
            }
            if tensor_core_id(&plane.name).is_some() {
                self.tensor_core_roots.push(parents);
            }
            self.close_plane(index, first, Some(grouping));
            return false;
        }
        let events = match only {
            Some(line) => indexed.line_len(line),
            None => indexed.event_count(),
        };
        self.nodes.reserve_exact(events);
        self.nest.reserve_exact(events);
        let launches_here = self.first_host == Some(index);
        let lines = indexed
            .lines()
            .enumerate()
            .filter(|(l, _)| only.is_none_or(|o| o == *l))
            .map(|(_, line)| line);
        for (line, line_events) in lines {
            self.add_line(&intake, launches_here, line, line_events);
        }
        true
    }

    /// Takes in one line's events (of a plane that is not a TPU's), `launches_here` when they
    /// may be launches (of the first host plane).
    fn add_line<'e>(
        &mut self,
        intake: &Intake<'_>,
        launches_here: bool,
        line: &XLine,
        line_events: impl Iterator<Item = Event<'e>>,
    ) {
        let plane = intake.plane;
        let stats = &intake.stats;
        let mut event_stats = EventStats::default();
        let mut open: Vec<(u32, (u64, u64))> = Vec::new();
        let launch_line = launches_here && !is_derived_line_id(line.id);
        for event in line_events {
            event_stats.fill(stats, event.stats());
            let ty = intake.event_type(event.metadata_id(), &event_stats);
            let g = Grouping::of(&event_stats, ty, intake.runtime(line, &event));
            // The innermost open event that includes this one is its parent (none for an
            // async event, which also opens nothing).
            let span = event.timespan(line.timestamp_ns);
            let mut parent = NONE;
            if !g.is_async {
                while let Some(&(top, top_span)) = open.last() {
                    if top_span.0 <= span.0 && span.1 <= top_span.1 {
                        parent = top;
                        break;
                    }
                    open.pop();
                }
            }
            let node = self.push(line, &event, ty, stats, &event_stats, parent);
            if !g.is_async {
                open.push((node, span));
            }
            if let Some(level) = g.root_level {
                self.set_root_level(node, level);
                self.keep_span(node, line, &event);
                self.keep_step_id(node, &event_stats);
            }
            if g.root_level.is_some() {
                let name = plane.event_metadata.get(&event.metadata_id());
                let name = name.map(|m| m.name.clone()).unwrap_or_default();
                self.root_names.insert(node, name);
            }
            self.set_context(&g, node);
            // `LaunchEventStats`: its stats read in order, the last of a kind winning.
            if let (true, Some(device), Some(_)) = (
                launch_line,
                event_stats.last(StatKind::DeviceId),
                event_stats.last(StatKind::CorrelationId),
            ) {
                let named_cu = plane
                    .event_metadata
                    .get(&event.metadata_id())
                    .is_some_and(|m| m.name.starts_with("cu"));
                if !named_cu {
                    let (begin, end) = span;
                    self.launches.push(Launch {
                        node,
                        device: device.int_or_uint(),
                        begin,
                        end,
                        duration: event.duration_ps() as u64,
                    });
                }
            }
            match ty {
                EventType::KernelLaunch | EventType::KernelExecute => {
                    if let Some(s) = event_stats.get(StatKind::CorrelationId) {
                        let parent = ty == EventType::KernelLaunch;
                        self.launch_keys.push((node, s.int_or_uint(), parent));
                    }
                }
                EventType::ExecutorStateProcess
                | EventType::IteratorGetNext
                | EventType::IteratorGetNextAsOptional => {
                    let id = event_stats.get(StatKind::StepId);
                    let iter = event_stats.get(StatKind::IterNum);
                    if let (Some(id), Some(iter)) = (id, iter) {
                        let key = (id.int_or_uint(), iter.int_or_uint());
                        let parent = ty == EventType::ExecutorStateProcess;
                        self.iterator_keys.push((node, key, parent));
                    }
                }
                _ => {}
            }
        }
    }

    fn close_plane(&mut self, index: usize, first: u32, grouping_line: Option<usize>) {
        let end = u32::try_from(self.nodes.len()).unwrap_or(NONE);
        self.planes.insert(
            index,
            PlaneNodes {
                first,
                end,
                grouping_line,
            },
        );
    }

    /// Adds the node of an event of the plane being taken in, with its parent on its line.
    fn push(
        &mut self,
        xline: &XLine,
        event: &Event<'_>,
        ty: EventType,
        stats: &PlaneStats,
        event_stats: &EventStats<'_>,
        parent: u32,
    ) -> u32 {
        let tpu_step = matches!(
            xline.name.as_str(),
            "Steps" | "Sparse Core Steps" | "XLA Modules" | "Sparse Core Modules"
        );
        let node = self
            .base
            .saturating_add(u32::try_from(self.nodes.len()).unwrap_or(NONE));
        self.nodes.push(Node {
            ty,
            root: NO_ROOT_16,
        });
        self.nest.push(parent);
        if tpu_step {
            self.tpu_steps.insert(node, ());
        }
        if tpu_step || ty == EventType::ExecutorStateProcess {
            self.keep_span(node, xline, event);
        }
        if let Some(v) = &event_stats.graph_type {
            self.stats.graph_type.insert(node, stats.str_or_ref(v));
        }
        if let Some(v) = event_stats.get(StatKind::IterNum) {
            self.stats.iter_num.insert(node, v.int_value());
        }
        if let Some(v) = event_stats.get(StatKind::StepNum) {
            self.stats.step_num.insert(node, v.int_value());
        }
        if ty == EventType::EagerExecute {
            if let Some(v) = event_stats.get(StatKind::IsFunc) {
                self.stats.is_func.insert(node, v.int_value());
            }
        }
        if matches!(
            ty,
            EventType::ExecutorStateProcess | EventType::CapturedFunctionRun
        ) {
            self.keep_step_id(node, event_stats);
        }
        node
    }

    /// Whether the node is an implicit root: by its type, or as a TPU step.
    fn implicit_root(&self, node: u32) -> bool {
        self.nodes
            .get(node as usize)
            .is_some_and(|n| n.ty.is_implicit_root())
            || self.tpu_steps.contains_key(&node)
    }

    fn set_root_level(&mut self, node: u32, level: i32) {
        let root = match i16::try_from(level) {
            Ok(root) if root != NO_ROOT_16 && root != WIDE_ROOT => root,
            // As when levels were kept in 32 bits with `i32::MIN` for none: not a root.
            _ if level == i32::MIN => NO_ROOT_16,
            _ => {
                self.wide_roots.insert(node, level);
                WIDE_ROOT
            }
        };
        if let Some(n) = self.nodes.get_mut(node.wrapping_sub(self.base) as usize) {
            n.root = root;
        }
    }

    fn keep_step_id(&mut self, node: u32, event_stats: &EventStats<'_>) {
        if let Some(v) = event_stats.get(StatKind::StepId) {
            self.stats.step_id.insert(node, v.int_value());
        }
    }

    fn keep_span(&mut self, node: u32, line: &XLine, event: &Event<'_>) {
        let start = line
            .timestamp_ns
            .wrapping_mul(1000)
            .wrapping_add(event.offset_ps());
        self.spans
            .insert(node, (start, event.timespan(line.timestamp_ns).1));
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
            self.add_context(t, id, node, false);
        }
        if let (Some(t), Some(id)) = (g.consumer_type, g.consumer_id) {
            self.add_context(t, id, node, true);
        }
    }

    fn add_context(&mut self, ty: i64, id: u64, node: u32, consumer: bool) {
        if let Some(index) = self.context_types.index(ty) {
            self.contexts.push(ContextUse {
                id,
                node,
                type_consumer: index << 1 | u32::from(consumer),
            });
        }
    }
}

/// Links by node, in the order they were made: first the nesting links (by child), then the
/// others.
struct Adjacency {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Adjacency {
    /// The links from each node to its children, of the nesting links `nest` (each node's
    /// parent on its line, [`NONE`] for none) followed by `links` (parent, child).
    fn children(nodes: usize, nest: &[u32], links: &[(u32, u32)]) -> Adjacency {
        let nested = nest.iter().enumerate().filter(|&(_, &p)| p != NONE);
        let all = || {
            nested
                .clone()
                .map(|(c, &p)| (p, c as u32))
                .chain(links.iter().copied())
        };
        // Counts at `from + 1`, summed into starts; filled with each start as the cursor (which
        // leaves each entry at the next one's start), then moved back one place.
        let mut offsets = vec![0u32; nodes + 1];
        let mut count = 0usize;
        for (p, _) in all() {
            let from = p as usize;
            if let Some(o) = offsets.get_mut(from + 1) {
                *o += 1;
                count += 1;
            }
        }
        for i in 1..offsets.len() {
            let before = offsets.get(i - 1).copied().unwrap_or(0);
            if let Some(o) = offsets.get_mut(i) {
                *o += before;
            }
        }
        let mut targets = vec![0u32; count];
        for (p, c) in all() {
            let (from, to) = (p, c);
            if from as usize >= nodes {
                continue;
            }
            if let Some(slot) = offsets.get_mut(from as usize) {
                if let Some(t) = targets.get_mut(*slot as usize) {
                    *t = to;
                }
                *slot += 1;
            }
        }
        offsets.copy_within(0..nodes, 1);
        if let Some(o) = offsets.first_mut() {
            *o = 0;
        }
        Adjacency { offsets, targets }
    }

    fn of(&self, node: u32) -> &[u32] {
        let from = self.offsets.get(node as usize).copied().unwrap_or(0) as usize;
        let to = self.offsets.get(node as usize + 1).copied().unwrap_or(0) as usize;
        self.targets.get(from..to).unwrap_or(&[])
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

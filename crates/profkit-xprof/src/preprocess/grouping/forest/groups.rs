//! Grouping the linked forest into steps (`GroupEvents`): links across threads and contexts, roots
//! by level and time, a group per root reaching what has none, step names, `is_eager`; and what
//! the trace viewer reads of the groups (marks, `Launch Stats`).

use std::collections::{BTreeMap, VecDeque};

use profkit_events::report::std_sort;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use profkit_xplane::{XPlane, x_stat};

use crate::preprocess::event_types::EventType;
use crate::preprocess::stats::{intern_stat, set_or_add};

use super::*;

/// An executor event of a TF1 loop: step id, iteration, start, node.
type LoopEvent = (i64, i64, i64, u32);

/// Each node's parents, in the order TSL links them: its parent on its line, then the others
/// (few: kept by child, with a bit per node saying whether it has any).
struct Parents {
    nest: Vec<u32>,
    /// The links other than nesting as (child, parent), by child, each child's in link order.
    others: Vec<(u32, u32)>,
    has_others: Vec<u64>,
}

impl Parents {
    fn new(nest: Vec<u32>, links: &[(u32, u32)]) -> Parents {
        let mut others: Vec<(u32, u32)> = links.iter().map(|&(p, c)| (c, p)).collect();
        // Stable: each child's parents keep the order of their links.
        others.sort_by_key(|&(c, _)| c);
        let mut has_others = vec![0u64; nest.len().div_ceil(64)];
        for &(c, _) in &others {
            if let Some(word) = has_others.get_mut(c as usize / 64) {
                *word |= 1 << (c % 64);
            }
        }
        Parents {
            nest,
            others,
            has_others,
        }
    }

    fn of(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        let nested = self.nest.get(node as usize).copied().filter(|&p| p != NONE);
        let has_others = self
            .has_others
            .get(node as usize / 64)
            .is_some_and(|word| word & (1 << (node % 64)) != 0);
        let others = if has_others {
            let from = self.others.partition_point(|&(c, _)| c < node);
            let rest = self.others.get(from..).unwrap_or(&[]);
            rest.get(..rest.partition_point(|&(c, _)| c == node))
                .unwrap_or(&[])
        } else {
            &[]
        };
        nested.into_iter().chain(others.iter().map(|&(_, p)| p))
    }

    /// The node's parent when it has exactly one; `Err(true)` when it has none, `Err(false)`
    /// when several.
    fn only(&self, node: u32) -> Result<u32, bool> {
        let mut parents = self.of(node);
        match (parents.next(), parents.next()) {
            (Some(p), None) => Ok(p),
            (None, _) => Err(true),
            _ => Err(false),
        }
    }
}

/// What a breadth-first search over ancestors reuses from one search to the next: the nodes seen
/// (a bit per node, and the nodes marked, so that the next search clears only those: a search
/// over ancestors sees few) and the queue.
struct Search {
    seen: Vec<u64>,
    marked: Vec<u32>,
    queue: VecDeque<u32>,
}

impl Search {
    fn new(nodes: usize) -> Search {
        Search {
            seen: vec![0; nodes.div_ceil(64)],
            marked: Vec::new(),
            queue: VecDeque::new(),
        }
    }

    /// Starts a search: nothing seen, nothing queued.
    fn start(&mut self) {
        self.queue.clear();
        for node in self.marked.drain(..) {
            if let Some(word) = self.seen.get_mut(node as usize / 64) {
                *word = 0;
            }
        }
    }

    /// Marks the node seen; whether it was not yet.
    fn insert(&mut self, node: u32) -> bool {
        let Some(word) = self.seen.get_mut(node as usize / 64) else {
            return false;
        };
        let bit = 1u64 << (node % 64);
        if *word & bit != 0 {
            return false;
        }
        *word |= bit;
        self.marked.push(node);
        true
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
        // Only linking reads the keys.
        self.launch_keys = Vec::new();
        self.iterator_keys = Vec::new();
        self.connect_contexts();
        let tf_data: HashSet<i64> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.ty == EventType::CapturedFunctionRun)
            .filter_map(|(i, _)| self.stats.step_id.get(&(i as u32)).copied())
            .collect();
        let loop_roots = self.tensorflow_loops(&tf_data);
        let links = std::mem::take(&mut self.links);
        let nest = std::mem::take(&mut self.nest);
        let nodes = self.nodes.len();
        self.groups = vec![NO_GROUP; nodes];
        let children = Adjacency::children(nodes, &nest, &links);
        let parents = Parents::new(nest, &links);
        drop(links);
        let mut search = Search::new(nodes);
        self.create_groups(&loop_roots, &tf_data, &children, &parents, &mut search);
        drop(children);
        let mut eager = vec![-1i8; nodes];
        let mut memo = vec![UNKNOWN; nodes];
        let mut chain = Vec::new();
        for ty in [EventType::KernelExecute, EventType::TfOpRun] {
            for i in 0..nodes {
                if self.nodes.get(i).is_some_and(|n| n.ty == ty) {
                    let found = self.nearest_eager_execute(
                        i as u32,
                        &parents,
                        &mut memo,
                        &mut search,
                        &mut chain,
                    );
                    let is_eager = found != NOT_FOUND && self.stats.is_func.get(&found) == Some(&0);
                    if let Some(e) = eager.get_mut(i) {
                        *e = i8::from(is_eager);
                    }
                }
            }
        }
        self.marks.eager = eager;
        // Only what `apply` and the marks need stays for the second pass.
        self.nodes = Vec::new();
        self.spans = NodeMap::default();
        self.wide_roots = NodeMap::default();
        self.tpu_steps = NodeMap::default();
        self.stats = NodeStats::default();
        self.root_names = NodeMap::default();
    }

    /// TSL's `ConnectContextGroups`: every producer of a context to each of its consumers,
    /// contexts by key, unless both sides have [`MAX_CONTEXT_FANOUT`] or more.
    fn connect_contexts(&mut self) {
        let mut contexts = std::mem::take(&mut self.contexts);
        let types = std::mem::take(&mut self.context_types);
        let key = |c: &ContextUse| (types.get(c.type_index()), c.id);
        // Stable: each context's producers and consumers keep the order they were taken in.
        contexts.sort_by_key(key);
        for context in contexts.chunk_by(|a, b| key(a) == key(b)) {
            let producers = || context.iter().filter(|c| !c.consumer()).map(|c| c.node);
            let consumers = || context.iter().filter(|c| c.consumer()).map(|c| c.node);
            if producers().count() >= MAX_CONTEXT_FANOUT
                && consumers().count() >= MAX_CONTEXT_FANOUT
            {
                continue;
            }
            for p in producers() {
                for c in consumers() {
                    self.links.push((p, c));
                }
            }
        }
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
        // Each executor event of a loop, by step id, then iteration, then node (the sort is
        // stable): the nodes with a step id walked in node order, their iteration and start read
        // by cursors over those maps rather than a search each.
        let mut events: Vec<LoopEvent> = Vec::new();
        let mut iter_num = self.stats.iter_num.cursor();
        let mut spans = self.spans.cursor();
        for (node, &step) in self.stats.step_id.iter() {
            if self.nodes.get(node as usize).map(|n| n.ty) != Some(EventType::ExecutorStateProcess)
            {
                continue;
            }
            let Some(&iter) = iter_num.get(node) else {
                continue;
            };
            if tf_data.contains(&step) {
                continue;
            }
            let start = spans.get(node).map_or(0, |s| s.0);
            events.push((step, iter, start, node));
        }
        events.sort_by_key(|&(step, iter, _, _)| (step, iter));
        // Each iteration: the start of its first event (the earliest, the first taken in of
        // those that start together), that event, and its events.
        let mut iterations: Vec<(i64, u32, &[LoopEvent])> = Vec::new();
        for tf_loop in events.chunk_by(|a, b| a.0 == b.0) {
            let only_zero = tf_loop.iter().all(|e| e.1 == 0);
            if only_zero {
                continue;
            }
            for iteration in tf_loop.chunk_by(|a, b| a.1 == b.1) {
                let Some(&(_, _, mut start, mut first)) = iteration.first() else {
                    continue;
                };
                for &(_, _, s, node) in iteration {
                    if s < start {
                        start = s;
                        first = node;
                    }
                }
                iterations.push((start, first, iteration));
            }
        }
        iterations.sort_by_key(|&(start, _, _)| start);
        let mut roots = Vec::with_capacity(iterations.len());
        for (_, first, events) in iterations {
            roots.push(first);
            for &(_, _, _, e) in events {
                if e != first {
                    self.links.push((first, e));
                }
            }
        }
        roots
    }

    /// The node's root level, 0 when it is not a root.
    fn root_level(&self, node: u32) -> i32 {
        match self.nodes.get(node as usize).map(|n| n.root) {
            Some(NO_ROOT_16) | None => 0,
            Some(WIDE_ROOT) => self.wide_roots.get(&node).copied().unwrap_or(0),
            Some(level) => i32::from(level),
        }
    }

    fn is_root(&self, node: u32) -> bool {
        self.nodes
            .get(node as usize)
            .is_some_and(|n| n.root != NO_ROOT_16)
    }

    fn group_of(&self, node: u32) -> Option<i64> {
        self.groups
            .get(node as usize)
            .copied()
            .filter(|&g| g != NO_GROUP)
            .map(i64::from)
    }

    /// Breadth first over `node`'s ancestors (itself first when `include_self`), the first
    /// that `found` accepts.
    fn find_up(
        node: u32,
        include_self: bool,
        parents: &Parents,
        search: &mut Search,
        mut found: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        search.start();
        search.insert(node);
        if include_self {
            search.queue.push_back(node);
        } else {
            for p in parents.of(node) {
                if search.insert(p) {
                    search.queue.push_back(p);
                } else {
                    // TSL queues a repeated parent twice here; it changes no answer.
                }
            }
        }
        while let Some(n) = search.queue.pop_front() {
            if found(n) {
                return Some(n);
            }
            for p in parents.of(n) {
                if search.insert(p) {
                    search.queue.push_back(p);
                }
            }
        }
        None
    }

    /// TSL's `RootNeedsGrouping`.
    fn needs_grouping(&self, root: u32, parents: &Parents, search: &mut Search) -> bool {
        if self.group_of(root).is_some() {
            return false;
        }
        let level = self.root_level(root);
        Self::find_up(root, false, parents, search, |p| {
            self.is_root(p) && self.root_level(p) == level
        })
        .is_none()
    }

    fn create_groups(
        &mut self,
        loop_roots: &[u32],
        tf_data: &HashSet<i64>,
        children: &Adjacency,
        parents: &Parents,
        search: &mut Search,
    ) {
        let mut group_id: u32 = 0;
        if !loop_roots.is_empty() {
            for &root in loop_roots {
                self.process_root(group_id, root, children, parents, search);
                group_id = group_id.saturating_add(1);
            }
        } else {
            // TSL lists the roots type by type (in hash-map order), each type's in the order
            // they were taken in, then sorts them with `std::sort`. With one type, that input
            // order is known and libstdc++'s sort gives TSL's order exactly; with several, ties
            // between types are the hash map's to break. Each root goes with its key (level,
            // higher first, then start), which is all the sort compares.
            let mut roots: Vec<((std::cmp::Reverse<i32>, i64), u32)> = Vec::new();
            for (i, n) in self.nodes.iter().enumerate() {
                if n.root == NO_ROOT_16 {
                    continue;
                }
                let node = i as u32;
                let step = self.stats.step_id.get(&node).copied();
                if step.is_some_and(|s| tf_data.contains(&s)) {
                    continue;
                }
                let key = (std::cmp::Reverse(self.root_level(node)), self.start(node));
                roots.push((key, node));
            }
            let ty = |n: u32| self.nodes.get(n as usize).map(|n| n.ty);
            let one_type = roots.windows(2).all(|w| match w {
                [a, b] => ty(a.1) == ty(b.1),
                _ => true,
            });
            std_sort(
                &mut roots,
                &|a: &((std::cmp::Reverse<i32>, i64), u32),
                  b: &((std::cmp::Reverse<i32>, i64), u32)| { a.0 < b.0 },
            );
            self.tied_roots = !one_type
                && roots.windows(2).any(|w| match w {
                    [a, b] => a.0 == b.0 && ty(a.1) != ty(b.1),
                    _ => false,
                });
            for (_, root) in roots {
                if self.needs_grouping(root, parents, search) {
                    self.process_root(group_id, root, children, parents, search);
                    group_id = group_id.saturating_add(1);
                }
            }
        }
        let cores = std::mem::take(&mut self.tensor_core_roots);
        let tpu_needs_grouping = cores.iter().all(|core| {
            core.iter()
                .all(|&e| self.needs_grouping(e, parents, search))
        });
        if tpu_needs_grouping {
            for core in &cores {
                let mut id = group_id;
                for &event in core {
                    if self.needs_grouping(event, parents, search) {
                        self.process_root(id, event, children, parents, search);
                        id = id.saturating_add(1);
                    }
                }
            }
        }
    }

    /// TSL's `ProcessRootEvent`: the group to every node reachable from the root through nodes
    /// without one (whatever the order of the walk, the same nodes).
    fn process_root(
        &mut self,
        group_id: u32,
        root: u32,
        children: &Adjacency,
        parents: &Parents,
        search: &mut Search,
    ) {
        let queue = &mut search.queue;
        queue.clear();
        if self.groups.get(root as usize) == Some(&NO_GROUP) {
            queue.push_back(root);
        }
        while let Some(n) = queue.pop_front() {
            let Some(group) = self.groups.get_mut(n as usize) else {
                continue;
            };
            if *group != NO_GROUP {
                continue;
            }
            *group = group_id;
            for &c in children.of(n) {
                if self.groups.get(c as usize) == Some(&NO_GROUP) {
                    queue.push_back(c);
                }
            }
        }
        let name = self.group_name(root, parents, search);
        if !self.implicit_root(root) {
            self.marks.step_names.insert(root, name.clone());
        }
        self.names.insert(i64::from(group_id), name);
    }

    /// TSL's `EventNode::GetGroupName`.
    fn group_name(&self, root: u32, parents: &Parents, search: &mut Search) -> String {
        let mut name = String::new();
        let stats = &self.stats;
        if let Some(n) = Self::find_up(root, true, parents, search, |n| {
            stats.graph_type.contains_key(&n)
        }) {
            name.push_str(stats.graph_type.get(&n).map_or("", String::as_str));
            name.push(' ');
        } else if !self.implicit_root(root) {
            name.push_str(self.root_names.get(&root).map_or("", String::as_str));
            name.push(' ');
        }
        let mut step = self.group_of(root).unwrap_or(0);
        if let Some(n) = Self::find_up(root, true, parents, search, |n| {
            stats.iter_num.contains_key(&n)
        }) {
            step = stats.iter_num.get(&n).copied().unwrap_or(0);
        } else if let Some(n) = Self::find_up(root, true, parents, search, |n| {
            stats.step_num.contains_key(&n)
        }) {
            step = stats.step_num.get(&n).copied().unwrap_or(0);
        }
        name.push_str(&step.to_string());
        name
    }

    /// The `EagerExecute` TSL's `EventNode::IsEager` finds for `node` (breadth first over it and
    /// its ancestors), or [`NOT_FOUND`]. Runs of single parents are remembered in `memo`, so that
    /// deep nesting costs each event one step rather than a walk to the top; `chain` is the run
    /// being walked (reused from one event to the next).
    fn nearest_eager_execute(
        &self,
        node: u32,
        parents: &Parents,
        memo: &mut [u32],
        search: &mut Search,
        chain: &mut Vec<u32>,
    ) -> u32 {
        let is_eager_execute = |n: u32| {
            self.nodes
                .get(n as usize)
                .is_some_and(|n| n.ty == EventType::EagerExecute)
        };
        chain.clear();
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
            match parents.only(at) {
                Err(true) => break NOT_FOUND,
                Ok(only) => {
                    chain.push(at);
                    if let Some(m) = memo.get_mut(at as usize) {
                        *m = IN_CHAIN;
                    }
                    at = only;
                }
                // A node of several parents: TSL's search from there.
                Err(false) => {
                    break Self::find_up(at, true, parents, search, is_eager_execute)
                        .unwrap_or(NOT_FOUND);
                }
            }
        };
        if memo.get(at as usize) == Some(&UNKNOWN) {
            chain.push(at);
        }
        for &n in chain.iter() {
            if let Some(m) = memo.get_mut(n as usize) {
                *m = answer;
            }
        }
        answer
    }

    /// Whether any event of the plane numbered `index` is grouped.
    pub(crate) fn plane_grouped(&self, index: usize) -> bool {
        let Some(p) = self.planes.get(&index) else {
            return false;
        };
        self.groups
            .get(p.first as usize..p.end as usize)
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
        let p = self.planes.get(&index)?;
        Some(Marks {
            forest: self,
            next: p.first,
            end: p.end,
        })
    }

    /// What grouping gave node `n`.
    fn mark(&self, n: u32) -> Mark<'_> {
        Mark {
            group_id: self.group_of(n),
            step_name: self.marks.step_names.get(&n).map(String::as_str),
            is_eager: self
                .marks
                .eager
                .get(n as usize)
                .filter(|&&e| e >= 0)
                .map(|&e| e == 1),
        }
    }

    /// Writes what grouping gave the events of plane number `index` into it (the plane as it
    /// was taken in): `group_id`, `step_name` and `is_eager` stats.
    pub(crate) fn apply(&self, index: usize, plane: &mut XPlane) {
        let Some(&p) = self.planes.get(&index) else {
            return;
        };
        // TSL's `CreateStatMetadata`, on every plane it takes in.
        let ids = StatIds {
            group: intern_stat(plane, "group_id"),
            name: intern_stat(plane, "step_name"),
            eager: intern_stat(plane, "is_eager"),
        };
        let mut nodes = p.first..p.end;
        match p.grouping_line {
            // On a TPU plane the grouping line's events alone are nodes.
            Some(line) => {
                let events = plane.lines.get_mut(line).map(|l| l.events.as_mut_slice());
                for (event, n) in events.unwrap_or_default().iter_mut().zip(nodes) {
                    mark_event(event, self.mark(n), ids);
                }
            }
            None => {
                for event in plane.lines.iter_mut().flat_map(|l| l.events.iter_mut()) {
                    let Some(n) = nodes.next() else {
                        break;
                    };
                    mark_event(event, self.mark(n), ids);
                }
            }
        }
    }
}

/// The stat metadata ids of the stats grouping writes into a plane.
#[derive(Clone, Copy)]
struct StatIds {
    group: i64,
    name: i64,
    eager: i64,
}

/// Writes a mark into its event as stats (each set where the event has it, else added).
fn mark_event(event: &mut profkit_xplane::XEvent, mark: Mark<'_>, ids: StatIds) {
    let values = [
        mark.group_id
            .map(|g| (ids.group, x_stat::Value::Int64Value(g))),
        mark.step_name
            .map(|name| (ids.name, x_stat::Value::StrValue(name.to_owned()))),
        mark.is_eager
            .map(|e| (ids.eager, x_stat::Value::Int64Value(i64::from(e)))),
    ];
    // Room for the stats added at once, not the doubling of a push (a decoded event's stats
    // fill their vector exactly; this is most of the memory grouping adds to a big plane).
    let more = values
        .iter()
        .flatten()
        .filter(|(id, _)| !event.stats.iter().any(|s| s.metadata_id == *id))
        .count();
    if values.iter().all(Option::is_none) {
        return;
    }
    event.stats.reserve_exact(more);
    for (id, value) in values.into_iter().flatten() {
        set_or_add(&mut event.stats, id, value);
    }
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

impl<'a> Marks<'a> {
    /// The marks from the `n`th of the plane's events on: where a piece of the plane written on
    /// its own starts.
    pub(crate) fn starting_at(&self, n: u32) -> Marks<'a> {
        Marks {
            forest: self.forest,
            next: self.next.saturating_add(n).min(self.end),
            end: self.end,
        }
    }

    /// The mark of the `k`th of these events (none past the last).
    pub(crate) fn at(&self, k: usize) -> Mark<'a> {
        match u32::try_from(k).ok().and_then(|k| self.next.checked_add(k)) {
            Some(n) if n < self.end => self.forest.mark(n),
            _ => Mark::default(),
        }
    }
}

impl<'a> Iterator for Marks<'a> {
    type Item = Mark<'a>;

    fn next(&mut self) -> Option<Mark<'a>> {
        if self.next >= self.end {
            return None;
        }
        let n = self.next;
        self.next += 1;
        Some(self.forest.mark(n))
    }
}

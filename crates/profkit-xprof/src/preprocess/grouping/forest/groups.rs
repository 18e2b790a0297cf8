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
            // At most this many stats more: room for them at once, not the doubling of a push
            // (a decoded event's stats fill their vector exactly; this is most of the memory
            // grouping adds to a big plane).
            let more = usize::from(group.is_some())
                + usize::from(step_name.is_some())
                + usize::from(eager.is_some());
            event.stats.reserve_exact(more);
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

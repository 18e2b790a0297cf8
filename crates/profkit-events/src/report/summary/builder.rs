//! Building a [`Forest`] range by range: each thread's paired ranges nested by time, device
//! activity kept as the summary reads it, memory events placed in the innermost range holding
//! them. Memory is the nodes (a few tens of bytes each) and, while a thread is nested, 4 to 12
//! bytes a range of it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::Times;
use super::forest::{Children, EventType, Forest, Mem, Runtime, index32, new_node};

/// A thread's OS id, its root, and its host nodes by start.
type ThreadRanges = (u64, usize, Vec<u32>);

/// Builds a [`Forest`] from the paired ranges of each thread, device activity and memory events,
/// given one at a time: [`Forest::from_recording`] feeds it from an event model, and readers of
/// other formats feed it as they walk their input, with nothing held per event but the nodes.
#[derive(Debug, Default)]
pub struct ForestBuilder {
    forest: Forest,
    by_thread: Vec<ThreadRanges>,
    device_index: HashMap<u64, usize>,
    kernel_index: HashMap<String, usize>,
    /// The node names met so far, each stored once.
    names: HashSet<Arc<str>>,
    mems: Vec<(u64, u64, Mem)>,
}

impl ForestBuilder {
    /// An empty forest.
    pub fn new() -> ForestBuilder {
        ForestBuilder::default()
    }

    /// A key/value of the run's information (a later value of a key replaces an earlier one).
    pub fn info(&mut self, key: String, value: String) {
        self.forest.extra_info.insert(key, value);
    }

    /// Names thread `tid` (see [`Forest::thread_names`]); an empty name is ignored.
    pub fn thread_name(&mut self, tid: u64, name: &str) {
        if !name.is_empty() {
            self.forest.thread_names.insert(tid, name.to_owned());
        }
    }

    /// Counts ranges that were left out because they did not pair.
    pub fn left_out(&mut self, count: usize) {
        self.forest.left_out = self.forest.left_out.saturating_add(count);
    }

    /// One thread's paired ranges `(name, type, start, end)`, in the order pairing closed them
    /// (which orders ranges of equal start and end): a root, and the ranges nested by time under
    /// it, the parent of each the innermost open range that holds it.
    pub fn thread<'n>(
        &mut self,
        tid: u64,
        spans: impl IntoIterator<Item = (&'n str, EventType, u64, u64)>,
    ) {
        let forest = &mut self.forest;
        forest.nodes.push(new_node(
            crate::paddle::nodetree::ROOT_NAME.into(),
            EventType::Operator,
            0,
            u64::MAX,
            tid,
        ));
        let root = forest.nodes.len() - 1;
        forest.roots.push((tid, root));
        for (name, ty, start_ns, end_ns) in spans {
            let name = match self.names.get(name) {
                Some(shared) => Arc::clone(shared),
                None => {
                    let shared: Arc<str> = name.into();
                    self.names.insert(Arc::clone(&shared));
                    shared
                }
            };
            forest.nodes.push(new_node(name, ty, start_ns, end_ns, tid));
        }
        // The thread's ranges by start (longer first, then in the order given): 4 bytes a range.
        let mut list: Vec<u32> = (root + 1..forest.nodes.len()).map(index32).collect();
        {
            let nodes = &forest.nodes;
            let key = |i: u32| {
                nodes
                    .get(i as usize)
                    .map_or((0, 0), |n| (n.start_ns, n.end_ns))
            };
            list.sort_by(|&a, &b| {
                let (ka, kb) = (key(a), key(b));
                ka.0.cmp(&kb.0).then(kb.1.cmp(&ka.1)).then(a.cmp(&b))
            });
        }
        // Nest by time: the parent is the innermost open range that holds the range. The list
        // is by start, so each parent's children come in the order Paddle sorts them. The list
        // keeps the host ranges (runtime calls go to their parent's), `parents` their parents.
        let mut stack: Vec<(u64, usize)> = vec![(u64::MAX, root)];
        let mut parents: Vec<u32> = Vec::with_capacity(list.len());
        let mut kept = 0;
        for k in 0..list.len() {
            let Some(&i) = list.get(k) else { break };
            let Some(node) = forest.nodes.get(i as usize) else {
                continue;
            };
            let (start, end, ty) = (node.start_ns, node.end_ns, node.ty);
            while stack.len() > 1 && stack.last().is_some_and(|&(e, _)| e < end.max(start)) {
                stack.pop();
            }
            let parent = stack.last().map_or(root, |&(_, p)| p);
            if ty == EventType::CudaRuntime {
                if let Some(p) = forest.nodes.get_mut(parent) {
                    p.runtime.push(Runtime {
                        start_ns: start,
                        end_ns: end,
                        devices: Vec::new(),
                    });
                }
                continue;
            }
            parents.push(index32(parent));
            stack.push((end, i as usize));
            list.swap(kept, k);
            kept += 1;
        }
        drop(stack);
        list.truncate(kept);
        let mut hosts = list;
        // Each parent's children side by side in `children`, in that order (a counting sort
        // by parent over the thread's nodes).
        let count = forest.nodes.len() - root;
        let mut at: Vec<u32> = vec![0; count + 1];
        for &p in &parents {
            if let Some(n) = at.get_mut(p as usize - root + 1) {
                *n += 1;
            }
        }
        let base = forest.children.len();
        for k in 1..at.len() {
            let before = at.get(k - 1).copied().unwrap_or(0);
            if let Some(n) = at.get_mut(k) {
                *n += before;
            }
        }
        for (k, node) in forest.nodes.iter_mut().skip(root).enumerate() {
            let first = at.get(k).copied().unwrap_or(0);
            let last = at.get(k + 1).copied().unwrap_or(first);
            node.children = Children {
                first: index32(base + first as usize),
                count: last - first,
            };
        }
        forest.children.resize(base + hosts.len(), 0);
        for (&p, &c) in parents.iter().zip(&hosts) {
            if let Some(slot) = at.get_mut(p as usize - root) {
                if let Some(entry) = forest.children.get_mut(base + *slot as usize) {
                    *entry = c;
                }
                *slot += 1;
            }
        }
        hosts.shrink_to_fit();
        self.by_thread.push((tid, root, hosts));
    }

    /// Device activity not tied to a launch (see [`Unlinked`](super::forest::Unlinked)).
    pub fn device_span(
        &mut self,
        name: &str,
        ty: EventType,
        device_id: u64,
        start_ns: u64,
        end_ns: u64,
    ) {
        let unlinked = &mut self.forest.unlinked;
        let k = *self.device_index.entry(device_id).or_insert_with(|| {
            unlinked.devices.push((device_id, Vec::new()));
            unlinked.devices.len() - 1
        });
        if let Some((_, types)) = unlinked.devices.get_mut(k) {
            let at = match types.iter().position(|(t, _)| *t == ty) {
                Some(at) => at,
                None => {
                    types.push((ty, Vec::new()));
                    types.len() - 1
                }
            };
            if let Some((_, ranges)) = types.get_mut(at) {
                ranges.push(super::ranges::range(start_ns, end_ns));
            }
        }
        if ty == EventType::Kernel {
            let k = match self.kernel_index.get(name) {
                Some(&k) => k,
                None => {
                    unlinked
                        .kernels
                        .push((name.to_owned(), 0, Times::default()));
                    self.kernel_index
                        .insert(name.to_owned(), unlinked.kernels.len() - 1);
                    unlinked.kernels.len() - 1
                }
            };
            if let Some((_, calls, times)) = unlinked.kernels.get_mut(k) {
                *calls += 1;
                times.add(super::build::dur(start_ns, end_ns));
            }
        }
    }

    /// A memory event of thread `thread_id` at `ns`: it goes to the innermost range of the thread
    /// that holds its time (the thread's root when none does).
    pub fn memory(&mut self, thread_id: u64, ns: u64, mem: Mem) {
        self.mems.push((thread_id, ns, mem));
    }

    /// The forest.
    pub fn finish(self) -> Forest {
        let ForestBuilder {
            mut forest,
            by_thread,
            mems,
            ..
        } = self;
        if !forest.unlinked.is_empty() {
            if forest.roots.is_empty() {
                forest.nodes.push(new_node(
                    crate::paddle::nodetree::ROOT_NAME.into(),
                    EventType::Operator,
                    0,
                    u64::MAX,
                    0,
                ));
                forest.roots.push((0, forest.nodes.len() - 1));
            }
            forest.unlinked.root = forest.roots.first().map_or(0, |r| r.1);
            for (_, types) in &mut forest.unlinked.devices {
                for (_, ranges) in types {
                    ranges.sort_by_key(|r| r.0);
                }
            }
        }
        // Per thread, a sweep in time order: the ranges nest, so the open ones form a stack
        // whose top is the innermost range holding the event.
        let index: HashMap<u64, usize> = by_thread
            .iter()
            .enumerate()
            .rev()
            .map(|(k, t)| (t.0, k))
            .collect();
        let mut per_thread: Vec<Vec<(u64, Mem)>> = vec![Vec::new(); by_thread.len()];
        for (tid, ns, mem) in mems {
            let k = index.get(&tid).copied().unwrap_or(0);
            if let Some(list) = per_thread.get_mut(k) {
                list.push((ns, mem));
            }
        }
        for ((_, root, hosts), mut list) in by_thread.iter().zip(per_thread) {
            list.sort_by_key(|m| m.0);
            let mut next = 0;
            let mut open: Vec<(u64, usize)> = Vec::new();
            for (ns, mem) in list {
                while let Some(&i) = hosts.get(next) {
                    let i = i as usize;
                    let (start, end) = forest
                        .nodes
                        .get(i)
                        .map_or((0, 0), |n| (n.start_ns, n.end_ns));
                    if start > ns {
                        break;
                    }
                    while open.last().is_some_and(|&(e, _)| e < start) {
                        open.pop();
                    }
                    open.push((end, i));
                    next += 1;
                }
                while open.last().is_some_and(|&(e, _)| e < ns) {
                    open.pop();
                }
                let holder = open.last().map_or(*root, |&(_, i)| i);
                if let Some(node) = forest.nodes.get_mut(holder) {
                    node.mem.push(mem);
                }
            }
        }
        drop(by_thread);
        forest.roots.sort_by_key(|r| r.0);
        forest
    }
}

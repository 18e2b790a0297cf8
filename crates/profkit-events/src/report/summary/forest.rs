//! The trees the summary is computed over, as Paddle's `HostPythonNode`s hold them: per thread a
//! synthetic root, host nodes with their children, CUDA runtime calls (with the device activity
//! they launched) and memory events; built from node trees exactly, or from any recording.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use crate::event::{MemEventKind, MemPlace, Recording};
use crate::paddle::nodetree::{NodeTreesProto, is_root, type_name};
use crate::span::pair;

use super::Times;

/// Paddle's `TracerEventType`, open to codes it lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum EventType {
    /// An operator.
    Operator,
    /// A data loader step.
    Dataloader,
    /// A profiler step (`ProfileStep#N`).
    ProfileStep,
    /// A CUDA runtime call.
    CudaRuntime,
    /// A device kernel.
    Kernel,
    /// A device copy.
    Memcpy,
    /// A device memset.
    Memset,
    /// A range recorded by C++ code.
    UserDefined,
    /// A part of an operator (`infer_meta`, `compute`, ...).
    OperatorInner,
    /// A forward pass.
    Forward,
    /// A backward pass.
    Backward,
    /// An optimizer step.
    Optimization,
    /// Communication.
    Communication,
    /// A Python operator.
    PythonOp,
    /// A range recorded by Python code (`RecordEvent`).
    PythonUserDefined,
    /// A dygraph kernel launch (Paddle 3.x).
    DygraphKernelLaunch,
    /// A static-graph kernel launch (Paddle 3.x).
    StaticKernelLaunch,
    /// Another code, kept as found.
    Other(i32),
}

impl EventType {
    /// The type of a Paddle code.
    pub fn from_code(code: i32) -> EventType {
        match type_name(code) {
            Some(name) => EventType::from_name(name).unwrap_or(EventType::Other(code)),
            None => EventType::Other(code),
        }
    }

    /// The type Paddle's name gives (`type <code>` for another code).
    pub fn from_name(name: &str) -> Option<EventType> {
        use EventType::*;
        Some(match name {
            "Operator" => Operator,
            "Dataloader" => Dataloader,
            "ProfileStep" => ProfileStep,
            "CudaRuntime" => CudaRuntime,
            "Kernel" => Kernel,
            "Memcpy" => Memcpy,
            "Memset" => Memset,
            "UserDefined" => UserDefined,
            "OperatorInner" => OperatorInner,
            "Forward" => Forward,
            "Backward" => Backward,
            "Optimization" => Optimization,
            "Communication" => Communication,
            "PythonOp" => PythonOp,
            "PythonUserDefined" => PythonUserDefined,
            "DygraphKernelLaunch" => DygraphKernelLaunch,
            "StaticKernelLaunch" => StaticKernelLaunch,
            other => Other(other.strip_prefix("type ")?.parse().ok()?),
        })
    }

    /// The type of a range whose source gave `category`: Paddle's names as such; the categories
    /// of PyTorch's Chrome traces (`cpu_op`, `user_annotation`, `python_function`,
    /// `cuda_runtime`, `cuda_driver`, `kernel`, `gpu_memcpy`, `gpu_memset`) as their Paddle
    /// counterparts; anything else, or no category, an operator.
    pub fn from_category(category: Option<&str>) -> EventType {
        let Some(category) = category else {
            return EventType::Operator;
        };
        if let Some(t) = EventType::from_name(category) {
            return t;
        }
        match category {
            "user_annotation" | "gpu_user_annotation" => EventType::PythonUserDefined,
            "python_function" => EventType::PythonOp,
            "cuda_runtime" | "cuda_driver" => EventType::CudaRuntime,
            "kernel" => EventType::Kernel,
            "gpu_memcpy" => EventType::Memcpy,
            "gpu_memset" => EventType::Memset,
            _ => EventType::Operator,
        }
    }

    /// Paddle's name of the type, as its summary prints it.
    pub fn name(self) -> Cow<'static, str> {
        use EventType::*;
        Cow::Borrowed(match self {
            Operator => "Operator",
            Dataloader => "Dataloader",
            ProfileStep => "ProfileStep",
            CudaRuntime => "CudaRuntime",
            Kernel => "Kernel",
            Memcpy => "Memcpy",
            Memset => "Memset",
            UserDefined => "UserDefined",
            OperatorInner => "OperatorInner",
            Forward => "Forward",
            Backward => "Backward",
            Optimization => "Optimization",
            Communication => "Communication",
            PythonOp => "PythonOp",
            PythonUserDefined => "PythonUserDefined",
            DygraphKernelLaunch => "DygraphKernelLaunch",
            StaticKernelLaunch => "StaticKernelLaunch",
            Other(code) => return Cow::Owned(format!("type {code}")),
        })
    }
}

/// Device activity under a runtime call.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    /// Its name (a kernel's mangled name).
    pub name: String,
    /// Kernel, Memcpy or Memset.
    pub ty: EventType,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// The device.
    pub device_id: u64,
    /// The stream.
    pub stream_id: u64,
}

/// A CUDA runtime call under a host node.
#[derive(Clone, Debug, PartialEq)]
pub struct Runtime {
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// What it launched.
    pub devices: Vec<Device>,
}

/// An allocator event under a host node.
#[derive(Clone, Debug, PartialEq)]
pub struct Mem {
    /// What it did.
    pub kind: MemEventKind,
    /// The place, as Paddle prints it (`Place(cpu)`).
    pub place: String,
    /// The change in bytes.
    pub increase_bytes: i64,
    /// The most allocated so far.
    pub peak_allocated: u64,
    /// The most reserved so far.
    pub peak_reserved: u64,
}

/// A host node.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Its name (shared by the nodes of one name where the forest was built range by range).
    pub name: Arc<str>,
    /// Its type.
    pub ty: EventType,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// The thread its event names.
    pub thread_id: u64,
    /// Its children (indexes into [`Forest::nodes`]), by start time.
    pub children: Vec<usize>,
    /// The runtime calls it made.
    pub runtime: Vec<Runtime>,
    /// Its memory events.
    pub mem: Vec<Mem>,
}

/// All threads' trees.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Forest {
    /// Every node, roots included.
    pub nodes: Vec<Node>,
    /// Per thread, by thread id: its root.
    pub roots: Vec<(u64, usize)>,
    /// Key/value information of the run (Paddle's `extra_info`).
    pub extra_info: BTreeMap<String, String>,
    /// Whether device activity could be tied to the calls that launched it (node trees: yes; the
    /// event model keeps no correlation, so other inputs put it under a root).
    pub devices_linked: bool,
    /// Host nodes left out: not reachable from their thread's root (node trees), or ranges that
    /// did not pair (other inputs).
    pub left_out: usize,
    /// Device activity not tied to the calls that launched it (inputs other than node trees).
    pub unlinked: Unlinked,
    /// Thread names by thread id, where the builder was told them (an XSpace's lines; not
    /// Paddle's files and Chrome traces, whose tables Paddle heads by thread id):
    /// `--thread-sep` heads a thread's tables by its name.
    pub thread_names: BTreeMap<u64, String>,
}

fn new_node(name: Arc<str>, ty: EventType, start_ns: u64, end_ns: u64, thread_id: u64) -> Node {
    Node {
        name,
        ty,
        start_ns,
        end_ns,
        thread_id,
        children: Vec::new(),
        runtime: Vec::new(),
        mem: Vec::new(),
    }
}

impl Forest {
    /// Node `i` (a root on a bad index, which the builders never make).
    pub fn node(&self, i: usize) -> Option<&Node> {
        self.nodes.get(i)
    }

    /// Paddle's `traverse_tree` of one thread: a depth-first walk from the root that takes the
    /// children last first (a stack), root included.
    pub fn traverse(&self, root: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(i) = stack.pop() {
            out.push(i);
            if let Some(node) = self.nodes.get(i) {
                stack.extend(node.children.iter().copied());
            }
        }
        out
    }

    /// Sorts every node's children by start (longer first at equal starts), as Paddle builds its
    /// trees, the order they had breaking ties.
    fn sort_children(&mut self) {
        let keys: Vec<(u64, u64)> = self.nodes.iter().map(|n| (n.start_ns, n.end_ns)).collect();
        for node in &mut self.nodes {
            node.children.sort_by(|&a, &b| {
                let ka = keys.get(a).copied().unwrap_or_default();
                let kb = keys.get(b).copied().unwrap_or_default();
                ka.0.cmp(&kb.0).then(kb.1.cmp(&ka.1))
            });
        }
        self.roots.sort_by_key(|r| r.0);
    }

    /// Names the threads of `recording` (see [`Forest::thread_names`]), as the summary of an
    /// XSpace names them: what [`Forest::from_recording`] leaves out, since Paddle heads the
    /// tables of its own files by thread id.
    pub fn name_threads(&mut self, recording: &Recording) {
        for thread in &recording.threads {
            let tid = thread.os_tid.unwrap_or(u64::from(thread.thread));
            if let Some(name) = thread.name.as_deref().filter(|n| !n.is_empty()) {
                self.thread_names.insert(tid, name.to_owned());
            }
        }
    }

    /// The trees of Paddle's node trees, as Paddle holds them in memory. A node whose parent is
    /// missing, or whose parent links never reach the root, is left out (counted).
    pub fn from_node_trees(trees: &NodeTreesProto) -> Forest {
        let mut forest = Forest {
            extra_info: trees
                .extra_info
                .iter()
                .map(|e| (e.key.clone(), e.value.clone()))
                .collect(),
            devices_linked: true,
            ..Forest::default()
        };
        let mut seen_threads: HashMap<u64, usize> = HashMap::new();
        for tree in &trees.thread_trees {
            // Two trees of one thread share a root.
            let root = *seen_threads.entry(tree.thread_id).or_insert_with(|| {
                forest.nodes.push(new_node(
                    crate::paddle::nodetree::ROOT_NAME.into(),
                    EventType::Operator,
                    0,
                    u64::MAX,
                    tree.thread_id,
                ));
                let i = forest.nodes.len() - 1;
                forest.roots.push((tree.thread_id, i));
                i
            });
            // id -> node index; the first node of an id wins, as in validation.
            let mut index: HashMap<i64, usize> = HashMap::new();
            let mut parents: Vec<(usize, i64)> = Vec::new();
            for node in &tree.host_nodes {
                if is_root(node) {
                    index.entry(node.id).or_insert(root);
                    // What a root carries is the root's.
                    if let Some(r) = forest.nodes.get_mut(root) {
                        r.runtime.extend(runtimes(node));
                        r.mem.extend(mems(node));
                    }
                    continue;
                }
                let e = &node.host_trace_event;
                let mut n = new_node(
                    e.name.as_str().into(),
                    EventType::from_code(e.r#type),
                    e.start_ns,
                    e.end_ns,
                    e.thread_id,
                );
                n.runtime = runtimes(node);
                n.mem = mems(node);
                forest.nodes.push(n);
                let i = forest.nodes.len() - 1;
                index.entry(node.id).or_insert(i);
                parents.push((i, node.parentid));
            }
            // Attach each node to its parent when the parent chain reaches the root.
            let parent_of: HashMap<usize, usize> = parents
                .iter()
                .filter_map(|&(i, p)| Some((i, *index.get(&p)?)))
                .collect();
            let mut reaches: HashMap<usize, bool> = HashMap::new();
            reaches.insert(root, true);
            for &(i, _) in &parents {
                let mut chain = Vec::new();
                let mut at = i;
                let ok = loop {
                    if let Some(&known) = reaches.get(&at) {
                        break known;
                    }
                    if chain.len() > parents.len() {
                        break false;
                    }
                    chain.push(at);
                    match parent_of.get(&at) {
                        Some(&p) => at = p,
                        None => break false,
                    }
                };
                for c in chain {
                    reaches.insert(c, ok);
                }
            }
            for &(i, _) in &parents {
                match (reaches.get(&i), parent_of.get(&i)) {
                    (Some(true), Some(&p)) => {
                        if let Some(parent) = forest.nodes.get_mut(p) {
                            parent.children.push(i);
                        }
                    }
                    _ => forest.left_out += 1,
                }
            }
        }
        forest.sort_children();
        forest
    }

    /// The trees of a recording: each thread's paired ranges nested by time under a root, typed
    /// by their category ([`EventType::from_category`]); ranges of type `CudaRuntime` become
    /// runtime calls of the range around them. Device spans are activity of the first thread's
    /// root ([`Forest::unlinked`]: the event model does not say which call launched them). Memory
    /// events fall in the innermost range of their thread that holds their time; the legacy
    /// memory records become an allocation at their start and a free at their end.
    pub fn from_recording(recording: &Recording) -> Forest {
        let mut builder = ForestBuilder::new();
        for (key, value) in &recording.info {
            builder.info(key.clone(), value.clone());
        }
        let spans = pair(&recording.threads);
        builder.left_out(spans.warnings().count());
        for (thread, thread_spans) in recording.threads.iter().zip(&spans.threads) {
            let tid = thread.os_tid.unwrap_or(u64::from(thread.thread));
            builder.thread(
                tid,
                thread_spans.spans.iter().map(|span| {
                    let category = thread
                        .events
                        .get(span.push_index)
                        .and_then(|e| e.category.as_deref());
                    (
                        &*span.name,
                        EventType::from_category(category),
                        span.start_ns,
                        span.end_ns,
                    )
                }),
            );
        }
        for d in &recording.device_spans {
            let ty = match d.kind {
                crate::event::DeviceKind::Kernel | crate::event::DeviceKind::NpuKernel => {
                    EventType::Kernel
                }
                crate::event::DeviceKind::Memcpy => EventType::Memcpy,
                crate::event::DeviceKind::Memset => EventType::Memset,
                crate::event::DeviceKind::Other(code) => EventType::from_code(code),
            };
            let device_id = u64::try_from(d.device).unwrap_or(0);
            builder.device_span(&d.name, ty, device_id, d.start_ns, d.end_ns);
        }
        // Memory: Paddle's memory events, then the legacy records as allocations and frees.
        for m in &recording.memory_events {
            builder.memory(
                m.thread_id,
                m.ns,
                Mem {
                    kind: m.kind,
                    place: m.place.clone(),
                    increase_bytes: m.increase_bytes,
                    peak_allocated: m.peak_allocated,
                    peak_reserved: m.peak_reserved,
                },
            );
        }
        for r in &recording.memory {
            let place = legacy_place(r.place, r.device);
            let bytes = i64::try_from(r.bytes).unwrap_or(i64::MAX);
            let free = (r.end_ns != 0).then(|| Mem {
                kind: MemEventKind::Free,
                place: place.clone(),
                increase_bytes: -bytes,
                peak_allocated: 0,
                peak_reserved: 0,
            });
            builder.memory(
                r.thread,
                r.start_ns,
                Mem {
                    kind: MemEventKind::Allocate,
                    place,
                    increase_bytes: bytes,
                    peak_allocated: 0,
                    peak_reserved: 0,
                },
            );
            if let Some(free) = free {
                builder.memory(r.thread, r.end_ns, free);
            }
        }
        builder.finish()
    }
}

/// A thread's OS id, its root, and its host ranges `(start, end, node)` by start.
type ThreadRanges = (u64, usize, Vec<(u64, u64, usize)>);

/// The time ranges `(start, end)` of one event type, ns.
pub type TypeRanges = (EventType, Vec<(i64, i64)>);

/// Device activity the input does not tie to the calls that launched it (the event model's
/// device spans), kept as the summary reads it rather than span by span: per device its time
/// ranges per type, and the kernels' calls and times by name. It belongs to one root (the first
/// thread's), as the device activity of a runtime call of that root would.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Unlinked {
    /// The root it belongs to (an index into [`Forest::nodes`]).
    pub root: usize,
    /// Per device id, in the order first met: per type, in the order first met, the time ranges
    /// `(start, end)` in ns (clamped to `i64`), sorted by start (stably: equal starts in the
    /// order met).
    pub devices: Vec<(u64, Vec<TypeRanges>)>,
    /// The kernels by name, in the order first met: name, calls and times.
    pub kernels: Vec<(String, u64, Times)>,
}

impl Unlinked {
    /// Whether it holds no device activity.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }
}

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
    /// Scratch for one thread's ranges: (start, end, node, type).
    list: Vec<(u64, u64, usize, EventType)>,
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
        let list = &mut self.list;
        list.clear();
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
            list.push((start_ns, end_ns, forest.nodes.len() - 1, ty));
        }
        list.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        // Nest by time: the parent is the innermost open range that holds the range.
        let mut stack: Vec<(u64, usize)> = vec![(u64::MAX, root)];
        let mut hosts = Vec::new();
        for &(start, end, i, ty) in list.iter() {
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
            if let Some(p) = forest.nodes.get_mut(parent) {
                p.children.push(i);
            }
            stack.push((end, i));
            hosts.push((start, end, i));
        }
        hosts.shrink_to_fit();
        self.by_thread.push((tid, root, hosts));
    }

    /// Device activity not tied to a launch (see [`Unlinked`]).
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
                while let Some(&(start, end, i)) = hosts.get(next) {
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
        forest.sort_children();
        forest
    }
}

/// How Paddle names a legacy memory place.
fn legacy_place(place: MemPlace, device: u32) -> String {
    match place {
        MemPlace::Cpu => "Place(cpu)".into(),
        MemPlace::Cuda => format!("Place(gpu:{device})"),
        MemPlace::CudaPinned => "Place(gpu_pinned)".into(),
        MemPlace::Xpu => format!("Place(xpu:{device})"),
        MemPlace::Npu => format!("Place(npu:{device})"),
        MemPlace::Other(code) => format!("Place(unknown {code}:{device})"),
    }
}

fn runtimes(node: &crate::paddle::nodetree::HostTraceEventNodeProto) -> Vec<Runtime> {
    let mut list: Vec<Runtime> = node
        .runtime_nodes
        .iter()
        .map(|r| Runtime {
            start_ns: r.runtime_trace_event.start_ns,
            end_ns: r.runtime_trace_event.end_ns,
            devices: r
                .device_nodes
                .iter()
                .map(|d| {
                    let d = &d.device_event;
                    Device {
                        name: d.name.clone(),
                        ty: EventType::from_code(d.r#type),
                        start_ns: d.start_ns,
                        end_ns: d.end_ns,
                        device_id: d.device_id,
                        stream_id: d.stream_id,
                    }
                })
                .collect(),
        })
        .collect();
    list.sort_by_key(|r| r.start_ns);
    list
}

fn mems(node: &crate::paddle::nodetree::HostTraceEventNodeProto) -> Vec<Mem> {
    node.mem_nodes
        .iter()
        .map(|m| {
            let m = &m.mem_event;
            Mem {
                kind: MemEventKind::from_code(m.r#type),
                place: m.place.clone(),
                increase_bytes: m.increase_bytes,
                peak_allocated: m.peak_allocated,
                peak_reserved: m.peak_reserved,
            }
        })
        .collect()
}

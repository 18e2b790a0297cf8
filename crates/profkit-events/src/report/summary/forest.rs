//! The trees the summary is computed over, as Paddle's `HostPythonNode`s hold them: per thread a
//! synthetic root, host nodes with their children, CUDA runtime calls (with the device activity
//! they launched) and memory events; built from node trees exactly, or from any recording.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use crate::event::{MemEventKind, MemPlace, Recording};
use crate::paddle::nodetree::{NodeTreesProto, is_root, type_name};
use crate::span::pair;

use super::Times;
use super::builder::ForestBuilder;

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
    /// Where its children are in [`Forest::children`] (see [`Forest::children_of`]).
    pub children: Children,
    /// The runtime calls it made.
    pub runtime: Thin<Runtime>,
    /// Its memory events.
    pub mem: Thin<Mem>,
}

/// Where a node's children are listed in [`Forest::children`]: a forest of millions of nodes
/// keeps one list of them all, not a vector per node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Children {
    pub(super) first: u32,
    pub(super) count: u32,
}

impl Children {
    /// How many children.
    pub fn len(self) -> usize {
        self.count as usize
    }

    /// Whether there are none.
    pub fn is_empty(self) -> bool {
        self.count == 0
    }
}

/// A list most nodes leave empty (runtime calls, memory events), a pointer wide when it is.
#[derive(Clone, Debug, PartialEq)]
// The box is the point: one pointer a node where a `Vec` takes three, and most nodes have none.
#[allow(clippy::box_collection)]
pub struct Thin<T>(Option<Box<Vec<T>>>);

impl<T> Default for Thin<T> {
    fn default() -> Thin<T> {
        Thin(None)
    }
}

impl<T> Thin<T> {
    /// Adds `item` at the end.
    pub fn push(&mut self, item: T) {
        self.0.get_or_insert_with(Box::default).push(item);
    }

    /// Adds `items` at the end.
    pub fn extend(&mut self, items: impl IntoIterator<Item = T>) {
        let mut items = items.into_iter().peekable();
        if items.peek().is_some() {
            self.0.get_or_insert_with(Box::default).extend(items);
        }
    }
}

impl<T> From<Vec<T>> for Thin<T> {
    fn from(list: Vec<T>) -> Thin<T> {
        Thin((!list.is_empty()).then(|| Box::new(list)))
    }
}

impl<T> std::ops::Deref for Thin<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<'a, T> IntoIterator for &'a Thin<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// All threads' trees.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Forest {
    /// Every node, roots included.
    pub nodes: Vec<Node>,
    /// Every node's children (indexes into [`Forest::nodes`]), each node's by start time, where
    /// [`Node::children`] says.
    pub children: Vec<u32>,
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

pub(super) fn new_node(
    name: Arc<str>,
    ty: EventType,
    start_ns: u64,
    end_ns: u64,
    thread_id: u64,
) -> Node {
    Node {
        name,
        ty,
        start_ns,
        end_ns,
        thread_id,
        children: Children::default(),
        runtime: Thin::default(),
        mem: Thin::default(),
    }
}

/// A node index as the children list holds it (a forest holds fewer than 2^32 nodes: each is
/// bigger than the bytes of input it comes from, and inputs are limited below that).
pub(super) fn index32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
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
            stack.extend(self.children_of(i).iter().map(|&c| c as usize));
        }
        out
    }

    /// The children of node `i` (indexes into [`Forest::nodes`]), by start time.
    pub fn children_of(&self, i: usize) -> &[u32] {
        let Some(node) = self.nodes.get(i) else {
            return &[];
        };
        let first = node.children.first as usize;
        self.children
            .get(first..first + node.children.len())
            .unwrap_or(&[])
    }

    /// Lists the children of `edges` (parent, child), each parent's in the order given, sorted
    /// by start (longer first at equal starts) as Paddle builds its trees, the order given
    /// breaking ties; for nodes with no children listed yet.
    fn set_children(&mut self, edges: &[(usize, usize)]) {
        let base = self.children.len();
        let mut counts: std::collections::BTreeMap<usize, u32> = Default::default();
        for &(p, _) in edges {
            *counts.entry(p).or_default() += 1;
        }
        let mut next: HashMap<usize, usize> = HashMap::with_capacity(counts.len());
        let mut at = base;
        for (&p, &count) in &counts {
            if let Some(node) = self.nodes.get_mut(p) {
                node.children = Children {
                    first: index32(at),
                    count,
                };
            }
            next.insert(p, at);
            at += count as usize;
        }
        self.children.resize(at, 0);
        for &(p, c) in edges {
            if let Some(slot) = next.get_mut(&p) {
                if let Some(entry) = self.children.get_mut(*slot) {
                    *entry = index32(c);
                }
                *slot += 1;
            }
        }
        let keys: Vec<(u64, u64)> = self.nodes.iter().map(|n| (n.start_ns, n.end_ns)).collect();
        for (&p, &count) in &counts {
            let Some(node) = self.nodes.get(p) else {
                continue;
            };
            let first = node.children.first as usize;
            if let Some(list) = self.children.get_mut(first..first + count as usize) {
                list.sort_by(|&a, &b| {
                    let ka = keys.get(a as usize).copied().unwrap_or_default();
                    let kb = keys.get(b as usize).copied().unwrap_or_default();
                    ka.0.cmp(&kb.0).then(kb.1.cmp(&ka.1))
                });
            }
        }
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
        // (parent, child), in the order Paddle's trees list the children.
        let mut edges: Vec<(usize, usize)> = Vec::new();
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
                n.runtime = runtimes(node).into();
                n.mem = mems(node).into();
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
                    (Some(true), Some(&p)) => edges.push((p, i)),
                    _ => forest.left_out += 1,
                }
            }
        }
        forest.set_children(&edges);
        forest.roots.sort_by_key(|r| r.0);
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

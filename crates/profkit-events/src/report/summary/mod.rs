//! The tables `paddle.profiler.Profiler.summary()` prints (Paddle 3.x), layout for layout.
//!
//! The summary is computed over trees of host nodes ([`Forest`]): built exactly from Paddle's node
//! trees ([`Forest::from_node_trees`]), or from any [`Recording`] ([`Forest::from_recording`]:
//! XSpaces, Chrome traces, the recorder), whose ranges are typed by their category. The rules are
//! Paddle's:
//!
//! - every time is a node's end minus its start, in ns; a node's GPU time is the kernels launched
//!   under it (by its runtime calls and its descendants'), its "general" GPU time every device
//!   activity;
//! - **Device**: the CPU utilisation of the process and the system (read from the run's extra
//!   information) and per GPU the merged kernel time over the total;
//! - **Overview**: per event type, the calls and the time of the type's ranges merged over all
//!   threads (overlaps counted once), over the total, which is the merged time of the
//!   `ProfileStep` ranges; Dataloader, Forward, Backward and Optimization take the Model
//!   summary's figures; then the device types;
//! - **Model**: the first Forward, Backward, Optimization or Dataloader nodes on each path from a
//!   root (and every ProfileStep), summed per type, and `Others` for the rest of the total;
//! - **Distributed** (only with communication): communication, computation and their overlap;
//! - **Operator**: `Operator` nodes by name (all threads merged, or per thread), with their
//!   children of other types (`op_detail`) and the device activity they launched;
//! - **Kernel**: kernels by name; **Memory Manipulation**: user ranges named like memcpy or
//!   memset; **UserDefined**: Python user ranges (`RecordEvent`) by name;
//! - **Memory**: per place, allocations and frees by the name of the node they happened in (an
//!   operator's direct children count for the operator too), with the peaks.
//!
//! Rows are sorted by [`SortedKey`] as Python's stable `sorted` orders them (ties in the order
//! the rows were first met, walking each thread's tree depth first, last child first). Where the
//! input lacks what a table needs, the table says so ([`Summary::notes`]): CPU utilisation
//! outside node trees, operator GPU time where device activity is not tied to its launches,
//! FLOPs (Paddle computes them from operator attributes no file keeps).

mod forest;
mod text;

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use crate::event::MemEventKind;

pub use forest::{Device, EventType, Forest, Mem, Node, Runtime};

/// How rows are sorted (Paddle's `SortedKeys`): descending, but ascending for the minimums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum SortedKey {
    /// CPU total time.
    #[default]
    CPUTotal,
    /// CPU average time.
    CPUAvg,
    /// CPU longest call.
    CPUMax,
    /// CPU shortest call (ascending).
    CPUMin,
    /// GPU total time.
    GPUTotal,
    /// GPU average time.
    GPUAvg,
    /// GPU longest call.
    GPUMax,
    /// GPU shortest call (ascending).
    GPUMin,
}

/// The unit the tables print times in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum TimeUnit {
    /// Seconds.
    #[serde(rename = "s")]
    S,
    /// Milliseconds.
    #[default]
    #[serde(rename = "ms")]
    Ms,
    /// Microseconds.
    #[serde(rename = "us")]
    Us,
    /// Nanoseconds.
    #[serde(rename = "ns")]
    Ns,
}

impl TimeUnit {
    /// Its name, as the tables print it.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::S => "s",
            TimeUnit::Ms => "ms",
            TimeUnit::Us => "us",
            TimeUnit::Ns => "ns",
        }
    }
}

/// The options of `summary()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SummaryOptions {
    /// Row order.
    pub sorted_by: SortedKey,
    /// Whether operators show their inner rows and device activity.
    pub op_detail: bool,
    /// Whether the Operator and UserDefined tables are per thread.
    pub thread_sep: bool,
    /// The unit of times.
    pub time_unit: TimeUnit,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            sorted_by: SortedKey::CPUTotal,
            op_detail: true,
            thread_sep: false,
            time_unit: TimeUnit::Ms,
        }
    }
}

/// Total, longest and shortest of some calls' times, ns (`min` is `None` before any call, which
/// Paddle prints as `-`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Times {
    /// The sum.
    pub total: i64,
    /// The longest.
    pub max: i64,
    /// The shortest.
    pub min: Option<i64>,
}

impl Times {
    fn add(&mut self, t: i64) {
        if t > self.max {
            self.max = t;
        }
        if self.min.is_none_or(|m| t < m) {
            self.min = Some(t);
        }
        self.total = self.total.saturating_add(t);
    }
}

/// A row of the Operator, Kernel, Memory Manipulation, UserDefined or Model table.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Row {
    /// The name, as Paddle prints it (without the indentation).
    pub name: String,
    /// 0 for a top row, 1 for an operator's inner row or device activity, 2 for an inner row's
    /// device activity.
    pub depth: usize,
    /// Calls (`None`: printed `-`, the Model table's `Others`).
    pub calls: Option<u64>,
    /// CPU times (`None` for device activity, printed `- / - / - / - / -`).
    pub cpu: Option<Times>,
    /// GPU times: kernels for the Model and Kernel tables, all device activity otherwise.
    pub gpu: Times,
    /// CPU ratio, 0 to 1.
    pub cpu_ratio: f64,
    /// GPU ratio, 0 to 1.
    pub gpu_ratio: f64,
}

impl Row {
    /// The average CPU call, ns.
    pub fn cpu_avg(&self) -> Option<f64> {
        let calls = self.calls?;
        self.cpu.map(|c| avg(c.total, calls))
    }

    /// The average GPU call, ns.
    pub fn gpu_avg(&self) -> Option<f64> {
        self.calls.map(|calls| avg(self.gpu.total, calls))
    }
}

fn avg(total: i64, calls: u64) -> f64 {
    if calls == 0 {
        f64::NAN
    } else {
        total as f64 / calls as f64
    }
}

/// A group of rows: one thread, or all threads merged.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    /// `All threads merged` or the thread id.
    pub thread: String,
    /// The rows, sorted, each operator followed by its detail rows.
    pub rows: Vec<Row>,
}

/// A row of the Overview table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypeRow {
    /// The event type's name.
    pub event_type: String,
    /// Calls.
    pub calls: u64,
    /// Merged time, ns.
    pub time: i64,
    /// Over the total, 0 to 1.
    pub ratio: f64,
}

/// The Device table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceTable {
    /// The process's CPU utilisation, 0 to 1 (times the number of cores), when the input says.
    pub cpu_process: Option<f64>,
    /// The system's CPU utilisation, 0 to 1, when the input says.
    pub cpu_system: Option<f64>,
    /// Per GPU (id): merged kernel time over the total.
    pub gpus: Vec<(u64, f64)>,
}

/// The Distributed table, ns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Distributed {
    /// Communication time (CPU and GPU, merged).
    pub communication: i64,
    /// Computation time (kernels but communication kernels).
    pub computation: i64,
    /// Their overlap.
    pub overlap: i64,
}

/// A row of a Memory table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryRow {
    /// The node name.
    pub name: String,
    /// `Allocated` or `Reserved`.
    pub memory_type: &'static str,
    /// Allocations.
    pub allocation_count: u64,
    /// Frees.
    pub free_count: u64,
    /// Bytes allocated.
    pub allocation_size: i64,
    /// Bytes freed.
    pub free_size: i64,
    /// Allocated minus freed.
    pub increased_size: i64,
}

/// The Memory table of one place.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryTable {
    /// The place, as Paddle prints it.
    pub place: String,
    /// The peak of allocated bytes.
    pub peak_allocated: u64,
    /// The peak of reserved bytes.
    pub peak_reserved: u64,
    /// Allocated rows, then reserved rows, each by increased size.
    pub rows: Vec<MemoryRow>,
}

/// The whole summary; [`Summary::text`] prints it as Paddle does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// The options it was made with.
    pub options: SummaryOptions,
    /// The total the ratios divide, ns: the merged time of the ProfileStep ranges.
    pub total: i64,
    /// Whether the total is the ProfileStep ranges' (else, with none, the merged time of every
    /// host range: Paddle itself prints only the Device table then).
    pub total_from_profile_steps: bool,
    /// The Device table.
    pub device: DeviceTable,
    /// The Overview table's CPU rows, sorted by time.
    pub overview_cpu: Vec<TypeRow>,
    /// The Overview table's GPU rows.
    pub overview_gpu: Vec<TypeRow>,
    /// The Model table (printed when two or more of its types occur).
    pub model: Vec<Row>,
    /// The Distributed table (when there is communication).
    pub distributed: Option<Distributed>,
    /// The Operator table.
    pub operator: Vec<Group>,
    /// The Kernel table.
    pub kernel: Vec<Row>,
    /// The Memory Manipulation table.
    pub memory_manipulation: Vec<Row>,
    /// The UserDefined table.
    pub user_defined: Vec<Group>,
    /// The Memory tables, by place.
    pub memory: Vec<MemoryTable>,
    /// What the input lacks that the tables would show.
    pub notes: Vec<String>,
    /// Host nodes left out (not in their thread's tree, or ranges that did not pair).
    pub left_out: usize,
}

/// Per node: CPU, kernel and general GPU time, ns.
#[derive(Clone, Copy, Debug, Default)]
struct NodeStat {
    cpu: i64,
    gpu: i64,
    general: i64,
}

fn dur(start: u64, end: u64) -> i64 {
    let d = i128::from(end) - i128::from(start);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// An item while it is accumulated (Paddle's `ItemBase`), in first-met order.
#[derive(Clone, Debug, Default)]
struct Item {
    name: String,
    calls: u64,
    cpu: Times,
    gpu: Times,
    general: Times,
    inners: Ordered<Item>,
    devices: Ordered<Item>,
}

/// A map that iterates in insertion order, as Python's `dict`.
#[derive(Clone, Debug)]
struct Ordered<T> {
    index: HashMap<String, usize>,
    items: Vec<T>,
}

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered {
            index: HashMap::new(),
            items: Vec::new(),
        }
    }
}

impl<T> Ordered<T> {
    fn entry(&mut self, key: &str, make: impl FnOnce() -> T) -> &mut T {
        let i = match self.index.get(key) {
            Some(&i) => i,
            None => {
                self.items.push(make());
                self.index.insert(key.to_owned(), self.items.len() - 1);
                self.items.len() - 1
            }
        };
        let last = self.items.len() - 1;
        // `i` is always an index of `items`; the fallback is never taken.
        &mut self.items[i.min(last)]
    }
}

fn item(name: &str) -> Item {
    Item {
        name: name.to_owned(),
        ..Item::default()
    }
}

struct Analysis<'f> {
    forest: &'f Forest,
    stats: Vec<NodeStat>,
}

impl Analysis<'_> {
    fn stat(&self, i: usize) -> NodeStat {
        self.stats.get(i).copied().unwrap_or_default()
    }

    fn node(&self, i: usize) -> Option<&Node> {
        self.forest.node(i)
    }

    /// `OperatorItem.add_item` (`deep`: also the node's non-operator children as inner rows).
    fn add_operator(&self, item: &mut Item, i: usize, deep: bool) {
        let Some(node) = self.node(i) else { return };
        let s = self.stat(i);
        item.calls += 1;
        item.cpu.add(s.cpu);
        item.gpu.add(s.gpu);
        item.general.add(s.general);
        if deep {
            for &c in &node.children {
                if let Some(child) = self.node(c) {
                    if child.ty != EventType::Operator {
                        let inner = item.inners.entry(&child.name, || self::item(&child.name));
                        self.add_operator(inner, c, false);
                    }
                }
            }
        }
        for rt in &node.runtime {
            for d in &rt.devices {
                let device = item.devices.entry(&d.name, || self::item(&d.name));
                device.calls += 1;
                device.gpu.add(dur(d.start_ns, d.end_ns));
            }
        }
    }

    fn add_general(&self, item: &mut Item, i: usize) {
        let s = self.stat(i);
        item.calls += 1;
        item.cpu.add(s.cpu);
        item.gpu.add(s.gpu);
        item.general.add(s.general);
    }

    /// The device activity under node `i` and its descendants, in Paddle's walk order.
    fn devices_under(&self, i: usize) -> Vec<&Device> {
        let mut out = Vec::new();
        for n in self.forest.traverse(i) {
            if let Some(node) = self.node(n) {
                for rt in &node.runtime {
                    out.extend(rt.devices.iter());
                }
            }
        }
        out
    }
}

/// Paddle's `merge_self_ranges`: sorted by start (stably), overlapping and touching ranges joined.
fn merge_self(mut ranges: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    ranges.sort_by_key(|r| r.0);
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for r in ranges {
        match merged.last_mut() {
            None => merged.push(r),
            Some(last) => {
                if r.1 > last.1 {
                    if r.0 <= last.1 {
                        last.1 = r.1;
                    } else {
                        merged.push(r);
                    }
                }
            }
        }
    }
    merged
}

fn sum_ranges(ranges: &[(i64, i64)]) -> i64 {
    ranges
        .iter()
        .fold(0i64, |acc, r| acc.saturating_add(r.1.saturating_sub(r.0)))
}

/// Paddle's `intersection_ranges` of two merged lists.
fn intersect(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        let lo = x.0.max(y.0);
        let hi = x.1.min(y.1);
        if lo < hi {
            out.push((lo, hi));
        }
        if x.1 < y.1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

fn range(start: u64, end: u64) -> (i64, i64) {
    let c = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
    (c(start), c(end))
}

const COMMUNICATION_OPS: [&str; 3] = ["allreduce", "broadcast", "rpc"];

impl Summary {
    /// The summary of `forest`.
    pub fn new(forest: &Forest, options: SummaryOptions) -> Summary {
        let mut stats = vec![NodeStat::default(); forest.nodes.len()];
        for &(_, root) in &forest.roots {
            // Children before parents: the reverse of a pre-order walk.
            for i in forest.traverse(root).into_iter().rev() {
                let Some(node) = forest.node(i) else { continue };
                let mut s = NodeStat {
                    cpu: dur(node.start_ns, node.end_ns),
                    ..NodeStat::default()
                };
                for &c in &node.children {
                    let cs = stats.get(c).copied().unwrap_or_default();
                    s.gpu = s.gpu.saturating_add(cs.gpu);
                    s.general = s.general.saturating_add(cs.general);
                }
                for rt in &node.runtime {
                    for d in &rt.devices {
                        let t = dur(d.start_ns, d.end_ns);
                        if d.ty == EventType::Kernel {
                            s.gpu = s.gpu.saturating_add(t);
                        }
                        s.general = s.general.saturating_add(t);
                    }
                }
                if let Some(slot) = stats.get_mut(i) {
                    *slot = s;
                }
            }
        }
        let a = Analysis { forest, stats };
        let mut notes = Vec::new();

        // Time ranges per type (TimeRangeSummary).
        let mut cpu_ranges: Ordered<(EventType, Vec<(i64, i64)>)> = Ordered::default();
        let mut gpu_ranges: Ordered<(u64, Ordered<(EventType, Vec<(i64, i64)>)>)> =
            Ordered::default();
        let mut call_times: HashMap<EventType, u64> = HashMap::new();
        let mut all_host: Vec<(i64, i64)> = Vec::new();
        for &(_, root) in &forest.roots {
            for i in forest.traverse(root).into_iter().skip(1) {
                let Some(node) = forest.node(i) else { continue };
                let key = node.ty.name();
                cpu_ranges
                    .entry(&key, || (node.ty, Vec::new()))
                    .1
                    .push(range(node.start_ns, node.end_ns));
                *call_times.entry(node.ty).or_default() += 1;
                all_host.push(range(node.start_ns, node.end_ns));
                for rt in &node.runtime {
                    cpu_ranges
                        .entry("CudaRuntime", || (EventType::CudaRuntime, Vec::new()))
                        .1
                        .push(range(rt.start_ns, rt.end_ns));
                    *call_times.entry(EventType::CudaRuntime).or_default() += 1;
                    for d in &rt.devices {
                        let device = gpu_ranges.entry(&d.device_id.to_string(), || {
                            (d.device_id, Ordered::default())
                        });
                        device
                            .1
                            .entry(&d.ty.name(), || (d.ty, Vec::new()))
                            .1
                            .push(range(d.start_ns, d.end_ns));
                        *call_times.entry(d.ty).or_default() += 1;
                    }
                }
            }
            // Device activity of a root's own runtime calls (the event model's) counts too, but
            // as device time only, as Paddle skips the root's host figures.
            if let Some(r) = forest.node(root) {
                for rt in r.runtime.iter().filter(|rt| rt.end_ns == 0) {
                    for d in &rt.devices {
                        let device = gpu_ranges.entry(&d.device_id.to_string(), || {
                            (d.device_id, Ordered::default())
                        });
                        device
                            .1
                            .entry(&d.ty.name(), || (d.ty, Vec::new()))
                            .1
                            .push(range(d.start_ns, d.end_ns));
                        *call_times.entry(d.ty).or_default() += 1;
                    }
                }
            }
        }
        let cpu_sum: Vec<(EventType, i64)> = cpu_ranges
            .items
            .iter()
            .map(|(t, r)| (*t, sum_ranges(&merge_self(r.clone()))))
            .collect();
        let steps = cpu_sum
            .iter()
            .find(|(t, _)| *t == EventType::ProfileStep)
            .map_or(0, |s| s.1);
        let (total, total_from_profile_steps) = if steps != 0 {
            (steps, true)
        } else {
            notes.push(
                "No ProfileStep ranges: ratios are over the merged time of all host ranges (Paddle prints only the Device Summary then).".to_owned(),
            );
            (sum_ranges(&merge_self(all_host)), false)
        };
        let ratio = |t: i64, over: i64| {
            if over == 0 {
                0.0
            } else {
                t as f64 / over as f64
            }
        };

        // Device.
        let number = |key: &str| {
            forest
                .extra_info
                .get(key)
                .and_then(|v| v.trim().parse::<f64>().ok())
        };
        let device = DeviceTable {
            cpu_process: number("Process Cpu Utilization"),
            cpu_system: number("System Cpu Utilization"),
            gpus: gpu_ranges
                .items
                .iter()
                .map(|(id, types)| {
                    let kernels = types
                        .items
                        .iter()
                        .find(|(t, _)| *t == EventType::Kernel)
                        .map_or(0, |(_, r)| sum_ranges(&merge_self(r.clone())));
                    (*id, ratio(kernels, total))
                })
                .collect(),
        };
        if device.cpu_process.is_none() || device.cpu_system.is_none() {
            notes.push(
                "CPU utilisation is not in the input (Paddle's node trees keep it in their extra information).".to_owned(),
            );
        }

        // Items (EventSummary).
        let mut operators: Ordered<Item> = Ordered::default();
        let mut thread_operators: Ordered<(u64, Ordered<Item>)> = Ordered::default();
        let mut user: Ordered<Item> = Ordered::default();
        let mut thread_user: Ordered<(u64, Ordered<Item>)> = Ordered::default();
        let mut manipulation: Ordered<Item> = Ordered::default();
        let mut model: Ordered<Item> = Ordered::default();
        let mut kernels: Ordered<Item> = Ordered::default();
        for &(_, root) in &forest.roots {
            for i in forest.traverse(root).into_iter().skip(1) {
                let Some(node) = forest.node(i) else { continue };
                match node.ty {
                    EventType::Operator => {
                        a.add_operator(operators.entry(&node.name, || item(&node.name)), i, true);
                        let per = thread_operators.entry(&node.thread_id.to_string(), || {
                            (node.thread_id, Ordered::default())
                        });
                        a.add_operator(per.1.entry(&node.name, || item(&node.name)), i, true);
                    }
                    EventType::UserDefined | EventType::PythonUserDefined => {
                        let lower = node.name.to_lowercase();
                        if ["memcpy", "memorycopy", "memset"]
                            .iter()
                            .any(|m| lower.contains(m))
                        {
                            a.add_general(manipulation.entry(&node.name, || item(&node.name)), i);
                        } else if node.ty == EventType::PythonUserDefined {
                            a.add_general(user.entry(&node.name, || item(&node.name)), i);
                            let per = thread_user.entry(&node.thread_id.to_string(), || {
                                (node.thread_id, Ordered::default())
                            });
                            a.add_general(per.1.entry(&node.name, || item(&node.name)), i);
                        }
                    }
                    _ => {}
                }
            }
            for d in a.devices_under(root) {
                if d.ty == EventType::Kernel {
                    let k = kernels.entry(&d.name, || item(&d.name));
                    k.calls += 1;
                    k.gpu.add(dur(d.start_ns, d.end_ns));
                }
            }
        }
        for &(_, root) in &forest.roots {
            let mut queue: VecDeque<usize> = VecDeque::from([root]);
            while let Some(i) = queue.pop_front() {
                let Some(node) = forest.node(i) else { continue };
                for &c in &node.children {
                    let Some(child) = forest.node(c) else {
                        continue;
                    };
                    let name = match child.ty {
                        EventType::Forward => "Forward",
                        EventType::Dataloader => "Dataloader",
                        EventType::Backward => "Backward",
                        EventType::Optimization => "Optimization",
                        EventType::ProfileStep => {
                            a.add_general(model.entry("ProfileStep", || item("ProfileStep")), c);
                            queue.push_back(c);
                            continue;
                        }
                        _ => {
                            queue.push_back(c);
                            continue;
                        }
                    };
                    a.add_general(model.entry(name, || item(name)), c);
                }
            }
        }

        // Distributed.
        let mut cpu_comm = Vec::new();
        let mut gpu_comm = Vec::new();
        let mut computation = Vec::new();
        for &(_, root) in &forest.roots {
            for i in forest.traverse(root).into_iter().skip(1) {
                let Some(node) = forest.node(i) else { continue };
                let lower = node.name.to_lowercase();
                let comm_op = node.ty == EventType::Operator
                    && COMMUNICATION_OPS.iter().any(|n| lower.contains(n));
                if node.ty == EventType::Communication || comm_op {
                    cpu_comm.push(range(node.start_ns, node.end_ns));
                    for d in a.devices_under(i) {
                        if d.ty == EventType::Kernel {
                            gpu_comm.push(range(d.start_ns, d.end_ns));
                        }
                    }
                } else {
                    for rt in &node.runtime {
                        for d in rt.devices.iter().filter(|d| d.ty == EventType::Kernel) {
                            let name = d.name.to_lowercase();
                            if name.contains("nccl") || name.contains("xccl") {
                                gpu_comm.push(range(d.start_ns, d.end_ns));
                            } else {
                                computation.push(range(d.start_ns, d.end_ns));
                            }
                        }
                    }
                }
            }
        }
        let distinct = |r: &[(i64, i64)]| {
            let mut v = r.to_vec();
            v.sort_unstable();
            v.dedup();
            v.len() as u64
        };
        let (cpu_calls, gpu_calls) = (distinct(&cpu_comm), distinct(&gpu_comm));
        let cpu_comm = merge_self(cpu_comm);
        let gpu_comm = merge_self(gpu_comm);
        let communication = merge_self(cpu_comm.iter().chain(&gpu_comm).copied().collect());
        let computation = merge_self(computation);
        let distributed = (!communication.is_empty()).then(|| Distributed {
            communication: sum_ranges(&communication),
            computation: sum_ranges(&computation),
            overlap: sum_ranges(&intersect(&communication, &computation)),
        });

        // Overview.
        let mut cpu_rows: Vec<TypeRow> = Vec::new();
        for (t, time) in &cpu_sum {
            if *t == EventType::Communication {
                continue;
            }
            let mut calls = call_times.get(t).copied().unwrap_or(0);
            let mut time = *time;
            let model_name = match t {
                EventType::Dataloader => Some("Dataloader"),
                EventType::Forward => Some("Forward"),
                EventType::Backward => Some("Backward"),
                EventType::Optimization => Some("Optimization"),
                _ => None,
            };
            if let Some(m) =
                model_name.and_then(|n| model.index.get(n).and_then(|&k| model.items.get(k)))
            {
                calls = m.calls;
                time = m.cpu.total;
            }
            cpu_rows.push(TypeRow {
                event_type: t.name().into_owned(),
                calls,
                time,
                ratio: ratio(time, total),
            });
        }
        if !cpu_comm.is_empty() {
            let time = sum_ranges(&cpu_comm);
            cpu_rows.push(TypeRow {
                event_type: "Communication".into(),
                calls: cpu_calls,
                time,
                ratio: ratio(time, total),
            });
        }
        // Python's sorted(reverse=True) is stable.
        cpu_rows.sort_by(|x, y| y.time.cmp(&x.time));
        let mut gpu_merged: Ordered<(EventType, Vec<(i64, i64)>)> = Ordered::default();
        for (_, types) in &gpu_ranges.items {
            for (t, r) in &types.items {
                gpu_merged
                    .entry(&t.name(), || (*t, Vec::new()))
                    .1
                    .extend(r.iter().copied());
            }
        }
        let mut gpu_rows: Vec<TypeRow> = gpu_merged
            .items
            .iter()
            .map(|(t, r)| {
                let time = sum_ranges(&merge_self(r.clone()));
                TypeRow {
                    event_type: t.name().into_owned(),
                    calls: call_times.get(t).copied().unwrap_or(0),
                    time,
                    ratio: ratio(time, total),
                }
            })
            .collect();
        if !gpu_comm.is_empty() {
            let time = sum_ranges(&gpu_comm);
            match gpu_rows
                .iter_mut()
                .find(|r| r.event_type == "Communication")
            {
                Some(row) => {
                    row.time = time;
                    row.calls = gpu_calls;
                    row.ratio = ratio(time, total);
                }
                None => gpu_rows.push(TypeRow {
                    event_type: "Communication".into(),
                    calls: gpu_calls,
                    time,
                    ratio: ratio(time, total),
                }),
            }
        }

        // Model.
        let mut model_rows = Vec::new();
        if model.items.len() > 1 {
            let step = |name: &str| model.index.get(name).and_then(|&k| model.items.get(k));
            let gpu_total = step("ProfileStep").map_or(0, |s| s.gpu.total);
            let (mut cpu_acc, mut gpu_acc) = (0i64, 0i64);
            for name in [
                "ProfileStep",
                "Dataloader",
                "Forward",
                "Backward",
                "Optimization",
            ] {
                if let Some(it) = step(name) {
                    model_rows.push(Row {
                        name: name.to_owned(),
                        depth: usize::from(name != "ProfileStep"),
                        calls: Some(it.calls),
                        cpu: Some(it.cpu),
                        gpu: it.gpu,
                        cpu_ratio: ratio(it.cpu.total, total),
                        gpu_ratio: ratio(it.gpu.total, gpu_total),
                    });
                    if name != "ProfileStep" {
                        cpu_acc = cpu_acc.saturating_add(it.cpu.total);
                        gpu_acc = gpu_acc.saturating_add(it.gpu.total);
                    }
                }
            }
            let other = total.saturating_sub(cpu_acc);
            let other_gpu = gpu_total.saturating_sub(gpu_acc);
            model_rows.push(Row {
                name: "Others".to_owned(),
                depth: 1,
                calls: None,
                cpu: Some(Times {
                    total: other,
                    max: 0,
                    min: None,
                }),
                gpu: Times {
                    total: other_gpu,
                    max: 0,
                    min: None,
                },
                cpu_ratio: ratio(other, total),
                gpu_ratio: ratio(other_gpu, gpu_total),
            });
        }

        // Operator.
        let sorted_by = options.sorted_by;
        let groups: Vec<(String, &Ordered<Item>)> = if options.thread_sep {
            thread_operators
                .items
                .iter()
                .map(|(t, items)| (t.to_string(), items))
                .collect()
        } else {
            vec![("All threads merged".to_owned(), &operators)]
        };
        let mut operator = Vec::new();
        if !operators.items.is_empty() {
            for (thread, items) in groups {
                let sorted = sort_items(&items.items, sorted_by, true);
                let cpu_sum: i64 = sorted.iter().map(|i| i.cpu.total).sum();
                let gpu_sum: i64 = sorted.iter().map(|i| i.general.total).sum();
                let mut rows = Vec::new();
                for it in sorted {
                    rows.push(Row {
                        name: it.name.clone(),
                        depth: 0,
                        calls: Some(it.calls),
                        cpu: Some(it.cpu),
                        gpu: it.general,
                        cpu_ratio: ratio(it.cpu.total, cpu_sum),
                        gpu_ratio: ratio(it.general.total, gpu_sum),
                    });
                    if !options.op_detail {
                        continue;
                    }
                    for inner in &it.inners.items {
                        rows.push(Row {
                            name: inner.name.clone(),
                            depth: 1,
                            calls: Some(inner.calls),
                            cpu: Some(inner.cpu),
                            gpu: inner.general,
                            cpu_ratio: ratio(inner.cpu.total, it.cpu.total),
                            gpu_ratio: ratio(inner.general.total, it.general.total),
                        });
                        for d in &inner.devices.items {
                            rows.push(device_row(d, 2, inner.general.total));
                        }
                    }
                    for d in &it.devices.items {
                        rows.push(device_row(d, 1, it.general.total));
                    }
                }
                operator.push(Group { thread, rows });
            }
            if !forest.devices_linked && forest.nodes.iter().any(|n| !n.runtime.is_empty()) {
                notes.push("Operator GPU time is not in the input: the event model does not tie device activity to the calls that launched it.".to_owned());
            }
            notes.push(
                "FLOPs are not in the input (Paddle computes them from operator attributes at run time).".to_owned(),
            );
        }

        // Kernel.
        let kernel_sorted = {
            let mut v: Vec<&Item> = kernels.items.iter().collect();
            match sorted_by {
                SortedKey::GPUAvg => {
                    v.sort_by(|x, y| desc(avg(x.gpu.total, x.calls), avg(y.gpu.total, y.calls)))
                }
                SortedKey::GPUMax => v.sort_by(|x, y| y.gpu.max.cmp(&x.gpu.max)),
                SortedKey::GPUMin => v.sort_by(|x, y| x.gpu.min.cmp(&y.gpu.min)),
                _ => v.sort_by(|x, y| y.gpu.total.cmp(&x.gpu.total)),
            }
            v
        };
        let kernel_sum: i64 = kernel_sorted.iter().map(|k| k.gpu.total).sum();
        let kernel: Vec<Row> = kernel_sorted
            .iter()
            .map(|k| Row {
                name: k.name.clone(),
                depth: 0,
                calls: Some(k.calls),
                cpu: None,
                gpu: k.gpu,
                cpu_ratio: 0.0,
                gpu_ratio: ratio(k.gpu.total, kernel_sum),
            })
            .collect();

        // Memory Manipulation and UserDefined: GPU ratios over the steps' device time.
        let step_general = model
            .index
            .get("ProfileStep")
            .and_then(|&k| model.items.get(k))
            .map_or(0, |s| s.general.total);
        let general_row = |it: &Item| Row {
            name: it.name.clone(),
            depth: 0,
            calls: Some(it.calls),
            cpu: Some(it.cpu),
            gpu: it.general,
            cpu_ratio: ratio(it.cpu.total, total),
            gpu_ratio: ratio(it.general.total, step_general),
        };
        let memory_manipulation = manipulation.items.iter().map(general_row).collect();
        let mut user_defined = Vec::new();
        if !user.items.is_empty() {
            let groups: Vec<(String, &Ordered<Item>)> = if options.thread_sep {
                thread_user
                    .items
                    .iter()
                    .map(|(t, items)| (t.to_string(), items))
                    .collect()
            } else {
                vec![("All threads merged".to_owned(), &user)]
            };
            for (thread, items) in groups {
                let rows = sort_items(&items.items, sorted_by, false)
                    .into_iter()
                    .map(general_row)
                    .collect();
                user_defined.push(Group { thread, rows });
            }
        }

        Summary {
            options,
            total,
            total_from_profile_steps,
            device,
            overview_cpu: cpu_rows,
            overview_gpu: gpu_rows,
            model: model_rows,
            distributed,
            operator,
            kernel,
            memory_manipulation,
            user_defined,
            memory: memory_tables(forest),
            notes,
            left_out: forest.left_out,
        }
    }
}

fn device_row(d: &Item, depth: usize, over: i64) -> Row {
    Row {
        name: d.name.clone(),
        depth,
        calls: Some(d.calls),
        cpu: None,
        gpu: d.gpu,
        cpu_ratio: 0.0,
        gpu_ratio: if over == 0 {
            0.0
        } else {
            d.gpu.total as f64 / over as f64
        },
    }
}

fn desc(a: f64, b: f64) -> std::cmp::Ordering {
    b.partial_cmp(&a).unwrap_or(std::cmp::Ordering::Equal)
}

/// Python's stable `sorted` of items by the key (`general`: GPU keys read the general GPU time,
/// as the Operator table does; the UserDefined table does too).
fn sort_items(items: &[Item], key: SortedKey, _operator: bool) -> Vec<&Item> {
    let mut v: Vec<&Item> = items.iter().collect();
    let min = |t: &Times| t.min.unwrap_or(i64::MAX);
    match key {
        SortedKey::CPUTotal => v.sort_by(|x, y| y.cpu.total.cmp(&x.cpu.total)),
        SortedKey::CPUAvg => {
            v.sort_by(|x, y| desc(avg(x.cpu.total, x.calls), avg(y.cpu.total, y.calls)))
        }
        SortedKey::CPUMax => v.sort_by(|x, y| y.cpu.max.cmp(&x.cpu.max)),
        SortedKey::CPUMin => v.sort_by(|x, y| min(&x.cpu).cmp(&min(&y.cpu))),
        SortedKey::GPUTotal => v.sort_by(|x, y| y.general.total.cmp(&x.general.total)),
        SortedKey::GPUAvg => {
            v.sort_by(|x, y| desc(avg(x.general.total, x.calls), avg(y.general.total, y.calls)))
        }
        SortedKey::GPUMax => v.sort_by(|x, y| y.general.max.cmp(&x.general.max)),
        SortedKey::GPUMin => v.sort_by(|x, y| min(&x.general).cmp(&min(&y.general))),
    }
    v
}

/// The Memory tables (MemorySummary): per place in first-met order.
fn memory_tables(forest: &Forest) -> Vec<MemoryTable> {
    #[derive(Default)]
    struct Place {
        allocated: Ordered<MemoryRow>,
        reserved: Ordered<MemoryRow>,
        peak_allocated: u64,
        peak_reserved: u64,
    }
    let mut places: Ordered<(String, Place)> = Ordered::default();
    let mut analyse = |name: &str, node: &Node| {
        for m in &node.mem {
            let place = places.entry(&m.place, || (m.place.clone(), Place::default()));
            let (table, memory_type) = match m.kind {
                MemEventKind::Allocate | MemEventKind::Free => {
                    (Some(&mut place.1.allocated), "Allocated")
                }
                MemEventKind::ReservedAllocate | MemEventKind::ReservedFree => {
                    (Some(&mut place.1.reserved), "Reserved")
                }
                MemEventKind::Other(_) => (None, ""),
            };
            if let Some(table) = table {
                let row = table.entry(name, || MemoryRow {
                    name: name.to_owned(),
                    memory_type,
                    allocation_count: 0,
                    free_count: 0,
                    allocation_size: 0,
                    free_size: 0,
                    increased_size: 0,
                });
                match m.kind {
                    MemEventKind::Allocate | MemEventKind::ReservedAllocate => {
                        row.allocation_count += 1;
                        row.allocation_size = row.allocation_size.saturating_add(m.increase_bytes);
                    }
                    _ => {
                        row.free_count += 1;
                        row.free_size = row.free_size.saturating_sub(m.increase_bytes);
                    }
                }
                row.increased_size = row.allocation_size.saturating_sub(row.free_size);
            }
            place.1.peak_allocated = place.1.peak_allocated.max(m.peak_allocated);
            place.1.peak_reserved = place.1.peak_reserved.max(m.peak_reserved);
        }
    };
    for &(_, root) in &forest.roots {
        for i in forest.traverse(root).into_iter().skip(1) {
            let Some(node) = forest.node(i) else { continue };
            if node.ty == EventType::OperatorInner {
                continue;
            }
            if node.ty == EventType::Operator {
                for &c in &node.children {
                    if let Some(child) = forest.node(c) {
                        analyse(&node.name, child);
                    }
                }
            }
            analyse(&node.name, node);
        }
    }
    places
        .items
        .into_iter()
        .filter(|(_, p)| !p.allocated.items.is_empty())
        .map(|(place, p)| {
            let mut rows = p.allocated.items;
            rows.sort_by(|x, y| y.increased_size.cmp(&x.increased_size));
            let mut reserved = p.reserved.items;
            reserved.sort_by(|x, y| y.increased_size.cmp(&x.increased_size));
            rows.extend(reserved);
            MemoryTable {
                place,
                peak_allocated: p.peak_allocated,
                peak_reserved: p.peak_reserved,
                rows,
            }
        })
        .collect()
}

//! Computing the summary's tables from a [`Forest`], as Paddle's `profiler_statistic` does.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{HashMap, HashSet, VecDeque};

use super::memory::memory_tables;
use super::ordered::Ordered;
use super::ranges::{all_host_time, intersect, merge_self, merged_time, range, sum_ranges};
use super::{
    Device, DeviceTable, Distributed, EventType, Forest, Group, Node, Row, SortedKey, Summary,
    SummaryOptions, Times, TypeRow, avg,
};

/// Ranges of one event type, ns.
type TypeRanges = (EventType, Vec<(i64, i64)>);
/// Ranges gathered in pieces, in order: lists of their own, and the sorted lists of the forest's
/// unlinked device activity, borrowed.
type Piece<'f> = Cow<'f, [(i64, i64)]>;
type Pieces<'f> = Vec<Piece<'f>>;
/// Per device: its ranges per type.
type DeviceRanges<'f> = (u64, Ordered<(EventType, Pieces<'f>)>);

fn push_piece(pieces: &mut Pieces<'_>, r: (i64, i64)) {
    match pieces.last_mut() {
        Some(Cow::Owned(list)) => list.push(r),
        _ => pieces.push(Cow::Owned(vec![r])),
    }
}

/// The merged time of pieces taken in order (the borrowed ones are sorted).
fn pieces_time<'p>(pieces: impl Iterator<Item = &'p Cow<'p, [(i64, i64)]>>) -> i64 {
    let lists: Vec<(&[(i64, i64)], bool)> = pieces
        .map(|p| (&**p, matches!(p, Cow::Borrowed(_))))
        .collect();
    merged_time(&lists)
}

/// Per node: CPU, kernel and general GPU time, ns.
#[derive(Clone, Copy, Debug, Default)]
struct NodeStat {
    cpu: i64,
    /// `cpu` less the children's `cpu`.
    cpu_self: i64,
    gpu: i64,
    general: i64,
}

pub(super) fn dur(start: u64, end: u64) -> i64 {
    let d = i128::from(end) - i128::from(start);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// An item while it is accumulated (Paddle's `ItemBase`), in first-met order.
#[derive(Clone, Debug, Default)]
struct Item {
    name: String,
    calls: u64,
    cpu: Times,
    /// Summed self time of the calls, ns.
    cpu_self: i64,
    gpu: Times,
    general: Times,
    inners: Ordered<Item>,
    devices: Ordered<Item>,
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
        item.cpu_self = item.cpu_self.saturating_add(s.cpu_self);
        item.gpu.add(s.gpu);
        item.general.add(s.general);
        if deep {
            for c in self.forest.children_of(i).iter().map(|&c| c as usize) {
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
        item.cpu_self = item.cpu_self.saturating_add(s.cpu_self);
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

const COMMUNICATION_OPS: [&str; 3] = ["allreduce", "broadcast", "rpc"];

impl Summary {
    /// The summary of `forest`.
    pub fn new(forest: &Forest, options: SummaryOptions) -> Summary {
        let mut stats = vec![NodeStat::default(); forest.nodes.len()];
        for &(_, root) in &forest.roots {
            // Children before parents: the reverse of a pre-order walk.
            for i in forest.traverse(root).into_iter().rev() {
                let Some(node) = forest.node(i) else { continue };
                let cpu = dur(node.start_ns, node.end_ns);
                let mut s = NodeStat {
                    cpu,
                    cpu_self: cpu,
                    ..NodeStat::default()
                };
                for c in forest.children_of(i).iter().map(|&c| c as usize) {
                    let cs = stats.get(c).copied().unwrap_or_default();
                    s.cpu_self = s.cpu_self.saturating_sub(cs.cpu);
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
        let mut cpu_ranges: Ordered<TypeRanges> = Ordered::default();
        let mut gpu_ranges: Ordered<DeviceRanges> = Ordered::default();
        let mut call_times: HashMap<EventType, u64> = HashMap::new();
        for &(_, root) in &forest.roots {
            for i in forest.traverse(root).into_iter().skip(1) {
                let Some(node) = forest.node(i) else { continue };
                let key = node.ty.name();
                cpu_ranges
                    .entry(&key, || (node.ty, Vec::new()))
                    .1
                    .push(range(node.start_ns, node.end_ns));
                *call_times.entry(node.ty).or_default() += 1;
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
                        push_piece(
                            &mut device.1.entry(&d.ty.name(), || (d.ty, Vec::new())).1,
                            range(d.start_ns, d.end_ns),
                        );
                        *call_times.entry(d.ty).or_default() += 1;
                    }
                }
            }
            // Device activity of a root's own runtime calls counts too, but as device time only,
            // as Paddle skips the root's host figures; so does the unlinked activity of the
            // root it belongs to, after them.
            if let Some(r) = forest.node(root) {
                for rt in r.runtime.iter().filter(|rt| rt.end_ns == 0) {
                    for d in &rt.devices {
                        let device = gpu_ranges.entry(&d.device_id.to_string(), || {
                            (d.device_id, Ordered::default())
                        });
                        push_piece(
                            &mut device.1.entry(&d.ty.name(), || (d.ty, Vec::new())).1,
                            range(d.start_ns, d.end_ns),
                        );
                        *call_times.entry(d.ty).or_default() += 1;
                    }
                }
            }
            if root == forest.unlinked.root {
                for (id, types) in &forest.unlinked.devices {
                    let device = gpu_ranges.entry(&id.to_string(), || (*id, Ordered::default()));
                    for (ty, ranges) in types {
                        device
                            .1
                            .entry(&ty.name(), || (*ty, Vec::new()))
                            .1
                            .push(Cow::Borrowed(ranges));
                        *call_times.entry(*ty).or_default() += ranges.len() as u64;
                    }
                }
            }
        }
        // Each type's ranges sorted where they are (the merged time does not depend on how
        // equal starts are ordered).
        for (_, r) in &mut cpu_ranges.items {
            r.sort_by_key(|r| r.0);
        }
        let cpu_sum: Vec<(EventType, i64)> = cpu_ranges
            .items
            .iter()
            .map(|(t, r)| (*t, merged_time(&[(r.as_slice(), true)])))
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
            (all_host_time(forest, &cpu_ranges.items), false)
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
                        .map_or(0, |(_, r)| pieces_time(r.iter()));
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
            // The root's own device activity, then the unlinked activity that belongs to it,
            // then its descendants', as they would be walked if the unlinked were the root's.
            let under = a.devices_under(root);
            let own = forest.node(root).map_or(0, |r| {
                r.runtime.iter().map(|rt| rt.devices.len()).sum::<usize>()
            });
            let (own, rest) = under.split_at(own.min(under.len()));
            let add = |kernels: &mut Ordered<Item>, d: &Device| {
                if d.ty == EventType::Kernel {
                    let k = kernels.entry(&d.name, || item(&d.name));
                    k.calls += 1;
                    k.gpu.add(dur(d.start_ns, d.end_ns));
                }
            };
            for d in own {
                add(&mut kernels, d);
            }
            if root == forest.unlinked.root {
                for (name, calls, times) in &forest.unlinked.kernels {
                    let k = kernels.entry(name, || item(name));
                    if k.calls == 0 {
                        k.gpu = *times;
                    } else {
                        k.gpu.total = k.gpu.total.saturating_add(times.total);
                        k.gpu.max = k.gpu.max.max(times.max);
                        k.gpu.min = match (k.gpu.min, times.min) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                    }
                    k.calls += calls;
                }
            }
            for d in rest {
                add(&mut kernels, d);
            }
        }
        for &(_, root) in &forest.roots {
            let mut queue: VecDeque<usize> = VecDeque::from([root]);
            while let Some(i) = queue.pop_front() {
                for c in forest.children_of(i).iter().map(|&c| c as usize) {
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
        let mut covered = vec![false; forest.nodes.len()];
        for &(_, root) in &forest.roots {
            for i in forest.traverse(root).into_iter().skip(1) {
                let Some(node) = forest.node(i) else { continue };
                let lower = node.name.to_lowercase();
                let comm_op = node.ty == EventType::Operator
                    && COMMUNICATION_OPS.iter().any(|n| lower.contains(n));
                if node.ty == EventType::Communication || comm_op {
                    cpu_comm.push(range(node.start_ns, node.end_ns));
                    // A communication node inside another adds kernels its ancestor added
                    // already; they count once (merged, and calls are distinct ranges), so each
                    // subtree is walked once.
                    if !covered.get(i).copied().unwrap_or(true) {
                        for n in forest.traverse(i) {
                            if let Some(c) = covered.get_mut(n) {
                                *c = true;
                            }
                        }
                        for d in a.devices_under(i) {
                            if d.ty == EventType::Kernel {
                                gpu_comm.push(range(d.start_ns, d.end_ns));
                            }
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
        cpu_rows.sort_by_key(|r| Reverse(r.time));
        let mut gpu_merged: Ordered<(EventType, Vec<&Piece<'_>>)> = Ordered::default();
        for (_, types) in &gpu_ranges.items {
            for (t, r) in &types.items {
                gpu_merged
                    .entry(&t.name(), || (*t, Vec::new()))
                    .1
                    .extend(r.iter());
            }
        }
        let mut gpu_rows: Vec<TypeRow> = gpu_merged
            .items
            .iter()
            .map(|(t, r)| {
                let time = pieces_time(r.iter().copied());
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
        let shared_names: HashSet<&str> = {
            let mut seen = HashSet::new();
            forest
                .thread_names
                .values()
                .filter(|n| !seen.insert(n.as_str()))
                .map(String::as_str)
                .collect()
        };
        let groups: Vec<(String, &Ordered<Item>)> = if options.thread_sep {
            thread_operators
                .items
                .iter()
                .map(|(t, items)| (thread_label(forest, &shared_names, *t), items))
                .collect()
        } else {
            vec![("All threads merged".to_owned(), &operators)]
        };
        let mut operator = Vec::new();
        if !operators.items.is_empty() {
            for (thread, items) in groups {
                let sorted = sort_items(&items.items, sorted_by);
                let cpu_sum = saturating_sum(sorted.iter().map(|i| i.cpu.total));
                let gpu_sum = saturating_sum(sorted.iter().map(|i| i.general.total));
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
            if !forest.devices_linked
                && (!forest.unlinked.is_empty()
                    || forest.nodes.iter().any(|n| !n.runtime.is_empty()))
            {
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
                SortedKey::GPUMax => v.sort_by_key(|x| Reverse(x.gpu.max)),
                SortedKey::GPUMin => v.sort_by_key(|x| x.gpu.min.unwrap_or(i64::MAX)),
                _ => v.sort_by_key(|x| Reverse(x.gpu.total)),
            }
            v
        };
        let kernel_sum = saturating_sum(kernel_sorted.iter().map(|k| k.gpu.total));
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
                    .map(|(t, items)| (thread_label(forest, &shared_names, *t), items))
                    .collect()
            } else {
                vec![("All threads merged".to_owned(), &user)]
            };
            for (thread, items) in groups {
                let rows = sort_items(&items.items, sorted_by)
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

/// How `--thread-sep` heads thread `tid`: its name where the input names it (with its id when
/// another thread has the same name), else its id, as Paddle prints it.
fn thread_label(forest: &Forest, shared: &HashSet<&str>, tid: u64) -> String {
    match forest.thread_names.get(&tid) {
        Some(name) if shared.contains(name.as_str()) => format!("{name} ({tid})"),
        Some(name) => name.clone(),
        None => tid.to_string(),
    }
}

/// A sum that stops at the bounds of `i64` (hostile times) rather than overflowing.
fn saturating_sum(values: impl Iterator<Item = i64>) -> i64 {
    values.fold(0, i64::saturating_add)
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

/// Python's stable `sorted` of items by the key (GPU keys read the general GPU time, all device
/// activity, as Paddle's Operator and UserDefined tables do).
fn sort_items(items: &[Item], key: SortedKey) -> Vec<&Item> {
    let mut v: Vec<&Item> = items.iter().collect();
    let min = |t: &Times| t.min.unwrap_or(i64::MAX);
    match key {
        SortedKey::CPUTotal => v.sort_by_key(|x| Reverse(x.cpu.total)),
        SortedKey::CPUAvg => {
            v.sort_by(|x, y| desc(avg(x.cpu.total, x.calls), avg(y.cpu.total, y.calls)))
        }
        SortedKey::CPUMax => v.sort_by_key(|x| Reverse(x.cpu.max)),
        SortedKey::CPUMin => v.sort_by_key(|x| min(&x.cpu)),
        SortedKey::GPUTotal => v.sort_by_key(|x| Reverse(x.general.total)),
        SortedKey::GPUAvg => {
            v.sort_by(|x, y| desc(avg(x.general.total, x.calls), avg(y.general.total, y.calls)))
        }
        SortedKey::GPUMax => v.sort_by_key(|x| Reverse(x.general.max)),
        SortedKey::GPUMin => v.sort_by_key(|x| min(&x.general)),
        SortedKey::CPUSelf => v.sort_by_key(|x| Reverse(x.cpu_self)),
    }
    v
}

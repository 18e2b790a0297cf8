//! torch's `FunctionEvent`s from a trace, as `profiler._parse_kineto_results` makes them from the
//! live profiler's events, and their tree, as `EventList._build_tree` builds it:
//!
//! - every operator, `record_function` range, Python call and runtime call is a CPU event; a
//!   kernel, copy, set or device-side range a device event; Kineto's span of the whole trace,
//!   flows and instants are not events, and neither are the few utility operators torch hides
//!   (`_filter_name`);
//! - a `[memory]` instant counts towards every CPU event whose time range holds it, ends
//!   included, on whatever thread; one that no event holds is an event of its own, named
//!   `[memory]`, without a duration;
//! - a device event is a "kernel" of the operators that launched it (the same `External id`);
//! - events are sorted by start, longer first; on each thread an event's parent is the
//!   innermost earlier event that holds it whole;
//! - a child with its parent's name that is the parent's only child is folded into it
//!   (`_remove_dup_nodes`), until none is left.
//!
//! Times stay integer nanoseconds here; they become torch's floating microseconds only to be
//! printed.

use rustc_hash::FxHashMap;

use crate::trace::{Category, Str, Trace};

/// Names torch's `_filter_name` leaves out of the table.
const FILTERED: &[&str] = &[
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
];

/// One of torch's `FunctionEvent`s, kept small (a trace has millions): no-value fields hold
/// [`NONE`], the children are a count (their sums are taken from the children's side once the
/// tree is final), and times are integer nanoseconds ([`Events::us`] gives torch's doubles).
#[derive(Clone, Debug)]
pub(crate) struct FunctionEvent {
    /// The name as torch keys it (`ProfilerStep#3` as `ProfilerStep*`), interned.
    pub key: Str,
    pub thread: i64,
    pub start: i64,
    pub end: i64,
    pub device: bool,
    pub user_annotation: bool,
    pub python: bool,
    /// Interned input shapes, or [`NONE`].
    pub input_shapes: Str,
    /// Interned stack, or [`NONE`].
    pub stack: Str,
    /// Interned overload name, or [`NONE`] (`capture_overload_names` not on, or the default
    /// overload).
    pub overload: Str,
    pub cpu_memory: i64,
    pub device_memory: i64,
    pub flops: i64,
    /// The summed durations of the device events this one launched, microseconds, summed in
    /// their order as torch sums its `kernels`.
    pub kernels: f64,
    /// The parent's position, or [`NONE`].
    pub parent: u32,
    /// How many children it has.
    pub children: u32,
}

/// What a field of a [`FunctionEvent`] holds when it has no value.
pub(crate) const NONE: u32 = u32::MAX;

/// The events of a trace, in torch's order (start, then longer first), with their tree.
pub(crate) struct Events {
    pub list: Vec<FunctionEvent>,
    pub use_device: bool,
    /// The session's start, nanoseconds.
    pub base: i64,
}

impl Events {
    /// torch's `time_range` end minus start: the duration in microseconds as torch's doubles
    /// give it.
    pub(crate) fn us(&self, e: &FunctionEvent) -> f64 {
        (e.end.saturating_sub(self.base) as f64 / 1000.0)
            - (e.start.saturating_sub(self.base) as f64 / 1000.0)
    }
}

fn is_memory_name(name: &str) -> bool {
    name == "[memory]" || name == "[OutOfMemory]"
}

/// c10's `DeviceType`s whose bytes torch counts as CPU memory (CPU, MKLDNN, IDEEP) and as
/// device memory (CUDA, HIP, XPU, PrivateUse1).
fn memory_kind(device_type: i64) -> (bool, bool) {
    (
        matches!(device_type, 0 | 2 | 5),
        matches!(device_type, 1 | 6 | 12 | 20),
    )
}

impl Events {
    pub(crate) fn build(trace: &Trace, with_flops: bool) -> Events {
        let step = STEP_KEY;
        let memory_keys = (MEMORY_KEY, OOM_KEY);
        let mut list: Vec<FunctionEvent> = Vec::new();
        let mut memory: Vec<(i64, i64, i64, i64)> = Vec::new(); // (ts, tid, cpu bytes, device bytes)
        let mut oom: Vec<usize> = Vec::new();
        let mut external: Vec<Option<i64>> = Vec::new();
        let mut use_device = trace.meta.device_properties > 0;
        for e in &trace.events {
            // An operator's name as torch names it: without the overload Kineto may add.
            let (name_id, overload) = e.overload.unwrap_or((e.name, NONE));
            let name = trace.str(name_id);
            if e.instant {
                if is_memory_name(name) {
                    let (cpu, dev) = memory_kind(e.device_type);
                    let entry = (
                        e.ts,
                        e.tid,
                        if cpu { e.bytes } else { 0 },
                        if dev { e.bytes } else { 0 },
                    );
                    if name == "[OutOfMemory]" {
                        oom.push(memory.len());
                    }
                    memory.push(entry);
                }
                continue;
            }
            if e.cat == Category::TraceSpan || FILTERED.contains(&name) {
                continue;
            }
            let device = e.cat.is_device();
            use_device |= device;
            let flops = match e.flops {
                Some(f) => f,
                None if with_flops => e.dims.as_deref().map_or(0, |dims| {
                    super::flops::flops(name, dims, e.concrete_inputs.as_deref())
                }),
                None => 0,
            };
            let key = if name.starts_with("ProfilerStep#") {
                step
            } else {
                name_id
            };
            list.push(FunctionEvent {
                key,
                thread: e.tid,
                start: e.ts,
                end: e.ts.saturating_add(e.dur),
                device,
                user_annotation: matches!(
                    e.cat,
                    Category::UserAnnotation | Category::GpuUserAnnotation
                ),
                python: e.cat == Category::PythonFunction,
                input_shapes: e.input_shapes.unwrap_or(NONE),
                stack: e.stack.unwrap_or(NONE),
                overload,
                cpu_memory: 0,
                device_memory: 0,
                flops,
                kernels: 0.0,
                parent: NONE,
                children: 0,
            });
            // Frontend events (operators and ranges) are what device events link to; runtime
            // calls carry the same External id but are linked, not linking.
            external.push(match e.cat {
                Category::CpuOp | Category::UserAnnotation => e.external_id.filter(|&x| x != 0),
                _ if device => e.external_id.map(|x| -x - 1),
                _ => None,
            });
        }
        attribute_memory(&mut list, &memory, &oom, memory_keys);
        // torch's times are doubles: nanoseconds from the session's start (Kineto's span of
        // the whole trace starts with it) over 1000, and their floating-point sums are what it
        // prints, to the last rounding.
        let base = trace
            .events
            .iter()
            .find(|e| e.cat == Category::TraceSpan)
            .map(|e| e.ts)
            .or_else(|| list.iter().map(|e| e.start).min())
            .unwrap_or(0);
        let mut events = Events {
            list: Vec::new(),
            use_device,
            base,
        };
        link_kernels(&events, &mut list, &external);
        drop(external);
        // Memory-only events were appended after the others, as torch does; then all sorted
        // (stably, in place).
        list.sort_by_key(|e| (e.start, std::cmp::Reverse(e.end)));
        populate_children(&mut list);
        remove_dup_nodes(&mut list);
        events.list = list;
        events
    }
}

/// The keys of names torch makes up: `ProfilerStep*`, `[memory]`, `[OutOfMemory]`.
pub(crate) const STEP_KEY: Str = Str::MAX;
pub(crate) const MEMORY_KEY: Str = Str::MAX - 1;
pub(crate) const OOM_KEY: Str = Str::MAX - 2;

/// The name a key stands for.
pub(crate) fn key_name(trace: &Trace, key: Str) -> &str {
    match key {
        STEP_KEY => "ProfilerStep*",
        MEMORY_KEY => "[memory]",
        OOM_KEY => "[OutOfMemory]",
        k => trace.str(k),
    }
}

/// Memory instants counted towards the CPU events holding them; the rest become `[memory]`
/// events, and `[OutOfMemory]` instants always do.
fn attribute_memory(
    list: &mut Vec<FunctionEvent>,
    memory: &[(i64, i64, i64, i64)],
    oom: &[usize],
    (memory_key, oom_key): (Str, Str),
) {
    if memory.is_empty() {
        return;
    }
    let mut order: Vec<usize> = (0..memory.len()).filter(|i| !oom.contains(i)).collect();
    order.sort_by_key(|&i| memory[i].0);
    let times: Vec<i64> = order.iter().map(|&i| memory[i].0).collect();
    let mut cpu_prefix = vec![0i64; order.len() + 1];
    let mut dev_prefix = vec![0i64; order.len() + 1];
    for (k, &i) in order.iter().enumerate() {
        cpu_prefix[k + 1] = cpu_prefix[k].saturating_add(memory[i].2);
        dev_prefix[k + 1] = dev_prefix[k].saturating_add(memory[i].3);
    }
    let mut covered = vec![0i32; order.len() + 1];
    for e in list.iter_mut().filter(|e| !e.device) {
        let lo = times.partition_point(|&t| t < e.start);
        let hi = times.partition_point(|&t| t <= e.end);
        if lo < hi {
            e.cpu_memory = cpu_prefix[hi].saturating_sub(cpu_prefix[lo]);
            e.device_memory = dev_prefix[hi].saturating_sub(dev_prefix[lo]);
            covered[lo] += 1;
            covered[hi] -= 1;
        }
    }
    let mut depth = 0;
    let mut unmatched = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        depth += covered[k];
        if depth == 0 {
            unmatched.push(i);
        }
    }
    // torch appends the unmatched records in their recorded order, then the OOM ones.
    unmatched.sort_unstable();
    for i in unmatched.into_iter().chain(oom.iter().copied()) {
        let (ts, tid, cpu, dev) = memory[i];
        list.push(FunctionEvent {
            key: if oom.contains(&i) {
                oom_key
            } else {
                memory_key
            },
            thread: tid,
            start: ts,
            end: ts,
            device: false,
            user_annotation: false,
            python: false,
            input_shapes: NONE,
            stack: NONE,
            overload: NONE,
            cpu_memory: cpu,
            device_memory: dev,
            flops: 0,
            kernels: 0.0,
            parent: NONE,
            children: 0,
        });
    }
}

/// Device events' durations added to the operators with their `External id`.
fn link_kernels(events: &Events, list: &mut [FunctionEvent], external: &[Option<i64>]) {
    let mut frontend: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
    for (i, x) in external.iter().enumerate() {
        if let Some(x) = x.filter(|&x| x > 0) {
            frontend.entry(x).or_default().push(i);
        }
    }
    for (i, x) in external.iter().enumerate() {
        let Some(x) = x.filter(|&x| x < 0) else {
            continue;
        };
        let Some(ops) = frontend.get(&(-x - 1)) else {
            continue;
        };
        let dur = events.us(&list[i]);
        for &op in ops {
            list[op].kernels += dur;
        }
    }
}

/// `_populate_cpu_children`: on each thread, in (start, longer first) order, an event's parent
/// is the top of a stack of open events once those it does not fit inside are popped.
fn populate_children(list: &mut [FunctionEvent]) {
    let mut by_thread: Vec<u32> = (0..list.len() as u32)
        .filter(|&i| !list[i as usize].device)
        .collect();
    by_thread.sort_by_key(|&i| list[i as usize].thread);
    let mut stack: Vec<u32> = Vec::new();
    let mut thread = None;
    for i in by_thread {
        let (start, end, t) = {
            let e = &list[i as usize];
            (e.start, e.end, e.thread)
        };
        if thread != Some(t) {
            stack.clear();
            thread = Some(t);
        }
        while let Some(&p) = stack.last() {
            let parent_end = list[p as usize].end;
            if start >= parent_end || end > parent_end {
                stack.pop();
            } else {
                list[p as usize].children += 1;
                list[i as usize].parent = p;
                break;
            }
        }
        stack.push(i);
    }
}

/// `_remove_dup_nodes`: an only child with its parent's name is folded into the parent (which
/// takes its children and its kernels), pass after pass until none is left. A folded event
/// points at the parent it went into, and its children, whose parent torch sets to that parent,
/// follow the pointer; survivors keep their order and their parents are renumbered.
fn remove_dup_nodes(list: &mut Vec<FunctionEvent>) {
    let mut folded = vec![false; list.len()];
    let resolve = |list: &[FunctionEvent], folded: &[bool], mut p: u32| {
        while p != NONE && folded[p as usize] {
            p = list[p as usize].parent;
        }
        p
    };
    loop {
        let mut any = false;
        for i in 0..list.len() {
            if folded[i] {
                continue;
            }
            let p = resolve(list, &folded, list[i].parent);
            list[i].parent = p;
            if p == NONE {
                continue;
            }
            let pi = p as usize;
            if list[pi].key == list[i].key && list[pi].children == 1 {
                list[pi].children = list[i].children;
                list[pi].kernels = list[i].kernels;
                list[i].parent = p;
                folded[i] = true;
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    let mut new_index = vec![NONE; list.len()];
    let mut n = 0u32;
    for (i, f) in folded.iter().enumerate() {
        if !f {
            new_index[i] = n;
            n += 1;
        }
    }
    for i in 0..list.len() {
        let p = resolve(list, &folded, list[i].parent);
        list[i].parent = if p == NONE {
            NONE
        } else {
            new_index[p as usize]
        };
    }
    let mut i = 0;
    list.retain(|_| {
        let keep = !folded[i];
        i += 1;
        keep
    });
}

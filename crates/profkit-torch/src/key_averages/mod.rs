//! torch's `prof.key_averages(...).table(...)` from a saved trace: the events torch would have
//! made of the run (`events`), averaged over their keys as `EventList.key_averages` does (name,
//! device or host, `record_function` range or not, and with the groupings, input shapes and the
//! first N stack frames), and printed as `_build_table` prints them (`table`).
//!
//! What a trace does not say is taken from what it holds: memory columns when it was recorded
//! with `profile_memory` (the top-level flag, else `[memory]` instants), FLOPs with
//! `with_flops` (worked out from the shapes, as torch does, since Kineto does not write them),
//! device columns when it has device events or device properties.

pub(crate) mod events;
pub(crate) mod flops;
mod table;
pub use table::TableOptions;

use rustc_hash::FxHashMap;

use crate::trace::{Str, Trace};
use crate::{Error, Result};
use events::{Events, FunctionEvent, NONE, key_name};

/// An event's parent's position.
fn parent(e: &FunctionEvent) -> Option<usize> {
    (e.parent != NONE).then_some(e.parent as usize)
}

pub use table::TimeUnit;

/// What `key_averages` groups by besides the name.
#[derive(Clone, Debug, Default)]
pub struct Grouping {
    /// `group_by_input_shape=True`: the input shapes too.
    pub input_shape: bool,
    /// `group_by_stack_n=N`: the first N frames of the stack too (0: not).
    pub stack_n: usize,
    /// `group_by_overload_name=True`: the operator's overload too (`aten::add` `Tensor` apart
    /// from `aten::add` `Scalar`), as far as the trace names overloads: Kineto writes them
    /// (`aten::add.Tensor`) only when the run set `capture_overload_names`.
    pub overload_name: bool,
    /// `include_python_functions=True`: rows for the Python calls of `with_stack` traces too.
    pub python_functions: bool,
}

/// torch's `sort_by` keys (`cuda_`, `xpu_` and `privateuse1_` spellings mean `device_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SortKey {
    /// `cpu_time`: the average CPU time of a call.
    CpuTime,
    /// `cpu_time_total`.
    CpuTimeTotal,
    /// `self_cpu_time_total`.
    SelfCpuTimeTotal,
    /// `device_time` (`cuda_time`): the average device time of a call.
    DeviceTime,
    /// `device_time_total` (`cuda_time_total`).
    DeviceTimeTotal,
    /// `self_device_time_total` (`self_cuda_time_total`).
    SelfDeviceTimeTotal,
    /// `cpu_memory_usage`.
    CpuMemoryUsage,
    /// `self_cpu_memory_usage`.
    SelfCpuMemoryUsage,
    /// `device_memory_usage` (`cuda_memory_usage`).
    DeviceMemoryUsage,
    /// `self_device_memory_usage` (`self_cuda_memory_usage`).
    SelfDeviceMemoryUsage,
    /// `count`.
    Count,
    /// `flops`.
    Flops,
}

impl SortKey {
    /// Every key by torch's name for it.
    pub const NAMES: &[(&str, SortKey)] = &[
        ("cpu_time", SortKey::CpuTime),
        ("cpu_time_total", SortKey::CpuTimeTotal),
        ("self_cpu_time_total", SortKey::SelfCpuTimeTotal),
        ("device_time", SortKey::DeviceTime),
        ("device_time_total", SortKey::DeviceTimeTotal),
        ("self_device_time_total", SortKey::SelfDeviceTimeTotal),
        ("cpu_memory_usage", SortKey::CpuMemoryUsage),
        ("self_cpu_memory_usage", SortKey::SelfCpuMemoryUsage),
        ("device_memory_usage", SortKey::DeviceMemoryUsage),
        ("self_device_memory_usage", SortKey::SelfDeviceMemoryUsage),
        ("count", SortKey::Count),
        ("flops", SortKey::Flops),
    ];

    /// The key torch's `sort_by` names (`cuda_time_total` is `device_time_total`).
    pub fn from_name(name: &str) -> Result<SortKey> {
        let canonical = name
            .replace("cuda", "device")
            .replace("xpu", "device")
            .replace("privateuse1", "device");
        SortKey::NAMES
            .iter()
            .find(|(n, _)| *n == canonical)
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                let names: Vec<&str> = SortKey::NAMES.iter().map(|(n, _)| *n).collect();
                Error::Option(format!(
                    "unknown sort key {name:?}: torch's keys are {}",
                    names.join(", ")
                ))
            })
    }
}

/// One row: a `FunctionEventAvg`. Times are torch's: microseconds as doubles, summed in
/// torch's order, so that they print as torch prints them to the last digit.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The key's name (`aten::mm`, `ProfilerStep*`, a kernel's name).
    pub name: String,
    /// Whether the events are device activity (kernels, copies, device-side ranges).
    pub device: bool,
    /// Whether the events are `record_function` ranges.
    pub user_annotation: bool,
    /// The calls.
    pub count: u64,
    /// CPU total, microseconds.
    pub cpu_time_total_us: f64,
    /// Self CPU, microseconds.
    pub self_cpu_time_total_us: f64,
    /// Device total, microseconds (0 without device activity).
    pub device_time_total_us: f64,
    /// Self device time, microseconds.
    pub self_device_time_total_us: f64,
    /// CPU memory allocated (net), bytes.
    pub cpu_memory_usage: i64,
    /// Self CPU memory, bytes.
    pub self_cpu_memory_usage: i64,
    /// Device memory allocated (net), bytes.
    pub device_memory_usage: i64,
    /// Self device memory, bytes.
    pub self_device_memory_usage: i64,
    /// FLOPs, summed.
    pub flops: i64,
    /// The first event's input shapes as torch prints them (`[[4, 3], []]`), with the
    /// input-shape grouping.
    pub input_shapes: Option<String>,
    /// The first event's stack, its first N frames, with the stack grouping.
    pub stack: Vec<String>,
    /// The overload name, with the overload grouping ("" for the default overload or a trace
    /// without overload names).
    pub overload_name: Option<String>,
    /// Whether the first event has no parent (`cpu_parent is None`): the rows
    /// `top_level_events_only` keeps.
    pub top_level: bool,
}

impl Row {
    /// CPU time avg, microseconds.
    pub fn cpu_time_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.cpu_time_total_us / self.count as f64
        }
    }

    /// Device time avg, microseconds.
    pub fn device_time_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.device_time_total_us / self.count as f64
        }
    }

    fn sort_value(&self, key: SortKey) -> f64 {
        match key {
            SortKey::CpuTime => self.cpu_time_us(),
            SortKey::CpuTimeTotal => self.cpu_time_total_us,
            SortKey::SelfCpuTimeTotal => self.self_cpu_time_total_us,
            SortKey::DeviceTime => self.device_time_us(),
            SortKey::DeviceTimeTotal => self.device_time_total_us,
            SortKey::SelfDeviceTimeTotal => self.self_device_time_total_us,
            SortKey::CpuMemoryUsage => self.cpu_memory_usage as f64,
            SortKey::SelfCpuMemoryUsage => self.self_cpu_memory_usage as f64,
            SortKey::DeviceMemoryUsage => self.device_memory_usage as f64,
            SortKey::SelfDeviceMemoryUsage => self.self_device_memory_usage as f64,
            SortKey::Count => self.count as f64,
            SortKey::Flops => self.flops as f64,
        }
    }
}

/// `key_averages`' key: name, device or not, range or not, overload, shapes, stack frames.
type GroupKey = (Str, bool, bool, Option<Str>, Option<Str>, Vec<String>);

/// torch's averaged events of a trace, in `key_averages`' order (each key where its first event
/// comes), with what the table needs to know about the trace.
#[derive(Clone, Debug)]
pub struct KeyAverages {
    /// The rows.
    pub rows: Vec<Row>,
    /// Whether the run profiled a device (`use_device` is `cuda`): device time is counted.
    pub use_device: bool,
    /// Whether memory columns are printed (`profile_memory`).
    pub profile_memory: bool,
    /// Whether the FLOPs column may be printed (`with_flops`).
    pub with_flops: bool,
    /// What the trace does not hold that the grouping or sort asks for, one sentence each.
    pub notes: Vec<String>,
}

impl KeyAverages {
    /// The averages of `trace`'s events grouped as `grouping` says.
    pub fn new(trace: &Trace, grouping: &Grouping) -> KeyAverages {
        let with_flops = trace
            .meta
            .with_flops
            .unwrap_or_else(|| trace.events.iter().any(|e| e.flops.is_some()));
        let profile_memory = trace.meta.profile_memory.unwrap_or_else(|| {
            trace
                .events
                .iter()
                .any(|e| e.instant && trace.str(e.name) == "[memory]")
        });
        let events = Events::build(trace, with_flops);
        let use_device = events.use_device;
        let list = &events.list;
        // Sums over each event's children, in the children's order as torch sums them:
        // children come after their parent, in order.
        let n = list.len();
        let mut child_cpu = vec![0f64; n];
        let mut child_memory = vec![(0i64, 0i64); n];
        let mut depth = vec![0u32; n];
        for (i, e) in list.iter().enumerate() {
            if let Some(p) = parent(e) {
                child_cpu[p] += events.us(e);
                child_memory[p].0 = child_memory[p].0.saturating_add(e.cpu_memory);
                child_memory[p].1 = child_memory[p].1.saturating_add(e.device_memory);
                depth[i] = depth[p] + 1;
            }
        }
        // Device totals (an event's kernels and its children's totals), deepest first, each
        // level in order.
        let mut device_total = vec![0f64; n];
        let mut child_device = vec![0f64; n];
        if use_device {
            let mut by_depth: Vec<u32> = (0..n as u32).collect();
            by_depth.sort_by_key(|&i| std::cmp::Reverse(depth[i as usize]));
            for i in by_depth {
                let i = i as usize;
                let e = &list[i];
                device_total[i] = if e.device {
                    events.us(e)
                } else {
                    e.kernels + child_device[i]
                };
                if let Some(p) = parent(e) {
                    child_device[p] += device_total[i];
                }
            }
        }
        drop(depth);
        let mut index: FxHashMap<GroupKey, usize> = FxHashMap::default();
        let mut rows: Vec<Row> = Vec::new();
        let mut notes = Vec::new();
        let has_shapes = trace.events.iter().any(|e| e.input_shapes.is_some());
        if grouping.input_shape && !has_shapes {
            notes.push(
                "the trace has no input shapes (it was not recorded with record_shapes=True): rows are not split by shape".to_owned(),
            );
        }
        let has_stacks = trace.events.iter().any(|e| e.stack.is_some());
        if grouping.stack_n > 0 && !has_stacks {
            notes.push(
                "the trace has no operator stacks (torch records them for TorchScript only, as `Call stack`): rows are not split by stack".to_owned(),
            );
        }
        let has_overloads = trace.events.iter().any(|e| e.overload.is_some());
        if grouping.overload_name && !has_overloads {
            notes.push(
                "the trace names no overloads (Kineto writes them only with capture_overload_names=True): rows are not split by overload".to_owned(),
            );
        }
        for (i, e) in list.iter().enumerate() {
            if e.python && !grouping.python_functions {
                continue;
            }
            let stack: Vec<String> = if grouping.stack_n > 0 {
                stack_frames(trace, (e.stack != NONE).then_some(e.stack))
                    .into_iter()
                    .take(grouping.stack_n)
                    .collect()
            } else {
                Vec::new()
            };
            let shapes = if grouping.input_shape && e.input_shapes != NONE {
                Some(e.input_shapes)
            } else {
                None
            };
            let overload = grouping.overload_name.then_some(e.overload);
            let key = (
                e.key,
                e.device,
                e.user_annotation,
                overload,
                shapes,
                stack.clone(),
            );
            let r = *index.entry(key).or_insert_with(|| {
                rows.push(Row {
                    name: key_name(trace, e.key).to_owned(),
                    device: e.device,
                    user_annotation: e.user_annotation,
                    count: 0,
                    cpu_time_total_us: 0.0,
                    self_cpu_time_total_us: 0.0,
                    device_time_total_us: 0.0,
                    self_device_time_total_us: 0.0,
                    cpu_memory_usage: 0,
                    self_cpu_memory_usage: 0,
                    device_memory_usage: 0,
                    self_device_memory_usage: 0,
                    flops: 0,
                    input_shapes: grouping.input_shape.then(|| match e.input_shapes {
                        NONE => "[]".to_owned(),
                        s => trace.str(s).to_owned(),
                    }),
                    stack,
                    overload_name: overload.map(|o| match o {
                        NONE => String::new(),
                        o => trace.str(o).to_owned(),
                    }),
                    top_level: e.parent == NONE,
                });
                rows.len() - 1
            });
            let row = &mut rows[r];
            row.count += 1;
            row.flops = row.flops.saturating_add(e.flops);
            if e.device {
                row.device_time_total_us += device_total[i];
                row.self_device_time_total_us += device_total[i];
            } else {
                let total = events.us(e);
                row.cpu_time_total_us += total;
                row.self_cpu_time_total_us += total - child_cpu[i];
                row.device_time_total_us += device_total[i];
                row.self_device_time_total_us += device_total[i] - child_device[i];
                // Saturating: Python's integers do not overflow, and a hostile trace must not
                // make these panic.
                let self_cpu = e.cpu_memory.saturating_sub(child_memory[i].0);
                let self_device = e.device_memory.saturating_sub(child_memory[i].1);
                row.cpu_memory_usage = row.cpu_memory_usage.saturating_add(e.cpu_memory);
                row.self_cpu_memory_usage = row.self_cpu_memory_usage.saturating_add(self_cpu);
                row.device_memory_usage = row.device_memory_usage.saturating_add(e.device_memory);
                row.self_device_memory_usage =
                    row.self_device_memory_usage.saturating_add(self_device);
            }
        }
        KeyAverages {
            rows,
            use_device,
            profile_memory,
            with_flops,
            notes,
        }
    }

    /// What the trace does not hold for `options`, one sentence each: the grouping's notes
    /// ([`KeyAverages::notes`]) and a sort key whose values the trace does not carry (torch
    /// then sorts by zeros, keeping the rows' order).
    pub fn notes_for(&self, options: &TableOptions) -> Vec<String> {
        let mut notes = self.notes.clone();
        let missing =
            match options.sort_by {
                Some(SortKey::Flops) if !self.with_flops => {
                    Some("FLOPs (it was not recorded with with_flops=True)")
                }
                Some(
                    SortKey::CpuMemoryUsage
                    | SortKey::SelfCpuMemoryUsage
                    | SortKey::DeviceMemoryUsage
                    | SortKey::SelfDeviceMemoryUsage,
                ) if !self.profile_memory => {
                    Some("memory (it was not recorded with profile_memory=True)")
                }
                Some(
                    SortKey::DeviceTime | SortKey::DeviceTimeTotal | SortKey::SelfDeviceTimeTotal,
                ) if !self.use_device => Some("device time (it has no device activity)"),
                _ => None,
            };
        if let Some(what) = missing {
            notes.push(format!(
                "the trace has no {what}: every row sorts as 0 and keeps its place"
            ));
        }
        notes
    }

    /// The rows sorted as `table(sort_by=key)` sorts them: descending, ties in their order.
    pub fn sorted(&self, key: Option<SortKey>) -> Vec<&Row> {
        let mut rows: Vec<&Row> = self.rows.iter().collect();
        if let Some(key) = key {
            rows.sort_by(|a, b| {
                b.sort_value(key)
                    .partial_cmp(&a.sort_value(key))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        rows
    }
}

/// torch's `_filter_stack_entry`: frames of autograd's and the test harness's own plumbing are
/// left out of stacks.
fn stack_frames(trace: &Trace, stack: Option<Str>) -> Vec<String> {
    const FILTERED: &[(&str, &str)] = &[
        ("autograd/__init__", "_make_grads"),
        ("autograd/__init__", "backward"),
        ("torch/tensor", "backward"),
        ("_internal/common_utils", "prof_callable"),
        ("_internal/common_utils", "prof_func_call"),
        ("_internal/common_utils", "prof_meth_call"),
    ];
    let Some(s) = stack else { return Vec::new() };
    trace
        .str(s)
        .split(';')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .filter(|f| !FILTERED.iter().any(|(a, b)| f.contains(a) && f.contains(b)))
        .map(str::to_owned)
        .collect()
}

impl KeyAverages {
    /// The rows the table prints (sorted, limited and with `top_level_events_only` kept to the
    /// top-level rows as `options` say) as data, with the totals (of every row, as the table's)
    /// and notes: what `profkit report --style torch --json` writes.
    pub fn json(&self, options: &TableOptions) -> serde_json::Value {
        let limit = usize::try_from(options.row_limit).unwrap_or(usize::MAX);
        let rows = self.sorted(options.sort_by);
        let self_cpu: f64 = rows.iter().map(|r| r.self_cpu_time_total_us).sum();
        let self_device: f64 = rows
            .iter()
            .filter(|r| r.device && !r.user_annotation)
            .map(|r| r.self_device_time_total_us)
            .sum();
        let shown: Vec<&&Row> = rows
            .iter()
            .filter(|r| r.top_level || !options.top_level_events_only)
            .collect();
        let listed: Vec<serde_json::Value> = shown
            .iter()
            .take(limit)
            .map(|r| {
                let mut row = serde_json::json!({
                    "name": r.name,
                    "device": r.device,
                    "user_annotation": r.user_annotation,
                    "count": r.count,
                    "self_cpu_time_total_us": r.self_cpu_time_total_us,
                    "cpu_time_total_us": r.cpu_time_total_us,
                    "cpu_time_avg_us": r.cpu_time_us(),
                    "self_device_time_total_us": r.self_device_time_total_us,
                    "device_time_total_us": r.device_time_total_us,
                    "device_time_avg_us": r.device_time_us(),
                    "cpu_memory_usage": r.cpu_memory_usage,
                    "self_cpu_memory_usage": r.self_cpu_memory_usage,
                    "device_memory_usage": r.device_memory_usage,
                    "self_device_memory_usage": r.self_device_memory_usage,
                    "flops": r.flops,
                    "top_level": r.top_level,
                });
                if let Some(map) = row.as_object_mut() {
                    if let Some(shapes) = &r.input_shapes {
                        map.insert("input_shapes".into(), shapes.clone().into());
                    }
                    if let Some(overload) = &r.overload_name {
                        map.insert("overload_name".into(), overload.clone().into());
                    }
                    if !r.stack.is_empty() {
                        map.insert("stack".into(), r.stack.clone().into());
                    }
                }
                row
            })
            .collect();
        serde_json::json!({
            "style": "torch",
            "rows": listed,
            "rows_not_listed": shown.len().saturating_sub(limit),
            "self_cpu_time_total_us": self_cpu,
            "self_device_time_total_us": self_device,
            "use_device": self.use_device,
            "profile_memory": self.profile_memory,
            "with_flops": self.with_flops,
            "notes": self.notes_for(options),
        })
    }
}

//! Paddle's legacy profiling report, layout for layout.
//!
//! What `paddle.base.core.disable_profiler(key, path)` prints, rebuilt from a [`Recording`]:
//!
//! - a header block (`Place`, `Time unit: ms`, `Sorted by ...`);
//! - with two or more threads, first a section that merges them (`Note! This Report merge all
//!   thread info into one.`): their event lists are concatenated, newest thread first, and paired
//!   as one list;
//! - then the per-thread section: one table per thread, newest thread (highest index) first, rows
//!   named `thread<N>::<name>`;
//! - the Overhead Summary and GpuMemCpy Summary blocks in a section made of one list (so not in
//!   the per-thread section of a multi-thread run);
//! - the Event Summary table: Calls, Total, Min., Max., Ave., Ratio. (in All mode also
//!   `CPU Time (Ratio)` and `GPU Time (Ratio)`), cells left-aligned, 12 wide (24 for the two
//!   ratio cells), the name column as wide as the longest name shown plus 8; numbers as C++'s
//!   `ostream` prints a double (6 significant digits);
//! - rows whose path is `<another row>/<name>` indented two spaces per level under that row,
//!   showing `<name>`; top-level rows in order of their first pop or sorted, children likewise
//!   among siblings (with libstdc++'s `std::sort`, so ties fall as Paddle's do);
//! - the Memory Profiling Report block.
//!
//! A row's total is the sum of its calls' times; a thread's total is the sum of its top-level
//! rows, and every row's ratio is its total over that. Rows deeper than
//! [`ReportOptions::max_depth`] are left out (counted in [`Report::hidden_rows`]) and the name
//! column is at most [`MAX_NAME_WIDTH`] wide, so that a hostile file cannot make the output grow
//! with the square of its size; Paddle has neither limit.

mod memory;
mod text;

use std::collections::HashMap;

use serde::Serialize;

use crate::event::{DeviceTime, EventKind, ProfilerState, Recording};
use crate::span::{PathId, Paths, Spans, Warning, pair};

/// The widest name column the text report pads to.
pub const MAX_NAME_WIDTH: usize = 1024;

/// The default [`ReportOptions::max_depth`].
pub const DEFAULT_MAX_DEPTH: usize = 100;

/// The deepest [`ReportOptions::max_depth`] honoured: rows are built and printed recursively, one
/// stack frame per level.
pub const MAX_DEPTH_LIMIT: usize = 1000;

/// How rows are ordered among siblings (Paddle's `EventSortingKey`), always descending.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    /// The order in which each row's first call ended (`kDefault`).
    #[default]
    Default,
    /// Number of calls.
    Calls,
    /// Total time.
    Total,
    /// Longest call.
    Max,
    /// Shortest call.
    Min,
    /// Average time.
    Ave,
}

impl SortKey {
    /// What the header's `Sorted by ...` line says.
    pub fn domain(self) -> &'static str {
        match self {
            SortKey::Default => "event first end time",
            SortKey::Calls => "number of calls",
            SortKey::Total => "total time",
            SortKey::Max => "maximum time",
            SortKey::Min => "minimum time",
            SortKey::Ave => "average time",
        }
    }

    fn less(self) -> impl Fn(&Item, &Item) -> bool {
        move |a: &Item, b: &Item| match self {
            SortKey::Default => false,
            SortKey::Calls => a.calls > b.calls,
            SortKey::Total => a.total > b.total,
            SortKey::Max => a.max > b.max,
            SortKey::Min => a.min > b.min,
            SortKey::Ave => a.ave > b.ave,
        }
    }
}

/// Which time a row's Total, Min., Max. and Ave. measure (Paddle's profiler state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum Place {
    /// CPU time.
    #[default]
    #[serde(rename = "CPU")]
    Cpu,
    /// Device time (0 for ranges without device timestamps).
    #[serde(rename = "CUDA")]
    Cuda,
    /// CPU plus device time, with both shown in their own columns.
    #[serde(rename = "All")]
    All,
}

impl Place {
    /// The header's `Place:` value.
    pub fn name(self) -> &'static str {
        match self {
            Place::Cpu => "CPU",
            Place::Cuda => "CUDA",
            Place::All => "All",
        }
    }

    /// The place Paddle reports for a profiler state (CPU for a disabled or unknown one).
    pub fn from_state(state: Option<ProfilerState>) -> Place {
        match state {
            Some(ProfilerState::Device) => Place::Cuda,
            Some(ProfilerState::All) => Place::All,
            _ => Place::Cpu,
        }
    }
}

/// Settings of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportOptions {
    /// Row order among siblings.
    pub sort: SortKey,
    /// What the times measure; `None` takes it from [`Recording::state`] (CPU when unknown).
    pub place: Option<Place>,
    /// Rows nested deeper than this many levels are left out (at most [`MAX_DEPTH_LIMIT`]).
    pub max_depth: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            sort: SortKey::Default,
            place: None,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// One row of an Event Summary table, with its children.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The row's name as Paddle builds it: the path, prefixed with `thread<N>::` in the
    /// per-thread section.
    pub name: String,
    /// What the report shows (the part after the last `/`).
    pub display: String,
    /// The `parent/child` path.
    pub path: String,
    /// The thread, in the per-thread section.
    pub thread: Option<u32>,
    /// Nesting level (0 for a top-level row).
    pub depth: usize,
    /// Number of calls.
    pub calls: u64,
    /// Total time, ms.
    pub total: f64,
    /// CPU time, ms.
    pub cpu_time: f64,
    /// Device time, ms.
    pub gpu_time: f64,
    /// Shortest call, ms.
    pub min: f64,
    /// Longest call, ms.
    pub max: f64,
    /// Average call, ms.
    pub ave: f64,
    /// Total over the thread's total.
    pub ratio: f64,
    /// The rows nested under this one, in report order.
    pub children: Vec<Row>,
}

/// The Overhead Summary and GpuMemCpy Summary figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Overhead {
    /// `Total time`: the sum of the top-level rows.
    pub elapsed_time: f64,
    /// The time the ratios divide: top-level rows plus children of `ParallelExecutor::Run`.
    pub accumulated_time: f64,
    /// Rows named `...compute` (not `compute/...`) nested under others.
    pub compute_time: f64,
    /// Accumulated minus compute time.
    pub framework_time: f64,
    /// Compute over accumulated time (a C++ `float`, as Paddle keeps it).
    pub compute_ratio: f32,
    /// One minus the compute ratio.
    pub framework_ratio: f32,
    /// Rows named `GpuMemcpyAsync` or `GpuMemcpySync`, together.
    pub memcpy: MemcpyLine,
    /// Rows named `GpuMemcpyAsync`.
    pub memcpy_async: MemcpyLine,
    /// Rows named `GpuMemcpySync`.
    pub memcpy_sync: MemcpyLine,
}

/// One line of the GpuMemCpy Summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MemcpyLine {
    /// Calls.
    pub calls: u64,
    /// Total time, ms.
    pub total: f64,
    /// Sum of the rows' ratios.
    pub ratio: f64,
}

/// One Event Summary table: a thread's rows, or all threads' in the merged section.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// The thread, in the per-thread section.
    pub thread: Option<u32>,
    /// The sum of the top-level rows, ms (what the ratios divide).
    pub total: f64,
    /// The top-level rows in report order, children nested.
    pub rows: Vec<Row>,
}

/// A section: one header and Event Summary, either merged or per thread.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Section {
    /// Whether this is the merged section.
    pub merged: bool,
    /// The Overhead and GpuMemCpy summaries, when the section is made of one list.
    pub overhead: Option<Overhead>,
    /// The width of the name column.
    pub name_width: usize,
    /// The tables, newest thread first.
    pub tables: Vec<Table>,
}

/// One row of the Memory Profiling Report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryRow {
    /// The place, as Paddle prints it (`Place(cpu)`, `Place(gpu:0)`).
    pub place: String,
    /// The range the memory was allocated or freed in.
    pub annotation: String,
    /// Allocations.
    pub alloc_calls: u64,
    /// Bytes allocated, in MiB.
    pub alloc_mb: f64,
    /// Frees.
    pub free_calls: u64,
    /// Bytes freed, in MiB.
    pub free_mb: f64,
}

/// A whole report (see the module documentation); [`Report::text`] prints it as Paddle does.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// What the times measure.
    pub place: Place,
    /// Row order.
    pub sorted_by: SortKey,
    /// The header's sort description.
    pub sorted_domain: &'static str,
    /// The merged section (with two or more threads), then the per-thread section.
    pub sections: Vec<Section>,
    /// The memory rows.
    pub memory: Vec<MemoryRow>,
    /// Events left out of the report because pairing could not use them.
    pub warnings: Vec<Warning>,
    /// Events the recorder dropped at its memory cap.
    pub dropped: u64,
    /// Rows left out for being nested deeper than the limit.
    pub hidden_rows: usize,
}

/// An event named by its path, as the report pairs it.
#[derive(Clone, Copy)]
struct Named {
    kind: EventKind,
    path: PathId,
    thread: u32,
    cpu_ns: u64,
    device: Option<DeviceTime>,
}

/// Paddle's `SetEvent` pairing: a pop closes the most recent open push with the same name (here
/// the same path), searching from the top. Returns the pairs in pop order.
fn pairs_by_path(events: &[Named]) -> Vec<(Named, Named)> {
    let mut pushed: Vec<Option<Named>> = Vec::new();
    let mut by_path: HashMap<PathId, Vec<usize>> = HashMap::new();
    let mut pairs = Vec::new();
    for event in events {
        match event.kind {
            EventKind::Mark => {}
            EventKind::PushRange => {
                by_path.entry(event.path).or_default().push(pushed.len());
                pushed.push(Some(*event));
            }
            EventKind::PopRange => {
                if let Some(push) = by_path
                    .get_mut(&event.path)
                    .and_then(Vec::pop)
                    .and_then(|slot| pushed.get_mut(slot))
                    .and_then(Option::take)
                {
                    pairs.push((push, *event));
                }
            }
        }
    }
    pairs
}

/// A row while it is being accumulated (Paddle's `EventItem`).
#[derive(Clone, Debug)]
struct Item {
    thread: Option<u32>,
    path: PathId,
    calls: u64,
    total: f64,
    min: f64,
    max: f64,
    ave: f64,
    cpu_time: f64,
    gpu_time: f64,
    ratio: f64,
}

type Key = (Option<u32>, PathId);

/// A thread's index, its events named by path, and its pairs in pop order.
type ThreadList = (u32, Vec<Named>, Vec<(Named, Named)>);

/// The state of one section while its tables are analysed.
struct Analysis<'p> {
    paths: &'p Paths,
    place: Place,
    sort: SortKey,
    merged: bool,
    max_name_width: usize,
    /// Children by the key of their parent, over all tables of the section, in insertion order.
    child_map: HashMap<Key, Vec<Item>>,
    tables: Vec<(Option<u32>, f64, Vec<Item>)>,
    overhead: Option<Overhead>,
}

impl Analysis<'_> {
    fn key_text(&self, key: Key) -> String {
        match key.0 {
            Some(t) => format!("thread{t}::{}", self.paths.text(key.1)),
            None => self.paths.text(key.1),
        }
    }

    /// The length of what a row shows, as Paddle measures it for the name column.
    fn print_len(&self, key: Key) -> usize {
        if self.paths.parent(key.1).is_some() {
            self.paths.last(key.1).len()
        } else {
            // `thread<N>::`
            let prefix = key
                .0
                .map_or(0, |t| 8 + t.checked_ilog10().map_or(1, |d| d as usize + 1));
            prefix + self.paths.last(key.1).len()
        }
    }

    /// Paddle's `AnalyzeEvent` for one list of paired events (a thread's, or all of them merged),
    /// the pairs in the order of their pops.
    fn analyze(&mut self, pairs: &[(Named, Named)], table_thread: Option<u32>, single_list: bool) {
        let mut items: Vec<Item> = Vec::new();
        let mut index: HashMap<Key, usize> = HashMap::new();
        for (push, pop) in pairs {
            let cpu_time = crate::event::elapsed_ms(push.cpu_ns, pop.cpu_ns);
            let gpu_time = match (push.device, pop.device) {
                (Some(a), Some(b)) if a.device == b.device => crate::event::elapsed_ms(a.ns, b.ns),
                _ => 0.0,
            };
            let time = match self.place {
                Place::Cpu => cpu_time,
                Place::Cuda => gpu_time,
                Place::All => gpu_time + cpu_time,
            };
            let key = (
                if self.merged { None } else { Some(push.thread) },
                push.path,
            );
            self.max_name_width = self.max_name_width.max(self.print_len(key));
            match index.get(&key) {
                Some(&i) => {
                    let item = &mut items[i];
                    item.calls += 1;
                    item.total += time;
                    item.min = time.min(item.min);
                    item.max = time.max(item.max);
                    item.gpu_time += gpu_time;
                    item.cpu_time += cpu_time;
                }
                None => {
                    index.insert(key, items.len());
                    items.push(Item {
                        thread: key.0,
                        path: key.1,
                        calls: 1,
                        total: time,
                        min: time,
                        max: time,
                        ave: time,
                        cpu_time,
                        gpu_time,
                        ratio: 0.0,
                    });
                }
            }
        }

        // A row is the child of the row whose name is its name up to the last `/`.
        let mut is_child = vec![false; items.len()];
        let mut children: Vec<(Key, usize)> = Vec::new();
        for (k, item) in items.iter().enumerate() {
            if let Some(parent) = self.paths.parent(item.path) {
                let father = (item.thread, parent);
                if index.contains_key(&father) {
                    is_child[k] = true;
                    children.push((father, k));
                }
            }
        }
        let mut total = 0.0;
        for (item, child) in items.iter().zip(&is_child) {
            if !child {
                total += item.total;
            }
        }
        for item in &mut items {
            item.ave = item.total / item.calls as f64;
            // No time at all (`--place cuda` of a profile without device time): Paddle divides
            // zero by zero and prints `-nan`; a ratio of nothing is 0 here.
            item.ratio = if total > 0.0 { item.total / total } else { 0.0 };
        }
        if single_list {
            self.overhead = Some(self.overhead(&items, &is_child, &children, total));
        }
        let mut main: Vec<Item> = items
            .iter()
            .zip(&is_child)
            .filter(|(_, child)| !**child)
            .map(|(item, _)| item.clone())
            .collect();
        if self.sort != SortKey::Default {
            crate::report::stdsort::sort(&mut main, &self.sort.less());
        }
        for (father, k) in children {
            self.child_map
                .entry(father)
                .or_default()
                .push(items[k].clone());
        }
        self.tables.push((table_thread, total, main));
    }

    /// Paddle's `ComputeOverhead`, over the table's top-level rows and then its children in the
    /// order of Paddle's `std::multimap` (by the parent's name).
    fn overhead(
        &self,
        items: &[Item],
        is_child: &[bool],
        children: &[(Key, usize)],
        total: f64,
    ) -> Overhead {
        let mut o = Overhead {
            elapsed_time: total,
            ..Overhead::default()
        };
        // What Paddle asks of the names (substrings of the full text), answered per path without
        // building the text, so that deep nesting costs time linear in the paths.
        let flags = NameFlags::new(self.paths);
        let add = |o: &mut Overhead, item: &Item| {
            let line = if flags.get(item.path, NameFlags::ASYNC) {
                &mut o.memcpy_async
            } else if flags.get(item.path, NameFlags::SYNC) {
                &mut o.memcpy_sync
            } else {
                return;
            };
            line.calls += item.calls;
            line.total += item.total;
            line.ratio += item.ratio;
        };
        for (item, child) in items.iter().zip(is_child) {
            if !child {
                o.accumulated_time += item.total;
                add(&mut o, item);
            }
        }
        // Paddle sums the children in the order of its multimap, by the parent's name (which
        // matters only to the last bits of the sums); past a depth where building the names
        // would cost too much, in the order they were found.
        let mut ordered: Vec<(String, usize, Key)> = Vec::with_capacity(children.len());
        let shallow = children
            .iter()
            .all(|&(father, _)| self.paths.depth(father.1) < 64);
        for &(father, k) in children {
            let text = if shallow {
                self.key_text(father)
            } else {
                String::new()
            };
            ordered.push((text, k, father));
        }
        ordered.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, k, father) in ordered {
            let item = &items[k];
            if father.0.is_none()
                && self.paths.parent(father.1).is_none()
                && self.paths.last(father.1) == "ParallelExecutor::Run"
            {
                o.accumulated_time += item.total;
            }
            if flags.get(item.path, NameFlags::COMPUTE)
                && !flags.get(item.path, NameFlags::COMPUTE_SLASH)
            {
                o.compute_time += item.total;
            }
            add(&mut o, item);
        }
        o.framework_time = o.accumulated_time - o.compute_time;
        // As for the rows' ratios: no time gives ratios of 0, not Paddle's `-nan`.
        if o.accumulated_time > 0.0 {
            o.compute_ratio = (o.compute_time / o.accumulated_time) as f32;
            o.framework_ratio = 1.0 - o.compute_ratio;
        }
        o.memcpy = MemcpyLine {
            calls: o.memcpy_async.calls + o.memcpy_sync.calls,
            total: o.memcpy_async.total + o.memcpy_sync.total,
            ratio: o.memcpy_async.ratio + o.memcpy_sync.ratio,
        };
        o
    }

    /// Turns the analysed tables into rows, children looked up by name and sorted, as Paddle's
    /// `PrintProfiler` walks them.
    fn into_section(self, max_depth: usize, hidden: &mut usize) -> Section {
        let mut tables = Vec::new();
        for (thread, total, items) in &self.tables {
            let rows = items
                .iter()
                .map(|item| self.row(item, 0, max_depth, hidden))
                .collect();
            tables.push(Table {
                thread: *thread,
                total: *total,
                rows,
            });
        }
        Section {
            merged: self.merged,
            overhead: self.overhead,
            name_width: (self.max_name_width + 8).min(MAX_NAME_WIDTH),
            tables,
        }
    }

    fn row(&self, item: &Item, depth: usize, max_depth: usize, hidden: &mut usize) -> Row {
        let key = (item.thread, item.path);
        let name = self.key_text(key);
        let display = match name.rfind('/') {
            Some(pos) => name[pos + 1..].to_owned(),
            None => name.clone(),
        };
        let mut children = Vec::new();
        if let Some(list) = self.child_map.get(&key) {
            if depth >= max_depth {
                *hidden += self.count(list);
            } else {
                let mut list = list.clone();
                if self.sort != SortKey::Default {
                    crate::report::stdsort::sort(&mut list, &self.sort.less());
                }
                children = list
                    .iter()
                    .map(|child| self.row(child, depth + 1, max_depth, hidden))
                    .collect();
            }
        }
        Row {
            name,
            display,
            path: self.paths.text(item.path),
            thread: item.thread,
            depth,
            calls: item.calls,
            total: item.total,
            cpu_time: item.cpu_time,
            gpu_time: item.gpu_time,
            min: item.min,
            max: item.max,
            ave: item.ave,
            ratio: item.ratio,
            children,
        }
    }

    /// Rows under (and including) `list`, counted without recursion.
    fn count(&self, list: &[Item]) -> usize {
        let mut stack: Vec<Key> = list.iter().map(|i| (i.thread, i.path)).collect();
        let mut n = 0;
        while let Some(key) = stack.pop() {
            n += 1;
            if let Some(children) = self.child_map.get(&key) {
                stack.extend(children.iter().map(|i| (i.thread, i.path)));
            }
        }
        n
    }
}

/// Which of the substrings Paddle's overhead looks for each path's full name contains. None of
/// them has a `/` or occurs in a `thread<N>::` prefix, so they are properties of the components.
struct NameFlags(Vec<u8>);

impl NameFlags {
    /// `compute` in any component.
    const COMPUTE: u8 = 1;
    /// `compute/`: a component other than the last ends with `compute`.
    const COMPUTE_SLASH: u8 = 2;
    /// `GpuMemcpyAsync` in any component.
    const ASYNC: u8 = 4;
    /// `GpuMemcpySync` in any component.
    const SYNC: u8 = 8;

    fn new(paths: &Paths) -> NameFlags {
        // A parent is interned before its children, so one pass in id order sees it first.
        let mut flags: Vec<u8> = Vec::with_capacity(paths.len());
        for index in 0..paths.len() {
            let id = PathId::from_index(index);
            let last = paths.last(id);
            let mut f = 0;
            if last.contains("compute") {
                f |= Self::COMPUTE;
            }
            if last.contains("GpuMemcpyAsync") {
                f |= Self::ASYNC;
            }
            if last.contains("GpuMemcpySync") {
                f |= Self::SYNC;
            }
            if let Some(parent) = paths.parent(id) {
                let inherited = flags.get(parent.index()).copied().unwrap_or(0);
                f |= inherited;
                if paths.last(parent).ends_with("compute") {
                    f |= Self::COMPUTE_SLASH;
                }
            }
            flags.push(f);
        }
        NameFlags(flags)
    }

    fn get(&self, path: PathId, flag: u8) -> bool {
        self.0.get(path.index()).is_some_and(|f| f & flag != 0)
    }
}

impl Report {
    /// Pairs the recording's events and builds the report.
    pub fn new(recording: &Recording, options: ReportOptions) -> Report {
        let spans = pair(&recording.threads);
        Report::from_spans(recording, &spans, options)
    }

    /// Builds the report from a recording and its pairing (`spans` must be `pair(&recording.threads)`).
    pub fn from_spans(recording: &Recording, spans: &Spans, options: ReportOptions) -> Report {
        let place = options
            .place
            .unwrap_or_else(|| Place::from_state(recording.state));
        // Newest thread (highest index) first; ties keep the recording's order.
        let mut order: Vec<usize> = (0..recording.threads.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(recording.threads[i].thread));
        let named = |thread: &crate::event::ThreadEvents, paths: &[PathId], index: usize| {
            let e = thread.events.get(index)?;
            Some(Named {
                kind: e.kind,
                path: *paths.get(index)?,
                thread: e.thread,
                cpu_ns: e.cpu_ns,
                device: e.device,
            })
        };
        // Per thread: every event by path, and the pairs pairing made, in pop order.
        let lists: Vec<ThreadList> = order
            .iter()
            .filter_map(|&i| {
                let thread = recording.threads.get(i)?;
                let paired = spans.threads.get(i)?;
                let events = (0..thread.events.len())
                    .filter_map(|k| named(thread, &paired.event_paths, k))
                    .collect();
                let pairs = paired
                    .spans
                    .iter()
                    .filter_map(|s| {
                        Some((
                            named(thread, &paired.event_paths, s.push_index)?,
                            named(thread, &paired.event_paths, s.pop_index)?,
                        ))
                    })
                    .collect();
                Some((thread.thread, events, pairs))
            })
            .collect();

        let max_depth = options.max_depth.min(MAX_DEPTH_LIMIT);
        let mut hidden = 0;
        let mut sections = Vec::new();
        let new_analysis = |merged| Analysis {
            paths: &spans.paths,
            place,
            sort: options.sort,
            merged,
            max_name_width: 0,
            child_map: HashMap::new(),
            tables: Vec::new(),
            overhead: None,
        };
        if lists.len() >= 2 {
            // Paddle pairs the threads' lists concatenated, newest thread first.
            let mut merged = new_analysis(true);
            let all: Vec<Named> = lists
                .iter()
                .flat_map(|(_, events, _)| events.iter().copied())
                .collect();
            merged.analyze(&pairs_by_path(&all), None, true);
            sections.push(merged.into_section(max_depth, &mut hidden));
        }
        let mut per_thread = new_analysis(false);
        let single = lists.len() == 1;
        for (thread, _, pairs) in &lists {
            per_thread.analyze(pairs, Some(*thread), single);
        }
        sections.push(per_thread.into_section(max_depth, &mut hidden));

        Report {
            place,
            sorted_by: options.sort,
            sorted_domain: options.sort.domain(),
            sections,
            memory: memory::memory_rows(&recording.memory),
            warnings: spans.warnings().cloned().collect(),
            dropped: recording.dropped,
            hidden_rows: hidden,
        }
    }
}

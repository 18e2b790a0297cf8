//! The tables `paddle.profiler.Profiler.summary()` prints (Paddle 3.x), layout for layout.
//!
//! The summary is computed over trees of host nodes ([`Forest`]): built exactly from Paddle's node
//! trees ([`Forest::from_node_trees`]), or from any [`Recording`](crate::Recording) ([`Forest::from_recording`]:
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
//!
//! ```
//! use profkit_events::{Event, Recording, ThreadEvents};
//! use profkit_events::report::summary::{Forest, Summary, SummaryOptions};
//! let mut thread = ThreadEvents::new(0);
//! thread.events = vec![
//!     Event::push("ProfileStep#0", 0, 0).with_category("ProfileStep"),
//!     Event::push("matmul", 0, 1_000_000).with_category("Operator"),
//!     Event::pop("matmul", 0, 3_000_000).with_category("Operator"),
//!     Event::pop("ProfileStep#0", 0, 4_000_000).with_category("ProfileStep"),
//! ];
//! let recording = Recording { threads: vec![thread], ..Recording::default() };
//! let summary = Summary::new(&Forest::from_recording(&recording), SummaryOptions::default());
//! let row = &summary.operator[0].rows[0];
//! assert_eq!((row.name.as_str(), row.calls, row.cpu.map(|c| c.total)), ("matmul", Some(1), Some(2_000_000)));
//! assert!(summary.text().contains("matmul    "));
//! ```

mod build;
mod builder;
mod forest;
mod memory;
mod ordered;
mod ranges;
mod text;

use serde::Serialize;

pub use builder::ForestBuilder;
pub use forest::{Children, Device, EventType, Forest, Mem, Node, Runtime, Thin, Unlinked};

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
    /// CPU self time: each call's time less the calls inside it, summed (not one of Paddle's
    /// keys; the Kernel table, whose rows nest nothing, sorts by GPU total time).
    CPUSelf,
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
    pub(super) fn add(&mut self, t: i64) {
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

pub(super) fn avg(total: i64, calls: u64) -> f64 {
    if calls == 0 {
        f64::NAN
    } else {
        total as f64 / calls as f64
    }
}

/// A group of rows: one thread, or all threads merged.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    /// `All threads merged`, or the thread's name where the input names it (with its id when
    /// another thread has the same name), else its id.
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

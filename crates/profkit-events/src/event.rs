//! The event model: marks, push ranges and pop ranges, recorded per thread.
//!
//! This is Paddle's event model, as Paddle still implements it: an [`Event`] has a kind, a name, the
//! index of the profiler thread that recorded it, a CPU timestamp in nanoseconds and, when a
//! device was profiled, a device timestamp. A thread's events form a [`ThreadEvents`] list, in
//! the order they were recorded; a [`Recording`] holds the lists of every thread, plus what a file
//! may carry besides host ranges (device activity, memory records). Ranges are not stored as
//! spans: a push and a pop are paired afterwards ([`crate::span`]), the way Paddle does it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// An event name: borrowed for `&'static str` names (no allocation), owned otherwise.
pub type Name = Cow<'static, str>;

/// The three kinds of event of Paddle's `EventKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A marker without a time range (`_start_profiler_`, `_stop_profiler_`, user marks).
    Mark,
    /// The start of a range.
    PushRange,
    /// The end of a range; it closes the most recent open push of the same name.
    PopRange,
}

/// A timestamp on a device's clock, taken at a push or pop while a device was profiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceTime {
    /// The device (GPU ordinal for CUDA).
    pub device: u32,
    /// Nanoseconds on that device's clock. Only differences between timestamps of one device
    /// mean anything.
    pub ns: u64,
}

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Mark, push or pop.
    pub kind: EventKind,
    /// The range or mark name as recorded (not the `parent/child` path, which pairing derives).
    pub name: Name,
    /// The profiler thread index: 0 for the first thread that recorded, then 1, 2, ... (not an OS
    /// thread id).
    pub thread: u32,
    /// CPU timestamp in nanoseconds (Unix epoch for the recorder and Paddle's files).
    pub cpu_ns: u64,
    /// The device timestamp, when a device was profiled.
    pub device: Option<DeviceTime>,
    /// What kind of range this is, when the source says (on a push, and on its pop): Paddle's
    /// event type name (`Operator`, `UserDefined`, `ProfileStep`, ...) or a Chrome trace's `cat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Name>,
    /// Whatever else the source gave the range (on its push), as text: for Paddle's node trees the
    /// process and thread ids, a runtime call's correlation id, an operator's input shapes and
    /// dtypes, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<(String, String)>,
    /// A number the recording program attached to the event
    /// ([`crate::recorder::push_range_tagged`], [`crate::recorder::mark_tagged`]): profkit-tracing
    /// links a span's push to its fields with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<u64>,
}

impl Event {
    /// An event without device timing.
    pub fn new(kind: EventKind, name: impl Into<Name>, thread: u32, cpu_ns: u64) -> Event {
        Event {
            kind,
            name: name.into(),
            thread,
            cpu_ns,
            device: None,
            category: None,
            args: Vec::new(),
            tag: None,
        }
    }

    /// A mark.
    pub fn mark(name: impl Into<Name>, thread: u32, cpu_ns: u64) -> Event {
        Event::new(EventKind::Mark, name, thread, cpu_ns)
    }

    /// The start of a range.
    pub fn push(name: impl Into<Name>, thread: u32, cpu_ns: u64) -> Event {
        Event::new(EventKind::PushRange, name, thread, cpu_ns)
    }

    /// The end of a range.
    pub fn pop(name: impl Into<Name>, thread: u32, cpu_ns: u64) -> Event {
        Event::new(EventKind::PopRange, name, thread, cpu_ns)
    }

    /// The event with a device timestamp.
    pub fn with_device(mut self, device: u32, ns: u64) -> Event {
        self.device = Some(DeviceTime { device, ns });
        self
    }

    /// The event with a category (see [`Event::category`]).
    pub fn with_category(mut self, category: impl Into<Name>) -> Event {
        self.category = Some(category.into());
        self
    }

    /// Milliseconds of CPU time from this event to `end`, as Paddle computes it
    /// (`Event::CpuElapsedMs`: the signed difference of the nanosecond timestamps, divided by 10^6).
    pub fn cpu_elapsed_ms(&self, end: &Event) -> f64 {
        elapsed_ms(self.cpu_ns, end.cpu_ns)
    }

    /// Milliseconds of device time from this event to `end`; 0 unless both carry a device
    /// timestamp of the same device (as Paddle gets 0 from a build without CUDA).
    pub fn device_elapsed_ms(&self, end: &Event) -> f64 {
        match (self.device, end.device) {
            (Some(a), Some(b)) if a.device == b.device => elapsed_ms(a.ns, b.ns),
            _ => 0.0,
        }
    }
}

/// `(end - start) / 10^6` with the difference taken as a signed 64-bit integer, as Paddle's
/// `int64_t` arithmetic does (wrapping instead of overflowing on hostile values).
pub(crate) fn elapsed_ms(start_ns: u64, end_ns: u64) -> f64 {
    (end_ns as i64).wrapping_sub(start_ns as i64) as f64 / 1_000_000.0
}

/// The events of one profiler thread, in recording order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThreadEvents {
    /// The profiler thread index.
    pub thread: u32,
    /// The thread's name, when known (the recorder takes it from `std::thread::current()`).
    pub name: Option<String>,
    /// The operating system's thread id, when known (Paddle's node trees carry it).
    pub os_tid: Option<u64>,
    /// The events, in the order the thread recorded them.
    pub events: Vec<Event>,
}

impl ThreadEvents {
    /// An empty list for thread `thread`.
    pub fn new(thread: u32) -> ThreadEvents {
        ThreadEvents {
            thread,
            ..ThreadEvents::default()
        }
    }
}

/// Which clocks a recording's ranges were timed with: Paddle's `ProfilerState`, with Paddle's
/// `All`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfilerState {
    /// Not recording.
    #[default]
    Disabled,
    /// CPU timestamps only.
    Cpu,
    /// Device timing is what counts (Paddle's `kCUDA`); CPU timestamps are still taken.
    Device,
    /// CPU and device timing (Paddle's `kAll`).
    All,
}

/// What kind of device activity a [`DeviceSpan`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    /// A GPU kernel.
    Kernel,
    /// An NPU kernel (Paddle 3.x's legacy `NPUKernel`).
    NpuKernel,
    /// A memory copy.
    Memcpy,
    /// A memory set.
    Memset,
    /// Another type code, kept as found.
    Other(i32),
}

/// Device activity read from a file: it has its own timing and no push/pop on a host thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceSpan {
    /// What it is.
    pub kind: DeviceKind,
    /// Its name (for Paddle's legacy kernels, the name of the host range that launched it).
    pub name: String,
    /// The device id.
    pub device: i64,
    /// The stream id.
    pub stream: u64,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
    /// Details (the kernel name for Paddle's legacy kernels).
    pub detail: Option<String>,
    /// Bytes copied or set, for memory operations.
    pub bytes: Option<u64>,
}

/// Where memory of a [`MemoryRecord`] lives (the legacy `MemEvent.Place`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemPlace {
    /// Host memory.
    Cpu,
    /// GPU memory.
    Cuda,
    /// Page-locked host memory.
    CudaPinned,
    /// Kunlun XPU memory.
    Xpu,
    /// NPU memory.
    Npu,
    /// Another code, kept as found.
    Other(i32),
}

/// One allocation, from its allocation to its free (the legacy `MemEvent`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// When it was allocated, ns.
    pub start_ns: u64,
    /// When it was freed, ns (0 when it was not freed while profiling).
    pub end_ns: u64,
    /// Its size.
    pub bytes: u64,
    /// Where it lives.
    pub place: MemPlace,
    /// The device ordinal of the place.
    pub device: u32,
    /// The thread that allocated it, as the file gives it.
    pub thread: u64,
    /// The range it was allocated in.
    pub alloc_in: String,
    /// The range it was freed in.
    pub free_in: String,
}

/// What a [`MemoryEvent`] did (Paddle's `TracerMemEventType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemEventKind {
    /// Memory handed out by the allocator.
    Allocate,
    /// Memory given back to the allocator.
    Free,
    /// Memory the allocator reserved from the system.
    ReservedAllocate,
    /// Memory the allocator released to the system.
    ReservedFree,
    /// Another type code, kept as found.
    Other(i32),
}

impl MemEventKind {
    /// The kind of a Paddle `TracerMemEventType` code.
    pub fn from_code(code: i32) -> MemEventKind {
        match code {
            0 => MemEventKind::Allocate,
            1 => MemEventKind::Free,
            2 => MemEventKind::ReservedAllocate,
            3 => MemEventKind::ReservedFree,
            other => MemEventKind::Other(other),
        }
    }

    /// Its Paddle code.
    pub fn code(self) -> i32 {
        match self {
            MemEventKind::Allocate => 0,
            MemEventKind::Free => 1,
            MemEventKind::ReservedAllocate => 2,
            MemEventKind::ReservedFree => 3,
            MemEventKind::Other(code) => code,
        }
    }

    /// Paddle's name of the kind (`type <code>` for another code).
    pub fn name(self) -> String {
        match self {
            MemEventKind::Allocate => "Allocate".into(),
            MemEventKind::Free => "Free".into(),
            MemEventKind::ReservedAllocate => "ReservedAllocate".into(),
            MemEventKind::ReservedFree => "ReservedFree".into(),
            MemEventKind::Other(code) => format!("type {code}"),
        }
    }

    /// The kind Paddle's name gives (the inverse of [`MemEventKind::name`]).
    pub fn from_name(name: &str) -> Option<MemEventKind> {
        Some(match name {
            "Allocate" => MemEventKind::Allocate,
            "Free" => MemEventKind::Free,
            "ReservedAllocate" => MemEventKind::ReservedAllocate,
            "ReservedFree" => MemEventKind::ReservedFree,
            other => MemEventKind::Other(other.strip_prefix("type ")?.parse().ok()?),
        })
    }
}

/// One allocator event, as Paddle's new profiler records it (a memory node of its node trees): a
/// point in time, not a range.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryEvent {
    /// When, ns.
    pub ns: u64,
    /// What happened.
    pub kind: MemEventKind,
    /// The address.
    pub addr: u64,
    /// Where, as Paddle names the place (`Place(cpu)`, `Place(gpu:0)`, ...).
    pub place: String,
    /// The change in bytes (negative for a free).
    pub increase_bytes: i64,
    /// Bytes allocated on the place after the event.
    pub current_allocated: u64,
    /// Bytes reserved on the place after the event.
    pub current_reserved: u64,
    /// The most bytes allocated on the place so far.
    pub peak_allocated: u64,
    /// The most bytes reserved on the place so far.
    pub peak_reserved: u64,
    /// The process id.
    pub process_id: u64,
    /// The OS thread id of the thread that made the event (the host ranges it falls in are that
    /// thread's).
    pub thread_id: u64,
}

/// Everything one profiling session (or one file) holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Recording {
    /// The event lists, one per thread, in increasing thread index (reports list the newest
    /// thread, the highest index, first).
    pub threads: Vec<ThreadEvents>,
    /// Device activity without host push/pop events (read from files).
    pub device_spans: Vec<DeviceSpan>,
    /// Memory records (read from files).
    pub memory: Vec<MemoryRecord>,
    /// Allocator events (read from Paddle's node trees), in time order per thread.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory_events: Vec<MemoryEvent>,
    /// Key/value information about the run (Paddle's `extra_info`: thread names, CPU
    /// utilisation).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub info: Vec<(String, String)>,
    /// The state the recorder ran in, when this came from the recorder.
    pub state: Option<ProfilerState>,
    /// Events the recorder dropped because its memory cap was reached.
    pub dropped: u64,
}

impl Recording {
    /// The number of events over all threads.
    pub fn event_count(&self) -> usize {
        self.threads.iter().map(|t| t.events.len()).sum()
    }

    /// The thread list of `thread`, if any.
    pub fn thread(&self, thread: u32) -> Option<&ThreadEvents> {
        self.threads.iter().find(|t| t.thread == thread)
    }
}

//! Plane, line and stat names that the TensorFlow / XLA tools give meaning to.

/// The plane of host threads.
pub const HOST_PLANE_NAME: &str = "/host:CPU";
/// Prefix of GPU planes (`/device:GPU:0`, ...).
pub const GPU_PLANE_PREFIX: &str = "/device:GPU:";
/// Prefix of TPU planes.
pub const TPU_PLANE_PREFIX: &str = "/device:TPU:";
/// Prefix of planes of pluggable (custom) devices.
pub const CUSTOM_PLANE_PREFIX: &str = "/device:CUSTOM:";
/// The TPU runtime plane.
pub const TPU_RUNTIME_PLANE_NAME: &str = "/host:TPU-runtime";
/// The CUPTI driver plane.
pub const CUPTI_DRIVER_API_PLANE_NAME: &str = "/host:CUPTI";
/// The Python tracer plane.
pub const PYTHON_TRACER_PLANE_NAME: &str = "/host:python-tracer";
/// The host metadata plane.
pub const METADATA_PLANE_NAME: &str = "/host:metadata";
/// The plane TensorFlow adds with session-wide stats.
pub const TASK_ENV_PLANE_NAME: &str = "Task Environment";

/// Line of training or inference steps.
pub const STEP_LINE_NAME: &str = "Steps";
/// Line of framework name scopes.
pub const TENSORFLOW_NAME_SCOPE_LINE_NAME: &str = "Framework Name Scope";
/// Line of framework ops.
pub const TENSORFLOW_OP_LINE_NAME: &str = "Framework Ops";
/// Line of XLA modules.
pub const XLA_MODULE_LINE_NAME: &str = "XLA Modules";
/// Line of XLA ops.
pub const XLA_OP_LINE_NAME: &str = "XLA Ops";
/// Line of asynchronous XLA ops (not shown by the trace viewer).
pub const XLA_ASYNC_OP_LINE_NAME: &str = "Async XLA Ops";
/// The counter line.
pub const COUNTERS_LINE_NAME: &str = "_counters_";
/// Id of the counter line.
pub const COUNTERS_LINE_ID: i64 = i64::MAX;
/// Line of source code annotations.
pub const SOURCE_LINE_NAME: &str = "Source code";
/// Line of kernel launch statistics (derived on GPU planes).
pub const KERNEL_LAUNCH_LINE_NAME: &str = "Launch Stats";
/// Line of ops offloaded to the host.
pub const HOST_OFFLOAD_OP_LINE_NAME: &str = "Host Offload Ops";
/// Line of a TPU SparseCore's steps.
pub const SPARSE_CORE_STEP_LINE_NAME: &str = "Sparse Core Steps";
/// Line of a TPU SparseCore's modules.
pub const SPARSE_CORE_MODULE_LINE_NAME: &str = "Sparse Core Modules";
/// Line of a TPU SparseCore's ops.
pub const SPARSE_CORE_OP_LINE_NAME: &str = "Sparse Core Ops";
/// [`TENSORFLOW_NAME_SCOPE_LINE_NAME`] as TensorFlow 2.x's profiler wrote it.
pub const LEGACY_TENSORFLOW_NAME_SCOPE_LINE_NAME: &str = "TensorFlow Name Scope";
/// [`TENSORFLOW_OP_LINE_NAME`] as TensorFlow 2.x's profiler wrote it.
pub const LEGACY_TENSORFLOW_OP_LINE_NAME: &str = "TensorFlow Ops";
/// Prefix of GPU stream lines (`Stream #134(Compute)`, `Stream #17(Kernel)`).
pub const STREAM_LINE_PREFIX: &str = "Stream #";

/// Stat names the tools read.
pub mod stats {
    /// Step number.
    pub const STEP_NUM: &str = "step_num";
    /// Step name; renames the event in the trace viewer.
    pub const STEP_NAME: &str = "step_name";
    /// Correlation id between host and device events.
    pub const CORRELATION_ID: &str = "correlation_id";
    /// Group (step) id.
    pub const GROUP_ID: &str = "group_id";
    /// Device id.
    pub const DEVICE_ID: &str = "device_id";
    /// Framework op.
    pub const TF_OP: &str = "tf_op";
    /// HLO op.
    pub const HLO_OP: &str = "hlo_op";
    /// HLO module.
    pub const HLO_MODULE: &str = "hlo_module";
    /// Floating point operations.
    pub const FLOPS: &str = "flops";
    /// Bytes accessed.
    pub const BYTES_ACCESSED: &str = "bytes_accessed";
    /// Kernel launch details.
    pub const KERNEL_DETAILS: &str = "kernel_details";
    /// Memcpy details.
    pub const MEMCPY_DETAILS: &str = "memcpy_details";
    /// Device clock rate.
    pub const CLOCK_RATE: &str = "clock_rate";
    /// Device core count.
    pub const CORE_COUNT: &str = "core_count";
    /// Device memory bandwidth.
    pub const MEMORY_BANDWIDTH: &str = "memory_bandwidth";
    /// Device memory size.
    pub const MEMORY_SIZE: &str = "memory_size";
    /// Device type as a string.
    pub const DEVICE_TYPE_STRING: &str = "device_type_string";
    /// Flow between events (the trace viewer derives arrows from it).
    pub const FLOW: &str = "flow";
    /// Start of the profiling session (uint64 ns), on the Task Environment plane.
    pub const PROFILE_START_TIME: &str = "profile_start_time";
    /// End of the profiling session (uint64 ns), on the Task Environment plane.
    pub const PROFILE_STOP_TIME: &str = "profile_stop_time";
    /// Whether an op ran eagerly.
    pub const IS_EAGER: &str = "is_eager";
    /// Program id.
    pub const PROGRAM_ID: &str = "program_id";
    /// Symbol id.
    pub const SYMBOL_ID: &str = "symbol_id";

    /// Stats the trace viewer does not show.
    pub const HIDDEN_IN_TRACE_VIEWER: &[&str] =
        &["_pt", "_p", "_ct", "_c", "_r", FLOPS, PROGRAM_ID, SYMBOL_ID];

    /// Whether the trace viewer hides the stat named `name`.
    pub fn is_hidden_in_trace_viewer(name: &str) -> bool {
        HIDDEN_IN_TRACE_VIEWER.contains(&name)
    }
}

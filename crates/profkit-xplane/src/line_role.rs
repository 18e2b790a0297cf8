//! What a line holds, as the profiler's own line names say it.
//!
//! A device plane holds several views of the same time. On a TPU, `XLA Ops` holds the ops the
//! device ran and `XLA Modules` the modules over the same instants; on a GPU the streams
//! (`Stream #134(Compute)`) hold the kernels and copies, and the profiler derives `Steps`,
//! `Framework Name Scope`, `Framework Ops`, `XLA Modules` and `XLA Ops` lines from them (TensorFlow
//! 2.x named two of them `TensorFlow Name Scope` and `TensorFlow Ops`). Summing every line of a
//! device plane counts its time two or three times; summing the lines whose role
//! [holds device ops](LineRole::holds_device_ops) counts each instant once. Host planes' lines
//! are threads.
//!
//! ```
//! use profkit_xplane::{LineRole, line_role};
//! assert_eq!(line_role("/device:TPU:0", "XLA Ops"), LineRole::XlaOps);
//! assert_eq!(line_role("/device:TPU:0", "XLA Modules"), LineRole::XlaModules);
//! assert_eq!(line_role("/device:GPU:4", "Stream #134(Compute)"), LineRole::Stream);
//! assert_eq!(line_role("/device:GPU:4", "TensorFlow Name Scope"), LineRole::NameScope);
//! assert_eq!(line_role("/host:CPU", "python3"), LineRole::HostThread);
//! assert!(line_role("/device:GPU:4", "Stream #134(Compute)").holds_device_ops());
//! assert_eq!(LineRole::XlaOps.as_str(), "xla_ops");
//! ```

use std::fmt;

use crate::constants as c;

/// What a line holds (the `line_role` column of profkit's tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LineRole {
    /// `XLA Ops` on a device that is not a GPU (a TPU, a pluggable device), and a TPU
    /// SparseCore's `Sparse Core Ops`: the ops the device ran, each instant once.
    XlaOps,
    /// A GPU stream (`Stream #N(...)`, Kineto's `stream N`): kernels and memory copies as the
    /// device ran them.
    Stream,
    /// `XLA Ops` on a GPU plane: the profiler's grouping of the streams' kernels by their HLO op
    /// (the same instants as the streams).
    XlaOpsDerived,
    /// `XLA Modules` (and `Sparse Core Modules`): the XLA programs the ops belong to.
    XlaModules,
    /// `Async XLA Ops`: asynchronous ops from start to done, overlapping the ops that ran
    /// meanwhile (xprof's trace viewer leaves this line out).
    AsyncXlaOps,
    /// `Steps` (and `Sparse Core Steps`): training or inference steps.
    Steps,
    /// `Framework Name Scope` (`TensorFlow Name Scope`): the framework's name scopes over the ops.
    NameScope,
    /// `Framework Ops` (`TensorFlow Ops`): the framework ops the device ops came from.
    FrameworkOps,
    /// `Source code`: source locations of the ops.
    Source,
    /// `Launch Stats`: kernel launch statistics.
    LaunchStats,
    /// `Host Offload Ops`: ops offloaded to the host.
    HostOffloadOps,
    /// `_counters_`: counter samples, not spans.
    Counters,
    /// A thread of a host plane (`/host:CPU`, `/host:CUPTI`, ...).
    HostThread,
    /// Any other line (`XLA TraceMe`, `Overlay`, a line of a plane of no known kind).
    Other,
}

/// Every role, in the order of the enum.
pub const LINE_ROLES: &[LineRole] = &[
    LineRole::XlaOps,
    LineRole::Stream,
    LineRole::XlaOpsDerived,
    LineRole::XlaModules,
    LineRole::AsyncXlaOps,
    LineRole::Steps,
    LineRole::NameScope,
    LineRole::FrameworkOps,
    LineRole::Source,
    LineRole::LaunchStats,
    LineRole::HostOffloadOps,
    LineRole::Counters,
    LineRole::HostThread,
    LineRole::Other,
];

impl LineRole {
    /// The role's name in profkit's tables and JSON (`xla_ops`, `stream`, `host_thread`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            LineRole::XlaOps => "xla_ops",
            LineRole::Stream => "stream",
            LineRole::XlaOpsDerived => "xla_ops_derived",
            LineRole::XlaModules => "xla_modules",
            LineRole::AsyncXlaOps => "async_xla_ops",
            LineRole::Steps => "steps",
            LineRole::NameScope => "name_scope",
            LineRole::FrameworkOps => "framework_ops",
            LineRole::Source => "source",
            LineRole::LaunchStats => "launch_stats",
            LineRole::HostOffloadOps => "host_offload_ops",
            LineRole::Counters => "counters",
            LineRole::HostThread => "host_thread",
            LineRole::Other => "other",
        }
    }

    /// The role named `name` (as [`LineRole::as_str`] writes it).
    pub fn from_name(name: &str) -> Option<LineRole> {
        LINE_ROLES.iter().copied().find(|r| r.as_str() == name)
    }

    /// Whether the line holds the device's own ops, each instant once: GPU streams and the
    /// `XLA Ops` of other devices. A device's kernels, and the time per op, are these lines'.
    pub fn holds_device_ops(self) -> bool {
        matches!(self, LineRole::XlaOps | LineRole::Stream)
    }
}

impl fmt::Display for LineRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The role of the line named `line` on the plane named `plane`.
pub fn line_role(plane: &str, line: &str) -> LineRole {
    if line == c::COUNTERS_LINE_NAME {
        return LineRole::Counters;
    }
    if plane.starts_with("/host:") {
        return LineRole::HostThread;
    }
    let gpu = plane.starts_with(c::GPU_PLANE_PREFIX);
    match line {
        c::XLA_OP_LINE_NAME if gpu => LineRole::XlaOpsDerived,
        c::XLA_OP_LINE_NAME | c::SPARSE_CORE_OP_LINE_NAME => LineRole::XlaOps,
        c::XLA_MODULE_LINE_NAME | c::SPARSE_CORE_MODULE_LINE_NAME => LineRole::XlaModules,
        c::XLA_ASYNC_OP_LINE_NAME => LineRole::AsyncXlaOps,
        c::STEP_LINE_NAME | c::SPARSE_CORE_STEP_LINE_NAME => LineRole::Steps,
        c::TENSORFLOW_NAME_SCOPE_LINE_NAME | c::LEGACY_TENSORFLOW_NAME_SCOPE_LINE_NAME => {
            LineRole::NameScope
        }
        c::TENSORFLOW_OP_LINE_NAME | c::LEGACY_TENSORFLOW_OP_LINE_NAME => LineRole::FrameworkOps,
        c::SOURCE_LINE_NAME => LineRole::Source,
        c::KERNEL_LAUNCH_LINE_NAME => LineRole::LaunchStats,
        c::HOST_OFFLOAD_OP_LINE_NAME => LineRole::HostOffloadOps,
        _ if plane.starts_with("/device:") && is_stream_name(line) => LineRole::Stream,
        _ => LineRole::Other,
    }
}

/// `Stream #N(...)` as TSL's GPU tracers name streams, `stream N` as Kineto's traces do.
fn is_stream_name(line: &str) -> bool {
    line.starts_with(c::STREAM_LINE_PREFIX)
        || line
            .get(..7)
            .is_some_and(|head| head.eq_ignore_ascii_case("stream "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_real_device_samples() {
        // Line names of conformance/xplane-device's gpu, rocm1 and tpu inputs.
        let cases = [
            ("/device:TPU:0", "XLA Modules", LineRole::XlaModules),
            ("/device:TPU:0", "XLA Ops", LineRole::XlaOps),
            ("/device:TPU:0", "Async XLA Ops", LineRole::AsyncXlaOps),
            ("/device:TPU:0", "Overlay", LineRole::Other),
            ("/device:TPU:0", "XLA TraceMe", LineRole::Other),
            ("/device:GPU:4", "Stream #134(Compute)", LineRole::Stream),
            ("/device:GPU:4", "Stream #63(MemcpyH2D)", LineRole::Stream),
            ("/device:GPU:4", "TensorFlow Ops", LineRole::FrameworkOps),
            (
                "/device:GPU:4",
                "TensorFlow Name Scope",
                LineRole::NameScope,
            ),
            ("/device:GPU:4", "Steps", LineRole::Steps),
            ("/device:GPU:0", "Stream #17(Kernel)", LineRole::Stream),
            ("/device:GPU:0", "XLA Ops", LineRole::XlaOpsDerived),
            ("/device:GPU:0", "stream 7 ", LineRole::Stream),
            ("/host:CPU", "Host Threads/583", LineRole::HostThread),
            ("/host:CPU", "_counters_", LineRole::Counters),
            ("/host:CUPTI", "cupti", LineRole::HostThread),
            ("Task Environment", "x", LineRole::Other),
            ("/device:TPU:0", "Stream #1", LineRole::Stream),
            ("/device:CUSTOM:0", "Framework Ops", LineRole::FrameworkOps),
        ];
        for (plane, line, role) in cases {
            assert_eq!(line_role(plane, line), role, "{plane} {line}");
        }
    }

    #[test]
    fn names_read_back() {
        for &role in LINE_ROLES {
            assert_eq!(LineRole::from_name(role.as_str()), Some(role));
        }
        assert_eq!(LineRole::from_name("nope"), None);
        let ops: Vec<_> = LINE_ROLES.iter().filter(|r| r.holds_device_ops()).collect();
        assert_eq!(ops, [&LineRole::XlaOps, &LineRole::Stream]);
    }
}

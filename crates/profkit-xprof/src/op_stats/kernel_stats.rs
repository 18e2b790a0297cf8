//! The kernel stats database (xprof's `ConvertDeviceTraceXPlaneToKernelReports` and the kernel
//! report rules of its `kernel_stats_utils`): every GPU kernel, grouped with the kernels
//! identical to it, with its launch parameters and whether it used the GPU's matrix units.
//!
//! A kernel is an event of a GPU plane's non-derived line that has a duration and carries a
//! non-empty `kernel_details` stat (its time counted in whole nanoseconds), whose `key:value` tokens (split at spaces and
//! newlines) give the registers per thread (`regs`), the static and dynamic shared memory
//! (`static_shared`, `dynamic_shared`), the block and grid dimensions (`block`, `grid`: three
//! comma-separated numbers; `1,1,1` otherwise) and the theoretical occupancy (`occ_pct`, as the
//! profiler computed it; xprof does not compute it from the device capabilities). Kernels equal
//! in all of these, in their name, op and TensorCore flags are one report, with summed
//! durations, the shortest and longest, and the count.
//!
//! A kernel uses TensorCores (matrix cores) when its name has one of the patterns of its
//! device's vendor (the plane's `device_vendor` stat, `Nvidia` or `AMD`; no vendor, no
//! TensorCores). Its op is the framework op of its `tf_op` stat, or, for a kernel of an XLA
//! program the [`HloModuleMap`] knows, the framework op of its HLO instruction's metadata. The op
//! is TensorCore eligible by its name (convolutions, matrix products, cuDNN RNNs, JAX's
//! `conv_general_dilated` and `dot_general`), by an `equation` stat of two operands, or because
//! one of its kernels used TensorCores.
//!
//! Reports are sorted by total duration, longest first (ties by the report's fields), and at
//! most 1000 are kept, per host and again once the hosts' reports are combined.

use std::collections::HashMap;

use profkit_xplane::XPlane;
use profkit_xplane::visitor::{PlaneVisitor, StatValueRef};

use super::hlo::{HloModuleMap, tf_op_full_name};
use crate::preprocess::derived::is_derived_line_id;
use crate::preprocess::derived::tf_op;
use crate::proto::{KernelReport, KernelStatsDb};

/// Reports kept per database.
pub const MAX_KERNELS: usize = 1000;

/// TSL's kernel name patterns of NVIDIA kernels that use TensorCores.
const NVIDIA_TENSOR_CORE_PATTERNS: [&str; 19] = [
    "16816",
    "c1688",
    "conv1x1",
    "conv2d_c1_k1",
    "dgrad_1x1_stride_2x2",
    "direct_group",
    "first_layer_wgrad_kernel",
    "h1688",
    "h884",
    "hmma",
    "i16832",
    "i8816",
    "s884",
    "s1688",
    "xmma_gemm",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_sparse_gemm",
    "xmma_warp_specialized_implicit_gemm",
];

/// The kernel name patterns of AMD kernels that use matrix cores (found by running xprof
/// 2.24.2 on kernels of each name), besides Tensile's `_MI<m>x<n>x<k>` instruction tag.
const AMD_MATRIX_CORE_PATTERNS: [&str; 11] = [
    "mfma",
    "wmma",
    "attn_fwd",
    "FMHA_FWD",
    "moe_mxgemm",
    "moe_gemm",
    "miopenSp3AsmConvRage",
    "bwd_kernel_",
    "gemm_fusion",
    "Custom_Cijk_",
    "_xdl",
];

/// The GPU's vendor, as the kernel rules tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    /// `device_vendor` is `Nvidia`.
    Nvidia,
    /// `device_vendor` is `AMD`.
    Amd,
    /// Any other vendor, or none.
    Other,
}

impl Vendor {
    /// The vendor of a GPU plane, from its `device_vendor` stat.
    pub fn of_plane(plane: &XPlane) -> Self {
        let visitor = PlaneVisitor::new(plane);
        match visitor
            .stat("device_vendor")
            .and_then(|s| s.value())
            .and_then(|v| v.as_str())
        {
            Some("Nvidia") => Vendor::Nvidia,
            Some("AMD") => Vendor::Amd,
            _ => Vendor::Other,
        }
    }
}

/// Whether a kernel of this name, on a GPU of this vendor, uses TensorCores (matrix cores).
pub fn is_kernel_using_tensor_core(name: &str, vendor: Vendor) -> bool {
    match vendor {
        Vendor::Nvidia => NVIDIA_TENSOR_CORE_PATTERNS.iter().any(|p| name.contains(p)),
        Vendor::Amd => {
            AMD_MATRIX_CORE_PATTERNS.iter().any(|p| name.contains(p)) || has_mi_tag(name)
        }
        Vendor::Other => false,
    }
}

/// Whether the name has `_MI` followed by three `x`-separated decimal numbers (Tensile's tag of
/// the matrix instruction a kernel uses, as in `_MI16x16x16x1`).
fn has_mi_tag(name: &str) -> bool {
    name.match_indices("_MI").any(|(i, _)| {
        let mut rest = &name[i + 3..];
        for n in 0..3 {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return false;
            }
            rest = &rest[digits..];
            if n < 2 {
                match rest.strip_prefix('x') {
                    Some(r) => rest = r,
                    None => return false,
                }
            }
        }
        true
    })
}

/// Whether an op of this name is one whose kernels can use TensorCores.
pub fn is_op_tensor_core_eligible(op_name: &str) -> bool {
    const ENDS: [&str; 12] = [
        "Conv2D",
        "Conv2DBackpropFilter",
        "Conv2DBackpropInput",
        "Conv3D",
        "DepthwiseConv2dNative",
        "DepthwiseConv2dNativeBackpropFilter",
        "DepthwiseConv2dNativeBackpropInput",
        "/MatMul",
        "FusedMatMul",
        "/CudnnRNN",
        "XlaDot",
        "XlaDotV2",
    ];
    const CONTAINS: [&str; 6] = [
        "BatchMatMul",
        "CudnnRNNV",
        "CudnnRNNForward",
        "CudnnRNNBackprop",
        "conv_general_dilated",
        "dot_general",
    ];
    ENDS.iter().any(|s| op_name.ends_with(s)) || CONTAINS.iter().any(|s| op_name.contains(s))
}

/// Whether an einsum of this equation (`lhs,rhs->out`) can use TensorCores: two operands.
pub fn is_einsum_tensor_core_eligible(equation: &str) -> bool {
    let mut sides = equation.split("->");
    match (sides.next(), sides.next(), sides.next()) {
        (Some(inputs), Some(_), None) if !equation.is_empty() => inputs.split(',').count() == 2,
        _ => false,
    }
}

/// absl's `SimpleAtoi` into a `uint32`: optional spaces around, an optional sign, decimal.
fn atoi_u32(s: &str) -> Option<u32> {
    let s = s.trim_ascii();
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        // "-0" is the one negative a uint32 takes.
        return (s == "-0").then_some(0);
    }
    s.parse().ok()
}

/// absl's `SimpleAtod`: optional spaces around, a number (`inf` and `nan` too).
fn atod(s: &str) -> Option<f64> {
    let s = s.trim_ascii();
    let s = match s.strip_prefix('+') {
        Some(r) if !r.starts_with(['-', '+']) => r,
        _ => s,
    };
    s.parse().ok()
}

fn dims(value: &str) -> Option<[u32; 3]> {
    let mut parts = value.split(',');
    let d = [
        atoi_u32(parts.next()?)?,
        atoi_u32(parts.next()?)?,
        atoi_u32(parts.next()?)?,
    ];
    parts.next().is_none().then_some(d)
}

/// `ParseKernelLaunchParams`: the launch parameters of a `kernel_details` stat.
pub fn parse_kernel_details(details: &str, kernel: &mut KernelReport) {
    kernel.block_dim = vec![1, 1, 1];
    kernel.grid_dim = vec![1, 1, 1];
    for token in details.split([' ', '\n']) {
        let mut kv = token.split(':');
        let (Some(key), Some(value), None) = (kv.next(), kv.next(), kv.next()) else {
            continue;
        };
        match key {
            "regs" => {
                if let Some(v) = atoi_u32(value) {
                    kernel.registers_per_thread = v;
                }
            }
            "static_shared" => {
                if let Some(v) = atoi_u32(value) {
                    kernel.static_shmem_bytes = v;
                }
            }
            "dynamic_shared" => {
                if let Some(v) = atoi_u32(value) {
                    kernel.dynamic_shmem_bytes = v;
                }
            }
            "block" => {
                if let Some(d) = dims(value) {
                    kernel.block_dim = d.to_vec();
                }
            }
            "grid" => {
                if let Some(d) = dims(value) {
                    kernel.grid_dim = d.to_vec();
                }
            }
            "occ_pct" => {
                if let Some(v) = atod(value) {
                    kernel.occupancy_pct = v as f32;
                }
            }
            _ => {}
        }
    }
}

/// The durations and count of a group of identical kernels (`KernelReportValue`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelValue {
    /// Summed duration, ns.
    pub total_duration_ns: u64,
    /// Shortest, ns.
    pub min_duration_ns: u64,
    /// Longest, ns.
    pub max_duration_ns: u64,
    /// Kernels in the group.
    pub occurrences: u32,
}

/// What tells kernels apart: every field of a report but its durations and count.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Key {
    name: String,
    grid: [u32; 3],
    block: [u32; 3],
    registers: u32,
    static_shmem: u32,
    dynamic_shmem: u32,
    using_tensor_core: bool,
    eligible: bool,
    op_name: String,
}

fn dim(d: &[u32], i: usize) -> u32 {
    d.get(i).copied().unwrap_or(0)
}

impl Key {
    fn of(r: &KernelReport) -> Self {
        Key {
            name: r.name.clone(),
            grid: [
                dim(&r.grid_dim, 0),
                dim(&r.grid_dim, 1),
                dim(&r.grid_dim, 2),
            ],
            block: [
                dim(&r.block_dim, 0),
                dim(&r.block_dim, 1),
                dim(&r.block_dim, 2),
            ],
            registers: r.registers_per_thread,
            static_shmem: r.static_shmem_bytes,
            dynamic_shmem: r.dynamic_shmem_bytes,
            using_tensor_core: r.is_kernel_using_tensor_core,
            eligible: r.is_op_tensor_core_eligible,
            op_name: r.op_name.clone(),
        }
    }
}

/// Kernel reports grouped by identity (xprof's `KernelReportMap`), in first-seen order.
#[derive(Clone, Debug, Default)]
pub struct KernelReports {
    index: HashMap<Key, usize>,
    entries: Vec<(KernelReport, KernelValue)>,
}

impl KernelReports {
    /// `InsertOrUpdateKernelReport`: adds a kernel (or a group) to its group.
    pub fn insert(&mut self, kernel: KernelReport, value: KernelValue) {
        let key = Key::of(&kernel);
        match self.index.get(&key) {
            Some(&i) => {
                if let Some((_, e)) = self.entries.get_mut(i) {
                    if e.occurrences == 0 {
                        *e = value;
                    } else {
                        e.total_duration_ns =
                            e.total_duration_ns.wrapping_add(value.total_duration_ns);
                        e.min_duration_ns = e.min_duration_ns.min(value.min_duration_ns);
                        e.max_duration_ns = e.max_duration_ns.max(value.max_duration_ns);
                        e.occurrences = e.occurrences.wrapping_add(value.occurrences);
                    }
                }
            }
            None => {
                self.index.insert(key, self.entries.len());
                self.entries.push((kernel, value));
            }
        }
    }

    /// Adds every group of `other`.
    pub fn merge(&mut self, other: KernelReports) {
        for (k, v) in other.entries {
            self.insert(k, v);
        }
    }

    /// Whether no kernel was seen.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `CopyTopKDurationKernelReportsToDb`: the groups as reports, longest first, at most
    /// [`MAX_KERNELS`].
    pub fn into_db(self) -> KernelStatsDb {
        let reports = self
            .entries
            .into_iter()
            .map(|(mut r, v)| {
                r.occurrences = v.occurrences;
                r.min_duration_ns = v.min_duration_ns;
                r.max_duration_ns = v.max_duration_ns;
                r.total_duration_ns = v.total_duration_ns;
                r
            })
            .collect();
        let mut db = KernelStatsDb { reports };
        sort_and_keep_top(&mut db);
        db
    }
}

/// `SortAndKeepTopKDurationKernelReportsInDb`: longest total first, ties by the reports'
/// fields (name, grid, block, registers, shared memory, TensorCore flags, op); at most
/// [`MAX_KERNELS`] kept.
pub fn sort_and_keep_top(db: &mut KernelStatsDb) {
    let mut keyed: Vec<(Key, KernelReport)> = std::mem::take(&mut db.reports)
        .into_iter()
        .map(|r| (Key::of(&r), r))
        .collect();
    keyed.sort_by(|(ka, a), (kb, b)| {
        b.total_duration_ns
            .cmp(&a.total_duration_ns)
            .then_with(|| ka.cmp(kb))
    });
    keyed.truncate(MAX_KERNELS);
    db.reports = keyed.into_iter().map(|(_, r)| r).collect();
}

/// The stats of a GPU event the kernel rules read (`GpuEventStats`), the last of each kind.
#[derive(Default)]
struct EventStats<'a> {
    kernel_details: &'a str,
    tf_op: &'a str,
    equation: &'a str,
    hlo_op: Option<&'a str>,
    program_id: Option<u64>,
}

/// The kernels of one GPU plane (`ConvertDeviceTraceXPlaneToKernelReports`), XLA kernels' ops
/// from `hlo`.
pub fn kernel_reports(plane: &XPlane, hlo: &HloModuleMap) -> KernelReports {
    let visitor = PlaneVisitor::new(plane);
    let vendor = Vendor::of_plane(plane);
    let mut reports = KernelReports::default();
    for line in visitor.lines() {
        if is_derived_line_id(line.id()) {
            continue;
        }
        for event in line.events() {
            // xprof skips a kernel of no duration only: its time in nanoseconds is a double,
            // stored whole (a kernel under a nanosecond counts, for 0 ns).
            if event.duration_ps() == 0 {
                continue;
            }
            let duration_ns = (event.duration_ps() as f64 / 1000.0) as u64;
            let mut stats = EventStats::default();
            for stat in event.stats() {
                let value = stat.value();
                let text = || value.and_then(|v| v.as_str()).unwrap_or("");
                match stat.name() {
                    "kernel_details" => stats.kernel_details = text(),
                    "tf_op" => stats.tf_op = text(),
                    "equation" => stats.equation = text(),
                    "hlo_op" => stats.hlo_op = Some(text()),
                    "program_id" => {
                        stats.program_id = Some(match value {
                            Some(StatValueRef::Uint64(v)) => v,
                            Some(StatValueRef::Int64(v)) => v as u64,
                            _ => 0,
                        });
                    }
                    _ => {}
                }
            }
            if stats.kernel_details.is_empty() {
                continue;
            }
            let mut kernel = KernelReport {
                name: event.name().to_owned(),
                is_kernel_using_tensor_core: is_kernel_using_tensor_core(event.name(), vendor),
                total_duration_ns: duration_ns,
                min_duration_ns: duration_ns,
                max_duration_ns: duration_ns,
                ..KernelReport::default()
            };
            parse_kernel_details(stats.kernel_details, &mut kernel);
            if !stats.tf_op.is_empty() {
                kernel.op_name = tf_op::parse(stats.tf_op).name.to_owned();
                kernel.is_op_tensor_core_eligible = is_einsum_tensor_core_eligible(stats.equation)
                    || is_op_tensor_core_eligible(&kernel.op_name)
                    || kernel.is_kernel_using_tensor_core;
            }
            if let Some(hlo_op) = stats.hlo_op {
                let name = hlo_op.rsplit("::").next().unwrap_or("");
                if let Some((_, instruction)) = hlo.instruction(stats.program_id, name) {
                    let full = tf_op_full_name(instruction.metadata.as_ref());
                    kernel.op_name = tf_op::parse(&full).name.to_owned();
                    kernel.is_op_tensor_core_eligible |=
                        is_op_tensor_core_eligible(&kernel.op_name);
                }
            }
            reports.insert(
                kernel,
                KernelValue {
                    total_duration_ns: duration_ns,
                    min_duration_ns: duration_ns,
                    max_duration_ns: duration_ns,
                    occurrences: 1,
                },
            );
        }
    }
    reports
}

/// TensorCore use of an op's kernels (`OpLevelKernelStats`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpKernelStats {
    /// Whether the op can use TensorCores (its first report says).
    pub is_op_tensor_core_eligible: bool,
    /// Its kernels' total time, ns.
    pub total_duration_ns: u64,
    /// The time of those of its kernels that used TensorCores, ns.
    pub tensor_core_duration_ns: u64,
}

/// `GroupKernelReportsByOpName`: the reports summed by op.
pub fn by_op_name(db: &KernelStatsDb) -> HashMap<&str, OpKernelStats> {
    let mut ops: HashMap<&str, OpKernelStats> = HashMap::new();
    for r in &db.reports {
        let s = ops
            .entry(r.op_name.as_str())
            .or_insert_with(|| OpKernelStats {
                is_op_tensor_core_eligible: r.is_op_tensor_core_eligible,
                ..OpKernelStats::default()
            });
        s.total_duration_ns = s.total_duration_ns.wrapping_add(r.total_duration_ns);
        if r.is_kernel_using_tensor_core {
            s.tensor_core_duration_ns = s.tensor_core_duration_ns.wrapping_add(r.total_duration_ns);
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_parameters() {
        let mut k = KernelReport::default();
        parse_kernel_details(
            "regs:12 static_shared:100 dynamic_shared:28 grid:2,3,4 block:5,6,7 occ_pct:37.5",
            &mut k,
        );
        assert_eq!(
            (
                k.registers_per_thread,
                k.static_shmem_bytes,
                k.dynamic_shmem_bytes
            ),
            (12, 100, 28)
        );
        assert_eq!((k.grid_dim, k.block_dim), (vec![2, 3, 4], vec![5, 6, 7]));
        assert_eq!(k.occupancy_pct, 37.5);
        let mut k = KernelReport::default();
        parse_kernel_details("regs:-1 grid:1,2 block:1,-2,3 occ_pct:abc regs:1:2", &mut k);
        assert_eq!(k.registers_per_thread, 0);
        assert_eq!((k.grid_dim, k.block_dim), (vec![1, 1, 1], vec![1, 1, 1]));
        let mut k = KernelReport::default();
        parse_kernel_details("regs:+7 static_shared:4294967296 occ_pct:1e2", &mut k);
        assert_eq!((k.registers_per_thread, k.static_shmem_bytes), (7, 0));
        assert_eq!(k.occupancy_pct, 100.0);
    }

    #[test]
    fn tensor_core_rules() {
        assert!(is_kernel_using_tensor_core(
            "volta_h884gemm",
            Vendor::Nvidia
        ));
        assert!(!is_kernel_using_tensor_core(
            "volta_h884gemm",
            Vendor::Other
        ));
        assert!(!is_kernel_using_tensor_core("volta_h884gemm", Vendor::Amd));
        for yes in [
            "Cijk_MT64_MI16x16x16x1_SN",
            "x_MI1x1x1",
            "_MIa_MI1x2x3",
            "k_mfma",
        ] {
            assert!(is_kernel_using_tensor_core(yes, Vendor::Amd), "{yes}");
        }
        for no in [
            "MI16x16x16x1",
            "_MI16x16",
            "_MI16x16x",
            "_MI+1x1x1",
            "Cijk_x",
            "_MI1x1x-1",
        ] {
            assert!(!is_kernel_using_tensor_core(no, Vendor::Amd), "{no}");
        }
        assert!(is_op_tensor_core_eligible("jit(f)/conv_general_dilated"));
        assert!(is_op_tensor_core_eligible("a/MatMul"));
        assert!(!is_op_tensor_core_eligible("a/convolution"));
        assert!(is_einsum_tensor_core_eligible("ab,bc->ac"));
        assert!(!is_einsum_tensor_core_eligible("ab->ba"));
        assert!(!is_einsum_tensor_core_eligible(""));
    }

    #[test]
    fn groups_sorts_and_cuts() {
        let mut reports = KernelReports::default();
        let k = |name: &str| KernelReport {
            name: name.to_owned(),
            block_dim: vec![1, 1, 1],
            grid_dim: vec![1, 1, 1],
            ..KernelReport::default()
        };
        let v = |ns| KernelValue {
            total_duration_ns: ns,
            min_duration_ns: ns,
            max_duration_ns: ns,
            occurrences: 1,
        };
        reports.insert(k("b"), v(5));
        reports.insert(k("a"), v(3));
        reports.insert(k("b"), v(2));
        reports.insert(k("c"), v(7));
        let db = reports.into_db();
        let got: Vec<_> = db
            .reports
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.total_duration_ns,
                    r.occurrences,
                    r.min_duration_ns,
                )
            })
            .collect();
        assert_eq!(got, [("b", 7, 2, 2), ("c", 7, 1, 7), ("a", 3, 1, 3)]);
    }
}

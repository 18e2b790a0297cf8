//! TPU op metrics: XLA ops whose event metadata carries what libtpu writes (program and symbol
//! ids, FLOPs, bytes, categories, framework ops, display names), the device's peaks on the plane,
//! and SparseCore planes whose modules a TensorCore op offloads to.

use profkit_xplane::constants::{self, stats};
use profkit_xplane::{StatValue, XSpace};
use profkit_xprof::proto::MemoryAccessBreakdown;
use profkit_xprof::proto::op_metrics::MemoryAccessed;
use prost::Message;

use super::*;

/// An encoded `MemoryAccessBreakdown`: `(operation type, memory space, bytes)` each.
fn breakdown(entries: &[(i32, u64, u64)]) -> Vec<u8> {
    MemoryAccessBreakdown {
        memory_accessed: entries
            .iter()
            .map(
                |&(operation_type, memory_space, bytes_accessed)| MemoryAccessed {
                    operation_type,
                    memory_space,
                    bytes_accessed,
                },
            )
            .collect(),
    }
    .encode_to_vec()
}

/// The metadata of an XLA op: `stats` on top of its program and symbol ids.
fn xla_op(
    b: &mut PlaneBuilder<'_>,
    name: &str,
    program: Option<u64>,
    symbol: Option<u64>,
    more: &[(&str, StatValue)],
) {
    let mut md = metadata(b, name);
    if let Some(p) = program {
        md.add_stat(stats::PROGRAM_ID, p);
    }
    if let Some(s) = symbol {
        md.add_stat(stats::SYMBOL_ID, s);
    }
    for (k, v) in more {
        md.add_stat(k, v.clone());
    }
}

/// One TensorCore plane with the device's peaks, XLA ops nested in time (a fusion holding a
/// convolution), ops summed across programs and occurrences, a custom call whose events carry
/// their own FLOPs and bytes, an op placed by `device_offset_ps`, ops without a symbol id or with
/// the root's, ops with and without a framework op, a display name, memory access breakdowns, and
/// a `Framework Ops` line (an op line, whose events have no ids).
pub(super) fn tpu_op_metrics() -> XSpace {
    let tpu = plane(0, "/device:TPU:0", |b| {
        b.add_stat(stats::DEVICE_TYPE_STRING, "TPU v4")
            .add_stat("peak_teraflops_per_second", 100.0)
            .add_stat("peak_hbm_bw_gigabytes_per_second", 1000.0)
            .add_stat("peak_cmem_rd_bw_gigabytes_per_second", 50.0)
            .add_stat("peak_cmem_wr_bw_gigabytes_per_second", 40.0)
            .add_stat("peak_vmem_rd_bw_gigabytes_per_second", 3000.0)
            .add_stat("peak_vmem_wr_bw_gigabytes_per_second", 2000.0)
            .add_stat("peak_spmem_rd_bw_gigabytes_per_second", 70.0)
            .add_stat("peak_spmem_wr_bw_gigabytes_per_second", 80.0)
            .add_stat("peak_sc_teraflops_per_second", 9.0)
            .add_stat("has_megacore", 1_i64)
            .add_stat("has_merged_vmem", 1_u64);
        let matmul = StatValue::Str("model/dense/MatMul:MatMul".into());
        xla_op(b, "root.0", Some(1), Some(0), &[]);
        xla_op(
            b,
            "fusion.1",
            Some(1),
            Some(10),
            &[
                ("hlo_category", StatValue::Str("loop fusion".into())),
                (stats::TF_OP, matmul.clone()),
                (stats::FLOPS, StatValue::Uint64(2_000_000)),
                (stats::BYTES_ACCESSED, StatValue::Uint64(4096)),
                ("deduplicated_name", StatValue::Str("fusion".into())),
                ("source", StatValue::Str("model.py:12".into())),
            ],
        );
        xla_op(
            b,
            "convolution.2",
            Some(1),
            Some(11),
            &[
                ("hlo_category", StatValue::Str("convolution".into())),
                (
                    stats::TF_OP,
                    StatValue::Str("model/conv/Conv2D:Conv2D".into()),
                ),
                (stats::FLOPS, StatValue::Int64(50_000_000)),
                ("model_flops", StatValue::Uint64(40_000_000)),
                (stats::BYTES_ACCESSED, StatValue::Uint64(1000)),
                (
                    "memory_access_breakdown",
                    StatValue::Bytes(breakdown(&[(2, 2, 600), (1, 1, 400)]).into()),
                ),
            ],
        );
        xla_op(
            b,
            "custom-call.3",
            Some(1),
            Some(12),
            &[
                ("hlo_category", StatValue::Str("custom-call".into())),
                (
                    stats::TF_OP,
                    StatValue::Str("jit(f)/jit(main)/custom".into()),
                ),
                (stats::FLOPS, StatValue::Uint64(7)),
            ],
        );
        xla_op(b, "no-symbol", Some(1), None, &[]);
        xla_op(
            b,
            "jit(f)/add",
            Some(2),
            Some(3),
            &[
                (stats::TF_OP, StatValue::Str("jit(f)/jit(main)/add".into())),
                (stats::FLOPS, StatValue::Uint64(1_000)),
                (stats::BYTES_ACCESSED, StatValue::Uint64(3_000_000)),
            ],
        );
        // The same framework op from another program.
        xla_op(
            b,
            "fusion.1.p2",
            Some(2),
            Some(10),
            &[
                (stats::TF_OP, matmul),
                (stats::FLOPS, StatValue::Uint64(10)),
            ],
        );
        xla_op(
            b,
            "%copy-start.5 = (f32[8]) copy-start(f32[8] %p)",
            Some(2),
            Some(4),
            &[(stats::BYTES_ACCESSED, StatValue::Uint64(64))],
        );
        metadata(b, "%copy-start.5 = (f32[8]) copy-start(f32[8] %p)")
            .set_display_name("copy-start.5");
        b.line(1)
            .set_name(constants::STEP_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("1")
            .set_offset_ps(0)
            .set_duration_ps(40 * US);
        let mut ops = b.line(2);
        ops.set_name(constants::XLA_OP_LINE_NAME)
            .set_timestamp_ns(1_000);
        ops.add_event("root.0")
            .set_offset_ps(US)
            .set_duration_ps(30 * US);
        ops.add_event("fusion.1")
            .set_offset_ps(2 * US)
            .set_duration_ps(5 * US)
            .add_stat("min_duration_ps", 1_i64);
        ops.add_event("convolution.2")
            .set_offset_ps(3 * US)
            .set_duration_ps(2 * US);
        ops.add_event("fusion.1")
            .set_offset_ps(8 * US)
            .set_duration_ps(US);
        ops.add_event("custom-call.3")
            .set_offset_ps(10 * US)
            .set_duration_ps(US)
            .add_stat(stats::FLOPS, 1_000_000_u64)
            .add_stat(stats::BYTES_ACCESSED, 500_u64);
        ops.add_event("custom-call.3")
            .set_offset_ps(12 * US)
            .set_duration_ps(2 * US)
            .add_stat(stats::FLOPS, 3_000_000_u64)
            .add_stat(stats::BYTES_ACCESSED, 700_u64);
        ops.add_event("no-symbol")
            .set_offset_ps(15 * US)
            .set_duration_ps(US);
        // Placed by its device stats (absolute picoseconds), not by its offset.
        ops.add_event("jit(f)/add")
            .set_offset_ps(16 * US)
            .set_duration_ps(US)
            .add_stat("device_offset_ps", 1_000_000_i64 + 17 * US)
            .add_stat("device_duration_ps", 3 * US);
        ops.add_event("fusion.1.p2")
            .set_offset_ps(21 * US)
            .set_duration_ps(2 * US);
        ops.add_event("%copy-start.5 = (f32[8]) copy-start(f32[8] %p)")
            .set_offset_ps(24 * US)
            .set_duration_ps(1_000);
        b.line(3)
            .set_name(constants::TENSORFLOW_OP_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("model/dense/MatMul:MatMul")
            .set_offset_ps(2 * US)
            .set_duration_ps(5 * US);
    });
    space(vec![tpu])
}

/// A TensorCore op that offloads to a SparseCore: the SparseCore plane's module (by
/// `offload_core_id` and `tc_offload_start_id`) holds nested ops, and one op outside any module.
pub(super) fn tpu_sparse_core() -> XSpace {
    let tc = plane(0, "/device:TPU:0", |b| {
        b.add_stat(stats::DEVICE_TYPE_STRING, "TPU v5p")
            .add_stat("peak_teraflops_per_second", 459.0)
            .add_stat("peak_hbm_bw_gigabytes_per_second", 2765.0);
        xla_op(
            b,
            "sparse-offload.1",
            Some(7),
            Some(1),
            &[
                (
                    stats::TF_OP,
                    StatValue::Str("model/embedding/lookup:Gather".into()),
                ),
                (stats::BYTES_ACCESSED, StatValue::Uint64(1 << 20)),
            ],
        );
        let mut ops = b.line(1);
        ops.set_name(constants::XLA_OP_LINE_NAME)
            .set_timestamp_ns(1_000);
        ops.add_event("sparse-offload.1")
            .set_offset_ps(US)
            .set_duration_ps(10 * US)
            .add_stat("offload_core_id", 0_u64)
            .add_stat("tc_offload_start_id", 5_i64);
    });
    let sc = plane(1, "/device:TPU:0 SparseCore 0", |b| {
        xla_op(b, "sc-gather", Some(7), Some(100), &[]);
        xla_op(b, "sc-inner", Some(7), Some(101), &[]);
        xla_op(b, "sc-stray", Some(7), Some(102), &[]);
        b.line(1)
            .set_name(constants::SPARSE_CORE_MODULE_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("sc-module")
            .set_offset_ps(2 * US)
            .set_duration_ps(6 * US)
            .add_stat("offload_core_id", 0_u64)
            .add_stat("tc_offload_start_id", 5_u64);
        let mut ops = b.line(2);
        ops.set_name(constants::SPARSE_CORE_OP_LINE_NAME)
            .set_timestamp_ns(1_000);
        ops.add_event("sc-gather")
            .set_offset_ps(3 * US)
            .set_duration_ps(3 * US);
        ops.add_event("sc-inner")
            .set_offset_ps(4 * US)
            .set_duration_ps(US);
        ops.add_event("sc-stray")
            .set_offset_ps(9 * US)
            .set_duration_ps(US);
    });
    space(vec![tc, sc])
}

/// The HLO module `make_tpu_fusions_hlo.py` writes: a fusion holding many opcodes, a nested
/// fusion, constants and a tuple root.
const TPU_FUSIONS_HLO: &[u8] = include_bytes!("../data/tpu_fusions.hlo.pb");

/// TensorCore ops that are fusions of the programs whose HLO protos `/host:metadata` holds (the
/// hand-made `jit_g`, and every fusion of the `jit_train_step` JAX wrote), and ops that are not
/// fusions: xprof gives each fusion op its fused instructions, with their HLO text.
pub(super) fn tpu_fusions() -> XSpace {
    const TRAIN_STEP_FUSIONS: [&str; 20] = [
        "ynn_fusion.3",
        "broadcast_maximum_fusion",
        "ynn_fusion.2",
        "add_reduce_fusion",
        "subtract_exponential_fusion",
        "wrapped_reduce",
        "negate_divide_fusion",
        "multiply_add_fusion",
        "ynn_fusion.1",
        "compare_select_fusion",
        "ynn_fusion",
        "multiply_subtract_fusion.3",
        "wrapped_reduce-window",
        "multiply_subtract_fusion.2",
        "multiply_subtract_fusion.1",
        "multiply_subtract_fusion",
        "wrapped_log",
        "subtract_select_fusion",
        "wrapped_reduce-window.1",
        "multiply_negate_fusion",
    ];
    let tpu = plane(0, "/device:TPU:0", |b| {
        b.add_stat(stats::DEVICE_TYPE_STRING, "TPU v4")
            .add_stat("peak_teraflops_per_second", 100.0)
            .add_stat("peak_hbm_bw_gigabytes_per_second", 1000.0);
        let mut ops: Vec<(&str, u64)> = vec![("fusion.10", 27), ("p.0", 27), ("fusion.11", 99)];
        ops.extend(TRAIN_STEP_FUSIONS.iter().map(|f| (*f, 26)));
        ops.push(("dot.1", 26));
        for (i, (name, program)) in ops.iter().enumerate() {
            // One metadata per program's op, named for the instruction by its display name.
            let key = format!("{name}@{program}");
            xla_op(
                b,
                &key,
                Some(*program),
                Some(i as u64 + 1),
                &[("hlo_category", StatValue::Str("loop fusion".into()))],
            );
            metadata(b, &key).set_display_name(*name);
        }
        let mut line = b.line(1);
        line.set_name(constants::XLA_OP_LINE_NAME)
            .set_timestamp_ns(1_000);
        // Each op a time of its own power of two, so that no two nodes' times tie: xprof orders
        // nodes of equal time by its hash maps' order, which changes from run to run.
        let mut at = US;
        for (i, (name, program)) in ops.iter().enumerate() {
            let duration = 1_000_i64 << i;
            line.add_event(&format!("{name}@{program}"))
                .set_offset_ps(at)
                .set_duration_ps(duration);
            at += duration + US;
        }
    });
    let metadata = plane(1, constants::METADATA_PLANE_NAME, |b| {
        for (name, id, proto) in [
            ("jit_g(27)", 27_u64, TPU_FUSIONS_HLO),
            ("jit_train_step(26)", 26, JIT_TRAIN_STEP_HLO),
        ] {
            let md_id = b.event_metadata_id(name);
            if let Some(mut md) = b.event_metadata(md_id) {
                md.add_stat("Hlo Proto", proto.to_vec());
                md.add_stat(stats::PROGRAM_ID, id);
            }
        }
    });
    space(vec![tpu, metadata])
}

/// A TPU host whose steps wait for input on the host and no infeed op on the device: a
/// TensorCore plane with three steps of 40 ms (`Steps` line, already grouped), each 17 ms busy
/// (so that the steps' active times show), and a host plane whose events of the same groups wait
/// for the iterator (`IteratorGetNext`) or enqueue infeed from the host (`InfeedEnqueueTuple`),
/// so that xprof moves part of each step's idle time to input (`MayFixTpuStepAnalysis`): 5 ms of
/// step 1's 23, all of step 2's (30 ms of input); step 3 has no host input.
pub(super) fn tpu_host_input() -> XSpace {
    const MS: i64 = 1000 * US;
    let tc = plane(0, "/device:TPU:0", |b| {
        b.add_stat(stats::DEVICE_TYPE_STRING, "TPU v4")
            .add_stat("peak_teraflops_per_second", 100.0)
            .add_stat("peak_hbm_bw_gigabytes_per_second", 1000.0);
        xla_op(b, "fusion.1", Some(7), Some(1), &[]);
        xla_op(b, "convolution.2", Some(7), Some(2), &[]);
        let mut steps = b.line(1);
        steps
            .set_name(constants::STEP_LINE_NAME)
            .set_timestamp_ns(1_000);
        for step in 0..3i64 {
            steps
                .add_event(&format!("{}", step + 1))
                .set_offset_ps(step * 40 * MS)
                .set_duration_ps(40 * MS)
                .add_stat(stats::STEP_NUM, step + 1)
                .add_stat(stats::GROUP_ID, step + 1);
        }
        let mut ops = b.line(3);
        ops.set_name(constants::XLA_OP_LINE_NAME)
            .set_timestamp_ns(1_000);
        for step in 0..3i64 {
            let at = step * 40 * MS;
            ops.add_event("fusion.1")
                .set_offset_ps(at + 2 * MS)
                .set_duration_ps(10 * MS)
                .add_stat(stats::GROUP_ID, step + 1);
            ops.add_event("convolution.2")
                .set_offset_ps(at + 20 * MS)
                .set_duration_ps(7 * MS)
                .add_stat(stats::GROUP_ID, step + 1);
        }
        let mut modules = b.line(2);
        modules
            .set_name(constants::XLA_MODULE_LINE_NAME)
            .set_timestamp_ns(1_000);
        for step in 0..3i64 {
            modules
                .add_event("jit_train_step(7)")
                .set_offset_ps(step * 40 * MS + MS)
                .set_duration_ps(30 * MS)
                .add_stat(stats::PROGRAM_ID, 7_u64)
                .add_stat(stats::GROUP_ID, step + 1);
        }
    });
    let host = plane(1, constants::HOST_PLANE_NAME, |b| {
        let mut main = b.line(1);
        main.set_name("python").set_timestamp_ns(1_000);
        for step in 0..3i64 {
            let at = step * 40 * MS;
            main.add_event("train_step")
                .set_offset_ps(at)
                .set_duration_ps(38 * MS)
                .add_stat(stats::GROUP_ID, step + 1)
                .add_stat(stats::STEP_NAME, format!("train {}", step + 1));
            if step < 2 {
                main.add_event("IteratorGetNext")
                    .set_offset_ps(at + MS)
                    .set_duration_ps((3 + 27 * step) * MS)
                    .add_stat(stats::GROUP_ID, step + 1);
            }
        }
        let mut infeed = b.line(2);
        infeed.set_name("infeed").set_timestamp_ns(1_000);
        infeed
            .add_event("infeed/InfeedEnqueueTuple:InfeedEnqueueTuple")
            .set_offset_ps(5 * MS)
            .set_duration_ps(2 * MS)
            .add_stat(stats::GROUP_ID, 1_i64);
    });
    space(vec![tc, host])
}

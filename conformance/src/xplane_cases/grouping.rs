//! Spaces as TensorFlow, JAX and the TPU runtime write them before xprof groups them: steps,
//! launches, the TPU runtime's contexts, loops, and the flows xprof adds.

use profkit_xplane::constants::{self, stats};
use profkit_xplane::{PlaneBuilder, XSpace};

use super::*;

/// A host plane and a GPU as TensorFlow writes them before xprof groups them (no `group_id`):
/// eager ops, ops in a function, a TF op on the host, launches matched by correlation id, internal
/// events, and GPU streams in an order xprof renumbers (compute first, then by event count, ties
/// broken by libstdc++'s sort), with an empty stream.
pub(super) fn gpu_ungrouped() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut t = b.line(100);
        t.set_name("python3").set_timestamp_ns(1_000);
        t.add_event("EagerExecute")
            .set_offset_ps(US)
            .set_duration_ps(10 * US)
            .add_stat("is_func", 0_i64);
        t.add_event("dense/MatMul:MatMul")
            .set_offset_ps(2 * US)
            .set_duration_ps(4 * US);
        t.add_event("cudaLaunchKernel")
            .set_offset_ps(3 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 1_u64);
        t.add_event("MemoryAllocation")
            .set_offset_ps(7 * US)
            .add_stat("bytes_allocated", 256_i64);
        t.add_event("FunctionRun")
            .set_offset_ps(20 * US)
            .set_duration_ps(20 * US);
        t.add_event("EagerExecute")
            .set_offset_ps(21 * US)
            .set_duration_ps(10 * US)
            .add_stat("is_func", 1_i64);
        t.add_event("cudaLaunchKernel")
            .set_offset_ps(22 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 2_u64);
        t.add_event("relu:Relu")
            .set_offset_ps(24 * US)
            .set_duration_ps(US);
        t.add_event("cudaMemcpyAsync")
            .set_offset_ps(50 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 3_i64);
        let mut u = b.line(101);
        u.set_name("worker").set_timestamp_ns(1_000);
        u.add_event("PrefetchProduce")
            .set_offset_ps(US)
            .set_duration_ps(US);
        u.add_event("Iterator::Prefetch")
            .set_offset_ps(3 * US)
            .set_duration_ps(US);
    });
    let gpu = plane(1, "/device:GPU:0", |b| {
        b.add_stat(stats::DEVICE_ID, 0_i64);
        let streams: [(i64, &str, u64); 6] = [
            (3, "Stream #3(MemcpyH2D)", 1),
            (7, "Stream #7(Compute)", 2),
            (5, "Stream #5(Compute)", 3),
            (9, "Stream #9(Compute)", 0),
            (11, "Stream #11(MemcpyD2H)", 1),
            (13, "Stream #13", 2),
        ];
        for (id, name, count) in streams {
            let mut l = b.line(id);
            l.set_name(name).set_timestamp_ns(1_000);
            for k in 0..count {
                l.add_event(&format!("kernel_{id}_{k}"))
                    .set_offset_ps((60 + 2 * k as i64) * US)
                    .set_duration_ps(US)
                    .add_stat(stats::CORRELATION_ID, 100 + id as u64 * 10 + k);
            }
        }
        let mut k = b.line(20);
        k.set_name("Stream #20(Compute)").set_timestamp_ns(1_000);
        k.add_event("volta_sgemm")
            .set_offset_ps(4 * US)
            .set_duration_ps(2 * US)
            .add_stat(stats::CORRELATION_ID, 1_u64);
        k.add_event("relu_kernel")
            .set_offset_ps(23 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 2_u64);
        k.add_event("MemcpyH2D")
            .set_offset_ps(51 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 3_u64)
            .add_stat(stats::MEMCPY_DETAILS, "size:64");
        k.add_event("no_correlation")
            .set_offset_ps(53 * US)
            .set_duration_ps(US);
    });
    space(vec![gpu, host])
}

/// A GPU space with step roots, as TensorFlow writes it before xprof groups it: two `train` steps
/// (`_r`, `step_num`) on the host, each launching kernels (matched by correlation id, one launch
/// with a `device_id` and a name xprof counts in `Launch Stats`'s way but starting with `cu`); on
/// the GPU, kernels of the two steps interleaved across streams, a kernel before any grouped one
/// and one after without a correlation id (xprof gives it the group before it), so that the
/// `Steps` line has runs of one group split by the other.
pub(super) fn gpu_steps() -> XSpace {
    gpu_steps_launching("cudaLaunchKernel", true)
}

/// `gpu-steps` whose launches xprof counts in a `Launch Stats` line (a name not starting with
/// `cu`, a `device_id`), the first step's only, of different lengths (an average in six digits).
pub(super) fn gpu_launch_stats() -> XSpace {
    gpu_steps_launching("LaunchKernel", false)
}

/// The space of [`gpu_steps`], launches named `launch`, the second step's with a `device_id` only
/// when `all_devices`.
pub(super) fn gpu_steps_launching(launch: &str, all_devices: bool) -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut t = b.line(100);
        t.set_name("python3").set_timestamp_ns(1_000);
        for (step, start) in [(0_i64, 10), (1, 40)] {
            t.add_event("train")
                .set_offset_ps(start * US)
                .set_duration_ps(20 * US)
                .add_stat("_r", 1_i64)
                .add_stat("step_num", step);
            t.add_event("EagerExecute")
                .set_offset_ps((start + 1) * US)
                .set_duration_ps(10 * US)
                .add_stat("is_func", step);
            for k in 0..3_u64 {
                let mut e = t.add_event(launch);
                e.set_offset_ps((start + 2 + 2 * k as i64) * US)
                    .set_duration_ps(US + (k as i64) * US / 3)
                    .add_stat(stats::CORRELATION_ID, step as u64 * 10 + k);
                if all_devices || step == 0 {
                    e.add_stat(stats::DEVICE_ID, 0_i64);
                }
            }
        }
        t.add_event(launch)
            .set_offset_ps(90 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 99_u64);
    });
    let gpu = plane(1, "/device:GPU:0", |b| {
        b.add_stat(stats::DEVICE_ID, 0_i64);
        let mut a = b.line(7);
        a.set_name("Stream #7(Compute)").set_timestamp_ns(1_000);
        a.add_event("early_kernel")
            .set_offset_ps(5 * US)
            .set_duration_ps(US);
        for k in 0..3_u64 {
            a.add_event(&format!("step0_kernel_{k}"))
                .set_offset_ps((13 + 4 * k as i64) * US)
                .set_duration_ps(3 * US)
                .add_stat(stats::CORRELATION_ID, k);
        }
        a.add_event("step0_late_kernel")
            .set_offset_ps(44 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 2_u64);
        let mut c = b.line(9);
        c.set_name("Stream #9(Compute)").set_timestamp_ns(2_000);
        for k in 0..3_u64 {
            c.add_event(&format!("step1_kernel_{k}"))
                .set_offset_ps((42 + 3 * k as i64) * US)
                .set_duration_ps(2 * US)
                .add_stat(stats::CORRELATION_ID, 10 + k);
        }
        c.add_event("after_kernel")
            .set_offset_ps(60 * US)
            .set_duration_ps(US);
        c.add_event("other_kernel")
            .set_offset_ps(92 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 99_u64);
    });
    space(vec![host, gpu])
}

/// A TPU space whose steps are grouped from the host: two `train` roots, each enqueuing a request
/// (`EnqueueRequestLocked` to `RunProgramRequest` on another thread, by `request_id` and
/// `queue_addr`) and launching a program (`DoEnqueueProgram`, whose `run_id` xprof cuts to 27
/// bits, to `CompleteCallbacks` and to the TensorCore's `XLA Modules` event with the same device
/// ordinal, `queue_id` and `run_id`), the modules' ops grouped by the module they fall in.
pub(super) fn tpu_runtime() -> XSpace {
    let high = 1_u64 << 40;
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut t = b.line(1);
        t.set_name("python3").set_timestamp_ns(1_000);
        for step in 0..2_i64 {
            let start = 10 + 40 * step;
            t.add_event("train")
                .set_offset_ps(start * US)
                .set_duration_ps(30 * US)
                .add_stat("_r", 1_i64)
                .add_stat("step_num", step);
            t.add_event("EnqueueRequestLocked")
                .set_offset_ps((start + 1) * US)
                .set_duration_ps(US)
                .add_stat("request_id", 500 + step as u64)
                .add_stat("queue_addr", 7_u64);
            t.add_event("DoEnqueueProgram")
                .set_offset_ps((start + 3) * US)
                .set_duration_ps(2 * US)
                .add_stat("device_ordinal", 0_u64)
                .add_stat("queue_id", 1_u64)
                .add_stat("run_id", high + 100 + step as u64);
        }
        let mut w = b.line(2);
        w.set_name("tpu_worker").set_timestamp_ns(1_000);
        for step in 0..2_i64 {
            let start = 10 + 40 * step;
            w.add_event("RunProgramRequest")
                .set_offset_ps((start + 2) * US)
                .set_duration_ps(US)
                .add_stat("request_id", 500 + step as u64)
                .add_stat("queue_addr", 7_u64);
            w.add_event("CompleteCallbacks")
                .set_offset_ps((start + 25) * US)
                .set_duration_ps(US)
                .add_stat("device_ordinal", 0_u64)
                .add_stat("queue_id", 1_u64)
                .add_stat("run_id", high + 100 + step as u64);
        }
    });
    let tpu = plane(1, "/device:TPU:0", |b| {
        let mut m = b.line(1);
        m.set_name("XLA Modules").set_timestamp_ns(1_000);
        for step in 0..2_i64 {
            let start = 15 + 40 * step;
            m.add_event("jit_step(123)")
                .set_offset_ps(start * US)
                .set_duration_ps(8 * US)
                .add_stat("run_id", 100 + step as u64)
                .add_stat("queue_id", 1_u64);
        }
        let mut o = b.line(2);
        o.set_name("XLA Ops").set_timestamp_ns(1_000);
        for step in 0..2_i64 {
            for k in 0..2_i64 {
                o.add_event(&format!("fusion.{k}"))
                    .set_offset_ps((16 + 40 * step + 3 * k) * US)
                    .set_duration_ps(2 * US);
            }
        }
    });
    space(vec![host, tpu])
}

/// `gpu-steps` with a `group_id` stat metadata on the host plane only: xprof still groups (a
/// space counts as grouped only when every host and device plane has one).
pub(super) fn partly_grouped() -> XSpace {
    let mut space = gpu_steps();
    if let Some(host) = space.planes.first_mut() {
        PlaneBuilder::new(host).stat_metadata_id("group_id");
    }
    space
}

/// A host plane exercising TSL's grouping rules beyond plain nesting: a `TraceContext` root
/// (level 1), `ProcessBatch` (made a level-2 root) around a nested `_r` root of the same level,
/// producer/consumer contexts across threads (one producer, two consumers), an async event that
/// nests nothing, a `graph_type` naming the group, an `iter_num` numbering it, tf.data's captured
/// function (its `id` keeps a root out), and ThreadpoolListener regions (a start without `_c`,
/// two stops after one start).
pub(super) fn host_grouping() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut t = b.line(1);
        t.set_name("main").set_timestamp_ns(1_000);
        t.add_event("TraceContext")
            .set_offset_ps(US)
            .set_duration_ps(10 * US)
            .add_stat("graph_type", "inference")
            .add_stat("iter_num", 41_i64);
        t.add_event("inside")
            .set_offset_ps(2 * US)
            .set_duration_ps(2 * US)
            .add_stat("_pt", 3_i64)
            .add_stat("_p", 77_u64);
        t.add_event("ProcessBatch")
            .set_offset_ps(20 * US)
            .set_duration_ps(10 * US);
        t.add_event("batch_step")
            .set_offset_ps(21 * US)
            .set_duration_ps(2 * US)
            .add_stat("_r", 2_i64);
        t.add_event("InstantiatedCapturedFunction::Run")
            .set_offset_ps(40 * US)
            .set_duration_ps(2 * US)
            .add_stat("id", 5_i64);
        t.add_event("data_root")
            .set_offset_ps(43 * US)
            .set_duration_ps(2 * US)
            .add_stat("_r", 1_i64)
            .add_stat("id", 5_i64);
        t.add_event("async_op")
            .set_offset_ps(3 * US)
            .set_duration_ps(US)
            .add_stat("_a", 1_i64);
        let mut w = b.line(2);
        w.set_name("tf_pool/1").set_timestamp_ns(1_000);
        w.add_event("ThreadpoolListener::StartRegion")
            .set_offset_ps(US);
        w.add_event("ThreadpoolListener::StopRegion")
            .set_offset_ps(2 * US);
        w.add_event("ThreadpoolListener::StartRegion")
            .set_offset_ps(4 * US)
            .add_stat("_ct", 3_i64)
            .add_stat("_c", 77_u64);
        w.add_event("consumer_work")
            .set_offset_ps(5 * US)
            .set_duration_ps(2 * US)
            .add_stat("_ct", 3_i64)
            .add_stat("_c", 77_u64);
        w.add_event("nested_work")
            .set_offset_ps(5 * US)
            .set_duration_ps(US);
        w.add_event("ThreadpoolListener::StopRegion")
            .set_offset_ps(8 * US);
        w.add_event("ThreadpoolListener::StopRegion")
            .set_offset_ps(9 * US);
    });
    space(vec![host])
}

/// A TPU space before grouping: a TensorCore plane whose lines xprof sorts (more than 16 events
/// with tied starts, so libstdc++'s introsort moves ties) and whose empty line it drops, a
/// grouping `Steps` line with a correlation id, an `Async XLA Ops` line, and a SparseCore plane.
pub(super) fn tpu_ungrouped() -> XSpace {
    let tpu = plane(0, "/device:TPU:0", |b| {
        b.line(1)
            .set_name(constants::STEP_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("step 1")
            .set_duration_ps(100 * US)
            .add_stat(stats::STEP_NUM, 1_i64)
            .add_stat(stats::CORRELATION_ID, 7_u64);
        let mut ops = b.line(3);
        ops.set_name(constants::XLA_OP_LINE_NAME)
            .set_timestamp_ns(1_000);
        for k in 0..24i64 {
            // Starts 40, 39, ... in pairs of equal start and duration, with distinct names.
            let start = 40 - k / 2;
            ops.add_event(&format!("op.{k}"))
                .set_offset_ps(start * US)
                .set_duration_ps((1 + k % 3) * US)
                .add_stat(stats::HLO_OP, format!("op.{k}"));
        }
        b.line(4)
            .set_name(constants::XLA_ASYNC_OP_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("all-gather-start")
            .set_offset_ps(3 * US)
            .set_duration_ps(10 * US);
        b.line(5).set_name("empty").set_timestamp_ns(1_000);
        let mut counters = b.line(constants::COUNTERS_LINE_ID);
        counters.set_name(constants::COUNTERS_LINE_NAME);
        for (t, v) in [(3, 0.5), (1, 0.25), (2, 0.75)] {
            counters
                .add_event("HBM utilization")
                .set_offset_ps(t * US)
                .add_stat("value", v);
        }
    });
    let sparse = plane(1, "/device:TPU:0 SparseCore 0", |b| {
        let mut l = b.line(1);
        l.set_name("Sparse Core Ops").set_timestamp_ns(1_000);
        l.add_event("sc.2")
            .set_offset_ps(5 * US)
            .set_duration_ps(US);
        l.add_event("sc.1")
            .set_offset_ps(2 * US)
            .set_duration_ps(US);
        b.line(2).set_name("empty").set_timestamp_ns(1_000);
    });
    space(vec![tpu, sparse])
}

/// A space with one of TensorFlow's loop ops: xprof then skips grouping (no `is_eager`), but
/// still renumbers GPU streams.
pub(super) fn loop_op() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut t = b.line(1);
        t.set_name("main").set_timestamp_ns(1_000);
        t.add_event("WhileOp-EvalCond")
            .set_offset_ps(US)
            .set_duration_ps(US);
        t.add_event("cudaLaunchKernel")
            .set_offset_ps(3 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 5_u64);
    });
    let gpu = plane(2, "/device:GPU:1", |b| {
        b.line(2)
            .set_name("Stream #2(MemcpyD2D)")
            .set_timestamp_ns(1_000)
            .add_event("copy")
            .set_offset_ps(5 * US)
            .set_duration_ps(US);
        b.line(4)
            .set_name("Stream #4(Compute)")
            .set_timestamp_ns(1_000)
            .add_event("kernel")
            .set_offset_ps(4 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 5_u64);
    });
    space(vec![host, gpu])
}

/// The flows xprof adds, at their edges: context types past TSL's last one, types past 32 bits,
/// an event that is a launch, a producer and a consumer at once, one that already has a `flow`,
/// a `correlation_id` that is not a `uint64`, producers without consumers, and the same
/// correlation on a host and a device plane.
pub(super) fn flows() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut t = b.line(1);
        t.set_name("main").set_timestamp_ns(1_000);
        let mut at = 0;
        let mut next = || {
            at += 2 * US;
            at
        };
        // Producer/consumer pairs of each context type from 0 to 20, and types with high bits.
        for ty in [
            0_i64,
            1,
            9,
            12,
            13,
            14,
            15,
            16,
            17,
            18,
            19,
            20,
            63,
            64,
            (1 << 32) + 2,
        ] {
            t.add_event(&format!("produce {ty}"))
                .set_offset_ps(next())
                .set_duration_ps(US)
                .add_stat("_pt", ty)
                .add_stat("_p", 1000_u64 + ty as u64 % 1000);
            t.add_event(&format!("consume {ty}"))
                .set_offset_ps(next())
                .set_duration_ps(US)
                .add_stat("_ct", ty)
                .add_stat("_c", 1000_u64 + ty as u64 % 1000);
        }
        // Generic contexts of one id: types past the last one meet type 0.
        t.add_event("generic producer")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("_pt", 0_i64)
            .add_stat("_p", 7_u64);
        t.add_event("far consumer")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("_ct", 40_i64)
            .add_stat("_c", 7_u64);
        // One event of every kind at once, its stats in the reverse order.
        t.add_event("all at once")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("_c", 8_u64)
            .add_stat("_ct", 2_i64)
            .add_stat("_p", 9_u64)
            .add_stat("_pt", 2_i64)
            .add_stat(stats::CORRELATION_ID, 5_u64);
        t.add_event("producer and launch")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 6_u64)
            .add_stat("_pt", 2_i64)
            .add_stat("_p", 8_u64);
        t.add_event("launch with a flow")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat(stats::FLOW, 4_611_686_018_427_387_906_u64)
            .add_stat(stats::CORRELATION_ID, 10_u64);
        t.add_event("a flow alone")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat(stats::FLOW, 4_611_686_018_427_387_906_u64);
        t.add_event("signed launch")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 11_i64);
        t.add_event("string launch")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, "12");
        t.add_event("type without id")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("_pt", 2_i64);
        t.add_event("signed id")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("_ct", 2_i64)
            .add_stat("_c", 9_i64);
        t.add_event("launch 5")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 5_u64);
    });
    let gpu = plane(1, "/device:GPU:0", |b| {
        let mut l = b.line(7);
        l.set_name("Stream #7(Compute)").set_timestamp_ns(1_000);
        for (k, correlation) in [5_u64, 6, 10, 13].into_iter().enumerate() {
            l.add_event(&format!("kernel {correlation}"))
                .set_offset_ps((100 + 2 * k as i64) * US)
                .set_duration_ps(US)
                .add_stat(stats::CORRELATION_ID, correlation);
        }
        l.add_event("signed kernel")
            .set_offset_ps(120 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 11_i64);
        l.add_event("device consumer")
            .set_offset_ps(122 * US)
            .set_duration_ps(US)
            .add_stat("_ct", 2_i64)
            .add_stat("_c", 9_u64);
    });
    space(vec![host, gpu])
}

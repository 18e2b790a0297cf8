//! The XSpace cases we build ourselves, written by `cargo run -p conformance --bin make-xplane-cases`
//! (or by `BLESS=1 cargo test -p conformance`) into `conformance/xplane/<name>/input.xplane.pb`.
//!
//! Each function builds one case with [`PlaneBuilder`] (or, for the invalid and undecodable cases,
//! by editing messages and bytes directly). Everything is deterministic: the same code gives the
//! same bytes. Valid cases use session-relative line timestamps, as files meant for xprof must.

use profkit_xplane::constants::{self, stats};
use profkit_xplane::{
    EventMetadataBuilder, PlaneBuilder, StatValue, XEvent, XEventMetadata, XPlane, XSpace, XStat,
    XStatMetadata, encode, x_event, x_stat,
};

/// One generated case.
pub struct Case {
    /// The case directory name.
    pub name: &'static str,
    /// The encoded input.
    pub input: Vec<u8>,
}

/// Every generated case, in a fixed order.
pub fn cases() -> Vec<Case> {
    let spaces: Vec<(&'static str, XSpace)> = vec![
        ("all-fields", all_fields()),
        ("stat-kinds", stat_kinds()),
        ("num-occurrences", num_occurrences()),
        ("display-fallbacks", display_fallbacks()),
        ("counter-line", counter_line()),
        ("empty-planes", empty_planes()),
        ("empty-space", XSpace::default()),
        ("gpu-device", gpu_device()),
        ("tpu-device", tpu_device()),
        ("custom-device", custom_device()),
        ("device-priority", device_priority()),
        ("host-planes", host_planes()),
        ("nested-events", nested_events()),
        ("task-environment", task_environment()),
        ("metadata-stats", metadata_stats()),
        ("invalid-dangling-ids", invalid_dangling_ids()),
        ("invalid-map-key-mismatch", invalid_map_key_mismatch()),
        ("invalid-partial-overlap", invalid_partial_overlap()),
        ("invalid-picosecond-overflow", invalid_picosecond_overflow()),
        ("invalid-unset-stat-value", invalid_unset_stat_value()),
        ("invalid-negative-values", invalid_negative_values()),
        ("gpu-ungrouped", gpu_ungrouped()),
        ("tpu-ungrouped", tpu_ungrouped()),
        ("loop-op", loop_op()),
        ("gpu-steps", gpu_steps()),
        ("gpu-launch-stats", gpu_launch_stats()),
        ("host-grouping", host_grouping()),
        ("partly-grouped", partly_grouped()),
        ("tpu-runtime", tpu_runtime()),
        ("gpu-derived", gpu_derived()),
        ("tpu-derived", tpu_derived()),
        ("gpu-hlo", gpu_hlo()),
        ("gpu-scope-ranges", gpu_scope_ranges()),
        ("gpu-cuda-graph", gpu_cuda_graph()),
        ("gpu-many-streams", gpu_many_streams()),
        ("gpu-steps-derived", gpu_steps_derived()),
        ("gpu-steps-ties", gpu_steps_ties()),
        ("grouped-with-metadata", grouped_with_metadata()),
        ("flows", flows()),
    ];
    let mut cases: Vec<Case> = spaces
        .into_iter()
        .map(|(name, space)| Case {
            name,
            input: encode(&space),
        })
        .collect();
    cases.push(Case {
        name: "unknown-fields",
        input: unknown_fields(),
    });
    cases.extend(error_cases());
    cases
}

/// A host plane and a GPU as TensorFlow writes them before xprof groups them (no `group_id`):
/// eager ops, ops in a function, a TF op on the host, launches matched by correlation id, internal
/// events, and GPU streams in an order xprof renumbers (compute first, then by event count, ties
/// broken by libstdc++'s sort), with an empty stream.
fn gpu_ungrouped() -> XSpace {
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
fn gpu_steps() -> XSpace {
    gpu_steps_launching("cudaLaunchKernel", true)
}

/// `gpu-steps` whose launches xprof counts in a `Launch Stats` line (a name not starting with
/// `cu`, a `device_id`), the first step's only, of different lengths (an average in six digits).
fn gpu_launch_stats() -> XSpace {
    gpu_steps_launching("LaunchKernel", false)
}

/// The space of [`gpu_steps`], launches named `launch`, the second step's with a `device_id` only
/// when `all_devices`.
fn gpu_steps_launching(launch: &str, all_devices: bool) -> XSpace {
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
fn tpu_runtime() -> XSpace {
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
fn partly_grouped() -> XSpace {
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
fn host_grouping() -> XSpace {
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
fn tpu_ungrouped() -> XSpace {
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
fn loop_op() -> XSpace {
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

/// One microsecond in picoseconds.
const US: i64 = 1_000_000;

/// A plane with `id` and `name`, filled in by `f`.
/// The flows xprof adds, at their edges: context types past TSL's last one, types past 32 bits,
/// an event that is a launch, a producer and a consumer at once, one that already has a `flow`,
/// a `correlation_id` that is not a `uint64`, producers without consumers, and the same
/// correlation on a host and a device plane.
fn flows() -> XSpace {
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

fn plane(id: i64, name: &str, f: impl FnOnce(&mut PlaneBuilder<'_>)) -> XPlane {
    let mut plane = XPlane::default();
    let mut builder = PlaneBuilder::new(&mut plane);
    builder.set_id(id).set_name(name);
    f(&mut builder);
    plane
}

/// The builder of the event metadata named `name`, created if missing.
fn metadata<'b>(builder: &'b mut PlaneBuilder<'_>, name: &str) -> EventMetadataBuilder<'b> {
    let id = builder.event_metadata_id(name);
    match builder.event_metadata(id) {
        Some(md) => md,
        None => unreachable!("event metadata {id} was just interned"),
    }
}

fn describe(plane: &mut XPlane, stat: &str, description: &str) {
    for md in plane.stat_metadata.values_mut() {
        if md.name == stat {
            md.description = description.to_owned();
        }
    }
}

fn space(planes: Vec<XPlane>) -> XSpace {
    XSpace {
        planes,
        ..Default::default()
    }
}

/// Every field of every message holds a value that is not its default at least once; both
/// members of `XEvent.data` are used, and one event leaves it unset.
fn all_fields() -> XSpace {
    let mut host = plane(3, constants::HOST_PLANE_NAME, |b| {
        b.add_stat("host_os", "linux");
        let child = b.event_metadata_id("child_op");
        metadata(b, "parent_op")
            .set_display_name("Parent")
            .set_metadata(vec![0x08, 0x01, 0xff])
            .add_stat("kind", StatValue::Ref("compute".into()))
            .add_child(child);
        let mut line = b.line(11);
        line.set_name("worker/11")
            .set_display_name("Worker")
            .set_display_id(7)
            .set_timestamp_ns(2_000)
            .set_duration_ps(40 * US);
        line.add_event("parent_op")
            .set_offset_ps(US)
            .set_duration_ps(20 * US)
            .add_stat(stats::STEP_NUM, 1_i64);
        line.add_event("child_op")
            .set_offset_ps(2 * US)
            .set_duration_ps(5 * US)
            .add_stat(stats::BYTES_ACCESSED, 4096_u64);
        let mut aggregated = b.line(12);
        aggregated.set_name("aggregated").set_timestamp_ns(2_000);
        aggregated
            .add_event("parent_op")
            .set_num_occurrences(4)
            .set_duration_ps(3 * US);
    });
    describe(&mut host, stats::STEP_NUM, "the training step");
    // An event whose `data` oneof is unset: it starts at the line's timestamp.
    let unset_id = host.event_metadata.keys().copied().max().unwrap_or(0) + 1;
    host.event_metadata.insert(
        unset_id,
        XEventMetadata {
            id: unset_id,
            name: "no_offset".into(),
            ..Default::default()
        },
    );
    if let Some(line) = host.lines.first_mut() {
        line.events.push(XEvent {
            metadata_id: unset_id,
            data: None,
            duration_ps: 500_000,
            stats: Vec::new(),
        });
    }
    XSpace {
        planes: vec![host],
        errors: vec![
            "an error the profiler recorded".into(),
            "a second error".into(),
        ],
        warnings: vec!["a warning the profiler recorded".into()],
        hostnames: vec!["allfields".into(), "second-host".into()],
    }
}

/// Every stat value kind, on the plane, on event metadata and on events, with zero and extreme
/// values that are set (and so must be written).
fn stat_kinds() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        b.add_stat("plane_double", 2.5)
            .add_stat("plane_uint64", 0_u64)
            .add_stat("plane_int64", -3_i64)
            .add_stat("plane_str", "")
            .add_stat("plane_bytes", vec![0_u8, 1, 2])
            .add_stat("plane_ref", StatValue::Ref("plane interned".into()));
        metadata(b, "metadata_with_every_kind")
            .add_stat("md_double", 0.25)
            .add_stat("md_uint64", 7_u64)
            .add_stat("md_int64", 0_i64)
            .add_stat("md_str", "from metadata")
            .add_stat("md_bytes", Vec::<u8>::new())
            .add_stat("md_ref", StatValue::Ref("metadata interned".into()));
        let mut line = b.line(1);
        line.set_name("stats").set_timestamp_ns(1_000);
        let mut at = 0;
        let mut next = || {
            at += 2 * US;
            at
        };
        line.add_event("doubles")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("d_one_and_half", 1.5)
            .add_stat("d_zero", 0.0)
            .add_stat("d_negative_zero", -0.0)
            .add_stat("d_tenth", 0.1)
            .add_stat("d_large", 123_456_789.0)
            .add_stat("d_huge", 1e300)
            .add_stat("d_tiny", 5e-324)
            .add_stat("d_negative", -2.75)
            .add_stat("d_nan", f64::NAN)
            .add_stat("d_inf", f64::INFINITY)
            .add_stat("d_neg_inf", f64::NEG_INFINITY)
            .add_stat("d_from_f32", 0.1_f32);
        line.add_event("uint64s")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("u_zero", 0_u64)
            .add_stat("u_one", 1_u64)
            .add_stat("u_high_bit", 1_u64 << 63)
            .add_stat("u_max", u64::MAX)
            .add_stat("u_from_u32", u32::MAX);
        line.add_event("int64s")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("i_zero", 0_i64)
            .add_stat("i_minus_one", -1_i64)
            .add_stat("i_min", i64::MIN)
            .add_stat("i_max", i64::MAX)
            .add_stat("i_bool_true", true)
            .add_stat("i_bool_false", false)
            .add_stat("i_from_i32", i32::MIN);
        line.add_event("strings")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("s_empty", "")
            .add_stat("s_ascii", "hello")
            .add_stat(
                "s_unicode",
                "h\u{e9}llo \u{2713} \u{65e5}\u{672c} \u{1f680}",
            )
            .add_stat(
                "s_escapes",
                "quote\" backslash\\ newline\n tab\t nul\u{0} bell\u{7}",
            )
            .add_stat("s_number_like", "42");
        line.add_event("bytes")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("b_empty", Vec::<u8>::new())
            .add_stat("b_binary", vec![0_u8, 1, 0x7f, 0x80, 0xff])
            .add_stat("b_text", b"text bytes".to_vec());
        line.add_event("refs")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("r_interned", StatValue::Ref("an interned string".into()))
            .add_stat("r_again", StatValue::Ref("an interned string".into()))
            .add_stat("r_empty", StatValue::Ref(String::new()))
            // Interning shares the stat names' table: this refers to the stat named `s_ascii`.
            .add_stat("r_stat_name", StatValue::Ref("s_ascii".into()));
        line.add_event("metadata_with_every_kind")
            .set_offset_ps(next())
            .set_duration_ps(US)
            .add_stat("event_own", 1_i64);
    });
    space(vec![host])
}

/// Aggregated events (`num_occurrences`, no offset), zero included, beside timed events.
fn num_occurrences() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut timed = b.line(1);
        timed.set_name("timed").set_timestamp_ns(1_000);
        timed
            .add_event("matmul")
            .set_offset_ps(US)
            .set_duration_ps(4 * US);
        timed
            .add_event("relu")
            .set_offset_ps(6 * US)
            .set_duration_ps(US);
        let mut aggregated = b.line(2);
        aggregated.set_name("aggregated").set_timestamp_ns(1_000);
        aggregated
            .add_event("matmul")
            .set_num_occurrences(3)
            .set_duration_ps(12 * US)
            .add_stat(stats::FLOPS, 3_000_u64);
        aggregated
            .add_event("relu")
            .set_num_occurrences(1)
            .set_duration_ps(US);
        aggregated.add_event("never_ran").set_num_occurrences(0);
        aggregated
            .add_event("many")
            .set_num_occurrences(i64::from(u32::MAX) + 1)
            .set_duration_ps(7);
    });
    space(vec![host])
}

/// Line display ids and names, event display names, `step_name` renaming, unnamed metadata.
fn display_fallbacks() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        metadata(b, "long.qualified.Name").set_display_name("Name");
        metadata(b, "step_with_display").set_display_name("Displayed step");
        let unnamed = b.new_event_metadata();
        {
            let mut plain = b.line(5);
            plain.set_name("thread-5").set_timestamp_ns(1_000);
            plain
                .add_event("plain_name")
                .set_offset_ps(0)
                .set_duration_ps(US);
            plain
                .add_event("long.qualified.Name")
                .set_offset_ps(2 * US)
                .set_duration_ps(US);
            plain
                .add_event("train")
                .set_offset_ps(4 * US)
                .set_duration_ps(US)
                .add_stat(stats::STEP_NAME, "Step 42");
            plain
                .add_event("train_ref")
                .set_offset_ps(6 * US)
                .set_duration_ps(US)
                .add_stat(stats::STEP_NAME, StatValue::Ref("Step 43".into()));
            plain
                .add_event("step_with_display")
                .set_offset_ps(8 * US)
                .set_duration_ps(US)
                .add_stat(stats::STEP_NAME, "Step 44");
            plain
                .add_event_with_metadata_id(unnamed)
                .set_offset_ps(10 * US)
                .set_duration_ps(US);
        }
        b.line(6)
            .set_name("thread-6")
            .set_display_name("Shown as 60")
            .set_display_id(60)
            .set_timestamp_ns(1_000)
            .add_event("on_60")
            .set_duration_ps(US);
        b.line(7)
            .set_timestamp_ns(1_000)
            .add_event("on_unnamed_line")
            .set_duration_ps(US);
        b.line(8)
            .set_name("named-8")
            .set_display_name("Display 8")
            .set_timestamp_ns(1_000)
            .add_event("on_8")
            .set_duration_ps(US);
        b.line(9)
            .set_name("named-9")
            .set_display_id(90)
            .set_timestamp_ns(1_000)
            .add_event("on_90")
            .set_duration_ps(US);
    });
    space(vec![host])
}

/// The counter line: `_counters_`, id `i64::MAX`, timestamp 0, instant events carrying values.
fn counter_line() -> XSpace {
    let tpu = plane(0, "/device:TPU:0", |b| {
        b.line(1)
            .set_name(constants::XLA_OP_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("fusion.1")
            .set_offset_ps(US)
            .set_duration_ps(3 * US);
        let mut counters = b.line(constants::COUNTERS_LINE_ID);
        counters
            .set_name(constants::COUNTERS_LINE_NAME)
            .set_timestamp_ns(0);
        for (i, value) in [0.0, 0.5, 0.75, 0.25].into_iter().enumerate() {
            counters
                .add_event("HBM utilization")
                .set_offset_ps((i as i64 + 1) * US)
                .add_stat("value", value);
        }
        for (i, value) in [1_u64 << 20, 3 << 20].into_iter().enumerate() {
            counters
                .add_event("memory in use")
                .set_offset_ps((2 * i as i64 + 1) * US)
                .add_stat("value", value);
        }
        counters
            .add_event("queue depth")
            .set_offset_ps(2 * US)
            .add_stat("value", -1_i64);
    });
    space(vec![tpu])
}

/// Planes without lines, lines without events, a plane without a name.
fn empty_planes() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |_| {});
    let gpu = plane(1, "/device:GPU:0", |b| {
        b.line(1).set_name("Stream #1");
        b.line(2)
            .set_name("Stream #2")
            .set_timestamp_ns(5_000)
            .set_duration_ps(US);
    });
    let metadata_only = plane(2, "/device:GPU:1", |b| {
        b.event_metadata_id("unused_kernel");
        b.stat_metadata_id("unused_stat");
    });
    space(vec![host, gpu, metadata_only, XPlane::default()])
}

/// A host thread launching kernels on `/device:GPU:0` (streams on lines 2 and 9), correlated.
fn gpu_device() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut thread = b.line(1234);
        thread.set_name("python3").set_timestamp_ns(1_000);
        thread
            .add_event("train_step")
            .set_offset_ps(0)
            .set_duration_ps(30 * US)
            .add_stat(stats::STEP_NUM, 1_i64)
            .add_stat(stats::GROUP_ID, 0_i64);
        thread
            .add_event("cudaLaunchKernel")
            .set_offset_ps(2 * US)
            .set_duration_ps(3 * US)
            .add_stat(stats::CORRELATION_ID, 101_u64)
            .add_stat(stats::GROUP_ID, 0_i64);
        thread
            .add_event("cudaMemcpyAsync")
            .set_offset_ps(6 * US)
            .set_duration_ps(2 * US)
            .add_stat(stats::CORRELATION_ID, 102_u64)
            .add_stat(stats::GROUP_ID, 0_i64);
    });
    let gpu = plane(1, "/device:GPU:0", |b| {
        b.add_stat(stats::DEVICE_ID, 0_i64)
            .add_stat(stats::CLOCK_RATE, 1_410_000_u64)
            .add_stat(stats::CORE_COUNT, 108_u64)
            .add_stat(stats::MEMORY_BANDWIDTH, 1_555_000_000_000_u64)
            .add_stat(stats::MEMORY_SIZE, 42_505_273_344_u64)
            .add_stat(stats::DEVICE_TYPE_STRING, "A100");
        let mut compute = b.line(2);
        compute
            .set_name("Stream #2(Compute)")
            .set_timestamp_ns(1_000);
        compute
            .add_event("volta_sgemm_128x64_nn")
            .set_offset_ps(10 * US)
            .set_duration_ps(8 * US)
            .add_stat(stats::CORRELATION_ID, 101_u64)
            .add_stat(stats::GROUP_ID, 0_i64)
            .add_stat(
                stats::KERNEL_DETAILS,
                "regs:64 static_shared:0 dynamic_shared:16384 grid:8,4,1 block:256,1,1 occ_pct:50",
            )
            .add_stat(stats::TF_OP, "dense/MatMul:MatMul");
        let mut memcpy = b.line(9);
        memcpy
            .set_name("Stream #9(MemcpyH2D)")
            .set_timestamp_ns(1_000);
        memcpy
            .add_event("MemcpyH2D")
            .set_offset_ps(8 * US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 102_u64)
            .add_stat(stats::GROUP_ID, 0_i64)
            .add_stat(
                stats::MEMCPY_DETAILS,
                "kind_src:pinned kind_dst:device size:4096",
            );
    });
    space(vec![host, gpu])
}

/// A TPU plane with the XLA lines, hidden stats and `Async XLA Ops`, beside `/host:TPU-runtime`.
fn tpu_device() -> XSpace {
    let tpu = plane(0, "/device:TPU:0", |b| {
        b.add_stat(stats::DEVICE_ID, 0_i64)
            .add_stat(stats::CORE_COUNT, 1_u64);
        b.line(1)
            .set_name(constants::STEP_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("1")
            .set_duration_ps(20 * US)
            .add_stat(stats::STEP_NUM, 1_i64)
            .add_stat(stats::GROUP_ID, 1_i64);
        b.line(2)
            .set_name(constants::XLA_MODULE_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("jit_train_step(42)")
            .set_offset_ps(US)
            .set_duration_ps(18 * US)
            .add_stat(stats::HLO_MODULE, "jit_train_step")
            .add_stat(stats::PROGRAM_ID, 42_u64);
        let mut ops = b.line(3);
        ops.set_name(constants::XLA_OP_LINE_NAME)
            .set_timestamp_ns(1_000);
        ops.add_event("fusion.1")
            .set_offset_ps(2 * US)
            .set_duration_ps(5 * US)
            .add_stat(stats::HLO_OP, "fusion.1")
            .add_stat(stats::FLOPS, 1_000_000_u64)
            .add_stat(stats::BYTES_ACCESSED, 65_536_u64)
            .add_stat(stats::PROGRAM_ID, 42_u64)
            .add_stat(stats::SYMBOL_ID, 7_u64)
            .add_stat("_pt", 1_i64)
            .add_stat("_p", 2_i64)
            .add_stat("_ct", 3_i64)
            .add_stat("_c", 4_i64)
            .add_stat("_r", 1_i64);
        ops.add_event("convolution.2")
            .set_offset_ps(8 * US)
            .set_duration_ps(6 * US)
            .add_stat(stats::HLO_OP, "convolution.2")
            .add_stat(stats::TF_OP, "model/conv2d/Conv2D:Conv2D");
        b.line(4)
            .set_name(constants::XLA_ASYNC_OP_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("all-reduce-start")
            .set_offset_ps(3 * US)
            .set_duration_ps(10 * US);
        b.line(5)
            .set_name(constants::TENSORFLOW_NAME_SCOPE_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("model")
            .set_offset_ps(2 * US)
            .set_duration_ps(12 * US);
        b.line(6)
            .set_name(constants::TENSORFLOW_OP_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("model/conv2d/Conv2D:Conv2D")
            .set_offset_ps(8 * US)
            .set_duration_ps(6 * US);
        b.line(7)
            .set_name(constants::SOURCE_LINE_NAME)
            .set_timestamp_ns(1_000)
            .add_event("train.py:17")
            .set_offset_ps(2 * US)
            .set_duration_ps(12 * US);
    });
    let runtime = plane(1, constants::TPU_RUNTIME_PLANE_NAME, |b| {
        b.line(1)
            .set_name("tpu runtime")
            .set_timestamp_ns(1_000)
            .add_event("ExecuteProgram")
            .set_duration_ps(2 * US);
    });
    space(vec![tpu, runtime])
}

/// Pluggable devices: two `/device:CUSTOM:` planes.
fn custom_device() -> XSpace {
    let custom = |index: i64| {
        plane(
            10 + index,
            &format!("{}{index}", constants::CUSTOM_PLANE_PREFIX),
            |b| {
                b.add_stat(stats::DEVICE_TYPE_STRING, "MyAccelerator");
                let mut line = b.line(1);
                line.set_name("Stream #1")
                    .set_display_name("Compute stream")
                    .set_timestamp_ns(1_000 + 500 * index);
                line.add_event("kernel_a")
                    .set_offset_ps(0)
                    .set_duration_ps(123_456)
                    .add_stat(stats::CORRELATION_ID, 42_u64 + index as u64);
                line.add_event("kernel_b")
                    .set_offset_ps(US)
                    .set_duration_ps(0);
            },
        )
    };
    space(vec![custom(0), custom(1)])
}

/// GPU, TPU and CUSTOM planes together: the trace viewer shows only the GPU ones.
fn device_priority() -> XSpace {
    let device = |id: i64, name: &str| {
        plane(id, name, |b| {
            b.line(1)
                .set_name("Stream #1")
                .set_timestamp_ns(1_000)
                .add_event("kernel")
                .set_duration_ps(US);
        })
    };
    space(vec![
        device(1, "/device:CUSTOM:0"),
        device(2, "/device:TPU:0"),
        device(3, "/device:GPU:0"),
        device(4, "/device:GPU:1"),
    ])
}

/// `/host:CPU` with several threads beside the host planes the trace viewer does not show.
fn host_planes() -> XSpace {
    let cpu = plane(0, constants::HOST_PLANE_NAME, |b| {
        for (tid, name) in [(100_i64, "main"), (101, "worker-1"), (102, "worker-2")] {
            let mut line = b.line(tid);
            line.set_name(name).set_timestamp_ns(1_000 * tid);
            line.add_event("SessionRun")
                .set_offset_ps(0)
                .set_duration_ps(10 * US);
            line.add_event("ExecutorState::Process")
                .set_offset_ps(US)
                .set_duration_ps(5 * US)
                .add_stat(stats::TF_OP, "model/dense/MatMul:MatMul");
        }
    });
    let other = |id: i64, name: &str| {
        plane(id, name, |b| {
            b.line(1)
                .set_name("activity")
                .set_timestamp_ns(1_000)
                .add_event("something")
                .set_duration_ps(US);
        })
    };
    space(vec![
        cpu,
        other(1, constants::CUPTI_DRIVER_API_PLANE_NAME),
        other(2, constants::PYTHON_TRACER_PLANE_NAME),
        other(3, constants::METADATA_PLANE_NAME),
        other(4, constants::TPU_RUNTIME_PLANE_NAME),
    ])
}

/// Nesting as TSL sorts it: deep nesting, equal starts (longer first), equal spans, instants at
/// the edges, adjacent siblings.
fn nested_events() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("nesting").set_timestamp_ns(1_000);
        let spans: [(&str, i64, i64); 10] = [
            ("level0", 0, 100),
            ("level1", 0, 60),
            ("level1_same_span", 0, 60),
            ("level2", 10, 30),
            ("instant_at_start", 10, 0),
            ("level3", 15, 5),
            ("instant_at_end", 40, 0),
            ("adjacent_a", 60, 20),
            ("adjacent_b", 80, 20),
            ("instant_after", 100, 0),
        ];
        for (name, start, duration) in spans {
            line.add_event(name)
                .set_offset_ps(start * US)
                .set_duration_ps(duration * US);
        }
    });
    space(vec![host])
}

/// TensorFlow's `Task Environment` plane with the session's start and stop times.
fn task_environment() -> XSpace {
    let env = plane(0, constants::TASK_ENV_PLANE_NAME, |b| {
        b.add_stat(stats::PROFILE_START_TIME, 1_700_000_000_000_000_000_u64)
            .add_stat(stats::PROFILE_STOP_TIME, 1_700_000_002_000_000_000_u64)
            .add_stat("environment_version", 1_i64);
    });
    let host = plane(1, constants::HOST_PLANE_NAME, |b| {
        b.line(1)
            .set_name("main")
            .set_timestamp_ns(1_000)
            .add_event("work")
            .set_duration_ps(US);
    });
    space(vec![env, host])
}

/// Event metadata with stats (shown before the event's own), children, opaque bytes.
fn metadata_stats() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let leaf = b.event_metadata_id("leaf");
        let middle = b.event_metadata_id("middle");
        metadata(b, "middle")
            .add_stat("level", 1_i64)
            .add_stat(stats::FLOPS, 10_u64)
            .add_child(leaf);
        metadata(b, "root")
            .set_display_name("Root op")
            .set_metadata(b"opaque metadata".to_vec())
            .add_stat("level", 0_i64)
            .add_stat(stats::HLO_MODULE, StatValue::Ref("module_a".into()))
            .add_stat("shared", "from metadata")
            .add_child(middle)
            .add_child(leaf);
        metadata(b, "leaf")
            .set_or_add_stat("level", 2_i64)
            .set_or_add_stat("level", 3_i64);
        let mut line = b.line(1);
        line.set_name("ops").set_timestamp_ns(1_000);
        line.add_event("root")
            .set_duration_ps(10 * US)
            .add_stat("shared", "from event")
            .add_stat("own", 1.0);
        line.add_event("middle")
            .set_offset_ps(US)
            .set_duration_ps(5 * US);
        line.add_event("leaf")
            .set_offset_ps(2 * US)
            .set_duration_ps(US)
            .set_or_add_stat("count", 1_u64)
            .set_or_add_stat("count", 2_u64);
    });
    space(vec![host])
}

/// A small valid host plane to break in the invalid cases.
fn base_plane() -> XPlane {
    plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("main").set_timestamp_ns(1_000);
        line.add_event("op")
            .set_duration_ps(4 * US)
            .add_stat(stats::STEP_NUM, 1_i64);
    })
}

fn push_event(plane: &mut XPlane, event: XEvent) {
    if let Some(line) = plane.lines.first_mut() {
        line.events.push(event);
    }
}

/// Ids that resolve to nothing: event metadata, stat metadata, ref value, child.
fn invalid_dangling_ids() -> XSpace {
    let mut p = base_plane();
    push_event(
        &mut p,
        XEvent {
            metadata_id: 99,
            data: Some(x_event::Data::OffsetPs(5 * US)),
            duration_ps: US,
            stats: vec![
                XStat {
                    metadata_id: 98,
                    value: Some(x_stat::Value::Int64Value(1)),
                },
                XStat {
                    metadata_id: 1,
                    value: Some(x_stat::Value::RefValue(97)),
                },
            ],
        },
    );
    if let Some(md) = p.event_metadata.get_mut(&1) {
        md.child_id.push(96);
    }
    p.stats.push(XStat {
        metadata_id: 95,
        value: Some(x_stat::Value::StrValue(
            "plane stat without metadata".into(),
        )),
    });
    space(vec![p])
}

/// Metadata map keys that differ from the ids inside.
fn invalid_map_key_mismatch() -> XSpace {
    let mut p = base_plane();
    p.event_metadata.insert(
        5,
        XEventMetadata {
            id: 6,
            name: "keyed 5, says 6".into(),
            ..Default::default()
        },
    );
    p.stat_metadata.insert(
        7,
        XStatMetadata {
            id: 8,
            name: "keyed 7, says 8".into(),
            description: String::new(),
        },
    );
    space(vec![p])
}

/// Two events that overlap without nesting, and a third that overlaps the second.
fn invalid_partial_overlap() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("overlapping").set_timestamp_ns(1_000);
        line.add_event("a")
            .set_offset_ps(0)
            .set_duration_ps(10 * US);
        line.add_event("b")
            .set_offset_ps(5 * US)
            .set_duration_ps(10 * US);
        line.add_event("c")
            .set_offset_ps(12 * US)
            .set_duration_ps(10 * US);
    });
    space(vec![host])
}

/// Epoch line timestamps: `timestamp_ns * 1000` does not fit in `i64` picoseconds.
fn invalid_picosecond_overflow() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("epoch timestamps")
            .set_timestamp_ns(1_700_000_000_000_000_000);
        line.add_event("op").set_offset_ps(US).set_duration_ps(US);
        let mut edge = b.line(2);
        edge.set_name("offset overflow").set_timestamp_ns(1_000);
        edge.add_event("late")
            .set_offset_ps(i64::MAX - 10)
            .set_duration_ps(US);
    });
    space(vec![host])
}

/// Stats with no value set, on the plane, on event metadata and on an event.
fn invalid_unset_stat_value() -> XSpace {
    let mut p = base_plane();
    let unset = |metadata_id| XStat {
        metadata_id,
        value: None,
    };
    p.stats.push(unset(1));
    if let Some(md) = p.event_metadata.get_mut(&1) {
        md.stats.push(unset(1));
    }
    if let Some(event) = p.lines.first_mut().and_then(|l| l.events.first_mut()) {
        event.stats.push(unset(1));
    }
    space(vec![p])
}

/// A negative duration and a negative occurrence count.
fn invalid_negative_values() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("negative").set_timestamp_ns(1_000);
        line.add_event("backwards")
            .set_offset_ps(5 * US)
            .set_duration_ps(-US);
        line.add_event("negative_count")
            .set_num_occurrences(-2)
            .set_duration_ps(US);
    });
    space(vec![host])
}

// Raw protobuf, for the cases no message can express.

const VARINT: u64 = 0;
const LEN: u64 = 2;

fn varint(mut value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
    out
}

fn tag(field: u64, wire_type: u64) -> Vec<u8> {
    varint(field << 3 | wire_type)
}

fn varint_field(field: u64, value: u64) -> Vec<u8> {
    [tag(field, VARINT), varint(value)].concat()
}

fn len_field(field: u64, body: &[u8]) -> Vec<u8> {
    [tag(field, LEN), varint(body.len() as u64), body.to_vec()].concat()
}

/// Fields the schema does not have (and the reserved XLine fields 5 to 8) at every level: the
/// reader skips them, so the decoded space is the one without them.
fn unknown_fields() -> Vec<u8> {
    let mut p = base_plane();
    let line = p.lines.remove(0);
    let line_bytes = [
        encode_line(&line),
        varint_field(5, 1),
        len_field(6, b"reserved"),
        varint_field(7, 3),
        [tag(8, 1), 8_u64.to_le_bytes().to_vec()].concat(),
    ]
    .concat();
    let plane_bytes = [
        encode_plane(&p),
        len_field(3, &line_bytes),
        varint_field(99, 12345),
        // A group (wire types 3 and 4) holding a varint.
        [tag(100, 3), varint_field(1, 1), tag(100, 4)].concat(),
        [tag(101, 5), vec![1, 2, 3, 4]].concat(),
    ]
    .concat();
    [
        len_field(1, &plane_bytes),
        len_field(4, b"unknownfields"),
        len_field(15, b"an unknown length-delimited field"),
        varint_field(2047, u64::MAX),
    ]
    .concat()
}

fn encode_plane(plane: &XPlane) -> Vec<u8> {
    // An XSpace holding only this plane is `planes` (field 1) around the plane's encoding.
    let space = space(vec![plane.clone()]);
    strip_len_field(&encode(&space))
}

fn encode_line(line: &profkit_xplane::XLine) -> Vec<u8> {
    let plane = XPlane {
        lines: vec![line.clone()],
        ..Default::default()
    };
    // The plane's encoding is just `lines` (field 3) around the line's encoding.
    strip_len_field(&encode_plane(&plane))
}

/// The body of a message that is a single length-delimited field with a one-byte tag.
fn strip_len_field(bytes: &[u8]) -> Vec<u8> {
    // Skip the tag, then the length's varint: every byte but the last has the high bit set.
    let length_bytes = bytes.iter().skip(1).take_while(|&&b| b & 0x80 != 0).count() + 1;
    bytes.get(1 + length_bytes..).unwrap_or_default().to_vec()
}

/// Inputs the decoder must reject, each with a distinct error.
fn error_cases() -> Vec<Case> {
    let valid = encode(&all_fields());
    let truncated = valid
        .get(..valid.len() * 3 / 5)
        .unwrap_or_default()
        .to_vec();

    // A plane (id 1) then a tag whose varint never ends.
    let truncated_varint = [len_field(1, &varint_field(1, 1)), vec![0x80]].concat();

    // The line inside the plane declares more bytes than the plane has; a hostname follows, so
    // this is corruption, not a cut-short file.
    let line = [varint_field(1, 1), len_field(2, b"main")].concat();
    let mut plane = varint_field(1, 1);
    plane.extend(tag(3, LEN));
    plane.extend(varint(line.len() as u64 + 20));
    plane.extend(&line);
    let length_past_end = [len_field(1, &plane), len_field(4, b"host")].concat();

    // XPlane.name (a string) written as a varint.
    let wrong_wire_type = len_field(1, &[varint_field(1, 1), varint_field(2, 5)].concat());

    // A stat's str_value deep in the space with bytes that are not UTF-8.
    let mut bad_utf8_space = space(vec![plane_with_str_stat("BAD?UTF8")]);
    bad_utf8_space.hostnames.push("host".into());
    let bad_utf8 = replace(&encode(&bad_utf8_space), b"BAD?UTF8", b"BAD\xff\xfeUT8");

    // XPlane.id as an 11-byte varint.
    let too_long = [len_field(
        1,
        &[tag(1, VARINT), vec![0xff; 10], vec![0x01]].concat(),
    )]
    .concat();

    // An unknown field with wire type 6, which does not exist.
    let invalid_wire_type = [len_field(4, b"host"), tag(9, 6), vec![0; 4]].concat();

    vec![
        Case {
            name: "error-truncated",
            input: truncated,
        },
        Case {
            name: "error-truncated-varint",
            input: truncated_varint,
        },
        Case {
            name: "error-length-past-end",
            input: length_past_end,
        },
        Case {
            name: "error-wrong-wire-type",
            input: wrong_wire_type,
        },
        Case {
            name: "error-bad-utf8",
            input: bad_utf8,
        },
        Case {
            name: "error-varint-too-long",
            input: too_long,
        },
        Case {
            name: "error-invalid-wire-type",
            input: invalid_wire_type,
        },
    ]
}

fn plane_with_str_stat(value: &str) -> XPlane {
    plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut line = b.line(1);
        line.set_name("main").set_timestamp_ns(1_000);
        line.add_event("first").set_duration_ps(US);
        line.add_event("second")
            .set_offset_ps(2 * US)
            .set_duration_ps(US)
            .add_stat("fine", "ok")
            .add_stat("broken", value);
    })
}

/// `bytes` with the first occurrence of `from` replaced by `to` (of the same length).
fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if let Some(at) = bytes.windows(from.len()).position(|w| w == from) {
        out.splice(at..at + from.len(), to.iter().copied());
    }
    out
}

/// An XLA op's metadata: name, display name and stats.
type TpuOp<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

/// A kernel: name, start and duration (us), stats.
type KernelAt<'a> = (&'a str, i64, i64, Vec<(&'a str, StatValue)>);

/// A kernel on a GPU stream with the stats XLA's GPU runtime gives it.
struct Kernel<'a> {
    name: &'a str,
    at_us: i64,
    dur_us: i64,
    stats: &'a [(&'a str, StatValue)],
}

fn add_kernels(line: &mut profkit_xplane::LineBuilder<'_>, kernels: &[Kernel<'_>]) {
    for k in kernels {
        let mut e = line.add_event(k.name);
        e.set_offset_ps(k.at_us * US).set_duration_ps(k.dur_us * US);
        for (name, value) in k.stats {
            e.add_stat(name, value.clone());
        }
    }
}

/// GPU planes as XLA and TensorFlow write them (no `group_id`): kernels with `kernel_details`,
/// `hlo_module`, `program_id`, nested `hlo_op`s and `tf_op`s (TensorFlow, JAX and unknown), a
/// memcpy, on compute and other streams of two GPUs: xprof derives `XLA Modules`, `XLA Ops`,
/// `Framework Name Scope` and `Framework Ops` lines for each stream (`... - from #N`).
fn gpu_derived() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut t = b.line(100);
        t.set_name("python3").set_timestamp_ns(1_000);
        t.add_event("cudaLaunchKernel")
            .set_offset_ps(US)
            .set_duration_ps(US)
            .add_stat(stats::CORRELATION_ID, 1_u64);
    });
    let kd =
        || StatValue::from("regs:32 static_shared:0 dynamic_shared:0 grid:1,1,1 block:128,1,1");
    let module = |m: &str| (stats::HLO_MODULE, StatValue::from(m));
    let program = |p: u64| (stats::PROGRAM_ID, StatValue::from(p));
    let op = |o: &str| (stats::HLO_OP, StatValue::from(o));
    let tf = |o: &str| (stats::TF_OP, StatValue::from(o));
    let gpu0 = plane(1, "/device:GPU:0", |b| {
        b.add_stat(stats::DEVICE_ID, 0_i64);
        let mut s7 = b.line(7);
        s7.set_name("Stream #7(Compute)").set_timestamp_ns(1_000);
        add_kernels(
            &mut s7,
            &[
                Kernel {
                    name: "fusion_1_kernel",
                    at_us: 1,
                    dur_us: 2,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_train"),
                        program(5),
                        op("fusion.1"),
                        (stats::CORRELATION_ID, 1_u64.into()),
                    ],
                },
                Kernel {
                    name: "fusion_1_kernel_b",
                    at_us: 3,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_train"),
                        program(5),
                        op("fusion.1"),
                    ],
                },
                Kernel {
                    name: "while_body_a",
                    at_us: 5,
                    dur_us: 2,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_train"),
                        program(5),
                        op("while.2::fusion.3"),
                    ],
                },
                Kernel {
                    name: "while_body_b",
                    at_us: 8,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_train"),
                        program(5),
                        op("while.2::fusion.4"),
                    ],
                },
                Kernel {
                    name: "while_body_b",
                    at_us: 9,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_train"),
                        program(5),
                        op("while.2::fusion.4"),
                    ],
                },
                Kernel {
                    name: "dot_kernel",
                    at_us: 20,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_eval"),
                        op("dot.1"),
                    ],
                },
                Kernel {
                    name: "volta_sgemm",
                    at_us: 30,
                    dur_us: 2,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        tf("model/dense/MatMul:MatMul"),
                    ],
                },
                Kernel {
                    name: "bias_kernel",
                    at_us: 32,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        tf("model/dense/BiasAdd:BiasAdd"),
                    ],
                },
                Kernel {
                    name: "bias_kernel",
                    at_us: 40,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        tf("model/dense/BiasAdd:BiasAdd"),
                    ],
                },
                Kernel {
                    name: "jax_mul",
                    at_us: 42,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        tf("jit(step)/jit(main)/mul:mul"),
                    ],
                },
                Kernel {
                    name: "jax_t",
                    at_us: 44,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        tf("jit(step)/transpose:transpose[permutation=(1, 0)]"),
                    ],
                },
                Kernel {
                    name: "relu6",
                    at_us: 46,
                    dur_us: 1,
                    stats: &[(stats::KERNEL_DETAILS, kd()), tf("relu6 ")],
                },
                Kernel {
                    name: "scoped",
                    at_us: 48,
                    dur_us: 3,
                    stats: &[(stats::KERNEL_DETAILS, kd()), tf("a/b/c/Conv2D:Conv2D")],
                },
                Kernel {
                    name: "memcpy_like",
                    at_us: 52,
                    dur_us: 1,
                    stats: &[
                        (stats::MEMCPY_DETAILS, "size:64".into()),
                        module("jit_train"),
                        program(5),
                        op("copy.1"),
                    ],
                },
                Kernel {
                    name: "both",
                    at_us: 60,
                    dur_us: 2,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_train"),
                        program(5),
                        op("fusion.5"),
                        tf("model/x/Add:AddV2"),
                    ],
                },
                Kernel {
                    name: "fusion_1_kernel",
                    at_us: 70,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_train"),
                        program(5),
                        op("fusion.1"),
                    ],
                },
            ],
        );
        let mut s9 = b.line(9);
        s9.set_name("Stream #9(Compute)").set_timestamp_ns(1_000);
        add_kernels(
            &mut s9,
            &[
                Kernel {
                    name: "f7",
                    at_us: 1,
                    dur_us: 3,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_train"),
                        program(5),
                        op("fusion.7"),
                    ],
                },
                Kernel {
                    name: "f7",
                    at_us: 4,
                    dur_us: 1,
                    stats: &[
                        (stats::KERNEL_DETAILS, kd()),
                        module("jit_train"),
                        program(5),
                        op("fusion.7"),
                    ],
                },
            ],
        );
        let mut s3 = b.line(3);
        s3.set_name("Stream #3(MemcpyH2D)").set_timestamp_ns(1_000);
        add_kernels(
            &mut s3,
            &[Kernel {
                name: "MemcpyH2D",
                at_us: 2,
                dur_us: 1,
                stats: &[(stats::MEMCPY_DETAILS, "size:4096".into())],
            }],
        );
        let mut s11 = b.line(11);
        s11.set_name("Stream #11").set_timestamp_ns(900);
        add_kernels(
            &mut s11,
            &[Kernel {
                name: "f9",
                at_us: 2,
                dur_us: 1,
                stats: &[
                    (stats::KERNEL_DETAILS, kd()),
                    module("jit_train"),
                    program(5),
                    op("fusion.9"),
                ],
            }],
        );
    });
    let gpu1 = plane(2, "/device:GPU:1", |b| {
        let mut s1 = b.line(1);
        s1.set_name("Stream #1(Compute)").set_timestamp_ns(1_000);
        add_kernels(
            &mut s1,
            &[Kernel {
                name: "f1",
                at_us: 1,
                dur_us: 1,
                stats: &[
                    (stats::KERNEL_DETAILS, kd()),
                    module("jit_train"),
                    program(6),
                    op("fusion.1"),
                ],
            }],
        );
    });
    space(vec![host, gpu0, gpu1])
}

/// A TensorCore plane without steps or groups as a TPU writes it: `XLA Modules` and `XLA Ops`
/// whose ops carry `tf_op` and `source` (on the op's metadata or on the event), host-offload
/// copies (`copy-start`/`copy-done` on `S(5)`), an async op, and ops outside any module.
fn tpu_derived() -> XSpace {
    let tpu = plane(0, "/device:TPU:0", |b| {
        b.add_stat(stats::DEVICE_ID, 0_i64);
        let ops: &[TpuOp<'_>] = &[
            (
                "fusion.1",
                "",
                &[
                    ("tf_op", "model/dense/MatMul:MatMul"),
                    ("source", "train.py:10"),
                ],
            ),
            (
                "fusion.2",
                "",
                &[
                    ("tf_op", "model/dense/BiasAdd:BiasAdd"),
                    ("source", "train.py:10"),
                ],
            ),
            ("fusion.3", "", &[("tf_op", "model/dense/BiasAdd:BiasAdd")]),
            (
                "copy-start.1 = f32[8]{0:S(5)} copy-start(p0)",
                "copy-start.1",
                &[("shape_with_layout", "f32[8]{0:S(5)}")],
            ),
            (
                "copy-start.2 = f32[8]{0:S(5)} copy-start(p1)",
                "copy-start.2",
                &[],
            ),
            (
                "copy-done.1 = f32[8]{0:S(5)} copy-done(copy-start.1)",
                "copy-done.1",
                &[],
            ),
            (
                "copy-done.2 = f32[8]{0:S(5)} copy-done(copy-start.2)",
                "copy-done.2",
                &[],
            ),
            (
                "conv.4",
                "",
                &[("tf_op", "a/b/c/Conv2D:Conv2D"), ("source", "model.py:3")],
            ),
            (
                "transpose.5",
                "",
                &[("tf_op", "jit(step)/transpose:transpose[permutation=(1, 0)]")],
            ),
        ];
        for (name, display, stats_list) in ops {
            let id = b.event_metadata_id(name);
            if let Some(mut md) = b.event_metadata(id) {
                if !display.is_empty() {
                    md.set_display_name(*display);
                }
                for (k, v) in stats_list.iter() {
                    md.add_stat(k, *v);
                }
            }
        }
        let raw = b.event_metadata_id("copy-done.1 = f32[8]{0:S(5)} copy-done(copy-start.1)");
        if let Some(mut md) = b.event_metadata(raw) {
            md.add_stat("raw_bytes_accessed", 64_i64);
        }
        let mut modules = b.line(1);
        modules
            .set_name(constants::XLA_MODULE_LINE_NAME)
            .set_timestamp_ns(1_000);
        modules
            .add_event("jit_step(5)")
            .set_offset_ps(0)
            .set_duration_ps(50 * US);
        modules
            .add_event("jit_step(5)")
            .set_offset_ps(60 * US)
            .set_duration_ps(30 * US);
        let mut ops_line = b.line(2);
        ops_line
            .set_name(constants::XLA_OP_LINE_NAME)
            .set_timestamp_ns(1_000);
        let at = |l: &mut profkit_xplane::LineBuilder<'_>, name: &str, at_us: i64, dur_us: i64| {
            l.add_event(name)
                .set_offset_ps(at_us * US)
                .set_duration_ps(dur_us * US);
        };
        at(&mut ops_line, "fusion.1", 1, 3);
        at(&mut ops_line, "fusion.2", 4, 2);
        at(&mut ops_line, "fusion.3", 6, 1);
        at(
            &mut ops_line,
            "copy-start.1 = f32[8]{0:S(5)} copy-start(p0)",
            8,
            1,
        );
        at(
            &mut ops_line,
            "copy-start.2 = f32[8]{0:S(5)} copy-start(p1)",
            9,
            1,
        );
        at(
            &mut ops_line,
            "copy-done.1 = f32[8]{0:S(5)} copy-done(copy-start.1)",
            12,
            1,
        );
        at(
            &mut ops_line,
            "copy-done.2 = f32[8]{0:S(5)} copy-done(copy-start.2)",
            14,
            1,
        );
        at(&mut ops_line, "conv.4", 20, 3);
        ops_line
            .add_event("async.6")
            .set_offset_ps(24 * US)
            .set_duration_ps(US)
            .add_stat("_a", 1_i64)
            .add_stat(stats::TF_OP, "model/async/Op:Op");
        at(&mut ops_line, "transpose.5", 26, 1);
        at(&mut ops_line, "fusion.1", 61, 2);
        ops_line
            .add_event("fusion.8")
            .set_offset_ps(64 * US)
            .set_duration_ps(US)
            .add_stat(stats::TF_OP, "model/dense/MatMul:MatMul")
            .add_stat("source", "train.py:11");
        at(&mut ops_line, "fusion.3", 100, 1);
        at(&mut ops_line, "fusion.3", 102, 1);
        at(&mut ops_line, "fusion.3", 110, 1);
    });
    space(vec![tpu])
}

/// The HLO module `jit_train_step` as JAX 0.10 wrote it into a CPU profile's `/host:metadata`
/// plane, with source files and lines added to four instructions (see `conformance/xplane/README.md`).
const JIT_TRAIN_STEP_HLO: &[u8] = include_bytes!("data/jit_train_step.hlo.pb");

/// A GPU plane whose kernels name instructions of an HLO module that the `/host:metadata` plane
/// (written after it) holds: xprof resolves their framework ops and source lines from the HLO
/// proto (`Framework Name Scope`, `Framework Ops` and `Source code - from #N`).
fn gpu_hlo() -> XSpace {
    let kd = || StatValue::from("regs:16 static_shared:0 dynamic_shared:0 grid:4,1,1 block:64,1,1");
    let gpu = plane(1, "/device:GPU:0", |b| {
        let xla = |op: &str, program: u64, module: &str| -> Vec<(&'static str, StatValue)> {
            vec![
                (stats::KERNEL_DETAILS, kd()),
                (stats::HLO_MODULE, StatValue::from(module)),
                (stats::PROGRAM_ID, StatValue::from(program)),
                (stats::HLO_OP, StatValue::from(op)),
            ]
        };
        let kernels: Vec<KernelAt<'_>> = vec![
            (
                "ynn_fusion_3",
                1,
                2,
                xla("ynn_fusion.3", 26, "jit_train_step"),
            ),
            (
                "relu",
                3,
                1,
                xla("broadcast_maximum_fusion", 26, "jit_train_step"),
            ),
            (
                "ynn_fusion_2",
                5,
                2,
                xla("ynn_fusion.2", 26, "jit_train_step"),
            ),
            ("gemm", 8, 1, xla("while.1::dot.1", 26, "jit_train_step")),
            ("tuple", 10, 1, xla("tuple.3", 26, "jit_train_step")),
            ("param", 11, 1, xla("p__b1__.1", 26, "jit_train_step")),
            ("missing", 12, 1, xla("nonexistent.7", 26, "jit_train_step")),
            ("other", 14, 1, xla("ynn_fusion.3", 999, "jit_other")),
            (
                "ynn_fusion_3",
                16,
                1,
                xla("ynn_fusion.3", 26, "jit_train_step"),
            ),
            (
                "ynn_fusion_3",
                17,
                1,
                xla("ynn_fusion.3", 26, "jit_train_step"),
            ),
        ];
        let mut s1 = b.line(1);
        s1.set_name("Stream #1(Compute)").set_timestamp_ns(1_000);
        for (name, at, dur, stats_list) in &kernels {
            let mut e = s1.add_event(name);
            e.set_offset_ps(at * US).set_duration_ps(dur * US);
            for (k, v) in stats_list {
                e.add_stat(k, v.clone());
            }
        }
        let mut s2 = b.line(2);
        s2.set_name("Stream #2(Compute)").set_timestamp_ns(1_000);
        let mut e = s2.add_event("multiply_add");
        e.set_offset_ps(2 * US).set_duration_ps(US);
        for (k, v) in xla("multiply_add_fusion", 26, "jit_train_step") {
            e.add_stat(k, v);
        }
    });
    let metadata = plane(2, constants::METADATA_PLANE_NAME, |b| {
        let id = b.event_metadata_id("jit_train_step(26)");
        if let Some(mut md) = b.event_metadata(id) {
            md.add_stat("Hlo Proto", JIT_TRAIN_STEP_HLO.to_vec());
            md.add_stat(stats::PROGRAM_ID, 26_u64);
        }
    });
    space(vec![gpu, metadata])
}

/// GPU kernels with `scope_range_id`s and the scope range tree plane that gives each id its
/// parent (`/host:__ScopeRangeCallStack__`, with a loop): module and XLA op runs split where the
/// ids of their levels differ.
fn gpu_scope_ranges() -> XSpace {
    let kd = || StatValue::from("regs:8 static_shared:0 dynamic_shared:0 grid:1,1,1 block:32,1,1");
    let gpu = plane(1, "/device:GPU:0", |b| {
        let kernels: &[(i64, &str, Option<i64>)] = &[
            (1, "fusion.1", Some(21)),
            (2, "fusion.1", Some(21)),
            (3, "fusion.1", Some(22)),
            (4, "while.1::fusion.2", Some(21)),
            (5, "while.1::fusion.2", Some(23)),
            (6, "while.1::fusion.2", Some(12)),
            (7, "while.1::fusion.2", Some(13)),
            (8, "fusion.3", None),
            (9, "fusion.3", Some(30)),
            (10, "fusion.3", Some(40)),
            (11, "fusion.3", Some(41)),
        ];
        let mut s = b.line(1);
        s.set_name("Stream #1(Compute)").set_timestamp_ns(1_000);
        for (at, op, scope) in kernels {
            let mut e = s.add_event("kernel");
            e.set_offset_ps(at * US)
                .set_duration_ps(US)
                .add_stat(stats::KERNEL_DETAILS, kd())
                .add_stat(stats::HLO_MODULE, "jit_scan")
                .add_stat(stats::PROGRAM_ID, 3_u64)
                .add_stat(stats::HLO_OP, *op);
            if let Some(scope) = scope {
                e.add_stat("scope_range_id", *scope);
            }
        }
    });
    // Parents: 21 -> 20, 22 -> 20, 23 -> 25, 12 -> 11 -> 10, 13 -> 11, 30 <-> 31, 41 -> 40.
    let mut tree = XPlane {
        id: 2,
        name: "/host:__ScopeRangeCallStack__".to_owned(),
        ..XPlane::default()
    };
    for (child, parent) in [
        (21, 20),
        (22, 20),
        (23, 25),
        (12, 11),
        (11, 10),
        (13, 11),
        (30, 31),
        (31, 30),
        (41, 40),
    ] {
        tree.stat_metadata.insert(
            child,
            XStatMetadata {
                id: child,
                name: format!("scope {child}"),
                description: String::new(),
            },
        );
        tree.stats.push(XStat {
            metadata_id: child,
            value: Some(x_stat::Value::Int64Value(parent)),
        });
    }
    space(vec![tree, gpu])
}

/// CUDA graph launches on a GPU stream: graph executions without `kernel_details` (which xprof
/// counts as kernels), inner nodes whose `cuda_graph_id` and `correlation_id` go to their XLA op
/// event, a module without ops, an op with an empty `hlo_op`, and a line whose id is one of the
/// derived line ids (not a stream).
fn gpu_cuda_graph() -> XSpace {
    let gpu = plane(1, "/device:GPU:0", |b| {
        let mut s = b.line(7);
        s.set_name("Stream #7(Compute)").set_timestamp_ns(1_000);
        s.add_event("graph_exec")
            .set_offset_ps(US)
            .set_duration_ps(3 * US)
            .add_stat("cuda_graph_exec_id", 11_u64)
            .add_stat(stats::HLO_MODULE, "jit_graph")
            .add_stat(stats::PROGRAM_ID, 4_u64)
            .add_stat(stats::HLO_OP, "command_buffer.1");
        s.add_event("node_a")
            .set_offset_ps(5 * US)
            .set_duration_ps(US)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::HLO_MODULE, "jit_graph")
            .add_stat(stats::PROGRAM_ID, 4_u64)
            .add_stat(stats::HLO_OP, "while.3::fusion.4")
            .add_stat("cuda_graph_id", 21_u64)
            .add_stat(stats::CORRELATION_ID, 77_u64);
        s.add_event("node_b")
            .set_offset_ps(6 * US)
            .set_duration_ps(US)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::HLO_MODULE, "jit_graph")
            .add_stat(stats::PROGRAM_ID, 4_u64)
            .add_stat(stats::HLO_OP, "while.3::fusion.4")
            .add_stat("cuda_graph_id", 22_u64);
        s.add_event("node_d")
            .set_offset_ps(7 * US + US / 2)
            .set_duration_ps(US / 4)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::HLO_MODULE, "jit_graph")
            .add_stat(stats::PROGRAM_ID, 4_u64)
            .add_stat(stats::HLO_OP, "fusion.6")
            .add_stat("cuda_graph_id", 22_u64)
            .add_stat(stats::CORRELATION_ID, 79_u64);
        s.add_event("node_e")
            .set_offset_ps(14 * US)
            .set_duration_ps(US)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat("cuda_graph_id", 23_u64)
            .add_stat(stats::CORRELATION_ID, 80_u64);
        s.add_event("node_h")
            .set_offset_ps(15 * US + US / 2)
            .set_duration_ps(US / 4)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::HLO_MODULE, "jit_other")
            .add_stat("cuda_graph_id", 23_u64);
        s.add_event("node_f")
            .set_offset_ps(16 * US)
            .set_duration_ps(US)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::TF_OP, "model/Relu:Relu")
            .add_stat("cuda_graph_id", 24_u64);
        s.add_event("node_g")
            .set_offset_ps(18 * US)
            .set_duration_ps(US)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::HLO_MODULE, "jit_graph")
            .add_stat(stats::PROGRAM_ID, 4_u64)
            .add_stat(stats::HLO_OP, "fusion.7")
            .add_stat("cuda_graph_id", 25_i64);
        s.add_event("node_c")
            .set_offset_ps(8 * US)
            .set_duration_ps(US)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::HLO_MODULE, "jit_graph")
            .add_stat(stats::PROGRAM_ID, 4_u64)
            .add_stat(stats::HLO_OP, "fusion.5")
            .add_stat("cuda_graph_id", 0_u64)
            .add_stat(stats::CORRELATION_ID, 78_u64);
        s.add_event("module_only")
            .set_offset_ps(10 * US)
            .set_duration_ps(US)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::HLO_MODULE, "jit_graph");
        s.add_event("empty_op")
            .set_offset_ps(12 * US)
            .set_duration_ps(US)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::HLO_OP, "");
        let mut odd = b.line(0xdead_beef + 2);
        odd.set_name("not a stream").set_timestamp_ns(1_000);
        odd.add_event("kernel_on_odd_line")
            .set_offset_ps(2 * US)
            .set_duration_ps(US)
            .add_stat(stats::KERNEL_DETAILS, "regs:8")
            .add_stat(stats::HLO_MODULE, "jit_graph")
            .add_stat(stats::HLO_OP, "fusion.9");
    });
    space(vec![gpu])
}

/// A GPU plane with more streams than xprof has derived line ids for: the streams after the
/// range is used up get neither derived lines nor a display position.
fn gpu_many_streams() -> XSpace {
    let gpu = plane(1, "/device:GPU:0", |b| {
        for stream in 0..20_i64 {
            let mut s = b.line(100 + stream);
            s.set_name(format!("Stream #{}(Compute)", 100 + stream))
                .set_timestamp_ns(1_000);
            for k in 0..=(stream % 3) {
                s.add_event("fusion_kernel")
                    .set_offset_ps((stream + 2 * k) * US)
                    .set_duration_ps(US)
                    .add_stat(stats::KERNEL_DETAILS, "regs:8")
                    .add_stat(stats::HLO_MODULE, "jit_many")
                    .add_stat(stats::PROGRAM_ID, 9_u64)
                    .add_stat(stats::HLO_OP, format!("fusion.{k}").as_str());
            }
        }
    });
    space(vec![gpu])
}

/// A GPU plane whose kernels carry `group_id`s (some not) beside a host plane without any: the
/// space is not grouped (a host plane has no `group_id`), so xprof gives the ungrouped kernels the
/// group before them and derives a `Steps` line, one event per run of a group.
fn gpu_steps_derived() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut t = b.line(100);
        t.set_name("python3").set_timestamp_ns(1_000);
        t.add_event("work").set_offset_ps(US).set_duration_ps(US);
    });
    let gpu = plane(1, "/device:GPU:0", |b| {
        let mut s = b.line(7);
        s.set_name("Stream #7(Compute)").set_timestamp_ns(1_000);
        for (at, g) in [
            (1, Some(1_i64)),
            (3, Some(1)),
            (5, None),
            (7, Some(2)),
            (9, None),
        ] {
            let mut e = s.add_event("k");
            e.set_offset_ps(at * US)
                .set_duration_ps(US)
                .add_stat(stats::KERNEL_DETAILS, "regs:8")
                .add_stat(stats::HLO_MODULE, "jit_g")
                .add_stat(stats::HLO_OP, "fusion.1");
            if let Some(g) = g {
                e.add_stat(stats::GROUP_ID, g);
            }
        }
    });
    space(vec![host, gpu])
}

/// Kernels of two groups that start at the same instant on two streams, the longer one of group
/// 1 and the shorter of group 2 (and the reverse later), each followed by an ungrouped kernel:
/// xprof 2.24.2 takes events by start, shorter first (not TSL's `Timespan` order), so each
/// ungrouped kernel takes the group of the longer kernel, and the `Steps` line and the XLA lines
/// split there by group.
fn gpu_steps_ties() -> XSpace {
    let host = plane(0, constants::HOST_PLANE_NAME, |b| {
        let mut t = b.line(100);
        t.set_name("python3").set_timestamp_ns(1_000);
        t.add_event("work").set_offset_ps(US).set_duration_ps(US);
    });
    type Kernel = (i64, i64, Option<i64>);
    let streams: [(i64, &str, [Kernel; 3]); 2] = [
        (
            7,
            "Stream #7(Compute)",
            [(1, 8, Some(1)), (20, 2, Some(1)), (30, 1, None)],
        ),
        (
            9,
            "Stream #9(Compute)",
            [(1, 2, Some(2)), (4, 1, None), (20, 8, Some(2))],
        ),
    ];
    let gpu = plane(1, "/device:GPU:0", |b| {
        for (id, name, kernels) in streams {
            let mut s = b.line(id);
            s.set_name(name).set_timestamp_ns(1_000);
            for (at, length, g) in kernels {
                let mut e = s.add_event("k");
                e.set_offset_ps(at * US)
                    .set_duration_ps(length * US)
                    .add_stat(stats::KERNEL_DETAILS, "regs:8")
                    .add_stat(stats::HLO_MODULE, "jit_g")
                    .add_stat(stats::HLO_OP, "fusion.1");
                if let Some(g) = g {
                    e.add_stat(stats::GROUP_ID, g);
                }
            }
        }
    });
    space(vec![host, gpu])
}

/// `gpu-device` (host and GPU planes already grouped) with a `/host:metadata` plane, which has no
/// `group_id`: to xprof the space is not grouped, so it preprocesses it (`is_eager` marks, derived
/// lines).
fn grouped_with_metadata() -> XSpace {
    let mut space = gpu_device();
    let metadata = plane(9, constants::METADATA_PLANE_NAME, |b| {
        b.add_stat("jax_version", "0.10.2");
    });
    space.planes.push(metadata);
    space
}

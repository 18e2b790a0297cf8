//! The format's own fields: every field and stat kind, display names, counters, devices of each
//! kind, nesting, the task environment, metadata stats.

use profkit_xplane::constants::{self, stats};
use profkit_xplane::{StatValue, XEvent, XEventMetadata, XPlane, XSpace};

use super::*;

/// Every field of every message holds a value that is not its default at least once; both
/// members of `XEvent.data` are used, and one event leaves it unset.
pub(super) fn all_fields() -> XSpace {
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
pub(super) fn stat_kinds() -> XSpace {
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
pub(super) fn num_occurrences() -> XSpace {
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
pub(super) fn display_fallbacks() -> XSpace {
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
pub(super) fn counter_line() -> XSpace {
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
pub(super) fn empty_planes() -> XSpace {
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
pub(super) fn gpu_device() -> XSpace {
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
pub(super) fn tpu_device() -> XSpace {
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
pub(super) fn custom_device() -> XSpace {
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
pub(super) fn device_priority() -> XSpace {
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
pub(super) fn host_planes() -> XSpace {
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
pub(super) fn nested_events() -> XSpace {
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
pub(super) fn task_environment() -> XSpace {
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
pub(super) fn metadata_stats() -> XSpace {
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

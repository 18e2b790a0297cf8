//! Device planes from which xprof derives its timelines: XLA modules and ops, name scopes,
//! source, CUDA graphs, many streams, steps.

use profkit_xplane::constants::{self, stats};
use profkit_xplane::{StatValue, XPlane, XSpace, XStat, XStatMetadata, x_stat};

use super::*;

/// An XLA op's metadata: name, display name and stats.
pub(super) type TpuOp<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

/// A kernel: name, start and duration (us), stats.
pub(super) type KernelAt<'a> = (&'a str, i64, i64, Vec<(&'a str, StatValue)>);

/// A kernel on a GPU stream with the stats XLA's GPU runtime gives it.
pub(super) struct Kernel<'a> {
    name: &'a str,
    at_us: i64,
    dur_us: i64,
    stats: &'a [(&'a str, StatValue)],
}

pub(super) fn add_kernels(line: &mut profkit_xplane::LineBuilder<'_>, kernels: &[Kernel<'_>]) {
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
pub(super) fn gpu_derived() -> XSpace {
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
pub(super) fn tpu_derived() -> XSpace {
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
pub(super) const JIT_TRAIN_STEP_HLO: &[u8] = include_bytes!("../data/jit_train_step.hlo.pb");

/// A GPU plane whose kernels name instructions of an HLO module that the `/host:metadata` plane
/// (written after it) holds: xprof resolves their framework ops and source lines from the HLO
/// proto (`Framework Name Scope`, `Framework Ops` and `Source code - from #N`).
pub(super) fn gpu_hlo() -> XSpace {
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
pub(super) fn gpu_scope_ranges() -> XSpace {
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
pub(super) fn gpu_cuda_graph() -> XSpace {
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
pub(super) fn gpu_many_streams() -> XSpace {
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
pub(super) fn gpu_steps_derived() -> XSpace {
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
pub(super) fn gpu_steps_ties() -> XSpace {
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
pub(super) fn grouped_with_metadata() -> XSpace {
    let mut space = gpu_device();
    let metadata = plane(9, constants::METADATA_PLANE_NAME, |b| {
        b.add_stat("jax_version", "0.10.2");
    });
    space.planes.push(metadata);
    space
}

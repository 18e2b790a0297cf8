//! Paddle's `summary()` rules on small node trees built here.

use profkit_events::paddle::nodetree::proto::{
    CudaRuntimeTraceEventNodeProto, CudaRuntimeTraceEventProto, DeviceTraceEventNodeProto,
    DeviceTraceEventProto, HostTraceEventNodeProto, HostTraceEventProto, MemTraceEventNodeProto,
    MemTraceEventProto,
};
use profkit_events::paddle::nodetree::{
    self, ExtraInfoMap, NodeTreesProto, ROOT_NAME, ThreadNodeTreeProto,
};
use profkit_events::report::summary::{Forest, SortedKey, Summary, SummaryOptions, TimeUnit};

// Paddle's type codes.
const OPERATOR: i32 = 0;
const PROFILE_STEP: i32 = 2;
const KERNEL: i32 = 4;
const OPERATOR_INNER: i32 = 8;
const FORWARD: i32 = 9;
const PYTHON_USER_DEFINED: i32 = 14;

fn node(
    id: i64,
    parent: i64,
    name: &str,
    ty: i32,
    start: u64,
    end: u64,
    tid: u64,
) -> HostTraceEventNodeProto {
    HostTraceEventNodeProto {
        id,
        parentid: parent,
        host_trace_event: HostTraceEventProto {
            name: name.into(),
            r#type: ty,
            start_ns: start,
            end_ns: end,
            thread_id: tid,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn thread(tid: u64, mut nodes: Vec<HostTraceEventNodeProto>) -> ThreadNodeTreeProto {
    nodes.insert(0, node(0, -1, ROOT_NAME, OPERATOR, 0, u64::MAX, tid));
    ThreadNodeTreeProto {
        thread_id: tid,
        host_nodes: nodes,
    }
}

fn summary(trees: &NodeTreesProto, options: SummaryOptions) -> Summary {
    Summary::new(&Forest::from_node_trees(trees), options)
}

#[test]
fn overview_merges_overlaps_across_threads() {
    // Thread 1: a step 0..40 ms with operators 0..10 and 20..30; thread 2: operators 5..15 and
    // 25..28, which overlap them. Merged: 0..15 and 20..30, 25 ms of 40.
    let ms = 1_000_000;
    let trees = NodeTreesProto {
        thread_trees: vec![
            thread(
                1,
                vec![
                    node(1, 0, "ProfileStep#0", PROFILE_STEP, 0, 40 * ms, 1),
                    node(2, 1, "a", OPERATOR, 0, 10 * ms, 1),
                    node(3, 1, "a", OPERATOR, 20 * ms, 30 * ms, 1),
                ],
            ),
            thread(
                2,
                vec![
                    node(1, 0, "b", OPERATOR, 5 * ms, 15 * ms, 2),
                    node(2, 0, "b", OPERATOR, 25 * ms, 28 * ms, 2),
                ],
            ),
        ],
        ..Default::default()
    };
    let s = summary(&trees, SummaryOptions::default());
    assert!(s.total_from_profile_steps);
    assert_eq!(s.total, 40 * ms as i64);
    let op = s
        .overview_cpu
        .iter()
        .find(|r| r.event_type == "Operator")
        .unwrap();
    assert_eq!((op.calls, op.time), (4, 25 * ms as i64));
    assert!((op.ratio - 0.625).abs() < 1e-12);
    let text = s.text();
    assert!(text.contains("\n  Operator                 4                          25.00                      62.50  "), "{text}");
    // Operators by name over both threads, each with its ratio of the operators' total.
    let rows = &s.operator[0].rows;
    assert_eq!(
        rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(rows[0].cpu.unwrap().total, 20 * ms as i64);

    // Per thread, the thread ids of the nodes' events.
    let s = summary(
        &trees,
        SummaryOptions {
            thread_sep: true,
            ..Default::default()
        },
    );
    let groups: Vec<&str> = s.operator.iter().map(|g| g.thread.as_str()).collect();
    assert_eq!(groups, ["1", "2"]);
    assert!(s.text().contains("Thread: 2"));
}

#[test]
fn operators_take_inner_rows_and_the_kernels_they_launched() {
    let mut op = node(2, 1, "matmul dygraph", OPERATOR, 100, 1_100, 7);
    op.runtime_nodes.push(CudaRuntimeTraceEventNodeProto {
        runtime_trace_event: CudaRuntimeTraceEventProto {
            name: "cudaLaunchKernel".into(),
            start_ns: 500,
            end_ns: 600,
            ..Default::default()
        },
        device_nodes: vec![DeviceTraceEventNodeProto {
            device_event: DeviceTraceEventProto {
                name: "void gemm<float, 128>(float const*, float*)".into(),
                r#type: KERNEL,
                start_ns: 700,
                end_ns: 1_000,
                ..Default::default()
            },
        }],
    });
    op.mem_nodes.push(MemTraceEventNodeProto {
        mem_event: MemTraceEventProto {
            r#type: 0,
            place: "Place(gpu:0)".into(),
            increase_bytes: 4096,
            peak_allocated: 4096,
            ..Default::default()
        },
    });
    let mut inner = node(3, 2, "matmul compute", OPERATOR_INNER, 200, 400, 7);
    inner.mem_nodes.push(MemTraceEventNodeProto {
        mem_event: MemTraceEventProto {
            r#type: 1,
            place: "Place(gpu:0)".into(),
            increase_bytes: -1024,
            ..Default::default()
        },
    });
    let trees = NodeTreesProto {
        thread_trees: vec![thread(
            7,
            vec![
                node(1, 0, "ProfileStep#1", PROFILE_STEP, 0, 2_000, 7),
                op,
                inner,
            ],
        )],
        extra_info: vec![
            ExtraInfoMap {
                key: "Process Cpu Utilization".into(),
                value: "1.5".into(),
            },
            ExtraInfoMap {
                key: "System Cpu Utilization".into(),
                value: "0.25".into(),
            },
        ],
        ..Default::default()
    };
    let s = summary(
        &trees,
        SummaryOptions {
            time_unit: TimeUnit::Ns,
            ..Default::default()
        },
    );
    assert_eq!(s.device.cpu_process, Some(1.5));
    let rows = &s.operator[0].rows;
    let shown: Vec<(&str, usize)> = rows.iter().map(|r| (r.name.as_str(), r.depth)).collect();
    assert_eq!(
        shown,
        [
            ("matmul dygraph", 0),
            ("matmul compute", 1),
            ("void gemm<float, 128>(float const*, float*)", 1)
        ]
    );
    assert_eq!(rows[0].gpu.total, 300);
    assert!(rows[2].cpu.is_none());
    let text = s.text();
    // The kernel table shows the kernel without its parameters.
    assert!(text.contains("\nvoid gemm<float, 128>   "), "{text}");
    assert!(
        text.contains("CPU(Process)                    150.00"),
        "{text}"
    );
    assert!(
        text.contains("GPU0                            15.00"),
        "{text}"
    );
    // Memory: the inner row's free counts for the operator too.
    let mem = &s.memory[0];
    assert_eq!(mem.place, "Place(gpu:0)");
    let names: Vec<(&str, u64, u64, i64)> = mem
        .rows
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.allocation_count,
                r.free_count,
                r.increased_size,
            )
        })
        .collect();
    assert_eq!(names, [("matmul dygraph", 1, 1, 3072)]);
    // Without op_detail, no inner rows.
    let s = summary(
        &trees,
        SummaryOptions {
            op_detail: false,
            ..Default::default()
        },
    );
    assert_eq!(s.operator[0].rows.len(), 1);
}

#[test]
fn model_takes_the_first_forward_on_each_path_and_sort_keys_order_rows() {
    let trees = NodeTreesProto {
        thread_trees: vec![thread(
            1,
            vec![
                node(1, 0, "ProfileStep#1", PROFILE_STEP, 0, 100, 1),
                node(2, 1, "Forward", FORWARD, 0, 50, 1),
                node(3, 2, "Forward", FORWARD, 10, 40, 1),
                node(4, 1, "long_once", PYTHON_USER_DEFINED, 50, 90, 1),
                node(5, 1, "short", PYTHON_USER_DEFINED, 90, 92, 1),
                node(6, 1, "short", PYTHON_USER_DEFINED, 92, 99, 1),
            ],
        )],
        ..Default::default()
    };
    let s = summary(&trees, SummaryOptions::default());
    let model: Vec<(&str, Option<u64>)> =
        s.model.iter().map(|r| (r.name.as_str(), r.calls)).collect();
    assert_eq!(
        model,
        [
            ("ProfileStep", Some(1)),
            ("Forward", Some(1)),
            ("Others", None)
        ]
    );
    let order = |key| {
        summary(
            &trees,
            SummaryOptions {
                sorted_by: key,
                ..Default::default()
            },
        )
        .user_defined[0]
            .rows
            .iter()
            .map(|r| r.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(order(SortedKey::CPUTotal), ["long_once", "short"]);
    assert_eq!(order(SortedKey::CPUMin), ["short", "long_once"]);
    assert_eq!(order(SortedKey::CPUAvg), ["long_once", "short"]);
}

#[test]
fn without_profile_steps_the_total_is_every_host_range_and_the_table_says_so() {
    let trees = NodeTreesProto {
        thread_trees: vec![thread(1, vec![node(1, 0, "op", OPERATOR, 0, 10, 1)])],
        ..Default::default()
    };
    let s = summary(&trees, SummaryOptions::default());
    assert!(!s.total_from_profile_steps);
    assert_eq!(s.total, 10);
    let text = s.text();
    assert!(
        text.contains("Not in the input:\nNo ProfileStep ranges"),
        "{text}"
    );
    assert!(text.contains("CPU utilisation is not in the input"));
}

#[test]
fn the_event_model_gives_the_node_trees_summary() {
    let trees = NodeTreesProto {
        thread_trees: vec![thread(
            1,
            vec![
                node(1, 0, "ProfileStep#1", PROFILE_STEP, 0, 100, 1),
                node(2, 1, "op", OPERATOR, 10, 50, 1),
                node(3, 2, "op infer_meta", OPERATOR_INNER, 12, 20, 1),
                node(4, 1, "user", PYTHON_USER_DEFINED, 60, 90, 1),
            ],
        )],
        ..Default::default()
    };
    let direct = summary(&trees, SummaryOptions::default()).text();
    let recording = nodetree::to_recording(&trees);
    let through = Summary::new(
        &Forest::from_recording(&recording),
        SummaryOptions::default(),
    )
    .text();
    assert_eq!(direct, through);
}

#[test]
fn communication_makes_the_distribution_table() {
    // An allreduce op whose nccl kernel runs 100..300, and a compute kernel 200..400 launched
    // under another op: communication 50..150 (CPU) and 100..300 (GPU) merge to 50..300;
    // computation 200..400; overlap 200..300.
    let launch = |name: &str, start, end| CudaRuntimeTraceEventNodeProto {
        runtime_trace_event: CudaRuntimeTraceEventProto {
            name: "cudaLaunchKernel".into(),
            ..Default::default()
        },
        device_nodes: vec![DeviceTraceEventNodeProto {
            device_event: DeviceTraceEventProto {
                name: name.into(),
                r#type: KERNEL,
                start_ns: start,
                end_ns: end,
                ..Default::default()
            },
        }],
    };
    let mut comm = node(2, 1, "c_allreduce_sum", OPERATOR, 50, 150, 1);
    comm.runtime_nodes
        .push(launch("ncclKernel_AllReduce", 100, 300));
    let mut compute = node(3, 1, "matmul", OPERATOR, 150, 190, 1);
    compute.runtime_nodes.push(launch("gemm", 200, 400));
    let trees = NodeTreesProto {
        thread_trees: vec![thread(
            1,
            vec![
                node(1, 0, "ProfileStep#1", PROFILE_STEP, 0, 500, 1),
                comm,
                compute,
            ],
        )],
        ..Default::default()
    };
    let s = summary(&trees, SummaryOptions::default());
    let d = s.distributed.as_ref().expect("a distribution table");
    assert_eq!((d.communication, d.computation, d.overlap), (250, 200, 100));
    assert!(s.text().contains("Distribution Summary"));
    let comm_row = s
        .overview_cpu
        .iter()
        .find(|r| r.event_type == "Communication")
        .unwrap();
    assert_eq!((comm_row.calls, comm_row.time), (1, 100));
    let kernels: Vec<&str> = s.kernel.iter().map(|r| r.name.as_str()).collect();
    // Equal times keep the order Paddle's walk met them in: last child first.
    assert_eq!(kernels, ["gemm", "ncclKernel_AllReduce"]);
}

//! The Paddle cases we build ourselves, written by `cargo run -p conformance --bin
//! make-paddle-cases` (or by `BLESS=1 cargo test -p conformance`) into `conformance/paddle/<case>/`.
//!
//! Event-model cases are `input.events.json` (a `profkit_events::Recording` with one event per
//! line); file cases are `input.pb` (a legacy `Profile`) or `input.paddle_trace.pb` (node trees),
//! encoded with prost from messages built here, or cut from those. `options.json` sets the report's
//! sort key and place. Everything is deterministic.

use profkit_events::paddle::legacy::{self, Profile};
use profkit_events::paddle::nodetree::{self, NodeTreesProto, proto as nt};
use profkit_events::{Event, Recording, ThreadEvents};

use crate::GeneratedFile;

/// A base timestamp: 2026-11-20T00:00:00Z in nanoseconds.
const T0: u64 = 1_795_132_800_000_000_000;

/// Every generated input file, in a fixed order.
pub fn cases() -> Vec<GeneratedFile> {
    let mut out = Vec::new();
    let mut add = |case: &str, file: &str, contents: Vec<u8>| {
        out.push(GeneratedFile {
            case: case.to_owned(),
            file: file.to_owned(),
            contents,
        })
    };
    add(
        "unmatched-pops",
        "input.events.json",
        events_json(&unmatched_pops()),
    );
    add(
        "leftover-pushes",
        "input.events.json",
        events_json(&leftover_pushes()),
    );
    add(
        "same-name-nesting",
        "input.events.json",
        events_json(&same_name_nesting()),
    );
    add(
        "many-threads",
        "input.events.json",
        events_json(&many_threads()),
    );
    add("many-threads", "options.json", options("calls", "cpu"));
    add("sort-ties", "input.events.json", events_json(&sort_ties()));
    add("sort-ties", "options.json", options("calls", "cpu"));
    add(
        "device-times",
        "input.events.json",
        events_json(&device_times()),
    );
    add("device-times", "options.json", options("total", "all"));
    add(
        "profile-kernels-memory",
        "input.pb",
        legacy::encode_profile(&kernels_memory()),
    );
    add(
        "profile-kernels-memory",
        "options.json",
        options("ave", "all"),
    );
    add(
        "profile-problems",
        "input.pb",
        legacy::encode_profile(&profile_problems()),
    );
    add(
        "nodetree-open-types",
        "input.paddle_trace.pb",
        nodetree::encode_node_trees(&open_types()),
    );
    add(
        "nodetree-broken-tree",
        "input.paddle_trace.pb",
        nodetree::encode_node_trees(&broken_tree()),
    );
    add("error-truncated", "input.pb", truncated());
    add("error-wrong-wire-type", "input.pb", wrong_wire_type());
    add("error-bad-utf8", "input.paddle_trace.pb", bad_utf8());
    out
}

fn options(sort: &str, place: &str) -> Vec<u8> {
    format!("{{\"sort\": \"{sort}\", \"place\": \"{place}\"}}\n").into_bytes()
}

/// A recording as JSON with one event per line.
pub fn events_json(recording: &Recording) -> Vec<u8> {
    let mut text = String::from("{\"threads\": [\n");
    for (i, t) in recording.threads.iter().enumerate() {
        let name = serde_json::to_string(&t.name).unwrap_or_default();
        text += &format!(
            "  {{\"thread\": {}, \"name\": {name}, \"events\": [\n",
            t.thread
        );
        for (k, e) in t.events.iter().enumerate() {
            let line = serde_json::to_string(e).unwrap_or_default();
            let comma = if k + 1 < t.events.len() { "," } else { "" };
            text += &format!("    {line}{comma}\n");
        }
        let comma = if i + 1 < recording.threads.len() {
            ","
        } else {
            ""
        };
        text += &format!("  ]}}{comma}\n");
    }
    text += "]}\n";
    text.into_bytes()
}

/// Builds a thread from (kind, name, microseconds after T0).
fn thread(index: u32, events: &[(&str, &'static str, u64)]) -> ThreadEvents {
    ThreadEvents {
        thread: index,
        events: events
            .iter()
            .map(|&(kind, name, us)| {
                let ns = T0 + us * 1000;
                match kind {
                    "push" => Event::push(name, index, ns),
                    "pop" => Event::pop(name, index, ns),
                    _ => Event::mark(name, index, ns),
                }
            })
            .collect(),
        ..ThreadEvents::default()
    }
}

fn recording(threads: Vec<ThreadEvents>) -> Recording {
    Recording {
        threads,
        ..Recording::default()
    }
}

/// Pops with no push: before anything, of a name never pushed, and one too many.
fn unmatched_pops() -> Recording {
    recording(vec![thread(
        0,
        &[
            ("mark", "_start_profiler_", 0),
            ("pop", "forward", 1),
            ("push", "forward", 10),
            ("push", "matmul", 20),
            ("pop", "relu", 25),
            ("pop", "matmul", 40),
            ("pop", "forward", 50),
            ("pop", "forward", 60),
            ("mark", "_stop_profiler_", 70),
        ],
    )])
}

/// Pushes never popped: the outer range is left open (its children are still named under it),
/// and a last push is open at the stop mark.
fn leftover_pushes() -> Recording {
    recording(vec![thread(
        0,
        &[
            ("mark", "_start_profiler_", 0),
            ("push", "train", 5),
            ("push", "step", 10),
            ("pop", "step", 30),
            ("push", "step", 40),
            ("push", "optimizer", 45),
            ("pop", "optimizer", 55),
            ("pop", "step", 60),
            ("push", "step", 70),
            ("mark", "_stop_profiler_", 80),
        ],
    )])
}

/// A name nested in itself (recursion), a pop that closes a push below the top, and siblings of
/// one name.
fn same_name_nesting() -> Recording {
    recording(vec![thread(
        0,
        &[
            ("push", "f", 0),
            ("push", "f", 10),
            ("push", "f", 20),
            ("pop", "f", 30),
            ("pop", "f", 40),
            ("pop", "f", 50),
            ("push", "a", 60),
            ("push", "b", 70),
            ("pop", "a", 80),
            ("pop", "b", 90),
            ("push", "g", 100),
            ("push", "h", 110),
            ("pop", "h", 120),
            ("push", "h", 130),
            ("pop", "h", 150),
            ("pop", "g", 160),
        ],
    )])
}

/// Twelve threads with indices from 0 to 22 (not contiguous, listed out of order), each running
/// a few ops a different number of times under a `step`; the merged section pairs them all.
fn many_threads() -> Recording {
    const OPS: [&str; 5] = ["matmul", "relu", "softmax", "add", "layer_norm"];
    let mut threads = Vec::new();
    for i in 0..12u32 {
        let index = (i * 7) % 23;
        let mut events = Vec::new();
        let mut us = u64::from(i) * 3;
        for step in 0..(1 + i % 3) {
            events.push(("push", "step", us));
            us += 1;
            for (k, op) in OPS.iter().enumerate() {
                for _ in 0..=((k as u32 + i + step) % 3) {
                    events.push(("push", *op, us));
                    us += 1 + ((k as u64 * 7 + u64::from(i)) % 5);
                    if k == 0 {
                        events.push(("push", "compute", us));
                        us += 2;
                        events.push(("pop", "compute", us));
                        us += 1;
                    }
                    events.push(("pop", *op, us));
                    us += 1;
                }
            }
            events.push(("pop", "step", us));
            us += 2;
        }
        let mut t = thread(index, &events);
        t.name = Some(format!("worker-{i}"));
        threads.push(t);
    }
    recording(threads)
}

/// Twenty top-level names with calls 3, 1, 2, 3, 1, 2, ...: sorting by calls over more than 16
/// rows moves ties as libstdc++'s `std::sort` does.
fn sort_ties() -> Recording {
    const NAMES: [&str; 20] = [
        "r00", "r01", "r02", "r03", "r04", "r05", "r06", "r07", "r08", "r09", "r10", "r11", "r12",
        "r13", "r14", "r15", "r16", "r17", "r18", "r19",
    ];
    let mut events = Vec::new();
    let mut us = 0;
    for (i, name) in NAMES.iter().enumerate() {
        let calls = [3, 1, 2][i % 3];
        for _ in 0..calls {
            events.push(("push", *name, us));
            events.push(("pop", *name, us + 1 + i as u64));
            us += 30;
        }
    }
    recording(vec![thread(0, &events)])
}

/// Ranges with device timestamps (as a device timer gives them): the All report shows both.
fn device_times() -> Recording {
    let mut t = thread(
        0,
        &[
            ("push", "forward", 0),
            ("push", "conv2d", 10),
            ("pop", "conv2d", 30),
            ("push", "conv2d", 40),
            ("pop", "conv2d", 55),
            ("pop", "forward", 60),
            ("push", "sync", 70),
            ("pop", "sync", 71),
        ],
    );
    let device_us = [5, 15, 95, 100, 180, 190, 200, 200];
    for (e, us) in t.events.iter_mut().zip(device_us) {
        e.device = Some(profkit_events::DeviceTime {
            device: 0,
            ns: 1_000_000 + us * 1000,
        });
    }
    recording(vec![t])
}

fn event(name: &str, ty: i32, start_us: u64, end_us: u64, device: i64, sub: u64) -> legacy::Event {
    legacy::Event {
        r#type: Some(ty),
        name: Some(name.into()),
        start_ns: Some(T0 + start_us * 1000),
        end_ns: Some(T0 + end_us * 1000),
        device_id: Some(device),
        sub_device_id: Some(sub),
        memcopy: None,
        detail_info: None,
    }
}

/// A Profile as a GPU run writes it: CPU ranges on two threads, kernels and a copy on a stream,
/// memory events on three places.
fn kernels_memory() -> Profile {
    let mut events = vec![
        event("matmul", 0, 100, 200, 0, 1),
        event("matmul/compute", 0, 120, 190, 0, 1),
        event("matmul", 0, 0, 50, 0, 1),
        event("matmul/compute", 0, 10, 40, 0, 1),
        event("reader", 0, 0, 300, 0, 0),
    ];
    let mut kernel = event("matmul", 1, 130, 180, 0, 7);
    kernel.detail_info = Some("volta_sgemm_128x64_nn".into());
    events.push(kernel);
    let mut copy = event("matmul", 1, 20, 25, 0, 7);
    copy.memcopy = Some(legacy::MemCopy {
        bytes: Some(1 << 20),
    });
    copy.detail_info = Some("MEMCPY_HtoD".into());
    events.push(copy);
    let mem = |place: i32, device: u32, alloc: &str, free: &str, bytes: u64, freed: bool| {
        legacy::MemEvent {
            start_ns: Some(T0 + 10_000),
            end_ns: Some(if freed { T0 + 290_000 } else { 0 }),
            bytes: Some(bytes),
            place: Some(place),
            thread_id: Some(1),
            device_id: Some(device),
            alloc_in: Some(alloc.into()),
            free_in: Some(if freed { free.into() } else { String::new() }),
        }
    };
    Profile {
        events,
        start_ns: Some(T0 + 20_000),
        end_ns: Some(T0 + 180_000),
        mem_events: vec![
            mem(0, 0, "matmul", "matmul", 4 << 20, true),
            mem(0, 0, "matmul", "reader", 2 << 20, true),
            mem(1, 0, "reader", "", 512 << 10, false),
            mem(2, 0, "reader", "matmul", 1 << 20, true),
        ],
    }
}

/// What Paddle never writes: a range ending before it starts, an unknown type, a nested name
/// without its parent around it, a CPU event without a name, a memory place out of range.
fn profile_problems() -> Profile {
    let mut unnamed = event("", 0, 5, 6, 0, 0);
    unnamed.name = None;
    Profile {
        events: vec![
            event("a", 0, 0, 100, 0, 0),
            event("a/b", 0, 10, 20, 0, 0),
            event("a/c", 0, 90, 120, 0, 0),
            event("backwards", 0, 50, 40, 0, 0),
            event("k", 9, 0, 1, 0, 0),
            unnamed,
        ],
        start_ns: Some(0),
        end_ns: Some(0),
        mem_events: vec![legacy::MemEvent {
            start_ns: Some(T0),
            end_ns: Some(T0 + 1),
            bytes: Some(1),
            place: Some(12),
            thread_id: Some(0),
            device_id: Some(0),
            alloc_in: Some("a".into()),
            free_in: Some("a".into()),
        }],
    }
}

fn host(
    id: i64,
    parent: i64,
    name: &str,
    ty: i32,
    start_us: u64,
    end_us: u64,
    tid: u64,
) -> nt::HostTraceEventNodeProto {
    nt::HostTraceEventNodeProto {
        id,
        parentid: parent,
        host_trace_event: nt::HostTraceEventProto {
            name: name.into(),
            r#type: ty,
            start_ns: if start_us == u64::MAX {
                0
            } else {
                T0 + start_us * 1000
            },
            end_ns: if end_us == u64::MAX {
                u64::MAX
            } else {
                T0 + end_us * 1000
            },
            process_id: 4242,
            thread_id: tid,
        },
        ..nt::HostTraceEventNodeProto::default()
    }
}

fn root(tid: u64) -> nt::HostTraceEventNodeProto {
    host(0, -1, nodetree::ROOT_NAME, 7, u64::MAX, u64::MAX, tid)
}

/// Node trees with what Paddle's own schema cannot read back (types 15, 16 and one no Paddle
/// writes), CUDA runtime calls with kernels, a copy and a set, memory and operator supplement
/// nodes, and a node written with no fields but its ids.
fn open_types() -> NodeTreesProto {
    let mut op = host(2, 1, "matmul dygraph", 0, 20, 80, 11);
    op.runtime_nodes.push(nt::CudaRuntimeTraceEventNodeProto {
        runtime_trace_event: nt::CudaRuntimeTraceEventProto {
            name: "cudaLaunchKernel".into(),
            start_ns: T0 + 30_000,
            end_ns: T0 + 35_000,
            process_id: 4242,
            thread_id: 11,
            correlation_id: 17,
            callback_id: 211,
        },
        device_nodes: vec![
            nt::DeviceTraceEventNodeProto {
                device_event: nt::DeviceTraceEventProto {
                    name: "volta_sgemm_128x64_nn".into(),
                    r#type: 4,
                    start_ns: T0 + 40_000,
                    end_ns: T0 + 90_000,
                    device_id: 0,
                    context_id: 1,
                    stream_id: 7,
                    correlation_id: 17,
                    detail_info: Some(nt::device_trace_event_proto::DetailInfo::KernelInfo(
                        nt::KernelEventInfoProto {
                            block_x: 128,
                            grid_x: 64,
                            registers_per_thread: 96,
                            occupancy: 0.5,
                            ..nt::KernelEventInfoProto::default()
                        },
                    )),
                },
            },
            nt::DeviceTraceEventNodeProto {
                device_event: nt::DeviceTraceEventProto {
                    name: "Memcpy HtoD".into(),
                    r#type: 5,
                    start_ns: T0 + 36_000,
                    end_ns: T0 + 39_000,
                    stream_id: 7,
                    detail_info: Some(nt::device_trace_event_proto::DetailInfo::MemcpyInfo(
                        nt::MemcpyEventInfoProto {
                            num_bytes: 4096,
                            copy_kind: "HtoD".into(),
                            src_kind: "Pageable".into(),
                            dst_kind: "Device".into(),
                        },
                    )),
                    ..nt::DeviceTraceEventProto::default()
                },
            },
            nt::DeviceTraceEventNodeProto {
                device_event: nt::DeviceTraceEventProto {
                    name: "Memset".into(),
                    r#type: 6,
                    start_ns: T0 + 91_000,
                    end_ns: T0 + 92_000,
                    stream_id: 7,
                    detail_info: Some(nt::device_trace_event_proto::DetailInfo::MemsetInfo(
                        nt::MemsetEventInfoProto {
                            num_bytes: 256,
                            memory_kind: "Device".into(),
                            value: 0,
                        },
                    )),
                    ..nt::DeviceTraceEventProto::default()
                },
            },
        ],
    });
    op.mem_nodes.push(nt::MemTraceEventNodeProto {
        mem_event: nt::MemTraceEventProto {
            timestamp_ns: T0 + 25_000,
            r#type: 0,
            addr: 0x7f00_0000_1000,
            process_id: 4242,
            thread_id: 11,
            increase_bytes: 4096,
            place: "Place(gpu:0)".into(),
            current_allocated: 4096,
            current_reserved: 1 << 20,
            peak_allocated: 4096,
            peak_reserved: 1 << 20,
        },
    });
    op.op_supplement_nodes.push(nt::OperatorSupplementEventNodeProto {
        op_supplement_event: nt::OperatorSupplementEventProto {
            timestamp_ns: T0 + 21_000,
            op_type: "matmul".into(),
            process_id: 4242,
            thread_id: 11,
            input_shapes: nt::operator_supplement_event_proto::InputShapeProto {
                key: vec!["X".into(), "Y".into()],
                shape_vecs: vec![
                    nt::operator_supplement_event_proto::input_shape_proto::ShapeVector {
                        shapes: vec![
                            nt::operator_supplement_event_proto::input_shape_proto::shape_vector::Shape {
                                size: vec![64, 128],
                            },
                        ],
                    },
                ],
            },
            dtypes: nt::operator_supplement_event_proto::DtypeProto {
                key: vec!["X".into()],
                dtype_vecs: vec![nt::operator_supplement_event_proto::dtype_proto::DtypeVector {
                    dtype: vec!["float32".into()],
                }],
            },
            callstack: "model.py:12".into(),
            op_id: 3,
        },
    });
    let bare = nt::HostTraceEventNodeProto {
        id: 5,
        parentid: 0,
        ..nt::HostTraceEventNodeProto::default()
    };
    NodeTreesProto {
        version: "1.0.2".into(),
        span_index: 3,
        thread_trees: vec![
            nt::ThreadNodeTreeProto {
                thread_id: 11,
                host_nodes: vec![
                    root(11),
                    host(1, 0, "ProfileStep#3", 2, 10, 100, 11),
                    op,
                    host(3, 2, "matmul kernel launch", 15, 28, 36, 11),
                    host(4, 1, "run_program", 16, 82, 95, 11),
                    host(6, 1, "mystery", 99, 96, 97, 11),
                ],
            },
            nt::ThreadNodeTreeProto {
                thread_id: 12,
                host_nodes: vec![root(12), host(1, 0, "Dataloader", 1, 0, 60, 12), bare],
            },
        ],
        extra_info: vec![nt::ExtraInfoMap {
            key: "11".into(),
            value: "MainThread".into(),
        }],
        device_property: vec![nt::DevicePropertyProto {
            id: 0,
            name: "Tesla V100-SXM2-16GB".into(),
            total_global_memory: 16 << 30,
            compute_major: 7,
            compute_minor: 0,
            max_threads_per_block: 1024,
            max_threads_per_multiprocessor: 2048,
            regs_per_block: 65536,
            regs_per_multiprocessor: 65536,
            warp_size: 32,
            shared_memory_per_block: 49152,
            shared_memory_per_multiprocessor: 98304,
            sm_count: 80,
            shared_memory_per_block_optin: 98304,
        }],
    }
}

/// Trees that are not trees: a dangling parent, a cycle, a duplicate id, a child outside its
/// parent's time, a host event of another thread, two roots in one thread, none in another.
fn broken_tree() -> NodeTreesProto {
    let mut other_thread = host(7, 1, "elsewhere", 0, 12, 13, 99);
    other_thread.host_trace_event.thread_id = 99;
    NodeTreesProto {
        version: "1.0.2".into(),
        span_index: 0,
        thread_trees: vec![
            nt::ThreadNodeTreeProto {
                thread_id: 21,
                host_nodes: vec![
                    root(21),
                    host(1, 0, "step", 2, 10, 50, 21),
                    host(2, 1, "late", 0, 40, 60, 21),
                    host(3, 77, "dangling", 0, 11, 12, 21),
                    host(4, 5, "loop-a", 0, 11, 12, 21),
                    host(5, 4, "loop-b", 0, 11, 12, 21),
                    host(1, 0, "duplicate", 0, 70, 71, 21),
                    other_thread,
                    root(21),
                ],
            },
            nt::ThreadNodeTreeProto {
                thread_id: 22,
                host_nodes: vec![host(1, 0, "orphan", 0, 0, 1, 22)],
            },
        ],
        ..NodeTreesProto::default()
    }
}

/// The Profile of `profile-kernels-memory` without its last 3 bytes (inside its last memory
/// event).
fn truncated() -> Vec<u8> {
    let bytes = legacy::encode_profile(&kernels_memory());
    bytes[..bytes.len() - 3].to_vec()
}

/// `Profile.events[1].start_ns` with the length-delimited wire type.
fn wrong_wire_type() -> Vec<u8> {
    let mut profile = kernels_memory();
    profile.events.truncate(2);
    let mut bytes = legacy::encode_profile(&profile);
    // The second event starts after the first; its name comes first, then start_ns (tag 0x10).
    let first_len = usize::from(bytes[1]);
    let second = 2 + first_len;
    let name_len = usize::from(bytes[second + 3]);
    let start_tag = second + 4 + name_len;
    bytes[start_tag] = 0x12;
    bytes
}

/// A host event name that is not UTF-8.
fn bad_utf8() -> Vec<u8> {
    let mut trees = open_types();
    trees.thread_trees[0].host_nodes[1].host_trace_event.name = "Profile\u{7f}Step".into();
    let mut bytes = nodetree::encode_node_trees(&trees);
    if let Some(at) = bytes.iter().position(|&b| b == 0x7f) {
        bytes[at] = 0xc3;
    }
    bytes
}

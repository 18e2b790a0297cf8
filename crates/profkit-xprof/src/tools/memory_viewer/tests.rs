//! The memory viewer's rules on small programs, and hostile buffer assignments (errors or notes,
//! never a panic or a hang). Real programs are compared with xprof in `conformance/`.

use super::*;
use crate::op_stats::hlo::xla::{
    BufferAssignmentProto, HeapSimulatorTrace, HloComputationProto, HloModuleProto, OpMetadata,
    buffer_allocation_proto::Assigned, heap_simulator_trace::Event, logical_buffer_proto::Location,
    stack_frame_index_proto,
};

const F32: i32 = 11;

fn instruction(id: i64, name: &str, dims: &[i64]) -> HloInstructionProto {
    HloInstructionProto {
        id,
        name: name.to_owned(),
        opcode: "fusion".to_owned(),
        shape: Some(ShapeProto {
            element_type: F32,
            dimensions: dims.to_vec(),
            ..ShapeProto::default()
        }),
        metadata: Some(OpMetadata {
            op_name: format!("jit(f)/{name}"),
            ..OpMetadata::default()
        }),
        ..HloInstructionProto::default()
    }
}

fn buffer(id: i64, instruction: i64, size: i64) -> LogicalBufferProto {
    LogicalBufferProto {
        id,
        size,
        defined_at: Some(Location {
            instruction_id: instruction,
            ..Location::default()
        }),
        ..LogicalBufferProto::default()
    }
}

fn event(kind: i32, buffer_id: i64, share_with: i64) -> Event {
    Event {
        kind,
        buffer_id,
        share_with_canonical_id: share_with,
        instruction_name: format!("op{buffer_id}"),
        ..Event::default()
    }
}

/// A program with a parameter (id 1, 64 KiB), two temporary buffers (ids 2 and 3, 32 KiB and
/// 1 KiB) in one allocation, and `events` as the heap simulator's trace.
fn program(events: Vec<Event>) -> HloProto {
    let instructions = vec![
        instruction(10, "p", &[16384]),
        instruction(20, "a", &[8192]),
        instruction(30, "b", &[256]),
    ];
    HloProto {
        hlo_module: Some(HloModuleProto {
            name: "jit_f".to_owned(),
            entry_computation_name: "main".to_owned(),
            computations: vec![HloComputationProto {
                instructions,
                ..HloComputationProto::default()
            }],
            ..HloModuleProto::default()
        }),
        buffer_assignment: Some(BufferAssignmentProto {
            logical_buffers: vec![
                buffer(1, 10, 65536),
                buffer(2, 20, 32768),
                buffer(3, 30, 1024),
            ],
            buffer_allocations: vec![
                BufferAllocationProto {
                    index: 0,
                    size: 65536,
                    is_entry_computation_parameter: true,
                    assigned: vec![Assigned {
                        logical_buffer_id: 1,
                        size: 65536,
                        ..Assigned::default()
                    }],
                    ..BufferAllocationProto::default()
                },
                BufferAllocationProto {
                    index: 1,
                    size: 33792,
                    assigned: vec![
                        Assigned {
                            logical_buffer_id: 2,
                            size: 32768,
                            ..Assigned::default()
                        },
                        Assigned {
                            logical_buffer_id: 3,
                            offset: 32768,
                            size: 1024,
                            ..Assigned::default()
                        },
                    ],
                    ..BufferAllocationProto::default()
                },
            ],
            heap_simulator_traces: vec![HeapSimulatorTrace {
                events,
                ..HeapSimulatorTrace::default()
            }],
            ..BufferAssignmentProto::default()
        }),
    }
}

const ALLOC: i32 = 0;
const FREE: i32 = 1;
const SHARE: i32 = 2;

#[test]
fn peak_spans_and_heap_objects() {
    let proto = program(vec![
        event(ALLOC, 2, 0),
        event(ALLOC, 3, 0),
        event(FREE, 2, 0),
        event(FREE, 3, 0),
    ]);
    let viewer = from_hlo_proto(&proto, 0).unwrap();
    assert!(viewer.missing.is_empty(), "{:?}", viewer.missing);
    let r = &viewer.result;
    let kib = 1.0 / 1024.0;
    // The parameter's 64 KiB is under every point of the heap.
    assert_eq!(
        r.heap_sizes,
        vec![64.0 * kib, 96.0 * kib, 97.0 * kib, 65.0 * kib, 64.0 * kib]
    );
    assert_eq!(r.peak_heap_mib, 97.0 * kib);
    assert_eq!(r.peak_heap_size_position, 1);
    // The parameter, the 32 KiB buffer, and the 1 KiB one among the small buffers.
    let labels: Vec<&str> = r.max_heap.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "p: f32[16384] # jit(f)/p",
            "a: f32[8192] # jit(f)/a",
            "small (<16384 bytes)"
        ]
    );
    assert_eq!(r.max_heap_to_by_size, [0, 1, 2]);
    assert_eq!(
        r.logical_buffer_spans[&2],
        BufferSpan { start: 0, limit: 2 }
    );
    assert_eq!(
        r.logical_buffer_spans[&3],
        BufferSpan { start: 1, limit: 3 }
    );
    assert_eq!(r.indefinite_lifetimes.len(), 1);
    assert_eq!(r.entry_computation_parameters_mib, 64.0 * kib);
    // The allocation's block, then a block per buffer at its offset.
    let blocks: Vec<(i32, f64)> = r
        .buffer_blocks
        .iter()
        .map(|b| (b.logical_buffer_id, b.offset))
        .collect();
    assert_eq!(blocks, [(-1, 0.0), (2, 0.0), (3, 32768.0)]);
    let json = to_json(r);
    assert!(json.starts_with("{\"heapSizes\":[0.0625,"), "{json}");
}

#[test]
fn a_sharer_takes_over_freed_memory() {
    let proto = program(vec![
        event(ALLOC, 2, 0),
        event(FREE, 2, 0),
        event(SHARE, 3, 2),
        event(FREE, 3, 0),
    ]);
    let r = from_hlo_proto(&proto, 0).unwrap().result;
    assert_eq!(
        r.logical_buffer_spans[&2],
        BufferSpan { start: 0, limit: 1 }
    );
    assert_eq!(
        r.logical_buffer_spans[&3],
        BufferSpan { start: 2, limit: 3 }
    );
}

#[test]
fn hostile_traces_are_errors() {
    let twice = program(vec![
        event(ALLOC, 2, 0),
        event(FREE, 2, 0),
        event(FREE, 2, 0),
    ]);
    let err = from_hlo_proto(&twice, 0).unwrap_err().to_string();
    assert!(err.contains("freed multiple times"), "{err}");

    let cycle = program(vec![
        event(SHARE, 2, 3),
        event(SHARE, 3, 2),
        event(ALLOC, 2, 0),
    ]);
    let err = from_hlo_proto(&cycle, 0).unwrap_err().to_string();
    assert!(err.contains("cycle"), "{err}");

    let unknown_kind = program(vec![event(7, 2, 0)]);
    let err = from_hlo_proto(&unknown_kind, 0).unwrap_err().to_string();
    assert!(err.contains("Unhandled event kind: 7"), "{err}");

    // A buffer of negative size: the heap goes below zero once another is freed.
    let mut negative = program(vec![
        event(ALLOC, 3, 0),
        event(ALLOC, 2, 0),
        event(FREE, 2, 0),
    ]);
    negative.buffer_assignment.as_mut().unwrap().logical_buffers[2].size = -5;
    let err = from_hlo_proto(&negative, 0).unwrap_err().to_string();
    assert!(err.contains("non-negative"), "{err}");
}

#[test]
fn absurd_ids_and_sizes_do_not_panic() {
    let mut proto = program(vec![
        event(ALLOC, 2, 0),
        event(ALLOC, 999, 0),
        event(SHARE, 3, i64::MIN),
        event(ALLOC, 3, 0),
        event(FREE, i64::MAX, 0),
    ]);
    let assignment = proto.buffer_assignment.as_mut().unwrap();
    assignment.logical_buffers[1].size = i64::MAX;
    assignment.logical_buffers[2].size = i64::MAX;
    assignment.logical_buffers[2].defined_at = Some(Location {
        instruction_id: 30,
        shape_index: vec![i64::MAX, -1],
        ..Location::default()
    });
    assignment.buffer_allocations[1].assigned.push(Assigned {
        logical_buffer_id: -42,
        offset: i64::MAX,
        size: i64::MIN,
        ..Assigned::default()
    });
    assignment.buffer_allocations[1].size = i64::MAX;
    let module = proto.hlo_module.as_mut().unwrap();
    module.computations[0].instructions[2]
        .shape
        .as_mut()
        .unwrap()
        .dimensions = vec![i64::MAX, i64::MAX];
    // Frames whose parents loop, and ids past the index.
    module.stack_frame_index = Some(StackFrameIndexProto {
        file_names: vec!["f.py".to_owned()],
        file_locations: vec![stack_frame_index_proto::FileLocation {
            file_name_id: 9,
            line: 3,
            ..Default::default()
        }],
        stack_frames: vec![
            stack_frame_index_proto::StackFrame {
                file_location_id: 1,
                parent_frame_id: 2,
            },
            stack_frame_index_proto::StackFrame {
                file_location_id: 5,
                parent_frame_id: 1,
            },
        ],
        ..StackFrameIndexProto::default()
    });
    for i in &mut module.computations[0].instructions {
        i.metadata.as_mut().unwrap().stack_frame_id = 1;
    }
    let viewer = from_hlo_proto(&proto, 0).unwrap();
    assert!(
        viewer.missing.iter().any(|m| m.contains("lacks")),
        "{:?}",
        viewer.missing
    );
    let _ = to_json(&viewer.result);
    for space in [-1, 1, i64::MAX] {
        let _ = from_hlo_proto(&proto, space).map(|v| to_json(&v.result));
    }
    // An empty proto: nothing to show.
    let empty = from_hlo_proto(&HloProto::default(), 0).unwrap();
    assert_eq!(to_json(&empty.result), "{}");
}

#[test]
fn stack_frames_end_on_cycles() {
    let index = StackFrameIndexProto {
        file_names: vec!["a.py".to_owned()],
        file_locations: vec![stack_frame_index_proto::FileLocation {
            file_name_id: 1,
            line: 7,
            column: 2,
            ..Default::default()
        }],
        stack_frames: vec![stack_frame_index_proto::StackFrame {
            file_location_id: 1,
            parent_frame_id: 1,
        }],
        ..StackFrameIndexProto::default()
    };
    assert_eq!(stack_frames(&index, 1), "a.py:7:2");
    assert_eq!(stack_frames(&index, 0), "");
    assert_eq!(stack_frames(&index, 5), "");
}

#[test]
fn unknown_module_names_the_modules() {
    let err = memory_viewer(&[XSpace::default()], "jit_f(1)", 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no HLO module"), "{err}");
}

#[test]
fn a_shape_repeated_past_the_budget_is_an_error() {
    // One instruction of a 20,000-element tuple (about 160 KB of text), defining the 2,000
    // buffers of an output allocation: each would print the shape.
    let mut proto = program(Vec::new());
    let module = proto.hlo_module.as_mut().unwrap();
    let tuple = ShapeProto {
        element_type: 13,
        tuple_shapes: vec![
            ShapeProto {
                element_type: F32,
                dimensions: vec![1],
                ..ShapeProto::default()
            };
            20_000
        ],
        ..ShapeProto::default()
    };
    module.computations[0].instructions[0].shape = Some(tuple);
    let assignment = proto.buffer_assignment.as_mut().unwrap();
    assignment.logical_buffers = (0..2000).map(|id| buffer(id, 10, 8)).collect();
    assignment.buffer_allocations[0].assigned = (0..2000)
        .map(|id| Assigned {
            logical_buffer_id: id,
            size: 8,
            ..Assigned::default()
        })
        .collect();
    let err = from_hlo_proto(&proto, 0).unwrap_err().to_string();
    assert!(err.contains("more than"), "{err}");
}

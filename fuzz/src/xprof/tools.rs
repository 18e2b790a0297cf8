//! Target `xprof_tools`: XSpaces shaped as the profilers' (host threads, GPU and TPU planes, the
//! metadata plane's HLO protos), drawn from the bytes, through xprof's OpStats and the tools
//! computed from it (`profkit xprof`): `framework_op_stats`, `kernel_stats`, `hlo_stats`,
//! `roofline_model`, `memory_profile`, `op_profile` (each grouping, and from the decoded OpStats
//! file too), `memory_viewer` (of a buffer assignment drawn from the bytes, and of each module),
//! the `kernels` and `hlo_ops` Arrow tables, the tool list and the OpStats file (its steps
//! database and tf-function stats included, of one host or two); then the tools rendered from an OpStats (`overview_page`,
//! `input_pipeline_analyzer`, `pod_viewer`), from that OpStats with a steps database drawn from
//! the bytes too (cores, durations, breakdowns with huge times, packed breakdowns of another type
//! or of bytes that do not decode).
//!
//! Names, stats and times come from pools that hold what the rules look at (framework op names,
//! XLA op stats, allocator events, step markers and step stats, tf-function calls, collectives,
//! copies, epoch-dated lines, negative and huge times, HLO
//! protos that are random bytes or modules drawn from the bytes (fusions calling missing or
//! cyclic computations), kernel launch details, GPU vendors). No panic; the tools' JSON parses; the OpStats file decodes.

use profkit_xplane::{PlaneBuilder, XPlane, XSpace};

const PLANES: [&str; 6] = [
    "/host:CPU",
    "/device:GPU:0",
    "/device:TPU:0",
    "/host:metadata",
    "/device:TPU:0 SparseCore 0",
    "Task Environment",
];

const LINES: [&str; 6] = [
    "tf_Compute",
    "XLA Ops",
    "XLA Modules",
    "Steps",
    "Stream #1(Compute)",
    "python",
];

const NAMES: [&str; 19] = [
    "ncclAllReduce",
    "IteratorGetNext",
    "TraceContext",
    "volta_fp16_gemm",
    "model/dense/MatMul:MatMul",
    "Iterator::Root::Prefetch",
    "jit(f)/transpose(jvp())/add:add",
    "MemoryAllocation",
    "MemoryDeallocation",
    "train",
    "EagerKernelExecute",
    "fusion.1",
    "IDLE",
    "",
    "a:b:c",
    "MEMCPYHToD",
    "regs:32 static_shared:4294967296 grid:2,1,1 block:128,-1,1 occ_pct:nan",
    "volta_h884gemm",
    "Cijk_Ailk_MT64_MI16x16x16x1_SN",
];

const STATS: [&str; 32] = [
    "correlation_id",
    "step_name",
    "tf_function_call",
    "tracing_count",
    "_pt",
    "_p",
    "_ct",
    "_c",
    "input_pipeline_stage_name",
    "device_offset_ps",
    "device_duration_ps",
    "all_reduce_unique_id",
    "memcpy_details",
    "shape",
    "core_details",
    "group_id",
    "tf_op",
    "hlo_op",
    "hlo_module",
    "program_id",
    "symbol_id",
    "is_eager",
    "group_id",
    "step_num",
    "bytes_allocated",
    "allocator_name",
    "flops",
    "bytes_accessed",
    "Hlo Proto",
    "kernel_details",
    "input_pipeline_stage_id",
    "hlo_category",
];

/// The space `data` describes: a header byte per plane (its name), then per event five bytes
/// (line, name, stat, value, time step).
pub fn space(data: &[u8]) -> XSpace {
    let mut planes: Vec<XPlane> = Vec::new();
    for chunk in data.chunks(41).take(8) {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name(PLANES[usize::from(chunk[0]) % PLANES.len()]);
        // The vendor picks the kernel stats' TensorCore rules.
        match chunk[0] / 8 % 3 {
            1 => {
                b.add_stat("device_vendor", "Nvidia");
            }
            2 => {
                b.add_stat("device_vendor", "AMD");
            }
            _ => {}
        }
        // The metadata plane holds an HLO module drawn from the bytes too (program 0, whose
        // instructions the TPU ops name): fusions calling computations that exist, do not, or
        // call back, with operands, shapes and constants of any kind.
        if chunk[0] % 8 == 3 {
            let id = b.event_metadata_id("jit_fuzz(0)");
            if let Some(mut md) = b.event_metadata(id) {
                md.add_stat(
                    "Hlo Proto",
                    bytes::Bytes::from(fused_hlo_proto(&chunk[1..])),
                );
                md.add_stat("program_id", 0_u64);
            }
        }
        let mut offset = 0i64;
        for event in chunk[1..].chunks_exact(5) {
            let [line, name, stat, value, step] =
                [event[0], event[1], event[2], event[3], event[4]];
            // Line 3 is the `Steps` line of derived step markers (`kThreadIdStepInfo`).
            let id = match line % 4 {
                3 => i64::from(0xdead_beef_u32 as i32),
                n => i64::from(n),
            };
            let mut l = b.line(id);
            l.set_name(LINES[usize::from(line / 4) % LINES.len()]);
            if line & 0x80 != 0 {
                l.set_timestamp_ns(1_700_000_000_000_000_000);
            }
            offset = offset.wrapping_add(i64::from(step) * 1_000 - 40_000);
            let duration = match value % 4 {
                0 => 0,
                1 => -5,
                2 => i64::MAX / 2,
                _ => i64::from(value) * 1_000,
            };
            let mut e = l.add_event(NAMES[usize::from(name) % NAMES.len()]);
            e.set_offset_ps(offset).set_duration_ps(duration);
            let stat_name = STATS[usize::from(stat) % STATS.len()];
            match stat / 16 % 4 {
                0 => e.add_stat(stat_name, i64::from(value) - 128),
                1 => e.add_stat(stat_name, u64::from(value) << 40),
                2 => e.add_stat(stat_name, NAMES[usize::from(value) % NAMES.len()]),
                _ => e.add_stat(stat_name, bytes::Bytes::from(event.to_vec())),
            };
        }
        planes.push(plane);
    }
    XSpace {
        planes,
        ..XSpace::default()
    }
}

/// A program with a buffer assignment drawn from the bytes: logical buffers with ids, sizes and
/// colors from pools that hold absurd ones, allocations with every flag and buffers the
/// assignment may lack, and a heap simulator trace of every event kind (unknown ones too),
/// sharing with buffers that may not exist or loop.
fn hlo_proto(data: &[u8]) -> profkit_xprof::proto::xla::HloProto {
    use profkit_xprof::proto::xla::{
        BufferAllocationProto, BufferAssignmentProto, HeapSimulatorTrace, HloComputationProto,
        HloInstructionProto, HloModuleProto, HloProto, LayoutProto, LogicalBufferProto, ShapeProto,
        TileProto, buffer_allocation_proto::Assigned, heap_simulator_trace::Event,
        logical_buffer_proto::Location,
    };
    const IDS: [i64; 6] = [0, 1, 2, 3, -1, i64::MAX];
    const SIZES: [i64; 6] = [0, 4, 16384, 1 << 40, -8, i64::MAX];
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let mut instructions = Vec::new();
    for i in 0..4_u8 {
        let b = byte(usize::from(i));
        instructions.push(HloInstructionProto {
            id: i64::from(i),
            name: format!("op{i}"),
            opcode: "fusion".into(),
            shape: Some(ShapeProto {
                element_type: i32::from(b % 24),
                dimensions: vec![i64::from(b), SIZES[usize::from(b) % SIZES.len()]],
                tuple_shapes: vec![ShapeProto::default(); usize::from(b % 3)],
                layout: (b & 1 == 1).then(|| {
                    Box::new(LayoutProto {
                        minor_to_major: vec![1, 0],
                        tiles: vec![TileProto {
                            dimensions: vec![8, i64::MIN],
                        }],
                        memory_space: i64::from(b % 7),
                        ..LayoutProto::default()
                    })
                }),
                ..ShapeProto::default()
            }),
            backend_config: data.get(..usize::from(b % 8)).unwrap_or_default().to_vec(),
            ..HloInstructionProto::default()
        });
    }
    let mut logical_buffers = Vec::new();
    let mut assigned = Vec::new();
    for (i, chunk) in data.chunks(3).take(8).enumerate() {
        let [a, b, c] = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let id = IDS[usize::from(a) % IDS.len()];
        logical_buffers.push(LogicalBufferProto {
            id,
            size: SIZES[usize::from(b) % SIZES.len()],
            color: i64::from(c % 3),
            defined_at: Some(Location {
                instruction_id: i64::from(a % 5),
                shape_index: vec![i64::from(b % 3) - 1],
                ..Location::default()
            }),
        });
        assigned.push(Assigned {
            logical_buffer_id: IDS[(usize::from(b) + i) % IDS.len()],
            offset: SIZES[usize::from(c) % SIZES.len()],
            size: SIZES[usize::from(a) % SIZES.len()],
            ..Assigned::default()
        });
    }
    let flags = byte(5);
    let allocations = vec![
        BufferAllocationProto {
            index: 0,
            size: SIZES[usize::from(flags) % SIZES.len()],
            is_thread_local: flags & 1 != 0,
            is_entry_computation_parameter: flags & 2 != 0,
            is_constant: flags & 4 != 0,
            maybe_live_out: flags & 8 != 0,
            is_tuple: flags & 16 != 0,
            color: i64::from(flags / 32 % 2),
            assigned: if flags & 64 == 0 {
                assigned.iter().step_by(2).cloned().collect()
            } else {
                Vec::new()
            },
            ..BufferAllocationProto::default()
        },
        BufferAllocationProto {
            index: i64::from(flags % 2),
            size: 1 << 20,
            assigned: if flags & 64 == 0 {
                assigned.iter().skip(1).step_by(2).cloned().collect()
            } else {
                assigned.clone()
            },
            ..BufferAllocationProto::default()
        },
    ];
    // Kinds drawn from the bytes, or (flag 64) a well-formed trace: each drawn buffer allocated
    // (or shared with the one before) in turn, then freed in turn.
    let drawn: Vec<u8> = data.iter().skip(6).take(24).copied().collect();
    let event = |kind: i32, b: u8| Event {
        kind,
        buffer_id: IDS[usize::from(b / 4) % IDS.len()],
        share_with_canonical_id: IDS[usize::from(b / 24) % IDS.len()],
        instruction_name: "op".into(),
        ..Event::default()
    };
    let events: Vec<Event> = if flags & 64 == 0 {
        drawn.iter().map(|&b| event(i32::from(b % 4), b)).collect()
    } else {
        let mut seen = Vec::new();
        let mut events = Vec::new();
        for &b in &drawn {
            let e = event(if b % 5 == 0 { 2 } else { 0 }, b);
            if !seen.contains(&e.buffer_id) {
                seen.push(e.buffer_id);
                events.push(e);
            }
        }
        let frees: Vec<Event> = events
            .iter()
            .map(|e| Event {
                kind: 1,
                buffer_id: e.buffer_id,
                instruction_name: "op".into(),
                ..Event::default()
            })
            .collect();
        events.extend(frees);
        events
    };
    HloProto {
        hlo_module: Some(HloModuleProto {
            name: "jit_fuzz".into(),
            computations: vec![HloComputationProto {
                instructions,
                ..HloComputationProto::default()
            }],
            ..HloModuleProto::default()
        }),
        buffer_assignment: Some(BufferAssignmentProto {
            logical_buffers,
            buffer_allocations: allocations,
            heap_simulator_traces: vec![HeapSimulatorTrace {
                events,
                ..HeapSimulatorTrace::default()
            }],
            ..BufferAssignmentProto::default()
        }),
    }
}

/// The memory viewer of the drawn program in memory spaces 0 to 2, and of every module the
/// space's random HLO protos decode to: an error or JSON, never a panic.
fn memory_viewer(data: &[u8], space: &XSpace) {
    use profkit_xprof::tools::memory_viewer;
    let proto = hlo_proto(data);
    for color in 0..3 {
        if let Ok(viewer) = memory_viewer::from_hlo_proto(&proto, color) {
            let json = memory_viewer::to_json(&viewer.result);
            serde_json::from_str::<serde_json::Value>(&json)
                .unwrap_or_else(|e| panic!("memory_viewer is not JSON: {e}"));
        }
    }
    let spaces = std::slice::from_ref(space);
    for module in memory_viewer::modules(spaces) {
        let _ = memory_viewer::memory_viewer(spaces, &module.name, 0);
    }
}

/// Protobuf's varint of `v`.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Field `field` as a varint.
fn int_field(out: &mut Vec<u8>, field: u64, v: u64) {
    varint(out, field << 3);
    varint(out, v);
}

/// Field `field` as length-delimited bytes.
fn bytes_field(out: &mut Vec<u8>, field: u64, v: &[u8]) {
    varint(out, (field << 3) | 2);
    varint(out, v.len() as u64);
    out.extend_from_slice(v);
}

/// An encoded `xla.HloProto` (XLA's field numbers) drawn from `data`: up to four computations
/// (ids 0 to 3) of instructions named from the name pool, each instruction's opcode, shape
/// (an array, a tuple, a scalar with a tiled layout), operands and called computation (an id that
/// may be missing or the caller's own) from a byte each.
fn fused_hlo_proto(data: &[u8]) -> Vec<u8> {
    const OPCODES: [&str; 10] = [
        "fusion",
        "add",
        "parameter",
        "tuple",
        "constant",
        "broadcast",
        "dot",
        "reduce",
        "slice",
        "custom-call",
    ];
    let mut module = Vec::new();
    let computations = data.chunks(10).take(4).len();
    for (c, part) in data.chunks(10).take(4).enumerate() {
        let mut computation = Vec::new();
        bytes_field(&mut computation, 1, format!("computation.{c}").as_bytes());
        for (i, pair) in part.chunks(2).enumerate() {
            let [a, b] = [pair[0], pair.get(1).copied().unwrap_or(0)];
            let mut ins = Vec::new();
            // The entry's first instruction is the fusion the ops name (`fusion.1`); a fusion
            // calls the next computation, or (one byte in five) any id, missing or a caller.
            let (name, opcode) = if c == 0 && i == 0 {
                ("fusion.1", "fusion")
            } else {
                (
                    NAMES[usize::from(a) % NAMES.len()],
                    OPCODES[usize::from(b) % OPCODES.len()],
                )
            };
            let wild = b % 5 == 0;
            let opcode = if opcode == "fusion" && !wild && c + 1 >= computations {
                "add"
            } else {
                opcode
            };
            bytes_field(&mut ins, 1, name.as_bytes());
            bytes_field(&mut ins, 2, opcode.as_bytes());
            let mut shape = Vec::new();
            int_field(&mut shape, 2, u64::from(b % 20));
            match a % 3 {
                0 => int_field(&mut shape, 3, u64::from(b)),
                1 => {
                    let mut element = Vec::new();
                    int_field(&mut element, 2, 11);
                    int_field(&mut element, 3, 1 << 40);
                    bytes_field(&mut shape, 4, &element);
                }
                _ => {
                    let mut layout = Vec::new();
                    let mut tile = Vec::new();
                    int_field(&mut tile, 1, 128);
                    bytes_field(&mut layout, 6, &tile);
                    int_field(&mut layout, 8, u64::from(a));
                    bytes_field(&mut shape, 5, &layout);
                }
            }
            bytes_field(&mut ins, 3, &shape);
            bytes_field(&mut ins, 11, b"kLoop");
            let id = (c * 100 + i) as u64;
            int_field(&mut ins, 35, id);
            int_field(&mut ins, 36, u64::from(a % 4) + (c * 100) as u64);
            let called = if wild { u64::from(a % 6) } else { c as u64 + 1 };
            int_field(&mut ins, 38, called);
            if b % 7 == 0 {
                // A constant's literal: f32 values, packed.
                let mut literal = Vec::new();
                bytes_field(&mut literal, 8, &f32::from(a).to_le_bytes());
                bytes_field(&mut ins, 8, &literal);
            }
            bytes_field(&mut computation, 2, &ins);
        }
        int_field(&mut computation, 5, c as u64);
        bytes_field(&mut module, 3, &computation);
    }
    let mut proto = Vec::new();
    bytes_field(&mut proto, 1, &module);
    proto
}

/// The bytes read for OpStats with the host threads' plane indexed (`op_stats::read_for`) are
/// what decoding reads: the same error, or the same planes; for the raw input and for the drawn
/// space encoded.
fn indexed_reads(data: &[u8], space: &XSpace) {
    use profkit_xprof::op_stats::{Parts, read_for, read_space_for};
    let encoded = profkit_xplane::encode(space);
    for bytes in [data, encoded.as_slice()] {
        let indexed = read_for(bytes, Default::default(), Parts::ALL);
        let decoded = read_space_for(bytes, Default::default(), Parts::ALL);
        match (indexed, decoded) {
            (Ok(indexed), Ok(decoded)) => assert!(
                profkit_xplane::encode(&indexed.into_space()) == profkit_xplane::encode(&decoded),
                "the indexed read differs from the decoded one"
            ),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("indexed read {:?}, decoded {:?}", a.is_ok(), b.is_ok()),
        }
        // Read again while grouping (`read_seekable_for`): the same errors, the same OpStats.
        let parts = Parts::for_tool("framework_op_stats");
        let once = read_for(bytes, Default::default(), parts);
        let again = profkit_xprof::op_stats::read_seekable_for(
            std::io::Cursor::new(bytes),
            Default::default(),
            parts,
        );
        match (once, again) {
            (Ok(once), Ok(again)) => {
                let once = profkit_xprof::op_stats::build_for(vec![once], &["fuzz"], parts);
                let again = profkit_xprof::op_stats::build_for(vec![again], &["fuzz"], parts);
                // As bytes: a NaN a stat gives is the same NaN, though not equal to itself.
                let bytes = |b: &profkit_xprof::op_stats::OpStatsBuild| {
                    prost::Message::encode_to_vec(&b.op_stats)
                };
                assert!(
                    bytes(&once) == bytes(&again),
                    "OpStats read again differ from those read once"
                );
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("read once {:?}, read again {:?}", a.is_ok(), b.is_ok()),
        }
    }
}

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let space = space(data);
    indexed_reads(data, &space);
    memory_viewer(data, &space);
    let tools = profkit_xprof::tools::tool_names(std::slice::from_ref(&space));
    assert!(tools.contains(&"framework_op_stats"));
    if let Ok(json) =
        profkit_xprof::tools::memory_profile::memory_profile_json(std::slice::from_ref(&space))
    {
        assert!(
            json.is_empty() || serde_json::from_str::<serde_json::Value>(&json).is_ok(),
            "memory_profile is not JSON: {json}"
        );
    }
    // Two hosts (the space twice) when the first byte is odd: their steps are intersected.
    let spaces = match data.first() {
        Some(b) if b & 1 == 1 => vec![space.clone(), space],
        _ => vec![space],
    };
    let built = profkit_xprof::op_stats::build(spaces.clone(), &["fuzz", "fuzz2"]);
    // A tool's parts of OpStats alone give it the whole OpStats' output.
    let parts = |tool: &str| {
        profkit_xprof::op_stats::build_for(
            spaces.clone(),
            &["fuzz", "fuzz2"],
            profkit_xprof::op_stats::Parts::for_tool(tool),
        )
        .op_stats
    };
    assert_eq!(
        profkit_xprof::tools::kernel_stats::to_json(&parts("kernel_stats")),
        profkit_xprof::tools::kernel_stats::to_json(&built.op_stats)
    );
    assert_eq!(
        profkit_xprof::tools::hlo_stats::to_json(&parts("hlo_stats")),
        profkit_xprof::tools::hlo_stats::to_json(&built.op_stats)
    );
    let json = profkit_xprof::tools::framework_op_stats::to_json(&built.op_stats);
    assert_eq!(
        profkit_xprof::tools::framework_op_stats::to_json(&parts("framework_op_stats")),
        json
    );
    let tables: serde_json::Value = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("framework_op_stats is not JSON: {e}"));
    assert_eq!(tables.as_array().map(Vec::len), Some(2));
    for (tool, json) in [
        (
            "kernel_stats",
            profkit_xprof::tools::kernel_stats::to_json(&built.op_stats),
        ),
        (
            "hlo_stats",
            profkit_xprof::tools::hlo_stats::to_json(&built.op_stats),
        ),
        (
            "roofline_model",
            profkit_xprof::tools::roofline_model::to_json(&built.op_stats),
        ),
    ] {
        serde_json::from_str::<serde_json::Value>(&json)
            .unwrap_or_else(|e| panic!("{tool} is not JSON: {e}"));
    }
    let _ = profkit_xprof::tools::lacking::not_reproduced("roofline_model", &built);
    // The Arrow tables of the same OpStats: a row per kernel report and per row of hlo_stats.
    let kernels = profkit_arrow::kernels::batch("fuzz", &built.op_stats).expect("kernels batch");
    assert_eq!(
        kernels.num_rows(),
        built
            .op_stats
            .kernel_stats_db
            .as_ref()
            .map_or(0, |db| db.reports.len())
    );
    let hlo_ops = profkit_arrow::hlo_ops::batch("fuzz", &built.op_stats).expect("hlo_ops batch");
    assert_eq!(
        hlo_ops.num_rows(),
        profkit_xprof::tools::hlo_stats::rows(&built.op_stats).len()
    );
    let encoded = built.encode();
    let decoded = profkit_xprof::op_stats::decode(&encoded).expect("the OpStats file decodes");
    // Bytes, not values: a peak from a device without cores is NaN (as xprof's), never equal.
    assert_eq!(prost::Message::encode_to_vec(&decoded), encoded);
    use profkit_xprof::tools::op_profile::{self, Grouping};
    for group_by in [Grouping::Program, Grouping::Category, Grouping::Provenance] {
        if let Ok(json) = op_profile::op_profile_json(&built.op_stats, group_by) {
            // Deep provenance paths nest past serde_json's own depth limit, which is no fault.
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&json) {
                assert!(
                    e.to_string().contains("recursion limit"),
                    "op_profile is not JSON: {e}"
                );
            }
            assert_eq!(
                op_profile::op_profile_json(&decoded, group_by).ok(),
                Some(json),
                "op_profile of the decoded OpStats differs"
            );
        }
    }
    let _ = op_profile::missing(&built);
    let mut stats = built.op_stats;
    pages(&stats);
    add_steps(&mut stats, data);
    pages(&stats);
}

/// The tools rendered from an OpStats: JSON (or a named gap), never a panic.
fn pages(stats: &profkit_xprof::proto::OpStats) {
    use profkit_xprof::tools::{input_pipeline, overview_page, pod_viewer};
    let parses = |tool: &str, json: &str| {
        serde_json::from_str::<serde_json::Value>(json)
            .unwrap_or_else(|e| panic!("{tool} is not JSON: {e}"));
    };
    if let Ok(json) = overview_page::to_json(stats) {
        parses("overview_page", &json);
    }
    if let Ok(json) = input_pipeline::to_json(stats) {
        parses("input_pipeline_analyzer", &json);
    }
    parses("pod_viewer", &pod_viewer::to_json(stats));
}

/// A steps database from the bytes: a step per four bytes (core, duration, event type, kind of
/// packed breakdown), the hardware type and core details from the first byte.
fn add_steps(stats: &mut profkit_xprof::proto::OpStats, data: &[u8]) {
    use profkit_xprof::proto::{
        CoreDetails, GenericStepBreakdown, PerCoreStepInfo, StepDatabaseResult, StepInfoResult,
    };
    use prost::Message;
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    let env = stats.run_environment.get_or_insert_with(Default::default);
    env.hardware_type = i32::from(first % 4);
    if first & 4 != 0 {
        stats.core_id_to_details.insert(
            1,
            CoreDetails {
                hostname: "fuzz".into(),
                ..CoreDetails::default()
            },
        );
    }
    let mut db = StepDatabaseResult {
        use_incomplete_step: first & 8 != 0,
        num_steps_dropped: u32::from(first >> 4),
        ..StepDatabaseResult::default()
    };
    for (n, step) in rest.chunks_exact(4).take(64).enumerate() {
        let [core, duration, event, kind] = [step[0], step[1], step[2], step[3]];
        let duration = match duration % 3 {
            0 => u64::MAX,
            1 => 0,
            _ => u64::from(duration) << 30,
        };
        let mut breakdown = GenericStepBreakdown::default();
        let types = [
            0, 10, 60, 80, 90, 100, 110, 120, 130, 140, 150, 160, 170, -1,
        ];
        breakdown
            .type_ps
            .insert(types[usize::from(event) % types.len()], duration / 3);
        breakdown.type_ps.insert(0, u64::from(event) << 40);
        let any = match kind % 4 {
            0 => None,
            1 => Some(prost_types::Any {
                type_url: "type.googleapis.com/tensorflow.profiler.GenericStepBreakdown".into(),
                value: breakdown.encode_to_vec(),
            }),
            2 => Some(prost_types::Any {
                type_url: "type.googleapis.com/tensorflow.profiler.GenericStepBreakdown".into(),
                value: vec![kind, 0xff, 0xff],
            }),
            _ => Some(prost_types::Any {
                type_url: "type.googleapis.com/tensorflow.profiler.PerTpuStepDetails".into(),
                value: Vec::new(),
            }),
        };
        let core = u32::from(core % 3) * if core & 0x80 != 0 { 1_000_000 } else { 1 };
        let step_num = u32::try_from(n).unwrap_or(u32::MAX);
        let mut per_core = PerCoreStepInfo {
            step_num,
            ..PerCoreStepInfo::default()
        };
        per_core.step_info_per_core.insert(
            core,
            StepInfoResult {
                step_num,
                duration_ps: duration,
                step_breakdown: any,
                ..StepInfoResult::default()
            },
        );
        db.step_sequence.push(per_core);
    }
    stats.step_db = Some(db);
}

#[cfg(test)]
mod tests {
    use crate::smoke;

    #[test]
    fn smoke() {
        smoke::run_random(271, smoke::scaled(200), 330, super::run);
    }

    /// The drawn buffer assignments reach the whole replay (some succeed, some are refused), not
    /// only its first checks.
    #[test]
    fn drawn_programs_reach_the_replay() {
        use profkit_xprof::tools::memory_viewer::from_hlo_proto;
        let (mut shown, mut refused) = (0, 0);
        let mut state = 0x9e37_79b9_u32;
        for _ in 0..400 {
            let data: Vec<u8> = (0..48)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    state as u8
                })
                .collect();
            match from_hlo_proto(&super::hlo_proto(&data), 0) {
                Ok(v) if !v.result.heap_sizes.is_empty() => shown += 1,
                Ok(_) => {}
                Err(_) => refused += 1,
            }
        }
        assert!(
            shown > 10 && refused > 10,
            "{shown} shown, {refused} refused"
        );
    }
}

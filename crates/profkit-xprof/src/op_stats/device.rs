//! The GPU op metrics database (xprof's `ConvertDeviceTraceXPlaneToOpMetricsDb`): the kernels
//! of each stream, in line order, as ops. A kernel of an XLA program (an `hlo_op` stat, its last
//! `::` part naming the instruction, with the `program_id` of a module in the [`HloModuleMap`])
//! counts towards that HLO op: consecutive kernels of one op and step group are one run
//! (`HLOTracker`), entered with the instruction's category, framework op (`op_name:op_type` of
//! its metadata) and cost ([`super::cost`]; the kernel's own `flops` and `bytes_accessed` stats
//! where the model gives none), HBM reads and writes (the memory access breakdown, where the
//! model gives bytes), expression and source info with its stack ([`super::hlo_text`]). A kernel
//! of an op the map does not know is left out, as xprof
//! leaves it. A kernel that carries a framework op (`tf_op` stat) is an op named `<op
//! name>/<kernel name>`. The plane's span runs from the earliest event offset to the latest end
//! offset over its non-derived lines (offsets within each line, as xprof takes them); the rest is
//! the idle op.

use profkit_xplane::XPlane;
use profkit_xplane::visitor::PlaneVisitor;

use super::cost::{Cost, cost, hbm_access};
use super::hlo::{HloModuleMap, tf_op_full_name};
use super::hlo_text::{category, expression, source_info};
use super::metrics_db::{DbBuilder, add_idle_op, set_total_time_ps};
use super::tpu::int_or_uint;
use crate::preprocess::derived::is_derived_line_id;
use crate::preprocess::derived::tf_op;
use crate::proto::OpMetricsDb;

/// xprof's `MemorySpace` of HBM, and `OperationType`'s read and write.
const HBM: u64 = 1;
const READ: i32 = 1;
const WRITE: i32 = 2;

/// One GPU plane's database, and what it could not reproduce.
pub struct GpuDb {
    /// The database.
    pub db: OpMetricsDb,
    /// Kernels placed on HLO ops.
    pub hlo_kernels: u64,
    /// The opcodes of placed HLO ops that the cost model does not cover (their FLOPs and bytes
    /// are not xprof's).
    pub uncosted: std::collections::BTreeSet<String>,
    /// What XLA's printer shows of placed HLO ops that profkit does not print (their
    /// expressions are left empty).
    pub unprinted: std::collections::BTreeSet<String>,
}

/// What an HLO op's entries take from its instruction, worked out once per op.
struct HloOpInfo {
    category: String,
    provenance: String,
    deduplicated_name: String,
    cost: Result<Cost, String>,
    /// HBM bytes read and written per execution.
    hbm: (u64, u64),
    /// The expression, or what it holds that is not printed.
    long_name: Result<String, String>,
    /// `GetSourceInfo`: file, line and source stack.
    source_info: crate::proto::SourceInfo,
}

/// A run of kernels of one HLO op (xprof's `HLOTracker`).
#[derive(Default)]
struct Tracker {
    program_id: u64,
    name: String,
    group_id: u64,
    is_eager: bool,
    occurrences: u64,
    duration: u64,
    flops: u64,
    bytes_accessed: u64,
    /// The instruction's category, provenance and deduplicated name, and its cost.
    op: Option<std::rc::Rc<HloOpInfo>>,
}

/// `AggregateHloFunc` and `DeviceOpMetricsDbBuilder::EnterOp`: the run as one entry of its op.
#[allow(deprecated)]
fn aggregate(
    current: &mut Tracker,
    builder: &mut DbBuilder,
    uncosted: &mut std::collections::BTreeSet<String>,
    unprinted: &mut std::collections::BTreeSet<String>,
) {
    let t = std::mem::take(current);
    let Some(info) = t.op else {
        return;
    };
    let m = builder.lookup_or_insert(t.program_id, &t.name);
    if m.occurrences == 0 && m.category.is_empty() && m.provenance.is_empty() {
        m.category = if info.category.is_empty() {
            "unknown".to_owned()
        } else {
            info.category.clone()
        };
        m.provenance.clone_from(&info.provenance);
        m.deduplicated_name.clone_from(&info.deduplicated_name);
        match &info.long_name {
            Ok(text) => m.long_name.clone_from(text),
            Err(what) => {
                unprinted.insert(what.clone());
            }
        }
        m.is_eager |= t.is_eager;
        m.source_info = Some(info.source_info.clone());
    }
    let model = match &info.cost {
        Ok(c) => *c,
        Err(opcode) => {
            uncosted.insert(opcode.clone());
            Cost::default()
        }
    };
    let flops = if model.flops > 0 {
        model.flops
    } else {
        t.flops
    };
    let bytes = if model.bytes_accessed > 0 {
        model.bytes_accessed
    } else {
        t.bytes_accessed
    };
    let model_flops = if model.flops > 0 {
        model.flops
    } else {
        t.flops
    };
    let n = t.occurrences;
    m.num_cores = 1;
    m.occurrences = m.occurrences.wrapping_add(n as u32);
    m.time_ps = m.time_ps.wrapping_add(t.duration);
    m.self_time_ps = m.self_time_ps.wrapping_add(t.duration);
    m.flops = m.flops.wrapping_add(flops.wrapping_mul(n));
    m.flops_v2 += flops as f64 * n as f64;
    if model_flops == 0 {
        m.model_flops = m.flops;
        m.model_flops_v2 = m.flops_v2;
    } else {
        m.model_flops = m.model_flops.wrapping_add(model_flops.wrapping_mul(n));
        m.model_flops_v2 += model_flops as f64 * n as f64;
    }
    m.bytes_accessed = m.bytes_accessed.wrapping_add(bytes.wrapping_mul(n));
    // `ConvertPerformanceInfo`: the positive HBM reads and writes times the occurrences, merged
    // by memory space and direction.
    if info.cost.is_ok() && model.bytes_accessed > 0 {
        for (operation_type, per_run) in [(READ, info.hbm.0), (WRITE, info.hbm.1)] {
            if per_run == 0 {
                continue;
            }
            let total = per_run.wrapping_mul(n);
            match m
                .memory_accessed_breakdown
                .iter_mut()
                .find(|a| a.memory_space == HBM && a.operation_type == operation_type)
            {
                Some(a) => a.bytes_accessed = a.bytes_accessed.wrapping_add(total),
                None => {
                    m.memory_accessed_breakdown
                        .push(crate::proto::op_metrics::MemoryAccessed {
                            operation_type,
                            memory_space: HBM,
                            bytes_accessed: total,
                        })
                }
            }
        }
    }
    builder.db.total_op_time_ps = builder.db.total_op_time_ps.wrapping_add(t.duration);
}

/// The database of one GPU plane, its XLA kernels placed by `hlo`.
#[allow(deprecated)]
pub fn gpu_op_metrics_db(plane: &XPlane, hlo: &HloModuleMap) -> GpuDb {
    let visitor = PlaneVisitor::new(plane);
    let mut builder = DbBuilder::default();
    let mut first = i64::MAX;
    let mut last = 0i64;
    let mut hlo_kernels = 0u64;
    let mut uncosted = std::collections::BTreeSet::new();
    let mut infos: std::collections::HashMap<(Option<u64>, String), std::rc::Rc<HloOpInfo>> =
        std::collections::HashMap::new();
    let mut unprinted = std::collections::BTreeSet::new();
    for line in visitor.lines() {
        if is_derived_line_id(line.id()) {
            continue;
        }
        let mut current = Tracker::default();
        for event in line.events() {
            first = first.min(event.offset_ps());
            last = last.max(event.offset_ps().saturating_add(event.duration_ps()));
            let own = |name: &str| {
                event
                    .stats()
                    .find(|s| s.name() == name)
                    .and_then(|s| s.value())
            };
            if let Some(hlo_op) = own("hlo_op") {
                let name = hlo_op
                    .as_str()
                    .unwrap_or("")
                    .rsplit("::")
                    .next()
                    .unwrap_or("");
                let program_id = own("program_id").map(|v| int_or_uint(Some(v)));
                let Some((module, instruction)) = hlo.instruction(program_id, name) else {
                    continue;
                };
                // TSL's `IntValue`: the `int64` field.
                let group_id = match own("group_id") {
                    Some(profkit_xplane::visitor::StatValueRef::Int64(g)) => Some(g),
                    Some(_) => Some(0),
                    None => None,
                };
                if name != current.name || group_id.is_none_or(|g| g as u64 != current.group_id) {
                    aggregate(&mut current, &mut builder, &mut uncosted, &mut unprinted);
                }
                if current.occurrences == 0 {
                    let info = infos
                        .entry((program_id, name.to_owned()))
                        .or_insert_with(|| {
                            std::rc::Rc::new(HloOpInfo {
                                category: category(module, instruction),
                                provenance: tf_op_full_name(instruction.metadata.as_ref()),
                                deduplicated_name: instruction
                                    .metadata
                                    .as_ref()
                                    .map(|m| m.deduplicated_name.clone())
                                    .unwrap_or_default(),
                                cost: cost(module, instruction),
                                hbm: hbm_access(module, instruction),
                                long_name: expression(module, instruction),
                                source_info: source_info(module, instruction),
                            })
                        });
                    current.op = Some(info.clone());
                    current.name = name.to_owned();
                    current.program_id = program_id.unwrap_or(0);
                    if let Some(g) = group_id {
                        current.group_id = g as u64;
                    }
                    current.is_eager = matches!(
                        own("is_eager"),
                        Some(profkit_xplane::visitor::StatValueRef::Int64(v)) if v != 0
                    );
                }
                hlo_kernels += 1;
                current.occurrences += 1;
                current.duration = current.duration.wrapping_add(event.duration_ps() as u64);
                for stat in event.stats() {
                    match stat.name() {
                        "flops" => current.flops = int_or_uint(stat.value()),
                        "bytes_accessed" => current.bytes_accessed = int_or_uint(stat.value()),
                        _ => {}
                    }
                }
                continue;
            }
            let Some(full) = own("tf_op")
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
            else {
                continue;
            };
            aggregate(&mut current, &mut builder, &mut uncosted, &mut unprinted);
            let is_eager = own("is_eager")
                .and_then(|v| v.as_i64())
                .is_some_and(|v| v != 0);
            let op = tf_op::parse(full);
            let name = format!("{}/{}", op.name, event.name());
            let time = u64::try_from(event.duration_ps()).unwrap_or(0);
            let m = builder.lookup_or_insert(0, &name);
            if m.occurrences == 0 && m.category.is_empty() && m.provenance.is_empty() {
                m.category = if op.op_type.is_empty() {
                    "unknown".to_owned()
                } else {
                    op.op_type.to_owned()
                };
                m.provenance = full.to_owned();
                m.is_eager |= is_eager;
                // TSL's `OpSourceInfo` default: no file, line -1.
                m.source_info = Some(crate::proto::SourceInfo {
                    line_number: -1,
                    ..Default::default()
                });
            }
            m.num_cores = 1;
            m.occurrences = m.occurrences.wrapping_add(1);
            m.time_ps = m.time_ps.wrapping_add(time);
            m.self_time_ps = m.self_time_ps.wrapping_add(time);
            builder.db.total_op_time_ps = builder.db.total_op_time_ps.wrapping_add(time);
        }
        aggregate(&mut current, &mut builder, &mut uncosted, &mut unprinted);
    }
    let span = if last != 0 {
        u64::try_from(last.saturating_sub(first)).unwrap_or(0)
    } else {
        0
    };
    set_total_time_ps(&mut builder.db, span);
    add_idle_op(&mut builder.db);
    GpuDb {
        db: builder.db,
        hlo_kernels,
        uncosted,
        unprinted,
    }
}

#[cfg(test)]
mod tests {
    use profkit_xplane::{PlaneBuilder, StatValue};

    use super::super::hlo::xla::{LayoutProto, StackFrameIndexProto, stack_frame_index_proto};
    use super::super::hlo::{
        HloComputationProto, HloInstructionProto, HloModuleProto, HloProto, OpMetadata, ShapeProto,
    };
    use super::*;

    const F32: i32 = 11;

    fn array(dims: &[i64]) -> ShapeProto {
        ShapeProto {
            element_type: F32,
            dimensions: dims.to_vec(),
            layout: Some(Box::new(LayoutProto {
                minor_to_major: vec![0],
                ..LayoutProto::default()
            })),
            ..ShapeProto::default()
        }
    }

    /// A program of a parameter, an `add` of it with itself (with a source stack) and a `sort`
    /// (which neither the cost model nor the printer covers).
    fn metadata_plane() -> XPlane {
        let ins = |id: i64, name: &str, opcode: &str, operands: &[i64]| HloInstructionProto {
            id,
            name: name.into(),
            opcode: opcode.into(),
            shape: Some(array(&[256])),
            operand_ids: operands.to_vec(),
            ..HloInstructionProto::default()
        };
        let proto = HloProto {
            hlo_module: Some(HloModuleProto {
                name: "jit_f".into(),
                entry_computation_name: String::new(),
                entry_computation_id: 1,
                computations: vec![HloComputationProto {
                    id: 1,
                    instructions: vec![
                        ins(1, "p", "parameter", &[]),
                        HloInstructionProto {
                            metadata: Some(OpMetadata {
                                op_name: "jit(f)/add".into(),
                                stack_frame_id: 1,
                                ..OpMetadata::default()
                            }),
                            ..ins(2, "add.1", "add", &[1, 1])
                        },
                        ins(3, "sort.1", "sort", &[2]),
                    ],
                    ..HloComputationProto::default()
                }],
                stack_frame_index: Some(StackFrameIndexProto {
                    file_names: vec!["f.py".into()],
                    function_names: vec!["f".into()],
                    file_locations: vec![stack_frame_index_proto::FileLocation {
                        file_name_id: 1,
                        function_name_id: 1,
                        line: 7,
                        column: 3,
                        ..Default::default()
                    }],
                    stack_frames: vec![stack_frame_index_proto::StackFrame {
                        file_location_id: 1,
                        parent_frame_id: 0,
                    }],
                }),
            }),
            buffer_assignment: None,
        };
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:metadata");
        let id = b.new_event_metadata();
        if let Some(mut m) = b.event_metadata(id) {
            m.add_stat(
                "Hlo Proto",
                StatValue::Bytes(prost::Message::encode_to_vec(&proto).into()),
            );
            m.add_stat("program_id", 5_u64);
        }
        plane
    }

    #[test]
    fn hlo_ops_get_expression_source_stack_and_hbm_breakdown() {
        let hlo = HloModuleMap::from_metadata_plane(&metadata_plane());
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/device:GPU:0");
        let mut line = b.line(1);
        for (i, op) in ["add.1", "add.1", "sort.1", "add.1"]
            .into_iter()
            .enumerate()
        {
            line.add_event("kernel")
                .set_offset_ps(i as i64 * 10)
                .set_duration_ps(5)
                .add_stat("hlo_op", format!("jit_f::{op}"))
                .add_stat("program_id", 5_u64)
                .add_stat("group_id", 1_i64);
        }
        let gpu = gpu_op_metrics_db(&plane, &hlo);
        let add = gpu
            .db
            .metrics_db
            .iter()
            .find(|m| m.name == "add.1")
            .cloned()
            .unwrap_or_default();
        assert_eq!(add.occurrences, 3);
        assert_eq!(
            add.long_name,
            "%add.1 = f32[256]{0} add(f32[256]{0} %p, f32[256]{0} %p)"
        );
        let info = add.source_info.unwrap_or_default();
        assert_eq!(
            (
                info.file_name.as_str(),
                info.line_number,
                info.stack_frame.as_str()
            ),
            ("f.py", 7, "f.py:7:3\n")
        );
        // Each run's reads (both operands) and write, times its kernels, merged.
        let breakdown: Vec<(i32, u64, u64)> = add
            .memory_accessed_breakdown
            .iter()
            .map(|a| (a.operation_type, a.memory_space, a.bytes_accessed))
            .collect();
        assert_eq!(breakdown, [(READ, HBM, 3 * 2048), (WRITE, HBM, 3 * 1024)]);
        assert_eq!(add.bytes_accessed, 3 * 3072);
        // The sort: neither costed nor printed, and named so.
        let sort = gpu.db.metrics_db.iter().find(|m| m.name == "sort.1");
        assert!(
            sort.is_some_and(|m| m.long_name.is_empty() && m.memory_accessed_breakdown.is_empty())
        );
        assert!(gpu.uncosted.contains("sort") && gpu.unprinted.contains("sort"));
    }
}

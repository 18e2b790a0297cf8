//! The GPU op metrics database (xprof's `ConvertDeviceTraceXPlaneToOpMetricsDb`): the kernels
//! of each stream, in line order, as ops. A kernel of an XLA program (an `hlo_op` stat, its last
//! `::` part naming the instruction, with the `program_id` of a module in the [`HloModuleMap`])
//! counts towards that HLO op: consecutive kernels of one op and step group are one run
//! (`HLOTracker`), entered with the instruction's category, framework op (`op_name:op_type` of
//! its metadata) and cost ([`super::cost`]; the kernel's own `flops` and `bytes_accessed` stats
//! where the model gives none). A kernel of an op the map does not know is left out, as xprof
//! leaves it. A kernel that carries a framework op (`tf_op` stat) is an op named `<op
//! name>/<kernel name>`. The plane's span runs from the earliest event offset to the latest end
//! offset over its non-derived lines (offsets within each line, as xprof takes them); the rest is
//! the idle op.

use profkit_xplane::XPlane;
use profkit_xplane::visitor::PlaneVisitor;

use super::cost::{Cost, cost};
use super::hlo::{HloModuleMap, tf_op_full_name};
use super::hlo_text::category;
use super::metrics_db::{DbBuilder, add_idle_op, set_total_time_ps};
use super::tpu::int_or_uint;
use crate::preprocess::derived::is_derived_line_id;
use crate::preprocess::derived::tf_op;
use crate::proto::OpMetricsDb;

/// One GPU plane's database, and what it could not reproduce.
pub struct GpuDb {
    /// The database.
    pub db: OpMetricsDb,
    /// Kernels placed on HLO ops.
    pub hlo_kernels: u64,
    /// The opcodes of placed HLO ops that the cost model does not cover (their FLOPs and bytes
    /// are not xprof's).
    pub uncosted: std::collections::BTreeSet<String>,
    /// Whether a placed HLO op's metadata points into the program's stack frame index (whose
    /// frames xprof shows as the op's source stack, not reproduced).
    pub stack_frames: bool,
}

/// What an HLO op's entries take from its instruction, worked out once per op.
struct HloOpInfo {
    category: String,
    provenance: String,
    deduplicated_name: String,
    cost: Result<Cost, String>,
    /// `GetSourceInfo` as far as the metadata goes: its file and line (line -1 without a file).
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
    let mut stack_frames = false;
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
                    aggregate(&mut current, &mut builder, &mut uncosted);
                }
                if current.occurrences == 0 {
                    stack_frames |= instruction
                        .metadata
                        .as_ref()
                        .is_some_and(|m| m.stack_frame_id != 0);
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
                                source_info: source_info(instruction.metadata.as_ref()),
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
            aggregate(&mut current, &mut builder, &mut uncosted);
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
        aggregate(&mut current, &mut builder, &mut uncosted);
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
        stack_frames,
    }
}

/// `GetSourceInfo` of an HLO op without its stack frames: the metadata's file and line when it
/// names a file, else no file and line -1.
fn source_info(metadata: Option<&super::hlo::OpMetadata>) -> crate::proto::SourceInfo {
    match metadata {
        Some(m) if !m.source_file.is_empty() => crate::proto::SourceInfo {
            file_name: m.source_file.clone(),
            line_number: m.source_line,
            stack_frame: String::new(),
        },
        _ => crate::proto::SourceInfo {
            line_number: -1,
            ..Default::default()
        },
    }
}

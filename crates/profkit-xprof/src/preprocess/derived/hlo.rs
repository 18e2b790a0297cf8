//! The op names and source lines xprof reads from the HLO protos of an XSpace's `/host:metadata`
//! plane (`HloProtoMap`, `HloModuleMap`), to name the framework op and source line of a GPU XLA op.
//!
//! Each event metadata of that plane with an `Hlo Proto` bytes stat holds one module (its program
//! id is the metadata id, or its `program_id` stat); of every instruction only its name and the
//! `op_type`, `op_name`, `source_file` and `source_line` of its metadata are kept.

use rustc_hash::FxHashMap as HashMap;

use profkit_xplane::{XPlane, x_stat};
use prost::Message;

/// `xla.HloProto`, the fields read here.
#[derive(Clone, PartialEq, Message)]
struct HloProto {
    #[prost(message, optional, tag = "1")]
    hlo_module: Option<HloModuleProto>,
}

/// `xla.HloModuleProto`, the fields read here.
#[derive(Clone, PartialEq, Message)]
struct HloModuleProto {
    #[prost(message, repeated, tag = "3")]
    computations: Vec<HloComputationProto>,
}

/// `xla.HloComputationProto`, the fields read here.
#[derive(Clone, PartialEq, Message)]
struct HloComputationProto {
    #[prost(message, repeated, tag = "2")]
    instructions: Vec<HloInstructionProto>,
}

/// `xla.HloInstructionProto`, the fields read here.
#[derive(Clone, PartialEq, Message)]
struct HloInstructionProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, optional, tag = "7")]
    metadata: Option<OpMetadata>,
}

/// `xla.OpMetadata`, the fields read here.
#[derive(Clone, PartialEq, Message)]
struct OpMetadata {
    #[prost(string, tag = "1")]
    op_type: String,
    #[prost(string, tag = "2")]
    op_name: String,
    #[prost(string, tag = "3")]
    source_file: String,
    #[prost(int32, tag = "4")]
    source_line: i32,
}

/// What xprof resolves an HLO instruction to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Symbol {
    /// `op_name:op_type` (`TraceMeOp`), the framework op.
    pub tf_op_name: String,
    /// `basename(source_file):source_line`, or empty without a source file.
    pub source_info: String,
}

/// What the space's other planes tell the derived timelines of GPU planes: the instructions of
/// every HLO module, by program id and instruction name, and the scope range tree (each scope
/// range id's parent) of the `/host:__ScopeRangeCallStack__` plane.
#[derive(Clone, Debug, Default)]
pub(crate) struct Symbols {
    modules: HashMap<u64, HashMap<String, Symbol>>,
    scope_parents: HashMap<i64, i64>,
    scope_planes: usize,
}

impl Symbols {
    /// How much is known (modules and scope tree planes): a layout made knowing less is stale.
    pub fn len(&self) -> usize {
        self.modules.len() + self.scope_planes
    }

    /// Takes in the scope range tree plane: each plane stat says that the scope range id of its
    /// metadata id has the stat's value as parent (the first of an id wins).
    pub fn observe_scope_tree(&mut self, plane: &XPlane) {
        self.scope_planes += 1;
        for stat in &plane.stats {
            let parent = match stat.value {
                Some(x_stat::Value::Int64Value(v)) => v,
                _ => 0,
            };
            self.scope_parents.entry(stat.metadata_id).or_insert(parent);
        }
    }

    /// The scope range ids from `id` out to the root, stopping where the tree loops.
    pub fn scope_chain(&self, id: i64) -> Vec<i64> {
        let mut chain = vec![id];
        let mut seen = rustc_hash::FxHashSet::default();
        let mut current = id;
        while let Some(&parent) = self.scope_parents.get(&current) {
            if !seen.insert(parent) {
                break;
            }
            chain.push(parent);
            current = parent;
        }
        chain
    }

    /// Takes in the HLO protos of a `/host:metadata` plane (the first module of a program id
    /// wins, as in xprof; a proto that does not decode is left out).
    pub fn observe(&mut self, plane: &XPlane) {
        let stat = |name: &str| crate::preprocess::stats::stat_id(plane, name);
        let Some(proto_stat) = stat("Hlo Proto") else {
            return;
        };
        let program_stat = stat("program_id");
        for (id, metadata) in &plane.event_metadata {
            let Some(bytes) = metadata.stats.iter().find_map(|s| match &s.value {
                Some(x_stat::Value::BytesValue(b)) if s.metadata_id == proto_stat => Some(b),
                _ => None,
            }) else {
                continue;
            };
            let Ok(proto) = HloProto::decode(bytes.as_ref()) else {
                continue;
            };
            let mut program_id = *id as u64;
            if let Some(ps) = program_stat {
                if let Some(s) = metadata.stats.iter().find(|s| s.metadata_id == ps) {
                    program_id = match s.value {
                        Some(x_stat::Value::Uint64Value(v)) => v,
                        Some(x_stat::Value::Int64Value(v)) => v as u64,
                        _ => 0,
                    };
                }
            }
            if self.modules.contains_key(&program_id) {
                continue;
            }
            let mut instructions = HashMap::default();
            for computation in proto.hlo_module.iter().flat_map(|m| &m.computations) {
                for instruction in &computation.instructions {
                    let metadata = instruction.metadata.clone().unwrap_or_default();
                    let source_info = if metadata.source_file.is_empty() {
                        String::new()
                    } else {
                        let base = metadata
                            .source_file
                            .rsplit('/')
                            .next()
                            .unwrap_or(&metadata.source_file);
                        format!("{base}:{}", metadata.source_line)
                    };
                    instructions
                        .entry(instruction.name.clone())
                        .or_insert_with(|| Symbol {
                            tf_op_name: format!("{}:{}", metadata.op_name, metadata.op_type),
                            source_info,
                        });
                }
            }
            self.modules.insert(program_id, instructions);
        }
    }

    /// The symbol of instruction `name` of program `program_id`, if known.
    pub fn resolve(&self, program_id: Option<u64>, name: &str) -> Option<&Symbol> {
        program_id
            .and_then(|p| self.modules.get(&p))
            .and_then(|m| m.get(name))
    }
}

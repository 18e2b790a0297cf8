//! The HLO module map of an XSpace (xprof's `HloModuleMap`, `ProcessHloModuleMapFromXSpace`): the
//! XLA programs whose HLO protos the `/host:metadata` plane stores, each instruction with what
//! xprof's op metrics read of it (its framework op, category) and what XLA's GPU cost model makes
//! of it ([`super::cost`]).
//!
//! Each event metadata of that plane with an `Hlo Proto` bytes stat holds one `xla.HloProto`; its
//! program id is its `program_id` stat, else the metadata id; the first module of a program id
//! wins, and a proto that does not decode is left out. Instructions are found by name, the first
//! of a name in the module's computation order winning (xprof's `try_emplace`).
//!
//! Only the fields these rules read are decoded (`xla.HloProto` and the messages it holds, their
//! field numbers as in XLA's `hlo.proto` and `xla_data.proto`).

use std::collections::HashMap;

use profkit_xplane::{XPlane, x_stat};
use prost::Message;

/// `xla.HloProto`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct HloProto {
    #[prost(message, optional, tag = "1")]
    pub hlo_module: Option<HloModuleProto>,
}

/// `xla.HloModuleProto`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct HloModuleProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "3")]
    pub computations: Vec<HloComputationProto>,
    #[prost(int64, tag = "6")]
    pub entry_computation_id: i64,
}

/// `xla.HloComputationProto`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct HloComputationProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "2")]
    pub instructions: Vec<HloInstructionProto>,
    #[prost(int64, tag = "5")]
    pub id: i64,
    #[prost(int64, tag = "6")]
    pub root_id: i64,
}

/// `xla.HloInstructionProto`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct HloInstructionProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub opcode: String,
    #[prost(message, optional, tag = "3")]
    pub shape: Option<ShapeProto>,
    #[prost(message, optional, tag = "7")]
    pub metadata: Option<OpMetadata>,
    #[prost(string, tag = "11")]
    pub fusion_kind: String,
    #[prost(message, optional, tag = "15")]
    pub window: Option<Window>,
    #[prost(message, optional, tag = "16")]
    pub convolution_dimension_numbers: Option<ConvolutionDimensionNumbers>,
    #[prost(string, tag = "28")]
    pub custom_call_target: String,
    #[prost(int64, tag = "50")]
    pub feature_group_count: i64,
    #[prost(int64, tag = "58")]
    pub batch_group_count: i64,
    #[prost(message, optional, tag = "30")]
    pub dot_dimension_numbers: Option<DotDimensionNumbers>,
    #[prost(int64, tag = "35")]
    pub id: i64,
    #[prost(int64, repeated, tag = "36")]
    pub operand_ids: Vec<i64>,
    #[prost(int64, repeated, tag = "38")]
    pub called_computation_ids: Vec<i64>,
}

/// `xla.ShapeProto`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct ShapeProto {
    #[prost(int32, tag = "2")]
    pub element_type: i32,
    #[prost(int64, repeated, tag = "3")]
    pub dimensions: Vec<i64>,
    #[prost(message, repeated, tag = "4")]
    pub tuple_shapes: Vec<ShapeProto>,
}

/// `xla.OpMetadata`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct OpMetadata {
    #[prost(string, tag = "1")]
    pub op_type: String,
    #[prost(string, tag = "2")]
    pub op_name: String,
    #[prost(string, tag = "3")]
    pub source_file: String,
    #[prost(int32, tag = "4")]
    pub source_line: i32,
    #[prost(string, tag = "12")]
    pub deduplicated_name: String,
}

/// `xla.DotDimensionNumbers`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct DotDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub lhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub rhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub lhs_batch_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "4")]
    pub rhs_batch_dimensions: Vec<i64>,
}

/// `xla.Window`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Window {
    #[prost(message, repeated, tag = "1")]
    pub dimensions: Vec<WindowDimension>,
}

/// `xla.WindowDimension`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct WindowDimension {
    #[prost(int64, tag = "1")]
    pub size: i64,
    #[prost(int64, tag = "2")]
    pub stride: i64,
    #[prost(int64, tag = "3")]
    pub padding_low: i64,
    #[prost(int64, tag = "4")]
    pub padding_high: i64,
    #[prost(int64, tag = "5")]
    pub window_dilation: i64,
    #[prost(int64, tag = "6")]
    pub base_dilation: i64,
}

/// `xla.ConvolutionDimensionNumbers`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct ConvolutionDimensionNumbers {
    #[prost(int64, tag = "3")]
    pub kernel_input_feature_dimension: i64,
    #[prost(int64, tag = "4")]
    pub kernel_output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "6")]
    pub kernel_spatial_dimensions: Vec<i64>,
    #[prost(int64, tag = "7")]
    pub input_batch_dimension: i64,
    #[prost(int64, tag = "8")]
    pub input_feature_dimension: i64,
    #[prost(int64, tag = "9")]
    pub output_batch_dimension: i64,
    #[prost(int64, tag = "10")]
    pub output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "11")]
    pub input_spatial_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "12")]
    pub output_spatial_dimensions: Vec<i64>,
}

/// One program's module: its computations and instructions, indexed.
#[derive(Debug, Default)]
pub struct HloModule {
    pub(crate) proto: HloModuleProto,
    /// (computation index, instruction index) by instruction id.
    by_id: HashMap<i64, (usize, usize)>,
    /// (computation index, instruction index) by instruction name, the first winning.
    by_name: HashMap<String, (usize, usize)>,
    /// Computation index by computation id.
    computations: HashMap<i64, usize>,
}

impl HloModule {
    pub(crate) fn new(proto: HloModuleProto) -> Self {
        let mut module = HloModule {
            proto,
            ..HloModule::default()
        };
        for (c, computation) in module.proto.computations.iter().enumerate() {
            module.computations.entry(computation.id).or_insert(c);
            for (i, instruction) in computation.instructions.iter().enumerate() {
                module.by_id.entry(instruction.id).or_insert((c, i));
                module
                    .by_name
                    .entry(instruction.name.clone())
                    .or_insert((c, i));
            }
        }
        module
    }

    fn at(&self, (c, i): (usize, usize)) -> Option<&HloInstructionProto> {
        self.proto.computations.get(c)?.instructions.get(i)
    }

    /// The instruction named `name`.
    pub(crate) fn instruction(&self, name: &str) -> Option<&HloInstructionProto> {
        self.at(*self.by_name.get(name)?)
    }

    /// The instruction with id `id`.
    pub(crate) fn instruction_by_id(&self, id: i64) -> Option<&HloInstructionProto> {
        self.at(*self.by_id.get(&id)?)
    }

    /// The computation with id `id`.
    pub(crate) fn computation(&self, id: i64) -> Option<&HloComputationProto> {
        self.proto.computations.get(*self.computations.get(&id)?)
    }
}

/// The modules of a space by program id.
#[derive(Debug, Default)]
pub struct HloModuleMap {
    modules: HashMap<u64, HloModule>,
}

impl HloModuleMap {
    /// The modules stored in the HLO protos of `plane` (the `/host:metadata` plane).
    pub fn from_metadata_plane(plane: &XPlane) -> Self {
        let mut map = HloModuleMap::default();
        let stat = |name: &str| crate::preprocess::stats::stat_id(plane, name);
        let Some(proto_stat) = stat("Hlo Proto") else {
            return map;
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
            let Some(module) = proto.hlo_module else {
                continue;
            };
            let mut program_id = *id as u64;
            if let Some(s) =
                program_stat.and_then(|ps| metadata.stats.iter().find(|s| s.metadata_id == ps))
            {
                program_id = match s.value {
                    Some(x_stat::Value::Uint64Value(v)) => v,
                    Some(x_stat::Value::Int64Value(v)) => v as u64,
                    _ => 0,
                };
            }
            map.modules
                .entry(program_id)
                .or_insert_with(|| HloModule::new(module));
        }
        map
    }

    /// Whether no module is known.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// `GetHloInstruction`: the module of `program_id` and its instruction `name`.
    pub(crate) fn instruction(
        &self,
        program_id: Option<u64>,
        name: &str,
    ) -> Option<(&HloModule, &HloInstructionProto)> {
        let module = self.modules.get(&program_id?)?;
        Some((module, module.instruction(name)?))
    }
}

/// TSL's `TfOpFullname(op_type, op_name)` as the HLO instruction wrapper builds its provenance:
/// `op_name:op_type`, empty when the instruction has neither.
pub(crate) fn tf_op_full_name(metadata: Option<&OpMetadata>) -> String {
    match metadata {
        Some(m) if !(m.op_name.is_empty() && m.op_type.is_empty()) => {
            format!("{}:{}", m.op_name, m.op_type)
        }
        _ => String::new(),
    }
}

/// `HloInstruction::ToCategory` for the opcodes the cost model covers: fusions by kind
/// (`kLoop` is "loop fusion", `kInput` "input fusion", `kOutput` "output fusion", `kCustom`
/// "custom fusion"), every other instruction its opcode.
pub(crate) fn category(instruction: &HloInstructionProto) -> String {
    if instruction.opcode == "fusion" {
        let kind = instruction
            .fusion_kind
            .strip_prefix('k')
            .unwrap_or(&instruction.fusion_kind)
            .to_ascii_lowercase();
        return format!("{kind} fusion");
    }
    instruction.opcode.clone()
}

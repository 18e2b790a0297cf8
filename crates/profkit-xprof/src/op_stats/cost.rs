//! XLA's GPU cost model (`HloCostAnalysis` and its GPU subclass, as xprof's
//! `XProfGpuCostAnalysis` runs it over a program's HLO), for the opcodes the profiles at hand
//! use: the FLOPs and bytes accessed of one execution of an HLO instruction.
//!
//! Covered, each checked against the FLOPs and bytes xprof 2.24.2 shows (cases `gpu-hlo` and
//! the real JAX profile on ROCm, `rocm1`):
//! - `parameter`, `constant`, `broadcast`, `iota`: no FLOPs (a parameter or constant accesses no
//!   bytes of its own; inside a fusion none of them does);
//! - the elementwise `add`, `multiply`, `maximum`, `compare` and `select`: 3 FLOPs per output
//!   element (XLA's default clock-cycle estimate), its operands' and output's bytes;
//! - `dot`: 2 FLOPs per multiply-add (output elements times the contracted size), its operands'
//!   and output's bytes;
//! - `tuple`: no FLOPs, its index table's bytes (8 per element);
//! - `custom-call` to a DNN convolution (`__cudnn$conv...` targets, cuDNN's and MIOpen's): 2 FLOPs
//!   per multiply-add of the convolution, counting only the kernel positions that fall inside the
//!   (padded, strided, dilated) input, as XLA's `GetConvolutionFlops` does; its operands' bytes and
//!   those of its result (the first element of its tuple, not the scratch buffer);
//! - `fusion` of these, and of `transpose` and `bitcast` (no FLOPs): the FLOPs of its fused
//!   instructions, the bytes of its operands and output (each read or written once).
//!
//! Any other opcode (inside a fusion too), a tuple-shaped operand where an array is expected, an
//! element type without a whole number of bytes, or inputs of 8 or 4 bits (for which xprof
//! discounts device FLOPs) is not costed: [`cost`] returns the opcode, which the caller names
//! instead of guessing.

use super::hlo::{HloInstructionProto, HloModule, ShapeProto};

/// The custom-call targets of DNN convolutions (XLA's `IsCustomCallToDnnConvolution`).
const DNN_CONVOLUTION_TARGETS: [&str; 5] = [
    "__cudnn$convForward",
    "__cudnn$convBackwardInput",
    "__cudnn$convBackwardFilter",
    "__cudnn$convBiasActivationForward",
    "__cudnn$convForwardGraph",
];

fn is_dnn_convolution(instruction: &HloInstructionProto) -> bool {
    instruction.opcode == "custom-call"
        && DNN_CONVOLUTION_TARGETS.contains(&instruction.custom_call_target.as_str())
}

/// The convolution's shape of result: the first element of a custom call's tuple.
fn convolution_result(instruction: &HloInstructionProto) -> ShapeProto {
    let out = shape(instruction);
    if out.element_type == TUPLE {
        return out.tuple_shapes.first().cloned().unwrap_or_default();
    }
    out
}

/// XLA's `GetConvolutionFlops`: 2 per multiply-add, over the kernel positions that land on the
/// input (not on padding, nor between dilated input elements).
fn convolution_flops(module: &HloModule, instruction: &HloInstructionProto) -> Option<u64> {
    let ops = operands(module, instruction)?;
    let (input, kernel) = (shape(ops.first()?), shape(ops.get(1)?));
    let output = convolution_result(instruction);
    let d = instruction.convolution_dimension_numbers.clone()?;
    let window = instruction.window.clone().unwrap_or_default();
    let dim = |s: &ShapeProto, i: i64| -> Option<i64> {
        s.dimensions.get(usize::try_from(i).ok()?).copied()
    };
    let input_feature = dim(&input, d.input_feature_dimension)?;
    let output_feature = dim(&output, d.output_feature_dimension)?;
    let batch = dim(&input, d.input_batch_dimension)?;
    if window.dimensions.len() > MAX_WINDOW_DIMENSIONS {
        return None;
    }
    let mut positions: i64 = 1;
    for (s, w) in window.dimensions.iter().enumerate() {
        let input_limit = dim(&input, *d.input_spatial_dimensions.get(s)?)?;
        let kernel_limit = dim(&kernel, *d.kernel_spatial_dimensions.get(s)?)?;
        let output_limit = dim(&output, *d.output_spatial_dimensions.get(s)?)?;
        // A window this large is no real convolution; its count would take too long.
        if kernel_limit.saturating_mul(output_limit) > MAX_WINDOW_PAIRS {
            return None;
        }
        let base = w.base_dilation.max(1);
        let mut valid = 0i64;
        for k in 0..kernel_limit {
            for o in 0..output_limit {
                let undilated = o
                    .saturating_mul(w.stride)
                    .saturating_sub(w.padding_low)
                    .saturating_add(k.saturating_mul(w.window_dilation.max(1)));
                let index = undilated.div_euclid(base);
                if undilated != index.saturating_mul(base) || index < 0 || index >= input_limit {
                    continue;
                }
                valid += 1;
            }
        }
        positions = positions.saturating_mul(valid);
    }
    let groups = instruction.feature_group_count.max(1);
    let batch_groups = instruction.batch_group_count.max(1);
    let fma = (input_feature / groups)
        .saturating_mul(output_feature)
        .saturating_mul(batch / batch_groups)
        .saturating_mul(positions);
    u64::try_from(fma).ok().map(|f| f.saturating_mul(2))
}

/// What one execution of an instruction costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// FLOPs.
    pub flops: u64,
    /// Bytes read and written.
    pub bytes_accessed: u64,
}

/// The bytes of one element of XLA's `PrimitiveType`, for the types with a whole number of bytes.
fn element_bytes(element_type: i32) -> Option<u64> {
    Some(match element_type {
        // PRED, S8, U8, F8E5M2, F8E4M3FN
        1 | 2 | 6 | 19 | 20 => 1,
        // S16, U16, F16, BF16
        3 | 7 | 10 | 16 => 2,
        // S32, U32, F32
        4 | 8 | 11 => 4,
        // S64, U64, F64, C64
        5 | 9 | 12 | 15 => 8,
        // C128
        18 => 16,
        _ => return None,
    })
}

/// The bits of one element (`primitive_util::BitWidth`), for the input-width rule.
fn element_bits(element_type: i32) -> Option<u64> {
    match element_type {
        // S4, U4
        21 | 22 => Some(4),
        t => element_bytes(t).map(|b| b * 8),
    }
}

const TUPLE: i32 = 13;
/// `ShapeUtil::ByteSizeOf`'s pointer size for a tuple's index table.
const POINTER_SIZE: u64 = 8;
/// The most instructions one cost visits (a fusion and the ones it fuses, at every level).
const MAX_VISITS: usize = 100_000;
/// The most kernel positions times output positions counted along one convolution dimension,
/// and the most dimensions (real convolutions are far below both).
const MAX_WINDOW_PAIRS: i64 = 1 << 22;
const MAX_WINDOW_DIMENSIONS: usize = 8;
/// XLA's clock-cycle estimate of a typical elementwise op, per element.
const FLOPS_PER_ELEMENT: u64 = 3;

fn elements(shape: &ShapeProto) -> u64 {
    shape.dimensions.iter().fold(1u64, |n, &d| {
        n.saturating_mul(u64::try_from(d).unwrap_or(0))
    })
}

/// `ShapeUtil::ByteSizeOf`: an array's elements times their size, a tuple's index table.
fn byte_size(shape: &ShapeProto) -> Option<u64> {
    if shape.element_type == TUPLE {
        return Some(POINTER_SIZE.saturating_mul(shape.tuple_shapes.len() as u64));
    }
    Some(elements(shape).saturating_mul(element_bytes(shape.element_type)?))
}

fn shape(instruction: &HloInstructionProto) -> ShapeProto {
    instruction.shape.clone().unwrap_or_default()
}

fn operands<'m>(
    module: &'m HloModule,
    instruction: &HloInstructionProto,
) -> Option<Vec<&'m HloInstructionProto>> {
    instruction
        .operand_ids
        .iter()
        .map(|&id| module.instruction_by_id(id))
        .collect()
}

/// The bytes of the operands and the output, each once.
fn operand_and_output_bytes(module: &HloModule, instruction: &HloInstructionProto) -> Option<u64> {
    let mut bytes = byte_size(&shape(instruction))?;
    for operand in operands(module, instruction)? {
        bytes = bytes.saturating_add(byte_size(&shape(operand))?);
    }
    Some(bytes)
}

/// The FLOPs of an instruction, without its bytes (those of a fused instruction are not its
/// fusion's); `Err` names an opcode not covered.
fn flops(
    module: &HloModule,
    instruction: &HloInstructionProto,
    depth: usize,
    budget: &mut usize,
) -> Result<u64, String> {
    let not_covered = || Err(instruction.opcode.clone());
    // A damaged proto whose fusions call themselves must still end quickly.
    if *budget == 0 {
        return not_covered();
    }
    *budget -= 1;
    match instruction.opcode.as_str() {
        "parameter" | "constant" | "broadcast" | "iota" | "tuple" => Ok(0),
        // Moving data only; covered inside fusions, whose bytes are the fusion's.
        "transpose" | "bitcast" if depth > 0 => Ok(0),
        "custom-call" if is_dnn_convolution(instruction) => {
            convolution_flops(module, instruction).ok_or_else(|| instruction.opcode.clone())
        }
        "add" | "multiply" | "maximum" | "compare" | "select" => {
            let out = shape(instruction);
            if out.element_type == TUPLE {
                return not_covered();
            }
            Ok(FLOPS_PER_ELEMENT.saturating_mul(elements(&out)))
        }
        "dot" => {
            let out = shape(instruction);
            let dims = instruction
                .dot_dimension_numbers
                .clone()
                .unwrap_or_default();
            let Some(lhs) = operands(module, instruction).and_then(|o| o.first().copied()) else {
                return not_covered();
            };
            let lhs = shape(lhs);
            let mut contracted = 1u64;
            for &d in &dims.lhs_contracting_dimensions {
                let Some(size) = usize::try_from(d).ok().and_then(|d| lhs.dimensions.get(d)) else {
                    return not_covered();
                };
                contracted = contracted.saturating_mul(u64::try_from(*size).unwrap_or(0));
            }
            Ok(2u64
                .saturating_mul(elements(&out))
                .saturating_mul(contracted))
        }
        "fusion" => {
            // Fusions nest only a few levels; a cycle in a damaged proto must still end.
            if depth > 16 {
                return not_covered();
            }
            let mut total = 0u64;
            for id in &instruction.called_computation_ids {
                let Some(computation) = module.computation(*id) else {
                    return not_covered();
                };
                for fused in &computation.instructions {
                    total = total.saturating_add(flops(module, fused, depth + 1, budget)?);
                }
            }
            Ok(total)
        }
        _ => not_covered(),
    }
}

/// What one execution of `instruction` costs, or the opcode (its own or a fused one's) the
/// model does not cover.
pub fn cost(module: &HloModule, instruction: &HloInstructionProto) -> Result<Cost, String> {
    let mut budget = MAX_VISITS;
    let f = flops(module, instruction, 0, &mut budget)?;
    let bytes = match instruction.opcode.as_str() {
        "parameter" | "constant" => Some(0),
        "tuple" => byte_size(&shape(instruction)),
        // The result, not the scratch buffer the custom call's tuple also holds.
        "custom-call" => operands(module, instruction).and_then(|ops| {
            ops.iter()
                .try_fold(byte_size(&convolution_result(instruction))?, |n, o| {
                    Some(n.saturating_add(byte_size(&shape(o))?))
                })
        }),
        _ => operand_and_output_bytes(module, instruction),
    };
    let Some(bytes_accessed) = bytes else {
        return Err(instruction.opcode.clone());
    };
    // xprof counts fewer device FLOPs for inputs of 8 or 4 bits: not covered.
    if f > 0 {
        let widest = operands(module, instruction)
            .unwrap_or_default()
            .iter()
            .filter_map(|o| element_bits(shape(o).element_type))
            .max();
        if matches!(widest, Some(4 | 8)) {
            return Err(format!("{} of 8- or 4-bit inputs", instruction.opcode));
        }
    }
    Ok(Cost {
        flops: f,
        bytes_accessed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op_stats::hlo::{DotDimensionNumbers, HloComputationProto, HloModuleProto};

    const F32: i32 = 11;
    const S32: i32 = 4;
    const PRED: i32 = 1;
    const S8: i32 = 2;

    fn array(element_type: i32, dims: &[i64]) -> ShapeProto {
        ShapeProto {
            element_type,
            dimensions: dims.to_vec(),
            ..ShapeProto::default()
        }
    }

    fn ins(
        id: i64,
        name: &str,
        opcode: &str,
        shape: ShapeProto,
        operands: &[i64],
    ) -> HloInstructionProto {
        HloInstructionProto {
            name: name.into(),
            opcode: opcode.into(),
            shape: Some(shape),
            id,
            operand_ids: operands.to_vec(),
            ..HloInstructionProto::default()
        }
    }

    fn dot(
        id: i64,
        name: &str,
        out: ShapeProto,
        operands: &[i64],
        lhs_contracting: i64,
    ) -> HloInstructionProto {
        HloInstructionProto {
            dot_dimension_numbers: Some(DotDimensionNumbers {
                lhs_contracting_dimensions: vec![lhs_contracting],
                rhs_contracting_dimensions: vec![0],
                ..DotDimensionNumbers::default()
            }),
            ..ins(id, name, "dot", out, operands)
        }
    }

    fn fusion(
        id: i64,
        name: &str,
        kind: &str,
        out: ShapeProto,
        operands: &[i64],
        computation: i64,
    ) -> HloInstructionProto {
        HloInstructionProto {
            fusion_kind: kind.into(),
            called_computation_ids: vec![computation],
            ..ins(id, name, "fusion", out, operands)
        }
    }

    /// Modelled on the `gpu-hlo` case's program: its values are the FLOPs and bytes xprof shows
    /// for the same instructions.
    fn module() -> HloModule {
        let entry = HloComputationProto {
            name: "main".into(),
            id: 1,
            instructions: vec![
                ins(1, "x", "parameter", array(F32, &[128, 32]), &[]),
                ins(2, "w1", "parameter", array(F32, &[32, 64]), &[]),
                ins(3, "b1", "parameter", array(F32, &[64]), &[]),
                ins(4, "labels", "parameter", array(S32, &[128]), &[]),
                ins(5, "logits", "parameter", array(F32, &[128, 10]), &[]),
                ins(6, "scale", "parameter", array(F32, &[128]), &[]),
                fusion(
                    10,
                    "ynn_fusion.3",
                    "kCustom",
                    array(F32, &[128, 64]),
                    &[1, 2],
                    2,
                ),
                fusion(
                    11,
                    "broadcast_maximum_fusion",
                    "kLoop",
                    array(F32, &[128, 64]),
                    &[10, 3],
                    3,
                ),
                fusion(
                    12,
                    "multiply_add_fusion",
                    "kLoop",
                    array(F32, &[128, 10]),
                    &[5, 6, 4],
                    4,
                ),
                dot(13, "dot.1", array(F32, &[64, 10]), &[11, 12], 0),
                ins(14, "add.9", "add", array(F32, &[128, 64]), &[10, 11]),
                HloInstructionProto {
                    shape: Some(ShapeProto {
                        element_type: 13,
                        dimensions: vec![],
                        tuple_shapes: vec![array(F32, &[64]); 5],
                        ..ShapeProto::default()
                    }),
                    ..ins(
                        15,
                        "tuple.3",
                        "tuple",
                        ShapeProto::default(),
                        &[3, 3, 3, 3, 3],
                    )
                },
                ins(16, "exp.1", "exponential", array(F32, &[128]), &[6]),
                ins(17, "q", "parameter", array(S8, &[128, 32]), &[]),
                ins(19, "qw", "parameter", array(S8, &[32, 64]), &[]),
                dot(18, "dot.8bit", array(F32, &[128, 64]), &[17, 19], 1),
                // The widest input decides: 32 bits, no discount.
                dot(60, "dot.mixed", array(F32, &[128, 64]), &[17, 2], 1),
            ],
            ..HloComputationProto::default()
        };
        let custom = HloComputationProto {
            name: "fused_computation.3".into(),
            id: 2,
            instructions: vec![
                ins(20, "p0", "parameter", array(F32, &[128, 32]), &[]),
                ins(21, "p1", "parameter", array(F32, &[32, 64]), &[]),
                dot(22, "dot_general.2", array(F32, &[128, 64]), &[20, 21], 1),
            ],
            ..HloComputationProto::default()
        };
        let relu = HloComputationProto {
            name: "fused_computation.15".into(),
            id: 3,
            instructions: vec![
                ins(30, "p0", "parameter", array(F32, &[128, 64]), &[]),
                ins(31, "p1", "parameter", array(F32, &[64]), &[]),
                ins(32, "bias", "broadcast", array(F32, &[128, 64]), &[31]),
                ins(33, "add.2", "add", array(F32, &[128, 64]), &[30, 32]),
                ins(34, "zero", "constant", array(F32, &[]), &[]),
                ins(35, "zeros", "broadcast", array(F32, &[128, 64]), &[34]),
                ins(36, "max.8", "maximum", array(F32, &[128, 64]), &[33, 35]),
            ],
            ..HloComputationProto::default()
        };
        let select = HloComputationProto {
            name: "fused_computation.11".into(),
            id: 4,
            instructions: vec![
                ins(40, "p0", "parameter", array(F32, &[128, 10]), &[]),
                ins(41, "p1", "parameter", array(F32, &[128]), &[]),
                ins(42, "p2", "parameter", array(S32, &[128]), &[]),
                ins(43, "labels", "broadcast", array(S32, &[128, 10]), &[42]),
                ins(44, "iota", "iota", array(S32, &[128, 10]), &[]),
                ins(45, "eq", "compare", array(PRED, &[128, 10]), &[43, 44]),
                ins(46, "one", "constant", array(F32, &[]), &[]),
                ins(47, "ones", "broadcast", array(F32, &[128, 10]), &[46]),
                ins(
                    48,
                    "select.3",
                    "select",
                    array(F32, &[128, 10]),
                    &[45, 47, 47],
                ),
                ins(49, "scale", "broadcast", array(F32, &[128, 10]), &[41]),
                ins(50, "mul.9", "multiply", array(F32, &[128, 10]), &[49, 40]),
                ins(51, "add_any.2", "add", array(F32, &[128, 10]), &[48, 50]),
            ],
            ..HloComputationProto::default()
        };
        HloModule::new(HloModuleProto {
            name: "jit_train_step".into(),
            computations: vec![custom, relu, select, entry],
            entry_computation_id: 1,
        })
    }

    fn cost_of(name: &str) -> Result<Cost, String> {
        let m = module();
        let i = m.instruction(name).cloned().unwrap_or_default();
        cost(&m, &i)
    }

    fn ok(flops: u64, bytes_accessed: u64) -> Result<Cost, String> {
        Ok(Cost {
            flops,
            bytes_accessed,
        })
    }

    #[test]
    fn parameter_and_tuple() {
        assert_eq!(cost_of("x"), ok(0, 0));
        // Five elements of an index table of 8-byte pointers.
        assert_eq!(cost_of("tuple.3"), ok(0, 40));
    }

    #[test]
    fn dot_and_a_custom_fusion_of_one() {
        // 2 x 64 x 10 x 128 FLOPs; (128x64 + 128x10 + 64x10) x 4 bytes.
        assert_eq!(cost_of("dot.1"), ok(163_840, 40_448));
        assert_eq!(cost_of("ynn_fusion.3"), ok(524_288, 57_344));
    }

    #[test]
    fn elementwise_ops_in_fusions() {
        // add and maximum: 3 FLOPs each per element; the broadcast bias is read once.
        assert_eq!(cost_of("broadcast_maximum_fusion"), ok(49_152, 65_792));
        // compare, select, multiply, add.
        assert_eq!(cost_of("multiply_add_fusion"), ok(15_360, 11_264));
        assert_eq!(cost_of("add.9"), ok(24_576, 98_304));
    }

    #[test]
    fn what_is_not_covered_is_named() {
        assert_eq!(cost_of("exp.1"), Err("exponential".into()));
        assert_eq!(cost_of("dot.8bit"), Err("dot of 8- or 4-bit inputs".into()));
        assert_eq!(cost_of("dot.mixed"), ok(524_288, 45_056));
    }

    /// The real JAX profile on ROCm's program (`rocm1`): a 3-D convolution as a DNN custom call
    /// and transposes fused with bitcasts; the values are those of xprof's OpStats for it, per
    /// occurrence.
    fn conv_module() -> HloModule {
        use crate::op_stats::hlo::{ConvolutionDimensionNumbers, Window, WindowDimension};
        const BF16: i32 = 16;
        const U8: i32 = 6;
        let window = |size, stride| WindowDimension {
            size,
            stride,
            padding_low: 1,
            padding_high: 1,
            window_dilation: 1,
            base_dilation: 1,
            window_reversal: false,
        };
        let conv = HloInstructionProto {
            custom_call_target: "__cudnn$convForward".into(),
            window: Some(Window {
                dimensions: vec![window(1, 1), window(2, 2), window(2, 2)],
            }),
            // bf012_oi012->bf012
            convolution_dimension_numbers: Some(ConvolutionDimensionNumbers {
                input_batch_dimension: 0,
                input_feature_dimension: 1,
                input_spatial_dimensions: vec![2, 3, 4],
                kernel_output_feature_dimension: 0,
                kernel_input_feature_dimension: 1,
                kernel_spatial_dimensions: vec![2, 3, 4],
                output_batch_dimension: 0,
                output_feature_dimension: 1,
                output_spatial_dimensions: vec![2, 3, 4],
            }),
            feature_group_count: 1,
            batch_group_count: 1,
            shape: Some(ShapeProto {
                element_type: 13,
                dimensions: vec![],
                tuple_shapes: vec![array(BF16, &[1, 5120, 34, 31, 53]), array(U8, &[7_150_336])],
                ..ShapeProto::default()
            }),
            ..ins(
                3,
                "cudnn-conv.1",
                "custom-call",
                ShapeProto::default(),
                &[1, 2],
            )
        };
        let entry = HloComputationProto {
            id: 1,
            instructions: vec![
                ins(1, "x", "parameter", array(BF16, &[1, 16, 32, 60, 104]), &[]),
                ins(
                    2,
                    "kernel",
                    "parameter",
                    array(BF16, &[5120, 16, 1, 2, 2]),
                    &[],
                ),
                conv,
                ins(4, "t", "parameter", array(BF16, &[1, 2, 2, 16, 5120]), &[]),
                fusion(
                    5,
                    "loop_transpose_fusion",
                    "kLoop",
                    array(BF16, &[5120, 16, 4]),
                    &[4],
                    2,
                ),
                ins(
                    6,
                    "transpose.1",
                    "transpose",
                    array(BF16, &[5120, 16, 4]),
                    &[4],
                ),
                HloInstructionProto {
                    custom_call_target: "__cublas$gemm".into(),
                    ..ins(7, "gemm", "custom-call", array(BF16, &[4]), &[4])
                },
            ],
            ..HloComputationProto::default()
        };
        let fused = HloComputationProto {
            id: 2,
            instructions: vec![
                ins(
                    20,
                    "p0",
                    "parameter",
                    array(BF16, &[1, 2, 2, 16, 5120]),
                    &[],
                ),
                ins(21, "b", "bitcast", array(BF16, &[4, 16, 5120]), &[20]),
                ins(22, "tr", "transpose", array(BF16, &[5120, 16, 4]), &[21]),
            ],
            ..HloComputationProto::default()
        };
        HloModule::new(HloModuleProto {
            name: "jit_forward_3d_conv".into(),
            computations: vec![fused, entry],
            entry_computation_id: 1,
        })
    }

    fn conv_cost_of(name: &str) -> Result<Cost, String> {
        let m = conv_module();
        let i = m.instruction(name).cloned().unwrap_or_default();
        cost(&m, &i)
    }

    #[test]
    fn dnn_convolution_counts_kernel_positions_on_the_input() {
        // 2 x 16 x 5120 x (32 x 60 x 104) valid positions, of 34 x 62 x 106 with the padding;
        // bytes: the inputs and the result, not the scratch buffer.
        assert_eq!(
            conv_cost_of("cudnn-conv.1"),
            ok(32_715_571_200, 6_389_760 + 655_360 + 572_026_880)
        );
    }

    #[test]
    fn transposes_and_bitcasts_in_fusions() {
        assert_eq!(conv_cost_of("loop_transpose_fusion"), ok(0, 2 * 655_360));
        // Not covered on their own, nor other custom calls.
        assert_eq!(conv_cost_of("transpose.1"), Err("transpose".into()));
        assert_eq!(conv_cost_of("gemm"), Err("custom-call".into()));
    }

    #[test]
    fn fusions_calling_themselves_end() {
        // Each computation holds two fusions calling it again: without a bound, 2^depth visits.
        let looped = HloComputationProto {
            id: 1,
            instructions: (0..2)
                .map(|i| fusion(i, &format!("f{i}"), "kLoop", array(F32, &[4]), &[], 1))
                .collect(),
            ..HloComputationProto::default()
        };
        let m = HloModule::new(HloModuleProto {
            computations: vec![looped],
            ..HloModuleProto::default()
        });
        let f = m.instruction("f0").cloned().unwrap_or_default();
        assert_eq!(cost(&m, &f), Err("fusion".into()));
    }
}

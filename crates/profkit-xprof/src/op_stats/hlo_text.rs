//! What xprof shows of an HLO instruction besides its cost: its expression (the instruction as
//! XLA's HLO printer writes it, with the options xprof sets: no metadata, no backend config,
//! operand shapes shown) and its source stack (the frames of the module's stack frame index that
//! its metadata's `stack_frame_id` starts from).
//!
//! The expression is `%name = shape opcode(operands), attributes`: shapes with their layouts
//! (`f32[128,64]{1,0}`, a scalar without its empty layout, a tuple as `(a, b)`, a dynamic
//! dimension as `<=n`), each operand as its shape and `%name`, a parameter's number in place of
//! operands. The attributes printed are those of the opcodes the GPU profiles at hand run as
//! kernels: a fusion's `kind=` and `calls=`; a dot's dimension numbers; a DNN convolution custom
//! call's `window=`, `dim_labels=`, group counts and `custom_call_target=`; a broadcast's,
//! transpose's or reduce's `dimensions=` (and a reduce's `to_apply=`); none for the elementwise
//! ops, `bitcast`, `copy` and `tuple`. Any other opcode, or an attribute XLA would print that
//! this printer does not (a sharding, frontend attributes, control predecessors, a non-default
//! precision, layouts with tiles or memory spaces, ...), is not printed: [`expression`] names
//! it, and the caller says what it could not reproduce.

use std::fmt::Write as _;

use super::hlo::xla::{
    ConvolutionDimensionNumbers, LayoutProto, StackFrameIndexProto, Window, WindowDimension,
};
use super::hlo::{HloInstructionProto, HloModule, ShapeProto};

const TUPLE: i32 = 13;

/// XLA's lower-case name of a `PrimitiveType`, for the types it has printed names for.
fn element_type_name(t: i32) -> Option<&'static str> {
    Some(match t {
        1 => "pred",
        2 => "s8",
        3 => "s16",
        4 => "s32",
        5 => "s64",
        6 => "u8",
        7 => "u16",
        8 => "u32",
        9 => "u64",
        10 => "f16",
        11 => "f32",
        12 => "f64",
        15 => "c64",
        16 => "bf16",
        17 => "token",
        18 => "c128",
        19 => "f8e5m2",
        20 => "f8e4m3fn",
        21 => "s4",
        22 => "u4",
        23 => "f8e4m3b11fnuz",
        24 => "f8e5m2fnuz",
        25 => "f8e4m3fnuz",
        26 => "s2",
        27 => "u2",
        28 => "f8e4m3",
        _ => return None,
    })
}

/// Whether a layout holds only its dimension order (what the printer writes as `{1,0}`); the
/// tail padding alignment of 1 (or unset) is XLA's default and not printed.
fn plain_layout(layout: &LayoutProto) -> bool {
    layout.tiles.is_empty()
        && layout.element_size_in_bits == 0
        && layout.memory_space == 0
        && layout.dim_level_types.is_empty()
        && layout.index_primitive_type == 0
        && layout.pointer_primitive_type == 0
        && layout.dynamic_shape_metadata_prefix_bytes == 0
        && layout.tail_padding_alignment_in_elements <= 1
        && layout.split_configs.is_empty()
}

/// `ShapeUtil::HumanStringWithLayout`.
fn print_shape(out: &mut String, shape: &ShapeProto, depth: usize) -> Result<(), String> {
    if depth > 64 {
        return Err("nested tuple shapes".to_owned());
    }
    if shape.element_type == TUPLE {
        out.push('(');
        for (i, s) in shape.tuple_shapes.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            print_shape(out, s, depth + 1)?;
        }
        out.push(')');
        return Ok(());
    }
    let name = element_type_name(shape.element_type)
        .ok_or_else(|| format!("shapes of element type {}", shape.element_type))?;
    out.push_str(name);
    out.push('[');
    for (i, d) in shape.dimensions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if shape.is_dynamic_dimension.get(i).copied().unwrap_or(false) {
            out.push_str("<=");
        }
        let _ = write!(out, "{d}");
    }
    out.push(']');
    if let Some(layout) = &shape.layout {
        if !plain_layout(layout) {
            return Err("layouts with tiles, memory spaces or other attributes".to_owned());
        }
        // A scalar's layout `{}` is not printed.
        if !shape.dimensions.is_empty() {
            out.push('{');
            out.push_str(&join(&layout.minor_to_major, ","));
            out.push('}');
        }
    }
    Ok(())
}

fn join(values: &[i64], sep: &str) -> String {
    let mut s = String::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            s.push_str(sep);
        }
        let _ = write!(s, "{v}");
    }
    s
}

/// `window_util::ToString`.
fn window_text(window: &Window) -> String {
    let mut s = String::new();
    let field = |s: &mut String, heading: &str, f: &dyn Fn(&WindowDimension) -> String| {
        s.push_str(heading);
        s.push('=');
        for (i, d) in window.dimensions.iter().enumerate() {
            if i > 0 {
                s.push('x');
            }
            s.push_str(&f(d));
        }
    };
    let dims = &window.dimensions;
    field(&mut s, "size", &|d| d.size.to_string());
    if dims.iter().any(|d| d.stride != 1) {
        s.push(' ');
        field(&mut s, "stride", &|d| d.stride.to_string());
    }
    if dims
        .iter()
        .any(|d| d.padding_low != 0 || d.padding_high != 0)
    {
        s.push(' ');
        field(&mut s, "pad", &|d| {
            format!("{}_{}", d.padding_low, d.padding_high)
        });
    }
    if dims.iter().any(|d| d.base_dilation != 1) {
        s.push(' ');
        field(&mut s, "lhs_dilate", &|d| d.base_dilation.to_string());
    }
    if dims.iter().any(|d| d.window_dilation != 1) {
        s.push(' ');
        field(&mut s, "rhs_dilate", &|d| d.window_dilation.to_string());
    }
    if dims.iter().any(|d| d.window_reversal) {
        s.push(' ');
        field(&mut s, "rhs_reversal", &|d| {
            u8::from(d.window_reversal).to_string()
        });
    }
    s
}

/// `ConvolutionDimensionNumbersToString`: `bf01_oi01->bf01`.
fn dim_labels(d: &ConvolutionDimensionNumbers) -> Result<String, String> {
    let bad = || "convolution dimension numbers out of range".to_owned();
    let part = |first: (i64, char), second: (i64, char), spatial: &[i64]| {
        let rank = spatial.len() + 2;
        let mut labels = vec![String::new(); rank];
        for (at, label) in [first, second] {
            *labels.get_mut(usize::try_from(at).ok()?)? = label.to_string();
        }
        for (i, &at) in spatial.iter().enumerate() {
            *labels.get_mut(usize::try_from(at).ok()?)? = i.to_string();
        }
        Some(labels.concat())
    };
    let lhs = part(
        (d.input_batch_dimension, 'b'),
        (d.input_feature_dimension, 'f'),
        &d.input_spatial_dimensions,
    )
    .ok_or_else(bad)?;
    let rhs = part(
        (d.kernel_output_feature_dimension, 'o'),
        (d.kernel_input_feature_dimension, 'i'),
        &d.kernel_spatial_dimensions,
    )
    .ok_or_else(bad)?;
    let out = part(
        (d.output_batch_dimension, 'b'),
        (d.output_feature_dimension, 'f'),
        &d.output_spatial_dimensions,
    )
    .ok_or_else(bad)?;
    Ok(format!("{lhs}_{rhs}->{out}"))
}

/// Abseil's `CEscape`: quotes, backslashes and control bytes escaped, other bytes kept.
fn c_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out
}

const ELEMENTWISE: &[&str] = &[
    "abs",
    "add",
    "and",
    "atan2",
    "bitcast",
    "cbrt",
    "ceil",
    "clamp",
    "convert",
    "copy",
    "cosine",
    "divide",
    "exponential",
    "exponential-minus-one",
    "floor",
    "log",
    "log-plus-one",
    "logistic",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "or",
    "power",
    "remainder",
    "round-nearest-even",
    "rsqrt",
    "select",
    "sign",
    "sine",
    "sqrt",
    "subtract",
    "tanh",
    "xor",
];

/// The instruction as xprof prints it (`HloInstruction::ToString` with xprof's options), or
/// what XLA's printer would show that this one does not print.
pub(crate) fn expression(
    module: &HloModule,
    instruction: &HloInstructionProto,
) -> Result<String, String> {
    let op = instruction.opcode.as_str();
    // The attributes XLA prints for any opcode, which this printer does not.
    let generic = [
        (instruction.sharding.is_some(), "sharding"),
        (
            instruction
                .frontend_attributes
                .as_ref()
                .is_some_and(|f| !f.map.is_empty()),
            "frontend attributes",
        ),
        (
            !instruction.control_predecessor_ids.is_empty(),
            "control predecessors",
        ),
        (
            instruction
                .statistics_viz
                .as_ref()
                .is_some_and(|s| !s.statistics.is_empty()),
            "statistics",
        ),
        (instruction.original_value.is_some(), "original values"),
        (instruction.result_accuracy.is_some(), "result accuracies"),
        (
            !instruction.output_operand_aliasing.is_empty(),
            "output-operand aliasing",
        ),
    ];
    if let Some((_, what)) = generic.iter().find(|(set, _)| *set) {
        return Err(format!("{op} with {what}"));
    }
    let mut out = String::new();
    let _ = write!(out, "%{} = ", instruction.name);
    print_shape(&mut out, &instruction.shape.clone().unwrap_or_default(), 0)?;
    let _ = write!(out, " {op}(");
    if op == "parameter" {
        let _ = write!(out, "{}", instruction.parameter_number);
    } else {
        for (i, id) in instruction.operand_ids.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let operand = module
                .instruction_by_id(*id)
                .ok_or_else(|| format!("{op} of an operand the module does not hold"))?;
            print_shape(&mut out, &operand.shape.clone().unwrap_or_default(), 0)?;
            let _ = write!(out, " %{}", operand.name);
        }
    }
    out.push(')');
    let mut attributes: Vec<String> = Vec::new();
    let default_precision = instruction
        .precision_config
        .as_ref()
        .is_none_or(|p| p.operand_precision.iter().all(|&x| x == 0) && p.algorithm == 0);
    let called = |attributes: &mut Vec<String>, heading: &str| -> Result<(), String> {
        let mut names = Vec::new();
        for id in &instruction.called_computation_ids {
            let c = module
                .computation(*id)
                .ok_or_else(|| format!("{op} calling a computation the module does not hold"))?;
            names.push(format!("%{}", c.name));
        }
        if !names.is_empty() {
            attributes.push(format!("{heading}={}", names.join(", ")));
        }
        Ok(())
    };
    let dims = |attributes: &mut Vec<String>| {
        attributes.push(format!(
            "dimensions={{{}}}",
            join(&instruction.dimensions, ",")
        ));
    };
    match op {
        "parameter" | "tuple" if instruction.called_computation_ids.is_empty() => {}
        _ if ELEMENTWISE.contains(&op) && instruction.called_computation_ids.is_empty() => {}
        "broadcast" | "transpose" => dims(&mut attributes),
        "reduce" => {
            dims(&mut attributes);
            called(&mut attributes, "to_apply")?;
        }
        "fusion" => {
            attributes.push(format!("kind={}", instruction.fusion_kind));
            called(&mut attributes, "calls")?;
        }
        "dot" if default_precision && instruction.dot_sparsity.is_empty() => {
            let d = instruction
                .dot_dimension_numbers
                .clone()
                .unwrap_or_default();
            if !d.lhs_batch_dimensions.is_empty() {
                attributes.push(format!(
                    "lhs_batch_dims={{{}}}",
                    join(&d.lhs_batch_dimensions, ",")
                ));
            }
            attributes.push(format!(
                "lhs_contracting_dims={{{}}}",
                join(&d.lhs_contracting_dimensions, ",")
            ));
            if !d.rhs_batch_dimensions.is_empty() {
                attributes.push(format!(
                    "rhs_batch_dims={{{}}}",
                    join(&d.rhs_batch_dimensions, ",")
                ));
            }
            attributes.push(format!(
                "rhs_contracting_dims={{{}}}",
                join(&d.rhs_contracting_dimensions, ",")
            ));
        }
        "custom-call"
            if default_precision
                && instruction.called_computation_ids.is_empty()
                && instruction.padding_type == 0
                && !instruction.constrain_layout
                && instruction.literal.is_none()
                && instruction.custom_call_schedule == 0
                && instruction.custom_call_api_version == 1 =>
        {
            if let Some(w) = instruction
                .window
                .as_ref()
                .filter(|w| !w.dimensions.is_empty())
            {
                attributes.push(format!("window={{{}}}", window_text(w)));
            }
            if let Some(d) = &instruction.convolution_dimension_numbers {
                attributes.push(format!("dim_labels={}", dim_labels(d)?));
            }
            if instruction.feature_group_count > 1 {
                attributes.push(format!(
                    "feature_group_count={}",
                    instruction.feature_group_count
                ));
            }
            if instruction.batch_group_count > 1 {
                attributes.push(format!(
                    "batch_group_count={}",
                    instruction.batch_group_count
                ));
            }
            attributes.push(format!(
                "custom_call_target=\"{}\"",
                c_escape(&instruction.custom_call_target)
            ));
            if instruction.custom_call_has_side_effect {
                attributes.push("custom_call_has_side_effect=true".to_owned());
            }
        }
        _ => return Err(op.to_owned()),
    }
    for a in attributes {
        out.push_str(", ");
        out.push_str(&a);
    }
    // xprof keeps the first million bytes (`kMaxHlolNameSize`); a character cut there is left
    // out whole.
    if out.len() > MAX_EXPRESSION_BYTES {
        let mut end = MAX_EXPRESSION_BYTES;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    Ok(out)
}

/// The longest expression xprof keeps, in bytes.
const MAX_EXPRESSION_BYTES: usize = 1_000_000;

/// The source stack of a frame (`GetOpLocationStack`): `file:line:column` and a newline for it
/// and each of its parents, up to the first frame the index does not hold (or holds empty).
pub(crate) fn stack_frames(index: Option<&StackFrameIndexProto>, frame_id: i32) -> String {
    let mut out = String::new();
    let Some(index) = index else {
        return out;
    };
    let mut id = frame_id;
    // A damaged index whose frames are their own parents must still end.
    for _ in 0..index.stack_frames.len() {
        let Some(frame) = usize::try_from(id)
            .ok()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| index.stack_frames.get(i))
        else {
            break;
        };
        let at = |list_len: usize, id: i32| {
            usize::try_from(id)
                .ok()
                .and_then(|i| i.checked_sub(1))
                .filter(|&i| i < list_len)
        };
        let location = at(index.file_locations.len(), frame.file_location_id)
            .and_then(|i| index.file_locations.get(i))
            .cloned()
            .unwrap_or_default();
        let file = at(index.file_names.len(), location.file_name_id)
            .and_then(|i| index.file_names.get(i))
            .map_or("", String::as_str);
        let function = at(index.function_names.len(), location.function_name_id)
            .and_then(|i| index.function_names.get(i))
            .map_or("", String::as_str);
        if file.is_empty()
            && function.is_empty()
            && location.line == 0
            && location.column == 0
            && frame.parent_frame_id == 0
        {
            break;
        }
        let _ = writeln!(out, "{file}:{}:{}", location.line, location.column);
        id = frame.parent_frame_id;
        if id == 0 {
            break;
        }
    }
    out
}

/// `GetSourceInfo` of an instruction: the metadata's file and line with the source stack when
/// it names a file; else the file and line of the stack's first frame; else no file, line -1.
pub(crate) fn source_info(
    module: &HloModule,
    instruction: &HloInstructionProto,
) -> crate::proto::SourceInfo {
    let none = crate::proto::SourceInfo {
        line_number: -1,
        ..Default::default()
    };
    let Some(m) = instruction.metadata.as_ref() else {
        return none;
    };
    let stack = if m.stack_frame_id != 0 {
        stack_frames(module.proto.stack_frame_index.as_ref(), m.stack_frame_id)
    } else {
        String::new()
    };
    if !m.source_file.is_empty() {
        return crate::proto::SourceInfo {
            file_name: m.source_file.clone(),
            line_number: m.source_line,
            stack_frame: stack,
        };
    }
    let first = stack.split('\n').next().unwrap_or("");
    let mut parts = first.split(':');
    match (parts.next(), parts.next()) {
        (Some(file), Some(line)) if !stack.is_empty() => crate::proto::SourceInfo {
            file_name: file.to_owned(),
            // abseil's `SimpleAtoi`; the line stays -1 when it does not parse.
            line_number: line.trim().parse().unwrap_or(-1),
            stack_frame: stack.clone(),
        },
        _ => none,
    }
}

#[cfg(test)]
mod tests {
    use super::super::hlo::xla::{
        FrontendAttributes, OpMetadata, PrecisionConfig, StackFrameIndexProto,
        stack_frame_index_proto::{FileLocation, StackFrame},
    };
    use super::super::hlo::{HloComputationProto, HloModuleProto};
    use super::*;

    const BF16: i32 = 16;
    const F32: i32 = 11;
    const U8: i32 = 6;

    fn array(element_type: i32, dims: &[i64]) -> ShapeProto {
        let rank = i64::try_from(dims.len()).unwrap_or(0);
        ShapeProto {
            element_type,
            dimensions: dims.to_vec(),
            layout: Some(Box::new(LayoutProto {
                minor_to_major: (0..rank).rev().collect(),
                tail_padding_alignment_in_elements: 1,
                ..LayoutProto::default()
            })),
            ..ShapeProto::default()
        }
    }

    fn tuple(shapes: Vec<ShapeProto>) -> ShapeProto {
        ShapeProto {
            element_type: TUPLE,
            tuple_shapes: shapes,
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

    /// Modelled on the real JAX profile on ROCm (`rocm1`) and the `gpu-hlo` case: the
    /// expressions expected are xprof's for the same instructions.
    fn module() -> HloModule {
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
            custom_call_api_version: 1,
            precision_config: Some(PrecisionConfig {
                operand_precision: vec![0, 0],
                algorithm: 0,
            }),
            frontend_attributes: Some(FrontendAttributes::default()),
            ..ins(
                3,
                "cudnn-conv.1",
                "custom-call",
                tuple(vec![
                    array(BF16, &[1, 5120, 34, 31, 53]),
                    array(U8, &[7_150_336]),
                ]),
                &[1, 2],
            )
        };
        let dot = HloInstructionProto {
            dot_dimension_numbers: Some(super::super::hlo::DotDimensionNumbers {
                lhs_contracting_dimensions: vec![0],
                rhs_contracting_dimensions: vec![0],
                ..Default::default()
            }),
            ..ins(6, "dot.1", "dot", array(F32, &[64, 10]), &[4, 5])
        };
        let entry = HloComputationProto {
            id: 1,
            instructions: vec![
                ins(
                    1,
                    "bitcast.12.0",
                    "bitcast",
                    array(BF16, &[1, 16, 32, 60, 104]),
                    &[],
                ),
                ins(
                    2,
                    "bitcast.14.0",
                    "bitcast",
                    array(BF16, &[5120, 16, 1, 2, 2]),
                    &[],
                ),
                conv,
                HloInstructionProto {
                    parameter_number: 1,
                    ..ins(4, "param.1", "parameter", array(F32, &[128, 64]), &[])
                },
                ins(5, "m", "parameter", array(F32, &[128, 10]), &[]),
                dot,
                HloInstructionProto {
                    fusion_kind: "kLoop".into(),
                    called_computation_ids: vec![2],
                    ..ins(
                        7,
                        "loop_transpose_fusion",
                        "fusion",
                        array(F32, &[64, 128]),
                        &[4],
                    )
                },
                ins(8, "s", "parameter", array(F32, &[]), &[]),
                ins(
                    9,
                    "tuple.3",
                    "tuple",
                    tuple(vec![array(F32, &[64, 10]), array(F32, &[])]),
                    &[6, 8],
                ),
                ins(10, "exp", "exponential", array(F32, &[]), &[8]),
                ins(11, "gte", "get-tuple-element", array(F32, &[]), &[9]),
            ],
            ..HloComputationProto::default()
        };
        let fused = HloComputationProto {
            id: 2,
            name: "fused_transpose.1".into(),
            ..HloComputationProto::default()
        };
        HloModule::new(HloModuleProto {
            computations: vec![fused, entry],
            stack_frame_index: Some(StackFrameIndexProto {
                file_names: vec!["/w/gen.py".into()],
                function_names: vec!["f".into(), "<module>".into()],
                file_locations: vec![
                    FileLocation {
                        file_name_id: 1,
                        function_name_id: 1,
                        line: 23,
                        column: 11,
                        ..Default::default()
                    },
                    FileLocation {
                        file_name_id: 1,
                        function_name_id: 2,
                        line: 103,
                        column: 4,
                        ..Default::default()
                    },
                ],
                stack_frames: vec![
                    StackFrame {
                        file_location_id: 2,
                        parent_frame_id: 0,
                    },
                    StackFrame {
                        file_location_id: 1,
                        parent_frame_id: 1,
                    },
                    // Its own parent: a damaged index.
                    StackFrame {
                        file_location_id: 1,
                        parent_frame_id: 3,
                    },
                ],
            }),
            ..HloModuleProto::default()
        })
    }

    fn text(name: &str) -> Result<String, String> {
        let m = module();
        let i = m.instruction(name).cloned().unwrap_or_default();
        expression(&m, &i)
    }

    #[test]
    fn kernels_of_the_real_profiles() {
        assert_eq!(
            text("cudnn-conv.1").as_deref(),
            Ok(
                "%cudnn-conv.1 = (bf16[1,5120,34,31,53]{4,3,2,1,0}, u8[7150336]{0}) custom-call(bf16[1,16,32,60,104]{4,3,2,1,0} %bitcast.12.0, bf16[5120,16,1,2,2]{4,3,2,1,0} %bitcast.14.0), window={size=1x2x2 stride=1x2x2 pad=1_1x1_1x1_1}, dim_labels=bf012_oi012->bf012, custom_call_target=\"__cudnn$convForward\""
            )
        );
        assert_eq!(
            text("loop_transpose_fusion").as_deref(),
            Ok(
                "%loop_transpose_fusion = f32[64,128]{1,0} fusion(f32[128,64]{1,0} %param.1), kind=kLoop, calls=%fused_transpose.1"
            )
        );
        assert_eq!(
            text("dot.1").as_deref(),
            Ok(
                "%dot.1 = f32[64,10]{1,0} dot(f32[128,64]{1,0} %param.1, f32[128,10]{1,0} %m), lhs_contracting_dims={0}, rhs_contracting_dims={0}"
            )
        );
        assert_eq!(
            text("param.1").as_deref(),
            Ok("%param.1 = f32[128,64]{1,0} parameter(1)")
        );
        // A scalar's layout is not printed.
        assert_eq!(
            text("tuple.3").as_deref(),
            Ok("%tuple.3 = (f32[64,10]{1,0}, f32[]) tuple(f32[64,10]{1,0} %dot.1, f32[] %s)")
        );
        assert_eq!(
            text("exp").as_deref(),
            Ok("%exp = f32[] exponential(f32[] %s)")
        );
    }

    #[test]
    fn what_is_not_printed_is_named() {
        assert_eq!(text("gte"), Err("get-tuple-element".into()));
        let m = module();
        let mut dot = m.instruction("dot.1").cloned().unwrap_or_default();
        dot.precision_config = Some(PrecisionConfig {
            operand_precision: vec![2, 2],
            algorithm: 0,
        });
        assert_eq!(expression(&m, &dot), Err("dot".into()));
        let mut p = m.instruction("param.1").cloned().unwrap_or_default();
        p.frontend_attributes = Some(FrontendAttributes {
            map: [("a".to_owned(), "b".to_owned())].into(),
        });
        assert_eq!(
            expression(&m, &p),
            Err("parameter with frontend attributes".into())
        );
        p.frontend_attributes = None;
        if let Some(l) = p.shape.as_mut().and_then(|s| s.layout.as_mut()) {
            l.memory_space = 1;
        }
        assert_eq!(
            expression(&m, &p),
            Err("layouts with tiles, memory spaces or other attributes".into())
        );
    }

    #[test]
    fn long_expressions_are_cut_at_a_million_bytes() {
        let m = module();
        let mut t = m.instruction("tuple.3").cloned().unwrap_or_default();
        t.operand_ids = vec![8; 120_000];
        let text = expression(&m, &t).unwrap_or_default();
        assert_eq!(text.len(), MAX_EXPRESSION_BYTES);
        assert!(text.starts_with("%tuple.3 = ") && !text.ends_with(')'));
    }

    #[test]
    fn custom_call_targets_are_c_escaped() {
        assert_eq!(c_escape("a\"b\\c\n\u{1}$"), "a\\\"b\\\\c\\n\\001$");
    }

    #[test]
    fn source_stacks_from_the_frame_index() {
        let m = module();
        let index = m.proto.stack_frame_index.as_ref();
        assert_eq!(stack_frames(index, 2), "/w/gen.py:23:11\n/w/gen.py:103:4\n");
        assert_eq!(stack_frames(index, 0), "");
        assert_eq!(stack_frames(index, 9), "");
        // A frame its own parent ends after as many frames as the index holds.
        assert_eq!(stack_frames(index, 3).lines().count(), 3);
        let with = |source_file: &str| HloInstructionProto {
            metadata: Some(OpMetadata {
                source_file: source_file.into(),
                source_line: 41,
                stack_frame_id: 2,
                ..OpMetadata::default()
            }),
            ..HloInstructionProto::default()
        };
        // The metadata's file first, with the stack.
        let info = source_info(&m, &with("train.py"));
        assert_eq!(
            (info.file_name.as_str(), info.line_number),
            ("train.py", 41)
        );
        assert_eq!(info.stack_frame, "/w/gen.py:23:11\n/w/gen.py:103:4\n");
        // Else the stack's first frame.
        let info = source_info(&m, &with(""));
        assert_eq!(
            (info.file_name.as_str(), info.line_number),
            ("/w/gen.py", 23)
        );
        // Neither: no file, line -1.
        let info = source_info(&m, &HloInstructionProto::default());
        assert_eq!((info.file_name.as_str(), info.line_number), ("", -1));
        assert!(info.stack_frame.is_empty());
    }
}

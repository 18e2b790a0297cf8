//! What xprof shows of an HLO instruction besides its cost: its expression (the instruction as
//! XLA's printer writes it, `UncachedExpression`: `HloInstruction::ToString` with the metadata,
//! backend config and large constants left out, operands printed with their shapes), XLA's
//! category of it (`HloInstruction::ToCategory`), and its source stack (the frames of the
//! module's stack frame index that its metadata's `stack_frame_id` starts from).
//!
//! The text is `%name = shape opcode(operands), attributes`: shapes print as
//! `f32[5,1024]{1,0:T(8,128)S(5)}` (element type, dimensions with `<=` before a dynamic one, then
//! the layout: minor-to-major order and, after a colon, the tiles `T(..)`, tail padding `L(n)`,
//! index and pointer types `#(..)` `*(..)`, element size `E(n)` and memory space `S(n)`), a scalar
//! with an empty layout prints none, and a tuple is its elements' shapes in parentheses. Each
//! operand prints as `shape %name`; a constant's operand is its value (`{...}` past 10 elements);
//! a parameter's is its number.
//!
//! XLA prints many opcode-specific attributes; this printer knows those of the opcodes
//! [`attributes`] lists (the GPU and TPU profiles at hand run them: fusions, dots, DNN
//! convolution custom calls, slices, windows, comparisons, ...), and refuses any other
//! instruction, or one that carries what it does not print (a sharding, frontend attributes,
//! statistics, control predecessors, an original value, a constant it cannot format), naming
//! it, so that a caller says the text is not reproduced instead of guessing it.

use std::fmt::Write as _;

mod literal;

use super::hlo::xla::{ConvolutionDimensionNumbers, LayoutProto, StackFrameIndexProto};
use super::hlo::{HloInstructionProto, HloModule, ShapeProto};
use literal::literal_elements;

/// `kMaxHlolNameSize`: xprof cuts an expression at a million bytes.
pub(crate) const MAX_EXPRESSION_BYTES: usize = 1_000_000;

/// The most elements a constant may have and still print its value.
const MAX_PRINTED_ELEMENTS: usize = 10;

/// XLA's `PrimitiveType` numbers of the types printed specially.
const PRED: i32 = 1;
const TUPLE: i32 = 13;
const OPAQUE: i32 = 14;
const TOKEN: i32 = 17;

/// The lower-case name XLA prints for a primitive type.
fn primitive_name(element_type: i32) -> Option<&'static str> {
    Some(match element_type {
        1 => "pred",
        30 => "s1",
        26 => "s2",
        21 => "s4",
        2 => "s8",
        3 => "s16",
        4 => "s32",
        5 => "s64",
        31 => "u1",
        27 => "u2",
        22 => "u4",
        6 => "u8",
        7 => "u16",
        8 => "u32",
        9 => "u64",
        10 => "f16",
        11 => "f32",
        16 => "bf16",
        12 => "f64",
        19 => "f8e5m2",
        28 => "f8e4m3",
        20 => "f8e4m3fn",
        23 => "f8e4m3b11fnuz",
        29 => "f8e3m4",
        24 => "f8e5m2fnuz",
        25 => "f8e4m3fnuz",
        32 => "f4e2m1fn",
        33 => "f8e8m0fnu",
        15 => "c64",
        18 => "c128",
        TUPLE => "tuple",
        OPAQUE => "opaque",
        TOKEN => "token",
        _ => return None,
    })
}

fn is_integral(element_type: i32) -> bool {
    matches!(element_type, 2..=9 | 21 | 22 | 26 | 27 | 30 | 31)
}

/// `Layout::Print`, `None` for the parts it does not print the way XLA does.
fn print_layout(layout: &LayoutProto, out: &mut String) -> Option<()> {
    out.push('{');
    push_joined(out, &layout.minor_to_major, ",");
    let mut colon = false;
    let mut part = |out: &mut String, text: &str| {
        if !colon {
            out.push(':');
            colon = true;
        }
        out.push_str(text);
    };
    if !layout.dim_level_types.is_empty()
        || !layout.split_configs.is_empty()
        || layout.physical_shape.is_some()
    {
        return None;
    }
    if !layout.tiles.is_empty() {
        let mut tiles = String::from("T");
        for tile in &layout.tiles {
            tiles.push('(');
            let dims: Vec<String> = tile
                .dimensions
                .iter()
                // `Tile::kCombineDimension`.
                .map(|d| {
                    if *d == i64::MIN {
                        "*".to_owned()
                    } else {
                        d.to_string()
                    }
                })
                .collect();
            tiles.push_str(&dims.join(","));
            tiles.push(')');
        }
        part(out, &tiles);
    }
    // A layout read from a proto without the alignment has XLA's default, 1.
    if !matches!(layout.tail_padding_alignment_in_elements, 0 | 1) {
        part(
            out,
            &format!("L({})", layout.tail_padding_alignment_in_elements),
        );
    }
    if layout.index_primitive_type != 0 {
        let t = layout.index_primitive_type;
        let name = if is_integral(t) {
            primitive_name(t)?
        } else {
            "invalid"
        };
        part(out, &format!("#({name})"));
    }
    if layout.pointer_primitive_type != 0 {
        let t = layout.pointer_primitive_type;
        let name = if is_integral(t) {
            primitive_name(t)?
        } else {
            "invalid"
        };
        part(out, &format!("*({name})"));
    }
    if layout.element_size_in_bits != 0 {
        part(out, &format!("E({})", layout.element_size_in_bits));
    }
    if layout.memory_space != 0 {
        part(out, &format!("S({})", layout.memory_space));
    }
    if layout.dynamic_shape_metadata_prefix_bytes > 0 {
        part(
            out,
            &format!("M({})", layout.dynamic_shape_metadata_prefix_bytes),
        );
    }
    out.push('}');
    Some(())
}

/// `ShapeUtil::PrintHumanStringWithLayout`.
fn print_shape(shape: &ShapeProto, out: &mut String, depth: usize) -> Option<()> {
    if depth > super::fusion::MAX_FUSION_DEPTH {
        return None;
    }
    if shape.element_type == TUPLE {
        out.push('(');
        for (i, element) in shape.tuple_shapes.iter().enumerate() {
            // Past the cut the rest is never shown.
            if out.len() > MAX_EXPRESSION_BYTES {
                break;
            }
            if i > 0 {
                out.push_str(", ");
            }
            print_shape(element, out, depth + 1)?;
        }
        out.push(')');
        return Some(());
    }
    out.push_str(primitive_name(shape.element_type)?);
    out.push('[');
    if shape.element_type != OPAQUE && shape.element_type != TOKEN {
        for (i, d) in shape.dimensions.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if *d == i64::MIN {
                // `Shape::kUnboundedSize`.
                out.push('?');
                continue;
            }
            if shape.is_dynamic_dimension.get(i).copied().unwrap_or(false) {
                out.push_str("<=");
            }
            out.push_str(&d.to_string());
        }
    }
    out.push(']');
    let Some(layout) = &shape.layout else {
        return Some(());
    };
    if shape.element_type == OPAQUE || shape.element_type == TOKEN {
        return Some(());
    }
    let mut text = String::new();
    print_layout(layout, &mut text)?;
    // A scalar's empty layout is not printed.
    if !(shape.dimensions.is_empty() && text == "{}") {
        out.push_str(&text);
    }
    Some(())
}

fn push_joined<T: ToString>(out: &mut String, items: &[T], sep: &str) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(&item.to_string());
    }
}

/// A constant's operand text: its value when it has at most [`MAX_PRINTED_ELEMENTS`] elements
/// and at most one dimension, `{...}` when it has more elements or is a tuple.
fn print_constant(instruction: &HloInstructionProto, out: &mut String) -> Option<()> {
    let shape = instruction.shape.as_ref()?;
    let elements = shape
        .dimensions
        .iter()
        .try_fold(1u64, |n, d| n.checked_mul(u64::try_from(*d).ok()?))?;
    let literal = instruction.literal.as_ref();
    if shape.element_type == TUPLE || literal.is_none() || elements > MAX_PRINTED_ELEMENTS as u64 {
        out.push_str("{...}");
        return Some(());
    }
    let values = literal_elements(literal?, shape.element_type)?;
    if values.len() as u64 != elements {
        return None;
    }
    match shape.dimensions.len() {
        0 => out.push_str(values.first()?),
        1 => {
            out.push('{');
            out.push_str(&values.join(", "));
            out.push('}');
        }
        _ => return None,
    }
    Some(())
}

/// The opcodes XLA counts as elementwise (`IsElementwise`) among those without a subclass rule.
fn is_elementwise_opcode(opcode: &str) -> bool {
    matches!(
        opcode,
        "abs"
            | "round-nearest-afz"
            | "round-nearest-even"
            | "ceil"
            | "clz"
            | "convert"
            | "copy"
            | "cosine"
            | "erf"
            | "exponential"
            | "exponential-minus-one"
            | "floor"
            | "imag"
            | "is-finite"
            | "log"
            | "log-plus-one"
            | "not"
            | "negate"
            | "popcnt"
            | "real"
            | "reduce-precision"
            | "rsqrt"
            | "logistic"
            | "sign"
            | "sine"
            | "sqrt"
            | "cbrt"
            | "tan"
            | "tanh"
            | "add"
            | "atan2"
            | "compare"
            | "complex"
            | "divide"
            | "maximum"
            | "minimum"
            | "multiply"
            | "power"
            | "remainder"
            | "subtract"
            | "and"
            | "or"
            | "xor"
            | "shift-left"
            | "shift-right-arithmetic"
            | "shift-right-logical"
            | "stochastic-convert"
            | "select"
            | "clamp"
            | "constant"
            | "rng"
            | "map"
    )
}

/// `HloInstruction::ToCategory`: fusions by kind, data movement ops as "data formatting",
/// elementwise ops as "non-fusion elementwise", every other instruction its opcode. A
/// bitcast-convert between types of different widths is not elementwise (XLA's rule); it is
/// named by its opcode here only when the widths match.
pub(crate) fn category(module: &HloModule, instruction: &HloInstructionProto) -> String {
    let opcode = instruction.opcode.as_str();
    match opcode {
        "fusion" => super::hlo::category(instruction),
        "transpose" | "copy" | "reshape" | "dynamic-reshape" => "data formatting".to_owned(),
        "bitcast-convert" => {
            let width = |t: i32| bit_width(t);
            let from = instruction
                .operand_ids
                .first()
                .and_then(|id| module.instruction_by_id(*id))
                .and_then(|o| o.shape.as_ref())
                .map(|s| s.element_type);
            let to = instruction.shape.as_ref().map(|s| s.element_type);
            match (from, to) {
                (Some(f), Some(t)) if width(f).is_some() && width(f) == width(t) => {
                    "non-fusion elementwise".to_owned()
                }
                _ => opcode.to_owned(),
            }
        }
        _ if is_elementwise_opcode(opcode) => "non-fusion elementwise".to_owned(),
        _ => opcode.to_owned(),
    }
}

/// `primitive_util::BitWidth`.
fn bit_width(element_type: i32) -> Option<u32> {
    Some(match element_type {
        1 | 2 | 6 | 19..=20 | 23..=25 | 28 | 29 | 33 => 8,
        30 | 31 => 1,
        26 | 27 => 2,
        21 | 22 | 32 => 4,
        3 | 7 | 10 | 16 => 16,
        4 | 8 | 11 => 32,
        5 | 9 | 12 | 15 => 64,
        18 => 128,
        _ => return None,
    })
}

/// `{a,b,c}` of a list of dimensions.
fn braces(dims: &[i64]) -> String {
    let mut s = String::from("{");
    push_joined(&mut s, dims, ",");
    s.push('}');
    s
}

/// The attributes XLA prints after the operands of the opcodes covered, `None` for any other.
fn attributes(module: &HloModule, instruction: &HloInstructionProto) -> Option<Vec<String>> {
    let called = |i: usize| -> Option<String> {
        let id = instruction.called_computation_ids.get(i)?;
        Some(format!("%{}", module.computation(*id)?.name))
    };
    let no_calls = instruction.called_computation_ids.is_empty();
    let opcode = instruction.opcode.as_str();
    let attrs = match opcode {
        "broadcast" | "transpose" | "reverse" | "concatenate" if no_calls => {
            vec![format!("dimensions={}", braces(&instruction.dimensions))]
        }
        "reduce" if instruction.called_computation_ids.len() == 1 => vec![
            format!("dimensions={}", braces(&instruction.dimensions)),
            format!("to_apply={}", called(0)?),
        ],
        "fusion" if instruction.called_computation_ids.len() == 1 => {
            vec![
                format!("kind={}", instruction.fusion_kind),
                format!("calls={}", called(0)?),
            ]
        }
        "dot" if no_calls => {
            if !default_precision(instruction) {
                return None;
            }
            let d = instruction
                .dot_dimension_numbers
                .clone()
                .unwrap_or_default();
            let mut v = Vec::new();
            if !d.lhs_batch_dimensions.is_empty() {
                v.push(format!(
                    "lhs_batch_dims={}",
                    braces(&d.lhs_batch_dimensions)
                ));
            }
            v.push(format!(
                "lhs_contracting_dims={}",
                braces(&d.lhs_contracting_dimensions)
            ));
            if !d.rhs_batch_dimensions.is_empty() {
                v.push(format!(
                    "rhs_batch_dims={}",
                    braces(&d.rhs_batch_dimensions)
                ));
            }
            v.push(format!(
                "rhs_contracting_dims={}",
                braces(&d.rhs_contracting_dimensions)
            ));
            v
        }
        "reduce-window" if instruction.called_computation_ids.len() == 1 => vec![
            format!("window={{{}}}", window(instruction.window.as_ref()?)),
            format!("to_apply={}", called(0)?),
        ],
        "get-tuple-element" if no_calls => vec![format!("index={}", instruction.tuple_index)],
        "iota" if no_calls && instruction.dimensions.len() == 1 => {
            vec![format!(
                "iota_dimension={}",
                instruction.dimensions.first()?
            )]
        }
        "slice" if no_calls => {
            // The strides print only when one of them is not 1.
            let dims = &instruction.slice_dimensions;
            let strides = dims.iter().any(|d| d.stride != 1);
            let parts: Vec<String> = dims
                .iter()
                .map(|d| {
                    if strides {
                        format!("[{}:{}:{}]", d.start, d.limit, d.stride)
                    } else {
                        format!("[{}:{}]", d.start, d.limit)
                    }
                })
                .collect();
            vec![format!("slice={{{}}}", parts.join(", "))]
        }
        "dynamic-slice" if no_calls => vec![format!(
            "dynamic_slice_sizes={}",
            braces(&instruction.dynamic_slice_sizes)
        )],
        "reduce-precision" if no_calls => vec![
            format!("exponent_bits={}", instruction.exponent_bits),
            format!("mantissa_bits={}", instruction.mantissa_bits),
        ],
        "compare" if no_calls => {
            // The comparison type prints only when it is not the default of the operands' type,
            // which this printer does not judge: only the default (or none) is covered.
            let operand_type = instruction
                .operand_ids
                .first()
                .and_then(|id| module.instruction_by_id(*id))
                .and_then(|o| o.shape.as_ref())
                .map(|s| s.element_type)?;
            let default = match operand_type {
                10 | 11 | 12 | 16 | 19..=20 | 23..=25 | 28 | 29 | 32 | 33 => "FLOAT",
                2..=5 | 21 | 26 | 30 => "SIGNED",
                1 | 6..=9 | 22 | 27 | 31 => "UNSIGNED",
                _ => return None,
            };
            if !(instruction.comparison_type.is_empty() || instruction.comparison_type == default) {
                return None;
            }
            let direction = instruction.comparison_direction.as_str();
            if !matches!(direction, "EQ" | "NE" | "GE" | "GT" | "LE" | "LT") {
                return None;
            }
            vec![format!("direction={direction}")]
        }
        "custom-call"
            if no_calls
                && default_precision(instruction)
                && instruction.padding_type == 0
                && !instruction.constrain_layout
                && instruction.literal.is_none()
                && instruction.custom_call_schedule == 0
                && instruction.custom_call_api_version == 1 =>
        {
            let mut v = Vec::new();
            if let Some(w) = instruction
                .window
                .as_ref()
                .filter(|w| !w.dimensions.is_empty())
            {
                v.push(format!("window={{{}}}", window(w)));
            }
            if let Some(d) = &instruction.convolution_dimension_numbers {
                v.push(format!("dim_labels={}", dim_labels(d)?));
            }
            if instruction.feature_group_count > 1 {
                v.push(format!(
                    "feature_group_count={}",
                    instruction.feature_group_count
                ));
            }
            if instruction.batch_group_count > 1 {
                v.push(format!(
                    "batch_group_count={}",
                    instruction.batch_group_count
                ));
            }
            v.push(format!(
                "custom_call_target=\"{}\"",
                c_escape(&instruction.custom_call_target)
            ));
            if instruction.custom_call_has_side_effect {
                v.push("custom_call_has_side_effect=true".to_owned());
            }
            v
        }
        "copy-start" if no_calls => {
            if instruction.is_cross_program_prefetch {
                return None;
            }
            vec![]
        }
        _ if no_calls && has_no_attributes(opcode) => vec![],
        _ => return None,
    };
    Some(attrs)
}

/// Whether the instruction's precision config is XLA's default (which the printer leaves out).
fn default_precision(instruction: &HloInstructionProto) -> bool {
    instruction
        .precision_config
        .as_ref()
        .is_none_or(|p| p.algorithm == 0 && p.operand_precision.iter().all(|x| *x == 0))
}

/// `ConvolutionDimensionNumbersToString`: `bf01_oi01->bf01`, `None` for numbers out of range.
fn dim_labels(d: &ConvolutionDimensionNumbers) -> Option<String> {
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
    )?;
    let rhs = part(
        (d.kernel_output_feature_dimension, 'o'),
        (d.kernel_input_feature_dimension, 'i'),
        &d.kernel_spatial_dimensions,
    )?;
    let out = part(
        (d.output_batch_dimension, 'b'),
        (d.output_feature_dimension, 'f'),
        &d.output_spatial_dimensions,
    )?;
    Some(format!("{lhs}_{rhs}->{out}"))
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

/// `window_util::ToString`: the sizes, then the strides, paddings, dilations and reversals that
/// are not the default, each joined by `x`.
fn window(w: &super::hlo::xla::Window) -> String {
    let dims = &w.dimensions;
    let join = |f: &dyn Fn(&super::hlo::xla::WindowDimension) -> String| -> String {
        dims.iter().map(f).collect::<Vec<_>>().join("x")
    };
    let mut s = format!("size={}", join(&|d| d.size.to_string()));
    if dims.iter().any(|d| d.stride != 1) {
        s.push_str(&format!(" stride={}", join(&|d| d.stride.to_string())));
    }
    if dims
        .iter()
        .any(|d| d.padding_low != 0 || d.padding_high != 0)
    {
        s.push_str(&format!(
            " pad={}",
            join(&|d| format!("{}_{}", d.padding_low, d.padding_high))
        ));
    }
    if dims.iter().any(|d| d.base_dilation != 1) {
        s.push_str(&format!(
            " lhs_dilate={}",
            join(&|d| d.base_dilation.to_string())
        ));
    }
    if dims.iter().any(|d| d.window_dilation != 1) {
        s.push_str(&format!(
            " rhs_dilate={}",
            join(&|d| d.window_dilation.to_string())
        ));
    }
    if dims.iter().any(|d| d.window_reversal) {
        s.push_str(&format!(
            " rhs_reversal={}",
            join(&|d| u8::from(d.window_reversal).to_string())
        ));
    }
    s
}

/// The opcodes XLA prints without attributes of their own.
fn has_no_attributes(opcode: &str) -> bool {
    opcode != "map"
        && opcode != "rng"
        && opcode != "constant"
        && (is_elementwise_opcode(opcode)
            || matches!(
                opcode,
                "bitcast"
                    | "bitcast-convert"
                    | "reshape"
                    | "tuple"
                    | "dynamic-update-slice"
                    | "copy-done"
                    | "add-dependency"
                    | "optimization-barrier"
            ))
}

/// The HLO text xprof stores as the expression of `instruction` (`UncachedExpression`), or
/// what XLA's printer would show of it that this one does not print (the opcode, or the opcode
/// with what it carries).
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
    let shapes = || format!("{op} of shapes or layouts it does not print");
    let mut out = format!("%{} = ", instruction.name);
    print_shape(instruction.shape.as_ref().ok_or_else(shapes)?, &mut out, 0).ok_or_else(shapes)?;
    out.push(' ');
    out.push_str(op);
    out.push('(');
    match op {
        "constant" => print_constant(instruction, &mut out)
            .ok_or_else(|| format!("{op} of a value it does not format"))?,
        "parameter" => out.push_str(&instruction.parameter_number.to_string()),
        _ => {
            for (i, id) in instruction.operand_ids.iter().enumerate() {
                // Past the cut the rest is never shown.
                if out.len() > MAX_EXPRESSION_BYTES {
                    break;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                let operand = module
                    .instruction_by_id(*id)
                    .ok_or_else(|| format!("{op} of an operand the module does not hold"))?;
                print_shape(operand.shape.as_ref().ok_or_else(shapes)?, &mut out, 0)
                    .ok_or_else(shapes)?;
                out.push_str(" %");
                out.push_str(&operand.name);
            }
        }
    }
    out.push(')');
    let attrs = if matches!(op, "constant" | "parameter") {
        if !instruction.called_computation_ids.is_empty() {
            return Err(op.to_owned());
        }
        Vec::new()
    } else {
        attributes(module, instruction).ok_or_else(|| op.to_owned())?
    };
    for a in attrs {
        out.push_str(", ");
        out.push_str(&a);
    }
    // xprof keeps the first million bytes; a character cut there is left out whole.
    if out.len() > MAX_EXPRESSION_BYTES {
        let mut cut = MAX_EXPRESSION_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    Ok(out)
}

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
        FrontendAttributes, OpMetadata, PrecisionConfig, StackFrameIndexProto, Window,
        WindowDimension,
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
        assert_eq!(
            text("gte").as_deref(),
            Ok("%gte = f32[] get-tuple-element((f32[64,10]{1,0}, f32[]) %tuple.3), index=0")
        );
    }

    #[test]
    fn what_is_not_printed_is_named() {
        let m = module();
        let mut sorted = m.instruction("exp").cloned().unwrap_or_default();
        sorted.opcode = "sort".into();
        assert_eq!(expression(&m, &sorted), Err("sort".into()));
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
            expression(&m, &p).as_deref(),
            Ok("%param.1 = f32[128,64]{1,0:S(1)} parameter(1)")
        );
        if let Some(l) = p.shape.as_mut().and_then(|s| s.layout.as_mut()) {
            l.split_configs = vec![Default::default()];
        }
        assert_eq!(
            expression(&m, &p),
            Err("parameter of shapes or layouts it does not print".into())
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

#[cfg(test)]
mod printer_tests {
    use super::*;

    fn module(instructions: Vec<HloInstructionProto>) -> HloModule {
        HloModule::new(super::super::hlo::HloModuleProto {
            computations: vec![super::super::hlo::xla::HloComputationProto {
                id: 1,
                name: "c".into(),
                instructions,
                ..Default::default()
            }],
            ..Default::default()
        })
    }

    fn f32_shape(dims: &[i64]) -> ShapeProto {
        ShapeProto {
            element_type: 11,
            dimensions: dims.to_vec(),
            layout: Some(Box::new(LayoutProto {
                minor_to_major: (0..dims.len() as i64).rev().collect(),
                ..LayoutProto::default()
            })),
            ..ShapeProto::default()
        }
    }

    fn ins(
        id: i64,
        name: &str,
        opcode: &str,
        dims: &[i64],
        operands: &[i64],
    ) -> HloInstructionProto {
        HloInstructionProto {
            id,
            name: name.into(),
            opcode: opcode.into(),
            shape: Some(f32_shape(dims)),
            operand_ids: operands.to_vec(),
            ..HloInstructionProto::default()
        }
    }

    #[test]
    fn attributes_of_slices_dots_and_windows() {
        use super::super::hlo::xla::{
            DotDimensionNumbers, PrecisionConfig, Window, WindowDimension,
            hlo_instruction_proto::SliceDimensions,
        };
        let p = ins(1, "p", "parameter", &[4, 8], &[]);
        let slice = |stride| HloInstructionProto {
            slice_dimensions: vec![
                SliceDimensions {
                    start: 0,
                    limit: 4,
                    stride,
                },
                SliceDimensions {
                    start: 1,
                    limit: 8,
                    stride: 1,
                },
            ],
            ..ins(2, "slice.1", "slice", &[2, 7], &[1])
        };
        let dot = HloInstructionProto {
            dot_dimension_numbers: Some(DotDimensionNumbers {
                lhs_contracting_dimensions: vec![1],
                rhs_contracting_dimensions: vec![1],
                lhs_batch_dimensions: vec![],
                rhs_batch_dimensions: vec![],
            }),
            ..ins(3, "dot.1", "dot", &[4, 4], &[1, 1])
        };
        let window = HloInstructionProto {
            window: Some(Window {
                dimensions: vec![
                    WindowDimension {
                        size: 2,
                        stride: 2,
                        padding_low: 1,
                        padding_high: 0,
                        window_dilation: 1,
                        base_dilation: 1,
                        window_reversal: false,
                    },
                    WindowDimension {
                        size: 8,
                        stride: 1,
                        padding_low: 0,
                        padding_high: 0,
                        window_dilation: 1,
                        base_dilation: 1,
                        window_reversal: false,
                    },
                ],
            }),
            called_computation_ids: vec![1],
            ..ins(4, "reduce-window.1", "reduce-window", &[3, 1], &[1, 1])
        };
        let m = module(vec![p, slice(1), dot.clone(), window]);
        let text = |i: usize| expression(&m, &m.proto.computations[0].instructions[i]);
        assert_eq!(
            text(1).unwrap(),
            "%slice.1 = f32[2,7]{1,0} slice(f32[4,8]{1,0} %p), slice={[0:4], [1:8]}"
        );
        assert_eq!(
            text(2).unwrap(),
            "%dot.1 = f32[4,4]{1,0} dot(f32[4,8]{1,0} %p, f32[4,8]{1,0} %p), lhs_contracting_dims={1}, rhs_contracting_dims={1}"
        );
        assert_eq!(
            text(3).unwrap(),
            "%reduce-window.1 = f32[3,1]{1,0} reduce-window(f32[4,8]{1,0} %p, f32[4,8]{1,0} %p), window={size=2x8 stride=2x1 pad=1_0x0_0}, to_apply=%c"
        );
        // A stride other than 1 prints every stride.
        let m = module(vec![ins(1, "p", "parameter", &[4, 8], &[]), slice(2)]);
        assert!(
            expression(&m, &m.proto.computations[0].instructions[1])
                .unwrap()
                .ends_with("slice={[0:4:2], [1:8:1]}")
        );
        // What is not printed is refused: a precision config, an unknown opcode.
        let precise = HloInstructionProto {
            precision_config: Some(PrecisionConfig {
                operand_precision: vec![2, 2],
                algorithm: 0,
            }),
            ..dot
        };
        let m = module(vec![
            ins(1, "p", "parameter", &[4, 8], &[]),
            precise,
            ins(5, "x", "custom-call", &[1], &[1]),
        ]);
        assert_eq!(
            expression(&m, &m.proto.computations[0].instructions[1]),
            Err("dot".into())
        );
        assert_eq!(
            expression(&m, &m.proto.computations[0].instructions[2]),
            Err("custom-call".into())
        );
    }
}

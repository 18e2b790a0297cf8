//! The HLO text of an instruction as xprof prints it for an op's expression
//! (`UncachedExpression`: XLA's `HloInstruction::ToString` with the metadata, backend config and
//! large constants left out, operands printed with their shapes), and XLA's category of an
//! instruction (`HloInstruction::ToCategory`).
//!
//! The text is `%name = shape opcode(operands), attributes`: shapes print as
//! `f32[5,1024]{1,0:T(8,128)S(5)}` (element type, dimensions with `<=` before a dynamic one, then
//! the layout: minor-to-major order and, after a colon, the tiles `T(..)`, tail padding `L(n)`,
//! index and pointer types `#(..)` `*(..)`, element size `E(n)` and memory space `S(n)`), a scalar
//! with an empty layout prints none, and a tuple is its elements' shapes in parentheses. Each
//! operand prints as `shape %name`; a constant's operand is its value (`{...}` past 10 elements).
//!
//! XLA prints many opcode-specific attributes; this printer knows those of the opcodes in
//! [`expression`]'s list, and gives `None` for any other instruction, or one that carries what it
//! does not print (sharding, frontend attributes, statistics, control predecessors, an original
//! value, a constant it cannot format), so that a caller can say the text is not reproduced
//! instead of guessing it.

mod literal;

use super::hlo::xla::LayoutProto;
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
        || !layout.physical_shape.is_empty()
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
            if !instruction
                .precision_config
                .as_ref()
                .is_none_or(|p| p.algorithm == 0 && p.operand_precision.iter().all(|x| *x == 0))
            {
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
/// `None` when the instruction has what this printer does not reproduce.
pub(crate) fn expression(module: &HloModule, instruction: &HloInstructionProto) -> Option<String> {
    if !instruction.control_predecessor_ids.is_empty()
        || !instruction.sharding.is_empty()
        || !instruction.frontend_attributes.is_empty()
        || !instruction.statistics_viz.is_empty()
        || !instruction.original_value.is_empty()
    {
        return None;
    }
    let mut out = format!("%{} = ", instruction.name);
    print_shape(instruction.shape.as_ref()?, &mut out, 0)?;
    out.push(' ');
    out.push_str(&instruction.opcode);
    out.push('(');
    match instruction.opcode.as_str() {
        "constant" => print_constant(instruction, &mut out)?,
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
                let operand = module.instruction_by_id(*id)?;
                print_shape(operand.shape.as_ref()?, &mut out, 0)?;
                out.push_str(" %");
                out.push_str(&operand.name);
            }
        }
    }
    out.push(')');
    let attrs = if matches!(instruction.opcode.as_str(), "constant" | "parameter") {
        if !instruction.called_computation_ids.is_empty() {
            return None;
        }
        Vec::new()
    } else {
        attributes(module, instruction)?
    };
    for a in attrs {
        out.push_str(", ");
        out.push_str(&a);
    }
    if out.len() > MAX_EXPRESSION_BYTES {
        let mut cut = MAX_EXPRESSION_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
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
            layout: Some(LayoutProto {
                minor_to_major: (0..dims.len() as i64).rev().collect(),
                ..LayoutProto::default()
            }),
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
        assert!(expression(&m, &m.proto.computations[0].instructions[1]).is_none());
        assert!(expression(&m, &m.proto.computations[0].instructions[2]).is_none());
    }
}

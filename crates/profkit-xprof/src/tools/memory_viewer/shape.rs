//! XLA shapes as the memory viewer shows them: `ShapeUtil::HumanStringWithLayout` (a tuple's
//! elements in parentheses, every fifth marked `/*index=N*/`; an array's element type,
//! dimensions, then the layout in braces: minor-to-major order, and after a colon its tiles
//! `T(8,128)`, tail padding `L(n)`, element size `E(bits)`, memory space `S(n)`, dynamic metadata
//! `M(n)`), and a buffer's unpadded size (`ShapeUtil::ByteSizeOf` of the shape with its default
//! layout and 8-byte pointers: elements times the type's width, a pointer per tuple element).
//!
//! The parts of a layout XLA prints that no real file has shown (dimension level types `D(...)`,
//! index and pointer types `#(...)` `*(...)`, a physical shape `P(...)`, split configs `SC(...)`)
//! are named as not reproduced rather than guessed, and so is the unpadded size of a sub-byte
//! type or of a dynamic shape.

use std::fmt::Write as _;

use crate::op_stats::hlo::xla::{LayoutProto, ShapeProto};

/// XLA's `PrimitiveType` numbers that name a tuple, an opaque value and a token.
const TUPLE: i32 = 13;
const OPAQUE: i32 = 14;
const TOKEN: i32 = 17;

/// XLA's `Tile::kCombineDimension`, printed `*`.
const COMBINE_DIMENSION: i64 = i64::MIN;

/// How deep a shape's tuples may nest before it is not printed (XLA's shapes nest a few levels).
const MAX_DEPTH: usize = 64;

/// An element type's lowercase name (`primitive_util::LowercasePrimitiveTypeName`) and byte width
/// (0 for the types without a whole-byte width, or none).
fn primitive(t: i32) -> (&'static str, u64) {
    match t {
        1 => ("pred", 1),
        2 => ("s8", 1),
        3 => ("s16", 2),
        4 => ("s32", 4),
        5 => ("s64", 8),
        6 => ("u8", 1),
        7 => ("u16", 2),
        8 => ("u32", 4),
        9 => ("u64", 8),
        10 => ("f16", 2),
        11 => ("f32", 4),
        12 => ("f64", 8),
        TUPLE => ("tuple", 0),
        OPAQUE => ("opaque", 0),
        15 => ("c64", 8),
        16 => ("bf16", 2),
        TOKEN => ("token", 0),
        18 => ("c128", 16),
        19 => ("f8e5m2", 1),
        20 => ("f8e4m3fn", 1),
        21 => ("s4", 0),
        22 => ("u4", 0),
        23 => ("f8e4m3b11fnuz", 1),
        24 => ("f8e5m2fnuz", 1),
        25 => ("f8e4m3fnuz", 1),
        26 => ("s2", 0),
        27 => ("u2", 0),
        28 => ("f8e4m3", 1),
        29 => ("f8e3m4", 1),
        30 => ("f4e2m1fn", 0),
        31 => ("f8e8m0fnu", 1),
        _ => ("invalid", 0),
    }
}

/// `ShapeUtil::HumanStringWithLayout` of a shape; what of it is not reproduced goes to `missing`.
pub(super) fn human_string(shape: &ShapeProto, missing: &mut Vec<String>) -> String {
    let mut out = String::new();
    print(shape, &mut out, missing, 0);
    out
}

fn print(shape: &ShapeProto, out: &mut String, missing: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH {
        note(missing, "shapes nesting deeper than 64 tuples");
        return;
    }
    if shape.element_type == TUPLE {
        out.push('(');
        for (i, element) in shape.tuple_shapes.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
                // XLA marks every fifth element's index.
                if i % 5 == 0 {
                    let _ = write!(out, "/*index={i}*/");
                }
            }
            print(element, out, missing, depth + 1);
        }
        out.push(')');
        return;
    }
    let (name, _) = primitive(shape.element_type);
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
    if matches!(shape.element_type, OPAQUE | TOKEN) {
        return;
    }
    let Some(layout) = &shape.layout else {
        return;
    };
    let text = layout_string(layout, missing);
    // A scalar's bare `{}` is not printed.
    if !(shape.dimensions.is_empty() && text == "{}") {
        out.push_str(&text);
    }
}

/// `Layout::ToString`.
fn layout_string(layout: &LayoutProto, missing: &mut Vec<String>) -> String {
    let mut out = String::from("{");
    for (i, d) in layout.minor_to_major.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{d}");
    }
    let mut parts = String::new();
    if !layout.dim_level_types.is_empty() {
        note(missing, "layouts' dimension level types");
    }
    if !layout.tiles.is_empty() {
        parts.push('T');
        for tile in &layout.tiles {
            parts.push('(');
            for (i, d) in tile.dimensions.iter().enumerate() {
                if i > 0 {
                    parts.push(',');
                }
                if *d == COMBINE_DIMENSION {
                    parts.push('*');
                } else {
                    let _ = write!(parts, "{d}");
                }
            }
            parts.push(')');
        }
    }
    let tail = layout.tail_padding_alignment_in_elements;
    if tail != 0 && tail != 1 {
        let _ = write!(parts, "L({tail})");
    }
    if layout.index_primitive_type != 0 || layout.pointer_primitive_type != 0 {
        note(missing, "layouts' index and pointer types");
    }
    if layout.element_size_in_bits != 0 {
        let _ = write!(parts, "E({})", layout.element_size_in_bits);
    }
    if layout.memory_space != 0 {
        let _ = write!(parts, "S({})", layout.memory_space);
    }
    if layout.physical_shape.is_some() {
        note(missing, "layouts' physical shapes");
    }
    if layout.dynamic_shape_metadata_prefix_bytes > 0 {
        let _ = write!(parts, "M({})", layout.dynamic_shape_metadata_prefix_bytes);
    }
    if !parts.is_empty() {
        out.push(':');
        out.push_str(&parts);
    }
    out.push('}');
    out
}

/// The unpadded size of a shape: `ShapeUtil::ByteSizeOf` with its default layout and 8-byte
/// pointers, wrapping as XLA's 64-bit arithmetic does.
pub(super) fn unpadded_size(shape: &ShapeProto, missing: &mut Vec<String>) -> i64 {
    match shape.element_type {
        TUPLE => 8_i64.wrapping_mul(shape.tuple_shapes.len() as i64),
        TOKEN => 0,
        OPAQUE => 8,
        t => {
            if shape.is_dynamic_dimension.iter().any(|d| *d) {
                note(missing, "unpadded sizes of dynamic shapes");
            }
            let (_, width) = primitive(t);
            if width == 0 {
                note(missing, "unpadded sizes of sub-byte element types");
            }
            shape
                .dimensions
                .iter()
                .fold(width as i64, |n, d| n.wrapping_mul(*d))
        }
    }
}

/// The shape a logical buffer holds: the instruction's shape, or its tuple element at the last
/// index of the buffer's shape index (xprof's `ResolveShapeIndex`, which reads only that one).
pub(super) fn resolve_index<'a>(shape: &'a ShapeProto, index: &[i64]) -> &'a ShapeProto {
    match index.last() {
        Some(&i) if i >= 0 => usize::try_from(i)
            .ok()
            .and_then(|i| shape.tuple_shapes.get(i))
            .unwrap_or(shape),
        _ => shape,
    }
}

/// Adds a "not reproduced" part once.
pub(super) fn note(missing: &mut Vec<String>, what: &str) {
    if !missing.iter().any(|m| m == what) {
        missing.push(what.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op_stats::hlo::xla::TileProto;

    fn array(t: i32, dims: &[i64], layout: Option<LayoutProto>) -> ShapeProto {
        ShapeProto {
            element_type: t,
            dimensions: dims.to_vec(),
            layout: layout.map(Box::new),
            ..ShapeProto::default()
        }
    }

    #[test]
    fn tpu_layouts() {
        let layout = LayoutProto {
            minor_to_major: vec![3, 2, 1, 0],
            tiles: vec![TileProto {
                dimensions: vec![8, 128],
            }],
            tail_padding_alignment_in_elements: 1,
            memory_space: 5,
            ..LayoutProto::default()
        };
        let mut missing = Vec::new();
        let shape = array(11, &[5, 1024, 1024, 256], Some(layout));
        assert_eq!(
            human_string(&shape, &mut missing),
            "f32[5,1024,1024,256]{3,2,1,0:T(8,128)S(5)}"
        );
        let scalar = array(4, &[], Some(LayoutProto::default()));
        let tuple = ShapeProto {
            element_type: TUPLE,
            tuple_shapes: vec![scalar.clone(), array(17, &[], None)],
            ..ShapeProto::default()
        };
        assert_eq!(human_string(&tuple, &mut missing), "(s32[], token[])");
        assert_eq!(unpadded_size(&tuple, &mut missing), 16);
        assert_eq!(unpadded_size(&shape, &mut missing), 5 << 30);
        assert!(missing.is_empty());
    }
}

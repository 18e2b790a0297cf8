//! The names xprof gives TensorFlow's data types in a memory profile (its `DataTypeString`): the
//! `data_type` stat of an allocation is a `DataType` enum value.

/// TensorFlow's offset of the reference types (`DT_FLOAT_REF` is `DT_FLOAT` plus this).
const REF_OFFSET: i32 = 100;

/// The name of data type `value`: reference types end in `_ref`, unknown values are named with
/// their number.
pub(super) fn name(value: i32) -> String {
    if value > REF_OFFSET {
        return format!("{}_ref", base(value - REF_OFFSET));
    }
    base(value)
}

fn base(value: i32) -> String {
    let name = match value {
        0 => "INVALID",
        1 => "float",
        2 => "double",
        3 => "int32",
        4 => "uint8",
        5 => "int16",
        6 => "int8",
        7 => "string",
        8 => "complex64",
        9 => "int64",
        10 => "bool",
        11 => "qint8",
        12 => "quint8",
        13 => "qint32",
        14 => "bfloat16",
        15 => "qint16",
        16 => "quint16",
        17 => "uint16",
        18 => "complex128",
        19 => "half",
        20 => "resource",
        21 => "variant",
        22 => "uint32",
        23 => "uint64",
        24 => "float8_e5m2",
        25 => "float8_e4m3fn",
        26 => "float8_e4m3fnuz",
        27 => "float8_e4m3b11fnuz",
        28 => "float8_e5m2fnuz",
        29 => "int4",
        30 => "uint4",
        _ => return format!("unknown dtype enum ({value})"),
    };
    name.to_owned()
}

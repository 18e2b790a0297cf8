//! Builds XSpace messages from fuzzer bytes.
//!
//! The prost types do not derive `Arbitrary`, and uniform bytes would rarely produce the cases
//! that matter, so each field is drawn from a distribution tilted toward them: small ids that
//! resolve (and some that do not), the edges of `i64`, every stat value kind, oneofs set to zero
//! (which differ on the wire from an unset oneof), aggregated events, NaN payloads and signed
//! zeros, and metadata maps whose key differs from the `id` inside the value.

use arbitrary::{Arbitrary, Result, Unstructured};
use profkit_xplane::{
    XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat,
};

/// Repeated fields hold at most this many elements, so that short inputs reach deep messages.
const MAX_REPEATED: u32 = 4;

/// Signed integers a fuzzer would take long to hit by chance: the edges where `* 1000` (ns to
/// ps) and `+ offset` stop fitting, and the ids profkit gives a meaning.
const EDGE_I64: [i64; 12] = [
    0,
    1,
    -1,
    1000,
    i64::MIN,
    i64::MIN + 1,
    i64::MAX,
    i64::MAX - 1,
    i64::MAX / 1000,
    i64::MAX / 1000 + 1,
    i64::MIN / 1000,
    i64::MIN / 1000 - 1,
];

/// Doubles that break naive comparisons or text round trips.
const EDGE_F64: [f64; 12] = [
    0.0,
    -0.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MIN_POSITIVE,
    5e-324,
    f64::MAX,
    f64::MIN,
    f64::EPSILON,
    0.1,
    1e21,
];

/// Names that repeat often enough for interning and merging by name to be exercised.
const NAMES: [&str; 10] = [
    "",
    "step",
    "matmul",
    "tf_op",
    "flops",
    "/host:CPU",
    "/device:GPU:0",
    "_counters_",
    "é\u{0}\u{1F600}",
    "step_num",
];

/// How many elements a repeated field gets.
pub fn count(u: &mut Unstructured<'_>) -> Result<usize> {
    Ok(u.int_in_range(0..=MAX_REPEATED)? as usize)
}

/// A signed integer: often a small id, sometimes an edge value, otherwise anything.
pub fn int(u: &mut Unstructured<'_>) -> Result<i64> {
    Ok(match u.int_in_range(0..=7u8)? {
        0..=2 => u.int_in_range(0..=6)?,
        3 | 4 => *u.choose(&EDGE_I64)?,
        _ => i64::arbitrary(u)?,
    })
}

/// An unsigned integer, tilted like [`int`] (including ids that do not fit in `i64`).
pub fn uint(u: &mut Unstructured<'_>) -> Result<u64> {
    Ok(match u.int_in_range(0..=7u8)? {
        0..=2 => u.int_in_range(0..=6)?,
        3 => *u.choose(&[u64::MAX, 1 << 63, (1 << 63) - 1])?,
        _ => u64::arbitrary(u)?,
    })
}

/// A double: an edge value, any bit pattern (NaN payloads included), or a short decimal.
pub fn double(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => *u.choose(&EDGE_F64)?,
        1 => f64::from_bits(u64::arbitrary(u)?),
        _ => f64::from(i32::arbitrary(u)?) / f64::from(u.int_in_range(1..=10_000)?),
    })
}

/// A string: mostly from a small set of names, otherwise any UTF-8.
pub fn string(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(3, 4)? {
        Ok((*u.choose(&NAMES)?).to_owned())
    } else {
        String::arbitrary(u)
    }
}

/// Opaque bytes.
pub fn bytes(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    Vec::<u8>::arbitrary(u)
}

/// A stat with any value kind, or none.
pub fn stat(u: &mut Unstructured<'_>) -> Result<XStat> {
    let metadata_id = int(u)?;
    let value = match u.int_in_range(0..=6u8)? {
        0 => None,
        1 => Some(x_stat::Value::DoubleValue(double(u)?)),
        2 => Some(x_stat::Value::Uint64Value(uint(u)?)),
        3 => Some(x_stat::Value::Int64Value(int(u)?)),
        4 => Some(x_stat::Value::StrValue(string(u)?)),
        5 => Some(x_stat::Value::BytesValue(bytes(u)?.into())),
        _ => Some(x_stat::Value::RefValue(uint(u)?)),
    };
    Ok(XStat { metadata_id, value })
}

fn stats(u: &mut Unstructured<'_>) -> Result<Vec<XStat>> {
    (0..count(u)?).map(|_| stat(u)).collect()
}

/// An event: offset or occurrence count (either may be zero, which still sets the oneof), or
/// neither.
pub fn event(u: &mut Unstructured<'_>) -> Result<XEvent> {
    let metadata_id = int(u)?;
    let data = match u.int_in_range(0..=4u8)? {
        0 => None,
        1 => Some(x_event::Data::OffsetPs(0)),
        2 => Some(x_event::Data::OffsetPs(int(u)?)),
        3 => Some(x_event::Data::NumOccurrences(0)),
        _ => Some(x_event::Data::NumOccurrences(int(u)?)),
    };
    Ok(XEvent {
        metadata_id,
        data,
        duration_ps: int(u)?,
        stats: stats(u)?,
    })
}

/// A line with a few events.
pub fn line(u: &mut Unstructured<'_>) -> Result<XLine> {
    Ok(XLine {
        id: int(u)?,
        display_id: int(u)?,
        name: string(u)?,
        display_name: string(u)?,
        timestamp_ns: int(u)?,
        duration_ps: int(u)?,
        events: (0..count(u)?).map(|_| event(u)).collect::<Result<_>>()?,
    })
}

/// An event metadata with stats and children.
pub fn event_metadata(u: &mut Unstructured<'_>) -> Result<XEventMetadata> {
    Ok(XEventMetadata {
        id: int(u)?,
        name: string(u)?,
        display_name: string(u)?,
        metadata: bytes(u)?.into(),
        stats: stats(u)?,
        child_id: (0..count(u)?).map(|_| int(u)).collect::<Result<_>>()?,
    })
}

/// A stat metadata.
pub fn stat_metadata(u: &mut Unstructured<'_>) -> Result<XStatMetadata> {
    Ok(XStatMetadata {
        id: int(u)?,
        name: string(u)?,
        description: string(u)?,
    })
}

/// The map key for a metadata whose value carries `id`: usually `id`, sometimes another.
fn key(u: &mut Unstructured<'_>, id: i64) -> Result<i64> {
    if u.ratio(1, 8)? { int(u) } else { Ok(id) }
}

/// A plane with lines, both metadata maps and plane stats.
pub fn plane(u: &mut Unstructured<'_>) -> Result<XPlane> {
    let mut plane = XPlane {
        id: int(u)?,
        name: string(u)?,
        ..Default::default()
    };
    for _ in 0..count(u)? {
        let md = event_metadata(u)?;
        plane.event_metadata.insert(key(u, md.id)?, md);
    }
    for _ in 0..count(u)? {
        let md = stat_metadata(u)?;
        plane.stat_metadata.insert(key(u, md.id)?, md);
    }
    plane.stats = stats(u)?;
    plane.lines = (0..count(u)?).map(|_| line(u)).collect::<Result<_>>()?;
    Ok(plane)
}

/// A whole space: planes and the space's strings.
pub fn space(u: &mut Unstructured<'_>) -> Result<XSpace> {
    let mut space = XSpace {
        planes: (0..count(u)?).map(|_| plane(u)).collect::<Result<_>>()?,
        ..Default::default()
    };
    for _ in 0..count(u)? {
        let text = string(u)?;
        match u.int_in_range(0..=2u8)? {
            0 => space.errors.push(text),
            1 => space.warnings.push(text),
            _ => space.hostnames.push(text),
        }
    }
    Ok(space)
}

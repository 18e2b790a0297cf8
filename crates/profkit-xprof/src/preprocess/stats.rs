//! Reading and writing the stats preprocessing works with, as TSL's visitors read them.

use profkit_xplane::{XLine, XPlane, XStat, x_stat};

/// The id of the stat metadata named `name`; the smallest if several share it.
pub(crate) fn stat_id(plane: &XPlane, name: &str) -> Option<i64> {
    plane
        .stat_metadata
        .iter()
        .filter(|(_, m)| m.name == name)
        .map(|(id, _)| *id)
        .min()
}

/// TSL's `IntValue`: the `int64_value`, 0 for any other kind.
pub(crate) fn int_value(stat: &XStat) -> i64 {
    match stat.value {
        Some(x_stat::Value::Int64Value(v)) => v,
        _ => 0,
    }
}

pub(crate) fn int_or_uint(stat: &XStat) -> u64 {
    match stat.value {
        Some(x_stat::Value::Uint64Value(v)) => v,
        Some(x_stat::Value::Int64Value(v)) => v as u64,
        _ => 0,
    }
}

/// The start and end of an event in picoseconds as TSL's `Timespan` holds them (unsigned, with
/// the `int64` arithmetic wrapping as it does in practice).
pub(crate) fn timespan(line: &XLine, event: &profkit_xplane::XEvent) -> (u64, u64) {
    let begin = line
        .timestamp_ns
        .wrapping_mul(1000)
        .wrapping_add(event.offset_ps().unwrap_or(0)) as u64;
    (begin, begin.wrapping_add(event.duration_ps as u64))
}

/// Sets the stat with metadata `id` (the first one) or appends it: TSL's `FindOrAddMutableStat`
/// followed by setting the value.
pub(crate) fn set_or_add(stats: &mut Vec<XStat>, id: i64, value: x_stat::Value) {
    match stats.iter_mut().find(|s| s.metadata_id == id) {
        Some(stat) => stat.value = Some(value),
        None => stats.push(XStat {
            metadata_id: id,
            value: Some(value),
        }),
    }
}

pub(crate) fn timespan_end(timestamp_ps: i64, event: &profkit_xplane::XEvent) -> i64 {
    timestamp_ps
        .wrapping_add(event.offset_ps().unwrap_or(0))
        .wrapping_add(event.duration_ps)
}

/// The id of the stat metadata named `name`, created (with the next id) when missing.
pub(crate) fn intern_stat(plane: &mut XPlane, name: &str) -> i64 {
    if let Some(id) = stat_id(plane, name) {
        return id;
    }
    let id = plane
        .stat_metadata
        .keys()
        .copied()
        .max()
        .unwrap_or(0)
        .saturating_add(1);
    plane.stat_metadata.insert(
        id,
        profkit_xplane::XStatMetadata {
            id,
            name: name.to_owned(),
            description: String::new(),
        },
    );
    id
}

/// The id of the event metadata named `name`; the smallest if several share it.
pub(crate) fn event_metadata_id(plane: &XPlane, name: &str) -> Option<i64> {
    plane
        .event_metadata
        .iter()
        .filter(|(_, m)| m.name == name)
        .map(|(id, _)| *id)
        .min()
}

/// The id of the event metadata named `name` (the smallest if several share it), created (with
/// the next id) when missing.
pub(crate) fn intern_event(plane: &mut XPlane, name: &str) -> i64 {
    if let Some(id) = event_metadata_id(plane, name) {
        return id;
    }
    let id = plane
        .event_metadata
        .keys()
        .copied()
        .max()
        .unwrap_or(0)
        .saturating_add(1);
    plane.event_metadata.insert(
        id,
        profkit_xplane::XEventMetadata {
            id,
            name: name.to_owned(),
            ..profkit_xplane::XEventMetadata::default()
        },
    );
    id
}

/// TSL's `GetStartTimestampNs`: the earliest line timestamp, 0 without lines.
pub(crate) fn start_timestamp_ns(plane: &XPlane) -> i64 {
    plane
        .lines
        .iter()
        .map(|l| l.timestamp_ns)
        .min()
        .unwrap_or(0)
}

/// TSL's `StrOrRefValue` with `names` the plane's stat metadata names by id: the text, the
/// referenced stat metadata's name, or empty.
pub(crate) fn str_or_ref<'a, S: std::hash::BuildHasher>(
    stat: &'a XStat,
    names: &'a std::collections::HashMap<i64, String, S>,
) -> &'a str {
    match &stat.value {
        Some(x_stat::Value::StrValue(s)) => s,
        Some(x_stat::Value::RefValue(r)) => i64::try_from(*r)
            .ok()
            .and_then(|r| names.get(&r))
            .map_or("", String::as_str),
        _ => "",
    }
}

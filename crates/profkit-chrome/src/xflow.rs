//! A Chrome trace's flows as TSL's `flow` stats, beside profkit's own, so that xprof and
//! TensorBoard draw the arrows of a converted trace.
//!
//! The importer keeps each flow end as a `flow_out` or `flow_in` stat holding the trace's own id
//! (and `flow_cat` for its category), which the Chrome writer turns back into the same flow
//! events. xprof knows flows only as `flow` stats encoded as TSL's `XFlow` (see
//! [`profkit_xplane::flow`]): after the import each event gets one `flow` stat per flow end, in
//! the order of its `flow_out`/`flow_in` stats, out for a start, in for an end, in-out for a step
//! (an id both ends and starts at the event), generic category. The 56-bit id is the trace's id
//! when it is a number below 2^56 (Kineto's ids are), else a hash of the id's text, so that ends
//! sharing an id share the `flow`'s.

use profkit_xplane::flow::{Flow, IN, OUT};
use profkit_xplane::{XPlane, XStat, XStatMetadata, x_stat};

use crate::flow_stats::{FLOW_IN, FLOW_OUT};

/// Both directions: a flow step.
const IN_OUT: u64 = IN | OUT;

/// Adds the `flow` stats of every event of the plane that has flow ends; returns how many.
pub(crate) fn add_flow_stats(plane: &mut XPlane) -> u64 {
    let find = |name: &str| {
        plane
            .stat_metadata
            .iter()
            .find(|(_, m)| m.name == name)
            .map(|(id, _)| *id)
    };
    let (out, inn) = (find(FLOW_OUT), find(FLOW_IN));
    if out.is_none() && inn.is_none() {
        return 0;
    }
    let flow = match find(profkit_xplane::constants::stats::FLOW) {
        Some(id) => id,
        None => {
            let id = plane.stat_metadata.keys().max().map_or(1, |m| m + 1);
            plane.stat_metadata.insert(
                id,
                XStatMetadata {
                    id,
                    name: profkit_xplane::constants::stats::FLOW.to_owned(),
                    description: String::new(),
                },
            );
            id
        }
    };
    let names: std::collections::HashMap<i64, &str> = plane
        .stat_metadata
        .iter()
        .map(|(id, m)| (*id, m.name.as_str()))
        .collect();
    let mut added = 0;
    let mut ends: Vec<(u64, u64)> = Vec::new();
    for line in &mut plane.lines {
        for event in &mut line.events {
            ends.clear();
            for stat in &event.stats {
                let direction = if Some(stat.metadata_id) == out {
                    OUT
                } else if Some(stat.metadata_id) == inn {
                    IN
                } else {
                    continue;
                };
                let Some(id) = stat.value.as_ref().and_then(|v| flow_id(v, &names)) else {
                    continue;
                };
                // A step (`t`) is an id that ends and starts at the event.
                match ends.iter_mut().find(|(i, _)| *i == id) {
                    Some((_, d)) if *d != direction => *d = IN_OUT,
                    _ => ends.push((id, direction)),
                }
            }
            for &(id, direction) in &ends {
                event.stats.push(XStat {
                    metadata_id: flow,
                    value: Some(x_stat::Value::Uint64Value(
                        Flow {
                            id,
                            direction,
                            category: 0,
                        }
                        .encode(),
                    )),
                });
                added += 1;
            }
        }
    }
    added
}

/// The 56-bit id of a flow whose trace id is the stat's value.
fn flow_id(value: &x_stat::Value, names: &std::collections::HashMap<i64, &str>) -> Option<u64> {
    const LIMIT: u64 = 1 << 56;
    match value {
        x_stat::Value::Int64Value(i) if (0..LIMIT as i64).contains(i) => Some(*i as u64),
        x_stat::Value::Uint64Value(u) if *u < LIMIT => Some(*u),
        x_stat::Value::Int64Value(i) => Some(text_id(i.to_string().as_bytes())),
        x_stat::Value::Uint64Value(u) => Some(text_id(u.to_string().as_bytes())),
        x_stat::Value::StrValue(s) => Some(text_id(s.as_bytes())),
        x_stat::Value::RefValue(r) => {
            let id = i64::try_from(*r).ok()?;
            names.get(&id).map(|s| text_id(s.as_bytes()))
        }
        x_stat::Value::DoubleValue(_) | x_stat::Value::BytesValue(_) => None,
    }
}

/// FNV-1a over the text, in the 56 bits an `XFlow` id has.
fn text_id(text: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in text {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h & ((1 << 56) - 1)
}

//! `SetProgramIdToNameMap`: the names of the XLA programs whose HLO protos the `/host:metadata`
//! plane stores, by program id (the `program_id` stat of the proto's event metadata, else the
//! metadata's id), as xprof's HLO proto map reads them. The op profile names its program nodes
//! after them.

use std::collections::BTreeMap;

use profkit_xplane::XSpace;
use profkit_xplane::constants::METADATA_PLANE_NAME;
use profkit_xplane::x_stat;
use prost::Message;

use super::hlo::HloProto;

/// The program names of `space`'s metadata planes; the first proto of an id wins.
pub(crate) fn program_names(space: &XSpace) -> BTreeMap<u64, String> {
    let mut names = BTreeMap::new();
    for plane in space
        .planes
        .iter()
        .filter(|p| p.name == METADATA_PLANE_NAME)
    {
        let stat = |name: &str| crate::preprocess::stats::stat_id(plane, name);
        let Some(proto_stat) = stat("Hlo Proto") else {
            continue;
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
            names
                .entry(program_id)
                .or_insert_with(|| proto.hlo_module.map(|m| m.name).unwrap_or_default());
        }
    }
    names
}

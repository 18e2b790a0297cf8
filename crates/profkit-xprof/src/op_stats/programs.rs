//! `SetProgramIdToNameMap`: the names of the XLA programs whose HLO protos the `/host:metadata`
//! plane stores, by program id (the `program_id` stat of the proto's event metadata, else the
//! metadata's id), as xprof's HLO proto map reads them. The op profile names its program nodes
//! after them.

use std::collections::BTreeMap;

use profkit_xplane::XSpace;
use profkit_xplane::constants::METADATA_PLANE_NAME;

use super::hlo::hlo_protos;

/// The program names of `space`'s metadata planes; the first proto of an id wins.
pub(crate) fn program_names(space: &XSpace) -> BTreeMap<u64, String> {
    let mut names = BTreeMap::new();
    for plane in space
        .planes
        .iter()
        .filter(|p| p.name == METADATA_PLANE_NAME)
    {
        for (program_id, proto) in hlo_protos(plane) {
            names
                .entry(program_id)
                .or_insert_with(|| proto.hlo_module.map(|m| m.name).unwrap_or_default());
        }
    }
    names
}

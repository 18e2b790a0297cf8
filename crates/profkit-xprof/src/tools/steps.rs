//! Whether a profile has steps, as a stand-in until profkit's OpStats has a steps database: the
//! tools rendered from an OpStats ([`super::overview_page`], [`super::input_pipeline`],
//! [`super::pod_viewer`]) then say what they could not reproduce.

use profkit_xplane::constants::{GPU_PLANE_PREFIX, HOST_PLANE_NAME, TPU_PLANE_PREFIX};
use profkit_xplane::{XPlane, XSpace};

/// Whether xprof's grouping of this space finds steps: after preprocessing (a copy of) the
/// space, an event of the host plane names its step (`step_name`, which the grouping gives the
/// root event of each step it finds), an event of a GPU plane belongs to a group (`group_id`:
/// xprof makes steps of the device's groups too), or a TPU plane has an event on its `Steps`
/// line. It errs on the side of yes: on the 56 XSpace cases of `conformance/`, it says yes for
/// every one whose OpStats in xprof has steps, and for six that have none (display-fallbacks,
/// gpu-device, gpu-steps-derived, gpu-steps-ties, tpu-device, tpu-runtime).
pub fn has_grouped_steps(space: &XSpace) -> bool {
    let mut space = space.clone();
    crate::preprocess::preprocess(&mut space);
    space.planes.iter().any(|p| {
        if p.name == HOST_PLANE_NAME {
            has_stat(p, "step_name")
        } else if p.name.starts_with(TPU_PLANE_PREFIX) {
            p.lines
                .iter()
                .any(|l| l.name == "Steps" && !l.events.is_empty())
        } else {
            p.name.starts_with(GPU_PLANE_PREFIX) && has_stat(p, "group_id")
        }
    })
}

/// Whether an event of the plane has the stat.
fn has_stat(plane: &XPlane, name: &str) -> bool {
    let Some(id) = plane
        .stat_metadata
        .iter()
        .find(|(_, m)| m.name == name)
        .map(|(id, _)| *id)
    else {
        return false;
    };
    plane
        .lines
        .iter()
        .flat_map(|l| &l.events)
        .any(|e| e.stats.iter().any(|s| s.metadata_id == id))
}

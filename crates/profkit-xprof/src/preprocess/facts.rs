//! What the whole space says about preprocessing, learnt in a first pass, and the one place that
//! decides what of xprof's preprocessing profkit does not reproduce for a space.

use profkit_xplane::XPlane;
use profkit_xplane::constants::{
    GPU_PLANE_PREFIX, METADATA_PLANE_NAME, TASK_ENV_PLANE_NAME, TPU_PLANE_PREFIX,
};

use super::derived;
use super::event_types::LOOP_OPS;
use super::grouping::forest::Forest;
use super::regions::{add_regions, add_regions_indexed, has_regions};
use super::tpu::tensor_core_id;
use crate::indexed::{IndexedPlane, PlaneRef};

/// TSL's `IsHostPlane`.
fn is_host_plane(name: &str) -> bool {
    matches!(
        name,
        "/host:CPU"
            | "Host CPUs"
            | "/host:tfstreamz"
            | "/host:metadata"
            | "Syscalls"
            | "/host:python-tracer"
            | "/host:CUPTI"
            | "/host:__ScopeRangeCallStack__"
    )
}

/// TSL's `IsDevicePlane`.
pub(crate) fn is_device_plane(name: &str) -> bool {
    !is_host_plane(name)
        && (name.starts_with("/device")
            || name.starts_with("#Chip")
            || name.starts_with("/custom:"))
}

/// Whether a `Task Environment` plane says its space was read from a Chrome trace.
fn says_from_chrome(plane: &XPlane) -> bool {
    let Some(id) = super::stats::stat_id(plane, profkit_chrome::SOURCE_FORMAT_STAT) else {
        return false;
    };
    plane.stats.iter().any(|s| {
        s.metadata_id == id
            && matches!(&s.value, Some(profkit_xplane::x_stat::Value::StrValue(v)) if v == profkit_chrome::SOURCE_CHROME)
    })
}

/// What the whole space says about preprocessing, learnt in a first pass over its planes.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpaceFacts {
    /// Preprocess nothing (set to convert the space as it is).
    pub grouped: bool,
    /// Some host or device plane has no `group_id` stat metadata: xprof preprocesses the space
    /// (TSL's `IsXSpaceGrouped` is false).
    pub ungrouped_plane: bool,
    /// Some plane has a loop op's event metadata: xprof does not group.
    pub loop_op: bool,
    /// Some plane is a TPU plane: xprof groups TPU steps.
    pub tpu: bool,
    /// The HLO instructions of the `/host:metadata` plane and the scope range tree, which name
    /// GPU ops' framework ops and source lines and split their runs in the derived timelines.
    pub symbols: derived::Symbols,
    /// The indices of the GPU planes.
    pub gpu_planes: Vec<usize>,
    /// The events of the space that take part in grouping, and once grouped, their groups.
    pub forest: Forest,
    /// Planes seen so far.
    pub planes: usize,
    /// The space says it was read from a Chrome trace (see [`profkit_chrome::SOURCE_FORMAT_STAT`]).
    pub from_chrome: bool,
    /// Whether a host plane split by line is taken into the forest a line after the other, not
    /// its lines on the pool's threads ([`Forest::add_plane_releasing`]): the trace viewer's first
    /// pass, whose second thread reads ahead meanwhile, gained no time from them and held 3 MB
    /// more on a 14 MB profile.
    pub sequential_intake: bool,
}

impl SpaceFacts {
    /// Whether [`SpaceFacts::observe`] needs the events of a plane with these names, rather than
    /// only its names ([`SpaceFacts::observe_names`]).
    pub fn needs_events<'a>(
        name: &str,
        event_names: impl Iterator<Item = &'a str> + Clone,
        stat_names: impl Iterator<Item = &'a str> + Clone,
    ) -> bool {
        tensor_core_id(name).is_some()
            || name == METADATA_PLANE_NAME
            || name == TASK_ENV_PLANE_NAME
            || name == derived::SCOPE_RANGE_TREE_PLANE_NAME
            || has_regions(event_names.clone())
            || derived::needs_events(name, stat_names.clone())
            || Forest::takes_part(name, event_names, stat_names)
    }

    /// [`SpaceFacts::derived_layout`] of a plane with nothing to derive, from its lines without
    /// events and their event counts.
    pub fn derived_layout_without_events(
        shadow: &XPlane,
        counts: &[usize],
    ) -> Option<Vec<(i64, String)>> {
        derived::applies(&shadow.name).then(|| derived::layout_without_events(shadow, counts))
    }

    /// The lines the plane shows once xprof has derived its timelines (see
    /// [`derived::layout`]), as (display id, display name); `None` for planes without any.
    pub fn derived_layout(&self, plane: &XPlane) -> Option<Vec<(i64, String)>> {
        derived::applies(&plane.name).then(|| derived::layout(plane, &self.symbols))
    }

    /// [`SpaceFacts::derived_layout`] of a plane the caller no longer needs (no copy).
    pub fn derived_layout_owned(&self, plane: XPlane) -> Option<Vec<(i64, String)>> {
        derived::applies(&plane.name).then(|| derived::layout_owned(plane, &self.symbols))
    }

    /// How many HLO modules the space's metadata plane gave so far (a layout made with fewer is
    /// made again).
    pub fn symbols_known(&self) -> usize {
        self.symbols.len()
    }

    /// Takes in what the names of one plane say (its name, its event and stat metadata names),
    /// in file order.
    pub fn observe_names<'a>(
        &mut self,
        name: &str,
        event_names: impl Iterator<Item = &'a str> + Clone,
        stat_names: impl Iterator<Item = &'a str> + Clone,
    ) {
        if name.starts_with(TPU_PLANE_PREFIX) {
            self.tpu = true;
        }
        if name.starts_with(GPU_PLANE_PREFIX) {
            self.gpu_planes.push(self.planes);
        }
        if (is_host_plane(name) || is_device_plane(name))
            && !stat_names.clone().any(|n| n == "group_id")
        {
            self.ungrouped_plane = true;
        }
        if event_names.clone().any(|n| LOOP_OPS.contains(&n)) {
            self.loop_op = true;
        }
        self.planes += 1;
    }

    /// Takes in one plane whole, in file order (its regions added to the copy the forest takes
    /// in, not to the plane).
    pub fn observe(&mut self, plane: &XPlane) {
        if !self.takes_in(plane) {
            self.observe_taken(plane, None);
        } else if has_regions(plane.event_metadata.values().map(|m| m.name.as_str())) {
            let mut indexed = IndexedPlane::of_owned(plane);
            add_regions_indexed(&mut indexed);
            self.observe_taken(plane, Some(PlaneRef::Indexed(&indexed)));
        } else {
            self.observe_taken(plane, Some(PlaneRef::Owned(plane)));
        }
    }

    /// Takes in one plane whole, in file order, adding its regions in place (as the second
    /// pass will), so that it need not be copied. Returns whether it added them (the plane's
    /// regions are in: a second pass over this same plane must not add them again).
    pub fn observe_mut(&mut self, plane: &mut XPlane) -> bool {
        let taken = self.takes_in(plane);
        if taken {
            add_regions(plane);
            self.observe_taken(plane, Some(PlaneRef::Owned(plane)));
        } else {
            self.observe_taken(plane, None);
        }
        taken
    }

    /// Takes in one indexed plane, in file order, adding its regions to it when the forest takes
    /// it in (returns whether it did, as [`SpaceFacts::observe_mut`]).
    pub(crate) fn observe_indexed(&mut self, plane: &mut IndexedPlane) -> bool {
        let taken = self.takes_in(plane.shadow());
        if taken {
            add_regions_indexed(plane);
        }
        let index = self.observe_head(plane.shadow());
        if taken && self.takes_in(plane.shadow()) {
            // A plane split by line lets go of each line's bytes once taken in.
            let parallel = !self.sequential_intake;
            self.forest.add_plane_releasing(index, plane, parallel);
        }
        taken
    }

    /// Takes in what a plane's names, metadata and plane stats say, not its events: for a space
    /// that is not grouped (whose forest [`SpaceFacts::finish`] drops).
    pub(crate) fn observe_shadow(&mut self, plane: &XPlane) {
        self.observe_taken(plane, None);
    }

    /// Whether the forest will take in this plane's events (regions added first).
    fn takes_in(&self, plane: &XPlane) -> bool {
        !self.grouped
            && Forest::takes_part(
                &plane.name,
                plane.event_metadata.values().map(|m| m.name.as_str()),
                plane.stat_metadata.values().map(|m| m.name.as_str()),
            )
    }

    /// What the plane's names, metadata and plane stats say (`plane` may be its shadow), and the
    /// forest's intake of `indexed`, the plane with its regions, when it takes part.
    fn observe_taken(&mut self, plane: &XPlane, indexed: Option<PlaneRef<'_>>) {
        let index = self.observe_head(plane);
        if let Some(indexed) = indexed.filter(|_| self.takes_in(plane)) {
            self.forest.add_plane(index, indexed);
        }
    }

    /// What the plane's names, metadata and plane stats say; the plane's index.
    fn observe_head(&mut self, plane: &XPlane) -> usize {
        let index = self.planes;
        if plane.name == TASK_ENV_PLANE_NAME {
            self.from_chrome |= says_from_chrome(plane);
        }
        if plane.name == METADATA_PLANE_NAME {
            self.symbols.observe(plane);
        }
        if plane.name == derived::SCOPE_RANGE_TREE_PLANE_NAME {
            self.symbols.observe_scope_tree(plane);
        }
        self.observe_names(
            &plane.name,
            plane.event_metadata.values().map(|m| m.name.as_str()),
            plane.stat_metadata.values().map(|m| m.name.as_str()),
        );
        index
    }

    /// Groups the events taken in; call after the last plane.
    pub fn finish(&mut self) {
        if self.preprocesses() && !self.loop_op {
            self.forest.group();
        } else {
            self.forest = Forest::default();
        }
    }

    /// Whether xprof would preprocess this space at all: not when every host and device plane
    /// has a `group_id` stat metadata (nor when there is no such plane).
    pub fn preprocesses(&self) -> bool {
        !self.grouped && self.ungrouped_plane
    }

    /// Whether xprof groups this space's events.
    pub fn groups(&self) -> bool {
        self.preprocesses() && !self.loop_op
    }

    /// What xprof would do to this space that profkit does not reproduce (empty when the output
    /// is xprof's, flows compared as the events they link). Every such item is decided here and only here.
    pub fn unreproduced(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !self.preprocesses() {
            return out;
        }
        if !self.groups() {
            return out;
        }
        // `DeriveEventsFromHostTrace` lists a device's groups in hash-map order.
        let devices = self.gpu_planes.len();
        if (0..devices).any(|d| {
            let (launches, _) = self.forest.launch_stats(d, devices);
            launches
                .iter()
                .filter(|l| self.forest.names.contains_key(&l.group))
                .count()
                > 1
        }) {
            out.push(
                "its own order (a hash map's) to the events of the Launch Stats line of GPU planes",
            );
        }
        // `SortRootEventList` breaks ties with an unstable sort over a hash map.
        if self.forest.tied_roots {
            out.push(
                "its own order (an unstable sort) to step roots of one level that start at the same time",
            );
        }
        out
    }
}

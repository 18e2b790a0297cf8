//! What the whole space says about preprocessing, learnt in a first pass.

use std::collections::{BTreeMap, HashMap};

use profkit_xplane::XPlane;
use profkit_xplane::constants::{HOST_PLANE_NAME, TPU_PLANE_PREFIX};

use super::event_types::{Kind, LOOP_OPS};
use super::grouping::eager::{EagerSearch, EventKinds, eager_search, nesting_parents};
use super::grouping::tpu::StatIds;
use super::tpu::{tensor_core_id, tpu_grouping_line};

/// What the whole space says about preprocessing, learnt in a first pass over its planes.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpaceFacts {
    /// Some plane has a `group_id` stat metadata: xprof preprocesses nothing.
    pub grouped: bool,
    /// Some plane has a loop op's event metadata: xprof does not group.
    pub loop_op: bool,
    /// For each correlation id, how the last host event launching it resolves (see
    /// [`EagerSearch`]).
    pub launches: HashMap<u64, EagerSearch>,
    /// Some plane is a TPU plane: xprof groups TPU steps.
    pub tpu: bool,
    /// Some event can be a step root (a `_r` stat or a `TraceContext` event): xprof's step
    /// grouping, which profkit does not reproduce, would start from it.
    pub roots: bool,
    /// The names of the groups xprof makes of TPU steps (by group id), when no host root groups
    /// them: the last TensorCore plane's name for each id.
    pub tpu_groups: BTreeMap<i64, String>,
    /// Some device event carries a stat xprof derives lines from (`tf_op`, `hlo_op`,
    /// `hlo_module`, `source`), which profkit does not reproduce.
    pub derivable: bool,
}

impl SpaceFacts {
    /// Whether [`SpaceFacts::observe`] needs the plane named `name` whole (its events), rather
    /// than only its names ([`SpaceFacts::observe_names`]).
    pub fn needs_events(name: &str) -> bool {
        name == HOST_PLANE_NAME || tensor_core_id(name).is_some()
    }

    /// Takes in what the names of one plane say (its name, its event and stat metadata names).
    pub fn observe_names<'a>(
        &mut self,
        name: &str,
        event_names: impl Iterator<Item = &'a str> + Clone,
        stat_names: impl Iterator<Item = &'a str> + Clone,
    ) {
        if name.starts_with(TPU_PLANE_PREFIX) {
            self.tpu = true;
        }
        if stat_names.clone().any(|n| n == "group_id") {
            self.grouped = true;
        }
        if event_names.clone().any(|n| LOOP_OPS.contains(&n)) {
            self.loop_op = true;
        }
        if stat_names.clone().any(|n| n == "_r") || event_names.clone().any(|n| n == "TraceContext")
        {
            self.roots = true;
        }
        if name.starts_with("/device:")
            && stat_names
                .clone()
                .any(|n| matches!(n, "tf_op" | "hlo_op" | "hlo_module" | "source"))
        {
            self.derivable = true;
        }
    }

    /// Takes in one plane, in file order.
    pub fn observe(&mut self, plane: &XPlane) {
        self.observe_names(
            &plane.name,
            plane.event_metadata.values().map(|m| m.name.as_str()),
            plane.stat_metadata.values().map(|m| m.name.as_str()),
        );
        if tensor_core_id(&plane.name).is_some() {
            if let Some(grouping) = tpu_grouping_line(plane).and_then(|i| plane.lines.get(i)) {
                let stats = StatIds::of(plane);
                for (k, event) in grouping.events.iter().enumerate() {
                    let group = k as i64;
                    self.tpu_groups
                        .insert(group, stats.group_name(event, group));
                }
            }
        }
        if plane.name == HOST_PLANE_NAME {
            let kinds = EventKinds::of(plane);
            for line in &plane.lines {
                let parents = nesting_parents(plane, line, &kinds.async_stat);
                for (index, event) in line.events.iter().enumerate() {
                    if kinds.kind(event.metadata_id) != Kind::Untyped {
                        continue;
                    }
                    let Some(id) = kinds.correlation_id(event) else {
                        continue;
                    };
                    // Every /host:CPU plane registers its launches, the later ones winning.
                    let search = eager_search(&kinds, line, &parents, index);
                    self.launches.insert(id, search);
                }
            }
        }
    }

    /// Whether xprof would preprocess this space at all.
    pub fn preprocesses(&self) -> bool {
        !self.grouped
    }

    /// What xprof would do to this space that profkit does not reproduce (empty when the output
    /// is xprof's, `flow` args aside).
    pub fn unreproduced(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.preprocesses() && !self.loop_op && self.roots {
            out.push("step grouping (group_id and step_name stats on the events under step roots)");
        }
        if self.preprocesses() && self.derivable {
            out.push("lines derived from tf_op, hlo_op, hlo_module and source stats");
        }
        out
    }
}

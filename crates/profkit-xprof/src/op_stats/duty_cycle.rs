//! The TPU device's duty cycle (xprof's `DutyCycleTracker` and `DutyCycleCombiner`): the busy
//! and idle time OpStats records in the device op metrics of a TPU host, which the overview page
//! shows as the device duty cycle.
//!
//! On each TPU plane, the events of the `XLA Ops` line are active time unless their metadata's
//! `hlo_category` is an off-duty one (infeed, outfeed, host sends and receives, megacore
//! fusions); the `Sparse Core Ops` line's are all active; the `XLA Modules` and `Sparse Core
//! Modules` lines' only widen the plane's span. A plane's active time is the length of the union
//! of its active spans; its idle time is its span (first begin to last end of the lines above)
//! less that. Planes with core details (`core_details` stat)
//! are united per chip (`local_chip_id`), the others counted as chips of their own; the host's
//! busy and idle times are the chips' sums. SparseCore planes' busy time is not xprof 2.24.2's
//! (whose rule for them is not public): OpStats names it as missing where a SparseCore plane
//! has ops.

use std::collections::BTreeMap;

use profkit_xplane::XPlane;
use profkit_xplane::constants::{
    SPARSE_CORE_MODULE_LINE_NAME, SPARSE_CORE_OP_LINE_NAME, XLA_MODULE_LINE_NAME, XLA_OP_LINE_NAME,
};
use profkit_xplane::visitor::PlaneVisitor;

use super::event_span::Span;

/// `IsOffDutyOp`.
fn is_off_duty(category: &str) -> bool {
    matches!(
        category,
        "infeed"
            | "outfeed"
            | "host send"
            | "host send-done"
            | "host recv"
            | "host recv-done"
            | "megacore fusion"
    )
}

/// One plane's (or chip's) span and active spans.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    total: Span,
    active: Vec<Span>,
}

impl Tracker {
    /// The span widened to include `span`; an empty span (none yet) becomes `span`.
    fn expand(&mut self, span: Span) {
        if self.total.is_empty() {
            self.total = span;
            return;
        }
        let begin = self.total.begin.min(span.begin);
        let end = self.total.end().max(span.end());
        self.total = Span::from_end_points(begin, end);
    }

    /// `AddInterval`.
    pub fn add(&mut self, span: Span, active: bool) {
        self.expand(span);
        if active {
            self.active.push(span);
        }
    }

    /// `Union`.
    pub fn union(&mut self, other: &Tracker) {
        self.expand(other.total);
        self.active.extend(other.active.iter().copied());
    }

    /// `GetActiveTimePs`: the length of the union of the active spans (touching spans merge).
    pub fn active_ps(&self) -> u64 {
        let mut spans = self.active.clone();
        spans.sort_by(|a, b| a.begin.cmp(&b.begin).then(b.duration.cmp(&a.duration)));
        let mut total = 0u64;
        let mut current: Option<(u64, u64)> = None;
        for s in spans {
            let (b, e) = (s.begin, s.end().max(s.begin));
            match current {
                Some((cb, ce)) if b <= ce => current = Some((cb, ce.max(e))),
                Some((cb, ce)) => {
                    total = total.wrapping_add(ce - cb);
                    current = Some((b, e));
                }
                None => current = Some((b, e)),
            }
        }
        if let Some((cb, ce)) = current {
            total = total.wrapping_add(ce - cb);
        }
        total
    }

    /// `GetIdleTimePs`.
    pub fn idle_ps(&self) -> u64 {
        self.total.duration.wrapping_sub(self.active_ps())
    }
}

/// `ConstructDutyCycleTracker`: one TPU plane's tracker.
pub fn plane_tracker(plane: &XPlane) -> Tracker {
    let visitor = PlaneVisitor::new(plane);
    let mut tracker = Tracker::default();
    for line in visitor.lines() {
        let name = line.name();
        let ts = (line.timestamp_ns() as u64).wrapping_mul(1000);
        let span = |e: &profkit_xplane::visitor::EventVisitor<'_>| {
            Span::new(
                ts.wrapping_add(e.offset_ps() as u64),
                e.duration_ps() as u64,
            )
        };
        if name == XLA_OP_LINE_NAME {
            for event in line.events() {
                let off = event
                    .metadata_stats()
                    .find(|s| s.name() == "hlo_category")
                    .and_then(|s| s.value())
                    .and_then(|v| v.as_str())
                    .is_some_and(is_off_duty);
                tracker.add(span(&event), !off);
            }
        } else if name == SPARSE_CORE_OP_LINE_NAME {
            for event in line.events() {
                tracker.add(span(&event), true);
            }
        } else if name == XLA_MODULE_LINE_NAME || name == SPARSE_CORE_MODULE_LINE_NAME {
            for event in line.events() {
                tracker.add(span(&event), false);
            }
        }
    }
    tracker
}

/// `DutyCycleCombiner`: chips by local chip id, and the planes without core details.
#[derive(Default)]
pub struct Combiner {
    chips: BTreeMap<u32, Tracker>,
    active: u64,
    idle: u64,
}

impl Combiner {
    /// `CombineCore`: a core of chip `chip`.
    pub fn core(&mut self, tracker: &Tracker, chip: u32) {
        self.chips.entry(chip).or_default().union(tracker);
    }

    /// `CombineChip`: a chip of its own.
    pub fn chip(&mut self, tracker: &Tracker) {
        self.active = self.active.wrapping_add(tracker.active_ps());
        self.idle = self.idle.wrapping_add(tracker.idle_ps());
    }

    /// The total busy time.
    pub fn active_ps(&self) -> u64 {
        self.chips
            .values()
            .fold(self.active, |t, c| t.wrapping_add(c.active_ps()))
    }

    /// The total idle time.
    pub fn idle_ps(&self) -> u64 {
        self.chips
            .values()
            .fold(self.idle, |t, c| t.wrapping_add(c.idle_ps()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_of_active_spans_and_idle_from_zero() {
        let mut t = Tracker::default();
        t.add(Span::new(10, 10), true);
        t.add(Span::new(15, 10), true);
        t.add(Span::new(25, 5), true);
        t.add(Span::new(40, 10), false);
        assert_eq!(t.active_ps(), 20);
        assert_eq!(t.idle_ps(), 20);
        let mut other = Tracker::default();
        other.add(Span::new(45, 10), true);
        let mut c = Combiner::default();
        c.core(&t, 0);
        c.core(&other, 0);
        c.chip(&other);
        assert_eq!(c.active_ps(), 30 + 10);
        assert_eq!(c.idle_ps(), 15);
    }

    #[test]
    fn off_duty_categories() {
        assert!(is_off_duty("infeed") && is_off_duty("megacore fusion"));
        // XLA's category names, with their hyphens.
        assert!(is_off_duty("host send-done") && is_off_duty("host recv-done"));
        assert!(!is_off_duty("host send done"));
        assert!(!is_off_duty("convolution"));
    }
}

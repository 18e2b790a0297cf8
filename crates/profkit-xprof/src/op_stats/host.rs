//! The host op metrics database (xprof's `ConvertHostThreadsXPlaneToOpMetricsDb`): every
//! framework op on the host threads, with its self time, per thread then combined.
//!
//! An event is an op when its name parses as one (`name:Type`, a JAX op, `Iterator::...`, a
//! memcpy), when it is an input pipeline stage (`input_pipeline_stage_id` and
//! `input_pipeline_stage_category` stats), or when it carries a non-empty `tf_op` stat. On each
//! thread the ops' begins and ends are ordered by time (stably) and matched on a stack: an end
//! pops the stack down to its own begin (an end with no begin is dropped, as are the ops it pops
//! past), the op's time is its span and its self time that span less its children's. Each
//! thread's database is closed with its span (first begin to last end) and an `IDLE` op for the
//! time outside ops, then summed into the plane's.

use profkit_xplane::{XEventMetadata, XPlane};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::HostMarks;
use super::metrics_db::{DbBuilder, add_idle_op, set_total_time_ps};
use crate::indexed::{ById, Event, IndexedPlane, Stat};
use crate::preprocess::Marks;
use crate::preprocess::derived::is_derived_line_id;
use crate::preprocess::derived::tf_op::{self, Category};
use crate::proto::OpMetricsDb;

/// An op as the host database keys it.
#[derive(Clone, Debug)]
struct HostOp {
    name: String,
    op_type: String,
    /// The input pipeline stage, or 0.
    id: i64,
    is_op: bool,
}

fn from_full_name(full: &str) -> HostOp {
    let op = tf_op::parse(full);
    HostOp {
        name: op.name.to_owned(),
        op_type: op.op_type.to_owned(),
        id: 0,
        is_op: op.category != Category::Unknown,
    }
}

/// What the host database reads of a plane, resolved once: the metadata ids of the stats it
/// reads (`None` when the plane has no stat of that name: then no event has it; the smallest id
/// of a name, as `XPlaneVisitor` finds a stat by name), and the event metadata by id.
struct HostPlane<'a> {
    shadow: &'a XPlane,
    metadata: ById<'a, XEventMetadata>,
    stage_id: Option<i64>,
    stage_category: Option<i64>,
    is_eager: Option<i64>,
    tf_op: Option<i64>,
    /// Whether the plane has any of these stats.
    any: bool,
}

impl<'a> HostPlane<'a> {
    fn new(plane: &'a IndexedPlane) -> Self {
        let shadow = plane.shadow();
        let id = |name: &str| {
            shadow
                .stat_metadata
                .iter()
                .find(|(_, md)| md.name == name)
                .map(|(&id, _)| id)
        };
        let (stage_id, stage_category) = (
            id("input_pipeline_stage_id"),
            id("input_pipeline_stage_category"),
        );
        let (is_eager, tf_op) = (id("is_eager"), id("tf_op"));
        HostPlane {
            shadow,
            metadata: ById::new(&shadow.event_metadata),
            stage_id,
            stage_category,
            is_eager,
            tf_op,
            any: [stage_id, stage_category, is_eager, tf_op]
                .iter()
                .any(Option::is_some),
        }
    }

    /// The event's name (its metadata's; empty when the id resolves to nothing, as in TSL) and
    /// the stats the database reads of it.
    #[inline]
    fn read(&self, event: Event<'a>) -> (&'a str, EventStats<'a>) {
        let metadata = self.metadata.get(event.metadata_id());
        let mut found = Found::default();
        if !self.any {
            return (metadata.map_or("", |md| md.name.as_str()), found.read(self));
        }
        // `XEventVisitor::GetStat`: the event's own first stat of the id, else its metadata's.
        if event.has_stats() {
            for stat in event.stats() {
                found.take(self, stat);
            }
        }
        if let Some(md) = metadata.filter(|md| !md.stats.is_empty()) {
            for stat in md.stats.iter().map(Stat::of) {
                found.take(self, stat);
            }
        }
        (metadata.map_or("", |md| md.name.as_str()), found.read(self))
    }
}

/// The first stat of each id the host database reads.
#[derive(Default)]
struct Found<'a> {
    stage_id: Option<Stat<'a>>,
    stage_category: Option<Stat<'a>>,
    is_eager: Option<Stat<'a>>,
    tf_op: Option<Stat<'a>>,
}

impl<'a> Found<'a> {
    #[inline]
    fn take(&mut self, plane: &HostPlane<'_>, stat: Stat<'a>) {
        let id = Some(stat.metadata_id);
        let slot = if id == plane.stage_id {
            &mut self.stage_id
        } else if id == plane.stage_category {
            &mut self.stage_category
        } else if id == plane.is_eager {
            &mut self.is_eager
        } else if id == plane.tf_op {
            &mut self.tf_op
        } else {
            return;
        };
        slot.get_or_insert(stat);
    }

    /// The values found, as `XStatVisitor` gives them.
    fn read(&self, plane: &HostPlane<'a>) -> EventStats<'a> {
        let int = |s: Option<Stat<'a>>| s?.resolved(plane.shadow)?.as_i64();
        let text = |s: Option<Stat<'a>>| s?.resolved(plane.shadow)?.as_str();
        EventStats {
            stage_id: int(self.stage_id),
            stage_category: text(self.stage_category),
            is_eager: int(self.is_eager),
            tf_op: text(self.tf_op),
        }
    }
}

/// The stats of an event the host database reads: integers and text as `XStatVisitor` gives
/// them (`None` for a stat of another kind).
struct EventStats<'a> {
    stage_id: Option<i64>,
    stage_category: Option<&'a str>,
    is_eager: Option<i64>,
    tf_op: Option<&'a str>,
}

/// `CollectTfOpsFromHostThreadsXPlane`: the ops of the plane by event metadata id (or input
/// pipeline stage id), the first event to name an id deciding.
fn collect_ops(plane: &IndexedPlane, host: &HostPlane<'_>) -> HostOps {
    let mut ops = HostOps::default();
    if host.stage_id.is_none() {
        // No event is a stage: an op is its metadata's name, whichever event names it first,
        // so the metadata say it without a walk (ops of metadata no event uses are never read).
        for (&id, md) in &host.shadow.event_metadata {
            let op = from_full_name(&md.name);
            if !md.name.is_empty() && op.is_op {
                ops.insert(id, op);
            }
        }
        return ops;
    }
    // The metadata ids whose name has been parsed: an event's name is its metadata's, so the
    // first parse of an id decides for every later event of it.
    let mut parsed = FxHashSet::default();
    for (_, events) in plane.lines() {
        for event in events {
            let (name, stats) = host.read(event);
            if name.is_empty() {
                continue;
            }
            if let Some(stage) = stats.stage_id {
                if let Some(category) = stats.stage_category {
                    if !ops.by_key.contains_key(&stage) {
                        ops.insert(
                            stage,
                            HostOp {
                                name: name.to_owned(),
                                op_type: category.to_owned(),
                                id: stage,
                                is_op: true,
                            },
                        );
                    }
                }
                continue;
            }
            if !parsed.insert(event.metadata_id()) {
                continue;
            }
            let op = from_full_name(name);
            if op.is_op && !ops.by_key.contains_key(&event.metadata_id()) {
                ops.insert(event.metadata_id(), op);
            }
        }
    }
    ops
}

/// The ops of a plane, each once, numbered by the order they were found; by key (event metadata
/// id or input pipeline stage id).
#[derive(Default)]
struct HostOps {
    ops: Vec<HostOp>,
    by_key: FxHashMap<i64, u32>,
}

impl HostOps {
    /// Adds the op of a key not in yet (nothing past [`Activity::MAX_OPS`] ops).
    fn insert(&mut self, key: i64, op: HostOp) {
        let Ok(index) = u32::try_from(self.ops.len()) else {
            return;
        };
        if index < Activity::MAX_OPS {
            self.by_key.insert(key, index);
            self.ops.push(op);
        }
    }
}

/// A begin or an end of an op on a thread, in 16 bytes (a line of a real 1 GB profile has tens
/// of millions, held and sorted at once): its time, the op event's number on the line, and the op
/// (the plane's op or the line's `tf_op` op of that index) with whether it begins and is eager.
#[derive(Clone, Copy)]
struct Activity {
    ts: u64,
    id: u32,
    code: u32,
}

impl Activity {
    const BEGIN: u32 = 1 << 31;
    const EAGER: u32 = 1 << 30;
    const TF_OP: u32 = 1 << 29;
    /// The ops an index can name: more than an indexed plane (under 4 GiB, at least six bytes
    /// an op's event and its name) can hold.
    const MAX_OPS: u32 = 1 << 29;

    fn pair(ts: (u64, u64), id: u32, op: u32, tf_op: bool, is_eager: bool) -> [Activity; 2] {
        let code =
            op | if tf_op { Self::TF_OP } else { 0 } | if is_eager { Self::EAGER } else { 0 };
        [
            Activity {
                ts: ts.0,
                id,
                code: code | Self::BEGIN,
            },
            Activity { ts: ts.1, id, code },
        ]
    }

    fn begin(&self) -> bool {
        self.code & Self::BEGIN != 0
    }

    fn is_eager(&self) -> bool {
        self.code & Self::EAGER != 0
    }

    fn op<'o>(&self, ops: &'o HostOps, tf_ops: &'o [HostOp]) -> Option<&'o HostOp> {
        let index = (self.code & (Self::MAX_OPS - 1)) as usize;
        if self.code & Self::TF_OP != 0 {
            tf_ops.get(index)
        } else {
            ops.ops.get(index)
        }
    }
}

/// One thread's database (`ConvertHostThreadsXLineToTfMetricsDbData`).
fn line_db<'a>(
    timestamp_ns: i64,
    events: impl Iterator<Item = Event<'a>>,
    ops: &HostOps,
    host: &HostPlane<'a>,
    marks: Option<Marks<'_>>,
) -> OpMetricsDb {
    let mut activities: Vec<Activity> = Vec::new();
    let mut next_id = 0u32;
    // The ops of `tf_op` stats, by their value (the same value makes the same op).
    let mut tf_index: FxHashMap<&str, u32> = FxHashMap::default();
    let mut tf_ops: Vec<HostOp> = Vec::new();
    for (index, event) in events.enumerate() {
        // As xprof's `Timespan`: 64-bit picoseconds, wrapping (a line starting in 2023 in
        // nanoseconds since 1970 is past 2^64 picoseconds).
        let (begin, end) = event.timespan(timestamp_ns);
        let (_, stats) = host.read(event);
        let key = stats.stage_id.unwrap_or(event.metadata_id());
        if let Some(&op) = ops.by_key.get(&key) {
            next_id = next_id.wrapping_add(1);
            // Grouping's `is_eager`, where it is kept beside the plane, is the event's.
            let is_eager = match marks.as_ref().and_then(|m| m.at(index).is_eager) {
                Some(eager) => eager,
                None => stats.is_eager.is_some_and(|v| v != 0),
            };
            activities.extend(Activity::pair((begin, end), next_id, op, false, is_eager));
        }
        if let Some(full) = stats.tf_op.filter(|s| !s.is_empty()) {
            next_id = next_id.wrapping_add(1);
            let op = match tf_index.get(full) {
                Some(&op) => Some(op),
                None => u32::try_from(tf_ops.len())
                    .ok()
                    .filter(|&i| i < Activity::MAX_OPS)
                    .inspect(|&i| {
                        tf_index.insert(full, i);
                        tf_ops.push(from_full_name(full));
                    }),
            };
            if let Some(op) = op {
                activities.extend(Activity::pair((begin, end), next_id, op, true, false));
            }
        }
    }
    let mut builder = DbBuilder::default();
    if activities.is_empty() {
        return builder.db;
    }
    // By time, ties in the order they were pushed (by op event, its begin before its end): the
    // order a stable sort by time gives, without its scratch half as big as the list.
    activities.sort_unstable_by_key(|a| (a.ts, a.id, !a.begin()));
    // (op id, start, children time)
    let mut stack: Vec<(u32, u64, u64)> = Vec::new();
    let mut infeed_last: Option<(u64, u64)> = None;
    for a in &activities {
        let Some(op) = a.op(ops, &tf_ops) else {
            continue;
        };
        if a.begin() {
            stack.push((a.id, a.ts, 0));
            continue;
        }
        let mut found = None;
        while let Some(top) = stack.pop() {
            if top.0 == a.id {
                found = Some(top);
                break;
            }
        }
        let Some((_, start, children)) = found else {
            continue;
        };
        let duration = a.ts.saturating_sub(start);
        enter_op(&mut builder, op, a.is_eager(), duration, children);
        if let Some(parent) = stack.last_mut() {
            parent.2 = parent.2.wrapping_add(duration);
        }
        if is_infeed_enqueue(&op.op_type) {
            if let Some((last_begin, last_end)) = infeed_last {
                let db = &mut builder.db;
                db.total_host_infeed_enq_duration_ps = db
                    .total_host_infeed_enq_duration_ps
                    .wrapping_add(last_end.saturating_sub(last_begin));
                db.total_host_infeed_enq_start_timestamp_ps_diff = db
                    .total_host_infeed_enq_start_timestamp_ps_diff
                    .wrapping_add(start.wrapping_sub(last_begin));
            }
            infeed_last = Some((start, a.ts));
        }
    }
    let span = activities
        .last()
        .map_or(0, |l| l.ts)
        .saturating_sub(activities[0].ts);
    set_total_time_ps(&mut builder.db, span);
    builder.db
}

/// TSL's `IsInfeedEnqueueOp`.
fn is_infeed_enqueue(op_type: &str) -> bool {
    op_type.starts_with("InfeedEnqueue")
}

/// `HostOpMetricsDbBuilder::EnterOp`.
fn enter_op(builder: &mut DbBuilder, op: &HostOp, is_eager: bool, time: u64, children: u64) {
    let self_time = time.wrapping_sub(children);
    // The stage id is the key's module id, as xprof stores it (an `int64` in a `uint64`).
    let metrics = builder.lookup_or_insert(op.id as u64, &op.name);
    if metrics.category.is_empty() {
        metrics.category.clone_from(&op.op_type);
    }
    metrics.num_cores = 1;
    metrics.is_eager |= is_eager;
    metrics.occurrences = metrics.occurrences.wrapping_add(1);
    metrics.time_ps = metrics.time_ps.wrapping_add(time);
    metrics.self_time_ps = metrics.self_time_ps.wrapping_add(self_time);
    builder.db.total_op_time_ps = builder.db.total_op_time_ps.wrapping_add(self_time);
}

/// The host plane's op metrics database: each thread's (derived lines aside), with its idle op,
/// summed in line order.
pub fn host_op_metrics_db(plane: &XPlane) -> OpMetricsDb {
    host_op_metrics_db_marked(&IndexedPlane::of_owned(plane), None)
}

/// [`host_op_metrics_db`] of an indexed plane, with its grouping marks when they are kept beside
/// it.
pub(crate) fn host_op_metrics_db_marked(
    plane: &IndexedPlane,
    marks: Option<&HostMarks<'_>>,
) -> OpMetricsDb {
    let host = HostPlane::new(plane);
    let ops = collect_ops(plane, &host);
    // A derived line has no ops, but still its (empty) idle op, as in xprof.
    let db_of = |index: usize| {
        let mut db = match plane.line(index) {
            Some((line, events)) if !is_derived_line_id(line.id) => line_db(
                line.timestamp_ns,
                events,
                &ops,
                &host,
                marks.map(|m| m.line(index)),
            ),
            _ => OpMetricsDb::default(),
        };
        add_idle_op(&mut db);
        db
    };
    // The threads' databases on the pool's threads when the plane is big, combined in line order
    // either way.
    let lines = plane.line_count();
    let events = plane.event_count();
    let dbs: Vec<OpMetricsDb> = if crate::indexed::LINES_ON_POOL.contains(&events) && lines > 1 {
        (0..lines).into_par_iter().map(db_of).collect()
    } else {
        (0..lines).map(db_of).collect()
    };
    let mut combined = DbBuilder::default();
    for db in &dbs {
        combined.combine(db, false);
    }
    combined.db
}

#[cfg(test)]
mod tests {
    use profkit_xplane::{PlaneBuilder, XPlane};

    use super::*;

    /// Each op's name, category, occurrences and the time `time` reads of it.
    fn rows(
        db: &OpMetricsDb,
        time: impl Fn(&crate::proto::OpMetrics) -> u64,
    ) -> Vec<(&str, &str, u32, u64)> {
        db.metrics_db
            .iter()
            .map(|m| (m.name.as_str(), m.category.as_str(), m.occurrences, time(m)))
            .collect()
    }

    fn plane(timestamp_ns: i64) -> XPlane {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        let mut line = b.line(1);
        line.set_timestamp_ns(timestamp_ns);
        line.add_event("outer:While")
            .set_offset_ps(0)
            .set_duration_ps(10_000);
        line.add_event("a/MatMul:MatMul")
            .set_offset_ps(1_000)
            .set_duration_ps(4_000);
        line.add_event("user range")
            .set_offset_ps(6_000)
            .set_duration_ps(1_000);
        line.add_event("a/MatMul:MatMul")
            .set_offset_ps(20_000)
            .set_duration_ps(2_000);
        plane
    }

    #[test]
    fn an_activity_keeps_its_op_and_flags_in_its_code() {
        let op = |name: &str| HostOp {
            name: name.to_owned(),
            op_type: String::new(),
            id: 0,
            is_op: true,
        };
        let mut ops = HostOps::default();
        ops.insert(7, op("plane"));
        let tf_ops = [op("tf 0"), op("tf 1")];
        let last = Activity::MAX_OPS - 1;
        for (index, tf, eager) in [(0, false, true), (1, true, false), (last, true, true)] {
            let [b, e] = Activity::pair((3, 9), 42, index, tf, eager);
            assert_eq!((b.ts, e.ts, b.id, e.id), (3, 9, 42, 42));
            assert!(b.begin() && !e.begin());
            assert_eq!((b.is_eager(), e.is_eager()), (eager, eager));
            let name = b.op(&ops, &tf_ops).map(|o| o.name.as_str());
            let expected = match (index, tf) {
                (0, false) => Some("plane"),
                (1, true) => Some("tf 1"),
                _ => None,
            };
            assert_eq!(name, expected);
            assert_eq!(e.op(&ops, &tf_ops).map(|o| o.name.as_str()), expected);
        }
        assert_eq!(ops.by_key.get(&7), Some(&0));
    }

    #[test]
    fn tf_op_stats_and_repeated_names_make_one_op_each() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        for id in [1, 2] {
            let mut line = b.line(id);
            // The same op name and the same `tf_op` value on several events and threads.
            for start in [0, 10_000] {
                line.add_event("a/MatMul:MatMul")
                    .set_offset_ps(start)
                    .set_duration_ps(2_000);
                line.add_event("launch")
                    .set_offset_ps(start + 3_000)
                    .set_duration_ps(1_000)
                    .add_stat("tf_op", "b/Relu:Relu");
            }
        }
        let db = host_op_metrics_db(&plane);
        let ops = rows(&db, |m| m.self_time_ps);
        assert_eq!(
            ops,
            [
                ("a/MatMul", "MatMul", 4, 8_000),
                ("b/Relu", "Relu", 4, 4_000),
                ("IDLE", "IDLE", 0, 2 * (14_000 - 6_000)),
            ]
        );
    }

    #[test]
    fn stats_of_the_event_metadata_count_after_the_events_own() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        let mut line = b.line(1);
        line.add_event("launch")
            .set_offset_ps(0)
            .set_duration_ps(2_000);
        line.add_event("launch")
            .set_offset_ps(5_000)
            .set_duration_ps(1_000)
            .add_stat("tf_op", "c/Add:AddV2");
        // The metadata of `launch` carries a `tf_op`: the first event's, not the second's.
        let tf_op = plane
            .stat_metadata
            .values()
            .find(|m| m.name == "tf_op")
            .map(|m| m.id)
            .unwrap();
        let launch = plane
            .event_metadata
            .values_mut()
            .find(|m| m.name == "launch")
            .unwrap();
        launch.stats.push(profkit_xplane::XStat {
            metadata_id: tf_op,
            value: Some(profkit_xplane::x_stat::Value::StrValue(
                "b/Relu:Relu".into(),
            )),
        });
        let db = host_op_metrics_db(&plane);
        let ops = rows(&db, |m| m.time_ps);
        assert_eq!(
            ops,
            [
                ("b/Relu", "Relu", 1, 2_000),
                ("c/Add", "AddV2", 1, 1_000),
                ("IDLE", "IDLE", 0, 3_000),
            ]
        );
    }

    #[test]
    fn self_times_idle_and_wrapping_timestamps() {
        // 2023 in nanoseconds since 1970 is past 2^64 picoseconds: xprof's times wrap, and so
        // do ours, alike.
        for ts in [0, 1_700_000_000_000_000_000] {
            let db = host_op_metrics_db(&plane(ts));
            let names: Vec<(&str, &str, u32, u64, u64)> = db
                .metrics_db
                .iter()
                .map(|m| {
                    (
                        m.name.as_str(),
                        m.category.as_str(),
                        m.occurrences,
                        m.time_ps,
                        m.self_time_ps,
                    )
                })
                .collect();
            assert_eq!(
                names,
                [
                    ("a/MatMul", "MatMul", 2, 6_000, 6_000),
                    ("outer", "While", 1, 10_000, 6_000),
                    ("IDLE", "IDLE", 0, 10_000, 10_000),
                ],
                "line timestamp {ts}"
            );
            assert_eq!(db.total_time_ps, 22_000);
            assert_eq!(db.total_op_time_ps, 12_000);
        }
    }
}

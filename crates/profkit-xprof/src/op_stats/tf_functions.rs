//! The tf-function stats of OpStats (`TfFunctionDb`), as xprof's `xplane_to_tf_functions`
//! builds them: every host event with a `tf_function_call` stat is a call of the function its
//! name names, in the execution mode (and with the compiler) the stat's value says, with the
//! function's tracing count so far (`tracing_count`). On each thread the calls'
//! entries and exits are ordered by time and matched on a stack, so that a call's self time is
//! its time less its callees'; each function sums its calls' count and self time per mode, and
//! says what share of that time ran traced or eagerly (the expensive calls). Threads, then
//! hosts, are combined by function name.

use profkit_xplane::XPlane;
use profkit_xplane::visitor::LineVisitor;
use profkit_xplane::xview::StatValueView;

use crate::indexed::{Event, IndexedPlane};
use crate::proto::{TfFunction, TfFunctionCompiler, TfFunctionDb, TfFunctionExecutionMode};

/// The mode and compiler a `tf_function_call` value names (`INVALID` for another value).
fn decode(mode: &str) -> (TfFunctionExecutionMode, TfFunctionCompiler) {
    use TfFunctionCompiler as C;
    use TfFunctionExecutionMode as M;
    match mode {
        "eager" => (M::EagerMode, C::InvalidCompiler),
        "concrete" => (M::ConcreteMode, C::InvalidCompiler),
        "traced-xla" => (M::TracedMode, C::XlaCompiler),
        "traced-nonXla" => (M::TracedMode, C::OtherCompiler),
        "notTraced-xla" => (M::NotTracedMode, C::XlaCompiler),
        "notTraced-nonXla" => (M::NotTracedMode, C::OtherCompiler),
        _ => (M::InvalidMode, C::InvalidCompiler),
    }
}

/// `CombineCompilers`.
fn combine_compilers(a: i32, b: i32) -> i32 {
    let invalid = TfFunctionCompiler::InvalidCompiler as i32;
    if a == invalid {
        b
    } else if b == invalid || a == b {
        a
    } else {
        TfFunctionCompiler::MixedCompiler as i32
    }
}

/// `ComputeExpensiveCallPercent`: the share of self time in traced or eager calls.
fn expensive_call_percent(f: &TfFunction) -> f64 {
    let mut total = 0u64;
    let mut expensive = 0u64;
    for (&mode, metrics) in &f.metrics {
        total = total.wrapping_add(metrics.self_time_ps);
        if mode == TfFunctionExecutionMode::TracedMode as i32
            || mode == TfFunctionExecutionMode::EagerMode as i32
        {
            expensive = expensive.wrapping_add(metrics.self_time_ps);
        }
    }
    // TSL's `SafeDivide`: 0 for a denominator within 1e-10 of 0.
    let total = total as f64;
    if total.abs() < 1e-10 {
        0.0
    } else {
        100.0 * expensive as f64 / total
    }
}

struct Activation<'a> {
    name: &'a str,
    duration: u64,
    mode: TfFunctionExecutionMode,
    compiler: TfFunctionCompiler,
    tracing_count: i64,
    children: u64,
}

/// The metadata ids of the plane's stats named `name` (a stat is matched by its name, and
/// several ids may share one).
fn ids_named(plane: &XPlane, name: &str) -> Vec<i64> {
    plane
        .stat_metadata
        .iter()
        .filter(|(_, md)| md.name == name)
        .map(|(&id, _)| id)
        .collect()
}

/// The stats a call is told by.
struct StatIds {
    tf_function_call: Vec<i64>,
    tracing_count: Vec<i64>,
}

impl StatIds {
    fn new(plane: &XPlane) -> Self {
        StatIds {
            tf_function_call: ids_named(plane, "tf_function_call"),
            tracing_count: ids_named(plane, "tracing_count"),
        }
    }
}

/// `ConvertHostThreadsXLineToTfFunctionDb`: one thread's calls.
pub fn line_tf_function_db(line: &LineVisitor<'_>) -> TfFunctionDb {
    let plane = line.plane().raw();
    line_db(
        plane,
        line.timestamp_ns(),
        line.raw().events.iter().map(Event::Owned),
        &StatIds::new(plane),
    )
}

/// One thread's calls: `events` those of a line of `plane` (whose metadata names them and
/// their stats) starting at `timestamp_ns`.
fn line_db<'a>(
    plane: &'a XPlane,
    timestamp_ns: i64,
    events: impl Iterator<Item = Event<'a>>,
    ids: &StatIds,
) -> TfFunctionDb {
    if ids.tf_function_call.is_empty() {
        // No stat of the plane names a call: no event of the line is one.
        return TfFunctionDb::default();
    }
    let mut activations = Vec::new();
    // (time, is entry, activation index)
    let mut points: Vec<(u64, bool, usize)> = Vec::new();
    for event in events {
        if !event.has_stats() {
            continue;
        }
        let mut mode = "";
        let mut tracing_count = 0i64;
        for stat in event.stats() {
            let id = stat.metadata_id;
            if ids.tf_function_call.contains(&id) {
                mode = stat.resolved(plane).and_then(|v| v.as_str()).unwrap_or("");
            } else if ids.tracing_count.contains(&id) {
                tracing_count = match stat.value {
                    Some(StatValueView::Int64(v)) => v,
                    _ => 0,
                }
            }
        }
        if mode.is_empty() {
            continue;
        }
        let (begin, _) = event.timespan(timestamp_ns);
        let duration = event.duration_ps() as u64;
        let (mode, compiler) = decode(mode);
        let index = activations.len();
        // Its metadata's name; empty when the id resolves to nothing (as in TSL).
        let name = plane
            .event_metadata
            .get(&event.metadata_id())
            .map_or("", |md| md.name.as_str());
        activations.push(Activation {
            name,
            duration,
            mode,
            compiler,
            tracing_count,
            children: 0,
        });
        points.push((begin, true, index));
        points.push((begin.wrapping_add(duration), false, index));
    }
    // By time alone (xprof's sort compares timestamps only; ties keep their order here).
    points.sort_by_key(|p| p.0);
    let mut stack: Vec<usize> = Vec::new();
    for &(_, entry, index) in &points {
        if entry {
            stack.push(index);
        } else {
            stack.pop();
            if let Some(&parent) = stack.last() {
                let d = activations[index].duration;
                let p = &mut activations[parent];
                p.children = p.children.wrapping_add(d);
            }
        }
    }
    let mut db = TfFunctionDb::default();
    for a in &activations {
        let f = db.tf_functions.entry(a.name.to_owned()).or_default();
        f.total_tracing_count = f.total_tracing_count.max(a.tracing_count);
        f.compiler = combine_compilers(f.compiler, a.compiler as i32);
        let m = f.metrics.entry(a.mode as i32).or_default();
        m.count = m.count.wrapping_add(1);
        m.self_time_ps = m
            .self_time_ps
            .wrapping_add(a.duration.wrapping_sub(a.children));
    }
    for f in db.tf_functions.values_mut() {
        f.expensive_call_percent = expensive_call_percent(f);
    }
    db
}

/// `CombineTfFunctionDb`: `src`'s functions added to `dst`'s by name.
pub fn combine(src: &TfFunctionDb, dst: &mut TfFunctionDb) {
    for (name, s) in &src.tf_functions {
        let Some(d) = dst.tf_functions.get_mut(name) else {
            dst.tf_functions.insert(name.clone(), s.clone());
            continue;
        };
        d.total_tracing_count = d.total_tracing_count.max(s.total_tracing_count);
        d.compiler = combine_compilers(s.compiler, d.compiler);
        for (mode, m) in &s.metrics {
            let dm = d.metrics.entry(*mode).or_default();
            dm.count = dm.count.wrapping_add(m.count);
            dm.self_time_ps = dm.self_time_ps.wrapping_add(m.self_time_ps);
        }
        d.expensive_call_percent = expensive_call_percent(d);
    }
}

/// The host plane's tf-function stats: every thread's, combined.
pub fn tf_function_db(host_plane: &XPlane) -> TfFunctionDb {
    tf_function_db_indexed(&IndexedPlane::of_owned(host_plane))
}

/// [`tf_function_db`] of an indexed plane.
pub(crate) fn tf_function_db_indexed(host_plane: &IndexedPlane) -> TfFunctionDb {
    let mut db = TfFunctionDb::default();
    let shadow = host_plane.shadow();
    let ids = StatIds::new(shadow);
    for (line, events) in host_plane.lines() {
        combine(&line_db(shadow, line.timestamp_ns, events, &ids), &mut db);
    }
    db
}

#[cfg(test)]
mod tests {
    use profkit_xplane::{PlaneBuilder, XPlane};

    use super::*;

    #[test]
    fn nested_calls_count_self_time_per_mode() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        let mut line = b.line(1);
        line.add_event("outer")
            .set_offset_ps(0)
            .set_duration_ps(100)
            .add_stat("tf_function_call", "traced-xla")
            .add_stat("tracing_count", 1i64);
        line.add_event("inner")
            .set_offset_ps(10)
            .set_duration_ps(30)
            .add_stat("tf_function_call", "notTraced-nonXla")
            .add_stat("tracing_count", 2i64);
        line.add_event("outer")
            .set_offset_ps(200)
            .set_duration_ps(50)
            .add_stat("tf_function_call", "notTraced-nonXla");
        line.add_event("not a function")
            .set_offset_ps(300)
            .set_duration_ps(5);
        let mut other = b.line(2);
        other
            .add_event("inner")
            .set_offset_ps(0)
            .set_duration_ps(10)
            .add_stat("tf_function_call", "notTraced-xla");
        let db = tf_function_db(&plane);
        // A line read on its own (owned) as within the plane (indexed).
        let visitor = profkit_xplane::visitor::PlaneVisitor::new(&plane);
        let mut by_line = TfFunctionDb::default();
        for line in visitor.lines() {
            combine(&line_tf_function_db(&line), &mut by_line);
        }
        assert_eq!(by_line, db);
        assert_eq!(db.tf_functions.len(), 2);
        let outer = &db.tf_functions["outer"];
        assert_eq!(outer.compiler, TfFunctionCompiler::MixedCompiler as i32);
        assert_eq!(outer.total_tracing_count, 1);
        let traced = &outer.metrics[&(TfFunctionExecutionMode::TracedMode as i32)];
        assert_eq!((traced.count, traced.self_time_ps), (1, 70));
        let not_traced = &outer.metrics[&(TfFunctionExecutionMode::NotTracedMode as i32)];
        assert_eq!((not_traced.count, not_traced.self_time_ps), (1, 50));
        assert!((outer.expensive_call_percent - 100.0 * 70.0 / 120.0).abs() < 1e-12);
        let inner = &db.tf_functions["inner"];
        assert_eq!(inner.total_tracing_count, 2);
        assert_eq!(inner.compiler, TfFunctionCompiler::MixedCompiler as i32);
        let m = &inner.metrics[&(TfFunctionExecutionMode::NotTracedMode as i32)];
        assert_eq!((m.count, m.self_time_ps), (2, 40));
        assert_eq!(inner.expensive_call_percent, 0.0);
    }

    #[test]
    fn a_call_is_told_by_its_stat_name_whatever_the_id() {
        // Two stat metadata named `tf_function_call`: either id makes a call.
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        b.line(1)
            .add_event("f")
            .set_offset_ps(0)
            .set_duration_ps(10)
            .add_stat("tf_function_call", "eager");
        let named = plane.stat_metadata.keys().copied().max().unwrap_or(0);
        let other = named + 1;
        plane.stat_metadata.insert(
            other,
            profkit_xplane::XStatMetadata {
                id: other,
                name: "tf_function_call".into(),
                ..Default::default()
            },
        );
        let mut second = plane.lines[0].events[0].clone();
        second.data = Some(profkit_xplane::x_event::Data::OffsetPs(20));
        second.duration_ps = 5;
        second.stats[0].metadata_id = other;
        plane.lines[0].events.push(second);
        let db = tf_function_db(&plane);
        let m = &db.tf_functions["f"].metrics[&(TfFunctionExecutionMode::EagerMode as i32)];
        assert_eq!((m.count, m.self_time_ps), (2, 15));
    }

    #[test]
    fn unknown_modes_and_hostile_times_do_not_panic() {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name("/host:CPU");
        let mut line = b.line(1);
        line.add_event("f")
            .set_offset_ps(i64::MAX)
            .set_duration_ps(i64::MAX)
            .add_stat("tf_function_call", "weird");
        line.add_event("f")
            .set_offset_ps(-5)
            .set_duration_ps(-1)
            .add_stat("tf_function_call", "eager");
        let db = tf_function_db(&plane);
        assert_eq!(db.tf_functions["f"].metrics.len(), 2);
    }
}

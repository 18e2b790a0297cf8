//! GPU planes: xprof's display order of streams.

use std::collections::HashMap;

use profkit_events::report::std_sort;
use profkit_xplane::XPlane;

/// First and last line id TSL reserves for derived lines (`IsDerivedThreadId`, which takes the id
/// as a 32-bit int).
pub(crate) const DERIVED_THREAD_ID_MIN: i32 = 0xdead_beef_u32 as i32;
pub(crate) const DERIVED_THREAD_ID_MAX: i32 = DERIVED_THREAD_ID_MIN + 49 + 240;
/// Derived lines xprof makes for each GPU stream (`kThreadIdSource - kThreadIdTfNameScope`), all
/// of which take a display position after the stream's own.
pub(crate) const DERIVED_LINES_PER_STREAM: i64 = 6;

pub(crate) fn renumber_gpu_lines(plane: &mut XPlane) {
    let counts: Vec<usize> = plane.lines.iter().map(|l| l.events.len()).collect();
    renumber_gpu_lines_by(plane, &counts);
}

/// TSL's `IsDerivedThreadId` (which takes the line id as a 32-bit int).
pub(crate) fn is_derived_line_id(id: i64) -> bool {
    (DERIVED_THREAD_ID_MIN..=DERIVED_THREAD_ID_MAX).contains(&(id as i32))
}

/// xprof's `DeriveEventsFromAnnotations` ordering of GPU streams: compute streams (name
/// containing `Compute`) first, then more events first, sorted with libstdc++'s `std::sort`; each
/// stream takes the next display position, followed by positions for its derived lines.
pub(crate) fn renumber_gpu_lines_by(plane: &mut XPlane, counts: &[usize]) {
    let is_derived = is_derived_line_id;
    let compute: Vec<bool> = plane
        .lines
        .iter()
        .map(|l| l.name.contains("Compute"))
        .collect();
    let mut streams: Vec<usize> = (0..plane.lines.len())
        .filter(|&i| plane.lines.get(i).is_some_and(|l| !is_derived(l.id)))
        .collect();
    let count = |i: usize| counts.get(i).copied().unwrap_or(0);
    let is_compute = |i: usize| compute.get(i).copied().unwrap_or(false);
    std_sort(&mut streams, &|&a: &usize, &b: &usize| {
        if is_compute(a) == is_compute(b) {
            count(a) > count(b)
        } else {
            is_compute(a)
        }
    });
    // Positions by line id: a later line with the same id shares the earlier one's position.
    let mut position: HashMap<i64, i64> = HashMap::new();
    let mut next = 1i64;
    for &i in &streams {
        if let Some(line) = plane.lines.get(i) {
            position.insert(line.id, next);
        }
        next += 1 + DERIVED_LINES_PER_STREAM;
    }
    for line in &mut plane.lines {
        if let Some(&p) = position.get(&line.id) {
            line.display_id = p;
        }
    }
}

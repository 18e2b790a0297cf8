//! The trace viewer conversion reports progress within a plane, not only at plane boundaries.

use std::io::Cursor;

use profkit_xplane::{PlaneBuilder, XPlane, XSpace, encode};
use profkit_xprof::trace_viewer::{TraceViewerOptions, convert};

#[test]
fn progress_moves_by_events_within_a_plane() {
    // One host plane of 100,000 events: the whole file is one plane.
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/host:CPU");
    let mut line = b.line(1);
    line.set_name("main");
    for i in 0..100_000_i64 {
        line.add_event("step")
            .set_offset_ps(i * 1_000)
            .set_duration_ps(500);
    }
    let bytes = encode(&XSpace {
        planes: vec![plane],
        ..XSpace::default()
    });
    let mut reports = Vec::new();
    let mut report = |n: u64| reports.push(n);
    convert(
        Cursor::new(&bytes),
        std::io::sink(),
        &TraceViewerOptions::default(),
        Some(&mut report),
    )
    .unwrap();
    // Each byte counts twice (once per pass), as before; the second pass now reports as the
    // events are written: 100,000 / 16,384 reports and the rest, besides the first pass's one.
    assert_eq!(
        reports.iter().sum::<u64>(),
        2 * bytes.len() as u64,
        "{reports:?}"
    );
    let second_pass = &reports[1..];
    assert!(second_pass.len() >= 6, "{reports:?}");
    assert!(
        second_pass.iter().all(|&n| n < bytes.len() as u64 / 4),
        "no report should jump by a whole plane: {reports:?}"
    );
}

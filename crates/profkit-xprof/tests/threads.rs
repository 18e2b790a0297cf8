//! The trace viewer's output does not depend on how many threads write it: each plane's lines
//! are written in pieces on every thread of the pool and put together in order, so the bytes of a
//! run on one thread and on several are the same (a real-shaped TensorFlow profile, whose host
//! plane is grouped and gets threadpool regions, and every XSpace case of `conformance/`, in both
//! layouts). The same holds of OpStats read from a file, whose host plane's lines are grouped
//! and their steps found on every thread of the pool.

use std::io::Cursor;
use std::path::Path;

use profkit_xprof::trace_viewer::{Layout, TraceViewerOptions, convert};

fn converted(threads: usize, bytes: &[u8], options: &TraceViewerOptions) -> Option<Vec<u8>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut out = Vec::new();
        convert(Cursor::new(bytes), &mut out, options, None)
            .ok()
            .map(|_| out)
    })
}

fn same_on_one_and_three_threads(name: &str, bytes: &[u8]) {
    for layout in [Layout::Xprof, Layout::TraceEvent] {
        let options = TraceViewerOptions::of_layout(layout);
        let one = converted(1, bytes, &options);
        let three = converted(3, bytes, &options);
        assert!(
            one == three,
            "{name} ({layout:?}): the output on three threads is not the one on one thread"
        );
    }
}

#[test]
fn a_real_shaped_profile_converts_to_the_same_bytes_on_any_number_of_threads() {
    let mut bytes = Vec::new();
    let written = profkit_bench::real_shaped::write(&mut bytes, 1_500_000).unwrap();
    // Enough events that each line is written in many pieces.
    assert!(written.events > 50_000, "{written:?}");
    same_on_one_and_three_threads("real-shaped", &bytes);
}

#[test]
fn every_xspace_case_converts_to_the_same_bytes_on_any_number_of_threads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
    let mut seen = 0;
    for dir in ["xplane", "xplane-device"] {
        let Ok(cases) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for case in cases.flatten() {
            let input = case.path().join("input.xplane.pb");
            let Ok(bytes) = std::fs::read(&input) else {
                continue;
            };
            same_on_one_and_three_threads(&input.display().to_string(), &bytes);
            seen += 1;
        }
    }
    assert!(seen > 20, "only {seen} cases found");
}

#[test]
fn op_stats_of_a_real_shaped_file_are_the_same_on_any_number_of_threads() {
    use profkit_xprof::op_stats::{Parts, build_for, read_seekable_for};
    let mut bytes = Vec::new();
    let written = profkit_bench::real_shaped::write(&mut bytes, 1_500_000).unwrap();
    // Enough events that the host plane's lines are taken in and stepped on the pool.
    assert!(written.events > 50_000, "{written:?}");
    let built = |threads: usize, parts: Parts| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let read = read_seekable_for(
                Cursor::new(&bytes),
                profkit_xplane::ReadOptions::default(),
                parts,
            )
            .unwrap();
            build_for(vec![read], &["host"], parts).encode()
        })
    };
    for tool in ["framework_op_stats", "overview_page"] {
        let parts = Parts::for_tool(tool);
        let one = built(1, parts);
        assert!(
            one == built(3, parts),
            "{tool}: the OpStats on three threads are not the ones on one thread"
        );
    }
}

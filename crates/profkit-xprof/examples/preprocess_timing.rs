//! Times xprof's preprocessing of an XSpace and the trace viewer's conversion:
//! `cargo run --release -p profkit-xprof --example preprocess_timing -- FILE [RUNS]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("FILE");
    let runs: usize = args.next().map_or(3, |r| r.parse().expect("RUNS"));
    let bytes = std::fs::read(&path).expect("read");
    for _ in 0..runs {
        let mut space = profkit_xplane::decode(bytes.clone()).expect("decode");
        let t = std::time::Instant::now();
        let unreproduced = profkit_xprof::preprocess::preprocess(&mut space);
        eprintln!(
            "preprocess {:.3} s ({} not reproduced)",
            t.elapsed().as_secs_f64(),
            unreproduced.len()
        );
        drop(space);
        let t = std::time::Instant::now();
        let mut out = Vec::new();
        let options = profkit_xprof::trace_viewer::TraceViewerOptions::default();
        profkit_xprof::trace_viewer::convert(
            std::io::Cursor::new(&bytes),
            &mut out,
            &options,
            None,
        )
        .expect("convert");
        eprintln!(
            "convert --to chrome {:.3} s, {} bytes",
            t.elapsed().as_secs_f64(),
            out.len()
        );
    }
}

//! Times the steps of building OpStats from an XSpace: `cargo run --release -p profkit-xprof
//! --example op_stats_timing -- FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("FILE");
    let t = std::time::Instant::now();
    let space = profkit_xplane::read(
        std::fs::File::open(&path).expect("open"),
        profkit_xplane::ReadOptions::default(),
    )
    .expect("read");
    eprintln!("read {:.3}", t.elapsed().as_secs_f64());
    let t = std::time::Instant::now();
    let mut s2 = space.clone();
    eprintln!("clone {:.3}", t.elapsed().as_secs_f64());
    let t = std::time::Instant::now();
    profkit_xprof::preprocess::preprocess(&mut s2);
    eprintln!("preprocess (with derived) {:.3}", t.elapsed().as_secs_f64());
    let t = std::time::Instant::now();
    let built = profkit_xprof::op_stats::build(vec![space], &["x"]);
    eprintln!("build {:.3}", t.elapsed().as_secs_f64());
    let t = std::time::Instant::now();
    let json = profkit_xprof::tools::framework_op_stats::to_json(&built.op_stats);
    eprintln!("json {:.3} {}", t.elapsed().as_secs_f64(), json.len());
}

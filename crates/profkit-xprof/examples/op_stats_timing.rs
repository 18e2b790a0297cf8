//! Times the steps of building OpStats from an XSpace: `cargo run --release -p profkit-xprof
//! --example op_stats_timing -- FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("FILE");
    let t = std::time::Instant::now();
    let bytes = std::fs::read(&path).expect("read");
    eprintln!("read bytes {:.3}", t.elapsed().as_secs_f64());
    let t = std::time::Instant::now();
    let space = profkit_xplane::decode(bytes).expect("decode");
    eprintln!("decode {:.3}", t.elapsed().as_secs_f64());
    let t = std::time::Instant::now();
    let file = std::fs::File::open(&path).expect("open");
    let again = profkit_xplane::read(file, profkit_xplane::ReadOptions::default()).expect("read");
    eprintln!(
        "read (checked as it arrives, then decoded) {:.3}",
        t.elapsed().as_secs_f64()
    );
    drop(again);
    let t = std::time::Instant::now();
    let file = std::fs::File::open(&path).expect("open");
    let planes = profkit_xprof::op_stats::read_space(file, profkit_xplane::ReadOptions::default())
        .expect("read_space");
    eprintln!(
        "read_space (the planes OpStats reads) {:.3}",
        t.elapsed().as_secs_f64()
    );
    drop(planes);
    let t = std::time::Instant::now();
    let built = profkit_xprof::op_stats::build(vec![space], &["x"]);
    eprintln!("build {:.3}", t.elapsed().as_secs_f64());
    let t = std::time::Instant::now();
    let json = profkit_xprof::tools::framework_op_stats::to_json(&built.op_stats);
    eprintln!("json {:.3} {}", t.elapsed().as_secs_f64(), json.len());
}

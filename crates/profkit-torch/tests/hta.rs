//! HolisticTraceAnalysis's analyses of a real trace, against the numbers HTA 0.5.0 gives for it
//! (`conformance/chrome/hta_analyses.py` compares every frame live, on the whole corpus).

use std::path::Path;

use profkit_torch::hta::{self, HtaTrace, Value};

fn read(name: &str) -> profkit_torch::Trace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/chrome/corpus/hta")
        .join(name);
    let file = std::fs::File::open(path).unwrap();
    profkit_torch::read_trace(std::io::BufReader::new(flate2::read::GzDecoder::new(file))).unwrap()
}

const SIMPLE_ADD: &str =
    "critical_path-simple_add-benchmark_result_493459_1694039959_trace.json.gz";

#[test]
fn temporal_and_kernel_type_breakdowns_are_htas() {
    let traces = [read(SIMPLE_ADD)];
    let trace = HtaTrace::load(&traces);
    let (temporal, skipped) = hta::temporal_breakdown(&trace);
    assert!(skipped.is_empty());
    let f = Value::Float;
    assert_eq!(
        temporal.rows,
        vec![vec![
            Value::Int(0),
            f(16_414_376.0),
            f(10_676.0),
            f(39_287.0),
            f(16_464_339.0),
            f(99.7),
            f(0.06),
            f(0.24),
        ]]
    );
    let (types, kernels) = hta::kernel_breakdown(&trace);
    assert_eq!(
        types.rows,
        vec![
            vec![Value::Str("MEMORY".into()), f(39_088.0), f(78.5)],
            vec![Value::Str("COMPUTATION".into()), f(10_676.0), f(21.5)],
        ]
    );
    let others = kernels
        .rows
        .iter()
        .find(|r| r[0] == Value::Str("others".into()))
        .unwrap();
    assert_eq!(others[1], f(418.0));
    assert!(matches!(others[4], Value::Float(s) if (s - 52.487187).abs() < 1e-6));
}

#[test]
fn launch_stats_are_htas() {
    let traces = [read(SIMPLE_ADD)];
    let trace = HtaTrace::load(&traces);
    let stats = hta::kernel_launch_stats(&trace);
    let (rank, frame) = &stats[0];
    assert_eq!(*rank, 0);
    let f = Value::Float;
    assert_eq!(
        frame.rows[..3],
        [
            vec![Value::Int(14), f(48.0), f(11.0), f(1.0)],
            vec![Value::Int(25), f(19.0), f(1.0), f(4.0)],
            vec![Value::Int(40), f(218.0), f(110.0), f(0.0)],
        ]
    );
}

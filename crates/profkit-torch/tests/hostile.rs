//! Damaged and hostile traces: reading fails with an error or succeeds, and the summaries of
//! whatever reads never panic.

use std::io::Read;
use std::path::Path;

use profkit_torch::hta::{self, HtaTrace};
use profkit_torch::key_averages::{Grouping, KeyAverages, SortKey, TableOptions};

fn golden() -> Vec<u8> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/torch/cnn/trace.json.gz");
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    text
}

fn summarise(text: &[u8]) {
    let Ok(trace) = profkit_torch::read_trace(text) else {
        return;
    };
    for grouping in [
        Grouping::default(),
        Grouping {
            input_shape: true,
            stack_n: 3,
            overload_name: true,
            python_functions: true,
        },
    ] {
        let averages = KeyAverages::new(&trace, &grouping);
        for (_, key) in SortKey::NAMES {
            let options = TableOptions {
                sort_by: Some(*key),
                top_level_events_only: grouping.overload_name,
                header: grouping.overload_name.then(|| "header".to_owned()),
                max_name_column_width: if grouping.overload_name { 0 } else { 55 },
                ..TableOptions::default()
            };
            averages.table(&options);
            averages.json(&options);
        }
    }
    let traces = [trace];
    let loaded = HtaTrace::load(&traces);
    hta::temporal_breakdown(&loaded);
    hta::kernel_breakdown(&loaded);
    hta::idle_time_breakdown(&loaded, hta::CONSECUTIVE_KERNEL_DELAY);
    hta::comm_comp_overlap(&loaded);
    hta::kernel_launch_stats(&loaded);
    hta::queue_length_summary(&loaded);
    hta::queue_length_time_series(&loaded);
    hta::memory_bw_summary(&loaded);
    hta::memory_bw_time_series(&loaded);
    hta::user_annotation_breakdown(&loaded, true);
    hta::user_annotation_breakdown(&loaded, false);
    hta::kernel_launch_stats_with(&loaded, false);
    hta::time_blocked_on_full_queue(&loaded, 0);
    hta::time_blocked_on_full_queue(&loaded, hta::MAX_QUEUE_LENGTH);
}

#[test]
fn truncated_and_flipped_traces_never_panic() {
    let text = golden();
    // Cut at many places (most cuts end inside a value: an error, never a panic).
    let step = text.len() / 40;
    for cut in (0..text.len()).step_by(step.max(1)) {
        summarise(&text[..cut]);
    }
    // Bytes changed here and there (digits into other digits, quotes, brackets).
    let mut state = 0x2545_f491_u64;
    for _ in 0..60 {
        let mut damaged = text.clone();
        for _ in 0..8 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % damaged.len() as u64) as usize;
            damaged[at] = b"9-.e\"[]{}0"[(state >> 32) as usize % 10];
        }
        summarise(&damaged);
    }
}

#[test]
fn extreme_values_never_panic() {
    let text = br#"{"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1,
       "ts": 9223372036854775.807, "dur": 9223372036854775.807,
       "args": {"Input Dims": [[9223372036854775807, 2, 3, 4], [-5, 2, 1, 1]],
                "Concrete Inputs": ["", "", "", "[0, 0]", "[1, 1]", "[1, 1]", "0"], "External id": -1}},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": -9223372036854775.808, "dur": 1,
       "args": {"Input Dims": [[4611686018427387904, 4], [4, 4611686018427387904]]}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1,
       "args": {"Bytes": 9223372036854775807, "Device Type": 0}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 2,
       "args": {"Bytes": 9223372036854775807, "Device Type": 0}},
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1e300, "dur": -1e300,
       "args": {"stream": "x", "correlation": 1e30, "External id": 3}}
    ], "with_flops": true, "profile_memory": 1}"#;
    summarise(text);
}

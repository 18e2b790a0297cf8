//! Prints torch's table of a Kineto trace (plain JSON), with the time the read and the table
//! took on stderr: the benchmark of docs/performance.md (`cargo run --release -p profkit-torch
//! --example torch_table -- TRACE.json`).

use std::time::Instant;

use profkit_torch::key_averages::{Grouping, KeyAverages, SortKey, TableOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: torch_table TRACE.json")?;
    let start = Instant::now();
    let file = std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(&path)?);
    let trace = profkit_torch::read_trace(file)?;
    let read = start.elapsed();
    let averages = KeyAverages::new(&trace, &Grouping::default());
    let options = TableOptions {
        sort_by: Some(SortKey::SelfCpuTimeTotal),
        row_limit: 10,
        ..TableOptions::default()
    };
    print!("{}", averages.table(&options));
    eprintln!(
        "{} events: read {:.2} s, table {:.2} s, total {:.2} s",
        trace.events.len(),
        read.as_secs_f64(),
        (start.elapsed() - read).as_secs_f64(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

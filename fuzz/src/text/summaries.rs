//! Target `text_summaries`: bytes read as event lists whose names, categories and threads are
//! drawn from pools that hold what breaks column layouts (names of 70,000 bytes, wide and
//! combining characters, control characters, newlines, the empty name), reported as `profkit
//! report` prints them: Paddle's summary tables (every sort key, unit, `op_detail` and
//! `thread_sep`) and the legacy report.
//!
//! No panic, whatever the names, and no text out of proportion: Paddle's tables are as wide as
//! their longest name (a name is cut only in an operator's detail rows, as Paddle cuts it), so a
//! table's text is bounded by its rows times the longest name, never more.

use profkit_events::report::legacy::{Report, ReportOptions};
use profkit_events::report::summary::{Forest, SortedKey, Summary, SummaryOptions, TimeUnit};
use profkit_events::{Event, EventKind, Recording, ThreadEvents};

/// A name no column is as wide as.
fn long_name() -> String {
    "op/".repeat(23_334)
}

fn names() -> Vec<String> {
    vec![
        String::new(),
        "matmul".into(),
        long_name(),
        "名前付きの演算".repeat(40),
        "e\u{301}\u{301}\u{301}".repeat(50),
        "tab\tnew\nline\r\u{1b}[31m".into(),
        "a/b/c".into(),
        "\u{1F600}".repeat(3000),
    ]
}

const CATEGORIES: [Option<&str>; 5] = [
    None,
    Some("Operator"),
    Some("UserDefined"),
    Some("Kernel"),
    Some("CudaRuntime"),
];

/// The recording `data` describes: every three bytes an event (kind, name and category, thread
/// and time step).
pub fn recording(data: &[u8]) -> Recording {
    let names = names();
    let mut threads: Vec<ThreadEvents> = Vec::new();
    let mut ns = 1_000u64;
    for chunk in data.chunks_exact(3) {
        let (a, b, c) = (chunk[0], chunk[1], chunk[2]);
        let kind = match a % 3 {
            0 => EventKind::Mark,
            1 => EventKind::PushRange,
            _ => EventKind::PopRange,
        };
        let name = names[usize::from(b) % names.len()].clone();
        let thread = u32::from(c % 3);
        ns += u64::from(c / 3) * 997;
        let mut event = Event::new(kind, name, thread, ns);
        if let Some(category) = CATEGORIES[usize::from(a / 3) % CATEGORIES.len()] {
            event = event.with_category(category);
        }
        match threads.iter_mut().find(|t| t.thread == thread) {
            Some(list) => list.events.push(event),
            None => {
                let mut list = ThreadEvents::new(thread);
                list.events.push(event);
                threads.push(list);
            }
        }
    }
    Recording {
        threads,
        ..Recording::default()
    }
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let Some((&options, events)) = data.split_first() else {
        return;
    };
    let recording = recording(events);
    let forest = Forest::from_recording(&recording);
    let sorted_by = [
        SortedKey::CPUTotal,
        SortedKey::CPUAvg,
        SortedKey::CPUMax,
        SortedKey::CPUMin,
        SortedKey::GPUTotal,
        SortedKey::GPUAvg,
        SortedKey::GPUMax,
        SortedKey::GPUMin,
    ][usize::from(options % 8)];
    let time_unit =
        [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns][usize::from(options / 8 % 4)];
    let summary = Summary::new(
        &forest,
        SummaryOptions {
            sorted_by,
            op_detail: options & 0x20 != 0,
            thread_sep: options & 0x40 != 0,
            time_unit,
        },
    );
    // Every row of every table is at most as wide as the longest name plus the other columns.
    let names = names();
    let widest = names.iter().map(String::len).max().unwrap_or(0) + 1024;
    let rows = (names.len() + CATEGORIES.len()) * 4 * 64;
    let text = summary.text();
    assert!(
        text.len() <= rows * widest,
        "the summary is {} bytes, more than {rows} rows of {widest}",
        text.len()
    );
    let report = Report::new(&recording, ReportOptions::default());
    let legacy = report.text();
    assert!(
        legacy.len() <= rows * widest,
        "the legacy report is {} bytes",
        legacy.len()
    );
}

/// What [`run`] reads of `data`.
pub fn describe(data: &[u8]) -> String {
    format!("{:#?}", recording(data.get(1..).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    #[test]
    fn smoke() {
        // Fewer inputs than other targets: each table is as wide as a 70,000-byte name.
        smoke::run_random(181, smoke::scaled(40), 120, run);
    }

    #[test]
    fn long_names_nested_on_every_thread() {
        // Push the long name, then every other name inside it, on three threads, in every layout.
        let mut events = Vec::new();
        for thread in 0..3u8 {
            for (name, category) in [(2u8, 1u8), (3, 2), (4, 3), (7, 4), (5, 0)] {
                events.extend([1 + 3 * category, name, thread + 3]);
            }
            for (name, category) in [(5u8, 0u8), (7, 4), (4, 3), (3, 2), (2, 1)] {
                events.extend([2 + 3 * category, name, thread + 3]);
            }
        }
        for options in (0..=u8::MAX).step_by(17) {
            let mut data = vec![options];
            data.extend(&events);
            run(&data);
        }
    }
}

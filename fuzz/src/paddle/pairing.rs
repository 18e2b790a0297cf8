//! Target `paddle_pairing`: bytes read as event lists, to pair and report.
//!
//! Every two bytes make an event: the kind (mark, push, pop), a name from a small pool (nested
//! and empty names included, so that same-name nesting, unmatched pops and leftover pushes are
//! common), the thread (one of four indices) and a time step. Pairing must account for every push
//! and pop (see [`super::check_recording`]); the ranges it makes, written as a `Profile` and read
//! back, pair into as many spans again (within [`super::MAX_NAMED_BYTES`] of full-path names).

use profkit_events::paddle::legacy;
use profkit_events::{Event, EventKind, Recording, ThreadEvents, pair};

const NAMES: [&str; 7] = ["a", "b", "c", "a/b", "", "x/y/z", "b/"];

/// The recording `data` describes.
pub fn recording(data: &[u8]) -> Recording {
    let mut threads: Vec<ThreadEvents> = Vec::new();
    let mut ns = 1_000u64;
    for pair in data.chunks_exact(2) {
        let (a, b) = (pair[0], pair[1]);
        let kind = match a % 3 {
            0 => EventKind::Mark,
            1 => EventKind::PushRange,
            _ => EventKind::PopRange,
        };
        let name = NAMES[usize::from(a / 3) % NAMES.len()];
        let thread = u32::from(b % 4) * 3;
        ns += u64::from(b / 4);
        let list = match threads.iter().position(|t| t.thread == thread) {
            Some(i) => &mut threads[i],
            None => {
                threads.push(ThreadEvents::new(thread));
                threads.last_mut().expect("just pushed")
            }
        };
        list.events.push(Event::new(kind, name, thread, ns));
    }
    Recording {
        threads,
        ..Recording::default()
    }
}

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let recording = recording(data);
    if !super::check_recording(&recording) {
        // The Profile names every range by its full path: past the budget, its text is what
        // takes the time (see `MAX_NAMED_BYTES`).
        return;
    }
    let spans: usize = pair(&recording.threads)
        .threads
        .iter()
        .map(|t| t.spans.len())
        .sum();
    let profile = legacy::from_recording(&recording);
    assert_eq!(profile.events.len(), spans, "a span not written");
    let back = legacy::to_recording(
        &legacy::decode_profile(&legacy::encode_profile(&profile)).expect("decodes"),
    );
    let again: usize = pair(&back.threads)
        .threads
        .iter()
        .map(|t| t.spans.len())
        .sum();
    assert_eq!(again, spans, "the written ranges do not pair back");
    assert_eq!(pair(&back.threads).warnings().count(), 0);
}

/// What an input means to the target.
pub fn describe(data: &[u8]) -> String {
    format!("{:#?}", recording(data))
}

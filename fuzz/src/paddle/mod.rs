//! Fuzz targets for the Paddle readers and the pairing of `profkit-events`.
//!
//! | target             | input                          | what it checks                                   |
//! |--------------------|--------------------------------|--------------------------------------------------|
//! | `paddle_profile`   | raw bytes, as a legacy Profile | [`profile`]: whole and streaming decoders, errors, the event model, the report |
//! | `paddle_nodetrees` | raw bytes, as node trees       | [`nodetrees`]: the same for `NodeTreesProto`     |
//! | `paddle_pairing`   | bytes that make event lists    | [`pairing`]: every event a span or a warning, the report's calls, a Profile round trip |

pub mod nodetrees;
pub mod pairing;
pub mod profile;

use std::path::PathBuf;

use profkit_events::report::{Place, Report, ReportOptions, SortKey};
use profkit_events::{EventKind, PathId, Recording, Spans, pair};

/// Asserts two messages are the same by their encodings. `==` on the prost structs is wrong for
/// floats (`warps_per_sm: NaN` is not equal to itself; `-0.0 == 0.0` although the bits differ),
/// the encoding is exact; the two are printed in full when they differ.
#[track_caller]
pub fn assert_same_message<M: prost::Message + std::fmt::Debug>(
    actual: &M,
    expected: &M,
    what: &str,
) {
    assert!(
        actual.encode_to_vec() == expected.encode_to_vec(),
        "{what}:\n  left: {actual:?}\n right: {expected:?}"
    );
}

/// The Paddle inputs of `conformance/paddle/` with the given file name (`input.pb` or
/// `input.paddle_trace.pb`), to mutate.
pub fn seed_files(file: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/paddle");
    let Ok(cases) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut cases: Vec<PathBuf> = cases.filter_map(|e| e.ok().map(|e| e.path())).collect();
    cases.sort();
    cases
        .iter()
        .filter_map(|case| std::fs::read(case.join(file)).ok())
        .collect()
}

/// The most bytes of path text the checks that name every span by its full path (the report's
/// rows, a written legacy `Profile`) may build for one input. Paddle names a nested range by its
/// whole path, so a recording nested `d` deep names `d` times as much text as it has events: by
/// design, not a fault of the code under test. Past this budget those checks are left out; the
/// pairing checks, linear in the events, are always made.
pub const MAX_NAMED_BYTES: usize = 1 << 16;

/// The bytes of path text naming every span of `spans` by its full path takes.
pub fn named_bytes(spans: &Spans) -> usize {
    let paths = &spans.paths;
    // A parent is interned before its children, so one pass in id order sees it first.
    let mut len = vec![0usize; paths.len()];
    for i in 0..paths.len() {
        let id = PathId::from_index(i);
        let above = paths
            .parent(id)
            .and_then(|p| len.get(p.index()))
            .map_or(0, |l| l + 1);
        len[i] = above.saturating_add(paths.last(id).len());
    }
    spans
        .threads
        .iter()
        .flat_map(|t| &t.spans)
        .fold(0usize, |sum, s| {
            sum.saturating_add(len.get(s.path.index()).copied().unwrap_or(0))
        })
}

/// Checks what holds for any recording: pairing accounts for every push and pop, and (within
/// [`MAX_NAMED_BYTES`]) the report builds, counting in its per-thread section exactly the spans
/// pairing made. Returns whether the report was checked.
pub fn check_recording(recording: &Recording) -> bool {
    let spans = pair(&recording.threads);
    let mut total_spans = 0;
    for (thread, paired) in recording.threads.iter().zip(&spans.threads) {
        let ranges = thread
            .events
            .iter()
            .filter(|e| e.kind != EventKind::Mark)
            .count();
        assert_eq!(
            paired.spans.len() * 2 + paired.warnings.len(),
            ranges,
            "pairing lost or invented events"
        );
        assert_eq!(paired.event_paths.len(), thread.events.len());
        let mut used = vec![false; thread.events.len()];
        for s in &paired.spans {
            assert!(s.push_index < s.pop_index);
            let (push, pop) = (&thread.events[s.push_index], &thread.events[s.pop_index]);
            assert_eq!(push.kind, EventKind::PushRange);
            assert_eq!(pop.kind, EventKind::PopRange);
            assert_eq!(push.name, pop.name);
            assert!(
                !used[s.push_index] && !used[s.pop_index],
                "an event in two spans"
            );
            used[s.push_index] = true;
            used[s.pop_index] = true;
            if let Some(p) = s.parent {
                assert!(paired.spans[p].push_index < s.push_index);
                assert_eq!(paired.spans[p].depth + 1, s.depth);
            }
        }
        total_spans += paired.spans.len();
    }
    if named_bytes(&spans) > MAX_NAMED_BYTES {
        return false;
    }
    // One of three report variants per input keeps the target fast; inputs vary enough.
    let variants = [
        (SortKey::Default, Place::Cpu),
        (SortKey::Calls, Place::All),
        (SortKey::Ave, Place::Cuda),
    ];
    let pick = recording.event_count() % variants.len();
    for &(sort, place) in &variants[pick..=pick] {
        let options = ReportOptions {
            sort,
            place: Some(place),
            max_depth: usize::MAX,
        };
        let report = Report::from_spans(recording, &spans, options);
        let per_thread = report.sections.last().expect("a per-thread section");
        assert!(!per_thread.merged);
        let mut calls = 0u64;
        let mut stack: Vec<&profkit_events::report::Row> = per_thread
            .tables
            .iter()
            .flat_map(|t| t.rows.iter())
            .collect();
        while let Some(row) = stack.pop() {
            calls += row.calls;
            stack.extend(row.children.iter());
        }
        // A row's children are looked up by name over all tables, so threads listed twice may
        // show a child twice; with distinct thread indices every span is counted once.
        let mut indices: Vec<u32> = recording.threads.iter().map(|t| t.thread).collect();
        indices.sort_unstable();
        indices.dedup();
        if indices.len() == recording.threads.len() {
            assert_eq!(
                calls, total_spans as u64,
                "the report's calls are not the spans"
            );
        }
        assert_eq!(
            report.sections.len(),
            1 + usize::from(recording.threads.len() >= 2)
        );
        let text = report.text();
        assert!(text.contains("Event Summary"));
        serde_json::to_string(&report).expect("the report serialises");
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smoke;

    fn mutate_all(seeds: &[Vec<u8>], seed: u64, target: fn(&[u8])) {
        for (i, valid) in seeds.iter().enumerate() {
            target(valid);
            for prefix in smoke::truncations(valid) {
                target(prefix);
            }
            for input in smoke::bit_flips(valid) {
                target(&input);
            }
            for input in smoke::length_corruptions(valid) {
                target(&input);
            }
            for input in smoke::havoc(valid, seed + i as u64, smoke::scaled(100)) {
                target(&input);
            }
        }
    }

    /// Some truncations, bit flips and havoc of a large valid input.
    fn sparse(valid: &[u8], seed: u64, target: fn(&[u8])) {
        target(valid);
        let step = (valid.len() / smoke::scaled(100)).max(1);
        for len in (0..valid.len()).step_by(step) {
            target(&valid[..len]);
        }
        for input in smoke::bit_flips(valid).step_by(step * 2) {
            target(&input);
        }
        for input in smoke::havoc(valid, seed, smoke::scaled(40)) {
            target(&input);
        }
    }

    #[test]
    fn smoke_profile_random() {
        smoke::run_random(71, smoke::scaled(400), 96, profile::run);
    }

    #[test]
    fn smoke_profile_mutated_seeds() {
        let seeds = seed_files("input.pb");
        assert!(
            seeds.len() >= 5,
            "the Paddle cases in conformance/paddle are missing"
        );
        // The generated cases in full; of the real files (alike, and larger), one, sparsely.
        let (large, small): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
            seeds.into_iter().partition(|s| s.len() > 1000);
        mutate_all(&small, 72, profile::run);
        if let Some(valid) = large.first() {
            sparse(valid, 79, profile::run);
        }
    }

    #[test]
    fn smoke_nodetrees_random() {
        smoke::run_random(73, smoke::scaled(400), 96, nodetrees::run);
        // Random bytes after a plausible version reach the thread tree decoder.
        let mut rng = smoke::XorShift::new(74);
        for _ in 0..smoke::scaled(300) {
            let n = rng.below(64);
            let body = rng.bytes(n);
            let mut input = vec![
                0x0a,
                0x05,
                b'1',
                b'.',
                b'0',
                b'.',
                b'2',
                0x1a,
                body.len() as u8,
            ];
            input.extend_from_slice(&body);
            nodetrees::run(&input);
        }
    }

    #[test]
    fn smoke_nodetrees_mutated_seeds() {
        let seeds = seed_files("input.paddle_trace.pb");
        assert!(
            seeds.len() >= 3,
            "the Paddle cases in conformance/paddle are missing"
        );
        // The real sample is large: its truncations and bit flips are many; keep its havoc.
        let (large, small): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
            seeds.into_iter().partition(|s| s.len() > 4000);
        mutate_all(&small, 75, nodetrees::run);
        for (i, valid) in large.iter().enumerate() {
            sparse(valid, 76 + i as u64, nodetrees::run);
        }
    }

    #[test]
    fn smoke_pairing() {
        smoke::run_random(77, smoke::scaled(600), 128, pairing::run);
        // Balanced-looking inputs: pushes then pops of the same names.
        let mut rng = smoke::XorShift::new(78);
        for _ in 0..smoke::scaled(200) {
            let n = rng.below(20);
            let mut input = Vec::new();
            for _ in 0..n {
                let name = (rng.below(7) * 3) as u8;
                let thread = rng.below(256) as u8;
                input.extend_from_slice(&[name + 1, thread]);
            }
            for _ in 0..n {
                let name = (rng.below(7) * 3) as u8;
                input.extend_from_slice(&[name + 2, rng.below(256) as u8]);
            }
            pairing::run(&input);
        }
    }
}

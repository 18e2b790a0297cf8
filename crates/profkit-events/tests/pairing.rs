//! Pairing pushes and pops into spans: Paddle's matching rule, warnings, paths, the tree.

use profkit_events::span::events_from_ranges;
use profkit_events::{Event, EventKind, Paths, ThreadEvents, Warning, pair, pair_thread};

fn thread(events: &[(&str, &'static str, u64)]) -> ThreadEvents {
    let mut t = ThreadEvents::new(0);
    t.events = events
        .iter()
        .map(|&(kind, name, ns)| match kind {
            "push" => Event::push(name, 0, ns),
            "pop" => Event::pop(name, 0, ns),
            _ => Event::mark(name, 0, ns),
        })
        .collect();
    t
}

fn paths_of(t: &ThreadEvents) -> (Vec<String>, Vec<Warning>) {
    let mut paths = Paths::new();
    let spans = pair_thread(t, &mut paths);
    (
        spans.spans.iter().map(|s| paths.text(s.path)).collect(),
        spans.warnings,
    )
}

#[test]
fn nested_ranges_are_named_by_their_parents() {
    let t = thread(&[
        ("push", "step", 0),
        ("push", "forward", 10),
        ("push", "matmul", 20),
        ("pop", "matmul", 30),
        ("pop", "forward", 40),
        ("mark", "note", 45),
        ("push", "backward", 50),
        ("pop", "backward", 60),
        ("pop", "step", 70),
    ]);
    let mut paths = Paths::new();
    let spans = pair_thread(&t, &mut paths);
    let names: Vec<String> = spans.spans.iter().map(|s| paths.text(s.path)).collect();
    assert_eq!(
        names,
        [
            "step/forward/matmul",
            "step/forward",
            "step/backward",
            "step"
        ]
    );
    assert!(spans.warnings.is_empty());
    assert_eq!(spans.marks, [5]);
    // The tree: step has forward and backward; forward has matmul.
    let children = spans.children();
    assert_eq!(spans.roots(), [3]);
    assert_eq!(children[3], [1, 2]);
    assert_eq!(children[1], [0]);
    assert_eq!(spans.spans[0].depth, 2);
    assert_eq!(spans.spans[0].parent, Some(1));
    assert_eq!((spans.spans[1].start_ns, spans.spans[1].end_ns), (10, 40));
    assert_eq!(paths.last(spans.spans[0].path), "matmul");
    assert_eq!(paths.depth(spans.spans[0].path), 2);
    assert_eq!(
        paths.text_len(spans.spans[0].path),
        "step/forward/matmul".len()
    );
}

#[test]
fn a_pop_closes_the_most_recent_push_of_its_name_not_the_top() {
    // push a, push b, pop a, pop b: a closes first although b is on top.
    let (names, warnings) = paths_of(&thread(&[
        ("push", "a", 0),
        ("push", "b", 1),
        ("pop", "a", 2),
        ("pop", "b", 3),
    ]));
    assert_eq!(names, ["a", "a/b"]);
    assert!(warnings.is_empty());
}

#[test]
fn same_name_nesting_pairs_innermost_first() {
    let t = thread(&[
        ("push", "f", 0),
        ("push", "f", 1),
        ("push", "f", 2),
        ("pop", "f", 3),
        ("pop", "f", 4),
        ("pop", "f", 5),
    ]);
    let mut paths = Paths::new();
    let spans = pair_thread(&t, &mut paths);
    let got: Vec<(String, u64, u64)> = spans
        .spans
        .iter()
        .map(|s| (paths.text(s.path), s.start_ns, s.end_ns))
        .collect();
    assert_eq!(
        got,
        [
            ("f/f/f".to_owned(), 2, 3),
            ("f/f".to_owned(), 1, 4),
            ("f".to_owned(), 0, 5)
        ]
    );
}

#[test]
fn unmatched_pops_and_leftover_pushes_are_warnings() {
    let t = thread(&[
        ("pop", "early", 0),
        ("push", "open", 1),
        ("push", "child", 2),
        ("pop", "child", 3),
        ("pop", "other", 4),
        ("push", "again", 5),
    ]);
    let (names, warnings) = paths_of(&t);
    // The child of a range never closed is still named under it, as Paddle names it.
    assert_eq!(names, ["open/child"]);
    assert_eq!(
        warnings,
        [
            Warning::UnmatchedPop {
                thread: 0,
                index: 0,
                name: "early".into(),
                cpu_ns: 0
            },
            Warning::UnmatchedPop {
                thread: 0,
                index: 4,
                name: "other".into(),
                cpu_ns: 4
            },
            Warning::LeftoverPush {
                thread: 0,
                index: 1,
                name: "open".into(),
                cpu_ns: 1
            },
            Warning::LeftoverPush {
                thread: 0,
                index: 5,
                name: "again".into(),
                cpu_ns: 5
            },
        ]
    );
    // A span under a leftover push has no parent span.
    let mut paths = Paths::new();
    let spans = pair_thread(&t, &mut paths);
    assert_eq!(spans.spans[0].parent, None);
    assert_eq!(
        warnings[0].to_string(),
        "thread 0, event 0: pop of \"early\" at 0 ns has no push; left out"
    );
}

#[test]
fn full_path_names_are_kept() {
    // Paddle's files store full paths; pairing must not double them.
    let (names, _) = paths_of(&thread(&[
        ("push", "a", 0),
        ("push", "a/b", 1),
        ("push", "a/b/c", 2),
        ("pop", "a/b/c", 3),
        ("push", "x/y", 4),
        ("pop", "x/y", 5),
        ("pop", "a/b", 6),
        ("pop", "a", 7),
    ]));
    assert_eq!(names, ["a/b/c", "a/b/x/y", "a/b", "a"]);
}

#[test]
fn paths_round_trip_any_text() {
    let mut paths = Paths::new();
    for text in ["", "/", "a//b", "/x", "x/", "a/b/c", "héllo/wörld"] {
        let id = paths.intern(text);
        assert_eq!(paths.text(id), text);
        assert_eq!(paths.text_len(id), text.len());
        assert_eq!(paths.intern(text), id, "interning is stable");
    }
    let a = paths.intern("a");
    let ab = paths.join(Some(a), "b");
    assert_eq!(paths.intern("a/b"), ab);
    assert_eq!(paths.parent(ab), Some(a));
}

#[test]
fn every_push_and_pop_is_a_span_or_a_warning() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..200 {
        let mut t = ThreadEvents::new(0);
        let n = (next() % 60) as usize;
        for i in 0..n {
            let name = ["a", "b", "c"][(next() % 3) as usize];
            let kind = match next() % 5 {
                0 => EventKind::Mark,
                1 | 2 => EventKind::PushRange,
                _ => EventKind::PopRange,
            };
            t.events.push(Event::new(kind, name, 0, i as u64));
        }
        let spans = pair(std::slice::from_ref(&t));
        let th = &spans.threads[0];
        let ranges = t
            .events
            .iter()
            .filter(|e| e.kind != EventKind::Mark)
            .count();
        assert_eq!(th.spans.len() * 2 + th.warnings.len(), ranges);
        assert_eq!(th.event_paths.len(), t.events.len());
        for s in &th.spans {
            assert!(s.push_index < s.pop_index);
            assert_eq!(t.events[s.push_index].name, t.events[s.pop_index].name);
        }
    }
}

#[test]
fn ranges_rebuild_events_that_pair_back() {
    // Touching siblings, a zero-length range, parent and child ending together.
    let ranges = vec![
        ("p", 0, 100),
        ("p/a", 0, 50),
        ("p/b", 50, 100),
        ("p/b/z", 60, 60),
        ("q", 100, 100),
    ];
    let events = events_from_ranges(7, &ranges);
    let kinds: Vec<(EventKind, &str, u64)> = events
        .iter()
        .map(|e| (e.kind, &*e.name, e.cpu_ns))
        .collect();
    assert_eq!(
        kinds,
        [
            (EventKind::PushRange, "p", 0),
            (EventKind::PushRange, "p/a", 0),
            (EventKind::PopRange, "p/a", 50),
            (EventKind::PushRange, "p/b", 50),
            (EventKind::PushRange, "p/b/z", 60),
            (EventKind::PopRange, "p/b/z", 60),
            (EventKind::PopRange, "p/b", 100),
            (EventKind::PopRange, "p", 100),
            (EventKind::PushRange, "q", 100),
            (EventKind::PopRange, "q", 100),
        ]
    );
    assert!(events.iter().all(|e| e.thread == 7));
    let mut t = ThreadEvents::new(7);
    t.events = events;
    let (names, warnings) = paths_of(&t);
    assert!(warnings.is_empty());
    assert_eq!(names, ["p/a", "p/b/z", "p/b", "p", "q"]);
}

/// Spans under a long run of pushes that are never closed take their parent from the closed push
/// above the run, one step per push: pairing stays linear (this input took seconds before).
#[test]
fn spans_under_many_leftover_pushes_find_their_closed_parent() {
    const LEFT: usize = 20_000;
    let mut t = ThreadEvents::new(0);
    t.events.push(Event::push("outer", 0, 0));
    for i in 0..LEFT {
        t.events.push(Event::push("left", 0, 1 + i as u64));
    }
    for i in 0..LEFT {
        let ns = 100_000 + 2 * i as u64;
        t.events.push(Event::push("inner", 0, ns));
        t.events.push(Event::pop("inner", 0, ns + 1));
    }
    t.events.push(Event::pop("outer", 0, 200_000));
    let mut paths = Paths::new();
    let spans = pair_thread(&t, &mut paths);
    assert_eq!(spans.spans.len(), LEFT + 1);
    assert_eq!(spans.warnings.len(), LEFT);
    let outer = spans.spans.len() - 1;
    assert_eq!(paths.text(spans.spans[outer].path), "outer");
    for span in &spans.spans[..LEFT] {
        assert_eq!(span.parent, Some(outer));
        assert_eq!(span.depth, 1);
    }
}

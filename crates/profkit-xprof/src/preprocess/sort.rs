//! TSL's `SortXPlane` (stable, as xprof behaves on real TPU profiles) and `SortXLine` (libstdc++'s `std::sort`).

use std::cmp::Reverse;

use profkit_events::report::std_sort;
use profkit_xplane::{XEvent, XLine};

/// Where `SortXLine` puts an event: by offset, then longer first.
fn rank(event: &XEvent) -> (i64, Reverse<i64>) {
    (event.offset_ps().unwrap_or(0), Reverse(event.duration_ps))
}

/// The rank of an event with this key (offset, duration).
fn key_rank(&(offset, duration): &(i64, i64)) -> (i64, Reverse<i64>) {
    (offset, Reverse(duration))
}

/// Appends `added` to the line's events and sorts them as [`sort_events`] does. Where the line's
/// events are in order and no two of all events share a rank (so that every sort gives the one
/// order, as on real threadpool lines), each added event goes straight to its place, the events
/// after it moved up once, in place, rather than the whole line sorted and permuted (which swaps
/// events across the line).
pub(crate) fn insert_sorted(line: &mut XLine, mut added: Vec<XEvent>) {
    let old = line.events.len();
    let ranks = added.iter().map(rank).collect();
    if let Some(places) = places(line.events.iter().map(rank), ranks) {
        // `places[j]`: the index among all events of the `j`th added event in rank order.
        let mut order: Vec<usize> = (0..added.len()).collect();
        order.sort_by_key(|&j| added.get(j).map(rank));
        let events = &mut line.events;
        events.reserve_exact(added.len());
        events.resize_with(old + added.len(), XEvent::default);
        // From the end: the old events past each added event's place move up by the number of
        // added events from there on, into free slots, each old event moved once.
        let mut moved_from = old;
        for (j, (&place, &from)) in places.iter().zip(&order).enumerate().rev() {
            let first = place - j;
            for i in (first..moved_from).rev() {
                events.swap(i, i + j + 1);
            }
            if let (Some(slot), Some(event)) = (events.get_mut(place), added.get_mut(from)) {
                *slot = std::mem::take(event);
            }
            moved_from = first;
        }
        return;
    }
    line.events.reserve_exact(added.len());
    line.events.append(&mut added);
    sort_events(line);
}

/// For [`insert_sorted`]: where each of `added`, taken in rank order, goes among all events, when
/// `events` are strictly sorted and no rank is shared; `None` otherwise. One walk over the
/// events, merging the added ones in.
fn places(
    events: impl Iterator<Item = (i64, Reverse<i64>)>,
    mut ranks: Vec<(i64, Reverse<i64>)>,
) -> Option<Vec<usize>> {
    let mut len = 0;
    ranks.sort_unstable();
    if ranks.windows(2).any(|w| matches!(w, [a, b] if a == b)) {
        return None;
    }
    let mut places = Vec::with_capacity(ranks.len());
    let mut pending = ranks.iter().peekable();
    let mut previous: Option<(i64, Reverse<i64>)> = None;
    for (i, r) in events.enumerate() {
        len = i + 1;
        if previous.is_some_and(|p| p >= r) {
            return None;
        }
        previous = Some(r);
        while let Some(&&a) = pending.peek() {
            if a > r {
                break;
            }
            if a == r {
                return None;
            }
            places.push(i + places.len());
            pending.next();
        }
    }
    for _ in pending {
        places.push(len + places.len());
    }
    Some(places)
}

/// Events by offset, then longer first, with a stable sort (equal keys keep their order).
pub(crate) fn sort_events_stable(line: &mut XLine) {
    if line.events.is_sorted_by_key(rank) {
        return;
    }
    let mut order: Vec<usize> = (0..line.events.len()).collect();
    order.sort_by_key(|&i| {
        let e = line.events.get(i);
        let offset = e.and_then(|e| e.offset_ps()).unwrap_or(0);
        let duration = e.map_or(0, |e| e.duration_ps);
        (offset, std::cmp::Reverse(duration))
    });
    permute(&mut line.events, &order);
}

/// TSL's `SortXLine`: events by offset, then longer first, with `std::sort`.
pub(crate) fn sort_events(line: &mut XLine) {
    let keys: Vec<(i64, i64)> = line
        .events
        .iter()
        .map(|e| (e.offset_ps().unwrap_or(0), e.duration_ps))
        .collect();
    if let Some(order) = sort_order(&keys) {
        permute(&mut line.events, &order);
    }
}

/// The order `SortXLine` gives events of these keys (offset, duration), as indices; `None` when
/// they are in it already.
fn sort_order(keys: &[(i64, i64)]) -> Option<Vec<usize>> {
    if keys
        .windows(2)
        .all(|w| matches!(w, [a, b] if key_rank(a) < key_rank(b)))
    {
        // The one order any sort gives.
        return None;
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let key = |i: usize| keys.get(i).copied().unwrap_or((0, 0));
    // Where no two events share a key, every sort gives the one order: Rust's (fast on the
    // nearly sorted lines xprof sorts) will do. Otherwise libstdc++'s order of equal keys counts.
    let rank = |i: usize| key_rank(&key(i));
    order.sort_by_key(|&i| rank(i));
    let tied = order
        .windows(2)
        .any(|w| matches!(w, [a, b] if rank(*a) == rank(*b)));
    if tied {
        order = (0..keys.len()).collect();
        std_sort(&mut order, &|&a: &usize, &b: &usize| {
            let (ka, kb) = (key(a), key(b));
            ka.0 < kb.0 || (ka.0 == kb.0 && ka.1 > kb.1)
        });
    }
    Some(order)
}

/// The order [`insert_sorted`] gives a line's events of keys `keys` (offset, duration) once events
/// of keys `added` are added: indices into `keys` followed by `added`.
#[cfg(test)]
pub(crate) fn insert_order(keys: &[(i64, i64)], added: &[(i64, i64)]) -> Vec<usize> {
    insert_order_of(keys.len(), || keys.iter().copied(), added)
}

/// [`insert_order`] of the `old` keys that `keys` gives (as many times as needed: once when the
/// line is in order, which is what makes the keys of a long line worth not gathering).
#[cfg(test)]
pub(crate) fn insert_order_of<I: Iterator<Item = (i64, i64)>>(
    old: usize,
    keys: impl Fn() -> I,
    added: &[(i64, i64)],
) -> Vec<usize> {
    insert_plan_of(keys, added).into_order(old, added.len())
}

/// Where events added to a line go among its `old` events: the added events' places alone
/// (16 bytes an added event, not 8 an event of the line) when the line is in order, else the
/// whole order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum InsertPlan {
    /// Each added event's place in the line's new order with its index among the added, by
    /// place; the line's own events fill the other places in their order.
    Places(Vec<(usize, usize)>),
    /// The new order: indices into the line's events, then `old` plus the added event's index.
    Order(Vec<usize>),
}

impl InsertPlan {
    /// The new order, whole (see [`InsertPlan::Order`]).
    #[cfg(test)]
    pub(crate) fn into_order(self, old: usize, added: usize) -> Vec<usize> {
        match self {
            InsertPlan::Order(order) => order,
            InsertPlan::Places(places) => {
                let mut order = vec![usize::MAX; old + added];
                for (place, j) in places {
                    if let Some(slot) = order.get_mut(place) {
                        *slot = old + j;
                    }
                }
                let mut next = 0;
                for slot in &mut order {
                    if *slot == usize::MAX {
                        *slot = next;
                        next += 1;
                    }
                }
                order
            }
        }
    }
}

/// [`insert_order_of`] as an [`InsertPlan`].
pub(crate) fn insert_plan_of<I: Iterator<Item = (i64, i64)>>(
    keys: impl Fn() -> I,
    added: &[(i64, i64)],
) -> InsertPlan {
    let ranks = added.iter().map(key_rank).collect();
    if let Some(places) = places(keys().map(|k| key_rank(&k)), ranks) {
        let mut by_rank: Vec<usize> = (0..added.len()).collect();
        by_rank.sort_by_key(|&j| added.get(j).map(key_rank));
        return InsertPlan::Places(places.into_iter().zip(by_rank).collect());
    }
    let all: Vec<(i64, i64)> = keys().chain(added.iter().copied()).collect();
    InsertPlan::Order(sort_order(&all).unwrap_or_else(|| (0..all.len()).collect()))
}

/// Reorders `items` in place so that position `i` holds what was at `order[i]` (`order` a
/// permutation), following its cycles rather than building a second vector.
fn permute<T>(items: &mut [T], order: &[usize]) {
    let mut done = vec![false; items.len()];
    for start in 0..items.len() {
        if done.get(start).copied().unwrap_or(true) {
            continue;
        }
        let mut at = start;
        while let Some(&from) = order.get(at) {
            if let Some(d) = done.get_mut(at) {
                *d = true;
            }
            if from == start || from >= items.len() {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use profkit_xplane::{XEvent, XLine, x_event};

    fn line(events: &[(i64, i64)]) -> XLine {
        XLine {
            events: events
                .iter()
                .enumerate()
                .map(|(i, &(offset, duration))| XEvent {
                    metadata_id: i as i64,
                    data: Some(x_event::Data::OffsetPs(offset)),
                    duration_ps: duration,
                    stats: Vec::new(),
                })
                .collect(),
            ..XLine::default()
        }
    }

    /// `insert_sorted` gives what appending and `sort_events` give: sorted lines with and
    /// without shared ranks, unsorted lines, added events before, among and after the others.
    #[test]
    fn insert_sorted_is_append_then_sort() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % n) as i64
        };
        for case in 0..400 {
            let old_len = next(40) as usize;
            let spread = if case % 3 == 0 { 10 } else { 1000 };
            let mut old: Vec<(i64, i64)> = (0..old_len).map(|_| (next(spread), next(5))).collect();
            if case % 4 != 0 {
                old.sort_by_key(|&(o, d)| (o, std::cmp::Reverse(d)));
            }
            let added: Vec<(i64, i64)> = (0..next(12)).map(|_| (next(spread), next(50))).collect();
            let mut expected = line(&old);
            let mut got = line(&old);
            let added_line = line(&added);
            let mut added_events = added_line.events.clone();
            for (i, e) in added_events.iter_mut().enumerate() {
                e.metadata_id = 1000 + i as i64;
            }
            expected.events.extend(added_events.iter().cloned());
            super::sort_events(&mut expected);
            // The order alone, as an indexed plane takes it.
            let order = super::insert_order(&old, &added);
            let all: Vec<XEvent> = got.events.iter().chain(&added_events).cloned().collect();
            let ordered: Vec<XEvent> = order.iter().map(|&i| all[i].clone()).collect();
            assert_eq!(ordered, expected.events, "case {case}, the order alone");
            super::insert_sorted(&mut got, added_events);
            assert_eq!(got.events, expected.events, "case {case}");
        }
    }

    #[test]
    fn permute_follows_cycles() {
        let mut items = vec!['a', 'b', 'c', 'd', 'e'];
        super::permute(&mut items, &[3, 0, 4, 1, 2]);
        assert_eq!(items, vec!['d', 'a', 'e', 'b', 'c']);
    }
}

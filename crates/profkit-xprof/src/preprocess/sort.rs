//! TSL's `SortXPlane` (stable, as xprof behaves on real TPU profiles) and `SortXLine` (libstdc++'s `std::sort`).

use profkit_events::report::std_sort;
use profkit_xplane::XLine;

/// Events by offset, then longer first, with a stable sort (equal keys keep their order).
pub(crate) fn sort_events_stable(line: &mut XLine) {
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
    let mut order: Vec<usize> = (0..line.events.len()).collect();
    let key = |i: usize| keys.get(i).copied().unwrap_or((0, 0));
    // Where no two events share a key, every sort gives the one order: Rust's (fast on the
    // nearly sorted lines xprof sorts) will do. Otherwise libstdc++'s order of equal keys counts.
    let rank = |i: usize| {
        let (offset, duration) = key(i);
        (offset, std::cmp::Reverse(duration))
    };
    order.sort_by_key(|&i| rank(i));
    let tied = order
        .windows(2)
        .any(|w| matches!(w, [a, b] if rank(*a) == rank(*b)));
    if tied {
        order = (0..line.events.len()).collect();
        std_sort(&mut order, &|&a: &usize, &b: &usize| {
            let (ka, kb) = (key(a), key(b));
            ka.0 < kb.0 || (ka.0 == kb.0 && ka.1 > kb.1)
        });
    }
    permute(&mut line.events, &order);
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
    #[test]
    fn permute_follows_cycles() {
        let mut items = vec!['a', 'b', 'c', 'd', 'e'];
        super::permute(&mut items, &[3, 0, 4, 1, 2]);
        assert_eq!(items, vec!['d', 'a', 'e', 'b', 'c']);
    }
}

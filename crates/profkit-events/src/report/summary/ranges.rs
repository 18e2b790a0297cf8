//! Paddle's time-range arithmetic (`statistic_helper`): merging, summing, intersecting.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Paddle's `merge_self_ranges`: sorted by start (stably), overlapping and touching ranges joined.
pub(super) fn merge_self(mut ranges: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    ranges.sort_by_key(|r| r.0);
    merge_sorted(ranges)
}

/// [`merge_self`] of ranges already sorted by start (stably).
fn merge_sorted(ranges: impl IntoIterator<Item = (i64, i64)>) -> Vec<(i64, i64)> {
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for r in ranges {
        match merged.last_mut() {
            None => merged.push(r),
            Some(last) => {
                if r.1 > last.1 {
                    if r.0 <= last.1 {
                        last.1 = r.1;
                    } else {
                        merged.push(r);
                    }
                }
            }
        }
    }
    merged
}

/// `sum_ranges(&merge_sorted(ranges))` without the merged list: each merged range is added once
/// it can grow no more, in order, as the sum over the list adds them.
fn merged_sum_sorted(ranges: impl IntoIterator<Item = (i64, i64)>) -> i64 {
    let mut total = 0i64;
    let mut last: Option<(i64, i64)> = None;
    for r in ranges {
        match last.as_mut() {
            None => last = Some(r),
            Some(l) => {
                if r.1 > l.1 {
                    if r.0 <= l.1 {
                        l.1 = r.1;
                    } else {
                        total = total.saturating_add(l.1.saturating_sub(l.0));
                        *l = r;
                    }
                }
            }
        }
    }
    if let Some(l) = last {
        total = total.saturating_add(l.1.saturating_sub(l.0));
    }
    total
}

/// The merged time of lists of ranges taken one after the other (`sum_ranges(merge_self(..))` of
/// their concatenation). When every list is sorted by start (stably), the lists are merged as
/// they are read, without a copy: ties between lists go to the earlier list, as a stable sort of
/// the concatenation orders them.
pub(super) fn merged_time(lists: &[(&[(i64, i64)], bool)]) -> i64 {
    if !lists.iter().all(|&(_, sorted)| sorted) {
        let mut all: Vec<(i64, i64)> = lists.iter().flat_map(|(l, _)| l.iter().copied()).collect();
        all.sort_by_key(|r| r.0);
        return merged_sum_sorted(all);
    }
    let mut heap: BinaryHeap<Reverse<(i64, usize, usize)>> = lists
        .iter()
        .enumerate()
        .filter_map(|(k, (l, _))| Some(Reverse((l.first()?.0, k, 0))))
        .collect();
    let ordered = std::iter::from_fn(|| {
        let Reverse((_, k, at)) = heap.pop()?;
        let list = lists.get(k)?.0;
        let r = *list.get(at)?;
        if let Some(next) = list.get(at + 1) {
            heap.push(Reverse((next.0, k, at + 1)));
        }
        Some(r)
    });
    merged_sum_sorted(ordered)
}

pub(super) fn sum_ranges(ranges: &[(i64, i64)]) -> i64 {
    ranges
        .iter()
        .fold(0i64, |acc, r| acc.saturating_add(r.1.saturating_sub(r.0)))
}

/// Paddle's `intersection_ranges` of two merged lists.
pub(super) fn intersect(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        let lo = x.0.max(y.0);
        let hi = x.1.min(y.1);
        if lo < hi {
            out.push((lo, hi));
        }
        if x.1 < y.1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

pub(super) fn range(start: u64, end: u64) -> (i64, i64) {
    let c = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
    (c(start), c(end))
}

/// The merged time of every host node's range. When the types' lists (each sorted by start)
/// hold exactly those ranges (no runtime calls among them) and no range ends before it starts
/// (the union does not depend on their order then), it is their union, without a list of them
/// all; otherwise the list, in the walk's order, as Paddle makes it.
pub(super) fn all_host_time(forest: &super::Forest, types: &[super::forest::TypeRanges]) -> i64 {
    let runtime_calls = forest.nodes.iter().any(|n| !n.runtime.is_empty());
    let backwards = types.iter().any(|(_, r)| r.iter().any(|x| x.1 < x.0));
    if !runtime_calls && !backwards {
        let lists: Vec<(&[(i64, i64)], bool)> =
            types.iter().map(|(_, r)| (r.as_slice(), true)).collect();
        return merged_time(&lists);
    }
    let mut all_host = Vec::new();
    for &(_, root) in &forest.roots {
        for i in forest.traverse(root).into_iter().skip(1) {
            if let Some(node) = forest.node(i) {
                all_host.push(range(node.start_ns, node.end_ns));
            }
        }
    }
    sum_ranges(&merge_self(all_host))
}

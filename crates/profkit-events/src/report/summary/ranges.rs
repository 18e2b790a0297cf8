//! Paddle's time-range arithmetic (`statistic_helper`): merging, summing, intersecting.

/// Paddle's `merge_self_ranges`: sorted by start (stably), overlapping and touching ranges joined.
pub(super) fn merge_self(mut ranges: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    ranges.sort_by_key(|r| r.0);
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

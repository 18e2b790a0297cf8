//! libstdc++'s `std::partial_sort`, step for step: the op profile keeps the first children of
//! each node in the order it leaves them, and among children whose keys tie that order is the
//! one its heap operations make (`__heap_select`, then `__sort_heap`), not a stable one.
//!
//! Indices are bounds-checked: the slice is never read past its end, whatever `less` answers.

/// Sorts the `middle` smallest elements of `v` (by `less`) into `v[..middle]`, as
/// `std::partial_sort(v.begin(), v.begin() + middle, v.end(), less)` does; the rest are left in
/// the order the selection leaves them.
pub(super) fn partial_sort<T: Clone>(v: &mut [T], middle: usize, less: &impl Fn(&T, &T) -> bool) {
    let middle = middle.min(v.len());
    if middle == 0 {
        return;
    }
    make_heap(v, middle, less);
    for i in middle..v.len() {
        if less(&v[i], &v[0]) {
            pop_heap(v, middle, i, less);
        }
    }
    let mut last = middle;
    while last > 1 {
        last -= 1;
        pop_heap(v, last, last, less);
    }
}

/// `std::make_heap` over `v[..len]`.
fn make_heap<T: Clone>(v: &mut [T], len: usize, less: &impl Fn(&T, &T) -> bool) {
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let value = v[parent].clone();
        adjust_heap(v, parent, len, value, less);
        if parent == 0 {
            return;
        }
        parent -= 1;
    }
}

/// `std::__pop_heap(first, first + len, first + result)`: moves the top to `result` and
/// re-heaps `v[..len]` with the value that was at `result`.
fn pop_heap<T: Clone>(v: &mut [T], len: usize, result: usize, less: &impl Fn(&T, &T) -> bool) {
    let value = v[result].clone();
    v[result] = v[0].clone();
    adjust_heap(v, 0, len, value, less);
}

/// `std::__adjust_heap`: sifts the hole at `hole` down to a leaf, then pushes `value` up.
fn adjust_heap<T: Clone>(
    v: &mut [T],
    mut hole: usize,
    len: usize,
    value: T,
    less: &impl Fn(&T, &T) -> bool,
) {
    let top = hole;
    let mut child = hole;
    while len > 2 && child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child].clone();
        hole = child;
    }
    if len >= 2 && len % 2 == 0 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1].clone();
        hole = child - 1;
    }
    // `std::__push_heap`.
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(&v[parent], &value) {
            break;
        }
        v[hole] = v[parent].clone();
        hole = parent;
    }
    v[hole] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_the_first_k() {
        let mut v = vec![5, 1, 4, 2, 3, 9, 0];
        partial_sort(&mut v, 3, &|a: &i32, b: &i32| a < b);
        assert_eq!(&v[..3], &[0, 1, 2]);
        let mut v = vec![5, 1, 4, 2, 3, 9, 0];
        partial_sort(&mut v, 7, &|a: &i32, b: &i32| a > b);
        assert_eq!(v, vec![9, 5, 4, 3, 2, 1, 0]);
        let mut empty: Vec<i32> = Vec::new();
        partial_sort(&mut empty, 3, &|a: &i32, b: &i32| a < b);
    }

    fn order(keys: &[f64]) -> Vec<usize> {
        let mut v: Vec<(f64, usize)> = keys.iter().copied().zip(0..).collect();
        let n = v.len();
        partial_sort(&mut v, n, &|a: &(f64, usize), b: &(f64, usize)| a.0 > b.0);
        v.iter().map(|x| x.1).collect()
    }

    #[test]
    fn ties_move_as_in_libstdcxx() {
        // What libstdc++'s `std::partial_sort(b, e, e, greater)` gives (checked with g++).
        assert_eq!(order(&[1.0, 1.0, 1.0, 1.0]), vec![1, 3, 0, 2]);
        assert_eq!(
            order(&[2.0, 2.0, 1.0, 1.0, 1.0, 3.0, 61.0]),
            vec![6, 5, 1, 0, 3, 4, 2]
        );
    }
}

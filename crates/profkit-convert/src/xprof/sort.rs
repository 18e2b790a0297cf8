//! TSL's `SortXPlane`.

use profkit_events::report::std_sort;
use profkit_xplane::XLine;

/// TSL's `SortXPlane` for one line: events by offset, then longer first, with `std::sort`.
pub(crate) fn sort_events(line: &mut XLine) {
    let keys: Vec<(i64, i64)> = line
        .events
        .iter()
        .map(|e| (e.offset_ps().unwrap_or(0), e.duration_ps))
        .collect();
    let mut order: Vec<usize> = (0..line.events.len()).collect();
    let key = |i: usize| keys.get(i).copied().unwrap_or((0, 0));
    std_sort(&mut order, &|&a: &usize, &b: &usize| {
        let (ka, kb) = (key(a), key(b));
        ka.0 < kb.0 || (ka.0 == kb.0 && ka.1 > kb.1)
    });
    let mut events: Vec<Option<profkit_xplane::XEvent>> = std::mem::take(&mut line.events)
        .into_iter()
        .map(Some)
        .collect();
    line.events = order
        .into_iter()
        .filter_map(|i| events.get_mut(i).and_then(Option::take))
        .collect();
}

//! How xprof recognises TPU planes and the line it groups them by.

use profkit_xplane::XLine;
use profkit_xplane::constants::TPU_PLANE_PREFIX;

/// Whether xprof treats `name` as a TPU TensorCore plane (`/device:TPU:` and digits).
pub(crate) fn is_tensor_core_plane(name: &str) -> bool {
    name.strip_prefix(TPU_PLANE_PREFIX)
        .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
}

/// The TensorCore id of a plane named `/device:TPU:<n>`.
pub(crate) fn tensor_core_id(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(TPU_PLANE_PREFIX)?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// Whether TSL's `ConnectIntraThreadTPU` handles `name` (TensorCore or SparseCore ids parse).
pub(crate) fn tpu_plane_has_core_id(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(TPU_PLANE_PREFIX) else {
        return false;
    };
    if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
        return rest.parse::<i32>().is_ok();
    }
    // "<n> SparseCore[ <word>] <m>"
    let Some((chip, tail)) = rest.split_once(" SparseCore") else {
        return false;
    };
    if chip.is_empty() || !chip.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let Some((middle, core)) = tail.rsplit_once(' ') else {
        return false;
    };
    let middle_ok = middle.is_empty()
        || middle
            .strip_prefix(' ')
            .is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphabetic()));
    middle_ok
        && !core.is_empty()
        && core.bytes().all(|b| b.is_ascii_digit())
        && core.parse::<i32>().is_ok()
}

/// The index of the line xprof groups a TPU plane by: the last `Steps` line if it has events,
/// else the last `XLA Modules` line if it has events.
pub(crate) fn tpu_grouping_line<'a>(
    lines: impl Iterator<Item = (&'a XLine, usize)>,
) -> Option<usize> {
    let mut step = None;
    let mut module = None;
    for (i, (line, events)) in lines.enumerate() {
        let non_empty = events > 0;
        match line.name.as_str() {
            "Steps" | "Sparse Core Steps" => step = Some((i, non_empty)),
            "XLA Modules" | "Sparse Core Modules" => module = Some((i, non_empty)),
            _ => {}
        }
    }
    let non_empty = |i: Option<(usize, bool)>| i.filter(|&(_, n)| n).map(|(i, _)| i);
    non_empty(step).or_else(|| non_empty(module))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tpu_planes() {
        assert!(is_tensor_core_plane("/device:TPU:0"));
        assert!(is_tensor_core_plane("/device:TPU:"));
        assert!(!is_tensor_core_plane("/device:TPU:0 SparseCore 1"));
        assert!(tpu_plane_has_core_id("/device:TPU:0 SparseCore 1"));
        assert!(tpu_plane_has_core_id("/device:TPU:0 SparseCore Core 1"));
        assert!(!tpu_plane_has_core_id("/device:TPU:"));
    }
}

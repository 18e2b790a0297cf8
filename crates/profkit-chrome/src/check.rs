//! `validate` of a Chrome trace: the XSpace it reads as is checked as real producers write, and
//! each problem is told in the trace's own terms, the `traceEvents` index, the event's name and
//! its `ts` and `dur` as the JSON writes them, found again in the text by name and time.
//!
//! What is a warning rather than an error (each a producer's own way of writing, which Perfetto
//! and the trace viewers draw anyway): partial overlaps on the lines where events overlap by
//! nature (async lines, GPU streams, the counter line); the XSpace validator's warnings (see
//! `profkit_xplane::validate::overlap_quirk`: Python tracer events, PyTorch `python_function`
//! events, which Kineto writes with `with_stack=True` across the `ProfilerStep#N`,
//! `Optimizer.step` and other ranges their functions open or close, consecutive iterations of
//! one name, async op lines); and overlaps no longer than the input's time precision. The import's warnings are
//! warnings, but for the kinds [`WarningKind::is_error`] calls errors.

use profkit_xplane::validate::ProblemKind;
use profkit_xplane::{Problem, Severity, XEvent, XLine, XPlane, XSpace};

use crate::read::ChromeImport;
use crate::warnings::WarningKind;

mod locate;

use locate::Places;

/// What `validate` finds in an imported trace: errors and warnings, each as (kind, message).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChromeCheck {
    /// What no producer writes: an XSpace problem that is not excused below, or an import
    /// warning of a kind [`WarningKind::is_error`] calls an error.
    pub errors: Vec<(String, String)>,
    /// Partial overlaps on async, GPU stream and counter lines, and overlaps no longer than the
    /// input's time precision (microseconds rounded against nanosecond durations).
    pub warnings: Vec<(String, String)>,
}

/// What a partial overlap on a line where events overlap by nature adds to its message.
const OVERLAPPING_LINE: &str = " (on an async, GPU stream or counter line)";

impl ChromeImport {
    /// Checks the XSpace the trace reads as, judged as real producers write (see the module
    /// documentation). Every problem is listed (callers cap what they print), each named by its
    /// place in the XSpace; [`ChromeImport::check_source`] names them in the trace itself.
    pub fn check(&self) -> ChromeCheck {
        self.judge(None)
    }

    /// [`ChromeImport::check`], each problem about an event named by the event's place in
    /// `text`, the trace this import was read from (gzip undone): its `traceEvents` index, name,
    /// and `ts` and `dur` as written, with its place in the XSpace after them. An event not
    /// found again in `text` (one whose name or times the import changed, as it does for Paddle's
    /// traces) is named by its place in the XSpace, its name and times.
    pub fn check_source(&self, text: &[u8]) -> ChromeCheck {
        self.judge(Some(text))
    }

    fn judge(&self, text: Option<&[u8]>) -> ChromeCheck {
        let space = &self.space;
        let mut check = ChromeCheck::default();
        for (kind, count) in &self.warning_counts {
            if kind.is_error() {
                check
                    .errors
                    .push((format!("{kind:?}"), format!("{count} events: {kind:?}")));
            } else if *kind == WarningKind::ReplacedText {
                // Damage to the text itself, which the XSpace no longer shows.
                check.warnings.push((
                    format!("{kind:?}"),
                    format!(
                        "{count} strings with a lone surrogate or bytes that are not UTF-8, kept with U+FFFD in their place"
                    ),
                ));
            }
        }
        let problems = profkit_xplane::validate(space);
        let places = match text {
            Some(text) => Places::find(space, &problems, text),
            None => Places::default(),
        };
        for p in problems {
            let kind = format!("{:?}", p.kind);
            let (why, error) = self.judge_one(&p);
            let message = format!("{}{why}", places.describe(space, &p));
            if error {
                check.errors.push((kind, message));
            } else {
                check.warnings.push((kind, message));
            }
        }
        check
    }

    /// What a problem's message gets at its end, and whether it is an error.
    fn judge_one(&self, p: &Problem) -> (String, bool) {
        if p.kind != ProblemKind::PartialOverlap {
            return (String::new(), true);
        }
        let space = &self.space;
        let (plane, line_id) = line_of(space, &p.path);
        if self.overlapping_lines.contains(&(plane, line_id)) {
            return (OVERLAPPING_LINE.to_owned(), false);
        }
        if p.severity == Severity::Warning {
            // The XSpace validator's own reason.
            return (overlap_parts(&p.message).1.to_owned(), false);
        }
        if overlap_ps(&p.message).is_some_and(|o| o <= i128::from(self.precision_ps)) {
            return (
                format!(
                    " (within the input's time precision of {} ps)",
                    self.precision_ps
                ),
                false,
            );
        }
        (String::new(), true)
    }
}

/// The plane index and line id a validator path (`planes[p].lines[l]...`) points at.
fn line_of(space: &XSpace, path: &str) -> (usize, i64) {
    let (plane, line, _) = indices(path);
    let line = line
        .and_then(|l| space.planes.get(plane?)?.lines.get(l))
        .map_or(i64::MIN, |l| l.id);
    (plane.unwrap_or(usize::MAX), line)
}

/// The plane, line and event indices of a validator path, as far as it goes.
fn indices(path: &str) -> (Option<usize>, Option<usize>, Option<usize>) {
    let number = |key: &str| -> Option<usize> {
        let rest = path.split(key).nth(1)?;
        rest.split(']').next()?.parse().ok()
    };
    (number("planes["), number("lines["), number("events["))
}

/// The event a validator path points at (or into), with its plane and line.
fn event_at<'s>(space: &'s XSpace, path: &str) -> Option<(&'s XPlane, &'s XLine, &'s XEvent)> {
    let (plane, line, event) = indices(path);
    let plane = space.planes.get(plane?)?;
    let line = plane.lines.get(line?)?;
    Some((plane, line, line.events.get(event?)?))
}

/// The path of the event a validator path points at or into (`...events[k]`, its stats cut).
fn event_path(path: &str) -> Option<&str> {
    let at = path.find(".events[")?;
    let end = at + path.get(at..)?.find(']')? + 1;
    path.get(..end)
}

/// A partial overlap's message without the reason the XSpace validator gives a warning, and that
/// reason (` (...)`, empty for an error): the text after the second time range.
fn overlap_parts(message: &str) -> (&str, &str) {
    let Some((_, second)) = message.split_once(" partially overlaps ") else {
        return (message, "");
    };
    match second.split_once(" ps") {
        Some((_, why)) if !why.is_empty() => {
            let cut = message.len() - why.len();
            (message.get(..cut).unwrap_or(message), why)
        }
        _ => (message, ""),
    }
}

/// How far two events overlap, from the validator's message (`event a..b ps partially overlaps
/// events[k] c..d ps`): `d - a`.
fn overlap_ps(message: &str) -> Option<i128> {
    let (first, second) = message.split_once(" partially overlaps ")?;
    let start: i128 = first
        .strip_prefix("event ")?
        .split("..")
        .next()?
        .parse()
        .ok()?;
    let other_end: i128 = second.split(' ').nth(1)?.split("..").nth(1)?.parse().ok()?;
    Some(other_end - start)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::chrome_to_xspace;

    fn checked(text: &str) -> ChromeCheck {
        chrome_to_xspace(text.as_bytes())
            .unwrap()
            .check_source(text.as_bytes())
    }

    #[test]
    fn python_function_overlaps_are_warnings_others_errors() {
        // As Kineto writes with `with_stack=True`: `step()` returns after the step's range ends.
        let text = r#"{"traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#6", "pid": 1, "tid": 2, "ts": 1419247332972.313, "dur": 4426.114},
            {"ph": "X", "cat": "python_function", "name": "torch/profiler/profiler.py(811): step", "pid": 1, "tid": 2, "ts": 1419247337342.426, "dur": 124.89},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 1419247337500, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 2, "ts": 1419247337505.5, "dur": 10}
        ]}"#;
        let check = checked(text);
        assert_eq!(check.warnings.len(), 1, "{check:?}");
        assert!(check.warnings[0].1.starts_with(
            "traceEvents[1] \"torch/profiler/profiler.py(811): step\" (ts 1419247337342.426, \
             dur 124.89) partially overlaps traceEvents[0] \"ProfilerStep#6\" \
             (ts 1419247332972.313, dur 4426.114) by 56.001 us"
        ));
        assert!(check.warnings[0].1.ends_with(
            "(a PyTorch `python_function` event: Kineto writes these with `with_stack=True` \
             across the ranges their functions open and close)"
        ));
        assert_eq!(check.errors.len(), 1, "{check:?}");
        assert_eq!(check.errors[0].0, "PartialOverlap");
        assert!(check.errors[0].1.starts_with(
            "traceEvents[3] \"aten::add\" (ts 1419247337505.5, dur 10) partially overlaps \
             traceEvents[2] \"aten::mm\" (ts 1419247337500, dur 10) by 4.5 us (in the XSpace: "
        ));
    }

    #[test]
    fn the_category_may_sit_on_the_metadata() {
        // Every event of the name has the category: the import keeps it on the metadata.
        let text = r#"[
            {"ph": "X", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 2, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 2, "ts": 5, "dur": 10},
            {"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 2, "ts": 30, "dur": 1}
        ]"#;
        let check = checked(text);
        assert!(check.errors.is_empty(), "{check:?}");
        assert_eq!(check.warnings.len(), 1);
    }

    #[test]
    fn ranges_strings_and_twins_are_found_again() {
        // A `B`/`E` range is named by its `B`; times written as strings are found; of two events
        // of one name and time on two threads, each problem gets one of them.
        let text = r#"{"traceEvents": [
            {"ph": "B", "name": "load", "pid": 1, "tid": 8, "ts": "300"},
            {"ph": "X", "name": "parse", "pid": 1, "tid": 8, "ts": "305", "dur": "10"},
            {"ph": "E", "pid": 1, "tid": 8, "ts": 310},
            {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 400, "dur": 10},
            {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 405, "dur": 10},
            {"ph": "X", "name": "a", "pid": 1, "tid": 3, "ts": 400, "dur": 10},
            {"ph": "X", "name": "b", "pid": 1, "tid": 3, "ts": 405, "dur": 10}
        ]}"#;
        let check = checked(text);
        let errors: Vec<&str> = check.errors.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with(
            "traceEvents[1] \"parse\" (ts 305, dur 10) partially overlaps traceEvents[0] \
             \"load\" (ph \"B\", ts 300) by 5 us"
        )));
        let mut named: Vec<&str> = errors
            .iter()
            .map(|e| e.split(' ').next().unwrap())
            .filter(|e| *e != "traceEvents[1]")
            .collect();
        named.sort_unstable();
        assert_eq!(named, ["traceEvents[4]", "traceEvents[6]"]);
    }

    #[test]
    fn without_the_text_problems_are_named_in_the_xspace() {
        let text = r#"[
            {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 10}
        ]"#;
        let import = chrome_to_xspace(text.as_bytes()).unwrap();
        let plain = import.check();
        assert_eq!(
            plain.errors[0].1,
            "planes[0].lines[0].events[1]: event 5000000..15000000 ps partially overlaps \
             events[0] 0..10000000 ps"
        );
        // A text that is not the trace's finds nothing, and says it in the XSpace's terms.
        assert_eq!(import.check_source(b"[]"), plain);
        assert_eq!(import.check_source(b"{not json"), plain);
    }

    #[test]
    fn event_paths_cut_stats() {
        assert_eq!(
            event_path("planes[0].lines[3].events[37].stats[2]"),
            Some("planes[0].lines[3].events[37]")
        );
        assert_eq!(event_path("planes[0].stats[2]"), None);
    }
}

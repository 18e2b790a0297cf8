//! The collect calls: `first-call-size`, `calls-agree`, `valid-xspace` over the numbered
//! sessions, `empty-session` for a session without work, `small-buffer` for a copy call given a
//! buffer one byte too small.

use super::session::{Parsed, SessionRun};
use super::text::first_few;
use super::{Check, CheckId, Outcome};
use crate::Error;
use crate::abi::Code;

pub(super) fn first_call_check(runs: &[SessionRun]) -> Check {
    let reached: Vec<&SessionRun> = runs.iter().filter(|r| r.size_written.is_some()).collect();
    if reached.is_empty() {
        return Check::skip(
            CheckId::FirstCallSize,
            "no session reached collect_data_xspace",
        );
    }
    let unwritten: Vec<String> = reached
        .iter()
        .filter(|r| r.size_written == Some(false))
        .map(|r| format!("session {}", r.index))
        .collect();
    if unwritten.is_empty() {
        Check::pass(
            CheckId::FirstCallSize,
            format!(
                "the first call wrote the size in all {} sessions (TensorFlow leaves it \
                 uninitialised)",
                reached.len()
            ),
        )
    } else {
        Check::fail(
            CheckId::FirstCallSize,
            format!(
                "the first call left *size_in_bytes unwritten in {}: TensorFlow would read an \
                 uninitialised size",
                first_few(&unwritten)
            ),
        )
    }
}

pub(super) fn agree_check(runs: &[SessionRun]) -> Check {
    let with_data: Vec<&SessionRun> = runs.iter().filter(|r| r.size > 0).collect();
    if with_data.is_empty() {
        return Check::skip(
            CheckId::CallsAgree,
            "no session returned data, so there was nothing to compare (a plugin without a \
             device returns size 0)",
        );
    }
    let mut problems = Vec::new();
    for run in &with_data {
        let n = run.index;
        if let Some(second) = run.second_size
            && second != run.size
        {
            problems.push(format!(
                "session {n}: the first call said {} bytes, the second {second}",
                run.size
            ));
        }
        if run.overran {
            problems.push(format!(
                "session {n}: the second call wrote past the {}-byte buffer",
                run.size
            ));
        }
        match (&run.parsed, &run.failure) {
            (Some(Err(e)), _) => problems.push(format!(
                "session {n}: the {} bytes do not parse as an XSpace: {e}",
                run.size
            )),
            // The size call named data that never arrived: nothing agreed, nothing parsed.
            (None, Some(f)) => problems.push(format!(
                "session {n}: the first call said {} bytes, but no buffer was fetched: {f}",
                run.size
            )),
            _ => {}
        }
    }
    if problems.is_empty() {
        let sizes: Vec<usize> = with_data.iter().map(|r| r.size).collect();
        let (lo, hi) = (
            sizes.iter().min().copied().unwrap_or(0),
            sizes.iter().max().copied().unwrap_or(0),
        );
        Check::pass(
            CheckId::CallsAgree,
            format!(
                "{} of {} sessions returned data ({lo} to {hi} bytes); both calls agreed on the \
                 size and every buffer parsed as an XSpace",
                with_data.len(),
                runs.len()
            ),
        )
    } else {
        Check::fail(CheckId::CallsAgree, first_few(&problems))
    }
}

pub(super) fn valid_check(runs: &[SessionRun]) -> Check {
    let parsed: Vec<(u32, &Parsed)> = runs
        .iter()
        .filter_map(|r| match &r.parsed {
            Some(Ok(parsed)) => Some((r.index, parsed)),
            _ => None,
        })
        .collect();
    let Some((_, last)) = parsed.last() else {
        return Check::skip(CheckId::ValidXspace, "no XSpace was collected");
    };
    let problems: Vec<String> = parsed
        .iter()
        .flat_map(|(index, p)| {
            p.problems
                .iter()
                .map(move |m| format!("session {index}: {m}"))
        })
        .collect();
    if problems.is_empty() {
        Check::pass(
            CheckId::ValidXspace,
            format!(
                "every collected XSpace is valid once rebased to its session start, as \
                 TensorFlow does; the last holds {} plane(s) ({}) with {} events",
                last.planes.len(),
                last.planes.join(", "),
                last.events
            ),
        )
    } else {
        Check::fail(CheckId::ValidXspace, first_few(&problems))
    }
}

pub(super) fn empty_check(run: &SessionRun) -> Check {
    if let Some(f) = &run.failure {
        return Check::fail(CheckId::EmptySession, format!("the session failed: {f}"));
    }
    if run.size == 0 {
        return Check::pass(
            CheckId::EmptySession,
            "a session without work returned size 0",
        );
    }
    match &run.parsed {
        Some(Err(e)) => Check::fail(
            CheckId::EmptySession,
            format!("returned {} bytes that do not parse: {e}", run.size),
        ),
        _ if run.events() == 0 => Check::fail(
            CheckId::EmptySession,
            format!(
                "returned {} bytes holding no events: with nothing recorded the size must be 0",
                run.size
            ),
        ),
        _ => Check::pass(
            CheckId::EmptySession,
            format!(
                "a session without work returned {} event(s) (fine for a plugin that samples \
                 regardless of use)",
                run.events()
            ),
        ),
    }
}

pub(super) fn small_buffer_check(small: &SessionRun, after: &SessionRun) -> Check {
    if let Some(f) = &small.failure {
        return Check::fail(CheckId::SmallBuffer, format!("the session failed: {f}"));
    }
    if small.size == 0 {
        return Check::skip(
            CheckId::SmallBuffer,
            "the plugin returned no data, so there was no buffer to refuse",
        );
    }
    let declared = small.size - 1;
    let check = match &small.second_status {
        Some(Ok(())) => Check::fail(
            CheckId::SmallBuffer,
            format!(
                "accepted a {declared}-byte buffer for a {}-byte XSpace without an error",
                small.size
            ),
        ),
        Some(Err(Error::Call { code, .. })) if *code == Code::FAILED_PRECONDITION => Check::pass(
            CheckId::SmallBuffer,
            format!(
                "a {declared}-byte buffer for {} bytes was refused with FAILED_PRECONDITION",
                small.size
            ),
        ),
        Some(Err(e)) => Check::fail(
            CheckId::SmallBuffer,
            format!("refused with {e}, where FAILED_PRECONDITION is expected"),
        ),
        None => Check::fail(CheckId::SmallBuffer, "the second call was not made"),
    };
    if small.overran {
        return Check::fail(
            CheckId::SmallBuffer,
            format!("wrote past the end of a {declared}-byte buffer"),
        );
    }
    if check.outcome == Outcome::Pass
        && let Some(f) = &after.failure
    {
        return Check::fail(
            CheckId::SmallBuffer,
            format!("the session after the refused buffer failed: {f}"),
        );
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;
    use profkit_xplane::XSpace;

    fn run(size: usize, events: bool) -> SessionRun {
        let mut space = XSpace::default();
        if events {
            let mut plane = profkit_xplane::XPlane::default();
            profkit_xplane::PlaneBuilder::new(&mut plane)
                .line(1)
                .add_event("e");
            space.planes.push(plane);
        }
        SessionRun {
            index: 1,
            size_written: Some(true),
            size,
            second_size: Some(size),
            second_status: Some(Ok(())),
            parsed: (size > 0).then(|| Ok(Parsed::of(space, 0))),
            ..Default::default()
        }
    }
    #[test]
    fn empty_session_rules() {
        assert_eq!(empty_check(&run(0, false)).outcome, Outcome::Pass);
        assert_eq!(empty_check(&run(10, true)).outcome, Outcome::Pass);
        assert_eq!(empty_check(&run(10, false)).outcome, Outcome::Fail);
    }

    #[test]
    fn agreeing_and_disagreeing_sizes() {
        assert_eq!(agree_check(&[run(0, false)]).outcome, Outcome::Skip);
        assert_eq!(agree_check(&[run(5, true)]).outcome, Outcome::Pass);
        let mut bad = run(5, true);
        bad.second_size = Some(4);
        let check = agree_check(&[bad]);
        assert_eq!(check.outcome, Outcome::Fail);
        assert!(
            check.detail.contains("said 5 bytes, the second 4"),
            "{}",
            check.detail
        );
    }

    #[test]
    fn a_size_with_no_buffer_behind_it_does_not_agree() {
        let mut unfetched = run(usize::MAX, false);
        unfetched.second_size = None;
        unfetched.second_status = None;
        unfetched.parsed = None;
        unfetched.failure = Some("over the 2 GiB protobuf limit".into());
        let check = agree_check(&[unfetched]);
        assert_eq!(check.outcome, Outcome::Fail);
        assert!(
            check.detail.contains("no buffer was fetched"),
            "{}",
            check.detail
        );
    }

    #[test]
    fn small_buffer_rules() {
        let mut refused = run(5, true);
        refused.second_status = Some(Err(Error::Call {
            call: "collect_data_xspace",
            code: Code::FAILED_PRECONDITION,
            message: String::new(),
        }));
        let ok = run(5, true);
        assert_eq!(small_buffer_check(&refused, &ok).outcome, Outcome::Pass);
        assert_eq!(small_buffer_check(&ok, &ok).outcome, Outcome::Fail);
        assert_eq!(
            small_buffer_check(&run(0, false), &ok).outcome,
            Outcome::Skip
        );
        refused.overran = true;
        assert_eq!(small_buffer_check(&refused, &ok).outcome, Outcome::Fail);
    }
}

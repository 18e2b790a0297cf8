//! Limits: `memory` (resident memory across the sessions) and `call-time` (the slowest call).

use std::time::Duration;

use super::text::{fmt_duration, in_session, mib};
use super::{Check, CheckId};

pub(super) fn memory_check(
    first: Option<u64>,
    last: Option<u64>,
    sessions: u32,
    limit: u64,
) -> Check {
    if sessions < 2 {
        return Check::skip(CheckId::Memory, "needs at least 2 sessions");
    }
    let (Some(first), Some(last)) = (first, last) else {
        return Check::skip(
            CheckId::Memory,
            "resident memory is read from /proc/self/status, which is not available",
        );
    };
    let growth = last.saturating_sub(first);
    let text = format!(
        "resident memory went from {} after session 1 to {} after session {sessions}",
        mib(first),
        mib(last)
    );
    if growth > limit {
        Check::fail(
            CheckId::Memory,
            format!(
                "{text}: grew by {}, over the {} limit",
                mib(growth),
                mib(limit)
            ),
        )
    } else {
        Check::pass(CheckId::Memory, format!("{text} (limit +{})", mib(limit)))
    }
}

/// `slowest`: the slowest call (call, session, how long it took).
pub(super) fn call_time_check(
    slowest: Option<&(String, Option<u32>, Duration)>,
    max_call: Duration,
) -> Check {
    match slowest {
        Some((call, session, took)) => {
            let place = in_session(call, *session);
            let bound = fmt_duration(max_call);
            if *took > max_call {
                Check::fail(
                    CheckId::CallTime,
                    format!("{place} took {} (bound {bound})", fmt_duration(*took)),
                )
            } else {
                Check::pass(
                    CheckId::CallTime,
                    format!(
                        "slowest call: {place}, {} (bound {bound})",
                        fmt_duration(*took)
                    ),
                )
            }
        }
        None => Check::skip(CheckId::CallTime, "no call was made"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Outcome;

    #[test]
    fn memory_rules() {
        assert_eq!(
            memory_check(Some(10 << 20), Some(11 << 20), 10, 4 << 20).outcome,
            Outcome::Pass
        );
        assert_eq!(
            memory_check(Some(10 << 20), Some(20 << 20), 10, 4 << 20).outcome,
            Outcome::Fail
        );
        assert_eq!(memory_check(None, None, 10, 1).outcome, Outcome::Skip);
        assert_eq!(memory_check(Some(1), Some(1), 1, 1).outcome, Outcome::Skip);
    }
}

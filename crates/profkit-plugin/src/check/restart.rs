//! Restarts: `destroy` (the destroy callbacks called early, on copies, twice) and `restart`
//! (sessions one after another without an error status).

use super::session::SessionRun;
use super::text::first_few;
use super::{Check, CheckId};

fn failures(runs: &[SessionRun]) -> Vec<String> {
    runs.iter()
        .filter_map(|r| Some(format!("session {}: {}", r.index, r.failure.as_ref()?)))
        .collect()
}

pub(super) fn destroy_check(probe: &SessionRun, after: &SessionRun) -> Check {
    match (&probe.failure, &after.failure) {
        (None, Some(f)) => Check::fail(
            CheckId::Destroy,
            format!(
                "a session worked before the destroy callbacks ran (early, twice, on copies, as \
                 TensorFlow calls them) and failed after: {f}"
            ),
        ),
        _ => Check::pass(
            CheckId::Destroy,
            "destroy_profiler and destroy_profiler_fns ran twice on copies right after a first \
             session; the next session was not affected",
        ),
    }
}

pub(super) fn restart_check(runs: &[SessionRun]) -> Check {
    let failed = failures(runs);
    if failed.is_empty() {
        Check::pass(
            CheckId::Restart,
            format!(
                "{} sessions ran start, stop and both collect calls without an error status",
                runs.len()
            ),
        )
    } else {
        Check::fail(
            CheckId::Restart,
            format!(
                "{} of {} sessions failed: {}",
                failed.len(),
                runs.len(),
                first_few(&failed)
            ),
        )
    }
}

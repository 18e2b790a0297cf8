//! Wording shared by the checks' details.

use std::time::Duration;

pub(super) fn in_session(call: &str, session: Option<u32>) -> String {
    match session {
        None => call.to_owned(),
        Some(session) => format!("{call} in session {session}"),
    }
}

pub(super) fn fmt_duration(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        format!("{:.2} s", d.as_secs_f64())
    } else {
        format!("{:.1} ms", d.as_secs_f64() * 1000.0)
    }
}

pub(super) fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

pub(super) fn first_few(items: &[String]) -> String {
    let mut text = items.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
    if items.len() > 3 {
        text.push_str(&format!("; and {} more", items.len() - 3));
    }
    text
}

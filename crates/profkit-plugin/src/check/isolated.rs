//! The parent's side: the child process, its protocol lines, hangs and crashes, and the report
//! with `no-crash`.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::text::{fmt_duration, in_session};
use super::{Check, CheckId, CheckOptions, Message, Report};
use crate::{Error, Result};

/// Runs the checks in a child process made from `command`, which must run
/// [`run_in_process`](super::run_in_process) for `library` with `options` and print every message
/// with [`Message::to_line`] on its own line of standard output. A crash, a hang (a call running
/// longer than `options.kill_after`; the child is then killed) or an early exit of the child
/// becomes a failed check. Errors only when the child cannot be started.
pub fn run_isolated(
    mut command: Command,
    library: &Path,
    options: &CheckOptions,
) -> Result<Report> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| Error::Child("no standard output".into()))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| Error::Child("no standard error".into()))?;
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        // Bytes, not `lines()`: the plugin may print anything, and the pipe must be drained to the
        // end or the child would block writing to it.
        let mut stdout = BufReader::new(stdout);
        let mut line = Vec::new();
        while matches!(stdout.read_until(b'\n', &mut line), Ok(n) if n > 0) {
            if let Some(message) = Message::from_line(&String::from_utf8_lossy(&line)) {
                let _ = tx.send(message);
            }
            line.clear();
        }
    });
    let err_reader = std::thread::spawn(move || tail(stderr, 4096));

    let mut checks: Vec<Check> = Vec::new();
    let mut current: Option<(String, Option<u32>, Instant)> = None;
    let mut last_seen = Instant::now();
    let mut done = false;
    let mut hang: Option<String> = None;
    // Outside plugin calls the child only does its own work and sleeps.
    let quiet_limit = options.kill_after + options.work * 4 + Duration::from_secs(10);
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(message) => {
                last_seen = Instant::now();
                match message {
                    Message::Begin { call, session } => {
                        current = Some((call, session, Instant::now()));
                    }
                    Message::End => current = None,
                    Message::Check { check } => checks.push(check),
                    Message::Done => done = true,
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let stuck = match &current {
                    Some((call, session, began)) if began.elapsed() > options.kill_after => {
                        Some(format!(
                            "{} did not return within {}",
                            in_session(call, *session),
                            fmt_duration(options.kill_after)
                        ))
                    }
                    None if last_seen.elapsed() > quiet_limit => Some(format!(
                        "the checker child went silent for {}",
                        fmt_duration(quiet_limit)
                    )),
                    _ => None,
                };
                if let Some(why) = stuck {
                    hang = Some(why);
                    kill(&mut child);
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait()?;
    let _ = reader.join();
    let stderr_tail = err_reader.join().unwrap_or_default();
    let during = current
        .as_ref()
        .map(|(call, session, _)| format!(" during {}", in_session(call, *session)))
        .unwrap_or_default();

    let crash = if let Some(why) = &hang {
        Some(format!("{why}; the child process was killed"))
    } else if done && status.success() {
        None
    } else {
        Some(format!(
            "the plugin {}{during}{}",
            describe_exit(status),
            last_line(&stderr_tail)
                .map(|l| format!("; its last words: {l}"))
                .unwrap_or_default()
        ))
    };
    let mut report = Report {
        library: library.to_path_buf(),
        checks: Vec::new(),
    };
    for id in CheckId::ALL {
        if id == CheckId::NoCrash {
            report.checks.push(match &crash {
                None => Check::pass(
                    CheckId::NoCrash,
                    "every call returned and the child process exited normally",
                ),
                Some(why) => Check::fail(CheckId::NoCrash, why.clone()),
            });
            continue;
        }
        if id == CheckId::CallTime
            && let Some(why) = &hang
        {
            report.checks.push(Check::fail(id, why.clone()));
            continue;
        }
        match checks.iter().rev().find(|c| c.id == id) {
            Some(check) => report.checks.push(check.clone()),
            None => report.checks.push(Check::fail(
                id,
                if hang.is_some() {
                    "not reached: a call hung first (see no-crash)"
                } else if crash.is_some() {
                    "not reached: the process died first (see no-crash)"
                } else {
                    "not reached: the checker child ended early"
                },
            )),
        }
    }
    Ok(report)
}

fn kill(child: &mut Child) {
    let _ = child.kill();
}

/// How the child ended, in words.
fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                5 => " (SIGTRAP)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("crashed the process with signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("ended the process with exit status {code}"),
        None => "ended the process".to_owned(),
    }
}

/// The last `limit` bytes of `reader`.
fn tail(mut reader: impl Read, limit: usize) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = reader.read(&mut chunk) {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(chunk.get(..n).unwrap_or_default());
        if kept.len() > limit * 2 {
            kept.drain(..kept.len() - limit);
        }
    }
    if kept.len() > limit {
        kept.drain(..kept.len() - limit);
    }
    String::from_utf8_lossy(&kept).into_owned()
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_the_end() {
        let text = "a".repeat(10_000) + "\nlast words\n";
        let kept = tail(text.as_bytes(), 100);
        assert_eq!(kept.len(), 100);
        assert_eq!(last_line(&kept), Some("last words"));
    }
}

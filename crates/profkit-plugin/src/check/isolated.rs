//! The parent's side: the child process, its protocol lines, hangs and crashes, and the report
//! with `no-crash`.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::channel::{self, CHANNEL_ENV, Lines, OUTPUT_TAIL, Tail};
use super::text::{fmt_duration, in_session};
use super::{Check, CheckId, CheckOptions, Message, PluginOutput, Report};
use crate::{Error, Result};

/// How long the parent goes on reading once the child has exited: what it wrote last is in the
/// pipes, and a process the plugin started may still hold them (it is not waited for).
const DRAIN: Duration = Duration::from_millis(500);

/// Runs the checks in a child process made from `command`, which must run
/// [`run_in_process`](super::run_in_process) for `library` with `options` and send every message
/// through [`ChildChannel::from_parent`](super::ChildChannel::from_parent). The child gets a
/// private channel (a pipe under the descriptor named in [`CHANNEL_ENV`], and a secret for the
/// run on its standard input); only lines carrying the secret count, so a plugin cannot forge
/// results, and what it prints is kept as text (the last [`OUTPUT_TAIL`] bytes of each stream).
///
/// The child runs in a process group of its own, killed whole when a call hangs (runs longer
/// than `options.kill_after`) and at the end, so processes the plugin started cannot keep the
/// checker waiting; and the child is killed if the checker dies. A crash, a hang or an early exit of the child becomes a failed check, as
/// does a line on the channel without the secret. Errors only when the child cannot be started.
pub fn run_isolated(
    mut command: Command,
    library: &Path,
    options: &CheckOptions,
) -> Result<Report> {
    let (channel_read, channel_write) = channel::pipe()?;
    let secret = channel::secret();
    let write_fd = channel_write.as_raw_fd();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env(CHANNEL_ENV, write_fd.to_string())
        .process_group(0);
    // SAFETY: the hook runs between fork and exec and only calls fcntl and prctl, which are
    // async-signal-safe, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            channel::inherit(write_fd)?;
            die_with_parent()
        });
    }
    let mut child = command.spawn()?;
    // The parent's copy of the write end: without it, the channel ends when every holder closes.
    drop(channel_write);
    let pid = child.id();
    if let Some(mut stdin) = child.stdin.take() {
        // A child that died at once cannot read it; that shows as its exit.
        let _ = stdin.write_all(format!("{secret}\n").as_bytes());
    }
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| Error::Child("no standard output".into()))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| Error::Child("no standard error".into()))?;
    let mut streams: [Option<File>; 3] = [
        Some(File::from(channel_read)),
        Some(File::from(OwnedFd::from(stdout))),
        Some(File::from(OwnedFd::from(stderr))),
    ];
    let mut lines = Lines::default();
    let mut output = [Tail::new(OUTPUT_TAIL), Tail::new(OUTPUT_TAIL)];
    let mut messages: Vec<Message> = Vec::new();
    let mut foreign: u64 = 0;

    let mut checks: Vec<Check> = Vec::new();
    let mut current: Option<(String, Option<u32>, Instant)> = None;
    let mut last_seen = Instant::now();
    let mut done = false;
    let mut hang: Option<String> = None;
    let mut exited: Option<Instant> = None;
    // Outside plugin calls the child only does its own work and sleeps.
    let quiet_limit = options.kill_after + options.work * 4 + Duration::from_secs(10);
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        for (index, ready) in readable(&streams, Duration::from_millis(50))
            .into_iter()
            .enumerate()
        {
            if !ready {
                continue;
            }
            let Some(file) = streams.get_mut(index).and_then(Option::as_mut) else {
                continue;
            };
            match file.read(&mut chunk) {
                Ok(0) => streams[index] = None,
                Ok(n) => {
                    let bytes = chunk.get(..n).unwrap_or_default();
                    match index {
                        0 => lines.feed(bytes, |line| {
                            match std::str::from_utf8(line)
                                .ok()
                                .and_then(|l| Message::from_line(l, &secret))
                            {
                                Some(message) => messages.push(message),
                                None => foreign += 1,
                            }
                        }),
                        1 | 2 => {
                            if let Some(tail) = output.get_mut(index - 1) {
                                tail.push(bytes);
                            }
                        }
                        _ => {}
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => {}
                Err(_) => streams[index] = None,
            }
        }
        for message in messages.drain(..) {
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
        if exited.is_none() && has_exited(pid) {
            exited = Some(Instant::now());
        }
        if let Some(at) = exited {
            // What the child wrote last is read; a pipe still open after that is held by a
            // process the plugin started, which is not waited for.
            if streams.iter().all(Option::is_none) || at.elapsed() > DRAIN {
                break;
            }
            continue;
        }
        if hang.is_none() {
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
                kill_group(pid);
                let _ = child.kill();
            }
        }
    }
    // Whatever the plugin left running goes with the child.
    kill_group(pid);
    let status = child.wait()?;
    drop(streams);
    // An unfinished line from a child that ended normally was not the child's (it writes whole
    // lines); one cut short by a crash or a kill is not counted.
    if lines.pending() && hang.is_none() && status.success() {
        foreign += 1;
    }
    foreign += lines.dropped;
    let [stdout_tail, stderr_tail] = output;
    let stderr_text = stderr_tail.text();
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
            last_line(&stderr_text)
                .map(|l| format!("; its last words: {l}"))
                .unwrap_or_default()
        ))
    };
    let forged = (foreign > 0).then(|| {
        format!(
            "{foreign} line(s) on the checker's private channel did not carry the run's secret \
             and were refused (something in the process writes to descriptors it does not own)"
        )
    });
    let mut report = Report {
        library: library.to_path_buf(),
        checks: Vec::new(),
        output: PluginOutput {
            stdout_bytes: stdout_tail.total,
            stderr_bytes: stderr_tail.total,
            stdout_tail: stdout_tail.text(),
            stderr_tail: stderr_text.clone(),
        },
    };
    for id in CheckId::ALL {
        if id == CheckId::NoCrash {
            let problems: Vec<&str> = crash.iter().chain(&forged).map(String::as_str).collect();
            report.checks.push(if problems.is_empty() {
                Check::pass(
                    CheckId::NoCrash,
                    "every call returned and the child process exited normally",
                )
            } else {
                Check::fail(CheckId::NoCrash, problems.join("; "))
            });
            continue;
        }
        if id == CheckId::CallTime
            && let Some(why) = &hang
        {
            report.checks.push(Check::fail(id, why.clone()));
            continue;
        }
        // The first result of each check counts: the child reports each once.
        match checks.iter().find(|c| c.id == id) {
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

/// Which of `streams` can be read without blocking (at end of stream too), waiting at most
/// `timeout` for one to be.
fn readable(streams: &[Option<File>; 3], timeout: Duration) -> [bool; 3] {
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(3);
    let mut slots = Vec::with_capacity(3);
    for (index, stream) in streams.iter().enumerate() {
        if let Some(file) = stream {
            fds.push(libc::pollfd {
                fd: file.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
            slots.push(index);
        }
    }
    let mut ready = [false; 3];
    if fds.is_empty() {
        std::thread::sleep(timeout);
        return ready;
    }
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs for poll to fill in.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
    if n <= 0 {
        return ready;
    }
    for (fd, index) in fds.iter().zip(slots) {
        if fd.revents != 0
            && let Some(r) = ready.get_mut(index)
        {
            *r = true;
        }
    }
    ready
}

/// Whether the child `pid` has ended, leaving it unreaped (so its process group's id cannot be
/// reused before [`kill_group`]).
fn has_exited(pid: u32) -> bool {
    let id: libc::id_t = pid;
    // SAFETY: an all-zero siginfo_t is a valid value for waitid to fill in.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid on our own child with a valid out-pointer; WNOWAIT leaves it to be reaped.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            id,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: after a successful waitid, si_pid is set (0 when the child is still running).
    r != 0 || unsafe { info.si_pid() } != 0
}

/// Asks the kernel to kill this (child) process when the thread that started it ends, so a
/// checker killed by a signal (Ctrl-C reaches only the foreground group, not the child's) leaves
/// no child behind. The thread waits in [`run_isolated`] for as long as the child lives.
fn die_with_parent() -> std::io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes one integer argument and touches no memory.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Kills the child's process group: the child and every process the plugin started in it.
fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid)
        && pid > 0
    {
        // SAFETY: kill has no memory effects; the group is the child's own (it is not yet
        // reaped, so its id names no other group).
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
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

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_words_are_the_last_line_with_text() {
        assert_eq!(last_line("a\nlast words\n  \n"), Some("last words"));
        assert_eq!(last_line(""), None);
    }
}

//! The private channel from the checker child to its parent, and the bounded buffers the parent
//! reads the child's output into.
//!
//! The plugin runs inside the child and shares its standard output, so nothing printed there can
//! be trusted: a plugin could print lines that look like results. The child therefore reports on
//! a pipe of its own, inherited under a descriptor number the parent names in
//! [`CHANNEL_ENV`], and starts each line with a secret the parent makes for the run and hands
//! over on the child's standard input (so it is in neither the command line nor the
//! environment). The parent refuses every line without it. The plugin shares the child's memory,
//! so one set on cheating could still find the secret there: the channel keeps what a plugin
//! prints, by accident or on purpose, from passing as results.

use std::fs::File;
use std::io::{self, BufRead, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::Message;
use crate::{Error, Result};

/// The environment variable that tells the checker child which inherited descriptor is its
/// channel to the parent.
pub const CHANNEL_ENV: &str = "PROFKIT_CHECK_CHANNEL";

/// The longest protocol line the parent accepts; a check's detail is a sentence or two.
pub(super) const MAX_LINE: usize = 64 << 10;

/// How much of the plugin's standard output and of its standard error the parent keeps (the
/// end of each); the rest is counted.
pub const OUTPUT_TAIL: usize = 64 << 10;

/// A fresh pipe for the channel, both ends close-on-exec, neither on descriptors 0 to 2 (which
/// the child's standard streams replace): (read end, write end).
pub(super) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [libc::c_int; 2] = [-1, -1];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded: both descriptors are open and owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_stdio(read)?, above_stdio(write)?))
}

/// `fd`, moved to a descriptor above 2 if it is one of the standard ones.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: fcntl on a descriptor we own; F_DUPFD_CLOEXEC makes a new one we then own.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if moved < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `moved` is a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

/// Clears close-on-exec on `fd`, so a child started with exec inherits it. Meant for a
/// `pre_exec` hook: fcntl is async-signal-safe.
pub(super) fn inherit(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl with F_SETFD only changes descriptor flags; an invalid fd is an error.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A secret for one run: 128 random bits in hex, from the kernel's generator (or, where that
/// cannot be read, from the standard library's randomly keyed hasher).
pub(super) fn secret() -> String {
    let mut bytes = [0u8; 16];
    let read = File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        use std::hash::{BuildHasher, Hasher};
        for half in bytes.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            h.write_u32(std::process::id());
            half.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The child's end of the channel: the inherited descriptor and the run's secret.
#[derive(Debug)]
pub struct ChildChannel {
    file: File,
    secret: String,
}

impl ChildChannel {
    /// The channel the parent ([`run_isolated`](super::run_isolated)) set up: the descriptor
    /// named by [`CHANNEL_ENV`], and the secret, the first line of standard input. Call it before
    /// loading the plugin. The descriptor is made close-on-exec, so programs the plugin starts do
    /// not inherit it.
    pub fn from_parent() -> Result<ChildChannel> {
        let fd: RawFd = std::env::var(CHANNEL_ENV)
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&fd| fd >= 0)
            .ok_or_else(|| Error::Child(format!("{CHANNEL_ENV} does not name a descriptor")))?;
        // SAFETY: F_GETFD reads the flags of `fd`, failing on a descriptor that is not open.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags < 0 {
            return Err(Error::Child(format!(
                "{CHANNEL_ENV}={fd}: {}",
                io::Error::last_os_error()
            )));
        }
        // SAFETY: as above; only the close-on-exec flag is added.
        unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
        let mut secret = String::new();
        io::stdin().lock().take(256).read_line(&mut secret)?;
        let secret = secret.trim().to_owned();
        if secret.is_empty() || !secret.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(Error::Child("no secret on standard input".into()));
        }
        // SAFETY: the parent handed this descriptor to this process for the channel alone; it is
        // open (checked above) and nothing else in the process owns it.
        let file = unsafe { File::from_raw_fd(fd) };
        Ok(ChildChannel { file, secret })
    }

    /// Sends `message` as one line. An error means the parent is gone: stop.
    pub fn send(&mut self, message: &Message) -> io::Result<()> {
        let mut line = message.to_line(&self.secret);
        line.push('\n');
        self.file.write_all(line.as_bytes())
    }
}

/// Splits a byte stream into lines of at most [`MAX_LINE`] bytes; a longer line is dropped and
/// counted, never kept whole.
#[derive(Default)]
pub(super) struct Lines {
    partial: Vec<u8>,
    overlong: bool,
    /// Lines dropped for their length.
    pub(super) dropped: u64,
}

impl Lines {
    /// Feeds `bytes`, calling `line` for each complete line (without its newline).
    pub(super) fn feed(&mut self, bytes: &[u8], mut line: impl FnMut(&[u8])) {
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            let (body, ends) = match piece.split_last() {
                Some((b'\n', body)) => (body, true),
                _ => (piece, false),
            };
            if !self.overlong {
                if self.partial.len() + body.len() > MAX_LINE {
                    self.overlong = true;
                    self.partial.clear();
                } else {
                    self.partial.extend_from_slice(body);
                }
            }
            if ends {
                if self.overlong {
                    self.dropped += 1;
                } else {
                    line(&self.partial);
                }
                self.partial.clear();
                self.overlong = false;
            }
        }
    }

    /// Whether an unfinished line is pending (the stream ended in the middle of one).
    pub(super) fn pending(&self) -> bool {
        !self.partial.is_empty() || self.overlong
    }
}

/// The last `limit` bytes of a stream, and how many bytes it held.
#[derive(Clone, Debug, Default)]
pub(super) struct Tail {
    kept: Vec<u8>,
    limit: usize,
    /// Every byte seen.
    pub(super) total: u64,
}

impl Tail {
    pub(super) fn new(limit: usize) -> Tail {
        Tail {
            kept: Vec::new(),
            limit,
            total: 0,
        }
    }

    pub(super) fn push(&mut self, bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len() as u64);
        let bytes = bytes
            .get(bytes.len().saturating_sub(self.limit)..)
            .unwrap_or(bytes);
        self.kept.extend_from_slice(bytes);
        // Trimmed once it doubles, so that keeping the tail costs O(1) per byte.
        if self.kept.len() > self.limit.saturating_mul(2) {
            let cut = self.kept.len() - self.limit;
            self.kept.drain(..cut);
        }
    }

    /// The kept bytes (at most `limit`), as text.
    pub(super) fn text(&self) -> String {
        let start = self.kept.len().saturating_sub(self.limit);
        String::from_utf8_lossy(self.kept.get(start..).unwrap_or_default()).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_keeps_the_end_and_counts_the_rest() {
        let mut tail = Tail::new(100);
        for _ in 0..1000 {
            tail.push(&[b'a'; 999]);
            assert!(tail.kept.len() <= 2 * 100 + 999);
        }
        tail.push(b"\nlast words\n");
        assert_eq!(tail.total, 999_000 + 12);
        let text = tail.text();
        assert_eq!(text.len(), 100);
        assert!(text.ends_with("\nlast words\n"));
    }

    #[test]
    fn lines_are_split_and_bounded() {
        let mut lines = Lines::default();
        let mut got: Vec<Vec<u8>> = Vec::new();
        lines.feed(b"one\ntw", |l| got.push(l.to_vec()));
        lines.feed(b"o\n", |l| got.push(l.to_vec()));
        assert_eq!(got, [b"one".to_vec(), b"two".to_vec()]);
        // A line over the bound is dropped in pieces, never held whole.
        let big = vec![b'x'; MAX_LINE / 2 + 1];
        for _ in 0..10 {
            lines.feed(&big, |l| got.push(l.to_vec()));
            assert!(lines.partial.len() <= MAX_LINE);
        }
        assert!(lines.pending());
        lines.feed(b"\nthree\n", |l| got.push(l.to_vec()));
        assert_eq!(got.len(), 3);
        assert_eq!(got[2], b"three");
        assert_eq!(lines.dropped, 1);
        assert!(!lines.pending());
    }

    #[test]
    fn secrets_differ() {
        let (a, b) = (secret(), secret());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}

//! The scanner on a thread of its own, ahead of the reader: with more than one thread, the
//! reader's thread copies what it has buffered from the event it is offered on (a window of up
//! to 1 MiB) and hands it to the scanning thread, which scans the events of the window one after
//! another into batches ([`Found`] and where each event is), while the reader's thread takes the
//! events of the batches into the trace, in order, exactly as it takes the events it scans
//! itself. The scanning is most of the fast path's work; interning, threads, flows and the XSpace
//! stay on the reader's thread, so everything is kept in the order of one thread.
//!
//! The reader's thread never waits: an event the scanner has not reached yet (it was held up, or
//! has just been given its window) the reader's thread scans itself, telling the scanner where
//! it is, and the scanner passes over the events behind it by their brackets alone. On a machine
//! whose other core is busy the import so runs about as fast as with one thread, rather than
//! waiting for a thread that does not run. Which thread scans an event changes nothing: both
//! scan its bytes with the same code into the same form.
//!
//! Nothing depends on the scanning thread being right about where events are: an event of a
//! batch is used only when the reader offers the event at the very place in the input where the
//! window has it (the window holds the input's bytes there, and the scan of an event depends on
//! its bytes alone), so that the reader's own position, line count and errors stay as they are;
//! anything else (the end of a window, text the window does not have) goes to the path of one
//! thread for that event. An event the scanner declines is passed over by its brackets and
//! quotes alone so that the window goes on after it, and is declined again on the reader's
//! thread, which reads it through the visitors as always.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError, channel, sync_channel};
use std::thread::Scope;

use super::{Found, Stop};
use crate::read::READ_BUFFER;

/// How the text is cut: the largest window copied, the events of a batch, and the least text a
/// window is worth making of (less is scanned on the reader's thread until it refills).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) window: usize,
    pub(crate) events: usize,
    pub(crate) least: usize,
    /// Whether the reader's thread waits for the scanning thread (tests) rather than scanning
    /// an event itself when the scanner has not reached it yet.
    pub(crate) wait: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            window: READ_BUFFER,
            events: 256,
            least: 8 << 10,
            wait: false,
        }
    }
}

/// Events the scanning thread read whole and the reader's thread took, in all (for tests that
/// make sure the thread is used).
#[cfg(test)]
pub(super) static TAKEN: AtomicU64 = AtomicU64::new(0);

/// The events of a window's first batch, which the reader's thread is soon to ask for.
const FIRST_BATCH: usize = 16;

/// Batches waiting for the reader's thread: what bounds how far the scanner runs ahead.
const BATCHES_AHEAD: usize = 16;

/// An event of a window, as the scanning thread found it.
#[derive(Clone, Debug)]
pub(super) struct Event {
    /// Where it starts in its window.
    start: usize,
    pub(super) len: usize,
    pub(super) newlines: u64,
    pub(super) last_newline: usize,
    /// Its members in the batch's [`Found`].
    pub(super) members: Range<usize>,
    /// Whether it was read whole (else declined, and only its extent is known).
    read: bool,
}

struct Window {
    id: u64,
    /// Where it starts in the input.
    offset: u64,
    text: Arc<[u8]>,
}

/// Where the current window is in the input.
struct Placed {
    /// The offset of its first byte in the input.
    offset: u64,
}

#[derive(Default)]
struct Batch {
    window: u64,
    found: Found,
    events: Vec<Event>,
    /// The window has no more events.
    last: bool,
}

/// What [`Ahead::next`] found for the event offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Scanned whole: [`Ahead::current`] has it.
    Read,
    /// Declined by the scanner: it goes to the visitors.
    Declined,
}

/// The reader's side of the scanning thread.
pub(crate) struct Ahead {
    windows: SyncSender<Window>,
    batches: Receiver<Batch>,
    spare: Sender<Batch>,
    /// Windows with a lower id than this are abandoned.
    cancel: Arc<AtomicU64>,
    /// Where the reader's thread is in the input when it scans an event itself: the scanner
    /// passes over the events before it without scanning them.
    reader_at: Arc<AtomicU64>,
    limits: Limits,
    batch: Batch,
    /// The next event of `batch`.
    next: usize,
    /// The current window: its id, and where it is.
    window: u64,
    placed: Option<Placed>,
    /// Batches of the current window are still to come.
    open: bool,
    /// The current window was made at the event now offered and has given no event yet.
    fresh: bool,
    /// The scanning thread is gone (it cannot be, but then the reader's thread does it all).
    gone: bool,
}

impl Ahead {
    /// Starts the scanning thread in `scope`; `None` when no thread can be started (the reader's
    /// thread then scans alone).
    pub(crate) fn start<'scope>(scope: &'scope Scope<'scope, '_>, limits: Limits) -> Option<Ahead> {
        let (windows, to_scan) = sync_channel::<Window>(2);
        let (scanned, batches) = sync_channel::<Batch>(BATCHES_AHEAD);
        let (spare, spares) = channel::<Batch>();
        let cancel = Arc::new(AtomicU64::new(0));
        let cancelled = Arc::clone(&cancel);
        let reader_at = Arc::new(AtomicU64::new(0));
        let reader = Arc::clone(&reader_at);
        std::thread::Builder::new()
            .name("profkit-chrome-scan".to_owned())
            .spawn_scoped(scope, move || {
                scan_windows(&to_scan, &scanned, &spares, &cancelled, &reader, limits)
            })
            .ok()?;
        Some(Ahead {
            windows,
            batches,
            spare,
            cancel,
            reader_at,
            limits,
            batch: Batch::default(),
            next: 0,
            window: 0,
            placed: None,
            open: false,
            fresh: false,
            gone: false,
        })
    }

    /// The event last found by [`Ahead::next`], and what its members are in.
    pub(super) fn current(&self) -> (&Found, Option<&Event>) {
        (
            &self.batch.found,
            self.next
                .checked_sub(1)
                .and_then(|i| self.batch.events.get(i)),
        )
    }

    /// What the scanning thread found of the event at the start of `text`, `offset` bytes into
    /// the input; `None` when it has nothing for it (the reader's thread scans it).
    pub(super) fn next(&mut self, text: &[u8], complete: bool, offset: u64) -> Option<Next> {
        if self.gone || offset == u64::MAX {
            return None;
        }
        loop {
            if let Some(event) = self.batch.events.get(self.next) {
                let at = self
                    .placed
                    .as_ref()
                    .and_then(|p| p.offset.checked_add(event.start as u64));
                match at {
                    // Scanned on the reader's thread while the scanner was behind.
                    Some(at) if at < offset => {
                        self.next += 1;
                        continue;
                    }
                    Some(at) if at == offset => {}
                    _ => {
                        self.abandon();
                        return None;
                    }
                }
                if text.len() < event.len {
                    // The reader has not buffered all of it yet: the path of one thread asks
                    // for more, and the event is offered again.
                    return None;
                }
                self.next += 1;
                self.fresh = false;
                #[cfg(test)]
                TAKEN.fetch_add(u64::from(event.read), Ordering::Relaxed);
                return Some(if event.read {
                    Next::Read
                } else {
                    Next::Declined
                });
            }
            if self.open {
                let batch = if self.limits.wait {
                    self.batches.recv().map_err(|_| TryRecvError::Disconnected)
                } else {
                    self.batches.try_recv()
                };
                if matches!(batch, Err(TryRecvError::Empty)) {
                    // The scanner has not reached this event: the reader's thread does not
                    // wait for it, and the scanner passes over what it scans itself.
                    self.reader_at.store(offset, Ordering::Relaxed);
                    return None;
                }
                let used = std::mem::take(&mut self.batch);
                let _ = self.spare.send(used);
                match batch {
                    Ok(batch) if batch.window == self.window => {
                        self.open = !batch.last;
                        self.batch = batch;
                        self.next = 0;
                    }
                    Ok(stale) => {
                        let _ = self.spare.send(stale);
                    }
                    Err(_) => {
                        self.gone = true;
                        return None;
                    }
                }
                continue;
            }
            // A window made here that found nothing (the event goes past the text, or is not
            // one): the reader's thread takes it.
            if self.fresh || (text.len() < self.limits.least && !complete) {
                self.fresh = false;
                return None;
            }
            let len = text.len().min(self.limits.window);
            let window: Arc<[u8]> = Arc::from(text.get(..len).unwrap_or_default());
            self.window += 1;
            self.placed = Some(Placed { offset });
            self.batch.events.clear();
            self.next = 0;
            if self
                .windows
                .send(Window {
                    id: self.window,
                    offset,
                    text: window,
                })
                .is_err()
            {
                self.gone = true;
                return None;
            }
            self.open = true;
            self.fresh = true;
        }
    }

    /// Leaves the current window (the text differs from it): what is still scanned of it is
    /// dropped as it comes.
    fn abandon(&mut self) {
        self.cancel.store(self.window + 1, Ordering::Relaxed);
        self.batch.events.clear();
        self.next = 0;
        self.open = false;
        self.fresh = false;
        self.placed = None;
    }
}

/// The scanning thread: each window's events into batches, until the reader's side is dropped.
fn scan_windows(
    windows: &Receiver<Window>,
    batches: &SyncSender<Batch>,
    spares: &Receiver<Batch>,
    cancel: &AtomicU64,
    reader_at: &AtomicU64,
    limits: Limits,
) {
    let fresh = |id: u64| {
        let mut batch = spares.try_recv().unwrap_or_default();
        batch.window = id;
        batch.found.clear();
        batch.events.clear();
        batch.last = false;
        batch
    };
    while let Ok(window) = windows.recv() {
        let text = &window.text[..];
        let mut batch = fresh(window.id);
        let mut first = true;
        let mut at = 0;
        while cancel.load(Ordering::Relaxed) <= window.id {
            let rest = text.get(at..).unwrap_or_default();
            if window.offset + (at as u64) < reader_at.load(Ordering::Relaxed) {
                // Behind the reader's thread, which scanned this one itself.
                match object_len(rest) {
                    Some(len) => at += len,
                    None => break,
                }
            } else {
                let marks = batch.found.marks();
                let event = match batch.found.scan(rest) {
                    Ok(len) => Event {
                        start: at,
                        len,
                        newlines: batch.found.newlines,
                        last_newline: batch.found.last_newline,
                        members: marks[0]..batch.found.members.len(),
                        read: true,
                    },
                    Err(stop) => {
                        batch.found.truncate(marks);
                        match (stop, object_len(rest)) {
                            (Stop::Decline, Some(len)) => Event {
                                start: at,
                                len,
                                newlines: 0,
                                last_newline: 0,
                                members: marks[0]..marks[0],
                                read: false,
                            },
                            _ => break,
                        }
                    }
                };
                at += event.len;
                batch.events.push(event);
            }
            // The next element, if it is an object.
            at = after_ws(text, at);
            if text.get(at) != Some(&b',') {
                break;
            }
            at = after_ws(text, at + 1);
            if text.get(at) != Some(&b'{') {
                break;
            }
            // A window's first batch short, so that the reader's thread has it soon.
            let full = if first {
                FIRST_BATCH.min(limits.events)
            } else {
                limits.events
            };
            if batch.events.len() >= full {
                first = false;
                if batches.send(batch).is_err() {
                    return;
                }
                batch = fresh(window.id);
            }
        }
        batch.last = true;
        if batches.send(batch).is_err() {
            return;
        }
    }
}

fn after_ws(text: &[u8], mut at: usize) -> usize {
    while text
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        at += 1;
    }
    at
}

/// The length of the object at the start of `text` (at its `{`), found by its brackets and
/// quotes alone: right for any valid JSON, and only a guess for anything else (which the reader
/// then refuses, or which does not match the text it offers next).
pub(super) fn object_len(text: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = text.get(i) {
        match b {
            b'"' => {
                i += 1;
                loop {
                    match text.get(i)? {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

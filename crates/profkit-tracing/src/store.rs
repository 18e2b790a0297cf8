//! What the layer keeps beside the recorder's events: the fields of spans and events and the
//! `follows_from` links, under a serial number that the recorder stores with the span's push (its
//! tag). Everything kept is charged to the recorder's memory cap (a thread takes 64 KiB of it at a
//! time while it can); what does not fit is counted.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use profkit_events::recorder;

use crate::fields::Value;

/// What is kept for one span or event, or for a `follows_from` link.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Info {
    /// Its kept fields, in the order recorded.
    pub fields: Vec<(&'static str, Value)>,
    /// For a link: the span followed and the follower.
    pub link: Option<(SpanKey, SpanKey)>,
}

/// How a link names a span: by its serial when it has one (its pushes carry it), else by its
/// registry id (which its pushes carry instead, and which `tracing` reuses once the span is
/// closed: the span is the one alive with that id at the link's time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanKey {
    /// The span's serial, if it has fields.
    pub serial: Option<u64>,
    /// Its registry id.
    pub id: u64,
}

/// Serials are at least this; tags below it are registry ids.
pub(crate) const FIRST_SERIAL: u64 = 1 << 63;

/// One piece of a serial's info, as recorded (40 bytes).
#[derive(Debug)]
struct Piece {
    serial: u64,
    fields: Vec<(&'static str, Value)>,
    link: Option<Box<(SpanKey, SpanKey)>>,
}

/// Pieces per chunk of the store: chunks are never moved once full, so a long session's store
/// grows without copying what it holds.
const CHUNK: usize = 4096;

/// The infos of a session, as recorded: a serial's fields may come in several pieces (at the
/// span's creation, then from `Span::record`). Appending is cheaper than keeping a map on the
/// hot path; [`Store::infos`] makes the map once, when the session ends.
#[derive(Debug, Default)]
pub(crate) struct Store {
    chunks: Vec<Vec<Piece>>,
    /// Fields and links left out at the memory cap.
    pub(crate) dropped: u64,
}

impl Store {
    fn push(&mut self, piece: Piece) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => chunk.push(piece),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(piece);
                self.chunks.push(chunk);
            }
        }
    }

    /// The infos by serial, pieces joined in the order recorded.
    pub(crate) fn infos(self) -> HashMap<u64, Info> {
        let count = self.chunks.iter().map(Vec::len).sum();
        let mut infos: HashMap<u64, Info> = HashMap::with_capacity(count);
        for piece in self.chunks.into_iter().flatten() {
            let info = infos.entry(piece.serial).or_default();
            info.fields.extend(piece.fields);
            if let Some(link) = piece.link {
                info.link = Some(*link);
            }
        }
        infos
    }
}

static STORE: Mutex<Option<Store>> = Mutex::new(None);
/// Counts sessions, so that a thread can tell the first time it records in one.
static SESSION: AtomicU64 = AtomicU64::new(0);
static SERIAL: AtomicU64 = AtomicU64::new(FIRST_SERIAL);

/// What an entry costs beside its values.
const ENTRY_BYTES: usize = 64;

/// Bytes a thread takes from the recorder's cap at a time, so that keeping fields takes the
/// recorder's lock once per this many bytes rather than once per span.
const CREDIT: usize = 64 << 10;

thread_local! {
    /// (session, bytes) this thread has taken from the cap and not used yet.
    static CREDIT_LEFT: Cell<(u64, usize)> = const { Cell::new((0, 0)) };
}

/// Takes `bytes` from the session's memory cap: from the thread's credit, else by charging the
/// recorder for more (exactly `bytes` when a whole credit no longer fits).
fn reserve(bytes: usize) -> bool {
    let session = session();
    CREDIT_LEFT
        .try_with(|credit| {
            let (of, left) = credit.get();
            let left = if of == session { left } else { 0 };
            if left >= bytes {
                credit.set((session, left - bytes));
                return true;
            }
            let more = bytes.max(CREDIT);
            if recorder::charge(more) {
                credit.set((session, more - bytes));
                true
            } else {
                credit.set((session, 0));
                recorder::charge(bytes)
            }
        })
        .unwrap_or_else(|_| recorder::charge(bytes))
}

fn lock() -> MutexGuard<'static, Option<Store>> {
    // A panic elsewhere while holding the lock leaves plain data behind; go on with it.
    STORE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A new serial.
pub(crate) fn serial() -> u64 {
    SERIAL.fetch_add(1, Ordering::Relaxed)
}

/// Starts an empty store for a new session.
pub(crate) fn reset() {
    *lock() = Some(Store::default());
    SESSION.fetch_add(1, Ordering::Relaxed);
}

/// The current session's number.
#[inline]
pub(crate) fn session() -> u64 {
    SESSION.load(Ordering::Relaxed)
}

/// Ends the session's store and returns it.
pub(crate) fn take() -> Store {
    lock().take().unwrap_or_default()
}

/// Adds `fields` and `link` to the info of `serial`, if the recorder's cap allows; whether
/// they were kept.
pub(crate) fn add(
    serial: u64,
    fields: Vec<(&'static str, Value)>,
    link: Option<(SpanKey, SpanKey)>,
) -> bool {
    let bytes = fields.iter().map(|(_, v)| v.bytes() + 16).sum::<usize>() + ENTRY_BYTES;
    if !recorder::is_enabled() {
        return false;
    }
    let fits = reserve(bytes);
    let mut guard = lock();
    let Some(store) = guard.as_mut() else {
        return false;
    };
    if !fits {
        store.dropped += 1;
        return false;
    }
    store.push(Piece {
        serial,
        fields,
        link: link.map(Box::new),
    });
    true
}

//! What the import keeps of an event's ids and args: process and thread ids, arg values packed
//! with their keys, and each thread's store of args.

/// A process or thread id: a number or a string, as the trace writes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Id {
    Int(i64),
    Text(Box<str>),
}

impl Id {
    pub(crate) fn text(&self) -> String {
        match self {
            Id::Int(i) => i.to_string(),
            Id::Text(s) => s.to_string(),
        }
    }
}

/// An arg value as the import keeps it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Arg {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(u32),
}

impl Arg {
    pub(crate) fn is_numeric(self) -> bool {
        match self {
            Arg::Double(d) => d.is_finite(),
            Arg::Int(_) | Arg::Uint(_) => true,
            Arg::Str(_) => false,
        }
    }
}

/// An arg with its key, packed in 16 bytes (a tuple of the two takes 24): millions of them are
/// kept until the XSpace is built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct KeyArg {
    pub(crate) key: u32,
    pub(crate) tag: u32,
    pub(crate) bits: u64,
}

impl KeyArg {
    pub(crate) fn new(key: u32, arg: Arg) -> KeyArg {
        let (tag, bits) = match arg {
            Arg::Int(i) => (0, i as u64),
            Arg::Uint(u) => (1, u),
            Arg::Double(d) => (2, d.to_bits()),
            Arg::Str(s) => (3, u64::from(s)),
        };
        KeyArg { key, tag, bits }
    }

    pub(crate) fn arg(self) -> Arg {
        match self.tag {
            0 => Arg::Int(self.bits as i64),
            1 => Arg::Uint(self.bits),
            2 => Arg::Double(f64::from_bits(self.bits)),
            _ => Arg::Str(u32::try_from(self.bits).unwrap_or(0)),
        }
    }
}

/// How many args the first chunk of a thread's [`Args`] holds; each next one holds as many as
/// the thread has so far, up to [`ARGS_CHUNK`].
pub(crate) const ARGS_FIRST_CHUNK: usize = 16;

/// The args a chunk of [`Args`] holds (unless one event has more): 64 KiB, below the C
/// allocator's `mmap` threshold, so that a chunk freed is reused for the XSpace rather than given
/// back to the kernel and faulted in again.
pub(crate) const ARGS_CHUNK: usize = 1 << 12;

/// The args of the events of one thread, one after the other, in chunks that are allocated once
/// (no copy as the store grows) and freed as soon as the items using them are converted, so that
/// a line's events take the place of its args. An item's args are never split between chunks;
/// `at` is the chunk's index times 2^32 plus the place in it.
#[derive(Default)]
pub(crate) struct Args {
    pub(crate) chunks: Vec<Vec<KeyArg>>,
    /// How many args of each chunk items still use.
    pub(crate) live: Vec<usize>,
    pub(crate) total: usize,
}

impl Args {
    /// Appends an event's args; returns where they are.
    pub(crate) fn push(&mut self, args: &[KeyArg]) -> (u64, u32) {
        let len = u32::try_from(args.len()).unwrap_or(u32::MAX);
        let args = args.get(..len as usize).unwrap_or_default();
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= args.len());
        if !fits && !args.is_empty() {
            let capacity = self
                .total
                .clamp(ARGS_FIRST_CHUNK, ARGS_CHUNK)
                .max(args.len());
            self.chunks.push(Vec::with_capacity(capacity));
            self.live.push(0);
        }
        let chunk = self.chunks.len().saturating_sub(1);
        let at = match self.chunks.last_mut() {
            Some(c) => {
                let at = c.len();
                c.extend_from_slice(args);
                at
            }
            None => 0,
        };
        if let Some(live) = self.live.last_mut() {
            *live += args.len();
        }
        self.total += args.len();
        ((chunk as u64) << 32 | at as u64, len)
    }

    pub(crate) fn place(at: u64, len: u32) -> (usize, std::ops::Range<usize>) {
        let chunk = (at >> 32) as usize;
        let from = (at & 0xffff_ffff) as usize;
        (chunk, from..from + len as usize)
    }

    pub(crate) fn get(&self, at: u64, len: u32) -> &[KeyArg] {
        let (chunk, range) = Args::place(at, len);
        self.chunks
            .get(chunk)
            .and_then(|c| c.get(range))
            .unwrap_or_default()
    }

    pub(crate) fn get_mut(&mut self, at: u64, len: u32) -> &mut [KeyArg] {
        let (chunk, range) = Args::place(at, len);
        self.chunks
            .get_mut(chunk)
            .and_then(|c| c.get_mut(range))
            .unwrap_or_default()
    }

    /// Adds args to an item's: in place when its args end the last chunk and there is room,
    /// else after a copy of them (an `E` or async end with args, a legacy async step: rare).
    pub(crate) fn extend(&mut self, at: &mut u64, len: &mut u32, more: &[KeyArg]) {
        if more.is_empty() {
            return;
        }
        let (chunk, range) = Args::place(*at, *len);
        let in_place = chunk + 1 == self.chunks.len()
            && self
                .chunks
                .last()
                .is_some_and(|c| c.len() == range.end && c.capacity() - c.len() >= more.len())
            && *len as usize + more.len() <= u32::MAX as usize;
        if in_place {
            if let Some(c) = self.chunks.last_mut() {
                c.extend_from_slice(more);
            }
            if let Some(live) = self.live.last_mut() {
                *live += more.len();
            }
            self.total += more.len();
            *len += more.len() as u32;
            return;
        }
        let mut all = self.get(*at, *len).to_vec();
        all.extend_from_slice(more);
        self.release(*at, *len);
        (*at, *len) = self.push(&all);
    }

    /// Marks an item's args as no longer used, and frees their chunk when it was the last use.
    pub(crate) fn release(&mut self, at: u64, len: u32) {
        if len == 0 {
            return;
        }
        let (chunk, _) = Args::place(at, len);
        if let Some(live) = self.live.get_mut(chunk) {
            *live = live.saturating_sub(len as usize);
            if *live == 0 {
                if let Some(c) = self.chunks.get_mut(chunk) {
                    *c = Vec::new();
                }
            }
        }
    }
}

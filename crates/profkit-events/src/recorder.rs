//! A low-overhead recorder of events for Rust programs, in the manner of Paddle's `RecordEvent`.
//!
//! One global state word says whether the recorder is on (and in which [`ProfilerState`]); when it
//! is off, a [`RecordEvent`], [`mark`] or [`record_event!`](crate::record_event) costs one relaxed
//! atomic load. When it is on, each thread appends its events to its own blocks of memory, with no
//! lock: an event is three 64-bit words (kind and name id, the CPU's time-stamp counter, a device
//! timestamp) stored with plain atomic stores, then the block's length is published with a release
//! store. Every block is registered (under a lock, once per 2,048 events) with a global registry
//! that [`disable`] reads, so the events of every thread are collected, in order, whether the
//! thread is still running, blocked, or has exited. Names are interned: a `&'static str` once per
//! thread (or once per call site with the macro), an owned name once per session.
//!
//! [`enable`] starts a session (with a `_start_profiler_` mark) and [`disable`] ends it (with a
//! `_stop_profiler_` mark) and returns everything recorded as a [`Recording`]. A session has a cap
//! on memory ([`RecorderConfig::max_bytes`]): once blocks and names would exceed it, further events
//! are counted in [`Recording::dropped`] instead of stored, so a long run cannot exhaust memory.
//!
//! Device timing goes through a [`DeviceTimer`], asked for a timestamp at every push, pop and mark
//! while the state includes the device ([`ProfilerState::Device`], [`ProfilerState::All`]).
//! [`CpuTimer`] is the implementation shipped here; a CUDA backend plugs in the same way (see
//! [`DeviceTimer`]).
//!
//! ```
//! use profkit_events::recorder::{self, RecorderConfig, RecordEvent};
//! # let _serial = recorder::test_lock();
//! recorder::enable(RecorderConfig::default())?;
//! {
//!     let _step = profkit_events::record_event!("step");
//!     let _inner = RecordEvent::new(format!("layer {}", 3));
//! }
//! let recording = recorder::disable()?;
//! let names: Vec<&str> = recording.threads[0].events.iter().map(|e| &*e.name).collect();
//! assert_eq!(names, ["_start_profiler_", "step", "layer 3", "layer 3", "step", "_stop_profiler_"]);
//! # Ok::<(), profkit_events::Error>(())
//! ```

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock};

use crate::error::{Error, Result};
use crate::event::{DeviceTime, Event, EventKind, Name, ProfilerState, Recording, ThreadEvents};

/// Events per block.
pub const BLOCK_EVENTS: usize = 2048;
const WORDS: usize = 3;
/// Bytes of one block of events.
pub const BLOCK_BYTES: usize = BLOCK_EVENTS * WORDS * 8;
/// The default [`RecorderConfig::max_bytes`]: 256 MiB, about 11 million events.
pub const DEFAULT_MAX_BYTES: usize = 256 << 20;
/// What an interned owned name is charged against the cap besides its bytes.
const NAME_OVERHEAD: usize = 64;

const MODE_MASK: u64 = 0b11;
const MODE_DEVICE: u64 = 0b10;
const GEN_SHIFT: u32 = 8;
/// Owned-name ids have this bit set; static-name ids do not.
const OWNED: u32 = 1 << 31;
/// The device word of an event without a device timestamp.
const NO_DEVICE: u64 = u64::MAX;
/// The bit of an event's first word that says its third word is a tag, not a device token.
const TAGGED: u64 = 1 << 2;
/// What the hot path passes for an event without a tag.
const NO_TAG: Option<u64> = None;

/// The state word: mode in the low bits, the session generation above.
static STATE: AtomicU64 = AtomicU64::new(0);

/// Serialises [`enable`] and [`disable`].
static CONTROL: Mutex<()> = Mutex::new(());

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));

static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a lock leaves plain data behind; go on with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A source of device timestamps, asked at each push, pop and mark while the recorder's state
/// includes the device.
///
/// [`DeviceTimer::timestamp`] is on the hot path: it returns a token (a nanosecond count, or the
/// index of something that will give one later), and [`DeviceTimer::resolve`] turns tokens into
/// nanoseconds when [`disable`] collects the events.
///
/// A CUDA backend, as Paddle's profiler design has it: `timestamp` takes a `cudaEvent_t` from a pool (grown
/// off the hot path), records it on the current stream with `cudaEventRecord`, and returns its
/// pool index; `resolve` calls `cudaEventSynchronize` on it and returns
/// `cudaEventElapsedTime(reference, event)` in nanoseconds, where `reference` is an event
/// recorded when the timer was created; `device` returns the ordinal from `cudaGetDevice`. Pass
/// it as [`RecorderConfig::device_timer`] with [`ProfilerState::All`] or
/// [`ProfilerState::Device`]; the report's GPU times are then differences of those timestamps.
pub trait DeviceTimer: Send + Sync {
    /// The device the timestamps belong to.
    fn device(&self) -> u32 {
        0
    }

    /// A token for the current device time. `u64::MAX` is reserved (it is stored as
    /// `u64::MAX - 1`).
    fn timestamp(&self) -> u64;

    /// Nanoseconds on the device clock for a token from [`DeviceTimer::timestamp`], or `None` if it
    /// has none. The default takes the token as nanoseconds.
    fn resolve(&self, token: u64) -> Option<u64> {
        Some(token)
    }
}

/// A device timer on the CPU's monotonic clock: nanoseconds since the timer was made. For tests,
/// and for programs that want the report's device columns filled on machines without a device.
#[derive(Clone, Copy, Debug)]
pub struct CpuTimer {
    origin: std::time::Instant,
    device: u32,
}

impl CpuTimer {
    /// A timer for device `device`, starting at 0 now.
    pub fn new(device: u32) -> CpuTimer {
        CpuTimer {
            origin: std::time::Instant::now(),
            device,
        }
    }
}

impl Default for CpuTimer {
    fn default() -> Self {
        CpuTimer::new(0)
    }
}

impl DeviceTimer for CpuTimer {
    fn device(&self) -> u32 {
        self.device
    }

    fn timestamp(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }
}

/// How a session records.
#[derive(Clone)]
pub struct RecorderConfig {
    /// What to time: [`ProfilerState::Cpu`], or with device timestamps [`ProfilerState::Device`]
    /// or [`ProfilerState::All`] (which need [`RecorderConfig::device_timer`] to have any).
    pub state: ProfilerState,
    /// The most memory events and interned names may take, in bytes (whole blocks of
    /// [`BLOCK_BYTES`]); events beyond it are counted as dropped.
    pub max_bytes: usize,
    /// Where device timestamps come from.
    pub device_timer: Option<Arc<dyn DeviceTimer>>,
}

impl Default for RecorderConfig {
    fn default() -> Self {
        RecorderConfig {
            state: ProfilerState::Cpu,
            max_bytes: DEFAULT_MAX_BYTES,
            device_timer: None,
        }
    }
}

impl std::fmt::Debug for RecorderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecorderConfig")
            .field("state", &self.state)
            .field("max_bytes", &self.max_bytes)
            .field("device_timer", &self.device_timer.is_some())
            .finish()
    }
}

impl RecorderConfig {
    /// The configuration with another state.
    pub fn state(mut self, state: ProfilerState) -> Self {
        self.state = state;
        self
    }

    /// The configuration with another memory cap.
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The configuration with a device timer.
    pub fn device_timer(mut self, timer: impl DeviceTimer + 'static) -> Self {
        self.device_timer = Some(Arc::new(timer));
        self
    }
}

/// A block of events shared by its thread (which writes) and the registry (which reads).
struct Block {
    words: Box<[AtomicU64]>,
    len: AtomicUsize,
}

impl Block {
    fn new() -> Arc<Block> {
        Arc::new(Block {
            words: (0..BLOCK_EVENTS * WORDS)
                .map(|_| AtomicU64::new(0))
                .collect(),
            len: AtomicUsize::new(0),
        })
    }

    #[inline]
    fn write(&self, index: usize, w0: u64, w1: u64, w2: u64) {
        if let Some([a, b, c]) = self.words.get(index * WORDS..index * WORDS + WORDS) {
            a.store(w0, Ordering::Relaxed);
            b.store(w1, Ordering::Relaxed);
            c.store(w2, Ordering::Relaxed);
            self.len.store(index + 1, Ordering::Release);
        }
    }
}

/// What the registry knows of a thread that recorded.
struct ThreadShared {
    index: u32,
    name: Option<String>,
    /// The session the blocks belong to.
    generation: AtomicU64,
    blocks: Mutex<Vec<Arc<Block>>>,
    dropped: AtomicU64,
}

/// The running session.
struct Session {
    generation: u64,
    state: ProfilerState,
    anchor_unix_ns: u64,
    anchor_raw: u64,
    budget: usize,
    device: Option<Arc<dyn DeviceTimer>>,
    owned_names: Vec<Arc<str>>,
    owned_index: HashMap<Arc<str>, u32>,
}

#[derive(Default)]
struct Registry {
    threads: Vec<Arc<ThreadShared>>,
    next_index: u32,
    generation: u64,
    session: Option<Session>,
    static_names: Vec<&'static str>,
    static_index: HashMap<&'static str, u32>,
}

impl Registry {
    fn static_id(&mut self, name: &'static str) -> u32 {
        if let Some(&id) = self.static_index.get(name) {
            return id;
        }
        let id = self.static_names.len() as u32 & !OWNED;
        self.static_names.push(name);
        self.static_index.insert(name, id);
        id
    }
}

const CACHE: usize = 64;

/// A thread's recording state.
struct Local {
    generation: u64,
    block: Option<Arc<Block>>,
    len: usize,
    shared: Option<Arc<ThreadShared>>,
    clock: Option<quanta::Clock>,
    device: Option<Arc<dyn DeviceTimer>>,
    dropping: bool,
    /// Static names by address: (pointer, length, id + 1).
    static_cache: [(usize, usize, u32); CACHE],
    owned_cache: Option<HashMap<Box<str>, u32>>,
}

thread_local! {
    static LOCAL: RefCell<Local> = const {
        RefCell::new(Local {
            generation: 0,
            block: None,
            len: 0,
            shared: None,
            clock: None,
            device: None,
            dropping: false,
            static_cache: [(0, 0, 0); CACHE],
            owned_cache: None,
        })
    };
}

/// A name as the hot path gets it.
enum NameRef<'a> {
    Id(u32),
    Static(&'static str),
    Owned(&'a str),
}

impl Local {
    #[inline]
    fn record(
        &mut self,
        kind: EventKind,
        name: NameRef<'_>,
        word: u64,
        tag: Option<u64>,
    ) -> Option<u32> {
        let generation = word >> GEN_SHIFT;
        if self.generation != generation {
            self.start_session(generation)?;
        }
        let id = match name {
            NameRef::Id(id) => id,
            NameRef::Static(s) => self.static_id(s),
            NameRef::Owned(s) => match self.owned_id(s) {
                Some(id) => id,
                None => {
                    self.count_dropped();
                    return None;
                }
            },
        };
        if (self.len >= BLOCK_EVENTS || self.block.is_none())
            && (self.dropping || !self.next_block())
        {
            self.count_dropped();
            return Some(id);
        }
        let raw = match &self.clock {
            Some(clock) => clock.raw(),
            None => 0,
        };
        let (device, tagged) = match (tag, &self.device) {
            (Some(tag), _) => (tag, TAGGED),
            (None, Some(timer)) if word & MODE_DEVICE != 0 => {
                (timer.timestamp().min(NO_DEVICE - 1), 0)
            }
            _ => (NO_DEVICE, 0),
        };
        let w0 = (u64::from(id) << 32) | kind_code(kind) | tagged;
        if let Some(block) = &self.block {
            block.write(self.len, w0, raw, device);
            self.len += 1;
        }
        Some(id)
    }

    fn count_dropped(&self) {
        if let Some(shared) = &self.shared {
            shared.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[inline]
    fn static_id(&mut self, name: &'static str) -> u32 {
        let ptr = name.as_ptr() as usize;
        let slot = ((ptr >> 3) ^ name.len()) % CACHE;
        if let Some(&(p, l, id)) = self.static_cache.get(slot)
            && p == ptr
            && l == name.len()
            && id != 0
        {
            return id - 1;
        }
        let id = lock(&REGISTRY).static_id(name);
        if let Some(entry) = self.static_cache.get_mut(slot) {
            *entry = (ptr, name.len(), id + 1);
        }
        id
    }

    fn owned_id(&mut self, name: &str) -> Option<u32> {
        if let Some(&id) = self.owned_cache.as_ref().and_then(|c| c.get(name)) {
            return Some(id);
        }
        let id = {
            let mut registry = lock(&REGISTRY);
            let session = registry.session.as_mut()?;
            if session.generation != self.generation {
                return None;
            }
            match session.owned_index.get(name) {
                Some(&id) => id,
                None => {
                    let cost = name.len() + NAME_OVERHEAD;
                    if session.budget < cost || session.owned_names.len() >= (OWNED - 1) as usize {
                        return None;
                    }
                    session.budget -= cost;
                    let id = OWNED | session.owned_names.len() as u32;
                    let text: Arc<str> = name.into();
                    session.owned_names.push(text.clone());
                    session.owned_index.insert(text, id);
                    id
                }
            }
        };
        self.owned_cache
            .get_or_insert_with(HashMap::new)
            .insert(name.into(), id);
        Some(id)
    }

    /// Joins the session of `generation`: registers the thread on first use, picks up the clock
    /// and device timer, and takes a first block.
    #[cold]
    fn start_session(&mut self, generation: u64) -> Option<()> {
        let shared = match &self.shared {
            Some(shared) => shared.clone(),
            None => {
                let mut registry = lock(&REGISTRY);
                let shared = Arc::new(ThreadShared {
                    index: registry.next_index,
                    name: std::thread::current().name().map(str::to_owned),
                    generation: AtomicU64::new(0),
                    blocks: Mutex::new(Vec::new()),
                    dropped: AtomicU64::new(0),
                });
                registry.next_index = registry.next_index.wrapping_add(1);
                registry.threads.push(shared.clone());
                self.shared = Some(shared.clone());
                shared
            }
        };
        let device = {
            let registry = lock(&REGISTRY);
            let session = registry.session.as_ref()?;
            if session.generation != generation {
                return None;
            }
            session.device.clone()
        };
        lock(&shared.blocks).clear();
        shared.generation.store(generation, Ordering::Relaxed);
        shared.dropped.store(0, Ordering::Relaxed);
        self.generation = generation;
        self.clock = CLOCK.get().cloned();
        self.device = device;
        self.owned_cache = None;
        self.block = None;
        self.len = 0;
        self.dropping = false;
        Some(())
    }

    /// Takes a new block from the session's budget; false (and dropping from now on) when the
    /// budget is spent or the session is over.
    #[cold]
    fn next_block(&mut self) -> bool {
        let Some(shared) = self.shared.clone() else {
            return false;
        };
        {
            let mut registry = lock(&REGISTRY);
            let Some(session) = registry.session.as_mut() else {
                return false;
            };
            if session.generation != self.generation || session.budget < BLOCK_BYTES {
                self.dropping = true;
                return false;
            }
            session.budget -= BLOCK_BYTES;
        }
        let block = Block::new();
        lock(&shared.blocks).push(block.clone());
        self.block = Some(block);
        self.len = 0;
        true
    }
}

fn kind_code(kind: EventKind) -> u64 {
    match kind {
        EventKind::Mark => 0,
        EventKind::PushRange => 1,
        EventKind::PopRange => 2,
    }
}

fn kind_of(code: u64) -> EventKind {
    match code & 3 {
        0 => EventKind::Mark,
        1 => EventKind::PushRange,
        _ => EventKind::PopRange,
    }
}

/// Records one event on the current thread; returns the name's id (for the pop of a guard).
#[inline]
fn record(kind: EventKind, name: NameRef<'_>, word: u64, tag: Option<u64>) -> Option<u32> {
    LOCAL
        .try_with(|cell| {
            // A device timer that records events itself would re-enter; its events are skipped.
            let mut local = cell.try_borrow_mut().ok()?;
            local.record(kind, name, word, tag)
        })
        .ok()
        .flatten()
}

/// The current state word, and whether it says the recorder is on.
#[inline]
fn current() -> Option<u64> {
    let word = STATE.load(Ordering::Relaxed);
    (word & MODE_MASK != 0).then_some(word)
}

/// The recorder's state.
pub fn state() -> ProfilerState {
    match STATE.load(Ordering::Relaxed) & MODE_MASK {
        0 => ProfilerState::Disabled,
        1 => ProfilerState::Cpu,
        2 => ProfilerState::Device,
        _ => ProfilerState::All,
    }
}

/// Whether the recorder is on.
#[inline]
pub fn is_enabled() -> bool {
    current().is_some()
}

/// A name known at compile time with a slot for its interned id: what
/// [`record_event!`](crate::record_event) puts in a `static` at each call site, so that the hot
/// path neither hashes nor compares the name.
#[derive(Debug)]
pub struct Callsite {
    name: &'static str,
    id: AtomicU32,
}

impl Callsite {
    /// A call site for `name`.
    pub const fn new(name: &'static str) -> Callsite {
        Callsite {
            name,
            id: AtomicU32::new(0),
        }
    }

    /// The name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    #[inline]
    fn id(&self) -> u32 {
        match self.id.load(Ordering::Relaxed) {
            0 => {
                let id = lock(&REGISTRY).static_id(self.name);
                self.id.store(id + 1, Ordering::Relaxed);
                id
            }
            stored => stored - 1,
        }
    }
}

/// A range: a push when made, the matching pop when dropped (Paddle's `RecordEvent`). Nothing
/// is recorded when the recorder is off when it is made; a pop whose session has ended is not
/// recorded either (its push shows up as never popped).
#[must_use = "the range ends when this is dropped: bind it with `let _range = ...`"]
#[derive(Debug)]
pub struct RecordEvent {
    id: u32,
    /// The session of the push; 0 when nothing was pushed.
    generation: u64,
}

impl RecordEvent {
    /// A range named `name`: a `&'static str` is interned once per thread and never copied, an
    /// owned `String` is interned once per session.
    #[inline]
    pub fn new<N: Into<Name>>(name: N) -> RecordEvent {
        let Some(word) = current() else {
            return RecordEvent::INACTIVE;
        };
        let name = name.into();
        let id = match &name {
            Cow::Borrowed(s) => record(EventKind::PushRange, NameRef::Static(s), word, NO_TAG),
            Cow::Owned(s) => record(EventKind::PushRange, NameRef::Owned(s), word, NO_TAG),
        };
        RecordEvent::started(id, word)
    }

    /// A range named by a call site (what [`record_event!`](crate::record_event) uses).
    #[inline]
    pub fn from_callsite(callsite: &'static Callsite) -> RecordEvent {
        let Some(word) = current() else {
            return RecordEvent::INACTIVE;
        };
        let id = record(
            EventKind::PushRange,
            NameRef::Id(callsite.id()),
            word,
            NO_TAG,
        );
        RecordEvent::started(id, word)
    }

    const INACTIVE: RecordEvent = RecordEvent {
        id: 0,
        generation: 0,
    };

    #[inline]
    fn started(id: Option<u32>, word: u64) -> RecordEvent {
        match id {
            Some(id) => RecordEvent {
                id,
                generation: word >> GEN_SHIFT,
            },
            None => RecordEvent::INACTIVE,
        }
    }

    /// Whether the push was recorded (or counted as dropped), so that the pop will be too.
    pub fn is_active(&self) -> bool {
        self.generation != 0
    }
}

impl Drop for RecordEvent {
    #[inline]
    fn drop(&mut self) {
        if self.generation == 0 {
            return;
        }
        if let Some(word) = current()
            && word >> GEN_SHIFT == self.generation
        {
            record(EventKind::PopRange, NameRef::Id(self.id), word, NO_TAG);
        }
    }
}

/// Opens a range for the rest of the enclosing scope: `let _range = record_event!("forward");`.
/// A string literal is interned once at its call site; any other expression (a `String`, a
/// `&'static str` variable) goes through [`RecordEvent::new`].
#[macro_export]
macro_rules! record_event {
    ($name:literal) => {{
        static CALLSITE: $crate::recorder::Callsite = $crate::recorder::Callsite::new($name);
        $crate::recorder::RecordEvent::from_callsite(&CALLSITE)
    }};
    ($name:expr) => {
        $crate::recorder::RecordEvent::new($name)
    };
}

fn record_named<N: Into<Name>>(kind: EventKind, name: N, tag: Option<u64>) {
    let Some(word) = current() else {
        return;
    };
    match name.into() {
        Cow::Borrowed(s) => record(kind, NameRef::Static(s), word, tag),
        Cow::Owned(s) => record(kind, NameRef::Owned(&s), word, tag),
    };
}

/// Records a mark (an event without a range).
#[inline]
pub fn mark<N: Into<Name>>(name: N) {
    if current().is_some() {
        record_named(EventKind::Mark, name, NO_TAG);
    }
}

/// Records the start of a range without a guard; [`pop_range`] with the same name ends it.
#[inline]
pub fn push_range<N: Into<Name>>(name: N) {
    if current().is_some() {
        record_named(EventKind::PushRange, name, NO_TAG);
    }
}

/// Records the end of a range started with [`push_range`] (or anything else of that name).
#[inline]
pub fn pop_range<N: Into<Name>>(name: N) {
    if current().is_some() {
        record_named(EventKind::PopRange, name, NO_TAG);
    }
}

/// Records the start of a range, as [`push_range`] does, carrying `tag`: a number of the
/// caller's (an index into what it keeps beside the recording, such as a span's fields), given
/// back as the event's [`Event::tag`]. A tagged event has no device timestamp.
#[inline]
pub fn push_range_tagged<N: Into<Name>>(name: N, tag: u64) {
    if current().is_some() {
        record_named(EventKind::PushRange, name, Some(tag));
    }
}

/// Records a mark, as [`mark`] does, carrying `tag` (see [`push_range_tagged`]).
#[inline]
pub fn mark_tagged<N: Into<Name>>(name: N, tag: u64) {
    if current().is_some() {
        record_named(EventKind::Mark, name, Some(tag));
    }
}

/// Charges `bytes` that the caller keeps for the running session (the text of fields recorded
/// beside its events, say) to the session's memory cap ([`RecorderConfig::max_bytes`]): true if
/// they fit (they are then taken from what events may use), false if the cap is reached or no
/// session is running.
pub fn charge(bytes: usize) -> bool {
    if current().is_none() {
        return false;
    }
    let mut registry = lock(&REGISTRY);
    match registry.session.as_mut() {
        Some(session) if session.budget >= bytes => {
            session.budget -= bytes;
            true
        }
        _ => false,
    }
}

fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Starts a session: from now on every thread's events are recorded, the first being a mark
/// `_start_profiler_` on this thread. Fails if a session is running or `config.state` is
/// [`ProfilerState::Disabled`].
pub fn enable(config: RecorderConfig) -> Result<()> {
    let _control = lock(&CONTROL);
    if is_enabled() {
        return Err(Error::Recorder("the recorder is already enabled".into()));
    }
    let mode = match config.state {
        ProfilerState::Disabled => {
            return Err(Error::Recorder(
                "cannot enable the recorder in the Disabled state".into(),
            ));
        }
        ProfilerState::Cpu => 1,
        ProfilerState::Device => 2,
        ProfilerState::All => 3,
    };
    let clock = CLOCK.get_or_init(quanta::Clock::new);
    let generation = {
        let mut registry = lock(&REGISTRY);
        // Threads that have exited and whose events were collected are forgotten.
        registry.threads.retain(|t| Arc::strong_count(t) > 1);
        registry.generation += 1;
        let generation = registry.generation;
        registry.session = Some(Session {
            generation,
            state: config.state,
            anchor_unix_ns: unix_ns(),
            anchor_raw: clock.raw(),
            budget: config.max_bytes,
            device: config.device_timer,
            owned_names: Vec::new(),
            owned_index: HashMap::new(),
        });
        generation
    };
    STATE.store((generation << GEN_SHIFT) | mode, Ordering::SeqCst);
    mark("_start_profiler_");
    Ok(())
}

/// Ends the session: records a mark `_stop_profiler_` on this thread, stops recording, and
/// returns every thread's events in recording order (threads by index), with the count of events
/// dropped at the memory cap. Events recorded by other threads at the very moment of the call
/// may be missed. Fails if no session is running.
pub fn disable() -> Result<Recording> {
    let _control = lock(&CONTROL);
    let Some(word) = current() else {
        return Err(Error::Recorder("the recorder is not enabled".into()));
    };
    mark("_stop_profiler_");
    STATE.store(word & !MODE_MASK, Ordering::SeqCst);
    let mut registry = lock(&REGISTRY);
    let Some(session) = registry.session.take() else {
        return Err(Error::Recorder("the recorder has no session".into()));
    };
    let clock = CLOCK.get_or_init(quanta::Clock::new);
    let mut threads: Vec<&Arc<ThreadShared>> = registry
        .threads
        .iter()
        .filter(|t| t.generation.load(Ordering::Relaxed) == session.generation)
        .collect();
    threads.sort_by_key(|t| t.index);
    let name_of = |id: u32| -> Name {
        if id & OWNED != 0 {
            session
                .owned_names
                .get((id & !OWNED) as usize)
                .map_or(Cow::Borrowed("<unknown>"), |s| Cow::Owned(s.to_string()))
        } else {
            registry
                .static_names
                .get(id as usize)
                .map_or(Cow::Borrowed("<unknown>"), |s| Cow::Borrowed(*s))
        }
    };
    let ns_of = |raw: u64| -> u64 {
        let ns = if raw >= session.anchor_raw {
            i128::from(session.anchor_unix_ns)
                + i128::from(clock.delta_as_nanos(session.anchor_raw, raw))
        } else {
            i128::from(session.anchor_unix_ns)
                - i128::from(clock.delta_as_nanos(raw, session.anchor_raw))
        };
        u64::try_from(ns.max(0)).unwrap_or(u64::MAX)
    };
    let mut recording = Recording {
        state: Some(session.state),
        ..Recording::default()
    };
    for thread in threads {
        let blocks = std::mem::take(&mut *lock(&thread.blocks));
        recording.dropped += thread.dropped.swap(0, Ordering::Relaxed);
        let mut list = ThreadEvents {
            thread: thread.index,
            name: thread.name.clone(),
            os_tid: None,
            events: Vec::new(),
        };
        for block in blocks {
            let len = block.len.load(Ordering::Acquire).min(BLOCK_EVENTS);
            for chunk in block.words.chunks_exact(WORDS).take(len) {
                let [w0, w1, w2] = chunk else { continue };
                let (w0, w1, w2) = (
                    w0.load(Ordering::Relaxed),
                    w1.load(Ordering::Relaxed),
                    w2.load(Ordering::Relaxed),
                );
                let tag = (w0 & TAGGED != 0).then_some(w2);
                let device = match &session.device {
                    Some(timer) if tag.is_none() && w2 != NO_DEVICE => {
                        timer.resolve(w2).map(|ns| DeviceTime {
                            device: timer.device(),
                            ns,
                        })
                    }
                    _ => None,
                };
                list.events.push(Event {
                    kind: kind_of(w0),
                    name: name_of((w0 >> 32) as u32),
                    thread: thread.index,
                    cpu_ns: ns_of(w1),
                    device,
                    category: None,
                    args: Vec::new(),
                    tag,
                });
            }
        }
        if !list.events.is_empty() {
            recording.threads.push(list);
        }
    }
    Ok(recording)
}

/// Serialises code that enables the recorder (it is one per process): doctests and test suites
/// that run in parallel threads take this lock first. Not needed in programs.
#[doc(hidden)]
pub fn test_lock() -> MutexGuard<'static, ()> {
    static TEST: Mutex<()> = Mutex::new(());
    lock(&TEST)
}

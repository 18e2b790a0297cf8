//! Chrome trace JSON (the Trace Event Format) to XSpace, as PyTorch's profiler (Kineto),
//! catapult, TensorBoard, xprof and Paddle write it, so that their traces can be reported on,
//! validated and converted.
//!
//! Both layouts are read: an object with a `traceEvents` array wherever it sits among the other
//! keys (which are skipped without being built, except the few read below), and a bare array of
//! events, whose closing `]` may be missing as the format allows. The text streams through
//! `profkit-json`'s reader one event at a time, so memory is what the import keeps (events with
//! interned names and args), not the text; numbers are taken as written (microseconds with
//! fractions become exact picoseconds), and every error names the JSON path, line and column.
//! What becomes of each phase:
//!
//! - `X` (complete) and `B`/`E` (an `E` closes its thread's most recent open `B`) become events
//!   with a duration on their thread's line; `i`/`I`/`R` (instant, mark) events without one;
//! - async events, nestable `b`/`e`/`n` (paired by category, id and scope; ids are global
//!   unless `id2` says `local`) and legacy `S`/`T`/`F` (steps counted in a `steps` stat), go to
//!   lines of their own, one per process and name, as Perfetto shows them;
//! - flow events `s`/`t`/`f` bind to the slice enclosing them (or, for an `f` without
//!   `"bp": "e"`, the next slice on its thread), and `bind_id` with `flow_in`/`flow_out` to their
//!   own event: either way the event gets `flow_in`/`flow_out` stats holding the flow's id and a
//!   `flow_cat` stat (one per flow stat, in their order, when its flows have different
//!   categories), which the Chrome writer turns back into flow events, and a `flow` stat per flow
//!   end as TSL's `XFlow` encodes it, which xprof draws (see `xflow`);
//! - `C` (counter) events become events of the host plane's `_counters_` line, every series an
//!   arg (stat) of one event;
//! - `M` (metadata) `process_name`, `thread_name` and their `*_sort_index` name and order the
//!   lines; `P` samples, `stackFrames`, object and memory-dump events are counted and skipped.
//!
//! PyTorch (Kineto) traces keep their GPU activity apart: events of the GPU categories (`kernel`,
//! `gpu_memcpy`, `gpu_memset`, `gpu_user_annotation`, `cuda_sync`) put their thread (pid = device, tid =
//! stream) on a `/device:GPU:<device>` plane, a line per stream, their `correlation` arg (and
//! that of the launches on the host) named `correlation_id` as in xprof. `deviceProperties` become the GPU planes'
//! stats (`device_type_string`, `core_count`, `memory_size` and every property by its own name),
//! `distributedInfo` stats of the `Task Environment` plane (`rank`, `world_size`, ...).
//!
//! A process named as xprof names a GPU plane (`/device:GPU:0`) is that plane again.
//! Everything else goes to one `/host:CPU` plane with a line per (pid, tid) in first-seen order; a
//! non-negative numeric tid is the line id when no other thread took it (the others take free ids
//! in order of their `thread_sort_index`), lines come in id order, and with several processes a line's
//! display name is `<process> / <thread>`. Args become stats (numbers as int64, uint64 or double,
//! strings as strings, `true`/`false` as 1/0, anything else as its compact JSON text), `cat` too
//! (as the `category` stat when the args have a `cat`);
//! a string more than one event has is stored once, as a `ref_value`.
//! In a trace of Paddle's profiler (top-level `span_index` or a string `schemaVersion`), the
//! duration Paddle appends to host event names (`matmul dygraph[102.633 us]`) is taken off, the
//! Python and C++ halves of one OS thread (`20652(Python)`, `20652(C++)`) are one line, exact
//! times come from `args.start_time`/`end_time` (nanoseconds, where `ts` and `dur` are rounded),
//! and `[memory]` instants become `MemoryAllocation`/`MemoryDeallocation` events. Times are made
//! relative to the earliest, which the `Task Environment` plane keeps as `profile_start_time`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Read;
use std::rc::Rc;

use profkit_json::{RAW_HOOK_TOKEN, RAW_NUMBER_TOKEN, ReadOptions, Reader};
use profkit_xplane::constants::{
    COUNTERS_LINE_ID, COUNTERS_LINE_NAME, GPU_PLANE_PREFIX, HOST_PLANE_NAME, TASK_ENV_PLANE_NAME,
    stats,
};
use profkit_xplane::proto::{x_event, x_stat};
use profkit_xplane::{PlaneBuilder, StatValue, XEvent, XLine, XPlane, XSpace, XStat};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::error::{Error, Result};

mod check;
mod fast;
mod xflow;

/// The deepest nesting of arrays and objects the reader accepts.
pub const MAX_DEPTH: usize = profkit_json::MAX_DEPTH;

/// How many warnings of one kind are kept word for word; the rest are counted.
pub const WARNINGS_PER_KIND: usize = 20;

/// The stat of the `Task Environment` plane that says which format a space was made from:
/// [`SOURCE_CHROME`] for a Chrome trace, so that converting the space back writes the Trace
/// Event Format's own layout (see [`crate::trace_viewer::Layout`]).
pub const SOURCE_FORMAT_STAT: &str = "source_format";
/// [`SOURCE_FORMAT_STAT`]'s value for a space read from a Chrome trace.
pub const SOURCE_CHROME: &str = "chrome trace";

/// The stat that notes an `X` event of no duration (value `X`), which would otherwise read back
/// as an instant; the Trace Event layout writes it back as an `X` (see
/// [`crate::trace_viewer::Layout`]).
pub const PHASE_STAT: &str = "ph";

/// The names of the stats flows become.
pub mod flow_stats {
    /// The id of a flow that starts (or steps) at the event.
    pub const FLOW_OUT: &str = "flow_out";
    /// The id of a flow that ends (or steps) at the event.
    pub const FLOW_IN: &str = "flow_in";
    /// The category of the event's flows.
    pub const FLOW_CAT: &str = "flow_cat";
}

/// What kind of thing a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum WarningKind {
    /// An `E` (or async end) without its begin.
    UnmatchedEnd,
    /// A begin never ended.
    UnendedBegin,
    /// A flow event with no slice to bind to.
    UnboundFlow,
    /// A counter without a numeric value.
    CounterWithoutValue,
    /// A complete event with a negative duration (taken as zero).
    NegativeDuration,
    /// An event with a key twice (among its members or its args): the last value is used, as
    /// most JSON readers do, but readers differ, so the event may mean something else elsewhere.
    DuplicateKey,
    /// Events of phases an XSpace has no place for (samples, objects, memory dumps).
    Unsupported,
    /// A string with a lone UTF-16 surrogate escape or bytes that are not UTF-8, kept with
    /// U+FFFD in their place.
    ReplacedText,
}

impl WarningKind {
    /// Whether a producer could write it (truncated traces leave begins open and ends without
    /// begins): `validate` counts the others as errors.
    pub fn is_error(self) -> bool {
        matches!(
            self,
            WarningKind::NegativeDuration | WarningKind::DuplicateKey
        )
    }
}

/// What reading a Chrome trace made, besides the XSpace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChromeImport {
    /// The trace as an XSpace.
    pub space: XSpace,
    /// Events converted (not counting metadata).
    pub events: u64,
    /// Flows bound to events (each end counted).
    pub flows: u64,
    /// Events of phases that have no place in an XSpace, by phase.
    pub skipped: BTreeMap<String, u64>,
    /// Events left out or changed, with why: at most [`WARNINGS_PER_KIND`] of a kind, then a
    /// line with the count of the rest.
    pub warnings: Vec<String>,
    /// How many warnings of each kind there were in all.
    pub warning_counts: BTreeMap<WarningKind, u64>,
    /// Lines where events may partly overlap as their producers write them: async lines, GPU
    /// streams and the counter line, as (plane index, line id).
    pub overlapping_lines: Vec<(usize, i64)>,
    /// The finest time step the input's times are written in, in picoseconds (1,000,000 for
    /// whole microseconds, 1,000 for three decimals).
    pub precision_ps: i64,
    /// Whether the trace has Kineto's GPU activity or device properties.
    pub kineto: bool,
    /// Whether the trace is one of Paddle's profiler.
    pub paddle: bool,
}

/// Below this many items a line's item buffer is not shrunk while it is converted (the copy would
/// cost more than the memory is worth).
const SHRINK_MIN_ITEMS: usize = 1 << 12;

/// What `validate` finds in an imported trace: errors and warnings, each as (kind, message).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChromeCheck {
    /// What no producer writes: an XSpace problem that is not excused below, or an import
    /// warning of a kind [`WarningKind::is_error`] calls an error.
    pub errors: Vec<(String, String)>,
    /// Partial overlaps on async, GPU stream and counter lines, and overlaps no longer than the
    /// input's time precision (microseconds rounded against nanosecond durations).
    pub warnings: Vec<(String, String)>,
}

/// Whether `prefix` (the first bytes of a file) looks like Chrome trace JSON: an object whose
/// first bytes name `traceEvents` or a key Kineto writes first, or an array whose first element
/// is an object with a `ph`. [`sniff_json`] decides on the whole structure.
pub fn looks_like_chrome(prefix: &[u8]) -> bool {
    let text = String::from_utf8_lossy(prefix);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        return trimmed.contains("\"traceEvents\"")
            || (trimmed.contains("\"deviceProperties\"") && trimmed.contains("\"schemaVersion\""));
    }
    if let Some(rest) = trimmed.strip_prefix('[') {
        let rest = rest.trim_start();
        return rest.starts_with(']') || (rest.starts_with('{') && rest.contains("\"ph\""));
    }
    false
}

/// What a JSON input is, as far as [`sniff_json`] read it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonShape {
    /// A Chrome trace: an object with `traceEvents`, or an array of events.
    Chrome,
    /// A JSON object without `traceEvents`: its top-level keys (the first 16).
    Object(Vec<String>),
    /// Other JSON (a scalar, an array of something else).
    OtherJson,
    /// Not JSON (or cut short before telling): why.
    NotJson(String),
}

const FOUND: &str = "$profkit::chrome::found";

/// Reads the top level of a JSON text until it can tell whether it is a Chrome trace: keys are
/// read and their values skipped without being built, and reading stops at `traceEvents` (or
/// the first element of a bare array).
pub fn sniff_json<R: Read>(reader: R) -> JsonShape {
    struct Sniff;
    impl<'de> DeserializeSeed<'de> for Sniff {
        type Value = JsonShape;
        fn deserialize<D: de::Deserializer<'de>>(
            self,
            d: D,
        ) -> std::result::Result<JsonShape, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Sniff {
        type Value = JsonShape;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<JsonShape, A::Error> {
            let mut keys = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                if key == "traceEvents" {
                    return Err(de::Error::custom(FOUND));
                }
                if keys.len() < 16 {
                    keys.push(key);
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(JsonShape::Object(keys))
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<JsonShape, A::Error> {
            struct First;
            impl<'de> Visitor<'de> for First {
                type Value = bool;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an event")
                }
                fn visit_map<A: MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> std::result::Result<bool, A::Error> {
                    let mut empty = true;
                    while let Some(key) = map.next_key::<String>()? {
                        empty = false;
                        if key == "ph" {
                            return Err(de::Error::custom(FOUND));
                        }
                        map.next_value::<IgnoredAny>()?;
                    }
                    Ok(empty)
                }
                fn visit_bool<E>(self, _: bool) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_u64<E>(self, _: u64) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_i64<E>(self, _: i64) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_f64<E>(self, _: f64) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_str<E>(self, _: &str) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_unit<E>(self) -> std::result::Result<bool, E> {
                    Ok(false)
                }
                fn visit_seq<A: SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> std::result::Result<bool, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(false)
                }
            }
            struct FirstSeed;
            impl<'de> DeserializeSeed<'de> for FirstSeed {
                type Value = bool;
                fn deserialize<D: de::Deserializer<'de>>(
                    self,
                    d: D,
                ) -> std::result::Result<bool, D::Error> {
                    d.deserialize_any(First)
                }
            }
            match seq.next_element_seed(FirstSeed)? {
                // An empty array, or one that starts with the empty event `{}`.
                None | Some(true) => Err(de::Error::custom(FOUND)),
                Some(false) => Ok(JsonShape::OtherJson),
            }
        }
        fn visit_bool<E>(self, _: bool) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_u64<E>(self, _: u64) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_i64<E>(self, _: i64) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_f64<E>(self, _: f64) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_str<E>(self, _: &str) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
        fn visit_unit<E>(self) -> std::result::Result<JsonShape, E> {
            Ok(JsonShape::OtherJson)
        }
    }
    let options = ReadOptions::default().open_top_array(true);
    match Reader::new(skip_bom(reader), options).read_document_seed(Sniff) {
        Ok(shape) => shape,
        Err(profkit_json::Error::Schema { reason, .. }) if reason == FOUND => JsonShape::Chrome,
        Err(e) => JsonShape::NotJson(e.to_string()),
    }
}

/// A reader without a leading UTF-8 byte order mark.
fn skip_bom<R: Read>(mut reader: R) -> impl Read {
    let mut head = [0u8; 3];
    let mut got = 0;
    while got < 3 {
        match reader.read(head.get_mut(got..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let keep = if head == [0xef, 0xbb, 0xbf] { 0 } else { got };
    let start = if keep == 0 { 3 } else { 0 };
    let prefix = head.get(start..start + keep).unwrap_or_default().to_vec();
    std::io::Cursor::new(prefix).chain(reader)
}

/// Reads Chrome trace JSON from bytes (see the module documentation).
pub fn chrome_to_xspace(text: &[u8]) -> Result<ChromeImport> {
    read_chrome(text)
}

/// Reads Chrome trace JSON from any reader, streaming (see the module documentation).
pub fn read_chrome<R: Read>(reader: R) -> Result<ChromeImport> {
    read_chrome_with(reader, ChromeReadOptions::default())
}

/// How [`read_chrome_with`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChromeReadOptions {
    /// Whether the events are read by the importer's own scanner where they can be (the default),
    /// rather than all through serde's visitors. Both give the same import and the same errors
    /// (every event the scanner does not take whole, malformed ones included, goes to the
    /// visitors, which report it); the switch is there to compare them.
    pub fast_events: bool,
}

impl Default for ChromeReadOptions {
    fn default() -> Self {
        ChromeReadOptions { fast_events: true }
    }
}

impl ChromeReadOptions {
    /// The options with `fast_events`.
    pub fn fast_events(mut self, on: bool) -> Self {
        self.fast_events = on;
        self
    }
}

/// The read buffer: large reads, and room for the events the fast path takes whole.
const READ_BUFFER: usize = 1 << 20;

/// [`read_chrome`] with explicit settings.
pub fn read_chrome_with<R: Read>(reader: R, options: ChromeReadOptions) -> Result<ChromeImport> {
    let trace = Rc::new(RefCell::new(Trace::new()));
    // A bad string spoils one name or arg, not the trace: it is kept as replaced text, with a
    // warning naming where.
    let json_options = ReadOptions::default()
        .open_top_array(true)
        .replace_invalid(true);
    let mut json = Reader::with_buffer(skip_bom(reader), json_options, READ_BUFFER);
    if options.fast_events {
        json.set_raw_hook(Box::new(fast::FastEvents::new(Rc::clone(&trace))));
    }
    let result = json.read_document_seed(Document { trace: &trace });
    let (replaced, places) = json.replaced_strings();
    let places = places.to_vec();
    drop(json);
    let trace = std::mem::replace(&mut *trace.borrow_mut(), Trace::new());
    let mut import = match result {
        Ok(()) => trace.into_import()?,
        Err(e) => return Err(chrome_error(e)),
    };
    if replaced > 0 {
        for place in places.iter().take(WARNINGS_PER_KIND) {
            import.warnings.push(format!(
                "{} (line {}, column {}): a string with a lone surrogate or bytes that are not UTF-8, kept with U+FFFD in their place",
                place.path, place.line, place.column
            ));
        }
        let shown = places.len().min(WARNINGS_PER_KIND) as u64;
        if replaced > shown {
            import
                .warnings
                .push(format!("... and {} more such strings", replaced - shown));
        }
        *import
            .warning_counts
            .entry(WarningKind::ReplacedText)
            .or_default() += replaced;
    }
    Ok(import)
}

fn chrome_error(e: profkit_json::Error) -> Error {
    let (location, reason) = match e {
        profkit_json::Error::Io(io) => return Error::Io(io),
        profkit_json::Error::Truncated { location } => {
            (location, "the text ends inside the value".to_owned())
        }
        profkit_json::Error::Syntax { location, reason }
        | profkit_json::Error::Schema { location, reason } => (location, reason),
        profkit_json::Error::Limit {
            location,
            what,
            limit,
            ..
        } => (location, format!("{what} is over the limit of {limit}")),
        other => (profkit_json::Location::default(), other.to_string()),
    };
    Error::Chrome {
        path: location.path,
        line: location.line,
        column: location.column,
        reason,
    }
}

// ----- strings -----

/// Strings kept once each (names, categories, arg keys and string values).
#[derive(Default)]
struct Interner {
    /// By their bytes, so that a string read as bytes is looked up before its UTF-8 is checked.
    ids: FxHashMap<SharedStr, u32>,
    /// The same strings as `ids` holds (one allocation each, shared).
    strings: Vec<SharedStr>,
    /// Whether each string was asked for more than once.
    repeated: Vec<bool>,
    /// A buffer for the JSON text of nested args.
    scratch: Vec<u8>,
    /// The id last found for strings of each [`quick_slot`]: names and categories come back
    /// over and over, and a check against the string found is cheaper than hashing it.
    recent: Vec<u32>,
}

/// An interned string, kept once for both the map and the list of [`Interner`].
#[derive(Clone, PartialEq, Eq)]
struct SharedStr(Rc<str>);

impl std::hash::Hash for SharedStr {
    /// As its bytes hash, which it is looked up by.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.as_bytes().hash(state);
    }
}

impl std::borrow::Borrow<[u8]> for SharedStr {
    fn borrow(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// The slot of a string in [`Interner::recent`], from its length and its first and last eight
/// bytes.
fn quick_slot(bytes: &[u8]) -> usize {
    let (head, tail) = match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        (Some(head), Some(tail)) => (u64::from_le_bytes(*head), u64::from_le_bytes(*tail)),
        _ => {
            let mut w = [0u8; 8];
            for (d, s) in w.iter_mut().zip(bytes) {
                *d = *s;
            }
            (u64::from_le_bytes(w), 0)
        }
    };
    let mixed =
        (head ^ tail.rotate_left(29) ^ bytes.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 54) as usize
}

/// How many slots [`Interner::recent`] has (`quick_slot` gives ten bits).
const RECENT_SLOTS: usize = 1 << 10;

impl Interner {
    fn id(&mut self, s: &str) -> u32 {
        match self.known(s.as_bytes()) {
            Some(id) => id,
            None => self.insert(s),
        }
    }

    /// The id of a string given as bytes; `None` when they are not UTF-8. Only a string not seen
    /// before is checked.
    fn id_bytes(&mut self, bytes: &[u8]) -> Option<u32> {
        match self.known(bytes) {
            Some(id) => Some(id),
            None => std::str::from_utf8(bytes).ok().map(|s| self.insert(s)),
        }
    }

    fn known(&mut self, bytes: &[u8]) -> Option<u32> {
        if self.recent.is_empty() {
            self.recent = vec![u32::MAX; RECENT_SLOTS];
        }
        let slot = quick_slot(bytes);
        let recent = self.recent.get(slot).copied().unwrap_or(u32::MAX);
        let id = match self.strings.get(recent as usize) {
            Some(s) if s.0.as_bytes() == bytes => recent,
            _ => {
                let id = *self.ids.get(bytes)?;
                if let Some(r) = self.recent.get_mut(slot) {
                    *r = id;
                }
                id
            }
        };
        if let Some(r) = self.repeated.get_mut(id as usize) {
            *r = true;
        }
        Some(id)
    }

    fn insert(&mut self, s: &str) -> u32 {
        let id = u32::try_from(self.strings.len()).unwrap_or(u32::MAX);
        let shared = SharedStr(s.into());
        self.strings.push(shared.clone());
        self.repeated.push(false);
        self.ids.insert(shared, id);
        id
    }

    fn is_repeated(&self, id: u32) -> bool {
        self.repeated.get(id as usize).copied().unwrap_or(false)
    }

    fn get(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", |s| &s.0)
    }
}

/// A process or thread id: a number or a string, as the trace writes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Id {
    Int(i64),
    Text(Box<str>),
}

impl Id {
    fn text(&self) -> String {
        match self {
            Id::Int(i) => i.to_string(),
            Id::Text(s) => s.to_string(),
        }
    }
}

/// An arg value as the import keeps it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Arg {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(u32),
}

impl Arg {
    fn is_numeric(self) -> bool {
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
struct KeyArg {
    key: u32,
    tag: u32,
    bits: u64,
}

impl KeyArg {
    fn new(key: u32, arg: Arg) -> KeyArg {
        let (tag, bits) = match arg {
            Arg::Int(i) => (0, i as u64),
            Arg::Uint(u) => (1, u),
            Arg::Double(d) => (2, d.to_bits()),
            Arg::Str(s) => (3, u64::from(s)),
        };
        KeyArg { key, tag, bits }
    }

    fn arg(self) -> Arg {
        match self.tag {
            0 => Arg::Int(self.bits as i64),
            1 => Arg::Uint(self.bits),
            2 => Arg::Double(f64::from_bits(self.bits)),
            _ => Arg::Str(u32::try_from(self.bits).unwrap_or(0)),
        }
    }
}

/// [`micros_to_ps`] for the form nearly every time is written in: up to 18 digits, and up to six
/// decimals after a point; `None` for any other form (which the general path then reads).
fn plain_micros_to_ps(text: &[u8]) -> Option<(i128, u32)> {
    let (negative, body) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut int: u64 = 0;
    let mut i = 0;
    while let Some(&b) = body.get(i).filter(|b| b.is_ascii_digit()) {
        if i >= 18 {
            return None;
        }
        int = int * 10 + u64::from(b - b'0');
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let (mut frac, mut decimals) = (0u64, 0u32);
    match body.get(i) {
        None => {}
        Some(b'.') => {
            for &b in body.get(i + 1..)? {
                if !b.is_ascii_digit() || decimals >= 6 {
                    return None;
                }
                frac = frac * 10 + u64::from(b - b'0');
                decimals += 1;
            }
            if decimals == 0 {
                return None;
            }
        }
        Some(_) => return None,
    }
    let value = i128::from(int) * 1_000_000 + i128::from(frac) * 10i128.pow(6 - decimals);
    Some((if negative { -value } else { value }, decimals))
}

/// Microseconds written as decimal text to picoseconds, exactly (rounded to the nearest
/// picosecond), or through a double when the text has too many digits. Also gives the number of
/// decimals written.
fn micros_to_ps(text: &str) -> Option<(i128, u32)> {
    if let Some(found) = plain_micros_to_ps(text.as_bytes()) {
        return Some(found);
    }
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (body.get(..i)?, body.get(i + 1..)?.parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let decimals = u32::try_from((frac.len() as i64 - i64::from(exponent)).max(0)).ok()?;
    // The digits without leading zeros, as one integer (no allocation: this runs twice an event).
    let digits = int.bytes().chain(frac.bytes()).skip_while(|&b| b == b'0');
    let count = digits.clone().count();
    let scale = exponent - frac.len() as i32 + 6;
    let value = if count > 30 || !(-40..=30).contains(&scale) {
        let v = text.parse::<f64>().ok()? * 1e6;
        if !v.is_finite() || v.abs() > 1e36 {
            return None;
        }
        return Some((v.round() as i128, decimals));
    } else {
        let d: i128 = digits.fold(0i128, |acc, b| acc * 10 + i128::from(b - b'0'));
        if scale >= 0 {
            d.checked_mul(10i128.checked_pow(scale as u32)?)?
        } else {
            let div = 10i128.checked_pow((-scale) as u32)?;
            (d + div / 2) / div
        }
    };
    Some((if negative { -value } else { value }, decimals))
}

/// Paddle's profiler appends the duration to a host event's name (`matmul dygraph[102.633 us]`);
/// without it, the calls of one op share a name again.
fn strip_paddle_duration(name: &str) -> &str {
    let Some(open) = name.rfind('[') else {
        return name;
    };
    let Some(inner) = name.get(open + 1..).and_then(|s| s.strip_suffix(']')) else {
        return name;
    };
    let Some((number, unit)) = inner.split_once(' ') else {
        return name;
    };
    if number.parse::<f64>().is_ok() && matches!(unit, "ns" | "us" | "ms" | "s") {
        name.get(..open).unwrap_or(name)
    } else {
        name
    }
}

/// Paddle's tids `20652(Python)` and `20652(C++)`: the OS thread both halves run on.
fn paddle_thread(tid: &str) -> Option<i64> {
    let (number, rest) = tid.split_once('(')?;
    matches!(rest, "Python)" | "C++)")
        .then(|| number.parse().ok())
        .flatten()
}

/// The categories of Kineto's GPU activity.
fn is_gpu_category(cat: &str) -> bool {
    [
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "gpu_user_annotation",
        "memcpy",
        "memset",
    ]
    .iter()
    .any(|c| cat.eq_ignore_ascii_case(c))
}

// ----- one event as read -----

/// The members of one event, reused from event to event.
#[derive(Default)]
struct RawEvent {
    members: usize,
    /// The event's known members read so far, a bit per [`Field`].
    seen: u32,
    /// The first known member that came twice.
    duplicate: Option<&'static str>,
    ph: Option<Phase>,
    ph_not_string: bool,
    name: Option<u32>,
    cat: Option<u32>,
    pid: Option<Id>,
    tid: Option<Id>,
    ts: Option<i128>,
    dur: Option<i128>,
    id: Option<String>,
    /// The allocation of the last `id`, for the next (set by the fast path).
    spare_id: String,
    scope: Option<String>,
    bp_enclosing: bool,
    bind_id: Option<String>,
    flow_in: bool,
    flow_out: bool,
    args: Vec<KeyArg>,
}

impl RawEvent {
    fn clear(&mut self) {
        self.members = 0;
        self.seen = 0;
        self.duplicate = None;
        self.ph = None;
        self.ph_not_string = false;
        self.name = None;
        self.cat = None;
        self.pid = None;
        self.tid = None;
        self.ts = None;
        self.dur = None;
        if let Some(id) = self.id.take() {
            self.spare_id = id;
        }
        self.scope = None;
        self.bp_enclosing = false;
        self.bind_id = None;
        self.flow_in = false;
        self.flow_out = false;
        self.args.clear();
    }

    /// Counts a member, and notes a known one that came before.
    fn member(&mut self, field: Field) {
        self.members += 1;
        if let Some(key) = field.key() {
            let bit = 1u32 << (field as u32);
            if self.seen & bit != 0 && self.duplicate.is_none() {
                self.duplicate = Some(key);
            }
            self.seen |= bit;
        }
    }

    fn arg(&self, key: u32) -> Option<Arg> {
        self.args
            .iter()
            .rev()
            .find(|a| a.key == key)
            .map(|a| a.arg())
    }
}

/// Why an event read whole cannot be taken (checked before anything of it is kept, so that the
/// fast path can leave it to the visitors, which report it at its place).
fn event_error(raw: &RawEvent) -> Option<String> {
    if raw.members == 0 {
        return None;
    }
    if raw.ph_not_string {
        return Some("the phase (\"ph\") must be a string".to_owned());
    }
    let Some(phase) = &raw.ph else {
        return Some("the event has no \"ph\" (phase)".to_owned());
    };
    let ph = phase.as_str();
    let timed = matches!(
        ph,
        "X" | "B" | "E" | "i" | "I" | "R" | "C" | "b" | "S" | "e" | "F" | "n" | "s" | "t" | "f"
    );
    if timed && raw.ts.is_none() {
        return Some(format!("the {ph:?} event has no \"ts\""));
    }
    if matches!(ph, "s" | "t" | "f") && raw.id.is_none() {
        return Some(format!("the flow event {ph:?} has no \"id\""));
    }
    None
}

/// One event on a line. Its args are `len` of its thread's [`Args`] from `at` (the counters
/// have theirs): a store per thread instead of an allocation per event. Times are picoseconds
/// from the start of the first event kept ([`Clock`]): 32 bytes an item where exact 128-bit
/// times took 48, and millions are kept until the XSpace is built.
#[derive(Clone, Copy)]
struct Item {
    name: u32,
    len: u32,
    at: u64,
    start: i64,
    end: i64,
}

/// A begin waiting for its end (`B`, async `b`/`S`), with its exact start: only these few are
/// kept with 128-bit times, which the order of the warnings about unended ones needs.
struct Pending {
    name: u32,
    len: u32,
    at: u64,
    start: i128,
}

/// The times of the items kept, relative to the start of the first: every time read is exact
/// (128 bits), and an item's are stored in 64 bits once it is kept. What does not fit is
/// saturated, and can only be so when the times kept span more than an XSpace holds, which
/// [`Trace::into_import`] refuses from the exact first start and last end kept here.
#[derive(Default)]
struct Clock {
    base: Option<i128>,
    first: i128,
    last: i128,
}

impl Clock {
    /// An item's start and end (`end >= start`), as stored.
    fn keep(&mut self, start: i128, end: i128) -> (i64, i64) {
        match self.base {
            None => {
                self.base = Some(start);
                self.first = start;
                self.last = end;
            }
            Some(_) => {
                self.first = self.first.min(start);
                self.last = self.last.max(end);
            }
        }
        (self.rel(start), self.rel(end))
    }

    /// A time relative to the base, saturated.
    fn rel(&self, t: i128) -> i64 {
        let d = t.saturating_sub(self.base.unwrap_or(0));
        i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
    }
}

/// How many args the first chunk of a thread's [`Args`] holds; each next one holds as many as
/// the thread has so far, up to [`ARGS_CHUNK`].
const ARGS_FIRST_CHUNK: usize = 16;

/// The args a chunk of [`Args`] holds (unless one event has more): 64 KiB, below the C
/// allocator's `mmap` threshold, so that a chunk freed is reused for the XSpace rather than given
/// back to the kernel and faulted in again.
const ARGS_CHUNK: usize = 1 << 12;

/// The args of the events of one thread, one after the other, in chunks that are allocated once
/// (no copy as the store grows) and freed as soon as the items using them are converted, so that
/// a line's events take the place of its args. An item's args are never split between chunks;
/// `at` is the chunk's index times 2^32 plus the place in it.
#[derive(Default)]
struct Args {
    chunks: Vec<Vec<KeyArg>>,
    /// How many args of each chunk items still use.
    live: Vec<usize>,
    total: usize,
}

impl Args {
    /// Appends an event's args; returns where they are.
    fn push(&mut self, args: &[KeyArg]) -> (u64, u32) {
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

    fn place(at: u64, len: u32) -> (usize, std::ops::Range<usize>) {
        let chunk = (at >> 32) as usize;
        let from = (at & 0xffff_ffff) as usize;
        (chunk, from..from + len as usize)
    }

    fn get(&self, at: u64, len: u32) -> &[KeyArg] {
        let (chunk, range) = Args::place(at, len);
        self.chunks
            .get(chunk)
            .and_then(|c| c.get(range))
            .unwrap_or_default()
    }

    fn get_mut(&mut self, at: u64, len: u32) -> &mut [KeyArg] {
        let (chunk, range) = Args::place(at, len);
        self.chunks
            .get_mut(chunk)
            .and_then(|c| c.get_mut(range))
            .unwrap_or_default()
    }

    /// Adds args to an item's: in place when its args end the last chunk and there is room,
    /// else after a copy of them (an `E` or async end with args, a legacy async step: rare).
    fn extend(&mut self, at: &mut u64, len: &mut u32, more: &[KeyArg]) {
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
    fn release(&mut self, at: u64, len: u32) {
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

/// Where an event goes within its process.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Track {
    Thread(Id),
    /// An async line: the name of its events.
    Async(u32),
}

struct Thread {
    pid: Id,
    track: Track,
    name: Option<String>,
    sort_index: Option<i64>,
    items: Vec<Item>,
    open: Vec<Pending>,
    /// The args of `items` and `open`.
    args: Args,
    /// Args flows add to items, by index in the sorted `items` (in the order they were bound):
    /// sorted by index before the XSpace is built, an item's come after its own args.
    flow_args: Vec<(usize, KeyArg)>,
    /// Whether an item has two flows bound, or flows bound beside flow args of its own: only then
    /// do its flow categories need [`flow_categories`].
    flow_care: bool,
    /// The GPU this thread is a stream of.
    gpu: Option<i64>,
}

#[derive(Default)]
struct Process {
    name: Option<String>,
}

/// A flow event, bound to a slice once all are read.
struct FlowPoint {
    thread: usize,
    ts: i128,
    phase: u8,
    enclosing: bool,
    /// The flow's id: a number, or an interned string.
    id: Arg,
    cat: u32,
}

/// Keeps the flow categories each item of `thread` needs among its flow args (which hold, per
/// bound flow, its keys then its category). An event has one `flow_cat` stat for all its flows
/// when they share a category (its own args' `flow_cat`, if any, or the first bound flow's, as
/// before), else one per flow stat in the order of the flow stats (its own flows first, `flow`,
/// the writer's default, for a flow of no category), which the writer pairs by position.
fn flow_categories(thread: &mut Thread, keys: &Keys, flow_word: u32) {
    let is_flow = |key: u32| key == keys.flow_in || key == keys.flow_out;
    let mut kept: Vec<(usize, KeyArg)> = Vec::with_capacity(thread.flow_args.len());
    let mut rest = thread.flow_args.as_slice();
    let mut cats: Vec<Option<KeyArg>> = Vec::new();
    while let Some(&(index, _)) = rest.first() {
        let n = rest.iter().take_while(|(i, _)| *i == index).count();
        let (mine, after) = rest.split_at(n);
        rest = after;
        let own = thread
            .items
            .get(index)
            .map_or(&[][..], |item| thread.args.get(item.at, item.len));
        let own_flows = own.iter().filter(|a| is_flow(a.key)).count();
        let own_cat = own.iter().rev().find(|a| a.key == keys.flow_cat).copied();
        // The category of every flow stat, in order: the item's own, then each bound flow's.
        cats.clear();
        cats.extend(std::iter::repeat_n(own_cat, own_flows));
        let mut pending = 0;
        for (_, arg) in mine {
            if is_flow(arg.key) {
                pending += 1;
            } else if arg.key == keys.flow_cat {
                cats.extend(std::iter::repeat_n(Some(*arg), pending));
                pending = 0;
            }
        }
        let same = |a: &Option<KeyArg>, b: &Option<KeyArg>| {
            a.map(|a| (a.tag, a.bits)) == b.map(|b| (b.tag, b.bits))
        };
        let uniform = cats
            .iter()
            .all(|c| cats.first().is_some_and(|f| same(c, f)));
        if uniform || (own_cat.is_some() && own_flows == 0) {
            // As one category: the first bound flow's follows its keys, unless the item has its
            // own (which then stays the category of all).
            let mut cat_kept = own_cat.is_some();
            for &(i, arg) in mine {
                if arg.key != keys.flow_cat {
                    kept.push((i, arg));
                } else if !cat_kept {
                    kept.push((i, arg));
                    cat_kept = true;
                }
            }
        } else {
            kept.extend(mine.iter().filter(|(_, a)| is_flow(a.key)).copied());
            // The item's own `flow_cat` is the first of the list.
            let skip = usize::from(own_cat.is_some());
            for cat in cats.iter().skip(skip) {
                let cat = cat.unwrap_or(KeyArg::new(keys.flow_cat, Arg::Str(flow_word)));
                kept.push((index, cat));
            }
        }
    }
    thread.flow_args = kept;
}

/// `items.partition_point(pred)` (for a `pred` true on a prefix of `items`), searched outwards
/// from `hint`: close to the last answer, it takes a few steps where a binary search over all
/// items takes a cache miss a step.
fn partition_from(items: &[Item], hint: usize, pred: impl Fn(&Item) -> bool) -> usize {
    let hint = hint.min(items.len());
    let holds = |i: usize| items.get(i).is_some_and(&pred);
    let (mut lo, mut hi);
    if hint == items.len() || !holds(hint) {
        // The answer is at or before `hint`.
        hi = hint;
        let mut step = 1;
        lo = hint.saturating_sub(step);
        while lo > 0 && !holds(lo) {
            hi = lo;
            step *= 2;
            lo = lo.saturating_sub(step);
        }
        if !holds(lo) {
            return lo;
        }
        lo += 1;
    } else {
        // After `hint`.
        lo = hint + 1;
        let mut step = 1;
        hi = (hint + step).min(items.len());
        while hi < items.len() && holds(hi) {
            lo = hi + 1;
            step *= 2;
            hi = (hint + step).min(items.len());
        }
    }
    // `holds` is true before `lo` and false from `hi` on.
    lo + items
        .get(lo..hi.max(lo))
        .map_or(0, |range| range.partition_point(&pred))
}

/// Where the first of some open async begins is: its thread and start.
fn first_begin(items: &[(usize, Pending)]) -> Option<(usize, i128)> {
    items.first().map(|(thread, item)| (*thread, item.start))
}

/// Async events waiting for their end: by (pid, category, id, scope).
type AsyncKey = (Id, u32, String, String);

/// Well-known strings, interned once.
struct Keys {
    empty: u32,
    name: u32,
    sort_index: u32,
    cat: u32,
    correlation: u32,
    correlation_id: u32,
    device: u32,
    start_time: u32,
    end_time: u32,
    flow_in: u32,
    flow_out: u32,
    flow_cat: u32,
    phase: u32,
    complete: u32,
    steps: u32,
    memory_allocation: u32,
    memory_deallocation: u32,
}

struct Warnings {
    kept: Vec<String>,
    counts: BTreeMap<WarningKind, u64>,
}

impl Warnings {
    fn push(&mut self, kind: WarningKind, message: impl FnOnce() -> String) {
        let count = self.counts.entry(kind).or_default();
        *count += 1;
        if *count as usize <= WARNINGS_PER_KIND {
            self.kept.push(message());
        }
    }

    fn finish(mut self) -> (Vec<String>, BTreeMap<WarningKind, u64>) {
        for (kind, &count) in &self.counts {
            if count as usize > WARNINGS_PER_KIND {
                self.kept.push(format!(
                    "... and {} more warnings like these ({kind:?})",
                    count as usize - WARNINGS_PER_KIND
                ));
            }
        }
        (self.kept, self.counts)
    }
}

struct Trace {
    strings: Interner,
    keys: Keys,
    raw: RawEvent,
    processes: HashMap<Id, Process>,
    process_order: Vec<Id>,
    threads: Vec<Thread>,
    thread_index: FxHashMap<(Id, Track), usize>,
    /// Arg keys of events found to have no key twice, by their number modulo 32.
    distinct_keys: [Vec<u32>; 32],
    /// The threads found last ([`Trace::thread`]).
    recent_threads: [usize; 2],
    counters: Vec<(Id, Item)>,
    /// The args of `counters`.
    counter_args: Args,
    /// The times of the items kept.
    clock: Clock,
    async_open: HashMap<AsyncKey, Vec<(usize, Pending)>>,
    flows: Vec<FlowPoint>,
    events: u64,
    skipped: BTreeMap<String, u64>,
    warnings: Warnings,
    /// The top-level keys of Paddle's profiler were seen.
    paddle: bool,
    /// Paddle's clock: `ts` minus `args.start_time` of its first event, in picoseconds.
    paddle_base: Option<i128>,
    kineto: bool,
    decimals: u32,
    device_properties: Vec<serde_json::Map<String, serde_json::Value>>,
    distributed: Vec<(String, serde_json::Value)>,
    display_time_unit: Option<String>,
    index: usize,
    /// The arg keys of the last event with args, in order.
    last_keys: Vec<u32>,
}

impl Trace {
    fn new() -> Trace {
        let mut strings = Interner::default();
        let keys = Keys {
            empty: strings.id(""),
            name: strings.id("name"),
            sort_index: strings.id("sort_index"),
            cat: strings.id("cat"),
            correlation: strings.id("correlation"),
            correlation_id: strings.id(stats::CORRELATION_ID),
            device: strings.id("device"),
            start_time: strings.id("start_time"),
            end_time: strings.id("end_time"),
            flow_in: strings.id(flow_stats::FLOW_IN),
            flow_out: strings.id(flow_stats::FLOW_OUT),
            flow_cat: strings.id(flow_stats::FLOW_CAT),
            phase: strings.id(PHASE_STAT),
            complete: strings.id("X"),
            steps: strings.id("steps"),
            memory_allocation: strings.id("MemoryAllocation"),
            memory_deallocation: strings.id("MemoryDeallocation"),
        };
        Trace {
            strings,
            keys,
            raw: RawEvent::default(),
            processes: HashMap::new(),
            process_order: Vec::new(),
            threads: Vec::new(),
            thread_index: FxHashMap::default(),
            recent_threads: [usize::MAX; 2],
            distinct_keys: Default::default(),
            counters: Vec::new(),
            counter_args: Args::default(),
            clock: Clock::default(),
            async_open: HashMap::new(),
            flows: Vec::new(),
            events: 0,
            skipped: BTreeMap::new(),
            warnings: Warnings {
                kept: Vec::new(),
                counts: BTreeMap::new(),
            },
            paddle: false,
            paddle_base: None,
            kineto: false,
            decimals: 0,
            device_properties: Vec::new(),
            distributed: Vec::new(),
            display_time_unit: None,
            index: 0,
            last_keys: Vec::new(),
        }
    }

    fn process(&mut self, pid: &Id) -> &mut Process {
        if !self.processes.contains_key(pid) {
            self.process_order.push(pid.clone());
        }
        self.processes.entry(pid.clone()).or_default()
    }

    fn thread(&mut self, pid: &Id, track: Track) -> usize {
        // A trace goes back and forth between a few threads (Kineto's host thread and GPU
        // stream): those found last are compared before the key is hashed.
        for &i in &self.recent_threads {
            if let Some(t) = self.threads.get(i) {
                if t.track == track && t.pid == *pid {
                    return i;
                }
            }
        }
        let key = (pid.clone(), track);
        if let Some(&i) = self.thread_index.get(&key) {
            self.recent_threads.rotate_right(1);
            if let Some(slot) = self.recent_threads.first_mut() {
                *slot = i;
            }
            return i;
        }
        self.process(pid);
        self.threads.push(Thread {
            pid: key.0.clone(),
            track: key.1.clone(),
            name: None,
            sort_index: None,
            items: Vec::new(),
            open: Vec::new(),
            args: Args::default(),
            flow_args: Vec::new(),
            flow_care: false,
            gpu: None,
        });
        let index = self.threads.len() - 1;
        self.thread_index.insert(key, index);
        index
    }

    /// Keeps args of `thread` in its [`Args`]: where they are.
    fn keep_args(&mut self, thread: usize, args: &[KeyArg]) -> (u64, u32) {
        match self.threads.get_mut(thread) {
            Some(t) => t.args.push(args),
            None => (0, 0),
        }
    }

    /// Keeps an item of `thread` (its args kept already).
    fn push_item(
        &mut self,
        thread: usize,
        name: u32,
        (at, len): (u64, u32),
        start: i128,
        end: i128,
    ) {
        self.events += 1;
        let (start, end) = self.clock.keep(start, end);
        if let Some(t) = self.threads.get_mut(thread) {
            t.items.push(Item {
                name,
                len,
                at,
                start,
                end,
            });
        }
    }

    /// A begin of `thread` with these args, waiting for its end.
    fn pending(&mut self, thread: usize, name: u32, start: i128, args: &[KeyArg]) -> Pending {
        let (at, len) = self.keep_args(thread, args);
        Pending {
            name,
            len,
            at,
            start,
        }
    }

    /// Warns of a key the event has twice, among its members or its args, and keeps the last
    /// value of a repeated arg (as the members keep theirs), so that the warning says what was
    /// done.
    fn duplicates(&mut self, raw: &mut RawEvent, name: u32) {
        let index = self.index;
        if let Some(key) = raw.duplicate {
            let name_text = self.strings.get(name).to_owned();
            self.warnings.push(WarningKind::DuplicateKey, || {
                format!(
                    "traceEvents[{index}]: {name_text:?} has the key {key:?} more than once; the last value is used"
                )
            });
        }
        // Events of a kind write the same keys: a list of keys found distinct before (one per
        // length, in 32 slots) is compared rather than every pair.
        let slot = raw.args.len() % 32;
        let known = self.distinct_keys.get(slot).is_some_and(|keys| {
            keys.len() == raw.args.len() && keys.iter().zip(&raw.args).all(|(k, a)| *k == a.key)
        });
        if known || raw.args.len() < 2 {
            return;
        }
        let repeated = if raw.args.len() <= 32 {
            raw.args
                .iter()
                .enumerate()
                .find(|(i, a)| raw.args.iter().skip(i + 1).any(|b| b.key == a.key))
                .map(|(_, a)| a.key)
        } else {
            let mut keys: Vec<u32> = raw.args.iter().map(|a| a.key).collect();
            keys.sort_unstable();
            keys.windows(2)
                .find(|w| w.first() == w.get(1))
                .and_then(|w| w.first().copied())
        };
        let Some(key) = repeated else {
            if let Some(keys) = self.distinct_keys.get_mut(slot) {
                keys.clear();
                keys.extend(raw.args.iter().map(|a| a.key));
            }
            return;
        };
        let key_text = self.strings.get(key).to_owned();
        let name_text = self.strings.get(name).to_owned();
        self.warnings.push(WarningKind::DuplicateKey, || {
            format!(
                "traceEvents[{index}]: {name_text:?} has the arg {key_text:?} more than once; the last value is used"
            )
        });
        // Keep the last of each key, in the order of those last ones.
        let mut kept: Vec<KeyArg> = Vec::with_capacity(raw.args.len());
        let mut keys = FxHashSet::default();
        for arg in raw.args.drain(..).rev() {
            if keys.insert(arg.key) {
                kept.push(arg);
            }
        }
        kept.reverse();
        raw.args = kept;
    }

    /// Takes the event just read into the trace.
    fn take_event<E: de::Error>(&mut self) -> std::result::Result<(), E> {
        let mut raw = std::mem::take(&mut self.raw);
        let result = self.event(&mut raw);
        raw.clear();
        self.raw = raw;
        result
    }

    fn event<E: de::Error>(&mut self, raw: &mut RawEvent) -> std::result::Result<(), E> {
        if raw.members == 0 {
            // The empty event xprof and Paddle end their arrays with.
            return Ok(());
        }
        if let Some(reason) = event_error(raw) {
            return Err(E::custom(reason));
        }
        let Some(phase) = raw.ph.take() else {
            return Err(E::custom("the event has no \"ph\" (phase)"));
        };
        let ph = phase.as_str();
        let pid = raw.pid.take().unwrap_or(Id::Int(0));
        let mut tid = raw.tid.take().unwrap_or(Id::Int(0));
        if let Id::Text(text) = &tid {
            if let Some(os) = paddle_thread(text) {
                tid = Id::Int(os);
            }
        }
        let cat_text = raw.cat.map(|c| self.strings.get(c));
        let gpu = cat_text.is_some_and(is_gpu_category);
        // Kineto's `correlation` of a launch and its GPU activity is xprof's `correlation_id`.
        let is_launch = cat_text.is_some_and(|c| {
            gpu || c.eq_ignore_ascii_case("cuda_runtime")
                || c.eq_ignore_ascii_case("cuda_driver")
                || c.eq_ignore_ascii_case("runtime")
        });
        // Paddle's `[memory]` instants say allocation or free in their category.
        let memory_kind = match cat_text {
            Some("Allocate") => Some(self.keys.memory_allocation),
            Some("Free") => Some(self.keys.memory_deallocation),
            _ => None,
        };
        let mut name = raw.name.take().unwrap_or(self.keys.empty);
        if self.paddle && ph != "M" {
            let text = self.strings.get(name);
            let stripped = strip_paddle_duration(text);
            if stripped.len() != text.len() {
                let stripped = stripped.to_owned();
                name = self.strings.id(&stripped);
            }
        }
        self.duplicates(raw, name);
        if let Some(cat) = raw.cat {
            // An event with an arg named `cat` too keeps its own `cat` as the category stat
            // (which the writer writes as the event's `cat`), so that neither hides the other.
            // (Interned only then: every other import's string ids stay as they were.)
            let key = if raw.args.iter().any(|a| a.key == self.keys.cat) {
                self.strings.id(crate::events::CATEGORY_STAT)
            } else {
                self.keys.cat
            };
            raw.args.push(KeyArg::new(key, Arg::Str(cat)));
        }
        // The args buffer is reused from event to event; the event's args are copied to its
        // thread's buffer.
        let mut stats = std::mem::take(&mut raw.args);
        let result = self.place(
            raw,
            &mut stats,
            phase,
            pid,
            tid,
            name,
            gpu,
            is_launch,
            memory_kind,
        );
        stats.clear();
        raw.args = stats;
        result
    }

    /// Puts an event (its members in `raw`, its args in `stats`) on its line.
    #[allow(clippy::too_many_arguments)]
    fn place<E: de::Error>(
        &mut self,
        raw: &mut RawEvent,
        stats: &mut Vec<KeyArg>,
        phase: Phase,
        pid: Id,
        tid: Id,
        mut name: u32,
        gpu: bool,
        is_launch: bool,
        memory_kind: Option<u32>,
    ) -> std::result::Result<(), E> {
        let ph = phase.as_str();
        let need_ts = |ts: Option<i128>| -> std::result::Result<i128, E> {
            ts.ok_or_else(|| E::custom(format!("the {ph:?} event has no \"ts\"")))
        };
        if is_launch {
            for stat in stats.iter_mut() {
                if stat.key == self.keys.correlation {
                    stat.key = self.keys.correlation_id;
                    // As CUPTI writes it (xprof links launches to kernels by its uint64 value).
                    if let Arg::Int(i) = stat.arg() {
                        if let Ok(u) = u64::try_from(i) {
                            *stat = KeyArg::new(stat.key, Arg::Uint(u));
                        }
                    }
                }
            }
        }
        match ph {
            "X" => {
                let mut start = need_ts(raw.ts)?;
                let mut dur = raw.dur.unwrap_or(0);
                if dur < 0 {
                    let name_text = self.strings.get(name).to_owned();
                    self.warnings.push(WarningKind::NegativeDuration, || {
                        format!(
                            "traceEvents[{}]: {name_text:?} has a negative duration ({} us); taken as 0, so the event becomes an instant",
                            self.index,
                            dur as f64 / 1e6
                        )
                    });
                    dur = 0;
                }
                // Paddle rounds `ts` down to whole microseconds; its `start_time` is exact. `dur`
                // is exact too (end minus start in ns, written with three decimals), where
                // `end_time` can be a nanosecond off it: Paddle's summary agrees with `dur`.
                if let Some((s, _)) = self.paddle_times(stats, start) {
                    start = s;
                }
                let thread = self.thread(&pid, Track::Thread(tid.clone()));
                if gpu {
                    self.kineto = true;
                    let device = match (&pid, raw.arg(self.keys.device)) {
                        (Id::Int(p), _) => *p,
                        (_, Some(Arg::Int(d))) => d,
                        _ => 0,
                    };
                    if let Some(t) = self.threads.get_mut(thread) {
                        t.gpu = Some(device);
                    }
                }
                self.flow_stats(raw, stats);
                // A complete event of no duration reads as an instant unless noted.
                if dur == 0 {
                    stats.push(KeyArg::new(self.keys.phase, Arg::Str(self.keys.complete)));
                }
                let args = self.keep_args(thread, stats);
                self.push_item(thread, name, args, start, start + dur);
            }
            "B" => {
                let start = need_ts(raw.ts)?;
                let thread = self.thread(&pid, Track::Thread(tid));
                self.flow_stats(raw, stats);
                let item = self.pending(thread, name, start, stats);
                if let Some(t) = self.threads.get_mut(thread) {
                    t.open.push(item);
                }
            }
            "E" => {
                let end = need_ts(raw.ts)?;
                let thread = self.thread(&pid, Track::Thread(tid.clone()));
                let open = self.threads.get_mut(thread).and_then(|t| t.open.pop());
                match open {
                    Some(mut item) => {
                        if let Some(t) = self.threads.get_mut(thread) {
                            t.args.extend(&mut item.at, &mut item.len, stats);
                        }
                        let args = (item.at, item.len);
                        self.push_item(thread, item.name, args, item.start, end.max(item.start));
                    }
                    None => {
                        let index = self.index;
                        let name_text = self.strings.get(name).to_owned();
                        self.warnings.push(WarningKind::UnmatchedEnd, || {
                            format!(
                                "traceEvents[{index}]: end of {name_text:?} on thread {} of process {} has no begin; left out",
                                tid.text(),
                                pid.text()
                            )
                        });
                    }
                }
            }
            "i" | "I" | "R" => {
                let start = need_ts(raw.ts)?;
                if self.paddle && self.strings.get(name) == "[memory]" {
                    if let Some(kind) = memory_kind {
                        name = kind;
                    }
                }
                let thread = self.thread(&pid, Track::Thread(tid));
                let args = self.keep_args(thread, stats);
                self.push_item(thread, name, args, start, start);
            }
            "C" => {
                let start = need_ts(raw.ts)?;
                if !stats.iter().any(|a| a.arg().is_numeric()) {
                    let index = self.index;
                    let name_text = self.strings.get(name).to_owned();
                    self.warnings.push(WarningKind::CounterWithoutValue, || {
                        format!(
                            "traceEvents[{index}]: counter {name_text:?} has no numeric value; left out"
                        )
                    });
                    return Ok(());
                }
                self.process(&pid);
                if let Some(id) = raw.id.take() {
                    let series = format!("{} {id}", self.strings.get(name));
                    name = self.strings.id(&series);
                }
                self.events += 1;
                let (at, len) = self.counter_args.push(stats);
                let (start, end) = self.clock.keep(start, start);
                self.counters.push((
                    pid,
                    Item {
                        name,
                        len,
                        at,
                        start,
                        end,
                    },
                ));
            }
            "M" => {
                let kind = self.strings.get(name).to_owned();
                self.metadata(kind, &pid, &tid, stats);
            }
            "b" | "S" => {
                let start = need_ts(raw.ts)?;
                let key = self.async_key(&pid, raw);
                let thread = self.thread(&pid, Track::Async(name));
                let item = self.pending(thread, name, start, stats);
                self.async_open.entry(key).or_default().push((thread, item));
            }
            "e" | "F" => {
                let end = need_ts(raw.ts)?;
                let key = self.async_key(&pid, raw);
                let open = self.async_open.get_mut(&key).and_then(Vec::pop);
                match open {
                    Some((thread, mut item)) => {
                        if let Some(t) = self.threads.get_mut(thread) {
                            t.args.extend(&mut item.at, &mut item.len, stats);
                        }
                        let args = (item.at, item.len);
                        self.push_item(thread, item.name, args, item.start, end.max(item.start));
                    }
                    None => {
                        let index = self.index;
                        let name_text = self.strings.get(name).to_owned();
                        self.warnings.push(WarningKind::UnmatchedEnd, || {
                            format!(
                                "traceEvents[{index}]: async end of {name_text:?} (id {}) has no begin; left out",
                                key.2
                            )
                        });
                    }
                }
            }
            "n" => {
                let start = need_ts(raw.ts)?;
                let thread = self.thread(&pid, Track::Async(name));
                let args = self.keep_args(thread, stats);
                self.push_item(thread, name, args, start, start);
            }
            "T" | "p" => {
                // A step of a legacy async event: counted on the open event.
                let key = self.async_key(&pid, raw);
                let steps = self.keys.steps;
                if let Some((thread, item)) =
                    self.async_open.get_mut(&key).and_then(|v| v.last_mut())
                {
                    if let Some(t) = self.threads.get_mut(*thread) {
                        let counted = t
                            .args
                            .get_mut(item.at, item.len)
                            .iter_mut()
                            .find(|a| a.key == steps);
                        match counted {
                            Some(stat) => {
                                if let Arg::Int(n) = stat.arg() {
                                    *stat = KeyArg::new(steps, Arg::Int(n + 1));
                                }
                            }
                            None => t.args.extend(
                                &mut item.at,
                                &mut item.len,
                                &[KeyArg::new(steps, Arg::Int(1))],
                            ),
                        }
                    }
                }
            }
            "s" | "t" | "f" => {
                let ts = need_ts(raw.ts)?;
                // Borrowed: the event's buffer is used again for the next event's id.
                let Some(id) = raw.id.as_deref() else {
                    return Err(E::custom(format!("the flow event {ph:?} has no \"id\"")));
                };
                let thread = self.thread(&pid, Track::Thread(tid));
                let id = self.flow_id(id);
                let cat = raw.cat.unwrap_or(name);
                self.flows.push(FlowPoint {
                    thread,
                    ts,
                    phase: ph.as_bytes().first().copied().unwrap_or(b's'),
                    enclosing: ph != "f" || raw.bp_enclosing,
                    id,
                    cat,
                });
            }
            other => {
                *self.skipped.entry(other.to_owned()).or_default() += 1;
            }
        }
        Ok(())
    }

    /// Stats for `bind_id` with `flow_in`/`flow_out` (flow events of the format's second version).
    fn flow_stats(&mut self, raw: &mut RawEvent, stats: &mut Vec<KeyArg>) {
        let Some(bind) = raw.bind_id.take() else {
            return;
        };
        let id = self.flow_id(&bind);
        if raw.flow_out {
            stats.push(KeyArg::new(self.keys.flow_out, id));
        }
        if raw.flow_in {
            stats.push(KeyArg::new(self.keys.flow_in, id));
        }
    }

    /// Async ids are global (an async event may end in another process, as catapult reads
    /// them) unless `id2` makes them local to their process.
    /// A flow id as a stat: a number when it is one (Kineto's correlation ids), else its text.
    fn flow_id(&mut self, text: &str) -> Arg {
        match text.parse::<i64>() {
            Ok(i) if itoa::Buffer::new().format(i) == text => Arg::Int(i),
            _ => Arg::Str(self.strings.id(text)),
        }
    }

    fn async_key(&mut self, pid: &Id, raw: &mut RawEvent) -> AsyncKey {
        let id = raw.id.take().unwrap_or_default();
        let scope = raw.scope.take().unwrap_or_default();
        let process = if id.starts_with("local:") {
            pid.clone()
        } else {
            Id::Int(0)
        };
        (process, raw.cat.unwrap_or(u32::MAX), id, scope)
    }

    /// Paddle's exact times of an event: `args.start_time`/`end_time` (`"9965.651 us"` since the
    /// profile's start), placed on the clock of `ts` by the first event that has them.
    fn paddle_times(&mut self, stats: &[KeyArg], ts: i128) -> Option<(i128, i128)> {
        if !self.paddle {
            return None;
        }
        let text = |key: u32| {
            stats
                .iter()
                .find(|a| a.key == key)
                .and_then(|a| match a.arg() {
                    Arg::Str(s) => Some(s),
                    _ => None,
                })
        };
        let parse = |s: &str| {
            s.strip_suffix(" us")
                .and_then(|n| micros_to_ps(n.trim()))
                .map(|(v, _)| v)
        };
        let start = parse(self.strings.get(text(self.keys.start_time)?))?;
        let end = parse(self.strings.get(text(self.keys.end_time)?))?;
        let base = *self.paddle_base.get_or_insert(ts - start);
        Some((base + start, base + end.max(start)))
    }

    fn metadata(&mut self, kind: String, pid: &Id, tid: &Id, stats: &[KeyArg]) {
        let arg = |key: u32| stats.iter().find(|a| a.key == key).map(|a| a.arg());
        let name = match arg(self.keys.name) {
            Some(Arg::Str(s)) => Some(self.strings.get(s).to_owned()),
            _ => None,
        };
        let sort_index = match arg(self.keys.sort_index) {
            Some(Arg::Int(i)) => Some(i),
            Some(Arg::Uint(u)) => i64::try_from(u).ok(),
            _ => None,
        };
        match (kind.as_str(), name) {
            ("process_name", Some(v)) => self.process(pid).name = Some(v),
            ("thread_name", Some(v)) => {
                let thread = self.thread(pid, Track::Thread(tid.clone()));
                if let Some(t) = self.threads.get_mut(thread) {
                    t.name = Some(v);
                }
            }
            ("thread_sort_index", _) => {
                let thread = self.thread(pid, Track::Thread(tid.clone()));
                if let Some(t) = self.threads.get_mut(thread) {
                    t.sort_index = sort_index;
                }
            }
            ("process_sort_index" | "process_labels" | "process_uptime_seconds", _) => {
                self.process(pid);
            }
            _ => {}
        }
    }

    /// Binds the flow events to the slices they belong to.
    fn bind_flows(&mut self) -> u64 {
        let mut bound = 0;
        let flows = std::mem::take(&mut self.flows);
        let mut last_at = vec![0usize; self.threads.len()];
        // The items that have a flow bound: a bit an item, by thread.
        let mut with_flow: Vec<Vec<u64>> = vec![Vec::new(); self.threads.len()];
        for flow in flows {
            let Some(thread) = self.threads.get_mut(flow.thread) else {
                continue;
            };
            let items = &thread.items;
            // Items hold times from the clock's base; one that does not fit is beyond every
            // item (or the span is refused), so saturating keeps every comparison.
            let ts = self.clock.rel(flow.ts);
            // Flows come nearly in order of time: each search starts where the thread's last
            // one ended.
            let hint = last_at.get(flow.thread).copied().unwrap_or(0);
            // Items are sorted by start, longer first: the innermost slice enclosing `ts` is the
            // last one starting at or before it that ends at or after it.
            let after = partition_from(items, hint, |i| i.start <= ts);
            if let Some(slot) = last_at.get_mut(flow.thread) {
                *slot = after;
            }
            let target = if flow.enclosing {
                // Of slices with the same span, the first (in file order, which the stable sort
                // keeps): what the "next slice" of an `f` binds to, so that a flow written back
                // (right after its slice, with `"bp": "e"`) binds to the same slice when read.
                // Searched back from the slice found (nearly always it), not over all items.
                (0..after)
                    .rev()
                    .take(256)
                    .find(|&i| items.get(i).is_some_and(|it| it.end >= ts))
                    .and_then(|i| Some((i, items.get(i)?)))
                    .map(|(i, found)| {
                        let key = (found.start, std::cmp::Reverse(found.end));
                        partition_from(items, i, |it| (it.start, std::cmp::Reverse(it.end)) < key)
                    })
            } else {
                let at = partition_from(items, after, |i| i.start < ts);
                (at < items.len()).then_some(at)
            };
            let Some((index, item)) = target.and_then(|i| Some((i, items.get(i)?))) else {
                let id = match flow.id {
                    Arg::Str(s) => self.strings.get(s).to_owned(),
                    Arg::Int(i) => i.to_string(),
                    _ => String::new(),
                };
                self.warnings.push(WarningKind::UnboundFlow, || {
                    format!(
                        "flow {id:?} ({}) has no slice to bind to; left out",
                        flow.phase as char
                    )
                });
                continue;
            };
            let keys = [
                match flow.phase {
                    b's' => Some(self.keys.flow_out),
                    _ => Some(self.keys.flow_in),
                },
                (flow.phase == b't').then_some(self.keys.flow_out),
            ];
            if !thread.flow_care {
                let bits = match with_flow.get_mut(flow.thread) {
                    Some(bits) => {
                        if bits.is_empty() {
                            bits.resize(items.len().div_ceil(64), 0);
                        }
                        bits
                    }
                    None => continue,
                };
                let (word, bit) = (index / 64, 1u64 << (index % 64));
                let second = bits.get(word).is_some_and(|w| w & bit != 0);
                if let Some(w) = bits.get_mut(word) {
                    *w |= bit;
                }
                let flow_keys = [self.keys.flow_in, self.keys.flow_out, self.keys.flow_cat];
                thread.flow_care = second
                    || thread
                        .args
                        .get(item.at, item.len)
                        .iter()
                        .any(|a| flow_keys.contains(&a.key));
            }
            // Flow args wait beside the items until the thread's args are packed; each flow's
            // category follows its keys, until `flow_categories` keeps what the item needs.
            for key in keys.into_iter().flatten() {
                thread.flow_args.push((index, KeyArg::new(key, flow.id)));
            }
            thread
                .flow_args
                .push((index, KeyArg::new(self.keys.flow_cat, Arg::Str(flow.cat))));
            bound += 1;
        }
        bound
    }

    /// A stat value: a string that many events share (a category, a launch grid) is stored once,
    /// as a `ref_value` naming a stat metadata, as xprof stores its repeated strings; one that
    /// only this event has is stored in the event.
    fn stat(&self, arg: Arg) -> StatValue {
        match arg {
            Arg::Int(i) => StatValue::Int64(i),
            Arg::Uint(u) => StatValue::Uint64(u),
            Arg::Double(d) => StatValue::Double(d),
            Arg::Str(s) if self.strings.is_repeated(s) => {
                StatValue::Ref(self.strings.get(s).to_owned())
            }
            Arg::Str(s) => StatValue::Str(self.strings.get(s).to_owned()),
        }
    }

    fn into_import(mut self) -> Result<ChromeImport> {
        for thread in &self.threads {
            for open in &thread.open {
                let name = self.strings.get(open.name).to_owned();
                let (tid, pid) = (
                    match &thread.track {
                        Track::Thread(t) => t.text(),
                        Track::Async(_) => String::new(),
                    },
                    thread.pid.text(),
                );
                self.warnings.push(WarningKind::UnendedBegin, || {
                    format!(
                        "begin of {name:?} on thread {tid} of process {pid} never ends; left out"
                    )
                });
            }
        }
        let mut open_async: Vec<_> = self.async_open.drain().collect();
        // By id, then scope, category and process: the map's order is not the same from run to
        // run, and these warnings must be.
        open_async.sort_by(|a, b| {
            (&a.0.2, &a.0.3, a.0.1)
                .cmp(&(&b.0.2, &b.0.3, b.0.1))
                .then_with(|| a.0.0.text().cmp(&b.0.0.text()))
                .then_with(|| first_begin(&a.1).cmp(&first_begin(&b.1)))
        });
        for (key, items) in open_async {
            for (_, item) in items {
                let name = self.strings.get(item.name).to_owned();
                self.warnings.push(WarningKind::UnendedBegin, || {
                    format!(
                        "async begin of {name:?} (id {}) never ends; left out",
                        key.2
                    )
                });
            }
        }
        for thread in &mut self.threads {
            thread
                .items
                .sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        }
        let flows = self.bind_flows();
        let flow_word = self.strings.id("flow");
        for thread in &mut self.threads {
            // Each item's flow args in the order they were bound (the sort is stable).
            thread.flow_args.sort_by_key(|(i, _)| *i);
            if thread.flow_care {
                flow_categories(thread, &self.keys, flow_word);
            }
        }
        // The first start and the last end of the items kept, exact.
        let (start, stop) = match self.clock.base {
            Some(_) => (self.clock.first, self.clock.last),
            None => (0, 0),
        };
        if stop - start > i128::from(i64::MAX / 2) {
            return Err(Error::Chrome {
                path: "traceEvents".into(),
                line: 0,
                column: 0,
                reason: format!(
                    "the events span {} microseconds, more than an XSpace holds (about 53 days)",
                    (stop - start) / 1_000_000
                ),
            });
        }
        // The processes xprof's output names by a GPU plane (`/device:GPU:0`) are that plane again,
        // whatever their pid (which for GPU events would otherwise be the device, as in Kineto's).
        for thread in &mut self.threads {
            let name = self
                .processes
                .get(&thread.pid)
                .and_then(|p| p.name.as_deref());
            let named = name
                .and_then(|n| n.strip_prefix(GPU_PLANE_PREFIX))
                .and_then(|n| n.parse().ok());
            if named.is_some() {
                thread.gpu = named;
            }
        }
        // Line names say their process when the host plane holds several.
        let mut host_processes: Vec<&Id> = self
            .threads
            .iter()
            .filter(|t| t.gpu.is_none())
            .map(|t| &t.pid)
            .chain(self.counters.iter().map(|(p, _)| p))
            .collect();
        host_processes.sort_by_key(|p| p.text());
        host_processes.dedup();
        let several = host_processes.len() > 1;
        let process_label = |pid: &Id, processes: &HashMap<Id, Process>| {
            processes
                .get(pid)
                .and_then(|p| p.name.clone())
                .unwrap_or_else(|| format!("pid {}", pid.text()))
        };
        // Items hold times from the clock's base (in range: the span was checked).
        let start_rel = self.clock.rel(start);
        let rel = |t: i64| i64::try_from(i128::from(t) - i128::from(start_rel)).unwrap_or(i64::MAX);

        // Threads by plane: the host (None) and each GPU.
        // A process named by a GPU plane is that plane even without a thread: xprof's output names
        // every device plane, also one whose lines are all empty (and so not written), and reading
        // that output must give the plane again for writing to be a fixed point.
        let named_devices = self.processes.values().filter_map(|p| {
            p.name
                .as_deref()
                .and_then(|n| n.strip_prefix(GPU_PLANE_PREFIX))
                .and_then(|n| n.parse::<i64>().ok())
        });
        let mut devices: Vec<i64> = self
            .threads
            .iter()
            .filter_map(|t| t.gpu)
            .chain(named_devices)
            .collect();
        devices.sort_unstable();
        devices.dedup();
        let mut overlapping_lines = Vec::new();
        let mut planes = Vec::new();
        let threads = std::mem::take(&mut self.threads);
        let mut by_plane: Vec<Vec<Thread>> = (0..=devices.len()).map(|_| Vec::new()).collect();
        for thread in threads {
            let slot = match thread.gpu {
                Some(d) => devices.binary_search(&d).map_or(0, |i| i + 1),
                None => 0,
            };
            if let Some(list) = by_plane.get_mut(slot) {
                list.push(thread);
            }
        }
        for (slot, threads) in by_plane.into_iter().enumerate() {
            let device = slot.checked_sub(1).and_then(|i| devices.get(i)).copied();
            let plane_index = planes.len();
            let ids = self.line_ids(&threads);
            let mut lines: Vec<(i64, Thread)> = ids.into_iter().zip(threads).collect();
            // Lines in id order, so that reading a trace this module's output wrote gives the
            // same space again.
            lines.sort_by_key(|(id, _)| *id);
            let counters = if device.is_none() {
                let mut counters = std::mem::take(&mut self.counters);
                counters.sort_by_key(|(_, i)| i.start);
                counters
            } else {
                Vec::new()
            };
            let mut plane = XPlane::default();
            let mut builder = PlaneBuilder::new(&mut plane);
            match device {
                None => {
                    builder.set_id(0).set_name(HOST_PLANE_NAME);
                }
                Some(d) => {
                    builder
                        .set_id(plane_index as i64)
                        .set_name(format!("{GPU_PLANE_PREFIX}{d}"));
                    self.device_stats(&mut builder, d);
                }
            }
            // Counter events are named by process when the host plane holds several.
            let counter_names: Vec<u32> = counters
                .iter()
                .map(|(pid, item)| {
                    if several {
                        let name = format!(
                            "{} / {}",
                            process_label(pid, &self.processes),
                            self.strings.get(item.name)
                        );
                        self.strings.id(&name)
                    } else {
                        item.name
                    }
                })
                .collect();
            let mut meta = Metadata::new(&self.strings);
            for (_, t) in &lines {
                let mut flow_args = t.flow_args.as_slice();
                for (index, item) in t.items.iter().enumerate() {
                    let extra = flow_args.iter().take_while(|(i, _)| *i == index).count();
                    let (mine, rest) = flow_args.split_at(extra);
                    flow_args = rest;
                    let own = t.args.get(item.at, item.len);
                    meta.count(
                        item.name,
                        own.iter().chain(mine.iter().map(|(_, a)| a)),
                        &self.strings,
                    );
                }
            }
            for ((_, item), &name) in counters.iter().zip(&counter_names) {
                meta.count(
                    name,
                    self.counter_args.get(item.at, item.len).iter(),
                    &self.strings,
                );
            }
            meta.finish();
            meta.declare(&mut builder, &self.strings, |a| self.stat(a));
            drop(builder);
            meta.name_events(&mut plane, &self.strings);
            for (id, thread) in lines {
                let thread_name = match (&thread.name, &thread.track) {
                    // A line always has a name (the writer leaves out empty ones, which would
                    // read back under another name).
                    (Some(n), _) if !n.is_empty() => n.clone(),
                    (_, Track::Thread(tid)) => match (device, tid.text()) {
                        (Some(_), tid) => format!("stream {tid}"),
                        (None, tid) if tid.is_empty() => "thread".to_owned(),
                        (None, tid) => tid,
                    },
                    (_, Track::Async(name)) => match self.strings.get(*name) {
                        "" => "async".to_owned(),
                        name => name.to_owned(),
                    },
                };
                if device.is_some() || matches!(thread.track, Track::Async(_)) {
                    overlapping_lines.push((plane_index, id));
                }
                let first = thread.items.first().map_or(start_rel, |i| i.start);
                let timestamp_ns = rel(first) / 1000;
                let line_ps = i128::from(timestamp_ns) * 1000 + i128::from(start_rel);
                let display_name = if several && device.is_none() {
                    format!(
                        "{} / {thread_name}",
                        process_label(&thread.pid, &self.processes)
                    )
                } else {
                    String::new()
                };
                // Converted from the last item back, the items' buffer shrinking as it empties
                // and each chunk of args freed once its items are converted, so that the line's
                // events take the place of its items rather than adding to them (the peak of
                // memory is here).
                let mut items = thread.items;
                let mut args = thread.args;
                let mut flow_args = thread.flow_args;
                let mut events = Vec::with_capacity(items.len());
                let mut shrink_at = items.len() / 2;
                while let Some(item) = items.pop() {
                    let index = items.len();
                    let from = flow_args
                        .iter()
                        .rposition(|(i, _)| *i != index)
                        .map_or(0, |p| p + 1);
                    events.push(
                        meta.event(
                            item.name,
                            i64::try_from(i128::from(item.start) - line_ps).unwrap_or(i64::MAX),
                            i64::try_from(i128::from(item.end) - i128::from(item.start))
                                .unwrap_or(i64::MAX),
                            args.get(item.at, item.len),
                            flow_args.get(from..).unwrap_or_default(),
                            &self.strings,
                        ),
                    );
                    args.release(item.at, item.len);
                    flow_args.truncate(from);
                    if items.len() <= shrink_at && items.len() >= SHRINK_MIN_ITEMS {
                        items.shrink_to_fit();
                        flow_args.shrink_to_fit();
                        shrink_at = items.len() / 2;
                    }
                }
                drop(items);
                drop(args);
                drop(flow_args);
                events.reverse();
                plane.lines.push(XLine {
                    id,
                    display_id: 0,
                    name: thread_name,
                    display_name,
                    timestamp_ns,
                    duration_ps: 0,
                    events,
                });
            }
            if !counters.is_empty() {
                overlapping_lines.push((plane_index, COUNTERS_LINE_ID));
                let mut events = Vec::with_capacity(counters.len());
                for ((_, item), name) in counters.into_iter().zip(counter_names) {
                    events.push(meta.event(
                        name,
                        rel(item.start),
                        0,
                        self.counter_args.get(item.at, item.len),
                        &[],
                        &self.strings,
                    ));
                }
                plane.lines.push(XLine {
                    id: COUNTERS_LINE_ID,
                    name: COUNTERS_LINE_NAME.to_owned(),
                    events,
                    ..XLine::default()
                });
            }
            xflow::add_flow_stats(&mut plane);
            planes.push(plane);
        }
        let mut env = XPlane::default();
        {
            let mut builder = PlaneBuilder::new(&mut env);
            builder
                .set_id(planes.len() as i64)
                .set_name(TASK_ENV_PLANE_NAME);
            let ns = |ps: i128| u64::try_from(ps.div_euclid(1000).max(0)).unwrap_or(u64::MAX);
            builder.add_stat(stats::PROFILE_START_TIME, ns(start));
            builder.add_stat(stats::PROFILE_STOP_TIME, ns(stop));
            for (key, value) in &self.distributed {
                builder.add_stat(key, json_stat(value));
            }
            if let Some(unit) = &self.display_time_unit {
                builder.add_stat("display_time_unit", unit.as_str());
            }
            builder.add_stat(SOURCE_FORMAT_STAT, SOURCE_CHROME);
        }
        planes.push(env);
        let (warnings, warning_counts) = self.warnings.finish();
        let precision_ps = 10i64.pow(6u32.saturating_sub(self.decimals.min(6)));
        Ok(ChromeImport {
            space: XSpace {
                planes,
                ..XSpace::default()
            },
            events: self.events,
            flows,
            skipped: self.skipped,
            warnings,
            warning_counts,
            overlapping_lines,
            precision_ps,
            kineto: self.kineto,
            paddle: self.paddle,
        })
    }

    /// Line ids for the threads of one plane: a numeric tid keeps its number when it is the
    /// first to claim it, the others take the smallest free ids; lines come in order of their
    /// sort index (when given) and id.
    fn line_ids(&self, threads: &[Thread]) -> Vec<i64> {
        let mut used = std::collections::HashSet::new();
        let mut ids: Vec<Option<i64>> = threads
            .iter()
            .map(|t| match &t.track {
                Track::Thread(Id::Int(i))
                    if *i >= 0 && *i != COUNTERS_LINE_ID && used.insert(*i) =>
                {
                    Some(*i)
                }
                _ => None,
            })
            .collect();
        // The others take the smallest free ids in order of their sort index (`M`
        // `thread_sort_index`), then of first appearance.
        let mut order: Vec<usize> = (0..threads.len()).collect();
        order.sort_by_key(|&i| threads.get(i).and_then(|t| t.sort_index).unwrap_or(0));
        let mut next_free: i64 = 1;
        for index in order {
            if let Some(slot @ None) = ids.get_mut(index) {
                while used.contains(&next_free) {
                    next_free += 1;
                }
                used.insert(next_free);
                *slot = Some(next_free);
            }
        }
        ids.into_iter().map(|id| id.unwrap_or(0)).collect()
    }

    fn device_stats(&self, builder: &mut PlaneBuilder<'_>, device: i64) {
        let Some(props) = self
            .device_properties
            .iter()
            .find(|p| p.get("id").and_then(serde_json::Value::as_i64) == Some(device))
        else {
            return;
        };
        if let Some(name) = props.get("name").and_then(serde_json::Value::as_str) {
            builder.add_stat(stats::DEVICE_TYPE_STRING, name);
        }
        if let Some(n) = props.get("numSms").and_then(serde_json::Value::as_u64) {
            builder.add_stat(stats::CORE_COUNT, n);
        }
        if let Some(n) = props
            .get("totalGlobalMem")
            .and_then(serde_json::Value::as_u64)
        {
            builder.add_stat(stats::MEMORY_SIZE, n);
        }
        for (key, value) in props {
            if key != "id" {
                builder.add_stat(key, json_stat(value));
            }
        }
    }
}

/// What an arg of the events of one name is: the same on all of them (then it is a stat of their
/// event metadata, stored once, as xprof stores kernel details), or not.
#[derive(Clone, Copy)]
enum Shared {
    /// The value, how many events have it, and the last of them (by its place in the items).
    Same(Arg, u64, usize),
    Differs,
}

fn same_arg(a: Arg, b: Arg) -> bool {
    match (a, b) {
        (Arg::Double(x), Arg::Double(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// The metadata of one plane: event and stat metadata ids by interned string, and the args the
/// events of a name all share.
struct Metadata {
    /// By name, in the order of their first events, each with the name's keys in a short list
    /// (the events of a name write their args in the same order, so the key is nearly always at
    /// its position).
    by_name: Vec<NameMetadata>,
    /// Where each name is in `by_name`, by interned string (`u32::MAX`: not a name here): an
    /// array rather than a map, since a trace can have as many names as events (Kineto's
    /// `ProfilerStep#<n>`), and the events of such names come in the order of their ids.
    slot: Vec<u32>,
    /// Which strings are stored as `ref_value`s, by id (while counting).
    is_ref: Vec<bool>,
    /// Events counted so far.
    counted: usize,
    /// Strings stored as `ref_value`s.
    refs: Vec<u32>,
    /// Stat metadata ids by interned string (0: none).
    stat_ids: Vec<i64>,
}

/// What the events of one name have.
#[derive(Default)]
struct NameMetadata {
    name: u32,
    events: u64,
    /// Each key an event of the name has, with whether they all share its value.
    keys: Vec<(u32, Shared)>,
    event_id: i64,
    /// The keys of the args the name's events share (stats of their event metadata).
    hoisted: Vec<u32>,
}

impl Metadata {
    fn new(strings: &Interner) -> Metadata {
        Metadata {
            by_name: Vec::new(),
            slot: vec![u32::MAX; strings.strings.len()],
            is_ref: vec![false; strings.strings.len()],
            counted: 0,
            refs: Vec::new(),
            stat_ids: Vec::new(),
        }
    }

    /// Counts one event of the plane with its args (every event, in the order they are written).
    fn count<'a>(&mut self, name: u32, args: impl Iterator<Item = &'a KeyArg>, strings: &Interner) {
        let event = self.counted;
        self.counted += 1;
        let index = match self.slot.get(name as usize) {
            Some(&i) if i != u32::MAX => i as usize,
            _ => {
                let i = self.by_name.len();
                if self.slot.len() <= name as usize {
                    self.slot.resize(name as usize + 1, u32::MAX);
                }
                if let Some(slot) = self.slot.get_mut(name as usize) {
                    *slot = u32::try_from(i).unwrap_or(u32::MAX);
                }
                self.by_name.push(NameMetadata {
                    name,
                    ..NameMetadata::default()
                });
                i
            }
        };
        let Some(NameMetadata { events, keys, .. }) = self.by_name.get_mut(index) else {
            return;
        };
        *events += 1;
        for (position, (key, value)) in args.map(|a| (a.key, a.arg())).enumerate() {
            if let Arg::Str(s) = value {
                if strings.is_repeated(s) {
                    if let Some(seen @ false) = self.is_ref.get_mut(s as usize) {
                        *seen = true;
                        self.refs.push(s);
                    }
                }
            }
            let slot = match keys.get(position) {
                Some((k, _)) if *k == key => Some(position),
                _ => keys.iter().position(|(k, _)| *k == key),
            };
            match slot.and_then(|i| keys.get_mut(i)) {
                Some((_, s)) => {
                    *s = match *s {
                        // An arg an event has twice (two flows ending on it) is its own: once
                        // hoisted, it would be one stat, and the other events would get it.
                        Shared::Same(v, n, last) if last != event && same_arg(v, value) => {
                            Shared::Same(v, n + 1, event)
                        }
                        _ => Shared::Differs,
                    }
                }
                None => keys.push((key, Shared::Same(value, 1, event))),
            }
        }
    }

    /// Decides, once every event is counted, which args the events of a name share: those every
    /// event of the name (two at least) has with that value, once each.
    fn finish(&mut self) {
        self.is_ref = Vec::new();
        for meta in &mut self.by_name {
            for (_, s) in meta.keys.iter_mut() {
                if let Shared::Same(_, n, _) = *s {
                    if meta.events != n || n < 2 {
                        *s = Shared::Differs;
                    }
                }
            }
            meta.keys.sort_unstable_by_key(|(k, _)| *k);
        }
    }

    /// Declares every event and stat metadata the plane needs, and the shared args as stats of
    /// their event metadata. The event metadata are named by [`Metadata::name_events`].
    fn declare(
        &mut self,
        builder: &mut PlaneBuilder<'_>,
        strings: &Interner,
        stat: impl Fn(Arg) -> StatValue,
    ) {
        // Metadata ids in order of the strings' first appearance, so that output is stable.
        // Interned names are distinct strings: each is a new metadata.
        let mut names: Vec<(u32, usize)> = self
            .by_name
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name, i))
            .collect();
        names.sort_unstable();
        let mut keys: Vec<u32> = Vec::new();
        for &(_, i) in &names {
            if let Some(meta) = self.by_name.get_mut(i) {
                meta.event_id = builder.new_event_metadata();
                keys.extend(meta.keys.iter().map(|(k, _)| *k));
            }
        }
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            let id = builder.stat_metadata_id(strings.get(key));
            self.set_stat_id(key, id);
        }
        for &(_, i) in &names {
            let Some(meta) = self.by_name.get_mut(i) else {
                continue;
            };
            for &(key, s) in &meta.keys {
                let Shared::Same(value, _, _) = s else {
                    continue;
                };
                meta.hoisted.push(key);
                if let Some(mut metadata) = builder.event_metadata(meta.event_id) {
                    metadata.add_stat(strings.get(key), stat(value));
                }
            }
        }
        // Strings stored as `ref_value`s are the names of stat metadata.
        let mut refs = std::mem::take(&mut self.refs);
        refs.sort_unstable();
        for s in refs {
            let id = builder.stat_metadata_id(strings.get(s));
            self.set_stat_id(s, id);
        }
    }

    /// Names the event metadata [`Metadata::declare`] made.
    fn name_events(&self, plane: &mut XPlane, strings: &Interner) {
        for meta in &self.by_name {
            if let Some(metadata) = plane.event_metadata.get_mut(&meta.event_id) {
                metadata.name = strings.get(meta.name).to_owned();
            }
        }
    }

    fn set_stat_id(&mut self, key: u32, id: i64) {
        let index = key as usize;
        if self.stat_ids.len() <= index {
            self.stat_ids.resize(index + 1, 0);
        }
        if let Some(slot) = self.stat_ids.get_mut(index) {
            *slot = id;
        }
    }

    fn stat_id(&self, key: u32) -> i64 {
        self.stat_ids.get(key as usize).copied().unwrap_or(0)
    }

    /// One event with the stats that are its own.
    fn event(
        &self,
        name: u32,
        offset_ps: i64,
        duration_ps: i64,
        stats: &[KeyArg],
        flow_stats: &[(usize, KeyArg)],
        strings: &Interner,
    ) -> XEvent {
        let (event_id, hoisted) = self
            .slot
            .get(name as usize)
            .and_then(|&i| self.by_name.get(i as usize))
            .map_or((0, &[][..]), |m| (m.event_id, m.hoisted.as_slice()));
        let all = stats.len() + flow_stats.len();
        let mut own = Vec::with_capacity(all.saturating_sub(hoisted.len()));
        for a in stats.iter().chain(flow_stats.iter().map(|(_, a)| a)) {
            if hoisted.contains(&a.key) {
                continue;
            }
            // Strings many events share are stored once, as the stat metadata named by them
            // (declared beforehand by [`Metadata::declare`]).
            let value = match a.arg() {
                Arg::Str(s) if strings.is_repeated(s) => {
                    x_stat::Value::RefValue(u64::try_from(self.stat_id(s)).unwrap_or(0))
                }
                Arg::Str(s) => x_stat::Value::StrValue(strings.get(s).to_owned()),
                Arg::Int(i) => x_stat::Value::Int64Value(i),
                Arg::Uint(u) => x_stat::Value::Uint64Value(u),
                Arg::Double(d) => x_stat::Value::DoubleValue(d),
            };
            own.push(XStat {
                metadata_id: self.stat_id(a.key),
                value: Some(value),
            });
        }
        XEvent {
            metadata_id: event_id,
            duration_ps,
            stats: own,
            data: Some(x_event::Data::OffsetPs(offset_ps)),
        }
    }
}

/// A stat value for a JSON value of the top level.
fn json_stat(value: &serde_json::Value) -> StatValue {
    match value {
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => StatValue::Int64(i),
            (_, Some(u), _) => StatValue::Uint64(u),
            (_, _, Some(f)) => StatValue::Double(f),
            _ => StatValue::Str(n.to_string()),
        },
        serde_json::Value::String(s) => StatValue::Str(s.clone()),
        serde_json::Value::Bool(b) => StatValue::Int64(i64::from(*b)),
        other => StatValue::Str(other.to_string()),
    }
}

// ----- the document -----

/// The whole document: an object with `traceEvents`, or a bare array of events.
struct Document<'t> {
    trace: &'t RefCell<Trace>,
}

impl<'de> DeserializeSeed<'de> for Document<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Document<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Chrome trace: an object with traceEvents or an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<(), A::Error> {
        Events { trace: self.trace }.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let trace = self.trace;
        let mut seen_events = false;
        while let Some(key) = map.next_key::<TopKey>()? {
            match key {
                TopKey::TraceEvents => {
                    if seen_events {
                        // Readers that keep the last value of a key would see only these.
                        trace.borrow_mut().warnings.push(WarningKind::DuplicateKey, || {
                            "the trace has the key \"traceEvents\" more than once; the events of every one are read".to_owned()
                        });
                    }
                    seen_events = true;
                    map.next_value_seed(Events { trace })?;
                }
                TopKey::SpanIndex => {
                    trace.borrow_mut().paddle = true;
                    map.next_value::<IgnoredAny>()?;
                }
                TopKey::SchemaVersion => {
                    let value = map.next_value::<serde_json::Value>()?;
                    trace.borrow_mut().paddle |= value.is_string();
                }
                TopKey::DeviceProperties => {
                    trace.borrow_mut().kineto = true;
                    let value = map.next_value::<serde_json::Value>()?;
                    if let serde_json::Value::Array(items) = value {
                        trace.borrow_mut().device_properties = items
                            .into_iter()
                            .filter_map(|v| match v {
                                serde_json::Value::Object(m) => Some(m),
                                _ => None,
                            })
                            .collect();
                    }
                }
                TopKey::DistributedInfo => {
                    if let serde_json::Value::Object(m) = map.next_value::<serde_json::Value>()? {
                        trace.borrow_mut().distributed = m.into_iter().collect();
                    }
                }
                TopKey::DisplayTimeUnit => {
                    if let serde_json::Value::String(s) = map.next_value::<serde_json::Value>()? {
                        trace.borrow_mut().display_time_unit = Some(s);
                    }
                }
                TopKey::StackFrames | TopKey::Samples => {
                    let skipped = map.next_value::<Counted>()?.0;
                    if skipped > 0 {
                        let what = match key {
                            TopKey::Samples => "samples",
                            _ => "stackFrames",
                        };
                        *trace
                            .borrow_mut()
                            .skipped
                            .entry(what.to_owned())
                            .or_default() += skipped;
                    }
                }
                TopKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !seen_events {
            return Err(de::Error::custom(
                "not a Chrome trace: the object has no traceEvents",
            ));
        }
        Ok(())
    }
}

/// How many members or elements a value has (its contents skipped).
struct Counted(u64);

impl<'de> de::Deserialize<'de> for Counted {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Counted, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Counted;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object or an array")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Counted, A::Error> {
                let mut n = 0;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Counted(n))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Counted, A::Error> {
                let mut n = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Counted(n))
            }
            fn visit_unit<E>(self) -> std::result::Result<Counted, E> {
                Ok(Counted(0))
            }
        }
        d.deserialize_any(V)
    }
}

enum TopKey {
    TraceEvents,
    SpanIndex,
    SchemaVersion,
    DeviceProperties,
    DistributedInfo,
    DisplayTimeUnit,
    StackFrames,
    Samples,
    Other,
}

impl<'de> de::Deserialize<'de> for TopKey {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<TopKey, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TopKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<TopKey, E> {
                Ok(match v {
                    "traceEvents" => TopKey::TraceEvents,
                    "span_index" => TopKey::SpanIndex,
                    "schemaVersion" => TopKey::SchemaVersion,
                    "deviceProperties" => TopKey::DeviceProperties,
                    "distributedInfo" => TopKey::DistributedInfo,
                    "displayTimeUnit" => TopKey::DisplayTimeUnit,
                    "stackFrames" => TopKey::StackFrames,
                    "samples" => TopKey::Samples,
                    _ => TopKey::Other,
                })
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<TopKey, E> {
                self.visit_str(std::str::from_utf8(v).unwrap_or_default())
            }
        }
        d.deserialize_identifier(V)
    }
}

/// The event array, taken one event at a time.
struct Events<'t> {
    trace: &'t RefCell<Trace>,
}

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        self.trace.borrow_mut().index = 0;
        while seq
            .next_element_seed(EventSeed { trace: self.trace })?
            .is_some()
        {
            self.trace.borrow_mut().index += 1;
        }
        Ok(())
    }
}

/// One event: offered to the fast path first (see [`fast`]), read by [`EventMembers`] when it
/// declines.
struct EventSeed<'t> {
    trace: &'t RefCell<Trace>,
}

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_newtype_struct(RAW_HOOK_TOKEN, self)
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event (an object)")
    }

    /// The fast path read the event.
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_newtype_struct<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<(), D::Error> {
        d.deserialize_map(EventMembers { trace: self.trace })
    }
}

/// The members of one event, through serde's visitors.
struct EventMembers<'t> {
    trace: &'t RefCell<Trace>,
}

#[derive(Clone, Copy)]
enum Field {
    Ph,
    Name,
    Cat,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Id2,
    Scope,
    Bp,
    BindId,
    FlowIn,
    FlowOut,
    Args,
    Other,
}

impl Field {
    /// The key of a known member, `None` for the others (which are ignored, duplicates too).
    fn key(&self) -> Option<&'static str> {
        Some(match self {
            Field::Ph => "ph",
            Field::Name => "name",
            Field::Cat => "cat",
            Field::Pid => "pid",
            Field::Tid => "tid",
            Field::Ts => "ts",
            Field::Dur => "dur",
            Field::Id => "id",
            Field::Id2 => "id2",
            Field::Scope => "scope",
            Field::Bp => "bp",
            Field::BindId => "bind_id",
            Field::FlowIn => "flow_in",
            Field::FlowOut => "flow_out",
            Field::Args => "args",
            Field::Other => return None,
        })
    }
}

impl<'de> de::Deserialize<'de> for Field {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Field, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Field, E> {
                self.visit_bytes(v.as_bytes())
            }
            // profkit-json's reader hands identifiers over as bytes (already checked for UTF-8).
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<Field, E> {
                Ok(fast::field_of(v))
            }
        }
        d.deserialize_identifier(V)
    }
}

impl<'de> Visitor<'de> for EventMembers<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event (an object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let mut guard = self.trace.borrow_mut();
        let trace = &mut *guard;
        trace.raw.clear();
        while let Some(field) = map.next_key::<Field>()? {
            trace.raw.member(field);
            match field {
                Field::Ph => match map.next_value_seed(PhaseSeed)? {
                    Some(ph) => trace.raw.ph = Some(ph),
                    None => trace.raw.ph_not_string = true,
                },
                Field::Name => {
                    // Interned as it is read (a name that is not a string, as its text).
                    let arg = map.next_value_seed(ArgSeed {
                        strings: &mut trace.strings,
                    })?;
                    trace.raw.name = Some(match arg {
                        Arg::Str(id) => id,
                        Arg::Int(i) => trace.strings.id(&i.to_string()),
                        Arg::Uint(u) => trace.strings.id(&u.to_string()),
                        Arg::Double(d) => trace.strings.id(&d.to_string()),
                    });
                }
                Field::Cat => {
                    trace.raw.cat = Some(map.next_value_seed(ArgSeed {
                        strings: &mut trace.strings,
                    })?)
                    .and_then(|arg| match arg {
                        Arg::Str(id) => Some(id),
                        _ => None,
                    });
                }
                Field::Pid => trace.raw.pid = Some(map.next_value_seed(IdSeed)?),
                Field::Tid => trace.raw.tid = Some(map.next_value_seed(IdSeed)?),
                Field::Ts => {
                    let t = map.next_value_seed(TimeSeed)?;
                    trace.raw.ts = t.map(|(v, d)| {
                        trace.decimals = trace.decimals.max(d);
                        v
                    });
                }
                Field::Dur => {
                    let t = map.next_value_seed(TimeSeed)?;
                    trace.raw.dur = t.map(|(v, d)| {
                        trace.decimals = trace.decimals.max(d);
                        v
                    });
                }
                Field::Id => trace.raw.id = Some(map.next_value_seed(Text)?),
                Field::Id2 => {
                    // `{"local": "0x1"}` or `{"global": "0x1"}`: the scope is part of the id.
                    let value = map.next_value::<serde_json::Value>()?;
                    let id = match &value {
                        serde_json::Value::Object(m) => m
                            .iter()
                            .next()
                            .map(|(k, v)| {
                                format!(
                                    "{k}:{}",
                                    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
                                )
                            })
                            .unwrap_or_default(),
                        other => other.to_string(),
                    };
                    trace.raw.id = Some(id);
                }
                Field::Scope => trace.raw.scope = Some(map.next_value_seed(Text)?),
                Field::Bp => trace.raw.bp_enclosing = map.next_value_seed(Text)? == "e",
                Field::BindId => trace.raw.bind_id = Some(map.next_value_seed(Text)?),
                Field::FlowIn => trace.raw.flow_in = map.next_value::<serde_json::Value>()? == true,
                Field::FlowOut => {
                    trace.raw.flow_out = map.next_value::<serde_json::Value>()? == true;
                }
                Field::Args => map.next_value_seed(ArgsSeed { trace: &mut *trace })?,
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        trace.take_event()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> std::result::Result<(), A::Error> {
        Err(de::Error::custom("an event must be an object"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        Err(E::custom("an event must be an object"))
    }
}

/// A phase as written (one or two bytes in every producer; longer ones are kept whole).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Short([u8; 2], u8),
    Long(String),
}

impl Phase {
    fn as_str(&self) -> &str {
        match self {
            Phase::Short(bytes, len) => bytes
                .get(..usize::from(*len))
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or(""),
            Phase::Long(s) => s,
        }
    }
}

/// The phase: a string, or `None` for any other value.
struct PhaseSeed;

impl<'de> DeserializeSeed<'de> for PhaseSeed {
    type Value = Option<Phase>;
    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PhaseSeed {
    type Value = Option<Phase>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a phase")
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        let bytes = v.as_bytes();
        Ok(Some(match bytes {
            [a] => Phase::Short([*a, 0], 1),
            [a, b] => Phase::Short([*a, *b], 2),
            _ => Phase::Long(v.to_owned()),
        }))
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// A string, or the text of any other scalar (numeric names and ids), or the compact JSON of a
/// container.
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = String;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<String, D::Error> {
        d.deserialize_newtype_struct(RAW_NUMBER_TOKEN, self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<String, E> {
        Ok(v)
    }
    fn visit_bytes<E>(self, v: &[u8]) -> std::result::Result<String, E> {
        Ok(String::from_utf8_lossy(v).into_owned())
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_unit<E>(self) -> std::result::Result<String, E> {
        Ok(String::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<String, A::Error> {
        let value: serde_json::Value =
            de::Deserialize::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(value.to_string())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<String, A::Error> {
        let value: serde_json::Value =
            de::Deserialize::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(value.to_string())
    }
}

/// A pid or tid written as a number that is not an integer, as text: the shortest form that
/// reads back as the same double (`1.5`, `1.8446744073709552e19`), not every digit of its value.
fn float_id(v: f64) -> String {
    format!("{v:?}")
}

/// A pid or tid.
struct IdSeed;

impl<'de> DeserializeSeed<'de> for IdSeed {
    type Value = Id;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Id, D::Error> {
        // Integers take the reader's fast path; a fraction keeps its text through `visit_f64`.
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdSeed {
    type Value = Id;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a process or thread id")
    }
    fn visit_bytes<E>(self, v: &[u8]) -> std::result::Result<Id, E> {
        let text = String::from_utf8_lossy(v);
        Ok(text
            .parse::<i64>()
            .map_or_else(|_| Id::Text(text.into()), Id::Int))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Id, E> {
        Ok(i64::try_from(v).map_or_else(|_| Id::Text(v.to_string().into()), Id::Int))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Id, E> {
        Ok(Id::Int(v))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Id, E> {
        Ok(Id::Text(float_id(v).into()))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Id, E> {
        Ok(Id::Text(v.into()))
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Id, E> {
        Ok(Id::Text(v.to_string().into()))
    }
    fn visit_unit<E>(self) -> std::result::Result<Id, E> {
        Ok(Id::Int(0))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Id, A::Error> {
        Text.visit_seq(seq).map(|s| Id::Text(s.into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Id, A::Error> {
        Text.visit_map(map).map(|s| Id::Text(s.into()))
    }
}

/// A time in microseconds (a number, or a string holding one) as picoseconds, with its decimals.
struct TimeSeed;

impl<'de> DeserializeSeed<'de> for TimeSeed {
    type Value = Option<(i128, u32)>;
    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_newtype_struct(RAW_NUMBER_TOKEN, self)
    }
}

impl<'de> Visitor<'de> for TimeSeed {
    type Value = Option<(i128, u32)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number of microseconds")
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<Self::Value, E> {
        if let Some(found) = plain_micros_to_ps(v) {
            return Ok(Some(found));
        }
        let text = std::str::from_utf8(v).map_err(|_| E::custom("invalid number"))?;
        micros_to_ps(text)
            .map(Some)
            .ok_or_else(|| E::custom("the number is out of range"))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
        micros_to_ps(v.trim())
            .map(Some)
            .ok_or_else(|| E::custom("expected a number of microseconds"))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
        Ok(Some((i128::from(v) * 1_000_000, 0)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Self::Value, E> {
        Ok(Some((i128::from(v) * 1_000_000, 0)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Self::Value, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Err(E::custom("expected a number of microseconds"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> std::result::Result<Self::Value, A::Error> {
        Err(de::Error::custom("expected a number of microseconds"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> std::result::Result<Self::Value, A::Error> {
        Err(de::Error::custom("expected a number of microseconds"))
    }
}

/// The args of an event, into the raw event's list with interned keys and string values.
struct ArgsSeed<'t> {
    trace: &'t mut Trace,
}

impl<'de> DeserializeSeed<'de> for ArgsSeed<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ArgsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of args")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let trace = self.trace;
        let mut position = 0;
        while let Some(key) = map.next_key_seed(KeySeed {
            strings: &mut trace.strings,
            // Events of a kind write their args in the same order: the key at this position in
            // the last event's args is the likely one, checked before any hashing.
            likely: trace.last_keys.get(position).copied(),
        })? {
            match trace.last_keys.get_mut(position) {
                Some(slot) => *slot = key,
                None => trace.last_keys.push(key),
            }
            position += 1;
            let value = map.next_value_seed(ArgSeed {
                strings: &mut trace.strings,
            })?;
            trace.raw.args.push(KeyArg::new(key, value));
        }
        Ok(())
    }
    // Args that are not an object carry nothing an XSpace keeps.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        Ok(())
    }
}

struct KeySeed<'s> {
    strings: &'s mut Interner,
    likely: Option<u32>,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = u32;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<u32, D::Error> {
        // As bytes: profkit-json's reader checked the key for UTF-8 once already.
        d.deserialize_bytes(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = u32;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<u32, E> {
        self.visit_bytes(v.as_bytes())
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<u32, E> {
        if let Some(id) = self
            .likely
            .filter(|&id| self.strings.get(id).as_bytes() == v)
        {
            // As `id` would: the string is asked for again.
            if let Some(r) = self.strings.repeated.get_mut(id as usize) {
                *r = true;
            }
            return Ok(id);
        }
        self.strings
            .id_bytes(v)
            .ok_or_else(|| E::custom("invalid UTF-8 in a key"))
    }
}

struct ArgSeed<'s> {
    strings: &'s mut Interner,
}

impl<'de> DeserializeSeed<'de> for ArgSeed<'_> {
    type Value = Arg;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Arg, D::Error> {
        // Strings come as bytes, looked up before they are checked for UTF-8 (profkit-json's
        // reader hands any other value over as `deserialize_any` does).
        d.deserialize_bytes(self)
    }
}

impl<'de> Visitor<'de> for ArgSeed<'_> {
    type Value = Arg;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an arg value")
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Arg, E> {
        Ok(i64::try_from(v).map_or(Arg::Uint(v), Arg::Int))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Arg, E> {
        Ok(Arg::Int(v))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Arg, E> {
        Ok(Arg::Double(v))
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Arg, E> {
        Ok(Arg::Int(i64::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Arg, E> {
        Ok(Arg::Str(self.strings.id(v)))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> std::result::Result<Arg, E> {
        match self.strings.id_bytes(v) {
            Some(id) => Ok(Arg::Str(id)),
            None => Err(E::custom("invalid UTF-8 in a string")),
        }
    }
    fn visit_unit<E>(self) -> std::result::Result<Arg, E> {
        Ok(Arg::Str(self.strings.id("null")))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Arg, A::Error> {
        // Compact JSON text written straight into a reused buffer (Kineto's kernels have two
        // small arrays each: no tree is built for them).
        let mut buf = std::mem::take(&mut self.strings.scratch);
        buf.clear();
        let result = Compact { out: &mut buf }.visit_seq(seq);
        let id = self.strings.id(std::str::from_utf8(&buf).unwrap_or(""));
        self.strings.scratch = buf;
        result.map(|()| Arg::Str(id))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Arg, A::Error> {
        let mut buf = std::mem::take(&mut self.strings.scratch);
        buf.clear();
        let result = Compact { out: &mut buf }.visit_map(map);
        let id = self.strings.id(std::str::from_utf8(&buf).unwrap_or(""));
        self.strings.scratch = buf;
        result.map(|()| Arg::Str(id))
    }
}

/// Writes the value it reads as compact JSON (keys in the order written).
struct Compact<'b> {
    out: &'b mut Vec<u8>,
}

impl Compact<'_> {
    fn json<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        // Writing to a Vec cannot fail; a value serde_json cannot write (none here) is `null`.
        if serde_json::to_writer(&mut *self.out, value).is_err() {
            self.out.extend_from_slice(b"null");
        }
    }
}

impl<'de> DeserializeSeed<'de> for Compact<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Compact<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(mut self, v: bool) -> std::result::Result<(), E> {
        self.json(&v);
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<(), E> {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<(), E> {
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
    fn visit_f64<E>(mut self, v: f64) -> std::result::Result<(), E> {
        self.json(&v);
        Ok(())
    }
    fn visit_str<E>(mut self, v: &str) -> std::result::Result<(), E> {
        self.json(v);
        Ok(())
    }
    fn visit_unit<E>(self) -> std::result::Result<(), E> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        self.out.push(b'[');
        let mut first = true;
        loop {
            let at = self.out.len();
            if !first {
                self.out.push(b',');
            }
            if seq
                .next_element_seed(Compact {
                    out: &mut *self.out,
                })?
                .is_none()
            {
                self.out.truncate(at);
                break;
            }
            first = false;
        }
        self.out.push(b']');
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        self.out.push(b'{');
        let mut first = true;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if !first {
                self.out.push(b',');
            }
            first = false;
            Compact {
                out: &mut *self.out,
            }
            .json(key.as_ref());
            self.out.push(b':');
            map.next_value_seed(Compact {
                out: &mut *self.out,
            })?;
        }
        self.out.push(b'}');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_microseconds() {
        let ps = |t: &str| micros_to_ps(t).map(|(v, _)| v);
        assert_eq!(
            ps("1795211085403342.685"),
            Some(1_795_211_085_403_342_685_000)
        );
        assert_eq!(ps("1.5e3"), Some(1_500_000_000));
        assert_eq!(ps("-2"), Some(-2_000_000));
        assert_eq!(ps("0.0000004"), Some(0));
        assert_eq!(ps("0.0000006"), Some(1));
        assert_eq!(micros_to_ps("12.345").map(|(_, d)| d), Some(3));
        assert_eq!(ps("1x"), None);
        // The plain form's fast path gives what the general path gives, or leaves it to it.
        let general = |t: &str| {
            let bytes = t.as_bytes();
            let mut text = String::from(t);
            // An exponent of zero sends the same number down the general path.
            if !bytes.contains(&b'e') {
                text.push_str("e0");
            }
            micros_to_ps(&text)
        };
        for t in [
            "0",
            "7",
            "-7",
            "-0",
            "007",
            "12.5",
            "1712345678000.123",
            "1712345678000.123456",
            "999999999999999999",
            "999999999999999999.999999",
            "-0.000001",
            "3.100",
        ] {
            assert_eq!(plain_micros_to_ps(t.as_bytes()), general(t), "{t}");
        }
        for t in [
            "1.",
            ".5",
            "1.2345678",
            "1e3",
            "1234567890123456789",
            "--1",
            "1.2.3",
            "",
            "-",
        ] {
            assert_eq!(plain_micros_to_ps(t.as_bytes()), None, "{t}");
        }
    }

    #[test]
    fn errors_name_the_place() {
        let text = b"{\"traceEvents\": [\n{\"ph\": \"X\", \"ts\": \"soon\"}]}";
        let err = chrome_to_xspace(text).unwrap_err().to_string();
        assert!(
            err.contains("traceEvents[0].ts") && err.contains("line 2"),
            "{err}"
        );
    }

    #[test]
    fn trace_events_anywhere() {
        let text = br#"{"deviceProperties": [{"id": 0, "name": "G", "numSms": 2}], "x": {"y": [1, {"z": null}]},
            "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2,
            "args": {"correlation": 5}}]}"#;
        assert_eq!(sniff_json(&text[..]), JsonShape::Chrome);
        let import = chrome_to_xspace(text).unwrap();
        assert!(import.kineto);
        let names: Vec<_> = import
            .space
            .planes
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, ["/host:CPU", "/device:GPU:0", "Task Environment"]);
        assert_eq!(
            sniff_json(&br#"{"a": 1, "b": [2]}"#[..]),
            JsonShape::Object(vec!["a".into(), "b".into()])
        );
        assert!(matches!(
            sniff_json(&b"{\"a\": "[..]),
            JsonShape::NotJson(_)
        ));
        assert_eq!(sniff_json(&b"[{\"ph\": \"X\""[..]), JsonShape::Chrome);
    }

    #[test]
    fn partition_from_any_hint() {
        let items: Vec<Item> = [1, 2, 2, 3, 5, 5, 5, 8, 9]
            .iter()
            .map(|&t| Item {
                name: 0,
                len: 0,
                at: 0,
                start: t,
                end: t,
            })
            .collect();
        for n in 0..=items.len() {
            let items = &items[..n];
            for ts in 0..11 {
                for hint in 0..=n + 2 {
                    assert_eq!(
                        partition_from(items, hint, |i| i.start <= ts),
                        items.partition_point(|i| i.start <= ts),
                        "{n} {ts} {hint}"
                    );
                    assert_eq!(
                        partition_from(items, hint, |i| i.start < ts),
                        items.partition_point(|i| i.start < ts),
                        "{n} {ts} {hint}"
                    );
                }
            }
        }
    }

    /// The fast path reads what serde's visitors read, whatever the events look like and
    /// wherever the read buffer cuts them, and leaves every malformed event to them, so that
    /// errors are the same too.
    #[test]
    fn the_fast_path_reads_as_the_visitors() {
        let shapes = [
            r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 8, "ts": 1712345678000.125, "dur": 3.5, "args": {"External id": 4, "Sequence number": -2, "grid": [64, 1, 1], "block": [ 128 , 1,1 ], "ratio": 0.25, "big": 18446744073709551615, "neg0": -0, "nested": {"a": [true, false, null, "x", 1e3, {}], "b": []}, "s": "text", "n": null, "t": true}}"#,
            r#"{"ph": "s", "id": 17, "pid": 7, "tid": 8, "ts": 1712345678000.130, "cat": "ac2g", "name": "ac2g"}"#,
            r#"{"ph": "f", "id": 17, "pid": 0, "tid": 7, "ts": 1712345678000.140, "cat": "ac2g", "name": "ac2g", "bp": "e"}"#,
            r#"{"ph": "X", "cat": "kernel", "name": "k\"quoted\"", "pid": 0, "tid": 7, "ts": 1712345678000.140, "dur": 1, "args": {"correlation": 17, "device": 0}}"#,
            r#"{"ph": "i", "s": "g", "name": "mark", "pid": "", "tid": "", "ts": 1712345678000}"#,
            r#"{"ph": "B", "name": 12, "pid": 1.5, "tid": 9223372036854775808, "ts": "1712345678001", "args": {"é": "ü"}}"#,
            r#"{"ph": "E", "pid": 1.5, "tid": 9223372036854775808, "ts": 1712345678002, "args": {"x": 1}}"#,
            r#"{"ph": "b", "cat": "async", "name": "req", "id": "0x1", "pid": 1, "tid": 1, "ts": 1712345678003, "scope": "s"}"#,
            r#"{"ph": "e", "cat": "async", "name": "req", "id2": {"local": "0x1"}, "pid": 1, "tid": 1, "ts": 1712345678004}"#,
            r#"{"ph": "C", "name": "mem", "pid": 1, "ts": 1712345678005, "args": {"a": 1, "b": 2.5}, "id": 3}"#,
            r#"{"ph": "X", "name": "bound", "pid": 1, "tid": 2, "ts": 1712345678006, "dur": 1, "bind_id": "0x9", "flow_out": true, "flow_in": false, "cat": null}"#,
            r#"{"ph": "X", "name": "dup", "name": "dup2", "pid": 1, "tid": 2, "ts": 1712345678008, "dur": 0.001, "args": {"k": 1, "k": 2}, "args": {"m": [1,2]}, "other": {"deep": [[[[1]]]], "u": "\u0041"}}"#,
            r#"{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}}"#,
            r#"{"ph": "X", "name": "nulls", "pid": null, "tid": true, "ts": 1712345678009, "dur": null}"#,
            r#"{}"#,
            r#"{"ph": "P", "ts": 1, "pid": 1}"#,
        ];
        let mut text = String::from("{\"traceEvents\": [\n");
        let mut k = 0usize;
        while text.len() < 3 << 20 {
            let shape = shapes[k % shapes.len()];
            text.push_str(&" ".repeat(k % 7));
            text.push_str(shape);
            text.push_str(",\n");
            k += 1;
        }
        text.push_str("{}]}\n");
        let read = |t: &[u8], fast: bool| {
            read_chrome_with(t, ChromeReadOptions::default().fast_events(fast))
                .map_err(|e| e.to_string())
        };
        let fast = read(text.as_bytes(), true);
        assert!(fast.is_ok(), "{:?}", fast.as_ref().err());
        assert!(fast == read(text.as_bytes(), false));
        // Malformed events past the first buffer: the same error, at the same place.
        let at = text[(1 << 20) + 100..]
            .find("{\"ph\": \"X\", \"cat\": \"cpu_op\"")
            .unwrap()
            + (1 << 20)
            + 100;
        for (from, to) in [
            ("\"dur\": 3.5", "\"dur\": 3.5.1"),
            ("\"dur\": 3.5", "\"dur\": true"),
            ("\"dur\": 3.5", "\"dur\": 1e999999"),
            ("\"ratio\": 0.25", "\"ratio\": 1e400"),
            ("\"ratio\": 0.25", "\"ratio\": 01"),
            ("\"s\": \"text\"", "\"s\": \"te\u{1}xt\""),
            ("\"s\": \"text\"", "\"s\": \"te\\qxt\""),
            ("\"ph\": \"X\"", "\"ph\": 1"),
            ("\"ph\": \"X\"", "\"pf\": \"X\""),
            ("\"ts\": 1712345678000.125", "\"ts\": null"),
            ("\"t\": true", "\"t\": tru"),
            ("\"block\": [ 128 , 1,1 ]", "\"block\": [ 128 , 1,1, ]"),
            ("\"External id\": 4,", "\"External id\": 4"),
            ("\"nested\": {", "\"nested\": {,"),
        ] {
            let mut bad = text.clone();
            let i = at + bad[at..].find(from).unwrap();
            bad.replace_range(i..i + from.len(), to);
            let (fast, slow) = (read(bad.as_bytes(), true), read(bad.as_bytes(), false));
            assert!(fast == slow, "{to}: {:?} / {:?}", fast.err(), slow.err());
        }
        let mut bad = text.clone().into_bytes();
        bad[at + 40] = 0xff;
        assert_eq!(read(&bad, true).err(), read(&bad, false).err());
        assert!(read(&bad, true).is_err());
    }

    /// xprof's output names every device plane, also one whose lines are all empty and so not
    /// written: such a process is the plane again (found by the `chrome_json` fuzz target).
    #[test]
    fn a_named_device_without_threads_is_a_plane() {
        let text =
            br#"[{"args": {"name": "/device:GPU:0"}, "name": "process_name", "ph": "M", "pid": 2},
            {"args": {"name": "/host:CPU"}, "name": "process_name", "ph": "M", "pid": 701},
            {"ph": "X", "name": "k", "pid": 701, "tid": 1, "ts": 1, "dur": 2}]"#;
        let import = chrome_to_xspace(&text[..]).unwrap();
        let planes: Vec<_> = import
            .space
            .planes
            .iter()
            .map(|p| (p.name.as_str(), p.id, p.lines.len()))
            .collect();
        assert_eq!(
            planes,
            [
                ("/host:CPU", 0, 1),
                ("/device:GPU:0", 1, 0),
                ("Task Environment", 2, 0)
            ]
        );
    }

    /// An event with a `cat` and an arg `cat` keeps both: its own as the `category` stat, which
    /// `--to chrome` writes as the event's `cat` (found by the `chrome_json` fuzz target).
    #[test]
    fn a_cat_beside_an_arg_cat_is_kept() {
        let text = br#"[{"ph": "X", "name": "k", "cat": "A", "pid": 1, "tid": 1, "ts": 1, "dur": 2,
            "args": {"cat": "B"}}, {"ph": "X", "name": "j", "cat": "C", "pid": 1, "tid": 1, "ts": 5,
            "dur": 1}]"#;
        let import = chrome_to_xspace(&text[..]).unwrap();
        let plane = &import.space.planes[0];
        let stats: Vec<Vec<(String, String)>> = plane.lines[0]
            .events
            .iter()
            .map(|event| {
                event
                    .stats
                    .iter()
                    .map(|stat| {
                        let name = plane.stat_metadata[&stat.metadata_id].name.clone();
                        let value = match &stat.value {
                            Some(profkit_xplane::x_stat::Value::StrValue(v)) => v.clone(),
                            Some(profkit_xplane::x_stat::Value::RefValue(r)) => {
                                plane.stat_metadata[&(*r as i64)].name.clone()
                            }
                            other => format!("{other:?}"),
                        };
                        (name, value)
                    })
                    .collect()
            })
            .collect();
        let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(
            stats,
            [
                vec![pair("cat", "B"), pair(crate::events::CATEGORY_STAT, "A")],
                vec![pair("cat", "C")]
            ]
        );
    }

    /// Flows of different categories on one slice keep each its own: a `flow_cat` per flow
    /// stat, which the writer pairs by position (found by the `chrome_json` fuzz target).
    #[test]
    fn ids_that_are_not_integers_keep_their_shortest_text() {
        let text = br#"[{"ph": "X", "name": "a", "pid": 1, "tid": 1.5, "ts": 1, "dur": 2},
            {"ph": "X", "name": "b", "pid": 1, "tid": 1.8446744073709552e19, "ts": 1, "dur": 2}]"#;
        for fast in [true, false] {
            let import =
                read_chrome_with(&text[..], ChromeReadOptions::default().fast_events(fast))
                    .unwrap();
            let names: Vec<&str> = import.space.planes[0]
                .lines
                .iter()
                .map(|l| l.name.as_str())
                .collect();
            assert!(names.contains(&"1.5"), "{names:?}");
            assert!(names.contains(&"1.8446744073709552e19"), "{names:?}");
        }
    }

    #[test]
    fn flows_of_several_categories_on_one_slice() {
        let text = br#"[{"ph": "X", "name": "task", "pid": 1, "tid": 1, "ts": 10, "dur": 30,
            "bind_id": "0x10", "flow_out": true},
            {"ph": "s", "name": "ac2g", "cat": "ac2g", "id": 7, "pid": 1, "tid": 1, "ts": 12},
            {"ph": "X", "name": "next", "pid": 1, "tid": 1, "ts": 50, "dur": 1},
            {"ph": "f", "name": "ac2g", "cat": "ac2g", "id": 7, "pid": 1, "tid": 1, "ts": 50,
            "bp": "e"},
            {"ph": "f", "name": "flow", "cat": "other", "id": "0x10", "pid": 1, "tid": 1, "ts": 50,
            "bp": "e"}]"#;
        let import = chrome_to_xspace(&text[..]).unwrap();
        let options = crate::trace_viewer::TraceViewerOptions {
            flow_events: true,
            ..Default::default()
        };
        let mut out = Vec::new();
        crate::trace_viewer::write_space(&import.space, &mut out, &options).unwrap();
        let out = String::from_utf8(out).unwrap();
        let flows: Vec<&str> = out.lines().filter(|l| l.contains("\"id\"")).collect();
        let has = |cat: &str, id: &str, ph: &str| {
            flows.iter().any(|l| {
                l.contains(&format!("\"cat\": \"{cat}\", \"id\": \"{id}\""))
                    && l.contains(&format!("\"ph\": \"{ph}\""))
            })
        };
        assert!(has("flow", "0x10", "s"), "{flows:#?}");
        assert!(has("ac2g", "7", "s"), "{flows:#?}");
        assert!(has("ac2g", "7", "f"), "{flows:#?}");
        assert!(has("other", "0x10", "f"), "{flows:#?}");
    }
}

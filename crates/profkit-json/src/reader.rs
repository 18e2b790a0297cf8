//! The streaming parser, a serde [`Deserializer`](serde::Deserializer).
//!
//! It takes any [`Read`], holds one fixed buffer of it at a time (so memory is what the caller
//! keeps, not the text), has a fast path for the unsigned integers that make up most of the text
//! of profiles, and knows where it is at every moment: every error carries the JSON path of the
//! value it is about, its byte offset, line and column. Nothing else about it is special: it accepts exactly the JSON that serde_json
//! accepts (RFC 8259, UTF-8), gives the same numbers for the same text (non-negative integers as
//! `u64`, negative ones as `i64`, others as correctly rounded `f64`, `-0` as `-0.0`), and refuses
//! nesting deeper than serde_json's default limit, so that no input can exhaust the stack.

use std::fmt;
use std::io::{ErrorKind, Read};

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use crate::error::{Error, Location, Result};
use crate::number::{INDEX, INT, IntVisitor};

/// The deepest nesting of arrays and objects read by default, and the most that can be asked for:
/// serde_json's default recursion limit (128, of which a value may use 127 levels), which keeps
/// the recursion of deserialisation well within a thread's stack.
pub const MAX_DEPTH: usize = 127;

/// The longest string (or number) read by default, in bytes. Names in Poplar profiles are
/// short; the limit stops a hostile file from making one allocation of its whole size.
pub const DEFAULT_MAX_STRING_BYTES: usize = 64 << 20;

/// How many bytes of a string are scanned one at a time before the vector search takes over.
const SHORT_STRING: usize = 16;

/// The size of the read buffer.
const BUFFER_BYTES: usize = 128 << 10;

/// The newtype name under which a type asks for an array of non-negative integers up to
/// `u64::MAX`. Other deserializers ignore the name and hand over an ordinary sequence; this one
/// reads the whole array in one loop and hands over, as the bytes of a `[u64]` (native byte
/// order), the largest value, how many values are not zero, then the values. Integers may be
/// written as doubles (`12.0`, `1.2e1`); fractions, negative numbers and values over the limit
/// are refused with the element's path.
pub const U64_ARRAY_TOKEN: &str = "$profkit_json::private::U64Array";

/// As [`U64_ARRAY_TOKEN`], for arrays of indices (integers below 2^32).
pub const U32_ARRAY_TOKEN: &str = "$profkit_json::private::U32Array";

/// The newtype name under which a type asks for a number as it is written: when the value is a
/// number, this reader checks it against the grammar and hands its text to `visit_bytes`
/// (nothing else is handed over as bytes, so a visitor tells it from a string, which comes as
/// a `str`); any other value is read as usual. Other deserializers ignore the name. This keeps
/// microsecond timestamps with fractions exact, which a double cannot.
pub const RAW_NUMBER_TOKEN: &str = "$profkit_json::private::RawNumber";

/// The newtype name under which a type offers an object to the reader's [`RawHook`] (set with
/// [`Reader::set_raw_hook`]) before it is read as usual: when the value is an object and a hook
/// is set, the hook gets the buffered text from the `{` on, and if it reads the object there
/// ([`RawRead::Read`]) the reader moves past it and calls the visitor's `visit_unit`; otherwise
/// (no hook, another value, the hook declines) the visitor's `visit_newtype_struct` gets the
/// reader, as with any other newtype. Other deserializers ignore the name.
pub const RAW_HOOK_TOKEN: &str = "$profkit_json::private::RawHook";

/// What a [`RawHook`] did with the text it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RawRead {
    /// It read the value, which took `len` bytes, `newlines` of them line feeds, the last at
    /// `last_newline` (the reader checks nothing in them: the hook vouches that they are valid
    /// JSON that the usual path would have read without error).
    Read {
        /// How many bytes the value took.
        len: usize,
        /// How many of them are line feeds.
        newlines: u64,
        /// Where the last line feed is (from the start of the value; anything when `newlines`
        /// is 0).
        last_newline: usize,
    },
    /// The value goes on past the end of the text: the reader buffers more and calls again.
    More,
    /// It leaves the value to the usual path (which then reports any error, with its location).
    Declined,
}

/// A reader of whole values straight from the read buffer, for a caller with a faster path for
/// the values of one array than serde's visitors (see [`RAW_HOOK_TOKEN`]).
pub trait RawHook {
    /// Reads the value at the start of `text` (an object: `text` starts with `{`), which holds
    /// everything buffered; `complete` says that no more can be buffered (the input ends, or the
    /// buffer is full), so that [`RawRead::More`] is taken as [`RawRead::Declined`].
    fn read(&mut self, text: &[u8], complete: bool) -> RawRead;
}

/// Settings of the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// The deepest nesting of arrays and objects accepted (at most, and by default,
    /// [`MAX_DEPTH`]).
    pub max_depth: usize,
    /// The longest string or number accepted, in bytes.
    pub max_string_bytes: usize,
    /// Whether a top-level array may end without its `]` (the end of the input closes it, after
    /// an element or a trailing comma), as the Trace Event Format allows so that the file of a
    /// writer that crashed still loads.
    pub open_top_array: bool,
    /// Whether a string with a lone surrogate escape (`"\udc00"`) or bytes that are not UTF-8
    /// is kept, with U+FFFD in place of each fault, rather than refused; each such string is
    /// counted, with the place of the first ones ([`Reader::replaced_strings`]), so that the
    /// caller can say so. One damaged name then does not cost a whole file.
    pub replace_invalid: bool,
}

/// How many places of replaced strings a reader keeps (it counts them all).
pub const REPLACED_PLACES_KEPT: usize = 16;

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_depth: MAX_DEPTH,
            max_string_bytes: DEFAULT_MAX_STRING_BYTES,
            open_top_array: false,
            replace_invalid: false,
        }
    }
}

impl ReadOptions {
    /// The options with `max_depth` (capped at [`MAX_DEPTH`]).
    pub fn max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth.min(MAX_DEPTH);
        self
    }

    /// The options with `max_string_bytes`.
    pub fn max_string_bytes(mut self, max_string_bytes: usize) -> Self {
        self.max_string_bytes = max_string_bytes;
        self
    }

    /// The options with `open_top_array`.
    pub fn open_top_array(mut self, open: bool) -> Self {
        self.open_top_array = open;
        self
    }

    /// The options with `replace_invalid`.
    pub fn replace_invalid(mut self, replace: bool) -> Self {
        self.replace_invalid = replace;
        self
    }
}

/// Reads one value of type `T` from JSON text, streaming: only a fixed buffer of the text is
/// held at a time.
pub fn from_reader<T: DeserializeOwned, R: Read>(reader: R) -> Result<T> {
    from_reader_with(reader, ReadOptions::default())
}

/// [`from_reader`] with explicit settings.
pub fn from_reader_with<T: DeserializeOwned, R: Read>(
    reader: R,
    options: ReadOptions,
) -> Result<T> {
    Reader::new(reader, options).read_document()
}

/// Reads one value of type `T` from JSON bytes.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    Reader::with_buffer(
        bytes,
        ReadOptions::default(),
        bytes.len().clamp(1, BUFFER_BYTES),
    )
    .read_document()
}

/// Reads one value of type `T` from JSON text.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T> {
    from_slice(text.as_bytes())
}

/// What kind of error a [`DeError`] is, before it becomes an [`Error`].
#[derive(Debug)]
enum Kind {
    Syntax,
    Eof,
    Schema,
    Limit { what: String, limit: u64 },
    Io(std::io::Error),
}

#[derive(Debug)]
struct Inner {
    kind: Kind,
    reason: String,
    location: Option<Location>,
}

/// The error type of the deserializer (what visitors see): boxed so that results stay small on
/// the hot path. [`Reader::read_document`] turns it into an [`Error`]; [`DeError::into_error`]
/// does so for errors taken from the deserializer directly.
#[derive(Debug)]
pub struct DeError(Box<Inner>);

impl DeError {
    fn new(kind: Kind, reason: impl Into<String>, location: Option<Location>) -> Self {
        DeError(Box::new(Inner {
            kind,
            reason: reason.into(),
            location,
        }))
    }

    /// The error, with its location.
    pub fn into_error(self) -> Error {
        let Inner {
            kind,
            reason,
            location,
        } = *self.0;
        let location = location.unwrap_or_default();
        match kind {
            Kind::Syntax => Error::Syntax { location, reason },
            Kind::Eof => Error::Truncated { location },
            Kind::Schema => Error::Schema { location, reason },
            Kind::Limit { what, limit } => Error::Limit {
                location,
                what,
                limit,
            },
            Kind::Io(e) => Error::Io(e),
        }
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.location {
            Some(location) => write!(f, "{location}: {}", self.0.reason),
            None => f.write_str(&self.0.reason),
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError::new(Kind::Schema, msg.to_string(), None)
    }
}

/// One level of nesting: an object (with the key being read) or an array (with the index).
#[derive(Debug, Default)]
struct Frame {
    is_array: bool,
    /// Whether a key or index is current (false before the first and after the last).
    active: bool,
    /// Where the current key's bytes are (checked for UTF-8 when read): a key is only ever
    /// needed for the path of an error, so it stays in the read buffer and is copied out (into
    /// `key`) only when the buffer is about to be refilled.
    key_at: KeyAt,
    key: Vec<u8>,
    index: usize,
    /// Where the current key or element starts.
    item: Mark,
}

/// Where the key of a [`Frame`] is.
#[derive(Clone, Copy, Debug, Default)]
enum KeyAt {
    /// `buf[.0...1]`.
    Buffer(usize, usize),
    /// The frame's own `key`.
    #[default]
    Owned,
}

/// Where a value starts.
#[derive(Clone, Copy, Debug, Default)]
struct Mark {
    offset: u64,
    line: u64,
    line_start: u64,
}

/// The integer array being read.
struct Ints {
    nums: Vec<u64>,
    max: u64,
    largest: u64,
    nonzero: u64,
}

impl Ints {
    #[inline(always)]
    fn push(&mut self, value: u64) {
        self.nums.push(value);
        self.largest = self.largest.max(value);
        self.nonzero += u64::from(value != 0);
    }

    fn count(&self) -> usize {
        self.nums.len().saturating_sub(2)
    }
}

/// How a run of plain integers ended.
enum Run {
    /// At the closing bracket, consumed.
    Closed,
    /// After a value, before something other than a comma or the bracket (or the buffer's end).
    AfterValue,
    /// After a comma and spaces, before something other than a digit (or the buffer's end).
    AfterComma,
    /// At a value that is not a plain integer in range, or is cut by the buffer's end.
    AtValue,
}

/// A string just read: in the buffer (no escapes) or in the scratch space.
#[derive(Clone, Copy)]
enum Span {
    Buffer(usize, usize),
    Scratch,
}

/// The streaming JSON deserializer. `&mut Reader` is a serde `Deserializer`.
pub struct Reader<R> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Offset of `buf[0]` in the input.
    base: u64,
    eof: bool,
    line: u64,
    line_start: u64,
    scratch: Vec<u8>,
    /// The integer array being read: its largest value, how many are not zero, then the values.
    nums: Vec<u64>,
    /// `frames[..depth]` are live; the rest keep their allocations for reuse.
    frames: Vec<Frame>,
    depth: usize,
    max_depth: usize,
    max_string: usize,
    open_top_array: bool,
    hook: Option<Box<dyn RawHook>>,
    replace_invalid: bool,
    /// Whether the string being read already had a lone surrogate replaced.
    scratch_replaced: bool,
    /// Strings kept with replacement characters, and where the first of them are.
    replaced: u64,
    replaced_at: Vec<Location>,
}

/// How many bytes at the start of `bytes` a number takes, by the rule [`Reader::scan_number`]
/// gathers by: digits, `.`, `e`/`E`, a sign at the start or after the exponent's `e`.
fn number_run(bytes: &[u8]) -> usize {
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let sign_here = match i.checked_sub(1).and_then(|j| bytes.get(j)) {
            None => b == b'-',
            Some(b'e' | b'E') => true,
            Some(_) => false,
        };
        if !(matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E')
            || (matches!(b, b'-' | b'+') && sign_here))
        {
            break;
        }
        i += 1;
    }
    i
}

/// Checks a number against the grammar: whether it is negative, where its integer part ends,
/// and whether it has a fraction or an exponent; `None` when it is not a number.
fn check_number(s: &[u8]) -> Option<(bool, usize, bool)> {
    let digits_from = |mut i: usize| {
        while s.get(i).copied().is_some_and(is_digit) {
            i += 1;
        }
        i
    };
    let negative = s.first() == Some(&b'-');
    let mut i = usize::from(negative);
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_from(i + 1),
        _ => return None,
    }
    let int_end = i;
    let mut is_float = false;
    if s.get(i) == Some(&b'.') {
        is_float = true;
        let after = digits_from(i + 1);
        if after == i + 1 {
            return None;
        }
        i = after;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        is_float = true;
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let after = digits_from(i);
        if after == i {
            return None;
        }
        i = after;
    }
    (i == s.len()).then_some((negative, int_end, is_float))
}

/// A JSON number's value as the reader gives it to a visitor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// A non-negative integer up to `u64::MAX`.
    U64(u64),
    /// A negative integer down to `i64::MIN`.
    I64(i64),
    /// Any other number (fractions, exponents, `-0`, integers out of range), correctly rounded.
    F64(f64),
}

/// The value of a number checked by [`check_number`].
fn number_value(s: &[u8], negative: bool, int_end: usize, is_float: bool) -> Option<Number> {
    if !is_float {
        let mut magnitude = Some(0u64);
        for &b in s.get(usize::from(negative)..int_end).unwrap_or_default() {
            magnitude = magnitude
                .and_then(|m| m.checked_mul(10))
                .and_then(|m| m.checked_add(u64::from(b - b'0')));
        }
        if let Some(m) = magnitude {
            if !negative {
                return Some(Number::U64(m));
            }
            // As serde_json: -0 is the double -0.0, and what fits in i64 is an i64.
            let neg = (m as i64).wrapping_neg();
            if neg < 0 {
                return Some(Number::I64(neg));
            }
        }
    }
    let text = std::str::from_utf8(s).ok()?;
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Some(Number::F64(v)),
        _ => None,
    }
}

/// The number at the start of `bytes`, as this reader reads it: how many bytes it takes and its
/// value. `None` when `bytes` does not start with a number this reader accepts (by the grammar,
/// and finite), or when the number reaches the end of `bytes` (it may go on past them). For
/// callers with a path of their own over the text (see [`RawHook`]) that must accept exactly what
/// this reader accepts.
pub fn number_at(bytes: &[u8]) -> Option<(usize, Number)> {
    let len = number_run(bytes);
    if len >= bytes.len() {
        return None;
    }
    let s = bytes.get(..len)?;
    let (negative, int_end, is_float) = check_number(s)?;
    Some((len, number_value(s, negative, int_end, is_float)?))
}

/// How many bytes the number at the start of `bytes` takes when it is one by the grammar and
/// ends before the end of `bytes` (the text [`RAW_NUMBER_TOKEN`] hands over, not converted).
pub fn number_text_len(bytes: &[u8]) -> Option<usize> {
    let len = number_run(bytes);
    if len >= bytes.len() {
        return None;
    }
    check_number(bytes.get(..len)?).map(|_| len)
}

fn is_digit(b: u8) -> bool {
    b.is_ascii_digit()
}

impl<R: Read> Reader<R> {
    /// A reader of `src`.
    pub fn new(src: R, options: ReadOptions) -> Self {
        Self::with_buffer(src, options, BUFFER_BYTES)
    }

    /// A reader of `src` with a read buffer of `buffer` bytes.
    pub fn with_buffer(src: R, options: ReadOptions, buffer: usize) -> Self {
        Reader {
            src,
            buf: vec![0; buffer.max(1)],
            pos: 0,
            end: 0,
            base: 0,
            eof: false,
            line: 1,
            line_start: 0,
            scratch: Vec::new(),
            nums: Vec::new(),
            frames: Vec::new(),
            depth: 0,
            max_depth: options.max_depth.min(MAX_DEPTH),
            max_string: options.max_string_bytes,
            open_top_array: options.open_top_array,
            hook: None,
            replace_invalid: options.replace_invalid,
            scratch_replaced: false,
            replaced: 0,
            replaced_at: Vec::new(),
        }
    }

    /// Sets the hook that values asked for under [`RAW_HOOK_TOKEN`] are offered to.
    pub fn set_raw_hook(&mut self, hook: Box<dyn RawHook>) {
        self.hook = Some(hook);
    }

    /// Reads the one value of the input, then checks that only whitespace follows.
    pub fn read_document<T: DeserializeOwned>(&mut self) -> Result<T> {
        self.read_document_seed(std::marker::PhantomData::<T>)
    }

    /// As [`read_document`](Self::read_document), with a seed (a visitor that keeps state, say
    /// one that takes the elements of a long array one at a time).
    pub fn read_document_seed<'de, S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value> {
        let start = self.mark();
        let value = seed
            .deserialize(&mut *self)
            .map_err(|e| self.locate(e, start).into_error())?;
        match self.skip_ws().map_err(DeError::into_error)? {
            None => Ok(value),
            Some(_) => Err(self
                .syntax("unexpected text after the JSON value")
                .into_error()),
        }
    }

    /// How many bytes of the input have been consumed.
    pub fn byte_offset(&self) -> u64 {
        self.offset()
    }

    /// With [`ReadOptions::replace_invalid`]: how many strings were kept with U+FFFD in place of
    /// a lone surrogate or bytes that are not UTF-8, and where the first
    /// [`REPLACED_PLACES_KEPT`] of them are.
    pub fn replaced_strings(&self) -> (u64, &[Location]) {
        (self.replaced, &self.replaced_at)
    }

    /// Counts a string kept with replacements (once per string: `fresh` on its first fault).
    fn note_replaced(&mut self) {
        self.replaced += 1;
        if self.replaced_at.len() < REPLACED_PLACES_KEPT {
            let here = self.here();
            self.replaced_at.push(here);
        }
    }

    // ----- positions and errors -----

    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn mark(&self) -> Mark {
        Mark {
            offset: self.offset(),
            line: self.line,
            line_start: self.line_start,
        }
    }

    /// The path of the current value. A path deeper than 24 levels is shortened in the middle.
    fn path(&self) -> String {
        const HEAD: usize = 12;
        const TAIL: usize = 8;
        let live: Vec<&Frame> = self
            .frames
            .iter()
            .take(self.depth)
            .filter(|f| f.active)
            .collect();
        let mut path = String::new();
        for (i, frame) in live.iter().enumerate() {
            if live.len() > HEAD + TAIL + 4 && i >= HEAD && i < live.len() - TAIL {
                if i == HEAD {
                    path.push_str(&format!("[...{} levels...]", live.len() - HEAD - TAIL));
                }
                continue;
            }
            if frame.is_array {
                crate::path::push_index(&mut path, frame.index);
            } else {
                let bytes = self.key_bytes(frame);
                crate::path::push_key(&mut path, &String::from_utf8_lossy(bytes));
            }
        }
        path
    }

    /// The bytes of a frame's current key.
    fn key_bytes<'a>(&'a self, frame: &'a Frame) -> &'a [u8] {
        match frame.key_at {
            KeyAt::Buffer(a, z) => self.buf.get(a..z).unwrap_or_default(),
            KeyAt::Owned => &frame.key,
        }
    }

    fn location_at(&self, mark: Mark) -> Location {
        Location {
            path: self.path(),
            offset: mark.offset,
            line: mark.line,
            column: mark.offset.saturating_sub(mark.line_start) + 1,
        }
    }

    fn here(&self) -> Location {
        self.location_at(self.mark())
    }

    /// Gives an error that does not know where it is yet (one a visitor made) the current path
    /// and the position `start` of the value it is about.
    fn locate(&self, mut e: DeError, start: Mark) -> DeError {
        if e.0.location.is_none() {
            e.0.location = Some(self.location_at(start));
        }
        e
    }

    /// Locates an error that the visitor of the current array or object made while a key or
    /// element was current (a duplicate key, say) at that key or element.
    fn locate_item(&self, e: DeError) -> DeError {
        match self.depth.checked_sub(1).and_then(|i| self.frames.get(i)) {
            Some(frame) if frame.active => self.locate(e, frame.item),
            _ => e,
        }
    }

    fn syntax(&self, reason: impl Into<String>) -> DeError {
        DeError::new(Kind::Syntax, reason, Some(self.here()))
    }

    fn eof(&self) -> DeError {
        DeError::new(Kind::Eof, "the input ends here", Some(self.here()))
    }

    fn limit(&self, what: impl Into<String>, limit: usize) -> DeError {
        let what = what.into();
        DeError::new(
            Kind::Limit {
                what: what.clone(),
                limit: limit as u64,
            },
            format!("{what} is over the limit of {limit}"),
            Some(self.here()),
        )
    }

    // ----- the buffer -----

    /// Makes at least one byte available, unless the input has ended; returns whether one is.
    #[cold]
    fn fill(&mut self) -> Result<bool, DeError> {
        if self.pos < self.end {
            return Ok(true);
        }
        if self.eof {
            return Ok(false);
        }
        self.own_keys();
        self.base += self.end as u64;
        self.pos = 0;
        self.end = 0;
        loop {
            match self.src.read(&mut self.buf) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end = n.min(self.buf.len());
                    return Ok(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let location = self.here();
                    let reason = e.to_string();
                    return Err(DeError::new(Kind::Io(e), reason, Some(location)));
                }
            }
        }
    }

    /// Copies the keys of the path still in the buffer out of it, before it is overwritten.
    fn own_keys(&mut self) {
        let Reader {
            buf, frames, depth, ..
        } = self;
        for frame in frames.iter_mut().take(*depth) {
            if let KeyAt::Buffer(a, z) = frame.key_at {
                frame.key.clear();
                frame
                    .key
                    .extend_from_slice(buf.get(a..z).unwrap_or_default());
                frame.key_at = KeyAt::Owned;
            }
        }
    }

    /// Moves the unread bytes to the start of the buffer and reads until it is full or the input
    /// ends.
    #[cold]
    fn compact_and_fill(&mut self) -> Result<(), DeError> {
        self.own_keys();
        self.buf.copy_within(self.pos..self.end, 0);
        self.base += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        while !self.eof && self.end < self.buf.len() {
            let Some(room) = self.buf.get_mut(self.end..) else {
                break;
            };
            match self.src.read(room) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end = (self.end + n).min(self.buf.len()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let location = self.here();
                    let reason = e.to_string();
                    return Err(DeError::new(Kind::Io(e), reason, Some(location)));
                }
            }
        }
        Ok(())
    }

    /// Offers the object at the current position to the hook; returns whether it read it (and
    /// the reader moved past it).
    fn offer_to_hook(&mut self) -> Result<bool, DeError> {
        let Some(mut hook) = self.hook.take() else {
            return Ok(false);
        };
        let result = self.offer(hook.as_mut());
        self.hook = Some(hook);
        result
    }

    fn offer(&mut self, hook: &mut dyn RawHook) -> Result<bool, DeError> {
        if self.skip_ws()? != Some(b'{') {
            return Ok(false);
        }
        loop {
            let text = self.buf.get(self.pos..self.end).unwrap_or_default();
            let complete = self.eof || (self.pos == 0 && self.end == self.buf.len());
            match hook.read(text, complete) {
                RawRead::Read {
                    len,
                    newlines,
                    last_newline,
                } => {
                    if newlines > 0 {
                        self.line += newlines;
                        self.line_start = self.offset() + last_newline as u64 + 1;
                    }
                    self.pos += len.min(text.len());
                    return Ok(true);
                }
                RawRead::More if !complete => self.compact_and_fill()?,
                RawRead::More | RawRead::Declined => return Ok(false),
            }
        }
    }

    #[inline]
    fn peek(&mut self) -> Result<Option<u8>, DeError> {
        if self.pos >= self.end && !self.fill()? {
            return Ok(None);
        }
        Ok(self.buf.get(self.pos).copied())
    }

    /// Skips whitespace and returns the next byte without consuming it.
    #[inline]
    fn skip_ws(&mut self) -> Result<Option<u8>, DeError> {
        loop {
            while let Some(&b) = self.buf.get(self.pos).filter(|_| self.pos < self.end) {
                match b {
                    b' ' | b'\t' | b'\r' => self.pos += 1,
                    b'\n' => {
                        self.pos += 1;
                        self.line += 1;
                        self.line_start = self.offset();
                    }
                    _ => return Ok(Some(b)),
                }
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    // ----- nesting -----

    fn enter(&mut self, is_array: bool) -> Result<(), DeError> {
        if self.depth >= self.max_depth {
            return Err(self.limit(format!("nesting depth {}", self.depth + 1), self.max_depth));
        }
        if self.frames.len() <= self.depth {
            self.frames.push(Frame::default());
        }
        if let Some(frame) = self.frames.get_mut(self.depth) {
            frame.is_array = is_array;
            frame.active = false;
            frame.index = 0;
            frame.key_at = KeyAt::Owned;
        }
        self.depth += 1;
        Ok(())
    }

    /// Whether the end of the input may close the array being read: the top-level one, when
    /// [`ReadOptions::open_top_array`] is set.
    fn open_end(&self) -> bool {
        self.open_top_array && self.depth == 1 && self.frames.first().is_some_and(|f| f.is_array)
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn top(&mut self) -> Option<&mut Frame> {
        self.depth
            .checked_sub(1)
            .and_then(|i| self.frames.get_mut(i))
    }

    // ----- scalars -----

    fn literal(&mut self, word: &'static [u8]) -> Result<(), DeError> {
        for &expected in word {
            match self.peek()? {
                Some(b) if b == expected => self.pos += 1,
                Some(_) => {
                    return Err(
                        self.syntax(format!("expected `{}`", String::from_utf8_lossy(word)))
                    );
                }
                None => return Err(self.eof()),
            }
        }
        Ok(())
    }

    /// Reads a string whose opening quote was consumed.
    fn string(&mut self) -> Result<Span, DeError> {
        self.scratch_replaced = false;
        let start = self.pos;
        let rest = self.buf.get(start..self.end).unwrap_or_default();
        // Keys and most values are short: a byte loop over the first bytes finds their end
        // sooner than setting up a vector search.
        for (k, &b) in rest.iter().take(SHORT_STRING).enumerate() {
            if b == b'"' {
                if k > self.max_string {
                    return Err(self.limit("a string", self.max_string));
                }
                self.pos = start + k + 1;
                return Ok(Span::Buffer(start, start + k));
            }
            if b == b'\\' || b < 0x20 {
                break;
            }
        }
        // Longer strings that end in the buffer without an escape: find the quote (or a
        // backslash) with memchr, then check the run for control characters in one branch-free
        // pass.
        if let Some(stop) = memchr::memchr2(b'"', b'\\', rest) {
            let run = rest.get(..stop).unwrap_or_default();
            let control = run.iter().fold(false, |acc, &b| acc | (b < 0x20));
            if !control && rest.get(stop) == Some(&b'"') {
                if stop > self.max_string {
                    return Err(self.limit("a string", self.max_string));
                }
                self.pos = start + stop + 1;
                return Ok(Span::Buffer(start, start + stop));
            }
        }
        let mut i = start;
        while let Some(&b) = self.buf.get(i).filter(|_| i < self.end) {
            if b == b'"' {
                if i - start > self.max_string {
                    return Err(self.limit("a string", self.max_string));
                }
                self.pos = i + 1;
                return Ok(Span::Buffer(start, i));
            }
            if b == b'\\' || b < 0x20 {
                break;
            }
            i += 1;
        }
        self.scratch.clear();
        self.scratch
            .extend_from_slice(self.buf.get(start..i).unwrap_or_default());
        self.pos = i;
        loop {
            if self.scratch.len() > self.max_string {
                return Err(self.limit("a string", self.max_string));
            }
            match self.peek()? {
                None => return Err(self.eof()),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Span::Scratch);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape()?;
                }
                Some(0..=0x1f) => return Err(self.syntax("control character in a string")),
                Some(_) => {
                    let run = self.pos;
                    let mut j = run;
                    while let Some(&c) = self.buf.get(j).filter(|_| j < self.end) {
                        if c == b'"' || c == b'\\' || c < 0x20 {
                            break;
                        }
                        j += 1;
                    }
                    self.scratch
                        .extend_from_slice(self.buf.get(run..j).unwrap_or_default());
                    self.pos = j;
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, DeError> {
        let mut value = 0u32;
        for _ in 0..4 {
            let digit = match self.peek()? {
                None => return Err(self.eof()),
                Some(b) => (b as char).to_digit(16),
            };
            match digit {
                Some(d) => {
                    value = value * 16 + d;
                    self.pos += 1;
                }
                None => return Err(self.syntax("invalid \\u escape")),
            }
        }
        Ok(value)
    }

    /// Reads one escape (after its backslash) into the scratch space.
    fn escape(&mut self) -> Result<(), DeError> {
        let Some(b) = self.peek()? else {
            return Err(self.eof());
        };
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let mut first = self.hex4()?;
                loop {
                    let code = match first {
                        0xD800..=0xDBFF => {
                            match self.peek()? {
                                Some(b'\\') => self.pos += 1,
                                Some(_) => {
                                    return self.lone("lone leading surrogate in a \\u escape");
                                }
                                None => return Err(self.eof()),
                            }
                            match self.peek()? {
                                Some(b'u') => self.pos += 1,
                                Some(_) => {
                                    // The backslash starts an escape of its own.
                                    self.lone("lone leading surrogate in a \\u escape")?;
                                    return self.escape();
                                }
                                None => return Err(self.eof()),
                            }
                            let second = self.hex4()?;
                            if !(0xDC00..=0xDFFF).contains(&second) {
                                self.lone("lone leading surrogate in a \\u escape")?;
                                first = second;
                                continue;
                            }
                            0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                        }
                        0xDC00..=0xDFFF => {
                            return self.lone("lone trailing surrogate in a \\u escape");
                        }
                        other => other,
                    };
                    break match char::from_u32(code) {
                        Some(c) => c,
                        None => return Err(self.syntax("invalid \\u escape")),
                    };
                }
            }
            _ => return Err(self.syntax("invalid escape")),
        };
        let mut utf8 = [0u8; 4];
        self.scratch
            .extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        Ok(())
    }

    /// A lone surrogate: refused, or with [`ReadOptions::replace_invalid`] written as U+FFFD
    /// (the string counted once).
    fn lone(&mut self, reason: &str) -> Result<(), DeError> {
        if !self.replace_invalid {
            return Err(self.syntax(reason));
        }
        if !self.scratch_replaced {
            self.scratch_replaced = true;
            self.note_replaced();
        }
        self.scratch.extend_from_slice("\u{fffd}".as_bytes());
        Ok(())
    }

    fn span_bytes(&self, span: Span) -> &[u8] {
        match span {
            Span::Buffer(a, b) => self.buf.get(a..b).unwrap_or_default(),
            Span::Scratch => &self.scratch,
        }
    }

    /// Reads a number. Plain unsigned integers inside the buffer (nearly every number in a
    /// profile) take the fast path; everything else is gathered and checked against the grammar.
    #[inline]
    fn number<'de, V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, DeError> {
        let bytes = self.buf.get(self.pos..self.end).unwrap_or_default();
        let mut n = 0usize;
        let mut value = 0u64;
        while n < 20 {
            match bytes.get(n) {
                Some(&b) if is_digit(b) => {
                    value = value.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
                    n += 1;
                }
                _ => break,
            }
        }
        if (1..=19).contains(&n)
            && (n == 1 || bytes.first() != Some(&b'0'))
            && bytes
                .get(n)
                .is_some_and(|&b| !matches!(b, b'.' | b'e' | b'E' | b'0'..=b'9'))
        {
            self.pos += n;
            return visitor.visit_u64(value);
        }
        self.number_slow(visitor)
    }

    fn number_slow<'de, V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, DeError> {
        // A number that ends inside the buffer is checked where it lies; one that reaches the
        // buffer's end is gathered into the scratch space.
        let at = self.pos;
        let rest = self.buf.get(at..self.end).unwrap_or_default();
        let len = number_run(rest);
        let in_place = if len < rest.len() && len < self.max_string {
            rest.get(..len).and_then(check_number)
        } else {
            None
        };
        let (negative, int_end, is_float) = match in_place {
            Some(found) => {
                self.pos += len;
                found
            }
            None => self.scan_number()?,
        };
        let s = match in_place {
            Some(_) => self.buf.get(at..at + len).unwrap_or_default(),
            None => self.scratch.as_slice(),
        };
        match number_value(s, negative, int_end, is_float) {
            Some(Number::U64(v)) => visitor.visit_u64(v),
            Some(Number::I64(v)) => visitor.visit_i64(v),
            Some(Number::F64(v)) => visitor.visit_f64(v),
            None => Err(self.syntax("number out of range")),
        }
    }

    /// A number as written (see [`RAW_NUMBER_TOKEN`]), or any other value as usual.
    fn raw_number<'de, V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, DeError> {
        match self.skip_ws()? {
            Some(b'0'..=b'9' | b'-') => {
                let start = self.mark();
                // A number that ends inside the buffer (nearly all) is checked and handed over
                // where it lies, without gathering it byte by byte.
                let rest = self.buf.get(self.pos..self.end).unwrap_or_default();
                let len = number_run(rest);
                if len < rest.len() && len < self.max_string {
                    if let Some(text) = rest.get(..len).filter(|s| check_number(s).is_some()) {
                        let result = visitor.visit_bytes(text);
                        self.pos += len;
                        return result.map_err(|e| self.locate(e, start));
                    }
                }
                self.scan_number()?;
                visitor
                    .visit_bytes(&self.scratch)
                    .map_err(|e| self.locate(e, start))
            }
            _ => de::Deserializer::deserialize_any(self, visitor),
        }
    }

    /// Gathers a number into the scratch space and checks it against the grammar: whether it is
    /// negative, where its integer part ends, and whether it has a fraction or an exponent.
    fn scan_number(&mut self) -> Result<(bool, usize, bool), DeError> {
        self.scratch.clear();
        let mut at_end = true;
        while let Some(b) = self.peek()? {
            // A sign belongs to the number only at its start or after the exponent's `e`, so
            // that where the number ends does not depend on where the buffer ends.
            let sign_here = match self.scratch.last() {
                None => b == b'-',
                Some(b'e' | b'E') => true,
                Some(_) => false,
            };
            if !(matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E')
                || (matches!(b, b'-' | b'+') && sign_here))
            {
                at_end = false;
                break;
            }
            if self.scratch.len() >= self.max_string {
                return Err(self.limit("a number", self.max_string));
            }
            self.scratch.push(b);
            self.pos += 1;
        }
        // A number the input cuts short (`12.`, `1e`, `-`) is a truncation, not a bad number.
        let invalid = |de: &Self| {
            if at_end {
                de.eof()
            } else {
                de.syntax("invalid number")
            }
        };
        check_number(&self.scratch).ok_or_else(|| invalid(self))
    }

    /// Reads an array of integers up to `max` (the opening bracket is next) into `self.nums`.
    fn int_array(&mut self, max: u64, what: &'static str) -> Result<(), DeError> {
        enum At {
            Open,
            Comma,
            Value,
        }
        let mut ints = Ints {
            nums: std::mem::take(&mut self.nums),
            max,
            largest: 0,
            nonzero: 0,
        };
        ints.nums.clear();
        ints.nums.extend_from_slice(&[0, 0]);
        self.enter(true)?;
        self.pos += 1;
        let mut at = At::Open;
        loop {
            let Some(b) = self.skip_ws()? else {
                self.point_at(ints.count().saturating_sub(1), ints.count() > 0);
                return Err(self.eof());
            };
            match at {
                At::Open | At::Comma => {
                    if b == b']' {
                        if matches!(at, At::Comma) {
                            self.point_at(ints.count().saturating_sub(1), true);
                            return Err(self.syntax("trailing comma"));
                        }
                        self.pos += 1;
                        break;
                    }
                    match self.int_run(&mut ints) {
                        Run::Closed => break,
                        Run::AfterValue => at = At::Value,
                        Run::AfterComma => at = At::Comma,
                        Run::AtValue => {
                            self.point_at(ints.count(), true);
                            let value = de::Deserializer::deserialize_any(
                                &mut *self,
                                IntVisitor { max, what },
                            )?;
                            ints.push(value);
                            at = At::Value;
                        }
                    }
                }
                At::Value => match b {
                    b']' => {
                        self.pos += 1;
                        break;
                    }
                    b',' => {
                        self.pos += 1;
                        at = At::Comma;
                    }
                    _ => {
                        self.point_at(ints.count().saturating_sub(1), true);
                        return Err(self.syntax("expected `,` or `]`"));
                    }
                },
            }
        }
        if let [largest, nonzero, ..] = ints.nums.as_mut_slice() {
            *largest = ints.largest;
            *nonzero = ints.nonzero;
        }
        self.nums = ints.nums;
        self.leave();
        Ok(())
    }

    /// Makes the innermost array's current index `index` (for the path of an error).
    fn point_at(&mut self, index: usize, active: bool) {
        let here = self.mark();
        if let Some(frame) = self.top() {
            frame.index = index;
            frame.active = active;
            frame.item = here;
        }
    }

    /// Reads the run of plain integers at the current position (a value starts there) for as long
    /// as each is followed, inside the buffer, by a comma (and spaces) or the closing bracket.
    #[inline]
    fn int_run(&mut self, ints: &mut Ints) -> Run {
        let buf = self.buf.get(..self.end).unwrap_or_default();
        let mut p = self.pos;
        loop {
            let mut n = 0usize;
            let mut value = 0u64;
            while n < 20 {
                match buf.get(p + n) {
                    Some(&b) if is_digit(b) => {
                        value = value.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
                        n += 1;
                    }
                    _ => break,
                }
            }
            let next = buf.get(p + n).copied();
            let plain = (1..=19).contains(&n)
                && (n == 1 || buf.get(p) != Some(&b'0'))
                && next.is_some_and(|b| !matches!(b, b'.' | b'e' | b'E' | b'0'..=b'9'))
                && value <= ints.max;
            if !plain {
                self.pos = p;
                return Run::AtValue;
            }
            ints.push(value);
            p += n;
            match next {
                Some(b',') => {
                    p += 1;
                    while buf.get(p) == Some(&b' ') {
                        p += 1;
                    }
                    if !buf.get(p).copied().is_some_and(is_digit) {
                        self.pos = p;
                        return Run::AfterComma;
                    }
                }
                Some(b']') => {
                    self.pos = p + 1;
                    return Run::Closed;
                }
                _ => {
                    self.pos = p;
                    return Run::AfterValue;
                }
            }
        }
    }

    // ----- containers -----

    fn array<'de, V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, DeError> {
        self.enter(true)?;
        self.pos += 1;
        let value = visitor
            .visit_seq(Seq { de: self, count: 0 })
            .map_err(|e| self.locate_item(e))?;
        match self.skip_ws()? {
            Some(b']') => self.pos += 1,
            Some(_) => return Err(self.syntax("expected `,` or `]`")),
            None if self.open_end() => {}
            None => return Err(self.eof()),
        }
        self.leave();
        Ok(value)
    }

    fn object<'de, V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, DeError> {
        self.enter(false)?;
        self.pos += 1;
        let value = visitor
            .visit_map(Map {
                de: self,
                first: true,
            })
            .map_err(|e| self.locate_item(e))?;
        match self.skip_ws()? {
            Some(b'}') => self.pos += 1,
            Some(_) => return Err(self.syntax("expected `,` or `}`")),
            None => return Err(self.eof()),
        }
        self.leave();
        Ok(value)
    }
}

impl<'de, R: Read> de::Deserializer<'de> for &mut Reader<R> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let Some(b) = self.skip_ws()? else {
            return Err(self.eof());
        };
        let start = self.mark();
        let result = match b {
            b'0'..=b'9' | b'-' => self.number(visitor),
            b'[' => self.array(visitor),
            b'{' => self.object(visitor),
            b'"' => {
                self.pos += 1;
                let span = self.string()?;
                match std::str::from_utf8(self.span_bytes(span)) {
                    Ok(s) => visitor.visit_str(s),
                    Err(_) if self.replace_invalid => {
                        let text = String::from_utf8_lossy(self.span_bytes(span)).into_owned();
                        if !self.scratch_replaced {
                            self.note_replaced();
                        }
                        visitor.visit_string(text)
                    }
                    Err(_) => Err(self.syntax("invalid UTF-8 in a string")),
                }
            }
            b't' => self
                .literal(b"true")
                .and_then(|()| visitor.visit_bool(true)),
            b'f' => self
                .literal(b"false")
                .and_then(|()| visitor.visit_bool(false)),
            b'n' => self.literal(b"null").and_then(|()| visitor.visit_unit()),
            _ => return Err(self.syntax("expected a JSON value")),
        };
        result.map_err(|e| self.locate(e, start))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.skip_ws()? == Some(b'n') {
            let start = self.mark();
            self.literal(b"null")?;
            visitor.visit_none().map_err(|e| self.locate(e, start))
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let (max, what) = match name {
            U64_ARRAY_TOKEN => (u64::MAX, INT),
            U32_ARRAY_TOKEN => (u64::from(u32::MAX), INDEX),
            RAW_NUMBER_TOKEN => return self.raw_number(visitor),
            RAW_HOOK_TOKEN => {
                return if self.offer_to_hook()? {
                    visitor.visit_unit()
                } else {
                    visitor.visit_newtype_struct(self)
                };
            }
            _ => return visitor.visit_newtype_struct(self),
        };
        if self.skip_ws()? != Some(b'[') {
            // Not an array: the visitor's ordinary path reports what it is.
            return visitor.visit_newtype_struct(self);
        }
        let start = self.mark();
        self.int_array(max, what)?;
        let nums = std::mem::take(&mut self.nums);
        let result = visitor.visit_bytes(bytemuck::cast_slice(&nums));
        self.nums = nums;
        result.map_err(|e| self.locate(e, start))
    }

    /// A string is handed over as its bytes (escapes undone), not checked for UTF-8, as
    /// serde_json does: a visitor that keeps strings it has seen can look them up by their bytes
    /// and check only the new ones. Any other value is read as by `deserialize_any`.
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.skip_ws()? != Some(b'"') {
            return de::Deserializer::deserialize_any(self, visitor);
        }
        let start = self.mark();
        self.pos += 1;
        let span = self.string()?;
        let result = visitor.visit_bytes(self.span_bytes(span));
        result.map_err(|e| self.locate(e, start))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct Seq<'a, R> {
    de: &'a mut Reader<R>,
    count: usize,
}

impl<'de, R: Read> SeqAccess<'de> for Seq<'_, R> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let de = &mut *self.de;
        let b = match de.skip_ws()? {
            Some(b) => b,
            None if de.open_end() => return Ok(None),
            None => return Err(de.eof()),
        };
        if b == b']' {
            if let Some(frame) = de.top() {
                frame.active = false;
            }
            return Ok(None);
        }
        if self.count > 0 {
            if b != b',' {
                return Err(de.syntax("expected `,` or `]`"));
            }
            de.pos += 1;
            match de.skip_ws()? {
                Some(b']') => return Err(de.syntax("trailing comma")),
                None if de.open_end() => return Ok(None),
                None => return Err(de.eof()),
                Some(_) => {}
            }
        }
        let index = self.count;
        self.count += 1;
        let start = de.mark();
        if let Some(frame) = de.top() {
            frame.index = index;
            frame.active = true;
            frame.item = start;
        }
        seed.deserialize(&mut *de)
            .map(Some)
            .map_err(|e| de.locate(e, start))
    }
}

struct Map<'a, R> {
    de: &'a mut Reader<R>,
    first: bool,
}

impl<'de, R: Read> MapAccess<'de> for Map<'_, R> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let de = &mut *self.de;
        let mut b = match de.skip_ws()? {
            Some(b) => b,
            None => return Err(de.eof()),
        };
        if b == b'}' {
            if let Some(frame) = de.top() {
                frame.active = false;
            }
            return Ok(None);
        }
        if !self.first {
            if b != b',' {
                return Err(de.syntax("expected `,` or `}`"));
            }
            de.pos += 1;
            b = match de.skip_ws()? {
                Some(b'}') => return Err(de.syntax("trailing comma")),
                Some(b) => b,
                None => return Err(de.eof()),
            };
        }
        self.first = false;
        if b != b'"' {
            return Err(de.syntax("expected a string key"));
        }
        let start = de.mark();
        de.pos += 1;
        let span = de.string()?;
        // The key stays where it is (in the buffer, or copied from the scratch space, which the
        // value will reuse); keys are nearly always ASCII, checked a word at a time.
        let bytes = de.span_bytes(span);
        if !bytes.is_ascii() && std::str::from_utf8(bytes).is_err() {
            return Err(de.syntax("invalid UTF-8 in a key"));
        }
        let Reader {
            scratch,
            frames,
            depth,
            ..
        } = &mut *de;
        if let Some(frame) = depth.checked_sub(1).and_then(|i| frames.get_mut(i)) {
            frame.key_at = match span {
                Span::Buffer(a, z) => KeyAt::Buffer(a, z),
                Span::Scratch => {
                    frame.key.clear();
                    frame.key.extend_from_slice(scratch);
                    KeyAt::Owned
                }
            };
            frame.active = true;
            frame.item = start;
        }
        match de.skip_ws()? {
            Some(b':') => de.pos += 1,
            Some(_) => return Err(de.syntax("expected `:`")),
            None => return Err(de.eof()),
        }
        let key = de
            .depth
            .checked_sub(1)
            .and_then(|i| de.frames.get(i))
            .map(|f| de.key_bytes(f))
            .unwrap_or_default();
        let result = seed.deserialize(Key(key)).map(Some);
        result.map_err(|e| de.locate(e, start))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let de = &mut *self.de;
        de.skip_ws()?;
        let start = de.mark();
        seed.deserialize(&mut *de).map_err(|e| de.locate(e, start))
    }
}

/// A key (valid UTF-8), handed to the key's seed as a string, or as its bytes to a seed that
/// asks for an identifier or bytes (serde's derived field visitors match bytes as they match
/// strings), which spares the visitor a second UTF-8 check.
struct Key<'a>(&'a [u8]);

impl<'de> de::Deserializer<'de> for Key<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match std::str::from_utf8(self.0) {
            Ok(key) => visitor.visit_str(key),
            Err(_) => Err(de::Error::custom("invalid UTF-8 in a key")),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_bytes(self.0)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_bytes(self.0)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn both(text: &str) -> (std::result::Result<Value, String>, Option<Value>) {
        (
            from_str::<Value>(text).map_err(|e| e.to_string()),
            serde_json::from_str::<Value>(text).ok(),
        )
    }

    #[test]
    fn agrees_with_serde_json() {
        for text in [
            "0",
            "-0",
            "12",
            "12.0",
            "1.2e1",
            "-3",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "1e400",
            "1e-400",
            "0.1",
            r#""a\u00e9\ud83d\ude00\n""#,
            r#"{"a":[1,2,{"b":null}],"c":true,"d":false}"#,
            "[ ]",
            " { } ",
            "[1,]",
            "[01]",
            "{\"a\" 1}",
            "[1 2]",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\u{1}\"",
            "tru",
            "[1] x",
            "",
            "-",
            "1.",
            ".5",
            "1e",
            "[-]",
            "{\"a\":1,}",
        ] {
            let (ours, theirs) = both(text);
            assert_eq!(ours.as_ref().ok(), theirs.as_ref(), "{text:?}: {ours:?}");
        }
    }

    #[test]
    fn numbers_across_buffer_boundaries() {
        let text = r#"[123456789, -5, 0.25, "abcdefghij\"k", 7]"#;
        for size in 1..12 {
            let mut reader = Reader::with_buffer(text.as_bytes(), ReadOptions::default(), size);
            let value: Value = reader.read_document().unwrap();
            assert_eq!(
                value,
                serde_json::from_str::<Value>(text).unwrap(),
                "{size}"
            );
        }
    }

    #[test]
    fn errors_say_where() {
        let e = from_str::<Value>("{\n  \"a\": [1, 2,, 3]\n}").unwrap_err();
        let location = e.location().unwrap();
        assert_eq!(location.path, "a[2]");
        assert_eq!((location.line, location.column), (2, 14));
        assert!(matches!(e, Error::Syntax { .. }), "{e}");

        let e = from_str::<Value>("{\"a\": [1, 2").unwrap_err();
        assert!(e.is_truncation(), "{e}");
        assert_eq!(e.path(), Some("a[1]"));
    }

    #[test]
    fn paths_survive_refills() {
        // Keys stay in the read buffer until it is refilled: whatever the buffer's size, an
        // error names the same path at the same place.
        for text in [
            r#"{"alpha": {"b c": [1, {"delta": tru}]}}"#,
            r#"{"alpha": {"b\"c": [1, {"delta": 1, "e\u00e9": [2, 3,, 4]}]}}"#,
            r#"{"k": {"long key of some length": {"x": [1, 2, "a\u0001"], "y": "\q"}}}"#,
        ] {
            let whole = from_str::<Value>(text).unwrap_err().to_string();
            for size in 1..text.len() + 2 {
                let cut = Reader::with_buffer(text.as_bytes(), ReadOptions::default(), size)
                    .read_document::<Value>()
                    .unwrap_err()
                    .to_string();
                assert_eq!(cut, whole, "{text} with a buffer of {size}");
            }
        }
        let e = from_str::<Value>(r#"{"alpha": {"b c": [1, {"delta": tru}]}}"#).unwrap_err();
        assert_eq!(e.path(), Some(r#"alpha["b c"][1].delta"#));
    }

    #[test]
    fn keys_as_identifiers() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct S {
            #[serde(rename = "é")]
            e: u32,
            plain: Vec<u32>,
        }
        let ok: S = from_str(r#"{"\u00e9": 1, "plain": [2]}"#).unwrap();
        assert_eq!(
            ok,
            S {
                e: 1,
                plain: vec![2]
            }
        );
        let e = from_str::<S>(r#"{"é": 1, "other": 2}"#).unwrap_err();
        let theirs = serde_json::from_str::<S>(r#"{"é": 1, "other": 2}"#).unwrap_err();
        assert!(
            e.to_string()
                .contains("unknown field `other`, expected `é` or `plain`"),
            "{e} / {theirs}"
        );
        assert_eq!(e.path(), Some("other"));
        let bad = b"{\"a\xff\": 1}";
        let e = from_slice::<Value>(bad).unwrap_err();
        assert!(e.to_string().contains("invalid UTF-8 in a key"), "{e}");
        assert!(serde_json::from_slice::<Value>(bad).is_err());
    }

    #[test]
    fn open_top_array() {
        let read = |text: &str| {
            Reader::new(text.as_bytes(), ReadOptions::default().open_top_array(true))
                .read_document::<Value>()
        };
        for text in ["[1, 2", "[1, 2,", "[1, 2]", "[1, 2\n"] {
            let text = text.replace("\\n", "\n");
            assert_eq!(read(&text).unwrap(), serde_json::json!([1, 2]), "{text}");
        }
        assert!(read("[1, [2").unwrap_err().is_truncation());
        assert!(read("{\"a\": [1").unwrap_err().is_truncation());
        assert!(from_str::<Value>("[1, 2").unwrap_err().is_truncation());
    }

    #[test]
    fn raw_numbers() {
        struct Raw;
        impl<'de> Visitor<'de> for Raw {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<String, E> {
                Ok(format!("n:{}", String::from_utf8_lossy(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
                Ok(format!("s:{v}"))
            }
        }
        struct Seed;
        impl<'de> DeserializeSeed<'de> for Seed {
            type Value = String;
            fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
                d.deserialize_newtype_struct(RAW_NUMBER_TOKEN, Raw)
            }
        }
        let read = |text: &str| {
            Reader::new(text.as_bytes(), ReadOptions::default()).read_document_seed(Seed)
        };
        assert_eq!(
            read("1795211085403342.685").unwrap(),
            "n:1795211085403342.685"
        );
        assert_eq!(read(" -1e3 ").unwrap(), "n:-1e3");
        assert_eq!(read("\"12.5\"").unwrap(), "s:12.5");
        assert!(read("01").is_err());
        assert!(read("1.").unwrap_err().is_truncation());
        // Whether a number lies whole in the buffer (checked in place) or across its end
        // (gathered), the bytes handed over and the errors are the same.
        struct Numbers;
        impl<'de> Visitor<'de> for Numbers {
            type Value = Vec<String>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("numbers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
                let mut out = Vec::new();
                while let Some(n) = seq.next_element_seed(Seed)? {
                    out.push(n);
                }
                Ok(out)
            }
        }
        struct All;
        impl<'de> DeserializeSeed<'de> for All {
            type Value = Vec<String>;
            fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<String>, D::Error> {
                d.deserialize_any(Numbers)
            }
        }
        let cases = [
            "[1712345678000.123, -0.25e+3, 12, 0, -7, 3E-2, \"x\"]",
            "[1, 01]",
            "[1, 1.e5]",
            "[2, --1]",
            "[1e, 2]",
            "[1-2]",
            "[0.5, -]",
        ];
        for text in cases {
            let whole = Reader::new(text.as_bytes(), ReadOptions::default())
                .read_document_seed(All)
                .map_err(|e| e.to_string());
            for size in 1..text.len() + 2 {
                let cut = Reader::with_buffer(text.as_bytes(), ReadOptions::default(), size)
                    .read_document_seed(All)
                    .map_err(|e| e.to_string());
                assert_eq!(cut, whole, "{text} with a buffer of {size}");
            }
        }
        assert_eq!(
            Reader::new(cases[0].as_bytes(), ReadOptions::default())
                .read_document_seed(All)
                .unwrap(),
            [
                "n:1712345678000.123",
                "n:-0.25e+3",
                "n:12",
                "n:0",
                "n:-7",
                "n:3E-2",
                "s:x"
            ]
        );
    }

    #[test]
    fn raw_hook() {
        // A hook that takes objects written exactly `{"k": <digit>}` and declines the others.
        struct Digits(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl RawHook for Digits {
            fn read(&mut self, text: &[u8], _complete: bool) -> RawRead {
                let want = br#"{"k": "#;
                if text.len() < want.len() + 2 {
                    return if want.starts_with(&text[..text.len().min(want.len())]) {
                        RawRead::More
                    } else {
                        RawRead::Declined
                    };
                }
                match (&text[..want.len()], text[want.len()], text[want.len() + 1]) {
                    (w, d @ b'0'..=b'9', b'}') if w == want => {
                        self.0.borrow_mut().push(d - b'0');
                        RawRead::Read {
                            len: want.len() + 2,
                            newlines: 0,
                            last_newline: 0,
                        }
                    }
                    _ => RawRead::Declined,
                }
            }
        }
        struct Element(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl<'de> DeserializeSeed<'de> for Element {
            type Value = ();
            fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_newtype_struct(RAW_HOOK_TOKEN, self)
            }
        }
        impl<'de> Visitor<'de> for Element {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an element")
            }
            fn visit_unit<E: de::Error>(self) -> Result<(), E> {
                Ok(())
            }
            fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                #[derive(serde::Deserialize)]
                #[serde(deny_unknown_fields)]
                struct K {
                    k: u8,
                }
                let k = <K as de::Deserialize>::deserialize(d)?;
                self.0.borrow_mut().push(k.k + 100);
                Ok(())
            }
        }
        struct All(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl<'de> DeserializeSeed<'de> for All {
            type Value = ();
            fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_seq(self)
            }
        }
        impl<'de> Visitor<'de> for All {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("elements")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                while seq.next_element_seed(Element(self.0.clone()))?.is_some() {}
                Ok(())
            }
        }
        let read = |text: &str, size: usize, hook: bool| {
            let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
            let mut reader = Reader::with_buffer(text.as_bytes(), ReadOptions::default(), size);
            if hook {
                reader.set_raw_hook(Box::new(Digits(seen.clone())));
            }
            let result = reader
                .read_document_seed(All(seen.clone()))
                .map_err(|e| e.to_string());
            (result, seen.take())
        };
        let text = "[{\"k\": 1}, {\"k\": 22},\n {\"k\":3}, {\"k\": 4}, {\"k\": 5}]";
        let (ok, seen) = read(text, 1 << 10, true);
        assert_eq!(ok, Ok(()));
        // Taken by the hook, or (not in its form) by the visitor (100 more).
        assert_eq!(seen, [1, 122, 103, 4, 5]);
        for size in 1..text.len() + 2 {
            let (ok, hooked) = read(text, size, true);
            assert_eq!(ok, Ok(()), "{size}");
            assert_eq!(
                hooked.iter().map(|k| k % 100).collect::<Vec<_>>(),
                [1, 22, 3, 4, 5]
            );
        }
        // An error after objects the hook took is where it is without the hook, whatever the
        // buffer's size.
        let bad = "[{\"k\": 1},\n {\"k\": 2}, {\"k\": 3, \"x\": 1}]";
        let (without, _) = read(bad, 1 << 10, false);
        assert!(
            without
                .as_ref()
                .is_err_and(|e| e.contains("[2]") && e.contains("line 2"))
        );
        for size in 1..bad.len() + 2 {
            assert_eq!(read(bad, size, true).0, without, "{size}");
        }
    }

    #[test]
    fn depth_is_limited() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(from_str::<Value>(&deep(127)).is_ok());
        assert!(serde_json::from_str::<Value>(&deep(127)).is_ok());
        let e = from_str::<Value>(&deep(128)).unwrap_err();
        assert!(serde_json::from_str::<Value>(&deep(128)).is_err());
        assert!(matches!(e, Error::Limit { limit: 127, .. }), "{e}");
        let e = from_str::<Value>(&"[".repeat(1_000_000)).unwrap_err();
        assert!(matches!(e, Error::Limit { .. }), "{e}");
    }

    #[test]
    fn strings_are_limited() {
        let text = format!("\"{}\"", "x".repeat(100));
        let mut reader = Reader::with_buffer(
            text.as_bytes(),
            ReadOptions::default().max_string_bytes(10),
            16,
        );
        let e = reader.read_document::<Value>().unwrap_err();
        assert!(matches!(e, Error::Limit { limit: 10, .. }), "{e}");
    }

    #[test]
    fn damaged_strings_are_kept_with_replacements_when_asked() {
        let read = |text: &[u8], buffer: usize| {
            let options = ReadOptions::default().replace_invalid(true);
            let mut reader = Reader::with_buffer(text, options, buffer);
            let value = reader.read_document::<Value>();
            let (count, places) = reader.replaced_strings();
            (value.map_err(|e| e.to_string()), count, places.to_vec())
        };
        let cases: &[(&[u8], &str, u64)] = &[
            (br#"["\udc00", "ok"]"#, "[\"\u{fffd}\",\"ok\"]", 1),
            (br#"["a\ud800b"]"#, "[\"a\u{fffd}b\"]", 1),
            (br#"["\ud800\n"]"#, "[\"\u{fffd}\\n\"]", 1),
            (br#"["\ud800\ud800\udc00"]"#, "[\"\u{fffd}\u{10000}\"]", 1),
            (
                br#"["\ud800\u0041", "\udfff\udfff"]"#,
                "[\"\u{fffd}A\",\"\u{fffd}\u{fffd}\"]",
                2,
            ),
            (b"[\"a\xffb\"]", "[\"a\u{fffd}b\"]", 1),
            (br#"["\ud83d\ude00"]"#, "[\"\u{1f600}\"]", 0),
        ];
        for &(text, expected, count) in cases {
            let expected: Value = serde_json::from_str(expected).unwrap();
            for buffer in [1, 3, 64] {
                let (value, n, places) = read(text, buffer);
                assert_eq!(value.as_ref(), Ok(&expected), "{text:?} {buffer}");
                assert_eq!(n, count, "{text:?}");
                assert_eq!(places.len() as u64, count);
            }
        }
        let (_, _, places) = read(br#"{"a": ["x", "\udc00"]}"#, 64);
        assert_eq!(places.first().map(|l| l.path.as_str()), Some("a[1]"));
        // Without the option, refused as before.
        assert!(from_slice::<Value>(br#""\udc00""#).is_err());
        // Many damaged strings: all counted, the first places kept.
        let many = format!("[{}]", vec![r#""\udc00""#; 100].join(","));
        let (_, n, places) = read(many.as_bytes(), 64);
        assert_eq!((n, places.len()), (100, REPLACED_PLACES_KEPT));
    }
}

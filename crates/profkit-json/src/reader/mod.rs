//! The streaming parser, a serde [`Deserializer`](serde::Deserializer).
//!
//! It takes any [`Read`], holds one fixed buffer of it at a time (so memory is what the caller
//! keeps, not the text), has a fast path for the unsigned integers that make up most of the text
//! of profiles, and knows where it is at every moment: every error carries the JSON path of the
//! value it is about, its byte offset, line and column. Nothing else about it is special: it accepts exactly the JSON that serde_json
//! accepts (RFC 8259, UTF-8), gives the same numbers for the same text (non-negative integers as
//! `u64`, negative ones as `i64`, others as correctly rounded `f64`, `-0` as `-0.0`), and refuses
//! nesting deeper than serde_json's default limit, so that no input can exhaust the stack.

use std::io::Read;

use serde::de::{DeserializeOwned, DeserializeSeed};

use crate::error::{Location, Result};

mod de_error;
mod position;
mod scalars;
mod serde_impl;
#[cfg(test)]
mod tests;

pub use de_error::DeError;
use de_error::Kind;
pub use scalars::{Number, number_at, number_text_len};

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

    /// [`RawHook::read`], told where the value starts: `offset` bytes from the start of the input.
    /// The reader calls this one; a hook that reads ahead of the reader (on another thread, in a
    /// copy of the text) knows by it which of the values it read is the one offered.
    fn read_at(&mut self, text: &[u8], complete: bool, offset: u64) -> RawRead {
        let _ = offset;
        self.read(text, complete)
    }
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
}

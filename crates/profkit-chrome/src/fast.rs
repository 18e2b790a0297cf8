//! The fast path of the event array: an event read straight from the JSON reader's buffer by a
//! scanner that knows the members of an event, instead of through serde's visitors.
//!
//! The reader offers each element of `traceEvents` to [`FastEvents`] (a `profkit_json::RawHook`)
//! with everything it has buffered. The scanner first reads the whole event without keeping
//! anything (strings as places in the buffer, numbers converted where they lie) and gives up on
//! anything it is not sure to read exactly as the visitors would: escapes, containers where a
//! scalar is expected, deep nesting, bad grammar, a number out of range, invalid UTF-8, an event
//! that would be refused. Only an event it read whole is then taken into the trace, member by
//! member in the visitors' order (so that strings are interned in the same order); any other
//! goes to the visitors, which report what is wrong with its path, line and column as always.

use std::cell::RefCell;
use std::rc::Rc;

use profkit_json::{Number, RawHook, RawRead, number_at, number_text_len};

use crate::arg::{Arg, Id, KeyArg};
use crate::event::{RawEvent, event_error};
use crate::members::{Field, Phase, field_of};
use crate::time::{micros_to_ps, plain_micros_to_ps};
use crate::trace::Trace;

mod ahead;

use ahead::Next;
pub(crate) use ahead::{Ahead, Limits};

/// How deep the scanner follows nested arrays and objects (in args and skipped members) before
/// it leaves the event to the visitors: far below the reader's limit.
const MAX_NESTING: usize = 32;

/// Why the scanner stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// The text ends inside the event.
    More,
    /// Something the scanner leaves to the visitors.
    Decline,
}

type Scanned<T> = std::result::Result<T, Stop>;

/// A member's value as scanned.
#[derive(Clone, Copy, Debug)]
enum Val {
    /// A string without escapes: `text[a..z]`.
    Str(usize, usize),
    /// A number, as an arg takes it.
    Num(Arg),
    /// A number kept as written (ids): `text[a..z]`.
    Text(usize, usize),
    /// A time in picoseconds, with its decimals.
    Time(i128, u32),
    Bool(bool),
    Null,
    /// An array or object, as compact JSON: `compact[a..z]`.
    Compact(usize, usize),
    /// The args object: `args[a..z]`.
    Args(usize, usize),
    /// A member the importer ignores.
    Skipped,
}

/// The hook: scans events and takes the ones it read whole into the trace.
pub(super) struct FastEvents {
    trace: Rc<RefCell<Trace>>,
    found: Found,
    /// The event as the visitors would have read it (its own, not the trace's, so that it is not
    /// moved in and out of the trace for each event).
    raw: RawEvent,
    /// The scanner on a thread of its own, ahead of the reader (see `ahead`).
    ahead: Option<Ahead>,
}

/// What the scanner found of the events it read, one after another (one event at a time on the
/// reader's thread, a run of them on the scanning thread): strings as places in the event's
/// text.
#[derive(Default)]
pub(super) struct Found {
    members: Vec<(Field, Val)>,
    /// The args of the events: key `text[a..z]` and value.
    args: Vec<(usize, usize, Val)>,
    compact: Vec<u8>,
    /// The line feeds of the event last scanned, and where the last one is.
    newlines: u64,
    last_newline: usize,
}

impl Found {
    fn clear(&mut self) {
        self.members.clear();
        self.args.clear();
        self.compact.clear();
    }

    /// How long each list is: where the next event's entries start.
    pub(super) fn marks(&self) -> [usize; 3] {
        [self.members.len(), self.args.len(), self.compact.len()]
    }

    /// Forgets what was found after `marks` (an event left half scanned).
    pub(super) fn truncate(&mut self, [members, args, compact]: [usize; 3]) {
        self.members.truncate(members);
        self.args.truncate(args);
        self.compact.truncate(compact);
    }
}

impl FastEvents {
    pub(super) fn new(trace: Rc<RefCell<Trace>>, ahead: Option<Ahead>) -> FastEvents {
        FastEvents {
            trace,
            found: Found::default(),
            raw: RawEvent::default(),
            ahead,
        }
    }
}

impl RawHook for FastEvents {
    fn read(&mut self, text: &[u8], complete: bool) -> RawRead {
        self.read_at(text, complete, u64::MAX)
    }

    fn read_at(&mut self, text: &[u8], complete: bool, offset: u64) -> RawRead {
        if let Some(ahead) = &mut self.ahead {
            match ahead.next(text, complete, offset) {
                Some(Next::Read) => {
                    let (found, event) = ahead.current();
                    return match event {
                        Some(event)
                            if take(
                                &mut self.raw,
                                &self.trace,
                                text,
                                found,
                                event.members.clone(),
                            ) =>
                        {
                            RawRead::Read {
                                len: event.len,
                                newlines: event.newlines,
                                last_newline: event.last_newline,
                            }
                        }
                        _ => RawRead::Declined,
                    };
                }
                Some(Next::Declined) => return RawRead::Declined,
                None => {}
            }
        }
        self.found.clear();
        match self.found.scan(text) {
            Ok(len) => {
                let members = 0..self.found.members.len();
                if take(&mut self.raw, &self.trace, text, &self.found, members) {
                    RawRead::Read {
                        len,
                        newlines: self.found.newlines,
                        last_newline: self.found.last_newline,
                    }
                } else {
                    RawRead::Declined
                }
            }
            Err(Stop::More) => RawRead::More,
            Err(Stop::Decline) => RawRead::Declined,
        }
    }
}

/// A place in the text.
struct Cursor<'t> {
    text: &'t [u8],
    at: usize,
    /// The last time [`Cursor::plain_time`] read.
    time: (i128, u32),
    /// Line feeds passed (only whitespace has them: strings cannot), and where the last was.
    newlines: u64,
    last_newline: usize,
}

impl Cursor<'_> {
    /// The next byte after whitespace. The common cases (no whitespace, or one space) are
    /// inline; longer runs (indentation) take a loop of their own, which kept inside the
    /// scanner made the compiler carry a score of counters through it.
    #[inline(always)]
    fn ws(&mut self) -> Scanned<u8> {
        match self.text.get(self.at) {
            Some(b' ') => match self.text.get(self.at + 1) {
                Some(&b) if !matches!(b, b' ' | b'\t' | b'\r' | b'\n') => {
                    self.at += 1;
                    Ok(b)
                }
                _ => self.ws_run(),
            },
            Some(b'\t' | b'\r' | b'\n') | None => self.ws_run(),
            Some(&b) => Ok(b),
        }
    }

    #[inline(never)]
    fn ws_run(&mut self) -> Scanned<u8> {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
        let text = self.text;
        let mut at = self.at;
        loop {
            match text.get(at) {
                Some(b' ' | b'\t' | b'\r') => at += 1,
                Some(b'\n') => {
                    self.newlines += 1;
                    self.last_newline = at;
                    at += 1;
                    // The indentation after it, eight bytes at a time: a byte is flagged
                    // exactly when it is not a space.
                    while let Some(word) = text.get(at..at + 8).and_then(|w| w.first_chunk::<8>()) {
                        let x = u64::from_le_bytes(*word) ^ (ONES * u64::from(b' '));
                        let other = (((x & LOW) + LOW) | x) & !LOW;
                        if other != 0 {
                            at += (other.trailing_zeros() / 8) as usize;
                            break;
                        }
                        at += 8;
                    }
                }
                Some(&b) => {
                    self.at = at;
                    return Ok(b);
                }
                None => {
                    self.at = at;
                    return Err(Stop::More);
                }
            }
        }
    }

    /// Expects `byte` after whitespace.
    #[inline]
    fn expect(&mut self, byte: u8) -> Scanned<()> {
        if self.ws()? == byte {
            self.at += 1;
            Ok(())
        } else {
            Err(Stop::Decline)
        }
    }

    /// A string without escapes or control characters (the cursor at its quote): where its bytes
    /// are. Eight bytes at a time while they are plain ASCII (keys and most values are), the
    /// rest by [`Cursor::string_run`].
    #[inline]
    fn string(&mut self) -> Scanned<(usize, usize)> {
        let start = self.at + 1;
        let mut i = start;
        while let Some(word) = self.text.get(i..i + 8).and_then(|w| w.first_chunk::<8>()) {
            let special = special_bytes(u64::from_le_bytes(*word));
            if special != 0 {
                let k = i + (special.trailing_zeros() / 8) as usize;
                if self.text.get(k) == Some(&b'"') {
                    self.at = k + 1;
                    return Ok((start, k));
                }
                break;
            }
            i += 8;
        }
        self.string_run()
    }

    /// [`Cursor::string`] byte by byte: near the end of the text, and for strings with an escape,
    /// a control character or a byte over 0x7f.
    #[inline(never)]
    fn string_run(&mut self) -> Scanned<(usize, usize)> {
        let start = self.at + 1;
        let rest = self.text.get(start..).unwrap_or_default();
        let mut stop = None;
        for (k, &b) in rest.iter().take(16).enumerate() {
            if b == b'"' || b == b'\\' {
                stop = Some(k);
                break;
            }
        }
        let stop = match stop {
            Some(k) => k,
            None => memchr::memchr2(b'"', b'\\', rest).ok_or(Stop::More)?,
        };
        let run = rest.get(..stop).unwrap_or_default();
        // Control characters are refused; any byte over 0x7f sends the string through the UTF-8
        // check (the visitors check every string).
        let flags = run
            .iter()
            .fold(0u8, |acc, &b| acc | u8::from(b < 0x20) | (b & 0x80));
        if rest.get(stop) != Some(&b'"')
            || flags & 1 != 0
            || (flags & 0x80 != 0 && std::str::from_utf8(run).is_err())
        {
            return Err(Stop::Decline);
        }
        self.at = start + stop + 1;
        Ok((start, start + stop))
    }

    fn literal(&mut self, word: &[u8]) -> Scanned<()> {
        let end = self.at + word.len();
        match self.text.get(self.at..end) {
            Some(found) if found == word => {
                self.at = end;
                Ok(())
            }
            Some(_) => Err(Stop::Decline),
            None if word.starts_with(self.text.get(self.at..).unwrap_or_default()) => {
                Err(Stop::More)
            }
            None => Err(Stop::Decline),
        }
    }

    /// A number as the reader converts it.
    #[inline]
    fn number(&mut self) -> Scanned<Number> {
        let rest = self.text.get(self.at..).unwrap_or_default();
        // Most numbers are plain integers of a few digits: read in one pass.
        let (negative, digits) = match rest.split_first() {
            Some((b'-', digits)) => (true, digits),
            _ => (false, rest),
        };
        let mut value: i64 = 0;
        let mut n = 0;
        while let Some(&b) = digits.get(n).filter(|b| n < 18 && b.is_ascii_digit()) {
            value = value * 10 + i64::from(b - b'0');
            n += 1;
        }
        let plain = (1..=18).contains(&n)
            && (n == 1 || digits.first() != Some(&b'0'))
            && digits
                .get(n)
                .is_some_and(|b| !matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E'));
        if plain && !(negative && value == 0) {
            self.at += n + usize::from(negative);
            return Ok(if negative {
                Number::I64(-value)
            } else {
                Number::U64(value as u64)
            });
        }
        match number_at(rest) {
            Some((len, value)) => {
                self.at += len;
                Ok(value)
            }
            None => Err(self.number_stop(rest)),
        }
    }

    /// A time in microseconds written as most are (up to 18 digits, up to six decimals, not
    /// negative), read and checked in one pass into `self.time`; `None` (the cursor where it
    /// was) for any other form.
    #[inline]
    fn plain_time(&mut self) -> Option<()> {
        let rest = self.text.get(self.at..)?;
        let mut int: u64 = 0;
        let mut n = 0;
        while let Some(&b) = rest.get(n).filter(|b| b.is_ascii_digit()) {
            int = int * 10 + u64::from(b - b'0');
            n += 1;
            if n > 18 {
                return None;
            }
        }
        if n == 0 || (n > 1 && rest.first() == Some(&b'0')) {
            return None;
        }
        let (mut frac, mut decimals) = (0u64, 0u32);
        let mut end = n;
        if rest.get(n) == Some(&b'.') {
            end += 1;
            while let Some(&b) = rest.get(end).filter(|b| b.is_ascii_digit()) {
                frac = frac * 10 + u64::from(b - b'0');
                decimals += 1;
                end += 1;
                if decimals > 6 {
                    return None;
                }
            }
            if decimals == 0 {
                return None;
            }
        }
        if !rest
            .get(end)
            .is_some_and(|b| !matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E'))
        {
            return None;
        }
        self.at += end;
        self.time = (
            i128::from(int) * 1_000_000 + i128::from(frac) * 10i128.pow(6 - decimals),
            decimals,
        );
        Some(())
    }

    /// A number's text, checked against the grammar.
    #[inline]
    fn number_text(&mut self) -> Scanned<(usize, usize)> {
        let rest = self.text.get(self.at..).unwrap_or_default();
        match number_text_len(rest) {
            Some(len) => {
                let start = self.at;
                self.at += len;
                Ok((start, start + len))
            }
            None => Err(self.number_stop(rest)),
        }
    }

    /// Why a number was not taken: it may go on past the text, or it is not one.
    fn number_stop(&self, rest: &[u8]) -> Stop {
        let run = rest
            .iter()
            .take_while(|b| matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'-' | b'+'))
            .count();
        if run == rest.len() {
            Stop::More
        } else {
            Stop::Decline
        }
    }

    /// A scalar value (a container is left to the visitors).
    fn scalar(&mut self, first: u8) -> Scanned<Val> {
        Ok(match first {
            b'"' => {
                let (a, z) = self.string()?;
                Val::Str(a, z)
            }
            b'-' | b'0'..=b'9' => Val::Num(arg_of_number(self.number()?)),
            b't' => {
                self.literal(b"true")?;
                Val::Bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                Val::Bool(false)
            }
            b'n' => {
                self.literal(b"null")?;
                Val::Null
            }
            _ => return Err(Stop::Decline),
        })
    }

    /// Any value, written as compact JSON to `out` as the visitors write args that are arrays or
    /// objects.
    fn compact(&mut self, out: &mut Vec<u8>, depth: usize) -> Scanned<()> {
        if depth > MAX_NESTING {
            return Err(Stop::Decline);
        }
        match self.ws()? {
            b'{' => {
                self.at += 1;
                out.push(b'{');
                if self.ws()? == b'}' {
                    self.at += 1;
                    out.push(b'}');
                    return Ok(());
                }
                loop {
                    if self.ws()? != b'"' {
                        return Err(Stop::Decline);
                    }
                    let (a, z) = self.string()?;
                    out.push(b'"');
                    out.extend_from_slice(self.text.get(a..z).unwrap_or_default());
                    out.extend_from_slice(b"\":");
                    self.expect(b':')?;
                    self.compact(out, depth + 1)?;
                    match self.ws()? {
                        b',' => {
                            self.at += 1;
                            out.push(b',');
                        }
                        b'}' => {
                            self.at += 1;
                            out.push(b'}');
                            return Ok(());
                        }
                        _ => return Err(Stop::Decline),
                    }
                }
            }
            b'[' => {
                self.at += 1;
                out.push(b'[');
                if self.ws()? == b']' {
                    self.at += 1;
                    out.push(b']');
                    return Ok(());
                }
                loop {
                    self.compact(out, depth + 1)?;
                    match self.ws()? {
                        b',' => {
                            self.at += 1;
                            out.push(b',');
                            if self.ws()? == b']' {
                                return Err(Stop::Decline);
                            }
                        }
                        b']' => {
                            self.at += 1;
                            out.push(b']');
                            return Ok(());
                        }
                        _ => return Err(Stop::Decline),
                    }
                }
            }
            b'"' => {
                let (a, z) = self.string()?;
                out.push(b'"');
                out.extend_from_slice(self.text.get(a..z).unwrap_or_default());
                out.push(b'"');
                Ok(())
            }
            first @ (b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
                match self.scalar(first)? {
                    Val::Num(Arg::Int(i)) => {
                        out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes())
                    }
                    Val::Num(Arg::Uint(u)) => {
                        out.extend_from_slice(itoa::Buffer::new().format(u).as_bytes())
                    }
                    Val::Num(Arg::Double(d)) => {
                        if serde_json::to_writer(&mut *out, &d).is_err() {
                            out.extend_from_slice(b"null");
                        }
                    }
                    Val::Bool(true) => out.extend_from_slice(b"true"),
                    Val::Bool(false) => out.extend_from_slice(b"false"),
                    Val::Null => out.extend_from_slice(b"null"),
                    _ => return Err(Stop::Decline),
                }
                Ok(())
            }
            _ => Err(Stop::Decline),
        }
    }
}

/// Flags (the high bit of a byte) the bytes of a word (in text order from the lowest) that end
/// or complicate a string: a quote, a backslash, a control character or a byte over 0x7f. Only
/// the lowest flag is exact (a borrow may flag bytes above it), which is the one used.
#[inline(always)]
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let quote = zero_in(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_in(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control | (word & HIGH)
}

/// A number as [`super::ArgSeed`] takes it.
fn arg_of_number(n: Number) -> Arg {
    match n {
        Number::U64(v) => i64::try_from(v).map_or(Arg::Uint(v), Arg::Int),
        Number::I64(v) => Arg::Int(v),
        Number::F64(v) => Arg::Double(v),
    }
}

impl Found {
    /// Reads the event at the start of `text` without keeping anything but places and values,
    /// appended to what was found before: how many bytes it takes. On an error, what it appended
    /// is left for the caller to [`Found::truncate`].
    pub(super) fn scan(&mut self, text: &[u8]) -> Scanned<usize> {
        let mut c = Cursor {
            text,
            at: 1,
            time: (0, 0),
            newlines: 0,
            last_newline: 0,
        };
        if c.ws()? == b'}' {
            c.at += 1;
            self.newlines = c.newlines;
            self.last_newline = c.last_newline;
            return Ok(c.at);
        }
        loop {
            if c.ws()? != b'"' {
                return Err(Stop::Decline);
            }
            let (a, z) = c.string()?;
            let field = field_of(text.get(a..z).unwrap_or_default());
            c.expect(b':')?;
            let first = c.ws()?;
            let value = match field {
                Field::Args => {
                    if first != b'{' {
                        return Err(Stop::Decline);
                    }
                    self.scan_args(&mut c)?
                }
                Field::Other => {
                    let mark = self.compact.len();
                    c.compact(&mut self.compact, 0)?;
                    self.compact.truncate(mark);
                    Val::Skipped
                }
                Field::Id2 => return Err(Stop::Decline),
                Field::Ts | Field::Dur => match first {
                    b'0'..=b'9' if c.plain_time().is_some() => {
                        let (v, d) = c.time;
                        Val::Time(v, d)
                    }
                    b'-' | b'0'..=b'9' => {
                        let (a, z) = c.number_text()?;
                        let digits = text.get(a..z).unwrap_or_default();
                        let found = plain_micros_to_ps(digits)
                            .or_else(|| std::str::from_utf8(digits).ok().and_then(micros_to_ps));
                        match found {
                            Some((v, d)) => Val::Time(v, d),
                            None => return Err(Stop::Decline),
                        }
                    }
                    b'n' => {
                        c.literal(b"null")?;
                        Val::Null
                    }
                    _ => return Err(Stop::Decline),
                },
                Field::Id | Field::Scope | Field::Bp | Field::BindId => match first {
                    b'-' | b'0'..=b'9' => {
                        let (a, z) = c.number_text()?;
                        Val::Text(a, z)
                    }
                    _ => c.scalar(first)?,
                },
                _ => c.scalar(first)?,
            };
            self.members.push((field, value));
            match c.ws()? {
                b',' => c.at += 1,
                b'}' => {
                    c.at += 1;
                    break;
                }
                _ => return Err(Stop::Decline),
            }
        }
        self.newlines = c.newlines;
        self.last_newline = c.last_newline;
        Ok(c.at)
    }

    fn scan_args(&mut self, c: &mut Cursor<'_>) -> Scanned<Val> {
        c.at += 1;
        let from = self.args.len();
        if c.ws()? == b'}' {
            c.at += 1;
            return Ok(Val::Args(from, from));
        }
        loop {
            if c.ws()? != b'"' {
                return Err(Stop::Decline);
            }
            let (a, z) = c.string()?;
            c.expect(b':')?;
            let first = c.ws()?;
            let value = match first {
                b'{' | b'[' => {
                    let start = self.compact.len();
                    c.compact(&mut self.compact, 0)?;
                    Val::Compact(start, self.compact.len())
                }
                _ => c.scalar(first)?,
            };
            self.args.push((a, z, value));
            match c.ws()? {
                b',' => c.at += 1,
                b'}' => {
                    c.at += 1;
                    return Ok(Val::Args(from, self.args.len()));
                }
                _ => return Err(Stop::Decline),
            }
        }
    }
}

/// Takes an event scanned into `found` (its members `members`, its text `text`) into the trace,
/// as the visitors would; `false` (with nothing taken that matters: the visitors then refuse the
/// event) when it would be refused.
fn take(
    raw: &mut RawEvent,
    trace: &RefCell<Trace>,
    text: &[u8],
    found: &Found,
    members: std::ops::Range<usize>,
) -> bool {
    let mut guard = trace.borrow_mut();
    let trace = &mut *guard;
    raw.clear();
    let bytes = |a: usize, z: usize| text.get(a..z).unwrap_or_default();
    let str_of = |a: usize, z: usize| std::str::from_utf8(bytes(a, z)).unwrap_or_default();
    for &(field, value) in found.members.get(members).unwrap_or_default() {
        raw.member(field);
        match (field, value) {
            (Field::Ph, Val::Str(a, z)) => {
                raw.ph = Some(match bytes(a, z) {
                    [x] => Phase::Short([*x, 0], 1),
                    [x, y] => Phase::Short([*x, *y], 2),
                    _ => Phase::Long(str_of(a, z).to_owned()),
                });
            }
            (Field::Ph, _) => raw.ph_not_string = true,
            (Field::Name, v) => {
                let arg = arg(found, trace, text, v);
                raw.name = Some(match arg {
                    Arg::Str(id) => id,
                    Arg::Int(i) => trace.strings.id(&i.to_string()),
                    Arg::Uint(u) => trace.strings.id(&u.to_string()),
                    Arg::Double(d) => trace.strings.id(&d.to_string()),
                });
            }
            (Field::Cat, v) => {
                raw.cat = match arg(found, trace, text, v) {
                    Arg::Str(id) => Some(id),
                    _ => None,
                };
            }
            (Field::Pid | Field::Tid, v) => {
                let id = match v {
                    Val::Str(a, z) => Id::Text(str_of(a, z).into()),
                    Val::Num(Arg::Int(i)) => Id::Int(i),
                    Val::Num(Arg::Uint(u)) => Id::Text(u.to_string().into()),
                    Val::Num(Arg::Double(d)) => Id::Text(crate::seeds::float_id(d).into()),
                    Val::Bool(b) => Id::Text(b.to_string().into()),
                    Val::Null => Id::Int(0),
                    _ => return false,
                };
                if matches!(field, Field::Pid) {
                    raw.pid = Some(id);
                } else {
                    raw.tid = Some(id);
                }
            }
            (Field::Ts | Field::Dur, v) => {
                let time = match v {
                    Val::Time(t, d) => {
                        trace.decimals = trace.decimals.max(d);
                        Some(t)
                    }
                    _ => None,
                };
                if matches!(field, Field::Ts) {
                    raw.ts = time;
                } else {
                    raw.dur = time;
                }
            }
            (Field::Id | Field::Scope | Field::Bp | Field::BindId, v) => {
                let text = match v {
                    Val::Str(a, z) | Val::Text(a, z) => str_of(a, z),
                    Val::Bool(true) => "true",
                    Val::Bool(false) => "false",
                    Val::Null => "",
                    _ => return false,
                };
                match field {
                    Field::Id => {
                        // In the allocation of the last event's id (every flow event has one).
                        let mut id = std::mem::take(&mut raw.spare_id);
                        id.clear();
                        id.push_str(text);
                        raw.id = Some(id);
                    }
                    Field::Scope => raw.scope = Some(text.to_owned()),
                    Field::Bp => raw.bp_enclosing = text == "e",
                    _ => raw.bind_id = Some(text.to_owned()),
                }
            }
            (Field::FlowIn, v) => raw.flow_in = matches!(v, Val::Bool(true)),
            (Field::FlowOut, v) => raw.flow_out = matches!(v, Val::Bool(true)),
            (Field::Args, Val::Args(from, to)) => {
                for (position, &(a, z, value)) in found
                    .args
                    .get(from..to)
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                {
                    let key_bytes = bytes(a, z);
                    let likely = trace.last_keys.get(position).copied();
                    let key =
                        match likely.filter(|&id| trace.strings.get(id).as_bytes() == key_bytes) {
                            Some(id) => {
                                if let Some(r) = trace.strings.repeated.get_mut(id as usize) {
                                    *r = true;
                                }
                                id
                            }
                            None => match trace.strings.id_bytes(key_bytes) {
                                Some(id) => id,
                                None => return false,
                            },
                        };
                    match trace.last_keys.get_mut(position) {
                        Some(slot) => *slot = key,
                        None => trace.last_keys.push(key),
                    }
                    let arg = arg(found, trace, text, value);
                    raw.args.push(KeyArg::new(key, arg));
                }
            }
            (Field::Args, _) | (Field::Id2, _) => return false,
            (Field::Other, _) => {}
        }
    }
    if event_error(raw).is_some() {
        return false;
    }
    trace.event::<profkit_json::DeError>(raw).is_ok()
}

/// A scanned value as an arg (strings and containers interned).
fn arg(found: &Found, trace: &mut Trace, text: &[u8], value: Val) -> Arg {
    match value {
        Val::Str(a, z) => Arg::Str(
            trace
                .strings
                .id_bytes(text.get(a..z).unwrap_or_default())
                .unwrap_or(trace.keys.empty),
        ),
        Val::Num(arg) => arg,
        Val::Bool(b) => Arg::Int(i64::from(b)),
        Val::Null => Arg::Str(trace.strings.id("null")),
        // Made of checked strings: UTF-8.
        Val::Compact(a, z) => Arg::Str(
            trace
                .strings
                .id_bytes(found.compact.get(a..z).unwrap_or_default())
                .unwrap_or(trace.keys.empty),
        ),
        Val::Text(..) | Val::Time(..) | Val::Args(..) | Val::Skipped => Arg::Str(trace.keys.empty),
    }
}

#[cfg(test)]
mod tests;

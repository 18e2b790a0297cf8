//! Nesting, and the scalars: literals, strings with their escapes, numbers, integer arrays.

use std::io::Read;

use serde::de::{self, Visitor};

use crate::error::Result;
use crate::number::IntVisitor;

use super::*;

/// How many bytes at the start of `bytes` a number takes, by the rule [`Reader::scan_number`]
/// gathers by: digits, `.`, `e`/`E`, a sign at the start or after the exponent's `e`.
pub(super) fn number_run(bytes: &[u8]) -> usize {
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
pub(super) fn check_number(s: &[u8]) -> Option<(bool, usize, bool)> {
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
pub(super) fn number_value(
    s: &[u8],
    negative: bool,
    int_end: usize,
    is_float: bool,
) -> Option<Number> {
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

pub(super) fn is_digit(b: u8) -> bool {
    b.is_ascii_digit()
}

impl<R: Read> Reader<R> {
    // ----- nesting -----

    pub(super) fn enter(&mut self, is_array: bool) -> Result<(), DeError> {
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
    pub(super) fn open_end(&self) -> bool {
        self.open_top_array && self.depth == 1 && self.frames.first().is_some_and(|f| f.is_array)
    }

    pub(super) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    pub(super) fn top(&mut self) -> Option<&mut Frame> {
        self.depth
            .checked_sub(1)
            .and_then(|i| self.frames.get_mut(i))
    }

    // ----- scalars -----

    pub(super) fn literal(&mut self, word: &'static [u8]) -> Result<(), DeError> {
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
    pub(super) fn string(&mut self) -> Result<Span, DeError> {
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

    pub(super) fn hex4(&mut self) -> Result<u32, DeError> {
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
    pub(super) fn escape(&mut self) -> Result<(), DeError> {
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
    pub(super) fn lone(&mut self, reason: &str) -> Result<(), DeError> {
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

    pub(super) fn span_bytes(&self, span: Span) -> &[u8] {
        match span {
            Span::Buffer(a, b) => self.buf.get(a..b).unwrap_or_default(),
            Span::Scratch => &self.scratch,
        }
    }

    /// Reads a number. Plain unsigned integers inside the buffer (nearly every number in a
    /// profile) take the fast path; everything else is gathered and checked against the grammar.
    #[inline]
    pub(super) fn number<'de, V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, DeError> {
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

    pub(super) fn number_slow<'de, V: Visitor<'de>>(
        &mut self,
        visitor: V,
    ) -> Result<V::Value, DeError> {
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
    pub(super) fn raw_number<'de, V: Visitor<'de>>(
        &mut self,
        visitor: V,
    ) -> Result<V::Value, DeError> {
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
    pub(super) fn scan_number(&mut self) -> Result<(bool, usize, bool), DeError> {
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
    pub(super) fn int_array(&mut self, max: u64, what: &'static str) -> Result<(), DeError> {
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
    pub(super) fn point_at(&mut self, index: usize, active: bool) {
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
    pub(super) fn int_run(&mut self, ints: &mut Ints) -> Run {
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
}

//! Where the reader is (offset, line, column, JSON path) for its errors, and its buffer: filled
//! as the text is read, compacted, offered to a raw hook.

use std::io::{ErrorKind, Read};

use crate::error::{Location, Result};

use super::*;

impl<R: Read> Reader<R> {
    // ----- positions and errors -----

    pub(super) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub(super) fn mark(&self) -> Mark {
        Mark {
            offset: self.offset(),
            line: self.line,
            line_start: self.line_start,
        }
    }

    /// The path of the current value. A path deeper than 24 levels is shortened in the middle.
    pub(super) fn path(&self) -> String {
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
    pub(super) fn key_bytes<'a>(&'a self, frame: &'a Frame) -> &'a [u8] {
        match frame.key_at {
            KeyAt::Buffer(a, z) => self.buf.get(a..z).unwrap_or_default(),
            KeyAt::Owned => &frame.key,
        }
    }

    pub(super) fn location_at(&self, mark: Mark) -> Location {
        Location {
            path: self.path(),
            offset: mark.offset,
            line: mark.line,
            column: mark.offset.saturating_sub(mark.line_start) + 1,
        }
    }

    pub(super) fn here(&self) -> Location {
        self.location_at(self.mark())
    }

    /// Gives an error that does not know where it is yet (one a visitor made) the current path
    /// and the position `start` of the value it is about.
    pub(super) fn locate(&self, mut e: DeError, start: Mark) -> DeError {
        if e.0.location.is_none() {
            e.0.location = Some(self.location_at(start));
        }
        e
    }

    /// Locates an error that the visitor of the current array or object made while a key or
    /// element was current (a duplicate key, say) at that key or element.
    pub(super) fn locate_item(&self, e: DeError) -> DeError {
        match self.depth.checked_sub(1).and_then(|i| self.frames.get(i)) {
            Some(frame) if frame.active => self.locate(e, frame.item),
            _ => e,
        }
    }

    pub(super) fn syntax(&self, reason: impl Into<String>) -> DeError {
        DeError::new(Kind::Syntax, reason, Some(self.here()))
    }

    pub(super) fn eof(&self) -> DeError {
        DeError::new(Kind::Eof, "the input ends here", Some(self.here()))
    }

    pub(super) fn limit(&self, what: impl Into<String>, limit: usize) -> DeError {
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
    pub(super) fn fill(&mut self) -> Result<bool, DeError> {
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
    pub(super) fn own_keys(&mut self) {
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
    pub(super) fn compact_and_fill(&mut self) -> Result<(), DeError> {
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
    pub(super) fn offer_to_hook(&mut self) -> Result<bool, DeError> {
        let Some(mut hook) = self.hook.take() else {
            return Ok(false);
        };
        let result = self.offer(hook.as_mut());
        self.hook = Some(hook);
        result
    }

    pub(super) fn offer(&mut self, hook: &mut dyn RawHook) -> Result<bool, DeError> {
        if self.skip_ws()? != Some(b'{') {
            return Ok(false);
        }
        loop {
            let text = self.buf.get(self.pos..self.end).unwrap_or_default();
            let complete = self.eof || (self.pos == 0 && self.end == self.buf.len());
            match hook.read_at(text, complete, self.offset()) {
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
    pub(super) fn peek(&mut self) -> Result<Option<u8>, DeError> {
        if self.pos >= self.end && !self.fill()? {
            return Ok(None);
        }
        Ok(self.buf.get(self.pos).copied())
    }

    /// Skips whitespace and returns the next byte without consuming it.
    #[inline]
    pub(super) fn skip_ws(&mut self) -> Result<Option<u8>, DeError> {
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
}

//! Normalising a viewed plane: the bytes [`crate::encode_plane`] writes for what the plane
//! decodes to, copied from the input wherever the input already holds exactly those bytes.
//!
//! A rewrite of an XSpace (`profkit convert IN.xplane.pb OUT.xplane.pb`) writes every plane as
//! decoding and encoding it again would: unknown fields dropped, fields in field-number order, a
//! scalar left out when it is zero, varints and lengths in their shortest form, `child_id`
//! packed, map entries in key order, the last of a repeated key kept. Encoding is a function of
//! the decoded content, so wherever the input is already that function's output, decoding and
//! encoding give back the input's bytes. Files written by this crate, by prost and (lines,
//! events, stats) by TensorFlow's C++ are, so the work can be skipped by checking instead.
//!
//! The check reads the bytes once, allocates nothing, and accepts an encoding only when it is the
//! one [`crate::encode_plane`] would write for its decoding (the *canonical* encoding): each
//! message's fields exactly in the order the encoder writes them, each tag in its one-byte form,
//! a singular field at most once and never with its default value (a set oneof member is written
//! even when zero, a map entry even when empty), no field the schema does not know, every varint
//! and length in its shortest form, `child_id` as one non-empty packed run, map keys strictly
//! increasing (so already in order and without repeats), strings valid UTF-8. Canonical bytes are
//! therefore also valid: a plane copied this way would have decoded without error.
//!
//! A plane whose own fields (id, name, metadata maps, stats, the framing of its lines) are
//! canonical and whose lines all are is copied whole. Otherwise the plane is rewritten: its id,
//! name, metadata and stats are decoded and encoded, and each line is copied when it is canonical,
//! rewritten when not: its own fields encoded, each canonical event copied (a run of them at
//! once), each other event decoded and encoded on its own, so that no line is decoded whole (one
//! line can hold most of a profile's events). Lines hold almost all of a plane's bytes, and a
//! writer's map order (TensorFlow's C++ writes its hash maps' order) does not reach them.
//! [`XPlaneView::write_normalised`] measures a rewritten plane first and then writes it piece by
//! piece to its output, so that memory holds the input plane and never a second copy of it.

use super::line::owned_event;
use super::{Bad, XLineView};
use super::{T1_VARINT, T2_FIXED64, T2_VARINT, T3_LEN, T3_VARINT, T4_LEN, T4_VARINT};
use super::{T5_LEN, T5_VARINT, T6_LEN, T7_VARINT, XPlaneView, tag};
use crate::encoder::{
    encode_event_entry, encode_line_head, encode_line_tail, encode_plane_head, encode_plane_tail,
    event_entry_len, line_shell_len,
};
use crate::error::Result;
use crate::proto::{XLine, XPlane};
use profkit_wire::{LEN, VARINT};
use std::io::Write;

// Tag bytes only the canonical check needs (`T<number>_<wire type>`).
const T1_LEN: u8 = tag(1, LEN);
const T2_LEN: u8 = tag(2, LEN);
const T9_VARINT: u8 = tag(9, VARINT);
const T10_VARINT: u8 = tag(10, VARINT);
const T11_LEN: u8 = tag(11, LEN);

/// How [`XPlaneView::normalise`] produced a plane's normalised bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Normalised {
    /// The plane's bytes are already canonical: [`XPlaneView::bytes`] are the result, and nothing
    /// was written to the buffer.
    Canonical,
    /// The plane was written to the buffer: its own fields encoded, its lines copied or encoded.
    Rewritten {
        /// Lines copied as they were encoded (canonical).
        lines_copied: usize,
        /// Lines not canonical, written again (their own fields encoded, their canonical events
        /// copied, the others decoded and encoded).
        lines_encoded: usize,
    },
}

impl<'a> XPlaneView<'a> {
    /// The plane as [`crate::encode_plane`] writes what it decodes to (the bytes of
    /// `encode_plane(&self.to_owned_plane()?)`), without decoding what is already written so.
    ///
    /// When the plane's bytes are already those, nothing is written and
    /// [`Normalised::Canonical`] says to use [`bytes`](Self::bytes); otherwise `out` is cleared
    /// and receives the normalised plane, in which every canonical line was copied as it was. A
    /// plane that does not decode gives the error decoding it gives.
    ///
    /// ```
    /// use profkit_xplane::xview::{Normalised, XPlaneView};
    /// use profkit_xplane::{PlaneBuilder, XPlane, encode_plane};
    /// let mut plane = XPlane::default();
    /// PlaneBuilder::new(&mut plane).line(1).add_event("step").set_duration_ps(5);
    /// let bytes = encode_plane(&plane);
    /// let mut out = Vec::new();
    /// assert_eq!(XPlaneView::new(&bytes)?.normalise(&mut out)?, Normalised::Canonical);
    /// // The same plane with an unknown field (number 15, a varint) at its end:
    /// let mut extended = bytes.clone();
    /// extended.extend_from_slice(&[0x78, 0x01]);
    /// let kind = XPlaneView::new(&extended)?.normalise(&mut out)?;
    /// assert_eq!(kind, Normalised::Rewritten { lines_copied: 1, lines_encoded: 0 });
    /// assert_eq!(out, bytes);
    /// # Ok::<(), profkit_xplane::Error>(())
    /// ```
    pub fn normalise(&self, out: &mut Vec<u8>) -> Result<Normalised> {
        out.clear();
        match self.canonical_lines() {
            None => Ok(Normalised::Canonical),
            Some(known) => self.rewrite(known, out),
        }
    }

    /// [`normalise`](Self::normalise) written to `out` as one element of `XSpace.planes` (its
    /// key, its length, the normalised plane), without gathering a rewritten plane in memory:
    /// it is walked twice, once to measure it (which finds any fault, so that nothing is written
    /// for a plane that does not decode, and the error is the one decoding it gives) and once to
    /// write it piece by piece. A canonical plane is written as it is.
    ///
    /// ```
    /// use profkit_xplane::xview::{Normalised, XPlaneView};
    /// use profkit_xplane::{PlaneBuilder, XPlane, XSpace, encode, encode_plane};
    /// let mut plane = XPlane::default();
    /// PlaneBuilder::new(&mut plane).line(1).add_event("step").set_duration_ps(5);
    /// let mut extended = encode_plane(&plane);
    /// extended.extend_from_slice(&[0x78, 0x01]); // an unknown field
    /// let mut out = Vec::new();
    /// let kind = XPlaneView::new(&extended)?.write_normalised(&mut out)?;
    /// assert_eq!(kind, Normalised::Rewritten { lines_copied: 1, lines_encoded: 0 });
    /// assert_eq!(out, encode(&XSpace { planes: vec![plane], ..XSpace::default() }));
    /// # Ok::<(), profkit_xplane::Error>(())
    /// ```
    pub fn write_normalised<W: Write>(&self, out: &mut W) -> Result<Normalised> {
        let mut head = Vec::with_capacity(11);
        head.push(T1_LEN);
        let Some(known) = self.canonical_lines() else {
            push_varint(&mut head, self.body.len() as u64);
            out.write_all(&head)?;
            out.write_all(self.body)?;
            return Ok(Normalised::Canonical);
        };
        let mut count = Count(0);
        self.rewrite(known, &mut count)?;
        push_varint(&mut head, count.0);
        out.write_all(&head)?;
        self.rewrite(known, out)
    }

    /// `None` when the whole plane is canonical, else how many of its first lines are known to be
    /// (0 when the plane's own fields are not).
    fn canonical_lines(&self) -> Option<usize> {
        let mut known = 0;
        if plane_shape(self.body).is_some() {
            let mut c = Canon::new(self.body);
            if c.eat(T1_VARINT) {
                c.varint();
            }
            if c.eat(T2_LEN) {
                c.body();
            }
            while c.eat(T3_LEN) {
                match c.body() {
                    Some(line) if line_canonical(line).is_some() => known += 1,
                    _ => return Some(known),
                }
            }
            return None;
        }
        Some(known)
    }

    /// Writes the normalised plane to `out`: its own fields decoded and encoded, each line copied
    /// when canonical (the first `known` are), else rewritten ([`rewrite_line`]). Decoding walks
    /// the plane in the order [`XPlaneView::owned_with`] does, and every error is the plane's
    /// first fault.
    fn rewrite<W: Write>(&self, known: usize, out: &mut W) -> Result<Normalised> {
        let metadata = self.metadata()?;
        let mut stats = Vec::with_capacity(self.stats);
        for stat in self.stats() {
            stats.push(stat?.owned_with(None));
        }
        let shell = XPlane {
            id: self.id,
            name: self.name.to_owned(),
            lines: Vec::new(),
            event_metadata: metadata
                .events
                .iter()
                .map(|md| (md.key, md.to_owned_metadata(None)))
                .collect(),
            stat_metadata: metadata
                .stats
                .iter()
                .map(|md| (md.key, md.to_owned_metadata()))
                .collect(),
            stats,
        };
        let mut scratch = Vec::new();
        encode_plane_head(&shell, &mut scratch);
        out.write_all(&scratch)?;
        let (mut lines_copied, mut lines_encoded) = (0, 0);
        for (index, line) in self.lines().enumerate() {
            let line = line?;
            if index < known || line_canonical(line.body).is_some() {
                scratch.clear();
                scratch.push(T3_LEN);
                push_varint(&mut scratch, line.body.len() as u64);
                out.write_all(&scratch)?;
                out.write_all(line.body)?;
                lines_copied += 1;
            } else {
                rewrite_line(&line, &mut scratch, out)?;
                lines_encoded += 1;
            }
        }
        scratch.clear();
        encode_plane_tail(&shell, &mut scratch);
        out.write_all(&scratch)?;
        Ok(Normalised::Rewritten {
            lines_copied,
            lines_encoded,
        })
    }
}

/// A writer that counts what it is given.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0 += buf.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Appends a line that is not canonical as one element of `XPlane.lines`, as encoding its
/// decoding writes it, without decoding it whole (a line can hold most of a plane's events): its
/// own fields encoded, each canonical event copied, each other event decoded and encoded on its
/// own (twice: once to measure the line, once to write it). It fails exactly where decoding the
/// line fails, with the same error (a view's errors are the plane's first fault).
fn rewrite_line<W: Write>(line: &XLineView<'_>, scratch: &mut Vec<u8>, out: &mut W) -> Result<()> {
    let shell = XLine {
        id: line.id,
        display_id: line.display_id,
        name: line.name.to_owned(),
        display_name: line.display_name.to_owned(),
        timestamp_ns: line.timestamp_ns,
        duration_ps: line.duration_ps,
        events: Vec::new(),
    };
    let decoded = |body: &[u8]| owned_event(body, None).map_err(|Bad| line.root.error());
    let mut len = line_shell_len(&shell);
    let mut events = line.events();
    while let Some(body) = events.next_body() {
        let body = body?;
        len += match event(body) {
            Some(()) => 1 + varint_len(body.len() as u64) + body.len(),
            None => event_entry_len(&decoded(body)?),
        };
    }
    scratch.clear();
    scratch.push(T3_LEN);
    push_varint(scratch, len as u64);
    encode_line_head(&shell, scratch);
    out.write_all(scratch)?;
    // Canonical events are copied with their keys and lengths, a run of those that follow one
    // another in the line (each written as it is written again) at once.
    let base = line.body.as_ptr() as usize;
    let mut run: Option<(usize, usize)> = None;
    let mut events = line.events();
    while let Some(body) = events.next_body() {
        let body = body?;
        let start = (body.as_ptr() as usize).wrapping_sub(base);
        if event(body).is_some() {
            scratch.clear();
            scratch.push(T4_LEN);
            push_varint(scratch, body.len() as u64);
            let entry = start.wrapping_sub(scratch.len());
            let framed = entry <= start && line.body.get(entry..start) == Some(&scratch[..]);
            match run {
                Some((from, to)) if framed && to == entry => run = Some((from, start + body.len())),
                _ => {
                    if let Some((from, to)) = run.take() {
                        out.write_all(line.body.get(from..to).unwrap_or_default())?;
                    }
                    if framed {
                        run = Some((entry, start + body.len()));
                    } else {
                        out.write_all(scratch)?;
                        out.write_all(body)?;
                    }
                }
            }
        } else {
            if let Some((from, to)) = run.take() {
                out.write_all(line.body.get(from..to).unwrap_or_default())?;
            }
            scratch.clear();
            encode_event_entry(&decoded(body)?, scratch);
            out.write_all(scratch)?;
        }
    }
    if let Some((from, to)) = run.take() {
        out.write_all(line.body.get(from..to).unwrap_or_default())?;
    }
    scratch.clear();
    encode_line_tail(&shell, scratch);
    out.write_all(scratch)?;
    Ok(())
}

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Whether `plane` (an XPlane's bytes) is canonical but for the contents of its lines, which are
/// skipped.
fn plane_shape(plane: &[u8]) -> Option<()> {
    let mut c = Canon::new(plane);
    if c.eat(T1_VARINT) {
        c.nonzero()?;
    }
    if c.eat(T2_LEN) {
        c.text()?;
    }
    while c.eat(T3_LEN) {
        c.body()?;
    }
    let mut last = None;
    while c.eat(T4_LEN) {
        let key = entry(c.body()?, event_metadata)?;
        if last.is_some_and(|last| key <= last) {
            return None;
        }
        last = Some(key);
    }
    let mut last = None;
    while c.eat(T5_LEN) {
        let key = entry(c.body()?, stat_metadata)?;
        if last.is_some_and(|last| key <= last) {
            return None;
        }
        last = Some(key);
    }
    while c.eat(T6_LEN) {
        stat(c.body()?)?;
    }
    c.done()
}

/// Whether `line` (an XLine's bytes) is canonical: `id`, `name`, `timestamp_ns`, the events,
/// `duration_ps`, `display_id`, `display_name`.
fn line_canonical(line: &[u8]) -> Option<()> {
    let mut c = Canon::new(line);
    if c.eat(T1_VARINT) {
        c.nonzero()?;
    }
    if c.eat(T2_LEN) {
        c.text()?;
    }
    if c.eat(T3_VARINT) {
        c.nonzero()?;
    }
    while c.eat(T4_LEN) {
        event(c.body()?)?;
    }
    if c.eat(T9_VARINT) {
        c.nonzero()?;
    }
    if c.eat(T10_VARINT) {
        c.nonzero()?;
    }
    if c.eat(T11_LEN) {
        c.text()?;
    }
    c.done()
}

/// An XEvent: `metadata_id`, the `data` oneof (where its lowest tag goes, whichever member is
/// set, even when zero), `duration_ps`, the stats.
#[inline]
fn event(event: &[u8]) -> Option<()> {
    let mut c = Canon::new(event);
    if c.eat(T1_VARINT) {
        c.nonzero()?;
    }
    if c.eat(T2_VARINT) || c.eat(T5_VARINT) {
        c.varint()?;
    }
    if c.eat(T3_VARINT) {
        c.nonzero()?;
    }
    while c.eat(T4_LEN) {
        stat(c.body()?)?;
    }
    c.done()
}

/// An XStat: `metadata_id`, then at most one member of the `value` oneof (even when zero or
/// empty).
#[inline]
fn stat(stat: &[u8]) -> Option<()> {
    let mut c = Canon::new(stat);
    if c.eat(T1_VARINT) {
        c.nonzero()?;
    }
    match c.peek() {
        Some(T2_FIXED64) => {
            c.pos += 1;
            c.skip(8)?;
        }
        Some(T3_VARINT | T4_VARINT | T7_VARINT) => {
            c.pos += 1;
            c.varint()?;
        }
        Some(T5_LEN) => {
            c.pos += 1;
            c.any_text()?;
        }
        Some(T6_LEN) => {
            c.pos += 1;
            c.body()?;
        }
        _ => {}
    }
    c.done()
}

/// A map entry: the key unless 0, the value unless empty (checked by `value`); its key.
fn entry(entry: &[u8], value: fn(&[u8]) -> Option<()>) -> Option<i64> {
    let mut c = Canon::new(entry);
    let mut key = 0;
    if c.eat(T1_VARINT) {
        key = c.varint()? as i64;
        if key == 0 {
            return None;
        }
    }
    if c.eat(T2_LEN) {
        value(c.nonempty()?)?;
    }
    c.done()?;
    Some(key)
}

/// An XEventMetadata: `id`, `name`, `metadata`, `display_name`, the stats, `child_id` packed.
fn event_metadata(md: &[u8]) -> Option<()> {
    let mut c = Canon::new(md);
    if c.eat(T1_VARINT) {
        c.nonzero()?;
    }
    if c.eat(T2_LEN) {
        c.text()?;
    }
    if c.eat(T3_LEN) {
        c.nonempty()?;
    }
    if c.eat(T4_LEN) {
        c.text()?;
    }
    while c.eat(T5_LEN) {
        stat(c.body()?)?;
    }
    if c.eat(T6_LEN) {
        let mut packed = Canon::new(c.nonempty()?);
        while !packed.at_end() {
            packed.varint()?;
        }
    }
    c.done()
}

/// An XStatMetadata: `id`, `name`, `description`.
fn stat_metadata(md: &[u8]) -> Option<()> {
    let mut c = Canon::new(md);
    if c.eat(T1_VARINT) {
        c.nonzero()?;
    }
    if c.eat(T2_LEN) {
        c.text()?;
    }
    if c.eat(T3_LEN) {
        c.text()?;
    }
    c.done()
}

fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A cursor that accepts only canonical encodings: `None` from any method means "not canonical"
/// (which includes "not valid").
struct Canon<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Canon<'a> {
    #[inline]
    fn new(buf: &'a [u8]) -> Self {
        Canon { buf, pos: 0 }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    #[inline]
    fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// `Some` when the whole message has been read.
    #[inline]
    fn done(&self) -> Option<()> {
        (self.pos == self.buf.len()).then_some(())
    }

    /// Takes the tag byte `tag` if it comes next.
    #[inline(always)]
    fn eat(&mut self, tag: u8) -> bool {
        if self.peek() == Some(tag) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// A varint in its shortest form.
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        let first = self.peek()?;
        if first < 0x80 {
            self.pos += 1;
            return Some(u64::from(first));
        }
        self.long_varint()
    }

    fn long_varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = *self.buf.get(self.pos + i)?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                // A last byte of 0 could have been left out; the tenth byte holds one bit only
                // (more is refused by decoding).
                if b == 0 || (i == 9 && b > 1) {
                    return None;
                }
                self.pos += i + 1;
                return Some(value);
            }
        }
        None
    }

    /// A varint that is not 0 (a zero scalar is left out).
    #[inline(always)]
    fn nonzero(&mut self) -> Option<()> {
        (self.varint()? != 0).then_some(())
    }

    /// A length-delimited value, its length in its shortest form.
    #[inline(always)]
    fn body(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.varint()?).ok()?;
        let end = self.pos.checked_add(len)?;
        let body = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(body)
    }

    /// A length-delimited value that is not empty (an empty one is left out).
    #[inline]
    fn nonempty(&mut self) -> Option<&'a [u8]> {
        self.body().filter(|b| !b.is_empty())
    }

    /// A string that is not empty.
    #[inline]
    fn text(&mut self) -> Option<()> {
        std::str::from_utf8(self.nonempty()?).ok().map(drop)
    }

    /// A string, empty or not.
    #[inline]
    fn any_text(&mut self) -> Option<()> {
        std::str::from_utf8(self.body()?).ok().map(drop)
    }

    fn skip(&mut self, n: usize) -> Option<()> {
        let end = self.pos.checked_add(n)?;
        if end > self.buf.len() {
            return None;
        }
        self.pos = end;
        Some(())
    }
}

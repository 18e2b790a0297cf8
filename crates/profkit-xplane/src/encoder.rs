//! Encoding an XSpace with each nested message's size computed once.
//!
//! prost writes a nested message's length before its body, and gets that length by walking the
//! message; the walk is repeated at every level of nesting, so a stat four levels down is measured
//! five times. Here one pass measures every plane, line and event bottom-up into a table, in the
//! order the writing pass meets them, and the writing pass takes the lengths from it. The output
//! is byte for byte what prost writes (fields in tag order, a oneof where its lowest tag goes, proto3 defaults left out, set oneofs
//! written even when zero, map entries without a default key or value, `child_id` packed).

use crate::proto::{
    XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat,
};

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;

/// The key byte of field `number` (all fields of the schema are below 16) with `wire_type`.
const fn key(number: u8, wire_type: u8) -> u8 {
    (number << 3) | wire_type
}

#[inline]
fn varint_len(v: u64) -> usize {
    // 1 byte per 7 bits, at least one.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// A length-delimited field of `len` bytes, key included.
#[inline]
fn field_len(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

/// An int64 (or uint64) field left out when zero, key included.
#[inline]
fn int_len(v: u64) -> usize {
    if v == 0 { 0 } else { 1 + varint_len(v) }
}

/// A string or bytes field left out when empty, key included.
#[inline]
fn bytes_len(len: usize) -> usize {
    if len == 0 { 0 } else { field_len(len) }
}

fn stat_len(stat: &XStat) -> usize {
    let value = match &stat.value {
        None => 0,
        Some(x_stat::Value::DoubleValue(_)) => 9,
        Some(x_stat::Value::Uint64Value(v) | x_stat::Value::RefValue(v)) => 1 + varint_len(*v),
        Some(x_stat::Value::Int64Value(v)) => 1 + varint_len(*v as u64),
        Some(x_stat::Value::StrValue(v)) => field_len(v.len()),
        Some(x_stat::Value::BytesValue(v)) => field_len(v.len()),
    };
    int_len(stat.metadata_id as u64) + value
}

fn stats_len(stats: &[XStat]) -> usize {
    stats.iter().map(|s| field_len(stat_len(s))).sum()
}

fn event_len(event: &XEvent) -> usize {
    let data = match event.data {
        None => 0,
        Some(x_event::Data::OffsetPs(v) | x_event::Data::NumOccurrences(v)) => {
            1 + varint_len(v as u64)
        }
    };
    int_len(event.metadata_id as u64)
        + data
        + int_len(event.duration_ps as u64)
        + stats_len(&event.stats)
}

fn event_metadata_len(md: &XEventMetadata) -> usize {
    let children: usize = md.child_id.iter().map(|&c| varint_len(c as u64)).sum();
    int_len(md.id as u64)
        + bytes_len(md.name.len())
        + bytes_len(md.metadata.len())
        + bytes_len(md.display_name.len())
        + stats_len(&md.stats)
        + if md.child_id.is_empty() {
            0
        } else {
            field_len(children)
        }
}

fn stat_metadata_len(md: &XStatMetadata) -> usize {
    int_len(md.id as u64) + bytes_len(md.name.len()) + bytes_len(md.description.len())
}

/// A map entry's body: the key unless 0, the value unless it is the default (`value_len` 0).
fn entry_len(key: i64, value_len: usize) -> usize {
    int_len(key as u64)
        + if value_len == 0 {
            0
        } else {
            field_len(value_len)
        }
}

/// Measures `plane` into `sizes` (its own length first, then each line's, each followed by its
/// events'), returning its length.
fn measure_plane(plane: &XPlane, sizes: &mut Vec<usize>) -> usize {
    let slot = sizes.len();
    sizes.push(0);
    let mut len = int_len(plane.id as u64) + bytes_len(plane.name.len());
    for line in &plane.lines {
        len += field_len(measure_line(line, sizes));
    }
    for (key, md) in &plane.event_metadata {
        len += field_len(entry_len(*key, event_metadata_len(md)));
    }
    for (key, md) in &plane.stat_metadata {
        len += field_len(entry_len(*key, stat_metadata_len(md)));
    }
    len += stats_len(&plane.stats);
    if let Some(s) = sizes.get_mut(slot) {
        *s = len;
    }
    len
}

fn measure_line(line: &XLine, sizes: &mut Vec<usize>) -> usize {
    let slot = sizes.len();
    sizes.push(0);
    let mut len = int_len(line.id as u64)
        + bytes_len(line.name.len())
        + int_len(line.timestamp_ns as u64)
        + int_len(line.duration_ps as u64)
        + int_len(line.display_id as u64)
        + bytes_len(line.display_name.len());
    for event in &line.events {
        let event_len = event_len(event);
        sizes.push(event_len);
        len += field_len(event_len);
    }
    if let Some(s) = sizes.get_mut(slot) {
        *s = len;
    }
    len
}

/// The writing pass, taking nested lengths from the table in the order they were measured.
struct Writer<'s> {
    out: Vec<u8>,
    sizes: std::slice::Iter<'s, usize>,
}

impl Writer<'_> {
    #[inline]
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.out.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    #[inline]
    fn int(&mut self, number: u8, v: u64) {
        if v != 0 {
            self.out.push(key(number, VARINT));
            self.varint(v);
        }
    }

    #[inline]
    fn len_field(&mut self, number: u8, bytes: &[u8]) {
        self.out.push(key(number, LEN));
        self.varint(bytes.len() as u64);
        self.out.extend_from_slice(bytes);
    }

    #[inline]
    fn bytes(&mut self, number: u8, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.len_field(number, bytes);
        }
    }

    #[inline]
    fn header(&mut self, number: u8, len: usize) {
        self.out.push(key(number, LEN));
        self.varint(len as u64);
    }

    fn next_size(&mut self) -> usize {
        self.sizes.next().copied().unwrap_or(0)
    }

    fn stat(&mut self, number: u8, stat: &XStat) {
        self.header(number, stat_len(stat));
        self.int(1, stat.metadata_id as u64);
        match &stat.value {
            None => {}
            Some(x_stat::Value::DoubleValue(v)) => {
                self.out.push(key(2, FIXED64));
                self.out.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            Some(x_stat::Value::Uint64Value(v)) => {
                self.out.push(key(3, VARINT));
                self.varint(*v);
            }
            Some(x_stat::Value::Int64Value(v)) => {
                self.out.push(key(4, VARINT));
                self.varint(*v as u64);
            }
            Some(x_stat::Value::StrValue(v)) => self.len_field(5, v.as_bytes()),
            Some(x_stat::Value::BytesValue(v)) => self.len_field(6, v),
            Some(x_stat::Value::RefValue(v)) => {
                self.out.push(key(7, VARINT));
                self.varint(*v);
            }
        }
    }

    fn plane(&mut self, plane: &XPlane) {
        let len = self.next_size();
        self.header(1, len);
        self.plane_body(plane);
    }

    fn plane_body(&mut self, plane: &XPlane) {
        self.plane_head(plane);
        for line in &plane.lines {
            self.line(line);
        }
        self.plane_tail(plane);
    }

    /// The fields of a plane before its lines: id and name.
    fn plane_head(&mut self, plane: &XPlane) {
        self.int(1, plane.id as u64);
        self.bytes(2, plane.name.as_bytes());
    }

    /// The fields of a plane after its lines: the metadata maps and the plane's stats.
    fn plane_tail(&mut self, plane: &XPlane) {
        for (key, md) in &plane.event_metadata {
            let value_len = event_metadata_len(md);
            self.header(4, entry_len(*key, value_len));
            self.int(1, *key as u64);
            if value_len != 0 {
                self.header(2, value_len);
                self.int(1, md.id as u64);
                self.bytes(2, md.name.as_bytes());
                self.bytes(3, &md.metadata);
                self.bytes(4, md.display_name.as_bytes());
                for stat in &md.stats {
                    self.stat(5, stat);
                }
                if !md.child_id.is_empty() {
                    let packed: usize = md.child_id.iter().map(|&c| varint_len(c as u64)).sum();
                    self.header(6, packed);
                    for &c in &md.child_id {
                        self.varint(c as u64);
                    }
                }
            }
        }
        for (key, md) in &plane.stat_metadata {
            let value_len = stat_metadata_len(md);
            self.header(5, entry_len(*key, value_len));
            self.int(1, *key as u64);
            if value_len != 0 {
                self.header(2, value_len);
                self.int(1, md.id as u64);
                self.bytes(2, md.name.as_bytes());
                self.bytes(3, md.description.as_bytes());
            }
        }
        for stat in &plane.stats {
            self.stat(6, stat);
        }
    }

    fn line(&mut self, line: &XLine) {
        let len = self.next_size();
        self.header(3, len);
        self.line_head(line);
        for event in &line.events {
            let len = self.next_size();
            self.event(event, len);
        }
        self.line_tail(line);
    }

    /// The fields of a line before its events: id, name, timestamp.
    fn line_head(&mut self, line: &XLine) {
        self.int(1, line.id as u64);
        self.bytes(2, line.name.as_bytes());
        self.int(3, line.timestamp_ns as u64);
    }

    /// The fields of a line after its events: duration, display id and name.
    fn line_tail(&mut self, line: &XLine) {
        self.int(9, line.duration_ps as u64);
        self.int(10, line.display_id as u64);
        self.bytes(11, line.display_name.as_bytes());
    }

    /// One element of `XLine.events` whose body is `len` bytes.
    fn event(&mut self, event: &XEvent, len: usize) {
        self.header(4, len);
        self.int(1, event.metadata_id as u64);
        // prost writes a oneof where its lowest tag would go, whichever member is set.
        match event.data {
            None => {}
            Some(x_event::Data::OffsetPs(v)) => {
                self.out.push(key(2, VARINT));
                self.varint(v as u64);
            }
            Some(x_event::Data::NumOccurrences(v)) => {
                self.out.push(key(5, VARINT));
                self.varint(v as u64);
            }
        }
        self.int(3, event.duration_ps as u64);
        for stat in &event.stats {
            self.stat(4, stat);
        }
    }
}

/// Encodes `space` as prost would, measuring each nested message once.
pub(crate) fn encode_space(space: &XSpace) -> Vec<u8> {
    let mut sizes = Vec::new();
    let mut total = 0;
    for plane in &space.planes {
        total += field_len(measure_plane(plane, &mut sizes));
    }
    for s in space
        .errors
        .iter()
        .chain(&space.warnings)
        .chain(&space.hostnames)
    {
        total += field_len(s.len());
    }
    let mut w = Writer {
        out: Vec::with_capacity(total),
        sizes: sizes.iter(),
    };
    for plane in &space.planes {
        w.plane(plane);
    }
    for s in &space.errors {
        w.len_field(2, s.as_bytes());
    }
    for s in &space.warnings {
        w.len_field(3, s.as_bytes());
    }
    for s in &space.hostnames {
        w.len_field(4, s.as_bytes());
    }
    w.out
}

/// Appends `plane` to `out` as one element of `XSpace.planes` (its key, length and body), as
/// [`encode_space`] writes it. `sizes` is scratch space, kept by the caller to be reused.
pub(crate) fn encode_plane_entry(plane: &XPlane, out: &mut Vec<u8>, sizes: &mut Vec<usize>) {
    sizes.clear();
    let len = measure_plane(plane, sizes);
    out.reserve(field_len(len));
    let mut w = Writer {
        out: std::mem::take(out),
        sizes: sizes.iter(),
    };
    w.plane(plane);
    *out = w.out;
}

/// `plane` encoded on its own (an `XPlane` message), as prost would write it.
pub(crate) fn encode_plane(plane: &XPlane) -> Vec<u8> {
    let mut sizes = Vec::new();
    let len = measure_plane(plane, &mut sizes);
    let mut w = Writer {
        out: Vec::with_capacity(len),
        sizes: sizes.iter(),
    };
    // The plane's own length is the table's first entry; its body starts with its lines'.
    w.next_size();
    w.plane_body(plane);
    w.out
}

/// Appends one string element of `XSpace` field `number` (errors 2, warnings 3, hostnames 4).
pub(crate) fn encode_string_entry(number: u8, s: &str, out: &mut Vec<u8>) {
    let mut w = Writer {
        out: std::mem::take(out),
        sizes: [].iter(),
    };
    w.len_field(number, s.as_bytes());
    *out = w.out;
}

/// Appends the part of `plane`'s body that precedes its lines (id, name), as [`encode_plane`]
/// writes it; with [`encode_plane_tail`] a plane is written around lines that are copied (or
/// written piece by piece) rather than encoded. `plane.lines` is not read.
pub(crate) fn encode_plane_head(plane: &XPlane, out: &mut Vec<u8>) {
    let mut w = Writer {
        out: std::mem::take(out),
        sizes: [].iter(),
    };
    w.plane_head(plane);
    *out = w.out;
}

/// Appends the part of `plane`'s body that follows its lines (metadata maps, plane stats), as
/// [`encode_plane`] writes it. `plane.lines` is not read.
pub(crate) fn encode_plane_tail(plane: &XPlane, out: &mut Vec<u8>) {
    let mut w = Writer {
        out: std::mem::take(out),
        sizes: [].iter(),
    };
    w.plane_tail(plane);
    *out = w.out;
}

/// The length of `line`'s own fields (all but its events), as [`encode_plane`] writes them.
pub(crate) fn line_shell_len(line: &XLine) -> usize {
    int_len(line.id as u64)
        + bytes_len(line.name.len())
        + int_len(line.timestamp_ns as u64)
        + int_len(line.duration_ps as u64)
        + int_len(line.display_id as u64)
        + bytes_len(line.display_name.len())
}

/// The length of one element of `XLine.events` (key and length included) for `event`.
pub(crate) fn event_entry_len(event: &XEvent) -> usize {
    field_len(event_len(event))
}

/// Appends the fields of `line` that precede its events (id, name, timestamp), as
/// [`encode_plane`] writes them; with [`encode_event_entry`] and [`encode_line_tail`] a line is
/// written around events that are copied rather than encoded. `line.events` is not read.
pub(crate) fn encode_line_head(line: &XLine, out: &mut Vec<u8>) {
    let mut w = Writer {
        out: std::mem::take(out),
        sizes: [].iter(),
    };
    w.line_head(line);
    *out = w.out;
}

/// Appends the fields of `line` that follow its events (duration, display id and name), as
/// [`encode_plane`] writes them. `line.events` is not read.
pub(crate) fn encode_line_tail(line: &XLine, out: &mut Vec<u8>) {
    let mut w = Writer {
        out: std::mem::take(out),
        sizes: [].iter(),
    };
    w.line_tail(line);
    *out = w.out;
}

/// Appends `event` as one element of `XLine.events` (key, length, body), as [`encode_plane`]
/// writes it.
pub(crate) fn encode_event_entry(event: &XEvent, out: &mut Vec<u8>) {
    let mut w = Writer {
        out: std::mem::take(out),
        sizes: [].iter(),
    };
    w.event(event, event_len(event));
    *out = w.out;
}

//! The planes merged by name (every plane but the devices'), kept encoded as they are merged.
//!
//! [`merge_planes`] merges a plane into an owned one; merging every host's host planes that way
//! holds the decoded events of every host. A [`HostPlane`] keeps what merging makes of the same
//! planes in pieces instead: the merged plane's metadata and plane stats (owned, and extended
//! with [`PlaneBuilder`] as `merge_planes` extends them, so that every id comes out the same), and
//! each merged line encoded as soon as it is made, its events read through views of the source
//! plane and written with their metadata ids, stat ids and `ref_value`s remapped, then kept in a
//! [`Store`] (a file the caller gave, else memory) until every host is read. At the end the plane
//! is written around its lines under one length. The bytes are those of
//! [`encode_plane`](profkit_xplane::encode_plane) of the plane `merge_planes` builds.
//!
//! What `merge_planes` does that bears on this, and how each is kept:
//! - lines from different hosts never share an id (`merge` renames them apart), and within one
//!   call a source line only ever lands on a line made in that call, so a finished line is never
//!   touched again. Lines made empty are dropped at the start of the next call (its
//!   `remove_empty_lines`): so are their pieces.
//! - source lines that share an id within one plane make one line, whose start is the earliest
//!   start of theirs that carries events (the events already there rebased). When such lines are
//!   adjacent, their starts and names are read first and the events then written once, each
//!   offset as the rebasing sequence leaves it. When they are not (a line id coming back after
//!   other lines), that plane is decoded and merged with `merge_planes` itself, the exact fallback.
//! - metadata is interned by name in the order `merge_planes` meets the names: plane stats, event
//!   metadata in the order the events first use it, then the events' stats line by line.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

use profkit_xplane::constants::{TASK_ENV_PLANE_NAME, stats};
use profkit_xplane::utils::merge_planes;
use profkit_xplane::xview::{Lines, PlaneMetadata, StatValueView, XLineView, XPlaneView};
use profkit_xplane::{PlaneBuilder, StatValue, XLine, XPlane, encode_plane, x_event};

use crate::error::Result;

/// What merging changes in one host's plane before it is merged.
pub(super) struct HostEdit<'h> {
    /// The host, which prefixes every line's display name when there are several.
    pub host: &'h str,
    /// Whether several hosts are merged.
    pub several: bool,
    /// How far the host's lines move (not the `Task Environment`'s).
    pub shift_ns: i64,
    /// Whether that move fits an `i64`; else every moved line is clamped to `i64::MAX`.
    pub shift_fits: bool,
}

/// One merged line, encoded as an element of `XPlane.lines`: its key and length, then its body.
pub(super) struct Piece {
    head: Vec<u8>,
    body: Body,
    /// Without events: removed when the next plane is merged in, as `merge_planes` removes it.
    empty: bool,
}

/// A merged line's body, where the [`Store`] keeps it.
enum Body {
    Memory(Vec<u8>),
    /// `len` bytes from byte `at` of the store's file.
    Spilled {
        at: u64,
        len: u64,
    },
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Memory(bytes) => bytes.len() as u64,
            Body::Spilled { len, .. } => *len,
        }
    }
}

/// Where the merged lines wait until their plane is written (after every host is read): in a
/// file the caller gave, so that memory does not grow with the hosts, else in memory. A line
/// the file does not take (a write fails: a full disk) is kept in memory, and so is every line
/// after it.
pub(super) struct Store {
    file: Option<File>,
    /// The end of what was written to the file.
    end: u64,
    /// A write to the file failed: lines are kept in memory from then on (what the file holds
    /// stays readable).
    full: bool,
}

impl Store {
    /// A store in `file` (an empty file, read and written), or in memory.
    pub(super) fn new(file: Option<File>) -> Self {
        Store {
            file,
            end: 0,
            full: false,
        }
    }

    fn keep(&mut self, body: Vec<u8>) -> Body {
        if !self.full
            && !body.is_empty()
            && let Some(file) = &mut self.file
        {
            let at = self.end;
            match file
                .seek(SeekFrom::Start(at))
                .and_then(|_| file.write_all(&body))
            {
                Ok(()) => {
                    let len = body.len() as u64;
                    self.end += len;
                    return Body::Spilled { at, len };
                }
                Err(_) => self.full = true,
            }
        }
        Body::Memory(body)
    }

    /// Copies `body` to `out`.
    fn copy(&mut self, body: &Body, out: &mut dyn Write) -> Result<()> {
        match body {
            Body::Memory(bytes) => out.write_all(bytes)?,
            Body::Spilled { at, len } => {
                let file = self.file.as_mut().ok_or_else(|| {
                    std::io::Error::other("the merged lines' temporary file is gone")
                })?;
                file.seek(SeekFrom::Start(*at))?;
                let copied = std::io::copy(&mut Read::take(&mut *file, *len), out)?;
                if copied != *len {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the merged lines' temporary file is shorter than what was written to it",
                    )
                    .into());
                }
            }
        }
        Ok(())
    }
}

/// A plane merged by name, its lines encoded (see the module documentation).
pub(super) struct HostPlane {
    name: String,
    /// The merged metadata and plane stats; never any lines.
    shell: XPlane,
    /// Every line id given out so far, to keep hosts' lines apart.
    used: HashSet<i64>,
    lines: Vec<Piece>,
}

impl HostPlane {
    /// An empty merged plane named `name`.
    pub(super) fn new(name: &str) -> Self {
        HostPlane {
            name: name.to_owned(),
            shell: XPlane::default(),
            used: HashSet::new(),
            lines: Vec::new(),
        }
    }

    /// The plane's name.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// Merges one host's plane (named as this one, and checked) into this one; returns how many
    /// of its lines were clamped to the latest start an XSpace holds.
    pub(super) fn merge(
        &mut self,
        view: &XPlaneView<'_>,
        edit: &HostEdit<'_>,
        store: &mut Store,
    ) -> Result<u64> {
        let meta = view.metadata()?;
        let task_env = view.name() == TASK_ENV_PLANE_NAME;
        // The session times of the `Task Environment` are set once all hosts are in.
        let dropped: Vec<i64> = if task_env {
            meta.stats()
                .iter()
                .filter(|m| {
                    m.name() == stats::PROFILE_START_TIME || m.name() == stats::PROFILE_STOP_TIME
                })
                .map(|m| m.key())
                .collect()
        } else {
            Vec::new()
        };
        let shift = Shift {
            on: !task_env,
            ns: edit.shift_ns,
            fits: edit.shift_fits,
        };

        // This host's line ids, renamed apart from the other hosts' ones.
        let mut renamed: HashMap<i64, i64> = HashMap::new();
        let mut clamped = 0u64;
        let mut adjacent = true;
        let mut closed: HashSet<i64> = HashSet::new();
        let mut current: Option<i64> = None;
        for line in view.lines() {
            let line = line?;
            let used = &self.used;
            let id = *renamed.entry(line.id()).or_insert_with(|| {
                let mut id = line.id();
                while used.contains(&id) {
                    id = id.wrapping_add(1);
                }
                id
            });
            if current != Some(id) {
                if let Some(previous) = current {
                    closed.insert(previous);
                }
                adjacent &= !closed.contains(&id);
                current = Some(id);
            }
            clamped += u64::from(shift.apply(line.timestamp_ns()).1);
        }
        self.used.extend(renamed.values().copied());
        // `merge_planes` starts by removing the lines left empty.
        self.lines.retain(|piece| !piece.empty);

        if !adjacent {
            let mut plane = view.to_owned_plane()?;
            plane.stats.retain(|s| !dropped.contains(&s.metadata_id));
            for line in &mut plane.lines {
                line.timestamp_ns = shift.apply(line.timestamp_ns).0;
                line.id = renamed.get(&line.id).copied().unwrap_or(line.id);
                if edit.several {
                    line.display_name = prefixed(edit.host, &line.display_name, &line.name);
                }
            }
            merge_planes(&plane, &mut self.shell);
            for line in std::mem::take(&mut self.shell.lines) {
                self.lines.push(owned_piece(line, store));
            }
            return Ok(clamped);
        }

        let mut builder = PlaneBuilder::new(&mut self.shell);
        for stat in view.stats() {
            let stat = stat?;
            if dropped.contains(&stat.metadata_id()) {
                continue;
            }
            if let Some(value) = stat.value() {
                builder.set_or_add_stat(
                    meta.stat_name(stat.metadata_id()),
                    meta.resolve(value).to_owned_value(),
                );
            }
        }
        // Event metadata in the order the events first use it.
        let mut event_ids: HashMap<i64, i64> = HashMap::new();
        for line in view.lines() {
            for event in line?.events() {
                let source = event?.metadata_id();
                if let Entry::Vacant(slot) = event_ids.entry(source) {
                    slot.insert(copy_event_metadata(meta, source, &mut builder));
                }
            }
        }
        let mut writer = LineWriter {
            meta,
            builder,
            event_ids,
            edit,
            shift,
            stats: Vec::new(),
        };
        let mut lines = view.lines();
        while let Some(first) = lines.next() {
            let first = first?;
            let id = renamed.get(&first.id()).copied().unwrap_or(first.id());
            let piece = writer.group(id, first, &mut lines, &renamed, store)?;
            self.lines.push(piece);
        }
        Ok(clamped)
    }

    /// The merged plane with `id`, encoded as `encode_plane` writes it, in the parts to write one
    /// after the other (the `Task Environment` given the session's earliest start and latest stop).
    pub(super) fn finish(
        mut self,
        id: i64,
        start: Option<u64>,
        stop: Option<u64>,
    ) -> (Vec<u8>, Vec<Piece>, Vec<u8>) {
        if self.name == TASK_ENV_PLANE_NAME {
            let mut builder = PlaneBuilder::new(&mut self.shell);
            if let Some(start) = start {
                builder.set_or_add_stat(stats::PROFILE_START_TIME, start);
            }
            if let Some(stop) = stop {
                builder.set_or_add_stat(stats::PROFILE_STOP_TIME, stop);
            }
        }
        // A plane without lines is written as its head (id, name) then its tail (metadata,
        // stats): one without a name and id is its tail alone.
        let head = encode_plane(&XPlane {
            id,
            name: std::mem::take(&mut self.name),
            ..XPlane::default()
        });
        let tail = encode_plane(&self.shell);
        (head, self.lines, tail)
    }
}

/// Writes a merged plane (as [`HostPlane::finish`] gives it) as one element of `XSpace.planes`:
/// its key, its length, then its parts one after the other, the lines' bodies from `store`.
pub(super) fn write_plane(
    out: &mut dyn Write,
    (head, lines, tail): &(Vec<u8>, Vec<Piece>, Vec<u8>),
    store: &mut Store,
) -> Result<()> {
    let len = lines
        .iter()
        .fold(head.len() as u64 + tail.len() as u64, |n, piece| {
            n + piece.head.len() as u64 + piece.body.len()
        });
    let mut key = vec![0x0a];
    varint(&mut key, len);
    out.write_all(&key)?;
    out.write_all(head)?;
    for piece in lines {
        out.write_all(&piece.head)?;
        store.copy(&piece.body, out)?;
    }
    out.write_all(tail)?;
    Ok(())
}

/// The host's move of its lines' starts.
#[derive(Clone, Copy)]
struct Shift {
    on: bool,
    ns: i64,
    fits: bool,
}

impl Shift {
    /// A line start moved, and whether it was clamped to the latest an XSpace holds.
    fn apply(self, timestamp_ns: i64) -> (i64, bool) {
        if !self.on {
            return (timestamp_ns, false);
        }
        match timestamp_ns.checked_add(self.ns) {
            Some(t) if self.fits => (t, false),
            _ => (i64::MAX, true),
        }
    }
}

/// A line's display name with its host: `host: <display name, else name>`.
fn prefixed(host: &str, display_name: &str, name: &str) -> String {
    let shown = if display_name.is_empty() {
        name
    } else {
        display_name
    };
    format!("{host}: {shown}")
}

/// A merged line that `merge_planes` built, encoded as `encode_plane` writes it.
fn owned_piece(line: XLine, store: &mut Store) -> Piece {
    let empty = line.events.is_empty();
    // A plane with only this line encodes as the line's element alone.
    let body = encode_plane(&XPlane {
        lines: vec![line],
        ..XPlane::default()
    });
    Piece {
        head: Vec::new(),
        body: store.keep(body),
        empty,
    }
}

/// TSL's `CopyEventMetadata` over a view: as `copy_event_metadata` of `merge_planes` does.
fn copy_event_metadata(src: &PlaneMetadata<'_>, src_id: i64, dst: &mut PlaneBuilder<'_>) -> i64 {
    let Some(md) = src.event(src_id) else {
        return dst.event_metadata_id("");
    };
    let dst_id = dst.event_metadata_id(md.name());
    // Children are interned whether or not they are then recorded.
    let children: Vec<i64> = md
        .child_id()
        .iter()
        .filter_map(|&child| src.event(child))
        .map(|child| dst.event_metadata_id(child.name()))
        .collect();
    if let Some(mut out) = dst.event_metadata(dst_id) {
        let (has_display, has_bytes, has_stats, has_children) = {
            let existing = out.metadata();
            (
                !existing.display_name.is_empty(),
                !existing.metadata.is_empty(),
                !existing.stats.is_empty(),
                !existing.child_id.is_empty(),
            )
        };
        if !has_display && !md.raw_display_name().is_empty() {
            out.set_display_name(md.raw_display_name());
        }
        if !has_bytes && !md.metadata().is_empty() {
            out.set_metadata(bytes::Bytes::copy_from_slice(md.metadata()));
        }
        if !has_stats {
            for stat in md.stats() {
                if let Some(value) = stat.value() {
                    let value: StatValue = src.resolve(value).to_owned_value();
                    out.add_stat(src.stat_name(stat.metadata_id()), value);
                }
            }
        }
        if !has_children {
            for child in children {
                out.add_child(child);
            }
        }
    }
    dst_id
}

/// A stat value as it is written: a `ref_value` already remapped.
#[derive(Clone, Copy)]
enum Value<'a> {
    Double(f64),
    Uint64(u64),
    Int64(i64),
    Str(&'a str),
    Bytes(&'a [u8]),
    Ref(u64),
}

/// What a merged line is, as the source lines that make it are met in turn (`merge_planes`'s
/// rules for a destination line).
struct LineState<'a> {
    has_events: bool,
    timestamp_ns: i64,
    name: &'a str,
    display_name: Cow<'a, str>,
}

impl<'a> LineState<'a> {
    fn new() -> Self {
        LineState {
            has_events: false,
            timestamp_ns: 0,
            name: "",
            display_name: Cow::Borrowed(""),
        }
    }

    /// Takes in one source line (its start already moved); returns the offset, in picoseconds,
    /// that its events get on top of their own.
    fn step(&mut self, line: &XLineView<'a>, timestamp_ns: i64, edit: &HostEdit<'_>) -> i128 {
        let mut offset = 0;
        if !self.has_events {
            self.timestamp_ns = timestamp_ns;
            self.name = line.name();
            if self.display_name.is_empty() {
                self.display_name = if edit.several {
                    Cow::Owned(prefixed(edit.host, line.raw_display_name(), line.name()))
                } else {
                    Cow::Borrowed(line.display_name())
                };
            }
        } else {
            if timestamp_ns <= self.timestamp_ns {
                self.timestamp_ns = timestamp_ns;
            } else {
                offset = (i128::from(timestamp_ns) - i128::from(self.timestamp_ns)) * 1000;
            }
            if self.name.is_empty() {
                self.name = line.name();
            }
        }
        if line.event_count() > 0 {
            self.has_events = true;
        }
        offset
    }
}

/// Writes merged lines from one source plane.
struct LineWriter<'m, 'a, 'b, 'e> {
    meta: &'m PlaneMetadata<'a>,
    builder: PlaneBuilder<'b>,
    event_ids: HashMap<i64, i64>,
    edit: &'e HostEdit<'e>,
    shift: Shift,
    /// One event's stats, reused.
    stats: Vec<(i64, Value<'a>)>,
}

impl<'a> LineWriter<'_, 'a, '_, '_> {
    /// The merged line `id` made of `first` and the lines right after it that are renamed to the
    /// same id (taken from `lines`).
    fn group(
        &mut self,
        id: i64,
        first: XLineView<'a>,
        lines: &mut Lines<'a>,
        renamed: &HashMap<i64, i64>,
        store: &mut Store,
    ) -> Result<Piece> {
        let same = |line: &XLineView<'_>| renamed.get(&line.id()).copied() == Some(id);
        // First the line's start and names as the group leaves them.
        let mut state = LineState::new();
        state.step(&first, self.shift.apply(first.timestamp_ns()).0, self.edit);
        let mut size = first.bytes().len();
        let mut count = 1usize;
        let mut ahead = lines.clone();
        loop {
            let mut probe = ahead.clone();
            match probe.next() {
                Some(Ok(line)) if same(&line) => {
                    state.step(&line, self.shift.apply(line.timestamp_ns()).0, self.edit);
                    size = size.saturating_add(line.bytes().len());
                    count += 1;
                    ahead = probe;
                }
                Some(Err(e)) => return Err(e.into()),
                _ => break,
            }
        }
        let final_ts = state.timestamp_ns;

        let mut body = Vec::with_capacity(size.saturating_add(size / 8).saturating_add(64));
        int(&mut body, 0x08, id as u64);
        bytes_field(&mut body, 0x12, state.name.as_bytes());
        int(&mut body, 0x18, final_ts as u64);
        // Then the events, each line's offset as the later, earlier-starting lines rebase it.
        let mut replay = LineState::new();
        let mut empty = true;
        for k in 0..count {
            let line = if k == 0 {
                first
            } else {
                match lines.next() {
                    Some(line) => line?,
                    None => break,
                }
            };
            let offset = replay.step(&line, self.shift.apply(line.timestamp_ns()).0, self.edit);
            let rebase = (i128::from(replay.timestamp_ns) - i128::from(final_ts)) * 1000;
            for event in line.events() {
                self.event(&mut body, &event?, offset, rebase)?;
                empty = false;
            }
        }
        bytes_field(&mut body, 0x5a, state.display_name.as_bytes());
        body.shrink_to_fit();
        let mut head = Vec::with_capacity(11);
        head.push(0x1a);
        varint(&mut head, body.len() as u64);
        Ok(Piece {
            head,
            body: store.keep(body),
            empty,
        })
    }

    /// Writes one event as an element of `XLine.events`.
    fn event(
        &mut self,
        out: &mut Vec<u8>,
        event: &profkit_xplane::xview::XEventView<'a>,
        offset: i128,
        rebase: i128,
    ) -> Result<()> {
        let metadata_id = self
            .event_ids
            .get(&event.metadata_id())
            .copied()
            .unwrap_or(event.metadata_id());
        let (data_key, data) = match event.data() {
            Some(x_event::Data::NumOccurrences(count)) => (0x28, count),
            _ => {
                let placed = saturate(i128::from(event.offset_ps()) + offset);
                // Every later rebase moves the offset later: the sum saturates once.
                (0x10, saturate(i128::from(placed) + rebase))
            }
        };
        self.stats.clear();
        for stat in event.stats() {
            let stat = stat?;
            let Some(value) = stat.value() else { continue };
            let name_id = self
                .builder
                .stat_metadata_id(self.meta.stat_name(stat.metadata_id()));
            let value = match value {
                StatValueView::Double(v) => Value::Double(v),
                StatValueView::Uint64(v) => Value::Uint64(v),
                StatValueView::Int64(v) => Value::Int64(v),
                StatValueView::Str(v) => Value::Str(v),
                StatValueView::Bytes(v) => Value::Bytes(v),
                StatValueView::Ref(_) => {
                    let name = self.meta.resolve(value);
                    let name = name.as_str().unwrap_or("");
                    Value::Ref(self.builder.stat_metadata_id(name) as u64)
                }
            };
            self.stats.push((name_id, value));
        }
        let stats_len: usize = self
            .stats
            .iter()
            .map(|&(id, value)| len_field_len(stat_len(id, value)))
            .sum();
        let len = int_len(metadata_id as u64)
            + 1
            + varint_len(data as u64)
            + int_len(event.duration_ps() as u64)
            + stats_len;
        out.push(0x22);
        varint(out, len as u64);
        int(out, 0x08, metadata_id as u64);
        out.push(data_key);
        varint(out, data as u64);
        int(out, 0x18, event.duration_ps() as u64);
        for &(id, value) in &self.stats {
            out.push(0x22);
            varint(out, stat_len(id, value) as u64);
            int(out, 0x08, id as u64);
            match value {
                Value::Double(v) => {
                    out.push(0x11);
                    out.extend_from_slice(&v.to_bits().to_le_bytes());
                }
                Value::Uint64(v) => {
                    out.push(0x18);
                    varint(out, v);
                }
                Value::Int64(v) => {
                    out.push(0x20);
                    varint(out, v as u64);
                }
                Value::Str(v) => len_field(out, 0x2a, v.as_bytes()),
                Value::Bytes(v) => len_field(out, 0x32, v),
                Value::Ref(v) => {
                    out.push(0x38);
                    varint(out, v);
                }
            }
        }
        Ok(())
    }
}

/// Clamps a wide intermediate to `i64`, as `merge_planes` does.
fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

// Protobuf encoding as the XSpace encoder writes it: fields in tag order, zero integers and empty
// strings left out, a set oneof written even when zero.

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An integer field (one-byte `key`), left out when zero.
fn int(out: &mut Vec<u8>, key: u8, v: u64) {
    if v != 0 {
        out.push(key);
        varint(out, v);
    }
}

fn int_len(v: u64) -> usize {
    if v == 0 { 0 } else { 1 + varint_len(v) }
}

/// A length-delimited field, written even when empty.
fn len_field(out: &mut Vec<u8>, key: u8, bytes: &[u8]) {
    out.push(key);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn len_field_len(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

/// A string or bytes field, left out when empty.
fn bytes_field(out: &mut Vec<u8>, key: u8, bytes: &[u8]) {
    if !bytes.is_empty() {
        len_field(out, key, bytes);
    }
}

fn stat_len(metadata_id: i64, value: Value<'_>) -> usize {
    int_len(metadata_id as u64)
        + match value {
            Value::Double(_) => 9,
            Value::Uint64(v) | Value::Ref(v) => 1 + varint_len(v),
            Value::Int64(v) => 1 + varint_len(v as u64),
            Value::Str(v) => len_field_len(v.len()),
            Value::Bytes(v) => len_field_len(v.len()),
        }
}

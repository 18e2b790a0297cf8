//! Writing XSpaces plane by plane, and merging the XSpaces of several hosts into one.
//!
//! An encoded XSpace is a sequence of top-level fields, so a [`SpaceWriter`] writes each plane as
//! soon as it is ready: [`reencode`] copies a space item by item (memory bounded by the largest
//! plane), and [`merge`] streams the device planes of every host through and keeps the planes it
//! merges by name encoded.
//!
//! Merging, the multi-host case: every host's device planes (`/device:...`) are kept, renumbered
//! so that names stay unique (`/device:GPU:0` of the second host with two GPUs before it becomes
//! `/device:GPU:2`; a name not ending in an ordinal gets ` (<host>)`), each with a `hostname` plane stat and a new plane id. The other planes are
//! merged by name, TSL's `MergePlanes` way (metadata re-interned by name, plane stats copied),
//! with each host's lines kept apart: a line whose id another host already uses gets a free id,
//! and with several hosts every line's display name is prefixed with its host (`host-1: python3`).
//! Times are aligned on the hosts' `profile_start_time` (the `Task Environment` plane): a host
//! that started later has its lines moved later by the difference, and the merged `Task
//! Environment` spans from the earliest start to the latest stop. Host names come from the
//! caller's [`HostInput::host`], else each space's `hostnames`, else from the caller (xprof uses the file name's `<host>.xplane.pb`).
//!
//! Nothing is decoded whole. The first pass reads each host's name and session times through
//! views. The planes merged by name are kept encoded as they are merged (see `host.rs`): their
//! metadata and plane stats owned, each merged line encoded as soon as it is made from views of
//! the source plane, so memory is about the merged planes' encoded size plus one input plane;
//! [`merge_spilled`] keeps the merged lines in a file instead, so that memory is about one input
//! plane whatever the number of hosts. [`merge_decoded`] is the same merge over decoded planes,
//! kept as the reference.
//!
//! A device plane is checked through a view and written with what merging leaves as it was copied
//! as encoded: its lines when the host's times do not move, else each line's events. Only the rest
//! (name, id, metadata, plane stats, the lines' own fields) is decoded and encoded again. Encoders
//! write fields in field-number order (prost does, and so does TensorFlow's C++), so for their
//! files the bytes are those of decoding, editing and encoding; for other input, field order and
//! unknown fields inside the copied lines or events stay as they were, which decodes to the same
//! messages (unknown fields are kept rather than dropped).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom, Write};

use profkit_wire::{read_varint, split_tag};
use profkit_xplane::constants::{TASK_ENV_PLANE_NAME, stats};
use profkit_xplane::utils::merge_planes;
use profkit_xplane::xview::{Normalised, XPlaneView};
use profkit_xplane::{
    PlaneBuilder, PlaneVisitor, RawSpaceItem, ReadOptions, SpaceItem, XLine, XPlane, XSpaceReader,
};
use prost::Message;

use crate::error::Result;

mod host;

use host::{HostEdit, HostPlane, Store};

/// Writes an XSpace one top-level item at a time.
pub struct SpaceWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> SpaceWriter<W> {
    /// A writer to `out`.
    pub fn new(out: W) -> Self {
        SpaceWriter {
            out,
            buf: Vec::new(),
        }
    }

    fn field(&mut self, number: u32, body: &[u8]) -> Result<()> {
        self.buf.clear();
        prost::encoding::encode_key(
            number,
            prost::encoding::WireType::LengthDelimited,
            &mut self.buf,
        );
        prost::encoding::encode_varint(body.len() as u64, &mut self.buf);
        self.out.write_all(&self.buf)?;
        self.out.write_all(body)?;
        Ok(())
    }

    /// Writes a plane (an element of `XSpace.planes`).
    pub fn plane(&mut self, plane: &XPlane) -> Result<()> {
        self.field(1, &profkit_xplane::encode_plane(plane))
    }

    /// Writes an encoded plane as it is.
    pub fn plane_bytes(&mut self, body: &[u8]) -> Result<()> {
        self.field(1, body)
    }

    /// Writes a viewed plane normalised, as [`plane`](Self::plane) writes what it decodes to: its
    /// bytes copied where they are already that, straight to the output, never gathered in a
    /// buffer ([`XPlaneView::write_normalised`]); nothing is written for a plane that does not
    /// decode.
    pub fn plane_view(&mut self, plane: &XPlaneView<'_>) -> Result<Normalised> {
        Ok(plane.write_normalised(&mut self.out)?)
    }

    /// Writes a space item.
    pub fn item(&mut self, item: &SpaceItem) -> Result<()> {
        match item {
            SpaceItem::Plane(plane) => self.plane(plane),
            SpaceItem::Error(s) => self.field(2, s.as_bytes()),
            SpaceItem::Warning(s) => self.field(3, s.as_bytes()),
            SpaceItem::Hostname(s) => self.field(4, s.as_bytes()),
        }
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Copies an encoded XSpace item by item, normalised: each item as decoding and encoding it again
/// writes it (unknown fields dropped, as decoding drops them; fields in field-number order;
/// defaults left out; map entries in key order). A plane, or a line of it, already written that
/// way is copied as it is rather than decoded ([`XPlaneView::normalise`]); the output is the same.
/// `progress` is told the bytes read after each item. Returns the number of planes.
pub fn reencode<R: Read, W: Write>(
    input: R,
    output: W,
    options: ReadOptions,
    mut progress: Option<&mut dyn FnMut(u64)>,
) -> Result<usize> {
    let mut reader = XSpaceReader::new(input, options);
    let mut writer = SpaceWriter::new(output);
    let mut planes = 0;
    loop {
        let before = reader.offset();
        let Some(item) = reader.next_raw() else { break };
        match item? {
            RawSpaceItem::Plane(plane) => {
                planes += 1;
                writer.plane_view(&plane.view()?)?;
            }
            RawSpaceItem::Error(s) => writer.item(&SpaceItem::Error(s))?,
            RawSpaceItem::Warning(s) => writer.item(&SpaceItem::Warning(s))?,
            RawSpaceItem::Hostname(s) => writer.item(&SpaceItem::Hostname(s))?,
        }
        if let Some(report) = progress.as_mut() {
            report(reader.offset() - before);
        }
    }
    writer.finish()?;
    Ok(planes)
}

/// [`reencode`] by decoding every plane and encoding it again: the same output, slower and with
/// a decoded plane in memory. Kept as the reference that `reencode`'s copying is tested against.
pub fn reencode_decoded<R: Read, W: Write>(
    input: R,
    output: W,
    options: ReadOptions,
    mut progress: Option<&mut dyn FnMut(u64)>,
) -> Result<usize> {
    let mut reader = XSpaceReader::new(input, options);
    let mut writer = SpaceWriter::new(output);
    let mut planes = 0;
    loop {
        let before = reader.offset();
        let Some(item) = reader.next() else { break };
        let item = item?;
        if matches!(item, SpaceItem::Plane(_)) {
            planes += 1;
        }
        writer.item(&item)?;
        if let Some(report) = progress.as_mut() {
            report(reader.offset() - before);
        }
    }
    writer.finish()?;
    Ok(planes)
}

/// One host's space to merge: a name to use when the space names no host (or one to use
/// whatever it says), and the encoded space, which is read twice.
pub struct HostInput<R> {
    /// The host name when the space has no `hostnames` (for example the file name's host).
    pub fallback_host: String,
    /// The host name to use whatever the space's `hostnames` say (the user's choice).
    pub host: Option<String>,
    /// The encoded space.
    pub reader: R,
}

/// What a merge wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeSummary {
    /// The hosts, in input order.
    pub hosts: Vec<String>,
    /// Planes written.
    pub planes: usize,
    /// What the merge had to change beyond aligning times: hosts whose session starts so long
    /// after the earliest that their line times pass what an XSpace holds (nanoseconds in an
    /// `i64`), written as the latest it holds.
    pub warnings: Vec<String>,
}

fn start_stop(plane: &XPlane) -> (Option<u64>, Option<u64>) {
    let visitor = PlaneVisitor::new(plane);
    let get = |name: &str| {
        visitor
            .stat(name)
            .and_then(|s| s.value())
            .and_then(|v| v.as_u64())
    };
    (
        get(stats::PROFILE_START_TIME),
        get(stats::PROFILE_STOP_TIME),
    )
}

/// A device plane's new name: renumbered among the devices of its kind (`/device:GPU:<n>`), or
/// with its host when it has no ordinal and there are several hosts.
fn device_name(
    name: &str,
    device_counts: &mut BTreeMap<String, u64>,
    several: bool,
    host: &str,
) -> String {
    match name.rsplit_once(':') {
        Some((prefix, ordinal))
            if !ordinal.is_empty() && ordinal.bytes().all(|b| b.is_ascii_digit()) =>
        {
            let prefix = format!("{prefix}:");
            let count = device_counts.entry(prefix.clone()).or_default();
            let renamed = format!("{prefix}{count}");
            *count += 1;
            renamed
        }
        _ if several => format!("{name} ({host})"),
        _ => name.to_owned(),
    }
}

/// What merging changes in a device plane.
struct DeviceEdit {
    name: String,
    id: i64,
    host: String,
    shift_ns: i64,
    shift_fits: bool,
}

/// Moves a line's start by the host's shift (the latest time an XSpace holds when it passes it);
/// whether it was clamped.
fn shift_line(line: &mut XLine, edit: &DeviceEdit) -> bool {
    match line.timestamp_ns.checked_add(edit.shift_ns) {
        Some(t) if edit.shift_fits => {
            line.timestamp_ns = t;
            false
        }
        _ => {
            line.timestamp_ns = i64::MAX;
            true
        }
    }
}

/// The top-level fields of an encoded message, each `(number, its bytes from the tag on)`;
/// `None` for a group or anything malformed (the caller then decodes instead).
fn fields(bytes: &[u8]) -> Option<Vec<(u64, &[u8])>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let start = pos;
        let (number, wire_type) = split_tag(read_varint(bytes, &mut pos).ok()?);
        let len = match wire_type {
            0 => {
                read_varint(bytes, &mut pos).ok()?;
                0
            }
            1 => 8,
            2 => usize::try_from(read_varint(bytes, &mut pos).ok()?).ok()?,
            5 => 4,
            _ => return None,
        };
        pos = pos.checked_add(len).filter(|&end| end <= bytes.len())?;
        out.push((number, bytes.get(start..pos)?));
    }
    Some(out)
}

/// `encoded` (a message prost wrote, so its fields in increasing order) with `middle` put where
/// its fields numbered `at` would be: after those below, before those above.
fn splice(encoded: &[u8], at: u64, middle: &[&[u8]]) -> Option<Vec<u8>> {
    let parts = fields(encoded)?;
    let mut out = Vec::with_capacity(encoded.len() + middle.iter().map(|m| m.len()).sum::<usize>());
    let mut placed = false;
    for (number, bytes) in parts {
        if number > at && !placed {
            middle.iter().for_each(|m| out.extend_from_slice(m));
            placed = true;
        }
        out.extend_from_slice(bytes);
    }
    if !placed {
        middle.iter().for_each(|m| out.extend_from_slice(m));
    }
    Some(out)
}

/// A device plane as merging writes it (renamed, renumbered, a `hostname` stat, its lines moved by
/// the host's shift) and the number of lines whose start was clamped. With `copy`, what merging
/// does not change is copied as it was encoded: the plane's lines when there is no shift, else each
/// line's events; only the rest is decoded and encoded again. For an input prost (or profkit)
/// wrote, the bytes are those of decoding the plane, editing it and encoding it, which is what
/// happens without `copy` (or when the plane holds groups).
fn device_plane(bytes: &[u8], edit: &DeviceEdit, copy: bool) -> Result<(Vec<u8>, u64)> {
    let edit_plane = |plane: &mut XPlane| {
        plane.name = edit.name.clone();
        plane.id = edit.id;
        PlaneBuilder::new(plane).set_or_add_stat("hostname", edit.host.clone());
    };
    let copied = if copy { fields(bytes) } else { None };
    let Some(parts) = copied else {
        let mut plane = XPlaneView::new(bytes)?.to_owned_plane()?;
        edit_plane(&mut plane);
        let mut clamped = 0;
        for line in &mut plane.lines {
            clamped += u64::from(shift_line(line, edit));
        }
        return Ok((profkit_xplane::encode_plane(&plane), clamped));
    };
    let mut rest = Vec::new();
    let mut lines: Vec<&[u8]> = Vec::new();
    for (number, field) in &parts {
        if *number == 3 {
            lines.push(field);
        } else {
            rest.extend_from_slice(field);
        }
    }
    let mut plane = XPlane::decode(&rest[..]).map_err(|_| corrupt())?;
    edit_plane(&mut plane);
    let mut clamped = 0;
    let moved: Vec<Vec<u8>>;
    let lines: Vec<&[u8]> = if edit.shift_ns == 0 && edit.shift_fits {
        lines
    } else {
        let mut out = Vec::with_capacity(lines.len());
        for field in lines {
            // The line's body: past its tag (1 byte, field 3) and its length.
            let mut pos = 1;
            read_varint(field, &mut pos).map_err(|_| corrupt())?;
            let body = field.get(pos..).ok_or_else(corrupt)?;
            let line_fields = fields(body).ok_or_else(corrupt)?;
            let mut head = Vec::new();
            let mut events: Vec<&[u8]> = Vec::new();
            for (number, f) in &line_fields {
                if *number == 4 {
                    events.push(f);
                } else {
                    head.extend_from_slice(f);
                }
            }
            let mut line = XLine::decode(&head[..]).map_err(|_| corrupt())?;
            clamped += u64::from(shift_line(&mut line, edit));
            let body = splice(&line.encode_to_vec(), 4, &events).ok_or_else(corrupt)?;
            let mut encoded = Vec::with_capacity(body.len() + 11);
            prost::encoding::encode_key(
                3,
                prost::encoding::WireType::LengthDelimited,
                &mut encoded,
            );
            prost::encoding::encode_varint(body.len() as u64, &mut encoded);
            encoded.extend_from_slice(&body);
            out.push(encoded);
        }
        moved = out;
        moved.iter().map(Vec::as_slice).collect()
    };
    let body = splice(&profkit_xplane::encode_plane(&plane), 3, &lines).ok_or_else(corrupt)?;
    Ok((body, clamped))
}

/// A plane the view checked did not split into fields (never expected).
fn corrupt() -> crate::Error {
    crate::Error::Unsupported("a checked plane does not split into its fields".into())
}

/// One host's name and session times, read through views (no plane is decoded). Every plane is
/// checked, so that a damaged input fails here, before anything is written, as it does when the
/// first pass decodes.
fn session<R: Read + Seek>(
    input: &mut HostInput<R>,
    options: ReadOptions,
) -> Result<(String, Option<u64>, Option<u64>)> {
    let origin = input.reader.stream_position()?;
    let mut host = None;
    let mut start = None;
    let mut stop = None;
    let mut reader = XSpaceReader::new(&mut input.reader, options);
    while let Some(item) = reader.next_raw() {
        match item? {
            RawSpaceItem::Hostname(h) if host.is_none() => host = Some(h),
            RawSpaceItem::Plane(raw) => {
                let view = raw.view()?;
                view.check()?;
                if view.name() == TASK_ENV_PLANE_NAME && start.is_none() {
                    let meta = view.metadata()?;
                    // As `PlaneVisitor::stat`: the first plane stat of the first metadata so named.
                    let get = |name: &str| -> Result<Option<u64>> {
                        let Some(id) = meta.stat_id(name) else {
                            return Ok(None);
                        };
                        for stat in view.stats() {
                            let stat = stat?;
                            if stat.metadata_id() == id {
                                return Ok(stat.value().and_then(|v| meta.resolve(v).as_u64()));
                            }
                        }
                        Ok(None)
                    };
                    start = get(stats::PROFILE_START_TIME)?;
                    if let Some(b) = get(stats::PROFILE_STOP_TIME)? {
                        stop = Some(stop.map_or(b, |s: u64| s.max(b)));
                    }
                }
            }
            _ => {}
        }
    }
    input.reader.seek(SeekFrom::Start(origin))?;
    let host = input
        .host
        .clone()
        .or(host)
        .unwrap_or_else(|| input.fallback_host.clone());
    Ok((host, start, stop))
}

/// Merges the spaces of several hosts into one (see the module documentation). Memory is about
/// the encoded size of the merged host planes plus one input plane: device planes are written
/// as they are read, and the planes merged by name are kept encoded as they are merged (see
/// `host.rs`), not decoded. The output is that of [`merge_decoded`]. [`merge_spilled`] keeps
/// the merged planes in a file instead.
pub fn merge<R: Read + Seek, W: Write>(
    inputs: &mut [HostInput<R>],
    output: W,
    options: ReadOptions,
) -> Result<MergeSummary> {
    merge_spilled(inputs, output, options, None)
}

/// [`merge`] with the lines of the planes merged by name kept in `spill` (an empty file opened
/// for reading and writing, such as an unnamed temporary file) until those planes are written,
/// after every host is read: memory is then about one input plane and the merged planes'
/// metadata, whatever the number of hosts, and the file grows to the merged planes' size. A
/// line the file does not take (a write fails) is kept in memory, as without `spill`. The
/// output is the same.
pub fn merge_spilled<R: Read + Seek, W: Write>(
    inputs: &mut [HostInput<R>],
    output: W,
    options: ReadOptions,
    spill: Option<std::fs::File>,
) -> Result<MergeSummary> {
    let mut store = Store::new(spill);
    // First pass: each host's name and session times.
    let mut hosts = Vec::with_capacity(inputs.len());
    let mut starts = Vec::with_capacity(inputs.len());
    let mut stops = Vec::new();
    for input in inputs.iter_mut() {
        let (host, start, stop) = session(input, options)?;
        hosts.push(host);
        starts.push(start);
        stops.extend(stop);
    }
    let earliest = starts.iter().flatten().copied().min();
    let several = inputs.len() > 1;

    let mut writer = SpaceWriter::new(output);
    let mut summary = MergeSummary {
        hosts: hosts.clone(),
        planes: 0,
        warnings: Vec::new(),
    };
    // Planes merged by name, in first-seen order.
    let mut merged: Vec<HostPlane> = Vec::new();
    let mut device_counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut next_device_id: i64 = 0;
    let mut strings: Vec<SpaceItem> = Vec::new();
    for (index, input) in inputs.iter_mut().enumerate() {
        let host = hosts.get(index).cloned().unwrap_or_default();
        let start = starts.get(index).copied().flatten();
        let (shift_ns, shift_fits) = match (start, earliest) {
            (Some(s), Some(e)) => match i64::try_from(s - e) {
                Ok(shift) => (shift, true),
                Err(_) => (i64::MAX, false),
            },
            _ => (0, true),
        };
        let mut clamped_lines = 0u64;
        let mut reader = XSpaceReader::new(&mut input.reader, options);
        while let Some(item) = reader.next_raw() {
            let raw = match item? {
                RawSpaceItem::Plane(raw) => raw,
                RawSpaceItem::Hostname(_) => continue,
                RawSpaceItem::Error(e) => {
                    strings.push(SpaceItem::Error(e));
                    continue;
                }
                RawSpaceItem::Warning(w) => {
                    strings.push(SpaceItem::Warning(w));
                    continue;
                }
            };
            let view = raw.view()?;
            view.check()?;
            if view.name().starts_with("/device:") {
                let edit = DeviceEdit {
                    name: device_name(view.name(), &mut device_counts, several, &host),
                    id: next_device_id,
                    host: host.clone(),
                    shift_ns,
                    shift_fits,
                };
                next_device_id += 1;
                let (body, clamped) = device_plane(raw.bytes(), &edit, true)?;
                clamped_lines += clamped;
                writer.plane_bytes(&body)?;
                summary.planes += 1;
                continue;
            }
            let slot = match merged.iter().position(|p| p.name() == view.name()) {
                Some(slot) => slot,
                None => {
                    merged.push(HostPlane::new(view.name()));
                    merged.len() - 1
                }
            };
            let Some(dst) = merged.get_mut(slot) else {
                continue;
            };
            let edit = HostEdit {
                host: &host,
                several,
                shift_ns,
                shift_fits,
            };
            clamped_lines += dst.merge(&view, &edit, &mut store)?;
        }
        if clamped_lines > 0 {
            summary.warnings.push(format!(
                "host {host}: its session starts {} ns after the earliest host's, so {clamped_lines} of its lines start later than an XSpace holds (nanoseconds in an i64); they are written at the latest time an XSpace holds",
                match (start, earliest) {
                    (Some(s), Some(e)) => s - e,
                    _ => 0,
                }
            ));
        }
    }
    let latest = stops.iter().copied().max();
    for (id, plane) in (next_device_id..).zip(merged) {
        let parts = plane.finish(id, earliest, latest);
        host::write_plane(&mut writer.out, &parts, &mut store)?;
        summary.planes += 1;
    }
    for item in &strings {
        writer.item(item)?;
    }
    for host in &hosts {
        writer.item(&SpaceItem::Hostname(host.clone()))?;
    }
    writer.finish()?;
    Ok(summary)
}

/// [`merge`] with every plane but the devices' decoded and merged with [`merge_planes`] into
/// owned planes (so holding the decoded events of every host): the same output. Kept as the
/// reference that `merge`'s encoded merging is tested against.
pub fn merge_decoded<R: Read + Seek, W: Write>(
    inputs: &mut [HostInput<R>],
    output: W,
    options: ReadOptions,
) -> Result<MergeSummary> {
    // First pass: each host's name and session times.
    let mut hosts = Vec::with_capacity(inputs.len());
    let mut starts = Vec::with_capacity(inputs.len());
    let mut stops = Vec::new();
    for input in inputs.iter_mut() {
        let origin = input.reader.stream_position()?;
        let mut host = None;
        let mut start = None;
        for item in XSpaceReader::new(&mut input.reader, options) {
            match item? {
                SpaceItem::Hostname(h) if host.is_none() => host = Some(h),
                SpaceItem::Plane(p) if p.name == TASK_ENV_PLANE_NAME && start.is_none() => {
                    let (a, b) = start_stop(&p);
                    start = a;
                    stops.extend(b);
                }
                _ => {}
            }
        }
        input.reader.seek(SeekFrom::Start(origin))?;
        hosts.push(
            input
                .host
                .clone()
                .or(host)
                .unwrap_or_else(|| input.fallback_host.clone()),
        );
        starts.push(start);
    }
    let earliest = starts.iter().flatten().copied().min();
    let several = inputs.len() > 1;

    let mut writer = SpaceWriter::new(output);
    let mut summary = MergeSummary {
        hosts: hosts.clone(),
        planes: 0,
        warnings: Vec::new(),
    };
    // Planes merged by name, in first-seen order, with the line ids each holds.
    let mut merged: Vec<XPlane> = Vec::new();
    let mut merged_ids: Vec<HashSet<i64>> = Vec::new();
    let mut device_counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut next_device_id: i64 = 0;
    let mut strings: Vec<SpaceItem> = Vec::new();
    for (index, input) in inputs.iter_mut().enumerate() {
        let host = hosts.get(index).cloned().unwrap_or_default();
        let shift_ns = match (starts.get(index).copied().flatten(), earliest) {
            (Some(s), Some(e)) => i64::try_from(s - e).unwrap_or(i64::MAX),
            _ => 0,
        };
        let shift_fits = match (starts.get(index).copied().flatten(), earliest) {
            (Some(s), Some(e)) => i64::try_from(s - e).is_ok(),
            _ => true,
        };
        let mut clamped_lines = 0u64;
        let mut reader = XSpaceReader::new(&mut input.reader, options);
        while let Some(item) = reader.next_raw() {
            let raw = match item? {
                RawSpaceItem::Plane(raw) => raw,
                RawSpaceItem::Hostname(_) => continue,
                RawSpaceItem::Error(e) => {
                    strings.push(SpaceItem::Error(e));
                    continue;
                }
                RawSpaceItem::Warning(w) => {
                    strings.push(SpaceItem::Warning(w));
                    continue;
                }
            };
            // A device plane's lines are only moved in time: their events are copied as they
            // were encoded, never decoded (see `device_plane`).
            let name = {
                let view = raw.view()?;
                view.check()?;
                view.name().to_owned()
            };
            if name.starts_with("/device:") {
                let edit = DeviceEdit {
                    name: device_name(&name, &mut device_counts, several, &host),
                    id: next_device_id,
                    host: host.clone(),
                    shift_ns,
                    shift_fits,
                };
                next_device_id += 1;
                let (body, clamped) = device_plane(raw.bytes(), &edit, true)?;
                clamped_lines += clamped;
                writer.plane_bytes(&body)?;
                summary.planes += 1;
                continue;
            }
            let mut plane = raw.decode()?;
            if plane.name == TASK_ENV_PLANE_NAME {
                // Merged below, without its session times (set at the end).
                let ids: Vec<i64> = plane
                    .stat_metadata
                    .iter()
                    .filter(|(_, m)| {
                        m.name == stats::PROFILE_START_TIME || m.name == stats::PROFILE_STOP_TIME
                    })
                    .map(|(id, _)| *id)
                    .collect();
                plane.stats.retain(|s| !ids.contains(&s.metadata_id));
            } else {
                for line in &mut plane.lines {
                    match line.timestamp_ns.checked_add(shift_ns) {
                        Some(t) if shift_fits => line.timestamp_ns = t,
                        _ => {
                            line.timestamp_ns = i64::MAX;
                            clamped_lines += 1;
                        }
                    }
                }
            }
            let slot = match merged.iter().position(|p| p.name == plane.name) {
                Some(slot) => slot,
                None => {
                    merged.push(XPlane {
                        name: plane.name.clone(),
                        ..XPlane::default()
                    });
                    merged_ids.push(HashSet::new());
                    merged.len() - 1
                }
            };
            let (Some(dst), Some(used)) = (merged.get_mut(slot), merged_ids.get_mut(slot)) else {
                continue;
            };
            // Keep this host's lines apart from the others'.
            let mut renamed: HashMap<i64, i64> = HashMap::new();
            for line in &mut plane.lines {
                let id = *renamed.entry(line.id).or_insert_with(|| {
                    let mut id = line.id;
                    while used.contains(&id) {
                        id = id.wrapping_add(1);
                    }
                    id
                });
                line.id = id;
                if several {
                    let shown = if line.display_name.is_empty() {
                        line.name.clone()
                    } else {
                        line.display_name.clone()
                    };
                    line.display_name = format!("{host}: {shown}");
                }
            }
            for id in renamed.values() {
                used.insert(*id);
            }
            merge_planes(&plane, dst);
        }
        if clamped_lines > 0 {
            summary.warnings.push(format!(
                "host {host}: its session starts {} ns after the earliest host's, so {clamped_lines} of its lines start later than an XSpace holds (nanoseconds in an i64); they are written at the latest time an XSpace holds",
                match (starts.get(index).copied().flatten(), earliest) {
                    (Some(s), Some(e)) => s - e,
                    _ => 0,
                }
            ));
        }
    }
    let latest = stops.iter().copied().max();
    for (id, mut plane) in (next_device_id..).zip(merged) {
        plane.id = id;
        if plane.name == TASK_ENV_PLANE_NAME {
            let mut builder = PlaneBuilder::new(&mut plane);
            if let Some(start) = earliest {
                builder.set_or_add_stat(stats::PROFILE_START_TIME, start);
            }
            if let Some(stop) = latest {
                builder.set_or_add_stat(stats::PROFILE_STOP_TIME, stop);
            }
        }
        writer.plane(&plane)?;
        summary.planes += 1;
    }
    for item in &strings {
        writer.item(item)?;
    }
    for host in &hosts {
        writer.item(&SpaceItem::Hostname(host.clone()))?;
    }
    writer.finish()?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use profkit_xplane::{XEvent, XEventMetadata, XStat, XStatMetadata, x_event, x_stat};

    fn plane() -> XPlane {
        let mut plane = XPlane {
            id: 7,
            name: "/device:GPU:3".into(),
            ..XPlane::default()
        };
        plane.event_metadata.insert(
            1,
            XEventMetadata {
                id: 1,
                name: "kernel".into(),
                ..XEventMetadata::default()
            },
        );
        plane.stat_metadata.insert(
            2,
            XStatMetadata {
                id: 2,
                name: "correlation_id".into(),
                ..XStatMetadata::default()
            },
        );
        plane.stats.push(XStat {
            metadata_id: 2,
            value: Some(x_stat::Value::Int64Value(5)),
        });
        for (id, ts) in [(1, 1_000), (2, i64::MAX - 10), (3, 0)] {
            plane.lines.push(XLine {
                id,
                name: format!("Stream #{id}"),
                timestamp_ns: ts,
                duration_ps: 9,
                events: (0..3)
                    .map(|k| XEvent {
                        metadata_id: 1,
                        data: Some(x_event::Data::OffsetPs(k * 10)),
                        duration_ps: 4,
                        stats: vec![XStat {
                            metadata_id: 2,
                            value: Some(x_stat::Value::Uint64Value(k as u64)),
                        }],
                    })
                    .collect(),
                ..XLine::default()
            });
        }
        plane
    }

    /// Copying what merging leaves as it was gives the bytes of decoding, editing and encoding.
    #[test]
    fn device_planes_copied_as_bytes_are_the_decoded_planes_edited() {
        let bytes = plane().encode_to_vec();
        for (shift_ns, shift_fits) in [(0, true), (250, true), (i64::MAX, false)] {
            let edit = DeviceEdit {
                name: "/device:GPU:0".into(),
                id: 3,
                host: "host-2".into(),
                shift_ns,
                shift_fits,
            };
            let copied = device_plane(&bytes, &edit, true).unwrap();
            let decoded = device_plane(&bytes, &edit, false).unwrap();
            assert_eq!(copied, decoded, "shift {shift_ns}");
        }
    }

    /// The normalising rewrite keeps items in file order, copies what is canonical, and writes
    /// what decoding and encoding writes for the rest (here: an unknown field in the space, and
    /// the plane's maps in reverse key order, as TensorFlow's C++ may write them).
    #[test]
    fn reencode_copies_canonical_planes_and_normalises_the_rest() {
        let canonical = plane().encode_to_vec();
        let mut reversed = Vec::new();
        {
            use prost::encoding::{WireType, encode_key, encode_varint};
            let entry = |key: i64, value: Vec<u8>, out: &mut Vec<u8>| {
                let mut body = Vec::new();
                encode_key(1, WireType::Varint, &mut body);
                encode_varint(key as u64, &mut body);
                encode_key(2, WireType::LengthDelimited, &mut body);
                encode_varint(value.len() as u64, &mut body);
                body.extend(value);
                encode_varint(body.len() as u64, out);
                out.extend(body);
            };
            let p = plane();
            reversed.extend([0x08, 7, 0x12, 13]);
            reversed.extend(b"/device:GPU:3");
            for line in &p.lines {
                encode_key(3, WireType::LengthDelimited, &mut reversed);
                encode_varint(line.encoded_len() as u64, &mut reversed);
                line.encode(&mut reversed).unwrap();
            }
            let md = |key: i64, name: &str| XStatMetadata {
                id: key,
                name: name.into(),
                ..XStatMetadata::default()
            };
            for (key, name) in [(9, "b"), (2, "a")] {
                reversed.push(0x2a);
                entry(key, md(key, name).encode_to_vec(), &mut reversed);
            }
        }
        let mut input = Vec::new();
        let mut item = |number: u32, body: &[u8]| {
            prost::encoding::encode_key(
                number,
                prost::encoding::WireType::LengthDelimited,
                &mut input,
            );
            prost::encoding::encode_varint(body.len() as u64, &mut input);
            input.extend_from_slice(body);
        };
        item(4, b"host");
        item(1, &canonical);
        item(15, b"unknown");
        item(1, &reversed);
        item(2, b"error");
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        let mut read = 0;
        let mut progress = |n: u64| read += n;
        let planes = reencode(
            &input[..],
            &mut fast,
            ReadOptions::default(),
            Some(&mut progress),
        )
        .unwrap();
        assert_eq!(planes, 2);
        assert_eq!(read, input.len() as u64);
        reencode_decoded(&input[..], &mut slow, ReadOptions::default(), None).unwrap();
        assert_eq!(fast, slow);
        // The host name first, then the first plane as it was.
        assert_eq!(fast.get(..6), Some(&b"\x22\x04host"[..]));
        assert!(fast.windows(canonical.len()).any(|w| w == canonical));
        let space = profkit_xplane::decode(fast).unwrap();
        assert_eq!(
            space.planes[1].stat_metadata.keys().collect::<Vec<_>>(),
            [&2, &9]
        );
        // A damaged plane fails alike, after the same items.
        // (the second plane's stat metadata named "b" gets an invalid UTF-8 name)
        let mut damaged = input.clone();
        let at = damaged.windows(3).position(|w| w == b"\x12\x01b").unwrap();
        damaged[at + 2] = 0xff;
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        let fast_error = reencode(&damaged[..], &mut fast, ReadOptions::default(), None)
            .map_err(|e| e.to_string());
        let slow_error = reencode_decoded(&damaged[..], &mut slow, ReadOptions::default(), None)
            .map_err(|e| e.to_string());
        assert!(
            fast_error.as_ref().is_err_and(|e| e.contains("UTF-8")),
            "{fast_error:?}"
        );
        assert_eq!(fast_error, slow_error);
        assert_eq!(fast, slow);
    }

    #[test]
    fn fields_refuse_groups_and_truncation() {
        assert_eq!(fields(&[0x08, 0x01]).map(|f| f.len()), Some(1));
        assert!(fields(&[0x0b, 0x0c]).is_none());
        assert!(fields(&[0x12, 0x05, 0x00]).is_none());
    }
}

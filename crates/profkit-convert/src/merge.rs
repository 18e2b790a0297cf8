//! Writing XSpaces plane by plane, and merging the XSpaces of several hosts into one.
//!
//! An encoded XSpace is a sequence of top-level fields, so a [`SpaceWriter`] writes each plane as
//! soon as it is ready: [`reencode`] copies a space item by item (memory bounded by the largest
//! plane), and [`merge`] streams the device planes of every host through.
//!
//! Merging, the multi-host case: every host's device planes (`/device:...`) are kept, renumbered
//! so that names stay unique (`/device:GPU:0` of the second host with two GPUs before it becomes
//! `/device:GPU:2`; a name not ending in an ordinal gets ` (<host>)`), each with a `hostname` plane stat and a new plane id. The other planes are
//! merged by name, TSL's `MergePlanes` way (metadata re-interned by name, plane stats copied),
//! with each host's lines kept apart: a line whose id another host already uses gets a free id,
//! and with several hosts every line's display name is prefixed with its host (`host-1: python3`).
//! Times are aligned on the hosts' `profile_start_time` (the `Task Environment` plane): a host
//! that started later has its lines moved later by the difference, and the merged `Task
//! Environment` spans from the earliest start to the latest stop. Host names come from each
//! space's `hostnames`, else from the caller (xprof uses the file name's `<host>.xplane.pb`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom, Write};

use profkit_xplane::constants::{TASK_ENV_PLANE_NAME, stats};
use profkit_xplane::utils::merge_planes;
use profkit_xplane::{PlaneBuilder, PlaneVisitor, ReadOptions, SpaceItem, XPlane, XSpaceReader};
use prost::Message;

use crate::error::Result;

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
        self.field(1, &plane.encode_to_vec())
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

/// Copies an encoded XSpace item by item, re-encoded (unknown fields are dropped, as decoding
/// drops them). `progress` is told the bytes read after each item. Returns the number of planes.
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

/// One host's space to merge: a name to use when the space names no host, and the encoded
/// space, which is read twice.
pub struct HostInput<R> {
    /// The host name when the space has no `hostnames` (for example the file name's host).
    pub fallback_host: String,
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

/// Merges the spaces of several hosts into one (see the module documentation).
pub fn merge<R: Read + Seek, W: Write>(
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
        hosts.push(host.unwrap_or_else(|| input.fallback_host.clone()));
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
        for item in XSpaceReader::new(&mut input.reader, options) {
            let item = item?;
            let mut plane = match item {
                SpaceItem::Plane(plane) => plane,
                SpaceItem::Hostname(_) => continue,
                other => {
                    strings.push(other);
                    continue;
                }
            };
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
            if plane.name.starts_with("/device:") {
                match plane.name.rsplit_once(':') {
                    Some((prefix, ordinal))
                        if !ordinal.is_empty() && ordinal.bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        let prefix = format!("{prefix}:");
                        let count = device_counts.entry(prefix.clone()).or_default();
                        plane.name = format!("{prefix}{count}");
                        *count += 1;
                    }
                    _ if several => plane.name = format!("{} ({host})", plane.name),
                    _ => {}
                }
                plane.id = next_device_id;
                next_device_id += 1;
                PlaneBuilder::new(&mut plane).set_or_add_stat("hostname", host.clone());
                writer.plane(&plane)?;
                summary.planes += 1;
                continue;
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

//! xprof's step events (`utils/event_span`): for each step (a `group_id`), the markers that
//! delimit it (host step events, device `Steps` events), the typed spans of what ran in it (host
//! compute, kernel launches, device compute in 16 or 32 bits, copies...), its collectives, device
//! memory transfers and, on TPUs, the op metrics of each core.
//!
//! Times are TSL's `Timespan`: a begin and a duration in unsigned 64-bit picoseconds, the end
//! their wrapping sum, so that hostile times wrap as xprof's arithmetic does instead of panicking.

use std::collections::BTreeMap;

use crate::proto::{AllReduceDbResult, AllReduceInfo, DeviceMemoryTransfer, OpMetricsDb};

/// TSL's `Timespan`: `[begin, begin + duration]` in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// The begin, in picoseconds.
    pub begin: u64,
    /// The duration, in picoseconds.
    pub duration: u64,
}

impl Span {
    /// A span of `duration` picoseconds from `begin`.
    pub fn new(begin: u64, duration: u64) -> Self {
        Self { begin, duration }
    }

    /// `FromEndPoints`: empty (at `begin`) when `end` is before `begin`.
    pub fn from_end_points(begin: u64, end: u64) -> Self {
        Self {
            begin,
            duration: end.saturating_sub(begin),
        }
    }

    /// The end, wrapping as 64-bit unsigned arithmetic does.
    pub fn end(&self) -> u64 {
        self.begin.wrapping_add(self.duration)
    }

    /// `Empty`: no begin and no duration (the default span).
    pub fn is_empty(&self) -> bool {
        self.begin == 0 && self.duration == 0
    }

    /// Whether `other` lies within this span, ends included.
    pub fn includes(&self, other: &Span) -> bool {
        self.begin <= other.begin && other.end() <= self.end()
    }

    /// Whether the spans meet, ends included.
    pub fn overlaps(&self, other: &Span) -> bool {
        self.begin <= other.end() && other.begin <= self.end()
    }

    /// `OverlappedDurationPs`.
    pub fn overlapped_duration(&self, other: &Span) -> u64 {
        if !self.overlaps(other) {
            return 0;
        }
        self.end()
            .min(other.end())
            .wrapping_sub(self.begin.max(other.begin))
    }
}

/// xprof's `EventType`: what a span of a step was spent on, by priority (a higher value wins
/// where spans overlap).
pub mod event_type {
    /// No event: idle, or untraced.
    pub const UNKNOWN_TIME: i32 = 0;
    /// The host computes.
    pub const HOST_COMPUTE: i32 = 10;
    /// Host to host copies.
    pub const HOST_TO_HOST: i32 = 70;
    /// Host to device copies (and infeed enqueues).
    pub const HOST_TO_DEVICE: i32 = 80;
    /// The host prepares (launches) device work.
    pub const HOST_PREPARE: i32 = 90;
    /// Collectives (NCCL).
    pub const DEVICE_COLLECTIVES: i32 = 100;
    /// The host waits for input.
    pub const HOST_WAIT_INPUT: i32 = 110;
    /// Device to device copies.
    pub const DEVICE_TO_DEVICE: i32 = 120;
    /// Device to host copies.
    pub const DEVICE_TO_HOST: i32 = 130;
    /// The device computes in 32 bits.
    pub const DEVICE_COMPUTE_32: i32 = 140;
    /// The device computes in 16 bits.
    pub const DEVICE_COMPUTE_16: i32 = 150;
    /// The highest event type (`DEVICE_WAIT_HOST`).
    pub const LAST: i32 = 170;
}

use event_type::*;

/// A typed span (`EventTypeSpan`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypedSpan {
    /// Its [`event_type`].
    pub kind: i32,
    /// When.
    pub span: Span,
}

/// A step's typed spans, packed: each a varint of its kind (shifted left once, the low bit set
/// when both numbers that follow are in nanoseconds), of its begin's difference from the previous
/// span's (zigzag, wrapping) and of its duration, in picoseconds or, when both are whole
/// nanoseconds (as a TensorFlow host's times are), in nanoseconds: about 7 bytes where a
/// [`TypedSpan`] takes 24. The events of a real host step follow each other on their threads, so their begins
/// differ little; hundreds of thousands of them are held until the steps are summed.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TypedSpans {
    bytes: Vec<u8>,
    len: usize,
    last_begin: u64,
}

impl TypedSpans {
    /// No spans.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a span.
    pub fn push(&mut self, event: TypedSpan) {
        use prost::encoding::encode_varint;
        let mut delta = event.span.begin.wrapping_sub(self.last_begin) as i64;
        let mut duration = event.span.duration;
        let ns = delta % 1000 == 0 && duration % 1000 == 0;
        if ns {
            delta /= 1000;
            duration /= 1000;
        }
        encode_varint(
            (u64::from(event.kind as u32) << 1) | u64::from(ns),
            &mut self.bytes,
        );
        encode_varint(((delta << 1) ^ (delta >> 63)) as u64, &mut self.bytes);
        encode_varint(duration, &mut self.bytes);
        self.last_begin = event.span.begin;
        self.len += 1;
    }

    /// How many spans.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The spans, in the order they were pushed.
    pub fn iter(&self) -> TypedSpansIter<'_> {
        TypedSpansIter {
            rest: &self.bytes,
            begin: 0,
            left: self.len,
        }
    }

    /// Appends another list's spans, moving its bytes when this one is empty.
    pub fn append(&mut self, other: TypedSpans) {
        if self.is_empty() {
            *self = other;
        } else {
            self.extend(other.iter());
        }
    }
}

impl Extend<TypedSpan> for TypedSpans {
    fn extend<I: IntoIterator<Item = TypedSpan>>(&mut self, iter: I) {
        for event in iter {
            self.push(event);
        }
    }
}

impl FromIterator<TypedSpan> for TypedSpans {
    fn from_iter<I: IntoIterator<Item = TypedSpan>>(iter: I) -> Self {
        let mut spans = Self::new();
        spans.extend(iter);
        spans
    }
}

impl std::fmt::Debug for TypedSpans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a TypedSpans {
    type Item = TypedSpan;
    type IntoIter = TypedSpansIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The spans of a [`TypedSpans`].
#[derive(Clone)]
pub struct TypedSpansIter<'a> {
    rest: &'a [u8],
    begin: u64,
    left: usize,
}

impl Iterator for TypedSpansIter<'_> {
    type Item = TypedSpan;

    fn next(&mut self) -> Option<TypedSpan> {
        use prost::encoding::decode_varint;
        if self.left == 0 {
            return None;
        }
        // The bytes were written by `push`: they decode (a short read ends the list all the same).
        let code = decode_varint(&mut self.rest).ok()?;
        let kind = (code >> 1) as u32 as i32;
        let ns = code & 1 == 1;
        let delta = decode_varint(&mut self.rest).ok()?;
        let mut duration = decode_varint(&mut self.rest).ok()?;
        let mut delta = ((delta >> 1) as i64) ^ -((delta & 1) as i64);
        if ns {
            // Whole nanoseconds when pushed: the products are the numbers pushed.
            delta = delta.wrapping_mul(1000);
            duration = duration.wrapping_mul(1000);
        }
        self.begin = self.begin.wrapping_add(delta as u64);
        self.left -= 1;
        Some(TypedSpan {
            kind,
            span: Span::new(self.begin, duration),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// What marks a step (`StepMarkerType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerKind {
    /// A host event named `train...`, `test...` or `TraceContext...` (no `/`).
    ExplicitHost,
    /// A host event grouping gave a `step_name`.
    ImplicitHost,
    /// A device `Steps` event.
    Device,
}

/// A step marker: its kind, the core of a device marker, its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepMarker {
    /// Host or device.
    pub kind: MarkerKind,
    /// The core of a device marker.
    pub core_id: Option<u32>,
    /// The marking event's name.
    pub name: String,
    /// The marking event's span.
    pub span: Span,
}

/// One step's events (`StepDetails`).
#[derive(Clone, Debug)]
pub struct StepDetails {
    /// The markers found for the step (several: one per thread or core that marks it).
    pub markers: Vec<StepMarker>,
    /// The typed spans of the step.
    pub events: TypedSpans,
    /// Collectives by core.
    pub collectives: BTreeMap<u32, AllReduceDbResult>,
    /// Host to device, device to host, device to device transfers.
    pub device_memory_transfers: [DeviceMemoryTransfer; 3],
    /// The step's name (`step_name` of its root).
    pub step_name: String,
    /// TPU: the op metrics of each core in this step.
    pub per_core_op_metrics_db: BTreeMap<u32, OpMetricsDb>,
}

impl Default for StepDetails {
    fn default() -> Self {
        Self {
            markers: Vec::new(),
            events: TypedSpans::new(),
            collectives: BTreeMap::new(),
            device_memory_transfers: std::array::from_fn(|_| DeviceMemoryTransfer::default()),
            step_name: String::new(),
            per_core_op_metrics_db: BTreeMap::new(),
        }
    }
}

/// Steps by step id (`group_id`).
pub type StepEvents = BTreeMap<i64, StepDetails>;

impl StepDetails {
    /// `AddCollectiveOpEvent` (the core id kept in 32 bits, as xprof's map key).
    pub fn add_collective(&mut self, core_id: u64, info: AllReduceInfo) {
        self.collectives
            .entry(core_id as u32)
            .or_default()
            .all_reduce_info
            .push(info);
    }

    /// `AddDeviceMemoryTransferEvent`: other event types are ignored.
    pub fn add_memory_transfer(&mut self, kind: i32, span: Span, bytes: u64) {
        let index = match kind {
            HOST_TO_DEVICE => 0,
            DEVICE_TO_HOST => 1,
            DEVICE_TO_DEVICE => 2,
            _ => return,
        };
        let t = &mut self.device_memory_transfers[index];
        t.occurrence = t.occurrence.wrapping_add(1);
        t.time_us += span.duration as f64 / 1_000_000.0;
        t.bytes_transferred = t.bytes_transferred.wrapping_add(bytes);
    }

    /// `StepTime`: the longest device marker, unless the longest host marker includes it (a
    /// host step ending with a device synchronisation); the longest host marker on a host alone.
    pub fn step_time(&self) -> Span {
        let mut host = Span::default();
        let mut device = Span::default();
        for marker in &self.markers {
            let max = if marker.kind == MarkerKind::Device {
                &mut device
            } else {
                &mut host
            };
            if marker.span.duration > max.duration {
                *max = marker.span;
            }
        }
        if device.is_empty() || host.includes(&device) {
            return host;
        }
        device
    }

    /// `StepTimeOnCore`: the longest marker of one core.
    pub fn step_time_on_core(&self, core_id: u32) -> Span {
        let mut max = Span::default();
        for marker in &self.markers {
            if marker.core_id == Some(core_id) && marker.span.duration > max.duration {
                max = marker.span;
            }
        }
        max
    }

    /// `Combine`: markers and events appended, collectives kept where the core already has
    /// some, transfers summed, per-core op metrics replaced, the first name kept.
    pub fn combine(&mut self, other: &StepDetails) {
        self.markers.extend(other.markers.iter().cloned());
        self.events.extend(other.events.iter());
        for (core, db) in &other.collectives {
            self.collectives.entry(*core).or_insert_with(|| db.clone());
        }
        for (dst, src) in self
            .device_memory_transfers
            .iter_mut()
            .zip(&other.device_memory_transfers)
        {
            dst.occurrence = dst.occurrence.wrapping_add(src.occurrence);
            dst.bytes_transferred = dst.bytes_transferred.wrapping_add(src.bytes_transferred);
            dst.time_us += src.time_us;
        }
        for (core, db) in &other.per_core_op_metrics_db {
            self.per_core_op_metrics_db.insert(*core, db.clone());
        }
        if self.step_name.is_empty() {
            self.step_name.clone_from(&other.step_name);
        }
    }

    /// [`combine`](Self::combine) with a step the caller no longer needs: its contents move.
    pub fn absorb(&mut self, other: StepDetails) {
        if self.markers.is_empty() {
            self.markers = other.markers;
        } else {
            self.markers.extend(other.markers);
        }
        self.events.append(other.events);
        for (core, db) in other.collectives {
            self.collectives.entry(core).or_insert(db);
        }
        for (dst, src) in self
            .device_memory_transfers
            .iter_mut()
            .zip(&other.device_memory_transfers)
        {
            dst.occurrence = dst.occurrence.wrapping_add(src.occurrence);
            dst.bytes_transferred = dst.bytes_transferred.wrapping_add(src.bytes_transferred);
            dst.time_us += src.time_us;
        }
        self.per_core_op_metrics_db
            .extend(other.per_core_op_metrics_db);
        if self.step_name.is_empty() {
            self.step_name = other.step_name;
        }
    }

    /// `ToNonOverlapped`: the same step with its events made non-overlapping.
    pub fn to_non_overlapped(&self) -> StepDetails {
        StepDetails {
            events: non_overlapped_events(self.events.iter())
                .into_iter()
                .collect(),
            ..self.clone()
        }
    }
}

/// `UnionCombineStepEvents`: every step of `src` combined into `dst`'s.
pub fn union_combine(src: &StepEvents, dst: &mut StepEvents) {
    for (id, details) in src {
        dst.entry(*id).or_default().combine(details);
    }
}

/// [`union_combine`] of step events the caller no longer needs: their contents move.
pub fn union_combine_from(src: StepEvents, dst: &mut StepEvents) {
    for (id, details) in src {
        dst.entry(id).or_default().absorb(details);
    }
}

/// `IntersectCombineStepEvents`: `dst` becomes `src` when empty; otherwise it keeps only the
/// steps `src` has too, each combined with `src`'s.
pub fn intersect_combine(src: &StepEvents, dst: &mut StepEvents) {
    if dst.is_empty() {
        dst.clone_from(src);
        return;
    }
    dst.retain(|id, details| match src.get(id) {
        Some(other) => {
            details.combine(other);
            true
        }
        None => false,
    });
}

/// [`intersect_combine`] of step events the caller no longer needs: their contents move.
pub fn intersect_combine_from(mut src: StepEvents, dst: &mut StepEvents) {
    if dst.is_empty() {
        *dst = src;
        return;
    }
    dst.retain(|id, details| match src.remove(id) {
        Some(other) => {
            details.absorb(other);
            true
        }
        None => false,
    });
}

/// `ToNonOverlappedEvents`: the time from the first begin to the last end, cut at every begin
/// and end, each piece typed by the highest priority event open over it ([`UNKNOWN_TIME`] where
/// none is).
pub fn non_overlapped_events(events: impl IntoIterator<Item = TypedSpan>) -> Vec<TypedSpan> {
    let mut out = Vec::new();
    non_overlapped_into(events, &mut Vec::new(), &mut out);
    out
}

/// [`non_overlapped_events`] into `out`, with `bounds` as scratch (both cleared first), so
/// that a caller going through many steps allocates once.
pub fn non_overlapped_into(
    events: impl IntoIterator<Item = TypedSpan>,
    bounds: &mut Vec<u128>,
    out: &mut Vec<TypedSpan>,
) {
    // Each bound packed in one key whose order is xprof's: by time, ends before starts, higher
    // types first. Equal keys are equal bounds, so an unstable sort orders them as any sort does.
    let key = |time: u64, kind: i32, start: bool| {
        (u128::from(time) << 64)
            | (u128::from(start) << 32)
            | u128::from(!((kind as u32) ^ 0x8000_0000))
    };
    bounds.clear();
    for e in events {
        bounds.push(key(e.span.begin, e.kind, true));
        bounds.push(key(e.span.end(), e.kind, false));
    }
    bounds.sort_unstable();
    let mut counts = [0i64; LAST as usize + 1];
    let mut current = UNKNOWN_TIME;
    out.clear();
    out.reserve(bounds.len().saturating_sub(1));
    for pair in bounds.windows(2) {
        let (bound, next) = (pair[0], pair[1]);
        let time = (bound >> 64) as u64;
        let start = (bound >> 32) & 1 == 1;
        let kind = (!(bound as u32) ^ 0x8000_0000) as i32;
        let slot = usize::try_from(kind).ok().filter(|&k| k < counts.len());
        if let Some(slot) = slot {
            if start {
                counts[slot] += 1;
                if kind > current {
                    current = kind;
                }
            } else {
                counts[slot] -= 1;
                if kind == current && counts[slot] == 0 {
                    current = (0..slot)
                        .rev()
                        .find(|&i| counts[i] > 0)
                        .map_or(UNKNOWN_TIME, |i| i as i32);
                }
            }
        }
        out.push(TypedSpan {
            kind: current,
            span: Span::from_end_points(time, (next >> 64) as u64),
        });
    }
}

/// `ComputePrecisionStats`: the device compute time in 32 and in 16 bits, over non-overlapped
/// step events (signed 64-bit sums, wrapping).
pub fn precision_stats(steps: &StepEvents) -> crate::proto::PrecisionStats {
    let mut stats = crate::proto::PrecisionStats::default();
    for details in steps.values() {
        add_precision_stats(details.events.iter(), &mut stats);
    }
    stats
}

/// Adds one step's non-overlapped events to [`precision_stats`].
pub fn add_precision_stats(
    events: impl IntoIterator<Item = TypedSpan>,
    stats: &mut crate::proto::PrecisionStats,
) {
    for e in events {
        match e.kind {
            DEVICE_COMPUTE_32 => {
                stats.compute_32bit_ps = stats.compute_32bit_ps.wrapping_add(e.span.duration)
            }
            DEVICE_COMPUTE_16 => {
                stats.compute_16bit_ps = stats.compute_16bit_ps.wrapping_add(e.span.duration)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(kind: i32, begin: u64, end: u64) -> TypedSpan {
        TypedSpan {
            kind,
            span: Span::from_end_points(begin, end),
        }
    }

    #[test]
    fn overlapping_events_take_the_highest_priority() {
        let events = [
            typed(HOST_COMPUTE, 0, 100),
            typed(DEVICE_COMPUTE_32, 20, 50),
            typed(HOST_PREPARE, 40, 70),
        ];
        let out = non_overlapped_events(events.iter().copied());
        assert_eq!(
            out,
            vec![
                typed(HOST_COMPUTE, 0, 20),
                typed(DEVICE_COMPUTE_32, 20, 40),
                typed(DEVICE_COMPUTE_32, 40, 50),
                typed(HOST_PREPARE, 50, 70),
                typed(HOST_COMPUTE, 70, 100),
            ]
        );
    }

    #[test]
    fn gaps_are_unknown_time_and_ends_come_first() {
        let events = [typed(HOST_COMPUTE, 0, 10), typed(HOST_COMPUTE, 20, 30)];
        let out = non_overlapped_events(events.iter().copied());
        assert_eq!(
            out,
            vec![
                typed(HOST_COMPUTE, 0, 10),
                typed(UNKNOWN_TIME, 10, 20),
                typed(HOST_COMPUTE, 20, 30),
            ]
        );
        // Touching spans: the end closes before the next begins (an empty piece of unknown time
        // between them).
        let out = non_overlapped_events([typed(HOST_PREPARE, 0, 10), typed(HOST_COMPUTE, 10, 20)]);
        assert_eq!(out[1], typed(UNKNOWN_TIME, 10, 10));
        assert_eq!(out[2], typed(HOST_COMPUTE, 10, 20));
    }

    #[test]
    fn step_time_prefers_a_host_marker_that_includes_the_device_one() {
        let marker = |kind, begin, end| StepMarker {
            kind,
            core_id: None,
            name: String::new(),
            span: Span::from_end_points(begin, end),
        };
        let mut step = StepDetails::default();
        step.markers.push(marker(MarkerKind::ExplicitHost, 10, 100));
        step.markers.push(marker(MarkerKind::Device, 20, 120));
        assert_eq!(step.step_time(), Span::from_end_points(20, 120));
        step.markers.push(marker(MarkerKind::ImplicitHost, 0, 130));
        assert_eq!(step.step_time(), Span::from_end_points(0, 130));
    }

    #[test]
    fn intersection_keeps_common_steps() {
        let mut a = StepEvents::new();
        a.entry(1).or_default().step_name = "one".into();
        a.entry(2).or_default();
        let mut b = StepEvents::new();
        b.entry(2).or_default().step_name = "two".into();
        b.entry(3).or_default();
        let mut dst = StepEvents::new();
        intersect_combine(&a, &mut dst);
        intersect_combine(&b, &mut dst);
        assert_eq!(dst.keys().copied().collect::<Vec<_>>(), vec![2]);
        assert_eq!(dst[&2].step_name, "two");
    }

    /// The bounds sorted as tuples (xprof's order written out), then swept as
    /// `non_overlapped_into` sweeps them.
    fn non_overlapped_by_tuples(events: &[TypedSpan]) -> Vec<TypedSpan> {
        let mut bounds: Vec<(u64, i32, bool)> = Vec::new();
        for e in events {
            bounds.push((e.span.begin, e.kind, true));
            bounds.push((e.span.end(), e.kind, false));
        }
        bounds.sort_by(|a, b| a.0.cmp(&b.0).then(a.2.cmp(&b.2)).then(b.1.cmp(&a.1)));
        let mut counts = vec![0i64; LAST as usize + 1];
        let mut current = UNKNOWN_TIME;
        let mut out = Vec::new();
        for pair in bounds.windows(2) {
            let (time, kind, start) = pair[0];
            if let Some(slot) = usize::try_from(kind).ok().filter(|&k| k < counts.len()) {
                if start {
                    counts[slot] += 1;
                    current = current.max(kind);
                } else {
                    counts[slot] -= 1;
                    if kind == current && counts[slot] == 0 {
                        current = (0..slot)
                            .rev()
                            .find(|&i| counts[i] > 0)
                            .map_or(UNKNOWN_TIME, |i| i as i32);
                    }
                }
            }
            out.push(TypedSpan {
                kind: current,
                span: Span::from_end_points(time, pair[1].0),
            });
        }
        out
    }

    #[test]
    fn packed_bounds_sort_as_tuples_do() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % n
        };
        let kinds = [
            UNKNOWN_TIME,
            HOST_COMPUTE,
            HOST_PREPARE,
            HOST_WAIT_INPUT,
            DEVICE_COMPUTE_32,
            DEVICE_COMPUTE_16,
            LAST,
            -1,
            i32::MIN,
            i32::MAX,
        ];
        for round in 0..200 {
            let n = next(40) as usize;
            let events: Vec<TypedSpan> = (0..n)
                .map(|_| {
                    // Few distinct times so that bounds tie; some near the top to wrap.
                    let begin = if round % 10 == 0 {
                        u64::MAX - next(8)
                    } else {
                        next(12)
                    };
                    TypedSpan {
                        kind: kinds[next(kinds.len() as u64) as usize],
                        span: Span::new(begin, next(6)),
                    }
                })
                .collect();
            assert_eq!(
                non_overlapped_events(events.iter().copied()),
                non_overlapped_by_tuples(&events)
            );
        }
    }

    #[test]
    fn packed_spans_give_back_what_was_pushed() {
        let mut state = 7u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let edges = [
            0,
            1,
            u64::MAX,
            u64::MAX - 1,
            1 << 63,
            i64::MAX as u64,
            1000,
            u64::MAX / 1000 * 1000,
            (i64::MAX as u64) / 1000 * 1000,
            (1 << 63) + 1000,
        ];
        let mut spans: Vec<TypedSpan> = (0..2000)
            .map(|i| {
                let pick = |v: u64| match i % 7 {
                    0 => edges[(v % edges.len() as u64) as usize],
                    // Whole nanoseconds, as a host's times are.
                    1 | 2 => v / 1000 * 1000,
                    _ => v,
                };
                let kind = match i % 5 {
                    0 => i32::MIN,
                    1 => -1,
                    2 => (next() % 200) as i32,
                    3 => i32::MAX,
                    _ => HOST_COMPUTE,
                };
                TypedSpan {
                    kind,
                    span: Span::new(pick(next()), pick(next() >> (next() % 64))),
                }
            })
            .collect();
        spans.sort_by_key(|e| (e.span.begin / 3) % 5);
        let packed: TypedSpans = spans.iter().copied().collect();
        assert_eq!(packed.len(), spans.len());
        assert_eq!(packed.iter().collect::<Vec<_>>(), spans);
        let (head, tail) = spans.split_at(700);
        let mut joined: TypedSpans = head.iter().copied().collect();
        joined.append(tail.iter().copied().collect());
        assert_eq!(joined, packed);
        let mut empty = TypedSpans::new();
        empty.append(packed.clone());
        assert_eq!(empty, packed);
        assert!(TypedSpans::new().iter().next().is_none());
    }

    #[test]
    fn hostile_times_wrap() {
        let s = Span::new(u64::MAX - 1, 10);
        assert_eq!(s.end(), 8);
        // The end wraps below the begin: the span overlaps nothing after it.
        assert_eq!(s.overlapped_duration(&Span::new(u64::MAX, 1)), 0);
        let events = [
            TypedSpan {
                kind: DEVICE_COMPUTE_16,
                span: s,
            },
            TypedSpan {
                kind: 9999,
                span: Span::new(0, u64::MAX),
            },
            TypedSpan {
                kind: -3,
                span: Span::new(5, 5),
            },
        ];
        assert_eq!(non_overlapped_events(events.iter().copied()).len(), 5);
    }
}

//! Target `xplane_builder`: a sequence of builder and utility operations on two planes.
//!
//! Each operation is checked against what it promises (an interned name keeps its id, a new name
//! gets the next id, times land where they were put, a merge keeps every event, a sort sorts) and
//! after each one both planes must still look builder-made: metadata ids run from 1 without
//! gaps, map keys equal ids, names are unique, and validation finds no dangling id.

use arbitrary::{Arbitrary, Result, Unstructured};
use profkit_xplane::constants::COUNTERS_LINE_ID;
use profkit_xplane::validate::validate_plane;
use profkit_xplane::{
    EventBuilder, PlaneBuilder, ProblemKind, StatValue, XLine, XPlane, XSpace, utils, x_event,
};

use super::generate;

/// Operations per input; enough to build, merge and rebuild.
pub const MAX_OPS: usize = 48;

/// Events a plane may reach by merges: merging the two planes into each other in turn grows them
/// like Fibonacci numbers, so 48 merges would make billions of events (a timeout the campaign
/// found, the harness's and not the library's). A merge past this is left out.
pub const MAX_MERGED_EVENTS: usize = 4096;

/// A name, often one of a few so that interning finds it again.
#[derive(Debug)]
pub struct Name(pub String);

impl<'a> Arbitrary<'a> for Name {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        generate::string(u).map(Name)
    }
}

/// An `i64` tilted toward small values and overflow edges.
#[derive(Debug, Clone, Copy)]
pub struct Int(pub i64);

impl<'a> Arbitrary<'a> for Int {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        generate::int(u).map(Int)
    }
}

/// A line id: mostly one of a few, so lines are found again; sometimes the counter line.
#[derive(Debug, Clone, Copy)]
pub struct LineId(pub i64);

impl<'a> Arbitrary<'a> for LineId {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(LineId(match u.int_in_range(0..=5u8)? {
            0..=3 => u.int_in_range(0..=3)?,
            4 => COUNTERS_LINE_ID,
            _ => generate::int(u)?,
        }))
    }
}

/// Which of the two planes an operation works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub enum Which {
    /// The first plane.
    A,
    /// The second plane.
    B,
}

/// A stat value of every kind the builder takes, through each `From` conversion.
#[derive(Debug)]
pub enum Value {
    /// `f64`.
    Double(f64),
    /// `f32`, widened.
    Float(f32),
    /// `u64`.
    Uint64(u64),
    /// `u32`, widened.
    Uint32(u32),
    /// `i64`.
    Int64(i64),
    /// `i32`, widened.
    Int32(i32),
    /// `bool`, stored as an integer.
    Bool(bool),
    /// A string.
    Str(String),
    /// Opaque bytes.
    Bytes(Vec<u8>),
    /// A string interned as stat metadata.
    Ref(String),
}

impl<'a> Arbitrary<'a> for Value {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match u.int_in_range(0..=9u8)? {
            0 => Value::Double(generate::double(u)?),
            1 => Value::Float(generate::double(u)? as f32),
            2 => Value::Uint64(generate::uint(u)?),
            3 => Value::Uint32(u32::arbitrary(u)?),
            4 => Value::Int64(generate::int(u)?),
            5 => Value::Int32(i32::arbitrary(u)?),
            6 => Value::Bool(bool::arbitrary(u)?),
            7 => Value::Str(generate::string(u)?),
            8 => Value::Bytes(generate::bytes(u)?),
            _ => Value::Ref(generate::string(u)?),
        })
    }
}

impl Value {
    fn into_stat(self) -> StatValue {
        match self {
            Value::Double(v) => v.into(),
            Value::Float(v) => v.into(),
            Value::Uint64(v) => v.into(),
            Value::Uint32(v) => v.into(),
            Value::Int64(v) => v.into(),
            Value::Int32(v) => v.into(),
            Value::Bool(v) => v.into(),
            Value::Str(v) => v.into(),
            Value::Bytes(v) => v.into(),
            Value::Ref(v) => StatValue::Ref(v),
        }
    }
}

/// How a new event finds its metadata.
#[derive(Debug, Arbitrary)]
pub enum EventBy {
    /// Interned by name.
    Name(Name),
    /// An existing metadata, picked by index.
    Existing(u8),
    /// A new unnamed metadata.
    New,
}

/// An edit of a newly added event.
#[derive(Debug, Arbitrary)]
pub enum EventEdit {
    /// `set_offset_ps`.
    OffsetPs(Int),
    /// `set_timestamp_ps`.
    TimestampPs(Int),
    /// `set_timestamp_ns`.
    TimestampNs(Int),
    /// `set_duration_ps`.
    DurationPs(Int),
    /// `set_end_timestamp_ps`.
    EndTimestampPs(Int),
    /// `set_num_occurrences`.
    NumOccurrences(Int),
    /// `add_stat`.
    AddStat(Name, Value),
    /// `add_stat_with_metadata_id`, with an existing stat metadata picked by index.
    AddStatById(u8, Value),
    /// `set_or_add_stat`.
    SetOrAddStat(Name, Value),
}

/// An edit of a line.
#[derive(Debug, Arbitrary)]
pub enum LineEdit {
    /// `set_name`.
    Name(Name),
    /// `set_display_name`.
    DisplayName(Name),
    /// `set_display_id`.
    DisplayId(Int),
    /// `set_timestamp_ns`.
    TimestampNs(Int),
    /// `set_timestamp_ns_and_adjust_event_offsets`.
    AdjustTimestampNs(Int),
    /// `set_duration_ps`.
    DurationPs(Int),
}

/// An edit of an existing event metadata.
#[derive(Debug, Arbitrary)]
pub enum MetadataEdit {
    /// `set_display_name`.
    DisplayName(Name),
    /// `set_metadata`.
    Metadata(Vec<u8>),
    /// `add_stat`.
    AddStat(Name, Value),
    /// `set_or_add_stat`.
    SetOrAddStat(Name, Value),
    /// `add_child`, with an existing metadata picked by index.
    AddChild(u8),
}

/// One operation on the two planes.
#[derive(Debug, Arbitrary)]
pub enum Op {
    /// `PlaneBuilder::set_name`.
    SetPlaneName(Which, Name),
    /// `PlaneBuilder::set_id`.
    SetPlaneId(Which, Int),
    /// `PlaneBuilder::event_metadata_id`.
    InternEvent(Which, Name),
    /// `PlaneBuilder::new_event_metadata`.
    NewEventMetadata(Which),
    /// `PlaneBuilder::stat_metadata_id`.
    InternStat(Which, Name),
    /// `PlaneBuilder::add_stat`.
    AddPlaneStat(Which, Name, Value),
    /// `PlaneBuilder::set_or_add_stat`.
    SetOrAddPlaneStat(Which, Name, Value),
    /// Edits of an existing event metadata picked by index.
    EditEventMetadata(Which, u8, Vec<MetadataEdit>),
    /// Edits of a line, created if missing.
    EditLine(Which, LineId, Vec<LineEdit>),
    /// An event added to a line, then edited.
    AddEvent(Which, LineId, EventBy, Vec<EventEdit>),
    /// `utils::merge_planes` of (a copy of) the other plane into this one.
    MergeInto(Which),
    /// `utils::normalize_timestamps`.
    Normalize(Which, Int),
    /// `utils::denormalize_timestamps`.
    Denormalize(Which, Int),
    /// `utils::sort_plane`.
    SortEvents(Which),
    /// `utils::sort_lines_by_id`.
    SortLinesById(Which),
    /// `utils::remove_empty_lines`.
    RemoveEmptyLines(Which),
}

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let [a, b] = build(data);
    super::decode::check_space(&XSpace {
        planes: vec![a, b],
        ..Default::default()
    });
}

/// Applies the operations `data` decodes to, checking each, and returns the two planes.
pub fn build(data: &[u8]) -> [XPlane; 2] {
    let mut planes = [XPlane::default(), XPlane::default()];
    for op in ops(data) {
        apply(&mut planes, op);
        for plane in &planes {
            check_builder_made(plane);
        }
    }
    planes
}

/// The operations `data` decodes to (at most [`MAX_OPS`]).
pub fn ops(data: &[u8]) -> Vec<Op> {
    let mut u = Unstructured::new(data);
    let mut ops = Vec::new();
    while ops.len() < MAX_OPS && !u.is_empty() {
        match Op::arbitrary(&mut u) {
            Ok(op) => ops.push(op),
            Err(_) => break,
        }
    }
    ops
}

/// The operations `data` decodes to, one per line, for reading a failing input.
pub fn describe(data: &[u8]) -> String {
    ops(data).iter().map(|op| format!("{op:?}\n")).collect()
}

/// Applies `op`, checking what it promises.
pub fn apply(planes: &mut [XPlane; 2], op: Op) {
    match op {
        Op::SetPlaneName(w, name) => {
            PlaneBuilder::new(plane(planes, w)).set_name(name.0.clone());
            assert_eq!(plane(planes, w).name, name.0);
        }
        Op::SetPlaneId(w, id) => {
            PlaneBuilder::new(plane(planes, w)).set_id(id.0);
            assert_eq!(plane(planes, w).id, id.0);
        }
        Op::InternEvent(w, name) => {
            let plane = plane(planes, w);
            let expected = expected_event_id(plane, &name.0);
            let mut builder = PlaneBuilder::new(plane);
            assert_eq!(builder.event_metadata_id(&name.0), expected);
            if !name.0.is_empty() {
                assert_eq!(builder.event_metadata_id(&name.0), expected);
                assert_eq!(
                    PlaneBuilder::new(plane).event_metadata_id(&name.0),
                    expected
                );
            }
        }
        Op::NewEventMetadata(w) => {
            let plane = plane(planes, w);
            let expected = next_id(plane.event_metadata.keys());
            assert_eq!(PlaneBuilder::new(plane).new_event_metadata(), expected);
        }
        Op::InternStat(w, name) => {
            let plane = plane(planes, w);
            let expected = expected_stat_id(plane, &name.0);
            assert_eq!(PlaneBuilder::new(plane).stat_metadata_id(&name.0), expected);
        }
        Op::AddPlaneStat(w, name, value) => {
            let plane = plane(planes, w);
            let before = plane.stats.len();
            PlaneBuilder::new(plane).add_stat(&name.0, value.into_stat());
            assert_eq!(plane.stats.len(), before + 1);
        }
        Op::SetOrAddPlaneStat(w, name, value) => {
            let plane = plane(planes, w);
            let id = expected_stat_id(plane, &name.0);
            let had = plane.stats.iter().any(|s| s.metadata_id == id);
            let before = plane.stats.len();
            PlaneBuilder::new(plane).set_or_add_stat(&name.0, value.into_stat());
            assert_eq!(plane.stats.len(), before + usize::from(!had));
        }
        Op::EditEventMetadata(w, pick, edits) => edit_event_metadata(plane(planes, w), pick, edits),
        Op::EditLine(w, id, edits) => edit_line(plane(planes, w), id.0, edits),
        Op::AddEvent(w, line, by, edits) => add_event(plane(planes, w), line.0, by, edits),
        Op::MergeInto(w) => {
            let [a, b] = planes;
            if events(a) + events(b) > MAX_MERGED_EVENTS {
                return;
            }
            let (src, dst) = match w {
                Which::A => (b.clone(), a),
                Which::B => (a.clone(), b),
            };
            let before = events(dst);
            utils::merge_planes(&src, dst);
            assert_eq!(
                events(dst),
                before + events(&src),
                "merge_planes loses or invents events"
            );
        }
        Op::Normalize(w, start) => {
            let plane = plane(planes, w);
            let before: Vec<i64> = plane.lines.iter().map(|l| l.timestamp_ns).collect();
            utils::normalize_timestamps(plane, start.0);
            for (line, old) in plane.lines.iter().zip(before) {
                let expected = if old >= start.0 {
                    saturate(i128::from(old) - i128::from(start.0))
                } else {
                    i128::from(old)
                };
                assert_eq!(i128::from(line.timestamp_ns), expected);
            }
        }
        Op::Denormalize(w, start) => {
            let plane = plane(planes, w);
            let before: Vec<i64> = plane.lines.iter().map(|l| l.timestamp_ns).collect();
            utils::denormalize_timestamps(plane, start.0);
            for (line, old) in plane.lines.iter().zip(before) {
                let expected = if line.id == COUNTERS_LINE_ID {
                    old
                } else {
                    old.saturating_add(start.0)
                };
                assert_eq!(line.timestamp_ns, expected);
            }
        }
        Op::SortEvents(w) => {
            let plane = plane(planes, w);
            let before = events(plane);
            utils::sort_plane(plane);
            assert_eq!(events(plane), before);
            for line in &plane.lines {
                let key = |e: &profkit_xplane::XEvent| {
                    (e.offset_ps().unwrap_or(0), std::cmp::Reverse(e.duration_ps))
                };
                assert!(
                    line.events.windows(2).all(|w| key(&w[0]) <= key(&w[1])),
                    "events not sorted"
                );
            }
        }
        Op::SortLinesById(w) => {
            let plane = plane(planes, w);
            utils::sort_lines_by_id(plane);
            assert!(
                plane.lines.windows(2).all(|w| w[0].id <= w[1].id),
                "lines not sorted"
            );
        }
        Op::RemoveEmptyLines(w) => {
            let plane = plane(planes, w);
            let before = events(plane);
            utils::remove_empty_lines(plane);
            assert_eq!(events(plane), before);
            assert!(plane.lines.iter().all(|l| !l.events.is_empty()));
        }
    }
}

fn plane(planes: &mut [XPlane; 2], w: Which) -> &mut XPlane {
    let [a, b] = planes;
    match w {
        Which::A => a,
        Which::B => b,
    }
}

fn events(plane: &XPlane) -> usize {
    plane.lines.iter().map(|l| l.events.len()).sum()
}

/// The id a builder gives a new metadata: one past the largest (and at least 1).
fn next_id<'a>(ids: impl Iterator<Item = &'a i64>) -> i64 {
    ids.max().map_or(1, |&max| max.max(0) + 1)
}

/// The id a new builder over `plane` must give when asked to intern `name` as event metadata:
/// that of the metadata with the name (the smallest id, if several share it), else the next. As
/// in TSL, unnamed metadata is never found by name, so `""` always gets the next id.
fn expected_event_id(plane: &XPlane, name: &str) -> i64 {
    plane
        .event_metadata
        .iter()
        .find(|(_, md)| !name.is_empty() && md.name == name)
        .map_or_else(|| next_id(plane.event_metadata.keys()), |(id, _)| *id)
}

/// The id a new builder over `plane` must give when asked to intern `name` as stat metadata.
fn expected_stat_id(plane: &XPlane, name: &str) -> i64 {
    plane
        .stat_metadata
        .iter()
        .find(|(_, md)| !name.is_empty() && md.name == name)
        .map_or_else(|| next_id(plane.stat_metadata.keys()), |(id, _)| *id)
}

/// The `pick`-th key of `ids` (wrapping), if there is any.
fn nth<'a>(mut ids: impl ExactSizeIterator<Item = &'a i64>, pick: u8) -> Option<i64> {
    let len = ids.len();
    if len == 0 {
        return None;
    }
    ids.nth(usize::from(pick) % len).copied()
}

fn edit_event_metadata(plane: &mut XPlane, pick: u8, edits: Vec<MetadataEdit>) {
    let Some(id) = nth(plane.event_metadata.keys(), pick) else {
        return;
    };
    let children: Vec<i64> = plane.event_metadata.keys().copied().collect();
    let mut builder = PlaneBuilder::new(plane);
    let Some(mut md) = builder.event_metadata(id) else {
        panic!("event_metadata({id}) finds nothing for an existing id");
    };
    assert_eq!(md.id(), id);
    for edit in edits {
        match edit {
            MetadataEdit::DisplayName(name) => {
                md.set_display_name(name.0.clone());
                assert_eq!(md.metadata().display_name, name.0);
            }
            MetadataEdit::Metadata(bytes) => {
                md.set_metadata(bytes.clone());
                assert_eq!(md.metadata().metadata[..], bytes[..]);
            }
            MetadataEdit::AddStat(name, value) => {
                let before = md.metadata().stats.len();
                md.add_stat(&name.0, value.into_stat());
                assert_eq!(md.metadata().stats.len(), before + 1);
            }
            MetadataEdit::SetOrAddStat(name, value) => {
                let before = md.metadata().stats.len();
                md.set_or_add_stat(&name.0, value.into_stat());
                assert!((before..=before + 1).contains(&md.metadata().stats.len()));
            }
            MetadataEdit::AddChild(pick) => {
                if let Some(child) = nth(children.iter(), pick) {
                    md.add_child(child);
                }
            }
        }
    }
}

/// Checks that `line(id)` finds the line with `id` or appends one, and returns the line count
/// it must leave.
fn expected_lines(plane: &XPlane, id: i64) -> usize {
    plane.lines.len() + usize::from(!plane.lines.iter().any(|l| l.id == id))
}

fn edit_line(plane: &mut XPlane, id: i64, edits: Vec<LineEdit>) {
    let lines = expected_lines(plane, id);
    let mut builder = PlaneBuilder::new(plane);
    let mut line = builder.line(id);
    assert_eq!(line.id(), id);
    for edit in edits {
        match edit {
            LineEdit::Name(name) => {
                line.set_name(name.0.clone());
                assert_eq!(line.line().name, name.0);
            }
            LineEdit::DisplayName(name) => {
                line.set_display_name(name.0.clone());
                assert_eq!(line.line().display_name, name.0);
            }
            LineEdit::DisplayId(v) => {
                line.set_display_id(v.0);
                assert_eq!(line.line().display_id, v.0);
            }
            LineEdit::TimestampNs(v) => {
                let offsets: Vec<_> = line.line().events.iter().map(|e| e.data).collect();
                line.set_timestamp_ns(v.0);
                assert_eq!(line.line().timestamp_ns, v.0);
                assert!(
                    line.line().events.iter().map(|e| e.data).eq(offsets),
                    "events moved"
                );
            }
            LineEdit::AdjustTimestampNs(v) => {
                let before = line.line().clone();
                line.set_timestamp_ns_and_adjust_event_offsets(v.0);
                check_adjusted(&before, line.line(), v.0);
            }
            LineEdit::DurationPs(v) => {
                line.set_duration_ps(v.0);
                assert_eq!(line.line().duration_ps, v.0);
            }
        }
    }
    assert_eq!(builder.plane().lines.len(), lines);
}

/// After `set_timestamp_ns_and_adjust_event_offsets`, every timed event keeps its absolute time
/// (when its new offset fits; otherwise the offset saturates) and aggregated events are untouched.
fn check_adjusted(before: &XLine, after: &XLine, timestamp_ns: i64) {
    assert_eq!(after.timestamp_ns, timestamp_ns);
    assert_eq!(before.events.len(), after.events.len());
    for (old, new) in before.events.iter().zip(&after.events) {
        match (old.data, new.data) {
            (
                Some(x_event::Data::OffsetPs(old_offset)),
                Some(x_event::Data::OffsetPs(new_offset)),
            ) => {
                let exact = i128::from(before.timestamp_ns) * 1000 + i128::from(old_offset)
                    - i128::from(timestamp_ns) * 1000;
                assert_eq!(i128::from(new_offset), saturate(exact), "event moved");
            }
            (old_data, new_data) => assert_eq!(old_data, new_data),
        }
    }
}

/// What a builder stores for an exact time that may not fit in `i64`.
fn saturate(v: i128) -> i128 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX))
}

fn add_event(plane: &mut XPlane, line_id: i64, by: EventBy, edits: Vec<EventEdit>) {
    let lines = expected_lines(plane, line_id);
    let stat_ids: Vec<i64> = plane.stat_metadata.keys().copied().collect();
    let mut builder = PlaneBuilder::new(plane);
    let (metadata_id, name) = match by {
        EventBy::Name(name) => (expected_event_id(builder.plane(), &name.0), Some(name.0)),
        EventBy::Existing(pick) => match nth(builder.plane().event_metadata.keys(), pick) {
            Some(id) => (id, None),
            None => (builder.new_event_metadata(), None),
        },
        EventBy::New => (builder.new_event_metadata(), None),
    };
    let mut line = builder.line(line_id);
    let line_ts = line.line().timestamp_ns;
    let events = line.num_events();
    let mut event = match &name {
        Some(name) => line.add_event(name),
        None => line.add_event_with_metadata_id(metadata_id),
    };
    assert_eq!(event.event().metadata_id, metadata_id);
    assert_eq!(event.event().offset_ps(), Some(0));
    for edit in edits {
        edit_event(&mut event, line_ts, &stat_ids, edit);
    }
    assert_eq!(line.num_events(), events + 1);
    assert_eq!(builder.plane().lines.len(), lines);
}

fn edit_event(event: &mut EventBuilder<'_>, line_ts: i64, stat_ids: &[i64], edit: EventEdit) {
    let base_ps = i128::from(line_ts) * 1000;
    let offset = |e: &EventBuilder<'_>| e.event().offset_ps().map(i128::from);
    match edit {
        EventEdit::OffsetPs(v) => {
            event.set_offset_ps(v.0);
            assert_eq!(event.event().offset_ps(), Some(v.0));
        }
        EventEdit::TimestampPs(v) => {
            event.set_timestamp_ps(v.0);
            assert_eq!(offset(event), Some(saturate(i128::from(v.0) - base_ps)));
        }
        EventEdit::TimestampNs(v) => {
            event.set_timestamp_ns(v.0);
            assert_eq!(
                offset(event),
                Some(saturate(i128::from(v.0) * 1000 - base_ps))
            );
        }
        EventEdit::DurationPs(v) => {
            event.set_duration_ps(v.0);
            assert_eq!(event.event().duration_ps, v.0);
        }
        EventEdit::EndTimestampPs(v) => {
            let start = base_ps + offset(event).unwrap_or(0);
            event.set_end_timestamp_ps(v.0);
            assert_eq!(
                i128::from(event.event().duration_ps),
                saturate(i128::from(v.0) - start)
            );
        }
        EventEdit::NumOccurrences(v) => {
            event.set_num_occurrences(v.0);
            assert_eq!(event.event().num_occurrences(), Some(v.0));
            assert_eq!(event.event().offset_ps(), None);
        }
        EventEdit::AddStat(name, value) => {
            let before = event.event().stats.len();
            event.add_stat(&name.0, value.into_stat());
            assert_eq!(event.event().stats.len(), before + 1);
        }
        EventEdit::AddStatById(pick, value) => {
            if let Some(id) = nth(stat_ids.iter(), pick) {
                event.add_stat_with_metadata_id(id, value.into_stat());
                assert_eq!(event.event().stats.last().map(|s| s.metadata_id), Some(id));
            }
        }
        EventEdit::SetOrAddStat(name, value) => {
            let before = event.event().stats.len();
            event.set_or_add_stat(&name.0, value.into_stat());
            assert!((before..=before + 1).contains(&event.event().stats.len()));
        }
    }
}

/// Checks that `plane` looks builder-made: metadata ids are 1..=n with keys equal to ids, names
/// are unique (unnamed metadata aside), and validation finds no dangling id.
pub fn check_builder_made(plane: &XPlane) {
    for (index, (key, md)) in plane.event_metadata.iter().enumerate() {
        assert_eq!(
            (*key, md.id),
            (index as i64 + 1, index as i64 + 1),
            "event metadata ids not 1..=n"
        );
    }
    for (index, (key, md)) in plane.stat_metadata.iter().enumerate() {
        assert_eq!(
            (*key, md.id),
            (index as i64 + 1, index as i64 + 1),
            "stat metadata ids not 1..=n"
        );
    }
    let mut names = std::collections::HashSet::new();
    for md in plane
        .event_metadata
        .values()
        .filter(|md| !md.name.is_empty())
    {
        assert!(
            names.insert(md.name.as_str()),
            "event metadata name {:?} interned twice",
            md.name
        );
    }
    names.clear();
    for md in plane
        .stat_metadata
        .values()
        .filter(|md| !md.name.is_empty())
    {
        assert!(
            names.insert(md.name.as_str()),
            "stat metadata name {:?} interned twice",
            md.name
        );
    }
    let problems = validate_plane(plane, "plane");
    let dangling: Vec<_> = problems
        .iter()
        .filter(|p| {
            matches!(
                p.kind,
                ProblemKind::UnknownEventMetadata
                    | ProblemKind::UnknownStatMetadata
                    | ProblemKind::UnknownRefValue
                    | ProblemKind::MapKeyMismatch
            )
        })
        .collect();
    assert!(
        dangling.is_empty(),
        "a builder-made plane has dangling ids: {dangling:#?}"
    );
}

//! The events table read through views of each plane's bytes (what `EventBatches` does) holds
//! what the decoded planes say, row for row and column for column, on every XSpace of
//! `conformance/xplane*/` (the real TensorFlow, JAX, GPU, ROCm and TPU profiles among them).
//!
//! The rows expected here are made from owned, decoded planes (`profkit_xplane::read_file`) by a
//! reading of the table's rules written for this test, so that a view that misread a field would
//! show as a difference.

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use base64::Engine as _;
use profkit_arrow::{EventBatches, HostInfo, Options, sources};
use profkit_xplane::{ReadOptions, XPlane, XStat, line_role, x_event, x_stat};

/// One row of the events table, every column but `host` and `source_format` (the same on every
/// row).
#[derive(Clone, Debug, PartialEq)]
struct Row {
    plane: String,
    plane_id: i64,
    line: String,
    line_id: i64,
    line_role: String,
    name: String,
    display_name: String,
    start_ps: Option<i128>,
    duration_ps: i64,
    self_ps: Option<i64>,
    num_occurrences: Option<i64>,
    /// The typed stat columns, in the schema's order: integers, or strings.
    typed: Vec<Typed>,
    stats: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq)]
enum Typed {
    Int(Option<i64>),
    Str(Option<String>),
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
    let mut found = Vec::new();
    for group in ["xplane", "xplane-device"] {
        let Ok(dirs) = std::fs::read_dir(root.join(group)) else {
            continue;
        };
        for dir in dirs.flatten() {
            for file in ["input.xplane.pb", "input.xplane.pb.gz"] {
                let path = dir.path().join(file);
                if path.is_file() {
                    found.push(path);
                }
            }
        }
    }
    found.sort();
    found
}

/// A stat value as the `stats` map holds it.
fn text(value: Option<&x_stat::Value>, plane: &XPlane) -> String {
    match value {
        None => String::new(),
        Some(x_stat::Value::DoubleValue(v)) => zmij::Buffer::new().format(*v).to_owned(),
        Some(x_stat::Value::Uint64Value(v)) => v.to_string(),
        Some(x_stat::Value::Int64Value(v)) => v.to_string(),
        Some(x_stat::Value::StrValue(v)) => v.clone(),
        Some(x_stat::Value::BytesValue(v)) => base64::engine::general_purpose::STANDARD.encode(v),
        Some(x_stat::Value::RefValue(id)) => referenced(*id, plane),
    }
}

fn referenced(id: u64, plane: &XPlane) -> String {
    i64::try_from(id)
        .ok()
        .and_then(|id| plane.stat_metadata.get(&id))
        .map(|m| m.name.clone())
        .unwrap_or_default()
}

fn stat_name(stat: &XStat, plane: &XPlane) -> String {
    plane
        .stat_metadata
        .get(&stat.metadata_id)
        .map(|m| m.name.clone())
        .unwrap_or_default()
}

/// The value of a typed integer column a stat gives, if it gives one.
fn as_int(value: Option<&x_stat::Value>) -> Option<i64> {
    match value? {
        x_stat::Value::Int64Value(v) => Some(*v),
        x_stat::Value::Uint64Value(v) => i64::try_from(*v).ok(),
        x_stat::Value::DoubleValue(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(*v as i64),
        x_stat::Value::StrValue(s) => s.parse().ok(),
        _ => None,
    }
}

fn as_str(value: Option<&x_stat::Value>, plane: &XPlane) -> Option<String> {
    match value? {
        x_stat::Value::StrValue(s) => Some(s.clone()),
        x_stat::Value::RefValue(id) => Some(referenced(*id, plane)),
        _ => None,
    }
}

/// The rows of a decoded plane.
fn plane_rows(plane: &XPlane, rows: &mut Vec<Row>) {
    for line in &plane.lines {
        let base = i128::from(line.timestamp_ns) * 1000;
        let spans: Vec<Option<(i128, i64)>> = line
            .events
            .iter()
            .map(|e| match e.data {
                Some(x_event::Data::NumOccurrences(_)) => None,
                _ => Some((base + i128::from(offset(e)), e.duration_ps)),
            })
            .collect();
        let self_times = profkit_xplane::utils::self_times(&spans);
        for (index, event) in line.events.iter().enumerate() {
            let md = plane.event_metadata.get(&event.metadata_id);
            let occurrences = match event.data {
                Some(x_event::Data::NumOccurrences(n)) => Some(n),
                _ => None,
            };
            // The event's own stats, then its metadata's that the event does not have.
            let md_stats = md.map(|m| m.stats.as_slice()).unwrap_or_default();
            let stats: Vec<(&XStat, bool)> = event
                .stats
                .iter()
                .map(|s| (s, false))
                .chain(
                    md_stats
                        .iter()
                        .filter(|s| !event.stats.iter().any(|o| o.metadata_id == s.metadata_id))
                        .map(|s| (s, true)),
                )
                .collect();
            // A typed column takes the event's stats before the metadata's, and within each the
            // earliest name of its list, and within a name the first stat that gives a value.
            let typed = profkit_arrow::schema::TYPED_STATS
                .iter()
                .map(|(_, names, kind)| {
                    let pick = |from_md: bool| {
                        names.iter().find_map(|wanted| {
                            stats
                                .iter()
                                .filter(|(s, m)| *m == from_md && stat_name(s, plane) == *wanted)
                                .find_map(|(s, _)| match kind {
                                    profkit_arrow::schema::TypedKind::Int => {
                                        as_int(s.value.as_ref()).map(|v| Typed::Int(Some(v)))
                                    }
                                    profkit_arrow::schema::TypedKind::Str => {
                                        as_str(s.value.as_ref(), plane).map(|v| Typed::Str(Some(v)))
                                    }
                                })
                        })
                    };
                    pick(false).or_else(|| pick(true)).unwrap_or(match kind {
                        profkit_arrow::schema::TypedKind::Int => Typed::Int(None),
                        profkit_arrow::schema::TypedKind::Str => Typed::Str(None),
                    })
                })
                .collect();
            rows.push(Row {
                plane: plane.name.clone(),
                plane_id: plane.id,
                line: line.name.clone(),
                line_id: line.id,
                line_role: line_role(&plane.name, &line.name).as_str().to_owned(),
                name: md.map(|m| m.name.clone()).unwrap_or_default(),
                // The display name, or the name when it has none.
                display_name: md
                    .map(|m| match m.display_name.as_str() {
                        "" => m.name.clone(),
                        display => display.to_owned(),
                    })
                    .unwrap_or_default(),
                start_ps: match occurrences {
                    Some(_) => None,
                    None => Some(base + i128::from(offset(event))),
                },
                duration_ps: event.duration_ps,
                self_ps: self_times.get(index).copied().flatten(),
                num_occurrences: occurrences,
                typed,
                stats: stats
                    .iter()
                    .map(|(s, _)| (stat_name(s, plane), text(s.value.as_ref(), plane)))
                    .collect(),
            });
        }
    }
}

fn offset(event: &profkit_xplane::XEvent) -> i64 {
    match event.data {
        Some(x_event::Data::OffsetPs(o)) => o,
        _ => 0,
    }
}

fn dict(batch: &RecordBatch, column: &str) -> Vec<Option<String>> {
    let dict = batch
        .column_by_name(column)
        .unwrap()
        .as_dictionary::<Int32Type>();
    let values = dict.values().as_string::<i32>();
    dict.keys()
        .iter()
        .map(|k| k.map(|k| values.value(k as usize).to_owned()))
        .collect()
}

fn ints(batch: &RecordBatch, column: &str) -> Vec<Option<i64>> {
    batch
        .column_by_name(column)
        .unwrap()
        .as_primitive::<Int64Type>()
        .iter()
        .collect()
}

/// The rows of the events batches.
fn batch_rows(batch: &RecordBatch) -> Vec<Row> {
    let n = batch.num_rows();
    let (plane, line, role) = (
        dict(batch, "plane"),
        dict(batch, "line"),
        dict(batch, "line_role"),
    );
    let (name, display) = (dict(batch, "name"), dict(batch, "display_name"));
    let (plane_id, line_id) = (ints(batch, "plane_id"), ints(batch, "line_id"));
    let start: Vec<Option<i128>> = batch
        .column_by_name("start_ps")
        .unwrap()
        .as_primitive::<Decimal128Type>()
        .iter()
        .collect();
    let (duration, self_ps, occurrences) = (
        ints(batch, "duration_ps"),
        ints(batch, "self_ps"),
        ints(batch, "num_occurrences"),
    );
    let typed: Vec<Vec<Typed>> = profkit_arrow::schema::TYPED_STATS
        .iter()
        .map(|(column, _, kind)| match kind {
            profkit_arrow::schema::TypedKind::Int => {
                ints(batch, column).into_iter().map(Typed::Int).collect()
            }
            profkit_arrow::schema::TypedKind::Str => {
                dict(batch, column).into_iter().map(Typed::Str).collect()
            }
        })
        .collect();
    let map = batch.column_by_name("stats").unwrap().as_map();
    let keys = map.keys().as_string::<i32>();
    let values = map.values().as_string::<i32>();
    let offsets = map.value_offsets();
    (0..n)
        .map(|i| {
            let stats = (offsets[i] as usize..offsets[i + 1] as usize)
                .map(|j| {
                    assert!(!values.is_null(j), "a stat's text is never null");
                    (keys.value(j).to_owned(), values.value(j).to_owned())
                })
                .collect();
            Row {
                plane: plane[i].clone().unwrap(),
                plane_id: plane_id[i].unwrap(),
                line: line[i].clone().unwrap(),
                line_id: line_id[i].unwrap(),
                line_role: role[i].clone().unwrap(),
                name: name[i].clone().unwrap(),
                display_name: display[i].clone().unwrap(),
                start_ps: start[i],
                duration_ps: duration[i].unwrap(),
                self_ps: self_ps[i],
                num_occurrences: occurrences[i],
                typed: typed.iter().map(|c| c[i].clone()).collect(),
                stats,
            }
        })
        .collect()
}

/// The rows of the events table of the file at `path`, read in batches of `rows` rows.
fn viewed_rows(path: &Path, rows: usize) -> profkit_arrow::Result<Vec<Row>> {
    // The streaming reader takes gzip as it is.
    let file = std::fs::File::open(path).unwrap();
    let mut batches: EventBatches<_> = sources::xspace(
        file,
        HostInfo::new("h", "xspace", ["input"]),
        Options::with_batch_rows(rows),
        ReadOptions::default(),
    );
    let mut out = Vec::new();
    while let Some(batch) = batches.next_batch()? {
        assert!(batch.num_rows() <= rows);
        out.extend(batch_rows(&batch));
    }
    Ok(out)
}

#[test]
fn viewed_events_are_the_decoded_events() {
    let cases = cases();
    assert!(cases.len() > 50, "the conformance cases are found");
    let mut compared = 0;
    let mut real = 0;
    for path in &cases {
        let shown = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(path);
        let decoded = match profkit_xplane::read_file(path, ReadOptions::default()) {
            Ok(space) => space,
            Err(_) => {
                // What does not decode does not read through views either.
                assert!(
                    viewed_rows(path, 1024).is_err(),
                    "{}: decoding fails, the events stream does not",
                    shown.display()
                );
                continue;
            }
        };
        let mut expected = Vec::new();
        for plane in &decoded.planes {
            plane_rows(plane, &mut expected);
        }
        // Batches of the default size, and small ones that cut lines and planes.
        for batch in [profkit_arrow::events::DEFAULT_BATCH_ROWS, 97] {
            let viewed =
                viewed_rows(path, batch).unwrap_or_else(|e| panic!("{}: {e}", shown.display()));
            assert_eq!(
                viewed.len(),
                expected.len(),
                "{}: rows (batches of {batch})",
                shown.display()
            );
            for (i, (v, e)) in viewed.iter().zip(&expected).enumerate() {
                assert_eq!(v, e, "{}: row {i} (batches of {batch})", shown.display());
            }
        }
        compared += 1;
        if path.to_string_lossy().contains("real-") || path.to_string_lossy().contains("-device") {
            assert!(
                !expected.is_empty(),
                "{}: a real profile has events",
                shown.display()
            );
            real += 1;
        }
    }
    assert!(real >= 12, "the real profiles are compared ({real})");
    assert!(compared > 40, "the cases are compared ({compared})");
}

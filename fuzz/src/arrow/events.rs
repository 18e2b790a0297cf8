//! Target `arrow_events`: any bytes, as an XSpace, into `profkit_arrow`'s events stream.
//!
//! The stream (three rows a batch, so batches span lines and planes) accepts exactly what the
//! whole decode accepts: on refusal its error is the reader's, located (an offset within the
//! input); otherwise its rows are the space's events, in order (names, durations, start times as
//! `timestamp_ns * 1000 + offset_ps` exactly), every batch holds at most three rows and fits the
//! events schema, and the side tables count the space's planes, lines and events.

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int32Type, Int64Type};
use profkit_arrow::{HostInfo, Options, sources};
use profkit_xplane::proto::x_event;
use profkit_xplane::{ReadOptions, XSpaceReader};

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let whole = XSpaceReader::new(data, ReadOptions::default()).collect_space();
    let info = HostInfo::new("fuzz", "xspace", ["fuzz"]);
    let mut batches = sources::xspace(
        data,
        info,
        Options::with_batch_rows(3),
        ReadOptions::default(),
    );
    let mut rows = Vec::new();
    let error = loop {
        match batches.next_batch() {
            Ok(Some(batch)) => {
                assert!(
                    batch.num_rows() >= 1 && batch.num_rows() <= 3,
                    "{} rows",
                    batch.num_rows()
                );
                assert_eq!(batch.schema(), profkit_arrow::schema::events());
                let column = |name: &str| {
                    batch
                        .column_by_name(name)
                        .unwrap_or_else(|| panic!("no column {name}"))
                };
                let names = column("name").as_dictionary::<Int32Type>();
                let values = names.values().as_string::<i32>();
                let roles = column("line_role").as_dictionary::<Int32Type>();
                let role_values = roles.values().as_string::<i32>();
                let starts = column("start_ps").as_primitive::<Decimal128Type>();
                let durations = column("duration_ps").as_primitive::<Int64Type>();
                let selfs = column("self_ps").as_primitive::<Int64Type>();
                for i in 0..batch.num_rows() {
                    let name = names.key(i).map(|k| values.value(k).to_owned());
                    let role = roles.key(i).map(|k| role_values.value(k).to_owned());
                    let start = (!starts.is_null(i)).then(|| starts.value(i));
                    let self_ps = (!selfs.is_null(i)).then(|| selfs.value(i));
                    rows.push((name, role, start, durations.value(i), self_ps));
                }
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    assert!(
        batches.next_batch().map(|b| b.is_none()).unwrap_or(false),
        "the stream goes on after its end"
    );
    match (whole, error) {
        (Err(want), Some(got)) => {
            let got = got.to_string();
            assert_eq!(
                got,
                want.to_string(),
                "the stream's error differs from the reader's"
            );
            assert!(got.contains("byte"), "an error without its place: {got}");
        }
        (Err(want), None) => panic!("the stream accepts what the reader refuses: {want}"),
        (Ok(_), Some(got)) => panic!("the stream refuses what the reader accepts: {got}"),
        (Ok(space), None) => {
            let mut want = Vec::new();
            let mut lines = 0;
            for plane in &space.planes {
                for line in &plane.lines {
                    lines += 1;
                    let role = profkit_xplane::line_role(&plane.name, &line.name);
                    // Self times as the sorting oracle gives them (the stream times lines in
                    // order as they come).
                    let base = i128::from(line.timestamp_ns) * 1000;
                    let spans: Vec<Option<(i128, i64)>> = line
                        .events
                        .iter()
                        .map(|event| match event.data {
                            Some(x_event::Data::NumOccurrences(_)) => None,
                            Some(x_event::Data::OffsetPs(o)) => {
                                Some((base + i128::from(o), event.duration_ps))
                            }
                            None => Some((base, event.duration_ps)),
                        })
                        .collect();
                    let selfs = sorted_self_times(&spans);
                    for (event, self_ps) in line.events.iter().zip(selfs) {
                        let name = plane
                            .event_metadata
                            .get(&event.metadata_id)
                            .map_or("", |m| m.name.as_str());
                        let base = i128::from(line.timestamp_ns) * 1000;
                        let start = match event.data {
                            Some(x_event::Data::NumOccurrences(_)) => None,
                            Some(x_event::Data::OffsetPs(o)) => Some(base + i128::from(o)),
                            None => Some(base),
                        };
                        want.push((
                            Some(name.to_owned()),
                            Some(role.as_str().to_owned()),
                            start,
                            event.duration_ps,
                            self_ps,
                        ));
                    }
                }
            }
            assert_eq!(rows, want, "the rows are not the space's events");
            let side = batches
                .side_tables()
                .unwrap_or_else(|e| panic!("no side tables after the end: {e}"));
            assert_eq!(side.planes.num_rows(), space.planes.len());
            assert_eq!(side.lines.num_rows(), lines);
            let events: i64 = side
                .planes
                .column_by_name("events")
                .unwrap_or_else(|| panic!("no events column"))
                .as_primitive::<Int64Type>()
                .values()
                .iter()
                .sum();
            assert_eq!(events as usize, want.len());
        }
    }
}

/// Self times by sorting every line (what `self_times` does for a line out of order), an oracle
/// independent of the streamed timing: each event's duration less the events directly inside it.
fn sorted_self_times(spans: &[Option<(i128, i64)>]) -> Vec<Option<i64>> {
    let mut result: Vec<Option<i64>> = spans.iter().map(|s| s.map(|(_, d)| d.max(0))).collect();
    let mut order: Vec<(i128, i64, usize)> = spans
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.map(|(start, d)| (start, d.max(0), i)))
        .collect();
    order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut open: Vec<(usize, i128)> = Vec::new();
    for (start, duration, i) in order {
        let end = start + i128::from(duration);
        while open.last().is_some_and(|&(_, top_end)| top_end < end) {
            open.pop();
        }
        if let Some(&(parent, _)) = open.last()
            && let Some(Some(t)) = result.get_mut(parent)
        {
            *t = t.saturating_sub(duration);
        }
        open.push((i, end));
    }
    result
}

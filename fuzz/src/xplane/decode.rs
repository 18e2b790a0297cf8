//! Target `xplane_decode`: arbitrary bytes into the XSpace decoders.
//!
//! The whole-message decoder and the streaming reader see the same bytes. When the whole decode
//! succeeds, the stream must yield the same planes and strings; when it fails, the error must say
//! where (an offset within the input and a non-empty path) and the stream must fail with the same
//! error (or refuse a declared plane length over its limit first). Whatever decodes is then
//! validated, summarised, visited, merged, and sent through the canonical JSON view and back.

use profkit_error::Truncation;
use profkit_xplane::summary::Summary;
use profkit_xplane::{
    Error, PlaneVisitor, ProblemKind, ReadOptions, SpaceItem, XSpace, XSpaceReader, decode,
    decode_plane, decode_with, encode, utils, validate, view, x_event, x_stat,
};

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let whole = decode(data.to_vec());
    let streamed = stream(data, ReadOptions::default());
    match (&whole, &streamed) {
        (Ok(space), Ok(items)) => {
            assert_eq!(
                encode(&collect(items)),
                encode(space),
                "the stream yields other items than the whole decode"
            );
            check_space(space);
        }
        (Ok(_), Err(e)) => panic!("the whole decode succeeds but the stream fails: {e}"),
        (Err(e), Ok(_)) => panic!("the stream succeeds but the whole decode fails: {e}"),
        (Err(whole_error), Err(stream_error)) => {
            check_error(whole_error, data);
            check_error(stream_error, data);
            match stream_error {
                // The stream checks each plane's declared length against its limit before
                // reading; the whole decode, holding every byte, finds the plane cut short.
                Error::TooLarge(profkit_error::OverLimit { what, .. }) => assert!(
                    matches!(whole_error, Error::Truncated(Truncation { path, .. }) if path == what),
                    "the stream refuses {what} as too large, the whole decode says {whole_error}"
                ),
                _ => assert_eq!(
                    format!("{whole_error:?}"),
                    format!("{stream_error:?}"),
                    "the whole decode and the stream report different errors"
                ),
            }
        }
    }

    // The trace viewer conversion (which reads most planes lightly first) accepts exactly what the
    // streaming reader accepts, fails with its error, and the in-memory conversion agrees.
    let mut converted = Vec::new();
    let result = profkit_xprof::trace_viewer::convert(
        std::io::Cursor::new(data),
        &mut converted,
        &profkit_xprof::trace_viewer::TraceViewerOptions::default(),
        None,
    );
    match (&streamed, result) {
        (Ok(items), Ok(_)) => {
            let mut again = Vec::new();
            profkit_xprof::trace_viewer::write_space(
                &collect(items),
                &mut again,
                &profkit_xprof::trace_viewer::TraceViewerOptions::default(),
            )
            .unwrap_or_else(|e| panic!("the in-memory conversion fails: {e}"));
            assert!(
                again == converted,
                "the streaming and in-memory conversions differ"
            );
        }
        (Err(e), Err(c)) => assert_eq!(
            e.to_string(),
            c.to_string(),
            "the conversion fails differently from the streaming reader"
        ),
        (Ok(_), Err(c)) => panic!("the conversion fails on what the reader reads: {c}"),
        (Err(e), Ok(_)) => panic!("the conversion accepts what the reader refuses: {e}"),
    }

    // Reading from `Read` is decoding what was read.
    match (&whole, profkit_xplane::read(data, ReadOptions::default())) {
        (Ok(space), Ok(read)) => {
            assert_eq!(encode(&read), encode(space), "read differs from decode")
        }
        (Err(_), Err(e)) => check_error(&e, data),
        (_, read) => panic!("read and decode disagree: {read:?} vs {whole:?}"),
    }
    let _ = profkit_xplane::looks_like_xspace(data);

    // The same bytes as a single plane, and under size limits small enough to bite.
    if let Err(e) = decode_plane(data.to_vec()) {
        check_error(&e, data);
    }
    let limit = data.first().map_or(0, |&b| u64::from(b));
    match decode_with(data.to_vec(), ReadOptions::with_max_size(limit)) {
        Ok(_) => assert!(
            data.len() as u64 <= limit,
            "decode_with ignores its size limit"
        ),
        Err(e) => check_error(&e, data),
    }
    if let Err(e) = stream(data, ReadOptions::with_max_size(limit)) {
        check_error(&e, data);
    }
}

/// Reads every item of the stream over `data`, stopping at the first error.
pub fn stream(data: &[u8], options: ReadOptions) -> Result<Vec<SpaceItem>, Error> {
    let mut reader = XSpaceReader::new(data, options);
    let items = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
    assert!(
        reader.next().is_none(),
        "the stream yields items after its end"
    );
    assert_eq!(
        reader.offset(),
        data.len() as u64,
        "the stream ends before the input does"
    );
    Ok(items)
}

fn collect(items: &[SpaceItem]) -> XSpace {
    let mut space = XSpace::default();
    for item in items {
        match item {
            SpaceItem::Plane(p) => space.planes.push(p.clone()),
            SpaceItem::Error(s) => space.errors.push(s.clone()),
            SpaceItem::Warning(s) => space.warnings.push(s.clone()),
            SpaceItem::Hostname(s) => space.hostnames.push(s.clone()),
        }
    }
    space
}

/// Checks that a decode error says where it happened: a byte offset within `data` and a
/// non-empty path. A truncation is reported where the input ends.
pub fn check_error(error: &Error, data: &[u8]) {
    let len = data.len() as u64;
    let text = error.to_string();
    assert!(!text.is_empty());
    match error {
        Error::Malformed {
            offset,
            path,
            reason,
        } => {
            assert!(
                *offset <= len,
                "{text}: offset past the input's {len} bytes"
            );
            assert!(
                !path.is_empty() && !reason.is_empty(),
                "{text}: no path or reason"
            );
        }
        Error::Truncated(Truncation {
            offset,
            path,
            needed,
        }) => {
            assert_eq!(
                *offset, len,
                "{text}: a truncation not at the end of the input"
            );
            assert!(!path.is_empty(), "{text}: no path");
            assert!(*needed > 0, "{text}: a truncation that needs no bytes");
        }
        Error::TooLarge(profkit_error::OverLimit {
            what,
            offset,
            size,
            limit,
        }) => {
            assert!(
                *offset <= len,
                "{text}: offset past the input's {len} bytes"
            );
            assert!(!what.is_empty(), "{text}: no path");
            assert!(size > limit, "{text}: not over the limit");
        }
        other => panic!("decoding bytes fails with an error that says not where: {other:?}"),
    }
}

/// Exercises everything that reads a decoded space, checking what can be checked cheaply:
/// validation finds exactly the problems counted here independently, the summary counts every
/// line and event, merging keeps every event, and the canonical JSON view reads back into an
/// equal space (compared by encoding, since NaN != NaN).
pub fn check_space(space: &XSpace) {
    let bytes = encode(space);
    let again =
        decode(bytes.clone()).unwrap_or_else(|e| panic!("re-encoded space fails to decode: {e}"));
    assert_eq!(
        encode(&again),
        bytes,
        "encode is not stable across a decode"
    );

    check_validate(space);

    let summary = Summary::of(space);
    let lines: usize = space.planes.iter().map(|p| p.lines.len()).sum();
    assert_eq!(summary.total_lines, lines);
    assert_eq!(summary.total_events, event_count(space));
    let _ = (summary.start_ps(), summary.end_ps());

    for plane in &space.planes {
        visit(&PlaneVisitor::new(plane));
        let _ = utils::plane_time_span_ps(plane);
        let _ = utils::has_aggregated_events(plane);
    }
    let merged = utils::merge_all_planes(&space.planes, 0, "merged");
    assert_eq!(
        merged.lines.iter().map(|l| l.events.len()).sum::<usize>(),
        event_count(space),
        "merging planes loses or invents events"
    );
    // A merge into a plane from the file, whose ids may be anything (up to `i64::MAX`).
    if let [first, second, ..] = space.planes.as_slice() {
        let mut dst = first.clone();
        utils::merge_planes(second, &mut dst);
        let events =
            |p: &profkit_xplane::XPlane| p.lines.iter().map(|l| l.events.len()).sum::<usize>();
        assert_eq!(
            events(&dst),
            events(first) + events(second),
            "merge_planes loses or invents events"
        );
    }
    let mut sorted = space.clone();
    utils::sort_space(&mut sorted);
    assert_eq!(event_count(&sorted), event_count(space));

    let json = view::to_json(space);
    let back = view::from_json(&json)
        .unwrap_or_else(|e| panic!("canonical JSON does not read back: {e}\n{json}"));
    assert_eq!(
        encode(&back),
        encode(&canonical_nans(space)),
        "the JSON view does not round-trip:\n{json}"
    );
}

/// `space` with every NaN replaced by `f64::NAN`. The canonical JSON view writes any NaN as
/// `"NaN"`, so a NaN's sign and payload do not survive a trip through it (every other double
/// does, bit for bit).
pub fn canonical_nans(space: &XSpace) -> XSpace {
    let mut space = space.clone();
    let fix = |stats: &mut Vec<profkit_xplane::XStat>| {
        for stat in stats {
            if let Some(x_stat::Value::DoubleValue(v)) = &mut stat.value {
                if v.is_nan() {
                    *v = f64::NAN;
                }
            }
        }
    };
    for plane in &mut space.planes {
        fix(&mut plane.stats);
        plane
            .event_metadata
            .values_mut()
            .for_each(|md| fix(&mut md.stats));
        plane
            .lines
            .iter_mut()
            .flat_map(|l| &mut l.events)
            .for_each(|e| fix(&mut e.stats));
    }
    space
}

/// Number of events over all planes.
pub fn event_count(space: &XSpace) -> usize {
    space
        .planes
        .iter()
        .flat_map(|p| &p.lines)
        .map(|l| l.events.len())
        .sum()
}

/// Counts, independently of `validate`, the problems whose presence is a local property of one
/// element, and checks `validate` reports exactly as many of each.
fn check_validate(space: &XSpace) {
    let problems = validate(space);
    for problem in &problems {
        assert!(!problem.path.is_empty() && !problem.message.is_empty());
    }
    let reported = |kind| problems.iter().filter(|p| p.kind == kind).count();
    let mut expected = std::collections::HashMap::<ProblemKind, usize>::new();
    let mut add = |kind| *expected.entry(kind).or_default() += 1;
    for plane in &space.planes {
        let mut all_stats: Vec<&profkit_xplane::XStat> = plane.stats.iter().collect();
        for (key, md) in &plane.event_metadata {
            if *key != md.id {
                add(ProblemKind::MapKeyMismatch);
            }
            all_stats.extend(&md.stats);
        }
        for (key, md) in &plane.stat_metadata {
            if *key != md.id {
                add(ProblemKind::MapKeyMismatch);
            }
        }
        for event in plane.lines.iter().flat_map(|l| &l.events) {
            if !plane.event_metadata.contains_key(&event.metadata_id) {
                add(ProblemKind::UnknownEventMetadata);
            }
            if event.duration_ps < 0 {
                add(ProblemKind::NegativeDuration);
            }
            if matches!(event.data, Some(x_event::Data::NumOccurrences(n)) if n < 0) {
                add(ProblemKind::NegativeOccurrences);
            }
            all_stats.extend(&event.stats);
        }
        for stat in all_stats {
            if !plane.stat_metadata.contains_key(&stat.metadata_id) {
                add(ProblemKind::UnknownStatMetadata);
            }
            match stat.value {
                None => add(ProblemKind::UnsetStatValue),
                Some(x_stat::Value::RefValue(id))
                    if !i64::try_from(id).is_ok_and(|id| plane.stat_metadata.contains_key(&id)) =>
                {
                    add(ProblemKind::UnknownRefValue);
                }
                Some(_) => {}
            }
        }
    }
    for kind in [
        ProblemKind::MapKeyMismatch,
        ProblemKind::UnknownEventMetadata,
        ProblemKind::UnknownStatMetadata,
        ProblemKind::UnknownRefValue,
        ProblemKind::NegativeDuration,
        ProblemKind::NegativeOccurrences,
        ProblemKind::UnsetStatValue,
    ] {
        assert_eq!(
            reported(kind),
            expected.get(&kind).copied().unwrap_or(0),
            "validate reports {kind:?} a different number of times than counted: {problems:#?}"
        );
    }
}

/// Walks every accessor of the visitors.
fn visit(plane: &PlaneVisitor<'_>) {
    let _ = (plane.id(), plane.name());
    for stat in plane.stats() {
        let _ = (
            stat.name(),
            stat.description(),
            stat.value().map(|v| v.to_string()),
        );
    }
    for md in plane.event_metadata_iter() {
        let _ = (md.id(), md.display_name(), md.children().count());
        for stat in md.stats() {
            let _ = stat.value().map(|v| {
                (
                    v.as_i64(),
                    v.as_u64(),
                    v.as_f64(),
                    v.as_str(),
                    v.to_owned_value(),
                )
            });
        }
    }
    for line in plane.lines() {
        let _ = (
            line.id(),
            line.display_id(),
            line.name(),
            line.display_name(),
            line.duration_ps(),
        );
        for event in line.events() {
            let _ = (
                event.name(),
                event.display_name(),
                event.is_aggregated(),
                event.num_occurrences(),
            );
            assert!(
                event.end_timestamp_ps() - event.timestamp_ps() == i128::from(event.duration_ps())
            );
            for stat in event.all_stats() {
                let _ = (stat.name(), stat.value().map(|v| v.to_string()));
            }
            if let Some(stat) = event.stats().next() {
                let _ = event.stat(stat.name());
            }
        }
    }
}

//! Target `xplane_view`: the zero-copy view against prost, on arbitrary bytes.
//!
//! A full walk of [`XSpaceView`] (every plane, line, event and stat, read through the public
//! accessors) must accept exactly what prost's own decode accepts under the schema walk's rules
//! (that is what `profkit_xplane::decode` accepts), give the same content, and, when it refuses,
//! the same located error as `decode`. The streaming reader's plane views must agree with its
//! decoded planes, and the view's materialisation with both. `profkit report`'s summary through
//! views must equal the one of the decoded space's event model, or fail with decode's error. The
//! visitor over each plane's view must answer as the visitor over the decoded plane (or fail with
//! decode's error), and the plane-by-plane writer must write `encode`'s bytes. `reencode` (which
//! copies what is already in canonical encoding) must write what decoding and encoding every
//! plane writes, or fail alike, and so must `merge` (which keeps merged planes encoded) against
//! `merge_decoded`.

use std::collections::BTreeMap;

use profkit_convert::events::{xspace_forest, xspace_to_recording};
use profkit_convert::merge::{HostInput, merge, merge_decoded, reencode, reencode_decoded};
use profkit_events::report::summary::{Forest, Summary as ReportSummary, SummaryOptions};
use profkit_xplane::summary::Summary;
use profkit_xplane::validate;
use profkit_xplane::xview::{PlaneMetadata, SpaceItemView, StatValueView, XSpaceView, XStatView};
use profkit_xplane::{
    PlaneViewVisitor, PlaneVisitor, RawSpaceItem, ReadOptions, StatViewVisitor, StatVisitor,
    XEvent, XEventMetadata, XLine, XPlane, XPlaneView, XSpace, XSpaceReader, XSpaceWriter, XStat,
    XStatMetadata, decode, encode, x_stat,
};
use prost::Message;

/// Runs the target on one input. Panics when a property does not hold.
pub fn run(data: &[u8]) {
    let Ok(view) = XSpaceView::new(data) else {
        panic!(
            "a view of {} bytes is refused under the default limit",
            data.len()
        );
    };
    let walked = walk(&view);
    let decoded = decode(data.to_vec());
    let prost = XSpace::decode(data);
    match (&walked, &decoded) {
        (Ok(walked), Ok(decoded)) => {
            let walked = encode(walked);
            assert!(
                walked == encode(decoded),
                "the view walk and decode read different spaces"
            );
            let prost = prost
                .as_ref()
                .unwrap_or_else(|e| panic!("decode accepts what prost refuses: {e}"));
            assert!(
                walked == encode(prost),
                "the view walk and prost read different spaces"
            );
            let owned = view
                .to_owned_space()
                .unwrap_or_else(|e| panic!("the walk succeeds, materialising fails: {e}"));
            assert!(
                walked == encode(&owned),
                "materialising differs from the walk"
            );
            view.check()
                .unwrap_or_else(|e| panic!("the walk succeeds, check fails: {e}"));
            readers_agree(&view, decoded);
            assert!(
                encode(decoded) == decoded.encode_to_vec(),
                "encode differs from prost's encoding"
            );
        }
        (Err(walk_error), Err(decode_error)) => {
            super::decode::check_error(walk_error, data);
            assert_eq!(
                format!("{walk_error:?}"),
                format!("{decode_error:?}"),
                "the view walk and decode report different errors"
            );
            let checked = view.check().map(|()| "nothing".to_owned());
            assert_eq!(
                checked.map_err(|e| format!("{e:?}")),
                Err(format!("{decode_error:?}")),
                "check and decode report different errors"
            );
            assert!(
                view.to_owned_space().is_err(),
                "materialising accepts what the walk refuses"
            );
            let visited: Result<Vec<String>, _> = view
                .planes()
                .map(|p| p.and_then(|p| view_visits(&p)))
                .collect();
            assert_eq!(
                visited.map(drop).map_err(|e| format!("{e:?}")),
                Err(format!("{decode_error:?}")),
                "the view visitor and decode report different errors"
            );
            // The summary streams the planes, and the stream refuses a declared plane length over
            // its limit before it finds the input shorter (as the `xplane_decode` target allows).
            let summary = xspace_forest(std::io::Cursor::new(data), ReadOptions::default())
                .map(|_| ())
                .map_err(|e| e.to_string());
            let refused_first = matches!(decode_error, profkit_xplane::Error::Truncated(_))
                && summary
                    .as_ref()
                    .is_err_and(|e| e.contains("bytes, over the limit of"));
            if !refused_first {
                assert_eq!(
                    summary,
                    Err(decode_error.to_string()),
                    "the summary's walk through views and decode report different errors"
                );
            }
        }
        (Ok(_), Err(e)) => panic!("the view walk accepts what decode refuses: {e}"),
        (Err(e), Ok(_)) => panic!("the view walk refuses what decode accepts: {e}"),
    }
    match (&walked, &prost) {
        (Ok(_), Err(e)) => panic!("the view walk accepts what prost refuses: {e}"),
        (Err(e), Ok(_)) => assert!(
            stricter_than_prost(e),
            "the view walk refuses what prost accepts, for another reason than the two where the \
             schema walk is knowingly stricter: {e}"
        ),
        _ => {}
    }
    streamed(data);
    reencode_agrees(data);
    merge_agrees(data);
}

/// `merge` (what `profkit merge` runs), which keeps the planes it merges by name encoded, writes
/// the bytes of merging decoded planes (`merge_decoded`), or fails with the same error, on the
/// input merged with itself (two hosts whose lines share every id).
pub fn merge_agrees(data: &[u8]) {
    let run = |encoded: bool| {
        let mut hosts: Vec<HostInput<std::io::Cursor<&[u8]>>> = (0..2)
            .map(|i| HostInput {
                fallback_host: format!("host-{i}"),
                host: None,
                reader: std::io::Cursor::new(data),
            })
            .collect();
        let mut out = Vec::new();
        let options = ReadOptions::default();
        let result = if encoded {
            merge(&mut hosts, &mut out, options)
        } else {
            merge_decoded(&mut hosts, &mut out, options)
        };
        (result.map_err(|e| format!("{e:?}")), out)
    };
    let (encoded, encoded_out) = run(true);
    let (decoded, decoded_out) = run(false);
    assert_eq!(
        encoded, decoded,
        "merge and merging decoded planes disagree"
    );
    assert!(
        encoded_out == decoded_out,
        "merge writes other bytes than merging decoded planes"
    );
}

/// `reencode` (what `convert --to xspace` runs), which copies planes and lines already in
/// canonical encoding, writes the bytes of decoding and encoding every plane, or fails with the
/// same error after writing the same items.
pub fn reencode_agrees(data: &[u8]) {
    let options = ReadOptions::default();
    let (mut fast_out, mut slow_out) = (Vec::new(), Vec::new());
    let fast = reencode(data, &mut fast_out, options, None).map_err(|e| format!("{e:?}"));
    let slow = reencode_decoded(data, &mut slow_out, options, None).map_err(|e| format!("{e:?}"));
    assert_eq!(fast, slow, "reencode and decoding every plane disagree");
    assert!(
        fast_out == slow_out,
        "reencode writes other bytes than decoding every plane"
    );
}

/// The summary and validation of the view equal those of the decoded space.
fn readers_agree(view: &XSpaceView<'_>, decoded: &XSpace) {
    let summary = Summary::of_view(view).unwrap_or_else(|e| panic!("summary of a view: {e}"));
    assert_eq!(summary, Summary::of(decoded), "the view's summary differs");
    let mut problems = Vec::new();
    for (index, plane) in view.planes().enumerate() {
        let plane = plane.unwrap_or_else(|e| panic!("plane of a valid view: {e}"));
        let found = validate::validate_plane_view(&plane, &format!("planes[{index}]"))
            .unwrap_or_else(|e| panic!("validation of a valid view: {e}"));
        problems.extend(found);
    }
    assert_eq!(
        problems,
        validate::validate(decoded),
        "the view's validation differs"
    );
    report_summary_agrees(view.bytes(), decoded);
    for (plane, owned) in view.planes().zip(&decoded.planes) {
        let plane = plane.unwrap_or_else(|e| panic!("plane of a valid view: {e}"));
        let visited =
            view_visits(&plane).unwrap_or_else(|e| panic!("the view visitor refuses: {e}"));
        assert!(
            visited == owned_visits(owned),
            "the visitor over a view answers differently from the one over the decoded plane"
        );
    }
    writers_agree(view, decoded);
}

/// The plane-by-plane writer writes `encode`'s bytes, and copies viewed planes faithfully.
fn writers_agree(view: &XSpaceView<'_>, decoded: &XSpace) {
    let mut writer = XSpaceWriter::new(Vec::new());
    for plane in &decoded.planes {
        writer
            .write_plane(plane)
            .unwrap_or_else(|e| panic!("writing to a Vec: {e}"));
    }
    let mut copier = XSpaceWriter::new(Vec::new());
    for plane in view.planes().flatten() {
        copier
            .write_plane_view(&plane)
            .unwrap_or_else(|e| panic!("writing to a Vec: {e}"));
    }
    for w in [&mut writer, &mut copier] {
        decoded.errors.iter().for_each(|s| w.add_error(s.as_str()));
        decoded
            .warnings
            .iter()
            .for_each(|s| w.add_warning(s.as_str()));
        decoded
            .hostnames
            .iter()
            .for_each(|s| w.add_hostname(s.as_str()));
    }
    let expected = encode(decoded);
    let written = writer.finish().unwrap_or_else(|e| panic!("finishing: {e}"));
    assert!(
        written == expected,
        "the plane-by-plane writer differs from encode"
    );
    let copied = copier.finish().unwrap_or_else(|e| panic!("finishing: {e}"));
    let copied = decode(copied).unwrap_or_else(|e| panic!("copied planes do not decode: {e}"));
    assert!(
        encode(&copied) == expected,
        "copied planes read differently"
    );
}

/// Everything the visitor over a view answers about a plane, as text (the same layout as
/// [`owned_visits`]).
fn view_visits(plane: &XPlaneView<'_>) -> Result<String, profkit_xplane::Error> {
    let v = PlaneViewVisitor::new(plane)?;
    let names: Vec<&str> = v
        .plane_metadata()
        .stats()
        .iter()
        .map(|m| m.name())
        .collect();
    let stat = |s: StatViewVisitor<'_, '_>| {
        format!("{:?} {:?} {:?}", s.name(), s.description(), s.value())
    };
    let mut out = format!("{} {:?}\n", v.id(), v.name());
    for s in v.stats() {
        out += &stat(s?);
    }
    for name in &names {
        out += &format!("{name:?}={:?}\n", v.stat(name)?.map(stat));
    }
    for md in v.event_metadata_iter() {
        let children: Vec<_> = md.children().map(|c| c.name()).collect();
        out += &format!(
            "{} {:?} {:?} {children:?}\n",
            md.id(),
            md.name(),
            md.display_name()
        );
        md.stats().for_each(|s| out += &stat(s));
    }
    for line in v.lines() {
        let line = line?;
        out += &format!(
            "{} {} {:?} {:?} {}\n",
            line.id(),
            line.display_id(),
            line.name(),
            line.display_name(),
            line.timestamp_ns()
        );
        for e in line.events() {
            let e = e?;
            out += &format!(
                "{:?} {:?} {:?} {} {} {}\n",
                e.name(),
                e.display_name(),
                e.num_occurrences(),
                e.timestamp_ps(),
                e.end_timestamp_ps(),
                e.metadata().map_or(0, |m| m.stats().len()),
            );
            for s in e.all_stats() {
                out += &stat(s?);
            }
            for name in &names {
                out += &format!("{name:?}={:?}\n", e.stat(name)?.map(stat));
            }
        }
    }
    Ok(out)
}

/// Everything the visitor over an owned plane answers, laid out as [`view_visits`] lays it out.
fn owned_visits(plane: &XPlane) -> String {
    let v = PlaneVisitor::new(plane);
    let names: Vec<&str> = plane
        .stat_metadata
        .values()
        .map(|m| m.name.as_str())
        .collect();
    let stat = |s: StatVisitor<'_>| format!("{:?} {:?} {:?}", s.name(), s.description(), s.value());
    let mut out = format!("{} {:?}\n", v.id(), v.name());
    for s in v.stats() {
        out += &stat(s);
    }
    for name in &names {
        out += &format!("{name:?}={:?}\n", v.stat(name).map(stat));
    }
    for md in v.event_metadata_iter() {
        let children: Vec<_> = md.children().map(|c| c.name()).collect();
        out += &format!(
            "{} {:?} {:?} {children:?}\n",
            md.id(),
            md.name(),
            md.display_name()
        );
        md.stats().for_each(|s| out += &stat(s));
    }
    for line in v.lines() {
        out += &format!(
            "{} {} {:?} {:?} {}\n",
            line.id(),
            line.display_id(),
            line.name(),
            line.display_name(),
            line.timestamp_ns()
        );
        for e in line.events() {
            out += &format!(
                "{:?} {:?} {:?} {} {} {}\n",
                e.name(),
                e.display_name(),
                e.num_occurrences(),
                e.timestamp_ps(),
                e.end_timestamp_ps(),
                e.metadata().map_or(0, |m| m.stats().len()),
            );
            for s in e.all_stats() {
                out += &stat(s);
            }
            for name in &names {
                out += &format!("{name:?}={:?}\n", e.stat(name).map(stat));
            }
        }
    }
    out
}

/// `profkit report`'s summary, built plane by plane through views, equals the summary of the
/// decoded space's event model.
fn report_summary_agrees(data: &[u8], decoded: &XSpace) {
    let forest = xspace_forest(std::io::Cursor::new(data), ReadOptions::default())
        .unwrap_or_else(|e| panic!("the summary's walk through views refuses a valid space: {e}"));
    let expected = Forest::from_recording(&xspace_to_recording(decoded));
    let options = SummaryOptions::default();
    let (ours, theirs) = (
        ReportSummary::new(&forest, options),
        ReportSummary::new(&expected, options),
    );
    assert!(
        ours.text() == theirs.text(),
        "the summary through views differs from the event model's"
    );
}

/// Whether `error` is one of the two refusals where the schema walk (and so every reader of this
/// crate) is stricter than prost: groups nested too deeply, and a metadata map tag that is not
/// length-delimited (which prost misreads as an entry).
fn stricter_than_prost(error: &profkit_xplane::Error) -> bool {
    match error {
        profkit_xplane::Error::Malformed { path, reason, .. } => {
            reason == "groups nested too deeply"
                || (reason.starts_with("wire type")
                    && (path.ends_with("event_metadata") || path.contains("_metadata[")))
        }
        _ => false,
    }
}

/// The stream's plane views against its decoded planes (or the same error).
fn streamed(data: &[u8]) {
    let decoded = super::decode::stream(data, ReadOptions::default());
    let mut reader = XSpaceReader::new(data, ReadOptions::default());
    let mut planes = Vec::new();
    let viewed: Result<(), profkit_xplane::Error> = (|| {
        while let Some(item) = reader.next_raw() {
            if let RawSpaceItem::Plane(bytes) = item? {
                let view = bytes.view()?;
                planes.push(plane(&view)?);
            }
        }
        Ok(())
    })();
    match (decoded, viewed) {
        (Ok(items), Ok(())) => {
            let expected: Vec<Vec<u8>> = items
                .iter()
                .filter_map(|item| match item {
                    profkit_xplane::SpaceItem::Plane(p) => Some(p.encode_to_vec()),
                    _ => None,
                })
                .collect();
            let got: Vec<Vec<u8>> = planes.iter().map(Message::encode_to_vec).collect();
            assert!(
                expected == got,
                "the streamed views and the stream's planes differ"
            );
        }
        (Err(e), Err(v)) => assert_eq!(
            format!("{e:?}"),
            format!("{v:?}"),
            "the streamed views and the stream report different errors"
        ),
        (Ok(_), Err(v)) => panic!("the streamed views refuse what the stream reads: {v}"),
        (Err(e), Ok(())) => panic!("the streamed views accept what the stream refuses: {e}"),
    }
}

/// Everything the view holds, read through its public accessors in file order.
fn walk(view: &XSpaceView<'_>) -> Result<XSpace, profkit_xplane::Error> {
    let mut space = XSpace::default();
    for item in view.items() {
        match item? {
            SpaceItemView::Plane(p) => {
                space.planes.push(plane(&p)?);
            }
            SpaceItemView::Error(s) => space.errors.push(s.to_owned()),
            SpaceItemView::Warning(s) => space.warnings.push(s.to_owned()),
            SpaceItemView::Hostname(s) => space.hostnames.push(s.to_owned()),
        }
    }
    Ok(space)
}

fn plane(view: &profkit_xplane::XPlaneView<'_>) -> Result<XPlane, profkit_xplane::Error> {
    // Lines first, metadata after: a fault is the first of the input whatever the order of use.
    let mut plane = XPlane {
        id: view.id(),
        name: view.name().to_owned(),
        ..Default::default()
    };
    for line in view.lines() {
        let line = line?;
        let mut events = Vec::new();
        for event in line.events() {
            let event = event?;
            let mut stats = Vec::new();
            for stat in event.stats() {
                stats.push(stat_of(&stat?));
            }
            assert_eq!(event.has_stats(), !stats.is_empty());
            assert_eq!(event.stat_count(), stats.len());
            assert_eq!(
                event.end_timestamp_ps() - event.timestamp_ps(),
                i128::from(event.duration_ps())
            );
            events.push(XEvent {
                metadata_id: event.metadata_id(),
                data: event.data(),
                duration_ps: event.duration_ps(),
                stats,
            });
        }
        assert_eq!(line.event_count(), events.len());
        plane.lines.push(XLine {
            id: line.id(),
            display_id: line.raw_display_id(),
            name: line.name().to_owned(),
            display_name: line.raw_display_name().to_owned(),
            timestamp_ns: line.timestamp_ns(),
            duration_ps: line.duration_ps(),
            events,
        });
    }
    assert_eq!(plane.lines.len(), view.line_count());
    for stat in view.stats() {
        plane.stats.push(stat_of(&stat?));
    }
    assert_eq!(plane.stats.len(), view.stat_count());
    let md: &PlaneMetadata<'_> = view.metadata()?;
    plane.event_metadata = md
        .events()
        .iter()
        .map(|m| {
            assert_eq!(md.event(m.key()).map(|e| e.key()), Some(m.key()));
            let owned = XEventMetadata {
                id: m.id(),
                name: m.name().to_owned(),
                display_name: m.raw_display_name().to_owned(),
                metadata: m.metadata().to_vec().into(),
                stats: m.stats().iter().map(stat_of).collect(),
                child_id: m.child_id().to_vec(),
            };
            (m.key(), owned)
        })
        .collect::<BTreeMap<_, _>>();
    plane.stat_metadata = md
        .stats()
        .iter()
        .map(|m| {
            assert_eq!(md.stat(m.key()).map(|s| s.key()), Some(m.key()));
            let owned = XStatMetadata {
                id: m.id(),
                name: m.name().to_owned(),
                description: m.description().to_owned(),
            };
            (m.key(), owned)
        })
        .collect();
    // Name lookups agree with a scan of the map (smallest key of a shared name).
    for m in md.stats() {
        let first = md
            .stats()
            .iter()
            .find(|s| s.name() == m.name())
            .map(|s| s.key());
        assert_eq!(md.stat_id(m.name()), first);
    }
    Ok(plane)
}

fn stat_of(stat: &XStatView<'_>) -> XStat {
    XStat {
        metadata_id: stat.metadata_id(),
        value: stat.value().map(|v| match v {
            StatValueView::Double(v) => x_stat::Value::DoubleValue(v),
            StatValueView::Uint64(v) => x_stat::Value::Uint64Value(v),
            StatValueView::Int64(v) => x_stat::Value::Int64Value(v),
            StatValueView::Str(v) => x_stat::Value::StrValue(v.to_owned()),
            StatValueView::Bytes(v) => x_stat::Value::BytesValue(v.to_vec().into()),
            StatValueView::Ref(v) => x_stat::Value::RefValue(v),
        }),
    }
}

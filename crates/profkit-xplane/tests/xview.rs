//! The zero-copy views: what they read, and what they refuse, against decoding.

use profkit_xplane::xview::{SpaceItemView, StatValueView, XSpaceView};
use profkit_xplane::{
    PlaneBuilder, RawSpaceItem, ReadOptions, StatValue, XPlane, XSpace, XSpaceReader, decode,
    encode,
};

fn space() -> XSpace {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_id(4).set_name("/host:CPU").add_stat("cores", 8_u32);
    let mut line = b.line(7);
    line.set_name("worker").set_timestamp_ns(1_000);
    line.add_event("step")
        .set_offset_ps(5)
        .set_duration_ps(10)
        .add_stat("label", "é")
        .add_stat("op", StatValue::Ref("MatMul".into()))
        .add_stat("payload", vec![1_u8, 2]);
    line.add_event("step").set_num_occurrences(3);
    XSpace {
        planes: vec![plane],
        hostnames: vec!["h".into()],
        ..Default::default()
    }
}

#[test]
fn a_view_reads_what_decode_reads() {
    let space = space();
    let bytes = encode(&space);
    let view = XSpaceView::new(&bytes).unwrap();
    assert_eq!(view.to_owned_space().unwrap(), space);
    let items: Vec<_> = view.items().collect::<Result<_, _>>().unwrap();
    assert_eq!(items.len(), 2);
    let SpaceItemView::Plane(plane) = &items[0] else {
        panic!("a plane first");
    };
    assert_eq!(
        (plane.id(), plane.name(), plane.line_count()),
        (4, "/host:CPU", 1)
    );
    let md = plane.metadata().unwrap();
    let line = plane.lines().next().unwrap().unwrap();
    assert_eq!((line.name(), line.event_count()), ("worker", 2));
    let events: Vec<_> = line.events().collect::<Result<_, _>>().unwrap();
    assert_eq!(md.event_name(events[0].metadata_id()), "step");
    assert_eq!(events[0].timestamp_ps(), 1_000_005);
    assert_eq!(events[1].num_occurrences(), Some(3));
    let stats: Vec<_> = events[0].stats().collect::<Result<_, _>>().unwrap();
    assert_eq!(stats.len(), events[0].stat_count());
    assert_eq!(stats[0].value(), Some(StatValueView::Str("é")));
    assert_eq!(
        md.resolve(stats[1].value().unwrap()).as_str(),
        Some("MatMul")
    );
    assert_eq!(stats[2].value(), Some(StatValueView::Bytes(&[1, 2])));
    assert_eq!(md.stat_name(stats[0].metadata_id()), "label");
    assert!(matches!(&items[1], SpaceItemView::Hostname("h")));
}

#[test]
fn every_prefix_is_read_or_refused_as_decode_does() {
    let bytes = encode(&space());
    for cut in 0..=bytes.len() {
        let prefix = &bytes[..cut];
        let view = XSpaceView::new(prefix).unwrap();
        match (view.check(), decode(prefix.to_vec())) {
            (Ok(()), Ok(_)) => {}
            (Err(v), Err(d)) => {
                assert_eq!(v.to_string(), d.to_string());
                assert!(v.is_truncation(), "a prefix of {cut} bytes: {v}");
            }
            (v, d) => panic!("a prefix of {cut} bytes: view {v:?}, decode {d:?}"),
        }
    }
}

#[test]
fn the_last_of_a_repeated_map_key_wins_as_in_decoding() {
    // Two entries for key 1 of event_metadata: decoding keeps the second.
    let entry = |name: &[u8]| {
        let mut value = vec![0x08, 0x01, 0x12, name.len() as u8];
        value.extend_from_slice(name);
        let mut e = vec![0x08, 0x01, 0x12, value.len() as u8];
        e.extend(value);
        let mut field = vec![0x22, e.len() as u8];
        field.extend(e);
        field
    };
    let plane = [entry(b"first"), entry(b"second")].concat();
    let mut bytes = vec![0x0a, plane.len() as u8];
    bytes.extend(plane);
    let view = XSpaceView::new(&bytes).unwrap();
    let plane = view.planes().next().unwrap().unwrap();
    assert_eq!(plane.metadata().unwrap().event_name(1), "second");
    assert_eq!(
        view.to_owned_space().unwrap(),
        decode(bytes.clone()).unwrap()
    );
}

#[test]
fn a_view_is_refused_over_its_size_limit_and_hostile_lengths_allocate_nothing() {
    let bytes = encode(&space());
    assert!(XSpaceView::with_options(&bytes, ReadOptions::with_max_size(4)).is_err());
    // A plane declaring 2^62 bytes: refused where it is, as a truncation, without reserving.
    let hostile = [0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40];
    let error = XSpaceView::new(&hostile).unwrap().check().unwrap_err();
    assert!(error.is_truncation(), "{error}");
    assert_eq!(
        error.to_string(),
        decode(hostile.to_vec()).unwrap_err().to_string()
    );
}

#[test]
fn streamed_plane_views_locate_errors_in_the_whole_input() {
    let mut bytes = encode(&space());
    let good = bytes.clone();
    bytes.extend_from_slice(&good);
    // Damage the second plane: a stat's string becomes invalid UTF-8.
    let at = good.len() + good.windows(2).position(|w| w == "é".as_bytes()).unwrap();
    bytes[at] = 0xff;
    let mut reader = XSpaceReader::new(&bytes[..], ReadOptions::default());
    let mut error = None;
    while let Some(item) = reader.next_raw() {
        if let RawSpaceItem::Plane(plane) = item.unwrap() {
            if let Err(e) = plane.view().and_then(|v| v.check()) {
                error = Some(e);
            }
        }
    }
    let error = error.expect("the second plane fails");
    assert_eq!(
        error.to_string(),
        decode(bytes.clone()).unwrap_err().to_string()
    );
    assert!(error.to_string().contains(&format!("byte {at}")), "{error}");
    assert!(error.to_string().contains("XSpace.planes[1]"), "{error}");
}

#[test]
fn keys_written_in_more_bytes_than_they_need_are_read_as_their_fields() {
    // Every key below is its one-byte tag written in two bytes (`0x88 0x00` for `0x08`), which
    // protobuf parsers read as the same field. Views, decode and the stream read them as prost
    // does, instead of skipping the field.
    let stat = [0x88, 0x00, 7, 0xa0, 0x00, 5]; // metadata_id 7, int64_value 5
    let mut event = vec![
        0x88, 0x00, 5, 0x90, 0x00, 100, 0x98, 0x00, 50, 0xa2, 0x00, 6,
    ];
    event.extend(stat);
    let mut line = vec![0x88, 0x00, 2, 0xa2, 0x00, event.len() as u8];
    line.extend(&event);
    let mut plane = vec![0x88, 0x00, 1, 0x9a, 0x00, line.len() as u8];
    plane.extend(&line);
    let mut bytes = vec![0x8a, 0x00, plane.len() as u8];
    bytes.extend(&plane);
    let prost: XSpace = prost::Message::decode(bytes.as_slice()).unwrap();
    let event = &prost.planes[0].lines[0].events[0];
    assert_eq!((event.metadata_id, event.duration_ps), (5, 50));
    assert_eq!(event.stats.len(), 1);
    assert_eq!(decode(bytes.clone()).unwrap(), prost);
    let view = XSpaceView::new(&bytes).unwrap();
    assert_eq!(view.to_owned_space().unwrap(), prost);
    let plane = view.planes().next().unwrap().unwrap();
    assert_eq!(plane.lines().count(), 1);
    let line = plane.lines().next().unwrap().unwrap();
    let events: Vec<_> = line.events().map(Result::unwrap).collect();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].stat_count(), 1);
    let stats: Vec<_> = events[0].stats().map(Result::unwrap).collect();
    assert_eq!(stats[0].metadata_id(), 7);
    assert_eq!(stats[0].value(), Some(StatValueView::Int64(5)));
    let mut reader = XSpaceReader::new(bytes.as_slice(), ReadOptions::default());
    match reader.next() {
        Some(Ok(profkit_xplane::SpaceItem::Plane(p))) => assert_eq!(p, prost.planes[0]),
        other => panic!("{other:?}"),
    }
}

//! Writing plane by plane gives the bytes `encode` gives for the whole space.

use profkit_xplane::{
    PlaneBuilder, StatValue, XPlane, XPlaneView, XSpace, XSpaceView, XSpaceWriter, decode,
    decode_plane, encode, encode_plane,
};

/// Writes `space` through the streaming writer, plane by plane.
fn streamed(space: &XSpace) -> Vec<u8> {
    let mut writer = XSpaceWriter::new(Vec::new());
    for plane in &space.planes {
        writer.write_plane(plane).unwrap();
    }
    for s in &space.errors {
        writer.add_error(s.as_str());
    }
    for s in &space.warnings {
        writer.add_warning(s.clone());
    }
    for s in &space.hostnames {
        writer.add_hostname(s.as_str());
    }
    assert_eq!(writer.planes(), space.planes.len());
    let written = writer.bytes_written();
    let out = writer.finish().unwrap();
    assert!(written <= out.len() as u64);
    out
}

fn built() -> XSpace {
    let mut space = XSpace::default();
    for (id, name) in [(1, "/host:CPU"), (2, "/device:GPU:0"), (3, "")] {
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_id(id).set_name(name).add_stat("clock", 1_500_u64);
        let md = b.event_metadata_id("op");
        if let Some(mut md) = b.event_metadata(md) {
            md.set_display_name("Op")
                .add_stat("flops", 3_i64)
                .add_child(7);
        }
        let mut line = b.line(id * 10);
        line.set_name("thread").set_timestamp_ns(1_000 * id);
        for i in 0..200 {
            line.add_event("op")
                .set_offset_ps(i * 1_000)
                .set_duration_ps(500)
                .add_stat("s", StatValue::Str(format!("v{i}")))
                .add_stat("r", StatValue::Ref("clock".into()))
                .add_stat("d", -0.5);
        }
        line.add_event("agg").set_num_occurrences(0);
        space.planes.push(plane);
    }
    space.planes.push(XPlane::default());
    space.errors = vec!["e1".into(), String::new()];
    space.warnings = vec!["w".into()];
    space.hostnames = vec!["h1".into(), "h2".into()];
    space
}

#[test]
fn plane_by_plane_equals_encode() {
    let space = built();
    let bytes = encode(&space);
    assert_eq!(streamed(&space), bytes);
    assert_eq!(decode(streamed(&space)).unwrap(), space);
    assert_eq!(streamed(&XSpace::default()), encode(&XSpace::default()));

    // `write` and `write_file` go through it.
    let mut out = Vec::new();
    profkit_xplane::write(&space, &mut out).unwrap();
    assert_eq!(out, bytes);
    let dir = std::env::temp_dir().join(format!("profkit-writer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("space.xplane.pb");
    profkit_xplane::write_file(&space, &path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn encoded_planes_are_copied_as_they_are() {
    let space = built();
    let bytes = encode(&space);
    let view = XSpaceView::new(&bytes).unwrap();
    let mut writer = XSpaceWriter::new(Vec::new());
    for (i, plane) in view.planes().enumerate() {
        let plane = plane.unwrap();
        // Mix the three ways in: a view, bytes, an owned plane.
        match i % 3 {
            0 => writer.write_plane_view(&plane).unwrap(),
            1 => writer.write_plane_bytes(plane.bytes()).unwrap(),
            _ => writer
                .write_plane(&plane.to_owned_plane().unwrap())
                .unwrap(),
        }
    }
    for s in view.hostnames() {
        writer.add_hostname(s.unwrap());
    }
    space
        .errors
        .iter()
        .for_each(|s| writer.add_error(s.as_str()));
    space
        .warnings
        .iter()
        .for_each(|s| writer.add_warning(s.as_str()));
    assert_eq!(writer.finish().unwrap(), bytes);

    // `encode_plane` is one plane's message, as prost writes it and `decode_plane` reads it.
    for plane in &space.planes {
        let encoded = encode_plane(plane);
        assert_eq!(encoded, prost::Message::encode_to_vec(plane));
        assert_eq!(&decode_plane(encoded.clone()).unwrap(), plane);
        assert_eq!(XPlaneView::new(&encoded).unwrap().id(), plane.id);
    }
}

/// A large plane length (a multi-byte varint in the entry's header) is written as `encode` does.
#[test]
fn long_plane_headers() {
    let mut plane = XPlane {
        name: "x".repeat(300_000),
        ..Default::default()
    };
    plane.id = 9;
    let space = XSpace {
        planes: vec![plane.clone(), plane],
        ..Default::default()
    };
    let bytes = encode(&space);
    assert_eq!(streamed(&space), bytes);
    let mut writer = XSpaceWriter::new(Vec::new());
    for plane in &space.planes {
        writer.write_plane_bytes(&encode_plane(plane)).unwrap();
    }
    assert_eq!(writer.finish().unwrap(), bytes);
}

/// Every decodable XSpace of the conformance suite, decoded and written plane by plane, gives
/// `encode`'s bytes; its planes copied as encoded give a space that decodes to the same.
#[test]
fn every_conformance_input() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/xplane");
    let mut cases = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let input = entry.unwrap().path().join("input.xplane.pb");
        if !input.is_file() {
            continue;
        }
        let bytes = std::fs::read(&input).unwrap();
        let Ok(space) = decode(bytes.clone()) else {
            continue;
        };
        cases += 1;
        assert_eq!(streamed(&space), encode(&space), "{}", input.display());
        let view = XSpaceView::new(&bytes).unwrap();
        let mut writer = XSpaceWriter::new(Vec::new());
        for plane in view.planes() {
            writer.write_plane_view(&plane.unwrap()).unwrap();
        }
        space
            .errors
            .iter()
            .for_each(|s| writer.add_error(s.as_str()));
        space
            .warnings
            .iter()
            .for_each(|s| writer.add_warning(s.as_str()));
        space
            .hostnames
            .iter()
            .for_each(|s| writer.add_hostname(s.as_str()));
        let copied = writer.finish().unwrap();
        // Compared by encoding: a NaN stat is not equal to itself.
        assert_eq!(
            encode(&decode(copied).unwrap()),
            encode(&space),
            "{}",
            input.display()
        );
    }
    assert!(cases >= 30, "only {cases} conformance inputs decoded");
}

/// A failing output is reported, not ignored.
#[test]
fn write_errors_are_returned() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let space = built();
    let mut writer = XSpaceWriter::new(Full);
    assert!(writer.write_plane(&space.planes[0]).is_err());
    let mut writer = XSpaceWriter::new(Full);
    writer.add_hostname("h");
    assert!(writer.finish().is_err());
    assert!(profkit_xplane::write(&space, Full).is_err());
}

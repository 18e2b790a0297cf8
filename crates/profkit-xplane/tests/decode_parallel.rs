//! `PlaneBytes::decode_parallel` gives the plane `decode` gives, and the same error for a damaged
//! one, on one thread and on several.

use profkit_xplane::{PlaneBuilder, RawSpaceItem, ReadOptions, XPlane, XSpace, XSpaceReader};

/// A host plane of `lines` lines and 60,000 events in all (past the parallel threshold), with
/// stats of every kind.
fn space(lines: i64) -> Vec<u8> {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/host:CPU");
    for l in 0..lines {
        let mut line = b.line(l);
        line.set_name(format!("thread {l}"))
            .set_timestamp_ns(1_000 + l);
        for e in 0..60_000 / lines {
            line.add_event(&format!("op{}", e % 17))
                .set_offset_ps(e * 10)
                .set_duration_ps(5 + e % 3)
                .add_stat("id", e)
                .add_stat("name", format!("n{}", e % 5))
                .add_stat("ratio", 0.5)
                .add_stat("bytes", vec![1u8, 2, 3]);
        }
    }
    profkit_xplane::encode(&XSpace {
        planes: vec![plane],
        ..XSpace::default()
    })
}

/// A plane decoded, as text, or its error.
type Decoded = Result<String, String>;

/// Each plane of the bytes decoded both ways (errors as text; planes as their `Debug` text, so
/// that a damaged double that reads as NaN compares equal to itself).
fn both(bytes: &[u8]) -> (Vec<Decoded>, Vec<Decoded>) {
    let mut one = Vec::new();
    let mut two = Vec::new();
    for item in XSpaceReader::new(bytes, ReadOptions::default()).raw() {
        let Ok(RawSpaceItem::Plane(plane)) = item else {
            continue;
        };
        let copy = plane.clone();
        let text = |p: XPlane| format!("{p:?}");
        one.push(plane.decode().map(text).map_err(|e| e.to_string()));
        two.push(copy.decode_parallel().map(text).map_err(|e| e.to_string()));
    }
    (one, two)
}

/// What a test failure shows of the planes: their text's length, or the error.
fn summary(planes: &[Decoded]) -> Vec<Result<usize, String>> {
    planes
        .iter()
        .map(|p| p.as_ref().map(String::len).map_err(Clone::clone))
        .collect()
}

#[test]
fn parallel_decoding_is_decoding() {
    let mut errors = 0;
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            for lines in [1, 4] {
                let bytes = space(lines);
                let (one, two) = both(&bytes);
                assert_eq!(one.len(), 1);
                assert!(one[0].is_ok());
                assert!(one == two, "{threads} threads, {lines} lines");
                // Damaged in a line's events (a varint run off the end of a field): the same
                // error, from the same line.
                for at in (1..7).map(|k| bytes.len() * k / 7) {
                    let mut bad = bytes.clone();
                    bad[at] = 0xff;
                    bad[at + 1] = 0xff;
                    let (one, two) = both(&bad);
                    assert!(
                        one == two,
                        "{threads} threads, {lines} lines, damage at {at}: {:?} and {:?}",
                        summary(&one),
                        summary(&two)
                    );
                    errors += one.iter().filter(|p| p.is_err()).count();
                }
            }
        });
    }
    assert!(errors > 0, "no damage made an error");
}

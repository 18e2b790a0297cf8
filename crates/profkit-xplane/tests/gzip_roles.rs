//! gzip in the library readers, line roles and self times, on the real device profiles of
//! `conformance/xplane-device` (GPU, ROCm and TPU, kept gzipped).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use profkit_xplane::summary::Summary;
use profkit_xplane::utils::self_times;
use profkit_xplane::{
    LineRole, ReadOptions, SpaceItem, XSpaceReader, XSpaceView, decode, line_role, read, read_file,
};

fn sample(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/xplane-device")
        .join(case)
        .join("input.xplane.pb.gz")
}

fn gunzip(path: &PathBuf) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn read_file_reads_a_gzipped_xspace() {
    for case in ["gpu", "rocm1", "tpu"] {
        let path = sample(case);
        let from_gzip = read_file(&path, ReadOptions::default()).unwrap();
        let plain = decode(gunzip(&path)).unwrap();
        assert_eq!(from_gzip, plain, "{case}");
        // `read` of any reader, and the streaming reader, too.
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(read(file, ReadOptions::default()).unwrap(), plain);
        let file = std::fs::File::open(&path).unwrap();
        let streamed = XSpaceReader::new(file, ReadOptions::default())
            .collect_space()
            .unwrap();
        assert_eq!(streamed, plain, "{case}");
        let bytes = profkit_xplane::xview::read_file_bytes(&path, ReadOptions::default()).unwrap();
        assert_eq!(decode(bytes).unwrap(), plain);
    }
}

#[test]
fn gzip_keeps_its_limit_and_says_so() {
    let path = sample("tpu");
    let options = ReadOptions::default().with_max_inflated(profkit_gzip::Limit::Bytes(100_000));
    let Err(err) = read_file(&path, options) else {
        panic!("a 100 kB limit reads the TPU profile");
    };
    let err = err.to_string();
    assert!(err.contains("gzip"), "{err}");
    assert!(err.contains("max_inflated"), "{err}");
    assert!(err.contains("input.xplane.pb.gz"), "{err}");
    // A bomb: 16 MiB of a valid XSpace (empty `errors`, `0x12 0x00`, over and over) in a few
    // kilobytes is refused by the default ratio long before it is read, by the streaming reader
    // too.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&[0x12u8, 0x00].repeat(8 << 20)).unwrap();
    let bomb = gz.finish().unwrap();
    let Err(err) = read(&bomb[..], ReadOptions::default()) else {
        panic!("a bomb reads");
    };
    let err = err.to_string();
    assert!(
        err.contains("gzip") && err.contains("max_inflated"),
        "{err}"
    );
    let mut read_before = 0usize;
    let mut failed = false;
    for item in XSpaceReader::new(&bomb[..], ReadOptions::default()) {
        if item.is_err() {
            failed = true;
            break;
        }
        read_before += 1;
    }
    assert!(failed && read_before < 4 << 20, "{read_before} items");
}

#[test]
fn the_real_device_lines_have_the_roles_their_names_say() {
    let mut roles: BTreeMap<(&str, LineRole), usize> = BTreeMap::new();
    let spaces: Vec<_> = ["gpu", "rocm1", "tpu"]
        .iter()
        .map(|case| {
            (
                *case,
                read_file(sample(case), ReadOptions::default()).unwrap(),
            )
        })
        .collect();
    for (case, space) in &spaces {
        for plane in &space.planes {
            for line in &plane.lines {
                *roles
                    .entry((case, line_role(&plane.name, &line.name)))
                    .or_default() += 1;
            }
        }
    }
    let want: BTreeMap<(&str, LineRole), usize> = [
        (("gpu", LineRole::Stream), 9),
        (("gpu", LineRole::Steps), 2),
        (("gpu", LineRole::NameScope), 2),
        (("gpu", LineRole::FrameworkOps), 2),
        (("gpu", LineRole::HostThread), 22),
        (("rocm1", LineRole::Stream), 11),
        (("rocm1", LineRole::HostThread), 32),
        (("tpu", LineRole::XlaOps), 4),
        (("tpu", LineRole::XlaModules), 4),
        (("tpu", LineRole::AsyncXlaOps), 4),
        (("tpu", LineRole::Other), 8),
        (("tpu", LineRole::HostThread), 122),
    ]
    .into_iter()
    .collect();
    assert_eq!(roles, want);
}

#[test]
fn inspect_ranks_device_ops_with_self_time() {
    let space = read_file(sample("tpu"), ReadOptions::default()).unwrap();
    let summary = Summary::of(&space);
    let tpu0 = &summary.planes[0];
    assert!(tpu0.top_events_device_ops);
    // Modules (`jit_f(...)`) are not ops; ops are ranked over `XLA Ops` alone.
    assert!(tpu0.top_events.iter().all(|e| !e.name.starts_with("jit_")));
    assert!(
        tpu0.top_events
            .iter()
            .all(|e| e.self_duration_ps <= e.total_duration_ps)
    );
    // JAX gives every plane id 0: the index tells them apart.
    let indexes: Vec<usize> = summary.planes.iter().map(|p| p.index).collect();
    assert_eq!(indexes, (0..space.planes.len()).collect::<Vec<_>>());
    let host = summary
        .planes
        .iter()
        .find(|p| p.name == "/host:CPU")
        .unwrap();
    assert!(!host.top_events_device_ops);
    // Host threads nest: some name's self time is less than its total.
    assert!(
        host.top_events
            .iter()
            .any(|e| e.self_duration_ps < e.total_duration_ps)
    );

    // The streamed summary says the same.
    let bytes = gunzip(&sample("tpu"));
    let viewed = Summary::of_view(&XSpaceView::new(&bytes).unwrap()).unwrap();
    assert_eq!(viewed.planes, summary.planes);
}

#[test]
fn self_times_nest_within_a_line() {
    // A step [0, 100) holding ops [10, 40) and [50, 90); the second holds [60, 70); an event
    // [95, 105) overlaps the step's end and is not inside it; an aggregated event has none.
    let spans = [
        Some((0, 100)),
        Some((10, 30)),
        Some((50, 40)),
        Some((60, 10)),
        Some((95, 10)),
        None,
    ];
    assert_eq!(
        self_times(&spans),
        [Some(30), Some(30), Some(30), Some(10), Some(10), None]
    );
    // Order does not matter; equal spans nest the earlier over the later.
    assert_eq!(
        self_times(&[Some((60, 10)), Some((0, 100)), Some((0, 100))]),
        [Some(10), Some(0), Some(90)]
    );
    assert_eq!(self_times(&[Some((0, -5))]), [Some(0)]);
    assert!(self_times(&[]).is_empty());
}

#[test]
fn streamed_items_of_a_gzipped_space_keep_its_hostnames() {
    let file = std::fs::File::open(sample("gpu")).unwrap();
    let hosts: Vec<String> = XSpaceReader::new(file, ReadOptions::default())
        .filter_map(|item| match item.unwrap() {
            SpaceItem::Hostname(h) => Some(h),
            _ => None,
        })
        .collect();
    assert_eq!(hosts, ["34.83.195.179:6003"]);
}

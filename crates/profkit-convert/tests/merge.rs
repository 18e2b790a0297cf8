//! `merge`, which keeps the merged host planes encoded (in memory, or in a file with
//! `merge_spilled`), writes the bytes of `merge_decoded`,
//! which merges decoded planes with `merge_planes` (the reference), or fails with the same error:
//! on every XSpace of `conformance/` merged with itself and with the others, on spaces made to
//! reach each rule of the merge (lines sharing an id, rebased starts, occurrence counts, ref
//! values, metadata children, hosts whose sessions start apart), on random spaces, and on
//! damaged input.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use profkit_convert::merge::{HostInput, merge, merge_decoded, merge_spilled};
use profkit_xplane::{
    ReadOptions, XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, encode,
    x_event, x_stat,
};

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

/// Every XSpace input of `conformance/` (the device ones gzipped, which merging reads as they are).
fn cases() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (folder, file) in [
        ("xplane", "input.xplane.pb"),
        ("xplane-device", "input.xplane.pb.gz"),
    ] {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(conformance().join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join(file).is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            let name = format!("{folder}/{}", dir.file_name().unwrap().to_string_lossy());
            out.push((name, std::fs::read(dir.join(file)).unwrap()));
        }
    }
    assert!(out.len() > 60, "{} cases", out.len());
    out
}

type Outcome = (Result<(Vec<String>, usize, Vec<String>), String>, Vec<u8>);

/// How a merge is made: `merge`, `merge_spilled` (its lines kept in a file) or `merge_decoded`.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    Encoded,
    Spilled,
    Decoded,
}

/// An empty file to spill a merge's lines into (removed once opened).
fn spill_file() -> std::fs::File {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "profkit-merge-test-{}-{n}.spill",
        std::process::id()
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    file
}

fn run(inputs: &[&[u8]], way: Way) -> Outcome {
    let mut hosts: Vec<HostInput<Cursor<&[u8]>>> = inputs
        .iter()
        .enumerate()
        .map(|(i, bytes)| HostInput {
            fallback_host: format!("host-{i}"),
            host: None,
            reader: Cursor::new(*bytes),
        })
        .collect();
    let mut out = Vec::new();
    let options = ReadOptions::default();
    let result = match way {
        Way::Encoded => merge(&mut hosts, &mut out, options),
        Way::Spilled => merge_spilled(&mut hosts, &mut out, options, Some(spill_file())),
        Way::Decoded => merge_decoded(&mut hosts, &mut out, options),
    };
    (
        result
            .map(|s| (s.hosts, s.planes, s.warnings))
            .map_err(|e| e.to_string()),
        out,
    )
}

/// Merges `inputs` both ways and asserts the same outcome; returns whether the merge succeeded.
fn same(what: &str, inputs: &[&[u8]]) -> bool {
    let (encoded, encoded_out) = run(inputs, Way::Encoded);
    let (decoded, decoded_out) = run(inputs, Way::Decoded);
    let (spilled, spilled_out) = run(inputs, Way::Spilled);
    assert_eq!(encoded, decoded, "{what}");
    assert_eq!(spilled, encoded, "{what}: spilled");
    assert!(spilled_out == encoded_out, "{what}: spilled output differs");
    assert!(
        encoded_out == decoded_out,
        "{what}: outputs differ ({} and {} bytes, first difference at {:?})",
        encoded_out.len(),
        decoded_out.len(),
        encoded_out
            .iter()
            .zip(&decoded_out)
            .position(|(a, b)| a != b)
    );
    encoded.is_ok()
}

#[test]
fn conformance_spaces_merged_with_themselves_and_each_other() {
    let cases = cases();
    let mut merged = 0;
    for (name, bytes) in &cases {
        same(&format!("{name} alone"), &[bytes]);
        if same(&format!("{name} twice"), &[bytes, bytes]) {
            merged += 1;
        }
        same(&format!("{name} three times"), &[bytes, bytes, bytes]);
    }
    assert!(merged > 50, "{merged} merged");
    // Every pair of the made-up cases; the real ones (large) each with a few of them (they meet
    // each other in `real_profiles_merged_with_each_other`).
    let real = |name: &str| name.contains("real-") || name.starts_with("xplane-device");
    for (i, (a, x)) in cases.iter().enumerate() {
        for (j, (b, y)) in cases.iter().enumerate().skip(i + 1) {
            if !real(a) && !real(b) || (real(a) != real(b) && (i + j) % 9 == 0) {
                same(&format!("{a} + {b}"), &[x, y]);
            }
        }
    }
    for window in cases.windows(3) {
        let [(a, x), (b, y), (c, z)] = window else {
            continue;
        };
        same(&format!("{a} + {b} + {c}"), &[x, y, z]);
        same(&format!("{c} + {a} + {b}"), &[z, x, y]);
    }
}

#[test]
fn real_profiles_merged_with_each_other() {
    let cases: Vec<(String, Vec<u8>)> = cases()
        .into_iter()
        .filter(|(name, _)| name.contains("real-") || name.starts_with("xplane-device"))
        .collect();
    assert!(cases.len() >= 12, "{} real cases", cases.len());
    for (i, (a, x)) in cases.iter().enumerate() {
        for (b, y) in cases.iter().skip(i) {
            assert!(same(&format!("{a} + {b}"), &[x, y]), "{a} + {b} fails");
        }
    }
    // Hosts the other way round (the later session first).
    for pair in cases.windows(2) {
        let [(a, x), (b, y)] = pair else { continue };
        assert!(same(&format!("{b} + {a}"), &[y, x]), "{b} + {a} fails");
    }
}

/// Damaged input: every conformance space cut short at a few places and with a byte changed,
/// merged after a good one, fails alike (or merges alike).
#[test]
fn damaged_spaces_fail_alike() {
    let cases = cases();
    let good = &cases
        .iter()
        .find(|(name, _)| name.ends_with("real-tf-nostep"))
        .unwrap()
        .1;
    let mut failed = 0;
    for (name, bytes) in cases.iter().filter(|(n, _)| !n.ends_with(".gz")) {
        let len = bytes.len();
        for cut in [
            1,
            2,
            len / 7,
            len / 3,
            len / 2,
            len * 5 / 6,
            len.saturating_sub(1),
        ] {
            let Some(short) = bytes.get(..cut) else {
                continue;
            };
            if !same(&format!("{name} cut at {cut}"), &[good, short]) {
                failed += 1;
            }
            same(&format!("{name} cut at {cut}, first"), &[short, good]);
        }
        for at in [3, len / 5, len / 2, len * 3 / 4] {
            for value in [0x00, 0xff, 0x7f, 0x0a] {
                let mut changed = bytes.clone();
                if let Some(b) = changed.get_mut(at) {
                    *b = value;
                }
                same(&format!("{name} byte {at} = {value:#x}"), &[good, &changed]);
            }
        }
    }
    assert!(failed > 50, "{failed} damaged merges failed");
}

// Spaces made to reach each rule.

fn stat(metadata_id: i64, value: x_stat::Value) -> XStat {
    XStat {
        metadata_id,
        value: Some(value),
    }
}

fn event(metadata_id: i64, data: x_event::Data, duration_ps: i64, stats: Vec<XStat>) -> XEvent {
    XEvent {
        metadata_id,
        data: Some(data),
        duration_ps,
        stats,
    }
}

fn line(id: i64, name: &str, display: &str, timestamp_ns: i64, events: Vec<XEvent>) -> XLine {
    XLine {
        id,
        display_id: id + 100,
        name: name.into(),
        display_name: display.into(),
        timestamp_ns,
        duration_ps: 77,
        events,
    }
}

fn stat_md(plane: &mut XPlane, id: i64, name: &str) {
    plane.stat_metadata.insert(
        id,
        XStatMetadata {
            id,
            name: name.into(),
            description: "d".into(),
        },
    );
}

fn event_md(plane: &mut XPlane, id: i64, name: &str, display: &str, children: Vec<i64>) {
    plane.event_metadata.insert(
        id,
        XEventMetadata {
            id,
            name: name.into(),
            display_name: display.into(),
            metadata: if id % 2 == 0 {
                bytes::Bytes::from(vec![id as u8; 3])
            } else {
                bytes::Bytes::new()
            },
            stats: vec![
                stat(3, x_stat::Value::RefValue(4)),
                stat(5, x_stat::Value::Int64Value(-id)),
                XStat {
                    metadata_id: 3,
                    value: None,
                },
            ],
            child_id: children,
        },
    );
}

fn task_env(start: Option<u64>, stop: Option<u64>, extra: &str) -> XPlane {
    let mut plane = XPlane {
        id: 9,
        name: "Task Environment".into(),
        ..XPlane::default()
    };
    stat_md(&mut plane, 1, "profile_start_time");
    stat_md(&mut plane, 2, "profile_stop_time");
    stat_md(&mut plane, 3, extra);
    stat_md(&mut plane, 4, "profile_start_time");
    if let Some(start) = start {
        plane.stats.push(stat(1, x_stat::Value::Uint64Value(start)));
    }
    if let Some(stop) = stop {
        plane.stats.push(stat(2, x_stat::Value::Uint64Value(stop)));
    }
    plane
        .stats
        .push(stat(3, x_stat::Value::StrValue(extra.into())));
    plane.stats.push(stat(4, x_stat::Value::Int64Value(3)));
    plane
}

/// A host plane whose lines have the given ids and starts, each with a few events.
fn host_plane(lines: &[(i64, i64, usize)], variant: i64) -> XPlane {
    let mut plane = XPlane {
        id: 3,
        name: "/host:CPU".into(),
        ..XPlane::default()
    };
    stat_md(&mut plane, 1, "tid");
    stat_md(&mut plane, 2, "");
    stat_md(&mut plane, 3, "tf_op");
    stat_md(&mut plane, 4, "MatMul");
    stat_md(&mut plane, 5, &format!("v{variant}"));
    event_md(&mut plane, 1, "step", "Step", vec![2, 3, 99]);
    event_md(&mut plane, 2, "op", "", vec![]);
    event_md(&mut plane, 3, &format!("op{variant}"), "", vec![1]);
    event_md(&mut plane, 4, "", "unnamed", vec![]);
    plane
        .stats
        .push(stat(1, x_stat::Value::Int64Value(variant)));
    plane.stats.push(stat(3, x_stat::Value::RefValue(4)));
    plane.stats.push(stat(42, x_stat::Value::DoubleValue(0.5)));
    for (k, &(id, ts, count)) in lines.iter().enumerate() {
        let events = (0..count as i64)
            .map(|e| {
                let data = if e % 3 == 2 {
                    x_event::Data::NumOccurrences(e + 1)
                } else {
                    x_event::Data::OffsetPs(e * 1000 - 500)
                };
                event(
                    (e + k as i64) % 6,
                    data,
                    e * 7,
                    vec![
                        stat(1, x_stat::Value::Uint64Value(e as u64)),
                        stat(3, x_stat::Value::RefValue((e % 7) as u64)),
                        stat(2, x_stat::Value::BytesValue(vec![1, 2].into())),
                        stat(9, x_stat::Value::StrValue(String::new())),
                        XStat {
                            metadata_id: 5,
                            value: None,
                        },
                        stat(5, x_stat::Value::DoubleValue(-0.0)),
                    ],
                )
            })
            .collect();
        let name = if k % 3 == 1 { "" } else { "thread" };
        let display = if k % 2 == 1 { "shown" } else { "" };
        plane
            .lines
            .push(line(id, &format!("{name}{}", k % 2), display, ts, events));
    }
    plane
}

fn space(planes: Vec<XPlane>, hostname: Option<&str>) -> Vec<u8> {
    encode(&XSpace {
        planes,
        errors: vec!["e".into()],
        warnings: vec!["w".into()],
        hostnames: hostname.into_iter().map(String::from).collect(),
    })
}

#[test]
fn lines_sharing_ids_within_and_across_hosts() {
    let t = 1_000_000;
    // (id, start, events)
    let layouts: Vec<Vec<(i64, i64, usize)>> = vec![
        vec![(1, t, 4), (2, t, 3)],
        // The same id in a row: later, earlier, without events, first without events.
        vec![
            (1, t, 4),
            (1, t + 5, 3),
            (1, t - 7, 2),
            (2, t, 0),
            (2, t + 3, 5),
        ],
        vec![(4, t, 0), (4, t - 9, 0), (4, t + 1, 3), (4, t - 2, 2)],
        // An id that comes back after another line (merged decoded).
        vec![(1, t, 2), (2, t, 2), (1, t - 4, 3)],
        // Ids that renaming makes collide with the other hosts' (5 -> 6 beside 6).
        vec![(5, t, 3), (6, t + 2, 2), (7, t, 1)],
        vec![(5, t, 3), (7, t, 2), (6, t - 3, 1)],
        // Offsets that saturate when rebased.
        vec![(3, i64::MAX / 1000, 3), (3, 0, 2), (3, -5, 1)],
        vec![(3, i64::MIN / 2000, 3), (3, i64::MAX, 2)],
        // Only empty lines.
        vec![(8, t, 0), (9, t, 0)],
        vec![],
    ];
    let planes: Vec<Vec<u8>> = layouts
        .iter()
        .enumerate()
        .map(|(i, l)| {
            space(
                vec![host_plane(l, i as i64 % 3), task_env(Some(5), Some(9), "x")],
                Some("h"),
            )
        })
        .collect();
    for (i, a) in planes.iter().enumerate() {
        same(&format!("layout {i}"), &[a]);
        for (j, b) in planes.iter().enumerate() {
            same(&format!("layouts {i} + {j}"), &[a, b]);
            for (k, c) in planes.iter().enumerate().step_by(3) {
                same(&format!("layouts {i} + {j} + {k}"), &[a, b, c]);
            }
        }
    }
}

#[test]
fn sessions_apart_shift_and_clamp_lines() {
    let lines = [(1, 10, 3), (2, i64::MAX - 5, 2), (2, 1, 1)];
    let starts = [
        (Some(1_000), Some(2_000)),
        (Some(500), Some(9_000)),
        (None, Some(3)),
        (Some(u64::MAX), None),
        (None, None),
        (Some(i64::MAX as u64 + 1_000), Some(1)),
    ];
    let spaces: Vec<Vec<u8>> = starts
        .iter()
        .enumerate()
        .map(|(i, &(start, stop))| {
            let mut planes = vec![host_plane(&lines, i as i64)];
            // Task Environment first or last, twice when it has no start.
            let env = task_env(start, stop, &format!("env{i}"));
            if i % 2 == 0 {
                planes.insert(0, env);
            } else {
                planes.push(env);
            }
            if start.is_none() {
                planes.push(task_env(Some(700 + i as u64), Some(800), "again"));
            }
            space(planes, (i % 3 != 0).then_some("named"))
        })
        .collect();
    for (i, a) in spaces.iter().enumerate() {
        for (j, b) in spaces.iter().enumerate() {
            same(&format!("sessions {i} + {j}"), &[a, b]);
            let k = (i + j) % spaces.len();
            same(&format!("sessions {i} + {j} + {k}"), &[a, b, &spaces[k]]);
        }
    }
}

/// Hostile ids: metadata keys that differ from their ids, dangling and negative ids, repeated
/// names, planes with the same name twice in one space, device and other planes mixed.
#[test]
fn hostile_ids_merge_alike() {
    let mut odd = host_plane(&[(1, 5, 4), (-3, -7, 3)], 1);
    odd.event_metadata.insert(
        -2,
        XEventMetadata {
            id: 77,
            name: "op".into(),
            child_id: vec![-2, 1, i64::MIN],
            ..XEventMetadata::default()
        },
    );
    odd.stat_metadata.insert(
        -1,
        XStatMetadata {
            id: 1,
            name: "tid".into(),
            description: String::new(),
        },
    );
    odd.lines[0].events.push(event(
        -2,
        x_event::Data::OffsetPs(i64::MIN),
        -1,
        vec![
            stat(-1, x_stat::Value::RefValue(u64::MAX)),
            stat(-1, x_stat::Value::RefValue(-1_i64 as u64)),
        ],
    ));
    odd.lines[1].events.push(XEvent {
        metadata_id: 1000,
        data: None,
        duration_ps: 3,
        stats: vec![],
    });
    let mut device = host_plane(&[(1, 5, 2)], 2);
    device.name = "/device:GPU:0".into();
    let mut other = host_plane(&[(2, 9, 2), (1, 4, 1)], 0);
    other.name = "/host:metadata".into();
    let a = space(
        vec![odd.clone(), device.clone(), other.clone(), odd.clone()],
        Some("a"),
    );
    let b = space(vec![other, odd, task_env(Some(1), Some(2), "t")], None);
    let c = space(vec![device], Some("c"));
    let (a, b, c) = (a.as_slice(), b.as_slice(), c.as_slice());
    for inputs in [vec![a], vec![a, a], vec![a, b], vec![b, a, c], vec![c, b]] {
        same("hostile", &inputs);
    }
}

/// Random spaces: few line ids (so they repeat), few names (so metadata collides), every kind of
/// stat and event.
#[test]
fn random_spaces_merge_alike() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n.max(1)
    };
    let names = ["", "a", "b", "c", "step", "MatMul"];
    for round in 0..300 {
        let mut spaces = Vec::new();
        for _ in 0..1 + next(3) {
            let mut planes = Vec::new();
            for _ in 0..1 + next(3) {
                let mut plane = XPlane {
                    id: next(5) as i64,
                    name: ["/host:CPU", "Task Environment", "/device:TPU:0", "x"][next(4) as usize]
                        .into(),
                    ..XPlane::default()
                };
                for id in 0..next(6) as i64 {
                    stat_md(&mut plane, id, names[next(6) as usize]);
                }
                for id in 0..next(6) as i64 {
                    let children = (0..next(3)).map(|_| next(7) as i64).collect();
                    event_md(
                        &mut plane,
                        id,
                        names[next(6) as usize],
                        names[next(2) as usize],
                        children,
                    );
                }
                let value = |next: &mut dyn FnMut(u64) -> u64| match next(7) {
                    0 => Some(x_stat::Value::DoubleValue(next(100) as f64 / 3.0)),
                    1 => Some(x_stat::Value::Uint64Value(next(u64::MAX))),
                    2 => Some(x_stat::Value::Int64Value(next(100) as i64 - 50)),
                    3 => Some(x_stat::Value::StrValue(names[next(6) as usize].into())),
                    4 => Some(x_stat::Value::BytesValue(vec![0; next(3) as usize].into())),
                    5 => Some(x_stat::Value::RefValue(next(8))),
                    _ => None,
                };
                for _ in 0..next(3) {
                    plane.stats.push(XStat {
                        metadata_id: next(7) as i64,
                        value: value(&mut next),
                    });
                }
                for _ in 0..next(7) {
                    let ts = [0, 5, 1_000, -3, i64::MAX, i64::MAX / 1000][next(6) as usize];
                    let mut events = Vec::new();
                    for _ in 0..next(4) {
                        let data = match next(3) {
                            0 => None,
                            1 => Some(x_event::Data::NumOccurrences(next(9) as i64)),
                            _ => Some(x_event::Data::OffsetPs(
                                [0, 1_000, -2_000, i64::MAX, i64::MIN][next(5) as usize],
                            )),
                        };
                        let stats = (0..next(3))
                            .map(|_| XStat {
                                metadata_id: next(7) as i64,
                                value: value(&mut next),
                            })
                            .collect();
                        events.push(XEvent {
                            metadata_id: next(7) as i64,
                            data,
                            duration_ps: next(50) as i64,
                            stats,
                        });
                    }
                    plane.lines.push(XLine {
                        id: next(4) as i64,
                        display_id: next(2) as i64,
                        name: names[next(6) as usize].into(),
                        display_name: names[next(3) as usize].into(),
                        timestamp_ns: ts,
                        duration_ps: next(9) as i64,
                        events,
                    });
                }
                if plane.name == "Task Environment" && next(2) == 0 {
                    stat_md(&mut plane, 10, "profile_start_time");
                    plane.stats.push(stat(
                        10,
                        x_stat::Value::Uint64Value([0, 1 << 40, u64::MAX][next(3) as usize]),
                    ));
                }
                planes.push(plane);
            }
            spaces.push(space(planes, (next(2) == 0).then_some("r")));
        }
        let inputs: Vec<&[u8]> = spaces.iter().map(Vec::as_slice).collect();
        same(&format!("round {round}"), &inputs);
    }
}

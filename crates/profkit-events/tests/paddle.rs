//! Paddle's two protobufs: real files, round trips, conversions, checks, and hostile input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use profkit_error::Truncation;
use profkit_events::paddle::legacy::{self, Profile, ProfileItem, ProfileReader};
use profkit_events::paddle::nodetree::{
    self, HostTraceEventNodeProto, NodeTreesItem, NodeTreesProto, NodeTreesReader,
};
use profkit_events::paddle::{Format, ProblemKind, ReadOptions};
use profkit_events::report::{Report, ReportOptions};
use profkit_events::{Error, Event, Recording, ThreadEvents, pair};

fn case(name: &str, file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/paddle")
        .join(name)
        .join(file)
}

fn sample_profile() -> Vec<u8> {
    std::fs::read(case("dygraph-cpu-total", "input.pb")).unwrap()
}

fn sample_trees() -> Vec<u8> {
    std::fs::read(case("nodetree-sample", "input.paddle_trace.pb")).unwrap()
}

#[test]
fn a_real_profile_decodes_and_reencodes_byte_for_byte() {
    let bytes = sample_profile();
    let profile = legacy::decode_profile(&bytes).unwrap();
    assert_eq!(profile.events.len(), 36);
    assert_eq!((profile.start_ns, profile.end_ns), (Some(0), Some(0)));
    let first = &profile.events[0];
    assert_eq!(first.name.as_deref(), Some("sum pybind_imperative_func"));
    assert_eq!((first.r#type, first.sub_device_id), (Some(0), Some(0)));
    assert_eq!(legacy::encode_profile(&profile), bytes);
    // Through the event model and back: the same bytes, as Paddle wrote them.
    let recording = legacy::to_recording(&profile);
    assert_eq!(recording.threads.len(), 1);
    assert_eq!(recording.threads[0].events.len(), 72);
    assert_eq!(
        legacy::encode_profile(&legacy::from_recording(&recording)),
        bytes
    );
    assert!(legacy::validate(&profile).is_empty());
    let summary = legacy::summarize(&profile);
    assert_eq!((summary.cpu_events, summary.max_depth), (36, 2));
}

#[test]
fn the_streaming_reader_agrees_with_the_whole_decode() {
    let bytes = sample_profile();
    let streamed = ProfileReader::new(&bytes[..], ReadOptions::default())
        .collect_profile()
        .unwrap();
    assert_eq!(streamed, legacy::decode_profile(&bytes).unwrap());
    let items: Vec<ProfileItem> = ProfileReader::new(&bytes[..], ReadOptions::default())
        .map(Result::unwrap)
        .collect();
    assert!(matches!(items.last(), Some(ProfileItem::EndNs(0))));

    let bytes = sample_trees();
    let streamed = NodeTreesReader::new(&bytes[..], ReadOptions::default())
        .collect_trees()
        .unwrap();
    assert_eq!(streamed, nodetree::decode_node_trees(&bytes).unwrap());
    let first = NodeTreesReader::new(&bytes[..], ReadOptions::default())
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(first, NodeTreesItem::Version("1.0.2".into()));
}

#[test]
fn a_recording_writes_a_profile_that_reads_back_to_the_same_report() {
    let mut threads = Vec::new();
    for t in 0..3u32 {
        let mut th = ThreadEvents::new(t);
        let base = u64::from(t) * 1000;
        th.events = vec![
            Event::push("step", t, base),
            Event::push("op", t, base + 10),
            Event::pop("op", t, base + 20),
            Event::push("op", t, base + 30),
            Event::pop("op", t, base + 45),
            Event::pop("step", t, base + 100),
        ];
        threads.push(th);
    }
    let recording = Recording {
        threads,
        ..Recording::default()
    };
    let profile = legacy::from_recording(&recording);
    assert_eq!(profile.events.len(), 9);
    assert_eq!(profile.events[0].name.as_deref(), Some("step"));
    assert_eq!(profile.events[1].name.as_deref(), Some("step/op"));
    let back =
        legacy::to_recording(&legacy::decode_profile(&legacy::encode_profile(&profile)).unwrap());
    let options = ReportOptions::default();
    assert_eq!(
        Report::new(&back, options).text(),
        Report::new(&recording, options).text()
    );
}

#[test]
fn kernels_and_memory_events_survive_the_event_model() {
    let profile = Profile {
        events: vec![
            legacy::Event {
                r#type: Some(1),
                name: Some("matmul".into()),
                start_ns: Some(10),
                end_ns: Some(20),
                device_id: Some(0),
                sub_device_id: Some(7),
                memcopy: None,
                detail_info: Some("sgemm_kernel".into()),
            },
            legacy::Event {
                r#type: Some(1),
                name: Some("copy".into()),
                start_ns: Some(30),
                end_ns: Some(40),
                device_id: Some(1),
                sub_device_id: Some(7),
                memcopy: Some(legacy::MemCopy { bytes: Some(4096) }),
                detail_info: Some("memcpy".into()),
            },
        ],
        start_ns: Some(10),
        end_ns: Some(40),
        mem_events: vec![legacy::MemEvent {
            start_ns: Some(1),
            end_ns: Some(2),
            bytes: Some(1024),
            place: Some(0),
            thread_id: Some(0),
            device_id: Some(0),
            alloc_in: Some("matmul".into()),
            free_in: Some("relu".into()),
        }],
    };
    let recording = legacy::to_recording(&profile);
    assert_eq!(recording.device_spans.len(), 2);
    assert_eq!(recording.memory.len(), 1);
    assert_eq!(legacy::from_recording(&recording), profile);
}

#[test]
fn node_trees_decode_completely() {
    let trees = nodetree::decode_node_trees(&sample_trees()).unwrap();
    assert_eq!(trees.version, "1.0.2");
    assert_eq!(trees.thread_trees.len(), 1);
    let tree = &trees.thread_trees[0];
    assert_eq!(tree.thread_id, 9333);
    assert_eq!(tree.host_nodes.len(), 301);
    assert!(nodetree::is_root(&tree.host_nodes[0]));
    assert_eq!(tree.host_nodes[0].host_trace_event.end_ns, u64::MAX);
    // Types Paddle's schema lacks are kept.
    let launches = tree
        .host_nodes
        .iter()
        .filter(|n| n.host_trace_event.r#type == 15)
        .count();
    assert_eq!(launches, 63);
    assert_eq!(nodetree::type_name(15), Some("DygraphKernelLaunch"));
    assert!(
        nodetree::validate(&trees).is_empty(),
        "{:?}",
        nodetree::validate(&trees)
    );
    assert_eq!(nodetree::encode_node_trees(&trees), sample_trees());

    // Host nodes per thread equal the host events of Paddle's Chrome trace of the same run.
    let json: serde_json::Value = serde_json::from_slice(
        &std::fs::read(case("nodetree-sample", "paddle_trace.json")).unwrap(),
    )
    .unwrap();
    let mut host: BTreeMap<u64, usize> = BTreeMap::new();
    for e in json["traceEvents"].as_array().unwrap() {
        if e["ph"] == "X"
            && let Some(tid) = e["tid"].as_str()
            && (tid.ends_with("(C++)") || tid.ends_with("(Python)"))
        {
            let id: u64 = tid.split('(').next().unwrap().parse().unwrap();
            *host.entry(id).or_default() += 1;
        }
    }
    let summary = nodetree::summarize(&trees);
    let ours: BTreeMap<u64, usize> = summary
        .threads
        .iter()
        .map(|t| (t.thread_id, t.host_nodes))
        .collect();
    assert_eq!(ours, host);
    assert_eq!(summary.threads[0].mem_nodes, 90);
    assert_eq!(summary.threads[0].name.as_deref(), Some("MainThread"));

    let recording = nodetree::to_recording(&trees);
    let spans = pair(&recording.threads);
    assert_eq!(spans.threads[0].spans.len(), 300);
    assert_eq!(spans.warnings().count(), 0);
    assert_eq!(recording.threads[0].os_tid, Some(9333));
}

fn node(
    id: i64,
    parent: i64,
    name: &str,
    ty: i32,
    start: u64,
    end: u64,
) -> HostTraceEventNodeProto {
    HostTraceEventNodeProto {
        id,
        parentid: parent,
        host_trace_event: nodetree::proto::HostTraceEventProto {
            name: name.into(),
            r#type: ty,
            start_ns: start,
            end_ns: end,
            process_id: 1,
            thread_id: 5,
        },
        ..HostTraceEventNodeProto::default()
    }
}

#[test]
fn open_types_and_missing_required_fields_decode() {
    let mut trees = NodeTreesProto {
        version: "1.0.2".into(),
        ..NodeTreesProto::default()
    };
    trees.thread_trees.push(nodetree::ThreadNodeTreeProto {
        thread_id: 5,
        host_nodes: vec![
            node(0, -1, "root node", 7, 0, u64::MAX),
            node(1, 0, "odd", 99, 10, 20),
        ],
    });
    let bytes = nodetree::encode_node_trees(&trees);
    let back = nodetree::decode_node_trees(&bytes).unwrap();
    assert_eq!(
        back.thread_trees[0].host_nodes[1].host_trace_event.r#type,
        99
    );
    let problems = nodetree::validate(&back);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].kind, ProblemKind::UnknownType);
    // A host node with nothing but an id: every required field missing.
    let bare = [0x1a, 0x06, 0x08, 0x05, 0x12, 0x02, 0x08, 0x01];
    let trees = nodetree::decode_node_trees(&bare).unwrap();
    assert_eq!(trees.thread_trees[0].host_nodes[0].id, 1);
    assert_eq!(trees.version, "");
}

#[test]
fn broken_trees_are_reported() {
    let mut trees = NodeTreesProto::default();
    trees.thread_trees.push(nodetree::ThreadNodeTreeProto {
        thread_id: 5,
        host_nodes: vec![
            node(0, -1, "root node", 7, 0, u64::MAX),
            node(1, 0, "a", 0, 10, 20),
            node(2, 1, "outside", 0, 15, 30),
            node(3, 42, "dangling", 0, 1, 2),
            node(4, 5, "loop", 0, 1, 2),
            node(5, 4, "loop", 0, 1, 2),
            node(1, 0, "dup", 0, 1, 2),
            node(6, 0, "backwards", 0, 9, 3),
        ],
    });
    let kinds: Vec<ProblemKind> = nodetree::validate(&trees).iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ProblemKind::DuplicateId,
            ProblemKind::OutsideParent,
            ProblemKind::BadTree,
            ProblemKind::BadTree,
            ProblemKind::BadTree,
            ProblemKind::EndBeforeStart,
        ]
    );
}

#[test]
fn profile_problems_are_reported() {
    let event = |name: &str, ty, start, end| legacy::Event {
        r#type: Some(ty),
        name: Some(name.into()),
        start_ns: Some(start),
        end_ns: Some(end),
        device_id: Some(0),
        sub_device_id: Some(0),
        memcopy: None,
        detail_info: None,
    };
    let profile = Profile {
        events: vec![
            event("a", 0, 0, 100),
            event("a/b", 0, 10, 20),
            event("a/c", 0, 90, 120),
            event("x", 0, 50, 40),
            event("k", 9, 0, 1),
        ],
        ..Profile::default()
    };
    let problems = legacy::validate(&profile);
    let kinds: Vec<ProblemKind> = problems.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ProblemKind::EndBeforeStart,
            ProblemKind::UnknownType,
            ProblemKind::OrphanRange
        ]
    );
    assert_eq!(problems[0].path, "Profile.events[3]");
}

/// Every prefix of a valid encoding fails with a truncation or corruption at an offset within
/// the input and a path in the message, never with a panic; the streaming reader fails too.
#[test]
fn truncated_files_fail_with_offsets_and_paths() {
    for (bytes, root) in [
        (sample_profile(), "Profile"),
        (sample_trees(), "NodeTreesProto"),
    ] {
        let mut failures = 0;
        for len in 0..bytes.len() {
            let prefix = &bytes[..len];
            let (whole, streamed) = if root == "Profile" {
                (
                    legacy::decode_profile(prefix).map(|_| ()),
                    ProfileReader::new(prefix, ReadOptions::default())
                        .collect_profile()
                        .map(|_| ()),
                )
            } else {
                (
                    nodetree::decode_node_trees(prefix).map(|_| ()),
                    NodeTreesReader::new(prefix, ReadOptions::default())
                        .collect_trees()
                        .map(|_| ()),
                )
            };
            match whole {
                Ok(()) => assert!(streamed.is_ok(), "{root} prefix {len}"),
                Err(e) => {
                    failures += 1;
                    assert!(streamed.is_err(), "{root} prefix {len}: stream accepted");
                    match &e {
                        Error::Truncated(Truncation { offset, path, .. }) => {
                            assert_eq!(*offset, len as u64, "{e}");
                            assert!(path.starts_with(root), "{e}");
                        }
                        Error::Malformed { offset, path, .. } => {
                            assert!(*offset <= len as u64, "{e}");
                            assert!(path.starts_with(root), "{e}");
                        }
                        other => panic!("{other}"),
                    }
                }
            }
        }
        assert!(failures > bytes.len() / 2, "{root}: {failures} failures");
    }
}

#[test]
fn hostile_inputs_fail_clearly() {
    // A string that is not UTF-8, inside the second event.
    let mut bytes = sample_profile();
    assert!(bytes[1] < 0x80, "a one-byte length");
    let second = 2 + usize::from(bytes[1]);
    let name_at = second + 4;
    bytes[name_at] = 0xff;
    let e = legacy::decode_profile(&bytes).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("malformed Profile.events[1].name at byte {name_at}: string is not valid UTF-8")
    );
    let streamed = ProfileReader::new(&bytes[..], ReadOptions::default())
        .collect_profile()
        .unwrap_err();
    assert_eq!(streamed.to_string(), e.to_string());

    // A wrong wire type on a known field.
    let e = legacy::decode_profile(&[0x10, 0x01, 0x1a, 0x00]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed Profile.end_ns at byte 2: wire type 2 (length-delimited), expected 0 (varint)"
    );
    // A length far past the end: no allocation of that size, a truncation.
    let e = nodetree::decode_node_trees(&[0x1a, 0xff, 0xff, 0xff, 0xff, 0x0f]).unwrap_err();
    assert!(e.is_truncation(), "{e}");
    // The streaming reader refuses the declared length before reading (it is over the limit),
    // or runs out of input reading a length under it.
    let e = NodeTreesReader::new(
        &[0x1a, 0xff, 0xff, 0xff, 0xff, 0x0f][..],
        ReadOptions::default(),
    )
    .collect_trees()
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::TooLarge(profkit_error::OverLimit { offset: 6, .. })
        ),
        "{e}"
    );
    let e = NodeTreesReader::new(&[0x1a, 0xff, 0xff, 0x03, 0x08][..], ReadOptions::default())
        .collect_trees()
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Truncated(Truncation {
                offset: 5,
                needed: 65534,
                ..
            })
        ),
        "{e}"
    );
    // Over the size limit.
    let small = ReadOptions::with_max_size(10);
    let e = legacy::read_profile(&sample_profile()[..], small).unwrap_err();
    assert!(matches!(e, Error::TooLarge(_)), "{e}");
    let e = ProfileReader::new(&sample_profile()[..], small)
        .collect_profile()
        .unwrap_err();
    assert!(matches!(e, Error::TooLarge(_)), "{e}");
    // Groups nested without end.
    let deep: Vec<u8> = std::iter::repeat_n(0x7b, 200).collect();
    assert!(legacy::decode_profile(&deep).is_err());
    assert!(
        ProfileReader::new(&deep[..], ReadOptions::default())
            .collect_profile()
            .is_err()
    );
    // A file that is missing: the error names it.
    let e = legacy::read_profile_file("/nonexistent/profile", ReadOptions::default()).unwrap_err();
    assert!(
        e.to_string().starts_with("/nonexistent/profile: I/O error"),
        "{e}"
    );
}

#[test]
fn detection_tells_the_formats_apart() {
    assert_eq!(Format::detect(&sample_profile()), Some(Format::Profile));
    assert_eq!(Format::detect(&sample_trees()), Some(Format::NodeTrees));
    assert_eq!(
        Format::detect(&sample_profile()[..40]),
        Some(Format::Profile)
    );
    assert_eq!(
        Format::detect(&sample_trees()[..40]),
        Some(Format::NodeTrees)
    );
    assert_eq!(Format::detect(b""), None);
    assert_eq!(Format::detect(b"{\"traceEvents\": []}"), None);
    // An XSpace whose first plane starts with its id (varint) or name (string).
    assert_eq!(Format::detect(&[0x0a, 0x04, 0x08, 0x01, 0x12, 0x00]), None);
    assert_eq!(
        Format::detect(&[0x0a, 0x05, 0x12, 0x03, b'/', b'h', b'o']),
        None
    );
}

/// Deep chains and many same-named ranges: checks and reports that stay linear (these would take
/// hours if they were quadratic; no timing is asserted).
#[test]
fn long_chains_and_deep_nesting_stay_linear() {
    let n = 20_000i64;
    let mut nodes = vec![node(0, -1, "root node", 7, 0, u64::MAX)];
    for i in 1..=n {
        let (start, end) = (i as u64, 2 * n as u64 - i as u64);
        nodes.push(node(i, i - 1, "nest", 0, start, end));
    }
    // A second chain that loops on itself.
    nodes.push(node(n + 1, n + 2, "loop", 0, 0, 1));
    nodes.push(node(n + 2, n + 1, "loop", 0, 0, 1));
    let trees = NodeTreesProto {
        thread_trees: vec![nodetree::ThreadNodeTreeProto {
            thread_id: 5,
            host_nodes: nodes,
        }],
        ..NodeTreesProto::default()
    };
    let problems = nodetree::validate(&trees);
    assert_eq!(
        problems.len(),
        2,
        "{:?}",
        &problems[..problems.len().min(3)]
    );
    let recording = nodetree::to_recording(&trees);
    let report = Report::new(&recording, ReportOptions::default());
    assert_eq!(
        report.printed_rows().len(),
        101 + 2,
        "the chain to the limit, and the loop"
    );
    assert_eq!(report.hidden_rows as i64, n - 101);

    let event = |name: &str, start: u64, end: u64| legacy::Event {
        r#type: Some(0),
        name: Some(name.into()),
        start_ns: Some(start),
        end_ns: Some(end),
        device_id: Some(0),
        sub_device_id: Some(0),
        memcopy: None,
        detail_info: None,
    };
    let mut events = Vec::new();
    for i in 0..20_000u64 {
        events.push(event("a", 10 * i, 10 * i + 5));
        events.push(event("a/b", 10 * i + 1, 10 * i + 2));
    }
    events.push(event("a/b", 7, 8));
    let profile = Profile {
        events,
        ..Profile::default()
    };
    let problems = legacy::validate(&profile);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].kind, ProblemKind::OrphanRange);
}

/// Every memory node reaches the event model, those of Paddle's `GarbageCollector` thread too:
/// in a static-graph run it frees outside every range, so its memory nodes hang from the root.
#[test]
fn memory_nodes_on_the_root_are_memory_events() {
    use profkit_events::MemEventKind;
    let bytes = std::fs::read(case("nodetree-static-memory", "input.paddle_trace.pb")).unwrap();
    let trees = nodetree::decode_node_trees(&bytes).unwrap();
    let count = |code: i32| {
        trees
            .thread_trees
            .iter()
            .flat_map(|t| &t.host_nodes)
            .flat_map(|n| &n.mem_nodes)
            .filter(|m| m.mem_event.r#type == code)
            .count()
    };
    assert_eq!((count(0), count(1)), (40, 40));
    let collector = trees
        .thread_trees
        .iter()
        .find(|t| t.host_nodes.len() == 1)
        .unwrap();
    assert!(nodetree::is_root(&collector.host_nodes[0]));
    assert_eq!(collector.host_nodes[0].mem_nodes.len(), 24);

    let recording = nodetree::to_recording(&trees);
    let kinds = |kind: MemEventKind| {
        recording
            .memory_events
            .iter()
            .filter(|m| m.kind == kind)
            .count()
    };
    assert_eq!(kinds(MemEventKind::Allocate), 40);
    assert_eq!(kinds(MemEventKind::Free), 40);
    let summary = nodetree::summarize(&trees);
    let per_thread: Vec<usize> = summary.threads.iter().map(|t| t.mem_nodes).collect();
    assert_eq!(per_thread.iter().sum::<usize>(), 80);
    assert!(per_thread.contains(&24), "{per_thread:?}");
}

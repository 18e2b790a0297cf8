//! The tables of spaces, the Parquet dataset they make, and errors on bad input.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int32Type, Int64Type};
use arrow_array::{RecordBatch, RecordBatchReader};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use profkit_arrow::{Error, EventBatches, HostInfo, HostWriter, Options, WriteOptions, sources};
use profkit_xplane::{PlaneBuilder, ReadOptions, XPlane, XSpace, encode};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-arrow-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Two planes: a host plane with stats on events and on metadata, a device plane with an
/// aggregated event and an epoch timestamp whose picoseconds need more than 64 bits.
fn space() -> XSpace {
    let mut host = XPlane::default();
    let mut b = PlaneBuilder::new(&mut host);
    b.set_name("/host:CPU");
    b.set_id(0);
    let mut line = b.line(7);
    line.set_name("main");
    line.set_timestamp_ns(1_000);
    line.add_event("step")
        .set_offset_ps(0)
        .set_duration_ps(10_000)
        .add_stat("step_num", 3_i64)
        .add_stat("group_id", 9_i64)
        .add_stat("note", "hello");
    line.add_event("op")
        .set_offset_ps(500)
        .set_duration_ps(2_000)
        .add_stat("tf_op", "dense/MatMul")
        .add_stat("correlation_id", 42_u64)
        .add_stat("flops", 1.5e9_f64);
    let mut device = XPlane::default();
    let mut b = PlaneBuilder::new(&mut device);
    b.set_name("/device:GPU:0");
    b.set_id(1);
    let mut line = b.line(1);
    line.set_name("Stream #1");
    line.set_timestamp_ns(1_700_000_000_000_000_000);
    line.add_event("kernel")
        .set_offset_ps(5)
        .set_duration_ps(7)
        .add_stat("hlo_op", "fusion.1")
        .add_stat("bytes_accessed", 4096_i64);
    XSpace {
        planes: vec![host, device],
        hostnames: vec!["machine-1".into()],
        warnings: vec!["clock skew".into()],
        ..XSpace::default()
    }
}

fn info() -> HostInfo {
    HostInfo::new("worker0", "xspace", ["worker0.xplane.pb"])
}

fn collect<I: profkit_arrow::RawItems>(batches: &mut EventBatches<I>) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    while let Some(b) = batches.next_batch().unwrap() {
        out.push(b);
    }
    out
}

fn dict_values(batch: &RecordBatch, column: &str) -> Vec<Option<String>> {
    let array = batch.column_by_name(column).unwrap();
    let dict = array.as_dictionary::<Int32Type>();
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

fn times(batch: &RecordBatch, column: &str) -> Vec<Option<i128>> {
    batch
        .column_by_name(column)
        .unwrap()
        .as_primitive::<Decimal128Type>()
        .iter()
        .collect()
}

#[test]
fn events_have_names_times_and_typed_stats() {
    let mut batches = sources::space(space(), info(), Options::default());
    let all = collect(&mut batches);
    assert_eq!(all.len(), 1);
    let batch = &all[0];
    assert_eq!(batch.num_rows(), 3);
    assert_eq!(batch.schema(), profkit_arrow::schema::events());
    assert_eq!(
        dict_values(batch, "name"),
        [
            Some("step".into()),
            Some("op".into()),
            Some("kernel".into())
        ]
    );
    assert_eq!(dict_values(batch, "host")[2].as_deref(), Some("worker0"));
    assert_eq!(
        dict_values(batch, "plane")[2].as_deref(),
        Some("/device:GPU:0")
    );
    assert_eq!(
        times(batch, "start_ps"),
        [
            Some(1_000_000),
            Some(1_000_500),
            Some(1_700_000_000_000_000_000_000 + 5)
        ]
    );
    assert_eq!(
        ints(batch, "duration_ps"),
        [Some(10_000), Some(2_000), Some(7)]
    );
    // The op lies inside the step on its line: the step's self time is the rest.
    assert_eq!(ints(batch, "self_ps"), [Some(8_000), Some(2_000), Some(7)]);
    assert_eq!(
        dict_values(batch, "line_role"),
        [
            Some("host_thread".into()),
            Some("host_thread".into()),
            Some("stream".into())
        ]
    );
    assert_eq!(ints(batch, "step_num"), [Some(3), None, None]);
    assert_eq!(ints(batch, "group_id"), [Some(9), None, None]);
    assert_eq!(ints(batch, "correlation_id"), [None, Some(42), None]);
    assert_eq!(ints(batch, "flops"), [None, Some(1_500_000_000), None]);
    assert_eq!(ints(batch, "bytes_accessed"), [None, None, Some(4096)]);
    assert_eq!(
        dict_values(batch, "tf_op")[1].as_deref(),
        Some("dense/MatMul")
    );
    assert_eq!(dict_values(batch, "hlo_op")[2].as_deref(), Some("fusion.1"));
    // Every stat is in the map, as text.
    let stats = batch.column_by_name("stats").unwrap().as_map();
    let first = stats.value(0);
    let keys = first.column(0).as_string::<i32>();
    let values = first.column(1).as_string::<i32>();
    let pairs: Vec<(&str, &str)> = keys
        .iter()
        .zip(values.iter())
        .map(|(k, v)| (k.unwrap(), v.unwrap()))
        .collect();
    assert_eq!(
        pairs,
        [("step_num", "3"), ("group_id", "9"), ("note", "hello")]
    );

    let side = batches.side_tables().unwrap();
    assert_eq!(side.planes.num_rows(), 2);
    assert_eq!(ints(&side.planes, "events"), [Some(2), Some(1)]);
    assert_eq!(
        times(&side.planes, "total_duration_ps"),
        [Some(12_000), Some(7)]
    );
    assert_eq!(times(&side.planes, "start_ps")[0], Some(1_000_000));
    assert_eq!(times(&side.planes, "end_ps")[0], Some(1_010_000));
    assert_eq!(side.lines.num_rows(), 2);
    let roles = side
        .lines
        .column_by_name("line_role")
        .unwrap()
        .as_string::<i32>();
    assert_eq!(
        roles.iter().collect::<Vec<_>>(),
        [Some("host_thread"), Some("stream")]
    );
    let meta = &side.metadata;
    let keys = meta.column_by_name("key").unwrap().as_string::<i32>();
    let values = meta.column_by_name("value").unwrap().as_string::<i32>();
    let facts: Vec<(String, String)> = keys
        .iter()
        .zip(values.iter())
        .map(|(k, v)| (k.unwrap().to_owned(), v.unwrap().to_owned()))
        .collect();
    assert!(facts.contains(&("schema_version".into(), "2".into())));
    assert!(facts.contains(&("hostname".into(), "machine-1".into())));
    assert!(facts.contains(&("warning".into(), "clock skew".into())));
    assert!(facts.contains(&("source".into(), "worker0.xplane.pb".into())));
}

#[test]
fn event_stats_win_over_metadata_stats() {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/host:CPU");
    let id = b.event_metadata_id("op");
    b.event_metadata(id)
        .unwrap()
        .add_stat("tf_op", "from/metadata")
        .add_stat("step_id", 1_i64);
    let mut line = b.line(1);
    line.add_event("op")
        .set_offset_ps(0)
        .set_duration_ps(1)
        .add_stat("step_num", 2_i64);
    line.add_event("op")
        .set_offset_ps(5)
        .set_duration_ps(1)
        .add_stat("tf_op", "from/event");
    let space = XSpace {
        planes: vec![plane],
        ..XSpace::default()
    };
    let batch = collect(&mut sources::space(space, info(), Options::default())).remove(0);
    assert_eq!(
        dict_values(&batch, "tf_op"),
        [Some("from/metadata".into()), Some("from/event".into())]
    );
    // step_num comes before step_id in the column's names, and the event's stat wins anyway.
    assert_eq!(ints(&batch, "step_num"), [Some(2), Some(1)]);
}

#[test]
fn batches_span_planes_and_hold_at_most_batch_rows() {
    let bytes = encode(&space());
    let mut batches = sources::xspace(
        &bytes[..],
        info(),
        Options::with_batch_rows(2),
        ReadOptions::default(),
    );
    let sizes: Vec<usize> = collect(&mut batches)
        .iter()
        .map(RecordBatch::num_rows)
        .collect();
    assert_eq!(sizes, [2, 1]);
    assert_eq!(batches.side_tables().unwrap().planes.num_rows(), 2);
    // As an Arrow RecordBatchReader.
    let reader = sources::xspace(
        &bytes[..],
        info(),
        Options::with_batch_rows(1),
        ReadOptions::default(),
    );
    let schema = reader.schema();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 3);
    assert_eq!(schema.metadata()[profkit_arrow::schema::VERSION_KEY], "2");
}

#[test]
fn side_tables_wait_for_the_last_batch() {
    let bytes = encode(&space());
    let mut batches = sources::xspace(
        &bytes[..],
        info(),
        Options::with_batch_rows(1),
        ReadOptions::default(),
    );
    batches.next_batch().unwrap();
    assert!(matches!(batches.side_tables(), Err(Error::Unfinished)));
}

#[test]
fn truncated_and_hostile_xspaces_give_located_errors() {
    let bytes = encode(&space());
    for cut in [1, bytes.len() / 2, bytes.len() - 1] {
        let mut batches = sources::xspace(
            &bytes[..cut],
            info(),
            Options::default(),
            ReadOptions::default(),
        );
        let err = loop {
            match batches.next_batch() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("a cut at {cut} read as complete"),
                Err(e) => break e,
            }
        };
        let message = err.to_string();
        assert!(matches!(err, Error::XSpace(_)), "{message}");
        assert!(message.contains("byte"), "cut at {cut}: {message}");
        // After an error the stream ends.
        assert!(batches.next_batch().unwrap().is_none());
    }
    // A length far past the end: refused before anything is allocated for it.
    let hostile = [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00];
    let mut batches = sources::xspace(
        &hostile[..],
        info(),
        Options::default(),
        ReadOptions::default(),
    );
    let err = batches.next_batch().unwrap_err().to_string();
    assert!(err.contains("byte"), "{err}");
    // Through the RecordBatchReader the error is still ours, inside Arrow's.
    let mut reader = sources::xspace(
        &bytes[..10],
        info(),
        Options::default(),
        ReadOptions::default(),
    );
    let err = reader.next().unwrap().unwrap_err();
    assert!(err.to_string().contains("byte"), "{err}");
}

#[test]
fn bad_chrome_json_is_located() {
    let err = sources::chrome(
        br#"{"traceEvents": [{"ph": "X", "ts": "x"}]}"#,
        info(),
        Options::default(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("traceEvents[0]"), "{err}");
    let err = sources::chrome(
        br#"{"traceEvents": [{"ph": "X""#,
        info(),
        Options::default(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("byte") || err.contains("line"), "{err}");
}

#[test]
fn truncated_paddle_protobufs_are_located() {
    let bytes =
        std::fs::read(repo().join("conformance/paddle/nodetree-sample/input.paddle_trace.pb"))
            .unwrap();
    let err = sources::paddle_node_trees(&bytes[..bytes.len() / 2], info(), Options::default())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("byte"), "{err}");
    let ok = sources::paddle_node_trees(&bytes[..], info(), Options::default()).unwrap();
    let rows: usize = ok.batches.map(|b| b.unwrap().num_rows()).sum();
    assert!(rows > 0);
}

fn read_parquet(path: &Path) -> (Vec<RecordBatch>, Vec<(String, String)>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let kv = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|kv| (kv.key, kv.value.unwrap_or_default()))
        .collect();
    let batches = builder.build().unwrap().map(|b| b.unwrap()).collect();
    (batches, kv)
}

#[test]
fn a_host_is_written_whole_and_read_back() {
    let root = temp("dataset");
    let mut batches = sources::space(space(), info(), Options::with_batch_rows(2));
    let (rows, dir) =
        profkit_arrow::write_host(&root, &mut batches, WriteOptions::default()).unwrap();
    assert_eq!(rows, 3);
    assert_eq!(dir, root.join("host=worker0"));
    let (events, kv) = read_parquet(&dir.join("table=events/part-0.parquet"));
    assert!(kv.contains(&("profkit.schema_version".into(), "2".into())));
    assert!(kv.contains(&("profkit.table".into(), "events".into())));
    let total: usize = events.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(total, 3);
    // The host is in the directory name, not in the file.
    assert!(events[0].column_by_name("host").is_none());
    // The reader's batches are its own (1,024 rows by default): one here.
    assert_eq!(events.len(), 1);
    let back = &events[0];
    assert_eq!(dict_values(back, "name")[1].as_deref(), Some("op"));
    assert_eq!(
        times(back, "start_ps")[2],
        Some(1_700_000_000_000_000_000_000 + 5)
    );
    for table in ["planes", "lines", "metadata"] {
        let (batches, _) = read_parquet(&dir.join(format!("table={table}/part-0.parquet")));
        assert!(
            batches.iter().map(RecordBatch::num_rows).sum::<usize>() > 0,
            "{table}"
        );
    }
    // No temporary directory is left.
    let names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["host=worker0"]);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn hosts_append_refuse_and_overwrite() {
    let root = temp("append");
    for host in ["a", "b"] {
        let mut batches = sources::space(
            space(),
            HostInfo::new(host, "xspace", [host]),
            Options::default(),
        );
        profkit_arrow::write_host(&root, &mut batches, WriteOptions::default()).unwrap();
    }
    let before = std::fs::metadata(root.join("host=a/table=events/part-0.parquet"))
        .unwrap()
        .modified()
        .unwrap();
    let err = HostWriter::create(&root, "a", WriteOptions::default())
        .err()
        .unwrap();
    assert!(matches!(err, Error::Dataset { .. }), "{err}");
    assert!(err.to_string().contains("already in the dataset"), "{err}");
    // Appending c leaves a and b alone.
    let mut batches = sources::space(
        space(),
        HostInfo::new("c", "xspace", ["c"]),
        Options::default(),
    );
    profkit_arrow::write_host(&root, &mut batches, WriteOptions::default()).unwrap();
    assert_eq!(
        profkit_arrow::dataset::hosts(&root).unwrap(),
        ["a", "b", "c"]
    );
    let after = std::fs::metadata(root.join("host=a/table=events/part-0.parquet"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
    // Overwrite replaces a, with an empty space this time.
    let mut batches = sources::space(
        XSpace::default(),
        HostInfo::new("a", "xspace", ["a"]),
        Options::default(),
    );
    let (rows, _) =
        profkit_arrow::write_host(&root, &mut batches, WriteOptions::with_overwrite(true)).unwrap();
    assert_eq!(rows, 0);
    let (events, _) = read_parquet(&root.join("host=a/table=events/part-0.parquet"));
    assert_eq!(events.iter().map(RecordBatch::num_rows).sum::<usize>(), 0);
    // A writer dropped without commit leaves nothing.
    drop(HostWriter::create(&root, "d", WriteOptions::default()).unwrap());
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 3);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn host_names_are_safe_directory_names() {
    use profkit_arrow::host_name;
    assert_eq!(host_name("worker-0.example"), "worker-0.example");
    assert_eq!(host_name("a/b c:1"), "a_b_c_1");
    assert_eq!(host_name(".hidden"), "h.hidden");
    assert_eq!(host_name(""), "unknown");
}

#[test]
fn xdl_records_have_a_column_per_scalar_key() {
    let datasets = profkit_xdl::discover(repo().join("conformance/xdl/scalars/input")).unwrap();
    let mut total = 0;
    for dataset in &datasets {
        let mut records = profkit_arrow::xdl::records(dataset, "h", &Options::default()).unwrap();
        let schema = records.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(
            &names[..6],
            ["host", "dataset", "rank", "gstep", "lstep", "timestamp"]
        );
        assert!(names.len() > 6, "{names:?}");
        while let Some(batch) = records.next_batch().unwrap() {
            total += batch.num_rows();
        }
    }
    assert!(total > 0);
    // A truncated dataset: the error names the file.
    let datasets = profkit_xdl::discover(repo().join("conformance/xdl/truncated/input")).unwrap();
    let mut errors = Vec::new();
    for dataset in &datasets {
        match profkit_arrow::xdl::records(dataset, "h", &Options::default()) {
            Err(e) => errors.push(e.to_string()),
            Ok(mut records) => loop {
                match records.next_batch() {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e) => {
                        errors.push(e.to_string());
                        break;
                    }
                }
            },
        }
    }
    assert!(
        errors.iter().any(|e| e.contains("train.trace.")),
        "{errors:?}"
    );
}

/// Metadata ids that share a slot of the batch builder's lookup caches (equal modulo 1,024,
/// negative ones too) keep their own names and stats, in any order.
#[test]
fn colliding_metadata_ids_keep_their_own_names_and_stats() {
    use profkit_xplane::proto::{
        XEvent, XEventMetadata, XLine, XStat, XStatMetadata, x_event, x_stat,
    };
    let mut plane = XPlane {
        name: "/device:GPU:0".into(),
        ..XPlane::default()
    };
    let event_ids = [2_i64, 1026, -1022];
    for (i, id) in event_ids.iter().enumerate() {
        plane.event_metadata.insert(
            *id,
            XEventMetadata {
                id: *id,
                name: format!("op{i}"),
                ..XEventMetadata::default()
            },
        );
    }
    for (id, name) in [(1_i64, "step_num"), (1025, "group_id"), (-1023, "flops")] {
        plane.stat_metadata.insert(
            id,
            XStatMetadata {
                id,
                name: name.into(),
                ..XStatMetadata::default()
            },
        );
    }
    let stat_ids = [1_i64, 1025, -1023];
    let events = (0..12_i64)
        .map(|k| {
            let n = usize::try_from(k).unwrap();
            XEvent {
                metadata_id: event_ids[n % 3],
                data: Some(x_event::Data::OffsetPs(k)),
                duration_ps: 1,
                stats: vec![XStat {
                    metadata_id: stat_ids[(n / 3) % 3],
                    value: Some(x_stat::Value::Int64Value(k)),
                }],
            }
        })
        .collect();
    plane.lines.push(XLine {
        id: 1,
        name: "Stream #1".into(),
        events,
        ..XLine::default()
    });
    let space = XSpace {
        planes: vec![plane],
        ..XSpace::default()
    };
    // Batches of 5 rows: the caches are emptied between batches too.
    let mut batches = sources::space(space, info(), Options::with_batch_rows(5));
    let (mut names, mut steps, mut groups, mut flops) = (vec![], vec![], vec![], vec![]);
    for batch in collect(&mut batches) {
        names.extend(dict_values(&batch, "name"));
        steps.extend(ints(&batch, "step_num"));
        groups.extend(ints(&batch, "group_id"));
        flops.extend(ints(&batch, "flops"));
    }
    let expected_names: Vec<Option<String>> =
        (0..12).map(|k| Some(format!("op{}", k % 3))).collect();
    assert_eq!(names, expected_names);
    let column = |which: i64| -> Vec<Option<i64>> {
        (0..12)
            .map(|k| ((k / 3) % 3 == which).then_some(k))
            .collect()
    };
    assert_eq!(steps, column(0));
    assert_eq!(groups, column(1));
    assert_eq!(flops, column(2));
}

/// The frame layout holds the dataset's values exactly: `start_ps` is `timestamp_ns * 1000 +
/// offset_ps` (none for an aggregated event, whose offset is 0), and the JSON text's pairs are
/// the map's, in order, names and values escaped as JSON wants (a name met twice is written
/// twice).
#[test]
fn the_frame_layout_holds_the_same_values() {
    use profkit_arrow::Layout;
    use profkit_xplane::proto::{XEvent, XLine, XStat, XStatMetadata, x_event, x_stat};
    let mut s = space();
    // An aggregated event, and stats whose texts need escaping, one name twice.
    let device = &mut s.planes[1];
    device.stat_metadata.insert(
        90,
        XStatMetadata {
            id: 90,
            name: "q\"uote\\d\n".into(),
            ..XStatMetadata::default()
        },
    );
    let kernel = device.lines[0].events[0].metadata_id;
    device.lines.push(XLine {
        id: 2,
        name: "Stream #2".into(),
        timestamp_ns: 9,
        events: vec![XEvent {
            metadata_id: kernel,
            data: Some(x_event::Data::NumOccurrences(4)),
            duration_ps: 3,
            stats: vec![
                XStat {
                    metadata_id: 90,
                    value: Some(x_stat::Value::StrValue("tab\there \u{1} é \"x\"".into())),
                },
                XStat {
                    metadata_id: 90,
                    value: Some(x_stat::Value::DoubleValue(0.25)),
                },
                XStat {
                    metadata_id: 90,
                    value: Some(x_stat::Value::BytesValue(vec![0, 1, 2].into())),
                },
            ],
        }],
        ..XLine::default()
    });
    let dataset = collect(&mut sources::space(s.clone(), info(), Options::default()));
    let mut frame_batches = sources::space(s, info(), Options::default().layout(Layout::Frame));
    assert_eq!(
        frame_batches.schema(),
        profkit_arrow::schema::events_for(Layout::Frame)
    );
    let frame = collect(&mut frame_batches);
    let (d, f) = (&dataset[0], &frame[0]);
    assert_eq!(d.num_rows(), 4);
    assert_eq!(f.num_rows(), 4);
    assert_eq!(
        f.schema()
            .metadata()
            .get("profkit.layout")
            .map(String::as_str),
        Some("frame")
    );
    // Every other column is the same.
    for field in d.schema().fields() {
        if let Some(column) = f.column_by_name(field.name())
            && field.name() != "stats"
        {
            assert_eq!(
                column,
                d.column_by_name(field.name()).unwrap(),
                "{}",
                field.name()
            );
        }
    }
    let starts: Vec<Option<i128>> = ints(f, "timestamp_ns")
        .into_iter()
        .zip(ints(f, "offset_ps"))
        .zip(ints(f, "num_occurrences"))
        .map(|((t, o), n)| {
            n.is_none()
                .then(|| i128::from(t.unwrap()) * 1000 + i128::from(o.unwrap()))
        })
        .collect();
    assert_eq!(starts, times(d, "start_ps"));
    assert_eq!(ints(f, "offset_ps")[3], Some(0));
    // The JSON text, against the map.
    let texts: Vec<&str> = f
        .column_by_name("stats")
        .unwrap()
        .as_string::<i32>()
        .iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(
        texts[0],
        r#"{"step_num":"3","group_id":"9","note":"hello"}"#
    );
    assert_eq!(
        texts[3],
        "{\"q\\\"uote\\\\d\\n\":\"tab\\there \\u0001 é \\\"x\\\"\",\"q\\\"uote\\\\d\\n\":\"0.25\",\"q\\\"uote\\\\d\\n\":\"AAEC\"}"
    );
    let map = d.column_by_name("stats").unwrap().as_map();
    for (row, text) in texts.iter().enumerate() {
        let entries = map.value(row);
        let keys = entries.column(0).as_string::<i32>();
        let values = entries.column(1).as_string::<i32>();
        let want: Vec<(String, String)> = keys
            .iter()
            .zip(values.iter())
            .map(|(k, v)| (k.unwrap().to_owned(), v.unwrap().to_owned()))
            .collect();
        // The pairs of the JSON object, every one, in order (serde_json's map would keep one
        // of a repeated name).
        let got: Vec<(String, String)> = json_pairs(text);
        assert_eq!(got, want, "row {row}");
    }
}

/// The (name, value) pairs of a flat JSON object of strings, in order, repeated names kept.
fn json_pairs(text: &str) -> Vec<(String, String)> {
    struct Pairs(Vec<(String, String)>);
    struct Visitor;
    impl<'de> serde::de::Visitor<'de> for Visitor {
        type Value = Pairs;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object of strings")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Pairs, A::Error> {
            let mut pairs = Vec::new();
            while let Some(pair) = map.next_entry::<String, String>()? {
                pairs.push(pair);
            }
            Ok(Pairs(pairs))
        }
    }
    impl<'de> serde::Deserialize<'de> for Pairs {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Pairs, D::Error> {
            d.deserialize_map(Visitor)
        }
    }
    serde_json::from_str::<Pairs>(text).unwrap().0
}

/// The real TPU and GPU profiles (gzipped, read by the XSpace reader as they are): the rows whose
/// `line_role` holds device ops are exactly those of the `XLA Ops` and stream lines, and every
/// self time lies between 0 and its duration.
#[test]
fn line_roles_and_self_times_of_the_real_device_profiles() {
    use std::collections::BTreeMap;
    for case in ["tpu", "gpu"] {
        let path = repo()
            .join("conformance/xplane-device")
            .join(case)
            .join("input.xplane.pb.gz");
        let info = HostInfo::new(case, "xspace", [case]);
        let mut batches = sources::xspace(
            File::open(&path).unwrap(),
            info,
            Options::default(),
            ReadOptions::default(),
        );
        let (mut by_role, mut by_name) = (BTreeMap::new(), BTreeMap::new());
        let mut rows = 0;
        for batch in collect(&mut batches) {
            let planes = dict_values(&batch, "plane");
            let lines = dict_values(&batch, "line");
            let roles = dict_values(&batch, "line_role");
            let names = dict_values(&batch, "display_name");
            let durations = ints(&batch, "duration_ps");
            let selfs = ints(&batch, "self_ps");
            for i in 0..batch.num_rows() {
                rows += 1;
                let (plane, line) = (planes[i].as_deref().unwrap(), lines[i].as_deref().unwrap());
                let (duration, self_ps) = (durations[i].unwrap(), selfs[i].unwrap());
                assert!(
                    (0..=duration).contains(&self_ps),
                    "{line}: {self_ps} of {duration}"
                );
                let name = names[i].clone().unwrap();
                if matches!(roles[i].as_deref(), Some("xla_ops" | "stream")) {
                    *by_role.entry(name.clone()).or_insert(0i64) += duration;
                }
                let op_line = (plane.starts_with("/device:TPU:") && line == "XLA Ops")
                    || (plane.starts_with("/device:GPU:") && line.starts_with("Stream #"));
                if op_line {
                    *by_name.entry(name).or_insert(0i64) += duration;
                }
            }
        }
        assert!(rows > 20_000, "{case}: {rows} rows");
        assert!(!by_role.is_empty());
        assert_eq!(by_role, by_name, "{case}");
        let side = batches.side_tables().unwrap();
        let roles = side
            .lines
            .column_by_name("line_role")
            .unwrap()
            .as_string::<i32>();
        assert!(roles.iter().all(|r| r.is_some_and(|r| !r.is_empty())));
    }
}

/// Each OpStats table built from the parts of OpStats it reads (`Parts::for_table`, as `--to
/// parquet` and Python build them) holds the rows of the whole OpStats, on every XSpace case of
/// `conformance/xplane` and the real GPU, ROCm and TPU profiles.
#[test]
fn op_stats_tables_of_their_parts_are_the_tables_of_the_whole() {
    use profkit_xprof::op_stats::{self, Parts};
    type Batch = fn(&str, &profkit_xprof::proto::OpStats) -> profkit_arrow::Result<RecordBatch>;
    let tables: [(&str, Batch); 4] = [
        ("op_metrics", profkit_arrow::op_metrics::batch),
        ("steps", profkit_arrow::steps::batch),
        ("kernels", profkit_arrow::kernels::batch),
        ("hlo_ops", profkit_arrow::hlo_ops::batch),
    ];
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(repo().join("conformance/xplane"))
        .unwrap()
        .map(|e| e.unwrap().path().join("input.xplane.pb"))
        .filter(|p| p.exists())
        .collect();
    inputs.sort();
    for device in ["gpu", "rocm1", "tpu"] {
        inputs.push(repo().join(format!(
            "conformance/xplane-device/{device}/input.xplane.pb.gz"
        )));
    }
    let mut checked = 0;
    for input in inputs {
        let read = |parts| {
            let file = File::open(&input).unwrap();
            op_stats::read_space_for(file, ReadOptions::default(), parts)
        };
        let Ok(whole) = read(Parts::ALL) else {
            continue;
        };
        let all = op_stats::build(vec![whole], &["h"]);
        for (table, batch) in tables {
            let parts = Parts::for_table(table);
            let built = op_stats::build_for(vec![read(parts).unwrap()], &["h"], parts);
            let (ours, whole) = (batch("h", &built.op_stats), batch("h", &all.op_stats));
            assert_eq!(
                ours.map_err(|e| e.to_string()),
                whole.map_err(|e| e.to_string()),
                "{}: {table}",
                input.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 150, "{checked}");
}

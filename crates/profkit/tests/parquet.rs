//! `profkit convert IN... OUT_DIR --to parquet`: hosts appended, refused, replaced; bad input.

mod common;

use std::path::{Path, PathBuf};

use common::{profkit, text};
use profkit_xplane::{PlaneBuilder, XPlane, XSpace, encode};

fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profkit-parquet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn space(events: usize) -> Vec<u8> {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/device:GPU:0");
    let mut line = b.line(1);
    line.set_name("Stream #1");
    for i in 0..events {
        line.add_event("kernel")
            .set_offset_ps(i as i64 * 10)
            .set_duration_ps(5)
            .add_stat("step_num", i as i64);
    }
    encode(&XSpace {
        planes: vec![plane],
        ..XSpace::default()
    })
}

fn names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = profkit(args, None);
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn hosts_are_appended_refused_and_replaced() {
    let work = dir("append");
    let a = work.join("worker-a.xplane.pb");
    let b = work.join("worker-b.xplane.pb");
    let c = work.join("worker-c.xplane.pb");
    std::fs::write(&a, space(3)).unwrap();
    std::fs::write(&b, space(4)).unwrap();
    std::fs::write(&c, space(5)).unwrap();
    let ds = work.join("dataset");
    let ds_s = ds.to_str().unwrap();
    let (code, stdout, stderr) = run(&[
        "convert",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        ds_s,
        "--to",
        "parquet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("3 events on 1 planes"), "{stdout}");
    assert_eq!(names(&ds), ["host=worker-a", "host=worker-b"]);
    assert_eq!(
        names(&ds.join("host=worker-a")),
        [
            "table=events",
            // xprof's HLO op stats of the XSpace's devices (see docs/scale.md).
            "table=hlo_ops",
            // xprof's kernel stats of its GPUs.
            "table=kernels",
            "table=lines",
            "table=metadata",
            // xprof's op metrics of the XSpace (see docs/scale.md).
            "table=op_metrics",
            "table=planes",
            // xprof's steps database of the XSpace.
            "table=steps"
        ]
    );
    let events_a = ds.join("host=worker-a/table=events/part-0.parquet");
    let before = std::fs::read(&events_a).unwrap();

    // Appending c rewrites nothing.
    let (code, _, stderr) = run(&["convert", c.to_str().unwrap(), ds_s, "--to", "parquet"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(names(&ds).len(), 3);
    assert_eq!(std::fs::read(&events_a).unwrap(), before);

    // A host already present is refused, and nothing of the command is written.
    std::fs::write(work.join("worker-d.xplane.pb"), space(1)).unwrap();
    let (code, _, stderr) = run(&[
        "convert",
        work.join("worker-d.xplane.pb").to_str().unwrap(),
        a.to_str().unwrap(),
        ds_s,
        "--to",
        "parquet",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("host worker-a is already in the dataset"),
        "{stderr}"
    );
    assert_eq!(names(&ds).len(), 3);

    // --overwrite replaces it.
    std::fs::write(&a, space(7)).unwrap();
    let (code, stdout, stderr) = run(&[
        "convert",
        a.to_str().unwrap(),
        ds_s,
        "--to",
        "parquet",
        "--overwrite",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("7 events"), "{stdout}");
    assert_ne!(std::fs::read(&events_a).unwrap(), before);
    assert_eq!(names(&ds).len(), 3);

    // Two inputs of one command making one host.
    let other = work.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("worker-b.xplane.pb"), space(1)).unwrap();
    let (code, _, stderr) = run(&[
        "convert",
        b.to_str().unwrap(),
        other.join("worker-b.xplane.pb").to_str().unwrap(),
        work.join("fresh").to_str().unwrap(),
        "--to",
        "parquet",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("two inputs make host worker-b"), "{stderr}");
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn every_input_format_converts() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let work = dir("formats");
    let ds = work.join("dataset");
    let inputs = [
        ("conformance/chrome/phases/input.json", "input"),
        ("conformance/paddle/dygraph-all-default/input.pb", "input"),
        (
            "conformance/paddle/nodetree-sample/input.paddle_trace.pb",
            "input",
        ),
        ("conformance/xdl/scalars/input", "input"),
        ("conformance/poplar/combined/input.json", "combined"),
    ];
    for (i, (input, host)) in inputs.iter().enumerate() {
        // Each into a dataset of its own: the inputs share a name.
        let out = ds.join(i.to_string());
        let (code, stdout, stderr) = run(&[
            "convert",
            repo.join(input).to_str().unwrap(),
            out.to_str().unwrap(),
            "--to",
            "parquet",
        ]);
        assert_eq!(code, 0, "{input}: {stderr}");
        assert!(stdout.contains("events on"), "{input}: {stdout}");
        assert_eq!(names(&out), [format!("host={host}")], "{input}");
        let tables = names(&out.join(format!("host={host}")));
        assert!(
            tables.contains(&"table=events".to_owned()),
            "{input}: {tables:?}"
        );
        if input.contains("xdl") {
            assert!(
                tables.contains(&"table=xdl_records".to_owned()),
                "{tables:?}"
            );
            assert!(stdout.contains("XDL records"), "{stdout}");
        }
    }
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn truncated_input_is_located_and_leaves_nothing() {
    let work = dir("truncated");
    let bytes = space(50);
    let input = work.join("cut.xplane.pb");
    std::fs::write(&input, &bytes[..bytes.len() - 7]).unwrap();
    let ds = work.join("dataset");
    let convert = || {
        run(&[
            "convert",
            input.to_str().unwrap(),
            ds.to_str().unwrap(),
            "--to",
            "parquet",
            "--from",
            "xspace",
        ])
    };
    let (code, _, stderr) = convert();
    assert_eq!(code, 1);
    assert!(stderr.contains("cut.xplane.pb"), "{stderr}");
    assert!(stderr.contains("byte"), "{stderr}");
    // No host, not even a hidden one, and not the dataset directory the command made.
    assert!(!ds.exists(), "{ds:?} left behind");
    // A dataset that was there before stays, as it was.
    std::fs::create_dir(&ds).unwrap();
    assert_eq!(convert().0, 1);
    assert!(names(&ds).is_empty(), "{:?}", names(&ds));

    let chrome = work.join("bad.json");
    std::fs::write(&chrome, br#"{"traceEvents": [{"ph": "X", "ts": 1, "dur": "#).unwrap();
    let (code, _, stderr) = run(&[
        "convert",
        chrome.to_str().unwrap(),
        ds.to_str().unwrap(),
        "--to",
        "parquet",
    ]);
    assert_eq!(code, 1);
    assert!(stderr.contains("bad.json"), "{stderr}");
    assert!(names(&ds).is_empty());
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn parquet_is_an_output_only() {
    let work = dir("usage");
    let input = work.join("h.xplane.pb");
    std::fs::write(&input, space(1)).unwrap();
    let (code, _, stderr) = run(&["inspect", input.to_str().unwrap(), "--from", "parquet"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("output format only"), "{stderr}");
    let (code, _, stderr) = run(&["convert", input.to_str().unwrap(), "-", "--to", "parquet"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("dataset directory"), "{stderr}");
    let (code, stdout, _) = run(&["formats"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("parquet"), "{stdout}");
    std::fs::remove_dir_all(&work).unwrap();
}

/// `inspect --json` of an XSpace with epoch timestamps (picoseconds past `u64`), which the
/// conformance check of the Parquet datasets compares against.
#[test]
fn inspect_json_prints_epoch_picoseconds() {
    let work = dir("epoch");
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name("/host:CPU");
    let mut line = b.line(1);
    line.set_timestamp_ns(1_700_000_000_000_000_000);
    line.add_event("step").set_offset_ps(5).set_duration_ps(10);
    let input = work.join("epoch.xplane.pb");
    std::fs::write(
        &input,
        encode(&XSpace {
            planes: vec![plane],
            ..XSpace::default()
        }),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["inspect", "--json", input.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("\"start_ps\": 1700000000000000000005"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\"end_ps\": 1700000000000000000015"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&work).unwrap();
}

/// The batches of a Parquet file of a dataset.
fn read_table(path: &Path) -> Vec<arrow_array::RecordBatch> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// A table's rows as JSON values by column name (compared with [`same`]).
fn rows_of(
    batches: &[arrow_array::RecordBatch],
) -> Vec<serde_json::Map<String, serde_json::Value>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Float64Type, Int32Type, UInt32Type, UInt64Type};
    use arrow_schema::DataType;
    use serde_json::Value;
    let mut out = Vec::new();
    for batch in batches {
        for row in 0..batch.num_rows() {
            let mut map = serde_json::Map::new();
            for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
                let value = match field.data_type() {
                    DataType::UInt64 => Value::from(column.as_primitive::<UInt64Type>().value(row)),
                    DataType::UInt32 => {
                        Value::from(f64::from(column.as_primitive::<UInt32Type>().value(row)))
                    }
                    DataType::Int32 => {
                        Value::from(f64::from(column.as_primitive::<Int32Type>().value(row)))
                    }
                    DataType::Float64 => {
                        Value::from(column.as_primitive::<Float64Type>().value(row))
                    }
                    DataType::Float32 => {
                        Value::from(f64::from(column.as_primitive::<Float32Type>().value(row)))
                    }
                    DataType::Boolean => Value::from(column.as_boolean().value(row)),
                    DataType::Utf8 => Value::from(column.as_string::<i32>().value(row)),
                    other => panic!("{}: no comparison for {other}", field.name()),
                };
                map.insert(field.name().clone(), value);
            }
            out.push(map);
        }
    }
    out
}

/// The rows of the tool's DataTable (`profkit xprof TOOL IN`), each a map of column id to value.
fn tool_rows(tool: &str, input: &Path) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let out = profkit(&["xprof", tool, input.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{tool}: {}", text(&out.stderr));
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<String> = table["cols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            ids.iter()
                .cloned()
                .zip(r["c"].as_array().unwrap().iter().map(|c| c["v"].clone()))
                .collect()
        })
        .collect()
}

/// Asserts each `(column, id)` pair: the table's `column` equals the tool row's `id`.
fn same_columns<G, W>(at: &str, got: &G, want: &W, pairs: &[(&str, &str)])
where
    G: for<'k> std::ops::Index<&'k str, Output = serde_json::Value> + ?Sized,
    W: for<'k> std::ops::Index<&'k str, Output = serde_json::Value> + ?Sized,
{
    for (column, id) in pairs {
        assert!(
            same(&got[*column], &want[*id]),
            "{at}: {column}: {} against {}",
            got[*column],
            want[*id]
        );
    }
}

/// Equal values, numbers by their f64 value (as the tools' JSON holds them).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn number(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The page's source cell of a file and line (`hlo_stats::source_info_text`), for the names
/// these profiles have (no character HTML escapes).
fn source_cell(file: &str, line: f64) -> Option<String> {
    (!file.is_empty() && line != -1.0).then(|| format!(">{file}:{line}</div>"))
}

#[test]
fn device_tables_are_the_tools_rows() {
    // The real GPU (TensorFlow), ROCm (JAX) and TPU profiles: every row of the `kernels` and
    // `hlo_ops` tables, read back from the Parquet files, is the row `profkit xprof
    // kernel_stats` / `hlo_stats` prints, every column compared (the tables keep picoseconds and
    // nanoseconds where the pages show microseconds, and the parts of the shared memory and the
    // source location the pages join).
    let work = dir("device-tables");
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/xplane-device");
    let mut seen = (0, 0);
    for name in ["gpu", "rocm1", "tpu"] {
        let input = cases.join(name).join("input.xplane.pb.gz");
        let ds = work.join(name);
        let (code, stdout, stderr) = run(&[
            "convert",
            input.to_str().unwrap(),
            ds.to_str().unwrap(),
            "--to",
            "parquet",
            "--host",
            name,
        ]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let host = ds.join(format!("host={name}"));

        let kernels = rows_of(&read_table(&host.join("table=kernels/part-0.parquet")));
        let want = tool_rows("kernel_stats", &input);
        assert_eq!(kernels.len(), want.len(), "{name}: kernels");
        if !want.is_empty() {
            assert!(
                stdout.contains(&format!(", {} kernels", want.len())),
                "{stdout}"
            );
        }
        for (i, (got, want)) in kernels.iter().zip(&want).enumerate() {
            let at = format!("{name} kernel {i}");
            same_columns(
                &at,
                got,
                want,
                &[
                    ("rank", "rank"),
                    ("kernel_name", "kernel_name"),
                    ("registers_per_thread", "registers_per_thread"),
                    ("block_dim", "block_dim"),
                    ("grid_dim", "grid_dim"),
                    ("occupancy_pct", "occupancy_pct"),
                    ("is_op_tensor_core_eligible", "is_op_tensor_core_eligible"),
                    ("is_kernel_using_tensor_core", "is_kernel_using_tensor_core"),
                    ("op_name", "op_name"),
                    ("occurrences", "occurrences"),
                ],
            );
            assert_eq!(
                number(&got["static_shmem_bytes"]) + number(&got["dynamic_shmem_bytes"]),
                number(&want["shmem_bytes"]),
                "{at}: shared memory"
            );
            for (column, id) in [
                ("total_duration_ns", "total_duration_us"),
                ("avg_duration_ns", "avg_duration_us"),
                ("min_duration_ns", "min_duration_us"),
                ("max_duration_ns", "max_duration_us"),
            ] {
                assert_eq!(
                    number(&got[column]) / 1e3,
                    number(&want[id]),
                    "{at}: {column}"
                );
            }
        }
        seen.0 += kernels.len();

        let ops = rows_of(&read_table(&host.join("table=hlo_ops/part-0.parquet")));
        let want = tool_rows("hlo_stats", &input);
        assert_eq!(ops.len(), want.len(), "{name}: hlo_ops");
        for (i, (got, want)) in ops.iter().zip(&want).enumerate() {
            let at = format!("{name} HLO op {i}");
            same_columns(
                &at,
                got,
                want,
                &[
                    ("rank", "rank"),
                    ("category", "category"),
                    ("hlo_op_name", "hlo_op_name"),
                    ("expression", "hlo_op_expression"),
                    ("framework_op", "tf_op_name"),
                    ("occurrences", "occurrences"),
                    ("self_time_percent", "total_self_time_percent"),
                    (
                        "cumulative_self_time_percent",
                        "cumulative_total_self_time_percent",
                    ),
                    ("dma_stall_fraction", "dma_stall_percent"),
                    ("model_flop_rate", "model_flop_rate"),
                    ("normalized_flop_rate", "normalized_flop_rate"),
                    ("memory_bw", "measured_memory_bw"),
                    ("hbm_bw", "hbm_bw"),
                    ("cmem_read_bw", "cmem_read_bw"),
                    ("cmem_write_bw", "cmem_write_bw"),
                    ("operational_intensity", "operational_intensity"),
                    ("bound_by", "bound_by"),
                    ("core_type", "core_type"),
                    ("parent_op_name", "parent_op_name"),
                    ("vdd_energy_j", "vdd_energy"),
                ],
            );
            assert_eq!(
                got["program_id"].as_u64().unwrap().to_string(),
                want["program_id"].as_str().unwrap(),
                "{at}: program_id"
            );
            let occurrences = number(&got["occurrences"]);
            for (column, total, avg) in [
                ("total_time_ps", "total_time", "avg_time"),
                ("self_time_ps", "total_self_time", "avg_self_time"),
            ] {
                let us = number(&got[column]) / 1e6;
                assert_eq!(us, number(&want[total]), "{at}: {column}");
                let avg_us = if occurrences == 0.0 {
                    0.0
                } else {
                    us / occurrences
                };
                assert_eq!(avg_us, number(&want[avg]), "{at}: {column} per occurrence");
            }
            let yes_no = |b: &serde_json::Value| if b.as_bool().unwrap() { "Yes" } else { "No" };
            for (column, id) in [
                ("rematerialization", "hlo_rematerialization"),
                ("outside_compilation", "outside_compilation"),
                ("autotuned", "autotuned"),
            ] {
                assert_eq!(
                    yes_no(&got[column]),
                    want[id].as_str().unwrap(),
                    "{at}: {column}"
                );
            }
            let cell = want["source_info"].as_str().unwrap();
            match source_cell(
                got["source_file"].as_str().unwrap(),
                number(&got["source_line"]),
            ) {
                Some(end) => assert!(cell.ends_with(&end), "{at}: {cell} against {end}"),
                None => assert_eq!(cell, "", "{at}: source"),
            }
            // The module is the program's name: the op profile's program nodes say the same.
            if got["program_id"] != 0 && name == "tpu" {
                assert!(!got["module"].as_str().unwrap().is_empty(), "{at}: module");
            }
        }
        seen.1 += ops.len();
    }
    // The kernels of the GPU (15) and ROCm profiles, the HLO ops of the three.
    assert_eq!(seen, (23, 21));
    let _ = std::fs::remove_dir_all(&work);
}

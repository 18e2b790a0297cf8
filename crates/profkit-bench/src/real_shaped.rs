//! A real-shaped TensorFlow host profile of any size, for the benchmarks that ask how profkit
//! does on the layout real profiles have: most events on one `/host:CPU` plane.
//!
//! It is modelled on a real Keras `model.fit` profile (TensorFlow 2.21 on CPU, 1,000 steps,
//! 553,060 events in 14.3 MB: `conformance/xprof/real/gen_tf.py`'s `fit` case run for 1,000
//! steps): per step 534 events (the real one has 553) on five lines of one host plane, with
//! TensorFlow's mix of stats and nesting (about 27 bytes an event, as there):
//! - `python`: eager op chains seven deep (`TFE_Py_FastPathExecute_C` down to the op, `eager_op`
//!   and `is_func` on `EagerLocalExecute`), then the step's function call, whose `FunctionRun`
//!   carries `_r` (a step root), its `id` and the producer `_pt`/`_p` the executors consume;
//! - two `tf_Compute/<tid>` lines (the inter-op threads, 86% of the events): threadpool regions
//!   (`ThreadpoolListener::StartRegion` with `_ct`/`_c`, `ExecutorState::Process` with `id`,
//!   `iter_num`, `_ct`/`_c`, the ops under it without stats, `ThreadpoolListener::Record` with
//!   `_pt`/`_p`, `StopRegion`), depth 2 as in the real file;
//! - `tf_data_iterator_get_next/<tid>`: `IteratorGetNextOp::DoCompute` over the iterator's
//!   `Iterator::Root`, `Prefetch` and `PrefetchConsume`, then `ExecutorState::ProcessAsync::Done`;
//! - `tf_data_iterator_resource/<tid>`: `PrefetchProduce` over the dataset's iterators five deep
//!   (`FiniteTake`, `ForeverRepeat`, `BatchV2`, 32 `TensorSlice` reads), each with `name`,
//!   `shapes` and `types` as `ref_value`s and `id`/`parent_id`;
//! - a `Task Environment` plane with the session's start and stop.
//!
//! The plane is written straight to the output in two passes over the same deterministic events
//! (the first counts the bytes of each line, which protobuf writes before the line), so a file of
//! gigabytes takes a few kilobytes of memory to make. The encoding is canonical (fields in
//! number order, no defaults), as profkit and TensorFlow write lines.

use std::io::{self, Write};

/// Session start, ns since the epoch (the `Task Environment` plane's `profile_start_time`).
const SESSION_START_NS: u64 = 1_795_898_230_000_000_000;
/// The lines' `timestamp_ns`: session-relative, as TensorFlow writes them (the real file's).
const LINE_START_NS: i64 = 6_329;
/// One training step, ps.
const STEP_PS: i64 = 600_000_000;
/// Picoseconds a microsecond.
const US: i64 = 1_000_000;

/// A stat's value.
#[derive(Clone, Copy)]
enum Val {
    Int(i64),
    Uint(u64),
    /// A `ref_value`: the id of a stat metadata whose name is the string.
    Ref(u64),
}

/// An event of a step, before encoding: metadata id, offset and duration in ps, stats.
struct Ev {
    metadata: i64,
    offset: i64,
    duration: i64,
    stats: Vec<(i64, Val)>,
}

/// The stat metadata: first the stats' names, then the strings `ref_value`s name.
const STAT_NAMES: &[&str] = &[
    "_r",
    "_p",
    "_pt",
    "_c",
    "_ct",
    "id",
    "iter_num",
    "eager_op",
    "is_func",
    "tf_function_call",
    "tracing_count",
    "name",
    "shapes",
    "types",
    "parent_id",
    "element_id",
    "element_size",
    "algorithm",
    "cpu_budget",
    "ram_budget_megabytes",
    "intra_op_parallelism",
    "buffer_limit",
    "autotune",
    "batch_size",
    "drop_remainder",
    "parallel_copy",
    "kernel_type",
    "step_id",
    // Strings.
    "PrefetchDataset:9",
    "[?,32] [?]",
    "float int64",
    "TakeDataset:8",
    "RepeatDataset:7",
    "BatchDatasetV2:6",
    "TensorSliceDataset:5",
    "[32] []",
    "DEFAULT",
    "false",
    "true",
    "IteratorGetNext",
    "AssignVariableOp",
    "ReadVariableOp",
    "__inference_multi_step_on_iterator_1236",
    "notTraced-nonXla",
];

/// The id of stat metadata `name` (ids start at 1, in [`STAT_NAMES`] order).
fn stat(name: &str) -> i64 {
    STAT_NAMES
        .iter()
        .position(|n| *n == name)
        .map_or(0, |i| i as i64 + 1)
}

fn sref(name: &str) -> Val {
    Val::Ref(stat(name) as u64)
}

/// The fixed event names (ids from 1, in this order); the ops' names follow them.
const EVENT_NAMES: &[&str] = &[
    "TFE_Py_FastPathExecute_C",
    "EagerExecute",
    "EagerLocalExecute: AssignVariableOp",
    "EagerKernelExecute",
    "KernelAndDeviceFunc::Run",
    "AssignVariableOp",
    "ValidateInputTypeAndPlacement",
    "TFE_DeleteTensorHandle",
    "TFE_Py_ExecuteCancelable",
    "EagerLocalExecute: __inference_multi_step_on_iterator_1236",
    "multi_step_on_iterator",
    "FunctionRun",
    "ThreadpoolListener::Record",
    "ThreadpoolListener::StartRegion",
    "ExecutorState::Process",
    "ThreadpoolListener::StopRegion",
    "IteratorGetNextOp::DoCompute",
    "Iterator::Root",
    "Iterator::Root::Prefetch",
    "PrefetchConsume",
    "ExecutorState::ProcessAsync::Done",
    "PrefetchProduce",
    "Iterator::Root::Prefetch::FiniteTake",
    "Iterator::Root::Prefetch::FiniteTake::ForeverRepeat",
    "Iterator::Root::Prefetch::FiniteTake::ForeverRepeat[62]::BatchV2",
    "Iterator::Root::Prefetch::FiniteTake::ForeverRepeat[62]::BatchV2::TensorSlice",
];

fn event(name: &str) -> i64 {
    EVENT_NAMES
        .iter()
        .position(|n| *n == name)
        .map_or(0, |i| i as i64 + 1)
}

/// The graph's op names, as TensorFlow names an executor's ops (`scope/op:Type`).
fn op_names() -> Vec<String> {
    let scopes = [
        "sequential_1/dense_1",
        "sequential_1/dense_1_2",
        "sequential_1/dense_2_1",
        "compile_loss/sparse_categorical_crossentropy",
        "gradient_tape/sequential_1/dense_2_1/MatMul",
        "gradient_tape/compile_loss/sparse_categorical_crossentropy",
        "adam",
    ];
    let ops = [
        ("ReadVariableOp", "ReadVariableOp"),
        ("MatMul", "_MklMatMul"),
        ("BiasAdd", "_MklNativeFusedMatMul"),
        ("Relu", "_MklNativeFusedMatMul"),
        ("Sub", "Sub"),
        ("Mul", "Mul"),
        ("Sqrt", "Sqrt"),
        ("Square", "Square"),
        ("AddV2", "AddV2"),
        ("truediv", "RealDiv"),
        ("Cast", "Cast"),
        ("AssignAddVariableOp", "AssignAddVariableOp"),
        ("AssignSubVariableOp", "AssignSubVariableOp"),
        ("BiasAddGrad", "BiasAddGrad"),
        ("div_no_nan", "DivNoNan"),
    ];
    let mut names = Vec::new();
    for scope in scopes {
        for (op, ty) in ops {
            for k in 0..4 {
                names.push(format!("StatefulPartitionedCall/{scope}/{op}_{k}:{ty}"));
            }
        }
    }
    names
}

/// The lines of the host plane: id, name.
fn lines() -> [(i64, String); 5] {
    let tids: [i64; 5] = [
        1_641_658_596_577_852_086,
        6_164_926_710_472_111_034,
        6_632_806_283_523_743_981,
        -1_272_641_390_828_174_484,
        -2_111_788_577_519_600_567,
    ];
    [
        (tids[0], "python".to_owned()),
        (tids[1], format!("tf_Compute/{}", tids[1])),
        (tids[2], format!("tf_Compute/{}", tids[2])),
        (tids[3], format!("tf_data_iterator_get_next/{}", tids[3])),
        (tids[4], format!("tf_data_iterator_resource/{}", tids[4])),
    ]
}

/// A tiny deterministic generator (SplitMix64) for the ids and the small variations.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The step's ids: its `id` (a negative int64 as TensorFlow's step ids often are), the
/// producer id its function run hands the executors, and its threadpool records' ids.
struct Step {
    index: u64,
    start: i64,
    id: i64,
    run: u64,
}

impl Step {
    fn new(index: u64) -> Step {
        Step {
            index,
            start: index as i64 * STEP_PS + 40 * US,
            id: -((mix(index) >> 2) as i64),
            run: mix(index ^ 0xabcd),
        }
    }

    /// The id of the threadpool record that starts region `r` of compute line `c`.
    fn record(&self, c: u64, r: u64) -> i64 {
        (self.index * 1_000 + c * 100 + r + 30_000) as i64
    }
}

/// The events of line `line` (0 to 4) in step `step`, by start (longer first at equal starts).
fn step_events(line: usize, step: &Step, ops: usize, out: &mut Vec<Ev>) {
    out.clear();
    let t = step.start;
    let mut push = |metadata: i64, offset: i64, duration: i64, stats: Vec<(i64, Val)>| {
        out.push(Ev {
            metadata,
            offset,
            duration,
            stats,
        });
    };
    let jitter = |k: u64| (mix(step.index * 977 + k) % 300) as i64 * 1_000;
    match line {
        0 => {
            // Three eager ops, seven deep, then a tensor handle deleted.
            for k in 0..3i64 {
                let at = t + k * 42 * US;
                let chain = [
                    "TFE_Py_FastPathExecute_C",
                    "EagerExecute",
                    "EagerLocalExecute: AssignVariableOp",
                    "EagerKernelExecute",
                    "KernelAndDeviceFunc::Run",
                    "AssignVariableOp",
                    "ValidateInputTypeAndPlacement",
                ];
                for (depth, name) in chain.iter().enumerate() {
                    let d = depth as i64;
                    let stats = if depth == 2 {
                        vec![
                            (stat("eager_op"), sref("AssignVariableOp")),
                            (stat("is_func"), Val::Int(0)),
                        ]
                    } else {
                        Vec::new()
                    };
                    push(
                        event(name),
                        at + d * 700_000,
                        30 * US - d * 2 * US + jitter(k as u64),
                        stats,
                    );
                }
                push(
                    event("TFE_DeleteTensorHandle"),
                    at + 31 * US,
                    500_000,
                    vec![],
                );
            }
            // The step: the function call down to its run, the step root.
            let at = t + 130 * US;
            push(event("TFE_Py_ExecuteCancelable"), at, 440 * US, vec![]);
            push(
                event("EagerLocalExecute: __inference_multi_step_on_iterator_1236"),
                at + US,
                437 * US,
                vec![
                    (
                        stat("eager_op"),
                        sref("__inference_multi_step_on_iterator_1236"),
                    ),
                    (stat("is_func"), Val::Int(1)),
                ],
            );
            push(
                event("multi_step_on_iterator"),
                at + 2 * US,
                435 * US,
                vec![
                    (stat("tf_function_call"), sref("notTraced-nonXla")),
                    (stat("tracing_count"), Val::Int(0)),
                ],
            );
            push(
                event("FunctionRun"),
                at + 3 * US,
                433 * US,
                vec![
                    (stat("id"), Val::Int(step.id)),
                    (stat("_r"), Val::Int(1)),
                    (stat("_pt"), Val::Int(2)),
                    (stat("_p"), Val::Uint(step.run)),
                ],
            );
            for c in 0..2 {
                push(
                    event("ThreadpoolListener::Record"),
                    at + 6 * US + c as i64 * 300_000,
                    0,
                    vec![
                        (stat("_pt"), Val::Int(15)),
                        (stat("_p"), Val::Int(step.record(c, 0))),
                    ],
                );
            }
        }
        1 | 2 => {
            // 32 threadpool regions, each an executor's run of about four ops.
            let c = line as u64 - 1;
            let mut at = t + 140 * US + c as i64 * 6 * US;
            for r in 0..32u64 {
                let n_ops = 3 + (mix(step.index * 64 + c * 32 + r) % 2) as i64
                    - i64::from(r % 3 == 0 && r > 0);
                let op_len = 2 * US + jitter(r + c * 32);
                let process = n_ops * (op_len + 300_000) + 900_000;
                push(
                    event("ThreadpoolListener::StartRegion"),
                    at,
                    0,
                    vec![
                        (stat("_ct"), Val::Int(15)),
                        (stat("_c"), Val::Int(step.record(c, r))),
                    ],
                );
                push(
                    event("ExecutorState::Process"),
                    at + 200_000,
                    process,
                    vec![
                        (stat("id"), Val::Int(step.id)),
                        (stat("iter_num"), Val::Int(0)),
                        (stat("_ct"), Val::Int(2)),
                        (stat("_c"), Val::Uint(step.run)),
                    ],
                );
                let mut op_at = at + 500_000;
                for k in 0..n_ops {
                    let name = (step.index as usize * 7 + (c as usize) * 131 + r as usize * 5)
                        .wrapping_add(k as usize)
                        % ops;
                    push(
                        EVENT_NAMES.len() as i64 + 1 + name as i64,
                        op_at,
                        op_len,
                        vec![],
                    );
                    op_at += op_len + 300_000;
                }
                // The record that lets the other thread's next region start.
                push(
                    event("ThreadpoolListener::Record"),
                    op_at - 200_000,
                    0,
                    vec![
                        (stat("_pt"), Val::Int(15)),
                        (stat("_p"), Val::Int(step.record(1 - c, r + 1))),
                    ],
                );
                push(
                    event("ThreadpoolListener::StopRegion"),
                    at + 200_000 + process + 100_000,
                    0,
                    vec![],
                );
                at += process + 800_000;
            }
        }
        3 => {
            let at = t + 100 * US;
            push(
                event("IteratorGetNextOp::DoCompute"),
                at,
                31 * US,
                vec![
                    (stat("id"), Val::Int(step.id)),
                    (stat("iter_num"), Val::Int(0)),
                    (stat("element_size"), Val::Int(4352)),
                ],
            );
            let root = mix(7);
            let prefetch = mix(8);
            push(
                event("Iterator::Root"),
                at + 17 * US,
                11 * US,
                vec![
                    (stat("name"), sref("PrefetchDataset:9")),
                    (stat("shapes"), sref("[?,32] [?]")),
                    (stat("types"), sref("float int64")),
                    (stat("id"), Val::Uint(root)),
                    (stat("algorithm"), sref("DEFAULT")),
                    (stat("cpu_budget"), Val::Int(2)),
                    (stat("ram_budget_megabytes"), Val::Int(7437)),
                    (stat("intra_op_parallelism"), Val::Int(2)),
                ],
            );
            push(
                event("Iterator::Root::Prefetch"),
                at + 21 * US,
                6 * US,
                vec![
                    (stat("name"), sref("PrefetchDataset:9")),
                    (stat("shapes"), sref("[?,32] [?]")),
                    (stat("types"), sref("float int64")),
                    (stat("id"), Val::Uint(prefetch)),
                    (stat("parent_id"), Val::Uint(root)),
                    (stat("buffer_limit"), Val::Int(2)),
                    (stat("autotune"), sref("false")),
                ],
            );
            push(
                event("PrefetchConsume"),
                at + 22 * US,
                700_000,
                vec![(stat("element_id"), Val::Int(mix(step.index) as i64 >> 4))],
            );
            push(
                event("ExecutorState::ProcessAsync::Done"),
                at + 32 * US,
                70 * US,
                vec![
                    (stat("name"), sref("IteratorGetNext")),
                    (stat("kernel_type"), sref("IteratorGetNext")),
                    (stat("step_id"), Val::Int(step.id)),
                    (stat("_ct"), Val::Int(2)),
                    (stat("_c"), Val::Uint(step.run)),
                ],
            );
            for k in 0..3i64 {
                push(
                    event("ThreadpoolListener::Record"),
                    at + 33 * US + k * 30 * US,
                    0,
                    vec![
                        (stat("_pt"), Val::Int(15)),
                        (stat("_p"), Val::Int(step.record(0, 40 + k as u64))),
                    ],
                );
            }
        }
        _ => {
            let at = t + 20 * US;
            let ids = [mix(8), mix(9), mix(10), mix(11), mix(12)];
            let dataset = |k: usize| {
                let (name, shapes) = match k {
                    1 => ("TakeDataset:8", "[?,32] [?]"),
                    2 => ("RepeatDataset:7", "[?,32] [?]"),
                    3 => ("BatchDatasetV2:6", "[?,32] [?]"),
                    _ => ("TensorSliceDataset:5", "[32] []"),
                };
                let mut stats = vec![
                    (stat("name"), sref(name)),
                    (stat("shapes"), sref(shapes)),
                    (stat("types"), sref("float int64")),
                    (stat("id"), Val::Uint(ids[k.min(4)])),
                    (stat("parent_id"), Val::Uint(ids[k - 1])),
                ];
                if k == 3 {
                    stats.extend([
                        (stat("batch_size"), Val::Int(32)),
                        (stat("drop_remainder"), sref("false")),
                        (stat("parallel_copy"), sref("false")),
                    ]);
                }
                stats
            };
            push(
                event("PrefetchProduce"),
                at,
                56 * US,
                vec![(
                    stat("element_id"),
                    Val::Int(mix(step.index + 1) as i64 >> 4),
                )],
            );
            push(
                event("Iterator::Root::Prefetch::FiniteTake"),
                at + 400_000,
                55 * US,
                dataset(1),
            );
            push(
                event("Iterator::Root::Prefetch::FiniteTake::ForeverRepeat"),
                at + 800_000,
                54 * US,
                dataset(2),
            );
            push(
                event("Iterator::Root::Prefetch::FiniteTake::ForeverRepeat[62]::BatchV2"),
                at + 1_500_000,
                53 * US,
                dataset(3),
            );
            for k in 0..32i64 {
                push(
                    event(
                        "Iterator::Root::Prefetch::FiniteTake::ForeverRepeat[62]::BatchV2::TensorSlice",
                    ),
                    at + 2 * US + k * 1_600_000,
                    500_000 + jitter(k as u64 + 100) / 3,
                    dataset(4),
                );
            }
        }
    }
    out.sort_by(|a, b| a.offset.cmp(&b.offset).then(b.duration.cmp(&a.duration)));
}

// --- protobuf, by hand (canonical: fields in number order, defaults left out) ---

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(field: u32, wire: u32, out: &mut Vec<u8>) {
    varint(u64::from(field << 3 | wire), out);
}

fn int_field(field: u32, v: i64, out: &mut Vec<u8>) {
    if v != 0 {
        key(field, 0, out);
        varint(v as u64, out);
    }
}

fn bytes_field(field: u32, bytes: &[u8], out: &mut Vec<u8>) {
    key(field, 2, out);
    varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// A stat as field `field` of its message (an event's `stats` are field 4, a plane's 6).
fn encode_stat(field: u32, id: i64, value: Val, out: &mut Vec<u8>) {
    let mut body = Vec::with_capacity(16);
    int_field(1, id, &mut body);
    match value {
        // A zero value is still written: the oneof says which it is.
        Val::Uint(v) => {
            key(3, 0, &mut body);
            varint(v, &mut body);
        }
        Val::Int(v) => {
            key(4, 0, &mut body);
            varint(v as u64, &mut body);
        }
        Val::Ref(v) => {
            key(7, 0, &mut body);
            varint(v, &mut body);
        }
    }
    bytes_field(field, &body, out);
}

/// One event as a line's `events` field.
fn encode_event(ev: &Ev, scratch: &mut Vec<u8>, out: &mut Vec<u8>) {
    scratch.clear();
    int_field(1, ev.metadata, scratch);
    int_field(2, ev.offset, scratch);
    int_field(3, ev.duration, scratch);
    for &(id, value) in &ev.stats {
        let mut stat = Vec::with_capacity(16);
        encode_stat(4, id, value, &mut stat);
        scratch.extend_from_slice(&stat);
    }
    bytes_field(4, scratch, out);
}

/// A line's fields before its events (id, name, timestamp), and the events' bytes in steps.
fn line_head(id: i64, name: &str, out: &mut Vec<u8>) {
    int_field(1, id, out);
    bytes_field(2, name.as_bytes(), out);
    int_field(3, LINE_START_NS, out);
    // TensorFlow writes the thread's name as the display name too.
    bytes_field(11, name.as_bytes(), out);
}

/// Calls `chunk` with the encoded events of line `line`, step by step.
fn for_each_chunk(
    line: usize,
    steps: u64,
    ops: usize,
    mut chunk: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let mut events = Vec::new();
    let mut scratch = Vec::new();
    let mut buf = Vec::with_capacity(1 << 16);
    for s in 0..steps {
        step_events(line, &Step::new(s), ops, &mut events);
        for ev in &events {
            encode_event(ev, &mut scratch, &mut buf);
        }
        if buf.len() >= 1 << 16 || s + 1 == steps {
            chunk(&buf)?;
            buf.clear();
        }
    }
    Ok(())
}

fn len_of_varint(v: u64) -> u64 {
    let mut buf = Vec::with_capacity(10);
    varint(v, &mut buf);
    buf.len() as u64
}

/// The plane's metadata maps (fields 4 and 5).
fn metadata(ops: &[String], out: &mut Vec<u8>) {
    let names = EVENT_NAMES
        .iter()
        .map(|s| s.to_string())
        .chain(ops.iter().cloned());
    for (i, name) in names.enumerate() {
        let id = i as i64 + 1;
        let mut md = Vec::new();
        int_field(1, id, &mut md);
        bytes_field(2, name.as_bytes(), &mut md);
        let mut entry = Vec::new();
        int_field(1, id, &mut entry);
        bytes_field(2, &md, &mut entry);
        bytes_field(4, &entry, out);
    }
    for (i, name) in STAT_NAMES.iter().enumerate() {
        let id = i as i64 + 1;
        let mut md = Vec::new();
        int_field(1, id, &mut md);
        bytes_field(2, name.as_bytes(), &mut md);
        let mut entry = Vec::new();
        int_field(1, id, &mut entry);
        bytes_field(2, &md, &mut entry);
        bytes_field(5, &entry, out);
    }
}

/// The `Task Environment` plane of a session of `steps` steps.
fn task_environment(steps: u64) -> Vec<u8> {
    let mut plane = Vec::new();
    int_field(1, 1, &mut plane);
    bytes_field(2, b"Task Environment", &mut plane);
    let names = ["profile_start_time", "profile_stop_time"];
    for (i, name) in names.iter().enumerate() {
        let mut md = Vec::new();
        int_field(1, i as i64 + 1, &mut md);
        bytes_field(2, name.as_bytes(), &mut md);
        let mut entry = Vec::new();
        int_field(1, i as i64 + 1, &mut entry);
        bytes_field(2, &md, &mut entry);
        bytes_field(5, &entry, &mut plane);
    }
    let stop = SESSION_START_NS + (steps as i64 * STEP_PS / 1_000) as u64 + 1_000_000;
    encode_stat(6, 1, Val::Uint(SESSION_START_NS), &mut plane);
    encode_stat(6, 2, Val::Uint(stop), &mut plane);
    plane
}

/// About how many bytes step `at` takes (its times' varints grow with it).
fn bytes_per_step(ops: usize, at: u64) -> u64 {
    let mut events = Vec::new();
    let mut scratch = Vec::new();
    let mut buf = Vec::new();
    for line in 0..5 {
        step_events(line, &Step::new(at), ops, &mut events);
        for ev in &events {
            encode_event(ev, &mut scratch, &mut buf);
        }
    }
    buf.len() as u64
}

/// What [`write`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Training steps.
    pub steps: u64,
    /// Events of the host plane.
    pub events: u64,
    /// Bytes of the file.
    pub bytes: u64,
}

/// Writes an XSpace of about `target_bytes` (at least one step) shaped as the real Keras
/// profile (see the module's documentation) to `out`, in memory a few kilobytes whatever the
/// size.
pub fn write(mut out: impl Write, target_bytes: u64) -> io::Result<Written> {
    let ops = op_names();
    // The size of a step of the middle of the run, once the run's length is known roughly.
    let rough = (target_bytes / bytes_per_step(ops.len(), 0).max(1)).max(1);
    let steps = (target_bytes / bytes_per_step(ops.len(), rough / 2).max(1)).max(1);
    let lines = lines();
    // Pass 1: each line's length, events counted.
    let mut line_heads = Vec::new();
    let mut line_lens = Vec::new();
    let mut events = 0u64;
    let mut evs = Vec::new();
    for (k, (id, name)) in lines.iter().enumerate() {
        let mut head = Vec::new();
        line_head(*id, name, &mut head);
        let mut len = head.len() as u64;
        for_each_chunk(k, steps, ops.len(), |chunk| {
            len += chunk.len() as u64;
            Ok(())
        })?;
        for s in 0..steps {
            step_events(k, &Step::new(s), ops.len(), &mut evs);
            events += evs.len() as u64;
        }
        line_heads.push(head);
        line_lens.push(len);
    }
    let mut plane_head = Vec::new();
    int_field(1, 0, &mut plane_head);
    bytes_field(2, b"/host:CPU", &mut plane_head);
    let mut plane_tail = Vec::new();
    metadata(&ops, &mut plane_tail);
    let plane_len = plane_head.len() as u64
        + line_lens
            .iter()
            .map(|&l| 1 + len_of_varint(l) + l)
            .sum::<u64>()
        + plane_tail.len() as u64;
    // Pass 2: the bytes.
    let mut written = 0u64;
    let mut head = Vec::new();
    key(1, 2, &mut head);
    varint(plane_len, &mut head);
    head.extend_from_slice(&plane_head);
    out.write_all(&head)?;
    written += head.len() as u64;
    for (k, line) in line_heads.iter().enumerate() {
        let mut lh = Vec::new();
        key(3, 2, &mut lh);
        varint(line_lens[k], &mut lh);
        lh.extend_from_slice(line);
        out.write_all(&lh)?;
        written += lh.len() as u64;
        for_each_chunk(k, steps, ops.len(), |chunk| {
            written += chunk.len() as u64;
            out.write_all(chunk)
        })?;
    }
    out.write_all(&plane_tail)?;
    written += plane_tail.len() as u64;
    let mut env = Vec::new();
    bytes_field(1, &task_environment(steps), &mut env);
    out.write_all(&env)?;
    written += env.len() as u64;
    let mut hostname = Vec::new();
    bytes_field(4, b"vm", &mut hostname);
    out.write_all(&hostname)?;
    written += hostname.len() as u64;
    out.flush()?;
    Ok(Written {
        steps,
        events,
        bytes: written,
    })
}

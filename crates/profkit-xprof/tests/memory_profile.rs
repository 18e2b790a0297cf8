//! `tools::memory_profile` against xprof 2.24.2's saved output for every case in
//! `conformance/xprof-tools/memory_profile/` (see its README): byte for byte, but for what xprof
//! itself does not keep from run to run (the order of the allocators in
//! `memoryProfilePerAllocator`, and which snapshot stands for several equal allocations active at
//! the peak), compared as `same_profile` says.
//!
//! The synthetic cases' inputs are built here; `BLESS=1` writes them (then
//! `conformance/xprof/memory_profile_check.py` with `BLESS=1` saves xprof's output for them).

use std::path::{Path, PathBuf};

use profkit_xplane::{PlaneBuilder, ReadOptions, XPlane, XSpace, encode, read_file};
use profkit_xprof::tools::memory_profile::{memory_profile, memory_profile_json};
use serde_json::Value;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/xprof-tools/memory_profile")
}

fn space(planes: Vec<XPlane>) -> XSpace {
    XSpace {
        planes,
        hostnames: vec!["host".into()],
        ..XSpace::default()
    }
}

fn plane(name: &str, f: impl FnOnce(&mut PlaneBuilder<'_>)) -> XPlane {
    let mut plane = XPlane::default();
    let mut b = PlaneBuilder::new(&mut plane);
    b.set_name(name);
    f(&mut b);
    plane
}

/// One allocator event's stats.
#[derive(Clone, Default)]
struct Ev {
    alloc: bool,
    time: i64,
    allocator: &'static str,
    heap: i64,
    stack: i64,
    free: i64,
    peak: i64,
    frag: f64,
    requested: i64,
    bytes: i64,
    addr: i64,
    op: &'static str,
    region: &'static str,
    dtype: i64,
    shape: &'static str,
    group: Option<i64>,
}

fn add(line: &mut profkit_xplane::LineBuilder<'_>, e: &Ev) {
    let name = if e.alloc {
        "MemoryAllocation"
    } else {
        "MemoryDeallocation"
    };
    let mut ev = line.add_event(name);
    ev.set_offset_ps(e.time)
        .set_duration_ps(0)
        .add_stat("allocator_name", e.allocator)
        .add_stat("bytes_reserved", e.stack)
        .add_stat("bytes_allocated", e.heap)
        .add_stat("bytes_available", e.free)
        .add_stat("fragmentation", e.frag)
        .add_stat("peak_bytes_in_use", e.peak)
        .add_stat("requested_bytes", e.requested)
        .add_stat("allocation_bytes", e.bytes)
        .add_stat("addr", e.addr)
        .add_stat("tf_op", e.op)
        .add_stat("region_type", e.region)
        .add_stat("data_type", e.dtype)
        .add_stat("shape", e.shape);
    if let Some(g) = e.group {
        ev.add_stat("group_id", g);
    }
}

fn alloc(time: i64, allocator: &'static str, heap: i64, bytes: i64, addr: i64) -> Ev {
    Ev {
        alloc: true,
        time,
        allocator,
        heap,
        free: 1 << 30,
        peak: heap,
        requested: bytes,
        bytes,
        addr,
        op: "model/dense/MatMul",
        region: "output",
        dtype: 1,
        shape: "[32,64]",
        ..Ev::default()
    }
}

fn dealloc(time: i64, allocator: &'static str, heap: i64, bytes: i64, addr: i64) -> Ev {
    Ev {
        alloc: false,
        time,
        allocator,
        heap,
        free: 1 << 30,
        peak: heap,
        bytes,
        addr,
        ..Ev::default()
    }
}

fn host(lines: &[Vec<Ev>]) -> XPlane {
    plane("/host:CPU", |b| {
        for (i, events) in lines.iter().enumerate() {
            let mut line = b.line(i as i64 + 1);
            line.set_name(format!("thread {i}"));
            for e in events {
                add(&mut line, e);
            }
        }
    })
}

/// Several allocators on two threads, the second thread's events earlier than the first's
/// (xprof keeps the summary in visiting order, the snapshots in time order); deallocations that
/// take their tensor from their allocation; the stack reserved; steps from `group_id` and fixed
/// where it is missing; doubles of every shape.
fn several_allocators() -> XSpace {
    let mut a = vec![
        alloc(5_000, "GPU_0_bfc", 100, 100, 0x1000),
        alloc(6_000, "GPU_0_bfc", 300, 200, 0x2000),
        dealloc(7_000, "GPU_0_bfc", 200, 100, 0x1000),
        alloc(8_000, "gpu_host_bfc", 64, 64, 0x10),
        alloc(9_000, "GPU_0_bfc", 264, 64, 0x3000),
    ];
    a[1].frag = 0.1 + 0.2;
    a[1].op = "model/conv/Conv2D";
    a[1].dtype = 14;
    a[1].group = Some(3);
    a[2].frag = 1e-7;
    a[3].stack = 4096;
    a[3].frag = 1e21;
    a[4].frag = 2.0 / 3.0;
    a[4].group = Some(4);
    let mut b = vec![
        alloc(1_000, "GPU_0_bfc", 50, 50, 0x4000),
        alloc(2_000, "gpu_host_bfc", 32, 32, 0x20),
        dealloc(3_000, "gpu_host_bfc", 0, 32, 0x20),
        alloc(10_000, "GPU_0_bfc", 314, 50, 0x5000),
        dealloc(11_000, "GPU_0_bfc", 264, 50, 0x4000),
    ];
    b[0].frag = 123.456;
    b[0].dtype = 3;
    b[1].frag = 0.5;
    b[3].frag = 1.26171e-06;
    b[3].group = Some(4);
    // Last in the file, first in time: the lifetime peak is the last visited event's.
    let mut early = alloc(500, "gpu_host_bfc", 16, 16, 0x30);
    early.peak = 7_777;
    b.push(early);
    space(vec![host(&[a, b])])
}

/// Deallocations without an allocation, an address allocated twice before it is freed, a second
/// free of one address, all in the peak's step.
fn unmatched_deallocations() -> XSpace {
    let a = "GPU_0_bfc";
    let events = vec![
        dealloc(1_000, a, 900, 100, 0x100),
        alloc(2_000, a, 1000, 100, 0x200),
        alloc(3_000, a, 1100, 100, 0x200),
        dealloc(4_000, a, 1000, 100, 0x200),
        dealloc(5_000, a, 900, 100, 0x200),
        alloc(6_000, a, 1200, 300, 0x300),
        dealloc(7_000, a, 900, 300, 0x999),
        alloc(8_000, a, 1500, 600, 0x400),
        dealloc(9_000, a, 900, 600, 0x400),
    ];
    space(vec![host(&[events])])
}

/// The peak reached several times (the last visited wins, and the peak's step is that of the
/// last snapshot in time that reaches it); many snapshots at one time (more than 16, so that
/// `std::sort` moves ties); equal allocations active at the peak, merged with their count.
fn peak_ties() -> XSpace {
    let a = "GPU_0_bfc";
    let mut first = Vec::new();
    let mut second = Vec::new();
    for i in 0..40_i64 {
        let mut e = alloc(1_000 * (i % 3), a, 64 * (i + 1), 64, 0x1000 + i * 64);
        e.group = Some(i % 2);
        e.frag = i as f64 / 7.0;
        if i % 4 == 0 {
            e.op = "model/embedding/Gather";
        }
        first.push(e);
    }
    for i in 0..20_i64 {
        let mut e = alloc(500 + 100 * i, a, 64 * 40, 64, 0x9000 + i * 64);
        e.group = Some(1);
        second.push(e);
    }
    space(vec![host(&[first, second])])
}

/// More snapshots than xprof's timeline keeps (1,000): 2,503 for one allocator (runs of 2 and
/// 3), 1,001 and exactly 1,000 for two others; only the stats the timeline reads, to keep the
/// file small.
fn over_cap() -> XSpace {
    let host = plane("/host:CPU", |b| {
        let mut line = b.line(1);
        for (allocator, n) in [("big", 2_503_i64), ("one_over", 1_001), ("at_cap", 1_000)] {
            for i in 0..n {
                let name = if i % 3 == 2 {
                    "MemoryDeallocation"
                } else {
                    "MemoryAllocation"
                };
                line.add_event(name)
                    .set_offset_ps(i * 10)
                    .add_stat(
                        "allocator_name",
                        profkit_xplane::StatValue::Ref(allocator.into()),
                    )
                    .add_stat("bytes_allocated", (i * 7_919) % 1_009 + 1)
                    .add_stat("addr", 0x100 + (i - i % 3) * 8);
            }
        }
    });
    space(vec![host])
}

/// No allocator events on the host plane; TPU planes whose `XLA Modules` lines give the HLO
/// modules, another line and a GPU plane that do not.
fn no_allocator_events() -> XSpace {
    let host = plane("/host:CPU", |b| {
        b.line(1)
            .set_name("main")
            .add_event("train")
            .set_offset_ps(0)
            .set_duration_ps(100);
    });
    let tpu = |name: &str, base: i64| {
        plane(name, |b| {
            let mut line = b.line(1);
            line.set_name("XLA Modules");
            line.add_event("jit_step(123)")
                .set_offset_ps(base)
                .set_duration_ps(500);
            line.add_event("jit_step(123)")
                .set_offset_ps(base + 1_000)
                .set_duration_ps(400);
            b.line(2)
                .set_name("XLA Ops")
                .add_event("fusion.1")
                .set_offset_ps(base)
                .set_duration_ps(10);
        })
    };
    let gpu = plane("/device:GPU:0", |b| {
        b.line(1)
            .set_name("XLA Modules")
            .add_event("gpu_module")
            .set_offset_ps(5)
            .set_duration_ps(5);
    });
    space(vec![
        host,
        tpu("/device:TPU:1", 7_000),
        gpu,
        tpu("/device:TPU:0", 2_000),
    ])
}

/// A space without a `/host:CPU` plane (xprof returns an empty text).
fn no_host_plane() -> XSpace {
    space(vec![plane("/device:GPU:0", |b| {
        b.line(1)
            .add_event("MemoryAllocation")
            .add_stat("allocator_name", "GPU_0_bfc");
    })])
}

/// How xprof reads each stat: allocator ids from integers, from several id stats and from none;
/// values of other types than it reads (read as 0 or empty); `ref_value` strings; stats of the
/// event metadata (not read); data types known, reference, unknown and past 32 bits; an
/// aggregated event; strings that its JSON writer escapes; doubles it writes as strings.
fn stat_types() -> XSpace {
    let host = plane("/host:CPU", |b| {
        let shared = b.event_metadata_id("MemoryAllocation");
        if let Some(mut m) = b.event_metadata(shared) {
            m.add_stat("allocator_name", "from_metadata")
                .add_stat("bytes_allocated", 999_i64);
        }
        let mut line = b.line(1);
        line.set_name("allocators");
        let dtypes: [i64; 12] = [0, 1, 19, 23, 29, 30, 31, 101, 130, 150, -5, (1 << 32) + 9];
        for (i, dtype) in dtypes.iter().enumerate() {
            let i = i as i64;
            line.add_event("MemoryAllocation")
                .set_offset_ps(100 * i)
                .add_stat("index_on_host", i % 2)
                .add_stat("bytes_allocated", 10 * (i + 1))
                .add_stat("allocation_bytes", 10_i64)
                .add_stat("addr", 0x100 + i)
                .add_stat("data_type", *dtype);
        }
        line.add_event("MemoryAllocation")
            .set_offset_ps(2_000)
            .add_stat("device_ordinal", 7_i64)
            .add_stat("allocator_name", "named_after")
            .add_stat("bytes_allocated", 5_i64);
        line.add_event("MemoryAllocation")
            .set_offset_ps(2_100)
            .add_stat("allocator_name", "named_before")
            .add_stat("device_ordinal", 8_i64)
            .add_stat("bytes_allocated", 6_i64);
        line.add_event("MemoryAllocation")
            .set_offset_ps(2_200)
            .add_stat("bytes_allocated", 7_u64)
            .add_stat("bytes_reserved", 3.5_f64)
            .add_stat("fragmentation", 2_i64)
            .add_stat("addr", 0xdead_u64)
            .add_stat("tf_op", 7_i64)
            .add_stat("group_id", 9_u64);
        line.add_event("MemoryDeallocation")
            .set_num_occurrences(3)
            .add_stat(
                "allocator_name",
                profkit_xplane::StatValue::Ref("ref_alloc".into()),
            )
            .add_stat("tf_op", profkit_xplane::StatValue::Ref("ref/op".into()))
            .add_stat("bytes_allocated", 1_i64);
        let escapes = "q\"b\\s/ <tag> & 'x' \n\t\r\u{8}\u{c}\u{1}\u{1f} \u{7f}\u{85}\u{a0}\u{ad} é ü \u{600}\u{200b}\u{2028}\u{2029}\u{feff} 😀 \u{e0001} \u{6dd}\u{70f}\u{17b4}\u{17b6}\u{2060}\u{2065}\u{206a}\u{fff9}\u{fffc}\u{e0020}\u{e0080}\u{604}\u{202f}";
        for (i, frag) in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            1e-300,
            5e-324,
        ]
        .iter()
        .enumerate()
        {
            line.add_event("MemoryAllocation")
                .set_offset_ps(3_000 + i as i64)
                .add_stat("allocator_name", "strings")
                .add_stat("bytes_allocated", 1_i64)
                .add_stat("fragmentation", *frag)
                .add_stat("tf_op", escapes)
                .add_stat("region_type", "<script>")
                .add_stat("shape", "[1,2]");
        }
        let doubles = [
            1e15,
            1e16,
            1.234_567_890_123_456_7e17,
            1e-5,
            1e-4,
            1.5e300,
            0.1,
            1.0 / 3.0,
            100.0,
            2.5e-7,
            9_007_199_254_740_993.0,
            4.35,
        ];
        for (i, frag) in doubles.iter().enumerate() {
            line.add_event("MemoryAllocation")
                .set_offset_ps(4_000 + i as i64)
                .add_stat("allocator_name", "doubles")
                .add_stat("bytes_allocated", i as i64)
                .add_stat("fragmentation", *frag);
        }
    });
    space(vec![host])
}

/// Allocator events inside a host step root (`_r`, `step_num`): preprocessing gives them the
/// step's `group_id`; those outside it take the step before them plus one.
fn grouped_by_steps() -> XSpace {
    let host = plane("/host:CPU", |b| {
        let mut line = b.line(1);
        line.set_name("main");
        for step in 0..3_i64 {
            let base = step * 10_000;
            line.add_event("train")
                .set_offset_ps(base)
                .set_duration_ps(5_000)
                .add_stat("_r", 1_i64)
                .add_stat("step_num", step + 7);
        }
        let mut events = Vec::new();
        for step in 0..3_i64 {
            let base = step * 10_000;
            events.push(alloc(base + 1_000, "GPU_0_bfc", 100 + step, 100, 0x100));
            events.push(dealloc(base + 2_000, "GPU_0_bfc", step, 100, 0x100));
            events.push(alloc(
                base + 7_000,
                "GPU_0_bfc",
                50 + step,
                50,
                0x200 + step,
            ));
        }
        for e in &events {
            add(&mut line, e);
        }
    });
    // The allocator events are nested in the steps on their line once sorted by time.
    let mut host = host;
    if let Some(line) = host.lines.first_mut() {
        line.events.sort_by_key(|e| match e.data {
            Some(profkit_xplane::x_event::Data::OffsetPs(v)) => v,
            _ => 0,
        });
    }
    space(vec![host])
}

/// Usage that never reaches zero (negative byte counts): the peak is never set.
fn negative_usage() -> XSpace {
    let mut a = alloc(1_000, "weird", -5, 10, 0x10);
    a.stack = -1;
    let b = dealloc(2_000, "weird", -20, 10, 0x10);
    space(vec![host(&[vec![a, b]])])
}

/// A thread pool's region instants on the host plane: xprof adds a region event and re-sorts the
/// line with an unstable sort (so the visiting order of the allocator events at one time changes,
/// and with it which of them the peak keeps); with `loop_op`, one of TensorFlow's loop ops, so
/// that xprof adds the regions but does not group.
fn thread_pool_regions(loop_op: bool) -> XSpace {
    let host = plane("/host:CPU", |b| {
        let mut line = b.line(1);
        line.set_name("tf_pool/1");
        line.add_event("train")
            .set_offset_ps(0)
            .set_duration_ps(20_000)
            .add_stat("_r", 1_i64)
            .add_stat("step_num", 1_i64);
        line.add_event("ThreadpoolListener::StartRegion")
            .set_offset_ps(1_000)
            .add_stat("_c", 5_i64);
        for i in 0..24_i64 {
            let mut e = alloc(1_500, "GPU_0_bfc", 1_000, 8, 0x100 + 8 * i);
            e.free = i;
            e.frag = i as f64;
            add(&mut line, &e);
        }
        line.add_event("ThreadpoolListener::StopRegion")
            .set_offset_ps(3_000);
        if loop_op {
            line.add_event("ForOp")
                .set_offset_ps(4_000)
                .set_duration_ps(10);
        }
        add(&mut line, &dealloc(5_000, "GPU_0_bfc", 992, 8, 0x100));
        // Last in the file, first in time: the lifetime peak is the last visited event's.
        let mut early = alloc(100, "GPU_0_bfc", 8, 8, 0x900);
        early.peak = 7_777;
        add(&mut line, &early);
        // A line of the same plane without regions, its events out of time order.
        let mut other = b.line(2);
        other.set_name("main");
        let mut late = alloc(1_000, "GPU_1_bfc", 5, 5, 0x10);
        late.peak = 5;
        add(&mut other, &late);
        let mut early = alloc(50, "GPU_1_bfc", 6, 1, 0x20);
        early.peak = 6_666;
        add(&mut other, &early);
    });
    space(vec![host])
}

fn synthetic() -> Vec<(&'static str, XSpace)> {
    vec![
        ("several-allocators", several_allocators()),
        ("unmatched-deallocations", unmatched_deallocations()),
        ("peak-ties", peak_ties()),
        ("over-cap", over_cap()),
        ("no-allocator-events", no_allocator_events()),
        ("no-host-plane", no_host_plane()),
        ("stat-types", stat_types()),
        ("grouped-by-steps", grouped_by_steps()),
        ("negative-usage", negative_usage()),
        ("thread-pool-regions", thread_pool_regions(false)),
        ("regions-loop-op", thread_pool_regions(true)),
    ]
}

/// The input of a case folder: its own `input.xplane.pb`, or the file of another conformance
/// case that `input.path` names (relative to `conformance/`).
fn case_input(dir: &Path) -> PathBuf {
    let own = dir.join("input.xplane.pb");
    if own.exists() {
        return own;
    }
    let named = std::fs::read_to_string(dir.join("input.path")).unwrap();
    cases_dir().join("../..").join(named.trim())
}

/// xprof's saved output for a case (`xprof.memory_profile.json`, or gzipped with `.gz`).
fn expected(dir: &Path) -> String {
    let plain = dir.join("xprof.memory_profile.json");
    if plain.exists() {
        return std::fs::read_to_string(plain).unwrap();
    }
    let gz = std::io::BufReader::new(
        std::fs::File::open(dir.join("xprof.memory_profile.json.gz")).unwrap(),
    );
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut profkit_gzip::GzipReader::new(gz, profkit_gzip::Options::default()),
        &mut text,
    )
    .unwrap();
    text
}

/// The members of the JSON object that starts at `text[0]`, as (key, raw value text), in order.
fn members(text: &str) -> Vec<(String, &str)> {
    let b = text.as_bytes();
    assert_eq!(b.first(), Some(&b'{'), "not an object: {:.80}", text);
    let mut out = Vec::new();
    let mut i = 1;
    if b.get(i) == Some(&b'}') {
        return out;
    }
    loop {
        let key_end = value_end(b, i);
        let key: String = serde_json::from_str(&text[i..key_end]).unwrap();
        assert_eq!(b[key_end], b':');
        let end = value_end(b, key_end + 1);
        out.push((key, &text[key_end + 1..end]));
        match b[end] {
            b',' => i = end + 1,
            b'}' => return out,
            c => panic!("unexpected {:?} at {end}", c as char),
        }
    }
}

/// Where the JSON value starting at `i` ends (the text has no spaces, as xprof writes it).
fn value_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0_i32;
    let mut in_string = false;
    let start = i;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => {
                    in_string = false;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => return i,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                b',' if depth == 0 && i > start => return i,
                _ => {}
            }
        }
        i += 1;
    }
    i
}

/// The items of a JSON array's text, as raw texts.
fn items(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    assert_eq!(b.first(), Some(&b'['));
    let mut out = Vec::new();
    let mut i = 1;
    while b.get(i).is_some_and(|&c| c != b']') {
        let end = value_end(b, i);
        out.push(&text[i..end]);
        i = if b.get(end) == Some(&b',') {
            end + 1
        } else {
            end
        };
    }
    out
}

/// Whether our memory profile JSON is xprof's, as far as xprof's own output is fixed:
///
/// - the top-level members, in order, byte for byte, but for `memoryProfilePerAllocator`, whose
///   members xprof lists in a hash map's order (changing from run to run): the same allocators,
///   each byte for byte member by member, but for `memoryProfileSnapshots`;
/// - `memoryProfileSnapshots`: as many; the `activeAllocations` (compared byte for byte above)
///   point at each by index. A snapshot that stands for one allocation (`numOccurrences` 1) is
///   xprof's byte for byte. One that stands for several equal allocations active at the peak is
///   whichever xprof's hash map listed first: ours must be an allocation in the same step, at or
///   before the peak, and say what xprof's says of the allocation (activity, requested and
///   allocated bytes, op, step, region, data type, shape), its time, address and stats aside.
fn same_profile(case: &str, ours: &str, xprof: &str) -> Result<(), String> {
    if xprof.is_empty() || ours.is_empty() {
        return if ours == xprof {
            Ok(())
        } else {
            Err(format!("{case}: ours {ours:.80} xprof {xprof:.80}"))
        };
    }
    let (o, x) = (members(ours), members(xprof));
    let keys = |m: &[(String, &str)]| m.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    if keys(&o) != keys(&x) {
        return Err(format!("{case}: members {:?} vs {:?}", keys(&o), keys(&x)));
    }
    for ((key, ov), (_, xv)) in o.iter().zip(&x) {
        if key != "memoryProfilePerAllocator" {
            if ov != xv {
                return Err(format!(
                    "{case}: {key} differs:\n ours  {ov:.300}\n xprof {xv:.300}"
                ));
            }
            continue;
        }
        let mut oa = members(ov);
        let mut xa = members(xv);
        oa.sort_by(|a, b| a.0.cmp(&b.0));
        xa.sort_by(|a, b| a.0.cmp(&b.0));
        if keys(&oa) != keys(&xa) {
            return Err(format!(
                "{case}: allocators {:?} vs {:?}",
                keys(&oa),
                keys(&xa)
            ));
        }
        for ((id, oo), (_, xo)) in oa.iter().zip(&xa) {
            same_allocator(&format!("{case} {id}"), oo, xo)?;
        }
    }
    Ok(())
}

fn same_allocator(at: &str, ours: &str, xprof: &str) -> Result<(), String> {
    let (o, x) = (members(ours), members(xprof));
    let mut snapshots = None;
    for ((key, ov), (xkey, xv)) in o.iter().zip(&x) {
        if key != xkey {
            return Err(format!("{at}: member {key} vs {xkey}"));
        }
        if key == "memoryProfileSnapshots" {
            snapshots = Some((items(ov), items(xv)));
        } else if ov != xv {
            return Err(format!(
                "{at}: {key} differs:\n ours  {ov:.300}\n xprof {xv:.300}"
            ));
        }
    }
    if o.len() != x.len() {
        return Err(format!("{at}: {} members vs {}", o.len(), x.len()));
    }
    let (os, xs) = snapshots.ok_or(format!("{at}: no snapshots"))?;
    if os.len() != xs.len() {
        return Err(format!("{at}: {} snapshots vs {}", os.len(), xs.len()));
    }
    let whole: Value = serde_json::from_str(ours).unwrap();
    let peak_time: i64 = whole["profileSummary"]["peakStatsTimePs"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let actives = whole["activeAllocations"].as_array().unwrap();
    let mut pointed = 0;
    for a in actives {
        let index: i64 = a["snapshotIndex"].as_str().unwrap().parse().unwrap();
        let Ok(index) = usize::try_from(index) else {
            continue;
        };
        pointed += 1;
        let (ot, xt) = (os[index], xs[index]);
        if a["numOccurrences"] == "1" {
            if ot != xt {
                return Err(format!("{at}: snapshot {index}:\n ours  {ot}\n xprof {xt}"));
            }
            continue;
        }
        let (ov, xv): (Value, Value) = (
            serde_json::from_str(ot).unwrap(),
            serde_json::from_str(xt).unwrap(),
        );
        let time: i64 = ov["timeOffsetPs"].as_str().unwrap().parse().unwrap();
        let (mut om, mut xm) = (
            ov["activityMetadata"].clone(),
            xv["activityMetadata"].clone(),
        );
        om["address"] = Value::Null;
        xm["address"] = Value::Null;
        if om != xm || om["memoryActivity"] != "ALLOCATION" || time > peak_time {
            return Err(format!(
                "{at}: merged snapshot {index}:\n ours  {ot}\n xprof {xt}"
            ));
        }
    }
    if pointed != os.len() {
        return Err(format!(
            "{at}: {pointed} allocations point at {} snapshots",
            os.len()
        ));
    }
    Ok(())
}

#[test]
fn synthetic_inputs_are_saved() {
    let bless = std::env::var_os("BLESS").is_some();
    for (name, space) in synthetic() {
        let dir = cases_dir().join(name);
        let path = dir.join("input.xplane.pb");
        let bytes = encode(&space);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        } else {
            let saved = std::fs::read(&path).unwrap_or_default();
            assert!(
                saved == bytes,
                "{name}: input.xplane.pb is not what the test builds (BLESS=1 to write it)"
            );
        }
    }
}

#[test]
fn every_case_is_xprofs() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let has_expected = dir.join("xprof.memory_profile.json").exists()
            || dir.join("xprof.memory_profile.json.gz").exists();
        if !has_expected {
            failures.push(format!("{name}: no xprof output saved"));
            continue;
        }
        let space = read_file(case_input(dir), ReadOptions::default()).unwrap();
        let ours = memory_profile_json(std::slice::from_ref(&space)).unwrap();
        if let Err(e) = same_profile(&name, &ours, &expected(dir)) {
            failures.push(e);
        }
        // Read as the command reads it: the host plane decoded only when it names allocator
        // events; the same profile either way.
        let bytes = std::fs::read(case_input(dir)).unwrap();
        let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out)
                .unwrap();
            out
        } else {
            bytes
        };
        let lean = profkit_xprof::op_stats::read_space_decoding(
            &bytes[..],
            ReadOptions::default(),
            profkit_xprof::op_stats::Parts::ALL,
            profkit_xprof::tools::memory_profile::reads_events,
        )
        .unwrap();
        let lean = memory_profile_json(std::slice::from_ref(&lean)).unwrap();
        if lean != ours {
            failures.push(format!(
                "{name}: read without the host events, a different profile"
            ));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= synthetic().len(), "only {checked} cases");
}

#[test]
fn one_host_only() {
    let err = memory_profile(&[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "xprof's memory_profile tool reads the XSpace of one host, not 0"
    );
    let two = [several_allocators(), several_allocators()];
    assert!(memory_profile(&two).is_err());
    assert!(memory_profile(&[no_host_plane()]).unwrap().is_none());
}

#[test]
fn the_comparison_catches_differences() {
    let space = several_allocators();
    let ours = memory_profile_json(std::slice::from_ref(&space)).unwrap();
    assert!(same_profile("self", &ours, &ours).is_ok());
    let changed = ours.replacen("\"stepId\":\"3\"", "\"stepId\":\"2\"", 1);
    assert_ne!(changed, ours);
    assert!(same_profile("changed", &changed, &ours).is_err());
}

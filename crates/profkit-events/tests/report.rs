//! Paddle's legacy report: the shared samples' rows, layout details, sorting, sections.

use std::path::Path;

use profkit_events::paddle::legacy;
use profkit_events::report::{
    Place, Report, ReportOptions, SortKey, format_f, format_g, parse_rows,
};
use profkit_events::{Event, MemPlace, MemoryRecord, Recording, ThreadEvents};

fn case(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/paddle")
        .join(name)
}

/// The sort key and place named in a printed report's header.
fn header_options(text: &str) -> ReportOptions {
    let sort = [
        SortKey::Calls,
        SortKey::Total,
        SortKey::Max,
        SortKey::Min,
        SortKey::Ave,
    ]
    .into_iter()
    .find(|k| text.contains(&format!("Sorted by {} ", k.domain())))
    .unwrap_or(SortKey::Default);
    let place = if text.contains("Place: All") {
        Place::All
    } else if text.contains("Place: CUDA") {
        Place::Cuda
    } else {
        Place::Cpu
    };
    ReportOptions {
        sort,
        place: Some(place),
        ..ReportOptions::default()
    }
}

#[test]
fn sample_reports_have_paddles_rows_order_and_calls() {
    let mut checked = 0;
    for entry in std::fs::read_dir(case("")).unwrap() {
        let dir = entry.unwrap().path();
        let (Ok(theirs), Ok(bytes)) = (
            std::fs::read_to_string(dir.join("paddle-report.txt")),
            std::fs::read(dir.join("input.pb")),
        ) else {
            continue;
        };
        let profile = legacy::decode_profile(&bytes).unwrap();
        let report = Report::new(&legacy::to_recording(&profile), header_options(&theirs));
        let ours = report.text();
        assert_eq!(parse_rows(&ours), parse_rows(&theirs), "{}", dir.display());
        assert_eq!(parse_rows(&ours), report.printed_rows());
        assert!(!parse_rows(&theirs).is_empty());
        // Everything but the numbers is as in Paddle's report.
        let shape = |t: &str| -> Vec<String> {
            t.lines()
                .take_while(|l| !l.starts_with("files:"))
                .map(|l| {
                    l.split_whitespace()
                        .map(|w| {
                            let w = w.trim_end_matches('%');
                            if w.trim_matches(|c| c == '(' || c == ')')
                                .parse::<f64>()
                                .is_ok()
                            {
                                "N"
                            } else {
                                w
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        };
        assert_eq!(shape(&ours), shape(&theirs), "{}", dir.display());
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} sample reports");
}

fn ms(n: f64) -> u64 {
    (n * 1e6) as u64
}

/// One thread's ranges as (name, start ms, end ms), listed in the order they are pushed.
fn thread_of(index: u32, ranges: &[(&'static str, f64, f64)]) -> ThreadEvents {
    let ranges: Vec<(String, u64, u64)> = ranges
        .iter()
        .map(|&(n, a, b)| (n.to_owned(), ms(a), ms(b)))
        .collect();
    ThreadEvents {
        thread: index,
        events: profkit_events::span::events_from_ranges(index, &ranges),
        ..ThreadEvents::default()
    }
}

#[test]
fn single_thread_layout() {
    let recording = Recording {
        threads: vec![thread_of(
            0,
            &[
                ("op", 0.0, 4.0),
                ("op/compute", 1.0, 3.0),
                ("op", 10.0, 12.0),
                ("op/compute", 10.5, 11.0),
                ("other", 20.0, 21.0),
            ],
        )],
        ..Recording::default()
    };
    let text = Report::new(&recording, ReportOptions::default()).text();
    let expected = "
------------------------->     Profiling Report     <-------------------------

Place: CPU
Time unit: ms
Sorted by event first end time in descending order in the same thread

-------------------------     Overhead Summary      -------------------------

Total time: 7
  Computation time       Total: 2.5         Ratio: 35.7143%
  Framework overhead     Total: 4.5         Ratio: 64.2857%

-------------------------     GpuMemCpy Summary     -------------------------

GpuMemcpy                Calls: 0           Total: 0           Ratio: 0%

-------------------------       Event Summary       -------------------------

Event                 Calls       Total       Min.        Max.        Ave.        Ratio.      
thread0::op           2           6           2           4           3           0.857143    
  compute             2           2.5         0.5         2           1.25        0.357143    
thread0::other        1           1           1           1           1           0.142857    

------------------------->    Memory Profiling Report     <-------------------------

Event                                                  Alloc Calls       Size(MB)          Free Calls        Size(MB)          

";
    assert_eq!(text, expected);
}

#[test]
fn two_threads_get_a_merged_section_and_newest_first() {
    let recording = Recording {
        threads: vec![
            thread_of(0, &[("run", 0.0, 10.0), ("run/step", 1.0, 9.0)]),
            thread_of(3, &[("op", 2.0, 3.0), ("op", 4.0, 6.0)]),
        ],
        ..Recording::default()
    };
    let report = Report::new(&recording, ReportOptions::default());
    let text = report.text();
    assert_eq!(report.sections.len(), 2);
    assert!(report.sections[0].merged && report.sections[0].overhead.is_some());
    assert!(
        report.sections[1].overhead.is_none(),
        "no overhead per thread"
    );
    let rows: Vec<String> = parse_rows(&text).iter().map(|r| r.to_string()).collect();
    assert_eq!(
        rows,
        [
            "[merged] op x2",
            "[merged] run x1",
            "[merged]   step x1",
            "thread3::op x2",
            "thread0::run x1",
            "  step x1"
        ]
    );
    assert!(text.contains("Note! This Report merge all thread info into one.\nPlace: CPU"));
    // The per-thread section has no overhead block: the header is followed by two blank lines.
    assert!(text.contains(
        "in descending order in the same thread\n\n\n-------------------------       Event Summary"
    ));
    // Each thread's ratios are over that thread's total.
    let thread3 = &report.sections[1].tables[0];
    assert_eq!((thread3.thread, thread3.total), (Some(3), 3.0));
    assert_eq!(thread3.rows[0].ratio, 1.0);
}

#[test]
fn sorting_applies_among_siblings_and_ties_fall_as_in_libstdcxx() {
    // 20 top-level rows with calls 3,1,2,3,1,2,...: libstdc++'s std::sort moves the ties.
    let keys = [3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1];
    let names: Vec<&'static str> = (0..20)
        .map(|i| &*Box::leak(format!("r{i:02}").into_boxed_str()))
        .collect();
    let mut ranges = Vec::new();
    let mut t = 0.0;
    for (i, &calls) in keys.iter().enumerate() {
        for _ in 0..calls {
            ranges.push((names[i], t, t + 1.0));
            t += 2.0;
        }
    }
    // Children of r00 in the order of their first end: c1 (1 call), c2 (2 calls).
    ranges.push(("r00/c1", 0.1, 0.2));
    ranges.push(("r00/c2", 0.3, 0.4));
    ranges.push(("r00/c2", 2.3, 2.4));
    ranges.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap());
    let recording = Recording {
        threads: vec![thread_of(0, &ranges)],
        ..Recording::default()
    };
    let options = ReportOptions {
        sort: SortKey::Calls,
        ..ReportOptions::default()
    };
    let rows = Report::new(&recording, options).printed_rows();
    let order: Vec<String> = rows
        .iter()
        .map(|r| r.name.replace("thread0::", ""))
        .collect();
    let expected_top = [
        3, 18, 6, 9, 0, 12, 15, 2, 5, 17, 8, 11, 14, 10, 19, 16, 13, 7, 4, 1,
    ];
    let mut expected = Vec::new();
    for i in expected_top {
        expected.push(format!("r{i:02}"));
        if i == 0 {
            expected.push("c2".into());
            expected.push("c1".into());
        }
    }
    assert_eq!(order, expected);
}

#[test]
fn all_mode_shows_cpu_and_gpu_columns() {
    let mut t = ThreadEvents::new(0);
    t.events = vec![
        Event::push("k", 0, 0).with_device(0, 0),
        Event::pop("k", 0, 3_000_000).with_device(0, 1_000_000),
    ];
    let recording = Recording {
        threads: vec![t],
        ..Recording::default()
    };
    let all = Report::new(
        &recording,
        ReportOptions {
            place: Some(Place::All),
            ..ReportOptions::default()
        },
    );
    let text = all.text();
    assert!(text.contains(
        "Event             Calls       Total       CPU Time (Ratio)        GPU Time (Ratio)        Min."
    ), "{text}");
    assert!(text.contains(
        "thread0::k        1           4           3.000000 (0.750000)     1.000000 (0.250000)     4 "
    ), "{text}");
    let cuda = Report::new(
        &recording,
        ReportOptions {
            place: Some(Place::Cuda),
            ..ReportOptions::default()
        },
    );
    assert_eq!(cuda.sections[0].tables[0].rows[0].total, 1.0);
    assert!(cuda.text().contains("Place: CUDA"));
}

#[test]
fn memory_rows_by_place_and_range() {
    let record = |place, alloc_in: &str, free_in: &str, end_ns| MemoryRecord {
        start_ns: 1,
        end_ns,
        bytes: 1 << 20,
        place,
        device: 0,
        thread: 0,
        alloc_in: alloc_in.into(),
        free_in: free_in.into(),
    };
    let recording = Recording {
        memory: vec![
            record(MemPlace::Cuda, "matmul", "relu", 5),
            record(MemPlace::Cpu, "matmul", "matmul", 5),
            record(MemPlace::Cpu, "matmul", "", 0),
        ],
        ..Recording::default()
    };
    let report = Report::new(&recording, ReportOptions::default());
    let text = report.text();
    let tail = text.split("Memory Profiling Report").nth(1).unwrap();
    let lines: Vec<&str> = tail.lines().filter(|l| l.starts_with("Place(")).collect();
    assert_eq!(
        lines,
        [
            "Place(cpu):matmul                                      2                 2                 1                 1                 ",
            "Place(gpu:0):matmul                                    1                 1                 0                 0                 ",
            "Place(gpu:0):relu                                      0                 0                 1                 1                 ",
        ]
    );
}

#[test]
fn an_empty_recording_still_prints_the_blocks() {
    let text = Report::new(&Recording::default(), ReportOptions::default()).text();
    assert!(text.contains("Event Summary"));
    assert!(text.contains("Memory Profiling Report"));
    assert!(parse_rows(&text).is_empty());
}

#[test]
fn deep_nesting_is_cut_at_the_limit() {
    let depth = 300;
    let mut t = ThreadEvents::new(0);
    for i in 0..depth {
        t.events.push(Event::push("d", 0, i));
    }
    for i in 0..depth {
        t.events.push(Event::pop("d", 0, depth + i));
    }
    let recording = Recording {
        threads: vec![t],
        ..Recording::default()
    };
    let report = Report::new(&recording, ReportOptions::default());
    assert_eq!(report.printed_rows().len(), 101);
    assert_eq!(report.hidden_rows, 199);
}

#[test]
fn numbers_print_as_cpp_streams_print_them() {
    assert_eq!(format_g(0.000893571), "0.000893571");
    assert_eq!(format_g(8.363_59e-5), "8.36359e-05");
    assert_eq!(format_g(19.030384), "19.0304");
    assert_eq!(format_f(0.242563), "0.242563");
}

#[test]
fn the_json_form_holds_the_same_rows() {
    let bytes = std::fs::read(case("dygraph-cpu-total").join("input.pb")).unwrap();
    let recording = legacy::to_recording(&legacy::decode_profile(&bytes).unwrap());
    let report = Report::new(&recording, ReportOptions::default());
    let json: serde_json::Value = serde_json::to_value(&report).unwrap();
    let table = &json["sections"][0]["tables"][0];
    assert_eq!(table["thread"], 0);
    assert_eq!(table["rows"].as_array().unwrap().len(), 4);
    assert_eq!(
        table["rows"][0]["children"][0]["path"],
        "transpose pybind_imperative_func/transpose dygraph"
    );
    assert_eq!(json["place"], "CPU");
    assert_eq!(json["sorted_by"], "default");
}

#[test]
fn no_device_time_gives_ratios_of_zero_not_nan() {
    // A CPU-only recording reported for the device: every time is 0, and 0 / 0 is no ratio.
    let recording = Recording {
        threads: vec![thread_of(0, &[("step", 0.0, 4.0), ("op", 1.0, 2.0)])],
        ..Recording::default()
    };
    for place in [Place::Cuda, Place::All] {
        let report = Report::new(
            &recording,
            ReportOptions {
                place: Some(place),
                ..ReportOptions::default()
            },
        );
        let text = report.text();
        assert!(!text.contains("nan"), "{place:?}: {text}");
        if place == Place::Cuda {
            assert!(text.contains("Ratio: 0%"), "{text}");
        }
        let json = serde_json::to_string(&report).unwrap();
        assert!(!json.contains("null"), "{place:?}: {json}");
    }
}

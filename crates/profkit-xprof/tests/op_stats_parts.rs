//! A tool's OpStats built of only the parts it shows (`op_stats::Parts::for_tool`, read with
//! `read_space_for`) gives that tool the same output, notes included, as the whole OpStats, on
//! every XSpace case of `conformance/` (synthetic, real TensorFlow and JAX, the real GPU, ROCm and
//! TPU profiles).

use std::io::Read;
use std::path::{Path, PathBuf};

use profkit_xprof::op_stats::{self, OpStatsBuild, Parts};
use profkit_xprof::tools::{
    framework_op_stats, hlo_stats, input_pipeline, kernel_stats, lacking, op_profile,
    overview_page, pod_viewer, roofline_model,
};

/// Every case's XSpace bytes, by case name.
fn cases() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
    let mut out = Vec::new();
    for (dir, file) in [
        ("xplane", "input.xplane.pb"),
        ("xplane-device", "input.xplane.pb.gz"),
    ] {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join(file).exists())
            .collect();
        dirs.sort();
        for case in dirs {
            let raw = std::fs::read(case.join(file)).unwrap();
            let bytes = if file.ends_with(".gz") {
                let mut out = Vec::new();
                profkit_gzip::GzipReader::new(raw.as_slice(), profkit_gzip::Options::default())
                    .read_to_end(&mut out)
                    .unwrap();
                out
            } else {
                raw
            };
            let name = case.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, bytes));
        }
    }
    out
}

/// The tool's output and the notes of what it does not reproduce.
fn render(tool: &str, built: &OpStatsBuild) -> String {
    let stats = &built.op_stats;
    let notes = lacking::not_reproduced(tool, built).join("\n");
    let missing: Vec<&str> = match tool {
        "framework_op_stats" => built.missing_op_metrics().collect(),
        "overview_page" | "input_pipeline_analyzer" | "pod_viewer" => {
            built.missing_pages().collect()
        }
        _ => Vec::new(),
    };
    let json = match tool {
        "framework_op_stats" => framework_op_stats::to_json(stats),
        "kernel_stats" => kernel_stats::to_json(stats),
        "hlo_stats" => hlo_stats::to_json(stats),
        "roofline_model" => roofline_model::to_json(stats),
        "op_profile" => {
            [
                op_profile::Grouping::Program,
                op_profile::Grouping::Category,
                op_profile::Grouping::Provenance,
            ]
            .into_iter()
            .map(|g| op_profile::op_profile_json(stats, g).unwrap_or_else(|e| e.to_string()))
            .collect::<Vec<_>>()
            .join("\n")
                + &op_profile::missing(built).join("\n")
        }
        "overview_page" => overview_page::to_json(stats).unwrap_or_else(|e| e.to_string()),
        "input_pipeline_analyzer" => {
            input_pipeline::to_json(stats).unwrap_or_else(|e| e.to_string())
        }
        _ => pod_viewer::to_json(stats),
    };
    format!("{json}\n{notes}\n{}", missing.join("\n"))
}

#[test]
fn each_tool_of_its_parts_is_the_tool_of_the_whole() {
    let tools = [
        "framework_op_stats",
        "kernel_stats",
        "hlo_stats",
        "roofline_model",
        "op_profile",
        "overview_page",
        "input_pipeline_analyzer",
        "pod_viewer",
    ];
    let mut checked = 0;
    for (name, bytes) in cases() {
        // A damaged case (the reader's errors are tested with the reader).
        let Ok(whole) = op_stats::read_space(bytes.as_slice(), Default::default()) else {
            continue;
        };
        let all = op_stats::build(vec![whole], &["host"]);
        for tool in tools {
            let parts = Parts::for_tool(tool);
            assert_ne!(parts, Parts::ALL, "{tool}");
            let space =
                op_stats::read_space_for(bytes.as_slice(), Default::default(), parts).unwrap();
            let built = op_stats::build_for(vec![space], &["host"], parts);
            assert_eq!(render(tool, &built), render(tool, &all), "{name}: {tool}");
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn kernel_stats_alone_skip_the_host_threads() {
    let parts = Parts::for_tool("kernel_stats");
    assert!(!parts.reads_plane("/host:CPU"));
    assert!(parts.reads_plane("/device:GPU:0"));
    assert!(parts.reads_plane("/host:metadata"));
    assert!(Parts::for_tool("hlo_stats").reads_plane("/host:CPU"));
    assert!(!Parts::ALL.reads_plane("Task Environment"));
    assert_eq!(Parts::for_tool("memory_profile"), Parts::ALL);
}

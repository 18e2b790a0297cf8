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

/// Read from an input that can be read again (`read_seekable_for`: the host threads' plane let go
/// of while grouping, read again after), every tool is what it is from the same space read once,
/// wherever the space starts in its input.
#[test]
fn read_again_each_tool_is_the_same() {
    let tools = [
        "framework_op_stats",
        "overview_page",
        "input_pipeline_analyzer",
        "hlo_stats",
        "pod_viewer",
    ];
    let mut checked = 0;
    for (name, bytes) in cases() {
        if op_stats::read_space(bytes.as_slice(), Default::default()).is_err() {
            continue;
        }
        for tool in tools {
            let parts = Parts::for_tool(tool);
            let once =
                op_stats::read_space_for(bytes.as_slice(), Default::default(), parts).unwrap();
            let expected = render(tool, &op_stats::build_for(vec![once], &["host"], parts));
            // Seven bytes before the space: offsets are from where the reader starts.
            let mut input = std::io::Cursor::new([b"prefix!".as_slice(), &bytes].concat());
            input.set_position(7);
            let again = op_stats::read_seekable_for(&mut input, Default::default(), parts).unwrap();
            let got = render(tool, &op_stats::build_for(vec![again], &["host"], parts));
            assert_eq!(got, expected, "{name}: {tool}");
            // Gzipped, its bytes are kept (their offsets are in the decompressed stream).
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, &bytes).unwrap();
            let gzipped = std::io::Cursor::new(gz.finish().unwrap());
            let again = op_stats::read_seekable_for(gzipped, Default::default(), parts).unwrap();
            let got = render(tool, &op_stats::build_for(vec![again], &["host"], parts));
            assert_eq!(got, expected, "{name}: {tool}, gzipped");
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}

/// An input whose bytes change once it is read again from a place past its start (as a file
/// rewritten while a command reads it).
struct Changing {
    first: std::io::Cursor<Vec<u8>>,
    then: Vec<u8>,
}

impl Read for Changing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.first.read(buf)
    }
}

impl std::io::Seek for Changing {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        // Back to the start (after a look at its first bytes) is not yet a read again.
        if matches!(to, std::io::SeekFrom::Start(n) if n > 0) && !self.then.is_empty() {
            let at = self.first.position();
            self.first = std::io::Cursor::new(std::mem::take(&mut self.then));
            self.first.set_position(at);
        }
        self.first.seek(to)
    }
}

#[test]
fn a_plane_that_changed_when_read_again_is_an_error() {
    let (name, bytes) = cases()
        .into_iter()
        .find(|(name, _)| name == "real-tf-fit")
        .expect("the real Keras fit case");
    let parts = Parts::for_tool("framework_op_stats");
    // A byte changed, through the space until one that is read again (the host threads' plane's
    // lines: most of a TensorFlow profile's bytes) is; a byte that is not read again (another
    // plane's, or the host plane's metadata, decoded once) changes nothing.
    let once = op_stats::read_seekable_for(
        std::io::Cursor::new(bytes.clone()),
        Default::default(),
        parts,
    )
    .map(|s| op_stats::build_for(vec![s], &["h"], parts).op_stats)
    .unwrap();
    let mut found = false;
    for at in (0..bytes.len()).rev().step_by(bytes.len() / 60 + 1) {
        let mut then = bytes.clone();
        if let Some(b) = then.get_mut(at) {
            *b ^= 0x01;
        }
        let input = Changing {
            first: std::io::Cursor::new(bytes.clone()),
            then,
        };
        match op_stats::read_seekable_for(input, Default::default(), parts) {
            Err(e) => {
                let text = e.to_string();
                assert!(text.contains("changed"), "{name}: {text}");
                found = true;
                break;
            }
            Ok(space) => {
                let stats = op_stats::build_for(vec![space], &["h"], parts).op_stats;
                assert_eq!(
                    stats, once,
                    "{name}: byte {at} changed the OpStats unnoticed"
                );
            }
        }
    }
    assert!(found, "{name}: no change was noticed");
}

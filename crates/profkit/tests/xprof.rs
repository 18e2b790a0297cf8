//! `profkit xprof`: xprof's tools from the command line, on the real profiles the repository
//! keeps with xprof's own output beside them.

mod common;

use common::{profkit, text};

use std::path::{Path, PathBuf};

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/xplane")
        .join(name)
}

#[test]
fn framework_op_stats_is_xprofs_on_real_profiles() {
    for name in [
        "real-tf-fit",
        "real-tf-fnloop",
        "real-jax-steps",
        "tpu-device",
        "gpu-hlo",
    ] {
        let input = case(name).join("input.xplane.pb");
        let out = profkit(
            &["xprof", "framework_op_stats", input.to_str().unwrap()],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let theirs =
            std::fs::read_to_string(case(name).join("xprof.framework_op_stats.json")).unwrap();
        assert!(out.stdout == theirs.as_bytes(), "{name}: not xprof's bytes");
        assert!(out.stderr.is_empty(), "{name}: {}", text(&out.stderr));
    }
}

fn gunzip(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()),
        &mut out,
    )
    .unwrap();
    out
}

#[test]
fn kernel_stats_and_tensor_core_use_are_xprofs_on_real_gpus() {
    // NVIDIA (TensorFlow) and AMD (JAX on ROCm, whose matrix-core kernels count as xprof counts
    // them towards the convolution's TensorCore utilisation).
    for name in ["gpu", "rocm1"] {
        let dir = case("../xplane-device").join(name);
        let input = dir.join("input.xplane.pb.gz");
        for tool in ["kernel_stats", "framework_op_stats"] {
            let out = profkit(&["xprof", tool, input.to_str().unwrap()], None);
            assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
            let theirs = gunzip(&dir.join(format!("xprof.{tool}.json.gz")));
            assert!(out.stdout == theirs, "{name} {tool}: not xprof's bytes");
            assert!(out.stderr.is_empty(), "{name}: {}", text(&out.stderr));
        }
    }
}

#[test]
fn what_is_not_reproduced_is_named() {
    // JAX on ROCm: the GPU HLO ops' expressions, source stacks and HBM reads and writes are
    // built, so hlo_stats is xprof's bytes with nothing named.
    let dir = case("../xplane-device/rocm1");
    let input = dir.join("input.xplane.pb.gz");
    let out = profkit(&["xprof", "hlo_stats", input.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    assert!(out.stdout == gunzip(&dir.join("xprof.hlo_stats.json.gz")));
    // SparseCore step info is not built: the roofline model's step records say so.
    let input = case("tpu-ungrouped").join("input.xplane.pb");
    let out = profkit(&["xprof", "roofline_model", input.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr)
            .contains("not reproduced: steps database (the SparseCore cores' step info)"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn text_tables_list_and_errors() {
    let input = case("real-tf-fit").join("input.xplane.pb");
    let input = input.to_str().unwrap();
    let out = profkit(
        &[
            "xprof",
            "framework_op_stats",
            input,
            "--text",
            "--rows",
            "5",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines[0], "Framework op stats (including idle time)");
    assert!(
        lines[1].starts_with("Rank  Host/device  Type"),
        "{}",
        lines[1]
    );
    assert!(lines[2].contains("IDLE"), "{shown}");
    assert_eq!(lines.len(), 2 + 5 + 1, "{shown}");
    assert!(lines[7].starts_with("... 239 more ops"), "{shown}");

    let out = profkit(&["xprof", "--list", input], None);
    assert_eq!(out.status.code(), Some(0));
    let listed = std::fs::read_to_string(case("real-tf-fit").join("tools.json")).unwrap();
    let ours: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let theirs: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(ours, theirs);

    let out = profkit(&["xprof", "graph_viewer", input], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("does not compute `graph_viewer` yet"));
    let out = profkit(&["xprof", "no_such_tool", input], None);
    assert_eq!(out.status.code(), Some(2));
    let bad = case("error-truncated").join("input.xplane.pb");
    let out = profkit(
        &["xprof", "framework_op_stats", bad.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("byte"), "{}", text(&out.stderr));
}

#[test]
fn memory_profile_is_xprofs() {
    // A case whose output xprof keeps the same from run to run (one allocator, no merged
    // allocations at the peak): xprof's bytes.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/xprof-tools/memory_profile/unmatched-deallocations");
    let input = dir.join("input.xplane.pb");
    let out = profkit(&["xprof", "memory_profile", input.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let theirs = std::fs::read(dir.join("xprof.memory_profile.json")).unwrap();
    assert!(
        out.stdout == theirs,
        "not xprof's bytes: {}",
        text(&out.stdout)
    );
    let two = [input.to_str().unwrap(), input.to_str().unwrap()];
    let out = profkit(&["xprof", "memory_profile", two[0], two[1]], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn op_stats_file_is_the_op_stats_of_the_tools() {
    let dir = std::env::temp_dir().join(format!("profkit-op-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = case("real-tf-fnloop").join("input.xplane.pb");
    // The name xprof caches it under gives the format.
    let out = dir.join("ALL_HOSTS.op_stats_v2.pb");
    let run = profkit(
        &["convert", input.to_str().unwrap(), out.to_str().unwrap()],
        None,
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let stats = profkit_xprof::op_stats::decode(&std::fs::read(&out).unwrap()).unwrap();
    let host = stats.host_op_metrics_db.unwrap();
    assert_eq!(host.metrics_db.len(), 47);
    let env = stats.run_environment.unwrap();
    assert_eq!((env.device_type.as_str(), env.host_count), ("CPU", 1));
    assert!(env.hostnames.contains_key("input"), "{:?}", env.hostnames);
    let given = dir.join("named.op_stats_v2.pb");
    let run = profkit(
        &[
            "convert",
            input.to_str().unwrap(),
            given.to_str().unwrap(),
            "--host",
            "worker-0",
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let stats = profkit_xprof::op_stats::decode(&std::fs::read(&given).unwrap()).unwrap();
    assert!(
        stats
            .run_environment
            .unwrap()
            .hostnames
            .contains_key("worker-0")
    );
    let run = profkit(
        &[
            "convert",
            "--from",
            "op-stats",
            input.to_str().unwrap(),
            "x.json",
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_of_an_xspace_is_xprofs_tf_stats() {
    let input = case("real-tf-fit").join("input.xplane.pb");
    let input = input.to_str().unwrap();
    let out = profkit(&["report", input], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.starts_with("Framework op stats (including idle time)\n"),
        "{shown}"
    );
    assert!(
        shown.contains("--style paddle for Paddle's tables"),
        "{shown}"
    );
    let out = profkit(&["report", input, "--json"], None);
    let theirs =
        std::fs::read_to_string(case("real-tf-fit").join("xprof.framework_op_stats.json")).unwrap();
    assert_eq!(text(&out.stdout).trim_end(), theirs);
    // Paddle's tables: asked for, or implied by one of their options.
    for args in [&["--style", "paddle"][..], &["--sorted-by", "self"]] {
        let mut all = vec!["report", input];
        all.extend_from_slice(args);
        let out = profkit(&all, None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("Overview Summary"), "{args:?}");
    }
    let out = profkit(&["report", input, "--style", "xprof", "--thread-sep"], None);
    assert_eq!(out.status.code(), Some(2));
}

/// The gzipped output xprof rendered from its own OpStats of a case
/// (`conformance/xprof-tools/op_stats/`).
fn saved_op_stats_tool(case: &str, tool: &str) -> Vec<u8> {
    use std::io::Read;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/xprof-tools/op_stats")
        .join(case)
        .join(format!("{tool}.json.gz"));
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut out = Vec::new();
    profkit_gzip::GzipReader::new(file, profkit_gzip::Options::default())
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn op_stats_tools_are_xprofs_without_steps() {
    // real-tf-fit has no steps: profkit's OpStats is what these tools read of xprof's.
    let input = case("real-tf-fit").join("input.xplane.pb");
    let input = input.to_str().unwrap();
    for tool in ["overview_page", "input_pipeline_analyzer"] {
        let out = profkit(&["xprof", tool, input], None);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", text(&out.stderr));
        assert!(
            out.stdout == saved_op_stats_tool("real-tf-fit", tool),
            "{tool}: not xprof's bytes"
        );
        assert!(out.stderr.is_empty(), "{tool}: {}", text(&out.stderr));
    }
    let out = profkit(&["xprof", "pod_viewer", input], None);
    let ours: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let theirs: serde_json::Value =
        serde_json::from_slice(&saved_op_stats_tool("real-tf-fit", "pod_viewer")).unwrap();
    assert_eq!(ours, theirs);
    let out = profkit(
        &["xprof", "overview_page", input, "--text", "--rows", "3"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("Recommendation\n  all_other_bottleneck: no\n  bottleneck: unknown\n"),
        "{shown}"
    );
    assert!(
        shown.contains("... 4 more rows (--rows N shows more)"),
        "{shown}"
    );
    let out = profkit(&["xprof", "pod_viewer", input, "--text"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("Steps by core (microseconds)\n  device_type: CPU\n"));
}

#[test]
fn a_profile_with_steps_is_xprofs() {
    // Real TensorFlow steps: the tools rendered from OpStats' steps database, nothing named.
    let input = case("real-tf-fnloop").join("input.xplane.pb");
    for tool in ["overview_page", "input_pipeline_analyzer", "pod_viewer"] {
        let out = profkit(&["xprof", tool, input.to_str().unwrap()], None);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", text(&out.stderr));
        assert!(out.stderr.is_empty(), "{tool}: {}", text(&out.stderr));
    }
}

#[test]
fn op_profile_is_xprofs_for_each_grouping() {
    for name in [
        "real-jax-plain",
        "tpu-sparse-core",
        "gpu-derived",
        "tpu-fusions",
    ] {
        let input = case(name).join("input.xplane.pb");
        for (group_by, file) in [
            (None, "xprof.op_profile.json"),
            (Some("category"), "xprof.op_profile.category.json"),
            (Some("provenance"), "xprof.op_profile.provenance.json"),
        ] {
            let mut args = vec!["xprof", "op_profile", input.to_str().unwrap()];
            if let Some(g) = group_by {
                args.extend(["--group-by", g]);
            }
            let out = profkit(&args, None);
            assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
            let theirs = std::fs::read_to_string(case(name).join(file)).unwrap();
            assert!(
                out.stdout == theirs.as_bytes(),
                "{name} {file}: not xprof's bytes"
            );
            assert!(out.stderr.is_empty(), "{name}: {}", text(&out.stderr));
        }
    }
    // The real TPU profile's fused instructions are built: nothing is named.
    let input = case("../xplane-device/tpu").join("input.xplane.pb.gz");
    let out = profkit(&["xprof", "op_profile", input.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let other = case("real-jax-plain").join("input.xplane.pb");
    let out = profkit(
        &[
            "xprof",
            "framework_op_stats",
            other.to_str().unwrap(),
            "--group-by",
            "category",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn memory_viewer_is_xprofs_per_module_and_space() {
    let input = case("../xplane-device/tpu/input.xplane.pb.gz");
    let input = input.to_str().unwrap();
    let out = profkit(&["xprof", "memory_viewer", input, "--list-modules"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let modules = text(&out.stdout);
    assert_eq!(modules.lines().count(), 4, "{modules}");
    let dir = case("../xplane-device/tpu/xprof.memory_viewer");
    for (module, space, file) in [
        (
            "jit_f(12190760917235803885)",
            "0",
            "jit_f(12190760917235803885).json.gz",
        ),
        (
            "jit_f(12190760917235803885)",
            "5",
            "jit_f(12190760917235803885).space5.json.gz",
        ),
        (
            "jit__psum(9646411105960254074)",
            "1",
            "jit__psum(9646411105960254074).space1.json.gz",
        ),
    ] {
        assert!(modules.contains(module), "{modules}");
        let out = profkit(
            &[
                "xprof",
                "memory_viewer",
                input,
                "--module",
                module,
                "--memory-space",
                space,
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
        let ours: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let theirs: serde_json::Value = serde_json::from_slice(&gunzip(&dir.join(file))).unwrap();
        assert_eq!(ours, theirs, "{module} space {space}");
    }
    let out = profkit(
        &[
            "xprof",
            "memory_viewer",
            input,
            "--module",
            "jit_f(12190760917235803885)",
            "--text",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("peak heap 20480.000 MiB"), "{shown}");
    assert!(
        shown.contains("f32[5,1024,1024,256]{3,2,1,0:T(8,128)}\tcopy-start{0}"),
        "{shown}"
    );
    // Without a module: the modules are named, exit 2; options of another tool are refused.
    let out = profkit(&["xprof", "memory_viewer", input], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("jit__psum(9646411105960254074)"));
    let out = profkit(
        &["xprof", "memory_viewer", input, "--module", "nope(1)"],
        None,
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("no module \"nope(1)\""),
        "{}",
        text(&out.stderr)
    );
    let out = profkit(&["xprof", "hlo_stats", input, "--module", "x"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn roofline_and_op_profile_text_of_the_device_cases() {
    // `--text` of the two page tools on the real GPU, ROCm and TPU profiles, against the goldens
    // beside each case (`text.<tool>.txt`; `BLESS=1` rewrites them, to be reviewed as a diff).
    let bless = std::env::var_os("BLESS").is_some();
    for name in ["gpu", "rocm1", "tpu"] {
        let dir = case("../xplane-device").join(name);
        let input = dir.join("input.xplane.pb.gz");
        for (tool, extra) in [
            ("roofline_model", &["--rows", "8"][..]),
            ("op_profile", &["--rows", "5"][..]),
        ] {
            let mut args = vec!["xprof", tool, input.to_str().unwrap(), "--text"];
            args.extend(extra);
            let out = profkit(&args, None);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name} {tool}: {}",
                text(&out.stderr)
            );
            let golden = dir.join(format!("text.{tool}.txt"));
            if bless {
                std::fs::write(&golden, &out.stdout).unwrap();
            }
            let want = std::fs::read_to_string(&golden)
                .unwrap_or_else(|e| panic!("{}: {e} (BLESS=1 writes it)", golden.display()));
            assert_eq!(text(&out.stdout), want, "{name} {tool}: not the golden");
        }
    }
    // The depth is the tree's, and only op_profile's --text has one.
    let input = case("../xplane-device").join("tpu/input.xplane.pb.gz");
    let input = input.to_str().unwrap();
    let shallow = profkit(
        &["xprof", "op_profile", input, "--text", "--depth", "1"],
        None,
    );
    assert_eq!(shallow.status.code(), Some(0), "{}", text(&shallow.stderr));
    let lines: Vec<String> = text(&shallow.stdout).lines().map(str::to_owned).collect();
    // Title, header, the root and its programs.
    assert!(lines.len() > 3, "{lines:?}");
    assert!(lines[2].ends_with("by_program"), "{lines:?}");
    let category = profkit(
        &[
            "xprof",
            "op_profile",
            input,
            "--text",
            "--depth",
            "1",
            "--group-by",
            "category",
        ],
        None,
    );
    assert!(text(&category.stdout).starts_with("Op profile by category of TPU"));
    for args in [
        &["xprof", "hlo_stats", input, "--text", "--depth", "2"][..],
        &["xprof", "op_profile", input, "--depth", "2"][..],
    ] {
        let out = profkit(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains("--depth"),
            "{}",
            text(&out.stderr)
        );
    }
}

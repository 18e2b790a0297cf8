//! The `profkit` binary on Poplar profiles: detection, outputs and exit codes.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn profkit(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_profkit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut pipe = child.stdin.take().unwrap();
        if let Some(bytes) = stdin {
            pipe.write_all(bytes).unwrap();
        }
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn case(name: &str, file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/poplar")
        .join(name)
        .join(file)
        .display()
        .to_string()
}

#[test]
fn inspect_a_graph_profile() {
    let out = profkit(&["inspect", &case("graph-complete", "input.json")], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for expected in [
        "Poplar graph profile",
        "target: IPU_MODEL, 2 IPUs x 4 tiles = 8 tiles, 65536 bytes per tile",
        "graph: 16 vertices, 24 edges, 111 variables, 3 compute sets, 3 vertex types",
        "exchanges: 2 internal, 1 external, 1 host",
        "memory: 241000 bytes needed (215656 of data + 25344 of gaps)",
        "fullest tile: 5 (IPU 1), 70000 bytes, 106.8% of 65536",
        "1 tile is over 65536 bytes, by 4464 bytes in all:",
        "tile 5 (IPU 1): 70000 bytes, 4464 over",
        "IPU 1: 129000 bytes, fullest tile 5 (70000 bytes), 1 overflowing",
        "variable",
        "peak liveness: 200000 bytes (always live 134000 + not always live at most 66000)",
        "programs: 17 (",
        "[0] Sequence",
        "[10] OnTileExecute \"layer1/add/Add\" (compute set 1)",
        "[4] OnTileExecute \"layer1/conv\" (compute set 0) (shown above)",
        "[6] Call \"call/fn\" -> function 0",
        "function 0:",
    ] {
        assert!(s.contains(expected), "missing {expected:?} in:\n{s}");
    }
}

#[test]
fn inspect_an_execution_profile_with_its_graph() {
    let input = case("execution-ipu-model", "input.json");
    let graph = case("execution-ipu-model", "graph.json");
    let out = profkit(&["inspect", &input, "--graph", &graph], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for expected in [
        "Poplar execution profile",
        "execution profile: IPU_MODEL, a program trace of 1 program",
        "simulation: 1820 cycles (1368.4 ns), 11 steps",
        "agrees",
        "tile balance recomputed from per-tile cycles for 9 steps: 9 agree",
        "OnTileExecute",
        "layer1/conv/Convolve",
    ] {
        assert!(s.contains(expected), "missing {expected:?} in:\n{s}");
    }
    assert!(!s.contains("DIFFERS"), "{s}");

    // Without the graph profile: cycles, no times.
    let out = profkit(&["inspect", &input], None);
    let s = text(&out.stdout);
    assert!(s.contains("simulation: 1820 cycles, 11 steps"), "{s}");
}

#[test]
fn inspect_json_is_stable() {
    let input = case("execution-compute-sets", "input.json");
    let graph = case("execution-compute-sets", "graph.json");
    let out = profkit(&["inspect", "--json", &input, "--graph", &graph], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["format"], "poplar");
    assert_eq!(doc["shape"], "execution");
    assert_eq!(doc["problems"]["errors"], 0);
    let timeline = &doc["analysis"]["execution_profile"]["timeline"];
    assert_eq!(timeline["cycles"], 750);
    assert_eq!(timeline["totals"][0]["activity"], "compute");
    assert_eq!(timeline["totals"][0]["agrees"], true);
    assert_eq!(timeline["balance"]["steps_agreeing"], 2);
    assert_eq!(
        timeline["balance"]["steps"][0]["source"],
        "computeSetCyclesByTile"
    );

    let out = profkit(
        &["inspect", "--json", &case("graph-complete", "input.json")],
        None,
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let memory = &doc["analysis"]["graph_profile"]["memory"];
    assert_eq!(memory["overflowing_tiles"][0]["over_by"], 4464);
    assert_eq!(memory["liveness"]["peak_bytes"], 200000);
    assert_eq!(memory["categories"][0]["name"], "variable");
    // Per-tile arrays stay on one line.
    assert!(
        text(&out.stdout)
            .contains("\"headroom\": [29536, 32536, 43036, 45036, 28536, -4464, 53536, 55536]")
    );
}

#[test]
fn dump_writes_the_typed_model_back() {
    let input = case("unknown-tags", "input.json");
    let out = profkit(&["dump", &input], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dumped: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&input).unwrap()).unwrap();
    assert_eq!(dumped, original);
    assert!(text(&out.stdout).contains("\"type\": \"FutureProgram\""));
}

#[test]
fn dump_and_inspect_read_standard_input() {
    let out = profkit(&["dump", "-"], Some(br#"{"profilerMode":"NONE"}"#));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\n  \"profilerMode\": \"NONE\"\n}\n");
    let out = profkit(&["inspect", "-"], Some(br#"{"profilerMode":"CPU"}"#));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("<stdin>: Poplar execution profile"));
}

#[test]
fn validate_reports_every_problem_with_its_path() {
    let out = profkit(&["validate", &case("invalid-indices", "input.json")], None);
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    for expected in [
        "error: computeSets.vertexTypes[0][0]: vertex type 5 is out of range (there are 2)",
        "error: programs[0].children[4]: program 8 is out of range (there are 7)",
        "error: programs[4].exchange: exchange 0, but the profile has no externalExchanges",
        "error: programs[6].target: function 3 is out of range (functionPrograms has 2)",
    ] {
        assert!(s.contains(expected), "missing {expected:?} in:\n{s}");
    }
    let out = profkit(
        &["validate", "--json", &case("invalid-cycle", "input.json")],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["valid"], false);
    assert_eq!(doc["errors"], 3);
    assert_eq!(doc["problems"][8]["kind"], "program_cycle");
}

#[test]
fn validate_checks_an_execution_profile_against_its_graph() {
    let input = case("invalid-execution-refs", "input.json");
    let out = profkit(&["validate", &input], None);
    // Alone, only what the execution profile says of itself.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(!text(&out.stdout).contains("not in the graph profile"));
    let graph = case("invalid-execution-refs", "graph.json");
    let out = profkit(&["validate", &input, "--graph", &graph], None);
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    assert!(
        s.contains(
            "simulation.steps[0].program: program 99 is not in the graph profile (it has 17)"
        ),
        "{s}"
    );
    // A valid one, with warnings only, exits 0.
    let out = profkit(&["validate", &case("graph-complete", "input.json")], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).ends_with("valid Poplar graph profile\n"));
    let out = profkit(&["validate", &case("doubles", "input.json")], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("valid Poplar graph profile, 4 warnings"));
}

#[test]
fn bad_input_says_what_and_where() {
    for (name, expected) in [
        (
            "error-fraction",
            "at target.numTiles (line 7, column 17, byte 138): expected a non-negative integer, found the fraction 2.5",
        ),
        (
            "error-truncated",
            "truncated JSON: the input ends at hostExchanges",
        ),
        (
            "error-deep-nesting",
            "nesting depth 128 is over the limit of 127",
        ),
    ] {
        let path = case(name, "input.json");
        let out = profkit(&["validate", &path], None);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = text(&out.stderr);
        assert!(err.contains(&path), "{name}: {err}");
        assert!(err.contains(expected), "{name}: {err}");
    }
    // A Chrome trace is not a Poplar profile: detection passes it by, to the Chrome reader.
    let out = profkit(&["inspect", &case("error-not-poplar", "input.json")], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Chrome trace"),
        "{}",
        text(&out.stdout)
    );
    // Named explicitly, the reader says why it is not one.
    let out = profkit(
        &[
            "inspect",
            "--from",
            "poplar",
            &case("error-not-poplar", "input.json"),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not a Poplar profile"));
    // --graph must name a graph profile.
    let out = profkit(
        &[
            "validate",
            &case("execution-ipu-model", "input.json"),
            "--graph",
            &case("execution-vertices", "input.json"),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--graph needs a graph profile"));
}

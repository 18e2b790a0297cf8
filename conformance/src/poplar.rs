//! The `poplar` format: Graphcore Poplar graph and execution profiles (JSON), read with
//! `profkit-poplar`.
//!
//! A case holds `input.json` (a graph profile, an execution profile or a combined profile) and,
//! for an execution profile, the graph profile of the same run as `graph.json`. The outputs are
//! `inspect.json` (the analysis `profkit inspect --json` prints: memory, program tree, timeline,
//! tile balance), `validate.txt` (one line per problem, empty for a valid profile) and
//! `dump.json` (the profile written back from the typed model, as `profkit dump` prints it);
//! `error.txt` instead when the input cannot be read.
//!
//! Asserted rather than recorded, for every input that reads: the dump and the compact writing
//! both read back to the same typed profile; the dump holds exactly the input's JSON (unknown keys
//! and tags included; numbers compared by value, so `12.0` written back as `12` is the same); and
//! reading the input through serde_json's deserializer (the generic path) gives the same profile
//! as the crate's own reader.

use std::path::Path;

use profkit_poplar::{GraphProfile, ProfileFile};
use serde_json::Value;

use crate::{Format, Outputs};

/// The input of every poplar case.
pub const INPUT: &str = "input.json";
/// The graph profile an execution profile is checked against, when the case has one.
pub const GRAPH: &str = "graph.json";

/// The handler for `conformance/poplar/`.
pub struct PoplarFormat;

impl Format for PoplarFormat {
    fn name(&self) -> &'static str {
        "poplar"
    }

    fn output_names(&self) -> &'static [&'static str] {
        &[
            "inspect.json",
            "validate.txt",
            "dump.json",
            "chrome.json",
            "error.txt",
        ]
    }

    fn run(&self, case_dir: &Path) -> Result<Outputs, String> {
        let mut outputs = run_case(case_dir)?;
        if !outputs.contains_key("error.txt") {
            if let Some(chrome) = chrome(case_dir)? {
                outputs.insert("chrome.json".into(), chrome);
            }
        }
        Ok(outputs)
    }
}

/// The profile's simulated run as Chrome trace JSON (through the XSpace), when the case has an
/// execution profile with a simulation and the graph profile for its clock.
fn chrome(case_dir: &Path) -> Result<Option<Vec<u8>>, String> {
    let Ok(file) = read(case_dir, "input.json") else {
        return Ok(None);
    };
    let graph_file = read(case_dir, "graph.json").ok();
    let graph = file
        .graph()
        .or_else(|| graph_file.as_ref().and_then(|g| g.graph()));
    let Some(execution) = file.execution().filter(|e| e.simulation.is_some()) else {
        return Ok(None);
    };
    let Some(graph) = graph else { return Ok(None) };
    let space = profkit_convert::poplar::poplar_to_xspace(Some(execution), Some(graph))
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    // As `profkit convert` writes any input but an XSpace.
    let options = profkit_xprof::trace_viewer::TraceViewerOptions::of_layout(
        profkit_xprof::trace_viewer::Layout::TraceEvent,
    );
    profkit_xprof::trace_viewer::write_space(&space, &mut out, &options)
        .map_err(|e| e.to_string())?;
    Ok(Some(out))
}

fn read(case_dir: &Path, name: &str) -> Result<ProfileFile, profkit_poplar::Error> {
    let file = std::fs::File::open(case_dir.join(name))
        .map_err(|e| profkit_poplar::Error::from(e).in_file(name))?;
    profkit_poplar::from_reader(file).map_err(|e| e.in_file(name))
}

/// Every number as a double, so that `12` and `12.0` compare equal.
fn normalise(value: &Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), normalise(v))).collect())
        }
        other => other.clone(),
    }
}

/// The outputs for one case folder (see the module documentation).
pub fn run_case(case_dir: &Path) -> Result<Outputs, String> {
    let mut outputs = Outputs::new();
    let file = match read(case_dir, INPUT) {
        Ok(file) => file,
        Err(e) => {
            outputs.insert("error.txt".into(), format!("{e}\n").into_bytes());
            return Ok(outputs);
        }
    };
    let graph: Option<GraphProfile> = if case_dir.join(GRAPH).is_file() {
        match read(case_dir, GRAPH).map_err(|e| e.to_string())? {
            ProfileFile::Graph(g) => Some(g),
            other => return Err(format!("{GRAPH} is a {} profile", other.shape())),
        }
    } else {
        None
    };

    let problems = profkit_poplar::validate::validate_with_graph(&file, graph.as_ref());
    let text: String = problems.iter().map(|p| format!("{p}\n")).collect();
    outputs.insert("validate.txt".into(), text.into_bytes());

    let analysis = profkit_poplar::analysis::analyse(&file, graph.as_ref());
    let inspect = profkit_poplar::to_string_pretty(&analysis).map_err(|e| e.to_string())?;
    outputs.insert("inspect.json".into(), format!("{inspect}\n").into_bytes());

    let dump = profkit_poplar::to_string_pretty(&file).map_err(|e| e.to_string())?;
    check_round_trips(case_dir, &file, &dump)?;
    outputs.insert("dump.json".into(), format!("{dump}\n").into_bytes());
    Ok(outputs)
}

fn check_round_trips(case_dir: &Path, file: &ProfileFile, dump: &str) -> Result<(), String> {
    let back: ProfileFile =
        profkit_poplar::from_str(dump).map_err(|e| format!("the dump does not read back: {e}"))?;
    if &back != file {
        return Err("the dump reads back as another profile".into());
    }
    let compact = profkit_poplar::to_string(file).map_err(|e| e.to_string())?;
    let back: ProfileFile = profkit_poplar::from_str(&compact)
        .map_err(|e| format!("the compact writing does not read back: {e}"))?;
    if &back != file {
        return Err("the compact writing reads back as another profile".into());
    }
    let input = std::fs::read(case_dir.join(INPUT)).map_err(|e| e.to_string())?;
    let input_value: Value = serde_json::from_slice(&input).map_err(|e| e.to_string())?;
    let dump_value: Value = serde_json::from_str(dump).map_err(|e| e.to_string())?;
    if normalise(&input_value) != normalise(&dump_value) {
        return Err("the dump does not hold the input's JSON (something was lost or added)".into());
    }
    let generic: ProfileFile = serde_json::from_slice(&input)
        .map_err(|e| format!("serde_json's deserializer refuses the input: {e}"))?;
    if &generic != file {
        return Err("serde_json's deserializer reads the input as another profile".into());
    }
    Ok(())
}

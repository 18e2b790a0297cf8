//! The commands for Graphcore Poplar profiles (JSON): a graph profile, an execution profile, or
//! the combined `{graphProfile, executionProfile}` object. The file is read as it streams in, into
//! the typed model, so memory follows the model (per-tile arrays stored compactly) and not the
//! text. `--graph FILE` names the graph profile an execution profile belongs to (Poplar writes
//! the two to separate files), so that its references, times and balances can be checked.

use std::io::Write;
use std::path::Path;

use profkit_poplar::analysis::{Analysis, MemoryReport, ProgramNode, ProgramTree, Timeline};
use profkit_poplar::{GraphProfile, Problem, ProfileFile, Severity};

use crate::Failure;
use crate::input::Input;

/// Lines of the program tree printed by `inspect` (the JSON has all of it).
const TREE_LINES: usize = 60;
/// Steps of the timeline printed by `inspect`.
const TIMELINE_STEPS: usize = 40;
/// Overflowing tiles listed by `inspect`.
const OVERFLOW_LINES: usize = 10;
/// Memory categories listed by `inspect`.
const CATEGORY_LINES: usize = 10;

fn read(input: Input) -> Result<(String, ProfileFile), Failure> {
    let name = input.name;
    match profkit_poplar::from_reader(input.reader) {
        Ok(file) => Ok((name, file)),
        Err(e) => Err(Failure::BadInput(format!("{name}: {e}"))),
    }
}

/// The graph profile in the file named by `--graph` (a graph profile, or a combined one).
fn read_graph(path: Option<&Path>) -> Result<Option<GraphProfile>, Failure> {
    let Some(path) = path else {
        return Ok(None);
    };
    let file: ProfileFile =
        profkit_poplar::read_file(path).map_err(|e| Failure::BadInput(e.to_string()))?;
    match file {
        ProfileFile::Graph(g) => Ok(Some(g)),
        ProfileFile::Combined(p) if p.graph_profile.is_some() => Ok(p.graph_profile),
        other => Err(Failure::BadInput(format!(
            "{}: --graph needs a graph profile, and this is an {} profile",
            path.display(),
            other.shape()
        ))),
    }
}

/// The `--graph` profile, unless the file has a graph profile of its own (which wins).
fn graph_for(file: &ProfileFile, path: Option<&Path>) -> Result<Option<GraphProfile>, Failure> {
    if file.graph().is_some() {
        if let Some(path) = path {
            crate::session::note(format_args!(
                "ignoring --graph {}: the file holds its own graph profile",
                path.display()
            ));
        }
        return Ok(None);
    }
    read_graph(path)
}

fn json_out(doc: &serde_json::Value) -> Result<(), Failure> {
    if crate::session::keeps_values() {
        return crate::session::json(doc);
    }
    let mut out = std::io::BufWriter::new(crate::session::stdout());
    profkit_poplar::to_writer_pretty(&mut out, doc).map_err(output)?;
    writeln!(out).map_err(Failure::Output)?;
    out.flush().map_err(Failure::Output)
}

fn output(e: profkit_poplar::Error) -> Failure {
    match e {
        profkit_poplar::Error::Io(io) => Failure::Output(io),
        other => Failure::Output(std::io::Error::other(other.to_string())),
    }
}

fn count(problems: &[Problem], severity: Severity) -> usize {
    problems.iter().filter(|p| p.severity == severity).count()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub(crate) fn inspect(input: Input, json: bool, graph: Option<&Path>) -> Result<(), Failure> {
    let (name, file) = read(input)?;
    let graph = graph_for(&file, graph)?;
    let analysis = profkit_poplar::analysis::analyse(&file, graph.as_ref());
    let problems = profkit_poplar::validate_with_graph(&file, graph.as_ref());
    if json {
        let analysis = serde_json::to_value(&analysis)
            .map_err(|e| Failure::Output(std::io::Error::other(e)))?;
        return json_out(&serde_json::json!({
            "file": name,
            "format": "poplar",
            "shape": file.shape().name(),
            "analysis": analysis,
            "problems": {
                "errors": count(&problems, Severity::Error),
                "warnings": count(&problems, Severity::Warning),
            },
        }));
    }
    let mut out = std::io::BufWriter::new(crate::session::stdout());
    write_inspect(&mut out, &name, &analysis, &problems).map_err(Failure::Output)?;
    out.flush().map_err(Failure::Output)
}

fn write_inspect(
    out: &mut impl Write,
    name: &str,
    analysis: &Analysis,
    problems: &[Problem],
) -> std::io::Result<()> {
    writeln!(out, "{name}: Poplar {} profile", analysis.shape)?;
    if let Some(g) = &analysis.graph_profile {
        let t = &g.target;
        writeln!(
            out,
            "target: {}, {} x {} = {}, {} bytes per tile, {} bytes in all, {:.3} GHz",
            t.target_type,
            plural(t.ipus as usize, "IPU", "IPUs"),
            plural(t.tiles_per_ipu as usize, "tile", "tiles"),
            plural(t.tiles as usize, "tile", "tiles"),
            t.bytes_per_tile,
            t.total_memory,
            t.clock_frequency / 1e9
        )?;
        if !g.graph.is_empty() {
            let get = |k: &str| g.graph.get(k).copied().unwrap_or(0);
            writeln!(
                out,
                "graph: {} vertices, {} edges, {} variables, {} compute sets, {} vertex types",
                get("numVertices"),
                get("numEdges"),
                get("numVars"),
                g.compute_sets,
                g.vertex_types
            )?;
        }
        if !g.exchanges.is_empty() {
            let get = |k: &str| g.exchanges.get(k).copied().unwrap_or(0);
            writeln!(
                out,
                "exchanges: {} internal, {} external, {} host",
                get("exchanges"),
                get("externalExchanges"),
                get("hostExchanges")
            )?;
        }
        if let Some(m) = &g.memory {
            write_memory(out, m, t.total_memory)?;
        }
        write_tree(out, &g.programs)?;
    }
    if let Some(e) = &analysis.execution_profile {
        writeln!(
            out,
            "execution profile: {}{}",
            e.profiler_mode,
            e.program_trace
                .map(|n| format!(", a program trace of {}", plural(n, "program", "programs")))
                .unwrap_or_default()
        )?;
        for (key, value) in &e.mode {
            writeln!(out, "  {key}: {value}")?;
        }
        if let Some(t) = &e.timeline {
            write_timeline(out, t)?;
        }
    }
    let (errors, warnings) = (
        count(problems, Severity::Error),
        count(problems, Severity::Warning),
    );
    if errors + warnings > 0 {
        writeln!(
            out,
            "{} and {} (see `profkit validate`)",
            plural(errors, "error", "errors"),
            plural(warnings, "warning", "warnings")
        )?;
    }
    Ok(())
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

fn write_memory(out: &mut impl Write, m: &MemoryReport, total_memory: u64) -> std::io::Result<()> {
    writeln!(
        out,
        "memory: {} bytes needed ({} of data + {} of gaps), {} of the {} bytes of the target",
        m.total_bytes_including_gaps,
        m.total_bytes,
        m.gap_bytes,
        percent(m.total_bytes_including_gaps, total_memory),
        total_memory
    )?;
    if let Some(t) = m.max_tile {
        writeln!(
            out,
            "  fullest tile: {} (IPU {}), {} bytes, {} of {}",
            t.tile,
            t.ipu,
            t.bytes,
            percent(t.bytes, m.bytes_per_tile),
            m.bytes_per_tile
        )?;
    }
    if m.overflowing_tiles.is_empty() {
        writeln!(out, "  every tile fits in {} bytes", m.bytes_per_tile)?;
    } else {
        writeln!(
            out,
            "  {} over {} bytes, by {} bytes in all:",
            plural(m.overflowing_tiles.len(), "tile is", "tiles are"),
            m.bytes_per_tile,
            m.overflow_bytes
        )?;
        for o in m.overflowing_tiles.iter().take(OVERFLOW_LINES) {
            writeln!(
                out,
                "    tile {} (IPU {}): {} bytes, {} over",
                o.tile, o.ipu, o.bytes_including_gaps, o.over_by
            )?;
        }
        if m.overflowing_tiles.len() > OVERFLOW_LINES {
            writeln!(
                out,
                "    ... {} more (see --json)",
                m.overflowing_tiles.len() - OVERFLOW_LINES
            )?;
        }
    }
    if m.ipus.len() > 1 {
        for ipu in &m.ipus {
            writeln!(
                out,
                "  IPU {}: {} bytes{}{}",
                ipu.ipu,
                ipu.bytes_including_gaps,
                ipu.max_tile
                    .map(|t| format!(", fullest tile {} ({} bytes)", t.tile, t.bytes))
                    .unwrap_or_default(),
                if ipu.overflowing_tiles > 0 {
                    format!(", {} overflowing", ipu.overflowing_tiles)
                } else {
                    String::new()
                }
            )?;
        }
    }
    if !m.categories.is_empty() {
        writeln!(out, "  largest categories:")?;
        let width = crate::text::width(
            m.categories
                .iter()
                .take(CATEGORY_LINES)
                .map(|c| c.name.as_str()),
        );
        for c in m.categories.iter().take(CATEGORY_LINES) {
            writeln!(
                out,
                "    {:width$}  {:>12} bytes  {:>5.1}%",
                crate::text::clip(&c.name),
                c.bytes,
                c.share * 100.0,
                width = width
            )?;
        }
    }
    if let Some(l) = &m.liveness {
        writeln!(
            out,
            "  peak liveness: {} bytes (always live {} + not always live at most {}){}",
            l.peak_bytes,
            l.always_live_bytes,
            l.not_always_live_max_bytes,
            l.peak_tile
                .map(|t| format!(", highest on tile {} ({} bytes)", t.tile, t.bytes))
                .unwrap_or_default()
        )?;
    }
    Ok(())
}

fn node_line(node: &ProgramNode) -> String {
    let mut line = format!("[{}] {}", node.program, node.type_name);
    if node.missing {
        line.push_str("(missing: index out of range)");
    }
    if let Some(name) = &node.name {
        line.push_str(&format!(" {:?}", crate::text::clip(name)));
    }
    if let Some(cs) = node.compute_set {
        line.push_str(&format!(" (compute set {cs})"));
    }
    if let Some(ex) = node.exchange {
        line.push_str(&format!(" (exchange {ex})"));
    }
    if let Some(f) = node.calls {
        line.push_str(&format!(" -> function {f}"));
    }
    if node.seen_before {
        line.push_str(" (shown above)");
    }
    if node.cycle {
        line.push_str(" (CYCLE)");
    }
    if node.too_deep {
        line.push_str(" (deeper programs not shown)");
    }
    line
}

fn write_tree(out: &mut impl Write, tree: &ProgramTree) -> std::io::Result<()> {
    if tree.programs == 0 {
        return Ok(());
    }
    let types: Vec<String> = tree
        .by_type
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    writeln!(out, "programs: {} ({})", tree.programs, types.join(", "))?;
    let mut lines = 0usize;
    let mut write = |out: &mut dyn Write, depth: usize, text: String| -> std::io::Result<()> {
        lines += 1;
        if lines <= TREE_LINES {
            writeln!(out, "{:indent$}{text}", "", indent = 2 + depth * 2)?;
        }
        Ok(())
    };
    for root in &tree.control {
        for (depth, node) in root.walk() {
            write(out, depth, node_line(node))?;
        }
    }
    for f in &tree.functions {
        write(out, 0, format!("function {}:", f.function))?;
        for (depth, node) in f.tree.walk() {
            write(out, depth + 1, node_line(node))?;
        }
    }
    if lines > TREE_LINES {
        writeln!(out, "  ... {} more lines (see --json)", lines - TREE_LINES)?;
    }
    Ok(())
}

fn cycles_ns(ns: Option<f64>) -> String {
    ns.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into())
}

fn write_timeline(out: &mut impl Write, t: &Timeline) -> std::io::Result<()> {
    writeln!(
        out,
        "simulation: {} cycles{}, {}",
        t.cycles,
        t.duration_ns
            .map(|ns| format!(" ({ns:.1} ns)"))
            .unwrap_or_default(),
        plural(t.steps.len(), "step", "steps")
    )?;
    if !t.totals.is_empty() {
        writeln!(
            out,
            "  {:<20} {:>6} {:>12} {:>14} {:>14}",
            "tileCycles", "steps", "cycles", "from steps", "in the file"
        )?;
        for total in &t.totals {
            let show = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
            let line = format!(
                "  {:<20} {:>6} {:>12} {:>14} {:>14}  {}",
                total.activity,
                total.steps,
                total.cycles,
                show(total.tile_cycles),
                show(total.file_tile_cycles),
                match total.agrees {
                    Some(true) => "agrees",
                    Some(false) => "DIFFERS",
                    None => "",
                }
            );
            writeln!(out, "{}", line.trim_end())?;
        }
    }
    let b = &t.balance;
    if b.steps_compared > 0 {
        writeln!(
            out,
            "  tile balance recomputed from per-tile cycles for {}: {} agree with the file \
             (largest difference {})",
            plural(b.steps_compared, "step", "steps"),
            b.steps_agreeing,
            if b.max_tile_balance_difference == 0.0 {
                "0".to_owned()
            } else {
                format!("{:.2e}", b.max_tile_balance_difference)
            }
        )?;
    }
    if t.steps.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "  {:>5}  {:<20} {:>7} {:>12} {:>12} {:>12} {:>12}  name",
        "step", "type", "program", "from", "to", "from (ns)", "to (ns)"
    )?;
    for s in t.steps.iter().take(TIMELINE_STEPS) {
        let show = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
        writeln!(
            out,
            "  {:>5}  {:<20} {:>7} {:>12} {:>12} {:>12} {:>12}  {}",
            s.index,
            s.type_name,
            show(s.program.map(u64::from)),
            show(s.start_cycle),
            show(s.end_cycle),
            cycles_ns(s.start_ns),
            cycles_ns(s.end_ns),
            s.name.as_deref().or(s.sync_type.as_deref()).unwrap_or("")
        )?;
    }
    if t.steps.len() > TIMELINE_STEPS {
        writeln!(
            out,
            "  ... {} more steps (see --json)",
            t.steps.len() - TIMELINE_STEPS
        )?;
    }
    Ok(())
}

pub(crate) fn dump(input: Input) -> Result<(), Failure> {
    let (_, file) = read(input)?;
    let mut out = std::io::BufWriter::new(crate::session::stdout());
    profkit_poplar::to_writer_pretty(&mut out, &file).map_err(output)?;
    writeln!(out).map_err(Failure::Output)?;
    out.flush().map_err(Failure::Output)
}

pub(crate) fn validate(
    input: Input,
    json: bool,
    graph: Option<&Path>,
    mut cap: crate::cap::Cap,
) -> Result<(), Failure> {
    let (name, file) = read(input)?;
    let graph = graph_for(&file, graph)?;
    let problems = profkit_poplar::validate_with_graph(&file, graph.as_ref());
    let errors = count(&problems, Severity::Error);
    let warnings = count(&problems, Severity::Warning);
    if json {
        let (listed, not_listed) = cap.json_problems(&problems);
        json_out(&crate::cap::with_not_listed(
            serde_json::json!({
                "file": name,
                "format": "poplar",
                "shape": file.shape().name(),
                "valid": errors == 0,
                "errors": errors,
                "warnings": warnings,
                "problems": listed,
            }),
            not_listed,
        ))?;
    } else {
        let mut out = std::io::BufWriter::new(crate::session::stdout());
        for p in &problems {
            if cap.admit(&format!("{:?}", p.kind)) {
                writeln!(out, "{name}: {p}").map_err(Failure::Output)?;
            }
        }
        for rest in cap.rest() {
            writeln!(out, "{name}: {rest}").map_err(Failure::Output)?;
        }
        if errors == 0 {
            let checked = if graph.is_some() {
                " (checked against --graph)"
            } else {
                ""
            };
            writeln!(
                out,
                "{name}: valid Poplar {} profile{checked}{}",
                file.shape(),
                if warnings > 0 {
                    format!(", {}", plural(warnings, "warning", "warnings"))
                } else {
                    String::new()
                }
            )
            .map_err(Failure::Output)?;
        }
        out.flush().map_err(Failure::Output)?;
    }
    if errors == 0 {
        Ok(())
    } else {
        Err(Failure::Invalid)
    }
}

//! `profkit xprof`: the data xprof's tools show for XSpaces, as xprof 2.24.2's
//! `xspace_to_tool_data` returns it, without xprof.

use std::io::Write;
use std::path::PathBuf;

use profkit_xplane::XSpace;
use profkit_xprof::op_stats::{self, OpStatsBuild, OpStatsSpace, Parts};
use profkit_xprof::tools::framework_op_stats::{self, TfStatsRecord};
use profkit_xprof::tools::op_profile;

use crate::Failure;
use crate::format::Format;
use crate::input::Input;
use crate::output::Output;

/// The tools `profkit xprof` computes, in xprof's order.
pub(crate) const TOOLS: [&str; 11] = [
    "trace_viewer",
    "overview_page",
    "input_pipeline_analyzer",
    "framework_op_stats",
    "memory_profile",
    "pod_viewer",
    "op_profile",
    "hlo_stats",
    "roofline_model",
    "kernel_stats",
    "memory_viewer",
];

/// What `profkit xprof` was asked.
pub(crate) struct XprofArgs {
    pub args: Vec<PathBuf>,
    pub list: bool,
    pub out: Option<PathBuf>,
    pub text: bool,
    pub rows: usize,
    /// op_profile's `group_by` option.
    pub group_by: Option<String>,
    /// memory_viewer's program (`module_name`).
    pub module: Option<String>,
    /// memory_viewer's memory space (`memory_space`).
    pub memory_space: Option<i64>,
    /// memory_viewer: list the programs instead.
    pub list_modules: bool,
    /// op_profile's `--text`: the levels of the tree shown below the root.
    pub depth: Option<usize>,
}

/// The inputs' spaces (every plane when `whole`, else the planes these parts of OpStats read)
/// and hosts.
fn read_spaces(
    paths: &[PathBuf],
    whole: bool,
    parts: Parts,
) -> Result<(Vec<XSpace>, Vec<String>), Failure> {
    read_each(paths, |input| {
        if whole {
            Ok(crate::convert::xspace_whole(input)?.1)
        } else {
            op_stats::read_space_for(input.reader, profkit_xplane::ReadOptions::default(), parts)
                .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))
        }
    })
}

/// The inputs as OpStats reads them (see `profkit_xprof::op_stats::read_for`), and hosts.
fn read_op_stats_spaces(
    paths: &[PathBuf],
    parts: Parts,
) -> Result<(Vec<OpStatsSpace>, Vec<String>), Failure> {
    read_each(paths, |input| read_for(input, parts))
}

/// The planes of an input that these parts of OpStats read, its host threads' plane indexed; a
/// plain file is read so that its bytes can be read again (see `op_stats::read_seekable_for`).
pub(crate) fn read_for(input: Input, parts: Parts) -> Result<OpStatsSpace, Failure> {
    read_for_on(input, parts, true)
}

/// [`read_for`], the host threads' lines grouped on the pool's threads or not (see
/// `op_stats::read_seekable_for_on`).
pub(crate) fn read_for_on(
    input: Input,
    parts: Parts,
    lines_on_pool: bool,
) -> Result<OpStatsSpace, Failure> {
    let options = profkit_xplane::ReadOptions::default();
    let bad = |e: profkit_xplane::Error| Failure::BadInput(format!("{}: {e}", input.name));
    let file = input
        .path
        .as_deref()
        .filter(|_| !input.gzip)
        .filter(|p| p.as_os_str() != "-" && p.is_file())
        .and_then(|p| std::fs::File::open(p).ok());
    match file {
        Some(file) => op_stats::read_seekable_for_on(
            std::io::BufReader::with_capacity(1 << 16, file),
            options,
            parts,
            lines_on_pool,
        )
        .map_err(bad),
        None => op_stats::read_for(input.reader, options, parts).map_err(bad),
    }
}

/// Each input read by `read`, with its host's name.
fn read_each<T>(
    paths: &[PathBuf],
    mut read: impl FnMut(Input) -> Result<T, Failure>,
) -> Result<(Vec<T>, Vec<String>), Failure> {
    let mut spaces = Vec::with_capacity(paths.len());
    let mut hosts = Vec::with_capacity(paths.len());
    for path in paths {
        let input = Input::open(path, Some(Format::Xspace))?;
        hosts.push(crate::hosts::host_of(&input));
        spaces.push(read(input)?);
    }
    Ok((spaces, hosts))
}

pub(crate) fn run(args: XprofArgs) -> Result<(), Failure> {
    let (tool, inputs) = if args.list {
        (None, args.args.as_slice())
    } else {
        let Some((tool, rest)) = args.args.split_first() else {
            return Err(Failure::Usage(
                "xprof: give a tool and at least one XSpace (or --list and XSpaces)".into(),
            ));
        };
        (Some(tool.to_string_lossy().into_owned()), rest)
    };
    if inputs.is_empty() {
        return Err(Failure::Usage("xprof: no XSpace given".into()));
    }
    if let Some(tool) = &tool {
        if !TOOLS.contains(&tool.as_str()) {
            let known = profkit_xprof::tools::ALWAYS
                .iter()
                .chain(["kernel_stats", "memory_viewer", "graph_viewer"].iter())
                .any(|t| t.trim_end_matches('@') == tool.as_str());
            return Err(Failure::Usage(if known {
                format!(
                    "xprof: profkit does not compute `{tool}` yet; it computes: {}",
                    TOOLS.join(", ")
                )
            } else {
                format!(
                    "xprof: no tool `{tool}`; profkit computes: {} (`--list` names the tools xprof offers for a profile)",
                    TOOLS.join(", ")
                )
            }));
        }
    }
    if args.group_by.is_some() && tool.as_deref() != Some("op_profile") {
        return Err(Failure::Usage(
            "xprof: --group-by is an option of the op_profile tool".into(),
        ));
    }
    if (args.module.is_some() || args.memory_space.is_some() || args.list_modules)
        && tool.as_deref() != Some("memory_viewer")
    {
        return Err(Failure::Usage(
            "xprof: --module, --memory-space and --list-modules are options of the memory_viewer tool"
                .into(),
        ));
    }
    if args.depth.is_some() && (tool.as_deref() != Some("op_profile") || !args.text) {
        return Err(Failure::Usage(
            "xprof: --depth is an option of the op_profile tool's --text tree".into(),
        ));
    }
    // The parts of OpStats the tool shows (all of them for the tools not computed from it).
    let parts = tool.as_deref().map_or(Parts::ALL, Parts::for_tool);
    // The tools built from OpStats read the host threads' plane indexed, the others decoded.
    let from_op_stats = tool
        .as_deref()
        .is_some_and(|t| !matches!(t, "trace_viewer" | "memory_profile" | "memory_viewer"));
    let (spaces, mut op_spaces, hosts) = if from_op_stats {
        let (op_spaces, hosts) = read_op_stats_spaces(inputs, parts)?;
        (Vec::new(), op_spaces, hosts)
    } else {
        let (spaces, hosts) = match tool.as_deref() {
            // Its host plane decoded only when it has allocator events.
            Some("memory_profile") => read_each(inputs, |input| {
                op_stats::read_space_decoding(
                    input.reader,
                    profkit_xplane::ReadOptions::default(),
                    parts,
                    profkit_xprof::tools::memory_profile::reads_events,
                )
                .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))
            })?,
            t => read_spaces(inputs, t == Some("trace_viewer"), parts)?,
        };
        (spaces, Vec::new(), hosts)
    };
    // Standard output is the session's (the terminal, or the library API's capture).
    let out = args.out.filter(|o| o.as_os_str() != "-");
    let (output, mut writer): (Option<Output>, Box<dyn Write>) = match &out {
        Some(out) => {
            let (output, writer) = Output::create(out)?;
            (Some(output), writer)
        }
        None => (None, Box::new(crate::session::stdout())),
    };
    let result = (|| -> Result<Vec<String>, Failure> {
        let mut notes = Vec::new();
        match tool.as_deref() {
            None => {
                let names = profkit_xprof::tools::tool_names(&spaces);
                if args.text {
                    for name in names {
                        writeln!(writer, "{name}").map_err(Failure::Output)?;
                    }
                } else {
                    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                    writeln!(writer, "[{}]", quoted.join(", ")).map_err(Failure::Output)?;
                }
            }
            Some("trace_viewer") => {
                let [space] = spaces.as_slice() else {
                    return Err(Failure::Usage(
                        "xprof trace_viewer: one XSpace at a time (merge hosts first)".into(),
                    ));
                };
                profkit_xprof::trace_viewer::write_space(
                    space,
                    &mut writer,
                    &profkit_xprof::trace_viewer::TraceViewerOptions::default(),
                )
                .map_err(|e| Failure::BadInput(e.to_string()))?;
            }
            Some("memory_profile") => {
                if args.text {
                    return Err(Failure::Usage(
                        "xprof memory_profile: no --text table yet; it writes xprof's JSON".into(),
                    ));
                }
                let json = profkit_xprof::tools::memory_profile::memory_profile_json(&spaces)
                    .map_err(|e| Failure::Usage(format!("xprof memory_profile: {e}")))?;
                writer.write_all(json.as_bytes()).map_err(Failure::Output)?;
            }
            Some("memory_viewer") => {
                notes.extend(crate::xprof_memory::run(
                    &spaces,
                    &crate::xprof_memory::Options {
                        module: args.module.as_deref(),
                        memory_space: args.memory_space.unwrap_or(0),
                        list_modules: args.list_modules,
                        text: args.text,
                        rows: args.rows,
                    },
                    &mut writer,
                )?);
            }
            Some(t) if crate::xprof_pages::TOOLS.contains(&t) => {
                notes.extend(crate::xprof_pages::run(
                    t,
                    std::mem::take(&mut op_spaces),
                    &hosts,
                    parts,
                    &mut writer,
                    args.text,
                    args.rows,
                )?);
            }
            Some(tool @ ("kernel_stats" | "hlo_stats" | "roofline_model")) => {
                let host_refs: Vec<&str> = hosts.iter().map(String::as_str).collect();
                let built: OpStatsBuild =
                    op_stats::build_for(std::mem::take(&mut op_spaces), &host_refs, parts);
                notes.extend(crate::xprof_ops::notes(tool, &built));
                if args.text {
                    crate::xprof_ops::write_text(tool, &mut writer, &built, args.rows)?;
                } else {
                    let json = crate::xprof_ops::to_json(tool, &built);
                    writer.write_all(json.as_bytes()).map_err(Failure::Output)?;
                }
            }
            Some("op_profile") => {
                let host_refs: Vec<&str> = hosts.iter().map(String::as_str).collect();
                let built: OpStatsBuild =
                    op_stats::build_for(std::mem::take(&mut op_spaces), &host_refs, parts);
                let group_by = op_profile::Grouping::from_option(
                    args.group_by.as_deref().unwrap_or("program"),
                );
                notes.extend(
                    op_profile::missing(&built)
                        .into_iter()
                        .map(|m| format!("not reproduced: {m}")),
                );
                let profile = op_profile::op_profile(&built.op_stats, group_by)
                    .map_err(|e| Failure::BadInput(format!("xprof op_profile: {e}")))?;
                if args.text {
                    crate::xprof_ops::write_op_profile_text(
                        &mut writer,
                        &profile,
                        args.depth.unwrap_or(3),
                        args.rows,
                    )?;
                } else {
                    let json = op_profile::json::to_json(&profile);
                    writer.write_all(json.as_bytes()).map_err(Failure::Output)?;
                }
            }
            Some(_) => {
                let host_refs: Vec<&str> = hosts.iter().map(String::as_str).collect();
                let built: OpStatsBuild =
                    op_stats::build_for(std::mem::take(&mut op_spaces), &host_refs, parts);
                notes.extend(
                    built
                        .missing_op_metrics()
                        .map(|m| format!("not reproduced: {m}; those device rows are not xprof's")),
                );
                if args.text {
                    write_tf_stats_text(&mut writer, &built, args.rows)?;
                } else {
                    writer
                        .write_all(framework_op_stats::to_json(&built.op_stats).as_bytes())
                        .map_err(Failure::Output)?;
                }
            }
        }
        Ok(notes)
    })();
    drop(writer);
    let notes = match output {
        Some(output) => output.finish(result)?,
        None => result?,
    };
    for note in notes {
        crate::session::warn("xprof", note);
    }
    Ok(())
}

/// `report --style xprof`: the TF Stats table (framework_op_stats) of one XSpace, or its JSON.
pub(crate) fn report(input: Input, json: bool) -> Result<(), Failure> {
    let host = crate::hosts::host_of(&input);
    let parts = Parts::for_tool("framework_op_stats");
    let space = read_for(input, parts)?;
    let built = op_stats::build_for(vec![space], &[host.as_str()], parts);
    let mut out = crate::session::stdout();
    if json {
        let text = framework_op_stats::to_json(&built.op_stats);
        if crate::session::keeps_values() {
            // The library API's document: the same tables as values.
            let doc: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| Failure::Output(std::io::Error::other(e.to_string())))?;
            crate::session::json(&doc)?;
        } else {
            writeln!(out, "{text}").map_err(Failure::Output)?;
        }
    } else {
        write_tf_stats_text(&mut out, &built, 30)?;
        writeln!(
            out,
            "(xprof's framework_op_stats; profkit xprof framework_op_stats --text --rows N for more rows, --style paddle for Paddle's tables)"
        )
        .map_err(Failure::Output)?;
    }
    for missing in built.missing_op_metrics() {
        crate::session::note(format!("not reproduced: {missing}"));
    }
    Ok(())
}

/// `convert IN... OUT --to op-stats`: the XSpaces' combined OpStats, encoded as xprof caches it.
pub(crate) fn op_stats_file(
    paths: &[PathBuf],
    from: Option<Format>,
    out: &std::path::Path,
    hosts: &[Option<String>],
) -> Result<(), Failure> {
    if from.is_some_and(|f| f != Format::Xspace) {
        return Err(Failure::Usage(
            "--to op-stats reads XSpaces (--from xspace)".into(),
        ));
    }
    crate::output::refuse_inputs(paths, out)?;
    let (spaces, mut names) = read_op_stats_spaces(paths, Parts::ALL)?;
    for (name, given) in names.iter_mut().zip(hosts) {
        if let Some(given) = given {
            name.clone_from(given);
        }
    }
    let host_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let built = op_stats::build(spaces, &host_refs);
    let (output, mut writer) = Output::create(out)?;
    let result = writer.write_all(&built.encode()).map_err(Failure::Output);
    drop(writer);
    output.finish(result)?;
    for missing in &built.missing {
        crate::session::note(format!("not reproduced: {missing}; the OpStats lacks it"));
    }
    Ok(())
}

/// A number as the page shows it: up to `decimals` places, no trailing zeros.
fn short(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

fn write_tf_stats_text(
    out: &mut dyn Write,
    built: &OpStatsBuild,
    rows: usize,
) -> Result<(), Failure> {
    let (with_idle, _) = framework_op_stats::tf_stats(&built.op_stats);
    let headers = [
        "Rank",
        "Host/device",
        "Type",
        "Operation",
        "#Occurrences",
        "Total time (us)",
        "Avg. time (us)",
        "Total self-time (us)",
        "Avg. self-time (us)",
        "Self-time (%)",
        "Cumulative (%)",
    ];
    let cells = |r: &TfStatsRecord| -> Vec<String> {
        let on_device = r.host_or_device == "Device";
        let (fraction, cumulative) = if on_device {
            (
                r.device_total_self_time_as_fraction,
                r.device_cumulative_total_self_time_as_fraction,
            )
        } else {
            (
                r.host_total_self_time_as_fraction,
                r.host_cumulative_total_self_time_as_fraction,
            )
        };
        vec![
            r.rank.to_string(),
            r.host_or_device.to_owned(),
            crate::text::clip(&r.op_type).into_owned(),
            crate::text::clip(&r.op_name).into_owned(),
            r.occurrences.to_string(),
            short(r.total_time_in_us, 3),
            short(r.avg_time_in_us, 3),
            short(r.total_self_time_in_us, 3),
            short(r.avg_self_time_in_us, 3),
            short(fraction * 100.0, 1),
            short(cumulative * 100.0, 1),
        ]
    };
    let shown: Vec<Vec<String>> = with_idle.iter().take(rows).map(cells).collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &shown {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            // Names left, numbers right.
            if i == 1 || i == 2 || i == 3 {
                s.push_str(&format!("{c:<w$}"));
            } else {
                s.push_str(&format!("{c:>w$}"));
            }
        }
        s.trim_end().to_owned()
    };
    let header: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    let mut text = String::new();
    text.push_str("Framework op stats (including idle time)\n");
    text.push_str(&line(&header));
    text.push('\n');
    for row in &shown {
        text.push_str(&line(row));
        text.push('\n');
    }
    if with_idle.len() > shown.len() {
        text.push_str(&format!(
            "... {} more ops (--rows N shows more)\n",
            with_idle.len() - shown.len()
        ));
    }
    out.write_all(text.as_bytes()).map_err(Failure::Output)
}

//! The commands for XSpace files. Inspect and validate stream the file plane by plane and walk
//! each plane's bytes through a view, so their memory is bounded by the largest encoded plane;
//! dump holds the whole space.

use std::io::{Seek, Write};

use profkit_xplane::summary::{PlaneSummary, Summary};
use profkit_xplane::{RawSpaceItem, ReadOptions, XSpace, XSpaceReader};

use crate::Failure;
use crate::input::Input;
use crate::text::clip;

/// Formats picoseconds as microseconds with all six decimals, exactly.
fn us(ps: i128) -> String {
    let sign = if ps < 0 { "-" } else { "" };
    let abs = ps.unsigned_abs();
    format!("{sign}{}.{:06} us", abs / 1_000_000, abs % 1_000_000)
}

/// `inspect --json` of an XSpace. Written straight to the output (not through `serde_json::Value`,
/// which cannot hold the `i128` picosecond times of epoch timestamps).
#[derive(serde::Serialize)]
struct JsonSummary<'a> {
    file: &'a str,
    format: String,
    summary: &'a Summary,
    /// With `--max-planes`: the planes left out of `summary.planes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    planes_not_listed: Option<usize>,
}

pub(crate) fn inspect(input: Input, json: bool, max_planes: Option<usize>) -> Result<(), Failure> {
    // Each plane's summary goes to an unnamed temporary file as soon as it is made, in the form
    // the output gives it, so that memory does not grow with the number of planes (an XSpace of
    // millions of empty planes is 2 bytes a plane); the totals come first in the output, so the
    // planes are copied after them.
    let mut summary = Summary::default();
    let (mut start, mut end): (Option<i128>, Option<i128>) = (None, None);
    let mut planes = 0usize;
    let spool_failed = |e: std::io::Error| {
        Failure::BadInput(format!(
            "{}: cannot write the summary to a temporary file: {e}",
            input.name
        ))
    };
    // The library API keeps the listed planes as values instead (at most `max_planes`).
    let keep = json && crate::session::keeps_values();
    let mut listed = Vec::new();
    let mut spool =
        std::io::BufWriter::new(crate::convert::anonymous_file().map_err(spool_failed)?);
    let bad = |e: profkit_xplane::Error| Failure::BadInput(format!("{}: {e}", input.name));
    let mut reader = XSpaceReader::new(input.reader, ReadOptions::default());
    while let Some(item) = reader.next_raw() {
        match item.map_err(bad)? {
            RawSpaceItem::Plane(plane) => {
                let view = plane.view().map_err(bad)?;
                let mut p = PlaneSummary::of_view(&view).map_err(bad)?;
                p.index = planes;
                // The summary reads only what it counts: the rest of the plane is checked too,
                // so that a damaged file is reported, not summarised.
                view.check().map_err(bad)?;
                summary.total_lines += p.lines;
                summary.total_events += p.events;
                start = start.into_iter().chain(p.start_ps).min();
                end = end.into_iter().chain(p.end_ps).max();
                crate::session::check().map_err(Failure::Output)?;
                if !json {
                    write_plane(&mut spool, &p).map_err(spool_failed)?;
                } else if keep && max_planes.is_none_or(|m| planes < m) {
                    listed.push(
                        crate::value::to_value(&p)
                            .map_err(|e| Failure::Output(std::io::Error::other(e.to_string())))?,
                    );
                } else if max_planes.is_none_or(|m| planes < m) {
                    write_json_plane(&mut spool, &p, planes == 0).map_err(spool_failed)?;
                }
                planes += 1;
            }
            RawSpaceItem::Hostname(h) => summary.hostnames.push(h),
            RawSpaceItem::Error(_) => summary.errors += 1,
            RawSpaceItem::Warning(_) => summary.warnings += 1,
        }
    }
    if keep {
        let doc = JsonSummary {
            file: &input.name,
            format: input.format.to_string(),
            summary: &summary,
            planes_not_listed: max_planes.map(|m| planes - m.min(planes)),
        };
        let mut doc = crate::value::to_value(&doc)
            .map_err(|e| Failure::Output(std::io::Error::other(e.to_string())))?;
        if let crate::value::Value::Map(entries) = &mut doc {
            for (key, value) in entries.iter_mut() {
                if key == "summary" {
                    value.set("planes", crate::value::Value::List(listed));
                    break;
                }
            }
        }
        crate::session::document(doc);
        return Ok(());
    }
    let mut spool = spool
        .into_inner()
        .map_err(|e| spool_failed(e.into_error()))?;
    spool
        .seek(std::io::SeekFrom::Start(0))
        .map_err(spool_failed)?;
    let mut out = std::io::BufWriter::new(crate::session::stdout());
    if json {
        let doc = JsonSummary {
            file: &input.name,
            format: input.format.to_string(),
            summary: &summary,
            planes_not_listed: max_planes.map(|m| planes - m.min(planes)),
        };
        // The document with no planes, the planes spliced into its empty list.
        let text = serde_json::to_string_pretty(&doc).map_err(|e| Failure::Output(e.into()))?;
        let (head, tail) = text
            .split_once("\"planes\": []")
            .unwrap_or((text.as_str(), ""));
        out.write_all(head.as_bytes()).map_err(Failure::Output)?;
        out.write_all(b"\"planes\": [").map_err(Failure::Output)?;
        std::io::copy(&mut spool, &mut out).map_err(Failure::Output)?;
        if max_planes.is_none_or(|m| m > 0) && planes > 0 {
            out.write_all(b"\n    ").map_err(Failure::Output)?;
        }
        out.write_all(b"]").map_err(Failure::Output)?;
        out.write_all(tail.as_bytes()).map_err(Failure::Output)?;
        writeln!(out).map_err(Failure::Output)?;
    } else {
        write_head(&mut out, &input.name, &summary, planes, start.zip(end))
            .map_err(Failure::Output)?;
        std::io::copy(&mut spool, &mut out).map_err(Failure::Output)?;
    }
    out.flush().map_err(Failure::Output)
}

/// One plane as an element of the pretty-printed `planes` list (as `serde_json` lays out the
/// whole document: six-space indents at that depth).
fn write_json_plane(out: &mut impl Write, p: &PlaneSummary, first: bool) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(p).map_err(std::io::Error::other)?;
    write_json_element(out, &text, first, b"      ")
}

/// A pretty-printed JSON value as an element of a list being written: the separator, then each
/// line indented by `indent` (the depth of the list in the whole document).
fn write_json_element(
    out: &mut impl Write,
    text: &str,
    first: bool,
    indent: &[u8],
) -> std::io::Result<()> {
    out.write_all(if first { b"\n" } else { b",\n" })?;
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
        }
        out.write_all(indent)?;
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

fn write_summary(out: &mut impl Write, name: &str, s: &Summary) -> std::io::Result<()> {
    write_head(out, name, s, s.planes.len(), s.start_ps().zip(s.end_ps()))?;
    for p in &s.planes {
        write_plane(out, p)?;
    }
    Ok(())
}

/// The summary's first lines: hosts, recorded errors, totals and time span.
fn write_head(
    out: &mut impl Write,
    name: &str,
    s: &Summary,
    planes: usize,
    span: Option<(i128, i128)>,
) -> std::io::Result<()> {
    writeln!(out, "{name}: XSpace")?;
    if !s.hostnames.is_empty() {
        let hosts: Vec<_> = s.hostnames.iter().map(|h| clip(h)).collect();
        writeln!(out, "hostnames: {}", hosts.join(", "))?;
    }
    if s.errors > 0 || s.warnings > 0 {
        writeln!(
            out,
            "recorded errors: {}, warnings: {}",
            s.errors, s.warnings
        )?;
    }
    writeln!(
        out,
        "planes: {planes}, lines: {}, events: {}",
        s.total_lines, s.total_events
    )?;
    if let Some((start, end)) = span {
        writeln!(
            out,
            "time span: {} to {} ({})",
            us(start),
            us(end),
            us(end - start)
        )?;
    }
    Ok(())
}

fn write_plane(out: &mut impl Write, p: &PlaneSummary) -> std::io::Result<()> {
    writeln!(out)?;
    // JAX gives every plane id 0: the index tells them apart, the id follows when it differs.
    if i64::try_from(p.index).is_ok_and(|i| i == p.id) {
        writeln!(out, "plane {} \"{}\"", p.index, clip(&p.name))?;
    } else {
        writeln!(out, "plane {} (id {}) \"{}\"", p.index, p.id, clip(&p.name))?;
    }
    writeln!(
        out,
        "  lines: {}, events: {}, event metadata: {}, stat metadata: {}, plane stats: {}",
        p.lines, p.events, p.event_metadata, p.stat_metadata, p.stats
    )?;
    if !p.line_roles.is_empty() {
        let roles: Vec<String> = p
            .line_roles
            .iter()
            .map(|(role, n)| format!("{role} {n}"))
            .collect();
        writeln!(out, "  line roles: {}", roles.join(", "))?;
    }
    if let (Some(start), Some(end)) = (p.start_ps, p.end_ps) {
        writeln!(
            out,
            "  time span: {} to {} ({})",
            us(start),
            us(end),
            us(end - start)
        )?;
    }
    if !p.top_events.is_empty() {
        let lines = if p.top_events_device_ops {
            " (device op lines: streams, XLA Ops)"
        } else {
            ""
        };
        writeln!(
            out,
            "  top events by total duration{lines}, with self time:"
        )?;
        let width = crate::text::width(p.top_events.iter().map(|e| e.name.as_str()));
        let totals: Vec<String> = p
            .top_events
            .iter()
            .map(|e| us(e.total_duration_ps))
            .collect();
        let selfs: Vec<String> = p
            .top_events
            .iter()
            .map(|e| us(e.self_duration_ps))
            .collect();
        let total_width = totals.iter().map(String::len).max().unwrap_or(0);
        let self_width = selfs.iter().map(String::len).max().unwrap_or(0);
        for ((e, total), self_time) in p.top_events.iter().zip(&totals).zip(&selfs) {
            writeln!(
                out,
                "    {:width$}  {:>8} x  total {total:>total_width$}  self {self_time:>self_width$}",
                clip(&e.name),
                e.count,
            )?;
        }
    }
    Ok(())
}

pub(crate) fn dump(input: Input) -> Result<(), Failure> {
    let name = input.name.clone();
    let bad = |e: profkit_xplane::Error| Failure::BadInput(format!("{name}: {e}"));
    // Plane by plane, so that memory is one plane whatever the file. A file is first walked
    // through views (nothing built) so that a damaged one prints nothing, as when the space was
    // decoded whole; standard input, which cannot be read twice, is decoded whole first.
    let reader = match &input.path {
        Some(path) => {
            let mut check = XSpaceReader::new(
                crate::input::open_decoded(path, &input.name, input.gzip)?,
                ReadOptions::default(),
            );
            while let Some(item) = check.next_raw() {
                if let profkit_xplane::RawSpaceItem::Plane(plane) = item.map_err(bad)? {
                    plane.view().and_then(|view| view.check()).map_err(bad)?;
                }
            }
            input.reader
        }
        None => {
            let space: XSpace = XSpaceReader::new(input.reader, ReadOptions::default())
                .collect_space()
                .map_err(bad)?;
            Box::new(std::io::Cursor::new(profkit_xplane::encode(&space)))
        }
    };
    let out = crate::session::stdout();
    let mut out = std::io::BufWriter::new(out);
    profkit_xplane::view::write_json_streamed(
        XSpaceReader::new(reader, ReadOptions::default()),
        &mut out,
    )
    .map_err(|e| match e {
        profkit_xplane::Error::Io(io) => Failure::Output(io),
        other => bad(other),
    })?;
    out.flush().map_err(Failure::Output)
}

pub(crate) fn validate(input: Input, json: bool, mut cap: crate::cap::Cap) -> Result<(), Failure> {
    // Problems are written as they are found, never collected: a file can have one per event.
    let cap_listed = cap.json_limit_value();
    let mut out = std::io::BufWriter::new(crate::session::stdout());
    let mut written = 0usize;
    // Problems of `Severity::Error`: the others (what real producers write) are warnings.
    let mut errors = 0usize;
    let mut failed_write: Option<std::io::Error> = None;
    let name = input.name.clone();
    // The library API keeps the listed problems as values (at most `max_problems`).
    let keep = json && crate::session::keeps_values();
    let mut listed = Vec::new();
    if json && !keep {
        let head = format!(
            "{{\n  \"file\": {},\n  \"format\": {},\n  \"problems\": [",
            json_text(&name),
            json_text(&input.format.to_string())
        );
        out.write_all(head.as_bytes()).map_err(Failure::Output)?;
    }
    let mut emit = |problem: profkit_xplane::Problem| {
        if failed_write.is_some() {
            return;
        }
        let error = problem.severity == profkit_xplane::Severity::Error;
        let result = if json && !cap.json_lists(written) {
            Ok(())
        } else if keep {
            crate::value::to_value(&problem)
                .map(|v| listed.push(v))
                .map_err(|e| std::io::Error::other(e.to_string()))
        } else if json {
            write_json_problem(&mut out, &problem, written == 0)
        } else if error && cap.admit(&format!("{:?}", problem.kind)) {
            writeln!(out, "{name}: {problem}")
        } else if !error && cap.admit(&format!("{:?} warning", problem.kind)) {
            writeln!(out, "{name}: warning: {problem}")
        } else {
            Ok(())
        };
        written += 1;
        errors += usize::from(error);
        if let Err(e) = result {
            failed_write = Some(e);
        }
    };
    let mut index = 0usize;
    let mut reader = XSpaceReader::new(input.reader, ReadOptions::default());
    let broke_off = loop {
        let Some(item) = reader.next_raw() else {
            break None;
        };
        let plane = match item {
            Ok(RawSpaceItem::Plane(plane)) => plane,
            Ok(_) => continue,
            Err(e) => break Some(e),
        };
        let path = format!("planes[{index}]");
        let checked = plane.view().and_then(|view| {
            profkit_xplane::validate::validate_plane_view_each(&view, &path, &mut emit)
        });
        if let Err(e) = checked {
            break Some(e);
        }
        if let Err(e) = crate::session::check() {
            failed_write.get_or_insert(e);
            break None;
        }
        index += 1;
    };
    if let Some(e) = failed_write {
        return Err(Failure::Output(e));
    }
    for rest in cap.rest() {
        writeln!(out, "{name}: {rest}").map_err(Failure::Output)?;
    }
    if keep {
        let mut entries = vec![
            ("file".to_owned(), crate::value::Value::Str(name.clone())),
            (
                "format".to_owned(),
                crate::value::Value::Str(input.format.to_string()),
            ),
            ("problems".to_owned(), crate::value::Value::List(listed)),
        ];
        if let Some(e) = broke_off {
            return Err(Failure::BadInput(format!("{}: {e}", input.name)));
        }
        if let Some(l) = cap_listed {
            let not_listed = written - l.min(written);
            entries.push((
                "problems_not_listed".to_owned(),
                crate::value::Value::Int(i128::try_from(not_listed).unwrap_or(i128::MAX)),
            ));
        }
        entries.push(("valid".to_owned(), crate::value::Value::Bool(errors == 0)));
        crate::session::document(crate::value::Value::Map(entries));
        return if errors == 0 {
            Ok(())
        } else {
            Err(Failure::Invalid)
        };
    }
    if let Some(e) = broke_off {
        // The problems already written stand; the JSON document is closed with the error, so
        // that it stays one well-formed document, and the error goes to stderr as for any input
        // that cannot be read.
        let message = format!("{}: {e}", input.name);
        if json {
            let close = if written > 0 { "\n  ]" } else { "]" };
            writeln!(
                out,
                "{close},\n  \"error\": {},\n  \"valid\": false\n}}",
                json_text(&message)
            )
            .map_err(Failure::Output)?;
        }
        out.flush().map_err(Failure::Output)?;
        return Err(Failure::BadInput(message));
    }
    if json {
        let close = if written > 0 { "\n  ]" } else { "]" };
        let not_listed = match cap_listed {
            Some(l) => format!(",\n  \"problems_not_listed\": {}", written - l.min(written)),
            None => String::new(),
        };
        writeln!(
            out,
            "{close}{not_listed},\n  \"valid\": {}\n}}",
            errors == 0
        )
        .map_err(Failure::Output)?;
    } else if errors == 0 {
        let warnings = match written {
            0 => String::new(),
            1 => ", 1 warning".to_owned(),
            n => format!(", {n} warnings"),
        };
        writeln!(
            out,
            "{}: valid XSpace ({index} planes{warnings})",
            input.name
        )
        .map_err(Failure::Output)?;
    }
    out.flush().map_err(Failure::Output)?;
    if errors == 0 {
        Ok(())
    } else {
        Err(Failure::Invalid)
    }
}

/// `text` as a JSON string.
fn json_text(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// One problem as an element of the pretty-printed `problems` array (as `serde_json` lays out
/// the whole document: keys sorted, two-space indents).
fn write_json_problem(
    out: &mut impl Write,
    problem: &profkit_xplane::Problem,
    first: bool,
) -> std::io::Result<()> {
    let value = serde_json::to_value(problem).map_err(std::io::Error::other)?;
    let text = serde_json::to_string_pretty(&value).map_err(std::io::Error::other)?;
    write_json_element(out, &text, first, b"    ")
}

/// `inspect` of a Chrome trace: the summary of the XSpace it reads as.
pub(crate) fn inspect_chrome(input: Input, json: bool) -> Result<(), Failure> {
    let format = input.format;
    let (name, space) = crate::convert::chrome_space(input)?;
    let mut summary = Summary::default();
    for plane in &space.planes {
        summary.add_plane(plane);
    }
    if json {
        let doc = JsonSummary {
            file: &name,
            format: format.to_string(),
            summary: &summary,
            planes_not_listed: None,
        };
        return crate::session::json(&doc);
    }
    let mut out = crate::session::stdout();
    writeln!(out, "{name}: Chrome trace, read as this XSpace:").map_err(Failure::Output)?;
    write_summary(&mut out, &name, &summary).map_err(Failure::Output)
}

/// `dump` of a Chrome trace: the canonical JSON of the XSpace it reads as.
pub(crate) fn dump_chrome(input: Input) -> Result<(), Failure> {
    let (_, space) = crate::convert::chrome_space(input)?;
    let mut out = std::io::BufWriter::new(crate::session::stdout());
    profkit_xplane::view::write_json(&space, &mut out).map_err(|e| match e {
        profkit_xplane::Error::Io(io) => Failure::Output(io),
        other => Failure::Output(std::io::Error::other(other.to_string())),
    })?;
    out.flush().map_err(Failure::Output)
}

/// `validate` of a Chrome trace: it must read (the error names the JSON path, line and column),
/// and what it reads as must be a valid XSpace, judged as real producers write (see
/// `ChromeImport::check_source`): what producers write and the viewers draw anyway is a
/// warning, what no producer writes (a negative duration) an error. Each problem names the
/// `traceEvents` index of its events, their names and their own `ts` and `dur`, so the text is
/// kept whole.
pub(crate) fn validate_chrome(
    mut input: Input,
    json: bool,
    cap: crate::cap::Cap,
) -> Result<(), Failure> {
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut input.reader, &mut text)
        .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
    let name = input.name;
    let import = crate::convert::chrome_import_text(&name, &text)?;
    let profkit_chrome::ChromeCheck { errors, warnings } = import.check_source(&text);
    drop(text);
    let mut out = crate::session::stdout();
    let all = cap.is_all();
    let cap_json = cap.json_limit_value();
    let capped = |list: &[(String, String)]| -> Vec<String> {
        let mut cap = crate::cap::Cap::new(all);
        let mut lines: Vec<String> = list
            .iter()
            .filter(|(kind, _)| cap.admit(kind))
            .map(|(_, message)| message.clone())
            .collect();
        lines.extend(cap.rest());
        lines
    };
    let (error_lines, warning_lines) = (capped(&errors), capped(&warnings));
    if json {
        // Every problem, as an object with its kind and severity (as for the other formats);
        // JSON is not capped.
        let object = |severity: &str, (kind, message): &(String, String)| serde_json::json!({"kind": kind, "message": message, "severity": severity});
        let listed = cap_json.map_or(usize::MAX, |l| l);
        let problems: Vec<serde_json::Value> = errors
            .iter()
            .map(|e| object("error", e))
            .chain(warnings.iter().map(|w| object("warning", w)))
            .take(listed)
            .collect();
        let not_listed = cap_json.map(|_| errors.len() + warnings.len() - problems.len());
        let doc = serde_json::json!({
            "file": name,
            "format": "chrome",
            "valid": errors.is_empty(),
            "errors": errors.len(),
            "warnings": warnings.len(),
            "problems": problems,
        });
        let doc = crate::cap::with_not_listed(doc, not_listed);
        crate::session::json(&doc)?;
    } else {
        for w in &warning_lines {
            writeln!(out, "{name}: warning: {w}").map_err(Failure::Output)?;
        }
        for e in &error_lines {
            writeln!(out, "{name}: {e}").map_err(Failure::Output)?;
        }
        if errors.is_empty() {
            let note = if warnings.is_empty() {
                String::new()
            } else {
                format!(" ({} warnings)", warnings.len())
            };
            writeln!(out, "{name}: valid Chrome trace{note}").map_err(Failure::Output)?;
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Failure::Invalid)
    }
}

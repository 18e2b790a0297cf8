//! The commands for XSpace files. Inspect and validate stream the file plane by plane, so their
//! memory is bounded by the largest plane; dump holds the whole space.

use std::io::Write;

use profkit_xplane::summary::{PlaneSummary, Summary};
use profkit_xplane::{ReadOptions, SpaceItem, XSpace, XSpaceReader};

use crate::Failure;
use crate::input::Input;

/// Formats picoseconds as microseconds with all six decimals, exactly.
fn us(ps: i128) -> String {
    let sign = if ps < 0 { "-" } else { "" };
    let abs = ps.unsigned_abs();
    format!("{sign}{}.{:06} us", abs / 1_000_000, abs % 1_000_000)
}

pub(crate) fn inspect(input: Input, json: bool) -> Result<(), Failure> {
    let mut summary = Summary::default();
    for item in XSpaceReader::new(input.reader, ReadOptions::default()) {
        match item.map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))? {
            SpaceItem::Plane(plane) => summary.add_plane(&plane),
            SpaceItem::Hostname(h) => summary.hostnames.push(h),
            SpaceItem::Error(_) => summary.errors += 1,
            SpaceItem::Warning(_) => summary.warnings += 1,
        }
    }
    let mut out = std::io::stdout().lock();
    if json {
        let doc = serde_json::json!({
            "file": input.name,
            "format": input.format.to_string(),
            "summary": summary,
        });
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| Failure::Output(e.into()))?;
        writeln!(out).map_err(Failure::Output)?;
        return Ok(());
    }
    write_summary(&mut out, &input.name, &summary).map_err(Failure::Output)
}

fn write_summary(out: &mut impl Write, name: &str, s: &Summary) -> std::io::Result<()> {
    writeln!(out, "{name}: XSpace")?;
    if !s.hostnames.is_empty() {
        writeln!(out, "hostnames: {}", s.hostnames.join(", "))?;
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
        "planes: {}, lines: {}, events: {}",
        s.planes.len(),
        s.total_lines,
        s.total_events
    )?;
    if let (Some(start), Some(end)) = (s.start_ps(), s.end_ps()) {
        writeln!(
            out,
            "time span: {} to {} ({})",
            us(start),
            us(end),
            us(end - start)
        )?;
    }
    for p in &s.planes {
        write_plane(out, p)?;
    }
    Ok(())
}

fn write_plane(out: &mut impl Write, p: &PlaneSummary) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(out, "plane {} \"{}\"", p.id, p.name)?;
    writeln!(
        out,
        "  lines: {}, events: {}, event metadata: {}, stat metadata: {}, plane stats: {}",
        p.lines, p.events, p.event_metadata, p.stat_metadata, p.stats
    )?;
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
        writeln!(out, "  top events by total duration:")?;
        let width = p
            .top_events
            .iter()
            .map(|e| e.name.chars().count())
            .max()
            .unwrap_or(0);
        for e in &p.top_events {
            writeln!(
                out,
                "    {:width$}  {:>8} x  {}",
                e.name,
                e.count,
                us(e.total_duration_ps),
                width = width
            )?;
        }
    }
    Ok(())
}

pub(crate) fn dump(input: Input) -> Result<(), Failure> {
    let space: XSpace = XSpaceReader::new(input.reader, ReadOptions::default())
        .collect_space()
        .map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?;
    let out = std::io::stdout().lock();
    let mut out = std::io::BufWriter::new(out);
    profkit_xplane::view::write_json(&space, &mut out).map_err(|e| match e {
        profkit_xplane::Error::Io(io) => Failure::Output(io),
        other => Failure::Output(std::io::Error::other(other.to_string())),
    })?;
    out.flush().map_err(Failure::Output)
}

pub(crate) fn validate(input: Input, json: bool) -> Result<(), Failure> {
    let mut problems = Vec::new();
    let mut index = 0usize;
    for item in XSpaceReader::new(input.reader, ReadOptions::default()) {
        if let SpaceItem::Plane(plane) =
            item.map_err(|e| Failure::BadInput(format!("{}: {e}", input.name)))?
        {
            problems.extend(profkit_xplane::validate::validate_plane(
                &plane,
                &format!("planes[{index}]"),
            ));
            index += 1;
        }
    }
    let mut out = std::io::stdout().lock();
    if json {
        let doc = serde_json::json!({
            "file": input.name,
            "format": input.format.to_string(),
            "valid": problems.is_empty(),
            "problems": problems,
        });
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| Failure::Output(e.into()))?;
        writeln!(out).map_err(Failure::Output)?;
    } else if problems.is_empty() {
        writeln!(out, "{}: valid XSpace ({index} planes)", input.name).map_err(Failure::Output)?;
    } else {
        for p in &problems {
            writeln!(out, "{}: {p}", input.name).map_err(Failure::Output)?;
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Failure::Invalid)
    }
}

/// `inspect` of a Chrome trace: the summary of the XSpace it reads as.
pub(crate) fn inspect_chrome(input: Input, json: bool) -> Result<(), Failure> {
    let format = input.format;
    let (name, space) = crate::convert::chrome_space(input)?;
    let mut summary = Summary::default();
    for plane in &space.planes {
        summary.add_plane(plane);
    }
    let mut out = std::io::stdout().lock();
    if json {
        let doc = serde_json::json!({
            "file": name,
            "format": format.to_string(),
            "summary": summary,
        });
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| Failure::Output(e.into()))?;
        return writeln!(out).map_err(Failure::Output);
    }
    writeln!(out, "{name}: Chrome trace, read as this XSpace:").map_err(Failure::Output)?;
    write_summary(&mut out, &name, &summary).map_err(Failure::Output)
}

/// `dump` of a Chrome trace: the canonical JSON of the XSpace it reads as.
pub(crate) fn dump_chrome(input: Input) -> Result<(), Failure> {
    let (_, space) = crate::convert::chrome_space(input)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    profkit_xplane::view::write_json(&space, &mut out).map_err(|e| match e {
        profkit_xplane::Error::Io(io) => Failure::Output(io),
        other => Failure::Output(std::io::Error::other(other.to_string())),
    })?;
    out.flush().map_err(Failure::Output)
}

/// How many problems of one kind `validate` prints; the rest are counted.
const PROBLEMS_PER_KIND: usize = 10;

/// `validate` of a Chrome trace: it must read (the error names the JSON path, line and column),
/// and what it reads as must be a valid XSpace, judged as real producers write: partial overlaps
/// on async, GPU stream and counter lines, and overlaps no longer than the input's time
/// precision (microseconds rounded against nanosecond durations), are warnings; so are the
/// import's warnings, but for what no producer writes (a negative duration), which is an error.
pub(crate) fn validate_chrome(input: Input, json: bool) -> Result<(), Failure> {
    let (name, import) = crate::convert::chrome_import(input)?;
    let space = &import.space;
    let mut errors: Vec<(String, String)> = Vec::new();
    let mut warnings: Vec<(String, String)> = Vec::new();
    for (kind, count) in &import.warning_counts {
        if kind.is_error() {
            errors.push((format!("{kind:?}"), format!("{count} events: {kind:?}")));
        }
    }
    for p in profkit_xplane::validate(space) {
        let kind = format!("{:?}", p.kind);
        if p.kind == profkit_xplane::validate::ProblemKind::PartialOverlap {
            let (plane, line_id) = line_of(space, &p.path);
            let overlap = overlap_ps(&p.message);
            if import.overlapping_lines.contains(&(plane, line_id)) {
                warnings.push((
                    kind,
                    format!("{p} (on an async, GPU stream or counter line)"),
                ));
                continue;
            }
            if overlap.is_some_and(|o| o <= i128::from(import.precision_ps)) {
                warnings.push((
                    kind,
                    format!(
                        "{p} (within the input's time precision of {} ps)",
                        import.precision_ps
                    ),
                ));
                continue;
            }
        }
        errors.push((kind, p.to_string()));
    }
    let mut out = std::io::stdout().lock();
    let capped = |list: &[(String, String)]| -> Vec<String> {
        let mut shown: std::collections::BTreeMap<&str, usize> = Default::default();
        let mut lines = Vec::new();
        for (kind, message) in list {
            let n = shown.entry(kind).or_default();
            *n += 1;
            if *n <= PROBLEMS_PER_KIND {
                lines.push(message.clone());
            }
        }
        for (kind, n) in shown {
            if n > PROBLEMS_PER_KIND {
                lines.push(format!("... and {} more {kind}", n - PROBLEMS_PER_KIND));
            }
        }
        lines
    };
    let (error_lines, warning_lines) = (capped(&errors), capped(&warnings));
    if json {
        let doc = serde_json::json!({
            "file": name,
            "format": "chrome",
            "valid": errors.is_empty(),
            "errors": errors.len(),
            "warnings": warnings.len(),
            "problems": error_lines,
            "warning_messages": warning_lines,
        });
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| Failure::Output(e.into()))?;
        writeln!(out).map_err(Failure::Output)?;
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

/// The plane index and line id of a problem's path (`planes[0].lines[2].events[5]`).
fn line_of(space: &XSpace, path: &str) -> (usize, i64) {
    let number = |key: &str| -> Option<usize> {
        let rest = path.split(key).nth(1)?;
        rest.split(']').next()?.parse().ok()
    };
    let plane = number("planes[").unwrap_or(usize::MAX);
    let line = number("lines[")
        .and_then(|l| space.planes.get(plane)?.lines.get(l))
        .map_or(i64::MIN, |l| l.id);
    (plane, line)
}

/// How far two events overlap, from the validator's message (`event a..b ps partially overlaps
/// events[k] c..d ps`): `d - a`.
fn overlap_ps(message: &str) -> Option<i128> {
    let (first, second) = message.split_once(" partially overlaps ")?;
    let start: i128 = first
        .strip_prefix("event ")?
        .split("..")
        .next()?
        .parse()
        .ok()?;
    let other_end: i128 = second.split(' ').nth(1)?.split("..").nth(1)?.parse().ok()?;
    Some(other_end - start)
}

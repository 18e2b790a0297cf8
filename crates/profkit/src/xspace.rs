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

/// `inspect --json` of an XSpace. Written straight to the output (not through `serde_json::Value`,
/// which cannot hold the `i128` picosecond times of epoch timestamps).
#[derive(serde::Serialize)]
struct JsonSummary<'a> {
    file: &'a str,
    format: String,
    summary: &'a Summary,
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
        let doc = JsonSummary {
            file: &input.name,
            format: input.format.to_string(),
            summary: &summary,
        };
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
        let doc = JsonSummary {
            file: &name,
            format: format.to_string(),
            summary: &summary,
        };
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

/// `validate` of a Chrome trace: it must read (the error names the JSON path, line and column),
/// and what it reads as must be a valid XSpace.
pub(crate) fn validate_chrome(input: Input, json: bool) -> Result<(), Failure> {
    let (name, space) = crate::convert::chrome_space(input)?;
    let problems = profkit_xplane::validate(&space);
    let mut out = std::io::stdout().lock();
    if json {
        let doc = serde_json::json!({
            "file": name,
            "format": "chrome",
            "valid": problems.is_empty(),
            "problems": problems,
        });
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| Failure::Output(e.into()))?;
        writeln!(out).map_err(Failure::Output)?;
    } else if problems.is_empty() {
        writeln!(out, "{name}: valid Chrome trace").map_err(Failure::Output)?;
    } else {
        for p in &problems {
            writeln!(out, "{name}: {p}").map_err(Failure::Output)?;
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Failure::Invalid)
    }
}

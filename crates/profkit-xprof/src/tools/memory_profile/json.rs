//! A `MemoryProfile` printed as xprof prints it: protobuf's C++ JSON printer
//! (`MessageToJsonString` with `always_print_fields_with_no_presence`), no spaces, fields in
//! declaration order by their lowerCamelCase JSON names, every scalar field printed even at its
//! default, a message field only when set, 64-bit integers as strings, 32-bit ones as numbers,
//! enums by name, doubles as protobuf's `SimpleDtoa` writes them, strings escaped as its writer
//! escapes them.

use std::fmt::Write as _;

use crate::proto::{
    ActiveAllocation, HloModule, MemoryActivity, MemoryActivityMetadata, MemoryAggregationStats,
    MemoryProfile, MemoryProfileSnapshot, MemoryProfileSummary, PerAllocatorMemoryProfile,
};

/// The JSON text xprof 2.24.2 returns for this memory profile (allocators in the map's order,
/// which is byte order of their ids here; xprof's is a hash map's).
pub fn to_json(profile: &MemoryProfile) -> String {
    let mut w = Writer::default();
    w.open();
    w.key("memoryProfilePerAllocator");
    w.out.push('{');
    for (i, (id, allocator)) in profile.memory_profile_per_allocator.iter().enumerate() {
        if i > 0 {
            w.out.push(',');
        }
        w.string(id);
        w.out.push(':');
        per_allocator(&mut w, allocator);
    }
    w.out.push('}');
    w.key("numHosts");
    w.int32(profile.num_hosts);
    w.key("memoryIds");
    w.out.push('[');
    for (i, id) in profile.memory_ids.iter().enumerate() {
        if i > 0 {
            w.out.push(',');
        }
        w.string(id);
    }
    w.out.push(']');
    w.key("version");
    w.int32(profile.version);
    w.key("hloModules");
    w.list(&profile.hlo_modules, hlo_module);
    w.close();
    w.out
}

fn per_allocator(w: &mut Writer, p: &PerAllocatorMemoryProfile) {
    w.open();
    w.key("memoryProfileSnapshots");
    w.list(&p.memory_profile_snapshots, snapshot);
    if let Some(summary) = &p.profile_summary {
        w.key("profileSummary");
        profile_summary(w, summary);
    }
    w.key("activeAllocations");
    w.list(&p.active_allocations, active_allocation);
    w.key("specialAllocations");
    w.list(&p.special_allocations, activity_metadata);
    w.key("sampledTimelineSnapshots");
    w.list(&p.sampled_timeline_snapshots, snapshot);
    w.close();
}

fn snapshot(w: &mut Writer, s: &MemoryProfileSnapshot) {
    w.open();
    w.key("timeOffsetPs");
    w.int64(s.time_offset_ps);
    if let Some(stats) = &s.aggregation_stats {
        w.key("aggregationStats");
        aggregation_stats(w, stats);
    }
    if let Some(meta) = &s.activity_metadata {
        w.key("activityMetadata");
        activity_metadata(w, meta);
    }
    w.close();
}

fn aggregation_stats(w: &mut Writer, s: &MemoryAggregationStats) {
    w.open();
    w.key("stackReservedBytes");
    w.int64(s.stack_reserved_bytes);
    w.key("heapAllocatedBytes");
    w.int64(s.heap_allocated_bytes);
    w.key("freeMemoryBytes");
    w.int64(s.free_memory_bytes);
    w.key("fragmentation");
    w.double(s.fragmentation);
    w.key("peakBytesInUse");
    w.int64(s.peak_bytes_in_use);
    w.close();
}

fn activity_metadata(w: &mut Writer, m: &MemoryActivityMetadata) {
    w.open();
    w.key("memoryActivity");
    match MemoryActivity::try_from(m.memory_activity) {
        Ok(activity) => w.string(activity.as_str_name()),
        Err(_) => w.int32(m.memory_activity),
    }
    w.key("requestedBytes");
    w.int64(m.requested_bytes);
    w.key("allocationBytes");
    w.int64(m.allocation_bytes);
    w.key("address");
    w.uint64(m.address);
    w.key("tfOpName");
    w.string(&m.tf_op_name);
    w.key("stepId");
    w.int64(m.step_id);
    w.key("regionType");
    w.string(&m.region_type);
    w.key("dataType");
    w.string(&m.data_type);
    w.key("tensorShape");
    w.string(&m.tensor_shape);
    w.close();
}

fn profile_summary(w: &mut Writer, s: &MemoryProfileSummary) {
    w.open();
    w.key("peakBytesUsageLifetime");
    w.int64(s.peak_bytes_usage_lifetime);
    if let Some(stats) = &s.peak_stats {
        w.key("peakStats");
        aggregation_stats(w, stats);
    }
    w.key("peakStatsTimePs");
    w.int64(s.peak_stats_time_ps);
    w.key("memoryCapacity");
    w.int64(s.memory_capacity);
    w.close();
}

fn active_allocation(w: &mut Writer, a: &ActiveAllocation) {
    w.open();
    w.key("snapshotIndex");
    w.int64(a.snapshot_index);
    w.key("specialIndex");
    w.int64(a.special_index);
    w.key("numOccurrences");
    w.int64(a.num_occurrences);
    w.close();
}

fn hlo_module(w: &mut Writer, m: &HloModule) {
    w.open();
    w.key("name");
    w.string(&m.name);
    w.key("startTimePs");
    w.int64(m.start_time_ps);
    w.key("endTimePs");
    w.int64(m.end_time_ps);
    w.key("id");
    w.int64(m.id);
    w.key("planeName");
    w.string(&m.plane_name);
    w.close();
}

/// The text so far, and whether the object being written has a member yet.
#[derive(Default)]
struct Writer {
    out: String,
    first: bool,
}

impl Writer {
    fn open(&mut self) {
        self.out.push('{');
        self.first = true;
    }

    fn close(&mut self) {
        self.out.push('}');
        self.first = false;
    }

    fn key(&mut self, name: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out.push('"');
        self.out.push_str(name);
        self.out.push_str("\":");
    }

    fn list<T>(&mut self, items: &[T], each: fn(&mut Writer, &T)) {
        self.out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            each(self, item);
        }
        self.out.push(']');
        self.first = false;
    }

    fn int32(&mut self, v: i32) {
        let _ = write!(self.out, "{v}");
    }

    fn int64(&mut self, v: i64) {
        let _ = write!(self.out, "\"{v}\"");
    }

    fn uint64(&mut self, v: u64) {
        let _ = write!(self.out, "\"{v}\"");
    }

    fn double(&mut self, v: f64) {
        push_double(&mut self.out, v);
    }

    fn string(&mut self, s: &str) {
        push_string(&mut self.out, s);
    }
}

/// A double as protobuf's JSON printer writes it: `NaN`, `Infinity` and `-Infinity` as strings,
/// else `SimpleDtoa`: `%.15g` when that reads back as the same double, `%.17g` otherwise.
pub(crate) fn push_double(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
    } else {
        let short = format_g(v, 15);
        if short.parse::<f64>().ok() == Some(v) {
            out.push_str(&short);
        } else {
            out.push_str(&format_g(v, 17));
        }
    }
}

/// C's `%.<precision>g` of a finite double.
fn format_g(v: f64, precision: usize) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // `{:e}` rounds exactly, as glibc's printf does; its exponent decides the style.
    let sci = format!("{:.*e}", precision - 1, v);
    let Some((mantissa, exponent)) = sci.split_once('e') else {
        return sci;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i32 {
        let mantissa = trim_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    } else {
        let decimals = (precision as i32 - 1 - exponent).max(0) as usize;
        trim_zeros(&format!("{v:.decimals$}")).to_owned()
    }
}

/// A decimal without the zeros ending its fraction (and without a point left bare).
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A string as protobuf's JSON writer escapes it: `"` and `\`, the short escapes of C0 controls,
/// `\u00XX` for the other C0 controls, and `\uXXXX` for the characters it escapes so that the
/// text is safe in HTML and JavaScript (see `escaped`).
pub(crate) fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if escaped(c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The characters protobuf's writer writes as `\uXXXX` (besides `"`, `\` and the short
/// escapes): C0 and C1 controls and DEL, `<` and `>`, and the invisible or formatting characters
/// it lists (soft hyphen, Arabic and Syriac signs, Khmer inherent vowels, zero widths,
/// separators, invisible operators, shaping controls, the byte order mark, interlinear
/// annotations, tags). Characters past U+FFFF are written as their two UTF-16 halves.
fn escaped(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '<'
            | '>'
            | '\u{7f}'..='\u{9f}'
            | '\u{ad}'
            | '\u{600}'..='\u{603}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206a}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn double(v: f64) -> String {
        let mut s = String::new();
        push_double(&mut s, v);
        s
    }

    #[test]
    fn doubles_as_simple_dtoa() {
        assert_eq!(double(0.0), "0");
        assert_eq!(double(1.26171e-06), "1.26171e-06");
        assert_eq!(double(0.391988), "0.391988");
        assert_eq!(double(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(double(1e21), "1e+21");
        assert_eq!(double(123456.0), "123456");
        assert_eq!(double(f64::NAN), "\"NaN\"");
    }
}

//! One event, flow or counter as xprof's trace viewer writes it: args as `XStatVisitor::ToString`
//! makes them, keys sorted as Python's `json.dumps(sort_keys=True)` sorts them.

use std::collections::HashMap;

use profkit_xplane::xview::StatValueView;

use profkit_json::write::{push_json_str, push_py_float, push_six_digits};

/// A stat value, to be written as xprof's `XStatVisitor::ToString` writes it.
#[derive(Clone, Copy)]
pub(super) enum Arg<'a> {
    Str(&'a str),
    Int(i64),
    Uint(u64),
    Double(f64),
    Bytes,
}

impl<'a> Arg<'a> {
    pub(super) fn of(value: StatValueView<'a>, stats: &HashMap<i64, &'a str>) -> Arg<'a> {
        match value {
            StatValueView::Double(v) => Arg::Double(v),
            StatValueView::Uint64(v) => Arg::Uint(v),
            StatValueView::Int64(v) => Arg::Int(v),
            StatValueView::Str(v) => Arg::Str(v),
            StatValueView::Bytes(_) => Arg::Bytes,
            StatValueView::Ref(id) => Arg::Str(
                i64::try_from(id)
                    .ok()
                    .and_then(|id| stats.get(&id))
                    .copied()
                    .unwrap_or(""),
            ),
        }
    }

    /// Appends the value as a JSON string.
    /// The value with its JSON type: numbers as numbers (a double that is not finite as text).
    pub(super) fn push_typed(self, out: &mut String) {
        match self {
            Arg::Int(v) => out.push_str(itoa::Buffer::new().format(v)),
            Arg::Uint(v) => out.push_str(itoa::Buffer::new().format(v)),
            Arg::Double(v) if v.is_finite() => push_py_float(out, v),
            other => other.push(out),
        }
    }

    pub(super) fn push(self, out: &mut String) {
        match self {
            Arg::Str(s) => push_json_str(out, s),
            Arg::Int(v) => {
                out.push('"');
                out.push_str(itoa::Buffer::new().format(v));
                out.push('"');
            }
            Arg::Uint(v) => {
                out.push('"');
                out.push_str(itoa::Buffer::new().format(v));
                out.push('"');
            }
            Arg::Double(v) => {
                out.push('"');
                push_six_digits(out, v);
                out.push('"');
            }
            Arg::Bytes => out.push_str("\"<opaque bytes>\""),
        }
    }
}

/// A numeric stat, for counter events.
#[derive(Clone, Copy)]
pub(super) enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    pub(super) fn of(value: StatValueView<'_>) -> Option<Number> {
        match value {
            StatValueView::Double(v) if v.is_finite() => Some(Number::Float(v)),
            StatValueView::Uint64(v) => Some(Number::Int(i128::from(v))),
            StatValueView::Int64(v) => Some(Number::Int(i128::from(v))),
            _ => None,
        }
    }
}

/// Sorts `(key, value)` pairs by key and keeps the last of equal keys: a Python dict filled in
/// order, then dumped with `sort_keys`.
pub(super) fn sort_last_wins<T>(pairs: &mut Vec<(&str, T)>) {
    pairs.reverse();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    pairs.dedup_by(|later, earlier| later.0 == earlier.0);
}

pub(super) fn push_u32(out: &mut String, v: u32) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// Where an event is shown, its name and its category (`cat`), whether its args keep their
/// types, and its phase when the Chrome importer noted it.
pub(super) struct Shown<'a> {
    pub(super) pid: u32,
    pub(super) tid: u32,
    pub(super) name: Arg<'a>,
    pub(super) category: Option<Arg<'a>>,
    pub(super) typed: bool,
    pub(super) phase: Phase,
}

/// The phase of an event without a duration: an instant, or a complete event of no duration
/// where the Chrome importer noted one.
#[derive(Clone, Copy)]
pub(super) enum Phase {
    Instant,
    Complete,
}

pub(super) fn write_event(
    out: &mut String,
    event: Shown<'_>,
    begin_ps: u64,
    duration_ps: u64,
    args: &mut Vec<(&str, Arg<'_>)>,
) {
    let Shown {
        pid,
        tid,
        name,
        category,
        typed,
        phase,
    } = event;
    out.push('{');
    if !args.is_empty() {
        sort_last_wins(args);
        out.push_str("\"args\": {");
        for (i, (key, value)) in args.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            push_json_str(out, key);
            out.push_str(": ");
            if typed {
                value.push_typed(out);
            } else {
                value.push(out);
            }
        }
        out.push_str("}, ");
    }
    // The event model's category (a Paddle node's event type) is the event's `cat`.
    if let Some(category) = category {
        out.push_str("\"cat\": ");
        category.push(out);
        out.push_str(", ");
    }
    let complete = duration_ps != 0 || matches!(phase, Phase::Complete);
    if complete {
        out.push_str("\"dur\": ");
        push_py_float(out, duration_ps as f64 / 1e6);
        out.push_str(", ");
    }
    out.push_str("\"name\": ");
    name.push(out);
    if complete {
        out.push_str(", \"ph\": \"X\", \"pid\": ");
        push_u32(out, pid);
        out.push_str(", \"tid\": ");
    } else {
        out.push_str(", \"ph\": \"i\", \"pid\": ");
        push_u32(out, pid);
        out.push_str(", \"s\": \"t\", \"tid\": ");
    }
    push_u32(out, tid);
    out.push_str(", \"ts\": ");
    push_py_float(out, begin_ps as f64 / 1e6);
    out.push_str("},\n");
}

/// A flow event at the start of the event it binds to (`"bp": "e"` on the end, so that it binds
/// to the enclosing slice as the start does).
pub(super) fn write_flow(
    out: &mut String,
    (pid, tid): (u32, u32),
    phase: &str,
    id: Arg<'_>,
    cat: Arg<'_>,
    begin_ps: u64,
    typed: bool,
) {
    out.push('{');
    if phase == "f" {
        out.push_str("\"bp\": \"e\", ");
    }
    out.push_str("\"cat\": ");
    cat.push(out);
    out.push_str(", \"id\": ");
    if typed {
        id.push_typed(out);
    } else {
        id.push(out);
    }
    out.push_str(", \"name\": ");
    cat.push(out);
    out.push_str(", \"ph\": \"");
    out.push_str(phase);
    out.push_str("\", \"pid\": ");
    push_u32(out, pid);
    out.push_str(", \"tid\": ");
    push_u32(out, tid);
    out.push_str(", \"ts\": ");
    push_py_float(out, begin_ps as f64 / 1e6);
    out.push_str("},\n");
}

pub(super) fn write_counter(
    out: &mut String,
    pid: u32,
    name: Arg<'_>,
    begin_ps: u64,
    numbers: &mut Vec<(&str, Number)>,
) {
    sort_last_wins(numbers);
    out.push_str("{\"args\": {");
    for (i, (key, value)) in numbers.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_json_str(out, key);
        out.push_str(": ");
        match value {
            Number::Int(v) => out.push_str(&v.to_string()),
            Number::Float(v) => push_py_float(out, *v),
        }
    }
    out.push_str("}, \"name\": ");
    name.push(out);
    out.push_str(", \"ph\": \"C\", \"pid\": ");
    push_u32(out, pid);
    out.push_str(", \"ts\": ");
    push_py_float(out, begin_ps as f64 / 1e6);
    out.push_str("},\n");
}

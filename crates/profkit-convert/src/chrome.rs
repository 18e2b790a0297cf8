//! Chrome trace JSON (the Trace Event Format) to XSpace, so that traces of other tools (Paddle's
//! new profiler writes one) can be reported on and converted.
//!
//! Both layouts are read: an object with a `traceEvents` array (other keys are ignored) and a bare
//! array of events, whose closing `]` may be missing as the format allows. Events are read one at
//! a time by a small JSON reader of this module, which keeps numbers as written (so that
//! microseconds since the epoch with fractions become exact picoseconds), names the JSON path,
//! line and column of every error, and bounds nesting depth. What becomes of each phase:
//!
//! - `X` (complete) and `B`/`E` (begin and end, an `E` closing the thread's most recent open `B`)
//!   become events with a duration on their thread's line; `i`/`I` (instant) events without one;
//!   unmatched `E` and `B` left open are left out with a warning;
//! - `C` (counter) events become events of the host plane's `_counters_` line, their args
//!   stats (so the Chrome writer's counter events give back the numeric ones); a counter without
//!   a numeric value is left out with a warning;
//! - `M` (metadata) `process_name` and `thread_name` name the lines; other phases (flows, async,
//!   samples, ...) are counted and skipped.
//!
//! Everything goes to one `/host:CPU` plane with a line per (pid, tid) in first-seen order; a
//! numeric tid is the line id when no other thread took it, and with several processes a line's
//! display name is `<process> / <thread>`. Args become stats (numbers as int64, uint64 or
//! double, strings as strings, `true`/`false` as 1/0, anything else as its compact JSON text),
//! `cat` too. In a trace of Paddle's profiler (top-level `span_index` or `schemaVersion`), the
//! duration Paddle appends to host event names (`matmul dygraph[102.633 us]`) is taken off, so
//! that the calls of an op share its name. Times are made relative to the earliest, which the `Task Environment` plane keeps
//! as `profile_start_time` (in nanoseconds of the trace's clock).

use std::collections::{BTreeMap, HashMap, HashSet};

use profkit_xplane::constants::{
    COUNTERS_LINE_ID, COUNTERS_LINE_NAME, HOST_PLANE_NAME, TASK_ENV_PLANE_NAME, stats,
};
use profkit_xplane::{PlaneBuilder, StatValue, XPlane, XSpace};

use crate::error::{Error, Result};

/// The deepest nesting of arrays and objects the reader accepts.
pub const MAX_DEPTH: u32 = 256;

/// What reading a Chrome trace made, besides the XSpace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChromeImport {
    /// The trace as an XSpace.
    pub space: XSpace,
    /// Events converted (not counting metadata).
    pub events: u64,
    /// Events of phases that have no place in an XSpace, by phase.
    pub skipped: BTreeMap<String, u64>,
    /// Events left out, with why (unmatched ends, begins left open).
    pub warnings: Vec<String>,
}

/// Whether `prefix` (the first bytes of a file) looks like Chrome trace JSON: an object whose
/// first bytes name `traceEvents`, or an array whose first element is an object with a `ph`.
pub fn looks_like_chrome(prefix: &[u8]) -> bool {
    let text = String::from_utf8_lossy(prefix);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        return trimmed.contains("\"traceEvents\"");
    }
    if let Some(rest) = trimmed.strip_prefix('[') {
        let rest = rest.trim_start();
        return rest.starts_with(']') || (rest.starts_with('{') && rest.contains("\"ph\""));
    }
    false
}

/// A JSON value as the reader keeps it: numbers as their text.
#[derive(Clone, Debug, PartialEq)]
enum Value<'a> {
    Null,
    Bool(bool),
    Number(&'a str),
    String(String),
    Array(Vec<Value<'a>>),
    Object(Vec<(String, Value<'a>)>),
}

impl Value<'_> {
    fn get(&self, key: &str) -> Option<&Self> {
        match self {
            Value::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Compact JSON text.
    fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => out.push_str(n),
            Value::String(s) => out.push_str(&serde_json::Value::from(s.as_str()).to_string()),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Value::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::from(k.as_str()).to_string());
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

/// A reading error before its path is known: the path segments are gathered as the error
/// travels up out of nested values (innermost first), so that reading builds no path at all.
struct Fault {
    /// Path segments, innermost first (`.key` or `[index]`).
    segments: Vec<String>,
    line: u64,
    column: u64,
    reason: String,
}

impl Fault {
    fn within(mut self, segment: impl FnOnce() -> String) -> Fault {
        self.segments.push(segment());
        self
    }

    /// The error, with `base` (the path of the value being read) in front of the segments. A very
    /// deep path shows its first and last segments around an ellipsis.
    fn into_error(self, base: &str) -> Error {
        let mut path = base.to_owned();
        let n = self.segments.len();
        for (i, segment) in self.segments.iter().rev().enumerate() {
            if n > 24 && i == 12 {
                path.push_str(&format!("...({} more)...", n - 20));
            }
            if n <= 24 || i < 12 || i >= n - 8 {
                path.push_str(segment);
            }
        }
        Error::Chrome {
            path,
            line: self.line,
            column: self.column,
            reason: self.reason,
        }
    }
}

type Parsed<T> = std::result::Result<T, Fault>;

/// The reader: a position in the text, and the line it is on.
struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    line: u64,
    line_start: usize,
}

impl<'a> Parser<'a> {
    fn fault(&self, reason: impl Into<String>) -> Fault {
        Fault {
            segments: Vec::new(),
            line: self.line,
            column: (self.pos - self.line_start) as u64 + 1,
            reason: reason.into(),
        }
    }

    fn error(&self, path: &str, reason: impl Into<String>) -> Error {
        self.fault(reason).into_error(path)
    }

    fn skip_ws(&mut self) {
        while let Some(&b) = self.text.get(self.pos) {
            match b {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.pos;
                }
                _ => break,
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.text.get(self.pos).copied()
    }

    fn expect(&mut self, byte: u8) -> Parsed<()> {
        match self.peek() {
            Some(b) if b == byte => {
                self.pos += 1;
                Ok(())
            }
            Some(b) => Err(self.fault(format!(
                "expected '{}', found '{}'",
                byte as char, b as char
            ))),
            None => Err(self.fault(format!(
                "the text ends where '{}' is expected",
                byte as char
            ))),
        }
    }

    fn value(&mut self, depth: u32) -> Parsed<Value<'a>> {
        if depth > MAX_DEPTH {
            return Err(self.fault(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        match self.peek() {
            None => Err(self.fault("the text ends where a value is expected")),
            Some(b'{') => {
                self.pos += 1;
                let mut members = Vec::new();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                loop {
                    if self.peek() != Some(b'"') {
                        return Err(self.fault("expected a member name (a string)"));
                    }
                    let key = self.string()?;
                    self.expect(b':')
                        .map_err(|f| f.within(|| format!(".{key}")))?;
                    let value = self
                        .value(depth + 1)
                        .map_err(|f| f.within(|| format!(".{key}")))?;
                    members.push((key, value));
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Value::Object(members));
                        }
                        _ => return Err(self.fault("expected ',' or '}' in an object")),
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                loop {
                    let index = items.len();
                    items.push(
                        self.value(depth + 1)
                            .map_err(|f| f.within(|| format!("[{index}]")))?,
                    );
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Value::Array(items));
                        }
                        _ => return Err(self.fault("expected ',' or ']' in an array")),
                    }
                }
            }
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b) => Err(self.fault(format!("unexpected character '{}'", b as char))),
        }
    }

    fn literal(&mut self, word: &str, value: Value<'a>) -> Parsed<Value<'a>> {
        if self.text.get(self.pos..self.pos + word.len()) == Some(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.fault("invalid literal"))
        }
    }

    fn number(&mut self) -> Parsed<Value<'a>> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let from = p.pos;
            while p.text.get(p.pos).is_some_and(u8::is_ascii_digit) {
                p.pos += 1;
            }
            p.pos > from
        };
        if self.text.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        let leading_zero = self.text.get(self.pos) == Some(&b'0');
        if !digits(self) {
            return Err(self.fault("invalid number"));
        }
        if leading_zero && self.pos - start > 1 + usize::from(self.text.get(start) == Some(&b'-')) {
            return Err(self.fault("invalid number: a leading zero"));
        }
        if self.text.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if !digits(self) {
                return Err(self.fault("invalid number: no digits after the point"));
            }
        }
        if matches!(self.text.get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.text.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !digits(self) {
                return Err(self.fault("invalid number: no digits in the exponent"));
            }
        }
        let text = std::str::from_utf8(self.text.get(start..self.pos).unwrap_or_default())
            .map_err(|_| self.fault("invalid number"))?;
        Ok(Value::Number(text))
    }

    fn hex4(&mut self) -> Parsed<u32> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.fault("invalid \\u escape"))?;
        self.pos += 4;
        Ok(digits)
    }

    fn string(&mut self) -> Parsed<String> {
        // At the opening quote.
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.text.get(self.pos) else {
                return Err(self.fault("the text ends inside a string"));
            };
            self.pos += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.text.get(self.pos) else {
                        return Err(self.fault("the text ends inside a string"));
                    };
                    self.pos += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let unit = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&unit)
                                && self.text.get(self.pos..self.pos + 2) == Some(b"\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let low = self.hex4()?;
                                if (0xdc00..0xe000).contains(&low) {
                                    0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
                                } else {
                                    self.pos = save;
                                    0xfffd
                                }
                            } else {
                                unit
                            };
                            char::from_u32(code).unwrap_or('\u{fffd}')
                        }
                        _ => return Err(self.fault("invalid escape in a string")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => {
                    return Err(self.fault("control character in a string"));
                }
                _ => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|_| self.fault("string is not valid UTF-8"))
    }
}

/// A process or thread id: a number or a string, as the trace writes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Id {
    Int(i64),
    Text(String),
}

impl Id {
    fn of(value: Option<&Value<'_>>) -> Id {
        match value {
            Some(Value::Number(n)) => n
                .parse::<i64>()
                .map(Id::Int)
                .unwrap_or_else(|_| Id::Text((*n).to_owned())),
            Some(Value::String(s)) => Id::Text(s.clone()),
            None | Some(Value::Null) => Id::Int(0),
            Some(other) => Id::Text(other.to_json()),
        }
    }

    fn text(&self) -> String {
        match self {
            Id::Int(i) => i.to_string(),
            Id::Text(s) => s.clone(),
        }
    }
}

/// Microseconds written as decimal text to picoseconds, exactly (rounded to the nearest
/// picosecond), or through a double when the text has too many digits.
fn micros_to_ps(text: &str) -> Option<i128> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let scale = exponent - frac.len() as i32 + 6;
    let value = if digits.len() > 30 || !(-40..=30).contains(&scale) {
        let v = text.parse::<f64>().ok()? * 1e6;
        if !v.is_finite() || v.abs() > 1e36 {
            return None;
        }
        return Some(v.round() as i128);
    } else if digits.is_empty() {
        0
    } else {
        let d: i128 = digits.parse().ok()?;
        if scale >= 0 {
            d.checked_mul(10i128.checked_pow(scale as u32)?)?
        } else {
            let div = 10i128.checked_pow((-scale) as u32)?;
            (d + div / 2) / div
        }
    };
    Some(if negative { -value } else { value })
}

/// Paddle's profiler appends the duration to a host event's name (`matmul dygraph[102.633 us]`);
/// without it, the calls of one op share a name again.
fn strip_paddle_duration(name: &mut String) {
    let Some(open) = name.rfind('[') else { return };
    let Some(inner) = name.get(open + 1..).and_then(|s| s.strip_suffix(']')) else {
        return;
    };
    let Some((number, unit)) = inner.split_once(' ') else {
        return;
    };
    if number.parse::<f64>().is_ok() && matches!(unit, "ns" | "us" | "ms" | "s") {
        name.truncate(open);
    }
}

/// A stat value for an arg.
fn stat_of(value: &Value<'_>) -> StatValue {
    match value {
        Value::Number(n) => {
            if let Ok(i) = n.parse::<i64>() {
                StatValue::Int64(i)
            } else if let Ok(u) = n.parse::<u64>() {
                StatValue::Uint64(u)
            } else {
                StatValue::Double(n.parse().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => StatValue::Str(s.clone()),
        Value::Bool(b) => StatValue::Int64(i64::from(*b)),
        other => StatValue::Str(other.to_json()),
    }
}

/// One event on a thread, in picoseconds.
struct Item {
    name: String,
    start: i128,
    end: i128,
    stats: Vec<(String, StatValue)>,
}

#[derive(Default)]
struct Thread {
    name: Option<String>,
    items: Vec<Item>,
    open: Vec<Item>,
}

#[derive(Default)]
struct Trace {
    /// Process names by pid, and the order processes were first seen in.
    process_names: HashMap<Id, String>,
    processes: Vec<Id>,
    threads: Vec<((Id, Id), Thread)>,
    thread_index: HashMap<(Id, Id), usize>,
    counters: Vec<(Id, Item)>,
    import: ChromeImport,
    /// The document has the top-level keys of Paddle's profiler (`span_index`, `schemaVersion`).
    paddle: bool,
}

impl Trace {
    fn thread(&mut self, pid: &Id, tid: &Id) -> &mut Thread {
        if !self.processes.contains(pid) {
            self.processes.push(pid.clone());
        }
        let key = (pid.clone(), tid.clone());
        let index = match self.thread_index.get(&key) {
            Some(&i) => i,
            None => {
                self.threads.push((key.clone(), Thread::default()));
                self.thread_index.insert(key, self.threads.len() - 1);
                self.threads.len() - 1
            }
        };
        match self.threads.get_mut(index) {
            Some((_, thread)) => thread,
            None => unreachable!("thread index {index} was just made"),
        }
    }

    fn event(&mut self, parser: &Parser<'_>, path: &str, event: &Value<'_>) -> Result<()> {
        let Value::Object(members) = event else {
            return Err(parser.error(path, "an event must be an object"));
        };
        if members.is_empty() {
            // The empty event xprof and Paddle end their arrays with.
            return Ok(());
        }
        let ph = match event.get("ph") {
            Some(Value::String(ph)) => ph.as_str(),
            None => return Err(parser.error(path, "the event has no \"ph\" (phase)")),
            Some(_) => {
                return Err(parser.error(&format!("{path}.ph"), "the phase must be a string"));
            }
        };
        let pid = Id::of(event.get("pid"));
        let tid = Id::of(event.get("tid"));
        let name = match event.get("name") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            Some(other) => other.to_json(),
        };
        let time = |key: &str| -> Result<Option<i128>> {
            match event.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => micros_to_ps(n).map(Some).ok_or_else(|| {
                    parser.error(&format!("{path}.{key}"), "the number is out of range")
                }),
                Some(Value::String(s)) => micros_to_ps(s.trim()).map(Some).ok_or_else(|| {
                    parser.error(
                        &format!("{path}.{key}"),
                        "expected a number of microseconds",
                    )
                }),
                Some(_) => Err(parser.error(
                    &format!("{path}.{key}"),
                    "expected a number of microseconds",
                )),
            }
        };
        let args = match event.get("args") {
            Some(Value::Object(args)) => args.as_slice(),
            _ => &[],
        };
        let mut stats: Vec<(String, StatValue)> =
            args.iter().map(|(k, v)| (k.clone(), stat_of(v))).collect();
        if let Some(Value::String(cat)) = event.get("cat") {
            stats.push(("cat".to_owned(), StatValue::Str(cat.clone())));
        }
        let need_ts = || -> Result<i128> {
            time("ts")?.ok_or_else(|| parser.error(path, format!("the {ph:?} event has no \"ts\"")))
        };
        match ph {
            "X" => {
                let start = need_ts()?;
                let dur = time("dur")?.unwrap_or(0).max(0);
                self.import.events += 1;
                self.thread(&pid, &tid).items.push(Item {
                    name,
                    start,
                    end: start + dur,
                    stats,
                });
            }
            "B" => {
                let start = need_ts()?;
                self.thread(&pid, &tid).open.push(Item {
                    name,
                    start,
                    end: start,
                    stats,
                });
            }
            "E" => {
                let end = need_ts()?;
                let thread = self.thread(&pid, &tid);
                match thread.open.pop() {
                    Some(mut item) => {
                        item.end = end.max(item.start);
                        item.stats.extend(stats);
                        thread.items.push(item);
                        self.import.events += 1;
                    }
                    None => self.import.warnings.push(format!(
                        "{path}: end of {name:?} on thread {} of process {} has no begin; left out",
                        tid.text(),
                        pid.text()
                    )),
                }
            }
            "i" | "I" => {
                let start = need_ts()?;
                self.import.events += 1;
                self.thread(&pid, &tid).items.push(Item {
                    name,
                    start,
                    end: start,
                    stats,
                });
            }
            "C" => {
                let start = need_ts()?;
                let numeric = stats.iter().any(|(_, v)| match v {
                    StatValue::Double(d) => d.is_finite(),
                    StatValue::Int64(_) | StatValue::Uint64(_) => true,
                    _ => false,
                });
                if !numeric {
                    self.import.warnings.push(format!(
                        "{path}: counter {name:?} has no numeric value; left out"
                    ));
                    return Ok(());
                }
                if !self.processes.contains(&pid) {
                    self.processes.push(pid.clone());
                }
                let series = match event.get("id") {
                    Some(id) => format!("{name} {}", Id::of(Some(id)).text()),
                    None => name,
                };
                self.import.events += 1;
                self.counters.push((
                    pid,
                    Item {
                        name: series,
                        start,
                        end: start,
                        stats,
                    },
                ));
            }
            "M" => {
                let value = event
                    .get("args")
                    .and_then(|a| a.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                match (name.as_str(), value) {
                    ("process_name", Some(v)) => {
                        if !self.processes.contains(&pid) {
                            self.processes.push(pid.clone());
                        }
                        self.process_names.insert(pid, v);
                    }
                    ("thread_name", Some(v)) => self.thread(&pid, &tid).name = Some(v),
                    _ => {}
                }
            }
            other => *self.import.skipped.entry(other.to_owned()).or_default() += 1,
        }
        Ok(())
    }

    fn into_import(mut self) -> Result<ChromeImport> {
        for ((pid, tid), thread) in &self.threads {
            for open in &thread.open {
                self.import.warnings.push(format!(
                    "begin of {:?} on thread {} of process {} never ends; left out",
                    open.name,
                    tid.text(),
                    pid.text()
                ));
            }
        }
        let times = self
            .threads
            .iter()
            .flat_map(|(_, t)| t.items.iter().map(|i| i.start))
            .chain(self.counters.iter().map(|(_, i)| i.start));
        let start = times.clone().min().unwrap_or(0);
        let stop = self
            .threads
            .iter()
            .flat_map(|(_, t)| t.items.iter().map(|i| i.end))
            .chain(self.counters.iter().map(|(_, i)| i.end))
            .max()
            .unwrap_or(0);
        if self.paddle {
            for (_, thread) in &mut self.threads {
                for item in &mut thread.items {
                    strip_paddle_duration(&mut item.name);
                }
            }
        }
        if stop - start > i128::from(i64::MAX / 2) {
            return Err(Error::Chrome {
                path: "traceEvents".into(),
                line: 0,
                column: 0,
                reason: format!(
                    "the events span {} microseconds, more than an XSpace holds (about 53 days)",
                    (stop - start) / 1_000_000
                ),
            });
        }
        let several = self.processes.len() > 1;
        let process_label = |pid: &Id, names: &HashMap<Id, String>| {
            names
                .get(pid)
                .cloned()
                .unwrap_or_else(|| format!("pid {}", pid.text()))
        };
        let rel = |t: i128| i64::try_from(t - start).unwrap_or(i64::MAX);

        let mut plane = XPlane::default();
        {
            let mut builder = PlaneBuilder::new(&mut plane);
            builder.set_id(0).set_name(HOST_PLANE_NAME);
            let mut used: HashSet<i64> = HashSet::new();
            let mut next_free: i64 = 1;
            // Numeric tids keep their number when they are the first to claim it.
            let mut ids = Vec::with_capacity(self.threads.len());
            for ((_, tid), _) in &self.threads {
                let wanted = match tid {
                    Id::Int(i) if *i != COUNTERS_LINE_ID && used.insert(*i) => Some(*i),
                    _ => None,
                };
                ids.push(wanted);
            }
            let mut assigned: Vec<(i64, usize)> = Vec::with_capacity(ids.len());
            for (index, wanted) in ids.into_iter().enumerate() {
                let id = match wanted {
                    Some(id) => id,
                    None => {
                        while used.contains(&next_free) {
                            next_free += 1;
                        }
                        used.insert(next_free);
                        next_free
                    }
                };
                assigned.push((id, index));
            }
            // Lines in id order, so that reading a trace this module's output wrote gives the
            // same space again.
            assigned.sort_unstable();
            for (id, index) in assigned {
                let Some(((pid, tid), thread)) = self.threads.get_mut(index) else {
                    continue;
                };
                let thread_name = thread.name.clone().unwrap_or_else(|| tid.text());
                thread
                    .items
                    .sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
                let first = thread.items.first().map_or(start, |i| i.start);
                let mut line = builder.line(id);
                line.set_name(thread_name.clone())
                    .set_timestamp_ns(rel(first) / 1000);
                let line_ps = i128::from(rel(first) / 1000) * 1000 + start;
                if several {
                    line.set_display_name(format!(
                        "{} / {thread_name}",
                        process_label(pid, &self.process_names)
                    ));
                }
                for item in thread.items.drain(..) {
                    let mut event = line.add_event(&item.name);
                    event
                        .set_offset_ps(i64::try_from(item.start - line_ps).unwrap_or(i64::MAX))
                        .set_duration_ps(i64::try_from(item.end - item.start).unwrap_or(i64::MAX));
                    for (key, value) in item.stats {
                        event.add_stat(&key, value);
                    }
                }
            }
            if !self.counters.is_empty() {
                let mut line = builder.line(COUNTERS_LINE_ID);
                line.set_name(COUNTERS_LINE_NAME).set_timestamp_ns(0);
                self.counters.sort_by_key(|(_, i)| i.start);
                for (pid, item) in self.counters {
                    let name = if several {
                        format!(
                            "{} / {}",
                            process_label(&pid, &self.process_names),
                            item.name
                        )
                    } else {
                        item.name
                    };
                    let mut event = line.add_event(&name);
                    event.set_offset_ps(rel(item.start));
                    for (key, value) in item.stats {
                        event.add_stat(&key, value);
                    }
                }
            }
        }
        let mut env = XPlane::default();
        {
            let mut builder = PlaneBuilder::new(&mut env);
            builder.set_id(1).set_name(TASK_ENV_PLANE_NAME);
            let ns = |ps: i128| u64::try_from(ps.div_euclid(1000).max(0)).unwrap_or(u64::MAX);
            builder.add_stat(stats::PROFILE_START_TIME, ns(start));
            builder.add_stat(stats::PROFILE_STOP_TIME, ns(stop));
        }
        self.import.space = XSpace {
            planes: vec![plane, env],
            ..XSpace::default()
        };
        Ok(self.import)
    }
}

/// Reads Chrome trace JSON (see the module documentation).
pub fn chrome_to_xspace(text: &[u8]) -> Result<ChromeImport> {
    let mut parser = Parser {
        text,
        pos: 0,
        line: 1,
        line_start: 0,
    };
    if text.starts_with(b"\xef\xbb\xbf") {
        parser.pos = 3;
        parser.line_start = 3;
    }
    let mut trace = Trace::default();
    match parser.peek() {
        Some(b'[') => {
            parser.pos += 1;
            events(&mut parser, &mut trace, "", true)?;
        }
        Some(b'{') => {
            parser.pos += 1;
            let mut first = true;
            loop {
                match parser.peek() {
                    Some(b'}') if first => {
                        parser.pos += 1;
                        break;
                    }
                    Some(b'"') => {}
                    _ => return Err(parser.error("", "expected a member name (a string)")),
                }
                first = false;
                let key = parser.string().map_err(|f| f.into_error(""))?;
                parser.expect(b':').map_err(|f| f.into_error(&key))?;
                if key == "span_index" || key == "schemaVersion" {
                    trace.paddle = true;
                }
                if key == "traceEvents" {
                    parser
                        .expect(b'[')
                        .map_err(|f| f.into_error("traceEvents"))?;
                    events(&mut parser, &mut trace, "traceEvents", false)?;
                } else {
                    parser.value(1).map_err(|f| f.into_error(&key))?;
                }
                match parser.peek() {
                    Some(b',') => parser.pos += 1,
                    Some(b'}') => {
                        parser.pos += 1;
                        break;
                    }
                    _ => {
                        return Err(parser.error("", "expected ',' or '}' in the top-level object"));
                    }
                }
            }
        }
        _ => {
            return Err(parser.error(
                "",
                "not a Chrome trace: expected an object with traceEvents or an array of events",
            ));
        }
    }
    if parser.peek().is_some() {
        return Err(parser.error("", "unexpected text after the trace"));
    }
    trace.into_import()
}

/// Reads the elements of an event array (after its `[`), one event at a time. A bare array may
/// end without its `]` (the format allows it, so that a crashed writer's file still loads).
fn events(parser: &mut Parser<'_>, trace: &mut Trace, path: &str, open_end: bool) -> Result<()> {
    let mut index = 0usize;
    if parser.peek() == Some(b']') {
        parser.pos += 1;
        return Ok(());
    }
    loop {
        if parser.peek().is_none() && open_end {
            return Ok(());
        }
        // Errors about an event point at its start.
        let location = Parser {
            text: parser.text,
            pos: parser.pos,
            line: parser.line,
            line_start: parser.line_start,
        };
        let value = parser
            .value(1)
            .map_err(|f| f.into_error(&format!("{path}[{index}]")))?;
        trace.event(&location, &format!("{path}[{index}]"), &value)?;
        index += 1;
        match parser.peek() {
            Some(b',') => parser.pos += 1,
            Some(b']') => {
                parser.pos += 1;
                return Ok(());
            }
            None if open_end => return Ok(()),
            _ => return Err(parser.error(path, "expected ',' or ']' between events")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_microseconds() {
        assert_eq!(
            micros_to_ps("1795211085403342.685"),
            Some(1_795_211_085_403_342_685_000)
        );
        assert_eq!(micros_to_ps("1.5e3"), Some(1_500_000_000));
        assert_eq!(micros_to_ps("-2"), Some(-2_000_000));
        assert_eq!(micros_to_ps("0.0000004"), Some(0));
        assert_eq!(micros_to_ps("0.0000006"), Some(1));
    }

    #[test]
    fn errors_name_the_place() {
        let text = b"{\"traceEvents\": [\n{\"ph\": \"X\", \"ts\": \"soon\"}]}";
        let err = chrome_to_xspace(text).unwrap_err().to_string();
        assert!(
            err.contains("traceEvents[0].ts") && err.contains("line 2"),
            "{err}"
        );
    }
}

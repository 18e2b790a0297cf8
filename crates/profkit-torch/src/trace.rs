//! A Kineto trace (what `torch.profiler`'s `export_chrome_trace` and `tensorboard_trace_handler`
//! write) read into the few things torch's table uses: each complete event's name, category,
//! thread, exact times and the args torch looks at, and the `[memory]` instants. Everything else (flows, metadata, other args) is skipped while reading, so memory
//! is a few dozen bytes per event, not the text.
//!
//! Times are taken as written (`ts` and `dur` are microseconds with up to three decimals) and
//! kept as integer nanoseconds, exactly, as the profiler recorded them.

use std::fmt;
use std::io::Read;

use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::Result;

/// What Kineto's `cat` says an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Category {
    /// `cpu_op`: an operator (`aten::mm`, `autograd::engine::...`).
    CpuOp,
    /// `user_annotation`: a `record_function` range, `ProfilerStep#N` among them.
    UserAnnotation,
    /// `python_function`: a Python call, in `with_stack` traces.
    PythonFunction,
    /// `cuda_runtime` (and `cuda_driver`, `mtia_runtime`, ...): a runtime call on the host.
    Runtime,
    /// `kernel`: a kernel on a device stream.
    Kernel,
    /// `gpu_memcpy`.
    Memcpy,
    /// `gpu_memset`.
    Memset,
    /// `gpu_user_annotation`: a `record_function` range drawn on a device stream.
    GpuUserAnnotation,
    /// `cuda_sync`: a synchronisation seen on a device stream.
    CudaSync,
    /// `cpu_instant_event` (the `[memory]` instants among them).
    CpuInstant,
    /// `Trace`: Kineto's span of the whole trace (`PyTorch Profiler (0)`).
    TraceSpan,
    /// Any other category (or none).
    Other,
}

impl Category {
    fn from_cat(cat: &str) -> Category {
        match cat {
            "cpu_op" | "Operator" => Category::CpuOp,
            "user_annotation" => Category::UserAnnotation,
            "python_function" => Category::PythonFunction,
            "cuda_runtime"
            | "cuda_driver"
            | "runtime"
            | "mtia_runtime"
            | "xpu_runtime"
            | "privateuse1_runtime" => Category::Runtime,
            "kernel" | "Kernel" => Category::Kernel,
            "gpu_memcpy" | "Memcpy" => Category::Memcpy,
            "gpu_memset" | "Memset" => Category::Memset,
            "gpu_user_annotation" => Category::GpuUserAnnotation,
            "cuda_sync" => Category::CudaSync,
            "cpu_instant_event" => Category::CpuInstant,
            "Trace" => Category::TraceSpan,
            _ => Category::Other,
        }
    }

    /// Whether torch's profiler counts the event as device activity (`DeviceType.CUDA`).
    pub fn is_device(self) -> bool {
        matches!(
            self,
            Category::Kernel
                | Category::Memcpy
                | Category::Memset
                | Category::GpuUserAnnotation
                | Category::CudaSync
        )
    }
}

/// An interned string: an index into [`Trace::strings`].
pub type Str = u32;

/// One event of the trace: a complete (`X`) event, or an instant (`i`) with `dur` 0.
#[derive(Clone, Debug)]
pub struct Event {
    /// The name, interned.
    pub name: Str,
    /// The category.
    pub cat: Category,
    /// The process (`pid`; a string pid gets a negative number of its own).
    pub pid: i64,
    /// The thread (`tid`; a device stream for device events); strings as for `pid`.
    pub tid: i64,
    /// The start, in nanoseconds as written.
    pub ts: i64,
    /// The duration in nanoseconds (0 for an instant).
    pub dur: i64,
    /// Whether this is an instant (`ph` `i` or `I`).
    pub instant: bool,
    /// Whether the event has a `cat` and a `dur` (HolisticTraceAnalysis keeps only those).
    pub has_cat_and_dur: bool,
    /// Its position in `traceEvents` (HolisticTraceAnalysis's `index`).
    pub index: u32,
    /// `args."External id"`.
    pub external_id: Option<i64>,
    /// `args.correlation`.
    pub correlation: Option<i64>,
    /// `args.device`.
    pub device: Option<i64>,
    /// `args.stream`.
    pub stream: Option<i64>,
    /// `args."Input Dims"` as torch's `input_shapes` print (`[[4, 3], []]`), interned.
    pub input_shapes: Option<Str>,
    /// `args."Concrete Inputs"`, kept for the operators whose FLOPs need them.
    pub concrete_inputs: Option<Box<[String]>>,
    /// `args."Input Dims"` as numbers, kept for the operators whose FLOPs need them.
    pub dims: Option<Box<[Vec<i64>]>>,
    /// `args.flops`, when the trace carries it.
    pub flops: Option<i64>,
    /// `args."Call stack"` (TorchScript's stack; `;`-separated), interned.
    pub stack: Option<Str>,
    /// An operator's name without its overload and the overload, when the name carries one:
    /// with `capture_overload_names` Kineto writes `aten::add.Tensor` for the operator torch
    /// names `aten::add` with the overload name `Tensor` (interned, both).
    pub overload: Option<(Str, Str)>,
    /// `args."memory bandwidth (GB/s)"` of a copy or set, when written.
    pub memory_bw_gbps: Option<f64>,
    /// `[memory]`: `args.Bytes`.
    pub bytes: i64,
    /// `[memory]`: `args."Device Type"` (c10's `DeviceType`: 0 CPU, 1 CUDA, ...).
    pub device_type: i64,
}

/// The trace's own settings and properties.
#[derive(Clone, Debug, Default)]
pub struct Meta {
    /// Top-level `profile_memory`, when written.
    pub profile_memory: Option<bool>,
    /// Top-level `with_flops`, when written.
    pub with_flops: Option<bool>,
    /// Top-level `record_shapes`, when written.
    pub record_shapes: Option<bool>,
    /// Top-level `with_stack`, when written.
    pub with_stack: Option<bool>,
    /// How many devices `deviceProperties` lists.
    pub device_properties: usize,
    /// `distributedInfo.rank`, when written.
    pub rank: Option<i64>,
    /// Whether some event's `ts` is written as a double or missing: pandas then reads the
    /// column as doubles, which HolisticTraceAnalysis rounds to whole microseconds.
    pub fractional_ts: bool,
}

/// A Kineto trace as this crate reads it.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// The complete events and instants, in the file's order.
    pub events: Vec<Event>,
    /// The interned strings.
    pub strings: Vec<String>,
    /// The trace's settings.
    pub meta: Meta,
}

impl Trace {
    /// The string `s` stands for.
    pub fn str(&self, s: Str) -> &str {
        self.strings.get(s as usize).map_or("", String::as_str)
    }
}

/// Reads a Kineto trace from its text (gzip already undone), streaming.
pub fn read_trace<R: Read>(reader: R) -> Result<Trace> {
    let options = profkit_json::ReadOptions::default().open_top_array(true);
    let mut json = profkit_json::Reader::new(reader, options);
    let mut builder = Builder::default();
    json.read_document_seed(DocumentSeed { b: &mut builder })?;
    Ok(builder.finish())
}

#[derive(Default)]
struct Builder {
    trace: Trace,
    interned: FxHashMap<String, Str>,
    string_ids: FxHashMap<String, i64>,
    /// Events seen in `traceEvents`, kept or not.
    seen: u32,
}

impl Builder {
    fn intern(&mut self, s: String) -> Str {
        if let Some(&i) = self.interned.get(&s) {
            return i;
        }
        let i = self.trace.strings.len() as Str;
        self.trace.strings.push(s.clone());
        self.interned.insert(s, i);
        i
    }

    fn id(&mut self, id: Option<Id>) -> i64 {
        match id {
            None => 0,
            Some(Id::Num(n)) => n,
            Some(Id::Str(s)) => {
                if let Ok(n) = s.parse::<i64>() {
                    return n;
                }
                let next = -1 - self.string_ids.len() as i64;
                *self.string_ids.entry(s).or_insert(next)
            }
        }
    }

    fn add(&mut self, raw: RawEvent) {
        let index = self.seen;
        self.seen = self.seen.saturating_add(1);
        if raw.ts.as_ref().is_none_or(|t| t.1) {
            self.trace.meta.fractional_ts = true;
        }
        let has_cat_and_dur = raw.cat.is_some() && raw.dur.is_some();
        let instant = match raw.ph.as_deref() {
            Some("X") => false,
            Some("i" | "I") => true,
            _ => return,
        };
        let cat = Category::from_cat(raw.cat.as_deref().unwrap_or(""));
        let name = raw.name.unwrap_or_default();
        let args = raw.args.unwrap_or_default();
        let overload = match cat {
            Category::CpuOp => split_overload(&name).map(|(base, overload)| {
                let (base, overload) = (base.to_owned(), overload.to_owned());
                (self.intern(base), self.intern(overload))
            }),
            _ => None,
        };
        let op = overload.map_or(name.as_str(), |(base, _)| self.trace.str(base));
        let wants_concrete = op == "aten::conv2d";
        let wants_dims = crate::key_averages::flops::needs_dims(op);
        let name = self.intern(name);
        let (input_shapes, dims) = match args.input_dims {
            Some(dims) => {
                let text = shapes_text(&dims);
                let kept = wants_dims.then(|| {
                    dims.iter()
                        .map(|d| match d {
                            Dims::Ints(v) => v.clone(),
                            Dims::Other => Vec::new(),
                        })
                        .collect::<Box<[_]>>()
                });
                (Some(self.intern(text)), kept)
            }
            None => (None, None),
        };
        let stack = args.call_stack.map(|s| self.intern(s));
        let pid = self.id(raw.pid);
        let tid = self.id(raw.tid);
        self.trace.events.push(Event {
            name,
            cat,
            pid,
            tid,
            ts: raw.ts.map_or(0, |t| t.0),
            dur: if instant {
                0
            } else {
                raw.dur.map_or(0, |d| d.0)
            },
            instant,
            has_cat_and_dur,
            index,
            external_id: args.external_id.map(|v| v.0),
            correlation: args.correlation.map(|v| v.0),
            device: args.device.map(|v| v.0),
            // HTA takes a stream that is not a number as none.
            stream: args.stream.map(|v| v.0).filter(|&v| v != NOT_A_NUMBER),
            input_shapes,
            concrete_inputs: if wants_concrete {
                args.concrete_inputs.map(Vec::into_boxed_slice)
            } else {
                None
            },
            dims,
            flops: args.flops.map(|v| v.0),
            stack,
            overload,
            memory_bw_gbps: args.memory_bw_gbps.map(|v| v.0),
            bytes: args.bytes.map_or(0, |v| v.0),
            device_type: args.device_type.map_or(0, |v| v.0),
        });
    }

    fn finish(self) -> Trace {
        self.trace
    }
}

/// An operator's schema name with its overload (`aten::add.Tensor`, `myops::f.out`) split into
/// the name and the overload: a namespace, `::`, the name, then `.` and the overload, each made of
/// letters, digits and `_` (operator names have no `.`; names of other kinds, such as
/// `autograd::engine::evaluate_function: MulBackward0`, have spaces and are left whole).
fn split_overload(name: &str) -> Option<(&str, &str)> {
    let (base, overload) = name.split_once('.')?;
    let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let (namespace, op) = base.rsplit_once("::")?;
    (namespace.split("::").all(word) && word(op) && word(overload)).then_some((base, overload))
}

/// torch's `input_shapes`: each input's dimensions, `[]` for what is not a plain tensor (a
/// TensorList's shapes are nested in `Input Dims`, but torch prints `[]` for it), printed as
/// Python prints a list of lists.
fn shapes_text(dims: &[Dims]) -> String {
    let mut s = String::from("[");
    for (i, d) in dims.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push('[');
        if let Dims::Ints(v) = d {
            for (j, n) in v.iter().enumerate() {
                if j > 0 {
                    s.push_str(", ");
                }
                s.push_str(&n.to_string());
            }
        }
        s.push(']');
    }
    s.push(']');
    s
}

struct DocumentSeed<'b> {
    b: &'b mut Builder,
}

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Chrome trace: an object with traceEvents, or an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        EventsSeed { b: self.b }.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let meta = &mut self.b.trace.meta;
            match key.as_str() {
                "traceEvents" => map.next_value_seed(EventsSeed { b: &mut *self.b })?,
                "profile_memory" => meta.profile_memory = map.next_value::<Flag>()?.0,
                "with_flops" => meta.with_flops = map.next_value::<Flag>()?.0,
                "record_shapes" => meta.record_shapes = map.next_value::<Flag>()?.0,
                "with_stack" => meta.with_stack = map.next_value::<Flag>()?.0,
                "deviceProperties" => {
                    meta.device_properties = map.next_value::<Vec<IgnoredAny>>()?.len();
                }
                "distributedInfo" => {
                    meta.rank = map.next_value::<DistributedInfo>()?.rank.map(|r| r.0);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct EventsSeed<'b> {
    b: &'b mut Builder,
}

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(raw) = seq.next_element::<RawEvent>()? {
            self.b.add(raw);
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct RawEvent {
    ph: Option<String>,
    name: Option<String>,
    cat: Option<String>,
    pid: Option<Id>,
    tid: Option<Id>,
    ts: Option<Nanos>,
    dur: Option<Nanos>,
    args: Option<RawArgs>,
}

#[derive(Default, Deserialize)]
struct RawArgs {
    #[serde(rename = "External id")]
    external_id: Option<Int>,
    correlation: Option<Int>,
    device: Option<Int>,
    stream: Option<Int>,
    #[serde(rename = "Input Dims")]
    input_dims: Option<Vec<Dims>>,
    #[serde(rename = "Concrete Inputs")]
    concrete_inputs: Option<Vec<String>>,
    flops: Option<Int>,
    #[serde(rename = "Call stack")]
    call_stack: Option<String>,
    #[serde(rename = "Bytes")]
    bytes: Option<Int>,
    #[serde(rename = "Device Type")]
    device_type: Option<Int>,
    #[serde(rename = "memory bandwidth (GB/s)")]
    memory_bw_gbps: Option<Float>,
}

/// A floating-point arg; a string read as a number (0 when it is not one), anything else 0.
struct Float(f64);

impl<'de> Deserialize<'de> for Float {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Float, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Ok(Float(match v {
            serde_json::Value::Number(n) => n.as_f64().unwrap_or(0.0),
            serde_json::Value::String(s) => s.trim().parse().unwrap_or(0.0),
            _ => 0.0,
        }))
    }
}

#[derive(Deserialize)]
struct DistributedInfo {
    rank: Option<Int>,
}

/// One input's entry of `Input Dims`: a list of integers, or anything else (a TensorList's
/// list of lists).
enum Dims {
    Ints(Vec<i64>),
    Other,
}

impl<'de> Deserialize<'de> for Dims {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dims, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let ints = v.as_array().and_then(|a| {
            a.iter()
                .map(serde_json::Value::as_i64)
                .collect::<Option<Vec<i64>>>()
        });
        Ok(ints.map_or(Dims::Other, Dims::Ints))
    }
}

/// `pid` / `tid`: a number or a string.
enum Id {
    Num(i64),
    Str(String),
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id::Num(v as i64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                Ok(Id::Num(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Id, E> {
                Ok(Id::Num(v as i64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id::Str(v.to_owned()))
            }
        }
        d.deserialize_any(V)
    }
}

/// An integer arg; a double is truncated, a string read as a number (or, when it is not one,
/// [`NOT_A_NUMBER`]), a boolean as 0 or 1 (Kineto writes numbers, but ROCm's runtime events carry
/// string streams, and a hand-edited trace should not fail on it).
struct Int(i64);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Int, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                Ok(Int(v as i64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Int, E> {
                Ok(Int(v as i64))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Int, E> {
                Ok(Int(i64::from(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int, E> {
                Ok(Int(v.trim().parse().unwrap_or(NOT_A_NUMBER)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Int, E> {
                Ok(Int(0))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Int, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Int(0))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Int, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Int(0))
            }
        }
        d.deserialize_any(V)
    }
}

/// What a string arg that is not a number reads as.
const NOT_A_NUMBER: i64 = i64::MIN;

/// A top-level flag written as `1`/`0` or `true`/`false`.
struct Flag(Option<bool>);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flag, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Ok(Flag(match v {
            serde_json::Value::Bool(b) => Some(b),
            serde_json::Value::Number(n) => Some(n.as_f64().is_some_and(|f| f != 0.0)),
            _ => None,
        }))
    }
}

/// Microseconds as written, in integer nanoseconds (rounded half away from zero past the third
/// decimal), and whether the number was written as a double (with a point or an exponent).
struct Nanos(i64, bool);

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Nanos, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Nanos;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a time in microseconds")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Nanos, E> {
                let text = std::str::from_utf8(v).map_err(E::custom)?;
                let double = text.contains(['.', 'e', 'E']);
                micros_text_to_ns(text)
                    .map(|ns| Nanos(ns, double))
                    .ok_or_else(|| E::custom(format!("{text} is not a time in microseconds")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Nanos, E> {
                micros_text_to_ns(v.trim())
                    .map(|ns| Nanos(ns, true))
                    .ok_or_else(|| E::custom(format!("{v:?} is not a time in microseconds")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Nanos, E> {
                Ok(Nanos((v as i64).saturating_mul(1000), false))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Nanos, E> {
                Ok(Nanos(v.saturating_mul(1000), false))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Nanos, E> {
                Ok(Nanos((v * 1000.0).round() as i64, true))
            }
        }
        d.deserialize_newtype_struct(profkit_json::RAW_NUMBER_TOKEN, V)
    }
}

/// Decimal microseconds to nanoseconds: exact for plain decimals, through a double otherwise.
pub(crate) fn micros_text_to_ns(text: &str) -> Option<i64> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let plain = !int.is_empty()
        && int.len() <= 16
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit());
    if !plain {
        let v: f64 = text.parse().ok()?;
        return v.is_finite().then(|| (v * 1000.0).round() as i64);
    }
    let Some(mut ns) = int.parse::<i64>().ok().and_then(|i| i.checked_mul(1000)) else {
        let v: f64 = text.parse().ok()?;
        return v.is_finite().then(|| (v * 1000.0).round() as i64);
    };
    let digits = frac.as_bytes();
    let mut scale = 100;
    for &b in digits.iter().take(3) {
        ns = ns.saturating_add(i64::from(b - b'0') * scale);
        scale /= 10;
    }
    if digits.get(3).is_some_and(|&b| b >= b'5') {
        ns = ns.saturating_add(1);
    }
    Some(if negative { -ns } else { ns })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_exact_nanoseconds() {
        assert_eq!(
            micros_text_to_ns("5041263328831.082"),
            Some(5_041_263_328_831_082)
        );
        assert_eq!(micros_text_to_ns("1.5"), Some(1500));
        assert_eq!(micros_text_to_ns("7"), Some(7000));
        assert_eq!(micros_text_to_ns("0.0005"), Some(1));
        assert_eq!(micros_text_to_ns("-2.25"), Some(-2250));
        assert_eq!(micros_text_to_ns("1e3"), Some(1_000_000));
        assert_eq!(
            micros_text_to_ns("1694039994127018"),
            Some(1_694_039_994_127_018_000)
        );
        assert_eq!(
            micros_text_to_ns("9000000000000000"),
            Some(9_000_000_000_000_000_000)
        );
        assert_eq!(micros_text_to_ns("x"), None);
    }

    #[test]
    fn overloads_split_from_operator_names() {
        assert_eq!(
            split_overload("aten::add.Tensor"),
            Some(("aten::add", "Tensor"))
        );
        assert_eq!(split_overload("a::b::c.out"), Some(("a::b::c", "out")));
        assert_eq!(split_overload("aten::add"), None);
        assert_eq!(split_overload("Optimizer.step#Adam.step"), None);
        assert_eq!(split_overload("aten::add."), None);
        assert_eq!(split_overload("x::y.z.w"), None);
        assert_eq!(
            split_overload("autograd::engine::evaluate_function: a.b"),
            None
        );
    }

    #[test]
    fn reads_events_args_and_flags() {
        let text = br#"{"schemaVersion": 1, "profile_memory": 1, "deviceProperties": [{}],
          "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 10.5, "dur": 2,
             "args": {"External id": 3, "Input Dims": [[2, 3], [3, 4], [[1], [2]]], "Ev Idx": 1}},
            {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 11,
             "args": {"Bytes": -64, "Device Type": 0}},
            {"ph": "s", "id": 1, "pid": 1, "tid": 2, "ts": 1, "cat": "fwdbwd", "name": "fwdbwd"},
            {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1, "dur": 100}
          ]}"#;
        let trace = read_trace(&text[..]).unwrap();
        assert_eq!(trace.events.len(), 3);
        let mm = &trace.events[0];
        assert_eq!((mm.ts, mm.dur, mm.external_id), (10_500, 2000, Some(3)));
        assert_eq!(trace.str(mm.input_shapes.unwrap()), "[[2, 3], [3, 4], []]");
        assert_eq!(trace.events[1].bytes, -64);
        assert!(trace.events[1].instant);
        assert_eq!(trace.events[2].cat, Category::TraceSpan);
        assert!(trace.events[2].pid < 0);
        assert_eq!(trace.meta.profile_memory, Some(true));
        assert_eq!(trace.meta.device_properties, 1);
    }
}

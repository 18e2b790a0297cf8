//! Paddle's legacy `Profile` as the Chrome trace its `tools/timeline.py` writes, byte for byte.
//!
//! timeline.py gives every (profile key, `device_id`, kind) a process id, from 0 in first-seen
//! order: CPU events make `<key>:cpu:block:<device_id>` (`<key>:cuda_api` for device id -1), GPU
//! kernels `<key>:gpu:<device_id>`; a profile with memory events adds `memory usage on ...`
//! processes for each place seen and for device 0 of every place. Each event becomes a complete
//! event on thread `sub_device_id` whose `ts` is its start in nanoseconds and whose `dur` is its
//! length in nanoseconds as a float: Chrome reads both as microseconds, so the timeline is
//! stretched a thousand times (profkit's Chrome conversion of a `Profile`, through the XSpace,
//! has the right microseconds; this one is for tooling that expects timeline.py's file). Memory
//! becomes one `Memory` counter per profile, the running total of allocations minus frees over
//! every place. The JSON is Python's compact `json.dumps`, non-ASCII escaped, without a final
//! newline. A single profile is keyed `trainer`; several are keyed as timeline.py's
//! `--profile_path trainer0=a.pb,trainer1=b.pb` keys them.
//!
//! timeline.py reads the file with Python's protobuf, which reads an enum value the schema does
//! not know as the field's default; profkit does the same. Where timeline.py fails (an event of a
//! type it has no process for, a memory event on a place it does not name), the conversion fails
//! with the reason rather than guessing.

use std::collections::HashMap;
use std::io::Write;

use profkit_events::paddle::legacy::Profile;

use crate::error::{Error, Result};
use profkit_json::write::{push_json_str, push_py_float};

/// The key timeline.py gives a single profile.
pub const SINGLE_KEY: &str = "trainer";

/// Profiles under their keys, in the order timeline.py's dictionary holds them: a key given twice
/// keeps its first position and takes the later profile, as a Python `dict` does.
pub fn keyed<P>(pairs: impl IntoIterator<Item = (String, P)>) -> Vec<(String, P)> {
    let mut out: Vec<(String, P)> = Vec::new();
    for (key, profile) in pairs {
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = profile,
            None => out.push((key, profile)),
        }
    }
    out
}

/// The kinds timeline.py tells apart: the legacy `Event.EventType` values its schema knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Cpu,
    GpuKernel,
}

/// `Event.type` as Python's protobuf reads it: values the schema lacks read as the default, CPU.
fn event_type(code: Option<i32>) -> i32 {
    match code.unwrap_or(0) {
        c @ 0..=2 => c,
        _ => 0,
    }
}

/// `MemEvent.place` as Python's protobuf reads it (unknown values read as `CUDAPlace`).
fn place(code: Option<i32>) -> i32 {
    match code.unwrap_or(0) {
        c @ 0..=4 => c,
        _ => 0,
    }
}

/// The name timeline.py gives a memory place, `None` for a place its table lacks (`XPUPlace`).
fn place_name(code: i32) -> Option<&'static str> {
    match code {
        0 => Some("GPU"),
        1 => Some("CPU"),
        2 => Some("CUDAPinnedPlace"),
        4 => Some("NPU"),
        _ => None,
    }
}

/// Writes the timeline of `profiles` (key, profile), as [`keyed`] orders them.
pub fn write_timeline<W: Write>(profiles: &[(String, &Profile)], mut out: W) -> Result<()> {
    let mut metadata = String::new();
    let mut events = String::new();
    let mut next_pid: u64 = 0;
    let mut devices: HashMap<(usize, i64, Kind), u64> = HashMap::new();
    let mut memory: HashMap<(usize, u32, &'static str), u64> = HashMap::new();
    let emit_pid = |metadata: &mut String, name: &str, pid: u64| {
        if !metadata.is_empty() {
            metadata.push(',');
        }
        metadata.push_str("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
        metadata.push_str(&pid.to_string());
        metadata.push_str(",\"args\":{\"name\":");
        push_json_str(metadata, name);
        metadata.push_str("}}");
    };

    // `_allocate_pids`.
    for (k, (key, profile)) in profiles.iter().enumerate() {
        for event in &profile.events {
            let device = event.device_id.unwrap_or(0);
            let kind = match event_type(event.r#type) {
                0 => Kind::Cpu,
                1 => Kind::GpuKernel,
                _ => continue,
            };
            if devices.contains_key(&(k, device, kind)) {
                continue;
            }
            let pid = next_pid;
            next_pid += 1;
            devices.insert((k, device, kind), pid);
            let name = match kind {
                Kind::Cpu if device == -1 => format!("{key}:cuda_api"),
                Kind::Cpu => format!("{key}:cpu:block:{device}"),
                Kind::GpuKernel => format!("{key}:gpu:{device}"),
            };
            emit_pid(&mut metadata, &name, pid);
        }
        for mem in &profile.mem_events {
            let device = mem.device_id.unwrap_or(0);
            let label = match place(mem.place) {
                0 => Some(("GPU", "gpu")),
                1 => Some(("CPU", "cpu")),
                2 => Some(("CUDAPinnedPlace", "cudapinnedplace")),
                4 => Some(("NPU", "npu")),
                _ => None,
            };
            if let Some((place, label)) = label {
                if let std::collections::hash_map::Entry::Vacant(slot) =
                    memory.entry((k, device, place))
                {
                    let pid = next_pid;
                    next_pid += 1;
                    slot.insert(pid);
                    emit_pid(
                        &mut metadata,
                        &format!("memory usage on {key}:{label}:{device}"),
                        pid,
                    );
                }
            }
            for (place, label) in [
                ("CPU", "cpu"),
                ("GPU", "gpu"),
                ("CUDAPinnedPlace", "cudapinnedplace"),
                ("NPU", "npu"),
            ] {
                if let std::collections::hash_map::Entry::Vacant(slot) = memory.entry((k, 0, place))
                {
                    let pid = next_pid;
                    next_pid += 1;
                    slot.insert(pid);
                    emit_pid(
                        &mut metadata,
                        &format!("memory usage on {key}:{label}:0"),
                        pid,
                    );
                }
            }
        }
    }

    // `_allocate_events`: `type` keeps its value from the previous event when an event has
    // neither known kind.
    for (k, (key, profile)) in profiles.iter().enumerate() {
        let mut kind: Option<Kind> = None;
        for (index, event) in profile.events.iter().enumerate() {
            match event_type(event.r#type) {
                0 => kind = Some(Kind::Cpu),
                1 => kind = Some(Kind::GpuKernel),
                _ => {}
            }
            let device = event.device_id.unwrap_or(0);
            let pid = kind
                .and_then(|kind| devices.get(&(k, device, kind)))
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                        "profile {key:?}: events[{index}] has type {} (NPUKernel), which timeline.py has no process for",
                        event.r#type.unwrap_or(0)
                    ))
                })?;
            let name = event.name.as_deref().unwrap_or("");
            let start = event.start_ns.unwrap_or(0);
            let end = event.end_ns.unwrap_or(0);
            let duration = (i128::from(end) - i128::from(start)) as f64;
            if !events.is_empty() {
                events.push(',');
            }
            events.push_str("{\"ph\":\"X\",\"cat\":\"Op\",\"name\":");
            push_json_str(&mut events, name);
            events.push_str(&format!(
                ",\"pid\":{pid},\"tid\":{},\"ts\":{start},\"dur\":",
                event.sub_device_id.unwrap_or(0)
            ));
            push_py_float(&mut events, duration);
            events.push_str(",\"args\":{\"name\":");
            push_json_str(&mut events, name);
            let bytes = event.memcopy.as_ref().and_then(|m| m.bytes).unwrap_or(0);
            if bytes > 0 {
                events.push_str(&format!(",\"mem_bytes\":{bytes}"));
            }
            if let Some(detail) = event.detail_info.as_deref().filter(|d| !d.is_empty()) {
                events.push_str(",\"detail_info\":");
                push_json_str(&mut events, detail);
            }
            events.push_str("}}");
        }
    }

    // `_allocate_memory_event`: one running total per profile, over every place.
    for (k, (key, profile)) in profiles.iter().enumerate() {
        let mut changes: Vec<(u64, i128, u64)> = Vec::with_capacity(profile.mem_events.len() * 2);
        for (index, mem) in profile.mem_events.iter().enumerate() {
            let code = place(mem.place);
            let device = mem.device_id.unwrap_or(0);
            let pid = place_name(code)
                .and_then(|p| memory.get(&(k, device, p)))
                .copied()
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                        "profile {key:?}: mem_events[{index}] is on place {code} (XPUPlace), which timeline.py has no process for"
                    ))
                })?;
            let bytes = i128::from(mem.bytes.unwrap_or(0));
            changes.push((mem.start_ns.unwrap_or(0), bytes, pid));
            changes.push((mem.end_ns.unwrap_or(0), -bytes, pid));
        }
        // Python's sort is stable.
        changes.sort_by_key(|c| c.0);
        let mut total: i128 = 0;
        let mut i = 0;
        while let Some(&(_, size, _)) = changes.get(i) {
            total += size;
            while let (Some(a), Some(b)) = (changes.get(i), changes.get(i + 1)) {
                if a.0 != b.0 {
                    break;
                }
                total += b.1;
                i += 1;
            }
            if let Some(&(time, _, pid)) = changes.get(i) {
                if !events.is_empty() {
                    events.push(',');
                }
                events.push_str(&format!(
                    "{{\"ph\":\"C\",\"cat\":\"Memory\",\"name\":\"Memory\",\"pid\":{pid},\"tid\":0,\"ts\":{time},\"args\":{{\"0\":{total}}}}}"
                ));
            }
            i += 1;
        }
    }

    out.write_all(b"{\"traceEvents\":[")?;
    out.write_all(metadata.as_bytes())?;
    if !metadata.is_empty() && !events.is_empty() {
        out.write_all(b",")?;
    }
    out.write_all(events.as_bytes())?;
    out.write_all(b"]}")?;
    out.flush()?;
    Ok(())
}

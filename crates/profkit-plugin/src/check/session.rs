//! One profiling session as the checker drives it, and what it recorded for the checks.

use std::time::Duration;

use profkit_xplane::XSpace;

use super::calls::{Runner, busy_work};
use crate::Result;
use crate::host::{DEFAULT_MAX_XSPACE_SIZE, PluginProfiler};
use crate::status::HostStatus;

/// What one session did.
#[derive(Default)]
pub(super) struct SessionRun {
    pub(super) index: u32,
    /// The first error, as a sentence; the session ended there.
    pub(super) failure: Option<String>,
    /// Whether the first collect call wrote the size (`None`: not reached).
    pub(super) size_written: Option<bool>,
    /// The size from the first call.
    pub(super) size: usize,
    /// The status of the second call.
    pub(super) second_status: Option<Result<()>>,
    /// The size after the second call.
    pub(super) second_size: Option<usize>,
    /// Whether the second call wrote past the buffer it was told about.
    pub(super) overran: bool,
    /// What the bytes held (`None` for no data), or why they did not parse.
    pub(super) parsed: Option<std::result::Result<Parsed, String>>,
    /// When start was called, in nanoseconds since the Unix epoch.
    pub(super) start_time_ns: u64,
}

impl SessionRun {
    pub(super) fn events(&self) -> usize {
        match &self.parsed {
            Some(Ok(parsed)) => parsed.events,
            _ => 0,
        }
    }
}

/// What a collected XSpace held: kept instead of the XSpace, so the checker's own memory does not
/// grow with the sessions it runs.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    pub(super) planes: Vec<String>,
    pub(super) events: usize,
    /// profkit's validation problems once the space is rebased to the session start, as
    /// TensorFlow does (plugins write absolute line timestamps).
    pub(super) problems: Vec<String>,
}

impl Parsed {
    pub(super) fn of(mut space: XSpace, start_time_ns: u64) -> Parsed {
        let start = i64::try_from(start_time_ns).unwrap_or(i64::MAX);
        profkit_xplane::utils::normalize_space_timestamps(&mut space, start);
        Parsed {
            planes: space.planes.iter().map(|p| p.name.clone()).collect(),
            events: count_events(&space),
            problems: profkit_xplane::validate(&space)
                .iter()
                .filter(|p| p.severity == profkit_xplane::Severity::Error)
                .map(ToString::to_string)
                .collect(),
        }
    }
}

fn count_events(space: &XSpace) -> usize {
    space
        .planes
        .iter()
        .flat_map(|p| &p.lines)
        .map(|l| l.events.len())
        .sum()
}

/// Bytes after the buffer the plugin is told about, to see whether it writes past the end.
const GUARD: usize = 64;
const GUARD_BYTE: u8 = 0xA5;

impl Runner<'_> {
    /// One session: start, optional work, stop, the size call and the copy call, with the buffer
    /// `shortfall` bytes smaller than the size.
    pub(super) fn session(
        &mut self,
        profiler: &mut PluginProfiler,
        index: u32,
        work: Option<Duration>,
        shortfall: usize,
    ) -> SessionRun {
        let mut run = SessionRun {
            index,
            ..Default::default()
        };
        run.start_time_ns = crate::host::now_ns();
        if let Err(e) = self.call("start", Some(index), || profiler.start()) {
            run.failure = Some(e.to_string());
            return run;
        }
        if let Some(work) = work {
            busy_work(work);
        }
        if let Err(e) = self.call("stop", Some(index), || profiler.stop()) {
            run.failure = Some(e.to_string());
            return run;
        }
        let mut status = HostStatus::new();
        let first = self.call("collect_data_xspace (size)", Some(index), || {
            profiler.collect_size(&mut status)
        });
        run.size_written = Some(first.size.is_some());
        if let Err(e) = first.status {
            run.failure = Some(format!("{e} (first call)"));
            return run;
        }
        let Some(size) = first.size else {
            run.failure = Some("collect_data_xspace left the size unwritten".into());
            return run;
        };
        run.size = size;
        if size == 0 {
            return run;
        }
        if size > DEFAULT_MAX_XSPACE_SIZE {
            run.failure = Some(format!(
                "collect_data_xspace asks for {size} bytes, over the 2 GiB protobuf limit"
            ));
            return run;
        }
        let declared = size - shortfall.min(size);
        let mut buffer = vec![0u8; declared + GUARD];
        if let Some(guard) = buffer.get_mut(declared..) {
            guard.fill(GUARD_BYTE);
        }
        let second = self.call("collect_data_xspace (copy)", Some(index), || {
            profiler.collect_into(&mut buffer, declared, &mut status)
        });
        run.overran = buffer
            .get(declared..)
            .is_some_and(|g| g.iter().any(|&b| b != GUARD_BYTE));
        run.second_size = second.size;
        let failed = second.status.is_err();
        run.second_status = Some(second.status);
        if shortfall > 0 || failed {
            if failed && shortfall == 0 {
                if let Some(Err(e)) = &run.second_status {
                    run.failure = Some(format!("{e} (second call)"));
                }
            }
            return run;
        }
        buffer.truncate(size);
        run.parsed = Some(
            profkit_xplane::decode(buffer)
                .map(|space| Parsed::of(space, run.start_time_ns))
                .map_err(|e| e.to_string()),
        );
        run
    }
}

//! An example TensorFlow profiler plugin written in safe Rust with `profkit-plugin`.
//!
//! It records what the scheduler did while profiling ran, from Linux's `/proc`: for every thread
//! of the process that loaded it (inside TensorFlow: TensorFlow's own worker threads) the
//! intervals in which it ran, with the CPU time it used; and for every CPU of the machine how busy
//! it was. Device type `PROFKIT_SAMPLER`, one plane `/device:CUSTOM:0`:
//!
//! - a line per thread (id: the thread id, name: the thread's name), with `running` events over
//!   the sampling intervals in which the thread ran at least 100 µs (consecutive intervals merged),
//!   each with the stats `cpu_time_ns` and `cpu_share`;
//! - a line per CPU (id: 2^32 + CPU number, name `CPU n`), with a `busy` event per 100 ms
//!   interval in which it was busy, with `busy_share`, `user_share`, `system_share` and
//!   `iowait_share`;
//! - plane stats: `sample_interval_ns`, `samples`, `cpu_count`.
//!
//! Threads are sampled every 10 ms (`PROFKIT_SAMPLER_INTERVAL_MS` overrides it) by a thread of the
//! plugin's own, which appears in the trace too: its cost is part of the picture. Without `/proc`
//! (no "device"), start and stop do nothing and collect returns size 0; so does a session in which
//! nothing ran long enough to record.
//!
//! ```
//! use profkit_plugin::plugin::Profiler;
//! use profkit_plugin_example::ThreadSampler;
//!
//! let mut sampler = ThreadSampler::new()?;
//! sampler.start()?;
//! let spin = std::time::Instant::now();
//! while spin.elapsed() < std::time::Duration::from_millis(50) { std::hint::black_box(0); }
//! sampler.stop()?;
//! let space = sampler.collect()?.expect("this thread ran");
//! assert_eq!(space.planes[0].name, "/device:CUSTOM:0");
//! # Ok::<(), profkit_plugin::Error>(())
//! ```

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use profkit_plugin::abi::Code;
use profkit_plugin::plugin::Profiler;
use profkit_plugin::{Error, PlaneBuilder, Result, XPlane, XSpace};

/// The plane the plugin writes.
pub const PLANE_NAME: &str = "/device:CUSTOM:0";

/// Line ids of CPUs start here, above any thread id (Linux's `pid_max` is at most 2^22).
pub const CPU_LINE_BASE: i64 = 1 << 32;

/// Threads that ran less than this in an interval are not recorded as running in it.
const MIN_RUN: Duration = Duration::from_micros(100);

/// CPUs are sampled every this many thread samples (the kernel counts CPU time in 10 ms ticks).
const CPU_EVERY: u32 = 10;

const DEFAULT_INTERVAL: Duration = Duration::from_millis(10);

/// The plugin's profiler: a sampling thread between `start` and `stop`.
#[derive(Debug)]
pub struct ThreadSampler {
    interval: Duration,
    running: Option<Running>,
    finished: Option<Recording>,
}

#[derive(Debug)]
struct Running {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<Recording>,
}

impl Profiler for ThreadSampler {
    const DEVICE_TYPE: &'static str = "PROFKIT_SAMPLER";

    fn new() -> Result<Self> {
        let interval = std::env::var("PROFKIT_SAMPLER_INTERVAL_MS")
            .ok()
            .and_then(|ms| ms.parse::<u64>().ok())
            .filter(|&ms| ms > 0)
            .map_or(DEFAULT_INTERVAL, Duration::from_millis);
        Ok(ThreadSampler {
            interval,
            running: None,
            finished: None,
        })
    }

    fn start(&mut self) -> Result<()> {
        self.finished = None;
        self.shut_down()?;
        if !std::path::Path::new("/proc/self/task").is_dir() {
            // No "device" to profile: do nothing, as the RFC asks.
            return Ok(());
        }
        let mut recording = Recording::begin();
        let interval = self.interval;
        let (stop, stopped) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("profkit-sampler".into())
            .spawn(move || {
                loop {
                    match stopped.recv_timeout(interval) {
                        Err(RecvTimeoutError::Timeout) => recording.sample(false),
                        // Stop asked (or the profiler is gone): a last sample, then hand over.
                        _ => {
                            recording.sample(true);
                            return recording;
                        }
                    }
                }
            })
            .map_err(|e| {
                Error::status(Code::RESOURCE_EXHAUSTED, format!("no sampler thread: {e}"))
            })?;
        self.running = Some(Running { stop, handle });
        Ok(())
    }

    fn stop(&mut self) -> Result<()> {
        self.finished = self.shut_down()?;
        Ok(())
    }

    fn collect(&mut self) -> Result<Option<XSpace>> {
        Ok(self.finished.take().and_then(Recording::into_xspace))
    }
}

impl ThreadSampler {
    /// Stops the sampling thread, if any, and returns what it recorded.
    fn shut_down(&mut self) -> Result<Option<Recording>> {
        let Some(running) = self.running.take() else {
            return Ok(None);
        };
        let _ = running.stop.send(());
        running
            .handle
            .join()
            .map(Some)
            .map_err(|_| Error::status(Code::INTERNAL, "the sampler thread panicked"))
    }
}

impl Drop for ThreadSampler {
    fn drop(&mut self) {
        let _ = self.shut_down();
    }
}

/// One thread's samples.
#[derive(Debug)]
struct ThreadTrack {
    name: String,
    last_cpu_ns: u64,
    /// (start, end, CPU time), nanoseconds since the session start.
    runs: Vec<(u64, u64, u64)>,
}

/// One CPU's samples.
#[derive(Debug, Default)]
struct CpuTrack {
    last: CpuTimes,
    /// (start, end, busy, user, system, iowait shares).
    busy: Vec<(u64, u64, [f64; 4])>,
}

/// A CPU's cumulative times from `/proc/stat`, in ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct CpuTimes {
    user: u64,
    system: u64,
    idle: u64,
    iowait: u64,
    total: u64,
}

/// What one session recorded.
#[derive(Debug)]
struct Recording {
    start_epoch_ns: u64,
    started: Instant,
    last_ns: u64,
    last_cpu_ns: u64,
    samples: u32,
    interval_ns: u64,
    threads: BTreeMap<i64, ThreadTrack>,
    cpus: BTreeMap<u32, CpuTrack>,
}

impl Recording {
    /// The first sample, taken on the thread calling start.
    fn begin() -> Recording {
        let start_epoch_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        let mut recording = Recording {
            start_epoch_ns,
            started: Instant::now(),
            last_ns: 0,
            last_cpu_ns: 0,
            samples: 0,
            interval_ns: 0,
            threads: BTreeMap::new(),
            cpus: BTreeMap::new(),
        };
        recording.sample_threads(0);
        recording.sample_cpus(0);
        recording
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn sample(&mut self, last: bool) {
        let now = self.now_ns();
        self.samples += 1;
        self.interval_ns = now / u64::from(self.samples);
        self.sample_threads(now);
        if last || self.samples % CPU_EVERY == 0 {
            self.sample_cpus(now);
        }
    }

    fn sample_threads(&mut self, now: u64) {
        let since = self.last_ns;
        let interval = now.saturating_sub(since);
        for (tid, cpu_ns) in thread_cpu_times() {
            let track = self.threads.entry(tid).or_insert_with(|| ThreadTrack {
                name: thread_name(tid),
                last_cpu_ns: cpu_ns,
                runs: Vec::new(),
            });
            let used = cpu_ns.saturating_sub(track.last_cpu_ns);
            track.last_cpu_ns = cpu_ns;
            if interval == 0 || used < MIN_RUN.as_nanos() as u64 {
                continue;
            }
            match track.runs.last_mut() {
                // Ran in the previous interval too: one longer event.
                Some((_, end, cpu)) if *end == since => {
                    *end = now;
                    *cpu += used;
                }
                _ => track.runs.push((since, now, used)),
            }
        }
        self.last_ns = now;
    }

    fn sample_cpus(&mut self, now: u64) {
        let since = self.last_cpu_ns;
        for (cpu, times) in cpu_times() {
            let track = self.cpus.entry(cpu).or_insert_with(|| CpuTrack {
                last: times,
                busy: Vec::new(),
            });
            let d = |now: u64, then: u64| now.saturating_sub(then) as f64;
            let total = d(times.total, track.last.total);
            let idle = d(times.idle, track.last.idle) + d(times.iowait, track.last.iowait);
            if total > 0.0 && total > idle && now > since {
                track.busy.push((
                    since,
                    now,
                    [
                        (total - idle) / total,
                        d(times.user, track.last.user) / total,
                        d(times.system, track.last.system) / total,
                        d(times.iowait, track.last.iowait) / total,
                    ],
                ));
            }
            track.last = times;
        }
        self.last_cpu_ns = now;
    }

    /// The plane, or `None` when nothing was recorded.
    fn into_xspace(self) -> Option<XSpace> {
        let has_runs = self.threads.values().any(|t| !t.runs.is_empty());
        let has_busy = self.cpus.values().any(|c| !c.busy.is_empty());
        if !has_runs && !has_busy {
            return None;
        }
        let line_ts = i64::try_from(self.start_epoch_ns).unwrap_or(i64::MAX);
        let ps = |ns: u64| i64::try_from(ns.saturating_mul(1000)).unwrap_or(i64::MAX);
        let mut plane = XPlane::default();
        let mut b = PlaneBuilder::new(&mut plane);
        b.set_name(PLANE_NAME)
            .add_stat("sample_interval_ns", self.interval_ns)
            .add_stat("samples", self.samples)
            .add_stat("cpu_count", self.cpus.len() as u64);
        for (tid, track) in self.threads.iter().filter(|(_, t)| !t.runs.is_empty()) {
            let mut line = b.line(*tid);
            line.set_name(track.name.clone())
                .set_display_name(format!("{} ({tid})", track.name))
                .set_timestamp_ns(line_ts);
            for &(start, end, cpu) in &track.runs {
                let wall = end.saturating_sub(start).max(1);
                line.add_event("running")
                    .set_offset_ps(ps(start))
                    .set_duration_ps(ps(wall))
                    .add_stat("cpu_time_ns", cpu)
                    .add_stat("cpu_share", cpu as f64 / wall as f64);
            }
        }
        for (cpu, track) in self.cpus.iter().filter(|(_, c)| !c.busy.is_empty()) {
            let mut line = b.line(CPU_LINE_BASE + i64::from(*cpu));
            line.set_name(format!("CPU {cpu}"))
                .set_timestamp_ns(line_ts);
            for &(start, end, [busy, user, system, iowait]) in &track.busy {
                line.add_event("busy")
                    .set_offset_ps(ps(start))
                    .set_duration_ps(ps(end.saturating_sub(start)))
                    .add_stat("busy_share", busy)
                    .add_stat("user_share", user)
                    .add_stat("system_share", system)
                    .add_stat("iowait_share", iowait);
            }
        }
        Some(XSpace {
            planes: vec![plane],
            ..Default::default()
        })
    }
}

/// CPU time used so far by every thread of this process, in nanoseconds.
fn thread_cpu_times() -> Vec<(i64, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let entry = entry.ok()?;
        let tid: i64 = entry.file_name().to_str()?.parse().ok()?;
        let path = entry.path();
        let cpu = std::fs::read_to_string(path.join("schedstat"))
            .ok()
            .and_then(|s| parse_schedstat(&s))
            .or_else(|| parse_stat_cpu_ns(&std::fs::read_to_string(path.join("stat")).ok()?))?;
        Some((tid, cpu))
    })
    .collect()
}

fn thread_name(tid: i64) -> String {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
        .map(|s| s.trim_end().to_owned())
        .unwrap_or_else(|_| format!("thread {tid}"))
}

/// The first field of `schedstat`: time spent on a CPU, in nanoseconds.
fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// `utime + stime` of a `stat` line, converted from ticks (Linux's USER_HZ is 100) to ns.
fn parse_stat_cpu_ns(text: &str) -> Option<u64> {
    // The command name is in parentheses and may hold spaces: fields count from after it.
    let rest = text.get(text.rfind(')')? + 1..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3 of the line, utime 14 and stime 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 10_000_000)
}

/// Per-CPU cumulative times from `/proc/stat`.
fn cpu_times() -> Vec<(u32, CpuTimes)> {
    std::fs::read_to_string("/proc/stat")
        .map(|s| parse_proc_stat(&s))
        .unwrap_or_default()
}

fn parse_proc_stat(text: &str) -> Vec<(u32, CpuTimes)> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu: u32 = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = fields.take(8).filter_map(|f| f.parse().ok()).collect();
            if v.len() < 5 {
                return None;
            }
            Some((
                cpu,
                CpuTimes {
                    user: v[0] + v[1],
                    system: v[2] + v.get(5).copied().unwrap_or(0) + v.get(6).copied().unwrap_or(0),
                    idle: v[3],
                    iowait: v[4],
                    total: v.iter().sum(),
                },
            ))
        })
        .collect()
}

profkit_plugin::export_profiler!(ThreadSampler);

#[cfg(test)]
mod tests {
    use super::*;
    use profkit_plugin::XLine;

    fn spin(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {
            std::hint::black_box(0u64);
        }
    }

    fn thread_line<'a>(space: &'a XSpace, name: &str) -> Option<&'a XLine> {
        space.planes[0].lines.iter().find(|l| l.name == name)
    }

    #[test]
    fn records_this_thread_running() {
        std::thread::Builder::new()
            .name("spinner".into())
            .spawn(|| {
                let mut s = ThreadSampler::new().unwrap();
                for _ in 0..2 {
                    s.start().unwrap();
                    spin(Duration::from_millis(60));
                    s.stop().unwrap();
                    let space = s.collect().unwrap().expect("data");
                    let line = thread_line(&space, "spinner").expect("the spinning thread");
                    assert!(!line.events.is_empty());
                    // Absolute epoch nanoseconds, which TensorFlow rebases to the session start;
                    // valid once rebased.
                    let start = line.timestamp_ns;
                    assert!(start > 1_600_000_000_000_000_000);
                    let mut rebased = space.clone();
                    profkit_plugin::xplane::utils::normalize_space_timestamps(&mut rebased, start);
                    assert_eq!(profkit_plugin::xplane::validate(&rebased), []);
                    assert!(s.collect().unwrap().is_none(), "collected once");
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn stop_without_start_and_collect_without_data() {
        let mut s = ThreadSampler::new().unwrap();
        s.stop().unwrap();
        assert!(s.collect().unwrap().is_none());
    }

    #[test]
    fn parses_proc_files() {
        assert_eq!(parse_schedstat("123456 789 10\n"), Some(123_456));
        let stat = "42 (a b) S 1 2 3 4 5 6 7 8 9 10 7 3 0 0";
        assert_eq!(parse_stat_cpu_ns(stat), Some(10 * 10_000_000));
        let cpus = parse_proc_stat(
            "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 0 1 10 2 0 0 0 0 0\ncpu1 x\nintr 5\n",
        );
        assert_eq!(cpus.len(), 1);
        assert_eq!(cpus[0].0, 0);
        assert_eq!(cpus[0].1.total, 14);
        assert_eq!(cpus[0].1.iowait, 2);
    }
}

//! Wall-clock and on-CPU time of single runs, and the summaries the benchmarks report.

use std::hint::black_box;
use std::time::Instant;

/// Seconds this thread has run on a CPU (the first field of `/proc/thread-self/schedstat`), the
/// counterpart of Python's `time.thread_time()`: unlike wall time it leaves out the time other
/// processes on the machine hold the CPU.
pub fn thread_cpu() -> Option<f64> {
    thread_cpu_ns().map(|ns| ns as f64 / 1e9)
}

/// [`thread_cpu`] in whole nanoseconds, as the kernel counts them.
pub fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Seconds this process has run on a CPU so far, user and system together (`utime` and `stime`
/// of `/proc/self/stat`, in clock ticks of 1/100 s): for a child that measures one whole run,
/// insensitive to other processes holding the CPU. NaN where `/proc` does not tell.
pub fn process_cpu() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

/// (wall, CPU) seconds for one run of `f`; its result is dropped after the clocks stop. CPU is
/// NaN where the system does not tell. The CPU time is the difference of whole nanoseconds, so
/// that it carries no rounding from subtracting two large second counts.
pub fn time_once<T>(f: impl FnOnce() -> T) -> (f64, f64) {
    let cpu = thread_cpu_ns();
    let start = Instant::now();
    let out = black_box(f());
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu, thread_cpu_ns()) {
        (Some(before), Some(after)) => after.saturating_sub(before) as f64 / 1e9,
        _ => f64::NAN,
    };
    drop(out);
    (wall, cpu)
}

/// The best (smallest) and the median of `times`; NaN for none.
pub fn best_median(times: &[f64]) -> (f64, f64) {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    let best = sorted.first().copied().unwrap_or(f64::NAN);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN);
    (best, median)
}

/// Wall-clock and on-CPU seconds of repeated runs of one operation.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// Wall-clock seconds of each run.
    pub wall: Vec<f64>,
    /// On-CPU seconds of each run.
    pub cpu: Vec<f64>,
}

impl Timings {
    /// Adds one run's (wall, CPU) seconds.
    pub fn push(&mut self, (wall, cpu): (f64, f64)) {
        self.wall.push(wall);
        self.cpu.push(cpu);
    }

    /// Best and median wall-clock seconds.
    pub fn wall(&self) -> (f64, f64) {
        best_median(&self.wall)
    }

    /// Best and median seconds on the CPU.
    pub fn cpu(&self) -> (f64, f64) {
        best_median(&self.cpu)
    }

    /// The runs and their summaries, for a results file.
    pub fn json(&self) -> serde_json::Value {
        let ((best, median), (cpu_best, cpu_median)) = (self.wall(), self.cpu());
        serde_json::json!({
            "best_s": best, "median_s": median, "cpu_best_s": cpu_best, "cpu_median_s": cpu_median,
            "wall_s": self.wall, "cpu_s": self.cpu,
        })
    }
}

/// The first line of `/proc/loadavg`, or an empty string: other work on the machine is what
/// spreads the timings, so results keep it beside the figures.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_and_median() {
        assert_eq!(best_median(&[5.0, 1.0, 4.0, 2.0]), (1.0, 4.0));
        let (b, m) = best_median(&[]);
        assert!(b.is_nan() && m.is_nan());
        let mut t = Timings::default();
        t.push((2.0, 1.0));
        t.push((1.0, 3.0));
        assert_eq!(t.wall().0, 1.0);
        assert_eq!(t.cpu().0, 1.0);
        assert_eq!(t.json()["best_s"], 1.0);
    }
}

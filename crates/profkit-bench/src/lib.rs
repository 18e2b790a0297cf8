//! What profkit's benchmark binaries share, so that a new benchmark is its own measurements and
//! little else:
//! - [`paths`]: the workspace root, `target/bench-data/`, writing data only when it changed;
//! - [`timing`]: wall and on-CPU seconds of one run, best and median of many, the load average;
//! - [`alloc`]: a counting global allocator for peak heap, and the peak resident set;
//! - [`child`]: a measurement in a fresh child process that reports `key=value` words or one
//!   JSON line;
//! - [`peer`]: a Python peer that times its side of a comparison on request, in turn with ours;
//! - [`real_shaped`]: a TensorFlow host profile shaped as a real one, of any size (the
//!   `real-shaped` binary writes one to a file).
//!
//! No figure a benchmark prints is a pass/fail threshold: `docs/performance.md` records them.
//!
//! ```
//! let (wall, cpu) = profkit_bench::timing::time_once(|| (0..1000u64).sum::<u64>());
//! assert!(wall >= 0.0 && !cpu.is_sign_negative());
//! let (best, median) = profkit_bench::timing::best_median(&[3.0, 1.0, 2.0]);
//! assert_eq!((best, median), (1.0, 2.0));
//! ```

pub mod alloc;
pub mod child;
pub mod paths;
pub mod peer;
pub mod real_shaped;
pub mod timing;

/// Whether cargo asked for a real benchmark run (`cargo bench` passes `--bench`); otherwise the
/// binary runs as a quick smoke test (`cargo test --benches`), as criterion does.
pub fn bench_mode() -> bool {
    std::env::args().any(|a| a == "--bench")
}

//! How many threads a command runs on: `--threads N`, else the `PROFKIT_THREADS` environment
//! variable, else every core. A command runs inside a rayon pool of that many threads, where the
//! libraries' parallel work (the trace viewer's pieces of lines, ...) finds it; one pool per size
//! is kept for the life of the process, since the Python package runs commands in-process again
//! and again. Output never depends on the count: work is split in pieces whose results are
//! written in order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::Failure;

/// The environment variable that sets the thread count when `--threads` does not.
pub(crate) const THREADS_ENV: &str = "PROFKIT_THREADS";

/// The stack of a pool thread: commands run on one, so it gets what a main thread has and more
/// (the readers' recursion is bounded by their depth limits, well within it).
const STACK_BYTES: usize = 16 << 20;

/// The pools made so far, by thread count.
static POOLS: Mutex<Option<HashMap<usize, Arc<ThreadPool>>>> = Mutex::new(None);

/// The thread count: `flag`, else the environment's, else every core (0 also means every core).
pub(crate) fn count(flag: Option<usize>) -> Result<usize, Failure> {
    let asked = match flag {
        Some(n) => n,
        None => match std::env::var(THREADS_ENV) {
            Ok(text) if !text.trim().is_empty() => text.trim().parse().map_err(|_| {
                Failure::Usage(format!(
                    "{THREADS_ENV}={text:?} is not a thread count (a whole number; 0 for every core)"
                ))
            })?,
            _ => 0,
        },
    };
    Ok(if asked == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        asked
    })
}

/// The pool of `threads` threads, made on first use.
pub(crate) fn pool(threads: usize) -> Result<Arc<ThreadPool>, Failure> {
    let mut pools = POOLS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let pools = pools.get_or_insert_with(HashMap::new);
    if let Some(pool) = pools.get(&threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(STACK_BYTES)
        .thread_name(|i| format!("profkit-{i}"))
        .build()
        .map_err(|e| Failure::Usage(format!("cannot start {threads} threads: {e}")))?;
    let pool = Arc::new(pool);
    pools.insert(threads, Arc::clone(&pool));
    Ok(pool)
}

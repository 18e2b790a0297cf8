//! A counting global allocator, for the peak heap a piece of code needs, and the peak resident
//! set the OS saw.
//!
//! A bench binary installs it with
//! `#[global_allocator] static ALLOCATOR: profkit_bench::alloc::Counting = profkit_bench::alloc::Counting;`
//! and measures with [`measure`]. Measure in a fresh child process ([`crate::child`]) so that
//! the generator's memory and earlier measurements cannot raise the peak.

// `GlobalAlloc` is an unsafe trait; this module is the one place outside the C ABI crate that
// implements it, for benchmarks only (the crate is not published), and every library crate
// still forbids unsafe code.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Counts live heap bytes (as requested by callers, not as rounded by the system allocator) and
/// their peak, and forwards everything to the system allocator.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static COUNTING: AtomicBool = AtomicBool::new(true);

fn grew(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
}

fn shrank(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        LIVE.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Stops (or restarts) the counting: a child that only times its work turns it off at its
/// start, so that the side that allocates more pays no atomic operations for it. Figures read
/// after counting was off are meaningless.
pub fn set_counting(on: bool) {
    COUNTING.store(on, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so `System`'s
// guarantees are ours; the counting touches only atomics and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract (non-zero size), which we pass on.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (through us) with `layout`, as the caller
        // guarantees.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout` and `new_size` is valid for it, as the
        // caller guarantees.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            // Counted as the new size only: large blocks are moved by remapping pages, without
            // holding old and new copies at once.
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        new
    }
}

/// Heap bytes live now (zero unless [`Counting`] is the global allocator).
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Runs `f` and returns its result with the peak of heap bytes above what was live when it
/// started.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = live();
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

/// The process's peak resident set in bytes (`VmHWM` of `/proc/self/status`), where `/proc`
/// has it.
pub fn vm_hwm() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

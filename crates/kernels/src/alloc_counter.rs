//! A counting global allocator for tests (cargo feature `alloc-counter`): proves that a
//! piece of code does not touch the heap, e.g. that the compression step loop allocates
//! nothing.
//!
//! [`CountingAllocator`] forwards every request to [`System`] and counts the calls that
//! obtain memory (`alloc`, `alloc_zeroed`, `realloc`), process-wide and per thread, and
//! the bytes live at once (the heap's high-water mark, for memory estimates).
//! Install it in a test binary of its own (it replaces the allocator of the whole
//! binary), then compare counts before and after the code under test:
//!
//! ```ignore
//! use sep_kernels::CountingAllocator;
//!
//! #[global_allocator]
//! static ALLOC: CountingAllocator = CountingAllocator;
//!
//! #[test]
//! fn no_allocation() {
//!     let mut v = Vec::with_capacity(16);
//!     let before = CountingAllocator::allocations();
//!     v.push(1); // within capacity: no allocation
//!     assert_eq!(CountingAllocator::allocations() - before, 0);
//! }
//! ```
//!
//! The process-wide count includes every thread (the kernels' pool workers too, which is
//! what a "no allocation in the loop" test wants); run such a test as the only test of
//! its binary, or use the per-thread count, so that the test harness's own threads do
//! not interfere.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Calls that obtained memory, all threads.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// Bytes requested by those calls, all threads.
static BYTES: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated and not yet freed, all threads.
static LIVE: AtomicU64 = AtomicU64::new(0);
/// The most `LIVE` has been since the last [`CountingAllocator::reset_peak`].
static PEAK: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Calls that obtained memory on this thread. A `const` initialiser with no
    /// destructor: reading it never allocates, so the allocator may use it.
    static THREAD_ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting the calls that obtain memory (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAllocator;

impl CountingAllocator {
    /// Calls to `alloc`, `alloc_zeroed` and `realloc` so far, on every thread.
    pub fn allocations() -> u64 {
        ALLOCATIONS.load(Ordering::SeqCst)
    }

    /// Bytes requested by those calls so far (for `realloc`, the new size), every thread.
    pub fn bytes() -> u64 {
        BYTES.load(Ordering::SeqCst)
    }

    /// Calls to `alloc`, `alloc_zeroed` and `realloc` so far on the calling thread.
    pub fn thread_allocations() -> u64 {
        THREAD_ALLOCATIONS.try_with(Cell::get).unwrap_or(0)
    }

    /// Bytes allocated and not yet freed, every thread (the heap in use).
    pub fn live_bytes() -> u64 {
        LIVE.load(Ordering::SeqCst)
    }

    /// The most bytes that were live at once since the last
    /// [`reset_peak`](Self::reset_peak) (or the start): the heap's high-water mark.
    pub fn peak_bytes() -> u64 {
        PEAK.load(Ordering::SeqCst)
    }

    /// Starts a new high-water mark at the bytes live now.
    pub fn reset_peak() {
        PEAK.store(LIVE.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    fn grow(by: usize) {
        let live = LIVE.fetch_add(by as u64, Ordering::SeqCst) + by as u64;
        PEAK.fetch_max(live, Ordering::SeqCst);
    }

    fn shrink(by: usize) {
        LIVE.fetch_sub(by as u64, Ordering::SeqCst);
    }

    fn count(size: usize) {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        BYTES.fetch_add(size as u64, Ordering::SeqCst);
        // During thread teardown the slot may be gone; the global count still holds.
        let _ = THREAD_ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counting touches only atomics and a `const` thread-local
// `Cell`, neither of which allocates or unwinds.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::count(layout.size());
        Self::grow(layout.size());
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::count(layout.size());
        Self::grow(layout.size());
        // SAFETY: the caller's contract for `alloc_zeroed` is `System.alloc_zeroed`'s.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        Self::shrink(layout.size());
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::count(new_size);
        // Counted as the new block allocated before the old one is freed, which is
        // what a moving realloc holds at its peak.
        Self::grow(new_size);
        Self::shrink(layout.size());
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`; the
        // caller's contract for `new_size` is `System.realloc`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

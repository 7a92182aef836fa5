//! A deterministic parallel-for: fixed chunks of equally long slices, spread over the
//! kernels' thread pool.
//!
//! [`for_each_chunk_mut`] cuts `0..len` into consecutive chunks of a size the *caller*
//! fixes (never the thread count, the CPU or the pool's state) and runs the closure
//! once per chunk, on whichever thread takes it. For elementwise work (each output
//! element computed from the same-index inputs only) the result is therefore the same
//! bits for every thread count; the chunk size does not matter either. Work that
//! combines elements across chunk borders must not use it.
//!
//! ```
//! let mut x = vec![1.0f32; 100_000];
//! let mut y = vec![2.0f32; 100_000];
//! sep_kernels::for_each_chunk_mut([&mut x[..], &mut y[..]], 1 << 14, |offset, [x, y]| {
//!     for (i, (a, b)) in x.iter_mut().zip(y.iter_mut()).enumerate() {
//!         *a += *b * (offset + i) as f32;
//!         *b = 0.0;
//!     }
//! });
//! assert_eq!(x[3], 7.0);
//! assert!(y.iter().all(|&b| b == 0.0));
//! ```

use crate::pool::{num_threads, run_parts};

/// `N` base pointers of slices that the parts of one job split between them.
struct Bases<T, const N: usize>([*mut T; N]);

// SAFETY: the pointers come from `&mut [T]` borrows held for the whole job, and the
// parts hand out disjoint chunks of them; `T: Send` lets a chunk be used on another
// thread.
unsafe impl<T: Send, const N: usize> Sync for Bases<T, N> {}

/// Calls `f(offset, chunks)` for `offset` = `0, chunk, 2 * chunk, ...` below the common
/// length of `bufs`, where `chunks[i]` is `bufs[i][offset..(offset + chunk).min(len)]`.
///
/// Chunks run on up to [`num_threads`](crate::num_threads) threads (the caller
/// included) when there are at least two of them, in any order and on any thread; a
/// single chunk runs on the calling thread. The split depends on `len` and `chunk`
/// only. Pick `chunk` so that one chunk is worth waking a thread for (about 10^4
/// simple elementwise operations or more).
///
/// # Panics
/// If the slices differ in length or `chunk` is 0; a panic in `f` is re-raised here
/// after every chunk has finished.
pub fn for_each_chunk_mut<T: Send, const N: usize>(
    bufs: [&mut [T]; N],
    chunk: usize,
    f: impl Fn(usize, [&mut [T]; N]) + Sync,
) {
    assert!(chunk > 0, "for_each_chunk_mut: chunk of 0 elements");
    let len = bufs.first().map_or(0, |b| b.len());
    assert!(
        bufs.iter().all(|b| b.len() == len),
        "for_each_chunk_mut: slices of different lengths"
    );
    if len <= chunk {
        if len > 0 {
            f(0, bufs);
        }
        return;
    }
    let bases = Bases(bufs.map(|b| b.as_mut_ptr()));
    let parts = len.div_ceil(chunk);
    let bases = &bases;
    run_parts(parts, num_threads(), &|part| {
        let lo = part * chunk;
        let n = chunk.min(len - lo);
        let chunks = bases.0.map(|p| {
            // SAFETY: every base points to `len` elements borrowed mutably by the caller
            // for the whole call (`run_parts` returns only when all parts are done);
            // part `part` covers `lo..lo + n`, disjoint from every other part's range.
            unsafe { std::slice::from_raw_parts_mut(p.add(lo), n) }
        });
        f(lo, chunks);
    });
}

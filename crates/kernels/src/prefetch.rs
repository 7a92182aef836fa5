//! Memory hints: a cache prefetch: starts loading the cache line that holds an
//! element of a slice without waiting for it, so that the memory latencies
//! of several table lookups overlap with other work.
//!
//! A prefetch changes no value anywhere (it is only a hint to the CPU), so
//! it cannot change a result: the context-mixing model uses it to load the
//! lines it will read a bit or a nibble later. [`advise_huge_pages`] asks
//! for huge pages under a large table (fewer TLB misses), equally harmless.

/// Starts loading the cache line of `slice[index]` into the nearest cache.
/// An `index` out of bounds is ignored (nothing is loaded).
#[inline(always)]
pub fn prefetch<T>(slice: &[T], index: usize) {
    if index < slice.len() {
        prefetch_ptr(slice.as_ptr().wrapping_add(index).cast::<u8>());
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_ptr(p: *const u8) {
    use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    // SAFETY: PREFETCHT0 is part of SSE, which every x86-64 CPU has; it
    // never faults and reads or writes no memory visible to the program
    // (`p` points into a live slice in any case).
    unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) }
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn prefetch_ptr(p: *const u8) {
    // SAFETY: PRFM is a hint: it never faults, changes no register or
    // memory the program can see (`p` points into a live slice anyway).
    unsafe {
        std::arch::asm!(
            "prfm pldl1keep, [{0}]",
            in(reg) p,
            options(nostack, readonly, preserves_flags)
        )
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
fn prefetch_ptr(_p: *const u8) {}

/// Asks the operating system to back `slice` with huge pages where it can
/// (Linux: `madvise(MADV_HUGEPAGE)` on the whole pages inside it; elsewhere
/// nothing). A large table read at random positions (a context model's hash
/// table) then misses the TLB far less often. Only a hint: contents never
/// change. Call it on a fresh allocation, before the first write, so that
/// its pages are huge from the first touch.
pub fn advise_huge_pages<T>(slice: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = std::mem::size_of_val(slice);
        if bytes < 2 * HUGE {
            return;
        }
        let start = slice.as_ptr() as usize;
        let (lo, hi) = (start.next_multiple_of(4096), (start + bytes) & !4095);
        if hi > lo {
            // SAFETY: [lo, hi) lies inside `slice`'s allocation, which we
            // borrow; MADV_HUGEPAGE only changes how the kernel backs the
            // pages, never their contents, so no Rust value changes. A
            // failure (no transparent huge pages) is harmless and ignored.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_changes_nothing_and_ignores_out_of_bounds() {
        let v: Vec<u32> = (0..1000).collect();
        for i in [0, 1, 500, 999, 1000, usize::MAX] {
            prefetch(&v, i);
        }
        prefetch::<u8>(&[], 0);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
    }

    #[test]
    fn huge_page_advice_keeps_contents() {
        let mut v = vec![0u8; 8 << 20];
        advise_huge_pages(&v);
        v[12345] = 7;
        advise_huge_pages(&v[..100]);
        assert_eq!(v.iter().map(|&x| u64::from(x)).sum::<u64>(), 7);
    }
}

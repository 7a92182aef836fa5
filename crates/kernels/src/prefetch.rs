//! A cache prefetch hint: starts loading the cache line that holds an
//! element of a slice without waiting for it, so that the memory latencies
//! of several table lookups overlap with other work.
//!
//! A prefetch changes no value anywhere (it is only a hint to the CPU), so
//! it cannot change a result: the context-mixing model uses it to load the
//! lines it will read a bit or a nibble later.

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
}

//! Deterministic f32 kernels for online-trained compression models.
//!
//! Every function here returns the same bits on every x86-64 or aarch64 CPU, for
//! every thread count and every SIMD level, because the order of floating-point
//! operations is part of each function's contract (see `doc/DETERMINISM.md`, section 2,
//! of the repository):
//!
//! * a matrix product computes each output element as one chain
//!   `acc = fma(a[i,p], b[p,j], acc)` for `p = 0..k` in order, starting from `0.0`
//!   (or from the old `c[i,j]` when accumulating); SIMD lanes and threads split
//!   output elements, never a sum;
//! * a reduction along a row uses 16 partial accumulators (element `i` into
//!   accumulator `i % 16`) and a fixed pairwise tree, whatever the vector width
//!   ([`sum_rows`], [`softmax_rows`], [`layernorm_rows`]); a reduction down columns is
//!   one chain per column in row order ([`sum_cols`]);
//! * elementwise code uses only IEEE `+ - * / sqrt` and `mul_add`; transcendental
//!   functions ([`exp`], [`ln`], [`erf`], [`tanh`], [`sigmoid`], [`gelu`], ...) are this
//!   crate's own polynomials, never libm, and each is written once, generically, for
//!   the scalar and every vector path.
//!
//! # Matrix products
//!
//! [`matmul`], [`matmul_tn`] and [`matmul_nt`] take dense row-major slices and compute
//! every element of `C[m x n]` as one chain:
//!
//! ```text
//! acc = if accumulate { c[i,j] } else { +0.0 }
//! for p in 0..k (in order):  acc = a(i,p).mul_add(b(p,j), acc)
//! c[i,j] = acc
//! ```
//!
//! with `a(i,p)` = `a[i*k + p]` (or `a[p*m + i]` for `matmul_tn`) and `b(p,j)` =
//! `b[p*n + j]` (or `b[j*k + p]` for `matmul_nt`). Register tiling, packing, k-blocking
//! and threads never change this order.
//!
//! # Row reductions
//!
//! Every reduction along a row of `n` elements (the max and sums of [`softmax_rows`] and
//! [`log_softmax_rows`], the mean and variance of [`layernorm_rows`], the two sums of
//! [`layernorm_rows_backward`], [`sum_rows`]) has this structure, whatever the SIMD
//! width:
//!
//! ```text
//! acc[0..16] = init                          (+0.0 for sums, -inf for max)
//! for i in 0..n:      acc[i % 16] = op(acc[i % 16], x[i])
//! for w in [8, 4, 2, 1]:
//!     for q in 0..w:  acc[q] = combine(acc[q], acc[q + w])   (+, or max)
//! result = acc[0]
//! ```
//!
//! where `max(a, b)` is `if a > b { a } else { b }`. Reductions down columns
//! ([`sum_cols`], LayerNorm's `dgamma`/`dbeta`) are one chain per column over the rows in
//! order. `doc/DETERMINISM.md` section 2 lists every instance.
//!
//! Start with [`matmul`], [`matmul_tn`] and [`matmul_nt`]. The instruction set is
//! detected at run time ([`active_isa`], overridable with `SEP_KERNELS_ISA` or
//! [`force_isa`]); large calls are split over a persistent thread pool
//! ([`set_num_threads`]). Neither choice changes a result.
//!
//! ```
//! // C (2x2) = A (2x3) * B (3x2)
//! let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
//! let b = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0];
//! let mut c = [0.0f32; 4];
//! sep_kernels::matmul(&a, &b, &mut c, 2, 3, 2, false);
//! assert_eq!(c, [4.0, 5.0, 10.0, 11.0]);
//!
//! let mut p = [1.0f32, 2.0, 3.0];
//! sep_kernels::softmax_rows_inplace(&mut p, 1, 3);
//! assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
//! ```

#[cfg(feature = "alloc-counter")]
mod alloc_counter;
mod elementwise;
mod isa;
mod math;
mod matmul;
mod mix16;
mod optim;
mod parallel;
mod pool;
mod prefetch;
mod reduce;
mod rows;
mod serial;
mod simd;

#[cfg(test)]
mod tests;

#[cfg(feature = "alloc-counter")]
pub use alloc_counter::CountingAllocator;
pub use elementwise::{
    erf, erf_inplace, erf_slice, erfc, erfc_inplace, erfc_slice, exp, exp_inplace, exp_slice, gelu,
    gelu_backward, gelu_backward_saved, gelu_forward_saving, gelu_grad, gelu_grad_inplace,
    gelu_grad_slice, gelu_inplace, gelu_slice, ln, ln_inplace, ln_slice, sigmoid, sigmoid_inplace,
    sigmoid_slice, tanh, tanh_inplace, tanh_slice,
};
pub use isa::{Isa, UnsupportedIsa, active_isa, detected_isa, force_isa};
pub use matmul::{matmul, matmul_nt, matmul_tn};
pub use mix16::{
    BLOCK as MIX_BLOCK, dot_i16_sets, dot_i16_sets_plain, train_i16_sets, train_i16_sets_plain,
};
pub use optim::{AdamScalars, adam_update};
pub use parallel::for_each_chunk_mut;
pub use pool::{num_threads, set_num_threads};
pub use prefetch::{advise_huge_pages, prefetch};
pub use rows::{
    layernorm_rows, layernorm_rows_backward, log_softmax_rows, log_softmax_rows_inplace,
    softmax_rows, softmax_rows_inplace, sum_cols, sum_rows,
};
pub use serial::{serial_adam, serial_dot_cols, serial_matvec_cols, serial_outer_add};

/// Where a kernel runs: the instruction set and the thread budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exec {
    pub(crate) isa: Isa,
    pub(crate) threads: usize,
}

impl Exec {
    /// The process-wide settings.
    pub(crate) fn current() -> Exec {
        Exec {
            isa: active_isa(),
            threads: num_threads(),
        }
    }
}

/// A raw pointer that may cross to pool threads. Each use documents why the threads
/// touch disjoint elements.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SendPtr(pub(crate) *mut f32);

impl SendPtr {
    /// The pointer. (Closures must call this rather than read `.0`, so that they
    /// capture the whole `SendPtr`, which is `Sync`, and not the bare pointer.)
    #[inline(always)]
    pub(crate) fn get(self) -> *mut f32 {
        self.0
    }
}

// SAFETY: kernels only share a `SendPtr` between parts that access disjoint elements
// (or only read), and `run_parts` joins all parts before the borrow it came from ends.
unsafe impl Send for SendPtr {}
// SAFETY: as above.
unsafe impl Sync for SendPtr {}

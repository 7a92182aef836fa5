//! Row operations on a row-major `[rows x n]` matrix: softmax, log-softmax, LayerNorm
//! (forward and backward), row sums and column sums.
//!
//! Reductions along a row (max, sums, LayerNorm mean and variance) use the fixed
//! 16-lane structure of [`crate::reduce`]: element `i` goes to accumulator `i % 16`,
//! then the tree `8, 4, 2, 1`. Reductions down the columns ([`sum_cols`], LayerNorm's
//! `dgamma`/`dbeta`) are one chain per column over rows `0..rows` in order, vectorised
//! across columns. Threads split rows (row-wise ops) or column blocks (column chains),
//! never a reduction. The exact formulas are in each function's doc.

use crate::pool::{plan_threads, run_parts};
use crate::reduce::{Combine, RowOp, reduce_row};
use crate::simd::{Scalar, Simd, with_simd};
use crate::{Exec, SendPtr};

mod layernorm;
mod softmax;

#[cfg(test)]
pub(crate) use layernorm::{layernorm_backward_exec, layernorm_exec};
pub use layernorm::{layernorm_rows, layernorm_rows_backward};
#[cfg(test)]
pub(crate) use softmax::softmax_exec;
pub use softmax::{log_softmax_rows, log_softmax_rows_inplace, softmax_rows, softmax_rows_inplace};

/// Below two of these many elements a row operation runs on the calling thread.
const PAR_ELEMS: usize = 1 << 14;

/// Splits `count` units (rows, or columns) of `unit_cost` elements each into at most
/// `threads` equal parts of whole multiples of `align` units; small jobs stay whole.
/// Returns (parts, units per part).
fn split(count: usize, unit_cost: usize, align: usize, threads: usize) -> (usize, usize) {
    let total = count.saturating_mul(unit_cost.max(1));
    if threads <= 1 || total < 2 * PAR_ELEMS || count <= align {
        return (1, count.max(1));
    }
    let per = count.div_ceil(threads).next_multiple_of(align);
    (count.div_ceil(per), per)
}

/// Runs `f(lo, hi)` over row (or column) ranges covering `0..count` on `exec.threads`.
fn for_ranges(
    exec: Exec,
    count: usize,
    unit_cost: usize,
    align: usize,
    f: &(dyn Fn(usize, usize) + Sync),
) {
    let (parts, per) = split(count, unit_cost, align, exec.threads);
    if parts == 1 || plan_threads(exec.threads) <= 1 {
        f(0, count);
        return;
    }
    run_parts(parts, exec.threads, &|part| {
        let lo = part * per;
        f(lo, count.min(lo + per));
    });
}

struct Sum(*const f32);
impl RowOp for Sum {
    #[inline(always)]
    unsafe fn step<S: Simd>(&self, s: S, acc: S::V, i: usize) -> S::V {
        // SAFETY: the caller keeps i + LANES within the row.
        s.add(acc, unsafe { s.load(self.0.add(i)) })
    }
}

struct Max(*const f32);
impl RowOp for Max {
    #[inline(always)]
    unsafe fn step<S: Simd>(&self, s: S, acc: S::V, i: usize) -> S::V {
        // SAFETY: the caller keeps i + LANES within the row.
        s.max(acc, unsafe { s.load(self.0.add(i)) })
    }
}

/// Calls `vec(i)` for each full vector and `tail(i)` for each remaining element.
#[inline(always)]
fn each<S: Simd>(n: usize, mut vec: impl FnMut(usize), mut tail: impl FnMut(usize)) {
    let full = n / S::LANES * S::LANES;
    let mut i = 0;
    while i < full {
        vec(i);
        i += S::LANES;
    }
    for i in full..n {
        tail(i);
    }
}

/// Runs `block::<W>` over `lo..hi` in steps of `W` vectors, then of one vector, then the
/// scalar tail; which step covers a column never changes its chain.
macro_rules! column_blocks {
    ($s:expr, $lo:expr, $hi:expr, $w:literal, |$t:ident, $j:ident, $width:ident| $block:expr) => {{
        let (lo, hi) = ($lo, $hi);
        let l = lanes_of($s);
        let mut j = lo;
        while j + $w * l <= hi {
            let ($t, $j) = ($s, j);
            {
                const $width: usize = $w;
                $block;
            }
            j += $w * l;
        }
        while j + l <= hi {
            let ($t, $j) = ($s, j);
            {
                const $width: usize = 1;
                $block;
            }
            j += l;
        }
        while j < hi {
            let ($t, $j) = (Scalar, j);
            {
                const $width: usize = 1;
                $block;
            }
            j += 1;
        }
    }};
}
pub(crate) use column_blocks;

#[inline(always)]
fn lanes_of<S: Simd>(_: S) -> usize {
    S::LANES
}

/// `out[j] (+)= x[0,j] + x[1,j] + ...` in row order, columns `j..j + W * LANES`.
///
/// # Safety
/// `x` holds `rows * n`, `out` holds `n`, `j + W * LANES <= n`.
#[inline(always)]
unsafe fn sum_cols_block<T: Simd, const W: usize>(
    t: T,
    x: *const f32,
    out: *mut f32,
    rows: usize,
    n: usize,
    j: usize,
    accumulate: bool,
) {
    let l = T::LANES;
    // SAFETY: the caller's contract covers every index.
    unsafe {
        let mut acc = [t.splat(0.0); W];
        if accumulate {
            for (w, a) in acc.iter_mut().enumerate() {
                *a = t.load(out.add(j + w * l));
            }
        }
        for r in 0..rows {
            for (w, a) in acc.iter_mut().enumerate() {
                *a = t.add(*a, t.load(x.add(r * n + j + w * l)));
            }
        }
        for (w, a) in acc.iter().enumerate() {
            t.store(out.add(j + w * l), *a);
        }
    }
}

/// [`sum_cols_block`] over columns `lo..hi`.
///
/// # Safety
/// `x` holds `rows * n`, `out` holds `n`, `lo <= hi <= n`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn sum_cols_range<S: Simd>(
    s: S,
    x: *const f32,
    out: *mut f32,
    rows: usize,
    n: usize,
    lo: usize,
    hi: usize,
    accumulate: bool,
) {
    column_blocks!(s, lo, hi, 8, |t, j, W| {
        // SAFETY: j + W * LANES <= hi <= n.
        unsafe { sum_cols_block::<_, W>(t, x, out, rows, n, j, accumulate) }
    });
}

fn check(name: &str, len: usize, rows: usize, n: usize) {
    assert!(
        rows.checked_mul(n).is_some_and(|rn| len >= rn),
        "{name}: slice of {len} elements is shorter than {rows} x {n}"
    );
}

/// One sum per row: `out[r] = sum(x[r, ..])` with the 16-lane structure of
/// [row reductions](crate#row-reductions) (accumulators start at `+0.0`).
///
/// # Panics
/// If `x` is shorter than `rows * n` or `out` than `rows`.
pub fn sum_rows(x: &[f32], out: &mut [f32], rows: usize, n: usize) {
    check("sum_rows", x.len(), rows, n);
    check("sum_rows", out.len(), rows, 1);
    sum_rows_exec(Exec::current(), x, out, rows, n);
}

pub(crate) fn sum_rows_exec(exec: Exec, x: &[f32], out: &mut [f32], rows: usize, n: usize) {
    let (xp, op) = (SendPtr(x.as_ptr().cast_mut()), SendPtr(out.as_mut_ptr()));
    for_ranges(exec, rows, n, 1, &|lo, hi| {
        with_simd!(exec.isa, |s| {
            for r in lo..hi {
                // SAFETY: the caller checked the lengths; rows are disjoint per part.
                unsafe {
                    *op.get().add(r) =
                        reduce_row(s, &Sum(xp.get().add(r * n)), n, 0.0, Combine::Add);
                }
            }
        });
    });
}

/// Column sums (bias gradients): `out[j] (+)= x[0,j] + x[1,j] + ... + x[rows-1,j]`, one
/// chain per column in row order, starting from `out[j]` when `accumulate`, else from
/// `+0.0`.
///
/// # Panics
/// If `x` is shorter than `rows * n` or `out` than `n`.
pub fn sum_cols(x: &[f32], out: &mut [f32], rows: usize, n: usize, accumulate: bool) {
    check("sum_cols", x.len(), rows, n);
    check("sum_cols", out.len(), 1, n);
    sum_cols_exec(Exec::current(), x, out, rows, n, accumulate);
}

pub(crate) fn sum_cols_exec(
    exec: Exec,
    x: &[f32],
    out: &mut [f32],
    rows: usize,
    n: usize,
    accumulate: bool,
) {
    let (xp, op) = (SendPtr(x.as_ptr().cast_mut()), SendPtr(out.as_mut_ptr()));
    for_ranges(exec, n, rows, 128, &|lo, hi| {
        // SAFETY: the caller checked the lengths; column blocks are disjoint per part.
        with_simd!(exec.isa, |s| unsafe {
            sum_cols_range(s, xp.get(), op.get(), rows, n, lo, hi, accumulate)
        });
    });
}

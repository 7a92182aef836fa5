//! Row-wise softmax and log-softmax.

use super::{Max, check, each, for_ranges};
use crate::math::{exp_v, ln_v};
use crate::reduce::{Combine, RowOp, reduce_row};
use crate::simd::{Scalar, Simd, with_simd};
use crate::{Exec, SendPtr};

/// `acc + exp(x[i] - shift)`.
struct SumExp(*const f32, f32);
impl RowOp for SumExp {
    #[inline(always)]
    unsafe fn step<S: Simd>(&self, s: S, acc: S::V, i: usize) -> S::V {
        // SAFETY: the caller keeps i + LANES within the row.
        let x = unsafe { s.load(self.0.add(i)) };
        s.add(acc, exp_v(s, s.sub(x, s.splat(self.1))))
    }
}

/// `e = exp(x[i] - shift)`, stored to `y[i]`; `acc + e`. (`x == y` allowed: each
/// element is read before it is written.)
struct ExpStoreSum(*const f32, *mut f32, f32);
impl RowOp for ExpStoreSum {
    #[inline(always)]
    unsafe fn step<S: Simd>(&self, s: S, acc: S::V, i: usize) -> S::V {
        // SAFETY: the caller keeps i + LANES within the row, for x and y alike.
        unsafe {
            let e = exp_v(s, s.sub(s.load(self.0.add(i)), s.splat(self.2)));
            s.store(self.1.add(i), e);
            s.add(acc, e)
        }
    }
}

/// Softmax of one row; `x == y` allowed.
///
/// # Safety
/// `x[..n]` readable, `y[..n]` writable.
#[inline(always)]
unsafe fn softmax_row<S: Simd>(s: S, x: *const f32, y: *mut f32, n: usize) {
    // SAFETY: every index below is below n, as the caller guarantees.
    unsafe {
        let max = reduce_row(s, &Max(x), n, f32::NEG_INFINITY, Combine::Max);
        // One pass stores e = exp(x - max) and sums the stored values.
        let sum = reduce_row(s, &ExpStoreSum(x, y, max), n, 0.0, Combine::Add);
        each::<S>(
            n,
            |i| s.store(y.add(i), s.div(s.load(y.add(i)), s.splat(sum))),
            |i| *y.add(i) /= sum,
        );
    }
}

/// Log-softmax of one row; `x == y` allowed.
///
/// # Safety
/// `x[..n]` readable, `y[..n]` writable.
#[inline(always)]
unsafe fn log_softmax_row<S: Simd>(s: S, x: *const f32, y: *mut f32, n: usize) {
    // SAFETY: every index below is below n, as the caller guarantees.
    unsafe {
        let max = reduce_row(s, &Max(x), n, f32::NEG_INFINITY, Combine::Max);
        let sum = reduce_row(s, &SumExp(x, max), n, 0.0, Combine::Add);
        let lse = ln_v(Scalar, sum);
        each::<S>(
            n,
            |i| {
                let d = s.sub(s.load(x.add(i)), s.splat(max));
                s.store(y.add(i), s.sub(d, s.splat(lse)));
            },
            |i| *y.add(i) = (*x.add(i) - max) - lse,
        );
    }
}

/// Row-wise softmax: for each row, `y = exp(x - max) / sum`, where `max` is the 16-lane
/// max reduction of the row (see [row reductions](crate#row-reductions)) and `sum` the 16-lane sum of the
/// stored `exp(x - max)` values; each output is one correctly rounded division.
///
/// # Panics
/// If a slice is shorter than `rows * n`.
pub fn softmax_rows(x: &[f32], y: &mut [f32], rows: usize, n: usize) {
    check("softmax_rows", x.len(), rows, n);
    check("softmax_rows", y.len(), rows, n);
    softmax_exec(Exec::current(), x.as_ptr(), y.as_mut_ptr(), rows, n, false);
}

/// [`softmax_rows`] in place.
pub fn softmax_rows_inplace(x: &mut [f32], rows: usize, n: usize) {
    check("softmax_rows_inplace", x.len(), rows, n);
    let p = x.as_mut_ptr();
    softmax_exec(Exec::current(), p, p, rows, n, false);
}

/// Row-wise log-softmax: `y = (x - max) - ln(sum)`, with `max` the 16-lane max
/// reduction of the row and `sum` the 16-lane sum of `exp(x - max)`.
///
/// # Panics
/// If a slice is shorter than `rows * n`.
pub fn log_softmax_rows(x: &[f32], y: &mut [f32], rows: usize, n: usize) {
    check("log_softmax_rows", x.len(), rows, n);
    check("log_softmax_rows", y.len(), rows, n);
    softmax_exec(Exec::current(), x.as_ptr(), y.as_mut_ptr(), rows, n, true);
}

/// [`log_softmax_rows`] in place.
pub fn log_softmax_rows_inplace(x: &mut [f32], rows: usize, n: usize) {
    check("log_softmax_rows_inplace", x.len(), rows, n);
    let p = x.as_mut_ptr();
    softmax_exec(Exec::current(), p, p, rows, n, true);
}

pub(crate) fn softmax_exec(
    exec: Exec,
    x: *const f32,
    y: *mut f32,
    rows: usize,
    n: usize,
    log: bool,
) {
    let (x, y) = (SendPtr(x.cast_mut()), SendPtr(y));
    for_ranges(exec, rows, n, 1, &|lo, hi| {
        with_simd!(exec.isa, |s| {
            for r in lo..hi {
                // SAFETY: the caller checked both hold rows * n elements.
                unsafe {
                    let (xr, yr) = (x.get().add(r * n).cast_const(), y.get().add(r * n));
                    if log {
                        log_softmax_row(s, xr, yr, n);
                    } else {
                        softmax_row(s, xr, yr, n);
                    }
                }
            }
        });
    });
}

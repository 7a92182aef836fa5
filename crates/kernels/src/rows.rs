//! Row operations on a row-major `[rows x n]` matrix: softmax, log-softmax, LayerNorm
//! (forward and backward), row sums and column sums.
//!
//! Reductions along a row (max, sums, LayerNorm mean and variance) use the fixed
//! 16-lane structure of [`crate::reduce`]: element `i` goes to accumulator `i % 16`,
//! then the tree `8, 4, 2, 1`. Reductions down the columns ([`sum_cols`], LayerNorm's
//! `dgamma`/`dbeta`) are one chain per column over rows `0..rows` in order, vectorised
//! across columns. Threads split rows (row-wise ops) or column blocks (column chains),
//! never a reduction. The exact formulas are in each function's doc.

use crate::math::{exp_v, ln_v};
use crate::pool::run_parts;
use crate::reduce::{Combine, RowOp, reduce_row};
use crate::simd::{Scalar, Simd, with_simd};
use crate::{Exec, SendPtr};

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
    if parts == 1 {
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

/// `fma(d, d, acc)` with `d = x[i] - mean`.
struct SqDev(*const f32, f32);
impl RowOp for SqDev {
    #[inline(always)]
    unsafe fn step<S: Simd>(&self, s: S, acc: S::V, i: usize) -> S::V {
        // SAFETY: the caller keeps i + LANES within the row.
        let d = s.sub(unsafe { s.load(self.0.add(i)) }, s.splat(self.1));
        s.fma(d, d, acc)
    }
}

/// `acc + dy[i] * gamma[i]`.
struct SumG {
    dy: *const f32,
    gamma: *const f32,
}
impl RowOp for SumG {
    #[inline(always)]
    unsafe fn step<S: Simd>(&self, s: S, acc: S::V, i: usize) -> S::V {
        // SAFETY: the caller keeps i + LANES within the row.
        let g = unsafe { s.mul(s.load(self.dy.add(i)), s.load(self.gamma.add(i))) };
        s.add(acc, g)
    }
}

/// `fma(dy[i] * gamma[i], (x[i] - mean) * rstd, acc)`.
struct SumGXhat {
    dy: *const f32,
    gamma: *const f32,
    x: *const f32,
    mean: f32,
    rstd: f32,
}
impl RowOp for SumGXhat {
    #[inline(always)]
    unsafe fn step<S: Simd>(&self, s: S, acc: S::V, i: usize) -> S::V {
        // SAFETY: the caller keeps i + LANES within the row.
        let (g, xhat) = unsafe {
            (
                s.mul(s.load(self.dy.add(i)), s.load(self.gamma.add(i))),
                xhat(s, s.load(self.x.add(i)), self.mean, self.rstd),
            )
        };
        s.fma(g, xhat, acc)
    }
}

/// `(x - mean) * rstd`, the normalised input shared by LayerNorm forward and backward.
#[inline(always)]
fn xhat<S: Simd>(s: S, x: S::V, mean: f32, rstd: f32) -> S::V {
    s.mul(s.sub(x, s.splat(mean)), s.splat(rstd))
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

/// LayerNorm of one row; returns `(mean, rstd)`.
///
/// # Safety
/// `x`, `gamma`, `beta` readable and `y` writable for `n > 0` elements.
#[inline(always)]
unsafe fn layernorm_row<S: Simd>(
    s: S,
    x: *const f32,
    gamma: *const f32,
    beta: *const f32,
    y: *mut f32,
    n: usize,
    eps: f32,
) -> (f32, f32) {
    let nf = n as f32;
    // SAFETY: every index below is below n, as the caller guarantees.
    unsafe {
        let mean = reduce_row(s, &Sum(x), n, 0.0, Combine::Add) / nf;
        let var = reduce_row(s, &SqDev(x, mean), n, 0.0, Combine::Add) / nf;
        let rstd = 1.0 / (var + eps).sqrt();
        each::<S>(
            n,
            |i| {
                let h = xhat(s, s.load(x.add(i)), mean, rstd);
                s.store(
                    y.add(i),
                    s.fma(h, s.load(gamma.add(i)), s.load(beta.add(i))),
                );
            },
            |i| {
                let h = xhat(Scalar, *x.add(i), mean, rstd);
                *y.add(i) = h.mul_add(*gamma.add(i), *beta.add(i));
            },
        );
        (mean, rstd)
    }
}

/// LayerNorm backward for one row: `dx (+)=` (see [`layernorm_rows_backward`]).
///
/// # Safety
/// `dy`, `x`, `gamma` readable and `dx` writable for `n > 0` elements.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn layernorm_row_backward<S: Simd>(
    s: S,
    dy: *const f32,
    x: *const f32,
    gamma: *const f32,
    mean: f32,
    rstd: f32,
    dx: *mut f32,
    n: usize,
    accumulate: bool,
) {
    let nf = n as f32;
    // SAFETY: every index below is below n, as the caller guarantees.
    unsafe {
        let a = reduce_row(s, &SumG { dy, gamma }, n, 0.0, Combine::Add) / nf;
        let op = SumGXhat {
            dy,
            gamma,
            x,
            mean,
            rstd,
        };
        let b = reduce_row(s, &op, n, 0.0, Combine::Add) / nf;
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn one<T: Simd>(
            t: T,
            dy: *const f32,
            x: *const f32,
            gamma: *const f32,
            dx: *mut f32,
            i: usize,
            (mean, rstd, a, b): (f32, f32, f32, f32),
            accumulate: bool,
        ) {
            // SAFETY: the caller keeps i + LANES <= n.
            unsafe {
                let g = t.mul(t.load(dy.add(i)), t.load(gamma.add(i)));
                let h = xhat(t, t.load(x.add(i)), mean, rstd);
                let d = t.fma(t.sub(t.splat(0.0), h), t.splat(b), t.sub(g, t.splat(a)));
                let d = t.mul(d, t.splat(rstd));
                let d = if accumulate {
                    t.add(t.load(dx.add(i)), d)
                } else {
                    d
                };
                t.store(dx.add(i), d);
            }
        }
        let k = (mean, rstd, a, b);
        each::<S>(
            n,
            |i| one(s, dy, x, gamma, dx, i, k, accumulate),
            |i| one(Scalar, dy, x, gamma, dx, i, k, accumulate),
        );
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

#[inline(always)]
fn lanes_of<S: Simd>(_: S) -> usize {
    S::LANES
}

/// `dgamma[j] = fma(dy[r,j], xhat[r,j], dgamma[j])`, `dbeta[j] = dbeta[j] + dy[r,j]` for
/// rows `r` in order, columns `j..j + W * LANES`.
///
/// # Safety
/// `dy`, `x` hold `rows * n`, `mean`, `rstd` hold `rows`, `dgamma`, `dbeta` hold `n`,
/// and `j + W * LANES <= n`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn param_grads_block<T: Simd, const W: usize>(
    t: T,
    dy: *const f32,
    x: *const f32,
    mean: *const f32,
    rstd: *const f32,
    dgamma: *mut f32,
    dbeta: *mut f32,
    rows: usize,
    n: usize,
    j: usize,
) {
    let l = T::LANES;
    // SAFETY: the caller's contract covers every index.
    unsafe {
        let mut dg = [t.splat(0.0); W];
        let mut db = [t.splat(0.0); W];
        for w in 0..W {
            dg[w] = t.load(dgamma.add(j + w * l));
            db[w] = t.load(dbeta.add(j + w * l));
        }
        for r in 0..rows {
            let (m, rs) = (*mean.add(r), *rstd.add(r));
            for w in 0..W {
                let o = r * n + j + w * l;
                let d = t.load(dy.add(o));
                dg[w] = t.fma(d, xhat(t, t.load(x.add(o)), m, rs), dg[w]);
                db[w] = t.add(db[w], d);
            }
        }
        for w in 0..W {
            t.store(dgamma.add(j + w * l), dg[w]);
            t.store(dbeta.add(j + w * l), db[w]);
        }
    }
}

/// [`param_grads_block`] over columns `lo..hi`.
///
/// # Safety
/// As for [`param_grads_block`], with `lo <= hi <= n`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn layernorm_param_grads<S: Simd>(
    s: S,
    dy: *const f32,
    x: *const f32,
    mean: *const f32,
    rstd: *const f32,
    dgamma: *mut f32,
    dbeta: *mut f32,
    rows: usize,
    n: usize,
    lo: usize,
    hi: usize,
) {
    column_blocks!(s, lo, hi, 4, |t, j, W| {
        // SAFETY: j + W * LANES <= hi <= n.
        unsafe { param_grads_block::<_, W>(t, dy, x, mean, rstd, dgamma, dbeta, rows, n, j) }
    });
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

/// LayerNorm over each row of `x` (`[rows x n]`), with a per-column affine map.
///
/// For each row: `mean = sum(x) / n` and `var = sum((x - mean)^2) / n` (16-lane
/// reductions, the squares accumulated as `fma(d, d, acc)`), `rstd = 1 / sqrt(var +
/// eps)`, then `y[j] = fma((x[j] - mean) * rstd, gamma[j], beta[j])`. `mean[r]` and
/// `rstd[r]` are stored for [`layernorm_rows_backward`].
///
/// # Panics
/// If `x`, `y` are shorter than `rows * n`, `gamma`, `beta` than `n`, or `mean`, `rstd`
/// than `rows`.
#[allow(clippy::too_many_arguments)]
pub fn layernorm_rows(
    x: &[f32],
    gamma: &[f32],
    beta: &[f32],
    y: &mut [f32],
    mean: &mut [f32],
    rstd: &mut [f32],
    rows: usize,
    n: usize,
    eps: f32,
) {
    check("layernorm_rows", x.len(), rows, n);
    check("layernorm_rows", y.len(), rows, n);
    check("layernorm_rows", gamma.len(), 1, n);
    check("layernorm_rows", beta.len(), 1, n);
    check("layernorm_rows", mean.len(), rows, 1);
    check("layernorm_rows", rstd.len(), rows, 1);
    layernorm_exec(Exec::current(), x, gamma, beta, y, mean, rstd, rows, n, eps);
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn layernorm_exec(
    exec: Exec,
    x: &[f32],
    gamma: &[f32],
    beta: &[f32],
    y: &mut [f32],
    mean: &mut [f32],
    rstd: &mut [f32],
    rows: usize,
    n: usize,
    eps: f32,
) {
    if n == 0 {
        return;
    }
    let (xp, gp, bp) = (
        SendPtr(x.as_ptr().cast_mut()),
        SendPtr(gamma.as_ptr().cast_mut()),
        SendPtr(beta.as_ptr().cast_mut()),
    );
    let (yp, mp, rp) = (
        SendPtr(y.as_mut_ptr()),
        SendPtr(mean.as_mut_ptr()),
        SendPtr(rstd.as_mut_ptr()),
    );
    for_ranges(exec, rows, n, 1, &|lo, hi| {
        with_simd!(exec.isa, |s| {
            for r in lo..hi {
                // SAFETY: the caller checked the lengths; rows are disjoint per part.
                unsafe {
                    let (m, rs) = layernorm_row(
                        s,
                        xp.get().add(r * n),
                        gp.get(),
                        bp.get(),
                        yp.get().add(r * n),
                        n,
                        eps,
                    );
                    *mp.get().add(r) = m;
                    *rp.get().add(r) = rs;
                }
            }
        });
    });
}

/// LayerNorm backward, given the forward's `x`, `gamma`, `mean`, `rstd` and the output
/// gradient `dy`.
///
/// Per row, with `xhat = (x - mean) * rstd` and `g = dy * gamma`: `a = sum(g) / n`,
/// `b = sum(g * xhat) / n` (16-lane reductions, the second as `fma(g, xhat, acc)`),
/// then `d = fma(-xhat, b, g - a) * rstd` and `dx = d` (or `dx + d` when
/// `accumulate`).
///
/// Parameter gradients are always accumulated, one chain per column over the rows in
/// order: `dgamma[j] = fma(dy[r,j], xhat[r,j], dgamma[j])`, `dbeta[j] += dy[r,j]`.
///
/// # Panics
/// On a slice shorter than its shape (`[rows x n]`, `[n]` or `[rows]`).
#[allow(clippy::too_many_arguments)]
pub fn layernorm_rows_backward(
    dy: &[f32],
    x: &[f32],
    gamma: &[f32],
    mean: &[f32],
    rstd: &[f32],
    dx: &mut [f32],
    dgamma: &mut [f32],
    dbeta: &mut [f32],
    rows: usize,
    n: usize,
    accumulate: bool,
) {
    let name = "layernorm_rows_backward";
    check(name, dy.len(), rows, n);
    check(name, x.len(), rows, n);
    check(name, dx.len(), rows, n);
    check(name, gamma.len(), 1, n);
    check(name, dgamma.len(), 1, n);
    check(name, dbeta.len(), 1, n);
    check(name, mean.len(), rows, 1);
    check(name, rstd.len(), rows, 1);
    layernorm_backward_exec(
        Exec::current(),
        dy,
        x,
        gamma,
        mean,
        rstd,
        dx,
        dgamma,
        dbeta,
        rows,
        n,
        accumulate,
    );
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn layernorm_backward_exec(
    exec: Exec,
    dy: &[f32],
    x: &[f32],
    gamma: &[f32],
    mean: &[f32],
    rstd: &[f32],
    dx: &mut [f32],
    dgamma: &mut [f32],
    dbeta: &mut [f32],
    rows: usize,
    n: usize,
    accumulate: bool,
) {
    if n == 0 {
        return;
    }
    let c = |v: &[f32]| SendPtr(v.as_ptr().cast_mut());
    let (dyp, xp, gp, mp, rp) = (c(dy), c(x), c(gamma), c(mean), c(rstd));
    let (dxp, dgp, dbp) = (
        SendPtr(dx.as_mut_ptr()),
        SendPtr(dgamma.as_mut_ptr()),
        SendPtr(dbeta.as_mut_ptr()),
    );
    for_ranges(exec, rows, n, 1, &|lo, hi| {
        with_simd!(exec.isa, |s| {
            for r in lo..hi {
                // SAFETY: the caller checked the lengths; rows are disjoint per part.
                unsafe {
                    layernorm_row_backward(
                        s,
                        dyp.get().add(r * n),
                        xp.get().add(r * n),
                        gp.get(),
                        *mp.get().add(r),
                        *rp.get().add(r),
                        dxp.get().add(r * n),
                        n,
                        accumulate,
                    );
                }
            }
        });
    });
    for_ranges(exec, n, rows, 128, &|lo, hi| {
        // SAFETY: the caller checked the lengths; column blocks are disjoint per part.
        with_simd!(exec.isa, |s| unsafe {
            layernorm_param_grads(
                s,
                dyp.get(),
                xp.get(),
                mp.get(),
                rp.get(),
                dgp.get(),
                dbp.get(),
                rows,
                n,
                lo,
                hi,
            )
        });
    });
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

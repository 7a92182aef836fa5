//! LayerNorm over rows: forward, and backward with the parameter gradients.

use super::{Sum, check, column_blocks, each, for_ranges, lanes_of};
use crate::reduce::{Combine, RowOp, reduce_row};
use crate::simd::{Scalar, Simd, with_simd};
use crate::{Exec, SendPtr};

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

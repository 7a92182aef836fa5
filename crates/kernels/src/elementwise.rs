//! Elementwise functions over slices: `exp`, `ln`, `erf`, `erfc`, `tanh`, `sigmoid`,
//! `gelu`, `gelu_grad`, and the GELU backward product, also in a form that keeps
//! `2 Phi(x)` from the forward pass so that the backward pass does not recompute it.
//!
//! For each function `f` there are three forms, all with the same bits:
//! * `f(x: f32) -> f32`, the scalar definition (re-exported at the crate root);
//! * `f_slice(src, dst)`: `dst[i] = f(src[i])`;
//! * `f_inplace(buf)`: `buf[i] = f(buf[i])`.
//!
//! The slice forms run the same generic code (see [`crate::math`]) on the active
//! instruction set, with the tail in scalar code, and split long slices between
//! threads. Lanes never interact, so neither the width nor the split changes a bit.

use crate::math;
use crate::pool::{plan_threads, run_parts};
use crate::reduce::{Map, map_raw};
use crate::simd::{Scalar, Simd, with_simd};
use crate::{Exec, SendPtr};

/// Elements per thread part of the GELU functions (about 1 ns per element, forward or
/// backward, on one AVX-512 core); below two parts' worth (about 30 us) a call runs on
/// one thread. Other functions use [`Map::CHUNK`].
const GELU_CHUNK: usize = 1 << 14;

/// `dst[i] = f(src[i])` (`src == dst` allowed) on `exec`.
pub(crate) fn map_exec<F: Map>(exec: Exec, f: &F, src: *const f32, dst: *mut f32, n: usize) {
    let (src, dst) = (SendPtr(src.cast_mut()), SendPtr(dst));
    chunked(exec, n, F::CHUNK, &|lo, len| {
        // SAFETY: the caller guarantees `src[..n]`/`dst[..n]`; parts are disjoint.
        with_simd!(exec.isa, |s| unsafe {
            map_raw(s, f, src.get().add(lo).cast_const(), dst.get().add(lo), len)
        });
    });
}

macro_rules! elementwise {
    ($(#[$doc:meta])* $name:ident, $slice:ident, $inplace:ident, $op:ident, $v:path) => {
        elementwise!($(#[$doc])* $name, $slice, $inplace, $op, $v, 1 << 14);
    };
    ($(#[$doc:meta])* $name:ident, $slice:ident, $inplace:ident, $op:ident, $v:path, $chunk:expr) => {
        #[doc = concat!("The lane function behind [`", stringify!($name), "`].")]
        pub(crate) struct $op;

        impl Map for $op {
            const CHUNK: usize = $chunk;
            #[inline(always)]
            fn apply<S: Simd>(&self, s: S, x: S::V) -> S::V {
                $v(s, x)
            }
        }

        $(#[$doc])*
        pub fn $name(x: f32) -> f32 {
            $v(Scalar, x)
        }

        #[doc = concat!("`dst[i] = ", stringify!($name), "(src[i])`, bit-identical to [`", stringify!($name), "`].")]
        ///
        /// # Panics
        /// If the lengths differ.
        pub fn $slice(src: &[f32], dst: &mut [f32]) {
            assert_eq!(src.len(), dst.len(), concat!(stringify!($slice), ": length mismatch"));
            map_exec(Exec::current(), &$op, src.as_ptr(), dst.as_mut_ptr(), src.len());
        }

        #[doc = concat!("`buf[i] = ", stringify!($name), "(buf[i])`, bit-identical to [`", stringify!($name), "`].")]
        pub fn $inplace(buf: &mut [f32]) {
            let p = buf.as_mut_ptr();
            map_exec(Exec::current(), &$op, p, p, buf.len());
        }
    };
}

elementwise!(
    /// `e^x`. Cody-Waite reduction `x = n ln2 + r` (exact, with `fma`) and the Cephes
    /// degree-7 polynomial; `2^n` applied in two exact steps.
    ///
    /// Max error 1 ulp (0.97 measured). Returns `+inf` above `88.7228`, `0` below `-87.33` (never a
    /// subnormal: the exact value there is below `1.007 * 2^-126`), NaN for NaN.
    exp, exp_slice, exp_inplace, Exp, math::exp_v
);
elementwise!(
    /// Natural logarithm. Exact exponent/mantissa split (subnormals pre-scaled by
    /// 2^23), Cephes degree-9 polynomial on `[sqrt(1/2) - 1, sqrt(2) - 1)`.
    ///
    /// Max error 1 ulp (0.76 measured). `ln(0) = -inf` (either sign), `ln(inf) = inf`, NaN for
    /// negative inputs and NaN.
    ln, ln_slice, ln_inplace, Ln, math::ln_v
);
elementwise!(
    /// The error function. `|x| < 1`: `x + x Q(x^2)` (degree-6 Chebyshev fit); otherwise
    /// `1 - erfc(|x|)` with the sign of `x` (see [`erfc`]).
    ///
    /// Max error 1 ulp (0.98 measured; odd: `erf(-x) = -erf(x)` exactly). NaN for NaN.
    erf, erf_slice, erf_inplace, Erf, math::erf_v
);
elementwise!(
    /// The complementary error function `1 - erf(x)`, accurate (relative) in the upper
    /// tail: for `x >= 0.67`, `e^{-x^2} g(1/x) / x` with `x^2` split exactly into
    /// `hi + lo` and `g` a degree-13 Chebyshev fit; `2 - erfc(-x)` for `x <= -0.67`;
    /// `1 - erf(x)` in between.
    ///
    /// Max error 4.5 ulp (4.3 measured). Returns `0` above `9.19` (the exact value is below 2^-126),
    /// `2` below `-3.9`, NaN for NaN.
    erfc, erfc_slice, erfc_inplace, Erfc, math::erfc_v
);
elementwise!(
    /// Hyperbolic tangent. `|x| < 0.625`: Cephes odd polynomial; otherwise
    /// `1 - 2 / (e^{2|x|} + 1)` with the sign of `x`.
    ///
    /// Max error 1.5 ulp (1.27 measured). `tanh(±inf) = ±1`, `tanh(-0) = -0`, NaN for NaN.
    tanh, tanh_slice, tanh_inplace, Tanh, math::tanh_v
);
elementwise!(
    /// The logistic function `1 / (1 + e^{-x})`, computed as `e / (1 + e)` (`x < 0`) or
    /// `1 / (1 + e)` with `e = e^{-|x|}`.
    ///
    /// Max error 2 ulp (1.99 measured); `0` below `-87.33` (never a subnormal), `1` above
    /// `17`, NaN for NaN.
    sigmoid, sigmoid_slice, sigmoid_inplace, Sigmoid, math::sigmoid_v
);
elementwise!(
    /// GELU, erf form (PyTorch's default): `0.5 x (1 + erf(x / sqrt 2))`. The lower tail
    /// goes through the [`erfc`] tail with `x^2 / 2` split exactly from `x`, so it keeps
    /// its relative accuracy down to `-13`.
    ///
    /// Max error 5.5 ulp (5.1 measured, 4.1 above `-5`). `gelu(-inf) = -0`,
    /// `gelu(inf) = inf`, `-0` below `-13` (where `|gelu| < 1e-37`), a signed zero for
    /// `|x| < 2^-100` (no subnormal results), NaN for NaN.
    gelu, gelu_slice, gelu_inplace, Gelu, math::gelu_v, GELU_CHUNK
);
elementwise!(
    /// The derivative of [`gelu`]: `Phi(x) + x phi(x)`, with `Phi` as in [`gelu`] and
    /// the normal density `phi(x) = e^{-x^2/2} / sqrt(2 pi)` from [`exp`] (with `x^2`
    /// split exactly).
    ///
    /// Max error 2e-7 absolute (1.2e-7 measured; the function crosses 0 near
    /// `x = -0.75`, so relative error is not bounded there). `0` for `x <= -14`, `1` for `x >= 14`.
    gelu_grad, gelu_grad_slice, gelu_grad_inplace, GeluGrad, math::gelu_grad_v, GELU_CHUNK
);

/// The GELU backward pass: `dx[i] (+)= dy[i] * gelu_grad(x[i])`.
///
/// Exactly: `g = dy[i] * gelu_grad(x[i])`, then `dx[i] = dx[i] + g` when `accumulate`,
/// else `dx[i] = g`.
///
/// # Panics
/// If the lengths differ.
pub fn gelu_backward(x: &[f32], dy: &[f32], dx: &mut [f32], accumulate: bool) {
    let n = x.len();
    assert!(
        dy.len() == n && dx.len() == n,
        "gelu_backward: length mismatch"
    );
    gelu_backward_exec(Exec::current(), x, dy, dx, accumulate);
}

pub(crate) fn gelu_backward_exec(
    exec: Exec,
    x: &[f32],
    dy: &[f32],
    dx: &mut [f32],
    accumulate: bool,
) {
    let (xp, dyp, dxp) = (
        SendPtr(x.as_ptr().cast_mut()),
        SendPtr(dy.as_ptr().cast_mut()),
        SendPtr(dx.as_mut_ptr()),
    );
    chunked(exec, x.len(), GELU_CHUNK, &|lo, len| {
        // SAFETY: all three slices hold n elements; parts are disjoint.
        with_simd!(exec.isa, |s| unsafe {
            gelu_backward_raw(
                s,
                xp.get().add(lo),
                dyp.get().add(lo),
                dxp.get().add(lo),
                len,
                accumulate,
            )
        });
    });
}

/// # Safety
/// `x`, `dy` readable and `dx` writable for `n` elements.
#[inline(always)]
unsafe fn gelu_backward_raw<S: Simd>(
    s: S,
    x: *const f32,
    dy: *const f32,
    dx: *mut f32,
    n: usize,
    accumulate: bool,
) {
    #[inline(always)]
    unsafe fn one<T: Simd>(
        t: T,
        x: *const f32,
        dy: *const f32,
        dx: *mut f32,
        i: usize,
        accumulate: bool,
    ) {
        // SAFETY: the caller keeps i + LANES <= n.
        unsafe {
            let g = t.mul(t.load(dy.add(i)), math::gelu_grad_v(t, t.load(x.add(i))));
            let g = if accumulate {
                t.add(t.load(dx.add(i)), g)
            } else {
                g
            };
            t.store(dx.add(i), g);
        }
    }
    let full = n / S::LANES * S::LANES;
    let mut i = 0;
    while i < full {
        // SAFETY: i + LANES <= n.
        unsafe { one(s, x, dy, dx, i, accumulate) };
        i += S::LANES;
    }
    for i in full..n {
        // SAFETY: i < n.
        unsafe { one(Scalar, x, dy, dx, i, accumulate) };
    }
}

/// GELU forward that also keeps, for [`gelu_backward_saved`], the factor
/// `h[i] = 1 + erf(x[i] / sqrt 2)` (`2 Phi(x)`, exactly as [`gelu`] computes it):
/// `y[i] = gelu(x[i])`, bit-identical to [`gelu_slice`].
///
/// # Panics
/// If the lengths differ.
pub fn gelu_forward_saving(x: &[f32], y: &mut [f32], h: &mut [f32]) {
    let n = x.len();
    assert!(
        y.len() == n && h.len() == n,
        "gelu_forward_saving: length mismatch"
    );
    gelu_saving_exec(Exec::current(), x, y, h);
}

/// The GELU backward pass from the factor kept by [`gelu_forward_saving`]:
/// `dx[i] (+)= dy[i] * gelu_grad(x[i])`, bit-identical to [`gelu_backward`] when `h`
/// holds what [`gelu_forward_saving`] stored for the same `x`, at about a third of its
/// cost.
///
/// # Panics
/// If the lengths differ.
pub fn gelu_backward_saved(x: &[f32], h: &[f32], dy: &[f32], dx: &mut [f32], accumulate: bool) {
    let n = x.len();
    assert!(
        h.len() == n && dy.len() == n && dx.len() == n,
        "gelu_backward_saved: length mismatch"
    );
    gelu_backward_saved_exec(Exec::current(), x, h, dy, dx, accumulate);
}

/// Runs `f(lo, len)` over `0..n` on `exec`: in parts of `chunk` elements on the pool
/// when there are at least two, else in one call on this thread. Elementwise work only:
/// the split never changes a bit.
fn chunked(exec: Exec, n: usize, chunk: usize, f: &(dyn Fn(usize, usize) + Sync)) {
    if exec.threads <= 1 || n < 2 * chunk || plan_threads(exec.threads) <= 1 {
        f(0, n);
        return;
    }
    run_parts(n.div_ceil(chunk), exec.threads, &|part| {
        let lo = part * chunk;
        f(lo, chunk.min(n - lo));
    });
}

pub(crate) fn gelu_saving_exec(exec: Exec, x: &[f32], y: &mut [f32], h: &mut [f32]) {
    let (xp, yp, hp) = (
        SendPtr(x.as_ptr().cast_mut()),
        SendPtr(y.as_mut_ptr()),
        SendPtr(h.as_mut_ptr()),
    );
    chunked(exec, x.len(), GELU_CHUNK, &|lo, len| {
        // SAFETY: all three slices hold n elements; parts are disjoint.
        with_simd!(exec.isa, |s| unsafe {
            gelu_saving_raw(s, xp.get().add(lo), yp.get().add(lo), hp.get().add(lo), len)
        });
    });
}

pub(crate) fn gelu_backward_saved_exec(
    exec: Exec,
    x: &[f32],
    h: &[f32],
    dy: &[f32],
    dx: &mut [f32],
    accumulate: bool,
) {
    let (xp, hp, dyp, dxp) = (
        SendPtr(x.as_ptr().cast_mut()),
        SendPtr(h.as_ptr().cast_mut()),
        SendPtr(dy.as_ptr().cast_mut()),
        SendPtr(dx.as_mut_ptr()),
    );
    chunked(exec, x.len(), GELU_CHUNK, &|lo, len| {
        // SAFETY: all four slices hold n elements; parts are disjoint.
        with_simd!(exec.isa, |s| unsafe {
            gelu_backward_saved_raw(
                s,
                xp.get().add(lo),
                hp.get().add(lo),
                dyp.get().add(lo),
                dxp.get().add(lo),
                len,
                accumulate,
            )
        });
    });
}

/// # Safety
/// `x` readable and `y`, `h` writable for `n` elements.
#[inline(always)]
unsafe fn gelu_saving_raw<S: Simd>(s: S, x: *const f32, y: *mut f32, h: *mut f32, n: usize) {
    #[inline(always)]
    unsafe fn one<T: Simd>(t: T, x: *const f32, y: *mut f32, h: *mut f32, i: usize) {
        // SAFETY: the caller keeps i + LANES <= n.
        unsafe {
            let xv = t.load(x.add(i));
            let hv = math::two_phi_v(t, xv);
            t.store(h.add(i), hv);
            t.store(y.add(i), math::gelu_from_v(t, xv, hv));
        }
    }
    let full = n / S::LANES * S::LANES;
    let mut i = 0;
    while i < full {
        // SAFETY: i + LANES <= n.
        unsafe { one(s, x, y, h, i) };
        i += S::LANES;
    }
    for i in full..n {
        // SAFETY: i < n.
        unsafe { one(Scalar, x, y, h, i) };
    }
}

/// # Safety
/// `x`, `h`, `dy` readable and `dx` writable for `n` elements.
#[inline(always)]
unsafe fn gelu_backward_saved_raw<S: Simd>(
    s: S,
    x: *const f32,
    h: *const f32,
    dy: *const f32,
    dx: *mut f32,
    n: usize,
    accumulate: bool,
) {
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn one<T: Simd>(
        t: T,
        x: *const f32,
        h: *const f32,
        dy: *const f32,
        dx: *mut f32,
        i: usize,
        accumulate: bool,
    ) {
        // SAFETY: the caller keeps i + LANES <= n.
        unsafe {
            let grad = math::gelu_grad_from_v(t, t.load(x.add(i)), t.load(h.add(i)));
            let g = t.mul(t.load(dy.add(i)), grad);
            let g = if accumulate {
                t.add(t.load(dx.add(i)), g)
            } else {
                g
            };
            t.store(dx.add(i), g);
        }
    }
    let full = n / S::LANES * S::LANES;
    let mut i = 0;
    while i < full {
        // SAFETY: i + LANES <= n.
        unsafe { one(s, x, h, dy, dx, i, accumulate) };
        i += S::LANES;
    }
    for i in full..n {
        // SAFETY: i < n.
        unsafe { one(Scalar, x, h, dy, dx, i, accumulate) };
    }
}

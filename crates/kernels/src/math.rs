//! Transcendental functions from IEEE `+ - * / sqrt` and `fma` only.
//!
//! Each function is written once, generically over [`Simd`], so the scalar functions
//! exported by the crate ([`crate::exp`], ...) and the vector loops in
//! [`crate::elementwise`] run the very same sequence of operations and agree bit for
//! bit. No libm call is made: libm is dispatched by CPU and differs between libcs.
//!
//! Range reduction is exact (Cody-Waite with a short `ln 2` head, evaluated with
//! `fma`); special values are patched with selects at the end, so vector lanes never
//! branch. Results that would be subnormal are flushed to zero *before* they are
//! computed (inputs are clamped so no subnormal is ever produced internally), except
//! where the input itself is subnormal and the result must equal it (`tanh`, `erf`).
//!
//! Accuracy (max error over the whole `f32` range, measured against an `f64`
//! reference by `tests::math` on dense sweeps; "ulp" is relative to the exact value):
//!
//! | function | max error measured |
//! |---|---|
//! | `exp` | 0.97 ulp (0 below `-87.33`, where the exact value is < 1.007 * 2^-126) |
//! | `ln` | 0.76 ulp |
//! | `tanh` | 1.27 ulp |
//! | `sigmoid` | 1.99 ulp (0 below `-87.33`) |
//! | `erf` | 0.98 ulp |
//! | `erfc` | 4.3 ulp (0 above `9.19`, where the exact value is < 2^-126) |
//! | `gelu` | 5.1 ulp (4.1 above `-5`; `-0` below `-13`, where `|gelu| < 1e-37`) |
//! | `gelu_grad` | 1.2e-7 absolute (it crosses 0 near `-0.75`) |
//!
//! The tests assert slightly looser bounds (1, 1, 1.5, 2, 1, 4.5, 5.5 ulp, 2e-7).

use crate::simd::Simd;

/// `log2(e)`.
const LOG2E: f32 = std::f32::consts::LOG2_E;
/// `1.5 * 2^23`: adding and subtracting it rounds a float below 2^22 to an integer.
const ROUND_MAGIC: f32 = 12_582_912.0;
/// Head of `ln 2`: 9 significant bits, so `n * LN2_HI` is exact for `|n| < 2^15`.
const LN2_HI: f32 = 0.693_359_4;
/// Tail of `ln 2`: `LN2_HI + LN2_LO` is `ln 2` to about 2^-33.
const LN2_LO: f32 = -2.121_944_4e-4;
/// Below this, `exp` returns 0: the exact value is under `1.007 * 2^-126`, and the
/// clamp keeps every intermediate normal.
pub(crate) const EXP_LO: f32 = -87.33;
/// Above this `exp` has overflowed; the clamp keeps `n <= 128`.
const EXP_HI: f32 = 88.8;

/// `e^x` (see [`crate::exp`]).
#[inline(always)]
pub(crate) fn exp_v<S: Simd>(s: S, x: S::V) -> S::V {
    let xc = s.min(s.max(x, s.splat(EXP_LO)), s.splat(EXP_HI));
    // n = round(x / ln 2), rounded once from the exact product.
    let t = s.fma(xc, s.splat(LOG2E), s.splat(ROUND_MAGIC));
    let n = s.sub(t, s.splat(ROUND_MAGIC));
    let r = s.fma(n, s.splat(-LN2_HI), xc);
    let r = s.fma(n, s.splat(-LN2_LO), r);
    // Cephes expf polynomial: e^r = 1 + r + r^2 p(r) on |r| <= ln2 / 2.
    let mut p = s.splat(1.987_569_1e-4);
    p = s.fma(p, r, s.splat(1.398_199_9e-3));
    p = s.fma(p, r, s.splat(8.333_452e-3));
    p = s.fma(p, r, s.splat(4.166_579_6e-2));
    p = s.fma(p, r, s.splat(1.666_666_5e-1));
    p = s.fma(p, r, s.splat(0.5));
    let z = s.mul(r, r);
    let y = s.add(s.fma(p, z, r), s.splat(1.0));
    // Scale by 2^n in two exact steps so that each factor is a normal power of two
    // (n is in -126..=128).
    let n1 = s.sub(
        s.fma(n, s.splat(0.5), s.splat(ROUND_MAGIC)),
        s.splat(ROUND_MAGIC),
    );
    let n2 = s.sub(n, n1);
    let res = s.mul(s.mul(y, s.pow2i(n1)), s.pow2i(n2));
    let res = s.select(s.lt(x, s.splat(EXP_LO)), s.splat(0.0), res);
    s.select(s.is_nan(x), x, res)
}

/// `ln x` (see [`crate::ln`]).
#[inline(always)]
pub(crate) fn ln_v<S: Simd>(s: S, x: S::V) -> S::V {
    let tiny = s.lt(x, s.splat(f32::MIN_POSITIVE));
    // Subnormal inputs are scaled by 2^23 (exact) so `frexp` sees a normal number.
    let xs = s.select(tiny, s.mul(x, s.splat(8_388_608.0)), x);
    let (m, e) = s.frexp(xs);
    let e = s.select(tiny, s.sub(e, s.splat(23.0)), e);
    // Cephes logf: fold m into [sqrt(1/2), sqrt(2)) and take f = m - 1 (exact).
    let low = s.lt(m, s.splat(std::f32::consts::FRAC_1_SQRT_2));
    let e = s.select(low, s.sub(e, s.splat(1.0)), e);
    let f = s.sub(s.select(low, s.add(m, m), m), s.splat(1.0));
    let z = s.mul(f, f);
    let mut p = s.splat(7.037_683_6e-2);
    p = s.fma(p, f, s.splat(-1.151_461e-1));
    p = s.fma(p, f, s.splat(1.167_699_9e-1));
    p = s.fma(p, f, s.splat(-1.242_014_1e-1));
    p = s.fma(p, f, s.splat(1.424_932_3e-1));
    p = s.fma(p, f, s.splat(-1.666_805_8e-1));
    p = s.fma(p, f, s.splat(2.000_071_4e-1));
    p = s.fma(p, f, s.splat(-2.499_999_4e-1));
    p = s.fma(p, f, s.splat(3.333_333e-1));
    let y = s.mul(s.mul(p, f), z);
    let y = s.fma(e, s.splat(LN2_LO), y);
    let y = s.fma(z, s.splat(-0.5), y);
    let r = s.add(f, y);
    let r = s.fma(e, s.splat(LN2_HI), r);
    let r = s.select(s.eq(x, s.splat(f32::INFINITY)), x, r);
    let r = s.select(s.eq(x, s.splat(0.0)), s.splat(f32::NEG_INFINITY), r);
    let r = s.select(s.lt(x, s.splat(0.0)), s.splat(f32::NAN), r);
    s.select(s.is_nan(x), x, r)
}

/// `tanh x` (see [`crate::tanh`]).
#[inline(always)]
pub(crate) fn tanh_v<S: Simd>(s: S, x: S::V) -> S::V {
    let ax = s.abs(x);
    // |x| < 0.625: Cephes tanhf odd polynomial. The clamp keeps x^2 normal; below
    // 2^-12 the correction is under half an ulp and the result is x itself.
    let axc = s.max(ax, s.splat(2.441_406_3e-4));
    let z = s.mul(axc, axc);
    let mut p = s.splat(-5.704_988_7e-3);
    p = s.fma(p, z, s.splat(2.063_909e-2));
    p = s.fma(p, z, s.splat(-5.373_971_6e-2));
    p = s.fma(p, z, s.splat(1.333_144_2e-1));
    p = s.fma(p, z, s.splat(-3.333_328e-1));
    let small = s.fma(s.mul(p, z), ax, ax);
    // Otherwise 1 - 2 / (e^{2|x|} + 1); e^{2|x|} overflows to inf harmlessly.
    let e = exp_v(s, s.add(ax, ax));
    let large = s.sub(s.splat(1.0), s.div(s.splat(2.0), s.add(e, s.splat(1.0))));
    let r = s.select(s.lt(ax, s.splat(0.625)), small, large);
    let r = s.or_sign(r, x);
    s.select(s.is_nan(x), x, r)
}

/// `1 / (1 + e^-x)` (see [`crate::sigmoid`]).
#[inline(always)]
pub(crate) fn sigmoid_v<S: Simd>(s: S, x: S::V) -> S::V {
    // e = e^{-|x|} never overflows, and is 0 (never subnormal) below -87.33, so
    // e / (1 + e) is 0 or normal.
    let e = exp_v(s, s.sub(s.splat(0.0), s.abs(x)));
    let d = s.add(s.splat(1.0), e);
    let r = s.div(s.select(s.lt(x, s.splat(0.0)), e, s.splat(1.0)), d);
    s.select(s.is_nan(x), x, r)
}

/// `erf(x)` for `|x| <= 1`: `x + x Q(x^2)`, `Q(z) = erf(x)/x - 1` a degree-6 Chebyshev
/// fit (1.2e-9); writing it as `fma(x, Q, x)` keeps the leading `2/sqrt(pi)` exact.
#[inline(always)]
fn erf_small_v<S: Simd>(s: S, x: S::V) -> S::V {
    let ax = s.abs(x);
    // Clamp keeps z normal; below 2^-20 the z terms are far under half an ulp.
    let axc = s.max(ax, s.splat(9.536_743e-7));
    let z = s.mul(axc, axc);
    let mut p = s.splat(7.875_875e-5);
    p = s.fma(p, z, s.splat(-8.016_864_3e-4));
    p = s.fma(p, z, s.splat(5.189_087_2e-3));
    p = s.fma(p, z, s.splat(-2.685_421_1e-2));
    p = s.fma(p, z, s.splat(1.128_359_4e-1));
    p = s.fma(p, z, s.splat(-3.761_262_6e-1));
    p = s.fma(p, z, s.splat(1.283_791_7e-1));
    s.fma(x, p, x)
}

/// Above this, `erfc` returns 0: the exact value is below 2^-126.
const ERFC_HI: f32 = 9.19;

/// Where `erfc` and `Phi` switch from `1 - erf` to the tail formula.
const ERFC_LO: f32 = 0.67;

/// `erfc(x)` for `x >= ERFC_LO`, from `t = 1/x` and `x^2 = hi + lo` split exactly:
/// `e^{-hi} (1 - lo) t g(t)`, with `g` a Chebyshev fit of `x e^{x^2} erfc(x)` in
/// `t - 0.8` on `t` in `[0.105, 1.5]` (1.5e-8 relative). Callers clamp `x` to
/// `[ERFC_LO, ERFC_HI]` so that every intermediate is normal.
#[inline(always)]
fn erfc_tail_v<S: Simd>(s: S, t: S::V, hi: S::V, lo: S::V) -> S::V {
    let u = s.sub(t, s.splat(0.8));
    let mut g = s.splat(0.010_873_607);
    for c in [
        -0.007_583_065,
        -0.017_787_399,
        0.021_232_601,
        -0.006_590_319,
        0.001_379_268_1,
        0.003_240_801_4,
        -0.016_578_354,
        0.032_388_34,
        -0.041_775_543,
        0.031_096_349,
        0.024_682_108,
        -0.166_868_08,
        0.459_778_64,
    ] {
        g = s.fma(g, u, s.splat(c));
    }
    let e = exp_v(s, s.sub(s.splat(0.0), hi));
    let e = s.fma(s.sub(s.splat(0.0), lo), e, e);
    s.mul(e, s.mul(t, g))
}

/// `erfc(x)` for `x >= ERFC_LO`; other lanes are computed on a clamped value and must be
/// discarded by the caller. 0 above `ERFC_HI`.
#[inline(always)]
fn erfc_large_v<S: Simd>(s: S, x: S::V) -> S::V {
    let xc = s.min(s.max(x, s.splat(ERFC_LO)), s.splat(ERFC_HI));
    let t = s.div(s.splat(1.0), xc);
    let hi = s.mul(xc, xc);
    let lo = s.fma(xc, xc, s.sub(s.splat(0.0), hi));
    let r = erfc_tail_v(s, t, hi, lo);
    s.select(s.gt(x, s.splat(ERFC_HI)), s.splat(0.0), r)
}

/// `erf x` (see [`crate::erf`]).
#[inline(always)]
pub(crate) fn erf_v<S: Simd>(s: S, x: S::V) -> S::V {
    let ax = s.abs(x);
    let small = erf_small_v(s, x);
    let large = s.or_sign(s.sub(s.splat(1.0), erfc_large_v(s, ax)), x);
    let r = s.select(s.lt(ax, s.splat(1.0)), small, large);
    s.select(s.is_nan(x), x, r)
}

/// `erfc x = 1 - erf x` (see [`crate::erfc`]).
#[inline(always)]
pub(crate) fn erfc_v<S: Simd>(s: S, x: S::V) -> S::V {
    let ax = s.abs(x);
    let small = s.sub(s.splat(1.0), erf_small_v(s, x));
    let el = erfc_large_v(s, ax);
    let large = s.select(s.lt(x, s.splat(0.0)), s.sub(s.splat(2.0), el), el);
    let r = s.select(s.lt(ax, s.splat(ERFC_LO)), small, large);
    s.select(s.is_nan(x), x, r)
}

/// `ERFC_LO * sqrt 2` and `ERFC_HI * sqrt 2`: the same switch points for `x / sqrt 2`.
const PHI_LO: f32 = 0.947_523;
const PHI_HI: f32 = 12.996_535;

/// `1 + erf(x / sqrt 2)` = `2 Phi(x)`, accurate in the lower tail: there it is
/// `erfc(|x| / sqrt 2)`, with `x^2 / 2` split exactly from `x` itself (rounding
/// `x / sqrt 2` first would cost up to `x^2` ulps).
#[inline(always)]
pub(crate) fn two_phi_v<S: Simd>(s: S, x: S::V) -> S::V {
    let u = s.mul(x, s.splat(std::f32::consts::FRAC_1_SQRT_2));
    let small = s.add(s.splat(1.0), erf_small_v(s, u));
    let ax = s.abs(x);
    let xc = s.min(s.max(ax, s.splat(PHI_LO)), s.splat(PHI_HI));
    let t = s.div(s.splat(std::f32::consts::SQRT_2), xc);
    let sq = s.mul(xc, xc);
    let lo = s.mul(s.fma(xc, xc, s.sub(s.splat(0.0), sq)), s.splat(0.5));
    let hi = s.mul(sq, s.splat(0.5));
    let el = erfc_tail_v(s, t, hi, lo);
    let el = s.select(s.gt(ax, s.splat(PHI_HI)), s.splat(0.0), el);
    let large = s.select(s.lt(x, s.splat(0.0)), el, s.sub(s.splat(2.0), el));
    s.select(s.lt(ax, s.splat(PHI_LO)), small, large)
}

/// `x Phi(x)` (see [`crate::gelu`]).
#[inline(always)]
pub(crate) fn gelu_v<S: Simd>(s: S, x: S::V) -> S::V {
    gelu_from_v(s, x, two_phi_v(s, x))
}

/// [`gelu_v`] given `h = two_phi_v(s, x)`.
#[inline(always)]
pub(crate) fn gelu_from_v<S: Simd>(s: S, x: S::V, h: S::V) -> S::V {
    // The clamp makes gelu(-inf) = -0 instead of -inf * 0 = NaN; below -20 h is 0.
    let xm = s.max(x, s.splat(-20.0));
    // Below 2^-100 the result x/2 would be (near) subnormal: return a signed zero.
    let xm = s.select(
        s.lt(s.abs(x), s.splat(7.888_609e-31)),
        s.or_sign(s.splat(0.0), x),
        xm,
    );
    let r = s.mul(s.mul(xm, s.splat(0.5)), h);
    s.select(s.is_nan(x), x, r)
}

/// `1 / sqrt(2 pi)`.
const INV_SQRT_2PI: f32 = 0.398_942_3;

/// `d/dx x Phi(x) = Phi(x) + x phi(x)` (see [`crate::gelu_grad`]).
#[inline(always)]
pub(crate) fn gelu_grad_v<S: Simd>(s: S, x: S::V) -> S::V {
    gelu_grad_from_v(s, x, two_phi_v(s, x))
}

/// [`gelu_grad_v`] given `h = two_phi_v(s, x)`.
#[inline(always)]
pub(crate) fn gelu_grad_from_v<S: Simd>(s: S, x: S::V, h: S::V) -> S::V {
    // phi(x) = e^{-x^2/2} / sqrt(2 pi), with x^2 / 2 = hi + lo split exactly. Beyond
    // |x| = 14 phi is 0 (and the clamp keeps inf * 0 out).
    let xg = s.min(s.max(x, s.splat(-14.0)), s.splat(14.0));
    let sq = s.mul(xg, xg);
    let lo = s.mul(s.fma(xg, xg, s.sub(s.splat(0.0), sq)), s.splat(0.5));
    let hi = s.mul(sq, s.splat(0.5));
    let e = exp_v(s, s.sub(s.splat(0.0), hi));
    let e = s.fma(s.sub(s.splat(0.0), lo), e, e);
    let r = s.fma(s.mul(xg, s.splat(INV_SQRT_2PI)), e, s.mul(h, s.splat(0.5)));
    s.select(s.is_nan(x), x, r)
}

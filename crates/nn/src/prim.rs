//! Scalar and row primitives the layers use, in one place.
//!
//! Temporary stand-ins until `sep-kernels` exports its own (exp, erf, gelu, sigmoid,
//! softmax and layernorm rows): deterministic (IEEE `+ - * / sqrt`, `mul_add`, fixed
//! order) but not tuned. Every layer calls these names only, so switching to the kernels
//! is a change to this file alone.

/// `e^x` by `x = n ln2 + r`, a degree-7 Taylor polynomial in `r`, and `2^n` by exponent bits.
pub(crate) fn exp(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x > 88.7 {
        return f32::INFINITY;
    }
    if x < -87.3 {
        return 0.0;
    }
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let n = (x * std::f32::consts::LOG2_E).round_ties_even();
    let r = (-n).mul_add(LN2_LO, (-n).mul_add(LN2_HI, x));
    let mut p: f32 = 1.0 / 5040.0;
    for c in [
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ] {
        p = p.mul_add(r, c);
    }
    let e = n as i32;
    // 2^e split in two factors so that e = -126.. stays normal in each.
    let half = e / 2;
    let f1 = f32::from_bits(((half + 127) as u32) << 23);
    let f2 = f32::from_bits(((e - half + 127) as u32) << 23);
    p * f1 * f2
}

/// `1 / (1 + e^-x)`.
pub(crate) fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// `erf(x)`, Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7).
pub(crate) fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / 0.327_591_1f32.mul_add(a, 1.0);
    let mut p = 1.061_405_4f32;
    for c in [-1.453_152_f32, 1.421_413_8, -0.284_496_72, 0.254_829_6] {
        p = p.mul_add(t, c);
    }
    let y = 1.0 - p * t * exp(-a * a);
    if x < 0.0 { -y } else { y }
}

/// GELU, erf form: `0.5 x (1 + erf(x / sqrt 2))`.
pub(crate) fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// `d gelu / dx = 0.5 (1 + erf(x / sqrt 2)) + x exp(-x^2 / 2) / sqrt(2 pi)`.
pub(crate) fn gelu_grad(x: f32) -> f32 {
    const INV_SQRT_2PI: f32 = 0.398_942_3;
    let cdf = 0.5 * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
    (x * INV_SQRT_2PI).mul_add(exp(-0.5 * x * x), cdf)
}

/// Softmax of each row of `x = [rows x cols]` into `y`.
pub(crate) fn softmax_rows(x: &[f32], y: &mut [f32], cols: usize) {
    for (xr, yr) in x.chunks_exact(cols).zip(y.chunks_exact_mut(cols)) {
        let m = xr
            .iter()
            .fold(f32::NEG_INFINITY, |a, &b| if b > a { b } else { a });
        let mut s = 0.0f32;
        for (o, &v) in yr.iter_mut().zip(xr) {
            *o = exp(v - m);
            s += *o;
        }
        for o in yr.iter_mut() {
            *o /= s;
        }
    }
}

/// Log-softmax of each row of `x = [rows x cols]` into `y`.
pub(crate) fn log_softmax_rows(x: &[f32], y: &mut [f32], cols: usize) {
    for (xr, yr) in x.chunks_exact(cols).zip(y.chunks_exact_mut(cols)) {
        let m = xr
            .iter()
            .fold(f32::NEG_INFINITY, |a, &b| if b > a { b } else { a });
        let mut s = 0.0f32;
        for &v in xr {
            s += exp(v - m);
        }
        let lse = m + crate::rng::ln(s as f64) as f32;
        for (o, &v) in yr.iter_mut().zip(xr) {
            *o = v - lse;
        }
    }
}

/// Layer normalisation without affine of each row of `x = [rows x cols]`: writes
/// `xhat` and each row's `1 / sqrt(var + eps)` into `rstd`.
pub(crate) fn layernorm_rows(x: &[f32], xhat: &mut [f32], rstd: &mut [f32], cols: usize, eps: f32) {
    for ((xr, hr), rs) in x
        .chunks_exact(cols)
        .zip(xhat.chunks_exact_mut(cols))
        .zip(rstd)
    {
        let mut s = 0.0f32;
        for &v in xr {
            s += v;
        }
        let mean = s / cols as f32;
        let mut q = 0.0f32;
        for &v in xr {
            let d = v - mean;
            q = d.mul_add(d, q);
        }
        let r = 1.0 / (q / cols as f32 + eps).sqrt();
        *rs = r;
        for (h, &v) in hr.iter_mut().zip(xr) {
            *h = (v - mean) * r;
        }
    }
}

/// Backward of [`layernorm_rows`] given `g = dL/dxhat`:
/// `dx = ((g - mean(g)) - xhat * mean(g * xhat)) * rstd`.
pub(crate) fn layernorm_rows_backward(
    g: &[f32],
    xhat: &[f32],
    rstd: &[f32],
    dx: &mut [f32],
    cols: usize,
) {
    for (((gr, hr), &r), dr) in g
        .chunks_exact(cols)
        .zip(xhat.chunks_exact(cols))
        .zip(rstd)
        .zip(dx.chunks_exact_mut(cols))
    {
        let (mut s1, mut s2) = (0.0f32, 0.0f32);
        for (&gv, &hv) in gr.iter().zip(hr) {
            s1 += gv;
            s2 = gv.mul_add(hv, s2);
        }
        let m1 = s1 / cols as f32;
        let m2 = s2 / cols as f32;
        for ((d, &gv), &hv) in dr.iter_mut().zip(gr).zip(hr) {
            *d = (-hv).mul_add(m2, gv - m1) * r;
        }
    }
}

/// `y[i] = gelu(x[i])`.
pub(crate) fn gelu_slice(x: &[f32], y: &mut [f32]) {
    for (o, &v) in y.iter_mut().zip(x) {
        *o = gelu(v);
    }
}

/// `dx[i] = dy[i] * gelu_grad(x[i])`.
pub(crate) fn gelu_backward_slice(x: &[f32], dy: &[f32], dx: &mut [f32]) {
    for ((d, &g), &v) in dx.iter_mut().zip(dy).zip(x) {
        *d = g * gelu_grad(v);
    }
}

/// `y[i] = sigmoid(x[i])`.
pub(crate) fn sigmoid_slice(x: &[f32], y: &mut [f32]) {
    for (o, &v) in y.iter_mut().zip(x) {
        *o = sigmoid(v);
    }
}

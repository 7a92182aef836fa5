//! Kernels of the serial LSTM (`sep_cm::Lstm`, doc/FORMAT.md 4.13): its
//! column-major matrix-vector products, gradient outer products and Adam
//! step, in plain `f32` arithmetic (a multiply, then an add: never fused).
//!
//! Each kernel is one portable loop body, compiled twice: as is (SSE2 on a
//! baseline x86-64 build) and inside an AVX2 function, where the compiler
//! vectorises the same loops eight lanes wide. Every vectorised loop runs
//! *across outputs*: each output's chain of operations is the one written
//! (in order of the input index), and [`dot_cols`]' eight partial sums are
//! the lanes `k mod 8` written out; nothing is reassociated (Rust never
//! reorders or contracts `f32` operations), so both paths give the same bits
//! (doc/DETERMINISM.md; tested against each other in `src/tests/serial.rs`).

/// `y[k] += sum_j x[j] * w[j * m + k]` for `k < m = y.len()`, adding the
/// columns in order of `j` (`w`: `x.len()` columns of `m`).
///
/// # Panics
/// If `w` is shorter than `x.len() * y.len()`.
#[inline]
pub fn serial_matvec_cols(w: &[f32], x: &[f32], y: &mut [f32]) {
    assert!(
        w.len() >= x.len() * y.len(),
        "serial_matvec_cols: w too short"
    );
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `avx2()` checked that the CPU has AVX2; the body is safe code.
        unsafe { x86::matvec_cols(w, x, y) };
        return;
    }
    matvec_cols_body(w, x, y);
}

/// `g[j * m + k] += d[k] * x[j]` for every `j < x.len()`, `k < m = d.len()`
/// (the gradient of a column-major matrix: an outer product).
///
/// # Panics
/// If `g` is shorter than `x.len() * d.len()`.
#[inline]
pub fn serial_outer_add(g: &mut [f32], d: &[f32], x: &[f32]) {
    assert!(
        g.len() >= x.len() * d.len(),
        "serial_outer_add: g too short"
    );
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `avx2()` checked that the CPU has AVX2; the body is safe code.
        unsafe { x86::outer_add(g, d, x) };
        return;
    }
    outer_add_body(g, d, x);
}

/// `out[j] = base[j] + dot(w[j * m..(j + 1) * m], d)` for `j < out.len()`
/// (`m = d.len()`, a multiple of 8; `base` may be `None`: 0). The dot
/// product is eight partial sums (`k mod 8`, each in order of `k`) added as
/// `((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7))`.
///
/// # Panics
/// If `d.len()` is not a multiple of 8 or `w` / `base` are too short.
#[inline]
pub fn serial_dot_cols(w: &[f32], d: &[f32], base: Option<&[f32]>, out: &mut [f32]) {
    assert!(d.len().is_multiple_of(8), "serial_dot_cols: m % 8 != 0");
    assert!(
        w.len() >= out.len() * d.len(),
        "serial_dot_cols: w too short"
    );
    assert!(
        base.is_none_or(|b| b.len() >= out.len()),
        "serial_dot_cols: base too short"
    );
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `avx2()` checked that the CPU has AVX2; the body is safe code.
        unsafe { x86::dot_cols(w, d, base, out) };
        return;
    }
    dot_cols_body(w, d, base, out);
}

/// One Adam step of the serial LSTM over `w`, `g`, `m`, `v` (equal
/// lengths): per element `g' = clamp(g, -clip, clip)`, `m = b1 m + (1 - b1)
/// g'`, `v = b2 v + (1 - b2) (g' g')`, `w -= step * m / (sqrt(v) + eps)`,
/// `g = 0`, with `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-6`.
///
/// # Panics
/// If the slices' lengths differ.
#[inline]
pub fn serial_adam(
    w: &mut [f32],
    g: &mut [f32],
    m: &mut [f32],
    v: &mut [f32],
    step: f32,
    clip: f32,
) {
    let n = w.len();
    assert!(
        g.len() == n && m.len() == n && v.len() == n,
        "serial_adam: lengths differ"
    );
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `avx2()` checked that the CPU has AVX2; the body is safe code.
        unsafe { x86::adam(w, g, m, v, step, clip) };
        return;
    }
    adam_body(w, g, m, v, step, clip);
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn avx2() -> bool {
    matches!(crate::active_isa(), crate::Isa::Avx2 | crate::Isa::Avx512)
}

#[inline(always)]
fn matvec_cols_body(w: &[f32], x: &[f32], y: &mut [f32]) {
    let m = y.len();
    for (col, &xj) in w.chunks_exact(m).zip(x) {
        for (y, &w) in y.iter_mut().zip(col) {
            *y += w * xj;
        }
    }
}

#[inline(always)]
fn outer_add_body(g: &mut [f32], d: &[f32], x: &[f32]) {
    let m = d.len();
    for (col, &xj) in g.chunks_exact_mut(m).zip(x) {
        for (g, &d) in col.iter_mut().zip(d) {
            *g += d * xj;
        }
    }
}

#[inline(always)]
fn dot_cols_body(w: &[f32], d: &[f32], base: Option<&[f32]>, out: &mut [f32]) {
    let m = d.len();
    for (j, (o, col)) in out.iter_mut().zip(w.chunks_exact(m)).enumerate() {
        let mut acc = [0.0f32; 8];
        for (a, b) in col.chunks_exact(8).zip(d.chunks_exact(8)) {
            for k in 0..8 {
                acc[k] += a[k] * b[k];
            }
        }
        let s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
        *o = match base {
            Some(b) => b[j] + s,
            None => s,
        };
    }
}

#[inline(always)]
fn adam_body(w: &mut [f32], g: &mut [f32], m: &mut [f32], v: &mut [f32], step: f32, clip: f32) {
    const B1: f32 = 0.9;
    const B2: f32 = 0.999;
    const EPS: f32 = 1e-6;
    for (((w, g), m), v) in w
        .iter_mut()
        .zip(g.iter_mut())
        .zip(m.iter_mut())
        .zip(v.iter_mut())
    {
        let gc = g.clamp(-clip, clip);
        let mk = B1 * *m + (1.0 - B1) * gc;
        let vk = B2 * *v + (1.0 - B2) * (gc * gc);
        *m = mk;
        *v = vk;
        *w -= step * mk / (vk.sqrt() + EPS);
        *g = 0.0;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The AVX2 instances of the loop bodies (no FMA: a multiply and an
    //! add stay two roundings, as in the portable instance).

    #[target_feature(enable = "avx2")]
    pub(super) fn matvec_cols(w: &[f32], x: &[f32], y: &mut [f32]) {
        super::matvec_cols_body(w, x, y)
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn outer_add(g: &mut [f32], d: &[f32], x: &[f32]) {
        super::outer_add_body(g, d, x)
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn dot_cols(w: &[f32], d: &[f32], base: Option<&[f32]>, out: &mut [f32]) {
        super::dot_cols_body(w, d, base, out)
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn adam(
        w: &mut [f32],
        g: &mut [f32],
        m: &mut [f32],
        v: &mut [f32],
        step: f32,
        clip: f32,
    ) {
        super::adam_body(w, g, m, v, step, clip)
    }
}

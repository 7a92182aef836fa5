//! The Adam update as a kernel: one fused elementwise pass over a parameter's value,
//! gradient and two moments, vectorised for every instruction set and split over
//! threads in fixed chunks.
//!
//! Per element, in this order, each operation a separately rounded IEEE `f32`
//! operation (no `fma`, so that a baseline x86-64 build without FMA runs it at full
//! speed with the same bits):
//!
//! ```text
//! g = grad + weight_decay * p      (only when weight_decay != 0)
//! m = beta1 * m + one_minus_beta1 * g
//! v = beta2 * v + (one_minus_beta2 * g) * g
//! p = p - step_size * (m / (sqrt(v) / bc2_sqrt + eps))
//! grad = 0
//! ```
//!
//! With `weight_decay == 0` the first line is skipped rather than computed with a zero
//! (`g + 0 * p` is not always `g`: signed zeros, infinities). Elements never interact,
//! so neither the vector width nor the chunking changes a bit.

use crate::pool::{plan_threads, run_parts};
use crate::simd::{Scalar, Simd, with_simd};
use crate::{Exec, SendPtr};

/// Elements per thread part (about 0.4 ns per element on one AVX-512 core, bound by
/// the two divisions and the square root); a parameter shorter than
/// [`ADAM_PAR_MIN`] runs on one thread.
const ADAM_CHUNK: usize = 1 << 14;
/// The shortest parameter split between threads: about 50 us of work. (Splitting
/// shorter ones pays on an idle machine but costs CPU time when the second core is
/// shared with other processes; see [`crate::pool`].)
const ADAM_PAR_MIN: usize = 1 << 17;

/// The per-step scalars of an Adam update (see the module docs in `crates/kernels/src/optim.rs` for how they
/// are used). The optimiser computes them once per step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamScalars {
    /// Decay of the first moment.
    pub beta1: f32,
    /// Decay of the second moment.
    pub beta2: f32,
    /// `1 - beta1` (rounded once, by the caller).
    pub one_minus_beta1: f32,
    /// `1 - beta2`.
    pub one_minus_beta2: f32,
    /// `lr / (1 - beta1^t)`.
    pub step_size: f32,
    /// `sqrt(1 - beta2^t)`.
    pub bc2_sqrt: f32,
    /// Added to the bias-corrected root of the second moment.
    pub eps: f32,
    /// L2 penalty added to the gradient; `0` skips that operation.
    pub weight_decay: f32,
}

/// One Adam update of a parameter, in place: `value`, `grad` (set to zero), and the
/// moments `m`, `v`, all of the same length. Bit-identical on every instruction set and
/// thread count to the scalar definition in the module docs of `crates/kernels/src/optim.rs`.
///
/// ```
/// use sep_kernels::{AdamScalars, adam_update};
/// let s = AdamScalars {
///     beta1: 0.9, beta2: 0.999, one_minus_beta1: 0.1, one_minus_beta2: 0.001,
///     step_size: 0.1 / 0.1, bc2_sqrt: 0.001f32.sqrt(), eps: 1e-8, weight_decay: 0.0,
/// };
/// let (mut p, mut g, mut m, mut v) = ([1.0f32], [0.5f32], [0.0f32], [0.0f32]);
/// adam_update(&mut p, &mut g, &mut m, &mut v, &s);
/// assert!((p[0] - 0.9).abs() < 1e-6);
/// assert_eq!(g[0], 0.0);
/// ```
///
/// # Panics
/// If the lengths differ.
pub fn adam_update(
    value: &mut [f32],
    grad: &mut [f32],
    m: &mut [f32],
    v: &mut [f32],
    s: &AdamScalars,
) {
    adam_exec(Exec::current(), value, grad, m, v, s);
}

pub(crate) fn adam_exec(
    exec: Exec,
    value: &mut [f32],
    grad: &mut [f32],
    m: &mut [f32],
    v: &mut [f32],
    s: &AdamScalars,
) {
    let n = value.len();
    assert!(
        grad.len() == n && m.len() == n && v.len() == n,
        "adam_update: buffers of different lengths"
    );
    let parts = if exec.threads > 1 && n >= ADAM_PAR_MIN && plan_threads(exec.threads) > 1 {
        n.div_ceil(ADAM_CHUNK)
    } else {
        1
    };
    let ptrs = [
        SendPtr(value.as_mut_ptr()),
        SendPtr(grad.as_mut_ptr()),
        SendPtr(m.as_mut_ptr()),
        SendPtr(v.as_mut_ptr()),
    ];
    let part = |part: usize| {
        let lo = part * ADAM_CHUNK;
        let len = if parts == 1 {
            n
        } else {
            ADAM_CHUNK.min(n - lo)
        };
        let [p, g, m, v] = ptrs.map(|q| q.get().wrapping_add(lo));
        // SAFETY: the four buffers hold n elements each (checked above) and parts cover
        // disjoint ranges lo..lo + len.
        with_simd!(exec.isa, |t| unsafe {
            if s.weight_decay != 0.0 {
                adam_raw::<_, true>(t, p, g, m, v, len, s)
            } else {
                adam_raw::<_, false>(t, p, g, m, v, len, s)
            }
        });
    };
    if parts == 1 {
        part(0);
    } else {
        run_parts(parts, exec.threads, &part);
    }
}

/// The update of elements `i..i + LANES` on `t`.
///
/// # Safety
/// The four pointers valid for reads and writes of elements `i..i + LANES`.
#[inline(always)]
unsafe fn adam_one<T: Simd, const DECAY: bool>(
    t: T,
    p: *mut f32,
    g: *mut f32,
    m: *mut f32,
    v: *mut f32,
    i: usize,
    s: &AdamScalars,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let (pp, gp, mp, vp) = (p.add(i), g.add(i), m.add(i), v.add(i));
        let pv = t.load(pp);
        let mut gd = t.load(gp);
        if DECAY {
            gd = t.add(gd, t.mul(t.splat(s.weight_decay), pv));
        }
        let mv = t.add(
            t.mul(t.splat(s.beta1), t.load(mp)),
            t.mul(t.splat(s.one_minus_beta1), gd),
        );
        let vv = t.add(
            t.mul(t.splat(s.beta2), t.load(vp)),
            t.mul(t.mul(t.splat(s.one_minus_beta2), gd), gd),
        );
        let denom = t.add(t.div(t.sqrt(vv), t.splat(s.bc2_sqrt)), t.splat(s.eps));
        let pn = t.sub(pv, t.mul(t.splat(s.step_size), t.div(mv, denom)));
        t.store(mp, mv);
        t.store(vp, vv);
        t.store(pp, pn);
        t.store(gp, t.splat(0.0));
    }
}

/// # Safety
/// The four pointers valid for reads and writes of `n` elements.
#[inline(always)]
unsafe fn adam_raw<S: Simd, const DECAY: bool>(
    s: S,
    p: *mut f32,
    g: *mut f32,
    m: *mut f32,
    v: *mut f32,
    n: usize,
    sc: &AdamScalars,
) {
    let full = n / S::LANES * S::LANES;
    let mut i = 0;
    while i < full {
        // SAFETY: i + LANES <= n.
        unsafe { adam_one::<S, DECAY>(s, p, g, m, v, i, sc) };
        i += S::LANES;
    }
    for i in full..n {
        // SAFETY: i < n.
        unsafe { adam_one::<Scalar, DECAY>(Scalar, p, g, m, v, i, sc) };
    }
}

//! The fixed 16-lane reduction every row reduction uses, and the elementwise loop.
//!
//! A reduction along a row of `n` elements (sum, max, sum of squares, ...) is defined,
//! independently of the SIMD width, as:
//!
//! 1. 16 partial accumulators `acc[0..16]`, all starting at `init`;
//! 2. for `i` in `0..n`, in order: `acc[i % 16] = op(acc[i % 16], x[i])`;
//! 3. a fixed pairwise tree: for `w` in `[8, 4, 2, 1]`, for `q` in `0..w`:
//!    `acc[q] = combine(acc[q], acc[q + w])`; the result is `acc[0]`.
//!
//! A vector of `L` lanes (16, 8, 4 or 1) holds accumulators `v*L .. v*L + L` in its
//! `16 / L` registers; full chunks of 16 elements are loaded as `16 / L` vectors.
//! The accumulators are then stored to a `[f32; 16]`, the tail (`n % 16` elements) is
//! added lane by lane with the scalar form of the same operation, and the tree runs in
//! scalar code. Every path thus performs exactly the same operations on the same values.

use crate::simd::{Scalar, Simd};

/// Partial accumulators per reduction; fixed, whatever the vector width.
pub(crate) const RED_LANES: usize = 16;

/// One step of a row reduction: `acc` combined with elements `i .. i + S::LANES`.
pub(crate) trait RowOp {
    /// # Safety
    /// Elements `i .. i + S::LANES` of every row the op reads must be in bounds.
    unsafe fn step<S: Simd>(&self, s: S, acc: S::V, i: usize) -> S::V;
}

/// How the 16 partial results are combined.
#[derive(Clone, Copy)]
pub(crate) enum Combine {
    /// `a + b`.
    Add,
    /// `if a > b { a } else { b }`.
    Max,
}

/// The fixed tree of step 3 above.
#[inline(always)]
pub(crate) fn tree16(mut acc: [f32; RED_LANES], combine: Combine) -> f32 {
    let mut w = RED_LANES / 2;
    while w > 0 {
        for q in 0..w {
            acc[q] = match combine {
                Combine::Add => acc[q] + acc[q + w],
                Combine::Max => Scalar.max(acc[q], acc[q + w]),
            };
        }
        w /= 2;
    }
    acc[0]
}

/// Reduces `n` elements with `op` (see the module doc for the exact order).
///
/// # Safety
/// `op.step` must be valid for every `i` with `i + LANES <= n`.
#[inline(always)]
pub(crate) unsafe fn reduce_row<S: Simd, O: RowOp>(
    s: S,
    op: &O,
    n: usize,
    init: f32,
    combine: Combine,
) -> f32 {
    let nv = RED_LANES / S::LANES;
    let mut acc = [s.splat(init); RED_LANES];
    let full = n / RED_LANES * RED_LANES;
    let mut i = 0;
    while i < full {
        for (v, a) in acc.iter_mut().enumerate().take(nv) {
            // SAFETY: i + v * LANES + LANES <= full <= n.
            *a = unsafe { op.step(s, *a, i + v * S::LANES) };
        }
        i += RED_LANES;
    }
    let mut lanes = [init; RED_LANES];
    for (v, a) in acc.iter().enumerate().take(nv) {
        // SAFETY: v * LANES + LANES <= 16 = lanes.len().
        unsafe { s.store(lanes.as_mut_ptr().add(v * S::LANES), *a) };
    }
    for i in full..n {
        // SAFETY: i < n.
        lanes[i % RED_LANES] = unsafe { op.step(Scalar, lanes[i % RED_LANES], i) };
    }
    tree16(lanes, combine)
}

/// An elementwise function, written once for every [`Simd`].
pub(crate) trait Map: Sync {
    /// Elements per thread part of a long slice: about 10 us of work.
    const CHUNK: usize = 1 << 14;
    /// `f(x)` lane by lane.
    fn apply<S: Simd>(&self, s: S, x: S::V) -> S::V;
}

/// `dst[i] = f(src[i])` for `i < n`; `src` and `dst` may be the same pointer.
///
/// # Safety
/// `src[..n]` readable, `dst[..n]` writable, and the two either equal or disjoint.
#[inline(always)]
pub(crate) unsafe fn map_raw<S: Simd, F: Map>(
    s: S,
    f: &F,
    src: *const f32,
    dst: *mut f32,
    n: usize,
) {
    let full = n / S::LANES * S::LANES;
    let mut i = 0;
    while i < full {
        // SAFETY: i + LANES <= n.
        unsafe { s.store(dst.add(i), f.apply(s, s.load(src.add(i)))) };
        i += S::LANES;
    }
    for i in full..n {
        // SAFETY: i < n.
        unsafe { *dst.add(i) = f.apply(Scalar, *src.add(i)) };
    }
}

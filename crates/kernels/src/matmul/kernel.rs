//! The register-tiled micro-kernel and the packing routines of the matrix products.
//!
//! The micro-kernel keeps an `MR x NV` block of vectors of `C` in registers (`MR` rows,
//! `NV * LANES` consecutive columns) and, for each `p` of a k-block in order, loads one
//! row of `NV` vectors of the packed `B` panel, broadcasts `A(i, p)` for each of the
//! `MR` rows and does `acc = fma(a, b, acc)`. Each lane of each accumulator is thus the
//! contract's chain for one element of `C`; nothing is ever summed across lanes.

use crate::simd::Simd;

/// `C[MR x NV*LANES] (+)=` packed `A` panel times `B` panel over `kc` steps.
///
/// `ap[p * lda + r]` is `A(r, p)` (`lda = MR` for a packed panel); `bp[p * ldb + j]` is
/// `B(p, j)`; `C(r, j)` is
/// `c[r * ldc + j]`. The accumulators start from `C` when `load_c`, else from `+0.0`.
///
/// # Safety
/// All the indices above must be in bounds for `r < MR`, `p < kc`,
/// `j < NV * LANES`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn kernel<S: Simd, const MR: usize, const NV: usize>(
    s: S,
    kc: usize,
    ap: *const f32,
    lda: usize,
    bp: *const f32,
    ldb: usize,
    c: *mut f32,
    ldc: usize,
    load_c: bool,
) {
    let l = S::LANES;
    let mut acc = [[s.splat(0.0); NV]; MR];
    if load_c {
        for (r, row) in acc.iter_mut().enumerate() {
            for (v, x) in row.iter_mut().enumerate() {
                // SAFETY: r < MR, v * l + l <= NV * LANES.
                *x = unsafe { s.load(c.add(r * ldc + v * l)) };
            }
        }
    }
    let (mut a, mut b) = (ap, bp);
    for _ in 0..kc {
        let mut bv = [s.splat(0.0); NV];
        for (v, x) in bv.iter_mut().enumerate() {
            // SAFETY: row p of the B panel holds NV * LANES floats.
            *x = unsafe { s.load(b.add(v * l)) };
        }
        for (r, row) in acc.iter_mut().enumerate() {
            // SAFETY: A(r, p) is in bounds for r < MR, p < kc.
            let av = s.splat(unsafe { *a.add(r) });
            for (x, &bj) in row.iter_mut().zip(&bv) {
                *x = s.fma(av, bj, *x);
            }
        }
        // SAFETY: stays within (or one past) the panels, whose length the caller
        // guarantees.
        unsafe {
            a = a.add(lda);
            b = b.add(ldb);
        }
    }
    for (r, row) in acc.iter().enumerate() {
        for (v, x) in row.iter().enumerate() {
            // SAFETY: as for the loads.
            unsafe { s.store(c.add(r * ldc + v * l), *x) };
        }
    }
}

/// [`kernel`] for a run-time tile size `mr <= S::MR`, `nv <= S::NV` (at most 6 x 4).
///
/// # Safety
/// As for [`kernel`], with `MR = mr`, `NV = nv`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tile<S: Simd>(
    s: S,
    mr: usize,
    nv: usize,
    kc: usize,
    ap: *const f32,
    lda: usize,
    bp: *const f32,
    ldb: usize,
    c: *mut f32,
    ldc: usize,
    load_c: bool,
) {
    macro_rules! arms {
        ($(($m:literal, $v:literal)),*) => {
            match (mr, nv) {
                // SAFETY: the caller's contract, with MR = mr, NV = nv.
                $(($m, $v) if $m <= S::MR && $v <= S::NV => unsafe {
                    kernel::<S, $m, $v>(s, kc, ap, lda, bp, ldb, c, ldc, load_c)
                },)*
                _ => unreachable!("matmul tile {mr} x {nv} vectors"),
            }
        };
    }
    arms!(
        (1, 1),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 1),
        (2, 2),
        (2, 3),
        (2, 4),
        (3, 1),
        (3, 2),
        (3, 3),
        (3, 4),
        (4, 1),
        (4, 2),
        (4, 3),
        (4, 4),
        (5, 1),
        (5, 2),
        (5, 3),
        (5, 4),
        (6, 1),
        (6, 2),
        (6, 3),
        (6, 4)
    )
}

/// Packs rows `p0..p0 + kc`, columns `j0..j0 + nr` of a row-major `B` (row stride
/// `ldb`) as `bp[p * width + j]`, zero-filling columns `nr..width`.
///
/// # Safety
/// The named part of `B` must be readable, `bp[..kc * width]` writable, `nr <= width`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn pack_b_rows(
    b: *const f32,
    ldb: usize,
    p0: usize,
    j0: usize,
    nr: usize,
    kc: usize,
    bp: *mut f32,
    width: usize,
) {
    for p in 0..kc {
        // SAFETY: the caller's contract; source and panel do not overlap.
        unsafe {
            let src = b.add((p0 + p) * ldb + j0);
            let dst = bp.add(p * width);
            std::ptr::copy_nonoverlapping(src, dst, nr);
            if nr < width {
                std::ptr::write_bytes(dst.add(nr), 0, width - nr);
            }
        }
    }
}

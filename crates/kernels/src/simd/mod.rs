//! The vector abstraction every kernel is written against.
//!
//! A kernel is a generic function over [`Simd`]; the same source is compiled once per
//! instruction set (scalar, SSE2, AVX2+FMA, AVX-512F). Every trait method is one IEEE
//! operation (or an exact bit manipulation) applied lane by lane, with the same result in
//! every implementation, so a generic kernel gives the same bits whatever the lane count,
//! as long as it never lets the lane count decide *which* elements are combined. That
//! last rule is the kernel author's job (see `doc/DETERMINISM.md` section 2).
//!
//! Semantics shared by all implementations:
//! * `fma(a, b, c)` is `a * b + c` with one rounding (`f32::mul_add`);
//! * `min(a, b)` is `if a < b { a } else { b }` and `max(a, b)` is
//!   `if a > b { a } else { b }` (the x86 `minps`/`maxps` rule: with a NaN or two zeros,
//!   the second operand comes back);
//! * masks are per-lane booleans produced by comparisons (false for NaN operands).
//!
//! The floating-point environment is assumed to be the default (round to nearest even,
//! no flush-to-zero, no denormals-are-zero).

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

/// One instruction set, seen as a vector of `LANES` `f32` lanes.
///
/// Implementations are zero-sized tokens that can only be created once the CPU is
/// known to support the instructions they use; that is the invariant every `unsafe`
/// block inside an implementation relies on.
pub(crate) trait Simd: Copy {
    /// Lanes per vector; divides 16.
    const LANES: usize;
    /// Matrix-product register tile: rows of `C` per micro-kernel (at most 6).
    const MR: usize;
    /// Matrix-product register tile: vectors of `C` columns per micro-kernel (at most 4).
    const NV: usize;
    /// A vector of `LANES` floats.
    type V: Copy;
    /// A per-lane boolean.
    type M: Copy;

    /// Every lane set to `x`.
    fn splat(self, x: f32) -> Self::V;
    /// Loads `LANES` floats.
    ///
    /// # Safety
    /// `p..p + LANES` must be readable.
    unsafe fn load(self, p: *const f32) -> Self::V;
    /// Stores `LANES` floats.
    ///
    /// # Safety
    /// `p..p + LANES` must be writable.
    unsafe fn store(self, p: *mut f32, v: Self::V);

    /// `a + b`.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a - b`.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a * b`.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a / b`, correctly rounded.
    fn div(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a * b + c` with a single rounding.
    fn fma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `sqrt(a)`, correctly rounded (IEEE).
    fn sqrt(self, a: Self::V) -> Self::V;
    /// `if a < b { a } else { b }`.
    fn min(self, a: Self::V, b: Self::V) -> Self::V;
    /// `if a > b { a } else { b }`.
    fn max(self, a: Self::V, b: Self::V) -> Self::V;

    /// `a < b`.
    fn lt(self, a: Self::V, b: Self::V) -> Self::M;
    /// `a > b`.
    fn gt(self, a: Self::V, b: Self::V) -> Self::M;
    /// `a == b` (false for NaN).
    fn eq(self, a: Self::V, b: Self::V) -> Self::M;
    /// `a` is a NaN.
    fn is_nan(self, a: Self::V) -> Self::M;
    /// `if m { a } else { b }`.
    fn select(self, m: Self::M, a: Self::V, b: Self::V) -> Self::V;

    /// `|a|` (clears the sign bit).
    fn abs(self, a: Self::V) -> Self::V;
    /// `a` with the sign bit of `s` or-ed in (a copysign for non-negative `a`).
    fn or_sign(self, a: Self::V, s: Self::V) -> Self::V;
    /// `2^n` for integer-valued `n` in `-126..=127` (exact bit construction).
    fn pow2i(self, n: Self::V) -> Self::V;
    /// For a positive normal finite `x`: `(m, e)` with `x = m * 2^e`, `m` in `[0.5, 1)`,
    /// `e` an integer-valued float (exact bit manipulation).
    fn frexp(self, x: Self::V) -> (Self::V, Self::V);

    /// Packs `nr` rows of a row-major matrix (row stride `ld`), `kc` columns each, as the
    /// transposed panel `dst[p * width + j] = src[j * ld + p]`, zero-filling columns
    /// `nr..width` of the panel. Pure data movement: any order gives the same bits.
    ///
    /// # Safety
    /// `src[j * ld + p]` readable for `j < nr`, `p < kc`; `dst[..kc * width]` writable;
    /// `nr <= width`.
    #[inline(always)]
    unsafe fn pack_transposed(
        self,
        src: *const f32,
        ld: usize,
        nr: usize,
        kc: usize,
        dst: *mut f32,
        width: usize,
    ) {
        // SAFETY: the caller's contract covers every index used.
        unsafe { pack_transposed_scalar(src, ld, nr, kc, dst, width) }
    }
}

/// [`Simd::pack_transposed`] with plain loops, blocked so that reads and writes both
/// stay within a few cache lines.
///
/// # Safety
/// As for [`Simd::pack_transposed`].
#[inline(always)]
pub(crate) unsafe fn pack_transposed_scalar(
    src: *const f32,
    ld: usize,
    nr: usize,
    kc: usize,
    dst: *mut f32,
    width: usize,
) {
    const BLOCK: usize = 16;
    let mut p0 = 0;
    while p0 < kc {
        let p1 = kc.min(p0 + BLOCK);
        for j in 0..nr {
            for p in p0..p1 {
                // SAFETY: j < nr and p < kc read inside the caller's rows; every write
                // is below kc * width.
                unsafe { *dst.add(p * width + j) = *src.add(j * ld + p) };
            }
        }
        p0 = p1;
    }
    if nr < width {
        for p in 0..kc {
            // SAFETY: columns nr..width of panel row p are inside `dst`.
            unsafe { std::ptr::write_bytes(dst.add(p * width + nr), 0, width - nr) };
        }
    }
}

/// Plain `f32` arithmetic: the reference every vector implementation must match.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Scalar;

impl Simd for Scalar {
    const LANES: usize = 1;
    const MR: usize = 4;
    const NV: usize = 4;
    type V = f32;
    type M = bool;

    #[inline(always)]
    fn splat(self, x: f32) -> f32 {
        x
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32) -> f32 {
        // SAFETY: the caller guarantees `p` is readable.
        unsafe { p.read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, v: f32) {
        // SAFETY: the caller guarantees `p` is writable.
        unsafe { p.write_unaligned(v) }
    }
    #[inline(always)]
    fn add(self, a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    fn sub(self, a: f32, b: f32) -> f32 {
        a - b
    }
    #[inline(always)]
    fn mul(self, a: f32, b: f32) -> f32 {
        a * b
    }
    #[inline(always)]
    fn div(self, a: f32, b: f32) -> f32 {
        a / b
    }
    #[inline(always)]
    fn fma(self, a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    #[inline(always)]
    fn sqrt(self, a: f32) -> f32 {
        a.sqrt()
    }
    #[inline(always)]
    fn min(self, a: f32, b: f32) -> f32 {
        if a < b { a } else { b }
    }
    #[inline(always)]
    fn max(self, a: f32, b: f32) -> f32 {
        if a > b { a } else { b }
    }
    #[inline(always)]
    fn lt(self, a: f32, b: f32) -> bool {
        a < b
    }
    #[inline(always)]
    fn gt(self, a: f32, b: f32) -> bool {
        a > b
    }
    #[inline(always)]
    fn eq(self, a: f32, b: f32) -> bool {
        a == b
    }
    #[inline(always)]
    fn is_nan(self, a: f32) -> bool {
        a.is_nan()
    }
    #[inline(always)]
    fn select(self, m: bool, a: f32, b: f32) -> f32 {
        if m { a } else { b }
    }
    #[inline(always)]
    fn abs(self, a: f32) -> f32 {
        f32::from_bits(a.to_bits() & 0x7fff_ffff)
    }
    #[inline(always)]
    fn or_sign(self, a: f32, s: f32) -> f32 {
        f32::from_bits(a.to_bits() | (s.to_bits() & 0x8000_0000))
    }
    #[inline(always)]
    fn pow2i(self, n: f32) -> f32 {
        f32::from_bits(((n as i32 + 127) as u32) << 23)
    }
    #[inline(always)]
    fn frexp(self, x: f32) -> (f32, f32) {
        let bits = x.to_bits();
        let e = (bits >> 23) as i32 - 126;
        let m = f32::from_bits((bits & 0x807f_ffff) | 0x3f00_0000);
        (m, e as f32)
    }
}

/// Runs `$body` with `$s` bound to the token of `$isa` (an [`crate::Isa`]), inside a
/// function compiled for that instruction set, so the generic code in `$body` is
/// inlined and vectorised for it.
macro_rules! with_simd {
    ($isa:expr, |$s:ident| $body:expr) => {{
        match $isa {
            #[cfg(target_arch = "x86_64")]
            $crate::Isa::Avx512 => $crate::simd::x86::run_avx512(
                #[inline(always)]
                move |$s| $body,
            ),
            #[cfg(target_arch = "x86_64")]
            $crate::Isa::Avx2 => $crate::simd::x86::run_avx2(
                #[inline(always)]
                move |$s| $body,
            ),
            #[cfg(target_arch = "x86_64")]
            $crate::Isa::Sse2 => $crate::simd::x86::run_sse2(
                #[inline(always)]
                move |$s| $body,
            ),
            _ => {
                let $s = $crate::simd::Scalar;
                $body
            }
        }
    }};
}
pub(crate) use with_simd;

//! [`Simd`] for x86-64: SSE2 (4 lanes, FMA emulated exactly), AVX2+FMA (8 lanes) and
//! AVX-512F (16 lanes).
//!
//! Each token type has a private field, so it exists only inside the `run_*` functions,
//! which check the CPU features first: that is the invariant behind every `unsafe`
//! intrinsic call in this file ("the token proves the features").

use std::arch::x86_64::*;

use super::Simd;
use crate::Isa;

/// AVX-512F + AVX2 + FMA token.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512(());
/// AVX2 + FMA token.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());
/// SSE2 token (always available on x86-64).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sse2(());

#[target_feature(enable = "avx512f,avx2,fma")]
fn run_avx512_tf<R>(f: impl FnOnce(Avx512) -> R) -> R {
    f(Avx512(()))
}

/// Runs `f` with an [`Avx512`] token, compiled for AVX-512F.
///
/// # Panics
/// If the CPU lacks AVX-512F, AVX2 or FMA.
#[inline]
pub(crate) fn run_avx512<R>(f: impl FnOnce(Avx512) -> R) -> R {
    assert!(
        Isa::Avx512.is_supported(),
        "AVX-512 kernels on a CPU without AVX-512F"
    );
    // SAFETY: the features `run_avx512_tf` is compiled for were checked just above.
    unsafe { run_avx512_tf(f) }
}

#[target_feature(enable = "avx2,fma")]
fn run_avx2_tf<R>(f: impl FnOnce(Avx2) -> R) -> R {
    f(Avx2(()))
}

/// Runs `f` with an [`Avx2`] token, compiled for AVX2 and FMA.
///
/// # Panics
/// If the CPU lacks AVX2 or FMA.
#[inline]
pub(crate) fn run_avx2<R>(f: impl FnOnce(Avx2) -> R) -> R {
    assert!(
        Isa::Avx2.is_supported(),
        "AVX2 kernels on a CPU without AVX2+FMA"
    );
    // SAFETY: the features `run_avx2_tf` is compiled for were checked just above.
    unsafe { run_avx2_tf(f) }
}

/// Runs `f` with an [`Sse2`] token (SSE2 is part of x86-64).
#[inline]
pub(crate) fn run_sse2<R>(f: impl FnOnce(Sse2) -> R) -> R {
    f(Sse2(()))
}

impl Simd for Avx512 {
    const LANES: usize = 16;
    const MR: usize = 6;
    const NV: usize = 4;
    type V = __m512;
    type M = __mmask16;

    #[inline(always)]
    fn splat(self, x: f32) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32) -> __m512 {
        // SAFETY: the token proves the features; the caller guarantees `p`.
        unsafe { _mm512_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, v: __m512) {
        // SAFETY: the token proves the features; the caller guarantees `p`.
        unsafe { _mm512_storeu_ps(p, v) }
    }
    #[inline(always)]
    fn add(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_add_ps(a, b) }
    }
    #[inline(always)]
    fn sub(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_sub_ps(a, b) }
    }
    #[inline(always)]
    fn mul(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_mul_ps(a, b) }
    }
    #[inline(always)]
    fn div(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_div_ps(a, b) }
    }
    #[inline(always)]
    fn fma(self, a: __m512, b: __m512, c: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn sqrt(self, a: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_sqrt_ps(a) }
    }
    #[inline(always)]
    fn min(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_min_ps(a, b) }
    }
    #[inline(always)]
    fn max(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_max_ps(a, b) }
    }
    #[inline(always)]
    fn lt(self, a: __m512, b: __m512) -> __mmask16 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b) }
    }
    #[inline(always)]
    fn gt(self, a: __m512, b: __m512) -> __mmask16 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b) }
    }
    #[inline(always)]
    fn eq(self, a: __m512, b: __m512) -> __mmask16 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b) }
    }
    #[inline(always)]
    fn is_nan(self, a: __m512) -> __mmask16 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a) }
    }
    #[inline(always)]
    fn select(self, m: __mmask16, a: __m512, b: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe { _mm512_mask_blend_ps(m, b, a) }
    }
    #[inline(always)]
    fn abs(self, a: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe {
            _mm512_castsi512_ps(_mm512_and_si512(
                _mm512_castps_si512(a),
                _mm512_set1_epi32(0x7fff_ffff),
            ))
        }
    }
    #[inline(always)]
    fn or_sign(self, a: __m512, s: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe {
            let sign = _mm512_and_si512(_mm512_castps_si512(s), _mm512_set1_epi32(i32::MIN));
            _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), sign))
        }
    }
    #[inline(always)]
    fn pow2i(self, n: __m512) -> __m512 {
        // SAFETY: the token proves the features.
        unsafe {
            let e = _mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(127));
            _mm512_castsi512_ps(_mm512_slli_epi32::<23>(e))
        }
    }
    #[inline(always)]
    fn frexp(self, x: __m512) -> (__m512, __m512) {
        // SAFETY: the token proves the features.
        unsafe {
            let bits = _mm512_castps_si512(x);
            let e = _mm512_sub_epi32(_mm512_srli_epi32::<23>(bits), _mm512_set1_epi32(126));
            let m = _mm512_or_si512(
                _mm512_and_si512(bits, _mm512_set1_epi32(0x807f_ffff_u32 as i32)),
                _mm512_set1_epi32(0x3f00_0000),
            );
            (_mm512_castsi512_ps(m), _mm512_cvtepi32_ps(e))
        }
    }
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
        // SAFETY: the token proves AVX2; the caller's contract covers every index.
        unsafe { pack_transposed_avx2(src, ld, nr, kc, dst, width) }
    }
}

impl Simd for Avx2 {
    const LANES: usize = 8;
    const MR: usize = 6;
    const NV: usize = 2;
    type V = __m256;
    type M = __m256;

    #[inline(always)]
    fn splat(self, x: f32) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32) -> __m256 {
        // SAFETY: the token proves the features; the caller guarantees `p`.
        unsafe { _mm256_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, v: __m256) {
        // SAFETY: the token proves the features; the caller guarantees `p`.
        unsafe { _mm256_storeu_ps(p, v) }
    }
    #[inline(always)]
    fn add(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_add_ps(a, b) }
    }
    #[inline(always)]
    fn sub(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_sub_ps(a, b) }
    }
    #[inline(always)]
    fn mul(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_mul_ps(a, b) }
    }
    #[inline(always)]
    fn div(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_div_ps(a, b) }
    }
    #[inline(always)]
    fn fma(self, a: __m256, b: __m256, c: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn sqrt(self, a: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_sqrt_ps(a) }
    }
    #[inline(always)]
    fn min(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_min_ps(a, b) }
    }
    #[inline(always)]
    fn max(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_max_ps(a, b) }
    }
    #[inline(always)]
    fn lt(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(a, b) }
    }
    #[inline(always)]
    fn gt(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(a, b) }
    }
    #[inline(always)]
    fn eq(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b) }
    }
    #[inline(always)]
    fn is_nan(self, a: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_cmp_ps::<_CMP_UNORD_Q>(a, a) }
    }
    #[inline(always)]
    fn select(self, m: __m256, a: __m256, b: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_blendv_ps(b, a, m) }
    }
    #[inline(always)]
    fn abs(self, a: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe { _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff))) }
    }
    #[inline(always)]
    fn or_sign(self, a: __m256, s: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe {
            let sign = _mm256_and_ps(s, _mm256_castsi256_ps(_mm256_set1_epi32(i32::MIN)));
            _mm256_or_ps(a, sign)
        }
    }
    #[inline(always)]
    fn pow2i(self, n: __m256) -> __m256 {
        // SAFETY: the token proves the features.
        unsafe {
            let e = _mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127));
            _mm256_castsi256_ps(_mm256_slli_epi32::<23>(e))
        }
    }
    #[inline(always)]
    fn frexp(self, x: __m256) -> (__m256, __m256) {
        // SAFETY: the token proves the features.
        unsafe {
            let bits = _mm256_castps_si256(x);
            let e = _mm256_sub_epi32(_mm256_srli_epi32::<23>(bits), _mm256_set1_epi32(126));
            let m = _mm256_or_si256(
                _mm256_and_si256(bits, _mm256_set1_epi32(0x807f_ffff_u32 as i32)),
                _mm256_set1_epi32(0x3f00_0000),
            );
            (_mm256_castsi256_ps(m), _mm256_cvtepi32_ps(e))
        }
    }
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
        // SAFETY: the token proves AVX2; the caller's contract covers every index.
        unsafe { pack_transposed_avx2(src, ld, nr, kc, dst, width) }
    }
}

/// `a * b + c` with one rounding, for two `f32` values widened to `f64`: the product
/// is exact in `f64`, the sum is rounded to odd (round to nearest, then, if inexact and
/// even, step one ulp towards the exact value), and the final `f64 -> f32` conversion
/// rounds to nearest. Round-to-odd with 53 >= 24 + 2 bits makes the double rounding
/// exact (Boldo and Melquiond), so this equals a hardware FMA for every non-NaN input.
#[inline(always)]
fn fma_f64x2(a: __m128d, b: __m128d, c: __m128d) -> __m128d {
    // SAFETY: SSE2 is part of x86-64.
    unsafe {
        let zero = _mm_setzero_pd();
        let p = _mm_mul_pd(a, b);
        let s = _mm_add_pd(p, c);
        // Two-sum error of p + c (exact; NaN only when s is not finite).
        let bb = _mm_sub_pd(s, p);
        let e = _mm_add_pd(_mm_sub_pd(p, _mm_sub_pd(s, bb)), _mm_sub_pd(c, bb));
        let inexact = _mm_castpd_si128(_mm_or_pd(_mm_cmplt_pd(e, zero), _mm_cmpgt_pd(e, zero)));
        let sbits = _mm_castpd_si128(s);
        let one = _mm_set_epi32(0, 1, 0, 1);
        let even = _mm_shuffle_epi32::<0b10_10_00_00>(_mm_cmpeq_epi32(
            _mm_and_si128(sbits, one),
            _mm_setzero_si128(),
        ));
        // All ones where e and s differ in sign (step towards zero: -1), else +1.
        let differ = _mm_shuffle_epi32::<0b11_11_01_01>(_mm_srai_epi32::<31>(_mm_xor_si128(
            sbits,
            _mm_castpd_si128(e),
        )));
        let delta = _mm_or_si128(differ, one);
        let step = _mm_and_si128(delta, _mm_and_si128(inexact, even));
        _mm_castsi128_pd(_mm_add_epi64(sbits, step))
    }
}

impl Simd for Sse2 {
    const LANES: usize = 4;
    const MR: usize = 4;
    const NV: usize = 2;
    type V = __m128;
    type M = __m128;

    #[inline(always)]
    fn splat(self, x: f32) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32) -> __m128 {
        // SAFETY: SSE2 is part of x86-64; the caller guarantees `p`.
        unsafe { _mm_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, v: __m128) {
        // SAFETY: SSE2 is part of x86-64; the caller guarantees `p`.
        unsafe { _mm_storeu_ps(p, v) }
    }
    #[inline(always)]
    fn add(self, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_add_ps(a, b) }
    }
    #[inline(always)]
    fn sub(self, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_sub_ps(a, b) }
    }
    #[inline(always)]
    fn mul(self, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_mul_ps(a, b) }
    }
    #[inline(always)]
    fn div(self, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_div_ps(a, b) }
    }
    #[inline(always)]
    fn fma(self, a: __m128, b: __m128, c: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe {
            let lo = fma_f64x2(_mm_cvtps_pd(a), _mm_cvtps_pd(b), _mm_cvtps_pd(c));
            let hi = fma_f64x2(
                _mm_cvtps_pd(_mm_movehl_ps(a, a)),
                _mm_cvtps_pd(_mm_movehl_ps(b, b)),
                _mm_cvtps_pd(_mm_movehl_ps(c, c)),
            );
            _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi))
        }
    }
    #[inline(always)]
    fn sqrt(self, a: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_sqrt_ps(a) }
    }
    #[inline(always)]
    fn min(self, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_min_ps(a, b) }
    }
    #[inline(always)]
    fn max(self, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_max_ps(a, b) }
    }
    #[inline(always)]
    fn lt(self, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_cmplt_ps(a, b) }
    }
    #[inline(always)]
    fn gt(self, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_cmpgt_ps(a, b) }
    }
    #[inline(always)]
    fn eq(self, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_cmpeq_ps(a, b) }
    }
    #[inline(always)]
    fn is_nan(self, a: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_cmpunord_ps(a, a) }
    }
    #[inline(always)]
    fn select(self, m: __m128, a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b)) }
    }
    #[inline(always)]
    fn abs(self, a: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_and_ps(a, _mm_castsi128_ps(_mm_set1_epi32(0x7fff_ffff))) }
    }
    #[inline(always)]
    fn or_sign(self, a: __m128, s: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_or_ps(a, _mm_and_ps(s, _mm_castsi128_ps(_mm_set1_epi32(i32::MIN)))) }
    }
    #[inline(always)]
    fn pow2i(self, n: __m128) -> __m128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe {
            let e = _mm_add_epi32(_mm_cvttps_epi32(n), _mm_set1_epi32(127));
            _mm_castsi128_ps(_mm_slli_epi32::<23>(e))
        }
    }
    #[inline(always)]
    fn frexp(self, x: __m128) -> (__m128, __m128) {
        // SAFETY: SSE2 is part of x86-64.
        unsafe {
            let bits = _mm_castps_si128(x);
            let e = _mm_sub_epi32(_mm_srli_epi32::<23>(bits), _mm_set1_epi32(126));
            let m = _mm_or_si128(
                _mm_and_si128(bits, _mm_set1_epi32(0x807f_ffff_u32 as i32)),
                _mm_set1_epi32(0x3f00_0000),
            );
            (_mm_castsi128_ps(m), _mm_cvtepi32_ps(e))
        }
    }
}

/// [`Simd::pack_transposed`] with 8x8 AVX transposes in the interior.
///
/// # Safety
/// AVX2 must be available; otherwise as for [`Simd::pack_transposed`].
#[target_feature(enable = "avx2")]
unsafe fn pack_transposed_avx2(
    src: *const f32,
    ld: usize,
    nr: usize,
    kc: usize,
    dst: *mut f32,
    width: usize,
) {
    let (nr8, kc8) = (nr / 8 * 8, kc / 8 * 8);
    let mut j0 = 0;
    while j0 < nr8 {
        let mut p0 = 0;
        while p0 < kc8 {
            // SAFETY: rows j0..j0 + 8 <= nr and columns p0..p0 + 8 <= kc are inside
            // the caller's source; rows p0..p0 + 8 of the panel, columns j0..j0 + 8
            // <= width, are inside `dst`.
            unsafe {
                let r = |i: usize| _mm256_loadu_ps(src.add((j0 + i) * ld + p0));
                let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
                let (r4, r5, r6, r7) = (r(4), r(5), r(6), r(7));
                let t0 = _mm256_unpacklo_ps(r0, r1);
                let t1 = _mm256_unpackhi_ps(r0, r1);
                let t2 = _mm256_unpacklo_ps(r2, r3);
                let t3 = _mm256_unpackhi_ps(r2, r3);
                let t4 = _mm256_unpacklo_ps(r4, r5);
                let t5 = _mm256_unpackhi_ps(r4, r5);
                let t6 = _mm256_unpacklo_ps(r6, r7);
                let t7 = _mm256_unpackhi_ps(r6, r7);
                let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
                let u1 = _mm256_shuffle_ps::<0xee>(t0, t2);
                let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
                let u3 = _mm256_shuffle_ps::<0xee>(t1, t3);
                let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
                let u5 = _mm256_shuffle_ps::<0xee>(t4, t6);
                let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
                let u7 = _mm256_shuffle_ps::<0xee>(t5, t7);
                let w = |q: usize, v: __m256| _mm256_storeu_ps(dst.add((p0 + q) * width + j0), v);
                w(0, _mm256_permute2f128_ps::<0x20>(u0, u4));
                w(1, _mm256_permute2f128_ps::<0x20>(u1, u5));
                w(2, _mm256_permute2f128_ps::<0x20>(u2, u6));
                w(3, _mm256_permute2f128_ps::<0x20>(u3, u7));
                w(4, _mm256_permute2f128_ps::<0x31>(u0, u4));
                w(5, _mm256_permute2f128_ps::<0x31>(u1, u5));
                w(6, _mm256_permute2f128_ps::<0x31>(u2, u6));
                w(7, _mm256_permute2f128_ps::<0x31>(u3, u7));
            }
            p0 += 8;
        }
        for p in kc8..kc {
            for j in j0..j0 + 8 {
                // SAFETY: j < nr, p < kc.
                unsafe { *dst.add(p * width + j) = *src.add(j * ld + p) };
            }
        }
        j0 += 8;
    }
    if nr8 == nr && nr == width {
        // Nothing left: no remainder columns and no zero padding (the common case; a
        // zero-length `write_bytes` per row would still be a libc call).
        return;
    }
    for p in 0..kc {
        for j in nr8..nr {
            // SAFETY: j < nr, p < kc.
            unsafe { *dst.add(p * width + j) = *src.add(j * ld + p) };
        }
        // SAFETY: columns nr..width of panel row p are inside `dst`.
        unsafe { std::ptr::write_bytes(dst.add(p * width + nr), 0, width - nr) };
    }
}

//! Integer kernels of a context-mixing coder's mixer: the `i16` dot products
//! of one input vector with several weight sets, and their training step.
//!
//! Unlike the `f32` kernels, these are exact by construction: every result
//! is an integer formula, and the vector paths compute the same integers as
//! the plain loops they replace ([`dot_i16_sets_plain`],
//! [`train_i16_sets_plain`]), whatever the instruction set. Integer addition
//! modulo 2^32 is associative, so summing a block's products in any order,
//! in SIMD lanes or not, gives the same `i32`; the per-element training step
//! is lane-independent.
//!
//! Layout: `x` holds `n` inputs (`n` a multiple of [`BLOCK`]); weight set `s`
//! is `w[s * n..(s + 1) * n]`.

/// Inputs summed in one `i32` (wrapping) block of [`dot_i16_sets`].
pub const BLOCK: usize = 32;

/// For each `k`, `out[k]` = the dot product of `x` with weight set
/// `sets[k]`: the products `x[i] * w[i]` summed as a wrapping `i32` per
/// block of [`BLOCK`] inputs, the blocks' sums added as `i64`. (When no
/// block can overflow, as for stretched probabilities of magnitude below
/// 2048, that is the exact integer dot product.)
///
/// # Panics
/// If `x.len()` is not a multiple of [`BLOCK`], `out` is shorter than
/// `sets`, or a set lies outside `w`.
#[inline]
pub fn dot_i16_sets(x: &[i16], w: &[i16], sets: &[usize], out: &mut [i64]) {
    check(x, w.len(), sets);
    assert!(out.len() >= sets.len(), "dot_i16_sets: out too short");
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `avx2()` checked the CPU feature; `check` the bounds.
        unsafe { x86::dot_sets_avx2(x, w, sets, out) };
        return;
    }
    dot_i16_sets_plain(x, w, sets, out);
}

/// Trains weight sets `sets[k]` (in order) on the inputs `x` with error
/// `errs[k]`: every weight `w[i]` becomes the saturating `i16` sum of
/// itself and `(x[i] * e) >> 16` (`rounded`: `(x[i] * e + 0x8000) >> 16`),
/// arithmetic shifts of the exact `i32` product.
///
/// # Panics
/// If `x.len()` is not a multiple of [`BLOCK`], `errs` is shorter than
/// `sets`, or a set lies outside `w`.
#[inline]
pub fn train_i16_sets(x: &[i16], w: &mut [i16], sets: &[usize], errs: &[i16], rounded: bool) {
    check(x, w.len(), sets);
    assert!(errs.len() >= sets.len(), "train_i16_sets: errs too short");
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `avx2()` checked the CPU feature; `check` the bounds.
        unsafe { x86::train_sets_avx2(x, w, sets, errs, rounded) };
        return;
    }
    train_i16_sets_plain(x, w, sets, errs, rounded);
}

/// [`dot_i16_sets`] as plain loops: the reference (and the path of CPUs
/// without AVX2, which LLVM vectorises with SSE2's `pmaddwd`).
pub fn dot_i16_sets_plain(x: &[i16], w: &[i16], sets: &[usize], out: &mut [i64]) {
    check(x, w.len(), sets);
    let n = x.len();
    for (o, &s) in out.iter_mut().zip(sets) {
        let w = &w[s * n..][..n];
        *o = x
            .chunks_exact(BLOCK)
            .zip(w.chunks_exact(BLOCK))
            .map(|(x, w)| {
                let x: &[i16; BLOCK] = x.try_into().expect("a block");
                let w: &[i16; BLOCK] = w.try_into().expect("a block");
                i64::from(dot_block(x, w))
            })
            .sum();
    }
}

/// [`train_i16_sets`] as plain loops: the reference (and the path of CPUs
/// without AVX2).
pub fn train_i16_sets_plain(x: &[i16], w: &mut [i16], sets: &[usize], errs: &[i16], rounded: bool) {
    check(x, w.len(), sets);
    let n = x.len();
    for (&s, &e) in sets.iter().zip(errs) {
        let w = &mut w[s * n..][..n];
        for (x, w) in x.chunks_exact(BLOCK).zip(w.chunks_exact_mut(BLOCK)) {
            let x: &[i16; BLOCK] = x.try_into().expect("a block");
            let w: &mut [i16; BLOCK] = w.try_into().expect("a block");
            if rounded {
                train_block_rounded(x, w, e);
            } else {
                train_block(x, w, e);
            }
        }
    }
}

// Out of line on purpose: inlined, LLVM hoists the shared inputs into 32
// scalars and loses the `pmaddwd` form.
#[inline(never)]
fn dot_block(x: &[i16; BLOCK], w: &[i16; BLOCK]) -> i32 {
    x.iter().zip(w).fold(0i32, |s, (&a, &b)| {
        s.wrapping_add(i32::from(a) * i32::from(b))
    })
}

#[inline(never)]
fn train_block(x: &[i16; BLOCK], w: &mut [i16; BLOCK], e: i16) {
    for (w, &x) in w.iter_mut().zip(x) {
        *w = w.saturating_add(((i32::from(x) * i32::from(e)) >> 16) as i16);
    }
}

#[inline(never)]
fn train_block_rounded(x: &[i16; BLOCK], w: &mut [i16; BLOCK], e: i16) {
    for (w, &x) in w.iter_mut().zip(x) {
        *w = w.saturating_add(((i32::from(x) * i32::from(e) + 0x8000) >> 16) as i16);
    }
}

/// The shape every entry point requires (see their `# Panics`).
#[inline]
fn check(x: &[i16], w_len: usize, sets: &[usize]) {
    let n = x.len();
    assert!(n.is_multiple_of(BLOCK), "mixer kernels: {n} inputs");
    for &s in sets {
        assert!(
            s.checked_add(1)
                .and_then(|s1| s1.checked_mul(n))
                .is_some_and(|end| end <= w_len),
            "mixer kernels: set {s} of {n} weights outside {w_len}"
        );
    }
}

/// Whether the AVX2 paths run: the CPU has AVX2 and the kernels' active
/// instruction set ([`crate::active_isa`]) is AVX2 or AVX-512.
#[cfg(target_arch = "x86_64")]
#[inline]
fn avx2() -> bool {
    matches!(crate::active_isa(), crate::Isa::Avx2 | crate::Isa::Avx512)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::BLOCK;
    use std::arch::x86_64::*;

    /// [`super::dot_i16_sets`] with AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2; `x.len()` a multiple of [`BLOCK`], every set
    /// inside `w` and `out` at least as long as `sets` (checked by the
    /// caller).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn dot_sets_avx2(x: &[i16], w: &[i16], sets: &[usize], out: &mut [i64]) {
        let n = x.len();
        let xp = x.as_ptr();
        for (o, &s) in out.iter_mut().zip(sets) {
            let wp = w[s * n..][..n].as_ptr();
            let mut sum = 0i64;
            let mut b = 0;
            while b < n {
                // SAFETY: b + BLOCK <= n: both 16-lane loads of the block
                // lie inside `x` and inside this set's `n` weights.
                let block = unsafe {
                    let x0 = _mm256_loadu_si256(xp.add(b).cast());
                    let x1 = _mm256_loadu_si256(xp.add(b + 16).cast());
                    let w0 = _mm256_loadu_si256(wp.add(b).cast());
                    let w1 = _mm256_loadu_si256(wp.add(b + 16).cast());
                    _mm256_add_epi32(_mm256_madd_epi16(x0, w0), _mm256_madd_epi16(x1, w1))
                };
                // Wrapping i32 sum of the block's eight lanes.
                let t = _mm_add_epi32(
                    _mm256_castsi256_si128(block),
                    _mm256_extracti128_si256::<1>(block),
                );
                let t = _mm_add_epi32(t, _mm_shuffle_epi32::<0x4E>(t));
                let t = _mm_add_epi32(t, _mm_shuffle_epi32::<0xB1>(t));
                sum += i64::from(_mm_cvtsi128_si32(t));
                b += BLOCK;
            }
            *o = sum;
        }
    }

    /// [`super::train_i16_sets`] with AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2; `x.len()` a multiple of [`BLOCK`], every set
    /// inside `w` and `errs` at least as long as `sets` (checked by the
    /// caller).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn train_sets_avx2(
        x: &[i16],
        w: &mut [i16],
        sets: &[usize],
        errs: &[i16],
        rounded: bool,
    ) {
        let n = x.len();
        let xp = x.as_ptr();
        for (&s, &e) in sets.iter().zip(errs) {
            let wp = w[s * n..][..n].as_mut_ptr();
            let ev = _mm256_set1_epi16(e);
            let mut i = 0;
            while i < n {
                // SAFETY: i + 16 <= n (n is a multiple of 32): the loads and
                // the store lie inside `x` and inside this set's weights.
                unsafe {
                    let xv = _mm256_loadu_si256(xp.add(i).cast());
                    // High half of the exact i32 product: (x * e) >> 16.
                    let mut d = _mm256_mulhi_epi16(xv, ev);
                    if rounded {
                        // (p + 2^15) >> 16 = (p >> 16) + bit 15 of p.
                        let lo = _mm256_mullo_epi16(xv, ev);
                        d = _mm256_add_epi16(d, _mm256_srli_epi16::<15>(lo));
                    }
                    let wv = _mm256_loadu_si256(wp.add(i).cast());
                    _mm256_storeu_si256(wp.add(i).cast(), _mm256_adds_epi16(wv, d));
                }
                i += 16;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic generator of `i16`s: mostly random, often the
    /// extremes (the overflow edges).
    fn values(seed: u64, len: usize) -> Vec<i16> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let r = (s >> 33) as u32;
                match r % 8 {
                    0 => i16::MIN,
                    1 => i16::MAX,
                    2 => -2047,
                    3 => 2047,
                    4 => 0,
                    _ => (r >> 8) as i16,
                }
            })
            .collect()
    }

    /// Runs `f` under every instruction set this CPU has (the AVX2 path
    /// where there is one, the plain loops under `Scalar`/`Sse2`).
    fn each_isa(f: impl Fn()) {
        let _guard = crate::tests::GLOBAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = crate::active_isa();
        for isa in crate::tests::isas() {
            crate::force_isa(Some(isa)).expect("supported");
            f();
        }
        crate::force_isa(Some(before)).expect("was supported");
    }

    #[test]
    fn dot_matches_the_plain_loops_on_random_and_extreme_inputs() {
        each_isa(|| {
            for (seed, n) in (0..40u64).zip([32, 64, 96, 128].into_iter().cycle()) {
                let x = values(seed, n);
                let w = values(seed + 1000, 6 * n);
                let sets = [5, 0, 3, 3, 1];
                let (mut a, mut b) = ([7i64; 5], [9i64; 5]);
                dot_i16_sets(&x, &w, &sets, &mut a);
                dot_i16_sets_plain(&x, &w, &sets, &mut b);
                assert_eq!(a, b, "seed {seed} n {n}");
            }
            // All extremes: every block's sum wraps the same way.
            let x = vec![i16::MIN; 64];
            let w = vec![i16::MIN; 64];
            let mut a = [0i64; 1];
            dot_i16_sets(&x, &w, &[0], &mut a);
            let block = (0..32).fold(0i32, |s, _| s.wrapping_add(1 << 30));
            assert_eq!(a[0], 2 * i64::from(block));
            // Inputs of magnitude 2047 never wrap: the exact dot product.
            let x = vec![-2047i16; 128];
            let w = vec![i16::MIN; 128];
            dot_i16_sets(&x, &w, &[0], &mut a);
            assert_eq!(a[0], 128 * 2047 * 32768);
        });
    }

    #[test]
    fn train_matches_the_plain_loops_on_random_and_extreme_inputs() {
        each_isa(|| {
            for (seed, n) in (0..40u64).zip([32, 64, 96, 128].into_iter().cycle()) {
                let x = values(seed, n);
                let w0 = values(seed + 77, 4 * n);
                let errs = values(seed + 99, 3);
                let sets = [2, 0, 2];
                for rounded in [false, true] {
                    let (mut a, mut b) = (w0.clone(), w0.clone());
                    train_i16_sets(&x, &mut a, &sets, &errs, rounded);
                    train_i16_sets_plain(&x, &mut b, &sets, &errs, rounded);
                    assert_eq!(a, b, "seed {seed} n {n} rounded {rounded}");
                }
            }
            // Every pair of extreme values, saturating both ways.
            let ext = [i16::MIN, -32767, -2047, -1, 0, 1, 2047, 32767];
            let x: Vec<i16> = (0..64).map(|i| ext[i % 8]).collect();
            for &e in &ext {
                for &w in &[i16::MIN, -1, 0, i16::MAX] {
                    for rounded in [false, true] {
                        let (mut a, mut b) = (vec![w; 64], vec![w; 64]);
                        train_i16_sets(&x, &mut a, &[0], &[e], rounded);
                        train_i16_sets_plain(&x, &mut b, &[0], &[e], rounded);
                        assert_eq!(a, b, "e {e} w {w} rounded {rounded}");
                    }
                }
            }
        });
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn a_set_outside_the_weights_panics() {
        let mut out = [0i64; 1];
        dot_i16_sets(&[0; 32], &[0; 64], &[2], &mut out);
    }
}

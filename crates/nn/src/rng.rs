//! The portable seeded random number generator behind every initialisation.
//!
//! Start with [`Rng::new`]. The sequence of every method here is **fixed forever**: the
//! decoder rebuilds the model from the seed stored in the archive, so a change to any
//! output would make old archives undecodable. `tests/pinned.rs` pins the first outputs.
//!
//! * Generator: xoshiro256** (Blackman and Vigna), its 256-bit state filled by four
//!   consecutive outputs of SplitMix64 started at the seed.
//! * [`Rng::next_f32`]: the top 24 bits of one `u64`, times 2^-24, in `[0, 1)`.
//! * [`Rng::next_f64`]: the top 53 bits of one `u64`, times 2^-53, in `[0, 1)`.
//! * [`Rng::next_normal`]: Marsaglia's polar method in `f64`, with this module's own
//!   [`ln`] polynomial and IEEE `sqrt` (no libm). Each accepted pair yields two normals;
//!   the second is kept and returned by the next call.
//!
//! ```
//! use sep_nn::Rng;
//! let mut a = Rng::new(42);
//! let mut b = Rng::new(42);
//! assert_eq!(a.next_u64(), b.next_u64());
//! let u = a.next_f32();
//! assert!((0.0..1.0).contains(&u));
//! ```

/// One step of SplitMix64 (Steele, Lea and Flood): advances `state` and returns an output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256** seeded through SplitMix64; see the module documentation for the contract.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
    spare_normal: Option<f64>,
}

impl Rng {
    /// A generator whose state is four consecutive SplitMix64 outputs started at `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng {
            s,
            spare_normal: None,
        }
    }

    /// An independent generator seeded with this generator's next `u64`.
    ///
    /// Gives each layer its own stream so that adding a layer does not shift the
    /// initial values of the others (when the model forks in a fixed order).
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }

    /// The next 64 random bits (xoshiro256**).
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)` from the top 24 bits of one `u64`.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
    }

    /// Uniform in `[0, 1)` from the top 53 bits of one `u64`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An integer in `0..n` as the high 64 bits of `next_u64() * n` (Lemire's multiply,
    /// without rejection: the bias is below `n / 2^64`, irrelevant for tests and data
    /// generation). Panics when `n == 0`.
    pub fn next_below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::next_below: n must be positive");
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A standard normal deviate (mean 0, variance 1) by Marsaglia's polar method.
    pub fn next_normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        loop {
            let u = 2.0 * self.next_f64() - 1.0;
            let v = 2.0 * self.next_f64() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * ln(s) / s).sqrt();
                self.spare_normal = Some(v * f);
                return u * f;
            }
        }
    }
}

/// Natural logarithm of a positive, finite `f64`, using only IEEE `+ - * /`.
///
/// `x = m * 2^e` with `m` in `[sqrt(1/2), sqrt(2))`; `ln m = 2 atanh(s)`, `s = (m-1)/(m+1)`,
/// summed as the odd series up to `s^23` (truncation error below 1e-18 for `|s| <= 0.172`);
/// `e * ln 2` is added in two parts (fdlibm's split). Relative error about 1e-16. Returns
/// NaN for `x <= 0` or non-finite `x` (callers never pass those).
pub fn ln(x: f64) -> f64 {
    if !(x > 0.0 && x.is_finite()) {
        return f64::NAN;
    }
    // ln 2 split as fdlibm: LN2_HI has 32 trailing zero bits, so e * LN2_HI is exact.
    const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
    let mut x = x;
    let mut e: i64 = 0;
    if x < f64::MIN_POSITIVE {
        // Subnormal: scale into the normal range first (exact).
        x *= (1u64 << 54) as f64;
        e -= 54;
    }
    let bits = x.to_bits();
    e += ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | (1023u64 << 52));
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let w = s * s;
    // Horner over the coefficients 1/3, 1/5, ..., 1/23.
    const C: [f64; 11] = [
        1.0 / 3.0,
        1.0 / 5.0,
        1.0 / 7.0,
        1.0 / 9.0,
        1.0 / 11.0,
        1.0 / 13.0,
        1.0 / 15.0,
        1.0 / 17.0,
        1.0 / 19.0,
        1.0 / 21.0,
        1.0 / 23.0,
    ];
    let mut p = C[10];
    for &c in C[..10].iter().rev() {
        p = p * w + c;
    }
    let ln_m = 2.0 * s + 2.0 * s * (w * p);
    let ef = e as f64;
    ef * LN2_HI + (ef * LN2_LO + ln_m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_matches_libm_closely() {
        // libm only as a test oracle; nothing in the crate calls it.
        let mut rng = Rng::new(7);
        let mut worst = 0.0f64;
        for i in 0..20_000 {
            let x = match i % 4 {
                0 => rng.next_f64() + 1e-300,
                1 => rng.next_f64() * 4.0 + 0.25,
                2 => (rng.next_f64() * 1400.0 - 700.0).exp(),
                _ => f64::from_bits(rng.next_below(1 << 52) + 1), // subnormals
            };
            let got = ln(x);
            let want = x.ln();
            let err = (got - want).abs() / want.abs().max(1e-300);
            if want.abs() > 1e-3 {
                worst = worst.max(err);
            } else {
                assert!((got - want).abs() < 1e-18, "ln({x}) = {got}, libm {want}");
            }
        }
        assert!(worst < 4e-16, "worst relative error {worst}");
        assert_eq!(ln(1.0), 0.0);
        assert!(ln(0.0).is_nan() && ln(-1.0).is_nan() && ln(f64::INFINITY).is_nan());
    }

    #[test]
    fn normals_have_unit_moments() {
        let mut rng = Rng::new(1);
        let n = 200_000;
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let z = rng.next_normal();
            s1 += z;
            s2 += z * z;
        }
        let mean = s1 / n as f64;
        let var = s2 / n as f64 - mean * mean;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.01, "var {var}");
    }

    #[test]
    fn uniform_ranges() {
        let mut rng = Rng::new(3);
        for _ in 0..10_000 {
            let a = rng.next_f32();
            let b = rng.next_f64();
            assert!((0.0..1.0).contains(&a) && (0.0..1.0).contains(&b));
            assert!(rng.next_below(10) < 10);
        }
    }
}

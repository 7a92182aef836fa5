//! The logistic function and its inverse on fixed-point integers.
//!
//! Probabilities are 16-bit (`p / 65536`); the logistic ("stretch") domain
//! holds `ln(p / (1 - p))` in units of 1/256, clamped to `-2047..=2047`.

use crate::logistic_tables::{SQUASH, STRETCH};

/// `65536 / (1 + e^(-d/256))`, with `d` clamped to `-2047..=2047`; the result
/// is in `1..=65535`.
#[inline]
pub fn squash(d: i32) -> u32 {
    u32::from(SQUASH[(d.clamp(-2047, 2047) + 2047) as usize])
}

/// `256 * ln(p / (1 - p))` of a 16-bit probability, on 4096 buckets, in
/// `-2047..=2047`.
#[inline]
pub fn stretch(p: u32) -> i32 {
    i32::from(STRETCH[(p >> 4).min(4095) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squash_and_stretch_are_inverse_and_monotone() {
        for d in -2047..=2047 {
            let back = stretch(squash(d));
            // A 12-bit bucket spans 16/65536 of probability; stretch's slope
            // is 256 / (q (1 - q)), so the round trip may be off by about
            // half a bucket times the slope, plus rounding.
            let q = f64::from(squash(d)) / 65536.0;
            let tol = 2.0 + 256.0 * (16.0 / 65536.0) / (q * (1.0 - q));
            assert!(
                f64::from((back - d).abs()) <= tol,
                "d {d} back {back} tol {tol}"
            );
        }
        for d in -2047..2047 {
            assert!(squash(d) <= squash(d + 1));
        }
        for p in 0..65535 {
            assert!(stretch(p) <= stretch(p + 1));
        }
        assert_eq!(squash(0), 32768);
        assert_eq!(stretch(32768), 0);
        assert_eq!(squash(i32::MIN), squash(-2047));
        assert_eq!(squash(i32::MAX), squash(2047));
    }
}

//! Sinusoidal position features (TRACE / SLiM-Performer), computed without libm.
//!
//! [`sinusoidal_positions`] fills a constant table once, at model construction. The
//! values feed the network, so they are computed with this module's own `f64` `exp`,
//! `sin` and `cos` (IEEE `+ - * /` only; error about 1e-16) and rounded to `f32` once:
//! every platform gets the same table.
//!
//! ```
//! use sep_nn::sinusoidal_positions;
//! let mut t = vec![0.0f32; 3 * 4];
//! sinusoidal_positions(&mut t, 3, 4);
//! assert_eq!(&t[..4], &[0.0, 0.0, 1.0, 1.0]); // position 0: sin 0, cos 0
//! ```

use crate::rng::ln;

/// Fills `buf = [positions x size]` (`size` even) with, for position `p` and
/// `i < size / 2`, `buf[p, i] = sin(p * f_i)` and `buf[p, size/2 + i] = cos(p * f_i)`,
/// where `f_i = exp(-2i * ln(10000) / size)`: the reference's `[sin | cos]` layout
/// (`torch.cat([x, sin, cos], -1)` appends this after the embedding).
pub fn sinusoidal_positions(buf: &mut [f32], positions: usize, size: usize) {
    assert!(
        size.is_multiple_of(2) && buf.len() == positions * size,
        "sinusoidal_positions: buf must be [positions x size], size even"
    );
    let half = size / 2;
    let c = -ln(10000.0) / size as f64;
    for (p, row) in buf.chunks_exact_mut(size.max(1)).enumerate() {
        for i in 0..half {
            let f = exp((2 * i) as f64 * c);
            let (s, co) = sin_cos(p as f64 * f);
            row[i] = s as f32;
            row[half + i] = co as f32;
        }
    }
}

/// `e^x` for `|x| < 700`: `x = n ln2 + r`, degree-14 Taylor series in `r`, times `2^n`.
fn exp(x: f64) -> f64 {
    assert!(x.abs() < 700.0, "position::exp: argument out of range");
    const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
    let n = (x * std::f64::consts::LOG2_E).round();
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let mut p = 1.0;
    for k in (1..=14).rev() {
        p = 1.0 + p * r / k as f64;
    }
    p * f64::from_bits(((n as i64 + 1023) as u64) << 52)
}

/// `(sin x, cos x)` for `|x| < 2^20`: `x = k pi/2 + r` (Cody-Waite with fdlibm's two-part
/// `pi/2`), Taylor series of `sin r` and `cos r` to degree 18, quadrant by `k mod 4`.
fn sin_cos(x: f64) -> (f64, f64) {
    assert!(
        x.abs() < (1u64 << 20) as f64,
        "position::sin_cos: argument out of range"
    );
    const PIO2_1: f64 = f64::from_bits(0x3FF9_21FB_5440_0000);
    const PIO2_1T: f64 = f64::from_bits(0x3DD0_B461_1A62_6331);
    let k = (x * std::f64::consts::FRAC_2_PI).round();
    let r = (x - k * PIO2_1) - k * PIO2_1T;
    let r2 = r * r;
    // sin r = r (1 - r^2/(2*3) (1 - r^2/(4*5) (1 - ...))), likewise cos r.
    let mut s = 1.0;
    let mut c = 1.0;
    for n in (1..=9).rev() {
        let n = n as f64;
        s = 1.0 - r2 / ((2.0 * n) * (2.0 * n + 1.0)) * s;
        c = 1.0 - r2 / ((2.0 * n - 1.0) * (2.0 * n)) * c;
    }
    let (s, c) = (r * s, c);
    match (k as i64).rem_euclid(4) {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_sin_cos_match_libm_closely() {
        // libm only as a test oracle.
        for i in 0..20_000 {
            let x = (i as f64 - 10_000.0) * 0.0137;
            let (s, c) = sin_cos(x);
            assert!((s - x.sin()).abs() < 1e-15, "sin({x})");
            assert!((c - x.cos()).abs() < 1e-15, "cos({x})");
            let y = (i as f64 - 10_000.0) * 0.003;
            let e = exp(y);
            assert!((e - y.exp()).abs() <= 4e-16 * y.exp(), "exp({y})");
        }
    }

    #[test]
    fn table_matches_the_definition() {
        let (positions, size) = (64, 32);
        let mut t = vec![0.0f32; positions * size];
        sinusoidal_positions(&mut t, positions, size);
        for p in 0..positions {
            for i in 0..size / 2 {
                let f = (-((2 * i) as f64) * 10000f64.ln() / size as f64).exp();
                let a = p as f64 * f;
                assert!((t[p * size + i] as f64 - a.sin()).abs() < 1e-7);
                assert!((t[p * size + size / 2 + i] as f64 - a.cos()).abs() < 1e-7);
            }
        }
    }
}

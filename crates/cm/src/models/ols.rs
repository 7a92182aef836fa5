//! The least-squares (OLS) predictors of the revision-4 audio family
//! (`audio4.rs`, doc/FORMAT.md 4.15.5): one exponentially decayed
//! covariance of the last [`N`] interleaved samples, solved by an integer
//! LDLᵀ factorisation every [`SOLVE_EVERY`] samples into the weights of
//! each order of [`ORDERS`] (a leading block's factor is the leading part of
//! the whole factor). All arithmetic is integer.

/// Features of the largest OLS predictor (interleaved past samples).
pub(crate) const N: usize = 32;
/// The orders of the OLS predictors, largest first.
pub(crate) const ORDERS: [usize; 3] = [32, 16, 8];
/// Samples between two solutions of the OLS system.
pub(crate) const SOLVE_EVERY: u32 = 32;
/// The covariance decays by `2^-DECAY` per sample.
pub(crate) const DECAY: u32 = 9;
/// The diagonal is raised by `2^-REGULARISE` of itself before solving.
pub(crate) const REGULARISE: u32 = 10;
/// Fraction bits of the OLS weights.
pub(crate) const WBITS: u32 = 24;
/// A least-squares predictor family of one channel: the decayed covariance
/// of the feature vector (the last [`N`] interleaved samples) and of the
/// features with the sample, and the weights of each order.
#[derive(Debug, Clone)]
pub(crate) struct Ols {
    /// Lower triangle of the covariance, row-major `N x N`.
    cov: Vec<i64>,
    /// Covariance of features and sample.
    cross: [i64; N],
    /// Weights per order (`WBITS` fraction bits), index as [`ORDERS`].
    w: [[i64; N]; 3],
    since: u32,
}

impl Ols {
    pub(crate) fn new(last: usize) -> Self {
        let mut w = [[0; N]; 3];
        for o in &mut w {
            o[last] = 1 << WBITS;
        }
        Ols {
            cov: vec![0; N * N],
            cross: [0; N],
            w,
            since: 0,
        }
    }

    /// Learns that features `x` were followed by sample `s`.
    pub(crate) fn update(&mut self, x: &[i32; N], s: i32) {
        for i in 0..N {
            let xi = i64::from(x[i]);
            let row = &mut self.cov[i * N..i * N + i + 1];
            for (c, &xj) in row.iter_mut().zip(x) {
                *c += xi * i64::from(xj) - (*c >> DECAY);
            }
            self.cross[i] += xi * i64::from(s) - (self.cross[i] >> DECAY);
        }
        self.since += 1;
        if self.since >= SOLVE_EVERY {
            self.since = 0;
            self.solve();
        }
    }

    /// Solves the normal equations of every order (keeps the old weights
    /// when the matrix is not positive definite).
    pub(crate) fn solve(&mut self) {
        let top = (0..N).map(|i| self.cov[i * N + i]).max().unwrap_or(0);
        if top <= 0 {
            return;
        }
        // Scale so that the largest diagonal entry is below 2^30.
        let shift = (64 - top.leading_zeros()) as i32 - 30;
        let scale = |v: i64| -> i64 { if shift > 0 { v >> shift } else { v << -shift } };
        const ONE: u32 = 30;
        let mut l = vec![0i64; N * N];
        let mut d = [0i64; N];
        let mut ld = [0i128; N];
        for j in 0..N {
            for k in 0..j {
                ld[k] = i128::from(l[j * N + k]) * i128::from(d[k]);
            }
            let ajj = scale(self.cov[j * N + j]);
            let ajj = ajj + (ajj >> REGULARISE) + 1;
            let mut acc = i128::from(ajj) << ONE;
            for k in 0..j {
                acc -= (i128::from(l[j * N + k]) * ld[k]) >> ONE;
            }
            let dj = (acc >> ONE) as i64;
            if dj <= 0 {
                return;
            }
            d[j] = dj;
            let inv = (1i128 << 60) / i128::from(dj);
            for i in j + 1..N {
                let mut acc = i128::from(scale(self.cov[i * N + j])) << ONE;
                for k in 0..j {
                    acc -= (i128::from(l[i * N + k]) * ld[k]) >> ONE;
                }
                let v = ((acc >> 15).clamp(-(1 << 62), 1 << 62) * inv) >> 45;
                l[i * N + j] = v.clamp(-(1 << 40), 1 << 40) as i64;
            }
        }
        // L y = b, z = y / d (WBITS fraction bits).
        let mut y = [0i128; N];
        let mut z = [0i128; N];
        for i in 0..N {
            let mut acc = i128::from(scale(self.cross[i]));
            for k in 0..i {
                acc -= (i128::from(l[i * N + k]) * y[k]) >> ONE;
            }
            y[i] = acc.clamp(-(1 << 80), 1 << 80);
            z[i] = (y[i] << WBITS) / i128::from(d[i]);
        }
        // Lᵀ w = z on the leading block of each order.
        for (o, &n) in ORDERS.iter().enumerate() {
            let mut w = [0i128; N];
            for i in (0..n).rev() {
                let mut acc = z[i];
                for k in i + 1..n {
                    acc -= (i128::from(l[k * N + i]) * w[k]) >> ONE;
                }
                w[i] = acc.clamp(-(1 << (WBITS + 7)), 1 << (WBITS + 7));
            }
            for (dst, &v) in self.w[o].iter_mut().zip(&w) {
                *dst = v as i64;
            }
        }
    }

    /// The prediction of order index `o` from features `x`.
    pub(crate) fn predict(&self, o: usize, x: &[i32; N]) -> i32 {
        let dot: i64 = self.w[o][..ORDERS[o]]
            .iter()
            .zip(x)
            .map(|(&w, &x)| w * i64::from(x))
            .sum();
        (dot >> WBITS).clamp(-(1 << 20), 1 << 20) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ols_learns_a_resonator() {
        // s[t] = 2 c s[t-1] - s[t-2]: a sine, which order 8 predicts
        // almost exactly once solved.
        let mut ols = Ols::new(0);
        let mut x = [0i32; N];
        let (mut a, mut b) = (0i64, 20000i64);
        let mut worst = 0;
        for t in 0..3000 {
            a += b * 100 / 1024;
            b -= a * 100 / 1024;
            let s = a as i32;
            if t > 2000 {
                worst = worst.max((ols.predict(2, &x) - s).abs());
            }
            ols.update(&x, s);
            x.copy_within(0..N - 1, 1);
            x[0] = s;
        }
        assert!(worst < 40, "error {worst}");
    }
}

//! The least-squares (OLS) predictors of the audio and image families: one
//! exponentially decayed covariance of the last `n` interleaved samples,
//! solved by an integer LDLᵀ factorisation every `every` samples into the
//! weights of each order (a leading block's factor is the leading part of
//! the whole factor). All arithmetic is integer. Revision 4's audio family
//! (`audio4.rs`, doc/FORMAT.md 4.15.5) and revision 7's image family use
//! [`Ols::revision4`]; revision 14's audio family (`audio14.rs`, 4.25.5)
//! chooses the features, orders, decay and period per instance.

/// Features of revision 4's largest OLS predictor (interleaved past samples).
pub(crate) const N: usize = 32;
/// Revision 4's orders, largest first.
pub(crate) const ORDERS: [usize; 3] = [32, 16, 8];
/// Samples between two solutions of revision 4's OLS system.
pub(crate) const SOLVE_EVERY: u32 = 32;
/// Revision 4's covariance decays by `2^-DECAY` per sample.
pub(crate) const DECAY: u32 = 9;

/// Fraction bits of the weights.
const WBITS: u32 = 24;
/// The diagonal is raised by `2^-REGULARISE` of itself before solving.
const REGULARISE: u32 = 10;

/// One channel's least-squares predictors over the last `n` interleaved
/// samples: the decayed covariance of the feature vector and of the
/// features with the sample, and the weights of each order.
#[derive(Debug, Clone)]
pub(crate) struct Ols {
    n: usize,
    orders: Vec<usize>,
    decay: u32,
    every: u32,
    /// Lower triangle of the covariance, row-major `n x n`.
    cov: Vec<i64>,
    /// Covariance of features and sample.
    cross: Vec<i64>,
    /// Weights per order (`WBITS` fraction bits).
    w: Vec<Vec<i64>>,
    since: u32,
}

impl Ols {
    /// Predictors of `orders` (largest first, the first is `n`) over `n`
    /// features, the covariance decaying by `2^-decay` per sample, solved
    /// every `every` samples; the weights start as "repeat feature `last`".
    pub(crate) fn new(n: usize, orders: &[usize], decay: u32, every: u32, last: usize) -> Self {
        let w = orders
            .iter()
            .map(|_| {
                let mut o = vec![0; n];
                o[last] = 1 << WBITS;
                o
            })
            .collect();
        Ols {
            n,
            orders: orders.to_vec(),
            decay,
            every,
            cov: vec![0; n * n],
            cross: vec![0; n],
            w,
            since: 0,
        }
    }

    /// Revision 4's predictors (`audio4.rs`, `image7.rs`): [`N`] features,
    /// orders [`ORDERS`], decay [`DECAY`], solved every [`SOLVE_EVERY`].
    pub(crate) fn revision4(last: usize) -> Self {
        Self::new(N, &ORDERS, DECAY, SOLVE_EVERY, last)
    }

    /// Learns that features `x` (at least `n`) were followed by sample `s`.
    pub(crate) fn update(&mut self, x: &[i32], s: i32) {
        let n = self.n;
        let decay = self.decay;
        for i in 0..n {
            let xi = i64::from(x[i]);
            let row = &mut self.cov[i * n..i * n + i + 1];
            for (c, &xj) in row.iter_mut().zip(x) {
                *c += xi * i64::from(xj) - (*c >> decay);
            }
            self.cross[i] += xi * i64::from(s) - (self.cross[i] >> decay);
        }
        self.since += 1;
        if self.since >= self.every {
            self.since = 0;
            self.solve();
        }
    }

    /// Solves the normal equations of every order (keeps the old weights
    /// when the matrix is not positive definite).
    fn solve(&mut self) {
        let n = self.n;
        let top = (0..n).map(|i| self.cov[i * n + i]).max().unwrap_or(0);
        if top <= 0 {
            return;
        }
        // Scale so that the largest diagonal entry is below 2^30.
        let shift = (64 - top.leading_zeros()) as i32 - 30;
        let scale = |v: i64| -> i64 { if shift > 0 { v >> shift } else { v << -shift } };
        const ONE: u32 = 30;
        let mut l = vec![0i64; n * n];
        let mut d = vec![0i64; n];
        let mut ld = vec![0i128; n];
        for j in 0..n {
            for k in 0..j {
                ld[k] = i128::from(l[j * n + k]) * i128::from(d[k]);
            }
            let ajj = scale(self.cov[j * n + j]);
            let ajj = ajj + (ajj >> REGULARISE) + 1;
            let mut acc = i128::from(ajj) << ONE;
            for k in 0..j {
                acc -= (i128::from(l[j * n + k]) * ld[k]) >> ONE;
            }
            let dj = (acc >> ONE) as i64;
            if dj <= 0 {
                return;
            }
            d[j] = dj;
            let inv = (1i128 << 60) / i128::from(dj);
            for i in j + 1..n {
                let mut acc = i128::from(scale(self.cov[i * n + j])) << ONE;
                for k in 0..j {
                    acc -= (i128::from(l[i * n + k]) * ld[k]) >> ONE;
                }
                let v = ((acc >> 15).clamp(-(1 << 62), 1 << 62) * inv) >> 45;
                l[i * n + j] = v.clamp(-(1 << 40), 1 << 40) as i64;
            }
        }
        // L y = b, z = y / d (WBITS fraction bits).
        let mut y = vec![0i128; n];
        let mut z = vec![0i128; n];
        for i in 0..n {
            let mut acc = i128::from(scale(self.cross[i]));
            for k in 0..i {
                acc -= (i128::from(l[i * n + k]) * y[k]) >> ONE;
            }
            y[i] = acc.clamp(-(1 << 80), 1 << 80);
            z[i] = (y[i] << WBITS) / i128::from(d[i]);
        }
        // Lᵀ w = z on the leading block of each order.
        for (o, &m) in self.orders.iter().enumerate() {
            let mut w = vec![0i128; m];
            for i in (0..m).rev() {
                let mut acc = z[i];
                for k in i + 1..m {
                    acc -= (i128::from(l[k * n + i]) * w[k]) >> ONE;
                }
                w[i] = acc.clamp(-(1 << (WBITS + 7)), 1 << (WBITS + 7));
            }
            for (dst, &v) in self.w[o].iter_mut().zip(&w) {
                *dst = v as i64;
            }
        }
    }

    /// The prediction of order index `o` from features `x`.
    pub(crate) fn predict(&self, o: usize, x: &[i32]) -> i32 {
        let dot: i64 = self.w[o][..self.orders[o]]
            .iter()
            .zip(x)
            .map(|(&w, &x)| w.wrapping_mul(i64::from(x)))
            .fold(0i64, i64::wrapping_add);
        (dot >> WBITS).clamp(-(1 << 20), 1 << 20) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worst error of orders `orders` of `ols` (over `n` features) on a
    /// sine, s[t] = 2 c s[t-1] - s[t-2], after 2000 samples of learning.
    fn worst_error_on_a_sine(mut ols: Ols, n: usize, orders: &[usize]) -> i32 {
        let mut x = vec![0i32; n];
        let (mut a, mut b) = (0i64, 20000i64);
        let mut worst = 0;
        for t in 0..3000 {
            a += b * 100 / 1024;
            b -= a * 100 / 1024;
            let s = a as i32;
            if t > 2000 {
                for &o in orders {
                    worst = worst.max((ols.predict(o, &x) - s).abs());
                }
            }
            ols.update(&x, s);
            x.copy_within(0..n - 1, 1);
            x[0] = s;
        }
        worst
    }

    #[test]
    fn ols_learns_a_resonator() {
        // Order 8 predicts the sine almost exactly once solved.
        let worst = worst_error_on_a_sine(Ols::revision4(0), N, &[2]);
        assert!(worst < 40, "error {worst}");
    }

    #[test]
    fn general_orders_learn_a_resonator() {
        // Every order predicts it almost exactly once solved.
        let worst = worst_error_on_a_sine(Ols::new(64, &[64, 16], 10, 32, 0), 64, &[0, 1]);
        assert!(worst < 40, "error {worst}");
    }
}

//! Batch normalisation over the batch in training mode, PyTorch's `nn.BatchNorm1d`.
//!
//! Start with [`BatchNorm::new`]. Input `x = [rows x channels]`; every channel is
//! normalised with the mean and biased variance of its column over all `rows` of the
//! step (for PatchTST's `[batch x tokens x d]`, rows = `batch * tokens`, as PyTorch's
//! `BatchNorm1d` over `[batch x d x tokens]`). Output `[rows x channels]`. `weight` (γ)
//! and `bias` (β) are `[channels]`, initialised to ones and zeros. The statistics couple
//! the rows of a step, deterministically.
//!
//! Arithmetic per channel `c`, rows in order (vectorised across channels):
//!
//! ```text
//! mean = (x[0,c] + x[1,c] + ...) / rows
//! var  = sum_r mul_add chain of (x[r,c] - mean)^2, starting at 0, divided by rows   (biased)
//! rstd = 1 / sqrt(var + eps)                      eps = 1e-5
//! xhat = (x - mean) * rstd
//! y    = xhat.mul_add(gamma, beta)
//! ```
//!
//! Running statistics are updated as PyTorch (`momentum = 0.1`, running variance from the
//! unbiased variance `var * rows / (rows - 1)`), `running = (1 - momentum) * running +
//! momentum * stat` in `f32`; training mode never reads them. [`BatchNorm::forward_eval`]
//! normalises with them instead (no backward).
//!
//! Backward, with `g = dy * gamma`:
//! `dx = ((g - mean_r(g)) - xhat * mean_r(g * xhat)) * rstd`,
//! `dgamma += sum_r dy * xhat`, `dbeta += sum_r dy`.
//!
//! ```
//! use sep_nn::BatchNorm;
//! let mut bn = BatchNorm::new(1, 4);
//! let y = bn.forward(&[1.0, 2.0, 3.0, 4.0]).to_vec();
//! let mean: f32 = y.iter().sum::<f32>() / 4.0;
//! assert!(mean.abs() < 1e-6);
//! ```

use crate::param::{Module, Param};

/// Training-mode batch normalisation with its buffers.
#[derive(Clone, Debug)]
pub struct BatchNorm {
    channels: usize,
    max_rows: usize,
    rows: usize,
    out_rows: usize,
    eps: f32,
    momentum: f32,
    /// γ, `[channels]`, initialised to ones.
    pub weight: Param,
    /// β, `[channels]`, initialised to zeros.
    pub bias: Param,
    /// Running mean, `[channels]` (zeros at start); not used in training mode.
    pub running_mean: Vec<f32>,
    /// Running (unbiased) variance, `[channels]` (ones at start); not used in training mode.
    pub running_var: Vec<f32>,
    xhat: Vec<f32>,
    y: Vec<f32>,
    dx: Vec<f32>,
    mean: Vec<f32>,
    rstd: Vec<f32>,
    acc1: Vec<f32>,
    acc2: Vec<f32>,
}

impl BatchNorm {
    /// Normalisation of `channels` columns over up to `max_rows` rows; `eps = 1e-5`,
    /// `momentum = 0.1`.
    pub fn new(channels: usize, max_rows: usize) -> Self {
        assert!(channels > 0, "BatchNorm: no channels");
        let v = |x: f32| vec![x; channels];
        BatchNorm {
            channels,
            max_rows,
            rows: 0,
            out_rows: 0,
            eps: 1e-5,
            momentum: 0.1,
            weight: Param::new_with("batchnorm.weight", channels, |w| w.fill(1.0)),
            bias: Param::zeros("batchnorm.bias", channels),
            running_mean: v(0.0),
            running_var: v(1.0),
            xhat: vec![0.0; max_rows * channels],
            y: vec![0.0; max_rows * channels],
            dx: vec![0.0; max_rows * channels],
            mean: v(0.0),
            rstd: v(0.0),
            acc1: v(0.0),
            acc2: v(0.0),
        }
    }

    /// Training-mode forward on `x = [rows x channels]` (`rows >= 2`); updates the
    /// running statistics and returns `[rows x channels]`.
    pub fn forward(&mut self, x: &[f32]) -> &[f32] {
        let c = self.channels;
        let rows = crate::rows_of(x.len(), c, self.max_rows, "BatchNorm::forward");
        assert!(rows >= 2, "BatchNorm::forward: needs at least 2 rows");
        self.rows = rows;
        self.out_rows = rows;
        let n_rows = rows as f32;
        // Mean.
        self.acc1.fill(0.0);
        for row in x.chunks_exact(c) {
            crate::ops::add_assign(&mut self.acc1, row);
        }
        for (m, &s) in self.mean.iter_mut().zip(&self.acc1) {
            *m = s / n_rows;
        }
        // Biased variance (two-pass).
        self.acc2.fill(0.0);
        for row in x.chunks_exact(c) {
            for ((a, &xv), &m) in self.acc2.iter_mut().zip(row).zip(&self.mean) {
                let d = xv - m;
                *a = d.mul_add(d, *a);
            }
        }
        let unbias = rows as f32 / (rows - 1) as f32;
        let mom = self.momentum;
        let keep = 1.0 - mom;
        for ch in 0..c {
            let var = self.acc2[ch] / n_rows;
            self.rstd[ch] = 1.0 / (var + self.eps).sqrt();
            self.running_mean[ch] = keep * self.running_mean[ch] + mom * self.mean[ch];
            self.running_var[ch] = keep * self.running_var[ch] + mom * (var * unbias);
        }
        for ((row, xh), y) in x
            .chunks_exact(c)
            .zip(self.xhat.chunks_exact_mut(c))
            .zip(self.y.chunks_exact_mut(c))
        {
            for i in 0..c {
                let h = (row[i] - self.mean[i]) * self.rstd[i];
                xh[i] = h;
                y[i] = h.mul_add(self.weight.value[i], self.bias.value[i]);
            }
        }
        &self.y[..rows * c]
    }

    /// Evaluation-mode forward with the running statistics (no backward, no update):
    /// `y = ((x - running_mean) * (1 / sqrt(running_var + eps))).mul_add(gamma, beta)`.
    pub fn forward_eval(&mut self, x: &[f32]) -> &[f32] {
        let c = self.channels;
        let rows = crate::rows_of(x.len(), c, self.max_rows, "BatchNorm::forward_eval");
        for ch in 0..c {
            self.acc1[ch] = 1.0 / (self.running_var[ch] + self.eps).sqrt();
        }
        for (row, y) in x.chunks_exact(c).zip(self.y.chunks_exact_mut(c)) {
            for i in 0..c {
                let h = (row[i] - self.running_mean[i]) * self.acc1[i];
                y[i] = h.mul_add(self.weight.value[i], self.bias.value[i]);
            }
        }
        self.rows = 0;
        self.out_rows = rows;
        &self.y[..rows * c]
    }

    /// Backward for the last training-mode forward: `dy = [rows x channels]`; accumulates
    /// into `weight.grad`, `bias.grad` and returns `dx = [rows x channels]`.
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        let (c, rows) = (self.channels, self.rows);
        assert!(
            rows > 0 && dy.len() == rows * c,
            "BatchNorm::backward: dy must match the last training-mode forward"
        );
        let n = rows as f32;
        // acc1 = sum_r g, acc2 = sum_r g * xhat, with g = dy * gamma; parameter grads.
        self.acc1.fill(0.0);
        self.acc2.fill(0.0);
        for (dyr, xh) in dy.chunks_exact(c).zip(self.xhat.chunks_exact(c)) {
            for i in 0..c {
                let g = dyr[i] * self.weight.value[i];
                self.acc1[i] += g;
                self.acc2[i] = g.mul_add(xh[i], self.acc2[i]);
                self.weight.grad[i] = dyr[i].mul_add(xh[i], self.weight.grad[i]);
                self.bias.grad[i] += dyr[i];
            }
        }
        for i in 0..c {
            self.acc1[i] /= n;
            self.acc2[i] /= n;
        }
        for ((dyr, xh), dx) in dy
            .chunks_exact(c)
            .zip(self.xhat.chunks_exact(c))
            .zip(self.dx.chunks_exact_mut(c))
        {
            for i in 0..c {
                let g = dyr[i] * self.weight.value[i];
                dx[i] = (-xh[i]).mul_add(self.acc2[i], g - self.acc1[i]) * self.rstd[i];
            }
        }
        &self.dx[..rows * c]
    }

    /// The output of the last forward pass.
    pub fn output(&self) -> &[f32] {
        &self.y[..self.out_rows * self.channels]
    }
}

impl Module for BatchNorm {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        f(&mut self.weight);
        f(&mut self.bias);
    }
}

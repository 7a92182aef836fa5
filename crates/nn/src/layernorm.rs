//! Layer normalisation over the last dimension, PyTorch's `nn.LayerNorm`.
//!
//! Start with [`LayerNorm::new`]. Input `x = [rows x dim]`, output `[rows x dim]`; with
//! `affine`, `weight` (γ, ones) and `bias` (β, zeros) are `[dim]`. `eps = 1e-5`.
//!
//! Arithmetic: [`sep_kernels::layernorm_rows`] per row (mean and biased variance by the
//! kernels' 16-lane reductions, `rstd = 1 / sqrt(var + eps)`,
//! `y = fma((x - mean) * rstd, gamma, beta)`); without affine the same call with
//! `gamma = 1`, `beta = 0`, so `y = xhat`. Backward:
//! [`sep_kernels::layernorm_rows_backward`] (`g = dy * gamma`,
//! `dx = fma(-xhat, mean(g * xhat), g - mean(g)) * rstd`; `dgamma[j] += dy * xhat` and
//! `dbeta[j] += dy` as one chain per column over the rows in order).
//!
//! The same weights can serve twice in a step through [`LayerNorm::new_acts`],
//! [`LayerNorm::forward_with`] and [`LayerNorm::backward_with`], as for [`crate::Linear`].
//!
//! ```
//! use sep_nn::LayerNorm;
//! let mut ln = LayerNorm::new(4, true, 2);
//! let y = ln.forward(&[1.0, 2.0, 3.0, 4.0]);
//! assert!(y.iter().sum::<f32>().abs() < 1e-5);
//! ```

use crate::InputId;
use crate::param::{Module, Param};

/// Layer normalisation with optional affine parameters and its activation buffers.
#[derive(Clone, Debug)]
pub struct LayerNorm {
    dim: usize,
    eps: f32,
    /// γ, `[dim]`, ones; `None` without affine.
    pub weight: Option<Param>,
    /// β, `[dim]`, zeros; `None` without affine.
    pub bias: Option<Param>,
    /// Ones and zeros standing in for γ and β without affine, and scratch for the
    /// parameter gradients the kernel always computes.
    unit: Vec<f32>,
    zero: Vec<f32>,
    acts: LayerNormActs,
}

/// Activation buffers for one use of a [`LayerNorm`]'s weights.
#[derive(Clone, Debug)]
pub struct LayerNormActs {
    dim: usize,
    x: Vec<f32>,
    mean: Vec<f32>,
    rstd: Vec<f32>,
    y: Vec<f32>,
    dx: Vec<f32>,
    scratch_dg: Vec<f32>,
    scratch_db: Vec<f32>,
    rows: usize,
    input: InputId,
}

impl LayerNormActs {
    /// The output of the last forward pass, `[rows x dim]`.
    pub fn output(&self) -> &[f32] {
        &self.y[..self.rows * self.dim]
    }

    /// The input gradient of the last backward pass, `[rows x dim]`.
    pub fn input_grad(&self) -> &[f32] {
        &self.dx[..self.rows * self.dim]
    }
}

impl LayerNorm {
    /// Normalisation of rows of width `dim`, with γ/β when `affine`, for up to `max_rows`
    /// rows; `eps = 1e-5`.
    pub fn new(dim: usize, affine: bool, max_rows: usize) -> Self {
        assert!(dim > 0, "LayerNorm: empty rows");
        let mut ln = LayerNorm {
            dim,
            eps: 1e-5,
            weight: affine.then(|| Param::new_with("layernorm.weight", dim, |w| w.fill(1.0))),
            bias: affine.then(|| Param::zeros("layernorm.bias", dim)),
            unit: if affine { Vec::new() } else { vec![1.0; dim] },
            zero: if affine { Vec::new() } else { vec![0.0; dim] },
            acts: LayerNormActs {
                dim,
                x: Vec::new(),
                mean: Vec::new(),
                rstd: Vec::new(),
                y: Vec::new(),
                dx: Vec::new(),
                scratch_dg: Vec::new(),
                scratch_db: Vec::new(),
                rows: 0,
                input: InputId::SAVED,
            },
        };
        ln.acts = ln.new_acts(max_rows);
        ln
    }

    /// Sets `eps` (default `1e-5`).
    pub fn with_eps(mut self, eps: f32) -> Self {
        self.eps = eps;
        self
    }

    /// Row width.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// A fresh set of activation buffers for a second use of the same weights.
    pub fn new_acts(&self, max_rows: usize) -> LayerNormActs {
        let n = max_rows * self.dim;
        let scratch = if self.weight.is_some() { 0 } else { self.dim };
        LayerNormActs {
            dim: self.dim,
            x: vec![0.0; n],
            mean: vec![0.0; max_rows],
            rstd: vec![0.0; max_rows],
            y: vec![0.0; n],
            dx: vec![0.0; n],
            scratch_dg: vec![0.0; scratch],
            scratch_db: vec![0.0; scratch],
            rows: 0,
            input: InputId::SAVED,
        }
    }

    /// Forward on `x = [rows x dim]`; returns `[rows x dim]`.
    pub fn forward(&mut self, x: &[f32]) -> &[f32] {
        let mut acts = std::mem::replace(&mut self.acts, empty_acts());
        self.forward_with(&mut acts, x);
        self.acts = acts;
        self.acts.output()
    }

    /// Backward for the last forward: `dy = [rows x dim]`; returns `dx = [rows x dim]`.
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        let mut acts = std::mem::replace(&mut self.acts, empty_acts());
        self.backward_with(&mut acts, dy);
        self.acts = acts;
        self.acts.input_grad()
    }

    /// [`LayerNorm::forward`] without keeping a copy of `x`: the matching backward call
    /// is [`LayerNorm::backward_with_input`] with this same slice, unchanged.
    pub fn forward_no_save(&mut self, x: &[f32]) -> &[f32] {
        let mut acts = std::mem::replace(&mut self.acts, empty_acts());
        self.forward_impl(&mut acts, x, false);
        self.acts = acts;
        self.acts.output()
    }

    /// Backward for the last [`LayerNorm::forward_no_save`], given its input `x` again;
    /// otherwise as [`LayerNorm::backward`] (the same bits as `forward` + `backward`).
    ///
    /// # Panics
    /// If `x` is not the slice the last `forward_no_save` read.
    pub fn backward_with_input(&mut self, x: &[f32], dy: &[f32]) -> &[f32] {
        let mut acts = std::mem::replace(&mut self.acts, empty_acts());
        self.backward_impl(&mut acts, Some(x), dy);
        self.acts = acts;
        self.acts.input_grad()
    }

    /// [`LayerNorm::forward`] with caller-owned activation buffers.
    pub fn forward_with<'a>(&self, acts: &'a mut LayerNormActs, x: &[f32]) -> &'a [f32] {
        self.forward_impl(acts, x, true)
    }

    fn forward_impl<'a>(&self, acts: &'a mut LayerNormActs, x: &[f32], save: bool) -> &'a [f32] {
        let dim = self.dim;
        assert_eq!(
            acts.dim, dim,
            "LayerNorm: activations made for another width"
        );
        let rows = crate::rows_of(x.len(), dim, acts.rstd.len(), "LayerNorm::forward");
        acts.rows = rows;
        let n = rows * dim;
        if save {
            acts.x[..n].copy_from_slice(x);
            acts.input = InputId::SAVED;
        } else {
            acts.input = InputId::of(x);
        }
        let (gamma, beta) = match (&self.weight, &self.bias) {
            (Some(w), Some(b)) => (&w.value[..], &b.value[..]),
            _ => (&self.unit[..], &self.zero[..]),
        };
        sep_kernels::layernorm_rows(
            x,
            gamma,
            beta,
            &mut acts.y[..n],
            &mut acts.mean[..rows],
            &mut acts.rstd[..rows],
            rows,
            dim,
            self.eps,
        );
        &acts.y[..n]
    }

    /// [`LayerNorm::backward`] with the buffers given to the matching
    /// [`LayerNorm::forward_with`].
    pub fn backward_with<'a>(&mut self, acts: &'a mut LayerNormActs, dy: &[f32]) -> &'a [f32] {
        self.backward_impl(acts, None, dy)
    }

    fn backward_impl<'a>(
        &mut self,
        acts: &'a mut LayerNormActs,
        input: Option<&[f32]>,
        dy: &[f32],
    ) -> &'a [f32] {
        let (dim, rows) = (self.dim, acts.rows);
        let n = rows * dim;
        assert_eq!(
            dy.len(),
            n,
            "LayerNorm::backward: dy must match the last forward"
        );
        let LayerNormActs {
            x: saved,
            mean,
            rstd,
            dx,
            scratch_dg,
            scratch_db,
            input: input_id,
            ..
        } = acts;
        let x = match input {
            Some(x) => {
                input_id.expect(x, "LayerNorm::backward_with_input");
                x
            }
            None => {
                input_id.expect_saved("LayerNorm::backward");
                &saved[..n]
            }
        };
        let (gamma, dgamma, dbeta) = match (&mut self.weight, &mut self.bias) {
            (Some(w), Some(b)) => (&w.value[..], &mut w.grad[..], &mut b.grad[..]),
            _ => {
                // Unused sums; reset so they never grow without bound.
                scratch_dg.fill(0.0);
                scratch_db.fill(0.0);
                (&self.unit[..], &mut scratch_dg[..], &mut scratch_db[..])
            }
        };
        sep_kernels::layernorm_rows_backward(
            dy,
            &x[..n],
            gamma,
            &mean[..rows],
            &rstd[..rows],
            &mut dx[..n],
            dgamma,
            dbeta,
            rows,
            dim,
            false,
        );
        &acts.dx[..n]
    }

    /// The output of the last [`LayerNorm::forward`].
    pub fn output(&self) -> &[f32] {
        self.acts.output()
    }
}

fn empty_acts() -> LayerNormActs {
    LayerNormActs {
        dim: 0,
        x: Vec::new(),
        mean: Vec::new(),
        rstd: Vec::new(),
        y: Vec::new(),
        dx: Vec::new(),
        scratch_dg: Vec::new(),
        scratch_db: Vec::new(),
        rows: 0,
        input: InputId::SAVED,
    }
}

impl Module for LayerNorm {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        if let Some(w) = &mut self.weight {
            f(w);
        }
        if let Some(b) = &mut self.bias {
            f(b);
        }
    }
}

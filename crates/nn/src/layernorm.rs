//! Layer normalisation over the last dimension, PyTorch's `nn.LayerNorm`.
//!
//! Start with [`LayerNorm::new`]. Input `x = [rows x dim]`, output `[rows x dim]`; with
//! `affine`, `weight` (γ, ones) and `bias` (β, zeros) are `[dim]`. `eps = 1e-5`.
//!
//! Per row: `xhat = (x - mean) / sqrt(var + eps)` with the biased variance, computed by
//! the kernels' row normalisation (its doc states the reduction order); then
//! `y = xhat.mul_add(gamma, beta)` with affine, `y = xhat` without.
//!
//! Backward: `g = dy * gamma` (or `dy`), `dx = ((g - mean(g)) - xhat * mean(g * xhat)) * rstd`
//! per row; `dgamma[j] += dy[r,j] * xhat[r,j]` (a `mul_add` chain over rows in order, from
//! the old gradient), `dbeta[j] += dy[r,j]` in row order.
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

use crate::param::{Module, Param};
use crate::prim;

/// Layer normalisation with optional affine parameters and its activation buffers.
#[derive(Clone, Debug)]
pub struct LayerNorm {
    dim: usize,
    eps: f32,
    /// γ, `[dim]`, ones; `None` without affine.
    pub weight: Option<Param>,
    /// β, `[dim]`, zeros; `None` without affine.
    pub bias: Option<Param>,
    acts: LayerNormActs,
}

/// Activation buffers for one use of a [`LayerNorm`]'s weights.
#[derive(Clone, Debug)]
pub struct LayerNormActs {
    dim: usize,
    xhat: Vec<f32>,
    rstd: Vec<f32>,
    y: Vec<f32>,
    g: Vec<f32>,
    dx: Vec<f32>,
    rows: usize,
}

impl LayerNormActs {
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
            acts: LayerNormActs {
                dim,
                xhat: Vec::new(),
                rstd: Vec::new(),
                y: Vec::new(),
                g: Vec::new(),
                dx: Vec::new(),
                rows: 0,
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
        let affine = self.weight.is_some();
        LayerNormActs {
            dim: self.dim,
            xhat: vec![0.0; n],
            rstd: vec![0.0; max_rows],
            y: vec![0.0; if affine { n } else { 0 }],
            g: vec![0.0; if affine { n } else { 0 }],
            dx: vec![0.0; n],
            rows: 0,
        }
    }

    /// Forward on `x = [rows x dim]`; returns `[rows x dim]`.
    pub fn forward(&mut self, x: &[f32]) -> &[f32] {
        let LayerNorm {
            dim,
            eps,
            weight,
            bias,
            acts,
        } = self;
        forward_impl(*dim, *eps, weight.as_ref(), bias.as_ref(), acts, x)
    }

    /// Backward for the last forward: `dy = [rows x dim]`; returns `dx = [rows x dim]`.
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        let LayerNorm {
            dim,
            weight,
            bias,
            acts,
            ..
        } = self;
        backward_impl(*dim, weight.as_mut(), bias.as_mut(), acts, dy)
    }

    /// [`LayerNorm::forward`] with caller-owned activation buffers.
    pub fn forward_with<'a>(&self, acts: &'a mut LayerNormActs, x: &[f32]) -> &'a [f32] {
        forward_impl(
            self.dim,
            self.eps,
            self.weight.as_ref(),
            self.bias.as_ref(),
            acts,
            x,
        )
    }

    /// [`LayerNorm::backward`] with the buffers given to the matching
    /// [`LayerNorm::forward_with`].
    pub fn backward_with<'a>(&mut self, acts: &'a mut LayerNormActs, dy: &[f32]) -> &'a [f32] {
        backward_impl(self.dim, self.weight.as_mut(), self.bias.as_mut(), acts, dy)
    }

    /// The output of the last [`LayerNorm::forward`].
    pub fn output(&self) -> &[f32] {
        let n = self.acts.rows * self.dim;
        if self.weight.is_some() {
            &self.acts.y[..n]
        } else {
            &self.acts.xhat[..n]
        }
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

fn forward_impl<'a>(
    dim: usize,
    eps: f32,
    weight: Option<&Param>,
    bias: Option<&Param>,
    acts: &'a mut LayerNormActs,
    x: &[f32],
) -> &'a [f32] {
    assert_eq!(
        acts.dim, dim,
        "LayerNorm: activations made for another width"
    );
    let rows = crate::rows_of(x.len(), dim, acts.rstd.len(), "LayerNorm::forward");
    acts.rows = rows;
    let n = rows * dim;
    prim::layernorm_rows(x, &mut acts.xhat[..n], &mut acts.rstd[..rows], dim, eps);
    match (weight, bias) {
        (Some(w), Some(b)) => {
            for (yr, hr) in acts.y[..n]
                .chunks_exact_mut(dim)
                .zip(acts.xhat[..n].chunks_exact(dim))
            {
                for (((y, &h), &g), &bb) in yr.iter_mut().zip(hr).zip(&w.value).zip(&b.value) {
                    *y = h.mul_add(g, bb);
                }
            }
            &acts.y[..n]
        }
        _ => &acts.xhat[..n],
    }
}

fn backward_impl<'a>(
    dim: usize,
    weight: Option<&mut Param>,
    bias: Option<&mut Param>,
    acts: &'a mut LayerNormActs,
    dy: &[f32],
) -> &'a [f32] {
    let rows = acts.rows;
    let n = rows * dim;
    assert_eq!(
        dy.len(),
        n,
        "LayerNorm::backward: dy must match the last forward"
    );
    let g: &[f32] = match (weight, bias) {
        (Some(w), Some(b)) => {
            for ((dyr, hr), gr) in dy
                .chunks_exact(dim)
                .zip(acts.xhat[..n].chunks_exact(dim))
                .zip(acts.g[..n].chunks_exact_mut(dim))
            {
                for j in 0..dim {
                    w.grad[j] = dyr[j].mul_add(hr[j], w.grad[j]);
                    b.grad[j] += dyr[j];
                    gr[j] = dyr[j] * w.value[j];
                }
            }
            &acts.g[..n]
        }
        _ => dy,
    };
    prim::layernorm_rows_backward(
        g,
        &acts.xhat[..n],
        &acts.rstd[..rows],
        &mut acts.dx[..n],
        dim,
    );
    &acts.dx[..n]
}

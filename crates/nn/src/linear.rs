//! Fully connected layer, PyTorch layout: `y = x W^T + b`.
//!
//! Start with [`Linear::new`]. Shapes (row-major, `rows <= max_rows`):
//!
//! | tensor | shape |
//! |---|---|
//! | input `x` | `[rows x in_features]` |
//! | `weight` | `[out_features x in_features]` |
//! | `bias` (optional) | `[out_features]` |
//! | output `y` | `[rows x out_features]` |
//!
//! Arithmetic (part of the format): each output starts at `b[j]` (or `0.0` without a
//! bias) and accumulates `x[r,p] * W[j,p]` for `p = 0..in` in order with `mul_add`
//! ([`sep_kernels::matmul_nt`] with `accumulate`). Backward: `dW += dy^T x`
//! ([`sep_kernels::matmul_tn`], accumulating), `db[j] += dy[0,j] + dy[1,j] + ...` in row
//! order, `dx = dy W` ([`sep_kernels::matmul`]).
//!
//! A "row" is anything the layer is applied to independently: a batch element, or a
//! token when the input is `[batch x tokens x in_features]`.
//!
//! To use the same weights twice in one step (TRACE's FFN), give each use its own
//! activations with [`Linear::new_acts`] and call [`Linear::forward_with`] /
//! [`Linear::backward_with`]; gradients of both uses accumulate into the same `Param`.
//!
//! ```
//! use sep_nn::{Linear, Rng};
//! let mut rng = Rng::new(0);
//! let mut lin = Linear::new(3, 2, true, 4, &mut rng);
//! let y = lin.forward(&[1.0, 2.0, 3.0, 0.0, 0.0, 0.0]); // 2 rows
//! assert_eq!(y.len(), 4);
//! let dx = lin.backward(&[1.0, 0.0, 0.0, 1.0]);
//! assert_eq!(dx.len(), 6);
//! ```

use crate::InputId;
use crate::init;
use crate::param::{Module, Param};
use crate::rng::Rng;

/// A fully connected layer with its own activation buffers.
#[derive(Clone, Debug)]
pub struct Linear {
    in_features: usize,
    out_features: usize,
    /// `[out_features x in_features]`, PyTorch layout.
    pub weight: Param,
    /// `[out_features]`, or `None` for a layer without bias.
    pub bias: Option<Param>,
    acts: LinearActs,
}

/// Activation buffers for one use of a [`Linear`]'s weights: the saved input, the output
/// and the input gradient, each sized for `max_rows`.
#[derive(Clone, Debug)]
pub struct LinearActs {
    n_in: usize,
    n_out: usize,
    x: Vec<f32>,
    y: Vec<f32>,
    dx: Vec<f32>,
    rows: usize,
    input: InputId,
}

impl LinearActs {
    /// The output of the last forward pass, `[rows x out_features]`.
    pub fn output(&self) -> &[f32] {
        &self.y[..self.rows * self.n_out]
    }

    /// The input gradient of the last backward pass, `[rows x in_features]`.
    pub fn input_grad(&self) -> &[f32] {
        &self.dx[..self.rows * self.n_in]
    }
}

impl Linear {
    /// A layer initialised as PyTorch's `nn.Linear`: weight then bias, both
    /// `U(-1/sqrt(in), 1/sqrt(in))` drawn from `rng` (see [`init::linear_weight`]), with
    /// activation buffers for up to `max_rows` rows.
    pub fn new(
        in_features: usize,
        out_features: usize,
        bias: bool,
        max_rows: usize,
        rng: &mut Rng,
    ) -> Self {
        assert!(in_features > 0 && out_features > 0, "Linear: empty layer");
        let weight = Param::new_with("linear.weight", out_features * in_features, |w| {
            init::linear_weight(w, rng, in_features)
        });
        let bias = bias.then(|| {
            Param::new_with("linear.bias", out_features, |b| {
                init::linear_bias(b, rng, in_features)
            })
        });
        let mut lin = Linear {
            in_features,
            out_features,
            weight,
            bias,
            acts: LinearActs {
                n_in: in_features,
                n_out: out_features,
                x: Vec::new(),
                y: Vec::new(),
                dx: Vec::new(),
                rows: 0,
                input: InputId::SAVED,
            },
        };
        lin.acts = lin.new_acts(max_rows);
        lin
    }

    /// Input width.
    pub fn in_features(&self) -> usize {
        self.in_features
    }

    /// Output width.
    pub fn out_features(&self) -> usize {
        self.out_features
    }

    /// A fresh set of activation buffers for up to `max_rows` rows, for a second use of
    /// the same weights in one step.
    pub fn new_acts(&self, max_rows: usize) -> LinearActs {
        LinearActs {
            n_in: self.in_features,
            n_out: self.out_features,
            x: vec![0.0; max_rows * self.in_features],
            y: vec![0.0; max_rows * self.out_features],
            dx: vec![0.0; max_rows * self.in_features],
            rows: 0,
            input: InputId::SAVED,
        }
    }

    /// Forward pass on `x = [rows x in_features]`; returns `y = [rows x out_features]`.
    pub fn forward(&mut self, x: &[f32]) -> &[f32] {
        let acts = &mut self.acts;
        forward_impl(
            &self.weight,
            self.bias.as_ref(),
            self.in_features,
            self.out_features,
            acts,
            x,
            true,
        );
        &acts.y[..acts.rows * self.out_features]
    }

    /// [`Linear::forward`] without keeping a copy of `x`: the matching backward call is
    /// [`Linear::backward_with_input`] with this same slice, unchanged.
    pub fn forward_no_save(&mut self, x: &[f32]) -> &[f32] {
        let acts = &mut self.acts;
        forward_impl(
            &self.weight,
            self.bias.as_ref(),
            self.in_features,
            self.out_features,
            acts,
            x,
            false,
        );
        &acts.y[..acts.rows * self.out_features]
    }

    /// Backward pass for the last [`Linear::forward`]: `dy = [rows x out_features]`.
    /// Accumulates the parameter gradients and returns `dx = [rows x in_features]`.
    ///
    /// # Panics
    /// If the last forward pass was [`Linear::forward_no_save`].
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        let acts = &mut self.acts;
        backward_impl(
            &mut self.weight,
            self.bias.as_mut(),
            self.in_features,
            self.out_features,
            acts,
            None,
            dy,
        );
        &acts.dx[..acts.rows * self.in_features]
    }

    /// Backward pass for the last [`Linear::forward_no_save`], given its input `x` again;
    /// otherwise as [`Linear::backward`] (the same bits as `forward` + `backward`).
    ///
    /// # Panics
    /// If `x` is not the slice the last `forward_no_save` read.
    pub fn backward_with_input(&mut self, x: &[f32], dy: &[f32]) -> &[f32] {
        let acts = &mut self.acts;
        backward_impl(
            &mut self.weight,
            self.bias.as_mut(),
            self.in_features,
            self.out_features,
            acts,
            Some(x),
            dy,
        );
        &acts.dx[..acts.rows * self.in_features]
    }

    /// [`Linear::forward`] with caller-owned activation buffers.
    pub fn forward_with<'a>(&self, acts: &'a mut LinearActs, x: &[f32]) -> &'a [f32] {
        forward_impl(
            &self.weight,
            self.bias.as_ref(),
            self.in_features,
            self.out_features,
            acts,
            x,
            true,
        );
        &acts.y[..acts.rows * self.out_features]
    }

    /// [`Linear::backward`] with caller-owned activation buffers (those given to the
    /// matching [`Linear::forward_with`]).
    pub fn backward_with<'a>(&mut self, acts: &'a mut LinearActs, dy: &[f32]) -> &'a [f32] {
        backward_impl(
            &mut self.weight,
            self.bias.as_mut(),
            self.in_features,
            self.out_features,
            acts,
            None,
            dy,
        );
        &acts.dx[..acts.rows * self.in_features]
    }

    /// The output of the last [`Linear::forward`].
    pub fn output(&self) -> &[f32] {
        &self.acts.y[..self.acts.rows * self.out_features]
    }

    /// The input gradient of the last [`Linear::backward`].
    pub fn input_grad(&self) -> &[f32] {
        &self.acts.dx[..self.acts.rows * self.in_features]
    }
}

impl Module for Linear {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        f(&mut self.weight);
        if let Some(b) = &mut self.bias {
            f(b);
        }
    }
}

fn forward_impl(
    weight: &Param,
    bias: Option<&Param>,
    n_in: usize,
    n_out: usize,
    acts: &mut LinearActs,
    x: &[f32],
    save: bool,
) {
    assert!(
        acts.n_in == n_in && acts.n_out == n_out,
        "Linear: activations made for another layer shape"
    );
    let rows = crate::rows_of(x.len(), n_in, acts.dx.len() / n_in, "Linear::forward");
    acts.rows = rows;
    if save {
        acts.x[..rows * n_in].copy_from_slice(x);
        acts.input = InputId::SAVED;
    } else {
        acts.input = InputId::of(x);
    }
    let y = &mut acts.y[..rows * n_out];
    match bias {
        Some(b) => {
            for row in y.chunks_exact_mut(n_out) {
                row.copy_from_slice(&b.value);
            }
        }
        None => y.fill(0.0),
    }
    sep_kernels::matmul_nt(x, &weight.value, y, rows, n_in, n_out, true);
}

fn backward_impl(
    weight: &mut Param,
    bias: Option<&mut Param>,
    n_in: usize,
    n_out: usize,
    acts: &mut LinearActs,
    input: Option<&[f32]>,
    dy: &[f32],
) {
    let rows = acts.rows;
    assert_eq!(
        dy.len(),
        rows * n_out,
        "Linear::backward: dy must be [rows x out_features] of the last forward"
    );
    let x = match input {
        Some(x) => {
            acts.input.expect(x, "Linear::backward_with_input");
            x
        }
        None => {
            acts.input.expect_saved("Linear::backward");
            &acts.x[..rows * n_in]
        }
    };
    sep_kernels::matmul_tn(dy, x, &mut weight.grad, n_out, rows, n_in, true);
    if let Some(b) = bias {
        crate::ops::accumulate_column_sums(dy, n_out, &mut b.grad);
    }
    sep_kernels::matmul(
        dy,
        &weight.value,
        &mut acts.dx[..rows * n_in],
        rows,
        n_out,
        n_in,
        false,
    );
}

//! Batch-ensemble linear layer: a separate weight matrix for every stream, as PAC uses.
//!
//! Start with [`BatchEnsembleLinear::new`]. Stream `s` (row block `s` of the batch) has
//! its own `U_s = [d_in x d_out]` and bias `b_s = [d_out]`:
//! `y[s, t] = x[s, t] U_s + b_s`. This is the PAC reference's `dense_baens`
//! (`torch.bmm(x, U) + bias`), whose bias is also per stream, so PAC needs it; the layer
//! always has one.
//!
//! | tensor | shape |
//! |---|---|
//! | input `x` | `[streams_used x tokens x d_in]`, `streams_used <= streams` |
//! | `weight` | `[streams x d_in x d_out]` (note: input-major, `x U`, as the reference) |
//! | `bias` | `[streams x d_out]` |
//! | output `y` | `[streams_used x tokens x d_out]` |
//!
//! `tokens` (rows per stream, fixed at construction) is 1 for PAC's `[batch x d]` input.
//! Row block `s` always uses stream `s`'s weights: the caller keeps the stream order.
//!
//! Arithmetic: per stream, `y_s` starts at `b_s` and accumulates with
//! [`sep_kernels::matmul`] (`p = 0..d_in` in order); backward `dU_s += x_s^T dy_s`
//! ([`sep_kernels::matmul_tn`]), `db_s += ` column sums of `dy_s` in row order,
//! `dx_s = dy_s U_s^T` ([`sep_kernels::matmul_nt`]).
//!
//! Initialisation: `N(0, 0.01^2)` for all weights, then all biases, as the PAC reference.
//!
//! ```
//! use sep_nn::{BatchEnsembleLinear, Rng};
//! let mut be = BatchEnsembleLinear::new(3, 1, 4, 4, &mut Rng::new(0));
//! let y = be.forward(&[0.5; 8]); // streams 0 and 1 only
//! assert_eq!(y.len(), 8);
//! ```

use crate::InputId;
use crate::init;
use crate::param::{Module, Param};
use crate::rng::Rng;

/// Per-stream linear layer with its activation buffers.
#[derive(Clone, Debug)]
pub struct BatchEnsembleLinear {
    streams: usize,
    tokens: usize,
    d_in: usize,
    d_out: usize,
    /// `[streams x d_in x d_out]`.
    pub weight: Param,
    /// `[streams x d_out]`.
    pub bias: Param,
    x: Vec<f32>,
    y: Vec<f32>,
    dx: Vec<f32>,
    used: usize,
    input: InputId,
}

impl BatchEnsembleLinear {
    /// `streams` matrices of `d_in x d_out`, each applied to `tokens` rows per stream.
    pub fn new(streams: usize, tokens: usize, d_in: usize, d_out: usize, rng: &mut Rng) -> Self {
        assert!(
            streams > 0 && tokens > 0 && d_in > 0 && d_out > 0,
            "BatchEnsembleLinear: empty layer"
        );
        let weight = Param::new_with("ensemble.weight", streams * d_in * d_out, |w| {
            init::normal(w, rng, 0.0, 0.01)
        });
        let bias = Param::new_with("ensemble.bias", streams * d_out, |b| {
            init::normal(b, rng, 0.0, 0.01)
        });
        BatchEnsembleLinear {
            streams,
            tokens,
            d_in,
            d_out,
            weight,
            bias,
            x: vec![0.0; streams * tokens * d_in],
            y: vec![0.0; streams * tokens * d_out],
            dx: vec![0.0; streams * tokens * d_in],
            used: 0,
            input: InputId::SAVED,
        }
    }

    /// Number of streams (weight matrices).
    pub fn streams(&self) -> usize {
        self.streams
    }

    /// Forward on `x = [streams_used x tokens x d_in]`; returns `[streams_used x tokens x d_out]`.
    pub fn forward(&mut self, x: &[f32]) -> &[f32] {
        self.forward_impl(x, true)
    }

    /// [`BatchEnsembleLinear::forward`] without keeping a copy of `x`: the matching
    /// backward call is [`BatchEnsembleLinear::backward_with_input`] with this same
    /// slice, unchanged.
    pub fn forward_no_save(&mut self, x: &[f32]) -> &[f32] {
        self.forward_impl(x, false)
    }

    fn forward_impl(&mut self, x: &[f32], save: bool) -> &[f32] {
        let (t, di, d) = (self.tokens, self.d_in, self.d_out);
        let used = crate::rows_of(
            x.len(),
            t * di,
            self.streams,
            "BatchEnsembleLinear::forward",
        );
        self.used = used;
        if save {
            self.x[..x.len()].copy_from_slice(x);
            self.input = InputId::SAVED;
        } else {
            self.input = InputId::of(x);
        }
        for s in 0..used {
            let y = &mut self.y[s * t * d..(s + 1) * t * d];
            for row in y.chunks_exact_mut(d) {
                row.copy_from_slice(&self.bias.value[s * d..(s + 1) * d]);
            }
            let u = &self.weight.value[s * di * d..(s + 1) * di * d];
            sep_kernels::matmul(&x[s * t * di..(s + 1) * t * di], u, y, t, di, d, true);
        }
        &self.y[..used * t * d]
    }

    /// Backward for the last forward: `dy = [streams_used x tokens x d_out]`; accumulates
    /// the gradients of the streams used and returns `dx = [streams_used x tokens x d_in]`.
    ///
    /// # Panics
    /// If the last forward pass was [`BatchEnsembleLinear::forward_no_save`].
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        self.input.expect_saved("BatchEnsembleLinear::backward");
        let x = std::mem::take(&mut self.x);
        self.backward_impl(&x, dy);
        self.x = x;
        &self.dx[..self.used * self.tokens * self.d_in]
    }

    /// [`BatchEnsembleLinear::backward`] for the last
    /// [`BatchEnsembleLinear::forward_no_save`], given its input `x` again (the same
    /// bits as `forward` + `backward`).
    ///
    /// # Panics
    /// If `x` is not the slice the last `forward_no_save` read.
    pub fn backward_with_input(&mut self, x: &[f32], dy: &[f32]) -> &[f32] {
        self.input
            .expect(x, "BatchEnsembleLinear::backward_with_input");
        self.backward_impl(x, dy);
        &self.dx[..self.used * self.tokens * self.d_in]
    }

    fn backward_impl(&mut self, x: &[f32], dy: &[f32]) {
        let (t, di, d, used) = (self.tokens, self.d_in, self.d_out, self.used);
        assert_eq!(
            dy.len(),
            used * t * d,
            "BatchEnsembleLinear::backward: dy must match the last forward"
        );
        for s in 0..used {
            let dys = &dy[s * t * d..(s + 1) * t * d];
            let xs = &x[s * t * di..(s + 1) * t * di];
            let gw = &mut self.weight.grad[s * di * d..(s + 1) * di * d];
            sep_kernels::matmul_tn(xs, dys, gw, di, t, d, true);
            crate::ops::accumulate_column_sums(dys, d, &mut self.bias.grad[s * d..(s + 1) * d]);
            let u = &self.weight.value[s * di * d..(s + 1) * di * d];
            let dxs = &mut self.dx[s * t * di..(s + 1) * t * di];
            sep_kernels::matmul_nt(dys, u, dxs, t, d, di, false);
        }
    }

    /// The output of the last forward pass.
    pub fn output(&self) -> &[f32] {
        &self.y[..self.used * self.tokens * self.d_out]
    }
}

impl Module for BatchEnsembleLinear {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        f(&mut self.weight);
        f(&mut self.bias);
    }
}

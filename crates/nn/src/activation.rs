//! Elementwise activations: GELU (erf form) and sigmoid.
//!
//! Both work on any shape: the input is a flat slice of at most `max_len` elements and
//! the output has the same shape. The functions are `sep-kernels`' own polynomials, never
//! libm.
//!
//! | layer | forward | backward |
//! |---|---|---|
//! | [`Gelu`] | `y = 0.5 x (1 + erf(x / sqrt 2))` | `dx = dy * gelu'(x)` |
//! | [`Sigmoid`] | `y = 1 / (1 + e^-x)` | `dx = dy * (y * (1 - y))` |
//!
//! ```
//! use sep_nn::{Gelu, Sigmoid};
//! let mut g = Gelu::new(3);
//! let y = g.forward(&[-10.0, 0.0, 10.0]);
//! assert!(y[0].abs() < 1e-6 && y[1] == 0.0 && (y[2] - 10.0).abs() < 1e-5);
//! let mut s = Sigmoid::new(1);
//! assert_eq!(s.forward(&[0.0]), &[0.5]);
//! ```

use crate::{InputId, prim};

/// GELU with its activation buffers (saved input, output, input gradient, and the
/// factor `2 Phi(x)` the forward pass computes anyway, kept so that the backward pass
/// does not recompute it).
#[derive(Clone, Debug)]
pub struct Gelu {
    x: Vec<f32>,
    y: Vec<f32>,
    h: Vec<f32>,
    dx: Vec<f32>,
    len: usize,
    input: InputId,
}

impl Gelu {
    /// For inputs of up to `max_len` elements.
    pub fn new(max_len: usize) -> Self {
        Gelu {
            x: vec![0.0; max_len],
            y: vec![0.0; max_len],
            h: vec![0.0; max_len],
            dx: vec![0.0; max_len],
            len: 0,
            input: InputId::SAVED,
        }
    }

    /// `y = gelu(x)` elementwise.
    pub fn forward(&mut self, x: &[f32]) -> &[f32] {
        self.forward_impl(x, true)
    }

    /// [`Gelu::forward`] without keeping a copy of `x`: the matching backward call is
    /// [`Gelu::backward_with_input`] with this same slice, unchanged.
    pub fn forward_no_save(&mut self, x: &[f32]) -> &[f32] {
        self.forward_impl(x, false)
    }

    fn forward_impl(&mut self, x: &[f32], save: bool) -> &[f32] {
        let n = x.len();
        assert!(
            n <= self.y.len(),
            "Gelu::forward: input longer than max_len"
        );
        self.len = n;
        if save {
            self.x[..n].copy_from_slice(x);
            self.input = InputId::SAVED;
        } else {
            self.input = InputId::of(x);
        }
        prim::gelu_slice_saving(x, &mut self.y[..n], &mut self.h[..n]);
        &self.y[..n]
    }

    /// `dx = dy * gelu'(x)` for the last forward.
    ///
    /// # Panics
    /// If the last forward pass was [`Gelu::forward_no_save`].
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        self.input.expect_saved("Gelu::backward");
        let n = self.len;
        assert_eq!(
            dy.len(),
            n,
            "Gelu::backward: dy must match the last forward"
        );
        prim::gelu_backward_slice_saved(&self.x[..n], &self.h[..n], dy, &mut self.dx[..n]);
        &self.dx[..n]
    }

    /// [`Gelu::backward`] for the last [`Gelu::forward_no_save`], given its input `x`
    /// again (the same bits as `forward` + `backward`).
    ///
    /// # Panics
    /// If `x` is not the slice the last `forward_no_save` read.
    pub fn backward_with_input(&mut self, x: &[f32], dy: &[f32]) -> &[f32] {
        self.input.expect(x, "Gelu::backward_with_input");
        let n = self.len;
        assert_eq!(
            dy.len(),
            n,
            "Gelu::backward: dy must match the last forward"
        );
        prim::gelu_backward_slice_saved(x, &self.h[..n], dy, &mut self.dx[..n]);
        &self.dx[..n]
    }

    /// The output of the last forward pass.
    pub fn output(&self) -> &[f32] {
        &self.y[..self.len]
    }
}

/// Sigmoid with its activation buffers (output, input gradient).
#[derive(Clone, Debug)]
pub struct Sigmoid {
    y: Vec<f32>,
    dx: Vec<f32>,
    len: usize,
}

impl Sigmoid {
    /// For inputs of up to `max_len` elements.
    pub fn new(max_len: usize) -> Self {
        Sigmoid {
            y: vec![0.0; max_len],
            dx: vec![0.0; max_len],
            len: 0,
        }
    }

    /// `y = sigmoid(x)` elementwise.
    pub fn forward(&mut self, x: &[f32]) -> &[f32] {
        let n = x.len();
        assert!(
            n <= self.y.len(),
            "Sigmoid::forward: input longer than max_len"
        );
        self.len = n;
        prim::sigmoid_slice(x, &mut self.y[..n]);
        &self.y[..n]
    }

    /// `dx = dy * (y * (1 - y))` for the last forward.
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        let n = self.len;
        assert_eq!(
            dy.len(),
            n,
            "Sigmoid::backward: dy must match the last forward"
        );
        for ((d, &g), &y) in self.dx[..n].iter_mut().zip(dy).zip(&self.y[..n]) {
            *d = g * (y * (1.0 - y));
        }
        &self.dx[..n]
    }

    /// The output of the last forward pass.
    pub fn output(&self) -> &[f32] {
        &self.y[..self.len]
    }
}

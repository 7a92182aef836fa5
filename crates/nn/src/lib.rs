//! Neural-network layers built on `sep-kernels`: forward, backward, Adam, seeded init.
//!
//! Everything here is bit-reproducible: the same seed and the same inputs give the same
//! `f32` bits on every CPU, SIMD level and thread count, because all arithmetic is either
//! a `sep-kernels` call (whose operation order is its contract) or a fixed-order loop of
//! IEEE `+ - * / sqrt` and `mul_add`; no libm, no reordered sums.
//!
//! Start with [`Rng`], [`Linear`] and [`Adam`]. Conventions shared by every layer:
//!
//! * tensors are flat row-major `f32` slices; shapes are in each layer's docs;
//! * a layer allocates its parameters ([`Param`]: value, gradient, Adam moments) and its
//!   activation buffers once, for a maximum number of rows given at construction, and
//!   never allocates in `forward`/`backward`;
//! * the number of rows is the input length divided by the layer's width;
//! * `forward(&mut self, x) -> &[f32]` stores what backward needs;
//!   `backward(&mut self, dy) -> &[f32]` adds the parameter gradients into
//!   `Param::grad` and returns the input gradient;
//! * `forward` keeps a copy of its input; where the caller's input buffer outlives the
//!   step (another layer's output, say), [`Linear`], [`LayerNorm`], [`Gelu`] and
//!   [`BatchEnsembleLinear`] also offer `forward_no_save(x)` and
//!   `backward_with_input(x, dy)`, which skip that copy: the backward call must get the
//!   very slice the forward call read (checked), unchanged, for the same bits;
//! * a model implements [`Module`] by visiting its layers' parameters in a fixed order;
//!   [`Adam::step`] walks that order and consumes (zeroes) the gradients.
//!
//! | layer | input -> output | parameters |
//! |---|---|---|
//! | [`Linear`] | `[rows x in]` -> `[rows x out]` | `weight [out x in]`, `bias [out]` |
//! | [`Embedding`] | ids `[n]` -> `[n x dim]` | `weight [num x dim]` |
//! | [`LayerNorm`] | `[rows x dim]` -> same | `weight`, `bias [dim]` (optional) |
//! | [`BatchNorm`] | `[rows x channels]` -> same (train mode) | `weight`, `bias [channels]` |
//! | [`Gelu`], [`Sigmoid`] | any -> same | none |
//! | [`BatchEnsembleLinear`] | `[streams x tokens x d_in]` -> `[streams x tokens x d_out]` | `weight [streams x d_in x d_out]`, `bias [streams x d_out]` |
//! | [`CausalLinearAttention`] | `[batch x tokens x 3d]` (q, k, v) -> `[batch x tokens x d]` or last token `[batch x d]` | none |
//! | [`SoftmaxAttention`] | `[batch x tokens x 3d]` -> `[batch x tokens x d]` | none |
//! | [`CrossEntropy`] | logits `[rows x classes]`, targets `[rows]` -> loss, probabilities | none |
//! | [`ops`] | residual add, average, scale, column blocks, transpose | none |
//! | [`sinusoidal_positions`] | constant `[positions x size]` table (TRACE) | none |
//!
//! Weights used twice in one step (TRACE's shared FFN) get one activation set per use:
//! [`Linear::new_acts`] / [`Linear::forward_with`] / [`Linear::backward_with`], likewise
//! for [`LayerNorm`]; both uses accumulate into the same gradient.
//!
//! A small MLP trained online, composed by hand (the crate's tests hold larger examples:
//! `tests/common/models.rs` uses every layer kind):
//!
//! ```
//! use sep_nn::{Adam, AdamConfig, CrossEntropy, Gelu, Linear, Module, Param, Rng};
//!
//! struct Mlp { l1: Linear, act: Gelu, l2: Linear, ce: CrossEntropy }
//! impl Module for Mlp {
//!     fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
//!         self.l1.visit_params(f);
//!         self.l2.visit_params(f);
//!     }
//! }
//! let (batch, d_in, hidden, classes) = (4, 8, 16, 5);
//! let mut rng = Rng::new(1);
//! let mut m = Mlp {
//!     l1: Linear::new(d_in, hidden, true, batch, &mut rng),
//!     act: Gelu::new(batch * hidden),
//!     l2: Linear::new(hidden, classes, true, batch, &mut rng),
//!     ce: CrossEntropy::new(classes, batch),
//! };
//! let mut adam = Adam::new(AdamConfig::default());
//! let x: Vec<f32> = (0..batch * d_in).map(|_| rng.next_f32()).collect();
//! let targets = [0usize, 1, 2, 3];
//! for _ in 0..3 {
//!     // forward
//!     let h = m.l1.forward(&x);
//!     let h = m.act.forward(h);
//!     let logits = m.l2.forward(h);
//!     let loss = m.ce.forward(logits, &targets);
//!     assert!(loss.is_finite());
//!     let _probabilities = m.ce.probs(); // what the coder uses
//!     // backward
//!     let d = m.ce.backward();
//!     let d = m.l2.backward(d);
//!     let d = m.act.backward(d);
//!     m.l1.backward(d);
//!     adam.step(&mut m);
//! }
//! ```

#![forbid(unsafe_code)]

mod activation;
mod adam;
mod attention;
mod batchnorm;
mod embedding;
mod ensemble;
pub mod init;
mod layernorm;
mod linear;
mod linear_attention;
mod loss;
pub mod ops;
mod param;
mod position;
mod prim;
mod rng;

pub use activation::{Gelu, Sigmoid};
pub use adam::{Adam, AdamConfig};
pub use attention::SoftmaxAttention;
pub use batchnorm::BatchNorm;
pub use embedding::Embedding;
pub use ensemble::BatchEnsembleLinear;
pub use layernorm::{LayerNorm, LayerNormActs};
pub use linear::{Linear, LinearActs};
pub use linear_attention::CausalLinearAttention;
pub use loss::CrossEntropy;
pub use param::{Module, Param, num_params, zero_grads};
pub use position::sinusoidal_positions;
pub use rng::{Rng, ln as ln_f64, splitmix64};

/// Which input a layer's last forward pass read, when it did not keep a copy
/// (`forward_no_save`): the slice's address and length, compared by the matching
/// `backward_with_input`. `NONE` means the layer kept its own copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InputId {
    addr: usize,
    len: usize,
}

impl InputId {
    /// The layer kept a copy of its input.
    pub(crate) const SAVED: InputId = InputId {
        addr: usize::MAX,
        len: usize::MAX,
    };

    /// The identity of `x`.
    pub(crate) fn of(x: &[f32]) -> InputId {
        InputId {
            addr: x.as_ptr() as usize,
            len: x.len(),
        }
    }

    /// Panics unless the last forward pass kept a copy of its input.
    #[track_caller]
    pub(crate) fn expect_saved(self, what: &str) {
        assert!(
            self == InputId::SAVED,
            "{what}: the last forward was forward_no_save; call backward_with_input"
        );
    }

    /// Panics unless `x` is the slice the last `forward_no_save` read.
    #[track_caller]
    pub(crate) fn expect(self, x: &[f32], what: &str) {
        assert!(
            self == InputId::of(x),
            "{what}: backward_with_input needs the very slice given to forward_no_save"
        );
    }
}

/// Rows in a buffer of `len` elements of `width` columns, checked against `max_rows`.
pub(crate) fn rows_of(len: usize, width: usize, max_rows: usize, what: &str) -> usize {
    assert!(
        len.is_multiple_of(width),
        "{what}: length {len} is not a multiple of the row width {width}"
    );
    let rows = len / width;
    assert!(
        rows <= max_rows,
        "{what}: {rows} rows exceed the {max_rows} allocated"
    );
    rows
}

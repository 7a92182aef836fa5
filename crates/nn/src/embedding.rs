//! Lookup table of learned vectors, PyTorch's `nn.Embedding`.
//!
//! Start with [`Embedding::new`]. Shapes: ids `[n]` (`u8`, `u16` or `usize`: any type with
//! `Into<usize>`, e.g. the context bytes), `weight = [num_embeddings x dim]`, output
//! `[n x dim]` with row `i` = `weight[ids[i]]`. For a batch of contexts, `n = batch * L`
//! and the output reads as `[batch x L x dim]`, which is also `[batch x L*dim]`.
//!
//! Backward scatters `dy` rows into the gradient table in id order of appearance
//! (`grad[ids[i]] += dy[i]` for `i = 0..n`), a fixed order, so repeated ids sum
//! deterministically. There is no input gradient.
//!
//! ```
//! use sep_nn::{Embedding, Rng};
//! let mut emb = Embedding::new(256, 4, 8, &mut Rng::new(1));
//! let y = emb.forward(&[7u8, 7]);
//! assert_eq!(y[..4], y[4..]);
//! ```

use crate::init;
use crate::param::{Module, Param};
use crate::rng::Rng;

/// An embedding table with its activation buffers.
#[derive(Clone, Debug)]
pub struct Embedding {
    num: usize,
    dim: usize,
    /// `[num_embeddings x dim]`.
    pub weight: Param,
    ids: Vec<usize>,
    y: Vec<f32>,
    n: usize,
}

impl Embedding {
    /// A table of `num` vectors of width `dim`, initialised `N(0, 1)` as PyTorch, for up to
    /// `max_ids` ids per forward pass.
    pub fn new(num: usize, dim: usize, max_ids: usize, rng: &mut Rng) -> Self {
        assert!(num > 0 && dim > 0, "Embedding: empty table");
        Embedding {
            num,
            dim,
            weight: Param::new_with("embedding.weight", num * dim, |w| {
                init::normal(w, rng, 0.0, 1.0)
            }),
            ids: vec![0; max_ids],
            y: vec![0.0; max_ids * dim],
            n: 0,
        }
    }

    /// Vector width.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of vectors in the table.
    pub fn num_embeddings(&self) -> usize {
        self.num
    }

    /// Looks up `ids = [n]`; returns `[n x dim]`. Panics on an id `>= num_embeddings`.
    pub fn forward<I: Copy + Into<usize>>(&mut self, ids: &[I]) -> &[f32] {
        let n = ids.len();
        assert!(
            n <= self.ids.len(),
            "Embedding::forward: more ids than max_ids"
        );
        self.n = n;
        let d = self.dim;
        for (i, &id) in ids.iter().enumerate() {
            let id: usize = id.into();
            assert!(id < self.num, "Embedding::forward: id {id} out of range");
            self.ids[i] = id;
            self.y[i * d..(i + 1) * d].copy_from_slice(&self.weight.value[id * d..(id + 1) * d]);
        }
        &self.y[..n * d]
    }

    /// Accumulates `dy = [n x dim]` into the table's gradient.
    pub fn backward(&mut self, dy: &[f32]) {
        let d = self.dim;
        assert_eq!(
            dy.len(),
            self.n * d,
            "Embedding::backward: dy must be [n x dim]"
        );
        for (i, g) in dy.chunks_exact(d).enumerate() {
            let id = self.ids[i];
            crate::ops::add_assign(&mut self.weight.grad[id * d..(id + 1) * d], g);
        }
    }

    /// The output of the last forward pass.
    pub fn output(&self) -> &[f32] {
        &self.y[..self.n * self.dim]
    }
}

impl Module for Embedding {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        f(&mut self.weight);
    }
}

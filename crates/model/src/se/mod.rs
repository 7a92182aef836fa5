//! Semantics enhancement (SE, doc/SEP-DESIGN.md section 4): a byte front end that turns a context
//! into a few semantic tokens, in front of any backbone's [`Body`].
//!
//! Start with [`SeConfig`] (hyperparameters and the body) and [`Se`] (the backbone).
//! For `rows` contexts of `L` bytes, per-byte width `D`, patch window `P`, stride `S`,
//! `N = (L - P) / S + 1` patches starting `o = (L - P) mod S` bytes in (so the last patch
//! ends at the newest byte), and `T` tokens of `F = P * D` features:
//!
//! 1. **Semantic-patch expansion.** Byte `i` of a context becomes
//!    `e_i = sigmoid([Emb[c_i] | pos_i])` (`D` learned features, or `D/2` learned beside
//!    `D/2` sinusoidal position features from [`sep_nn::sinusoidal_positions`]).
//!    Patch `n` covers bytes `o + nS .. o + nS + P`.
//! 2. **Dimension fusion.** Patch `n`'s `P x D` values, byte-major, are one vector
//!    `v_n` of `F` features: `v_n[j*D + k] = e_{o+nS+j}[k]`.
//! 3. **Adaptive stride** ([`Adaptive`]): a gate per patch (or per stream, patch and
//!    feature) weights or skips patches.
//! 4. **Patch-axis map.** `token_t = GELU(b_t + sum_n W[t,n] g_n v_n)` for `t < T`, a
//!    learned `W = [T x N]` and bias `b = [T]`; the `T` tokens (`[rows x T x F]`) are the
//!    body's input.
//!
//! # Operation order (normative)
//!
//! * Gates. `u = sigmoid(m)` with [`sep_kernels::sigmoid`] (1 for forced patches).
//!   Soft: `g = sigmoid((u - threshold) * slope)`. Hard: patch `n` is kept when forced
//!   (`g_n = 1`) or when `u_n >= threshold` (`g_n = u_n`), skipped otherwise. Off: every
//!   patch, `g_n = 1`.
//! * Per patch (off, soft per patch, hard) the gate is folded into the map:
//!   `w_eff[t,k] = W[t,n_k] * g_{n_k}` over the kept patches `n_0 < n_1 < ...`.
//!   Soft per element: `w_eff = W` and each gathered value is `v * g` (one product).
//! * For each byte offset `j = 0..P`: `Y_j = w_eff * V_j` by [`sep_kernels::matmul`]
//!   accumulating onto `Y_j[t, .] = b_t`, where row `k` of `V_j` holds byte
//!   `o + n_k S + j` of every row (`[kept x rows*D]`). So `token[r,t,j*D+k]` is one
//!   `mul_add` chain from `b_t` over the kept patches in increasing order. Then GELU.
//! * Backward, per `j` in order: `dY_j` (the GELU gradient's block); `db += ` the
//!   [`sep_kernels::sum_rows`] of `dY_j`; `M (+)= dY_j V_j^T` ([`sep_kernels::matmul_nt`],
//!   accumulating from `j = 1`); `dV_j = w_eff^T dY_j` ([`sep_kernels::matmul_tn`]); per
//!   element mask `dg = dV * e`, `dV *= g`; `dV_j`'s rows added to their bytes' gradient,
//!   patches in order. Then folded modes: `dW[t,n] = mul_add(M[t,k], g_n, dW[t,n])` and
//!   `dg_n = ` the `mul_add` chain over `t` of `W[t,n] M[t,k]`; the others `dW += M`.
//!   Scores: soft `dm += ((dg * (g (1 - g))) * slope) * (u (1 - u))` (unforced only);
//!   hard `dm += (dg + sparsity) * (u (1 - u))` (kept unforced only).
//!
//! **Compute.** A skipped patch is never gathered or multiplied, forward or backward,
//! so the hard gate saves `T * F` multiply-adds per skipped patch and row, forward and
//! twice that backward. With stride 1 and every patch kept, the rows of all patches are
//! one contiguous block of the position-major features, and no gathering happens.
//!
//! **Initialisation**, mirroring the reference per body: embedding `N(0, 1)` (`N(0, 0.01)`
//! for a PAC body); map `N(0, 2/N)` with bias 0 (`N(0, 0.01)` for both with a PAC body),
//! or, with [`SeConfig::newest_init`], the selection of the newest non-overlapping
//! patches (weights 1 and 0, bias 0; the generator is still forked);
//! soft scores Xavier-normal over `(1, N, 1)` or `(streams, N, F)`; hard scores 1
//! (`u = 0.73`: every patch kept at the start).
//!
//! **Difference from the reference.** The reference's SEP+TRACE and SEP+PatchTST replace
//! their backbone's output layer by a map over the token axis (`T -> 128 -> 1`); here the
//! body keeps its own output layer, so SE stays a pure front end and TRACE keeps its
//! last-token computation.
//!
//! ```
//! use sep_model::{Adaptive, Backbone, BackboneConfig, PacConfig, SeBody, SeConfig};
//! let config = BackboneConfig::Se(SeConfig {
//!     context: 12, patch: 4, stride: 2, embed: 4, positions: false, newest_init: true, tokens: 1,
//!     adaptive: Adaptive::Hard { keep_every: 2, threshold: 0.5, sparsity: 0.0 },
//!     body: SeBody::Pac(PacConfig { context: 4, embed: 4, ffn: 16, pairs: 1, cache: false }),
//! });
//! let mut model = config.build(2, 1);
//! assert_eq!(model.context(), 12);
//! assert_eq!(model.forward(&[7; 24], 2).len(), 2 * 256);
//! ```

mod config;
mod front;

pub use config::{Adaptive, MAX_ELEMENT_MASK, SeBody, SeConfig};

use crate::{Backbone, Body, Param};
use front::SeFront;
use sep_nn::Rng;

/// The semantics enhancement in front of a body.
pub struct Se {
    context: usize,
    front: SeFront,
    body: Box<dyn Body>,
    macs: u64,
}

impl Se {
    /// A freshly initialised SE backbone for up to `streams` streams.
    pub fn new(config: &SeConfig, streams: usize, seed: u64) -> Self {
        config.validate().expect("valid SE configuration");
        let mut rng = Rng::new(seed);
        let front = SeFront::new(config, streams, &mut rng);
        let body = config.body.build(streams, &mut rng);
        Se {
            context: config.context.into(),
            front,
            body,
            macs: config.forward_macs(),
        }
    }

    /// Patches the last forward pass used (all of them unless the gate is hard).
    pub fn kept_patches(&self) -> usize {
        self.front.kept()
    }

    /// Patches `N`.
    pub fn patches(&self) -> usize {
        self.front.patches()
    }
}

impl Backbone for Se {
    fn context(&self) -> usize {
        self.context
    }

    fn forward(&mut self, ctx: &[u8], rows: usize) -> &[f32] {
        assert_eq!(
            ctx.len(),
            rows * self.context,
            "SE: context must be [rows x L]"
        );
        let x = self.front.forward(ctx, rows);
        self.body.forward(x)
    }

    fn backward(&mut self, dlogits: &[f32]) {
        let dx = self.body.backward(dlogits);
        self.front.backward(dx);
    }

    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.front.visit_params(f);
        self.body.visit_params(f);
    }

    fn reset(&mut self) {
        self.body.reset();
    }

    fn forward_macs(&self) -> u64 {
        self.macs
    }
}

//! The byte front end of TRACE and PatchTST: a learned embedding beside fixed
//! sinusoidal position features, `G` consecutive bytes per token.
//!
//! For context bytes `c[0..L]` (oldest first) and per-byte width `E` (a multiple of 4),
//! byte `i` becomes the `E` features
//!
//! ```text
//! [ Emb[c[i]] (E/2 learned) | sin(i f_0 .. i f_{E/4-1}) | cos(i f_0 .. i f_{E/4-1}) ]
//! ```
//!
//! (the position table of [`sep_nn::sinusoidal_positions`] with size `E/2`, as the
//! reference's `_concat_pos_embs`), with no activation. The output `[rows x L x E]` is read
//! as `[rows x L/G x G*E]`: token `j` is bytes `G*j .. G*j+G` concatenated byte-major. The
//! embedding starts `N(0, 1)` (PyTorch's default).

use sep_nn::{Embedding, Module, Param, Rng, sinusoidal_positions};

/// Embedding plus position features for up to `streams` rows.
pub(crate) struct TokenFront {
    context: usize,
    embed: usize,
    embedding: Embedding,
    /// `[L x E/2]`, constant.
    positions: Vec<f32>,
    /// `[streams x L x E]`.
    x: Vec<f32>,
    /// Embedding gradient scratch, `[streams * L x E/2]`.
    de: Vec<f32>,
    rows: usize,
}

impl TokenFront {
    /// `context` bytes of `embed` features each (`embed % 4 == 0`), drawing the
    /// embedding from `rng`.
    pub(crate) fn new(context: usize, embed: usize, streams: usize, rng: &mut Rng) -> Self {
        assert!(
            embed.is_multiple_of(4),
            "TokenFront: embed must be a multiple of 4"
        );
        let half = embed / 2;
        let mut positions = vec![0.0; context * half];
        sinusoidal_positions(&mut positions, context, half);
        TokenFront {
            context,
            embed,
            embedding: Embedding::new(256, half, streams * context, rng),
            positions,
            x: vec![0.0; streams * context * embed],
            de: vec![0.0; streams * context * half],
            rows: 0,
        }
    }

    /// Features `[rows x L x E]` of the contexts `ctx = [rows x L]`.
    pub(crate) fn forward(&mut self, ctx: &[u8]) -> &[f32] {
        let (l, e) = (self.context, self.embed);
        let half = e / 2;
        let rows = ctx.len() / l;
        self.rows = rows;
        let emb = self.embedding.forward(ctx);
        for (i, (x, em)) in self.x[..rows * l * e]
            .chunks_exact_mut(e)
            .zip(emb.chunks_exact(half))
            .enumerate()
        {
            let pos = i % l;
            x[..half].copy_from_slice(em);
            x[half..].copy_from_slice(&self.positions[pos * half..(pos + 1) * half]);
        }
        &self.x[..rows * l * e]
    }

    /// Accumulates the embedding gradient from `dx = [rows x L x E]`.
    pub(crate) fn backward(&mut self, dx: &[f32]) {
        let (l, e) = (self.context, self.embed);
        let half = e / 2;
        let n = self.rows * l;
        assert_eq!(
            dx.len(),
            n * e,
            "TokenFront::backward: dx must be [rows x L x E]"
        );
        for (de, d) in self.de[..n * half]
            .chunks_exact_mut(half)
            .zip(dx.chunks_exact(e))
        {
            de.copy_from_slice(&d[..half]);
        }
        self.embedding.backward(&self.de[..n * half]);
    }

    /// The embedding table.
    pub(crate) fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.embedding.visit_params(f);
    }
}

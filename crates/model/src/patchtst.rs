//! PatchTST as SEP uses it (doc/SEP-DESIGN.md section 3): softmax attention over byte tokens,
//! post-norm with batch normalisation across the batch.
//!
//! Shapes, for `rows` streams, context `L`, per-byte width `E`, `G` bytes per token,
//! `tk = L / G` tokens of width `d = G * E`, `h` heads, FFN width `F`, `layers` encoder
//! layers (1 in the paper):
//!
//! 1. front end ([`crate::front`]): byte embedding (`E/2`) beside sinusoidal positions
//!    (`E/2`), read as tokens `x = [rows x tk x d]`;
//! 2. each encoder layer, on the `rows * tk` token rows:
//!    * `qkv_map: d -> 3d` (the reference's `W_Q`, `W_K`, `W_V`, packed), softmax
//!      attention over all tokens (not causal, scale `1/sqrt(d/h)`,
//!      [`sep_nn::SoftmaxAttention`]), `to_out: d -> d`;
//!    * `z = BN1(x + to_out(att))`;
//!    * `x' = BN2(z + ff2(GELU(ff1(z))))` (`ff1: d -> F`, `ff2: F -> d`);
//! 3. `out: d -> 256` on the last token (the reference maps every token and keeps the
//!    last; the map is per token, so this is exact).
//!
//! **Batch normalisation couples the streams.** `BN1` and `BN2` ([`sep_nn::BatchNorm`],
//! training mode) normalise each channel over all `rows * tk` token rows of the step, so
//! a stream's logits depend on the other streams' contexts. That is deterministic (the
//! decoder has every context of a step before it decodes the step's bytes), and at the
//! last steps of a block, when only `k < S` streams remain, the statistics are over
//! those `k * tk` rows, in the encoder and the decoder alike. `tk >= 2` keeps at least
//! two rows. Running statistics are kept as PyTorch does but never used.
//!
//! Initialisation as PyTorch's defaults (the reference): linear layers
//! `U(-1/sqrt(in), 1/sqrt(in))`, BatchNorm ones and zeros, embedding `N(0, 1)`; each
//! linear layer draws from its own generator forked from the seed in order (embedding,
//! then per layer `qkv_map`, `to_out`, `ff1`, `ff2`, then `out`).

use crate::tokens::{TokenBackbone, TokenShape};
use crate::{Body, Param};
use sep_nn::{BatchNorm, Gelu, Linear, Module, Rng, SoftmaxAttention, ops};

/// PatchTST hyperparameters: the token shape (with at least 2 tokens) and the number of
/// encoder layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchTstConfig {
    /// Context, per-byte width, bytes per token (at least 2 tokens), heads and FFN width.
    pub shape: TokenShape,
    /// Encoder layers (1).
    pub layers: u8,
}

impl PatchTstConfig {
    /// The paper's configuration: 64 bytes, 16 tokens of 256, 8 heads, FFN 4096, 1 layer.
    pub const PAPER: PatchTstConfig = PatchTstConfig {
        shape: TokenShape::PAPER,
        layers: 1,
    };

    /// The same configuration with `context` bytes (and so `context / group` tokens).
    pub fn with_context(self, context: u16) -> Self {
        PatchTstConfig {
            shape: TokenShape {
                context,
                ..self.shape
            },
            ..self
        }
    }

    /// The same configuration with `tokens` tokens (`tokens * group` context bytes).
    pub fn with_tokens(self, tokens: u16) -> Self {
        self.with_context(tokens * u16::from(self.shape.group))
    }

    /// Tokens `L / G`.
    pub fn tokens(&self) -> usize {
        self.shape.tokens()
    }

    /// Token width `d = G * E`.
    pub fn width(&self) -> usize {
        self.shape.width()
    }

    /// Checks the limits of doc/FORMAT.md.
    pub fn validate(&self) -> Result<(), String> {
        self.shape.validate("PatchTST")?;
        if !(2..=256).contains(&self.tokens()) {
            return Err(format!(
                "PatchTST tokens (context / group) = {} outside 2..=256 (batch normalisation needs two rows)",
                self.tokens()
            ));
        }
        if !(1..=4).contains(&self.layers) {
            return Err(format!("PatchTST layers {} outside 1..=4", self.layers));
        }
        Ok(())
    }

    /// Forward multiply-adds per predicted byte.
    pub fn forward_macs(&self) -> u64 {
        let (tk, d, f) = (
            self.tokens() as u64,
            self.width() as u64,
            u64::from(self.shape.ffn),
        );
        u64::from(self.layers) * tk * (4 * d * d + 2 * tk * d + 2 * d * f) + 256 * d
    }

    /// Bytes of parameters (with gradients and Adam moments) and activations for
    /// `streams` streams.
    pub fn memory_bytes(&self, streams: usize) -> u64 {
        let (tk, d, f, s) = (
            self.tokens() as u64,
            self.width() as u64,
            u64::from(self.shape.ffn),
            streams as u64,
        );
        let nl = u64::from(self.layers);
        let params = 128 * u64::from(self.shape.embed)
            + nl * (4 * d * d + 2 * d * f + f + 9 * d)
            + 256 * d
            + 256;
        let heads = u64::from(self.shape.heads);
        let acts = s * tk * (nl * (30 * d + 3 * f + heads * tk) + 4 * d) + s * 4 * 256;
        4 * (4 * params + acts)
    }

    /// One line for listings.
    pub fn describe(&self) -> String {
        format!(
            "patchtst ({}, {} layer{})",
            self.shape.describe(),
            self.layers,
            if self.layers == 1 { "" } else { "s" }
        )
    }
}

impl crate::BackboneSpec for PatchTstConfig {
    fn id(&self) -> u8 {
        3
    }

    fn name(&self) -> &'static str {
        "patchtst"
    }

    fn context(&self) -> usize {
        self.shape.context.into()
    }

    fn validate(&self) -> Result<(), String> {
        PatchTstConfig::validate(self)
    }

    fn memory_bytes(&self, streams: usize) -> u64 {
        PatchTstConfig::memory_bytes(self, streams)
    }

    fn forward_macs(&self) -> u64 {
        PatchTstConfig::forward_macs(self)
    }

    fn describe(&self) -> String {
        PatchTstConfig::describe(self)
    }

    fn build(&self, streams: usize, seed: u64) -> Box<dyn crate::Backbone> {
        Box::new(PatchTst::new(self, streams, seed))
    }
}

impl crate::BodySpec for PatchTstConfig {
    fn input_shape(&self) -> (usize, usize) {
        (self.tokens(), self.width())
    }

    fn build_body(&self, streams: usize, rng: &mut Rng) -> Box<dyn crate::Body> {
        Box::new(PatchTstBody::new(self, streams, rng))
    }
}

/// PatchTST with its byte front end.
pub type PatchTst = TokenBackbone<PatchTstBody>;

impl PatchTst {
    /// A freshly initialised PatchTST for up to `streams` streams.
    pub fn new(config: &PatchTstConfig, streams: usize, seed: u64) -> Self {
        config.validate().expect("valid PatchTST configuration");
        TokenBackbone::with_body("PatchTST", &config.shape, streams, seed, |rng| {
            PatchTstBody::new(config, streams, rng)
        })
    }
}

/// One post-norm encoder layer.
struct Layer {
    qkv_map: Linear,
    att: SoftmaxAttention,
    to_out: Linear,
    bn1: BatchNorm,
    ff1: Linear,
    gelu: Gelu,
    ff2: Linear,
    bn2: BatchNorm,
    /// `x + to_out(att)`, then `z + ff2(...)`, `[rows * tk x d]`.
    sum: Vec<f32>,
    /// Gradient scratch, `[rows * tk x d]`.
    dz: Vec<f32>,
    dx: Vec<f32>,
}

impl Layer {
    fn new(tk: usize, d: usize, heads: usize, f: usize, streams: usize, rng: &mut Rng) -> Self {
        let n = streams * tk;
        Layer {
            qkv_map: Linear::new(d, 3 * d, true, n, &mut rng.fork()),
            att: SoftmaxAttention::new(tk, heads, d / heads, false, streams),
            to_out: Linear::new(d, d, true, n, &mut rng.fork()),
            bn1: BatchNorm::new(d, n),
            ff1: Linear::new(d, f, true, n, &mut rng.fork()),
            gelu: Gelu::new(n * f),
            ff2: Linear::new(f, d, true, n, &mut rng.fork()),
            bn2: BatchNorm::new(d, n),
            sum: vec![0.0; n * d],
            dz: vec![0.0; n * d],
            dx: vec![0.0; n * d],
        }
    }

    fn forward(&mut self, x: &[f32]) -> &[f32] {
        let n = x.len();
        let qkv = self.qkv_map.forward(x);
        let a = self.att.forward(qkv);
        let o = self.to_out.forward(a);
        ops::add(x, o, &mut self.sum[..n]);
        let z = self.bn1.forward(&self.sum[..n]);
        let u = self.ff1.forward(z);
        let g = self.gelu.forward(u);
        let v = self.ff2.forward(g);
        ops::add(z, v, &mut self.sum[..n]);
        self.bn2.forward(&self.sum[..n])
    }

    fn backward(&mut self, dout: &[f32]) -> &[f32] {
        let n = dout.len();
        let dw = self.bn2.backward(dout);
        let dg = self.ff2.backward(dw);
        let du = self.gelu.backward(dg);
        let dz = &mut self.dz[..n];
        dz.copy_from_slice(self.ff1.backward(du));
        ops::add_assign(dz, dw);
        let dy = self.bn1.backward(dz);
        let da = self.to_out.backward(dy);
        let dqkv = self.att.backward(da);
        let dx = &mut self.dx[..n];
        dx.copy_from_slice(self.qkv_map.backward(dqkv));
        ops::add_assign(dx, dy);
        dx
    }

    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.qkv_map.visit_params(f);
        self.to_out.visit_params(f);
        self.bn1.visit_params(f);
        self.ff1.visit_params(f);
        self.ff2.visit_params(f);
        self.bn2.visit_params(f);
    }
}

/// PatchTST without its front end: tokens `[rows x tk x d]` to logits.
pub struct PatchTstBody {
    tokens: usize,
    width: usize,
    layers: Vec<Layer>,
    out: Linear,
    macs: u64,
    rows: usize,
    /// The last layer's output, `[rows * tk x d]`.
    x: Vec<f32>,
    /// Its last token, `[rows x d]`.
    last: Vec<f32>,
    /// Gradient of the last layer's output, `[rows * tk x d]`.
    dx: Vec<f32>,
}

impl PatchTstBody {
    /// A freshly initialised body for up to `streams` streams, drawing from `rng`.
    pub fn new(config: &PatchTstConfig, streams: usize, rng: &mut Rng) -> Self {
        let (tk, d, f) = (
            config.tokens(),
            config.width(),
            usize::from(config.shape.ffn),
        );
        let heads = usize::from(config.shape.heads);
        let layers = (0..config.layers)
            .map(|_| Layer::new(tk, d, heads, f, streams, rng))
            .collect();
        let out = Linear::new(d, 256, true, streams, &mut rng.fork());
        PatchTstBody {
            tokens: tk,
            width: d,
            layers,
            out,
            macs: config.forward_macs(),
            rows: 0,
            x: vec![0.0; streams * tk * d],
            last: vec![0.0; streams * d],
            dx: vec![0.0; streams * tk * d],
        }
    }
}

impl Body for PatchTstBody {
    fn input_width(&self) -> usize {
        self.tokens * self.width
    }

    fn forward(&mut self, x: &[f32]) -> &[f32] {
        let (tk, d) = (self.tokens, self.width);
        let rows = x.len() / (tk * d);
        self.rows = rows;
        let n = x.len();
        self.x[..n].copy_from_slice(x);
        for layer in &mut self.layers {
            let y = layer.forward(&self.x[..n]);
            self.x[..n].copy_from_slice(y);
        }
        ops::copy_columns(
            &self.x[..n],
            tk * d,
            (tk - 1) * d,
            &mut self.last,
            d,
            0,
            d,
            rows,
        );
        self.out.forward(&self.last[..rows * d])
    }

    fn backward(&mut self, dlogits: &[f32]) -> &[f32] {
        let (tk, d, rows) = (self.tokens, self.width, self.rows);
        let n = rows * tk * d;
        let dlast = self.out.backward(dlogits);
        let dx = &mut self.dx[..n];
        dx.fill(0.0);
        ops::copy_columns(dlast, d, 0, dx, tk * d, (tk - 1) * d, d, rows);
        for layer in self.layers.iter_mut().rev() {
            let g = layer.backward(dx);
            dx.copy_from_slice(g);
        }
        dx
    }

    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        for layer in &mut self.layers {
            layer.visit_params(f);
        }
        self.out.visit_params(f);
    }

    fn reset(&mut self) {}

    fn forward_macs(&self) -> u64 {
        self.macs
    }
}

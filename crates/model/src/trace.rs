//! TRACE: the single-layer transformer backbone of SEP (doc/SEP-DESIGN.md section 3), with the
//! last token computed alone.
//!
//! Shapes, for `rows` streams, context `L`, per-byte width `E`, `G` bytes per token,
//! `tk = L / G` tokens of width `d = G * E`, `h` heads of `dh = d / h`, FFN width `F`:
//!
//! 1. front end ([`crate::front`]): byte embedding (`E/2`) beside sinusoidal positions
//!    (`E/2`), read as tokens `x = [rows x tk x d]`;
//! 2. attention block, pre-LayerNorm: `s = LN1(x)`; `k, v` of every token and `q` of the
//!    last token (`kv_map: d -> 2d`, `q_map: d -> d`, both with bias); causal linear
//!    attention with squared features and prefix sums ([`sep_nn::CausalLinearAttention`],
//!    last-token mode, no output projection); `h_0 = x_last + att`;
//! 3. the FFN block applied `passes` times (2 in the paper) with shared weights:
//!    `h_{p+1} = h_p + down(GELU(up(LN2(h_p))))` (`up: d -> F`, `down: F -> d`);
//! 4. `out: d -> 256` logits.
//!
//! **Why only the last token.** The reference computes steps 2-4 for every token and
//! keeps the last token's logits. Everything after the attention is per token, and the
//! last token's attention output needs only its own query and every token's key and
//! value, so computing the query, the FFN passes and the output for the last token alone
//! gives the same logits with ~10x fewer multiply-adds (paper sizes: 143 -> 13 MFLOP).
//!
//! Initialisation as PyTorch's defaults (the reference): linear layers
//! `U(-1/sqrt(in), 1/sqrt(in))` for weight and bias, LayerNorms ones and zeros,
//! embedding `N(0, 1)`; each layer draws from its own generator forked, in layer order
//! (embedding, `q_map`, `kv_map`, `up`, `down`, `out`), from the seed. The reference's
//! separate `k_map` and `v_map` are one packed `kv_map` here (same distribution).

use crate::tokens::{TokenBackbone, TokenShape};
use crate::{Body, Param};
use sep_nn::{
    CausalLinearAttention, Gelu, LayerNorm, LayerNormActs, Linear, LinearActs, Module, Rng, ops,
};

/// TRACE hyperparameters: the token shape and how often the shared FFN block is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceConfig {
    /// Context, per-byte width, bytes per token, heads and FFN width.
    pub shape: TokenShape,
    /// Times the shared FFN block is applied (2).
    pub passes: u8,
}

impl TraceConfig {
    /// The paper's configuration: 64 bytes, 16 tokens of 256, 8 heads, FFN 4096 twice.
    pub const PAPER: TraceConfig = TraceConfig {
        shape: TokenShape::PAPER,
        passes: 2,
    };

    /// The same configuration with `context` bytes (and so `context / group` tokens).
    pub fn with_context(self, context: u16) -> Self {
        TraceConfig {
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
        self.shape.validate("TRACE")?;
        if !(1..=4).contains(&self.passes) {
            return Err(format!("TRACE passes {} outside 1..=4", self.passes));
        }
        Ok(())
    }

    /// Forward multiply-adds per predicted byte (last-token computation).
    pub fn forward_macs(&self) -> u64 {
        let (tk, d) = (self.tokens() as u64, self.width() as u64);
        let dh = d / u64::from(self.shape.heads);
        let f = u64::from(self.shape.ffn);
        tk * 2 * d * d + d * d + d * (tk * dh + dh) + u64::from(self.passes) * 2 * d * f + 256 * d
    }

    /// Multiply-adds the reference's all-tokens computation would spend (for comparison).
    pub fn reference_macs(&self) -> u64 {
        let (tk, d) = (self.tokens() as u64, self.width() as u64);
        let dh = d / u64::from(self.shape.heads);
        let f = u64::from(self.shape.ffn);
        tk * (3 * d * d + 2 * d * dh + u64::from(self.passes) * 2 * d * f + 256 * d)
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
        let params =
            128 * u64::from(self.shape.embed) + 3 * d * d + 2 * d * f + 256 * d + f + 263 * d;
        let passes = u64::from(self.passes);
        let acts = s * (tk * d * 24 + passes * (4 * f + 10 * d) + 8 * d + 4 * 256);
        4 * (4 * params + acts)
    }

    /// One line for listings.
    pub fn describe(&self) -> String {
        format!("trace ({} x{})", self.shape.describe(), self.passes)
    }
}

impl crate::BackboneSpec for TraceConfig {
    fn id(&self) -> u8 {
        2
    }

    fn name(&self) -> &'static str {
        "trace"
    }

    fn context(&self) -> usize {
        self.shape.context.into()
    }

    fn validate(&self) -> Result<(), String> {
        TraceConfig::validate(self)
    }

    fn memory_bytes(&self, streams: usize) -> u64 {
        TraceConfig::memory_bytes(self, streams)
    }

    fn forward_macs(&self) -> u64 {
        TraceConfig::forward_macs(self)
    }

    fn describe(&self) -> String {
        TraceConfig::describe(self)
    }

    fn build(&self, streams: usize, seed: u64) -> Box<dyn crate::Backbone> {
        Box::new(Trace::new(self, streams, seed))
    }
}

impl crate::BodySpec for TraceConfig {
    fn input_shape(&self) -> (usize, usize) {
        (self.tokens(), self.width())
    }

    fn build_body(&self, streams: usize, rng: &mut Rng) -> Box<dyn crate::Body> {
        Box::new(TraceBody::new(self, streams, rng))
    }
}

/// TRACE with its byte front end.
pub type Trace = TokenBackbone<TraceBody>;

impl Trace {
    /// A freshly initialised TRACE for up to `streams` streams.
    pub fn new(config: &TraceConfig, streams: usize, seed: u64) -> Self {
        config.validate().expect("valid TRACE configuration");
        TokenBackbone::with_body("TRACE", &config.shape, streams, seed, |rng| {
            TraceBody::new(config, streams, rng)
        })
    }
}

/// One use of the shared FFN block.
struct Pass {
    ln: LayerNormActs,
    up: LinearActs,
    gelu: Gelu,
    down: LinearActs,
}

/// TRACE without its front end: tokens `[rows x tk x d]` to logits.
pub struct TraceBody {
    tokens: usize,
    width: usize,
    ln1: LayerNorm,
    q_map: Linear,
    kv_map: Linear,
    att: CausalLinearAttention,
    ln2: LayerNorm,
    up: Linear,
    down: Linear,
    passes: Vec<Pass>,
    out: Linear,
    macs: u64,
    rows: usize,
    /// `LN1` of the last token, `[rows x d]`.
    s_last: Vec<f32>,
    /// Packed attention input, `[rows x tk x 3d]` (queries zero except the last token).
    qkv: Vec<f32>,
    /// `h_0 .. h_passes`, each `[rows x d]`.
    h: Vec<Vec<f32>>,
    /// Gradient of the current `h`, `[rows x d]`.
    dh: Vec<f32>,
    /// The query gradient of the last token, `[rows x d]`.
    dq: Vec<f32>,
    /// Key and value gradients, `[rows * tk x 2d]`.
    dkv: Vec<f32>,
    /// Gradient of `LN1`'s output, `[rows * tk x d]`.
    ds: Vec<f32>,
    /// Input gradient, `[rows * tk x d]`.
    dx: Vec<f32>,
}

impl TraceBody {
    /// A freshly initialised body for up to `streams` streams, drawing from `rng`.
    pub fn new(config: &TraceConfig, streams: usize, rng: &mut Rng) -> Self {
        let (tk, d, f) = (
            config.tokens(),
            config.width(),
            usize::from(config.shape.ffn),
        );
        let heads = usize::from(config.shape.heads);
        let q_map = Linear::new(d, d, true, streams, &mut rng.fork());
        let kv_map = Linear::new(d, 2 * d, true, streams * tk, &mut rng.fork());
        let up = Linear::new(d, f, true, streams, &mut rng.fork());
        let down = Linear::new(f, d, true, streams, &mut rng.fork());
        let out = Linear::new(d, 256, true, streams, &mut rng.fork());
        let ln2 = LayerNorm::new(d, true, streams);
        let passes = (0..config.passes)
            .map(|_| Pass {
                ln: ln2.new_acts(streams),
                up: up.new_acts(streams),
                gelu: Gelu::new(streams * f),
                down: down.new_acts(streams),
            })
            .collect();
        TraceBody {
            tokens: tk,
            width: d,
            ln1: LayerNorm::new(d, true, streams * tk),
            q_map,
            kv_map,
            att: CausalLinearAttention::new(tk, heads, d / heads, streams).last_token_only(),
            ln2,
            up,
            down,
            passes,
            out,
            macs: config.forward_macs(),
            rows: 0,
            s_last: vec![0.0; streams * d],
            qkv: vec![0.0; streams * tk * 3 * d],
            h: vec![vec![0.0; streams * d]; usize::from(config.passes) + 1],
            dh: vec![0.0; streams * d],
            dq: vec![0.0; streams * d],
            dkv: vec![0.0; streams * tk * 2 * d],
            ds: vec![0.0; streams * tk * d],
            dx: vec![0.0; streams * tk * d],
        }
    }
}

impl Body for TraceBody {
    fn input_width(&self) -> usize {
        self.tokens * self.width
    }

    fn forward(&mut self, x: &[f32]) -> &[f32] {
        let (tk, d) = (self.tokens, self.width);
        let rows = x.len() / (tk * d);
        self.rows = rows;
        let s = self.ln1.forward(x);
        ops::copy_columns(s, tk * d, (tk - 1) * d, &mut self.s_last, d, 0, d, rows);
        let kv = self.kv_map.forward(s);
        let q = self.q_map.forward(&self.s_last[..rows * d]);
        let qkv = &mut self.qkv[..rows * tk * 3 * d];
        for (r, row) in qkv.chunks_exact_mut(tk * 3 * d).enumerate() {
            for (t, tok) in row.chunks_exact_mut(3 * d).enumerate() {
                if t + 1 == tk {
                    tok[..d].copy_from_slice(&q[r * d..(r + 1) * d]);
                } else {
                    tok[..d].fill(0.0);
                }
                tok[d..].copy_from_slice(&kv[(r * tk + t) * 2 * d..(r * tk + t + 1) * 2 * d]);
            }
        }
        let att = self.att.forward(qkv);
        let h0 = &mut self.h[0][..rows * d];
        for r in 0..rows {
            let x_last = &x[(r * tk + tk - 1) * d..(r * tk + tk) * d];
            ops::add(
                x_last,
                &att[r * d..(r + 1) * d],
                &mut h0[r * d..(r + 1) * d],
            );
        }
        for (p, pass) in self.passes.iter_mut().enumerate() {
            let (done, next) = self.h.split_at_mut(p + 1);
            let hp = &done[p][..rows * d];
            let a = self.ln2.forward_with(&mut pass.ln, hp);
            let u = self.up.forward_with(&mut pass.up, a);
            let g = pass.gelu.forward(u);
            let v = self.down.forward_with(&mut pass.down, g);
            ops::add(hp, v, &mut next[0][..rows * d]);
        }
        let last = self.passes.len();
        self.out.forward(&self.h[last][..rows * d])
    }

    fn backward(&mut self, dlogits: &[f32]) -> &[f32] {
        let (tk, d, rows) = (self.tokens, self.width, self.rows);
        let dh = &mut self.dh[..rows * d];
        dh.copy_from_slice(self.out.backward(dlogits));
        for pass in self.passes.iter_mut().rev() {
            let dg = self.down.backward_with(&mut pass.down, dh);
            let du = pass.gelu.backward(dg);
            let da = self.up.backward_with(&mut pass.up, du);
            let dhp = self.ln2.backward_with(&mut pass.ln, da);
            ops::add_assign(dh, dhp);
        }
        // dh is now the gradient of h_0 = x_last + att.
        let dqkv = self.att.backward(dh);
        let dq = &mut self.dq[..rows * d];
        let dkv = &mut self.dkv[..rows * tk * 2 * d];
        for (r, row) in dqkv.chunks_exact(tk * 3 * d).enumerate() {
            for (t, tok) in row.chunks_exact(3 * d).enumerate() {
                if t + 1 == tk {
                    dq[r * d..(r + 1) * d].copy_from_slice(&tok[..d]);
                }
                dkv[(r * tk + t) * 2 * d..(r * tk + t + 1) * 2 * d].copy_from_slice(&tok[d..]);
            }
        }
        let ds_last = self.q_map.backward(dq);
        let ds = &mut self.ds[..rows * tk * d];
        ds.copy_from_slice(self.kv_map.backward(dkv));
        ops::add_columns(ds_last, d, 0, ds, tk * d, (tk - 1) * d, d, rows);
        let dx = &mut self.dx[..rows * tk * d];
        dx.copy_from_slice(self.ln1.backward(ds));
        ops::add_columns(dh, d, 0, dx, tk * d, (tk - 1) * d, d, rows);
        dx
    }

    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.ln1.visit_params(f);
        self.q_map.visit_params(f);
        self.kv_map.visit_params(f);
        self.ln2.visit_params(f);
        self.up.visit_params(f);
        self.down.visit_params(f);
        self.out.visit_params(f);
    }

    fn reset(&mut self) {}

    fn forward_macs(&self) -> u64 {
        self.macs
    }
}

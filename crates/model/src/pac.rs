//! PAC: the MLP backbone of SEP (doc/SEP-DESIGN.md section 3), as the reference code
//! builds it.
//!
//! Shapes, for `rows` streams, context `L` bytes, embedding `E`, hidden
//! `H = L * E`, FFN width `F`, and `P` pairs:
//!
//! 1. byte ids `[rows x L]` -> embedding `[rows x L x E]` -> sigmoid, read as
//!    `[rows x H]` (oldest byte first);
//! 2. for pair `i` in `0..P` (chunk width `w = E * 2^i`, `H / w` chunks per row):
//!    * batch-ensemble layer: each chunk -> LayerNorm(`w`, affine only for
//!      `i = 0`) = `s` -> `s U_stream + b_stream` (a `w x w` matrix and bias
//!      per stream) -> LayerNorm(`w`) -> GELU -> `(s + y) / 2`;
//!    * shared FFN block: LayerNorm(`H`) = `s` -> Linear `H -> F` -> GELU ->
//!      Linear `F -> H` -> LayerNorm(`H`) -> GELU -> `(s + y) / 2`;
//! 3. Linear `H -> 256` logits.
//!
//! **Step-to-step cache** (`cache = true`, the reference's behaviour): the
//! batch-ensemble layers of pairs `i >= 1` compute only their last chunk; the
//! other chunks of their output are the previous step's output shifted left
//! by one chunk, held per stream and not differentiated (`detach` in the
//! reference). It makes the layer a small recurrence over past steps. The
//! reference fills the cache with a full pass at the first step; here it starts
//! at zero, which changes only the first step of a block.
//!
//! Initialisation as the reference: every weight and bias `N(0, 0.01^2)`,
//! LayerNorms ones and zeros. Each layer draws from its own generator forked, in
//! layer order, from the seed.

use crate::{Backbone, Body, Param};
use sep_nn::{
    BatchEnsembleLinear, Embedding, Gelu, LayerNorm, Linear, Module, Rng, Sigmoid, init, ops,
};

/// PAC hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacConfig {
    /// Context bytes `L` (16 in the paper).
    pub context: u16,
    /// Embedding width `E` per byte (16).
    pub embed: u16,
    /// FFN inner width `F` (4096).
    pub ffn: u16,
    /// Number of (batch-ensemble, FFN) pairs `P` (4); pair `i` uses chunks of
    /// `E * 2^i`, so `2^(P-1)` must divide `L`.
    pub pairs: u8,
    /// Whether the batch-ensemble layers of pairs `i >= 1` use the step-to-step
    /// cache.
    pub cache: bool,
}

impl PacConfig {
    /// The paper's configuration: `L = 16`, `E = 16`, `F = 4096`, 4 pairs, cache on.
    pub const PAPER: PacConfig = PacConfig {
        context: 16,
        embed: 16,
        ffn: 4096,
        pairs: 4,
        cache: true,
    };

    /// `H = L * E`.
    pub fn hidden(&self) -> usize {
        usize::from(self.context) * usize::from(self.embed)
    }

    /// Checks the limits of doc/FORMAT.md.
    pub fn validate(&self) -> Result<(), String> {
        let (l, e, f, p) = (
            usize::from(self.context),
            usize::from(self.embed),
            usize::from(self.ffn),
            self.pairs,
        );
        if !(1..=256).contains(&l) || !(1..=256).contains(&e) || l * e > 4096 {
            return Err(format!(
                "PAC context {l} x embed {e} outside the limits (each 1..=256, product <= 4096)"
            ));
        }
        if !(1..=16384).contains(&f) {
            return Err(format!("PAC ffn {f} outside 1..=16384"));
        }
        if !(1..=8).contains(&p) || l % (1 << (p - 1)) != 0 {
            return Err(format!(
                "PAC pairs {p}: must be 1..=8 with 2^(pairs-1) dividing context {l}"
            ));
        }
        Ok(())
    }

    /// Forward multiply-adds per predicted byte.
    pub fn forward_macs(&self) -> u64 {
        let h = self.hidden() as u64;
        let mut macs = 2 * h * u64::from(self.ffn) * u64::from(self.pairs) + h * 256;
        for i in 0..self.pairs {
            let w = u64::from(self.embed) << i;
            let chunks = if i > 0 && self.cache { 1 } else { h / w };
            macs += chunks * w * w;
        }
        macs
    }

    /// Bytes of parameters (with gradients and Adam moments) and activations
    /// for `streams` streams.
    pub fn memory_bytes(&self, streams: usize) -> u64 {
        let (h, f, s) = (self.hidden() as u64, u64::from(self.ffn), streams as u64);
        let shared = u64::from(self.pairs) * (2 * h * f + f + 5 * h)
            + 256 * h
            + 256
            + 256 * u64::from(self.embed);
        let per_stream: u64 = (0..self.pairs)
            .map(|i| (u64::from(self.embed) << i).pow(2) + (u64::from(self.embed) << i))
            .sum();
        let params = 4 * 4 * (shared + s * per_stream);
        let acts = 4 * s * (u64::from(self.pairs) * (3 * f + 16 * h) + 8 * h + 4 * 256);
        params + acts
    }

    /// One line for listings.
    pub fn describe(&self) -> String {
        format!(
            "pac (context {}, embed {}, hidden {}, ffn {}, pairs {}, cache {})",
            self.context,
            self.embed,
            self.hidden(),
            self.ffn,
            self.pairs,
            if self.cache { "on" } else { "off" }
        )
    }
}

impl crate::BackboneSpec for PacConfig {
    fn id(&self) -> u8 {
        1
    }

    fn name(&self) -> &'static str {
        "pac"
    }

    fn context(&self) -> usize {
        self.context.into()
    }

    fn validate(&self) -> Result<(), String> {
        PacConfig::validate(self)
    }

    fn memory_bytes(&self, streams: usize) -> u64 {
        PacConfig::memory_bytes(self, streams)
    }

    fn forward_macs(&self) -> u64 {
        PacConfig::forward_macs(self)
    }

    fn describe(&self) -> String {
        PacConfig::describe(self)
    }

    fn build(&self, streams: usize, seed: u64) -> Box<dyn crate::Backbone> {
        Box::new(Pac::new(self, streams, seed))
    }
}

impl crate::BodySpec for PacConfig {
    fn input_shape(&self) -> (usize, usize) {
        (1, self.hidden())
    }

    fn build_body(&self, streams: usize, rng: &mut Rng) -> Box<dyn crate::Body> {
        Box::new(PacBody::new(self, streams, rng))
    }
}

/// PAC with its byte front end (embedding and sigmoid).
pub struct Pac {
    context: usize,
    embed: Embedding,
    sigmoid: Sigmoid,
    body: PacBody,
}

impl Pac {
    /// A freshly initialised PAC for up to `streams` streams.
    pub fn new(config: &PacConfig, streams: usize, seed: u64) -> Self {
        config.validate().expect("valid PAC configuration");
        let mut rng = Rng::new(seed);
        let context = usize::from(config.context);
        let mut embed =
            Embedding::new(256, config.embed.into(), streams * context, &mut rng.fork());
        init::normal(&mut embed.weight.value, &mut rng.fork(), 0.0, 0.01);
        let sigmoid = Sigmoid::new(streams * config.hidden());
        let body = PacBody::new(config, streams, &mut rng);
        Pac {
            context,
            embed,
            sigmoid,
            body,
        }
    }
}

impl Backbone for Pac {
    fn context(&self) -> usize {
        self.context
    }

    fn forward(&mut self, ctx: &[u8], rows: usize) -> &[f32] {
        assert_eq!(
            ctx.len(),
            rows * self.context,
            "PAC: context must be [rows x L]"
        );
        let e = self.embed.forward(ctx);
        let x = self.sigmoid.forward(e);
        self.body.forward(x)
    }

    fn backward(&mut self, dlogits: &[f32]) {
        let dx = self.body.backward(dlogits);
        let de = self.sigmoid.backward(dx);
        self.embed.backward(de);
    }

    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.embed.visit_params(f);
        Body::visit_params(&mut self.body, f);
    }

    fn reset(&mut self) {
        self.body.reset();
    }

    fn forward_macs(&self) -> u64 {
        self.body.forward_macs()
    }
}

/// PAC without its front end: `[rows x H]` features to logits.
pub struct PacBody {
    hidden: usize,
    pairs: Vec<(EnsembleBlock, FfnBlock)>,
    out: Linear,
    macs: u64,
}

impl PacBody {
    /// A freshly initialised body for up to `streams` streams, drawing from `rng`.
    pub fn new(config: &PacConfig, streams: usize, rng: &mut Rng) -> Self {
        let h = config.hidden();
        let f = usize::from(config.ffn);
        let pairs = (0..config.pairs)
            .map(|i| {
                let w = usize::from(config.embed) << i;
                let cached = i > 0 && config.cache;
                (
                    EnsembleBlock::new(h, w, i == 0, cached, streams, rng),
                    FfnBlock::new(h, f, streams, rng),
                )
            })
            .collect();
        let out = pac_linear(h, 256, streams, rng);
        PacBody {
            hidden: h,
            pairs,
            out,
            macs: config.forward_macs(),
        }
    }
}

impl Body for PacBody {
    fn input_width(&self) -> usize {
        self.hidden
    }

    fn forward(&mut self, x: &[f32]) -> &[f32] {
        let mut x = x;
        for (be, ffn) in &mut self.pairs {
            let y = be.forward(x);
            x = ffn.forward(y);
        }
        // The last block's output stays in place until the next forward pass.
        self.out.forward_no_save(x)
    }

    fn backward(&mut self, dlogits: &[f32]) -> &[f32] {
        let (_, last) = self.pairs.last().expect("at least one pair");
        let mut d = self.out.backward_with_input(last.output(), dlogits);
        for (be, ffn) in self.pairs.iter_mut().rev() {
            let dy = ffn.backward(d);
            d = be.backward(dy);
        }
        d
    }

    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        for (be, ffn) in &mut self.pairs {
            be.ln1.visit_params(f);
            be.lin.visit_params(f);
            be.ln2.visit_params(f);
            ffn.ln1.visit_params(f);
            ffn.up.visit_params(f);
            ffn.down.visit_params(f);
            ffn.ln2.visit_params(f);
        }
        self.out.visit_params(f);
    }

    fn reset(&mut self) {
        for (be, _) in &mut self.pairs {
            be.cache.fill(0.0);
        }
    }

    fn forward_macs(&self) -> u64 {
        self.macs
    }
}

/// A linear layer initialised as PAC's: weight and bias `N(0, 0.01^2)`.
fn pac_linear(n_in: usize, n_out: usize, max_rows: usize, rng: &mut Rng) -> Linear {
    let mut lin = Linear::new(n_in, n_out, true, max_rows, &mut rng.fork());
    let mut r = rng.fork();
    init::normal(&mut lin.weight.value, &mut r, 0.0, 0.01);
    if let Some(b) = lin.bias.as_mut() {
        init::normal(&mut b.value, &mut r, 0.0, 0.01);
    }
    lin
}

/// One batch-ensemble layer over chunks of width `w`.
struct EnsembleBlock {
    hidden: usize,
    width: usize,
    /// Only the last chunk is computed; the rest comes from `cache`.
    cached: bool,
    ln1: LayerNorm,
    lin: BatchEnsembleLinear,
    ln2: LayerNorm,
    gelu: Gelu,
    /// The last chunk of the input, `[rows x w]` (cached mode).
    chunk_in: Vec<f32>,
    /// `(s + y) / 2`, `[rows x computed width]`.
    fresh: Vec<f32>,
    /// The layer output, `[rows x H]` (cached mode).
    out: Vec<f32>,
    /// Per stream, the previous output without its first chunk, `[streams x (H - w)]`.
    cache: Vec<f32>,
    half: Vec<f32>,
    dskip: Vec<f32>,
    dx: Vec<f32>,
    rows: usize,
}

impl EnsembleBlock {
    fn new(
        hidden: usize,
        width: usize,
        affine_in: bool,
        cached: bool,
        streams: usize,
        rng: &mut Rng,
    ) -> Self {
        let chunks = if cached { 1 } else { hidden / width };
        let computed = chunks * width;
        EnsembleBlock {
            hidden,
            width,
            cached,
            ln1: LayerNorm::new(width, affine_in, streams * chunks),
            lin: BatchEnsembleLinear::new(streams, chunks, width, width, &mut rng.fork()),
            ln2: LayerNorm::new(width, true, streams * chunks),
            gelu: Gelu::new(streams * computed),
            chunk_in: vec![0.0; if cached { streams * width } else { 0 }],
            fresh: vec![0.0; streams * computed],
            out: vec![0.0; if cached { streams * hidden } else { 0 }],
            cache: vec![
                0.0;
                if cached {
                    streams * (hidden - width)
                } else {
                    0
                }
            ],
            half: vec![0.0; streams * computed],
            dskip: vec![0.0; streams * computed],
            dx: vec![0.0; streams * hidden],
            rows: 0,
        }
    }

    fn computed_width(&self) -> usize {
        if self.cached { self.width } else { self.hidden }
    }

    fn forward(&mut self, x: &[f32]) -> &[f32] {
        let (h, w) = (self.hidden, self.width);
        let rows = x.len() / h;
        self.rows = rows;
        let cw = self.computed_width();
        let input: &[f32] = if self.cached {
            ops::copy_columns(x, h, h - w, &mut self.chunk_in, w, 0, w, rows);
            &self.chunk_in[..rows * w]
        } else {
            x
        };
        // Inner layers read each other's outputs in place (kept until the next forward).
        let s = self.ln1.forward(input);
        let y = self.lin.forward_no_save(s);
        let z = self.ln2.forward_no_save(y);
        let g = self.gelu.forward_no_save(z);
        ops::average(s, g, &mut self.fresh[..rows * cw]);
        if !self.cached {
            return &self.fresh[..rows * h];
        }
        let keep = h - w;
        for r in 0..rows {
            let out = &mut self.out[r * h..(r + 1) * h];
            let cache = &mut self.cache[r * keep..(r + 1) * keep];
            out[..keep].copy_from_slice(cache);
            out[keep..].copy_from_slice(&self.fresh[r * w..(r + 1) * w]);
            cache.copy_from_slice(&out[w..]);
        }
        &self.out[..rows * h]
    }

    fn backward(&mut self, dout: &[f32]) -> &[f32] {
        let (h, w, rows) = (self.hidden, self.width, self.rows);
        let cw = self.computed_width();
        let half = &mut self.half[..rows * cw];
        if self.cached {
            // Only the fresh chunk depends on this step's input and weights.
            ops::copy_columns(dout, h, h - w, half, w, 0, w, rows);
            ops::scale_in_place(half, 0.5);
        } else {
            ops::scale(dout, 0.5, half);
        }
        let dz = self.gelu.backward_with_input(self.ln2.output(), half);
        let dy = self.ln2.backward_with_input(self.lin.output(), dz);
        let ds = self.lin.backward_with_input(self.ln1.output(), dy);
        // d(skip) = d(fresh)/2 + what flows back through the matrix.
        let dskip = &mut self.dskip[..rows * cw];
        ops::add(ds, half, dskip);
        let din = self.ln1.backward(dskip);
        let dx = &mut self.dx[..rows * h];
        if self.cached {
            dx.fill(0.0);
            ops::copy_columns(din, w, 0, dx, h, h - w, w, rows);
        } else {
            dx.copy_from_slice(din);
        }
        dx
    }
}

/// One shared FFN block.
struct FfnBlock {
    ln1: LayerNorm,
    up: Linear,
    g1: Gelu,
    down: Linear,
    ln2: LayerNorm,
    g2: Gelu,
    out: Vec<f32>,
    half: Vec<f32>,
    ds: Vec<f32>,
    rows: usize,
    hidden: usize,
}

impl FfnBlock {
    fn new(hidden: usize, ffn: usize, streams: usize, rng: &mut Rng) -> Self {
        FfnBlock {
            ln1: LayerNorm::new(hidden, true, streams),
            up: pac_linear(hidden, ffn, streams, rng),
            g1: Gelu::new(streams * ffn),
            down: pac_linear(ffn, hidden, streams, rng),
            ln2: LayerNorm::new(hidden, true, streams),
            g2: Gelu::new(streams * hidden),
            out: vec![0.0; streams * hidden],
            half: vec![0.0; streams * hidden],
            ds: vec![0.0; streams * hidden],
            rows: 0,
            hidden,
        }
    }

    fn forward(&mut self, x: &[f32]) -> &[f32] {
        let rows = x.len() / self.hidden;
        self.rows = rows;
        // Inner layers read each other's outputs in place (kept until the next forward).
        let s = self.ln1.forward(x);
        let u = self.up.forward_no_save(s);
        let a = self.g1.forward_no_save(u);
        let v = self.down.forward_no_save(a);
        let l = self.ln2.forward_no_save(v);
        let g = self.g2.forward_no_save(l);
        let out = &mut self.out[..rows * self.hidden];
        ops::average(s, g, out);
        out
    }

    /// The output of the last forward pass.
    fn output(&self) -> &[f32] {
        &self.out[..self.rows * self.hidden]
    }

    fn backward(&mut self, dout: &[f32]) -> &[f32] {
        let n = self.rows * self.hidden;
        let half = &mut self.half[..n];
        ops::scale(dout, 0.5, half);
        let dl = self.g2.backward_with_input(self.ln2.output(), half);
        let dv = self.ln2.backward_with_input(self.down.output(), dl);
        let da = self.down.backward_with_input(self.g1.output(), dv);
        let du = self.g1.backward_with_input(self.up.output(), da);
        let ds_up = self.up.backward_with_input(self.ln1.output(), du);
        let ds = &mut self.ds[..n];
        ops::add(ds_up, half, ds);
        self.ln1.backward(ds)
    }
}

//! Small models composed from `sep-nn` layers, shared by the determinism test, the
//! determinism probe (`examples/determinism_probe.rs`) and the benchmark
//! (`benches/train_step.rs`), which include this file with `#[path]`.
//!
//! They double as worked examples of composing layers: a struct of layers, a
//! `Module::visit_params` listing them in a fixed order, a `forward` chaining the
//! returned slices, and a `backward` walking the same chain in reverse.

#![allow(dead_code)]

use sep_nn::{
    Adam, BatchEnsembleLinear, BatchNorm, CausalLinearAttention, CrossEntropy, Embedding, Gelu,
    LayerNorm, Linear, Module, Param, Rng, Sigmoid, SoftmaxAttention, ops,
};

/// FNV-1a 64 over a stream of 32-bit words (little-endian bytes).
pub struct Fnv(pub u64);

impl Fnv {
    pub fn new() -> Self {
        Fnv(0xCBF2_9CE4_8422_2325)
    }
    pub fn word(&mut self, w: u32) {
        for b in w.to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    pub fn floats(&mut self, v: &[f32]) {
        for x in v {
            self.word(x.to_bits());
        }
    }
}

/// The MLP of `DETERMINISM-NOTES.md`, scaled down: `[batch x 256]` floats -> Linear 256 ->
/// GELU -> LayerNorm -> Linear 256 logits -> cross-entropy.
pub struct Mlp {
    pub l1: Linear,
    pub act: Gelu,
    pub ln: LayerNorm,
    pub out: Linear,
    pub ce: CrossEntropy,
}

impl Module for Mlp {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.l1.visit_params(f);
        self.ln.visit_params(f);
        self.out.visit_params(f);
    }
}

impl Mlp {
    pub fn new(d_in: usize, hidden: usize, classes: usize, batch: usize, rng: &mut Rng) -> Self {
        Mlp {
            l1: Linear::new(d_in, hidden, true, batch, rng),
            act: Gelu::new(batch * hidden),
            ln: LayerNorm::new(hidden, true, batch),
            out: Linear::new(hidden, classes, true, batch, rng),
            ce: CrossEntropy::new(classes, batch),
        }
    }

    /// One training step; returns the loss.
    pub fn train_step(&mut self, x: &[f32], targets: &[u8], adam: &mut Adam) -> f32 {
        let h = self.l1.forward(x);
        let h = self.act.forward(h);
        let h = self.ln.forward(h);
        let logits = self.out.forward(h);
        let loss = self.ce.forward(logits, targets);
        let d = self.ce.backward();
        let d = self.out.backward(d);
        let d = self.ln.backward(d);
        let d = self.act.backward(d);
        self.l1.backward(d);
        adam.step(self);
        loss
    }
}

/// The PAC-like MLP of the benchmark: 16 context bytes embedded to 16 dims each (one
/// 256-vector), Linear 256 -> 1024, GELU, Linear 1024 -> 256, LayerNorm, Linear 256 ->
/// 256 logits, cross-entropy.
pub struct PacLike {
    pub emb: Embedding,
    pub l1: Linear,
    pub act: Gelu,
    pub l2: Linear,
    pub ln: LayerNorm,
    pub out: Linear,
    pub ce: CrossEntropy,
}

impl Module for PacLike {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.emb.visit_params(f);
        self.l1.visit_params(f);
        self.l2.visit_params(f);
        self.ln.visit_params(f);
        self.out.visit_params(f);
    }
}

impl PacLike {
    pub const CONTEXT: usize = 16;
    pub const DIM: usize = 16;

    pub fn new(batch: usize, rng: &mut Rng) -> Self {
        let d = Self::CONTEXT * Self::DIM;
        PacLike {
            emb: Embedding::new(256, Self::DIM, batch * Self::CONTEXT, rng),
            l1: Linear::new(d, 1024, true, batch, rng),
            act: Gelu::new(batch * 1024),
            l2: Linear::new(1024, d, true, batch, rng),
            ln: LayerNorm::new(d, true, batch),
            out: Linear::new(d, 256, true, batch, rng),
            ce: CrossEntropy::new(256, batch),
        }
    }

    /// One training step on `contexts = [batch x 16]` bytes; returns the loss.
    pub fn train_step(&mut self, contexts: &[u8], targets: &[u8], adam: &mut Adam) -> f32 {
        let e = self.emb.forward(contexts); // [batch*16 x 16] = [batch x 256]
        let h = self.l1.forward(e);
        let h = self.act.forward(h);
        let h = self.l2.forward(h);
        let h = self.ln.forward(h);
        let logits = self.out.forward(h);
        let loss = self.ce.forward(logits, targets);
        let d = self.ce.backward();
        let d = self.out.backward(d);
        let d = self.ln.backward(d);
        let d = self.l2.backward(d);
        let d = self.act.backward(d);
        let d = self.l1.backward(d);
        self.emb.backward(d);
        adam.step(self);
        loss
    }
}

/// A small model that uses every layer kind, for the determinism probe.
///
/// Per stream (row): `L = 8` context bytes -> Embedding 8 dims -> Sigmoid -> `[batch x 64]`.
/// Columns 0..16 go through LayerNorm (no affine) -> per-stream 16x16 matrix -> GELU and
/// are averaged with their input (a PAC block). The 64-vector is then read as 4 tokens
/// of 16: pre-LN (affine) -> Linear 16 -> 48 (q, k, v) -> causal linear attention (2 heads
/// of 8) + residual; Linear 16 -> 48 -> causal softmax attention (2 heads of 8) ->
/// residual -> BatchNorm over `batch * 4` rows; back to `[batch x 64]`, Linear 64 -> 96,
/// GELU, Linear 96 -> 64, LayerNorm, Linear 64 -> 256 logits, cross-entropy.
pub struct Probe {
    pub emb: Embedding,
    pub sig: Sigmoid,
    pub be_ln: LayerNorm,
    pub be: BatchEnsembleLinear,
    pub be_act: Gelu,
    pub ln_a: LayerNorm,
    pub qkv1: Linear,
    pub lin_att: CausalLinearAttention,
    pub qkv2: Linear,
    pub soft_att: SoftmaxAttention,
    pub bn: BatchNorm,
    pub f1: Linear,
    pub f_act: Gelu,
    pub f2: Linear,
    pub ln_out: LayerNorm,
    pub out: Linear,
    pub ce: CrossEntropy,
    // Glue buffers, allocated once.
    x0: Vec<f32>,
    chunk_out: Vec<f32>,
    r1: Vec<f32>,
    r2: Vec<f32>,
    g0: Vec<f32>,
    g1: Vec<f32>,
    g2: Vec<f32>,
    g3: Vec<f32>,
}

impl Module for Probe {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.emb.visit_params(f);
        self.be_ln.visit_params(f);
        self.be.visit_params(f);
        self.ln_a.visit_params(f);
        self.qkv1.visit_params(f);
        self.qkv2.visit_params(f);
        self.bn.visit_params(f);
        self.f1.visit_params(f);
        self.f2.visit_params(f);
        self.ln_out.visit_params(f);
        self.out.visit_params(f);
    }
}

impl Probe {
    pub const L: usize = 8;
    const E: usize = 8;
    const W: usize = Self::L * Self::E; // 64
    const C: usize = 16; // PAC chunk
    const T: usize = 4; // tokens
    const D: usize = 16; // token width

    pub fn new(batch: usize, rng: &mut Rng) -> Self {
        let (w, c, t, d) = (Self::W, Self::C, Self::T, Self::D);
        let rows = batch * t;
        let mut r = || rng.fork();
        Probe {
            emb: Embedding::new(256, Self::E, batch * Self::L, &mut r()),
            sig: Sigmoid::new(batch * w),
            be_ln: LayerNorm::new(c, false, batch),
            be: BatchEnsembleLinear::new(batch, 1, c, c, &mut r()),
            be_act: Gelu::new(batch * c),
            ln_a: LayerNorm::new(d, true, rows),
            qkv1: Linear::new(d, 3 * d, true, rows, &mut r()),
            lin_att: CausalLinearAttention::new(t, 2, d / 2, batch),
            qkv2: Linear::new(d, 3 * d, true, rows, &mut r()),
            soft_att: SoftmaxAttention::new(t, 2, d / 2, true, batch),
            bn: BatchNorm::new(d, rows),
            f1: Linear::new(w, 96, true, batch, &mut r()),
            f_act: Gelu::new(batch * 96),
            f2: Linear::new(96, w, false, batch, &mut r()),
            ln_out: LayerNorm::new(w, true, batch),
            out: Linear::new(w, 256, true, batch, &mut r()),
            ce: CrossEntropy::new(256, batch),
            x0: vec![0.0; batch * w],
            chunk_out: vec![0.0; batch * c],
            r1: vec![0.0; batch * w],
            r2: vec![0.0; batch * w],
            g0: vec![0.0; batch * w],
            g1: vec![0.0; batch * w],
            g2: vec![0.0; batch * w],
            g3: vec![0.0; batch * c],
        }
    }

    /// Forward to the probabilities for `contexts = [batch x L]`.
    pub fn forward(&mut self, contexts: &[u8]) -> &[f32] {
        let (w, c) = (Self::W, Self::C);
        let batch = contexts.len() / Self::L;
        let e = self.emb.forward(contexts);
        let s = self.sig.forward(e);
        self.x0[..batch * w].copy_from_slice(s);
        // PAC block on columns 0..16.
        let x0 = &mut self.x0[..batch * w];
        ops::copy_columns(s, w, 0, &mut self.g3[..batch * c], c, 0, c, batch);
        let skip = self.be_ln.forward(&self.g3[..batch * c]);
        let h = self.be.forward(skip);
        let h = self.be_act.forward(h);
        ops::average(self.be_ln.output(), h, &mut self.chunk_out[..batch * c]);
        ops::copy_columns(&self.chunk_out[..batch * c], c, 0, x0, w, 0, c, batch);
        // Tokens: [batch x 4 x 16] = [batch*4 x 16].
        let a = self.ln_a.forward(x0);
        let qkv = self.qkv1.forward(a);
        let att = self.lin_att.forward(qkv);
        ops::add(x0, att, &mut self.r1[..batch * w]);
        let qkv = self.qkv2.forward(&self.r1[..batch * w]);
        let att = self.soft_att.forward(qkv);
        ops::add(&self.r1[..batch * w], att, &mut self.r2[..batch * w]);
        let b = self.bn.forward(&self.r2[..batch * w]);
        let h = self.f1.forward(b);
        let h = self.f_act.forward(h);
        let h = self.f2.forward(h);
        let h = self.ln_out.forward(h);
        let logits = self.out.forward(h);
        self.ce.predict(logits)
    }

    /// Loss, backward and one Adam step after [`Probe::forward`].
    pub fn train(&mut self, targets: &[u8], adam: &mut Adam) -> f32 {
        let (w, c) = (Self::W, Self::C);
        let batch = targets.len();
        let n = batch * w;
        let loss = self.ce.loss(targets);
        let d = self.ce.backward();
        let d = self.out.backward(d);
        let d = self.ln_out.backward(d);
        let d = self.f2.backward(d);
        let d = self.f_act.backward(d);
        let d = self.f1.backward(d);
        let d = self.bn.backward(d);
        // r2 = r1 + att2: the gradient reaches r1 both directly and through attention.
        self.g0[..n].copy_from_slice(d);
        let d = self.soft_att.backward(&self.g0[..n]);
        let d = self.qkv2.backward(d);
        ops::add_assign(&mut self.g0[..n], d); // dr1
        // r1 = x0 + att1.
        let d = self.lin_att.backward(&self.g0[..n]);
        let d = self.qkv1.backward(d);
        let d = self.ln_a.backward(d);
        ops::add(&self.g0[..n], d, &mut self.g1[..n]); // dx0
        // x0 columns 0..16 came from the PAC block: y = (skip + h) / 2.
        let g1 = &mut self.g1[..n];
        ops::copy_columns(g1, w, 0, &mut self.g3[..batch * c], c, 0, c, batch);
        ops::scale_in_place(&mut self.g3[..batch * c], 0.5);
        let d = self.be_act.backward(&self.g3[..batch * c]);
        let d = self.be.backward(d);
        ops::add_assign(&mut self.g3[..batch * c], d); // dskip
        let d = self.be_ln.backward(&self.g3[..batch * c]);
        // Columns 0..16 of the sigmoid output get the block's input gradient only.
        self.g2[..n].copy_from_slice(g1);
        ops::copy_columns(d, c, 0, &mut self.g2[..n], w, 0, c, batch);
        let d = self.sig.backward(&self.g2[..n]);
        self.emb.backward(d);
        adam.step(self);
        loss
    }
}

/// Bytes with some structure for the probe: a random walk over a small alphabet with
/// repeats, from the seeded generator.
pub fn synthetic_bytes(n: usize, rng: &mut Rng) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    let mut cur = 97u8;
    for _ in 0..n {
        let r = rng.next_below(16);
        cur = match r {
            0..=7 => cur,
            8..=11 => b'a' + ((cur - b'a' + 1) % 26),
            12..=14 => b'a' + rng.next_below(26) as u8,
            _ => rng.next_below(256) as u8,
        };
        v.push(cur);
    }
    v
}

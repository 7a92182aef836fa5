//! Softmax multi-head self-attention (scaled dot product), causal mask optional.
//!
//! Start with [`SoftmaxAttention::new`]. No parameters: the Q, K, V projections are a
//! [`crate::Linear`] of width `3 * d_model` in front (packed), and the output projection,
//! if the model has one, a [`crate::Linear`] behind.
//!
//! | tensor | shape |
//! |---|---|
//! | input `qkv` | `[batch x tokens x 3*d_model]`, each token row `[q | k | v]`, head `h` at columns `h*dh..(h+1)*dh` of each part |
//! | output | `[batch x tokens x d_model]` (heads concatenated) |
//! | saved probabilities | `[batch x heads x tokens x tokens]` |
//!
//! Per batch element, head and query token `t`, over the keys `u` it may see (`u <= t`
//! when causal, all otherwise):
//!
//! ```text
//! s_u = (q_t . k_u) * scale           scale = 1 / sqrt(dh), rounded to f32 from f64
//! p   = softmax(s)                    masked keys get exactly p = 0
//! out_t = sum_u p_u v_u
//! ```
//!
//! Operation order, per batch element and head, on the head's `[tokens x dh]` blocks
//! gathered from the packed input: `S = Q K^T` ([`sep_kernels::matmul_nt`], each score a
//! `mul_add` chain over `i = 0..dh`), `S *= scale`, masked scores set to `-inf`,
//! `P` = the kernels' row softmax over all `tokens` columns (a masked score contributes
//! exactly 0 to every reduction, so this equals the softmax over the visible keys alone),
//! `O = P V` ([`sep_kernels::matmul`]). Backward: `dP = dO V^T`,
//! `c_t = sum_u P[t,u] dP[t,u]` (a `mul_add` chain over `u` in order),
//! `dS = (P * (dP - c)) * scale`, `dQ = dS K`, `dK = dS^T Q`, `dV = P^T dO`.
//!
//! ```
//! use sep_nn::SoftmaxAttention;
//! let mut att = SoftmaxAttention::new(2, 1, 1, true, 1); // 2 tokens, 1 head of width 1
//! let y = att.forward(&[1.0, 1.0, 3.0, /* token 1 */ 0.0, 1.0, 5.0]);
//! // token 0 sees itself; token 1's query is 0: equal weights on both values
//! assert_eq!(y, &[3.0, 4.0]);
//! ```

/// The attention operator with its activation buffers.
#[derive(Clone, Debug)]
pub struct SoftmaxAttention {
    tokens: usize,
    heads: usize,
    head_dim: usize,
    causal: bool,
    scale: f32,
    max_batch: usize,
    batch: usize,
    qkv: Vec<f32>,
    p: Vec<f32>,
    y: Vec<f32>,
    dqkv: Vec<f32>,
    /// Per-head scratch, `[tokens x dh]` each: Q, K, V, dO (or O), dQ, dK, dV.
    qh: Vec<f32>,
    kh: Vec<f32>,
    vh: Vec<f32>,
    gh: Vec<f32>,
    dqh: Vec<f32>,
    dkh: Vec<f32>,
    dvh: Vec<f32>,
    /// Per-head scratch, `[tokens x tokens]`: scores, then their gradient.
    s: Vec<f32>,
    dp: Vec<f32>,
}

impl SoftmaxAttention {
    /// `heads` heads of width `head_dim` over `tokens` tokens, masked when `causal`, for up
    /// to `max_batch` sequences.
    pub fn new(
        tokens: usize,
        heads: usize,
        head_dim: usize,
        causal: bool,
        max_batch: usize,
    ) -> Self {
        assert!(
            tokens > 0 && heads > 0 && head_dim > 0,
            "SoftmaxAttention: empty shape"
        );
        let d = heads * head_dim;
        SoftmaxAttention {
            tokens,
            heads,
            head_dim,
            causal,
            scale: (1.0 / (head_dim as f64).sqrt()) as f32,
            max_batch,
            batch: 0,
            qkv: vec![0.0; max_batch * tokens * 3 * d],
            p: vec![0.0; max_batch * heads * tokens * tokens],
            y: vec![0.0; max_batch * tokens * d],
            dqkv: vec![0.0; max_batch * tokens * 3 * d],
            qh: vec![0.0; tokens * head_dim],
            kh: vec![0.0; tokens * head_dim],
            vh: vec![0.0; tokens * head_dim],
            gh: vec![0.0; tokens * head_dim],
            dqh: vec![0.0; tokens * head_dim],
            dkh: vec![0.0; tokens * head_dim],
            dvh: vec![0.0; tokens * head_dim],
            s: vec![0.0; tokens * tokens],
            dp: vec![0.0; tokens * tokens],
        }
    }

    /// `heads * head_dim`.
    pub fn d_model(&self) -> usize {
        self.heads * self.head_dim
    }

    /// Forward on `qkv = [batch x tokens x 3*d_model]`; returns `[batch x tokens x d_model]`.
    pub fn forward(&mut self, qkv: &[f32]) -> &[f32] {
        let (tk, h_n, dh) = (self.tokens, self.heads, self.head_dim);
        let d = h_n * dh;
        let batch = crate::rows_of(
            qkv.len(),
            tk * 3 * d,
            self.max_batch,
            "SoftmaxAttention::forward",
        );
        self.batch = batch;
        self.qkv[..qkv.len()].copy_from_slice(qkv);
        for b in 0..batch {
            let rows = &qkv[b * tk * 3 * d..(b + 1) * tk * 3 * d];
            for h in 0..h_n {
                gather(rows, 3 * d, h * dh, dh, &mut self.qh);
                gather(rows, 3 * d, d + h * dh, dh, &mut self.kh);
                gather(rows, 3 * d, 2 * d + h * dh, dh, &mut self.vh);
                sep_kernels::matmul_nt(&self.qh, &self.kh, &mut self.s, tk, dh, tk, false);
                for (t, srow) in self.s.chunks_exact_mut(tk).enumerate() {
                    for (u, v) in srow.iter_mut().enumerate() {
                        *v = if self.causal && u > t {
                            f32::NEG_INFINITY
                        } else {
                            *v * self.scale
                        };
                    }
                }
                let p = &mut self.p[(b * h_n + h) * tk * tk..][..tk * tk];
                sep_kernels::softmax_rows(&self.s, p, tk, tk);
                sep_kernels::matmul(p, &self.vh, &mut self.gh, tk, tk, dh, false);
                scatter(
                    &self.gh,
                    dh,
                    &mut self.y[b * tk * d..(b + 1) * tk * d],
                    d,
                    h * dh,
                );
            }
        }
        &self.y[..batch * tk * d]
    }

    /// Backward for the last forward: `dy = [batch x tokens x d_model]`; returns
    /// `dqkv = [batch x tokens x 3*d_model]`.
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        let (tk, h_n, dh, batch) = (self.tokens, self.heads, self.head_dim, self.batch);
        let d = h_n * dh;
        assert_eq!(
            dy.len(),
            batch * tk * d,
            "SoftmaxAttention::backward: dy must match the last forward"
        );
        for b in 0..batch {
            let rows = &self.qkv[b * tk * 3 * d..(b + 1) * tk * 3 * d];
            let drows = &mut self.dqkv[b * tk * 3 * d..(b + 1) * tk * 3 * d];
            for h in 0..h_n {
                gather(rows, 3 * d, h * dh, dh, &mut self.qh);
                gather(rows, 3 * d, d + h * dh, dh, &mut self.kh);
                gather(rows, 3 * d, 2 * d + h * dh, dh, &mut self.vh);
                gather(
                    &dy[b * tk * d..(b + 1) * tk * d],
                    d,
                    h * dh,
                    dh,
                    &mut self.gh,
                );
                let p = &self.p[(b * h_n + h) * tk * tk..][..tk * tk];
                sep_kernels::matmul_nt(&self.gh, &self.vh, &mut self.dp, tk, dh, tk, false);
                for (prow, dprow) in p.chunks_exact(tk).zip(self.dp.chunks_exact_mut(tk)) {
                    let mut c = 0.0f32;
                    for (&pu, &dpu) in prow.iter().zip(dprow.iter()) {
                        c = pu.mul_add(dpu, c);
                    }
                    for (&pu, dpu) in prow.iter().zip(dprow.iter_mut()) {
                        *dpu = (pu * (*dpu - c)) * self.scale;
                    }
                }
                let ds = &self.dp;
                sep_kernels::matmul(ds, &self.kh, &mut self.dqh, tk, tk, dh, false);
                sep_kernels::matmul_tn(ds, &self.qh, &mut self.dkh, tk, tk, dh, false);
                sep_kernels::matmul_tn(p, &self.gh, &mut self.dvh, tk, tk, dh, false);
                scatter(&self.dqh, dh, drows, 3 * d, h * dh);
                scatter(&self.dkh, dh, drows, 3 * d, d + h * dh);
                scatter(&self.dvh, dh, drows, 3 * d, 2 * d + h * dh);
            }
        }
        &self.dqkv[..batch * tk * 3 * d]
    }

    /// The output of the last forward pass.
    pub fn output(&self) -> &[f32] {
        &self.y[..self.batch * self.tokens * self.d_model()]
    }

    /// The attention probabilities of the last forward, `[batch x heads x tokens x tokens]`
    /// (zeros where masked).
    pub fn probabilities(&self) -> &[f32] {
        &self.p[..self.batch * self.heads * self.tokens * self.tokens]
    }
}

/// Copies the `width` columns starting at `col` of every `stride`-wide row of `src` into
/// the dense `[rows x width]` block `dst`.
fn gather(src: &[f32], stride: usize, col: usize, width: usize, dst: &mut [f32]) {
    for (row, d) in src.chunks_exact(stride).zip(dst.chunks_exact_mut(width)) {
        d.copy_from_slice(&row[col..col + width]);
    }
}

/// The inverse of [`gather`]: writes the dense block `src` into columns `col..col+width`
/// of every `stride`-wide row of `dst`.
fn scatter(src: &[f32], width: usize, dst: &mut [f32], stride: usize, col: usize) {
    for (s, row) in src.chunks_exact(width).zip(dst.chunks_exact_mut(stride)) {
        row[col..col + width].copy_from_slice(s);
    }
}

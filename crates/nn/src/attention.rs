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
//! Operation order: `q_t . k_u` is a `mul_add` chain over `i = 0..dh` from `0.0`; the
//! softmax is the kernels' row softmax over the visible keys only; `out_t[j]` is a
//! `mul_add` chain over `u` in order from `0.0`. Backward: `dp_u = g . v_u`,
//! `ds_u = p_u * (dp_u - sum_u' p_u' dp_u')`, `dq_t = scale * sum_u ds_u k_u`,
//! `dk_u += (scale * ds_u) q_t` and `dv_u += p_u g_t`, accumulated over `t` in order.
//!
//! ```
//! use sep_nn::SoftmaxAttention;
//! let mut att = SoftmaxAttention::new(2, 1, 1, true, 1); // 2 tokens, 1 head of width 1
//! let y = att.forward(&[1.0, 1.0, 3.0, /* token 1 */ 0.0, 1.0, 5.0]);
//! // token 0 sees itself; token 1's query is 0: equal weights on both values
//! assert_eq!(y, &[3.0, 4.0]);
//! ```

use crate::prim;

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
            s: vec![0.0; tokens],
            dp: vec![0.0; tokens],
        }
    }

    /// `heads * head_dim`.
    pub fn d_model(&self) -> usize {
        self.heads * self.head_dim
    }

    /// Number of keys query `t` sees.
    fn visible(&self, t: usize) -> usize {
        if self.causal { t + 1 } else { self.tokens }
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
        let row = |b: usize, t: usize| (b * tk + t) * 3 * d;
        for b in 0..batch {
            for h in 0..h_n {
                for t in 0..tk {
                    let n_u = self.visible(t);
                    let q = &qkv[row(b, t) + h * dh..][..dh];
                    for u in 0..n_u {
                        let k = &qkv[row(b, u) + d + h * dh..][..dh];
                        let mut acc = 0.0f32;
                        for (&qi, &ki) in q.iter().zip(k) {
                            acc = qi.mul_add(ki, acc);
                        }
                        self.s[u] = acc * self.scale;
                    }
                    let p = &mut self.p[((b * h_n + h) * tk + t) * tk..][..tk];
                    prim::softmax_rows(&self.s[..n_u], &mut p[..n_u], n_u);
                    p[n_u..].fill(0.0);
                    let out = &mut self.y[(b * tk + t) * d + h * dh..][..dh];
                    out.fill(0.0);
                    for (u, &pu) in p[..n_u].iter().enumerate() {
                        let v = &qkv[row(b, u) + 2 * d + h * dh..][..dh];
                        for (o, &vj) in out.iter_mut().zip(v) {
                            *o = pu.mul_add(vj, *o);
                        }
                    }
                }
            }
        }
        &self.y[..batch * tk * d]
    }

    /// Backward for the last forward: `dy = [batch x tokens x d_model]`; returns
    /// `dqkv = [batch x tokens x 3*d_model]`.
    // Index loops: each index addresses several packed tensors at once.
    #[allow(clippy::needless_range_loop)]
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        let (tk, h_n, dh, batch) = (self.tokens, self.heads, self.head_dim, self.batch);
        let d = h_n * dh;
        assert_eq!(
            dy.len(),
            batch * tk * d,
            "SoftmaxAttention::backward: dy must match the last forward"
        );
        let row = |b: usize, t: usize| (b * tk + t) * 3 * d;
        self.dqkv[..batch * tk * 3 * d].fill(0.0);
        for b in 0..batch {
            for h in 0..h_n {
                for t in 0..tk {
                    let n_u = self.visible(t);
                    let g = &dy[(b * tk + t) * d + h * dh..][..dh];
                    let p = &self.p[((b * h_n + h) * tk + t) * tk..][..n_u];
                    let mut sum = 0.0f32;
                    for u in 0..n_u {
                        let v = &self.qkv[row(b, u) + 2 * d + h * dh..][..dh];
                        let mut acc = 0.0f32;
                        for (&gj, &vj) in g.iter().zip(v) {
                            acc = gj.mul_add(vj, acc);
                        }
                        self.dp[u] = acc;
                        sum = p[u].mul_add(acc, sum);
                    }
                    for u in 0..n_u {
                        // ds_u, already multiplied by the scale of the scores.
                        self.s[u] = (p[u] * (self.dp[u] - sum)) * self.scale;
                    }
                    // dq_t = sum_u ds_u k_u.
                    let qoff = row(b, t) + h * dh;
                    for i in 0..dh {
                        let mut acc = 0.0f32;
                        for u in 0..n_u {
                            acc = self.s[u].mul_add(self.qkv[row(b, u) + d + h * dh + i], acc);
                        }
                        self.dqkv[qoff + i] = acc;
                    }
                    // dk_u += ds_u q_t; dv_u += p_u g.
                    for u in 0..n_u {
                        let (ds, pu) = (self.s[u], p[u]);
                        let koff = row(b, u) + d + h * dh;
                        let voff = row(b, u) + 2 * d + h * dh;
                        for i in 0..dh {
                            let qi = self.qkv[qoff + i];
                            self.dqkv[koff + i] = ds.mul_add(qi, self.dqkv[koff + i]);
                            self.dqkv[voff + i] = pu.mul_add(g[i], self.dqkv[voff + i]);
                        }
                    }
                }
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

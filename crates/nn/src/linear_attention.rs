//! Causal linear attention with the squared-feature kernel, as TRACE (SLiM-Performer `sqr`).
//!
//! Start with [`CausalLinearAttention::new`]. There are no parameters: the Q, K, V
//! projections are a [`crate::Linear`] of width `3 * d_model` in front (packed), and TRACE
//! has no output projection.
//!
//! | tensor | shape |
//! |---|---|
//! | input `qkv` | `[batch x tokens x 3*d_model]`, each token row `[q | k | v]`, head `h` at columns `h*dh..(h+1)*dh` of each part |
//! | output | `[batch x tokens x d_model]`, or `[batch x d_model]` with [`CausalLinearAttention::last_token_only`] |
//!
//! Formula, per batch element and head, with `phi(x) = x * x` elementwise and
//! `eps = 1e-16` (the reference's; [`CausalLinearAttention::with_eps`] changes it):
//!
//! ```text
//! S_t = S_{t-1} + phi(k_t) v_t^T        (dh x dh, S_{-1} = 0)
//! z_t = z_{t-1} + phi(k_t)              (dh)
//! out_t = (phi(q_t)^T S_t) / (phi(q_t) . z_t + eps)
//!       = sum_{u<=t} (phi(q_t).phi(k_u)) v_u / (sum_{u<=t} phi(q_t).phi(k_u) + eps)
//! ```
//!
//! Operation order (part of the format): `S[i][j] = kf_i.mul_add(v_j, S[i][j])`,
//! `z_i = z_i + kf_i` with `kf_i = k_i * k_i`; `num_j` and `den` are `mul_add` chains over
//! `i = 0..dh` in order starting at `0.0`, with `qf_i = q_i * q_i`; then `den + eps` and
//! `num_j / (den + eps)`. Prefix sums run over tokens in order, so the last token's output
//! is the same bits in both output modes.
//!
//! Backward recomputes the prefix sums (nothing of size `dh x dh` per token is stored),
//! then runs suffix sums `R_t = sum_{u>=t} phi(q_u) dnum_u^T`, `r_t = sum_{u>=t} dden_u phi(q_u)`
//! in reverse token order: `dv_t = R_t^T phi(k_t)`, `dk_t = 2 k_t (R_t v_t + r_t)`,
//! `dq_t = 2 q_t (S_t dnum_t + dden_t z_t)`, where `dnum_t = dout_t / den_t` and
//! `dden_t = -(dout_t . out_t) / den_t`.
//!
//! The all-tokens mode runs these loops directly (fast only in builds with FMA enabled
//! at compile time). The last-token mode, TRACE's, performs the same operations through
//! kernel calls per batch element and head (`S = phi(K)^T V` by
//! [`sep_kernels::matmul_tn`], `z` by [`sep_kernels::sum_cols`], then matrix-vector
//! products), whose documented orders equal the loops' exactly; a test checks the two
//! modes agree bit for bit.
//!
//! ```
//! use sep_nn::CausalLinearAttention;
//! let mut att = CausalLinearAttention::new(2, 1, 2, 1); // 2 tokens, 1 head of 2, batch 1
//! let y = att.forward(&[1.0, 1.0, 1.0, 1.0, 3.0, 5.0, /* token 1 */ 1.0, 1.0, 1.0, 1.0, 7.0, 9.0]);
//! // token 0 attends to itself only; token 1 averages both values equally
//! assert!((y[0] - 3.0).abs() < 1e-6 && (y[2] - 5.0).abs() < 1e-6 && (y[3] - 7.0).abs() < 1e-6);
//! ```

/// The attention operator with its activation buffers.
#[derive(Clone, Debug)]
pub struct CausalLinearAttention {
    tokens: usize,
    heads: usize,
    head_dim: usize,
    eps: f32,
    last_only: bool,
    max_batch: usize,
    batch: usize,
    qkv: Vec<f32>,
    y: Vec<f32>,
    den: Vec<f32>,
    dqkv: Vec<f32>,
    s: Vec<f32>,
    z: Vec<f32>,
    num: Vec<f32>,
    dnum: Vec<f32>,
    dden: Vec<f32>,
    /// Last-token mode scratch: `phi(K)`, `V`, and their gradients, `[tokens x dh]`;
    /// `R`, `[dh x dh]`; `phi(q)`, `[dh]`.
    kf: Vec<f32>,
    vh: Vec<f32>,
    dkf: Vec<f32>,
    dvh: Vec<f32>,
    r: Vec<f32>,
    qf: Vec<f32>,
}

impl CausalLinearAttention {
    /// `heads` heads of width `head_dim` over `tokens` tokens, for up to `max_batch`
    /// sequences; every token's output is computed.
    pub fn new(tokens: usize, heads: usize, head_dim: usize, max_batch: usize) -> Self {
        assert!(
            tokens > 0 && heads > 0 && head_dim > 0,
            "CausalLinearAttention: empty shape"
        );
        let d = heads * head_dim;
        CausalLinearAttention {
            tokens,
            heads,
            head_dim,
            eps: 1e-16,
            last_only: false,
            max_batch,
            batch: 0,
            qkv: vec![0.0; max_batch * tokens * 3 * d],
            y: vec![0.0; max_batch * tokens * d],
            den: vec![0.0; max_batch * tokens * heads],
            dqkv: vec![0.0; max_batch * tokens * 3 * d],
            s: vec![0.0; head_dim * head_dim],
            z: vec![0.0; head_dim],
            num: vec![0.0; head_dim],
            dnum: vec![0.0; tokens * head_dim],
            dden: vec![0.0; tokens],
            kf: vec![0.0; tokens * head_dim],
            vh: vec![0.0; tokens * head_dim],
            dkf: vec![0.0; tokens * head_dim],
            dvh: vec![0.0; tokens * head_dim],
            r: vec![0.0; head_dim * head_dim],
            qf: vec![0.0; head_dim],
        }
    }

    /// Sets the denominator's `eps` (default `1e-16`).
    pub fn with_eps(mut self, eps: f32) -> Self {
        self.eps = eps;
        self
    }

    /// Computes only the last token's output (`[batch x d_model]`), which is all TRACE
    /// needs; its bits equal the last row of the all-tokens mode.
    pub fn last_token_only(mut self) -> Self {
        self.last_only = true;
        self
    }

    /// `heads * head_dim`.
    pub fn d_model(&self) -> usize {
        self.heads * self.head_dim
    }

    fn out_tokens(&self) -> usize {
        if self.last_only { 1 } else { self.tokens }
    }

    /// Forward on `qkv = [batch x tokens x 3*d_model]`.
    pub fn forward(&mut self, qkv: &[f32]) -> &[f32] {
        let (tk, h_n, dh) = (self.tokens, self.heads, self.head_dim);
        let d = h_n * dh;
        let batch = crate::rows_of(
            qkv.len(),
            tk * 3 * d,
            self.max_batch,
            "CausalLinearAttention::forward",
        );
        self.batch = batch;
        self.qkv[..qkv.len()].copy_from_slice(qkv);
        if self.last_only {
            self.forward_last();
            return &self.y[..batch * d];
        }
        let to_n = self.out_tokens();
        for b in 0..batch {
            for h in 0..h_n {
                self.s.fill(0.0);
                self.z.fill(0.0);
                for t in 0..tk {
                    let row = &qkv[(b * tk + t) * 3 * d..(b * tk + t + 1) * 3 * d];
                    let q = &row[h * dh..(h + 1) * dh];
                    let k = &row[d + h * dh..d + (h + 1) * dh];
                    let v = &row[2 * d + h * dh..2 * d + (h + 1) * dh];
                    accumulate_kv(&mut self.s, &mut self.z, k, v);
                    let Some(to) = out_index(self.last_only, tk, t) else {
                        continue;
                    };
                    let den = query(&self.s, &self.z, q, &mut self.num) + self.eps;
                    let out = &mut self.y[(b * to_n + to) * d + h * dh..][..dh];
                    for (o, &n) in out.iter_mut().zip(&self.num) {
                        *o = n / den;
                    }
                    self.den[(b * to_n + to) * h_n + h] = den;
                }
            }
        }
        &self.y[..batch * to_n * d]
    }

    /// Backward for the last forward: `dy` shaped like the output; returns
    /// `dqkv = [batch x tokens x 3*d_model]`.
    pub fn backward(&mut self, dy: &[f32]) -> &[f32] {
        let (tk, h_n, dh, batch) = (self.tokens, self.heads, self.head_dim, self.batch);
        let d = h_n * dh;
        let to_n = self.out_tokens();
        assert_eq!(
            dy.len(),
            batch * to_n * d,
            "CausalLinearAttention::backward: dy must match the last output"
        );
        if self.last_only {
            self.backward_last(dy);
            return &self.dqkv[..batch * tk * 3 * d];
        }
        for b in 0..batch {
            for h in 0..h_n {
                // Pass 1, token order: recompute S_t, z_t; dq_t, dnum_t, dden_t.
                self.s.fill(0.0);
                self.z.fill(0.0);
                for t in 0..tk {
                    let base = (b * tk + t) * 3 * d;
                    let row = &self.qkv[base..base + 3 * d];
                    let q = &row[h * dh..(h + 1) * dh];
                    let k = &row[d + h * dh..d + (h + 1) * dh];
                    let v = &row[2 * d + h * dh..2 * d + (h + 1) * dh];
                    accumulate_kv(&mut self.s, &mut self.z, k, v);
                    let dq = &mut self.dqkv[base + h * dh..base + (h + 1) * dh];
                    let Some(to) = out_index(self.last_only, tk, t) else {
                        dq.fill(0.0);
                        continue;
                    };
                    let g = &dy[(b * to_n + to) * d + h * dh..][..dh];
                    let out = &self.y[(b * to_n + to) * d + h * dh..][..dh];
                    let den = self.den[(b * to_n + to) * h_n + h];
                    let dnum = &mut self.dnum[t * dh..(t + 1) * dh];
                    for (dn, &gj) in dnum.iter_mut().zip(g) {
                        *dn = gj / den;
                    }
                    let mut go = 0.0f32;
                    for (&gj, &oj) in g.iter().zip(out) {
                        go = gj.mul_add(oj, go);
                    }
                    let dden = -go / den;
                    self.dden[t] = dden;
                    for i in 0..dh {
                        let srow = &self.s[i * dh..(i + 1) * dh];
                        let mut acc = 0.0f32;
                        for (&dn, &sij) in dnum.iter().zip(srow) {
                            acc = dn.mul_add(sij, acc);
                        }
                        acc = dden.mul_add(self.z[i], acc);
                        dq[i] = (2.0 * q[i]) * acc;
                    }
                }
                // Pass 2, reverse token order: suffix sums R, r; dk_t, dv_t.
                let (r_mat, r_vec) = (&mut self.s, &mut self.z);
                r_mat.fill(0.0);
                r_vec.fill(0.0);
                for t in (0..tk).rev() {
                    let base = (b * tk + t) * 3 * d;
                    if out_index(self.last_only, tk, t).is_some() {
                        let q = &self.qkv[base + h * dh..base + (h + 1) * dh];
                        let dnum = &self.dnum[t * dh..(t + 1) * dh];
                        let dden = self.dden[t];
                        for i in 0..dh {
                            let a = q[i] * q[i];
                            for (rij, &dn) in r_mat[i * dh..(i + 1) * dh].iter_mut().zip(dnum) {
                                *rij = a.mul_add(dn, *rij);
                            }
                            r_vec[i] = dden.mul_add(a, r_vec[i]);
                        }
                    }
                    let (head, tail) = self.dqkv[base..base + 3 * d].split_at_mut(2 * d);
                    let dk = &mut head[d + h * dh..d + (h + 1) * dh];
                    let dv = &mut tail[h * dh..(h + 1) * dh];
                    let k = &self.qkv[base + d + h * dh..base + d + (h + 1) * dh];
                    let v = &self.qkv[base + 2 * d + h * dh..base + 2 * d + (h + 1) * dh];
                    dv.fill(0.0);
                    for i in 0..dh {
                        let rrow = &r_mat[i * dh..(i + 1) * dh];
                        let mut acc = 0.0f32;
                        for (&rij, &vj) in rrow.iter().zip(v) {
                            acc = rij.mul_add(vj, acc);
                        }
                        dk[i] = (2.0 * k[i]) * (acc + r_vec[i]);
                        let kf = k[i] * k[i];
                        for (dvj, &rij) in dv.iter_mut().zip(rrow) {
                            *dvj = kf.mul_add(rij, *dvj);
                        }
                    }
                }
            }
        }
        &self.dqkv[..batch * tk * 3 * d]
    }

    /// Loads head `h` of sequence `b` for the last-token mode: `kf = phi(K)`, `vh = V`,
    /// `qf = phi(q_last)`, and `S = kf^T V`, `z` = column sums of `kf`. The kernels'
    /// orders (`S[i][j]` a `mul_add` chain over tokens from 0, `z_i` a sum over tokens
    /// from 0) are exactly the prefix sums of the all-tokens mode at the last token.
    fn load_last(&mut self, b: usize, h: usize) {
        let (tk, dh) = (self.tokens, self.head_dim);
        let d = self.heads * dh;
        let rows = &self.qkv[b * tk * 3 * d..(b + 1) * tk * 3 * d];
        for ((row, kf), v) in rows
            .chunks_exact(3 * d)
            .zip(self.kf.chunks_exact_mut(dh))
            .zip(self.vh.chunks_exact_mut(dh))
        {
            for (f, &k) in kf.iter_mut().zip(&row[d + h * dh..d + (h + 1) * dh]) {
                *f = k * k;
            }
            v.copy_from_slice(&row[2 * d + h * dh..2 * d + (h + 1) * dh]);
        }
        let q = &rows[(tk - 1) * 3 * d + h * dh..][..dh];
        for (f, &qi) in self.qf.iter_mut().zip(q) {
            *f = qi * qi;
        }
        sep_kernels::matmul_tn(&self.kf, &self.vh, &mut self.s, dh, tk, dh, false);
        sep_kernels::sum_cols(&self.kf, &mut self.z, tk, dh, false);
    }

    /// Last-token forward through kernel calls, bit for bit the all-tokens mode's last row.
    fn forward_last(&mut self) {
        let (h_n, dh) = (self.heads, self.head_dim);
        let d = h_n * dh;
        for b in 0..self.batch {
            for h in 0..h_n {
                self.load_last(b, h);
                sep_kernels::matmul(&self.qf, &self.s, &mut self.num, 1, dh, dh, false);
                let mut den = 0.0f32;
                for (&qf, &z) in self.qf.iter().zip(&self.z) {
                    den = qf.mul_add(z, den);
                }
                let den = den + self.eps;
                for (o, &n) in self.y[b * d + h * dh..][..dh].iter_mut().zip(&self.num) {
                    *o = n / den;
                }
                self.den[b * h_n + h] = den;
            }
        }
    }

    /// Last-token backward through kernel calls (the same operations as the all-tokens
    /// backward with a zero gradient on every other token).
    // Index loops: each index addresses several packed tensors at once.
    #[allow(clippy::needless_range_loop)]
    fn backward_last(&mut self, dy: &[f32]) {
        let (tk, h_n, dh) = (self.tokens, self.heads, self.head_dim);
        let d = h_n * dh;
        for b in 0..self.batch {
            for h in 0..h_n {
                self.load_last(b, h);
                let g = &dy[b * d + h * dh..][..dh];
                let out = &self.y[b * d + h * dh..][..dh];
                let den = self.den[b * h_n + h];
                let dnum = &mut self.dnum[..dh];
                for (dn, &gj) in dnum.iter_mut().zip(g) {
                    *dn = gj / den;
                }
                let mut go = 0.0f32;
                for (&gj, &oj) in g.iter().zip(out) {
                    go = gj.mul_add(oj, go);
                }
                let dden = -go / den;
                // dq = 2 q (S dnum + dden z), only for the last token.
                sep_kernels::matmul_nt(dnum, &self.s, &mut self.num, 1, dh, dh, false);
                let base = b * tk * 3 * d;
                for t in 0..tk - 1 {
                    self.dqkv[base + t * 3 * d + h * dh..][..dh].fill(0.0);
                }
                let qoff = base + (tk - 1) * 3 * d + h * dh;
                for i in 0..dh {
                    let acc = dden.mul_add(self.z[i], self.num[i]);
                    self.dqkv[qoff + i] = (2.0 * self.qkv[qoff + i]) * acc;
                }
                // R = phi(q) dnum^T, r = dden phi(q); dphi(K) = V R^T + r, dV = phi(K) R.
                sep_kernels::matmul(&self.qf, dnum, &mut self.r, dh, 1, dh, false);
                sep_kernels::matmul_nt(&self.vh, &self.r, &mut self.dkf, tk, dh, dh, false);
                sep_kernels::matmul(&self.kf, &self.r, &mut self.dvh, tk, dh, dh, false);
                for t in 0..tk {
                    let row = base + t * 3 * d;
                    let dkf = &self.dkf[t * dh..(t + 1) * dh];
                    for i in 0..dh {
                        let r_i = dden.mul_add(self.qf[i], 0.0);
                        let k = self.qkv[row + d + h * dh + i];
                        self.dqkv[row + d + h * dh + i] = (2.0 * k) * (dkf[i] + r_i);
                    }
                    self.dqkv[row + 2 * d + h * dh..][..dh]
                        .copy_from_slice(&self.dvh[t * dh..(t + 1) * dh]);
                }
            }
        }
    }

    /// The output of the last forward pass.
    pub fn output(&self) -> &[f32] {
        &self.y[..self.batch * self.out_tokens() * self.d_model()]
    }
}

/// `S += phi(k) v^T`, `z += phi(k)`.
fn accumulate_kv(s: &mut [f32], z: &mut [f32], k: &[f32], v: &[f32]) {
    let dh = k.len();
    for i in 0..dh {
        let kf = k[i] * k[i];
        for (sij, &vj) in s[i * dh..(i + 1) * dh].iter_mut().zip(v) {
            *sij = kf.mul_add(vj, *sij);
        }
        z[i] += kf;
    }
}

/// `num = phi(q)^T S`; returns `phi(q) . z` (without eps).
fn query(s: &[f32], z: &[f32], q: &[f32], num: &mut [f32]) -> f32 {
    let dh = q.len();
    num.fill(0.0);
    let mut den = 0.0f32;
    for i in 0..dh {
        let qf = q[i] * q[i];
        for (nj, &sij) in num.iter_mut().zip(&s[i * dh..(i + 1) * dh]) {
            *nj = qf.mul_add(sij, *nj);
        }
        den = qf.mul_add(z[i], den);
    }
    den
}

/// Index of token `t`'s output row, or `None` when it is not computed.
fn out_index(last_only: bool, tokens: usize, t: usize) -> Option<usize> {
    if !last_only {
        Some(t)
    } else if t + 1 == tokens {
        Some(0)
    } else {
        None
    }
}

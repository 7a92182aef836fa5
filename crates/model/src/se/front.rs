//! The SE front end: bytes to `T` tokens of `F = P * D` features (see the module
//! documentation of [`crate::se`] for the formulas and the operation order).

use super::config::{Adaptive, SeBody, SeConfig};
use crate::Param;
use sep_nn::{Embedding, Gelu, Module, Rng, Sigmoid, init, ops, sinusoidal_positions};

/// Patch expansion, dimension fusion, gates and the patch-axis map, with their buffers.
pub(crate) struct SeFront {
    l: usize,
    p: usize,
    s: usize,
    o: usize,
    n: usize,
    d: usize,
    /// Learned features per byte (`D`, or `D / 2` with positions).
    de: usize,
    t: usize,
    f: usize,
    streams: usize,
    adaptive: Adaptive,
    per_element: bool,
    embedding: Embedding,
    /// `[L x D/2]` position features, when enabled.
    positions: Option<Vec<f32>>,
    /// Pre-activation features `[streams x L x D]` (with positions only).
    x: Vec<f32>,
    sigmoid: Sigmoid,
    /// Activated features, position-major: `[L x rows*D]`.
    e_pm: Vec<f32>,
    /// The patch-axis map `W = [T x N]` and its bias `[T]`.
    weight: Param,
    bias: Param,
    /// Scores: `[N]`, or `[streams x N x F]` per element; none when adaptive is off.
    mask: Option<Param>,
    rows: usize,
    /// Patches used this step, in increasing order.
    kept: Vec<usize>,
    /// Per patch: `u = sigmoid(m)` (or 1 when forced) and the gate value.
    u: Vec<f32>,
    gate: Vec<f32>,
    /// Per element (soft, per-element mask): `u`, gate and gate gradient,
    /// `[streams x N x F]`.
    el_u: Vec<f32>,
    el_g: Vec<f32>,
    el_dg: Vec<f32>,
    /// Effective map over the kept patches, `[T x kept]`.
    w_eff: Vec<f32>,
    /// Gathered (and, per element, gated) patch rows: `P` blocks of `[kept x rows*D]`.
    gathered: Vec<f32>,
    /// Map outputs, `P` blocks of `[T x rows*D]`.
    y: Vec<f32>,
    /// Tokens before GELU, `[rows x T x F]`.
    token: Vec<f32>,
    gelu: Gelu,
    dy: Vec<f32>,
    bsum: Vec<f32>,
    m_acc: Vec<f32>,
    db: Vec<f32>,
    dgate: Vec<f32>,
    de_pm: Vec<f32>,
    de_rm: Vec<f32>,
    demb: Vec<f32>,
}

impl SeFront {
    /// A freshly initialised front end for up to `streams` streams, drawing from `rng`
    /// in the order: embedding, embedding re-initialisation (PAC bodies), map, mask.
    pub(crate) fn new(c: &SeConfig, streams: usize, rng: &mut Rng) -> Self {
        let (l, p, s, d, t) = (
            usize::from(c.context),
            usize::from(c.patch),
            usize::from(c.stride),
            usize::from(c.embed),
            usize::from(c.tokens),
        );
        let (n, o, f) = (c.patches(), c.offset(), c.features());
        let de = if c.positions { d / 2 } else { d };
        let pac = matches!(c.body, SeBody::Pac(_));
        let mut embedding = Embedding::new(256, de, streams * l, &mut rng.fork());
        let mut r = rng.fork();
        if pac {
            init::normal(&mut embedding.weight.value, &mut r, 0.0, 0.01);
        }
        let mut r = rng.fork();
        let (weight, bias) = if c.newest_init {
            let step = p.div_ceil(s);
            let mut w = Param::zeros("se.map.weight", t * n);
            for tt in 0..t {
                if let Some(pn) = (n - 1).checked_sub((t - 1 - tt) * step) {
                    w.value[tt * n + pn] = 1.0;
                }
            }
            (w, Param::zeros("se.map.bias", t))
        } else if pac {
            let w = Param::new_with("se.map.weight", t * n, |w| {
                init::normal(w, &mut r, 0.0, 0.01)
            });
            let b = Param::new_with("se.map.bias", t, |b| init::normal(b, &mut r, 0.0, 0.01));
            (w, b)
        } else {
            let std = (2.0 / n as f64).sqrt();
            let w = Param::new_with("se.map.weight", t * n, |w| {
                init::normal(w, &mut r, 0.0, std)
            });
            (w, Param::zeros("se.map.bias", t))
        };
        let mut r = rng.fork();
        let per_element = matches!(
            c.adaptive,
            Adaptive::Soft {
                per_element: true,
                ..
            }
        );
        let mask = match c.adaptive {
            Adaptive::Off => None,
            Adaptive::Soft {
                per_element: false, ..
            } => Some(Param::new_with("se.mask", n, |m| {
                init::xavier_normal(m, &mut r, n, 1, 1.0)
            })),
            Adaptive::Soft { .. } => Some(Param::new_with("se.mask", streams * n * f, |m| {
                init::xavier_normal(m, &mut r, n * f, streams * f, 1.0)
            })),
            Adaptive::Hard { .. } => Some(Param::new_with("se.mask", n, |m| m.fill(1.0))),
        };
        let positions = c.positions.then(|| {
            let mut pos = vec![0.0; l * de];
            sinusoidal_positions(&mut pos, l, de);
            pos
        });
        let gathers = s > 1 || per_element || matches!(c.adaptive, Adaptive::Hard { .. });
        let el = if per_element { streams * n * f } else { 0 };
        let sd = streams * d;
        SeFront {
            l,
            p,
            s,
            o,
            n,
            d,
            de,
            t,
            f,
            streams,
            adaptive: c.adaptive,
            per_element,
            embedding,
            x: vec![0.0; if c.positions { streams * l * d } else { 0 }],
            positions,
            sigmoid: Sigmoid::new(streams * l * d),
            e_pm: vec![0.0; l * sd],
            weight,
            bias,
            mask,
            rows: 0,
            kept: Vec::with_capacity(n),
            u: vec![1.0; n],
            gate: vec![1.0; n],
            el_u: vec![0.0; el],
            el_g: vec![0.0; el],
            el_dg: vec![0.0; el],
            w_eff: vec![0.0; t * n],
            gathered: vec![0.0; if gathers { p * n * sd } else { 0 }],
            y: vec![0.0; p * t * sd],
            token: vec![0.0; streams * t * f],
            gelu: Gelu::new(streams * t * f),
            dy: vec![0.0; t * sd],
            bsum: vec![0.0; t],
            m_acc: vec![0.0; t * n],
            db: vec![0.0; n * sd],
            dgate: vec![0.0; n],
            de_pm: vec![0.0; l * sd],
            de_rm: vec![0.0; streams * l * d],
            demb: vec![0.0; if c.positions { streams * l * de } else { 0 }],
        }
    }

    /// Patches used by the last forward pass.
    pub(crate) fn kept(&self) -> usize {
        self.kept.len()
    }

    /// Patches in all.
    pub(crate) fn patches(&self) -> usize {
        self.n
    }

    /// Whether every patch's rows for byte `j` form one contiguous block of `e_pm`.
    fn contiguous(&self) -> bool {
        self.s == 1 && self.kept.len() == self.n && !self.per_element
    }

    /// Gate values, the kept set and the effective map for `rows` rows.
    fn prepare_gates(&mut self, rows: usize) {
        let (n, t, f) = (self.n, self.t, self.f);
        self.kept.clear();
        match self.adaptive {
            Adaptive::Off => {
                self.kept.extend(0..n);
                self.w_eff.copy_from_slice(&self.weight.value);
            }
            Adaptive::Soft {
                per_element: false,
                threshold,
                slope,
                ..
            } => {
                let m = &self.mask.as_ref().expect("soft mask").value;
                for (i, &mi) in m.iter().enumerate() {
                    let u = if self.adaptive.forced(i) {
                        1.0
                    } else {
                        sep_kernels::sigmoid(mi)
                    };
                    self.u[i] = u;
                    self.gate[i] = sep_kernels::sigmoid((u - threshold) * slope);
                }
                self.kept.extend(0..n);
                for (we, w) in self
                    .w_eff
                    .chunks_exact_mut(n)
                    .zip(self.weight.value.chunks_exact(n))
                {
                    ops::mul(w, &self.gate, we);
                }
            }
            Adaptive::Soft {
                threshold, slope, ..
            } => {
                let m = &self.mask.as_ref().expect("soft mask").value;
                let len = rows * n * f;
                let (u, g) = (&mut self.el_u[..len], &mut self.el_g[..len]);
                sep_kernels::sigmoid_slice(&m[..len], u);
                for (i, patch) in u.chunks_exact_mut(f).enumerate() {
                    if self.adaptive.forced(i % n) {
                        patch.fill(1.0);
                    }
                }
                for (gv, &uv) in g.iter_mut().zip(u.iter()) {
                    *gv = (uv - threshold) * slope;
                }
                sep_kernels::sigmoid_inplace(g);
                self.kept.extend(0..n);
                self.w_eff.copy_from_slice(&self.weight.value);
            }
            Adaptive::Hard { threshold, .. } => {
                let m = &self.mask.as_ref().expect("hard mask").value;
                for (i, &mi) in m.iter().enumerate() {
                    if self.adaptive.forced(i) {
                        self.gate[i] = 1.0;
                        self.kept.push(i);
                    } else {
                        let u = sep_kernels::sigmoid(mi);
                        self.u[i] = u;
                        if u >= threshold {
                            self.gate[i] = u;
                            self.kept.push(i);
                        }
                    }
                }
                let kn = self.kept.len();
                for tt in 0..t {
                    for (ki, &i) in self.kept.iter().enumerate() {
                        self.w_eff[tt * kn + ki] = self.weight.value[tt * n + i] * self.gate[i];
                    }
                }
            }
        }
    }

    /// Tokens after GELU, `[rows x T x F]`, for the contexts `ctx = [rows x L]`.
    pub(crate) fn forward(&mut self, ctx: &[u8], rows: usize) -> &[f32] {
        assert!(rows <= self.streams, "SE: more rows than streams");
        self.rows = rows;
        self.prepare_gates(rows);
        let contiguous = self.contiguous();
        let Self {
            l,
            p,
            s,
            o,
            n,
            d,
            de,
            t,
            f,
            streams,
            per_element,
            ref mut embedding,
            ref positions,
            ref mut x,
            ref mut sigmoid,
            ref mut e_pm,
            ref bias,
            ref kept,
            ref el_g,
            ref w_eff,
            ref mut gathered,
            ref mut y,
            ref mut token,
            ref mut gelu,
            ..
        } = *self;
        let emb = embedding.forward(ctx);
        let pre: &[f32] = match positions {
            Some(pos) => {
                let x = &mut x[..rows * l * d];
                for (i, (xb, em)) in x.chunks_exact_mut(d).zip(emb.chunks_exact(de)).enumerate() {
                    let at = i % l;
                    xb[..de].copy_from_slice(em);
                    xb[de..].copy_from_slice(&pos[at * de..(at + 1) * de]);
                }
                x
            }
            None => emb,
        };
        let e = sigmoid.forward(pre);
        let rd = rows * d;
        for r in 0..rows {
            for i in 0..l {
                e_pm[i * rd + r * d..][..d].copy_from_slice(&e[(r * l + i) * d..][..d]);
            }
        }
        let kn = kept.len();
        let sd = streams * d;
        for j in 0..p {
            let yj = &mut y[j * t * rd..(j + 1) * t * rd];
            for (row, &b) in yj.chunks_exact_mut(rd).zip(&bias.value) {
                row.fill(b);
            }
            if kn == 0 {
                continue;
            }
            let bj: &[f32] = if contiguous {
                &e_pm[(o + j) * rd..(o + j + n) * rd]
            } else {
                let buf = &mut gathered[j * n * sd..j * n * sd + kn * rd];
                for (ki, &pn) in kept.iter().enumerate() {
                    let pos = o + pn * s + j;
                    let dst = &mut buf[ki * rd..(ki + 1) * rd];
                    dst.copy_from_slice(&e_pm[pos * rd..(pos + 1) * rd]);
                    if per_element {
                        for (r, v) in dst.chunks_exact_mut(d).enumerate() {
                            let at = (r * n + pn) * f + j * d;
                            for (vk, &gk) in v.iter_mut().zip(&el_g[at..at + d]) {
                                *vk *= gk;
                            }
                        }
                    }
                }
                buf
            };
            sep_kernels::matmul(&w_eff[..t * kn], bj, yj, t, kn, rd, true);
        }
        let token = &mut token[..rows * t * f];
        for r in 0..rows {
            for tt in 0..t {
                for j in 0..p {
                    token[(r * t + tt) * f + j * d..][..d]
                        .copy_from_slice(&y[(j * t + tt) * rd + r * d..][..d]);
                }
            }
        }
        gelu.forward(token)
    }

    /// Accumulates every parameter gradient from `dout = [rows x T x F]`.
    pub(crate) fn backward(&mut self, dout: &[f32]) {
        let contiguous = self.contiguous();
        let Self {
            l,
            p,
            s,
            o,
            n,
            d,
            de,
            t,
            f,
            streams,
            adaptive,
            per_element,
            ref mut embedding,
            ref positions,
            ref mut sigmoid,
            ref e_pm,
            ref mut weight,
            ref mut bias,
            ref mut mask,
            rows,
            ref kept,
            ref u,
            ref gate,
            ref el_u,
            ref el_g,
            ref mut el_dg,
            ref w_eff,
            ref gathered,
            ref mut gelu,
            ref mut dy,
            ref mut bsum,
            ref mut m_acc,
            ref mut db,
            ref mut dgate,
            ref mut de_pm,
            ref mut de_rm,
            ref mut demb,
            ..
        } = *self;
        let dtok = gelu.backward(dout);
        let (rd, sd, kn) = (rows * d, streams * d, kept.len());
        de_pm[..l * rd].fill(0.0);
        for j in 0..p {
            let dyj = &mut dy[..t * rd];
            for r in 0..rows {
                for tt in 0..t {
                    dyj[tt * rd + r * d..][..d]
                        .copy_from_slice(&dtok[(r * t + tt) * f + j * d..][..d]);
                }
            }
            sep_kernels::sum_rows(dyj, bsum, t, rd);
            ops::add_assign(&mut bias.grad, bsum);
            if kn == 0 {
                continue;
            }
            let bj: &[f32] = if contiguous {
                &e_pm[(o + j) * rd..(o + j + n) * rd]
            } else {
                &gathered[j * n * sd..j * n * sd + kn * rd]
            };
            sep_kernels::matmul_nt(dyj, bj, &mut m_acc[..t * kn], t, rd, kn, j > 0);
            let dbj = &mut db[..kn * rd];
            sep_kernels::matmul_tn(&w_eff[..t * kn], dyj, dbj, kn, t, rd, false);
            for (ki, &pn) in kept.iter().enumerate() {
                let pos = o + pn * s + j;
                let dbk = &mut dbj[ki * rd..(ki + 1) * rd];
                if per_element {
                    let ek = &e_pm[pos * rd..(pos + 1) * rd];
                    for (r, (dv, ev)) in dbk.chunks_exact_mut(d).zip(ek.chunks_exact(d)).enumerate()
                    {
                        let at = (r * n + pn) * f + j * d;
                        for ((dk, &evk), (dgk, &gk)) in dv
                            .iter_mut()
                            .zip(ev)
                            .zip(el_dg[at..at + d].iter_mut().zip(&el_g[at..at + d]))
                        {
                            *dgk = *dk * evk;
                            *dk *= gk;
                        }
                    }
                }
                ops::add_assign(&mut de_pm[pos * rd..(pos + 1) * rd], dbk);
            }
        }
        // The map's weight and the gates.
        if kn > 0 {
            let folded = matches!(
                adaptive,
                Adaptive::Hard { .. }
                    | Adaptive::Soft {
                        per_element: false,
                        ..
                    }
            );
            if folded {
                for (ki, &pn) in kept.iter().enumerate() {
                    let mut acc = 0.0f32;
                    for tt in 0..t {
                        let mv = m_acc[tt * kn + ki];
                        weight.grad[tt * n + pn] = mv.mul_add(gate[pn], weight.grad[tt * n + pn]);
                        acc = weight.value[tt * n + pn].mul_add(mv, acc);
                    }
                    dgate[ki] = acc;
                }
            } else {
                ops::add_assign(&mut weight.grad, &m_acc[..t * n]);
            }
        }
        mask_backward(
            &adaptive,
            mask.as_mut(),
            MaskGrad {
                n,
                rows,
                f,
                kept,
                u,
                gate,
                dgate,
                el_u,
                el_g,
                el_dg,
            },
        );
        // Back to byte order, through the sigmoid, into the embedding.
        let de_rm = &mut de_rm[..rows * l * d];
        for r in 0..rows {
            for i in 0..l {
                de_rm[(r * l + i) * d..][..d].copy_from_slice(&de_pm[i * rd + r * d..][..d]);
            }
        }
        let dx = sigmoid.backward(de_rm);
        if positions.is_some() {
            let demb = &mut demb[..rows * l * de];
            for (dm, dxb) in demb.chunks_exact_mut(de).zip(dx.chunks_exact(d)) {
                dm.copy_from_slice(&dxb[..de]);
            }
            embedding.backward(demb);
        } else {
            embedding.backward(dx);
        }
    }

    /// Embedding, map weight and bias, then the mask scores.
    pub(crate) fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.embedding.visit_params(f);
        f(&mut self.weight);
        f(&mut self.bias);
        if let Some(m) = &mut self.mask {
            f(m);
        }
    }
}

/// What [`mask_backward`] reads: the forward's gates and the backward's
/// gradients with respect to them.
struct MaskGrad<'a> {
    n: usize,
    rows: usize,
    f: usize,
    kept: &'a [usize],
    u: &'a [f32],
    gate: &'a [f32],
    dgate: &'a [f32],
    el_u: &'a [f32],
    el_g: &'a [f32],
    el_dg: &'a [f32],
}

/// The mask scores' gradient (doc/SEP-DESIGN.md section 4, step 3): through
/// the gate of each mode, from the gradient with respect to the gate values.
fn mask_backward(adaptive: &Adaptive, mask: Option<&mut Param>, g: MaskGrad<'_>) {
    let MaskGrad {
        n,
        rows,
        f,
        kept,
        u,
        gate,
        dgate,
        el_u,
        el_g,
        el_dg,
    } = g;
    match *adaptive {
        Adaptive::Off => {}
        Adaptive::Soft {
            per_element: false,
            slope,
            ..
        } => {
            let m = mask.expect("soft mask");
            for i in 0..n {
                if !adaptive.forced(i) {
                    let (g, uv) = (gate[i], u[i]);
                    let dm = ((dgate[i] * (g * (1.0 - g))) * slope) * (uv * (1.0 - uv));
                    m.grad[i] += dm;
                }
            }
        }
        Adaptive::Soft { slope, .. } => {
            let m = mask.expect("soft mask");
            for blk in 0..rows * n {
                if adaptive.forced(blk % n) {
                    continue;
                }
                let at = blk * f..(blk + 1) * f;
                for ((mg, &dg), (&g, &uv)) in m.grad[at.clone()]
                    .iter_mut()
                    .zip(&el_dg[at.clone()])
                    .zip(el_g[at.clone()].iter().zip(&el_u[at]))
                {
                    *mg += ((dg * (g * (1.0 - g))) * slope) * (uv * (1.0 - uv));
                }
            }
        }
        Adaptive::Hard { sparsity, .. } => {
            let m = mask.expect("hard mask");
            for (ki, &pn) in kept.iter().enumerate() {
                if !adaptive.forced(pn) {
                    let uv = gate[pn];
                    m.grad[pn] += (dgate[ki] + sparsity) * (uv * (1.0 - uv));
                }
            }
        }
    }
}

//! The 24/32-bit image family of CM revision 8 (doc/FORMAT.md 4.19.3: the
//! `max` line; it costs about twice revision 4's family's CPU), for the samples after a PNM (P6, 8 bits), BMP or
//! TGA header of 3 or 4 bytes per pixel, in place of revision 4's pixel
//! family (`pixel4.rs`, which keeps gray and 16-bit images). After the
//! ideas of published image models (CALIC, JPEG-LS, paq-style image
//! models; no code taken):
//!
//! - revision 4's 23 hashed contexts (neighbours, neighbour predictors,
//!   the previous channel at this pixel, CALIC's gradient-adjusted
//!   prediction and texture), with least-squares (OLS) predictions in place
//!   of its LMS ones: per channel over 32 causal samples of all channels
//!   (`ols.rs`, orders 32, 16 and 8, solved every 32 samples);
//! - inter-channel correction: the OLS prediction moved by all or half of
//!   the previous channel's OLS residual at this pixel (a pixel's channels
//!   err together);
//! - per-bit inputs from 16 predicted bytes (expected-byte and distance
//!   inputs), from logistic distributions around six fine (1/16 sample)
//!   predictions whose scale is learnt per local error energy (the
//!   neighbours' OLS residuals and gradients, CALIC-like), and from the
//!   position of two fine predictions relative to the partial byte's split
//!   point in five situations (local energy, neighbour residuals, texture,
//!   the previous channel's residual, the OLS's fraction);
//! - those mixed by the family's own mixer, whose output an APM on
//!   (channel, OLS byte, partial byte) refines.
//!
//! Every context and input is declared in this file: `Features` computes
//! the values, `hashes` and `predict_bit` turn them into inputs.

use super::expected::ExpectedBits;
use super::image::ImageInfo;
use super::ols::{N as TAPS, Ols};
use super::pixel::sample;
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::Apm;
use crate::logistic::{squash, stretch};
use crate::mixer2::Mixer2;
use crate::prim::AdaptiveProbs;

/// Hashed contexts.
const CONTEXTS: usize = 23;
/// Predictions with expected-byte and distance inputs.
const PREDICTIONS: usize = 16;
/// Fine predictions (in 1/[`SCALE`]) with distribution inputs: OLS orders
/// 32, 16, 8, the OLS moved by half and by all of the previous channel's
/// residual, and the moved gradient.
const FINE: usize = 6;
/// Per-bit inputs to the model's mixer: the family's mix, its APM, the
/// distance inputs of the OLS, the corrected OLS and OLS order 16, the
/// distribution inputs of the OLS, the half-corrected and the corrected
/// OLS.
const BIT_INPUTS: usize = 8;
/// Inputs of the family's mixer: expected bytes, distance inputs,
/// distribution inputs, relative-position inputs, bias.
const INNER: usize = 2 * PREDICTIONS + FINE + REL + 1;
/// The first-layer weight the family's mixer starts with (16384 = 1.0).
const INNER_INITIAL_WEIGHT: i16 = 400;
/// Relative-position inputs: fine predictions OLS and half-moved OLS, each
/// under [`REL_SITUATIONS`] situations.
const REL: usize = 2 * REL_SITUATIONS.len();
/// The sizes of the relative-position inputs' situations (see
/// `Features::rel`).
const REL_SITUATIONS: [usize; 5] = [
    CHANNELS * 16,
    CHANNELS * 256,
    CHANNELS * 256,
    CHANNELS * 256,
    CHANNELS * 256,
];
/// Buckets of the distance, in quarter samples, of a fine prediction to
/// the partial byte's split point: exact within 15, then by powers of two,
/// either side.
const REL_BUCKETS: usize = 46;

/// Per-bit inputs from a fine prediction (times [`SCALE`]): the probability
/// of a 1 given where the prediction lies relative to the value where the
/// bit changes, in quarter samples (bucketed), per (situation, bit).
#[derive(Debug, Clone)]
struct RelBits {
    probs: AdaptiveProbs,
    base: [usize; REL],
    pred: [i32; REL],
    index: [usize; REL],
}

impl RelBits {
    fn new() -> Self {
        let total: usize = REL_SITUATIONS.iter().sum();
        RelBits {
            probs: AdaptiveProbs::new(2 * total * 8 * REL_BUCKETS, 255),
            base: [0; REL],
            pred: [0; REL],
            index: [0; REL],
        }
    }

    /// Starts a byte: predictions `p` (fine), situations `s`.
    fn begin(&mut self, p: [i32; 2], s: [usize; REL_SITUATIONS.len()]) {
        let mut first = 0;
        for (j, (&size, &sit)) in REL_SITUATIONS.iter().zip(&s).enumerate() {
            for (k, &pk) in p.iter().enumerate() {
                let slot = 2 * j + k;
                self.base[slot] = ((first + k * size + sit.min(size - 1)) * 8) * REL_BUCKETS;
                self.pred[slot] = pk;
            }
            first += 2 * size;
        }
    }

    #[inline]
    fn predict(&mut self, mid: i32, i: u32, out: &mut [i32]) {
        for (k, o) in out.iter_mut().enumerate() {
            let d = (self.pred[k] - mid * SCALE) >> 2;
            let a = d.unsigned_abs();
            let b = if a < 16 {
                a
            } else {
                (12 + (32 - a.leading_zeros())).min(22)
            } as usize;
            let q = if d >= 0 { 23 + b } else { b };
            let idx = self.base[k] + i as usize * REL_BUCKETS + q;
            self.index[k] = idx;
            *o = self.probs.stretched(idx);
        }
    }

    fn update(&mut self, bit: u32) {
        for &idx in &self.index {
            self.probs.update(idx, bit);
        }
    }
}
/// Channels with their own predictors and statistics (more share the last).
const CHANNELS: usize = 4;
/// Fixed-point scale of the OLS features and predictions (4 bits).
const SCALE: i32 = 16;
/// Buckets of the distance of a predicted byte to the partial byte's split
/// point: exact within 15, then by powers of two, either side.
// The distance inputs are revision 4's (FORMAT 4.15.2), shared with
// `pixel4`.
use super::pixel4::{DISTANCES, DistanceBits, Gap, bucket};

/// What the family computes from the neighbourhood of one byte.
#[derive(Debug, Clone, Copy)]
struct Features {
    ch: usize,
    /// The OLS features (samples times [`SCALE`]).
    x: [i32; TAPS],
    /// The OLS predictions of orders 32, 16, 8 (times [`SCALE`]).
    ols: [i32; 3],
    /// Predicted bytes, with expected-byte and distance inputs.
    pred: [u32; PREDICTIONS],
    /// Values of the hashed contexts (before tagging).
    ctx: [u32; CONTEXTS],
    /// The family's mixer's selector context (channel and recent error).
    situation: usize,
    texture: u32,
    /// The fine predictions (times [`SCALE`]).
    fine: [i32; FINE],
    /// The situations of the relative-position inputs.
    rel: [usize; REL_SITUATIONS.len()],
}

/// One image of 3 or 4 bytes per pixel: predictors, tables and mixer.
#[derive(Debug, Clone)]
pub(crate) struct Image7Contexts {
    img: ImageInfo,
    ols: Vec<Ols>,
    /// Recent absolute error of OLS order 32 per channel (4 fraction bits).
    err: [u32; CHANNELS],
    /// Recent absolute error of each fine prediction per channel (8
    /// fraction bits).
    mad: [[[u32; FINE]; 16]; CHANNELS],
    /// Per fine prediction: the prediction and `(5680 << 16) / mad`.
    dist: [(i32, i64); FINE],
    dist_out: [i32; FINE],
    rel: RelBits,
    rel_out: [i32; REL],
    /// OLS residuals (byte minus predicted byte, clamped to ±127) of the
    /// last rows, by position modulo the ring's power-of-two size.
    resid: Vec<i8>,
    /// The last residual (times [`SCALE`]) of each channel, and where.
    last: [(usize, i32); CHANNELS],
    /// The byte being coded, if its features await the coded byte.
    cur: Option<Features>,
    bits: ExpectedBits<PREDICTIONS>,
    near: DistanceBits<PREDICTIONS>,
    near_out: [i32; PREDICTIONS],
    expected_out: [i32; PREDICTIONS],
    mixer: Mixer2,
    apm: Apm,
    apm_base: usize,
}

/// The byte nearest to `v`.
fn clip(v: i32) -> u32 {
    v.clamp(0, 255) as u32
}

/// The byte nearest to the scaled value `v` (times [`SCALE`]).
fn unscale(v: i32) -> u32 {
    clip((v + SCALE / 2).div_euclid(SCALE))
}

/// Bucket of a local error energy: exact below 4, then two per power of
/// two (0..=15).
fn energy_bucket(e: u32) -> usize {
    if e < 4 {
        return e as usize;
    }
    let l = 31 - e.leading_zeros();
    let half = (e >> (l - 1)) & 1;
    (4 + (l - 2) * 2 + half).min(15) as usize
}

/// A residual quantised with its sign: 0 for 0, then by powers of two up
/// to 64 and more (0..=14).
fn qres(r: i32) -> u32 {
    let a = r.unsigned_abs().min(64);
    let b = 32 - a.leading_zeros(); // 0..=7
    if r < 0 { 7 + b } else { b }
}

/// Of W, N and NW, the one nearest to W + N - NW.
fn paeth(w: i32, n: i32, nw: i32) -> i32 {
    let g = w + n - nw;
    let (dw, dn, dnw) = ((g - w).abs(), (g - n).abs(), (g - nw).abs());
    if dw <= dn && dw <= dnw {
        w
    } else if dn <= dnw {
        n
    } else {
        nw
    }
}

/// The OLS features, most telling first (orders 16 and 8 use the leading
/// ones): `(dy, dx, dc)` as for [`sample`].
const OLS_TAPS: [(usize, isize, usize); TAPS] = [
    (0, 1, 0),  // W
    (1, 0, 0),  // N
    (1, 1, 0),  // NW
    (1, -1, 0), // NE
    (0, 0, 1),  // px
    (0, 1, 1),  // pW
    (1, 0, 1),  // pN
    (0, 2, 0),  // WW
    (2, 0, 0),  // NN
    (1, -1, 1), // pNE
    (1, 1, 1),  // pNW
    (0, 0, 2),  // ppx
    (2, -1, 0), // NNE
    (1, -2, 0), // NEE
    (1, 2, 0),  // NWW
    (2, 1, 0),  // NNW
    (0, 1, 2),  // ppW
    (1, 0, 2),  // ppN
    (1, -1, 2), // ppNE
    (1, 1, 2),  // ppNW
    (0, 3, 0),  // WWW
    (3, 0, 0),  // NNN
    (0, 2, 1),  // pWW
    (2, 0, 1),  // pNN
    (2, 2, 0),  // NNWW
    (2, -2, 0), // NNEE
    (1, -3, 0), // NEEE
    (1, 3, 0),  // NWWW
    (2, -1, 1), // pNNE
    (1, -2, 1), // pNEE
    (2, 1, 1),  // pNNW
    (1, 2, 1),  // pNWW
];

impl Image7Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        // Two rows and a few pixels of residuals, at most 2^23.
        let ring = (2 * img.row_bytes + 4 * img.pixel_bytes + 1)
            .next_power_of_two()
            .min(RING_MAX);
        let sizes = [CHANNELS * 16 * 8, CHANNELS * 256, CHANNELS * 256 * 8];
        let mut mixer = Mixer2::new(INNER, &sizes, 1, 6, 2);
        // Many inputs: start each weight near 0.025 (16384 = 1.0) so that
        // the first bytes' mix is not overconfident.
        mixer.set_initial_weights(INNER_INITIAL_WEIGHT);
        Image7Contexts {
            img,
            ols: (0..CHANNELS).map(|_| Ols::revision4(0)).collect(),
            err: [0; CHANNELS],
            mad: [[[1024; FINE]; 16]; CHANNELS],
            dist: [(0, 0); FINE],
            dist_out: [0; FINE],
            rel: RelBits::new(),
            rel_out: [0; REL],
            resid: vec![0; ring],
            last: [(usize::MAX, 0); CHANNELS],
            cur: None,
            bits: ExpectedBits::new(CHANNELS * 16),
            near: DistanceBits::new(CHANNELS * 16),
            near_out: [0; PREDICTIONS],
            expected_out: [0; PREDICTIONS],
            mixer,
            apm: Apm::new(CHANNELS * 256 * 256, 7),
            apm_base: 0,
        }
    }

    /// The OLS residual of the byte at `p`, if known (0 otherwise).
    fn residual(&self, ctx: &ByteCtx<'_>, p: Option<usize>) -> i32 {
        match p {
            Some(p) if p >= self.img.start && p < ctx.pos && ctx.vis.known(p) => {
                i32::from(self.resid[p & (self.resid.len() - 1)])
            }
            _ => 0,
        }
    }

    /// Everything the family derives from the byte's neighbourhood.
    fn features(&self, ctx: &ByteCtx<'_>) -> Features {
        let img = &self.img;
        let rel = ctx.pos - img.start;
        let col = rel % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let at = |dy: usize, dx: isize, dc: usize| sample(img, ctx, dy, dx, dc);
        let (w, n, nw, ne) = (at(0, 1, 0), at(1, 0, 0), at(1, 1, 0), at(1, -1, 0));
        let (ww, nn, nne) = (at(0, 2, 0), at(2, 0, 0), at(2, -1, 0));
        // The previous channel at this pixel and its neighbours (128 for
        // the first channel).
        let (px, pw, pn, pnw, pne, ppx) = if col > 0 {
            (
                at(0, 0, 1),
                at(0, 1, 1),
                at(1, 0, 1),
                at(1, 1, 1),
                at(1, -1, 1),
                if col > 1 { at(0, 0, 2) } else { 128 },
            )
        } else {
            (128, 128, 128, 128, 128, 128)
        };
        let mut x = [0i32; TAPS];
        for (v, &(dy, dx, dc)) in x.iter_mut().zip(&OLS_TAPS) {
            *v = at(dy, dx, dc) * SCALE;
        }
        let o = &self.ols[ch];
        let ols = [o.predict(0, &x), o.predict(1, &x), o.predict(2, &x)];
        // The previous channel's residual at this pixel (coded just
        // before this byte), else 0.
        let (ppos, presid) = self.last[col.saturating_sub(1).min(CHANNELS - 1)];
        let rprev = if col > 0 && ppos.wrapping_add(1) == ctx.pos {
            presid
        } else {
            0
        };
        let olsc = unscale(ols[0] + rprev);
        let olsh = unscale(ols[0] + rprev / 2);
        let (o0, o1, o2) = (unscale(ols[0]), unscale(ols[1]), unscale(ols[2]));
        let grad = w + n - nw;
        // CALIC's gradient-adjusted prediction.
        // (In i64: the same values, samples are small.)
        let g = Gap::new(
            w.into(),
            n.into(),
            nw.into(),
            ne.into(),
            nn.into(),
            ww.into(),
            nne.into(),
        );
        let (gap, dh, dv, texture, energy) =
            (g.gap as i32, g.dh as i32, g.dv as i32, g.texture, g.energy);
        // Predictions moved by the previous channel's difference at this
        // pixel (unmoved for the first channel, where all are 128).
        let (mw, mn) = (w + px - pw, n + px - pn);
        let (mne, mnw) = (ne + px - pne, nw + px - pnw);
        let mgrad = grad + px - (pw + pn - pnw);
        let eb = bucket(self.err[ch]);
        let nne_pred = n + ne - nne;
        let pb = img.pixel_bytes;
        let rw = img.row_bytes;
        let back = |k: usize| ctx.pos.checked_sub(k);
        let r_w = self.residual(ctx, back(pb));
        let r_n = self.residual(ctx, back(rw));
        let r_ne = self.residual(ctx, back(rw.wrapping_sub(pb)).filter(|_| rw > pb));
        let r_nw = self.residual(ctx, back(rw + pb));
        let qp = qres(rprev / SCALE);
        // The local error energy (CALIC-like): neighbours' residuals and
        // gradients.
        let local_energy = 2 * (r_w.unsigned_abs() + r_n.unsigned_abs())
            + r_nw.unsigned_abs()
            + r_ne.unsigned_abs()
            + 2 * (rprev / SCALE).unsigned_abs()
            + (dh + dv) as u32 / 4;
        let local = energy_bucket(local_energy);
        let pred = [
            o0,
            olsc,
            o1,
            o2,
            clip(gap),
            clip(mw),
            clip(mn),
            clip(mgrad),
            clip(mne),
            clip(grad),
            clip(paeth(w, n, nw)),
            clip((w + n + 1) / 2),
            clip(nne_pred),
            olsh,
            clip(mnw),
            clip(w + ne - n),
        ];
        let q = |v: i32| (v.clamp(-255, 255) + 256) as u32;
        let (w, n, nw, ne, px, ppx) = (
            w as u32, n as u32, nw as u32, ne as u32, px as u32, ppx as u32,
        );
        let c = [
            // 0..=22: revision 4's contexts with the OLS in place of LMS.
            hash2(w, px),
            hash2(n, px),
            hash2(w, n),
            hash2(clip(grad), px),
            hash2(clip(mw), clip(mn)),
            clip(mgrad),
            hash2(clip(mne), clip(mnw) >> 2),
            hash2(n, ne),
            hash2(w, nw),
            hash2(clip(nne_pred), px),
            hash2(paeth(w as i32, n as i32, nw as i32) as u32, px),
            hash2(clip((w as i32 + ne as i32 + 1) / 2), px),
            hash2(px, ppx),
            hash2(
                clip(grad) >> 2,
                hash2(q(w as i32 - nw as i32) >> 2, q(n as i32 - nw as i32) >> 2),
            ),
            hash2(o0, eb),
            hash2(o1, px >> 2),
            hash2(clip(gap), energy << 8 | (texture >> 4)),
            hash2(texture, clip(gap) >> 3 | energy << 8),
            hash2(px, hash2(q(w as i32 - pw) >> 2, q(n as i32 - pn) >> 2)),
            hash2(nw, px),
            hash2(ne, px),
            hash2(clip(mw), px),
            hash2(clip(mn), q(px as i32 - pw)),
        ];
        Features {
            ch,
            x,
            ols,
            pred,
            ctx: c,
            situation: ch * 16 + eb as usize,
            texture,
            rel: [
                ch * 16 + local,
                ch * 256 + (qres(r_w) * 15 + qres(r_n)) as usize,
                ch * 256 + texture as usize,
                ch * 256 + (qp * 15 + qres(r_w)) as usize,
                ch * 256 + (((ols[0] & 15) as usize) << 4 | eb as usize),
            ],
            fine: [
                ols[0],
                ols[1],
                ols[2],
                ols[0] + rprev / 2,
                ols[0] + rprev,
                clip(mgrad) as i32 * SCALE,
            ],
        }
    }
}

/// The probability (16 bits) under a logistic distribution of mean `p`
/// (times [`SCALE`]) and scale `inv` (`(5680 << 16) / mad`, `mad` the mean
/// absolute error in 1/256 samples: `1.386 * 256 / scale` per sample) of a
/// sample below byte value `v` (clipped: 0 below 0, 65536 from 256).
#[inline]
fn cdf(p: i32, inv: i64, v: i32) -> i64 {
    if v <= 0 {
        return 0;
    }
    if v >= 256 {
        return 65536;
    }
    let t = (i64::from(v * SCALE - SCALE / 2 - p) * inv) >> 16;
    i64::from(squash(t.clamp(-2047, 2047) as i32))
}

/// The stretched probability that bit `i` is 1 given that the byte lies
/// in `[lo, hi)` (`mid` its split), under the distribution of [`cdf`]; far
/// in a tail, where both masses vanish, the logistic tail's own odds of
/// the nearer half.
#[inline]
fn distribution_input(p: i32, inv: i64, lo: i32, mid: i32, hi: i32, i: u32) -> i32 {
    let (a, m, b) = (cdf(p, inv, lo), cdf(p, inv, mid), cdf(p, inv, hi));
    let (m0, m1) = (m - a, b - m);
    if m0 + m1 < 64 {
        let d = ((i64::from(SCALE << i) * inv) >> 16).min(2047) as i32;
        return if mid * SCALE > p { -d } else { d };
    }
    stretch((((m1 + 1) << 16) / (m0 + m1 + 2)).clamp(1, 65535) as u32)
}

/// Largest residual ring (bytes).
const RING_MAX: usize = 1 << 23;

/// Bytes the family allocates at most (its tables, mixer, APM and the
/// largest residual ring), for `CmConfig::memory_bytes`.
pub(crate) const MEMORY: u64 = (CHANNELS * 256 * 256 * 33 * 2) as u64
    + (2 * (CHANNELS * 16 + 4 * CHANNELS * 256) * 8 * REL_BUCKETS * 4) as u64
    + (CHANNELS * 16 * 8 * PREDICTIONS * (4 + DISTANCES) * 4) as u64
    + ((CHANNELS * 16 * 8 * 2 + CHANNELS * 256 + CHANNELS * 256 * 8) * 64 * 2) as u64
    + RING_MAX as u64
    + (CHANNELS * TAPS * TAPS * 8) as u64;

impl ContextModel for Image7Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let f = self.features(ctx);
        let tag = (f.ch as u32) << 12 | 0xC00_0000;
        for ((h, &v), j) in out.iter_mut().zip(&f.ctx).zip(0u32..) {
            *h = hash2(v, tag | j << 4);
        }
    }

    fn selector_size(&self) -> usize {
        8 * 4 * 16
    }

    /// The channel with how busy the neighbourhood is.
    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        let col = (ctx.pos - self.img.start) % self.img.pixel_bytes;
        let at = |dy: usize, dx: isize| sample(&self.img, ctx, dy, dx, 0);
        let (w, n, nw) = (at(0, 1), at(1, 0), at(1, 1));
        let busy = (w - nw).abs() + (n - nw).abs();
        col.min(3) * 16 + bucket(busy as u32) as usize
    }

    /// The OLS predictor's byte.
    fn apm_byte(&self, _ctx: &ByteCtx<'_>) -> Option<u32> {
        self.cur.map(|f| f.pred[0])
    }

    fn bit_inputs(&self) -> usize {
        BIT_INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let f = self.features(ctx);
        self.cur = Some(f);
        self.bits.begin(f.pred, f.situation);
        self.near.begin(f.pred, f.situation);
        self.apm_base = (f.ch * 256 + f.pred[0] as usize) * 256;
        self.rel.begin([f.fine[3], f.fine[0]], f.rel);
        let local = f.rel[0] % 16;
        for ((d, &p), &m) in self
            .dist
            .iter_mut()
            .zip(&f.fine)
            .zip(&self.mad[f.ch][local])
        {
            *d = (p, (5680i64 << 16) / i64::from(m.max(16)));
        }
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let Some(f) = self.cur else {
            out.fill(0);
            return;
        };
        self.bits.predict(c0, i, &mut self.expected_out);
        self.near.predict(c0, i, &mut self.near_out);
        for (k, &x) in self.expected_out.iter().chain(&self.near_out).enumerate() {
            self.mixer.set(k, x);
        }
        let prefix = (c0 ^ (1 << (7 - i))) as i32;
        let lo = prefix << (i + 1);
        let (mid, hi) = (lo + (1 << i), lo + (2 << i));
        for (o, &(p, inv)) in self.dist_out.iter_mut().zip(&self.dist) {
            *o = distribution_input(p, inv, lo, mid, hi, i);
        }
        self.rel.predict(mid, i, &mut self.rel_out);
        for (k, &x) in self.dist_out.iter().chain(&self.rel_out).enumerate() {
            self.mixer.set(2 * PREDICTIONS + k, x);
        }
        self.mixer.set(INNER - 1, 256);
        let i8 = i as usize;
        self.mixer.select(0, f.situation * 8 + i8);
        self.mixer.select(1, f.ch * 256 + c0 as usize);
        self.mixer
            .select(2, (f.ch * 256 + f.texture as usize) * 8 + i8);
        self.mixer.select_final(0);
        let mix = self.mixer.mix();
        let refined = self.apm.refine_stretched(mix, self.apm_base + c0 as usize);
        out[0] = mix;
        out[1] = stretch(refined);
        out[2] = self.near_out[0];
        out[3] = self.near_out[1];
        out[4] = self.near_out[2];
        out[5] = self.dist_out[0];
        out[6] = self.dist_out[3];
        out[7] = self.dist_out[4];
    }

    fn update_bit(&mut self, bit: u32) {
        self.bits.update(bit);
        self.near.update(bit);
        self.mixer.update(bit);
        self.apm.update(bit);
        self.rel.update(bit);
    }

    fn prefetch_bit(&self, c0: u32, _i: u32) {
        if self.cur.is_some() {
            self.apm.prefetch(self.apm_base + c0 as usize);
        }
    }

    /// Trains the OLS predictor of the byte's channel on the coded byte
    /// and keeps its residual.
    fn observe(&mut self, _data: &[u8], pos: usize, byte: u8) {
        let Some(f) = self.cur.take() else {
            return;
        };
        let s = i32::from(byte) * SCALE;
        self.ols[f.ch].update(&f.x, s);
        let r = s - f.ols[0];
        self.last[f.ch] = (pos, r);
        let ring = self.resid.len() - 1;
        self.resid[pos & ring] = (i32::from(byte) - f.pred[0] as i32).clamp(-127, 127) as i8;
        let e = r.unsigned_abs();
        self.err[f.ch] = (self.err[f.ch] * 7 + e) / 8;
        for (m, &p) in self.mad[f.ch][f.rel[0] % 16].iter_mut().zip(&f.fine) {
            let e = (s - p).unsigned_abs().min(4095);
            *m = (*m * 15 + e * 16) / 16;
        }
    }
}

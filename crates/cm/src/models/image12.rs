//! The 24/32-bit image family of CM revision 12 (doc/FORMAT.md 4.23.2: the
//! `max` line), for the samples after a PNM (P6, 8 bits), BMP or TGA header
//! of 3 or 4 bytes per pixel: revision 10's family (`image10.rs`, unchanged:
//! the same contexts and mixer inputs) plus a last refinement of the
//! model's final probability, after the ideas of published paq-style image
//! models (no code taken):
//!
//! - [`OLS`] more least-squares predictors per channel, of other
//!   neighbourhoods, forgetting rates and solving intervals than revision
//!   8's (one of them in the domain of the difference to the previous
//!   channel);
//! - four APMs on the final probability, keyed by the channel and the
//!   partial byte with the predictors' mean, their median, the wide
//!   predictor's byte and the local residual energy, averaged with it.
//!
//! More hashed contexts, expected-byte, distance and distribution inputs of
//! these predictors (with a mixer of their own), and mixer selectors of the
//! local energy were measured and coded larger (doc/FORMAT.md 4.23.2).
//! On kodim23 (`max`, whole pipeline) the family codes 296,309 bytes where
//! revision 10 codes 296,719, for about a quarter more CPU time.

use super::image::ImageInfo;
use super::image7::energy_bucket;
use super::image10::Image10Contexts;
use super::pixel::sample;
use super::{ByteCtx, ContextModel};
use crate::apm::Apm;
use crate::logistic::stretch;

/// Least-squares predictors per channel.
const OLS: usize = 4;
/// The most features of one of them.
const MAX_TAPS: usize = 24;
/// Channels with their own predictors (more share the last).
const CHANNELS: usize = 4;
/// Fixed-point scale of the features and predictions (4 bits).
const SCALE: i32 = 16;
/// The final APMs.
const FINALS: usize = 4;
/// The APMs' adaptation shift.
const APM_RATE: u32 = 7;
/// Largest residual ring (bytes).
const RING_MAX: usize = 1 << 23;

/// One sample of the neighbourhood: rows up, pixels left (negative:
/// right), channels back, as for [`sample`].
type Tap = (usize, isize, usize);

/// The features of OLS 0: the near neighbourhood and the previous
/// channel's (forgets fast, solved often).
const TAPS0: [Tap; 12] = [
    (0, 1, 0),
    (1, 0, 0),
    (1, 1, 0),
    (1, -1, 0),
    (0, 2, 0),
    (2, 0, 0),
    (2, -1, 0),
    (1, 2, 0),
    (0, 0, 1),
    (0, 1, 1),
    (1, 0, 1),
    (1, -1, 1),
];
/// The features of OLS 1: a wide neighbourhood and the two previous
/// channels' (forgets slowly).
const TAPS1: [Tap; 24] = [
    (0, 1, 0),
    (1, 0, 0),
    (1, 1, 0),
    (1, -1, 0),
    (0, 2, 0),
    (2, 0, 0),
    (2, -1, 0),
    (2, 1, 0),
    (1, 2, 0),
    (1, -2, 0),
    (0, 3, 0),
    (3, 0, 0),
    (2, 2, 0),
    (2, -2, 0),
    (1, -3, 0),
    (1, 3, 0),
    (0, 0, 1),
    (0, 1, 1),
    (1, 0, 1),
    (1, 1, 1),
    (1, -1, 1),
    (0, 0, 2),
    (0, 1, 2),
    (1, 0, 2),
];
/// The places of OLS 2's features: this channel minus the previous one
/// there (it predicts this channel minus the previous one here), then the
/// previous channel minus the one before it here.
const TAPS2: [Tap; 9] = [
    (0, 1, 0),
    (1, 0, 0),
    (1, 1, 0),
    (1, -1, 0),
    (0, 2, 0),
    (2, 0, 0),
    (2, -1, 0),
    (1, -2, 0),
    (0, 0, 1),
];
/// The features of OLS 3: the four nearest neighbours and the previous
/// channel (forgets very fast).
const TAPS3: [Tap; 6] = [
    (0, 1, 0),
    (1, 0, 0),
    (1, 1, 0),
    (1, -1, 0),
    (0, 0, 1),
    (1, 0, 1),
];
/// Per OLS: features, decay shift, samples between solutions.
const SHAPES: [(usize, u32, u32); OLS] = [(12, 7, 4), (24, 10, 16), (9, 8, 8), (6, 5, 2)];

/// A least-squares predictor of `n` features: the covariance decays by
/// `2^-decay` per sample and is solved (integer LDLᵀ, as `ols.rs`) every
/// `every` samples.
#[derive(Debug, Clone)]
struct Ols12 {
    n: usize,
    decay: u32,
    every: u32,
    cov: Vec<i64>,
    cross: Vec<i64>,
    /// Weights, 24 fraction bits.
    w: Vec<i64>,
    since: u32,
}

/// Fraction bits of the weights.
const WBITS: u32 = 24;

impl Ols12 {
    fn new((n, decay, every): (usize, u32, u32)) -> Self {
        let mut w = vec![0; n];
        w[0] = 1 << WBITS;
        Ols12 {
            n,
            decay,
            every,
            cov: vec![0; n * n],
            cross: vec![0; n],
            w,
            since: 0,
        }
    }

    fn predict(&self, x: &[i32; MAX_TAPS]) -> i32 {
        let dot: i64 = self.w.iter().zip(x).map(|(&w, &x)| w * i64::from(x)).sum();
        (dot >> WBITS).clamp(-(1 << 20), 1 << 20) as i32
    }

    fn update(&mut self, x: &[i32; MAX_TAPS], s: i32) {
        let n = self.n;
        for i in 0..n {
            let xi = i64::from(x[i]);
            let row = &mut self.cov[i * n..i * n + i + 1];
            for (c, &xj) in row.iter_mut().zip(x) {
                *c += xi * i64::from(xj) - (*c >> self.decay);
            }
            self.cross[i] += xi * i64::from(s) - (self.cross[i] >> self.decay);
        }
        self.since += 1;
        if self.since >= self.every {
            self.since = 0;
            self.solve();
        }
    }

    /// Solves the normal equations (keeps the old weights when the matrix
    /// is not positive definite).
    fn solve(&mut self) {
        let n = self.n;
        let top = (0..n).map(|i| self.cov[i * n + i]).max().unwrap_or(0);
        if top <= 0 {
            return;
        }
        let shift = (64 - top.leading_zeros()) as i32 - 30;
        let scale = |v: i64| -> i64 { if shift > 0 { v >> shift } else { v << -shift } };
        const ONE: u32 = 30;
        let mut l = [0i64; MAX_TAPS * MAX_TAPS];
        let mut d = [0i64; MAX_TAPS];
        let mut ld = [0i128; MAX_TAPS];
        for j in 0..n {
            for k in 0..j {
                ld[k] = i128::from(l[j * n + k]) * i128::from(d[k]);
            }
            let ajj = scale(self.cov[j * n + j]);
            let ajj = ajj + (ajj >> 10) + 1;
            let mut acc = i128::from(ajj) << ONE;
            for k in 0..j {
                acc -= (i128::from(l[j * n + k]) * ld[k]) >> ONE;
            }
            let dj = (acc >> ONE) as i64;
            if dj <= 0 {
                return;
            }
            d[j] = dj;
            let inv = (1i128 << 60) / i128::from(dj);
            for i in j + 1..n {
                let mut acc = i128::from(scale(self.cov[i * n + j])) << ONE;
                for k in 0..j {
                    acc -= (i128::from(l[i * n + k]) * ld[k]) >> ONE;
                }
                let v = ((acc >> 15).clamp(-(1 << 62), 1 << 62) * inv) >> 45;
                l[i * n + j] = v.clamp(-(1 << 40), 1 << 40) as i64;
            }
        }
        let mut y = [0i128; MAX_TAPS];
        let mut z = [0i128; MAX_TAPS];
        for i in 0..n {
            let mut acc = i128::from(scale(self.cross[i]));
            for k in 0..i {
                acc -= (i128::from(l[i * n + k]) * y[k]) >> ONE;
            }
            y[i] = acc.clamp(-(1 << 80), 1 << 80);
            z[i] = (y[i] << WBITS) / i128::from(d[i]);
        }
        let mut w = [0i128; MAX_TAPS];
        for i in (0..n).rev() {
            let mut acc = z[i];
            for k in i + 1..n {
                acc -= (i128::from(l[k * n + i]) * w[k]) >> ONE;
            }
            w[i] = acc.clamp(-(1 << (WBITS + 7)), 1 << (WBITS + 7));
        }
        for (dst, &v) in self.w.iter_mut().zip(&w) {
            *dst = v as i64;
        }
    }
}

/// What the revision-12 part computes from the neighbourhood of one byte.
#[derive(Debug, Clone, Copy)]
struct Extra {
    ch: usize,
    /// The previous channel at this pixel (times [`SCALE`]).
    px: i32,
    /// Each OLS's features (times [`SCALE`]).
    x: [[i32; MAX_TAPS]; OLS],
    /// Each OLS's prediction of this byte (times [`SCALE`]).
    ols: [i32; OLS],
    /// The final APMs' contexts (before the partial byte).
    finals: [usize; FINALS],
}

/// The byte nearest to `v`.
fn clip(v: i32) -> u32 {
    v.clamp(0, 255) as u32
}

/// The byte nearest to the scaled value `v`.
fn unscale(v: i32) -> u32 {
    clip((v + SCALE / 2).div_euclid(SCALE))
}

/// One image of 3 or 4 bytes per pixel: revision 10's family, the
/// revision-12 predictors and final APMs.
#[derive(Debug, Clone)]
pub(crate) struct Image12Contexts {
    base: Image10Contexts,
    img: ImageInfo,
    ols: Vec<[Ols12; OLS]>,
    /// OLS 0's byte residuals (clamped to ±127) of the last rows, by
    /// position modulo the ring's power-of-two size.
    resid: Vec<i8>,
    /// Each channel's last OLS 0 residual (times [`SCALE`]), and where.
    last: [(usize, i32); CHANNELS],
    cur: Option<Extra>,
    /// On the final probability, by (channel, mean byte), (channel,
    /// median byte), (channel, OLS 1's byte), (channel, local energy),
    /// each with the partial byte.
    finals: [Apm; FINALS],
    /// Whether the final APMs refined this bit (and so learn it).
    refined: bool,
}

/// Bytes the revision-12 part allocates at most (for
/// `CmConfig::memory_bytes`, on top of revision 10's): its final APMs,
/// residual ring and OLS matrices.
pub(crate) const MEMORY: u64 = ((3 * CHANNELS * 256 * 256 + CHANNELS * 16 * 256) * 33 * 2) as u64
    + RING_MAX as u64
    + (CHANNELS * OLS * (MAX_TAPS * MAX_TAPS + 2 * MAX_TAPS) * 8) as u64;

impl Image12Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        let ring = (2 * img.row_bytes + 4 * img.pixel_bytes + 1)
            .next_power_of_two()
            .min(RING_MAX);
        let by_byte = CHANNELS * 256 * 256;
        Image12Contexts {
            base: Image10Contexts::new(img),
            img,
            ols: (0..CHANNELS).map(|_| SHAPES.map(Ols12::new)).collect(),
            resid: vec![0; ring],
            last: [(usize::MAX, 0); CHANNELS],
            cur: None,
            finals: [by_byte, by_byte, by_byte, CHANNELS * 16 * 256].map(|n| Apm::new(n, APM_RATE)),
            refined: false,
        }
    }

    /// OLS 0's byte residual at `p`, if known (0 otherwise).
    fn residual(&self, ctx: &ByteCtx<'_>, p: Option<usize>) -> i32 {
        match p {
            Some(p) if p >= self.img.start && p < ctx.pos && ctx.vis.known(p) => {
                i32::from(self.resid[p & (self.resid.len() - 1)])
            }
            _ => 0,
        }
    }

    /// Everything the revision-12 part derives from the byte's
    /// neighbourhood.
    fn extra(&self, ctx: &ByteCtx<'_>) -> Extra {
        let img = &self.img;
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let at = |(dy, dx, dc): Tap| sample(img, ctx, dy, dx, dc) * SCALE;
        let mut x = [[0i32; MAX_TAPS]; OLS];
        for (v, &t) in x[0].iter_mut().zip(&TAPS0) {
            *v = at(t);
        }
        for (v, &t) in x[1].iter_mut().zip(&TAPS1) {
            *v = at(t);
        }
        for (v, &(dy, dx, dc)) in x[2].iter_mut().zip(&TAPS2) {
            *v = at((dy, dx, dc)) - at((dy, dx, dc + 1));
        }
        for (v, &t) in x[3].iter_mut().zip(&TAPS3) {
            *v = at(t);
        }
        let px = at((0, 0, 1));
        let o = &self.ols[ch];
        let mut ols = [0i32; OLS];
        for (k, p) in ols.iter_mut().enumerate() {
            *p = o[k].predict(&x[k]);
        }
        // OLS 2 predicts the difference to the previous channel.
        ols[2] += px;
        // The previous channel's OLS 0 residual at this pixel (coded just
        // before this byte), else 0.
        let (ppos, presid) = self.last[col.saturating_sub(1).min(CHANNELS - 1)];
        let rprev = if col > 0 && ppos.wrapping_add(1) == ctx.pos {
            presid
        } else {
            0
        };
        let (pb, rw) = (img.pixel_bytes, img.row_bytes);
        let back = |k: usize| ctx.pos.checked_sub(k);
        let r_w = self.residual(ctx, back(pb));
        let r_n = self.residual(ctx, back(rw));
        let r_ne = self.residual(ctx, back(rw.wrapping_sub(pb)).filter(|_| rw > pb));
        let r_nw = self.residual(ctx, back(rw + pb));
        let energy = 2 * (r_w.unsigned_abs() + r_n.unsigned_abs())
            + r_nw.unsigned_abs()
            + r_ne.unsigned_abs()
            + 2 * (rprev / SCALE).unsigned_abs();
        let local = energy_bucket(energy);
        let b: [u32; OLS] = ols.map(unscale);
        let mean = unscale((ols.iter().sum::<i32>() + 2) >> 2);
        let median = {
            let mut m = [b[0], b[1], b[2]];
            m.sort_unstable();
            m[1]
        };
        let row = |v: u32| (ch * 256 + v as usize) * 256;
        Extra {
            ch,
            px,
            x,
            ols,
            finals: [row(mean), row(median), row(b[1]), (ch * 16 + local) * 256],
        }
    }
}

impl ContextModel for Image12Contexts {
    fn contexts(&self) -> usize {
        self.base.contexts()
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        self.base.hashes(ctx, out);
    }

    fn selector_size(&self) -> usize {
        self.base.selector_size()
    }

    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        self.base.selector(ctx)
    }

    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        self.base.apm_byte(ctx)
    }

    fn bit_inputs(&self) -> usize {
        self.base.bit_inputs()
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        self.cur = Some(self.extra(ctx));
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.base.predict_bit(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.base.update_bit(bit);
        if self.refined {
            self.refined = false;
            for a in &mut self.finals {
                a.update(bit);
            }
        }
    }

    /// The mean of the final probability and its four refinements.
    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        let Some(e) = self.cur else {
            return p;
        };
        self.refined = true;
        let d = stretch(p);
        let c = c0 as usize;
        let sum: u32 = self
            .finals
            .iter_mut()
            .zip(&e.finals)
            .map(|(a, &ctx)| a.refine_stretched(d, ctx + c))
            .sum();
        ((sum + p) / (FINALS as u32 + 1)).clamp(1, 65535)
    }

    /// Trains the byte's channel's OLS predictors on the coded byte and
    /// keeps OLS 0's residual.
    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        let Some(e) = self.cur.take() else {
            return;
        };
        let s = i32::from(byte) * SCALE;
        for (k, o) in self.ols[e.ch].iter_mut().enumerate() {
            let target = if k == 2 { s - e.px } else { s };
            o.update(&e.x[k], target);
        }
        self.last[e.ch] = (pos, s - e.ols[0]);
        let ring = self.resid.len() - 1;
        self.resid[pos & ring] =
            (i32::from(byte) - unscale(e.ols[0]) as i32).clamp(-127, 127) as i8;
    }
}

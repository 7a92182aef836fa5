//! Pixel contexts of CM revision 4 (doc/FORMAT.md 4.15.2), for the samples
//! after a PNM header. The model's mixer takes at most 32 inputs, so the
//! family chooses its inputs with care and mixes its many per-bit
//! predictions first in a small mixer of its own:
//!
//! - hashed contexts: the neighbours of the same channel and the values that
//!   neighbour predictors give (W, N, NW, NE, W + N - NW, Paeth, averages,
//!   CALIC's gradient-adjusted prediction with its texture pattern and
//!   error energy, N + NE - NNE), the same predictors moved by the previous
//!   channel's difference to its own neighbours at this pixel (channels
//!   move together), the pixel's earlier channels, and the predictions of
//!   two normalised LMS predictors per channel (fast and slow step) over a
//!   neighbourhood that includes the earlier channels of the pixel;
//! - per-bit inputs: the bytes that sixteen predictions imply (expected-byte
//!   inputs) and a direct table keyed by the channel, the fast predictor's
//!   byte and the partial byte (an SSE stage on the predicted value), mixed
//!   by the family's own mixer into one input; the table, and the two LMS
//!   predictors' expected bytes, also go to the model's mixer directly.
//!
//! Every context and input is declared in this file.

use super::expected::ExpectedBits;
use super::image::ImageInfo;
use super::pixel::sample;
use super::{ByteCtx, ContextModel, hash2};
use crate::mixer2::Mixer2;
use crate::prim::AdaptiveProbs;

/// Hashed contexts.
const CONTEXTS: usize = 23;
/// Predictions that give expected-byte inputs.
const EXPECTED: usize = 16;
/// Per-bit inputs to the model's mixer: the family's mix, the SSE table,
/// the two LMS predictors' expected bytes.
const BIT_INPUTS: usize = 4;
/// Predictions (the first of the expected ones) with distance inputs.
const NEAR: usize = 10;
/// Inputs of the family's mixer: the expected bytes, the distance inputs,
/// the SSE table, a bias.
const INNER: usize = EXPECTED + NEAR + 2;
/// Inputs of the LMS predictors.
const TAPS: usize = 16;
/// Fraction bits of their weights.
const FRAC: u32 = 16;
/// Channels with their own weights and statistics (more share the last).
const CHANNELS: usize = 4;
/// Step shifts of the two predictors (step `1 / 2^shift`).
const STEPS: [u32; 2] = [3, 6];

/// Recognises a complete BMP header (CM revision 4): `BM`, an info header
/// of at least 40 bytes, one plane of 24 or 32 bits per pixel without
/// compression (or bit fields at 32), and `h` exactly as long as the offset
/// of the pixels (so the pixels come next). Rows are padded to 4 bytes and
/// stored bottom-up (or top-down): either way the row before in the file is
/// a neighbouring row.
pub(crate) fn parse_bmp(h: &[u8]) -> Option<ImageInfo> {
    if h.len() < 34 || h[..2] != *b"BM" {
        return None;
    }
    let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
    let (offset, info) = (u32_at(10) as usize, u32_at(14) as usize);
    let (width, height) = (u32_at(18) as i32, u32_at(22) as i32);
    let (planes, bits, compression) = (u16_at(26), u16_at(28), u32_at(30));
    let ok = h.len() == offset
        && info >= 40
        && offset >= 14 + info
        && (1..=1 << 16).contains(&width)
        && height != 0
        && planes == 1
        && matches!((bits, compression), (24, 0) | (32, 0) | (32, 3));
    ok.then(|| {
        let pixel_bytes = usize::from(bits / 8);
        ImageInfo {
            start: offset,
            pixel_bytes,
            row_bytes: (width as usize * pixel_bytes).div_ceil(4) * 4,
        }
    })
}

/// Recognises a complete TGA header (CM revision 4): no colour map,
/// uncompressed true colour of 24 or 32 bits (type 2) or gray of 8 bits
/// (type 3), attribute bits 0 or 8, and `h` exactly as long as the header
/// with its image id (the pixels come next).
pub(crate) fn parse_tga(h: &[u8]) -> Option<ImageInfo> {
    if h.len() < 18 || h.len() != 18 + usize::from(h[0]) {
        return None;
    }
    let width = usize::from(u16::from_le_bytes([h[12], h[13]]));
    let height = u16::from_le_bytes([h[14], h[15]]);
    let ok = h[1] == 0
        && h[3..8].iter().all(|&b| b == 0)
        && matches!((h[2], h[16]), (2, 24) | (2, 32) | (3, 8))
        && matches!(h[17] & 0xCF, 0 | 8)
        && width > 0
        && height > 0;
    ok.then(|| {
        let pixel_bytes = usize::from(h[16] / 8);
        ImageInfo {
            start: h.len(),
            pixel_bytes,
            row_bytes: width * pixel_bytes,
        }
    })
}

/// One normalised LMS predictor per channel.
#[derive(Debug, Clone)]
struct Lms {
    w: [[i64; TAPS]; CHANNELS],
    shift: u32,
}

impl Lms {
    fn new(shift: u32) -> Self {
        let mut w = [[0i64; TAPS]; CHANNELS];
        for ch in &mut w {
            // Start as the gradient W + N - NW.
            ch[0] = 1 << FRAC;
            ch[1] = 1 << FRAC;
            ch[2] = -(1 << FRAC);
        }
        Lms { w, shift }
    }

    /// The clamped prediction for inputs `x` (centred at 0) of channel `ch`.
    #[inline]
    fn predict(&self, x: &[i64; TAPS], ch: usize) -> i64 {
        let dot: i64 = x.iter().zip(&self.w[ch]).map(|(a, b)| a * b).sum();
        ((dot >> FRAC) + 128).clamp(0, 255)
    }

    /// Learns error `e` (coded minus predicted) for inputs `x` whose squares
    /// sum to `norm - 256`.
    #[inline]
    fn update(&mut self, x: &[i64; TAPS], ch: usize, e: i64, norm: i64) {
        let d = norm << self.shift;
        for (w, &x) in self.w[ch].iter_mut().zip(x) {
            *w = (*w + ((e * x) << FRAC) / d).clamp(-(4 << FRAC), 4 << FRAC);
        }
    }
}

/// Buckets of the distance of a predicted byte to the partial byte's split
/// point: exact within 15, then by powers of two, either side.
pub(super) const DISTANCES: usize = 42;

/// Per-bit inputs from predicted bytes that know how far each prediction
/// lies from the value where the bit changes: for bit `i` with the bits so
/// far `prefix`, the byte is at least `mid = (prefix << (i + 1)) + 2^i` iff
/// the bit is 1, and the input is the probability of a 1 seen with this
/// distance `e - mid` (bucketed), in the family's situation.
#[derive(Debug, Clone)]
pub(super) struct DistanceBits<const K: usize> {
    expected: [i32; K],
    probs: AdaptiveProbs,
    base: usize,
    index: [usize; K],
}

impl<const K: usize> DistanceBits<K> {
    pub(super) fn new(situations: usize) -> Self {
        DistanceBits {
            expected: [0; K],
            probs: AdaptiveProbs::new(situations * 8 * K * DISTANCES, 255),
            base: 0,
            index: [0; K],
        }
    }

    pub(super) fn begin(&mut self, expected: [u32; K], situation: usize) {
        self.expected = expected.map(|e| e as i32);
        self.base = situation * 8;
    }

    #[inline]
    pub(super) fn predict(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let prefix = (c0 ^ (1 << (7 - i))) as i32;
        let mid = (prefix << (i + 1)) + (1 << i);
        for (k, (o, &e)) in out.iter_mut().zip(&self.expected).enumerate() {
            let d = e - mid;
            let a = d.unsigned_abs();
            let b = if a < 16 {
                a
            } else {
                12 + (32 - a.leading_zeros())
            } as usize;
            let q = if d >= 0 { 21 + b } else { b };
            let idx = ((self.base + i as usize) * K + k) * DISTANCES + q;
            self.index[k] = idx;
            *o = self.probs.stretched(idx);
        }
    }

    pub(super) fn update(&mut self, bit: u32) {
        for &idx in &self.index {
            self.probs.update(idx, bit);
        }
    }
}

/// What the family computes from the neighbourhood of one byte.
#[derive(Debug, Clone, Copy)]
struct Features {
    ch: usize,
    x: [i64; TAPS],
    /// The LMS predictions.
    lms: [i64; 2],
    /// Predictions that give expected-byte inputs.
    expected: [u32; EXPECTED],
    /// Values of the hashed contexts (before tagging).
    ctx: [u32; CONTEXTS],
    /// The family's mixer's selector context (channel and recent error).
    situation: usize,
    texture: u32,
}

/// The revision-4 pixel family.
#[derive(Debug, Clone)]
pub(crate) struct Pixel4Contexts {
    img: ImageInfo,
    lms: [Lms; 2],
    /// Recent absolute error of the fast predictor per channel (4 fraction
    /// bits).
    err: [u32; CHANNELS],
    /// The byte being coded, if its features await the coded byte.
    cur: Option<Features>,
    bits: ExpectedBits<EXPECTED>,
    near: DistanceBits<NEAR>,
    near_out: [i32; NEAR],
    sse: AdaptiveProbs,
    sse_index: usize,
    sse_base: usize,
    mixer: Mixer2,
    inner: [i32; EXPECTED],
    texture: u32,
}

fn clip(v: i64) -> u32 {
    v.clamp(0, 255) as u32
}

/// CALIC's gradient-adjusted prediction (GAP) of a sample from its
/// neighbours, and what the image families derive from it.
pub(crate) struct Gap {
    /// The prediction.
    pub gap: i64,
    /// The horizontal and vertical gradients it weighs.
    pub dh: i64,
    pub dv: i64,
    /// Which of N, W, NW, NE, NN, WW, 2N - NN and 2W - WW lie below the
    /// prediction (8 bits, N first).
    pub texture: u32,
    /// [`bucket`] of `4 * (dh + dv)`.
    pub energy: u32,
}

impl Gap {
    pub(crate) fn new(w: i64, n: i64, nw: i64, ne: i64, nn: i64, ww: i64, nne: i64) -> Self {
        let dh = (w - ww).abs() + (n - nw).abs() + (n - ne).abs();
        let dv = (w - nw).abs() + (n - nn).abs() + (ne - nne).abs();
        let gap = if dv - dh > 80 {
            w
        } else if dh - dv > 80 {
            n
        } else {
            let mut g = (w + n) * 4 + (ne - nw);
            let t = dv - dh;
            if t > 32 {
                g = (g + 8 * w) / 2;
            } else if t > 8 {
                g = (3 * g + 8 * w) / 4;
            } else if t < -32 {
                g = (g + 8 * n) / 2;
            } else if t < -8 {
                g = (3 * g + 8 * n) / 4;
            }
            g / 8
        };
        let texture = [n, w, nw, ne, nn, ww, 2 * n - nn, 2 * w - ww]
            .iter()
            .fold(0u32, |acc, &v| acc << 1 | u32::from(v < gap));
        let energy = bucket((dh + dv) as u32 * 4);
        Gap {
            gap,
            dh,
            dv,
            texture,
            energy,
        }
    }
}

/// Bucket of a recent absolute error (4 fraction bits): 0..=15.
pub(crate) fn bucket(e: u32) -> u32 {
    (32 - e.leading_zeros()).min(15)
}

/// Of W, N and NW, the one nearest to W + N - NW.
fn paeth(w: i64, n: i64, nw: i64) -> i64 {
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

impl Pixel4Contexts {
    /// The family for the image laid out as `img`.
    pub fn new(img: ImageInfo) -> Self {
        Pixel4Contexts {
            img,
            lms: STEPS.map(Lms::new),
            err: [0; CHANNELS],
            cur: None,
            bits: ExpectedBits::new(CHANNELS * 16),
            near: DistanceBits::new(CHANNELS * 16),
            near_out: [0; NEAR],
            sse: AdaptiveProbs::new(CHANNELS * 256 * 256, 255),
            sse_index: 0,
            sse_base: 0,
            mixer: Mixer2::new(
                INNER,
                &[CHANNELS * 16 * 8, CHANNELS * 256, CHANNELS * 256 * 8],
                1,
                6,
                2,
            ),
            inner: [0; EXPECTED],
            texture: 0,
        }
    }

    /// Everything the family derives from the byte's neighbourhood.
    fn features(&self, ctx: &ByteCtx<'_>) -> Features {
        let col = (ctx.pos - self.img.start) % self.img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let at = |dy: usize, dx: isize, dc: usize| i64::from(sample(&self.img, ctx, dy, dx, dc));
        let (w, n, nw, ne) = (at(0, 1, 0), at(1, 0, 0), at(1, 1, 0), at(1, -1, 0));
        let (ww, nn, nne, nnw) = (at(0, 2, 0), at(2, 0, 0), at(2, -1, 0), at(2, 1, 0));
        let (nee, nww) = (at(1, -2, 0), at(1, 2, 0));
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
        let x = [
            w, n, nw, ne, ww, nn, nne, nee, nnw, nww, px, pw, pn, pnw, pne, ppx,
        ]
        .map(|v| v - 128);
        let lms = [self.lms[0].predict(&x, ch), self.lms[1].predict(&x, ch)];
        let grad = w + n - nw;
        // CALIC's gradient-adjusted prediction.
        let Gap {
            gap,
            texture,
            energy,
            ..
        } = Gap::new(w, n, nw, ne, nn, ww, nne);
        // Predictions moved by the previous channel's difference at this
        // pixel (unmoved for the first channel, where all are 128).
        let (mw, mn) = (w + px - pw, n + px - pn);
        let (mne, mnw) = (ne + px - pne, nw + px - pnw);
        let mgrad = grad + px - (pw + pn - pnw);
        let ebucket = bucket(self.err[ch]);
        let nne_pred = n + ne - nne;
        let expected = [
            clip(lms[0]),
            clip(lms[1]),
            clip(gap),
            clip(mw),
            clip(mn),
            clip(mgrad),
            clip(mne),
            clip(nne_pred),
            clip(grad),
            clip(paeth(w, n, nw)),
            clip((w + n + 1) / 2),
            clip((w + ne + 1) / 2),
            clip(mnw),
            clip((mw + mne + 1) / 2),
            clip(w + ne - n),
            clip((lms[0] + gap + 1) / 2),
        ];
        let q = |v: i64| (v.clamp(-255, 255) + 256) as u32;
        let c = [
            // 0..=13: neighbours and neighbour predictors with the previous
            // channel at this pixel.
            hash2(w as u32, px as u32),
            hash2(n as u32, px as u32),
            hash2(w as u32, n as u32),
            hash2(clip(grad), px as u32),
            hash2(clip(mw), clip(mn)),
            clip(mgrad),
            hash2(clip(mne), clip(mnw) >> 2),
            hash2(n as u32, ne as u32),
            hash2(w as u32, nw as u32),
            hash2(clip(nne_pred), px as u32),
            hash2(paeth(w, n, nw) as u32, px as u32),
            hash2(clip((w + ne + 1) / 2), px as u32),
            hash2(px as u32, ppx as u32),
            hash2(clip(grad) >> 2, hash2(q(w - nw) >> 2, q(n - nw) >> 2)),
            // 14..=22: LMS, texture, more pairs.
            hash2(lms[0] as u32, ebucket),
            hash2(lms[1] as u32, px as u32 >> 2),
            hash2(clip(gap), energy << 8 | (texture >> 4)),
            hash2(texture, clip(gap) >> 3 | energy << 8),
            hash2(px as u32, hash2(q(w - pw) >> 2, q(n - pn) >> 2)),
            hash2(nw as u32, px as u32),
            hash2(ne as u32, px as u32),
            hash2(clip(mw), px as u32),
            hash2(clip(mn), q(px - pw)),
        ];
        Features {
            ch,
            x,
            lms,
            expected,
            ctx: c,
            situation: ch * 16 + ebucket as usize,
            texture,
        }
    }
}

impl ContextModel for Pixel4Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let f = self.features(ctx);
        let tag = (f.ch as u32) << 12 | 0xB00_0000;
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
        let at = |dy: usize, dx: isize| i64::from(sample(&self.img, ctx, dy, dx, 0));
        let (w, n, nw) = (at(0, 1), at(1, 0), at(1, 1));
        let busy = (w - nw).abs() + (n - nw).abs();
        col.min(3) * 16 + bucket(busy as u32) as usize
    }

    /// The fast LMS predictor's byte.
    fn apm_byte(&self, _ctx: &ByteCtx<'_>) -> Option<u32> {
        self.cur.map(|f| f.expected[0])
    }

    fn bit_inputs(&self) -> usize {
        BIT_INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let f = self.features(ctx);
        self.cur = Some(f);
        self.texture = f.texture;
        self.bits.begin(f.expected, f.situation);
        let mut near = [0; NEAR];
        near.copy_from_slice(&f.expected[..NEAR]);
        self.near.begin(near, f.situation);
        self.sse_base = (f.ch * 256 + f.expected[0] as usize) * 256;
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let situation = self.cur.map_or(0, |f| f.situation);
        self.bits.predict(c0, i, &mut self.inner);
        self.sse_index = self.sse_base + c0 as usize;
        let sse = self.sse.stretched(self.sse_index);
        self.near.predict(c0, i, &mut self.near_out);
        for (k, &x) in self.inner.iter().chain(&self.near_out).enumerate() {
            self.mixer.set(k, x);
        }
        self.mixer.set(EXPECTED + NEAR, sse);
        self.mixer.set(EXPECTED + NEAR + 1, 256);
        self.mixer.select(0, situation * 8 + i as usize);
        let ch = self.cur.map_or(0, |f| f.ch);
        self.mixer.select(1, ch * 256 + c0 as usize);
        self.mixer
            .select(2, (ch * 256 + self.texture as usize) * 8 + i as usize);
        self.mixer.select_final(0);
        out[0] = self.mixer.mix();
        out[1] = sse;
        out[2] = self.near_out[0];
        out[3] = self.near_out[1];
    }

    fn update_bit(&mut self, bit: u32) {
        self.bits.update(bit);
        self.near.update(bit);
        self.sse.update(self.sse_index, bit);
        self.mixer.update(bit);
    }

    /// Trains the predictors of the byte's channel on the coded byte.
    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        let Some(f) = self.cur.take() else {
            return;
        };
        let ch = f.ch;
        let norm: i64 = 256 + f.x.iter().map(|v| v * v).sum::<i64>();
        for (m, &pred) in self.lms.iter_mut().zip(&f.lms) {
            m.update(&f.x, ch, i64::from(byte) - pred, norm);
        }
        let e = (i64::from(byte) - f.lms[0]).unsigned_abs() as u32;
        self.err[ch] = (self.err[ch] * 7 + e * 16) / 8;
    }
}

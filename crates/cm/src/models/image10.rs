//! The 24/32-bit image family of CM revision 10 (doc/FORMAT.md 4.21.3: the
//! `max` line), for the samples after a PNM (P6, 8 bits), BMP or TGA header
//! of 3 or 4 bytes per pixel: revision 8's family (`image7.rs`, unchanged
//! and first) plus, after the ideas of published paq-style image models
//! (no code taken):
//!
//! - [`EXTRA`] hashed contexts: more neighbour predictors (the vertical
//!   and horizontal second-order extrapolations `2N - NN`, `2W - WW`, the
//!   diagonal gradients `N + NW - NNW`, `W + NW - NWW`, `2NE - NNEE`),
//!   the same predictors moved by the previous channel's difference at
//!   this pixel, predictors moved by the difference of the channel two
//!   back, and quantised tuples of the neighbours;
//! - [`PREDICTIONS`] more predicted bytes (those predictors), each with an
//!   expected-byte and a distance input, mixed by the family's own second
//!   mixer;
//! - APMs keyed by the channel, one predicted byte and the partial byte,
//!   on that mixer's output and on revision 8's family mix.
//!
//! Every context and input of the revision-10 part is declared in this
//! file: `Extra` computes the values, `hashes` and `predict_bit` turn them
//! into inputs.

use super::expected::ExpectedBits;
use super::forward_family;
use super::image::ImageInfo;
use super::image7::Image7Contexts;
use super::pixel::sample;
use super::pixel4::{DISTANCES, DistanceBits};
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::Apm;
use crate::logistic::stretch;
use crate::mixer2::Mixer2;

/// Hashed contexts after revision 8's.
const EXTRA: usize = 17;
/// Predicted bytes with expected-byte and distance inputs.
const PREDICTIONS: usize = 16;
/// Channels with their own statistics (more share the last).
const CHANNELS: usize = 4;
/// Per-bit inputs after revision 8's: the second mixer's output, and three
/// APMs' refinements (two of that output, one of revision 8's mix).
const BIT_INPUTS: usize = 4;
/// Inputs of the second mixer: expected bytes, distance inputs, bias.
const INNER: usize = 2 * PREDICTIONS + 1;
/// The second mixer's starting first-layer weight (16384 = 1.0).
const INNER_INITIAL_WEIGHT: i16 = 600;
/// The situations of the predictions' inputs: channel and local activity.
const SITUATIONS: usize = CHANNELS * 16;
/// The APMs' adaptation shift.
const APM_RATE: u32 = 7;

/// What the revision-10 part computes from the neighbourhood of one byte.
#[derive(Debug, Clone, Copy)]
struct Extra {
    ch: usize,
    /// Channel and activity bucket (below [`SITUATIONS`]).
    situation: usize,
    /// Predicted bytes.
    pred: [u32; PREDICTIONS],
    /// Values of the hashed contexts (before tagging).
    ctx: [u32; EXTRA],
}

/// The byte nearest to `v`.
fn clip(v: i32) -> u32 {
    v.clamp(0, 255) as u32
}

/// Bucket of a non-negative activity: 0..=15.
fn bucket(e: u32) -> usize {
    (32 - e.leading_zeros()).min(15) as usize
}

/// Three bytes in one word.
fn pack3(a: u32, b: u32, c: u32) -> u32 {
    a << 16 | b << 8 | c
}

/// One image of 3 or 4 bytes per pixel: revision 8's family and the
/// revision-10 contexts, predictions, mixer and APMs.
#[derive(Debug, Clone)]
pub(crate) struct Image10Contexts {
    base: Image7Contexts,
    img: ImageInfo,
    cur: Option<Extra>,
    bits: ExpectedBits<PREDICTIONS>,
    near: DistanceBits<PREDICTIONS>,
    expected_out: [i32; PREDICTIONS],
    near_out: [i32; PREDICTIONS],
    mixer: Mixer2,
    /// On the second mixer's output by (channel, prediction 13, partial
    /// byte) and (channel, prediction 8, partial byte); on revision 8's
    /// mix by (channel, prediction 14, partial byte).
    apms: [Apm; 3],
    apm_ctx: [usize; 3],
}

/// Bytes the revision-10 part allocates at most (for
/// `CmConfig::memory_bytes`, on top of `image7::MEMORY`): its three APMs,
/// its input tables and its mixer.
pub(crate) const MEMORY: u64 = (3 * CHANNELS * 256 * 256 * 33 * 2) as u64
    + (SITUATIONS * 8 * PREDICTIONS * (4 + DISTANCES) * 4) as u64
    + ((SITUATIONS * 8 + CHANNELS * 256) * 2 * INNER.div_ceil(32) * 64) as u64;

impl Image10Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        let sizes = [SITUATIONS * 8, CHANNELS * 256];
        let mut mixer = Mixer2::new(INNER, &sizes, 1, 6, 2);
        mixer.set_initial_weights(INNER_INITIAL_WEIGHT);
        Image10Contexts {
            base: Image7Contexts::new(img),
            img,
            cur: None,
            bits: ExpectedBits::new(SITUATIONS),
            near: DistanceBits::new(SITUATIONS),
            expected_out: [0; PREDICTIONS],
            near_out: [0; PREDICTIONS],
            mixer,
            apms: std::array::from_fn(|_| Apm::new(CHANNELS * 256 * 256, APM_RATE)),
            apm_ctx: [0; 3],
        }
    }

    /// Everything the revision-10 part derives from the byte's
    /// neighbourhood.
    fn extra(&self, ctx: &ByteCtx<'_>) -> Extra {
        let img = &self.img;
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let at = |dy: usize, dx: isize, dc: usize| sample(img, ctx, dy, dx, dc);
        // This channel's neighbours, then the previous channel's (`p`) and
        // the one before it (`q`) at the same places: 128 where the pixel
        // has no such channel, so that the differences vanish.
        let nb = |dc: usize| {
            if dc > col {
                [128; 12]
            } else {
                [
                    at(0, 0, dc),  // 0 x (the byte itself for dc 0: unused)
                    at(0, 1, dc),  // 1 W
                    at(1, 0, dc),  // 2 N
                    at(1, 1, dc),  // 3 NW
                    at(1, -1, dc), // 4 NE
                    at(0, 2, dc),  // 5 WW
                    at(2, 0, dc),  // 6 NN
                    at(2, -1, dc), // 7 NNE
                    at(2, 1, dc),  // 8 NNW
                    at(1, 2, dc),  // 9 NWW
                    at(2, -2, dc), // 10 NNEE
                    at(1, -2, dc), // 11 NEE
                ]
            }
        };
        let c = nb(0);
        let p = nb(1);
        let q = nb(2);
        let (w, n, nw, ne) = (c[1], c[2], c[3], c[4]);
        let (ww, nn, nne, nnw, nww, nnee) = (c[5], c[6], c[7], c[8], c[9], c[10]);
        let px = p[0];
        let qx = q[0];
        // A predictor applied to a channel's neighbours.
        let vert = |v: &[i32; 12]| 2 * v[2] - v[6];
        let horiz = |v: &[i32; 12]| 2 * v[1] - v[5];
        let grad = |v: &[i32; 12]| v[1] + v[2] - v[3];
        let nne_grad = |v: &[i32; 12]| v[2] + v[4] - v[7];
        let wne = |v: &[i32; 12]| v[1] + v[4] - v[2];
        let avg = |v: &[i32; 12]| v[1] + v[2];
        // The prediction of this channel moved by the previous channel's
        // error of the same predictor at this pixel.
        let moved = |f: &dyn Fn(&[i32; 12]) -> i32| f(&c) + px - f(&p);
        let pred = [
            clip(vert(&c)),
            clip(horiz(&c)),
            clip(n + nw - nnw),
            clip(w + nw - nww),
            clip(2 * ne - nnee),
            clip((w + ne + 1) >> 1),
            clip(w + qx - q[1]),
            clip(n + qx - q[2]),
            clip((avg(&c) + 2 * px - avg(&p) + 1) >> 1),
            clip(moved(&vert)),
            clip(moved(&horiz)),
            clip(moved(&nne_grad)),
            clip(moved(&wne)),
            clip((w + n + ne + nw + 2) >> 2),
            clip(px + ((w - p[1]) + (n - p[2]) + 1).div_euclid(2)),
            clip(grad(&c) + qx - grad(&q)),
        ];
        let activity = (w - nw).unsigned_abs()
            + (n - nw).unsigned_abs()
            + (n - ne).unsigned_abs()
            + (px - p[1]).unsigned_abs()
            + (px - p[2]).unsigned_abs();
        let (wu, nu, nwu, neu) = (w as u32, n as u32, nw as u32, ne as u32);
        let (pxu, nnu, wwu, nneu) = (px as u32, nn as u32, ww as u32, nne as u32);
        let ctxv = [
            hash2(pred[0], pxu),
            hash2(pred[1], pxu),
            hash2(pred[2], pxu),
            hash2(pred[3], pxu),
            hash2(pred[4], pxu),
            hash2(pred[6], pred[7]),
            hash2(pred[8], pred[14]),
            hash2(pred[9] >> 1, pred[10] >> 1),
            hash2(pred[11], pxu >> 2),
            pack3(wu >> 2, nu >> 2, nwu >> 2),
            hash2(pack3(wu >> 3, nu >> 3, neu >> 3), nwu >> 3),
            pack3(nu >> 2, nnu >> 2, neu >> 2) | 1 << 24,
            pack3(wu >> 2, wwu >> 2, nwu >> 2) | 2 << 24,
            pred[14],
            hash2(pred[12], pxu >> 3),
            hash2(pred[13], pred[15] >> 2),
            hash2(pack3(wu >> 1, nu >> 1, pxu >> 3), nneu >> 4),
        ];
        Extra {
            ch,
            situation: ch * 16 + bucket(activity),
            pred,
            ctx: ctxv,
        }
    }
}

impl Image10Contexts {
    /// The revision-10 contexts' hashes (tagged with the channel and the
    /// context's number).
    fn extra_hashes(e: &Extra, out: &mut [u32]) {
        let tag = (e.ch as u32) << 12 | 0xD00_0000;
        for ((h, &v), j) in out.iter_mut().zip(&e.ctx).zip(0u32..) {
            *h = hash2(v, tag | j << 4);
        }
    }
}

impl ContextModel for Image10Contexts {
    forward_family!(base; selector_size, selector, apm_byte);

    fn contexts(&self) -> usize {
        self.base.contexts() + EXTRA
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let (first, rest) = out.split_at_mut(self.base.contexts());
        self.base.hashes(ctx, first);
        Self::extra_hashes(&self.extra(ctx), rest);
    }

    fn bit_inputs(&self) -> usize {
        self.base.bit_inputs() + BIT_INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        let e = self.extra(ctx);
        self.bits.begin(e.pred, e.situation);
        self.near.begin(e.pred, e.situation);
        let row = |k: usize| (e.ch * 256 + e.pred[k] as usize) * 256;
        self.apm_ctx = [row(13), row(8), row(14)];
        self.cur = Some(e);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let (first, mine) = out.split_at_mut(self.base.bit_inputs());
        self.base.predict_bit(c0, i, first);
        let Some(e) = self.cur else {
            mine.fill(0);
            return;
        };
        self.bits.predict(c0, i, &mut self.expected_out);
        self.near.predict(c0, i, &mut self.near_out);
        for (k, &x) in self.expected_out.iter().chain(&self.near_out).enumerate() {
            self.mixer.set(k, x);
        }
        self.mixer.set(INNER - 1, 256);
        self.mixer.select(0, e.situation * 8 + i as usize);
        self.mixer.select(1, e.ch * 256 + c0 as usize);
        self.mixer.select_final(0);
        let mix = self.mixer.mix();
        let c = c0 as usize;
        mine[0] = mix;
        mine[1] = stretch(self.apms[0].refine_stretched(mix, self.apm_ctx[0] + c));
        mine[2] = stretch(self.apms[1].refine_stretched(mix, self.apm_ctx[1] + c));
        mine[3] = stretch(self.apms[2].refine_stretched(first[0], self.apm_ctx[2] + c));
    }

    fn prefetch_bit(&self, c0: u32, i: u32) {
        self.base.prefetch_bit(c0, i);
        if self.cur.is_some() {
            for (a, &row) in self.apms.iter().zip(&self.apm_ctx) {
                a.prefetch(row + c0 as usize);
            }
        }
    }

    fn update_bit(&mut self, bit: u32) {
        self.base.update_bit(bit);
        if self.cur.is_none() {
            return;
        }
        self.bits.update(bit);
        self.near.update(bit);
        self.mixer.update(bit);
        for a in &mut self.apms {
            a.update(bit);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        self.cur = None;
    }
}

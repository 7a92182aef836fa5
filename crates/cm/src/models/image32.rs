//! The 24/32-bit image family of CM revision 32 (doc/FORMAT.md 4.43.4: the
//! `max` line's fifteenth round), installed beside revision 22's family on
//! images of 3 or 4 bytes per pixel. After the public descriptions of
//! strong 24-bit image context-mixing models (one learnt map per pixel
//! predictor, keyed by the predictor's distance to the partial byte; no
//! code taken):
//!
//! - [`PLAIN`] integer predictors of the byte from this channel's causal
//!   neighbours (W, N, gradients, extrapolations, averages), each also
//!   moved by the colour correlation: `P + p1 - P(previous channel)` and,
//!   for [`P2_MOVED`], `P + p2 - P(two channels back)` where `p1`, `p2` are the channels
//!   already coded at this pixel and `P(channel)` is the same predictor
//!   evaluated on that channel's neighbours;
//! - per predictor `P` (clipped to `0..=255`) and bit, one adaptive
//!   probability (a count-driven rate that settles, `prim::AdaptiveProbs`)
//!   keyed by channel, `(P - b) mod 256` and the bit position, `b` the
//!   byte's bits so far in their final places with zeros below: it learns
//!   the shape of that predictor's residual relative to the partial byte;
//! - the maps' stretched probabilities mixed by the family's own mixer
//!   whose weight sets are chosen by (channel, bit), (channel, activity,
//!   bit) and (channel, recent error of the moved gradient, bit); its
//!   output is the family's one input to the model's mixer.
//!
//! Every predictor and input is declared in this file: `predictors`
//! computes them, `predict_bit` turns them into inputs.

use super::image::ImageInfo;
use super::pixel::sample;
use super::{ByteCtx, ContextModel};
use crate::mixer2::Mixer2;
use crate::prim::AdaptiveProbs;

/// Channels with their own maps (more share the last).
const CHANNELS: usize = 4;
/// Predictors on one channel's neighbourhood (see `Hood::plain`).
pub(super) const PLAIN: usize = 28;
/// Of those, the ones also moved by the channel two back.
const P2_MOVED: [usize; 7] = [0, 1, 2, 3, 6, 23, 27];
/// Maps: plain, moved by p1, moved by p2.
const MAPS: usize = 2 * PLAIN + P2_MOVED.len();
/// Per-bit inputs to the model's mixer: the family's mix.
const BIT_INPUTS: usize = 1;
/// Inputs of the family's mixer: the maps and a bias.
const INNER: usize = MAPS + 1;
/// The family's mixer's weight sets per selector: (channel, bit),
/// (channel, activity, bit), (channel, error level, bit).
const SETS: [usize; 3] = [CHANNELS * 8, CHANNELS * 16 * 8, CHANNELS * 16 * 8];
/// The family's mixer's learning rates (first layer in halves, final
/// layer) and its first layer's per-set boost (extra rate of a fresh set
/// in halves, and the update count at which it has halved).
const RATES: (i32, i32) = (3, 2);
const BOOST: (i32, i32) = (48, 32);
/// The first-layer weight the family's mixer starts with (16384 = 1.0).
const INNER_INITIAL_WEIGHT: i16 = 600;
/// Count at which a map's rate stops slowing.
const MAP_LIMIT: u32 = 1023;
/// Cells of one map: channel, `(P - b) mod 256`, bit.
const MAP_CELLS: usize = CHANNELS * 256 * 8;

/// Bytes the family allocates: its maps and its mixer's weight sets.
pub(crate) const MEMORY: u64 = (MAPS * MAP_CELLS * 4) as u64
    + ((CHANNELS * 8 + 2 * CHANNELS * 16 * 8) * INNER.next_multiple_of(32) * 2) as u64;

/// The neighbourhood of one channel (values `0..=255`, 0 off the image).
#[derive(Debug, Clone, Copy, Default)]
struct Hood {
    w: i32,
    n: i32,
    nw: i32,
    ne: i32,
    nn: i32,
    ww: i32,
    nnw: i32,
    nne: i32,
    nnn: i32,
    www: i32,
    nee: i32,
    nww: i32,
    nnww: i32,
    nnee: i32,
}

impl Hood {
    /// The neighbourhood `dc` bytes back of the byte at `ctx.pos`.
    fn at(img: &ImageInfo, ctx: &ByteCtx<'_>, dc: usize) -> Hood {
        let s = |dy: usize, dx: isize| sample(img, ctx, dy, dx, dc);
        Hood {
            w: s(0, 1),
            n: s(1, 0),
            nw: s(1, 1),
            ne: s(1, -1),
            nn: s(2, 0),
            ww: s(0, 2),
            nnw: s(2, 1),
            nne: s(2, -1),
            nnn: s(3, 0),
            www: s(0, 3),
            nee: s(1, -2),
            nww: s(1, 2),
            nnww: s(2, 2),
            nnee: s(2, -2),
        }
    }

    /// The [`PLAIN`] predictors (unclipped).
    fn plain(&self) -> [i32; PLAIN] {
        let h = self;
        [
            h.w,
            h.n,
            h.nw,
            h.ne,
            h.nn,
            h.ww,
            h.w + h.n - h.nw,
            h.w + h.ne - h.n,
            h.n + h.nw - h.nnw,
            h.n + h.ne - h.nne,
            h.n + h.nn - h.nnn,
            h.w + h.ww - h.www,
            h.w + h.nee - h.ne,
            h.nn + h.w - h.nnw,
            h.ne + h.nw - h.nn,
            h.nw + h.w - h.nww,
            2 * h.n - h.nn,
            2 * h.w - h.ww,
            2 * h.nw - h.nnww,
            2 * h.ne - h.nnee,
            3 * h.n - 3 * h.nn + h.nnn,
            (h.w + h.nee) >> 1,
            (h.w + 2 * h.ne - h.nne) >> 1,
            (h.n + h.w + 1) >> 1,
            ((h.w + h.n) * 3 - 2 * h.nw) >> 2,
            (h.n + h.ne + 1) >> 1,
            (h.w + h.ne + 1) >> 1,
            median(h.w, h.n, h.w + h.n - h.nw),
        ]
    }
}

/// The middle one of three values (LOCO-I's predictor when the third is
/// the gradient).
fn median(a: i32, b: i32, c: i32) -> i32 {
    a.max(b).min(a.min(b).max(c))
}

/// Bucket of a non-negative activity: its bit length, at most 15.
fn bucket(e: u32) -> usize {
    (32 - e.leading_zeros()).min(15) as usize
}

/// What the family computes for one byte.
#[derive(Debug, Clone, Copy)]
struct Now {
    /// The byte's channel (at most 3).
    ch: usize,
    /// Bucket of the local activity (0..=15).
    activity: usize,
    /// Bucket of the recent error of the moved gradient (0..=15).
    err: usize,
    /// First cell of each map for this byte's channel, plus the predicted
    /// byte times 8.
    base: [u32; MAPS],
}

/// One image of 3 or 4 bytes per pixel: the predictors' maps and mixer.
#[derive(Debug, Clone)]
pub(crate) struct Image32Contexts {
    img: ImageInfo,
    maps: AdaptiveProbs,
    mixer: Mixer2,
    cur: Option<Now>,
    /// The cells used for this bit.
    index: [u32; MAPS],
    /// Recent absolute error of the moved gradient per channel (4 fraction bits).
    err: [u32; CHANNELS],
}

impl Image32Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        let mut mixer = Mixer2::new(INNER, &SETS, 1, RATES.0, RATES.1);
        mixer.set_rounded(true);
        mixer.set_set_rates(BOOST.0, BOOST.1, 1);
        mixer.set_initial_weights(INNER_INITIAL_WEIGHT);
        Image32Contexts {
            img,
            maps: AdaptiveProbs::new(MAPS * MAP_CELLS, MAP_LIMIT),
            err: [0; CHANNELS],

            mixer,
            cur: None,
            index: [0; MAPS],
        }
    }

    /// Prediction `k` (below `2 * PLAIN`: plain, then moved by the
    /// previous channel) of the byte begun last, clipped; `None` outside an
    /// image (revision 40's family reads them: `image40.rs`).
    pub(super) fn prediction(&self, k: usize) -> Option<i32> {
        self.cur.map(|f| ((f.base[k] >> 3) & 255) as i32)
    }

    /// The byte's predictors, clipped, and its context.
    fn now(&self, ctx: &ByteCtx<'_>) -> Now {
        let img = &self.img;
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let h0 = Hood::at(img, ctx, 0);
        let p0 = h0.plain();
        let mut pred = [0i32; MAPS];
        pred[..PLAIN].copy_from_slice(&p0);
        // Moved by the previous channel (the first channel: unmoved).
        if col > 0 {
            let p1 = sample(img, ctx, 0, 0, 1);
            let q = Hood::at(img, ctx, 1).plain();
            for k in 0..PLAIN {
                pred[PLAIN + k] = p0[k] + p1 - q[k];
            }
        } else {
            pred[PLAIN..2 * PLAIN].copy_from_slice(&p0);
        }
        if col > 1 {
            let p2 = sample(img, ctx, 0, 0, 2);
            let q = Hood::at(img, ctx, 2).plain();
            for (j, &k) in P2_MOVED.iter().enumerate() {
                pred[2 * PLAIN + j] = p0[k] + p2 - q[k];
            }
        } else {
            for (j, &k) in P2_MOVED.iter().enumerate() {
                pred[2 * PLAIN + j] = pred[PLAIN + k];
            }
        }
        let activity = (h0.w - h0.nw).unsigned_abs()
            + (h0.n - h0.nw).unsigned_abs()
            + (h0.n - h0.ne).unsigned_abs()
            + (h0.w - h0.ww).unsigned_abs();
        let mut base = [0u32; MAPS];
        for (k, (b, &p)) in base.iter_mut().zip(&pred).enumerate() {
            *b =
                ((k * CHANNELS + ch) * MAP_CELLS / CHANNELS) as u32 | (p.clamp(0, 255) as u32) << 3;
        }
        Now {
            ch,
            activity: bucket(activity),
            err: bucket(self.err[ch] >> 2),
            base,
        }
    }
}

impl ContextModel for Image32Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        BIT_INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.cur = Some(self.now(ctx));
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let Some(f) = self.cur else {
            out.fill(0);
            return;
        };
        // The bits so far in their places, zeros below, times 8.
        let b = ((c0 ^ (1 << (7 - i))) << (i + 1)) << 3;
        for k in 0..MAPS {
            // (P - b) mod 256 in bits 3..11, the bit in bits 0..3.
            let cell = (f.base[k] & !0x7ff) | ((f.base[k].wrapping_sub(b)) & 0x7f8) | i;
            self.index[k] = cell;
            self.mixer.set(k, self.maps.stretched(cell as usize));
        }
        self.mixer.set(INNER - 1, 256);
        let bit = i as usize;
        self.mixer.select(0, f.ch * 8 + bit);
        self.mixer.select(1, (f.ch * 16 + f.activity) * 8 + bit);
        self.mixer.select(2, (f.ch * 16 + f.err) * 8 + bit);
        self.mixer.select_final(0);
        out[0] = self.mixer.mix();
    }

    fn update_bit(&mut self, bit: u32) {
        if self.cur.is_none() {
            return;
        }
        self.mixer.update(bit);
        for &cell in &self.index {
            self.maps.update(cell as usize, bit);
        }
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        if let Some(f) = self.cur.take() {
            let p = ((f.base[PLAIN + 6] >> 3) & 255) as i32;
            let e = (i32::from(byte) - p).unsigned_abs() * 16;
            self.err[f.ch] = (self.err[f.ch] * 7 + e) / 8;
        }
    }
}

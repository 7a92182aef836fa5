//! The 24/32-bit image family of CM revision 14 (doc/FORMAT.md 4.25.1: the
//! `max` line's sixth round), for the samples after a PNM (P6, 8 bits),
//! BMP or TGA header of 3 or 4 bytes per pixel: revision 10's family
//! (`image10.rs`, unchanged, whose contexts and per-bit inputs it passes
//! on as they are) plus the last word on the model's final probability
//! ([`ContextModel::refine_final`]), after the ideas of published
//! paq-style image models (a second mixing stage over the model's output
//! and the image predictors' own mixes; no code taken):
//!
//! - two APMs of the final probability keyed by (channel, predicted byte,
//!   partial byte), the predictions being the colour-corrected gradient
//!   `W + N - NW` moved by the previous channel's difference at this pixel
//!   and the previous channel's value moved by the mean of its W and N
//!   differences;
//! - a small mixer of the final probability, the revision-8 and
//!   revision-10 families' own mixes and APMs and those two APMs, whose
//!   weight sets are chosen by (channel, local activity, bit position) and
//!   by (channel, partial byte); its output is averaged with the final
//!   probability.
//!
//! Every input of the revision-14 part is declared in this file: `Now`
//! computes the values, `refine_final` turns them into inputs.

use super::forward_family;
use super::image::ImageInfo;
use super::image10::Image10Contexts;
use super::pixel::sample;
use super::{ByteCtx, ContextModel};
use crate::apm::Apm;
use crate::logistic::{squash, stretch};
use crate::mixer2::Mixer2;

/// Channels with their own statistics (more share the last).
const CHANNELS: usize = 4;
/// Of the revision-10 family's per-bit inputs (`image10.rs`: revision 8's
/// eight, then four of its own), the ones the last mixer also sees: the
/// revision-8 family's mix and APM (0, 1), the revision-10 family's mix
/// and its three APMs (8..12).
const SEEN: [usize; 6] = [0, 1, 8, 9, 10, 11];
/// Inputs of the last mixer: the final probability, [`SEEN`], the two
/// final APMs, a bias.
const LAST_INPUTS: usize = 1 + SEEN.len() + 2 + 1;
/// The last mixer's weight sets per selector: (channel, activity, bit)
/// and (channel, partial byte).
const LAST_SETS: [usize; 2] = [CHANNELS * 16 * 8, CHANNELS * 256];
/// The last mixer's starting first-layer weight (16384 = 1.0) and rates.
const LAST_WEIGHT: i16 = 1800;
const LAST_RATE: i32 = 6;
const LAST_FINAL_RATE: i32 = 2;
/// Revision 38 (doc/FORMAT.md 4.49.2): the last mixer's first-layer rate.
const REV38_LAST_RATE: i32 = 4;
/// The final APMs' adaptation shift.
const APM_RATE: u32 = 7;

/// Bytes the revision-14 part allocates beyond the revision-10 family's:
/// its two APMs and its last mixer.
pub(crate) const MEMORY: u64 = (2 * CHANNELS * 256 * 256 * 33 * 2) as u64
    + ((CHANNELS * 16 * 8 + CHANNELS * 256) * 2 * 64) as u64;

/// What the revision-14 part computes from the neighbourhood of one byte.
#[derive(Debug, Clone, Copy)]
struct Now {
    ch: usize,
    /// Activity bucket (0..=15).
    activity: usize,
    /// The APMs' predicted bytes.
    pred: [u32; 2],
}

/// The byte nearest to `v`.
fn clip(v: i32) -> u32 {
    v.clamp(0, 255) as u32
}

/// Bucket of a non-negative activity: 0..=15.
fn bucket(e: u32) -> usize {
    (32 - e.leading_zeros()).min(15) as usize
}

/// One image of 3 or 4 bytes per pixel: revision 10's family and the last
/// word.
#[derive(Debug, Clone)]
pub(crate) struct Image14Contexts {
    base: Image10Contexts,
    img: ImageInfo,
    cur: Option<Now>,
    /// The base family's per-bit inputs of [`SEEN`] for this bit.
    seen: [i32; SEEN.len()],
    apms: [Apm; 2],
    apm_ctx: [usize; 2],
    last: Mixer2,
    /// Whether `last` and the APMs refined this bit (and so learn).
    pending: bool,
}

impl Image14Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        let mut last = Mixer2::new(LAST_INPUTS, &LAST_SETS, 1, LAST_RATE, LAST_FINAL_RATE);
        last.set_initial_weights(LAST_WEIGHT);
        Image14Contexts {
            base: Image10Contexts::new(img),
            img,
            cur: None,
            seen: [0; SEEN.len()],
            apms: std::array::from_fn(|_| Apm::new(CHANNELS * 256 * 256, APM_RATE)),
            apm_ctx: [0; 2],
            last,
            pending: false,
        }
    }

    /// CM revision 38 (doc/FORMAT.md 4.49.2): the last mixer's first-layer
    /// updates rounded to nearest (section 4.19.1) and its first-layer
    /// rate [`REV38_LAST_RATE`] instead of [`LAST_RATE`] (final layer
    /// unchanged); the rest of the family as revision 14's.
    pub fn with_revision38_last_mixer(mut self) -> Self {
        self.last.set_rounded(true);
        self.last.set_rates(REV38_LAST_RATE, LAST_FINAL_RATE);
        self
    }

    /// Everything the revision-14 part derives from the byte's
    /// neighbourhood.
    fn now(&self, ctx: &ByteCtx<'_>) -> Now {
        let img = &self.img;
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let at = |dy: usize, dx: isize, dc: usize| sample(img, ctx, dy, dx, dc);
        let (w, n, nw, ne) = (at(0, 1, 0), at(1, 0, 0), at(1, 1, 0), at(1, -1, 0));
        // The previous channel at this pixel and its neighbours (128 for
        // the first channel, so that the differences vanish).
        let (px, pw, pn, pnw) = if col > 0 {
            (at(0, 0, 1), at(0, 1, 1), at(1, 0, 1), at(1, 1, 1))
        } else {
            (128, 128, 128, 128)
        };
        let pred = [
            clip(w + n - nw + px - (pw + pn - pnw)),
            clip(px + ((w - pw) + (n - pn) + 1).div_euclid(2)),
        ];
        let activity = (w - nw).unsigned_abs()
            + (n - nw).unsigned_abs()
            + (n - ne).unsigned_abs()
            + (px - pw).unsigned_abs()
            + (px - pn).unsigned_abs();
        Now {
            ch,
            activity: bucket(activity),
            pred,
        }
    }
}

impl ContextModel for Image14Contexts {
    forward_family!(base; contexts, hashes, selector_size, selector, apm_byte, bit_inputs);

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        let e = self.now(ctx);
        let row = |k: usize| (e.ch * 256 + e.pred[k] as usize) * 256;
        self.apm_ctx = [row(0), row(1)];
        self.cur = Some(e);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.base.predict_bit(c0, i, out);
        for (s, &k) in self.seen.iter_mut().zip(&SEEN) {
            *s = out[k];
        }
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
        if self.pending {
            self.last.update(bit);
            for a in &mut self.apms {
                a.update(bit);
            }
            self.pending = false;
        }
    }

    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        let Some(e) = self.cur else {
            return p;
        };
        let d = stretch(p.clamp(1, 65535));
        let c = c0 as usize;
        self.last.set(0, d);
        for (k, &x) in self.seen.iter().enumerate() {
            self.last.set(1 + k, x);
        }
        for k in 0..2 {
            let a = self.apms[k].refine_stretched(d, self.apm_ctx[k] + c);
            self.last
                .set(1 + SEEN.len() + k, stretch(a.clamp(1, 65535)));
        }
        self.last.set(LAST_INPUTS - 1, 256);
        // The bit position: 7 for the first bit of the byte.
        let i = 7 - (31 - c0.leading_zeros()) as usize;
        self.last.select(0, ((e.ch * 16 + e.activity) << 3) + i);
        self.last.select(1, e.ch * 256 + c);
        self.last.select_final(0);
        self.pending = true;
        let m = squash(self.last.mix());
        ((m + p) / 2).clamp(1, 65535)
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        self.cur = None;
    }
}

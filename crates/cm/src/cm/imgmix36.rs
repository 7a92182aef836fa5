//! CM revision 36 (doc/FORMAT.md 4.47.1): the mixing and refinement of a
//! detected image of 3 or 4 bytes per pixel (`DataKind::Image`), which
//! until now used the same mixer layout as every detected kind (final
//! layer by bit position, byte-keyed APMs: 4.23.1). Three changes, all
//! integer, each measured alone on crops of kodim23 first:
//!
//! - **Final layer by channel**: the main mixer's final layer has 32 weight
//!   sets, `ch * 8 + i` (channel `ch` = the byte's column in its pixel,
//!   at most 3; `i` the bit index, 7 first) instead of 8 by `i`.
//! - **Second final layer** (as revision 34's for the configured families,
//!   4.45.1, but its own selector): a small mixer over the main mixer's
//!   per-selector outputs and a bias (256), weights 16.16 starting at
//!   `65536 / k` for `k` selectors (the bias's at 0), learning rate
//!   [`L2_LR`] (1); its weight set is `(ch * 8 + i) * 14 + dist`, `dist` the
//!   bucket of `g - t`: `g` the gradient `W + N - NW` (clamped to
//!   `0..=255`) moved by the previous channel at this pixel
//!   (`g + p1 - g1`, `g1` the same gradient on the previous channel's
//!   neighbours, clamped again; unmoved on the first channel), `t` the
//!   least byte whose bit `i` is 1 given the bits so far; the bucket is
//!   `min(bitlen(|g - t|), 6) + 7 * (g < t)`. The main mixer's stretched
//!   output `d` becomes `(d + d2) >> 1`.
//! - **Image APMs** after every other refinement (the families' last
//!   ones included): two APMs (rate 6, 33 points per row) keyed by
//!   `(ch << 8 | v) << 8 | c0` for `v` = W moved by the previous channel
//!   (`clamp(W + p1 - W1)`) and N moved likewise (`clamp(N + p1 - N1)`;
//!   unmoved on the first channel), `c0` the partial byte with its
//!   leading 1. The coded probability is `(2p + a + b + 2) / 4` clamped
//!   to `1..=65535`.
//!
//! Measured and left out (FORMAT 4.47.1): a learned mix of the stages,
//! a faster or slower main mixer, second layers selected by (channel,
//! partial byte), activity or an error level, several second layers at
//! once, and APMs keyed by the plain or moved gradient or W alone.
//!
//! The model calls these helpers from `install`, `code_byte`,
//! `predict_bit`, `update_bit` and `end_byte` (one line each).

use super::mix34::{MAXN, Small, layer2_step};
use super::{Cm, CmStream};
use crate::apm::Apm;
use crate::logistic::stretch;
use crate::matcher::Visibility;
use crate::models::ByteCtx;
use crate::models::detect::DataKind;
use crate::models::image::ImageInfo;
use crate::models::pixel::sample;

/// Channels with their own sets (more share the last).
const CHANNELS: usize = 4;
/// Buckets of the prediction's distance to the bit's threshold.
const DIST: usize = 14;
/// The second layer's weight sets: channel, bit, distance bucket.
const L2_SETS: usize = CHANNELS * 8 * DIST;
/// The second layer's learning rate.
const L2_LR: i32 = 1;
/// The main mixer's final-layer sets for an image: channel and bit.
const FINAL_SETS: usize = CHANNELS * 8;
/// How many image APMs, and their contexts (channel, value, partial byte).
const APMS: usize = 2;
const APM_CONTEXTS: usize = CHANNELS * 256 * 256;
/// The image APMs' adaptation shift.
const APM_RATE: u32 = 6;
/// The weight of the APMs' input in their average.
const APM_KEEP: u32 = 2;

/// Bytes [`ImgMix36`] allocates (counted in `CmConfig::memory_bytes`).
pub(crate) const MEMORY: u64 = (L2_SETS * MAXN * 4 + APMS * APM_CONTEXTS * 33 * 2) as u64;

/// What the stage computes for one byte.
#[derive(Debug, Clone, Copy, Default)]
struct Now {
    /// The byte's channel (at most 3).
    ch: usize,
    /// The moved gradient prediction (`0..=255`).
    pred: i32,
    /// The image APMs' contexts without the partial byte.
    apm: [usize; APMS],
}

/// Revision 36's mixing and refinement of a detected 24/32-bit image.
#[derive(Debug, Clone)]
pub(crate) struct ImgMix36 {
    img: ImageInfo,
    layer2: Small,
    apms: [Apm; APMS],
    now: Now,
}

impl ImgMix36 {
    /// A fresh stage for image `img` whose main mixer has `sets` selectors.
    fn new(img: ImageInfo, sets: usize) -> Self {
        ImgMix36 {
            img,
            layer2: Small::new(sets + 1, L2_SETS, L2_LR, 65536 / sets as i32),
            apms: std::array::from_fn(|_| Apm::new(APM_CONTEXTS, APM_RATE)),
            now: Now::default(),
        }
    }

    /// Computes the byte's contexts from its causal neighbours.
    fn begin(&mut self, ctx: &ByteCtx<'_>) {
        let img = &self.img;
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let s = |dy: usize, dx: isize, dc: usize| sample(img, ctx, dy, dx, dc);
        let (w, n, nw) = (s(0, 1, 0), s(1, 0, 0), s(1, 1, 0));
        let grad = (w + n - nw).clamp(0, 255);
        let (pred, mw, mn) = if col > 0 {
            let (p1, w1, n1, nw1) = (s(0, 0, 1), s(0, 1, 1), s(1, 0, 1), s(1, 1, 1));
            (
                (grad + p1 - (w1 + n1 - nw1).clamp(0, 255)).clamp(0, 255),
                (w + p1 - w1).clamp(0, 255),
                (n + p1 - n1).clamp(0, 255),
            )
        } else {
            (grad, w, n)
        };
        let c = |v: i32| ch << 8 | v as usize;
        self.now = Now {
            ch,
            pred,
            apm: [c(mw), c(mn)],
        };
    }

    /// The second layer's weight set at bit `i` (partial byte `c0`).
    #[inline]
    fn l2_set(&self, c0: u32, i: u32) -> usize {
        let known = c0 ^ (1 << (7 - i));
        let t = ((known << (i + 1)) | (1 << i)) as i32;
        let dd = self.now.pred - t;
        let b = (32 - dd.unsigned_abs().leading_zeros()).min(6) as usize + 7 * usize::from(dd < 0);
        (self.now.ch * 8 + i as usize) * DIST + b
    }

    /// Refines `p` with the image APMs.
    #[inline]
    fn refine(&mut self, p: u32, c0: u32) -> u32 {
        let d = stretch(p);
        let mut sum = p * APM_KEEP;
        for (a, &ctx) in self.apms.iter_mut().zip(&self.now.apm) {
            sum += a.refine_stretched(d, ctx << 8 | c0 as usize);
        }
        let n = APMS as u32 + APM_KEEP;
        ((sum + n / 2) / n).clamp(1, 65535)
    }

    /// Trains the second layer and the APMs on `bit`.
    #[inline]
    fn update(&mut self, bit: u32) {
        self.layer2.update(bit);
        for a in &mut self.apms {
            a.update(bit);
        }
    }

    /// Walks the learned state (the second layer, then the APMs) in a
    /// prior's snapshot.
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.layer2.visit(v);
        for a in &mut self.apms {
            a.visit(v);
        }
    }
}

impl Cm {
    /// Revision 36: notes a detected image of 3 or 4 bytes per pixel
    /// (anything else clears it); called before its families install.
    pub(super) fn imgmix36_detected(&mut self, kind: &DataKind) {
        self.img36_info = match kind {
            DataKind::Image(i) if self.config.since(36) && matches!(i.pixel_bytes, 3 | 4) => {
                Some(*i)
            }
            _ => None,
        };
    }

    /// Revision 36: the main mixer's final-layer sets (`sets` otherwise).
    pub(super) fn imgmix36_final_sets(&self, sets: usize, configured: bool) -> usize {
        match self.img36_info {
            Some(_) if !configured => FINAL_SETS,
            _ => sets,
        }
    }

    /// Revision 36: sets up the image stage once the main mixer is built
    /// (fresh at each install; none for configured families).
    pub(super) fn imgmix36_install(&mut self, configured: bool) {
        let sets = self.mixer.set_outputs().len();
        self.img36 = match self.img36_info {
            Some(i) if !configured => Some(Box::new(ImgMix36::new(i, sets))),
            _ => None,
        };
    }

    /// Revision 36: the byte's image contexts.
    #[inline]
    pub(super) fn imgmix36_begin_byte(
        &mut self,
        st: &CmStream,
        data: &[u8],
        pos: usize,
        vis: &dyn Visibility,
    ) {
        if let Some(m) = self.img36.as_mut() {
            m.begin(&ByteCtx { data, pos, st, vis });
        }
    }

    /// Revision 36: the final layer's set at bit `i` (`i` without the
    /// image stage).
    #[inline]
    pub(super) fn imgmix36_final(&self, i: u32) -> usize {
        match self.img36.as_ref() {
            Some(m) => m.now.ch * 8 + i as usize,
            None => i as usize,
        }
    }

    /// Revision 36: the second layer over the main mixer's set outputs,
    /// averaged with its stretched `d`; `(d, pm)` unchanged without the
    /// image stage.
    #[inline]
    pub(super) fn imgmix36_layer2(&mut self, d: i32, pm: u32, c0: u32, i: u32) -> (i32, u32) {
        let Some(m) = self.img36.as_mut() else {
            return (d, pm);
        };
        let set = m.l2_set(c0, i);
        layer2_step(&mut m.layer2, self.mixer.set_outputs(), d, set)
    }

    /// Revision 36: the image APMs' refinement of `p` (`p` without the
    /// image stage).
    #[inline]
    pub(super) fn imgmix36_refine(&mut self, p: u32, c0: u32) -> u32 {
        match self.img36.as_mut() {
            Some(m) => m.refine(p, c0),
            None => p,
        }
    }

    /// Revision 36: trains the image stage on `bit`.
    #[inline]
    pub(super) fn imgmix36_update(&mut self, bit: u32) {
        if let Some(m) = self.img36.as_mut() {
            m.update(bit);
        }
    }
}

//! The 24/32-bit image family of CM revision 18 (doc/FORMAT.md 4.29.2: the
//! `max` line's eighth round): revision 16's family (`image16.rs`,
//! unchanged, whose contexts, per-bit inputs, selector and refinement it
//! passes on as they are) plus an online least-squares predictor over
//! another causal neighbourhood, after the published descriptions of
//! strong 24-bit image context-mixing models (several OLS predictors per
//! channel with different neighbourhoods, SSE keyed by a prediction,
//! mixer weight sets chosen by more than one selector; no code taken):
//!
//! - one integer OLS predictor per channel (`ols.rs`) over [`TAPS`]: this
//!   channel's neighbours, the channels already coded at this pixel and
//!   theirs at the neighbours;
//! - [`CONTEXTS`] hashed contexts of its prediction with its residuals at
//!   W and N and with the previous channel at this pixel;
//! - a second mixer selector (channel, error level, bit position, the
//!   byte's top two bits once known);
//! - an APM on the final probability keyed by the prediction.
//!
//! Every context and input of the revision-18 part is declared in this
//! file: `Now` computes the values, `hashes`, `kind_selector2` and
//! `refine_final` turn them into inputs.

use super::image::ImageInfo;
use super::image16::Image16Contexts;
use super::ols::Ols;
use super::pixel::{coded_neighbour, sample};
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::AveragedApm;

/// Channels with their own statistics (more share the last).
const CHANNELS: usize = 4;
/// The OLS predictor's neighbourhood `(dy, dx, dc)` (`dc` counts bytes
/// back from this channel, as `pixel::sample`).
const TAPS: [(usize, isize, usize); 18] = [
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
    (0, 0, 1),
    (0, 1, 1),
    (1, 0, 1),
    (1, 1, 1),
    (1, -1, 1),
    (0, 0, 2),
    (0, 1, 2),
    (1, 0, 2),
];
/// Features of the OLS predictor.
const FEATURES: usize = TAPS.len();
/// Its covariance decays by `2^-DECAY` per sample; solved every `EVERY`.
const DECAY: u32 = 10;
const EVERY: u32 = 16;
/// Hashed contexts.
const CONTEXTS: usize = 2;
/// Error levels.
const LEVELS: usize = 16;
/// Weight sets of the second selector: channel, level, bit, top bits.
const SELECTOR2: usize = CHANNELS * LEVELS * 8 * 4;
/// Most positions the residual ring holds.
const RING_MAX: usize = 1 << 20;
/// The final APM's adaptation shift.
const APM_RATE: u32 = 7;

/// Bytes the revision-18 part allocates beyond revision 16's family: the
/// OLS systems, the residual ring and the APM (the second selector's
/// weight sets are the mixer's).
pub(crate) const MEMORY: u64 = (CHANNELS * (FEATURES * FEATURES + FEATURES) * 8 * 2) as u64
    + RING_MAX as u64
    + (CHANNELS * 256 * 256 * 33 * 2) as u64
    + (SELECTOR2 * 128 * 2) as u64;

/// What the revision-18 part computes from the neighbourhood of one byte.
#[derive(Debug, Clone, Copy)]
struct Now {
    ch: usize,
    /// The predictor's features, `16 (v - 128)` each.
    x: [i32; FEATURES],
    /// Its prediction of `16 (v - 128)`, and that as a byte.
    fine: i32,
    byte: u32,
    level: usize,
    /// Its residuals at W and N (bytes, clamped to -127..=127).
    rw: i32,
    rn: i32,
    /// The previous channel at this pixel (the first channel: W).
    px: i32,
}

/// Bucket of a non-negative value: 0..=15.
fn bucket(e: u32) -> usize {
    (32 - e.leading_zeros()).min(15) as usize
}

/// One image of 3 or 4 bytes per pixel: revision 16's family and the OLS
/// predictor's contexts, selector and APM.
#[derive(Debug, Clone)]
pub(crate) struct Image18Contexts {
    base: Image16Contexts,
    img: ImageInfo,
    /// One predictor per channel.
    ols: Vec<Ols>,
    /// The predictor's residual per position (modulo the ring).
    ring: Vec<i8>,
    cur: Option<Now>,
    apm: AveragedApm,
    apm_row: usize,
}

impl Image18Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        let ring = (img.row_bytes.saturating_mul(3))
            .next_power_of_two()
            .min(RING_MAX);
        Image18Contexts {
            base: Image16Contexts::new(img),
            img,
            ols: (0..CHANNELS)
                .map(|_| Ols::new(FEATURES, &[FEATURES], DECAY, EVERY, 0))
                .collect(),
            ring: vec![0; ring],
            cur: None,
            apm: AveragedApm::new(CHANNELS * 256 * 256, APM_RATE),
            apm_row: 0,
        }
    }

    /// The residual kept `dy` rows up and `dx` pixels left (0 outside the
    /// image or where the decoder lacks the byte).
    fn resid(&self, ctx: &ByteCtx<'_>, dy: usize, dx: isize) -> i32 {
        coded_neighbour(&self.img, ctx, dy, dx)
            .map_or(0, |p| i32::from(self.ring[p & (self.ring.len() - 1)]))
    }

    /// The current byte's channel, OLS prediction of `16 (v - 128)` and
    /// error level, between `begin_byte` and `observe` (revision 22's
    /// family reads them, doc/FORMAT.md 4.33.2).
    pub(crate) fn prediction(&self) -> Option<(usize, i32, usize)> {
        self.cur.map(|b| (b.ch, b.fine, b.level))
    }

    /// Everything the revision-18 part derives from the byte's
    /// neighbourhood.
    fn now(&self, ctx: &ByteCtx<'_>) -> Now {
        let img = &self.img;
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let x = TAPS.map(|(dy, dx, dc)| 16 * (sample(img, ctx, dy, dx, dc) - 128));
        let fine = self.ols[ch].predict(0, &x);
        let (rw, rn) = (self.resid(ctx, 0, 1), self.resid(ctx, 1, 0));
        let (rnw, rne) = (self.resid(ctx, 1, 1), self.resid(ctx, 1, -1));
        let e =
            2 * (rw.unsigned_abs() + rn.unsigned_abs()) + rnw.unsigned_abs() + rne.unsigned_abs();
        let px = if col > 0 {
            sample(img, ctx, 0, 0, 1)
        } else {
            sample(img, ctx, 0, 1, 0)
        };
        Now {
            ch,
            x,
            fine,
            byte: (128 + ((fine + 8) >> 4)).clamp(0, 255) as u32,
            level: bucket(e),
            rw,
            rn,
            px,
        }
    }
}

impl ContextModel for Image18Contexts {
    fn contexts(&self) -> usize {
        self.base.contexts() + CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let n = self.base.contexts();
        self.base.hashes(ctx, &mut out[..n]);
        let b = self.now(ctx);
        let q = |r: i32| (r.clamp(-15, 15) + 16) as u32;
        let v = [
            (b.byte >> 1) | q(b.rw) << 8 | q(b.rn) << 13,
            b.byte | (b.px as u32) << 8,
        ];
        let tag = (b.ch as u32) << 12 | 0xF00_0000;
        for ((h, &v), j) in out[n..].iter_mut().zip(&v).zip(0u32..) {
            *h = hash2(v, tag | j << 4);
        }
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

    fn kind_selector_size(&self) -> usize {
        self.base.kind_selector_size()
    }

    fn kind_selector(&self, c0: u32, i: u32) -> usize {
        self.base.kind_selector(c0, i)
    }

    fn kind_selector2_size(&self) -> usize {
        SELECTOR2
    }

    fn kind_selector2(&self, c0: u32, i: u32) -> usize {
        // The byte's top two bits once known (before: the bits so far
        // with their leading 1).
        let top = (c0 >> (7 - i).saturating_sub(2)) & 3;
        self.cur.map_or(0, |b| {
            ((b.ch * LEVELS + b.level) * 8 + i as usize) * 4 + top as usize
        })
    }

    fn bit_inputs(&self) -> usize {
        self.base.bit_inputs()
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        let b = self.now(ctx);
        self.apm_row = (b.ch * 256 + b.byte as usize) * 256;
        self.cur = Some(b);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.base.predict_bit(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.base.update_bit(bit);
        self.apm.update(bit);
    }

    fn prefetch_bit(&self, c0: u32, i: u32) {
        self.base.prefetch_bit(c0, i);
        if self.cur.is_some() {
            self.apm.prefetch(self.apm_row + c0 as usize);
        }
    }

    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        let p = self.base.refine_final(p, c0);
        if self.cur.is_none() {
            return p;
        }
        self.apm.refine(p, self.apm_row + c0 as usize)
    }

    /// Teaches the channel's predictor the byte and keeps its residual.
    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        let Some(b) = self.cur.take() else {
            return;
        };
        let s = 16 * (i32::from(byte) - 128);
        self.ols[b.ch].update(&b.x, s);
        let m = self.ring.len() - 1;
        self.ring[pos & m] = ((s - b.fine) >> 4).clamp(-127, 127) as i8;
    }
}

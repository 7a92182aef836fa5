//! The 24/32-bit image family of CM revision 42 (doc/FORMAT.md 4.53.3),
//! installed in place of revision 40's family (`image40.rs`) on images of 3
//! or 4 bytes per pixel: revision 32's family (held and run first,
//! unchanged) and the two parts of revision 40's family that paid for
//! their time, without its ranking of predictors:
//!
//! - two learnt maps (count-driven adaptive probabilities), per-bit inputs
//!   of the model's mixer after revision 32's one, keyed by channel, bit
//!   and (a) the last byte's residual against its moved gradient with the
//!   moved gradient's distance to the bit's threshold (quarter levels),
//!   (b) the distances of the moved W and moved N predictions (half
//!   levels);
//! - two APMs (interpolated, rate 7) chained on the final probability and
//!   each averaged with its input, in the maps' rows.
//!
//! The keys are revision 40's `k4` and `k5` (4.51.3) exactly.
//!
//! Every input is declared in this file.

use super::image::ImageInfo;
use super::image22::threshold;
use super::image32::{Image32Contexts, PLAIN};
use super::{ByteCtx, ContextModel};
use crate::apm::AveragedApm;
use crate::prim::AdaptiveProbs;

/// Channels with their own contexts (more share the last).
const CHANNELS: usize = 4;
/// Revision 32's plain predictors used, moved by the previous channel: W,
/// N and the gradient W + N - NW (revision 40's `R_8`, `R_9`, `R_11`).
const MOVED_W: usize = PLAIN;
/// Moved N (see [`MOVED_W`]).
const MOVED_N: usize = PLAIN + 1;
/// Moved gradient (see [`MOVED_W`]).
const MOVED_G: usize = PLAIN + 6;
/// Distance buckets of the two-distance key (half levels, +-8 levels).
const DIST2: usize = 32;
/// Distance buckets of the residual key (quarter levels, +-8 levels).
const DIST1: usize = 64;
/// Residual buckets (-7..=8).
const RESID: usize = 16;
/// Rows of the residual key: channel, bit, residual, distance.
const ROWS_R: usize = CHANNELS * 8 * RESID * DIST1;
/// Rows of the two-distance key: channel, bit, two distances.
const ROWS_D: usize = CHANNELS * 8 * DIST2 * DIST2;
/// The APMs' adaptation shift.
const APM_RATE: u32 = 7;
/// Learnt maps (per-bit inputs after revision 32's one).
const MAPS: usize = 2;
/// Count at which a map's rate stops slowing.
const MAP_LIMIT: u32 = 1023;

/// Bytes the family allocates beyond revision 32's (counted separately):
/// its APMs (33 points of 2 bytes per row) and its maps (4 bytes per cell).
pub(crate) const MEMORY: u64 = ((ROWS_R + ROWS_D) * 33 * 2 + (ROWS_R + ROWS_D) * 4) as u64;

/// What the family computes for one byte.
#[derive(Debug, Clone, Copy)]
struct Now {
    /// The byte's channel (at most 3).
    ch: usize,
    /// Moved W, moved N and moved gradient, sixteenths of a level.
    w16: i32,
    n16: i32,
    g16: i32,
}

/// One image of 3 or 4 bytes per pixel: revision 32's family, the two maps
/// and the two APMs.
#[derive(Debug, Clone)]
pub(crate) struct Image42Contexts {
    /// Revision 32's family, run first (its one per-bit input comes first).
    base: Image32Contexts,
    img: ImageInfo,
    cur: Option<Now>,
    /// The moved gradient of the current byte (clipped), for its residual.
    gradient: i32,
    /// The last coded byte's residual against its moved gradient (0 before
    /// the first).
    last_resid: i32,
    apm_r: AveragedApm,
    apm_d: AveragedApm,
    /// The [`MAPS`] learnt maps (residual key, then two-distance key).
    maps: AdaptiveProbs,
    /// The rows (and cells) of this bit: residual key, two-distance key.
    rows: [usize; MAPS],
}

impl Image42Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        Image42Contexts {
            base: Image32Contexts::new(img),
            img,
            cur: None,
            gradient: 0,
            last_resid: 0,
            apm_r: AveragedApm::new(ROWS_R, APM_RATE),
            apm_d: AveragedApm::new(ROWS_D, APM_RATE),
            maps: AdaptiveProbs::new(ROWS_R + ROWS_D, MAP_LIMIT),
            rows: [0; MAPS],
        }
    }

    /// The rows of bit `i` with partial byte `c0`: `(s * 16 + r) * 64 +
    /// q1(G - t)` and `(s * 32 + q2(W - t)) * 32 + q2(N - t)`.
    fn rows(&self, f: &Now, c0: u32, i: u32) -> [usize; MAPS] {
        let t = threshold(c0, i);
        let q2 = |d: i32| ((d >> 3).clamp(-16, 15) + 16) as usize;
        let q1 = |d: i32| ((d >> 2).clamp(-32, 31) + 32) as usize;
        let s = f.ch * 8 + i as usize;
        let r = (self.last_resid.clamp(-7, 8) + 7) as usize;
        [
            (s * RESID + r) * DIST1 + q1(f.g16 - t),
            (s * DIST2 + q2(f.w16 - t)) * DIST2 + q2(f.n16 - t),
        ]
    }
}

impl ContextModel for Image42Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        self.base.bit_inputs() + MAPS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        self.cur = self.base.prediction(MOVED_G).map(|g| {
            let col = (ctx.pos - self.img.start) % self.img.pixel_bytes;
            self.gradient = g;
            let p = |k| 16 * self.base.prediction(k).unwrap_or(0);
            Now {
                ch: col.min(CHANNELS - 1),
                w16: p(MOVED_W),
                n16: p(MOVED_N),
                g16: 16 * g,
            }
        });
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let (first, out) = out.split_at_mut(self.base.bit_inputs());
        self.base.predict_bit(c0, i, first);
        let Some(f) = self.cur else {
            out.fill(0);
            return;
        };
        self.rows = self.rows(&f, c0, i);
        out[0] = self.maps.stretched(self.rows[0]);
        out[1] = self.maps.stretched(ROWS_R + self.rows[1]);
    }

    /// Starts loading the rows and cells bit `i` reads if the partial byte
    /// is `c0` (a cache hint: changes nothing).
    fn prefetch_bit(&self, c0: u32, i: u32) {
        self.base.prefetch_bit(c0, i);
        if let Some(f) = &self.cur {
            let [r, d] = self.rows(f, c0, i);
            self.apm_r.prefetch(r);
            self.apm_d.prefetch(d);
            self.maps.prefetch(r);
            self.maps.prefetch(ROWS_R + d);
        }
    }

    fn update_bit(&mut self, bit: u32) {
        self.base.update_bit(bit);
        self.apm_r.update(bit);
        self.apm_d.update(bit);
        if self.cur.is_some() {
            self.maps.update(self.rows[0], bit);
            self.maps.update(ROWS_R + self.rows[1], bit);
        }
    }

    /// The two APMs on the rows `predict_bit` found for this bit.
    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        let p = self.base.refine_final(p, c0);
        if self.cur.is_none() {
            return p;
        }
        let [r, d] = self.rows;
        let p = self.apm_r.refine(p, r);
        self.apm_d.refine(p, d)
    }

    /// Keeps the byte's residual against its moved gradient.
    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        if self.cur.take().is_some() {
            self.last_resid = i32::from(byte) - self.gradient;
        }
    }
}

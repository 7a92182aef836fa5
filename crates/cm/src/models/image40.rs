//! The 24/32-bit image family of CM revision 40 (doc/FORMAT.md 4.51.3),
//! installed in place of revision 32's family (which it holds and runs
//! first, unchanged) on images of 3 or 4 bytes per pixel. It adds no
//! hashed context. It ranks a few neighbour predictors by their recent
//! errors and learns, per channel and bit, where two predictions lie
//! relative to the partial byte:
//!
//! - [`PREDICTORS`] predictors of the byte: eight of revision 32's plain
//!   ones (W, N, NE, the gradient, W + NE - N, N + NE - NNE, the average
//!   of W and NE, the median predictor) and the same eight moved by the
//!   previous channel at this pixel (`P + p1 - P(p1's neighbourhood)`;
//!   unmoved on a pixel's first channel);
//! - per coded byte each predictor's absolute error, kept in a ring; a
//!   predictor's local error is its errors at W and N (twice) and NW and
//!   NE of the same channel; the *best* predictor has the least, and an
//!   error-weighted blend (weights `2^40 / e^2`) gives a fine prediction
//!   in sixteenths of a level;
//! - [`MAPS`] learnt maps (count-driven adaptive probabilities), per-bit
//!   inputs of the model's mixer after revision 32's: keyed by channel,
//!   bit and the distances of two predictions to the bit's threshold
//!   (blend and best, blend and moved gradient, moved gradient and moved
//!   N, moved W and moved N), by the best predictor's index and distance,
//!   and by the last byte's residual and the moved gradient's distance;
//! - four APMs (interpolated, rate 7), chained on the final probability
//!   and each averaged with its input, keyed as the first, fourth, fifth
//!   and sixth maps.
//!
//! With it, revision 40 gives a confidence input to the image's first 16
//! hashed contexts instead of 28 (`cm/imgmix38.rs`).
//!
//! Every predictor and input is declared in this file.

use super::image::ImageInfo;
use super::image22::threshold;
use super::image32::{Image32Contexts, PLAIN};
use super::pixel::coded_neighbour;
use super::{ByteCtx, ContextModel};
use crate::apm::AveragedApm;
use crate::prim::AdaptiveProbs;

/// Channels with their own contexts (more share the last).
const CHANNELS: usize = 4;
/// Indices of revision 32's plain predictors used here (W, N, NE, W + N -
/// NW, W + NE - N, N + NE - NNE, (W + NE + 1) >> 1, median).
const PICK: [usize; 8] = [0, 1, 3, 6, 7, 9, 26, 27];
/// Predictors: the picked ones, plain and moved by the previous channel.
const PREDICTORS: usize = 2 * PICK.len();
/// Most positions the error ring holds.
const RING_MAX: usize = 1 << 20;
/// Rows of the error ring (it must reach NE of the row above).
const RING_ROWS: usize = 3;
/// Distance buckets of the two-distance APM (half levels, +-8 levels).
const DIST2: usize = 32;
/// Distance buckets of the best-predictor APM (quarter levels).
const DIST1: usize = 64;
/// Rows of the two-distance APM: channel, bit, two distances.
const APM_A: usize = CHANNELS * 8 * DIST2 * DIST2;
/// Rows of the best-predictor APM: channel, bit, best index, distance.
const APM_B: usize = CHANNELS * 8 * PREDICTORS * DIST1;
/// The APMs' adaptation shift.
const APM_RATE: u32 = 7;
/// Learnt maps (per-bit inputs after revision 32's one).
const MAPS: usize = 6;
/// Count at which a map's rate stops slowing.
const MAP_LIMIT: u32 = 1023;

/// Bytes the family allocates beyond revision 32's (counted separately):
/// its APMs (33 points of 2 bytes per row), its maps (4 bytes per cell)
/// and its largest ring.
pub(crate) const MEMORY: u64 = ((2 * APM_A + 2 * APM_B) * 33 * 2) as u64
    + ((4 * APM_A + 2 * APM_B) * 4) as u64
    + (RING_MAX * PREDICTORS) as u64;

/// What the family computes for one byte.
#[derive(Debug, Clone, Copy)]
struct Now {
    /// The byte's channel (at most 3).
    ch: usize,
    /// Each predictor's byte (clipped).
    pred: [i32; PREDICTORS],
    /// Index of the predictor with the least local error.
    best: usize,
    /// The error-weighted blend, sixteenths of a level.
    fine: i32,
}

/// One image of 3 or 4 bytes per pixel: the ranked predictors and their
/// APMs.
#[derive(Debug, Clone)]
pub(crate) struct Image40Contexts {
    /// Revision 32's family, run first (its one per-bit input comes first).
    base: Image32Contexts,
    img: ImageInfo,
    ring: Vec<[u8; PREDICTORS]>,
    cur: Option<Now>,
    apm_a: AveragedApm,
    apm_b: AveragedApm,
    apm_c: AveragedApm,
    apm_d: AveragedApm,
    /// The last coded byte's residual against its moved gradient (the
    /// previous channel's at this pixel, or the last channel's at W).
    last_resid: i32,
    /// The [`MAPS`] learnt maps.
    maps: AdaptiveProbs,
    /// The maps' cells used for this bit.
    index: [u32; MAPS],
    /// The four APMs' rows for this bit (set with the cells by
    /// `predict_bit`, read by `refine_final`).
    apm_rows: [usize; 4],
}

impl Image40Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        let ring = (img.row_bytes.saturating_mul(RING_ROWS))
            .next_power_of_two()
            .min(RING_MAX);
        Image40Contexts {
            base: Image32Contexts::new(img),
            img,
            ring: vec![[0; PREDICTORS]; ring],
            cur: None,
            apm_a: AveragedApm::new(APM_A, APM_RATE),
            apm_b: AveragedApm::new(APM_B, APM_RATE),
            apm_c: AveragedApm::new(APM_B, APM_RATE),
            apm_d: AveragedApm::new(APM_A, APM_RATE),
            last_resid: 0,
            maps: AdaptiveProbs::new(4 * APM_A + 2 * APM_B, MAP_LIMIT),
            index: [0; MAPS],
            apm_rows: [0; 4],
        }
    }

    /// The ring's entry of the byte `dy` rows up and `dx` pixels left of
    /// `pos` (negative: right), if inside the image and coded.
    fn entry(&self, ctx: &ByteCtx<'_>, dy: usize, dx: isize) -> Option<&[u8; PREDICTORS]> {
        coded_neighbour(&self.img, ctx, dy, dx).map(|p| &self.ring[p & (self.ring.len() - 1)])
    }

    /// The byte's predictors, their ranking and blend.
    fn now(&self, ctx: &ByteCtx<'_>) -> Now {
        let img = &self.img;
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        // Revision 32's predictions of this byte (clipped), plain and moved.
        let mut pred = [0i32; PREDICTORS];
        for (j, &k) in PICK.iter().enumerate() {
            pred[j] = self.base.prediction(k).unwrap_or(0);
            pred[PICK.len() + j] = self.base.prediction(PLAIN + k).unwrap_or(0);
        }
        let mut err = [1u32; PREDICTORS];
        for (dy, dx, w) in [(0, 1, 2), (1, 0, 2), (1, 1, 1), (1, -1, 1)] {
            if let Some(e) = self.entry(ctx, dy, dx) {
                for (s, &v) in err.iter_mut().zip(e) {
                    *s += w * u32::from(v);
                }
            }
        }
        let mut best = 0;
        for k in 1..PREDICTORS {
            if err[k] < err[best] {
                best = k;
            }
        }
        let (mut num, mut den) = (0i64, 0i64);
        for (&e, &p) in err.iter().zip(&pred) {
            let w = (1i64 << 40) / i64::from(e * e);
            num += w * i64::from(p);
            den += w;
        }
        let fine = ((num * 16 + den / 2) / den) as i32;
        Now {
            ch,
            pred,
            best,
            fine,
        }
    }

    /// The rows of the four APMs for bit `i` (the blend's and the best
    /// predictor's distances; the best predictor and its distance; the
    /// last residual and the moved gradient's distance; the moved W's and
    /// moved N's distances) and the cells of the [`MAPS`] maps.
    fn rows(&self, f: &Now, c0: u32, i: u32) -> ([usize; 4], [usize; MAPS]) {
        let t = threshold(c0, i);
        let q2 = |d: i32| ((d >> 3).clamp(-16, 15) + 16) as usize;
        let q1 = |d: i32| (((d >> 2).clamp(-32, 31)) + 32) as usize;
        let half = PICK.len();
        let (w16, n16, g16) = (
            16 * f.pred[half],
            16 * f.pred[half + 1],
            16 * f.pred[half + 3],
        );
        let b16 = 16 * f.pred[f.best];
        let r = (self.last_resid.clamp(-7, 8) + 7) as usize;
        let base = f.ch * 8 + i as usize;
        let two = |x: i32, y: i32| (base * DIST2 + q2(x - t)) * DIST2 + q2(y - t);
        let a = two(f.fine, b16);
        let b = (base * PREDICTORS + f.best) * DIST1 + q1(b16 - t);
        let c = (base * 16 + r) * DIST1 + q1(g16 - t);
        let d = two(w16, n16);
        let cells = [
            a,
            APM_A + two(f.fine, g16),
            2 * APM_A + two(g16, n16),
            3 * APM_A + b,
            3 * APM_A + APM_B + c,
            3 * APM_A + 2 * APM_B + d,
        ];
        ([a, b, c, d], cells)
    }
}

impl ContextModel for Image40Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        self.base.bit_inputs() + MAPS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        self.cur = Some(self.now(ctx));
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let (first, out) = out.split_at_mut(self.base.bit_inputs());
        self.base.predict_bit(c0, i, first);
        let Some(f) = self.cur else {
            out.fill(0);
            return;
        };
        let (rows, cells) = self.rows(&f, c0, i);
        self.apm_rows = rows;
        for ((o, s), &cell) in out.iter_mut().zip(&mut self.index).zip(&cells) {
            *s = cell as u32;
            *o = self.maps.stretched(cell);
        }
    }

    /// Starts loading the four APM rows and the maps' cells that bit `i`
    /// reads if the partial byte is `c0` (a cache hint: changes nothing).
    fn prefetch_bit(&self, c0: u32, i: u32) {
        self.base.prefetch_bit(c0, i);
        if let Some(f) = &self.cur {
            let ([a, b, c, d], cells) = self.rows(f, c0, i);
            self.apm_a.prefetch(a);
            self.apm_b.prefetch(b);
            self.apm_c.prefetch(c);
            self.apm_d.prefetch(d);
            for cell in cells {
                self.maps.prefetch(cell);
            }
        }
    }

    fn update_bit(&mut self, bit: u32) {
        self.base.update_bit(bit);
        self.apm_a.update(bit);
        self.apm_b.update(bit);
        self.apm_c.update(bit);
        self.apm_d.update(bit);
        if self.cur.is_some() {
            for &cell in &self.index {
                self.maps.update(cell as usize, bit);
            }
        }
    }

    /// The APM chain on the rows `predict_bit` found for this bit.
    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        let p = self.base.refine_final(p, c0);
        if self.cur.is_none() {
            return p;
        }
        let [a, b, c, d] = self.apm_rows;
        let p = self.apm_a.refine(p, a);
        let p = self.apm_b.refine(p, b);
        let p = self.apm_c.refine(p, c);
        self.apm_d.refine(p, d)
    }

    /// Keeps the predictors' errors at this byte.
    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        let Some(f) = self.cur.take() else {
            return;
        };
        let v = i32::from(byte);
        let mut e = [0u8; PREDICTORS];
        for (s, &p) in e.iter_mut().zip(&f.pred) {
            *s = (v - p).unsigned_abs().min(255) as u8;
        }
        let ring = self.ring.len() - 1;
        self.ring[pos & ring] = e;
        self.last_resid = v - f.pred[PICK.len() + 3];
    }
}

//! The 24/32-bit image family of CM revision 16 (doc/FORMAT.md 4.27.2: the
//! `max` line's seventh round), installed after revision 14's family
//! (`image14.rs`, unchanged) for the samples after a PNM (P6, 8 bits), BMP
//! or TGA header of 3 or 4 bytes per pixel. After the ideas of published
//! blending image coders (TMW, GraLIC-style weighting by recent local
//! error, CALIC's error feedback; no code taken):
//!
//! - [`PREDICTORS`] simple neighbour predictors per byte, those of the
//!   first channel taking their gradients from the neighbours' second
//!   channel, the others moved by the previous channel's difference;
//! - their blend, each weighted by the inverse cube of its summed absolute
//!   errors at the causal neighbours of the same channel, corrected by
//!   the mean blended error seen in its situation (channel, error level,
//!   signs of the blended error at W and N);
//! - [`CONTEXTS`] hashed contexts of the blend, its error level and
//!   the neighbours' blended errors;
//! - expected-byte and distance inputs of the blend (corrected and not);
//! - a mixer weight-set selector (channel, error level, bit) for the
//!   model's mixer in place of the text selectors (doc/FORMAT.md 4.27.2);
//! - one APM on the final probability keyed by the corrected blend.
//!
//! Every context and input of the family is declared in this file:
//! `Blend` computes the values, `hashes`, `predict_bit` and
//! `refine_final` turn them into inputs.

use super::expected::ExpectedBits;
use super::image::ImageInfo;
use super::pixel::{coded_neighbour, sample};
use super::pixel4::{DISTANCES, DistanceBits};
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::AveragedApm;

/// Neighbour predictors blended.
const PREDICTORS: usize = 13;
/// Hashed contexts.
const CONTEXTS: usize = 4;
/// Channels with their own statistics (more share the last).
const CHANNELS: usize = 4;
/// Per-bit inputs: expected-byte and distance inputs of the corrected and
/// the plain blend.
const BIT_INPUTS: usize = 4;
/// Error levels (buckets of the blend's local error).
const LEVELS: usize = 16;
/// Situations of the per-bit inputs and the selector: channel, level.
const SITUATIONS: usize = CHANNELS * LEVELS;
/// Bias-correction contexts: situation, signs of the blended error at W
/// and at N (3 x 3).
const BIAS: usize = SITUATIONS * 9;
/// Fixed-point scale of the blend.
const FINE: i32 = 16;
/// Rows of per-position errors kept (the current and two above).
const RING_ROWS: usize = 3;
/// Most positions the error ring holds.
const RING_MAX: usize = 1 << 20;
/// The final APM's adaptation shift.
const APM_RATE: u32 = 7;

/// Bytes the family allocates at most (for `CmConfig::memory_bytes`): the
/// error ring, the per-bit input tables, the bias table and the APM.
pub(crate) const MEMORY: u64 = (RING_MAX * (PREDICTORS + 1)) as u64
    + (SITUATIONS * 8 * 2 * (4 + DISTANCES) * 4) as u64
    + (BIAS * 8) as u64
    + (CHANNELS * 256 * 256 * 33 * 2) as u64;

/// What the family computes from the neighbourhood of one byte.
#[derive(Debug, Clone, Copy)]
struct Blend {
    ch: usize,
    /// The predictions (bytes, unclipped).
    pred: [i32; PREDICTORS],
    /// The blend, times [`FINE`], and corrected by the bias.
    fine: i32,
    corrected: i32,
    /// Error level (below [`LEVELS`]).
    level: usize,
    /// Bias-correction context.
    bias: usize,
    /// The blended errors at W and N (clamped bytes).
    rw: i32,
    rn: i32,
    /// The previous channel at this pixel (the first channel: W).
    px: i32,
}

/// The byte nearest to `v`.
fn clip(v: i32) -> u32 {
    v.clamp(0, 255) as u32
}

/// Bucket of a non-negative value: 0..=15.
fn bucket(e: u32) -> usize {
    (32 - e.leading_zeros()).min(15) as usize
}

/// The sign of `v` as 0, 1 or 2.
fn sign3(v: i32) -> usize {
    (v.signum() + 1) as usize
}

/// One image of 3 or 4 bytes per pixel: blended predictions and their
/// inputs.
#[derive(Debug, Clone)]
pub(crate) struct Image16Contexts {
    img: ImageInfo,
    /// Per position (modulo the ring): each predictor's absolute error and
    /// the blend's signed error (+128), bytes.
    ring: Vec<[u8; PREDICTORS + 1]>,
    /// Bias sums (times [`FINE`]) and counts.
    bias: Vec<(i32, i32)>,
    cur: Option<Blend>,
    bits: ExpectedBits<2>,
    near: DistanceBits<2>,
    apm: AveragedApm,
    apm_row: usize,
}

impl Image16Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        let ring = (img.row_bytes.saturating_mul(RING_ROWS))
            .next_power_of_two()
            .min(RING_MAX);
        Image16Contexts {
            img,
            ring: vec![[0; PREDICTORS + 1]; ring],
            bias: vec![(0, 0); BIAS],
            cur: None,
            bits: ExpectedBits::new(SITUATIONS),
            near: DistanceBits::new(SITUATIONS),
            apm: AveragedApm::new(CHANNELS * 256 * 256, APM_RATE),
            apm_row: 0,
        }
    }

    /// The ring's entry of the byte `dy` rows up and `dx` pixels left of
    /// `pos` (negative: right), if inside the image and coded.
    fn entry(&self, ctx: &ByteCtx<'_>, dy: usize, dx: isize) -> Option<&[u8; PREDICTORS + 1]> {
        coded_neighbour(&self.img, ctx, dy, dx).map(|p| &self.ring[p & (self.ring.len() - 1)])
    }

    /// Everything the family derives from the byte's neighbourhood.
    fn blend(&self, ctx: &ByteCtx<'_>) -> Blend {
        let img = &self.img;
        let pb = img.pixel_bytes;
        let col = (ctx.pos - img.start) % pb;
        let ch = col.min(CHANNELS - 1);
        let at = |dy: usize, dx: isize, dc: usize| sample(img, ctx, dy, dx, dc);
        let (w, n, nw, ne) = (at(0, 1, 0), at(1, 0, 0), at(1, 1, 0), at(1, -1, 0));
        let (ww, nn, nne, nnw) = (at(0, 2, 0), at(2, 0, 0), at(2, -1, 0), at(2, 1, 0));
        let grad = w + n - nw;
        let mut pred = [
            w,
            n,
            ne,
            grad,
            (w + ne + 1) >> 1,
            2 * n - nn,
            2 * w - ww,
            n + ne - nne,
            n + nw - nnw,
            0,
            0,
            0,
            0,
        ];
        let px;
        if col > 0 {
            // The previous channel at this pixel and its neighbours.
            let (p, pw, pn, pnw, pne) = (
                at(0, 0, 1),
                at(0, 1, 1),
                at(1, 0, 1),
                at(1, 1, 1),
                at(1, -1, 1),
            );
            px = p;
            pred[9] = w + p - pw;
            pred[10] = n + p - pn;
            pred[11] = grad + p - (pw + pn - pnw);
            pred[12] = ne + p - pne;
        } else {
            // The second channel of the neighbours (this pixel's is not
            // known yet): its gradients in place of the first channel's.
            let g = pb - 1;
            let (gw, gn, gnw) = (at(0, 0, g), at(1, -1, g), at(1, 0, g));
            px = w;
            pred[9] = n + gw - gnw;
            pred[10] = w + gn - gnw;
            pred[11] = ne + gw - gn;
            pred[12] = (n + gw - gnw + w + gn - gnw + 1) >> 1;
        }
        // Each predictor's error at the causal neighbours.
        let mut err = [1u32; PREDICTORS];
        let (mut rw, mut rn, mut rsum) = (0i32, 0i32, 0u32);
        for (k, (dy, dx, wt)) in [
            (0, 1, 2u32),
            (1, 0, 2),
            (1, 1, 1),
            (1, -1, 1),
            (0, 2, 1),
            (2, 0, 1),
        ]
        .into_iter()
        .enumerate()
        {
            if let Some(e) = self.entry(ctx, dy, dx) {
                for (s, &v) in err.iter_mut().zip(e.iter()) {
                    *s += wt * u32::from(v);
                }
                let r = i32::from(e[PREDICTORS]) - 128;
                match k {
                    0 => rw = r,
                    1 => rn = r,
                    _ => {}
                }
                rsum += wt * r.unsigned_abs();
            }
        }
        let (mut num, mut den) = (0i64, 0i64);
        for (&p, &e) in pred.iter().zip(&err) {
            let e = i64::from(e);
            let wt = (1i64 << 40) / (e * e * e);
            num += wt * i64::from(p.clamp(0, 255));
            den += wt;
        }
        let fine = ((num * i64::from(FINE) + den / 2) / den.max(1)) as i32;
        let emin = err.iter().copied().min().unwrap_or(1);
        let level = bucket(emin.min(rsum + 1));
        let bias = ((ch * LEVELS + level) * 3 + sign3(rw)) * 3 + sign3(rn);
        let (sum, count) = self.bias[bias];
        let corrected = fine + if count > 0 { sum / count } else { 0 };
        Blend {
            ch,
            pred,
            fine,
            corrected,
            level,
            bias,
            rw,
            rn,
            px,
        }
    }
}

/// Rounded byte of a fine value.
fn byte(v: i32) -> u32 {
    clip((v + FINE / 2).div_euclid(FINE))
}

impl ContextModel for Image16Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let b = self.blend(ctx);
        let (c, f) = (byte(b.corrected), byte(b.fine));
        let q = |r: i32| (r.clamp(-15, 15) + 16) as u32;
        let v = [
            c,
            f | (b.level as u32) << 8,
            (c >> 1) | q(b.rw) << 8 | q(b.rn) << 13,
            c | (b.px as u32) << 8,
        ];
        let tag = (b.ch as u32) << 12 | 0xE00_0000;
        for ((h, &v), j) in out.iter_mut().zip(&v).zip(0u32..) {
            *h = hash2(v, tag | j << 4);
        }
    }

    fn bit_inputs(&self) -> usize {
        BIT_INPUTS
    }

    fn kind_selector_size(&self) -> usize {
        SITUATIONS * 8
    }

    fn kind_selector(&self, _c0: u32, i: u32) -> usize {
        self.cur
            .map_or(0, |b| (b.ch * LEVELS + b.level) * 8 + i as usize)
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let b = self.blend(ctx);
        let s = b.ch * LEVELS + b.level;
        let e = [byte(b.corrected), byte(b.fine)];
        self.bits.begin(e, s);
        self.near.begin(e, s);
        self.apm_row = (b.ch * 256 + e[0] as usize) * 256;
        self.cur = Some(b);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        if self.cur.is_none() {
            out.fill(0);
            return;
        }
        self.bits.predict(c0, i, &mut out[..2]);
        self.near.predict(c0, i, &mut out[2..4]);
    }

    fn update_bit(&mut self, bit: u32) {
        if self.cur.is_none() {
            return;
        }
        self.bits.update(bit);
        self.near.update(bit);
        self.apm.update(bit);
    }

    fn prefetch_bit(&self, c0: u32, _i: u32) {
        if self.cur.is_some() {
            self.apm.prefetch(self.apm_row + c0 as usize);
        }
    }

    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        if self.cur.is_none() {
            return p;
        }
        self.apm.refine(p, self.apm_row + c0 as usize)
    }

    /// Keeps the predictors' errors at this byte and learns the bias.
    fn observe(&mut self, _data: &[u8], pos: usize, byte: u8) {
        let Some(b) = self.cur.take() else {
            return;
        };
        let v = i32::from(byte);
        let mut e = [0u8; PREDICTORS + 1];
        for (s, &p) in e.iter_mut().zip(&b.pred) {
            *s = (v - p.clamp(0, 255)).unsigned_abs().min(255) as u8;
        }
        let r = v * FINE - b.fine;
        e[PREDICTORS] = ((v * FINE - b.corrected) / FINE).clamp(-127, 127) as u8 ^ 0x80;
        let ring = self.ring.len() - 1;
        self.ring[pos & ring] = e;
        let (sum, count) = &mut self.bias[b.bias];
        *sum += r;
        *count += 1;
        if *count >= 64 {
            *sum /= 2;
            *count /= 2;
        }
    }
}

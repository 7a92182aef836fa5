//! The 24/32-bit image family of CM revision 22 (doc/FORMAT.md 4.33.2: the
//! `max` line's tenth round): revision 18's family (`image18.rs`,
//! unchanged, whose contexts, inputs, selectors and refinements it passes
//! on as they are) plus further mixer weight-set selectors, after the
//! published descriptions of strong 24-bit image context-mixing models
//! (many selectors at once, each choosing one weight set, their outputs
//! combined by a final mixer; no code taken):
//!
//! - a selector by the OLS prediction's distance to the value at which
//!   the coded bit turns 1, by channel, bit and error level;
//! - a selector by the previous byte's OLS residual (the previous channel
//!   at this pixel), by channel and bit;
//! - a selector by the distance of W to that value and the side N is on;
//! - an APM on the final probability keyed by channel, bit and the OLS
//!   prediction's distance to that value.
//!
//! Every selector and context of the revision-22 part is declared in this
//! file: `Now` computes the byte's values, `kind_selectors_more_ctx` and
//! `refine_final` turn them into contexts.

use super::image::ImageInfo;
use super::image18::Image18Contexts;
use super::pixel::sample;
use super::{ByteCtx, ContextModel, forward_family};
use crate::apm::AveragedApm;

/// Channels with their own statistics (more share the last).
const CHANNELS: usize = 4;
/// Buckets of a distance to the bit's threshold (7 magnitudes, 2 signs).
const DIST: usize = 14;
/// Weight sets of each further selector, in mixer order.
const SEL_DIST: usize = CHANNELS * 8 * DIST * 4;
const SEL_PREV: usize = CHANNELS * 16 * 8;
const SEL_WN: usize = CHANNELS * 8 * DIST * 2;
const SELECTORS: [usize; 3] = [SEL_DIST, SEL_PREV, SEL_WN];
/// Contexts of the distance APM.
const APM_CONTEXTS: usize = CHANNELS * 8 * 64;
const APM_RATE: u32 = 7;

/// Bytes the revision-22 part allocates beyond revision 18's family: the
/// further selectors' weight sets (128 inputs at most) and the APM.
pub(crate) const MEMORY: u64 =
    ((SEL_DIST + SEL_PREV + SEL_WN) * 128 * 2 + APM_CONTEXTS * 33 * 2) as u64;

/// What the revision-22 part computes for one byte.
#[derive(Debug, Clone, Copy)]
struct Now {
    ch: usize,
    /// The OLS prediction in sixteenths of a level (`16 v`).
    o16: i32,
    /// Revision 18's error level divided by 4.
    lvl4: usize,
    /// Bucket of the previous byte's OLS residual (magnitude and sign).
    prev: usize,
    /// W and N in sixteenths.
    w16: i32,
    n16: i32,
}

/// Bit length of a non-negative value.
fn bit_length(v: u32) -> usize {
    (32 - v.leading_zeros()) as usize
}

/// Bucket of `d` (sixteenths of a level): `|d|` below 8, 16, 32, 64, 128,
/// 256 or more (0 to 6), plus 7 when `d < 0`.
fn dist_bucket(d: i32) -> usize {
    let b = bit_length(d.unsigned_abs()).saturating_sub(3).min(6);
    b + 7 * usize::from(d < 0)
}

/// In sixteenths of a level, the value half a level below the least byte
/// whose bit `i` is 1 given the bits so far (`c0` with its leading 1).
/// Shared with revision 40's family (`image40.rs`).
pub(crate) fn threshold(c0: u32, i: u32) -> i32 {
    let known = c0 ^ (1 << (7 - i));
    let m = (known << (i + 1)) | (1 << i);
    16 * m as i32 - 8
}

/// One image of 3 or 4 bytes per pixel: revision 18's family and the
/// further selectors.
#[derive(Debug, Clone)]
pub(crate) struct Image22Contexts {
    base: Image18Contexts,
    img: ImageInfo,
    cur: Option<Now>,
    /// The previous byte's OLS residual (bytes, clamped to -127..=127).
    prev_resid: i32,
    apm: AveragedApm,
}

impl Image22Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        Image22Contexts {
            base: Image18Contexts::new(img),
            img,
            cur: None,
            prev_resid: 0,
            apm: AveragedApm::new(APM_CONTEXTS, APM_RATE),
        }
    }
}

impl ContextModel for Image22Contexts {
    forward_family!(
        base;
        contexts,
        hashes,
        selector_size,
        selector,
        apm_byte,
        kind_selector_size,
        kind_selector,
        kind_selector2_size,
        kind_selector2,
        bit_inputs,
        predict_bit,
        prefetch_bit,
    );

    fn kind_selectors_more(&self) -> &[usize] {
        &SELECTORS
    }

    fn kind_selectors_more_ctx(&self, c0: u32, i: u32, out: &mut [usize]) {
        let Some(b) = self.cur else {
            out.fill(0);
            return;
        };
        let t = threshold(c0, i);
        let bit = i as usize;
        out.copy_from_slice(&[
            ((b.ch * 8 + bit) * DIST + dist_bucket(b.o16 - t)) * 4 + b.lvl4,
            (b.ch * 16 + b.prev) * 8 + bit,
            ((b.ch * 8 + bit) * DIST + dist_bucket(b.w16 - t)) * 2 + usize::from(b.n16 < t),
        ]);
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        let img = &self.img;
        self.cur = self.base.prediction().map(|(ch, fine, level)| {
            let (w, n) = (sample(img, ctx, 0, 1, 0), sample(img, ctx, 1, 0, 0));
            let r = self.prev_resid;
            Now {
                ch,
                o16: fine + 2048,
                lvl4: level / 4,
                prev: bit_length(r.unsigned_abs()).min(7) + 8 * usize::from(r < 0),
                w16: 16 * w,
                n16: 16 * n,
            }
        });
    }

    fn update_bit(&mut self, bit: u32) {
        self.base.update_bit(bit);
        self.apm.update(bit);
    }

    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        let p = self.base.refine_final(p, c0);
        let Some(b) = self.cur else {
            return p;
        };
        let i = 8 - bit_length(c0) as u32;
        let d = ((b.o16 - threshold(c0, i)) >> 2).clamp(-32, 31) + 32;
        let row = (b.ch * 8 + i as usize) * 64 + d as usize;
        self.apm.refine(p, row)
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        if let Some(b) = self.cur.take() {
            self.prev_resid = ((16 * i32::from(byte) - b.o16) >> 4).clamp(-127, 127);
        }
    }
}

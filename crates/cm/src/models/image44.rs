//! The 24/32-bit image family of CM revision 44 (doc/FORMAT.md 4.55.1),
//! installed after revision 42's family on images of 3 or 4 bytes per
//! pixel: learnt maps of the *difference planes*.
//!
//! For every channel after the first, the byte `X` is seen as `p1 + d`,
//! `p1` the previous channel at this pixel (already coded) and `d` the
//! difference plane's value; the plane's causal neighbours (`dW = W - W1`,
//! `dN = N - N1`, ... with `W1`, `N1` the previous channel's) give small
//! direct contexts and a prediction `P = p1 + f(dW, dN, ...)`. Each map is
//! keyed by channel, the two quantised neighbour differences of its context,
//! `(P - b)` (the signed distance of the prediction to the byte's known bits
//! `b` with zeros below, clamped to -32..=31) and the bit: it learns the
//! shape of `d` around its prediction under that context, whatever `p1` is
//! (a transform to `(R, G - R, B - G)` coded 2.3% smaller on kodim23's rows
//! 0..127: the model lacked contexts of the difference planes).
//!
//! Each map's stretched probability is one per-bit input of the model's
//! mixer (after revision 42's); the first channel gives inputs 0. Every
//! input is declared in this file (`KEYS` in `begin_byte`).

use super::image::ImageInfo;
use super::pixel::sample;
use super::{ByteCtx, ContextModel};
use crate::prim::AdaptiveProbs;

/// Channels after the first with their own maps (more share the last).
const CHANNELS: usize = 3;
/// Difference-plane contexts, each one map and one per-bit input.
const MAPS: usize = 3;
/// Buckets of one neighbour difference (-16..=15).
const DQ: usize = 32;
/// Signed distances of the prediction to the known bits kept (-32..=31).
const DIST: usize = 64;
/// Cells of one map: channel, two neighbour buckets, distance, bit.
const CELLS: usize = CHANNELS * DQ * DQ * DIST * 8;
/// Count at which a map's rate stops slowing.
const MAP_LIMIT: u32 = 1023;

/// Bytes the family allocates: its maps (4 bytes per cell).
pub(crate) const MEMORY: u64 = (MAPS * CELLS * 4) as u64;

/// One image of 3 or 4 bytes per pixel: the difference-plane maps.
#[derive(Debug, Clone)]
pub(crate) struct Image44Contexts {
    img: ImageInfo,
    /// Per map: the first cell of this byte's context and the prediction;
    /// `None` for the first channel and outside the image.
    cur: Option<[(usize, i32); MAPS]>,
    maps: AdaptiveProbs,
    /// The cells read for this bit.
    cells: [usize; MAPS],
}

impl Image44Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        Image44Contexts {
            img,
            cur: None,
            maps: AdaptiveProbs::new(MAPS * CELLS, MAP_LIMIT),
            cells: [0; MAPS],
        }
    }

    /// The cells of bit `i` with partial byte `c0` (leading 1).
    fn cells(base: &[(usize, i32); MAPS], c0: u32, i: u32) -> [usize; MAPS] {
        let b = ((c0 ^ (1 << (7 - i))) << (i + 1)) as i32;
        base.map(|(first, p)| {
            let r = ((p - b + 128) & 255) - 128;
            first + (r.clamp(-32, 31) + 32) as usize * 8 + i as usize
        })
    }
}

impl ContextModel for Image44Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        MAPS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let img = &self.img;
        self.cur = None;
        if ctx.pos < img.start {
            return;
        }
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        if col == 0 {
            return;
        }
        let ch = (col - 1).min(CHANNELS - 1);
        let s = |dy: usize, dx: isize, dc: usize| sample(img, ctx, dy, dx, dc);
        // The difference plane at a neighbour: this channel less the previous.
        let d = |dy: usize, dx: isize| s(dy, dx, 0) - s(dy, dx, 1);
        let (dw, dn, dnw, dne) = (d(0, 1), d(1, 0), d(1, 1), d(1, -1));
        let p1 = s(0, 0, 1);
        let q = |v: i32| (v.clamp(-16, 15) + 16) as usize;
        // (first bucket, second bucket, predicted difference) per map.
        let keys = [
            (q(dw), q(dn), (dw + dn + 1) >> 1),
            (q(dn), q(dne), (dn + dne + 1) >> 1),
            (q(dn - dnw), q(dw - dnw), dw + dn - dnw),
        ];
        let mut cur = [(0, 0); MAPS];
        for (k, (c, &(a, b, p))) in cur.iter_mut().zip(&keys).enumerate() {
            *c = (k * CELLS + ((ch * DQ + a) * DQ + b) * DIST * 8, p1 + p);
        }
        self.cur = Some(cur);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let Some(base) = &self.cur else {
            out.fill(0);
            return;
        };
        self.cells = Self::cells(base, c0, i);
        for (o, &c) in out.iter_mut().zip(&self.cells) {
            *o = self.maps.stretched(c);
        }
    }

    /// Starts loading the cells bit `i` reads if the partial byte is `c0`
    /// (a cache hint: changes nothing).
    fn prefetch_bit(&self, c0: u32, i: u32) {
        if let Some(base) = &self.cur {
            for c in Self::cells(base, c0, i) {
                self.maps.prefetch(c);
            }
        }
    }

    fn update_bit(&mut self, bit: u32) {
        if self.cur.is_some() {
            for &c in &self.cells {
                self.maps.update(c, bit);
            }
        }
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, _byte: u8) {
        self.cur = None;
    }
}
